//! Benchmark: `cabling verify` on the largest Slim Fly of the project (q = 27: 1458 switches,
//! 30618 hosts, 60507 cables) against its own `ibnetdiscover` dump with 20 injected faults
//! (5 cable swaps at switches, 3 host swaps, 4 cables moved to another rack, 3 missing,
//! 3 extra and 2 degraded cables).
//!
//! `cargo bench -p cabling --bench verify` prints Markdown table rows: median wall time over at
//! least 5 runs and 1 s per stage — reading the dump, merging, verifying (binding, findings,
//! actions) with each kind of binding evidence, rendering the text report — and the whole
//! `cabling verify` command on files (plan, dump), as a technician runs it.

#[path = "../../tests/benches/measure.rs"]
mod measure;

use std::collections::HashSet;
use std::process::Command;
use std::time::Duration;

use ibfabric::io::ibnetdiscover;
use ibfabric::plan::build::{PlanOptions, plan_for};
use ibfabric::plan::document::PlanDocument;
use ibfabric::plan::{CableEnd, DeviceKind, Plan};
use ibfabric::topology::{Fabric, LinkWidth};
use ibfabric::verify::report::Report;
use ibfabric::verify::wiring::Wiring;
use ibfabric::verify::{self, Observation, Verification};
use measure::{measure, median, ms};

const FAULTS: usize = 20;

fn main() {
    let options = PlanOptions {
        // 54 switches and 1134 hosts per rack: a synthetic layout, tall racks, 32 hosts per U.
        rack_units: 96,
        hosts_per_u: Some(32),
        ..PlanOptions::default()
    };
    let plan = plan_for(&"slimfly:q=27".parse().expect("spec"), &options).expect("plan");
    let wiring = inject(&plan);
    let fabric = wiring.to_fabric(&plan, 4).expect("faulty fabric");
    let dump_text = ibnetdiscover::write(&fabric);
    let s = fabric.summary();
    println!(
        "slimfly:q=27: {} switches, {} hosts, {} planned cables, dump {:.1} MB, {FAULTS} faults\n",
        s.switches,
        s.hosts,
        plan.cables.len(),
        dump_text.len() as f64 / 1e6
    );
    println!("| stage | binding | time |");
    println!("|---|---|---|");
    let (read, dump) = measure(|| ibnetdiscover::parse(&dump_text, None).expect("own dump"));
    row("read dump", "", &read);
    let (merge, merged) =
        measure(|| verify::merge(std::slice::from_ref(&dump)).expect("one own dump merges"));
    row("merge dumps", "", &merge);

    // Plan with GUIDs (what `cabling plan` writes), a site's cable list (descriptions), and
    // default switch descriptions (hosts named, switches found from the cabling).
    let site = anonymous(&plan);
    let mut unnamed = merged.fabric.clone();
    let switches: Vec<_> = unnamed.switches().collect();
    for n in switches {
        unnamed.node_mut(n).description = "Quantum Mellanox Technologies".into();
    }
    let cases: [(&str, &Plan, &Fabric); 3] = [
        ("plan GUIDs", &plan, &merged.fabric),
        ("descriptions", &site, &merged.fabric),
        ("cabling (switches unnamed)", &site, &unnamed),
    ];
    let mut last = None;
    for (how, plan, fabric) in cases {
        let observation = Observation {
            fabric,
            link_info: None,
            names: None,
        };
        let (times, v) = measure(|| verify::verify(plan, &observation));
        check(plan, &v, how);
        row("verify", how, &times);
        last = Some((plan, fabric, v));
    }
    let (plan_used, fabric_used, v) = last.expect("cases");
    let (render, text) = measure(|| Report::new(plan_used, fabric_used, &v).text());
    row("text report", "", &render);
    assert!(text.contains(&format!("\n{FAULTS} actions:\n")));

    // The command as a technician runs it, on files.
    let dir = tempfile::tempdir().expect("scratch dir");
    let yaml = dir.path().join("plan.yaml");
    let csv = dir.path().join("plan.csv");
    let dump_path = dir.path().join("fabric.topo");
    std::fs::write(
        &yaml,
        yaml_serde::to_string(&PlanDocument::from_plan(&plan)).expect("yaml"),
    )
    .expect("write plan");
    std::fs::write(&csv, ibfabric::plan::csv::write(&plan)).expect("write plan");
    std::fs::write(&dump_path, &dump_text).expect("write dump");
    let yaml_text = std::fs::read_to_string(&yaml).expect("read plan");
    let csv_text = std::fs::read_to_string(&csv).expect("read plan");
    let (parse_yaml, doc) =
        measure(|| yaml_serde::from_str::<PlanDocument>(&yaml_text).expect("plan document"));
    row("read plan.yaml: YAML", "", &parse_yaml);
    let (to_plan, _) = measure(|| doc.to_plan().expect("consistent plan"));
    row("read plan.yaml: document to plan", "", &to_plan);
    let (read_csv, _) = measure(|| ibfabric::plan::csv::read(&csv_text, "plan").expect("plan"));
    row("read plan.csv", "", &read_csv);
    for (file, how) in [
        (&yaml, "plan GUIDs (plan.yaml)"),
        (&csv, "descriptions (plan.csv)"),
    ] {
        let (times, code) = measure(|| {
            Command::new(env!("CARGO_BIN_EXE_cabling"))
                .arg("verify")
                .arg("--plan")
                .arg(file)
                .arg("--ibnetdiscover")
                .arg(&dump_path)
                .output()
                .expect("run cabling")
                .status
                .code()
        });
        assert_eq!(code, Some(1), "findings exit 1");
        row("`cabling verify` command", how, &times);
    }
    println!("\npeak RSS: {} MiB", peak_rss_kib() / 1024);
}

