//! Multi-Layer Full Mesh (MLFM, Shimizu, Miwa, Nakashima): a two-level network of 2d-port
//! switches in which every pair of leaf columns shares its own spine.
//!
//! There are d layers i = 0..d−1 of d + 1 leaf switches (i, j), j = 0..d; "column" j is the d
//! leaves with that j in all layers. Every leaf serves d servers (i, j, k), k = 0..d−1. For every
//! unordered column pair j0 < j1 there is one spine {j0, j1}, cabled to leaf (i, j0) and leaf
//! (i, j1) in *every* layer i, so it uses all its 2d ports; every leaf uses d ports for servers and
//! d ports for the d spines {j, j'}, j' ≠ j.
//!
//! That gives d²(d + 1) servers, d(d + 1) leaves, d(d + 1)/2 spines and d²(d + 1) leaf–spine
//! cables. Two leaves of different columns j ≠ j' have a unique two-hop path (via spine {j, j'});
//! two leaves of one column in different layers have d of them (via any spine {j, x}).
//!
//! # Names, node order, racks and ports
//! * Leaf (i, j) is named `leaf<i>-<j>`, spine {j0, j1} `spine<j0>-<j1>` (j0 < j1), server
//!   (i, j, k) `srv<i>-<j>-<k>`.
//! * Node order (and node ids): the leaves by i then j (leaf (i, j) has id i·(d + 1) + j), then
//!   the spines by j0 then j1, then the servers by i, j, k.
//! * Racks (the default; the only layout offered): rack i (0 ≤ i < d) holds the d + 1 leaves of
//!   layer i with their d(d + 1) servers; all d(d + 1)/2 spines are in one extra rack d. Every
//!   leaf–spine cable therefore runs between a layer rack and the spine rack, d(d + 1) of them per
//!   layer rack.
//! * Ports, 1-based, all switches have 2d ports:
//!   * leaf (i, j): port k + 1 → server (i, j, k) for k = 0..d−1; port d + o → spine
//!     {j, (j + o) mod (d + 1)} for the offset o = 1..d (the offset arithmetic of the paper's
//!     all-to-all schedule). Servers use their port 1.
//!   * spine {j0, j1}: port 2i + 1 → leaf (i, j0), port 2i + 2 → leaf (i, j1).

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u32 = 254;
/// The largest d: 2d ports per switch.
const MAX_D: u32 = MAX_PORTS / 2;

/// A Multi-Layer Full Mesh with d layers, d + 1 columns and d servers per leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlfm {
    d: u32,
}

impl Mlfm {
    /// The MLFM of 2d-port switches.
    ///
    /// # Errors
    /// d = 0, or d > 127 (more than 254 ports per switch); the error names the nearest valid d
    /// with its size.
    pub fn new(d: u32) -> Result<Self, TopologyError> {
        let problem = if d == 0 {
            Some("d = 0 gives an empty fabric (d ≥ 1 needed)".to_string())
        } else if d > MAX_D {
            Some(format!(
                "d = {d} needs {} ports per switch (at most {MAX_PORTS})",
                2 * u64::from(d)
            ))
        } else {
            None
        };
        match problem {
            Some(problem) => Err(TopologyError::scalar(
                "mlfm",
                "d",
                d,
                problem,
                (1, MAX_D),
                |v| Some(size_of(v)),
            )),
            None => Ok(Self { d }),
        }
    }

    /// d: the number of layers, of servers per leaf and of spines per leaf.
    pub fn d(&self) -> u32 {
        self.d
    }

    /// Number of columns, d + 1 (leaves per layer).
    pub fn columns(&self) -> u32 {
        self.d + 1
    }

    /// Ports of every switch, 2d.
    pub fn ports_per_switch(&self) -> u32 {
        2 * self.d
    }

    /// Number of leaves, d(d + 1).
    pub fn leaves(&self) -> usize {
        self.d as usize * self.columns() as usize
    }

    /// Number of spines, d(d + 1)/2.
    pub fn spines(&self) -> usize {
        self.leaves() / 2
    }

    /// Node id (and switch index) of leaf (i, j): i·(d + 1) + j.
    pub fn leaf_index(&self, i: u32, j: u32) -> usize {
        debug_assert!(i < self.d && j <= self.d);
        i as usize * self.columns() as usize + j as usize
    }

