//! Seeded random regular switch graphs: the irregular-topology test case (and the "random"
//! baseline of low-diameter network studies, such as Jellyfish).
//!
//! n switches of network degree k (n·k even, k < n), built by the pairing model
//! ([`super::pairing`]): every switch gets k stubs, stubs are matched at random, and a matching
//! with a self-loop or a parallel cable is repaired by random swaps of two cables' ends. The
//! result is connected (retried with the next seed otherwise); dense graphs are drawn as the
//! complement of a sparse one. Switch i is named `rr<i>`, its hosts `rr<i>-h<j>`; network ports
//! 1..=k in matching order, hosts on ports k + 1 ..= k + hosts. No racks.

use std::collections::HashSet;

use super::pairing::{Pairing, Repair};
use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// A seeded random k-regular graph with hosts.
#[derive(Debug, Clone)]
pub struct RandomRegular {
    switches: u32,
    degree: u32,
    hosts_per_switch: u32,
    seed: u64,
}

impl RandomRegular {
    /// n switches of degree k with `hosts` hosts each.
    ///
    /// # Errors
    /// n·k odd, k ≥ n, k = 0, k = 1 with more than two switches (never connected), or more
    /// than 254 ports per switch.
    pub fn new(
        switches: u32,
        degree: u32,
        hosts_per_switch: u32,
        seed: u64,
    ) -> Result<Self, TopologyError> {
        let problem = if degree == 0 || degree >= switches {
            Some(format!(
                "degree {degree} must be between 1 and switches − 1 = {}",
                switches.saturating_sub(1)
            ))
        } else if degree == 1 && switches > 2 {
            Some(format!(
                "degree 1 pairs the switches off, so {switches} switches cannot be connected: \
                 use degree 2 or more"
            ))
        } else if switches * degree % 2 == 1 {
            Some(format!(
                "switches × degree = {} must be even (every cable has two ends)",
                switches * degree
            ))
        } else if degree + hosts_per_switch > 254 {
            Some(format!(
                "{} ports per switch needed (at most 254)",
                degree + hosts_per_switch
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(TopologyError::plain("random", p)),
            None => Ok(Self {
                switches,
                degree,
                hosts_per_switch,
                seed,
            }),
        }
    }

    /// The cables as pairs of switch indexes: a simple connected k-regular graph.
    ///
    /// Dense graphs (k > (n − 1) / 2) are drawn as the complement of a sparse random
    /// (n − 1 − k)-regular graph: the pairing model's repairs rarely find a simple matching
    /// when most pairs must be cabled, and the complement of a simple regular graph is simple
    /// and regular.
    pub fn cables(&self) -> Vec<(u32, u32)> {
        let n = self.switches;
        let sparse_degree = n - 1 - self.degree;
        if self.degree <= sparse_degree {
            return self.draw(self.degree, |pairs| connected(n, pairs));
        }
        if sparse_degree == 0 {
            return complement(n, &[]);
        }
        let missing = self.draw(sparse_degree, |pairs| connected(n, &complement(n, pairs)));
        complement(n, &missing)
    }

    fn draw(&self, degree: u32, accept: impl Fn(&[(u32, u32)]) -> bool) -> Vec<(u32, u32)> {
        let pairing = Pairing {
            vertices: self.switches,
            degree,
            forbidden: &HashSet::new(),
            repair: Repair::FirstBad,
        };
        pairing.draw(self.seed, accept)
    }
}

/// Every pair of the n vertices that `pairs` does not cable, in ascending order.
fn complement(n: u32, pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let cabled: HashSet<(u32, u32)> = pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .filter(|p| !cabled.contains(p))
        .collect()
}

fn connected(n: u32, pairs: &[(u32, u32)]) -> bool {
    let mut adjacency = vec![Vec::new(); n as usize];
    for &(a, b) in pairs {
        adjacency[a as usize].push(b);
        adjacency[b as usize].push(a);
    }
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        for &w in &adjacency[v as usize] {
            if !std::mem::replace(&mut seen[w as usize], true) {
                stack.push(w);
            }
        }
    }
    seen.iter().all(|&s| s)
}

impl Construction for RandomRegular {
    fn name(&self) -> String {
        format!("random-n{}-k{}-s{}", self.switches, self.degree, self.seed)
    }

    fn size(&self) -> Size {
        Size {
            switches: self.switches as usize,
            endpoints: (self.switches * self.hosts_per_switch) as usize,
            ports_per_switch: (self.degree + self.hosts_per_switch) as usize,
        }
    }

    fn build(&self) -> Fabric {
        let ports = (self.degree + self.hosts_per_switch) as usize;
        let mut builder = FabricBuilder::new(self.name());
        let switches: Vec<_> = (0..self.switches)
            .map(|i| builder.switch(format!("rr{i}"), ports, None))
            .collect();
        let mut used = vec![0usize; self.switches as usize];
        builder.cable_edges(&switches, &mut used, self.cables());
        builder.hosts_on(
            &switches,
            "rr",
            self.hosts_per_switch as usize,
            self.degree as usize + 1,
        );
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::SwitchGraph;

    #[test]
    fn random_regular_graphs_are_simple_connected_and_regular() {
        for (n, k) in [(10, 3), (16, 4), (50, 7), (64, 5)] {
            for seed in 0..5 {
                let fabric = RandomRegular::new(n, k, 2, seed).unwrap().build();
                let graph = SwitchGraph::new(&fabric);
                assert!(
                    (0..graph.len())
                        .all(|i| graph.neighbours(i).len() == k as usize
                            && graph.cable_degree(i) == k)
                );
                assert!(graph.diameter().is_some(), "connected");
            }
        }
        assert_ne!(
            RandomRegular::new(16, 4, 0, 1).unwrap().cables(),
            RandomRegular::new(16, 4, 0, 2).unwrap().cables()
        );
        assert!(
            RandomRegular::new(9, 3, 0, 0)
                .unwrap_err()
                .to_string()
                .contains("must be even")
        );
    }

    /// Every admissible (switches, degree) up to 18 switches, dense ones included (they used
    /// to hang): simple, connected and regular.
    #[test]
    fn every_admissible_degree_gives_a_simple_connected_regular_graph() {
        for n in 2..=18u32 {
            for k in 1..n {
                let Ok(rr) = RandomRegular::new(n, k, 0, u64::from(n * k)) else {
                    assert!(n * k % 2 == 1 || (k == 1 && n > 2), "n {n} k {k} refused");
                    continue;
                };
                let cables = rr.cables();
                let mut degree = vec![0u32; n as usize];
                let mut seen = HashSet::new();
                for &(a, b) in &cables {
                    assert_ne!(a, b, "n {n} k {k}: a self-loop");
                    assert!(
                        seen.insert((a.min(b), a.max(b))),
                        "n {n} k {k}: parallel cables"
                    );
                    degree[a as usize] += 1;
                    degree[b as usize] += 1;
                }
                assert!(degree.iter().all(|&d| d == k), "n {n} k {k}: {degree:?}");
                assert!(connected(n, &cables), "n {n} k {k}: not connected");
            }
        }
    }

    #[test]
    fn degree_one_is_refused_beyond_two_switches() {
        let e = RandomRegular::new(4, 1, 1, 0).unwrap_err().to_string();
        assert!(e.contains("cannot be connected"), "{e}");
        assert_eq!(RandomRegular::new(2, 1, 1, 0).unwrap().cables(), [(0, 1)]);
    }
}
