//! The routing analyser on OpenSM's own routings, on the real stack: a Slim Fly q = 5 in
//! ibsim, routed by OpenSM 3.3.23 (`-R minhop` and `-R dfsssp`, LMC 2), read back with
//! `ibnetdiscover` (fabric with LIDs), OpenSM's `opensm-lfts.dump` and `ibroute` of every
//! switch. The `ibfabric analyze` binary on those files must say exactly what the analyser says
//! on the same tables in memory, and the two table sources must agree entry for entry.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::Fabric;
use ibfabric::analysis::{self, Options, PrefixOptions, Report};
use ibfabric::io::{ibnetdiscover, ibsim, lfts};
use ibfabric::routing::LidTable;
use ibfabric::topology::TopologySpec;

/// `ibfabric analyze --format json` on files; its report and exit status.
fn analyze_binary(fabric: &str, tables: &Path) -> (serde_json::Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(["analyze", "--fabric", fabric, "--lfts"])
        .arg(tables)
        .args(["--format", "json"])
        .output()
        .expect("run ibfabric");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "ibfabric analyze failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = serde_json::from_slice(&out.stdout).expect("JSON report");
    (json, code)
}

struct ReadBack {
    fabric: Fabric,
    topo_path: String,
    dump_path: std::path::PathBuf,
    ibroute_path: std::path::PathBuf,
    dump: lfts::LftDump,
    ibroute: lfts::LftDump,
}

/// Routes a Slim Fly q = 5 with `engine` and LMC 2 and reads everything back.
fn route_and_read_back(sim: &Ibsim, engine: &str) -> ReadBack {
    let sm = OpenSm::start(sim, &OpenSmOptions::new(engine, 2));
    // The engine itself configured the tables (no silent fallback to minhop).
    let log = sm.log();
    assert!(
        log.contains(&format!("{engine} tables configured on all switches")),
        "{engine} did not route:\n{log}"
    );
    let topo = sim.run("ibnetdiscover", &[]);
    let topo_path = sim.dir().join("fabric.topo");
    std::fs::write(&topo_path, &topo).unwrap();
    let fabric = ibnetdiscover::parse(&topo, None).unwrap().fabric;
    // ibroute of every switch, by LID, concatenated.
    let mut routes = String::new();
    for s in fabric.switches() {
        let lid = fabric.node(s).ports[0].lid;
        assert_ne!(lid, 0, "OpenSM gave every switch a LID");
        routes += &sim.run("ibroute", &[&lid.to_string()]);
    }
    let ibroute_path = sim.dir().join("ibroute.txt");
    std::fs::write(&ibroute_path, &routes).unwrap();
    let dump_path = sm.lfts_dump_path();
    let dump_text = std::fs::read_to_string(&dump_path).expect("opensm-lfts.dump written");
    let dump = lfts::parse(&dump_text, &fabric).unwrap();
    let ibroute = lfts::parse(&routes, &fabric).unwrap();
    assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    assert!(ibroute.warnings.is_empty(), "{:?}", ibroute.warnings);
    ReadBack {
        fabric,
        topo_path: topo_path.to_str().unwrap().to_string(),
        dump_path,
        ibroute_path,
        dump,
        ibroute,
    }
}

