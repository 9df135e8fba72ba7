//! One finding per planned cable, and the observed cables that are not where the plan has them.
//!
//! A planned cable is
//!
//! * **ok** when its two planned ports are cabled to each other;
//! * **degraded** when they are, but the link runs below the expected width or speed: the plan's
//!   rate, or without one the most common rate of the fabric's cables of its class (switch to
//!   switch, or host) — unless `iblinkinfo` shows the link already runs at the best both ends
//!   support (no "could be" hint);
//! * **miswired** when a cable that is not it occupies one of its planned ports;
//! * **missing** when both planned ports are empty (a port of a device not seen counts as
//!   empty) and at least one of its devices was seen; `iblinkinfo` may add that a port is
//!   `Polling` (no light: nothing plugged in, or the far end is dead or off);
//! * **down** when both ports are empty but `iblinkinfo` shows a port in a state that means a
//!   cable is there and failing: `Disabled`, `PortConfigurationTraining`,
//!   `LinkErrorRecovery`, or up without the far end having been discovered;
//! * **not yet verifiable** when neither of its devices was seen (mid-wiring).
//!
//! Links to SHARP aggregation nodes (inside the switch) and between the ASICs of one director
//! chassis (same system image GUID, or `…/L05/U1` and `…/S03/U1` descriptions of one chassis)
//! are not cables: they are ignored.

use std::collections::HashMap;

use super::{Context, Place};
use crate::io::iblinkinfo::{LinkInfo, PhysicalState, PortStatus};
use crate::io::is_aggregation_node;
use crate::plan::{DeviceKind, parse_rate};
use crate::topology::{Fabric, LinkId, LinkSpeed, LinkWidth, Node, NodeKind, PortRef};

/// What is known about a planned port that has no cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortCondition {
    /// Its device has not been seen in the fabric.
    Unseen,
    /// No cable; no port state known.
    NoLink,
    /// `iblinkinfo`: Down/Polling — no light from the far end.
    Polling,
    /// `iblinkinfo`: Disabled — switched off administratively.
    Disabled,
    /// `iblinkinfo`: PortConfigurationTraining — the link is still training.
    Training,
    /// `iblinkinfo`: LinkErrorRecovery — the link keeps failing.
    ErrorRecovery,
    /// `iblinkinfo`: the port is up, but the far end was not discovered.
    UpUndiscovered,
    /// `iblinkinfo`: another physical state (Sleep, PhyTest, …).
    Other,
}

impl PortCondition {
    /// Whether the state points at a cable that is there but failing (→ "down").
    pub fn is_trouble(self) -> bool {
        matches!(
            self,
            PortCondition::Disabled
                | PortCondition::Training
                | PortCondition::ErrorRecovery
                | PortCondition::UpUndiscovered
                | PortCondition::Other
        )
    }

    /// Short words for reports.
    pub fn text(self) -> &'static str {
        match self {
            PortCondition::Unseen => "not seen",
            PortCondition::NoLink => "no link",
            PortCondition::Polling => "Polling",
            PortCondition::Disabled => "Disabled",
            PortCondition::Training => "PortConfigurationTraining",
            PortCondition::ErrorRecovery => "LinkErrorRecovery",
            PortCondition::UpUndiscovered => "up, far end not discovered",
            PortCondition::Other => "not up",
        }
    }
}

/// A link running below what is expected of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Degradation {
    /// Active width.
    pub width: Option<LinkWidth>,
    /// Active speed.
    pub speed: Option<LinkSpeed>,
    /// The width expected (plan rate, or the fabric's usual one).
    pub expected_width: Option<LinkWidth>,
    /// The speed expected.
    pub expected_speed: Option<LinkSpeed>,
    /// `iblinkinfo`'s "could be" width (what both ends support), when printed.
    pub could_be_width: Option<LinkWidth>,
    /// `iblinkinfo`'s "could be" speed, when printed.
    pub could_be_speed: Option<LinkSpeed>,
    /// Whether the width is below the expected one.
    pub narrow: bool,
    /// Whether the speed is below the expected one.
    pub slow: bool,
}

