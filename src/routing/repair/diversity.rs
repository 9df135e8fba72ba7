//! The disjoint repair: after the completion, the pairs whose routes changed and that have
//! fewer than three edge-disjoint paths across the layers get some back by re-pointing
//! entries on their routes.
//!
//! The completion gives every switch that lost its route the fewest hops it can get, so in
//! layers 1.. a pair that had an almost-minimal route often gets the minimal one, which layer
//! 0 already takes. A move re-points one entry — switch u's next hop towards t in layer l —
//! to another neighbour; u's subtree follows. It is valid when the new next hop's route does
//! not pass u (the layer stays a tree into t), every route of the subtree stays unimodal in
//! the cable order (when there is one) and within its allowed length ([`longest_allowed`](crate::routing::config::longest_allowed):
//! layer 0 minimal, later layers at most max(d + 1, 3) hops by default; a route that is
//! already longer may only get shorter). A pair short of paths takes the valid move on its
//! routes that lowers most the pairs below three, then below two, disjoint paths among the
//! members of the moved subtree — never raising either — and, among equals, the one that
//! costs least of the budget and then loads its new links least. No move loads a link above
//! the highest link load the completion left, so the balance does not pay for the paths.
//!
//! The budget is what keeps the churn (changed / crossing) at most 1.0: a move that re-points
//! an entry that still has its previous next hop costs one, one that re-points an entry the
//! completion changed costs nothing, and one that sets an entry back to its previous next hop
//! gives one back. The budget ([`Budget`]) is the slack crossing − changed the completion
//! left, counted twice: in routes, and in the forwarding entries they stand for (every LID
//! that follows a tree has an entry per route of it; a layer-0 tree also carries its
//! switch's own LID). A move must fit both, so the pass never lets the routes or the entries
//! that changed outnumber those whose route crossed a loss. Each move lowers the pairs short
//! of paths, so the pass ends.

use super::degraded::PairCounts;
use super::{ChangedTrees, Mapping, NEW_TREE};
use crate::routing::cable_order::{CableOrder, Shape};
use crate::routing::config::PathLengths;
use crate::routing::disjoint::PathFlow;
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;
use crate::routing::tree::Tree;

/// The disjoint repair of one repaired routing.
pub(super) struct Pass<'a> {
    pub(super) graph: &'a RoutingGraph,
    pub(super) mapping: &'a Mapping<'a>,
    /// The cable order every route stays unimodal in (`None`: any turns).
    pub(super) order: Option<&'a CableOrder>,
    /// The length rule of the layers after layer 0.
    pub(super) lengths: &'a PathLengths,
    /// The highest link load the completion left: no move loads a link beyond it.
    pub(super) ceiling: u64,
}

/// What the pass may still re-point beyond the entries the completion changed: the routes that
/// had to change but did not, counted as routes and as the forwarding entries they stand for.
pub(super) struct Budget {
    /// crossing − changed over the routing, less what was spent.
    routes: i64,
    /// The same in forwarding entries: each route of a tree weighs the LIDs that follow it.
    entries: i64,
    /// LIDs per tree (`l * n + t`).
    lids: Vec<u32>,
    switches: usize,
}

impl Budget {
    /// The budget after the completion: per tree, `crossing_per_tree` routes had to change and
    /// `trees` did, and `lids_per_tree` LIDs follow it (`None`: one each).
    pub(super) fn new(
        crossing_per_tree: &[u32],
        trees: &ChangedTrees,
        lids_per_tree: Option<&[u32]>,
    ) -> Self {
        let lids = lids_per_tree.map_or_else(|| vec![1; crossing_per_tree.len()], <[u32]>::to_vec);
        let (mut routes, mut entries) = (0i64, 0i64);
        for ((&crossing, &changed), &tree_lids) in
            crossing_per_tree.iter().zip(&trees.changed).zip(&lids)
        {
            if changed != NEW_TREE {
                let slack = i64::from(crossing) - i64::from(changed);
                routes += slack;
                entries += slack * i64::from(tree_lids);
            }
        }
        Self {
            routes,
            entries,
            lids,
            switches: trees.switches,
        }
    }

    /// How many more routes the pass may change (0 when the completion used it all up).
    pub(super) fn total(&self) -> u64 {
        self.routes.max(0).unsigned_abs()
    }

    /// Whether a move that costs `cost` routes in layer l's tree towards t fits.
    fn allows(&self, l: usize, t: usize, cost: i64) -> bool {
        let lids = i64::from(self.lids[l * self.switches + t]);
        cost <= 0 || (cost <= self.routes && cost * lids <= self.entries)
    }

    fn spend(&mut self, l: usize, t: usize, cost: i64) {
        self.routes -= cost;
        self.entries -= cost * i64::from(self.lids[l * self.switches + t]);
    }
}

/// A move: u re-points its next hop towards t in layer l to `edge`.
#[derive(Debug, Clone, Copy)]
struct Move {
    l: usize,
    u: usize,
    edge: usize,
}

/// How a move is ranked (smaller is better): the change of the pairs below the target and
/// below two disjoint paths, its cost to the budget, the highest load on its new links.
type Key = ([i64; 2], i64, u64);