fn check_engine(engine: &str) -> Report {
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    let generated = spec.build().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let rb = route_and_read_back(&sim, engine);

    // What OpenSM dumped is what the switches hold.
    assert_eq!(rb.dump.switches, 50);
    assert_eq!(rb.ibroute.switches, 50);
    assert_eq!(rb.dump.entries, rb.ibroute.entries);
    assert_eq!(
        rb.dump.tables, rb.ibroute.tables,
        "{engine}: opensm-lfts.dump and ibroute differ"
    );
    // Every CA port has LMC 2: 4 LIDs.
    for h in rb.fabric.hosts() {
        assert_eq!(rb.fabric.node(h).ports[1].lmc, 2, "{engine}: LMC 2");
    }

    let lids = LidTable::from_fabric(&rb.fabric).unwrap();
    // The command's defaults: the prefix throughput included.
    let options = Options {
        prefix: Some(PrefixOptions::default()),
        ..Options::default()
    };
    let report = analysis::analyze(&rb.fabric, &lids, &rb.dump.tables, &options);
    // Through JSON text, as the binary's report is read: serde_json's parser does not round
    // every float back to the same bits.
    let in_memory: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    for tables in [&rb.dump_path, &rb.ibroute_path] {
        let (json, code) = analyze_binary(&rb.topo_path, tables);
        assert_eq!(code, 0, "{engine}: complete routing, exit 0");
        assert_eq!(
            json,
            in_memory,
            "{engine}: ibfabric analyze on {} differs from the analyser in memory",
            tables.display()
        );
    }
    // The generated fabric (no LIDs: taken from the dump's destination comments) gives the
    // same path counts.
    let (json, code) = analyze_binary("slimfly:q=5", &rb.dump_path);
    assert_eq!(code, 0);
    assert_eq!(json["paths"], in_memory["paths"], "{engine}");
    assert_eq!(json["disjoint"], in_memory["disjoint"], "{engine}");
    assert_eq!(
        json["completeness"]["entries_checked"],
        in_memory["completeness"]["entries_checked"]
    );

    // Complete on all 4 LID offsets: 50 switches × (200 hosts × 4 LIDs + 50 switch LIDs).
    assert!(report.is_complete(), "{engine}:\n{report}");
    assert_eq!(report.layers, 4);
    assert_eq!(report.destination_lids, 200 * 4 + 50);
    assert_eq!(report.completeness.entries_checked, 50 * 850);
    report
}

/// Facts of Slim Fly q = 5 that hold for any shortest-path routing. Its switch graph is the
/// Hoffman–Singleton graph (Moore graph, girth 5, diameter 2): the shortest path between two
/// switches is unique. So every layer of a minimal routing has the same paths; from each
/// switch, 7 neighbours and 42 switches at distance 2 with 4 hosts each; one edge-disjoint
/// path per pair; and each directed cable u → v carries the pairs (u, v), (u, N(v) − u) and
/// (N(u) − v, v): 1 + 6 + 6 = 13 switch pairs × 4 × 4 host pairs = 208 routes per layer.
fn assert_slim_fly_q5_minimal_facts(engine: &str, report: &Report) {
    for layer in &report.paths {
        assert_eq!(layer.paths, 50 * 49 * 4, "{engine}");
        assert_eq!(layer.broken, 0, "{engine}");
        assert_eq!(layer.max_hops, 2, "{engine}: layer {}", layer.layer);
        assert_eq!(
            layer.fraction_minimal, 1.0,
            "{engine}: layer {}",
            layer.layer
        );
        assert_eq!(layer.hops_histogram, vec![0, 50 * 7 * 4, 50 * 42 * 4]);
    }
    assert_eq!(report.disjoint.pairs, 50 * 49);
    assert_eq!(report.disjoint.histogram, vec![0, 50 * 49, 0, 0, 0]);
    for load in &report.link_load.per_layer {
        assert_eq!(
            (load.links, load.min, load.max),
            (350, 208, 208),
            "{engine}"
        );
    }
    assert_eq!(report.link_load.total.max, 4 * 208);
    // Prefix throughput: every layer has the same paths, so every prefix is layer 0. All-to-all:
    // 208 routes of 1/199 of a host link on every cable. Worst permutation: u's 4 hosts send
    // over u → v (to v or N(v) − u) while 4 hosts of N(u) − v send to v's 4 hosts: load 8.
    let prefix = report.prefix.as_ref().expect("the command's default");
    assert_eq!(prefix.prefixes.len(), 3, "{engine}: K = 1, 2, 4");
    for p in &prefix.prefixes {
        assert!(
            (p.all_to_all - 199.0 / 208.0).abs() < 1e-12,
            "{engine}: {p:?}"
        );
        assert_eq!(p.worst, Some(1.0 / 8.0), "{engine}: {p:?}");
        assert!(p.random_min >= 1.0 / 8.0, "{engine}: {p:?}");
    }
}

