//! Plans on real switch models, end to end: `cabling plan slimfly --q 5 --switch-model M`, its
//! ibsim net file loaded into the simulator, the real `ibnetdiscover`, and `cabling verify`:
//! the fabric as planned verifies clean; with faults injected on the model's real ports
//! (swapped ports, a cable on a spare port, a missing cable, swapped hosts, an extra cable
//! between spare ports) verify names each fault's devices and ports and exits 1.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use common::Ibsim;
use ibfabric::io::ibsim::write_net;
use ibfabric::plan::document::PlanDocument;
use ibfabric::plan::{CableEnd, DeviceKind, Plan};
use ibfabric::verify::wiring::Wiring;
use serde_json::Value;

/// Ports and IB ports per faceplate cage of the models, as their data sheets give them.
const MODELS: [(&str, u8, u8); 2] = [("msb7800", 36, 1), ("qm9700", 64, 2)];

fn cabling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

/// The faceplate text of a port, from the data sheet's cage layout (independent of the code).
fn faceplate(port: u8, per_cage: u8) -> String {
    if per_cage == 1 {
        port.to_string()
    } else {
        format!(
            "{port} ({}/{})",
            (port - 1) / per_cage + 1,
            (port - 1) % per_cage + 1
        )
    }
}

fn verify(sim: &Ibsim, dir: &Path, plan_file: &str, initiator: &str, format: &str) -> Output {
    let out = sim
        .command("ibnetdiscover")
        .env("SIM_HOST", initiator)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = dir.join("dump.topo");
    std::fs::write(&dump, &out.stdout).unwrap();
    cabling(&[
        "verify",
        "--plan",
        dir.join(plan_file).to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
        "--format",
        format,
    ])
}

/// One injected fault: the cables whose finding it changes, the action verify must give, and
/// the device and port texts the action's line must name.
struct Fault {
    action: &'static str,
    cables: Vec<String>,
    names: Vec<String>,
}

fn inject(plan: &Plan, per_cage: u8) -> (Wiring, Vec<Fault>) {
    let is_switch = |d: usize| plan.devices[d].kind == DeviceKind::Switch;
    let name = |d: usize| plan.devices[d].name.clone();
    let id = |c: usize| plan.cables[c].id.clone();
    let port = |p: u8| faceplate(p, per_cage);
    let mut used: BTreeSet<usize> = BTreeSet::new();
    let mut wiring = Wiring::from_plan(plan);
    let mut faults = Vec::new();
    let switch_cables: Vec<usize> = (0..plan.cables.len())
        .filter(|&c| is_switch(plan.cables[c].a.device) && is_switch(plan.cables[c].b.device))
        .collect();
    let ends = |c: usize| [plan.cables[c].a, plan.cables[c].b];
    let devices = |c: usize| ends(c).map(|e| e.device);
    let free = |used: &BTreeSet<usize>, ds: &[usize]| ds.iter().all(|d| !used.contains(d));

    // 1. Two switch cables swapped at the A end's switch.
    let (c1, c2) = switch_cables
        .iter()
        .find_map(|&x| {
            let s = plan.cables[x].a.device;
            switch_cables
                .iter()
                .find(|&&y| {
                    y != x && plan.cables[y].a.device == s && devices(y)[1] != devices(x)[1]
                })
                .map(|&y| (x, y))
        })
        .unwrap();
    let (a1, a2) = (plan.cables[c1].a, plan.cables[c2].a);
    wiring.swap_ends(a1, a2);
    used.extend(devices(c1).into_iter().chain(devices(c2)));
    faults.push(Fault {
        action: "swap",
        cables: vec![id(c1), id(c2)],
        names: vec![
            name(a1.device),
            format!(
                "ports {} and {}",
                port(a1.port.min(a2.port)),
                port(a1.port.max(a2.port))
            ),
        ],
    });

    // 2. A cable moved to a spare port of its own switch.
    let moved = *switch_cables
        .iter()
        .find(|&&c| free(&used, &devices(c)))
        .unwrap();
    let from = plan.cables[moved].a;
    let spare = *plan.spare_ports(from.device).last().unwrap();
    wiring.move_end(
        from,
        CableEnd {
            device: from.device,
            port: spare,
        },
    );
    used.extend(devices(moved));
    faults.push(Fault {
        action: "move",
        cables: vec![id(moved)],
        names: vec![
            name(from.device),
            format!("port {} to port {}", port(spare), port(from.port)),
        ],
    });

    // 3. A missing cable.
    let missing = *switch_cables
        .iter()
        .find(|&&c| free(&used, &devices(c)))
        .unwrap();
    wiring.unplug(plan.cables[missing].a);
    used.extend(devices(missing));
    let [ma, mb] = ends(missing);
    faults.push(Fault {
        action: "plug",
        cables: vec![id(missing)],
        names: vec![
            format!("{} port {}", name(ma.device), port(ma.port)),
            format!("{} port {}", name(mb.device), port(mb.port)),
        ],
    });

    // 4. Two hosts swapped: their cables crossed at two switches.
    let host_cables: Vec<usize> = (0..plan.cables.len())
        .filter(|&c| !switch_cables.contains(&c) && free(&used, &devices(c)))
        .collect();
    let switch_end = |c: usize| ends(c).into_iter().find(|e| is_switch(e.device)).unwrap();
    let h1 = host_cables[0];
    let h2 = *host_cables
        .iter()
        .find(|&&c| switch_end(c).device != switch_end(h1).device)
        .unwrap();
    let (s1, s2) = (switch_end(h1), switch_end(h2));
    wiring.swap_ends(s1, s2);
    used.extend(devices(h1).into_iter().chain(devices(h2)));
    faults.push(Fault {
        action: "swap",
        cables: vec![id(h1), id(h2)],
        names: vec![
            format!("{} port {}", name(s1.device), port(s1.port)),
            format!("{} port {}", name(s2.device), port(s2.port)),
        ],
    });

    // 5. An extra cable between the first spare ports of two more switches.
    let pair: Vec<usize> = (0..plan.devices.len())
        .filter(|&d| is_switch(d) && !used.contains(&d))
        .take(2)
        .collect();
    let at = |d: usize| CableEnd {
        device: d,
        port: plan.spare_ports(d)[0],
    };
    wiring.plug(at(pair[0]), at(pair[1]));
    faults.push(Fault {
        action: "remove",
        cables: Vec::new(),
        names: pair
            .iter()
            .map(|&d| format!("{} port {}", name(d), port(at(d).port)))
            .collect(),
    });
    (wiring, faults)
}

