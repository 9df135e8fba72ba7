//! The fabric as the deadlock analysis sees it: directed links (one per direction of every
//! cable), the turns a packet can take inside a switch (arrive on one link, leave on another),
//! the sources and destinations of traffic, and the walk of one destination LID through the
//! forwarding tables from every switch.
//!
//! A channel of the channel dependency graph is a directed link with a virtual lane; a
//! dependency is a turn with the lanes on both sides. Turns are numbered densely per switch
//! (in-link position × out-links + out-link position), so per-turn data is a plain vector.

use std::fmt;

use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, NodeId, NodeKind, PortRef};

/// "None" in the dense index vectors.
pub(crate) const NONE: u32 = u32::MAX;

/// One direction of a cable.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    /// Where the packet leaves.
    pub from: PortRef,
    /// Where it arrives.
    pub to: PortRef,
    /// Dense switch index of the sending node ([`NONE`] for a CA or router).
    pub from_switch: u32,
    /// Dense switch index of the receiving node ([`NONE`] for a CA or router).
    pub to_switch: u32,
}

/// A source LID of traffic: a CA or router port LID (every LMC offset) or a switch's LID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source {
    /// The LID.
    pub lid: u16,
    /// The port that sends (a switch's port 0 for the switch itself).
    pub port: PortRef,
    /// The host-to-switch link ([`NONE`] for a switch's own LID).
    pub link: u32,
    /// The port of the first switch the packet enters on (0 for the switch itself).
    pub in_port: u8,
}

/// A destination LID and where the switches deliver it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dest {
    /// The LID.
    pub lid: u16,
    /// The port that owns it.
    pub port: PortRef,
    /// Dense index of the switch that delivers it.
    pub switch: u32,
    /// The delivering switch's port: 0 for its own LID, else the port of the cable to the owner.
    pub out_port: u8,
    /// The switch-to-host link of the delivery ([`NONE`] for a switch LID).
    pub link: u32,
}

/// How the walk of a destination LID can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokenKind {
    /// No entry (port 255) for the LID.
    NoEntry,
    /// The entry names a port without a cable, or a port the switch does not have.
    DeadEnd,
    /// The walk comes back to a switch it has visited.
    Loop,
    /// The packet leaves the switches at a port that does not own the LID.
    WrongDestination,
}

impl fmt::Display for BrokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoEntry => "no entry",
            Self::DeadEnd => "dead end",
            Self::Loop => "loop",
            Self::WrongDestination => "wrong destination",
        })
    }
}

/// Which LIDs send traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Traffic {
    /// Switches' own LIDs send and receive (management traffic on data lanes; OpenSM's DFSSSP
    /// counts them for switches whose port 0 supports SL-to-VL mapping).
    pub switch_lids: bool,
}

/// The network: links, turns, sources and destinations.
pub(crate) struct Network<'a> {
    pub fabric: &'a Fabric,
    /// Fabric node of each dense switch.
    pub switches: Vec<NodeId>,
    /// Per node, the start of its ports in `link_of_port`.
    port_base: Vec<u32>,
    /// The link leaving each (node, port), [`NONE`] without a cable.
    link_of_port: Vec<u32>,
    pub links: Vec<Link>,
    in_offsets: Vec<u32>,
    in_links: Vec<u32>,
    out_offsets: Vec<u32>,
    out_links: Vec<u32>,
    /// Position of each link in the in-list of the switch it arrives at.
    in_pos: Vec<u32>,
    /// Position of each link in the out-list of the switch it leaves.
    out_pos: Vec<u32>,
    /// Per switch, the first turn id (and the total at the end).
    turn_base: Vec<u32>,
    /// Sources, grouped by switch (ascending dense index).
    pub sources: Vec<Source>,
    source_offsets: Vec<u32>,
    /// Destinations, ascending by LID.
    pub dests: Vec<Dest>,
}

