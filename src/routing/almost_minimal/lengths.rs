//! The length rule of a layer under construction: once the path search has set what it could,
//! every switch still without a route must be able to get one within its allowed length from
//! the routes its neighbours already have.
//!
//! The search sets routes pair by pair, and a route set early can leave a later switch with
//! only neighbours whose routes are already too long; completing the layer along the fewest
//! hops ([`Layers::attach`]) would then exceed the bound the deadlock colouring relies on.
//! This repair re-points as few routes as it must, before the layer is completed.

use crate::routing::cable_order::{CableOrder, Shape};
use crate::routing::config::PathLengths;
use crate::routing::disjoint::DISJOINT_TARGET;
use crate::routing::graph::{FAR, RoutingGraph};
use crate::routing::layers::Layers;

/// Makes sure every switch still without a route in layer l can get one within its allowed
/// length. A switch none of whose neighbours' routes leaves room is given a route that fits by
/// re-pointing as few routed switches as possible ([`shorten`]). Routes only get shorter and
/// every path still ends in t, so the layer stays loop-free.
///
/// With a cable `order`, a neighbour has room only if its route also accepts the switch's
/// cable to it, and the repair ([`UnimodalRepair`]) keeps every route of the tree into t
/// unimodal; a switch it cannot serve gets its route from the completion, possibly longer
/// than its lengths allow.
pub(super) fn keep_within_lengths(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    lengths: &PathLengths,
    weights: &mut [u64],
    order: Option<&CableOrder>,
    disjoint: &[u8],
) {
    let Some(order) = order else {
        return keep_within_lengths_any(graph, layers, l, lengths, weights);
    };
    let n = graph.len();
    let mut repair = UnimodalRepair::default();
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        // A repair re-points routes, which changes the shapes switches behind them offer:
        // go round until nothing changes (a few rounds at most: every repair routes one more
        // switch within its length).
        for _ in 0..MAX_REPAIR_ROUNDS {
            layers.shapes(graph, order, l, t, &mut repair.shapes);
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
                        && repair.shapes[w].is_some_and(|shape| shape.accepts(order, e))
                });
                let needy = &disjoint[t * n..(t + 1) * n];
                if !room && repair.run(graph, layers, l, s, t, limit, weights, order, needy) {
                    layers.shapes(graph, order, l, t, &mut repair.shapes);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// Rounds of [`keep_within_lengths`] per destination with a cable order.
const MAX_REPAIR_ROUNDS: usize = 3;

/// [`keep_within_lengths`] without a cable order.
fn keep_within_lengths_any(
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

/// The repair of [`keep_within_lengths`] with a cable order: a switch without a route whose
/// neighbours' routes all lack room or refuse it gets a route of at most its length that is
/// unimodal, re-pointing as few routed switches as possible, with every route into t still
/// unimodal afterwards.
#[derive(Default)]
struct UnimodalRepair {
    /// The shape of every switch's route into the destination.
    shapes: Vec<Option<Shape>>,
    /// Candidate routes, best first when sorted: (re-pointed routed switches, switches
    /// needing disjoint paths whose new route repeats a link of their routes in earlier
    /// layers, link weight, first edge in `edges`, number of edges).
    candidates: Vec<(u32, u32, u64, u32, u32)>,
    edges: Vec<u32>,
    path: Vec<u32>,
    saved: Vec<(u32, u8)>,
}

/// Candidate routes tried in full (each costs a pass over the destination's tree).
const MAX_REPAIR_TRIES: usize = 16;

impl UnimodalRepair {
    /// Gives s a route of at most `limit` hops to t as described on the type; whether it
    /// found one. Routes only get shorter: a routed switch is re-pointed only when its route
    /// is longer than what is left of the budget where the new route meets it.
    // The layer and pair being repaired, with the limit, the weights and the order.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        graph: &RoutingGraph,
        layers: &mut Layers,
        l: usize,
        s: usize,
        t: usize,
        limit: usize,
        weights: &mut [u64],
        order: &CableOrder,
        disjoint: &[u8],
    ) -> bool {
        self.candidates.clear();
        self.edges.clear();
        self.path.clear();
        self.path.push(s as u32);
        let need = Need {
            disjoint,
            remaining: layers.count() - l,
        };
        self.collect(graph, layers, l, s, t, limit, weights, order, need, 0, 0);
        self.candidates.sort_unstable();
        let receivers = u64::from(graph.endpoints[t]);
        for i in 0..self.candidates.len().min(MAX_REPAIR_TRIES) {
            let (changes, _, _, start, len) = self.candidates[i];
            let route = &self.edges[start as usize..(start + len) as usize];
            layers.save(l, t, &mut self.saved);
            // The weights carry every route: move the tree's load with its routes.
            layers.tree_load(graph, l, t, receivers, weights, false);
            let mut x = s;
            for &e in route {
                layers.set(l, x, t, e as usize, 0);
                x = graph.edge_to[e as usize] as usize;
            }
            layers.recompute_hops(graph, l, t);
            let kept = changes == 0 || layers.unimodal_into(graph, order, l, t);
            if !kept {
                layers.restore(l, t, &self.saved);
            }
            layers.tree_load(graph, l, t, receivers, weights, true);
            if kept {
                return true;
            }
        }
        false
    }

    /// Walks from the last switch of `self.path` (at `depth` hops from s) towards t, recording
    /// every route that ends on t or on a routed switch whose route fits what is left and
    /// that is unimodal from s.
    // The search state is the path so far plus its re-pointed switches and weight.
    #[allow(clippy::too_many_arguments)]
    fn collect(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        l: usize,
        x: usize,
        t: usize,
        limit: usize,
        weights: &[u64],
        order: &CableOrder,
        need: Need<'_>,
        changes: u32,
        weight: u64,
    ) {
        let depth = self.path.len() - 1;
        for e in graph.edges(x) {
            let y = graph.edge_to[e] as usize;
            let left = limit - depth - 1;
            if usize::from(graph.dist(y, t)) > left || self.path.contains(&(y as u32)) {
                continue;
            }
            let weight = weight + weights[e];
            let stop_shape = match layers.hops(l, y, t) {
                Some(h) if usize::from(h) <= left => self.shapes[y],
                _ => None,
            };
            self.path.push(y as u32);
            if let Some(shape) = stop_shape {
                // Unimodal from s: the path's cables taken back to front on y's route.
                let unimodal = self.path[..]
                    .windows(2)
                    .rev()
                    .map(|w| {
                        graph
                            .edge_between(w[0] as usize, w[1] as usize)
                            .expect("consecutive switches are cabled")
                    })
                    .try_fold(shape, |shape, c| {
                        Some(shape.extend(order, c)).filter(|s| s.is_valid())
                    })
                    .is_some();
                if unimodal {
                    let start = self.edges.len() as u32;
                    for w in self.path.windows(2) {
                        let c = graph
                            .edge_between(w[0] as usize, w[1] as usize)
                            .expect("consecutive switches are cabled");
                        self.edges.push(c as u32);
                    }
                    let route = &self.edges[start as usize..];
                    let repeating = repeating_switches(graph, layers, l, route, y, t, need);
                    self.candidates.push((
                        changes,
                        repeating,
                        weight,
                        start,
                        self.path.len() as u32 - 1,
                    ));
                }
            }
            if y != t && left > 0 {
                let repointed = u32::from(layers.is_routed(l, y, t));
                self.collect(
                    graph,
                    layers,
                    l,
                    y,
                    t,
                    limit,
                    weights,
                    order,
                    need,
                    changes + repointed,
                    weight,
                );
            }
            self.path.pop();
        }
    }
}

/// Which switches still need disjoint paths towards the destination, as the path search
/// judges them: those short of [`DISJOINT_TARGET`] that the remaining layers can still bring
/// there.
#[derive(Clone, Copy)]
struct Need<'a> {
    /// Edge-disjoint paths of each switch among the earlier layers.
    disjoint: &'a [u8],
    /// Layers still to be routed, this one included.
    remaining: usize,
}

