use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::rng::Rng;
use crate::session::sweep_record::{CablingCheck, PrefixFigure};

/// The samples of an exposition, keyed `name{labels}` as written, after checking the format's
/// rules this module relies on: every sample's family has its HELP and TYPE lines before it,
/// once, of a known family of the right kind; names and label values are well formed.
fn samples(text: &str) -> BTreeMap<String, f64> {
    assert!(text.ends_with('\n'), "ends in a newline");
    let mut described: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            let entry = described.entry(name).or_default();
            assert!(!entry.0, "HELP of {name} twice");
            entry.0 = true;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            let family = FAMILIES.iter().find(|f| f.name == name).unwrap();
            let expected = match family.kind {
                Kind::Counter => "counter",
                Kind::Gauge => "gauge",
            };
            assert_eq!(kind, expected, "{name}");
            let entry = described.entry(name).or_default();
            assert!(entry.0 && !entry.1, "TYPE of {name} after one HELP");
            entry.1 = true;
        } else {
            let (key, value) = line.rsplit_once(' ').unwrap();
            let name = key.split('{').next().unwrap();
            assert_eq!(described.get(name), Some(&(true, true)), "{line}");
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            let value: f64 = value.parse().unwrap();
            assert!(value.is_finite(), "{line}");
            assert!(out.insert(key.to_string(), value).is_none(), "{line} twice");
        }
    }
    out
}

fn record(outcome: Outcome, time: f64) -> SweepRecord {
    let mut r = SweepRecord::failed("", Duration::from_millis(12), time);
    r.outcome = outcome;
    r.error = None;
    if outcome != Outcome::Failed {
        r.switches = 50;
        r.lids = 200;
        r.layers = 4;
        r.layers_requested = Some(4);
        r.ms = 130;
        r.core_ms = 90;
        r.scheme = Some("port_pair".into());
        r.vls = Some(8);
        r.guarantee = Some(Guarantee::EverySl.to_string());
        r.prefix_balance = vec![
            PrefixFigure {
                layers: 1,
                max_over_mean: 1.25,
            },
            PrefixFigure {
                layers: 2,
                max_over_mean: 1.125,
            },
        ];
    }
    r
}

fn repaired(time: f64, lost: usize, changed: u64, had_to: u64) -> SweepRecord {
    let mut r = record(Outcome::Repaired, time);
    r.lost_cables = Some(lost);
    r.lost_switches = Some(0);
    r.gained_cables = Some(0);
    r.gained_switches = Some(0);
    r.routes_changed = Some(changed);
    r.routes_had_to = Some(had_to);
    r.pairs_degraded = Some(had_to / 2);
    r.pairs_below_target = Some(had_to / 4);
    r
}

#[test]
fn before_any_pass_only_the_counters_are_written_at_zero() {
    let s = samples(&SweepMetrics::new().render());
    for o in Outcome::ALL {
        assert_eq!(
            s[&format!(
                "opensm_layered_routing_passes_total{{outcome=\"{}\"}}",
                o.name()
            )],
            0.0
        );
    }
    assert!(
        s.keys()
            .all(|k| k.split('{').next().unwrap().ends_with("_total")),
        "{s:?}"
    );
}

#[test]
fn a_repair_moves_the_counters_by_its_record_and_a_reuse_does_not() {
    let log = [
        record(Outcome::Routed, 1.0),
        repaired(2.0, 3, 40, 45),
        record(Outcome::Unchanged, 3.0),
        repaired(4.0, 1, 7, 9),
    ];
    // The reuse carries the repair it rewrote, as the plugin's record of it does.
    let mut log = log.to_vec();
    let carried = log[1].clone();
    log[2] = SweepRecord {
        outcome: Outcome::Unchanged,
        time: 3.0,
        ..carried
    };
    let s = samples(&SweepMetrics::of(&log).render());
    let repairs: Vec<&SweepRecord> = log
        .iter()
        .filter(|r| r.outcome == Outcome::Repaired)
        .collect();
    let sum = |f: &dyn Fn(&SweepRecord) -> u64| repairs.iter().map(|r| f(r)).sum::<u64>() as f64;
    assert_eq!(
        s["opensm_layered_repair_routes_changed_total"],
        sum(&|r| r.routes_changed.unwrap())
    );
    assert_eq!(
        s["opensm_layered_repair_routes_had_to_change_total"],
        sum(&|r| r.routes_had_to.unwrap())
    );
    assert_eq!(
        s["opensm_layered_repair_cables_lost_total"],
        sum(&|r| r.lost_cables.unwrap() as u64)
    );
    assert_eq!(
        s["opensm_layered_routing_passes_total{outcome=\"repaired\"}"],
        repairs.len() as f64
    );
    // The gauges are those of the last repair.
    let last = &log[3];
    assert_eq!(
        s["opensm_layered_repair_routes_changed"],
        last.routes_changed.unwrap() as f64
    );
    assert_eq!(
        s["opensm_layered_repair_churn_ratio"],
        last.routes_changed.unwrap() as f64 / last.routes_had_to.unwrap() as f64
    );
    assert_eq!(
        s["opensm_layered_repair_switch_pairs_below_target"],
        last.pairs_below_target.unwrap() as f64
    );
    let total_ms: u128 = log.iter().map(|r| r.ms).sum();
    assert_eq!(
        s["opensm_layered_routing_seconds_total"],
        total_ms as f64 / 1000.0
    );
}

