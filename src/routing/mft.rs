//! Multicast forwarding tables: per switch, per multicast LID, the set of ports a packet for
//! that MLID is replicated to.
//!
//! A switch forwards a packet for MLID `m` arriving on port `p` to every port of its entry for
//! `m` except `p`; port 0 in an entry is the switch itself (its management port is a member).
//! The tables say nothing about who sends: that is what joining a group does, and what the
//! subnet manager turned into these entries.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::topology::{Fabric, NodeId, PortRef};

/// The first multicast LID (`0xC000`).
pub const FIRST_MLID: u16 = 0xC000;
/// The last multicast LID (`0xFFFE`; `0xFFFF` is the permissive LID).
pub const LAST_MLID: u16 = 0xFFFE;

/// Whether `lid` is in the multicast range.
pub fn is_mlid(lid: u16) -> bool {
    (FIRST_MLID..=LAST_MLID).contains(&lid)
}

/// A set of ports 0..=255 of one switch (one MFT entry), as a bit set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortSet([u64; 4]);

impl PortSet {
    /// The empty set.
    pub const EMPTY: Self = Self([0; 4]);

    /// Adds `port`.
    pub fn insert(&mut self, port: u8) {
        self.0[usize::from(port / 64)] |= 1 << (port % 64);
    }

    /// Whether `port` is in the set.
    pub fn contains(&self, port: u8) -> bool {
        self.0[usize::from(port / 64)] & (1 << (port % 64)) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// Number of ports.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The ports, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&p| self.contains(p))
    }

    /// The highest port, if any.
    pub fn highest(&self) -> Option<u8> {
        self.iter().last()
    }

    /// The ports in both sets.
    pub fn intersection(&self, other: &PortSet) -> PortSet {
        PortSet(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }

    /// Whether every port of `self` is in `other`.
    pub fn is_subset(&self, other: &PortSet) -> bool {
        self.intersection(other) == *self
    }
}

impl FromIterator<u8> for PortSet {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        let mut set = Self::EMPTY;
        for p in iter {
            set.insert(p);
        }
        set
    }
}

impl fmt::Display for PortSet {
    /// `1,3,7` (`-` when empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        let ports: Vec<String> = self.iter().map(|p| p.to_string()).collect();
        f.write_str(&ports.join(","))
    }
}

/// The multicast forwarding tables of the switches of a fabric: per switch, MLID → ports.
/// Empty entries are not stored, so two tables compare equal when they replicate alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MulticastTables {
    entries: BTreeMap<NodeId, BTreeMap<u16, PortSet>>,
}

impl MulticastTables {
    /// No entries.
    pub const fn new() -> Self {
        Self {
            entries: BTreeMap::new(),
        }
    }

    /// Sets the entry of `switch` for `mlid` (an empty set removes it).
    pub fn set(&mut self, switch: NodeId, mlid: u16, ports: PortSet) {
        if ports.is_empty() {
            if let Some(table) = self.entries.get_mut(&switch) {
                table.remove(&mlid);
                if table.is_empty() {
                    self.entries.remove(&switch);
                }
            }
        } else {
            self.entries.entry(switch).or_default().insert(mlid, ports);
        }
    }

    /// Adds `port` to the entry of `switch` for `mlid`.
    pub fn add_port(&mut self, switch: NodeId, mlid: u16, port: u8) {
        self.entries
            .entry(switch)
            .or_default()
            .entry(mlid)
            .or_default()
            .insert(port);
    }

    /// The entry of `switch` for `mlid`.
    pub fn ports(&self, switch: NodeId, mlid: u16) -> Option<PortSet> {
        self.entries.get(&switch)?.get(&mlid).copied()
    }

    /// The entries of `switch`, ascending by MLID.
    pub fn table(&self, switch: NodeId) -> impl Iterator<Item = (u16, PortSet)> + '_ {
        self.entries
            .get(&switch)
            .into_iter()
            .flat_map(|t| t.iter().map(|(&m, &p)| (m, p)))
    }

    /// Switches with at least one entry, ascending.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.entries.keys().copied()
    }

    /// Every MLID some switch has an entry for, ascending.
    pub fn mlids(&self) -> Vec<u16> {
        let mut mlids: Vec<u16> = self
            .entries
            .values()
            .flat_map(|t| t.keys().copied())
            .collect();
        mlids.sort_unstable();
        mlids.dedup();
        mlids
    }

    /// The switches with an entry for `mlid` and their entries, ascending by switch.
    pub fn group(&self, mlid: u16) -> impl Iterator<Item = (NodeId, PortSet)> + '_ {
        self.entries
            .iter()
            .filter_map(move |(&s, t)| t.get(&mlid).map(|&p| (s, p)))
    }

    /// Number of (switch, MLID) entries.
    pub fn len(&self) -> usize {
        self.entries.values().map(BTreeMap::len).sum()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The member ports of group `mlid` as its entries name them: the CA and router ports
    /// cabled to a port of an entry, and the switches whose entry holds port 0. Ascending.
    pub fn members(&self, fabric: &Fabric, mlid: u16) -> Vec<PortRef> {
        let mut members = Vec::new();
        for (s, ports) in self.group(mlid) {
            for p in ports.iter() {
                if p == 0 {
                    members.push(PortRef { node: s, port: 0 });
                    continue;
                }
                let here = PortRef { node: s, port: p };
                if let Some(peer) = fabric.peer(here)
                    && !fabric.node(peer.node).is_switch()
                {
                    members.push(peer);
                }
            }
        }
        members.sort_unstable();
        members
    }
}

