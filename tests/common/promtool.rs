//! `promtool check metrics` (Debian's `prometheus` package, which `.ci/setup` installs): the
//! Prometheus project's own linter of the text exposition format, run on what the formatter
//! wrote, where it is installed.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `promtool check metrics` on `text` and panics with its complaints if it has any.
/// Without promtool it says on stderr that `what` was not checked, and why, and returns false.
pub fn check_metrics(text: &str, what: &str) -> bool {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "skipped promtool check of {what}: promtool cannot be run ({e}); it comes with \
                 Debian's `prometheus` package (bash .ci/setup installs it)"
            );
            return false;
        }
    };
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = child.wait_with_output().expect("promtool runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics on {what}: {:?}\n{said}\n{text}",
        out.status
    );
    true
}
