//! Cabling plans: racks with U positions, named devices, and every cable with its id, label,
//! kind, length class and wiring step — what a technician needs to cable the machine room, and
//! what `cabling verify` compares the live fabric against.
//!
//! A plan is built from a construction ([`build::plan_for`]), or read from its YAML document
//! ([`document`]) or from a CSV cable list ([`csv`]) for sites with their own layout.

pub mod build;
pub mod csv;
pub mod document;
pub mod labels;
mod length;
pub mod model;
pub mod text;

use std::collections::HashMap;
use std::fmt;

use crate::topology::{Fabric, FabricError, Guid, NodeKind, NodeSpec, PortRef};

pub use length::{CableKind, LengthModel, RoomLayout, purchase_list};
pub use model::{SwitchLayout, SwitchModel};

/// A rack in the machine room.
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// Name printed on the rack (`R01`).
    pub name: String,
    /// Height in rack units.
    pub units: u32,
}

/// What a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A switch.
    Switch,
    /// A host (its HCA ports are the device's ports).
    Host,
}

/// A switch or host placed in a rack.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Unique name (the hostname, or the switch's name).
    pub name: String,
    /// Switch or host.
    pub kind: DeviceKind,
    /// Index into [`Plan::racks`].
    pub rack: usize,
    /// Lowest rack unit the device occupies (1 = bottom), when placed.
    pub u: Option<u32>,
    /// Position inside a multi-node chassis that shares the U (1-based), for dense hosts.
    pub slot: Option<u32>,
    /// Number of ports.
    pub ports: u8,
    /// Node GUID when known (generated fabrics; sites that record GUIDs).
    pub guid: Option<Guid>,
    /// NodeDescription the device is expected to report, when known.
    pub description: Option<String>,
    /// The catalogue switch model, when the plan names one (faceplate labels).
    pub model: Option<SwitchModel>,
}

/// One end of a cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CableEnd {
    /// Index into [`Plan::devices`].
    pub device: usize,
    /// Port number, from 1.
    pub port: u8,
}

/// A planned cable.
#[derive(Debug, Clone, PartialEq)]
pub struct Cable {
    /// Cable id printed on the label (`SF-0001`).
    pub id: String,
    /// The end that is wired first (upper rack position, lower rack number).
    pub a: CableEnd,
    /// The other end.
    pub b: CableEnd,
    /// Copper or optical.
    pub kind: CableKind,
    /// Length class in metres (a catalogue length), when known.
    pub length_m: Option<f64>,
    /// Wiring step, from 1 (see [`Plan::steps`]).
    pub step: u32,
    /// Planned rate (`4xEDR`), when known.
    pub rate: Option<String>,
}

/// A whole plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The fabric the plan wires (`slimfly-q5`).
    pub name: String,
    /// Racks, in row order.
    pub racks: Vec<Rack>,
    /// Devices.
    pub devices: Vec<Device>,
    /// Cables, in wiring order.
    pub cables: Vec<Cable>,
    /// Names of the wiring steps: step s is `steps[s - 1]`.
    pub steps: Vec<String>,
}

