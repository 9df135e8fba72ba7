//! Every command on a live fabric's dumps: the MLFM d = 3, written as an ibsim net file by
//! `ibfabric topo`, runs in ibsim; stock OpenSM assigns LIDs (LMC 2) and routes it (minhop),
//! `ibfabric a2a` computes the MLFM layer layout on the `ibnetdiscover` dump, and OpenSM's
//! `file` engine programs it. The dump names the servers by NodeDescription
//! (`srv0-0-0 HCA-1 mlfm-d3`) and the switches `MF0;leaf0-0:mlfm-d3/U1`, not as the schedule
//! does (`srv0-0-0`, `leaf0-0`): the commands must find them all the same — by the
//! description's host part, by a node-name-map, by GUID — and say which rule they used.
//!
//! The plugin's tables are checked the same way: its MLFM layout (`algorithm: mlfm-a2a`) and its
//! layered routing of the MLFM and of the LSFT n = 3, programmed by OpenSM in ibsim.
//!
//! The simulated part runs once ([`live`]); the tests read its files. `a2a_ibsim.rs` checks the
//! same tables through the library with the generated names given by a map; these tests run
//! the commands as a user does.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::command::{ibfabric, stderr};
use crate::common::plugin::{LAYERED_USED, plugin_config, run_opensm_with_conf, wait_settled};
use crate::common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::collectives::{self, MlfmSpine};
use ibfabric::io::{NodeNameMap, ibnetdiscover, lfts};
use ibfabric::routing::LidTable;
use ibfabric::topology::Construction;
use ibfabric::topology::lsft::Lsft;
use ibfabric::topology::mlfm::Mlfm;

/// The MLFM schedule of the whole d = 3 machine (3 layers, LMC 2), as `a2a` options.
const SCHEDULE: [&str; 9] = ["mlfm", "--d", "3", "--n", "3", "--l", "4", "--m", "3"];

/// The files the simulated fabric left.
struct Live {
    dir: PathBuf,
}

impl Live {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }
}

/// Runs `ibfabric args`; panics with its stderr unless it exits with `status`.
fn run(args: &[&str], status: i32) -> (String, String) {
    let out = ibfabric(args);
    assert_eq!(
        out.status.code(),
        Some(status),
        "ibfabric {args:?}:\n{}",
        stderr(&out)
    );
    let err = stderr(&out);
    (String::from_utf8(out.stdout).unwrap(), err)
}

/// The simulated fabric's files, made once:
/// * `fabric.net`, `generated.map`: `ibfabric topo mlfm --d 3` as an ibsim net file and as a
///   node-name-map (the generated names);
/// * `minhop.topo`, `minhop-lfts.dump`: `ibnetdiscover` and OpenSM's tables after minhop;
/// * `layout.lft`: the MLFM layer layout `a2a --check --lft-out` computed on `minhop.topo`;
/// * `live.topo`, `layout-lfts.dump`: the dump and OpenSM's tables after the `file` engine
///   programmed the layout.
fn live() -> &'static Live {
    static LIVE: OnceLock<Live> = OnceLock::new();
    LIVE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live_dumps-mlfm-d3");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let live = Live { dir };
        let net = live.path("fabric.net");
        run(
            &["topo", "-o", &net, "--format", "ibsim", "mlfm", "--d", "3"],
            0,
        );
        let map = live.path("generated.map");
        run(
            &[
                "topo",
                "-o",
                &map,
                "--format",
                "node-name-map",
                "mlfm",
                "--d",
                "3",
            ],
            0,
        );
        let sim = Ibsim::start(&std::fs::read_to_string(&net).unwrap());
        let minhop = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 2));
        std::fs::write(live.path("minhop.topo"), sim.run("ibnetdiscover", &[])).unwrap();
        std::fs::copy(minhop.lfts_dump_path(), live.path("minhop-lfts.dump")).unwrap();
        drop(minhop);

        // The layout on the dump's LIDs: needs every server and switch found by description.
        let layout = live.path("layout.lft");
        let mut args = SCHEDULE.to_vec();
        let topo = live.path("minhop.topo");
        args.extend(["--check", "--fabric", &topo, "--lft-out", &layout]);
        run(&[&["a2a"], args.as_slice()].concat(), 0);

        let mut options = OpenSmOptions::new("file", 2);
        options.extra_args = vec!["-U".into(), layout.clone()];
        let file = OpenSm::start(&sim, &options);
        std::fs::write(live.path("live.topo"), sim.run("ibnetdiscover", &[])).unwrap();
        std::fs::copy(file.lfts_dump_path(), live.path("layout-lfts.dump")).unwrap();
        live
    })
}

