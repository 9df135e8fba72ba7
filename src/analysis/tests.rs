//! Small fabrics with hand-built tables, counted by hand.

use std::collections::VecDeque;

use super::*;
use crate::rng::Rng;
use crate::routing::{NO_PORT, assign_lids};
use crate::topology::{Construction, FabricBuilder, NodeId, PortRef, slimfly::SlimFly};

/// `switches` switches of 16 ports; `cables` (a, port, b, port); `hosts[s]` hosts on switch s
/// at ports 10, 11, ...; LIDs assigned with `lmc`.
fn fabric(
    switches: usize,
    cables: &[(usize, usize, usize, usize)],
    hosts: &[usize],
    lmc: u8,
) -> Fabric {
    let mut b = FabricBuilder::new("test");
    let sw: Vec<NodeId> = (0..switches)
        .map(|s| b.switch(format!("s{s}"), 16, None))
        .collect();
    for &(x, px, y, py) in cables {
        b.cable(sw[x], px, sw[y], py);
    }
    for (s, &k) in hosts.iter().enumerate() {
        for i in 0..k {
            let h = b.host(format!("h{s}-{i}"), None);
            b.cable(sw[s], 10 + i, h, 1);
        }
    }
    let mut f = b.finish();
    assign_lids(&mut f, lmc).unwrap();
    f
}

fn switch(f: &Fabric, s: usize) -> NodeId {
    f.node_by_name(&format!("s{s}")).unwrap()
}

/// The base LID of host i on switch s.
fn host_lid(f: &Fabric, s: usize, i: usize) -> u16 {
    f.node(f.node_by_name(&format!("h{s}-{i}")).unwrap()).ports[1].lid
}

/// Min-hop tables (first port in port order towards the destination) for every LID.
fn minhop(f: &Fabric, lids: &LidTable) -> ForwardingTables {
    let mut t = ForwardingTables::for_lids(f, lids);
    for (lid, owner) in lids.iter() {
        let (dest, last) = if f.node(owner.node).is_switch() {
            (owner.node, 0)
        } else {
            let p = f
                .peer(PortRef {
                    node: owner.node,
                    port: owner.port,
                })
                .unwrap();
            (p.node, p.port)
        };
        t.set(dest, lid, last);
        let mut seen = vec![false; f.nodes().len()];
        seen[dest.index()] = true;
        let mut queue = VecDeque::from([dest]);
        while let Some(u) = queue.pop_front() {
            for (_, peer) in f.neighbours(u) {
                if f.node(peer.node).is_switch() && !seen[peer.node.index()] {
                    seen[peer.node.index()] = true;
                    t.set(peer.node, lid, peer.port);
                    queue.push_back(peer.node);
                }
            }
        }
    }
    t
}

fn run(f: &Fabric, t: &ForwardingTables, mat: bool) -> Report {
    let lids = LidTable::from_fabric(f).unwrap();
    analyze(
        f,
        &lids,
        t,
        &Options {
            mat,
            ..Options::default()
        },
    )
}

/// Two switches joined by one cable, `k` hosts on each.
fn pair(k: usize) -> Fabric {
    fabric(2, &[(0, 1, 1, 1)], &[k, k], 0)
}

#[test]
fn minimal_tables_on_two_switches_are_complete_minimal_and_loaded_as_counted() {
    let f = pair(2);
    let lids = LidTable::from_fabric(&f).unwrap();
    let r = run(&f, &minhop(&f, &lids), false);
    assert!(r.is_complete(), "{r}");
    // 4 host LIDs + 2 switch LIDs, each checked at both switches.
    assert_eq!(r.destination_lids, 6);
    assert_eq!(r.completeness.entries_checked, 12);
    assert_eq!((r.switches, r.endpoints, r.layers), (2, 4, 1));
    // From each switch to the 2 host LIDs of the other: 4 one-hop paths, all minimal.
    let l = &r.paths[0];
    assert_eq!((l.paths, l.broken, l.max_hops, l.minimal), (4, 0, 1, 4));
    assert_eq!(l.hops_histogram, vec![0, 4]);
    assert_eq!(l.mean_hops, 1.0);
    // Each direction carries 2 sources × 2 destination LIDs.
    let load = &r.link_load.total;
    assert_eq!((load.links, load.min, load.max, load.total), (2, 4, 4, 8));
    assert_eq!(load.max_over_mean, 1.0);
    assert_eq!(r.disjoint.histogram, vec![0, 2]);
    assert_eq!(r.disjoint.at_least_two, 0.0);
    let text = r.to_string();
    assert!(text.contains("completeness: complete"), "{text}");
}

