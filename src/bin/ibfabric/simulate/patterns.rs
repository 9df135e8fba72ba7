//! `--pattern`: what the ranks do, and the phase table of the point-to-point patterns.

use std::collections::{HashMap, VecDeque};

use anyhow::bail;
use clap::ValueEnum;
use ibfabric::collectives::{self, Schedule};
use ibfabric::simulation::traffic::{self, PhaseTable};
use ibfabric::topology::{PortRef, SwitchGraph};

use crate::simgrid::Routing;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Pattern {
    /// MPI_Alltoall (SMPI's default algorithm selection).
    Alltoall,
    /// MPI_Allreduce of the message (as doubles).
    Allreduce,
    /// MPI_Bcast from rank 0.
    Bcast,
    /// One phase: a seeded random permutation of the ranks.
    Permutation,
    /// One phase: each switch's ranks send to the ranks of a farthest switch.
    Adversarial,
    /// One phase: rank r sends to rank r + N/2 (mod N, N ranks).
    HalfShift,
    /// The shift all-to-all in phases: phase p, rank r sends to r + p.
    Shift,
    /// The phases of --schedule.
    Schedule,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Self::Alltoall => "alltoall",
            Self::Allreduce => "allreduce",
            Self::Bcast => "bcast",
            Self::Permutation => "permutation",
            Self::Adversarial => "adversarial",
            Self::HalfShift => "half-shift",
            Self::Shift => "shift",
            Self::Schedule => "schedule",
        }
    }
}

/// The phase table of a phase pattern over `ranks`.
pub fn phases(
    pattern: Pattern,
    routing: &Routing,
    ranks: &[PortRef],
    schedule: Option<&Schedule>,
    seed: u64,
) -> anyhow::Result<Option<PhaseTable>> {
    Ok(match pattern {
        Pattern::Alltoall | Pattern::Allreduce | Pattern::Bcast => None,
        Pattern::Permutation => Some(traffic::random_permutation(ranks.len(), seed)),
        Pattern::HalfShift => Some(traffic::half_shift(ranks.len())),
        Pattern::Shift => {
            let names = (0..ranks.len()).map(|r| r.to_string()).collect();
            Some(traffic::from_schedule(&collectives::shift(names)))
        }
        Pattern::Schedule => match schedule {
            Some(s) => Some(traffic::from_schedule(s)),
            None => bail!("--pattern schedule needs --schedule"),
        },
        Pattern::Adversarial => {
            let fabric = &routing.fabric;
            let graph = SwitchGraph::new(fabric);
            let mut dense = vec![u32::MAX; fabric.nodes().len()];
            for s in 0..graph.len() {
                dense[graph.node(s).index()] = s as u32;
            }
            let switch_of: Vec<u32> = ranks
                .iter()
                .map(|&p| fabric.peer(p).map_or(u32::MAX, |q| dense[q.node.index()]))
                .collect();
            let distance = distances_from(&graph, &switch_of);
            Some(traffic::adversarial(&switch_of, |a, b| {
                distance
                    .get(&a)
                    .map_or(0, |d| d.get(b as usize).copied().unwrap_or(0))
            }))
        }
    })
}

/// Hop distances from each switch that holds a rank (breadth-first).
fn distances_from(graph: &SwitchGraph, switches: &[u32]) -> HashMap<u32, Vec<u32>> {
    let mut out = HashMap::new();
    for &s in switches {
        if s == u32::MAX || out.contains_key(&s) {
            continue;
        }
        let mut d = vec![u32::MAX; graph.len()];
        d[s as usize] = 0;
        let mut queue = VecDeque::from([s as usize]);
        while let Some(u) = queue.pop_front() {
            for &v in graph.neighbours(u) {
                if d[v as usize] == u32::MAX {
                    d[v as usize] = d[u] + 1;
                    queue.push_back(v as usize);
                }
            }
        }
        out.insert(s, d);
    }
    out
}