/// Servers and switches of the MLFM d = 3, as the construction builds it.
fn sizes() -> (usize, usize) {
    let generated = Mlfm::new(3).unwrap().build();
    (generated.hosts().count(), generated.switches().count())
}

/// `ibfabric a2a <SCHEDULE> --check --format json -v` with `extra` options: the report and
/// stderr.
fn a2a_check(extra: &[&str], status: i32) -> (serde_json::Value, String) {
    let args = [
        &["a2a"],
        &SCHEDULE[..],
        &["--check", "--format", "json", "-v"],
        extra,
    ]
    .concat();
    let (out, err) = run(&args, status);
    (serde_json::from_str(&out).unwrap(), err)
}

#[test]
fn the_dump_names_servers_by_description_not_as_the_schedule_does() {
    let live = live();
    let text = std::fs::read_to_string(live.path("live.topo")).unwrap();
    let dump = ibnetdiscover::parse(&text, None).unwrap().fabric;
    assert_eq!(dump.node_by_name("srv0-0-0"), None);
    assert!(dump.node_by_name("srv0-0-0 HCA-1 mlfm-d3").is_some());
}

#[test]
fn a2a_checks_the_schedule_on_opensms_tables_finding_servers_by_description() {
    let live = live();
    let (core, _) = a2a_check(&[], 0);
    let (fabric, lfts) = (live.path("live.topo"), live.path("layout-lfts.dump"));
    let (report, err) = a2a_check(&["--fabric", &fabric, "--lfts", &lfts], 0);
    // The same verdict as on the core's layout: congestion-free.
    assert_eq!(report["check"]["congestion_free"], true, "{report}");
    assert_eq!(report["throughput_ratio"], core["throughput_ratio"]);
    let (servers, _) = sizes();
    assert!(
        err.contains(&format!(
            "the schedule's {servers} servers found: {servers} by NodeDescription's host part"
        )),
        "{err}"
    );
}

#[test]
fn a2a_finds_the_servers_by_node_name_map() {
    let live = live();
    let (fabric, lfts, map) = (
        live.path("live.topo"),
        live.path("layout-lfts.dump"),
        live.path("generated.map"),
    );
    let (by_description, _) = a2a_check(&["--fabric", &fabric, "--lfts", &lfts], 0);
    let (by_map, err) = a2a_check(
        &[
            "--fabric",
            &fabric,
            "--lfts",
            &lfts,
            "--node-name-map",
            &map,
        ],
        0,
    );
    assert_eq!(by_map["check"], by_description["check"]);
    let (servers, switches) = sizes();
    assert!(
        err.contains(&format!("servers found: {servers} by node-name-map")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "the {switches} switches of mlfm-d3 found: {switches} by node-name-map"
        )),
        "{err}"
    );
}

