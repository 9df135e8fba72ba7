//! The check of a change against brute force: on small fabrics every state of the change —
//! each switch's forwarding entries old or new, each switch's and each port's SL-to-VL tables
//! old or new — is enumerated, every route walked hop by hop in it, and the looping LIDs and
//! the dependencies collected; the verifier must find exactly the same.

use std::collections::BTreeSet;

use super::*;
use crate::deadlock::path_sl::DefaultSl;
use crate::deadlock::sl2vl::SLS;
use crate::deadlock::verify::RouteSls;
use crate::deadlock::{
    DeadlockFree, Scheme, SchemeChoice, Shortage, repair_deadlock_free, route_deadlock_free,
    verify_every_sl,
};
use crate::rng::Rng;
use crate::routing::graph::RoutingGraph;
use crate::routing::repair::FabricChanges;
use crate::routing::walk::{NONE, Network};
use crate::routing::{RoutingConfig, assign_lids};
use crate::topology::{LinkId, NodeId, PortRef, TopologySpec};

type Dependency = ((u32, u8), (u32, u8));

/// A change: the fabric as it is now, its LIDs, and the tables before and after.
struct Change {
    fabric: Fabric,
    lids: LidTable,
    old: ForwardingTables,
    old_sl2vl: Sl2VlTables,
    new: ForwardingTables,
    new_sl2vl: Sl2VlTables,
}

/// What the enumeration of every state finds.
#[derive(Debug, PartialEq, Eq)]
struct Found {
    looping: BTreeSet<u16>,
    dependencies: BTreeSet<Dependency>,
}

/// Where `tables` sends `lid` from `node` on the fabric of `net`, if it leaves on a live cable
/// towards a switch or to the port that owns the LID (`owner`).
fn next_link(
    net: &Network<'_>,
    tables: &ForwardingTables,
    node: NodeId,
    lid: u16,
    owner: PortRef,
) -> Option<u32> {
    let port = tables.port(node, lid).filter(|&p| p != 0)?;
    let l = net.link_at(PortRef { node, port })?;
    let link = net.links[l as usize];
    (link.to_switch != NONE || link.to == owner).then_some(l)
}