/// The state of one planned cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// In place, at the expected rate.
    Ok,
    /// In place, below the expected width or speed.
    Degraded(Degradation),
    /// Another cable occupies a planned port: where the cable in the A port and the one in the
    /// B port actually lead (`None`: that port is empty or its device unseen).
    Miswired {
        /// Far end of the cable in the planned A port.
        at_a: Option<Place>,
        /// Far end of the cable in the planned B port.
        at_b: Option<Place>,
    },
    /// Not there: both planned ports empty.
    Missing {
        /// What is known of the A port.
        a: PortCondition,
        /// What is known of the B port.
        b: PortCondition,
    },
    /// Not there, and a port state says a cable is there but failing.
    Down {
        /// What is known of the A port.
        a: PortCondition,
        /// What is known of the B port.
        b: PortCondition,
    },
    /// Neither device seen yet.
    NotVerifiable,
}

impl Status {
    /// One word for punch lists: `ok`, `degraded`, `miswired`, `missing`, `down`,
    /// `not-verifiable`.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Degraded(_) => "degraded",
            Status::Miswired { .. } => "miswired",
            Status::Missing { .. } => "missing",
            Status::Down { .. } => "down",
            Status::NotVerifiable => "not-verifiable",
        }
    }
}

/// The finding for one planned cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// Index into [`Plan::cables`](crate::plan::Plan::cables).
    pub cable: usize,
    /// What was found.
    pub status: Status,
    /// The observed link when the cable is in place (ok or degraded).
    pub link: Option<LinkId>,
}

/// Why an observed cable is unexpected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnexpectedKind {
    /// Both ends on one node.
    Loopback,
    /// A host in a switch port the plan leaves free.
    HostInSparePort,
    /// An end on a node that is not a plan device.
    UnknownDevice,
    /// Between plan devices, but not in the plan (and not a planned cable misplaced).
    NotInPlan,
}

impl UnexpectedKind {
    /// Words for reports.
    pub fn text(self) -> &'static str {
        match self {
            UnexpectedKind::Loopback => "loopback",
            UnexpectedKind::HostInSparePort => "host in a spare port",
            UnexpectedKind::UnknownDevice => "device not in the plan",
            UnexpectedKind::NotInPlan => "not in the plan",
        }
    }
}

/// An observed cable that has to go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnexpectedCable {
    /// The observed link.
    pub link: LinkId,
    /// One end.
    pub a: Place,
    /// The other end.
    pub b: Place,
    /// Why it is unexpected.
    pub kind: UnexpectedKind,
}

/// An observed cable that is not a planned cable in its planned place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WrongCable {
    pub link: LinkId,
    pub ends: [Place; 2],
}

/// Findings and wrong cables.
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub findings: Vec<Finding>,
    pub wrong: Vec<WrongCable>,
}

/// Per link of `fabric`: whether it is not a cable (an aggregation node's link, or a link
/// inside a director chassis).
pub fn ignored_links(fabric: &Fabric) -> Vec<bool> {
    fabric
        .links()
        .iter()
        .map(|l| {
            let (a, b) = (fabric.node(l.a.node), fabric.node(l.b.node));
            is_aggregation_node(a) || is_aggregation_node(b) || same_chassis(a, b)
        })
        .collect()
}

