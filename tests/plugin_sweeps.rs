//! The plugin across OpenSM's sweeps, on the real stack (ibsim + stock OpenSM, LMC 2,
//! `qos TRUE`): an unchanged subnet is not routed again; cables cut while OpenSM runs are
//! routed around, complete and deadlock-free, and restoring them restores the original
//! routing; a cabling plan's differences are logged before routing; a plugin built for another
//! OpenSM version is refused by the daemon, which goes on with its own engines.

use crate::common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::plugin::{
    LAYERED_USED, MINHOP_USED, canonical, plugin_config, plugin_dir, run_opensm_with_conf,
    wait_settled,
};
use common::readback::{ReadBack, core_routing, sa_sls};
use common::{Ibsim, OpenSm, OpenSmOptions, SUBNET_UP};
use ibfabric::Fabric;
use ibfabric::analysis::{self, Options};
use ibfabric::deadlock::SchemeChoice;
use ibfabric::io::ibsim;
use ibfabric::plan::build::{PlanOptions, plan_for};
use ibfabric::plan::document::PlanDocument;
use ibfabric::rng::Rng;
use ibfabric::routing::walk::{DestWalk, NONE, Network};
use ibfabric::topology::TopologySpec;
use ibfabric::verify::wiring::Wiring;

/// The plugin's line for a computed routing of the whole Slim Fly q = 5.
const ROUTED: &str = "layered: routed 50 switches, 850 LIDs, 4 layers";

/// The start of the plugin's line for a repair.
const REPAIRED: &str = "layered: repaired after losing";

fn slim_fly_q5() -> Fabric {
    common::generated("slimfly:q=5")
}

/// Reads the fabric back and checks it against the core: tables equal, complete, deadlock-free
/// with the SLs the SA answers. Returns the read-back and the analyser's report.
fn check(sim: &Ibsim, sm: &OpenSm, sa_per_switch: usize) -> (ReadBack, analysis::Report) {
    let read = ReadBack::read(sim, sm);
    let canon = canonical(&read.fabric);
    let expected = core_routing(&canon, &SchemeChoice::Auto.schemes(8));
    read.assert_equals(&canon, &expected);
    let report = analysis::analyze(&read.fabric, &read.lids, &read.tables, &Options::default());
    assert!(report.is_complete(), "{report}");
    assert_eq!(report.layers, 4);
    read.assert_sa_answers(sim, sa_sls(&expected), 3, sa_per_switch);
    read.assert_deadlock_free(&expected, "read back");
    (read, report)
}

/// Per ordered switch pair (s, t) of a read-back, t with hosts, keyed by the switches' GUIDs:
/// the edge-disjoint paths among the routes of the 4 layers, each walked through the tables
/// read back towards the LID of t's first host with that layer's offset.
fn disjoint_paths(read: &ReadBack) -> HashMap<(u64, u64), u8> {
    let net = Network::new(&read.fabric, &read.lids);
    let guid = |s: usize| read.fabric.node(net.switches[s]).guid.0;
    let mut walk = DestWalk::new(net.len());
    let mut counts = HashMap::new();
    for t in 0..net.len() {
        let Some(host) = net.endpoints_at(t).first() else {
            continue;
        };
        let mut edges = vec![Vec::new(); net.len()];
        for layer in 0..4 {
            walk.walk(&net, &read.tables, &net.endpoint_dest(host, layer), |_| {
                NONE
            });
            for (s, edges) in edges.iter_mut().enumerate() {
                let links = walk.path(&net, s).map(|l| &net.links[l as usize]);
                edges.extend(
                    links
                        .filter(|link| link.between_switches())
                        .map(|link| (link.from_switch, link.to_switch)),
                );
            }
        }
        for (s, edges) in edges.iter().enumerate().filter(|&(s, _)| s != t) {
            counts.insert((guid(s), guid(t)), max_flow(edges, s as u32, t as u32));
        }
    }
    counts
}