#[test]
fn a_planted_loop_is_reported_once_with_both_entries() {
    let f = pair(2);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids);
    let lid = host_lid(&f, 1, 1);
    t.set(switch(&f, 1), lid, 1); // s1 sends h1-1's LID back to s0, which sends it to s1
    let r = run(&f, &t, false);
    let c = &r.completeness;
    assert!(!c.complete);
    assert_eq!(
        c.counts.loops,
        KindCount {
            failures: 1,
            entries: 2
        }
    );
    assert_eq!(c.counts.failures(), 1);
    assert_eq!(c.entries_checked - c.entries_reaching, 2);
    let failure = &c.failures[0];
    assert_eq!(
        (failure.kind, failure.lid, failure.entries),
        (BrokenKind::Loop, lid, 2)
    );
    assert!(failure.detail.contains("loop s"), "{}", failure.detail);
    assert_eq!(r.paths[0].broken, 1, "s0 to h1-1 is broken");
    assert!(r.to_string().contains("INCOMPLETE"));
}

#[test]
fn a_dead_end_and_a_missing_entry_are_reported_at_their_switch() {
    let f = pair(2);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids);
    let dead = host_lid(&f, 0, 0);
    t.set(switch(&f, 0), dead, 7); // port 7 of s0 has no cable
    let missing = host_lid(&f, 1, 0);
    t.set(switch(&f, 0), missing, NO_PORT);
    let r = run(&f, &t, false);
    let c = &r.completeness;
    // The dead end at s0 breaks the walks from s0 and from s1 (which goes through s0).
    assert_eq!(
        c.counts.dead_end,
        KindCount {
            failures: 1,
            entries: 2
        }
    );
    assert_eq!(
        c.counts.no_entry,
        KindCount {
            failures: 1,
            entries: 1
        }
    );
    let d = c.failures.iter().find(|x| x.lid == dead).unwrap();
    assert_eq!(
        (d.kind, d.switch.as_str(), d.port),
        (BrokenKind::DeadEnd, "s0", Some(7))
    );
    let m = c.failures.iter().find(|x| x.lid == missing).unwrap();
    assert_eq!((m.kind, m.switch.as_str()), (BrokenKind::NoEntry, "s0"));
}

#[test]
fn delivery_to_the_wrong_port_is_reported_with_both_ports() {
    let f = pair(2);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids);
    let lid = host_lid(&f, 1, 0);
    t.set(switch(&f, 1), lid, 11); // h1-1's port instead of h1-0's
    let s0_lid = f.node(switch(&f, 0)).ports[0].lid;
    t.set(switch(&f, 1), s0_lid, 0); // s1 keeps s0's LID for itself
    let r = run(&f, &t, false);
    let c = &r.completeness;
    assert_eq!(
        c.counts.wrong_destination,
        KindCount {
            failures: 2,
            entries: 3
        }
    );
    let w = c.failures.iter().find(|x| x.lid == lid).unwrap();
    assert_eq!((w.switch.as_str(), w.port, w.entries), ("s1", Some(11), 2));
    assert!(
        w.detail.contains("h1-1[1]") && w.detail.contains("h1-0[1]"),
        "{}",
        w.detail
    );
    let m = c.failures.iter().find(|x| x.lid == s0_lid).unwrap();
    assert_eq!((m.switch.as_str(), m.port, m.entries), ("s1", Some(0), 1));
}

#[test]
fn parallel_cables_used_by_two_layers_are_two_disjoint_paths() {
    // s0 =(ports 1, 2)= s1; one host on each, 2 layers.
    let f = fabric(2, &[(0, 1, 1, 1), (0, 2, 1, 2)], &[1, 1], 1);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids); // every LID on the first cable
    let b = host_lid(&f, 1, 0);
    t.set(switch(&f, 0), b + 1, 2); // layer 1 to h1-0 on the second cable
    let r = run(&f, &t, false);
    assert!(r.is_complete());
    // (s0, s1): 2 disjoint paths; (s1, s0): both layers on one cable, 1.
    assert_eq!(r.disjoint.histogram, vec![0, 1, 1]);
    assert_eq!(r.disjoint.at_least_two, 0.5);
    assert_eq!(r.disjoint.pairs, 2);
    // Layer 1: s0 -> s1 on port 2 (1 route), s1 -> s0 on port 1 (1 route).
    let l1 = &r.link_load.per_layer[1];
    assert_eq!((l1.links, l1.min, l1.max, l1.total), (4, 0, 1, 2));
}

