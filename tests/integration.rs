//! The integration tests of the `ibfabric` package, built as one test binary (`autotests =
//! false` and one `[[test]]` in Cargo.toml): each file of `tests/` is a module here, so the
//! shared harness (`common`) and the crate are compiled and linked once, not once per file, and
//! the slow tests of one file run beside the quick ones of the others.
//!
//! One file's tests: `cargo test -p ibfabric --test integration plugin_soak::` (the filter
//! matches the module path, so `plugin_soak::` selects that file).

mod common;
// The `ibfabric` command runner: outside `common`, which the `cabling` package shares and
// whose tests have no `ibfabric` binary.
mod command;

mod a2a_cli;
mod a2a_ibsim;
mod a2a_schedules;
mod analyze_html;
mod analyze_opensm;
mod architecture;
mod cli;
mod cli_messages;
mod deadlock_colouring;
mod deadlock_dfsssp;
mod deadlock_every_sl;
mod deadlock_opensm;
mod deadlock_transition;
mod deadlock_verify;
mod ibsim_replay;
mod ibsim_topology;
mod install_files;
mod live_dumps;
mod mcast_join;
mod metrics;
mod multicast_opensm;
mod package;
mod plugin_additions;
mod plugin_deadlock;
mod plugin_load;
mod plugin_metrics;
mod plugin_mlfm;
mod plugin_multicast;
mod plugin_restart;
mod plugin_routing;
mod plugin_sa_load;
mod plugin_soak;
mod plugin_sweeps;
mod plugin_transition;
mod progress;
mod rankmap_cli;
mod rankmap_openmpi;
mod rankmap_opensm;
mod repair_cli;
mod routing_balance;
mod routing_complete;
mod routing_threads;
mod simulate_smpi;
