//! The walker on hand-built tables (one test per failure kind) and against a plain
//! step-by-step walk on random tables.

use std::collections::HashSet;

use super::*;
use crate::rng::Rng;
use crate::routing::{LidTable, assign_lids};
use crate::topology::{Fabric, FabricBuilder, NodeId};

/// A line of switches s0 – s1 – … (port 1 to the left neighbour, port 2 to the right), one
/// host `h{s}` on port 10 of every switch; LIDs assigned (switches 1.., then hosts).
fn line(switches: usize) -> Fabric {
    let mut b = FabricBuilder::new("line");
    let sw: Vec<NodeId> = (0..switches)
        .map(|s| b.switch(format!("s{s}"), 16, None))
        .collect();
    for pair in sw.windows(2) {
        b.cable(pair[0], 2, pair[1], 1);
    }
    for (s, &id) in sw.iter().enumerate() {
        let h = b.host(format!("h{s}"), None);
        b.cable(id, 10, h, 1);
    }
    let mut f = b.finish();
    assign_lids(&mut f, 0).unwrap();
    f
}

fn node(f: &Fabric, name: &str) -> NodeId {
    f.node_by_name(name).unwrap()
}

/// Tables that send every LID along the line towards its owner's switch and deliver it there.
fn line_tables(f: &Fabric, lids: &LidTable, switches: usize) -> ForwardingTables {
    let mut t = ForwardingTables::for_lids(f, lids);
    for (lid, owner) in lids.iter() {
        let name = &f.node(owner.node).name;
        let target: usize = name[1..].parse().unwrap();
        for s in 0..switches {
            let port = match s.cmp(&target) {
                std::cmp::Ordering::Less => 2,
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Equal if name.starts_with('s') => 0,
                std::cmp::Ordering::Equal => 10,
            };
            t.set(node(f, &format!("s{s}")), lid, port);
        }
    }
    t
}

/// The destination of host `h{s}`'s LID.
fn host_dest(net: &Network<'_>, s: usize) -> Dest {
    let e = net.endpoints_at(s)[0];
    net.endpoint_dest(&e, 0)
}

/// A failure as the walker reports it, without the borrowed cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reported {
    kind: BrokenKind,
    switch: u32,
    port: Option<u8>,
    arrived: Option<PortRef>,
    cycle: Vec<u32>,
}

/// Walks `dest`; returns the failures in report order (a failure's id is its index).
fn walk(
    net: &Network<'_>,
    tables: &ForwardingTables,
    dest: &Dest,
    w: &mut DestWalk,
) -> Vec<Reported> {
    let mut reported = Vec::new();
    w.walk(net, tables, dest, |b| {
        reported.push(Reported {
            kind: b.kind,
            switch: b.switch,
            port: b.port,
            arrived: b.arrived,
            cycle: b.cycle.to_vec(),
        });
        (reported.len() - 1) as u32
    });
    reported
}

#[test]
fn working_tables_deliver_from_every_switch_with_the_line_distance() {
    let f = line(4);
    let lids = LidTable::from_fabric(&f).unwrap();
    let tables = line_tables(&f, &lids, 4);
    let net = Network::new(&f, &lids);
    let mut w = DestWalk::new(net.len());
    for t in 0..4 {
        let dest = host_dest(&net, t);
        assert!(walk(&net, &tables, &dest, &mut w).is_empty());
        for s in 0..4 {
            assert_eq!(w.hops(s), s.abs_diff(t) as u32);
            let path: Vec<u32> = w.path(&net, s).collect();
            assert_eq!(
                path.len(),
                s.abs_diff(t) + 1,
                "inter-switch links, then delivery"
            );
            assert_eq!(*path.last().unwrap(), dest.link);
            assert_eq!(w.cables(&net, s).count(), s.abs_diff(t));
        }
        let own = net.switch_dest(t, &lids).unwrap();
        assert!(walk(&net, &tables, &own, &mut w).is_empty());
        assert_eq!(w.next(t), NONE, "a switch keeps its own LID");
        assert_eq!(
            w.path(&net, 0).count(),
            t,
            "no delivery link for a switch LID"
        );
    }
}

#[test]
fn a_missing_entry_is_reported_once_at_its_switch_and_marks_the_switches_behind_it() {
    let f = line(4);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut tables = line_tables(&f, &lids, 4);
    let net = Network::new(&f, &lids);
    let dest = host_dest(&net, 3);
    tables.set(node(&f, "s1"), dest.lid, crate::routing::NO_PORT);
    let mut w = DestWalk::new(net.len());
    let reported = walk(&net, &tables, &dest, &mut w);
    assert_eq!(reported.len(), 1);
    let r = &reported[0];
    assert_eq!(
        (r.kind, r.switch, r.port, r.arrived),
        (BrokenKind::NoEntry, 1, None, None)
    );
    assert_eq!((w.failure(0), w.failure(1)), (0, 0));
    assert!(w.reaches(2) && w.reaches(3));
    assert!(!w.reaches(0) && w.path(&net, 0).next().is_none());
}

