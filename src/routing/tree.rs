//! One layer's tree into one destination, seen from the destination: each switch's children,
//! the sending endpoints its subtree carries, and the link loads all those trees add up to.
//!
//! [`Layers`] stores next hops, which is what forwarding needs; the passes that move routes
//! after the layers are built ([`rebalance`](super::rebalance), [`polish`](super::polish))
//! need the other direction — which switches follow a switch when it re-points, and how much
//! load moves with them — so both build it here instead of each keeping its own copy.

use super::graph::RoutingGraph;
use super::layers::Layers;

/// Longest route the passes walk (hops); longer routes are left alone.
pub(super) const MAX_ROUTE: usize = 16;

/// Routes per directed edge: every sending switch's endpoints × the destination's endpoints,
/// along its route, in every layer.
pub(super) fn route_loads(graph: &RoutingGraph, layers: &Layers) -> Vec<u64> {
    let n = graph.len();
    let mut loads = vec![0u64; graph.edge_count()];
    let mut tree = Tree::default();
    for l in 0..layers.count() {
        for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
            tree.build(graph, layers, l, t);
            let receivers = u64::from(graph.endpoints[t]);
            for v in 0..n {
                if let Some(e) = (v != t).then(|| layers.next_edge(l, v, t)).flatten() {
                    loads[e] += tree.senders[v] * receivers;
                }
            }
        }
    }
    loads
}

/// One layer's tree into one destination: children and sending endpoints per subtree.
#[derive(Default)]
pub(super) struct Tree {
    pub(super) children: Vec<Vec<u32>>,
    /// Sending endpoints of each switch's subtree (itself included).
    pub(super) senders: Vec<u64>,
    /// Breadth-first from the destination (parents before children).
    pub(super) order: Vec<u32>,
}

impl Tree {
    pub(super) fn build(&mut self, graph: &RoutingGraph, layers: &Layers, l: usize, t: usize) {
        let n = graph.len();
        self.children.resize_with(n, Vec::new);
        self.children.iter_mut().for_each(Vec::clear);
        for v in (0..n).filter(|&v| v != t) {
            if let Some(e) = layers.next_edge(l, v, t) {
                self.children[graph.edge_to[e] as usize].push(v as u32);
            }
        }
        // Breadth-first from t; accumulate senders from the leaves up.
        self.order.clear();
        self.order.push(t as u32);
        let mut i = 0;
        while i < self.order.len() {
            let v = self.order[i] as usize;
            self.order.extend_from_slice(&self.children[v]);
            i += 1;
        }
        self.senders.clear();
        self.senders.resize(n, 0);
        for &v in self.order.iter().rev() {
            let v = v as usize;
            self.senders[v] += u64::from(graph.endpoints[v]);
            if v != t {
                let parent = graph.edge_to[layers.next_edge(l, v, t).expect("in tree")] as usize;
                self.senders[parent] += self.senders[v];
            }
        }
    }

    /// The subtree of s (s first).
    pub(super) fn subtree(&self, s: usize, members: &mut Vec<u32>) {
        members.clear();
        members.push(s as u32);
        let mut i = 0;
        while i < members.len() {
            let v = members[i] as usize;
            members.extend_from_slice(&self.children[v]);
            i += 1;
        }
    }
}

/// Writes the edges of v's route to t in layer l into `out`; returns how many.
pub(super) fn walk(
    graph: &RoutingGraph,
    layers: &Layers,
    l: usize,
    mut v: usize,
    t: usize,
    out: &mut [u32],
) -> usize {
    let mut len = 0;
    while v != t {
        let e = layers.next_edge(l, v, t).expect("routed");
        out[len] = e as u32;
        len += 1;
        v = graph.edge_to[e] as usize;
    }
    len
}
