//! The OpenSM plugin on the real stack: stock OpenSM 3.3.23 loads `libosmlayered.so`
//! (`event_plugin_name osmlayered`), routes a Slim Fly q = 5 in ibsim with
//! `routing_engine layered,minhop` and LMC 2, and the tables OpenSM programmed must be complete
//! on all 4 layers and equal, entry for entry, to what the core computes for the same fabric
//! and LIDs. Misconfiguration and panics must fall back to minhop with the subnet up.

use crate::common;

use common::fabrics::SMALL_FAT_TREE;
use common::plugin::{
    LAYERED_USED, MINHOP_USED, canonical, plugin_config, run_opensm_with_conf,
    run_opensm_with_plugin,
};
use common::{Ibsim, OpenSm, SUBNET_UP};
use ibfabric::Fabric;
use ibfabric::analysis::{self, Options, PrefixOptions};
use ibfabric::io::{ibnetdiscover, ibsim, lfts};
use ibfabric::routing::{Algorithm, LidTable, PathLengths, RoutingConfig, route_fabric};
use ibfabric::session::sweep_record::{Outcome, SweepRecord, parse_sweep_log};
use ibfabric::topology::TopologySpec;

/// The plugin's success line (its own log, not OpenSM's).
const ROUTED: &str = "layered: routed 50 switches, 850 LIDs, 4 layers";
/// Runs OpenSM once with the plugin on `sim`; `options` is the `event_plugin_options` line.
fn run_with_plugin(sim: &Ibsim, plugin_options: Option<&str>) -> OpenSm {
    run_opensm_with_plugin(sim, plugin_options, true)
}

fn slim_fly_q5() -> Ibsim {
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    Ibsim::start(&ibsim::write_net(&spec.build().unwrap()))
}

/// Routes `spec` in ibsim with the plugin (LMC 2, defaults) and checks the read-back: OpenSM
/// used our engine (success line `routed`), the dump equals `ibroute` of every switch, the
/// analyser finds every entry on all 4 layers, and the tables equal the core's for the same
/// fabric and LIDs. Returns the fabric and the analyser's report (with the prefix throughput:
/// all-to-all exactly, one random permutation, no worst permutation).
fn route_and_compare(spec: &str, routed: &str) -> (Fabric, analysis::Report) {
    let spec: TopologySpec = spec.parse().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&spec.build().unwrap()));
    let sm = run_with_plugin(&sim, None);
    let log = sm.log();
    assert!(
        log.contains(routed),
        "no success line `{routed}` from the plugin:\n{log}"
    );
    assert!(
        log.contains(LAYERED_USED),
        "OpenSM did not use layered:\n{log}"
    );
    assert!(!log.contains(MINHOP_USED), "fell back to minhop:\n{log}");
    for line in log.lines().filter(|l| l.contains("layered")) {
        eprintln!("{line}");
    }

    // Read back what OpenSM programmed and the fabric with OpenSM's LIDs.
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .unwrap()
        .fabric;
    let switches = fabric.switches().count();
    let dump_text = std::fs::read_to_string(sm.lfts_dump_path()).expect("opensm-lfts.dump");
    let dump = lfts::parse(&dump_text, &fabric).unwrap();
    assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    assert_eq!(dump.switches, switches);
    // What OpenSM dumped is what the switches hold (ibroute of every switch).
    let mut routes = String::new();
    for s in fabric.switches() {
        routes += &sim.run("ibroute", &[&fabric.node(s).ports[0].lid.to_string()]);
    }
    let ibroute = lfts::parse(&routes, &fabric).unwrap();
    assert!(ibroute.warnings.is_empty(), "{:?}", ibroute.warnings);
    assert_eq!(
        ibroute.tables, dump.tables,
        "opensm-lfts.dump and ibroute differ"
    );
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let options = Options {
        prefix: Some(PrefixOptions {
            samples: 1,
            worst: false,
            ..PrefixOptions::default()
        }),
        ..Options::default()
    };
    let report = analysis::analyze(&fabric, &lids, &dump.tables, &options);
    assert!(report.is_complete(), "{report}");
    assert_eq!(report.layers, 4);

    // The same routing computed by the core, with the plugin's defaults.
    let canon = canonical(&fabric);
    let config = RoutingConfig {
        layers: 4,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
        ..Default::default()
    };
    let expected = route_fabric(&canon, &config).unwrap().tables;
    let mut compared = 0;
    for s in fabric.switches() {
        let c = canon.node_by_guid(fabric.node(s).guid).unwrap();
        for (lid, _) in lids.iter() {
            assert_eq!(
                dump.tables.port(s, lid),
                expected.port(c, lid),
                "switch {} LID {lid}",
                fabric.node(s).name
            );
            compared += 1;
        }
    }
    assert_eq!(compared, switches * report.destination_lids);
    (fabric, report)
}

