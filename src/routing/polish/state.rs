//! The state of the local search: the layers' link loads and disjoint-path counts kept up to
//! date move by move, the work spent, the cached tree of the (layer, destination) being
//! looked at, and the journal that lets a compound change be undone.
//!
//! Every other file of the search adds methods to [`State`]; this one only holds it and the
//! tree cache, so it imports none of them.

use crate::routing::cable_order::CableOrder;
use crate::routing::config::{PathLengths, longest_allowed};
use crate::routing::disjoint::{PathFlow, pairs_lacking};
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;
use crate::routing::tree::{Tree, load_cap};
use std::ops::Range;

/// A move: s re-points its next hop towards t in layer l to `edge`, with `hops` hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Move {
    pub(super) l: usize,
    pub(super) s: usize,
    pub(super) t: usize,
    pub(super) edge: usize,
    pub(super) hops: u8,
}

/// A shorter prefix of layers, balanced before, whose largest link load no move may raise:
/// MPI stacks split bulk data over every prefix, so moving its routes to balance a longer
/// prefix must not make it worse on its own.
pub(super) struct Guard {
    /// The prefix: layers `0..end`.
    pub(super) end: usize,
    /// Its link loads per directed edge, kept up to date move by move.
    pub(super) loads: Vec<u64>,
    /// Its largest link load when the pass started.
    pub(super) cap: u64,
}

/// The local search over one routing (see the [module documentation](super)).
pub(super) struct State<'a> {
    pub(super) graph: &'a RoutingGraph,
    /// Bounds the layers after layer 0 (`None`: every layer stays minimal).
    pub(super) lengths: Option<&'a PathLengths>,
    /// The order every route stays unimodal in (`None`: any turns); set after [`State::new`].
    pub(super) cables: Option<&'a CableOrder>,
    /// The layers the search may move routes of (set after [`State::new`]); `loads` count the
    /// layers up to its end. The layers below form a prefix balanced before, and stay.
    pub(super) movable: Range<usize>,
    /// The shorter prefixes the movable layers belong to (set after [`State::new`]).
    pub(super) guards: Vec<Guard>,
    /// 1.10 × the mean link load when the pass started.
    pub(super) cap: u64,
    /// `below` when the pass started: while the maximum load is over the cap, moves may spend
    /// disjoint paths the pass won, down to these counts.
    pub(super) floor: [i64; 2],
    /// Link load per directed edge (routes: sending × receiving endpoints).
    pub(super) loads: Vec<u64>,
    /// Edge-disjoint paths across all layers, `t * n + s`, for destinations with endpoints.
    pub(super) disjoint: Vec<u8>,
    /// Pairs with fewer than three, and fewer than two, edge-disjoint paths.
    pub(super) below: [i64; 2],
    /// Move evaluations spent, and the most the search may spend.
    pub(super) work: u64,
    pub(super) budget: u64,
    /// The percentage of `budget` the first compound moves may spend while the maximum load is
    /// over the cap (see [`super::EJECTION_PERCENT_OVER_CAP`]).
    pub(super) ejection_percent: u64,
    /// One layer's tree into one destination, for the (layer, destination) in `tree_key`
    /// (`None`: not current), and the least room (allowed hops − hops) in each switch's
    /// subtree of it.
    pub(super) tree: Tree,
    pub(super) tree_key: Option<(usize, usize)>,
    pub(super) slack: Vec<i32>,
    /// Trees put aside when the search turned to another (layer, destination), with their
    /// slack, by `l * n + t`; `shelved[l * n + t]` says whether the one there is still that
    /// tree. The search goes back and forth between a few trees (half of the trees it asked
    /// for on Slim Fly q = 7 had not changed since it last built them), and building one is
    /// most of what a move costs.
    shelf: Vec<(Tree, Vec<i32>)>,
    shelved: Vec<bool>,
    /// The subtree last asked for ([`State::subtree`]), its root first.
    pub(super) members: Vec<u32>,
    pub(super) flow: PathFlow,
    /// New disjoint-path counts of the members of the subtree last checked.
    pub(super) checked: Vec<u8>,
    /// Kicked (layer, switch, destination) and the move count until which they stay.
    pub(super) tabu: Vec<((usize, usize, usize), usize)>,
    /// Moves made so far (the clock of `tabu`).
    pub(super) moves: usize,
    /// While `recording` > 0: the moves that undo the moves made, in order.
    pub(super) journal: Vec<Move>,
    /// Nesting depth of [`State::begin`] calls not yet ended.
    pub(super) recording: u32,
}

/// What the search keeps of its best state.
pub(super) struct Snapshot {
    pub(super) layers: Layers,
    pub(super) loads: Vec<u64>,
    pub(super) disjoint: Vec<u8>,
    pub(super) below: [i64; 2],
    /// Loads sorted from the largest down.
    pub(super) sorted: Vec<u64>,
    /// The guarded prefixes' loads, as `guards` holds them.
    pub(super) guarded: Vec<Vec<u64>>,
}

impl Snapshot {
    /// How the search ranks states: how far the maximum is over the cap, the pairs lacking
    /// disjoint paths, then the sorted loads.
    pub(super) fn key(&self, cap: u64) -> (u64, [i64; 2], &[u64]) {
        (self.sorted[0].saturating_sub(cap), self.below, &self.sorted)
    }
}

