//! Layered multipath routing (the Slim Fly paper, §4 and Appendix B), and the baselines it is
//! compared with.
//!
//! * Layer 0 is minimal and balanced: per destination, each switch takes the least loaded of its
//!   shortest next hops ([`Layers::attach`]).
//! * Every further layer gives each ordered switch pair (s, t) one *almost-minimal* path — at
//!   least one hop longer than their distance d and at most max(d + 1, 3) hops by default, so
//!   adjacent switches may take a 2- or 3-hop detour (as the reference engine's
//!   `lnmp_max_path_len 3`) — consistent with what the layer already holds
//!   (a switch that already has a next hop towards t in this layer forces it). Among those, the
//!   path that least repeats, for every switch whose route it sets, the links that switch's
//!   routes in earlier layers use (so every switch gains disjoint paths, not only s), then of
//!   least total link weight. Pairs are taken in priority order: fewest non-minimal paths
//!   obtained so far first, random within a level. A path's routes (sending endpoints ×
//!   receiving endpoints) are added to its links' weights, so later paths avoid loaded links.
//!   Pairs left without such a path get the shortest path consistent with the layer.
//! * Right after the damage to switches that need a disjoint path in every remaining layer, a
//!   path is judged by how far it overloads t's entry: every route into t ends on one of t's
//!   links, and without a limit the damage term lets one or two of t's neighbours carry
//!   everyone ([`entry_cap_per_mille`]). A non-minimal path that overloads waits for the second
//!   pass, where the pair may route shorter and leave the room to others.
//! * When all layers are built, [`rebalance`] moves subtrees between parents where that evens
//!   the link loads, keeping every layer loop-free, within its lengths, and every switch's
//!   disjoint paths (up to three).
//! * On fabrics of up to a million routes per layer set, [`polish`] then searches locally
//!   within a bounded budget: pairs lacking disjoint paths first (single moves, or a whole new
//!   path laid in one layer and the pairs it costs repaired), then the link loads sorted from
//!   the largest down, so the maximum rather than the sum of squares; seeded kicks get it out
//!   of local minima and the best state seen is kept.
//!
//! Link weights are shared by all layers and start with layer 0's load, so the layers together
//! stay balanced (the reference implementation balances layer 0 separately, which leaves the
//! sum of the layers uneven).

use std::ops::RangeInclusive;

use super::graph::{FAR, RoutingGraph};
use super::layers::{AttachScratch, Layers};
use super::polish::polish;
use super::rebalance::rebalance;
use crate::rng::Rng;

/// Longest path (in hops) the layered search considers.
const MAX_SEARCH_HOPS: usize = 8;

/// How to route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Algorithm {
    /// Every layer minimal and balanced (what OpenSM's minhop/SSSP compute), for comparison.
    Minimal,
    /// Layer 0 minimal; further layers almost-minimal.
    Layered(PathLengths),
    /// Random uniform edge selection: layer 0 minimal; each further layer keeps a random
    /// fraction of the links (in per mille) and routes shortest paths inside it.
    Rues {
        /// Fraction of links kept per layer, in per mille (e.g. 600 = 60 %).
        keep_per_mille: u32,
    },
}

/// The lengths a non-minimal layer path of a pair at distance d may have: from
/// d + `min_extra_hops` to max(d + `min_extra_hops`, `max_hops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLengths {
    /// Hops beyond the distance a path needs at least (1 = almost-minimal).
    pub min_extra_hops: u8,
    /// Longest path allowed when d + `min_extra_hops` is shorter.
    pub max_hops: u8,
}

impl PathLengths {
    /// The allowed lengths for a pair at distance d.
    pub fn range(&self, d: u8) -> RangeInclusive<usize> {
        let shortest = usize::from(d.saturating_add(self.min_extra_hops));
        shortest
            ..=shortest
                .max(usize::from(self.max_hops))
                .min(MAX_SEARCH_HOPS)
    }
}

impl Default for PathLengths {
    fn default() -> Self {
        Self {
            min_extra_hops: 1,
            max_hops: 3,
        }
    }
}

/// Routing parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingConfig {
    /// Number of layers (2^LMC).
    pub layers: usize,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Seed for the random choices (pair order within a priority level, destination order).
    pub seed: u64,
}

