//! What a fabric is, as far as routing cares: a *hierarchy* (fat trees and their kin: hosts on
//! the leaves, every cable joining adjacent levels) or not, found from the switch graph alone.
//!
//! Levels are distances from the nearest switch with hosts, so the leaves are level 0 and the
//! top switches the highest level. A graph is hierarchical when some switches have no hosts,
//! every switch with hosts is a leaf, and every cable joins two adjacent levels (none runs
//! within a level). Hosts are the endpoints but SHARP aggregation nodes
//! ([`RoutingGraph::hosts`]): every Quantum-2 switch of an NDR fabric, spines included, has
//! one. Such a graph has many equal-cost next hops per destination —
//! one per spine in a two-level fat tree — which routes made per destination switch cannot use
//! for the hosts of one leaf; the tables spread them per LID instead (`spread`).
//! Slim Fly, PolarFly and other direct fabrics have endpoints on every switch and are not
//! hierarchies; nothing changes for them.

use super::graph::{FAR, RoutingGraph};
use std::collections::VecDeque;

/// The levels of a hierarchical switch graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// Level of each switch: 0 for switches with hosts (leaves), then the distance to the
    /// nearest leaf.
    pub level: Vec<u8>,
}

impl Hierarchy {
    /// The hierarchy of `graph`, or `None` when it is not one: no switch without hosts, a
    /// switch no leaf reaches, or a cable within a level.
    ///
    /// The leaves are the switches with hosts. Where that gives no hierarchy because some
    /// hosts hang on upper switches (a cluster's file or management servers on a spine),
    /// and the switch graph is bipartite (levels alternate between its two sides), the
    /// leaves are the switches with hosts on the side that has more hosts.
    pub fn recognise(graph: &RoutingGraph) -> Option<Self> {
        let n = graph.len();
        if (0..n).all(|s| graph.hosts[s] > 0) {
            return None;
        }
        Self::from_leaves(graph, |s| graph.hosts[s] > 0).or_else(|| {
            let side = two_sides(graph)?;
            let hosts_on = |want: bool| -> u64 {
                (0..n)
                    .filter(|&s| side[s] == want)
                    .map(|s| u64::from(graph.hosts[s]))
                    .sum()
            };
            let leaf_side = hosts_on(true) >= hosts_on(false);
            Self::from_leaves(graph, |s| graph.hosts[s] > 0 && side[s] == leaf_side)
        })
    }

    /// Levels by distance from the switches `is_leaf` picks, if every cable then joins two
    /// adjacent levels and every switch is reached. ([`Hierarchy::recognise`] has made sure
    /// that some switch is no leaf.)
    fn from_leaves(graph: &RoutingGraph, is_leaf: impl Fn(usize) -> bool) -> Option<Self> {
        let n = graph.len();
        let mut level = vec![FAR; n];
        let mut queue: VecDeque<usize> = (0..n).filter(|&s| is_leaf(s)).collect();
        if queue.is_empty() {
            return None;
        }
        for &s in &queue {
            level[s] = 0;
        }
        while let Some(v) = queue.pop_front() {
            for e in graph.edges(v) {
                let w = graph.edge_to[e] as usize;
                if level[w] == FAR {
                    level[w] = level[v] + 1;
                    queue.push_back(w);
                }
            }
        }
        let adjacent = (0..graph.edge_count()).all(|e| {
            let (a, b) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
            level[a].abs_diff(level[b]) == 1
        });
        (adjacent && level.iter().all(|&l| l != FAR)).then_some(Self { level })
    }

    /// Hosts on switches above the leaves.
    pub fn hosts_above_leaves(&self, graph: &RoutingGraph) -> u64 {
        (0..graph.len())
            .filter(|&s| self.level[s] > 0)
            .map(|s| u64::from(graph.hosts[s]))
            .sum()
    }

    /// Number of levels (2 for a two-level fat tree).
    pub fn levels(&self) -> usize {
        self.level
            .iter()
            .map(|&l| usize::from(l) + 1)
            .max()
            .unwrap_or(0)
    }

    /// Switches per level, from the leaves up.
    pub fn switches_per_level(&self) -> Vec<usize> {
        let mut count = vec![0; self.levels()];
        for &l in &self.level {
            count[usize::from(l)] += 1;
        }
        count
    }
}

/// The two sides of a bipartite switch graph (each component coloured from its first
/// switch), or `None` when some cable joins two switches of one side (an odd cycle).
fn two_sides(graph: &RoutingGraph) -> Option<Vec<bool>> {
    let n = graph.len();
    let mut side: Vec<Option<bool>> = vec![None; n];
    for start in 0..n {
        if side[start].is_some() {
            continue;
        }
        side[start] = Some(false);
        let mut queue = VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            let here = side[v].expect("coloured when queued");
            for e in graph.edges(v) {
                let w = graph.edge_to[e] as usize;
                match side[w] {
                    None => {
                        side[w] = Some(!here);
                        queue.push_back(w);
                    }
                    Some(there) if there == here => return None,
                    Some(_) => {}
                }
            }
        }
    }
    Some(side.into_iter().map(|s| s.unwrap_or(false)).collect())
}

