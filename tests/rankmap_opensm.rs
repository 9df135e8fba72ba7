//! `ibfabric rankmap` on a live (simulated) fabric: a shortcut network in ibsim, routed by stock
//! OpenSM (minhop), discovered with `ibnetdiscover`; the hosts named by hostname as a job's host
//! list has them. The hops `rankmap` reports from OpenSM's `opensm-lfts.dump` must be those of
//! minimal routes: the switch distances of the generated network, message by message.

use crate::common;

use std::process::Command;

use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::io::ibsim;
use ibfabric::placement::Collective;
use ibfabric::topology::{SwitchGraph, TopologySpec};

#[test]
fn rankmap_reads_opensm_tables_and_counts_the_hops_of_minimal_routes() {
    let spec: TopologySpec = "shortcut:nodes=32,degree=5,hosts=1,seed=3".parse().unwrap();
    let generated = spec.build().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 0));
    let topo_path = sim.dir().join("fabric.topo");
    std::fs::write(&topo_path, sim.run("ibnetdiscover", &[])).unwrap();

    // Every third switch's host, scrambled; ranks start in this order (--mapping as-listed).
    let ranks: Vec<usize> = (0..11).map(|i| (i * 7 % 11) * 3).collect();
    let hosts_path = sim.dir().join("job.hosts");
    let hosts: Vec<String> = ranks.iter().map(|s| format!("sc{s}-h0")).collect();
    std::fs::write(&hosts_path, hosts.join("\n") + "\n").unwrap();

    let graph = SwitchGraph::new(&generated);
    let switch = |s: usize| {
        let id = generated.node_by_name(&format!("sc{s}")).unwrap();
        (0..graph.len()).find(|&i| graph.node(i) == id).unwrap()
    };
    for collective in Collective::ALL {
        let report_path = sim.dir().join(format!("{collective}.json"));
        let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
            .args(["rankmap", "--fabric"])
            .arg(&topo_path)
            .arg("--lfts")
            .arg(sm.lfts_dump_path())
            .arg("--hosts")
            .arg(&hosts_path)
            .args(["--collective", collective.name(), "--iterations", "5000"])
            .args(["--mapping", "as-listed"])
            .arg("--report")
            .arg(&report_path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        // The expected start: every message's switch distance in the generated network.
        let schedule = collective.schedule(ranks.len());
        let expected: u64 = schedule
            .steps
            .iter()
            .flat_map(|s| &s.messages)
            .map(|&(a, b)| {
                let from = switch(ranks[a as usize]);
                u64::from(graph.distances_from(from)[switch(ranks[b as usize])])
            })
            .sum();
        assert_eq!(
            report["objective_before"].as_u64(),
            Some(expected),
            "{collective}"
        );
        assert!(report["objective_after"].as_u64().unwrap() <= expected);
        // The hostfile names the hosts as the job's list does.
        let text = String::from_utf8(out.stdout).unwrap();
        let mut listed: Vec<&str> = text.lines().map(|l| l.split(' ').next().unwrap()).collect();
        listed.sort_unstable();
        let mut want: Vec<&str> = hosts.iter().map(String::as_str).collect();
        want.sort_unstable();
        assert_eq!(listed, want);
    }
}
