//! Benchmark: the routing analyser — walking every (switch, LID) entry, disjoint paths and link
//! load — and the maximum achievable throughput (MAT) linear programs, on layered routing and
//! minimal routing of Slim Flys.
//!
//! `cargo bench --bench analyze` prints one Markdown row per (fabric, layers, algorithm): the
//! analysis without MAT, and each MAT LP (uniform all-to-all, the adversarial pattern) with its
//! size, time and result. MAT runs up to q = 7; the analysis alone also on q = 19 with 4 layers.

use std::time::Instant;

use ibfabric::analysis::{Options, analyze};
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::TopologySpec;

fn main() {
    println!(
        "| fabric | layers | algorithm | analysis | MAT uniform | LP size (vars × rows) | time | MAT adversarial | time |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (spec, layers, mat) in [
        ("slimfly:q=5", 4_usize, true),
        ("slimfly:q=7", 4, true),
        ("slimfly:q=19", 4, false),
    ] {
        let mut fabric = spec
            .parse::<TopologySpec>()
            .expect("spec")
            .build()
            .expect("valid");
        assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
        for (name, algorithm) in [
            ("layered", Algorithm::Layered(PathLengths::default())),
            ("minimal", Algorithm::Minimal),
        ] {
            let config = RoutingConfig {
                layers,
                algorithm,
                seed: 1,
                ..Default::default()
            };
            let routed = route_fabric(&fabric, &config).expect("LIDs");
            let started = Instant::now();
            let report = analyze(&fabric, &routed.lids, &routed.tables, &Options::default());
            let analysis = started.elapsed().as_secs_f64();
            assert!(report.is_complete());
            if !mat {
                println!("| {spec} | {layers} | {name} | {analysis:.2} s | | | | | |");
                continue;
            }
            let with_mat = analyze(
                &fabric,
                &routed.lids,
                &routed.tables,
                &Options {
                    mat: true,
                    ..Options::default()
                },
            );
            let m = with_mat.mat.expect("MAT asked for");
            let value = |t: Option<f64>| t.map_or("failed".to_string(), |v| format!("{v:.3}"));
            println!(
                "| {spec} | {layers} | {name} | {analysis:.2} s | {} | {} × {} | {:.2} s | {} | {:.2} s |",
                value(m.uniform.throughput),
                m.uniform.variables,
                m.uniform.constraints,
                m.uniform.seconds,
                value(m.adversarial.throughput),
                m.adversarial.seconds
            );
        }
    }
}
