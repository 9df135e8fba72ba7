//! The switch pairs a repair degraded: those with fewer edge-disjoint paths across the layers
//! than the previous routing gave them.
//!
//! A pair whose routes follow the same switches in every layer has the same count, so only
//! the pairs whose route passes a changed entry in some layer are counted — a few hundred
//! after a lost cable, where the fabric has tens of thousands — and the disjoint repair
//! reads and updates the same counts as it moves routes.

use super::{ChangedTrees, Mapping, target_paths};
use crate::routing::disjoint::{PathFlow, pair_disjoint};
use crate::routing::layers::Layers;

/// "Not counted yet."
const UNKNOWN: u8 = u8::MAX;

/// Edge-disjoint path counts of switch pairs (s, t), t with endpoints, at `t * n + s`: now,
/// and before the repair for the pairs whose routes changed.
pub(super) struct PairCounts {
    n: usize,
    /// Layers of the previous routing and of the repaired one.
    layers_before: usize,
    layers_now: usize,
    /// The previous routing's count of each pair whose routes changed ([`UNKNOWN`] for the
    /// others, whose count is the same before and after).
    before: Vec<u8>,
    /// The count in the repaired routing ([`UNKNOWN`] until asked for).
    now: Vec<u8>,
    /// The pairs whose routes changed, in the order found.
    touched: Vec<u32>,
    flow: PathFlow,
}

impl PairCounts {
    /// Nothing counted yet, for a repair into `layers_now` layers.
    pub(super) fn new(mapping: &Mapping<'_>, layers_now: usize) -> Self {
        let n = mapping.graph.len();
        Self {
            n,
            layers_before: mapping.previous.layers.count(),
            layers_now,
            before: vec![UNKNOWN; n * n],
            now: vec![UNKNOWN; n * n],
            touched: Vec::new(),
            flow: PathFlow::default(),
        }
    }

    /// Disjoint paths each pair should have ([`target_paths`]).
    pub(super) fn target(&self) -> u8 {
        target_paths(self.layers_now)
    }

    /// The pair's count in `layers` (the repaired routing), counted once and remembered.
    pub(super) fn now(&mut self, mapping: &Mapping<'_>, layers: &Layers, s: usize, t: usize) -> u8 {
        let i = t * self.n + s;
        if self.now[i] == UNKNOWN {
            self.now[i] =
                pair_disjoint(mapping.graph, layers, self.layers_now, s, t, &mut self.flow);
        }
        self.now[i]
    }

    /// Records that the pair's routes changed: its previous count is taken (once) and its
    /// count now is `count` (`None`: counted again from `layers`).
    pub(super) fn touch(
        &mut self,
        mapping: &Mapping<'_>,
        layers: &Layers,
        (s, t): (usize, usize),
        count: Option<u8>,
    ) {
        let i = t * self.n + s;
        if self.before[i] == UNKNOWN {
            let (Some(old_s), Some(old_t)) = (mapping.old_of[s], mapping.old_of[t]) else {
                return; // a new switch: no pair before
            };
            let previous = mapping.previous;
            self.before[i] = pair_disjoint(
                previous.graph,
                previous.layers,
                self.layers_before,
                old_s,
                old_t,
                &mut self.flow,
            );
            self.touched.push(i as u32);
        }
        self.now[i] = match count {
            Some(c) => c,
            None => pair_disjoint(mapping.graph, layers, self.layers_now, s, t, &mut self.flow),
        };
    }

    /// Touches every pair whose route passes an entry that changed, in a tree that changed.
    pub(super) fn touch_changed_routes(
        &mut self,
        mapping: &Mapping<'_>,
        layers: &Layers,
        trees: &ChangedTrees,
    ) {
        let graph = mapping.graph;
        let n = self.n;
        // Per switch of the tree: 0 unknown, 1 its route passes a changed entry, 2 it does not.
        let mut passes = vec![0u8; n];
        let mut chain = Vec::new();
        for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
            for l in (0..layers.count()).filter(|&l| trees.contains(l, t)) {
                passes.fill(0);
                passes[t] = 2;
                for v in 0..n {
                    let mut x = v;
                    let verdict = loop {
                        if passes[x] != 0 {
                            break passes[x];
                        }
                        chain.push(x);
                        if mapping.entry_changed(layers, l, x, t) {
                            break 1;
                        }
                        match layers.next_edge(l, x, t) {
                            Some(e) => x = graph.edge_to[e] as usize,
                            None => break 2,
                        }
                    };
                    for y in chain.drain(..) {
                        passes[y] = verdict;
                    }
                }
                for s in (0..n).filter(|&s| passes[s] == 1) {
                    if self.before[t * n + s] == UNKNOWN {
                        self.touch(mapping, layers, (s, t), None);
                    }
                }
            }
        }
    }

    /// Touches every pair of switches that exist before and after (after a full routing).
    pub(super) fn touch_all(&mut self, mapping: &Mapping<'_>, layers: &Layers) {
        let graph = mapping.graph;
        for t in (0..self.n).filter(|&t| graph.endpoints[t] > 0) {
            for s in (0..self.n).filter(|&s| s != t) {
                self.touch(mapping, layers, (s, t), None);
            }
        }
    }

    /// The touched pairs (s, t) whose count now is below the target, by destination.
    pub(super) fn short_of_target(&self) -> Vec<(usize, usize)> {
        let target = self.target();
        let mut short: Vec<(usize, usize)> = self
            .touched
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| self.now[i] < target)
            .map(|i| (i % self.n, i / self.n))
            .collect();
        short.sort_unstable_by_key(|&(s, t)| (t, s));
        short
    }

    /// (pairs with fewer disjoint paths than before, of which the ones that had the target
    /// and have fewer now).
    pub(super) fn tally(&self) -> (u64, u64) {
        let target = self.target();
        let mut degraded = 0;
        let mut below_target = 0;
        for &i in &self.touched {
            let (before, now) = (self.before[i as usize], self.now[i as usize]);
            if now < before {
                degraded += 1;
                below_target += u64::from(before >= target && now < target);
            }
        }
        (degraded, below_target)
    }
}
