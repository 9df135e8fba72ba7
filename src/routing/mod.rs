//! Routing: LID assignment, forwarding tables, and the routing algorithms (minimal with link
//! balancing, layered multipath, random uniform edge selection) that fill them.

pub mod graph;
pub mod layered;
pub mod layers;
pub mod lft;
pub mod lids;
mod polish;
mod rebalance;
pub mod tables;
pub mod walk;

pub use lft::{ForwardingTables, NO_PORT};
pub use lids::{LidError, LidOwner, LidTable, assign_lids};
pub use tables::forwarding_tables;

use crate::topology::Fabric;
use graph::RoutingGraph;
use layered::{RoutingConfig, route};
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
    let layers = route(&graph, config);
    let tables = forwarding_tables(fabric, &graph, &layers, &lids);
    Ok(Routed {
        lids,
        graph,
        layers,
        tables,
    })
}
