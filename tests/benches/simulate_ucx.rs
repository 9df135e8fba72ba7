//! Layered against minimal routing as an MPI job over UCX uses the layers, on a fully
//! subscribed Slim Fly q = 5 (50 switches, every one of the 200 hosts a rank), under SimGrid's
//! smpirun via `ibfabric simulate` on the core's tables (4 layers; the core's `minimal`
//! algorithm stands in for OpenSM's minhop, whose four LIDs per port are one path on this
//! Moore graph — see BENCHMARKS.md):
//!
//! * layer policies `ucx:2` (UCX's default `UCX_MAX_RNDV_RAILS`) and `ucx:4`: a 1 MiB message
//!   is rendezvous, split evenly over layers 0..K-1; `fixed:0` for reference (everything on
//!   the base LID: UCX without `UCX_IB_LID_PATH_BITS`);
//! * traffic: a random permutation (seed 1), the adversarial pairing (every switch matched to
//!   a switch at maximum distance, host k to host k) and the half shift (host i to host
//!   i + N/2).
//!
//! Run: `cargo bench --bench simulate_ucx` (needs libsimgrid-dev). Prints one Markdown table;
//! `SIMULATE_POLICIES` (comma-separated) replaces the policies.

use std::process::Command;

const FABRIC: &str = "slimfly:q=5";
const ROUTINGS: [&str; 2] = ["layered", "minimal"];
const PATTERNS: [&str; 3] = ["permutation", "adversarial", "half-shift"];

/// One `ibfabric simulate` run; its JSON report, or why it failed.
fn simulate(algorithm: &str, policy: &str, pattern: &str) -> Result<serde_json::Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(["simulate", "--fabric", FABRIC, "--layers", "4"])
        .args(["--algorithm", algorithm, "--layer-policy", policy])
        .args([
            "--pattern",
            pattern,
            "--bytes",
            "1048576",
            "--format",
            "json",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().next().unwrap_or("failed").to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

fn seconds(report: &Result<serde_json::Value, String>) -> Option<f64> {
    report.as_ref().ok()?["simulated_seconds"].as_f64()
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
    let policies =
        std::env::var("SIMULATE_POLICIES").unwrap_or_else(|_| "ucx:2,ucx:4,fixed:0".into());
    let policies: Vec<&str> = policies.split(',').filter(|p| !p.is_empty()).collect();
    println!(
        "| pattern | ranks | message | layer policy | layered | minimal | minimal / layered |"
    );
    println!("|---|---|---|---|---|---|---|");
    for pattern in PATTERNS {
        for policy in &policies {
            let reports: Vec<_> = ROUTINGS
                .iter()
                .map(|alg| simulate(alg, policy, pattern))
                .collect();
            let ranks = reports[0]
                .as_ref()
                .map_or(String::from("?"), |r| r["ranks"].to_string());
            let speedup = match (seconds(&reports[0]), seconds(&reports[1])) {
                (Some(layered), Some(minimal)) if layered > 0.0 => {
                    format!("{:.2}×", minimal / layered)
                }
                _ => String::from("–"),
            };
            println!(
                "| {pattern} | {ranks} | 1 MiB | {policy} | {} | {} | {speedup} |",
                cell(&reports[0]),
                cell(&reports[1])
            );
        }
    }
}
