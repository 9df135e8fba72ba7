//! k-ary n-tree: the fat tree of n levels that OpenSM's `ftree` engine and the fat-tree
//! literature (Petrini and Vanneschi) describe, three levels and more.
//!
//! Every level holds k^(n−1) switches, switch w of a level named by the n − 1 base-k digits
//! (w₀, …, w_{n−2}) of its index. Switch w of level l (l < n − 1) is cabled to the k switches
//! w′ of level l + 1 whose digits equal w's except digit l. Level 0 (the leaves) carries k hosts
//! per switch, so there are k^n hosts; the top level has only down-links. From a leaf every
//! switch of the top level is reachable upwards, and a route between leaves whose indices
//! first differ in digit d (from the top) rises d + 1 levels and falls as many.
//!
//! # Names, node order, racks and ports
//! * Switch w of level l is named `tree-l<l>-<w>` (leaves are level 0); host h of leaf w
//!   `tree-l0-<w>-h<h>`.
//! * Node order: the switches level by level, then the hosts by leaf, then h.
//! * Racks: the leaves and level-1 switches that share digits 1..n−2 (a pod) share rack
//!   w / k; every switch of level 2 and above is in one extra rack k^(n−2).
//! * Ports, 1-based: a switch below the top has 2k ports, ports 1 ..= k down (hosts of a leaf:
//!   host h on port h + 1; else the switch of level l − 1 whose digit l − 1 is j on port j + 1)
//!   and ports k + 1 ..= 2k up (the switch of level l + 1 whose digit l is j on port k + 1 + j);
//!   a top switch has the k down ports only.

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u64 = 254;

/// The most hosts accepted: more than InfiniBand's 49,151 unicast LIDs could address anyway.
const MAX_HOSTS: u64 = 1 << 20;

/// A k-ary n-tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KaryNTree {
    k: u32,
    n: u32,
}

impl KaryNTree {
    /// The k-ary n-tree of arity `k` (hosts per leaf, down- and up-links per switch) and `n`
    /// levels.
    ///
    /// # Errors
    /// k or n below 2, more than 254 ports per switch (2k), or more than 2^20 hosts (k^n).
    pub fn new(k: u32, n: u32) -> Result<Self, TopologyError> {
        let fail = |problem: String| Err(TopologyError::plain("kary-ntree", problem));
        if k < 2 {
            return fail(format!("k = {k}: the arity must be at least 2"));
        }
        if n < 2 {
            return fail(format!("n = {n}: a tree needs at least 2 levels"));
        }
        if 2 * u64::from(k) > MAX_PORTS {
            return fail(format!(
                "k = {k}: switches need 2k = {} ports (at most {MAX_PORTS})",
                2 * u64::from(k)
            ));
        }
        let hosts = u64::from(k).checked_pow(n).filter(|&h| h <= MAX_HOSTS);
        if hosts.is_none() {
            return fail(format!(
                "k = {k}, n = {n}: k^n hosts is more than {MAX_HOSTS}"
            ));
        }
        Ok(Self { k, n })
    }

    /// Arity k.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Levels n.
    pub fn n(&self) -> u32 {
        self.n
    }

    /// Switches per level, k^(n−1).
    pub fn switches_per_level(&self) -> u32 {
        self.k.pow(self.n - 1)
    }

    /// The switch of level `level + 1` above switch `w` of `level` on its up-link `j`: `w`
    /// with digit `level` replaced by `j`.
    pub fn up(&self, level: u32, w: u32, j: u32) -> u32 {
        let place = self.k.pow(level);
        let digit = w / place % self.k;
        w - digit * place + j * place
    }

    /// The digit `level` of `w`: the down-port (minus one) of the switch above that reaches it.
    pub fn digit(&self, level: u32, w: u32) -> u32 {
        w / self.k.pow(level) % self.k
    }

    fn rack(&self, level: u32, w: u32) -> u32 {
        if level <= 1 {
            w / self.k
        } else {
            self.switches_per_level() / self.k
        }
    }
}

impl Construction for KaryNTree {
    fn name(&self) -> String {
        format!("kary-ntree-k{}-n{}", self.k, self.n)
    }

    fn size(&self) -> Size {
        Size {
            switches: (self.n * self.switches_per_level()) as usize,
            endpoints: self.k.pow(self.n) as usize,
            ports_per_switch: 2 * self.k as usize,
        }
    }

