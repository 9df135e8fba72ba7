//! The independent verifier: from forwarding tables, path SLs and SL-to-VL tables — computed
//! here or read back from a fabric — build the channel dependency graph over (directed link,
//! VL) channels and report deadlock freedom, or every cyclic strongly connected component of
//! it, each with one concrete cycle and the routes that form it.
//!
//! Every route is a (source LID, destination LID) pair: sources are the CA and router port
//! LIDs (every LMC offset) and, optionally, the switches' own LIDs; destinations are every LID.
//! A route's packets leave the source port on the VL of its port's SL2VL table, enter the
//! first switch, and at every switch take the VL of that switch's (in port, out port) table for
//! the route's SL, until the delivering switch hands them to the destination port (or keeps
//! them, for its own LID). Each switch a packet passes adds the dependency from the channel it
//! arrived on to the channel it leaves on — host-to-switch and switch-to-host hops included.
//!
//! The verifier shares nothing with the schemes that compute SLs and tables but the fabric
//! model and the walk of the forwarding tables.
//!
//! # Complexity
//! Routes with the same destination share their tails: the walk from a (link, VL, SL) state
//! towards one destination is followed once. When the SL depends only on the source's switch
//! ([`PathSl::sl_from_switch`]), sources on one switch are checked together, so the work is
//! about switches × destinations × path length, not sources × destinations.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::cdg::{CallbackGraph, CycleSearch, cyclic_components, shortest_cycle};
use super::network::{BrokenRoutes, Channels, Source, Traffic, chunks, threads};
use super::path_sl::PathSl;
use super::sl2vl::{SLS, Sl2VlTables, VL15};
use crate::routing::walk::{BrokenKind, DestWalk, NONE};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::Fabric;

/// What to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Routes from and to the switches' own LIDs are checked too.
    pub switch_lids: bool,
    /// At most this many example routes per cycle dependency, and failures, are listed.
    pub max_listed: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            switch_lids: true,
            max_listed: 5,
        }
    }
}

/// A route named in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteExample {
    /// Source LID.
    pub slid: u16,
    /// Destination LID.
    pub dlid: u16,
    /// Its SL.
    pub sl: u8,
    /// The sending port (`name[port]`).
    pub source: String,
    /// The port that owns the destination LID.
    pub destination: String,
}

/// One channel of a cycle, and the dependency on the next channel of the cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CycleChannel {
    /// The directed link, `switch[port] -> switch[port]`.
    pub link: String,
    /// Its virtual lane.
    pub vl: u8,
    /// Routes that arrive on this channel and leave on the next one of the cycle.
    pub routes: u64,
    /// Some of them.
    pub examples: Vec<RouteExample>,
}

/// A cycle of the channel dependency graph: each channel depends on the next, the last on the
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycle {
    /// The channels in order.
    pub channels: Vec<CycleChannel>,
}

/// A strongly connected component of the CDG that holds a cycle: every channel in it waits,
/// through some chain of dependencies, on every other, so breaking one cycle of it may leave
/// others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CyclicComponent {
    /// Channels (link, VL) in it.
    pub channels: usize,
    /// Dependencies between its channels.
    pub dependencies: usize,
    /// Its channels per VL, ascending by VL.
    pub vls: Vec<VlChannels>,
    /// One of its cycles (a shortest one through its first channel); `None` for the first
    /// component, whose cycle is [`Verdict::cycle`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<Cycle>,
}

/// How many channels of a component are on one VL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlChannels {
    /// The VL.
    pub vl: u8,
    /// Channels on it.
    pub channels: usize,
}

/// The verifier's finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Source LIDs.
    pub sources: usize,
    /// Destination LIDs.
    pub destinations: usize,
    /// (source LID, destination LID) routes that reach their destination and were checked.
    pub routes: u64,
    /// Channels (link, VL) some route uses.
    pub channels: usize,
    /// Dependencies between channels (edges of the CDG).
    pub dependencies: usize,
    /// The VLs routes use.
    pub vls: Vec<u8>,
    /// Walks through the tables that fail (their routes are not in the CDG).
    pub broken: BrokenRoutes,
    /// Forwarding loops among them: packets that circle forever hold their channels forever.
    pub loops: usize,
    /// (link, SL) states where a route is mapped to VL 15 and dropped.
    pub dropped: BrokenRoutes,
    /// A cycle, when there is one: the first the depth-first search meets.
    pub cycle: Option<Cycle>,
    /// Every strongly connected component of the CDG with a cycle; the first holds
    /// [`Self::cycle`], the others follow by their first channel (link, VL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cyclic_components: Vec<CyclicComponent>,
}