/// Routes every layer of `graph`.
///
/// # Complexity
/// Layer 0: O(n·(n + m)). Each layered layer: O(n²) pair searches, each bounded by the
/// search depth and pruned by distance and weight (about k'² steps for one extra hop).
pub fn route(graph: &RoutingGraph, config: &RoutingConfig) -> Layers {
    let n = graph.len();
    let mut layers = Layers::new(n, config.layers.max(1));
    let mut weights = vec![0u64; graph.edge_count()];
    let mut rng = Rng::new(config.seed);
    let mut scratch = AttachScratch::default();
    let mut destinations: Vec<usize> = (0..n).collect();
    let mut complete = |layers: &mut Layers,
                        l: usize,
                        weights: &mut [u64],
                        rng: &mut Rng,
                        kept: Option<&[bool]>| {
        rng.shuffle(&mut destinations);
        for &t in &destinations {
            if let Some(kept) = kept {
                layers.attach(graph, l, t, weights, |e| kept[e], &mut scratch);
            }
            layers.attach(graph, l, t, weights, |_| true, &mut scratch);
        }
    };
    complete(&mut layers, 0, &mut weights, &mut rng, None);
    let mut levels = vec![0u8; n * n];
    let mut disjoint = vec![1u8; n * n];
    for l in 1..layers.count() {
        match &config.algorithm {
            Algorithm::Minimal => complete(&mut layers, l, &mut weights, &mut rng, None),
            Algorithm::Layered(lengths) => {
                let state = LayerState {
                    levels: &mut levels,
                    disjoint: &disjoint,
                };
                almost_minimal_layer(
                    graph,
                    &mut layers,
                    l,
                    lengths,
                    &mut weights,
                    state,
                    &mut rng,
                );
                keep_within_lengths(graph, &mut layers, l, lengths, &weights);
                complete(&mut layers, l, &mut weights, &mut rng, None);
                if l + 1 < layers.count() {
                    count_disjoint(graph, &layers, l + 1, &mut disjoint);
                }
            }
            Algorithm::Rues { keep_per_mille } => {
                let kept = sample_links(graph, *keep_per_mille, &mut rng);
                complete(&mut layers, l, &mut weights, &mut rng, Some(&kept));
            }
        }
    }
    if let Algorithm::Layered(lengths) = &config.algorithm {
        let (loads, disjoint) = rebalance(graph, &mut layers, Some(lengths), REBALANCE_ROUNDS);
        let budget = polish_budget(graph, layers.count());
        if budget > 0 {
            polish(
                graph,
                &mut layers,
                Some(lengths),
                loads,
                disjoint,
                config.seed,
                budget,
            );
        }
    }
    layers
}

/// Rounds of [`rebalance`]: each round tries to move every switch's subtree once. The first
/// rounds make nearly all the moves (Slim Fly q = 19, 4 layers: 730k, 270k, 17k, 1.4k); four
/// keep the pass under a second there.
const REBALANCE_ROUNDS: usize = 4;

/// Work budget of [`polish`] (move evaluations, about 0.1 µs each): [`POLISH_WORK`], or none
/// on fabrics with more than [`POLISH_MAX_ENTRIES`] routes (layers × switches²), which the
/// earlier passes already balance and where the path search leaves no time to spare.
fn polish_budget(graph: &RoutingGraph, layers: usize) -> u64 {
    let n = graph.len() as u64;
    if layers as u64 * n * n > POLISH_MAX_ENTRIES {
        return 0;
    }
    POLISH_WORK
}

/// Largest fabric [`polish`] runs on: layers × switches² (Slim Fly q = 13 with 8 layers: 914k).
const POLISH_MAX_ENTRIES: u64 = 1_000_000;

/// The work [`polish`] spends (about 0.2 s).
const POLISH_WORK: u64 = 2_000_000;

/// A random subset of the links, each kept with probability `keep_per_mille`/1000; both
/// directions of a link share the decision.
fn sample_links(graph: &RoutingGraph, keep_per_mille: u32, rng: &mut Rng) -> Vec<bool> {
    let mut kept = vec![false; graph.edge_count()];
    for e in 0..graph.edge_count() {
        let (s, t) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
        if s < t {
            let keep = rng.below(1000) < u64::from(keep_per_mille);
            kept[e] = keep;
            kept[graph.edge_between(t, s).expect("symmetric")] = keep;
        }
    }
    kept
}

