//! The MLFM all-to-all layout routed by the plugin (`algorithm: mlfm-a2a`) inside stock
//! OpenSM on ibsim (LMC 2, `qos TRUE`, the default deadlock mode): the tables read back serve
//! every admissible MLFM schedule congestion-free (the a2a check), hold the layout's server
//! routes exactly as `ibfabric a2a mlfm --lft-out` lays them out, are complete and
//! deadlock-free for every SL. With a spine cable cut the repaired tables stay complete and
//! deadlock-free, and the schedules the log says stay congestion-free are exactly those the
//! check on the read-back tables finds so. A fabric that is not an MLFM is refused and OpenSM
//! routes it with its next engine.

use crate::common;

use common::plugin::{MINHOP_USED, plugin_config, run_opensm_with_conf, wait_settled};
use common::readback::ReadBack;
use common::{Ibsim, OpenSm};
use ibfabric::Fabric;
use ibfabric::analysis::{self, Options};
use ibfabric::collectives::{self, MlfmSpine, check, mlfm_layer_tables};
use ibfabric::io::{NodeNameMap, ibnetdiscover, ibsim};
use ibfabric::topology::Construction;
use ibfabric::topology::mlfm::Mlfm;

/// Every admissible (n, ℓ, m) of an MLFM with d = `d` (as `a2a_schedules` checks them), all
/// served by the 4 layers of LMC 2 (m ≤ d ≤ 4).
fn admissible(d: u32) -> Vec<(u32, u32, u32)> {
    let mut sets = Vec::new();
    for n in 1..=d {
        for l in 2..=d + 1 {
            for m in 1..l {
                sets.push((n, l, m));
            }
        }
    }
    sets
}

/// The read-back fabric with the construction's names (a site's node-name-map), the same
/// node ids as `read.fabric`, so `read`'s tables and LIDs apply to it.
fn named(sim: &Ibsim, read: &ReadBack, generated: &Fabric) -> Fabric {
    let names = NodeNameMap::from_fabric(generated);
    let named = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), Some(&names))
        .unwrap()
        .fabric;
    assert_eq!(named.nodes().len(), read.fabric.nodes().len());
    for (a, b) in named.nodes().iter().zip(read.fabric.nodes()) {
        assert_eq!(a.guid, b.guid, "the same node order");
    }
    named
}

/// Complete on every layer and deadlock-free with every route on every SL.
fn assert_complete_and_deadlock_free(read: &ReadBack, what: &str) {
    let report = analysis::analyze(&read.fabric, &read.lids, &read.tables, &Options::default());
    assert!(report.is_complete(), "{what}: {report}");
    assert_eq!(report.layers, 4, "{what}");
    let verdict = read.verify_every_sl();
    assert!(verdict.is_deadlock_free(), "{what}: {verdict}");
}

/// Starts the MLFM with d = `d` under OpenSM with the plugin routing `mlfm-a2a`; returns
/// the generated fabric, the simulator and the daemon, once routed.
fn start(d: u32) -> (Fabric, Ibsim, OpenSm, usize) {
    let generated = Mlfm::new(d).unwrap().build();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let config = plugin_config(&sim, "layered.yaml", "algorithm: mlfm-a2a\n");
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    let routings = wait_settled(&sm, 0);
    let log = sm.log();
    assert!(
        log.contains(&format!("layered: mlfm-a2a: MLFM d = {d} recognised")),
        "{log}"
    );
    assert!(
        log.contains("layered: deadlock-free by lanes by port pair"),
        "{log}"
    );
    assert!(!log.contains(MINHOP_USED), "{log}");
    (generated, sim, sm, routings)
}

fn the_layout_is_congestion_free_complete_and_deadlock_free(d: u32) {
    let (generated, sim, sm, _) = start(d);
    let read = ReadBack::read(&sim, &sm);
    assert_complete_and_deadlock_free(&read, "routed");
    let named = named(&sim, &read, &generated);
    let sets = admissible(d);
    assert_eq!(sets.len() as u32, d * d * (d + 1) / 2);
    for (n, l, m) in sets {
        let schedule = collectives::mlfm(d, n, l, m, MlfmSpine::BySource).unwrap();
        let report = check(&named, &read.lids, &read.tables, &schedule).unwrap();
        assert_eq!(
            report.throughput_ratio, 1.0,
            "{}: {:?} {:?}",
            schedule.name, report.worst_phase, report.worst_link
        );
    }
    // Every leaf's entry for every server LID is the layout's (`a2a mlfm --lft-out` for the
    // whole machine on the same LIDs); spines' entries may differ where the deadlock scheme
    // needed another route.
    let mlfm = Mlfm::new(d).unwrap();
    let layout = mlfm_layer_tables(&mlfm, &named, &read.lids, d + 1, MlfmSpine::BySource);
    let mut compared = 0;
    for leaf in named.switches() {
        if !named.node(leaf).name.starts_with("leaf") {
            continue;
        }
        for (lid, owner) in read.lids.iter() {
            if named.node(owner.node).is_switch() {
                continue;
            }
            assert_eq!(
                read.tables.port(leaf, lid),
                layout.port(leaf, lid),
                "{} LID {lid}",
                named.node(leaf).name
            );
            compared += 1;
        }
    }
    assert_eq!(compared, mlfm.leaves() * generated.hosts().count() * 4);
}

