//! The switches that can still reach a destination in one more hop.
//!
//! A path search that has one hop left after its next step may only step onto t or onto a switch
//! next to t: any other switch is at least two hops from t, and a route from it is never shorter.
//! Trying every edge of a switch to find those few dominated the search — each try reads the
//! head's route and distance, far apart in memory (on Slim Fly q = 19 a switch has 28 or 29
//! edges and one or two of them lead next to t) — so the search marks t's neighbourhood once in
//! a bit set and tries only the marked heads.

use crate::routing::graph::RoutingGraph;

/// The tails of the edges into each switch.
pub(super) struct Inbound {
    /// `offsets[t]..offsets[t + 1]` index `tails`.
    offsets: Vec<u32>,
    tails: Vec<u32>,
}

impl Inbound {
    pub(super) fn new(graph: &RoutingGraph) -> Self {
        let n = graph.len();
        let mut counts = vec![0u32; n + 1];
        for &head in &graph.edge_to {
            counts[head as usize + 1] += 1;
        }
        for t in 0..n {
            counts[t + 1] += counts[t];
        }
        let offsets = counts.clone();
        let mut tails = vec![0u32; graph.edge_count()];
        for (e, &head) in graph.edge_to.iter().enumerate() {
            let slot = &mut counts[head as usize];
            tails[*slot as usize] = graph.edge_from[e];
            *slot += 1;
        }
        Self { offsets, tails }
    }

    /// The switches with an edge into t.
    fn into(&self, t: usize) -> &[u32] {
        &self.tails[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }
}

/// The switches at most one hop from one destination (t and the tails of its incoming edges),
/// as a bit set over the switches.
#[derive(Default)]
pub(super) struct NearMarks {
    bits: Vec<u64>,
    /// The destination marked, if any.
    marked: Option<usize>,
}

impl NearMarks {
    /// Marks t's neighbourhood, unmarking the last destination's.
    pub(super) fn mark(&mut self, inbound: &Inbound, t: usize) {
        if self.marked == Some(t) {
            return;
        }
        if let Some(last) = self.marked {
            for &v in inbound.into(last).iter().chain(&[last as u32]) {
                self.bits[v as usize / 64] = 0;
            }
        }
        let words = (inbound.offsets.len() - 1).div_ceil(64);
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
        for &v in inbound.into(t).iter().chain(&[t as u32]) {
            self.bits[v as usize / 64] |= 1 << (v % 64);
        }
        self.marked = Some(t);
    }

    /// Whether v is the marked destination or next to it.
    pub(super) fn contains(&self, v: usize) -> bool {
        self.bits[v / 64] & (1 << (v % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::fixtures::{SMALL_FABRICS, graph};

    /// Against the definition, for every destination in turn (each marking clears the last).
    #[test]
    fn the_marks_are_exactly_the_switches_at_most_one_hop_from_t() {
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let inbound = Inbound::new(&graph);
            let mut marks = NearMarks::default();
            for t in (0..graph.len()).chain([0, 0]) {
                marks.mark(&inbound, t);
                for v in 0..graph.len() {
                    assert_eq!(
                        marks.contains(v),
                        graph.dist(v, t) <= 1,
                        "{spec} v={v} t={t}"
                    );
                }
            }
        }
    }
}
