//! Throughput of each prefix of layers: what MPI traffic gets from the LMC layers.
//!
//! MPI stacks (UCX, Open MPI, MVAPICH2) send small messages on layer 0 (the base LID) and split
//! bulk transfers evenly over the first K layers (K = 2 by UCX's default, 4 or 8 when
//! configured). So a routing is judged per prefix K: host traffic is split 1/K over the
//! paths to the destination's LIDs base + 0 .. base + K − 1, each path starting at the source
//! host's switch and following the forwarding tables (any engine's: the core's own or tables
//! read back from OpenSM, walked by [`crate::routing::walk`] as in the rest of the analyser).
//!
//! Model: fluid, every host active, each host injects at most 1 (its link rate); each directed
//! switch-to-switch cable carries 1, parallel cables separately, as the analyser's link load
//! and MAT do (link rates are not weighed there either). A pattern's throughput is
//! min(1, 1 / heaviest cable load). Per prefix K ∈ {1, 2, 4, …} ≤ layers (and the layer count
//! itself when it is not a power of two):
//!
//! * **all-to-all**: every host sends 1/(N − 1) to every other host;
//! * **random permutations**: seeded host permutations, mean and minimum over the samples (a
//!   host sending to a host of its own switch crosses no cable);
//! * **adversarial**: a seeded permutation of the switches with hosts in which every switch is
//!   matched to a switch at its largest distance (Kuhn–Munkres on "is farthest" weights, rows
//!   and columns shuffled), host i of a switch sending to host i of its partner; mean over seeds;
//! * **worst permutation**, exact ([`worst`]): the heaviest load any host permutation can put on
//!   a cable;
//! * the **balance** of the summed routes of layers 0..K − 1 (max / mean), the cheap figure of
//!   [`balance`] that needs no solver.

pub mod balance;
mod paths;
#[cfg(test)]
mod tests;
mod transport;
mod worst;

use std::time::Instant;

use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;
use serde::{Deserialize, Serialize};

use super::context::Context;
use crate::rng::Rng;
use crate::topology::UNREACHABLE;
use paths::HostPaths;

pub use balance::{PrefixBalance, layer_loads, prefix_balance, table_layer_loads};

/// What the prefix throughput samples and solves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixOptions {
    /// Random host permutations per prefix.
    pub samples: usize,
    /// Seed of the random permutations and of the adversarial matchings.
    pub seed: u64,
    /// Adversarial matchings (seeds) per prefix.
    pub adversarial_seeds: usize,
    /// Solve the exact worst permutation (the costly part).
    pub worst: bool,
}

impl Default for PrefixOptions {
    fn default() -> Self {
        Self {
            samples: 20,
            seed: 1,
            adversarial_seeds: 5,
            worst: true,
        }
    }
}

/// The figures of one prefix, in units of one host's link rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixThroughput {
    /// K: traffic split evenly over layers 0..K.
    pub layers: usize,
    /// Uniform all-to-all.
    pub all_to_all: f64,
    /// Mean over the random host permutations.
    pub random_mean: f64,
    /// Least over the random host permutations.
    pub random_min: f64,
    /// Mean over the adversarial farthest-switch permutations.
    pub adversarial_mean: f64,
    /// The worst host permutation (exact), when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<f64>,
    /// Cables whose assignment problem the worst permutation solved (the rest were bounded
    /// below the answer), and the cables crossed by a path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_cables_solved: Option<(usize, usize)>,
    /// Seconds the worst permutation took (in the text report only: the JSON report stays the
    /// same from run to run).
    #[serde(skip)]
    pub worst_seconds: Option<f64>,
    /// Max / mean of the summed routes of the prefix's layers.
    pub balance: f64,
}

