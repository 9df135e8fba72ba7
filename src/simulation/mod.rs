//! What a routing is worth to an application, measured by a simulator the field trusts
//! (SimGrid's SMPI) on the routes the forwarding tables really program. This module builds the
//! simulator's input; it simulates nothing itself.
//!
//! * [`Platform`]: one SimGrid host per endpoint of the job, one link per direction of every
//!   cable the job's routes use (bandwidth and latency from the cable's IB rate,
//!   [`LinkModel`]), and the route of every ordered host pair as the tables program it: the
//!   source's cable up, each switch's table entry for the destination LID in turn, the
//!   destination's cable down. [`crate::io::simgrid`] writes it as XML.
//! * Multipath ([`LayerPolicy`]): SimGrid's `Full` routing holds one route per host pair, so a
//!   pair's traffic takes one layer (LID offset): a fixed one, the layer a schedule gives each
//!   flow (the MLFM paper's source-chosen spines), or a per-pair round robin (a synthetic
//!   spreading no MPI stack does). Several layers as parallel flows need one route per layer
//!   for one pair, which a `Full` zone has only between distinct hosts:
//!   [`LayerPolicy::Parallel`] makes every endpoint K hosts on the same port, and
//!   [`traffic::split_over_copies`] splits each message into K parts. What MPI stacks do
//!   ([`Ucx`]): small messages on layer 0, large ones split evenly over layers 0..K-1, K = 2
//!   by default — layer 0 alone, or the parallel copies over the first K layers.
//! * Traffic ([`traffic`]): the phase tables the benchmark runs (random permutation,
//!   adversarial switch pairing, a shift by half the ranks, a schedule's phases).
//!
//! # Where the flow model is not InfiniBand
//! SimGrid shares each link max-min fairly among the flows crossing it, as steady fluid flows
//! (the `CM02` model, with SMPI's TCP-calibrated correction factors switched off by the
//! command). InfiniBand has credit-based link-level flow control: a congested output port
//! stops its upstream ports, whose other flows stall behind it (head-of-line blocking, trees
//! of congestion spreading back to senders that cross no hot link). The simulator has none of
//! that, nor virtual lanes, packet sizes, switch buffers or adaptive routing; a flow is
//! slowed only by the links it crosses. Simulated times are therefore a lower bound on a
//! congested fabric, and differences between routings show link sharing, not congestion
//! spreading.

mod platform;
pub mod traffic;
mod ucx;

pub use platform::{
    LayerPolicy, LinkModel, Platform, PlatformError, SimHost, SimLink, data_gbps_per_lane,
};
pub use ucx::{MessageSplit, Ucx, UcxError};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ucx;
