//! DFSSSP mode over the routing acceptance set: every fabric, layered routing with 1, 2 and 4
//! layers (and the minimal and RUES baselines with 4), gets VLs within the 8 of common
//! hardware, and the independent verifier proves the result deadlock-free — on the tables
//! in memory, with the tables' path SLs and the scheme's SL-to-VL tables. The searches for
//! fewer VLs after the cycle breaking never need more and stay deadlock-free.

use ibfabric::deadlock::{DfssspConfig, VerifyOptions, VlSearch, assign_vls, verify};
use ibfabric::routing::{Algorithm, PathLengths, Routed, RoutingConfig, assign_lids, route_fabric};
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

/// Routes with the acceptance tests' seed, assigns VLs, verifies; returns the VLs needed.
fn check(spec: &str, layers: usize, algorithm: Algorithm) -> u8 {
    vls_needed(spec, layers, algorithm, 7, VlSearch::FULL)
}

/// Routes `spec` with `layers` layers, assigns VLs with `search`, proves the result
/// deadlock-free; returns the VLs needed.
fn vls_needed(spec: &str, layers: usize, algorithm: Algorithm, seed: u64, search: VlSearch) -> u8 {
    let _ = env_logger::builder().is_test(true).try_init();
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let Routed { lids, tables, .. } = route_fabric(
        &fabric,
        &RoutingConfig {
            layers,
            algorithm: algorithm.clone(),
            seed,
            ..Default::default()
        },
    )
    .unwrap();
    let config = DfssspConfig {
        search,
        ..DfssspConfig::default()
    };
    let what = format!("{spec} L={layers} {algorithm:?} seed {seed} {search:?}");
    let a = assign_vls(&fabric, &lids, &tables, &config).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(a.broken.count, 0, "{what}: complete tables");
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
    assert!(verdict.is_deadlock_free(), "{what}:\n{verdict}");
    eprintln!(
        "{what}: {} VLs needed, {} cycles broken, routes per VL {:?}",
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

/// VLs needed by layered routing with `seed` and the assignment with `search`.
fn vls_with(spec: &str, layers: usize, seed: u64, search: VlSearch) -> u8 {
    let layered = Algorithm::Layered(PathLengths::default());
    vls_needed(spec, layers, layered, seed, search)
}

#[test]
fn searching_for_fewer_vls_never_needs_more_and_stays_deadlock_free() {
    let fabrics = [
        "slimfly:q=4",
        "slimfly:q=5",
        "mlfm:d=4",
        "random:switches=30,degree=4,hosts=2,seed=3",
        "random:switches=40,degree=5,hosts=3,seed=1",
    ];
    let tabu_alone = VlSearch {
        repack: false,
        tabu: true,
    };
    let (mut cases, mut saved_by_tabu, mut saved) = (0, 0, 0);
    for spec in fabrics {
        for layers in [2, 4] {
            for seed in [1, 2] {
                let off = vls_with(spec, layers, seed, VlSearch::OFF);
                let tabu = vls_with(spec, layers, seed, tabu_alone);
                let full = vls_with(spec, layers, seed, VlSearch::FULL);
                println!(
                    "{spec} L={layers} seed {seed}: {off} VLs, tabu alone {tabu}, both {full}"
                );
                assert!(tabu <= off && full <= off, "{spec} L={layers} seed {seed}");
                cases += 1;
                saved_by_tabu += usize::from(tabu < off);
                saved += usize::from(full < off);
            }
        }
    }
    // The searches are there to save VLs: they must do so on most of these routings.
    assert!(saved * 2 > cases, "{saved} of {cases}");
    assert!(saved_by_tabu * 2 > cases, "{saved_by_tabu} of {cases}");
}

/// The reference implementation (LNMP + OpenSM's DFSSSP) needed 3 VLs on Slim Fly q = 5 with
/// 4 layers, for a routing with hardly any non-minimal diversity; ours, with 3 edge-disjoint
/// paths for every pair that can have them (6/7 of all), fits in as many.
#[test]
fn slim_fly_q5_with_4_layers_fits_in_3_vls() {
    for seed in [1, 2, 3] {
        let vls = vls_with("slimfly:q=5", 4, seed, VlSearch::FULL);
        assert!(vls <= 3, "seed {seed}: {vls} VLs");
    }
}
