//! Link-load rebalancing of finished layers.
//!
//! The layered search picks each pair's path by diversity damage first and link weight only
//! among equally damaging paths, in pair order. That order decides early which switches carry
//! a destination's other switches in a non-minimal layer, so each such tree into a destination
//! t funnels through a few of t's neighbours and the last links into t end up overloaded (on
//! Slim Fly q = 7 with 4 layers the busiest cable carried 1.9× the mean). Once every layer is
//! complete the whole load is known, so this pass moves whole subtrees between parents:
//!
//! * a switch s re-points its next hop towards t in layer l to another neighbour w whose route
//!   does not pass s (so the tree stays loop-free); s's subtree follows it;
//! * every switch of the subtree stays within its allowed length (layer 0 and minimal layers:
//!   exactly the distance; layered layers: at most max(d + 1, 3) hops, the bound the deadlock
//!   colouring needs);
//! * no switch of the subtree loses edge-disjoint paths towards t across all layers, unless it
//!   keeps at least [`DISJOINT_TARGET`] of them;
//! * the move must lower the sum of the squared link loads (loads are routes: sending
//!   endpoints × receiving endpoints, as the analyser counts them), which evens out the loads
//!   and lowers the maximum without a global optimisation.
//!
//! * with a cable order ([`Turns::Unimodal`](super::config::Turns)), every route of the
//!   subtree stays unimodal in it;
//!
//! Moves are tried switch by switch, in a fixed order, for a few rounds until none helps, so
//! the result is deterministic.

use super::cable_order::CableOrder;
use super::config::{PathLengths, longest_allowed};
use super::disjoint::{DISJOINT_TARGET, PathFlow, count_disjoint, pair_disjoint};
use super::graph::RoutingGraph;
use super::layers::Layers;
use super::tree::{MAX_ROUTE, Tree, prefix_loads, walk};
use std::ops::Range;

/// Rebalances the link load of the layers `0..movable.end` of `layers` (see the module
/// documentation), moving routes of the layers in `movable` only: the layers below are a
/// prefix balanced before, and stay as they are so that it stays balanced on its own; the
/// layers above do not count (a prefix is balanced for the traffic split over it alone).
/// `lengths` bounds the layers after layer 0 (`None`: every layer stays minimal). Returns the
/// resulting link loads, per directed edge, and the edge-disjoint paths across all layers of
/// every pair (s, t), `t * n + s`, for the destinations t with endpoints. With `cables`, every
/// route stays unimodal in that order.
pub(super) fn rebalance(
    graph: &RoutingGraph,
    layers: &mut Layers,
    lengths: Option<&PathLengths>,
    cables: Option<&CableOrder>,
    rounds: usize,
    movable: Range<usize>,
) -> (Vec<u64>, Vec<u8>) {
    let n = graph.len();
    let mut loads = prefix_loads(graph, layers, movable.end);
    let mut disjoint = vec![0u8; n * n];
    count_disjoint(graph, layers, layers.count(), &mut disjoint);
    let mut pass = Pass {
        graph,
        lengths,
        cables,
        stack: Vec::new(),
        mean: 0,
        loads: &mut loads,
        disjoint: &mut disjoint,
        tree: Tree::default(),
        flow: PathFlow::default(),
        members: Vec::new(),
        candidates: Vec::new(),
        checked: Vec::new(),
    };
    for _ in 0..rounds {
        let mut moved = 0;
        pass.mean = pass.loads.iter().sum::<u64>() / pass.loads.len().max(1) as u64;
        for l in movable.clone() {
            for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                moved += pass.destination(layers, l, t);
            }
        }
        if moved == 0 {
            break;
        }
    }
    (loads, disjoint)
}

/// A candidate move: s's new edge, its new hop count, and the change in the sum of squared
/// loads (divided by the subtree's load).
#[derive(Clone, Copy)]
struct Candidate {
    gain: i64,
    edge: u32,
    hops: u8,
}

/// Buffers and state of the pass.
struct Pass<'a> {
    graph: &'a RoutingGraph,
    lengths: Option<&'a PathLengths>,
    /// The order every route stays unimodal in, or `None`: any turns.
    cables: Option<&'a CableOrder>,
    stack: Vec<(u32, crate::routing::cable_order::Shape)>,
    loads: &'a mut [u64],
    /// Mean link load (moves keep the total unless they change route lengths; a guide only).
    mean: u64,
    /// Edge-disjoint paths across all layers, `t * n + s`.
    disjoint: &'a mut [u8],
    tree: Tree,
    flow: PathFlow,
    members: Vec<u32>,
    candidates: Vec<Candidate>,
    /// New disjoint-path counts of the subtree members under the candidate being checked.
    checked: Vec<u8>,
}

