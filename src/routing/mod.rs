//! Routing: LID assignment, forwarding tables, and the routing algorithms (minimal with link
//! balancing, layered multipath, random uniform edge selection) that fill them.
//!
//! The files import downwards only; each one is the home of one concept:
//!
//! * `config` — what the caller chooses ([`RoutingConfig`], [`Algorithm`], [`PathLengths`])
//!   and the length rule every pass keeps. Imports nothing from routing.
//! * [`graph`] — the switch graph with its distances; [`layers`] — per layer and destination,
//!   each switch's next hop (a tree into the destination), and the one routine that completes
//!   a layer along the fewest hops.
//! * `disjoint` — edge-disjoint paths among a pair's routes across the layers (a small
//!   max-flow), the diversity the layered routing is built for.
//! * `tree` — one layer's tree into one destination seen from the destination (children,
//!   senders per subtree) and the link loads of all layers.
//! * `almost_minimal` — the path search that builds each non-minimal layer.
//! * `rebalance` and then `polish` — passes over the finished layers that even the link
//!   loads and win back disjoint paths, never importing each other or the driver.
//! * `restarts` — builds a small fabric's routing again with other seeds while a link stays
//!   over the load cap, keeping the best; it takes the routing as a closure.
//! * [`layered`] — the driver: [`layered::route`] calls the passes above in order.
//! * [`repair`] — after losses, keeps every route that does not cross them and completes the
//!   affected trees (a full routing when it cannot).
//! * [`lids`], [`lft`] and [`tables`] turn the layers into forwarding tables; this file ties
//!   routing and tables together ([`route_fabric`]).
//! * [`cable_order`] — the order of the inter-switch cables every route of the lanes by port
//!   pair is unimodal in; `split_layers` lays layers 1 to 3 of Slim Fly q = 5 from its splits.
//! * [`mft`] and [`multicast`] — multicast forwarding tables and the spanning trees that stay
//!   inside the deadlock proof of the lanes by port pair.
//! * `fixtures` (tests only) — the small fabrics and checks the unit tests share.
//! * [`walk`] follows a destination LID through any forwarding tables — ours or read back
//!   from a fabric — for the analyser, the deadlock schemes, the verifier and rank placement.
//!
//! Above this module, `crate::session` drives a subnet manager's sweeps: it chooses between
//! reusing, repairing and routing in full, and adds the deadlock schemes.

mod almost_minimal;
pub mod cable_order;
mod config;
mod disjoint;
#[cfg(test)]
mod fixtures;
pub mod graph;
pub mod hierarchy;
pub mod kept_entries;
pub mod layered;
pub mod layers;
pub mod lft;
pub mod lids;
pub mod mft;
pub mod multicast;
mod polish;
mod rebalance;
pub mod repair;
mod restarts;
mod split_layers;
pub mod spread;
pub mod tables;
mod tree;
pub mod walk;

pub use config::{Algorithm, PathLengths, RoutingConfig, Turns};
pub use disjoint::pairs_with_disjoint_paths;
pub use lft::{ForwardingTables, NO_PORT};
pub use lids::{LidError, LidOwner, LidTable, assign_lids};
pub use mft::{MulticastTables, PortSet};
pub use spread::spread_forwarding_tables;
pub use tables::{LidTree, forwarding_tables, lid_tree};

use crate::topology::Fabric;
use graph::RoutingGraph;
use layers::Layers;

/// A routed fabric: what the routing computed and the tables that realise it.
#[derive(Debug, Clone)]
pub struct Routed {
    /// The LIDs the tables route.
    pub lids: LidTable,
    /// The switch graph routed over.
    pub graph: RoutingGraph,
    /// Next hops per layer and destination switch.
    pub layers: Layers,
    /// Every switch's forwarding table.
    pub tables: ForwardingTables,
}

/// Routes `fabric`, whose ports carry their LIDs (from the subnet manager, a dump, or
/// [`assign_lids`]), and builds the forwarding tables.
///
/// # Errors
/// Two ports claiming one LID.
pub fn route_fabric(fabric: &Fabric, config: &RoutingConfig) -> Result<Routed, LidError> {
    let lids = LidTable::from_fabric(fabric)?;
    let graph = RoutingGraph::new(fabric);
    let order = (config.turns == Turns::Unimodal)
        .then(|| cable_order::CableOrder::for_routing(&graph, config.seed));
    let layers = layered::route_in_order(&graph, config, order.as_ref());
    let tables = spread_forwarding_tables(fabric, &graph, &layers, &lids, order.as_ref());
    Ok(Routed {
        lids,
        graph,
        layers,
        tables,
    })
}
