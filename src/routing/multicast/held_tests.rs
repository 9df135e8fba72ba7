//! Trees read back from the entries the switches hold: the trees built over every fabric family
//! come back exactly (same entries, a root with the rank rule); entries that are no tree, or no
//! longer one over the cables there are, come back as none; and a tree comes back under an
//! order exactly when it is unimodal in it (the valley checker as the oracle).

use super::tests::{fabric, host_ports, member_sets};
use super::*;
use crate::topology::Fabric;

/// Every tree built for the member sets of `fabric` (with the routing's order, or none), one
/// after another on shared loads, as entries.
fn built(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
) -> Vec<(Vec<MemberPort>, MulticastTree)> {
    let mut load = CableLoad::new(fabric, graph);
    member_sets(fabric, 5)
        .iter()
        .map(|set| {
            let (members, _) = member_ports(fabric, graph, set);
            let tree = build_tree(graph, order, &members, &mut load);
            (members, tree)
        })
        .filter(|(_, tree)| tree.root.is_some())
        .collect()
}

fn trees_come_back(spec: &str, with_order: bool) {
    let fabric = fabric(spec);
    let graph = RoutingGraph::new(&fabric);
    let order = with_order.then(|| CableOrder::for_routing(&graph, 1));
    let order = order.as_ref();
    let load = CableLoad::new(&fabric, &graph);
    for (i, (members, tree)) in built(&fabric, &graph, order).iter().enumerate() {
        let entries = tree.forwarding();
        let back = held_tree(&fabric, &graph, order, &entries, &load)
            .unwrap_or_else(|| panic!("{spec} tree {i}: not read back"));
        assert_eq!(back.forwarding(), entries, "{spec} tree {i}");
        assert_eq!(
            back.switches().len(),
            tree.switches().len(),
            "{spec} tree {i}"
        );
        let mut kept = back.members.clone();
        kept.sort_unstable();
        assert_eq!(&kept, members, "{spec} tree {i}: its members");
        if let Some(order) = order {
            assert!(tree_is_unimodal(order, &back), "{spec} tree {i}");
        }
        // Kept from the tree read back with the same members, the tree is the one built.
        let mut extended_load = load.clone();
        let kept = extend_tree(&graph, order, &back, members, &mut extended_load)
            .unwrap_or_else(|| panic!("{spec} tree {i}: not kept"));
        assert_eq!(kept.forwarding(), entries, "{spec} tree {i}: kept");
    }
}

#[test]
fn slim_fly_q5_trees_come_back_from_their_entries() {
    trees_come_back("slimfly:q=5", true);
}

#[test]
fn mlfm_d3_trees_come_back_from_their_entries() {
    trees_come_back("mlfm:d=3", true);
}

#[test]
fn fat_tree_trees_with_parallel_cables_come_back_from_their_entries() {
    trees_come_back(
        "fattree:leaves=6,spines=3,links-per-pair=2,hosts-per-leaf=4",
        true,
    );
}

#[test]
fn random_fabric_trees_come_back_from_their_entries() {
    trees_come_back("random:switches=24,degree=5,hosts=3,seed=2", true);
}

#[test]
fn trees_without_an_order_come_back_from_their_entries() {
    trees_come_back("slimfly:q=5", false);
}

/// Shortest-path trees (built without regard to any order) in random orders, where valleys
/// are common: read back under the order exactly when no path through them has a valley.
#[test]
fn a_tree_comes_back_under_an_order_exactly_when_it_is_unimodal() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let load = CableLoad::new(&fabric, &graph);
    let (mut unimodal, mut valley) = (0, 0);
    for (i, (_, tree)) in built(&fabric, &graph, None).iter().enumerate() {
        let order = CableOrder::random(&graph, i as u64);
        let back = held_tree(&fabric, &graph, Some(&order), &tree.forwarding(), &load);
        let is_unimodal = tree_is_unimodal(&order, tree);
        assert_eq!(back.is_some(), is_unimodal, "tree {i}");
        unimodal += usize::from(is_unimodal);
        valley += usize::from(!is_unimodal);
    }
    assert!(
        unimodal > 0 && valley > 0,
        "{unimodal} unimodal, {valley} with a valley"
    );
}

#[test]
fn entries_over_a_lost_cable_are_no_tree() {
    let whole = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&whole);
    let order = CableOrder::for_routing(&graph, 1);
    let mut load = CableLoad::new(&whole, &graph);
    let (members, _) = member_ports(&whole, &graph, &host_ports(&whole));
    let tree = build_tree(&graph, Some(&order), &members, &mut load);
    let lost = tree.cables[tree.cables.len() / 2];
    let lost_port = PortRef {
        node: graph.nodes[lost.parent],
        port: lost.parent_port,
    };
    let damaged = whole.after_losses(
        |_| false,
        |l| {
            let link = whole.link(l);
            link.a == lost_port || link.b == lost_port
        },
    );
    let damaged_graph = RoutingGraph::new(&damaged);
    // The same switches, in the same order: the entries keep their indices.
    assert_eq!(damaged_graph.nodes, graph.nodes);
    let order = CableOrder::for_routing(&damaged_graph, 1);
    let load = CableLoad::new(&damaged, &damaged_graph);
    assert!(
        held_tree(
            &damaged,
            &damaged_graph,
            Some(&order),
            &tree.forwarding(),
            &load
        )
        .is_none()
    );
    assert!(held_tree(&damaged, &damaged_graph, None, &tree.forwarding(), &load).is_none());
}

#[test]
fn entries_with_a_cycle_are_no_tree() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (members, _) = member_ports(&fabric, &graph, &host_ports(&fabric));
    let tree = build_tree(&graph, None, &members, &mut load);
    assert_eq!(
        tree.switches().len(),
        graph.len(),
        "the tree spans every switch"
    );
    // One more cable, between two tree switches (all are): a cycle.
    let extra = (0..graph.edge_count())
        .find(|&e| {
            let (a, b) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
            !tree
                .cables
                .iter()
                .any(|c| (c.child, c.parent) == (a, b) || (c.child, c.parent) == (b, a))
        })
        .expect("a Slim Fly has cables outside any spanning tree");
    let cable = load
        .cable_through(
            &graph,
            graph.edge_from[extra] as usize,
            graph.edge_to[extra] as usize,
            graph.ports(extra)[0],
        )
        .expect("a cable of the edge");
    let mut entries = tree.forwarding();
    for (s, ports) in &mut entries {
        if *s == cable.parent {
            ports.push(cable.parent_port);
        }
        if *s == cable.child {
            ports.push(cable.child_port);
        }
        ports.sort_unstable();
    }
    assert!(held_tree(&fabric, &graph, None, &entries, &load).is_none());
    assert!(held_tree(&fabric, &graph, None, &tree.forwarding(), &load).is_some());
}

#[test]
fn an_entry_that_sends_to_a_switch_that_does_not_send_back_is_no_tree() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (members, _) = member_ports(&fabric, &graph, &host_ports(&fabric)[..20]);
    let tree = build_tree(&graph, None, &members, &mut load);
    let leaf = tree.cables.last().expect("a tree of several switches");
    let mut entries = tree.forwarding();
    for (s, ports) in &mut entries {
        if *s == leaf.child {
            ports.retain(|&p| p != leaf.child_port);
        }
    }
    assert!(held_tree(&fabric, &graph, None, &entries, &load).is_none());
    assert!(held_tree(&fabric, &graph, None, &[], &load).is_none());
}
