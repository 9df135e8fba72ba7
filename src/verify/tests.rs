//! Verification against the ibsim fixtures and against faults injected into generated plans.

use std::collections::BTreeSet;

use super::report::Report;
use super::wiring::Wiring;
use super::*;
use crate::io::iblinkinfo::{LogicalState, PhysicalState, PortStatus};
use crate::io::{fixture, iblinkinfo, ibnetdiscover};
use crate::plan::build::{PlanOptions, plan_for};
use crate::topology::{Guid, LinkWidth, NodeSpec};

const SF5: &str = "ibsim-generated/slimfly-q5/";

/// The shared Slim Fly q = 5 cable list, or `None` (skip line printed) when it is missing.
fn fixture_plan() -> Option<Plan> {
    let text = fixture(&format!("{SF5}slimfly_q5_plan.csv"))?;
    Some(crate::plan::csv::read(&text, "slimfly-q5").unwrap())
}

/// The shared Slim Fly q = 5 dump `name`, or `None` (skip line printed) when it is missing.
fn dump(name: &str) -> Option<Fabric> {
    let text = fixture(&format!("{SF5}{name}"))?;
    Some(ibnetdiscover::parse(&text, None).unwrap().fabric)
}

fn run(
    plan: &Plan,
    fabric: &Fabric,
    names: Option<&NodeNameMap>,
    info: Option<&LinkInfo>,
) -> Verification {
    verify(
        plan,
        &Observation {
            fabric,
            link_info: info,
            names,
        },
    )
}

/// Non-ok findings as `(cable id, status word)`.
fn findings(plan: &Plan, v: &Verification) -> BTreeSet<(String, &'static str)> {
    v.findings
        .iter()
        .filter(|f| f.status != Status::Ok)
        .map(|f| (plan.cables[f.cable].id.clone(), f.status.word()))
        .collect()
}

/// The action lines without their labels.
fn action_lines(plan: &Plan, fabric: &Fabric, v: &Verification) -> Vec<String> {
    let r = Report::new(plan, fabric, v);
    v.actions
        .iter()
        .map(|a| {
            let t = r.action_text(a);
            t.split(" [").next().unwrap().to_string()
        })
        .collect()
}

fn plan(spec: &str) -> Plan {
    plan_for(&spec.parse().unwrap(), &PlanOptions::default()).unwrap()
}

fn end(plan: &Plan, device: &str, port: u8) -> CableEnd {
    CableEnd {
        device: plan
            .device_by_name(device)
            .unwrap_or_else(|| panic!("{device}")),
        port,
    }
}

fn id_at(plan: &Plan, device: &str, port: u8) -> String {
    let e = end(plan, device, port);
    plan.cables
        .iter()
        .find(|c| c.a == e || c.b == e)
        .unwrap()
        .id
        .clone()
}

/// The plan without GUIDs or descriptions (a site's own cable list).
fn anonymous(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    for d in &mut p.devices {
        d.guid = None;
        d.description = None;
    }
    p
}

