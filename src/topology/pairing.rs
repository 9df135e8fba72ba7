//! The pairing model both random constructions ([`super::random_regular`] and
//! [`super::shortcut`]) draw their cables from: every vertex gets k stubs, the stubs are
//! shuffled and matched two by two, and a matching with a self-loop, a parallel cable or a
//! forbidden cable is repaired by swapping the ends of two cables. A matching the repair cannot
//! fix, or one the caller refuses (say, a disconnected one), is drawn again from the next
//! derived seed. Deterministic per seed.

use std::collections::{HashMap, HashSet};

use crate::rng::Rng;

/// A cable as a pair of vertex indexes, in matching order.
pub(super) type Pair = (u32, u32);

/// A random k-regular simple graph on n vertices without the `forbidden` cables.
pub(super) struct Pairing<'a> {
    /// n.
    pub vertices: u32,
    /// k; n·k must be even.
    pub degree: u32,
    /// Cables the graph must not contain, as (smaller, larger) index.
    pub forbidden: &'a HashSet<Pair>,
    /// How a bad matching is repaired.
    pub repair: Repair,
}

/// How a matching with bad cables is repaired.
///
/// Two walks, because a random fabric's cables are fixed by its seed (and so are its LIDs,
/// routes and cabling plan): `random:` fabrics have always been repaired by [`Repair::FirstBad`]
/// and `shortcut:` fabrics by [`Repair::Sweep`]; one walk for both would rewire every fabric of
/// the other kind already built from a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Repair {
    /// Up to 100 swaps per cable: swap the second end of the first bad cable with that of a
    /// random cable.
    FirstBad,
    /// Up to 200 swaps per cable and 1000 more: walk the cables once, swap a bad cable's ends
    /// with a random cable's (which ends, at random), and step back to the other cable when
    /// the swap made it bad.
    Sweep,
}

impl Pairing<'_> {
    /// The cables of the first repaired matching that `accept` takes, drawn from `seed` and,
    /// while none is, from derived seeds.
    ///
    /// Loops forever when no matching can be repaired and accepted: the constructions validate
    /// their parameters so that one is found after a few draws.
    pub fn draw(&self, seed: u64, accept: impl Fn(&[Pair]) -> bool) -> Vec<Pair> {
        let mut attempt = seed;
        loop {
            let mut rng = Rng::new(attempt);
            let mut stubs: Vec<u32> = (0..self.vertices)
                .flat_map(|v| std::iter::repeat_n(v, self.degree as usize))
                .collect();
            rng.shuffle(&mut stubs);
            let mut pairs: Vec<Pair> = stubs.chunks(2).map(|c| (c[0], c[1])).collect();
            let mut cables = Cables::new(&pairs, self.forbidden);
            let repaired = match self.repair {
                Repair::FirstBad => cables.repair_first_bad(&mut pairs, &mut rng),
                Repair::Sweep => cables.repair_by_sweep(&mut pairs, &mut rng),
            };
            if repaired && accept(&pairs) {
                return pairs;
            }
            attempt = attempt.wrapping_add(0x9E37_79B9);
        }
    }
}

/// The cable (smaller, larger index) a pair stands for.
fn cable((a, b): Pair) -> Pair {
    (a.min(b), a.max(b))
}

/// What makes a cable bad: how often each cable occurs in the matching, and the forbidden ones.
struct Cables<'a> {
    count: HashMap<Pair, u32>,
    forbidden: &'a HashSet<Pair>,
}

impl<'a> Cables<'a> {
    fn new(pairs: &[Pair], forbidden: &'a HashSet<Pair>) -> Self {
        let mut count = HashMap::new();
        for &p in pairs {
            *count.entry(cable(p)).or_default() += 1;
        }
        Self { count, forbidden }
    }

    /// A self-loop, a cable that occurs more than once, or a forbidden one.
    fn is_bad(&self, p: Pair) -> bool {
        p.0 == p.1 || self.forbidden.contains(&cable(p)) || self.count[&cable(p)] > 1
    }

