//! DFSSSP mode over the routing acceptance set: every fabric, layered routing with 1, 2 and 4
//! layers (and the minimal and RUES baselines with 4), gets VLs within the 8 of common
//! hardware, and the independent verifier proves the result deadlock-free — on the tables
//! in memory, with the tables' path SLs and the scheme's SL-to-VL tables.

use ibfabric::deadlock::{DfssspConfig, VerifyOptions, assign_vls, verify};
use ibfabric::routing::layered::{Algorithm, PathLengths, RoutingConfig};
use ibfabric::routing::{Routed, assign_lids, route_fabric};
use ibfabric::topology::TopologySpec;

/// The fabrics of the routing issue's acceptance set (tests/routing_complete.rs).
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

/// Routes, assigns VLs, verifies; returns the VLs needed.
fn check(spec: &str, layers: usize, algorithm: Algorithm) -> u8 {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let Routed { lids, tables, .. } = route_fabric(
        &fabric,
        &RoutingConfig {
            layers,
            algorithm: algorithm.clone(),
            seed: 7,
        },
    )
    .unwrap();
    let a = assign_vls(&fabric, &lids, &tables, &DfssspConfig::default())
        .unwrap_or_else(|e| panic!("{spec} L={layers} {algorithm:?}: {e}"));
    assert_eq!(a.broken.count, 0, "{spec}: complete tables");
    assert!(a.vls_needed <= 8);
    assert_eq!(a.routes_per_vl.len(), 8);
    let verdict = verify(
        &fabric,
        &lids,
        &tables,
        &a.path_sls,
        &a.sl2vl(&fabric),
        &VerifyOptions::default(),
    );
    assert!(
        verdict.is_deadlock_free(),
        "{spec} L={layers} {algorithm:?}:\n{verdict}"
    );
    eprintln!(
        "{spec} L={layers} {algorithm:?}: {} VLs needed, {} cycles broken, routes per VL {:?}",
        a.vls_needed, a.cycles_broken, a.routes_per_vl
    );
    a.vls_needed
}

#[test]
fn layered_routing_fits_in_8_vls_on_the_acceptance_set() {
    for spec in FABRICS {
        for layers in [1, 2, 4] {
            check(spec, layers, Algorithm::Layered(PathLengths::default()));
        }
    }
}

#[test]
fn baselines_fit_too() {
    for spec in FABRICS.iter().filter(|s| !s.contains("q=13")) {
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