/// Every state of the change enumerated: 2^(switches whose entries differ) forwarding states,
/// and for each 2^(switches and ports whose SL-to-VL tables differ) lane states; every route
/// on every SL walked hop by hop in each. Dependencies are collected only when no state loops
/// (with loops the verifier reports the loop first and its graph holds more).
fn brute_force(c: &Change) -> Found {
    let net = Network::new(&c.fabric, &c.lids);
    let n = net.len();
    let lft_changed: Vec<usize> = (0..n)
        .filter(|&s| {
            c.lids.iter().any(|(lid, _)| {
                c.old.port(net.switches[s], lid) != c.new.port(net.switches[s], lid)
            })
        })
        .collect();
    // Destinations: every LID with its owner; sources: every port that owns a LID, once.
    let dests: Vec<(u16, PortRef)> = c
        .lids
        .iter()
        .map(|(lid, o)| {
            (
                lid,
                PortRef {
                    node: o.node,
                    port: o.port,
                },
            )
        })
        .collect();
    let sources: BTreeSet<PortRef> = dests.iter().map(|&(_, p)| p).collect();
    let hosts: Vec<PortRef> = sources.iter().copied().filter(|p| p.port != 0).collect();
    let row_changed = |s: usize| {
        let node = net.switches[s];
        let ports = c.fabric.node(node).num_ports();
        (0..=ports).any(|i| {
            (0..=ports)
                .any(|o| c.old_sl2vl.switch_row(node, i, o) != c.new_sl2vl.switch_row(node, i, o))
        })
    };
    let lane_switches: Vec<usize> = (0..n).filter(|&s| row_changed(s)).collect();
    let lane_ports: Vec<PortRef> = hosts
        .iter()
        .copied()
        .filter(|&p| c.old_sl2vl.port_row(p) != c.new_sl2vl.port_row(p))
        .collect();
    assert!(
        lft_changed.len() + lane_switches.len() + lane_ports.len() <= 16,
        "too many states to enumerate"
    );
    let mut found = Found {
        looping: BTreeSet::new(),
        dependencies: BTreeSet::new(),
    };
    let mut any_loop = false;
    let mut per_state: Vec<BTreeSet<Dependency>> = Vec::new();
    for lft_state in 0..1u32 << lft_changed.len() {
        let uses_old = |s: usize| {
            lft_changed
                .iter()
                .position(|&t| t == s)
                .is_some_and(|i| lft_state & (1 << i) != 0)
        };
        // Per destination, the next link of every switch in this state.
        let next: Vec<Vec<Option<u32>>> = dests
            .iter()
            .map(|&(lid, owner)| {
                (0..n)
                    .map(|s| {
                        let tables = if uses_old(s) { &c.old } else { &c.new };
                        next_link(&net, tables, net.switches[s], lid, owner)
                    })
                    .collect()
            })
            .collect();
        for (d, &(lid, _)) in dests.iter().enumerate() {
            for start in 0..n {
                let (mut v, mut steps) = (start, 0);
                while let Some(l) = next[d][v] {
                    let to = net.links[l as usize].to_switch;
                    if to == NONE {
                        break;
                    }
                    v = to as usize;
                    steps += 1;
                    if steps > n {
                        found.looping.insert(lid);
                        any_loop = true;
                        break;
                    }
                }
            }
        }
        if any_loop {
            continue;
        }
        let mut deps = BTreeSet::new();
        for lane_state in 0..1u32 << (lane_switches.len() + lane_ports.len()) {
            let switch_old = |s: usize| {
                lane_switches
                    .iter()
                    .position(|&t| t == s)
                    .is_some_and(|i| lane_state & (1 << i) != 0)
            };
            let port_old = |p: PortRef| {
                lane_ports
                    .iter()
                    .position(|&q| q == p)
                    .is_some_and(|i| lane_state & (1 << (lane_switches.len() + i)) != 0)
            };
            for (d, &(_, owner)) in dests.iter().enumerate() {
                for &src in &sources {
                    if src == owner {
                        continue;
                    }
                    for sl in 0..SLS {
                        walk(
                            &net,
                            c,
                            &next[d],
                            src,
                            sl,
                            &switch_old,
                            &port_old,
                            &mut deps,
                        );
                    }
                }
            }
        }
        per_state.push(deps);
    }
    if !any_loop {
        found.dependencies = per_state.into_iter().flatten().collect();
    }
    found
}

/// Walks the route from `src` with SL `sl` through the next links `next` of one destination,
/// adding each (link, VL) → (link, VL) dependency; lanes from the old tables where `switch_old`
/// or `port_old` say so.
#[allow(clippy::too_many_arguments)]
fn walk(
    net: &Network<'_>,
    c: &Change,
    next: &[Option<u32>],
    src: PortRef,
    sl: usize,
    switch_old: &dyn Fn(usize) -> bool,
    port_old: &dyn Fn(PortRef) -> bool,
    deps: &mut BTreeSet<Dependency>,
) {
    let (mut held, mut v, mut in_port) = if src.port == 0 {
        (None, net.dense[src.node.index()] as usize, 0)
    } else {
        let up = net.link_at(src).expect("a source port is cabled");
        let row = if port_old(src) {
            c.old_sl2vl.port_row(src)
        } else {
            c.new_sl2vl.port_row(src)
        };
        if row[sl] == 15 {
            return;
        }
        let l = net.links[up as usize];
        (Some((up, row[sl])), l.to_switch as usize, l.to.port)
    };
    for _ in 0..=net.len() {
        let Some(b) = next[v] else { return };
        let link = net.links[b as usize];
        let tables = if switch_old(v) {
            &c.old_sl2vl
        } else {
            &c.new_sl2vl
        };
        let y = tables.switch_row(net.switches[v], in_port, link.from.port)[sl];
        if y == 15 {
            return;
        }
        if let Some(a) = held {
            deps.insert((a, (b, y)));
        }
        if link.to_switch == NONE {
            return;
        }
        (held, v, in_port) = (Some((b, y)), link.to_switch as usize, link.to.port);
    }
    panic!("a route without loops is longer than the switches");
}