/// Two ASICs of one director chassis.
fn same_chassis(a: &Node, b: &Node) -> bool {
    if a.kind != NodeKind::Switch || b.kind != NodeKind::Switch || a.guid == b.guid {
        return false;
    }
    if a.system_guid.is_some() && a.system_guid == b.system_guid {
        return true;
    }
    match (chassis_name(&a.description), chassis_name(&b.description)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The chassis part of a director ASIC's description: `MF0;dir1:CS7500/L05/U1` → `MF0;dir1:CS7500`.
fn chassis_name(desc: &str) -> Option<&str> {
    let mut parts = desc.split('/');
    let chassis = parts.next()?;
    let board = parts.next()?;
    let is_board = board.len() > 1
        && board.starts_with(['L', 'S'])
        && board[1..].chars().all(|c| c.is_ascii_digit());
    is_board.then_some(chassis)
}

/// `iblinkinfo` port lines by (node or port GUID, port).
struct StateIndex<'a> {
    by_port: HashMap<(u64, u8), &'a PortStatus>,
}

impl<'a> StateIndex<'a> {
    fn new(info: Option<&'a LinkInfo>) -> Self {
        let mut by_port = HashMap::new();
        for p in info.map_or(&[][..], |i| &i.ports[..]) {
            for guid in [p.node_guid, p.port_guid].into_iter().flatten() {
                by_port.entry((guid.0, p.port)).or_insert(p);
            }
        }
        Self { by_port }
    }

    fn get(&self, fabric: &Fabric, port: PortRef) -> Option<&'a PortStatus> {
        if self.by_port.is_empty() {
            return None;
        }
        let node = fabric.node(port.node);
        let port_guid = node.ports.get(usize::from(port.port)).map(|p| p.guid);
        [Some(node.guid), port_guid]
            .into_iter()
            .flatten()
            .find_map(|g| self.by_port.get(&(g.0, port.port)).copied())
    }
}

/// Class of a cable for the usual rate: 0 between switches, 1 with a host end.
fn class(switch_ends: bool) -> usize {
    if switch_ends { 0 } else { 1 }
}

/// The most common width and speed of the observed cables of each class.
fn usual_rates(ctx: &Context<'_>) -> [(Option<LinkWidth>, Option<LinkSpeed>); 2] {
    let mut widths: [HashMap<LinkWidth, usize>; 2] = Default::default();
    let mut speeds: [HashMap<LinkSpeed, usize>; 2] = Default::default();
    for (i, l) in ctx.fabric.links().iter().enumerate() {
        if ctx.ignored[i] {
            continue;
        }
        let switches =
            ctx.fabric.node(l.a.node).is_switch() && ctx.fabric.node(l.b.node).is_switch();
        let k = class(switches);
        if let Some(w) = l.width {
            *widths[k].entry(w).or_default() += 1;
        }
        if let Some(s) = l.speed {
            *speeds[k].entry(s).or_default() += 1;
        }
    }
    let mode = |k: usize| {
        (
            widths[k]
                .iter()
                .max_by_key(|&(w, n)| (*n, *w))
                .map(|(w, _)| *w),
            speeds[k]
                .iter()
                .max_by_key(|&(s, n)| (*n, *s))
                .map(|(s, _)| *s),
        )
    };
    [mode(0), mode(1)]
}

/// Findings for every planned cable, and the observed cables that are not planned cables in
/// their planned place.
pub(crate) fn find(ctx: &Context<'_>, info: Option<&LinkInfo>) -> Observed {
    let plan = ctx.plan;
    let states = StateIndex::new(info);
    let mut in_place: Vec<Option<LinkId>> = vec![None; plan.cables.len()];
    let mut wrong = Vec::new();
    for (i, l) in ctx.fabric.links().iter().enumerate() {
        if ctx.ignored[i] {
            continue;
        }
        let link = LinkId(i as u32);
        let ends = [ctx.place(l.a), ctx.place(l.b)];
        let planned = |p: Place| match p {
            Place::Device(end) => ctx.index.cable_at(end),
            Place::Node(_) => None,
        };
        match (planned(ends[0]), planned(ends[1])) {
            (Some(x), Some(y)) if x == y && ends[0] != ends[1] => in_place[x] = Some(link),
            _ => wrong.push(WrongCable { link, ends }),
        }
    }
    let usual = usual_rates(ctx);
    let findings = plan
        .cables
        .iter()
        .enumerate()
        .map(|(c, cable)| {
            let status = match in_place[c] {
                Some(link) => {
                    let switches = [cable.a, cable.b]
                        .iter()
                        .all(|e| plan.devices[e.device].kind == DeviceKind::Switch);
                    let usual = usual[class(switches)];
                    match degradation(ctx, &states, link, cable.rate.as_deref(), usual) {
                        Some(d) => Status::Degraded(d),
                        None => Status::Ok,
                    }
                }
                None => absent(ctx, &states, [cable.a, cable.b]),
            };
            Finding {
                cable: c,
                status,
                link: in_place[c],
            }
        })
        .collect();
    Observed { findings, wrong }
}

