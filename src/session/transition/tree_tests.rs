//! The multicast trees of a staged change, one case per test. Every pass is checked twice:
//! by the transition verifier with the trees (every mixture of forwarding entries, SL-to-VL
//! tables and tree entries deadlock-free for every SL), and by brute force for copies that
//! circle for ever (every walk a copy can take through the union of the two passes' entries).

use super::tests::{
    config, fabric, full_and_repaired, lanes, port_pair, random_cuts, without_cable,
};
use super::*;
use crate::deadlock::verify::{After, Before, Multicast, verify_transition};
use crate::deadlock::{DefaultSl, RouteSls, Sl2VlTables, VerifyOptions};
use crate::routing::multicast::{group_tables, kept_group_tables};
use crate::session::{Routed, repair, route};
use crate::topology::PortRef;

/// Three groups as a cluster has them: every host (IPoIB broadcast), the first third of the
/// hosts, and every fifth host.
fn groups(fabric: &Fabric) -> Vec<(u16, Vec<PortRef>)> {
    let hosts: Vec<PortRef> = fabric
        .hosts()
        .map(|node| PortRef { node, port: 1 })
        .collect();
    vec![
        (0xc000, hosts.clone()),
        (0xc001, hosts[..hosts.len() / 3].to_vec()),
        (0xc002, hosts.iter().copied().step_by(5).collect()),
    ]
}

/// The trees of `groups` over `routed`, as the plugin builds them after a routing.
fn trees(routed: &Routed, groups: &[(u16, Vec<PortRef>)]) -> MulticastTables {
    let basis = &routed.multicast;
    group_tables(&basis.fabric, &basis.graph, basis.order.as_ref(), groups)
}

/// Forwarding, lanes and trees as the switches hold them or a pass writes them.
type Held = (ForwardingTables, Sl2VlTables, MulticastTables);

/// The transition verifier's verdict on the change `old` → `new` on `fabric`, trees included.
fn proven(fabric: &Fabric, old: &Held, new: &Held) -> bool {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let sls = BTreeMap::new();
    verify_transition(
        fabric,
        &lids,
        &Before {
            tables: &old.0,
            sl2vl: &old.1,
            multicast: Some(&old.2),
        },
        &After {
            tables: &new.0,
            path_sl: &DefaultSl(0),
            sl2vl: &new.1,
            multicast: Some(&Multicast {
                tables: &new.2,
                sls: &sls,
                default_sl: 0,
            }),
        },
        &VerifyOptions {
            sls: RouteSls::EverySl,
            ..VerifyOptions::default()
        },
    )
    .is_safe()
}

/// Whether a copy can circle for ever while the switches go from `old` to `new`: a copy at a
/// switch leaves on every port of the switch's old or new entry (or a part of each) but the
/// one it came in on. Brute force over the states (switch, port it came in on): a copy
/// circles if and only if the states it can reach hold a cycle.
fn replication_loops(fabric: &Fabric, old: &MulticastTables, new: &MulticastTables) -> bool {
    let mut mlids = old.mlids();
    mlids.extend(new.mlids());
    mlids.sort_unstable();
    mlids.dedup();
    mlids.into_iter().any(|mlid| {
        let union = |s: NodeId| {
            let (a, b) = (old.ports(s, mlid), new.ports(s, mlid));
            let mut ports: Vec<u8> = a.iter().chain(b.iter()).flat_map(|p| p.iter()).collect();
            ports.sort_unstable();
            ports.dedup();
            ports
        };
        // States: (switch, port it came in on); edges: one per port the copy leaves on towards
        // another switch.
        let next = |(s, came_in): (NodeId, u8)| -> Vec<(NodeId, u8)> {
            union(s)
                .into_iter()
                .filter(|&p| p != came_in)
                .filter_map(|port| fabric.peer(PortRef { node: s, port }))
                .filter(|far| fabric.node(far.node).is_switch())
                .map(|far| (far.node, far.port))
                .collect()
        };
        // Depth-first search for a cycle: 1 on the current path, 2 done.
        let mut colour: HashMap<(NodeId, u8), u8> = HashMap::new();
        fabric.switches().any(|s| {
            (0..=fabric.node(s).num_ports()).any(|p| has_cycle((s, p), &next, &mut colour))
        })
    })
}

