//! DFSSSP-style virtual-lane assignment (Domke, Hoefler and Nagel, IPDPS 2011; OpenSM's
//! `osm_ucast_dfsssp.c`), for any routing given by its forwarding tables.
//!
//! Routes are grouped per (source switch, destination LID): every source LID attached to a
//! switch (and the switch's own LID) follows the same switch path to a destination, so the
//! group carries that many (source LID, destination LID) routes and gets one VL. A group's
//! dependencies are the turns between consecutive inter-switch links of its path: host links
//! are sources and sinks of the channel dependency graph and never on a cycle (OpenSM skips
//! them for the same reason; the verifier includes them).
//!
//! All groups start on VL 0. For VL 0, 1, …: search the CDG of the VL for cycles; for each
//! cycle, take the dependency carried by the fewest routes and move every group of this VL
//! that induces it — to the lowest VL already processed whose CDG stays acyclic with it (kept
//! as a dynamic topological order, Pearce and Kelly 2006), else to the next VL as OpenSM does.
//! When a VL is acyclic, go on with the next, until a VL stays empty. Then the groups of the
//! highest VL are moved down where they fit, and if it empties, the next highest, and so on.
//! Two bounded searches for fewer VLs follow ([`VlSearch`], `search.rs`): re-packing the
//! classes first-fit in new orders, and a tabu search that tries to empty the highest class
//! when few groups are left in it. The VLs so used are the VLs this routing needs; if more than exist, the assignment fails
//! with both numbers. Otherwise the spare VLs are split among the used ones, each going to the
//! VL with the most routes per share (OpenSM's balancing), and each group of a VL is given the
//! least loaded of its shares. SL = VL, and the SL-to-VL tables map SL i to VL i.
//!
//! The additions matter: OpenSM's rule alone (moved routes always go one VL up) needs 9 VLs
//! for the layered routing of Slim Fly q = 9 or q = 13 with 4 layers; with the first two both
//! fit in 8. The searches then save one or two more on small and mid-sized fabrics: Slim Fly
//! q = 5 with 4 layers needs 3 instead of 4, q = 7 with 8 layers 5 instead of 7
//! (BENCHMARKS.md has the counts).
//!
//! # Complexity
//! Walking the tables: destinations × switches. The groups and their turns are stored once
//! (a turn → groups index for moving them); each cycle search is linear in the links and turns
//! of one VL and resumes after every cycle it breaks. An acyclicity check visits only the
//! links between the two ends of the new dependency in the topological order, and gives up
//! (keeping the group on a higher VL, which is always safe) after [`SEARCH_BUDGET`] of them.
//! The searches are bounded in group insertions (re-packing: a few million in all, so that it
//! skips fabrics with millions of groups; tabu: at most 100,000), so they add at most a few
//! seconds.

mod lanes;
mod search;

use super::DeadlockError;
use super::cdg::CycleSearch;
use super::network::{BrokenRoutes, Channels, Traffic, chunks, split_at_offsets, threads};
use super::path_sl::SwitchSls;
use super::sl2vl::{Sl2VlTables, identity_row};
use crate::routing::walk::{DestWalk, NONE};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::Fabric;
use lanes::{Lanes, Turns, next_bit};

/// Parameters of the assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfssspConfig {
    /// Data VLs available (1..=15; 8 on common hardware).
    pub vls: u8,
    /// Routes from and to the switches' own LIDs count too (OpenSM's DFSSSP includes them for
    /// switches whose port 0 supports SL-to-VL mapping).
    pub switch_lids: bool,
    /// After the cycle breaking, how hard to look for an assignment with fewer VLs.
    pub search: VlSearch,
}

/// The searches for fewer VLs after the cycle breaking (see `search.rs`), both bounded in work
/// so that large fabrics keep the plain assignment's speed. With neither, the classes are what
/// OpenSM's rule with the two additions above gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlSearch {
    /// Re-pack the classes first-fit in new orders (iterated greedy).
    pub repack: bool,
    /// Try to empty the highest class by a tabu search when few groups are left in it.
    pub tabu: bool,
}

