//! Path service levels: the SL a subnet manager answers in PathRecords for (source LID,
//! destination LID), which the source then puts in every packet of that pair.
//!
//! Three sources: one SL for everything ([`DefaultSl`]); a table read from a file or from
//! `saquery` ([`SlTable`]); and the schemes' own answers, which depend only on the switch the
//! source is attached to ([`SwitchSls`]) — the verifier then checks one route per source
//! switch instead of one per source LID.

use std::collections::HashMap;

use crate::routing::LidTable;
use crate::topology::{Fabric, NodeId, PortRef};

/// The SL of traffic from one LID to another (shared by the verifier's threads).
pub trait PathSl: Sync {
    /// The SL of packets from `slid` to `dlid`.
    fn sl(&self, slid: u16, dlid: u16) -> u8;

    /// The SL every source attached to `switch` (and the switch itself) uses towards `dlid`,
    /// when the SL depends only on the source's switch; `None` to ask [`Self::sl`] per source.
    fn sl_from_switch(&self, switch: NodeId, dlid: u16) -> Option<u8> {
        let _ = (switch, dlid);
        None
    }
}

/// One SL for every pair (what traffic that never asks the SA uses: SL 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultSl(pub u8);

impl PathSl for DefaultSl {
    fn sl(&self, _: u16, _: u16) -> u8 {
        self.0
    }
    fn sl_from_switch(&self, _: NodeId, _: u16) -> Option<u8> {
        Some(self.0)
    }
}

/// SLs per (source LID, destination LID), with a default for pairs not listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlTable {
    /// SL of pairs not listed.
    pub default: u8,
    /// `(slid, dlid) → sl`.
    pub entries: HashMap<(u16, u16), u8>,
}

impl PathSl for SlTable {
    fn sl(&self, slid: u16, dlid: u16) -> u8 {
        self.entries
            .get(&(slid, dlid))
            .copied()
            .unwrap_or(self.default)
    }
    fn sl_from_switch(&self, _: NodeId, _: u16) -> Option<u8> {
        self.entries.is_empty().then_some(self.default)
    }
}

/// SLs per (source switch, destination LID): what the DFSSSP assignment and the colouring
/// scheme compute (every source attached to one switch shares its routes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSls {
    /// Number of switches.
    n: usize,
    /// Dense switch index of each fabric node (`u32::MAX` for others).
    dense: Vec<u32>,
    /// Dense source switch of each LID (`u32::MAX` if unknown).
    lid_switch: Vec<u32>,
    /// `sl[dlid * n + s]`.
    sl: Vec<u8>,
    /// SL for unknown LIDs.
    pub default: u8,
}

impl SwitchSls {
    /// All SLs `default`, for the switches of `fabric` (dense order = `fabric.switches()`) and
    /// the LIDs of `lids`.
    pub fn new(fabric: &Fabric, lids: &LidTable, default: u8) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let n = switches.len();
        let mut dense = vec![u32::MAX; fabric.nodes().len()];
        for (i, s) in switches.iter().enumerate() {
            dense[s.index()] = i as u32;
        }
        let end = usize::from(lids.end());
        let mut lid_switch = vec![u32::MAX; end];
        for (lid, owner) in lids.iter() {
            let at = if fabric.node(owner.node).is_switch() {
                Some(owner.node)
            } else {
                fabric
                    .peer(PortRef {
                        node: owner.node,
                        port: owner.port,
                    })
                    .map(|p| p.node)
            };
            if let Some(node) = at {
                lid_switch[usize::from(lid)] = dense[node.index()];
            }
        }
        Self {
            n,
            dense,
            lid_switch,
            sl: vec![default; end * n],
            default,
        }
    }

    /// The SLs of every dense source switch towards `dlid` (mutable).
    pub(crate) fn row_mut(&mut self, dlid: u16) -> &mut [u8] {
        let start = usize::from(dlid) * self.n;
        &mut self.sl[start..start + self.n]
    }

    /// Mutable pieces of the table for destination LIDs from each of `starts` (ascending) to
    /// the next, rows of [`Self::switches`] entries each.
    pub(crate) fn regions(&mut self, starts: &[u16]) -> Vec<&mut [u8]> {
        let offsets: Vec<usize> = starts
            .iter()
            .enumerate()
            .map(|(i, &l)| if i == 0 { 0 } else { usize::from(l) * self.n })
            .collect();
        super::network::split_at_offsets(&mut self.sl, &offsets)
    }

    /// Number of switches (entries per destination row).
    pub fn switches(&self) -> usize {
        self.n
    }

    /// The SL from dense switch `s` (in `fabric.switches()` order) towards `dlid`.
    pub fn from_dense(&self, s: usize, dlid: u16) -> u8 {
        self.sl
            .get(usize::from(dlid) * self.n + s)
            .copied()
            .unwrap_or(self.default)
    }
}

impl PathSl for SwitchSls {
    fn sl(&self, slid: u16, dlid: u16) -> u8 {
        match self.lid_switch.get(usize::from(slid)) {
            Some(&s) if s != u32::MAX => self.from_dense(s as usize, dlid),
            _ => self.default,
        }
    }
    fn sl_from_switch(&self, switch: NodeId, dlid: u16) -> Option<u8> {
        let s = *self.dense.get(switch.index())?;
        (s != u32::MAX).then(|| self.from_dense(s as usize, dlid))
    }
}