#[test]
fn disjoint_paths_are_a_max_flow_not_a_count_of_distinct_paths() {
    // Square s0-s1-s2-s3-s0 with the diagonal s1-s3; one host on s2 with 4 layers.
    // Ports: s0: 1->s1, 2->s3; s1: 1->s0, 2->s2, 3->s3; s2: 1->s1, 2->s3; s3: 1->s2, 2->s0, 3->s1.
    let cables = [
        (0, 1, 1, 1),
        (1, 2, 2, 1),
        (2, 2, 3, 1),
        (3, 2, 0, 2),
        (1, 3, 3, 3),
    ];
    let f = fabric(4, &cables, &[0, 0, 1, 0], 2);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids);
    let base = host_lid(&f, 2, 0);
    let (s0, s1, s3) = (switch(&f, 0), switch(&f, 1), switch(&f, 3));
    // Layer 0: s0->s1->s2, s3->s2.   Layer 1: s0->s3->s2, s1->s2.
    // Layer 2: s0->s1->s3->s2.       Layer 3: s0->s3->s2, s1->s2, s3->s2.
    for (layer, s0_port, s1_port, s3_port) in
        [(0, 1, 2, 1), (1, 2, 2, 1), (2, 1, 3, 1), (3, 2, 2, 1)]
    {
        t.set(s0, base + layer, s0_port);
        t.set(s1, base + layer, s1_port);
        t.set(s3, base + layer, s3_port);
    }
    let r = run(&f, &t, false);
    assert!(r.is_complete(), "{r}");
    // From s0: 3 distinct paths (s0s1s2, s0s3s2, s0s1s3s2) but only 2 leave s0: 2.
    // From s1: s1s2 and s1s3s2: 2.  From s3: always s3s2: 1.
    assert_eq!(r.disjoint.histogram, vec![0, 1, 2, 0, 0]);
    assert_eq!(r.disjoint.pairs, 3);
    // Layer 2 paths: s0 3 hops (distance 2: +1), s1 2 hops (distance 1: +1), s3 1 hop.
    let l2 = &r.paths[2];
    assert_eq!(
        (l2.minimal, l2.plus_one, l2.longer, l2.max_hops),
        (1, 2, 0, 3)
    );
    assert_eq!(r.paths[0].fraction_minimal, 1.0);
}

#[test]
fn link_load_on_a_line_of_three_switches_is_counted_per_source_port() {
    // s0 - s1 - s2 with hosts 2, 1, 1.
    let f = fabric(3, &[(0, 1, 1, 1), (1, 2, 2, 1)], &[2, 1, 1], 0);
    let lids = LidTable::from_fabric(&f).unwrap();
    let r = run(&f, &minhop(&f, &lids), false);
    // s0->s1: 2 sources × (h1, h2) = 4; s1->s2: h0-0, h0-1, h1-0 to h2 = 3;
    // s1->s0: (h1, h2) to 2 hosts = 4; s2->s1: h2 to 3 hosts = 3.
    let load = &r.link_load.total;
    assert_eq!((load.links, load.min, load.max, load.total), (4, 3, 4, 14));
    assert_eq!(load.mean, 3.5);
    assert_eq!(load.max_over_mean, 4.0 / 3.5);
    assert_eq!(load.busiest.as_deref(), Some("s0[1] -> s1[1]"));
    // To h0-*: from s1 (1 hop) and s2 (2); to h1-0: 1 hop from both; to h2-0: s0 2, s1 1.
    assert_eq!(r.paths[0].hops_histogram, vec![0, 5, 3]);
}

#[test]
fn per_cable_loads_add_up_to_the_load_statistics() {
    // s0 - s1 - s2 with hosts 2, 1, 1 and a loopback cable on s1 (not counted), two layers.
    let f = fabric(
        3,
        &[(0, 1, 1, 1), (1, 2, 2, 1), (1, 5, 1, 6)],
        &[2, 1, 1],
        1,
    );
    let lids = LidTable::from_fabric(&f).unwrap();
    let r = run(&f, &minhop(&f, &lids), false);
    let per_cable = &r.link_load.cable_loads;
    assert_eq!(per_cable.len(), r.link_load.per_layer.len());
    for (loads, stats) in per_cable.iter().zip(&r.link_load.per_layer) {
        assert_eq!(loads.len(), stats.links);
        assert_eq!(loads.iter().sum::<u64>(), stats.total);
        assert_eq!(loads.iter().copied().max(), Some(stats.max));
        assert_eq!(loads.iter().copied().min(), Some(stats.min));
    }
    let total = &r.link_load.total;
    let summed: Vec<u64> = (0..total.links)
        .map(|c| per_cable.iter().map(|l| l[c]).sum())
        .collect();
    assert_eq!(summed.iter().sum::<u64>(), total.total);
    assert_eq!(summed.iter().copied().max(), Some(total.max));
}

