//! The pure part of `mcast_build_stree`: from a group's member ports (as OpenSM lists them) to
//! every tree switch's forwarding entry, over the fabric, graph and cable order of the unicast
//! routing in force, with one log line per group. Nothing here touches C.
//!
//! The trees of one routing share their cable loads, so later groups avoid the cables earlier
//! ones use; a group asked for again with the same members keeps its tree (OpenSM rebuilds
//! every group after each heavy sweep, and an unchanged tree sends no MFT block), and one whose
//! members joined or left keeps what it can of it ([`next_tree`]: the old and the new tree
//! lie in one tree, so no copy can circle while the switches take the new entries). A new
//! routing starts from the trees the switches hold ([`Groups::hold`]): OpenSM rebuilds all
//! groups right after the unicast step (osm_state_mgr.c: `osm_mcast_mgr_process(sm, TRUE)`
//! after `osm_ucast_mgr_process`), and a group's held tree that is still one tree over the new
//! routing's cables, inside its lanes, is kept from as after a join — unchanged where its
//! members are; only the others are built afresh, and a staged change holds them to what the
//! old and the new trees share until its last pass.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ibfabric::Fabric;
use ibfabric::routing::MulticastTables;
use ibfabric::routing::multicast::{
    CableLoad, Coverage, MemberPort, MulticastTree, TreeOrigin, held_tree, member_ports, next_tree,
    tree_valley,
};
use ibfabric::session::McastBasis;
use ibfabric::topology::{Guid, PortRef};
use serde::{Deserialize, Serialize};

/// A member port as OpenSM lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemberRecord {
    /// Port GUID (host order): OpenSM lists a port once even if it joined twice.
    pub port_guid: u64,
    /// The port's node GUID (host order).
    pub node_guid: u64,
    /// The port's number (0 for a switch).
    pub port: u8,
}

/// A group's tree as the switches are to be programmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Programmed {
    /// Per tree switch (by node GUID), the ports of its MFT entry for the group.
    pub entries: Vec<(u64, Vec<u8>)>,
    /// The log line.
    pub line: String,
}

/// The trees built over one routing.
#[derive(Debug, Default)]
pub struct Groups {
    load: Option<CableLoad>,
    trees: HashMap<u16, (Vec<MemberPort>, MulticastTree)>,
    /// The groups whose tree here is the one the switches held ([`Groups::hold`]), unchanged.
    held: HashSet<u16>,
}

impl Groups {
    /// Takes the tree the switches hold for group `mlid` (`entries`: per switch node GUID, the
    /// ports set) as the group's tree over `basis`, when it has none here yet and the entries
    /// are one tree over its cables with the rank rule of its order: the group's next tree is
    /// then kept from it (unchanged if its members are), as after a join, instead of built
    /// afresh. Whether it was taken.
    pub fn hold(&mut self, basis: &McastBasis, mlid: u16, entries: &[(u64, Vec<u8>)]) -> bool {
        if self.trees.contains_key(&mlid) || entries.is_empty() {
            return false;
        }
        let mut by_switch = Vec::with_capacity(entries.len());
        for (guid, ports) in entries {
            let Some(node) = basis.fabric.node_by_guid(Guid(*guid)) else {
                return false;
            };
            // A node that is no switch has no index in the graph, which `held_tree` refuses.
            by_switch.push((basis.graph.index_of[node.index()] as usize, ports.clone()));
        }
        let load = self
            .load
            .get_or_insert_with(|| CableLoad::new(&basis.fabric, &basis.graph));
        let Some(tree) = held_tree(
            &basis.fabric,
            &basis.graph,
            basis.order.as_ref(),
            &by_switch,
            load,
        ) else {
            return false;
        };
        let mut ports = tree.members.clone();
        ports.sort_unstable();
        load.add(&tree);
        self.trees.insert(mlid, (ports, tree));
        self.held.insert(mlid);
        true
    }

