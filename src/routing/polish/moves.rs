//! The one kind of move the search makes, and its bookkeeping.
//!
//! A switch s re-points its next hop towards t in one layer to a neighbour whose route does not
//! pass s, so the layer stays a loop-free tree into t; s's subtree follows, and every switch of
//! it stays within its allowed length, and unimodal in the cable order if there is one
//! ([`State::valid`]). Making a move ([`State::apply`])
//! updates the loads, the disjoint-path counts and the hop counts of the subtree, and, while a
//! compound change is being tried, records the move that undoes it ([`State::begin`],
//! [`State::end`]).

use super::state::{Move, State};
use crate::routing::layers::Layers;
use crate::routing::tree::{MAX_ROUTE, walk};

impl State<'_> {
    /// Whether s may re-point to `edge` in layer l's tree into t (which `self.tree` holds):
    /// the move and its hop count, or `None`.
    pub(super) fn valid(
        &self,
        layers: &Layers,
        l: usize,
        s: usize,
        t: usize,
        edge: usize,
    ) -> Option<Move> {
        let graph = self.graph;
        if !self.movable.contains(&l) {
            return None; // a layer of the prefix balanced before, or one the loads omit
        }
        let e0 = layers.next_edge(l, s, t)?;
        if edge == e0 || self.tabu.iter().any(|&(key, _)| key == (l, s, t)) {
            return None;
        }
        let hs = i32::from(layers.hops(l, s, t)?);
        if hs as usize > MAX_ROUTE {
            return None;
        }
        let w = graph.edge_to[edge] as usize;
        let hops = i32::from(layers.hops(l, w, t)?) + 1;
        if hops as usize > MAX_ROUTE || hops - hs > self.slack[s] {
            return None;
        }
        if (l == 0 || self.lengths.is_none()) && hops != hs {
            return None;
        }
        if layers.passes(graph, l, w, t, s) {
            return None; // w's route passes s: re-pointing would close a loop
        }
        if let Some(cables) = self.cables {
            let mut stack = Vec::new();
            if !self
                .tree
                .keeps_unimodal(graph, layers, cables, (l, s, t), edge, &mut stack)
            {
                return None;
            }
        }
        let mv = Move {
            l,
            s,
            t,
            edge,
            hops: hops as u8,
        };
        self.within_guards(layers, mv).then_some(mv)
    }

    /// Whether `mv` keeps every guarded prefix it moves a route of within its cap.
    fn within_guards(&self, layers: &Layers, mv: Move) -> bool {
        if self.guards.iter().all(|g| mv.l >= g.end) {
            return true;
        }
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        let (old_len, new_len) = self.routes(layers, mv, &mut old, &mut new);
        let (old, new) = (&old[..old_len], &new[..new_len]);
        let load = self.tree.senders[mv.s] * u64::from(self.graph.endpoints[mv.t]);
        self.guards.iter().filter(|g| mv.l < g.end).all(|g| {
            new.iter()
                .filter(|e| !old.contains(e))
                .all(|&e| g.loads[e as usize] + load <= g.cap)
        })
    }

    /// The edges of s's route now and after `mv`; returns their counts.
    pub(super) fn routes(
        &self,
        layers: &Layers,
        mv: Move,
        old: &mut [u32; MAX_ROUTE],
        new: &mut [u32; MAX_ROUTE],
    ) -> (usize, usize) {
        let old_len = walk(self.graph, layers, mv.l, mv.s, mv.t, old);
        new[0] = mv.edge as u32;
        let w = self.graph.edge_to[mv.edge] as usize;
        let new_len = 1 + walk(self.graph, layers, mv.l, w, mv.t, &mut new[1..]);
        (old_len, new_len)
    }

    /// Makes `mv` (whose subtree is in `members` and new counts in `checked`).
    pub(super) fn apply(&mut self, layers: &mut Layers, mv: Move, change: [i64; 2]) {
        let graph = self.graph;
        let n = graph.len();
        let mut old = [0u32; MAX_ROUTE];
        let mut new = [0u32; MAX_ROUTE];
        let (old_len, new_len) = self.routes(layers, mv, &mut old, &mut new);
        let load = self.tree.senders[mv.s] * u64::from(graph.endpoints[mv.t]);
        for &e in &old[..old_len] {
            self.loads[e as usize] -= load;
        }
        for &e in &new[..new_len] {
            self.loads[e as usize] += load;
        }
        for guard in self.guards.iter_mut().filter(|g| mv.l < g.end) {
            for &e in &old[..old_len] {
                guard.loads[e as usize] -= load;
            }
            for &e in &new[..new_len] {
                guard.loads[e as usize] += load;
            }
        }
        let h0 = layers.hops(mv.l, mv.s, mv.t).expect("routed");
        if self.recording > 0 {
            self.journal.push(Move {
                edge: old[0] as usize,
                hops: h0,
                ..mv
            });
        }
        let delta = i32::from(mv.hops) - i32::from(h0);
        layers.set(mv.l, mv.s, mv.t, mv.edge, mv.hops);
        for (&u, &after) in self.members.iter().zip(&self.checked) {
            let u = u as usize;
            self.disjoint[mv.t * n + u] = after;
            if delta != 0 && u != mv.s {
                let e = layers.next_edge(mv.l, u, mv.t).expect("routed");
                let h = i32::from(layers.hops(mv.l, u, mv.t).expect("routed")) + delta;
                layers.set(mv.l, u, mv.t, e, h as u8);
            }
        }
        self.below[0] += change[0];
        self.below[1] += change[1];
        if self.tree_key == Some((mv.l, mv.t)) {
            self.follow(layers, mv, (&old[..old_len], &new[..new_len]), delta);
        } else {
            self.forget_tree(mv.l, mv.t);
        }
        self.moves += 1;
        let moves = self.moves;
        self.tabu.retain(|&(_, until)| until > moves);
    }

    /// Starts recording moves for a possible undo; returns the mark to pass to [`Self::end`].
    pub(super) fn begin(&mut self) -> usize {
        self.recording += 1;
        self.journal.len()
    }

    /// Ends recording from `mark`: keeps the moves made since, or undoes them.
    pub(super) fn end(&mut self, layers: &mut Layers, mark: usize, keep: bool) {
        self.recording -= 1;
        if !keep {
            let recording = std::mem::replace(&mut self.recording, 0);
            while self.journal.len() > mark {
                let undo = self.journal.pop().expect("recorded");
                self.build_tree(layers, undo.l, undo.t);
                self.subtree(undo.s);
                let change = self.diversity_change(layers, undo);
                self.apply(layers, undo, change);
            }
            self.recording = recording;
        }
        if self.recording == 0 {
            self.journal.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::state::Guard;
    use super::super::testing::{assert_bookkeeping, cases, rebalanced};
    use super::*;
    use crate::routing::cable_order::CableOrder;
    use crate::routing::config::{Algorithm, PathLengths, RoutingConfig, Turns};
    use crate::routing::fixtures::{all_disjoint, assert_valid, same_layers};
    use crate::routing::layered::route_in_order;
    use crate::routing::tree::{prefix_loads, route_loads};

    /// Up to `limit` valid moves of layer l's tree into t, in switch and edge order.
    fn some_moves(
        state: &mut State<'_>,
        layers: &Layers,
        l: usize,
        t: usize,
        limit: usize,
    ) -> Vec<Move> {
        let graph = state.graph;
        state.build_tree(layers, l, t);
        let mut found = Vec::new();
        for s in (0..graph.len()).filter(|&s| s != t) {
            for edge in graph.edges(s) {
                if let Some(mv) = state.valid(layers, l, s, t, edge) {
                    found.push(mv);
                }
            }
        }
        found.truncate(limit);
        found
    }

    /// Makes `mv` as the search does: subtree and diversity change first.
    fn make(state: &mut State<'_>, layers: &mut Layers, mv: Move) {
        state.build_tree(layers, mv.l, mv.t);
        if state.valid(layers, mv.l, mv.s, mv.t, mv.edge).is_none() {
            return; // an earlier move took the room
        }
        state.subtree(mv.s);
        let change = state.diversity_change(layers, mv);
        state.apply(layers, mv, change);
    }

    #[test]
    fn valid_moves_keep_the_layers_and_the_bookkeeping_exact() {
        // Minimal layers of a girth-5 Slim Fly have no move (shortest paths are unique), so
        // the count is over all cases.
        let mut made = 0;
        for (spec, count, lengths) in cases() {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            let targets: Vec<usize> = (0..graph.len())
                .filter(|&t| graph.endpoints[t] > 0)
                .step_by(4)
                .collect();
            for l in 0..count {
                for &t in &targets {
                    for mv in some_moves(&mut state, &layers, l, t, 3) {
                        make(&mut state, &mut layers, mv);
                    }
                }
            }
            let what = format!("{spec} L={count}");
            made += state.moves;
            assert_valid(&graph, &layers, lengths.as_ref(), &what);
            assert_bookkeeping(&state, &layers, &what);
        }
        assert!(made > 0, "no move made on any fabric");
    }

    #[test]
    fn guarded_prefixes_keep_their_caps_and_exact_loads() {
        let mut made = 0;
        for (spec, count, lengths) in cases().into_iter().filter(|c| c.1 >= 4) {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            state.guards = [1, 2]
                .map(|end| {
                    let loads = prefix_loads(&graph, &layers, end);
                    // A cap a little above the maximum, so that some moves stay possible.
                    let cap = loads.iter().copied().max().unwrap_or(0) + 4;
                    Guard { end, loads, cap }
                })
                .into();
            let targets: Vec<usize> = (0..graph.len())
                .filter(|&t| graph.endpoints[t] > 0)
                .step_by(2)
                .collect();
            for (l, &t) in (0..2).flat_map(|l| targets.iter().map(move |t| (l, t))) {
                for mv in some_moves(&mut state, &layers, l, t, 4) {
                    make(&mut state, &mut layers, mv);
                }
            }
            let what = format!("{spec} L={count}");
            for guard in &state.guards {
                let fresh = prefix_loads(&graph, &layers, guard.end);
                assert_eq!(
                    guard.loads, fresh,
                    "{what}: loads of layers 0..{}",
                    guard.end
                );
                let max = fresh.into_iter().max().unwrap_or(0);
                assert!(max <= guard.cap, "{what}: 0..{} at {max}", guard.end);
            }
            assert_bookkeeping(&state, &layers, &what);
            made += state.moves;
        }
        assert!(made > 0, "no move made on any fabric");
    }

    /// Asserts that the state's current tree and slack are what building them again from
    /// `layers` gives.
    fn assert_tree_as_built(state: &State<'_>, layers: &Layers, what: &str) {
        let Some((l, t)) = state.tree_key else {
            return;
        };
        let (loads, disjoint) = (state.loads.clone(), state.disjoint.clone());
        let mut fresh = State::new(state.graph, state.lengths, loads, disjoint, 0);
        fresh.cables = state.cables;
        fresh.build_tree(layers, l, t);
        let what = format!("{what}: layer {l} into {t}");
        assert_eq!(state.tree.children, fresh.tree.children, "{what}: children");
        assert_eq!(state.tree.senders, fresh.tree.senders, "{what}: senders");
        assert_eq!(state.slack, fresh.slack, "{what}: slack");
        if state.cables.is_some() {
            assert_eq!(state.tree.shapes, fresh.tree.shapes, "{what}: shapes");
        }
    }

    #[test]
    fn a_move_leaves_the_tree_it_changed_as_if_built_again() {
        let mut made = 0;
        for (spec, count, lengths) in cases() {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            for (l, t) in (0..count).flat_map(|l| (0..graph.len()).step_by(3).map(move |t| (l, t)))
            {
                for mv in some_moves(&mut state, &layers, l, t, 4) {
                    make(&mut state, &mut layers, mv);
                    assert_tree_as_built(&state, &layers, &format!("{spec} L={count} {mv:?}"));
                }
            }
            made += state.moves;
        }
        assert!(made > 0, "no move made on any fabric");
    }

    #[test]
    fn a_move_leaves_the_shapes_in_a_cable_order_as_if_built_again() {
        let mut made = 0;
        for spec in crate::routing::fixtures::SMALL_FABRICS {
            let graph = crate::routing::fixtures::graph(spec);
            let order = CableOrder::for_routing(&graph, 1);
            let config = RoutingConfig {
                layers: 4,
                algorithm: Algorithm::Layered(PathLengths::default()),
                seed: 1,
                turns: Turns::Unimodal,
            };
            let mut layers = route_in_order(&graph, &config, Some(&order));
            let (loads, disjoint) = (route_loads(&graph, &layers), all_disjoint(&graph, &layers));
            let lengths = PathLengths::default();
            let mut state = State::new(&graph, Some(&lengths), loads, disjoint, u64::MAX);
            state.cables = Some(&order);
            for (l, t) in (1..4).flat_map(|l| (0..graph.len()).step_by(3).map(move |t| (l, t))) {
                for mv in some_moves(&mut state, &layers, l, t, 4) {
                    make(&mut state, &mut layers, mv);
                    assert_tree_as_built(&state, &layers, &format!("{spec} {mv:?}"));
                }
            }
            assert!(
                layers.all_unimodal(&graph, &order),
                "{spec}: a move made a valley"
            );
            made += state.moves;
        }
        assert!(made > 0, "no move made on any fabric");
    }

    #[test]
    fn moves_not_kept_are_undone_exactly() {
        let mut recorded = 0;
        for (spec, count, lengths) in cases() {
            let (graph, mut layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let before = layers.clone();
            let mut state = State::new(&graph, lengths.as_ref(), loads.clone(), disjoint, u64::MAX);
            let mark = state.begin();
            for t in (0..graph.len())
                .filter(|&t| graph.endpoints[t] > 0)
                .step_by(3)
            {
                for mv in some_moves(&mut state, &layers, count - 1, t, 4) {
                    make(&mut state, &mut layers, mv);
                }
            }
            recorded += state.journal.len();
            state.end(&mut layers, mark, false);
            let what = format!("{spec} L={count}");
            assert!(same_layers(&graph, &before, &layers), "{what}");
            assert_eq!(state.loads, loads, "{what}");
            assert_bookkeeping(&state, &layers, &what);
            assert!(state.journal.is_empty() && state.recording == 0, "{what}");
        }
        assert!(recorded > 0, "no move recorded on any fabric");
    }

    #[test]
    fn layer_zero_moves_keep_the_hop_count() {
        for (spec, count, lengths) in cases() {
            let (graph, layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            for t in (0..graph.len()).step_by(5) {
                for mv in some_moves(&mut state, &layers, 0, t, usize::MAX) {
                    assert_eq!(Some(mv.hops), layers.hops(0, mv.s, t), "{spec}: {mv:?}");
                }
            }
        }
    }
}
