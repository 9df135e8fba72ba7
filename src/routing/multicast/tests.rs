//! Every tree is a tree over single cables, spans exactly its members without useless
//! branches, and — with a cable order, whole or repaired — has only unimodal paths; checked
//! on each fabric family for many member sets built one after another on shared cable loads.

use super::*;
use crate::rng::Rng;
use crate::routing::graph::FAR;
use crate::routing::layered::route_in_order;
use crate::routing::repair::{Previous, repair};
use crate::routing::{RoutingConfig, Turns};
use crate::topology::{NodeId, TopologySpec};

pub(super) fn fabric(spec: &str) -> Fabric {
    spec.parse::<TopologySpec>().unwrap().build().unwrap()
}

/// The host ports of `fabric` (every host's port 1 and beyond that is cabled).
pub(super) fn host_ports(fabric: &Fabric) -> Vec<PortRef> {
    fabric
        .hosts()
        .flat_map(|h| {
            (1..=fabric.node(h).num_ports())
                .map(move |port| PortRef { node: h, port })
                .filter(|&p| fabric.peer(p).is_some())
        })
        .collect()
}

/// The member sets a test builds trees for, in order: all hosts; a few random hosts, many
/// times (some with a member switch); the hosts of one switch; one host.
pub(super) fn member_sets(fabric: &Fabric, seed: u64) -> Vec<Vec<PortRef>> {
    let hosts = host_ports(fabric);
    let switches: Vec<NodeId> = fabric.switches().collect();
    let mut rng = Rng::new(seed);
    let mut sets = vec![hosts.clone()];
    for i in 0..40 {
        let mut shuffled = hosts.clone();
        rng.shuffle(&mut shuffled);
        let count = 2 + rng.below(10) as usize;
        let mut set: Vec<PortRef> = shuffled.into_iter().take(count).collect();
        if i % 4 == 0 {
            let s = switches[rng.below(switches.len() as u64) as usize];
            set.push(PortRef { node: s, port: 0 });
        }
        sets.push(set);
    }
    let first_switch = fabric.peer(hosts[0]).unwrap().node;
    sets.push(
        hosts
            .iter()
            .copied()
            .filter(|&h| fabric.peer(h).unwrap().node == first_switch)
            .collect(),
    );
    sets.push(vec![hosts[hosts.len() / 2]]);
    sets
}

/// The tree's cables from switch s up to the root, as (up edge, down edge) pairs.
fn chain_to_root(tree: &MulticastTree, s: usize) -> Vec<(usize, usize)> {
    let mut chain = Vec::new();
    let mut v = s;
    while let Some(c) = tree.cables.iter().find(|c| c.child == v) {
        chain.push((c.up, c.down));
        v = c.parent;
    }
    chain
}