/// One destination's trees in every layer, with each switch's room to grow.
struct Trees {
    trees: Vec<Tree>,
    /// Per layer: the least (allowed hops − hops) over each switch's subtree.
    slack: Vec<Vec<i32>>,
}

impl Pass<'_> {
    /// Runs the pass over `layers` (with their link loads `weights`), updating the pair
    /// counts, the changed entries per tree and the budget. Returns the budget spent (negative
    /// when the moves set back more entries than they re-pointed).
    pub(super) fn run(
        &self,
        layers: &mut Layers,
        weights: &mut [u64],
        pairs: &mut PairCounts,
        trees: &mut ChangedTrees,
        budget: &mut Budget,
    ) -> i64 {
        let short = pairs.short_of_target();
        let mut spent = 0i64;
        let mut scratch = Scratch::default();
        let mut current: Option<(usize, Trees)> = None;
        for (s, t) in short {
            if current.as_ref().is_none_or(|(at, _)| *at != t) {
                current = Some((t, self.trees(layers, t)));
            }
            let (_, built) = current.as_mut().expect("just built");
            while let Some((key, mv)) =
                self.best_move(layers, weights, pairs, built, s, t, budget, &mut scratch)
            {
                self.apply(layers, weights, pairs, built, t, mv, &mut scratch);
                spent += key.1;
                budget.spend(mv.l, t, key.1);
                trees.adjust(mv.l, t, key.1);
            }
        }
        spent
    }

    /// Builds t's tree, shapes and slack in every layer.
    fn trees(&self, layers: &Layers, t: usize) -> Trees {
        let mut built = Trees {
            trees: (0..layers.count()).map(|_| Tree::default()).collect(),
            slack: vec![Vec::new(); layers.count()],
        };
        for l in 0..layers.count() {
            self.rebuild(layers, &mut built, l, t);
        }
        built
    }

    /// Builds layer l's tree into t, its shapes and its slack again.
    fn rebuild(&self, layers: &Layers, built: &mut Trees, l: usize, t: usize) {
        let graph = self.graph;
        let tree = &mut built.trees[l];
        tree.build(graph, layers, l, t);
        if let Some(order) = self.order {
            tree.build_shapes(graph, layers, order, l, t);
        }
        tree.slack(
            graph,
            layers,
            Some(self.lengths),
            (l, t),
            &mut built.slack[l],
        );
    }

    /// The best valid move on s's routes towards t that lowers the pairs short of disjoint
    /// paths, within what is left of the budget.
    // The pass's state (layers, loads, counts, trees) plus the pair, the budget and the
    // buffers: each is needed, and a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    fn best_move(
        &self,
        layers: &Layers,
        weights: &[u64],
        pairs: &mut PairCounts,
        built: &Trees,
        s: usize,
        t: usize,
        budget: &Budget,
        scratch: &mut Scratch,
    ) -> Option<(Key, Move)> {
        let graph = self.graph;
        let mapping = self.mapping;
        let target = pairs.target();
        let short_now = pairs.now(mapping, layers, s, t);
        if short_now >= target {
            return None;
        }
        let mut best: Option<(Key, Move)> = None;
        for l in 0..layers.count() {
            let tree = &built.trees[l];
            let mut u = s;
            while u != t {
                let Some(current) = layers.next_edge(l, u, t) else {
                    break;
                };
                let h = i32::from(layers.hops(l, u, t).expect("routed"));
                let old = mapping.old_next(l, u, t);
                let was_changed = old != Some(Some(graph.edge_to[current] as usize));
                for edge in graph.edges(u).filter(|&e| e != current) {
                    let w = graph.edge_to[edge] as usize;
                    let Some(hw) = layers.hops(l, w, t) else {
                        continue;
                    };
                    let delta = i32::from(hw) + 1 - h;
                    if delta > 0 && delta > built.slack[l][u] {
                        continue;
                    }
                    let cost = i64::from(old != Some(Some(w))) - i64::from(was_changed);
                    if !budget.allows(l, t, cost) || layers.passes(graph, l, w, t, u) {
                        continue;
                    }
                    let mv = Move { l, u, edge };
                    if count_moved(graph, layers, s, t, mv, &mut scratch.flow) <= short_now {
                        continue;
                    }
                    if let Some(order) = self.order
                        && !tree.keeps_unimodal(
                            graph,
                            layers,
                            order,
                            (l, u, t),
                            edge,
                            &mut scratch.stack,
                        )
                    {
                        continue;
                    }
                    let change = self.change(layers, pairs, tree, t, mv, target, scratch);
                    if !(change[0] <= 0 && change[1] <= 0 && change < [0, 0]) {
                        continue;
                    }
                    let load = tree.senders[u] * u64::from(graph.endpoints[t]);
                    let peak = new_links_peak(graph, layers, weights, t, mv, load);
                    if peak > self.ceiling {
                        continue;
                    }
                    let key = (change, cost, peak);
                    if best.is_none_or(|(b, _)| key < b) {
                        best = Some((key, mv));
                    }
                }
                u = graph.edge_to[current] as usize;
            }
        }
        best
    }

    /// How the move changes the pairs below the target and below two disjoint paths among
    /// the members of the moved subtree; their new counts are left in `scratch.counts`.
    // The move's context: the pass's layers and counts, the tree it moves in, the target.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &self,
        layers: &Layers,
        pairs: &mut PairCounts,
        tree: &Tree,
        t: usize,
        mv: Move,
        target: u8,
        scratch: &mut Scratch,
    ) -> [i64; 2] {
        tree.subtree(mv.u, &mut scratch.members);
        scratch.counts.clear();
        let mut change = [0i64; 2];
        if self.graph.endpoints[t] == 0 {
            return change;
        }
        for &x in &scratch.members {
            let x = x as usize;
            let before = pairs.now(self.mapping, layers, x, t);
            let after = count_moved(self.graph, layers, x, t, mv, &mut scratch.flow);
            scratch.counts.push(after);
            change[0] += i64::from(after < target) - i64::from(before < target);
            change[1] += i64::from(after < 2) - i64::from(before < 2);
        }
        change
    }

    /// Makes the move: the entry re-pointed, the subtree's hop counts, the loads, the
    /// members' counts and the tree.
    // As `best_move`, with the move.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        layers: &mut Layers,
        weights: &mut [u64],
        pairs: &mut PairCounts,
        built: &mut Trees,
        t: usize,
        mv: Move,
        scratch: &mut Scratch,
    ) {
        let graph = self.graph;
        let Move { l, u, edge } = mv;
        let target = pairs.target();
        let tree = &built.trees[l];
        // The members' new counts, in the order of the subtree.
        self.change(layers, pairs, tree, t, mv, target, scratch);
        let load = tree.senders[u] * u64::from(graph.endpoints[t]);
        let old_route_load = |layers: &Layers, weights: &mut [u64], add: bool| {
            let mut x = u;
            while x != t {
                let e = layers.next_edge(l, x, t).expect("routed");
                if add {
                    weights[e] += load;
                } else {
                    weights[e] -= load;
                }
                x = graph.edge_to[e] as usize;
            }
        };
        old_route_load(layers, weights, false);
        let w = graph.edge_to[edge] as usize;
        let hops = layers.hops(l, w, t).expect("routed") + 1;
        let delta = i32::from(hops) - i32::from(layers.hops(l, u, t).expect("routed"));
        for &x in &scratch.members[1..] {
            let x = x as usize;
            let next = layers.next_edge(l, x, t).expect("in the subtree");
            let h = i32::from(layers.hops(l, x, t).expect("in the subtree")) + delta;
            layers.set(l, x, t, next, h as u8);
        }
        layers.set(l, u, t, edge, hops);
        old_route_load(layers, weights, true);
        for (&x, &count) in scratch.members.iter().zip(&scratch.counts) {
            pairs.touch(self.mapping, layers, (x as usize, t), Some(count));
        }
        self.rebuild(layers, built, l, t);
    }
}