impl Pass<'_> {
    /// Tries to move every switch's subtree in layer l's tree into t; returns the moves made.
    fn destination(&mut self, layers: &mut Layers, l: usize, t: usize) -> usize {
        let graph = self.graph;
        let n = graph.len();
        self.tree.build(graph, layers, l, t);
        if let Some(cables) = self.cables {
            self.tree.build_shapes(graph, layers, cables, l, t);
        }
        let receivers = u64::from(graph.endpoints[t]);
        let mut moved = 0;
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        for s in (0..n).filter(|&s| s != t) {
            let (Some(e0), Some(hs)) = (layers.next_edge(l, s, t), layers.hops(l, s, t)) else {
                continue;
            };
            let load = self.tree.senders[s] * receivers;
            if load == 0 || usize::from(hs) > MAX_ROUTE {
                continue;
            }
            let old_len = walk(graph, layers, l, s, t, &mut old);
            // Moving load off links that are all below the mean cannot lower the maximum;
            // skipping those routes keeps the later rounds cheap.
            if old[..old_len]
                .iter()
                .all(|&e| self.loads[e as usize] <= self.mean)
            {
                continue;
            }
            self.tree.subtree(s, &mut self.members);
            let slack = self
                .members
                .iter()
                .map(|&u| {
                    let u = u as usize;
                    let h = usize::from(layers.hops(l, u, t).expect("routed"));
                    longest_allowed(self.lengths, l, graph.dist(u, t)).saturating_sub(h)
                })
                .min()
                .unwrap_or(0);
            self.candidates.clear();
            for e in graph.edges(s).filter(|&e| e != e0) {
                let w = graph.edge_to[e] as usize;
                let Some(hw) = layers.hops(l, w, t) else {
                    continue;
                };
                let hops = usize::from(hw) + 1;
                if hops > usize::from(hs) + slack || hops > MAX_ROUTE {
                    continue;
                }
                new[0] = e as u32;
                let tail = walk(graph, layers, l, w, t, &mut new[1..]);
                let new_len = 1 + tail;
                if new[1..new_len]
                    .iter()
                    .any(|&x| graph.edge_from[x as usize] as usize == s)
                {
                    continue; // w's route passes s: re-pointing would close a loop
                }
                // The gain first: it is cheap and rules out most moves.
                let gain = self.gain(&old[..old_len], &new[..new_len], load);
                if gain >= 0 {
                    continue;
                }
                if let Some(cables) = self.cables {
                    let tree = &self.tree;
                    if !tree.keeps_unimodal(graph, layers, cables, (l, s, t), e, &mut self.stack) {
                        continue;
                    }
                }
                self.candidates.push(Candidate {
                    gain,
                    edge: e as u32,
                    hops: hops as u8,
                });
            }
            self.candidates.sort_unstable_by_key(|c| (c.gain, c.edge));
            for i in 0..self.candidates.len() {
                let c = self.candidates[i];
                layers.set(l, s, t, c.edge as usize, c.hops);
                if self.keeps_diversity(layers, t) {
                    let new_len = {
                        new[0] = c.edge;
                        let w = graph.edge_to[c.edge as usize] as usize;
                        1 + walk(graph, layers, l, w, t, &mut new[1..])
                    };
                    self.apply(
                        layers,
                        (l, s, t),
                        &old[..old_len],
                        &new[..new_len],
                        i64::from(c.hops) - i64::from(hs),
                    );
                    if let Some(cables) = self.cables {
                        self.tree.reshape(graph, layers, cables, (l, s, t));
                    }
                    moved += 1;
                    break;
                }
                layers.set(l, s, t, e0, hs);
            }
        }
        moved
    }

    /// The change of the sum of squared loads when `load` moves from the `old` edges to the
    /// `new` ones, divided by `load`: Σ new (2w + load) − Σ old (2w − load) over the edges the
    /// two routes do not share.
    fn gain(&self, old: &[u32], new: &[u32], load: u64) -> i64 {
        let load = load as i64;
        let added: i64 = new
            .iter()
            .filter(|e| !old.contains(e))
            .map(|&e| 2 * self.loads[e as usize] as i64 + load)
            .sum();
        let removed: i64 = old
            .iter()
            .filter(|e| !new.contains(e))
            .map(|&e| 2 * self.loads[e as usize] as i64 - load)
            .sum();
        added - removed
    }

    /// Whether every member of the moved subtree keeps its edge-disjoint paths towards t (or
    /// at least [`DISJOINT_TARGET`] of them) with the routes as they are now; the new counts
    /// are left in `checked`.
    fn keeps_diversity(&mut self, layers: &Layers, t: usize) -> bool {
        let n = self.graph.len();
        self.checked.clear();
        for &u in &self.members {
            let u = u as usize;
            let before = self.disjoint[t * n + u];
            let after = pair_disjoint(self.graph, layers, layers.count(), u, t, &mut self.flow);
            if after < before.min(DISJOINT_TARGET) {
                return false;
            }
            self.checked.push(after);
        }
        true
    }

    /// Records an accepted move of s's subtree (already re-pointed in `layers`) from the `old`
    /// route to the `new` one: loads, subtree senders, children, hop counts and disjoint paths.
    fn apply(
        &mut self,
        layers: &mut Layers,
        (l, s, t): (usize, usize, usize),
        old: &[u32],
        new: &[u32],
        delta: i64,
    ) {
        let graph = self.graph;
        let n = graph.len();
        let senders = self.tree.senders[s];
        let load = senders * u64::from(graph.endpoints[t]);
        for &e in old {
            self.loads[e as usize] -= load;
        }
        for &e in new {
            self.loads[e as usize] += load;
        }
        for &e in &old[1..] {
            self.tree.senders[graph.edge_from[e as usize] as usize] -= senders;
        }
        for &e in &new[1..] {
            self.tree.senders[graph.edge_from[e as usize] as usize] += senders;
        }
        let old_parent = graph.edge_to[old[0] as usize] as usize;
        let new_parent = graph.edge_to[new[0] as usize] as usize;
        self.tree.children[old_parent].retain(|&v| v as usize != s);
        self.tree.children[new_parent].push(s as u32);
        for (&u, &after) in self.members.iter().zip(&self.checked) {
            let u = u as usize;
            self.disjoint[t * n + u] = after;
            if delta != 0 && u != s {
                let e = layers.next_edge(l, u, t).expect("routed");
                let h = i64::from(layers.hops(l, u, t).expect("routed")) + delta;
                layers.set(l, u, t, e, h as u8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::fixtures::{
        SMALL_FABRICS, all_disjoint, assert_valid, graph, same_layers, searched_layers,
    };
    use crate::routing::tree::route_loads;

    /// Every small fabric with four almost-minimal layers and with two minimal ones, searched
    /// (seed 1) and then rebalanced; before and after.
    fn cases() -> Vec<(String, RoutingGraph, Option<PathLengths>, Layers, Layers)> {
        let mut cases = Vec::new();
        for spec in SMALL_FABRICS {
            for (count, lengths) in [(4, Some(PathLengths::default())), (2, None)] {
                let graph = graph(spec);
                let before = searched_layers(&graph, count, lengths.as_ref(), 1);
                let mut after = before.clone();
                {
                    let count = after.count();
                    rebalance(&graph, &mut after, lengths.as_ref(), None, 4, 0..count)
                };
                cases.push((format!("{spec} L={count}"), graph, lengths, before, after));
            }
        }
        cases
    }

    fn squares(loads: &[u64]) -> u128 {
        loads.iter().map(|&x| u128::from(x) * u128::from(x)).sum()
    }

    #[test]
    fn rebalanced_layers_stay_loop_free_trees_within_their_lengths() {
        for (what, graph, lengths, _, after) in cases() {
            assert_valid(&graph, &after, lengths.as_ref(), &what);
        }
    }

    #[test]
    fn the_sum_of_squared_loads_never_grows() {
        for (what, graph, _, before, after) in cases() {
            let (old, new) = (route_loads(&graph, &before), route_loads(&graph, &after));
            assert!(squares(&new) <= squares(&old), "{what}");
        }
    }

    #[test]
    fn no_pair_loses_disjoint_paths_below_the_target() {
        for (what, graph, _, before, after) in cases() {
            let n = graph.len();
            let (old, new) = (all_disjoint(&graph, &before), all_disjoint(&graph, &after));
            for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                for s in (0..n).filter(|&s| s != t) {
                    let (old, new) = (old[t * n + s], new[t * n + s]);
                    assert!(
                        new >= old.min(DISJOINT_TARGET),
                        "{what}: {s} -> {t}: {old} -> {new}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_returned_loads_and_counts_are_those_of_the_layers() {
        for (what, graph, lengths, before, _) in cases() {
            let n = graph.len();
            let mut layers = before.clone();
            let (loads, disjoint) = {
                let count = layers.count();
                rebalance(&graph, &mut layers, lengths.as_ref(), None, 4, 0..count)
            };
            assert_eq!(loads, route_loads(&graph, &layers), "{what}");
            let recount = all_disjoint(&graph, &layers);
            for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                for s in (0..n).filter(|&s| s != t) {
                    assert_eq!(
                        disjoint[t * n + s],
                        recount[t * n + s],
                        "{what}: {s} -> {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn rebalancing_is_deterministic() {
        for (what, graph, lengths, before, after) in cases() {
            let mut again = before.clone();
            {
                let count = again.count();
                rebalance(&graph, &mut again, lengths.as_ref(), None, 4, 0..count)
            };
            assert!(same_layers(&graph, &after, &again), "{what}");
        }
    }

    #[test]
    fn no_rounds_change_nothing() {
        for (what, graph, lengths, before, _) in cases() {
            let mut layers = before.clone();
            {
                let count = layers.count();
                rebalance(&graph, &mut layers, lengths.as_ref(), None, 0, 0..count)
            };
            assert!(same_layers(&graph, &before, &layers), "{what}");
        }
    }
}
