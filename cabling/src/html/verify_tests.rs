//! Tests of the verification page: every finding marked on its racks, devices and rows, the
//! punch list complete, a clean fabric said to be clean.

use super::render_verification;
use super::tests::sheets;
use ibfabric::plan::build::{PlanOptions, plan_for};
use ibfabric::plan::{CableEnd, DeviceKind, Plan};
use ibfabric::rng::Rng;
use ibfabric::topology::{Fabric, LinkWidth};
use ibfabric::verify::report::Report;
use ibfabric::verify::wiring::Wiring;
use ibfabric::verify::{Observation, Place, Status, Verification, verify};

fn plan(spec: &str) -> Plan {
    plan_for(&spec.parse().unwrap(), &PlanOptions::default()).unwrap()
}

/// The plan's wiring with `faults` random faults of every kind a technician makes: two cable
/// ends swapped, a cable left out, a cable below its rate, a cable not in the plan (between
/// spare ports of two switches, which get [`SPARE`] ports more than planned).
fn faulty(plan: &Plan, seed: u64, faults: usize) -> Fabric {
    let mut rng = Rng::new(seed);
    let mut wiring = Wiring::from_plan(plan);
    let switches: Vec<usize> = (0..plan.devices.len())
        .filter(|&d| plan.devices[d].kind == DeviceKind::Switch)
        .collect();
    for k in 0..faults {
        let pick = |rng: &mut Rng| wiring.wires[rng.below(wiring.wires.len() as u64) as usize];
        match k % 4 {
            0 => {
                let (x, y) = (pick(&mut rng), pick(&mut rng));
                wiring.swap_ends(x.a, y.b);
            }
            1 => {
                let w = pick(&mut rng);
                wiring.unplug(w.a);
            }
            2 => {
                let i = rng.below(wiring.wires.len() as u64) as usize;
                wiring.wires[i].width = Some(LinkWidth::X1);
            }
            _ => {
                let s = |rng: &mut Rng| switches[rng.below(switches.len() as u64) as usize];
                let a = s(&mut rng);
                let b = loop {
                    let b = s(&mut rng);
                    if b != a {
                        break b;
                    }
                };
                // The k / 4-th spare port of each: a port no other fault uses.
                let spare = |d: usize| CableEnd {
                    device: d,
                    port: plan.devices[d].ports + 1 + (k / 4) as u8,
                };
                wiring.plug(spare(a), spare(b));
            }
        }
    }
    wiring.to_fabric(plan, SPARE).unwrap()
}

/// Spare ports the faulty fabrics' switches have beyond the plan's.
const SPARE: u8 = 3;

fn verified(plan: &Plan, fabric: &Fabric) -> Verification {
    verify(
        plan,
        &Observation {
            fabric,
            link_info: None,
            names: None,
        },
    )
}

/// The sheet of `rack`, which must exist.
fn rack_sheet<'a>(doc: &'a str, plan: &Plan, rack: usize) -> &'a str {
    let marker = format!("<div data-rack=\"{}\">", plan.racks[rack].name);
    sheets(doc)
        .into_iter()
        .find(|(kind, text)| *kind == "rack" && text.contains(&marker))
        .unwrap_or_else(|| panic!("no sheet for rack {}", plan.racks[rack].name))
        .1
}