#[test]
fn the_faulty_fixture_gives_exactly_the_faults_it_documents() {
    let Some(plan) = fixture_plan() else { return };
    let Some(fabric) = dump("faulty.ibnetdiscover.topo") else {
        return;
    };
    let Some(names) = fixture(&format!("{SF5}node-name-map.txt")) else {
        return;
    };
    let names = NodeNameMap::parse(&names).unwrap();
    let Some(info) = fixture(&format!("{SF5}faulty.iblinkinfo.txt")) else {
        return;
    };
    let info = iblinkinfo::parse(&info).unwrap();
    let expected_findings: BTreeSet<(String, &str)> = [
        (id_at(&plan, "sw0-1-2", 7), "miswired"), // F1
        (id_at(&plan, "sw0-1-2", 8), "miswired"),
        (id_at(&plan, "sw1-3-3", 5), "missing"),  // F2
        (id_at(&plan, "sw0-0-2", 2), "miswired"), // F3
        (id_at(&plan, "sw0-0-4", 4), "miswired"), // F4
        (id_at(&plan, "sw0-2-2", 9), "degraded"), // F5
        (id_at(&plan, "sw0-3-0", 7), "miswired"), // F6
    ]
    .into_iter()
    .collect();
    let f6 = id_at(&plan, "sw0-3-0", 7);
    let (f3, f4, f5) = (
        id_at(&plan, "sw0-0-2", 2),
        id_at(&plan, "sw0-0-4", 4),
        id_at(&plan, "sw0-2-2", 9),
    );
    let f2 = id_at(&plan, "sw1-3-3", 5);
    let expected_actions = [
        format!("move cable {f3} from R01 U38 sw0-0-2 port 12 to port 2"),
        format!("move cable {f6} from R01 U35 sw1-0-0 port 14 to port 10"),
        "swap the cables in R02 U38 sw0-1-2 ports 7 and 8".to_string(),
        format!(
            "reseat or replace cable {f5} between R03 U38 sw0-2-2 port 9 and R03 U32 sw1-2-3 port 9 \
             (1x instead of 4x; possible cause: cable not fully seated)"
        ),
        format!("plug a cable {f2} between R04 U34 sw1-3-1 port 6 and R04 U32 sw1-3-3 port 5"),
        format!("move cable {f4} from R05 U36 sw0-4-4 port 13 to R01 U36 sw0-0-4 port 4"),
    ];
    // With the node-name-map, by descriptions alone, and with iblinkinfo port states.
    for (names, info) in [(Some(&names), None), (None, None), (None, Some(&info))] {
        let v = run(&plan, &fabric, names, info);
        assert_eq!(findings(&plan, &v), expected_findings);
        assert!(v.unexpected.is_empty() && v.unexpected_devices.is_empty());
        assert_eq!(v.binding.unbound_devices().count(), 0);
        let mut lines = action_lines(&plan, &fabric, &v);
        if info.is_some() {
            assert!(lines[4].ends_with(
                " (no link, port Polling: if a cable is plugged in, reseat or replace it)"
            ));
            lines[4] = lines[4].split(" (").next().unwrap().to_string();
        }
        assert_eq!(lines, expected_actions);
        assert!(!v.is_clean());
    }
}

#[test]
fn the_clean_fixture_is_clean_and_the_partial_one_is_mid_wiring() {
    let Some(plan) = fixture_plan() else { return };
    let Some(fabric) = dump("clean.ibnetdiscover.topo") else {
        return;
    };
    let Some(info) = fixture(&format!("{SF5}clean.iblinkinfo.txt")) else {
        return;
    };
    let info = iblinkinfo::parse(&info).unwrap();
    for info in [None, Some(&info)] {
        let v = run(&plan, &fabric, None, info);
        assert!(v.is_clean(), "{:?}", findings(&plan, &v));
        assert!(v.actions.is_empty());
        assert_eq!(v.counts().ok, 375);
    }
    // R05 is an island nobody could dump, R04's hosts are not cabled.
    let Some(fabric) = dump("partial.ibnetdiscover.topo") else {
        return;
    };
    let v = run(&plan, &fabric, None, None);
    let c = v.counts();
    assert_eq!((c.ok, c.missing, c.not_verifiable), (240, 80, 55));
    assert_eq!((c.miswired, c.degraded, c.unexpected), (0, 0, 0));
    assert_eq!(c.unbound_devices, 90);
    for f in &v.findings {
        let cable = &plan.cables[f.cable];
        let racks =
            [cable.a, cable.b].map(|e| plan.racks[plan.devices[e.device].rack].name.as_str());
        let host = [cable.a, cable.b]
            .iter()
            .any(|e| plan.devices[e.device].kind == DeviceKind::Host);
        let expected = match racks {
            ["R05", "R05"] => "not-verifiable",
            [_, "R05"] | ["R05", _] => "missing",
            ["R04", "R04"] if host => "missing",
            _ => "ok",
        };
        assert_eq!(f.status.word(), expected, "{}", cable.id);
    }
    assert_eq!(v.actions.len(), 80);
    assert!(v.actions.iter().all(|a| a.word() == "plug"));
    let r05 = v.progress[4];
    assert_eq!(
        (r05.expected, r05.verified, r05.not_verifiable),
        (95, 0, 55)
    );
}

