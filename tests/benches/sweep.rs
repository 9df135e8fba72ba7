//! OpenSM sweep time with the layered plugin against OpenSM's own engines (`minhop`, `dfsssp`,
//! `nue`), side by side on the same simulated fabrics: every engine runs stock OpenSM once
//! (`-o`, LMC 2, QoS on) against a fresh ibsim of the fabric, `SWEEP_RUNS` times (default 3);
//! the medians of
//!
//! * **routing**: from OpenSM's `Entering MASTER state` to its `<engine> tables configured`
//!   line — LID assignment, then the routing engine (and its VL assignment) computing every
//!   table;
//! * **sweep**: from `Entering DISCOVERING state` to `SUBNET UP` — discovery, routing and
//!   programming every switch through the simulator;
//!
//! taken from the timestamps of OpenSM's own log. Fabrics: `SWEEP_FABRICS` (topology specs
//! separated by `;`) or Slim Fly q = 5, 7, 11, 13; `SWEEP_ENGINES` (comma-separated) or all four
//! engines; `SWEEP_LAYERED_THREADS` the plugin's `routing_threads` (default 0: every core).
//!
//! Run: `cargo bench --bench sweep`.

#[path = "../common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::plugin::{plugin_config, with_plugin};
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::io::ibsim;
use ibfabric::topology::TopologySpec;

/// Longest a sweep may take before the engine is reported as not finishing.
const UP_WITHIN_SECS: u64 = 600;

/// Seconds since midnight of an OpenSM log line (`Nov 22 16:25:06 469206 [..] ...`).
fn timestamp(line: &str) -> Option<f64> {
    let mut fields = line.split_whitespace().skip(2);
    let clock = fields.next()?;
    let micros: f64 = fields.next()?.parse().ok()?;
    let mut hms = clock.split(':').map(|f| f.parse::<f64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    Some(h * 3600.0 + m * 60.0 + s + micros / 1e6)
}

/// The time of the first log line containing `what`.
fn first(log: &str, what: &str) -> Option<f64> {
    log.lines().find(|l| l.contains(what)).and_then(timestamp)
}

/// One OpenSM run: (routing seconds, sweep seconds, wall seconds), or why it failed.
fn run(sim: &Ibsim, engine: &str) -> Result<(f64, f64, f64), String> {
    let started = Instant::now();
    let mut options = if engine == "layered" {
        // `SWEEP_LAYERED_THREADS`: the plugin's routing_threads (default: every core).
        let threads = std::env::var("SWEEP_LAYERED_THREADS").unwrap_or_else(|_| "0".into());
        let config = plugin_config(
            sim,
            "layered.yaml",
            &format!("deadlock: auto\nrouting_threads: {threads}\n"),
        );
        with_plugin("qos TRUE\n", Some(&config), true)
    } else {
        let mut options = OpenSmOptions::new(engine, 2);
        options.extra_args = vec!["-Q".into()];
        options
    };
    options.up_within = Duration::from_secs(UP_WITHIN_SECS);
    let sm = OpenSm::try_start(sim, &options).map_err(|why| {
        why.lines()
            .next()
            .unwrap_or("OpenSM failed")
            .trim_end_matches(':')
            .to_string()
    })?;
    let wall = started.elapsed().as_secs_f64();
    let log = sm.log();
    let configured = format!("{engine} tables configured on all switches");
    let master = first(&log, "Entering MASTER state");
    let tables = first(&log, &configured);
    let discovering = first(&log, "Entering DISCOVERING state");
    let up = first(&log, "SUBNET UP");
    match (master, tables, discovering, up) {
        (Some(m), Some(t), Some(d), Some(u)) => Ok((t - m, u - d, wall)),
        _ => Err(log
            .lines()
            .filter(|l| l.contains("ERR") || l.contains("tables configured"))
            .take(3)
            .collect::<Vec<_>>()
            .join(" | ")),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let fabrics = std::env::var("SWEEP_FABRICS")
        .unwrap_or_else(|_| "slimfly:q=5;slimfly:q=7;slimfly:q=11;slimfly:q=13".into());
    // Build the plugin first, so that no run's wall time includes the build.
    common::plugin::plugin_dir();
    let runs: usize = std::env::var("SWEEP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let engines =
        std::env::var("SWEEP_ENGINES").unwrap_or_else(|_| "layered,minhop,dfsssp,nue".into());
    println!("| fabric | switches | LIDs (LMC 2) | engine | routing | sweep | wall |");
    println!("|---|---|---|---|---|---|---|");
    for spec in fabrics.split(';').filter(|s| !s.is_empty()) {
        let spec: TopologySpec = spec.parse().expect("topology spec");
        let fabric = spec.build().expect("valid spec");
        let summary = fabric.summary();
        let lids = summary.hosts * 4 + summary.switches;
        let net = ibsim::write_net(&fabric);
        for engine in engines.split(',').filter(|e| !e.is_empty()) {
            let mut routing = Vec::new();
            let mut sweep = Vec::new();
            let mut wall = Vec::new();
            let mut failure = None;
            for _ in 0..runs {
                let sim = Ibsim::start(&net);
                match run(&sim, engine) {
                    Ok((r, s, w)) => {
                        routing.push(r);
                        sweep.push(s);
                        wall.push(w);
                    }
                    Err(why) => {
                        failure = Some(why);
                        break;
                    }
                }
            }
            match failure {
                None => println!(
                    "| {spec} | {} | {lids} | {engine} | {:.3} s | {:.2} s | {:.2} s |",
                    summary.switches,
                    median(routing),
                    median(sweep),
                    median(wall)
                ),
                Some(why) => println!(
                    "| {spec} | {} | {lids} | {engine} | failed: {why} | | |",
                    summary.switches
                ),
            }
        }
    }
}