#[test]
fn plugin_routes_slim_fly_with_layered_routing_on_4_layers() {
    let (_, report) = route_and_compare("slimfly:q=5", ROUTED);
    assert_eq!(report.destination_lids, 200 * 4 + 50);
    assert_eq!(report.completeness.entries_checked, 50 * 850);
    // Layered, not minhop: layer 0 minimal, the other layers almost-minimal (at most 3 hops).
    for layer in &report.paths {
        assert_eq!(layer.broken, 0);
        if layer.layer == 0 {
            assert_eq!(layer.fraction_minimal, 1.0);
            assert_eq!(layer.max_hops, 2);
        } else {
            assert!(
                layer.fraction_minimal < 0.5,
                "layer {}: {layer:?}",
                layer.layer
            );
            assert_eq!(layer.max_hops, 3, "layer {}", layer.layer);
            assert_eq!(layer.longer, 0, "layer {}", layer.layer);
        }
    }
}

/// Parallel cables between two switches: the plugin spreads LIDs over them as the core does.
#[test]
fn plugin_routes_fat_tree_with_parallel_cables() {
    let (fabric, report) = route_and_compare(
        SMALL_FAT_TREE,
        "layered: routed 6 switches, 54 LIDs, 4 layers",
    );
    assert_eq!(fabric.switches().count(), 6);
    assert_eq!(report.destination_lids, 12 * 4 + 6);
}

/// A fat tree of three levels: every layer minimal, and the tables OpenSM programmed carry
/// all-to-all at the hosts' link rate in every prefix of layers (full bisection; lanes by port
/// pair keep every minimal route, in the cable order keyed by level).
#[test]
fn plugin_routes_a_three_level_fat_tree_minimally_at_full_bisection() {
    let (fabric, report) = route_and_compare(
        "kary-ntree:k=3,n=3",
        "layered: routed 27 switches, 135 LIDs, 4 layers",
    );
    assert_eq!(fabric.hosts().count(), 27);
    for layer in &report.paths {
        assert_eq!(layer.fraction_minimal, 1.0, "layer {}", layer.layer);
    }
    for prefix in &report.prefix.as_ref().expect("asked for").prefixes {
        assert!(
            (prefix.all_to_all - 1.0).abs() < 1e-9,
            "layers 0..{}: all-to-all {}",
            prefix.layers,
            prefix.all_to_all
        );
    }
}

/// OpenSM fell back to minhop and still brought the subnet up, with a complete routing.
fn assert_fell_back_to_minhop(sim: &Ibsim, sm: &OpenSm) {
    let log = sm.log();
    for line in log
        .lines()
        .filter(|l| l.contains("layered") || l.contains("minhop"))
    {
        eprintln!("{line}");
    }
    assert!(!log.contains(ROUTED), "the plugin claims success:\n{log}");
    assert!(log.contains(MINHOP_USED), "no fallback to minhop:\n{log}");
    assert!(log.contains(SUBNET_UP), "subnet not up:\n{log}");
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .unwrap()
        .fabric;
    let dump = lfts::parse(
        &std::fs::read_to_string(sm.lfts_dump_path()).unwrap(),
        &fabric,
    )
    .unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let report = analysis::analyze(&fabric, &lids, &dump.tables, &Options::default());
    assert!(report.is_complete(), "{report}");
}

