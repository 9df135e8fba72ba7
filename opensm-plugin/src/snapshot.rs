//! Reading OpenSM's subnet: copies the nodes, ports, cables and LIDs out of `osm->subn` into
//! plain [`NodeRecord`]s, and remembers each switch's `osm_switch_t` for writing back.

use std::collections::HashMap;

use ibfabric::topology::NodeKind;
use opensm_sys::inline::{
    node_physp, physp_base_lid, physp_lmc, physp_remote, physp_vl_cap, qmap_items,
};
use opensm_sys::{
    IB_NODE_TYPE_CA, IB_NODE_TYPE_ROUTER, IB_NODE_TYPE_SWITCH, osm_node_t, osm_opensm_t,
    osm_switch_t,
};

use crate::subnet::{NodeRecord, PortRecord};

/// Why the subnet could not be copied.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SnapshotError {
    /// A node whose NodeInfo.NodeType is none of CA, switch, router: routing it as any of them
    /// could send traffic the wrong way, so the plugin leaves the subnet to OpenSM's next
    /// engine.
    #[error(
        "node {guid:#018x} has unknown node type {node_type} (expected 1 CA, 2 switch, 3 router)"
    )]
    UnknownNodeType {
        /// Node GUID (host order).
        guid: u64,
        /// NodeInfo.NodeType.
        node_type: u8,
    },
}

/// The node kind of a NodeInfo.NodeType; `None` for a value that is none of the three.
pub(crate) fn node_kind(node_type: u8) -> Option<NodeKind> {
    match u32::from(node_type) {
        IB_NODE_TYPE_SWITCH => Some(NodeKind::Switch),
        IB_NODE_TYPE_ROUTER => Some(NodeKind::Router),
        IB_NODE_TYPE_CA => Some(NodeKind::Ca),
        _ => None,
    }
}

/// The subnet's nodes, and the switch object of each switch record (null for the others).
pub(crate) struct Snapshot {
    pub records: Vec<NodeRecord>,
    pub switches: Vec<*mut osm_switch_t>,
}

/// Copies the subnet.
///
/// # Errors
/// A node of unknown type.
///
/// # Safety
/// `osm` must be the daemon's `osm_opensm_t`, and the call must happen inside a routing
/// callback (OpenSM holds its lock exclusively there: osm_ucast_mgr_process), so that the maps
/// and nodes stay as they are while they are read.
pub(crate) unsafe fn take(osm: *mut osm_opensm_t) -> Result<Snapshot, SnapshotError> {
    let mut nodes: Vec<*mut osm_node_t> = Vec::new();
    // SAFETY: `osm->subn.node_guid_tbl` is an initialised qmap of `osm_node_t`s, whose first
    // member is the map item (osm_node.h:98); unchanged during the callback (caller).
    for item in unsafe { qmap_items(&raw const (*osm).subn.node_guid_tbl) } {
        nodes.push(item.cast::<osm_node_t>());
    }
    let index: HashMap<*mut osm_node_t, usize> =
        nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut records = Vec::with_capacity(nodes.len());
    let mut switches = Vec::with_capacity(nodes.len());
    for &node in &nodes {
        // SAFETY: `node` is a live node of the map (above).
        let (info, sw, size) = unsafe { ((*node).node_info, (*node).sw, (*node).physp_tbl_size) };
        let kind = node_kind(info.node_type).ok_or(SnapshotError::UnknownNodeType {
            guid: u64::from_be(info.node_guid),
            node_type: info.node_type,
        })?;
        // SAFETY: `node_desc.description` is a 64-byte array inside the live node.
        let description = unsafe { (*node).node_desc.description };
        let end = description
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(description.len());
        let description = String::from_utf8_lossy(&description[..end]).into_owned();
        let mut ports = Vec::with_capacity(size as usize);
        for p in 0..size {
            // SAFETY: `node` is live; `node_physp` checks `p` against the table size.
            let Some(physp) = (unsafe { node_physp(node, p) }) else {
                ports.push(None);
                continue;
            };
            // SAFETY: `physp` is a valid port of a live node; its remote, if any, is a port
            // of another node of the subnet (osm_port.h: p_remote_physp).
            let remote = unsafe { physp_remote(physp) }.and_then(|r| {
                // SAFETY: as above.
                let (remote_node, remote_port, remote_guid) =
                    unsafe { ((*r).p_node, (*r).port_num, (*r).port_guid) };
                (remote_guid != 0)
                    .then(|| index.get(&remote_node).map(|&i| (i, remote_port)))
                    .flatten()
            });
            // SAFETY: `physp` is valid (above).
            let (guid, lid, lmc, vl_cap) = unsafe {
                (
                    (*physp).port_guid,
                    physp_base_lid(physp),
                    physp_lmc(physp),
                    physp_vl_cap(physp),
                )
            };
            // SAFETY: as above; plain bytes of the port's PortInfo.
            let (width_active, link_speed, link_speed_ext) = unsafe {
                let info = &(*physp).port_info;
                (info.link_width_active, info.link_speed, info.link_speed_ext)
            };
            ports.push(Some(PortRecord {
                guid: u64::from_be(guid),
                lid,
                lmc,
                vl_cap,
                width_active,
                // LinkSpeedActive and LinkSpeedExtActive are the high nibbles (iba/ib_types.h:
                // ib_port_info_get_link_speed_active, ib_port_info_get_link_speed_ext_active).
                speed_active: link_speed >> 4,
                speed_ext_active: link_speed_ext >> 4,
                remote,
            }));
        }
        records.push(NodeRecord {
            kind,
            guid: u64::from_be(info.node_guid),
            description,
            ports,
        });
        switches.push(if kind == NodeKind::Switch {
            sw
        } else {
            std::ptr::null_mut()
        });
    }
    Ok(Snapshot { records, switches })
}