    /// Position of spine {j0, j1} among the spines (lexicographic in (min, max)); its node id is
    /// [`Self::leaves`] plus this.
    ///
    /// # Panics
    /// If j0 = j1 or a column is out of range.
    pub fn spine_position(&self, j0: u32, j1: u32) -> usize {
        let (a, b) = (j0.min(j1) as usize, j0.max(j1) as usize);
        let columns = self.columns() as usize;
        assert!(a != b && b < columns, "spine {{{j0}, {j1}}} does not exist");
        // Pairs (x, y), x < a, come first: (columns − 1) + … + (columns − a).
        a * (2 * columns - a - 1) / 2 + (b - a - 1)
    }

    /// The spine {j0, j1} (j0 < j1) at `position` in spine order.
    pub fn spine_columns(&self, position: usize) -> (u32, u32) {
        let columns = self.columns();
        let mut rest = position;
        for j0 in 0..columns {
            let count = (columns - 1 - j0) as usize;
            if rest < count {
                return (j0, j0 + 1 + rest as u32);
            }
            rest -= count;
        }
        panic!("spine position {position} out of range");
    }

    /// The leaf port of a leaf in column `j` towards spine {j, j'}: d + ((j' − j) mod (d + 1)).
    pub fn leaf_port_to_spine(&self, j: u32, j_other: u32) -> u32 {
        let columns = self.columns();
        assert!(j != j_other && j < columns && j_other < columns);
        self.d + (j_other + columns - j) % columns
    }

    /// The spine that leaf port `port` (d + 1 ..= 2d) of a leaf in column `j` leads to, as
    /// (j0, j1) with j0 < j1.
    pub fn spine_at_leaf_port(&self, j: u32, port: u32) -> (u32, u32) {
        assert!(
            port > self.d && port <= 2 * self.d,
            "port {port} is not an uplink"
        );
        let other = (j + port - self.d) % self.columns();
        (j.min(other), j.max(other))
    }

    /// The port of spine {j0, j1} towards leaf (i, j), j ∈ {j0, j1}: 2i + 1 for the lower column,
    /// 2i + 2 for the higher.
    pub fn spine_port_to_leaf(&self, (j0, j1): (u32, u32), i: u32, j: u32) -> u32 {
        let (lo, hi) = (j0.min(j1), j0.max(j1));
        assert!(
            j == lo || j == hi,
            "leaf ({i}, {j}) is not on spine {{{lo}, {hi}}}"
        );
        2 * i + 1 + u32::from(j == hi)
    }
}

fn size_of(d: u32) -> Size {
    let d = d as usize;
    Size {
        switches: 3 * d * (d + 1) / 2,
        endpoints: d * d * (d + 1),
        ports_per_switch: 2 * d,
    }
}

impl Construction for Mlfm {
    fn name(&self) -> String {
        format!("mlfm-d{}", self.d)
    }

    fn size(&self) -> Size {
        size_of(self.d)
    }

