//! The fabric indexed for walking forwarding tables: switches in dense order, every direction
//! of every cable as a link, the switch-to-switch links numbered densely as cables, and the
//! endpoints (CA and router ports with LIDs, cabled to a switch) that send and receive.
//!
//! The analyser, the deadlock schemes, their verifier and rank placement all see the fabric
//! through this one index, so a switch, a link or an endpoint has the same number everywhere.

use super::NONE;
use crate::routing::LidTable;
use crate::topology::{Fabric, NodeId, NodeKind, PortRef};

/// One direction of a cable: leaving `from`, arriving at `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// Where the packet leaves.
    pub from: PortRef,
    /// Where it arrives.
    pub to: PortRef,
    /// Dense switch index of the sending node ([`NONE`] for a CA or router).
    pub from_switch: u32,
    /// Dense switch index of the receiving node ([`NONE`] for a CA or router).
    pub to_switch: u32,
}

impl Link {
    /// Whether both ends are switches (a cable of the switch graph).
    pub fn between_switches(&self) -> bool {
        self.from_switch != NONE && self.to_switch != NONE
    }

    /// Whether both ends are on one node (a loopback cable, never part of a valid route).
    pub fn is_loopback(&self) -> bool {
        self.from.node == self.to.node
    }
}

/// A CA or router port with LIDs, cabled to a switch: a source and destination of traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// The port.
    pub port: PortRef,
    /// Dense index of the switch it is cabled to.
    pub switch: u32,
    /// Base LID.
    pub base_lid: u16,
    /// How many consecutive LIDs from the base it owns in the LID table (2^LMC, fewer at the
    /// end of the unicast range): one per layer.
    pub lids: u16,
    /// The link from the port to its switch.
    pub up: u32,
    /// The link from the switch to the port (the delivery link of its LIDs).
    pub down: u32,
}

/// A destination LID and where the switches must deliver it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dest {
    /// The LID.
    pub lid: u16,
    /// The port that owns it (a switch's port 0 for the switch's own LID).
    pub port: PortRef,
    /// Dense index of the switch that delivers it.
    pub switch: u32,
    /// The delivery link from that switch to the owner ([`NONE`] for a switch's own LID, which
    /// the switch keeps).
    pub link: u32,
}

/// The fabric indexed for walks (see the module documentation).
#[derive(Debug, Clone)]
pub struct Network<'a> {
    /// The fabric.
    pub fabric: &'a Fabric,
    /// Fabric node of each dense switch (the order of [`Fabric::switches`]).
    pub switches: Vec<NodeId>,
    /// Dense switch index of each fabric node ([`NONE`] for CAs and routers).
    pub dense: Vec<u32>,
    /// Per node, the start of its ports in `link_of_port`.
    port_base: Vec<u32>,
    /// The link leaving each (node, port), [`NONE`] without a cable.
    link_of_port: Vec<u32>,
    /// Every direction of every cable, by sending node, then port.
    pub links: Vec<Link>,
    /// The switch-to-switch links (loopbacks included) in link order: cable `c` is link
    /// `cables[c]`. Per-cable data (loads, flows) is indexed by this dense number.
    pub cables: Vec<u32>,
    /// Per link, its cable number ([`NONE`] for a link to or from a CA or router).
    pub cable_of_link: Vec<u32>,
    /// Endpoints, grouped by switch (ascending dense index), then in port order.
    pub endpoints: Vec<Endpoint>,
    /// Per dense switch, the start of its endpoints (and the total at the end).
    endpoint_offsets: Vec<u32>,
    /// CA and router ports with LIDs that are not cabled to a switch (no switch can reach
    /// them).
    pub unattached_ports: usize,
}

impl<'a> Network<'a> {
    /// Indexes `fabric`; endpoints own the LIDs `lids` gives them.
    pub fn new(fabric: &'a Fabric, lids: &LidTable) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut dense = vec![NONE; fabric.nodes().len()];
        for (i, s) in switches.iter().enumerate() {
            dense[s.index()] = i as u32;
        }
        let mut port_base = Vec::with_capacity(fabric.nodes().len());
        let mut total = 0u32;
        for node in fabric.nodes() {
            port_base.push(total);
            total += u32::from(node.num_ports()) + 1;
        }
        let mut link_of_port = vec![NONE; total as usize];
        let mut links = Vec::new();
        for i in 0..fabric.nodes().len() {
            let id = NodeId(i as u32);
            for (p, peer) in fabric.neighbours(id) {
                link_of_port[(port_base[i] + u32::from(p)) as usize] = links.len() as u32;
                links.push(Link {
                    from: PortRef { node: id, port: p },
                    to: peer,
                    from_switch: dense[i],
                    to_switch: dense[peer.node.index()],
                });
            }
        }
        let mut cables = Vec::new();
        let mut cable_of_link = vec![NONE; links.len()];
        for (l, link) in links.iter().enumerate() {
            if link.between_switches() {
                cable_of_link[l] = cables.len() as u32;
                cables.push(l as u32);
            }
        }
        let mut net = Self {
            fabric,
            switches,
            dense,
            port_base,
            link_of_port,
            links,
            cables,
            cable_of_link,
            endpoints: Vec::new(),
            endpoint_offsets: Vec::new(),
            unattached_ports: 0,
        };
        net.find_endpoints(lids);
        net
    }

