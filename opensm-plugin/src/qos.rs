//! The answers OpenSM asks a routing engine for once its tables are in place: the SL of a path
//! (`path_sl`, asked by the SA for every PathRecord and by the link manager for the SM's own
//! SL) and the SL-to-VL table of a port (`update_sl2vl`, asked by the QoS manager with
//! `qos TRUE`). They come from the deadlock scheme and must be consistent with the forwarding
//! tables written in the same sweep. Pure: looked up by LID and by node GUID, no C types.

use ibfabric::Fabric;
use ibfabric::deadlock::{PathSl, Sl2VlTables, SlVlRow, SwitchSls};
use ibfabric::routing::LidTable;
use ibfabric::topology::{Guid, PortRef};

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

    /// Every (source LID, destination LID) pair's SL as `SLID DLID SL` lines
    /// ([`ibfabric::io::path_sl`]), what `ibfabric deadlock-check --path-sl` reads: the SA's
    /// answers without asking the SA once per pair. Grows with the square of the LIDs.
    /// `None` when any SL is safe (there is nothing to dump).
    pub fn dump_text(&self) -> Option<String> {
        let sls = self.path_sls.as_ref()?;
        Some(ibfabric::io::path_sl::write_every_pair(&self.lids, sls))
    }
}

/// A row as `ib_slvl_table_t` holds it: two SLs per byte, the even SL in the high nibble
/// (iba/ib_types.h: ib_slvl_table_get).
pub fn packed(row: &SlVlRow) -> [u8; 8] {
    std::array::from_fn(|i| (row[2 * i] << 4) | (row[2 * i + 1] & 0x0F))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pack_even_sls_high() {
        let row: SlVlRow = std::array::from_fn(|sl| (sl as u8) % 8);
        assert_eq!(
            packed(&row),
            [0x01, 0x23, 0x45, 0x67, 0x01, 0x23, 0x45, 0x67]
        );
        let mut row = [0u8; 16];
        row[1] = 15;
        row[14] = 3;
        assert_eq!(packed(&row), [0x0F, 0, 0, 0, 0, 0, 0, 0x30]);
    }
}
