//! The search for one pair's path in a layer under construction: depth-first over the paths of
//! allowed length from s towards t, where a switch that already has a route in the layer
//! forces the rest of the path, and the least-cost path wins ([`Cost`]).
//!
//! The cost puts path diversity first (a switch whose route repeats a link of its routes in
//! earlier layers gains no disjoint path), the destination's entry next ([`TreeEntry`]), and
//! link weight last. The cost only grows along a path, so partial paths that already cost more
//! than the best one found are cut off; that keeps the search at a few dozen steps per pair
//! (about 45 on Slim Fly q = 19), whose cost is mostly memory: the look-ups it makes per step
//! are laid out so that few of them miss the cache ([`super::near`], [`super::earlier`]).

use super::earlier::EarlierRoutes;
use super::entry::TreeEntry;
use super::near::{Inbound, NearMarks};
use crate::routing::cable_order::{CableOrder, Shape};
use crate::routing::config::MAX_SEARCH_HOPS;
use crate::routing::disjoint::DISJOINT_TARGET;
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::{Layers, UNSET};

/// The cost of a candidate path, compared lexicographically: first how far it pushes the link
/// it enters t on over that link's cap ([`entry_cap`](super::entry::entry_cap)); then its damage to path
/// diversity among the switches whose route the path sets and that still lack disjoint paths —
/// how many *critical* ones would repeat a link of their earlier routes (those needing a new
/// disjoint path in every remaining layer), how many would repeat at all, how many repetitions
/// (a link repeated from two earlier layers counts twice, so repeating falls to switches that
/// have repeated least) — then the sum of link weights.
type Cost = (u32, u32, u32, u32, u64);

/// The best path of a search.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    edges: [u32; MAX_SEARCH_HOPS],
    len: usize,
    /// How far the path overloads the destination's entry ([`TreeEntry::overload`]).
    pub(super) overload: u32,
    /// The summed weight of the path's links up to the destination when it was found.
    pub(super) weight: u64,
}

impl Found {
    /// The path's edges up to the first switch that already had a route (whose route the path
    /// follows from there).
    pub(super) fn edges(&self) -> &[u32] {
        &self.edges[..self.len]
    }
}

/// Depth-first search for the least-cost path of allowed length from s to t, following
/// forced next hops.
#[derive(Default)]
pub(super) struct Search {
    min_len: usize,
    max_len: usize,
    /// Edges of the current partial path.
    stack: [u32; MAX_SEARCH_HOPS],
    /// Switches on the current partial path (all without a route in this layer).
    visited: [u32; MAX_SEARCH_HOPS + 1],
    best: [u32; MAX_SEARCH_HOPS],
    best_len: usize,
    best_cost: Cost,
    /// With a cable order: the partial path's ranks seen from s, per depth — `None` before
    /// the first cable, else whether they have started falling and the last rank.
    ranks: [Option<(bool, u32)>; MAX_SEARCH_HOPS + 1],
    /// The switches one hop or less from the destination.
    near: NearMarks,
}

impl Search {
    /// Forgets the last search; the next one looks for paths of `min_len..=max_len` hops.
    pub(super) fn reset(&mut self, min_len: usize, max_len: usize) {
        self.min_len = min_len;
        self.max_len = max_len;
        self.best_len = 0;
        self.best_cost = (u32::MAX, u32::MAX, u32::MAX, u32::MAX, u64::MAX);
    }

    /// The best path found, kept apart from the search's buffers, or `None`.
    pub(super) fn found(&self) -> Option<Found> {
        (self.best_len > 0).then_some(Found {
            edges: self.best,
            len: self.best_len,
            overload: self.best_cost.1,
            weight: self.best_cost.4,
        })
    }

    /// Searches the best path from s to `ctx.t`.
    pub(super) fn run(&mut self, ctx: &Context<'_>, s: usize) {
        self.visited[0] = s as u32;
        self.ranks[0] = None;
        self.near.mark(&ctx.fixed.inbound, ctx.t);
        self.dfs(ctx, s, 0, Damage::default(), 0);
    }

