//! Multicast inside stock OpenSM with the plugin, under ibsim (default configuration, LMC 2,
//! `qos TRUE`): every host joins the IPoIB broadcast group and subsets groups of their own.
//!
//! On a Slim Fly q = 5 the multicast forwarding tables read back from every switch
//! (`ibroute -M`) must hold, per group, one tree of single cables that delivers to exactly the
//! group's hosts, every path of which rises and then falls in the cable order the lanes by
//! port pair are made of; and the plugin's log line must say so.
//!
//! The acceptance of the multicast proof (Slim Fly q = 5 and q = 7, MLFM d = 3; the broadcast
//! group and two partial groups, one on another SL): the tables read back deliver every group
//! to exactly its members, and the INDEPENDENT verifier on the read-back unicast tables,
//! SL-to-VL tables and multicast tables finds unicast + multicast deadlock-free with every
//! route and every group on every SL. `ibfabric analyze --mfts` on the same files reports the
//! groups as the analyser does in memory. The same holds after members leave and join and
//! after a cable a tree used is cut (daemon mode).

use crate::common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::process::Command;
use std::time::{Duration, Instant};

use common::mcast::{Creation, IPOIB_BROADCAST, host_port_guids, join, leave};
use common::plugin::{
    LAYERED_USED, canonical, passes_read_with, plugin_config, run_opensm_with_conf, wait_settled,
};
use common::readback::{ReadBack, core_routing, wait_for_dump};
use common::{Ibsim, OpenSm};
use ibfabric::Fabric;
use ibfabric::analysis::multicast::{MulticastReport, analyze_groups};
use ibfabric::deadlock::verify::{Multicast, TransitionVerdict, verify_with_multicast};
use ibfabric::deadlock::{DefaultSl, RouteSls, Verdict, VerifyOptions};
use ibfabric::deadlock::{PortPairConfig, Scheme};
use ibfabric::io::{ibnetdiscover, ibsim, mfts};
use ibfabric::routing::MulticastTables;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::multicast::{
    CableLoad, Coverage, MemberPort, MulticastTree, member_ports, tree_valley,
};
use ibfabric::session::PassFigures;
use ibfabric::session::sweep_record::parse_sweep_log;
use ibfabric::topology::{NodeId, PortRef};

/// A group of the hosts' own.
const PARTIAL_GROUP: &str = "ff12:e001::7";

/// Per MLID, per switch, the ports of its entry, parsed from `ibroute -M` of one switch:
/// a `Ports:` header whose digits name the port columns (port mod 10), then one line per
/// MLID with an `x` under each port of the entry.
fn parse_mft(text: &str, switch: NodeId, into: &mut BTreeMap<u16, BTreeMap<NodeId, Vec<u8>>>) {
    let mut columns: Vec<usize> = Vec::new();
    for line in text.lines() {
        if let Some(at) = line.find("Ports:") {
            columns = line
                .char_indices()
                .skip(at + "Ports:".len())
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            continue;
        }
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let Some(hex) = first.strip_prefix("0x") else {
            continue;
        };
        let Ok(mlid) = u16::from_str_radix(hex, 16) else {
            continue;
        };
        let bytes = line.as_bytes();
        let ports: Vec<u8> = columns
            .iter()
            .enumerate()
            .filter(|&(_, &col)| bytes.get(col) == Some(&b'x'))
            .map(|(port, _)| port as u8)
            .collect();
        into.entry(mlid).or_default().insert(switch, ports);
    }
}

/// Every switch's multicast table, read back.
fn multicast_tables(sim: &Ibsim, fabric: &Fabric) -> BTreeMap<u16, BTreeMap<NodeId, Vec<u8>>> {
    let mut tables = BTreeMap::new();
    for s in fabric.switches() {
        let lid = fabric.node(s).ports[0].lid.to_string();
        parse_mft(&sim.run("ibroute", &["-M", &lid]), s, &mut tables);
    }
    tables
}