/// The status of a planned cable that is not in place.
fn absent(ctx: &Context<'_>, states: &StateIndex<'_>, ends: [crate::plan::CableEnd; 2]) -> Status {
    let ports = ends.map(|e| ctx.port_ref(Place::Device(e)));
    if ports.iter().all(Option::is_none) {
        return Status::NotVerifiable;
    }
    let occupant = |p: Option<PortRef>| {
        p.and_then(|p| ctx.observed_peer(p))
            .map(|far| ctx.place(far))
    };
    let (at_a, at_b) = (occupant(ports[0]), occupant(ports[1]));
    if at_a.is_some() || at_b.is_some() {
        return Status::Miswired { at_a, at_b };
    }
    let condition = |p: Option<PortRef>| match p {
        None => PortCondition::Unseen,
        Some(p) => match states.get(ctx.fabric, p) {
            None => PortCondition::NoLink,
            Some(s) => match s.physical {
                PhysicalState::Polling => PortCondition::Polling,
                PhysicalState::Disabled => PortCondition::Disabled,
                PhysicalState::PortConfigurationTraining => PortCondition::Training,
                PhysicalState::LinkErrorRecovery => PortCondition::ErrorRecovery,
                PhysicalState::LinkUp => PortCondition::UpUndiscovered,
                _ => PortCondition::Other,
            },
        },
    };
    let (a, b) = (condition(ports[0]), condition(ports[1]));
    if a.is_trouble() || b.is_trouble() {
        Status::Down { a, b }
    } else {
        Status::Missing { a, b }
    }
}

/// How a link in place falls short of its expected rate, if it does.
fn degradation(
    ctx: &Context<'_>,
    states: &StateIndex<'_>,
    link: LinkId,
    planned_rate: Option<&str>,
    usual: (Option<LinkWidth>, Option<LinkSpeed>),
) -> Option<Degradation> {
    let l = ctx.fabric.link(link);
    let (plan_width, plan_speed) = parse_rate(planned_rate);
    let expected_width = plan_width.or(usual.0);
    let expected_speed = plan_speed.or(usual.1);
    let ends: Vec<&PortStatus> = [l.a, l.b]
        .iter()
        .filter_map(|&p| states.get(ctx.fabric, p))
        .filter(|s| s.is_up())
        .collect();
    let could_be_width = ends.iter().filter_map(|s| s.could_be_width).max();
    let could_be_speed = ends.iter().filter_map(|s| s.could_be_speed).max();
    // Without a planned rate, a link iblinkinfo shows at the best both ends support is not a
    // cable fault (a slower HCA, a narrower port).
    let known = !ends.is_empty();
    let narrow = below(l.width, expected_width)
        && (plan_width.is_some() || !(known && could_be_width.is_none()));
    let slow = below(l.speed, expected_speed)
        && (plan_speed.is_some() || !(known && could_be_speed.is_none()));
    (narrow || slow).then_some(Degradation {
        width: l.width,
        speed: l.speed,
        expected_width,
        expected_speed,
        could_be_width,
        could_be_speed,
        narrow,
        slow,
    })
}

/// Whether a known value is below a known expectation.
fn below<T: Ord>(active: Option<T>, expected: Option<T>) -> bool {
    matches!((active, expected), (Some(a), Some(e)) if a < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn director_boards_of_one_chassis_are_recognised() {
        assert_eq!(
            chassis_name("MF0;dir1:CS7500/L05/U1"),
            Some("MF0;dir1:CS7500")
        );
        assert_eq!(
            chassis_name("MF0;dir1:CS7500/S03/U1"),
            Some("MF0;dir1:CS7500")
        );
        assert_eq!(chassis_name("MF0;sw0-0-0:MSB7800/U1"), None);
        assert_eq!(chassis_name("MF0;gw1:IBR/U1/RT"), None);
        assert_eq!(chassis_name("node05 mlx5_0"), None);
    }
}
