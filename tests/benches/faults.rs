//! Benchmark: the fault sequence on the real stack, side by side. Stock OpenSM 3.3.23 under
//! ibsim (LMC 2, `qos TRUE`, daemon mode) routes a Slim Fly q = 7 with the layered plugin
//! (default configuration) and with its own `minhop`, `dfsssp` and `nue`; the same seeded
//! switch-to-switch cables are cut cumulatively (1, 2, 5, 10), then every cable of one switch,
//! then everything is plugged back.
//! After every step the fabric is read back (`ibnetdiscover`, `ibroute` of every switch,
//! OpenSM's SL-to-VL dump) and judged:
//!
//! - **re-route time**: from OpenSM's first trap of the step to its last "tables configured"
//!   line (discovery and routing, as the admin sees it in the log);
//! - **churn**: forwarding entries changed against entries whose route crossed a lost cable;
//! - **complete**: every pair of the remaining subnet routed in every layer;
//! - **every SL**: the verifier's verdict on the read-back tables with every route on every SL
//!   (what UCX and verbs programs with their own SL get; path SLs are not queried here).
//!
//! - **routing step** (layered only): the plugin's own time to route and hand over its tables,
//!   from its log line `routed … in N ms` (the part of the re-route time OpenSM's lock holds).
//! - **passes**: OpenSM's "tables configured" lines of the step (the plugin stages a change in
//!   a drop pass and an install pass; `layered-at-once` is the plugin with
//!   `staged_transitions: false`, writing every change at once as OpenSM's engines do, and
//!   `layered-unspared` with `spare_working_routes: false`, staging without the verifier);
//! - **LFT blocks**: 64-entry blocks sent, from the plugin's log lines for staged passes (what
//!   differed from the switches' confirmed tables), else the blocks that differ between the
//!   read-backs before and after the step (OpenSM sends only those);
//! - **SL-to-VL tables**: sent (of asked for), from the plugin's log lines after each pass
//!   (OpenSM asks the plugin for every switch port pair's and end port's table and sends those
//!   the port does not hold), else the tables that differ between the SL-to-VL dumps before
//!   and after the step (what an engine without `update_sl2vl` makes OpenSM send at most);
//! - **transition** (single-pass engines): the transition verifier on the read-backs before and
//!   after the step, with every route on every SL: the destination LIDs some update order
//!   loops, and whether every mixture is deadlock-free. A staged change is proven per pass by
//!   `tests/plugin_transition.rs`, which reads each pass back.
//!
//! `cargo bench --bench faults [engine] [fabric]` prints one Markdown row per engine and step
//! (fabric: a topology spec, `slimfly:q=7` if not given).

#[path = "../common/mod.rs"]
mod common;

use std::time::Duration;

use common::plugin::{wait_configured, with_plugin};
use common::readback::{ReadBack, churn};
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::analysis::{self, Options};
use ibfabric::io::ibsim;
use ibfabric::rng::Rng;
use ibfabric::topology::{Link, PortRef};

/// OpenSM's line when an engine's tables are in use ("minhop tables configured ...").
const CONFIGURED: &str = "tables configured on all switches";
/// The line of a trap that starts a step's sweeps.
const TRAP: &str = "Received Generic Notice";

fn options(engine: &str, dir: &std::path::Path) -> OpenSmOptions {
    let mut options = if engine == "layered" {
        with_plugin("qos TRUE\n", None, false)
    } else if let Some(text) = match engine {
        "layered-at-once" => Some("staged_transitions: false\n"),
        "layered-unspared" => Some("spare_working_routes: false\n"),
        _ => None,
    } {
        let config = dir.join("layered.yaml");
        std::fs::write(&config, text).unwrap();
        with_plugin("qos TRUE\n", config.to_str(), false)
    } else {
        let mut o = OpenSmOptions::new(engine, 2);
        o.once = false;
        o.config = Some("qos TRUE\nforce_log_flush TRUE\n".into());
        o
    };
    options.up_within = Duration::from_secs(1800);
    options
}

/// Waits until OpenSM configured tables more than `before` times and kept quiet for 4 s.
fn settled(sm: &OpenSm, before: usize) -> usize {
    wait_configured(sm, before, CONFIGURED, Duration::from_secs(600))
}