#[test]
fn two_cables_swapped_between_the_same_two_switches_are_one_swap() {
    let plan = plan("fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4");
    // Find a leaf with two cables to one spine and cross them at the leaf.
    let (leaf, p1, p2) = plan
        .devices
        .iter()
        .enumerate()
        .find_map(|(d, _)| {
            let idx = PlanIndex::new(&plan);
            let ports: Vec<(u8, CableEnd)> = idx.planned_ports(&plan, d).collect();
            ports.iter().enumerate().find_map(|(i, &(p, far))| {
                ports[i + 1..]
                    .iter()
                    .find(|&&(_, f)| {
                        f.device == far.device
                            && plan.devices[far.device].kind == DeviceKind::Switch
                    })
                    .map(|&(q, _)| (d, p, q))
            })
        })
        .unwrap();
    let mut wiring = Wiring::from_plan(&plan);
    let e = |port| CableEnd { device: leaf, port };
    wiring.swap_ends(e(p1), e(p2));
    let fabric = wiring.to_fabric(&plan, 0).unwrap();
    let v = run(&plan, &fabric, None, None);
    assert_eq!(v.counts().miswired, 2);
    assert_eq!(v.actions.len(), 1);
    let Action::Swap(moves) = &v.actions[0] else {
        panic!("{:?}", v.actions)
    };
    // The swap is at one end (both ends are on one device each; either end would do).
    let text = Report::new(&plan, &fabric, &v).action_text(&v.actions[0]);
    assert!(text.starts_with("swap the cables in "), "{text}");
    assert!(
        text.contains("swapped between the same two devices"),
        "{text}"
    );
    let Place::Device(a) = moves[0].from else {
        panic!()
    };
    let Place::Device(b) = moves[1].from else {
        panic!()
    };
    assert_eq!(a.device, b.device);
}

#[test]
fn shifted_cables_are_a_chain_and_a_cycle_is_a_rotation() {
    let plan = plan("slimfly:q=5");
    let s = "sw0-0-0";
    let ids: Vec<String> = (1..=3).map(|p| id_at(&plan, s, p)).collect();
    // Chain: the cables of ports 1, 2, 3 are in ports 2, 3 and the spare port 12.
    let mut wiring = Wiring::from_plan(&plan);
    wiring.move_end(end(&plan, s, 3), end(&plan, s, 12));
    wiring.move_end(end(&plan, s, 2), end(&plan, s, 3));
    wiring.move_end(end(&plan, s, 1), end(&plan, s, 2));
    let fabric = wiring.to_fabric(&plan, 4).unwrap();
    let v = run(&plan, &fabric, None, None);
    assert_eq!(
        action_lines(&plan, &fabric, &v),
        [format!(
            "move the cables in R01 U42 sw0-0-0 in this order: {} from port 2 to port 1, then {} from port 3 to port 2, then {} from port 12 to port 3",
            ids[0], ids[1], ids[2]
        )]
    );
    // Rotation: 1 → 2 → 3 → 1.
    let mut wiring = Wiring::from_plan(&plan);
    wiring.swap_ends(end(&plan, s, 1), end(&plan, s, 2));
    wiring.swap_ends(end(&plan, s, 1), end(&plan, s, 3));
    let fabric = wiring.to_fabric(&plan, 0).unwrap();
    let v = run(&plan, &fabric, None, None);
    assert_eq!(v.actions.len(), 1);
    assert_eq!(v.actions[0].word(), "rotate");
    let steps = v.actions[0].steps(&plan);
    assert_eq!(steps.len(), 2 + 2 * 2);
    // Replaying the steps restores the plan.
    let mut replay = wiring.clone();
    apply(&mut replay, &plan, &fabric, &v);
    assert!(run(&plan, &replay.to_fabric(&plan, 0).unwrap(), None, None).is_clean());
}

