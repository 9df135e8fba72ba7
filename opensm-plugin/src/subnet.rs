//! The subnet as plain records (a copy of OpenSM's, no pointers) and the [`Fabric`] built from
//! them in a canonical order, so that the same subnet always routes the same way. Nothing here
//! touches C; it is unit-tested without OpenSM. The routing itself is the core's
//! (`ibfabric::session`).

use ibfabric::Fabric;
use ibfabric::session::data_vls;
use ibfabric::topology::{
    FabricError, Guid, LinkSpeed, LinkWidth, NodeKind, NodeSpec, PortRef, link_rate,
};
use serde::{Deserialize, Serialize};

/// One node of the subnet as OpenSM knows it (saved across restarts as JSON:
/// [`crate::saved_session`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// Switch, CA or router.
    #[serde(with = "kind_name")]
    pub kind: NodeKind,
    /// Node GUID (host order).
    pub guid: u64,
    /// NodeDescription.
    pub description: String,
    /// Ports 0..=num_ports (`None` for a port OpenSM has no valid record of).
    pub ports: Vec<Option<PortRecord>>,
}

/// One physical port of a [`NodeRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRecord {
    /// Port GUID (host order).
    pub guid: u64,
    /// Base LID (host order; 0 if unassigned).
    pub lid: u16,
    /// LMC.
    pub lmc: u8,
    /// VLCap as PortInfo encodes it (1: VL0, 2: VL0–1, 3: VL0–3, 4: VL0–7, 5: VL0–14; 0 if
    /// unknown); see [`data_vls`].
    pub vl_cap: u8,
    /// PortInfo LinkWidthActive (1: 1x, 2: 4x, 4: 8x, 8: 12x, 16: 2x; 0 if unknown).
    pub width_active: u8,
    /// PortInfo LinkSpeedActive (1: SDR, 2: DDR, 4: QDR; 0 if unknown).
    pub speed_active: u8,
    /// PortInfo LinkSpeedExtActive (1: FDR, 2: EDR, 4: HDR, 8: NDR; 0: none), which overrides
    /// LinkSpeedActive when set.
    pub speed_ext_active: u8,
    /// The port at the other end of the cable: (record index, port number).
    pub remote: Option<(usize, u8)>,
}

