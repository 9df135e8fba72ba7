//! SL-to-VL mapping tables, as InfiniBand ports hold them.
//!
//! A switch holds one table per (input port, output port): the virtual lane a packet with
//! service level SL takes on the output port's link. A CA or router port holds one table for
//! what it sends. VL 15 is the management lane: a data packet mapped to it is dropped.
//!
//! The tables here are what a subnet manager programs (computed by the DFSSSP assignment or the
//! colouring scheme), or what a fabric reports (read by [`crate::io::sl2vl`]). Rows are stored
//! once per switch and shared by the (in, out) pairs that use them.

use rustc_hash::FxHashMap;

use crate::topology::{Fabric, NodeId, PortRef};

/// Number of service levels (and of entries in a row).
pub const SLS: usize = 16;

/// One SL-to-VL table: `row[sl]` is the VL.
pub type SlVlRow = [u8; SLS];

/// The management lane: data packets mapped to it are dropped.
pub const VL15: u8 = 15;

/// The row that maps SL i to VL i (for i < `vls`) and the other SLs to `i mod vls`: what
/// OpenSM programs by default (SL 8..15 to VL 0..7 with 8 VLs), and the tables of the DFSSSP
/// scheme (SL = VL).
pub fn identity_row(vls: u8) -> SlVlRow {
    let vls = vls.clamp(1, 15);
    std::array::from_fn(|sl| (sl as u8) % vls)
}

const MISSING: u16 = u16::MAX;

/// The tables of one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSl2Vl {
    /// Ports 0..=num_ports.
    width: usize,
    rows: Vec<SlVlRow>,
    /// `index[in * width + out]` into `rows`, or [`MISSING`].
    index: Vec<u16>,
}

impl SwitchSl2Vl {
    /// Empty tables for a switch with `num_ports` ports.
    pub fn new(num_ports: u8) -> Self {
        let width = usize::from(num_ports) + 1;
        Self {
            width,
            rows: Vec::new(),
            index: vec![MISSING; width * width],
        }
    }

    /// Tables whose every (in, out) pair maps by `row`.
    pub fn uniform(num_ports: u8, row: SlVlRow) -> Self {
        let width = usize::from(num_ports) + 1;
        Self {
            width,
            rows: vec![row],
            index: vec![0; width * width],
        }
    }

    /// Sets the table of (`in_port`, `out_port`). Returns false for a port the switch does not
    /// have.
    pub fn set(&mut self, in_port: u8, out_port: u8, row: SlVlRow) -> bool {
        let (i, o) = (usize::from(in_port), usize::from(out_port));
        if i >= self.width || o >= self.width {
            return false;
        }
        let id = match self.rows.iter().rposition(|r| *r == row) {
            Some(id) => id,
            None => {
                self.rows.push(row);
                self.rows.len() - 1
            }
        };
        self.index[i * self.width + o] = id as u16;
        true
    }

    /// Sets (`in_port`, `out_port`) to a row id from [`Self::add_row`] (fast path for builders).
    pub(crate) fn set_id(&mut self, in_port: u8, out_port: u8, id: u16) {
        self.index[usize::from(in_port) * self.width + usize::from(out_port)] = id;
    }

    /// Adds a row without looking for an equal one; returns its id.
    pub(crate) fn add_row(&mut self, row: SlVlRow) -> u16 {
        self.rows.push(row);
        (self.rows.len() - 1) as u16
    }

    /// The table of (`in_port`, `out_port`), if set.
    pub fn get(&self, in_port: u8, out_port: u8) -> Option<&SlVlRow> {
        let (i, o) = (usize::from(in_port), usize::from(out_port));
        if i >= self.width || o >= self.width {
            return None;
        }
        let id = self.index[i * self.width + o];
        (id != MISSING).then(|| &self.rows[usize::from(id)])
    }

    /// Number of distinct rows stored.
    pub fn distinct_rows(&self) -> usize {
        self.rows.len()
    }

    /// Ports 0..=n: n.
    pub fn num_ports(&self) -> u8 {
        (self.width - 1) as u8
    }
}

/// The SL-to-VL tables of a fabric's switches and CA/router ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sl2VlTables {
    switches: Vec<Option<SwitchSl2Vl>>,
    ports: FxHashMap<PortRef, SlVlRow>,
    /// The row used where a table is missing.
    pub default: SlVlRow,
}

impl Sl2VlTables {
    /// No tables yet; every lookup gives `default[sl]`.
    pub fn new(fabric: &Fabric, default: SlVlRow) -> Self {
        Self {
            switches: vec![None; fabric.nodes().len()],
            ports: FxHashMap::default(),
            default,
        }
    }

