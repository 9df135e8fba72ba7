//! Trees kept through membership changes: after every join and leave of a long random
//! sequence, the new tree spans exactly the members (as a tree built afresh would), and the
//! old and the new tree lie in one tree with the rank rule, so that no mixture of their
//! entries lets a copy circle or fall and rise again.

use super::tests::{assert_tree, fabric, host_ports};
use super::*;
use crate::rng::Rng;

/// The old and the new tree as one: every cable either has, oriented from the old root. An
/// error unless the cables form a tree (as many switches as cables plus one, all connected)
/// and, with an order, one without a valley.
fn one_tree(
    order: Option<&CableOrder>,
    old: &MulticastTree,
    new: &MulticastTree,
) -> Result<(), String> {
    let mut cables: Vec<TreeCable> = old.cables.clone();
    for c in &new.cables {
        if !cables.iter().any(|o| o.cable == c.cable) {
            cables.push(*c);
        }
    }
    let mut switches: Vec<usize> = old.switches();
    switches.extend(new.switches());
    switches.sort_unstable();
    switches.dedup();
    if cables.len() + 1 != switches.len() {
        return Err(format!(
            "{} cables on {} switches: a cycle",
            cables.len(),
            switches.len()
        ));
    }
    // Orient every cable away from the old root, parents first.
    let root = old.root.expect("a tree");
    let mut oriented = Vec::with_capacity(cables.len());
    let mut reached = vec![root];
    let mut i = 0;
    while i < reached.len() {
        let v = reached[i];
        i += 1;
        for c in &cables {
            let (child, flipped) = match (c.parent == v, c.child == v) {
                (true, _) => (c.child, false),
                (_, true) => (c.parent, true),
                _ => continue,
            };
            if reached.contains(&child) {
                continue;
            }
            reached.push(child);
            oriented.push(if flipped {
                TreeCable {
                    child: c.parent,
                    parent: c.child,
                    child_port: c.parent_port,
                    parent_port: c.child_port,
                    up: c.down,
                    down: c.up,
                    cable: c.cable,
                }
            } else {
                *c
            });
        }
    }
    if reached.len() != switches.len() {
        return Err("not connected".to_string());
    }
    if let Some(order) = order {
        let union = MulticastTree {
            root: Some(root),
            cables: oriented,
            members: Vec::new(),
            unreached: Vec::new(),
            coverage: Coverage::Unimodal,
        };
        if let Some(valley) = tree_valley(order, &union) {
            return Err(format!("a valley {valley:?}"));
        }
    }
    Ok(())
}

