//! `ibfabric simgrid` and `ibfabric simulate` end to end, with SimGrid's real smpicc and
//! smpirun (libsimgrid-dev): a routing that sends every inter-leaf message of a fat tree over
//! one spine makes an all-to-all slower than a minimal routing that spreads it over the spines.

use std::path::Path;

use crate::command::{ibfabric, stderr};
use ibfabric::io::lfts;
use ibfabric::routing::{Algorithm, ForwardingTables, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::{Fabric, NodeId, TopologySpec};

/// Four leaves, two spines, two hosts per leaf: every leaf reaches every other leaf over
/// either spine. (The core's own minimal routing picks one spine per destination leaf, so in
/// a shift phase a leaf's two hosts, sending to one leaf, share an uplink there too: the
/// deliberately balanced routing below spreads by destination host instead.)
const FAT_TREE: &str = "fattree:leaves=4,spines=2,links-per-pair=1,hosts-per-leaf=2";

fn fabric() -> Fabric {
    let mut fabric = FAT_TREE.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, 0).unwrap();
    fabric
}

/// The core's balanced minimal routing (one layer).
fn balanced(fabric: &Fabric) -> (ibfabric::routing::LidTable, ForwardingTables) {
    let config = RoutingConfig {
        layers: 1,
        algorithm: Algorithm::Minimal,
        seed: 1,
        ..Default::default()
    };
    let routed = route_fabric(fabric, &config).unwrap();
    (routed.lids, routed.tables)
}

/// The switches with hosts (leaves) and the switches without (spines).
fn leaves_and_spines(fabric: &Fabric) -> (Vec<NodeId>, Vec<NodeId>) {
    let has_host = |s: &NodeId| {
        fabric
            .neighbours(*s)
            .any(|(_, peer)| !fabric.node(peer.node).is_switch())
    };
    fabric.switches().partition(has_host)
}

/// The core's tables with each leaf sending the LID of the k-th host (node order) of another
/// leaf up to spine `spine_of(k)`; the spines deliver as the core routes them (a spine reaches
/// each leaf over its one cable).
fn up_by_host(fabric: &Fabric, spine_of: impl Fn(usize) -> usize) -> ForwardingTables {
    let (_, mut tables) = balanced(fabric);
    let (leaves, spines) = leaves_and_spines(fabric);
    for &leaf in &leaves {
        for (k, host) in fabric.hosts().enumerate() {
            let (port, peer) = fabric.neighbours(host).next().unwrap();
            if peer.node == leaf {
                continue;
            }
            let spine = spines[spine_of(k) % spines.len()];
            let up = fabric
                .neighbours(leaf)
                .find(|(_, peer)| peer.node == spine)
                .map(|(p, _)| p)
                .unwrap();
            tables.set(leaf, fabric.node(host).ports[usize::from(port)].lid, up);
        }
    }
    tables
}

/// Uncongested: consecutive hosts of a leaf are reached over different spines, so the two
/// messages a leaf's hosts send to one leaf (or receive from one) in a shift phase never share
/// a cable.
fn spread_over_spines(fabric: &Fabric) -> ForwardingTables {
    up_by_host(fabric, |k| k)
}

/// Congested: every inter-leaf message crosses the first spine.
fn one_spine(fabric: &Fabric) -> ForwardingTables {
    up_by_host(fabric, |_| 0)
}

fn write_tables(dir: &Path, name: &str, fabric: &Fabric, tables: &ForwardingTables) -> String {
    let lids = ibfabric::routing::LidTable::from_fabric(fabric).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, lfts::write_ibroute(fabric, &lids, tables)).unwrap();
    path.to_str().unwrap().to_string()
}