    /// Every port of the fabric maps by `row` (the DFSSSP scheme: `identity_row(vls)`).
    pub fn uniform(fabric: &Fabric, row: SlVlRow) -> Self {
        let mut t = Self::new(fabric, row);
        for (i, node) in fabric.nodes().iter().enumerate() {
            if node.is_switch() {
                t.switches[i] = Some(SwitchSl2Vl::uniform(node.num_ports(), row));
            }
        }
        for node in fabric
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_switch())
        {
            for (p, _) in fabric.neighbours(NodeId(node.0 as u32)) {
                t.ports.insert(
                    PortRef {
                        node: NodeId(node.0 as u32),
                        port: p,
                    },
                    row,
                );
            }
        }
        t
    }

    /// The tables of `switch`, created empty on first use.
    ///
    /// # Panics
    /// If `switch` is not a node of the fabric the tables were made for.
    pub fn switch_mut(&mut self, switch: NodeId, num_ports: u8) -> &mut SwitchSl2Vl {
        self.switches[switch.index()].get_or_insert_with(|| SwitchSl2Vl::new(num_ports))
    }

    /// Replaces the tables of `switch`.
    pub fn set_switch(&mut self, switch: NodeId, tables: SwitchSl2Vl) {
        self.switches[switch.index()] = Some(tables);
    }

    /// The tables of `switch`, if any were set.
    pub fn switch(&self, switch: NodeId) -> Option<&SwitchSl2Vl> {
        self.switches.get(switch.index())?.as_ref()
    }

    /// Sets the table of a CA or router port.
    pub fn set_port(&mut self, port: PortRef, row: SlVlRow) {
        self.ports.insert(port, row);
    }

    /// The table of a CA or router port, if set.
    pub fn port(&self, port: PortRef) -> Option<&SlVlRow> {
        self.ports.get(&port)
    }

    /// The table of (`in_port`, `out_port`) of `switch` — the default row where none is set
    /// (what a subnet manager programs for that port pair).
    pub fn switch_row(&self, switch: NodeId, in_port: u8, out_port: u8) -> &SlVlRow {
        self.switch(switch)
            .and_then(|t| t.get(in_port, out_port))
            .unwrap_or(&self.default)
    }

    /// The table of a CA or router port — the default row where none is set.
    pub fn port_row(&self, port: PortRef) -> &SlVlRow {
        self.port(port).unwrap_or(&self.default)
    }

    /// Whether `self` and `other` map every SL alike wherever packets can pass on `fabric`:
    /// every pair of a switch's cabled ports (port 0, the switch itself, included) and every
    /// cabled CA or router port, however each stores its rows. Rows of ports without a cable
    /// carry nothing and are not compared.
    pub fn same_lanes(&self, other: &Sl2VlTables, fabric: &Fabric) -> bool {
        fabric.nodes().iter().enumerate().all(|(i, node)| {
            let id = NodeId(i as u32);
            let cabled = |port: u8| fabric.peer(PortRef { node: id, port }).is_some();
            let n = node.num_ports();
            if node.is_switch() {
                let ports: Vec<u8> = (0..=n).filter(|&p| p == 0 || cabled(p)).collect();
                ports.iter().all(|&i| {
                    ports
                        .iter()
                        .all(|&o| self.switch_row(id, i, o) == other.switch_row(id, i, o))
                })
            } else {
                (1..=n).filter(|&p| cabled(p)).all(|port| {
                    let p = PortRef { node: id, port };
                    self.port_row(p) == other.port_row(p)
                })
            }
        })
    }

    /// The VL of `sl` from `in_port` to `out_port` of `switch`.
    pub fn switch_vl(&self, switch: NodeId, in_port: u8, out_port: u8, sl: u8) -> u8 {
        self.switch_row(switch, in_port, out_port)[usize::from(sl) & (SLS - 1)]
    }

    /// The VL of `sl` leaving a CA or router port.
    pub fn port_vl(&self, port: PortRef, sl: u8) -> u8 {
        self.port_row(port)[usize::from(sl) & (SLS - 1)]
    }

    /// Switches with tables and CA/router ports with a table.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.switches.iter().filter(|s| s.is_some()).count(),
            self.ports.len(),
        )
    }

    /// Every VL any table (or the default row) maps to, as a bit set.
    pub fn vls_mapped(&self) -> u16 {
        let mut mask = 0u16;
        let mut add = |row: &SlVlRow| {
            for &vl in row {
                mask |= 1 << (vl & 15);
            }
        };
        add(&self.default);
        for t in self.switches.iter().flatten() {
            t.rows.iter().for_each(&mut add);
        }
        self.ports.values().for_each(add);
        mask
    }

    /// Every switch with tables, with its node id.
    pub fn switches(&self) -> impl Iterator<Item = (NodeId, &SwitchSl2Vl)> {
        self.switches
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (NodeId(i as u32), t)))
    }

    /// Every CA or router port with a table, in port order.
    pub fn ports(&self) -> Vec<(PortRef, SlVlRow)> {
        let mut v: Vec<(PortRef, SlVlRow)> = self.ports.iter().map(|(p, r)| (*p, *r)).collect();
        v.sort_by_key(|(p, _)| *p);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_rows_wrap_like_opensm() {
        assert_eq!(
            identity_row(8),
            [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]
        );
        assert_eq!(identity_row(15)[15], 0);
        assert_eq!(identity_row(1), [0; 16]);
    }

    #[test]
    fn switch_tables_share_rows() {
        let mut t = SwitchSl2Vl::new(4);
        assert!(t.set(1, 2, identity_row(8)));
        assert!(t.set(2, 1, identity_row(8)));
        assert!(t.set(0, 3, identity_row(4)));
        assert!(!t.set(5, 1, identity_row(8)));
        assert_eq!(t.distinct_rows(), 2);
        assert_eq!(t.get(0, 3).unwrap()[5], 1);
        assert_eq!(t.get(3, 3), None);
    }
}
