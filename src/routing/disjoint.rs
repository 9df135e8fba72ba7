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
            disjoint[t * n + s] = if count <= 1 {
                // One layer has one path or none: no flow to compute (the driver balances
                // layer 0 alone first, on fabrics of any size).
                u8::from(count == 1 && layers.is_routed(0, s, t))
            } else {
                pair_disjoint(graph, layers, count, s, t, &mut flow)
            };
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

/// The pairs (s, t), t with endpoints, with fewer than three and with fewer than two
/// edge-disjoint paths in `disjoint` (as [`count_disjoint`] fills it): what the polishing pass
/// and the restarts rank a routing by.
pub(super) fn pairs_lacking(graph: &RoutingGraph, disjoint: &[u8]) -> [i64; 2] {
    let n = graph.len();
    let mut below = [0i64; 2];
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t) {
            let d = disjoint[t * n + s];
            below[0] += i64::from(d < 3);
            below[1] += i64::from(d < 2);
        }
    }
    below
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::routing::config::PathLengths;
    use crate::routing::fixtures::{SMALL_FABRICS, graph, searched_layers};

    /// Edge-disjoint s → t paths by brute force (Menger): the fewest of the distinct directed
    /// `edges` whose removal leaves t unreachable from s.
    fn min_cut(edges: &[(u32, u32)], s: u32, t: u32) -> u8 {
        let mut edges = edges.to_vec();
        edges.sort_unstable();
        edges.dedup();
        let reaches = |removed: u32| {
            let mut seen = vec![s];
            let mut i = 0;
            while i < seen.len() {
                let v = seen[i];
                for (k, &(a, b)) in edges.iter().enumerate() {
                    if a == v && removed & (1 << k) == 0 && !seen.contains(&b) {
                        seen.push(b);
                    }
                }
                i += 1;
            }
            seen.contains(&t)
        };
        (0u32..1 << edges.len())
            .filter(|&removed| !reaches(removed))
            .map(|removed| removed.count_ones() as u8)
            .min()
            .expect("removing every edge cuts t off")
    }

    fn flow_of(edges: &[(u32, u32)], s: u32, t: u32) -> u8 {
        let mut flow = PathFlow::default();
        for &(a, b) in edges {
            flow.add_edge(a, b);
        }
        flow.max_flow(s, t)
    }

    #[test]
    fn the_max_flow_equals_the_brute_force_min_cut_on_random_small_graphs() {
        let mut rng = Rng::new(5);
        for case in 0..400 {
            let nodes = 3 + rng.below(4) as u32;
            let count = rng.below(13) as usize;
            let edges: Vec<(u32, u32)> = (0..count)
                .map(|_| {
                    (
                        rng.below(u64::from(nodes)) as u32,
                        rng.below(u64::from(nodes)) as u32,
                    )
                })
                .filter(|&(a, b)| a != b)
                .collect();
            assert_eq!(
                flow_of(&edges, 0, nodes - 1),
                min_cut(&edges, 0, nodes - 1),
                "case {case}: {edges:?}"
            );
        }
    }

    #[test]
    fn a_cleared_flow_forgets_its_edges() {
        let mut flow = PathFlow::default();
        flow.add_edge(0, 1);
        flow.add_edge(1, 2);
        assert_eq!(flow.max_flow(0, 2), 1);
        flow.clear();
        flow.add_edge(0, 2);
        flow.add_edge(0, 1);
        assert_eq!(flow.max_flow(0, 2), 1);
        assert_eq!(flow.max_flow(1, 2), 0);
    }

    /// The edges of the routes from s to t in layers `0..count`.
    fn route_edges(
        graph: &RoutingGraph,
        layers: &Layers,
        count: usize,
        s: usize,
        t: usize,
    ) -> Vec<(u32, u32)> {
        (0..count)
            .flat_map(|l| layers.path(graph, l, s, t).expect("routed"))
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[0] != t)
            .map(|w| (w[0] as u32, w[1] as u32))
            .collect()
    }

    #[test]
    fn pair_counts_equal_the_brute_force_min_cut_of_the_routes() {
        let lengths = PathLengths::default();
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let layers = searched_layers(&graph, 4, Some(&lengths), 1);
            let n = graph.len();
            let mut flow = PathFlow::default();
            // Every fifth pair keeps the brute force fast.
            for (t, s) in (0..n).flat_map(|t| (0..n).map(move |s| (t, s))).step_by(5) {
                if s == t {
                    continue;
                }
                for count in 1..=layers.count() {
                    let edges = route_edges(&graph, &layers, count, s, t);
                    assert_eq!(
                        pair_disjoint(&graph, &layers, count, s, t, &mut flow),
                        min_cut(&edges, s as u32, t as u32),
                        "{spec}: {s} -> {t}, {count} layers"
                    );
                }
            }
        }
    }

    #[test]
    fn more_layers_never_lower_a_pairs_count() {
        let lengths = PathLengths::default();
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let layers = searched_layers(&graph, 4, Some(&lengths), 2);
            let n = graph.len();
            let mut previous = vec![0u8; n * n];
            for count in 1..=layers.count() {
                let mut disjoint = vec![0u8; n * n];
                count_disjoint(&graph, &layers, count, &mut disjoint);
                for (i, (&now, &before)) in disjoint.iter().zip(&previous).enumerate() {
                    assert!(now >= before, "{spec}: pair {i} with {count} layers");
                    assert!(usize::from(now) <= count, "{spec}: pair {i}");
                }
                previous = disjoint;
            }
        }
    }

    #[test]
    fn pairs_with_disjoint_paths_counts_the_pairs_at_or_above_k() {
        let lengths = PathLengths::default();
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let layers = searched_layers(&graph, 4, Some(&lengths), 1);
            let n = graph.len();
            let mut disjoint = vec![0u8; n * n];
            count_disjoint(&graph, &layers, layers.count(), &mut disjoint);
            let all = (0..n).filter(|&t| graph.endpoints[t] > 0).count() * (n - 1);
            for k in 0..=5u8 {
                let good = (0..n)
                    .filter(|&t| graph.endpoints[t] > 0)
                    .flat_map(|t| (0..n).filter(move |&s| s != t).map(move |s| t * n + s))
                    .filter(|&i| disjoint[i] >= k)
                    .count();
                assert_eq!(
                    pairs_with_disjoint_paths(&graph, &layers, k),
                    (good, all),
                    "{spec} k={k}"
                );
            }
        }
    }
}
