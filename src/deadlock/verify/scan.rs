//! The scan over every route: per destination, the tree of the forwarding tables, the sources
//! that reach it, and their tails.

use super::dependencies::Dependencies;
use super::walker::Walker;
use crate::deadlock::network::{BrokenRoutes, Channels};
use crate::deadlock::path_sl::PathSl;
use crate::deadlock::sl2vl::Sl2VlTables;
use crate::routing::ForwardingTables;
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
pub(super) fn scan(
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