#[cfg(test)]
mod tests {
    use std::alloc::{Layout, alloc_zeroed, dealloc};

    use opensm_sys::osm_physp_t;

    use super::*;
    use crate::subnet::build_fabric;

    /// A zeroed `osm_node_t` with `ports` physical ports (+ port 0) in its trailing table.
    struct OwnedNode {
        ptr: *mut osm_node_t,
        layout: Layout,
    }

    impl OwnedNode {
        fn new(node_type: u32, guid: u64, ports: u8) -> Self {
            let size = std::mem::size_of::<osm_node_t>()
                + usize::from(ports) * std::mem::size_of::<osm_physp_t>();
            let layout = Layout::from_size_align(size, std::mem::align_of::<osm_node_t>()).unwrap();
            // SAFETY: non-zero size; all-zero bytes are a valid osm_node_t and osm_physp_t
            // (integers, raw pointers, `None` function pointers).
            let ptr = unsafe { alloc_zeroed(layout) }.cast::<osm_node_t>();
            assert!(!ptr.is_null());
            // SAFETY: `ptr` is a fresh, zeroed allocation of the right size.
            unsafe {
                (*ptr).node_info.node_type = node_type as u8;
                (*ptr).node_info.num_ports = ports;
                (*ptr).node_info.node_guid = guid.to_be();
                (*ptr).physp_tbl_size = u32::from(ports) + 1;
            }
            Self { ptr, layout }
        }

        fn physp(&self, port: u8) -> *mut osm_physp_t {
            // SAFETY: `port` is within the table allocated in `new` (callers pass valid ports).
            unsafe {
                (&raw mut (*self.ptr).physp_table)
                    .cast::<osm_physp_t>()
                    .add(usize::from(port))
            }
        }

        /// Makes `port` valid with a GUID, LID and LMC.
        fn set_port(&self, port: u8, guid: u64, lid: u16, lmc: u8) {
            let physp = self.physp(port);
            // SAFETY: `physp` points into this node's table.
            unsafe {
                (*physp).port_guid = guid.to_be();
                (*physp).port_num = port;
                (*physp).p_node = self.ptr;
                (*physp).port_info.base_lid = lid.to_be();
                (*physp).port_info.mkey_lmc = lmc;
            }
        }
    }