impl Verdict {
    /// No cycle in the CDG and no forwarding loop.
    pub fn is_deadlock_free(&self) -> bool {
        self.cycle.is_none() && self.loops == 0
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vls: Vec<String> = self.vls.iter().map(u8::to_string).collect();
        writeln!(
            f,
            "{} routes ({} sources × {} destinations), {} channels on VL {}, {} dependencies",
            self.routes,
            self.sources,
            self.destinations,
            self.channels,
            if vls.is_empty() {
                "-".into()
            } else {
                vls.join(",")
            },
            self.dependencies
        )?;
        if self.broken.count > 0 {
            writeln!(
                f,
                "warning: {} walks through the tables fail ({} loops); their routes are not checked (ibfabric analyze tells more):",
                self.broken.count, self.loops
            )?;
            for e in &self.broken.examples {
                writeln!(f, "  {e}")?;
            }
        }
        if self.dropped.count > 0 {
            writeln!(
                f,
                "warning: {} (link, SL) pairs map routes to VL 15, where data packets are dropped:",
                self.dropped.count
            )?;
            for e in &self.dropped.examples {
                writeln!(f, "  {e}")?;
            }
        }
        match &self.cycle {
            None if self.loops == 0 => writeln!(
                f,
                "deadlock-free: the channel dependency graph has no cycle"
            ),
            None => writeln!(f, "NOT deadlock-free: the tables have forwarding loops"),
            Some(cycle) => {
                writeln!(
                    f,
                    "DEADLOCK: a cycle of {} channel dependencies:",
                    cycle.channels.len()
                )?;
                write_cycle(f, cycle, "  ")?;
                write_components(f, &self.cyclic_components)
            }
        }
    }
}

/// The dependencies of `cycle`, one line each with its example routes, indented by `indent`.
fn write_cycle(f: &mut fmt::Formatter<'_>, cycle: &Cycle, indent: &str) -> fmt::Result {
    let n = cycle.channels.len();
    for (i, c) in cycle.channels.iter().enumerate() {
        let next = &cycle.channels[(i + 1) % n];
        writeln!(
            f,
            "{indent}{} VL {} -> {} VL {}: {} routes, e.g.",
            c.link, c.vl, next.link, next.vl, c.routes
        )?;
        for r in &c.examples {
            writeln!(
                f,
                "{indent}    LID {} -> LID {} SL {} ({} -> {})",
                r.slid, r.dlid, r.sl, r.source, r.destination
            )?;
        }
    }
    Ok(())
}

/// `VL 0: 12, VL 3: 4` (what `count` gives each VL).
fn per_vl<T>(items: &[T], vl: impl Fn(&T) -> (u8, usize)) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|i| {
            let (v, k) = vl(i);
            format!("VL {v}: {k}")
        })
        .collect();
    parts.join(", ")
}

/// The cyclic components: how many (per VL), their sizes, and the cycle of each but the first.
fn write_components(f: &mut fmt::Formatter<'_>, components: &[CyclicComponent]) -> fmt::Result {
    let mut on_vl: Vec<(u8, usize)> = Vec::new();
    for c in components {
        for v in &c.vls {
            match on_vl.iter_mut().find(|(vl, _)| *vl == v.vl) {
                Some((_, k)) => *k += 1,
                None => on_vl.push((v.vl, 1)),
            }
        }
    }
    on_vl.sort_unstable();
    writeln!(
        f,
        "{} cyclic strongly connected component{} of the channel dependency graph (components on {}):",
        components.len(),
        if components.len() == 1 { "" } else { "s" },
        per_vl(&on_vl, |&p| p)
    )?;
    for (i, c) in components.iter().enumerate() {
        write!(
            f,
            "  {}: {} channels ({}), {} dependencies",
            i + 1,
            c.channels,
            per_vl(&c.vls, |v| (v.vl, v.channels)),
            c.dependencies
        )?;
        match &c.cycle {
            None => writeln!(f, "; the cycle above")?,
            Some(cycle) => {
                writeln!(
                    f,
                    "; a cycle of {} channel dependencies:",
                    cycle.channels.len()
                )?;
                write_cycle(f, cycle, "    ")?;
            }
        }
    }
    Ok(())
}