fn a_cut_spine_cable_is_repaired_and_the_log_names_the_affected_schedules(d: u32) {
    let (generated, sim, sm, routings) = start(d);
    // leaf0-1's first uplink: spine {1, 2}.
    let port = d + 1;
    sim.console(&format!("Unlink \"leaf0-1\"[{port}]"));
    wait_settled(&sm, routings);
    let read = ReadBack::read(&sim, &sm);
    assert_eq!(
        read.fabric.summary().switch_links,
        generated.summary().switch_links - 1
    );
    assert_complete_and_deadlock_free(&read, "repaired");
    let log = sm.log();
    assert!(
        log.contains("layered: repaired after losing 1 cable"),
        "{log}"
    );
    assert!(!log.contains(MINHOP_USED), "{log}");
    let lost = format!(
        "mlfm-a2a: lost cable leaf0-1 port {port} – spine1-2 port 1 (spine {{1, 2}}, columns 1 \
         and 2)"
    );
    assert!(log.contains(&lost), "no `{lost}`:\n{log}");
    let named = named(&sim, &read, &generated);
    let (mut free, mut affected) = (0, 0);
    for (n, l, m) in admissible(d) {
        let schedule = collectives::mlfm(d, n, l, m, MlfmSpine::BySource).unwrap();
        let report = check(&named, &read.lids, &read.tables, &schedule).unwrap();
        let prefix = format!("mlfm-a2a schedule {}: ", schedule.name);
        // The last repair's line for this schedule.
        let line = log
            .lines()
            .rev()
            .find(|l| l.contains(&prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line:\n{log}"));
        let logged_free = line.ends_with(": congestion-free");
        assert_eq!(
            logged_free, report.congestion_free,
            "{line}\nread back: ratio {} {:?}",
            report.throughput_ratio, report.worst_link
        );
        if report.congestion_free {
            free += 1;
        } else {
            affected += 1;
            assert!(line.contains("congested (throughput ratio"), "{line}");
        }
    }
    eprintln!("d = {d}: {free} schedules stay congestion-free, {affected} affected");
    assert!(free > 0 && affected > 0, "{free} free, {affected} affected");
    let summary = format!(
        "mlfm-a2a: {free} of {} schedules stay congestion-free",
        free + affected
    );
    assert!(log.contains(&summary), "no `{summary}`:\n{log}");
}

#[test]
fn mlfm_d3_layout_read_back_is_congestion_free_complete_and_deadlock_free() {
    the_layout_is_congestion_free_complete_and_deadlock_free(3);
}

#[test]
fn mlfm_d4_layout_read_back_is_congestion_free_complete_and_deadlock_free() {
    the_layout_is_congestion_free_complete_and_deadlock_free(4);
}

#[test]
fn mlfm_d3_cut_spine_cable_is_repaired_and_the_log_agrees_with_the_check() {
    a_cut_spine_cable_is_repaired_and_the_log_names_the_affected_schedules(3);
}

#[test]
fn mlfm_d4_cut_spine_cable_is_repaired_and_the_log_agrees_with_the_check() {
    a_cut_spine_cable_is_repaired_and_the_log_names_the_affected_schedules(4);
}

/// A Slim Fly is no MLFM: the plugin says so and OpenSM routes with minhop.
#[test]
fn a_fabric_that_is_not_an_mlfm_is_refused_and_routed_by_the_next_engine() {
    let sim = Ibsim::start(&ibsim::write_net(&common::generated("slimfly:q=5")));
    let config = plugin_config(&sim, "layered.yaml", "algorithm: mlfm-a2a\n");
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), true);
    let log = sm.log();
    assert!(
        log.contains(
            "layered: algorithm mlfm-a2a refused: not an MLFM cabled by its port plan: 50 switches"
        ),
        "{log}"
    );
    assert!(
        log.contains("falling back to the next routing engine"),
        "{log}"
    );
    assert!(log.contains(MINHOP_USED), "{log}");
}

/// The same routing from the command line: `ibfabric route --algorithm mlfm-a2a` writes
/// tables on which `ibfabric a2a mlfm --check` finds the schedules congestion-free, and
/// refuses a fabric that is not an MLFM.
#[test]
fn the_route_command_lays_out_the_same_routing_and_refuses_other_fabrics() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("mlfm.lft");
    let ibfabric = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ibfabric"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = ibfabric(&[
        "route",
        "--fabric",
        "mlfm:d=4",
        "--algorithm",
        "mlfm-a2a",
        "--deadlock",
        "auto",
        "--lft-out",
        tables.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("deadlock-free by lanes by port pair"),
        "{text}"
    );
    for (n, l, m) in [(4, 5, 4), (2, 3, 2), (3, 4, 1)] {
        let (n, l, m) = (n.to_string(), l.to_string(), m.to_string());
        let out = ibfabric(&[
            "a2a",
            "mlfm",
            "--d",
            "4",
            "--n",
            &n,
            "--l",
            &l,
            "--m",
            &m,
            "--check",
            "--fabric",
            "mlfm:d=4",
            "--lfts",
            tables.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "n={n} l={l} m={m}: {text}");
        assert!(
            text.contains("throughput ratio 1.000000 (congestion-free)"),
            "{text}"
        );
    }
    let out = ibfabric(&[
        "route",
        "--fabric",
        "slimfly:q=5",
        "--algorithm",
        "mlfm-a2a",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not an MLFM cabled by its port plan"), "{err}");
}
