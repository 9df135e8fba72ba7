//! From layers to forwarding tables: every switch gets an entry for every LID.
//!
//! A CA or router port's LID base + o is routed on layer o (mod the number of layers) towards
//! the switch the port is cabled to, which forwards it on the port of that cable. A switch's
//! own LID is routed on layer 0 and answered on port 0. Between two switches joined by several
//! cables, the cable is chosen by LID, so the destinations spread over parallel cables.

use super::graph::{NONE, RoutingGraph};
use super::layers::Layers;
use super::lft::ForwardingTables;
use super::lids::{LidOwner, LidTable};
use crate::topology::{Fabric, NodeKind, PortRef};

/// The forwarding tables that realise `layers` for the LIDs of `lids`. Entries towards
/// unreachable destinations stay unset.
pub fn forwarding_tables(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
) -> ForwardingTables {
    let trees: Vec<(u16, LidTree)> = lids
        .iter()
        .filter_map(|(lid, owner)| Some((lid, lid_tree(fabric, graph, layers.count(), owner)?)))
        .collect();
    let mut tables = ForwardingTables::for_lids(fabric, lids);
    // Switch by switch, each on its own thread: a switch's entries depend on the layers only.
    tables.fill_tables(|switch, table| {
        let s = graph.index_of[switch.index()];
        if s == NONE {
            return; // not in the routing graph: no routes
        }
        let s = s as usize;
        for &(lid, tree) in &trees {
            let port = if s == tree.switch {
                Some(tree.delivery_port)
            } else {
                layers.next_edge(tree.layer, s, tree.switch).map(|e| {
                    let ports = graph.ports(e);
                    ports[usize::from(lid) % ports.len()]
                })
            };
            if let Some(port) = port {
                table[usize::from(lid)] = port;
            }
        }
    });
    tables
}

/// Where the switches route a LID: the destination tree of one layer towards one switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LidTree {
    /// The switch that delivers the LID (index in the routing graph).
    pub switch: usize,
    /// The port it delivers on (0: the switch's own LID).
    pub delivery_port: u8,
    /// The layer whose tree the LID follows: its LID offset modulo the layers; a switch's LID
    /// follows layer 0.
    pub layer: usize,
}

/// The tree the LID owned by `owner` follows, for a routing of `layers` layers over `graph`;
/// `None` for a LID no switch routes (an adapter cabled to nothing or to another adapter).
pub fn lid_tree(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: usize,
    owner: LidOwner,
) -> Option<LidTree> {
    if fabric.node(owner.node).kind == NodeKind::Switch {
        return Some(LidTree {
            switch: graph.index_of[owner.node.index()] as usize,
            delivery_port: 0,
            layer: 0,
        });
    }
    let peer = fabric.peer(PortRef {
        node: owner.node,
        port: owner.port,
    })?;
    fabric.node(peer.node).is_switch().then(|| LidTree {
        switch: graph.index_of[peer.node.index()] as usize,
        delivery_port: peer.port,
        layer: usize::from(owner.offset) % layers.max(1),
    })
}
