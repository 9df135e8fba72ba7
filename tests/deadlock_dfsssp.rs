//! DFSSSP mode over the routing acceptance set: every fabric, layered routing with 1, 2 and 4
//! layers (and the minimal and RUES baselines with 4), gets VLs within the 8 of common
//! hardware, and the independent verifier proves the result deadlock-free — on the tables
//! in memory, with the tables' path SLs and the scheme's SL-to-VL tables. The searches for
//! fewer VLs after the cycle breaking never need more and stay deadlock-free.

use crate::common;

use common::fabrics::acceptance_set;
use common::routed::{Memo, routed};
use ibfabric::deadlock::{DfssspConfig, VerifyOptions, VlSearch, assign_vls, verify};
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig};

/// Routes with the acceptance tests' seed, assigns VLs, verifies; returns the VLs needed.
fn check(spec: &str, layers: usize, algorithm: Algorithm) -> u8 {
    vls_needed(spec, layers, algorithm, 7, VlSearch::FULL)
}

/// Routes `spec` with `layers` layers (each routing once per test process), assigns VLs with
/// `search`, proves the result deadlock-free; returns the VLs needed.
fn vls_needed(spec: &str, layers: usize, algorithm: Algorithm, seed: u64, search: VlSearch) -> u8 {
    static NEEDED: Memo<(String, RoutingConfig, VlSearch), u8> = Memo::new();
    let _ = env_logger::builder().is_test(true).try_init();
    let config = RoutingConfig {
        layers,
        algorithm,
        seed,
        ..Default::default()
    };
    let key = (spec.to_owned(), config.clone(), search);
    *NEEDED.get_or_compute(key, || assign_and_verify(spec, &config, search))
}

fn assign_and_verify(spec: &str, config: &RoutingConfig, search: VlSearch) -> u8 {
    let routed = routed(spec, config);
    let (fabric, lids, tables) = (&routed.fabric, &routed.routed.lids, &routed.routed.tables);
    let dfsssp = DfssspConfig {
        search,
        ..DfssspConfig::default()
    };
    let what = format!(
        "{spec} L={} {:?} seed {} {search:?}",
        config.layers, config.algorithm, config.seed
    );
    let a = assign_vls(fabric, lids, tables, &dfsssp).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(a.broken.count, 0, "{what}: complete tables");
    assert!(a.vls_needed <= 8);
    assert_eq!(a.routes_per_vl.len(), 8);
    let verdict = verify(
        fabric,
        lids,
        tables,
        &a.path_sls,
        &a.sl2vl(fabric),
        &VerifyOptions::default(),
    );
    assert!(verdict.is_deadlock_free(), "{what}:\n{verdict}");
    eprintln!(
        "{what}: {} VLs needed, {} cycles broken, routes per VL {:?}",
        a.vls_needed, a.cycles_broken, a.routes_per_vl
    );
    a.vls_needed
}

/// Layered routing with 1, 2 and 4 layers: one module per fabric of the acceptance set.
macro_rules! layered_routing_fits_in_8_vls {
    ($($name:ident $spec:literal $size:ident,)*) => {$(
        mod $name {
            use super::*;
            fn check_layered(layers: usize) {
                check($spec, layers, Algorithm::Layered(PathLengths::default()));
            }
            #[test]
            fn layers_1() {
                check_layered(1);
            }
            #[test]
            fn layers_2() {
                check_layered(2);
            }
            #[test]
            fn layers_4() {
                check_layered(4);
            }
        }
    )*};
}

/// The baselines with 4 layers, on every fabric but the largest Slim Fly.
macro_rules! baselines_fit_too {
    ($($name:ident $spec:literal $size:ident,)*) => {$(
        baselines_fit_too!(@one $name $spec $size);
    )*};
    (@one $name:ident $spec:literal largest) => {};
    (@one $name:ident $spec:literal $size:ident) => {
        mod $name {
            use super::*;
            #[test]
            fn minimal() {
                check($spec, 4, Algorithm::Minimal);
            }
            #[test]
            fn rues() {
                check(
                    $spec,
                    4,
                    Algorithm::Rues {
                        keep_per_mille: 600,
                    },
                );
            }
        }
    };
}

mod layered_routing {
    use super::*;
    acceptance_set!(layered_routing_fits_in_8_vls);
}

mod baselines {
    use super::*;
    acceptance_set!(baselines_fit_too);
}

/// VLs needed by layered routing with `seed` and the assignment with `search`.
fn vls_with(spec: &str, layers: usize, seed: u64, search: VlSearch) -> u8 {
    let layered = Algorithm::Layered(PathLengths::default());
    vls_needed(spec, layers, layered, seed, search)
}

