//! Building a plan from a construction.
//!
//! # Placement
//! Racks are the construction's (see each construction's documentation), named `R01`, `R02`, …
//! in row order. In each rack, switches fill the top units in node order, except that a Slim
//! Fly's subgroup-1 switches fill the bottom units (subgroup 0 at the top, subgroup 1 at the
//! bottom, as deployed in the Slim Fly paper). Hosts fill the units below the top switches, in
//! node order, `hosts_per_u` to a unit (multi-node chassis; slot 1, 2, … within the unit). By
//! default `hosts_per_u` is the smallest number that makes every rack fit.
//!
//! # Wiring order
//! Switch cables first, hosts last. Switch cables are ordered: inside a group, between groups of
//! one rack, then between racks by rack pair. For a Slim Fly the groups are the subgroups (s, a),
//! which gives the paper's three steps (intra-subgroup; subgroup 0 ↔ subgroup 1 inside the rack;
//! inter-rack); for the other constructions a group is a rack. Steps without cables are left out.
//! Within a step cables go by rack (pair), then from the top of the rack down, then by port.
//! A cable's A end is the end wired first: the lower rack, then the higher unit, then the switch.

use super::{
    Cable, CableEnd, Device, DeviceKind, LengthModel, Plan, PlanError, Rack, SwitchLayout,
    SwitchModel,
};
use crate::topology::slimfly::SlimFly;
use crate::topology::{Fabric, NodeKind, NodeSpec, PortRef, TopologyError, TopologySpec};

/// Layout choices for a generated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Rack height in units.
    pub rack_units: u32,
    /// Hosts sharing one rack unit; `None` picks the smallest that fits.
    pub hosts_per_u: Option<u32>,
    /// Geometry for cable lengths (its `rack_units` is overwritten by the field above).
    pub lengths: LengthModel,
    /// Cable id prefix; `None` uses the construction's (`SF`, `MLFM`, `LSFT`, `PF`, `FT`).
    pub cable_prefix: Option<String>,
    /// The real switches the construction's switches are placed on; `None` keeps the
    /// construction's port counts (see [`on_switches`]).
    pub switches: Option<SwitchLayout>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            rack_units: 42,
            hosts_per_u: None,
            lengths: LengthModel::default(),
            cable_prefix: None,
            switches: None,
        }
    }
}

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The topology parameters are impossible.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The layout does not work out.
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// Where a switch goes in its rack and which wiring group it belongs to.
#[derive(Debug, Clone, Copy)]
struct Placement {
    rack: usize,
    group: usize,
    at_bottom: bool,
}

/// The plan for a topology spec.
///
/// # Errors
/// Impossible topology parameters, or racks too small for their devices.
pub fn plan_for(spec: &TopologySpec, options: &PlanOptions) -> Result<Plan, BuildError> {
    let construction = spec.construction()?;
    let mut fabric = construction.build();
    if let Some(layout) = &options.switches {
        fabric = on_switches(&fabric, layout)?;
    }
    let (prefix, placements) = match spec {
        &TopologySpec::SlimFly { q, p } => {
            ("SF", slimfly_placements(&SlimFly::new(q, p)?, &fabric))
        }
        TopologySpec::Mlfm { .. } => ("MLFM", rack_placements(&fabric)),
        TopologySpec::Lsft { .. } => ("LSFT", rack_placements(&fabric)),
        TopologySpec::PolarFly { .. } => ("PF", rack_placements(&fabric)),
        TopologySpec::FatTree { .. } | TopologySpec::KaryNTree { .. } => {
            ("FT", rack_placements(&fabric))
        }
        TopologySpec::Random { .. } => ("RR", rack_placements(&fabric)),
        TopologySpec::Shortcut { .. } => ("SC", rack_placements(&fabric)),
        TopologySpec::Circulant { .. } => ("CIRC", rack_placements(&fabric)),
    };
    let prefix = options
        .cable_prefix
        .clone()
        .unwrap_or_else(|| prefix.to_string());
    let mut plan = plan_from_fabric(&fabric, &placements, &prefix, options)?;
    if let Some(model) = options.switches.as_ref().and_then(|l| l.model.as_ref()) {
        for d in &mut plan.devices {
            if d.kind == DeviceKind::Switch {
                d.model = Some(model.clone());
            }
        }
    }
    Ok(plan)
}

