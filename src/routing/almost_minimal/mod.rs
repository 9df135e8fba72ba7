//! One almost-minimal layer: every ordered switch pair (s, t), t with endpoints, gets one path
//! at least one hop longer than their distance d and at most max(d + 1, 3) hops by default
//! (the lengths of [`PathLengths`]), consistent with what the layer already holds.
//!
//! * Pairs are taken in priority order: fewest non-minimal paths obtained so far first, then
//!   the closest pairs, random within a level. The searches of a [`batch`] of pairs run in
//!   parallel and build the layer the searches in sequence would.
//! * Each pair's path is the least-cost one of [`path`]: it least repeats, for every switch
//!   whose route it sets, the links that switch's routes in earlier layers use (so every
//!   switch gains disjoint paths, not only s); then it least overloads t's entry ([`entry`]);
//!   then it has the least total link weight. A path's routes (sending endpoints × receiving
//!   endpoints) are added to its links' weights, so later paths avoid loaded links.
//! * A non-minimal path that overloads t's entry waits for a second pass, where the pair may
//!   route shorter and leave the room to others.
//! * Finally every switch still without a route is left able to get one within its length
//!   ([`lengths`]); the driver completes the layer along the fewest hops.
//!
//! The files below this one import nothing from it: [`entry`], [`lengths`], [`near`] and
//! [`earlier`] stand alone, [`path`] reads [`entry`]'s view of the destination and the look-ups
//! of [`near`] and [`earlier`], [`batch`] runs [`path`]'s searches.

mod batch;
mod earlier;
mod entry;
mod lengths;
mod near;
mod path;

use batch::Batch;
use entry::{TreeEntry, entry_cap, open_room};
use lengths::keep_within_lengths;
use path::{Context, Found, LayerFixed, Search};

use super::cable_order::CableOrder;
use super::config::PathLengths;
use super::graph::{FAR, RoutingGraph};
use super::layers::Layers;
use crate::rng::Rng;

/// What the layers built so far give each pair, indexed `t * n + s`.
pub(super) struct LayerState<'a> {
    /// Non-minimal paths obtained (the priority level).
    pub(super) levels: &'a mut [u8],
    /// Edge-disjoint paths among the earlier layers' routes.
    pub(super) disjoint: &'a [u8],
    /// The order every route must be unimodal in ([`Turns::Unimodal`](super::config::Turns)),
    /// or `None`: any turns.
    pub(super) order: Option<&'a CableOrder>,
}

/// Routes layer l almost-minimally (see the module documentation), leaving the switches it
/// could not route able to get a route within their lengths.
pub(super) fn almost_minimal_layer(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    lengths: &PathLengths,
    weights: &mut [u64],
    state: LayerState<'_>,
    rng: &mut Rng,
) {
    let LayerState {
        levels,
        disjoint,
        order,
    } = state;
    let n = graph.len();
    // Priority: fewest non-minimal paths so far; then the closest pairs, which have the fewest
    // detours and lose them when another pair's path routes them minimally first; then random.
    let mut pairs: Vec<(u8, u8, u32, u32, u32)> = Vec::with_capacity(n * n);
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t && graph.dist(s, t) != FAR) {
            pairs.push((
                levels[t * n + s],
                graph.dist(s, t),
                rng.next_u64() as u32,
                s as u32,
                t as u32,
            ));
        }
    }
    pairs.sort_unstable();
    // The most senders one link into each destination may take.
    let caps: Vec<u32> = (0..n)
        .map(|t| entry_cap(graph, t, layers.count(), lengths))
        .collect();
    let mut build = LayerBuild {
        graph,
        layers: &mut *layers,
        l,
        weights: &mut *weights,
        levels,
        entry: vec![0u32; n * n],
        unrouted: (0..n)
            .map(|t| graph.endpoints.iter().sum::<u32>() - graph.endpoints[t])
            .collect(),
    };
    // First pass: almost-minimal paths. Second pass, for the pairs still without a route: the
    // best path of any length up to the maximum, while the layer still leaves room for one,
    // rather than whatever is left when the layer is completed.
    let started = std::time::Instant::now();
    let fixed = LayerFixed::new(graph, build.layers, l, order);
    let mut batch = Batch::new(n);
    let mut scratch = Search::default();
    for fallback in [false, true] {
        // The search of one pair against the layer as `build` holds it.
        let search = |build: &LayerBuild<'_>, search: &mut Search, s: usize, t: usize| {
            let d = graph.dist(s, t);
            let allowed = lengths.range(d);
            let shortest = if fallback {
                usize::from(d)
            } else {
                *allowed.start()
            };
            search.reset(shortest, *allowed.end());
            let entry = &build.entry[t * n..(t + 1) * n];
            let tree = TreeEntry {
                disjoint: &disjoint[t * n..(t + 1) * n],
                entry,
                cap: caps[t],
                open: open_room(graph, build.layers, l, t, entry, caps[t]),
                unrouted: build.unrouted[t],
            };
            search.run(
                &Context::new(graph, build.layers, l, t, build.weights, tree, &fixed),
                s,
            );
            search.found()
        };
        let mut next = 0;
        while next < pairs.len() {
            next = batch.fill(&pairs, next, |s, t| build.layers.is_routed(l, s, t));
            let found = batch.search(|scratch, s, t| search(&build, scratch, s, t));
            for (i, mut found) in found.into_iter().enumerate() {
                let (s, t) = batch.pairs[i];
                if batch.is_stale(t, found.as_ref(), |found| build.path_weight(t, found)) {
                    if build.layers.is_routed(l, s, t) {
                        continue;
                    }
                    found = search(&build, &mut scratch, s, t);
                }
                // A non-minimal path that overloads t's entry waits for the second pass, where
                // the pair may take a shorter path that leaves room (a neighbour of t straight
                // in).
                if let Some(found) = found
                    && (fallback || found.overload == 0)
                {
                    build.insert(s, t, found.edges());
                    batch.laid_into(t);
                }
            }
        }
    }
    log::debug!("layer {l} searched in {:.2?}", started.elapsed());
    let started = std::time::Instant::now();
    keep_within_lengths(graph, layers, l, lengths, weights, order, disjoint);
    log::debug!("layer {l} kept within lengths in {:.2?}", started.elapsed());
}