/// Why a plan is not consistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A device or rack named twice.
    #[error("{what} {name:?} is listed twice")]
    Duplicate {
        /// `device`, `rack` or `cable id`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A cable naming a device the plan does not have.
    #[error("cable {cable}: no device named {device:?}")]
    UnknownDevice {
        /// Cable id.
        cable: String,
        /// The device name.
        device: String,
    },
    /// A device in a rack the plan does not have.
    #[error("device {device}: no rack named {rack:?}")]
    UnknownRack {
        /// The device.
        device: String,
        /// The rack name.
        rack: String,
    },
    /// A wiring step outside the plan's list of steps.
    #[error("cable {cable}: wiring step {step} is not one of the plan's {steps} steps")]
    UnknownStep {
        /// Cable id.
        cable: String,
        /// The step.
        step: u32,
        /// Number of steps.
        steps: usize,
    },
    /// The devices do not fit their racks.
    #[error("{0}")]
    DoesNotFit(String),
    /// A value that is not what the plan format expects.
    #[error("{0}")]
    Invalid(String),
    /// Two cables on one port, or a port the device lacks.
    #[error(transparent)]
    Fabric(#[from] FabricError),
}

impl Plan {
    /// The device called `name`.
    pub fn device_by_name(&self, name: &str) -> Option<usize> {
        self.devices.iter().position(|d| d.name == name)
    }

    /// An index from device names to device indexes.
    pub fn device_index(&self) -> HashMap<&str, usize> {
        self.devices
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.as_str(), i))
            .collect()
    }

    /// Where an end is, for sheets and messages: `R01 U40 sw0-0-0 port 5`, with the faceplate
    /// label after the port number where it differs (`port 34 (17/2)`).
    pub fn end_text(&self, end: CableEnd) -> String {
        format!(
            "{} port {}",
            self.device_place(&self.devices[end.device]),
            self.port_text(end)
        )
    }

    /// Rack, U and name of a device: `R01 U40 sw0-0-0`, or `R01 sfn010 (no U in the plan)`
    /// when the plan does not place it (a cable list without U columns).
    pub fn device_place(&self, d: &Device) -> String {
        let rack = &self.racks[d.rack].name;
        match d.u {
            Some(_) => format!("{rack} {} {}", self.position_text(d), d.name),
            None => format!("{rack} {} (no U in the plan)", d.name),
        }
    }

    /// The faceplate label of an end's port (`17/2`) when its switch model has one.
    pub fn port_label(&self, end: CableEnd) -> Option<String> {
        self.devices[end.device]
            .model
            .as_ref()
            .and_then(|m| m.port_label(end.port))
    }

    /// The port number, and the faceplate label after it where it differs: `34 (17/2)`.
    pub fn port_text(&self, end: CableEnd) -> String {
        match self.port_label(end) {
            Some(label) => format!("{} ({label})", end.port),
            None => end.port.to_string(),
        }
    }

    /// The ports of a device that no planned cable uses, in order.
    pub fn spare_ports(&self, device: usize) -> Vec<u8> {
        let mut used = vec![false; usize::from(self.devices[device].ports) + 1];
        for c in &self.cables {
            for end in [c.a, c.b] {
                if end.device == device
                    && let Some(u) = used.get_mut(usize::from(end.port))
                {
                    *u = true;
                }
            }
        }
        (1..=self.devices[device].ports)
            .filter(|&p| !used[usize::from(p)])
            .collect()
    }

    /// `U40`, `U17.2` (slot 2 of a shared U), or `no U` when the plan does not place it.
    pub fn position_text(&self, device: &Device) -> String {
        match (device.u, device.slot) {
            (Some(u), Some(slot)) => format!("U{u:02}.{slot}"),
            (Some(u), None) => format!("U{u:02}"),
            _ => "no U".into(),
        }
    }

    /// A device's place on a label: `R01-U40-sw0-0-0`, or `R01-sfn010` without a U.
    pub fn label_place(&self, d: &Device) -> String {
        let rack = &self.racks[d.rack].name;
        match d.u {
            Some(_) => format!("{rack}-{}-{}", self.position_text(d), d.name),
            None => format!("{rack}-{}", d.name),
        }
    }

    /// The devices the plan gives no U position, by name.
    pub fn unplaced_devices(&self) -> Vec<&str> {
        self.devices
            .iter()
            .filter(|d| d.u.is_none())
            .map(|d| d.name.as_str())
            .collect()
    }

    /// The label printed on both ends of a cable:
    /// `SF-0001 R01-U40-sw0-0-0-P5 to R01-U36-sw0-0-4-P6`; a port is its faceplate label where
    /// the switch model has one (`P17/2`), as the technician reads it off the switch.
    pub fn label(&self, cable: &Cable) -> String {
        let end = |e: CableEnd| {
            format!(
                "{}-P{}",
                self.label_place(&self.devices[e.device]),
                self.port_label(e).unwrap_or_else(|| e.port.to_string())
            )
        };
        format!("{} {} to {}", cable.id, end(cable.a), end(cable.b))
    }

    /// The cables between two switches (the ones a miswiring can turn into a routing problem).
    pub fn switch_cables(&self) -> impl Iterator<Item = &Cable> + '_ {
        let is_switch = |end: CableEnd| self.devices[end.device].kind == DeviceKind::Switch;
        self.cables
            .iter()
            .filter(move |c| is_switch(c.a) && is_switch(c.b))
    }

    /// The fabric the plan describes: devices as nodes (GUIDs from the plan, or deterministic
    /// ones for devices without), cables as links at the planned rate.
    ///
    /// # Errors
    /// Two cables on one port, or a port beyond the device's.
    pub fn to_fabric(&self) -> Result<Fabric, PlanError> {
        let mut fabric = Fabric::new(self.name.clone());
        for (i, d) in self.devices.iter().enumerate() {
            let kind = match d.kind {
                DeviceKind::Switch => NodeKind::Switch,
                DeviceKind::Host => NodeKind::Ca,
            };
            let guid = d
                .guid
                .unwrap_or(Guid(UNBOUND_GUID_BASE + ((i as u64) << 8)));
            let description = d.description.clone().unwrap_or_else(|| d.name.clone());
            let spec = NodeSpec {
                kind,
                name: d.name.clone(),
                description,
                guid,
                num_ports: d.ports,
                rack: Some(d.rack as u32),
            };
            fabric.add_node(spec)?;
        }
        for c in &self.cables {
            let end = |e: CableEnd| PortRef {
                node: crate::topology::NodeId(e.device as u32),
                port: e.port,
            };
            let (width, speed) = parse_rate(c.rate.as_deref());
            fabric.connect(end(c.a), end(c.b), width, speed)?;
        }
        Ok(fabric)
    }

    /// Cables per wiring step, in step order.
    pub fn cables_per_step(&self) -> Vec<usize> {
        let mut counts = vec![0; self.steps.len()];
        for c in &self.cables {
            counts[c.step as usize - 1] += 1;
        }
        counts
    }
}

/// GUIDs given to plan devices that have none recorded (locally administered, distinct from the
/// generated fabrics' GUIDs).
const UNBOUND_GUID_BASE: u64 = 0x02fa_b900_0000_0000;

/// Width and speed of a rate token like `4xEDR`.
pub fn parse_rate(
    rate: Option<&str>,
) -> (
    Option<crate::topology::LinkWidth>,
    Option<crate::topology::LinkSpeed>,
) {
    let Some(rate) = rate else {
        return (None, None);
    };
    match rate.find(['x', 'X']) {
        Some(i) => (rate[..=i].parse().ok(), rate[i + 1..].parse().ok()),
        None => (None, None),
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Switch => "switch",
            DeviceKind::Host => "host",
        })
    }
}