/// The plan as a site's cable list: no GUIDs, no descriptions.
fn anonymous(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    for d in &mut p.devices {
        d.guid = None;
        d.description = None;
    }
    p
}

/// Exactly the injected faults, as 20 actions.
fn check(plan: &Plan, v: &Verification, how: &str) {
    let c = v.counts();
    assert_eq!(c.actions, FAULTS, "{how}: {c:?}");
    assert_eq!(
        (
            c.miswired,
            c.missing,
            c.degraded,
            c.unexpected,
            c.unbound_devices
        ),
        (2 * 5 + 2 * 3 + 4, 3, 2, 3, 0),
        "{how}"
    );
    assert_eq!(c.ok + 25, plan.cables.len(), "{how}");
}

/// 20 faults on distinct devices, spread over the fabric.
fn inject(plan: &Plan) -> Wiring {
    let mut wiring = Wiring::from_plan(plan);
    let is_switch = |d: usize| plan.devices[d].kind == DeviceKind::Switch;
    let rack = |d: usize| plan.devices[d].rack;
    let mut used: HashSet<usize> = HashSet::new();
    // Cables in a spread-out order: every 97th cable.
    let order: Vec<usize> = (0..plan.cables.len())
        .map(|k| (k * 97) % plan.cables.len())
        .collect();
    let free = |used: &HashSet<usize>, ds: &[usize]| ds.iter().all(|d| !used.contains(d));
    let mut switch_cables = order
        .iter()
        .copied()
        .filter(|&c| is_switch(plan.cables[c].a.device) && is_switch(plan.cables[c].b.device));
    let mut next_switch_cable = |used: &mut HashSet<usize>| loop {
        let c = switch_cables.next().expect("enough switch cables");
        let (a, b) = (plan.cables[c].a, plan.cables[c].b);
        if free(used, &[a.device, b.device]) {
            used.extend([a.device, b.device]);
            return (a, b);
        }
    };
    // 5 swaps: the switch ends of two cables of one switch.
    for _ in 0..5 {
        let (a, b) = next_switch_cable(&mut used);
        let other = (1..=plan.devices[a.device].ports)
            .map(|port| CableEnd {
                device: a.device,
                port,
            })
            .find(|&e| {
                e != a
                    && wiring.peer(e).is_some_and(|f| {
                        is_switch(f.device) && f.device != b.device && free(&used, &[f.device])
                    })
            })
            .expect("a second switch cable");
        used.insert(wiring.peer(other).expect("cabled").device);
        wiring.swap_ends(a, other);
    }
    // 3 host swaps between two switches of one rack.
    for _ in 0..3 {
        let (a, _) = next_switch_cable(&mut used);
        let (b, _) = (0..plan.devices.len())
            .filter(|&d| is_switch(d) && rack(d) == rack(a.device) && free(&used, &[d]))
            .map(|d| (d, ()))
            .next()
            .expect("another switch in the rack");
        used.insert(b);
        let host_port = |d: usize| {
            (1..=plan.devices[d].ports)
                .map(|port| CableEnd { device: d, port })
                .find(|&e| wiring.peer(e).is_some_and(|f| !is_switch(f.device)))
                .expect("a host port")
        };
        let (x, y) = (host_port(a.device), host_port(b));
        wiring.swap_ends(x, y);
    }
    // 4 cables moved to a spare port of a switch in another rack.
    for _ in 0..4 {
        let (a, b) = loop {
            let (a, b) = next_switch_cable(&mut used);
            if rack(a.device) != rack(b.device) {
                break (a, b);
            }
        };
        let target = (0..plan.devices.len())
            .find(|&t| {
                is_switch(t)
                    && free(&used, &[t])
                    && rack(t) != rack(a.device)
                    && rack(t) != rack(b.device)
            })
            .expect("a third rack");
        used.insert(target);
        wiring.move_end(
            b,
            CableEnd {
                device: target,
                port: plan.devices[target].ports + 1,
            },
        );
    }
    // 3 missing, 2 degraded.
    for _ in 0..3 {
        let (a, _) = next_switch_cable(&mut used);
        wiring.unplug(a);
    }
    for _ in 0..2 {
        let (a, _) = next_switch_cable(&mut used);
        let w = wiring.at(a).expect("cabled");
        wiring.wires[w].width = Some(LinkWidth::X1);
    }
    // 3 extra cables between spare ports.
    for _ in 0..3 {
        let (a, b) = next_switch_cable(&mut used);
        let spare = |e: CableEnd| CableEnd {
            device: e.device,
            port: plan.devices[e.device].ports + 2,
        };
        wiring.plug(spare(a), spare(b));
    }
    wiring
}

fn row(stage: &str, how: &str, times: &[Duration]) {
    println!("| {stage} | {how} | {} |", ms(median(times)));
}

/// Peak resident set size of this process (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