/// The layer under construction and the running totals every path laid in it updates.
struct LayerBuild<'a> {
    graph: &'a RoutingGraph,
    layers: &'a mut Layers,
    l: usize,
    /// Link weights, shared by all layers.
    weights: &'a mut [u64],
    /// Non-minimal paths each pair obtained so far (the priority level), `t * n + s`.
    levels: &'a mut [u8],
    /// Senders entering each destination t through each of its links in this layer, indexed
    /// `t * n + y` by the neighbour y the link comes from.
    entry: Vec<u32>,
    /// Senders still without a route towards each destination in this layer.
    unrouted: Vec<u32>,
}

impl LayerBuild<'_> {
    /// The summed weight of a found path's links into t now: its own edges, then the route
    /// of the switch it ends on.
    fn path_weight(&self, t: usize, found: &Found) -> u64 {
        let edges = found.edges();
        let own: u64 = edges.iter().map(|&e| self.weights[e as usize]).sum();
        let end = self.graph.edge_to[*edges.last().expect("non-empty path") as usize] as usize;
        own + self
            .layers
            .chain_weight(self.graph, self.l, end, t, self.weights)
    }

    /// Sets the next hops of the new part of a found path (`edges`, from s up to the first
    /// switch already routed), raises the priority level of the pairs that got a non-minimal
    /// path, adds the path's routes to the link weights and to t's entry, and counts its
    /// switches as routed.
    fn insert(&mut self, s: usize, t: usize, edges: &[u32]) {
        let (graph, l) = (self.graph, self.l);
        let n = graph.len();
        let end = graph.edge_to[*edges.last().expect("non-empty path") as usize] as usize;
        let tail = usize::from(
            self.layers
                .hops(l, end, t)
                .expect("path ends on a routed switch"),
        );
        let receivers = u64::from(graph.endpoints[t]);
        let mut senders = 0u64;
        let mut v = s;
        for (j, &e) in edges.iter().enumerate() {
            let hops = (edges.len() - j + tail) as u8;
            debug_assert_eq!(self.layers.hops(l, v, t), None);
            self.layers.set(l, v, t, e as usize, hops);
            if hops > graph.dist(v, t) {
                self.levels[t * n + v] = self.levels[t * n + v].saturating_add(1);
            }
            senders += u64::from(graph.endpoints[v]);
            self.weights[e as usize] += senders * receivers;
            v = graph.edge_to[e as usize] as usize;
        }
        self.layers
            .load_chain(graph, l, end, t, senders * receivers, self.weights);
        let (mut last, mut x) = (
            graph.edge_from[*edges.last().expect("non-empty") as usize],
            end,
        );
        while x != t {
            last = x as u32;
            x = graph.edge_to[self.layers.next_edge(l, x, t).expect("routed")] as usize;
        }
        self.entry[t * n + last as usize] += senders as u32;
        self.unrouted[t] -= senders as u32;
    }
}

#[cfg(test)]
mod tests {
    use crate::routing::config::PathLengths;
    use crate::routing::fixtures::{
        SMALL_FABRICS, assert_valid, graph, same_layers, searched_layers,
    };

    #[test]
    fn searched_layers_are_loop_free_trees_within_their_lengths() {
        for lengths in [
            PathLengths::default(),
            PathLengths {
                min_extra_hops: 1,
                max_hops: 4,
            },
        ] {
            for spec in SMALL_FABRICS {
                let graph = graph(spec);
                for count in [2, 4] {
                    let layers = searched_layers(&graph, count, Some(&lengths), 1);
                    assert_valid(
                        &graph,
                        &layers,
                        Some(&lengths),
                        &format!("{spec} L={count}"),
                    );
                }
            }
        }
    }

    #[test]
    fn the_search_is_deterministic_per_seed() {
        let lengths = PathLengths::default();
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            for seed in [1, 7] {
                let a = searched_layers(&graph, 3, Some(&lengths), seed);
                let b = searched_layers(&graph, 3, Some(&lengths), seed);
                assert!(same_layers(&graph, &a, &b), "{spec} seed {seed}");
            }
        }
    }
}
