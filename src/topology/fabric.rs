//! The fabric model: switches, hosts (channel adapters), routers, their ports and the cables
//! between them.
//!
//! This is the one type that the constructions, the ibnetdiscover reader, the routing and the
//! OpenSM plugin share. Nodes are identified by a dense [`NodeId`]; names and GUIDs are unique
//! within a fabric and indexed. Ports are numbered as on the device, from 1 (port 0 is a switch's
//! management port and never carries a cable).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::link_rate::{LinkSpeed, LinkWidth};

/// A 64-bit InfiniBand GUID (node, port or system image).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub u64);

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

/// Text that is not `0x` followed by hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GUID {0:?} is not 0x followed by hex digits")]
pub struct BadGuid(pub String);

impl FromStr for Guid {
    type Err = BadGuid;

    /// `0x` (or `0X`) and up to 16 hex digits, as [`Guid`]'s `Display` writes it and as
    /// documents and plans give GUIDs.
    fn from_str(text: &str) -> Result<Self, BadGuid> {
        text.strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .map(Guid)
            .ok_or_else(|| BadGuid(text.into()))
    }
}

/// Index of a node in its [`Fabric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index as usize, for slices indexed by node.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a link in its [`Fabric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

/// What kind of device a node is, as in NodeInfo.NodeType.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A switch: one node GUID shared by all its ports, one LID on port 0.
    Switch,
    /// A channel adapter (HCA): every port has its own GUID and LID.
    Ca,
    /// A router: ports like a channel adapter.
    Router,
}

impl NodeKind {
    /// The letter ibnetdiscover prefixes node ids with (`S-`, `H-`, `R-`).
    pub fn id_prefix(self) -> char {
        match self {
            NodeKind::Switch => 'S',
            NodeKind::Ca => 'H',
            NodeKind::Router => 'R',
        }
    }
}

/// One end of a cable: a node and a port number (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortRef {
    /// The node.
    pub node: NodeId,
    /// The port number on that node, from 1.
    pub port: u8,
}

/// A port of a node. Index 0 of [`Node::ports`] is port 0 (a switch's management port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// Port GUID: the node GUID on a switch, the port's own GUID on a CA or router.
    pub guid: Guid,
    /// Base LID, 0 when unassigned (generated fabrics, or no subnet manager).
    pub lid: u16,
    /// LID mask control: the port answers to 2^lmc LIDs from its base LID.
    pub lmc: u8,
    /// The cable plugged into this port, if any.
    pub link: Option<LinkId>,
}

/// NodeDescription of the SHARP aggregation node inside Quantum switches.
pub const AGGREGATION_NODE_DESCRIPTION: &str = "Mellanox Technologies Aggregation Node";

/// Whether `node` is a SHARP aggregation node: the CA built into a Quantum switch (on its
/// last port, 41 or 65), reported as a CA with description
/// [`AGGREGATION_NODE_DESCRIPTION`]. Its "cable" is internal to the switch, so cabling checks
/// ignore it, and a switch whose only endpoint it is carries no hosts.
pub fn is_aggregation_node(node: &Node) -> bool {
    node.kind == NodeKind::Ca && node.description.trim() == AGGREGATION_NODE_DESCRIPTION
}

/// A switch, channel adapter or router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Switch, CA or router.
    pub kind: NodeKind,
    /// Name unique in the fabric: the construction's name or the node-name-map's.
    pub name: String,
    /// NodeDescription as the device reports it (at most 64 bytes on real devices).
    pub description: String,
    /// Node GUID.
    pub guid: Guid,
    /// System image GUID, when known.
    pub system_guid: Option<Guid>,
    /// IEEE vendor id.
    pub vendor_id: u32,
    /// Device id.
    pub device_id: u32,
    /// The construction's rack for this node, when it has one (rack 0 is the first).
    pub rack: Option<u32>,
    /// Ports 0..=num_ports; port 0 exists on every node and carries no cable.
    pub ports: Vec<Port>,
}

impl Node {
    /// Number of physical ports (the highest port number).
    pub fn num_ports(&self) -> u8 {
        (self.ports.len() - 1) as u8
    }

