//! `ibfabric metrics --sweep-log`: a sweep log of real routing passes (Slim Fly q = 5 routed,
//! repaired after lost cables, rewritten, a failure) turned into the Prometheus text format
//! that promtool accepts, the same the library renders; bad input named by file and line; and
//! the Grafana dashboard shipped with the plugin, built on the metric names the formatter
//! writes.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::command::{ibfabric, stderr};
use crate::common;

use ibfabric::deadlock::Shortage;
use ibfabric::options::DeadlockMode;
use ibfabric::routing::{RoutingConfig, assign_lids};
use ibfabric::session::metrics::{FAMILIES, SweepMetrics};
use ibfabric::session::sweep_record::{CablingCheck, Outcome, SweepRecord};
use ibfabric::session::{DeadlockSettings, repair, route};

/// The dashboard JSON, relative to the repository root.
const DASHBOARD: &str = "opensm-plugin/grafana-dashboard.json";

/// Routed, repaired after two lost cables, the repair rewritten, a failed pass: the records
/// the plugin writes for these passes, as a sweep log.
fn sweep_log() -> Vec<SweepRecord> {
    let mut fabric = common::generated("slimfly:q=5");
    assign_lids(&mut fabric, 2).unwrap();
    let config = RoutingConfig {
        layers: 4,
        ..RoutingConfig::default()
    };
    let settings = DeadlockSettings {
        mode: DeadlockMode::Auto,
        vls: 8,
        shortage: Shortage::Fail,
    };
    let routed = route(fabric.clone(), &config, &settings).unwrap();
    let inter: Vec<usize> = (0..fabric.links().len())
        .filter(|&i| {
            let link = &fabric.links()[i];
            fabric.node(link.a.node).is_switch() && fabric.node(link.b.node).is_switch()
        })
        .collect();
    let lost = [inter[5], inter[60]];
    let damaged = fabric.after_losses(|_| false, |l| lost.contains(&(l.0 as usize)));
    let repaired = repair(&routed, damaged, &config, &settings, false)
        .unwrap()
        .expect("a repair");
    let plan = CablingCheck {
        planned: fabric.links().len(),
        as_planned: fabric.links().len() - lost.len(),
    };
    vec![
        SweepRecord::written(&routed, Outcome::Routed, Duration::from_millis(900), 1e9),
        SweepRecord::written(
            &repaired,
            Outcome::Repaired,
            Duration::from_millis(80),
            1e9 + 60.0,
        )
        .with_cabling(Some(plan)),
        SweepRecord::written(
            &repaired,
            Outcome::Unchanged,
            Duration::from_millis(9),
            1e9 + 70.0,
        ),
        SweepRecord::failed(
            "subnet snapshot: boom",
            Duration::from_millis(2),
            1e9 + 80.0,
        ),
    ]
}

fn log_text(records: &[SweepRecord]) -> String {
    records.iter().map(SweepRecord::line).collect()
}

/// The value of the sample `key` (`name` or `name{labels}`) in an exposition.
fn sample(text: &str, key: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {key}:\n{text}"))
}

