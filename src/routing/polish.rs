//! A final local search over the finished, rebalanced layers.
//!
//! [`rebalance`](super::rebalance) lowers the sum of the squared link loads, which evens the
//! loads out but stops where no single subtree move lowers that sum, often with a few links
//! well above the rest. This pass continues from there with the objective the routing is
//! judged by, compared lexicographically:
//!
//! 1. the pairs (s, t) with fewer than three edge-disjoint paths across all layers, then those
//!    with fewer than two: moves that shrink both counts (or one, the other not growing) come
//!    first, as long as the maximum load stays within 1.10 × the mean (the bound) or
//!    where it already is;
//! 2. the link loads sorted from the largest down (the maximum, then the next largest, ...).
//!    A move changes the loads of the few links its old and new routes do not share, and it
//!    improves this order exactly when those links' new loads, sorted from the largest down,
//!    come before their old ones.
//!
//! Neither count of pairs ends above where the pass started. While the maximum is over
//! 1.10 × the mean, a load move may spend pairs the pass itself won (never more); within it, a
//! load move may not cost any.
//!
//! The moves are those of the rebalancing pass: a switch s re-points its next hop towards t in
//! one layer to a neighbour whose route does not pass s (so the layer stays a loop-free tree
//! into t); s's subtree follows; every switch of the subtree stays within its allowed length
//! (layer 0 and minimal layers: exactly the distance; further layers: at most
//! max(d + 1, 3) hops by default). Load moves come from the routes through the most loaded
//! links. A pair lacking disjoint paths first tries single moves of the switches on its
//! routes; with three layers or more, failing those, a move that wins it a path at the cost
//! of another pair, or a whole new path laid for it in one layer (switches whose subtrees the
//! longer route would push over their lengths move aside first), after which the pairs that
//! cost are repaired, one level deep; such a compound change is kept only if fewer pairs lack
//! paths in the end, and undone otherwise (a journal of reverse moves).
//!
//! Where no move improves, a seeded kick moves a route off a most loaded link — onto links
//! that stay within the maximum if it can, else onto links it pushes over by the moved load,
//! which the descent then has to relieve (an ejection chain) — and the kicked route is left
//! alone for a while; pairs the kick cost get repaired (single moves, then, if pairs are still
//! short, the compound ones). A state worse than the best one (more
//! over the cap, more pairs lacking paths, or a higher maximum) goes back to the best one,
//! which is what the pass returns. The search stops after a fixed amount of work, so the result
//! is deterministic for a given seed.

use super::config::{PathLengths, longest_allowed};
use super::disjoint::{PathFlow, pair_disjoint};
use super::graph::RoutingGraph;
use super::layers::Layers;
use super::tree::{MAX_ROUTE, Tree, walk};
use crate::rng::Rng;

/// Pairs a kick may cost three (or two) disjoint paths, for the repair that follows to win
/// back.
const KICK_LOSS: i64 = 1;

/// Candidate first steps [`State::eject_pair`] tries per pair.
const EJECT_TRIES: usize = 8;

/// Longest path [`State::force_paths`] lays.
const MAX_FORCED: usize = 4;

/// How deep [`State::force_paths`] recurses to repair the pairs a laid path cost.
const FORCE_DEPTH: usize = 1;

/// Paths [`State::force_paths`] tries per pair.
const FORCE_TRIES: usize = 16;

/// Links the descent scans for an improving move, from the most loaded down, before it
/// counts as stuck (an improvement further down barely matters for the maximum).
const SCAN_EDGES: usize = 24;

/// Kicked routes stay frozen for this many following moves.
const TABU_MOVES: usize = 12;

/// Polishes `layers` (see the module documentation) with at most `budget` move evaluations.
/// `loads` and `disjoint` are the current link loads (per directed edge) and edge-disjoint
/// path counts (`t * n + s`, for destinations with endpoints), as the rebalancing pass leaves
/// them. `lengths` bounds the layers after layer 0 (`None`: every layer stays minimal).
pub(super) fn polish(
    graph: &RoutingGraph,
    layers: &mut Layers,
    lengths: Option<&PathLengths>,
    loads: Vec<u64>,
    disjoint: Vec<u8>,
    seed: u64,
    budget: u64,
) {
    if loads.is_empty() {
        return; // no links to balance
    }
    let n = graph.len();
    let mut below = [0i64; 2];
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t) {
            let d = disjoint[t * n + s];
            below[0] += i64::from(d < 3);
            below[1] += i64::from(d < 2);
        }
    }
    // The load the issue accepts on a link: 1.10 × the mean.
    let cap = loads.iter().sum::<u64>() * 11 / (10 * loads.len().max(1) as u64);
    let mut state = State {
        graph,
        lengths,
        cap,
        floor: below,
        loads,
        disjoint,
        below,
        work: 0,
        budget,
        tree: Tree::default(),
        tree_key: None,
        slack: Vec::new(),
        members: Vec::new(),
        flow: PathFlow::default(),
        checked: Vec::new(),
        tabu: Vec::new(),
        moves: 0,
        journal: Vec::new(),
        recording: 0,
    };
    state.run(layers, &mut Rng::new(seed ^ 0x0050_15E0_D0C5));
}

