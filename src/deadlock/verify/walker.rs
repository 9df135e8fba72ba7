//! The walk of route tails towards one destination, collecting their dependencies.

use std::collections::HashMap;

use super::dependencies::Dependencies;
use super::routes::{Routes, by_lane, each_sl};
use crate::deadlock::network::{BrokenRoutes, Channels, Source};
use crate::deadlock::sl2vl::{SLS, Sl2VlTables, SlVlRow, VL15};
use crate::routing::walk::{DestWalk, NONE};

/// Where the packets for one destination go from each switch: the links they may leave on.
/// A snapshot of the tables gives one link per switch ([`DestWalk`]); a change from old tables
/// to new ones gives up to two, since a packet meets each switch before or after its update.
pub(super) trait NextHops {
    /// The links switch `v` may send the destination out on; [`NONE`] for none (the switch
    /// keeps the packet, or drops it).
    fn next_hops(&self, v: usize) -> [u32; 2];
}

impl NextHops for DestWalk {
    fn next_hops(&self, v: usize) -> [u32; 2] {
        [self.next(v), NONE]
    }
}

/// Walks the routes of every destination and collects each (link, VL) → (link, VL)
/// dependency (per destination, each tail once), and the hops that drop packets on VL 15.
pub(super) struct Walker<'n, 'a> {
    net: &'n Channels<'a>,
    sl2vl: &'n Sl2VlTables,
    /// During a change, the SL-to-VL tables before it: every hop may take the lane of either.
    old_sl2vl: Option<&'n Sl2VlTables>,
    /// The dependencies and channels found.
    pub(super) deps: Dependencies,
    /// (link, SL) states mapped to VL 15, listed up to `cap`.
    pub(super) dropped: BrokenRoutes,
    cap: usize,
    /// Per channel (link × VL index): the stamp of the destination the SL set below belongs
    /// to.
    stamp: Vec<u32>,
    /// Per channel: SLs whose tail was followed for the stamped destination.
    seen: Vec<u16>,
    /// Tails still to follow: (link, VL index, SLs).
    pending: Vec<(u32, usize, u16)>,
    /// Per (out-link of a switch, SL): first-hop VLs of the switch's sources, computed once.
    first: Vec<u16>,
    first_done: Vec<bool>,
    /// Cycle dependencies to note as they are made (naming cycles only).
    pub(super) watch: Option<Watch<'n>>,
}

const NO_VL: u8 = u8::MAX;

/// The dependencies of cycles a walk is watched for, and the ones it made (for naming the
/// destinations whose routes make a cycle).
pub(super) struct Watch<'w> {
    /// Dependency (turn, x, y) → (cycle, position in it).
    pub(super) wanted: &'w HashMap<(usize, usize, usize), (usize, usize)>,
    /// The (cycle, position) pairs met since the last clear.
    pub(super) hits: Vec<(usize, usize)>,
}

impl Watch<'_> {
    fn saw(&mut self, turn: usize, x: usize, y: usize) {
        if let Some(&at) = self.wanted.get(&(turn, x, y)) {
            self.hits.push(at);
        }
    }
}

impl<'n, 'a> Walker<'n, 'a> {
    pub(super) fn new(
        net: &'n Channels<'a>,
        sl2vl: &'n Sl2VlTables,
        deps: Dependencies,
        cap: usize,
    ) -> Self {
        let links = net.links.len();
        Self {
            stamp: vec![u32::MAX; links * deps.nv],
            seen: vec![0; links * deps.nv],
            pending: Vec::new(),
            net,
            sl2vl,
            old_sl2vl: None,
            deps,
            dropped: BrokenRoutes::default(),
            cap,
            first: vec![0; links * SLS],
            first_done: vec![false; links * SLS],
            watch: None,
        }
    }

    /// The walker of a change: each hop also takes the lanes of `old`, the SL-to-VL tables
    /// before it.
    pub(super) fn with_old(mut self, old: &'n Sl2VlTables) -> Self {
        self.old_sl2vl = Some(old);
        self
    }

