//! The files `cabling plan` writes: the permissions the umask allows (not a temporary file's
//! 0600), and `--out-dir` writing the whole set or nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const FILES: [&str; 5] = [
    "plan.yaml",
    "plan.csv",
    "plan.html",
    "fabric.net",
    "node-name-map",
];

/// Runs `cabling` under `umask` (through the shell, the way a user's session sets it).
fn cabling_under_umask(umask: u32, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask:03o} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn out_dir_files_have_the_umask_permissions(umask: u32) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("plan");
    let out = cabling_under_umask(
        umask,
        &[
            "plan",
            "slimfly",
            "--q",
            "5",
            "--out-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in FILES {
        assert_eq!(
            mode(&out_dir.join(file)),
            0o666 & !umask,
            "{file} under umask {umask:03o}"
        );
    }
}

#[test]
fn out_dir_files_are_0644_under_umask_022() {
    out_dir_files_have_the_umask_permissions(0o022);
}

#[test]
fn out_dir_files_are_0640_under_umask_027() {
    out_dir_files_have_the_umask_permissions(0o027);
}

#[test]
fn an_output_file_has_the_umask_permissions_under_022_and_027() {
    for umask in [0o022, 0o027] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.csv");
        let out = cabling_under_umask(
            umask,
            &[
                "plan",
                "slimfly",
                "--q",
                "5",
                "--format",
                "csv",
                "-o",
                path.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(mode(&path), 0o666 & !umask, "umask {umask:03o}");
    }
}

/// Each file of the set in turn made unwritable (its name taken by a directory): the run fails
/// naming it, and leaves none of the other files behind.
#[test]
fn out_dir_writes_all_files_or_none() {
    for blocked in FILES {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(blocked)).unwrap();
        let out = cabling_under_umask(
            0o022,
            &[
                "plan",
                "slimfly",
                "--q",
                "5",
                "--out-dir",
                dir.path().to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "blocked {blocked}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(blocked), "blocked {blocked}: {stderr}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [blocked], "blocked {blocked}");
    }
}

/// A failed run keeps the previous set as it was, byte for byte.
#[test]
fn a_failed_out_dir_run_keeps_the_previous_files() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let first = cabling_under_umask(
        0o022,
        &["plan", "slimfly", "--q", "5", "--out-dir", out_dir],
    );
    assert!(first.status.success());
    let before: Vec<_> = FILES
        .iter()
        .map(|f| std::fs::read(dir.path().join(f)).unwrap())
        .collect();
    std::fs::remove_file(dir.path().join("plan.html")).unwrap();
    std::fs::create_dir(dir.path().join("plan.html")).unwrap();
    let second = cabling_under_umask(
        0o022,
        &["plan", "slimfly", "--q", "7", "--out-dir", out_dir],
    );
    assert_eq!(second.status.code(), Some(2));
    for (file, old) in FILES.iter().zip(&before) {
        if *file != "plan.html" {
            assert_eq!(
                &std::fs::read(dir.path().join(file)).unwrap(),
                old,
                "{file}"
            );
        }
    }
}

/// A port cabled twice in an imported list is reported at the line of its second cable.
#[test]
fn plan_import_names_the_line_of_a_port_cabled_twice() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("cables.csv");
    std::fs::write(
        &list,
        "a_device,a_port,b_device,b_port\nsw1,1,sw2,1\nsw1,2,sw3,1\nsw1,1,sw3,2\n",
    )
    .unwrap();
    let out = cabling_under_umask(0o022, &["plan", "import", list.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 4: sw1 port 1 already has a cable"),
        "{stderr}"
    );
}

/// `plan import -` reads the cable list from standard input.
#[test]
fn plan_import_reads_standard_input_for_dash() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(["plan", "import", "-", "--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a_device,a_port,b_device,b_port\nsw1,1,sw2,1\nsw1,2,sw3,1\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
}