/// Joins and leaves on `spec`: `steps` changes of a group that starts with a tenth of the
/// hosts, each adding and removing a few random hosts, beside a broadcast group on the same
/// loads. Returns how many changes the kept tree could not follow, and after how many the
/// tree built afresh (as before trees were kept) would not lie in one tree with the old one.
fn joins_and_leaves(spec: &str, order: bool, steps: usize) -> (usize, usize) {
    let fabric = fabric(spec);
    let graph = RoutingGraph::new(&fabric);
    let order = order.then(|| CableOrder::for_routing(&graph, 1));
    let order = order.as_ref();
    let hosts = host_ports(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (all, _) = member_ports(&fabric, &graph, &hosts);
    build_tree(&graph, order, &all, &mut load);
    let mut rng = Rng::new(3);
    let mut set: Vec<PortRef> = hosts.iter().copied().step_by(10).collect();
    let (members, _) = member_ports(&fabric, &graph, &set);
    let mut tree = build_tree(&graph, order, &members, &mut load);
    let (mut afresh, mut apart) = (0, 0);
    for step in 0..steps {
        for _ in 0..1 + rng.below(3) {
            let h = hosts[rng.below(hosts.len() as u64) as usize];
            if !set.contains(&h) {
                set.push(h);
            }
        }
        for _ in 0..rng.below(3) {
            if set.len() > 2 {
                set.swap_remove(rng.below(set.len() as u64) as usize);
            }
        }
        let (members, _) = member_ports(&fabric, &graph, &set);
        load.remove(&tree);
        let what = format!("{spec} step {step}");
        let fresh = build_tree(&graph, order, &members, &mut load.clone());
        apart += usize::from(one_tree(order, &tree, &fresh).is_err());
        let new = match extend_tree(&graph, order, &tree, &members, &mut load) {
            Some(new) => {
                if let Err(e) = one_tree(order, &tree, &new) {
                    panic!("{what}: {e}");
                }
                new
            }
            None => {
                afresh += 1;
                build_tree(&graph, order, &members, &mut load)
            }
        };
        assert_tree(&fabric, &graph, order, &members, &new, &what);
        tree = new;
    }
    (afresh, apart)
}

#[test]
fn slim_fly_q5_trees_follow_joins_and_leaves_inside_one_tree() {
    let (afresh, apart) = joins_and_leaves("slimfly:q=5", true, 60);
    eprintln!("slimfly:q=5: {afresh} of 60 changes built afresh; afresh every time, {apart} apart");
    assert!(afresh < 30, "{afresh} of 60 changes built afresh");
    assert!(
        apart > 0,
        "trees built afresh make cycles with the old ones"
    );
}

#[test]
fn mlfm_d3_trees_follow_joins_and_leaves_inside_one_tree() {
    let (afresh, apart) = joins_and_leaves("mlfm:d=3", true, 60);
    eprintln!("mlfm:d=3: {afresh} of 60 changes built afresh; afresh every time, {apart} apart");
    assert!(afresh < 30, "{afresh} of 60 changes built afresh");
}

#[test]
fn random_fabric_trees_follow_joins_and_leaves_inside_one_tree() {
    let (afresh, apart) = joins_and_leaves("random:switches=24,degree=5,hosts=3,seed=2", true, 60);
    eprintln!("random: {afresh} of 60 changes built afresh; afresh every time, {apart} apart");
    assert!(afresh < 30, "{afresh} of 60 changes built afresh");
}

#[test]
fn without_an_order_trees_follow_joins_and_leaves_inside_one_tree() {
    let (afresh, _) = joins_and_leaves("slimfly:q=5", false, 60);
    assert_eq!(
        afresh, 0,
        "without the rank rule every member can be reached"
    );
}

#[test]
fn a_group_that_left_every_kept_switch_is_built_afresh() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let order = CableOrder::for_routing(&graph, 1);
    let hosts = host_ports(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (first, _) = member_ports(&fabric, &graph, &hosts[..2]);
    let tree = build_tree(&graph, Some(&order), &first, &mut load);
    load.remove(&tree);
    let (all, _) = member_ports(&fabric, &graph, &hosts);
    let mut members: Vec<MemberPort> = all
        .into_iter()
        .filter(|m| !tree.switches().contains(&m.switch))
        .collect();
    members.truncate(2);
    assert!(extend_tree(&graph, Some(&order), &tree, &members, &mut load).is_none());
}

#[test]
fn the_next_tree_is_the_same_kept_or_new_as_the_members_say() {
    let fabric = fabric("slimfly:q=5");
    let graph = RoutingGraph::new(&fabric);
    let order = CableOrder::for_routing(&graph, 1);
    let hosts = host_ports(&fabric);
    let mut load = CableLoad::new(&fabric, &graph);
    let (members, _) = member_ports(&fabric, &graph, &hosts[..40]);
    let (first, origin) = next_tree(&graph, Some(&order), None, &members, &mut load);
    assert_eq!(origin, TreeOrigin::New);
    let counted = load.clone();
    load.remove(&first);
    let old = Some((members.clone(), first.clone()));
    let (same, origin) = next_tree(&graph, Some(&order), old, &members, &mut load);
    assert_eq!((same, origin), (first.clone(), TreeOrigin::Same));
    assert_eq!(load, counted, "counted once");
    load.remove(&first);
    let (more, _) = member_ports(&fabric, &graph, &hosts[..60]);
    let old = Some((members, first.clone()));
    let (grown, origin) = next_tree(&graph, Some(&order), old, &more, &mut load);
    assert_eq!(origin, TreeOrigin::Extended);
    one_tree(Some(&order), &first, &grown).unwrap();
}