fn has_cycle(
    state: (NodeId, u8),
    next: &dyn Fn((NodeId, u8)) -> Vec<(NodeId, u8)>,
    colour: &mut HashMap<(NodeId, u8), u8>,
) -> bool {
    match colour.get(&state) {
        Some(1) => return true,
        Some(_) => return false,
        None => {}
    }
    colour.insert(state, 1);
    let cycle = next(state).into_iter().any(|n| has_cycle(n, next, colour));
    colour.insert(state, 2);
    cycle
}

/// Follows a change as the subnet manager writes it, each pass staged afresh from what the
/// switches hold, until they hold `target`. Every pass is proven by the verifier (trees
/// included) and free of circling copies. Returns the passes and the entries the trees shrank.
fn follow(fabric: &Fabric, held: &Held, target: &Held, what: &str) -> (usize, usize) {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let mut now = held.clone();
    let (mut passes, mut shrunk) = (0, 0);
    loop {
        assert!(passes < 5, "{what}: more than 5 passes");
        let staging = stage_with_proof(
            fabric,
            &lids,
            Tables {
                forwarding: &now.0,
                lanes: &now.1,
                trees: &now.2,
            },
            Tables {
                forwarding: &target.0,
                lanes: &target.1,
                trees: &target.2,
            },
            true,
        );
        let next = match (&staging.first_pass, &staging.first_trees) {
            (None, _) => target.clone(),
            (Some(first), Some(trees)) => {
                let lanes = if staging.lanes_pass {
                    &target.1
                } else {
                    &now.1
                };
                (first.clone(), lanes.clone(), trees.clone())
            }
            (Some(_), None) => panic!("{what}: a first pass without its trees"),
        };
        if now == next {
            break;
        }
        passes += 1;
        shrunk += staging.trees_shrunk;
        assert!(
            !replication_loops(fabric, &now.2, &next.2),
            "{what}: pass {passes}: a copy can circle"
        );
        assert!(
            staging.last_pass_unproven || proven(fabric, &now, &next),
            "{what}: pass {passes} not proven with its trees"
        );
        now = next;
        if staging.first_pass.is_none() {
            break;
        }
    }
    assert_eq!(now.0, target.0, "{what}: the forwarding ends as the target");
    assert_eq!(now.2, target.2, "{what}: the trees end as the target");
    (passes, shrunk)
}

/// Slim Fly q = 5 routed in full, and the routing repaired after losing switch cable `n`,
/// with the groups' trees over both.
fn repaired_with_trees(n: usize) -> (Fabric, Held, Held) {
    let whole = fabric("slimfly:q=5");
    let full = route(whole.clone(), &config(1), &port_pair()).unwrap();
    let damaged = without_cable(&whole, n);
    let fixed = repair(&full, damaged.clone(), &config(1), &port_pair(), false)
        .unwrap()
        .expect("repairable");
    let groups = groups(&whole);
    let held = (full.tables.clone(), lanes(&full), trees(&full, &groups));
    let target = (fixed.tables.clone(), lanes(&fixed), trees(&fixed, &groups));
    (damaged, held, target)
}

#[test]
fn trees_rebuilt_with_the_drop_pass_of_a_repair_can_circle_and_deadlock() {
    // What the plugin did before the trees were staged: the drop pass's forwarding and the
    // new trees written together.
    let (mut unsafe_cuts, mut circling) = (0, 0);
    for n in 0..12 {
        let (damaged, held, target) = repaired_with_trees(n);
        let lids = LidTable::from_fabric(&damaged).unwrap();
        let drop = stage(&damaged, &lids, &held.0, &target.0);
        let first = drop.first_pass.unwrap_or_else(|| held.0.clone());
        let at_once_trees = (first, held.1.clone(), target.2.clone());
        unsafe_cuts += usize::from(!proven(&damaged, &held, &at_once_trees));
        circling += usize::from(replication_loops(&damaged, &held.2, &target.2));
    }
    eprintln!(
        "12 cuts: the new trees with the drop pass are not proven after {unsafe_cuts}, copies \
         can circle after {circling}"
    );
    assert!(unsafe_cuts > 0, "else this test proves nothing");
}

