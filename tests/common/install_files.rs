//! Checks of a front end's `completions` and `man` subcommands (for the tests of `ibfabric` and
//! of `cabling`): the subcommand names they must mention are read from
//! the command's own `--help`, not written down here.

use std::path::Path;
use std::process::{Command, Output};

/// Every shell `completions` supports.
pub const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "elvish", "powershell"];

pub fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .expect("run the command")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// The subcommands `bin --help` lists under `Commands:` (without `help`).
pub fn subcommands(bin: &Path) -> Vec<String> {
    let help = stdout(&run(bin, &["--help"]));
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 2, "no subcommands in --help:\n{help}");
    names
}

/// `completions SHELL` for every shell: exit 0, a script naming every subcommand.
pub fn completion_scripts_name_every_subcommand(bin: &Path) {
    let subcommands = subcommands(bin);
    for shell in SHELLS {
        let out = run(bin, &["completions", shell]);
        assert!(out.status.success(), "{shell}: {:?}", out);
        let script = stdout(&out);
        assert!(!script.trim().is_empty(), "{shell}: empty script");
        for sub in &subcommands {
            assert!(
                script.contains(sub.as_str()),
                "{shell}: no `{sub}` in\n{script}"
            );
        }
    }
}

/// An unknown shell is a usage error (exit 2) that lists the shells there are.
pub fn an_unknown_shell_is_refused(bin: &Path) {
    let out = run(bin, &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for shell in SHELLS {
        assert!(stderr.contains(shell), "{shell} not offered: {stderr}");
    }
}

/// roff escapes a `-` as `\-`.
fn roff(text: &str) -> String {
    text.replace('-', "\\-")
}

/// `man`: a page with NAME, SYNOPSIS and a SUBCOMMANDS section naming each subcommand's page.
pub fn man_page_has_name_synopsis_and_every_subcommand(bin: &Path, name: &str) {
    let out = run(bin, &["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = stdout(&out);
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "no {section} in\n{page}");
    }
    assert!(
        page.contains(&format!(".SH NAME\n{} \\- ", roff(name))),
        "{page}"
    );
    for sub in subcommands(bin) {
        let entry = roff(&format!("{name}-{sub}(1)"));
        assert!(page.contains(&entry), "no {entry} in\n{page}");
    }
}

/// `man --out-dir DIR`: NAME.1 and a NAME-SUB.1 for every subcommand, each with its own NAME
/// line and its command in the SYNOPSIS, as `man` renders them.
pub fn man_out_dir_has_a_page_per_subcommand(bin: &Path, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin, &["man", "--out-dir", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let main = std::fs::read_to_string(dir.path().join(format!("{name}.1"))).unwrap();
    assert_eq!(main, stdout(&run(bin, &["man"])));
    for sub in subcommands(bin) {
        let page_name = format!("{name}-{sub}");
        let page = std::fs::read_to_string(dir.path().join(format!("{page_name}.1")))
            .unwrap_or_else(|e| panic!("{page_name}.1: {e}"));
        assert!(
            page.contains(&format!(".SH NAME\n{} \\- ", roff(&page_name))),
            "{page}"
        );
        assert!(
            page.contains(&format!(".SH SYNOPSIS\n\\fB{} {}\\fR", name, roff(&sub))),
            "{page}"
        );
    }
}
