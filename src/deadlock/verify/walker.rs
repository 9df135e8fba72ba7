//! The walk of route tails towards one destination, collecting their dependencies.

use super::dependencies::Dependencies;
use super::routes::{by_lane, each_sl};
use crate::deadlock::network::{BrokenRoutes, Channels, Source};
use crate::deadlock::sl2vl::{SLS, Sl2VlTables, VL15};
use crate::routing::walk::{DestWalk, NONE};

/// Walks the routes of every destination and collects each (link, VL) → (link, VL)
/// dependency (per destination, each tail once), and the hops that drop packets on VL 15.
pub(super) struct Walker<'n, 'a> {
    net: &'n Channels<'a>,
    sl2vl: &'n Sl2VlTables,
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
}

const NO_VL: u8 = u8::MAX;

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
            deps,
            dropped: BrokenRoutes::default(),
            cap,
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

    /// Follows the route tails that hold link `a` on VL index `x` with the SLs of the bit set
    /// `sls` towards the destination of `tree` (stamp `di`). SLs that take the same lanes go on
    /// together; where a switch maps them to different lanes, each group goes on alone.
    pub(super) fn tail(&mut self, tree: &DestWalk, di: u32, a: u32, x: usize, sls: u16) {
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
            let b = tree.next(v as usize);
            if b == NONE {
                continue; // delivered to the switch itself
            }
            let out = self.net.links[b as usize].from.port;
            let row = self
                .sl2vl
                .switch_row(self.net.switches[v as usize], link.to.port, out);
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
                self.deps.add(self.net.turn(a, b), a, x, b, y);
                self.pending.push((b, y, group));
            }
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
    pub(super) fn source_hop(&mut self, s: usize, src: &Source, out: u32, sl: u8) -> Option<usize> {
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