/// Where a packet sent to a group from one port ends up, following the switches' replication.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// The ports that receive a copy (CA and router ports, and switches' port 0), ascending,
    /// each once; the sender is not among them.
    pub reached: Vec<PortRef>,
    /// Switches the packet reaches more than once (a cycle in the entries, or two tree
    /// neighbours both forwarding to it): each arrival after the first is not followed.
    pub duplicates: Vec<NodeId>,
    /// Switches the packet reaches that have no entry for the group (the copy is dropped).
    pub dropped_at: Vec<NodeId>,
    /// Ports of entries without a cable, as (switch, port).
    pub dead_ends: Vec<PortRef>,
}

impl MulticastTables {
    /// Follows a packet for `mlid` sent by `from` — a CA or router port cabled to a switch, or a
    /// switch's port 0 — through the entries: each switch replicates to every port of its entry
    /// but the one the packet arrived on.
    pub fn deliver(&self, fabric: &Fabric, mlid: u16, from: PortRef) -> Delivery {
        let mut out = Delivery::default();
        let start = if fabric.node(from.node).is_switch() {
            Some((from.node, 0))
        } else {
            fabric.peer(from).map(|p| (p.node, p.port))
        };
        let Some(start) = start.filter(|(s, _)| fabric.node(*s).is_switch()) else {
            return out;
        };
        let mut visited = BTreeSet::new();
        let mut pending = vec![start];
        while let Some((v, in_port)) = pending.pop() {
            if !visited.insert(v) {
                out.duplicates.push(v);
                continue;
            }
            let Some(entry) = self.ports(v, mlid) else {
                out.dropped_at.push(v);
                continue;
            };
            for q in entry.iter().filter(|&q| q != in_port) {
                if q == 0 {
                    out.reached.push(PortRef { node: v, port: 0 });
                    continue;
                }
                match fabric.peer(PortRef { node: v, port: q }) {
                    None => out.dead_ends.push(PortRef { node: v, port: q }),
                    Some(peer) if fabric.node(peer.node).is_switch() => {
                        pending.push((peer.node, peer.port));
                    }
                    Some(peer) => out.reached.push(peer),
                }
            }
        }
        out.reached.retain(|&p| p != from);
        out.reached.sort_unstable();
        out.reached.dedup();
        out.duplicates.sort_unstable();
        out.duplicates.dedup();
        out.dropped_at.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn port_sets_hold_every_port_and_empty_entries_vanish() {
        let all: PortSet = (0..=255u8).collect();
        assert_eq!(all.len(), 256);
        assert_eq!(all.highest(), Some(255));
        let some: PortSet = [0, 63, 64, 200].into_iter().collect();
        assert_eq!(some.iter().collect::<Vec<_>>(), vec![0, 63, 64, 200]);
        assert_eq!(some.to_string(), "0,63,64,200");
        assert!(!some.contains(1));
        let mut t = MulticastTables::new();
        t.set(NodeId(3), 0xC001, some);
        t.add_port(NodeId(1), 0xC000, 5);
        assert_eq!(t.mlids(), vec![0xC000, 0xC001]);
        assert_eq!(t.len(), 2);
        t.set(NodeId(3), 0xC001, PortSet::EMPTY);
        assert_eq!(t.switches().collect::<Vec<_>>(), vec![NodeId(1)]);
        let mut u = MulticastTables::new();
        u.set(NodeId(1), 0xC000, [5].into_iter().collect());
        assert_eq!(t, u);
        assert!(is_mlid(0xC000) && is_mlid(0xFFFE) && !is_mlid(0xFFFF) && !is_mlid(0xBFFF));
    }

    #[test]
    fn delivery_follows_replication_and_names_what_goes_wrong() {
        let f = SlimFly::new(5, None).unwrap().build();
        let sw = |n: &str| f.node_by_name(n).unwrap();
        let (a, b) = (sw("sw0-0-0"), sw("sw0-0-1"));
        // The cable between a and b, and one host on each.
        let (pa, peer) = f
            .neighbours(a)
            .find(|(_, p)| p.node == b)
            .expect("sw0-0-0 and sw0-0-1 are neighbours");
        let host = |s: NodeId| {
            f.neighbours(s)
                .find(|(_, p)| !f.node(p.node).is_switch())
                .unwrap()
        };
        let ((ha, host_a), (hb, host_b)) = (host(a), host(b));
        let mut t = MulticastTables::new();
        t.set(a, 0xc000, [pa, ha].into_iter().collect());
        t.set(b, 0xc000, [peer.port, hb, 0].into_iter().collect());
        let members = t.members(&f, 0xc000);
        assert_eq!(members.len(), 3);
        for &m in &members {
            let d = t.deliver(&f, 0xc000, m);
            let others: Vec<PortRef> = members.iter().copied().filter(|&o| o != m).collect();
            assert_eq!(d.reached, others, "from {}", f.port_name(m));
            assert!(d.duplicates.is_empty() && d.dropped_at.is_empty() && d.dead_ends.is_empty());
        }
        // b without its entry: a's copy to b is dropped there.
        t.set(b, 0xc000, PortSet::EMPTY);
        let d = t.deliver(&f, 0xc000, host_a);
        assert_eq!(d.reached, Vec::<PortRef>::new());
        assert_eq!(d.dropped_at, vec![b]);
        let _ = host_b;
    }
}
