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
    pub fn recognise(graph: &RoutingGraph) -> Option<Self> {
        let n = graph.len();
        let mut level = vec![FAR; n];
        let mut queue: VecDeque<usize> = (0..n).filter(|&s| graph.hosts[s] > 0).collect();
        if queue.is_empty() || queue.len() == n {
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
        Some(h) => format!(
            "hierarchical fabric (fat tree): {} levels, switches per level from the leaves up {:?}{cables}; \
             destinations of a switch spread per LID over equal-cost next hops and parallel cables",
            h.levels(),
            h.switches_per_level()
        ),
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

    #[test]
    fn aggregation_nodes_inside_every_switch_leave_the_levels_as_they_are() {
        // Two leaves with two hosts each, two spines; every switch also has the SHARP
        // aggregation node of a Quantum-2 switch on its last port.
        use crate::topology::{AGGREGATION_NODE_DESCRIPTION, FabricBuilder};
        let mut builder = FabricBuilder::new("ndr-tree");
        let leaves: Vec<_> = (0..2)
            .map(|l| builder.switch(format!("leaf{l}"), 5, None))
            .collect();
        let spines: Vec<_> = (0..2)
            .map(|s| builder.switch(format!("spine{s}"), 3, None))
            .collect();
        for (l, &leaf) in leaves.iter().enumerate() {
            for (s, &spine) in spines.iter().enumerate() {
                builder.cable(leaf, 3 + s, spine, 1 + l);
            }
            for h in 0..2 {
                let host = builder.host(format!("leaf{l}-h{h}"), None);
                builder.cable(leaf, 1 + h, host, 1);
            }
        }
        let mut aggregation = Vec::new();
        for (i, &switch) in leaves.iter().chain(&spines).enumerate() {
            let node = builder.host(format!("an{i}"), None);
            let port = if i < 2 { 5 } else { 3 };
            builder.cable(switch, port, node, 1);
            aggregation.push(node);
        }
        let mut fabric = builder.finish();
        for &node in &aggregation {
            fabric.node_mut(node).description = AGGREGATION_NODE_DESCRIPTION.into();
        }
        let g = RoutingGraph::new(&fabric);
        assert_eq!(
            g.endpoints,
            vec![3, 3, 1, 1],
            "the nodes are endpoints to route to"
        );
        let h = Hierarchy::recognise(&g).expect("still a fat tree");
        assert_eq!(h.switches_per_level(), vec![2, 2]);
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