    /// The entries of group `mlid` with `members` over `basis`.
    ///
    /// # Errors
    /// A member whose node is not in the routed fabric (the subnet changed since).
    pub fn program(
        &mut self,
        basis: &McastBasis,
        mlid: u16,
        members: &[MemberRecord],
    ) -> Result<Programmed, String> {
        let mut seen = HashSet::new();
        let mut ends = Vec::with_capacity(members.len());
        for m in members.iter().filter(|m| seen.insert(m.port_guid)) {
            let node = basis
                .fabric
                .node_by_guid(Guid(m.node_guid))
                .ok_or_else(|| {
                    format!(
                        "member node {:#018x} is not in the routed subnet",
                        m.node_guid
                    )
                })?;
            ends.push(PortRef { node, port: m.port });
        }
        let load = self
            .load
            .get_or_insert_with(|| CableLoad::new(&basis.fabric, &basis.graph));
        if ends.len() < 2 {
            // As OpenSM's own builder: nothing to forward between fewer than two ports.
            if let Some((_, old)) = self.trees.remove(&mlid) {
                load.remove(&old);
            }
            self.held.remove(&mlid);
            return Ok(Programmed {
                entries: Vec::new(),
                line: format!(
                    "multicast MLID {mlid:#06x}: {} member port{}, nothing to forward",
                    ends.len(),
                    if ends.len() == 1 { "" } else { "s" }
                ),
            });
        }
        let (ports, unattached) = member_ports(&basis.fabric, &basis.graph, &ends);
        let old = self.trees.remove(&mlid);
        if let Some((_, old)) = &old {
            load.remove(old);
        }
        let from_held = self.held.remove(&mlid);
        let (tree, origin) = next_tree(&basis.graph, basis.order.as_ref(), old, &ports, load);
        let mut line = describe(basis, mlid, ends.len(), &tree, unattached.len());
        match origin {
            TreeOrigin::Same if from_held => {
                // Still the tree the switches held.
                self.held.insert(mlid);
                line.push_str("; kept from the tree the switches hold");
            }
            TreeOrigin::Extended if from_held => {
                line.push_str("; kept from the tree the switches hold");
            }
            TreeOrigin::Afresh => line.push_str(
                "; built afresh: the old tree could not reach the new members, and copies may \
                 follow both trees while the switches take the new one",
            ),
            _ => {}
        }
        let entries = tree
            .forwarding()
            .into_iter()
            .map(|(s, ports)| (basis.fabric.node(basis.graph.nodes[s]).guid.0, ports))
            .collect();
        self.trees.insert(mlid, (ports, tree));
        Ok(Programmed { entries, line })
    }
}

/// What the switches hold of every group: the entries the plugin set last (OpenSM clears a
/// group's rows before it asks for its tree, and sends every block after), with the members
/// OpenSM named then. A staged change plans the trees of the same groups over its routing
/// from these.
///
/// After a restart the trees saved before it ([`crate::saved_trees`]) stand for what the
/// switches hold: OpenSM knows none of those groups until their members join again, so they
/// are not forgotten as groups OpenSM deleted would be, until a tree is set for their MLID.
#[derive(Debug, Default)]
pub struct HeldTrees {
    groups: BTreeMap<u16, HeldGroup>,
    restored: BTreeSet<u16>,
}

/// One group as the switches hold it: the members OpenSM named, and per switch node GUID the
/// ports set for it.
type HeldGroup = (Vec<MemberRecord>, Vec<SwitchEntry>);

/// A switch's entry for a group: its node GUID and the ports set.
pub type SwitchEntry = (u64, Vec<u8>);

impl HeldTrees {
    /// Records what was set for group `mlid` (no entries: nothing, or the set failed).
    pub fn record(&mut self, mlid: u16, members: &[MemberRecord], entries: &[(u64, Vec<u8>)]) {
        self.groups
            .insert(mlid, (members.to_vec(), entries.to_vec()));
        self.restored.remove(&mlid);
    }

    /// Takes `groups` (MLID, members, entries), saved before a restart, as what the switches
    /// hold, if nothing was set since the start; the number taken.
    pub fn restore(
        &mut self,
        groups: impl IntoIterator<Item = (u16, Vec<MemberRecord>, Vec<(u64, Vec<u8>)>)>,
    ) -> usize {
        if !self.groups.is_empty() {
            return 0;
        }
        for (mlid, members, entries) in groups {
            self.groups.insert(mlid, (members, entries));
            self.restored.insert(mlid);
        }
        self.restored.len()
    }

