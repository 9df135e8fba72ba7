//! The point-to-point messages of three classic collective algorithms, step by step, over ranks
//! 0..n: what a rank placement is judged by. The algorithms are the ones MPI libraries (MPICH,
//! Open MPI's tuned component) use for short messages, in the same order of steps:
//!
//! * **broadcast**, binomial tree from rank 0: in the step with distance d (d = 2^⌈log2 n⌉ / 2
//!   down to 1), every rank r that is a multiple of 2d sends to r + d, if that exists.
//! * **allreduce**, recursive doubling. For n not a power of two (p = the largest power of two
//!   below n, rem = n − p) the excess is folded first: each even rank r < 2·rem sends its data
//!   to r + 1 and sits out; the p remaining ranks exchange with partners at distance 1, 2, 4, …
//!   (both directions: two messages per pair); finally each r + 1 sends the result back to r.
//! * **all-to-all**, Bruck: in step k (2^k < n) every rank i sends to (i + 2^k) mod n the blocks
//!   whose remaining distance has bit k set. (The thesis's figure draws the mirror image,
//!   i − 2^k; on symmetric routes the hop count is the same.)

use std::fmt;
use std::str::FromStr;

/// A collective operation with the algorithm modelled for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    /// Binomial-tree broadcast from rank 0.
    Broadcast,
    /// Recursive-doubling allreduce (folding the excess ranks for non-powers of two).
    Allreduce,
    /// Bruck's all-to-all.
    Alltoall,
}

impl Collective {
    /// All three, in the order tables list them.
    pub const ALL: [Collective; 3] = [
        Collective::Broadcast,
        Collective::Allreduce,
        Collective::Alltoall,
    ];

    /// The steps of the collective over ranks `0..ranks`.
    pub fn schedule(self, ranks: usize) -> Schedule {
        let steps = match self {
            Collective::Broadcast => binomial_broadcast(ranks),
            Collective::Allreduce => recursive_doubling(ranks),
            Collective::Alltoall => bruck(ranks),
        };
        Schedule {
            collective: self,
            ranks,
            steps,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Broadcast => "bcast",
            Collective::Allreduce => "allreduce",
            Collective::Alltoall => "alltoall",
        }
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Collective {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bcast" | "broadcast" => Ok(Collective::Broadcast),
            "allreduce" => Ok(Collective::Allreduce),
            "alltoall" => Ok(Collective::Alltoall),
            other => Err(format!(
                "unknown collective {other:?} (bcast, allreduce or alltoall)"
            )),
        }
    }
}

/// What a receiver does with a message's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Takes it (broadcast, the allreduce's final copy back, all-to-all blocks).
    Take,
    /// Reduces it with its own (allreduce fold and exchange steps).
    Reduce,
}

/// One step: messages sent at the same time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// (sender rank, receiver rank).
    pub messages: Vec<(u32, u32)>,
    /// What the receivers do with the data.
    pub combine: Combine,
}

/// A collective's messages over a number of ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The collective.
    pub collective: Collective,
    /// Number of ranks.
    pub ranks: usize,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Schedule {
    /// Total number of messages.
    pub fn message_count(&self) -> usize {
        self.steps.iter().map(|s| s.messages.len()).sum()
    }
}

fn binomial_broadcast(n: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut d = n.next_power_of_two() / 2;
    while d >= 1 {
        let messages = (0..n)
            .step_by(2 * d)
            .filter(|r| r + d < n)
            .map(|r| (r as u32, (r + d) as u32))
            .collect();
        steps.push(Step {
            messages,
            combine: Combine::Take,
        });
        d /= 2;
    }
    steps
}

fn recursive_doubling(n: usize) -> Vec<Step> {
    if n < 2 {
        return Vec::new();
    }
    let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let rem = n - pof2;
    // The rank of the participant with new rank `nr` (folded ranks sit out).
    let real = |nr: usize| if nr < rem { 2 * nr + 1 } else { nr + rem } as u32;
    let mut steps = Vec::new();
    if rem > 0 {
        steps.push(Step {
            messages: (0..rem).map(|i| (2 * i as u32, 2 * i as u32 + 1)).collect(),
            combine: Combine::Reduce,
        });
    }
    let mut mask = 1;
    while mask < pof2 {
        steps.push(Step {
            messages: (0..pof2).map(|nr| (real(nr), real(nr ^ mask))).collect(),
            combine: Combine::Reduce,
        });
        mask *= 2;
    }
    if rem > 0 {
        steps.push(Step {
            messages: (0..rem).map(|i| (2 * i as u32 + 1, 2 * i as u32)).collect(),
            combine: Combine::Take,
        });
    }
    steps
}