/// Carries out every action's steps on `wiring`.
fn apply(wiring: &mut Wiring, plan: &Plan, fabric: &Fabric, v: &Verification) {
    let end = |p: Place| match p {
        Place::Device(e) => e,
        Place::Node(_) => panic!("unidentified node in {:?}", fabric.name),
    };
    for a in &v.actions {
        for s in a.steps(plan) {
            match s {
                Step::Disconnect(p) => {
                    wiring.unplug(end(p)).expect("a cable to unplug");
                }
                Step::Connect(x, y) => wiring.plug(end(x), end(y)),
            }
        }
    }
}

#[test]
fn faults_of_every_kind_are_found_and_their_actions_restore_the_plan() {
    let plan = plan("slimfly:q=5");
    let mut wiring = Wiring::from_plan(&plan);
    let e = |d: &str, p| end(&plan, d, p);
    // Two hosts swapped (at their switches), a cable moved to another rack's spare port, a
    // missing cable, an extra cable, a 1x link, a loopback.
    wiring.swap_ends(e("sw0-0-1", 8), e("sw0-0-2", 8));
    let moved = id_at(&plan, "sw0-1-0", 2);
    let far = wiring.peer(e("sw0-1-0", 2)).unwrap();
    wiring.move_end(far, e("sw0-3-3", 13));
    let missing = id_at(&plan, "sw0-2-0", 6);
    wiring.unplug(e("sw0-2-0", 6));
    wiring.plug(e("sw0-2-1", 12), e("sw0-2-2", 12));
    let slow = wiring.at(e("sw0-4-0", 1)).unwrap();
    wiring.wires[slow].width = Some(LinkWidth::X1);
    wiring.plug(e("sw0-4-1", 12), e("sw0-4-1", 13));
    let fabric = wiring.to_fabric(&plan, 4).unwrap();
    let v = run(&plan, &fabric, None, None);
    let expected: BTreeSet<(String, &str)> = [
        (id_at(&plan, "sw0-0-1", 8), "miswired"),
        (id_at(&plan, "sw0-0-2", 8), "miswired"),
        (moved.clone(), "miswired"),
        (missing.clone(), "missing"),
        (id_at(&plan, "sw0-4-0", 1), "degraded"),
    ]
    .into_iter()
    .collect();
    assert_eq!(findings(&plan, &v), expected);
    let lines = action_lines(&plan, &fabric, &v);
    let words: Vec<&str> = v.actions.iter().map(Action::word).collect();
    assert_eq!(
        words,
        ["swap", "reseat", "plug", "remove", "move", "remove"],
        "{lines:#?}"
    );
    assert_eq!(
        lines[0],
        "swap the cables in R01 U41 sw0-0-1 port 8 and R01 U40 sw0-0-2 port 8"
    );
    assert_eq!(
        lines[1],
        format!(
            "reseat or replace cable {} between R01 U05 sw1-0-0 port 5 and R05 U42 sw0-4-0 port 1 (1x instead of 4x; possible cause: cable not fully seated)",
            id_at(&plan, "sw0-4-0", 1)
        )
    );
    assert_eq!(
        lines[2],
        format!("plug a cable {missing} between R03 U42 sw0-2-0 port 6 and R03 U41 sw0-2-1 port 7")
    );
    assert_eq!(
        lines[4],
        format!("move cable {moved} from R04 U39 sw0-3-3 port 13 to R02 U01 sw1-1-4 port 2")
    );
    assert_eq!(
        lines[3],
        "remove the cable between R03 U41 sw0-2-1 port 12 and R03 U40 sw0-2-2 port 12 (not in the plan)"
    );
    assert_eq!(
        lines[5],
        "remove the loopback cable in R05 U41 sw0-4-1 ports 12 and 13"
    );
    assert_eq!(v.unexpected.len(), 2);
    // Doing what it says gives the planned fabric (the 1x link aside: reseating is physical).
    let mut fixed = wiring.clone();
    apply(&mut fixed, &plan, &fabric, &v);
    fixed.wires.iter_mut().for_each(|w| w.width = None);
    let fabric = fixed.to_fabric(&plan, 4).unwrap();
    assert!(run(&plan, &fabric, None, None).is_clean());
}