    /// Every group: MLID, members, entries, by ascending MLID.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &[MemberRecord], &[SwitchEntry])> {
        self.groups
            .iter()
            .map(|(&mlid, (members, entries))| (mlid, &members[..], &entries[..]))
    }

    /// The entries set last for group `mlid` (none if it has no tree).
    pub fn entries(&self, mlid: u16) -> &[SwitchEntry] {
        self.groups
            .get(&mlid)
            .map_or(&[], |(_, entries)| &entries[..])
    }

    /// Forgets the groups that are gone (OpenSM clears their rows without asking for a tree),
    /// but not those restored after a restart and not set since.
    pub fn retain(&mut self, exists: impl Fn(u16) -> bool) {
        let restored = &self.restored;
        self.groups
            .retain(|&mlid, _| restored.contains(&mlid) || exists(mlid));
    }

    /// The held entries over `fabric` (switches that are gone left out).
    pub fn tables(&self, fabric: &Fabric) -> MulticastTables {
        let mut tables = MulticastTables::new();
        for (&mlid, (_, entries)) in &self.groups {
            set_entries(&mut tables, fabric, mlid, entries);
        }
        tables
    }

    /// The trees of the same groups, with the same members, over `basis`, built with `groups`
    /// (in MLID order, as OpenSM asks for them, so that `groups` keeps them for its requests
    /// that follow). A group whose members are no longer all routed gets no tree.
    pub fn rebuilt(&self, basis: &McastBasis, groups: &mut Groups) -> MulticastTables {
        let mut tables = MulticastTables::new();
        for (&mlid, (members, entries)) in &self.groups {
            groups.hold(basis, mlid, entries);
            if let Ok(programmed) = groups.program(basis, mlid, members) {
                set_entries(&mut tables, &basis.fabric, mlid, &programmed.entries);
            }
        }
        tables
    }
}

/// Sets group `mlid`'s `entries` (per switch node GUID, its ports) in `tables` over `fabric`,
/// leaving out switches `fabric` does not have.
fn set_entries(
    tables: &mut MulticastTables,
    fabric: &Fabric,
    mlid: u16,
    entries: &[(u64, Vec<u8>)],
) {
    for (guid, ports) in entries {
        if let Some(switch) = fabric.node_by_guid(Guid(*guid)) {
            tables.set(switch, mlid, ports.iter().copied().collect());
        }
    }
}

/// `programmed` held to the entries a staged change's first pass allows (`first`, over
/// `fabric`): each switch keeps the ports of its entry that `first` has for the group, so
/// that the tree is the one the plan proved; the log line says how many switches shrank.
pub fn shrink(
    mut programmed: Programmed,
    fabric: &Fabric,
    mlid: u16,
    first: &MulticastTables,
) -> Programmed {
    let before = programmed.entries.clone();
    for (guid, ports) in &mut programmed.entries {
        let allowed = fabric
            .node_by_guid(Guid(*guid))
            .and_then(|switch| first.ports(switch, mlid))
            .unwrap_or_default();
        ports.retain(|&port| allowed.contains(port));
    }
    programmed.entries.retain(|(_, ports)| !ports.is_empty());
    let shrunk = before
        .iter()
        .filter(|entry| !programmed.entries.contains(entry))
        .count();
    if shrunk > 0 {
        programmed.line.push_str(&format!(
            "; staged change: {shrunk} of {} tree switches hold only what the old and the new \
             tree share until the last pass",
            before.len()
        ));
    }
    programmed
}