/// The edges of the tree path from a to b, in travel order.
fn tree_path(tree: &MulticastTree, a: usize, b: usize) -> Vec<usize> {
    let (up, down) = (chain_to_root(tree, a), chain_to_root(tree, b));
    // Drop the common part above the lowest common ancestor.
    let common = up
        .iter()
        .rev()
        .zip(down.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let climb = up[..up.len() - common].iter().map(|&(u, _)| u);
    let descend = down[..down.len() - common].iter().rev().map(|&(_, d)| d);
    climb.chain(descend).collect()
}

/// Asserts that `tree` is a tree of single cables over `graph` spanning exactly the switches
/// of `members` (and the switches between them), and, with an order, that every path between
/// two member switches is unimodal — by the checker and by walking each path.
pub(super) fn assert_tree(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    members: &[MemberPort],
    tree: &MulticastTree,
    what: &str,
) {
    assert!(
        tree.unreached.is_empty(),
        "{what}: unreached {:?}",
        tree.unreached
    );
    let mut expected = members.to_vec();
    expected.sort_unstable();
    assert_eq!(tree.members, expected, "{what}: members");
    let root = tree.root.expect("a tree with members has a root");
    // Parents before children, each switch once: connected and acyclic.
    let mut seen = vec![false; graph.len()];
    seen[root] = true;
    for c in &tree.cables {
        assert!(
            seen[c.parent],
            "{what}: {c:?} hangs below a switch not yet in the tree"
        );
        assert!(!seen[c.child], "{what}: switch {} twice", c.child);
        seen[c.child] = true;
        assert_eq!(
            graph.edge_between(c.parent, c.child),
            Some(c.down),
            "{what}"
        );
        assert_eq!(graph.edge_between(c.child, c.parent), Some(c.up), "{what}");
        let far = fabric.peer(PortRef {
            node: graph.nodes[c.parent],
            port: c.parent_port,
        });
        let child_end = PortRef {
            node: graph.nodes[c.child],
            port: c.child_port,
        };
        assert_eq!(far, Some(child_end), "{what}: the two ports are one cable");
    }
    for m in members {
        assert!(
            seen[m.switch],
            "{what}: member switch {} left out",
            m.switch
        );
    }
    // No useless leaf: every switch with at most one tree cable is a member switch.
    let mut degree = vec![0usize; graph.len()];
    for c in &tree.cables {
        degree[c.parent] += 1;
        degree[c.child] += 1;
    }
    for s in tree.switches() {
        if degree[s] <= 1 {
            assert!(
                members.iter().any(|m| m.switch == s),
                "{what}: leaf {s} is no member switch"
            );
        }
    }
    // Each forwarding entry reaches each neighbour once.
    for (s, ports) in tree.forwarding() {
        let mut neighbours: Vec<NodeId> = ports
            .iter()
            .filter(|&&p| p != 0)
            .map(|&port| {
                fabric
                    .peer(PortRef {
                        node: graph.nodes[s],
                        port,
                    })
                    .expect("a cabled port")
                    .node
            })
            .collect();
        let count = neighbours.len();
        neighbours.sort_unstable();
        neighbours.dedup();
        assert_eq!(
            neighbours.len(),
            count,
            "{what}: switch {s} sends twice to a neighbour"
        );
    }
    let Some(order) = order else { return };
    assert_eq!(tree.coverage, Coverage::Unimodal, "{what}");
    assert_eq!(tree_valley(order, tree), None, "{what}");
    let mut switches: Vec<usize> = members.iter().map(|m| m.switch).collect();
    switches.dedup();
    for &a in &switches {
        for &b in switches.iter().filter(|&&b| b != a) {
            let path = tree_path(tree, a, b);
            assert!(
                order.is_unimodal(&path),
                "{what}: {a} -> {b} is a valley: {path:?}"
            );
        }
    }
}

/// Builds and checks a tree for every member set of `fabric` in `order`, on shared loads.
fn assert_trees(fabric: &Fabric, graph: &RoutingGraph, order: Option<&CableOrder>, what: &str) {
    let mut load = CableLoad::new(fabric, graph);
    for (i, set) in member_sets(fabric, 7).iter().enumerate() {
        let (members, unattached) = member_ports(fabric, graph, set);
        assert!(unattached.is_empty());
        let tree = build_tree(graph, order, &members, &mut load);
        assert_tree(
            fabric,
            graph,
            order,
            &members,
            &tree,
            &format!("{what} set {i}"),
        );
    }
}

fn assert_trees_in_the_routing_order(spec: &str) {
    let fabric = fabric(spec);
    let graph = RoutingGraph::new(&fabric);
    for seed in [1, 2] {
        let order = CableOrder::for_routing(&graph, seed);
        assert_trees(
            &fabric,
            &graph,
            Some(&order),
            &format!("{spec} seed {seed}"),
        );
    }
}

#[test]
fn trees_are_unimodal_on_slim_fly_q5() {
    assert_trees_in_the_routing_order("slimfly:q=5");
}

#[test]
fn trees_are_unimodal_on_slim_fly_q7() {
    assert_trees_in_the_routing_order("slimfly:q=7");
}

#[test]
fn trees_are_unimodal_on_mlfm_d3() {
    assert_trees_in_the_routing_order("mlfm:d=3");
}

#[test]
fn trees_are_unimodal_on_lsft_n3() {
    assert_trees_in_the_routing_order("lsft:n=3");
}

#[test]
fn trees_are_unimodal_on_a_fat_tree_with_parallel_cables() {
    assert_trees_in_the_routing_order(
        "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18",
    );
}

#[test]
fn trees_are_unimodal_on_a_random_regular_fabric() {
    assert_trees_in_the_routing_order("random:switches=40,degree=5,hosts=3,seed=1");
}

#[test]
fn trees_without_an_order_are_shortest_path_trees() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    assert_trees(&fabric, &graph, None, "slimfly:q=5 without order");
    let mut load = CableLoad::new(&fabric, &graph);
    let (members, _) = member_ports(&fabric, &graph, &host_ports(&fabric));
    let tree = build_tree(&graph, None, &members, &mut load);
    assert_eq!(tree.coverage, Coverage::NoOrder);
    // Every switch at its distance from the root.
    let root = tree.root.unwrap();
    for c in &tree.cables {
        assert_eq!(
            chain_to_root(&tree, c.child).len(),
            usize::from(graph.dist(c.child, root))
        );
    }
}

