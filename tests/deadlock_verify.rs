//! The deadlock verifier: it finds a planted deadlock (shortest paths around a ring on one
//! VL) and names its cycle, its verdict matches a brute-force cycle search over explicitly
//! enumerated routes on small random fabrics with random SLs and SL-to-VL tables, the DFSSSP
//! assignment removes the planted deadlock, VL shortages are reported with both numbers or
//! handled by routing fewer layers, and `ibfabric deadlock-check` exits 0, 1 or 2. With
//! multicast groups, the unicast + multicast verdict matches a brute-force replication of
//! every group from every sender, and a cycle a group's tree closes names its MLID.

use std::collections::{BTreeMap, HashMap, HashSet};

use ibfabric::Fabric;
use ibfabric::deadlock::sl2vl::SLS;
use ibfabric::deadlock::verify::{Multicast, verify_with_multicast};
use ibfabric::deadlock::{
    ColouringConfig, DeadlockError, DefaultSl, DfssspConfig, PathSl, RouteSls, Scheme,
    SchemeOutcome, Shortage, Sl2VlTables, SlTable, SlVlRow, VerifyOptions, apply_scheme,
    assign_vls, colouring_scheme, identity_row, route_deadlock_free, verify,
};
use ibfabric::io::{path_sl, sl2vl};
use ibfabric::rng::Rng;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered::route;
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig};
use ibfabric::routing::{
    ForwardingTables, LidTable, MulticastTables, Routed, assign_lids, forwarding_tables,
    route_fabric,
};
use ibfabric::topology::{Guid, NodeId, NodeKind, NodeSpec, PortRef, TopologySpec};

/// A ring of `n` switches, each with `hosts` hosts; LIDs for `lmc`.
fn ring(n: usize, hosts: usize, lmc: u8) -> Fabric {
    let mut f = Fabric::new(format!("ring-{n}"));
    let sw: Vec<NodeId> = (0..n)
        .map(|i| {
            f.add_node(NodeSpec {
                kind: NodeKind::Switch,
                name: format!("sw{i}"),
                description: format!("ring switch {i}"),
                guid: Guid(0x1000 + i as u64),
                num_ports: 8,
                rack: None,
            })
            .unwrap()
        })
        .collect();
    for i in 0..n {
        let a = PortRef {
            node: sw[i],
            port: 1,
        };
        let b = PortRef {
            node: sw[(i + 1) % n],
            port: 2,
        };
        f.connect(a, b, None, None).unwrap();
        for h in 0..hosts {
            let host = f
                .add_node(NodeSpec {
                    kind: NodeKind::Ca,
                    name: format!("h{i}-{h}"),
                    description: format!("h{i}-{h} HCA-1"),
                    guid: Guid(0x10_0000 + (i * 16 + h) as u64 * 16),
                    num_ports: 1,
                    rack: None,
                })
                .unwrap();
            f.connect(
                PortRef {
                    node: sw[i],
                    port: 3 + h as u8,
                },
                PortRef {
                    node: host,
                    port: 1,
                },
                None,
                None,
            )
            .unwrap();
        }
    }
    assign_lids(&mut f, lmc).unwrap();
    f
}

fn minimal_tables(fabric: &Fabric, lids: &LidTable, layers: usize) -> ForwardingTables {
    let graph = RoutingGraph::new(fabric);
    let routed = route(
        &graph,
        &RoutingConfig {
            layers,
            algorithm: Algorithm::Minimal,
            seed: 1,
            ..Default::default()
        },
    );
    forwarding_tables(fabric, &graph, &routed, lids)
}

#[test]
fn both_directions_of_the_ring_are_listed_as_cyclic_components_with_a_cycle_each() {
    // The two directions of the 5-ring share no channel: two strongly connected components,
    // each a cycle around the ring on VL 0.
    let fabric = ring(5, 1, 0);
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let tables = minimal_tables(&fabric, &lids, 1);
    let sl2vl = Sl2VlTables::uniform(&fabric, identity_row(8));
    let verdict = verify(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &sl2vl,
        &VerifyOptions::default(),
    );
    let components = &verdict.cyclic_components;
    assert_eq!(components.len(), 2, "{verdict}");
    assert!(
        components[0].cycle.is_none(),
        "the first is the verdict's cycle"
    );
    let second = components[1].cycle.as_ref().expect("a cycle of its own");
    let first = verdict.cycle.as_ref().unwrap();
    for (c, cycle) in components.iter().zip([first, second]) {
        assert_eq!((c.channels, c.dependencies), (5, 5), "{verdict}");
        assert_eq!(c.vls.len(), 1);
        assert_eq!((c.vls[0].vl, c.vls[0].channels), (0, 5));
        assert_eq!(cycle.channels.len(), 5, "{verdict}");
        assert!(cycle.channels.iter().all(|ch| ch.routes > 0));
    }
    // Opposite directions: no link in common.
    let links = |cycle: &ibfabric::deadlock::Cycle| -> Vec<String> {
        cycle.channels.iter().map(|c| c.link.clone()).collect()
    };
    assert!(links(first).iter().all(|l| !links(second).contains(l)));
    let text = verdict.to_string();
    assert!(
        text.contains("2 cyclic strongly connected components of the channel dependency graph"),
        "{text}"
    );
    assert!(text.contains("  2: 5 channels (VL 0: 5), 5 dependencies; a cycle of 5"));
}

