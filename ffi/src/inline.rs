//! The `static inline` accessors of the OpenSM and complib headers that the plugin uses,
//! re-implemented in Rust (bindgen does not bind inline functions). Each names the header line
//! it mirrors (Debian's libopensm-dev 3.3.23).

use crate::{
    cl_list_item_t, cl_map_item_t, cl_qlist_t, cl_qmap_t, ib_slvl_table_t, osm_node_t, osm_physp_t,
};

/// `IB_PORT_LMC_MASK` (`iba/ib_types.h`): the LMC bits of `ib_port_info_t::mkey_lmc`.
const IB_PORT_LMC_MASK: u8 = 0x07;

/// The items of a `cl_qmap_t` in key order, as raw pointers to their `cl_map_item_t`, which is
/// the first member of `osm_switch_t`, `osm_node_t` and `osm_port_t` (so a pointer to the item
/// is a pointer to the object).
///
/// Mirrors `cl_qmap_head` (complib/cl_qmap.h:524), `cl_qmap_next` (:596) and `cl_qmap_end`
/// (:486): the items form a list threaded through `pool_item.list_item`, ending at `nil`.
///
/// # Safety
/// `map` must point at an initialised `cl_qmap_t` that nobody modifies while the iterator is
/// used (OpenSM holds its lock around the routing callbacks).
pub unsafe fn qmap_items(map: *const cl_qmap_t) -> impl Iterator<Item = *mut cl_map_item_t> {
    // SAFETY: `map` is valid (caller); taking the address of a field reads nothing.
    let end: *const cl_map_item_t = unsafe { &raw const (*map).nil };
    // SAFETY: as above; `nil.pool_item.list_item.p_next` is the head (cl_qmap.h:528).
    let mut item = unsafe { (*map).nil.pool_item.list_item.p_next }.cast::<cl_map_item_t>();
    std::iter::from_fn(move || {
        if item.cast_const() == end {
            return None;
        }
        let current = item;
        // SAFETY: `current` is an item of the live map (not `nil`), whose list link points at
        // the next item or back at `nil` (cl_qmap.h:599).
        item = unsafe { (*current).pool_item.list_item.p_next }.cast::<cl_map_item_t>();
        Some(current)
    })
}

/// The items of a `cl_qlist_t` in list order, as raw pointers to their `cl_list_item_t`
/// (which the caller turns into its object with the item's offset, as `cl_item_obj` does).
///
/// Mirrors `cl_qlist_head` (complib/cl_qlist.h:614), `cl_qlist_next` (:538) and
/// `cl_qlist_end` (:689): the items form a ring through `end`.
///
/// # Safety
/// `list` must point at an initialised `cl_qlist_t` that nobody modifies while the iterator
/// is used (OpenSM holds its lock around the routing and multicast callbacks).
pub unsafe fn qlist_items(list: *const cl_qlist_t) -> impl Iterator<Item = *mut cl_list_item_t> {
    // SAFETY: `list` is valid (caller); taking the address of a field reads nothing.
    let end: *const cl_list_item_t = unsafe { &raw const (*list).end };
    // SAFETY: as above; `end.p_next` is the head (cl_qlist.h:621).
    let mut item = unsafe { (*list).end.p_next };
    std::iter::from_fn(move || {
        if item.cast_const() == end {
            return None;
        }
        let current = item;
        // SAFETY: `current` is an item of the live list (not `end`), whose link points at
        // the next item or back at `end` (cl_qlist.h:538).
        item = unsafe { (*current).p_next };
        Some(current)
    })
}

/// `osm_node_get_physp_ptr` (opensm/osm_node.h:217): the physical port `port_num` of a node,
/// or `None` when the number is out of the table or the port is not valid
/// (`osm_physp_is_valid`, opensm/osm_port.h:326: a zero port GUID).
///
/// # Safety
/// `node` must point at a live `osm_node_t` (whose `physp_table` has `physp_tbl_size` entries).
pub unsafe fn node_physp(node: *mut osm_node_t, port_num: u32) -> Option<*mut osm_physp_t> {
    // SAFETY: `node` is live (caller).
    let size = unsafe { (*node).physp_tbl_size };
    if port_num >= size {
        return None;
    }
    // SAFETY: `physp_table` is a trailing array of `physp_tbl_size` entries (osm_node.h:106,
    // allocated by osm_node_new); `port_num` is in range.
    let physp = unsafe {
        (&raw mut (*node).physp_table)
            .cast::<osm_physp_t>()
            .add(port_num as usize)
    };
    // SAFETY: `physp` points into the live table.
    (unsafe { (*physp).port_guid } != 0).then_some(physp)
}

/// `osm_physp_get_remote` (opensm/osm_port.h:783): the port at the other end of the cable, if
/// any.
///
/// # Safety
/// `physp` must point at a live `osm_physp_t`.
pub unsafe fn physp_remote(physp: *const osm_physp_t) -> Option<*mut osm_physp_t> {
    // SAFETY: `physp` is live (caller).
    let remote = unsafe { (*physp).p_remote_physp };
    (!remote.is_null()).then_some(remote)
}