/// The library's check of [`SCHEDULE`] on the dump at `fabric` and the tables at `lfts`, the
/// servers named by the generated node-name-map.
fn library_check(fabric: &str, lfts: &str) -> collectives::CongestionReport {
    let names = NodeNameMap::from_fabric(&Mlfm::new(3).unwrap().build());
    let dump = std::fs::read_to_string(fabric).unwrap();
    let dump = ibnetdiscover::parse(&dump, Some(&names)).unwrap().fabric;
    let tables = lfts::parse(&std::fs::read_to_string(lfts).unwrap(), &dump).unwrap();
    let lids = LidTable::from_fabric(&dump).unwrap();
    let schedule = collectives::mlfm(3, 3, 4, 3, MlfmSpine::BySource).unwrap();
    collectives::check(&dump, &lids, &tables.tables, &schedule).unwrap()
}

/// The MLFM d = 3 of [`live`] in a new ibsim, routed by the plugin with `options` (its YAML;
/// `qos TRUE`, LMC 2): the `ibnetdiscover` dump and OpenSM's tables, as `<name>.topo` and
/// `<name>-lfts.dump` in the live directory.
fn routed_by_plugin(options: &str, name: &str) -> (String, String) {
    let live = live();
    let sim = Ibsim::start(&std::fs::read_to_string(live.path("fabric.net")).unwrap());
    let config = plugin_config(&sim, "layered.yaml", options);
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    wait_settled(&sm, 0);
    assert!(sm.log().contains(LAYERED_USED), "{}", sm.log());
    let (topo, dump) = (
        live.path(&format!("{name}.topo")),
        live.path(&format!("{name}-lfts.dump")),
    );
    std::fs::write(&topo, sim.run("ibnetdiscover", &[])).unwrap();
    std::fs::copy(sm.lfts_dump_path(), &dump).unwrap();
    (topo, dump)
}

/// The plugin's MLFM layout (`algorithm: mlfm-a2a`) as OpenSM programmed it: the schedule is
/// congestion-free on the dumps (throughput ratio 1.0, as on the core's layout), whether the
/// servers are found by their NodeDescriptions or by a node-name-map.
#[test]
fn a2a_checks_the_schedule_on_the_plugins_mlfm_layout_by_description_and_by_map() {
    let (fabric, lfts) = routed_by_plugin("algorithm: mlfm-a2a\n", "plugin-mlfm-a2a");
    let (core, _) = a2a_check(&[], 0);
    assert_eq!(core["throughput_ratio"], 1.0, "{core}");
    let (by_description, err) = a2a_check(&["--fabric", &fabric, "--lfts", &lfts], 0);
    assert_eq!(
        by_description["check"]["congestion_free"], true,
        "{by_description}"
    );
    assert_eq!(by_description["throughput_ratio"], core["throughput_ratio"]);
    let (servers, switches) = sizes();
    assert!(
        err.contains(&format!(
            "servers found: {servers} by NodeDescription's host part"
        )),
        "{err}"
    );
    let map = live().path("generated.map");
    let by_map = [
        "--fabric",
        &fabric,
        "--lfts",
        &lfts,
        "--node-name-map",
        &map,
    ];
    let (by_map, err) = a2a_check(&by_map, 0);
    assert_eq!(by_map["check"], by_description["check"]);
    assert!(
        err.contains(&format!(
            "the {switches} switches of mlfm-d3 found: {switches} by node-name-map"
        )),
        "{err}"
    );
}

/// The plugin's layered routing (the default algorithm) as OpenSM programmed it: `a2a --check`
/// on the dumps gives the verdict the library's checker gives on the same tables.
#[test]
fn a2a_on_the_plugins_layered_tables_agrees_with_the_checker_on_the_same_dumps() {
    let (fabric, lfts) = routed_by_plugin("algorithm: layered\n", "plugin-layered");
    let want = library_check(&fabric, &lfts);
    eprintln!(
        "layered plugin, MLFM d = 3 schedule: throughput ratio {}, busiest link {} flows",
        want.throughput_ratio, want.max_link_flows
    );
    let status = if want.congestion_free { 0 } else { 1 };
    let (report, _) = a2a_check(&["--fabric", &fabric, "--lfts", &lfts], status);
    assert_eq!(
        report["throughput_ratio"].as_f64(),
        Some(want.throughput_ratio)
    );
    assert_eq!(
        report["check"]["max_link_flows"].as_u64(),
        Some(u64::from(want.max_link_flows))
    );
}

