//! Circulant networks C(n; c1, …, ck): switch i is cabled to i ± c for every jump c. With
//! n = 2^k and the jumps 1, 2, 4, …, n/2 (the default) this is the graph G(n, log2 n) on which
//! binomial broadcast, recursive-doubling allreduce and Bruck's all-to-all over consecutive
//! ranks take one hop per message: the ring-based shortcut topology built for collectives.
//!
//! Degree 2k, less one when n/2 is a jump (i + n/2 and i − n/2 are the same switch). The jumps
//! must be distinct, within 1..=n/2, and generate Z_n (gcd of n and the jumps = 1) so the
//! network is connected.
//!
//! Switch i is named `circ<i>`, its hosts `circ<i>-h<j>`. Ports: for the m-th jump c (from 0),
//! 2m + 1 towards i + c and 2m + 2 towards i − c (a jump n/2 uses only the first); hosts after
//! the network ports. Node order is ring order. No racks.

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// A circulant network with hosts.
#[derive(Debug, Clone)]
pub struct Circulant {
    nodes: u32,
    jumps: Vec<u32>,
    hosts_per_switch: u32,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Circulant {
    /// The powers of two below n: the jumps of G(n, log2 n) when n is a power of two.
    pub fn power_of_two_jumps(nodes: u32) -> Vec<u32> {
        (0..32)
            .map(|i| 1u32 << i)
            .take_while(|&j| j <= nodes / 2)
            .collect()
    }

    /// n switches, the given jumps (empty: the powers of two, for n a power of two), `hosts`
    /// hosts per switch.
    ///
    /// # Errors
    /// Fewer than 3 switches, jumps out of range, repeated or not generating Z_n, no default
    /// jumps for n not a power of two, or more than 254 ports per switch.
    pub fn new(nodes: u32, jumps: &[u32], hosts_per_switch: u32) -> Result<Self, TopologyError> {
        let fail = |p: String| Err(TopologyError::plain("circulant", p));
        if nodes < 3 {
            return fail(format!(
                "nodes = {nodes}: a circulant network needs at least 3 switches"
            ));
        }
        let jumps = if jumps.is_empty() {
            if !nodes.is_power_of_two() {
                // Every suggestion must be accepted in turn: powers of two from 4 (nodes ≥ 3),
                // and jumps within 1..=nodes/2 that include 1 (so they generate Z_n).
                let below = 1u64 << (31 - nodes.leading_zeros());
                let nearest = if below < 4 {
                    "nodes = 4".to_string()
                } else {
                    format!("nodes = {below} or {}", below * 2)
                };
                let jumps: Vec<String> = Self::power_of_two_jumps(nodes)
                    .iter()
                    .map(u32::to_string)
                    .collect();
                return fail(format!(
                    "without --jumps, nodes must be a power of two for G(n, log2 n) \
                     ({nearest}), or give the jumps for nodes = {nodes}, e.g. {}",
                    jumps.join(",")
                ));
            }
            Self::power_of_two_jumps(nodes)
        } else {
            let mut sorted = jumps.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != jumps.len() {
                return fail(format!("jumps {jumps:?} repeat a jump"));
            }
            if let Some(&bad) = sorted.iter().find(|&&j| j == 0 || j > nodes / 2) {
                return fail(format!(
                    "jump {bad} must be between 1 and nodes / 2 = {}",
                    nodes / 2
                ));
            }
            sorted
        };
        if jumps.iter().fold(nodes, |g, &j| gcd(g, j)) != 1 {
            return fail(format!(
                "jumps {jumps:?} leave the network disconnected (their gcd with nodes = {nodes} \
                 is not 1; include jump 1 for a ring)"
            ));
        }
        let this = Self {
            nodes,
            jumps,
            hosts_per_switch,
        };
        let ports = u64::from(this.degree()) + u64::from(hosts_per_switch);
        if ports > 254 {
            return fail(format!("{ports} ports per switch needed (at most 254)"));
        }
        Ok(this)
    }

    /// The jumps, ascending.
    pub fn jumps(&self) -> &[u32] {
        &self.jumps
    }

    /// Network degree: two cables per jump, one for the jump n/2.
    pub fn degree(&self) -> u32 {
        self.jumps
            .iter()
            .map(|&j| if 2 * j == self.nodes { 1 } else { 2 })
            .sum()
    }
}

impl Construction for Circulant {
    fn name(&self) -> String {
        let jumps: Vec<String> = self.jumps.iter().map(u32::to_string).collect();
        format!("circulant-n{}-j{}", self.nodes, jumps.join("."))
    }