fn bruck(n: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut d = 1;
    while d < n {
        steps.push(Step {
            messages: (0..n).map(|i| (i as u32, ((i + d) % n) as u32)).collect(),
            combine: Combine::Take,
        });
        d *= 2;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps_needed(n: usize) -> usize {
        n.next_power_of_two().trailing_zeros() as usize
    }

    #[test]
    fn broadcast_reaches_every_rank_exactly_once_from_ranks_that_have_it() {
        for n in 1..=300 {
            let schedule = Collective::Broadcast.schedule(n);
            assert_eq!(schedule.steps.len(), steps_needed(n), "n={n}");
            let mut has = vec![false; n];
            has[0] = true;
            for step in &schedule.steps {
                let before = has.clone();
                for &(from, to) in &step.messages {
                    assert!(
                        before[from as usize],
                        "n={n}: {from} sends before it has the data"
                    );
                    assert!(!has[to as usize], "n={n}: {to} receives twice");
                    has[to as usize] = true;
                }
            }
            assert!(has.iter().all(|&h| h), "n={n}: not every rank reached");
            assert_eq!(schedule.message_count(), n - 1);
        }
    }

    #[test]
    fn allreduce_exchanges_are_symmetric_and_every_rank_ends_with_every_contribution_once() {
        for n in 1..=130usize {
            let schedule = Collective::Allreduce.schedule(n);
            let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
            // data[r][c]: how often rank r's value includes rank c's contribution.
            let mut data: Vec<Vec<u32>> = (0..n)
                .map(|r| (0..n).map(|c| u32::from(r == c)).collect())
                .collect();
            for step in &schedule.steps {
                let before = data.clone();
                let mut received = vec![0; n];
                for &(from, to) in &step.messages {
                    received[to as usize] += 1;
                    let sent = &before[from as usize];
                    match step.combine {
                        Combine::Reduce => {
                            for (d, s) in data[to as usize].iter_mut().zip(sent) {
                                *d += s;
                            }
                        }
                        Combine::Take => data[to as usize].clone_from(sent),
                    }
                }
                assert!(
                    received.iter().all(|&r| r <= 1),
                    "n={n}: a rank receives twice in a step"
                );
                // Exchange steps (the p participants; fold and unfold have rem < p messages)
                // go both ways.
                if step.messages.len() == pof2 {
                    let pairs: std::collections::HashSet<(u32, u32)> =
                        step.messages.iter().copied().collect();
                    for &(a, b) in &step.messages {
                        assert!(
                            pairs.contains(&(b, a)),
                            "n={n}: {a} -> {b} without the reverse"
                        );
                    }
                }
            }
            for (r, row) in data.iter().enumerate() {
                assert!(
                    row.iter().all(|&c| c == 1),
                    "n={n}: rank {r} ends with {row:?}"
                );
            }
            let extra = if n > pof2 { 2 } else { 0 };
            assert_eq!(
                schedule.steps.len(),
                pof2.trailing_zeros() as usize + extra,
                "n={n}"
            );
        }
    }

    #[test]
    fn bruck_delivers_every_block_to_its_destination() {
        for n in 1..=70 {
            let schedule = Collective::Alltoall.schedule(n);
            assert_eq!(schedule.steps.len(), steps_needed(n), "n={n}");
            // holder[s][d]: who holds the block rank s has for rank d.
            let mut holder: Vec<Vec<usize>> = (0..n).map(|s| vec![s; n]).collect();
            for (k, step) in schedule.steps.iter().enumerate() {
                let mut senders = vec![None; n];
                for &(from, to) in &step.messages {
                    assert!(
                        senders[from as usize].is_none(),
                        "n={n}: {from} sends twice"
                    );
                    senders[from as usize] = Some(to as usize);
                }
                for (s, row) in holder.iter_mut().enumerate() {
                    for (d, h) in row.iter_mut().enumerate() {
                        if ((d + n - *h) % n) >> k & 1 == 1 {
                            let to = senders[*h].unwrap_or_else(|| {
                                panic!("n={n} step {k}: {h} must send block {s}->{d}")
                            });
                            assert_eq!(to, (*h + (1 << k)) % n);
                            *h = to;
                        }
                    }
                }
            }
            for (s, row) in holder.iter().enumerate() {
                for (d, &h) in row.iter().enumerate() {
                    assert_eq!(h, d, "n={n}: block {s}->{d} not delivered");
                }
            }
        }
    }
}