/// Dense numbering of the VLs the tables use, and the per-turn bit matrices of (VL in, VL out)
/// dependencies.
struct Dependencies {
    /// Dense index of each VL (`u8::MAX` if unused).
    index: [u8; SLS],
    /// VL of each dense index.
    vl_of: Vec<u8>,
    /// VLs in use.
    nv: usize,
    /// Words per turn.
    words: usize,
    bits: Vec<u64>,
    /// Channels (link × nv) some route uses.
    used: Vec<bool>,
}

impl Dependencies {
    fn new(mapped: u16, turns: usize, links: usize) -> Self {
        let mut index = [u8::MAX; SLS];
        let mut vl_of = Vec::new();
        for vl in 0..SLS as u8 {
            if mapped & (1 << vl) != 0 && vl != VL15 {
                index[usize::from(vl)] = vl_of.len() as u8;
                vl_of.push(vl);
            }
        }
        let nv = vl_of.len().max(1);
        let words = (nv * nv).div_ceil(64);
        Self {
            index,
            vl_of,
            nv,
            words,
            bits: vec![0; turns * words],
            used: vec![false; links * nv],
        }
    }

    fn add(&mut self, turn: usize, a: u32, x: usize, b: u32, y: usize) {
        let bit = x * self.nv + y;
        self.bits[turn * self.words + bit / 64] |= 1 << (bit % 64);
        self.used[a as usize * self.nv + x] = true;
        self.used[b as usize * self.nv + y] = true;
    }

