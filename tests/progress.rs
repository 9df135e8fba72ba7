//! Progress on stderr: a long `ibfabric route` on a terminal (a pseudo-terminal from
//! `script`) names its phase; with `-q`, or with stderr not a terminal, nothing is shown.

use std::process::Command;

/// A route that takes well over the one second after which progress shows.
const LONG_ROUTE: &str = "route --fabric slimfly:q=11 --layers 8 --format json";

/// What a terminal shows while `ibfabric ARGS` runs (stdout to /dev/null).
fn on_a_terminal(args: &str) -> String {
    let command = format!("{} {args} > /dev/null", env!("CARGO_BIN_EXE_ibfabric"));
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("run script (util-linux)");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_long_route_on_a_terminal_names_its_phase() {
    let screen = on_a_terminal(LONG_ROUTE);
    assert!(screen.contains("routing layers ("), "{screen:?}");
}

#[test]
fn quiet_shows_no_progress_on_a_terminal() {
    let screen = on_a_terminal(&format!("-q {LONG_ROUTE}"));
    assert!(!screen.contains("routing layers"), "{screen:?}");
}

#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(LONG_ROUTE.split(' '))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