impl<'a> Network<'a> {
    pub fn new(fabric: &'a Fabric, lids: &LidTable, traffic: Traffic) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut dense = vec![NONE; fabric.nodes().len()];
        for (i, s) in switches.iter().enumerate() {
            dense[s.index()] = i as u32;
        }
        let mut port_base = Vec::with_capacity(fabric.nodes().len());
        let mut total = 0u32;
        for node in fabric.nodes() {
            port_base.push(total);
            total += u32::from(node.num_ports()) + 1;
        }
        let mut link_of_port = vec![NONE; total as usize];
        let mut links = Vec::new();
        for i in 0..fabric.nodes().len() {
            let id = NodeId(i as u32);
            for (p, peer) in fabric.neighbours(id) {
                let from = PortRef { node: id, port: p };
                link_of_port[(port_base[i] + u32::from(p)) as usize] = links.len() as u32;
                links.push(Link {
                    from,
                    to: peer,
                    from_switch: dense[i],
                    to_switch: dense[peer.node.index()],
                });
            }
        }
        let n = switches.len();
        let (mut in_count, mut out_count) = (vec![0u32; n], vec![0u32; n]);
        for l in &links {
            if l.to_switch != NONE {
                in_count[l.to_switch as usize] += 1;
            }
            if l.from_switch != NONE {
                out_count[l.from_switch as usize] += 1;
            }
        }
        let offsets = |count: &[u32]| {
            let mut o = Vec::with_capacity(n + 1);
            o.push(0u32);
            for c in count {
                o.push(o.last().unwrap() + c);
            }
            o
        };
        let (in_offsets, out_offsets) = (offsets(&in_count), offsets(&out_count));
        let mut in_links = vec![NONE; in_offsets[n] as usize];
        let mut out_links = vec![NONE; out_offsets[n] as usize];
        let (mut in_pos, mut out_pos) = (vec![NONE; links.len()], vec![NONE; links.len()]);
        let (mut in_fill, mut out_fill) = (vec![0u32; n], vec![0u32; n]);
        for (id, l) in links.iter().enumerate() {
            if l.to_switch != NONE {
                let v = l.to_switch as usize;
                in_links[(in_offsets[v] + in_fill[v]) as usize] = id as u32;
                in_pos[id] = in_fill[v];
                in_fill[v] += 1;
            }
            if l.from_switch != NONE {
                let v = l.from_switch as usize;
                out_links[(out_offsets[v] + out_fill[v]) as usize] = id as u32;
                out_pos[id] = out_fill[v];
                out_fill[v] += 1;
            }
        }
        let mut turn_base = Vec::with_capacity(n + 1);
        let mut turns = 0u32;
        for v in 0..n {
            turn_base.push(turns);
            turns += in_count[v] * out_count[v];
        }
        turn_base.push(turns);

        let mut sources = Vec::new();
        let mut dests = Vec::new();
        for (lid, owner) in lids.iter() {
            let port = PortRef {
                node: owner.node,
                port: owner.port,
            };
            let node = fabric.node(owner.node);
            if node.kind == NodeKind::Switch {
                if traffic.switch_lids {
                    let s = dense[owner.node.index()];
                    sources.push(Source {
                        lid,
                        port,
                        link: NONE,
                        in_port: 0,
                    });
                    dests.push(Dest {
                        lid,
                        port,
                        switch: s,
                        out_port: 0,
                        link: NONE,
                    });
                }
                continue;
            }
            let Some(peer) = fabric.peer(port) else {
                continue;
            };
            let s = dense[peer.node.index()];
            if s == NONE {
                continue; // back-to-back adapters: no switch routes this LID
            }
            let up = link_of_port[(port_base[owner.node.index()] + u32::from(owner.port)) as usize];
            let down = link_of_port[(port_base[peer.node.index()] + u32::from(peer.port)) as usize];
            sources.push(Source {
                lid,
                port,
                link: up,
                in_port: peer.port,
            });
            dests.push(Dest {
                lid,
                port,
                switch: s,
                out_port: peer.port,
                link: down,
            });
        }
        let source_switch = |s: &Source| -> u32 {
            if s.link == NONE {
                dense[s.port.node.index()]
            } else {
                links[s.link as usize].to_switch
            }
        };
        sources.sort_by_key(|s| (source_switch(s), s.lid));
        let mut source_offsets = vec![0u32; n + 1];
        for s in &sources {
            source_offsets[source_switch(s) as usize + 1] += 1;
        }
        for v in 0..n {
            source_offsets[v + 1] += source_offsets[v];
        }
        Self {
            fabric,
            switches,
            port_base,
            link_of_port,
            links,
            in_offsets,
            in_links,
            out_offsets,
            out_links,
            in_pos,
            out_pos,
            turn_base,
            sources,
            source_offsets,
            dests,
        }
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.switches.len()
    }

    /// The link leaving `port`, if it has a cable.
    pub fn link_at(&self, port: PortRef) -> Option<u32> {
        let base = *self.port_base.get(port.node.index())?;
        let node = self.fabric.node(port.node);
        if port.port > node.num_ports() {
            return None;
        }
        let l = self.link_of_port[(base + u32::from(port.port)) as usize];
        (l != NONE).then_some(l)
    }

    /// Links leaving switch `v`.
    pub fn out_links(&self, v: usize) -> &[u32] {
        &self.out_links[self.out_offsets[v] as usize..self.out_offsets[v + 1] as usize]
    }

    /// Links arriving at switch `v`.
    pub fn in_links(&self, v: usize) -> &[u32] {
        &self.in_links[self.in_offsets[v] as usize..self.in_offsets[v + 1] as usize]
    }