/// Makes sure every switch still without a route in layer l can get one within its allowed
/// length. A switch none of whose neighbours' routes leaves room is given a route that fits by
/// re-pointing as few routed switches as possible ([`shorten`]). Routes only get shorter and
/// every path still ends in t, so the layer stays loop-free.
fn keep_within_lengths(
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

/// Edge-disjoint paths a switch needs towards a destination: the FatPaths finding that three
/// disjoint paths per switch pair are what low-diameter networks need to perform well.
pub(super) const DISJOINT_TARGET: u8 = 3;

/// What the layers built so far give each pair, indexed `t * n + s`.
struct LayerState<'a> {
    /// Non-minimal paths obtained (the priority level).
    levels: &'a mut [u8],
    /// Edge-disjoint paths among the earlier layers' routes.
    disjoint: &'a [u8],
}

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

/// One almost-minimal layer: every ordered pair (s, t), t with endpoints, in priority order.
fn almost_minimal_layer(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    lengths: &PathLengths,
    weights: &mut [u64],
    state: LayerState<'_>,
    rng: &mut Rng,
) {
    let LayerState { levels, disjoint } = state;
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
    // Senders entering each destination t through each of its links in this layer, indexed
    // `t * n + y` by the neighbour y the link comes from, and the most one link may take.
    let mut entry = vec![0u32; n * n];
    let caps: Vec<u32> = (0..n)
        .map(|t| entry_cap(graph, t, layers.count(), lengths))
        .collect();
    // Senders still without a route towards each destination in this layer.
    let mut unrouted: Vec<u32> = (0..n)
        .map(|t| graph.endpoints.iter().sum::<u32>() - graph.endpoints[t])
        .collect();
    let mut search = Search::default();
    // First pass: almost-minimal paths. Second pass, for the pairs still without a route: the
    // best path of any length up to the maximum, while the layer still leaves room for one,
    // rather than whatever is left when the layer is completed.
    for fallback in [false, true] {
        for &(_, _, _, s, t) in &pairs {
            let (s, t) = (s as usize, t as usize);
            if layers.is_routed(l, s, t) {
                continue;
            }
            let d = graph.dist(s, t);
            let allowed = lengths.range(d);
            let shortest = if fallback {
                usize::from(d)
            } else {
                *allowed.start()
            };
            search.reset(shortest, *allowed.end());
            let tree = TreeEntry {
                disjoint: &disjoint[t * n..(t + 1) * n],
                entry: &entry[t * n..(t + 1) * n],
                cap: caps[t],
                open: open_room(graph, layers, l, t, &entry[t * n..(t + 1) * n], caps[t]),
                unrouted: unrouted[t],
            };
            search.run(graph, layers, l, s, t, weights, tree);
            // A non-minimal path that overloads t's entry waits for the second pass, where
            // the pair may take a shorter path that leaves room (a neighbour of t straight in).
            if search.found() && (fallback || search.best_cost.1 == 0) {
                let path = &search.best[..search.best_len];
                let entry = &mut entry[t * n..(t + 1) * n];
                insert(graph, layers, l, s, t, path, weights, levels, entry);
                unrouted[t] -= path
                    .iter()
                    .map(|&e| graph.endpoints[graph.edge_from[e as usize] as usize])
                    .sum::<u32>();
            }
        }
    }
}