    /// Whether this node is a switch.
    pub fn is_switch(&self) -> bool {
        self.kind == NodeKind::Switch
    }

    /// The node's LID: port 0's for a switch, the first cabled port's for a CA or router.
    pub fn lid(&self) -> u16 {
        match self.kind {
            NodeKind::Switch => self.ports[0].lid,
            _ => self
                .ports
                .iter()
                .skip(1)
                .find(|p| p.link.is_some())
                .map_or(0, |p| p.lid),
        }
    }
}

/// A cable between two ports, with the rate the link runs (or is planned to run) at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// One end.
    pub a: PortRef,
    /// The other end.
    pub b: PortRef,
    /// Active (or planned) width; `None` when unknown (`??` in ibnetdiscover).
    pub width: Option<LinkWidth>,
    /// Active (or planned) speed; `None` when unknown (`???`).
    pub speed: Option<LinkSpeed>,
}

impl Link {
    /// The end of this link that is not `end` (for a loopback cable, the other port).
    pub fn other_end(&self, end: PortRef) -> PortRef {
        if self.a == end { self.b } else { self.a }
    }
}

/// Why a node or link could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    /// Two nodes with one name.
    #[error("duplicate node name {0:?}")]
    DuplicateName(String),
    /// Two nodes with one GUID.
    #[error("duplicate node GUID {0}")]
    DuplicateGuid(Guid),
    /// A port number beyond the node's ports, or port 0.
    #[error("{node} has no port {port} (ports 1..={num_ports})")]
    NoSuchPort {
        /// Node name.
        node: String,
        /// Requested port.
        port: u8,
        /// The node's port count.
        num_ports: u8,
    },
    /// A port that already has a cable.
    #[error("{node} port {port} already has a cable (to {peer})")]
    PortInUse {
        /// Node name.
        node: String,
        /// The port.
        port: u8,
        /// Where the existing cable goes.
        peer: String,
    },
    /// A node with no ports at all.
    #[error("{0} has no ports")]
    NoPorts(String),
}

/// What a new node is: everything but its ports' cables.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// Switch, CA or router.
    pub kind: NodeKind,
    /// Unique name.
    pub name: String,
    /// NodeDescription.
    pub description: String,
    /// Node GUID.
    pub guid: Guid,
    /// Number of physical ports.
    pub num_ports: u8,
    /// Rack hint from the construction.
    pub rack: Option<u32>,
}

/// A fabric: nodes, ports and links, with name and GUID indexes.
#[derive(Debug, Clone, Default)]
pub struct Fabric {
    /// What the fabric is (e.g. `slimfly-q5`, or the dump it was read from).
    pub name: String,
    nodes: Vec<Node>,
    links: Vec<Link>,
    by_name: HashMap<String, NodeId>,
    by_guid: HashMap<Guid, NodeId>,
}

impl Fabric {
    /// An empty fabric called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Adds a node. Switch ports get the node GUID, CA and router port p gets `guid + p`
    /// (what ibsim and most HCAs do); set [`Port::guid`] afterwards to override.
    ///
    /// # Errors
    /// A duplicate name or GUID, or a node without ports.
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<NodeId, FabricError> {
        if spec.num_ports == 0 {
            return Err(FabricError::NoPorts(spec.name));
        }
        if self.by_name.contains_key(&spec.name) {
            return Err(FabricError::DuplicateName(spec.name));
        }
        if self.by_guid.contains_key(&spec.guid) {
            return Err(FabricError::DuplicateGuid(spec.guid));
        }
        let id = NodeId(self.nodes.len() as u32);
        let ports = (0..=u64::from(spec.num_ports))
            .map(|p| Port {
                guid: match spec.kind {
                    NodeKind::Switch => spec.guid,
                    _ => Guid(spec.guid.0.wrapping_add(p)),
                },
                lid: 0,
                lmc: 0,
                link: None,
            })
            .collect();
        self.by_name.insert(spec.name.clone(), id);
        self.by_guid.insert(spec.guid, id);
        self.nodes.push(Node {
            kind: spec.kind,
            name: spec.name,
            description: spec.description,
            guid: spec.guid,
            system_guid: None,
            vendor_id: 0,
            device_id: 0,
            rack: spec.rack,
            ports,
        });
        Ok(id)
    }

