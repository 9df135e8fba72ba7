//! The scan over every route: per destination, the tree of the forwarding tables, the sources
//! that reach it, and their tails.

use super::dependencies::Dependencies;
use super::routes::Routes;
use super::walker::Walker;
use crate::deadlock::network::BrokenRoutes;
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
            walker.enter(&tree, routes, di, s, out);
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
