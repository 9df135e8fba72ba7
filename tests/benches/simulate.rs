//! Simulated collectives on the tables OpenSM really programs: Slim Fly q = 5 (the deployment
//! paper's machine, 50 switches, 200 hosts) in ibsim, routed by stock OpenSM's `minhop` and
//! `dfsssp` (LMC 2: four LIDs per port, as our four layers) and by the layered plugin; each
//! `opensm-lfts.dump` read back and simulated with `ibfabric simulate --lfts` under SimGrid's
//! smpirun:
//!
//! * a random permutation and the adversarial switch pairing on all 200 hosts (1 MiB), under
//!   every layer policy of `SIMULATE_POLICIES` (default `round-robin,fixed:0,parallel`);
//! * MPI_Alltoall on 100 ranks, two hosts of every switch (16 KiB per pair; the full 200 ranks
//!   do not finish here, see BENCHMARKS.md), round robin.
//!
//! Run: `cargo bench --bench simulate` (needs ibsim, OpenSM and libsimgrid-dev). Prints one
//! Markdown table; `SIMULATE_SKIP_ALLTOALL=1` leaves the all-to-all out.

#[path = "../common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use common::plugin::with_plugin;
use common::readback::wait_for_dump;
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::io::ibsim;

const FABRIC: &str = "slimfly:q=5";
const ENGINES: [&str; 3] = ["layered", "minhop", "dfsssp"];

/// What OpenSM with `engine` programs into a fresh ibsim of `net`: its `opensm-lfts.dump`.
fn tables_of(net: &str, engine: &str) -> String {
    let sim = Ibsim::start(net);
    let options = if engine == "layered" {
        with_plugin("", None, true)
    } else {
        OpenSmOptions::new(engine, 2)
    };
    let sm = OpenSm::start(&sim, &options);
    let configured = format!("{engine} tables configured on all switches");
    assert!(
        sm.log().contains(&configured),
        "{engine}: OpenSM did not use its tables:\n{}",
        sm.log()
    );
    wait_for_dump(&sm, "opensm-lfts.dump")
}

/// Two hosts of every switch, by name: the all-to-all's 100 ranks.
fn two_per_switch() -> String {
    let fabric = common::generated(FABRIC);
    let mut out = String::new();
    for s in fabric.switches() {
        let hosts = fabric
            .neighbours(s)
            .map(|(_, peer)| peer.node)
            .filter(|&n| !fabric.node(n).is_switch());
        for h in hosts.take(2) {
            out += &fabric.node(h).name;
            out.push('\n');
        }
    }
    out
}

/// One `ibfabric simulate` run; its JSON report, or why it failed.
fn simulate(lfts: &Path, args: &[&str]) -> Result<serde_json::Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(["simulate", "--fabric", FABRIC, "--lfts"])
        .arg(lfts)
        .args(args)
        .args(["--format", "json"])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().next().unwrap_or("failed").to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// A table cell: simulated time, Gb/s per rank and wall time.
fn cell(report: &Result<serde_json::Value, String>) -> String {
    match report {
        Ok(r) => {
            let t = r["simulated_seconds"].as_f64().unwrap_or(f64::NAN);
            let gbps = r["effective_bandwidth_gbps"].as_f64().unwrap_or(f64::NAN);
            let wall = r["wall_seconds"].as_f64().unwrap_or(f64::NAN);
            format!("{:.1} µs, {gbps:.1} Gb/s ({wall:.0} s)", t * 1e6)
        }
        Err(why) => format!("failed: {why}"),
    }
}

fn main() {
    let policies = std::env::var("SIMULATE_POLICIES")
        .unwrap_or_else(|_| "round-robin,fixed:0,parallel".into());
    let policies: Vec<&str> = policies.split(',').filter(|p| !p.is_empty()).collect();
    let skip_alltoall = std::env::var_os("SIMULATE_SKIP_ALLTOALL").is_some();
    common::plugin::plugin_dir();
    let dir = tempfile::tempdir().expect("scratch dir");
    let net = ibsim::write_net(&common::generated(FABRIC));
    let tables: Vec<_> = ENGINES
        .iter()
        .map(|engine| {
            let path = dir.path().join(format!("{engine}.lfts"));
            std::fs::write(&path, tables_of(&net, engine)).expect("write the dump");
            eprintln!("{engine}: tables read back");
            path
        })
        .collect();
    let hosts = dir.path().join("two-per-switch.hosts");
    std::fs::write(&hosts, two_per_switch()).expect("write the hosts");

    println!(
        "| pattern | ranks | message | layer policy | {} |",
        ENGINES.join(" | ")
    );
    println!("|---|---|---|---|{}", "---|".repeat(ENGINES.len()));
    for pattern in ["permutation", "adversarial"] {
        for policy in &policies {
            let cells: Vec<String> = tables
                .iter()
                .map(|t| {
                    let args = [
                        "--pattern",
                        pattern,
                        "--bytes",
                        "1048576",
                        "--layer-policy",
                        policy,
                    ];
                    cell(&simulate(t, &args))
                })
                .collect();
            println!(
                "| {pattern} | 200 | 1 MiB | {policy} | {} |",
                cells.join(" | ")
            );
        }
    }
    if !skip_alltoall {
        let hosts = hosts.to_str().expect("utf-8 path");
        let cells: Vec<String> = tables
            .iter()
            .map(|t| {
                let args = [
                    "--pattern",
                    "alltoall",
                    "--bytes",
                    "16384",
                    "--hosts",
                    hosts,
                    "--layer-policy",
                    "round-robin",
                ];
                cell(&simulate(t, &args))
            })
            .collect();
        println!(
            "| MPI_Alltoall | 100 | 16 KiB | round-robin | {} |",
            cells.join(" | ")
        );
    }
}
