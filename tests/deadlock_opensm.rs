//! The deadlock verifier on the real stack: OpenSM 3.3.23's own DFSSSP engine routes fabrics
//! in ibsim (`-R dfsssp -Q`, dumps with `-D 0x43`), and everything is read back the way an
//! admin would — `ibnetdiscover` for the fabric and its LIDs, `opensm-lfts.dump` or `ibroute`
//! for the forwarding tables, `opensm-sl2vl.dump` or `smpquery sl2vl` for the SL-to-VL tables,
//! `saquery -p` for the path SLs OpenSM answers. `ibfabric deadlock-check` on those files must
//! prove the CA traffic deadlock-free, and must find the cycle when the path SLs are ignored
//! (every packet on SL 0). Traffic from the switches' own LIDs is another matter: OpenSM's
//! DFSSSP leaves it out of its channel dependency graph, and the verifier can catch the cycles
//! that this lets through.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::Fabric;
use ibfabric::deadlock::sl2vl::identity_row;
use ibfabric::deadlock::{DefaultSl, DfssspConfig, VerifyOptions, assign_vls, verify};
use ibfabric::io::{ibnetdiscover, ibsim, lfts, sl2vl};
use ibfabric::routing::LidTable;
use ibfabric::topology::{Guid, NodeId, NodeKind, NodeSpec, PortRef, TopologySpec};

/// A ring of `n` switches with one host each (OpenSM's DFSSSP needs 2 VLs on an odd ring).
fn ring(n: usize) -> Fabric {
    let mut f = Fabric::new(format!("ring-{n}"));
    let sw: Vec<NodeId> = (0..n)
        .map(|i| {
            f.add_node(NodeSpec {
                kind: NodeKind::Switch,
                name: format!("sw{i}"),
                description: format!("ring switch {i}"),
                guid: Guid(0x0002_c900_0000_1000 + i as u64 * 0x100),
                num_ports: 8,
                rack: None,
            })
            .unwrap()
        })
        .collect();
    for i in 0..n {
        f.connect(
            PortRef {
                node: sw[i],
                port: 1,
            },
            PortRef {
                node: sw[(i + 1) % n],
                port: 2,
            },
            None,
            None,
        )
        .unwrap();
        let host = f
            .add_node(NodeSpec {
                kind: NodeKind::Ca,
                name: format!("h{i}"),
                description: format!("h{i} HCA-1"),
                guid: Guid(0x0002_c900_0010_0000 + i as u64 * 0x100),
                num_ports: 1,
                rack: None,
            })
            .unwrap();
        f.connect(
            PortRef {
                node: sw[i],
                port: 3,
            },
            PortRef {
                node: host,
                port: 1,
            },
            None,
            None,
        )
        .unwrap();
    }
    f
}

/// `ibfabric deadlock-check ARGS`: exit status and stdout.
fn deadlock_check(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .arg("deadlock-check")
        .args(args)
        .output()
        .expect("run ibfabric");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "ibfabric deadlock-check {args:?} failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, String::from_utf8(out.stdout).unwrap())
}

