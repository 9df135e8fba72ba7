//! Layers 1 to 3 on fabrics of diameter 2 and girth 5 (Slim Fly q = 5), laid from the splits
//! the cable order was designed for ([`cable_order::split`](super::cable_order::split)): in
//! each layer towards t, t's neighbours route directly, a switch at distance 2 routes
//! minimally in its minimal layer and in the other two detours through the least loaded
//! neighbour whose minimal layer it is. Every switch a split serves gets three edge-disjoint
//! paths with layer 0, every route is unimodal in the order and keeps the length rule
//! (2 and 3 hops), and the later passes balance the loads without losing a path.
//!
//! The path search of the other fabrics (`almost_minimal`) finds 2020–2070 of the 2100
//! pairs there: it lays one path at a time, and on these fabrics a detour exists only through
//! a neighbour that stays minimal, which a path-by-path search cannot plan for.

use super::cable_order::CableOrder;
use super::cable_order::split::{MinimalLayers, via};
use super::graph::RoutingGraph;
use super::layers::Layers;

/// Routes layer l (1 to [`SPLIT_LAYERS`](super::cable_order::split::SPLIT_LAYERS)) towards
/// every destination, adding the routes' loads (sending endpoints ×
/// receiving endpoints) to `weights`; `levels` (`t * n + s`) counts the non-minimal paths
/// each pair obtained, for the layers the path search lays after these.
pub(super) fn lay_split_layer(
    graph: &RoutingGraph,
    layers: &mut Layers,
    l: usize,
    minimal: &MinimalLayers,
    order: &CableOrder,
    weights: &mut [u64],
    levels: &mut [u8],
) {
    let n = graph.len();
    for t in 0..n {
        let receivers = u64::from(graph.endpoints[t]);
        let far: Vec<usize> = (0..n).filter(|&s| graph.dist(s, t) == 2).collect();
        let load = |s: usize| u64::from(graph.endpoints[s]) * receivers;
        for s in (0..n).filter(|&s| graph.dist(s, t) == 1) {
            let e = graph.edge_between(s, t).expect("a neighbour");
            layers.set(l, s, t, e, 1);
            layers.load_chain(graph, l, s, t, load(s), weights);
        }
        // Minimal routes first: the detours go through them.
        let detours = |s: usize| minimal.of(s, t) != 0 && usize::from(minimal.of(s, t)) != l;
        for &s in far.iter().filter(|&&s| !detours(s)) {
            let e = graph
                .edge_between(s, via(graph, s, t))
                .expect("a neighbour");
            layers.set(l, s, t, e, 2);
            layers.load_chain(graph, l, s, t, load(s), weights);
        }
        for &s in far.iter().filter(|&&s| detours(s)) {
            let (e, _) = graph
                .edges(s)
                .filter(|&e| usize::from(minimal.of(graph.edge_to[e] as usize, t)) == l)
                .filter_map(|e| {
                    let v = graph.edge_to[e] as usize;
                    let next = layers.next_edge(l, v, t)?;
                    let last = layers.next_edge(l, graph.edge_to[next] as usize, t)?;
                    let path = [e, next, last];
                    order
                        .is_unimodal(&path)
                        .then(|| (e, path.iter().map(|&x| weights[x]).sum::<u64>()))
                })
                .min_by_key(|&(e, cost)| (cost, e))
                .expect("a split serves a switch only through a neighbour it may detour through");
            layers.set(l, s, t, e, 3);
            layers.load_chain(graph, l, s, t, load(s), weights);
            levels[t * n + s] += 1;
        }
    }
}
