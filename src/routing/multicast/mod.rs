//! Multicast spanning trees that stay inside the deadlock proof of the lanes by port pair.
//!
//! A switch replicates a multicast packet that arrives on port p to every port of the group's
//! forwarding entry (MFT) except p, and gives each copy the VL its (input port, output port,
//! SL) table says — the same tables the unicast routes use. A group's tree therefore adds a
//! channel dependency for every two tree cables that meet at a switch, on every path between
//! two of its ports. The lanes by port pair ([`super::cable_order`]) stay acyclic for unicast
//! and multicast together, whatever SL a sender uses, exactly when none of those paths has a
//! *valley* (a cable ranked below both its neighbours on the path): [`tree_is_unimodal`].
//!
//! Trees are built rooted, under the *rank rule*: ranks rise along every child-to-parent
//! chain and fall along every parent-to-child chain (child x may hang below p when
//! rank(x→p) < rank(p→parent(p)) and rank(p→x) < rank(parent(p)→p); a root has no bound).
//! Every path in such a tree climbs to the lowest common ancestor and descends from it:
//! unimodal. The order's own up*/down* tree has the property, so its subtree spanning the
//! member switches is always a candidate; the search ([`search`]) also grows shortest-depth
//! trees under the rule from the switches most central to the members, and keeps the one whose
//! cables carry the fewest groups so far ([`CableLoad`]), so groups spread over the fabric
//! instead of all crossing the order's root.
//!
//! Without a cable order (the other deadlock schemes, or none) the tree is a shortest-path
//! tree from the most central switch, and [`Coverage`] says that no deadlock proof covers it.

mod extend;
#[cfg(test)]
mod extend_tests;
mod held;
#[cfg(test)]
mod held_tests;
mod load;
mod search;
#[cfg(test)]
mod tests;

pub use extend::{TreeOrigin, extend_tree, next_tree};
pub use held::held_tree;
pub use load::CableLoad;

use std::collections::BTreeMap;

use super::cable_order::CableOrder;
use super::graph::RoutingGraph;
use super::mft::MulticastTables;
use crate::topology::{Fabric, PortRef};

/// A switch port a group's packets leave by towards a member: the port of a member host's
/// cable, or 0 where the switch itself is a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberPort {
    /// Switch index in the routing graph.
    pub switch: usize,
    /// The switch's port (0: the switch itself).
    pub port: u8,
}

/// The switch ports of a group's members, given as the subnet manager lists them (a host's
/// port, or port 0 of a member switch), and the members no switch is cabled to.
pub fn member_ports(
    fabric: &Fabric,
    graph: &RoutingGraph,
    members: &[PortRef],
) -> (Vec<MemberPort>, Vec<PortRef>) {
    let mut ports = Vec::with_capacity(members.len());
    let mut unattached = Vec::new();
    for &member in members {
        let at = if fabric.node(member.node).is_switch() {
            Some(PortRef {
                node: member.node,
                port: 0,
            })
        } else {
            fabric
                .peer(member)
                .filter(|peer| fabric.node(peer.node).is_switch())
        };
        match at {
            Some(at) => ports.push(MemberPort {
                switch: graph.index_of[at.node.index()] as usize,
                port: at.port,
            }),
            None => unattached.push(member),
        }
    }
    ports.sort_unstable();
    ports.dedup();
    (ports, unattached)
}

/// One cable of a tree, between a switch and its parent: one physical cable even where
/// parallel cables join the two (a packet must reach each neighbour once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeCable {
    /// The switch further from the root.
    pub child: usize,
    /// The switch nearer the root.
    pub parent: usize,
    /// The cable's port on the child.
    pub child_port: u8,
    /// The cable's port on the parent.
    pub parent_port: u8,
    /// The edge from child to parent.
    pub up: usize,
    /// The edge from parent to child.
    pub down: usize,
    /// The cable's index in [`CableLoad`].
    pub cable: usize,
}

