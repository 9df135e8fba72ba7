//! What the command-line front ends (`ibfabric` and `cabling`) share: where inputs come from
//! ([`input`]), where results go ([`output`]), the exit status ([`exit`]), the `-v` flag and
//! logging set-up ([`logging`]), progress on a terminal ([`progress`]), the construction
//! subcommands ([`construction`]), and the completion scripts and man pages of an installed
//! command ([`install_files`]), and the HTML pages with plots ([`html`]).
//!
//! Only with the `cli` feature (on by default). The OpenSM plugin builds the core without it,
//! so that clap, anyhow, env_logger and tempfile stay out of `libosmlayered.so`. Unlike the
//! rest of the crate, this module does file IO: it is the front ends' edge, not the core.

pub mod construction;
pub mod exit;
pub mod html;
pub mod input;
pub mod install_files;
pub mod logging;
pub mod output;
pub mod progress;

pub use construction::Construction;
pub use exit::exit_code;
pub use install_files::{CompletionsArgs, ManArgs};
pub use logging::Verbosity;
pub use output::{emit, write_all_atomically, write_atomically};