    /// Connects two ports with a cable.
    ///
    /// # Errors
    /// A port that does not exist or already has a cable.
    pub fn connect(
        &mut self,
        a: PortRef,
        b: PortRef,
        width: Option<LinkWidth>,
        speed: Option<LinkSpeed>,
    ) -> Result<LinkId, FabricError> {
        for end in [a, b] {
            let node = &self.nodes[end.node.index()];
            if end.port == 0 || end.port > node.num_ports() {
                return Err(FabricError::NoSuchPort {
                    node: node.name.clone(),
                    port: end.port,
                    num_ports: node.num_ports(),
                });
            }
            if let Some(existing) = node.ports[usize::from(end.port)].link {
                let peer = self.links[existing.0 as usize].other_end(end);
                return Err(FabricError::PortInUse {
                    node: node.name.clone(),
                    port: end.port,
                    peer: self.port_name(peer),
                });
            }
        }
        if a == b {
            return Err(FabricError::PortInUse {
                node: self.nodes[a.node.index()].name.clone(),
                port: a.port,
                peer: "itself".into(),
            });
        }
        let id = LinkId(self.links.len() as u32);
        self.links.push(Link { a, b, width, speed });
        self.nodes[a.node.index()].ports[usize::from(a.port)].link = Some(id);
        self.nodes[b.node.index()].ports[usize::from(b.port)].link = Some(id);
        Ok(id)
    }

    /// All nodes, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Mutable access to one node's attributes (not to its cables, which [`Self::connect`] owns).
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// All links, indexed by [`LinkId`].
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// One link.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }

    /// Renames a node: a discovered node taking the name its construction or a site's
    /// node-name-map gives it, so that schedules and layouts written with those names find it.
    /// Renaming a node to its own name does nothing.
    ///
    /// # Errors
    /// Another node already has that name.
    pub fn rename_node(&mut self, id: NodeId, name: impl Into<String>) -> Result<(), FabricError> {
        let name = name.into();
        match self.by_name.get(&name) {
            Some(&other) if other == id => return Ok(()),
            Some(_) => return Err(FabricError::DuplicateName(name)),
            None => {}
        }
        let old = std::mem::replace(&mut self.nodes[id.index()].name, name.clone());
        self.by_name.remove(&old);
        self.by_name.insert(name, id);
        Ok(())
    }

    /// The node called `name`.
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// The node with node GUID `guid`.
    pub fn node_by_guid(&self, guid: Guid) -> Option<NodeId> {
        self.by_guid.get(&guid).copied()
    }