/// What the verifier finds for the change, as [`Found`], and its verdict.
fn verified(c: &Change) -> (Found, TransitionVerdict) {
    let options = VerifyOptions {
        switch_lids: true,
        max_listed: usize::MAX,
        sls: RouteSls::EverySl,
    };
    let before = Before {
        tables: &c.old,
        sl2vl: &c.old_sl2vl,
        multicast: None,
    };
    let after = After {
        tables: &c.new,
        path_sl: &DefaultSl(0),
        sl2vl: &c.new_sl2vl,
        multicast: None,
    };
    let verdict = verify_transition(&c.fabric, &c.lids, &before, &after, &options);
    let looping = verdict.loops.iter().map(|l| l.lid).collect();
    let dependencies = if verdict.looping_lids == 0 {
        mixed_dependencies(&c.fabric, &c.lids, &before, &after, &options)
    } else {
        BTreeSet::new()
    };
    (
        Found {
            looping,
            dependencies,
        },
        verdict,
    )
}

/// Whether `deps` has a directed cycle.
fn cyclic(deps: &BTreeSet<Dependency>) -> bool {
    let nodes: BTreeSet<(u32, u8)> = deps.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut state: std::collections::BTreeMap<(u32, u8), u8> =
        nodes.iter().map(|&c| (c, 0)).collect();
    fn visit(
        c: (u32, u8),
        deps: &BTreeSet<Dependency>,
        state: &mut std::collections::BTreeMap<(u32, u8), u8>,
    ) -> bool {
        state.insert(c, 1);
        for &(_, d) in deps.range((c, (0, 0))..=(c, (u32::MAX, u8::MAX))) {
            let seen = state[&d];
            match seen {
                1 => return true,
                0 if visit(d, deps, state) => return true,
                _ => {}
            }
        }
        state.insert(c, 2);
        false
    }
    nodes
        .iter()
        .any(|&c| state[&c] == 0 && visit(c, deps, &mut state))
}

/// Asserts the verifier agrees with brute force on `c`; returns the verdict.
fn agrees(c: &Change, what: &str) -> TransitionVerdict {
    let oracle = brute_force(c);
    let (found, verdict) = verified(c);
    assert_eq!(found.looping, oracle.looping, "{what}: looping LIDs");
    assert_eq!(
        verdict.looping_lids,
        oracle.looping.len(),
        "{what}: loop count"
    );
    if oracle.looping.is_empty() {
        assert_eq!(
            found.dependencies, oracle.dependencies,
            "{what}: dependencies"
        );
        assert_eq!(
            verdict.mixtures.cycle.is_some(),
            cyclic(&oracle.dependencies),
            "{what}: acyclicity"
        );
        assert_eq!(verdict.is_safe(), !cyclic(&oracle.dependencies), "{what}");
    } else {
        assert!(!verdict.is_safe(), "{what}: loops are unsafe");
    }
    verdict
}

/// `spec` with LIDs for `layers` layers.
fn build(spec: &str, layers: usize) -> Fabric {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    fabric
}

fn config(layers: usize, seed: u64) -> RoutingConfig {
    RoutingConfig {
        layers,
        seed,
        ..RoutingConfig::default()
    }
}

/// The project's deadlock-free routing of `fabric` (lanes by port pair with 2 VLs and more;
/// DFSSSP-style lanes with `vls` = 1 is refused, so `vls` ≥ 2).
fn route(fabric: &Fabric, layers: usize, seed: u64, vls: u8) -> Option<DeadlockFree> {
    let lids = LidTable::from_fabric(fabric).ok()?;
    route_deadlock_free(
        fabric,
        &lids,
        &RoutingGraph::new(fabric),
        &config(layers, seed),
        &SchemeChoice::Auto.schemes(vls),
        Shortage::FewerLayers,
    )
    .ok()
}

/// `whole` without its `k`-th switch-to-switch cable.
fn without_cable(whole: &Fabric, k: usize) -> Fabric {
    let between: Vec<LinkId> = (0..whole.links().len() as u32)
        .map(LinkId)
        .filter(|&l| {
            let link = whole.link(l);
            whole.node(link.a.node).is_switch() && whole.node(link.b.node).is_switch()
        })
        .collect();
    let cut = between[k % between.len()];
    whole.after_losses(|_| false, |l| l == cut)
}

