//! The plan as a YAML (or JSON) document: what `cabling plan --format yaml` writes and
//! `cabling verify --plan` reads. Devices and cables refer to each other by name; labels are
//! written for people and recomputed when the plan is read.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Cable, CableEnd, CableKind, Device, DeviceKind, Plan, PlanError, Rack, SwitchModel};
use crate::topology::BadGuid;

/// A whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanDocument {
    /// The fabric the plan wires.
    pub name: String,
    /// Wiring steps, in order; cables refer to them by number from 1.
    pub steps: Vec<String>,
    /// Racks in row order.
    pub racks: Vec<RackEntry>,
    /// Switches and hosts.
    pub devices: Vec<DeviceEntry>,
    /// Cables in wiring order.
    pub cables: Vec<CableEntry>,
}

/// A rack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RackEntry {
    /// Rack name.
    pub name: String,
    /// Height in units.
    pub units: u32,
}

/// A device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceEntry {
    /// Unique name.
    pub name: String,
    /// `switch` or `host`.
    pub kind: DeviceKindEntry,
    /// Rack name.
    pub rack: String,
    /// Lowest unit occupied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u: Option<u32>,
    /// Slot in a shared unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Number of ports.
    pub ports: u8,
    /// Node GUID (`0x` + hex), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<String>,
    /// Expected NodeDescription, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Catalogue switch model (`qm9700`), when the plan names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Device kind in documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKindEntry {
    /// A switch.
    Switch,
    /// A host.
    Host,
}

/// A cable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CableEntry {
    /// Cable id.
    pub id: String,
    /// A-end device.
    pub a: String,
    /// A-end port.
    pub a_port: u8,
    /// B-end device.
    pub b: String,
    /// B-end port.
    pub b_port: u8,
    /// `copper` or `optical`.
    pub kind: String,
    /// Catalogue length in metres.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_m: Option<f64>,
    /// Wiring step, from 1.
    pub step: u32,
    /// Planned rate (`4xEDR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// The printed label (informative; recomputed on reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl PlanDocument {
    /// The document of `plan`.
    pub fn from_plan(plan: &Plan) -> Self {
        let name = |e: CableEnd| plan.devices[e.device].name.clone();
        Self {
            name: plan.name.clone(),
            steps: plan.steps.clone(),
            racks: plan
                .racks
                .iter()
                .map(|r| RackEntry {
                    name: r.name.clone(),
                    units: r.units,
                })
                .collect(),
            devices: plan
                .devices
                .iter()
                .map(|d| DeviceEntry {
                    name: d.name.clone(),
                    kind: match d.kind {
                        DeviceKind::Switch => DeviceKindEntry::Switch,
                        DeviceKind::Host => DeviceKindEntry::Host,
                    },
                    rack: plan.racks[d.rack].name.clone(),
                    u: d.u,
                    slot: d.slot,
                    ports: d.ports,
                    guid: d.guid.map(|g| g.to_string()),
                    description: d.description.clone(),
                    model: d.model.as_ref().map(|m| m.name.clone()),
                })
                .collect(),
            cables: plan
                .cables
                .iter()
                .map(|c| CableEntry {
                    id: c.id.clone(),
                    a: name(c.a),
                    a_port: c.a.port,
                    b: name(c.b),
                    b_port: c.b.port,
                    kind: c.kind.to_string(),
                    length_m: c.length_m,
                    step: c.step,
                    rate: c.rate.clone(),
                    label: Some(plan.label(c)),
                })
                .collect(),
        }
    }

    /// The plan this document describes, checked for consistency.
    ///
    /// # Errors
    /// Duplicate names, references to unknown racks, devices or steps, bad GUIDs or kinds,
    /// two cables on one port.
    pub fn to_plan(&self) -> Result<Plan, PlanError> {
        let mut rack_index = HashMap::new();
        for (i, r) in self.racks.iter().enumerate() {
            if rack_index.insert(r.name.as_str(), i).is_some() {
                return Err(PlanError::Duplicate {
                    what: "rack",
                    name: r.name.clone(),
                });
            }
        }
        let mut devices = Vec::with_capacity(self.devices.len());
        for d in &self.devices {
            let rack = *rack_index
                .get(d.rack.as_str())
                .ok_or_else(|| PlanError::UnknownRack {
                    device: d.name.clone(),
                    rack: d.rack.clone(),
                })?;
            let guid =
                match &d.guid {
                    None => None,
                    Some(text) => Some(text.parse().map_err(|e: BadGuid| {
                        PlanError::Invalid(format!("device {}: {e}", d.name))
                    })?),
                };
            devices.push(Device {
                name: d.name.clone(),
                kind: match d.kind {
                    DeviceKindEntry::Switch => DeviceKind::Switch,
                    DeviceKindEntry::Host => DeviceKind::Host,
                },
                rack,
                u: d.u,
                slot: d.slot,
                ports: d.ports,
                guid,
                description: d.description.clone(),
                model: d
                    .model
                    .as_deref()
                    .map(SwitchModel::by_name)
                    .transpose()
                    .map_err(|e| PlanError::Invalid(format!("device {}: {e}", d.name)))?,
            });
        }
        let racks = self
            .racks
            .iter()
            .map(|r| Rack {
                name: r.name.clone(),
                units: r.units,
            })
            .collect();
        let cables = self
            .cables
            .iter()
            .map(|c| {
                let kind: CableKind = c
                    .kind
                    .parse()
                    .map_err(|e| PlanError::Invalid(format!("cable {}: {e}", c.id)))?;
                Ok(RawCable {
                    id: c.id.clone(),
                    a: (c.a.clone(), c.a_port),
                    b: (c.b.clone(), c.b_port),
                    kind,
                    length_m: c.length_m,
                    step: c.step,
                    rate: c.rate.clone(),
                })
            })
            .collect::<Result<Vec<_>, PlanError>>()?;
        assemble(
            self.name.clone(),
            racks,
            devices,
            cables,
            self.steps.clone(),
        )
    }
}

