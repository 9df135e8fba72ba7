//! Ring-based random shortcut networks: a ring of n switches plus random shortcut cables until
//! every switch has network degree d (the small-world topology of Koibuchi et al. that the
//! shortcut-topology collective studies use; there with n = 1024, d = 19, one host per switch).
//!
//! The ring cables are i — i+1 (mod n). The shortcuts come from the pairing model
//! ([`super::pairing`]): every switch
//! gets d − 2 stubs, the stubs are matched at random, and a shortcut that would be a self-loop
//! or duplicate a cable (ring or shortcut) is repaired by swapping ends with another random
//! shortcut. Dense networks (more than half of the possible shortcuts) draw the shortcuts
//! they leave out the same way and take all others. Every switch ends with exactly d cables,
//! so n·d must be even. Deterministic per seed.
//!
//! Switch i is named `sc<i>`, its hosts `sc<i>-h<j>`. Ports: 1 to the ring successor, 2 to
//! the ring predecessor, 3..=d the shortcuts in matching order, d + 1 ..= d + hosts the hosts.
//! Node order is ring order, so "ascending" rank orders and ring-consecutive allocations follow
//! the ring. No racks.

use std::collections::HashSet;

use super::pairing::{Pairing, Repair};
use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// A seeded ring-based random shortcut network with hosts.
#[derive(Debug, Clone)]
pub struct Shortcut {
    nodes: u32,
    degree: u32,
    hosts_per_switch: u32,
    seed: u64,
}

impl Shortcut {
    /// n switches on a ring, network degree d (ring included), `hosts` hosts per switch.
    ///
    /// # Errors
    /// Fewer than 3 switches, d < 2 or d ≥ n, n·d odd, or more than 254 ports per switch.
    pub fn new(
        nodes: u32,
        degree: u32,
        hosts_per_switch: u32,
        seed: u64,
    ) -> Result<Self, TopologyError> {
        let size = |d: u32| Size {
            switches: nodes as usize,
            endpoints: nodes as usize * hosts_per_switch as usize,
            ports_per_switch: d as usize + hosts_per_switch as usize,
        };
        let valid = |d: u32| {
            d >= 2
                && d < nodes
                && nodes % 2 * (d % 2) == 0
                && u64::from(d) + u64::from(hosts_per_switch) <= 254
        };
        if nodes < 3 {
            return Err(TopologyError::plain(
                "shortcut",
                format!("nodes = {nodes}: a ring needs at least 3 switches"),
            ));
        }
        if !valid(degree) {
            let problem = if degree < 2 || degree >= nodes {
                format!(
                    "degree {degree} must be between 2 (the ring) and nodes − 1 = {}",
                    nodes - 1
                )
            } else if nodes % 2 == 1 && degree % 2 == 1 {
                format!(
                    "nodes × degree = {} must be even (every cable has two ends)",
                    u64::from(nodes) * u64::from(degree)
                )
            } else {
                format!(
                    "{} ports per switch needed (at most 254)",
                    u64::from(degree) + u64::from(hosts_per_switch)
                )
            };
            return Err(TopologyError::scalar(
                "shortcut",
                "degree",
                degree,
                problem,
                (2, (nodes - 1).min(254)),
                |d| valid(d).then(|| size(d)),
            ));
        }
        Ok(Self {
            nodes,
            degree,
            hosts_per_switch,
            seed,
        })
    }

    /// The shortcut cables (ring cables excluded) as pairs of switch indexes: together with the
    /// ring a simple d-regular graph.
    ///
    /// Dense networks (more than half of the non-ring pairs are shortcuts) draw the missing
    /// shortcuts instead and take every other pair: random repair converges on sparse graphs,
    /// and near-complete ones leave it too little room.
    pub fn shortcuts(&self) -> Vec<(u32, u32)> {
        let n = self.nodes;
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        let ring: HashSet<(u32, u32)> = (0..n).map(|i| key(i, (i + 1) % n)).collect();
        let wanted = self.degree - 2;
        let free = n - 3;
        if 2 * wanted <= free {
            return random_regular_avoiding(n, wanted, &ring, self.seed);
        }
        let mut taken = ring;
        taken.extend(
            random_regular_avoiding(n, free - wanted, &taken, self.seed)
                .into_iter()
                .map(|(a, b)| key(a, b)),
        );
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|p| !taken.contains(p))
            .collect()
    }
}

