//! The spread tables on fat trees, judged by what they carry: the analyser's all-to-all
//! throughput of layer 0 against the optimum of minimal routing worked out here from the
//! cable counts, the independent deadlock verifier on every SL, and Slim Fly left as it was.

use super::*;
use crate::analysis::{Options, PrefixOptions, analyze};
use crate::deadlock::{SchemeChoice, Shortage, route_deadlock_free, verify_every_sl};
use crate::routing::{RoutingConfig, assign_lids, forwarding_tables, layered};
use crate::topology::TopologySpec;

/// `spec` with LIDs for `layers` layers.
fn fabric(spec: &str, layers: usize) -> (Fabric, LidTable, RoutingGraph) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = RoutingGraph::new(&fabric);
    (fabric, lids, graph)
}

/// The all-to-all throughput (units of a host link) of the best minimal routing of a
/// two-level fat tree, from the cables alone: every host sends 1/(N − 1) of its rate to each
/// other host; of a leaf's h hosts' traffic, the part to the other N − h hosts leaves over its
/// spines × links cables (and the same part arrives over them), so at best the uplinks carry
/// h (N − h) / ((N − 1) spines links) each, and the host links carry 1.
fn minimal_optimum(leaves: usize, spines: usize, links: usize, hosts: usize) -> f64 {
    let n = (leaves * hosts) as f64;
    let h = hosts as f64;
    let per_cable = h * (n - h) / ((n - 1.0) * (spines * links) as f64);
    1.0f64.min(1.0 / per_cable)
}

/// Every two-level fat tree of a range where d-mod-k reaches the optimum: hosts per leaf at
/// most the cables up, or a multiple of them.
fn fat_trees() -> Vec<(usize, usize, usize, usize)> {
    let mut trees = Vec::new();
    for leaves in [2, 3, 5] {
        for spines in 1..=4 {
            for links in 1..=3 {
                for hosts in [1, 2, 3, 4, 6, 8] {
                    let up = spines * links;
                    if hosts <= up || hosts % up == 0 {
                        trees.push((leaves, spines, links, hosts));
                    }
                }
            }
        }
    }
    trees
}

fn spec((leaves, spines, links, hosts): (usize, usize, usize, usize)) -> String {
    format!("fattree:leaves={leaves},spines={spines},links-per-pair={links},hosts-per-leaf={hosts}")
}

/// The all-to-all throughput of layer 0 of `tables`, which must reach every LID.
fn layer_0_of(fabric: &Fabric, lids: &LidTable, tables: &ForwardingTables, spec: &str) -> f64 {
    prefixes_of(fabric, lids, tables, spec)[0].1
}

/// The all-to-all throughput of each prefix of the layers of `tables` (its layer count, the
/// throughput of the even split over it), which must reach every LID.
fn prefixes_of(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    spec: &str,
) -> Vec<(usize, f64)> {
    let options = Options {
        prefix: Some(PrefixOptions {
            samples: 1,
            worst: false,
            ..PrefixOptions::default()
        }),
        ..Options::default()
    };
    let report = analyze(fabric, lids, tables, &options);
    assert!(report.is_complete(), "{spec}: {report}");
    report
        .prefix
        .expect("asked for")
        .prefixes
        .iter()
        .map(|p| (p.layers, p.all_to_all))
        .collect()
}

/// Layer 0 of `spec` routed with `layers` layers under `schemes`, proven deadlock-free on
/// every SL: its all-to-all throughput.
fn layer_0_all_to_all(spec: &str, layers: usize, schemes: &[crate::deadlock::Scheme]) -> f64 {
    let (fabric, lids, graph) = fabric(spec, layers);
    let config = RoutingConfig {
        layers,
        ..RoutingConfig::default()
    };
    let done = route_deadlock_free(&fabric, &lids, &graph, &config, schemes, Shortage::Fail)
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let verdict = verify_every_sl(&fabric, &lids, &done.tables, &done.sl2vl);
    assert!(verdict.is_deadlock_free(), "{spec}: {verdict}");
    layer_0_of(&fabric, &lids, &done.tables, spec)
}