impl<'a> State<'a> {
    /// The search's start: `loads` and `disjoint` as the layers have them (see
    /// [`super::polish`]), nothing spent of `budget` yet.
    pub(super) fn new(
        graph: &'a RoutingGraph,
        lengths: Option<&'a PathLengths>,
        loads: Vec<u64>,
        disjoint: Vec<u8>,
        budget: u64,
    ) -> Self {
        let below = pairs_lacking(graph, &disjoint);
        let cap = load_cap(&loads);
        State {
            graph,
            lengths,
            cables: None,
            movable: 0..usize::MAX,
            guards: Vec::new(),
            cap,
            floor: below,
            loads,
            disjoint,
            below,
            work: 0,
            budget,
            ejection_percent: super::EJECTION_PERCENT_OVER_CAP,
            tree: Tree::default(),
            tree_key: None,
            slack: Vec::new(),
            shelf: Vec::new(),
            shelved: Vec::new(),
            members: Vec::new(),
            flow: PathFlow::default(),
            checked: Vec::new(),
            tabu: Vec::new(),
            moves: 0,
            journal: Vec::new(),
            recording: 0,
        }
    }
}

impl State<'_> {
    /// The layers whose routes the search may move.
    pub(super) fn movable_layers(&self, layers: &Layers) -> Range<usize> {
        self.movable.start..self.movable.end.min(layers.count())
    }

    /// Makes `self.tree` and `self.slack` describe layer l's tree into t.
    pub(super) fn build_tree(&mut self, layers: &Layers, l: usize, t: usize) {
        if self.tree_key == Some((l, t)) {
            return;
        }
        let graph = self.graph;
        let n = graph.len();
        if self.shelved.len() < layers.count() * n {
            self.shelf.resize_with(layers.count() * n, Default::default);
            self.shelved.resize(layers.count() * n, false);
        }
        if let Some((l0, t0)) = self.tree_key.take() {
            let shelf = &mut self.shelf[l0 * n + t0];
            std::mem::swap(&mut self.tree, &mut shelf.0);
            std::mem::swap(&mut self.slack, &mut shelf.1);
            self.shelved[l0 * n + t0] = true;
        }
        let key = l * n + t;
        if std::mem::take(&mut self.shelved[key]) {
            let shelf = &mut self.shelf[key];
            std::mem::swap(&mut self.tree, &mut shelf.0);
            std::mem::swap(&mut self.slack, &mut shelf.1);
            self.tree_key = Some((l, t));
            self.work += 1;
            return;
        }
        self.tree.build(graph, layers, l, t);
        if let Some(cables) = self.cables {
            self.tree.build_shapes(graph, layers, cables, l, t);
        }
        self.tree
            .slack(graph, layers, self.lengths, (l, t), &mut self.slack);
        self.tree_key = Some((l, t));
        self.work += n as u64 / 8;
    }

    /// Follows `mv`, just made in `layers` (s's route was `old`, is `new`; its subtree, in
    /// `members`, moved by `delta` hops), in the current tree and its slack, so the search can
    /// go on with that tree without building it again.
    pub(super) fn follow(
        &mut self,
        layers: &Layers,
        mv: Move,
        (old, new): (&[u32], &[u32]),
        delta: i32,
    ) {
        let graph = self.graph;
        let (l, t) = (mv.l, mv.t);
        self.tree
            .follow(graph, layers, self.cables, (l, mv.s, t), (old, new));
        for &u in &self.members {
            self.slack[u as usize] -= delta;
        }
        // The switches above s, on its old route and then its new one, bottom up: a switch on
        // both is done again when the new route's side below it is final.
        for route in [old, new] {
            for &e in route {
                let v = graph.edge_to[e as usize] as usize;
                let own = if v == t {
                    i32::MAX
                } else {
                    let h = layers.hops(l, v, t).expect("in tree");
                    longest_allowed(self.lengths, l, graph.dist(v, t)) as i32 - i32::from(h)
                };
                let below = self.tree.children[v]
                    .iter()
                    .map(|&c| self.slack[c as usize]);
                self.slack[v] = below.fold(own, i32::min);
            }
        }
    }

    /// Forgets layer l's tree into t: a move changed it while another tree was current.
    pub(super) fn forget_tree(&mut self, l: usize, t: usize) {
        let n = self.graph.len();
        if let Some(shelved) = self.shelved.get_mut(l * n + t) {
            *shelved = false;
        }
    }

    /// Forgets every tree built so far: the layers were replaced wholesale.
    pub(super) fn forget_trees(&mut self) {
        self.tree_key = None;
        self.shelved.iter_mut().for_each(|x| *x = false);
    }

    /// The subtree of s in the current tree (s first), into `self.members`.
    pub(super) fn subtree(&mut self, s: usize) {
        self.tree.subtree(s, &mut self.members);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{cases, rebalanced};
    use super::*;

    #[test]
    fn slack_is_the_least_room_in_each_subtree() {
        for (spec, count, lengths) in cases() {
            let (graph, layers, loads, disjoint) = rebalanced(spec, count, lengths.as_ref());
            let mut state = State::new(&graph, lengths.as_ref(), loads, disjoint, u64::MAX);
            let n = graph.len();
            for (l, t) in (0..count).flat_map(|l| (0..n).step_by(4).map(move |t| (l, t))) {
                state.build_tree(&layers, l, t);
                for v in (0..n).filter(|&v| v != t) {
                    let least = (0..n)
                        .filter(|&u| u != t && layers.passes(&graph, l, u, t, v))
                        .map(|u| {
                            let limit = longest_allowed(lengths.as_ref(), l, graph.dist(u, t));
                            limit as i32 - i32::from(layers.hops(l, u, t).unwrap())
                        })
                        .min();
                    assert_eq!(Some(state.slack[v]), least, "{spec}: layer {l}, {v} -> {t}");
                }
            }
        }
    }
}
