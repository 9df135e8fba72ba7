//! LID assignment and lookup.
//!
//! A LID addresses a port: a switch answers on its port 0 with one LID, a CA or router port with
//! 2^LMC consecutive LIDs from its base LID (aligned to 2^LMC). Layered routing uses the offset
//! from the base LID as the layer. The assignment is data: read from a fabric (the ports' `lid`
//! and `lmc`, as ibnetdiscover reports them or OpenSM assigned them), or made by
//! [`assign_lids`] for a generated fabric.

use crate::topology::{Fabric, NodeId, NodeKind};

/// The highest unicast LID.
pub const MAX_UNICAST_LID: u16 = 0xBFFF;

/// Who answers to a LID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LidOwner {
    /// The node.
    pub node: NodeId,
    /// The port (0 for a switch).
    pub port: u8,
    /// LID − base LID: the layer this LID selects.
    pub offset: u8,
}

/// Every assigned LID of a fabric and its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LidTable {
    owners: Vec<Option<LidOwner>>,
}

/// Why LIDs could not be assigned or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LidError {
    /// The fabric needs more unicast LIDs than IB has.
    #[error(
        "{needed} LIDs are needed ({endpoints} endpoint ports × {per_port} LIDs + {switches} switches) but IB has {MAX_UNICAST_LID} unicast LIDs; use fewer layers (a smaller LMC)"
    )]
    TooMany {
        /// LIDs needed.
        needed: usize,
        /// CA and router ports.
        endpoints: usize,
        /// 2^LMC.
        per_port: usize,
        /// Switches.
        switches: usize,
    },
    /// Two ports claim one LID.
    #[error("LID {lid} is claimed by {first} and {second}")]
    Conflict {
        /// The LID.
        lid: u16,
        /// First claimant.
        first: String,
        /// Second claimant.
        second: String,
    },
}

/// Assigns LIDs the way a subnet manager would: switches first (one LID each, from 1), then
/// every cabled CA and router port a block of 2^lmc LIDs aligned to 2^lmc, in node order.
///
/// # Errors
/// When the fabric needs more than the 49151 unicast LIDs.
pub fn assign_lids(fabric: &mut Fabric, lmc: u8) -> Result<(), LidError> {
    let per_port = 1usize << lmc;
    let switches = fabric.switches().count();
    let endpoints: usize = fabric
        .nodes()
        .iter()
        .filter(|n| !n.is_switch())
        .map(|n| n.ports.iter().skip(1).filter(|p| p.link.is_some()).count())
        .sum();
    let needed = switches + endpoints * per_port + per_port; // + alignment slack
    if needed > usize::from(MAX_UNICAST_LID) {
        return Err(LidError::TooMany {
            needed,
            endpoints,
            per_port,
            switches,
        });
    }
    let mut next = 1usize;
    let ids: Vec<NodeId> = fabric.switches().collect();
    for id in ids {
        let port0 = &mut fabric.node_mut(id).ports[0];
        (port0.lid, port0.lmc) = (next as u16, 0);
        next += 1;
    }
    for i in 0..fabric.nodes().len() {
        let node = fabric.node_mut(NodeId(i as u32));
        if node.kind == NodeKind::Switch {
            continue;
        }
        for port in node.ports.iter_mut().skip(1).filter(|p| p.link.is_some()) {
            next = next.div_ceil(per_port) * per_port;
            (port.lid, port.lmc) = (next as u16, lmc);
            next += per_port;
        }
    }
    Ok(())
}

impl LidTable {
    /// The LIDs the fabric's ports hold (switch port 0, cabled CA and router ports with a
    /// non-zero LID).
    ///
    /// # Errors
    /// Two ports claiming one LID.
    pub fn from_fabric(fabric: &Fabric) -> Result<Self, LidError> {
        let mut owners: Vec<Option<LidOwner>> = vec![None; usize::from(MAX_UNICAST_LID) + 1];
        let mut claim = |lid: usize, owner: LidOwner| -> Result<(), LidError> {
            if lid == 0 || lid > usize::from(MAX_UNICAST_LID) {
                return Ok(());
            }
            if let Some(first) = owners[lid] {
                let name = |o: LidOwner| format!("{}[{}]", fabric.node(o.node).name, o.port);
                return Err(LidError::Conflict {
                    lid: lid as u16,
                    first: name(first),
                    second: name(owner),
                });
            }
            owners[lid] = Some(owner);
            Ok(())
        };
        for (i, node) in fabric.nodes().iter().enumerate() {
            let id = NodeId(i as u32);
            if node.is_switch() {
                claim(
                    usize::from(node.ports[0].lid),
                    LidOwner {
                        node: id,
                        port: 0,
                        offset: 0,
                    },
                )?;
                continue;
            }
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                if port.link.is_none() || port.lid == 0 {
                    continue;
                }
                for offset in 0..(1u16 << port.lmc) {
                    let owner = LidOwner {
                        node: id,
                        port: p as u8,
                        offset: offset as u8,
                    };
                    claim(usize::from(port.lid) + usize::from(offset), owner)?;
                }
            }
        }
        let last = owners
            .iter()
            .rposition(Option::is_some)
            .map_or(1, |l| l + 1);
        owners.truncate(last);
        Ok(Self { owners })
    }

    /// The owner of `lid`.
    pub fn owner(&self, lid: u16) -> Option<LidOwner> {
        self.owners.get(usize::from(lid)).copied().flatten()
    }

    /// One more than the highest assigned LID (the length an LFT needs).
    pub fn end(&self) -> u16 {
        self.owners.len() as u16
    }

    /// Every assigned LID with its owner, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u16, LidOwner)> + '_ {
        self.owners
            .iter()
            .enumerate()
            .filter_map(|(l, o)| o.map(|o| (l as u16, o)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn assigned_lids_are_unique_aligned_and_cover_every_layer() {
        let mut fabric = SlimFly::new(5, None).unwrap().build();
        assign_lids(&mut fabric, 2).unwrap();
        let table = LidTable::from_fabric(&fabric).unwrap();
        assert_eq!(table.iter().count(), 50 + 200 * 4);
        for (lid, owner) in table.iter() {
            let node = fabric.node(owner.node);
            if !node.is_switch() {
                assert_eq!(node.ports[1].lid % 4, 0, "aligned base");
                assert_eq!(lid, node.ports[1].lid + u16::from(owner.offset));
            }
        }
    }

    #[test]
    fn too_many_lids_are_refused_with_the_numbers() {
        let mut fabric = SlimFly::new(19, None).unwrap().build();
        assert!(
            assign_lids(&mut fabric.clone(), 2).is_ok(),
            "q=19 fits with 4 layers"
        );
        let err = assign_lids(&mut fabric, 3).unwrap_err().to_string();
        assert!(
            err.contains("10830 endpoint ports × 8 LIDs + 722 switches"),
            "{err}"
        );
    }
}