fn wait_for(path: &Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && (text.contains("lids dumped") || text.contains("#in out"))
        {
            // Give the writer a moment to finish the file.
            std::thread::sleep(std::time::Duration::from_millis(500));
            return std::fs::read_to_string(path).unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} not written",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn opensm_dfsssp_on_a_ring_read_back_is_deadlock_free_and_sl0_deadlocks() {
    let sim = Ibsim::start(&ibsim::write_net(&ring(5)));
    let mut options = OpenSmOptions::new("dfsssp", 0);
    options.once = false; // the SA must answer PathRecord queries
    // QoS makes OpenSM program SL-to-VL tables; -d2 flushes the log after every message (the
    // daemon's SUBNET UP line would otherwise sit in a buffer).
    options.extra_args = vec!["-Q".into(), "-d".into(), "2".into()];
    let sm = OpenSm::start(&sim, &options);
    let log = sm.log();
    assert!(
        log.contains("dfsssp tables configured on all switches"),
        "dfsssp did not route:\n{log}"
    );
    assert!(log.contains("Virtual Lanes needed: 2"), "{log}");

    let topo = sim.run("ibnetdiscover", &[]);
    let topo_path = sim.dir().join("fabric.topo");
    std::fs::write(&topo_path, &topo).unwrap();
    let fabric = ibnetdiscover::parse(&topo, None).unwrap().fabric;
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let lft_path = sm.lfts_dump_path();
    let lft_text = wait_for(&lft_path);
    let sl2vl_path = sm.dump_dir().join("opensm-sl2vl.dump");
    let sl2vl_text = wait_for(&sl2vl_path);

    // Path SLs as the SA answers them, for every (source LID, destination LID).
    let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
    let mut records = String::new();
    for &s in &all {
        for &d in &all {
            if s != d {
                records += &sim.run(
                    "saquery",
                    &["-p", "--slid", &s.to_string(), "--dlid", &d.to_string()],
                );
            }
        }
    }
    let sl_path = sim.dir().join("path-sl.txt");
    std::fs::write(&sl_path, &records).unwrap();
    let sls = ibfabric::io::path_sl::parse(&records).unwrap();
    assert_eq!(sls.entries.len(), all.len() * (all.len() - 1));
    assert!(
        sls.entries.iter().any(|e| e.2 != sls.entries[0].2),
        "DFSSSP uses more than one SL"
    );

    let topo_arg = topo_path.to_str().unwrap();
    let (lft_arg, sl2vl_arg, sl_arg) = (
        lft_path.to_str().unwrap(),
        sl2vl_path.to_str().unwrap(),
        sl_path.to_str().unwrap(),
    );
    // CA traffic (what DFSSSP's CDG holds): deadlock-free.
    let (code, report) = deadlock_check(&[
        "--fabric",
        topo_arg,
        "--lfts",
        lft_arg,
        "--sl2vl",
        sl2vl_arg,
        "--path-sl",
        sl_arg,
        "--no-switch-lids",
    ]);
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("deadlock-free"), "{report}");
    assert!(report.contains("20 routes"), "{report}");

    // With the switches' own LIDs as sources too: OpenSM 3.3.23's DFSSSP leaves routes from a
    // switch's port 0 out of its CDG (it walks from the source port's peer, and port 0 has
    // none), keeps them in VL class 0 and answers a random SL of that class. Whether that
    // closes a cycle depends on the draw; when it does, some dependency of the cycle is made
    // by switch-sourced routes only.
    let (code, report) = deadlock_check(&[
        "--fabric",
        topo_arg,
        "--lfts",
        lft_arg,
        "--sl2vl",
        sl2vl_arg,
        "--path-sl",
        sl_arg,
        "--format",
        "json",
        "--max-examples",
        "1000",
    ]);
    let verdict: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(verdict["routes"], 90, "{report}");
    eprintln!("OpenSM DFSSSP with switch-sourced routes: exit {code}");
    if code == 1 {
        let channels = verdict["cycle"]["channels"].as_array().unwrap();
        let switch_only = channels.iter().any(|c| {
            c["examples"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["source"].as_str().unwrap().ends_with("[0]"))
        });
        assert!(
            switch_only,
            "a cycle without switch-sourced routes: {report}"
        );
    }

    // Ignoring the path SLs (everything on SL 0) the same tables deadlock around the ring.
    let (code, report) = deadlock_check(&[
        "--fabric",
        topo_arg,
        "--lfts",
        lft_arg,
        "--sl2vl",
        sl2vl_arg,
        "--default-sl",
        "0",
        "--no-switch-lids",
    ]);
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("DEADLOCK: a cycle of 5 channel dependencies"),
        "{report}"
    );

    // The same verdicts from what the switches report: ibroute and smpquery sl2vl.
    let mut routes = String::new();
    let mut sl2vl_read = String::new();
    for s in fabric.switches() {
        let lid = fabric.node(s).ports[0].lid.to_string();
        routes += &sim.run("ibroute", &[&lid]);
        for (p, _) in fabric.neighbours(s) {
            sl2vl_read += &sim.run("smpquery", &["sl2vl", &lid, &p.to_string()]);
        }
    }
    for h in fabric.hosts() {
        let lid = fabric.node(h).ports[1].lid.to_string();
        sl2vl_read += &sim.run("smpquery", &["sl2vl", &lid]);
    }
    let routes_path = sim.dir().join("ibroute.txt");
    std::fs::write(&routes_path, &routes).unwrap();
    let smp_path = sim.dir().join("smpquery-sl2vl.txt");
    std::fs::write(&smp_path, &sl2vl_read).unwrap();
    let (code, report) = deadlock_check(&[
        "--fabric",
        topo_arg,
        "--lfts",
        routes_path.to_str().unwrap(),
        "--sl2vl",
        smp_path.to_str().unwrap(),
        "--path-sl",
        sl_arg,
        "--no-switch-lids",
    ]);
    assert_eq!(code, 0, "{report}");

    // The dump and the switches agree on every table the switches were asked for.
    let dumped = sl2vl::parse(&sl2vl_text, &fabric, [15; 16]).unwrap();
    let queried = sl2vl::parse(&sl2vl_read, &fabric, [15; 16]).unwrap();
    assert!(dumped.warnings.is_empty() && queried.warnings.is_empty());
    for s in fabric.switches() {
        for (o, _) in fabric.neighbours(s) {
            for i in 0..=fabric.node(s).num_ports() {
                assert_eq!(
                    dumped.tables.switch_vl(s, i, o, 3),
                    queried.tables.switch_vl(s, i, o, 3)
                );
            }
        }
    }
    let dump = lfts::parse(&lft_text, &fabric).unwrap();
    let ibroute = lfts::parse(&routes, &fabric).unwrap();
    assert_eq!(dump.tables, ibroute.tables);
}

