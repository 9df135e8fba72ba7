//! Colouring mode on every Slim Fly up to q = 27: the switch colouring fits in the colour SLs
//! (SL 1..=14), every route of the layered routing has at most 3 inter-switch hops, and the
//! independent verifier proves the routes with their path SLs and the scheme's SL-to-VL tables
//! deadlock-free.
//!
//! Layer counts: 1, 2, 4 and 8 wherever the LIDs fit in IB's 49151 unicast LIDs — all four up
//! to q = 13; q = 16, 17, 19 up to 4 layers; q = 23 and 25 up to 2; q = 27 only 1 (8 layers
//! would need 8 × 30618 endpoint LIDs).

use ibfabric::Fabric;
use ibfabric::deadlock::colouring::{MAX_HOPS, buckets};
use ibfabric::deadlock::{
    ColouringConfig, DeadlockError, Sl2VlTables, VerifyOptions, colouring_scheme, verify,
};
use ibfabric::routing::{
    Algorithm, ForwardingTables, LidTable, PathLengths, Routed, RoutingConfig, assign_lids,
    route_fabric,
};
use ibfabric::topology::{PortRef, TopologySpec};

fn routed(spec: &str, layers: usize) -> (Fabric, LidTable, ForwardingTables) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let Routed { lids, tables, .. } = route_fabric(
        &fabric,
        &RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    (fabric, lids, tables)
}

/// Colours, checks and verifies one Slim Fly; returns the colours used.
fn check(q: u32, layers: usize) -> usize {
    let spec = format!("slimfly:q={q}");
    let (fabric, lids, tables) = routed(&spec, layers);
    let config = ColouringConfig::default();
    let scheme = colouring_scheme(&fabric, &lids, &tables, &config)
        .unwrap_or_else(|e| panic!("{spec} L={layers}: {e}"));
    assert!(scheme.colouring.count <= config.colour_sls.len());
    assert!(scheme.max_hops <= MAX_HOPS);
    assert_eq!(scheme.broken.count, 0);
    let sl2vl = scheme.sl2vl(&fabric);
    let verdict = verify(
        &fabric,
        &lids,
        &tables,
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
    scheme.colouring.count
}

#[test]
fn colouring_mode_on_slim_flies_up_to_q13_with_up_to_8_layers() {
    for q in [3, 4, 5, 7, 8, 9, 11, 13] {
        for layers in [1, 2, 4, 8] {
            check(q, layers);
        }
    }
}

#[test]
fn colouring_mode_on_the_large_slim_flies_up_to_q27() {
    for (q, layer_counts) in [
        (16, &[1, 2, 4][..]),
        (17, &[1, 2, 4]),
        (19, &[1, 2, 4]),
        (23, &[1, 2]),
        (25, &[1, 2]),
        (27, &[1]),
    ] {
        for &layers in layer_counts {
            let colours = check(q, layers);
            if q == 27 {
                assert!(colours <= 14, "q = 27 fits in the colour SLs: {colours}");
            }
        }
    }
}

#[test]
fn the_sl2vl_tables_follow_the_hop_position_rules() {
    let (fabric, lids, tables) = routed("slimfly:q=5", 2);
    let scheme = colouring_scheme(&fabric, &lids, &tables, &ColouringConfig::default()).unwrap();
    let t: Sl2VlTables = scheme.sl2vl(&fabric);
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
    let (fabric, lids, tables) = routed("slimfly:q=5", 1);
    // Too few SLs for the colours (the Hoffman–Singleton graph needs 4).
    let err = colouring_scheme(
        &fabric,
        &lids,
        &tables,
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
        &fabric,
        &lids,
        &tables,
        &ColouringConfig {
            vls: 2,
            ..ColouringConfig::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, DeadlockError::BadVls { vls: 2, .. }), "{err}");
    // Paths longer than 3 hops: minimal routing on 40 switches of degree 3 (the Moore bound
    // allows at most 22 switches within 3 hops of one).
    let (fabric, lids, tables) = {
        let mut f = "random:switches=40,degree=3,hosts=1,seed=3"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut f, 0).unwrap();
        let Routed { lids, tables, .. } = route_fabric(
            &f,
            &RoutingConfig {
                layers: 1,
                algorithm: Algorithm::Minimal,
                seed: 1,
                ..Default::default()
            },
        )
        .unwrap();
        (f, lids, tables)
    };
    let err = colouring_scheme(&fabric, &lids, &tables, &ColouringConfig::default()).unwrap_err();
    assert!(matches!(err, DeadlockError::PathTooLong { .. }), "{err}");
    assert!(
        err.to_string().contains("at most 3 inter-switch hops"),
        "{err}"
    );
}
