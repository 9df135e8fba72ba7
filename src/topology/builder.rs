//! Shared plumbing for the constructions: deterministic GUIDs, descriptions and default rates.

use super::fabric::{Fabric, Guid, NodeId, NodeKind, NodeSpec, PortRef};
use super::link_rate::{LinkSpeed, LinkWidth};

/// Switch GUIDs of generated fabrics are `SWITCH_GUID_BASE + (index << 8)`: the 0x02 bit of the
/// first byte marks them locally administered, so they never collide with vendor GUIDs.
pub const SWITCH_GUID_BASE: u64 = 0x02fa_b000_0000_0000;
/// Host GUIDs are `HOST_GUID_BASE + (index << 4)`; host port p has GUID `node GUID + p`.
pub const HOST_GUID_BASE: u64 = 0x02fa_b100_0000_0000;

/// Builds a generated fabric: every switch and host gets the next deterministic GUID, a
/// description carrying the construction's name, and cables run at the plan's rate (4x EDR).
pub struct FabricBuilder {
    fabric: Fabric,
    switches: u64,
    hosts: u64,
    width: LinkWidth,
    speed: LinkSpeed,
}

impl FabricBuilder {
    /// Vendor id written into generated nodes (Mellanox/NVIDIA, which OpenSM knows well).
    pub const VENDOR_ID: u32 = 0x02c9;
    /// Device id of generated switches (a 36-port EDR switch ASIC).
    pub const SWITCH_DEVICE_ID: u32 = 0xcb20;
    /// Device id of generated hosts (a ConnectX-5 HCA).
    pub const HOST_DEVICE_ID: u32 = 0x1017;

    /// A builder for the fabric called `name` (e.g. `slimfly-q5`).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            fabric: Fabric::new(name),
            switches: 0,
            hosts: 0,
            width: LinkWidth::X4,
            speed: LinkSpeed::Edr,
        }
    }

    /// Adds a switch with description `MF0;<name>:<fabric name>/U1` (the form managed switches
    /// report, so tools that parse switch descriptions find the name).
    pub fn switch(&mut self, name: String, num_ports: usize, rack: Option<u32>) -> NodeId {
        let guid = Guid(SWITCH_GUID_BASE + (self.switches << 8));
        self.switches += 1;
        let description = format!("MF0;{name}:{}/U1", self.fabric.name);
        let num_ports = u8::try_from(num_ports).expect("constructions validate port counts");
        let spec = NodeSpec {
            kind: NodeKind::Switch,
            name,
            description,
            guid,
            num_ports,
            rack,
        };
        self.add(spec, Self::SWITCH_DEVICE_ID)
    }

    /// Adds a single-port host with description `<name> HCA-1 <fabric name>`.
    pub fn host(&mut self, name: String, rack: Option<u32>) -> NodeId {
        let guid = Guid(HOST_GUID_BASE + (self.hosts << 4));
        self.hosts += 1;
        let description = format!("{name} HCA-1 {}", self.fabric.name);
        let spec = NodeSpec {
            kind: NodeKind::Ca,
            name,
            description,
            guid,
            num_ports: 1,
            rack,
        };
        self.add(spec, Self::HOST_DEVICE_ID)
    }

    /// Adds the node `spec` with the builder's vendor id, `device_id`, and its node GUID as
    /// system GUID (each generated node is a system of its own).
    fn add(&mut self, spec: NodeSpec, device_id: u32) -> NodeId {
        let guid = spec.guid;
        let id = self
            .fabric
            .add_node(spec)
            .expect("constructions generate unique names");
        let node = self.fabric.node_mut(id);
        node.vendor_id = Self::VENDOR_ID;
        node.device_id = device_id;
        node.system_guid = Some(guid);
        id
    }

    /// Cables port `pa` of `a` to port `pb` of `b`.
    ///
    /// # Panics
    /// If a port is used twice or does not exist: a construction bug, caught by its tests.
    pub fn cable(&mut self, a: NodeId, pa: usize, b: NodeId, pb: usize) {
        let end = |node, port: usize| PortRef {
            node,
            port: u8::try_from(port).expect("port < 256"),
        };
        self.fabric
            .connect(end(a, pa), end(b, pb), Some(self.width), Some(self.speed))
            .unwrap_or_else(|e| panic!("construction cabled a port twice: {e}"));
    }

    /// Cables every edge `(a, b)` (indexes into `switches`) on the next free port of both
    /// ends; `used[i]` is the last port of switch i in use, and is advanced.
    pub fn cable_edges(
        &mut self,
        switches: &[NodeId],
        used: &mut [usize],
        edges: impl IntoIterator<Item = (u32, u32)>,
    ) {
        for (a, b) in edges {
            let (a, b) = (a as usize, b as usize);
            used[a] += 1;
            used[b] += 1;
            self.cable(switches[a], used[a], switches[b], used[b]);
        }
    }

    /// Attaches `per_switch` hosts to each of `switches` (switch i is named `<prefix><i>`, its
    /// hosts `<prefix><i>-h<k>`), on ports `first_port`, `first_port + 1`, ….
    pub fn hosts_on(
        &mut self,
        switches: &[NodeId],
        prefix: &str,
        per_switch: usize,
        first_port: usize,
    ) {
        for (i, &s) in switches.iter().enumerate() {
            for h in 0..per_switch {
                let host = self.host(format!("{prefix}{i}-h{h}"), None);
                self.cable(s, first_port + h, host, 1);
            }
        }
    }

    /// The finished fabric.
    pub fn finish(self) -> Fabric {
        self.fabric
    }
}