#[test]
fn a2a_on_minhops_tables_agrees_with_the_checker_on_the_same_dumps() {
    let live = live();
    let (fabric, lfts) = (live.path("minhop.topo"), live.path("minhop-lfts.dump"));
    // Minhop does not realise the source-chosen spines: congested, exit status 1.
    let (report, _) = a2a_check(&["--fabric", &fabric, "--lfts", &lfts], 1);
    // The library's checker on the same files, the servers named by the generated map.
    let want = library_check(&fabric, &lfts);
    assert!(want.throughput_ratio < 1.0);
    assert_eq!(
        report["throughput_ratio"].as_f64(),
        Some(want.throughput_ratio)
    );
    assert_eq!(
        report["check"]["max_link_flows"].as_u64(),
        Some(u64::from(want.max_link_flows))
    );
}

#[test]
fn rankmap_takes_a_site_map_and_a_host_list_in_its_names() {
    let live = live();
    let generated = Mlfm::new(3).unwrap().build();
    // The site calls its servers cn01.. (node-name-map), the job lists six of them.
    let mut site = NodeNameMap::new();
    let hosts: Vec<_> = generated.hosts().collect();
    for (i, &h) in hosts.iter().enumerate() {
        site.insert(generated.node(h).guid, format!("cn{:02}", i + 1));
    }
    let map = live.dir.join("site.map");
    std::fs::write(&map, site.write()).unwrap();
    let job: Vec<String> = [3, 17, 1, 30, 8, 22]
        .iter()
        .map(|i| format!("cn{i:02}"))
        .collect();
    let list = live.dir.join("job.hosts");
    std::fs::write(&list, job.join("\n") + "\n").unwrap();
    let (out, err) = run(
        &[
            "rankmap",
            "-v",
            "--fabric",
            &live.path("live.topo"),
            "--lfts",
            &live.path("layout-lfts.dump"),
            "--node-name-map",
            map.to_str().unwrap(),
            "--hosts",
            list.to_str().unwrap(),
            "--collective",
            "allreduce",
            "--iterations",
            "200",
            "--format",
            "slurm",
        ],
        0,
    );
    assert!(err.contains("6 hosts found: 6 by node-name-map"), "{err}");
    let mut written: Vec<&str> = out.lines().collect();
    written.sort_unstable();
    let mut want: Vec<&str> = job.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(written, want);
}

