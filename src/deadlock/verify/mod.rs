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
//!
//! With [`RouteSls::EverySl`] every route carries every SL 0..15 at once. A tail is followed
//! with the set of SLs that hold its channel; a switch whose (in port, out port) table maps
//! several of them to one lane passes them on together, so SLs with equal lane sequences cost
//! one walk, and a tail splits only where the tables tell its SLs apart.
//!
//! [`verify_with_multicast`] adds the multicast groups of the switches' multicast forwarding
//! tables to the same graph (see `multicast` for what a group depends on): a cycle through a
//! group's tree names the MLIDs whose trees make its dependencies.
//!
//! [`verify_transition`] checks a change from old tables to new ones: every order in which a
//! subnet manager may rewrite them, loops and deadlocks (see `transition`).

mod cycles;
mod dependencies;
mod multicast;
mod names;
mod render;
mod routes;
mod scan;
mod transition;
mod verdict;
mod walker;

pub use multicast::Multicast;
pub use transition::{
    After, Before, Entry, LoopHop, TransitionLoop, TransitionVerdict, verify_transition,
};
pub use verdict::{
    Cycle, CycleChannel, CyclicComponent, MulticastCounts, RouteExample, Verdict, VlChannels,
};

use super::network::{BrokenRoutes, Channels, Traffic, chunks, threads};
use super::path_sl::{DefaultSl, PathSl};
use super::sl2vl::Sl2VlTables;
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::Fabric;
use cycles::{Found, find_cycle};
use dependencies::Dependencies;
use multicast::{Hop, replicate};
use routes::Routes;
use scan::{Scan, scan};

/// What to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Routes from and to the switches' own LIDs are checked too.
    pub switch_lids: bool,
    /// At most this many example routes per cycle dependency, and failures, are listed.
    pub max_listed: usize,
    /// The SLs each route carries.
    pub sls: RouteSls,
}

/// Which SLs a route's packets carry, and so which lanes of the SL-to-VL tables it uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RouteSls {
    /// The route's path SL, as the subnet manager answers it in PathRecords: deadlock freedom
    /// for clients that ask the SA and use its SL.
    #[default]
    PathSl,
    /// Every SL 0..15 at once, in one channel dependency graph: deadlock freedom for clients
    /// that put one fixed SL into every packet and never ask for the path SL (UCX for Open MPI
    /// and MPICH, plain verbs programs, multicast), whichever SL each of them picks.
    EverySl,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            switch_lids: true,
            max_listed: 5,
            sls: RouteSls::PathSl,
        }
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
    check(fabric, lids, tables, path_sl, sl2vl, None, options)
}

/// [`verify`] with every route carrying every SL ([`RouteSls::EverySl`]; no path SL is read):
/// what lanes by port pair promise, for senders that pick their SL themselves.
pub fn verify_every_sl(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    sl2vl: &Sl2VlTables,
) -> Verdict {
    let options = VerifyOptions {
        sls: RouteSls::EverySl,
        ..VerifyOptions::default()
    };
    verify(fabric, lids, tables, &DefaultSl(0), sl2vl, &options)
}

/// Checks the unicast routes of `tables` and the groups of `multicast` together, in one
/// channel dependency graph, for deadlock freedom. With [`RouteSls::PathSl`] each group
/// carries its own SL; with [`RouteSls::EverySl`], every SL.
pub fn verify_with_multicast(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    path_sl: &dyn PathSl,
    sl2vl: &Sl2VlTables,
    multicast: &Multicast<'_>,
    options: &VerifyOptions,
) -> Verdict {
    check(
        fabric,
        lids,
        tables,
        path_sl,
        sl2vl,
        Some(multicast),
        options,
    )
}

fn check(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    path_sl: &dyn PathSl,
    sl2vl: &Sl2VlTables,
    multicast: Option<&Multicast<'_>>,
    options: &VerifyOptions,
) -> Verdict {
    let net = Channels::new(
        fabric,
        lids,
        Traffic {
            switch_lids: options.switch_lids,
        },
    );
    let routes = Routes {
        net: &net,
        tables,
        path_sl,
        sl2vl,
        sls: options.sls,
        cap: options.max_listed,
        old: None,
    };
    let cap = options.max_listed;
    let mapped = sl2vl.vls_mapped();
    // Destinations in contiguous chunks, one thread each, each with its own dependency sets;
    // the sets are merged afterwards.
    let parts = chunks(net.dests.len(), threads());
    let scans: Vec<Scan> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|range| scope.spawn(move || scan(routes, mapped, range.clone())))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a verifier thread panicked"))
            .collect()
    });
    let mut deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let (mut broken, mut dropped) = (BrokenRoutes::default(), BrokenRoutes::default());
    let (mut loops, mut checked) = (0, 0u64);
    for part in scans {
        deps.merge(&part.deps);
        broken.merge(part.broken, cap);
        dropped.merge(part.dropped, cap);
        loops += part.loops;
        checked += part.routes;
    }
    conclude(
        routes,
        deps,
        Scanned {
            routes: checked,
            broken,
            loops,
            dropped,
        },
        multicast,
        [Some(sl2vl), None],
        options,
    )
}

/// What the scan of the unicast routes found, before the multicast groups are added.
struct Scanned {
    routes: u64,
    broken: BrokenRoutes,
    loops: usize,
    dropped: BrokenRoutes,
}

/// The verdict on `deps`, the unicast routes' dependencies, once the copies of every multicast
/// group are added (their hops take the lanes of the `sl2vls` given: one table for a snapshot,
/// the new and the old for a change): the first cycle and its components, and the counts. A
/// snapshot and a change end alike.
fn conclude(
    routes: Routes<'_, '_>,
    mut deps: Dependencies,
    scanned: Scanned,
    multicast: Option<&Multicast<'_>>,
    sl2vls: [Option<&Sl2VlTables>; 2],
    options: &VerifyOptions,
) -> Verdict {
    let net = routes.net;
    let cap = options.max_listed;
    let Scanned {
        routes: checked,
        broken,
        loops,
        mut dropped,
    } = scanned;
    let multicast_counts = multicast.map(|m| {
        let (dependencies, channels) = (deps.count(), deps.used.iter().filter(|&&u| u).count());
        let index = deps.index;
        let mlids = m.tables.mlids();
        for &mlid in &mlids {
            replicate(net, sl2vls, &index, m, options.sls, mlid, |hop| match hop {
                Hop::Dependency { a, x, b, y } => deps.add(net.turn(a, b), a, x, b, y),
                Hop::Start { b, y } => deps.used[b as usize * deps.nv + y] = true,
                Hop::Dropped(what) => {
                    dropped.count += 1;
                    if dropped.examples.len() < cap {
                        dropped.examples.push(what);
                    }
                }
            });
        }
        MulticastCounts {
            groups: mlids.len(),
            entries: m.tables.len(),
            dependencies: deps.count() - dependencies,
            channels: deps.used.iter().filter(|&&u| u).count() - channels,
        }
    });
    let (cycle, cyclic_components) = match find_cycle(net, &deps) {
        None => (None, Vec::new()),
        Some(first) => {
            let found = Found {
                routes,
                deps: &deps,
                multicast,
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
        routes: checked,
        channels: deps.used.iter().filter(|&&u| u).count(),
        dependencies: deps.count(),
        vls,
        broken,
        loops,
        dropped,
        cycle,
        cyclic_components,
        multicast: multicast_counts,
    }
}