#[test]
fn default_descriptions_and_unknown_guids_bind_by_cabling_without_relabelling_switches() {
    let full = plan("slimfly:q=5");
    let site = anonymous(&full);
    let mut wiring = Wiring::from_plan(&full);
    // Swap two switch cables at sw0-1-2 and move a host to another switch's spare port.
    wiring.swap_ends(end(&full, "sw0-1-2", 1), end(&full, "sw0-1-2", 2));
    let host_cable = id_at(&full, "sw0-2-3", 8);
    wiring.move_end(end(&full, "sw0-2-3", 8), end(&full, "sw0-2-4", 12));
    let mut fabric = wiring.to_fabric(&site, 4).unwrap();
    let ids: Vec<NodeId> = fabric.switches().collect();
    for &n in &ids {
        fabric.node_mut(n).description = "Quantum Mellanox Technologies".into();
    }
    // Hosts keep their names: they anchor the switches.
    for n in fabric.hosts().collect::<Vec<_>>() {
        let name = fabric.node(n).name.clone();
        fabric.node_mut(n).description = format!("{name} mlx5_0");
    }
    let v = run(&site, &fabric, None, None);
    for (d, _) in site.devices.iter().enumerate() {
        assert_eq!(
            v.binding.node(d),
            Some(NodeId(d as u32)),
            "{}",
            site.devices[d].name
        );
    }
    assert_eq!(v.binding.counts()[2], (BoundBy::Description, 200));
    assert_eq!(v.binding.counts()[3], (BoundBy::Cabling, 50));
    let words: Vec<&str> = v.actions.iter().map(Action::word).collect();
    assert_eq!(
        words,
        ["swap", "move"],
        "{:?}",
        action_lines(&site, &fabric, &v)
    );
    let lines = action_lines(&site, &fabric, &v);
    assert_eq!(
        lines[1],
        format!("move cable {host_cable} from R03 U38 sw0-2-4 port 12 to R03 U39 sw0-2-3 port 8")
    );

    // Nothing identifiable at all: hosts default too. The structure alone binds everything.
    for n in fabric.hosts().collect::<Vec<_>>() {
        fabric.node_mut(n).description = "MT4129 ConnectX7   Mellanox Technologies".into();
    }
    let clean = Wiring::from_plan(&full).to_fabric(&site, 0).unwrap();
    let mut anonymous_clean = clean.clone();
    for i in 0..anonymous_clean.nodes().len() {
        let n = NodeId(i as u32);
        let desc = if anonymous_clean.node(n).is_switch() {
            "Quantum Mellanox Technologies"
        } else {
            "MT4129 ConnectX7   Mellanox Technologies"
        };
        anonymous_clean.node_mut(n).description = desc.into();
    }
    let v = run(&site, &anonymous_clean, None, None);
    assert!(v.is_clean(), "{:?}", findings(&site, &v));
    assert_eq!(v.binding.counts()[3], (BoundBy::Cabling, 250));
    assert_eq!(v.binding.warnings.len(), 1, "{:?}", v.binding.warnings);
    // With the faults, the structure still explains everything but them, up to the plan's
    // symmetries (the translations of a Slim Fly keep port numbers). The moved host has no
    // identity any more: its cable is to remove, and its planned cable to plug.
    let v = run(&site, &fabric, None, None);
    let mut words: Vec<&str> = v.actions.iter().map(Action::word).collect();
    words.sort_unstable();
    assert_eq!(
        words,
        ["plug", "remove", "swap"],
        "{:?}",
        action_lines(&site, &fabric, &v)
    );
    assert_eq!(v.unexpected[0].kind, UnexpectedKind::HostInSparePort);
    assert!(
        v.binding.warnings[0].contains("names may be permuted"),
        "{:?}",
        v.binding.warnings
    );
}

