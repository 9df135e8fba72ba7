//! Forwarding tables that spread the LIDs of one destination switch over its equal-cost next
//! hops and parallel cables, as fat-tree routings spread destinations (d-mod-k).
//!
//! A layer is a tree per destination *switch*, so without this every host of a leaf is reached
//! over the same spine in a layer and every cable between two switches is one routing edge:
//! on a two-level fat tree with one spine per host of a leaf, layer 0 then carries a pairing of
//! leaves at one sixth of what minhop's tables carry. On a hierarchical fabric
//! ([`Hierarchy`]), each LID gets its own tree instead: a switch whose route in the layer's
//! tree is minimal (all the way, so every route keeps its hop count) takes, for the j-th LID of the destination in layer l (LIDs in order), the
//! (j + l)-th of its channels towards a switch one hop closer — cables counted round the
//! next-hop switches first, so consecutive LIDs take different switches before they take a
//! second cable to one; switches nearer the destination divide j + l by the choices made
//! farther out first (d-mod-k's digits), so a spine spreads the LIDs a leaf sent it over its
//! parallel cables down. Every source picks the same channel for a LID, so each cable down
//! into a leaf carries its share of that leaf's hosts.
//!
//! Every route stays one the deadlock scheme covers: switches are settled in the order of
//! their depth in the layer's tree, each only onto already settled ones (loop-free); given the
//! cable order of the lanes by port pair, a channel is taken only if the route it starts stays
//! unimodal, and a LID whose tree cannot be completed so keeps the layer's tree. The schemes
//! that assign path SLs (DFSSSP, colouring) read the tables, so they see these routes.

use super::cable_order::{CableOrder, Shape};
use super::graph::RoutingGraph;
use super::hierarchy::Hierarchy;
use super::layers::Layers;
use super::lft::ForwardingTables;
use super::lids::LidTable;
use super::tables::{forwarding_tables, lid_tree};
use crate::topology::Fabric;
use std::collections::{BTreeMap, HashMap};

/// The forwarding tables of `layers`, spread per LID on hierarchical fabrics; on other fabrics
/// exactly [`forwarding_tables`]. `order` is the cable order every route must stay unimodal in
/// (lanes by port pair), `None` when any loop-free route is covered.
pub fn spread_forwarding_tables(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
    order: Option<&CableOrder>,
) -> ForwardingTables {
    let mut tables = forwarding_tables(fabric, graph, layers, lids);
    let Some(hierarchy) = Hierarchy::recognise(graph) else {
        return tables;
    };
    // LIDs per (destination switch, layer, a switch's own LID?), in LID order: j is the
    // position.
    let mut groups: BTreeMap<(usize, usize, bool), Vec<u16>> = BTreeMap::new();
    for (lid, owner) in lids.iter() {
        if let Some(tree) = lid_tree(fabric, graph, layers.count(), owner) {
            groups
                .entry((tree.switch, tree.layer, tree.delivery_port == 0))
                .or_default()
                .push(lid);
        }
    }
    let mut scratch = Scratch::new(graph.len());
    scratch.rank_leaves(&hierarchy);
    for (&(t, layer, own), group) in &groups {
        // Switches' own LIDs all take the first channel (below): no digit to offset.
        let spread_lids = (!own).then_some(group.len());
        scratch.settle_order(graph, layers, layer, t, &hierarchy, spread_lids);
        for (j, &lid) in group.iter().enumerate() {
            // Destination switch t's LIDs start t·|group| channels on, so that where a switch
            // has more channels than a destination has LIDs (parallel cables) the
            // destinations take different ones.
            // Switches' own LIDs (management traffic only) all take each switch's first
            // channel: routes between two top switches then all go down to one leaf and up
            // again, while spread they would go over different leaves and close cycles of
            // channel dependencies with the hosts' routes that one VL cannot break.
            let k = if own { 0 } else { j + layer + t * group.len() };
            // The LIDs past the last whole round of t's cables up (see `Scratch::digits`).
            let index = LidIndex {
                k,
                extra: scratch
                    .first_extra
                    .filter(|&first| j >= first)
                    .map(|first| j - first + layer),
            };
            if scratch.spread(graph, layers, layer, t, index, order) {
                for &s in &scratch.settled {
                    if s != t {
                        let (_, port) = scratch.channel[s];
                        tables.set(graph.nodes[s], lid, port);
                    }
                }
            }
        }
    }
    tables
}

/// Where one LID's routes go at each switch.
#[derive(Debug, Clone, Copy)]
struct LidIndex {
    /// d-mod-k's spreading index, divided by each switch's digit.
    k: usize,
    /// For one of the destination's LIDs past the last whole round of its cables up: its
    /// position among them plus the layer, from which the leaves start at their offset.
    extra: Option<usize>,
}