/// The trees of `groups` over `routed`, kept from the `held` ones where they still are trees
/// of its routing, as the plugin builds them after a routing change.
fn kept_trees(
    routed: &Routed,
    groups: &[(u16, Vec<PortRef>)],
    held: &MulticastTables,
) -> MulticastTables {
    let basis = &routed.multicast;
    kept_group_tables(
        &basis.fabric,
        &basis.graph,
        basis.order.as_ref(),
        groups,
        held,
    )
}

/// The (switch, MLID) entries that differ between `a` and `b`.
fn changed_entries(a: &MulticastTables, b: &MulticastTables) -> usize {
    let mut keys: Vec<(NodeId, u16)> = Vec::new();
    for t in [a, b] {
        for s in t.switches() {
            keys.extend(t.table(s).map(|(mlid, _)| (s, mlid)));
        }
    }
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter(|&(s, mlid)| a.ports(s, mlid) != b.ports(s, mlid))
        .count()
}

/// The groups of [`groups`] after members of the third joined and left: every fifth host
/// from the tenth on, and every seventh.
fn groups_after_joins_and_leaves(fabric: &Fabric) -> Vec<(u16, Vec<PortRef>)> {
    let mut groups = groups(fabric);
    let hosts: Vec<PortRef> = fabric
        .hosts()
        .map(|node| PortRef { node, port: 1 })
        .collect();
    let mut third: Vec<PortRef> = hosts.iter().copied().step_by(5).skip(2).collect();
    third.extend(hosts.iter().copied().step_by(7));
    third.sort_unstable();
    third.dedup();
    groups[2].1 = third;
    groups
}

#[test]
fn trees_kept_through_a_repair_change_less_and_every_pass_is_proven() {
    let whole = fabric("slimfly:q=5");
    let full = route(whole.clone(), &config(1), &port_pair()).unwrap();
    // The trees as the switches hold them after members joined and left (kept each time).
    let before = trees(&full, &groups(&whole));
    let groups = groups_after_joins_and_leaves(&whole);
    let held_trees = kept_trees(&full, &groups, &before);
    let (mut fresh_changed, mut kept_changed, mut kept_unchanged) = (0, 0, 0);
    for n in 0..12 {
        let damaged = without_cable(&whole, n);
        let fixed = repair(&full, damaged.clone(), &config(1), &port_pair(), false)
            .unwrap()
            .expect("repairable");
        let held = (full.tables.clone(), lanes(&full), held_trees.clone());
        let fresh = (fixed.tables.clone(), lanes(&fixed), trees(&fixed, &groups));
        let kept = (
            fixed.tables.clone(),
            lanes(&fixed),
            kept_trees(&fixed, &groups, &held.2),
        );
        follow(&damaged, &held, &kept, &format!("cut {n}, trees kept"));
        fresh_changed += changed_entries(&held.2, &fresh.2);
        kept_changed += changed_entries(&held.2, &kept.2);
        kept_unchanged += usize::from(kept.2 == held.2);
    }
    eprintln!(
        "12 cuts after joins and leaves: {fresh_changed} tree entries change with trees built \
         afresh, {kept_changed} with trees kept; every tree unchanged after {kept_unchanged} cuts"
    );
    assert!(kept_changed < fresh_changed);
    assert!(kept_unchanged > 0, "some cut leaves every tree as it was");
}

#[test]
fn without_lanes_the_plain_plan_shrinks_the_trees_first() {
    // The plan when the subnet manager knows no lanes of ours (DFSSSP, or no scheme): the
    // drop pass, with the trees completed; every pass free of circling copies.
    for n in 0..12 {
        let (damaged, held, target) = repaired_with_trees(n);
        let lids = LidTable::from_fabric(&damaged).unwrap();
        let trees = TreeChange {
            held: &held.2,
            target: &target.2,
        };
        let staging = trees.complete(
            &damaged,
            &held.0,
            trees.first_pass(&damaged, None),
            true,
            stage(&damaged, &lids, &held.0, &target.0),
        );
        let first = staging.first_trees.expect("a first pass holds the trees");
        assert!(!replication_loops(&damaged, &held.2, &first), "cut {n}");
        assert!(!replication_loops(&damaged, &first, &target.2), "cut {n}");
    }
}

