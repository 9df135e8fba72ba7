//! Repair after losses: when cables, switches or hosts fail, keep every route that does not
//! cross what was lost and give new routes only to the (layer, switch, destination) entries
//! whose route did.
//!
//! A full routing of the damaged fabric moves routes everywhere (the passes balance the whole
//! fabric again), so live traffic loses paths that never touched the failure and the subnet
//! manager sends every changed forwarding block. The repair instead copies each surviving
//! next hop, drops the ones whose route reached the lost part, and completes each affected
//! destination tree with [`Layers::attach`] (or [`Layers::attach_unimodal`], in the previous
//! cable order, so the lanes by port pair stay valid for kept and new routes alike). What it
//! cannot do — a layer count that changed, an order that no longer connects a pair — is a
//! full routing, and the report says why.
//!
//! A fabric that gained switches or cables since is repaired the same way: the new cables rank
//! below every old one in the order ([`CableOrder::restricted`]), so no kept route changes, and
//! the completion gives the new switches their routes and trees; nothing that was there moves
//! (a full re-optimisation, on demand, gives the new cables to the old routes).
//!
//! The completion takes the fewest hops, so a layer that had an almost-minimal route often
//! gets the minimal one, the same as layer 0's: the pair loses a disjoint path. The disjoint
//! repair ([`diversity`]) then re-points entries on the routes of the pairs left below three
//! edge-disjoint paths, within the turn rule and the length rule: entries that changed anyway
//! for free, others within a budget of the routes that had to change but did not (crossing −
//! changed, in routes and in the forwarding entries they stand for), so no more routes or
//! entries change than crossed a loss. The report counts the switch
//! pairs whose disjoint paths became fewer ([`degraded`]), which only pairs whose routes
//! changed can be.

mod changes;
mod degraded;
mod diversity;

pub use changes::{FabricChanges, old_switches};

use super::cable_order::CableOrder;
use super::config::{Algorithm, RoutingConfig, Turns};
use super::disjoint::DISJOINT_TARGET;
use super::graph::{FAR, NONE, RoutingGraph};
use super::layered::route_in_order;
use super::layers::{AttachScratch, Layers};
use super::lids::LidTable;
use super::tables::lid_tree;
use crate::topology::Fabric;
use degraded::PairCounts;
use diversity::Budget;

/// The routing that is repaired: its graph, layers and (for [`Turns::Unimodal`]) order.
#[derive(Debug, Clone, Copy)]
pub struct Previous<'a> {
    /// The graph it was routed over.
    pub graph: &'a RoutingGraph,
    /// Its layers.
    pub layers: &'a Layers,
    /// Its cable order, when it was routed with [`Turns::Unimodal`].
    pub order: Option<&'a CableOrder>,
}

/// What the repair changed, counted in (layer, switch, destination switch) routes of switches
/// and destinations that exist before and after, and in switch pairs (s, t), t with endpoints,
/// that exist before and after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Routes whose previous path crossed a lost cable or switch: the ones that must change.
    pub crossing: u64,
    /// Routes whose next hop changed.
    pub changed: u64,
    /// Switch pairs with fewer edge-disjoint paths across the layers than before.
    pub degraded: u64,
    /// Of those, the pairs that had at least [`target_paths`] (three with three layers or
    /// more) and have fewer now.
    pub below_target: u64,
    /// Routes the disjoint repair could change beyond those the completion changed: the routes
    /// that had to change but did not (crossing − changed, so the churn stays at most 1.0; 0
    /// after a full routing). It also keeps the forwarding entries that change at most those
    /// whose route crossed a loss, counting the LIDs each route stands for.
    pub budget: u64,
    /// How much of `budget` it used (re-pointed entries that had not changed, less entries it
    /// set back to the previous next hop).
    pub spent: u64,
    /// Why the fabric was routed in full instead of repaired, if it was.
    pub full_routing: Option<String>,
}