    fn build(&self) -> Fabric {
        let (k, n, per_level) = (self.k, self.n, self.switches_per_level());
        let mut builder = FabricBuilder::new(self.name());
        let switches: Vec<Vec<_>> = (0..n)
            .map(|level| {
                let ports = if level + 1 == n { k } else { 2 * k } as usize;
                (0..per_level)
                    .map(|w| {
                        let name = format!("tree-l{level}-{w}");
                        builder.switch(name, ports, Some(self.rack(level, w)))
                    })
                    .collect()
            })
            .collect();
        for level in 0..n - 1 {
            for w in 0..per_level {
                for j in 0..k {
                    let above = self.up(level, w, j);
                    builder.cable(
                        switches[level as usize][w as usize],
                        (k + 1 + j) as usize,
                        switches[level as usize + 1][above as usize],
                        (self.digit(level, w) + 1) as usize,
                    );
                }
            }
        }
        for w in 0..per_level {
            for h in 0..k {
                let host = builder.host(format!("tree-l0-{w}-h{h}"), Some(self.rack(0, w)));
                builder.cable(switches[0][w as usize], (h + 1) as usize, host, 1);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::SwitchGraph;
    use std::collections::BTreeSet;

    /// The switch of `name` as (level, index).
    fn switch_of(name: &str) -> (u32, u32) {
        let (level, w) = name
            .strip_prefix("tree-l")
            .and_then(|r| r.split_once('-'))
            .expect("a switch name");
        (level.parse().unwrap(), w.parse().unwrap())
    }

    #[test]
    fn every_cable_joins_switches_differing_only_in_their_levels_digit() {
        for (k, n) in [(2, 2), (2, 3), (3, 3), (4, 3), (2, 4), (3, 4)] {
            let tree = KaryNTree::new(k, n).unwrap();
            let fabric = tree.build();
            let summary = fabric.summary();
            let per_level = k.pow(n - 1);
            assert_eq!(summary.switches, (n * per_level) as usize);
            assert_eq!(summary.hosts, k.pow(n) as usize);
            assert_eq!(summary.switch_links, ((n - 1) * per_level * k) as usize);
            let mut pairs = BTreeSet::new();
            for link in fabric.links() {
                let (a, b) = (fabric.node(link.a.node), fabric.node(link.b.node));
                if !b.name.starts_with("tree-l") || b.name.contains("-h") {
                    continue;
                }
                let ((la, wa), (lb, wb)) = (switch_of(&a.name), switch_of(&b.name));
                let ((low, lw, lp), (hw, hp)) = if la < lb {
                    ((la, wa, link.a.port), (wb, link.b.port))
                } else {
                    ((lb, wb, link.b.port), (wa, link.a.port))
                };
                assert_eq!(la.abs_diff(lb), 1, "k={k} n={n}: {} – {}", a.name, b.name);
                let place = k.pow(low);
                assert_eq!(lw - lw / place % k * place, hw - hw / place % k * place);
                assert_eq!(u32::from(lp), k + 1 + hw / place % k, "up port");
                assert_eq!(u32::from(hp), 1 + lw / place % k, "down port");
                assert!(pairs.insert((low, lw, hw)), "one cable per pair");
            }
        }
    }

    #[test]
    fn every_port_is_used_and_the_diameter_is_twice_the_height() {
        for (k, n) in [(2, 2), (3, 3), (4, 3), (2, 4)] {
            let fabric = KaryNTree::new(k, n).unwrap().build();
            let graph = SwitchGraph::new(&fabric);
            for i in 0..graph.len() {
                let node = graph.node(i);
                let used = fabric.neighbours(node).count();
                assert_eq!(
                    used,
                    usize::from(fabric.node(node).num_ports()),
                    "k={k} n={n}"
                );
            }
            assert_eq!(graph.diameter(), Some(2 * (n - 1)), "k={k} n={n}");
        }
    }

    #[test]
    fn impossible_parameters_are_refused_with_the_reason() {
        let err = |k, n| KaryNTree::new(k, n).unwrap_err().to_string();
        assert!(
            err(1, 3).contains("arity must be at least 2"),
            "{}",
            err(1, 3)
        );
        assert!(err(4, 1).contains("at least 2 levels"), "{}", err(4, 1));
        assert!(err(128, 2).contains("256 ports"), "{}", err(128, 2));
        assert!(err(32, 5).contains("k^n hosts"), "{}", err(32, 5));
    }
}
