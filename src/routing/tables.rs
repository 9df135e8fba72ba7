//! From layers to forwarding tables: every switch gets an entry for every LID.
//!
//! A CA or router port's LID base + o is routed on layer o (mod the number of layers) towards
//! the switch the port is cabled to, which forwards it on the port of that cable. A switch's
//! own LID is routed on layer 0 and answered on port 0. Between two switches joined by several
//! cables, the cable is chosen by LID, so the destinations spread over parallel cables.

use super::graph::RoutingGraph;
use super::layers::Layers;
use super::lft::ForwardingTables;
use super::lids::LidTable;
use crate::topology::{Fabric, NodeKind, PortRef};

/// The forwarding tables that realise `layers` for the LIDs of `lids`. Entries towards
/// unreachable destinations stay unset.
pub fn forwarding_tables(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
) -> ForwardingTables {
    let mut tables = ForwardingTables::for_lids(fabric, lids);
    for (lid, owner) in lids.iter() {
        let owner_node = fabric.node(owner.node);
        // The destination switch and the port it delivers on.
        let (t, last_port, layer) = if owner_node.kind == NodeKind::Switch {
            (graph.index_of[owner.node.index()] as usize, 0u8, 0usize)
        } else {
            let Some(peer) = fabric.peer(PortRef {
                node: owner.node,
                port: owner.port,
            }) else {
                continue;
            };
            if !fabric.node(peer.node).is_switch() {
                continue; // back-to-back adapters: no switch routes this LID
            }
            (
                graph.index_of[peer.node.index()] as usize,
                peer.port,
                usize::from(owner.offset) % layers.count(),
            )
        };
        for s in 0..graph.len() {
            let port = if s == t {
                Some(last_port)
            } else {
                layers.next_edge(layer, s, t).map(|e| {
                    let ports = graph.ports(e);
                    ports[usize::from(lid) % ports.len()]
                })
            };
            if let Some(port) = port {
                tables.set(graph.nodes[s], lid, port);
            }
        }
    }
    tables
}
