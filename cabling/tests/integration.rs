//! The integration tests of the `cabling` package, built as one test binary (`autotests =
//! false` and one `[[test]]` in Cargo.toml): each file of `cabling/tests/` is a module here, so
//! the shared harness and the crates are compiled and linked once, not once per file.
//!
//! One file's tests: `cargo test -p cabling --test integration verify_ibsim::`.

// The harness the root package's tests use too: ibsim, OpenSM, shared fixtures, the checks of
// `completions` and `man`.
#[path = "../../tests/common/mod.rs"]
mod common;

mod install_files;
mod plan_cli;
mod plan_files;
mod plan_on_ibsim;
mod sheets_pdf;
mod switch_models_ibsim;
mod verify_cli;
mod verify_ibsim;
mod verify_page;