/// Edge-disjoint paths a switch pair should have across `layers` layers: three (the FatPaths
/// finding the layered routing is built for), or one per layer with fewer layers. What
/// [`RepairReport::below_target`] counts against.
pub fn target_paths(layers: usize) -> u8 {
    DISJOINT_TARGET.min(layers.min(usize::from(u8::MAX)) as u8)
}

impl RepairReport {
    /// Changed routes per route that had to change (1.0: only those; 0 when none had to).
    pub fn churn(&self) -> f64 {
        if self.crossing == 0 {
            0.0
        } else {
            self.changed as f64 / self.crossing as f64
        }
    }
}

/// The repaired routing.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// Next hops per layer and destination over the new graph.
    pub layers: Layers,
    /// The cable order every route is unimodal in ([`Turns::Unimodal`]): the previous one
    /// over the surviving cables, or a new one after a full routing.
    pub order: Option<CableOrder>,
    /// What changed.
    pub report: RepairReport,
    /// The destination trees in which some next hop changed: the others are the previous
    /// routing's trees, so checks of the previous tables still hold for them.
    pub changed_trees: ChangedTrees,
}

/// Per (layer, destination switch): whether its tree changed in a repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedTrees {
    switches: usize,
    /// Entries whose next switch changed, per tree ([`NEW_TREE`]: the tree has no previous
    /// one to compare with).
    changed: Vec<u32>,
}

/// A tree without a previous one (a new layer or destination, or a full routing).
const NEW_TREE: u32 = u32::MAX;

impl ChangedTrees {
    /// Every tree of `layers` layers over `switches` switches changed (a full routing).
    pub fn all(layers: usize, switches: usize) -> Self {
        Self {
            switches,
            changed: vec![NEW_TREE; layers * switches],
        }
    }

    /// Whether layer `layer`'s tree towards switch `t` changed.
    pub fn contains(&self, layer: usize, t: usize) -> bool {
        self.changed[layer * self.switches + t] != 0
    }

    /// The layers counted.
    pub fn layers(&self) -> usize {
        self.changed.len() / self.switches.max(1)
    }

    /// How many trees changed.
    pub fn count(&self) -> usize {
        self.changed.iter().filter(|&&c| c != 0).count()
    }

    /// Counts `by` more (or, negative, fewer) changed entries in layer l's tree towards t.
    fn adjust(&mut self, l: usize, t: usize, by: i64) {
        let slot = &mut self.changed[l * self.switches + t];
        if *slot != NEW_TREE {
            *slot = (i64::from(*slot) + by) as u32;
        }
    }
}

/// Repairs `previous` for `graph`, whose switch i was switch `old_of[i]` of the previous graph
/// (`None` for a switch that is new), with `config` (the previous routing's configuration).
/// Every route counts as one forwarding entry ([`repair_for_lids`] counts the LIDs).
pub fn repair(
    previous: &Previous<'_>,
    graph: &RoutingGraph,
    old_of: &[Option<usize>],
    config: &RoutingConfig,
) -> Repaired {
    repair_for_lids(previous, graph, old_of, config, None)
}

/// The LIDs that follow each (layer, destination switch) tree of a routing of `layers` layers
/// over `graph` (`l * n + t`): how many forwarding entries each route of the tree stands for.
pub fn lids_per_tree(
    fabric: &Fabric,
    graph: &RoutingGraph,
    lids: &LidTable,
    layers: usize,
) -> Vec<u32> {
    let n = graph.len();
    let mut count = vec![0u32; layers * n];
    for (_, owner) in lids.iter() {
        if let Some(tree) = lid_tree(fabric, graph, layers, owner)
            && tree.switch < n
        {
            count[tree.layer * n + tree.switch] += 1;
        }
    }
    count
}