#[test]
fn the_planted_ring_deadlock_is_found_and_named() {
    // Shortest paths on a 5-ring: every switch sends two hops clockwise and two hops
    // counter-clockwise, so each direction of the ring is a cycle of dependencies on VL 0.
    let fabric = ring(5, 1, 0);
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let tables = minimal_tables(&fabric, &lids, 1);
    let sl2vl = Sl2VlTables::uniform(&fabric, identity_row(8));
    let verdict = verify(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &sl2vl,
        &VerifyOptions::default(),
    );
    assert!(!verdict.is_deadlock_free(), "{verdict}");
    let cycle = verdict.cycle.as_ref().unwrap();
    assert_eq!(cycle.channels.len(), 5, "{verdict}");
    assert!(cycle.channels.iter().all(|c| c.vl == 0));
    // The cycle goes around the ring in one direction: every switch once.
    let mut from: Vec<&str> = cycle
        .channels
        .iter()
        .map(|c| c.link.split('[').next().unwrap())
        .collect();
    from.sort_unstable();
    assert_eq!(from, ["sw0", "sw1", "sw2", "sw3", "sw4"], "{verdict}");
    for c in &cycle.channels {
        assert!(c.routes > 0 && !c.examples.is_empty(), "{verdict}");
    }
    let text = verdict.to_string();
    assert!(
        text.contains("DEADLOCK: a cycle of 5 channel dependencies"),
        "{text}"
    );
    assert!(text.contains("VL 0 ->"), "{text}");
    // Routes (hosts and switches as sources, every LID as destination).
    assert_eq!(verdict.sources, 10);
    assert_eq!(verdict.routes, 10 * 10 - 10);

    // DFSSSP moves routes to a second VL and the verifier agrees it is then deadlock-free.
    let a = assign_vls(&fabric, &lids, &tables, &DfssspConfig::default()).unwrap();
    assert_eq!(a.vls_needed, 2);
    assert!(a.cycles_broken >= 2);
    let fixed = verify(
        &fabric,
        &lids,
        &tables,
        &a.path_sls,
        &a.sl2vl(&fabric),
        &VerifyOptions::default(),
    );
    assert!(fixed.is_deadlock_free(), "{fixed}");
    assert_eq!(fixed.vls.len(), 8, "spare VLs used for balance: {fixed}");

    // With a single VL there is no remedy: a clear error with both numbers.
    let err = assign_vls(
        &fabric,
        &lids,
        &tables,
        &DfssspConfig {
            vls: 1,
            ..DfssspConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err,
        DeadlockError::NotEnoughVls {
            needed: 2,
            available: 1
        }
    );
    assert!(err.to_string().contains("needs 2 virtual lanes"), "{err}");
    assert!(err.to_string().contains("only 1 exist"), "{err}");

    // The colouring scheme (paths of 2 hops) is deadlock-free too.
    let scheme = colouring_scheme(&fabric, &lids, &tables, &ColouringConfig::default()).unwrap();
    assert_eq!(scheme.colouring.count, 3, "an odd ring needs 3 colours");
    let coloured = verify(
        &fabric,
        &lids,
        &tables,
        &scheme.path_sls,
        &scheme.sl2vl(&fabric),
        &VerifyOptions::default(),
    );
    assert!(coloured.is_deadlock_free(), "{coloured}");
}

type Channel = (NodeId, u8, u8); // sending node, port, VL

/// Brute force: every (source LID, destination LID) route walked hop by hop, every
/// dependency collected explicitly, then Kahn's algorithm: a cycle exists iff some channel is
/// never freed of incoming dependencies.
fn brute_force_cyclic(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    sls: &dyn PathSl,
    sl2vl: &Sl2VlTables,
) -> bool {
    cyclic_edges(&brute_force_dependencies(fabric, lids, tables, sls, sl2vl))
}

/// Kahn's algorithm: whether the dependencies `edges` hold a cycle.
fn cyclic_edges(edges: &HashSet<(Channel, Channel)>) -> bool {
    let mut indegree: HashMap<Channel, usize> = HashMap::new();
    let mut out: HashMap<Channel, Vec<Channel>> = HashMap::new();
    for &(a, b) in edges {
        indegree.entry(a).or_insert(0);
        *indegree.entry(b).or_insert(0) += 1;
        out.entry(a).or_default().push(b);
    }
    let mut ready: Vec<Channel> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(c, _)| *c)
        .collect();
    let mut removed = 0;
    while let Some(c) = ready.pop() {
        removed += 1;
        for &d in out.get(&c).map(Vec::as_slice).unwrap_or(&[]) {
            let e = indegree.get_mut(&d).unwrap();
            *e -= 1;
            if *e == 0 {
                ready.push(d);
            }
        }
    }
    removed < indegree.len()
}

/// Every channel dependency of every route, enumerated explicitly.
fn brute_force_dependencies(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    sls: &dyn PathSl,
    sl2vl: &Sl2VlTables,
) -> HashSet<(Channel, Channel)> {
    let mut edges: HashSet<(Channel, Channel)> = HashSet::new();
    let owners: Vec<(u16, PortRef)> = lids
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
    for &(slid, src) in &owners {
        for &(dlid, dst) in &owners {
            if src == dst {
                continue;
            }
            let sl = sls.sl(slid, dlid);
            // Where the packet is, and the channel it holds.
            let (mut at, mut in_port, mut held): (NodeId, u8, Option<Channel>) =
                if fabric.node(src.node).is_switch() {
                    (src.node, 0, None)
                } else {
                    let Some(peer) = fabric.peer(src) else {
                        continue;
                    };
                    let vl = sl2vl.port_vl(src, sl);
                    if vl == 15 {
                        continue;
                    }
                    (peer.node, peer.port, Some((src.node, src.port, vl)))
                };
            for _ in 0..64 {
                if !fabric.node(at).is_switch() {
                    break;
                }
                let Some(port) = tables.port(at, dlid) else {
                    break;
                };
                if port == 0 {
                    break;
                }
                let vl = sl2vl.switch_vl(at, in_port, port, sl);
                if vl == 15 {
                    break;
                }
                let ch = (at, port, vl);
                if let Some(h) = held {
                    edges.insert((h, ch));
                }
                held = Some(ch);
                let Some(peer) = fabric.peer(PortRef { node: at, port }) else {
                    break;
                };
                at = peer.node;
                in_port = peer.port;
            }
        }
    }
    edges
}

