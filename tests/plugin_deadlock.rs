//! Deadlock freedom inside stock OpenSM: the plugin on a Slim Fly q = 5 (LMC 2, `qos TRUE`)
//! in ibsim, in both deadlock modes. What the fabric holds afterwards — forwarding tables,
//! SL-to-VL tables of every port, the SLs the SA answers — must be what the core computes for
//! the same subnet, and the independent verifier must find no cycle in it.
//!
//! Read-back: `opensm-lfts.dump` and `opensm-sl2vl.dump` (`-D 0x43`) in full, checked against
//! `ibroute` and `smpquery sl2vl` of a sample of switches and hosts; path SLs from `saquery -p`
//! for a seeded sample of (source, destination) LID pairs (one query per pair takes ~40 ms, so
//! all 722,500 pairs are out of reach; the SL depends only on the source switch and the
//! destination LID, and the sample covers every source switch).

mod common;

use common::plugin::{LAYERED_USED, canonical, plugin_config, run_opensm_with_conf};
use common::{Ibsim, OpenSm};
use ibfabric::Fabric;
use ibfabric::deadlock::{
    ColouringConfig, DeadlockFree, DfssspConfig, PathSl, Scheme, Shortage, VerifyOptions,
    route_deadlock_free, verify,
};
use ibfabric::io::{ibnetdiscover, ibsim, lfts, path_sl, sl2vl};
use ibfabric::routing::LidTable;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered::{Algorithm, PathLengths, RoutingConfig};
use ibfabric::topology::{NodeId, TopologySpec};

/// The core's path SLs, asked by LID only (the canonical fabric's node ids differ from the
/// read-back fabric's, so the per-switch shortcut of [`PathSl`] is not offered).
struct ByLid<'a>(&'a dyn PathSl);

impl PathSl for ByLid<'_> {
    fn sl(&self, slid: u16, dlid: u16) -> u8 {
        self.0.sl(slid, dlid)
    }
}

/// A small deterministic generator for the samples.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// What the core computes for the subnet the plugin saw, with the plugin's defaults (4 layers,
/// seed 1, 8 VLs: ibsim's ports report VLCap VL0-7).
fn core_routing(canon: &Fabric, scheme: Scheme) -> DeadlockFree {
    let lids = LidTable::from_fabric(canon).unwrap();
    let graph = RoutingGraph::new(canon);
    let routing = RoutingConfig {
        layers: 4,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
    };
    route_deadlock_free(canon, &lids, &graph, &routing, &[scheme], Shortage::Fail).unwrap()
}