/// A cable whose ends are still names, as read from a document or a CSV row.
#[derive(Debug, Clone)]
pub(super) struct RawCable {
    pub id: String,
    pub a: (String, u8),
    pub b: (String, u8),
    pub kind: CableKind,
    pub length_m: Option<f64>,
    pub step: u32,
    pub rate: Option<String>,
}

/// Resolves names and checks the whole plan: unique names and cable ids, known devices and
/// steps, ports that exist and carry one cable each.
pub(super) fn assemble(
    name: String,
    racks: Vec<Rack>,
    devices: Vec<Device>,
    raw: Vec<RawCable>,
    steps: Vec<String>,
) -> Result<Plan, PlanError> {
    let mut index = HashMap::new();
    for (i, d) in devices.iter().enumerate() {
        if index.insert(d.name.as_str(), i).is_some() {
            return Err(PlanError::Duplicate {
                what: "device",
                name: d.name.clone(),
            });
        }
    }
    let mut ids = std::collections::HashSet::new();
    let mut cables = Vec::with_capacity(raw.len());
    for c in raw {
        if !ids.insert(c.id.clone()) {
            return Err(PlanError::Duplicate {
                what: "cable id",
                name: c.id,
            });
        }
        let end = |(device, port): &(String, u8)| {
            index
                .get(device.as_str())
                .map(|&d| CableEnd {
                    device: d,
                    port: *port,
                })
                .ok_or_else(|| PlanError::UnknownDevice {
                    cable: c.id.clone(),
                    device: device.clone(),
                })
        };
        let (a, b) = (end(&c.a)?, end(&c.b)?);
        if c.step == 0 || c.step as usize > steps.len() {
            return Err(PlanError::UnknownStep {
                cable: c.id,
                step: c.step,
                steps: steps.len(),
            });
        }
        cables.push(Cable {
            id: c.id,
            a,
            b,
            kind: c.kind,
            length_m: c.length_m,
            step: c.step,
            rate: c.rate,
        });
    }
    let plan = Plan {
        name,
        racks,
        devices,
        cables,
        steps,
    };
    plan.to_fabric()?; // ports exist and carry one cable each
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build::{PlanOptions, plan_for};

    #[test]
    fn plans_round_trip_through_yaml() {
        for text in [
            "slimfly:q=5",
            "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4",
        ] {
            let plan = plan_for(&text.parse().unwrap(), &PlanOptions::default()).unwrap();
            let yaml = yaml_serde::to_string(&PlanDocument::from_plan(&plan)).unwrap();
            let back: PlanDocument = yaml_serde::from_str(&yaml).unwrap();
            assert_eq!(back.to_plan().unwrap(), plan, "{text}");
        }
    }

    #[test]
    fn inconsistent_documents_are_refused() {
        let plan = plan_for(&"mlfm:d=2".parse().unwrap(), &PlanOptions::default()).unwrap();
        let mut doc = PlanDocument::from_plan(&plan);
        doc.cables[3].b = "nobody".into();
        let id = doc.cables[3].id.clone();
        assert_eq!(
            doc.to_plan().unwrap_err().to_string(),
            format!("cable {id}: no device named \"nobody\"")
        );
        let mut doc = PlanDocument::from_plan(&plan);
        doc.devices[0].rack = "R99".into();
        assert!(
            doc.to_plan()
                .unwrap_err()
                .to_string()
                .contains("no rack named \"R99\"")
        );
        let mut doc = PlanDocument::from_plan(&plan);
        doc.cables[0].step = 9;
        assert!(
            doc.to_plan()
                .unwrap_err()
                .to_string()
                .contains("wiring step 9 is not one of")
        );
    }
}