/// [`repair`], with the LIDs each tree's routes stand for ([`lids_per_tree`] of the repaired
/// fabric; `None`: one each): the disjoint repair's budget then keeps the forwarding entries
/// that change, not only the routes, at most those whose route crossed a loss.
pub fn repair_for_lids(
    previous: &Previous<'_>,
    graph: &RoutingGraph,
    old_of: &[Option<usize>],
    config: &RoutingConfig,
    lids_per_tree: Option<&[u32]>,
) -> Repaired {
    let mapping = Mapping::new(previous, graph, old_of);
    let attempt = try_repair(previous, graph, old_of, config);
    let (mut layers, order, weights, full_routing) = match attempt {
        Ok((layers, order, weights)) => (layers, order, Some(weights), None),
        Err(why) => {
            let order = (config.turns == Turns::Unimodal)
                .then(|| CableOrder::for_routing(graph, config.seed));
            (
                route_in_order(graph, config, order.as_ref()),
                order,
                None,
                Some(why),
            )
        }
    };
    let (crossing, changed, mut changed_trees, crossing_per_tree) =
        count_changes(&mapping, &layers);
    let mut pairs = PairCounts::new(&mapping, layers.count());
    let (mut budget, mut spent) = (0, 0);
    match weights {
        Some(mut weights) => {
            pairs.touch_changed_routes(&mapping, &layers, &changed_trees);
            if let Algorithm::Layered(lengths) = &config.algorithm {
                let mut slack = Budget::new(&crossing_per_tree, &changed_trees, lids_per_tree);
                budget = slack.total();
                let pass = diversity::Pass {
                    graph,
                    mapping: &mapping,
                    order: order.as_ref(),
                    lengths,
                    ceiling: weights.iter().copied().max().unwrap_or(0),
                };
                spent = pass.run(
                    &mut layers,
                    &mut weights,
                    &mut pairs,
                    &mut changed_trees,
                    &mut slack,
                );
            }
        }
        None => {
            changed_trees = ChangedTrees::all(layers.count(), graph.len());
            pairs.touch_all(&mapping, &layers);
        }
    }
    let (degraded, below_target) = pairs.tally();
    Repaired {
        layers,
        order,
        report: RepairReport {
            crossing,
            changed: changed.saturating_add_signed(spent),
            degraded,
            below_target,
            budget,
            spent: spent.max(0).unsigned_abs(),
            full_routing,
        },
        changed_trees,
    }
}

/// How the switches of the repaired graph map to the previous graph's, both ways.
struct Mapping<'a> {
    previous: &'a Previous<'a>,
    graph: &'a RoutingGraph,
    old_of: &'a [Option<usize>],
    /// The new switch of each old one (`None`: lost).
    new_of: Vec<Option<usize>>,
}

impl<'a> Mapping<'a> {
    fn new(
        previous: &'a Previous<'a>,
        graph: &'a RoutingGraph,
        old_of: &'a [Option<usize>],
    ) -> Self {
        let mut new_of = vec![None; previous.graph.len()];
        for (v, old) in old_of.iter().enumerate() {
            if let Some(o) = old {
                new_of[*o] = Some(v);
            }
        }
        Self {
            previous,
            graph,
            old_of,
            new_of,
        }
    }

    /// The switch v's previous route towards t took next in layer l, as a switch of the
    /// repaired graph: `None` without a previous route, `Some(None)` when that switch is
    /// lost. v and t must exist before and after, and l in the previous routing.
    fn old_next(&self, l: usize, v: usize, t: usize) -> Option<Option<usize>> {
        let (old_v, old_t) = (self.old_of[v]?, self.old_of[t]?);
        let previous = self.previous;
        previous
            .layers
            .next_edge(l, old_v, old_t)
            .map(|e| self.new_of[previous.graph.edge_to[e] as usize])
    }

    /// Whether v's next switch towards t in layer l of `layers` differs from the previous
    /// routing's (as [`count_changes`] counts it).
    fn entry_changed(&self, layers: &Layers, l: usize, v: usize, t: usize) -> bool {
        let after = layers
            .next_edge(l, v, t)
            .map(|e| Some(self.graph.edge_to[e] as usize));
        self.old_next(l, v, t) != after
    }
}

