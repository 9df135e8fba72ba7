//! The descent on the link loads: the best move off the most loaded link that allows one,
//! repeated until none improves the loads sorted from the largest down.
//!
//! Candidates come from the routes through the most loaded links only ([`SCAN_EDGES`]): a move
//! elsewhere barely changes the maximum, and scanning every link would spend the budget on
//! them.

use super::objective::load_change;
use super::state::{Move, State};
use crate::routing::layers::Layers;
use crate::routing::tree::MAX_ROUTE;

/// Links the descent scans for an improving move, from the most loaded down, before it
/// counts as stuck (an improvement further down barely matters for the maximum).
const SCAN_EDGES: usize = 24;

impl State<'_> {
    /// The candidate moves of the routes through edge e: every switch whose route in some
    /// layer passes e, to every other neighbour allowed.
    pub(super) fn moves_through(&mut self, layers: &Layers, e: usize, found: &mut Vec<Move>) {
        let graph = self.graph;
        let n = graph.len();
        let a = graph.edge_from[e] as usize;
        found.clear();
        for l in self.movable_layers(layers) {
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
    pub(super) fn load_step(&mut self, layers: &mut Layers) -> bool {
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
                let effect = load_change(&self.loads, &old[..ol], &new[..nl], load);
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_bookkeeping, cases, rebalanced};
    use super::*;
    use crate::routing::fixtures::assert_valid;

    #[test]
    fn every_load_step_improves_the_sorted_loads_within_the_allowed_pairs() {
        for (spec, count, lengths) in cases() {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, 1_000_000);
            let what = format!("{spec} L={count}");
            for _ in 0..20 {
                let (sorted, below) = (state.sorted_loads(), state.below);
                if !state.load_step(&mut layers) {
                    break;
                }
                assert!(state.sorted_loads() < sorted, "{what}");
                let allowed = below.iter().zip(&state.floor).map(|(&b, &f)| b.max(f));
                assert!(
                    state
                        .below
                        .iter()
                        .zip(allowed)
                        .all(|(&now, most)| now <= most),
                    "{what}"
                );
            }
            assert_valid(&graph, &layers, lengths.as_ref(), &what);
            assert_bookkeeping(&state, &layers, &what);
        }
    }
}
