//! Fixtures of the local search's unit tests: routings as the rebalancing pass hands them to
//! the search, and the check that a state's bookkeeping is what its layers say.

use super::state::State;
use crate::routing::config::PathLengths;
use crate::routing::fixtures::{all_disjoint, graph, pairs_below, searched_layers};
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;
use crate::routing::rebalance::rebalance;
use crate::routing::tree::route_loads;

/// The routings the search's tests run over: every small fabric with four almost-minimal
/// layers, and with two minimal ones.
pub(super) fn cases() -> Vec<(&'static str, usize, Option<PathLengths>)> {
    crate::routing::fixtures::SMALL_FABRICS
        .iter()
        .flat_map(|&spec| [(spec, 4, Some(PathLengths::default())), (spec, 2, None)])
        .collect()
}

/// `count` layers of `spec` searched and rebalanced, as the driver hands them to the search,
/// with their link loads and disjoint-path counts.
pub(super) fn rebalanced(
    spec: &str,
    count: usize,
    lengths: Option<&PathLengths>,
) -> (RoutingGraph, Layers, Vec<u64>, Vec<u8>) {
    let graph = graph(spec);
    let mut layers = searched_layers(&graph, count, lengths, 1);
    let (loads, disjoint) = rebalance(&graph, &mut layers, lengths, None, 4, 0..count);
    (graph, layers, loads, disjoint)
}

/// Asserts that the state's loads, disjoint-path counts and pairs lacking paths are those of
/// `layers`, recomputed from scratch.
pub(super) fn assert_bookkeeping(state: &State<'_>, layers: &Layers, what: &str) {
    let graph = state.graph;
    let n = graph.len();
    assert_eq!(state.loads, route_loads(graph, layers), "{what}: loads");
    let disjoint = all_disjoint(graph, layers);
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t) {
            assert_eq!(
                state.disjoint[t * n + s],
                disjoint[t * n + s],
                "{what}: disjoint paths {s} -> {t}"
            );
        }
    }
    assert_eq!(
        state.below,
        pairs_below(graph, &disjoint),
        "{what}: pairs below"
    );
}
