//! The fabric as the deadlock analysis sees it: the walk index of the fabric (switches, links,
//! endpoints; [`Network`]), the turns a packet can take inside a switch (arrive on one link,
//! leave on another), and the sources and destinations of traffic.
//!
//! A channel of the channel dependency graph is a directed link with a virtual lane; a
//! dependency is a turn with the lanes on both sides. Turns are numbered densely per switch
//! (in-link position × out-links + out-link position), so per-turn data is a plain vector.

use std::ops::Deref;

use crate::routing::LidTable;
use crate::routing::walk::{Broken, Dest, NONE, Network};
use crate::topology::{Fabric, PortRef};

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

/// Which LIDs send traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Traffic {
    /// Switches' own LIDs send and receive (management traffic on data lanes; OpenSM's DFSSSP
    /// counts them for switches whose port 0 supports SL-to-VL mapping).
    pub switch_lids: bool,
}

/// The channels of the network: the fabric's links with the turns between them, and the
/// sources and destinations of traffic. Dereferences to the walk index it extends, so links,
/// switches and names are read as `channels.links`, `channels.switch_name(v)`.
pub(crate) struct Channels<'a> {
    net: Network<'a>,
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
    /// Sources, grouped by switch (ascending dense index), then by LID.
    pub sources: Vec<Source>,
    source_offsets: Vec<u32>,
    /// Destinations, ascending by LID.
    pub dests: Vec<Dest>,
}

impl<'a> Deref for Channels<'a> {
    type Target = Network<'a>;

    fn deref(&self) -> &Network<'a> {
        &self.net
    }
}

impl<'a> Channels<'a> {
    pub fn new(fabric: &'a Fabric, lids: &LidTable, traffic: Traffic) -> Self {
        let net = Network::new(fabric, lids);
        let n = net.len();
        let links = &net.links;
        let (mut in_count, mut out_count) = (vec![0u32; n], vec![0u32; n]);
        for l in links {
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

        // Every LID of every endpoint, and the switches' own LIDs when they send.
        let mut sources = Vec::new();
        let mut dests = Vec::new();
        for e in &net.endpoints {
            let in_port = net.links[e.down as usize].from.port;
            for layer in 0..e.lids {
                let dest = net.endpoint_dest(e, layer);
                sources.push(Source {
                    lid: dest.lid,
                    port: e.port,
                    link: e.up,
                    in_port,
                });
                dests.push(dest);
            }
        }
        if traffic.switch_lids {
            for s in 0..n {
                if let Some(dest) = net.switch_dest(s, lids) {
                    sources.push(Source {
                        lid: dest.lid,
                        port: dest.port,
                        link: NONE,
                        in_port: 0,
                    });
                    dests.push(dest);
                }
            }
        }
        dests.sort_by_key(|d| d.lid);
        let source_switch = |s: &Source| -> u32 {
            if s.link == NONE {
                net.dense[s.port.node.index()]
            } else {
                net.links[s.link as usize].to_switch
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
            net,
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

    /// Sources attached to switch `v` (by LID).
    pub fn sources_at(&self, v: usize) -> &[Source] {
        &self.sources[self.source_offsets[v] as usize..self.source_offsets[v + 1] as usize]
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

    /// Counts failure `b` and lists it while there are fewer than `cap` examples.
    pub(crate) fn record(&mut self, net: &Network<'_>, b: &Broken<'_>, cap: usize) {
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
    use crate::routing::walk::DestWalk;
    use crate::routing::{Algorithm, RoutingConfig};
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
        let net = Channels::new(&fabric, &lids, Traffic { switch_lids: true });
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
        let mut tree = DestWalk::new(net.len());
        for d in &net.dests {
            tree.walk(&net, &tables, d, |b| panic!("{b:?}"));
            for s in 0..net.len() {
                assert!(tree.reaches(s));
                assert!(tree.hops(s) <= 2, "minimal on diameter 2");
                let path: Vec<u32> = tree.path(&net, s).collect();
                let inter = path
                    .iter()
                    .filter(|&&l| net.links[l as usize].to_switch != NONE)
                    .count();
                assert_eq!(inter as u32, tree.hops(s));
            }
        }
    }
}