/// `osm_physp_get_base_lid` (opensm/osm_port.h:1104) in host order.
///
/// # Safety
/// `physp` must point at a live `osm_physp_t`.
pub unsafe fn physp_base_lid(physp: *const osm_physp_t) -> u16 {
    // SAFETY: `physp` is live (caller); `base_lid` is in network byte order.
    u16::from_be(unsafe { (*physp).port_info.base_lid })
}

/// `ib_port_info_get_lmc` (iba/ib_types.h:6120): the port's LMC.
///
/// # Safety
/// `physp` must point at a live `osm_physp_t`.
pub unsafe fn physp_lmc(physp: *const osm_physp_t) -> u8 {
    // SAFETY: `physp` is live (caller).
    let mkey_lmc = unsafe { (*physp).port_info.mkey_lmc };
    mkey_lmc & IB_PORT_LMC_MASK
}

/// `ib_port_info_get_vl_cap` (iba/ib_types.h:4804): the port's VLCap, the data VLs it
/// supports, encoded (1: VL0, 2: VL0–1, 3: VL0–3, 4: VL0–7, 5: VL0–14).
///
/// # Safety
/// `physp` must point at a live `osm_physp_t`.
pub unsafe fn physp_vl_cap(physp: *const osm_physp_t) -> u8 {
    // SAFETY: `physp` is live (caller).
    let vl_cap = unsafe { (*physp).port_info.vl_cap };
    (vl_cap >> 4) & 0x0F
}

/// `ib_port_info_get_op_vls` (iba/ib_types.h:4860): the port's operational VLs, encoded as
/// VLCap is.
///
/// # Safety
/// `physp` must point at a live `osm_physp_t`.
pub unsafe fn physp_op_vls(physp: *const osm_physp_t) -> u8 {
    // SAFETY: `physp` is live (caller).
    let vl_enforce = unsafe { (*physp).port_info.vl_enforce };
    (vl_enforce >> 4) & 0x0F
}

/// `osm_physp_get_slvl_tbl` (opensm/osm_port.h:670) with `cl_ptr_vector_get`
/// (complib/cl_ptr_vector.h:378): the SL-to-VL table OpenSM holds for packets entering on
/// `in_port` and leaving by `physp`, or `None` past the vector's end (where the C code asserts).
///
/// # Safety
/// `physp` must point at a live, valid `osm_physp_t`.
pub unsafe fn physp_slvl_table(
    physp: *const osm_physp_t,
    in_port: u8,
) -> Option<*const ib_slvl_table_t> {
    // SAFETY: `physp` is live (caller); `slvl_by_port` was initialised with the port
    // (osm_physp_init), `p_ptr_array` has `size` entries.
    unsafe {
        let vector = &(*physp).slvl_by_port;
        let index = usize::from(in_port);
        if index >= vector.size || vector.p_ptr_array.is_null() {
            return None;
        }
        let table = *vector.p_ptr_array.add(index);
        (!table.is_null()).then_some(table.cast::<ib_slvl_table_t>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OSM_VERSION, osm_opensm_t, osm_switch_t};
    use std::mem::{offset_of, size_of};

    #[test]
    fn version_string_is_the_installed_daemons() {
        let version = std::ffi::CStr::from_bytes_with_nul(OSM_VERSION).unwrap();
        assert!(version.to_str().unwrap().starts_with("OpenSM "));
    }

    #[test]
    fn map_item_is_the_first_member_of_the_mapped_objects() {
        assert_eq!(offset_of!(osm_switch_t, map_item), 0);
        assert_eq!(offset_of!(osm_node_t, map_item), 0);
        assert_eq!(offset_of!(crate::osm_port_t, map_item), 0);
    }

    #[test]
    fn opensm_struct_has_the_perfmgr_layout() {
        // With osm_config.h first, ENABLE_OSM_PERF_MGR puts the performance manager between
        // `sa` and `cc`: the struct is far larger than the subnet alone.
        assert!(size_of::<osm_opensm_t>() > size_of::<crate::osm_subn_t>());
        assert!(offset_of!(osm_opensm_t, log) > offset_of!(osm_opensm_t, sa));
    }

    #[test]
    fn empty_qlist_yields_nothing() {
        // SAFETY: cl_qlist_t is plain old data; all-zero is valid before the links are set.
        let mut list: cl_qlist_t = unsafe { std::mem::zeroed() };
        let end = &raw mut list.end;
        list.end.p_next = end;
        list.end.p_prev = end;
        // SAFETY: `list` is initialised as cl_qlist_init leaves it and not modified.
        assert_eq!(unsafe { qlist_items(&list) }.count(), 0);
    }

    #[test]
    fn map_item_is_the_first_member_of_a_member_port() {
        assert_eq!(offset_of!(crate::osm_mcm_port_t, map_item), 0);
    }

    #[test]
    fn empty_qmap_yields_nothing() {
        // A zeroed map whose nil item links to itself, as cl_qmap_init leaves it.
        // SAFETY: cl_qmap_t is plain old data (pointers and integers); all-zero is valid.
        let mut map: cl_qmap_t = unsafe { std::mem::zeroed() };
        let nil = &raw mut map.nil;
        map.nil.pool_item.list_item.p_next = nil.cast();
        map.nil.pool_item.list_item.p_prev = nil.cast();
        // SAFETY: `map` is initialised as above and not modified while iterating.
        assert_eq!(unsafe { qmap_items(&map) }.count(), 0);
    }
}