/// Per destination tree: the settle order, and per LID each switch's chosen channel and the
/// shape of its route.
struct Scratch {
    /// Switches that reach the destination in the layer's tree, by depth in it.
    settled: Vec<usize>,
    channel: Vec<(usize, u8)>,
    shape: Vec<Option<Shape>>,
    channels: Vec<(usize, u8)>,
    /// Per switch, what the spreading index is divided by before its choice (d-mod-k's
    /// digits; see [`Scratch::digits`]).
    divisor: Vec<usize>,
    /// Per switch, the first choice of the extra LIDs, when the destination's LIDs cannot be
    /// spread evenly over its cables up: set for the leaves only (see [`Scratch::digits`]).
    offset: Vec<Option<usize>>,
    /// Per switch, its rank among the leaves (level 0), and the number of leaves.
    leaf_rank: Vec<usize>,
    leaves: usize,
    /// The position among the destination's LIDs of its first extra LID, when the leaves
    /// offset the extras (see [`Scratch::digits`]).
    first_extra: Option<usize>,
    /// Per switch, whether its routes into the destination rise and it is above the leaves:
    /// where the extra LIDs take the channel the destination's LIDs use least.
    rising_above_leaves: Vec<bool>,
    /// While the destination has extra LIDs: per (switch, port), how many of its LIDs so far
    /// leave the switch there.
    uses: HashMap<(usize, u8), u32>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Self {
            settled: Vec::with_capacity(n),
            channel: vec![(usize::MAX, 0); n],
            shape: vec![None; n],
            channels: Vec::new(),
            divisor: vec![1; n],
            offset: vec![None; n],
            leaf_rank: vec![0; n],
            leaves: 0,
            first_extra: None,
            rising_above_leaves: vec![false; n],
            uses: HashMap::new(),
        }
    }

    /// Numbers the leaves (level 0) in switch order.
    fn rank_leaves(&mut self, hierarchy: &Hierarchy) {
        self.leaves = 0;
        for (s, &level) in hierarchy.level.iter().enumerate() {
            if level == 0 {
                self.leaf_rank[s] = self.leaves;
                self.leaves += 1;
            }
        }
    }

    /// Orders the switches routed to `t` in `layer` by their hop count in its tree, and finds
    /// their digits.
    fn settle_order(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        layer: usize,
        t: usize,
        hierarchy: &Hierarchy,
        lids: Option<usize>,
    ) {
        self.settled.clear();
        self.settled
            .extend((0..graph.len()).filter(|&s| layers.is_routed(layer, s, t)));
        self.settled
            .sort_by_key(|&s| layers.hops(layer, s, t).unwrap_or(0));
        self.digits(graph, hierarchy, t, lids);
    }

    /// d-mod-k's digits for the routes into `t`: a
    /// route rises through the levels and then falls, so a switch whose minimal next hops all
    /// rise divides the index by the choices of the levels below it (a leaf uses the lowest
    /// digit, a switch one level up the next), and a switch on the falling part by the
    /// choices of every rising level (a spine spreads the LIDs that one leaf's choice sent it
    /// over its parallel cables down). Digits by distance to `t` instead would give the
    /// leaves of t's own pod (nearer t than the leaves of other pods) a high digit on a
    /// three-level tree, which every one of t's LIDs shares.
    ///
    /// The lowest digit picks the cable down into `t` (on a three-level tree, through the
    /// group of spines it picks). When `t`'s `lids` (`None`: its own LIDs, which are not
    /// spread) outnumber its cables up and are not a multiple of them (a cable lost: four
    /// LIDs over three cables) and each cable up goes to a switch of its own, the LIDs past
    /// the last whole round of cables — the extra ones — would go the same way from every
    /// leaf, and one cable into `t` would carry twice the share of the others. Each leaf
    /// instead starts the extra LIDs at the choice given by its shift to `t` (`t`'s rank among
    /// the leaves minus its own, as in a shift all-to-all) times the number of extras: the
    /// leaves sending to one `t` have different shifts, so their extras go down different
    /// cables into `t` as long as there are cables, and one leaf's shifts to different
    /// destinations differ too, so its own cables up share them. Every other LID keeps
    /// d-mod-k's choice (every source picks the same cable for it, so those hosts of a leaf
    /// are received over different cables in any permutation, and an extra one shares a cable
    /// with one of them, as it would anyway).
    fn digits(
        &mut self,
        graph: &RoutingGraph,
        hierarchy: &Hierarchy,
        t: usize,
        lids: Option<usize>,
    ) {
        let level = |s: usize| usize::from(hierarchy.level[s]);
        let rises = |s: usize| {
            graph
                .closer_edges(s, t)
                .all(|e| level(graph.edge_to[e] as usize) > level(s))
        };
        let mut width = vec![1usize; hierarchy.levels()];
        for &s in self.settled.iter().skip(1) {
            if rises(s) {
                width[level(s)] = width[level(s)].max(graph.closer_edges(s, t).count());
            }
        }
        let up = || {
            graph
                .edges(t)
                .filter(|&e| level(graph.edge_to[e] as usize) > level(t))
        };
        let cables_up: usize = up().map(|e| graph.ports(e).len()).sum();
        // Over parallel cables the switch above picks the cable down by its own digit, which
        // the leaves' shifts do not reach: there the extras keep d-mod-k's choice (measured on
        // a real cluster under OpenSM's LIDs, shifting them there lost 10 %).
        let single_cables = up().all(|e| graph.ports(e).len() == 1);
        // The LIDs before the first extra make whole rounds of the cables up; there are
        // extras only when the LIDs outnumber the cables and are not a multiple of them.
        self.first_extra = lids
            .filter(|&lids| {
                single_cables && cables_up > 0 && lids > cables_up && lids % cables_up != 0
            })
            .map(|lids| lids - lids % cables_up);
        let extras = lids.zip(self.first_extra).map_or(0, |(l, f)| l - f);
        self.uses.clear();
        let uneven = extras > 0;
        // `below[l]`: the product of the widths of the levels under l; `below[levels]`: of
        // all of them.
        let below: Vec<usize> = std::iter::once(1)
            .chain(width.iter().scan(1usize, |product, &w| {
                *product = product.saturating_mul(w);
                Some(*product)
            }))
            .collect();
        for &s in self.settled.iter().skip(1) {
            let rising = rises(s);
            self.divisor[s] = if rising {
                below[level(s)]
            } else {
                below[width.len()]
            };
            self.rising_above_leaves[s] = rising && level(s) > 0;
            self.offset[s] = (uneven && rising && level(s) == 0).then(|| {
                let leaves = self.leaves.max(1);
                let shift = (self.leaf_rank[t] + 2 * leaves - self.leaf_rank[s] - 1) % leaves;
                shift * extras
            });
        }
    }

    /// Chooses every settled switch's channel for the LID with spreading `index`; false when
    /// some switch has no channel that keeps its route unimodal in `order` (the LID then keeps
    /// the layer's tree).
    fn spread(
        &mut self,
        graph: &RoutingGraph,
        layers: &Layers,
        layer: usize,
        t: usize,
        index: LidIndex,
        order: Option<&CableOrder>,
    ) -> bool {
        for &s in &self.settled {
            self.shape[s] = None;
        }
        self.shape[t] = Some(Shape::Root);
        let dist = graph.dist_to(t);
        for i in 1..self.settled.len() {
            let s = self.settled[i];
            let tree = layers.next_edge(layer, s, t).expect("settled");
            // Only a route minimal all the way is spread, so every route keeps its length.
            let minimal = layers.hops(layer, s, t) == Some(dist[s]);
            self.channels.clear();
            let mut next: Vec<usize> = if minimal {
                graph.closer_edges(s, t).collect()
            } else {
                vec![tree]
            };
            next.retain(|&e| {
                let head = graph.edge_to[e] as usize;
                match self.shape[head] {
                    None => false,
                    Some(shape) => order.is_none_or(|order| shape.accepts(order, e)),
                }
            });
            let most = next
                .iter()
                .map(|&e| graph.ports(e).len())
                .max()
                .unwrap_or(0);
            for c in 0..most {
                for &e in &next {
                    if let Some(&port) = graph.ports(e).get(c) {
                        self.channels.push((e, port));
                    }
                }
            }
            if self.channels.is_empty() {
                return false;
            }
            let choice = match (index.extra, self.offset[s]) {
                (Some(extra), Some(offset)) => (extra + offset) % self.channels.len(),
                // Above the leaves an extra LID would follow d-mod-k's digit onto the channel
                // of a whole round's LID that the same leaf choice sent here, and the cable
                // down from the switch it leads to would carry both: it takes the channel the
                // destination's LIDs use least instead, the first such from d-mod-k's (and
                // the switch's own index, so that switches alike choose apart).
                (Some(_), None) if self.rising_above_leaves[s] => {
                    let start = index.k / self.divisor[s] + s;
                    let n = self.channels.len();
                    (0..n)
                        .map(|c| (start + c) % n)
                        .min_by_key(|&c| {
                            let (_, port) = self.channels[c];
                            self.uses.get(&(s, port)).copied().unwrap_or(0)
                        })
                        .expect("a channel")
                }
                _ => (index.k / self.divisor[s]) % self.channels.len(),
            };
            let (e, port) = self.channels[choice];
            self.channel[s] = (e, port);
            let head = graph.edge_to[e] as usize;
            let shape = self.shape[head].expect("settled before");
            self.shape[s] = Some(order.map_or(Shape::Root, |order| shape.extend(order, e)));
        }
        if self.first_extra.is_some() {
            for &s in self.settled.iter().skip(1) {
                *self.uses.entry((s, self.channel[s].1)).or_default() += 1;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests;
