//! The `ibfabric` command run as a user runs it. Not part of `common`:
//! `env!("CARGO_BIN_EXE_ibfabric")` exists only in this package's tests, while `common` also
//! serves the `cabling` package.

use std::process::{Command, Output};

/// Runs `ibfabric` with `args` and returns what it printed and its exit status.
pub fn ibfabric(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(args)
        .output()
        .expect("run ibfabric")
}

/// What a run wrote to standard error.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
