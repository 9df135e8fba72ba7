//! The scan over every route: per destination, the tree of the forwarding tables, the sources
//! that reach it, and their tails.

use super::dependencies::Dependencies;
use super::routes::{Routes, each_sl};
use super::walker::Walker;
use crate::deadlock::network::BrokenRoutes;
use crate::deadlock::sl2vl::SLS;
use crate::routing::walk::{BrokenKind, DestWalk, NONE};

/// What one thread found for its destinations.
pub(super) struct Scan {
    pub(super) deps: Dependencies,
    pub(super) broken: BrokenRoutes,
    pub(super) dropped: BrokenRoutes,
    pub(super) loops: usize,
    pub(super) routes: u64,
}

/// Walks the routes towards the destinations `range` and collects their dependencies.
pub(super) fn scan(routes: Routes<'_, '_>, mapped: u16, range: std::ops::Range<usize>) -> Scan {
    let Routes {
        net,
        tables,
        sl2vl,
        cap,
        ..
    } = routes;
    let deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let mut walker = Walker::new(net, sl2vl, deps, cap);
    let mut tree = DestWalk::new(net.len());
    let mut broken = BrokenRoutes::default();
    let mut loops = 0;
    let mut checked = 0u64;
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
            checked += sources.len() as u64 - if s == dest.switch as usize { own } else { 0 };
            let out = tree.next(s);
            if out == NONE {
                continue; // the switch's own LID: no channel after the sources' first one
            }
            let node = net.switches[s];
            if let Some(sls) = routes.sls_from_switch(node, dest.lid) {
                // The SLs per first-hop VL index: SLs that enter the first link on one lane
                // follow their tails together.
                let mut on_vl = [0u16; SLS];
                for sl in each_sl(sls) {
                    let mut mask = walker.first_hop(s, out, sl);
                    while mask != 0 {
                        on_vl[mask.trailing_zeros() as usize] |= 1 << sl;
                        mask &= mask - 1;
                    }
                }
                for (x, &sls) in on_vl.iter().enumerate() {
                    if sls != 0 {
                        walker.tail(&tree, di as u32, out, x, sls);
                    }
                }
            } else {
                for src in sources {
                    if src.port == dest.port {
                        continue;
                    }
                    for sl in each_sl(routes.sls(src.lid, dest.lid)) {
                        let mut xs = walker.source_hop(s, src, out, sl);
                        while xs != 0 {
                            let x = xs.trailing_zeros() as usize;
                            xs &= xs - 1;
                            walker.tail(&tree, di as u32, out, x, 1 << sl);
                        }
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
        routes: checked,
    }
}
