//! Benchmark: the routing step `ibfabric route --deadlock port-pair` makes (cable order, layers,
//! forwarding tables of every LID, lanes by port pair) on 1, 2 and all threads, against a
//! floor — the least any routing of the same layers must do: per layer a breadth-first search
//! from every switch, one next hop per (switch, destination switch), and every forwarding
//! entry (switch × LID) written.
//!
//! `cargo bench --bench threads` prints one Markdown row per (fabric, threads): the median of
//! `THREADS_RUNS` runs (default 3) of the routing step, the floor's median, their ratio, the
//! speed-up over one thread, and whether the forwarding tables, SL-to-VL tables and path SLs
//! are identical to one thread's. `cargo bench --bench threads -- q=19` runs the cases whose
//! "spec Llayers" contains the argument.

#[path = "measure.rs"]
mod measure;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ibfabric::deadlock::{DeadlockFree, PortPairConfig, Scheme, Shortage, route_deadlock_free};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{Algorithm, LidTable, PathLengths, RoutingConfig, Turns, assign_lids};
use ibfabric::topology::TopologySpec;

/// The floor of routing `layers` layers on `graph` with `lids_per_host` LIDs per host port:
/// returns a checksum of the entries so that nothing is optimised away.
fn floor(graph: &RoutingGraph, layers: usize) -> u64 {
    let n = graph.len();
    let hosts: usize = graph.endpoints.iter().map(|&e| e as usize).sum();
    // LIDs by destination switch, layer after layer (LMC offsets), like the real numbering.
    let lids = hosts * layers;
    let mut table = vec![0u8; n * lids];
    let mut next = vec![u32::MAX; n];
    let mut queue = VecDeque::with_capacity(n);
    for layer in 0..layers {
        let mut lid = layer * hosts;
        for t in 0..n {
            next.fill(u32::MAX);
            next[t] = 0;
            queue.clear();
            queue.push_back(t);
            while let Some(v) = queue.pop_front() {
                for e in graph.edges(v) {
                    let w = graph.edge_to[e] as usize;
                    if next[w] == u32::MAX {
                        // w reaches t through v: w's next hop is the cable back to v; the
                        // port stands in for it (the graph is symmetric).
                        next[w] = (e - graph.edges(v).start) as u32 + 1;
                        queue.push_back(w);
                    }
                }
            }
            for _ in 0..graph.endpoints[t] {
                for s in 0..n {
                    table[s * lids + lid] = next[s] as u8;
                }
                lid += 1;
            }
        }
    }
    table.iter().map(|&p| u64::from(p)).sum()
}

fn median_of(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    measure::median(&times)
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let runs: usize = std::env::var("THREADS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let all = ibfabric::threads::available();
    let mut thread_counts = vec![1, 2, all];
    thread_counts.sort_unstable();
    thread_counts.dedup();
    let cases: [(&str, usize); 5] = [
        ("slimfly:q=7", 4),
        ("slimfly:q=11", 4),
        ("slimfly:q=13", 4),
        ("slimfly:q=17", 4),
        ("slimfly:q=19", 4),
    ];
    println!("Machine: {all} cores available; {runs} runs per row (median).");
    println!();
    println!(
        "| fabric | switches | LIDs | threads | routing step | floor | step / floor | speed-up | same tables as 1 thread |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (spec, layers) in cases {
        if !measure::selects(filter.as_deref(), spec, layers) {
            continue;
        }
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
        let lids = LidTable::from_fabric(&fabric).unwrap();
        let graph = RoutingGraph::new(&fabric);
        let config = RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            turns: Turns::Unimodal,
            ..RoutingConfig::default()
        };
        let schemes = [Scheme::PortPair(PortPairConfig { vls: 8 })];
        let floor_time = median_of(runs, || {
            std::hint::black_box(floor(&graph, layers));
        });
        let mut one: Option<(DeadlockFree, Duration)> = None;
        for &threads in &thread_counts {
            let pool = ibfabric::threads::pool(threads).expect("threads");
            let mut done = None;
            let time = median_of(runs, || {
                done = Some(pool.install(|| {
                    route_deadlock_free(&fabric, &lids, &graph, &config, &schemes, Shortage::Fail)
                        .expect("deadlock-free")
                }));
            });
            let done = done.expect("ran");
            let (same, speed_up) = match &one {
                None => ("—".to_string(), 1.0),
                Some((first, first_time)) => (
                    if first.tables == done.tables
                        && first.sl2vl == done.sl2vl
                        && first.path_sls == done.path_sls
                    {
                        "yes".to_string()
                    } else {
                        "**no**".to_string()
                    },
                    first_time.as_secs_f64() / time.as_secs_f64(),
                ),
            };
            println!(
                "| {spec} | {} | {} | {threads} | {:.2} s | {} | {:.0}× | {speed_up:.2}× | {same} |",
                graph.len(),
                lids.iter().count(),
                time.as_secs_f64(),
                measure::ms(floor_time),
                time.as_secs_f64() / floor_time.as_secs_f64(),
            );
            if one.is_none() {
                one = Some((done, time));
            }
        }
    }
}
