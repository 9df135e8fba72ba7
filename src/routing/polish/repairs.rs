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
        for l in self.movable_layers(layers) {
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

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_bookkeeping, cases, rebalanced};
    use super::*;
    use crate::routing::fixtures::{assert_valid, same_layers};

    /// The pairs (s, t) lacking three disjoint paths in the state.
    fn lacking(state: &State<'_>) -> Vec<(usize, usize)> {
        let n = state.graph.len();
        (0..n)
            .filter(|&t| state.graph.endpoints[t] > 0)
            .flat_map(|t| (0..n).filter(move |&s| s != t).map(move |s| (s, t)))
            .filter(|&(s, t)| state.disjoint[t * n + s] < 3)
            .collect()
    }

    /// Runs `repair` on every pair lacking paths and checks what each call promises: fewer
    /// pairs lacking paths when it reports success, an unchanged routing when it does not.
    fn check(
        repair: impl Fn(&mut State<'_>, &mut Layers, usize, usize) -> bool,
        min_layers: usize,
    ) {
        for (spec, count, lengths) in cases().into_iter().filter(|c| c.1 >= min_layers) {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, 2_000_000);
            for (s, t) in lacking(&state) {
                let (before, below) = (layers.clone(), state.below);
                if repair(&mut state, &mut layers, s, t) {
                    assert!(
                        fewer(state.below, below),
                        "{spec}: {s} -> {t}: {below:?} -> {:?}",
                        state.below
                    );
                } else {
                    assert_eq!(state.below, below, "{spec}: {s} -> {t}");
                    assert!(
                        same_layers(&graph, &before, &layers),
                        "{spec}: {s} -> {t} undone"
                    );
                }
            }
            let what = format!("{spec} L={count}");
            assert_valid(&graph, &layers, lengths.as_ref(), &what);
            assert_bookkeeping(&state, &layers, &what);
        }
    }

    #[test]
    fn a_pair_repair_by_single_moves_only_ever_lowers_the_pairs_lacking_paths() {
        check(|state, layers, s, t| state.improve_pair(layers, s, t), 1);
    }

    #[test]
    fn a_compound_repair_is_kept_only_if_fewer_pairs_lack_paths() {
        check(|state, layers, s, t| state.eject_pair(layers, s, t), 3);
    }

    #[test]
    fn a_laid_path_is_kept_only_if_fewer_pairs_lack_paths() {
        check(
            |state, layers, s, t| {
                let ceiling = state
                    .loads
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0)
                    .max(state.cap);
                state.new_path(layers, s, t, ceiling)
            },
            3,
        );
    }
}