/// A move: s re-points its next hop towards t in layer l to `edge`, with `hops` hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Move {
    l: usize,
    s: usize,
    t: usize,
    edge: usize,
    hops: u8,
}

/// A candidate's effect on the link loads.
#[derive(Debug, Clone, Copy)]
struct LoadChange {
    /// Whether the sorted loads improve.
    improves: bool,
    /// The largest new load on a changed link.
    peak: u64,
    /// Change of the sum of squared loads.
    squares: i128,
}

/// How a move for a pair lacking disjoint paths ranks: the change of the pairs below three and
/// two disjoint paths, the largest new load, the change of the sum of squared loads.
type PairKey = ([i64; 2], u64, i128);

struct State<'a> {
    graph: &'a RoutingGraph,
    lengths: Option<&'a PathLengths>,
    /// 1.10 × the mean link load when the pass started.
    cap: u64,
    /// `below` when the pass started: while the maximum load is over the cap, moves may spend
    /// disjoint paths the pass won, down to these counts.
    floor: [i64; 2],
    loads: Vec<u64>,
    disjoint: Vec<u8>,
    /// Pairs with fewer than three, and fewer than two, edge-disjoint paths.
    below: [i64; 2],
    work: u64,
    budget: u64,
    /// One layer's tree into one destination, for the (layer, destination) in `tree_key`
    /// (`None`: not current), and the least room (allowed hops − hops) in each switch's
    /// subtree of it.
    tree: Tree,
    tree_key: Option<(usize, usize)>,
    slack: Vec<i32>,
    members: Vec<u32>,
    flow: PathFlow,
    /// New disjoint-path counts of the members of the subtree last checked.
    checked: Vec<u8>,
    /// Kicked (layer, switch, destination) and the move count until which they stay.
    tabu: Vec<((usize, usize, usize), usize)>,
    moves: usize,
    /// While `recording` > 0: the moves that undo the moves made, in order.
    journal: Vec<Move>,
    recording: u32,
}

/// What the search keeps of its best state.
struct Snapshot {
    layers: Layers,
    loads: Vec<u64>,
    disjoint: Vec<u8>,
    below: [i64; 2],
    /// Loads sorted from the largest down.
    sorted: Vec<u64>,
}

impl Snapshot {
    /// How the search ranks states: how far the maximum is over the cap, the pairs lacking
    /// disjoint paths, then the sorted loads.
    fn key(&self, cap: u64) -> (u64, [i64; 2], &[u64]) {
        (self.sorted[0].saturating_sub(cap), self.below, &self.sorted)
    }
}