#[test]
fn simgrid_takes_hosts_by_guid() {
    let live = live();
    let text = std::fs::read_to_string(live.path("live.topo")).unwrap();
    let dump = ibnetdiscover::parse(&text, None).unwrap().fabric;
    let guids: Vec<String> = dump
        .hosts()
        .take(4)
        .map(|h| dump.node(h).guid.to_string())
        .collect();
    let list = live.dir.join("guids.hosts");
    std::fs::write(&list, guids.join("\n") + "\n").unwrap();
    let out = live.dir.join("platform.xml");
    let (_, err) = run(
        &[
            "simgrid",
            "-v",
            "--fabric",
            &live.path("live.topo"),
            "--lfts",
            &live.path("layout-lfts.dump"),
            "--hosts",
            list.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        0,
    );
    assert!(err.contains("4 hosts found: 4 by GUID"), "{err}");
}

#[test]
fn a_name_the_dump_lacks_is_an_error_naming_the_list_line_and_the_nearest_hosts() {
    let live = live();
    let list = live.dir.join("typo.hosts");
    std::fs::write(&list, "srv0-0-0\n# spare\nsrv0-0-9\n").unwrap();
    let (_, err) = run(
        &[
            "rankmap",
            "--fabric",
            &live.path("live.topo"),
            "--lfts",
            &live.path("layout-lfts.dump"),
            "--hosts",
            list.to_str().unwrap(),
            "--collective",
            "bcast",
        ],
        2,
    );
    assert!(
        err.contains("typo.hosts: line 3: expected a host of ibnetdiscover (by node name"),
        "{err}"
    );
    assert!(
        err.contains("; nearest: \"srv0-0-0\", \"srv0-0-1\", \"srv0-0-2\"), found \"srv0-0-9\""),
        "{err}"
    );
}

#[test]
fn simulate_runs_the_schedule_on_the_dump_finding_its_ranks_by_description() {
    let live = live();
    let (out, err) = run(
        &[
            "simulate",
            "-v",
            "--fabric",
            &live.path("live.topo"),
            "--lfts",
            &live.path("layout-lfts.dump"),
            "--schedule",
            "mlfm:d=3,n=3,l=4,m=3",
            "--pattern",
            "schedule",
            "--bytes",
            "4096",
            "--iterations",
            "1",
            "--format",
            "json",
        ],
        0,
    );
    let (servers, _) = sizes();
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ranks"].as_u64(), Some(servers as u64));
    assert!(
        err.contains(&format!(
            "the schedule's {servers} ranks found: {servers} by NodeDescription's host part"
        )),
        "{err}"
    );
}

/// The NodeDescription a ConnectX-6 reports before the site sets a hostname.
const DEFAULT_HCA_DESCRIPTION: &str = "MT4123 ConnectX6   Mellanox Technologies";

#[test]
fn a2a_finds_servers_by_the_constructions_guids_when_descriptions_name_no_host() {
    // The project's net file with every server's description the HCA's default, so that the
    // dump names servers by ibnetdiscover id and no hostname can be read from it.
    let net = run(&["topo", "--format", "ibsim", "mlfm", "--d", "3"], 0).0;
    let net: String = net
        .lines()
        .map(|line| match line.split_once("\t\t# \"") {
            Some((head, _)) if line.starts_with("Ca") => {
                format!("{head}\t\t# \"{DEFAULT_HCA_DESCRIPTION}\"\n")
            }
            _ => format!("{line}\n"),
        })
        .collect();
    let (servers, switches) = sizes();
    assert_eq!(net.matches(DEFAULT_HCA_DESCRIPTION).count(), servers);
    let sim = Ibsim::start(&net);
    let _sm = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 2));
    let dump = sim.dir().join("anonymous.topo");
    std::fs::write(&dump, sim.run("ibnetdiscover", &[])).unwrap();
    let dump = dump.to_str().unwrap();
    let fabric = ibnetdiscover::parse(&std::fs::read_to_string(dump).unwrap(), None)
        .unwrap()
        .fabric;
    assert!(
        fabric
            .hosts()
            .all(|h| fabric.node(h).name.starts_with("H-"))
    );

    // The layout computed on the dump's LIDs: servers by GUID, switches by description.
    let (core, _) = a2a_check(&[], 0);
    let (report, err) = a2a_check(&["--fabric", dump], 0);
    assert_eq!(report["throughput_ratio"], core["throughput_ratio"]);
    assert!(
        err.contains(&format!("servers found: {servers} by construction's GUID")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "the {switches} switches of mlfm-d3 found: {switches} by NodeDescription's host part"
        )),
        "{err}"
    );
}

