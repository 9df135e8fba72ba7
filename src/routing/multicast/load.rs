//! How many groups' trees cross each switch-to-switch cable: the tree search prefers the
//! cables fewest groups use, so that the groups spread over the fabric.

use std::collections::HashMap;

use super::{MulticastTree, TreeCable};
use crate::routing::graph::RoutingGraph;
use crate::topology::{Fabric, PortRef};

/// Groups per physical cable between two switches (parallel cables count apart), and each
/// cable's port at both ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CableLoad {
    /// `offsets[e]..offsets[e + 1]` index `cable_of` and `far_port` for the ports of edge e
    /// (in the order of [`RoutingGraph::ports`]).
    offsets: Vec<u32>,
    /// The cable of each (edge, port).
    cable_of: Vec<u32>,
    /// The port at the other end of each (edge, port)'s cable.
    far_port: Vec<u8>,
    /// Groups per cable.
    groups: Vec<u32>,
}

impl CableLoad {
    /// No group on any cable of `graph`, made from `fabric`.
    pub fn new(fabric: &Fabric, graph: &RoutingGraph) -> Self {
        let mut offsets = Vec::with_capacity(graph.edge_count() + 1);
        let (mut cable_of, mut far_port) = (Vec::new(), Vec::new());
        let mut index: HashMap<(u32, u8), u32> = HashMap::new();
        offsets.push(0);
        for e in 0..graph.edge_count() {
            let from = graph.edge_from[e] as usize;
            for &port in graph.ports(e) {
                let near = PortRef {
                    node: graph.nodes[from],
                    port,
                };
                let far = fabric.peer(near).expect("a routing graph cable is cabled");
                // One key per cable: its end at the smaller fabric node.
                let key = (near.node.0, near.port).min((far.node.0, far.port));
                let next = index.len() as u32;
                cable_of.push(*index.entry(key).or_insert(next));
                far_port.push(far.port);
            }
            offsets.push(cable_of.len() as u32);
        }
        let groups = vec![0; index.len()];
        Self {
            offsets,
            cable_of,
            far_port,
            groups,
        }
    }

    /// The least used cable of edge e: (its position among the edge's ports, groups on it),
    /// the lowest port among equals.
    pub fn lightest(&self, e: usize) -> (usize, u32) {
        let range = self.offsets[e] as usize..self.offsets[e + 1] as usize;
        range
            .enumerate()
            .map(|(k, i)| (k, self.groups[self.cable_of[i] as usize]))
            .min_by_key(|&(k, groups)| (groups, k))
            .expect("an edge has a cable")
    }

    /// The tree cable from `parent` down to `child` over their least used cable.
    ///
    /// # Panics
    /// If the two are not cabled.
    pub fn cable(&self, graph: &RoutingGraph, parent: usize, child: usize) -> TreeCable {
        let down = graph
            .edge_between(parent, child)
            .expect("tree switches are cabled");
        let up = graph
            .edge_between(child, parent)
            .expect("cables run both ways");
        let (k, _) = self.lightest(down);
        let i = self.offsets[down] as usize + k;
        TreeCable {
            child,
            parent,
            child_port: self.far_port[i],
            parent_port: graph.ports(down)[k],
            up,
            down,
            cable: self.cable_of[i] as usize,
        }
    }

    /// The tree cable from `parent` down to `child` over the cable at `parent`'s port
    /// `parent_port`; `None` when no cable of theirs is there.
    pub fn cable_through(
        &self,
        graph: &RoutingGraph,
        parent: usize,
        child: usize,
        parent_port: u8,
    ) -> Option<TreeCable> {
        let down = graph.edge_between(parent, child)?;
        let up = graph.edge_between(child, parent)?;
        let k = graph.ports(down).iter().position(|&p| p == parent_port)?;
        let i = self.offsets[down] as usize + k;
        Some(TreeCable {
            child,
            parent,
            child_port: self.far_port[i],
            parent_port,
            up,
            down,
            cable: self.cable_of[i] as usize,
        })
    }

    /// Counts `tree` on its cables.
    pub fn add(&mut self, tree: &MulticastTree) {
        for c in &tree.cables {
            self.groups[c.cable] += 1;
        }
    }

    /// Takes `tree` (counted before) off its cables.
    pub fn remove(&mut self, tree: &MulticastTree) {
        for c in &tree.cables {
            self.groups[c.cable] = self.groups[c.cable].saturating_sub(1);
        }
    }

    /// Groups on each cable.
    pub fn groups(&self) -> &[u32] {
        &self.groups
    }
}
