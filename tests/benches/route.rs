//! Benchmark: layered routing on Slim Flys up to the largest IB's LID space allows, side by
//! side with minimal routing and RUES on the same fabric.
//!
//! `cargo bench --bench route` prints one Markdown row per (fabric, algorithm, layers): time to
//! compute the layers, time to build the forwarding tables of every LID, and the fraction of
//! switch pairs with at least 2 and 3 edge-disjoint paths across the layers, and the most
//! loaded link over the mean. `cargo bench --bench route -- q=17 'layered unimodal'` runs the
//! cases whose "spec Llayers" contains the first argument with the one algorithm named by the
//! second. `layered unimodal` is the layered routing with every route
//! unimodal in the cable order (`Turns::Unimodal`), next to the unconstrained one.

#[path = "measure.rs"]
mod measure;

use std::time::Instant;

use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered::route;
use ibfabric::routing::layers::Layers;
use ibfabric::routing::{
    Algorithm, LidTable, PathLengths, RoutingConfig, Turns, assign_lids, forwarding_tables,
    pairs_with_disjoint_paths,
};
use ibfabric::topology::TopologySpec;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let (filter, algorithm_filter) = (args.first(), args.get(1));
    let cases: [(&str, usize); 9] = [
        ("slimfly:q=5", 4),
        ("slimfly:q=5", 8),
        ("slimfly:q=7", 4),
        ("slimfly:q=7", 8),
        ("slimfly:q=11", 8),
        ("slimfly:q=13", 8),
        ("slimfly:q=17", 4),
        ("slimfly:q=19", 4),
        ("slimfly:q=27", 1),
    ];
    println!(
        "| fabric | layers | algorithm | route | tables | LIDs | ≥2 disjoint | ≥3 disjoint | max/mean load |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (spec, layers) in cases {
        if !measure::selects(filter.map(String::as_str), spec, layers) {
            continue;
        }
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let graph = RoutingGraph::new(&fabric);
        let algorithms = [
            (
                "layered",
                Algorithm::Layered(PathLengths::default()),
                Turns::Any,
            ),
            (
                "layered unimodal",
                Algorithm::Layered(PathLengths::default()),
                Turns::Unimodal,
            ),
            ("minimal", Algorithm::Minimal, Turns::Any),
            (
                "rues 60%",
                Algorithm::Rues {
                    keep_per_mille: 600,
                },
                Turns::Any,
            ),
        ];
        for (name, algorithm, turns) in algorithms {
            if layers == 1 && name != "layered" {
                continue; // one layer is minimal routing for every algorithm
            }
            if algorithm_filter.is_some_and(|f| name != f.as_str()) {
                continue;
            }
            let started = Instant::now();
            let routed = route(
                &graph,
                &RoutingConfig {
                    layers,
                    algorithm,
                    seed: 1,
                    turns,
                },
            );
            let route_time = started.elapsed();
            let started = Instant::now();
            let tables = forwarding_tables(&fabric, &graph, &routed, &lids);
            let table_time = started.elapsed();
            std::hint::black_box(&tables);
            let (two, pairs) = pairs_with_disjoint_paths(&graph, &routed, 2);
            let (three, _) = pairs_with_disjoint_paths(&graph, &routed, 3);
            println!(
                "| {spec} | {layers} | {name} | {:.2} s | {:.2} s | {} | {:.2} % | {:.2} % | {:.3} |",
                route_time.as_secs_f64(),
                table_time.as_secs_f64(),
                lids.iter().count(),
                100.0 * two as f64 / pairs as f64,
                100.0 * three as f64 / pairs as f64,
                max_over_mean(&graph, &routed),
            );
        }
    }
    println!("\npeak RSS: {} MiB", measure::peak_rss_kib() / 1024);
}

/// The most loaded directed inter-switch link over the mean, counting routes (sending
/// endpoints × receiving endpoints) along every layer's path of every switch pair.
fn max_over_mean(graph: &RoutingGraph, layers: &Layers) -> f64 {
    let n = graph.len();
    let mut loads = vec![0u64; graph.edge_count()];
    for l in 0..layers.count() {
        for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
            for s in (0..n).filter(|&s| s != t) {
                let routes = u64::from(graph.endpoints[s]) * u64::from(graph.endpoints[t]);
                let mut v = s;
                while let Some(e) = (v != t).then(|| layers.next_edge(l, v, t)).flatten() {
                    loads[e] += routes;
                    v = graph.edge_to[e] as usize;
                }
            }
        }
    }
    let mean = loads.iter().sum::<u64>() as f64 / loads.len().max(1) as f64;
    loads.iter().copied().max().unwrap_or(0) as f64 / mean.max(1.0)
}
