//! The baseline mappings the two-opt search starts from (the shortcut-topology study's
//! baselines), in two uses:
//!
//! * [`allocate`] picks `count` hosts of a whole fabric the way a scheduler would — random,
//!   hierarchical tree (breadth-first from a random host's switch), ring-consecutive (a run of
//!   consecutive hosts in node order, which is ring order for the shortcut and circulant
//!   constructions) or simply the first ones — and numbers them in ascending node order
//!   (ring-consecutive: along the run), the study's ascending-order rank placement.
//! * [`rank_order`] numbers hosts already allocated (a job's host list): as listed, ascending
//!   node order (construction order for generated fabrics, discovery order for a dump),
//!   a seeded shuffle, breadth-first order from the first host's switch, or ring order starting
//!   after the widest gap between allocated switches.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use crate::rng::Rng;
use crate::topology::{Fabric, PortRef, SwitchGraph};

/// A host port that can run a rank, with the dense [`SwitchGraph`] index of its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The host port.
    pub port: PortRef,
    /// Its switch (dense index).
    pub switch: u32,
}

/// A baseline mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// The order the hosts are listed in (a scheduler's order); for [`allocate`], the first
    /// hosts.
    AsListed,
    /// Ascending node order.
    Ascending,
    /// Seeded random.
    Random,
    /// Hierarchical tree: breadth-first over the switches.
    Tree,
    /// Ring-consecutive: along the node (ring) order.
    Ring,
}

impl Mapping {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Mapping::AsListed => "as-listed",
            Mapping::Ascending => "ascending",
            Mapping::Random => "random",
            Mapping::Tree => "tree",
            Mapping::Ring => "ring",
        }
    }
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mapping {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "as-listed" => Ok(Mapping::AsListed),
            "ascending" => Ok(Mapping::Ascending),
            "random" => Ok(Mapping::Random),
            "tree" => Ok(Mapping::Tree),
            "ring" => Ok(Mapping::Ring),
            other => Err(format!(
                "unknown mapping {other:?} (as-listed, ascending, random, tree or ring)"
            )),
        }
    }
}

/// Every host's first port cabled to a switch, in node order.
pub fn host_slots(fabric: &Fabric, graph: &SwitchGraph) -> Vec<Slot> {
    let mut dense = vec![u32::MAX; fabric.nodes().len()];
    for i in 0..graph.len() {
        dense[graph.node(i).index()] = i as u32;
    }
    fabric
        .hosts()
        .filter_map(|h| {
            fabric.neighbours(h).find_map(|(p, peer)| {
                let switch = dense[peer.node.index()];
                (switch != u32::MAX).then_some(Slot {
                    port: PortRef { node: h, port: p },
                    switch,
                })
            })
        })
        .collect()
}

/// Switches in breadth-first order from `root` (neighbours ascending): `rank[s]` is the
/// position of switch s, `usize::MAX` if unreached.
fn bfs_rank(graph: &SwitchGraph, root: usize) -> Vec<usize> {
    let mut rank = vec![usize::MAX; graph.len()];
    let mut queue = VecDeque::from([root]);
    rank[root] = 0;
    let mut next = 1;
    while let Some(v) = queue.pop_front() {
        for &w in graph.neighbours(v) {
            if rank[w as usize] == usize::MAX {
                rank[w as usize] = next;
                next += 1;
                queue.push_back(w as usize);
            }
        }
    }
    rank
}

/// Picks `count` of `candidates` (in node order) by `mapping`; returns their indices in rank
/// order.
///
/// # Panics
/// If `count` exceeds the candidates.
pub fn allocate(
    mapping: Mapping,
    candidates: &[Slot],
    count: usize,
    graph: &SwitchGraph,
    seed: u64,
) -> Vec<u32> {
    assert!(
        count <= candidates.len(),
        "{count} of {} hosts",
        candidates.len()
    );
    let n = candidates.len();
    let mut rng = Rng::new(seed);
    let mut chosen: Vec<u32> = match mapping {
        Mapping::AsListed | Mapping::Ascending => (0..count as u32).collect(),
        Mapping::Random => {
            let mut all: Vec<u32> = (0..n as u32).collect();
            rng.shuffle(&mut all);
            all.truncate(count);
            all
        }
        Mapping::Tree => {
            if n == 0 {
                return Vec::new();
            }
            let root = candidates[rng.below(n as u64) as usize].switch as usize;
            let rank = bfs_rank(graph, root);
            let mut all: Vec<u32> = (0..n as u32).collect();
            all.sort_by_key(|&i| (rank[candidates[i as usize].switch as usize], i));
            all.truncate(count);
            all
        }
        Mapping::Ring => {
            if n == 0 {
                return Vec::new();
            }
            let start = rng.below(n as u64) as usize;
            // Along the run, not by index: a run that wraps stays a line.
            return (0..count).map(|i| ((start + i) % n) as u32).collect();
        }
    };
    chosen.sort_unstable();
    chosen
}

/// Numbers the allocated `slots` by `mapping`: returns the slot index of every rank.
pub fn rank_order(mapping: Mapping, slots: &[Slot], graph: &SwitchGraph, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..slots.len() as u32).collect();
    let key = |i: &u32| slots[*i as usize].port;
    match mapping {
        Mapping::AsListed => {}
        Mapping::Ascending => order.sort_by_key(key),
        Mapping::Random => Rng::new(seed).shuffle(&mut order),
        Mapping::Tree => {
            if let Some(first) = slots.first() {
                let rank = bfs_rank(graph, first.switch as usize);
                order.sort_by_key(|&i| (rank[slots[i as usize].switch as usize], key(&i)));
            }
        }
        Mapping::Ring => {
            order.sort_by_key(|&i| (slots[i as usize].switch, key(&i)));
            // Start after the widest gap between consecutive allocated switches (cyclically),
            // so an allocation that wraps around the ring is numbered as one line.
            let n = graph.len() as u32;
            let gap = |j: usize| {
                let here = slots[order[j] as usize].switch;
                let prev = slots[order[(j + order.len() - 1) % order.len()] as usize].switch;
                (here + n - prev) % n.max(1)
            };
            if let Some(start) = (0..order.len()).max_by_key(|&j| (gap(j), std::cmp::Reverse(j))) {
                order.rotate_left(start);
            }
        }
    }
    order
}