    /// The switch's (in port, out port) rows: the current one, and the old one when it
    /// differs.
    fn switch_rows(&self, v: usize, in_port: u8, out_port: u8) -> [Option<&'n SlVlRow>; 2] {
        let node = self.net.switches[v];
        let row = self.sl2vl.switch_row(node, in_port, out_port);
        let old = self
            .old_sl2vl
            .map(|t| t.switch_row(node, in_port, out_port))
            .filter(|o| *o != row);
        [Some(row), old]
    }

    /// VL index of `vl`, or [`NO_VL`] for VL 15 (dropped).
    fn dense(deps: &Dependencies, vl: u8) -> u8 {
        if vl == VL15 {
            NO_VL
        } else {
            deps.index[usize::from(vl & 15)]
        }
    }

    /// Follows the routes of the sources at switch `s` towards destination `di` that leave on
    /// link `out`, through `hops`: with SLs per switch (the path SLs are the switch's), the SLs
    /// that enter `out` on one lane share their tail; otherwise each source on each of its SLs.
    pub(super) fn enter(
        &mut self,
        hops: &impl NextHops,
        routes: Routes<'_, '_>,
        di: usize,
        s: usize,
        out: u32,
    ) {
        let net = routes.net;
        let dest = &net.dests[di];
        let node = net.switches[s];
        if let Some(sls) = routes.sls_from_switch(node, dest.lid) {
            let mut on_vl = [0u16; SLS];
            for sl in each_sl(sls) {
                let mut mask = self.first_hop(s, out, sl);
                while mask != 0 {
                    on_vl[mask.trailing_zeros() as usize] |= 1 << sl;
                    mask &= mask - 1;
                }
            }
            for (x, &sls) in on_vl.iter().enumerate() {
                if sls != 0 {
                    self.tail(hops, di as u32, out, x, sls);
                }
            }
        } else {
            for src in net.sources_at(s) {
                if src.port == dest.port {
                    continue;
                }
                for sl in each_sl(routes.sls(src.lid, dest.lid)) {
                    let mut xs = self.source_hop(s, src, out, sl);
                    while xs != 0 {
                        let x = xs.trailing_zeros() as usize;
                        xs &= xs - 1;
                        self.tail(hops, di as u32, out, x, 1 << sl);
                    }
                }
            }
        }
    }

    /// Follows the route tails that hold link `a` on VL index `x` with the SLs of the bit set
    /// `sls` towards the destination whose next hops `hops` gives (stamp `di`). SLs that take
    /// the same lanes go on together; where a switch maps them to different lanes, each group
    /// goes on alone.
    pub(super) fn tail(&mut self, hops: &impl NextHops, di: u32, a: u32, x: usize, sls: u16) {
        self.pending.push((a, x, sls));
        while let Some((a, x, sls)) = self.pending.pop() {
            let key = a as usize * self.deps.nv + x;
            if self.stamp[key] != di {
                self.stamp[key] = di;
                self.seen[key] = 0;
            }
            let sls = sls & !self.seen[key];
            if sls == 0 {
                continue;
            }
            self.seen[key] |= sls;
            let link = self.net.links[a as usize];
            let v = link.to_switch;
            if v == NONE {
                continue;
            }
            let next = hops.next_hops(v as usize);
            for (i, &b) in next.iter().enumerate() {
                if b == NONE || (i == 1 && b == next[0]) {
                    continue; // delivered to the switch itself, dropped, or the same hop
                }
                let out = self.net.links[b as usize].from.port;
                for row in self
                    .switch_rows(v as usize, link.to.port, out)
                    .into_iter()
                    .flatten()
                {
                    self.follow(row, a, x, b, sls);
                }
            }
        }
    }