/// The change from `done` on `whole` to `new` on `after`.
fn change(after: Fabric, done: &DeadlockFree, new: &DeadlockFree) -> Change {
    Change {
        lids: LidTable::from_fabric(&after).unwrap(),
        fabric: after,
        old: done.tables.clone(),
        old_sl2vl: done.sl2vl.clone(),
        new: new.tables.clone(),
        new_sl2vl: new.sl2vl.clone(),
    }
}

/// The repair of `done` (on `whole`) for `after`, as the plugin makes it.
fn repaired(
    whole: &Fabric,
    done: &DeadlockFree,
    after: &Fabric,
    layers: usize,
    seed: u64,
) -> Option<DeadlockFree> {
    let (before_graph, graph) = (RoutingGraph::new(whole), RoutingGraph::new(after));
    let changes = FabricChanges::between(whole, &before_graph, after, &graph);
    let scheme = SchemeChoice::Auto
        .schemes(8)
        .into_iter()
        .find(|s| matches!(s, Scheme::PortPair(_)))?;
    let lids = LidTable::from_fabric(after).ok()?;
    let (repaired, _) = repair_deadlock_free(
        after,
        &lids,
        &graph,
        done,
        &before_graph,
        &changes.old_of,
        &config(layers, seed),
        &scheme,
    )?
    .ok()?;
    Some(repaired)
}

#[test]
fn a_change_to_identical_tables_has_the_snapshots_verdict() {
    let fabric = build("random:switches=6,degree=3,hosts=1,seed=3", 2);
    let done = route(&fabric, 2, 1, 8).unwrap();
    let c = change(fabric.clone(), &done, &done);
    let verdict = agrees(&c, "identical");
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let snapshot = verify_every_sl(&fabric, &lids, &done.tables, &done.sl2vl);
    assert_eq!(verdict.changed_entries, 0);
    assert_eq!(verdict.looping_lids, 0);
    assert_eq!(verdict.mixtures.dependencies, snapshot.dependencies);
    assert_eq!(verdict.is_safe(), snapshot.is_deadlock_free());
}

#[test]
fn fresh_routes_after_a_lost_cable_agree_with_brute_force_on_random_fabrics() {
    let (mut checked, mut outcomes) = (0, BTreeSet::new());
    for seed in 0..24u64 {
        let mut rng = Rng::new(seed);
        let switches = 4 + rng.below(3) as u32;
        let spec = format!("random:switches={switches},degree=3,hosts=1,seed={seed}");
        let Ok(topology) = spec.parse::<TopologySpec>() else {
            continue;
        };
        let Ok(mut whole) = topology.build() else {
            continue;
        };
        let layers: usize = 1 << rng.below(2);
        assign_lids(&mut whole, layers.trailing_zeros() as u8).unwrap();
        let Some(done) = route(&whole, layers, seed, 8) else {
            continue;
        };
        let after = without_cable(&whole, rng.below(64) as usize);
        let Some(new) = route(&after, layers, seed + 100, 8) else {
            continue;
        };
        let v = agrees(&change(after, &done, &new), &spec);
        outcomes.insert((v.looping_lids > 0, v.mixtures.cycle.is_some()));
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} fabrics could be routed");
    // The seeds give loops, cycles without loops and safe changes: the oracle is exercised
    // on every outcome.
    for outcome in [(true, true), (false, true), (false, false)] {
        assert!(
            outcomes.contains(&outcome),
            "no change with outcome {outcome:?}"
        );
    }
}

#[test]
fn repairs_after_a_lost_cable_agree_with_brute_force_on_random_fabrics() {
    let mut checked = 0;
    for seed in 0..16u64 {
        let spec = format!("random:switches=6,degree=3,hosts=1,seed={seed}");
        let Ok(topology) = spec.parse::<TopologySpec>() else {
            continue;
        };
        let Ok(mut whole) = topology.build() else {
            continue;
        };
        assign_lids(&mut whole, 1).unwrap();
        let Some(done) = route(&whole, 2, seed, 8) else {
            continue;
        };
        let after = without_cable(&whole, seed as usize * 7);
        let Some(new) = repaired(&whole, &done, &after, 2, seed) else {
            continue;
        };
        agrees(&change(after, &done, &new), &spec);
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} fabrics could be repaired");
}