impl VlSearch {
    /// Both searches.
    pub const FULL: Self = Self {
        repack: true,
        tabu: true,
    };
    /// Neither.
    pub const OFF: Self = Self {
        repack: false,
        tabu: false,
    };
}

impl Default for DfssspConfig {
    fn default() -> Self {
        Self {
            vls: 8,
            switch_lids: true,
            search: VlSearch::FULL,
        }
    }
}

/// The result: an SL (= VL) per (source switch, destination LID).
#[derive(Debug, Clone)]
pub struct VlAssignment {
    /// VLs available.
    pub vls: u8,
    /// VLs the routing needs: the classes after the cycle breaking and the searches for fewer
    /// (before the spare VLs were used for balance).
    pub vls_needed: u8,
    /// (source LID, destination LID) routes per VL class before balancing (`vls_needed`
    /// entries).
    pub routes_per_class: Vec<u64>,
    /// Routes per VL after balancing (`vls` entries).
    pub routes_per_vl: Vec<u64>,
    /// Cycles broken.
    pub cycles_broken: usize,
    /// The path SLs.
    pub path_sls: SwitchSls,
    /// Walks through the tables that fail (their routes have no VL).
    pub broken: BrokenRoutes,
}

impl VlAssignment {
    /// The SL-to-VL tables of the scheme: SL i on VL i on every port.
    pub fn sl2vl(&self, fabric: &Fabric) -> Sl2VlTables {
        Sl2VlTables::uniform(fabric, identity_row(self.vls))
    }
}

/// Most links an acyclicity check visits while cycles are broken before it refuses the
/// insertion (a refusal only keeps a route on a higher VL; it never admits a cycle).
pub const SEARCH_BUDGET: usize = 256;

/// Most VL classes the search opens before it gives up (it always ends far earlier: every
/// cycle it breaks empties a dependency).
const MAX_CLASSES: usize = 64;

