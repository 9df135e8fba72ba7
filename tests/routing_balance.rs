//! Link-load balance of layered routing on the Slim Fly acceptance set, measured by the
//! independent analyser from the forwarding tables (routes per directed switch-to-switch
//! cable, all layers together), next to the path diversity the balancing must not cost.
//!
//! The routing issue asks for max/mean ≤ 1.10 on every layer set. The layered routing reaches
//! it on every fabric below with 2, 4 or 8 layers.
//!
//! The layers are built and balanced prefix by prefix (layer 0, layer 1, layers 2-3, 4-7), as
//! MPI stacks split bulk traffic evenly over the first K layers; from layers 2-3 on, a block's
//! polish may move the earlier layers' routes only where no shorter prefix's largest link load
//! grows. That costs some disjoint paths against balancing all layers
//! together, and the prefix-throughput issue chose throughput where the two conflict: the
//! floors below are what the prefix-by-prefix routing reaches (seed 1: q = 5 with 4 layers
//! 85.1 % of the pairs with three disjoint paths, against the structural limit of 6/7 = 85.7 %
//! reached before — girth 5: adjacent switches have no detour of at most 3 hops; q = 7 with 4
//! layers 94.7 % against 96.0 %), and BENCHMARKS.md ("Throughput of each prefix of layers")
//! gives the frontier: layers 0-1 carry all-to-all traffic at 0.79× (q = 5) and 0.90× (q = 7)
//! of layer 0 alone instead of 0.52× and 0.53×.
//!
//! One exception, with one layer (minimal routing alone): on q = 7 the least possible maximum
//! over all choices among minimal paths is 684 routes against a mean of 598.9 (1.142; an
//! integer program over the 1568 pairs with several minimal paths, solved outside the project),
//! and the routing reaches it; its bound is 1.15.

use crate::common;

use common::fabrics::slim_fly;
use common::routed::layered;
use ibfabric::analysis::{Options, Report, analyze};

/// Routes Slim Fly q with `layers` layers and `seed` (1 is the CLI's default) and analyses
/// the tables.
fn report_with_seed(q: u32, layers: usize, seed: u64) -> Report {
    let spec = slim_fly(q);
    let routed = layered(&spec, layers, seed);
    let (fabric, routed) = (&routed.fabric, &routed.routed);
    let report = analyze(fabric, &routed.lids, &routed.tables, &Options::default());
    assert!(report.is_complete(), "{spec} L={layers}:\n{report}");
    assert!(
        report.paths.iter().all(|l| l.max_hops <= 3),
        "{spec} L={layers}: a path over 3 hops"
    );
    report
}

/// [`report_with_seed`] with seed 1.
fn report(q: u32, layers: usize) -> Report {
    report_with_seed(q, layers, 1)
}

/// Slim Fly q with `layers` layers: link-load max/mean at most `bound`, and at least the
/// fractions `floor3` and `floor2` of pairs with three and two edge-disjoint paths.
fn balances(q: u32, layers: usize, bound: f64, floor3: f64, floor2: f64) {
    let report = report(q, layers);
    let balance = report.link_load.total.max_over_mean;
    let three = report.disjoint.at_least_three;
    let two = report.disjoint.at_least_two;
    println!("q = {q} L={layers}: max/mean {balance:.3}, ≥3 disjoint {three:.4}, ≥2 {two:.4}");
    let mut failures = Vec::new();
    if balance > bound {
        failures.push(format!("max/mean {balance:.3} > {bound}"));
    }
    if three < floor3 {
        failures.push(format!("≥3 disjoint {three:.4} < {floor3}"));
    }
    if two < floor2 {
        failures.push(format!("≥2 disjoint {two:.4} < {floor2}"));
    }
    assert!(failures.is_empty(), "q = {q} L={layers}: {failures:#?}");
}

/// One test per (fabric, layers): `name: q, layers, bound on link-load max/mean, floor on the
/// fraction of pairs with three edge-disjoint paths, floor on the fraction with two`. The
/// floors are what the routing reached before load balancing or right after it, whichever was
/// lower, so balancing may not lose diversity; for the 4-layer sets of q = 4, 5 and 7, what
/// the prefix-by-prefix routing reaches (see the module documentation).
macro_rules! balance_cases {
    ($($name:ident: $q:literal, $layers:literal, $bound:expr, $floor3:expr, $floor2:expr;)*) => {$(
        #[test]
        fn $name() {
            balances($q, $layers, $bound, $floor3, $floor2);
        }
    )*};
}

