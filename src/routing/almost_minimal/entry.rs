//! How much of a layer's tree into a destination t may enter t over one link.
//!
//! Every route into t ends on one of t's links. Left to the diversity damage alone, a
//! non-minimal layer's tree funnels through one or two of t's neighbours (those that route
//! straight to t repeat only their own layer-0 link), and those last links carry everyone.
//! The path search therefore judges a path, right after its damage to switches that need a
//! disjoint path in every remaining layer, by how far it overloads t's entry ([`TreeEntry`]).

use crate::routing::config::PathLengths;
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;

/// The most senders one link into t may carry in a non-minimal layer's tree into t, in units of
/// the share every link into t would carry if all carried the same, per mille, for `layers`
/// layers.
///
/// Every route into t ends on one of t's links, but in a non-minimal layer a neighbour of t
/// that routes straight to t repeats its layer-0 link, so the diversity damage alone lets one
/// or two neighbours carry everyone (Slim Fly q = 7, 2 layers: one link took all 97 switches'
/// routes, 4× the mean load). Capping each link makes more neighbours route straight; the
/// damage term chooses which, so over the layers a different few take the turn.
///
/// How tight: with 2 layers three disjoint paths are out of reach anyway and with 8 there are
/// layers to spare, so 2.5× the even share. With 4 layers a neighbour of t keeps three disjoint
/// paths only if it routes straight in at most one of the three non-minimal layers, so the cap
/// is looser (6×); and where no neighbour of t has a detour within the allowed lengths (girth
/// 5: Slim Fly q = 5) every link into t stays open anyway and a cap would only trade away
/// disjoint paths of the switches behind them, so there is none. Measured on Slim Fly
/// q ∈ {4, 5, 7, 8, 9}; see BENCHMARKS.md.
fn entry_cap_per_mille(
    graph: &RoutingGraph,
    t: usize,
    layers: usize,
    lengths: &PathLengths,
) -> Option<u64> {
    match layers {
        0..=2 | 8.. => Some(2500),
        _ if neighbours_can_detour(graph, t, lengths) => Some(6000),
        _ => None,
    }
}

/// Whether some neighbour y of t has a path to t other than the link y → t within the lengths
/// allowed for adjacent switches (2 or 3 hops by default).
fn neighbours_can_detour(graph: &RoutingGraph, t: usize, lengths: &PathLengths) -> bool {
    let longest = *lengths.range(1).end();
    let next_to_t = |v: usize| graph.edge_between(v, t).is_some();
    graph.edges(t).map(|e| graph.edge_to[e] as usize).any(|y| {
        graph.edges(y).map(|e| graph.edge_to[e] as usize).any(|a| {
            a != t
                && ((longest >= 2 && next_to_t(a))
                    || (longest >= 3
                        && graph
                            .edges(a)
                            .map(|e| graph.edge_to[e] as usize)
                            .any(|b| b != y && b != t && next_to_t(b))))
        })
    })
}

/// A cap no link reaches (sums of a few caps must not overflow).
const NO_CAP: u32 = u32::MAX / 64;

/// The cap on the senders one link into t carries in a non-minimal layer
/// ([`entry_cap_per_mille`] of the even share).
pub(super) fn entry_cap(
    graph: &RoutingGraph,
    t: usize,
    layers: usize,
    lengths: &PathLengths,
) -> u32 {
    let links = graph.edges(t).len().max(1) as u64;
    let senders: u64 = (0..graph.len())
        .filter(|&v| v != t)
        .map(|v| u64::from(graph.endpoints[v]))
        .sum();
    let Some(per_mille) = entry_cap_per_mille(graph, t, layers, lengths) else {
        return NO_CAP;
    };
    (senders * per_mille)
        .div_ceil(links * 1000)
        .min(u64::from(NO_CAP)) as u32
}

/// What a search into t needs of the layer's tree into t beyond the routes.
#[derive(Clone, Copy)]
pub(super) struct TreeEntry<'a> {
    /// Edge-disjoint paths of each switch towards t among the earlier layers.
    pub(super) disjoint: &'a [u8],
    /// Senders entering t from each neighbour in this layer so far.
    pub(super) entry: &'a [u32],
    /// The most senders one link into t should carry ([`entry_cap`]).
    pub(super) cap: u32,
    /// Room left under the cap on t's links that can still carry routes: those of
    /// neighbours without a route yet or routing straight to t.
    pub(super) open: u32,
    /// Senders still without a route towards t in this layer.
    pub(super) unrouted: u32,
}

impl TreeEntry<'_> {
    /// How far a path overloads the tree's entry: the senders `senders` it routes beyond the
    /// cap of the link `last` → t it enters on, plus the senders that would be left without
    /// room on t's open links once the path has closed `closed` of them (neighbours of t it
    /// routes on a detour).
    pub(super) fn overload(&self, last: usize, senders: u32, closed: u32) -> u32 {
        let room_last = self.cap.saturating_sub(self.entry[last]);
        let excess = senders.saturating_sub(room_last);
        let open = self
            .open
            .saturating_sub(senders.min(room_last))
            .saturating_sub(closed.saturating_mul(self.cap));
        excess + (self.unrouted - senders).saturating_sub(open)
    }
}

/// Room under the cap on the links into t that can still carry routes in layer l: links from
/// neighbours without a route yet or routing straight to t.
pub(super) fn open_room(
    graph: &RoutingGraph,
    layers: &Layers,
    l: usize,
    t: usize,
    entry: &[u32],
    cap: u32,
) -> u32 {
    graph
        .edges(t)
        .map(|e| graph.edge_to[e] as usize)
        .filter(|&y| layers.hops(l, y, t).is_none_or(|h| h == 1))
        .map(|y| cap.saturating_sub(entry[y]))
        .fold(0, u32::saturating_add)
}
