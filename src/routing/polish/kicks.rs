//! Kicks out of local minima: where no move improves, a seeded kick moves a route off a most
//! loaded link — onto links that stay within the maximum if it can, else onto links it pushes
//! over by the moved load, which the descent then has to relieve (an ejection chain) — and the
//! kicked route is left alone for a while ([`TABU_MOVES`]).

use super::objective::{KICK_LOSS, load_change};
use super::state::State;
use crate::rng::Rng;
use crate::routing::layers::Layers;
use crate::routing::tree::MAX_ROUTE;

/// Kicked routes stay frozen for this many following moves.
pub(super) const TABU_MOVES: usize = 12;

impl State<'_> {
    /// Moves a random route off a random most loaded link onto links that stay at or below
    /// the maximum, without losing disjoint paths, and freezes it for a while. Returns whether
    /// a kick was made.
    pub(super) fn kick(
        &mut self,
        layers: &mut Layers,
        rng: &mut Rng,
        lost: &mut Vec<(usize, usize)>,
    ) -> bool {
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
                if load_change(&self.loads, &old[..ol], &new[..nl], load).peak
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

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_bookkeeping, cases, rebalanced};
    use super::*;
    use crate::routing::fixtures::assert_valid;

    #[test]
    fn a_kick_costs_at_most_its_allowance_and_freezes_the_kicked_route() {
        for (spec, count, lengths) in cases() {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            let mut rng = Rng::new(4);
            let mut lost = Vec::new();
            for _ in 0..5 {
                let below = state.below;
                if !state.kick(&mut layers, &mut rng, &mut lost) {
                    continue;
                }
                let what = format!("{spec} L={count}");
                assert!(state.below[0] - below[0] <= KICK_LOSS, "{what}");
                assert!(state.below[1] - below[1] <= KICK_LOSS, "{what}");
                let ((l, s, t), until) = *state.tabu.last().expect("kicked route frozen");
                assert_eq!(until, state.moves + TABU_MOVES, "{what}");
                state.build_tree(&layers, l, t);
                for edge in graph.edges(s) {
                    assert_eq!(state.valid(&layers, l, s, t, edge), None, "{what}: frozen");
                }
                let n = graph.len();
                for &(u, t) in &lost {
                    assert!(
                        state.disjoint[t * n + u] < 3,
                        "{what}: {u} -> {t} reported lost"
                    );
                }
                assert_valid(&graph, &layers, lengths.as_ref(), &what);
                assert_bookkeeping(&state, &layers, &what);
            }
        }
    }
}
