//! ibfabric core: fabric model, topology constructions, routing and analysis for
//! low-diameter InfiniBand fabrics.
//!
//! Pure Rust: no FFI, no file or network IO, no global state. Diagnostics go through the
//! `log` facade; text formats are parsed from and rendered to strings by [`io`].
#![deny(missing_docs)]

pub mod analysis;
pub mod collectives;
pub mod deadlock;
pub mod gf;
pub mod io;
pub mod placement;
pub mod plan;
pub mod rng;
pub mod routing;
pub mod topology;
pub mod verify;

pub use topology::Fabric;