impl State<'_> {
    fn run(&mut self, layers: &mut Layers, rng: &mut Rng) {
        while self.work < self.budget && self.diversity_pass(layers) {}
        if layers.count() >= 3 {
            while self.work < self.budget && self.ejection_pass(layers) {}
        }
        let mut best: Option<Snapshot> = None;
        let mut lost = Vec::new();
        let mut recovered = false;
        loop {
            while self.work < self.budget && self.load_step(layers) {}
            if layers.count() >= 3 && self.below[0] > self.floor[0] {
                // A kick cost pairs the single-move repair could not win back: try the
                // compound moves before judging the state.
                while self.work < self.budget && self.ejection_pass(layers) {}
                while self.work < self.budget && self.load_step(layers) {}
            }
            if !recovered && self.loads.iter().all(|&x| x <= self.cap) {
                // Within the cap: win back the disjoint paths spent on getting there.
                recovered = true;
                while self.work < self.budget && self.diversity_pass(layers) {}
                if layers.count() >= 3 {
                    while self.work < self.budget && self.ejection_pass(layers) {}
                }
                while self.work < self.budget && self.load_step(layers) {}
            }
            let now = Snapshot {
                layers: layers.clone(),
                loads: self.loads.clone(),
                disjoint: self.disjoint.clone(),
                below: self.below,
                sorted: self.sorted_loads(),
            };
            // States that lack disjoint paths the pass started with (a kick not repaired)
            // are left for the best one.
            let admissible = now.below[0] <= self.floor[0] && now.below[1] <= self.floor[1];
            match &best {
                Some(b) if !admissible || now.key(self.cap) >= b.key(self.cap) => {
                    // Not better: go on from here only if neither the excess over the cap nor
                    // diversity nor the maximum is worse than the best state's.
                    let (x, y) = (now.key(self.cap), b.key(self.cap));
                    if !admissible || (x.0, x.1, x.2[0]) > (y.0, y.1, y.2[0]) {
                        *layers = b.layers.clone();
                        self.loads.clone_from(&b.loads);
                        self.disjoint.clone_from(&b.disjoint);
                        self.below = b.below;
                        self.tree_key = None;
                    }
                }
                _ => best = Some(now),
            }
            if self.work >= self.budget || !self.kick(layers, rng, &mut lost) {
                break;
            }
            // Give the pairs the kick cost disjoint paths their best repair.
            for &(u, t) in &lost {
                while self.work < self.budget && self.improve_pair(layers, u, t) {}
            }
        }
        if let Some(best) = best {
            *layers = best.layers;
            self.loads = best.loads;
            self.disjoint = best.disjoint;
            self.below = best.below;
        }
    }

    /// Whether a load move that changes the pairs lacking disjoint paths by `change` may be
    /// made: never one that loses any while the maximum load is within the cap; over it, down
    /// to the counts the pass started with.
    fn accepts(&self, change: [i64; 2]) -> bool {
        let max = self.loads.iter().copied().max().unwrap_or(0);
        if max > self.cap {
            self.below[0] + change[0] <= self.floor[0].max(self.below[0])
                && self.below[1] + change[1] <= self.floor[1].max(self.below[1])
        } else {
            change[0] <= 0 && change[1] <= 0
        }
    }

    fn sorted_loads(&self) -> Vec<u64> {
        let mut sorted = self.loads.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        sorted
    }

    /// Makes `self.tree` and `self.slack` describe layer l's tree into t.
    fn build_tree(&mut self, layers: &Layers, l: usize, t: usize) {
        if self.tree_key == Some((l, t)) {
            return;
        }
        let graph = self.graph;
        let n = graph.len();
        self.tree.build(graph, layers, l, t);
        let (order, slack) = (&self.tree.order, &mut self.slack);
        slack.clear();
        slack.resize(n, i32::MAX);
        for &v in order[1..].iter().rev() {
            let v = v as usize;
            let h = layers.hops(l, v, t).expect("in tree");
            let limit = longest_allowed(self.lengths, l, graph.dist(v, t));
            slack[v] = slack[v].min(limit as i32 - i32::from(h));
            let parent = graph.edge_to[layers.next_edge(l, v, t).expect("in tree")] as usize;
            slack[parent] = slack[parent].min(slack[v]);
        }
        self.tree_key = Some((l, t));
        self.work += n as u64 / 8;
    }

    /// The subtree of s in the current tree (s first), into `self.members`.
    fn subtree(&mut self, s: usize) {
        self.tree.subtree(s, &mut self.members);
    }

    /// Whether s may re-point to `edge` in layer l's tree into t (which `self.tree` holds):
    /// the move and its hop count, or `None`.
    fn valid(&self, layers: &Layers, l: usize, s: usize, t: usize, edge: usize) -> Option<Move> {
        let graph = self.graph;
        let e0 = layers.next_edge(l, s, t)?;
        if edge == e0 || self.tabu.iter().any(|&(key, _)| key == (l, s, t)) {
            return None;
        }
        let hs = i32::from(layers.hops(l, s, t)?);
        if hs as usize > MAX_ROUTE {
            return None;
        }
        let w = graph.edge_to[edge] as usize;
        let hops = i32::from(layers.hops(l, w, t)?) + 1;
        if hops as usize > MAX_ROUTE || hops - hs > self.slack[s] {
            return None;
        }
        if (l == 0 || self.lengths.is_none()) && hops != hs {
            return None;
        }
        if layers.passes(graph, l, w, t, s) {
            return None; // w's route passes s: re-pointing would close a loop
        }
        Some(Move {
            l,
            s,
            t,
            edge,
            hops: hops as u8,
        })
    }

    /// The edges of s's route now and after `mv`; returns their counts.
    fn routes(
        &self,
        layers: &Layers,
        mv: Move,
        old: &mut [u32; MAX_ROUTE],
        new: &mut [u32; MAX_ROUTE],
    ) -> (usize, usize) {
        let old_len = walk(self.graph, layers, mv.l, mv.s, mv.t, old);
        new[0] = mv.edge as u32;
        let w = self.graph.edge_to[mv.edge] as usize;
        let new_len = 1 + walk(self.graph, layers, mv.l, w, mv.t, &mut new[1..]);
        (old_len, new_len)
    }

    /// The effect on the loads of moving `load` from the `old` route to the `new` one.
    fn load_change(&self, old: &[u32], new: &[u32], load: u64) -> LoadChange {
        let mut before = [0u64; 2 * MAX_ROUTE];
        let mut after = [0u64; 2 * MAX_ROUTE];
        let mut k = 0;
        let mut squares = 0i128;
        for &e in old.iter().filter(|e| !new.contains(e)) {
            let x = self.loads[e as usize];
            before[k] = x;
            after[k] = x - load;
            k += 1;
        }
        for &e in new.iter().filter(|e| !old.contains(e)) {
            let x = self.loads[e as usize];
            before[k] = x;
            after[k] = x + load;
            k += 1;
        }
        for i in 0..k {
            squares += i128::from(after[i]) * i128::from(after[i])
                - i128::from(before[i]) * i128::from(before[i]);
        }
        let (before, after) = (&mut before[..k], &mut after[..k]);
        before.sort_unstable_by(|a, b| b.cmp(a));
        after.sort_unstable_by(|a, b| b.cmp(a));
        LoadChange {
            improves: after < before,
            peak: after.first().copied().unwrap_or(0),
            squares,
        }
    }

    /// The change of the pairs below three and below two disjoint paths if `mv` is made; the
    /// subtree's new counts are left in `checked` (`members` must hold s's subtree).
    fn diversity_change(&mut self, layers: &mut Layers, mv: Move) -> [i64; 2] {
        let graph = self.graph;
        let n = graph.len();
        let (e0, h0) = (
            layers.next_edge(mv.l, mv.s, mv.t).expect("routed"),
            layers.hops(mv.l, mv.s, mv.t).expect("routed"),
        );
        layers.set(mv.l, mv.s, mv.t, mv.edge, mv.hops);
        self.checked.clear();
        let mut change = [0i64; 2];
        for &u in &self.members {
            let u = u as usize;
            let before = self.disjoint[mv.t * n + u];
            let after = pair_disjoint(graph, layers, layers.count(), u, mv.t, &mut self.flow);
            change[0] += i64::from(after < 3) - i64::from(before < 3);
            change[1] += i64::from(after < 2) - i64::from(before < 2);
            self.checked.push(after);
        }
        self.work += self.members.len() as u64;
        layers.set(mv.l, mv.s, mv.t, e0, h0);
        change
    }

    /// Makes `mv` (whose subtree is in `members` and new counts in `checked`).
    fn apply(&mut self, layers: &mut Layers, mv: Move, change: [i64; 2]) {
        let graph = self.graph;
        let n = graph.len();
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        let (old_len, new_len) = self.routes(layers, mv, &mut old, &mut new);
        let load = self.tree.senders[mv.s] * u64::from(graph.endpoints[mv.t]);
        for &e in &old[..old_len] {
            self.loads[e as usize] -= load;
        }
        for &e in &new[..new_len] {
            self.loads[e as usize] += load;
        }
        let h0 = layers.hops(mv.l, mv.s, mv.t).expect("routed");
        if self.recording > 0 {
            self.journal.push(Move {
                edge: old[0] as usize,
                hops: h0,
                ..mv
            });
        }
        let delta = i32::from(mv.hops) - i32::from(h0);
        layers.set(mv.l, mv.s, mv.t, mv.edge, mv.hops);
        for (&u, &after) in self.members.iter().zip(&self.checked) {
            let u = u as usize;
            self.disjoint[mv.t * n + u] = after;
            if delta != 0 && u != mv.s {
                let e = layers.next_edge(mv.l, u, mv.t).expect("routed");
                let h = i32::from(layers.hops(mv.l, u, mv.t).expect("routed")) + delta;
                layers.set(mv.l, u, mv.t, e, h as u8);
            }
        }
        self.below[0] += change[0];
        self.below[1] += change[1];
        self.tree_key = None;
        self.moves += 1;
        let moves = self.moves;
        self.tabu.retain(|&(_, until)| until > moves);
    }

    /// One scan over the pairs lacking disjoint paths (fewer than min(3, layers)), each given
    /// its best improving move ([`Self::improve_pair`]). Returns whether a move was made.
    fn diversity_pass(&mut self, layers: &mut Layers) -> bool {
        let graph = self.graph;
        let n = graph.len();
        let target = layers.count().min(3) as u8;
        let mut improved = false;
        for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
            for s in (0..n).filter(|&s| s != t) {
                if self.disjoint[t * n + s] < target && self.work < self.budget {
                    improved |= self.improve_pair(layers, s, t);
                }
            }
        }
        improved
    }

    /// The valid moves of the switches on s's routes towards t (every layer) whose change of
    /// the pairs lacking disjoint paths `keep` accepts (it sees the state with the moved
    /// subtree's members and their disjoint counts after the move) and whose maximum load stays
    /// within `ceiling`, keyed by (that change, the new maximum, the new sum of squares), in
    /// the order found.
    fn moves_on_routes(
        &mut self,
        layers: &mut Layers,
        s: usize,
        t: usize,
        ceiling: u64,
        keep: impl Fn(&Self, [i64; 2]) -> bool,
    ) -> Vec<(PairKey, Move)> {
        let graph = self.graph;
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        let mut found = Vec::new();
        for l in 0..layers.count() {
            if layers.next_edge(l, s, t).is_none() {
                continue;
            }
            self.build_tree(layers, l, t);
            let mut u = s;
            while u != t {
                let next = graph.edge_to[layers.next_edge(l, u, t).expect("routed")];
                for edge in graph.edges(u) {
                    let Some(mv) = self.valid(layers, l, u, t, edge) else {
                        continue;
                    };
                    self.work += 1;
                    self.subtree(u);
                    let change = self.diversity_change(layers, mv);
                    if !keep(self, change) {
                        continue;
                    }
                    let (ol, nl) = self.routes(layers, mv, &mut old, &mut new);
                    let load = self.tree.senders[u] * u64::from(graph.endpoints[t]);
                    let effect = self.load_change(&old[..ol], &new[..nl], load);
                    if effect.peak <= ceiling {
                        found.push(((change, effect.peak, effect.squares), mv));
                    }
                }
                u = next as usize;
            }
        }
        found
    }

    /// The best move of a switch on one of s's routes towards t that lowers the pairs below
    /// three or two disjoint paths (without raising either), made at once. Returns whether a
    /// move was made.
    fn improve_pair(&mut self, layers: &mut Layers, s: usize, t: usize) -> bool {
        let graph = self.graph;
        let n = graph.len();
        if self.disjoint[t * n + s] >= layers.count().min(3) as u8 {
            return false;
        }
        // Diversity may not push the maximum load over the cap, or further over it.
        let ceiling = self.loads.iter().copied().max().unwrap_or(0).max(self.cap);
        let candidates = self.moves_on_routes(layers, s, t, ceiling, |_, change| {
            change < [0, 0] && change[0] <= 0 && change[1] <= 0
        });
        let best = candidates.into_iter().min_by_key(|&(key, _)| key);
        let Some(((change, _, _), mv)) = best else {
            return false;
        };
        self.build_tree(layers, mv.l, mv.t);
        self.subtree(mv.s);
        let again = self.diversity_change(layers, mv);
        debug_assert_eq!(again, change);
        self.apply(layers, mv, change);
        true
    }

    /// One scan over the pairs lacking three disjoint paths, each given a two-step chance
    /// ([`Self::eject_pair`]). Returns whether the pairs lacking them became fewer.
    fn ejection_pass(&mut self, layers: &mut Layers) -> bool {
        let graph = self.graph;
        let n = graph.len();
        let mut improved = false;
        for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
            for s in (0..n).filter(|&s| s != t) {
                if self.disjoint[t * n + s] < 3 && self.work < self.budget {
                    improved |= self.eject_pair(layers, s, t);
                }
            }
        }
        improved
    }

    /// Gives s a disjoint path more towards t at the expense of other pairs (a move on one of
    /// s's routes that costs as many pairs as it wins, or one more), then repairs the pairs it
    /// cost ([`Self::improve_pair`]); keeps the result if fewer pairs lack disjoint paths and
    /// the maximum load stays within the cap (or where it was), else undoes it. Returns
    /// whether it was kept.
    fn eject_pair(&mut self, layers: &mut Layers, s: usize, t: usize) -> bool {
        let graph = self.graph;
        let n = graph.len();
        let before = self.disjoint[t * n + s];
        let ceiling = self.loads.iter().copied().max().unwrap_or(0).max(self.cap);
        let mut candidates = self.moves_on_routes(layers, s, t, ceiling, |state, change| {
            let at = state.members.iter().position(|&v| v as usize == s);
            let gains = at.is_some_and(|i| state.checked[i] > before);
            gains && change[0] <= KICK_LOSS && change[1] <= 0
        });
        candidates.sort_unstable_by_key(|&(key, mv)| (key, mv.l, mv.s, mv.edge));
        let below = self.below;

        for &(_, mv) in candidates.iter().take(EJECT_TRIES) {
            let mark = self.begin();
            self.build_tree(layers, mv.l, mv.t);
            self.subtree(mv.s);
            let change = self.diversity_change(layers, mv);
            let lost: Vec<usize> = self
                .members
                .iter()
                .zip(&self.checked)
                .filter(|&(&u, &after)| after < self.disjoint[t * n + u as usize])
                .map(|(&u, _)| u as usize)
                .collect();
            self.apply(layers, mv, change);
            for &u in &lost {
                while self.work < self.budget && self.improve_pair(layers, u, t) {}
            }
            let max = self.loads.iter().copied().max().unwrap_or(0);
            if fewer(self.below, below) && max <= ceiling {
                self.end(layers, mark, true);
                return true;
            }
            self.end(layers, mark, false);
            debug_assert_eq!(self.below, below);
        }
        self.force_paths(layers, s, t, ceiling, FORCE_DEPTH)
    }

    /// Starts recording moves for a possible undo; returns the mark to pass to [`Self::end`].
    fn begin(&mut self) -> usize {
        self.recording += 1;
        self.journal.len()
    }

    /// Ends recording from `mark`: keeps the moves made since, or undoes them.
    fn end(&mut self, layers: &mut Layers, mark: usize, keep: bool) {
        self.recording -= 1;
        if !keep {
            let recording = std::mem::replace(&mut self.recording, 0);
            while self.journal.len() > mark {
                let undo = self.journal.pop().expect("recorded");
                self.build_tree(layers, undo.l, undo.t);
                self.subtree(undo.s);
                let change = self.diversity_change(layers, undo);
                self.apply(layers, undo, change);
            }
            self.recording = recording;
        }
        if self.recording == 0 {
            self.journal.clear();
        }
    }

    /// Re-points s in layer l's tree into t to `edge`, first moving the children of s whose
    /// subtrees the longer route would take over their allowed lengths to other neighbours
    /// (the one losing the fewest disjoint paths, then the least loaded). Returns whether it
    /// was done (partial work is left for the caller to undo).
    fn force(&mut self, layers: &mut Layers, l: usize, s: usize, t: usize, edge: usize) -> bool {
        let graph = self.graph;
        self.build_tree(layers, l, t);
        let w = graph.edge_to[edge] as usize;
        let (Some(hs), Some(hw)) = (layers.hops(l, s, t), layers.hops(l, w, t)) else {
            return false;
        };
        let delta = i32::from(hw) + 1 - i32::from(hs);
        let crowded: Vec<u32> = self.tree.children[s]
            .iter()
            .copied()
            .filter(|&c| self.slack[c as usize] < delta)
            .collect();
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        for c in crowded {
            let c = c as usize;
            self.build_tree(layers, l, t);
            let mut best: Option<(PairKey, Move)> = None;
            for e in graph.edges(c) {
                let x = graph.edge_to[e] as usize;
                let Some(mv) = self.valid(layers, l, c, t, e) else {
                    continue;
                };
                if layers.passes(graph, l, x, t, s) {
                    continue;
                }
                self.subtree(c);
                let change = self.diversity_change(layers, mv);
                let (ol, nl) = self.routes(layers, mv, &mut old, &mut new);
                let load = self.tree.senders[c] * u64::from(graph.endpoints[t]);
                let effect = self.load_change(&old[..ol], &new[..nl], load);
                let key = (change, effect.peak, effect.squares);
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, mv));
                }
            }
            let Some(((change, _, _), mv)) = best else {
                return false;
            };
            self.build_tree(layers, l, t);
            self.subtree(c);
            let again = self.diversity_change(layers, mv);
            debug_assert_eq!(again, change);
            self.apply(layers, mv, again);
        }
        self.build_tree(layers, l, t);
        let Some(mv) = self.valid(layers, l, s, t, edge) else {
            return false;
        };
        self.subtree(s);
        let change = self.diversity_change(layers, mv);
        self.apply(layers, mv, change);
        true
    }

    /// Gives s a disjoint path more towards t by laying a whole new path for it in one layer
    /// (each switch on it re-pointed along it, from t's end), then repairs the pairs that cost
    /// ([`Self::improve_pair`]); keeps the first result with fewer pairs lacking disjoint paths
    /// and the maximum load at most `ceiling`. Returns whether one was kept.
    fn force_paths(
        &mut self,
        layers: &mut Layers,
        s: usize,
        t: usize,
        ceiling: u64,
        depth: usize,
    ) -> bool {
        let graph = self.graph;
        let n = graph.len();
        let before = self.disjoint[t * n + s];
        let below = self.below;
        let d = graph.dist(s, t);
        let mut paths: Vec<(usize, Vec<u32>)> = Vec::new();
        for l in 1..layers.count() {
            let longest = longest_allowed(self.lengths, l, d).min(MAX_FORCED);
            let mut path = vec![s as u32];
            self.lay(layers, l, t, longest, &mut path, &mut paths);
        }
        self.work += paths.len() as u64;
        let row: Vec<u8> = self.disjoint[t * n..(t + 1) * n].to_vec();
        for (l, path) in paths.iter().take(FORCE_TRIES) {
            if self.work >= self.budget {
                break;
            }
            let l = *l;
            let mark = self.begin();
            let mut laid = true;
            for i in (0..path.len() - 1).rev() {
                let (v, w) = (path[i] as usize, path[i + 1] as usize);
                let edge = graph.edge_between(v, w).expect("path edge");
                if layers.next_edge(l, v, t) != Some(edge) && !self.force(layers, l, v, t, edge) {
                    laid = false;
                    break;
                }
            }
            if laid && self.disjoint[t * n + s] > before {
                let lost: Vec<usize> = (0..n)
                    .filter(|&u| self.disjoint[t * n + u] < row[u])
                    .collect();
                for &u in &lost {
                    while self.work < self.budget && self.improve_pair(layers, u, t) {}
                    if depth > 0 && self.disjoint[t * n + u] < row[u] {
                        self.force_paths(layers, u, t, ceiling, depth - 1);
                    }
                }
                let max = self.loads.iter().copied().max().unwrap_or(0);
                if fewer(self.below, below) && max <= ceiling {
                    self.end(layers, mark, true);
                    return true;
                }
            }
            self.end(layers, mark, false);
            debug_assert_eq!(self.below, below);
        }
        false
    }

    /// Collects the simple paths from `path`'s first switch to t of at most `longest` hops in
    /// layer l that would give that switch a disjoint path more towards t (with its routes in
    /// the other layers), into `paths`.
    fn lay(
        &mut self,
        layers: &Layers,
        l: usize,
        t: usize,
        longest: usize,
        path: &mut Vec<u32>,
        paths: &mut Vec<(usize, Vec<u32>)>,
    ) {
        let graph = self.graph;
        let v = *path.last().expect("non-empty") as usize;
        if v == t {
            let s = path[0] as usize;
            let gains =
                self.disjoint_with(layers, l, s, t, path) > self.disjoint[t * graph.len() + s];
            if gains {
                paths.push((l, path.clone()));
            }
            return;
        }
        let hops = path.len() - 1;
        for e in graph.edges(v) {
            let w = graph.edge_to[e] as usize;
            if path.contains(&(w as u32)) || hops + 1 + usize::from(graph.dist(w, t)) > longest {
                continue;
            }
            path.push(w as u32);
            self.lay(layers, l, t, longest, path, paths);
            path.pop();
        }
    }

    /// Edge-disjoint paths from s to t among its routes in every layer but l, and `path`.
    fn disjoint_with(&mut self, layers: &Layers, l: usize, s: usize, t: usize, path: &[u32]) -> u8 {
        let graph = self.graph;
        let flow = &mut self.flow;
        flow.clear();
        for other in (0..layers.count()).filter(|&other| other != l) {
            let mut v = s;
            while let Some(e) = (v != t).then(|| layers.next_edge(other, v, t)).flatten() {
                flow.add_edge(v as u32, graph.edge_to[e]);
                v = graph.edge_to[e] as usize;
            }
        }
        for pair in path.windows(2) {
            flow.add_edge(pair[0], pair[1]);
        }
        flow.max_flow(s as u32, t as u32)
    }

    /// The candidate moves of the routes through edge e: every switch whose route in some
    /// layer passes e, to every other neighbour allowed.
    fn moves_through(&mut self, layers: &Layers, e: usize, found: &mut Vec<Move>) {
        let graph = self.graph;
        let n = graph.len();
        let a = graph.edge_from[e] as usize;
        found.clear();
        for l in 0..layers.count() {
            for t in (0..n).filter(|&t| graph.endpoints[t] > 0 && t != a) {
                if layers.next_edge(l, a, t) != Some(e) {
                    continue;
                }
                self.build_tree(layers, l, t);
                self.subtree(a);
                let members = std::mem::take(&mut self.members);
                for &s in &members {
                    for edge in graph.edges(s as usize) {
                        if let Some(mv) = self.valid(layers, l, s as usize, t, edge) {
                            found.push(mv);
                        }
                    }
                }
                self.members = members;
            }
        }
        self.work += found.len() as u64;
    }

    /// Makes the best move off the most loaded link that allows one (links above the mean,
    /// from the most loaded down); returns whether one was made.
    fn load_step(&mut self, layers: &mut Layers) -> bool {
        let graph = self.graph;
        let mean = self.loads.iter().sum::<u64>() / self.loads.len().max(1) as u64;
        let mut edges: Vec<usize> = (0..self.loads.len())
            .filter(|&e| self.loads[e] > mean)
            .collect();
        edges.sort_unstable_by_key(|&e| (std::cmp::Reverse(self.loads[e]), e));
        let mut found = Vec::new();
        let mut ranked: Vec<((u64, i128), Move)> = Vec::new();
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        for &e in edges.iter().take(SCAN_EDGES) {
            if self.work >= self.budget {
                return false;
            }
            self.moves_through(layers, e, &mut found);
            ranked.clear();
            for &mv in &found {
                self.build_tree(layers, mv.l, mv.t);
                let (ol, nl) = self.routes(layers, mv, &mut old, &mut new);
                let load = self.tree.senders[mv.s] * u64::from(graph.endpoints[mv.t]);
                let effect = self.load_change(&old[..ol], &new[..nl], load);
                if effect.improves {
                    ranked.push(((effect.peak, effect.squares), mv));
                }
            }
            ranked.sort_unstable_by_key(|&(key, mv)| (key, mv.l, mv.t, mv.s, mv.edge));
            for &(_, mv) in &ranked {
                self.build_tree(layers, mv.l, mv.t);
                self.subtree(mv.s);
                let change = self.diversity_change(layers, mv);
                if self.accepts(change) {
                    self.apply(layers, mv, change);
                    return true;
                }
            }
        }
        false
    }

    /// Moves a random route off a random most loaded link onto links that stay at or below
    /// the maximum, without losing disjoint paths, and freezes it for a while. Returns whether
    /// a kick was made.
    fn kick(&mut self, layers: &mut Layers, rng: &mut Rng, lost: &mut Vec<(usize, usize)>) -> bool {
        let n = self.graph.len();
        lost.clear();
        let graph = self.graph;
        let max = self.loads.iter().copied().max().unwrap_or(0);
        let top: Vec<usize> = (0..self.loads.len())
            .filter(|&e| self.loads[e] == max)
            .collect();
        let mut found = Vec::new();
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        // First onto links that stay within the maximum; failing that, onto links that go over
        // it by the moved load at most (the descent then has to move another route off them).
        for attempt in 0..2 * top.len().min(4) {
            let over = attempt >= top.len().min(4);
            let e = top[rng.below(top.len() as u64) as usize];
            self.moves_through(layers, e, &mut found);
            rng.shuffle(&mut found);
            for &mv in found.iter().take(32) {
                self.build_tree(layers, mv.l, mv.t);
                let (ol, nl) = self.routes(layers, mv, &mut old, &mut new);
                if new[..nl].contains(&(e as u32)) {
                    continue;
                }
                let load = self.tree.senders[mv.s] * u64::from(graph.endpoints[mv.t]);
                if self.load_change(&old[..ol], &new[..nl], load).peak
                    > max + u64::from(over) * load
                {
                    continue;
                }
                self.subtree(mv.s);
                let change = self.diversity_change(layers, mv);
                if change[0] <= KICK_LOSS && change[1] <= KICK_LOSS {
                    for (&u, &after) in self.members.iter().zip(&self.checked) {
                        if after < self.disjoint[mv.t * n + u as usize] {
                            lost.push((u as usize, mv.t));
                        }
                    }
                    self.apply(layers, mv, change);
                    self.tabu
                        .push(((mv.l, mv.s, mv.t), self.moves + TABU_MOVES));
                    return true;
                }
            }
        }
        false
    }
}

/// Whether `a` counts fewer pairs lacking disjoint paths than `b`: none more below either
/// count, and some fewer.
fn fewer(a: [i64; 2], b: [i64; 2]) -> bool {
    a[0] <= b[0] && a[1] <= b[1] && a != b
}
