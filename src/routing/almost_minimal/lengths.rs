//! The length rule of a layer under construction: once the path search has set what it could,
//! every switch still without a route must be able to get one within its allowed length from
//! the routes its neighbours already have.
//!
//! The search sets routes pair by pair, and a route set early can leave a later switch with
//! only neighbours whose routes are already too long; completing the layer along the fewest
//! hops ([`Layers::attach`]) would then exceed the bound the deadlock colouring relies on.
//! This repair re-points as few routes as it must, before the layer is completed.

use crate::routing::config::PathLengths;
use crate::routing::graph::{FAR, RoutingGraph};
use crate::routing::layers::Layers;

/// Makes sure every switch still without a route in layer l can get one within its allowed
/// length. A switch none of whose neighbours' routes leaves room is given a route that fits by
/// re-pointing as few routed switches as possible ([`shorten`]). Routes only get shorter and
/// every path still ends in t, so the layer stays loop-free.
pub(super) fn keep_within_lengths(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    lengths: &PathLengths,
    weights: &[u64],
) {
    let n = graph.len();
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
                shorten(graph, layers, l, s, t, limit, weights);
                changed = true;
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