/// The group's tree as the switches hold it, checked to be one: every switch-to-switch port
/// of an entry is in the entry at the cable's other end too, no switch sends twice to one
/// neighbour, and the entries' cables connect the switches without a cycle. Returns the tree
/// (rooted at its first switch) and the hosts it delivers to.
fn tree_from_entries(
    fabric: &Fabric,
    graph: &RoutingGraph,
    entries: &BTreeMap<NodeId, Vec<u8>>,
    what: &str,
) -> (MulticastTree, BTreeSet<NodeId>) {
    let entries: BTreeMap<NodeId, &Vec<u8>> = entries
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(&s, p)| (s, p))
        .collect();
    let mut hosts = BTreeSet::new();
    let mut links: BTreeMap<NodeId, Vec<(NodeId, u8, u8)>> = BTreeMap::new();
    let mut members = Vec::new();
    for (&s, ports) in &entries {
        let index = graph.index_of[s.index()] as usize;
        let mut neighbours = BTreeSet::new();
        for &port in ports.iter() {
            if port == 0 {
                members.push(MemberPort {
                    switch: index,
                    port,
                });
                continue;
            }
            let peer = fabric
                .peer(PortRef { node: s, port })
                .unwrap_or_else(|| panic!("{what}: switch {s:?} port {port} is not cabled"));
            if fabric.node(peer.node).is_switch() {
                assert!(
                    entries
                        .get(&peer.node)
                        .is_some_and(|p| p.contains(&peer.port)),
                    "{what}: {s:?} port {port} sends to a switch that does not send back"
                );
                assert!(
                    neighbours.insert(peer.node),
                    "{what}: {s:?} sends twice to {peer:?}"
                );
                links
                    .entry(s)
                    .or_default()
                    .push((peer.node, port, peer.port));
            } else {
                hosts.insert(peer.node);
                members.push(MemberPort {
                    switch: index,
                    port,
                });
            }
        }
    }
    let cable_count: usize = links.values().map(Vec::len).sum::<usize>() / 2;
    assert_eq!(
        cable_count + 1,
        entries.len(),
        "{what}: a tree has one cable fewer than switches"
    );
    let root = *entries.keys().next().expect("a tree");
    let mut seen = BTreeSet::from([root]);
    let mut queue = VecDeque::from([root]);
    let load = CableLoad::new(fabric, graph);
    let mut cables = Vec::new();
    while let Some(s) = queue.pop_front() {
        for &(t, _, _) in links.get(&s).into_iter().flatten() {
            if seen.insert(t) {
                queue.push_back(t);
                let (parent, child) = (
                    graph.index_of[s.index()] as usize,
                    graph.index_of[t.index()] as usize,
                );
                // The cable the entries use (not necessarily the one the load would pick).
                let mut cable = load.cable(graph, parent, child);
                let &(_, parent_port, child_port) =
                    links[&s].iter().find(|l| l.0 == t).expect("a link");
                cable.parent_port = parent_port;
                cable.child_port = child_port;
                cables.push(cable);
            }
        }
    }
    assert_eq!(
        seen.len(),
        entries.len(),
        "{what}: the entries' cables connect every switch"
    );
    let tree = MulticastTree {
        root: Some(graph.index_of[root.index()] as usize),
        cables,
        members,
        unreached: Vec::new(),
        coverage: Coverage::Unimodal,
    };
    (tree, hosts)
}