#[test]
fn unknown_hosts_in_spare_ports_are_unexpected_devices_to_unplug() {
    let plan = plan("mlfm:d=3");
    let mut fabric = Wiring::from_plan(&plan).to_fabric(&plan, 2).unwrap();
    let stranger = fabric
        .add_node(NodeSpec {
            kind: NodeKind::Ca,
            name: "stranger".into(),
            description: "MT4129 ConnectX7   Mellanox Technologies".into(),
            guid: Guid(0x0c42_a103_0099_0000),
            num_ports: 1,
            rack: None,
        })
        .unwrap();
    let leaf = plan.device_by_name("leaf0-0").unwrap();
    let spare = plan.devices[leaf].ports + 1;
    fabric
        .connect(
            PortRef {
                node: NodeId(leaf as u32),
                port: spare,
            },
            PortRef {
                node: stranger,
                port: 1,
            },
            None,
            None,
        )
        .unwrap();
    let v = run(&plan, &fabric, None, None);
    assert_eq!(v.unexpected_devices, [stranger]);
    assert_eq!(v.unexpected.len(), 1);
    assert_eq!(v.unexpected[0].kind, UnexpectedKind::HostInSparePort);
    let lines = action_lines(&plan, &fabric, &v);
    assert_eq!(
        lines,
        [format!(
            "remove the cable between R01 U42 leaf0-0 port {spare} and unknown host \"MT4129 ConnectX7   Mellanox Technologies\" (0x0c42a10300990000) port 1 (host in a spare port)"
        )]
    );
    let text = Report::new(&plan, &fabric, &v).text();
    assert!(
        text.contains("unexpected devices (not in the plan):\n  unknown host"),
        "{text}"
    );
}

fn status(
    node_guid: Guid,
    port: u8,
    physical: PhysicalState,
    width: Option<LinkWidth>,
    could_be: Option<LinkWidth>,
) -> PortStatus {
    PortStatus {
        line: 1,
        kind: Some(NodeKind::Switch),
        node_guid: Some(node_guid),
        port_guid: None,
        node_desc: String::new(),
        port,
        ext_port: None,
        lid: 0,
        logical: if physical == PhysicalState::LinkUp {
            LogicalState::Active
        } else {
            LogicalState::Down
        },
        physical,
        width,
        speed: None,
        could_be_width: could_be,
        could_be_speed: None,
        peer: None,
    }
}

#[test]
fn port_states_tell_a_failing_cable_from_a_missing_one() {
    let plan = plan("slimfly:q=5");
    let e = |d: &str, p| end(&plan, d, p);
    let mut wiring = Wiring::from_plan(&plan);
    let disabled = id_at(&plan, "sw0-0-0", 1);
    let far = wiring.peer(e("sw0-0-0", 1)).unwrap();
    wiring.unplug(e("sw0-0-0", 1));
    let polling = id_at(&plan, "sw0-0-1", 1);
    wiring.unplug(e("sw0-0-1", 1));
    let fabric = wiring.to_fabric(&plan, 0).unwrap();
    let guid = |d: usize| fabric.node(NodeId(d as u32)).guid;
    let info = LinkInfo {
        ports: vec![
            status(
                guid(e("sw0-0-0", 1).device),
                1,
                PhysicalState::Disabled,
                None,
                None,
            ),
            status(
                guid(far.device),
                far.port,
                PhysicalState::Polling,
                None,
                None,
            ),
            status(
                guid(e("sw0-0-1", 1).device),
                1,
                PhysicalState::Polling,
                None,
                None,
            ),
        ],
        warnings: Vec::new(),
    };
    let v = run(&plan, &fabric, None, Some(&info));
    let expected: BTreeSet<(String, &str)> =
        [(disabled.clone(), "down"), (polling.clone(), "missing")]
            .into_iter()
            .collect();
    assert_eq!(findings(&plan, &v), expected);
    let lines = action_lines(&plan, &fabric, &v);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!(
                "check cable {disabled} between R01 U42 sw0-0-0 port 1 and "
            )) && l.contains(": R01 U42 sw0-0-0 port 1 is Disabled: enable the port")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("plug a cable {polling} "))),
        "{lines:?}"
    );
}