/// Checks the page of one verification: every cable end not as planned has its row in its
/// rack's sheet with the finding's class, its device is drawn in that class or a worse one,
/// every action is in the punch list, every count is the verification's.
fn assert_marks_every_finding(plan: &Plan, fabric: &Fabric, v: &Verification) {
    let report = Report::new(plan, fabric, v);
    let doc = render_verification(&report);
    for f in &v.findings {
        let class = match f.status {
            Status::Ok => continue,
            Status::Degraded(_) => "vd",
            Status::NotVerifiable => "vu",
            _ => "vf",
        };
        let cable = &plan.cables[f.cable];
        for end in [cable.a, cable.b] {
            let device = &plan.devices[end.device];
            let sheet = rack_sheet(&doc, plan, device.rack);
            let row = format!("<tr class=\"{class}\" data-cable=\"{}\">", cable.id);
            assert!(sheet.contains(&row), "{}: no row {row}", cable.id);
            // Drawn in the finding's class or a worse one; dashed when not found at all.
            let allowed: &[&str] = if v.binding.node(end.device).is_none() {
                &["vu"]
            } else {
                match class {
                    "vf" => &["vf"],
                    "vd" => &["vf", "vd"],
                    _ => &["vf", "vd", "vu"],
                }
            };
            let drawn = allowed
                .iter()
                .any(|c| sheet.contains(&format!("class=\"{c}\" data-device=\"{}\"", device.name)));
            assert!(
                drawn,
                "{}: {} not marked {allowed:?}",
                cable.id, device.name
            );
        }
    }
    for u in &v.unexpected {
        for place in [u.a, u.b] {
            if let Place::Device(end) = place {
                let device = &plan.devices[end.device];
                let sheet = rack_sheet(&doc, plan, device.rack);
                let mark = format!("class=\"vf\" data-device=\"{}\"", device.name);
                assert!(sheet.contains(&mark), "unexpected cable on {}", device.name);
            }
        }
    }
    let summary = sheets(&doc)[0].1;
    assert_eq!(
        summary.matches("<li data-action=").count(),
        v.actions.len(),
        "punch list"
    );
    for a in &v.actions {
        let line = ibfabric::io::markup::Escaped(&report.action_text(a)).to_string();
        assert!(summary.contains(&line), "missing action: {line}");
    }
    let count = |id: &str| {
        let key = format!("id=\"n-{id}\">");
        let at = summary.find(&key).unwrap() + key.len();
        summary[at..]
            .split('<')
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap()
    };
    let c = v.counts();
    assert_eq!(
        [
            count("ok"),
            count("degraded"),
            count("miswired"),
            count("missing"),
            count("unexpected")
        ],
        [c.ok, c.degraded, c.miswired, c.missing, c.unexpected]
    );
}

#[test]
fn a_clean_fabric_gets_the_clean_verdict_and_no_rack_sheet() {
    let p = plan("slimfly:q=5");
    let fabric = Wiring::from_plan(&p).to_fabric(&p, 0).unwrap();
    let v = verified(&p, &fabric);
    assert!(v.is_clean());
    let doc = render_verification(&Report::new(&p, &fabric, &v));
    let sheets = sheets(&doc);
    assert_eq!(sheets.len(), 1);
    assert!(doc.contains("class=\"verdict clean\""));
    assert!(!doc.contains("data-device="), "nothing marked");
    assert_eq!(doc.matches("all verified").count(), p.racks.len());
}

#[test]
fn every_fault_is_marked_on_its_racks_devices_and_rows() {
    // Property: over many random fault sets of every kind, on two constructions.
    let mut seen = [0; 4];
    for spec in ["slimfly:q=5", "mlfm:d=3"] {
        let p = plan(spec);
        for seed in 1..=12 {
            let fabric = faulty(&p, seed, 1 + seed as usize % (4 * SPARE as usize));
            let v = verified(&p, &fabric);
            assert!(!v.is_clean(), "{spec} seed {seed}");
            assert_marks_every_finding(&p, &fabric, &v);
            let c = v.counts();
            for (n, k) in seen
                .iter_mut()
                .zip([c.miswired, c.missing, c.degraded, c.unexpected])
            {
                *n += k;
            }
        }
    }
    // Every kind of finding was among them.
    assert!(
        seen.iter().all(|&n| n > 0),
        "miswired, missing, degraded, unexpected: {seen:?}"
    );
}

#[test]
fn a_rack_not_seen_yet_is_drawn_dashed_and_its_cables_not_verifiable() {
    let p = plan("slimfly:q=5");
    let last = p.racks.len() - 1;
    // The rack is not cabled yet: ibnetdiscover sees none of its devices.
    let fabric = Wiring::from_plan(&p)
        .to_fabric(&p, 0)
        .unwrap()
        .after_losses(|n| p.devices[n.0 as usize].rack == last, |_| false);
    let v = verified(&p, &fabric);
    assert_marks_every_finding(&p, &fabric, &v);
    let doc = render_verification(&Report::new(&p, &fabric, &v));
    let sheet = rack_sheet(&doc, &p, last);
    for (d, device) in p.devices.iter().enumerate() {
        if device.rack == last && v.binding.node(d).is_none() {
            let mark = format!("class=\"vu\" data-device=\"{}\"", device.name);
            assert!(sheet.contains(&mark), "{}", device.name);
        }
    }
}