/// The prefix throughput of a routing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixReport {
    /// Hosts (endpoint ports cabled to switches).
    pub hosts: usize,
    /// Random permutations per prefix.
    pub samples: usize,
    /// Their seed.
    pub seed: u64,
    /// Adversarial matchings per prefix.
    pub adversarial_seeds: usize,
    /// Of the adversarial permutations' switches, the fraction matched with a switch at their
    /// largest distance (1 when a perfect farthest matching exists).
    pub adversarial_farthest: f64,
    /// One entry per prefix, K ascending.
    pub prefixes: Vec<PrefixThroughput>,
}

/// The prefixes judged for `layers` layers: powers of two up to it, and `layers` itself.
pub fn prefixes(layers: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = (0..usize::BITS)
        .map(|b| 1usize << b)
        .take_while(|&k| k <= layers)
        .collect();
    if layers > 0 && !layers.is_power_of_two() {
        ks.push(layers);
    }
    ks
}

/// Computes the prefix throughput (see the module documentation).
///
/// # Complexity
/// Walks: O(hosts · layers · switches). All-to-all: O(switches · hosts · layers · hops).
/// Random and adversarial: O(hosts · K · hops) per permutation. Worst: see [`worst`].
pub(crate) fn analyze(ctx: &Context<'_>, options: &PrefixOptions) -> PrefixReport {
    let paths = HostPaths::new(ctx, ctx.layers);
    let hosts = paths.hosts();
    let cables = ctx.net.cables.len();
    let counted: Vec<usize> = (0..cables).filter(|&c| !ctx.is_loopback(c)).collect();
    // Routes per layer and cable, weighted by the sending switch's hosts.
    let per_layer: Vec<Vec<u64>> = (0..ctx.layers)
        .map(|layer| {
            let mut load = vec![0u64; cables];
            for s in (0..paths.n).filter(|&s| paths.hosts_at[s] > 0) {
                for h in 0..hosts {
                    for c in paths.cables(s, h, layer) {
                        load[c as usize] += u64::from(paths.hosts_at[s]);
                    }
                }
            }
            load
        })
        .collect();
    let counted_loads: Vec<Vec<u64>> = per_layer
        .iter()
        .map(|l| counted.iter().map(|&c| l[c]).collect())
        .collect();
    let ks = prefixes(ctx.layers);
    let balances = prefix_balance(&counted_loads, &ks);
    let random: Vec<Vec<usize>> = {
        let mut rng = Rng::new(options.seed);
        (0..options.samples)
            .map(|_| {
                let mut p: Vec<usize> = (0..hosts).collect();
                rng.shuffle(&mut p);
                p
            })
            .collect()
    };
    let (adversarial, adversarial_farthest) = adversarial_permutations(ctx, &paths, options);
    let mut load = vec![0u64; cables];
    let mut prefixes = Vec::new();
    for (&k, balance) in ks.iter().zip(&balances) {
        let heaviest_all = counted_loads
            .iter()
            .take(k)
            .fold(vec![0u64; counted.len()], |mut sum, l| {
                sum.iter_mut().zip(l).for_each(|(a, b)| *a += b);
                sum
            })
            .into_iter()
            .max()
            .unwrap_or(0);
        let all_to_all = throughput(k as u64 * hosts.saturating_sub(1) as u64, heaviest_all);
        let mut heaviest_seen = 0;
        let mut judge = |perm: &[usize]| {
            let heaviest = permutation_load(&paths, perm, k, &mut load);
            heaviest_seen = heaviest_seen.max(heaviest);
            throughput(k as u64, heaviest)
        };
        let random_values: Vec<f64> = random.iter().map(|p| judge(p)).collect();
        let adversarial_values: Vec<f64> = adversarial.iter().map(|p| judge(p)).collect();
        let mut entry = PrefixThroughput {
            layers: k,
            all_to_all,
            random_mean: mean(&random_values),
            random_min: random_values.iter().copied().fold(f64::NAN, f64::min),
            adversarial_mean: mean(&adversarial_values),
            worst: None,
            worst_cables_solved: None,
            worst_seconds: None,
            balance: balance.max_over_mean,
        };
        if options.worst {
            let started = Instant::now();
            let w = worst::worst(&paths, k, heaviest_seen);
            entry.worst = Some(throughput(k as u64, w.load));
            entry.worst_cables_solved = Some((w.solved, w.cables));
            entry.worst_seconds = Some(started.elapsed().as_secs_f64());
        }
        prefixes.push(entry);
    }
    PrefixReport {
        hosts,
        samples: options.samples,
        seed: options.seed,
        adversarial_seeds: options.adversarial_seeds,
        adversarial_farthest,
        prefixes,
    }
}