/// Edge-disjoint s → t paths in the union of the directed `edges` (each distinct edge once).
fn max_flow(edges: &[(u32, u32)], s: u32, t: u32) -> u8 {
    let mut residual: HashMap<(u32, u32), u8> = HashMap::new();
    for &(a, b) in edges {
        residual.insert((a, b), 1);
        residual.entry((b, a)).or_insert(0);
    }
    let mut flow = 0;
    loop {
        // Breadth-first search for an augmenting path, remembering each switch's predecessor.
        let mut via: HashMap<u32, u32> = HashMap::from([(s, s)]);
        let mut queue = std::collections::VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            for (&(a, b), &c) in &residual {
                if a == v && c > 0 && !via.contains_key(&b) {
                    via.insert(b, a);
                    queue.push_back(b);
                }
            }
        }
        if !via.contains_key(&t) {
            return flow;
        }
        let mut v = t;
        while v != s {
            let u = via[&v];
            *residual.get_mut(&(u, v)).unwrap() -= 1;
            *residual.get_mut(&(v, u)).unwrap() += 1;
            v = u;
        }
        flow += 1;
    }
}

/// (switch pairs with fewer edge-disjoint paths in `after` than in `before`, of which those
/// that had 3 and have fewer), over the pairs both read-backs have.
fn degraded_pairs(before: &ReadBack, after: &ReadBack) -> (u64, u64) {
    let was = disjoint_paths(before);
    let mut counted = (0, 0);
    for (pair, now) in disjoint_paths(after) {
        if let Some(&was) = was.get(&pair)
            && now < was
        {
            counted.0 += 1;
            counted.1 += u64::from(was >= 3 && now < 3);
        }
    }
    counted
}