    impl Drop for OwnedNode {
        fn drop(&mut self) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.ptr.cast(), self.layout) };
        }
    }

    fn cable(a: &OwnedNode, pa: u8, b: &OwnedNode, pb: u8) {
        // SAFETY: both ports point into live tables.
        unsafe {
            (*a.physp(pa)).p_remote_physp = b.physp(pb);
            (*b.physp(pb)).p_remote_physp = a.physp(pa);
        }
    }

    /// A daemon whose subnet's node map holds `nodes`, in this order.
    struct Subnet(Box<osm_opensm_t>);

    impl Subnet {
        fn as_ptr(&mut self) -> *mut osm_opensm_t {
            &raw mut *self.0
        }
    }

    fn subnet(nodes: &[&OwnedNode]) -> Subnet {
        // SAFETY: all-zero is a valid osm_opensm_t for the fields `take` reads (the node map,
        // linked below).
        let mut osm: Box<osm_opensm_t> = unsafe { Box::new_zeroed().assume_init() };
        let map = &raw mut osm.subn.node_guid_tbl;
        // SAFETY: `map` points into `osm`.
        let nil = unsafe { &raw mut (*map).nil.pool_item.list_item };
        let mut last = nil;
        for node in nodes {
            // SAFETY: the map item is the first member of the live node (osm_node.h:98), and
            // `last` is the map's nil item or the item of the node linked before.
            unsafe {
                let item = &raw mut (*node.ptr).map_item.pool_item.list_item;
                (*last).p_next = item;
                last = item;
            }
        }
        // SAFETY: as above.
        unsafe { (*last).p_next = nil };
        Subnet(osm)
    }

    #[test]
    fn only_the_three_node_types_of_nodeinfo_have_a_kind() {
        for node_type in 0..=u8::MAX {
            let expected = match u32::from(node_type) {
                IB_NODE_TYPE_CA => Some(NodeKind::Ca),
                IB_NODE_TYPE_SWITCH => Some(NodeKind::Switch),
                IB_NODE_TYPE_ROUTER => Some(NodeKind::Router),
                _ => None,
            };
            assert_eq!(node_kind(node_type), expected, "{node_type}");
        }
    }

    #[test]
    fn a_node_of_unknown_type_is_an_error_naming_it_not_a_ca() {
        let switch = OwnedNode::new(IB_NODE_TYPE_SWITCH, 0x10, 2);
        let odd = OwnedNode::new(7, 0x40, 1);
        switch.set_port(0, 0x10, 1, 0);
        switch.set_port(1, 0x10, 1, 0);
        odd.set_port(1, 0x41, 2, 0);
        cable(&switch, 1, &odd, 1);
        let mut osm = subnet(&[&switch, &odd]);
        // SAFETY: `osm` holds a consistent node map of live nodes, unchanged during the call.
        let err = unsafe { take(osm.as_ptr()) }.err();
        assert_eq!(
            err,
            Some(SnapshotError::UnknownNodeType {
                guid: 0x40,
                node_type: 7
            })
        );
    }

    #[test]
    fn snapshot_reads_nodes_ports_cables_and_lids() {
        // Two switches (GUIDs 0x20 > 0x10, in map order 0x20 first), cabled on port 1, and a
        // host on switch 0x10 port 2; switch 0x10 port 3 is not valid.
        let sw_b = OwnedNode::new(IB_NODE_TYPE_SWITCH, 0x20, 3);
        let sw_a = OwnedNode::new(IB_NODE_TYPE_SWITCH, 0x10, 3);
        let host = OwnedNode::new(IB_NODE_TYPE_CA, 0x30, 1);
        sw_a.set_port(0, 0x10, 1, 0);
        sw_a.set_port(1, 0x10, 1, 0);
        sw_a.set_port(2, 0x10, 1, 0);
        sw_b.set_port(0, 0x20, 2, 0);
        sw_b.set_port(1, 0x20, 2, 0);
        host.set_port(1, 0x31, 4, 2);
        cable(&sw_a, 1, &sw_b, 1);
        cable(&sw_a, 2, &host, 1);

        let mut osm = subnet(&[&sw_b, &sw_a, &host]);
        // SAFETY: `osm` holds a consistent node map of live nodes, unchanged during the call.
        let snapshot = unsafe { take(osm.as_ptr()) }.unwrap();
        let records = &snapshot.records;
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].guid, 0x20);
        assert_eq!(records[0].kind, NodeKind::Switch);
        assert_eq!(records[2].kind, NodeKind::Ca);
        assert!(records[2].ports[0].is_none(), "a CA's port 0 is not valid");
        let a = &records[1];
        assert_eq!(a.ports.len(), 4);
        assert!(a.ports[3].is_none());
        assert_eq!(a.ports[1].as_ref().unwrap().remote, Some((0, 1)));
        assert_eq!(a.ports[2].as_ref().unwrap().remote, Some((2, 1)));
        let h = records[2].ports[1].as_ref().unwrap();
        assert_eq!((h.guid, h.lid, h.lmc, h.remote), (0x31, 4, 2, Some((1, 2))));
        assert!(
            snapshot.switches.iter().all(|s| s.is_null()),
            "no switch objects here"
        );

        let (fabric, order) = build_fabric("test", records).unwrap();
        assert_eq!(order, vec![1, 0, 2], "switches by GUID, then the host");
        let summary = fabric.summary();
        assert_eq!((summary.switches, summary.hosts), (2, 1));
        assert_eq!((summary.switch_links, summary.host_links), (1, 1));
    }
}
