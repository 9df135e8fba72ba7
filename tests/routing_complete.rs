//! Every routing algorithm fills complete, loop-free forwarding tables on every fabric of the
//! acceptance set and every layer count, as the independent analyser walks them.

use ibfabric::analysis::{Options, analyze};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered::{Algorithm, PathLengths, RoutingConfig, route};
use ibfabric::routing::{LidTable, assign_lids, forwarding_tables};
use ibfabric::topology::TopologySpec;

fn check(spec: &str, layers: usize, algorithm: Algorithm) {
    let mut fabric = spec
        .parse::<TopologySpec>()
        .unwrap()
        .construction()
        .unwrap()
        .build();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = RoutingGraph::new(&fabric);
    let routed = route(
        &graph,
        &RoutingConfig {
            layers,
            algorithm: algorithm.clone(),
            seed: 7,
        },
    );
    let tables = forwarding_tables(&fabric, &graph, &routed, &lids);
    let report = analyze(&fabric, &lids, &tables, &Options::default());
    assert!(
        report.is_complete(),
        "{spec} L={layers} {algorithm:?}:\n{report}"
    );
    assert_eq!(report.paths.len(), layers, "{spec}");
    // Layer 0 is minimal. (Layered paths stay within max(d + 1, 3) hops for all but a few
    // pairs whose layer leaves no such path when it is completed; see the routing issue.)
    assert!(
        report.paths[0].longer == 0 && report.paths[0].plus_one == 0,
        "{spec}: layer 0 minimal"
    );
}

const FABRICS: [&str; 14] = [
    "slimfly:q=4",
    "slimfly:q=5",
    "slimfly:q=7",
    "slimfly:q=8",
    "slimfly:q=9",
    "slimfly:q=11",
    "slimfly:q=13",
    "mlfm:d=3",
    "mlfm:d=4",
    "lsft:n=3",
    "lsft:n=5",
    "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18",
    "random:switches=40,degree=5,hosts=3,seed=1",
    "random:switches=64,degree=7,hosts=2,seed=2",
];

#[test]
fn layered_routing_is_complete_on_every_fabric_and_layer_count() {
    for spec in FABRICS {
        for layers in [1, 2, 4, 8] {
            check(spec, layers, Algorithm::Layered(PathLengths::default()));
        }
    }
}

#[test]
fn baselines_are_complete_too() {
    for spec in FABRICS
        .iter()
        .filter(|s| !s.contains("q=13") && !s.contains("q=11"))
    {
        check(spec, 4, Algorithm::Minimal);
        check(
            spec,
            4,
            Algorithm::Rues {
                keep_per_mille: 600,
            },
        );
    }
}