/// The most senders one link into t may carry in a non-minimal layer's tree into t, in units of
/// the share every link into t would carry if all carried the same, per mille, for `layers`
/// layers.
///
/// Every route into t ends on one of t's links, but in a non-minimal layer a neighbour of t
/// that routes straight to t repeats its layer-0 link, so the diversity damage alone lets one
/// or two neighbours carry everyone (Slim Fly q = 7, 2 layers: one link took all 97 switches'
/// routes, 4× the mean load). Capping each link makes more neighbours route straight; the
/// damage term chooses which, so over the layers a different few take the turn.
///
/// How tight: with 2 layers three disjoint paths are out of reach anyway and with 8 there are
/// layers to spare, so 2.5× the even share. With 4 layers a neighbour of t keeps three disjoint
/// paths only if it routes straight in at most one of the three non-minimal layers, so the cap
/// is looser (6×); and where no neighbour of t has a detour within the allowed lengths (girth
/// 5: Slim Fly q = 5) every link into t stays open anyway and a cap would only trade away
/// disjoint paths of the switches behind them, so there is none. Measured on Slim Fly
/// q ∈ {4, 5, 7, 8, 9}; see BENCHMARKS.md.
fn entry_cap_per_mille(
    graph: &RoutingGraph,
    t: usize,
    layers: usize,
    lengths: &PathLengths,
) -> Option<u64> {
    match layers {
        0..=2 | 8.. => Some(2500),
        _ if neighbours_can_detour(graph, t, lengths) => Some(6000),
        _ => None,
    }
}

/// Whether some neighbour y of t has a path to t other than the link y → t within the lengths
/// allowed for adjacent switches (2 or 3 hops by default).
fn neighbours_can_detour(graph: &RoutingGraph, t: usize, lengths: &PathLengths) -> bool {
    let longest = *lengths.range(1).end();
    let next_to_t = |v: usize| graph.edge_between(v, t).is_some();
    graph.edges(t).map(|e| graph.edge_to[e] as usize).any(|y| {
        graph.edges(y).map(|e| graph.edge_to[e] as usize).any(|a| {
            a != t
                && ((longest >= 2 && next_to_t(a))
                    || (longest >= 3
                        && graph
                            .edges(a)
                            .map(|e| graph.edge_to[e] as usize)
                            .any(|b| b != y && b != t && next_to_t(b))))
        })
    })
}

/// A cap no link reaches (sums of a few caps must not overflow).
const NO_CAP: u32 = u32::MAX / 64;

/// The cap on the senders one link into t carries in a non-minimal layer
/// ([`entry_cap_per_mille`] of the even share).
fn entry_cap(graph: &RoutingGraph, t: usize, layers: usize, lengths: &PathLengths) -> u32 {
    let links = graph.edges(t).len().max(1) as u64;
    let senders: u64 = (0..graph.len())
        .filter(|&v| v != t)
        .map(|v| u64::from(graph.endpoints[v]))
        .sum();
    let Some(per_mille) = entry_cap_per_mille(graph, t, layers, lengths) else {
        return NO_CAP;
    };
    (senders * per_mille)
        .div_ceil(links * 1000)
        .min(u64::from(NO_CAP)) as u32
}

/// What a search into t needs of the layer's tree into t beyond the routes.
#[derive(Clone, Copy)]
struct TreeEntry<'a> {
    /// Edge-disjoint paths of each switch towards t among the earlier layers.
    disjoint: &'a [u8],
    /// Senders entering t from each neighbour in this layer so far.
    entry: &'a [u32],
    /// The most senders one link into t should carry ([`entry_cap`]).
    cap: u32,
    /// Room left under the cap on t's links that can still carry routes: those of
    /// neighbours without a route yet or routing straight to t.
    open: u32,
    /// Senders still without a route towards t in this layer.
    unrouted: u32,
}

impl TreeEntry<'_> {
    /// How far a path overloads the tree's entry: the senders `senders` it routes beyond the
    /// cap of the link `last` → t it enters on, plus the senders that would be left without
    /// room on t's open links once the path has closed `closed` of them (neighbours of t it
    /// routes on a detour).
    fn overload(&self, last: usize, senders: u32, closed: u32) -> u32 {
        let room_last = self.cap.saturating_sub(self.entry[last]);
        let excess = senders.saturating_sub(room_last);
        let open = self
            .open
            .saturating_sub(senders.min(room_last))
            .saturating_sub(closed.saturating_mul(self.cap));
        excess + (self.unrouted - senders).saturating_sub(open)
    }
}

/// Room under the cap on the links into t that can still carry routes in layer l: links from
/// neighbours without a route yet or routing straight to t.
fn open_room(
    graph: &RoutingGraph,
    layers: &Layers,
    l: usize,
    t: usize,
    entry: &[u32],
    cap: u32,
) -> u32 {
    graph
        .edges(t)
        .map(|e| graph.edge_to[e] as usize)
        .filter(|&y| layers.hops(l, y, t).is_none_or(|h| h == 1))
        .map(|y| cap.saturating_sub(entry[y]))
        .fold(0, u32::saturating_add)
}