#[test]
fn rates_below_the_plan_or_the_usual_are_degraded_unless_at_the_best_both_ends_support() {
    let planned = plan("slimfly:q=5");
    let mut wiring = Wiring::from_plan(&planned);
    let slow = wiring.at(end(&planned, "sw0-0-0", 1)).unwrap();
    wiring.wires[slow].width = Some(LinkWidth::X1);
    let fabric = wiring.to_fabric(&planned, 0).unwrap();
    // The plan says 4xEDR: degraded whatever iblinkinfo says.
    let sw = fabric
        .node(NodeId(end(&planned, "sw0-0-0", 1).device as u32))
        .guid;
    let at_best = LinkInfo {
        ports: vec![status(
            sw,
            1,
            PhysicalState::LinkUp,
            Some(LinkWidth::X1),
            None,
        )],
        warnings: Vec::new(),
    };
    let v = run(&planned, &fabric, None, Some(&at_best));
    assert_eq!(v.counts().degraded, 1);
    // A cable list without rates: the usual 4x is expected, unless iblinkinfo shows the link
    // already runs at what both ends support.
    let mut site = anonymous(&planned);
    site.cables.iter_mut().for_each(|c| c.rate = None);
    assert_eq!(run(&site, &fabric, None, None).counts().degraded, 1);
    assert_eq!(
        run(&site, &fabric, None, Some(&at_best)).counts().degraded,
        0
    );
    let could_be = LinkInfo {
        ports: vec![status(
            sw,
            1,
            PhysicalState::LinkUp,
            Some(LinkWidth::X1),
            Some(LinkWidth::X4),
        )],
        warnings: Vec::new(),
    };
    let v = run(&site, &fabric, None, Some(&could_be));
    let Status::Degraded(d) = v
        .findings
        .iter()
        .find(|f| f.status != Status::Ok)
        .unwrap()
        .status
    else {
        panic!()
    };
    assert_eq!(
        (d.width, d.expected_width, d.could_be_width),
        (
            Some(LinkWidth::X1),
            Some(LinkWidth::X4),
            Some(LinkWidth::X4)
        )
    );
}

#[test]
fn reports_render_as_text_csv_and_json() {
    let Some(plan) = fixture_plan() else { return };
    let Some(fabric) = dump("faulty.ibnetdiscover.topo") else {
        return;
    };
    let v = run(&plan, &fabric, None, None);
    let r = Report::new(&plan, &fabric, &v);
    let text = r.text();
    assert!(
        text.contains("\nR02\n  swap the cables in R02 U38 sw0-1-2 ports 7 and 8 ["),
        "{text}"
    );
    assert!(
        text.contains("progress (cables verified / expected):\n  R01  91/95\n"),
        "{text}"
    );
    assert!(text.ends_with("  all  368/375\n"), "{text}");
    let csv = r.csv();
    assert!(csv.starts_with("rack,u,device,port,action,cables,instruction\n"));
    assert_eq!(csv.lines().count(), 7);
    let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(json["clean"], false);
    assert_eq!(json["counts"]["miswired"], 5);
    assert_eq!(json["actions"].as_array().unwrap().len(), 6);
    assert_eq!(json["findings"].as_array().unwrap().len(), 7);
}

#[test]
fn aggregation_nodes_are_not_cables_nor_devices() {
    let plan = plan("slimfly:q=5");
    let mut fabric = Wiring::from_plan(&plan).to_fabric(&plan, 1).unwrap();
    let switch = NodeId(0);
    let an = fabric
        .add_node(NodeSpec {
            kind: NodeKind::Ca,
            name: "an".into(),
            description: crate::io::ibnetdiscover::AGGREGATION_NODE_DESCRIPTION.into(),
            guid: Guid(0x0c42_a103_00aa_0000),
            num_ports: 1,
            rack: None,
        })
        .unwrap();
    let last = fabric.node(switch).num_ports();
    fabric
        .connect(
            PortRef {
                node: switch,
                port: last,
            },
            PortRef { node: an, port: 1 },
            None,
            None,
        )
        .unwrap();
    let v = run(&plan, &fabric, None, None);
    assert!(v.is_clean());
    assert_eq!((v.ignored_links, v.observed_cables), (1, plan.cables.len()));
}