impl Need<'_> {
    fn of(&self, v: usize) -> bool {
        let need = DISJOINT_TARGET.saturating_sub(self.disjoint[v]);
        need > 0 && usize::from(need) <= self.remaining
    }
}

/// How many switches along `route` (edges from its first switch up to `stop`, which keeps its
/// route to t) that still need disjoint paths would repeat a link their routes to t in the
/// layers before l use: they would gain no disjoint path.
fn repeating_switches(
    graph: &RoutingGraph,
    layers: &Layers,
    l: usize,
    route: &[u32],
    stop: usize,
    t: usize,
    need: Need<'_>,
) -> u32 {
    let mut rest: Vec<usize> = route.iter().map(|&e| e as usize).collect();
    let mut x = stop;
    while let Some(e) = (x != t).then(|| layers.next_edge(l, x, t)).flatten() {
        rest.push(e);
        x = graph.edge_to[e] as usize;
    }
    let mut repeating = 0;
    for (i, &first) in route.iter().enumerate() {
        let v = graph.edge_from[first as usize] as usize;
        let repeats = need.of(v)
            && (0..l).any(|earlier| {
                let mut x = v;
                while let Some(e) = (x != t).then(|| layers.next_edge(earlier, x, t)).flatten() {
                    if rest[i..].contains(&e) {
                        return true;
                    }
                    x = graph.edge_to[e] as usize;
                }
                false
            });
        repeating += u32::from(repeats);
    }
    repeating
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
            let mut weights = vec![0u64; graph.edge_count()];
            for t in (0..graph.len())
                .filter(|&t| graph.endpoints[t] > 0)
                .step_by(3)
            {
                let mut layers = winding_layer(&graph, t, &mut rng);
                let disjoint = vec![1u8; graph.len() * graph.len()];
                keep_within_lengths(
                    &graph,
                    &mut layers,
                    1,
                    &lengths,
                    &mut weights,
                    None,
                    &disjoint,
                );
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