/// min(1, capacity / load): a load of `load` where `capacity` is one host link's worth.
fn throughput(capacity: u64, load: u64) -> f64 {
    if load <= capacity {
        1.0
    } else {
        capacity as f64 / load as f64
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// A host that sends nothing (an adversarial pattern's switch with more hosts than its
/// partner's).
const SILENT: usize = usize::MAX;

/// The heaviest cable load (layer paths) of host `i` sending to `perm[i]` (unless [`SILENT`])
/// over layers 0..k.
fn permutation_load(paths: &HostPaths<'_, '_>, perm: &[usize], k: usize, load: &mut [u64]) -> u64 {
    load.fill(0);
    for (i, &j) in perm.iter().enumerate().filter(|(_, j)| **j != SILENT) {
        let s = paths.switch_of[i] as usize;
        for layer in 0..k {
            for c in paths.cables(s, j, layer) {
                load[c as usize] += 1;
            }
        }
    }
    load.iter().copied().max().unwrap_or(0)
}

/// The adversarial host permutations, one per seed, and the fraction of switches matched with
/// a farthest switch.
fn adversarial_permutations(
    ctx: &Context<'_>,
    paths: &HostPaths<'_, '_>,
    options: &PrefixOptions,
) -> (Vec<Vec<usize>>, f64) {
    let with_hosts: Vec<usize> = (0..paths.n).filter(|&s| paths.hosts_at[s] > 0).collect();
    let m = with_hosts.len();
    let mut first_host = vec![0usize; paths.n + 1];
    for s in 0..paths.n {
        first_host[s + 1] = first_host[s] + paths.hosts_at[s] as usize;
    }
    // farthest[i * m + j]: switch j is at switch i's largest distance.
    let mut farthest = vec![0i64; m * m];
    for (i, &s) in with_hosts.iter().enumerate() {
        let dist = ctx.graph.distances_from(s);
        let d = |j: usize| match dist[with_hosts[j]] {
            UNREACHABLE => 0,
            v => v,
        };
        let largest = (0..m).map(d).max().unwrap_or(0);
        for j in (0..m).filter(|&j| largest > 0 && d(j) == largest) {
            farthest[i * m + j] = 1;
        }
    }
    let mut rng = Rng::new(options.seed ^ 0xAD5E_u64.rotate_left(48));
    let mut matched = 0usize;
    let mut perms = Vec::new();
    for _ in 0..options.adversarial_seeds {
        let (mut rows, mut columns): (Vec<usize>, Vec<usize>) =
            ((0..m).collect(), (0..m).collect());
        rng.shuffle(&mut rows);
        rng.shuffle(&mut columns);
        let (total, assigned) = if m == 0 {
            (0, Vec::new())
        } else {
            kuhn_munkres(&Matrix::from_fn(m, m, |(a, b)| {
                farthest[rows[a] * m + columns[b]]
            }))
        };
        matched += total as usize;
        let mut perm = vec![SILENT; paths.hosts()];
        for (a, &b) in assigned.iter().enumerate() {
            let (s, t) = (with_hosts[rows[a]], with_hosts[columns[b]]);
            let pairs = paths.hosts_at[s].min(paths.hosts_at[t]) as usize;
            for i in 0..pairs {
                perm[first_host[s] + i] = first_host[t] + i;
            }
        }
        perms.push(perm);
    }
    let fraction = if m == 0 || perms.is_empty() {
        1.0
    } else {
        matched as f64 / (m * perms.len()) as f64
    };
    (perms, fraction)
}
