//! Cabling as it is, in plan terms: the plan's cables, rewired port by port — to inject the
//! faults technicians make (swapped, moved, missing, extra, degraded cables, racks not yet
//! cabled) and build the fabric that results, for tests, simulations and benchmarks.

use crate::plan::{CableEnd, DeviceKind, Plan};
use crate::topology::{
    Fabric, FabricError, Guid, LinkSpeed, LinkWidth, NodeId, NodeKind, NodeSpec, PortRef,
};

/// One cable as it is plugged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// One end.
    pub a: CableEnd,
    /// The other end.
    pub b: CableEnd,
    /// Width the link runs at (`None`: the plan's rate).
    pub width: Option<LinkWidth>,
    /// Speed the link runs at (`None`: the plan's rate).
    pub speed: Option<LinkSpeed>,
}

/// The cables of a fabric, with ends named as plan devices and ports.
#[derive(Debug, Clone, PartialEq)]
pub struct Wiring {
    /// The cables.
    pub wires: Vec<Wire>,
}

impl Wiring {
    /// Every planned cable, at its planned rate.
    pub fn from_plan(plan: &Plan) -> Self {
        let wires = plan
            .cables
            .iter()
            .map(|c| {
                let (width, speed) = crate::plan::parse_rate(c.rate.as_deref());
                Wire {
                    a: c.a,
                    b: c.b,
                    width,
                    speed,
                }
            })
            .collect();
        Self { wires }
    }

    /// The index of the wire plugged into `end`.
    pub fn at(&self, end: CableEnd) -> Option<usize> {
        self.wires.iter().position(|w| w.a == end || w.b == end)
    }

    /// Where the wire plugged into `end` leads.
    pub fn peer(&self, end: CableEnd) -> Option<CableEnd> {
        self.at(end).map(|i| {
            if self.wires[i].a == end {
                self.wires[i].b
            } else {
                self.wires[i].a
            }
        })
    }

    /// Exchanges the cable ends plugged into ports `x` and `y` (either may be empty).
    pub fn swap_ends(&mut self, x: CableEnd, y: CableEnd) {
        let (i, j) = (self.at(x), self.at(y));
        let mut replace = |i: Option<usize>, from: CableEnd, to: CableEnd| {
            if let Some(i) = i {
                let w = &mut self.wires[i];
                if w.a == from {
                    w.a = to;
                } else {
                    w.b = to;
                }
            }
        };
        replace(i, x, y);
        replace(j, y, x);
    }

    /// Moves the cable end in `from` to the (empty) port `to`.
    pub fn move_end(&mut self, from: CableEnd, to: CableEnd) {
        assert!(self.at(to).is_none(), "port {to:?} is taken");
        self.swap_ends(from, to);
    }

    /// Unplugs the cable in `end` (both its ends); returns it.
    pub fn unplug(&mut self, end: CableEnd) -> Option<Wire> {
        self.at(end).map(|i| self.wires.remove(i))
    }

    /// Plugs a cable between two ports.
    pub fn plug(&mut self, a: CableEnd, b: CableEnd) {
        self.wires.push(Wire {
            a,
            b,
            width: None,
            speed: None,
        });
    }

    /// Unplugs every cable with an end on a device for which `unplug` holds.
    pub fn unplug_devices(&mut self, unplug: impl Fn(usize) -> bool) {
        self.wires
            .retain(|w| !unplug(w.a.device) && !unplug(w.b.device));
    }

    /// The fabric of this wiring: the plan's devices (with their GUIDs and descriptions, or
    /// deterministic ones like [`Plan::to_fabric`]'s), switches with `spare_ports` more ports
    /// than planned, and the wires at their rates.
    ///
    /// # Errors
    /// Two wires on one port, or a port beyond a device's.
    pub fn to_fabric(&self, plan: &Plan, spare_ports: u8) -> Result<Fabric, FabricError> {
        let mut fabric = Fabric::new(plan.name.clone());
        for (i, d) in plan.devices.iter().enumerate() {
            let (kind, ports) = match d.kind {
                DeviceKind::Switch => (NodeKind::Switch, d.ports.saturating_add(spare_ports)),
                DeviceKind::Host => (NodeKind::Ca, d.ports),
            };
            fabric.add_node(NodeSpec {
                kind,
                name: d.name.clone(),
                description: d.description.clone().unwrap_or_else(|| d.name.clone()),
                guid: d
                    .guid
                    .unwrap_or(Guid(0x02fa_b900_0000_0000 + ((i as u64) << 8))),
                num_ports: ports,
                rack: Some(d.rack as u32),
            })?;
        }
        let port = |e: CableEnd| PortRef {
            node: NodeId(e.device as u32),
            port: e.port,
        };
        for w in &self.wires {
            fabric.connect(port(w.a), port(w.b), w.width, w.speed)?;
        }
        Ok(fabric)
    }
}