/// The group's log line: MLID, members, tree switches, depth, root and guarantee — checked
/// on the tree itself ([`tree_valley`]) where the order claims it.
fn describe(
    basis: &McastBasis,
    mlid: u16,
    members: usize,
    tree: &MulticastTree,
    unattached: usize,
) -> String {
    let root = tree.root.map_or_else(
        || "none".to_string(),
        |r| basis.fabric.node(basis.graph.nodes[r]).name.clone(),
    );
    let guarantee = match (tree.coverage, &basis.order) {
        (Coverage::Unimodal, Some(order)) => match tree_valley(order, tree) {
            None => "inside the lanes by port pair: deadlock-free with the unicast routes \
                     whatever SL"
                .to_string(),
            Some(valley) => {
                log::error!(
                    "multicast MLID {mlid:#06x}: internal error: the tree has a valley (edges \
                     {valley:?})"
                );
                "NOT covered by the deadlock proof (the tree has a valley)".to_string()
            }
        },
        (Coverage::NoUnimodalTree, _) => "NOT covered by the deadlock proof (the cable order \
                                          admits no tree for these members: shortest-path tree)"
            .to_string(),
        (Coverage::Unimodal | Coverage::NoOrder, _) => {
            format!("not covered by the deadlock proof ({})", basis.scheme)
        }
    };
    let mut line = format!(
        "multicast MLID {mlid:#06x}: {members} member ports, {} tree switches, depth {}, root \
         {root}: {guarantee}",
        tree.switches().len(),
        tree.depth()
    );
    let missed = tree.unreached.len() + unattached;
    if missed > 0 {
        line.push_str(&format!(
            "; {missed} member port{} unreachable",
            if missed == 1 { "" } else { "s" }
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibfabric::routing::cable_order::CableOrder;
    use ibfabric::routing::graph::RoutingGraph;
    use ibfabric::topology::TopologySpec;

    fn basis(order: bool) -> McastBasis {
        let fabric = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        let graph = RoutingGraph::new(&fabric);
        let order = order.then(|| CableOrder::for_routing(&graph, 1));
        McastBasis {
            fabric,
            graph,
            order,
            scheme: "DFSSSP virtual lanes".into(),
        }
    }

    fn hosts(basis: &McastBasis, count: usize) -> Vec<MemberRecord> {
        basis
            .fabric
            .hosts()
            .take(count)
            .map(|h| {
                let node = basis.fabric.node(h);
                MemberRecord {
                    port_guid: node.ports[1].guid.0,
                    node_guid: node.guid.0,
                    port: 1,
                }
            })
            .collect()
    }

    /// Every member host's switch has the host's port in its entry, and no host port of
    /// anyone else is there.
    fn assert_reaches_exactly(basis: &McastBasis, members: &[MemberRecord], p: &Programmed) {
        let mut reached = HashSet::new();
        for (guid, ports) in &p.entries {
            let switch = basis.fabric.node_by_guid(Guid(*guid)).unwrap();
            for &port in ports.iter().filter(|&&port| port != 0) {
                let peer = basis.fabric.peer(PortRef { node: switch, port }).unwrap();
                if !basis.fabric.node(peer.node).is_switch() {
                    reached.insert(basis.fabric.node(peer.node).guid.0);
                }
            }
        }
        let expected: HashSet<u64> = members.iter().map(|m| m.node_guid).collect();
        assert_eq!(reached, expected);
    }

    #[test]
    fn groups_reach_their_members_inside_the_lanes_by_port_pair() {
        let basis = basis(true);
        let mut groups = Groups::default();
        for (mlid, count) in [(0xc000, 200), (0xc001, 7)] {
            let members = hosts(&basis, count);
            let p = groups.program(&basis, mlid, &members).unwrap();
            assert_reaches_exactly(&basis, &members, &p);
            assert!(p.line.contains("whatever SL"), "{}", p.line);
            assert!(
                p.line.contains(&format!("{count} member ports")),
                "{}",
                p.line
            );
        }
    }

    #[test]
    fn without_an_order_the_line_names_the_scheme() {
        let basis = basis(false);
        let members = hosts(&basis, 5);
        let p = Groups::default().program(&basis, 0xc000, &members).unwrap();
        assert_reaches_exactly(&basis, &members, &p);
        assert!(
            p.line
                .ends_with("not covered by the deadlock proof (DFSSSP virtual lanes)"),
            "{}",
            p.line
        );
    }

    #[test]
    fn the_same_members_keep_their_tree_and_new_ones_move_the_load() {
        let basis = basis(true);
        let mut groups = Groups::default();
        let members = hosts(&basis, 30);
        let first = groups.program(&basis, 0xc000, &members).unwrap();
        let load = groups.load.clone().unwrap();
        assert_eq!(groups.program(&basis, 0xc000, &members).unwrap(), first);
        assert_eq!(groups.load.as_ref(), Some(&load), "counted once");
        // One member leaves: the old tree is taken off before the new one is counted.
        let fewer = &members[..29];
        let p = groups.program(&basis, 0xc000, fewer).unwrap();
        assert_reaches_exactly(&basis, fewer, &p);
        let tree_cables: u32 = groups.trees[&0xc000].1.cables.len() as u32;
        let counted: u32 = groups.load.as_ref().unwrap().groups().iter().sum();
        assert_eq!(counted, tree_cables);
        // Down to one member: nothing to forward, nothing counted.
        let p = groups.program(&basis, 0xc000, &members[..1]).unwrap();
        assert!(p.entries.is_empty());
        assert!(
            groups
                .load
                .as_ref()
                .unwrap()
                .groups()
                .iter()
                .all(|&g| g == 0)
        );
    }

    #[test]
    fn a_new_routing_keeps_the_tree_the_switches_hold() {
        let basis = basis(true);
        let every = hosts(&basis, usize::MAX);
        let members: Vec<MemberRecord> = every.iter().copied().step_by(9).collect();
        let set = Groups::default().program(&basis, 0xc000, &members).unwrap();
        // Another routing over the same fabric: the held tree is taken and kept as it is.
        let mut groups = Groups::default();
        assert!(groups.hold(&basis, 0xc000, &set.entries));
        assert!(!groups.hold(&basis, 0xc000, &set.entries), "held once");
        let kept = groups.program(&basis, 0xc000, &members).unwrap();
        assert_eq!(kept.entries, set.entries);
        assert!(
            kept.line
                .ends_with("; kept from the tree the switches hold"),
            "{}",
            kept.line
        );
        // A member more: grown from the held tree, which keeps every entry it had.
        let mut more = members.clone();
        more.push(every[1]);
        let grown = groups.program(&basis, 0xc000, &more).unwrap();
        assert_reaches_exactly(&basis, &more, &grown);
        assert!(
            grown
                .line
                .ends_with("; kept from the tree the switches hold"),
            "{}",
            grown.line
        );
        let again = groups.program(&basis, 0xc000, &more).unwrap();
        assert!(!again.line.contains("kept from"), "{}", again.line);
        let grown: HashMap<u64, &Vec<u8>> = grown.entries.iter().map(|(g, p)| (*g, p)).collect();
        for (guid, ports) in &set.entries {
            assert!(
                ports.iter().all(|p| grown[guid].contains(p)),
                "switch {guid:#x} lost a port"
            );
        }
    }

    #[test]
    fn entries_that_are_no_tree_of_the_routing_are_not_held() {
        let basis = basis(true);
        let members = hosts(&basis, 40);
        let set = Groups::default().program(&basis, 0xc000, &members).unwrap();
        let mut groups = Groups::default();
        // A host's GUID where a switch's should be.
        let mut wrong = set.entries.clone();
        wrong[0].0 = members[0].node_guid;
        assert!(!groups.hold(&basis, 0xc000, &wrong));
        // A switch of the tree left out: the tree falls apart.
        assert!(!groups.hold(&basis, 0xc000, &set.entries[1..]));
        assert!(!groups.hold(&basis, 0xc000, &[]));
        assert!(groups.trees.is_empty());
    }

    #[test]
    fn restored_trees_stay_until_their_group_gets_a_tree() {
        let basis = basis(true);
        let members = hosts(&basis, 30);
        let p = Groups::default().program(&basis, 0xc001, &members).unwrap();
        let mut held = HeldTrees::default();
        let saved = vec![
            (0xc000, members.clone(), p.entries.clone()),
            (0xc001, members.clone(), p.entries.clone()),
        ];
        assert_eq!(held.restore(saved.clone()), 2);
        // OpenSM knows neither group yet: both stay.
        held.retain(|_| false);
        assert_eq!(held.iter().count(), 2);
        // 0xc001 gets its tree again; it is forgotten once OpenSM deletes it.
        held.record(0xc001, &members, &p.entries);
        held.retain(|_| false);
        let left: Vec<u16> = held.iter().map(|(mlid, _, _)| mlid).collect();
        assert_eq!(left, vec![0xc000]);
        // Nothing is restored over trees set since the start.
        assert_eq!(held.restore(saved), 0);
        assert_eq!(held.iter().count(), 1);
    }

    #[test]
    fn held_trees_rebuilt_over_the_same_routing_are_the_trees_set() {
        let basis = basis(true);
        let mut groups = Groups::default();
        let mut held = HeldTrees::default();
        for (mlid, count) in [(0xc000, 200), (0xc001, 7), (0xc002, 40)] {
            let members = hosts(&basis, count);
            let p = groups.program(&basis, mlid, &members).unwrap();
            held.record(mlid, &members, &p.entries);
        }
        let set = held.tables(&basis.fabric);
        assert_eq!(set.mlids(), vec![0xc000, 0xc001, 0xc002]);
        assert_eq!(held.rebuilt(&basis, &mut Groups::default()), set);
        held.retain(|mlid| mlid != 0xc001);
        assert_eq!(held.tables(&basis.fabric).mlids(), vec![0xc000, 0xc002]);
    }

    #[test]
    fn a_staged_tree_keeps_only_the_ports_the_first_pass_allows() {
        let basis = basis(true);
        let members = hosts(&basis, 30);
        let p = Groups::default().program(&basis, 0xc000, &members).unwrap();
        // The first pass allows every switch of the tree but one its entry's lowest port.
        let mut first = MulticastTables::new();
        for (i, (guid, ports)) in p.entries.iter().enumerate() {
            let switch = basis.fabric.node_by_guid(Guid(*guid)).unwrap();
            let keep = if i == 0 { &ports[..1] } else { &ports[..] };
            first.set(switch, 0xc000, keep.iter().copied().collect());
        }
        let shrunk = shrink(p.clone(), &basis.fabric, 0xc000, &first);
        assert_eq!(shrunk.entries.len(), p.entries.len());
        assert_eq!(shrunk.entries[0].1, p.entries[0].1[..1].to_vec());
        assert_eq!(shrunk.entries[1..], p.entries[1..]);
        assert!(
            shrunk.line.ends_with(&format!(
                "staged change: 1 of {} tree switches hold only what the old and the new tree \
                 share until the last pass",
                p.entries.len()
            )),
            "{}",
            shrunk.line
        );
        // Nothing allowed: no entry at all.
        let none = shrink(p, &basis.fabric, 0xc000, &MulticastTables::new());
        assert!(none.entries.is_empty());
    }

    /// Per switch node GUID, the ports of an entry.
    fn ports(p: &Programmed) -> HashMap<u64, HashSet<u8>> {
        p.entries
            .iter()
            .map(|(guid, ports)| (*guid, ports.iter().copied().collect()))
            .collect()
    }

    #[test]
    fn a_join_only_adds_to_the_tree_and_a_leave_only_takes_from_it() {
        let basis = basis(true);
        let mut groups = Groups::default();
        let everyone = hosts(&basis, 200);
        let members: Vec<MemberRecord> = everyone.iter().copied().step_by(9).collect();
        let before = ports(&groups.program(&basis, 0xc000, &members).unwrap());
        // A host on a switch the tree does not reach yet joins.
        let joining = everyone
            .iter()
            .rev()
            .find(|h| !members.contains(h))
            .copied()
            .unwrap();
        let mut more = members.clone();
        more.push(joining);
        let joined = groups.program(&basis, 0xc000, &more).unwrap();
        assert_reaches_exactly(&basis, &more, &joined);
        assert!(!joined.line.contains("built afresh"), "{}", joined.line);
        let after_join = ports(&joined);
        for (guid, old) in &before {
            assert!(
                old.is_subset(&after_join[guid]),
                "{guid:#x}: a join took ports"
            );
        }
        // Two members leave.
        let fewer = &more[2..];
        let left = groups.program(&basis, 0xc000, fewer).unwrap();
        assert_reaches_exactly(&basis, fewer, &left);
        for (guid, new) in ports(&left) {
            assert!(
                new.is_subset(&after_join[&guid]),
                "{guid:#x}: a leave added ports"
            );
        }
    }

    #[test]
    fn a_member_outside_the_routed_subnet_is_an_error() {
        let basis = basis(true);
        let mut members = hosts(&basis, 3);
        members[1].node_guid = 0xdead;
        let err = Groups::default()
            .program(&basis, 0xc000, &members)
            .unwrap_err();
        assert!(err.contains("0x000000000000dead"), "{err}");
    }
}