    fn has(&self, turn: usize, x: usize, y: usize) -> bool {
        let bit = x * self.nv + y;
        self.bits[turn * self.words + bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The out-VL indexes `turn` depends on from in-VL index `x`, as a bit set.
    fn row(&self, turn: usize, x: usize) -> u32 {
        if self.words == 1 {
            let mask = if self.nv >= 32 {
                u32::MAX
            } else {
                (1u32 << self.nv) - 1
            };
            ((self.bits[turn] >> (x * self.nv)) as u32) & mask
        } else {
            (0..self.nv)
                .filter(|&y| self.has(turn, x, y))
                .fold(0, |m, y| m | (1 << y))
        }
    }

    fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Adds the dependencies and channels of `other` (same VLs and network).
    fn merge(&mut self, other: &Dependencies) {
        for (w, o) in self.bits.iter_mut().zip(&other.bits) {
            *w |= o;
        }
        for (u, o) in self.used.iter_mut().zip(&other.used) {
            *u |= o;
        }
    }
}

/// Walks the routes of every destination and collects each (link, VL) → (link, VL)
/// dependency (per destination, each tail once), and the hops that drop packets on VL 15.
struct Walker<'n, 'a> {
    net: &'n Channels<'a>,
    sl2vl: &'n Sl2VlTables,
    /// The dependencies and channels found.
    deps: Dependencies,
    /// (link, SL) states mapped to VL 15, listed up to `cap`.
    dropped: BrokenRoutes,
    cap: usize,
    /// Per (link, SL): the stamp of the destination the VL set below belongs to.
    stamp: Vec<u32>,
    /// Per (link, SL): VLs (dense) whose tail was followed for the stamped destination.
    seen: Vec<u16>,
    /// Per (out-link of a switch, SL): first-hop VLs of the switch's sources, computed once.
    first: Vec<u16>,
    first_done: Vec<bool>,
}

const NO_VL: u8 = u8::MAX;

impl<'n, 'a> Walker<'n, 'a> {
    fn new(net: &'n Channels<'a>, sl2vl: &'n Sl2VlTables, deps: Dependencies, cap: usize) -> Self {
        let links = net.links.len();
        Self {
            net,
            sl2vl,
            deps,
            dropped: BrokenRoutes::default(),
            cap,
            stamp: vec![u32::MAX; links * SLS],
            seen: vec![0; links * SLS],
            first: vec![0; links * SLS],
            first_done: vec![false; links * SLS],
        }
    }

    /// VL index of `vl`, or [`NO_VL`] for VL 15 (dropped).
    fn dense(deps: &Dependencies, vl: u8) -> u8 {
        if vl == VL15 {
            NO_VL
        } else {
            deps.index[usize::from(vl & 15)]
        }
    }

    /// Follows the route tail that holds link `a` on VL index `x` with SL `sl` towards the
    /// destination of `tree` (stamp `di`).
    fn tail(&mut self, tree: &DestWalk, di: u32, mut a: u32, mut x: usize, sl: u8) {
        loop {
            let key = a as usize * SLS + usize::from(sl);
            if self.stamp[key] != di {
                self.stamp[key] = di;
                self.seen[key] = 0;
            }
            if self.seen[key] & (1 << x) != 0 {
                return;
            }
            self.seen[key] |= 1 << x;
            let link = self.net.links[a as usize];
            let v = link.to_switch;
            if v == NONE {
                return;
            }
            let b = tree.next(v as usize);
            if b == NONE {
                return; // delivered to the switch itself
            }
            let out = self.net.links[b as usize].from.port;
            let vl = self
                .sl2vl
                .switch_vl(self.net.switches[v as usize], link.to.port, out, sl);
            let y = Self::dense(&self.deps, vl);
            if y == NO_VL {
                self.dropped.count += 1;
                if self.dropped.examples.len() < self.cap {
                    self.dropped.examples.push(format!(
                        "SL {sl} from {} to {}",
                        self.net.link_name(a),
                        self.net.link_name(b)
                    ));
                }
                return;
            }
            let y = usize::from(y);
            self.deps.add(self.net.turn(a, b), a, x, b, y);
            a = b;
            x = y;
        }
    }

    /// The first-hop VLs (dense, as a bit set) of the sources on switch `s` leaving on `out`
    /// with `sl`; records the host-to-switch dependencies the first time.
    fn first_hop(&mut self, s: usize, out: u32, sl: u8) -> u16 {
        let key = out as usize * SLS + usize::from(sl);
        if self.first_done[key] {
            return self.first[key];
        }
        let mut mask = 0u16;
        // A delivery link leads to the destination port itself, which does not send to itself.
        let delivered_to = self.net.links[out as usize].to;
        for src in self.net.sources_at(s) {
            if src.port == delivered_to {
                continue;
            }
            if let Some(x) = self.source_hop(s, src, out, sl) {
                mask |= 1 << x;
            }
        }
        self.first_done[key] = true;
        self.first[key] = mask;
        mask
    }

    /// The VL index `src` leaves switch `s` on over `out` (and the host dependency into it).
    fn source_hop(&mut self, s: usize, src: &Source, out: u32, sl: u8) -> Option<usize> {
        let node = self.net.switches[s];
        let out_port = self.net.links[out as usize].from.port;
        let (dropped, cap) = (&mut self.dropped, self.cap);
        let mut drop = |what: String| {
            dropped.count += 1;
            if dropped.examples.len() < cap {
                dropped.examples.push(what);
            }
        };
        let deps = &mut self.deps;
        let x = Self::dense(deps, self.sl2vl.switch_vl(node, src.in_port, out_port, sl));
        if x == NO_VL {
            drop(format!(
                "SL {sl} at {} from port {} to port {out_port}",
                self.net.switch_name(s),
                src.in_port
            ));
            return None;
        }
        if src.link != NONE {
            let h = Self::dense(deps, self.sl2vl.port_vl(src.port, sl));
            if h == NO_VL {
                drop(format!(
                    "SL {sl} leaving {}",
                    self.net.fabric.port_name(src.port)
                ));
                return None;
            }
            deps.add(
                self.net.turn(src.link, out),
                src.link,
                usize::from(h),
                out,
                usize::from(x),
            );
        } else {
            deps.used[out as usize * deps.nv + usize::from(x)] = true;
        }
        Some(usize::from(x))
    }
}

/// Checks the routes of `tables` with the SLs of `path_sl` and the lanes of `sl2vl` for
/// deadlock freedom.
pub fn verify(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    path_sl: &dyn PathSl,
    sl2vl: &Sl2VlTables,
    options: &VerifyOptions,
) -> Verdict {
    let net = Channels::new(
        fabric,
        lids,
        Traffic {
            switch_lids: options.switch_lids,
        },
    );
    let cap = options.max_listed;
    let mapped = sl2vl.vls_mapped();
    // Destinations in contiguous chunks, one thread each, each with its own dependency sets;
    // the sets are merged afterwards.
    let parts = chunks(net.dests.len(), threads());
    let scans: Vec<Scan> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|range| {
                let net = &net;
                scope.spawn(move || scan(net, tables, path_sl, sl2vl, mapped, range.clone(), cap))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a verifier thread panicked"))
            .collect()
    });
    let mut deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let (mut broken, mut dropped) = (BrokenRoutes::default(), BrokenRoutes::default());
    let (mut loops, mut routes) = (0, 0u64);
    for part in scans {
        deps.merge(&part.deps);
        broken.merge(part.broken, cap);
        dropped.merge(part.dropped, cap);
        loops += part.loops;
        routes += part.routes;
    }
    let (cycle, cyclic_components) = match find_cycle(&net, &deps) {
        None => (None, Vec::new()),
        Some(first) => {
            let found = Found {
                net: &net,
                tables,
                path_sl,
                sl2vl,
                deps: &deps,
                cap,
            };
            let mut components = found.components(first);
            (components[0].cycle.take(), components)
        }
    };
    let mut vls: Vec<u8> = (0..deps.vl_of.len())
        .filter(|&x| (0..net.links.len()).any(|l| deps.used[l * deps.nv + x]))
        .map(|x| deps.vl_of[x])
        .collect();
    vls.sort_unstable();
    Verdict {
        sources: net.sources.len(),
        destinations: net.dests.len(),
        routes,
        channels: deps.used.iter().filter(|&&u| u).count(),
        dependencies: deps.count(),
        vls,
        broken,
        loops,
        dropped,
        cycle,
        cyclic_components,
    }
}

/// What one thread found for its destinations.
struct Scan {
    deps: Dependencies,
    broken: BrokenRoutes,
    dropped: BrokenRoutes,
    loops: usize,
    routes: u64,
}

/// Walks the routes towards the destinations `range` and collects their dependencies.
fn scan(
    net: &Channels<'_>,
    tables: &ForwardingTables,
    path_sl: &dyn PathSl,
    sl2vl: &Sl2VlTables,
    mapped: u16,
    range: std::ops::Range<usize>,
    cap: usize,
) -> Scan {
    let deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let mut walker = Walker::new(net, sl2vl, deps, cap);
    let mut tree = DestWalk::new(net.len());
    let mut broken = BrokenRoutes::default();
    let mut loops = 0;
    let mut routes = 0u64;
    for di in range {
        let dest = &net.dests[di];
        tree.walk(net, tables, dest, |b| {
            if b.kind == BrokenKind::Loop {
                loops += 1;
            }
            broken.record(net, b, cap);
            NONE
        });
        let own = net
            .sources_at(dest.switch as usize)
            .iter()
            .filter(|s| s.port == dest.port)
            .count() as u64;
        for s in 0..net.len() {
            let sources = net.sources_at(s);
            if sources.is_empty() || !tree.reaches(s) {
                continue;
            }
            routes += sources.len() as u64 - if s == dest.switch as usize { own } else { 0 };
            let out = tree.next(s);
            if out == NONE {
                continue; // the switch's own LID: no channel after the sources' first one
            }
            let node = net.switches[s];
            if let Some(sl) = path_sl.sl_from_switch(node, dest.lid) {
                let mut mask = walker.first_hop(s, out, sl);
                while mask != 0 {
                    let x = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    walker.tail(&tree, di as u32, out, x, sl);
                }
            } else {
                for src in sources {
                    if src.port == dest.port {
                        continue;
                    }
                    let sl = path_sl.sl(src.lid, dest.lid);
                    if let Some(x) = walker.source_hop(s, src, out, sl) {
                        walker.tail(&tree, di as u32, out, x, sl);
                    }
                }
            }
        }
    }
    Scan {
        deps: walker.deps,
        broken,
        dropped: walker.dropped,
        loops,
        routes,
    }
}

/// A cycle of the CDG as channel nodes (link × nv + VL index), if there is one.
fn find_cycle(net: &Channels<'_>, deps: &Dependencies) -> Option<Vec<u32>> {
    let nv = deps.nv;
    let mut search = CycleSearch::new(net.links.len() * nv);
    search
        .next_cycle(|node, cursor| {
            let (a, x) = (node as usize / nv, node as usize % nv);
            if !deps.used[node as usize] {
                return None;
            }
            let v = net.links[a].to_switch;
            if v == NONE {
                return None;
            }
            let outs = net.out_links(v as usize);
            loop {
                let (b_pos, y) = ((*cursor / 16) as usize, *cursor % 16);
                if b_pos >= outs.len() {
                    return None;
                }
                let row = deps.row(net.turn_at(a as u32, b_pos), x) >> y;
                if row == 0 {
                    *cursor = (b_pos as u32 + 1) * 16;
                    continue;
                }
                let y = y + row.trailing_zeros();
                *cursor = b_pos as u32 * 16 + y + 1;
                return Some(outs[b_pos] * nv as u32 + y);
            }
        })
        .map(|(_, cycle)| cycle)
}

/// What the scan found, for naming the cyclic components and their cycles.
struct Found<'f, 'a> {
    net: &'f Channels<'a>,
    tables: &'f ForwardingTables,
    path_sl: &'f dyn PathSl,
    sl2vl: &'f Sl2VlTables,
    deps: &'f Dependencies,
    cap: usize,
}

impl Found<'_, '_> {
    /// The channels (link × nv + VL index) that `c` depends on.
    fn successors(&self, c: u32, out: &mut Vec<u32>) {
        let (net, deps, nv) = (self.net, self.deps, self.deps.nv);
        let (a, x) = (c as usize / nv, c as usize % nv);
        let v = net.links[a].to_switch;
        if !deps.used[c as usize] || v == NONE {
            return;
        }
        for (b_pos, &b) in net.out_links(v as usize).iter().enumerate() {
            let mut row = deps.row(net.turn_at(a as u32, b_pos), x);
            while row != 0 {
                out.push(b * nv as u32 + row.trailing_zeros());
                row &= row - 1;
            }
        }
    }

