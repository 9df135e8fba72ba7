//! Verification of a cabled fabric against its plan: which cables are right, which are wrong,
//! and the fewest technician actions that make the fabric match the plan.
//!
//! The anchors of the field — `ibnetdiscover --diff`, `iblinkinfo --diff`, ibtopodiff — compare
//! only the remote *node* of each port, so two cables swapped between the same two switches are
//! invisible to them, and none of them says what to do. Here every port is compared by device
//! **and port number**, and the differences are turned into imperative actions: swap, move,
//! chains of moves, plug, remove, reseat.
//!
//! # Pipeline
//!
//! 1. [`mod@merge`]: several `ibnetdiscover` dumps (taken from different islands mid-wiring) become
//!    one fabric, by node GUID.
//! 2. [`binding`]: plan devices are bound to fabric nodes — by node-name-map GUIDs, by the
//!    plan's own GUIDs, by node descriptions, then by the cabling graph from the nodes already
//!    bound (a miswired cable changes one or two neighbours of a switch, never its identity).
//! 3. [`findings`]: one finding per planned cable — ok, degraded, miswired, missing, down or not
//!    yet verifiable — and the observed cables that are not in the plan.
//! 4. [`actions`]: findings combined into the fewest moves (swaps, chains, rotations), plugs,
//!    removals and reseats.
//! 5. [`belonging`]: refuses a plan and a fabric that do not belong together (too few devices
//!    identified by name, GUID or description; an `iblinkinfo` of other nodes) before any
//!    action is shown.
//! 6. [`report`]: text for technicians (grouped by rack, U and port), CSV and JSON punch lists.
//!
//! [`wiring`] rewires a plan's cables by hand, to build faulty fabrics for tests and benchmarks.
//!
//! Everything here is pure: no file IO and no printing. Links to SHARP aggregation nodes and
//! links inside a director chassis are not cables and are ignored.

pub mod actions;
pub mod belonging;
pub mod binding;
pub mod findings;
pub mod merge;
pub mod report;
pub mod wiring;

use crate::io::{LinkInfo, NodeNameMap};
use crate::plan::{CableEnd, DeviceKind, Plan};
use crate::topology::{Fabric, NodeId, NodeKind, PortRef};

pub use actions::{Action, MoveStep, Step};
pub use binding::{Binding, BoundBy, bind};
pub use findings::{Degradation, Finding, PortCondition, Status, UnexpectedCable, UnexpectedKind};
pub use merge::{MergeError, Merged, merge};

/// What was observed of the live fabric.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The discovered fabric (one dump, or several merged with [`merge()`]).
    pub fabric: &'a Fabric,
    /// Port states from `iblinkinfo`, when available: down ports and "could be" hints.
    pub link_info: Option<&'a LinkInfo>,
    /// The site's node-name-map (GUID → plan device name), when available.
    pub names: Option<&'a NodeNameMap>,
}

/// A port as the technician finds it: a port of a plan device (its node is bound, or the port
/// is where a cable belongs), or a port of a fabric node that no plan device is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    /// Port of a plan device.
    Device(CableEnd),
    /// Port of an unidentified fabric node.
    Node(PortRef),
}

/// Verified and expected cables of one rack (a cable between two racks counts in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RackProgress {
    /// Index into [`Plan::racks`].
    pub rack: usize,
    /// Planned cables with an end in the rack.
    pub expected: usize,
    /// Of those, cables found exactly as planned and at the expected rate.
    pub verified: usize,
    /// Of those, cables whose devices have not been seen at all yet.
    pub not_verifiable: usize,
}

/// Counts of findings, for summaries and exit statuses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cables as planned.
    pub ok: usize,
    /// Cables as planned but below the expected width or speed.
    pub degraded: usize,
    /// Planned cables with a wrong cable in at least one of their ports.
    pub miswired: usize,
    /// Planned cables absent, their ports empty.
    pub missing: usize,
    /// Planned cables absent, a port in a state that suggests a bad cable or port.
    pub down: usize,
    /// Planned cables neither of whose devices has been seen.
    pub not_verifiable: usize,
    /// Observed cables that are not in the plan and not a misplaced planned cable.
    pub unexpected: usize,
    /// Plan devices not seen in the fabric.
    pub unbound_devices: usize,
    /// Fabric nodes that are not plan devices.
    pub unexpected_devices: usize,
    /// Actions to take.
    pub actions: usize,
}