/// The searches alone and together on one routing: (none, tabu alone, both).
fn searches(spec: &str, layers: usize, seed: u64) -> (u8, u8, u8) {
    let tabu_alone = VlSearch {
        repack: false,
        tabu: true,
    };
    let off = vls_with(spec, layers, seed, VlSearch::OFF);
    let tabu = vls_with(spec, layers, seed, tabu_alone);
    let full = vls_with(spec, layers, seed, VlSearch::FULL);
    println!("{spec} L={layers} seed {seed}: {off} VLs, tabu alone {tabu}, both {full}");
    (off, tabu, full)
}

/// The fabrics the searches are compared on.
macro_rules! search_fabrics {
    ($then:ident) => {
        $then! {
            slimfly_q4 "slimfly:q=4",
            slimfly_q5 "slimfly:q=5",
            mlfm_d4 "mlfm:d=4",
            random_30x4 "random:switches=30,degree=4,hosts=2,seed=3",
            random_40x5 "random:switches=40,degree=5,hosts=3,seed=1",
        }
    };
}

/// The (layers, seed) settings the searches are compared with.
const SEARCH_SETTINGS: [(usize, u64); 4] = [(2, 1), (2, 2), (4, 1), (4, 2)];

/// One module per fabric, one test per (layers, seed) of [`SEARCH_SETTINGS`].
macro_rules! searching_never_needs_more {
    ($($name:ident $spec:literal,)*) => {$(
        mod $name {
            use super::*;
            fn never_more(layers: usize, seed: u64) {
                let (off, tabu, full) = searches($spec, layers, seed);
                assert!(tabu <= off && full <= off, "{} L={layers} seed {seed}", $spec);
            }
            #[test]
            fn layers_2_seed_1() {
                never_more(2, 1);
            }
            #[test]
            fn layers_2_seed_2() {
                never_more(2, 2);
            }
            #[test]
            fn layers_4_seed_1() {
                never_more(4, 1);
            }
            #[test]
            fn layers_4_seed_2() {
                never_more(4, 2);
            }
        }
    )*};
}

mod searching_for_fewer_vls_never_needs_more_and_stays_deadlock_free {
    use super::*;
    search_fabrics!(searching_never_needs_more);
}

/// The specs of [`search_fabrics`].
macro_rules! specs {
    ($($name:ident $spec:literal,)*) => {
        [$($spec),*]
    };
}

/// The searches are there to save VLs: both together must do so on most of the routings
/// compared, and the tabu search alone on a quarter of them (the tests above compute them;
/// this one waits for or shares their results). Tabu alone saved on 14 of the 20 until the
/// polish of layers 2-3 could move layers 0-1 under their guards; since then the 4-layer
/// routings themselves need fewer VLs without any search (Slim Fly q = 4 and q = 5 seed 2:
/// 5 to 4; the random fabrics of 30 and 40 switches: 5 to 4 and 6 to 5) and tabu alone saves
/// on 9, both together on 19 (as before), never ending above where they ended before.
#[test]
fn searching_saves_vls_on_most_routings() {
    let (mut cases, mut saved_by_tabu, mut saved) = (0, 0, 0);
    for spec in search_fabrics!(specs) {
        for (layers, seed) in SEARCH_SETTINGS {
            let (off, tabu, full) = searches(spec, layers, seed);
            cases += 1;
            saved_by_tabu += usize::from(tabu < off);
            saved += usize::from(full < off);
        }
    }
    assert!(saved * 2 > cases, "{saved} of {cases}");
    assert!(saved_by_tabu * 4 > cases, "{saved_by_tabu} of {cases}");
}

/// The reference implementation (LNMP + OpenSM's DFSSSP) needed 3 VLs on Slim Fly q = 5 with
/// 4 layers, for a routing with hardly any non-minimal diversity. Ours, with three
/// edge-disjoint paths for 84 % of the pairs, built prefix by prefix so that layers 0-1 are
/// balanced on their own, fits in 3 with seeds 1 to 3 (seed 1 needed 4 while the polish of
/// layers 2-3 could not move layers 0-1 under their guards); the plugin uses DFSSSP only where
/// lanes by port pair do not apply, with 8 VLs on the usual hardware.
mod slim_fly_q5_with_4_layers_fits_in_3_vls {
    use super::*;
    fn fits(seed: u64) {
        let vls = vls_with("slimfly:q=5", 4, seed, VlSearch::FULL);
        assert!(vls <= 3, "seed {seed}: {vls} VLs");
    }
    #[test]
    fn seed_1() {
        fits(1);
    }
    #[test]
    fn seed_2() {
        fits(2);
    }
    #[test]
    fn seed_3() {
        fits(3);
    }
}