    fn build(&self) -> Fabric {
        let d = self.d;
        let ports = self.ports_per_switch() as usize;
        let mut builder = FabricBuilder::new(self.name());
        let mut leaves = Vec::with_capacity(self.leaves());
        for i in 0..d {
            for j in 0..self.columns() {
                leaves.push(builder.switch(format!("leaf{i}-{j}"), ports, Some(i)));
            }
        }
        let spines: Vec<_> = (0..self.spines())
            .map(|s| {
                let (j0, j1) = self.spine_columns(s);
                builder.switch(format!("spine{j0}-{j1}"), ports, Some(d))
            })
            .collect();
        for (s, &spine) in spines.iter().enumerate() {
            let (j0, j1) = self.spine_columns(s);
            for i in 0..d {
                for (j, other) in [(j0, j1), (j1, j0)] {
                    builder.cable(
                        leaves[self.leaf_index(i, j)],
                        self.leaf_port_to_spine(j, other) as usize,
                        spine,
                        self.spine_port_to_leaf((j0, j1), i, j) as usize,
                    );
                }
            }
        }
        for i in 0..d {
            for j in 0..self.columns() {
                for k in 0..d {
                    let server = builder.host(format!("srv{i}-{j}-{k}"), Some(i));
                    builder.cable(leaves[self.leaf_index(i, j)], k as usize + 1, server, 1);
                }
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::topology::{NodeKind, SwitchGraph};

    /// The numbers after `prefix`, separated by `-`.
    fn parse(name: &str, prefix: &str) -> Option<Vec<u32>> {
        name.strip_prefix(prefix)?
            .split('-')
            .map(|x| x.parse().ok())
            .collect()
    }

    #[test]
    fn counts_degrees_and_two_hop_paths_for_every_d_up_to_12() {
        for d in 1..=12u32 {
            let mlfm = Mlfm::new(d).unwrap();
            let fabric = mlfm.build();
            let summary = fabric.summary();
            let du = d as usize;
            assert_eq!(summary.hosts, du * du * (du + 1), "d={d}: servers");
            assert_eq!(summary.switches, 3 * du * (du + 1) / 2, "d={d}: switches");
            assert_eq!(
                summary.switch_links,
                du * du * (du + 1),
                "d={d}: leaf–spine"
            );
            assert_eq!(summary.host_links, summary.hosts);
            assert_eq!(mlfm.size().switches, summary.switches);
            assert_eq!(mlfm.size().endpoints, summary.hosts);
            let graph = SwitchGraph::new(&fabric);
            let (leaves, spines) = (du * (du + 1), du * (du + 1) / 2);
            assert_eq!(graph.len(), leaves + spines);
            for s in 0..graph.len() {
                let node = fabric.node(graph.node(s));
                assert_eq!(node.num_ports() as u32, 2 * d);
                let used = fabric.neighbours(graph.node(s)).count();
                let hosts = fabric
                    .neighbours(graph.node(s))
                    .filter(|(_, p)| fabric.node(p.node).kind == NodeKind::Ca)
                    .count();
                let is_leaf = node.name.starts_with("leaf");
                assert_eq!(is_leaf, s < leaves, "d={d}: node order");
                assert_eq!(used, 2 * du, "d={d}: {} uses every port", node.name);
                assert_eq!(
                    graph.cable_degree(s) as usize,
                    if is_leaf { du } else { 2 * du }
                );
                assert_eq!(graph.neighbours(s).len(), graph.cable_degree(s) as usize);
                assert_eq!(hosts, if is_leaf { du } else { 0 }, "d={d}: {}", node.name);
                // Bipartite: leaves only see spines and vice versa.
                assert!(
                    graph
                        .neighbours(s)
                        .iter()
                        .all(|&t| ((t as usize) < leaves) != is_leaf)
                );
            }
            // Two-hop leaf paths = common spine neighbours.
            for a in 0..leaves {
                let dist = graph.distances_from(a);
                let (ia, ja) = ((a / (du + 1)) as u32, (a % (du + 1)) as u32);
                assert_eq!(mlfm.leaf_index(ia, ja), a);
                for (b, &distance) in dist.iter().enumerate().take(leaves) {
                    let (ib, jb) = ((b / (du + 1)) as u32, (b % (du + 1)) as u32);
                    let common = graph
                        .neighbours(a)
                        .iter()
                        .filter(|t| graph.neighbours(b).contains(t))
                        .count();
                    let expected = if a == b {
                        du
                    } else if ja != jb {
                        1
                    } else {
                        du
                    };
                    assert_eq!(common, expected, "d={d}: leaves ({ia},{ja}) ({ib},{jb})");
                    if a != b {
                        assert_eq!(distance, 2, "d={d}: leaf distance");
                    }
                }
            }
            // Spines of disjoint column pairs are 4 apart (spine–leaf–spine–leaf–spine); they
            // exist from d = 3 (four columns) on. A leaf is 3 from a spine not over its column.
            let expected = match d {
                1 => 2,
                2 => 3,
                _ => 4,
            };
            assert_eq!(graph.diameter(), Some(expected), "d={d}: diameter");
        }
    }

    #[test]
    fn every_cable_follows_the_documented_port_plan() {
        for d in [1, 2, 3, 5, 8] {
            let mlfm = Mlfm::new(d).unwrap();
            let fabric = mlfm.build();
            let columns = d + 1;
            let mut seen = 0;
            for link in fabric.links() {
                for (end, other) in [(link.a, link.b), (link.b, link.a)] {
                    let (n, o) = (fabric.node(end.node), fabric.node(other.node));
                    let port = u32::from(end.port);
                    if let Some(leaf) = parse(&n.name, "leaf") {
                        let (i, j) = (leaf[0], leaf[1]);
                        assert_eq!(n.rack, Some(i));
                        if let Some(srv) = parse(&o.name, "srv") {
                            assert_eq!(&srv[..2], &[i, j]);
                            assert_eq!(port, srv[2] + 1, "d={d}: {}", n.name);
                            assert_eq!(other.port, 1);
                            assert_eq!(o.rack, Some(i));
                        } else {
                            let spine = parse(&o.name, "spine").unwrap();
                            assert!(spine[0] < spine[1]);
                            let peer = if spine[0] == j { spine[1] } else { spine[0] };
                            assert!(spine.contains(&j));
                            let offset = (peer + columns - j) % columns;
                            assert_eq!(port, d + offset, "d={d}: {} -> {}", n.name, o.name);
                            assert_eq!(o.rack, Some(d));
                            seen += 1;
                        }
                    } else if let Some(spine) = parse(&n.name, "spine") {
                        let leaf = parse(&o.name, "leaf").unwrap();
                        let expected = 2 * leaf[0] + if leaf[1] == spine[0] { 1 } else { 2 };
                        assert_eq!(port, expected, "d={d}: {} -> {}", n.name, o.name);
                        assert!(spine.contains(&leaf[1]));
                        seen += 1;
                    } else {
                        assert!(n.name.starts_with("srv"));
                    }
                }
            }
            assert_eq!(seen, 2 * (d * d * (d + 1)) as usize);
        }
    }

    #[test]
    fn node_order_names_and_racks() {
        let mlfm = Mlfm::new(3).unwrap();
        let fabric = mlfm.build();
        let names: Vec<&str> = fabric.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names[..5],
            ["leaf0-0", "leaf0-1", "leaf0-2", "leaf0-3", "leaf1-0"]
        );
        assert_eq!(
            names[12..18],
            [
                "spine0-1", "spine0-2", "spine0-3", "spine1-2", "spine1-3", "spine2-3"
            ]
        );
        assert_eq!(names[18..21], ["srv0-0-0", "srv0-0-1", "srv0-0-2"]);
        assert_eq!(names.last(), Some(&"srv2-3-2"));
        assert_eq!(mlfm.name(), "mlfm-d3");
        let mut per_rack: HashMap<u32, (usize, usize)> = HashMap::new();
        for node in fabric.nodes() {
            let entry = per_rack.entry(node.rack.unwrap()).or_default();
            match node.kind {
                NodeKind::Switch => entry.0 += 1,
                _ => entry.1 += 1,
            }
        }
        assert_eq!(per_rack[&0], (4, 12));
        assert_eq!(per_rack[&2], (4, 12));
        assert_eq!(per_rack[&3], (6, 0));
        for d in 1..=20 {
            let m = Mlfm::new(d).unwrap();
            for s in 0..m.spines() {
                let (j0, j1) = m.spine_columns(s);
                assert_eq!(m.spine_position(j0, j1), s);
                assert_eq!(m.spine_position(j1, j0), s);
                for i in 0..d {
                    let p0 = m.leaf_port_to_spine(j0, j1);
                    assert_eq!(m.spine_at_leaf_port(j0, p0), (j0, j1));
                    assert_eq!(
                        m.spine_at_leaf_port(j1, m.leaf_port_to_spine(j1, j0)),
                        (j0, j1)
                    );
                    assert_eq!(m.spine_port_to_leaf((j0, j1), i, j0), 2 * i + 1);
                }
            }
        }
    }

    #[test]
    fn the_36_port_size_matches_the_notes() {
        let size = Mlfm::new(18).unwrap().size();
        assert_eq!(
            size,
            Size {
                switches: 513,
                endpoints: 6156,
                ports_per_switch: 36
            }
        );
        for (d, servers, switches) in [(20, 8400, 630), (24, 14400, 900), (32, 33792, 1584)] {
            let size = Mlfm::new(d).unwrap().size();
            assert_eq!(
                (size.endpoints, size.switches),
                (servers, switches),
                "d={d}"
            );
        }
    }

    #[test]
    fn impossible_d_is_refused_with_the_nearest_valid_ones() {
        assert_eq!(
            Mlfm::new(0).unwrap_err().to_string(),
            "mlfm: d = 0 gives an empty fabric (d ≥ 1 needed); nearest valid: \
             d = 1 (3 switches, 2 endpoints, 2 ports per switch)"
        );
        assert_eq!(
            Mlfm::new(128).unwrap_err().to_string(),
            "mlfm: d = 128 needs 256 ports per switch (at most 254); nearest valid: \
             d = 127 (24384 switches, 2064512 endpoints, 254 ports per switch)"
        );
        assert!(Mlfm::new(127).is_ok());
        assert!(Mlfm::new(u32::MAX).is_err());
    }
}