#[test]
fn every_pass_of_a_repair_is_proven_with_the_groups_trees() {
    let (mut shrunk, mut staged) = (0, 0);
    for n in 0..12 {
        let (damaged, held, target) = repaired_with_trees(n);
        let (passes, s) = follow(&damaged, &held, &target, &format!("cut {n}"));
        shrunk += s;
        staged += usize::from(passes > 1);
    }
    eprintln!("12 cuts: {staged} staged, {shrunk} tree entries shrunk in first passes");
    assert!(shrunk > 0, "some first pass shrinks a tree");
}

#[test]
fn every_pass_of_a_return_to_the_full_routing_is_proven_with_the_groups_trees() {
    let mut lanes_changed = 0;
    let mut cases = 0;
    for (spec, cable) in random_cuts(2) {
        let Some((f, full, fixed)) = full_and_repaired(&spec, cable) else {
            continue;
        };
        cases += 1;
        let groups = groups(&f);
        let held = (fixed.tables.clone(), lanes(&fixed), trees(&fixed, &groups));
        let target = (full.tables.clone(), lanes(&full), trees(&full, &groups));
        lanes_changed += usize::from(!held.1.same_lanes(&target.1, &f));
        follow(&f, &held, &target, &spec);
    }
    assert!(cases >= 3, "only {cases} cases repaired");
    assert!(lanes_changed > 0, "some case changes the lanes");
}

#[test]
fn trees_that_change_under_unchanged_forwarding_shrink_in_a_pass_of_their_own() {
    // A cut after which some tree moves (not only grows).
    let (damaged, held, target) = (0..12)
        .map(repaired_with_trees)
        .find(|(damaged, held, target)| {
            let trees = TreeChange {
                held: &held.2,
                target: &target.2,
            };
            !trees.only_grow(damaged)
        })
        .expect("some cut moves a tree");
    // The forwarding stays; only the trees change (to those of the repaired routing).
    let lids = LidTable::from_fabric(&damaged).unwrap();
    let tables = |trees| Tables {
        forwarding: &held.0,
        lanes: &held.1,
        trees,
    };
    let staging = stage_with_proof(&damaged, &lids, tables(&held.2), tables(&target.2), true);
    assert_eq!(staging.passes(), 2);
    assert_eq!(staging.first_pass.as_ref(), Some(&held.0));
    assert!(staging.trees_shrunk > 0);
    let first = staging.first_trees.expect("the trees shrink first");
    for s in first.switches() {
        for (mlid, ports) in first.table(s) {
            let both = held.2.ports(s, mlid).unwrap_or_default();
            let new = target.2.ports(s, mlid).unwrap_or_default();
            assert!(
                ports.is_subset(&both) && ports.is_subset(&new),
                "{s:?} {mlid:#x}"
            );
        }
    }
}

#[test]
fn unchanged_trees_add_no_pass() {
    let (damaged, held, _) = repaired_with_trees(3);
    let lids = LidTable::from_fabric(&damaged).unwrap();
    let tables = Tables {
        forwarding: &held.0,
        lanes: &held.1,
        trees: &held.2,
    };
    let staging = stage_with_proof(&damaged, &lids, tables, tables, true);
    assert_eq!(staging.passes(), 0);
    assert_eq!(staging.first_trees, None);
}

#[test]
fn first_pass_trees_leave_out_every_entry_a_copy_could_cross_a_changing_row_in() {
    let mut checked = 0;
    for (spec, cable) in random_cuts(2) {
        let Some((f, full, fixed)) = full_and_repaired(&spec, cable) else {
            continue;
        };
        let (old, new) = (lanes(&fixed), lanes(&full));
        if old.same_lanes(&new, &f) {
            continue;
        }
        let groups = groups(&f);
        let (held, target) = (trees(&fixed, &groups), trees(&full, &groups));
        let change = TreeChange {
            held: &held,
            target: &target,
        };
        let first = change.first_pass(&f, Some((&old, &new)));
        assert!(!trees_cross_changing_rows(&f, &first, &old, &new), "{spec}");
        checked += 1;
    }
    assert!(checked > 0, "some case changes the lanes");
}