/// One sentence for the log: what the fabric was recognised as.
pub fn describe(graph: &RoutingGraph) -> String {
    let parallel = (0..graph.edge_count())
        .filter(|&e| graph.ports(e).len() > 1)
        .count()
        / 2;
    let cables = if parallel > 0 {
        format!(", {parallel} switch pairs joined by parallel cables")
    } else {
        String::new()
    };
    match Hierarchy::recognise(graph) {
        Some(h) => {
            let above = match h.hosts_above_leaves(graph) {
                0 => String::new(),
                hosts => format!(", {hosts} hosts on switches above the leaves"),
            };
            format!(
                "hierarchical fabric (fat tree): {} levels, switches per level from the leaves up {:?}{cables}{above}; \
                 destinations of a switch spread per LID over equal-cost next hops and parallel cables",
                h.levels(),
                h.switches_per_level()
            )
        }
        None => format!("direct fabric (not a hierarchy of levels){cables}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologySpec;

    fn graph(spec: &str) -> RoutingGraph {
        RoutingGraph::new(&spec.parse::<TopologySpec>().unwrap().build().unwrap())
    }

    #[test]
    fn two_level_fat_trees_are_recognised_with_leaves_below_spines() {
        for (leaves, spines, links) in [(2, 1, 1), (4, 2, 1), (12, 6, 1), (6, 3, 2), (5, 4, 3)] {
            let g = graph(&format!(
                "fattree:leaves={leaves},spines={spines},links-per-pair={links},hosts-per-leaf=3"
            ));
            let h = Hierarchy::recognise(&g).expect("a fat tree is a hierarchy");
            assert_eq!(h.switches_per_level(), vec![leaves, spines]);
        }
    }

    /// Two leaves with two hosts each and two spines, and on the last port of each switch
    /// listed in `extra` one more CA, with description `description` when given.
    fn small_tree(extra: &[usize], description: Option<&str>) -> RoutingGraph {
        use crate::topology::FabricBuilder;
        let mut builder = FabricBuilder::new("small-tree");
        let switches: Vec<_> = (0..4)
            .map(|i| {
                let (name, ports) = if i < 2 { ("leaf", 4) } else { ("spine", 2) };
                let ports = ports + usize::from(extra.contains(&i));
                builder.switch(format!("{name}{i}"), ports, None)
            })
            .collect();
        for l in 0..2 {
            for s in 0..2 {
                builder.cable(switches[l], 3 + s, switches[2 + s], 1 + l);
            }
            for h in 0..2 {
                let host = builder.host(format!("leaf{l}-h{h}"), None);
                builder.cable(switches[l], 1 + h, host, 1);
            }
        }
        let mut added = Vec::new();
        for &i in extra {
            let node = builder.host(format!("extra{i}"), None);
            let port = if i < 2 { 5 } else { 3 };
            builder.cable(switches[i], port, node, 1);
            added.push(node);
        }
        let mut fabric = builder.finish();
        if let Some(description) = description {
            for &node in &added {
                fabric.node_mut(node).description = description.into();
            }
        }
        RoutingGraph::new(&fabric)
    }

    #[test]
    fn aggregation_nodes_inside_every_switch_leave_the_levels_as_they_are() {
        // Every switch has the SHARP aggregation node of a Quantum-2 switch.
        use crate::topology::AGGREGATION_NODE_DESCRIPTION;
        let g = small_tree(&[0, 1, 2, 3], Some(AGGREGATION_NODE_DESCRIPTION));
        assert_eq!(
            g.endpoints,
            vec![3, 3, 1, 1],
            "the nodes are endpoints to route to"
        );
        let h = Hierarchy::recognise(&g).expect("still a fat tree");
        assert_eq!(h.switches_per_level(), vec![2, 2]);
    }

    #[test]
    fn a_server_on_a_spine_leaves_the_spine_above_the_leaves() {
        let g = small_tree(&[2], None);
        let h = Hierarchy::recognise(&g).expect("a fat tree with a server on a spine");
        assert_eq!(h.level, vec![0, 0, 1, 1]);
        assert_eq!(h.hosts_above_leaves(&g), 1);
    }

    #[test]
    fn a_bipartite_fabric_with_hosts_on_every_switch_is_no_hierarchy() {
        // A ring of 16 switches is bipartite, but no switch is without hosts.
        assert_eq!(
            Hierarchy::recognise(&graph("circulant:nodes=16,jumps=1,hosts=1")),
            None
        );
    }

    #[test]
    fn three_and_four_level_trees_are_recognised_level_by_level() {
        for (k, n) in [(2usize, 3u32), (4, 3), (2, 4), (3, 4)] {
            let h = Hierarchy::recognise(&graph(&format!("kary-ntree:k={k},n={n}")))
                .expect("a k-ary n-tree is a hierarchy");
            assert_eq!(h.switches_per_level(), vec![k.pow(n - 1); n as usize]);
        }
    }

    #[test]
    fn slim_fly_is_not_a_hierarchy() {
        assert_eq!(Hierarchy::recognise(&graph("slimfly:q=5")), None);
    }
}
