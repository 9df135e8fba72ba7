//! What a fabric lost and gained against the fabric it was routed for: switches matched by
//! GUID, cables counted as cables (parallel ones each). The subnet manager's plugin, the
//! `route --repair-from` command and the tests all need the same matching and the same
//! counts, so that the log line, the sweep record and the command line agree.

use crate::routing::graph::RoutingGraph;
use crate::topology::{Fabric, NodeId};

/// The switches and cables of a fabric against an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricChanges {
    /// For each switch of the new graph, its switch in the old graph (`None`: new).
    pub old_of: Vec<Option<usize>>,
    /// Switch-to-switch cables lost (counted as the old fabric's cables minus the ones kept).
    pub lost_cables: usize,
    /// Switches lost.
    pub lost_switches: usize,
    /// Switch-to-switch cables between switches that had no cable between them before (a new
    /// switch's cables included): the ones the repair routes in.
    pub gained_cables: usize,
    /// Switches that are new.
    pub gained_switches: usize,
}

impl FabricChanges {
    /// Matches `fabric` (over `graph`) against `old_fabric` (over `old_graph`).
    pub fn between(
        old_fabric: &Fabric,
        old_graph: &RoutingGraph,
        fabric: &Fabric,
        graph: &RoutingGraph,
    ) -> Self {
        let old_of = old_switches(old_fabric, old_graph, fabric, graph);
        let switch = |id: NodeId| {
            let s = graph.index_of[id.index()];
            (s != u32::MAX).then_some(s as usize)
        };
        let gained_cables = fabric
            .links()
            .iter()
            .filter(|l| {
                let (Some(a), Some(b)) = (switch(l.a.node), switch(l.b.node)) else {
                    return false; // a host's cable
                };
                match (old_of[a], old_of[b]) {
                    (Some(x), Some(y)) => old_graph.edge_between(x, y).is_none(),
                    _ => true,
                }
            })
            .count();
        let gained_switches = old_of.iter().filter(|o| o.is_none()).count();
        let lost_cables = (old_fabric.summary().switch_links + gained_cables)
            .saturating_sub(fabric.summary().switch_links);
        let lost_switches = (old_graph.len() + gained_switches).saturating_sub(graph.len());
        Self {
            old_of,
            lost_cables,
            lost_switches,
            gained_cables,
            gained_switches,
        }
    }

    /// Whether nothing was gained: the fabric is the old one or a part of it.
    pub fn only_losses(&self) -> bool {
        self.gained_cables == 0 && self.gained_switches == 0
    }
}

/// For each switch of `graph` (over `fabric`), the switch of `old_graph` (over `old_fabric`)
/// with the same GUID, or `None`.
pub fn old_switches(
    old_fabric: &Fabric,
    old_graph: &RoutingGraph,
    fabric: &Fabric,
    graph: &RoutingGraph,
) -> Vec<Option<usize>> {
    graph
        .nodes
        .iter()
        .map(|&id| {
            let old = old_fabric.node_by_guid(fabric.node(id).guid)?;
            let s = old_graph.index_of[old.index()];
            (s != u32::MAX).then_some(s as usize)
        })
        .collect()
}