    fn size(&self) -> Size {
        Size {
            switches: self.nodes as usize,
            endpoints: self.nodes as usize * self.hosts_per_switch as usize,
            ports_per_switch: (self.degree() + self.hosts_per_switch) as usize,
        }
    }

    fn build(&self) -> Fabric {
        let n = self.nodes as usize;
        let degree = self.degree() as usize;
        let mut builder = FabricBuilder::new(self.name());
        let switches: Vec<_> = (0..n)
            .map(|i| {
                builder.switch(
                    format!("circ{i}"),
                    degree + self.hosts_per_switch as usize,
                    None,
                )
            })
            .collect();
        for (m, &jump) in self.jumps.iter().enumerate() {
            let jump = jump as usize;
            let (forward, backward) = (2 * m + 1, 2 * m + 2);
            if 2 * jump == n {
                // i and i + n/2 are each other's only jump-n/2 neighbour: one cable per pair.
                for i in 0..n / 2 {
                    builder.cable(switches[i], forward, switches[i + jump], forward);
                }
            } else {
                for i in 0..n {
                    builder.cable(switches[i], forward, switches[(i + jump) % n], backward);
                }
            }
        }
        // Network ports may have a gap (jump n/2 uses one of its two); hosts follow them all.
        let first_host_port = 2 * self.jumps.len() + 1;
        let first_host_port = if degree < 2 * self.jumps.len() {
            first_host_port - 1
        } else {
            first_host_port
        };
        builder.hosts_on(
            &switches,
            "circ",
            self.hosts_per_switch as usize,
            first_host_port,
        );
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever n (not a power of two) the error suggests, the suggested node counts and the
    /// suggested jumps for n are accepted.
    #[test]
    fn every_suggestion_without_jumps_is_accepted() {
        for nodes in (3..=300u32).filter(|n| !n.is_power_of_two()) {
            let err = Circulant::new(nodes, &[], 1).unwrap_err().to_string();
            let (_, after) = err.split_once("G(n, log2 n) (").unwrap();
            let (counts, rest) = after.split_once(')').unwrap();
            for count in counts.trim_start_matches("nodes = ").split(" or ") {
                let count: u32 = count.parse().unwrap();
                assert!(Circulant::new(count, &[], 1).is_ok(), "{nodes}: {err}");
            }
            let jumps: Vec<u32> = rest
                .rsplit("e.g. ")
                .next()
                .unwrap()
                .split(',')
                .map(|j| j.trim().parse().unwrap())
                .collect();
            assert!(Circulant::new(nodes, &jumps, 1).is_ok(), "{nodes}: {err}");
        }
    }
    use crate::topology::SwitchGraph;

    #[test]
    fn circulant_neighbours_are_exactly_the_jumps() {
        for (n, jumps) in [
            (16, vec![]),
            (16, vec![1, 3]),
            (10, vec![1, 5]),
            (12, vec![1, 2, 6]),
            (64, vec![]),
            (7, vec![2, 3]),
        ] {
            let circ = Circulant::new(n, &jumps, 2).unwrap();
            let fabric = circ.build();
            let graph = SwitchGraph::new(&fabric);
            let index_of = |name: String| {
                let id = fabric.node_by_name(&name).unwrap();
                (0..graph.len()).find(|&i| graph.node(i) == id).unwrap()
            };
            for i in 0..n {
                let mut expected: Vec<usize> = circ
                    .jumps()
                    .iter()
                    .flat_map(|&j| [(i + j) % n, (i + n - j) % n])
                    .map(|v| index_of(format!("circ{v}")))
                    .collect();
                expected.sort_unstable();
                expected.dedup();
                let s = index_of(format!("circ{i}"));
                let mut got: Vec<usize> = graph.neighbours(s).iter().map(|&v| v as usize).collect();
                got.sort_unstable();
                assert_eq!(got, expected, "n={n} jumps={jumps:?} switch {i}");
                assert_eq!(graph.cable_degree(s), circ.degree());
            }
            assert_eq!(fabric.hosts().count(), 2 * n as usize);
        }
        // G(n, log2 n) has degree 2 log2 n − 1.
        assert_eq!(Circulant::new(1024, &[], 1).unwrap().degree(), 19);
    }

    #[test]
    fn impossible_circulant_parameters_say_what_is_valid() {
        let err = |n, j: &[u32]| Circulant::new(n, j, 1).unwrap_err().to_string();
        assert!(err(12, &[]).contains("nodes = 8 or 16"));
        assert!(err(16, &[1, 9]).contains("between 1 and nodes / 2 = 8"));
        assert!(err(16, &[2, 4]).contains("disconnected"));
        assert!(err(16, &[1, 1]).contains("repeat"));
    }
}