/// Assigns VLs to the routes of `tables` so that the CDG of every VL is acyclic.
///
/// # Errors
/// [`DeadlockError::NotEnoughVls`] with the number of VLs the routing needs when more than
/// `config.vls`; [`DeadlockError::BadVls`] for a VL count outside 1..=15.
pub fn assign_vls(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    config: &DfssspConfig,
) -> Result<VlAssignment, DeadlockError> {
    if !(1..=15).contains(&config.vls) {
        return Err(DeadlockError::BadVls {
            vls: config.vls,
            needed: "1..=15",
        });
    }
    let net = Channels::new(
        fabric,
        lids,
        Traffic {
            switch_lids: config.switch_lids,
        },
    );
    let started = std::time::Instant::now();
    let n = net.len();
    let d = net.dests.len();
    let weight: Vec<u64> = (0..n).map(|s| net.sources_at(s).len() as u64).collect();

    // Next link per (destination, switch), and hops.
    let mut next = vec![NONE; d * n];
    let mut hops = vec![0u8; d * n];
    let mut reaches = vec![false; d * n];
    let mut broken = BrokenRoutes::default();
    // Destinations in contiguous chunks, one thread each; each fills its own rows.
    let parts = chunks(d, threads());
    let offsets: Vec<usize> = parts.iter().map(|r| r.start * n).collect();
    let pieces = split_at_offsets(&mut next, &offsets)
        .into_iter()
        .zip(split_at_offsets(&mut hops, &offsets))
        .zip(split_at_offsets(&mut reaches, &offsets));
    let found: Vec<BrokenRoutes> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .zip(pieces)
            .map(|(range, ((next, hops), reaches))| {
                let net = &net;
                scope.spawn(move || {
                    let mut broken = BrokenRoutes::default();
                    let mut tree = DestWalk::new(n);
                    for (i, dest) in net.dests[range.clone()].iter().enumerate() {
                        tree.walk(net, tables, dest, |b| {
                            broken.record(net, b, 5);
                            NONE
                        });
                        let row = i * n..(i + 1) * n;
                        next[row].copy_from_slice(tree.next_links());
                        for s in 0..n {
                            // Paths longer than 254 hops count as 254 (only `>= 2` matters).
                            hops[i * n + s] = tree.hops(s).min(254) as u8;
                            reaches[i * n + s] = tree.reaches(s);
                        }
                    }
                    broken
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a table walk thread panicked"))
            .collect()
    });
    for b in found {
        broken.merge(b, 5);
    }
    if broken.count > 0 {
        log::warn!(
            "{} walks through the forwarding tables fail; their routes get no VL (e.g. {})",
            broken.count,
            broken.examples.join("; ")
        );
    }
    let with_turns: Vec<usize> = (0..d * n)
        .filter(|&g| reaches[g] && hops[g] >= 2 && weight[g % n] > 0)
        .collect();
    let mut lanes = Lanes {
        net: &net,
        turns: Turns::new(&net),
        n,
        next,
        weight,
        count: vec![vec![0; net.turns()]],
        present: vec![vec![0; net.turns().div_ceil(64)]],
        orders: Vec::new(),
        class: vec![0u8; d * n],
        groups_in: vec![0],
        path: Vec::new(),
        budget: SEARCH_BUDGET,
    };
    // Turn → groups index (CSR), and every group on VL 0.
    let turns = net.turns();
    let mut offsets = vec![0u32; turns + 1];
    let mut path = Vec::new();
    for &g in &with_turns {
        lanes.path_of(g, &mut path);
        for &(t, _, _) in &path {
            offsets[t + 1] += 1;
        }
    }
    for t in 0..turns {
        offsets[t + 1] += offsets[t];
    }
    let mut fill = offsets.clone();
    let mut turn_groups = vec![0u32; offsets[turns] as usize];
    for &g in &with_turns {
        lanes.path_of(g, &mut path);
        for &(t, _, _) in &path {
            turn_groups[fill[t] as usize] = g as u32;
            fill[t] += 1;
        }
        lanes.add(g, 0, &path);
    }
    drop(fill);

    log::debug!(
        "DFSSSP: tables walked and indexed in {:?}",
        started.elapsed()
    );
    let mut search = CycleSearch::new(net.links.len());
    let mut cycles_broken = 0usize;
    let mut moved = Vec::new();
    // Per group, the finished classes below this one were tried and refused it (classes only
    // gain dependencies while later ones are processed, so a refusal stands).
    let mut tried = vec![0u8; d * n];
    let mut vl = 0usize;
    while vl < lanes.groups_in.len() && lanes.groups_in[vl] > 0 {
        if vl + 1 >= MAX_CLASSES {
            return Err(DeadlockError::NotEnoughVls {
                needed: MAX_CLASSES,
                available: config.vls,
            });
        }
        search.reset();
        loop {
            let bits = &lanes.present[vl];
            let found = search.next_cycle(|a, cursor| {
                let v = net.links[a as usize].to_switch;
                if v == NONE {
                    return None;
                }
                let outs = net.out_links(v as usize);
                let base = net.turn_at(a, 0);
                let p = next_bit(bits, base + *cursor as usize, base + outs.len())?;
                *cursor = (p - base + 1) as u32;
                Some(outs[p - base])
            });
            let Some((start, cycle)) = found else {
                break;
            };
            // Edges of the cycle: stack edges cycle[i] → cycle[i + 1], then the back edge.
            let k = cycle.len();
            let edge = |i: usize| net.turn(cycle[i], cycle[(i + 1) % k]);
            if let Some(gone) = (0..k - 1).find(|&i| lanes.count[vl][edge(i)] == 0) {
                search.cut(start + gone);
                continue;
            }
            let weakest = (0..k)
                .min_by_key(|&i| lanes.count[vl][edge(i)])
                .expect("a cycle has edges");
            let t = edge(weakest);
            moved.clear();
            moved.extend(
                turn_groups[offsets[t] as usize..offsets[t + 1] as usize]
                    .iter()
                    .map(|&g| g as usize)
                    .filter(|&g| usize::from(lanes.class[g]) == vl),
            );
            for &g in &moved {
                lanes.path_of(g, &mut path);
                lanes.remove(g, vl, &path);
                // The lowest finished VL that stays acyclic with it, else the next VL.
                let fits = (usize::from(tried[g])..vl).any(|c| lanes.try_insert(g, c, &path));
                if !fits {
                    tried[g] = vl as u8;
                    lanes.add(g, vl + 1, &path);
                }
            }
            debug_assert_eq!(lanes.count[vl][t], 0);
            cycles_broken += 1;
            if weakest + 1 < k {
                search.cut(start + weakest);
            }
        }
        lanes.finish(vl);
        vl += 1;
    }
    log::debug!("DFSSSP: cycles broken in {:?}", started.elapsed());
    let (classes_before, compacted) = lanes.compact();
    log::debug!("DFSSSP: compacted in {:?}", started.elapsed());
    if config.search != VlSearch::OFF {
        let found = search::fewer_classes(
            &mut lanes,
            &with_turns,
            &search::TurnGroups {
                offsets: &offsets,
                groups: &turn_groups,
            },
            config.search,
        );
        log::debug!("DFSSSP: {found}, after {:?}", started.elapsed());
    }
    let groups_in = &lanes.groups_in;
    let class = &lanes.class;
    let weight = &lanes.weight;
    log::debug!("DFSSSP: {classes_before} VLs before compaction, {compacted} groups moved down");
    let needed = groups_in
        .iter()
        .rposition(|&c| c > 0)
        .map_or(1, |last| last + 1);
    log::info!(
        "DFSSSP: {cycles_broken} cycles broken, {needed} VLs needed, {} available",
        config.vls
    );
    if needed > usize::from(config.vls) {
        return Err(DeadlockError::NotEnoughVls {
            needed,
            available: config.vls,
        });
    }

    // Routes per class (every group, including those without inter-switch turns).
    let vls = usize::from(config.vls);
    let mut routes_per_class = vec![0u64; needed];
    for g in 0..d * n {
        if reaches[g] && weight[g % n] > 0 {
            routes_per_class[usize::from(class[g])] += weight[g % n];
        }
    }
    // OpenSM's balancing: each spare VL to the class with the most routes per share.
    let mut split = vec![1u64; needed];
    for _ in needed..vls {
        let c = (0..needed)
            .max_by(|&a, &b| {
                (routes_per_class[a] * split[b])
                    .cmp(&(routes_per_class[b] * split[a]))
                    .then(b.cmp(&a))
            })
            .expect("at least one class");
        split[c] += 1;
    }
    let mut base = vec![0usize; needed];
    for c in 1..needed {
        base[c] = base[c - 1] + split[c - 1] as usize;
    }
    let mut routes_per_vl = vec![0u64; vls];
    let mut path_sls = SwitchSls::new(fabric, lids, 0);
    for (di, dest) in net.dests.iter().enumerate() {
        let row = path_sls.row_mut(dest.lid);
        for s in 0..n {
            let g = di * n + s;
            if !reaches[g] || weight[s] == 0 {
                continue;
            }
            let c = usize::from(class[g]);
            let shares = base[c]..base[c] + split[c] as usize;
            let lane = shares
                .min_by_key(|&v| (routes_per_vl[v], v))
                .expect("a share");
            routes_per_vl[lane] += weight[s];
            row[s] = lane as u8;
        }
    }
    Ok(VlAssignment {
        vls: config.vls,
        vls_needed: needed as u8,
        routes_per_class,
        routes_per_vl,
        cycles_broken,
        path_sls,
        broken,
    })
}