fn random_row(rng: &mut Rng, vls: u64) -> SlVlRow {
    std::array::from_fn(|_| rng.below(vls) as u8)
}

#[test]
fn the_verdict_matches_a_brute_force_search_on_small_random_fabrics() {
    let mut rng = Rng::new(42);
    let (mut cyclic, mut acyclic) = (0, 0);
    for case in 0..60 {
        let switches = 6 + 2 * rng.below(3);
        let degree = 3 + rng.below(2);
        let hosts = 1 + rng.below(2);
        let spec = format!("random:switches={switches},degree={degree},hosts={hosts},seed={case}");
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        let lmc = rng.below(2) as u8;
        assign_lids(&mut fabric, lmc).unwrap();
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let graph = RoutingGraph::new(&fabric);
        let algorithm = match rng.below(3) {
            0 => Algorithm::Minimal,
            1 => Algorithm::Layered(PathLengths::default()),
            _ => Algorithm::Rues {
                keep_per_mille: 600,
            },
        };
        let routed = route(
            &graph,
            &RoutingConfig {
                layers: 1 << lmc,
                algorithm,
                seed: case,
                ..Default::default()
            },
        );
        let tables = forwarding_tables(&fabric, &graph, &routed, &lids);
        // Random SLs per route and random SL-to-VL tables over few VLs.
        let vls = 1 + rng.below(3);
        let mut sls = SlTable {
            default: 0,
            ..SlTable::default()
        };
        let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
        for &s in &all {
            for &d in &all {
                sls.entries.insert((s, d), rng.below(3) as u8);
            }
        }
        let mut sl2vl = Sl2VlTables::new(&fabric, identity_row(vls as u8));
        for id in fabric.switches().collect::<Vec<_>>() {
            let ports = fabric.node(id).num_ports();
            let t = sl2vl.switch_mut(id, ports);
            for i in 0..=ports {
                for o in 0..=ports {
                    t.set(i, o, random_row(&mut rng, vls));
                }
            }
        }
        for h in fabric.hosts().collect::<Vec<_>>() {
            sl2vl.set_port(PortRef { node: h, port: 1 }, random_row(&mut rng, vls));
        }
        let expected = brute_force_cyclic(&fabric, &lids, &tables, &sls, &sl2vl);
        let verdict = verify(
            &fabric,
            &lids,
            &tables,
            &sls,
            &sl2vl,
            &VerifyOptions::default(),
        );
        assert_eq!(
            !verdict.is_deadlock_free(),
            expected,
            "case {case} {spec}: brute force says cyclic = {expected}, verifier:\n{verdict}"
        );
        if let Some(cycle) = &verdict.cycle {
            // Every dependency of the reported cycle is one that some route really has.
            let deps = brute_force_dependencies(&fabric, &lids, &tables, &sls, &sl2vl);
            let name = |c: &Channel| {
                let from = PortRef {
                    node: c.0,
                    port: c.1,
                };
                let to = fabric.peer(from).unwrap();
                (
                    format!("{} -> {}", fabric.port_name(from), fabric.port_name(to)),
                    c.2,
                )
            };
            let named: HashSet<_> = deps.iter().map(|(a, b)| (name(a), name(b))).collect();
            let k = cycle.channels.len();
            for i in 0..k {
                let (a, b) = (&cycle.channels[i], &cycle.channels[(i + 1) % k]);
                assert!(
                    named.contains(&((a.link.clone(), a.vl), (b.link.clone(), b.vl))),
                    "case {case}: {} VL {} -> {} VL {} is no dependency",
                    a.link,
                    a.vl,
                    b.link,
                    b.vl
                );
                assert!(
                    a.routes > 0,
                    "case {case}: the routes of each dependency are named"
                );
            }
        }
        if expected {
            cyclic += 1;
        } else {
            acyclic += 1;
        }
        // One SL for every route: the switch-grouped fast path must agree with brute force.
        let one = DefaultSl(rng.below(3) as u8);
        let expected = brute_force_cyclic(&fabric, &lids, &tables, &one, &sl2vl);
        let verdict = verify(
            &fabric,
            &lids,
            &tables,
            &one,
            &sl2vl,
            &VerifyOptions::default(),
        );
        assert_eq!(
            !verdict.is_deadlock_free(),
            expected,
            "case {case} (one SL)"
        );
        // And the DFSSSP assignment's tables are deadlock-free by both judges.
        if let Ok(a) = assign_vls(&fabric, &lids, &tables, &DfssspConfig::default()) {
            let t = a.sl2vl(&fabric);
            assert!(!brute_force_cyclic(
                &fabric,
                &lids,
                &tables,
                &a.path_sls,
                &t
            ));
            let v = verify(
                &fabric,
                &lids,
                &tables,
                &a.path_sls,
                &t,
                &VerifyOptions::default(),
            );
            assert!(v.is_deadlock_free(), "case {case} DFSSSP: {v}");
        }
    }
    assert!(
        cyclic >= 5 && acyclic >= 5,
        "both verdicts occur: {cyclic} cyclic, {acyclic} acyclic"
    );
}

