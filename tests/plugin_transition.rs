//! Staged changes on the real stack (ibsim + stock OpenSM, LMC 2, `qos TRUE`): after a cable
//! is cut, the plugin writes the change in two passes, and the tables read back from the
//! switches after each pass are proven safe as a change from the ones before (every mixture
//! of old and new entries and SL-to-VL tables loop-free and deadlock-free for every SL) by
//! the transition verifier, and checked entry by entry: no entry goes from one working port to
//! another in one pass.

use crate::common;

use common::plugin::{DROP_PASS, passes_read_with, plugin_config, wait_settled, with_plugin};
use common::readback::ReadBack;
use common::{Ibsim, OpenSm};
use ibfabric::Fabric;
use ibfabric::io::ibsim;
use ibfabric::routing::ForwardingTables;
use ibfabric::session::sweep_record::parse_sweep_log;
use ibfabric::session::{PassFigures, PassKind, SweepRecord};
use ibfabric::topology::PortRef;
use std::time::{Duration, Instant};

/// The wait between the passes: long enough to read every switch back in between.
const DRAIN_MS: u64 = 30_000;

/// Entries of `fabric`'s switches that went from one port still cabled to another port
/// still cabled between `old` and `new` (over `fabric`): what a staged pass never does.
fn moved_while_working(fabric: &Fabric, old: &ForwardingTables, new: &ForwardingTables) -> usize {
    let cabled = |s, port: u8| port == 0 || fabric.peer(PortRef { node: s, port }).is_some();
    let mut moved = 0;
    for s in fabric.switches() {
        let end = old.table(s).len().max(new.table(s).len());
        for lid in 0..end as u16 {
            if let (Some(a), Some(b)) = (old.port(s, lid), new.port(s, lid))
                && a != b
                && cabled(s, a)
                && cabled(s, b)
            {
                moved += 1;
            }
        }
    }
    moved
}

/// Entries dropped between `old` and `new` that named a cabled port before.
fn dropped(fabric: &Fabric, old: &ForwardingTables, new: &ForwardingTables) -> usize {
    let mut dropped = 0;
    for s in fabric.switches() {
        for lid in 0..old.table(s).len() as u16 {
            if let Some(a) = old.port(s, lid)
                && (a == 0 || fabric.peer(PortRef { node: s, port: a }).is_some())
                && new.port(s, lid).is_none()
            {
                dropped += 1;
            }
        }
    }
    dropped
}

fn records(path: &std::path::Path) -> Vec<SweepRecord> {
    parse_sweep_log(&std::fs::read_to_string(path).unwrap_or_default()).unwrap()
}

/// Makes the change `act` and reads back every pass of it (see [`passes_read_with`]).
fn passes_of(sim: &mut Ibsim, sm: &OpenSm, act: impl FnOnce(&mut Ibsim)) -> Vec<ReadBack> {
    passes_read_with(sim, sm, act, ReadBack::read_dumps, ReadBack::read)
}

/// Proves every pass from `start` through `passes` safe, and that no pass moved a working
/// entry to another working port unless the plugin's log says it was proven.
fn check_passes(start: &ReadBack, passes: &[ReadBack], what: &str) {
    let mut from = start;
    for (i, to) in passes.iter().enumerate() {
        let verdict = to.verify_change_from(from);
        eprintln!("{what}, pass {}: {verdict}", i + 1);
        assert_eq!(verdict.looping_lids, 0, "{what}, pass {}: {verdict}", i + 1);
        assert!(verdict.is_safe(), "{what}, pass {}: {verdict}", i + 1);
        from = to;
    }
}

/// Stock OpenSM with the plugin (`qos TRUE`, a sweep log, the long drain) on `generated`.
fn start(sim: &Ibsim) -> (OpenSm, std::path::PathBuf) {
    start_draining(sim, DRAIN_MS)
}

/// As [`start`], with `drain_ms` between the passes.
fn start_draining(sim: &Ibsim, drain_ms: u64) -> (OpenSm, std::path::PathBuf) {
    let log = sim.dir().join("sweeps.jsonl");
    let config = plugin_config(
        sim,
        "layered.yaml",
        &format!(
            "sweep_log: {}\ntransition_drain_ms: {drain_ms}\n",
            log.display()
        ),
    );
    let sm = OpenSm::start(sim, &with_plugin("qos TRUE\n", Some(&config), false));
    wait_settled(&sm, 0);
    (sm, log)
}

/// The passes the sweep log recorded, from the `skip`-th on.
fn passes(log: &std::path::Path, skip: usize) -> Vec<PassFigures> {
    records(log)
        .into_iter()
        .filter_map(|r| r.pass)
        .skip(skip)
        .collect()
}

