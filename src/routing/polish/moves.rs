//! The one kind of move the search makes, and its bookkeeping.
//!
//! A switch s re-points its next hop towards t in one layer to a neighbour whose route does not
//! pass s, so the layer stays a loop-free tree into t; s's subtree follows, and every switch of
//! it stays within its allowed length ([`State::valid`]). Making a move ([`State::apply`])
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
        Some(Move {
            l,
            s,
            t,
            edge,
            hops: hops as u8,
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
        self.tree_key = None;
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
