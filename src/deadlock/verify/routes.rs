//! The routes to check: the channels they use, the tables that route them, the SLs they carry
//! and the lanes those SLs take.

use super::RouteSls;
use crate::deadlock::network::Channels;
use crate::deadlock::path_sl::PathSl;
use crate::deadlock::sl2vl::{SLS, Sl2VlTables, SlVlRow};
use crate::routing::ForwardingTables;
use crate::topology::NodeId;

/// Every SL, as a bit set.
pub(super) const EVERY_SL: u16 = u16::MAX;

/// What the scan and the naming of cycles walk: the same routes with the same SLs.
#[derive(Clone, Copy)]
pub(super) struct Routes<'r, 'a> {
    pub(super) net: &'r Channels<'a>,
    pub(super) tables: &'r ForwardingTables,
    pub(super) path_sl: &'r dyn PathSl,
    pub(super) sl2vl: &'r Sl2VlTables,
    pub(super) sls: RouteSls,
    /// At most this many examples are listed.
    pub(super) cap: usize,
    /// For a change: the tables before it (`tables` and `sl2vl` are those after it).
    pub(super) old: Option<Old<'r>>,
}

/// The tables before a change, on the fabric after it.
#[derive(Clone, Copy)]
pub(super) struct Old<'r> {
    pub(super) tables: &'r ForwardingTables,
    pub(super) sl2vl: &'r Sl2VlTables,
}

impl Routes<'_, '_> {
    /// The SLs (a bit set) every source attached to `switch` sends with towards `dlid`, when
    /// they do not depend on the source; `None` to ask [`Self::sls`] per source.
    pub(super) fn sls_from_switch(&self, switch: NodeId, dlid: u16) -> Option<u16> {
        match self.sls {
            RouteSls::PathSl => self
                .path_sl
                .sl_from_switch(switch, dlid)
                .map(|sl| 1 << (sl & 15)),
            RouteSls::EverySl => Some(EVERY_SL),
        }
    }

    /// The SLs (a bit set) the route from `slid` to `dlid` carries.
    pub(super) fn sls(&self, slid: u16, dlid: u16) -> u16 {
        match self.sls {
            RouteSls::PathSl => 1 << (self.path_sl.sl(slid, dlid) & 15),
            RouteSls::EverySl => EVERY_SL,
        }
    }
}

/// The SLs of the bit set `sls` grouped by the lane `row` maps them to: (VL, SLs), ascending
/// by VL. SLs of one group take the same lane here.
pub(super) fn by_lane(row: &SlVlRow, sls: u16) -> impl Iterator<Item = (u8, u16)> + use<> {
    let mut groups = [0u16; SLS];
    let mut rest = sls;
    while rest != 0 {
        let sl = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        groups[usize::from(row[sl] & 15)] |= 1 << sl;
    }
    (0..SLS as u8).filter_map(move |vl| {
        let group = groups[usize::from(vl)];
        (group != 0).then_some((vl, group))
    })
}

/// The SLs of the bit set `sls`, ascending.
pub(super) fn each_sl(sls: u16) -> impl Iterator<Item = u8> {
    (0..16u8).filter(move |&sl| sls & (1 << sl) != 0)
}
