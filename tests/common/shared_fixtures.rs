//! The real-world `ibnetdiscover` / `iblinkinfo` dumps kept beside the repository, in
//! `../shared/fixtures/ibnetdiscover/` (third-party dumps and dumps of third-party fabrics under
//! ibsim; not part of this repository, so a fresh clone has none of them).
//!
//! A test that needs one reads it here: present, it gets the file; absent, the test prints one
//! line to stderr naming itself and the missing file, and returns without asserting anything.
//! A skip is never silent and never a panic, so `cargo test` passes on a clone with nothing
//! beside it and says which tests it could not run.
//!
//! The one home of this rule for the whole workspace: the library's unit tests include this
//! file with `#[path]`; the integration tests of the root package and of `cabling` reach it as
//! `common::shared_fixtures`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The directory of the shared dumps: `../shared/fixtures/ibnetdiscover` beside the workspace
/// root (the directory of `Cargo.lock`, found from the package being tested).
pub fn shared_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(manifest);
    workspace.join("../shared/fixtures/ibnetdiscover")
}

/// The path of the shared dump `relative` (to [`shared_root`]) if it exists; otherwise `None`
/// after the skip line on stderr.
pub fn shared_fixture(relative: &str) -> Option<PathBuf> {
    let path = shared_root().join(relative);
    if path.exists() {
        Some(path)
    } else {
        skipped(&path);
        None
    }
}

/// The text of the shared dump `relative`, or `None` (after the skip line) if it is missing.
/// Bytes that are not UTF-8 (the binary `--cache` files) are read lossily.
pub fn shared_text(relative: &str) -> Option<String> {
    let path = shared_fixture(relative)?;
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Every shared dump `relative` names, or `None` (after one skip line naming the first one
/// missing) unless all exist: for tests that compare several.
pub fn shared_fixtures<const N: usize>(relative: [&str; N]) -> Option<[PathBuf; N]> {
    let paths = relative.map(|r| shared_root().join(r));
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        skipped(missing);
        return None;
    }
    Some(paths)
}

/// The texts of the shared dumps `relative` names (read as by [`shared_text`]), or `None` after
/// one skip line naming the first one missing.
pub fn shared_texts<const N: usize>(relative: [&str; N]) -> Option<[String; N]> {
    let paths = shared_fixtures(relative)?;
    Some(paths.map(|path| {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        String::from_utf8_lossy(&bytes).into_owned()
    }))
}

/// The one line a skipped test prints: which test, which file was missing, and why. Written to
/// the process's stderr directly, not with `eprintln!`, which the test harness captures and
/// shows only for failing tests: a skip is seen in every run.
fn skipped(missing: &Path) {
    use std::io::Write;
    let current = std::thread::current();
    let test = current.name().unwrap_or("test");
    let line = format!(
        "skipped {test}: {} is missing (the shared real-world dumps are not beside this checkout)\n",
        missing.display()
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
