//! The C side of the multicast trees: a group's member ports read out of OpenSM's
//! `osm_mgrp_box_t`, and the tree's entries set in the switches' multicast forwarding tables,
//! as OpenSM's own builder sets them (osm_mcast_mgr.c: `mcast_mgr_branch` calls
//! `osm_mcast_tbl_set` for each tree port, after `mcast_mgr_process_mlid` cleared the MLID on
//! every switch; `mcast_mgr_set_mftables` then sends the blocks).

use std::collections::HashMap;
use std::mem::offset_of;

use opensm_sys::inline::{qlist_items, qmap_items};
use opensm_sys::{
    IB_LID_MCAST_START_HO, osm_mcast_tbl_set, osm_mcm_port_t, osm_mgrp_box_t, osm_mgrp_t,
    osm_opensm_t, osm_switch_t,
};

use ibfabric::session::McastBasis;

use crate::multicast::{Groups, MemberRecord, Programmed};
use crate::snapshot;
use crate::subnet::build_fabric;

/// The MLID (host order) and member ports of a group box: every port of every group sharing
/// the MLID, each port once (as `osm_mcast_make_port_list_and_map` lists them).
///
/// # Safety
/// `mbox` must be the live box OpenSM passes to `mcast_build_stree`, read under its lock
/// (osm_mcast_mgr.c: `osm_mcast_mgr_process` holds it exclusively).
pub(crate) unsafe fn members(mbox: *const osm_mgrp_box_t) -> (u16, Vec<MemberRecord>) {
    let mut records = Vec::new();
    // SAFETY: `mbox` is live (caller); `mlid` is in host order (osm_multicast.h).
    let mlid = unsafe { (*mbox).mlid };
    // SAFETY: `mgrp_list` is an initialised list of the groups' `list_item`s (osm_multicast.c:
    // osm_mgrp_box_new, osm_mgrp_new), unchanged under the lock.
    for item in unsafe { qlist_items(&raw const (*mbox).mgrp_list) } {
        // SAFETY: the item is the `list_item` member of an `osm_mgrp_t` (`cl_item_obj`).
        let mgrp = unsafe { item.byte_sub(offset_of!(osm_mgrp_t, list_item)) }.cast::<osm_mgrp_t>();
        // SAFETY: `mcm_port_tbl` is the group's initialised map of `osm_mcm_port_t`s, whose
        // first member is the map item (osm_mcm_port.h).
        for entry in unsafe { qmap_items(&raw const (*mgrp).mcm_port_tbl) } {
            let mcm = entry.cast::<osm_mcm_port_t>();
            // SAFETY: `mcm` is a live member record; its port, node and physical port are the
            // subnet's live objects (a port leaves its groups before it is freed).
            let record = unsafe {
                let port = (*mcm).port;
                if port.is_null() || (*port).p_node.is_null() || (*port).p_physp.is_null() {
                    continue;
                }
                MemberRecord {
                    port_guid: u64::from_be((*port).guid),
                    node_guid: u64::from_be((*(*port).p_node).node_info.node_guid),
                    port: (*(*port).p_physp).port_num,
                }
            };
            records.push(record);
        }
    }
    (mlid, records)
}

/// Whether OpenSM has a group box for `mlid`: a group it deleted has none (and no rows).
///
/// # Safety
/// `osm` must be the daemon's, read under its lock.
pub(crate) unsafe fn exists(osm: *mut osm_opensm_t, mlid: u16) -> bool {
    let Some(index) = u32::from(mlid).checked_sub(IB_LID_MCAST_START_HO) else {
        return false;
    };
    // SAFETY: `mboxes` is the subnet's array of group boxes by MLID offset (osm_subnet.h),
    // read under the lock (caller); the index is checked against its length.
    unsafe {
        let boxes = &(*osm).subn.mboxes;
        boxes.get(index as usize).is_some_and(|b| !b.is_null())
    }
}

/// Sets `entries` (per switch node GUID, the ports of the MLID's entry) in the switches'
/// multicast tables, after checking them all: nothing is set unless everything can be.
///
/// # Errors
/// A switch that is gone, does not do multicast, or whose table has no row for the MLID or
/// fewer ports.
///
/// # Safety
/// `osm` must be the daemon's, called from `mcast_build_stree` under OpenSM's lock.
pub(crate) unsafe fn set(
    osm: *mut osm_opensm_t,
    mlid: u16,
    entries: &[(u64, Vec<u8>)],
) -> Result<(), String> {
    let mut switches: HashMap<u64, *mut osm_switch_t> = HashMap::new();
    // SAFETY: `sw_guid_tbl` is the subnet's initialised map of `osm_switch_t`s, whose first
    // member is the map item (osm_switch.h); unchanged under the lock (caller).
    for item in unsafe { qmap_items(&raw const (*osm).subn.sw_guid_tbl) } {
        let sw = item.cast::<osm_switch_t>();
        // SAFETY: a live switch of the map; its node is live while the switch is.
        let guid = unsafe { u64::from_be((*(*sw).p_node).node_info.node_guid) };
        switches.insert(guid, sw);
    }
    let mut targets = Vec::with_capacity(entries.len());
    for (guid, ports) in entries {
        let sw = *switches
            .get(guid)
            .ok_or_else(|| format!("switch {guid:#018x} is not in the subnet"))?;
        // SAFETY: live switch (above); plain fields.
        let (mcast_cap, table, max_mlid, num_ports) = unsafe {
            (
                (*sw).switch_info.mcast_cap,
                (*sw).mcast_tbl.p_mask_tbl,
                (*sw).mcast_tbl.max_mlid_ho,
                (*sw).num_ports,
            )
        };
        if mcast_cap == 0 {
            return Err(format!("switch {guid:#018x} does not support multicast"));
        }
        if table.is_null() || u32::from(mlid) < IB_LID_MCAST_START_HO || mlid > max_mlid {
            return Err(format!(
                "switch {guid:#018x} has no multicast table row for MLID {mlid:#06x}"
            ));
        }
        if let Some(&port) = ports.iter().find(|&&p| p >= num_ports) {
            return Err(format!("switch {guid:#018x} has no port {port}"));
        }
        targets.push(sw);
    }
    for (&sw, (_, ports)) in targets.iter().zip(entries) {
        for &port in ports {
            // SAFETY: live switch whose table has a row for `mlid` and `port` below its port
            // count (checked above); OpenSM's own setter, as its builder calls it.
            unsafe { osm_mcast_tbl_set(&raw mut (*sw).mcast_tbl, mlid, port) };
        }
    }
    Ok(())
}

/// A shortest-path tree over a fresh snapshot of the subnet, no deadlock proof claimed: the
/// tree of a group when the routing in force cannot give one.
///
/// # Safety
/// `osm` is the daemon's, read under its lock (`mcast_build_stree`).
pub(crate) unsafe fn plain_tree(
    osm: *mut osm_opensm_t,
    mlid: u16,
    members: &[MemberRecord],
    why: &str,
) -> Result<Programmed, String> {
    // SAFETY: as the caller's.
    let snapshot = unsafe { snapshot::take(osm) }.map_err(|e| e.to_string())?;
    let (fabric, _) = build_fabric("opensm", &snapshot.records).map_err(|e| e.to_string())?;
    let graph = ibfabric::routing::graph::RoutingGraph::new(&fabric);
    let basis = McastBasis {
        fabric,
        graph,
        order: None,
        scheme: format!("plain shortest-path tree: {why}"),
    };
    Groups::default().program(&basis, mlid, members)
}
