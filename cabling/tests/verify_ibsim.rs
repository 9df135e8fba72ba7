//! `cabling verify` end to end: plans from `cabling plan`, faults injected into the fabric the
//! simulator runs, dumps by the real `ibnetdiscover` and `iblinkinfo`, and the verdict of the
//! `cabling` binary — exactly the injected findings, the right actions, nothing else. Then a
//! technician fixes the fabric action by action through the simulator's console until it
//! verifies clean.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::Ibsim;
use ibfabric::io::ibsim::write_net;
use ibfabric::plan::document::PlanDocument;
use ibfabric::plan::{CableEnd, DeviceKind, Plan};
use ibfabric::topology::LinkWidth;
use ibfabric::verify::wiring::Wiring;
use serde_json::Value;

/// A plan written by `cabling plan` into a scratch directory.
struct Planned {
    dir: tempfile::TempDir,
    plan: Plan,
}

impl Planned {
    fn new(kind: &str, params: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["plan", kind];
        args.extend_from_slice(params);
        args.extend_from_slice(&["--out-dir", dir.path().to_str().unwrap()]);
        let out = Command::new(env!("CARGO_BIN_EXE_cabling"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(dir.path().join("plan.yaml")).unwrap();
        let doc: PlanDocument = yaml_serde::from_str(&text).unwrap();
        Planned {
            plan: doc.to_plan().unwrap(),
            dir,
        }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn end(&self, device: usize, port: u8) -> CableEnd {
        CableEnd { device, port }
    }
}

/// Runs `cabling verify --format json` with the plan file and extra arguments.
fn verify(plan_file: &Path, dumps: &[&Path], extra: &[&str]) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cabling"));
    cmd.arg("verify").arg("--plan").arg(plan_file);
    for d in dumps {
        cmd.arg("--ibnetdiscover").arg(d);
    }
    cmd.args(extra).args(["--format", "json"]);
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).unwrap())
}