/// The repair proper, or why it cannot be done.
fn try_repair(
    previous: &Previous<'_>,
    graph: &RoutingGraph,
    old_of: &[Option<usize>],
    config: &RoutingConfig,
) -> Result<(Layers, Option<CableOrder>, Vec<u64>), String> {
    let count = previous.layers.count();
    if count != config.layers.max(1) {
        return Err(format!(
            "the layers changed from {count} to {}",
            config.layers.max(1)
        ));
    }
    let old_edge = |e: usize| -> Option<usize> {
        let a = old_of[graph.edge_from[e] as usize]?;
        let b = old_of[graph.edge_to[e] as usize]?;
        previous.graph.edge_between(a, b)
    };
    // The new edge of each old one; new switches and cables have none (the order ranks new
    // cables below the old ones, so every kept route stays as it was).
    let mut new_edge = vec![NONE; previous.graph.edge_count()];
    for e in 0..graph.edge_count() {
        if let Some(old) = old_edge(e) {
            new_edge[old] = e as u32;
        }
    }
    let context = Context {
        previous,
        graph,
        old_of,
        new_edge: &new_edge,
    };
    match (config.turns, previous.order) {
        (Turns::Any, _) => {
            let (layers, weights) = context.keep_and_complete(None)?;
            Ok((layers, None, weights))
        }
        (Turns::Unimodal, None) => Err("the previous routing has no cable order".into()),
        // First the previous order itself, where every kept route stays unimodal (a switch
        // whose tree cable is lost joins the tree where its cables already fit); then the
        // same with the two cables to a new parent moved where they fit; last the order made
        // again for the damaged fabric. The later ones give new routes also to the kept ones
        // that became valleys.
        (Turns::Unimodal, Some(old)) => {
            let mut last = String::new();
            for move_cables in [false, true] {
                let restricted = old.restricted(graph, old_edge, old_of, move_cables);
                match context.keep_and_complete(Some(&restricted)) {
                    Ok((layers, weights)) => return Ok((layers, Some(restricted), weights)),
                    Err(e) => last = e,
                }
            }
            log::debug!("the previous cable order does not serve: {last}");
            let rebuilt = old.rebuilt(graph, old_of);
            let (layers, weights) = context.keep_and_complete(Some(&rebuilt))?;
            Ok((layers, Some(rebuilt), weights))
        }
    }
}

/// What the repair keeps routes from.
struct Context<'a> {
    previous: &'a Previous<'a>,
    graph: &'a RoutingGraph,
    old_of: &'a [Option<usize>],
    /// The new edge of each old one ([`NONE`]: lost).
    new_edge: &'a [u32],
}

impl Context<'_> {
    /// Every surviving next hop whose route still reaches its destination (unimodal in
    /// `order`, when given), then every destination tree completed; with the link loads of
    /// all routes.
    fn keep_and_complete(&self, order: Option<&CableOrder>) -> Result<(Layers, Vec<u64>), String> {
        let (graph, previous) = (self.graph, self.previous);
        let n = graph.len();
        let count = previous.layers.count();
        let mut layers = Layers::new(n, count);
        let mut shapes = Vec::new();
        for l in 0..count {
            for t in 0..n {
                // A new switch keeps nothing, as source or destination.
                let old_t = self.old_of[t];
                for v in (0..n).filter(|&v| v != t) {
                    let (Some(old_v), Some(old_t)) = (self.old_of[v], old_t) else {
                        continue;
                    };
                    if let Some(e) = previous.layers.next_edge(l, old_v, old_t)
                        && self.new_edge[e] != NONE
                    {
                        layers.set_next(l, v, t, self.new_edge[e] as usize);
                    }
                }
                if let Some(order) = order {
                    layers.shapes(graph, order, l, t, &mut shapes);
                    for (v, shape) in shapes.iter().enumerate() {
                        if v != t && shape.is_none_or(|s| !s.is_valid()) {
                            layers.clear_next(l, v, t);
                        }
                    }
                }
                layers.recompute_hops(graph, l, t);
                layers.drop_unreached(l, t);
            }
        }

        // The load of the kept routes, then every affected destination tree completed.
        let mut weights = vec![0u64; graph.edge_count()];
        for l in 0..count {
            for t in 0..n {
                let receivers = u64::from(graph.endpoints[t]);
                for v in (0..n).filter(|&v| v != t && layers.is_routed(l, v, t)) {
                    let load = u64::from(graph.endpoints[v]) * receivers;
                    layers.load_chain(graph, l, v, t, load, &mut weights);
                }
            }
        }
        let mut scratch = AttachScratch::default();
        for l in 0..count {
            for t in 0..n {
                if (0..n).all(|v| layers.is_routed(l, v, t)) {
                    continue;
                }
                match order {
                    Some(order) => {
                        layers.attach_unimodal(graph, l, t, &mut weights, order, None, &mut scratch)
                    }
                    None => layers.attach(graph, l, t, &mut weights, |_| true, &mut scratch),
                }
                let dist = graph.dist_to(t);
                if let Some(v) = (0..n).find(|&v| dist[v] != FAR && !layers.is_routed(l, v, t)) {
                    return Err(format!(
                        "switch {v} has no route to switch {t} in layer {l} that keeps the order"
                    ));
                }
            }
        }
        Ok((layers, weights))
    }
}