#[test]
fn a2a_checks_the_latin_square_schedule_on_minhops_tables_of_the_lsft() {
    let net = run(&["topo", "--format", "ibsim", "lsft", "--n", "3"], 0).0;
    let sim = Ibsim::start(&net);
    let sm = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 0));
    let dump = sim.dir().join("lsft.topo");
    std::fs::write(&dump, sim.run("ibnetdiscover", &[])).unwrap();
    let lfts = sm.lfts_dump_path();
    let check = |extra: &[&str], status: i32| {
        let args = [
            &[
                "a2a", "lsft", "--n", "3", "--check", "--format", "json", "-v",
            ],
            extra,
        ]
        .concat();
        let (out, err) = run(&args, status);
        (
            serde_json::from_str::<serde_json::Value>(&out).unwrap(),
            err,
        )
    };
    let (core, _) = check(&[], 0);
    let (live, err) = check(
        &[
            "--fabric",
            dump.to_str().unwrap(),
            "--lfts",
            lfts.to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(live["check"]["congestion_free"], true, "{live}");
    assert_eq!(live["throughput_ratio"], core["throughput_ratio"]);
    let servers = core["ranks"].as_array().unwrap().len();
    assert!(
        err.contains(&format!(
            "servers found: {servers} by NodeDescription's host part"
        )),
        "{err}"
    );
}

/// The LSFT n = 3 routed by the plugin (layered, `qos TRUE`, LMC 2): `a2a lsft --check` on the
/// dumps finds the servers by NodeDescription and by node-name-map alike, and gives the verdict
/// the library's checker gives on the same tables.
#[test]
fn a2a_on_the_plugins_layered_tables_of_the_lsft_agrees_with_the_checker() {
    let net = run(&["topo", "--format", "ibsim", "lsft", "--n", "3"], 0).0;
    let sim = Ibsim::start(&net);
    let map = sim.dir().join("generated.map");
    let map_text = run(
        &["topo", "--format", "node-name-map", "lsft", "--n", "3"],
        0,
    )
    .0;
    std::fs::write(&map, map_text).unwrap();
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    wait_settled(&sm, 0);
    assert!(sm.log().contains(LAYERED_USED), "{}", sm.log());
    let dump = sim.dir().join("lsft.topo");
    std::fs::write(&dump, sim.run("ibnetdiscover", &[])).unwrap();
    let lfts = sim.dir().join("lsft-lfts.dump");
    std::fs::copy(sm.lfts_dump_path(), &lfts).unwrap();

    let generated = Lsft::new(3).unwrap().build();
    let names = NodeNameMap::from_fabric(&generated);
    let fabric = ibnetdiscover::parse(&std::fs::read_to_string(&dump).unwrap(), Some(&names))
        .unwrap()
        .fabric;
    let tables = lfts::parse(&std::fs::read_to_string(&lfts).unwrap(), &fabric).unwrap();
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let schedule = collectives::lsft_full(3).unwrap();
    let want = collectives::check(&fabric, &lids, &tables.tables, &schedule).unwrap();
    eprintln!(
        "layered plugin, LSFT n = 3 schedule: throughput ratio {}, busiest link {} flows",
        want.throughput_ratio, want.max_link_flows
    );
    let status = if want.congestion_free { 0 } else { 1 };
    let (dump, lfts, map) = (
        dump.to_str().unwrap(),
        lfts.to_str().unwrap(),
        map.to_str().unwrap(),
    );
    let check = |extra: &[&str]| {
        let base = [
            "a2a", "lsft", "--n", "3", "--check", "--format", "json", "-v",
        ];
        let (out, err) = run(&[&base[..], extra].concat(), status);
        (
            serde_json::from_str::<serde_json::Value>(&out).unwrap(),
            err,
        )
    };
    let (by_description, err) = check(&["--fabric", dump, "--lfts", lfts]);
    let servers = generated.hosts().count();
    assert!(
        err.contains(&format!(
            "servers found: {servers} by NodeDescription's host part"
        )),
        "{err}"
    );
    assert_eq!(
        by_description["throughput_ratio"].as_f64(),
        Some(want.throughput_ratio)
    );
    assert_eq!(
        by_description["check"]["max_link_flows"].as_u64(),
        Some(u64::from(want.max_link_flows))
    );
    let (by_map, err) = check(&["--fabric", dump, "--lfts", lfts, "--node-name-map", map]);
    assert!(
        err.contains(&format!("servers found: {servers} by node-name-map")),
        "{err}"
    );
    assert_eq!(by_map["check"], by_description["check"]);
}
