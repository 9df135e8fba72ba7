//! ibfabric core: fabric model, topology constructions, routing and analysis for
//! low-diameter InfiniBand fabrics.
//!
//! Pure Rust: no FFI, no file or network IO, no global state. Diagnostics go through the
//! `log` facade; text formats are parsed from and rendered to strings by [`io`].
//!
//! The one exception is `cli`, present only with the `cli` feature (on by default): the
//! helpers the `ibfabric` and `cabling` commands share (output files, exit status, logging
//! set-up, construction subcommands). The OpenSM plugin builds the crate without it.
#![deny(missing_docs)]

pub mod analysis;
#[cfg(feature = "cli")]
pub mod cli;
pub mod collectives;
pub mod deadlock;
pub mod gf;
pub mod io;
pub mod options;
pub mod placement;
pub mod plan;
pub mod rng;
pub mod routing;
pub mod session;
pub mod simulation;
pub mod threads;
pub mod topology;
pub mod verify;

pub use topology::Fabric;