/// Seconds of the day of an OpenSM log line (`Nov 24 02:40:34 166527 [...] ...`).
fn stamp(line: &str) -> Option<f64> {
    let mut words = line.split_whitespace().skip(2);
    let clock: Vec<f64> = words
        .next()?
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let micros: f64 = words.next()?.parse().ok()?;
    Some(clock[0] * 3600.0 + clock[1] * 60.0 + clock[2] + micros / 1e6)
}

/// From the first trap to the last "tables configured" line of `log` (a step's part).
fn reroute_time(log: &str) -> Option<f64> {
    let first = log.lines().find(|l| l.contains(TRAP)).and_then(stamp)?;
    let last = log
        .lines()
        .rfind(|l| l.contains(CONFIGURED))
        .and_then(stamp)?;
    Some(last - first)
}

/// The plugin's last routing step of a log section: `routed … in N ms (core …)`.
fn routing_step_ms(log: &str) -> Option<u64> {
    let line = log.lines().rfind(|l| l.contains("layered: routed"))?;
    let (_, rest) = line.split_once(" in ")?;
    rest.split_whitespace().next()?.parse().ok()
}

fn run(engine: &str, spec: &str) {
    let generated = common::generated(spec);
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = OpenSm::start(&sim, &options(engine, sim.dir()));
    let mut routings = settled(&sm, 0);
    let first = sm.log();
    if let Some(ms) = routing_step_ms(&first) {
        println!(
            "| {engine} | first routing | | | | {} | | {ms} ms | | | |",
            sl2vl_sent(&first).map_or(String::new(), |(sent, asked)| format!("{sent} of {asked}"))
        );
    }
    let mut previous = ReadBack::read(&sim, &sm);
    let inter: Vec<&Link> = common::switch_cables(&generated);
    let end = |p| common::console_port(&generated, p);
    // The cuts of tests/plugin_sweeps.rs's fault sequence.
    let mut rng = Rng::new(7);
    let mut cut: Vec<&Link> = Vec::new();
    let victim = generated.switches().nth(11).unwrap();
    for (step, cables) in [
        ("1 cable", 1usize),
        ("2 cables", 2),
        ("5 cables", 5),
        ("10 cables", 10),
        ("10 cables + 1 switch", 11),
        ("everything back", 0),
    ] {
        let log_before = sm.log().len();
        if cables == 0 {
            for l in &cut {
                sim.console(&format!("Link {} {}", end(l.a), end(l.b)));
            }
            for (port, peer) in generated.neighbours(victim) {
                let here = end(PortRef { node: victim, port });
                sim.console(&format!("Link {here} {}", end(peer)));
            }
        } else if cables == 11 {
            for (port, _) in generated.neighbours(victim) {
                sim.console(&format!("Unlink {}", end(PortRef { node: victim, port })));
            }
        } else {
            while cut.len() < cables {
                let l = inter[rng.below(inter.len() as u64) as usize];
                if !cut.contains(&l) {
                    sim.console(&format!("Unlink {}", end(l.a)));
                    cut.push(l);
                }
            }
        }
        routings = settled(&sm, routings);
        let log = sm.log();
        let time = reroute_time(&log[log_before..]);
        let step_ms = routing_step_ms(&log[log_before..]);
        let now = ReadBack::read(&sim, &sm);
        let report = analysis::analyze(&now.fabric, &now.lids, &now.tables, &Options::default());
        let verdict = now.verify_every_sl();
        let (changed, crossing) = churn(&previous, &now);
        let step_log = &log[log_before..];
        let passes = step_log.matches(CONFIGURED).count();
        let staged_blocks: Vec<usize> = step_log
            .lines()
            .filter(|l| l.contains("staged change"))
            .filter_map(|l| {
                l.split(" LFT blocks")
                    .next()?
                    .rsplit(' ')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        let (blocks, transition) = if staged_blocks.is_empty() {
            let verdict = now.verify_change_from(&previous);
            (
                changed_blocks(&previous, &now),
                format!(
                    "{} looping LIDs, {}",
                    verdict.looping_lids,
                    if verdict.mixtures.is_deadlock_free() {
                        "mixtures deadlock-free"
                    } else {
                        "mixtures cycle"
                    }
                ),
            )
        } else {
            (staged_blocks.iter().sum(), "staged".to_string())
        };
        let sl2vl = match sl2vl_sent(step_log) {
            Some((sent, asked)) => format!("{sent} of {asked}"),
            None => format!("{} differ", changed_sl2vl(&previous, &now)),
        };
        println!(
            "| {engine} | {step} | {} | {passes} | {blocks} | {sl2vl} | {transition} | {} | {changed} / {crossing} ({}) | {} ({} layers) | {} |",
            time.map_or("—".into(), |t| format!("{:.0} ms", t * 1e3)),
            step_ms.map_or("—".into(), |t| format!("{t} ms")),
            if crossing == 0 {
                "no loss".to_string()
            } else {
                format!("{:.2}", changed as f64 / crossing as f64)
            },
            if report.is_complete() { "yes" } else { "NO" },
            report.layers,
            if verdict.is_deadlock_free() {
                "deadlock-free"
            } else {
                "cycle"
            }
        );
        previous = now;
    }
}

/// The SL-to-VL tables the plugin's log lines of `log` say OpenSM sent and asked for, summed
/// (`SL-to-VL tables: S of A sent ...`); `None` without such a line.
fn sl2vl_sent(log: &str) -> Option<(u64, u64)> {
    let counts: Vec<(u64, u64)> = log
        .lines()
        .filter_map(|l| {
            let rest = l.split_once("SL-to-VL tables: ")?.1;
            let mut words = rest.split_whitespace();
            let sent = words.next()?.parse().ok()?;
            let asked = words.nth(1)?.parse().ok()?;
            Some((sent, asked))
        })
        .collect();
    (!counts.is_empty()).then(|| {
        let sent = counts.iter().map(|c| c.0).sum();
        (sent, counts.iter().map(|c| c.1).sum())
    })
}

/// SL-to-VL tables (the port pairs of `after`'s switches, port 0 and ports with a cable, and
/// its end ports) that differ between two read-backs.
fn changed_sl2vl(before: &ReadBack, after: &ReadBack) -> usize {
    let (_, old) = before.onto(&after.fabric);
    let new = &after.sl2vl;
    let switches: usize = after
        .fabric
        .switches()
        .map(|s| {
            // Port 0 and the ports with a cable: OpenSM programs no table of a port that is
            // down.
            let ports: Vec<u8> = (0..=after.fabric.node(s).num_ports())
                .filter(|&port| port == 0 || after.fabric.peer(PortRef { node: s, port }).is_some())
                .collect();
            let pairs = ports
                .iter()
                .flat_map(|&i| ports.iter().map(move |&o| (i, o)));
            pairs
                .filter(|&(i, o)| old.switch_row(s, i, o) != new.switch_row(s, i, o))
                .count()
        })
        .sum();
    let ports = new
        .ports()
        .iter()
        .filter(|(port, row)| old.port_row(*port) != row)
        .count();
    switches + ports
}

/// 64-entry LFT blocks that differ between two read-backs (over the switches of `after`).
fn changed_blocks(before: &ReadBack, after: &ReadBack) -> usize {
    let (old, _) = before.onto(&after.fabric);
    after
        .fabric
        .switches()
        .map(|s| {
            let (a, b) = (old.table(s), after.tables.table(s));
            let len = a.len().max(b.len());
            (0..len.div_ceil(64))
                .filter(|block| {
                    (block * 64..(block * 64 + 64).min(len))
                        .any(|lid| a.get(lid).unwrap_or(&0xFF) != b.get(lid).unwrap_or(&0xFF))
                })
                .count()
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let filter = args.first().filter(|a| a.as_str() != "all");
    let spec = args.get(1).map_or("slimfly:q=7", String::as_str);
    println!("{spec}\n");
    println!(
        "| engine | step | re-route time | passes | LFT blocks | SL-to-VL tables | transition | routing step | entries changed / had to (churn) | complete | every SL |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for engine in [
        "layered",
        "layered-unspared",
        "layered-at-once",
        "minhop",
        "dfsssp",
        "nue",
    ] {
        if filter.is_some_and(|f| f != engine) {
            continue;
        }
        run(engine, spec);
    }
}
