//! Bad input gets a clear message and exit status 2: each message below once read garbled,
//! doubled, wrong or suggested something that was refused in turn. And inputs that are not
//! quite clean (a stray byte that is not UTF-8, a dump piped in as `-`) are read, not refused.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn ibfabric(args: &[&str]) -> Output {
    ibfabric_with_stdin(args, b"")
}

fn ibfabric_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ibfabric");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn refused(args: &[&str]) -> String {
    let out = ibfabric(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    stderr(&out)
}

/// An `ibnetdiscover` dump of the Slim Fly q = 5, written by `ibfabric topo` into a directory
/// that lives as long as the returned handle.
fn dump_fixture() -> (tempfile::TempDir, PathBuf) {
    let out = ibfabric(&["topo", "slimfly", "--q", "5", "--format", "ibnetdiscover"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slimfly-q5.topo");
    std::fs::write(&path, &out.stdout).unwrap();
    (dir, path)
}

#[test]
fn a2a_mlfm_with_d_0_says_what_is_wrong_with_d_once() {
    let err = refused(&[
        "a2a", "mlfm", "--d", "0", "--n", "1", "--l", "2", "--m", "1",
    ]);
    assert_eq!(err.matches("mlfm:").count(), 1, "{err}");
    assert!(err.contains("d = 0"), "{err}");
    assert!(err.contains("nearest valid: d = 1"), "{err}");
    // Bounds computed from an invalid d (1 ≤ n ≤ 0) are no help.
    assert!(!err.contains("≤ 0"), "{err}");
}

#[test]
fn a2a_lsft_errors_say_lsft_once() {
    for args in [
        &["a2a", "lsft", "--n", "6"][..],
        &["a2a", "lsft", "--n", "6", "--k", "2", "--m", "1"],
    ] {
        let err = refused(args);
        assert_eq!(err.matches("lsft:").count(), 1, "{args:?}: {err}");
        assert!(err.contains("n = 6 is not a prime power"), "{err}");
    }
}

#[test]
fn a_20_digit_parameter_is_too_large_not_a_non_number() {
    let err = refused(&["route", "--fabric", "slimfly:q=99999999999999999999"]);
    assert!(
        err.contains("q = 99999999999999999999 is too large"),
        "{err}"
    );
    assert!(!err.contains("not a whole number"), "{err}");
}

#[test]
fn a_repeated_spec_key_is_refused() {
    let err = refused(&["route", "--fabric", "slimfly:q=5,q=7"]);
    assert!(err.contains("q is given twice (q=5 and q=7)"), "{err}");
}

/// What `circulant:nodes=N` suggests (without jumps, N not a power of two) must itself be
/// accepted: every suggested node count, and the suggested jumps for N.
#[test]
fn circulant_suggestions_are_accepted() {
    for nodes in [3, 5, 6, 7, 12] {
        let err = refused(&["topo", "circulant", "--nodes", &nodes.to_string()]);
        let (_, after) = err.split_once("G(n, log2 n) (").expect("suggestions");
        let (counts, rest) = after.split_once(')').unwrap();
        for count in counts.trim_start_matches("nodes = ").split(" or ") {
            let out = ibfabric(&["topo", "circulant", "--nodes", count]);
            assert!(
                out.status.success(),
                "nodes = {count} suggested for {nodes}: {}",
                stderr(&out)
            );
        }
        let jumps = rest.rsplit("e.g. ").next().unwrap().trim();
        let out = ibfabric(&[
            "topo",
            "circulant",
            "--nodes",
            &nodes.to_string(),
            "--jumps",
            jumps,
        ]);
        assert!(
            out.status.success(),
            "jumps {jumps} for {nodes}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_dump_with_a_byte_that_is_not_utf8_is_read_with_a_warning_naming_the_line() {
    let (dir, clean_path) = dump_fixture();
    let clean = std::fs::read(&clean_path).unwrap();
    // A stray byte inside the first switch's description (after its first character).
    let mut bad = Vec::new();
    let mut bad_line = None;
    for (i, line) in clean.split_inclusive(|&b| b == b'\n').enumerate() {
        let at = line.windows(3).position(|w| w == b"# \"");
        match at {
            Some(at) if bad_line.is_none() && line.starts_with(b"Switch") => {
                bad_line = Some(i + 1);
                bad.extend_from_slice(&line[..at + 4]);
                bad.push(0xff);
                bad.extend_from_slice(&line[at + 4..]);
            }
            _ => bad.extend_from_slice(line),
        }
    }
    let bad_line = bad_line.expect("a switch header in the dump");
    let path = dir.path().join("bad.topo");
    std::fs::write(&path, &bad).unwrap();
    let out = ibfabric(&[
        "topo",
        "ibnetdiscover",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let warning = format!(
        "{}: line {bad_line}: bytes that are not UTF-8",
        path.display()
    );
    assert!(stderr(&out).contains(&warning), "{}", stderr(&out));
    let clean_out = ibfabric(&[
        "topo",
        "ibnetdiscover",
        clean_path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let nodes = |out: &Output| {
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["nodes"].as_array().unwrap().len()
    };
    assert_eq!(nodes(&out), nodes(&clean_out));
}

#[test]
fn dash_reads_a_dump_from_standard_input() {
    let (_dir, path) = dump_fixture();
    let dump = std::fs::read(&path).unwrap();
    let from_file = ibfabric(&["topo", "ibnetdiscover", path.to_str().unwrap()]);
    let from_stdin = ibfabric_with_stdin(&["topo", "ibnetdiscover", "-"], &dump);
    assert!(from_stdin.status.success(), "{}", stderr(&from_stdin));
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn dash_twice_is_refused() {
    let (_dir, path) = dump_fixture();
    let dump = std::fs::read(&path).unwrap();
    let out = ibfabric_with_stdin(&["diff", "--expected", "-", "--actual", "-"], &dump);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("standard input (-) is given twice"),
        "{}",
        stderr(&out)
    );
}
