//! Naming the cycles of a change: the destination LIDs whose mixed routes make each
//! dependency of a cycle.

use std::collections::HashMap;

use super::hops::MixedHops;
use super::scan::walk_sources;
use crate::deadlock::verify::dependencies::Dependencies;
use crate::deadlock::verify::routes::{Old, Routes};
use crate::deadlock::verify::verdict::Cycle;
use crate::deadlock::verify::walker::{Walker, Watch};

/// Adds to each dependency of the cycles `named` (`wanted`: dependency (turn, x, y) → (cycle,
/// position)) the destination LIDs whose mixed routes make it, up to the listing cap: a
/// second walk of every destination with the dependencies of the cycles watched.
pub(crate) fn name_destinations(
    routes: Routes<'_, '_>,
    old: Old<'_>,
    deps: &Dependencies,
    wanted: &HashMap<(usize, usize, usize), (usize, usize)>,
    named: &mut [Cycle],
) {
    let net = routes.net;
    let mapped = deps.vl_of.iter().fold(0u16, |m, &vl| m | (1 << vl));
    let scratch = Dependencies::new(mapped, net.turns(), net.links.len());
    let mut walker = Walker::new(net, routes.sl2vl, scratch, 0).with_old(old.sl2vl);
    walker.watch = Some(Watch {
        wanted,
        hits: Vec::new(),
    });
    let mut hops = MixedHops::new(net.len());
    let cap = routes.cap.max(1);
    for (di, dest) in net.dests.iter().enumerate() {
        hops.build(net, routes.tables, old.tables, dest, |_| {});
        walk_sources(&mut walker, &hops, routes, di);
        let watch = walker.watch.as_mut().expect("set above");
        watch.hits.sort_unstable();
        watch.hits.dedup();
        for &(k, i) in &watch.hits {
            let c = &mut named[k].channels[i];
            if c.dlids.len() < cap {
                c.dlids.push(dest.lid);
            }
        }
        watch.hits.clear();
    }
}