    /// Number of turns (dense turn ids are `0..turns()`).
    pub fn turns(&self) -> usize {
        *self.turn_base.last().unwrap_or(&0) as usize
    }

    /// The turn from link `a` into link `b` (b must leave the switch `a` arrives at).
    pub fn turn(&self, a: u32, b: u32) -> usize {
        let v = self.links[a as usize].to_switch as usize;
        debug_assert_eq!(self.links[b as usize].from_switch as usize, v);
        let outs = self.out_offsets[v + 1] - self.out_offsets[v];
        (self.turn_base[v] + self.in_pos[a as usize] * outs + self.out_pos[b as usize]) as usize
    }

    /// The turn from link `a` into the `b_pos`-th out-link of the switch `a` arrives at.
    pub fn turn_at(&self, a: u32, b_pos: usize) -> usize {
        let v = self.links[a as usize].to_switch as usize;
        let outs = self.out_offsets[v + 1] - self.out_offsets[v];
        (self.turn_base[v] + self.in_pos[a as usize] * outs) as usize + b_pos
    }

    /// Sources attached to switch `v` (its own LID first when switches send).
    pub fn sources_at(&self, v: usize) -> &[Source] {
        &self.sources[self.source_offsets[v] as usize..self.source_offsets[v + 1] as usize]
    }

    /// `sw[3] -> sw2[1]`.
    pub fn link_name(&self, l: u32) -> String {
        let link = self.links[l as usize];
        format!(
            "{} -> {}",
            self.fabric.port_name(link.from),
            self.fabric.port_name(link.to)
        )
    }

    /// Name of dense switch `v`.
    pub fn switch_name(&self, v: usize) -> &str {
        &self.fabric.node(self.switches[v]).name
    }
}

/// What happens to one destination LID from every switch: the link each switch sends it out
/// on and the inter-switch hops to the delivering switch.
pub(crate) struct DestTree {
    /// Link each switch sends the LID out on: towards the next switch, or the delivery link at
    /// the last switch ([`NONE`] there for a switch LID, and at failed switches).
    pub next: Vec<u32>,
    /// Inter-switch hops to the delivering switch, [`FAILED`] if the walk fails.
    pub hops: Vec<u8>,
    state: Vec<u8>,
    stack: Vec<u32>,
}

/// Hop count of a switch whose walk fails.
pub(crate) const FAILED: u8 = u8::MAX;

/// A walk that fails, at the switch where it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broken {
    pub kind: BrokenKind,
    pub lid: u16,
    pub switch: u32,
}

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const DONE: u8 = 2;

impl DestTree {
    pub fn new(switches: usize) -> Self {
        Self {
            next: vec![NONE; switches],
            hops: vec![FAILED; switches],
            state: vec![UNKNOWN; switches],
            stack: Vec::new(),
        }
    }

    /// Whether switch `v` delivers the LID (its walk does not fail).
    pub fn reaches(&self, v: usize) -> bool {
        self.hops[v] != FAILED
    }

    /// Walks `dest` from every switch; calls `broken` once per failure, at the switch where it
    /// happens. Linear in the number of switches.
    pub fn walk(
        &mut self,
        net: &Network<'_>,
        tables: &ForwardingTables,
        dest: &Dest,
        mut broken: impl FnMut(Broken),
    ) {
        let n = net.len();
        self.state.fill(UNKNOWN);
        self.next.fill(NONE);
        self.hops.fill(FAILED);
        for s in 0..n {
            if self.state[s] != UNKNOWN {
                continue;
            }
            self.stack.clear();
            let mut cur = s;
            let mut hops = loop {
                match self.state[cur] {
                    DONE => break self.hops[cur],
                    VISITING => {
                        broken(Broken {
                            kind: BrokenKind::Loop,
                            lid: dest.lid,
                            switch: cur as u32,
                        });
                        break FAILED;
                    }
                    _ => {}
                }
                let node = net.switches[cur];
                let fail = |kind| Broken {
                    kind,
                    lid: dest.lid,
                    switch: cur as u32,
                };
                let Some(port) = tables.port(node, dest.lid) else {
                    broken(fail(BrokenKind::NoEntry));
                    self.state[cur] = DONE;
                    break FAILED;
                };
                if port == 0 {
                    self.state[cur] = DONE;
                    if dest.out_port == 0 && dest.switch as usize == cur {
                        self.hops[cur] = 0;
                        break 0;
                    }
                    broken(fail(BrokenKind::WrongDestination));
                    break FAILED;
                }
                let Some(link) = net.link_at(PortRef { node, port }) else {
                    broken(fail(BrokenKind::DeadEnd));
                    self.state[cur] = DONE;
                    break FAILED;
                };
                let to = net.links[link as usize].to_switch;
                if to == NONE {
                    self.state[cur] = DONE;
                    if link == dest.link {
                        self.next[cur] = link;
                        self.hops[cur] = 0;
                        break 0;
                    }
                    broken(fail(BrokenKind::WrongDestination));
                    break FAILED;
                }
                self.state[cur] = VISITING;
                self.next[cur] = link;
                self.stack.push(cur as u32);
                cur = to as usize;
            };
            while let Some(v) = self.stack.pop() {
                let v = v as usize;
                if hops != FAILED {
                    hops = hops.saturating_add(1).min(FAILED - 1);
                } else {
                    self.next[v] = NONE;
                }
                self.state[v] = DONE;
                self.hops[v] = hops;
            }
        }
    }