fn a_slim_fly_on(model: &str, ports: u8, per_cage: u8, plan_file: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = cabling(&[
        "plan",
        "slimfly",
        "--q",
        "5",
        "--switch-model",
        model,
        "--out-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
    let doc: PlanDocument = yaml_serde::from_str(&read("plan.yaml")).unwrap();
    let plan = doc.to_plan().unwrap();
    let net = read("fabric.net");
    let switches = plan
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Switch)
        .count();
    assert_eq!(
        net.matches(&format!("Switch\t{ports} \"")).count(),
        switches,
        "{model}: every switch declares the model's ports"
    );
    // Hosts on ports 1-4, the network on 5-11, the rest spare.
    for d in (0..plan.devices.len()).filter(|&d| plan.devices[d].kind == DeviceKind::Switch) {
        assert_eq!(
            plan.spare_ports(d),
            (12..=ports).collect::<Vec<_>>(),
            "{model}"
        );
    }
    if net.contains("# links faster than HDR run at HDR") {
        // ibsim 0.10 simulates speeds up to HDR: the plan verified here expects the rate the
        // simulator gives (the real switches run NDR).
        for file in ["plan.yaml", "plan.csv"] {
            let text = read(file).replace("4xNDR", "4xHDR");
            std::fs::write(dir.path().join(file), text).unwrap();
        }
    }
    if per_cage > 1 {
        let csv = read("plan.csv");
        let header = csv.lines().next().unwrap();
        assert!(header.ends_with(",a_port_label,b_port_label"), "{header}");
        assert!(
            csv.contains(",qm9700,qm9700,5/2,6/1\n"),
            "cage/split labels in the CSV"
        );
        let html = read("plan.html");
        assert!(
            html.contains("<td>10 (5/2)</td>"),
            "labels next to the port on the sheets"
        );
    }

    // As planned: clean, exit 0.
    let initiator = plan
        .devices
        .iter()
        .find(|d| d.kind == DeviceKind::Host)
        .unwrap()
        .name
        .clone();
    let sim = Ibsim::start(&net);
    let out = verify(&sim, dir.path(), plan_file, &initiator, "json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(sim);

    // Faults: exit 1, each named with its devices and ports.
    let (wiring, faults) = inject(&plan, per_cage);
    let faulty = wiring.to_fabric(&plan, 0).unwrap();
    let initiator = plan
        .devices
        .iter()
        .enumerate()
        .find(|&(i, d)| {
            d.kind == DeviceKind::Host
                && !faults.iter().any(|f| {
                    f.cables.iter().any(|c| {
                        let c = &plan.cables[plan.cables.iter().position(|x| &x.id == c).unwrap()];
                        c.a.device == i || c.b.device == i
                    })
                })
        })
        .unwrap()
        .1
        .name
        .clone();
    let sim = Ibsim::start(&write_net(&faulty));
    let out = verify(&sim, dir.path(), plan_file, &initiator, "json");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions = doc["actions"].as_array().unwrap();
    assert_eq!(actions.len(), faults.len(), "{model}: {actions:#?}");
    for fault in &faults {
        let action = actions
            .iter()
            .find(|a| {
                let mut cables: Vec<&str> = a["cables"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap())
                    .collect();
                cables.sort();
                let mut want: Vec<&str> = fault.cables.iter().map(String::as_str).collect();
                want.sort();
                a["action"] == fault.action && cables == want
            })
            .unwrap_or_else(|| {
                panic!(
                    "{model}: no {} of {:?}: {actions:#?}",
                    fault.action, fault.cables
                )
            });
        let text = action["text"].as_str().unwrap();
        for name in &fault.names {
            assert!(
                text.contains(name.as_str()),
                "{model}: {name:?} not in {text:?}"
            );
        }
    }
}

#[test]
fn a_slim_fly_on_msb7800_switches_verifies_and_names_faults_by_real_port() {
    let (model, ports, per_cage) = MODELS[0];
    a_slim_fly_on(model, ports, per_cage, "plan.yaml");
}

#[test]
fn a_slim_fly_on_qm9700_switches_verifies_from_its_csv_with_cage_labels() {
    let (model, ports, per_cage) = MODELS[1];
    a_slim_fly_on(model, ports, per_cage, "plan.csv");
}
