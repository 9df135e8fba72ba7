//! A whole new path laid for a pair lacking disjoint paths, where no single move of a switch
//! on its routes wins one.
//!
//! The simple paths of allowed length that would give the pair a disjoint path more are laid
//! one at a time in one layer, each switch on the path re-pointed along it from t's end
//! ([`State::force`]: switches whose subtrees the longer route would push over their lengths
//! move aside first); then the pairs that cost are repaired, one level deep. The first result
//! with fewer pairs lacking paths is kept; the others are undone from the journal.

use super::objective::{PairKey, fewer, load_change};
use super::state::{Move, State};
use crate::routing::config::longest_allowed;
use crate::routing::layers::Layers;
use crate::routing::tree::MAX_ROUTE;

/// Longest path [`State::force_paths`] lays.
const MAX_FORCED: usize = 4;

/// How deep [`State::force_paths`] recurses to repair the pairs a laid path cost.
const FORCE_DEPTH: usize = 1;

/// Paths [`State::force_paths`] tries per pair.
const FORCE_TRIES: usize = 16;

impl State<'_> {
    /// Gives s a disjoint path more towards t by a whole new path laid in one layer, the pairs
    /// it cost repaired [`FORCE_DEPTH`] levels deep ([`Self::force_paths`]). Returns whether
    /// one was kept.
    pub(super) fn new_path(
        &mut self,
        layers: &mut Layers,
        s: usize,
        t: usize,
        ceiling: u64,
    ) -> bool {
        self.force_paths(layers, s, t, ceiling, FORCE_DEPTH)
    }

    /// Re-points s in layer l's tree into t to `edge`, first moving the children of s whose
    /// subtrees the longer route would take over their allowed lengths to other neighbours
    /// (the one losing the fewest disjoint paths, then the least loaded). Returns whether it
    /// was done (partial work is left for the caller to undo).
    pub(super) fn force(
        &mut self,
        layers: &mut Layers,
        l: usize,
        s: usize,
        t: usize,
        edge: usize,
    ) -> bool {
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
                let effect = load_change(&self.loads, &old[..ol], &new[..nl], load);
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
    pub(super) fn force_paths(
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
        let movable = self.movable_layers(layers);
        for l in movable.start.max(1)..movable.end {
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
    pub(super) fn lay(
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
    pub(super) fn disjoint_with(
        &mut self,
        layers: &Layers,
        l: usize,
        s: usize,
        t: usize,
        path: &[u32],
    ) -> u8 {
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
}