/// The cost of a candidate path, compared lexicographically: first how far it pushes the link
/// it enters t on over that link's cap ([`entry_cap`]); then its damage to path
/// diversity among the switches whose route the path sets and that still lack disjoint paths —
/// how many *critical* ones would repeat a link of their earlier routes (those needing a new
/// disjoint path in every remaining layer), how many would repeat at all, how many repetitions
/// (a link repeated from two earlier layers counts twice, so repeating falls to switches that
/// have repeated least) — then the sum of link weights.
type Cost = (u32, u32, u32, u32, u64);

/// Depth-first search for the least-cost path of allowed length from s to t, following
/// forced next hops.
#[derive(Default)]
struct Search {
    min_len: usize,
    max_len: usize,
    /// Edges of the current partial path.
    stack: [u32; MAX_SEARCH_HOPS],
    /// Switches on the current partial path (all without a route in this layer).
    visited: [u32; MAX_SEARCH_HOPS + 1],
    best: [u32; MAX_SEARCH_HOPS],
    best_len: usize,
    best_cost: Cost,
}

impl Search {
    fn reset(&mut self, min_len: usize, max_len: usize) {
        self.min_len = min_len;
        self.max_len = max_len;
        self.best_len = 0;
        self.best_cost = (u32::MAX, u32::MAX, u32::MAX, u32::MAX, u64::MAX);
    }

    fn found(&self) -> bool {
        self.best_len > 0
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        l: usize,
        s: usize,
        t: usize,
        weights: &[u64],
        tree: TreeEntry<'_>,
    ) {
        self.visited[0] = s as u32;
        let remaining = layers.count() - l;
        let ctx = Context {
            graph,
            layers,
            l,
            t,
            weights,
            dist_t: graph.dist_to(t),
            tree,
            remaining,
        };
        self.dfs(&ctx, s, 0, Damage::default(), 0);
    }

    fn dfs(&mut self, ctx: &Context<'_>, v: usize, depth: usize, damage: Damage, weight: u64) {
        let next_depth = depth + 1;
        for e in ctx.graph.edges(v) {
            let w = ctx.graph.edge_to[e] as usize;
            if self.visited[..=depth].contains(&(w as u32)) {
                continue;
            }
            // Length first (cheap): t itself (h = 0) or a routed switch, whose route is forced
            // from here on, must give an allowed total; an unrouted one must leave room to
            // reach t.
            let forced = ctx.layers.hops(ctx.l, w, ctx.t);
            match forced {
                Some(h)
                    if !(self.min_len..=self.max_len).contains(&(next_depth + usize::from(h))) =>
                {
                    continue;
                }
                None if next_depth >= self.max_len
                    || next_depth + usize::from(ctx.dist_t[w]) > self.max_len =>
                {
                    continue;
                }
                _ => {}
            }
            let step_weight = weight + ctx.weights[e];
            if (damage.cost(0, step_weight)) >= self.best_cost {
                continue; // damage only grows along the path
            }
            let step_damage = damage.add(self.repeats(ctx, depth, e));
            if step_damage.cost(0, step_weight) >= self.best_cost {
                continue;
            }
            if forced.is_none() {
                self.stack[depth] = e as u32;
                self.visited[next_depth] = w as u32;
                self.dfs(ctx, w, next_depth, step_damage, step_weight);
                continue;
            }
            // The partial path holds only unrouted switches and the chain only routed ones,
            // so the whole path is simple.
            let (mut full_damage, mut full_weight) = (step_damage, step_weight);
            let (mut x, mut last) = (w, v);
            while x != ctx.t {
                let c = ctx.layers.next_edge(ctx.l, x, ctx.t).expect("routed");
                full_damage = full_damage.add(self.repeats(ctx, depth, c));
                full_weight += ctx.weights[c];
                last = x;
                x = ctx.graph.edge_to[c] as usize;
            }
            let senders: u32 = self.visited[..=depth]
                .iter()
                .map(|&u| ctx.graph.endpoints[u as usize])
                .sum();
            // New switches next to t that do not route straight to t close their link.
            let closed = self.visited[..=depth]
                .iter()
                .filter(|&&u| ctx.dist_t[u as usize] == 1 && !(w == ctx.t && u as usize == v))
                .count() as u32;
            let excess = ctx.tree.overload(last, senders, closed);
            let full = full_damage.cost(excess, full_weight);
            if full < self.best_cost {
                self.stack[depth] = e as u32;
                self.best[..next_depth].copy_from_slice(&self.stack[..next_depth]);
                self.best_len = next_depth;
                self.best_cost = full;
            }
        }
    }