/// The result of a verification.
#[derive(Debug, Clone)]
pub struct Verification {
    /// Plan devices ↔ fabric nodes.
    pub binding: Binding,
    /// One finding per planned cable, in plan order.
    pub findings: Vec<Finding>,
    /// Observed cables that are neither planned nor a planned cable in the wrong place.
    pub unexpected: Vec<UnexpectedCable>,
    /// What to do, sorted by rack, U (top down), device and port.
    pub actions: Vec<Action>,
    /// Per-rack progress, in rack order.
    pub progress: Vec<RackProgress>,
    /// Fabric nodes no plan device is bound to (SHARP aggregation nodes left out).
    pub unexpected_devices: Vec<NodeId>,
    /// Cables observed (links between two nodes, without the ignored ones).
    pub observed_cables: usize,
    /// Links ignored as not being cables (aggregation nodes, inside a director).
    pub ignored_links: usize,
}

impl Verification {
    /// Whether the fabric is exactly as planned: every cable verified, nothing unexpected.
    pub fn is_clean(&self) -> bool {
        self.findings.iter().all(|f| f.status == Status::Ok)
            && self.unexpected.is_empty()
            && self.unexpected_devices.is_empty()
    }

    /// Counts of the findings.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for f in &self.findings {
            match f.status {
                Status::Ok => c.ok += 1,
                Status::Degraded(_) => c.degraded += 1,
                Status::Miswired { .. } => c.miswired += 1,
                Status::Missing { .. } => c.missing += 1,
                Status::Down { .. } => c.down += 1,
                Status::NotVerifiable => c.not_verifiable += 1,
            }
        }
        c.unexpected = self.unexpected.len();
        c.unbound_devices = self.binding.unbound_devices().count();
        c.unexpected_devices = self.unexpected_devices.len();
        c.actions = self.actions.len();
        c
    }
}

/// Verifies the observed fabric against `plan`: binding, findings, actions and progress.
pub fn verify(plan: &Plan, observation: &Observation<'_>) -> Verification {
    let index = PlanIndex::new(plan);
    let fabric = observation.fabric;
    let ignored = findings::ignored_links(fabric);
    let binding = binding::bind_with(plan, &index, fabric, observation.names, &ignored);
    let ctx = Context {
        plan,
        index: &index,
        fabric,
        binding: &binding,
        ignored: &ignored,
    };
    let observed = findings::find(&ctx, observation.link_info);
    let (actions, unexpected) = actions::plan_actions(&ctx, &observed);
    let progress = progress(plan, &observed.findings);
    let unexpected_devices = (0..fabric.nodes().len())
        .map(|i| NodeId(i as u32))
        .filter(|&n| binding.device(n).is_none() && !binding::is_excluded(fabric.node(n)))
        .collect();
    let observed_cables = ignored.iter().filter(|&&i| !i).count();
    Verification {
        findings: observed.findings,
        unexpected,
        actions,
        progress,
        unexpected_devices,
        observed_cables,
        ignored_links: ignored.len() - observed_cables,
        binding,
    }
}

fn progress(plan: &Plan, findings: &[Finding]) -> Vec<RackProgress> {
    let mut progress: Vec<RackProgress> = (0..plan.racks.len())
        .map(|rack| RackProgress {
            rack,
            expected: 0,
            verified: 0,
            not_verifiable: 0,
        })
        .collect();
    for f in findings {
        let cable = &plan.cables[f.cable];
        let (ra, rb) = (
            plan.devices[cable.a.device].rack,
            plan.devices[cable.b.device].rack,
        );
        let racks: &[usize] = if ra == rb { &[ra] } else { &[ra, rb] };
        for &r in racks {
            let p = &mut progress[r];
            p.expected += 1;
            match f.status {
                Status::Ok => p.verified += 1,
                Status::NotVerifiable => p.not_verifiable += 1,
                _ => {}
            }
        }
    }
    progress
}