/// A node kind as the word ibnetdiscover uses for it (`Switch`, `Ca`, `Rt`), so that the saved
/// file does not depend on the core's enum.
mod kind_name {
    use ibfabric::topology::NodeKind;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(kind: &NodeKind, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(match kind {
            NodeKind::Switch => "Switch",
            NodeKind::Ca => "Ca",
            NodeKind::Router => "Rt",
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<NodeKind, D::Error> {
        match String::deserialize(input)?.as_str() {
            "Switch" => Ok(NodeKind::Switch),
            "Ca" => Ok(NodeKind::Ca),
            "Rt" => Ok(NodeKind::Router),
            other => Err(D::Error::custom(format!(
                "node kind \"{other}\" (expected Switch, Ca or Rt)"
            ))),
        }
    }
}

/// Why the records do not make a fabric.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    /// The records do not make a fabric.
    #[error("subnet snapshot: {0}")]
    Fabric(#[from] FabricError),
    /// A port number beyond what OpenSM said the node has.
    #[error("node {guid:#018x} port {port}: {what}")]
    BadPort {
        /// Node GUID.
        guid: u64,
        /// Port.
        port: u8,
        /// What is wrong.
        what: &'static str,
    },
}

/// The canonical fabric of a snapshot: switches sorted by node GUID, then CAs and routers
/// sorted by node GUID. Routing depends on the switch order, so the same subnet always routes
/// the same way whatever order OpenSM discovered it in (and a test can rebuild it from
/// `ibnetdiscover`). Returns the fabric and, for each fabric node, its record index.
///
/// # Errors
/// Duplicate GUIDs or cables to ports that do not exist.
pub fn build_fabric(
    name: &str,
    records: &[NodeRecord],
) -> Result<(Fabric, Vec<usize>), RecordsError> {
    let order = canonical_order(records);
    let mut node_of = vec![None; records.len()];
    let mut fabric = Fabric::new(name);
    for &i in &order {
        let r = &records[i];
        let num_ports =
            u8::try_from(r.ports.len().saturating_sub(1)).map_err(|_| RecordsError::BadPort {
                guid: r.guid,
                port: u8::MAX,
                what: "more than 255 ports",
            })?;
        let id = fabric.add_node(NodeSpec {
            kind: r.kind,
            name: format!("{}-{:016x}", r.kind.id_prefix(), r.guid),
            description: r.description.clone(),
            guid: Guid(r.guid),
            num_ports,
            rack: None,
        })?;
        node_of[i] = Some(id);
        let node = fabric.node_mut(id);
        for (p, port) in r.ports.iter().enumerate() {
            if let Some(port) = port {
                let slot = &mut node.ports[p];
                slot.guid = Guid(port.guid);
                slot.lid = port.lid;
                slot.lmc = port.lmc;
            }
        }
    }
    for &i in &order {
        let r = &records[i];
        let a_node = node_of[i].expect("every record has a node");
        for (p, port) in r.ports.iter().enumerate().skip(1) {
            let Some((remote, remote_port)) = port.as_ref().and_then(|port| port.remote) else {
                continue;
            };
            let Some(b_node) = node_of.get(remote).copied().flatten() else {
                continue;
            };
            let a = PortRef {
                node: a_node,
                port: p as u8,
            };
            let b = PortRef {
                node: b_node,
                port: remote_port,
            };
            // Each cable is seen from both ends: add it from the smaller end.
            if (a.node, a.port) < (b.node, b.port) {
                if remote_port == 0 {
                    return Err(RecordsError::BadPort {
                        guid: records[remote].guid,
                        port: 0,
                        what: "cable on port 0",
                    });
                }
                if usize::from(remote_port) >= records[remote].ports.len() {
                    return Err(RecordsError::BadPort {
                        guid: records[remote].guid,
                        port: remote_port,
                        what: "cable to a port the node does not have",
                    });
                }
                let rate = |record: &NodeRecord, port: usize| {
                    record.ports[port]
                        .as_ref()
                        .map_or((None, None), PortRecord::rate)
                };
                let (wa, sa) = rate(r, p);
                let (wb, sb) = rate(&records[remote], usize::from(remote_port));
                fabric.connect(a, b, link_rate(wa, wb), link_rate(sa, sb))?;
            }
        }
    }
    let fabric_order = {
        let mut v = vec![0; records.len()];
        for (i, id) in node_of.iter().enumerate() {
            if let Some(id) = id {
                v[id.index()] = i;
            }
        }
        v
    };
    Ok((fabric, fabric_order))
}

impl PortRecord {
    /// The width and speed the link runs at, as this port reports them.
    pub fn rate(&self) -> (Option<LinkWidth>, Option<LinkSpeed>) {
        (
            LinkWidth::from_portinfo_bit(self.width_active.into()),
            LinkSpeed::from_portinfo_bits(self.speed_active.into(), self.speed_ext_active.into()),
        )
    }
}

/// Record indexes in canonical order: switches by node GUID, then the other nodes by node GUID.
fn canonical_order(records: &[NodeRecord]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (records[i].kind != NodeKind::Switch, records[i].guid));
    order
}

/// The records in canonical order with their cable ends renumbered to match: two snapshots of
/// the same subnet are equal whatever order OpenSM discovered it in (the plugin compares them
/// to skip routing an unchanged subnet again).
pub fn canonical_records(records: &[NodeRecord]) -> Vec<NodeRecord> {
    let order = canonical_order(records);
    let mut position = vec![usize::MAX; records.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new;
    }
    order
        .iter()
        .map(|&i| {
            let mut record = records[i].clone();
            for port in record.ports.iter_mut().flatten() {
                if let Some((remote, _)) = &mut port.remote {
                    *remote = position.get(*remote).copied().unwrap_or(usize::MAX);
                }
            }
            record
        })
        .collect()
}

/// The data VLs every cabled port of the snapshot supports (ports that report no VLCap are
/// left out); `None` when no port reports one.
pub fn common_vls(records: &[NodeRecord]) -> Option<u8> {
    records
        .iter()
        .flat_map(|r| r.ports.iter().flatten())
        .filter(|p| p.remote.is_some())
        .map(|p| data_vls(p.vl_cap))
        .filter(|&v| v > 0)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibfabric::deadlock::Shortage;
    use ibfabric::options::DeadlockMode;
    use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig, assign_lids};
    use ibfabric::session::{DeadlockSettings, RouteError, route};
    use ibfabric::topology::{NodeId, TopologySpec};

    /// The records OpenSM would hold for `fabric` (with LIDs), in a scrambled order.
    fn records_of(fabric: &Fabric) -> Vec<NodeRecord> {
        let n = fabric.nodes().len();
        // Reverse order: the canonical sort must undo it.
        let position = |id: NodeId| n - 1 - id.index();
        let mut records = vec![None; n];
        for (i, node) in fabric.nodes().iter().enumerate() {
            let id = NodeId(i as u32);
            let ports = node
                .ports
                .iter()
                .enumerate()
                .map(|(p, port)| {
                    let record = PortRecord {
                        guid: port.guid.0,
                        lid: port.lid,
                        lmc: port.lmc,
                        vl_cap: 4,
                        width_active: 2,
                        speed_active: 4,
                        speed_ext_active: 2,
                        remote: fabric
                            .peer(PortRef {
                                node: id,
                                port: p as u8,
                            })
                            .map(|peer| (position(peer.node), peer.port)),
                    };
                    // A CA has no port 0.
                    (p != 0 || node.is_switch()).then_some(record)
                })
                .collect();
            records[position(id)] = Some(NodeRecord {
                kind: node.kind,
                guid: node.guid.0,
                description: node.description.clone(),
                ports,
            });
        }
        records.into_iter().map(Option::unwrap).collect()
    }

    fn config(layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        }
    }

