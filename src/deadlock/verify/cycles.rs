//! Finding a cycle of the channel dependency graph, and its cyclic strongly connected
//! components with a cycle each.

use super::dependencies::Dependencies;
use super::multicast::Multicast;
use super::routes::Routes;
use super::verdict::{CyclicComponent, VlChannels};
use crate::deadlock::cdg::{CallbackGraph, CycleSearch, cyclic_components, shortest_cycle};
use crate::deadlock::network::Channels;
use crate::routing::walk::NONE;

/// A cycle of the CDG as channel nodes (link × nv + VL index), if there is one.
pub(super) fn find_cycle(net: &Channels<'_>, deps: &Dependencies) -> Option<Vec<u32>> {
    let nv = deps.nv;
    let mut search = CycleSearch::new(net.links.len() * nv);
    search
        .next_cycle(|node, cursor| {
            let (a, x) = (node as usize / nv, node as usize % nv);
            if !deps.used[node as usize] {
                return None;
            }
            let v = net.links[a].to_switch;
            if v == NONE {
                return None;
            }
            let outs = net.out_links(v as usize);
            loop {
                let (b_pos, y) = ((*cursor / 16) as usize, *cursor % 16);
                if b_pos >= outs.len() {
                    return None;
                }
                let row = deps.row(net.turn_at(a as u32, b_pos), x) >> y;
                if row == 0 {
                    *cursor = (b_pos as u32 + 1) * 16;
                    continue;
                }
                let y = y + row.trailing_zeros();
                *cursor = b_pos as u32 * 16 + y + 1;
                return Some(outs[b_pos] * nv as u32 + y);
            }
        })
        .map(|(_, cycle)| cycle)
}

/// What the scan found, for naming the cyclic components and their cycles.
pub(super) struct Found<'f, 'a> {
    /// The routes scanned.
    pub(super) routes: Routes<'f, 'a>,
    /// Their dependencies.
    pub(super) deps: &'f Dependencies,
    /// The multicast groups checked with them.
    pub(super) multicast: Option<&'f Multicast<'f>>,
}

impl Found<'_, '_> {
    /// The channels (link × nv + VL index) that `c` depends on.
    fn successors(&self, c: u32, out: &mut Vec<u32>) {
        let (net, deps, nv) = (self.routes.net, self.deps, self.deps.nv);
        let (a, x) = (c as usize / nv, c as usize % nv);
        let v = net.links[a].to_switch;
        if !deps.used[c as usize] || v == NONE {
            return;
        }
        for (b_pos, &b) in net.out_links(v as usize).iter().enumerate() {
            let mut row = deps.row(net.turn_at(a as u32, b_pos), x);
            while row != 0 {
                out.push(b * nv as u32 + row.trailing_zeros());
                row &= row - 1;
            }
        }
    }

    /// The channels that depend on `c`.
    fn predecessors(&self, c: u32, out: &mut Vec<u32>) {
        let (net, deps, nv) = (self.routes.net, self.deps, self.deps.nv);
        let (b, y) = (c / nv as u32, c as usize % nv);
        let v = net.links[b as usize].from_switch;
        if !deps.used[c as usize] || v == NONE {
            return;
        }
        for &a in net.in_links(v as usize) {
            let turn = net.turn(a, b);
            out.extend(
                (0..nv)
                    .filter(|&x| deps.has(turn, x, y))
                    .map(|x| a * nv as u32 + x as u32),
            );
        }
    }

    /// Every cyclic strongly connected component, the one holding `first` (a cycle) first and
    /// with `first` as its cycle, the others with a shortest cycle through their first channel.
    pub(super) fn components(&self, first: Vec<u32>) -> Vec<CyclicComponent> {
        let nodes: Vec<u32> = (0..self.deps.used.len() as u32)
            .filter(|&c| self.deps.used[c as usize])
            .collect();
        let (successors, predecessors) = (
            |c: u32, out: &mut Vec<u32>| self.successors(c, out),
            |c: u32, out: &mut Vec<u32>| self.predecessors(c, out),
        );
        let graph = CallbackGraph {
            nodes: &nodes,
            bound: self.deps.used.len(),
            successors: &successors,
            predecessors: &predecessors,
        };
        let mut components = cyclic_components(graph);
        let holds_first = components
            .iter()
            .position(|c| c.binary_search(&first[0]).is_ok())
            .expect("a cycle lies in a cyclic component");
        components[..=holds_first].rotate_right(1);
        let mut component_of = vec![NONE; self.deps.used.len()];
        for (i, c) in components.iter().enumerate() {
            for &v in c {
                component_of[v as usize] = i as u32;
            }
        }
        let cycles: Vec<Vec<u32>> = std::iter::once(first)
            .chain(components.iter().enumerate().skip(1).map(|(i, c)| {
                shortest_cycle(graph, c[0], |v| component_of[v as usize] == i as u32)
            }))
            .collect();
        let named = self.name_cycles(&cycles);
        let mut out = Vec::new();
        components
            .iter()
            .zip(named)
            .map(|(c, cycle)| {
                let nv = self.deps.nv;
                let mut dependencies = 0;
                let mut per_vl = vec![0usize; nv];
                for &v in c {
                    per_vl[v as usize % nv] += 1;
                    out.clear();
                    self.successors(v, &mut out);
                    dependencies += out.iter().filter(|&&w| c.binary_search(&w).is_ok()).count();
                }
                let mut vls: Vec<VlChannels> = (0..nv)
                    .filter(|&x| per_vl[x] > 0)
                    .map(|x| VlChannels {
                        vl: self.deps.vl_of[x],
                        channels: per_vl[x],
                    })
                    .collect();
                vls.sort_unstable_by_key(|v| v.vl);
                CyclicComponent {
                    channels: c.len(),
                    dependencies,
                    vls,
                    cycle: Some(cycle),
                }
            })
            .collect()
    }
}