/// The planned cable on every port of every plan device.
#[derive(Debug, Clone)]
pub(crate) struct PlanIndex {
    ports: Vec<Vec<Option<u32>>>,
}

impl PlanIndex {
    pub(crate) fn new(plan: &Plan) -> Self {
        let mut ports: Vec<Vec<Option<u32>>> = plan
            .devices
            .iter()
            .map(|d| vec![None; usize::from(d.ports) + 1])
            .collect();
        for (i, c) in plan.cables.iter().enumerate() {
            for end in [c.a, c.b] {
                let slots = &mut ports[end.device];
                let p = usize::from(end.port);
                if slots.len() <= p {
                    slots.resize(p + 1, None);
                }
                slots[p] = Some(i as u32);
            }
        }
        Self { ports }
    }

    /// The planned cable on `end`.
    pub(crate) fn cable_at(&self, end: CableEnd) -> Option<usize> {
        self.ports
            .get(end.device)?
            .get(usize::from(end.port))
            .copied()
            .flatten()
            .map(|c| c as usize)
    }

    /// Where the planned cable on `end` leads.
    pub(crate) fn peer(&self, plan: &Plan, end: CableEnd) -> Option<CableEnd> {
        self.cable_at(end).map(|c| other_end(plan, c, end))
    }

    /// The planned ports of a device with their far ends.
    pub(crate) fn planned_ports<'p>(
        &'p self,
        plan: &'p Plan,
        device: usize,
    ) -> impl Iterator<Item = (u8, CableEnd)> + 'p {
        self.ports[device]
            .iter()
            .enumerate()
            .filter_map(move |(p, c)| {
                let end = CableEnd {
                    device,
                    port: p as u8,
                };
                c.map(|c| (p as u8, other_end(plan, c as usize, end)))
            })
    }
}

/// The end of planned cable `cable` that is not `end`.
pub(crate) fn other_end(plan: &Plan, cable: usize, end: CableEnd) -> CableEnd {
    let c = &plan.cables[cable];
    if c.a == end { c.b } else { c.a }
}

/// Whether a plan device of `kind` can be the fabric node `node` (switch ↔ switch, host ↔ CA
/// or router).
pub(crate) fn compatible(kind: DeviceKind, node: NodeKind) -> bool {
    match kind {
        DeviceKind::Switch => node == NodeKind::Switch,
        DeviceKind::Host => node != NodeKind::Switch,
    }
}

/// What the later stages share.
pub(crate) struct Context<'a> {
    pub plan: &'a Plan,
    pub index: &'a PlanIndex,
    pub fabric: &'a Fabric,
    pub binding: &'a Binding,
    /// Per fabric link: not a cable (aggregation node, inside a director).
    pub ignored: &'a [bool],
}

impl Context<'_> {
    /// The observed port in plan terms when its node is bound.
    pub fn place(&self, port: PortRef) -> Place {
        match self.binding.device(port.node) {
            Some(device) => Place::Device(CableEnd {
                device,
                port: port.port,
            }),
            None => Place::Node(port),
        }
    }

    /// The fabric port of a place, when its device is seen.
    pub fn port_ref(&self, place: Place) -> Option<PortRef> {
        match place {
            Place::Device(end) => self.binding.node(end.device).map(|node| PortRef {
                node,
                port: end.port,
            }),
            Place::Node(p) => Some(p),
        }
    }

    /// The observed cable (not ignored) plugged into `port`, with its far end.
    pub fn observed_peer(&self, port: PortRef) -> Option<PortRef> {
        let node = self.fabric.node(port.node);
        let link = node.ports.get(usize::from(port.port))?.link?;
        if self.ignored[link.0 as usize] {
            return None;
        }
        Some(self.fabric.link(link).other_end(port))
    }
}

#[cfg(test)]
mod tests;