/// The fabric with every switch on a `layout.ports`-port switch: on each switch the ports
/// cabled to hosts become ports 1, 2, … in their order, the ports cabled to switches the ports
/// right after them in their order, and the rest are spare. With a catalogue model the
/// switches describe themselves as that model (`MF0;sw0-0-0:MSB7800/U1`) and every link runs
/// at its speed.
///
/// # Errors
/// A switch with more cables than the layout has ports.
pub fn on_switches(fabric: &Fabric, layout: &SwitchLayout) -> Result<Fabric, PlanError> {
    let mut real = Fabric::new(fabric.name.clone());
    let mut port_maps: Vec<Vec<u8>> = Vec::with_capacity(fabric.nodes().len());
    for (i, node) in fabric.nodes().iter().enumerate() {
        let id = crate::topology::NodeId(i as u32);
        let mut map: Vec<u8> = (0..=node.num_ports()).collect();
        let mut num_ports = node.num_ports();
        let mut description = node.description.clone();
        if node.is_switch() {
            let mut cabled: Vec<(bool, u8)> = fabric
                .neighbours(id)
                .map(|(port, peer)| (fabric.node(peer.node).is_switch(), port))
                .collect();
            cabled.sort();
            if cabled.len() > usize::from(layout.ports) {
                let what = layout
                    .model
                    .as_ref()
                    .map_or("the switches".to_string(), |m| m.name.clone());
                return Err(PlanError::DoesNotFit(format!(
                    "switch {} needs {} ports but {what} have {}",
                    node.name,
                    cabled.len(),
                    layout.ports
                )));
            }
            for (k, &(_, port)) in cabled.iter().enumerate() {
                map[usize::from(port)] = k as u8 + 1;
            }
            num_ports = layout.ports;
            if let Some(model) = &layout.model {
                description = format!("MF0;{}:{}/U1", node.name, model.description_model);
            }
        }
        let spec = NodeSpec {
            kind: node.kind,
            name: node.name.clone(),
            description,
            guid: node.guid,
            num_ports,
            rack: node.rack,
        };
        let new = real.add_node(spec).map_err(PlanError::from)?;
        let copy = real.node_mut(new);
        (copy.system_guid, copy.vendor_id, copy.device_id) =
            (node.system_guid, node.vendor_id, node.device_id);
        port_maps.push(map);
    }
    let speed = layout.model.as_ref().map(SwitchModel::link_speed);
    for link in fabric.links() {
        let end = |e: PortRef| PortRef {
            node: e.node,
            port: port_maps[e.node.index()][usize::from(e.port)],
        };
        real.connect(end(link.a), end(link.b), link.width, speed.or(link.speed))
            .map_err(PlanError::from)?;
    }
    Ok(real)
}

/// Slim Fly switches: rack a, group (s, a), subgroup 1 at the bottom (switch index i has the
/// label (s, a, b) of [`SlimFly::label`]; hosts follow the switches).
fn slimfly_placements(slim_fly: &SlimFly, fabric: &Fabric) -> Vec<Option<Placement>> {
    let switches = 2 * (slim_fly.q() as usize).pow(2);
    (0..fabric.nodes().len())
        .map(|i| {
            (i < switches).then(|| {
                let (s, a, _) = slim_fly.label(i);
                let (s, rack) = (s as usize, a as usize);
                Placement {
                    rack,
                    group: 2 * rack + s,
                    at_bottom: s == 1,
                }
            })
        })
        .collect()
}

/// Other constructions: the rack is the group, all switches at the top.
fn rack_placements(fabric: &Fabric) -> Vec<Option<Placement>> {
    fabric
        .nodes()
        .iter()
        .map(|n| {
            let rack = n.rack.unwrap_or(0) as usize;
            n.is_switch().then_some(Placement {
                rack,
                group: rack,
                at_bottom: false,
            })
        })
        .collect()
}