    /// Ids of all switches, in node order.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.ids_of(|n| n.kind == NodeKind::Switch)
    }

    /// Ids of all channel adapters (hosts), in node order.
    pub fn hosts(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.ids_of(|n| n.kind == NodeKind::Ca)
    }

    fn ids_of<'a>(
        &'a self,
        keep: impl Fn(&Node) -> bool + 'a,
    ) -> impl Iterator<Item = NodeId> + 'a {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| keep(n))
            .map(|(i, _)| NodeId(i as u32))
    }

    /// The port at the other end of the cable in `end`, if one is plugged in.
    pub fn peer(&self, end: PortRef) -> Option<PortRef> {
        let port = self.nodes[end.node.index()]
            .ports
            .get(usize::from(end.port))?;
        port.link.map(|l| self.links[l.0 as usize].other_end(end))
    }

    /// The cabled ports of a node with their peers, in port order.
    pub fn neighbours(&self, node: NodeId) -> impl Iterator<Item = (u8, PortRef)> + '_ {
        let n = &self.nodes[node.index()];
        (1..=n.num_ports())
            .filter_map(move |p| self.peer(PortRef { node, port: p }).map(|peer| (p, peer)))
    }

    /// `name[port]`, for messages.
    pub fn port_name(&self, end: PortRef) -> String {
        format!("{}[{}]", self.nodes[end.node.index()].name, end.port)
    }

    /// This fabric after losses: a copy without the nodes `lost_node` names and the cables
    /// `lost_cable` names (and every cable of a lost node), every other node, port GUID, LID
    /// and cable as here — what a subnet looks like after cables fail or a switch goes down.
    pub fn after_losses(
        &self,
        lost_node: impl Fn(NodeId) -> bool,
        lost_cable: impl Fn(LinkId) -> bool,
    ) -> Fabric {
        let mut after = Fabric::new(self.name.clone());
        let mut id_of = vec![None; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if lost_node(NodeId(i as u32)) {
                continue;
            }
            let id = after
                .add_node(NodeSpec {
                    kind: node.kind,
                    name: node.name.clone(),
                    description: node.description.clone(),
                    guid: node.guid,
                    num_ports: node.num_ports(),
                    rack: node.rack,
                })
                .expect("a copy of a node of a valid fabric");
            for (copy, port) in after.node_mut(id).ports.iter_mut().zip(&node.ports) {
                (copy.guid, copy.lid, copy.lmc) = (port.guid, port.lid, port.lmc);
            }
            id_of[i] = Some(id);
        }
        for (i, link) in self.links.iter().enumerate() {
            let ends = (id_of[link.a.node.index()], id_of[link.b.node.index()]);
            let (Some(a), Some(b)) = ends else { continue };
            if lost_cable(LinkId(i as u32)) {
                continue;
            }
            let end = |node, port| PortRef { node, port };
            after
                .connect(
                    end(a, link.a.port),
                    end(b, link.b.port),
                    link.width,
                    link.speed,
                )
                .expect("a copy of a cable of a valid fabric");
        }
        after
    }

    /// Counts of what the fabric holds.
    pub fn summary(&self) -> FabricSummary {
        let mut s = FabricSummary::default();
        for n in &self.nodes {
            match n.kind {
                NodeKind::Switch => s.switches += 1,
                NodeKind::Ca => s.hosts += 1,
                NodeKind::Router => s.routers += 1,
            }
        }
        for l in &self.links {
            let switch_end = |e: PortRef| self.nodes[e.node.index()].is_switch();
            if switch_end(l.a) && switch_end(l.b) {
                s.switch_links += 1;
            } else {
                s.host_links += 1;
            }
        }
        s
    }
}

/// Node and cable counts of a fabric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FabricSummary {
    /// Switches.
    pub switches: usize,
    /// Channel adapters.
    pub hosts: usize,
    /// Routers.
    pub routers: usize,
    /// Cables between two switches.
    pub switch_links: usize,
    /// Cables with a CA or router on at least one end.
    pub host_links: usize,
}

