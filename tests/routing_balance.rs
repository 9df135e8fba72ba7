//! Link-load balance of layered routing on the Slim Fly acceptance set, measured by the
//! independent analyser from the forwarding tables (routes per directed switch-to-switch
//! cable, all layers together), next to the path diversity the balancing must not cost.
//!
//! The routing issue asks for max/mean ≤ 1.10 on every layer set. The layered routing reaches
//! it on every fabric below with 2, 4 or 8 layers, with no fewer pairs with three (or two)
//! disjoint paths than before the link-load balancing, and Slim Fly q = 5 with 4 layers at its
//! structural limit of 6/7 (girth 5: adjacent switches have no detour of at most 3 hops).
//!
//! One exception, with one layer (minimal routing alone): on q = 7 the least possible maximum
//! over all choices among minimal paths is 684 routes against a mean of 598.9 (1.142; an
//! integer program over the 1568 pairs with several minimal paths, solved outside the project),
//! and the routing reaches it; its bound is 1.15.

use ibfabric::analysis::{Options, Report, analyze};
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::TopologySpec;

/// Routes `spec` with `layers` layers and `seed` (1 is the CLI's default) and analyses the
/// tables.
fn report_with_seed(spec: &str, layers: usize, seed: u64) -> Report {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let config = RoutingConfig {
        layers,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed,
        ..Default::default()
    };
    let routed = route_fabric(&fabric, &config).unwrap();
    let report = analyze(&fabric, &routed.lids, &routed.tables, &Options::default());
    assert!(report.is_complete(), "{spec} L={layers}:\n{report}");
    assert!(
        report.paths.iter().all(|l| l.max_hops <= 3),
        "{spec} L={layers}: a path over 3 hops"
    );
    report
}

/// [`report_with_seed`] with seed 1.
fn report(spec: &str, layers: usize) -> Report {
    report_with_seed(spec, layers, 1)
}

/// (fabric, layers, bound on link-load max/mean, floor on the fraction of pairs with three
/// edge-disjoint paths, floor on the fraction with two). The floors are what the routing
/// reached before load balancing or right after it, whichever was lower (the targets
/// where it names them: 6/7 for q = 5 with 4 layers, 96 % for q = 7 with 4, 99.5 % with 8),
/// so balancing may not lose diversity.
const CASES: [(&str, usize, f64, f64, f64); 15] = [
    ("slimfly:q=4", 2, 1.10, 0.0, 0.701),
    ("slimfly:q=4", 4, 1.10, 0.781, 1.0),
    ("slimfly:q=4", 8, 1.10, 0.838, 1.0),
    ("slimfly:q=5", 2, 1.10, 0.0, 0.515),
    ("slimfly:q=5", 4, 1.10, 6.0 / 7.0 - 1e-9, 6.0 / 7.0 - 1e-9),
    ("slimfly:q=5", 8, 1.10, 6.0 / 7.0 - 1e-9, 6.0 / 7.0 - 1e-9),
    ("slimfly:q=7", 2, 1.10, 0.0, 0.773),
    ("slimfly:q=7", 4, 1.10, 0.96, 0.999),
    ("slimfly:q=7", 8, 1.10, 0.995, 1.0),
    ("slimfly:q=8", 2, 1.10, 0.0, 0.755),
    ("slimfly:q=8", 4, 1.10, 0.855, 0.999),
    ("slimfly:q=8", 8, 1.10, 0.937, 1.0),
    ("slimfly:q=9", 2, 1.10, 0.0, 0.560),
    ("slimfly:q=9", 4, 1.10, 0.913, 0.944),
    ("slimfly:q=9", 8, 1.10, 0.944, 0.944),
];

#[test]
fn layered_routing_balances_link_load_without_losing_disjoint_paths() {
    let mut failures = Vec::new();
    for (spec, layers, bound, floor3, floor2) in CASES {
        let report = report(spec, layers);
        let balance = report.link_load.total.max_over_mean;
        let three = report.disjoint.at_least_three;
        let two = report.disjoint.at_least_two;
        println!("{spec} L={layers}: max/mean {balance:.3}, ≥3 disjoint {three:.4}, ≥2 {two:.4}");
        if balance > bound {
            failures.push(format!(
                "{spec} L={layers}: max/mean {balance:.3} > {bound}"
            ));
        }
        if three < floor3 {
            failures.push(format!(
                "{spec} L={layers}: ≥3 disjoint {three:.4} < {floor3}"
            ));
        }
        if two < floor2 {
            failures.push(format!(
                "{spec} L={layers}: ≥2 disjoint {two:.4} < {floor2}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn one_layer_is_balanced_as_far_as_minimal_paths_allow() {
    // (fabric, bound): 1.10, except q = 7, whose minimal paths allow no better than 1.142
    // (see the module documentation).
    let cases = [
        ("slimfly:q=4", 1.10),
        ("slimfly:q=5", 1.10),
        ("slimfly:q=7", 1.15),
        ("slimfly:q=8", 1.10),
        ("slimfly:q=9", 1.10),
    ];
    let mut failures = Vec::new();
    for (spec, bound) in cases {
        let balance = report(spec, 1).link_load.total.max_over_mean;
        println!("{spec} L=1: max/mean {balance:.3}");
        if balance > bound {
            failures.push(format!("{spec} L=1: max/mean {balance:.3} > {bound}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn four_layers_meet_the_targets_for_every_seed() {
    // (fabric, floor on the fraction of pairs with three disjoint paths): the 96 % for
    // q = 7, the structural limit 6/7 for q = 5.
    let cases = [("slimfly:q=7", 0.96), ("slimfly:q=5", 6.0 / 7.0 - 1e-9)];
    let mut failures = Vec::new();
    for (spec, floor) in cases {
        for seed in 1..=8 {
            let report = report_with_seed(spec, 4, seed);
            let balance = report.link_load.total.max_over_mean;
            let three = report.disjoint.at_least_three;
            println!("{spec} seed {seed}: max/mean {balance:.3}, ≥3 disjoint {three:.4}");
            if balance > 1.10 || three < floor {
                failures.push(format!(
                    "{spec} seed {seed}: max/mean {balance:.3}, ≥3 disjoint {three:.4}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn balancing_keeps_the_large_fabrics_diverse() {
    let report = report("slimfly:q=11", 8);
    assert!(
        report.disjoint.at_least_three >= 0.99,
        "{}",
        report.disjoint.at_least_three
    );
    assert!(
        report.link_load.total.max_over_mean <= 1.10,
        "{}",
        report.link_load.total.max_over_mean
    );
}
