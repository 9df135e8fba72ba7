//! The decisions of a [`Session`], one case per test, on Slim Fly q = 5 (50 switches, 200
//! hosts, 4 layers): each asserts which decision was taken and that the tables are those a
//! fresh routing or repair of the same fabric gives.

use super::*;
use crate::deadlock::Shortage;
use crate::options::DeadlockMode;
use crate::routing::assign_lids;
use crate::topology::{Link, LinkId, TopologySpec};

/// The subnet key of the tests is the fabric's cables; the settings key a name standing for a
/// configuration.
pub(super) type Session = super::Session<Vec<Link>, &'static str>;
pub(super) type TestRequest = Request<Vec<Link>, &'static str>;

pub(super) fn slim_fly() -> Fabric {
    let mut fabric = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut fabric, 2).unwrap();
    fabric
}

pub(super) fn routing() -> RoutingConfig {
    RoutingConfig {
        layers: 4,
        ..RoutingConfig::default()
    }
}

pub(super) fn port_pair() -> DeadlockSettings {
    DeadlockSettings {
        mode: DeadlockMode::Auto,
        vls: 8,
        shortage: Shortage::Fail,
    }
}

pub(super) fn request(fabric: &Fabric) -> TestRequest {
    Request {
        fabric: fabric.clone(),
        subnet: fabric.links().to_vec(),
        settings: "default",
        routing: routing(),
        deadlock: port_pair(),
        reoptimise: false,
    }
}

/// The switch-to-switch cables of `fabric`, by link index.
pub(super) fn inter_switch(fabric: &Fabric) -> Vec<u32> {
    (0..fabric.links().len() as u32)
        .filter(|&i| {
            let link = &fabric.links()[i as usize];
            fabric.node(link.a.node).is_switch() && fabric.node(link.b.node).is_switch()
        })
        .collect()
}

/// `fabric` without the switch-to-switch cables at positions `lost` of [`inter_switch`].
pub(super) fn without(fabric: &Fabric, lost: &[usize]) -> Fabric {
    let cables = inter_switch(fabric);
    let lost: Vec<u32> = lost.iter().map(|&i| cables[i]).collect();
    fabric.after_losses(|_| false, |l: LinkId| lost.contains(&l.0))
}

/// What a fresh full routing of `request` gives.
pub(super) fn fresh(request: &TestRequest) -> Routed {
    route(request.fabric.clone(), &request.routing, &request.deadlock).unwrap()
}

/// What a fresh repair of `previous` for `request` gives.
pub(super) fn fresh_repair(previous: &Routed, request: &TestRequest, gains: bool) -> Routed {
    repair(
        previous,
        request.fabric.clone(),
        &request.routing,
        &request.deadlock,
        gains,
    )
    .unwrap()
    .expect("repairable")
}

#[test]
fn a_first_request_routes_in_full() {
    let fabric = slim_fly();
    let mut session = Session::new();
    let settled = session.settle(request(&fabric)).unwrap();
    assert_eq!(settled.decision, Decision::Routed);
    assert_eq!(settled.routed.tables, fresh(&request(&fabric)).tables);
    assert!(Arc::ptr_eq(session.last().unwrap(), &settled.routed));
}

#[test]
fn an_unchanged_request_reuses_the_last_routing() {
    let fabric = slim_fly();
    let mut session = Session::new();
    let first = session.settle(request(&fabric)).unwrap();
    let again = session.settle(request(&fabric)).unwrap();
    assert_eq!(again.decision, Decision::Reused);
    assert!(Arc::ptr_eq(&again.routed, &first.routed));
}

#[test]
fn a_reoptimise_request_routes_in_full_though_nothing_changed() {
    let fabric = slim_fly();
    let mut session = Session::new();
    let first = session.settle(request(&fabric)).unwrap();
    let again = session
        .settle(Request {
            reoptimise: true,
            ..request(&fabric)
        })
        .unwrap();
    assert_eq!(again.decision, Decision::Reoptimised);
    assert!(!Arc::ptr_eq(&again.routed, &first.routed));
    assert_eq!(again.routed.tables, fresh(&request(&fabric)).tables);
}

#[test]
fn a_reoptimise_request_after_losses_routes_in_full_instead_of_repairing() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    session.settle(request(&fabric)).unwrap();
    let settled = session
        .settle(Request {
            reoptimise: true,
            ..request(&cut)
        })
        .unwrap();
    assert_eq!(settled.decision, Decision::Reoptimised);
    assert!(settled.routed.repair.is_none());
    assert_eq!(settled.routed.tables, fresh(&request(&cut)).tables);
}

#[test]
fn lost_cables_repair_the_last_routing() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3, 40]);
    let mut session = Session::new();
    let first = session.settle(request(&fabric)).unwrap();
    let settled = session.settle(request(&cut)).unwrap();
    assert_eq!(settled.decision, Decision::Repaired);
    let repair = settled.routed.repair.as_ref().unwrap();
    assert_eq!((repair.lost_cables, repair.gained_cables), (2, 0));
    let expected = fresh_repair(&first.routed, &request(&cut), false);
    assert_eq!(settled.routed.tables, expected.tables);
}

