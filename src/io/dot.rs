//! Graphviz DOT rendering of a fabric: switches as boxes clustered by rack, hosts as small
//! ellipses, every cable an edge labelled with its two port numbers.

use std::fmt::Write as _;

use crate::topology::{Fabric, NodeKind};

/// Renders `fabric` as an undirected DOT graph.
pub fn write_dot(fabric: &Fabric) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = String::new();
    let _ = writeln!(out, "graph {} {{", quote(&fabric.name));
    let _ = writeln!(out, "  node [fontname=\"Helvetica\", fontsize=10];");
    let mut racks: Vec<u32> = fabric.nodes().iter().filter_map(|n| n.rack).collect();
    racks.sort_unstable();
    racks.dedup();
    let node_line = |out: &mut String, indent: &str, name: &str, kind: NodeKind| {
        let shape = match kind {
            NodeKind::Switch => "box",
            NodeKind::Ca => "ellipse, height=0.2, fontsize=7",
            NodeKind::Router => "hexagon",
        };
        let _ = writeln!(out, "{indent}{} [shape={shape}];", quote(name));
    };
    for rack in &racks {
        let _ = writeln!(
            out,
            "  subgraph \"cluster_rack{rack}\" {{\n    label=\"rack {rack}\";"
        );
        for n in fabric.nodes().iter().filter(|n| n.rack == Some(*rack)) {
            node_line(&mut out, "    ", &n.name, n.kind);
        }
        out.push_str("  }\n");
    }
    for n in fabric.nodes().iter().filter(|n| n.rack.is_none()) {
        node_line(&mut out, "  ", &n.name, n.kind);
    }
    for link in fabric.links() {
        let (a, b) = (fabric.node(link.a.node), fabric.node(link.b.node));
        let _ = writeln!(
            out,
            "  {} -- {} [taillabel=\"{}\", headlabel=\"{}\"];",
            quote(&a.name),
            quote(&b.name),
            link.a.port,
            link.b.port
        );
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn one_edge_per_cable_and_one_cluster_per_rack() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        let dot = write_dot(&fabric);
        assert_eq!(dot.matches(" -- ").count(), fabric.links().len());
        assert_eq!(dot.matches("subgraph \"cluster_rack").count(), 5);
        assert!(dot.contains("\"sw0-0-0\" -- \"sw1-0-0\" [taillabel=\"1\", headlabel=\"1\"];"));
    }
}
