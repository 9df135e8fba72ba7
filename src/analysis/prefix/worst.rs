//! The worst host permutation of one prefix, exactly.
//!
//! The load a permutation puts on directed cable c is Σ_i w_c(i, π(i)), with w_c(i, j) the
//! number of the prefix's K layer paths from host i's switch to host j's LIDs that cross c
//! (in units of 1/K). So the worst permutation's heaviest cable is max over c of a
//! maximum-weight assignment between source and destination hosts; a partial assignment
//! (hosts whose paths miss c left out) always extends to a whole permutation.
//!
//! Formulation: switch level. Weights depend only on (source switch, destination class) — a
//! class is the hosts of one switch whose LIDs are routed alike from every switch, which is
//! every host of a switch for the core's routings — so the assignment is a transportation
//! problem between the source switches (supply: their hosts) and the classes (demand: their
//! hosts) whose paths cross the cable, solved exactly on integer counts by
//! [`super::transport`]. (Kuhn–Munkres from the `pathfinding` crate on the host-level matrix
//! gives the same answers — the unit tests compare them — but is cubic in the hosts: 310 s for
//! Slim Fly q = 11 with 4 layers.) A cheap bound per cable —
//! min(Σ_s hosts_s · max weight of s, Σ_class size · max weight of the class) — is computed
//! first and the cables are solved in decreasing bound order, stopping as soon as no bound can
//! beat the heaviest assignment found (or the heaviest load the sampled permutations already
//! reached). The answer stays exact; the pruning only saves time, and little on Slim Flys
//! (most cables' bounds exceed the answer). No fallback to a bound or to sampling is needed:
//! Slim Fly q = 11 with 4 layers (2,178 hosts) takes 0.2 s for K = 4 (BENCHMARKS.md
//! "Throughput of each prefix of layers").

use super::paths::HostPaths;
use super::transport::heaviest_plan;

/// The worst permutation's heaviest cable and what it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Worst {
    /// The heaviest cable load (layer paths, units of 1/K) any permutation reaches.
    pub load: u64,
    /// Cables whose assignment problem was solved.
    pub solved: usize,
    /// Cables crossed by some path, all told.
    pub cables: usize,
}

/// One (cable, source switch, destination class) crossing: how many of the K paths cross.
#[derive(Clone, Copy)]
struct Crossing {
    cable: u32,
    source: u32,
    class: u32,
    count: u32,
}

/// The worst permutation of prefix `k`, knowing some permutation already loads a cable with
/// `known` (0 when none is known).
pub(crate) fn worst(paths: &HostPaths<'_, '_>, k: usize, known: u64) -> Worst {
    let n = paths.n;
    // Classes: per switch, hosts routed alike over the prefix; (switch, representative, size).
    let mut classes: Vec<(u32, usize, u32)> = Vec::new();
    let mut first_of_switch = 0;
    for h in 0..paths.hosts() {
        let t = paths.switch_of[h];
        if h > 0 && paths.switch_of[h - 1] != t {
            first_of_switch = classes.len();
        }
        match classes[first_of_switch..]
            .iter_mut()
            .find(|c| c.0 == t && paths.same_paths(c.1, h, k))
        {
            Some(c) => c.2 += 1,
            None => classes.push((t, h, 1)),
        }
    }
    let mut crossings = Vec::new();
    let mut buf: Vec<u32> = Vec::new();
    for s in (0..n).filter(|&s| paths.hosts_at[s] > 0) {
        for (ci, &(t, rep, _)) in classes.iter().enumerate() {
            if t as usize == s {
                continue;
            }
            buf.clear();
            for layer in 0..k {
                buf.extend(paths.cables(s, rep, layer));
            }
            buf.sort_unstable();
            for run in buf.chunk_by(|a, b| a == b) {
                crossings.push(Crossing {
                    cable: run[0],
                    source: s as u32,
                    class: ci as u32,
                    count: run.len() as u32,
                });
            }
        }
    }
    crossings.sort_unstable_by_key(|x| (x.cable, x.source, x.class));
    let groups: Vec<&[Crossing]> = crossings.chunk_by(|a, b| a.cable == b.cable).collect();
    let mut bounded: Vec<(u64, usize)> = groups
        .iter()
        .enumerate()
        .map(|(g, group)| (bound(paths, &classes, group), g))
        .collect();
    bounded.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut best = known;
    let mut solved = 0;
    for (upper, g) in bounded {
        if upper <= best {
            break;
        }
        solved += 1;
        best = best.max(assignment(paths, &classes, groups[g]));
    }
    Worst {
        load: best,
        solved,
        cables: groups.len(),
    }
}

/// An upper bound of the cable's heaviest assignment: every source host takes its heaviest
/// weight, or every destination host does.
fn bound(paths: &HostPaths<'_, '_>, classes: &[(u32, usize, u32)], group: &[Crossing]) -> u64 {
    let mut by_source = 0u64;
    for run in group.chunk_by(|a, b| a.source == b.source) {
        let heaviest = run.iter().map(|x| x.count).max().unwrap_or(0);
        by_source += u64::from(heaviest) * u64::from(paths.hosts_at[run[0].source as usize]);
    }
    let mut heaviest_of_class: Vec<(u32, u32)> = group.iter().map(|x| (x.class, x.count)).collect();
    heaviest_of_class.sort_unstable();
    let by_class: u64 = heaviest_of_class
        .chunk_by(|a, b| a.0 == b.0)
        .map(|run| u64::from(run[run.len() - 1].1) * u64::from(classes[run[0].0 as usize].2))
        .sum();
    by_source.min(by_class)
}

/// The cable's heaviest assignment of source hosts to destination hosts, as the
/// transportation problem between the switches and classes that cross it.
fn assignment(paths: &HostPaths<'_, '_>, classes: &[(u32, usize, u32)], group: &[Crossing]) -> u64 {
    let mut sources: Vec<u32> = group.iter().map(|x| x.source).collect();
    sources.sort_unstable();
    sources.dedup();
    let mut sinks: Vec<u32> = group.iter().map(|x| x.class).collect();
    sinks.sort_unstable();
    sinks.dedup();
    let edges: Vec<(u32, u32, u32)> = group
        .iter()
        .map(|x| {
            let i = sources.binary_search(&x.source).unwrap_or(0);
            let j = sinks.binary_search(&x.class).unwrap_or(0);
            (i as u32, j as u32, x.count)
        })
        .collect();
    let supply: Vec<u32> = sources
        .iter()
        .map(|&s| paths.hosts_at[s as usize])
        .collect();
    let demand: Vec<u32> = sinks.iter().map(|&c| classes[c as usize].2).collect();
    heaviest_plan(&supply, &demand, &edges)
}
