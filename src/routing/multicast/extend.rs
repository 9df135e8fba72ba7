//! A group's tree after its members changed, kept as far as it can be.
//!
//! OpenSM rewrites a group's multicast entries switch by switch when members join or leave;
//! meanwhile some switches hold the old entry and some the new. Were the new tree built
//! afresh, a copy could follow cables of both trees: round a cycle they make together, without
//! end, or down one tree and up the other, outside the lanes by port pair. So the old tree is
//! kept: its branches that lead to no member any more are cut off, and the switches of new
//! members are reached by branches grown from the kept tree under the rank rule, through
//! switches the old tree never had. The old and the new tree then lie in one tree (the old one
//! with the new branches), which has the rank rule everywhere: every mixture replicates along
//! that tree only, and every path through it is unimodal.

use super::load::CableLoad;
use super::search::Growth;
use super::{Coverage, MemberPort, MulticastTree, TreeCable};
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::RoutingGraph;

/// How [`next_tree`] came to a group's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeOrigin {
    /// The old tree, for the same member ports.
    Same,
    /// Kept from the old tree: branches cut off and grown ([`extend_tree`]).
    Extended,
    /// Built afresh although there was an old tree: the kept tree could not reach every
    /// member switch, and copies may follow both trees while the switches take the new one.
    Afresh,
    /// Built: there was no old tree.
    New,
}

/// The next tree of a group whose member ports are now `members` (sorted, as
/// [`super::member_ports`] gives them), from `old` — its tree so far and the member ports it
/// was built for, not counted in `load` — as a tree must change while the switches hold the old
/// one: the old tree itself when the members are the same, else kept as far as it can be
/// ([`extend_tree`]), else (or without an old tree) built; counted in `load`.
pub fn next_tree(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    old: Option<(Vec<MemberPort>, MulticastTree)>,
    members: &[MemberPort],
    load: &mut CableLoad,
) -> (MulticastTree, TreeOrigin) {
    match old {
        Some((old_members, old)) if old_members == members => {
            load.add(&old);
            (old, TreeOrigin::Same)
        }
        Some((_, old)) => match extend_tree(graph, order, &old, members, load) {
            Some(tree) => (tree, TreeOrigin::Extended),
            None => (
                super::build_tree(graph, order, members, load),
                TreeOrigin::Afresh,
            ),
        },
        None => (
            super::build_tree(graph, order, members, load),
            TreeOrigin::New,
        ),
    }
}

/// The tree of a group whose members are now `members`, kept from `old` (see the module
/// documentation) and counted in `load` (from which `old` was taken off before); `None` when
/// the kept tree cannot reach every member switch that way (the caller builds one afresh).
pub fn extend_tree(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    old: &MulticastTree,
    members: &[MemberPort],
    load: &mut CableLoad,
) -> Option<MulticastTree> {
    let root = old.root?;
    let n = graph.len();
    let mut members = members.to_vec();
    members.sort_unstable();
    members.dedup();
    let mut is_member = vec![false; n];
    for m in &members {
        is_member[m.switch] = true;
    }
    let member_switches = is_member.iter().filter(|&&m| m).count();
    if member_switches == 0 {
        return None;
    }
    // The old tree's switches that keep a member below them (children after parents in
    // `old.cables`, so a reverse walk sees every child before its parent).
    let mut keep = vec![false; n];
    for c in old.cables.iter().rev() {
        keep[c.child] |= is_member[c.child];
        keep[c.parent] |= keep[c.child];
    }
    keep[root] |= is_member[root];
    if !keep[root] {
        return None;
    }
    let kept: Vec<&TreeCable> = old.cables.iter().filter(|c| keep[c.child]).collect();
    let mut growth = Growth::new(n);
    // The old tree's switches may not be grown into (a kept one is in the tree already).
    growth.parent[root] = root;
    for c in &old.cables {
        growth.parent[c.child] = c.child;
    }
    let mut level = vec![root];
    for c in &kept {
        growth.parent[c.child] = c.parent;
        if let Some(order) = order {
            growth.bound[c.child] = (order.rank(c.up), order.rank(c.down));
        }
        level.push(c.child);
    }
    growth.top_down = level.clone();
    let reached = growth.grow(
        graph,
        order,
        load,
        level.clone(),
        &is_member,
        member_switches,
    );
    if reached < member_switches {
        return None;
    }
    // The grown switches that lead to a member, children after parents.
    let grown = &growth.top_down[level.len()..];
    let mut needed = vec![false; n];
    for &v in grown.iter().rev() {
        needed[v] |= is_member[v];
        if needed[v] {
            needed[growth.parent[v]] = true;
        }
    }
    let mut cables: Vec<TreeCable> = kept.into_iter().copied().collect();
    cables.extend(
        grown
            .iter()
            .filter(|&&v| needed[v])
            .map(|&v| load.cable(graph, growth.parent[v], v)),
    );
    let (root, cables) = trim_root(root, cables, &is_member);
    let mut in_tree = vec![false; n];
    in_tree[root] = true;
    for c in &cables {
        in_tree[c.child] = true;
    }
    let (reached, unreached) = members.into_iter().partition(|m| in_tree[m.switch]);
    let tree = MulticastTree {
        root: Some(root),
        cables,
        members: reached,
        unreached,
        coverage: if order.is_some() {
            old.coverage
        } else {
            Coverage::NoOrder
        },
    };
    load.add(&tree);
    Some(tree)
}

/// The tree without the chain above its highest switch that is a member or has two children:
/// a copy has nothing to do there.
fn trim_root(
    mut root: usize,
    mut cables: Vec<TreeCable>,
    is_member: &[bool],
) -> (usize, Vec<TreeCable>) {
    loop {
        let mut below = cables.iter().enumerate().filter(|(_, c)| c.parent == root);
        match (below.next(), below.next()) {
            (Some((i, c)), None) if !is_member[root] => {
                root = c.child;
                cables.remove(i);
            }
            _ => return (root, cables),
        }
    }
}
