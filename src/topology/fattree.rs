//! Two-level fat tree (folded Clos): every leaf is cabled to every spine with the same number of
//! parallel links.
//!
//! With L leaves, S spines, K links per leaf–spine pair and H hosts per leaf there are L·H hosts
//! and L·S·K leaf–spine cables; leaves need H + S·K ports and spines L·K. The switch graph has
//! diameter 2 (leaf–spine–leaf, spine–leaf–spine) whenever it has at least three switches. The
//! Slim Fly paper's comparison fabric is `FatTree::new(12, 6, 3, 18)`: 216 hosts on 18 switches
//! of 36 ports.
//!
//! # Names, node order, racks and ports
//! * Leaf l is named `leaf<l>`, spine s `spine<s>`, host k of leaf l `leaf<l>-h<k>`.
//! * Node order (and node ids): leaves 0..L, spines 0..S, then the hosts by leaf, then k.
//! * Racks (the default): rack l (0 ≤ l < L) holds leaf l with its H hosts; all spines are in one
//!   extra rack L.
//! * Ports, 1-based:
//!   * leaf l (H + S·K ports): ports 1 ..= H → hosts (host k on port k + 1; hosts use their
//!     port 1); port H + 1 + s·K + k → spine s, link k (k = 0..K−1).
//!   * spine s (L·K ports): port 1 + l·K + k → leaf l, link k.

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u64 = 254;

/// A two-level fat tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatTree {
    leaves: u32,
    spines: u32,
    links_per_pair: u32,
    hosts_per_leaf: u32,
}

impl FatTree {
    /// A fat tree of `leaves` leaves and `spines` spines, `links_per_pair` parallel cables
    /// between every leaf and every spine, and `hosts_per_leaf` hosts on every leaf.
    ///
    /// # Errors
    /// A zero count, or more than 254 ports needed on a leaf (hosts_per_leaf +
    /// spines·links_per_pair) or on a spine (leaves·links_per_pair).
    pub fn new(
        leaves: u32,
        spines: u32,
        links_per_pair: u32,
        hosts_per_leaf: u32,
    ) -> Result<Self, TopologyError> {
        let counts = [
            ("leaves", leaves),
            ("spines", spines),
            ("links per leaf–spine pair", links_per_pair),
            ("hosts per leaf", hosts_per_leaf),
        ];
        if let Some((what, _)) = counts.iter().find(|(_, v)| *v == 0) {
            return Err(TopologyError::plain(
                "fattree",
                format!("the number of {what} must be at least 1"),
            ));
        }
        let tree = Self {
            leaves,
            spines,
            links_per_pair,
            hosts_per_leaf,
        };
        let (leaf_ports, spine_ports) = (tree.leaf_ports(), tree.spine_ports());
        if leaf_ports > MAX_PORTS {
            return Err(TopologyError::plain(
                "fattree",
                format!(
                    "leaves need {leaf_ports} ports ({hosts_per_leaf} hosts + {spines} spines × \
                     {links_per_pair} links; at most {MAX_PORTS})"
                ),
            ));
        }
        if spine_ports > MAX_PORTS {
            return Err(TopologyError::plain(
                "fattree",
                format!(
                    "spines need {spine_ports} ports ({leaves} leaves × {links_per_pair} links; \
                     at most {MAX_PORTS})"
                ),
            ));
        }
        Ok(tree)
    }

    /// Number of leaves L.
    pub fn leaves(&self) -> u32 {
        self.leaves
    }

    /// Number of spines S.
    pub fn spines(&self) -> u32 {
        self.spines
    }

    /// Parallel cables K between every leaf and every spine.
    pub fn links_per_pair(&self) -> u32 {
        self.links_per_pair
    }

    /// Hosts per leaf H.
    pub fn hosts_per_leaf(&self) -> u32 {
        self.hosts_per_leaf
    }

    /// Ports of a leaf, H + S·K.
    pub fn leaf_ports(&self) -> u64 {
        u64::from(self.hosts_per_leaf) + u64::from(self.spines) * u64::from(self.links_per_pair)
    }