#[test]
fn a_ring_losing_a_cable_agrees_with_brute_force() {
    let whole = build("circulant:nodes=6,jumps=1,hosts=1", 1);
    let done = route(&whole, 1, 1, 8).unwrap();
    let after = without_cable(&whole, 2);
    let new = route(&after, 1, 2, 8).unwrap();
    agrees(&change(after, &done, &new), "ring");
}

#[test]
fn a_fat_tree_losing_a_cable_agrees_with_brute_force() {
    let whole = build(
        "fattree:leaves=3,spines=2,links-per-pair=1,hosts-per-leaf=1",
        2,
    );
    let done = route(&whole, 2, 1, 8).unwrap();
    let after = without_cable(&whole, 1);
    let new = route(&after, 2, 2, 8).unwrap();
    agrees(&change(after, &done, &new), "fat tree");
}

/// Tables for a ring of switches (`fabric`, LIDs assigned) that send every LID clockwise
/// where `clockwise(hops clockwise to the destination switch, switches)` says so, else
/// counter-clockwise.
fn ring_tables(fabric: &Fabric, clockwise: impl Fn(usize, usize) -> bool) -> ForwardingTables {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let net = Network::new(fabric, &lids);
    let n = net.len();
    let mut tables = ForwardingTables::for_lids(fabric, &lids);
    // The link from switch s to its clockwise (+1) and counter-clockwise (−1) neighbour.
    let towards = |s: usize, t: usize| {
        net.links
            .iter()
            .find(|l| l.from_switch == s as u32 && l.to_switch == t as u32)
            .map(|l| l.from.port)
            .unwrap()
    };
    for (lid, owner) in lids.iter() {
        let owner_ref = PortRef {
            node: owner.node,
            port: owner.port,
        };
        let t = if owner.port == 0 {
            net.dense[owner.node.index()] as usize
        } else {
            net.dense[fabric.peer(owner_ref).unwrap().node.index()] as usize
        };
        for s in 0..n {
            let node = net.switches[s];
            let port = if s == t {
                if owner.port == 0 {
                    0
                } else {
                    fabric.peer(owner_ref).unwrap().port
                }
            } else {
                if clockwise((t + n - s) % n, n) {
                    towards(s, (s + 1) % n)
                } else {
                    towards(s, (s + n - 1) % n)
                }
            };
            tables.set(node, lid, port);
        }
    }
    tables
}

/// The short way round, ties broken clockwise.
fn shortest(ahead: usize, n: usize) -> bool {
    ahead * 2 <= n
}

#[test]
fn ties_broken_the_other_way_round_a_ring_do_not_loop() {
    // Only the switch opposite the destination changes: its two next hops lead away from
    // each other, so no order loops.
    let fabric = build("circulant:nodes=4,jumps=1,hosts=1", 1);
    let uniform = Sl2VlTables::uniform(&fabric, crate::deadlock::identity_row(1));
    let c = Change {
        lids: LidTable::from_fabric(&fabric).unwrap(),
        old: ring_tables(&fabric, shortest),
        new: ring_tables(&fabric, |ahead, n| ahead * 2 < n),
        old_sl2vl: uniform.clone(),
        new_sl2vl: uniform,
        fabric,
    };
    let verdict = agrees(&c, "ring ties");
    assert!(verdict.changed_entries > 0);
    assert_eq!(verdict.looping_lids, 0);
}

#[test]
fn turning_a_ring_the_other_way_round_loops_in_some_update_order() {
    let fabric = build("circulant:nodes=4,jumps=1,hosts=1", 1);
    let uniform = Sl2VlTables::uniform(&fabric, crate::deadlock::identity_row(1));
    let c = Change {
        lids: LidTable::from_fabric(&fabric).unwrap(),
        old: ring_tables(&fabric, |_, _| true),
        new: ring_tables(&fabric, |_, _| false),
        old_sl2vl: uniform.clone(),
        new_sl2vl: uniform,
        fabric,
    };
    let verdict = agrees(&c, "ring turned");
    assert!(verdict.looping_lids > 0, "opposite directions loop");
    for l in &verdict.loops {
        assert!(l.hops.len() >= 2);
        assert!(l.hops.iter().any(|h| h.entry == Entry::Old));
        assert!(l.hops.iter().any(|h| h.entry == Entry::New));
    }
}