#[test]
fn a_move_into_a_port_holding_an_unplanned_cable_waits_for_its_removal() {
    let plan = plan("slimfly:q=5");
    let mut wiring = Wiring::from_plan(&plan);
    let e = |d: &str, p| end(&plan, d, p);
    // A cable's far end moved to a spare port, and an unplanned cable in the port it left;
    // a cable moved from one spare port to another, into no unplanned cable.
    let far = wiring.peer(e("sw0-1-0", 2)).unwrap();
    wiring.move_end(far, e("sw0-3-3", 13));
    wiring.plug(far, e("sw0-2-1", 12));
    let other = wiring.peer(e("sw0-4-2", 3)).unwrap();
    wiring.move_end(other, e("sw0-4-4", 14));
    let fabric = wiring.to_fabric(&plan, 4).unwrap();
    let v = run(&plan, &fabric, None, None);
    let report = Report::new(&plan, &fabric, &v);
    let removed: BTreeSet<Place> = v.unexpected.iter().flat_map(|u| [u.a, u.b]).collect();
    let moves: Vec<(&MoveStep, String)> = v
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Move(m) => Some((m, report.action_text(a))),
            _ => None,
        })
        .collect();
    let waits = |text: &str| text.contains(" (after removing the cable now in that port)");
    assert!(
        moves
            .iter()
            .any(|(m, _)| removed.contains(&Place::Device(m.to))),
        "{moves:#?}"
    );
    assert!(
        moves
            .iter()
            .any(|(m, _)| !removed.contains(&Place::Device(m.to))),
        "{moves:#?}"
    );
    let whole = report.text();
    for (m, text) in &moves {
        assert_eq!(
            waits(text),
            removed.contains(&Place::Device(m.to)),
            "{text}"
        );
        assert!(whole.contains(text.as_str()), "{text}");
    }
}

#[test]
fn findings_read_as_what_the_technician_finds_at_each_port() {
    let plan = plan("slimfly:q=5");
    let s = "sw0-0-0";
    let mut wiring = Wiring::from_plan(&plan);
    wiring.swap_ends(end(&plan, s, 1), end(&plan, s, 2));
    wiring.unplug(end(&plan, s, 3));
    wiring.wires[200].width = Some(LinkWidth::X1);
    let fabric = wiring.to_fabric(&plan, 0).unwrap();
    let v = run(&plan, &fabric, None, None);
    let report = Report::new(&plan, &fabric, &v);
    let text = |port: u8| {
        let id = id_at(&plan, s, port);
        let f = v
            .findings
            .iter()
            .find(|f| plan.cables[f.cable].id == id)
            .unwrap();
        report.finding_text(f)
    };
    // The cable planned in port 1 finds the cable of port 2 there, and the other way round.
    let planned_far = |at: CableEnd| {
        let c = plan.cables.iter().find(|c| c.a == at || c.b == at).unwrap();
        if c.a == at { c.b } else { c.a }
    };
    let port_2 = plan.end_text(planned_far(end(&plan, s, 2)));
    assert!(
        text(1).contains(&format!("holds the cable to {port_2}")),
        "{}",
        text(1)
    );
    assert_eq!(text(3), "A port: no link, B port: no link");
    let degraded = v
        .findings
        .iter()
        .find(|f| matches!(f.status, Status::Degraded(_)))
        .unwrap();
    assert_eq!(report.finding_text(degraded), "1x instead of 4x");
    let ok = v.findings.iter().find(|f| f.status == Status::Ok).unwrap();
    assert_eq!(report.finding_text(ok), "as planned");
}