fn plan_from_fabric(
    fabric: &Fabric,
    placements: &[Option<Placement>],
    prefix: &str,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let rack_count = fabric
        .nodes()
        .iter()
        .filter_map(|n| n.rack)
        .max()
        .map_or(1, |r| r as usize + 1);
    let width = if rack_count >= 100 { 3 } else { 2 };
    let racks: Vec<Rack> = (0..rack_count)
        .map(|r| Rack {
            name: format!("R{:0width$}", r + 1),
            units: options.rack_units,
        })
        .collect();
    let mut devices: Vec<Device> = fabric
        .nodes()
        .iter()
        .map(|n| Device {
            name: n.name.clone(),
            kind: if n.is_switch() {
                DeviceKind::Switch
            } else {
                DeviceKind::Host
            },
            rack: n.rack.unwrap_or(0) as usize,
            u: None,
            slot: None,
            ports: n.num_ports(),
            guid: Some(n.guid),
            description: Some(n.description.clone()),
            model: None,
        })
        .collect();
    place_devices(fabric, placements, &racks, &mut devices, options)?;
    let mut lengths = options.lengths;
    lengths.rack_units = options.rack_units;
    let (cables, steps) = order_cables(fabric, placements, &devices, &lengths, prefix);
    Ok(Plan {
        name: fabric.name.clone(),
        racks,
        devices,
        cables,
        steps,
    })
}

/// Assigns U positions rack by rack.
fn place_devices(
    fabric: &Fabric,
    placements: &[Option<Placement>],
    racks: &[Rack],
    devices: &mut [Device],
    options: &PlanOptions,
) -> Result<(), PlanError> {
    let units = options.rack_units;
    let mut per_rack: Vec<(Vec<usize>, Vec<usize>, Vec<usize>)> =
        vec![Default::default(); racks.len()];
    for (i, node) in fabric.nodes().iter().enumerate() {
        let (top, bottom, hosts) = &mut per_rack[devices[i].rack];
        match placements[i] {
            Some(p) if p.at_bottom => bottom.push(i),
            Some(_) => top.push(i),
            None if node.kind == NodeKind::Switch => top.push(i),
            None => hosts.push(i),
        }
    }
    let hosts_per_u = match options.hosts_per_u {
        Some(h) => h.max(1),
        None => (1..=16)
            .find(|&h| {
                per_rack
                    .iter()
                    .all(|(t, b, hs)| needed_units(t, b, hs, h) <= units)
            })
            .unwrap_or(16),
    };
    for (r, (top, bottom, hosts)) in per_rack.iter().enumerate() {
        let needed = needed_units(top, bottom, hosts, hosts_per_u);
        if needed > units {
            return Err(PlanError::DoesNotFit(format!(
                "rack {} needs {needed} U ({} switches, {} hosts at {hosts_per_u} per U) but racks have {units} U; \
                 raise --rack-units or --hosts-per-u",
                racks[r].name,
                top.len() + bottom.len(),
                hosts.len()
            )));
        }
        for (k, &i) in top.iter().enumerate() {
            devices[i].u = Some(units - k as u32);
        }
        for (k, &i) in bottom.iter().enumerate() {
            devices[i].u = Some(bottom.len() as u32 - k as u32);
        }
        let first_host_u = units - top.len() as u32;
        for (k, &i) in hosts.iter().enumerate() {
            let k = k as u32;
            devices[i].u = Some(first_host_u - k / hosts_per_u);
            devices[i].slot = (hosts_per_u > 1).then_some(k % hosts_per_u + 1);
        }
    }
    Ok(())
}

fn needed_units(top: &[usize], bottom: &[usize], hosts: &[usize], hosts_per_u: u32) -> u32 {
    (top.len() + bottom.len()) as u32 + (hosts.len() as u32).div_ceil(hosts_per_u)
}

