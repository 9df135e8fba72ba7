//! The plugin's `metrics_file` on the real stack (ibsim + stock OpenSM, LMC 2, `qos TRUE`,
//! Slim Fly q = 5 cabled by its plan): after the first routing and after a cable is cut, the
//! file is what promtool accepts, exactly what `ibfabric metrics` makes of the sweep log the
//! plugin wrote beside it, and its numbers are those of the sweep log and of the fabric read
//! back (switches, layers, the cut cable missing from the plan).

use std::path::Path;

use crate::command::{ibfabric, stderr};
use crate::common;

use common::Ibsim;
use common::plugin::{LAYERED_USED, plugin_config, run_opensm_with_conf, wait_settled};
use common::readback::ReadBack;
use ibfabric::analysis::{self, Options};
use ibfabric::io::ibsim;
use ibfabric::plan::build::{PlanOptions, plan_for};
use ibfabric::plan::document::PlanDocument;
use ibfabric::session::sweep_record::{Outcome, SweepRecord, parse_sweep_log};

/// The value of the sample `key` (`name` or `name{labels}`) in an exposition.
fn sample(text: &str, key: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {key}:\n{text}"))
}

/// The metrics file, checked by promtool and against `ibfabric metrics` on the sweep log;
/// returns it and the sweep log's records. The plugin appends to the sweep log and then
/// rewrites the metrics file at the end of every pass, and OpenSM may sweep again while the two
/// are read: a copy of the log and the metrics file are read again (for up to 15 s) until they
/// are of the same pass; the last pair read must then agree.
fn read_back(metrics: &Path, sweeps: &Path, when: &str) -> (String, Vec<SweepRecord>) {
    let copy = sweeps.with_extension("read.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let (log, text, rendered) = loop {
        let log = std::fs::read_to_string(sweeps).unwrap();
        std::fs::write(&copy, &log).unwrap();
        let text = std::fs::read_to_string(metrics).unwrap();
        let out = ibfabric(&["metrics", "--sweep-log", copy.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let rendered = String::from_utf8(out.stdout).unwrap();
        if rendered == text || std::time::Instant::now() > deadline {
            break (log, text, rendered);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    common::promtool::check_metrics(&text, &format!("the plugin's metrics_file {when}"));
    assert_eq!(
        rendered, text,
        "{when}: the plugin's metrics are those of its sweep log"
    );
    let records = parse_sweep_log(&log).unwrap();
    (text, records)
}

fn passes(text: &str, outcome: Outcome) -> f64 {
    sample(
        text,
        &format!(
            "opensm_layered_routing_passes_total{{outcome=\"{}\"}}",
            outcome.name()
        ),
    )
}

/// The SL-to-VL counters are the sums of the sweep log's counts.
fn assert_sl2vl_sums(text: &str, records: &[SweepRecord]) {
    let tables = records.iter().filter_map(|r| r.sl2vl_tables);
    let (sent, asked) = tables.fold((0, 0), |(s, a), t| (s + t.sent, a + t.asked));
    assert_eq!(
        sample(text, "opensm_layered_sl2vl_tables_sent_total"),
        sent as f64
    );
    assert_eq!(
        sample(text, "opensm_layered_sl2vl_tables_asked_total"),
        asked as f64
    );
}

#[test]
fn plugin_metrics_file_follows_the_sweep_log_through_a_cable_loss() {
    let spec = "slimfly:q=5".parse().unwrap();
    let plan = plan_for(&spec, &PlanOptions::default()).unwrap();
    let fabric = plan.to_fabric().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&fabric));
    let plan_path = sim.dir().join("plan.yaml");
    let plan_yaml = yaml_serde::to_string(&PlanDocument::from_plan(&plan)).unwrap();
    std::fs::write(&plan_path, plan_yaml).unwrap();
    let textfiles = sim.dir().join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    let metrics = textfiles.join("opensm-layered.prom");
    let sweeps = sim.dir().join("sweeps.jsonl");
    let config = plugin_config(
        &sim,
        "layered.yaml",
        &format!(
            "sweep_log: {}\nmetrics_file: {}\ncabling_plan: {}\n",
            sweeps.display(),
            metrics.display(),
            plan_path.display()
        ),
    );
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    let routings = wait_settled(&sm, 0);

    let (text, records) = read_back(&metrics, &sweeps, "after the first routing");
    let read = ReadBack::read(&sim, &sm);
    let report = analysis::analyze(&read.fabric, &read.lids, &read.tables, &Options::default());
    let summary = read.fabric.summary();
    assert_eq!(
        sample(&text, "opensm_layered_switches"),
        summary.switches as f64
    );
    assert_eq!(sample(&text, "opensm_layered_layers"), report.layers as f64);
    assert_eq!(passes(&text, Outcome::Failed), 0.0);
    let routed = records
        .iter()
        .filter(|r| r.outcome == Outcome::Routed)
        .count();
    assert_eq!(passes(&text, Outcome::Routed), routed as f64);
    assert!(routed >= 1, "{records:?}");
    // OpenSM asks for the SL-to-VL tables after the first routing and sends those the ports
    // do not hold yet (all of the lanes' rows are new to a fresh fabric's switches).
    let first = records.iter().find(|r| r.outcome == Outcome::Routed);
    let tables = first.and_then(|r| r.sl2vl_tables);
    let tables = tables.unwrap_or_else(|| panic!("no SL-to-VL tables: {records:?}"));
    assert!(0 < tables.sent && tables.sent <= tables.asked, "{tables:?}");
    assert_sl2vl_sums(&text, &records);
    assert_eq!(
        sample(
            &text,
            "opensm_layered_deadlock_guarantee{guarantee=\"every_sl\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&text, "opensm_layered_cabling_cables{state=\"as_planned\"}"),
        plan.cables.len() as f64
    );
    assert_eq!(
        sample(
            &text,
            "opensm_layered_cabling_cables{state=\"not_as_planned\"}"
        ),
        0.0
    );
    // Only the file is left in the collector's directory: no temporary file stays behind.
    let names: Vec<_> = std::fs::read_dir(&textfiles)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["opensm-layered.prom"]);

    let cable = common::switch_cables(&fabric)[0];
    sim.console(&format!(
        "Unlink {}",
        common::console_port(&fabric, cable.a)
    ));
    wait_settled(&sm, routings);
    assert!(sm.log().contains(LAYERED_USED));
    let (after, records) = read_back(&metrics, &sweeps, "after a cable was cut");
    let repairs: Vec<&SweepRecord> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Repaired)
        .collect();
    assert!(!repairs.is_empty(), "{records:?}");
    assert_eq!(passes(&after, Outcome::Repaired), repairs.len() as f64);
    let sum = |f: fn(&SweepRecord) -> u64| repairs.iter().map(|r| f(r)).sum::<u64>() as f64;
    let changed = sum(|r| r.routes_changed.unwrap());
    assert!(changed > 0.0);
    assert_eq!(
        sample(&after, "opensm_layered_repair_routes_changed_total"),
        changed
    );
    assert_eq!(
        sample(&after, "opensm_layered_repair_routes_had_to_change_total"),
        sum(|r| r.routes_had_to.unwrap())
    );
    assert_eq!(
        sample(&after, "opensm_layered_repair_cables_lost_total"),
        1.0
    );
    // The routing in force is the repair; the counters before the cut only moved up.
    let last = records.iter().rev().find(|r| r.outcome != Outcome::Failed);
    assert_eq!(
        sample(&after, "opensm_layered_repair_switch_pairs_below_target"),
        last.unwrap().pairs_below_target.unwrap() as f64
    );
    assert_eq!(
        passes(&after, Outcome::Routed),
        passes(&text, Outcome::Routed)
    );
    assert!(
        sample(&after, "opensm_layered_last_pass_timestamp_seconds")
            > sample(&text, "opensm_layered_last_pass_timestamp_seconds")
    );
    assert_sl2vl_sums(&after, &records);
    // The cut cable is the one the cabling check misses.
    assert_eq!(
        sample(
            &after,
            "opensm_layered_cabling_cables{state=\"not_as_planned\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&after, "opensm_layered_switches"),
        ReadBack::read(&sim, &sm).fabric.summary().switches as f64
    );
}
