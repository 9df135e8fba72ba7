//! Colouring mode on every Slim Fly up to q = 27: the switch colouring fits in the colour SLs
//! (SL 1..=14), every route of the layered routing has at most 3 inter-switch hops, and the
//! independent verifier proves the routes with their path SLs and the scheme's SL-to-VL tables
//! deadlock-free.
//!
//! Layer counts: 1, 2, 4 and 8 wherever the LIDs fit in IB's 49151 unicast LIDs — all four up
//! to q = 13; q = 16, 17, 19 up to 4 layers; q = 23 and 25 up to 2; q = 27 only 1 (8 layers
//! would need 8 × 30618 endpoint LIDs). The most layers of q = 19, 23 and 25 are left to
//! `cargo bench --bench deadlock -- colouring`, which asserts the same in release
//! ([`slim_flies_up_to_q27`]).

use crate::common;

use std::sync::Arc;

use common::fabrics::{slim_flies_up_to_q27, slim_fly};
use common::routed::{RoutedFabric, layered, routed};
use ibfabric::deadlock::colouring::{MAX_HOPS, buckets};
use ibfabric::deadlock::{
    ColouringConfig, DeadlockError, Sl2VlTables, VerifyOptions, colouring_scheme, verify,
};
use ibfabric::routing::{Algorithm, RoutingConfig};
use ibfabric::topology::PortRef;

/// Slim Fly q routed by layered routing with `layers` layers (seed 5).
fn slim_fly_routed(q: u32, layers: usize) -> Arc<RoutedFabric> {
    layered(&slim_fly(q), layers, 5)
}

/// Colours, checks and verifies one Slim Fly; returns the colours used.
fn check(q: u32, layers: usize) -> usize {
    let spec = slim_fly(q);
    let routed = slim_fly_routed(q, layers);
    let (fabric, lids, tables) = (&routed.fabric, &routed.routed.lids, &routed.routed.tables);
    let config = ColouringConfig::default();
    let scheme = colouring_scheme(fabric, lids, tables, &config)
        .unwrap_or_else(|e| panic!("{spec} L={layers}: {e}"));
    assert!(scheme.colouring.count <= config.colour_sls.len());
    assert!(scheme.max_hops <= MAX_HOPS);
    assert_eq!(scheme.broken.count, 0);
    let sl2vl = scheme.sl2vl(fabric);
    let verdict = verify(
        fabric,
        lids,
        tables,
        &scheme.path_sls,
        &sl2vl,
        &VerifyOptions::default(),
    );
    assert!(verdict.is_deadlock_free(), "{spec} L={layers}:\n{verdict}");
    assert_eq!(
        verdict.vls,
        (0..8).collect::<Vec<u8>>(),
        "{spec}: all 8 VLs in use"
    );
    eprintln!(
        "{spec} L={layers}: {} colours, paths ≤ {} hops, {} routes, {} dependencies",
        scheme.colouring.count, scheme.max_hops, verdict.routes, verdict.dependencies
    );
    if q == 27 {
        let colours = scheme.colouring.count;
        assert!(colours <= 14, "q = 27 fits in the colour SLs: {colours}");
    }
    scheme.colouring.count
}

/// One module per Slim Fly, one test per layer count (`layers_1`, ...).
macro_rules! colouring_mode_on_slim_flies {
    ($($name:ident $q:literal [$($layers:tt),*],)*) => {$(
        mod $name {
            use super::*;
            colouring_mode_on_slim_flies!(@layers $q $($layers)*);
        }
    )*};
    (@layers $q:literal $($layers:tt)*) => {$(
        colouring_mode_on_slim_flies!(@test $q $layers);
    )*};
    (@test $q:literal 1) => { #[test] fn layers_1() { check($q, 1); } };
    (@test $q:literal 2) => { #[test] fn layers_2() { check($q, 2); } };
    (@test $q:literal 4) => { #[test] fn layers_4() { check($q, 4); } };
    (@test $q:literal 8) => { #[test] fn layers_8() { check($q, 8); } };
}

mod colouring_mode_on_slim_flies_up_to_q27 {
    use super::*;
    slim_flies_up_to_q27!(colouring_mode_on_slim_flies);
}

#[test]
fn the_sl2vl_tables_follow_the_hop_position_rules() {
    let routed = slim_fly_routed(5, 2);
    let (fabric, lids, tables) = (&routed.fabric, &routed.routed.lids, &routed.routed.tables);
    let scheme = colouring_scheme(fabric, lids, tables, &ColouringConfig::default()).unwrap();
    let t: Sl2VlTables = scheme.sl2vl(fabric);
    let [b0, b1, b2] = buckets(8);
    for s in fabric.switches() {
        let own = scheme.colour_sls[usize::from(scheme.colour_of(s).unwrap())];
        let kind = |p: u8| {
            fabric
                .peer(PortRef { node: s, port: p })
                .map(|peer| fabric.node(peer.node).is_switch())
        };
        let ports = fabric.node(s).num_ports();
        for i in 0..=ports {
            for o in 1..=ports {
                let (Some(out_switch), from) =
                    (kind(o), if i == 0 { Some(false) } else { kind(i) })
                else {
                    continue;
                };
                let Some(from_switch) = from else { continue };
                for sl in 0..16u8 {
                    let vl = t.switch_vl(s, i, o, sl);
                    assert!(vl < 8);
                    if !out_switch {
                        continue; // delivery: any VL
                    }
                    let bucket = if !from_switch {
                        &b0
                    } else if sl == own {
                        &b1
                    } else {
                        &b2
                    };
                    assert!(bucket.contains(&vl), "in {i} out {o} SL {sl}: VL {vl}");
                }
            }
        }
    }
}

#[test]
fn what_the_scheme_cannot_do_is_said_plainly() {
    let q5 = slim_fly_routed(5, 1);
    let (fabric, lids, tables) = (&q5.fabric, &q5.routed.lids, &q5.routed.tables);
    // Too few SLs for the colours (the Hoffman–Singleton graph needs 4).
    let err = colouring_scheme(
        fabric,
        lids,
        tables,
        &ColouringConfig {
            colour_sls: vec![1, 2, 3],
            ..ColouringConfig::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            DeadlockError::TooManyColours {
                needed: 4,
                available: 3
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("needs 4 colours"), "{err}");
    // Fewer than 3 VLs.
    let err = colouring_scheme(
        fabric,
        lids,
        tables,
        &ColouringConfig {
            vls: 2,
            ..ColouringConfig::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, DeadlockError::BadVls { vls: 2, .. }), "{err}");
    // Paths longer than 3 hops: minimal routing on 40 switches of degree 3 (the Moore bound
    // allows at most 22 switches within 3 hops of one).
    let minimal = RoutingConfig {
        layers: 1,
        algorithm: Algorithm::Minimal,
        seed: 1,
        ..Default::default()
    };
    let random = routed("random:switches=40,degree=3,hosts=1,seed=3", &minimal);
    let (fabric, lids, tables) = (&random.fabric, &random.routed.lids, &random.routed.tables);
    let err = colouring_scheme(fabric, lids, tables, &ColouringConfig::default()).unwrap_err();
    assert!(matches!(err, DeadlockError::PathTooLong { .. }), "{err}");
    assert!(
        err.to_string().contains("at most 3 inter-switch hops"),
        "{err}"
    );
}