/// Which deadlock proof, if any, covers a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Every path through the tree rises and then falls in the cable order: inside the lanes
    /// by port pair, deadlock-free with the unicast routes whatever SL.
    Unimodal,
    /// No cable order (another deadlock scheme, or none): a shortest-path tree that no
    /// deadlock proof covers.
    NoOrder,
    /// The order admits no tree the search found for these members (an order left as a
    /// forest by a repair): a shortest-path tree that the proof does NOT cover.
    NoUnimodalTree,
}

/// A group's spanning tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MulticastTree {
    /// The root switch (`None` without members).
    pub root: Option<usize>,
    /// The cables, each parent before its children.
    pub cables: Vec<TreeCable>,
    /// The member ports the tree reaches.
    pub members: Vec<MemberPort>,
    /// Member ports on switches the tree cannot reach (another piece of a fallen-apart
    /// fabric).
    pub unreached: Vec<MemberPort>,
    /// What covers the tree.
    pub coverage: Coverage,
}

impl MulticastTree {
    /// The tree's switches: the root, then each cable's child in cable order.
    pub fn switches(&self) -> Vec<usize> {
        self.root
            .into_iter()
            .chain(self.cables.iter().map(|c| c.child))
            .collect()
    }

    /// Cables on the longest root-to-switch path.
    pub fn depth(&self) -> usize {
        let mut depth: BTreeMap<usize, usize> = self.root.into_iter().map(|r| (r, 0)).collect();
        for c in &self.cables {
            let d = depth.get(&c.parent).copied().unwrap_or(0) + 1;
            depth.insert(c.child, d);
        }
        depth.values().copied().max().unwrap_or(0)
    }

    /// Each tree switch's forwarding entry for the group: its tree cables' ports and its
    /// member ports, ascending (by switch, then port).
    pub fn forwarding(&self) -> Vec<(usize, Vec<u8>)> {
        let mut ports: BTreeMap<usize, Vec<u8>> = self
            .switches()
            .into_iter()
            .map(|s| (s, Vec::new()))
            .collect();
        let mut add = |s: usize, p: u8| ports.entry(s).or_default().push(p);
        for c in &self.cables {
            add(c.parent, c.parent_port);
            add(c.child, c.child_port);
        }
        for m in &self.members {
            add(m.switch, m.port);
        }
        ports
            .into_iter()
            .map(|(s, mut p)| {
                p.sort_unstable();
                p.dedup();
                (s, p)
            })
            .collect()
    }
}

/// Builds the spanning tree of a group with `members` and adds it to `load`: with an `order`,
/// a tree under the rank rule (inside the lanes by port pair), else — or when the order admits
/// none the search finds — a shortest-path tree, as [`MulticastTree::coverage`] says.
pub fn build_tree(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    members: &[MemberPort],
    load: &mut CableLoad,
) -> MulticastTree {
    let mut members = members.to_vec();
    members.sort_unstable();
    members.dedup();
    let mut switches: Vec<usize> = members.iter().map(|m| m.switch).collect();
    switches.dedup();
    let (skeleton, coverage) = match order {
        Some(order) => match search::best_tree(graph, Some(order), &switches, load) {
            Some(s) => (Some(s), Coverage::Unimodal),
            None => (
                search::best_tree(graph, None, &switches, load),
                Coverage::NoUnimodalTree,
            ),
        },
        None => (
            search::best_tree(graph, None, &switches, load),
            Coverage::NoOrder,
        ),
    };
    let Some(skeleton) = skeleton else {
        return MulticastTree {
            root: None,
            cables: Vec::new(),
            members: Vec::new(),
            unreached: members,
            coverage,
        };
    };
    let cables: Vec<TreeCable> = skeleton
        .links
        .iter()
        .map(|&(child, parent)| load.cable(graph, parent, child))
        .collect();
    let mut in_tree = vec![false; graph.len()];
    in_tree[skeleton.root] = true;
    for c in &cables {
        in_tree[c.child] = true;
    }
    let (reached, unreached) = members.into_iter().partition(|m| in_tree[m.switch]);
    let tree = MulticastTree {
        root: Some(skeleton.root),
        cables,
        members: reached,
        unreached,
        coverage,
    };
    load.add(&tree);
    tree
}