#[test]
fn layer_0_of_fat_trees_carries_all_to_all_at_the_minimal_optimum_and_is_deadlock_free_on_every_sl()
{
    for tree in fat_trees() {
        let spec = spec(tree);
        let (leaves, spines, links, hosts) = tree;
        let optimum = minimal_optimum(leaves, spines, links, hosts);
        for layers in [1, 4] {
            let a2a = layer_0_all_to_all(&spec, layers, &SchemeChoice::Auto.schemes(8));
            assert!(
                (a2a - optimum).abs() < 1e-9,
                "{spec}, {layers} layers: layer 0 all-to-all {a2a} against the optimum {optimum}"
            );
        }
    }
}

#[test]
fn three_level_trees_carry_all_to_all_at_full_bisection_by_lanes_by_port_pair() {
    // A k-ary n-tree has full bisection: minimal routes spread d-mod-k carry all-to-all at
    // the hosts' link rate. Lanes by port pair need every route unimodal in the cable order.
    for k in 2..=5 {
        let spec = format!("kary-ntree:k={k},n=3");
        for layers in [1, 4] {
            let a2a = layer_0_all_to_all(&spec, layers, &SchemeChoice::PortPair.schemes(8));
            assert!(
                (a2a - 1.0).abs() < 1e-9,
                "{spec}, {layers} layers: layer 0 all-to-all {a2a}"
            );
        }
    }
}

#[test]
fn minimal_layers_of_deeper_trees_carry_all_to_all_at_full_bisection() {
    // d-mod-k's digits by level: a leaf of the destination's own pod is nearer than the
    // leaves of other pods, and must still take the lowest digit.
    for spec in [
        "kary-ntree:k=4,n=3",
        "kary-ntree:k=2,n=4",
        "kary-ntree:k=3,n=4",
    ] {
        let (fabric, lids, graph) = fabric(spec, 4);
        let config = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let layers = layered::route(&graph, &config);
        let tables = spread_forwarding_tables(&fabric, &graph, &layers, &lids, None);
        let a2a = layer_0_of(&fabric, &lids, &tables, spec);
        assert!((a2a - 1.0).abs() < 1e-9, "{spec}: layer 0 all-to-all {a2a}");
    }
}

#[test]
fn spread_routes_are_minimal_and_keep_every_hop_count_of_the_layers() {
    for tree in [(4, 3, 2, 6), (5, 2, 3, 4)] {
        let spec = spec(tree);
        let (fabric, lids, graph) = fabric(&spec, 4);
        let config = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let layers = layered::route(&graph, &config);
        let tables = spread_forwarding_tables(&fabric, &graph, &layers, &lids, None);
        let report = analyze(&fabric, &lids, &tables, &Options::default());
        assert!(report.is_complete(), "{spec}: {report}");
        for paths in &report.paths {
            assert_eq!(paths.minimal, paths.paths, "{spec} layer {}", paths.layer);
        }
    }
}

#[test]
fn tables_of_fabrics_that_are_not_hierarchies_are_the_layers_own() {
    for spec in ["slimfly:q=5", "polarfly:q=5"] {
        let (fabric, lids, graph) = fabric(spec, 2);
        let config = RoutingConfig {
            layers: 2,
            ..RoutingConfig::default()
        };
        let layers = layered::route(&graph, &config);
        assert_eq!(
            spread_forwarding_tables(&fabric, &graph, &layers, &lids, None),
            forwarding_tables(&fabric, &graph, &layers, &lids),
            "{spec}"
        );
    }
}

#[test]
fn fat_trees_on_one_vl_stay_deadlock_free_with_dfsssp_on_every_sl() {
    // One VL: no lane can break a cycle, so the spread routes themselves must have none.
    for tree in [
        (2, 1, 1, 2),
        (4, 2, 1, 2),
        (5, 3, 2, 6),
        (6, 4, 1, 4),
        (3, 4, 3, 8),
    ] {
        // Routed, complete and proven deadlock-free on every SL; the throughput is not judged.
        layer_0_all_to_all(&spec(tree), 4, &SchemeChoice::Dfsssp.schemes(1));
    }
}

/// Every two-level fat tree of the range above where a leaf's hosts outnumber its cables up
/// and are not a multiple of them, so that d-mod-k, every source choosing alike, sends two
/// LIDs down some cable into a leaf where the others carry one.
fn uneven_fat_trees() -> Vec<(usize, usize, usize, usize)> {
    let mut trees = Vec::new();
    for leaves in [2, 3, 5] {
        for spines in 1..=4 {
            for links in 1..=3 {
                for hosts in [3, 4, 5, 6, 8] {
                    let up = spines * links;
                    if hosts > up && hosts % up != 0 {
                        trees.push((leaves, spines, links, hosts));
                    }
                }
            }
        }
    }
    trees
}