#[test]
fn metrics_of_a_sweep_log_are_what_the_library_renders_and_promtool_accepts() {
    let records = sweep_log();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sweeps.jsonl");
    std::fs::write(&log, log_text(&records)).unwrap();
    let out = ibfabric(&["metrics", "--sweep-log", log.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, SweepMetrics::of(&records).render());
    common::promtool::check_metrics(&text, "the metrics of a sweep log");

    let repaired = &records[1];
    assert_eq!(
        sample(
            &text,
            "opensm_layered_routing_passes_total{outcome=\"repaired\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&text, "opensm_layered_repair_routes_changed_total"),
        repaired.routes_changed.unwrap() as f64
    );
    assert_eq!(
        sample(&text, "opensm_layered_repair_cables_lost_total"),
        repaired.lost_cables.unwrap() as f64
    );
    // The failure is the last pass; the repair, rewritten, is the routing in force.
    assert_eq!(
        sample(
            &text,
            "opensm_layered_last_pass_outcome{outcome=\"failed\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(&text, "opensm_layered_last_success_timestamp_seconds"),
        records[2].time
    );
    assert_eq!(
        sample(&text, "opensm_layered_repair_switch_pairs_degraded"),
        repaired.pairs_degraded.unwrap() as f64
    );
    assert_eq!(
        sample(
            &text,
            "opensm_layered_deadlock_scheme{scheme=\"port_pair\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &text,
            "opensm_layered_deadlock_guarantee{guarantee=\"every_sl\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &text,
            "opensm_layered_cabling_cables{state=\"not_as_planned\"}"
        ),
        2.0
    );

    // -o writes the same text into a file.
    let prom = dir.path().join("layered.prom");
    let out = ibfabric(&[
        "metrics",
        "--sweep-log",
        log.to_str().unwrap(),
        "-o",
        prom.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&prom).unwrap(), text);
}

#[test]
fn metrics_of_a_bad_sweep_log_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sweeps.jsonl");
    let good = SweepRecord::failed("x", Duration::ZERO, 1.0).line();
    std::fs::write(
        &log,
        format!("{good}\n{{\"time\": 2.0, \"outcome\": \"done\"}}\n"),
    )
    .unwrap();
    let out = ibfabric(&["metrics", "--sweep-log", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "ibfabric: sweep log {}: line 3: not a sweep record (unknown variant `done`",
            log.display()
        )),
        "{err}"
    );
    assert!(err.contains("one of unchanged, repaired, routed"), "{err}");

    let missing = dir.path().join("missing.jsonl");
    let out = ibfabric(&["metrics", "--sweep-log", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("reading {}", missing.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn metrics_of_an_empty_sweep_log_are_the_counters_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sweeps.jsonl");
    std::fs::write(&log, "").unwrap();
    let out = ibfabric(&["metrics", "--sweep-log", log.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        sample(
            &text,
            "opensm_layered_routing_passes_total{outcome=\"routed\"}"
        ),
        0.0
    );
    assert!(!text.contains("opensm_layered_layers"), "{text}");
    common::promtool::check_metrics(&text, "the metrics of an empty sweep log");
}

/// Every `opensm_layered_*` name in `text`.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("opensm_layered_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

/// Every `expr` of the dashboard's panels (rows and nested panels included).
fn expressions(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", serde_json::Value::String(e)) => out.push(e.clone()),
                    _ => expressions(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| expressions(v, out)),
        _ => {}
    }
}

#[test]
fn metrics_dashboard_shows_every_metric_and_names_no_other() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DASHBOARD);
    let text = std::fs::read_to_string(&path).unwrap();
    let dashboard: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"));
    assert!(dashboard["title"].is_string(), "a title");
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(!panels.is_empty());
    let mut exprs = Vec::new();
    expressions(&dashboard, &mut exprs);
    let known: BTreeSet<String> = FAMILIES.iter().map(|f| f.name.to_string()).collect();
    let mut used = BTreeSet::new();
    for expr in &exprs {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{DASHBOARD}: `{expr}` names no metric");
        for name in names {
            assert!(
                known.contains(&name),
                "{DASHBOARD}: `{expr}`: no metric {name}"
            );
            used.insert(name);
        }
    }
    let unused: Vec<&String> = known.difference(&used).collect();
    assert!(unused.is_empty(), "{DASHBOARD} shows none of {unused:?}");
    // Every panel reads the dashboard's data source variable, so it imports into any Grafana.
    for p in panels.iter().filter(|p| p["type"] != "row") {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{p}");
    }
}

/// The README's table of metrics names every metric the formatter writes.
#[test]
fn metrics_readme_names_every_metric() {
    let readme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let named = metric_names(&std::fs::read_to_string(readme).unwrap());
    for family in FAMILIES {
        assert!(
            named.contains(family.name),
            "README.md does not name {}",
            family.name
        );
    }
    let known: BTreeSet<&str> = FAMILIES.iter().map(|f| f.name).collect();
    let unknown: Vec<&String> = named
        .iter()
        .filter(|n| !known.contains(n.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "README.md names metrics that do not exist: {unknown:?}"
    );
}