    /// The CA and router ports with LIDs, grouped by switch.
    fn find_endpoints(&mut self, lids: &LidTable) {
        let fabric = self.fabric;
        let mut endpoints = Vec::new();
        for (i, node) in fabric.nodes().iter().enumerate() {
            if node.kind == NodeKind::Switch {
                continue;
            }
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                if port.link.is_none() || port.lid == 0 {
                    continue;
                }
                let end = PortRef {
                    node: NodeId(i as u32),
                    port: p as u8,
                };
                let Some(peer) = fabric.peer(end) else {
                    continue;
                };
                let switch = self.dense[peer.node.index()];
                if switch == NONE {
                    self.unattached_ports += 1;
                    continue;
                }
                // Only the LIDs the LID table gives this port (it drops LIDs beyond the unicast
                // range).
                let owned = (0..1u32 << port.lmc.min(7))
                    .take_while(|&k| {
                        u16::try_from(u32::from(port.lid) + k)
                            .ok()
                            .and_then(|l| lids.owner(l))
                            .is_some_and(|o| o.node == end.node && o.port == end.port)
                    })
                    .count() as u16;
                if owned == 0 {
                    continue;
                }
                let (Some(up), Some(down)) = (self.link_at(end), self.link_at(peer)) else {
                    continue;
                };
                endpoints.push(Endpoint {
                    port: end,
                    switch,
                    base_lid: port.lid,
                    lids: owned,
                    up,
                    down,
                });
            }
        }
        endpoints.sort_by_key(|e| (e.switch, e.port));
        let mut offsets = vec![0u32; self.switches.len() + 1];
        for e in &endpoints {
            offsets[e.switch as usize + 1] += 1;
        }
        for s in 0..self.switches.len() {
            offsets[s + 1] += offsets[s];
        }
        self.endpoints = endpoints;
        self.endpoint_offsets = offsets;
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.switches.len()
    }

    /// Whether the fabric has no switch.
    pub fn is_empty(&self) -> bool {
        self.switches.is_empty()
    }

    /// The link leaving `port`, if it has a cable (`None` also for a port the node lacks).
    pub fn link_at(&self, port: PortRef) -> Option<u32> {
        let base = *self.port_base.get(port.node.index())?;
        if port.port > self.fabric.node(port.node).num_ports() {
            return None;
        }
        let l = self.link_of_port[(base + u32::from(port.port)) as usize];
        (l != NONE).then_some(l)
    }

    /// Endpoints cabled to dense switch `s`.
    pub fn endpoints_at(&self, s: usize) -> &[Endpoint] {
        &self.endpoints[self.endpoint_offsets[s] as usize..self.endpoint_offsets[s + 1] as usize]
    }

    /// The destination LID `e.base_lid + layer` of endpoint `e`.
    pub fn endpoint_dest(&self, e: &Endpoint, layer: u16) -> Dest {
        Dest {
            lid: e.base_lid + layer,
            port: e.port,
            switch: e.switch,
            link: e.down,
        }
    }

    /// The own LID of dense switch `s` as a destination, if the LID table gives it one.
    pub fn switch_dest(&self, s: usize, lids: &LidTable) -> Option<Dest> {
        let node = self.switches[s];
        let lid = self.fabric.node(node).ports[0].lid;
        let owner = lids.owner(lid).filter(|_| lid != 0)?;
        (owner.node == node).then_some(Dest {
            lid,
            port: PortRef { node, port: 0 },
            switch: s as u32,
            link: NONE,
        })
    }

    /// Every LID of the fabric as a destination: each endpoint's LIDs in endpoint order, then
    /// the switches' own LIDs.
    pub fn every_dest<'s>(&'s self, lids: &'s LidTable) -> impl Iterator<Item = Dest> + 's {
        self.endpoints
            .iter()
            .flat_map(|e| (0..e.lids).map(|layer| self.endpoint_dest(e, layer)))
            .chain((0..self.len()).filter_map(|s| self.switch_dest(s, lids)))
    }

    /// Name of dense switch `s`.
    pub fn switch_name(&self, s: usize) -> &str {
        &self.fabric.node(self.switches[s]).name
    }

    /// `sw[3] -> sw2[1]` for link `l`.
    pub fn link_name(&self, l: u32) -> String {
        let link = self.links[l as usize];
        format!(
            "{} -> {}",
            self.fabric.port_name(link.from),
            self.fabric.port_name(link.to)
        )
    }
}
