//! The journal of a [`Session`](super::Session): settled again in order in a fresh session,
//! its steps rebuild the same routings (what a restarted subnet manager relies on), one case
//! per test on Slim Fly q = 5.

use super::tests::{Session, TestRequest, request, slim_fly, without};
use super::*;
use crate::deadlock::Shortage;
use crate::options::DeadlockMode;

/// A fresh session that settled `session`'s journal again, finding each step's fabric among
/// `fabrics` by its cables (the subnet key of the tests).
fn replayed(session: &Session, fabrics: &[&Fabric]) -> Session {
    let mut fresh = Session::new();
    for step in session.journal() {
        let fabric = fabrics
            .iter()
            .find(|f| f.links() == step.subnet.as_slice())
            .expect("every step's fabric is known");
        fresh
            .settle(Request {
                fabric: (*fabric).clone(),
                subnet: step.subnet.clone(),
                settings: step.settings,
                routing: step.routing.clone(),
                deadlock: step.deadlock.clone(),
                reoptimise: step.reoptimise,
            })
            .unwrap();
    }
    fresh
}

fn settle(session: &mut Session, request: TestRequest) -> Decision {
    session.settle(request).unwrap().decision
}

#[test]
fn a_replayed_journal_puts_the_same_tables_in_force_after_repairs() {
    let fabric = slim_fly();
    let one = without(&fabric, &[3]);
    let two = without(&fabric, &[3, 40]);
    let five = without(&fabric, &[3, 40, 7, 60, 100]);
    let mut session = Session::new();
    settle(&mut session, request(&fabric));
    for cut in [&one, &two, &five] {
        assert_eq!(settle(&mut session, request(cut)), Decision::Repaired);
    }
    assert_eq!(session.journal().len(), 4);
    let mut restarted = replayed(&session, &[&fabric, &one, &two, &five]);
    assert_eq!(
        restarted.last().unwrap().tables,
        session.last().unwrap().tables
    );
    // The unchanged subnet reuses the replayed routing: no entry changes.
    assert_eq!(settle(&mut restarted, request(&five)), Decision::Reused);
}

#[test]
fn cables_plugged_back_after_a_replay_get_the_full_routings_tables() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3, 40]);
    let mut session = Session::new();
    let full = session.settle(request(&fabric)).unwrap().routed;
    settle(&mut session, request(&cut));
    let mut restarted = replayed(&session, &[&fabric, &cut]);
    let back = restarted.settle(request(&fabric)).unwrap();
    assert_eq!(back.decision, Decision::Reused);
    assert_eq!(back.routed.tables, full.tables);
}

#[test]
fn a_reuse_of_the_last_routing_adds_no_step() {
    let fabric = slim_fly();
    let mut session = Session::new();
    settle(&mut session, request(&fabric));
    settle(&mut session, request(&fabric));
    assert_eq!(session.journal().len(), 1);
}

#[test]
fn a_return_to_the_last_full_routing_leaves_only_its_step() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    settle(&mut session, request(&fabric));
    settle(&mut session, request(&cut));
    assert_eq!(settle(&mut session, request(&fabric)), Decision::Reused);
    assert_eq!(session.journal().len(), 1);
    assert_eq!(session.journal()[0].subnet, fabric.links());
}

#[test]
fn a_full_routing_starts_the_journal_again() {
    let fabric = slim_fly();
    let cut = without(&fabric, &[3]);
    let mut session = Session::new();
    settle(&mut session, request(&fabric));
    settle(&mut session, request(&cut));
    let reoptimise = Request {
        reoptimise: true,
        ..request(&cut)
    };
    assert_eq!(settle(&mut session, reoptimise), Decision::Reoptimised);
    assert_eq!(session.journal().len(), 1);
    assert!(session.journal()[0].reoptimise);
    assert_eq!(session.journal()[0].subnet, cut.links());
}

#[test]
fn a_failed_full_routing_empties_the_journal() {
    let fabric = slim_fly();
    let mut session = Session::new();
    settle(&mut session, request(&fabric));
    let too_few_vls = DeadlockSettings {
        mode: DeadlockMode::Dfsssp,
        vls: 1,
        shortage: Shortage::Fail,
    };
    let failed = session.settle(Request {
        deadlock: too_few_vls,
        ..request(&fabric)
    });
    assert!(failed.is_err());
    assert!(session.journal().is_empty());
}