/// What a repair line of the plugin's log says: (cables lost, switch pairs degraded, of which
/// below 3, routes the disjoint repair changed, its budget).
fn repair_numbers(line: &str) -> (u64, u64, u64, u64, u64) {
    let numbers = |text: &str| -> Vec<u64> {
        text.split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let lost = numbers(line.split("losing ").nth(1).unwrap_or_default());
    let tail = line.split("(churn ").nth(1).unwrap_or_default();
    let pairs = numbers(tail.split_once("); ").map_or("", |(_, rest)| rest));
    assert!(lost.len() >= 2 && pairs.len() >= 5, "{line}");
    (lost[0], pairs[0], pairs[1], pairs[3], pairs[4])
}

/// SIGHUP makes OpenSM sweep heavily: the plugin sees the same subnet and rewrites the tables
/// it already computed instead of routing again.
#[test]
fn a_heavy_sweep_of_an_unchanged_subnet_reuses_the_routing() {
    let sim = Ibsim::start(&ibsim::write_net(&slim_fly_q5()));
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    let first = wait_settled(&sm, 0);
    assert_eq!(sm.log().matches(ROUTED).count(), 1, "{}", sm.log());
    sm.signal(libc::SIGHUP);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sm
        .log()
        .contains("layered: subnet unchanged since the last routing")
    {
        assert!(Instant::now() < deadline, "no reuse line:\n{}", sm.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    wait_settled(&sm, first);
    let log = sm.log();
    assert_eq!(log.matches(ROUTED).count(), 1, "routed again:\n{log}");
    assert!(!log.contains(MINHOP_USED), "{log}");
    // The reused routing is still in force, with its SLs and SL-to-VL tables.
    check(&sim, &sm, 1);
    // What the lanes cost on the wire: the first sweep sends every SL-to-VL table, the second
    // none, since every port holds its rows already.
    let sl2vl = sl2vl_tables_sent(&sm);
    eprintln!("SL-to-VL tables (sent, asked) per routing: {sl2vl:?}");
    assert!(sl2vl.len() >= 2, "{log}");
    let (sent, asked) = sl2vl[0];
    assert!(asked > 0 && sent == asked, "first sweep: {sent} of {asked}");
    assert_eq!(sl2vl[sl2vl.len() - 1], (0, asked), "after the reuse");
}

/// The plugin's SL-to-VL counts, one (sent, asked) per routing OpenSM reported done.
fn sl2vl_tables_sent(sm: &OpenSm) -> Vec<(u64, u64)> {
    sm.log()
        .lines()
        .filter_map(|l| l.split_once("SL-to-VL tables: ")?.1.split_once(" sent"))
        .map(|(counts, _)| {
            let (sent, asked) = counts.split_once(" of ").expect("N of M");
            (sent.parse().expect("sent"), asked.parse().expect("asked"))
        })
        .collect()
}

/// k random switch-to-switch cables break while OpenSM runs: the next sweeps repair the
/// routing — complete, deadlock-free whatever the SL, every layer kept, and only forwarding
/// entries whose route crossed a cut cable changed, judged on the tables read back — and
/// plugging them back restores the original tables and quality.
#[test]
fn cut_cables_are_routed_around_and_restoring_them_restores_the_routing() {
    const CUT: usize = 3;
    let generated = slim_fly_q5();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    let mut routings = wait_settled(&sm, 0);
    let (before, report_before) = check(&sim, &sm, 1);

    // Seeded choice of distinct switch-to-switch cables (a Slim Fly q = 5 stays connected:
    // its switch graph is 7-connected).
    let inter: Vec<_> = common::switch_cables(&generated);
    let mut rng = Rng::new(2026);
    let mut cut = Vec::new();
    while cut.len() < CUT {
        let l = inter[rng.below(inter.len() as u64) as usize];
        if !cut.contains(&l) {
            cut.push(l);
        }
    }
    let end = |p| common::console_port(&generated, p);
    for l in &cut {
        eprintln!("cutting {} - {}", end(l.a), end(l.b));
        sim.console(&format!("Unlink {}", end(l.a)));
    }
    routings = wait_settled(&sm, routings);
    let damaged = ReadBack::read(&sim, &sm);
    assert_eq!(damaged.fabric.summary().switch_links, 175 - CUT);
    let log = sm.log();
    assert!(!log.contains(MINHOP_USED), "{log}");
    assert!(log.contains("layered: repaired after losing"), "{log}");
    let report_damaged = analysis::analyze(
        &damaged.fabric,
        &damaged.lids,
        &damaged.tables,
        &Options::default(),
    );
    assert!(report_damaged.is_complete(), "{report_damaged}");
    assert_eq!(report_damaged.layers, 4, "every layer kept");
    let verdict = damaged.verify_every_sl();
    assert!(verdict.is_deadlock_free(), "{verdict}");
    let (changed, crossing) = common::readback::churn(&before, &damaged);
    eprintln!("{changed} entries changed, {crossing} crossed a cut cable");
    assert!(crossing > 0);
    assert!(
        changed <= crossing,
        "{changed} entries changed, {crossing} had to"
    );
    eprintln!(
        "disjoint >= 3: {:.4} before, {:.4} with {CUT} cables cut",
        report_before.disjoint.at_least_three, report_damaged.disjoint.at_least_three
    );

    for l in &cut {
        sim.console(&format!("Link {} {}", end(l.a), end(l.b)));
    }
    wait_settled(&sm, routings);
    let (after, report_after) = check(&sim, &sm, 1);
    assert_eq!(after.fabric.summary().switch_links, 175);
    assert_eq!(after.tables, before.tables, "the original tables are back");
    assert_eq!(report_after.disjoint, report_before.disjoint);
    assert_eq!(report_after.link_load, report_before.link_load);
}

/// The admin's view of a fault: with `sweep_log` configured, every routing pass appends one
/// JSON line (a cut cable: "repaired", with the routes that changed and those that had to, and
/// the switch pairs that lost disjoint paths as a recount on the tables read back finds them);
/// creating `reoptimise_file` and sending SIGHUP routes the damaged subnet in full once — the
/// file is removed, the log says so, the sweep log says "reoptimised", and the tables read back
/// are exactly the core's full routing of the damaged subnet.
#[test]
fn the_sweep_log_records_a_repair_and_a_requested_reoptimisation() {
    let generated = slim_fly_q5();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sweeps = sim.dir().join("sweeps.jsonl");
    let request = sim.dir().join("layered.reoptimise");
    let config = plugin_config(
        &sim,
        "layered.yaml",
        &format!(
            "sweep_log: {}\nreoptimise_file: {}\n",
            sweeps.display(),
            request.display()
        ),
    );
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), false);
    let mut routings = wait_settled(&sm, 0);
    let records = |n: usize| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&sweeps).unwrap_or_default();
        let lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")));
        // The SL-to-VL tables of a pass follow its record on a line of their own.
        let (records, tables): (Vec<serde_json::Value>, Vec<_>) =
            lines.partition(|l: &serde_json::Value| l.get("outcome").is_some());
        assert!(
            tables.iter().all(|t| t["sl2vl_tables"]["asked"].is_u64()),
            "{text}"
        );
        assert!(records.len() >= n, "{n} records expected:\n{text}");
        records
    };
    let first = records(1);
    assert_eq!(first[0]["outcome"], "routed", "{first:?}");
    assert_eq!(first[0]["switches"], 50);
    assert_eq!(first[0]["layers"], 4);
    let before = ReadBack::read(&sim, &sm);

    let cable = common::switch_cables(&generated)[0];
    sim.console(&format!(
        "Unlink {}",
        common::console_port(&generated, cable.a)
    ));
    routings = wait_settled(&sm, routings);
    let after_cut = records(first.len() + 1);
    let repaired = after_cut
        .iter()
        .skip(first.len())
        .find(|r| r["outcome"] == "repaired")
        .unwrap_or_else(|| panic!("no repaired record: {after_cut:?}"));
    assert_eq!(repaired["lost_cables"], 1, "{repaired}");
    let changed = repaired["routes_changed"].as_u64().unwrap();
    let had_to = repaired["routes_had_to"].as_u64().unwrap();
    assert!(had_to > 0 && changed <= had_to, "{repaired}");
    // The switch pairs that lost disjoint paths, as a recount on the tables read back finds.
    let (degraded, below) = degraded_pairs(&before, &ReadBack::read(&sim, &sm));
    eprintln!("{repaired}\nrecount: {degraded} pairs degraded, {below} below 3");
    assert_eq!(repaired["pairs_degraded"], degraded, "{repaired}");
    assert_eq!(repaired["pairs_below_target"], below, "{repaired}");
    let used = repaired["disjoint_budget_used"].as_u64().unwrap();
    assert!(
        used <= repaired["disjoint_budget"].as_u64().unwrap(),
        "{repaired}"
    );
    assert!(
        repaired["guarantee"]
            .as_str()
            .unwrap()
            .contains("whatever SL")
    );

    std::fs::write(&request, "").unwrap();
    sm.signal(libc::SIGHUP);
    wait_settled(&sm, routings);
    assert!(!request.exists(), "the request is served once and removed");
    assert!(
        sm.log().contains("full re-optimisation requested"),
        "{}",
        sm.log()
    );
    let after_request = records(after_cut.len() + 1);
    assert!(
        after_request[after_cut.len()..]
            .iter()
            .any(|r| r["outcome"] == "reoptimised"),
        "{after_request:?}"
    );
    // `check` compares the read-back tables with the core's full routing of the subnet.
    check(&sim, &sm, 1);
}