#[test]
fn opensm_minhop_tables_read_back_analyse_the_same_as_in_memory() {
    let report = check_engine("minhop");
    assert_slim_fly_q5_minimal_facts("minhop", &report);
}

#[test]
fn opensm_dfsssp_tables_read_back_analyse_the_same_as_in_memory() {
    // DFSSSP needs no QoS (-Q) to program LFTs: it only assigns path SLs on top.
    let report = check_engine("dfsssp");
    // DFSSSP balances weighted shortest paths; on a graph with unique shortest paths it
    // still routes minimally.
    assert_slim_fly_q5_minimal_facts("dfsssp", &report);
}

/// A Slim Fly q = 5 with LIDs (LMC 1) as an ibnetdiscover dump, and min-hop-like tables in
/// ibroute format (every LID of a host on the first port towards it), in a scratch directory.
fn cli_fixture(
    plant: impl FnOnce(&Fabric, &mut ibfabric::routing::ForwardingTables),
) -> (tempfile::TempDir, String, std::path::PathBuf) {
    use ibfabric::routing::{ForwardingTables, assign_lids};
    let mut fabric = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut fabric, 1).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let graph = ibfabric::topology::SwitchGraph::new(&fabric);
    let mut tables = ForwardingTables::for_lids(&fabric, &lids);
    for (lid, owner) in lids.iter() {
        let node = fabric.node(owner.node);
        let (dest, last) = if node.is_switch() {
            (owner.node, 0)
        } else {
            let p = fabric
                .peer(ibfabric::topology::PortRef {
                    node: owner.node,
                    port: owner.port,
                })
                .unwrap();
            (p.node, p.port)
        };
        let t = (0..graph.len()).find(|&i| graph.node(i) == dest).unwrap();
        let dist = graph.distances_from(t);
        for s in 0..graph.len() {
            let sw = graph.node(s);
            if sw == dest {
                tables.set(sw, lid, last);
                continue;
            }
            let (port, _) = fabric
                .neighbours(sw)
                .find(|(_, peer)| {
                    (0..graph.len()).any(|j| graph.node(j) == peer.node && dist[j] + 1 == dist[s])
                })
                .unwrap();
            tables.set(sw, lid, port);
        }
    }
    plant(&fabric, &mut tables);
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("fabric.topo");
    std::fs::write(&topo, ibnetdiscover::write(&fabric)).unwrap();
    let names = dir.path().join("names.map");
    std::fs::write(
        &names,
        ibfabric::io::NodeNameMap::from_fabric(&fabric).write(),
    )
    .unwrap();
    let routes = dir.path().join("ibroute.txt");
    std::fs::write(&routes, lfts::write_ibroute(&fabric, &lids, &tables)).unwrap();
    (dir, topo.to_str().unwrap().to_string(), routes)
}

#[test]
fn analyze_exits_1_and_names_the_failure_when_an_entry_is_missing() {
    let (_dir, topo, routes) = cli_fixture(|_, _| {});
    let (json, code) = analyze_binary(&topo, &routes);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["layers"], 2);
    let (_dir, topo, routes) = cli_fixture(|fabric, tables| {
        let sw = fabric.node_by_name("sw0-0-0").unwrap();
        let h = fabric.node_by_name("h1-0-0-0").unwrap();
        tables.set(
            sw,
            fabric.node(h).ports[1].lid + 1,
            ibfabric::routing::NO_PORT,
        );
    });
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(["analyze", "--fabric", &topo, "--lfts"])
        .arg(&routes)
        .arg("--node-name-map")
        .arg(std::path::Path::new(&topo).with_file_name("names.map"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("INCOMPLETE"), "{text}");
    assert!(text.contains("sw0-0-0 has no entry for LID"), "{text}");
}

#[test]
fn analyze_exits_2_naming_the_file_and_line_of_bad_input() {
    let (dir, topo, routes) = cli_fixture(|_, _| {});
    let mut text = std::fs::read_to_string(&routes).unwrap();
    text.insert_str(text.find("0x0002 ").unwrap(), "0x0002 bogus\n");
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args(["analyze", "--fabric", &topo, "--lfts"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.txt: line 5: expected an entry like"),
        "{err}"
    );
}