    fn no_deadlock_scheme() -> DeadlockSettings {
        DeadlockSettings {
            mode: DeadlockMode::None,
            vls: 8,
            shortage: Shortage::Fail,
        }
    }

    fn slim_fly_q5() -> Fabric {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let mut fabric = spec.build().unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        fabric
    }

    #[test]
    fn snapshot_round_trip_keeps_nodes_cables_and_lids() {
        let fabric = slim_fly_q5();
        let (rebuilt, order) = build_fabric("snapshot", &records_of(&fabric)).unwrap();
        assert_eq!(rebuilt.summary(), fabric.summary());
        assert_eq!(order.len(), fabric.nodes().len());
        for node in fabric.nodes() {
            let id = rebuilt.node_by_guid(node.guid).unwrap();
            let copy = rebuilt.node(id);
            assert_eq!(copy.kind, node.kind);
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                assert_eq!(copy.ports[p].lid, port.lid);
                assert_eq!(copy.ports[p].lmc, port.lmc);
                assert_eq!(copy.ports[p].link.is_some(), port.link.is_some());
            }
        }
        // Switches first, ascending GUID.
        let guids: Vec<u64> = rebuilt.switches().map(|s| rebuilt.node(s).guid.0).collect();
        assert!(guids.is_sorted());
        assert_eq!(
            rebuilt.switches().last().unwrap().index() + 1,
            guids.len(),
            "switches come first"
        );
    }

    #[test]
    fn port_rates_decode_as_portinfo_encodes_them() {
        let port = |w, s, e| PortRecord {
            guid: 1,
            lid: 1,
            lmc: 0,
            vl_cap: 4,
            width_active: w,
            speed_active: s,
            speed_ext_active: e,
            remote: None,
        };
        assert_eq!(
            port(2, 4, 2).rate(),
            (Some(LinkWidth::X4), Some(LinkSpeed::Edr))
        );
        assert_eq!(
            port(1, 1, 0).rate(),
            (Some(LinkWidth::X1), Some(LinkSpeed::Sdr))
        );
        assert_eq!(
            port(16, 4, 4).rate(),
            (Some(LinkWidth::X2), Some(LinkSpeed::Hdr))
        );
        assert_eq!(port(0, 0, 0).rate(), (None, None));
    }

    #[test]
    fn same_subnet_routes_the_same_whatever_the_discovery_order() {
        let fabric = slim_fly_q5();
        let mut records = records_of(&fabric);
        let a = route(
            build_fabric("a", &records).unwrap().0,
            &config(4),
            &no_deadlock_scheme(),
        )
        .unwrap();
        // Rotate the records (fixing up the remote indexes).
        let n = records.len();
        records.rotate_left(7);
        for r in &mut records {
            for port in r.ports.iter_mut().flatten() {
                if let Some((i, _)) = &mut port.remote {
                    *i = (*i + n - 7) % n;
                }
            }
        }
        assert_eq!(
            canonical_records(&records),
            canonical_records(&records_of(&fabric)),
            "the same subnet in another order has the same canonical records"
        );
        let b = route(
            build_fabric("b", &records).unwrap().0,
            &config(4),
            &no_deadlock_scheme(),
        )
        .unwrap();
        assert_eq!(a.switches, b.switches);
    }

    #[test]
    fn conflicting_lids_are_an_error() {
        let mut fabric = slim_fly_q5();
        let host = fabric.hosts().next().unwrap();
        fabric.node_mut(host).ports[1].lid = 1; // a switch's LID
        let (fabric, _) = build_fabric("conflict", &records_of(&fabric)).unwrap();
        assert!(matches!(
            route(fabric, &config(4), &no_deadlock_scheme()),
            Err(RouteError::Lids(_))
        ));
    }

    #[test]
    fn a_cable_to_a_port_the_peer_does_not_have_is_an_error() {
        let fabric = slim_fly_q5();
        let mut records = records_of(&fabric);
        // A host record (one port) named as the far end of a cable on its port 2, as a
        // corrupt saved session can: refused, not an index out of bounds.
        let host = records.iter().position(|r| r.kind == NodeKind::Ca).unwrap();
        let switch_port = records
            .iter()
            .flat_map(|r| r.ports.iter().flatten())
            .position(|p| p.remote.is_some_and(|(node, _)| node == host))
            .unwrap();
        let port = records
            .iter_mut()
            .flat_map(|r| r.ports.iter_mut().flatten())
            .nth(switch_port)
            .unwrap();
        port.remote = Some((host, 2));
        assert!(matches!(
            build_fabric("corrupt", &records),
            Err(RecordsError::BadPort { port: 2, .. })
        ));
    }
}