/// The fault sequence an admin sees in a week, on Slim Fly q = 7 (98 switches, 588 hosts;
/// LMC 2, `qos TRUE`, the default configuration): 1, 2, 5 and 10 seeded random
/// switch-to-switch cables cut cumulatively, then every cable of one switch. After every step
/// the tables read back are complete for every pair, keep all 4 layers, are deadlock-free
/// with every route on every SL, and changed only entries whose route crossed a cut cable;
/// the plugin logs each repair with the switch pairs that lost disjoint paths, as many as a
/// recount on the tables read back finds.
#[test]
fn a_fault_sequence_on_slim_fly_q7_is_repaired_step_by_step_within_the_guarantees() {
    let generated = common::generated("slimfly:q=7");
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", None, false);
    let mut routings = wait_settled(&sm, 0);
    let mut previous = ReadBack::read(&sim, &sm);
    let inter: Vec<_> = common::switch_cables(&generated);
    let end = |p| common::console_port(&generated, p);
    let mut rng = Rng::new(7);
    let mut cut: Vec<&ibfabric::topology::Link> = Vec::new();
    let victim = generated.switches().nth(11).unwrap();
    for step in [1usize, 2, 5, 10, 11] {
        if step == 11 {
            for (port, _) in generated.neighbours(victim) {
                let p = ibfabric::topology::PortRef { node: victim, port };
                sim.console(&format!("Unlink {}", end(p)));
            }
        } else {
            while cut.len() < step {
                let l = inter[rng.below(inter.len() as u64) as usize];
                if !cut.contains(&l) {
                    sim.console(&format!("Unlink {}", end(l.a)));
                    cut.push(l);
                }
            }
        }
        let lines_before = sm.log().matches(REPAIRED).count();
        routings = wait_settled(&sm, routings);
        let now = ReadBack::read(&sim, &sm);
        let what = format!("step {step}");
        // The repair line's switch pairs that lost disjoint paths, recounted on the tables
        // read back when one repair of the previous read-back made them.
        let log = sm.log();
        let lines: Vec<&str> = log.lines().filter(|l| l.contains(REPAIRED)).collect();
        for line in &lines[lines_before..] {
            let (_, degraded, below, used, budget) = repair_numbers(line);
            assert!(below <= degraded && used <= budget, "{what}: {line}");
        }
        let lost = previous.fabric.summary().switch_links - now.fabric.summary().switch_links;
        if let [line] = &lines[lines_before..]
            && repair_numbers(line).0 == lost as u64
        {
            let (_, degraded, below, _, _) = repair_numbers(line);
            let recount = degraded_pairs(&previous, &now);
            eprintln!("{what}: {degraded} pairs degraded ({below} below 3), recount {recount:?}");
            assert_eq!((degraded, below), recount, "{what}: {line}");
        }
        let report = analysis::analyze(&now.fabric, &now.lids, &now.tables, &Options::default());
        assert!(report.is_complete(), "{what}: {report}");
        assert_eq!(report.layers, 4, "{what}: every layer kept");
        let verdict = now.verify_every_sl();
        assert!(verdict.is_deadlock_free(), "{what}: {verdict}");
        let (changed, crossing) = common::readback::churn(&previous, &now);
        eprintln!("{what}: {changed} entries changed, {crossing} crossed a lost cable");
        assert!(
            changed <= crossing,
            "{what}: {changed} changed, {crossing} had to"
        );
        previous = now;
    }
    let log = sm.log();
    for line in log.lines().filter(|l| l.contains("layered: r")) {
        eprintln!("{line}");
    }
    assert!(!log.contains(MINHOP_USED), "{log}");
    assert!(log.matches(REPAIRED).count() >= 5, "{log}");
}

