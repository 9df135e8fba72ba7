//! Repairs of the pairs lacking disjoint paths by moves of the switches on their routes.
//!
//! First single moves that win a pair a path without costing any other ([`State::improve_pair`]);
//! with three layers or more, failing those, a move that wins it a path at the cost of another
//! pair or one more, after which the pairs it cost are repaired in turn
//! ([`State::eject_pair`]) — or a whole new path laid for it ([`super::new_paths`]). A compound
//! change is kept only if fewer pairs lack paths in the end, and undone otherwise.

use super::objective::{KICK_LOSS, PairKey, fewer, load_change};
use super::state::{Move, State};
use crate::routing::layers::Layers;
use crate::routing::tree::MAX_ROUTE;

/// Candidate first steps [`State::eject_pair`] tries per pair.
const EJECT_TRIES: usize = 8;

impl State<'_> {
    /// One scan over the pairs lacking disjoint paths (fewer than min(3, layers)), each given
    /// its best improving move ([`Self::improve_pair`]). Returns whether a move was made.
    pub(super) fn diversity_pass(&mut self, layers: &mut Layers) -> bool {
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
    pub(super) fn moves_on_routes(
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
                    let effect = load_change(&self.loads, &old[..ol], &new[..nl], load);
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
    pub(super) fn improve_pair(&mut self, layers: &mut Layers, s: usize, t: usize) -> bool {
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
    pub(super) fn ejection_pass(&mut self, layers: &mut Layers) -> bool {
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
    pub(super) fn eject_pair(&mut self, layers: &mut Layers, s: usize, t: usize) -> bool {
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
        self.new_path(layers, s, t, ceiling)
    }
}