    /// The channels that depend on `c`.
    fn predecessors(&self, c: u32, out: &mut Vec<u32>) {
        let (net, deps, nv) = (self.net, self.deps, self.deps.nv);
        let (b, y) = (c / nv as u32, c as usize % nv);
        let v = net.links[b as usize].from_switch;
        if !deps.used[c as usize] || v == NONE {
            return;
        }
        for &a in net.in_links(v as usize) {
            let turn = net.turn(a, b);
            out.extend(
                (0..nv)
                    .filter(|&x| deps.has(turn, x, y))
                    .map(|x| a * nv as u32 + x as u32),
            );
        }
    }

    /// Every cyclic strongly connected component, the one holding `first` (a cycle) first and
    /// with `first` as its cycle, the others with a shortest cycle through their first channel.
    fn components(&self, first: Vec<u32>) -> Vec<CyclicComponent> {
        let nodes: Vec<u32> = (0..self.deps.used.len() as u32)
            .filter(|&c| self.deps.used[c as usize])
            .collect();
        let (successors, predecessors) = (
            |c: u32, out: &mut Vec<u32>| self.successors(c, out),
            |c: u32, out: &mut Vec<u32>| self.predecessors(c, out),
        );
        let graph = CallbackGraph {
            nodes: &nodes,
            bound: self.deps.used.len(),
            successors: &successors,
            predecessors: &predecessors,
        };
        let mut components = cyclic_components(graph);
        let holds_first = components
            .iter()
            .position(|c| c.binary_search(&first[0]).is_ok())
            .expect("a cycle lies in a cyclic component");
        components[..=holds_first].rotate_right(1);
        let mut component_of = vec![NONE; self.deps.used.len()];
        for (i, c) in components.iter().enumerate() {
            for &v in c {
                component_of[v as usize] = i as u32;
            }
        }
        let cycles: Vec<Vec<u32>> = std::iter::once(first)
            .chain(components.iter().enumerate().skip(1).map(|(i, c)| {
                shortest_cycle(graph, c[0], |v| component_of[v as usize] == i as u32)
            }))
            .collect();
        let named = self.name_cycles(&cycles);
        let mut out = Vec::new();
        components
            .iter()
            .zip(named)
            .map(|(c, cycle)| {
                let nv = self.deps.nv;
                let mut dependencies = 0;
                let mut per_vl = vec![0usize; nv];
                for &v in c {
                    per_vl[v as usize % nv] += 1;
                    out.clear();
                    self.successors(v, &mut out);
                    dependencies += out.iter().filter(|&&w| c.binary_search(&w).is_ok()).count();
                }
                let mut vls: Vec<VlChannels> = (0..nv)
                    .filter(|&x| per_vl[x] > 0)
                    .map(|x| VlChannels {
                        vl: self.deps.vl_of[x],
                        channels: per_vl[x],
                    })
                    .collect();
                vls.sort_unstable_by_key(|v| v.vl);
                CyclicComponent {
                    channels: c.len(),
                    dependencies,
                    vls,
                    cycle: Some(cycle),
                }
            })
            .collect()
    }

