//! Fixtures for the routing files' unit tests: the small fabrics they run over, layers as the
//! path search leaves them (before rebalancing and polishing), and the checks every pass over
//! the layers must keep.
//!
//! The passes' tests build their input here rather than through the driver, so no file imports
//! the driver, tests included: this file sits just above the path search and below the passes.

use super::almost_minimal::{LayerState, almost_minimal_layer};
use super::cable_order::CableOrder;
use super::config::{PathLengths, longest_allowed};
use super::disjoint::count_disjoint;
use super::graph::{FAR, RoutingGraph};
use super::layers::{AttachScratch, Layers};
use crate::rng::Rng;
use crate::topology::{Fabric, NodeId, TopologySpec};

/// Small fabrics of each family the routing is built for, plus a random regular graph (no
/// structure to lean on): each routes in well under a second at opt-level 1.
pub(super) const SMALL_FABRICS: [&str; 4] = [
    "slimfly:q=4",
    "slimfly:q=5",
    "mlfm:d=3",
    "random:switches=20,degree=4,hosts=2,seed=3",
];

/// The routing graph of a topology spec.
pub(super) fn graph(spec: &str) -> RoutingGraph {
    let spec: TopologySpec = spec.parse().expect("valid spec");
    RoutingGraph::new(&spec.build().expect("buildable spec"))
}

/// `count` layers built as the driver builds them before its passes: layer 0 minimal and
/// balanced, every further layer almost-minimal within `lengths` (or minimal, without), each
/// completed along the fewest hops.
pub(super) fn searched_layers(
    graph: &RoutingGraph,
    count: usize,
    lengths: Option<&PathLengths>,
    seed: u64,
) -> Layers {
    let n = graph.len();
    let mut layers = Layers::new(n, count);
    let mut weights = vec![0u64; graph.edge_count()];
    let mut rng = Rng::new(seed);
    let mut scratch = AttachScratch::default();
    let mut levels = vec![0u8; n * n];
    let mut disjoint = vec![1u8; n * n];
    for l in 0..count {
        if let (Some(lengths), true) = (lengths, l > 0) {
            let state = LayerState {
                levels: &mut levels,
                disjoint: &disjoint,
                order: None,
            };
            almost_minimal_layer(
                graph,
                &mut layers,
                l,
                lengths,
                &mut weights,
                state,
                &mut rng,
            );
        }
        for t in 0..n {
            layers.attach(graph, l, t, &mut weights, |_| true, &mut scratch);
        }
        if l + 1 < count {
            count_disjoint(graph, &layers, l + 1, &mut disjoint);
        }
    }
    layers
}

/// Asserts what every pass must keep: in every layer, every switch's route to every reachable
/// destination is a loop-free path of as many hops as its hop count says, at least the
/// distance long, within the allowed length ([`longest_allowed`]: layer 0 minimal).
pub(super) fn assert_valid(
    graph: &RoutingGraph,
    layers: &Layers,
    lengths: Option<&PathLengths>,
    what: &str,
) {
    let n = graph.len();
    for l in 0..layers.count() {
        for t in 0..n {
            for s in (0..n).filter(|&s| s != t && graph.dist(s, t) != FAR) {
                let path = layers.path(graph, l, s, t).unwrap_or_else(|| {
                    panic!("{what}: layer {l}: {s} has no loop-free route to {t}")
                });
                let hops = path.len() - 1;
                assert_eq!(
                    layers.hops(l, s, t).map(usize::from),
                    Some(hops),
                    "{what}: layer {l}: hop count of {s} -> {t}"
                );
                let d = graph.dist(s, t);
                assert!(
                    (usize::from(d)..=longest_allowed(lengths, l, d)).contains(&hops),
                    "{what}: layer {l}: {s} -> {t} takes {hops} hops at distance {d}"
                );
            }
        }
    }
}

