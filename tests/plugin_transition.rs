//! Staged changes on the real stack (ibsim + stock OpenSM, LMC 2, `qos TRUE`): after a cable
//! is cut, the plugin writes the change in two passes, and the tables read back from the
//! switches after each pass are proven safe as a change from the ones before (every mixture
//! of old and new entries and SL-to-VL tables loop-free and deadlock-free for every SL) by
//! the transition verifier, and checked entry by entry: no entry goes from one working port to
//! another in one pass.

use crate::common;

use common::plugin::{DROP_PASS, NEXT_PASS_ASKED, plugin_config, wait_settled, with_plugin};
use common::readback::ReadBack;
use common::{Ibsim, OpenSm, SUBNET_UP};
use ibfabric::Fabric;
use ibfabric::deadlock::verify::{After, Before, TransitionVerdict, verify_transition};
use ibfabric::deadlock::{DefaultSl, RouteSls, VerifyOptions};
use ibfabric::io::ibsim;
use ibfabric::routing::ForwardingTables;
use ibfabric::session::{PassKind, SweepRecord};
use ibfabric::topology::PortRef;
use std::time::{Duration, Instant};

/// The wait between the passes: long enough to read every switch back in between.
const DRAIN_MS: u64 = 30_000;

/// The change from `before` to `after` (both read back), proven by the transition verifier.
fn verify(before: &ReadBack, after: &ReadBack) -> TransitionVerdict {
    let (old, old_sl2vl) = before.onto(&after.fabric);
    verify_transition(
        &after.fabric,
        &after.lids,
        &Before {
            tables: &old,
            sl2vl: &old_sl2vl,
            multicast: None,
        },
        &After {
            tables: &after.tables,
            path_sl: &DefaultSl(0),
            sl2vl: &after.sl2vl,
            multicast: None,
        },
        &VerifyOptions {
            sls: RouteSls::EverySl,
            ..VerifyOptions::default()
        },
    )
}

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
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_cut_cable_is_repaired_in_two_passes_each_safe_for_every_mixture_and_every_sl() {
    let generated = common::generated("slimfly:q=5");
    let sim = &mut Ibsim::start(&ibsim::write_net(&generated));
    let log = sim.dir().join("sweeps.jsonl");
    let config = plugin_config(
        sim,
        "layered.yaml",
        &format!(
            "sweep_log: {}\ntransition_drain_ms: {DRAIN_MS}\n",
            log.display()
        ),
    );
    let sm = OpenSm::start(sim, &with_plugin("qos TRUE\n", Some(&config), false));
    let routings = wait_settled(&sm, 0);
    assert!(
        !sm.log().contains(DROP_PASS),
        "the first routing is one pass"
    );
    let before = ReadBack::read(sim, &sm);

    let cable = common::switch_cables(&generated)[11];
    sim.console(&format!(
        "Unlink {}",
        common::console_port(&generated, cable.a)
    ));
    // The drop pass, and the end of its sweep (the SL-to-VL dump is written then).
    let deadline = Instant::now() + Duration::from_secs(120);
    while !sm
        .log()
        .split(DROP_PASS)
        .nth(1)
        .is_some_and(|after| after.contains(SUBNET_UP))
    {
        assert!(Instant::now() < deadline, "no drop pass:\n{}", sm.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1));
    // From the tables OpenSM had confirmed by every switch (its LFT dump): `ibroute` asks the
    // switches by LID, and the drop pass drops some of the routes to them.
    let dropping = ReadBack::read_dumps(sim, &sm);
    assert!(
        !sm.log().contains(NEXT_PASS_ASKED),
        "the next pass started while the drop pass was read back: raise DRAIN_MS"
    );
    wait_settled(&sm, routings);
    let after = ReadBack::read(sim, &sm);

    for (what, from, to) in [
        ("drop pass", &before, &dropping),
        ("last pass", &dropping, &after),
    ] {
        let verdict = verify(from, to);
        eprintln!("{what}: {verdict}");
        assert_eq!(verdict.looping_lids, 0, "{what}: {verdict}");
        assert!(verdict.is_safe(), "{what}: {verdict}");
        let (old, _) = from.onto(&to.fabric);
        assert_eq!(
            moved_while_working(&to.fabric, &old, &to.tables),
            0,
            "{what} moved working entries to other working ports"
        );
    }
    let (old, _) = before.onto(&after.fabric);
    assert!(
        moved_while_working(&after.fabric, &old, &after.tables) > 0,
        "the repair moved routes (else the test proves nothing)"
    );

    let passes: Vec<_> = records(&log).into_iter().filter_map(|r| r.pass).collect();
    let kinds: Vec<PassKind> = passes.iter().map(|p| p.kind).collect();
    assert!(
        kinds.ends_with(&[PassKind::Drop, PassKind::Install]),
        "{kinds:?}"
    );
    eprintln!("{passes:?}");
    let drop_pass = passes[passes.len() - 2];
    let (old, _) = before.onto(&dropping.fabric);
    assert_eq!(
        drop_pass.dropped,
        dropped(&dropping.fabric, &old, &dropping.tables),
        "the sweep log counts the entries the switches dropped"
    );
    assert!(drop_pass.dropped > 0);
}