fn simulated_seconds(lfts: &str, pattern: &str) -> f64 {
    let out = ibfabric(&[
        "simulate",
        "--fabric",
        FAT_TREE,
        "--lfts",
        lfts,
        "--pattern",
        pattern,
        "--bytes",
        "262144",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ranks"], 8);
    let seconds = report["simulated_seconds"].as_f64().unwrap();
    assert!(seconds > 0.0, "{report}");
    assert!(report["effective_bandwidth_gbps"].as_f64().unwrap() > 0.0);
    seconds
}

#[test]
fn an_all_to_all_over_one_spine_takes_longer_than_spread_over_the_spines() {
    let dir = tempfile::tempdir().unwrap();
    let fabric = fabric();
    let spread = write_tables(
        dir.path(),
        "spread.lfts",
        &fabric,
        &spread_over_spines(&fabric),
    );
    let congested = write_tables(dir.path(), "one-spine.lfts", &fabric, &one_spine(&fabric));
    let fast = simulated_seconds(&spread, "alltoall");
    let slow = simulated_seconds(&congested, "alltoall");
    assert!(slow > fast, "one spine {slow} s, spread {fast} s");
}

#[test]
fn a_shift_all_to_all_in_phases_over_one_spine_takes_longer_too() {
    let dir = tempfile::tempdir().unwrap();
    let fabric = fabric();
    let spread = write_tables(
        dir.path(),
        "spread.lfts",
        &fabric,
        &spread_over_spines(&fabric),
    );
    let congested = write_tables(dir.path(), "one-spine.lfts", &fabric, &one_spine(&fabric));
    let fast = simulated_seconds(&spread, "shift");
    let slow = simulated_seconds(&congested, "shift");
    assert!(slow > fast, "one spine {slow} s, spread {fast} s");
}

#[test]
fn the_platform_has_a_host_per_rank_and_a_route_per_ordered_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (platform, hostfile) = (dir.path().join("p.xml"), dir.path().join("hosts.txt"));
    let out = ibfabric(&[
        "simgrid",
        "--fabric",
        FAT_TREE,
        "--layers",
        "2",
        "--out",
        platform.to_str().unwrap(),
        "--hostfile",
        hostfile.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hosts = fabric().hosts().count();
    let xml = std::fs::read_to_string(&platform).unwrap();
    assert_eq!(xml.matches("<host ").count(), hosts);
    assert_eq!(xml.matches("<route ").count(), hosts * (hosts - 1));
    assert_eq!(
        xml.matches("symmetrical=\"NO\"").count(),
        hosts * (hosts - 1)
    );
    let lines: Vec<String> = std::fs::read_to_string(&hostfile)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), hosts);
    for host in &lines {
        assert!(xml.contains(&format!("<host id=\"{host}\"")), "{host}");
    }
}

#[test]
fn without_smpicc_the_error_says_what_to_install() {
    let empty = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args([
            "simulate",
            "--fabric",
            FAT_TREE,
            "--pattern",
            "bcast",
            "--bytes",
            "1024",
        ])
        .env("PATH", empty.path())
        .env("XDG_CACHE_HOME", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("install libsimgrid-dev"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failing_smpirun_is_reported_with_its_stderr() {
    let out = ibfabric(&[
        "simulate",
        "--fabric",
        FAT_TREE,
        "--pattern",
        "bcast",
        "--bytes",
        "1024",
        "--smpi-cfg",
        "no-such/option:1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("smpirun failed"), "{err}");
    assert!(err.contains("no-such/option"), "{err}");
}

/// `ibfabric simulate` on the core's layered routing of a small Slim Fly; the report.
fn simulate_slim_fly(layers: &str, policy: &str, pattern: &str) -> serde_json::Value {
    simulate_slim_fly_with(layers, policy, pattern, &[])
}

/// As [`simulate_slim_fly`], with more options.
fn simulate_slim_fly_with(
    layers: &str,
    policy: &str,
    pattern: &str,
    more: &[&str],
) -> serde_json::Value {
    let out = ibfabric_with(
        &[
            "simulate",
            "--fabric",
            "slimfly:q=3",
            "--algorithm",
            "layered",
            "--layers",
            layers,
            "--layer-policy",
            policy,
            "--pattern",
            pattern,
            "--bytes",
            "1048576",
            "--format",
            "json",
        ],
        more,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `ibfabric` with `args` followed by `more`.
fn ibfabric_with(args: &[&str], more: &[&str]) -> std::process::Output {
    let all: Vec<&str> = args.iter().chain(more).copied().collect();
    ibfabric(&all)
}

#[test]
fn parallel_flows_have_one_host_per_layer_and_one_rank_per_layer_and_rank() {
    let dir = tempfile::tempdir().unwrap();
    let (platform, hostfile) = (dir.path().join("p.xml"), dir.path().join("hosts.txt"));
    let out = ibfabric(&[
        "simgrid",
        "--fabric",
        FAT_TREE,
        "--layers",
        "2",
        "--layer-policy",
        "parallel",
        "--out",
        platform.to_str().unwrap(),
        "--hostfile",
        hostfile.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hosts = 2 * fabric().hosts().count();
    let xml = std::fs::read_to_string(&platform).unwrap();
    assert_eq!(xml.matches("<host ").count(), hosts);
    assert_eq!(xml.matches("<route ").count(), hosts * (hosts - 1));
    let lines = std::fs::read_to_string(&hostfile).unwrap();
    let distinct: std::collections::HashSet<&str> = lines.lines().collect();
    assert_eq!(lines.lines().count(), hosts);
    assert_eq!(distinct.len(), hosts, "every rank copy on its own host");
}

#[test]
fn parallel_flows_over_one_layer_are_the_fixed_layer() {
    let one = simulate_slim_fly("1", "parallel", "permutation");
    let fixed = simulate_slim_fly("1", "fixed:0", "permutation");
    assert_eq!(one["hosts"], fixed["hosts"]);
    assert_eq!(one["simulated_seconds"], fixed["simulated_seconds"]);
}

#[test]
fn adversarial_traffic_split_over_four_layered_paths_beats_one_layer() {
    let parallel = simulate_slim_fly("4", "parallel", "adversarial");
    let fixed = simulate_slim_fly("4", "fixed:0", "adversarial");
    assert_eq!(parallel["ranks"], fixed["ranks"]);
    assert_eq!(parallel["bytes_per_rank"], fixed["bytes_per_rank"]);
    let (split, one) = (
        parallel["simulated_seconds"].as_f64().unwrap(),
        fixed["simulated_seconds"].as_f64().unwrap(),
    );
    assert!(split < one, "parallel {split} s, layer 0 {one} s");
}

#[test]
fn parallel_flows_refuse_mpi_collectives() {
    for pattern in ["alltoall", "allreduce", "bcast"] {
        let out = ibfabric(&[
            "simulate",
            "--fabric",
            FAT_TREE,
            "--layers",
            "2",
            "--layer-policy",
            "parallel",
            "--pattern",
            pattern,
            "--bytes",
            "1024",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("phase pattern"), "{}", stderr(&out));
    }
}

#[test]
fn ucx_splits_a_rendezvous_message_over_two_hosts_per_endpoint() {
    let split = simulate_slim_fly("4", "ucx:2", "permutation");
    let whole = simulate_slim_fly("4", "fixed:0", "permutation");
    assert_eq!(split["ranks"], whole["ranks"]);
    assert_eq!(
        split["hosts"].as_u64().unwrap(),
        2 * whole["hosts"].as_u64().unwrap()
    );
    assert_eq!(split["bytes_per_rank"], whole["bytes_per_rank"]);
    let policy = split["layer_policy"].as_str().unwrap();
    assert!(
        policy.starts_with("ucx:2 (rendezvous split over layers 0..1"),
        "{policy}"
    );
}

#[test]
fn ucx_is_the_default_layer_policy_of_simulate() {
    let default = simulate_slim_fly_with("4", "ucx", "permutation", &[]);
    let out = ibfabric(&[
        "simulate",
        "--fabric",
        "slimfly:q=3",
        "--algorithm",
        "layered",
        "--layers",
        "4",
        "--pattern",
        "permutation",
        "--bytes",
        "1048576",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let unset: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(unset["layer_policy"], default["layer_policy"]);
    assert_eq!(unset["simulated_seconds"], default["simulated_seconds"]);
    let policy = unset["layer_policy"].as_str().unwrap();
    assert!(policy.starts_with("ucx:2 "), "{policy}");
}

#[test]
fn ucx_sends_a_message_up_to_the_threshold_whole_on_layer_zero() {
    let eager = simulate_slim_fly_with("4", "ucx:2", "adversarial", &["--rndv-thresh", "1048576"]);
    let fixed = simulate_slim_fly("4", "fixed:0", "adversarial");
    assert_eq!(eager["hosts"], fixed["hosts"]);
    assert_eq!(eager["simulated_seconds"], fixed["simulated_seconds"]);
    let policy = eager["layer_policy"].as_str().unwrap();
    assert!(policy.contains("eager on layer 0"), "{policy}");
}

#[test]
fn adversarial_traffic_split_by_ucx_over_two_layered_paths_beats_one_layer() {
    let split = simulate_slim_fly("4", "ucx:2", "adversarial");
    let one = simulate_slim_fly("4", "fixed:0", "adversarial");
    let (split, one) = (
        split["simulated_seconds"].as_f64().unwrap(),
        one["simulated_seconds"].as_f64().unwrap(),
    );
    assert!(split < one, "ucx:2 {split} s, layer 0 {one} s");
}

#[test]
fn ucx_over_four_layers_is_the_parallel_split() {
    let ucx = simulate_slim_fly("4", "ucx:4", "half-shift");
    let parallel = simulate_slim_fly("4", "parallel", "half-shift");
    assert_eq!(ucx["hosts"], parallel["hosts"]);
    assert_eq!(ucx["simulated_seconds"], parallel["simulated_seconds"]);
}

#[test]
fn ucx_with_more_rails_than_layers_is_refused() {
    let out = ibfabric(&[
        "simulate",
        "--fabric",
        "slimfly:q=3",
        "--layers",
        "2",
        "--layer-policy",
        "ucx:4",
        "--pattern",
        "permutation",
        "--bytes",
        "1024",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("ucx:4"), "{err}");
    assert!(err.contains("at most 2"), "{err}");
}

#[test]
fn ucx_refuses_to_split_mpi_collectives_but_sends_small_ones_on_layer_zero() {
    let run = |bytes: &str| {
        ibfabric(&[
            "simulate",
            "--fabric",
            FAT_TREE,
            "--layers",
            "2",
            "--layer-policy",
            "ucx:2",
            "--pattern",
            "allreduce",
            "--bytes",
            bytes,
        ])
    };
    let large = run("65536");
    assert_eq!(large.status.code(), Some(2), "{}", stderr(&large));
    assert!(
        stderr(&large).contains("cannot be split"),
        "{}",
        stderr(&large)
    );
    let small = run("1024");
    assert!(small.status.success(), "{}", stderr(&small));
}
