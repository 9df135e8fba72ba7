//! Benchmark: the throughput of each prefix of layers (what MPI traffic split evenly over
//! layers 0..K − 1 gets) of the layered routing — made deadlock-free as the plugin's default
//! does it, lanes by port pair with unimodal routes — and of minimal routing, on Slim Flys.
//!
//! `cargo bench --bench prefix` prints one Markdown row per (fabric, layers, algorithm, K):
//! all-to-all, random permutations (mean / min of 20), adversarial farthest-switch
//! permutations (mean of 5), the exact worst permutation, each also as a ratio to layer 0
//! alone on the same tables, and the time of the whole prefix analysis.
//! `cargo bench --bench prefix -- q=11` runs the cases whose "spec Llayers" contains the
//! argument (q = 11 is left out by default: minutes of routing).

#[path = "measure.rs"]
mod measure;

use std::time::Instant;

use ibfabric::Fabric;
use ibfabric::analysis::{Options, PrefixOptions, analyze};
use ibfabric::deadlock::{SchemeChoice, Shortage, route_deadlock_free};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{
    Algorithm, ForwardingTables, LidTable, PathLengths, RoutingConfig, assign_lids, route_fabric,
};
use ibfabric::topology::TopologySpec;

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut cases = vec![
        ("slimfly:q=5", 4_usize),
        ("slimfly:q=5", 8),
        ("slimfly:q=7", 4),
    ];
    if filter.is_some() {
        cases.push(("slimfly:q=11", 4));
    }
    println!(
        "| fabric | layers | algorithm | K | all-to-all | random mean / min | adversarial | worst perm | ratio to layer 0 (a2a / random / adv / worst) | worst: cables solved | worst: time | analysis |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (spec, layers) in cases {
        if !measure::selects(filter.as_deref(), spec, layers) {
            continue;
        }
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
        for name in ["layered", "minimal"] {
            let (lids, tables) = routed(&fabric, layers, name);
            let started = Instant::now();
            let options = Options {
                prefix: Some(PrefixOptions::default()),
                ..Options::default()
            };
            let report = analyze(&fabric, &lids, &tables, &options);
            let seconds = started.elapsed().as_secs_f64();
            let prefix = report.prefix.expect("asked for");
            let first = &prefix.prefixes[0];
            for p in &prefix.prefixes {
                let worst = p.worst.unwrap_or(f64::NAN);
                let (solved, cables) = p.worst_cables_solved.unwrap_or_default();
                println!(
                    "| {spec} | {layers} | {name} | {} | {:.3} | {:.3} / {:.3} | {:.3} | {:.3} | {:.2} / {:.2} / {:.2} / {:.2} | {solved} of {cables} | {:.2} s | {seconds:.2} s |",
                    p.layers,
                    p.all_to_all,
                    p.random_mean,
                    p.random_min,
                    p.adversarial_mean,
                    worst,
                    p.all_to_all / first.all_to_all,
                    p.random_mean / first.random_mean,
                    p.adversarial_mean / first.adversarial_mean,
                    worst / first.worst.unwrap_or(f64::NAN),
                    p.worst_seconds.unwrap_or(f64::NAN),
                );
            }
        }
    }
}

/// The layered routing as the plugin makes it by default (deadlock-free, lanes by port pair
/// where 2 VLs exist, 8 VLs), or minimal routing.
fn routed(fabric: &Fabric, layers: usize, name: &str) -> (LidTable, ForwardingTables) {
    let config = RoutingConfig {
        layers,
        algorithm: match name {
            "layered" => Algorithm::Layered(PathLengths::default()),
            _ => Algorithm::Minimal,
        },
        seed: 1,
        ..RoutingConfig::default()
    };
    if name != "layered" {
        let r = route_fabric(fabric, &config).expect("LIDs");
        return (r.lids, r.tables);
    }
    let lids = LidTable::from_fabric(fabric).unwrap();
    let graph = RoutingGraph::new(fabric);
    let done = route_deadlock_free(
        fabric,
        &lids,
        &graph,
        &config,
        &SchemeChoice::Auto.schemes(8),
        Shortage::Fail,
    )
    .expect("deadlock-free");
    (lids, done.tables)
}