/// A seeded random k-regular simple graph on n vertices with no edge in `avoid`.
fn random_regular_avoiding(
    n: u32,
    k: u32,
    avoid: &HashSet<(u32, u32)>,
    seed: u64,
) -> Vec<(u32, u32)> {
    let pairing = Pairing {
        vertices: n,
        degree: k,
        forbidden: avoid,
        repair: Repair::Sweep,
    };
    pairing.draw(seed, |_| true)
}

impl Construction for Shortcut {
    fn name(&self) -> String {
        format!("shortcut-n{}-k{}-s{}", self.nodes, self.degree, self.seed)
    }

    fn size(&self) -> Size {
        Size {
            switches: self.nodes as usize,
            endpoints: self.nodes as usize * self.hosts_per_switch as usize,
            ports_per_switch: (self.degree + self.hosts_per_switch) as usize,
        }
    }

    fn build(&self) -> Fabric {
        let n = self.nodes as usize;
        let ports = (self.degree + self.hosts_per_switch) as usize;
        let mut builder = FabricBuilder::new(self.name());
        let switches: Vec<_> = (0..n)
            .map(|i| builder.switch(format!("sc{i}"), ports, None))
            .collect();
        for i in 0..n {
            builder.cable(switches[i], 1, switches[(i + 1) % n], 2);
        }
        let mut used = vec![2usize; n];
        builder.cable_edges(&switches, &mut used, self.shortcuts());
        builder.hosts_on(
            &switches,
            "sc",
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
    fn shortcut_networks_are_rings_plus_shortcuts_simple_and_regular() {
        for (n, d) in [
            (3, 2),
            (10, 3),
            (16, 4),
            (50, 7),
            (64, 5),
            (128, 19),
            (12, 7),
            (16, 15),
            (20, 18),
            (40, 25),
        ] {
            for seed in 0..4 {
                let fabric = Shortcut::new(n, d, 1, seed).unwrap().build();
                let graph = SwitchGraph::new(&fabric);
                assert_eq!(graph.len(), n as usize);
                for i in 0..graph.len() {
                    assert_eq!(graph.neighbours(i).len(), d as usize, "n={n} d={d} simple");
                    assert_eq!(graph.cable_degree(i), d, "n={n} d={d} regular");
                }
                // The ring is there: switch i is cabled to switch i + 1.
                for i in 0..n {
                    let a = fabric.node_by_name(&format!("sc{i}")).unwrap();
                    let b = fabric.node_by_name(&format!("sc{}", (i + 1) % n)).unwrap();
                    assert!(fabric.neighbours(a).any(|(_, p)| p.node == b));
                }
                assert_eq!(fabric.hosts().count(), n as usize);
            }
        }
        assert_ne!(
            Shortcut::new(64, 6, 1, 1).unwrap().shortcuts(),
            Shortcut::new(64, 6, 1, 2).unwrap().shortcuts()
        );
        assert_eq!(
            Shortcut::new(64, 6, 1, 3).unwrap().shortcuts(),
            Shortcut::new(64, 6, 1, 3).unwrap().shortcuts()
        );
    }

    #[test]
    fn impossible_shortcut_parameters_name_the_valid_degrees() {
        let err = Shortcut::new(9, 3, 1, 0).unwrap_err().to_string();
        assert!(err.contains("must be even"), "{err}");
        assert!(
            err.contains("degree = 2") && err.contains("degree = 4"),
            "{err}"
        );
        let err = Shortcut::new(8, 8, 1, 0).unwrap_err().to_string();
        assert!(
            err.contains("between 2 (the ring) and nodes − 1 = 7"),
            "{err}"
        );
        assert!(Shortcut::new(2, 2, 1, 0).is_err());
    }
}