fn wait_for_file(sm: &OpenSm, name: &str) -> String {
    let path = sm.dump_dir().join(name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(&path)
            && !text.is_empty()
        {
            // The dump is written in one go after the sweep; give the writer a moment.
            std::thread::sleep(std::time::Duration::from_millis(300));
            return std::fs::read_to_string(&path).unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} not written:\n{}",
            sm.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn plugin_routes_deadlock_free(mode: &str, scheme: Scheme, summary: &str) {
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&spec.construction().unwrap().build()));
    let config = plugin_config(&sim, "layered.yaml", &format!("deadlock: {mode}\n"));
    // A daemon, so that the SA answers PathRecord queries.
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    let lft_text = wait_for_file(&sm, "opensm-lfts.dump");
    let sl2vl_text = wait_for_file(&sm, "opensm-sl2vl.dump");
    let log = sm.log();
    for line in log.lines().filter(|l| l.contains("layered")) {
        eprintln!("{line}");
    }
    assert!(
        log.contains("layered: routed 50 switches, 850 LIDs, 4 layers"),
        "{log}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
    assert!(log.contains(summary), "no `{summary}` line:\n{log}");

    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .unwrap()
        .fabric;
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let dump = lfts::parse(&lft_text, &fabric).unwrap();
    assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    let dumped_sl2vl = sl2vl::parse(&sl2vl_text, &fabric, [15; 16]).unwrap();
    assert!(
        dumped_sl2vl.warnings.is_empty(),
        "{:?}",
        dumped_sl2vl.warnings
    );

    let canon = canonical(&fabric);
    let expected = core_routing(&canon, scheme);
    let in_canon = |n: NodeId| canon.node_by_guid(fabric.node(n).guid).unwrap();

    // Forwarding tables: entry for entry.
    for s in fabric.switches() {
        for (lid, _) in lids.iter() {
            assert_eq!(
                dump.tables.port(s, lid),
                expected.tables.port(in_canon(s), lid),
                "switch {} LID {lid}",
                fabric.node(s).name
            );
        }
    }

    // SL-to-VL tables: every (in, out) pair of every switch port in use, every host port.
    let mut rows = 0;
    for s in fabric.switches() {
        for (out, _) in fabric.neighbours(s) {
            for input in 0..=fabric.node(s).num_ports() {
                let got = dumped_sl2vl
                    .tables
                    .switch(s)
                    .and_then(|t| t.get(input, out));
                let got = got.unwrap_or_else(|| {
                    panic!("no SL2VL row {input}->{out} of {}", fabric.node(s).name)
                });
                assert_eq!(
                    got,
                    expected.sl2vl.switch_row(in_canon(s), input, out),
                    "switch {} in {input} out {out}",
                    fabric.node(s).name
                );
                rows += 1;
            }
        }
    }
    for h in fabric.hosts() {
        let port = ibfabric::topology::PortRef { node: h, port: 1 };
        let canon_port = ibfabric::topology::PortRef {
            node: in_canon(h),
            port: 1,
        };
        assert_eq!(
            dumped_sl2vl.tables.port_row(port),
            expected.sl2vl.port_row(canon_port),
            "host {}",
            fabric.node(h).name
        );
        rows += 1;
    }
    assert!(rows > 50 * 11 * 12, "{rows} rows compared");

    // The dump is what the ports hold: smpquery on a sample of switches and hosts.
    let mut rng = Lcg(7);
    let switches: Vec<NodeId> = fabric.switches().collect();
    let hosts: Vec<NodeId> = fabric.hosts().collect();
    let mut queried = String::new();
    for _ in 0..4 {
        let s = switches[rng.below(switches.len())];
        let lid = fabric.node(s).ports[0].lid.to_string();
        for (p, _) in fabric.neighbours(s) {
            queried += &sim.run("smpquery", &["sl2vl", &lid, &p.to_string()]);
        }
    }
    for _ in 0..8 {
        let h = hosts[rng.below(hosts.len())];
        queried += &sim.run(
            "smpquery",
            &["sl2vl", &fabric.node(h).ports[1].lid.to_string()],
        );
    }
    let queried = sl2vl::parse(&queried, &fabric, [15; 16]).unwrap();
    assert!(queried.warnings.is_empty(), "{:?}", queried.warnings);
    let (switch_tables, port_tables) = queried.tables.counts();
    assert!(switch_tables >= 1 && port_tables >= 1);
    for (s, t) in queried.tables.switches() {
        for (out, _) in fabric.neighbours(s) {
            for input in 0..=fabric.node(s).num_ports() {
                assert_eq!(
                    t.get(input, out),
                    dumped_sl2vl
                        .tables
                        .switch(s)
                        .and_then(|d| d.get(input, out)),
                    "smpquery and the dump differ at {} {input}->{out}",
                    fabric.node(s).name
                );
            }
        }
    }
    for (port, row) in queried.tables.ports() {
        assert_eq!(&row, dumped_sl2vl.tables.port_row(port));
    }

    // Path SLs the SA answers: every source switch (its own LID or a host's), random
    // destinations of every layer.
    let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
    let mut records = String::new();
    let mut asked = Vec::new();
    for (i, &s) in switches.iter().enumerate() {
        let slid = if i % 2 == 0 {
            fabric.node(s).ports[0].lid
        } else {
            let (_, host) = fabric
                .neighbours(s)
                .find(|(_, peer)| !fabric.node(peer.node).is_switch())
                .unwrap();
            fabric.node(host.node).ports[usize::from(host.port)].lid + (i % 4) as u16
        };
        for _ in 0..2 {
            let dlid = all[rng.below(all.len())];
            if dlid == slid {
                continue;
            }
            records += &sim.run(
                "saquery",
                &[
                    "-p",
                    "--slid",
                    &slid.to_string(),
                    "--dlid",
                    &dlid.to_string(),
                ],
            );
            asked.push((slid, dlid));
        }
    }
    let answered = path_sl::parse(&records).unwrap();
    assert_eq!(answered.entries.len(), asked.len(), "{records}");
    let mut distinct = std::collections::BTreeSet::new();
    for &(slid, dlid, sl) in &answered.entries {
        assert_eq!(
            sl,
            expected.path_sls.sl(slid, dlid),
            "SA's SL for {slid} -> {dlid}"
        );
        distinct.insert(sl);
    }
    assert!(distinct.len() > 1, "the SA answers more than one SL");

    // The independent verifier on the read-back tables, with the path SLs the sample confirmed.
    let verdict = verify(
        &fabric,
        &lids,
        &dump.tables,
        &ByLid(&expected.path_sls),
        &dumped_sl2vl.tables,
        &VerifyOptions::default(),
    );
    assert!(verdict.is_deadlock_free(), "{verdict:?}");
    // The same tables on one lane deadlock: the scheme is what makes them safe.
    let one_lane = verify(
        &fabric,
        &lids,
        &dump.tables,
        &ibfabric::deadlock::DefaultSl(0),
        &dumped_sl2vl.tables,
        &VerifyOptions::default(),
    );
    assert!(
        !one_lane.is_deadlock_free(),
        "layered routing on SL 0 has a cycle"
    );
}

#[test]
fn plugin_is_deadlock_free_with_dfsssp_virtual_lanes() {
    plugin_routes_deadlock_free(
        "dfsssp",
        Scheme::Dfsssp(DfssspConfig::default()),
        "layered: deadlock-free by DFSSSP virtual lanes",
    );
}

#[test]
fn plugin_is_deadlock_free_with_switch_colouring() {
    plugin_routes_deadlock_free(
        "colouring",
        Scheme::Colouring(ColouringConfig::default()),
        "layered: deadlock-free by switch colouring",
    );
}