impl fmt::Display for FabricSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} switches, {} hosts, {} switch-switch cables, {} host cables",
            self.switches, self.hosts, self.switch_links, self.host_links
        )?;
        if self.routers > 0 {
            write!(f, ", {} routers", self.routers)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_losses_keeps_everything_but_the_lost_nodes_and_cables() {
        let mut whole: Fabric =
            crate::topology::TopologySpec::build(&"slimfly:q=5".parse().expect("a spec"))
                .expect("a fabric");
        crate::routing::assign_lids(&mut whole, 2).expect("LIDs fit");
        let victim = whole.switches().nth(3).expect("a switch");
        let after = whole.after_losses(|n| n == victim, |l| l.0 % 10 == 0);
        let victim_cables = whole.neighbours(victim).count();
        let cut = (0..whole.links().len())
            .filter(|&i| {
                let l = &whole.links()[i];
                i % 10 == 0 && l.a.node != victim && l.b.node != victim
            })
            .count();
        assert_eq!(after.nodes().len(), whole.nodes().len() - 1);
        assert_eq!(
            after.links().len(),
            whole.links().len() - victim_cables - cut
        );
        for node in after.nodes() {
            let was = whole.node(whole.node_by_guid(node.guid).expect("same GUIDs"));
            assert_eq!(node.name, was.name);
            for (port, before) in node.ports.iter().zip(&was.ports) {
                assert_eq!(
                    (port.guid, port.lid, port.lmc),
                    (before.guid, before.lid, before.lmc)
                );
            }
        }
    }

    #[test]
    fn guids_read_back_as_they_are_written() {
        for value in [0, 1, 0x0002_c903_0000_1234, u64::MAX >> 1, u64::MAX] {
            let guid = Guid(value);
            assert_eq!(guid.to_string().parse(), Ok(guid));
            assert_eq!(format!("0X{value:X}").parse(), Ok(guid));
        }
    }

    #[test]
    fn guids_without_0x_or_with_more_than_64_bits_are_refused() {
        for text in [
            "",
            "0x",
            "1234",
            "x12",
            "0xg1",
            "0x1_0",
            "0x10000000000000000",
        ] {
            assert_eq!(text.parse::<Guid>(), Err(BadGuid(text.into())), "{text}");
        }
    }

    fn spec(kind: NodeKind, name: &str, guid: u64, num_ports: u8) -> NodeSpec {
        NodeSpec {
            kind,
            name: name.into(),
            description: name.into(),
            guid: Guid(guid),
            num_ports,
            rack: None,
        }
    }

    #[test]
    fn cables_are_indexed_from_both_ends() {
        let mut f = Fabric::new("t");
        let s = f.add_node(spec(NodeKind::Switch, "s", 0x10, 4)).unwrap();
        let h = f.add_node(spec(NodeKind::Ca, "h", 0x20, 2)).unwrap();
        let sp = PortRef { node: s, port: 3 };
        let hp = PortRef { node: h, port: 2 };
        f.connect(sp, hp, Some(LinkWidth::X4), Some(LinkSpeed::Edr))
            .unwrap();
        assert_eq!(f.peer(sp), Some(hp));
        assert_eq!(f.peer(hp), Some(sp));
        assert_eq!(f.peer(PortRef { node: s, port: 1 }), None);
        assert_eq!(f.node(h).ports[2].guid, Guid(0x22));
        assert_eq!(f.node(s).ports[2].guid, Guid(0x10));
        assert_eq!(f.summary().host_links, 1);
    }

    #[test]
    fn a_renamed_node_is_found_by_its_new_name_only() {
        let mut f = Fabric::new("t");
        let a = f.add_node(spec(NodeKind::Ca, "a", 1, 1)).unwrap();
        let b = f.add_node(spec(NodeKind::Ca, "b", 2, 1)).unwrap();
        f.rename_node(a, "srv0").unwrap();
        assert_eq!(f.node_by_name("srv0"), Some(a));
        assert_eq!(f.node_by_name("a"), None);
        assert_eq!(f.node(a).name, "srv0");
        f.rename_node(a, "srv0").unwrap();
        assert!(matches!(
            f.rename_node(b, "srv0"),
            Err(FabricError::DuplicateName(_))
        ));
        assert_eq!(
            f.node_by_name("b"),
            Some(b),
            "a refused rename changes nothing"
        );
    }

    #[test]
    fn bad_nodes_and_cables_are_refused_with_names() {
        let mut f = Fabric::new("t");
        let s = f.add_node(spec(NodeKind::Switch, "s", 1, 2)).unwrap();
        assert!(matches!(
            f.add_node(spec(NodeKind::Switch, "s", 2, 2)),
            Err(FabricError::DuplicateName(_))
        ));
        assert!(matches!(
            f.add_node(spec(NodeKind::Switch, "t", 1, 2)),
            Err(FabricError::DuplicateGuid(_))
        ));
        let p = |port| PortRef { node: s, port };
        let err = f.connect(p(1), p(3), None, None).unwrap_err();
        assert_eq!(err.to_string(), "s has no port 3 (ports 1..=2)");
        f.connect(p(1), p(2), None, None).unwrap(); // a loopback cable is real
        let t = f.add_node(spec(NodeKind::Switch, "t", 3, 2)).unwrap();
        let err = f
            .connect(PortRef { node: t, port: 1 }, p(2), None, None)
            .unwrap_err();
        assert_eq!(err.to_string(), "s port 2 already has a cable (to s[1])");
    }
}