fn until<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "not within 90 s: {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn slim_fly_q5_groups_reach_exactly_their_members_inside_the_lanes_by_port_pair() {
    let sim = Ibsim::start(&ibsim::write_net(&common::generated("slimfly:q=5")));
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    assert!(sm.log().contains(LAYERED_USED), "{}", sm.log());
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .expect("ibnetdiscover output")
        .fabric;
    let hosts = host_port_guids(&fabric);
    assert_eq!(hosts.len(), 200);
    // Every seventh host, so the subset touches many switches but not all.
    let subset: Vec<u64> = hosts.iter().copied().step_by(7).collect();
    let broadcast = join(&sim, IPOIB_BROADCAST, &hosts, Creation::Existing);
    let partial = join(&sim, PARTIAL_GROUP, &subset, Creation::CreateWithSl(1));

    let host_of_guid = |guid: u64| {
        fabric
            .hosts()
            .find(|&h| fabric.node(h).ports[1].guid.0 == guid)
            .expect("a host port")
    };
    let canon = canonical(&fabric);
    let graph = RoutingGraph::new(&fabric);
    let order_canon = core_routing(&canon, &[Scheme::PortPair(PortPairConfig { vls: 8 })])
        .order
        .expect("lanes by port pair have an order");
    // The core's order is over the canonical graph: carry each edge's rank over.
    let canon_graph = RoutingGraph::new(&canon);
    let canon_switch = |s: usize| {
        let node = canon
            .node_by_guid(fabric.node(graph.nodes[s]).guid)
            .unwrap();
        canon_graph.index_of[node.index()] as usize
    };
    let ranks: Vec<u32> = (0..graph.edge_count())
        .map(|e| {
            let (a, b) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
            order_canon.rank(
                canon_graph
                    .edge_between(canon_switch(a), canon_switch(b))
                    .unwrap(),
            )
        })
        .collect();
    let order = ibfabric::routing::cable_order::CableOrder::from_ranks(ranks);

    for (group, joined, guids) in [
        ("broadcast", &broadcast, &hosts),
        ("partial", &partial, &subset),
    ] {
        let what = format!("{group} group, MLID {:#06x}", joined.mlid);
        let expected: BTreeSet<NodeId> = guids.iter().map(|&g| host_of_guid(g)).collect();
        // Joins are processed after the sweep: wait until the tables deliver to every member.
        let entries = until(&format!("{what} programmed"), || {
            let mut tables = multicast_tables(&sim, &fabric);
            let entries = tables.remove(&joined.mlid)?;
            let (_, reached) = tree_from_entries(&fabric, &graph, &entries, &what);
            (reached == expected).then_some(entries)
        });
        let (tree, reached) = tree_from_entries(&fabric, &graph, &entries, &what);
        assert_eq!(reached, expected, "{what}: delivers to exactly its members");
        assert_eq!(
            tree_valley(&order, &tree),
            None,
            "{what}: a valley in the tree"
        );
        // The switches the members hang on are all in the tree.
        let ends: Vec<PortRef> = expected
            .iter()
            .map(|&h| PortRef { node: h, port: 1 })
            .collect();
        let (ports, _) = member_ports(&fabric, &graph, &ends);
        let switches = tree.switches();
        assert!(ports.iter().all(|m| switches.contains(&m.switch)), "{what}");
        let line = format!(
            "multicast MLID {:#06x}: {} member ports",
            joined.mlid,
            guids.len()
        );
        let log = until(&format!("{what}: the plugin's line"), || {
            let log = sm.log();
            log.contains(&line).then_some(log)
        });
        let logged = log.lines().rev().find(|l| l.contains(&line)).unwrap();
        assert!(
            logged.contains(
                "inside the lanes by port pair: deadlock-free with the unicast routes whatever SL"
            ),
            "{logged}"
        );
    }
}

/// The two partial groups of the acceptance, as in `tests/multicast_opensm.rs`: a third of
/// the hosts on SL 0 and every fifth host on SL 1.
const PARTIAL_GROUPS: [&str; 2] = ["ff12:e001::1", "ff12:e001::2"];

/// A group as joined: its MGID, the SA's answer and its member ports' GUIDs.
struct Group {
    mgid: &'static str,
    joined: common::mcast::Joined,
    guids: Vec<u64>,
}

/// ibsim on `spec`, OpenSM with the plugin as a daemon (the SA must answer the joins) with
/// `qos TRUE`, settled; the number of routings so far.
fn start(spec: &str) -> (Ibsim, OpenSm, usize) {
    let sim = Ibsim::start(&ibsim::write_net(&common::generated(spec)));
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    let routings = wait_settled(&sm, 0);
    (sim, sm, routings)
}

/// The broadcast group joined by every host, a third of the hosts creating a group with SL 0
/// and every fifth host one with SL 1.
fn join_acceptance_groups(sim: &Ibsim) -> Vec<Group> {
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .expect("ibnetdiscover output")
        .fabric;
    let hosts = host_port_guids(&fabric);
    let third: Vec<u64> = hosts[..hosts.len() / 3].to_vec();
    let fifth: Vec<u64> = hosts.iter().copied().step_by(5).collect();
    [
        (IPOIB_BROADCAST, hosts, Creation::Existing),
        (PARTIAL_GROUPS[0], third, Creation::CreateWithSl(0)),
        (PARTIAL_GROUPS[1], fifth, Creation::CreateWithSl(1)),
    ]
    .into_iter()
    .map(|(mgid, guids, creation)| Group {
        mgid,
        joined: join(sim, mgid, &guids, creation),
        guids,
    })
    .collect()
}