    fn dfs(&mut self, ctx: &Context<'_>, v: usize, depth: usize, damage: Damage, weight: u64) {
        // With at most one hop left after this step, only the edges onto t or next to t can
        // give an allowed length ([`NearMarks`]); the others fail the length check of
        // [`Self::step`].
        if self.max_len - depth <= 2 {
            for e in ctx.graph.edges(v) {
                if self.near.contains(ctx.graph.edge_to[e] as usize) {
                    self.step(ctx, v, depth, damage, weight, e);
                }
            }
        } else {
            for e in ctx.graph.edges(v) {
                self.step(ctx, v, depth, damage, weight, e);
            }
        }
    }

    /// The search's step from v (at `depth` on the partial path) over edge e.
    #[inline(always)]
    fn step(
        &mut self,
        ctx: &Context<'_>,
        v: usize,
        depth: usize,
        damage: Damage,
        weight: u64,
        e: usize,
    ) {
        let next_depth = depth + 1;
        let w = ctx.graph.edge_to[e] as usize;
        if self.visited[..=depth].contains(&(w as u32)) {
            return;
        }
        // Length first (cheap): t itself (h = 0) or a routed switch, whose route is forced
        // from here on, must give an allowed total; an unrouted one must leave room to
        // reach t.
        let forced = Some(ctx.hops[w]).filter(|&h| h != UNSET);
        match forced {
            Some(h) if !(self.min_len..=self.max_len).contains(&(next_depth + usize::from(h))) => {
                return;
            }
            None if next_depth >= self.max_len
                || next_depth + usize::from(ctx.dist_t[w]) > self.max_len =>
            {
                return;
            }
            _ => {}
        }
        if let Some(order) = ctx.fixed.order {
            // Forward automaton: rising, then falling, never rising again.
            let rank = order.rank(e);
            self.ranks[next_depth] = match self.ranks[depth] {
                None => Some((false, rank)),
                Some((false, last)) => Some((rank < last, rank)),
                Some((true, last)) if rank < last => Some((true, rank)),
                Some((true, _)) => return,
            };
        }
        let step_weight = weight + ctx.weights[e];
        if (damage.cost(0, step_weight)) >= self.best_cost {
            return; // damage only grows along the path
        }
        let step_damage = damage.add(self.repeats(ctx, depth, e));
        if step_damage.cost(0, step_weight) >= self.best_cost {
            return;
        }
        if forced.is_none() {
            self.stack[depth] = e as u32;
            self.visited[next_depth] = w as u32;
            self.dfs(ctx, w, next_depth, step_damage, step_weight);
            return;
        }
        // The partial path holds only unrouted switches and the chain only routed ones,
        // so the whole path is simple.
        if let Some(order) = ctx.fixed.order {
            self.stack[depth] = e as u32;
            if !self.joins_unimodal(ctx, order, w, next_depth) {
                return;
            }
        }
        let (mut full_damage, mut full_weight) = (step_damage, step_weight);
        let (mut x, mut last) = (w, v);
        while x != ctx.t {
            let c = ctx.next[x] as usize;
            full_damage = full_damage.add(self.repeats(ctx, depth, c));
            full_weight += ctx.weights[c];
            last = x;
            x = ctx.graph.edge_to[c] as usize;
        }
        let senders: u32 = self.visited[..=depth]
            .iter()
            .map(|&u| ctx.graph.endpoints[u as usize])
            .sum();
        // New switches next to t that do not route straight to t close their link.
        let closed = self.visited[..=depth]
            .iter()
            .filter(|&&u| ctx.dist_t[u as usize] == 1 && !(w == ctx.t && u as usize == v))
            .count() as u32;
        let excess = ctx.tree.overload(last, senders, closed);
        let full = full_damage.cost(excess, full_weight);
        if full < self.best_cost {
            self.stack[depth] = e as u32;
            self.best[..next_depth].copy_from_slice(&self.stack[..next_depth]);
            self.best_len = next_depth;
            self.best_cost = full;
        }
    }

    /// Whether the partial path's first `len` edges followed by the forced route of w stay
    /// unimodal: w's route's shape, extended by the path's edges from the last one back.
    fn joins_unimodal(&self, ctx: &Context<'_>, order: &CableOrder, w: usize, len: usize) -> bool {
        let mut chain = [0u32; 2 * MAX_SEARCH_HOPS];
        let (mut k, mut x) = (0, w);
        while x != ctx.t {
            let c = ctx.next[x] as usize;
            if k == chain.len() {
                return false; // longer than any route the search forces
            }
            chain[k] = c as u32;
            k += 1;
            x = ctx.graph.edge_to[c] as usize;
        }
        chain[..k]
            .iter()
            .rev()
            .chain(self.stack[..len].iter().rev())
            .try_fold(Shape::Root, |shape, &c| {
                Some(shape.extend(order, c as usize)).filter(|s| s.is_valid())
            })
            .is_some()
    }