    /// The partial path's switches (positions up to `depth`, as a bit mask) whose routes in
    /// earlier layers already use edge e: their new route would repeat it.
    fn repeats(&self, ctx: &Context<'_>, depth: usize, e: usize) -> Damage {
        let tail = ctx.graph.edge_from[e] as usize;
        let mut damage = Damage::default();
        for earlier in 0..ctx.l {
            if ctx.layers.next_edge(earlier, tail, ctx.t) != Some(e) {
                continue;
            }
            for (i, &v) in self.visited[..=depth].iter().enumerate() {
                // A switch with enough disjoint paths loses nothing by repeating, and one that
                // needs more than the remaining layers can give cannot be saved.
                let need = DISJOINT_TARGET.saturating_sub(ctx.tree.disjoint[v as usize]);
                if need == 0 || usize::from(need) > ctx.remaining {
                    continue;
                }
                if ctx
                    .layers
                    .passes(ctx.graph, earlier, v as usize, ctx.t, tail)
                {
                    damage.repeating |= 1 << i;
                    damage.repetitions += 1;
                    if usize::from(need) == ctx.remaining {
                        damage.critical |= 1 << i;
                    }
                }
            }
        }
        damage
    }
}

/// Repetitions of earlier routes along a partial path: which path positions repeat (bit
/// masks) and how often.
#[derive(Debug, Clone, Copy, Default)]
struct Damage {
    critical: u32,
    repeating: u32,
    repetitions: u32,
}

impl Damage {
    fn add(self, other: Damage) -> Damage {
        Damage {
            critical: self.critical | other.critical,
            repeating: self.repeating | other.repeating,
            repetitions: self.repetitions + other.repetitions,
        }
    }

    fn cost(self, excess: u32, weight: u64) -> Cost {
        (
            self.critical.count_ones(),
            excess,
            self.repeating.count_ones(),
            self.repetitions,
            weight,
        )
    }
}

/// What a search needs to look at.
struct Context<'a> {
    graph: &'a RoutingGraph,
    layers: &'a Layers,
    l: usize,
    t: usize,
    weights: &'a [u64],
    dist_t: &'a [u8],
    tree: TreeEntry<'a>,
    /// Layers still to be routed, this one included.
    remaining: usize,
}

