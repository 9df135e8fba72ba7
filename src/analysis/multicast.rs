//! Multicast groups as the switches' multicast forwarding tables build them: per group its
//! members, the switches of its tree, its depth, and whether a packet from each member reaches
//! exactly the other members; across groups, how many groups cross each cable.
//!
//! A group's members are the ports of its entries — the CA and router ports cabled to them
//! and the switches whose entry holds port 0 — unless a member list is given. Depth is the
//! longest member-to-member path through the tree in inter-switch hops. A group crosses a
//! directed cable when a packet from some member is replicated onto it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::routing::MulticastTables;
use crate::routing::mft::Delivery;
use crate::topology::{Fabric, NodeId, PortRef};

/// One group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupReport {
    /// Its multicast LID.
    pub mlid: u16,
    /// Member ports.
    pub members: usize,
    /// Switches with an entry for it.
    pub switches: usize,
    /// Longest member-to-member path through the tree, in inter-switch hops.
    pub depth: u32,
    /// Directed switch-to-switch cables its packets cross.
    pub links: usize,
    /// Whether a packet from every member reaches exactly the other members, each once.
    pub delivers: bool,
    /// What goes wrong, per sending member (the first few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Groups per directed switch-to-switch cable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupLoad {
    /// Directed cables crossed by at least one group.
    pub links_used: usize,
    /// Directed switch-to-switch cables of the fabric.
    pub links: usize,
    /// Mean groups per directed cable of the fabric.
    pub mean: f64,
    /// Most groups on one directed cable.
    pub max: usize,
    /// That cable (`sw[port] -> sw[port]`), the first in port order.
    pub busiest: Option<String>,
}

/// The multicast part of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MulticastReport {
    /// Every group, ascending by MLID.
    pub groups: Vec<GroupReport>,
    /// Groups that deliver to exactly their members.
    pub delivering: usize,
    /// Groups per directed cable.
    pub load: GroupLoad,
}

impl MulticastReport {
    /// Whether every group delivers to exactly its members.
    pub fn all_deliver(&self) -> bool {
        self.delivering == self.groups.len()
    }
}

/// At most this many problems are listed per group.
const LISTED_PROBLEMS: usize = 5;

/// Analyses the groups of `tables`; `members` gives a group's member ports where it is listed
/// (the ports of its entries otherwise).
pub fn analyze_groups(
    fabric: &Fabric,
    tables: &MulticastTables,
    members: &BTreeMap<u16, Vec<PortRef>>,
) -> MulticastReport {
    let mut load: BTreeMap<(NodeId, u8), usize> = BTreeMap::new();
    let mut groups = Vec::new();
    for mlid in tables.mlids() {
        let members = members
            .get(&mlid)
            .cloned()
            .unwrap_or_else(|| tables.members(fabric, mlid));
        let (report, crossed) = group(fabric, tables, mlid, &members);
        for link in crossed {
            *load.entry(link).or_default() += 1;
        }
        groups.push(report);
    }
    let links = fabric
        .switches()
        .flat_map(|s| fabric.neighbours(s))
        .filter(|(_, p)| fabric.node(p.node).is_switch())
        .count();
    let busiest = load
        .iter()
        .max_by_key(|&(&link, &n)| (n, std::cmp::Reverse(link)));
    let load = GroupLoad {
        links_used: load.len(),
        links,
        mean: if links == 0 {
            0.0
        } else {
            load.values().sum::<usize>() as f64 / links as f64
        },
        max: busiest.map_or(0, |(_, &n)| n),
        busiest: busiest.map(|(&(node, port), _)| {
            let from = PortRef { node, port };
            let to = fabric.peer(from).expect("a crossed cable has a peer");
            format!("{} -> {}", fabric.port_name(from), fabric.port_name(to))
        }),
    };
    MulticastReport {
        delivering: groups.iter().filter(|g| g.delivers).count(),
        groups,
        load,
    }
}

