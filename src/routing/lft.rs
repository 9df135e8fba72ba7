//! Linear forwarding tables: for every switch, the output port of every destination LID — what
//! a subnet manager programs into the switches and what `ibroute` reads back.

use super::lids::LidTable;
use crate::topology::{Fabric, NodeId};
use rayon::prelude::*;

/// "No route" in a table (what OpenSM fills unset entries with).
pub const NO_PORT: u8 = 0xFF;

/// The forwarding tables of every switch of a fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardingTables {
    /// Entries per switch: `ports[switch][lid]`.
    tables: Vec<Vec<u8>>,
    /// Dense switch index of each fabric node (`u32::MAX` for non-switches).
    index_of: Vec<u32>,
    /// Fabric node of each dense switch index.
    switches: Vec<NodeId>,
}

impl ForwardingTables {
    /// Empty tables (every entry [`NO_PORT`]) for the switches of `fabric`, covering LIDs
    /// `0..lid_end`.
    pub fn new(fabric: &Fabric, lid_end: u16) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut index_of = vec![u32::MAX; fabric.nodes().len()];
        for (i, s) in switches.iter().enumerate() {
            index_of[s.index()] = i as u32;
        }
        let tables = vec![vec![NO_PORT; usize::from(lid_end)]; switches.len()];
        Self {
            tables,
            index_of,
            switches,
        }
    }

    /// Empty tables sized for every LID of `lids`.
    pub fn for_lids(fabric: &Fabric, lids: &LidTable) -> Self {
        Self::new(fabric, lids.end())
    }

    /// The switches, in dense index order.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    /// The output port of `switch` for `lid`, or `None` if unset or out of range.
    pub fn port(&self, switch: NodeId, lid: u16) -> Option<u8> {
        self.table_of(switch)?
            .get(usize::from(lid))
            .copied()
            .filter(|&p| p != NO_PORT)
    }

    /// Sets the output port of `switch` for `lid` (growing the table if needed).
    ///
    /// # Panics
    /// If `switch` is not a switch of the fabric the tables were made for.
    pub fn set(&mut self, switch: NodeId, lid: u16, port: u8) {
        let i = self.index_of[switch.index()];
        assert!(i != u32::MAX, "node {} is not a switch", switch.0);
        let table = &mut self.tables[i as usize];
        if table.len() <= usize::from(lid) {
            table.resize(usize::from(lid) + 1, NO_PORT);
        }
        table[usize::from(lid)] = port;
    }

    /// Fills every switch's table on the threads of the current pool: `fill(switch, table)`
    /// for each switch with its whole table, indexed by LID. The tables are the same whatever
    /// the threads (each is written by one call).
    pub fn fill_tables(&mut self, fill: impl Fn(NodeId, &mut [u8]) + Sync) {
        self.tables
            .par_iter_mut()
            .zip(&self.switches)
            .for_each(|(table, &switch)| fill(switch, table));
    }

    /// The whole table of one switch, indexed by LID.
    pub fn table(&self, switch: NodeId) -> &[u8] {
        &self.tables[self.index_of[switch.index()] as usize]
    }

    /// The whole table of `switch`, if these tables have one.
    pub fn table_of(&self, switch: NodeId) -> Option<&[u8]> {
        let index = *self.index_of.get(switch.index())?;
        self.tables.get(index as usize).map(Vec::as_slice)
    }
}