/// What one check of the read-back fabric found.
struct Checked {
    back: ReadBack,
    tables: MulticastTables,
    report: MulticastReport,
    their_sls: Verdict,
    every_sl: Verdict,
}

/// Reads the fabric back once the switches' MFTs deliver every group of `groups` to exactly
/// its members; asserts that, the plugin's log line of every group, that the verifier finds
/// unicast + multicast deadlock-free on the groups' SLs and on every SL, and that
/// `ibfabric analyze --mfts` on the read-back files reports the groups as the analyser does.
fn check(sim: &Ibsim, sm: &OpenSm, groups: &[Group], what: &str) -> Checked {
    let mlids: Vec<u16> = groups.iter().map(|g| g.joined.mlid).collect();
    let deadline = Instant::now() + Duration::from_secs(90);
    let (back, tables, text, members) = loop {
        let back = ReadBack::read(sim, sm);
        let port_of: BTreeMap<u64, PortRef> = back
            .fabric
            .hosts()
            .map(|h| {
                (
                    back.fabric.node(h).ports[1].guid.0,
                    PortRef { node: h, port: 1 },
                )
            })
            .collect();
        let members: BTreeMap<u16, Vec<PortRef>> = groups
            .iter()
            .map(|g| {
                let mut ports: Vec<PortRef> = g.guids.iter().map(|guid| port_of[guid]).collect();
                ports.sort_unstable();
                (g.joined.mlid, ports)
            })
            .collect();
        let (tables, text) = back.read_mfts(sim, sm, &mlids);
        let exact = members
            .iter()
            .all(|(&mlid, ports)| &tables.members(&back.fabric, mlid) == ports)
            && analyze_groups(&back.fabric, &tables, &members).all_deliver();
        if exact {
            break (back, tables, text, members);
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the groups do not reach exactly their members within 90 s:\n{}",
            analyze_groups(&back.fabric, &tables, &members)
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let fabric = &back.fabric;
    let report = analyze_groups(fabric, &tables, &members);
    assert_eq!(
        report.groups.iter().map(|g| g.mlid).collect::<Vec<_>>(),
        mlids
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        "{what}: the tables hold exactly the joined groups"
    );
    assert!(report.all_deliver(), "{what}:\n{report}");

    for g in groups {
        let line = format!(
            "multicast MLID {:#06x}: {} member ports",
            g.joined.mlid,
            g.guids.len()
        );
        let log = until(&format!("{what}: the plugin's line for {}", g.mgid), || {
            let log = sm.log();
            log.contains(&line).then_some(log)
        });
        let logged = log.lines().rev().find(|l| l.contains(&line)).unwrap();
        assert!(
            logged.contains("inside the lanes by port pair"),
            "{what}: {logged}"
        );
    }

    let sls: BTreeMap<u16, u8> = groups
        .iter()
        .map(|g| (g.joined.mlid, g.joined.sl))
        .collect();
    let multicast = Multicast {
        tables: &tables,
        sls: &sls,
        default_sl: 0,
    };
    let verdict = |sls: RouteSls| {
        verify_with_multicast(
            fabric,
            &back.lids,
            &back.tables,
            &DefaultSl(0),
            &back.sl2vl,
            &multicast,
            &VerifyOptions {
                sls,
                ..VerifyOptions::default()
            },
        )
    };
    // Sources and destinations: every LID (each host port's 2^LMC, each switch's own).
    let lids = back.lids.iter().count();
    let their_sls = verdict(VerifyOptions::default().sls);
    let every_sl = verdict(RouteSls::EverySl);
    for (v, sls) in [(&their_sls, "the groups' SLs"), (&every_sl, "every SL")] {
        assert_eq!(
            (v.sources, v.destinations),
            (lids, lids),
            "{what}: every route checked\n{v}"
        );
        assert_eq!(v.broken.count, 0, "{what}:\n{v}");
        let counts = v.multicast.expect("the groups were checked");
        assert_eq!(
            (counts.groups, counts.entries),
            (mlids.len(), tables.len()),
            "{what}: every group checked\n{v}"
        );
        assert!(
            v.is_deadlock_free(),
            "{what}, unicast + multicast on {sls}:\n{v}"
        );
    }

    assert_analyze_binary_agrees(sim, &back, &text, &tables, what);
    Checked {
        back,
        tables,
        report,
        their_sls,
        every_sl,
    }
}

/// `ibfabric analyze --mfts --format json` on the read-back files (ibnetdiscover, `ibroute`
/// and `ibroute -M` of every switch) exits 0 and reports the groups as [`analyze_groups`]
/// does on the same tables in memory.
fn assert_analyze_binary_agrees(
    sim: &Ibsim,
    back: &ReadBack,
    mfts_text: &str,
    tables: &MulticastTables,
    what: &str,
) {
    let dir = sim.dir();
    let topo = dir.join("readback.topo");
    std::fs::write(&topo, sim.run("ibnetdiscover", &[])).unwrap();
    let routes: String = back
        .fabric
        .switches()
        .map(|s| sim.run("ibroute", &[&back.fabric.node(s).ports[0].lid.to_string()]))
        .collect();
    let lfts = dir.join("readback.lfts");
    std::fs::write(&lfts, routes).unwrap();
    let mfts = dir.join("readback.mfts");
    std::fs::write(&mfts, mfts_text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .arg("analyze")
        .arg("--fabric")
        .arg(&topo)
        .arg("--lfts")
        .arg(&lfts)
        .arg("--mfts")
        .arg(&mfts)
        .args(["--format", "json"])
        .output()
        .expect("run ibfabric");
    assert!(
        out.status.success(),
        "{what}: ibfabric analyze --mfts exited {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let in_memory = analyze_groups(&back.fabric, tables, &BTreeMap::new());
    assert_eq!(
        json["multicast"],
        serde_json::to_value(&in_memory).unwrap(),
        "{what}: analyze --mfts and the analyser in memory"
    );
}

/// One row for BENCHMARKS.md, as `tests/multicast_opensm.rs` prints OpenSM's engines: the
/// verdicts (unicast on SL 0; + the groups on their SLs; everything on every SL), each group's
/// tree depth and switches, and the most groups on one directed cable.
fn summary(spec: &str, groups: &[Group], checked: &Checked) -> String {
    let word = |v: &Verdict| {
        if v.is_deadlock_free() {
            "deadlock-free"
        } else {
            "cyclic"
        }
    };
    let added = |v: &Verdict| v.multicast.map_or(0, |m| m.dependencies);
    let depths: Vec<String> = groups
        .iter()
        .map(|g| {
            let r = checked
                .report
                .groups
                .iter()
                .find(|r| r.mlid == g.joined.mlid);
            let r = r.expect("a reported group");
            format!("{} ({} sw)", r.depth, r.switches)
        })
        .collect();
    let unicast = checked.back.verify(&DefaultSl(0));
    format!(
        "| {spec} | plugin | {} | {}; groups add {} dependencies | {}; groups add {} dependencies \
         | {} | {} ({}) |",
        word(&unicast),
        word(&checked.their_sls),
        added(&checked.their_sls),
        word(&checked.every_sl),
        added(&checked.every_sl),
        depths.join(" / "),
        checked.report.load.max,
        checked.report.load.busiest.as_deref().unwrap_or("none"),
    )
}

/// The acceptance on `spec`: three groups, read back, delivered exactly, deadlock-free.
fn acceptance(spec: &str) {
    let (sim, sm, _) = start(spec);
    let groups = join_acceptance_groups(&sim);
    let checked = check(&sim, &sm, &groups, spec);
    println!("plugin on {spec}:\n{}", checked.report);
    println!("{}", summary(spec, &groups, &checked));
}

#[test]
fn slim_fly_q5_unicast_and_multicast_read_back_are_deadlock_free_on_every_sl() {
    acceptance("slimfly:q=5");
}

#[test]
fn slim_fly_q7_unicast_and_multicast_read_back_are_deadlock_free_on_every_sl() {
    acceptance("slimfly:q=7");
}

#[test]
fn mlfm_d3_unicast_and_multicast_read_back_are_deadlock_free_on_every_sl() {
    acceptance("mlfm:d=3");
}

/// The transition verifier on the change of the trees between two checks of one unchanged
/// unicast routing: every mixture of the old and new entries of every group (each switch's
/// entry old, new or any part of each) with the routes, on every SL.
fn verify_trees_change(old: &Checked, new: &Checked) -> TransitionVerdict {
    let (tables, _) = old.back.onto(&new.back.fabric);
    assert_eq!(tables, new.back.tables, "the unicast routing is unchanged");
    new.back
        .verify_change_with_trees(&old.back, Some((&old.tables, &new.tables)))
}

/// One end of a switch-to-switch cable of group `mlid`'s tree as `checked` read it back, on
/// the `generated` fabric (whose names the simulator's console takes).
fn tree_cable(generated: &Fabric, checked: &Checked, mlid: u16) -> PortRef {
    let &(guid, port) = tree_ports(&checked.back, &checked.tables, mlid)
        .iter()
        .next()
        .expect("a tree cable");
    let node = generated
        .node_by_guid(ibfabric::topology::Guid(guid))
        .expect("a switch of the generated fabric");
    PortRef { node, port }
}

/// The switch-to-switch ports group `mlid` is replicated to, per switch GUID.
fn tree_ports(back: &ReadBack, tables: &MulticastTables, mlid: u16) -> BTreeSet<(u64, u8)> {
    let fabric = &back.fabric;
    tables
        .group(mlid)
        .flat_map(|(s, ports)| {
            ports
                .iter()
                .filter(move |&p| {
                    p != 0
                        && fabric
                            .peer(PortRef { node: s, port: p })
                            .is_some_and(|q| fabric.node(q.node).is_switch())
                })
                .map(move |p| (fabric.node(s).guid.0, p))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn slim_fly_q5_trees_are_rebuilt_within_the_proof_after_leaves_joins_and_a_lost_cable() {
    let generated = common::generated("slimfly:q=5");
    let (sim, sm, routings) = start("slimfly:q=5");
    let mut groups = join_acceptance_groups(&sim);
    let first = check(&sim, &sm, &groups, "joined");

    // Every other member of the third leaves; every fourth host of the last third joins.
    let hosts = host_port_guids(&first.back.fabric);
    let changing = &mut groups[1];
    let leaving: Vec<u64> = changing.guids.iter().copied().step_by(2).collect();
    leave(&sim, changing.mgid, &leaving);
    let joining: Vec<u64> = hosts[2 * hosts.len() / 3..]
        .iter()
        .copied()
        .step_by(4)
        .collect();
    let again = join(&sim, changing.mgid, &joining, Creation::Existing);
    assert_eq!(again, changing.joined, "the group keeps its MLID and SL");
    changing.guids.retain(|g| !leaving.contains(g));
    changing.guids.extend(&joining);
    let mlid = changing.joined.mlid;
    let moved = check(&sim, &sm, &groups, "after leaves and joins");
    assert_ne!(
        tree_ports(&first.back, &first.tables, mlid),
        tree_ports(&moved.back, &moved.tables, mlid),
        "the changed group's tree follows its members"
    );
    // While the switches took the new entries, any mixture of the old and the new tree was
    // safe: the kept tree and its new branches lie in one tree.
    let verdict = verify_trees_change(&first, &moved);
    assert!(verdict.is_safe(), "leaves and joins: {verdict}");

    // Cut a switch-to-switch cable of the broadcast group's tree.
    let end = tree_cable(&generated, &moved, groups[0].joined.mlid);
    let (guid, port) = (generated.node(end.node).guid.0, end.port);
    let cable = common::console_port(&generated, end);
    let log_before = sm.log().len();
    sim.console(&format!("Unlink {cable}"));
    wait_settled(&sm, routings);
    let cut = check(&sim, &sm, &groups, &format!("after cutting {cable}"));
    assert_eq!(
        cut.back.fabric.summary().switch_links + 1,
        moved.back.fabric.summary().switch_links,
        "one cable fewer"
    );
    for g in &groups {
        assert!(
            !tree_ports(&cut.back, &cut.tables, g.joined.mlid).contains(&(guid, port)),
            "{}: the tree still uses the cut cable {cable}",
            g.mgid
        );
    }
    // Every tree was rebuilt over the repaired routing, inside the lanes by port pair.
    let log = sm.log();
    let since = &log[log_before..];
    for g in &groups {
        let line = format!("multicast MLID {:#06x}: ", g.joined.mlid);
        let rebuilt = since
            .lines()
            .rev()
            .find(|l| l.contains(&line))
            .unwrap_or_else(|| panic!("{}: no tree built after the cut:\n{since}", g.mgid));
        assert!(
            rebuilt.contains("inside the lanes by port pair"),
            "{rebuilt}"
        );
    }
    assert!(!log.contains("not covered by the deadlock proof"), "{log}");
    assert!(!log.contains("NOT covered by the deadlock proof"), "{log}");
}

/// A pass of a staged change read back: the tables from OpenSM's dumps, and its multicast
/// dump (`opensm.mcfdbs`, written once the sweep programmed the trees), parsed later onto the
/// fabric the pass is compared on.
struct PassRead {
    back: ReadBack,
    mcfdbs: String,
}

fn read_pass(sim: &Ibsim, sm: &OpenSm) -> PassRead {
    PassRead {
        back: ReadBack::read_dumps(sim, sm),
        mcfdbs: wait_for_dump(sm, "opensm.mcfdbs"),
    }
}

/// The transition verifier on the change `from` → `to`, the trees of both included: every
/// mixture of forwarding entries, SL-to-VL tables and multicast entries (each switch's entry
/// old, new or any part of each) loop-free and deadlock-free with every route and every
/// group on every SL.
fn verify_pass(from: &PassRead, to: &PassRead) -> TransitionVerdict {
    let trees = |text: &str| {
        mfts::parse(text, &to.back.fabric)
            .expect("opensm.mcfdbs")
            .tables
    };
    let (old_trees, new_trees) = (trees(&from.mcfdbs), trees(&to.mcfdbs));
    to.back
        .verify_change_with_trees(&from.back, Some((&old_trees, &new_trees)))
}

/// Every pass of `read` (after `before`) proven safe with its trees; the passes' figures from
/// the sweep log `log` after its first `skip` passes.
fn check_tree_passes(
    before: &PassRead,
    read: &[PassRead],
    log: &std::path::Path,
    skip: usize,
    what: &str,
) -> Vec<PassFigures> {
    assert!(read.len() >= 2, "{what}: the change is staged");
    let mut from = before;
    for (i, to) in read.iter().enumerate() {
        let verdict = verify_pass(from, to);
        eprintln!("{what}, pass {}: {verdict}", i + 1);
        assert!(verdict.is_safe(), "{what}, pass {}: {verdict}", i + 1);
        from = to;
    }
    let figures: Vec<PassFigures> = sweep_passes(log).into_iter().skip(skip).collect();
    eprintln!("{what}: {figures:?}");
    assert_eq!(figures.len(), read.len(), "{what}: a record per pass");
    figures
}

/// The passes of staged changes the sweep log `log` records.
fn sweep_passes(log: &std::path::Path) -> Vec<PassFigures> {
    parse_sweep_log(&std::fs::read_to_string(log).unwrap_or_default())
        .unwrap()
        .into_iter()
        .filter_map(|r| r.pass)
        .collect()
}

#[test]
fn slim_fly_q5_trees_change_in_proven_passes_when_a_tree_cable_goes_and_comes_back() {
    let generated = common::generated("slimfly:q=5");
    let mut sim = Ibsim::start(&ibsim::write_net(&generated));
    let log = sim.dir().join("sweeps.jsonl");
    // A drain long enough to read every pass back before the next one.
    let config = plugin_config(
        &sim,
        "layered.yaml",
        &format!("sweep_log: {}\ntransition_drain_ms: 10000\n", log.display()),
    );
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    wait_settled(&sm, 0);
    let groups = join_acceptance_groups(&sim);
    let joined = check(&sim, &sm, &groups, "joined");
    let before = read_pass(&sim, &sm);

    // A switch-to-switch cable of the broadcast group's tree, cut and plugged back.
    let near = tree_cable(&generated, &joined, groups[0].joined.mlid);
    let far = generated.peer(near).expect("cabled");
    let (near, far) = (
        common::console_port(&generated, near),
        common::console_port(&generated, far),
    );
    let skip = sweep_passes(&log).len();
    let cut = passes_read_with(
        &mut sim,
        &sm,
        |sim| sim.console(&format!("Unlink {near}")),
        read_pass,
        read_pass,
    );
    let cut_figures = check_tree_passes(&before, &cut, &log, skip, "cut");
    check(&sim, &sm, &groups, "after the cut");
    let skip = sweep_passes(&log).len();
    let back = passes_read_with(
        &mut sim,
        &sm,
        |sim| sim.console(&format!("Link {near} {far}")),
        read_pass,
        read_pass,
    );
    let back_figures = check_tree_passes(cut.last().unwrap(), &back, &log, skip, "plugged back");
    // The repaired trees reached round the cut; the full routing's trees do not: the return
    // holds those entries back until its last pass.
    let shrunk: usize = cut_figures
        .iter()
        .chain(&back_figures)
        .map(|f| f.trees_shrunk)
        .sum();
    assert!(shrunk > 0, "some pass holds a tree back");
    assert!(
        sm.log()
            .contains("multicast entries shrunk to what the old and the new trees share"),
        "the pass says what it holds back"
    );
    check(&sim, &sm, &groups, "plugged back");
}

/// OpenSM's SA database dump (`sa_db_dump TRUE`) in `dir` once it lists `members` member ports
/// in all (it is written at the end of a sweep after the groups changed, whole: a temporary
/// file renamed).
fn wait_for_sa_dump(dir: &std::path::Path, members: usize) -> std::path::PathBuf {
    let path = dir.join("opensm-sa.dump");
    until(&format!("an SA dump with {members} member ports"), || {
        let text = std::fs::read_to_string(&path).ok()?;
        (text.matches("mcm_port:").count() == members).then_some(())
    });
    path
}

#[test]
fn slim_fly_q5_restart_with_the_sa_database_keeps_every_tree_the_switches_hold() {
    // Groups that changed since they were made have trees kept through their joins and
    // leaves, which a tree built afresh for the same members need not be.
    let sim = Ibsim::start(&ibsim::write_net(&common::generated("slimfly:q=5")));
    let conf = "qos TRUE\nsa_db_dump TRUE\nsweep_interval 2\n";
    let sm = run_opensm_with_conf(&sim, conf, None, false);
    wait_settled(&sm, 0);
    let mut groups = join_acceptance_groups(&sim);
    let hosts = host_port_guids(&check(&sim, &sm, &groups, "joined").back.fabric);
    let changing = &mut groups[1];
    let leaving: Vec<u64> = changing.guids.iter().copied().step_by(3).collect();
    leave(&sim, changing.mgid, &leaving);
    let joining: Vec<u64> = hosts[hosts.len() / 2..]
        .iter()
        .copied()
        .step_by(5)
        .collect();
    join(&sim, changing.mgid, &joining, Creation::Existing);
    changing.guids.retain(|g| !leaving.contains(g));
    changing.guids.extend(&joining);
    let before = check(&sim, &sm, &groups, "before the restart");
    let members = groups.iter().map(|g| g.guids.len()).sum();
    let sa_dump = wait_for_sa_dump(sm.dump_dir(), members);
    let cache = sm.dump_dir().to_path_buf();
    assert!(
        cache.join("layered-trees.json").exists(),
        "the trees are saved"
    );
    drop(sm);

    // The restarted OpenSM restores the groups with their members from the SA dump and
    // builds every tree in its first sweep.
    let mut options = common::plugin::with_plugin(
        &format!("{conf}sa_db_file {}\n", sa_dump.display()),
        None,
        false,
    );
    options
        .env
        .push(("OSM_CACHE_DIR".into(), cache.as_os_str().to_owned()));
    let sm = OpenSm::start(&sim, &options);
    wait_settled(&sm, 0);
    let after = check(&sim, &sm, &groups, "after the restart");
    let log = sm.log();
    assert!(
        log.contains("multicast trees restored from")
            && log.contains(": 3 groups as the switches hold them"),
        "{log}"
    );
    for g in &groups {
        let line = format!("multicast MLID {:#06x}: ", g.joined.mlid);
        let built = log
            .lines()
            .find(|l| l.contains(&line))
            .unwrap_or_else(|| panic!("{}: no tree built:\n{log}", g.mgid));
        assert!(
            built.ends_with("; kept from the tree the switches hold"),
            "{built}"
        );
    }
    for g in &groups {
        assert_eq!(
            tree_ports(&after.back, &after.tables, g.joined.mlid),
            tree_ports(&before.back, &before.tables, g.joined.mlid),
            "{}: the restart changed the tree the switches held",
            g.mgid
        );
    }
}