/// Asserts that every switch connected to a destination has a loop-free route to it in every
/// layer, and that the route's cables, walked one by one, rise and then fall in `order`.
/// Returns the routes longer than [`longest_allowed`] for `lengths`, per layer.
pub(super) fn assert_unimodal(
    graph: &RoutingGraph,
    layers: &Layers,
    order: &CableOrder,
    lengths: Option<&PathLengths>,
    what: &str,
) -> Vec<usize> {
    let n = graph.len();
    let mut too_long = vec![0; layers.count()];
    for (l, too_long) in too_long.iter_mut().enumerate() {
        for t in 0..n {
            for s in (0..n).filter(|&s| s != t && graph.dist(s, t) != FAR) {
                let path = layers.path(graph, l, s, t).unwrap_or_else(|| {
                    panic!("{what}: layer {l}: {s} has no loop-free route to {t}")
                });
                let edges: Vec<usize> = path
                    .windows(2)
                    .map(|w| graph.edge_between(w[0], w[1]).expect("a cable"))
                    .collect();
                assert!(
                    order.is_unimodal(&edges),
                    "{what}: layer {l}: {s} -> {t} is a valley: {path:?}"
                );
                assert_eq!(
                    layers.hops(l, s, t).map(usize::from),
                    Some(edges.len()),
                    "{what}: layer {l}: hop count of {s} -> {t}"
                );
                let d = graph.dist(s, t);
                *too_long += usize::from(edges.len() > longest_allowed(lengths, l, d));
            }
        }
    }
    too_long
}

/// The routing graph of `spec` with every `every`-th cable between two switches cut (a
/// damaged fabric; it may fall apart).
pub(super) fn damaged(spec: &str, every: usize) -> RoutingGraph {
    let spec: TopologySpec = spec.parse().expect("valid spec");
    let whole = spec.build().expect("buildable spec");
    RoutingGraph::new(&after_losses(&whole, |i| (i + 1) % every == 0, |_| false))
}

/// `whole` without the cables between two switches that `cut` names by their index among
/// those cables (from 0, in cable order) and without the nodes `gone` names.
pub(super) fn after_losses(
    whole: &Fabric,
    cut: impl Fn(usize) -> bool,
    gone: impl Fn(NodeId) -> bool,
) -> Fabric {
    let mut index = 0;
    let lost: Vec<bool> = whole
        .links()
        .iter()
        .map(|l| {
            let between = whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch();
            index += usize::from(between);
            between && cut(index - 1)
        })
        .collect();
    whole.after_losses(gone, |l| lost[l.0 as usize])
}

/// The pairs with fewer than three, and fewer than two, edge-disjoint paths in `disjoint`
/// (`t * n + s`, destinations with endpoints).
pub(super) fn pairs_below(graph: &RoutingGraph, disjoint: &[u8]) -> [i64; 2] {
    let n = graph.len();
    let mut below = [0i64; 2];
    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
        for s in (0..n).filter(|&s| s != t) {
            below[0] += i64::from(disjoint[t * n + s] < 3);
            below[1] += i64::from(disjoint[t * n + s] < 2);
        }
    }
    below
}

/// Edge-disjoint path counts of every pair across all layers (`t * n + s`).
pub(super) fn all_disjoint(graph: &RoutingGraph, layers: &Layers) -> Vec<u8> {
    let n = graph.len();
    let mut disjoint = vec![0u8; n * n];
    count_disjoint(graph, layers, layers.count(), &mut disjoint);
    disjoint
}

/// Every next hop and hop count of `a` and `b` agree.
pub(super) fn same_layers(graph: &RoutingGraph, a: &Layers, b: &Layers) -> bool {
    let n = graph.len();
    a.count() == b.count()
        && (0..a.count()).all(|l| {
            (0..n).all(|t| {
                (0..n).all(|s| {
                    a.next_edge(l, s, t) == b.next_edge(l, s, t)
                        && a.hops(l, s, t) == b.hops(l, s, t)
                })
            })
        })
}
