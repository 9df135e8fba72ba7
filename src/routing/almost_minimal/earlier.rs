//! The earlier layers' next hops, side by side per (destination, switch).
//!
//! For every step it tries, the path search asks whether the step's edge is the next hop of its
//! tail towards t in any earlier layer. The layer tables keep each layer's rows apart, so that
//! question read one far-apart row per earlier layer, each a cache miss on large fabrics
//! (Slim Fly q = 19: a quarter of the search's time). A layer's searches leave the earlier
//! layers as they are, so the layer starts with this copy, where one switch's next hops of all
//! earlier layers share a cache line.

use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;
use rayon::prelude::*;

/// Layers 0..l's next hops, `next[(t * n + v) * l + k]`: v's edge towards t in layer k.
pub(super) struct EarlierRoutes {
    n: usize,
    count: usize,
    next: Vec<u32>,
}

impl EarlierRoutes {
    /// A copy of layers 0..l of `layers`.
    pub(super) fn new(layers: &Layers, l: usize) -> Self {
        let n = layers.switches();
        let mut next = vec![0u32; n * n * l];
        if l > 0 {
            next.par_chunks_mut(n * l).enumerate().for_each(|(t, row)| {
                for k in 0..l {
                    for (v, &e) in layers.next_row(k, t).iter().enumerate() {
                        row[v * l + k] = e;
                    }
                }
            });
        }
        Self { n, count: l, next }
    }

    /// v's next hops towards t in the earlier layers, by layer.
    pub(super) fn of(&self, v: usize, t: usize) -> &[u32] {
        let at = (t * self.n + v) * self.count;
        &self.next[at..at + self.count]
    }

    /// Whether v's route towards t in earlier layer k passes x (v itself included).
    pub(super) fn passes(
        &self,
        graph: &RoutingGraph,
        k: usize,
        mut v: usize,
        t: usize,
        x: usize,
    ) -> bool {
        while v != x {
            if v == t {
                return false;
            }
            match self.of(v, t)[k] {
                crate::routing::graph::NONE => return false,
                e => v = graph.edge_to[e as usize] as usize,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::config::PathLengths;
    use crate::routing::fixtures::{SMALL_FABRICS, graph, searched_layers};

    /// The copy against the layer tables it copies, next hops and routes.
    #[test]
    fn the_copy_reads_as_the_layers_it_copies() {
        for spec in SMALL_FABRICS {
            let graph = graph(spec);
            let layers = searched_layers(&graph, 4, Some(&PathLengths::default()), 1);
            let n = graph.len();
            for l in 0..=3 {
                let earlier = EarlierRoutes::new(&layers, l);
                for t in 0..n {
                    for v in 0..n {
                        let expected: Vec<u32> = (0..l).map(|k| layers.next_row(k, t)[v]).collect();
                        assert_eq!(earlier.of(v, t), expected, "{spec} l={l}");
                        for k in 0..l {
                            for x in 0..n {
                                assert_eq!(
                                    earlier.passes(&graph, k, v, t, x),
                                    layers.passes(&graph, k, v, t, x),
                                    "{spec} k={k} v={v} t={t} x={x}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