/// One group's report and the directed cables (sending switch, port) its packets cross.
fn group(
    fabric: &Fabric,
    tables: &MulticastTables,
    mlid: u16,
    members: &[PortRef],
) -> (GroupReport, Vec<(NodeId, u8)>) {
    let mut problems = Vec::new();
    let mut failing = 0;
    let mut crossed: Vec<(NodeId, u8)> = Vec::new();
    let mut depth = 0;
    for &m in members {
        let d = tables.deliver(fabric, mlid, m);
        let expected: Vec<PortRef> = members.iter().copied().filter(|&o| o != m).collect();
        if let Some(problem) = describe(fabric, &d, &expected) {
            failing += 1;
            if problems.len() < LISTED_PROBLEMS {
                problems.push(format!("from {}: {problem}", fabric.port_name(m)));
            }
        }
        let (hops, links) = tree_hops(fabric, tables, mlid, m);
        depth = depth.max(hops);
        crossed.extend(links);
    }
    if failing > problems.len() {
        problems.push(format!(
            "… and {} more sending members",
            failing - problems.len()
        ));
    }
    crossed.sort_unstable();
    crossed.dedup();
    let report = GroupReport {
        mlid,
        members: members.len(),
        switches: tables.group(mlid).count(),
        depth,
        links: crossed.len(),
        delivers: failing == 0,
        problems,
    };
    (report, crossed)
}

/// What differs between delivery `d` and the ports `expected`, as a sentence; `None` when
/// they agree and nothing loops, drops or dead-ends.
fn describe(fabric: &Fabric, d: &Delivery, expected: &[PortRef]) -> Option<String> {
    let names = |ports: &mut dyn Iterator<Item = PortRef>| -> String {
        let all: Vec<String> = ports.map(|p| fabric.port_name(p)).collect();
        let shown = all.len().min(3);
        let more = if all.len() > shown {
            format!(" and {} more", all.len() - shown)
        } else {
            String::new()
        };
        format!("{}{more}", all[..shown].join(", "))
    };
    let mut parts = Vec::new();
    let missed: Vec<PortRef> = expected
        .iter()
        .copied()
        .filter(|p| d.reached.binary_search(p).is_err())
        .collect();
    if !missed.is_empty() {
        parts.push(format!("misses {}", names(&mut missed.into_iter())));
    }
    let extra: Vec<PortRef> = d
        .reached
        .iter()
        .copied()
        .filter(|p| !expected.contains(p))
        .collect();
    if !extra.is_empty() {
        parts.push(format!(
            "reaches non-members {}",
            names(&mut extra.into_iter())
        ));
    }
    let switches = |ids: &[NodeId]| -> String {
        let all: Vec<&str> = ids.iter().map(|&s| fabric.node(s).name.as_str()).collect();
        all.join(", ")
    };
    if !d.duplicates.is_empty() {
        parts.push(format!(
            "arrives more than once at {}",
            switches(&d.duplicates)
        ));
    }
    if !d.dropped_at.is_empty() {
        parts.push(format!(
            "is dropped at {} (no entry)",
            switches(&d.dropped_at)
        ));
    }
    if !d.dead_ends.is_empty() {
        parts.push(format!(
            "is sent to ports without a cable: {}",
            names(&mut d.dead_ends.iter().copied())
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// From member `from`: the most inter-switch hops to a switch that delivers to another
/// member, and the directed cables crossed (each switch entered once).
fn tree_hops(
    fabric: &Fabric,
    tables: &MulticastTables,
    mlid: u16,
    from: PortRef,
) -> (u32, Vec<(NodeId, u8)>) {
    let start = if fabric.node(from.node).is_switch() {
        Some((from.node, 0))
    } else {
        fabric.peer(from).map(|p| (p.node, p.port))
    };
    let Some(start) = start else {
        return (0, Vec::new());
    };
    let mut seen = std::collections::BTreeSet::from([start.0]);
    let mut frontier = vec![start];
    let (mut hops, mut deepest, mut crossed) = (0, 0, Vec::new());
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for (v, in_port) in frontier {
            let Some(entry) = tables.ports(v, mlid) else {
                continue;
            };
            for q in entry.iter().filter(|&q| q != in_port) {
                let Some(peer) = (q != 0)
                    .then(|| fabric.peer(PortRef { node: v, port: q }))
                    .flatten()
                else {
                    deepest = deepest.max(hops); // delivered to the switch itself
                    continue;
                };
                if !fabric.node(peer.node).is_switch() {
                    if peer != from {
                        deepest = deepest.max(hops);
                    }
                    continue;
                }
                crossed.push((v, q));
                if seen.insert(peer.node) {
                    next.push((peer.node, peer.port));
                }
            }
        }
        frontier = next;
        hops += 1;
    }
    (deepest, crossed)
}