#[test]
fn mat_of_two_switches_with_one_cable_is_known_in_closed_form() {
    for k in [1usize, 2, 3, 5] {
        let f = pair(k);
        let lids = LidTable::from_fabric(&f).unwrap();
        let r = run(&f, &minhop(&f, &lids), true);
        let mat = r.mat.unwrap();
        // Uniform: each direction carries k·k/(2k−1) per unit K over capacity 1.
        let uniform = mat.uniform.throughput.unwrap();
        let expected = (2 * k - 1) as f64 / (k * k) as f64;
        assert!(
            (uniform - expected).abs() < 1e-6,
            "k={k}: {uniform} vs {expected}"
        );
        // Adversarial: the two switches pair up; k flows of 1 each way.
        let adversarial = mat.adversarial.throughput.unwrap();
        assert!(
            (adversarial - 1.0 / k as f64).abs() < 1e-6,
            "k={k}: {adversarial}"
        );
        assert_eq!(mat.matching.pairs, 1);
        assert_eq!(mat.matching.distance_histogram, vec![0, 1]);
    }
}

#[test]
fn mat_doubles_when_two_layers_use_two_parallel_cables() {
    let k = 2;
    let f = fabric(2, &[(0, 1, 1, 1), (0, 2, 1, 2)], &[k, k], 1);
    let lids = LidTable::from_fabric(&f).unwrap();
    let mut t = minhop(&f, &lids);
    for (s, other) in [(0, 1), (1, 0)] {
        for i in 0..k {
            t.set(switch(&f, s), host_lid(&f, other, i) + 1, 2);
        }
    }
    let r = run(&f, &t, true);
    let mat = r.mat.unwrap();
    assert_eq!(mat.uniform.multipath_commodities, 2);
    let uniform = mat.uniform.throughput.unwrap();
    assert!((uniform - 2.0 * 3.0 / 4.0).abs() < 1e-6, "{uniform}");
    let adversarial = mat.adversarial.throughput.unwrap();
    assert!((adversarial - 1.0).abs() < 1e-6, "{adversarial}");
}

#[test]
fn minhop_on_slim_fly_q5_is_minimal_with_one_disjoint_path_per_pair() {
    // Slim Fly q = 5 has a unique shortest path between any two switches (girth 5, §1.4 of
    // the research notes), so any min-hop routing gives every pair exactly one path.
    let mut f = SlimFly::new(5, None).unwrap().build();
    assign_lids(&mut f, 1).unwrap();
    let lids = LidTable::from_fabric(&f).unwrap();
    let r = run(&f, &minhop(&f, &lids), false);
    assert!(r.is_complete());
    for l in &r.paths {
        assert_eq!(l.fraction_minimal, 1.0);
        assert_eq!(l.max_hops, 2);
        // 50 sources × 196 host LIDs on other switches: 49·4 per source.
        assert_eq!(l.paths, 50 * 49 * 4);
        // 7 neighbours and 42 switches at distance 2, 4 hosts each.
        assert_eq!(l.hops_histogram, vec![0, 50 * 7 * 4, 50 * 42 * 4]);
    }
    assert_eq!(r.disjoint.pairs, 50 * 49);
    assert_eq!(r.disjoint.histogram, vec![0, 50 * 49, 0]);
}

