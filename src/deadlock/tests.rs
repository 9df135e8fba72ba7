//! The choice between the schemes and the guarantee each outcome names.

use super::*;
use crate::routing::assign_lids;
use crate::topology::TopologySpec;

/// A two-level fat tree: up*/down* minimal routes, acyclic on one lane.
const FAT_TREE: &str = "fattree:leaves=4,spines=2,links-per-pair=1,hosts-per-leaf=2";

/// `spec` with LIDs for `layers` layers, its LID table and routing graph.
fn fabric(spec: &str, layers: usize) -> (Fabric, LidTable, RoutingGraph) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = RoutingGraph::new(&fabric);
    (fabric, lids, graph)
}

/// `spec` routed with `layers` layers and made deadlock-free by the first of `schemes` that
/// fits, under `shortage`; the fabric and LIDs with the outcome.
fn attempt(
    spec: &str,
    layers: usize,
    schemes: &[Scheme],
    shortage: Shortage,
) -> (Fabric, LidTable, Result<DeadlockFree, DeadlockError>) {
    let (fabric, lids, graph) = fabric(spec, layers);
    let config = RoutingConfig {
        layers,
        ..RoutingConfig::default()
    };
    let done = route_deadlock_free(&fabric, &lids, &graph, &config, schemes, shortage);
    (fabric, lids, done)
}

fn routed(spec: &str, layers: usize, choice: SchemeChoice, vls: u8) -> DeadlockFree {
    let (_, _, done) = attempt(spec, layers, &choice.schemes(vls), Shortage::FewerLayers);
    done.unwrap_or_else(|e| panic!("{spec}: {e}"))
}

#[test]
fn auto_tries_lanes_by_port_pair_first_wherever_two_vls_exist() {
    for vls in 1..=15u8 {
        let schemes = SchemeChoice::Auto.schemes(vls);
        let first_is_port_pair = matches!(schemes[0], Scheme::PortPair(_));
        assert_eq!(first_is_port_pair, vls >= 2, "{vls} VLs");
        let colouring = schemes.iter().any(|s| matches!(s, Scheme::Colouring(_)));
        assert_eq!(colouring, vls >= 3, "{vls} VLs");
        assert!(
            matches!(schemes.last(), Some(Scheme::Dfsssp(_))),
            "{vls} VLs: DFSSSP is the last resort"
        );
    }
}

#[test]
fn auto_routes_unimodal_with_no_path_sls_and_guarantees_every_sl() {
    for spec in ["slimfly:q=5", "mlfm:d=3", "lsft:n=3"] {
        let done = routed(spec, 4, SchemeChoice::Auto, 8);
        assert!(
            matches!(done.outcome, SchemeOutcome::PortPair { classes: 4 }),
            "{spec}: {}",
            done.outcome
        );
        assert_eq!(done.outcome.guarantee(), Guarantee::EverySl, "{spec}");
        assert!(done.path_sls.is_none(), "{spec}: any SL is safe");
        assert_eq!(done.layers, 4, "{spec}: no layer is given up");
        let (_, _, graph) = fabric(spec, 4);
        let order = CableOrder::for_routing(&graph, RoutingConfig::default().seed);
        assert!(done.routing.all_unimodal(&graph, &order), "{spec}");
    }
}

#[test]
fn with_one_vl_auto_falls_back_to_dfsssp() {
    let done = routed(FAT_TREE, 4, SchemeChoice::Auto, 1);
    assert!(
        matches!(done.outcome, SchemeOutcome::Dfsssp { vls_needed: 1, .. }),
        "{}",
        done.outcome
    );
    assert!(done.path_sls.is_some());
}

#[test]
fn with_one_vl_a_slim_fly_is_refused_saying_what_is_needed() {
    // Even one minimal layer of a Slim Fly has cyclic channel dependencies.
    let (_, _, done) = attempt(
        "slimfly:q=5",
        4,
        &SchemeChoice::Auto.schemes(1),
        Shortage::FewerLayers,
    );
    let err = done.unwrap_err();
    assert!(
        matches!(err, DeadlockError::NotEnoughVls { available: 1, .. }),
        "{err}"
    );
}

#[test]
fn dfsssp_with_several_vls_is_deadlock_free_only_with_the_path_sls() {
    let done = routed("slimfly:q=5", 4, SchemeChoice::Dfsssp, 8);
    let SchemeOutcome::Dfsssp { vls_needed, .. } = done.outcome else {
        panic!("{}", done.outcome)
    };
    assert!(vls_needed >= 2);
    assert_eq!(done.outcome.guarantee(), Guarantee::PathSlOnly);
    assert!(
        done.outcome
            .guarantee()
            .to_string()
            .contains("only for clients that use the SA's path SL (UCX does not)")
    );
}

#[test]
fn dfsssp_on_one_vl_is_deadlock_free_whatever_the_sl() {
    let (fabric, lids, done) = attempt(
        FAT_TREE,
        1,
        &SchemeChoice::Dfsssp.schemes(8),
        Shortage::Fail,
    );
    let done = done.unwrap();
    assert!(matches!(
        done.outcome,
        SchemeOutcome::Dfsssp { vls_needed: 1, .. }
    ));
    assert_eq!(done.outcome.guarantee(), Guarantee::EverySl);
    let verdict = verify_every_sl(&fabric, &lids, &done.tables, &done.sl2vl);
    assert!(
        verdict.is_deadlock_free(),
        "every route on every SL: {verdict}"
    );
}

#[test]
fn lanes_by_port_pair_need_two_vls() {
    let (_, _, done) = attempt(
        "slimfly:q=5",
        2,
        &[Scheme::PortPair(PortPairConfig { vls: 1 })],
        Shortage::FewerLayers,
    );
    let err = done.unwrap_err();
    assert!(matches!(err, DeadlockError::BadVls { vls: 1, .. }), "{err}");
}
