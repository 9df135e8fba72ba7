//! What the local search minimises, compared lexicographically: first the pairs lacking
//! disjoint paths (below three, then below two), then the link loads sorted from the largest
//! down — and how one move changes it.
//!
//! A move changes the loads of the few links its old and new routes do not share
//! ([`load_change`]), and the disjoint paths of the switches of the subtree it moves
//! ([`State::diversity_change`]); both are computed without making the move for good, so the
//! search can rank candidates cheaply.

use super::state::{Move, State};
use crate::routing::disjoint::pair_disjoint;
use crate::routing::layers::Layers;
use crate::routing::tree::MAX_ROUTE;

/// Pairs a kick may cost three (or two) disjoint paths, for the repair that follows to win
/// back.
pub(super) const KICK_LOSS: i64 = 1;

/// A candidate's effect on the link loads.
#[derive(Debug, Clone, Copy)]
pub(super) struct LoadChange {
    /// Whether the sorted loads improve.
    pub(super) improves: bool,
    /// The largest new load on a changed link.
    pub(super) peak: u64,
    /// Change of the sum of squared loads.
    pub(super) squares: i128,
}

/// How a move for a pair lacking disjoint paths ranks: the change of the pairs below three and
/// two disjoint paths, the largest new load, the change of the sum of squared loads.
pub(super) type PairKey = ([i64; 2], u64, i128);

/// The effect on `loads` of moving `load` from the `old` route to the `new` one.
pub(super) fn load_change(loads: &[u64], old: &[u32], new: &[u32], load: u64) -> LoadChange {
    let mut before = [0u64; 2 * MAX_ROUTE];
    let mut after = [0u64; 2 * MAX_ROUTE];
    let mut k = 0;
    let mut squares = 0i128;
    for &e in old.iter().filter(|e| !new.contains(e)) {
        let x = loads[e as usize];
        before[k] = x;
        after[k] = x - load;
        k += 1;
    }
    for &e in new.iter().filter(|e| !old.contains(e)) {
        let x = loads[e as usize];
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

/// Whether `a` counts fewer pairs lacking disjoint paths than `b`: none more below either
/// count, and some fewer.
pub(super) fn fewer(a: [i64; 2], b: [i64; 2]) -> bool {
    a[0] <= b[0] && a[1] <= b[1] && a != b
}

impl State<'_> {
    /// Whether a load move that changes the pairs lacking disjoint paths by `change` may be
    /// made: never one that loses any while the maximum load is within the cap; over it, down
    /// to the counts the pass started with.
    pub(super) fn accepts(&self, change: [i64; 2]) -> bool {
        let max = self.loads.iter().copied().max().unwrap_or(0);
        if max > self.cap {
            self.below[0] + change[0] <= self.floor[0].max(self.below[0])
                && self.below[1] + change[1] <= self.floor[1].max(self.below[1])
        } else {
            change[0] <= 0 && change[1] <= 0
        }
    }

    pub(super) fn sorted_loads(&self) -> Vec<u64> {
        let mut sorted = self.loads.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        sorted
    }

    /// The change of the pairs below three and below two disjoint paths if `mv` is made; the
    /// subtree's new counts are left in `checked` (`members` must hold s's subtree).
    pub(super) fn diversity_change(&mut self, layers: &mut Layers, mv: Move) -> [i64; 2] {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn sorted_down(mut loads: Vec<u64>) -> Vec<u64> {
        loads.sort_unstable_by(|a, b| b.cmp(a));
        loads
    }

    #[test]
    fn load_change_judges_a_move_as_the_whole_sorted_loads_would() {
        let mut rng = Rng::new(11);
        for case in 0..2000 {
            let edges = 2 + rng.below(10) as usize;
            let load = 1 + rng.below(6);
            let loads: Vec<u64> = (0..edges).map(|_| load + rng.below(12)).collect();
            let mut pick = |len: u64| -> Vec<u32> {
                let mut route: Vec<u32> = (0..edges as u32).collect();
                rng.shuffle(&mut route);
                route.truncate(1 + rng.below(len) as usize);
                route
            };
            let (old, new) = (pick(4), pick(4));
            let mut after = loads.clone();
            for &e in &old {
                after[e as usize] -= load;
            }
            for &e in &new {
                after[e as usize] += load;
            }
            let change = load_change(&loads, &old, &new, load);
            let what = format!("case {case}: {loads:?} {old:?} -> {new:?} by {load}");
            assert_eq!(
                change.improves,
                sorted_down(after.clone()) < sorted_down(loads.clone()),
                "{what}"
            );
            let squares = |x: &[u64]| {
                x.iter()
                    .map(|&v| i128::from(v) * i128::from(v))
                    .sum::<i128>()
            };
            assert_eq!(change.squares, squares(&after) - squares(&loads), "{what}");
            let changed = old
                .iter()
                .chain(&new)
                .filter(|e| !(old.contains(e) && new.contains(e)));
            let peak = changed.map(|&e| after[e as usize]).max().unwrap_or(0);
            assert_eq!(change.peak, peak, "{what}");
        }
    }

    #[test]
    fn fewer_means_no_count_higher_and_one_lower() {
        for a in (0..4).flat_map(|x| (0..4).map(move |y| [x, y])) {
            for b in (0..4).flat_map(|x| (0..4).map(move |y| [x, y])) {
                let want = a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
                assert_eq!(fewer(a, b), want, "{a:?} {b:?}");
            }
        }
    }
}