/// A miswired fabric and a plan: every sweep logs the cabling differences (with the action
/// that fixes them) before routing, and routing goes on.
#[test]
fn cabling_plan_differences_are_logged_every_sweep() {
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    let plan = plan_for(&spec, &PlanOptions::default()).unwrap();
    let mut wiring = Wiring::from_plan(&plan);
    let switch_ends: Vec<_> = plan.switch_cables().take(2).map(|c| c.a).collect();
    wiring.swap_ends(switch_ends[0], switch_ends[1]);
    let sim = Ibsim::start(&ibsim::write_net(&wiring.to_fabric(&plan, 0).unwrap()));
    let plan_path = sim.dir().join("plan.yaml");
    std::fs::write(
        &plan_path,
        yaml_serde::to_string(&PlanDocument::from_plan(&plan)).unwrap(),
    )
    .unwrap();
    let plan_path = plan_path.to_str().unwrap().to_string();
    let config = plugin_config(
        &sim,
        "layered.yaml",
        &format!("cabling_plan: {plan_path}\n"),
    );
    let sm = run_opensm_with_conf(&sim, "qos TRUE\n", Some(&config), true);
    let log = sm.log();
    let summary = format!("layered: cabling plan {plan_path}: ");
    let line = log
        .lines()
        .find(|l| l.contains(&summary))
        .unwrap_or_else(|| panic!("no cabling line:\n{log}"));
    assert!(line.contains("2 miswired"), "{line}");
    // The links' widths and speeds OpenSM read from the ports (4xEDR) are the plan's.
    assert!(line.contains("; 0 degraded,"), "{line}");
    assert!(
        log.lines().any(|l| l.contains("layered: cabling: ")),
        "no action line:\n{log}"
    );
    assert!(
        log.find(&summary) < log.find("layered: routed"),
        "the differences come before routing:\n{log}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
}

/// The plugin's version string, changed to one the daemon is not, in a copy of the library:
/// OpenSM refuses to load it, says why, and routes with minhop.
#[test]
fn a_plugin_built_for_another_opensm_version_is_refused() {
    let library = std::fs::read(plugin_dir().join("libosmlayered.so")).unwrap();
    // "OpenSM 3.3.23\0" -> "OpenSM 9.9.99\0": same length, every digit a 9.
    let marker = b"OpenSM ";
    let mut patched = library.clone();
    let mut changed = 0;
    let mut i = 0;
    while let Some(at) = patched[i..]
        .windows(marker.len())
        .position(|w| w == marker)
        .map(|p| p + i)
    {
        let start = at + marker.len();
        let len = patched[start..]
            .iter()
            .position(|&b| !(b.is_ascii_digit() || b == b'.'))
            .unwrap_or(0);
        if len >= 5 && patched.get(start + len) == Some(&0) {
            for b in &mut patched[start..start + len] {
                if b.is_ascii_digit() {
                    *b = b'9';
                }
            }
            changed += 1;
        }
        i = start;
    }
    assert!(changed >= 1, "no version string in the library");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("libosmlayeredold.so"), patched).unwrap();

    let sim = Ibsim::start(&ibsim::write_net(&slim_fly_q5()));
    let options = OpenSmOptions {
        config: Some(
            "event_plugin_name osmlayeredold\nrouting_engine layered,minhop\nlmc 2\n\
             force_log_flush TRUE\n"
                .into(),
        ),
        env: vec![("LD_LIBRARY_PATH".into(), dir.path().as_os_str().to_owned())],
        ..OpenSmOptions::new("layered,minhop", 2)
    };
    let sm = OpenSm::start(&sim, &options);
    let log = sm.log();
    assert!(
        log.contains("Error loading plugin 'osmlayeredold': OpenSM version mismatch"),
        "{log}"
    );
    assert!(log.contains("OpenSM 9.9.99"), "{log}");
    assert!(
        !log.contains("layered: routing engine 'layered' registered"),
        "{log}"
    );
    assert!(log.contains(MINHOP_USED), "{log}");
    assert!(log.contains(SUBNET_UP), "{log}");
}

