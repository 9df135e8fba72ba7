//! The traffic the benchmark runs as phases: in each phase every rank sends one message to the
//! rank the table names (or to none), receives from every rank that names it, and waits for
//! both before the next phase — the way the schedules' phases are meant to run.

use crate::collectives::Schedule;
use crate::rng::Rng;

/// "Sends nothing in this phase".
pub const IDLE: u32 = u32::MAX;

/// Phases of point-to-point messages over ranks `0..ranks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTable {
    /// Number of ranks.
    pub ranks: usize,
    /// `phases[p][r]`: the rank r sends to in phase p, or [`IDLE`].
    pub phases: Vec<Vec<u32>>,
}

impl PhaseTable {
    /// The most messages one rank sends to other ranks over all phases (what bounds its time).
    pub fn max_messages_sent(&self) -> usize {
        (0..self.ranks)
            .map(|r| {
                self.phases
                    .iter()
                    .filter(|p| p[r] != IDLE && p[r] as usize != r)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }
}

/// One phase: a uniformly random permutation of the ranks (seeded). A rank the permutation
/// fixes sends to itself (a local copy).
pub fn random_permutation(ranks: usize, seed: u64) -> PhaseTable {
    let mut destination: Vec<u32> = (0..ranks as u32).collect();
    Rng::new(seed).shuffle(&mut destination);
    PhaseTable {
        ranks,
        phases: vec![destination],
    }
}

/// One phase: rank r sends to rank (r + ⌊ranks / 2⌋) mod ranks. With ranks in node order a
/// switch's ranks are consecutive, so every rank of a switch sends to the ranks of one switch
/// half the fabric away in node order: a permutation that, unlike a random one, moves every
/// switch's whole load to one other switch, and, unlike [`adversarial`], does not pick that
/// switch by distance. With an odd number of ranks the middle pairs wrap around unevenly; one
/// rank sends to itself only when there is one rank.
pub fn half_shift(ranks: usize) -> PhaseTable {
    let by = ranks / 2;
    PhaseTable {
        ranks,
        phases: vec![(0..ranks).map(|r| ((r + by) % ranks) as u32).collect()],
    }
}

/// One phase that loads minimal routes as badly as a switch-level pattern can: the switches
/// of the ranks (`switch_of[r]`, any numbering) are paired greedily, each with a still
/// unpaired switch at the largest `distance` (ties: the lowest number), and the k-th rank of
/// a switch sends to the k-th rank (cyclically) of its partner. Every rank of a switch then
/// leaves over the same minimal path when that path is unique — the worst case of Slim Fly's
/// minimal routing. When no unpaired switch is left, the farthest of all is taken.
pub fn adversarial(switch_of: &[u32], distance: impl Fn(u32, u32) -> u32) -> PhaseTable {
    let mut switches: Vec<u32> = switch_of.to_vec();
    switches.sort_unstable();
    switches.dedup();
    let ranks_on = |s: u32| -> Vec<u32> {
        (0..switch_of.len() as u32)
            .filter(|&r| switch_of[r as usize] == s)
            .collect()
    };
    let mut taken = vec![false; switches.len()];
    let mut destination = vec![IDLE; switch_of.len()];
    for &s in &switches {
        let farthest = |free_only: bool| {
            switches
                .iter()
                .enumerate()
                .filter(|&(k, &t)| t != s && (!free_only || !taken[k]))
                .max_by_key(|&(k, &t)| (distance(s, t), std::cmp::Reverse(k)))
                .map(|(k, _)| k)
        };
        let Some(k) = farthest(true).or_else(|| farthest(false)) else {
            continue;
        };
        taken[k] = true;
        let (from, to) = (ranks_on(s), ranks_on(switches[k]));
        for (i, &r) in from.iter().enumerate() {
            destination[r as usize] = to[i % to.len()];
        }
    }
    PhaseTable {
        ranks: switch_of.len(),
        phases: vec![destination],
    }
}

/// `table` over `copies` copies of its ranks (rank k · ranks + r is copy k of rank r): in every
/// phase copy k of a rank sends to copy k of its destination, so each message becomes
/// `copies` parallel parts (see [`LayerPolicy::Parallel`](super::LayerPolicy::Parallel)).
pub fn split_over_copies(table: &PhaseTable, copies: usize) -> PhaseTable {
    let n = table.ranks;
    PhaseTable {
        ranks: n * copies,
        phases: table
            .phases
            .iter()
            .map(|phase| {
                (0..copies)
                    .flat_map(|k| {
                        phase
                            .iter()
                            .map(move |&d| if d == IDLE { IDLE } else { d + (k * n) as u32 })
                    })
                    .collect()
            })
            .collect(),
    }
}

/// The phases of an all-to-all schedule, in order.
pub fn from_schedule(schedule: &Schedule) -> PhaseTable {
    PhaseTable {
        ranks: schedule.ranks.len(),
        phases: schedule
            .phases
            .iter()
            .map(|p| p.destination.clone())
            .collect(),
    }
}

/// The layer of every ordered rank pair (`layers[i * n + j]`) as the schedule's LID offsets
/// give it; 0 for pairs it does not name.
pub fn schedule_pair_layers(schedule: &Schedule) -> Vec<u16> {
    let n = schedule.ranks.len();
    let mut layers = vec![0u16; n * n];
    for phase in &schedule.phases {
        for (r, &d) in phase.destination.iter().enumerate() {
            if let Some(slot) = layers.get_mut(r * n + d as usize) {
                *slot = u16::from(phase.offset(r));
            }
        }
    }
    layers
}