mod layered_routing_balances_link_load_without_losing_disjoint_paths {
    use super::*;
    balance_cases! {
        slimfly_q4_layers_2: 4, 2, 1.10, 0.0, 0.69;
        slimfly_q4_layers_4: 4, 4, 1.10, 0.781, 0.97;
        slimfly_q4_layers_8: 4, 8, 1.10, 0.838, 1.0;
        slimfly_q5_layers_2: 5, 2, 1.10, 0.0, 0.515;
        slimfly_q5_layers_4: 5, 4, 1.10, 0.84, 6.0 / 7.0 - 1e-9;
        slimfly_q5_layers_8: 5, 8, 1.10, 6.0 / 7.0 - 1e-9, 6.0 / 7.0 - 1e-9;
        slimfly_q7_layers_2: 7, 2, 1.10, 0.0, 0.773;
        slimfly_q7_layers_4: 7, 4, 1.10, 0.945, 0.999;
        slimfly_q7_layers_8: 7, 8, 1.10, 0.995, 1.0;
        slimfly_q8_layers_2: 8, 2, 1.10, 0.0, 0.755;
        slimfly_q8_layers_4: 8, 4, 1.10, 0.855, 0.999;
        slimfly_q8_layers_8: 8, 8, 1.10, 0.937, 1.0;
        slimfly_q9_layers_2: 9, 2, 1.10, 0.0, 0.560;
        slimfly_q9_layers_4: 9, 4, 1.10, 0.913, 0.944;
        slimfly_q9_layers_8: 9, 8, 1.10, 0.944, 0.944;
    }
}

/// One layer (minimal routing alone): link-load max/mean at most `bound`.
fn one_layer_balances(q: u32, bound: f64) {
    let balance = report(q, 1).link_load.total.max_over_mean;
    println!("q = {q} L=1: max/mean {balance:.3}");
    assert!(
        balance <= bound,
        "q = {q} L=1: max/mean {balance:.3} > {bound}"
    );
}

/// Bounds 1.10, except q = 7, whose minimal paths allow no better than 1.142 (see the module
/// documentation).
mod one_layer_is_balanced_as_far_as_minimal_paths_allow {
    use super::*;
    #[test]
    fn slimfly_q4() {
        one_layer_balances(4, 1.10);
    }
    #[test]
    fn slimfly_q5() {
        one_layer_balances(5, 1.10);
    }
    #[test]
    fn slimfly_q7() {
        one_layer_balances(7, 1.15);
    }
    #[test]
    fn slimfly_q8() {
        one_layer_balances(8, 1.10);
    }
    #[test]
    fn slimfly_q9() {
        one_layer_balances(9, 1.10);
    }
}

/// Four layers with `seed`: max/mean at most 1.10 and at least the fraction `floor` of pairs
/// with three disjoint paths.
fn four_layers_meet_the_targets(q: u32, seed: u64, floor: f64) {
    let report = report_with_seed(q, 4, seed);
    let balance = report.link_load.total.max_over_mean;
    let three = report.disjoint.at_least_three;
    println!("q = {q} seed {seed}: max/mean {balance:.3}, ≥3 disjoint {three:.4}");
    assert!(
        balance <= 1.10 && three >= floor,
        "q = {q} seed {seed}: max/mean {balance:.3}, ≥3 disjoint {three:.4}"
    );
}