    /// The links from switch `s` to the destination: the inter-switch links, then the delivery
    /// link (none for a switch LID). Only for switches that reach it.
    #[cfg(test)]
    pub fn path<'t>(&'t self, net: &'t Network<'_>, s: usize) -> impl Iterator<Item = u32> + 't {
        let mut cur = s as u32;
        std::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let l = self.next[cur as usize];
            if l == NONE {
                cur = NONE;
                return None;
            }
            cur = net.links[l as usize].to_switch;
            Some(l)
        })
    }
}

/// Threads for the per-destination loops (every destination is walked independently).
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 8))
}

/// `0..len` in `parts` contiguous ranges of nearly equal length (fewer when `len` is small).
pub(crate) fn chunks(len: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.clamp(1, len.max(1));
    (0..parts)
        .map(|i| len * i / parts..len * (i + 1) / parts)
        .filter(|r| !r.is_empty())
        .collect()
}

/// Splits `data` at the given offsets (ascending, the first 0): one mutable piece per offset.
pub(crate) fn split_at_offsets<'d, T>(
    mut data: &'d mut [T],
    offsets: &[usize],
) -> Vec<&'d mut [T]> {
    let mut pieces = Vec::with_capacity(offsets.len());
    for (i, &start) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).map_or(data.len() + start, |&e| e);
        let (piece, rest) = std::mem::take(&mut data).split_at_mut(end - start);
        pieces.push(piece);
        data = rest;
    }
    pieces
}

/// Failures counted in full and listed up to a cap, for reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BrokenRoutes {
    /// Distinct failures (each (switch, LID) where a walk fails once).
    pub count: usize,
    /// The first few, as sentences.
    pub examples: Vec<String>,
}

impl BrokenRoutes {
    /// Adds the failures of `other` (keeping at most `cap` examples).
    pub(crate) fn merge(&mut self, other: BrokenRoutes, cap: usize) {
        self.count += other.count;
        let room = cap.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }

    pub(crate) fn record(&mut self, net: &Network<'_>, b: &Broken, cap: usize) {
        self.count += 1;
        if self.examples.len() < cap {
            self.examples.push(format!(
                "{}: {} for LID {}",
                net.switch_name(b.switch as usize),
                b.kind,
                b.lid
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::layered::{Algorithm, RoutingConfig};
    use crate::routing::{Routed, assign_lids, route_fabric};
    use crate::topology::TopologySpec;

    #[test]
    fn turns_round_trip_and_walks_reach_every_destination() {
        let mut fabric = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut fabric, 1).unwrap();
        let Routed { lids, tables, .. } = route_fabric(
            &fabric,
            &RoutingConfig {
                layers: 2,
                algorithm: Algorithm::Minimal,
                seed: 1,
                ..Default::default()
            },
        )
        .unwrap();
        let net = Network::new(&fabric, &lids, Traffic { switch_lids: true });
        assert_eq!(net.sources.len(), 50 + 400);
        assert_eq!(net.dests.len(), 50 + 400);
        let mut seen = std::collections::HashSet::new();
        for (a, link) in net.links.iter().enumerate() {
            if link.to_switch == NONE {
                continue;
            }
            for &b in net.out_links(link.to_switch as usize) {
                let t = net.turn(a as u32, b);
                assert!(
                    t < net.turns() && seen.insert(t),
                    "turn ids are dense and distinct"
                );
            }
        }
        assert_eq!(seen.len(), net.turns());
        let mut tree = DestTree::new(net.len());
        for d in &net.dests {
            tree.walk(&net, &tables, d, |b| panic!("{b:?}"));
            for s in 0..net.len() {
                assert!(tree.reaches(s));
                assert!(tree.hops[s] <= 2, "minimal on diameter 2");
                let path: Vec<u32> = tree.path(&net, s).collect();
                let inter = path
                    .iter()
                    .filter(|&&l| net.links[l as usize].to_switch != NONE)
                    .count();
                assert_eq!(inter, usize::from(tree.hops[s]));
            }
        }
    }
}
