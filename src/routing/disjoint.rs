//! Edge-disjoint paths among a pair's routes across the layers: the diversity the layered
//! routing is built for, and the quantity the path search, the rebalancing pass and the local
//! search must never lose.
//!
//! A pair (s, t) has one route per layer; how many of them can carry traffic without sharing a
//! link is the maximum flow from s to t with unit capacities on the links the routes use. The
//! routes are short (a few hops each, a few layers), so a plain augmenting-path flow over a
//! list of edges ([`PathFlow`]) is faster than any graph structure, and it is reused across
//! the millions of pairs the passes check.

use super::graph::RoutingGraph;
use super::layers::Layers;

/// Edge-disjoint paths a switch needs towards a destination: the FatPaths finding that three
/// disjoint paths per switch pair are what low-diameter networks need to perform well.
pub(super) const DISJOINT_TARGET: u8 = 3;

/// For every pair (s, t), t with endpoints, the number of edge-disjoint paths among the routes
/// of layers `0..count`.
pub(super) fn count_disjoint(
    graph: &RoutingGraph,
    layers: &Layers,
    count: usize,
    disjoint: &mut [u8],
) {
    let n = graph.len();
    let mut flow = PathFlow::default();
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t) {
            disjoint[t * n + s] = pair_disjoint(graph, layers, count, s, t, &mut flow);
        }
    }
}

/// The number of edge-disjoint paths among the routes from s to t of layers `0..count`.
pub(super) fn pair_disjoint(
    graph: &RoutingGraph,
    layers: &Layers,
    count: usize,
    s: usize,
    t: usize,
    flow: &mut PathFlow,
) -> u8 {
    flow.clear();
    for l in 0..count {
        let mut v = s;
        while let Some(e) = (v != t).then(|| layers.next_edge(l, v, t)).flatten() {
            flow.add_edge(v as u32, graph.edge_to[e]);
            v = graph.edge_to[e] as usize;
        }
    }
    flow.max_flow(s as u32, t as u32)
}

/// How many ordered switch pairs (s, t), t with endpoints, have at least `k` edge-disjoint
/// paths among their routes in all layers, out of how many pairs.
pub fn pairs_with_disjoint_paths(graph: &RoutingGraph, layers: &Layers, k: u8) -> (usize, usize) {
    let n = graph.len();
    let mut disjoint = vec![0u8; n * n];
    count_disjoint(graph, layers, layers.count(), &mut disjoint);
    let pairs = (0..n)
        .filter(|&t| graph.endpoints[t] > 0)
        .flat_map(|t| (0..n).filter(move |&s| s != t).map(move |s| (s, t)));
    pairs.fold((0, 0), |(good, all), (s, t)| {
        (good + usize::from(disjoint[t * n + s] >= k), all + 1)
    })
}

/// Unit-capacity max flow on the handful of directed edges of a pair's layer paths.
#[derive(Default)]
pub(super) struct PathFlow {
    /// (from, to, residual capacity), with the reverse residual of edge i at i ^ 1.
    edges: Vec<(u32, u32, u8)>,
    seen: Vec<u32>,
    via: Vec<usize>,
}

impl PathFlow {
    pub(super) fn clear(&mut self) {
        self.edges.clear();
    }

    pub(super) fn add_edge(&mut self, from: u32, to: u32) {
        if !self
            .edges
            .iter()
            .step_by(2)
            .any(|&(a, b, _)| a == from && b == to)
        {
            self.edges.push((from, to, 1));
            self.edges.push((to, from, 0));
        }
    }

    pub(super) fn max_flow(&mut self, s: u32, t: u32) -> u8 {
        let mut flow = 0;
        // Augment along depth-first paths until none is left (at most `layers` rounds).
        loop {
            self.seen.clear();
            self.seen.push(s);
            self.via.clear();
            if !self.augment(s, t) {
                return flow;
            }
            for &i in &self.via {
                self.edges[i].2 -= 1;
                self.edges[i ^ 1].2 += 1;
            }
            flow += 1;
        }
    }

    fn augment(&mut self, v: u32, t: u32) -> bool {
        if v == t {
            return true;
        }
        for i in 0..self.edges.len() {
            let (from, to, capacity) = self.edges[i];
            if from == v && capacity > 0 && !self.seen.contains(&to) {
                self.seen.push(to);
                self.via.push(i);
                if self.augment(to, t) {
                    return true;
                }
                self.via.pop();
            }
        }
        false
    }
}