#[test]
fn a_failed_pass_keeps_the_routing_in_force_and_is_the_last_outcome() {
    let mut routed = record(Outcome::Routed, 10.0);
    routed.scheme = Some("dfsssp".into());
    routed.guarantee = Some(Guarantee::PathSlOnly.to_string());
    routed.vls = Some(3);
    let failed = SweepRecord::failed("boom", Duration::from_millis(5), 11.0);
    let s = samples(&SweepMetrics::of([&routed, &failed]).render());
    assert_eq!(s["opensm_layered_last_pass_timestamp_seconds"], failed.time);
    assert_eq!(
        s["opensm_layered_last_success_timestamp_seconds"],
        routed.time
    );
    assert_eq!(
        s["opensm_layered_last_pass_outcome{outcome=\"failed\"}"],
        1.0
    );
    assert_eq!(
        s["opensm_layered_last_pass_outcome{outcome=\"routed\"}"],
        0.0
    );
    assert_eq!(s["opensm_layered_last_pass_duration_seconds"], 0.005);
    assert_eq!(s["opensm_layered_deadlock_scheme{scheme=\"dfsssp\"}"], 1.0);
    assert_eq!(
        s["opensm_layered_deadlock_scheme{scheme=\"port_pair\"}"],
        0.0
    );
    assert_eq!(
        s["opensm_layered_deadlock_guarantee{guarantee=\"path_sl_only\"}"],
        1.0
    );
    assert_eq!(
        s["opensm_layered_deadlock_guarantee{guarantee=\"every_sl\"}"],
        0.0
    );
    assert_eq!(s["opensm_layered_vls"], 3.0);
    assert_eq!(s["opensm_layered_layers"], routed.layers as f64);
    assert_eq!(
        s["opensm_layered_prefix_max_over_mean_ratio{layers=\"2\"}"],
        routed.prefix_balance[1].max_over_mean
    );
    // A full routing in force has repaired nothing.
    assert_eq!(s["opensm_layered_repair_routes_changed"], 0.0);
    assert_eq!(s["opensm_layered_repair_churn_ratio"], 0.0);
}

#[test]
fn the_guarantee_label_reads_every_line_a_guarantee_prints() {
    assert_eq!(
        guarantee_label(Some(&Guarantee::EverySl.to_string())),
        Some("every_sl")
    );
    assert_eq!(
        guarantee_label(Some(&Guarantee::PathSlOnly.to_string())),
        Some("path_sl_only")
    );
    assert_eq!(guarantee_label(None), Some("none"));
    assert_eq!(guarantee_label(Some("something else")), None);
}

#[test]
fn the_cabling_check_is_the_last_one_recorded() {
    let checked = record(Outcome::Routed, 1.0).with_cabling(Some(CablingCheck {
        planned: 100,
        as_planned: 97,
    }));
    let unchecked = record(Outcome::Unchanged, 2.0);
    let s = samples(&SweepMetrics::of([&checked, &unchecked]).render());
    assert_eq!(
        s["opensm_layered_cabling_cables{state=\"as_planned\"}"],
        97.0
    );
    assert_eq!(
        s["opensm_layered_cabling_cables{state=\"not_as_planned\"}"],
        3.0
    );
    assert_eq!(s["opensm_layered_cabling_check_timestamp_seconds"], 1.0);
    let s = samples(&SweepMetrics::of([&unchecked]).render());
    assert!(!s.keys().any(|k| k.contains("cabling")), "{s:?}");
}

#[test]
fn label_values_and_numbers_are_spelled_as_the_format_asks() {
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    assert_eq!(number(f64::INFINITY), "+Inf");
    assert_eq!(number(f64::NEG_INFINITY), "-Inf");
    assert_eq!(number(f64::NAN), "NaN");
    assert_eq!(number(3.0), "3");
    assert_eq!(number(1_764_270_000.25), "1764270000.25");
}