#[test]
fn lanes_changed_under_unchanged_routes_agree_with_brute_force() {
    // Shortest routes on a 5-ring (no ties) with two VLs: the old tables change lane at one
    // dateline, the new ones at another; each alone may be acyclic, the mixture is not.
    let fabric = build("circulant:nodes=5,jumps=1,hosts=1", 1);
    let tables = ring_tables(&fabric, shortest);
    let dateline = |cut: usize| {
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let net = Network::new(&fabric, &lids);
        let mut t = Sl2VlTables::uniform(&fabric, crate::deadlock::identity_row(2));
        // At switch `cut`, every SL moves to VL 1 for the hop that leaves it.
        let node = net.switches[cut];
        let ports = fabric.node(node).num_ports();
        let mut sw = crate::deadlock::SwitchSl2Vl::uniform(ports, crate::deadlock::identity_row(2));
        for i in 0..=ports {
            for o in 1..=ports {
                sw.set(i, o, [1; SLS]);
            }
        }
        t.set_switch(node, sw);
        t
    };
    let c = Change {
        lids: LidTable::from_fabric(&fabric).unwrap(),
        old: tables.clone(),
        new: tables,
        old_sl2vl: dateline(0),
        new_sl2vl: dateline(2),
        fabric,
    };
    agrees(&c, "datelines");
}

/// A multicast group `mlid` on `fabric`: the spanning tree of breadth-first search from the
/// `root`-th switch over the live cables, each switch's entry its tree ports and the host
/// ports of `members` (dense switch indexes whose host joins).
fn group_tables(
    fabric: &Fabric,
    tables: &mut MulticastTables,
    mlid: u16,
    root: usize,
    members: &[usize],
) {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let net = Network::new(fabric, &lids);
    let n = net.len();
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([root % n]);
    seen[root % n] = true;
    let mut ports: Vec<Vec<u8>> = vec![Vec::new(); n];
    while let Some(v) = queue.pop_front() {
        for l in &net.links {
            if l.from_switch == v as u32 && l.to_switch != NONE && !seen[l.to_switch as usize] {
                let w = l.to_switch as usize;
                seen[w] = true;
                ports[v].push(l.from.port);
                ports[w].push(l.to.port);
                queue.push_back(w);
            }
        }
    }
    for &m in members {
        if let Some(e) = net.endpoints_at(m).first() {
            ports[m].push(net.links[e.down as usize].from.port);
        }
    }
    for (s, p) in ports.into_iter().enumerate() {
        if !p.is_empty() {
            tables.set(net.switches[s], mlid, p.into_iter().collect());
        }
    }
}

/// The multicast dependencies of `multicast` replicated with the lanes of `sl2vl` (both tables
/// given for a change), every SL.
fn group_dependencies(
    fabric: &Fabric,
    multicast: &MulticastTables,
    sl2vl: [Option<&Sl2VlTables>; 2],
) -> BTreeSet<Dependency> {
    use super::super::multicast::{Hop, replicate};
    let lids = LidTable::from_fabric(fabric).unwrap();
    let net = Channels::new(fabric, &lids, Traffic { switch_lids: true });
    let index: [u8; 16] = std::array::from_fn(|vl| vl as u8); // VL = dense index
    let sls = std::collections::BTreeMap::new();
    let groups = Multicast {
        tables: multicast,
        sls: &sls,
        default_sl: 0,
    };
    let mut out = BTreeSet::new();
    for mlid in multicast.mlids() {
        replicate(
            &net,
            sl2vl,
            &index,
            &groups,
            RouteSls::EverySl,
            mlid,
            |hop| {
                if let Hop::Dependency { a, x, b, y } = hop {
                    out.insert(((a, x as u8), (b, y as u8)));
                }
            },
        );
    }
    out
}

