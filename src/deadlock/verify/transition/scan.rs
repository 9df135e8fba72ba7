//! The scan of a change over every destination: the union of old and new next hops, its loop
//! if any, and the dependencies of every mixed route.

use super::hops::MixedHops;
use super::{LoopHop, TransitionLoop};
use crate::deadlock::network::BrokenRoutes;
use crate::deadlock::verify::dependencies::Dependencies;
use crate::deadlock::verify::routes::{Old, Routes};
use crate::deadlock::verify::walker::{NextHops, Walker};
use crate::routing::walk::NONE;

/// What one thread found for its destinations.
pub(super) struct MixedScan {
    pub(super) deps: Dependencies,
    pub(super) broken: BrokenRoutes,
    pub(super) dropped: BrokenRoutes,
    pub(super) routes: u64,
    pub(super) changed: usize,
    pub(super) old_dropped: usize,
    pub(super) looping: usize,
    pub(super) loops: Vec<TransitionLoop>,
}

/// Walks the mixed routes towards the destinations `range` and collects their dependencies.
pub(super) fn scan_mixed(
    routes: Routes<'_, '_>,
    old: Old<'_>,
    mapped: u16,
    range: std::ops::Range<usize>,
) -> MixedScan {
    let Routes {
        net,
        tables,
        sl2vl,
        cap,
        ..
    } = routes;
    let deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let mut walker = Walker::new(net, sl2vl, deps, cap).with_old(old.sl2vl);
    let mut hops = MixedHops::new(net.len());
    let mut scan = MixedScan {
        deps: Dependencies::new(0, 0, 0),
        broken: BrokenRoutes::default(),
        dropped: BrokenRoutes::default(),
        routes: 0,
        changed: 0,
        old_dropped: 0,
        looping: 0,
        loops: Vec::new(),
    };
    for di in range {
        let dest = &net.dests[di];
        let failures = hops.build(net, tables, old.tables, dest, |b| {
            scan.broken.record(net, b, cap);
        });
        scan.changed += failures.changed;
        scan.old_dropped += failures.old_dropped;
        if let Some(cycle) = hops.find_cycle(net) {
            scan.looping += 1;
            if scan.loops.len() < cap {
                scan.loops.push(TransitionLoop {
                    lid: dest.lid,
                    hops: cycle
                        .iter()
                        .map(|&(s, l)| LoopHop {
                            switch: net.switch_name(s as usize).to_string(),
                            port: net.links[l as usize].from.port,
                            entry: hops.entry(s as usize, l),
                        })
                        .collect(),
                });
            }
        }
        scan.routes += walk_sources(&mut walker, &hops, routes, di);
    }
    scan.deps = walker.deps;
    scan.dropped = walker.dropped;
    scan
}

/// Follows the routes of every source towards destination `di` through `hops` (each switch
/// old or new) with `walker`; returns how many (source, destination) routes were followed.
pub(super) fn walk_sources(
    walker: &mut Walker<'_, '_>,
    hops: &MixedHops,
    routes: Routes<'_, '_>,
    di: usize,
) -> u64 {
    let net = routes.net;
    let dest = &net.dests[di];
    let mut checked = 0;
    for s in 0..net.len() {
        let sources = net.sources_at(s);
        let next = hops.next_hops(s);
        if sources.is_empty() || next == [NONE; 2] {
            continue;
        }
        let own = if s == dest.switch as usize {
            sources.iter().filter(|src| src.port == dest.port).count() as u64
        } else {
            0
        };
        checked += sources.len() as u64 - own;
        for out in next.into_iter().filter(|&l| l != NONE) {
            walker.enter(hops, routes, di, s, out);
        }
    }
    checked
}