#[test]
fn plugin_options_name_a_yaml_file_missing_means_defaults() {
    let sim = slim_fly_q5();
    // A file that does not exist: the defaults.
    let missing = sim.dir().join("no-such-layered.yaml");
    let sm = run_with_plugin(&sim, Some(missing.to_str().unwrap()));
    let log = sm.log();
    assert!(log.contains(ROUTED), "{log}");
    assert!(log.contains(LAYERED_USED), "{log}");
    drop(sm);
    // A file with settings: 2 layers on LMC 2 (LID offsets 2, 3 reuse layers 0, 1).
    let path = plugin_config(&sim, "layered.yaml", "layers: 2\nseed: 3\n");
    let sm = run_with_plugin(&sim, Some(&path));
    let log = sm.log();
    assert!(
        log.contains("layered: routed 50 switches, 850 LIDs, 2 layers"),
        "{log}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
}

#[test]
fn bad_plugin_config_falls_back_to_minhop() {
    let sim = slim_fly_q5();
    let path = plugin_config(&sim, "bad.yaml", "layers: [\ncolour: blue\n");
    let sm = run_with_plugin(&sim, Some(&path));
    let log = sm.log();
    assert!(
        log.contains(&format!("layered: config: {path}: ")),
        "no config error line:\n{log}"
    );
    assert!(
        log.contains("falling back to the next routing engine"),
        "{log}"
    );
    assert_fell_back_to_minhop(&sim, &sm);
}

/// Faults injected where the plugin can fail inside the daemon — a panic while routing, a
/// panic halfway through writing the switches' tables, an error before writing, and a routing
/// that needs more VLs than exist with `on_vl_shortage: fail` — each logged with its cause and
/// recorded as a failed pass in the sweep log and the metrics file (panics included); OpenSM
/// stays up and routes with minhop, whose tables are complete.
#[test]
fn faults_in_the_plugin_fall_back_to_minhop_and_opensm_stays_up() {
    for (config, expected) in [
        (
            "debug_fault: routing_panic\n",
            "layered: build_lid_matrices: internal error (panic: debug_fault routing_panic",
        ),
        (
            "debug_fault: write_panic\n",
            "layered: ucast_build_fwd_tables: internal error (panic: debug_fault write_panic",
        ),
        (
            "debug_fault: write_error\n",
            "layered: debug_fault write_error is set in the configuration; tables cleared",
        ),
        (
            "deadlock: dfsssp\nvls: 2\non_vl_shortage: fail\n",
            "layered: deadlock avoidance: this routing needs ",
        ),
    ] {
        let sim = slim_fly_q5();
        let sweeps = sim.dir().join("sweeps.jsonl");
        let metrics = sim.dir().join("layered.prom");
        let config = format!(
            "{config}sweep_log: {}\nmetrics_file: {}\n",
            sweeps.display(),
            metrics.display()
        );
        let path = plugin_config(&sim, "fault.yaml", &config);
        // As a daemon (with QoS, for the VL case): after the fault it must keep running.
        let mut sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&path), false);
        std::thread::sleep(std::time::Duration::from_secs(2));
        assert!(sm.is_running(), "OpenSM died:\n{}", sm.output());
        let log = sm.log();
        assert!(log.contains(expected), "no `{expected}` line:\n{log}");
        if config.contains("vls: 2") {
            // Both numbers: what the routing needs (more than 2) and what exists.
            let rest = &log[log.find(expected).unwrap() + expected.len()..];
            let (needed, rest) = rest.split_once(' ').unwrap();
            let needed: usize = needed.parse().unwrap();
            assert!(needed > 2, "{log}");
            assert!(
                rest.starts_with("virtual lanes to be deadlock-free, but only 2 exist"),
                "{log}"
            );
        }
        assert_fell_back_to_minhop(&sim, &sm);
        let records = parse_sweep_log(&std::fs::read_to_string(&sweeps).unwrap()).unwrap();
        let failed: Vec<&SweepRecord> = records
            .iter()
            .filter(|r| r.outcome == Outcome::Failed)
            .collect();
        assert!(!failed.is_empty(), "{records:?}");
        if let Some(fault) = config
            .strip_prefix("debug_fault: ")
            .map(|c| c.lines().next())
        {
            let error = failed[0].error.as_deref().unwrap_or_default();
            let panics = fault.is_some_and(|f| f.ends_with("_panic"));
            assert_eq!(
                error.starts_with("internal error (panic: "),
                panics,
                "{error}"
            );
        }
        let text = std::fs::read_to_string(&metrics).unwrap();
        let line = format!(
            "opensm_layered_routing_passes_total{{outcome=\"failed\"}} {}\n",
            failed.len()
        );
        assert!(text.contains(&line), "no `{line}` in\n{text}");
    }
}
