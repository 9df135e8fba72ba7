//! Naming the cycles found: their channels as links, and the routes that make each of their
//! dependencies.

use std::collections::HashMap;

use super::cycles::Found;
use super::routes::{Routes, each_sl};
use super::verdict::{Cycle, CycleChannel, RouteExample};
use crate::deadlock::sl2vl::VL15;
use crate::routing::walk::{DestWalk, NONE};

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
        let mut counted: Vec<(usize, usize)> = Vec::new();
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
                    // A route that makes a dependency on several SLs counts once, named with
                    // the lowest of them.
                    counted.clear();
                    for sl in each_sl(routes.sls(src.lid, dest.lid)) {
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
                                let hit = wanted.get(&(net.turn(a, b), x, y));
                                if let Some(&(k, i)) = hit.filter(|at| !counted.contains(at)) {
                                    counted.push((k, i));
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
        }
        named
    }
}
