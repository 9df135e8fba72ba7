//! The SL-to-VL tables OpenSM holds for a port: whether the row the plugin answers differs
//! from it, so that OpenSM sends a MAD (the plugin counts the SL-to-VL writes a sweep costs).

use opensm_sys::inline::{physp_op_vls, physp_slvl_table};
use opensm_sys::osm_physp_t;

/// Whether OpenSM sends an SL-to-VL MAD for `row` on `port` from `in_port`: unless the port
/// already holds it, with the VLs above the port's operational VLs masked as OpenSM masks them
/// before it compares (osm_qos.c: sl2vl_update_table). A table OpenSM does not hold counts as
/// sent.
///
/// # Safety
/// `port` is a live, valid port, under OpenSM's lock.
pub(crate) unsafe fn holds_other_row(port: *mut osm_physp_t, in_port: u8, row: [u8; 8]) -> bool {
    // SAFETY: as the caller's.
    let (op_vls, held) = unsafe { (physp_op_vls(port), physp_slvl_table(port, in_port)) };
    let mask = match op_vls {
        0 => 0,
        v => (1u8 << (v - 1)).wrapping_sub(1),
    };
    let masked = row.map(|pair| {
        let vl = |v: u8| if v == 15 { v } else { v & mask };
        (vl(pair >> 4) << 4) | vl(pair & 0x0F)
    });
    // SAFETY: a table of the port's vector is 8 bytes OpenSM keeps with the port.
    held.is_none_or(|held| unsafe { (*held).raw_vl_by_sl } != masked)
}
