//! What a subnet manager asks a routing engine once its tables are in place: the SL of a path
//! (the SA, for every PathRecord, and the SM for its own SL), the SL-to-VL table of a port
//! (the QoS manager), and what the multicast trees are built over. They come from the
//! deadlock scheme and must be consistent with the forwarding tables written in the same
//! sweep. Looked up by LID and by node GUID.

use crate::Fabric;
use crate::deadlock::{PathSl, Sl2VlTables, SlVlRow, SwitchSls};
use crate::routing::LidTable;
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::RoutingGraph;
use crate::topology::{Guid, PortRef};

/// The SLs and SL-to-VL tables of one routing.
#[derive(Debug)]
pub struct QosAnswers {
    fabric: Fabric,
    lids: LidTable,
    /// `None` when every SL is safe (lanes by port pair): the requester's choice stands.
    path_sls: Option<SwitchSls>,
    sl2vl: Sl2VlTables,
}

impl QosAnswers {
    /// The answers for `fabric` (whose ports carry the LIDs the SLs are keyed by).
    pub fn new(
        fabric: Fabric,
        lids: LidTable,
        path_sls: Option<SwitchSls>,
        sl2vl: Sl2VlTables,
    ) -> Self {
        Self {
            fabric,
            lids,
            path_sls,
            sl2vl,
        }
    }

    /// The SL of packets from `slid` to `dlid` (host order), or `None` for a LID this routing
    /// does not know and when any SL is safe (OpenSM then keeps its own choice: the
    /// requester's SL or its QoS policy's, so SL-based QoS keeps working).
    pub fn path_sl(&self, slid: u16, dlid: u16) -> Option<u8> {
        self.lids.owner(slid)?;
        self.lids.owner(dlid)?;
        Some(self.path_sls.as_ref()?.sl(slid, dlid))
    }

    /// The SL-to-VL row of port `port` of node `node_guid`: for a switch, of packets entering
    /// at `in_port` and leaving at `port`; for a CA or router, of what the port sends. `None`
    /// for a node or port this routing does not know.
    pub fn sl2vl(&self, node_guid: u64, port: u8, in_port: u8) -> Option<SlVlRow> {
        let node = self.fabric.node_by_guid(Guid(node_guid))?;
        let n = self.fabric.node(node);
        if port > n.num_ports() {
            return None;
        }
        if n.is_switch() {
            if in_port > n.num_ports() {
                return None;
            }
            Some(*self.sl2vl.switch_row(node, in_port, port))
        } else {
            Some(*self.sl2vl.port_row(PortRef { node, port }))
        }
    }

    /// The SL-to-VL tables.
    pub fn tables(&self) -> &Sl2VlTables {
        &self.sl2vl
    }

    /// These SL-to-VL tables on another copy of the subnet (`fabric`: another discovery, nodes
    /// matched by GUID): what the ports hold while a change to another routing is written.
    /// Ports this routing does not know get the default row.
    pub fn lanes_on(&self, fabric: &Fabric) -> Sl2VlTables {
        let mut lanes = Sl2VlTables::new(fabric, self.sl2vl.default);
        for (id, node) in fabric.nodes().iter().enumerate() {
            let id = crate::topology::NodeId(id as u32);
            let n = node.num_ports();
            if node.is_switch() {
                let table = lanes.switch_mut(id, n);
                for in_port in 0..=n {
                    for out_port in 0..=n {
                        if let Some(row) = self.sl2vl(node.guid.0, out_port, in_port) {
                            table.set(in_port, out_port, row);
                        }
                    }
                }
            } else {
                for port in 1..=n {
                    if let Some(row) = self.sl2vl(node.guid.0, port, 0) {
                        lanes.set_port(PortRef { node: id, port }, row);
                    }
                }
            }
        }
        lanes
    }

    /// Every (source LID, destination LID) pair's SL as `SLID DLID SL` lines
    /// ([`crate::io::path_sl`]), what `ibfabric deadlock-check --path-sl` reads: the SA's
    /// answers without asking the SA once per pair. Grows with the square of the LIDs.
    /// `None` when any SL is safe (there is nothing to dump).
    pub fn dump_text(&self) -> Option<String> {
        let sls = self.path_sls.as_ref()?;
        Some(crate::io::path_sl::write_every_pair(&self.lids, sls))
    }
}

/// What a routing's multicast trees are built over.
#[derive(Debug)]
pub struct McastBasis {
    /// The routed fabric.
    pub fabric: Fabric,
    /// Its switch graph.
    pub graph: RoutingGraph,
    /// The cable order of the lanes by port pair, when they are the scheme in force.
    pub order: Option<CableOrder>,
    /// What keeps the unicast routing deadlock-free, for the log of trees no proof covers.
    pub scheme: String,
}
