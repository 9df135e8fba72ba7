//! Rank placement for collectives: which rank of an MPI job runs on which allocated host, so
//! that binomial broadcast, recursive-doubling allreduce or Bruck's all-to-all cross fewer
//! switch hops (or load links less) on the routes the fabric really uses.
//!
//! The pieces: the [`collective`] models give each step's messages over ranks; [`HostRoutes`]
//! reads the hops (and cables) between the allocated hosts from the forwarding tables once;
//! the [`Evaluator`] costs a placement and re-costs a swap of two ranks from only the messages
//! they take part in; [`two_opt`] improves a baseline [`mapping`] by random improving swaps.
//! This follows the two-opt rank placement studied for ring-based shortcut topologies, for any
//! fabric and routing.

pub mod collective;
mod cost;
pub mod mapping;
mod routes;
mod two_opt;

pub use collective::{Collective, Schedule};
pub use cost::{Cost, Evaluator, Objective};
pub use mapping::{Mapping, Slot, allocate, host_slots, rank_order};
pub use routes::{HostRoutes, RoutesError};
pub use two_opt::{TwoOptRun, two_opt};

#[cfg(test)]
mod tests;
