//! One layer's tree into one destination, seen from the destination: each switch's children,
//! the sending endpoints its subtree carries, and the link loads all those trees add up to.
//!
//! [`Layers`] stores next hops, which is what forwarding needs; the passes that move routes
//! after the layers are built ([`rebalance`](super::rebalance), [`polish`](super::polish))
//! need the other direction — which switches follow a switch when it re-points, and how much
//! load moves with them — so both build it here instead of each keeping its own copy.

use super::cable_order::{CableOrder, Shape};
use super::config::{PathLengths, longest_allowed};
use super::graph::RoutingGraph;
use super::layers::Layers;

/// Longest route the passes walk (hops); longer routes are left alone.
pub(super) const MAX_ROUTE: usize = 16;

/// Routes per directed edge: every sending switch's endpoints × the destination's endpoints,
/// along its route, in every layer.
pub(super) fn route_loads(graph: &RoutingGraph, layers: &Layers) -> Vec<u64> {
    prefix_loads(graph, layers, layers.count())
}

/// [`route_loads`] of the layers `0..count`: what the traffic an MPI stack splits evenly over
/// the first `count` layers puts on each link (times `count`).
pub(super) fn prefix_loads(graph: &RoutingGraph, layers: &Layers, count: usize) -> Vec<u64> {
    let n = graph.len();
    let mut loads = vec![0u64; graph.edge_count()];
    let mut tree = Tree::default();
    for l in 0..count.min(layers.count()) {
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

/// The load the routing accepts on a link: 1.10 × the mean of `loads` (the bound the passes
/// and the restarts aim for; rounded down, so a load equal to it is within).
pub(super) fn load_cap(loads: &[u64]) -> u64 {
    loads.iter().sum::<u64>() * 11 / (10 * loads.len().max(1) as u64)
}

/// One layer's tree into one destination: children and sending endpoints per subtree.
#[derive(Default)]
pub(super) struct Tree {
    pub(super) children: Vec<Vec<u32>>,
    /// Sending endpoints of each switch's subtree (itself included).
    pub(super) senders: Vec<u64>,
    /// Breadth-first from the destination (parents before children), as built: a
    /// [`Tree::follow`] does not keep it.
    pub(super) order: Vec<u32>,
    /// Each switch's route shape in a cable order, after [`Tree::build_shapes`] (`None`: not
    /// in the tree).
    pub(super) shapes: Vec<Option<Shape>>,
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

    /// Fills `shapes` for the tree as built, in `order`.
    pub(super) fn build_shapes(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        cables: &CableOrder,
        l: usize,
        t: usize,
    ) {
        self.shapes.clear();
        self.shapes.resize(graph.len(), None);
        self.shapes[t] = Some(Shape::Root);
        for &v in &self.order[1..] {
            let v = v as usize;
            let e = layers.next_edge(l, v, t).expect("in tree");
            let parent = graph.edge_to[e] as usize;
            self.shapes[v] = self.shapes[parent].map(|s| s.extend(cables, e));
        }
    }

    /// Fills `slack` for the tree as built ([`Tree::build`]): per switch, the least room
    /// (allowed hops under `lengths` − hops) over its subtree, so a move that lengthens a
    /// switch's route by more than its slack pushes some route of its subtree over its length.
    pub(super) fn slack(
        &self,
        graph: &RoutingGraph,
        layers: &Layers,
        lengths: Option<&PathLengths>,
        (l, t): (usize, usize),
        slack: &mut Vec<i32>,
    ) {
        slack.clear();
        slack.resize(graph.len(), i32::MAX);
        for &v in self.order[1..].iter().rev() {
            let v = v as usize;
            let h = layers.hops(l, v, t).expect("in tree");
            let limit = longest_allowed(lengths, l, graph.dist(v, t));
            slack[v] = slack[v].min(limit as i32 - i32::from(h));
            let parent = graph.edge_to[layers.next_edge(l, v, t).expect("in tree")] as usize;
            slack[parent] = slack[parent].min(slack[v]);
        }
    }

    /// Whether re-pointing s to `edge` keeps every route of s's subtree unimodal in
    /// `cables`: s's new shape from its new next hop's route, then down the subtree, stopping
    /// where a shape is unchanged (the routes behind it keep theirs). `shapes` must describe
    /// the current routes ([`Tree::build_shapes`]) and the new next hop's route must not pass
    /// s.
    pub(super) fn keeps_unimodal(
        &self,
        graph: &RoutingGraph,
        layers: &Layers,
        cables: &CableOrder,
        (l, s, t): (usize, usize, usize),
        edge: usize,
        stack: &mut Vec<(u32, Shape)>,
    ) -> bool {
        let w = graph.edge_to[edge] as usize;
        let Some(shape) = self.shapes[w].map(|sw| sw.extend(cables, edge)) else {
            return false;
        };
        if !shape.is_valid() {
            return false;
        }
        stack.clear();
        stack.push((s as u32, shape));
        while let Some((x, shape)) = stack.pop() {
            let x = x as usize;
            if self.shapes[x] == Some(shape) {
                continue;
            }
            for &c in &self.children[x] {
                let e = layers.next_edge(l, c as usize, t).expect("child");
                let child = shape.extend(cables, e);
                if !child.is_valid() {
                    return false;
                }
                stack.push((c, child));
            }
        }
        true
    }

    /// Recomputes the shapes of s's subtree after s was re-pointed (its parent's shape
    /// unchanged).
    pub(super) fn reshape(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        cables: &CableOrder,
        (l, s, t): (usize, usize, usize),
    ) {
        let mut members = Vec::new();
        self.subtree(s, &mut members);
        for &v in &members {
            let v = v as usize;
            let e = layers.next_edge(l, v, t).expect("in tree");
            let parent = graph.edge_to[e] as usize;
            self.shapes[v] = self.shapes[parent].map(|sh| sh.extend(cables, e));
        }
    }

    /// Follows a move just made in `layers`: s, which sent `moved` endpoints along the route
    /// `old` (its edges), now sends them along `new` (its edges, the new next hop first). The
    /// children, senders and (with `cables`) shapes end as [`Tree::build`] and
    /// [`Tree::build_shapes`] would make them — children in switch order — without walking
    /// the switches the move did not touch.
    pub(super) fn follow(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        cables: Option<&CableOrder>,
        (l, s, t): (usize, usize, usize),
        (old, new): (&[u32], &[u32]),
    ) {
        let moved = self.senders[s];
        for &e in old {
            self.senders[graph.edge_to[e as usize] as usize] -= moved;
        }
        for &e in new {
            self.senders[graph.edge_to[e as usize] as usize] += moved;
        }
        let old_parent = graph.edge_to[old[0] as usize] as usize;
        let siblings = &mut self.children[old_parent];
        siblings.retain(|&c| c as usize != s);
        let new_parent = &mut self.children[graph.edge_to[new[0] as usize] as usize];
        let at = new_parent.partition_point(|&c| (c as usize) < s);
        new_parent.insert(at, s as u32);
        if let Some(cables) = cables {
            self.reshape(graph, layers, cables, (l, s, t));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::config::PathLengths;
    use crate::routing::fixtures::{SMALL_FABRICS, graph, searched_layers};

    fn cases() -> impl Iterator<Item = (&'static str, RoutingGraph, Layers)> {
        SMALL_FABRICS.into_iter().map(|spec| {
            let graph = graph(spec);
            let layers = searched_layers(&graph, 3, Some(&PathLengths::default()), 1);
            (spec, graph, layers)
        })
    }

    #[test]
    fn every_switch_sends_its_subtree_through_its_parent() {
        for (spec, graph, layers) in cases() {
            let n = graph.len();
            let mut tree = Tree::default();
            for (l, t) in (0..layers.count()).flat_map(|l| (0..n).map(move |t| (l, t))) {
                tree.build(&graph, &layers, l, t);
                let mut order = tree.order.clone();
                order.sort_unstable();
                assert_eq!(
                    order,
                    (0..n as u32).collect::<Vec<_>>(),
                    "{spec}: every switch"
                );
                for v in 0..n {
                    let below: u64 = tree.children[v]
                        .iter()
                        .map(|&c| tree.senders[c as usize])
                        .sum();
                    assert_eq!(
                        tree.senders[v],
                        u64::from(graph.endpoints[v]) + below,
                        "{spec}: layer {l}, t {t}, switch {v}"
                    );
                }
                let position = |v: u32| tree.order.iter().position(|&x| x == v);
                for v in (0..n).filter(|&v| v != t) {
                    let parent = graph.edge_to[layers.next_edge(l, v, t).unwrap()];
                    assert!(
                        position(parent) < position(v as u32),
                        "{spec}: parents first"
                    );
                }
            }
        }
    }

    #[test]
    fn a_subtree_holds_exactly_the_switches_whose_route_passes_its_root() {
        for (spec, graph, layers) in cases() {
            let n = graph.len();
            let mut tree = Tree::default();
            let mut members = Vec::new();
            for t in (0..n).step_by(3) {
                tree.build(&graph, &layers, 1, t);
                for s in 0..n {
                    tree.subtree(s, &mut members);
                    assert_eq!(members[0] as usize, s, "{spec}: root first");
                    let mut got = members.clone();
                    got.sort_unstable();
                    let want: Vec<u32> = (0..n)
                        .filter(|&v| layers.passes(&graph, 1, v, t, s))
                        .map(|v| v as u32)
                        .collect();
                    assert_eq!(got, want, "{spec}: subtree of {s} into {t}");
                }
            }
        }
    }

    #[test]
    fn walk_writes_the_route_hop_by_hop() {
        for (spec, graph, layers) in cases() {
            let n = graph.len();
            let mut out = [0u32; MAX_ROUTE];
            for (l, t, s) in (0..layers.count())
                .flat_map(|l| (0..n).flat_map(move |t| (0..n).map(move |s| (l, t, s))))
            {
                let len = walk(&graph, &layers, l, s, t, &mut out);
                let path = layers.path(&graph, l, s, t).unwrap();
                assert_eq!(len, path.len() - 1, "{spec}");
                for (k, &e) in out[..len].iter().enumerate() {
                    assert_eq!(graph.edge_between(path[k], path[k + 1]), Some(e as usize));
                }
            }
        }
    }

    #[test]
    fn route_loads_count_every_route_on_every_link_it_crosses() {
        for (spec, graph, layers) in cases() {
            let n = graph.len();
            let mut want = vec![0u64; graph.edge_count()];
            for l in 0..layers.count() {
                for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                    for s in (0..n).filter(|&s| s != t) {
                        let path = layers.path(&graph, l, s, t).unwrap();
                        let routes = u64::from(graph.endpoints[s] * graph.endpoints[t]);
                        for w in path.windows(2) {
                            want[graph.edge_between(w[0], w[1]).unwrap()] += routes;
                        }
                    }
                }
            }
            assert_eq!(route_loads(&graph, &layers), want, "{spec}");
        }
    }
}