#[test]
fn a_port_without_a_cable_is_a_dead_end_with_the_port() {
    let f = line(3);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut tables = line_tables(&f, &lids, 3);
    let net = Network::new(&f, &lids);
    let dest = host_dest(&net, 0);
    tables.set(node(&f, "s2"), dest.lid, 7); // port 7: no cable
    tables.set(node(&f, "s1"), dest.lid, 200); // port 200: the switch has 16
    let mut w = DestWalk::new(net.len());
    let mut reported = walk(&net, &tables, &dest, &mut w);
    reported.sort_by_key(|r| r.switch);
    let found: Vec<_> = reported
        .iter()
        .map(|r| (r.kind, r.switch, r.port))
        .collect();
    assert_eq!(
        found,
        [
            (BrokenKind::DeadEnd, 1, Some(200)),
            (BrokenKind::DeadEnd, 2, Some(7))
        ]
    );
    assert_eq!(w.walk(&net, &tables, &dest, |_| 0), 1, "only s0 delivers");
}

#[test]
fn a_forwarding_loop_is_reported_once_with_its_switches() {
    let f = line(4);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut tables = line_tables(&f, &lids, 4);
    let net = Network::new(&f, &lids);
    let dest = host_dest(&net, 3);
    tables.set(node(&f, "s2"), dest.lid, 1); // s1 → s2 → s1 → …
    let mut w = DestWalk::new(net.len());
    let reported = walk(&net, &tables, &dest, &mut w);
    assert_eq!(reported.len(), 1, "{reported:?}");
    let r = &reported[0];
    assert_eq!(r.kind, BrokenKind::Loop);
    // The walk from s0 comes back to s1 first; the loop is s1 → s2 (→ s1).
    assert_eq!((r.switch, r.cycle.as_slice()), (1, &[1, 2][..]));
    for s in 0..3 {
        assert_eq!(w.failure(s), 0, "switch {s} ends in the loop");
        assert_eq!(w.next(s), NONE);
    }
    assert!(w.reaches(3));
}

#[test]
fn delivery_to_another_port_is_a_wrong_destination_with_the_port_reached() {
    let f = line(3);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut tables = line_tables(&f, &lids, 3);
    let net = Network::new(&f, &lids);
    let dest = host_dest(&net, 2);
    let s1 = node(&f, "s1");
    tables.set(s1, dest.lid, 10); // to h1 instead of on to s2
    tables.set(node(&f, "s2"), dest.lid, 0); // kept by s2 itself
    let mut w = DestWalk::new(net.len());
    let mut reported = walk(&net, &tables, &dest, &mut w);
    reported.sort_by_key(|r| r.switch);
    let h1 = PortRef {
        node: node(&f, "h1"),
        port: 1,
    };
    let s2_itself = PortRef {
        node: node(&f, "s2"),
        port: 0,
    };
    let found: Vec<_> = reported
        .iter()
        .map(|r| (r.kind, r.switch, r.port, r.arrived))
        .collect();
    assert_eq!(
        found,
        [
            (BrokenKind::WrongDestination, 1, Some(10), Some(h1)),
            (BrokenKind::WrongDestination, 2, Some(0), Some(s2_itself)),
        ]
    );
    assert!((0..3).all(|s| !w.reaches(s)));
}

#[test]
fn broken_kinds_keep_their_report_names() {
    let names: Vec<String> = BrokenKind::ALL
        .iter()
        .map(|k| format!("{} / {}", serde_json::to_string(k).unwrap(), k))
        .collect();
    assert_eq!(
        names,
        [
            "\"no-entry\" / no entry",
            "\"dead-end\" / dead end",
            "\"loop\" / loop",
            "\"wrong-destination\" / wrong destination",
        ]
    );
    for (i, k) in BrokenKind::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i);
    }
}

/// The outcome of a plain walk from one switch, step by step with a visited set.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plain {
    /// Delivered over these links (inter-switch ones, then the delivery link if any).
    Delivered(Vec<u32>),
    /// Failed at a switch (not a loop).
    Failed(BrokenKind, u32),
    /// Came back to a switch: the switches of the loop.
    Loop(HashSet<u32>),
}