/// The trees of `groups` (MLID, member ports as a subnet manager lists them), built one after
/// the other on shared cable loads as after a routing, as multicast forwarding tables.
pub fn group_tables(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    groups: &[(u16, Vec<PortRef>)],
) -> MulticastTables {
    kept_group_tables(fabric, graph, order, groups, &MulticastTables::new())
}

/// The trees of `groups` over a new routing, as [`group_tables`], each kept from the tree
/// `held` has for its MLID where that is still one tree over `graph` with the rank rule of
/// `order` ([`held_tree`], then [`extend_tree`] as after a join: unchanged where its members
/// are), else built afresh — as the plugin builds them after a routing change.
pub fn kept_group_tables(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    groups: &[(u16, Vec<PortRef>)],
    held: &MulticastTables,
) -> MulticastTables {
    let mut load = CableLoad::new(fabric, graph);
    let mut tables = MulticastTables::new();
    for (mlid, members) in groups {
        let (ports, _) = member_ports(fabric, graph, members);
        let entries: Vec<(usize, Vec<u8>)> = held
            .switches()
            .filter_map(|s| {
                let set = held.ports(s, *mlid)?;
                let index = *graph.index_of.get(s.index())? as usize;
                Some((index, set.iter().collect()))
            })
            .collect();
        let old = held_tree(fabric, graph, order, &entries, &load).map(|t| (t.members.clone(), t));
        let (tree, _) = next_tree(graph, order, old, &ports, &mut load);
        for (s, ports) in tree.forwarding() {
            tables.set(graph.nodes[s], *mlid, ports.into_iter().collect());
        }
    }
    tables
}

/// The first path through `tree` that falls and then rises in `order` (three edges: in travel
/// order, the middle one ranked below both others), or `None` when every path is unimodal.
///
/// A path through a tree has a valley exactly when some three consecutive cables do, and any
/// two tree cables at either end of a middle one continue it into a path (a tree has no
/// other way back), so it suffices to look, for every tree cable in each direction, at the
/// highest-ranked cable entering its tail and the highest leaving its head.
pub fn tree_valley(order: &CableOrder, tree: &MulticastTree) -> Option<[usize; 3]> {
    // Per switch: (neighbour, edge in from it, edge out to it).
    let mut around: BTreeMap<usize, Vec<(usize, usize, usize)>> = BTreeMap::new();
    for c in &tree.cables {
        around
            .entry(c.parent)
            .or_default()
            .push((c.child, c.up, c.down));
        around
            .entry(c.child)
            .or_default()
            .push((c.parent, c.down, c.up));
    }
    let highest = |edges: &mut dyn Iterator<Item = usize>| edges.max_by_key(|&e| order.rank(e));
    for (&s, neighbours) in &around {
        for &(t, _, middle) in neighbours {
            let before = highest(
                &mut neighbours
                    .iter()
                    .filter(|n| n.0 != t)
                    .map(|&(_, into, _)| into),
            );
            let after = highest(
                &mut around[&t]
                    .iter()
                    .filter(|n| n.0 != s)
                    .map(|&(_, _, out)| out),
            );
            if let (Some(a), Some(b)) = (before, after) {
                let r = order.rank(middle);
                if order.rank(a) > r && order.rank(b) > r {
                    return Some([a, middle, b]);
                }
            }
        }
    }
    None
}

/// Whether every path through `tree` between two of its ports rises and then falls in
/// `order`, so the tree's channel dependencies keep the lanes by port pair acyclic together
/// with unicast routes that are all unimodal in the same order.
pub fn tree_is_unimodal(order: &CableOrder, tree: &MulticastTree) -> bool {
    tree_valley(order, tree).is_none()
}
