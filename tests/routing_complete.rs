//! Every routing algorithm fills complete, loop-free forwarding tables on every fabric of the
//! acceptance set and every layer count, as the independent analyser walks them; layer 0 is
//! minimal and layered paths never exceed max(d + 1, 3) hops.

use ibfabric::analysis::{Options, analyze};
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::TopologySpec;

fn check(spec: &str, layers: usize, algorithm: Algorithm) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let config = RoutingConfig {
        layers,
        algorithm: algorithm.clone(),
        seed: 7,
        ..Default::default()
    };
    let routed = route_fabric(&fabric, &config).unwrap();
    let report = analyze(&fabric, &routed.lids, &routed.tables, &Options::default());
    assert!(
        report.is_complete(),
        "{spec} L={layers} {algorithm:?}:\n{report}"
    );
    assert_eq!(report.paths.len(), layers, "{spec}");
    assert!(
        report.paths[0].longer == 0 && report.paths[0].plus_one == 0,
        "{spec}: layer 0 minimal"
    );
    if let Algorithm::Layered(lengths) = algorithm {
        // A pair at distance d may take up to max(d + min_extra_hops, max_hops) hops.
        let graph = &routed.graph;
        let diameter = (0..graph.len())
            .flat_map(|t| graph.dist_to(t).iter().copied())
            .max()
            .unwrap_or(0);
        let bound = u32::from(lengths.max_hops.max(diameter + lengths.min_extra_hops));
        for layer in &report.paths {
            assert!(
                layer.max_hops <= bound,
                "{spec} L={layers}: layer {} has {}-hop paths (bound {bound})",
                layer.layer,
                layer.max_hops
            );
        }
        if diameter == 2 {
            assert!(
                report.paths.iter().all(|l| l.max_hops <= 3),
                "{spec} L={layers}: a path over 3 hops"
            );
        }
    }
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