    /// Names the channels of the cycles and the routes that make each of their dependencies
    /// (a second pass over the routes, without sharing tails, restricted to destinations whose
    /// tree uses a link of a cycle).
    fn name_cycles(&self, cycles: &[Vec<u32>]) -> Vec<Cycle> {
        let Self {
            net,
            tables,
            path_sl,
            sl2vl,
            deps,
            cap,
        } = *self;
        let nv = deps.nv;
        let split = |c: u32| (c / nv as u32, (c % nv as u32) as usize);
        let mut named: Vec<Cycle> = cycles
            .iter()
            .map(|nodes| Cycle {
                channels: nodes
                    .iter()
                    .map(|&c| {
                        let (l, x) = split(c);
                        CycleChannel {
                            link: net.link_name(l),
                            vl: deps.vl_of[x],
                            routes: 0,
                            examples: Vec::new(),
                        }
                    })
                    .collect(),
            })
            .collect();
        // Dependency (turn, x, y) → (cycle, position in it): the components are disjoint and each
        // cycle is simple, so a dependency is in at most one place.
        let mut wanted: HashMap<(usize, usize, usize), (usize, usize)> = HashMap::new();
        let mut cycle_links = vec![false; net.links.len()];
        for (k, nodes) in cycles.iter().enumerate() {
            for i in 0..nodes.len() {
                let (a, x) = split(nodes[i]);
                let (b, y) = split(nodes[(i + 1) % nodes.len()]);
                wanted.insert((net.turn(a, b), x, y), (k, i));
                cycle_links[a as usize] = true;
            }
        }
        let dense = |vl: u8| {
            if vl == VL15 {
                None
            } else {
                Some(usize::from(deps.index[usize::from(vl & 15)]))
            }
        };
        let mut tree = DestWalk::new(net.len());
        for dest in &net.dests {
            tree.walk(net, tables, dest, |_| NONE);
            if !tree
                .next_links()
                .iter()
                .any(|&l| l != NONE && cycle_links[l as usize])
            {
                continue;
            }
            for s in 0..net.len() {
                if !tree.reaches(s) || tree.next(s) == NONE {
                    continue;
                }
                for src in net.sources_at(s) {
                    if src.port == dest.port {
                        continue;
                    }
                    let sl = path_sl.sl(src.lid, dest.lid);
                    // The channels of this route, with the VL index on each.
                    let mut prev: Option<(u32, usize)> = None;
                    if src.link != NONE {
                        prev = dense(sl2vl.port_vl(src.port, sl)).map(|h| (src.link, h));
                        if prev.is_none() {
                            continue;
                        }
                    }
                    let mut in_port = src.in_port;
                    let mut v = s;
                    loop {
                        let b = tree.next(v);
                        if b == NONE {
                            break;
                        }
                        let out = net.links[b as usize].from.port;
                        let Some(y) = dense(sl2vl.switch_vl(net.switches[v], in_port, out, sl))
                        else {
                            break;
                        };
                        if let Some((a, x)) = prev {
                            if let Some(&(k, i)) = wanted.get(&(net.turn(a, b), x, y)) {
                                let c = &mut named[k].channels[i];
                                c.routes += 1;
                                if c.examples.len() < cap {
                                    c.examples.push(RouteExample {
                                        slid: src.lid,
                                        dlid: dest.lid,
                                        sl,
                                        source: net.fabric.port_name(src.port),
                                        destination: net.fabric.port_name(dest.port),
                                    });
                                }
                            }
                        }
                        prev = Some((b, y));
                        let to = net.links[b as usize];
                        if to.to_switch == NONE {
                            break;
                        }
                        in_port = to.to.port;
                        v = to.to_switch as usize;
                    }
                }
            }
        }
        named
    }
}