/// Random logs: the passes by outcome count the records, the counters are the sums over the
/// repairs, and the gauges of the routing in force are those of the last pass that wrote tables.
#[test]
fn counters_and_gauges_agree_with_random_logs() {
    let mut rng = Rng::new(7);
    for case in 0..200 {
        let len = rng.below(12) as usize;
        let log: Vec<SweepRecord> = (0..len)
            .map(|i| {
                let time = (case * 100 + i) as f64;
                let outcome = Outcome::ALL[rng.below(5) as usize];
                if outcome == Outcome::Repaired {
                    let had_to = rng.below(50);
                    repaired(
                        time,
                        1 + rng.below(4) as usize,
                        rng.below(had_to + 1),
                        had_to,
                    )
                } else {
                    record(outcome, time)
                }
            })
            .collect();
        let s = samples(&SweepMetrics::of(&log).render());
        let mut total = 0.0;
        for o in Outcome::ALL {
            let n = s[&format!(
                "opensm_layered_routing_passes_total{{outcome=\"{}\"}}",
                o.name()
            )];
            assert_eq!(n, log.iter().filter(|r| r.outcome == o).count() as f64);
            total += n;
        }
        assert_eq!(total, len as f64);
        let lost: usize = log
            .iter()
            .filter(|r| r.outcome == Outcome::Repaired)
            .map(|r| r.lost_cables.unwrap())
            .sum();
        assert_eq!(s["opensm_layered_repair_cables_lost_total"], lost as f64);
        match log.iter().rev().find(|r| r.outcome != Outcome::Failed) {
            Some(r) => {
                assert_eq!(s["opensm_layered_last_success_timestamp_seconds"], r.time);
                assert_eq!(
                    s["opensm_layered_repair_routes_had_to_change"],
                    r.routes_had_to.unwrap_or(0) as f64
                );
                assert!(s["opensm_layered_repair_churn_ratio"] <= 1.0);
            }
            None => assert!(!s.contains_key("opensm_layered_layers")),
        }
    }
}

#[test]
fn every_family_name_is_unique_and_counters_end_in_total() {
    for (i, f) in FAMILIES.iter().enumerate() {
        assert!(f.name.starts_with("opensm_layered_"), "{}", f.name);
        assert_eq!(
            f.kind == Kind::Counter,
            f.name.ends_with("_total"),
            "{}",
            f.name
        );
        assert!(FAMILIES[..i].iter().all(|g| g.name != f.name), "{}", f.name);
        assert!(!f.help.is_empty() && !f.help.contains('\n'), "{}", f.name);
    }
}

fn staged(kind: PassKind, dropped_working: usize, blocks: usize, time: f64) -> SweepRecord {
    let mut r = record(Outcome::Unchanged, time);
    r.pass = Some(crate::session::PassFigures {
        kind,
        written: 10,
        dropped: dropped_working,
        dropped_working,
        moved: 0,
        blocks,
        trees_shrunk: dropped_working / 2,
    });
    r
}

#[test]
fn staged_passes_are_counted_by_kind_with_their_dropped_routes_and_blocks() {
    let log = [
        staged(PassKind::Drop, 7, 30, 1.0),
        staged(PassKind::Lanes, 0, 0, 2.0),
        staged(PassKind::Install, 0, 41, 3.0),
        staged(PassKind::Drop, 2, 5, 4.0),
    ];
    let s = samples(&SweepMetrics::of(&log).render());
    assert_eq!(s["opensm_layered_staged_passes_total{kind=\"drop\"}"], 2.0);
    assert_eq!(s["opensm_layered_staged_passes_total{kind=\"lanes\"}"], 1.0);
    assert_eq!(
        s["opensm_layered_staged_passes_total{kind=\"install\"}"],
        1.0
    );
    assert_eq!(
        s["opensm_layered_staged_dropped_working_entries_total"],
        9.0
    );
    assert_eq!(s["opensm_layered_staged_tree_entries_shrunk_total"], 4.0);
    assert_eq!(s["opensm_layered_lft_blocks_total"], 76.0);
}

#[test]
fn without_staged_passes_their_families_are_left_out() {
    let text = SweepMetrics::of(&[record(Outcome::Routed, 1.0)]).render();
    assert!(!text.contains("opensm_layered_staged"), "{text}");
    assert!(!text.contains("opensm_layered_lft_blocks"), "{text}");
}

/// The SL-to-VL tables of a pass come on a line after its record: the sums are the same
/// whether the plugin counts them as they come or `ibfabric metrics` reads the log, and the
/// families are left out before any count.
#[test]
fn sl2vl_tables_are_summed_from_the_lines_after_their_records() {
    use crate::session::sweep_record::{Sl2VlCount, Sl2VlLine, parse_sweep_log};
    let passes = [
        (record(Outcome::Routed, 1.0), Some((120, 400))),
        (record(Outcome::Unchanged, 2.0), None),
        (record(Outcome::Failed, 3.0), Some((0, 400))),
        (record(Outcome::Repaired, 4.0), Some((9, 400))),
    ];
    let mut live = SweepMetrics::new();
    let mut log = String::new();
    for (r, tables) in &passes {
        live.observe(r);
        log.push_str(&r.line());
        if let Some((sent, asked)) = *tables {
            let tables = Sl2VlCount { sent, asked };
            live.observe_sl2vl(tables);
            let line = Sl2VlLine {
                time: r.time + 0.5,
                sl2vl_tables: tables,
            };
            log.push_str(&line.line());
        }
    }
    let read = SweepMetrics::of(&parse_sweep_log(&log).unwrap()).render();
    assert_eq!(read, live.render());
    let s = samples(&read);
    assert_eq!(s["opensm_layered_sl2vl_tables_sent_total"], 129.0);
    assert_eq!(s["opensm_layered_sl2vl_tables_asked_total"], 1200.0);
    let none = SweepMetrics::of(&[record(Outcome::Routed, 1.0)]).render();
    assert!(!none.contains("opensm_layered_sl2vl"), "{none}");
}