/// Random SL-to-VL tables over `vls` VLs for every switch port pair and every host port.
fn random_sl2vl(fabric: &Fabric, rng: &mut Rng, vls: u64) -> Sl2VlTables {
    let mut sl2vl = Sl2VlTables::new(fabric, identity_row(vls as u8));
    for id in fabric.switches().collect::<Vec<_>>() {
        let ports = fabric.node(id).num_ports();
        let t = sl2vl.switch_mut(id, ports);
        for i in 0..=ports {
            for o in 0..=ports {
                t.set(i, o, random_row(rng, vls));
            }
        }
    }
    for h in fabric.hosts().collect::<Vec<_>>() {
        sl2vl.set_port(PortRef { node: h, port: 1 }, random_row(rng, vls));
    }
    sl2vl
}

#[test]
fn every_sl_verdict_matches_a_brute_force_search_over_all_sls_on_small_random_fabrics() {
    // One CDG with every route on each of the 16 SLs: the brute force unites the dependencies
    // of every SL, walked one SL at a time; the verifier must find the same dependencies and
    // the same verdict, however the random tables group the SLs on each port pair.
    let mut rng = Rng::new(7);
    let (mut cyclic, mut acyclic) = (0, 0);
    for case in 0..40 {
        let switches = 6 + 2 * rng.below(3);
        let degree = 3 + rng.below(2);
        let spec = format!("random:switches={switches},degree={degree},hosts=1,seed={case}");
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        let lmc = rng.below(2) as u8;
        assign_lids(&mut fabric, lmc).unwrap();
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let graph = RoutingGraph::new(&fabric);
        let routed = route(
            &graph,
            &RoutingConfig {
                layers: 1 << lmc,
                seed: case,
                ..Default::default()
            },
        );
        let tables = forwarding_tables(&fabric, &graph, &routed, &lids);
        let vls = 2 + rng.below(3);
        let sl2vl = random_sl2vl(&fabric, &mut rng, vls);
        let expected: HashSet<(Channel, Channel)> = (0..SLS as u8)
            .flat_map(|sl| {
                brute_force_dependencies(&fabric, &lids, &tables, &DefaultSl(sl), &sl2vl)
            })
            .collect();
        let every_sl = VerifyOptions {
            sls: RouteSls::EverySl,
            ..VerifyOptions::default()
        };
        // The path SLs must not matter: a table of random ones.
        let mut sls = SlTable::default();
        for (s, _) in lids.iter() {
            for (d, _) in lids.iter() {
                sls.entries.insert((s, d), rng.below(16) as u8);
            }
        }
        let verdict = verify(&fabric, &lids, &tables, &sls, &sl2vl, &every_sl);
        assert_eq!(
            verdict.dependencies,
            expected.len(),
            "case {case} {spec}:\n{verdict}"
        );
        let brute_cyclic = cyclic_edges(&expected);
        assert_eq!(
            !verdict.is_deadlock_free(),
            brute_cyclic,
            "case {case} {spec}: brute force says cyclic = {brute_cyclic}, verifier:\n{verdict}"
        );
        if brute_cyclic {
            cyclic += 1;
        } else {
            acyclic += 1;
        }
    }
    assert!(
        cyclic >= 5 && acyclic >= 5,
        "both verdicts occur: {cyclic} cyclic, {acyclic} acyclic"
    );
}

#[test]
fn routes_mapped_to_vl15_are_reported_as_dropped() {
    let fabric = ring(4, 1, 0);
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let tables = minimal_tables(&fabric, &lids, 1);
    let mut row = identity_row(8);
    row[3] = 15;
    let sl2vl = Sl2VlTables::uniform(&fabric, row);
    let v = verify(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(3),
        &sl2vl,
        &VerifyOptions::default(),
    );
    assert!(v.dropped.count > 0, "{v}");
    assert!(v.to_string().contains("VL 15"), "{v}");
}

#[test]
fn dumped_and_read_back_tables_give_the_same_verdict() {
    // q = 5 with 2 layers: DFSSSP's SLs written as a path-SL file and its SL2VL tables in
    // OpenSM's dump format, read back: the verifier's verdict does not change.
    let mut fabric = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut fabric, 1).unwrap();
    let Routed {
        lids,
        tables,
        graph,
        ..
    } = route_fabric(
        &fabric,
        &RoutingConfig {
            layers: 2,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 3,
            ..Default::default()
        },
    )
    .unwrap();
    let (sls, sl2vl_tables, outcome) = apply_scheme(
        &fabric,
        &lids,
        &graph,
        &tables,
        &Scheme::Dfsssp(DfssspConfig::default()),
        None,
    )
    .unwrap();
    let sls = sls.expect("DFSSSP gives path SLs");
    let SchemeOutcome::Dfsssp { vls_needed, .. } = outcome else {
        panic!("DFSSSP outcome")
    };
    assert!(vls_needed >= 2, "non-minimal layer needs a second VL");
    let direct = verify(
        &fabric,
        &lids,
        &tables,
        &sls,
        &sl2vl_tables,
        &VerifyOptions::default(),
    );
    assert!(direct.is_deadlock_free(), "{direct}");

    let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
    let mut entries = Vec::new();
    for &s in &all {
        for &d in &all {
            entries.push((s, d, sls.sl(s, d)));
        }
    }
    let sl_file = path_sl::write(&entries);
    let read: SlTable = SlTable {
        default: 0,
        entries: path_sl::parse(&sl_file)
            .unwrap()
            .entries
            .into_iter()
            .map(|(s, d, sl)| ((s, d), sl))
            .collect(),
    };
    let dump = sl2vl::write_opensm(&fabric, &sl2vl_tables);
    let back = sl2vl::parse(&dump, &fabric, [0; SLS]).unwrap();
    assert_eq!(back.switches, 50);
    assert_eq!(back.ports, 200);
    let reread = verify(
        &fabric,
        &lids,
        &tables,
        &read,
        &back.tables,
        &VerifyOptions::default(),
    );
    assert_eq!(
        reread, direct,
        "per-LID SLs and dumped tables give the same verdict"
    );

    // Everything on SL 0 (traffic that ignores the path SLs) deadlocks on these tables.
    let sl0 = verify(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &back.tables,
        &VerifyOptions::default(),
    );
    assert!(!sl0.is_deadlock_free(), "{sl0}");
}

