//! Naming the cycles found: their channels as links, and the routes that make each of their
//! dependencies.

use std::collections::HashMap;

use super::cycles::Found;
use super::dependencies::Dependencies;
use super::multicast::{Hop, Multicast, replicate};
use super::routes::{Routes, by_lane};
use super::verdict::{Cycle, CycleChannel, RouteExample};
use crate::deadlock::network::{Channels, Source};
use crate::deadlock::sl2vl::{Sl2VlTables, VL15};
use crate::routing::walk::{DestWalk, NONE};
use crate::topology::PortRef;

impl Found<'_, '_> {
    /// Names the channels of the cycles and the routes that make each of their dependencies
    /// (a second pass over the routes, without sharing tails, restricted to destinations whose
    /// tree uses a link of a cycle).
    pub(super) fn name_cycles(&self, cycles: &[Vec<u32>]) -> Vec<Cycle> {
        let deps = self.deps;
        let routes = self.routes;
        let Routes {
            net,
            tables,
            sl2vl,
            cap,
            ..
        } = routes;
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
                            groups: Vec::new(),
                            dlids: Vec::new(),
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
        let mut cycle_turn = vec![false; net.turns()];
        for &(turn, _, _) in wanted.keys() {
            cycle_turn[turn] = true;
        }
        if let Some(old) = routes.old {
            super::transition::name_destinations(routes, old, deps, &wanted, &mut named);
            if let Some(multicast) = self.multicast {
                self.name_groups(multicast, &wanted, &mut named);
            }
            return named;
        }
        let mut tree = DestWalk::new(net.len());
        let mut cycle_routes = CycleRoutes {
            net,
            sl2vl,
            deps,
            wanted: &wanted,
            cycle_turn,
            pending: Vec::new(),
        };
        // The dependencies of cycles one route makes: (cycle, position), SL.
        let mut hits: Vec<((usize, usize), u8)> = Vec::new();
        for dest in &net.dests {
            tree.walk(net, tables, dest, |_| NONE);
            // The port and SLs whose route `hits` holds.
            let mut walked: Option<(PortRef, u16)> = None;
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
                    // The route's SLs, walked together while they share lanes.
                    let sls = routes.sls(src.lid, dest.lid);
                    // The LIDs of one port (its LMC offsets) with the same SLs make the same
                    // dependencies: walk the first of them.
                    if walked != Some((src.port, sls)) {
                        walked = Some((src.port, sls));
                        cycle_routes.hits(&tree, s, src, sls, &mut hits);
                    }
                    // A route that makes a dependency on several SLs counts once, named with
                    // the lowest of them.
                    for &((k, i), sl) in &hits {
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
            }
        }
        if let Some(multicast) = self.multicast {
            self.name_groups(multicast, &wanted, &mut named);
        }
        named
    }

    /// Adds to each cycle dependency the groups whose replication makes it (up to the cap).
    fn name_groups(
        &self,
        multicast: &Multicast<'_>,
        wanted: &HashMap<(usize, usize, usize), (usize, usize)>,
        named: &mut [Cycle],
    ) {
        let Routes {
            net,
            sl2vl,
            sls,
            cap,
            old,
            ..
        } = self.routes;
        let sl2vls = [Some(sl2vl), old.map(|o| o.sl2vl)];
        for mlid in multicast.tables.mlids() {
            replicate(net, sl2vls, &self.deps.index, multicast, sls, mlid, |hop| {
                if let Hop::Dependency { a, x, b, y } = hop
                    && let Some(&(k, i)) = wanted.get(&(net.turn(a, b), x, y))
                {
                    let groups = &mut named[k].channels[i].groups;
                    if groups.last() != Some(&mlid) && groups.len() < cap.max(1) {
                        groups.push(mlid);
                    }
                }
            });
        }
    }
}

/// Part of a route still to walk: the channel it holds (none yet for a switch's own LID), the
/// switch it is in and the port it arrived on, and the SLs that share these lanes.
struct Tail {
    held: Option<(u32, usize)>,
    v: usize,
    in_port: u8,
    sls: u16,
}

/// Walks single routes and finds the dependencies of the cycles each makes.
struct CycleRoutes<'w, 'a> {
    net: &'w Channels<'a>,
    sl2vl: &'w Sl2VlTables,
    deps: &'w Dependencies,
    /// Dependency (turn, x, y) → (cycle, position in it).
    wanted: &'w HashMap<(usize, usize, usize), (usize, usize)>,
    /// Turns some cycle dependency takes.
    cycle_turn: Vec<bool>,
    pending: Vec<Tail>,
}

impl CycleRoutes<'_, '_> {
    /// VL index of `vl`, or `None` for VL 15 (dropped).
    fn dense(&self, vl: u8) -> Option<usize> {
        if vl == VL15 {
            None
        } else {
            Some(usize::from(self.deps.index[usize::from(vl & 15)]))
        }
    }

    /// The cycle dependencies (cycle, position) the route from `src` on switch `s` with the
    /// SLs `sls` makes towards the destination of `tree`, each with the lowest SL that makes
    /// it, into `hits`.
    fn hits(
        &mut self,
        tree: &DestWalk,
        s: usize,
        src: &Source,
        sls: u16,
        hits: &mut Vec<((usize, usize), u8)>,
    ) {
        let start = |held, sls| Tail {
            held,
            v: s,
            in_port: src.in_port,
            sls,
        };
        if src.link == NONE {
            self.pending.push(start(None, sls));
        } else {
            for (vl, group) in by_lane(self.sl2vl.port_row(src.port), sls) {
                if let Some(h) = self.dense(vl) {
                    self.pending.push(start(Some((src.link, h)), group));
                }
            }
        }
        hits.clear();
        while let Some(t) = self.pending.pop() {
            let b = tree.next(t.v);
            if b == NONE {
                continue;
            }
            let out = self.net.links[b as usize].from.port;
            let row = self
                .sl2vl
                .switch_row(self.net.switches[t.v], t.in_port, out);
            for (vl, group) in by_lane(row, t.sls) {
                let Some(y) = self.dense(vl) else {
                    continue;
                };
                if let Some((a, x)) = t.held {
                    let turn = self.net.turn(a, b);
                    if self.cycle_turn[turn]
                        && let Some(&at) = self.wanted.get(&(turn, x, y))
                    {
                        hits.push((at, group.trailing_zeros() as u8));
                    }
                }
                let to = self.net.links[b as usize];
                if to.to_switch != NONE {
                    self.pending.push(Tail {
                        held: Some((b, y)),
                        v: to.to_switch as usize,
                        in_port: to.to.port,
                        sls: group,
                    });
                }
            }
        }
        hits.sort_unstable();
        hits.dedup_by_key(|&mut (at, _)| at);
    }
}