/// Sets the next hops of the new part of a found path, raises the priority level of the pairs
/// that got a non-minimal path, and adds the path's routes to the link weights.
#[allow(clippy::too_many_arguments)]
fn insert(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    s: usize,
    t: usize,
    edges: &[u32],
    weights: &mut [u64],
    levels: &mut [u8],
    entry: &mut [u32],
) {
    let n = graph.len();
    let end = graph.edge_to[*edges.last().expect("non-empty path") as usize] as usize;
    let tail = usize::from(
        layers
            .hops(l, end, t)
            .expect("path ends on a routed switch"),
    );
    let receivers = u64::from(graph.endpoints[t]);
    let mut senders = 0u64;
    let mut v = s;
    for (j, &e) in edges.iter().enumerate() {
        let hops = (edges.len() - j + tail) as u8;
        debug_assert_eq!(layers.hops(l, v, t), None);
        layers.set(l, v, t, e as usize, hops);
        if hops > graph.dist(v, t) {
            levels[t * n + v] = levels[t * n + v].saturating_add(1);
        }
        senders += u64::from(graph.endpoints[v]);
        weights[e as usize] += senders * receivers;
        v = graph.edge_to[e as usize] as usize;
    }
    layers.load_chain(graph, l, end, t, senders * receivers, weights);
    let (mut last, mut x) = (
        graph.edge_from[*edges.last().expect("non-empty") as usize],
        end,
    );
    while x != t {
        last = x as u32;
        x = graph.edge_to[layers.next_edge(l, x, t).expect("routed")] as usize;
    }
    entry[last as usize] += senders as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologySpec;

    fn graph(spec: &str) -> RoutingGraph {
        let spec: TopologySpec = spec.parse().unwrap();
        RoutingGraph::new(&spec.build().unwrap())
    }

    fn layered(layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
        }
    }

    /// Max number of edge-disjoint s→t paths among the given switch paths (unit capacities on
    /// directed edges; a tiny augmenting-path max flow).
    pub(crate) fn disjoint(paths: &[Vec<usize>], s: usize, t: usize) -> usize {
        use std::collections::HashMap;
        let mut cap: HashMap<(usize, usize), i32> = HashMap::new();
        for p in paths {
            for w in p.windows(2) {
                cap.insert((w[0], w[1]), 1);
                cap.entry((w[1], w[0])).or_insert(0);
            }
        }
        let mut flow = 0;
        loop {
            let mut prev: HashMap<usize, usize> = HashMap::new();
            let mut stack = vec![s];
            prev.insert(s, s);
            while let Some(v) = stack.pop() {
                for (&(a, b), &c) in &cap {
                    if a == v && c > 0 && !prev.contains_key(&b) {
                        prev.insert(b, v);
                        stack.push(b);
                    }
                }
            }
            if !prev.contains_key(&t) {
                return flow;
            }
            let mut v = t;
            while v != s {
                let u = prev[&v];
                *cap.get_mut(&(u, v)).unwrap() -= 1;
                *cap.get_mut(&(v, u)).unwrap() += 1;
                v = u;
            }
            flow += 1;
        }
    }

    fn quality(spec: &str, config: &RoutingConfig) -> (f64, u8) {
        let g = graph(spec);
        let layers = route(&g, config);
        let (mut good, mut pairs, mut longest) = (0, 0, 0u8);
        for t in 0..g.len() {
            for s in (0..g.len()).filter(|&s| s != t) {
                let paths: Vec<Vec<usize>> = (0..layers.count())
                    .map(|l| layers.path(&g, l, s, t).unwrap())
                    .collect();
                for (l, p) in paths.iter().enumerate() {
                    let extra = (p.len() - 1) as u8 - g.dist(s, t);
                    longest = longest.max(extra);
                    if l == 0 {
                        assert_eq!(extra, 0, "{spec}: layer 0 is minimal");
                    }
                }
                pairs += 1;
                good += usize::from(disjoint(&paths, s, t) >= 3);
            }
        }
        // The routing's own count agrees with the brute-force flow above.
        assert_eq!(
            pairs_with_disjoint_paths(&g, &layers, 3),
            (good, pairs),
            "{spec}"
        );
        (good as f64 / pairs as f64, longest)
    }

    #[test]
    fn slim_fly_q5_with_4_layers_reaches_the_structural_limit() {
        // Girth 5: adjacent switches have no 2- or 3-hop detour, so at most 6/7 of the pairs
        // can have 3 disjoint paths. The greedy layering leaves a few of the 2100 possible
        // pairs short (seed 1: 9); the polishing pass lays new paths for them.
        let (fraction, longest) = quality("slimfly:q=5", &layered(4));
        assert!(
            fraction <= 6.0 / 7.0 + 1e-9,
            "{fraction} beats the structural limit: the count is wrong"
        );
        assert!(fraction >= 6.0 / 7.0 - 1e-9, "{fraction}");
        assert_eq!(longest, 1, "3-hop paths for distance-2 pairs, no longer");
    }

    #[test]
    fn slim_fly_q7_quality() {
        // With every path at most 3 hops, seeds 1 to 8 give 97.0 % to 97.9 % of pairs three
        // disjoint paths with 4 layers (the routing issue asks for 96 %; 95.7 % to 96.4 %
        // before the polishing pass), and 100 % with 8.
        let (f4, _) = quality("slimfly:q=7", &layered(4));
        let (f8, _) = quality("slimfly:q=7", &layered(8));
        assert!(f4 >= 0.96, "{f4}");
        assert!(f8 >= 0.995, "{f8}");
    }
}
