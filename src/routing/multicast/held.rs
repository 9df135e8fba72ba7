//! A group's tree as the switches hold it, read back from their forwarding entries, so that the
//! next tree of the group can be kept from it ([`super::extend_tree`]) instead of built afresh:
//! after a routing change or a restart, when only the entries are left of the tree that was
//! built.
//!
//! The entries give the cables but not the root, so every tree switch is tried as the root and
//! the first under which the rank rule holds is taken: the kept tree must have the rule for the
//! branches grown from it to keep every path unimodal.

use std::collections::BTreeMap;

use super::load::CableLoad;
use super::search::OPEN;
use super::{Coverage, MemberPort, MulticastTree, TreeCable};
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::RoutingGraph;
use crate::topology::{Fabric, PortRef};

/// The tree that a group's forwarding `entries` (per switch of `graph`, its ports) describe
/// over the cables of `graph` as it is now, rooted so that it has the rank rule of `order`;
/// `None` when they describe no such tree: a port sends to a switch that does not send back, a
/// cable between two of its switches is gone, two switches are joined twice, the switches are
/// not one tree, no root gives the rank rule, or an index is no switch of `graph`. Ports to
/// hosts and port 0 are its members.
pub fn held_tree(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    entries: &[(usize, Vec<u8>)],
    load: &CableLoad,
) -> Option<MulticastTree> {
    if entries.iter().any(|&(s, _)| s >= graph.len()) {
        return None;
    }
    let ports: BTreeMap<usize, &[u8]> = entries
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(s, p)| (*s, &p[..]))
        .collect();
    let mut members = Vec::new();
    // Per switch: (neighbour, own port towards it).
    let mut around: BTreeMap<usize, Vec<(usize, u8)>> = BTreeMap::new();
    for (&s, switch_ports) in &ports {
        for &port in *switch_ports {
            if port == 0 {
                members.push(MemberPort { switch: s, port });
                continue;
            }
            // A port whose cable is gone forwards nothing (a lost cable between two tree
            // switches leaves the tree in pieces, which the count below finds).
            let Some(peer) = fabric.peer(PortRef {
                node: graph.nodes[s],
                port,
            }) else {
                continue;
            };
            if !fabric.node(peer.node).is_switch() {
                members.push(MemberPort { switch: s, port });
                continue;
            }
            let t = *graph.index_of.get(peer.node.index())? as usize;
            if t >= graph.len() || !ports.get(&t).is_some_and(|p| p.contains(&peer.port)) {
                return None;
            }
            let neighbours = around.entry(s).or_default();
            if neighbours.iter().any(|&(n, _)| n == t) {
                return None;
            }
            neighbours.push((t, port));
        }
    }
    let cable_ends: usize = around.values().map(Vec::len).sum();
    if ports.is_empty() || cable_ends != 2 * (ports.len() - 1) {
        return None;
    }
    let coverage = if order.is_some() {
        Coverage::Unimodal
    } else {
        Coverage::NoOrder
    };
    ports.keys().find_map(|&root| {
        let cables = rooted(graph, order, &around, root, load)?;
        (cables.len() + 1 == ports.len()).then(|| MulticastTree {
            root: Some(root),
            cables,
            members: members.clone(),
            unreached: Vec::new(),
            coverage,
        })
    })
}

/// The cables of the tree `around` hung from `root`, each parent before its children (fewer
/// than the tree has where it is not connected); `None` where the rank rule of `order` fails.
fn rooted(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    around: &BTreeMap<usize, Vec<(usize, u8)>>,
    root: usize,
    load: &CableLoad,
) -> Option<Vec<TreeCable>> {
    // Per switch reached: its parent and the ranks of its cable up and down.
    let mut reached: BTreeMap<usize, (usize, u32, u32)> =
        BTreeMap::from([(root, (root, OPEN, OPEN))]);
    let mut cables = Vec::new();
    let mut next = 0;
    let mut order_of_visit = vec![root];
    while let Some(&parent) = order_of_visit.get(next) {
        next += 1;
        let (grandparent, up_bound, down_bound) = reached[&parent];
        for &(child, parent_port) in around.get(&parent).into_iter().flatten() {
            if child == grandparent {
                continue;
            }
            let cable = load.cable_through(graph, parent, child, parent_port)?;
            let (up, down) = match order {
                Some(order) => (order.rank(cable.up), order.rank(cable.down)),
                None => (0, 0),
            };
            if order.is_some() && (up >= up_bound || down >= down_bound) {
                return None;
            }
            if reached.insert(child, (parent, up, down)).is_some() {
                return None;
            }
            cables.push(cable);
            order_of_visit.push(child);
        }
    }
    Some(cables)
}
