//! The length rule of a layer under construction: once the path search has set what it could,
//! every switch still without a route must be able to get one within its allowed length from
//! the routes its neighbours already have.
//!
//! The search sets routes pair by pair, and a route set early can leave a later switch with
//! only neighbours whose routes are already too long; completing the layer along the fewest
//! hops ([`Layers::attach`]) would then exceed the bound the deadlock colouring relies on.
//! This repair re-points as few routes as it must, before the layer is completed.

use crate::routing::cable_order::CableOrder;
use crate::routing::config::PathLengths;
use crate::routing::graph::{FAR, RoutingGraph};
use crate::routing::layers::Layers;

/// Makes sure every switch still without a route in layer l can get one within its allowed
/// length. A switch none of whose neighbours' routes leaves room is given a route that fits by
/// re-pointing as few routed switches as possible ([`shorten`]). Routes only get shorter and
/// every path still ends in t, so the layer stays loop-free.
///
/// With a cable `order`, a repair that would leave any route of the tree into t a valley is
/// undone (the repair re-points switches with subtrees): that switch then gets its route
/// from the completion, possibly longer than its lengths allow.
pub(super) fn keep_within_lengths(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    lengths: &PathLengths,
    weights: &[u64],
    order: Option<&CableOrder>,
) {
    let n = graph.len();
    let mut saved = Vec::new();
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        let mut changed = false;
        for s in 0..n {
            let d = graph.dist(s, t);
            if s == t || d == FAR || layers.is_routed(l, s, t) {
                continue;
            }
            let limit = *lengths.range(d).end();
            let room = graph.edges(s).any(|e| {
                let w = graph.edge_to[e] as usize;
                layers.hops(l, w, t).is_some_and(|h| usize::from(h) < limit)
            });
            if !room {
                let Some(order) = order else {
                    shorten(graph, layers, l, s, t, limit, weights);
                    changed = true;
                    continue;
                };
                layers.save(l, t, &mut saved);
                shorten(graph, layers, l, s, t, limit, weights);
                layers.recompute_hops(graph, l, t);
                if !layers.unimodal_into(graph, order, l, t) {
                    layers.restore(l, t, &saved);
                }
            }
        }
        if changed {
            layers.recompute_hops(graph, l, t);
        }
    }
}

/// Gives v a route of at most `budget` hops to t, changing as few routes as possible: keep v's
/// route if it fits, else point v at the neighbour whose own repair changes least (then the
/// least loaded link). Hop counts are left stale for [`Layers::recompute_hops`].
fn shorten(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    v: usize,
    t: usize,
    budget: usize,
    weights: &[u64],
) {
    if v == t
        || layers
            .hops(l, v, t)
            .is_some_and(|h| usize::from(h) <= budget)
    {
        return;
    }
    let e = graph
        .edges(v)
        .filter(|&e| usize::from(graph.dist(graph.edge_to[e] as usize, t)) < budget)
        .min_by_key(|&e| {
            (
                changes_needed(graph, layers, l, graph.edge_to[e] as usize, t, budget - 1),
                weights[e],
                e,
            )
        })
        .expect("a switch within budget has a neighbour closer to t");
    layers.set(l, v, t, e, budget as u8);
    shorten(
        graph,
        layers,
        l,
        graph.edge_to[e] as usize,
        t,
        budget - 1,
        weights,
    );
}

/// How many routes [`shorten`] would change to give v a route of at most `budget` hops.
fn changes_needed(
    graph: &RoutingGraph,
    layers: &Layers,
    l: usize,
    v: usize,
    t: usize,
    budget: usize,
) -> usize {
    if v == t
        || layers
            .hops(l, v, t)
            .is_some_and(|h| usize::from(h) <= budget)
    {
        return 0;
    }
    1 + graph
        .edges(v)
        .map(|e| graph.edge_to[e] as usize)
        .filter(|&x| usize::from(graph.dist(x, t)) < budget)
        .map(|x| changes_needed(graph, layers, l, x, t, budget - 1))
        .min()
        .unwrap_or(usize::MAX / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::routing::fixtures::{SMALL_FABRICS, graph};

    /// Layer 1 into t partly routed along a random depth-first tree into t (long, winding
    /// routes), each routed switch's whole route routed too.
    fn winding_layer(graph: &RoutingGraph, t: usize, rng: &mut Rng) -> Layers {
        let n = graph.len();
        let mut layers = Layers::new(n, 2);
        let mut parent = vec![usize::MAX; n];
        let mut stack = vec![t];
        parent[t] = t;
        while let Some(v) = stack.pop() {
            let mut edges: Vec<usize> = graph.edges(v).collect();
            rng.shuffle(&mut edges);
            for e in edges {
                let w = graph.edge_to[e] as usize;
                if parent[w] == usize::MAX {
                    parent[w] = v;
                    stack.push(w);
                }
            }
        }
        for s in (0..n).filter(|&s| s != t && rng.below(3) == 0) {
            let mut v = s;
            while v != t && !layers.is_routed(1, v, t) {
                let e = graph.edge_between(v, parent[v]).expect("tree edge");
                layers.set(1, v, t, e, 0);
                v = parent[v];
            }
        }
        layers.recompute_hops(graph, 1, t);
        layers
    }

    #[test]
    fn every_unrouted_switch_is_left_a_neighbour_with_room() {
        let lengths = PathLengths::default();
        let mut rng = Rng::new(3);
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let weights = vec![0u64; graph.edge_count()];
            for t in (0..graph.len())
                .filter(|&t| graph.endpoints[t] > 0)
                .step_by(3)
            {
                let mut layers = winding_layer(&graph, t, &mut rng);
                keep_within_lengths(&graph, &mut layers, 1, &lengths, &weights, None);
                for s in (0..graph.len()).filter(|&s| !layers.is_routed(1, s, t)) {
                    let limit = *lengths.range(graph.dist(s, t)).end();
                    let room = graph.edges(s).any(|e| {
                        let w = graph.edge_to[e] as usize;
                        layers.hops(1, w, t).is_some_and(|h| usize::from(h) < limit)
                    });
                    assert!(room, "{spec}: {s} -> {t} has no neighbour with room");
                }
                for s in (0..graph.len()).filter(|&s| s != t && layers.is_routed(1, s, t)) {
                    let path = layers.path(&graph, 1, s, t).expect("loop-free");
                    assert_eq!(layers.hops(1, s, t), Some((path.len() - 1) as u8), "{spec}");
                }
            }
        }
    }
}