fn plain_walk(net: &Network<'_>, tables: &ForwardingTables, dest: &Dest, s: usize) -> Plain {
    let mut links = Vec::new();
    let mut order: Vec<u32> = Vec::new();
    let mut cur = s as u32;
    loop {
        if let Some(i) = order.iter().position(|&v| v == cur) {
            return Plain::Loop(order[i..].iter().copied().collect());
        }
        order.push(cur);
        let node = net.switches[cur as usize];
        let Some(port) = tables.port(node, dest.lid) else {
            return Plain::Failed(BrokenKind::NoEntry, cur);
        };
        if port == 0 {
            return if dest.link == NONE && dest.switch == cur {
                Plain::Delivered(links)
            } else {
                Plain::Failed(BrokenKind::WrongDestination, cur)
            };
        }
        let Some(l) = net.fabric.peer(PortRef { node, port }).map(|_| {
            net.links
                .iter()
                .position(|x| x.from == PortRef { node, port })
                .unwrap() as u32
        }) else {
            return Plain::Failed(BrokenKind::DeadEnd, cur);
        };
        links.push(l);
        let link = net.links[l as usize];
        if link.to_switch == NONE {
            return if l == dest.link {
                Plain::Delivered(links)
            } else {
                Plain::Failed(BrokenKind::WrongDestination, cur)
            };
        }
        cur = link.to_switch;
    }
}

/// A random graph of `n` switches with 6 switch ports (random cables, some ports left free)
/// and two hosts each.
fn random_fabric(rng: &mut Rng, n: usize) -> Fabric {
    let mut b = FabricBuilder::new("random");
    let sw: Vec<NodeId> = (0..n).map(|s| b.switch(format!("s{s}"), 8, None)).collect();
    let mut free: Vec<(usize, usize)> = (0..n).flat_map(|s| (1..=6).map(move |p| (s, p))).collect();
    rng.shuffle(&mut free);
    for pair in free.chunks(2).take(free.len() / 2 - n / 2) {
        let ((a, pa), (c, pc)) = (pair[0], pair[1]);
        b.cable(sw[a], pa, sw[c], pc);
    }
    for (s, &id) in sw.iter().enumerate() {
        for k in 0..2 {
            let h = b.host(format!("h{s}-{k}"), None);
            b.cable(id, 7 + k, h, 1);
        }
    }
    let mut f = b.finish();
    assign_lids(&mut f, 1).unwrap();
    f
}

#[test]
fn memoised_walks_agree_with_plain_walks_on_random_tables() {
    let mut rng = Rng::new(7);
    for case in 0..40 {
        let n = 3 + case % 12;
        let f = random_fabric(&mut rng, n);
        let lids = LidTable::from_fabric(&f).unwrap();
        // Random entries: mostly cabled ports, some port 0, free ports, missing entries.
        let mut tables = ForwardingTables::for_lids(&f, &lids);
        for s in f.switches() {
            for (lid, _) in lids.iter() {
                match rng.below(20) {
                    0 => {}
                    1 => tables.set(s, lid, 0),
                    _ => tables.set(s, lid, 1 + rng.below(9) as u8),
                }
            }
        }
        let net = Network::new(&f, &lids);
        let mut w = DestWalk::new(net.len());
        for dest in net.every_dest(&lids) {
            let reported = walk(&net, &tables, &dest, &mut w);
            let mut reached = 0;
            for s in 0..n {
                let failure = w.failure(s);
                match plain_walk(&net, &tables, &dest, s) {
                    Plain::Delivered(links) => {
                        reached += 1;
                        let path: Vec<u32> = w.path(&net, s).collect();
                        assert_eq!(path, links, "case {case} LID {} from s{s}", dest.lid);
                        let inter = links
                            .iter()
                            .filter(|&&l| net.cable_of_link[l as usize] != NONE);
                        assert_eq!(w.hops(s) as usize, inter.count());
                    }
                    Plain::Failed(kind, at) => {
                        let r = &reported[failure as usize];
                        assert_eq!((r.kind, r.switch), (kind, at), "case {case} from s{s}");
                    }
                    Plain::Loop(switches) => {
                        let r = &reported[failure as usize];
                        assert_eq!(r.kind, BrokenKind::Loop);
                        assert!(switches.contains(&r.switch), "case {case} from s{s}");
                        let cycle: HashSet<u32> = r.cycle.iter().copied().collect();
                        assert_eq!(cycle, switches, "case {case} from s{s}");
                    }
                }
            }
            // Every failure is reported once: distinct (kind, switch) for the non-loops, and
            // one report per loop.
            let sites: HashSet<(BrokenKind, u32)> =
                reported.iter().map(|r| (r.kind, r.switch)).collect();
            assert_eq!(sites.len(), reported.len(), "case {case}: {reported:?}");
            assert_eq!(w.walk(&net, &tables, &dest, |_| 0), reached);
        }
    }
}