/// Tables whose layer ℓ follows the shortest-path tree of random cable weights (1 to 1.01 on
/// layer 0, 1 to 1 + `spread` on the others), so layers differ: minimal and longer paths,
/// several distinct paths per switch pair.
fn random_layers(f: &Fabric, lids: &LidTable, seed: u64, spread: f64) -> ForwardingTables {
    let mut t = ForwardingTables::for_lids(f, lids);
    let switches: Vec<NodeId> = f.switches().collect();
    let mut dense = vec![usize::MAX; f.nodes().len()];
    for (i, s) in switches.iter().enumerate() {
        dense[s.index()] = i;
    }
    let weight = |layer: u8, node: NodeId, port: u8| {
        let cable = seed ^ (u64::from(layer) << 48) ^ (u64::from(node.0) << 8) ^ u64::from(port);
        let r = Rng::new(cable).next_u64();
        let spread = if layer == 0 { 0.01 } else { spread };
        1.0 + spread * (r >> 11) as f64 / (1u64 << 53) as f64
    };
    for (lid, owner) in lids.iter() {
        let (dest, last) = if f.node(owner.node).is_switch() {
            (owner.node, 0)
        } else {
            let p = f
                .peer(PortRef {
                    node: owner.node,
                    port: owner.port,
                })
                .unwrap();
            (p.node, p.port)
        };
        t.set(dest, lid, last);
        // Dijkstra towards dest over the switch graph, O(n²).
        let n = switches.len();
        let mut dist = vec![f64::INFINITY; n];
        let mut done = vec![false; n];
        dist[dense[dest.index()]] = 0.0;
        for _ in 0..n {
            let Some(u) = (0..n)
                .filter(|&u| !done[u] && dist[u].is_finite())
                .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
            else {
                break;
            };
            done[u] = true;
            for (_, peer) in f.neighbours(switches[u]) {
                let v = dense[peer.node.index()];
                if v == usize::MAX || done[v] {
                    continue;
                }
                let d = dist[u] + weight(owner.offset, peer.node, peer.port);
                if d < dist[v] {
                    dist[v] = d;
                    t.set(peer.node, lid, peer.port);
                }
            }
        }
    }
    t
}

#[test]
fn more_paths_never_lower_the_mat_of_a_minimal_layer() {
    // Slim Fly q = 5, 4 layers: layer 0 minimal (unique shortest paths), layers 1-3 random
    // trees. Putting all flow on layer 0 is feasible, so the LP finds at least the single-path
    // MAT of minimal routing: uniform 199 / (13 · 16) (every directed cable carries 13 switch
    // pairs of 16/199 each).
    let mut f = SlimFly::new(5, None).unwrap().build();
    assign_lids(&mut f, 2).unwrap();
    let lids = LidTable::from_fabric(&f).unwrap();
    let single = run(&f, &minhop(&f, &lids), true).mat.unwrap();
    let minimal_uniform = 199.0 / (13.0 * 16.0);
    assert!((single.uniform.throughput.unwrap() - minimal_uniform).abs() < 1e-9);
    let r = run(&f, &random_layers(&f, &lids, 7, 1.5), true);
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.paths[0].fraction_minimal, 1.0);
    assert!(
        r.paths[1].fraction_minimal < 1.0,
        "random layers take detours"
    );
    assert!(r.disjoint.at_least_two > 0.0);
    let mat = r.mat.as_ref().unwrap();
    assert!(mat.uniform.multipath_commodities > 0);
    assert!(
        mat.uniform.throughput.unwrap() >= minimal_uniform - 1e-6,
        "{r}"
    );
    assert!(
        mat.adversarial.throughput.unwrap() >= single.adversarial.throughput.unwrap() - 1e-6,
        "{r}"
    );
}

/// The layered routing of `routing::layered` on a Slim Fly, as forwarding tables.
fn layered_tables(q: u32, lmc: u8) -> (Fabric, ForwardingTables, f64) {
    use crate::routing::{
        Algorithm, PathLengths, RoutingConfig, forwarding_tables, graph::RoutingGraph, layered,
        pairs_with_disjoint_paths,
    };
    let mut f = SlimFly::new(q, None).unwrap().build();
    assign_lids(&mut f, lmc).unwrap();
    let lids = LidTable::from_fabric(&f).unwrap();
    let graph = RoutingGraph::new(&f);
    let layers = layered::route(
        &graph,
        &RoutingConfig {
            layers: 1 << lmc,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        },
    );
    let (good, all) = pairs_with_disjoint_paths(&graph, &layers, 3);
    let t = forwarding_tables(&f, &graph, &layers, &lids);
    (f, t, good as f64 / all as f64)
}

#[test]
fn disjoint_paths_from_the_tables_agree_with_the_layered_routing_itself() {
    // Independent counts: the routing's own (on its layer paths) and the analyser's (walking
    // the forwarding tables through the cables).
    let (f, t, routing_says) = layered_tables(5, 2);
    let r = run(&f, &t, false);
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.disjoint.at_least_three, routing_says);
    // Slim Fly q = 5 (girth 5): adjacent pairs have no other path of at most 3 hops, so with
    // paths of at most 3 hops at most 6/7 of the pairs (those at distance 2) can have 3.
    assert!(r.disjoint.at_least_three <= 6.0 / 7.0 + 1e-12);
    assert_eq!(r.paths[0].fraction_minimal, 1.0, "layer 0 is minimal");
    for l in &r.paths[1..] {
        assert!(l.max_hops <= 3, "layer {}: {l:?}", l.layer);
    }
}
