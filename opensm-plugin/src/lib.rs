//! `libosmlayered.so`: the OpenSM event plugin that registers the `layered` routing engine.
//!
//! Only this crate touches OpenSM's C structures; the routing is decided and computed by the
//! `ibfabric` core's routing session (`ibfabric::session`) on an owned copy of the subnet
//! ([`subnet`]), and written back to the switches' `new_lft` and hop tables only after it
//! succeeded.
//!
//! Use it with, in opensm.conf (`opensm -F`):
//!
//! ```text
//! event_plugin_name osmlayered
//! event_plugin_options /etc/opensm/layered.yaml   # optional, see `config`
//! routing_engine layered,minhop
//! lmc 2
//! ```
//!
//! and `libosmlayered.so` in a directory of `LD_LIBRARY_PATH` (OpenSM `dlopen`s
//! `lib<name>.so` by name). Every `extern "C"` entry is guarded: an error or a panic is logged,
//! whatever was written is cleared, and OpenSM is told to try its next engine.

// Under cargo fuzz's `--cfg fuzzing` the OpenSM-linked modules below are left out (the fuzz
// binaries link no OpenSM), and with them the only users of some helpers.
#![cfg_attr(fuzzing, allow(dead_code))]

pub mod cabling;
pub mod cache_file;
pub mod config;
pub mod follow_up;
pub mod fuzz;
mod guard;
pub mod metrics;
pub mod multicast;
pub mod qos;
pub mod saved_session;
pub mod saved_trees;
pub mod sent;
pub mod subnet;
pub mod sweep_log;
// The C side: the export table and the guarded entry points (`entry`), the plugin's shared
// state (`plugin`), the routing pass (`sweep`), the write to the switches (`commit`), the
// multicast tables (`mft`) and the logger. The OpenSM symbols they call (osm_log,
// osm_switch_set_hops, ...) resolve only inside the opensm executable, so unit-test binaries,
// which could not link, leave them out: the decisions they carry out are the core's session,
// unit-tested there. The subnet snapshot only reads structs and is unit-tested on hand-built
// ones; the panic guard is plain Rust.
#[cfg(not(any(test, fuzzing)))]
mod commit;
#[cfg(not(any(test, fuzzing)))]
mod daemon;
#[cfg(not(any(test, fuzzing)))]
mod entry;
#[cfg(not(any(test, fuzzing)))]
mod events;
#[cfg(not(any(test, fuzzing)))]
mod logger;
#[cfg(not(any(test, fuzzing)))]
mod mft;
#[cfg(not(any(test, fuzzing)))]
mod pass;
#[cfg(not(any(test, fuzzing)))]
mod plugin;
#[cfg(not(any(test, fuzzing)))]
mod sl2vl;
mod snapshot;
#[cfg(not(any(test, fuzzing)))]
mod sweep;

#[cfg(not(any(test, fuzzing)))]
pub use entry::{ENGINE_NAME, EventPluginTable, osm_event_plugin};