/// The install command stages the library and a commented default configuration, and prints
/// opensm.conf lines; OpenSM configured with exactly those lines (paths under the staging
/// directory) loads the staged plugin and routes with it, deadlock-free.
#[test]
fn the_install_command_gives_a_working_opensm_configuration() {
    let staging = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/opensm-plugin/install.sh"
        ))
        .arg("--library")
        .arg(plugin_dir().join("libosmlayered.so"))
        .env("DESTDIR", staging.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib_dir = staging.path().join("usr/lib/x86_64-linux-gnu");
    assert!(lib_dir.join("libosmlayered.so").is_file(), "{stdout}");
    let yaml = staging.path().join("etc/opensm/layered.yaml");
    let conf_lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("event_plugin_name"))
        .collect();
    assert_eq!(conf_lines.len(), 5, "{stdout}");
    let conf: String = conf_lines
        .iter()
        .map(|l| l.replace("/etc/opensm/layered.yaml", yaml.to_str().unwrap()) + "\n")
        .collect::<String>()
        + "force_log_flush TRUE\n";

    let sim = Ibsim::start(&ibsim::write_net(&slim_fly_q5()));
    let options = OpenSmOptions {
        config: Some(conf),
        env: vec![("LD_LIBRARY_PATH".into(), lib_dir.into_os_string())],
        ..OpenSmOptions::new("layered,minhop", 2)
    };
    let sm = OpenSm::start(&sim, &options);
    let log = sm.log();
    assert!(log.contains(ROUTED), "{log}");
    assert!(log.contains(LAYERED_USED), "{log}");
    assert!(
        log.contains("layered: deadlock-free by lanes by port pair: 8 VLs, 4 classes"),
        "the default configuration (auto) is deadlock-free with qos, by lanes by port pair on \
         a Slim Fly:\n{log}"
    );
    assert!(
        log.contains("layered: deadlock-free whatever SL the traffic carries"),
        "the log names the guarantee:\n{log}"
    );
}