    /// The partial path's switches (positions up to `depth`, as a bit mask) whose routes in
    /// earlier layers already use edge e: their new route would repeat it.
    fn repeats(&self, ctx: &Context<'_>, depth: usize, e: usize) -> Damage {
        let tail = ctx.graph.edge_from[e] as usize;
        let mut damage = Damage::default();
        for (earlier, &next) in ctx.fixed.earlier.of(tail, ctx.t).iter().enumerate() {
            if next != e as u32 {
                continue;
            }
            for (i, &v) in self.visited[..=depth].iter().enumerate() {
                // A switch with enough disjoint paths loses nothing by repeating, and one that
                // needs more than the remaining layers can give cannot be saved.
                let need = DISJOINT_TARGET.saturating_sub(ctx.tree.disjoint[v as usize]);
                if need == 0 || usize::from(need) > ctx.remaining {
                    continue;
                }
                if ctx
                    .fixed
                    .earlier
                    .passes(ctx.graph, earlier, v as usize, ctx.t, tail)
                {
                    damage.repeating |= 1 << i;
                    damage.repetitions += 1;
                    if usize::from(need) == ctx.remaining {
                        damage.critical |= 1 << i;
                    }
                }
            }
        }
        damage
    }
}

/// Repetitions of earlier routes along a partial path: which path positions repeat (bit
/// masks) and how often.
#[derive(Debug, Clone, Copy, Default)]
struct Damage {
    critical: u32,
    repeating: u32,
    repetitions: u32,
}

impl Damage {
    fn add(self, other: Damage) -> Damage {
        Damage {
            critical: self.critical | other.critical,
            repeating: self.repeating | other.repeating,
            repetitions: self.repetitions + other.repetitions,
        }
    }

    fn cost(self, excess: u32, weight: u64) -> Cost {
        (
            self.critical.count_ones(),
            excess,
            self.repeating.count_ones(),
            self.repetitions,
            weight,
        )
    }
}

/// What the searches of layer l read that its building leaves as it is: who is next to each
/// destination, the earlier layers and the cable order.
pub(super) struct LayerFixed<'a> {
    inbound: Inbound,
    earlier: EarlierRoutes,
    /// The order every route must be unimodal in, or `None`: any turns.
    order: Option<&'a CableOrder>,
}

impl<'a> LayerFixed<'a> {
    pub(super) fn new(
        graph: &RoutingGraph,
        layers: &Layers,
        l: usize,
        order: Option<&'a CableOrder>,
    ) -> Self {
        Self {
            inbound: Inbound::new(graph),
            earlier: EarlierRoutes::new(layers, l),
            order,
        }
    }
}

/// What a search needs to look at: the layer under construction and the destination.
pub(super) struct Context<'a> {
    graph: &'a RoutingGraph,
    t: usize,
    weights: &'a [u64],
    dist_t: &'a [u8],
    /// Layer l's hops to t, by switch ([`UNSET`]: not routed yet).
    hops: &'a [u8],
    /// Layer l's next hops towards t, by switch (set wherever `hops` is).
    next: &'a [u32],
    tree: TreeEntry<'a>,
    /// Layers still to be routed, this one included.
    remaining: usize,
    fixed: &'a LayerFixed<'a>,
}

impl<'a> Context<'a> {
    /// Searches towards t in layer l of `layers`, with the current link `weights`.
    pub(super) fn new(
        graph: &'a RoutingGraph,
        layers: &'a Layers,
        l: usize,
        t: usize,
        weights: &'a [u64],
        tree: TreeEntry<'a>,
        fixed: &'a LayerFixed<'a>,
    ) -> Self {
        Self {
            graph,
            t,
            weights,
            dist_t: graph.dist_to(t),
            hops: layers.hops_row(l, t),
            next: layers.next_row(l, t),
            tree,
            remaining: layers.count() - l,
            fixed,
        }
    }
}
