//! Benchmark: deadlock freedom for layered routing on Slim Flys.
//!
//! `cargo bench --bench deadlock [dfsssp|colouring|FILTER]` prints Markdown tables:
//!
//! * DFSSSP mode: VLs needed (of 8) for Slim Fly q = 5 and 7 with 2, 4 and 8 layers, q = 13
//!   with 4 layers; time of the assignment (walking the tables, cycle breaking, balancing) and
//!   of the independent verification.
//! * Colouring mode: colours used for every Slim Fly q ≤ 27, time to colour the switch graph,
//!   to build the SL-to-VL tables of every port, and to give every route its SL.

use std::time::{Duration, Instant};

use ibfabric::deadlock::colour_graph::{ColouringEffort, colour};
use ibfabric::deadlock::colouring::{ColouringConfig, MAX_HOPS};
use ibfabric::deadlock::{
    DfssspConfig, VerifyOptions, VlSearch, assign_vls, colouring_scheme, verify,
};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered::route;
use ibfabric::routing::{
    Algorithm, ForwardingTables, LidTable, PathLengths, RoutingConfig, assign_lids,
    forwarding_tables,
};
use ibfabric::topology::{SwitchGraph, TopologySpec};

fn routed(spec: &str, layers: usize) -> (ibfabric::Fabric, LidTable, ForwardingTables) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = RoutingGraph::new(&fabric);
    let layers = route(
        &graph,
        &RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        },
    );
    let tables = forwarding_tables(&fabric, &graph, &layers, &lids);
    (fabric, lids, tables)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn dfsssp(filter: Option<&str>) {
    println!(
        "| fabric | layers | VLs needed (of 8) | without the searches | cycles broken | assign | \
         assign without the searches | verify |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let cases = [
        ("slimfly:q=5", 2),
        ("slimfly:q=5", 4),
        ("slimfly:q=5", 8),
        ("slimfly:q=7", 2),
        ("slimfly:q=7", 4),
        ("slimfly:q=7", 8),
        ("slimfly:q=13", 4),
    ];
    for (spec, layers) in cases {
        let label = format!("{spec} L={layers}");
        if filter.is_some_and(|f| !label.contains(f) && f != "dfsssp") {
            continue;
        }
        let (fabric, lids, tables) = routed(spec, layers);
        let started = Instant::now();
        let plain = assign_vls(
            &fabric,
            &lids,
            &tables,
            &DfssspConfig {
                search: VlSearch::OFF,
                ..DfssspConfig::default()
            },
        );
        let plain_time = started.elapsed();
        let plain = plain.map_or_else(|e| e.to_string(), |a| a.vls_needed.to_string());
        let started = Instant::now();
        let result = assign_vls(&fabric, &lids, &tables, &DfssspConfig::default());
        let assign_time = started.elapsed();
        match result {
            Ok(a) => {
                let started = Instant::now();
                let v = verify(
                    &fabric,
                    &lids,
                    &tables,
                    &a.path_sls,
                    &a.sl2vl(&fabric),
                    &VerifyOptions {
                        switch_lids: std::env::var("DL_NO_SWITCH").is_err(),
                        ..VerifyOptions::default()
                    },
                );
                let verify_time = started.elapsed();
                assert!(v.is_deadlock_free(), "{label}: {v}");
                println!(
                    "| {spec} | {layers} | {} | {plain} | {} | {} | {} | {} |",
                    a.vls_needed,
                    a.cycles_broken,
                    secs(assign_time),
                    secs(plain_time),
                    secs(verify_time)
                );
            }
            Err(e) => println!(
                "| {spec} | {layers} | {e} | {plain} | | {} | {} | |",
                secs(assign_time),
                secs(plain_time)
            ),
        }
    }
}

fn colouring(filter: Option<&str>) {
    println!(
        "| fabric | layers | switches | colours (DSatur → tabu) | colour | SL2VL tables | path SLs | verify |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let cases = [
        (3, 8),
        (4, 8),
        (5, 8),
        (7, 8),
        (8, 8),
        (9, 8),
        (11, 8),
        (13, 8),
        (16, 4),
        (17, 4),
        (19, 4),
        (23, 2),
        (25, 2),
        (27, 1),
    ];
    for (q, layers) in cases {
        let spec = format!("slimfly:q={q}");
        if filter.is_some_and(|f| f != "colouring" && !spec.ends_with(&format!("={f}"))) {
            continue;
        }
        let (fabric, lids, tables) = routed(&spec, layers);
        let graph = SwitchGraph::new(&fabric);
        let dsatur = colour(
            &graph,
            &ColouringEffort {
                moves_per_colour: 0,
                ..ColouringEffort::default()
            },
        )
        .count;
        let started = Instant::now();
        let config = ColouringConfig::default();
        let c = colour(&graph, &config.effort);
        let colour_time = started.elapsed();
        let started = Instant::now();
        let scheme = colouring_scheme(&fabric, &lids, &tables, &config).expect("colouring fits");
        let scheme_time = started.elapsed().saturating_sub(colour_time);
        // What tests/deadlock_colouring.rs asserts, for the rows it leaves to this benchmark.
        assert!(scheme.colouring.count <= config.colour_sls.len(), "{spec}");
        assert!(
            scheme.max_hops <= MAX_HOPS,
            "{spec}: {} hops",
            scheme.max_hops
        );
        assert_eq!(scheme.broken.count, 0, "{spec}");
        let started = Instant::now();
        let sl2vl = scheme.sl2vl(&fabric);
        let sl2vl_time = started.elapsed();
        let started = Instant::now();
        let v = verify(
            &fabric,
            &lids,
            &tables,
            &scheme.path_sls,
            &sl2vl,
            &VerifyOptions::default(),
        );
        let verify_time = started.elapsed();
        assert!(v.is_deadlock_free(), "{spec}: {v}");
        assert_eq!(
            v.vls,
            (0..8).collect::<Vec<u8>>(),
            "{spec}: all 8 VLs in use"
        );
        println!(
            "| {spec} | {layers} | {} | {dsatur} → {} | {} | {} | {} | {} |",
            graph.len(),
            c.count,
            secs(colour_time),
            secs(sl2vl_time),
            secs(scheme_time),
            secs(verify_time)
        );
    }
}

fn main() {
    env_logger::init();
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let f = filter.as_deref();
    if f.is_none_or(|f| f != "colouring") {
        dfsssp(f);
    }
    if f.is_none_or(|f| f != "dfsssp") {
        println!();
        colouring(f);
    }
}