#[test]
fn multicast_entries_rewritten_switch_by_switch_agree_with_brute_force() {
    // Cases where the union is a forest (compared exactly) and where the change adds
    // dependencies that the new tables alone do not make.
    let (mut exact, mut grown) = (0, 0);
    for seed in 0..8u64 {
        let mut rng = Rng::new(seed);
        let whole = build("random:switches=6,degree=3,hosts=1,seed=4", 1);
        let after = without_cable(&whole, rng.below(9) as usize);
        let members: Vec<usize> = (0..6).filter(|_| rng.below(2) == 0).collect();
        let (mut old, mut new) = (MulticastTables::new(), MulticastTables::new());
        group_tables(&whole, &mut old, 0xc000, rng.below(6) as usize, &members);
        group_tables(&after, &mut new, 0xc000, rng.below(6) as usize, &members);
        group_tables(&whole, &mut old, 0xc001, 0, &[0, 1, 2, 3, 4, 5]);
        group_tables(&after, &mut new, 0xc001, 0, &[0, 1, 2, 3, 4, 5]);
        // Lanes by port pair before and after the loss: the SL-to-VL tables change too.
        let (Some(done), Some(routed)) = (route(&whole, 1, seed, 8), route(&after, 1, seed, 8))
        else {
            continue;
        };
        let (old_lanes, new_lanes) = (&done.sl2vl, &routed.sl2vl);
        let lids = LidTable::from_fabric(&after).unwrap();
        let net = Network::new(&after, &lids);
        let changed: Vec<usize> = (0..net.len())
            .filter(|&s| {
                let node = net.switches[s];
                let lanes = |t: &Sl2VlTables| t.switch(node).cloned();
                old.table(node).collect::<Vec<_>>() != new.table(node).collect::<Vec<_>>()
                    || lanes(old_lanes) != lanes(new_lanes)
            })
            .collect();
        // Every state: each changed switch's MFT entries and SL-to-VL tables old or new
        // together, then independently.
        let mut oracle = BTreeSet::new();
        for mft_state in 0..1u32 << changed.len() {
            for lane_state in 0..1u32 << changed.len() {
                let (mut tables, mut lanes) = (new.clone(), new_lanes.clone());
                for (i, &s) in changed.iter().enumerate() {
                    let node = net.switches[s];
                    if mft_state & (1 << i) != 0 {
                        for mlid in [0xc000, 0xc001] {
                            tables.set(node, mlid, old.ports(node, mlid).unwrap_or_default());
                        }
                    }
                    if lane_state & (1 << i) != 0
                        && let Some(t) = old_lanes.switch(node)
                    {
                        lanes.set_switch(node, t.clone());
                    }
                }
                oracle.extend(group_dependencies(&after, &tables, [Some(&lanes), None]));
            }
        }
        let union = union_tables(&new, Some(&old));
        let mixed = group_dependencies(&after, &union, [Some(new_lanes), Some(old_lanes)]);
        assert!(
            mixed.is_superset(&oracle),
            "seed {seed}: a state's dependency is missing"
        );
        // A copy can revisit a switch only if the old and new trees together close a cycle of
        // cables; otherwise every walk of the union is one state's.
        if forest(&after, &union) {
            assert_eq!(mixed, oracle, "seed {seed}");
            exact += 1;
        }
        let alone = group_dependencies(&after, &new, [Some(new_lanes), None]);
        grown += usize::from(mixed.len() > alone.len());
    }
    assert!(exact > 0 && grown > 0, "{exact} exact cases, {grown} grown");
}

/// Whether the switch-to-switch cables of every group's entries form a forest.
fn forest(fabric: &Fabric, tables: &MulticastTables) -> bool {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let net = Network::new(fabric, &lids);
    tables.mlids().into_iter().all(|mlid| {
        let mut parent: Vec<usize> = (0..net.len()).collect();
        fn root(p: &mut [usize], v: usize) -> usize {
            if p[v] == v {
                v
            } else {
                let r = root(p, p[v]);
                p[v] = r;
                r
            }
        }
        net.links
            .iter()
            .filter(|l| l.between_switches() && l.from_switch < l.to_switch)
            .all(|l| {
                let (a, b) = (l.from_switch as usize, l.to_switch as usize);
                let has = |s: usize, port: u8| {
                    tables
                        .ports(net.switches[s], mlid)
                        .is_some_and(|p| p.contains(port))
                };
                if !(has(a, l.from.port) && has(b, l.to.port)) {
                    return true;
                }
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
                ra != rb
            })
    })
}