/// `whole` without every `every`-th switch-to-switch cable, its graph, and the old switch of
/// each new one.
fn damaged(whole: &Fabric, every: usize) -> (Fabric, RoutingGraph, Vec<Option<usize>>) {
    let mut ordinal = 0;
    let cut: Vec<bool> = whole
        .links()
        .iter()
        .map(|l| {
            let between = whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch();
            ordinal += usize::from(between);
            between && ordinal % every == 0
        })
        .collect();
    let fabric = whole.after_losses(|_| false, |l| cut[l.0 as usize]);
    let old = RoutingGraph::new(whole);
    let graph = RoutingGraph::new(&fabric);
    let old_of = graph
        .nodes
        .iter()
        .map(|&id| {
            let old_id = whole.node_by_guid(fabric.node(id).guid)?;
            Some(old.index_of[old_id.index()] as usize)
        })
        .collect();
    (fabric, graph, old_of)
}

fn assert_trees_in_the_repaired_order(spec: &str, every: usize) {
    let whole = fabric(spec);
    let graph = RoutingGraph::new(&whole);
    let config = RoutingConfig {
        layers: 2,
        turns: Turns::Unimodal,
        seed: 3,
        ..RoutingConfig::default()
    };
    let order = CableOrder::for_routing(&graph, config.seed);
    let layers = route_in_order(&graph, &config, Some(&order));
    let (fabric, damaged_graph, old_of) = damaged(&whole, every);
    let previous = Previous {
        graph: &graph,
        layers: &layers,
        order: Some(&order),
    };
    let repaired = repair(&previous, &damaged_graph, &old_of, &config);
    assert_eq!(
        repaired.report.full_routing, None,
        "{spec}: repaired in the old order"
    );
    let order = repaired.order.expect("the repair keeps an order");
    // Member switches the damage cut off from the rest cannot share a tree.
    let connected = |sets: &[PortRef]| {
        let (m, _) = member_ports(&fabric, &damaged_graph, sets);
        m.iter().all(|a| {
            m.iter()
                .all(|b| damaged_graph.dist(a.switch, b.switch) != FAR)
        })
    };
    assert!(
        connected(&host_ports(&fabric)),
        "{spec}: the damage splits the fabric"
    );
    assert_trees(
        &fabric,
        &damaged_graph,
        Some(&order),
        &format!("{spec} without every {every}th cable"),
    );
}

#[test]
fn trees_are_unimodal_in_the_repaired_order_of_slim_fly_q5() {
    assert_trees_in_the_repaired_order("slimfly:q=5", 9);
}

#[test]
fn trees_are_unimodal_in_the_repaired_order_of_mlfm_d3() {
    assert_trees_in_the_repaired_order("mlfm:d=3", 7);
}

#[test]
fn removing_a_tree_gives_its_cables_back() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let order = CableOrder::for_routing(&graph, 1);
    let mut load = CableLoad::new(&fabric, &graph);
    let (members, _) = member_ports(&fabric, &graph, &host_ports(&fabric));
    let tree = build_tree(&graph, Some(&order), &members, &mut load);
    assert_eq!(
        load.groups().iter().sum::<u32>() as usize,
        tree.cables.len()
    );
    assert_eq!(tree.cables.len(), graph.len() - 1, "every switch has hosts");
    load.remove(&tree);
    assert!(load.groups().iter().all(|&g| g == 0));
}

#[test]
fn no_members_no_tree() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let tree = build_tree(&graph, None, &[], &mut load);
    assert_eq!(tree.root, None);
    assert!(tree.forwarding().is_empty());
}

/// The checker against walking every member-to-member path, on shortest-path trees (made
/// without regard to any order) in random orders, where valleys are common.
#[test]
fn the_checker_finds_exactly_the_trees_with_a_valley() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (mut with_valley, mut without) = (0, 0);
    for (i, set) in member_sets(&fabric, 11).iter().enumerate() {
        let (members, _) = member_ports(&fabric, &graph, set);
        let tree = build_tree(&graph, None, &members, &mut load);
        let order = CableOrder::random(&graph, i as u64);
        let mut switches: Vec<usize> = members.iter().map(|m| m.switch).collect();
        switches.dedup();
        let walked = switches.iter().all(|&a| {
            switches
                .iter()
                .filter(|&&b| b != a)
                .all(|&b| order.is_unimodal(&tree_path(&tree, a, b)))
        });
        assert_eq!(tree_is_unimodal(&order, &tree), walked, "set {i}");
        if walked {
            without += 1;
        } else {
            with_valley += 1;
        }
    }
    assert!(
        with_valley > 0 && without > 0,
        "{with_valley} with, {without} without"
    );
}
