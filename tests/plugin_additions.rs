//! New switches and cables under stock OpenSM (ibsim, LMC 2, `qos TRUE`, the plugin's default
//! configuration): a switch and cables the plugin has never routed are routed in without
//! changing one forwarding entry of the others, every guarantee kept, and unplugging them again
//! gives back the tables of the subnet without them.

use crate::common;

use common::plugin::{MINHOP_USED, run_opensm_with_conf, wait_settled};
use common::readback::{ReadBack, churn};
use common::{Ibsim, console_port, generated, switch_cables};
use ibfabric::analysis::{self, Options};
use ibfabric::io::ibsim;
use ibfabric::rng::Rng;
use ibfabric::topology::{Link, PortRef};

/// Judges the tables read back: complete, 4 layers, deadlock-free with every route on every SL.
fn assert_guarantees(read: &ReadBack, what: &str) {
    let report = analysis::analyze(&read.fabric, &read.lids, &read.tables, &Options::default());
    assert!(report.is_complete(), "{what}: {report}");
    assert_eq!(report.layers, 4, "{what}: every layer");
    let verdict = read.verify_every_sl();
    assert!(verdict.is_deadlock_free(), "{what}: {verdict}");
}

#[test]
fn a_new_switch_and_new_cables_are_routed_in_without_changing_the_other_routes() {
    let fabric = generated("slimfly:q=5");
    let sim = Ibsim::start(&ibsim::write_net(&fabric));
    let end = |p| console_port(&fabric, p);
    // Absent when OpenSM first routes: a switch with its hosts, and two cables elsewhere.
    let newcomer = fabric.switches().nth(11).unwrap();
    let ports: Vec<(PortRef, PortRef)> = fabric
        .neighbours(newcomer)
        .map(|(port, peer)| {
            (
                PortRef {
                    node: newcomer,
                    port,
                },
                peer,
            )
        })
        .collect();
    let elsewhere: Vec<&Link> = switch_cables(&fabric)
        .into_iter()
        .filter(|l| l.a.node != newcomer && l.b.node != newcomer)
        .collect();
    let mut rng = Rng::new(11);
    let mut cables: Vec<&Link> = Vec::new();
    while cables.len() < 2 {
        let l = elsewhere[rng.below(elsewhere.len() as u64) as usize];
        if !cables.contains(&l) {
            cables.push(l);
        }
    }
    let absent: Vec<(PortRef, PortRef)> = ports
        .iter()
        .copied()
        .chain(cables.iter().map(|l| (l.a, l.b)))
        .collect();
    for (a, _) in &absent {
        sim.console(&format!("Unlink {}", end(*a)));
    }
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    let mut routings = wait_settled(&sm, 0);
    let without = ReadBack::read(&sim, &sm);
    assert_eq!(
        without.fabric.summary().switches,
        49,
        "the newcomer is not there yet"
    );
    assert_guarantees(&without, "without them");

    for (a, b) in &absent {
        sim.console(&format!("Link {} {}", end(*a), end(*b)));
    }
    routings = wait_settled(&sm, routings);
    let with = ReadBack::read(&sim, &sm);
    assert_eq!(with.fabric.summary().switches, 50);
    assert_eq!(with.fabric.summary().switch_links, 175);
    assert_guarantees(&with, "with them");
    let (changed, crossing) = churn(&without, &with);
    assert_eq!(
        (changed, crossing),
        (0, 0),
        "forwarding entries of the switches and LIDs that were there before changed"
    );
    let log = sm.log();
    assert!(!log.contains(MINHOP_USED), "{log}");
    assert!(
        log.contains("layered: repaired after losing 0 cables and 0 switches and gaining 9 cables and 1 switch"),
        "{log}"
    );

    for (a, _) in &absent {
        sim.console(&format!("Unlink {}", end(*a)));
    }
    wait_settled(&sm, routings);
    let again = ReadBack::read(&sim, &sm);
    assert_eq!(
        again.tables, without.tables,
        "the tables of the subnet without them are back"
    );
}