#[test]
fn fewer_layers_when_vls_run_out_and_never_silently() {
    let mut fabric = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut fabric, 2).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = RoutingGraph::new(&fabric);
    let routing = RoutingConfig {
        layers: 4,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
        ..Default::default()
    };
    let scheme = Scheme::Dfsssp(DfssspConfig {
        vls: 1,
        ..DfssspConfig::default()
    });
    let err = route_deadlock_free(
        &fabric,
        &lids,
        &graph,
        &routing,
        std::slice::from_ref(&scheme),
        Shortage::Fail,
    )
    .unwrap_err();
    let DeadlockError::NotEnoughVls { needed, available } = err else {
        panic!("{err}")
    };
    assert!(needed >= 2 && available == 1);
    // Fewer layers: even one (minimal) layer needs 2 VLs on the Slim Fly, so after logging
    // each reduction the error comes back.
    let err = route_deadlock_free(
        &fabric,
        &lids,
        &graph,
        &routing,
        std::slice::from_ref(&scheme),
        Shortage::FewerLayers,
    )
    .unwrap_err();
    assert!(
        matches!(err, DeadlockError::NotEnoughVls { available: 1, .. }),
        "{err}"
    );
    // With 2 VLs the layers are reduced until they fit, and the reductions are reported.
    let scheme = Scheme::Dfsssp(DfssspConfig {
        vls: 2,
        ..DfssspConfig::default()
    });
    let done = route_deadlock_free(
        &fabric,
        &lids,
        &graph,
        &routing,
        std::slice::from_ref(&scheme),
        Shortage::FewerLayers,
    )
    .unwrap();
    assert_eq!(done.requested_layers, 4);
    let halvings = 2 - done.layers.trailing_zeros() as usize;
    assert_eq!(done.reductions.len(), halvings, "{:?}", done.reductions);
    if halvings > 0 {
        assert!(
            done.reductions[0].contains("only 2 exist"),
            "{:?}",
            done.reductions
        );
    }
    let v = verify(
        &fabric,
        &lids,
        &done.tables,
        done.path_sls.as_ref().expect("DFSSSP gives path SLs"),
        &done.sl2vl,
        &VerifyOptions::default(),
    );
    assert!(v.is_deadlock_free(), "{v}");
}