/// The wiring step of a cable, before empty steps are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    InsideGroup,
    BetweenGroupsOfRack,
    BetweenRacks,
    Hosts,
}

/// Wiring order of a cable: step, rack pair, top-down position of the A end, A port.
type CableOrder = (Step, usize, usize, u32, u8);

fn order_cables(
    fabric: &Fabric,
    placements: &[Option<Placement>],
    devices: &[Device],
    lengths: &LengthModel,
    prefix: &str,
) -> (Vec<Cable>, Vec<String>) {
    let slim_fly_groups = placements.iter().flatten().any(|p| p.group != p.rack);
    let mut keyed: Vec<(CableOrder, CableEnd, CableEnd, Option<String>)> = fabric
        .links()
        .iter()
        .map(|link| {
            let end = |e: crate::topology::PortRef| CableEnd {
                device: e.node.index(),
                port: e.port,
            };
            let order = |e: &CableEnd| {
                let d = &devices[e.device];
                (
                    d.kind == DeviceKind::Host,
                    d.rack,
                    std::cmp::Reverse(d.u.unwrap_or(0)),
                    e.port,
                )
            };
            let (mut a, mut b) = (end(link.a), end(link.b));
            if order(&b) < order(&a) {
                std::mem::swap(&mut a, &mut b);
            }
            let step = match (placements[a.device], placements[b.device]) {
                (Some(pa), Some(pb)) if pa.group == pb.group => Step::InsideGroup,
                (Some(pa), Some(pb)) if pa.rack == pb.rack => Step::BetweenGroupsOfRack,
                (Some(_), Some(_)) => Step::BetweenRacks,
                _ => Step::Hosts,
            };
            let (ra, rb) = (devices[a.device].rack, devices[b.device].rack);
            let key = (
                step,
                ra.min(rb),
                ra.max(rb),
                u32::MAX - devices[a.device].u.unwrap_or(0),
                a.port,
            );
            let rate = link.width.zip(link.speed).map(|(w, s)| format!("{w}{s}"));
            (key, a, b, rate)
        })
        .collect();
    keyed.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut used: Vec<Step> = keyed.iter().map(|k| k.0.0).collect();
    used.dedup();
    let step_name = |s: Step| match s {
        Step::InsideGroup if slim_fly_groups => {
            "intra-subgroup: switches of one group (s, a)".to_string()
        }
        Step::InsideGroup => "inside each rack: switch to switch".to_string(),
        Step::BetweenGroupsOfRack => "inside each rack: subgroup 0 to subgroup 1".to_string(),
        Step::BetweenRacks => "between racks, rack pair by rack pair".to_string(),
        Step::Hosts => "hosts to their switches".to_string(),
    };
    let steps: Vec<String> = used.iter().map(|&s| step_name(s)).collect();
    let digits = keyed.len().to_string().len().max(4);
    let cables = keyed
        .into_iter()
        .enumerate()
        .map(|(n, (key, a, b, rate))| {
            let (da, db) = (&devices[a.device], &devices[b.device]);
            let (kind, length) =
                lengths.cable((da.rack, da.u.unwrap_or(1)), (db.rack, db.u.unwrap_or(1)));
            Cable {
                id: format!("{prefix}-{:0digits$}", n + 1),
                a,
                b,
                kind,
                length_m: Some(length),
                step: used.iter().position(|&s| s == key.0).expect("step in use") as u32 + 1,
                rate,
            }
        })
        .collect();
    (cables, steps)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::plan::CableKind;
    use crate::topology::compare::compare;

    fn plan(text: &str) -> Plan {
        plan_for(&text.parse().unwrap(), &PlanOptions::default()).unwrap()
    }

    #[test]
    fn slimfly_q5_plan_has_the_deployed_structure() {
        let p = plan("slimfly:q=5");
        assert_eq!(p.racks.len(), 5);
        for r in 0..5 {
            let in_rack = |k| {
                p.devices
                    .iter()
                    .filter(|d| d.rack == r && d.kind == k)
                    .count()
            };
            assert_eq!(
                (in_rack(DeviceKind::Switch), in_rack(DeviceKind::Host)),
                (10, 40)
            );
        }
        let mut between: HashMap<(usize, usize), usize> = HashMap::new();
        for c in p
            .cables
            .iter()
            .filter(|c| p.devices[c.b.device].kind == DeviceKind::Switch)
        {
            let (ra, rb) = (p.devices[c.a.device].rack, p.devices[c.b.device].rack);
            *between.entry((ra.min(rb), ra.max(rb))).or_default() += 1;
            assert_eq!(
                c.kind,
                if ra == rb {
                    CableKind::Copper
                } else {
                    CableKind::Optical
                },
                "{}",
                c.id
            );
        }
        for a in 0..5 {
            assert_eq!(between[&(a, a)], 15, "switch cables inside rack {a}");
            for b in a + 1..5 {
                assert_eq!(between[&(a, b)], 10, "cables between racks {a} and {b}");
            }
        }
        // The paper's three steps, then hosts.
        assert_eq!(p.steps.len(), 4);
        assert_eq!(p.cables_per_step(), [50, 25, 100, 200]);
        assert!(p.steps[0].starts_with("intra-subgroup") && p.steps[3].starts_with("hosts"));
        // Subgroup 0 at the top, subgroup 1 at the bottom, hosts in between, 2 per U.
        let at = |name: &str| p.devices[p.device_by_name(name).unwrap()].u.unwrap();
        assert_eq!((at("sw0-0-0"), at("sw0-0-4")), (42, 38));
        assert_eq!((at("sw1-0-0"), at("sw1-0-4")), (5, 1));
        let hosts_u: Vec<u32> = p
            .devices
            .iter()
            .filter(|d| d.rack == 0 && d.kind == DeviceKind::Host)
            .map(|d| d.u.unwrap())
            .collect();
        assert!(hosts_u.iter().all(|&u| (6..=37).contains(&u)));
        assert_eq!(
            p.devices
                .iter()
                .filter(|d| d.rack == 0 && d.u == Some(37))
                .count(),
            2
        );
        // Ids follow the wiring order; every label names the id and both ends.
        for (i, c) in p.cables.iter().enumerate() {
            assert_eq!(c.id, format!("SF-{:04}", i + 1));
            let label = p.label(c);
            assert!(
                label.starts_with(&c.id) && label.contains(" to "),
                "{label}"
            );
        }
        assert_eq!(
            p.label(&p.cables[0]),
            "SF-0001 R01-U42-sw0-0-0-P6 to R01-U41-sw0-0-1-P7"
        );
    }

    #[test]
    fn every_construction_plan_wires_exactly_its_fabric() {
        let specs = [
            "slimfly:q=3",
            "slimfly:q=4",
            "slimfly:q=5",
            "slimfly:q=7",
            "slimfly:q=8",
            "mlfm:d=2",
            "mlfm:d=3",
            "mlfm:d=5",
            "lsft:n=2",
            "lsft:n=3",
            "lsft:n=4",
            "polarfly:q=3",
            "polarfly:q=5",
            "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18",
        ];
        for text in specs {
            let spec: TopologySpec = text.parse().unwrap();
            let p = plan_for(&spec, &PlanOptions::default()).unwrap();
            let diff = compare(&spec.build().unwrap(), &p.to_fabric().unwrap());
            assert!(diff.is_empty(), "{text}: {diff}");
            // Devices never share a unit unless they are slots of one chassis.
            let mut used: HashMap<(usize, u32, Option<u32>), &str> = HashMap::new();
            for d in &p.devices {
                let u = d.u.unwrap();
                assert!((1..=42).contains(&u), "{text}: {} at U{u}", d.name);
                if let Some(other) = used.insert((d.rack, u, d.slot), &d.name) {
                    panic!("{text}: {} and {other} share rack {} U{u}", d.name, d.rack);
                }
            }
            let steps = p.cables_per_step();
            assert!(
                steps.iter().all(|&n| n > 0),
                "{text}: empty step in {steps:?}"
            );
            assert!(
                p.cables.windows(2).all(|w| w[0].step <= w[1].step),
                "{text}: steps in order"
            );
        }
    }

    #[test]
    fn on_real_switches_hosts_come_first_then_the_network_then_spare_ports() {
        for spec in [
            "slimfly:q=5",
            "slimfly:q=7",
            "mlfm:d=3",
            "lsft:n=3",
            "polarfly:q=7",
        ] {
            let spec: TopologySpec = spec.parse().unwrap();
            let abstract_plan = plan_for(&spec, &PlanOptions::default()).unwrap();
            for model in SwitchModel::catalogue() {
                let options = PlanOptions {
                    switches: Some(SwitchLayout {
                        ports: model.ports,
                        model: Some(model.clone()),
                    }),
                    ..PlanOptions::default()
                };
                let plan = plan_for(&spec, &options).unwrap();
                let pairs = |p: &Plan| {
                    let mut v: Vec<(String, String)> = p
                        .cables
                        .iter()
                        .map(|c| {
                            let (a, b) = (&p.devices[c.a.device].name, &p.devices[c.b.device].name);
                            (a.min(b).clone(), a.max(b).clone())
                        })
                        .collect();
                    v.sort();
                    v
                };
                assert_eq!(
                    pairs(&plan),
                    pairs(&abstract_plan),
                    "{spec} {}: same cables",
                    model.name
                );
                for (d, device) in plan.devices.iter().enumerate() {
                    if device.kind != DeviceKind::Switch {
                        continue;
                    }
                    assert_eq!(device.ports, model.ports);
                    assert_eq!(device.model.as_ref(), Some(&model));
                    let peer_is_host = |port: u8| {
                        plan.cables.iter().find_map(|c| {
                            let far = if c.a == (CableEnd { device: d, port }) {
                                c.b
                            } else if c.b == (CableEnd { device: d, port }) {
                                c.a
                            } else {
                                return None;
                            };
                            Some(plan.devices[far.device].kind == DeviceKind::Host)
                        })
                    };
                    let layout: Vec<Option<bool>> = (1..=model.ports).map(peer_is_host).collect();
                    let hosts = layout.iter().take_while(|&&p| p == Some(true)).count();
                    let network = layout[hosts..]
                        .iter()
                        .take_while(|&&p| p == Some(false))
                        .count();
                    assert!(
                        layout[hosts + network..].iter().all(Option::is_none),
                        "{spec} {} {}: {layout:?}",
                        model.name,
                        device.name
                    );
                    assert_eq!(
                        plan.spare_ports(d).len(),
                        usize::from(model.ports) - hosts - network
                    );
                    assert_eq!(
                        device.description.as_deref(),
                        Some(
                            format!("MF0;{}:{}/U1", device.name, model.description_model).as_str()
                        )
                    );
                }
                let rate = format!("4x{}", model.speed);
                assert!(
                    plan.cables
                        .iter()
                        .all(|c| c.rate.as_deref() == Some(rate.as_str()))
                );
            }
        }
    }

    #[test]
    fn a_switch_with_more_cables_than_ports_is_refused() {
        let options = PlanOptions {
            switches: Some(SwitchLayout {
                ports: 8,
                model: None,
            }),
            ..PlanOptions::default()
        };
        let err = plan_for(&"slimfly:q=5".parse().unwrap(), &options)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "switch sw0-0-0 needs 11 ports but the switches have 8");
    }

    #[test]
    fn racks_too_small_are_refused_with_what_they_need() {
        let options = PlanOptions {
            rack_units: 12,
            hosts_per_u: Some(1),
            ..PlanOptions::default()
        };
        let err = plan_for(&"slimfly:q=5".parse().unwrap(), &options)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "rack R01 needs 50 U (10 switches, 40 hosts at 1 per U) but racks have 12 U; raise --rack-units or --hosts-per-u"
        );
    }
}