/// `ibnetdiscover` (or another tool) run from the host `initiator`.
fn discover(sim: &Ibsim, tool: &str, initiator: &str) -> String {
    let out = sim
        .command(tool)
        .env("SIM_HOST", initiator)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The faults injected and what verify must say about them.
struct Faults {
    wiring: Wiring,
    /// Non-ok findings: cable id → status.
    findings: BTreeMap<String, &'static str>,
    /// Actions: (action, cable ids sorted).
    actions: BTreeSet<(String, Vec<String>)>,
    /// Where the moved cable is (device, port), and where the extra cable is.
    moved_from: (String, u8),
    extra_at: [(String, u8); 2],
    /// The host dumps are taken from.
    initiator: String,
    /// Devices of the rack not yet cabled.
    uncabled: BTreeSet<String>,
}

const SPARE_PORTS: u8 = 4;

/// Two cables swapped at a switch, two hosts swapped, a cable moved to another rack, a missing
/// cable, an extra cable, optionally a link forced to 1x, and a whole rack not yet cabled — all
/// on distinct devices.
fn inject(p: &Planned, degraded: bool) -> Faults {
    let plan = &p.plan;
    let rack = |d: usize| plan.devices[d].rack;
    let is_switch = |d: usize| plan.devices[d].kind == DeviceKind::Switch;
    let name = |d: usize| plan.devices[d].name.clone();
    let id = |c: usize| plan.cables[c].id.clone();
    let switch_cables: Vec<usize> = (0..plan.cables.len())
        .filter(|&c| is_switch(plan.cables[c].a.device) && is_switch(plan.cables[c].b.device))
        .collect();
    // The rack left uncabled: the last one whose absence keeps the other switches connected.
    let uncabled_rack = (0..plan.racks.len())
        .rev()
        .find(|&r| {
            let rest: Vec<usize> = (0..plan.devices.len())
                .filter(|&d| is_switch(d) && rack(d) != r)
                .collect();
            let mut seen = HashSet::from([rest[0]]);
            let mut queue = VecDeque::from([rest[0]]);
            while let Some(d) = queue.pop_front() {
                for &c in &switch_cables {
                    let (a, b) = (plan.cables[c].a.device, plan.cables[c].b.device);
                    for (x, y) in [(a, b), (b, a)] {
                        if x == d && rack(y) != r && seen.insert(y) {
                            queue.push_back(y);
                        }
                    }
                }
            }
            seen.len() == rest.len()
        })
        .expect("a rack to leave uncabled");
    let mut used: HashSet<usize> = (0..plan.devices.len())
        .filter(|&d| rack(d) == uncabled_rack)
        .collect();
    let mut wiring = Wiring::from_plan(plan);
    let mut findings = BTreeMap::new();
    let mut actions = BTreeSet::new();
    let free = |used: &HashSet<usize>, ds: &[usize]| {
        ds.iter().all(|d| !used.contains(d)) && ds.iter().collect::<HashSet<_>>().len() == ds.len()
    };
    let initiator = (0..plan.devices.len())
        .find(|&d| !is_switch(d) && !used.contains(&d))
        .unwrap();
    used.insert(initiator);
    let ends = |c: usize| (plan.cables[c].a, plan.cables[c].b);

    // 1. Two switch cables swapped at one switch.
    let (s, c1, c2) = (0..plan.devices.len())
        .filter(|&s| is_switch(s))
        .find_map(|s| {
            let mine: Vec<usize> = switch_cables
                .iter()
                .copied()
                .filter(|&c| {
                    let (a, b) = ends(c);
                    (a.device == s || b.device == s) && free(&used, &[a.device, b.device])
                })
                .collect();
            mine.iter().enumerate().find_map(|(i, &x)| {
                mine[i + 1..].iter().find_map(|&y| {
                    let far = |c: usize| {
                        let (a, b) = ends(c);
                        if a.device == s { b.device } else { a.device }
                    };
                    free(&used, &[s, far(x), far(y)]).then_some((s, x, y))
                })
            })
        })
        .expect("a switch with two switch cables");
    let at = |c: usize, s: usize| {
        let (a, b) = ends(c);
        if a.device == s { a } else { b }
    };
    wiring.swap_ends(at(c1, s), at(c2, s));
    for c in [c1, c2] {
        let (a, b) = ends(c);
        used.extend([a.device, b.device]);
        findings.insert(id(c), "miswired");
    }
    let mut pair = vec![id(c1), id(c2)];
    pair.sort();
    actions.insert(("swap".to_string(), pair));

    // 2. Two hosts swapped: their cables crossed at two switches of one rack.
    let host_cables: Vec<usize> = (0..plan.cables.len())
        .filter(|&c| !is_switch(plan.cables[c].b.device) || !is_switch(plan.cables[c].a.device))
        .collect();
    let (h1, h2) = host_cables
        .iter()
        .enumerate()
        .find_map(|(i, &x)| {
            host_cables[i + 1..].iter().find_map(|&y| {
                let (a, b) = ends(x);
                let (c, d) = ends(y);
                (free(&used, &[a.device, b.device, c.device, d.device])
                    && rack(a.device) == rack(c.device))
                .then_some((x, y))
            })
        })
        .expect("two host cables in one rack");
    let switch_end = |c: usize| {
        let (a, b) = ends(c);
        if is_switch(a.device) { a } else { b }
    };
    wiring.swap_ends(switch_end(h1), switch_end(h2));
    for c in [h1, h2] {
        let (a, b) = ends(c);
        used.extend([a.device, b.device]);
        findings.insert(id(c), "miswired");
    }
    let mut pair = vec![id(h1), id(h2)];
    pair.sort();
    actions.insert(("swap".to_string(), pair));

    // 3. A cable between two racks moved to a spare port in a third rack.
    let (moved, target) = switch_cables
        .iter()
        .find_map(|&c| {
            let (a, b) = ends(c);
            if rack(a.device) == rack(b.device) || !free(&used, &[a.device, b.device]) {
                return None;
            }
            let other = (0..plan.devices.len()).find(|&t| {
                is_switch(t)
                    && ![rack(a.device), rack(b.device)].contains(&rack(t))
                    && free(&used, &[t, a.device, b.device])
            })?;
            Some((c, other))
        })
        .expect("a cable between racks and a switch in a third rack");
    let spare = plan.devices[target].ports + 1;
    wiring.move_end(ends(moved).1, p.end(target, spare));
    used.extend([ends(moved).0.device, ends(moved).1.device, target]);
    findings.insert(id(moved), "miswired");
    actions.insert(("move".to_string(), vec![id(moved)]));
    let moved_from = (name(target), spare);

    // 4. A missing cable, 6. a 1x link.
    let pick = |used: &mut HashSet<usize>| {
        let c = *switch_cables
            .iter()
            .find(|&&c| free(used, &[ends(c).0.device, ends(c).1.device]))
            .expect("a free switch cable");
        used.extend([ends(c).0.device, ends(c).1.device]);
        c
    };
    let missing = pick(&mut used);
    wiring.unplug(ends(missing).0);
    findings.insert(id(missing), "missing");
    actions.insert(("plug".to_string(), vec![id(missing)]));
    if degraded {
        let slow = pick(&mut used);
        let w = wiring.at(ends(slow).0).unwrap();
        wiring.wires[w].width = Some(LinkWidth::X1);
        findings.insert(id(slow), "degraded");
        actions.insert(("reseat".to_string(), vec![id(slow)]));
    }

    // 5. An extra cable between spare ports of two switches.
    let pair: Vec<usize> = (0..plan.devices.len())
        .filter(|&d| is_switch(d) && !used.contains(&d))
        .take(2)
        .collect();
    assert_eq!(pair.len(), 2, "two more switches for an extra cable");
    let extra_at = [0, 1].map(|k| (name(pair[k]), plan.devices[pair[k]].ports + 2));
    wiring.plug(p.end(pair[0], extra_at[0].1), p.end(pair[1], extra_at[1].1));
    actions.insert(("remove".to_string(), Vec::new()));

    // 7. A whole rack not yet cabled: its cables to other racks are missing, the ones inside
    //    it cannot be verified.
    wiring.unplug_devices(|d| rack(d) == uncabled_rack);
    for (c, cable) in plan.cables.iter().enumerate() {
        let inside = [cable.a, cable.b].map(|e| rack(e.device) == uncabled_rack);
        match inside {
            [true, true] => {
                findings.insert(id(c), "not-verifiable");
            }
            [true, false] | [false, true] => {
                findings.insert(id(c), "missing");
                actions.insert(("plug".to_string(), vec![id(c)]));
            }
            _ => {}
        }
    }
    let uncabled = (0..plan.devices.len())
        .filter(|&d| rack(d) == uncabled_rack)
        .map(name)
        .collect();
    Faults {
        wiring,
        findings,
        actions,
        moved_from,
        extra_at,
        initiator: name(initiator),
        uncabled,
    }
}

/// Non-ok findings of a verify JSON document.
fn findings_of(doc: &Value) -> BTreeMap<String, String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["cable"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn actions_of(doc: &Value) -> BTreeSet<(String, Vec<String>)> {
    doc["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let mut cables: Vec<String> = a["cables"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            cables.sort();
            (a["action"].as_str().unwrap().to_string(), cables)
        })
        .collect()
}

fn check_faults(doc: &Value, faults: &Faults, label: &str) {
    let expected: BTreeMap<String, String> = faults
        .findings
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    assert_eq!(findings_of(doc), expected, "{label}: findings");
    assert_eq!(actions_of(doc), faults.actions, "{label}: actions");
    assert_eq!(doc["counts"]["unexpected_cables"], 1, "{label}");
    assert_eq!(doc["counts"]["unexpected_devices"], 0, "{label}");
    let unbound: BTreeSet<String> = doc["unbound_devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(unbound, faults.uncabled, "{label}: devices not seen");
    for a in doc["actions"].as_array().unwrap() {
        let at = (
            a["location"]["device"].as_str().unwrap().to_string(),
            a["location"]["port"].as_u64().unwrap() as u8,
        );
        match a["action"].as_str().unwrap() {
            "move" => assert_eq!(at, faults.moved_from, "{label}: {}", a["text"]),
            "remove" => assert!(faults.extra_at.contains(&at), "{label}: {}", a["text"]),
            _ => {}
        }
    }
}

/// Static check of one topology: clean fabric, then all faults, with ibnetdiscover alone and
/// with iblinkinfo. `anonymous_switches` replaces the switches' descriptions by the default one
/// (binding from host names and the cabling).
fn faults_are_found_exactly(
    kind: &str,
    params: &[&str],
    plan_file: &str,
    anonymous_switches: bool,
    names: bool,
) {
    let p = Planned::new(kind, params);
    let plan_path = p.path(plan_file);
    let nnm = p.path("node-name-map");
    let mut extra: Vec<&str> = Vec::new();
    if names {
        extra.extend(["--node-name-map", nnm.to_str().unwrap()]);
    }
    let build = |wiring: &Wiring| {
        let mut fabric = wiring.to_fabric(&p.plan, SPARE_PORTS).unwrap();
        if anonymous_switches {
            for n in fabric.switches().collect::<Vec<_>>() {
                fabric.node_mut(n).description = "Quantum Mellanox Technologies".into();
            }
        }
        write_net(&fabric)
    };
    let faults = inject(&p, true);

    // The clean fabric: exit 0, no findings.
    let sim = Ibsim::start(&build(&Wiring::from_plan(&p.plan)));
    let dump = p.path("clean.topo");
    std::fs::write(&dump, discover(&sim, "ibnetdiscover", &faults.initiator)).unwrap();
    let (code, doc) = verify(&plan_path, &[&dump], &extra);
    assert_eq!(
        (code, doc["clean"].as_bool()),
        (0, Some(true)),
        "{kind}: {}",
        doc["findings"]
    );
    assert!(doc["actions"].as_array().unwrap().is_empty());
    drop(sim);

    let sim = Ibsim::start(&build(&faults.wiring));
    let dump = p.path("faulty.topo");
    let links = p.path("faulty.iblinkinfo");
    std::fs::write(&dump, discover(&sim, "ibnetdiscover", &faults.initiator)).unwrap();
    std::fs::write(&links, discover(&sim, "iblinkinfo", &faults.initiator)).unwrap();
    let (code, doc) = verify(&plan_path, &[&dump], &extra);
    assert_eq!(code, 1);
    check_faults(&doc, &faults, kind);
    let mut with_links = extra.clone();
    with_links.extend(["--iblinkinfo", links.to_str().unwrap()]);
    let (code, doc) = verify(&plan_path, &[&dump], &with_links);
    assert_eq!(code, 1);
    check_faults(&doc, &faults, &format!("{kind} with iblinkinfo"));
    if anonymous_switches {
        let switches = p
            .plan
            .devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Switch)
            .count()
            - faults
                .uncabled
                .iter()
                .filter(|n| {
                    p.plan.devices[p.plan.device_by_name(n).unwrap()].kind == DeviceKind::Switch
                })
                .count();
        assert_eq!(
            doc["binding"]["cabling"], switches,
            "{kind}: switches bound by cabling"
        );
    }
}

#[test]
fn slimfly_q5_faults_are_found_exactly_with_the_node_name_map() {
    faults_are_found_exactly("slimfly", &["--q", "5"], "plan.yaml", false, true);
}

#[test]
fn mlfm_faults_are_found_exactly_from_a_csv_plan_by_descriptions() {
    faults_are_found_exactly("mlfm", &["--d", "3"], "plan.csv", false, false);
}

#[test]
fn lsft_faults_are_found_exactly_with_default_switch_descriptions() {
    faults_are_found_exactly("lsft", &["--n", "3"], "plan.csv", true, false);
}

#[test]
fn two_cables_swapped_between_the_same_two_switches_are_found() {
    // GUID-only tools (ibnetdiscover --diff, iblinkinfo --diff) miss this: both cables still
    // lead to the same switch.
    let p = Planned::new(
        "fattree",
        &[
            "--leaves",
            "4",
            "--spines",
            "2",
            "--links-per-pair",
            "2",
            "--hosts-per-leaf",
            "2",
        ],
    );
    let plan = &p.plan;
    let parallel = plan
        .cables
        .iter()
        .enumerate()
        .find_map(|(i, x)| {
            plan.cables[i + 1..]
                .iter()
                .find(|y| x.a.device == y.a.device && x.b.device == y.b.device)
                .map(|y| (x.clone(), y.clone()))
        })
        .expect("parallel cables");
    let mut wiring = Wiring::from_plan(plan);
    wiring.swap_ends(parallel.0.a, parallel.1.a);
    let host = plan
        .devices
        .iter()
        .find(|d| d.kind == DeviceKind::Host)
        .unwrap()
        .name
        .clone();
    let sim = Ibsim::start(&write_net(&wiring.to_fabric(plan, 0).unwrap()));
    let dump = p.path("swapped.topo");
    std::fs::write(&dump, discover(&sim, "ibnetdiscover", &host)).unwrap();
    let (code, doc) = verify(&p.path("plan.yaml"), &[&dump], &[]);
    assert_eq!(code, 1);
    let mut ids = vec![parallel.0.id.clone(), parallel.1.id.clone()];
    ids.sort();
    assert_eq!(
        actions_of(&doc),
        BTreeSet::from([("swap".to_string(), ids.clone())])
    );
    let text = doc["actions"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("swapped between the same two devices"),
        "{text}"
    );
    assert_eq!(
        findings_of(&doc),
        ids.iter()
            .map(|i| (i.clone(), "miswired".to_string()))
            .collect()
    );
}

#[test]
fn dumps_of_two_islands_merge_by_guid() {
    let p = Planned::new("slimfly", &["--q", "5"]);
    let plan = &p.plan;
    let rack = |d: usize| plan.devices[d].rack;
    let last = plan.racks.len() - 1;
    // Rack R05 is cabled inside but not yet to the other racks: an island.
    let mut wiring = Wiring::from_plan(plan);
    wiring
        .wires
        .retain(|w| (rack(w.a.device) == last) == (rack(w.b.device) == last));
    let host_in = |r: usize| {
        plan.devices
            .iter()
            .enumerate()
            .find(|&(d, dev)| dev.kind == DeviceKind::Host && rack(d) == r)
            .unwrap()
            .1
            .name
            .clone()
    };
    let sim = Ibsim::start(&write_net(&wiring.to_fabric(plan, 0).unwrap()));
    let main = p.path("main.topo");
    let island = p.path("island.topo");
    std::fs::write(&main, discover(&sim, "ibnetdiscover", &host_in(0))).unwrap();
    std::fs::write(&island, discover(&sim, "ibnetdiscover", &host_in(last))).unwrap();
    let between: BTreeMap<String, String> = plan
        .cables
        .iter()
        .filter(|c| (rack(c.a.device) == last) != (rack(c.b.device) == last))
        .map(|c| (c.id.clone(), "missing".to_string()))
        .collect();
    let (code, doc) = verify(&p.path("plan.yaml"), &[&main, &island], &[]);
    assert_eq!(code, 1);
    assert_eq!(findings_of(&doc), between);
    assert_eq!(doc["counts"]["unbound_devices"], 0);
    // From the main island alone, the other island's own cables cannot be verified yet.
    let (_, doc) = verify(&p.path("plan.yaml"), &[&main], &[]);
    let c = &doc["counts"];
    assert_eq!(c["missing"], between.len());
    assert_eq!(c["not_verifiable"], 15 + 40);
}

/// A dump without its comments (the header carries the time).
fn cabling_of(dump: &str) -> Vec<String> {
    dump.lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The console command for one step of an action (places are plan devices, whose names are
/// the simulator's node ids).
fn console_command(step: &Value) -> String {
    let port = |p: &Value| format!("\"{}\"[{}]", p["device"].as_str().unwrap(), p["port"]);
    match step["op"].as_str().unwrap() {
        "disconnect" => format!("Unlink {}", port(&step["at"])),
        "connect" => format!("Link {} {}", port(&step["a"]), port(&step["b"])),
        other => panic!("unknown step {other}"),
    }
}

#[test]
fn a_technician_fixes_a_live_fabric_action_by_action_until_it_verifies_clean() {
    let p = Planned::new("slimfly", &["--q", "5"]);
    // Reseating a 1x cable is physical: the simulator's ports keep their width, so no 1x link.
    let faults = inject(&p, false);
    let sim = Ibsim::start(&write_net(
        &faults.wiring.to_fabric(&p.plan, SPARE_PORTS).unwrap(),
    ));
    let plan_path = p.path("plan.yaml");
    let dump_path = p.path("live.topo");
    let mut dump = discover(&sim, "ibnetdiscover", &faults.initiator);
    let mut rounds = 0;
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    loop {
        std::fs::write(&dump_path, &dump).unwrap();
        let (code, doc) = verify(&plan_path, &[&dump_path], &[]);
        if rounds == 0 {
            check_faults(&doc, &faults, "live, before fixing");
            for a in doc["actions"].as_array().unwrap() {
                eprintln!("{}", a["text"].as_str().unwrap());
            }
        }
        if code == 0 {
            assert_eq!(doc["counts"]["ok"], p.plan.cables.len());
            break;
        }
        rounds += 1;
        assert!(rounds < 200, "no progress: {}", doc["actions"]);
        let action = &doc["actions"][0];
        kinds.insert(action["action"].as_str().unwrap().to_string());
        for step in action["steps"].as_array().unwrap() {
            sim.console(&console_command(step));
        }
        // The simulator applies console commands asynchronously: wait for the change.
        let before = cabling_of(&dump);
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(50));
            dump = discover(&sim, "ibnetdiscover", &faults.initiator);
            if cabling_of(&dump) != before {
                break;
            }
        }
        assert_ne!(
            cabling_of(&dump),
            before,
            "{} changed nothing",
            action["text"]
        );
    }
    eprintln!("fixed in {rounds} rounds");
    assert!(rounds >= faults.actions.len(), "{rounds} rounds");
    assert_eq!(
        kinds,
        ["move", "plug", "remove", "swap"].map(String::from).into()
    );
}