/// The all-to-all throughput of the best routing of a two-level fat tree that sends each
/// (source leaf, destination LID) pair down one cable, as a destination-based routing does
/// (`sharing`: the extra LIDs of the `leaves − 1` sources into a leaf spread over its cables,
/// each cable taking the whole rounds of LIDs of every source plus its share of the extras;
/// else every source sends each LID alike, and some cable takes a whole round more).
fn one_cable_a_pair_bound(tree: (usize, usize, usize, usize), sharing: bool) -> f64 {
    let (leaves, spines, links, hosts) = tree;
    let (n, cables, sources) = (leaves * hosts, spines * links, leaves - 1);
    let pairs = if sharing {
        sources * (hosts / cables) + (sources * (hosts % cables)).div_ceil(cables)
    } else {
        sources * hosts.div_ceil(cables)
    };
    1.0f64.min((n - 1) as f64 / (hosts * pairs) as f64)
}

#[test]
fn layer_0_of_uneven_fat_trees_shares_the_extra_lids_and_stays_deadlock_free_on_every_sl() {
    // With one cable per leaf and spine, the leaves' shifts send the extra LIDs down
    // different cables: the best a one-cable-a-pair routing can do. Over parallel cables the
    // spines pick the cable down by their own digit and the extras keep d-mod-k's choice;
    // layer 0 is still never below every source choosing alike.
    for tree in uneven_fat_trees() {
        let spec = spec(tree);
        let a2a = layer_0_all_to_all(&spec, 1, &SchemeChoice::Auto.schemes(8));
        let (shared, alike) = (
            one_cable_a_pair_bound(tree, true),
            one_cable_a_pair_bound(tree, false),
        );
        if tree.2 == 1 {
            assert!(
                (a2a - shared).abs() < 1e-9,
                "{spec}: layer 0 all-to-all {a2a} against the bound {shared}"
            );
        } else {
            assert!(
                a2a >= alike - 1e-9,
                "{spec}: layer 0 all-to-all {a2a} below every source alike {alike}"
            );
        }
    }
}

#[test]
fn a_three_level_tree_that_lost_a_leaf_uplink_carries_all_to_all_at_its_bound_on_every_prefix() {
    // 4-ary 3-tree (64 hosts) without one cable from a leaf up: that leaf's four hosts send and
    // receive the traffic of 60 others over three cables, which bounds all-to-all at
    // 3 (N − 1) / (4 (N − 4)); layer 0 reaches it, and so does the even split over layers 0-1
    // and over 0-3 (above the leaves the extra LIDs take channels of their own).
    let (whole, _, _) = fabric("kary-ntree:k=4,n=3", 4);
    let is_switch = |n: crate::topology::NodeId| whole.node(n).is_switch();
    let leaf = whole
        .links()
        .iter()
        .find_map(|l| match (is_switch(l.a.node), is_switch(l.b.node)) {
            (true, false) => Some(l.a.node),
            (false, true) => Some(l.b.node),
            _ => None,
        })
        .unwrap();
    let up = whole
        .links()
        .iter()
        .position(|l| {
            (l.a.node == leaf && is_switch(l.b.node)) || (l.b.node == leaf && is_switch(l.a.node))
        })
        .unwrap() as u32;
    let damaged = whole.after_losses(|_| false, |l| l.0 == up);
    let lids = LidTable::from_fabric(&damaged).unwrap();
    let graph = RoutingGraph::new(&damaged);
    let config = RoutingConfig {
        layers: 4,
        ..RoutingConfig::default()
    };
    let schemes = SchemeChoice::PortPair.schemes(8);
    let done =
        route_deadlock_free(&damaged, &lids, &graph, &config, &schemes, Shortage::Fail).unwrap();
    let verdict = verify_every_sl(&damaged, &lids, &done.tables, &done.sl2vl);
    assert!(verdict.is_deadlock_free(), "{verdict}");
    let bound = 3.0 * 63.0 / (4.0 * 60.0);
    for (layers, a2a) in prefixes_of(&damaged, &lids, &done.tables, "damaged 4-ary 3-tree") {
        assert!(
            (a2a - bound).abs() < 1e-9,
            "layers 0-{}: all-to-all {a2a} against the bound {bound}",
            layers - 1
        );
    }
}