    /// The hop from link `a` on VL index `x` into link `b` for the SLs `sls`, on the lanes of
    /// `row`: records the dependencies and queues the tails.
    fn follow(&mut self, row: &SlVlRow, a: u32, x: usize, b: u32, sls: u16) {
        for (vl, group) in by_lane(row, sls) {
            let y = Self::dense(&self.deps, vl);
            if y == NO_VL {
                for sl in each_sl(group) {
                    self.dropped.count += 1;
                    if self.dropped.examples.len() < self.cap {
                        self.dropped.examples.push(format!(
                            "SL {sl} from {} to {}",
                            self.net.link_name(a),
                            self.net.link_name(b)
                        ));
                    }
                }
                continue;
            }
            let y = usize::from(y);
            let turn = self.net.turn(a, b);
            if let Some(watch) = &mut self.watch {
                watch.saw(turn, x, y);
            }
            self.deps.add(turn, a, x, b, y);
            self.pending.push((b, y, group));
        }
    }

    /// The first-hop VLs (dense, as a bit set) of the sources on switch `s` leaving on `out`
    /// with `sl`; records the host-to-switch dependencies the first time.
    pub(super) fn first_hop(&mut self, s: usize, out: u32, sl: u8) -> u16 {
        let key = out as usize * SLS + usize::from(sl);
        if self.first_done[key] {
            return self.first[key];
        }
        let mut mask = 0u16;
        // A delivery link leads to the destination port itself, which does not send to itself.
        let delivered_to = self.net.links[out as usize].to;
        // The sources of one port (its LIDs, listed together) take the same lanes and add the
        // same dependencies: after one that dropped nothing, the next of the same port is
        // passed over (a hop that drops is taken for every source, so each drop is counted).
        let mut last_clean: Option<&Source> = None;
        for src in self.net.sources_at(s) {
            if src.port == delivered_to {
                continue;
            }
            if last_clean.is_some_and(|prev| {
                (prev.port, prev.in_port, prev.link) == (src.port, src.in_port, src.link)
            }) {
                continue;
            }
            let dropped = self.dropped.count;
            mask |= self.source_hop(s, src, out, sl);
            last_clean = (self.dropped.count == dropped).then_some(src);
        }
        self.first_done[key] = true;
        self.first[key] = mask;
        mask
    }

    /// The VL indexes (a bit set) `src` leaves switch `s` on over `out` (and the host
    /// dependencies into them): one, or during a change up to two — the lane of the switch's
    /// old or new table after the lane of the port's old or new one.
    pub(super) fn source_hop(&mut self, s: usize, src: &Source, out: u32, sl: u8) -> u16 {
        let node = self.net.switches[s];
        let out_port = self.net.links[out as usize].from.port;
        let tables = [Some(self.sl2vl), self.old_sl2vl];
        let (dropped, cap) = (&mut self.dropped, self.cap);
        let mut drop = |what: String| {
            dropped.count += 1;
            if dropped.examples.len() < cap {
                dropped.examples.push(what);
            }
        };
        let deps = &mut self.deps;
        // The lanes (dense indexes, as bit sets) out of the switch and out of the port.
        let (mut xs, mut hs) = (0u16, 0u16);
        for t in tables.into_iter().flatten() {
            let x = Self::dense(deps, t.switch_vl(node, src.in_port, out_port, sl));
            if x == NO_VL {
                drop(format!(
                    "SL {sl} at {} from port {} to port {out_port}",
                    self.net.switch_name(s),
                    src.in_port
                ));
            } else {
                xs |= 1 << x;
            }
            if src.link != NONE {
                let h = Self::dense(deps, t.port_vl(src.port, sl));
                if h == NO_VL {
                    drop(format!(
                        "SL {sl} leaving {}",
                        self.net.fabric.port_name(src.port)
                    ));
                } else {
                    hs |= 1 << h;
                }
            }
        }
        if src.link == NONE {
            for x in each_bit(xs) {
                deps.used[out as usize * deps.nv + x] = true;
            }
            return xs;
        }
        if hs == 0 {
            return 0;
        }
        let turn = self.net.turn(src.link, out);
        for h in each_bit(hs) {
            for x in each_bit(xs) {
                deps.add(turn, src.link, h, out, x);
            }
        }
        xs
    }
}

/// The set bits of `mask`, ascending.
fn each_bit(mask: u16) -> impl Iterator<Item = usize> {
    (0..16).filter(move |&i| mask & (1 << i) != 0)
}