#[test]
fn opensm_tables_on_a_slim_fly_deadlock_on_one_lane_and_our_vls_fix_them() {
    // Slim Fly q = 5, LMC 2, OpenSM's minhop: on one SL the CDG has a cycle; our DFSSSP
    // assignment on the read-back tables makes them deadlock-free within 8 VLs.
    let generated = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 2));
    let topo = sim.run("ibnetdiscover", &[]);
    let topo_path = sim.dir().join("fabric.topo");
    std::fs::write(&topo_path, &topo).unwrap();
    let fabric = ibnetdiscover::parse(&topo, None).unwrap().fabric;
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let lft_path = sm.lfts_dump_path();
    let dump = lfts::parse(&wait_for(&lft_path), &fabric).unwrap();

    let (code, report) = deadlock_check(&[
        "--fabric",
        topo_path.to_str().unwrap(),
        "--lfts",
        lft_path.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("DEADLOCK"), "{report}");

    let one = ibfabric::deadlock::Sl2VlTables::uniform(&fabric, identity_row(8));
    let v = verify(
        &fabric,
        &lids,
        &dump.tables,
        &DefaultSl(0),
        &one,
        &VerifyOptions::default(),
    );
    assert!(!v.is_deadlock_free());
    let a = assign_vls(&fabric, &lids, &dump.tables, &DfssspConfig::default()).unwrap();
    assert!(a.vls_needed >= 2 && a.vls_needed <= 8);
    let v = verify(
        &fabric,
        &lids,
        &dump.tables,
        &a.path_sls,
        &a.sl2vl(&fabric),
        &VerifyOptions::default(),
    );
    assert!(v.is_deadlock_free(), "{v}");
    assert_eq!(v.routes, 850 * 850 - 50 - 200 * 16);
}