/// `ibfabric deadlock-check` on files: exit status, stdout, stderr.
fn deadlock_check(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .arg("deadlock-check")
        .args(args)
        .output()
        .expect("run ibfabric");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Minimal routing of a Slim Fly q = 5 written as ibroute output (`lfts.txt` in a scratch
/// directory); `deadlock-check` reads it with the spec as the fabric (LIDs come from the
/// tables' destination comments).
struct MinimalFiles {
    fabric: Fabric,
    lids: LidTable,
    tables: ForwardingTables,
    dir: tempfile::TempDir,
    lft: std::path::PathBuf,
}

fn minimal_files() -> MinimalFiles {
    let mut fabric = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut fabric, 0).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let tables = minimal_tables(&fabric, &lids, 1);
    let dir = tempfile::tempdir().unwrap();
    let lft = dir.path().join("lfts.txt");
    std::fs::write(
        &lft,
        ibfabric::io::lfts::write_ibroute(&fabric, &lids, &tables),
    )
    .unwrap();
    MinimalFiles {
        fabric,
        lids,
        tables,
        dir,
        lft,
    }
}

#[test]
fn deadlock_check_exits_0_1_and_2() {
    let MinimalFiles {
        fabric,
        lids,
        tables,
        dir,
        lft,
    } = minimal_files();
    let lft_arg = lft.to_str().unwrap();

    // Everything on SL 0 and one VL: the cycle is printed, exit 1.
    let (code, out, err) = deadlock_check(&["--fabric", "slimfly:q=5", "--lfts", lft_arg]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("DEADLOCK: a cycle of"), "{out}");
    assert!(out.contains("routes, e.g."), "{out}");

    // DFSSSP's SLs and SL-to-VL tables as files: deadlock-free, exit 0.
    let a = assign_vls(&fabric, &lids, &tables, &DfssspConfig::default()).unwrap();
    let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
    let entries: Vec<(u16, u16, u8)> = all
        .iter()
        .flat_map(|&s| all.iter().map(move |&d| (s, d)))
        .map(|(s, d)| (s, d, a.path_sls.sl(s, d)))
        .collect();
    let sl_file = dir.path().join("path-sl.txt");
    std::fs::write(&sl_file, path_sl::write(&entries)).unwrap();
    let sl2vl_file = dir.path().join("opensm-sl2vl.dump");
    std::fs::write(&sl2vl_file, sl2vl::write_opensm(&fabric, &a.sl2vl(&fabric))).unwrap();
    let (code, out, err) = deadlock_check(&[
        "--fabric",
        "slimfly:q=5",
        "--lfts",
        lft_arg,
        "--sl2vl",
        sl2vl_file.to_str().unwrap(),
        "--path-sl",
        sl_file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let verdict: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(verdict["cycle"].is_null());
    assert_eq!(verdict["routes"], 250 * 250 - 250);

    // Bad input: exit 2 with the file and line.
    let bad = dir.path().join("bad.dump");
    std::fs::write(&bad, "Switch 0x1, base LID 1\n0 1 : 0 1 2\n").unwrap();
    let (code, _, err) = deadlock_check(&[
        "--fabric",
        "slimfly:q=5",
        "--lfts",
        lft_arg,
        "--sl2vl",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.dump: line 2"), "{err}");
    let (code, _, err) = deadlock_check(&["--fabric", "slimfly:q=5", "--lfts", "/nonexistent"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn an_empty_path_sl_file_is_bad_input_not_a_deadlock() {
    let MinimalFiles { dir, lft, .. } = minimal_files();
    let empty = dir.path().join("path-sl.txt");
    std::fs::write(&empty, "").unwrap();
    let (code, out, err) = deadlock_check(&[
        "--fabric",
        "slimfly:q=5",
        "--lfts",
        lft.to_str().unwrap(),
        "--path-sl",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("path-sl.txt: no path SL in it"), "{err}");
    assert!(!out.contains("DEADLOCK"), "{out}");
}

/// Every channel dependency of every multicast group, enumerated explicitly: each sender (a
/// host cabled to a port of an entry, or a switch whose entry holds port 0) sends one packet
/// on the group's SL, and every copy is followed switch by switch (a state seen before, in a
/// looping table, is not followed again).
fn brute_force_multicast(
    fabric: &Fabric,
    mfts: &MulticastTables,
    sl_of: &dyn Fn(u16) -> u8,
    sl2vl: &Sl2VlTables,
) -> HashSet<(Channel, Channel)> {
    let mut edges = HashSet::new();
    for mlid in mfts.mlids() {
        let sl = sl_of(mlid);
        let mut senders: Vec<(NodeId, u8, Option<Channel>)> = Vec::new();
        for (s, ports) in mfts.group(mlid) {
            for q in ports.iter() {
                if q == 0 {
                    senders.push((s, 0, None));
                    continue;
                }
                let Some(host) = fabric.peer(PortRef { node: s, port: q }) else {
                    continue;
                };
                let vl = sl2vl.port_vl(host, sl);
                if !fabric.node(host.node).is_switch() && vl != 15 {
                    senders.push((s, q, Some((host.node, host.port, vl))));
                }
            }
        }
        for sender in senders {
            let mut seen = HashSet::new();
            let mut stack = vec![sender];
            while let Some((at, in_port, held)) = stack.pop() {
                if !seen.insert((at, in_port, held)) {
                    continue;
                }
                let Some(entry) = mfts.ports(at, mlid) else {
                    continue;
                };
                for q in entry.iter().filter(|&q| q != in_port && q != 0) {
                    let vl = sl2vl.switch_vl(at, in_port, q, sl);
                    if vl == 15 {
                        continue;
                    }
                    let ch = (at, q, vl);
                    if let Some(h) = held {
                        edges.insert((h, ch));
                    }
                    if let Some(peer) = fabric.peer(PortRef { node: at, port: q })
                        && fabric.node(peer.node).is_switch()
                    {
                        stack.push((peer.node, peer.port, Some(ch)));
                    }
                }
            }
        }
    }
    edges
}

/// Random groups on `fabric`: random member hosts, a random spanning tree of the switches
/// (breadth-first from a random root over shuffled neighbours) with the members' host ports
/// and sometimes port 0; with `loops`, now and then an extra switch port that makes the table
/// loop.
fn random_groups(fabric: &Fabric, rng: &mut Rng, groups: u16, loops: bool) -> MulticastTables {
    let mut mfts = MulticastTables::new();
    let switches: Vec<NodeId> = fabric.switches().collect();
    for g in 0..groups {
        let mlid = 0xc000 + g;
        let root = switches[rng.below(switches.len() as u64) as usize];
        let mut parent_port: HashMap<NodeId, Option<u8>> = HashMap::from([(root, None)]);
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(v) = queue.pop_front() {
            let mut next: Vec<(u8, PortRef)> = fabric
                .neighbours(v)
                .filter(|(_, p)| fabric.node(p.node).is_switch())
                .collect();
            rng.shuffle(&mut next);
            for (port, peer) in next {
                if let std::collections::hash_map::Entry::Vacant(e) = parent_port.entry(peer.node) {
                    e.insert(Some(peer.port));
                    mfts.add_port(v, mlid, port);
                    mfts.add_port(peer.node, mlid, peer.port);
                    queue.push_back(peer.node);
                }
            }
        }
        for &s in &switches {
            for (port, peer) in fabric.neighbours(s) {
                let host = !fabric.node(peer.node).is_switch();
                if (host && rng.below(2) == 0) || (!host && loops && rng.below(12) == 0) {
                    mfts.add_port(s, mlid, port);
                }
            }
            if rng.below(8) == 0 {
                mfts.add_port(s, mlid, 0);
            }
        }
    }
    mfts
}

#[test]
fn unicast_and_multicast_verdicts_match_a_brute_force_search_on_small_random_fabrics() {
    let mut rng = Rng::new(17);
    let (mut cyclic, mut acyclic, mut closed_by_groups) = (0, 0, 0);
    for case in 0..40 {
        let switches = 6 + 2 * rng.below(3);
        let degree = 3 + rng.below(2);
        let spec = format!("random:switches={switches},degree={degree},hosts=2,seed={case}");
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, 0).unwrap();
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let tables = minimal_tables(&fabric, &lids, 1);
        let vls = 2 + rng.below(3);
        let sl2vl = random_sl2vl(&fabric, &mut rng, vls);
        let groups = 1 + rng.below(2) as u16;
        let loops = rng.below(4) == 0;
        let mfts = random_groups(&fabric, &mut rng, groups, loops);
        let group_sls: BTreeMap<u16, u8> = mfts
            .mlids()
            .into_iter()
            .map(|m| (m, rng.below(3) as u8))
            .collect();
        let unicast_sl = DefaultSl(rng.below(3) as u8);
        let multicast = Multicast {
            tables: &mfts,
            sls: &group_sls,
            default_sl: 0,
        };

        // The groups' own SLs.
        let mut expected = brute_force_dependencies(&fabric, &lids, &tables, &unicast_sl, &sl2vl);
        let unicast_cyclic = cyclic_edges(&expected);
        expected.extend(brute_force_multicast(
            &fabric,
            &mfts,
            &|m| group_sls[&m],
            &sl2vl,
        ));
        let options = VerifyOptions::default();
        let v = verify_with_multicast(
            &fabric,
            &lids,
            &tables,
            &unicast_sl,
            &sl2vl,
            &multicast,
            &options,
        );
        assert_eq!(v.dependencies, expected.len(), "case {case} {spec}:\n{v}");
        let brute_cyclic = cyclic_edges(&expected);
        assert_eq!(
            !v.is_deadlock_free(),
            brute_cyclic,
            "case {case} {spec}:\n{v}"
        );
        let m = v.multicast.expect("multicast counts");
        assert_eq!((m.groups, m.entries), (mfts.mlids().len(), mfts.len()));
        if brute_cyclic && !unicast_cyclic {
            closed_by_groups += 1;
            // The groups closed the cycle: some dependency of it is named by a group.
            let cycle = v.cycle.as_ref().unwrap();
            assert!(
                cycle.channels.iter().any(|c| !c.groups.is_empty()),
                "case {case}: {v}"
            );
        }

        // Every SL, for unicast and groups alike.
        let every: HashSet<(Channel, Channel)> = (0..SLS as u8)
            .flat_map(|sl| {
                let mut e =
                    brute_force_dependencies(&fabric, &lids, &tables, &DefaultSl(sl), &sl2vl);
                e.extend(brute_force_multicast(&fabric, &mfts, &|_| sl, &sl2vl));
                e
            })
            .collect();
        let v = verify_with_multicast(
            &fabric,
            &lids,
            &tables,
            &unicast_sl,
            &sl2vl,
            &multicast,
            &VerifyOptions {
                sls: RouteSls::EverySl,
                ..options
            },
        );
        assert_eq!(v.dependencies, every.len(), "case {case} every SL:\n{v}");
        assert_eq!(!v.is_deadlock_free(), cyclic_edges(&every), "case {case}");
        if brute_cyclic {
            cyclic += 1;
        } else {
            acyclic += 1;
        }
    }
    assert!(
        cyclic >= 5 && acyclic >= 5 && closed_by_groups >= 2,
        "both verdicts occur: {cyclic} cyclic ({closed_by_groups} closed by groups), {acyclic} acyclic"
    );
}

/// A 3-ring whose unicast routes depend sw1->sw2 -> sw2->sw0 -> sw0->sw1 but for the last
/// turn, and a group whose tree is the path sw0 - sw1 - sw2, which makes it.
fn ring_with_a_group() -> (Fabric, LidTable, ForwardingTables, MulticastTables) {
    let fabric = ring(3, 1, 0);
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let mut tables = minimal_tables(&fabric, &lids, 1);
    let sw = |i: usize| fabric.node_by_name(&format!("sw{i}")).unwrap();
    let host_lid = |i: usize| {
        let h = fabric.node_by_name(&format!("h{i}-0")).unwrap();
        fabric.node(h).ports[1].lid
    };
    // Port 1 of sw(i) leads to sw(i+1), port 2 to sw(i-1), port 3 to the host.
    tables.set(sw(1), host_lid(0), 1); // h1 -> h0 the long way: sw1 -> sw2 -> sw0
    tables.set(sw(2), host_lid(0), 1);
    tables.set(sw(2), host_lid(1), 1); // h2 -> h1 the long way: sw2 -> sw0 -> sw1
    tables.set(sw(0), host_lid(1), 1);
    let mut mfts = MulticastTables::new();
    mfts.set(sw(0), 0xc000, [1, 3].into_iter().collect());
    mfts.set(sw(1), 0xc000, [1, 2, 3].into_iter().collect());
    mfts.set(sw(2), 0xc000, [2, 3].into_iter().collect());
    (fabric, lids, tables, mfts)
}

#[test]
fn a_group_whose_tree_closes_a_unicast_chain_makes_a_cycle_named_by_its_mlid() {
    let (fabric, lids, tables, mfts) = ring_with_a_group();
    let sl2vl = Sl2VlTables::uniform(&fabric, identity_row(8));
    let options = VerifyOptions::default();
    let unicast = verify(&fabric, &lids, &tables, &DefaultSl(0), &sl2vl, &options);
    assert!(unicast.is_deadlock_free(), "{unicast}");
    let on_sl = |sl: u8| BTreeMap::from([(0xc000, sl)]);
    let sls = on_sl(0);
    let multicast = Multicast {
        tables: &mfts,
        sls: &sls,
        default_sl: 0,
    };
    let v = verify_with_multicast(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &sl2vl,
        &multicast,
        &options,
    );
    let cycle = v.cycle.as_ref().expect("the group closes the cycle");
    assert_eq!(cycle.channels.len(), 3, "{v}");
    let by_group: Vec<&ibfabric::deadlock::CycleChannel> = cycle
        .channels
        .iter()
        .filter(|c| !c.groups.is_empty())
        .collect();
    assert_eq!(by_group.len(), 1, "one dependency is the group's: {v}");
    assert_eq!(by_group[0].groups, vec![0xc000]);
    assert_eq!(by_group[0].routes, 0, "no unicast route makes it");
    let text = v.to_string();
    assert!(text.contains("multicast MLID 0xc000"), "{text}");
    assert!(
        text.contains("multicast: 1 groups (3 switch entries)"),
        "{text}"
    );

    // The group on SL 1, which the tables put on VL 1 away from the routes on VL 0: no cycle
    // with the groups' SLs, the cycle again when anything may be on any SL.
    let sls = on_sl(1);
    let multicast = Multicast {
        sls: &sls,
        ..multicast
    };
    let v = verify_with_multicast(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &sl2vl,
        &multicast,
        &options,
    );
    assert!(v.is_deadlock_free(), "{v}");
    let every = VerifyOptions {
        sls: RouteSls::EverySl,
        ..options
    };
    let v = verify_with_multicast(
        &fabric,
        &lids,
        &tables,
        &DefaultSl(0),
        &sl2vl,
        &multicast,
        &every,
    );
    assert!(!v.is_deadlock_free(), "{v}");
}

/// `mfts` as OpenSM writes `opensm.mcfdbs`.
fn write_mcfdbs(fabric: &Fabric, mfts: &MulticastTables) -> String {
    let mut out = String::new();
    for s in mfts.switches() {
        out += &format!(
            "\nSwitch 0x{:016x}\nLID    : Out Port(s)\n",
            fabric.node(s).guid.0
        );
        for (mlid, ports) in mfts.table(s) {
            out += &format!("0x{mlid:04X} :");
            for p in ports.iter() {
                out += &format!(" 0x{p:03X} ");
            }
            out.push('\n');
        }
    }
    out
}

#[test]
fn deadlock_check_and_analyze_read_multicast_tables() {
    let MinimalFiles {
        fabric, dir, lft, ..
    } = minimal_files();
    let mut rng = Rng::new(3);
    let mfts = random_groups(&fabric, &mut rng, 2, false);
    let mcfdbs = dir.path().join("opensm.mcfdbs");
    std::fs::write(&mcfdbs, write_mcfdbs(&fabric, &mfts)).unwrap();
    let sls = dir.path().join("group-sls.txt");
    std::fs::write(&sls, "0xc000 1\n0xc001 2\n").unwrap();
    let (lft_arg, mft_arg) = (lft.to_str().unwrap(), mcfdbs.to_str().unwrap());
    let base = [
        "--fabric",
        "slimfly:q=5",
        "--lfts",
        lft_arg,
        "--mfts",
        mft_arg,
    ];
    let (code, out, err) = deadlock_check(&base);
    assert_eq!(code, 1, "minimal routing on one VL is cyclic: {out}{err}");
    assert!(out.contains("Unicast routes:\n"), "{out}");
    assert!(
        out.contains("Unicast routes and multicast groups:\n"),
        "{out}"
    );
    assert!(out.contains("multicast: 2 groups"), "{out}");
    assert!(
        out.contains("multicast delivery: all 2 groups deliver to exactly their members"),
        "{out}"
    );
    let mut args = base.to_vec();
    args.extend([
        "--mcast-sls",
        sls.to_str().unwrap(),
        "--every-sl",
        "--format",
        "json",
    ]);
    let (code, out, err) = deadlock_check(&args);
    assert_eq!(code, 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(report["unicast"]["every_sl"]["routes"].as_u64().unwrap() > 0);
    assert_eq!(
        report["unicast_multicast"]["path_sl"]["multicast"]["groups"],
        2
    );
    assert_eq!(report["delivery"]["delivering"], 2);

    // A switch of the tree without its entry: the groups no longer reach every member.
    let (s, _) = mfts.group(0xc000).find(|(_, p)| p.len() > 2).unwrap();
    let mut broken = mfts.clone();
    broken.set(s, 0xc000, ibfabric::routing::PortSet::EMPTY);
    std::fs::write(&mcfdbs, write_mcfdbs(&fabric, &broken)).unwrap();
    let (code, out, _) = deadlock_check(&base);
    assert_eq!(code, 1);
    assert!(
        out.contains("1 of 2 groups do NOT deliver to exactly their members"),
        "{out}"
    );
    assert!(
        out.contains("(no entry)") || out.contains("misses"),
        "{out}"
    );
    let analyze = std::process::Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args([
            "analyze",
            "--fabric",
            "slimfly:q=5",
            "--lfts",
            lft_arg,
            "--mfts",
            mft_arg,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&analyze.stdout);
    assert_eq!(analyze.status.code(), Some(1), "{text}");
    assert!(
        text.contains("multicast: 2 groups, 1 deliver to exactly their members"),
        "{text}"
    );
    assert!(text.contains("WRONG"), "{text}");

    // Bad input names the file and line; tables of another fabric are refused.
    std::fs::write(&mcfdbs, "Switch 0x0000000000000001\n").unwrap();
    let (code, _, err) = deadlock_check(&base);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("opensm.mcfdbs: line 1: expected"), "{err}");
    std::fs::write(&sls, "0xc000 sixteen\n").unwrap();
    std::fs::write(&mcfdbs, write_mcfdbs(&fabric, &mfts)).unwrap();
    let mut args = base.to_vec();
    args.extend(["--mcast-sls", sls.to_str().unwrap()]);
    let (code, _, err) = deadlock_check(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("group-sls.txt: line 1"), "{err}");
}