#[test]
fn gained_cables_are_routed_into_the_last_routing() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    let first = session.settle(request(&cut)).unwrap();
    let settled = session.settle(request(&fabric)).unwrap();
    assert_eq!(settled.decision, Decision::Repaired);
    let repair = settled.routed.repair.as_ref().unwrap();
    assert_eq!((repair.lost_cables, repair.gained_cables), (0, 1));
    let expected = fresh_repair(&first.routed, &request(&fabric), true);
    assert_eq!(settled.routed.tables, expected.tables);
}

#[test]
fn a_subnet_back_to_the_last_full_routing_gets_its_tables_again() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    let full = session.settle(request(&fabric)).unwrap();
    let repaired = session.settle(request(&cut)).unwrap();
    assert_eq!(repaired.decision, Decision::Repaired);
    let back = session.settle(request(&fabric)).unwrap();
    assert_eq!(back.decision, Decision::Reused);
    assert!(Arc::ptr_eq(&back.routed, &full.routed));
}

#[test]
fn a_subnet_back_to_the_last_full_routing_puts_it_in_force() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    let full = session.settle(request(&fabric)).unwrap();
    session.settle(request(&cut)).unwrap();
    session.settle(request(&fabric)).unwrap();
    let in_force = session.last().expect("a routing in force");
    assert!(Arc::ptr_eq(in_force, &full.routed));
}

#[test]
fn losses_from_the_last_full_routing_come_before_gains_on_the_last() {
    // Full routing of the whole fabric; cable a lost (a repair); then a back and b lost: the
    // last routing would need a gain, the full one only a loss, so the full one is repaired.
    let fabric = slim_fly();
    let without_a = without(&fabric, &[3]);
    let without_b = without(&fabric, &[40]);
    let mut session = Session::new();
    let full = session.settle(request(&fabric)).unwrap();
    session.settle(request(&without_a)).unwrap();
    let settled = session.settle(request(&without_b)).unwrap();
    assert_eq!(settled.decision, Decision::Repaired);
    let repair = settled.routed.repair.as_ref().unwrap();
    assert_eq!((repair.lost_cables, repair.gained_cables), (1, 0));
    let expected = fresh_repair(&full.routed, &request(&without_b), false);
    assert_eq!(settled.routed.tables, expected.tables);
}

#[test]
fn other_settings_route_in_full_instead_of_repairing() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    session.settle(request(&fabric)).unwrap();
    let settled = session
        .settle(Request {
            settings: "edited",
            ..request(&cut)
        })
        .unwrap();
    assert_eq!(settled.decision, Decision::Routed);
    assert_eq!(settled.routed.tables, fresh(&request(&cut)).tables);
}

#[test]
fn other_settings_on_an_unchanged_subnet_route_in_full() {
    let fabric = slim_fly();
    let mut session = Session::new();
    let first = session.settle(request(&fabric)).unwrap();
    let settled = session
        .settle(Request {
            settings: "edited",
            ..request(&fabric)
        })
        .unwrap();
    assert_eq!(settled.decision, Decision::Routed);
    assert!(!Arc::ptr_eq(&settled.routed, &first.routed));
}

#[test]
fn other_deadlock_settings_route_in_full_instead_of_repairing() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    session.settle(request(&fabric)).unwrap();
    let fewer_vls = DeadlockSettings {
        vls: 4,
        ..port_pair()
    };
    let settled = session
        .settle(Request {
            deadlock: fewer_vls.clone(),
            ..request(&cut)
        })
        .unwrap();
    assert_eq!(settled.decision, Decision::Routed);
    let expected = route(cut, &routing(), &fewer_vls).unwrap();
    assert_eq!(settled.routed.tables, expected.tables);
}

#[test]
fn without_lanes_by_port_pair_losses_route_in_full() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let none = DeadlockSettings {
        mode: DeadlockMode::None,
        ..port_pair()
    };
    let mut session = Session::new();
    session
        .settle(Request {
            deadlock: none.clone(),
            ..request(&fabric)
        })
        .unwrap();
    let settled = session
        .settle(Request {
            deadlock: none.clone(),
            ..request(&cut)
        })
        .unwrap();
    assert_eq!(settled.decision, Decision::Routed);
    let expected = route(cut, &routing(), &none).unwrap();
    assert_eq!(settled.routed.tables, expected.tables);
}

#[test]
fn a_failed_full_routing_keeps_nothing() {
    let fabric = slim_fly();
    let mut session = Session::new();
    session.settle(request(&fabric)).unwrap();
    let too_few_vls = DeadlockSettings {
        mode: DeadlockMode::Dfsssp,
        vls: 1,
        shortage: Shortage::Fail,
    };
    let failed = session.settle(Request {
        deadlock: too_few_vls,
        ..request(&fabric)
    });
    assert!(matches!(failed, Err(RouteError::Deadlock(_))), "{failed:?}");
    assert!(session.last().is_none());
    // Nothing to reuse: the first request's settings route in full again.
    let again = session.settle(request(&fabric)).unwrap();
    assert_eq!(again.decision, Decision::Routed);
}