/// One module per fabric, one test per seed 1..=8: `name: q, floor on the fraction of pairs
/// with three disjoint paths`.
macro_rules! every_seed {
    ($($name:ident: $q:literal, $floor:expr;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn seed_1() {
                four_layers_meet_the_targets($q, 1, $floor);
            }
            #[test]
            fn seed_2() {
                four_layers_meet_the_targets($q, 2, $floor);
            }
            #[test]
            fn seed_3() {
                four_layers_meet_the_targets($q, 3, $floor);
            }
            #[test]
            fn seed_4() {
                four_layers_meet_the_targets($q, 4, $floor);
            }
            #[test]
            fn seed_5() {
                four_layers_meet_the_targets($q, 5, $floor);
            }
            #[test]
            fn seed_6() {
                four_layers_meet_the_targets($q, 6, $floor);
            }
            #[test]
            fn seed_7() {
                four_layers_meet_the_targets($q, 7, $floor);
            }
            #[test]
            fn seed_8() {
                four_layers_meet_the_targets($q, 8, $floor);
            }
        }
    )*};
}

/// Pairs with three disjoint paths for q = 7 and q = 5 as the prefix-by-prefix routing
/// reaches them over seeds 1 to 8 (q = 7: 94.0 % to 94.8 %, 96 % before it; q = 5: 83.8 % to
/// 85.1 %, the structural limit 6/7 before; see the module documentation).
mod four_layers_meet_the_targets_for_every_seed {
    use super::*;
    every_seed! {
        slimfly_q7: 7, 0.94;
        slimfly_q5: 5, 0.835;
    }
}

#[test]
fn balancing_keeps_the_large_fabrics_diverse() {
    let report = report(11, 8);
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

/// Slim Fly q with `layers` layers under the lanes by port pair's rule (every route unimodal
/// in the cable order, [`Turns::Unimodal`]), seed 1: link-load max/mean at most 1.10 and at
/// least `floor3` of the pairs with three edge-disjoint paths (6/7 for q = 5 with 8 layers and
/// 99.5 % for q = 7 with 8; with 4 layers what the prefix-by-prefix routing reaches: q = 5
/// 83.8 %, q = 7 92.4 %, see the module documentation; q = 7 reached 92.8 % before the
/// polish of layers 2-3 could move layers 0-1, which raised all-to-all over layers 0-3 from
/// 0.709 to 0.758 of a link).
fn unimodal_balances(q: u32, layers: usize, floor3: f64) {
    use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig, Turns};
    let spec = slim_fly(q);
    let config = RoutingConfig {
        layers,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
        turns: Turns::Unimodal,
    };
    let routed = common::routed::routed(&spec, &config);
    let (fabric, routed) = (&routed.fabric, &routed.routed);
    let report = analyze(fabric, &routed.lids, &routed.tables, &Options::default());
    assert!(report.is_complete(), "{spec} L={layers}:\n{report}");
    let balance = report.link_load.total.max_over_mean;
    let three = report.disjoint.at_least_three;
    println!("q = {q} L={layers} unimodal: max/mean {balance:.3}, ≥3 disjoint {three:.4}");
    assert!(
        balance <= 1.10 && three >= floor3,
        "q = {q} L={layers} unimodal: max/mean {balance:.3}, ≥3 disjoint {three:.4}"
    );
}

macro_rules! unimodal_cases {
    ($($name:ident: $q:literal, $layers:literal, $floor3:expr;)*) => {$(
        #[test]
        fn $name() {
            unimodal_balances($q, $layers, $floor3);
        }
    )*};
}

mod unimodal_routing_balances_link_load {
    use super::*;
    unimodal_cases! {
        slimfly_q4_layers_2: 4, 2, 0.0;
        slimfly_q4_layers_4: 4, 4, 0.0;
        slimfly_q4_layers_8: 4, 8, 0.0;
        slimfly_q5_layers_2: 5, 2, 0.0;
        slimfly_q5_layers_4: 5, 4, 0.83;
        slimfly_q5_layers_8: 5, 8, 6.0 / 7.0 - 1e-9;
        slimfly_q7_layers_2: 7, 2, 0.0;
        slimfly_q7_layers_4: 7, 4, 0.92;
        slimfly_q7_layers_8: 7, 8, 0.995;
        slimfly_q8_layers_2: 8, 2, 0.0;
        slimfly_q8_layers_4: 8, 4, 0.0;
        slimfly_q8_layers_8: 8, 8, 0.0;
        slimfly_q9_layers_2: 9, 2, 0.0;
        slimfly_q9_layers_4: 9, 4, 0.0;
        slimfly_q9_layers_8: 9, 8, 0.0;
    }
}