    /// Ports of a spine, L·K.
    pub fn spine_ports(&self) -> u64 {
        u64::from(self.leaves) * u64::from(self.links_per_pair)
    }

    /// The leaf port of link k to spine s: H + 1 + s·K + k.
    pub fn leaf_port(&self, spine: u32, link: u32) -> u32 {
        assert!(spine < self.spines && link < self.links_per_pair);
        self.hosts_per_leaf + 1 + spine * self.links_per_pair + link
    }

    /// The spine port of link k to leaf l: 1 + l·K + k.
    pub fn spine_port(&self, leaf: u32, link: u32) -> u32 {
        assert!(leaf < self.leaves && link < self.links_per_pair);
        1 + leaf * self.links_per_pair + link
    }
}

impl Construction for FatTree {
    fn name(&self) -> String {
        format!(
            "fattree-l{}-s{}-k{}-h{}",
            self.leaves, self.spines, self.links_per_pair, self.hosts_per_leaf
        )
    }

    fn size(&self) -> Size {
        Size {
            switches: self.leaves as usize + self.spines as usize,
            endpoints: self.leaves as usize * self.hosts_per_leaf as usize,
            ports_per_switch: self.leaf_ports().max(self.spine_ports()) as usize,
        }
    }

    fn build(&self) -> Fabric {
        let mut builder = FabricBuilder::new(self.name());
        let leaves: Vec<_> = (0..self.leaves)
            .map(|l| builder.switch(format!("leaf{l}"), self.leaf_ports() as usize, Some(l)))
            .collect();
        let spine_rack = Some(self.leaves);
        let spines: Vec<_> = (0..self.spines)
            .map(|s| builder.switch(format!("spine{s}"), self.spine_ports() as usize, spine_rack))
            .collect();
        for (l, &leaf) in (0..).zip(&leaves) {
            for (s, &spine) in (0..).zip(&spines) {
                for k in 0..self.links_per_pair {
                    builder.cable(
                        leaf,
                        self.leaf_port(s, k) as usize,
                        spine,
                        self.spine_port(l, k) as usize,
                    );
                }
            }
        }
        for (l, &leaf) in (0..).zip(&leaves) {
            for k in 0..self.hosts_per_leaf {
                let host = builder.host(format!("leaf{l}-h{k}"), Some(l));
                builder.cable(leaf, k as usize + 1, host, 1);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{NodeKind, SwitchGraph};

    fn number(name: &str, prefix: &str) -> Option<u32> {
        name.strip_prefix(prefix)?.parse().ok()
    }

    /// Checks counts, degrees, diameter and every cable against the documented port plan.
    fn check(l: u32, s: u32, k: u32, h: u32) {
        let tree = FatTree::new(l, s, k, h).unwrap();
        let fabric = tree.build();
        let at = format!("l={l} s={s} k={k} h={h}");
        let summary = fabric.summary();
        assert_eq!(summary.switches, (l + s) as usize, "{at}");
        assert_eq!(summary.hosts, (l * h) as usize, "{at}");
        assert_eq!(summary.switch_links, (l * s * k) as usize, "{at}");
        assert_eq!(summary.host_links, summary.hosts, "{at}");
        let size = tree.size();
        assert_eq!(
            (size.switches, size.endpoints),
            (summary.switches, summary.hosts)
        );
        let graph = SwitchGraph::new(&fabric);
        for i in 0..graph.len() {
            let node = fabric.node(graph.node(i));
            let used = fabric.neighbours(graph.node(i)).count() as u32;
            if i < l as usize {
                assert_eq!(u32::from(node.num_ports()), h + s * k, "{at}");
                assert_eq!(graph.neighbours(i).len() as u32, s, "{at}");
                assert!(graph.cables(i).iter().all(|&c| c == k), "{at}");
            } else {
                assert_eq!(u32::from(node.num_ports()), l * k, "{at}");
                assert_eq!(graph.neighbours(i).len() as u32, l, "{at}");
                assert!(graph.cables(i).iter().all(|&c| c == k), "{at}");
            }
            assert_eq!(used, u32::from(node.num_ports()), "{at}: every port used");
        }
        let diameter = if l + s >= 3 { 2 } else { 1 };
        assert_eq!(graph.diameter(), Some(diameter), "{at}");
        // Port plan, decoded from names. Parallel links k to one peer must use the ports
        // H + 1 + s·K + k on the leaf and 1 + l·K + k on the spine, with the same k at both ends.
        for link in fabric.links() {
            let (a, b) = (fabric.node(link.a.node), fabric.node(link.b.node));
            let (pa, pb) = (u32::from(link.a.port), u32::from(link.b.port));
            match (number(&a.name, "leaf"), number(&b.name, "spine")) {
                (Some(leaf), Some(spine)) => {
                    let link_k = (pa - 1)
                        .checked_sub(h + spine * k)
                        .expect("uplink port after the host ports");
                    assert!(link_k < k, "{at}: leaf{leaf}[{pa}] -> spine{spine}");
                    assert_eq!(pb, 1 + leaf * k + link_k, "{at}: spine{spine}[{pb}]");
                    assert_eq!((a.rack, b.rack), (Some(leaf), Some(l)), "{at}");
                }
                _ => {
                    let leaf = number(&a.name, "leaf").expect("hosts hang off leaves");
                    assert_eq!(b.kind, NodeKind::Ca);
                    let (owner, host) = b.name.split_once("-h").unwrap();
                    assert_eq!(owner, a.name);
                    assert_eq!(pa, host.parse::<u32>().unwrap() + 1, "{at}: {}", b.name);
                    assert_eq!((pb, b.rack), (1, Some(leaf)), "{at}");
                }
            }
        }
    }

    #[test]
    fn the_slim_fly_papers_comparison_fat_tree() {
        let tree = FatTree::new(12, 6, 3, 18).unwrap();
        assert_eq!(tree.name(), "fattree-l12-s6-k3-h18");
        assert_eq!(
            tree.size(),
            Size {
                switches: 18,
                endpoints: 216,
                ports_per_switch: 36
            }
        );
        assert_eq!((tree.leaf_ports(), tree.spine_ports()), (36, 36));
        let summary = tree.build().summary();
        assert_eq!((summary.hosts, summary.switch_links), (216, 216));
        check(12, 6, 3, 18);
    }

    #[test]
    fn a_range_of_parameters_follows_the_plan() {
        for l in 1..=6 {
            for s in 1..=4 {
                for k in 1..=3 {
                    for h in [1, 2, 5] {
                        check(l, s, k, h);
                    }
                }
            }
        }
        check(18, 18, 1, 18);
        check(1, 1, 1, 1);
        check(127, 2, 2, 4);
    }

    #[test]
    fn names_and_node_order() {
        let fabric = FatTree::new(2, 2, 1, 2).unwrap().build();
        let names: Vec<&str> = fabric.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "leaf0", "leaf1", "spine0", "spine1", "leaf0-h0", "leaf0-h1", "leaf1-h0",
                "leaf1-h1"
            ]
        );
    }

    #[test]
    fn zero_counts_and_too_many_ports_are_refused() {
        assert_eq!(
            FatTree::new(0, 6, 3, 18).unwrap_err().to_string(),
            "fattree: the number of leaves must be at least 1"
        );
        assert!(
            FatTree::new(12, 0, 3, 18)
                .unwrap_err()
                .to_string()
                .contains("spines")
        );
        assert!(FatTree::new(12, 6, 0, 18).is_err());
        assert!(FatTree::new(12, 6, 3, 0).is_err());
        assert_eq!(
            FatTree::new(12, 100, 2, 60).unwrap_err().to_string(),
            "fattree: leaves need 260 ports (60 hosts + 100 spines × 2 links; at most 254)"
        );
        assert_eq!(
            FatTree::new(128, 2, 2, 1).unwrap_err().to_string(),
            "fattree: spines need 256 ports (128 leaves × 2 links; at most 254)"
        );
        assert!(FatTree::new(127, 2, 2, 250).is_ok());
        assert!(FatTree::new(u32::MAX, u32::MAX, u32::MAX, u32::MAX).is_err());
    }
}