    /// Replaces `pairs[i]` and `pairs[j]` by `new_i` and `new_j`.
    fn replace(
        &mut self,
        pairs: &mut [Pair],
        (i, new_i): (usize, Pair),
        (j, new_j): (usize, Pair),
    ) {
        for old in [pairs[i], pairs[j]] {
            *self.count.get_mut(&cable(old)).expect("counted") -= 1;
        }
        for new in [new_i, new_j] {
            *self.count.entry(cable(new)).or_default() += 1;
        }
        (pairs[i], pairs[j]) = (new_i, new_j);
    }

    /// [`Repair::FirstBad`]; false if cables are still bad after the last swap.
    fn repair_first_bad(&mut self, pairs: &mut [Pair], rng: &mut Rng) -> bool {
        for _ in 0..100 * pairs.len() {
            let Some(i) = (0..pairs.len()).find(|&i| self.is_bad(pairs[i])) else {
                return true;
            };
            let j = rng.below(pairs.len() as u64) as usize;
            if i != j {
                let ((a, b), (c, d)) = (pairs[i], pairs[j]);
                self.replace(pairs, (i, (a, d)), (j, (c, b)));
            }
        }
        false
    }

    /// [`Repair::Sweep`]; false if the swaps run out first.
    fn repair_by_sweep(&mut self, pairs: &mut [Pair], rng: &mut Rng) -> bool {
        let mut budget = 200 * pairs.len() + 1000;
        let mut i = 0;
        while i < pairs.len() {
            if !self.is_bad(pairs[i]) {
                i += 1;
                continue;
            }
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let j = rng.below(pairs.len() as u64) as usize;
            if i == j {
                continue;
            }
            let ((a, b), (c, d)) = (pairs[i], pairs[j]);
            let (new_i, new_j) = if rng.below(2) == 0 {
                ((a, d), (c, b))
            } else {
                ((a, c), (b, d))
            };
            self.replace(pairs, (i, new_i), (j, new_j));
            // A swap may break an earlier good cable (j < i): start over from there.
            if j < i && self.is_bad(pairs[j]) {
                i = j;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vertex's degree and whether the graph is simple and avoids `forbidden`.
    fn check(n: u32, k: u32, forbidden: &HashSet<Pair>, pairs: &[Pair]) {
        let mut degree = vec![0; n as usize];
        let mut seen = HashSet::new();
        for &p in pairs {
            assert_ne!(p.0, p.1, "n={n} k={k}: self-loop");
            assert!(seen.insert(cable(p)), "n={n} k={k}: parallel cable {p:?}");
            assert!(!forbidden.contains(&cable(p)), "n={n} k={k}: {p:?}");
            degree[p.0 as usize] += 1;
            degree[p.1 as usize] += 1;
        }
        assert!(degree.iter().all(|&d| d == k), "n={n} k={k}: {degree:?}");
    }

    #[test]
    fn both_repairs_give_simple_regular_graphs_without_the_forbidden_cables() {
        for repair in [Repair::FirstBad, Repair::Sweep] {
            for (n, k) in [(6, 2), (10, 3), (16, 4), (33, 6), (64, 5), (64, 9)] {
                let ring: HashSet<Pair> = (0..n).map(|i| cable((i, (i + 1) % n))).collect();
                for forbidden in [HashSet::new(), ring] {
                    for seed in 0..4 {
                        let pairing = Pairing {
                            vertices: n,
                            degree: k,
                            forbidden: &forbidden,
                            repair,
                        };
                        let pairs = pairing.draw(seed, |_| true);
                        check(n, k, &forbidden, &pairs);
                        assert_eq!(pairs, pairing.draw(seed, |_| true), "deterministic");
                    }
                }
            }
        }
    }

    #[test]
    fn a_refused_matching_is_drawn_again() {
        let none = HashSet::new();
        let pairing = Pairing {
            vertices: 12,
            degree: 3,
            forbidden: &none,
            repair: Repair::FirstBad,
        };
        let first = pairing.draw(1, |_| true);
        let other = pairing.draw(1, |pairs| pairs != first.as_slice());
        assert_ne!(first, other);
        check(12, 3, &none, &other);
    }
}