/// Reusable buffers of the pass.
#[derive(Default)]
struct Scratch {
    flow: PathFlow,
    stack: Vec<(u32, Shape)>,
    members: Vec<u32>,
    counts: Vec<u8>,
}

/// The edge-disjoint paths from x (in the subtree of the move's switch) to t across the
/// layers, with the move made.
fn count_moved(
    graph: &RoutingGraph,
    layers: &Layers,
    x: usize,
    t: usize,
    mv: Move,
    flow: &mut PathFlow,
) -> u8 {
    flow.clear();
    for l in 0..layers.count() {
        let mut v = x;
        // A valid move leaves no loop; the bound keeps a bad one from spinning.
        for _ in 0..graph.len() {
            if v == t {
                break;
            }
            let e = if l == mv.l && v == mv.u {
                mv.edge
            } else {
                match layers.next_edge(l, v, t) {
                    Some(e) => e,
                    None => break,
                }
            };
            let w = graph.edge_to[e];
            flow.add_edge(v as u32, w);
            v = w as usize;
        }
    }
    flow.max_flow(x as u32, t as u32)
}

/// The highest load on the links of the move's new route from u, with u's subtree's `load`
/// moved onto them (links the old route shares keep theirs).
fn new_links_peak(
    graph: &RoutingGraph,
    layers: &Layers,
    weights: &[u64],
    t: usize,
    mv: Move,
    load: u64,
) -> u64 {
    let on_old_route = |edge: usize| {
        let mut v = mv.u;
        while v != t {
            let e = layers.next_edge(mv.l, v, t).expect("routed");
            if e == edge {
                return true;
            }
            v = graph.edge_to[e] as usize;
        }
        false
    };
    let mut peak = 0;
    let mut e = mv.edge;
    loop {
        let moved = if on_old_route(e) { 0 } else { load };
        peak = peak.max(weights[e] + moved);
        let v = graph.edge_to[e] as usize;
        if v == t {
            return peak;
        }
        e = layers.next_edge(mv.l, v, t).expect("routed");
    }
}