/// (routes whose previous path crossed a loss, routes whose next hop changed, the changed
/// routes per tree, the crossing routes per tree), over switches and destinations that exist
/// before and after (a tree of a layer the previous routing did not have counts as changed).
fn count_changes(mapping: &Mapping<'_>, layers: &Layers) -> (u64, u64, ChangedTrees, Vec<u32>) {
    let (previous, graph, old_of) = (mapping.previous, mapping.graph, mapping.old_of);
    let n = graph.len();
    let new_of = &mapping.new_of;
    // Whether an old edge survives: both ends survive and are still cabled.
    let survives = |e: usize| -> bool {
        let a = new_of[previous.graph.edge_from[e] as usize];
        let b = new_of[previous.graph.edge_to[e] as usize];
        matches!((a, b), (Some(a), Some(b)) if graph.edge_between(a, b).is_some())
    };
    let (mut crossing, mut changed) = (0u64, 0u64);
    let mut trees = ChangedTrees::all(layers.count(), n);
    let mut crossing_per_tree = vec![0u32; layers.count() * n];
    let mut intact = vec![0u8; previous.graph.len()];
    for l in 0..layers.count().min(previous.layers.count()) {
        for t in 0..n {
            let Some(old_t) = old_of[t] else { continue };
            let mut in_tree = 0u32;
            // Per old switch: 0 unknown, 1 its route survives, 2 it crosses a loss.
            intact.fill(0);
            // A new switch routed into the tree changes the tree (its route is checked with
            // the others) but no route that was there.
            let mut routed_in = 0u32;
            for v in (0..n).filter(|&v| v != t) {
                let Some(old_v) = old_of[v] else {
                    routed_in += u32::from(layers.is_routed(l, v, t));
                    continue;
                };
                if !route_survives(previous, old_v, old_t, l, &survives, &mut intact) {
                    crossing += 1;
                    crossing_per_tree[l * n + t] += 1;
                }
                in_tree += u32::from(mapping.entry_changed(layers, l, v, t));
            }
            changed += u64::from(in_tree);
            trees.changed[l * n + t] = in_tree + routed_in;
        }
    }
    (crossing, changed, trees, crossing_per_tree)
}

/// Whether old switch v's route to old switch t in layer l uses only surviving edges
/// (memoised in `intact`: 1 survives, 2 crosses a loss).
fn route_survives(
    previous: &Previous<'_>,
    v: usize,
    t: usize,
    l: usize,
    survives: &impl Fn(usize) -> bool,
    intact: &mut [u8],
) -> bool {
    let mut chain = Vec::new();
    let mut x = v;
    let verdict = loop {
        if x == t || intact[x] == 1 {
            break true;
        }
        if intact[x] == 2 {
            break false;
        }
        match previous.layers.next_edge(l, x, t) {
            Some(e) if survives(e) => {
                chain.push(x);
                x = previous.graph.edge_to[e] as usize;
            }
            _ => {
                chain.push(x);
                break false;
            }
        }
    };
    for y in chain {
        intact[y] = if verdict { 1 } else { 2 };
    }
    verdict
}

#[cfg(test)]
mod tests;