#[test]
fn a_cut_cable_is_repaired_in_passes_each_safe_for_every_mixture_and_every_sl() {
    let generated = common::generated("slimfly:q=5");
    let sim = &mut Ibsim::start(&ibsim::write_net(&generated));
    let (sm, log) = start(sim);
    assert!(
        !sm.log().contains(DROP_PASS),
        "the first routing is one pass"
    );
    let before = ReadBack::read(sim, &sm);
    let recorded = passes(&log, 0).len();

    let cable = common::switch_cables(&generated)[11];
    let end = common::console_port(&generated, cable.a);
    let read = passes_of(sim, &sm, |sim| sim.console(&format!("Unlink {end}")));
    check_passes(&before, &read, "a cable cut");
    let figures = passes(&log, recorded);
    eprintln!("{figures:?}");
    assert_eq!(figures.len(), read.len(), "a record per pass");
    assert!(read.len() >= 2, "the repair drops entries first");
    assert_eq!(figures[0].kind, PassKind::Drop);
    let mut from = &before;
    for (to, pass) in read.iter().zip(&figures) {
        let (old, _) = from.onto(&to.fabric);
        assert_eq!(
            moved_while_working(&to.fabric, &old, &to.tables),
            pass.moved,
            "only entries the verifier proved are moved while working: {pass:?}"
        );
        if pass.kind == PassKind::Drop {
            assert_eq!(
                pass.dropped,
                dropped(&to.fabric, &old, &to.tables),
                "the sweep log counts the entries the switches dropped"
            );
        }
        from = to;
    }
    let (old, _) = before.onto(&from.fabric);
    assert!(
        moved_while_working(&from.fabric, &old, &from.tables) > 0,
        "the repair moved routes (else the test proves nothing)"
    );
}

#[test]
fn plugging_the_cables_back_returns_to_the_full_routing_in_passes_proven_safe() {
    let generated = common::generated("slimfly:q=5");
    let sim = &mut Ibsim::start(&ibsim::write_net(&generated));
    let (sm, log) = start(sim);
    let full = ReadBack::read(sim, &sm);
    let cables: Vec<_> = common::switch_cables(&generated)
        .into_iter()
        .step_by(17)
        .take(3)
        .cloned()
        .collect();
    let end = |p| common::console_port(&generated, p);
    let cut = passes_of(sim, &sm, |sim| {
        for l in &cables {
            sim.console(&format!("Unlink {}", end(l.a)));
        }
    });
    check_passes(&full, &cut, "three cables cut");
    let recorded = passes(&log, 0).len();
    let back = passes_of(sim, &sm, |sim| {
        for l in &cables {
            sim.console(&format!("Link {} {}", end(l.a), end(l.b)));
        }
    });
    check_passes(cut.last().unwrap(), &back, "plugged back");
    assert!(
        back.last().unwrap().tables == full.tables,
        "plugged back, the full routing's tables again"
    );
    assert_eq!(back.last().unwrap().sl2vl, full.sl2vl);
    let figures = passes(&log, recorded);
    eprintln!("{figures:?}");
    assert_eq!(figures.len(), back.len(), "a record per pass");
    assert_eq!(figures.last().unwrap().kind, PassKind::Install);
}

/// ibsim's attribute number of LinearForwardingTable: the MADs its `Error` command drops.
const LFT_ATTRIBUTE: u16 = 0x19;

/// While every switch loses every LinearForwardingTable MAD, no drop pass is ever confirmed:
/// the plugin writes the drop pass again at each follow-up and never the new entries; once the
/// MADs go through, the drop pass is confirmed and the new entries follow.
#[test]
fn lost_writes_hold_back_the_next_pass_until_every_switch_confirmed() {
    let generated = common::generated("slimfly:q=5");
    let sim = &mut Ibsim::start(&ibsim::write_net(&generated));
    let (sm, log) = start_draining(sim, 1000);
    let recorded = passes(&log, 0).len();
    let switches: Vec<String> = generated
        .switches()
        .map(|s| generated.node(s).name.clone())
        .collect();
    for name in &switches {
        sim.console(&format!("Error \"{name}\" 100 {LFT_ATTRIBUTE}"));
    }
    let cable = common::switch_cables(&generated)[11];
    sim.console(&format!(
        "Unlink {}",
        common::console_port(&generated, cable.a)
    ));
    let deadline = Instant::now() + Duration::from_secs(180);
    while passes(&log, recorded).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "fewer than 3 passes:\n{}",
            sm.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let held_back = passes(&log, recorded);
    assert!(
        held_back.iter().all(|p| p.kind == PassKind::Drop),
        "only drop passes while no write is confirmed: {held_back:?}"
    );
    for name in &switches {
        sim.console(&format!("Error \"{name}\" 0"));
    }
    wait_settled(&sm, 0);
    let figures = passes(&log, recorded);
    eprintln!("{figures:?}");
    assert_eq!(figures.last().map(|p| p.kind), Some(PassKind::Install));
    let after = ReadBack::read(sim, &sm);
    let verdict = after.verify_every_sl();
    assert!(verdict.is_deadlock_free(), "{verdict}");
    let report = ibfabric::analysis::analyze(
        &after.fabric,
        &after.lids,
        &after.tables,
        &ibfabric::analysis::Options::default(),
    );
    assert!(report.is_complete(), "{report}");
}
