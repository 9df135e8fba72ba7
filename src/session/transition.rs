//! Changing the tables of a live subnet in passes that are safe at every instant.
//!
//! A subnet manager writes a new routing switch by switch (OpenSM: the changed 64-entry blocks
//! of every switch, block 0 of all switches first, several in flight), with no barrier until
//! the end. Meanwhile a packet follows the old entry at switches not yet written and the new
//! one at those already written; InfiniBand has no hop limit, so a mixture that loops holds the
//! packets until the lagging switch is written, and a mixture whose channel dependencies form a
//! cycle can deadlock.
//!
//! [`stage`] splits a change into at most two passes that avoid every such mixture:
//!
//! 1. **drop**: every entry that changes and still forwards is set to [`NO_PORT`] (the switch
//!    drops the packet), the others stay as the switches hold them. Any mixture of the held
//!    tables and this pass forwards only along held entries, so it has no loop and no channel
//!    dependency the held routing did not have.
//! 2. **install**, once every switch confirmed the first pass and the packets sent along the
//!    dropped entries have drained: the new tables. Any mixture of the first pass and these
//!    forwards only along new entries (an entry either did not change, or was dropped), so it
//!    has no loop and no dependency the new routing does not have.
//!
//! When no changed entry still forwards (a repair whose changed routes all crossed a lost
//! cable at the switch itself), the first pass is the held tables and is left out.
//!
//! The price is the dropped entries that still worked: routes that a repair moves although
//! they did not cross a loss (the disjoint repair), or that a full routing moves, lose packets
//! for the time between the passes. [`Staging`] counts them, so that the subnet manager can
//! say what each pass drops.
//!
//! The argument covers the forwarding entries, with the lanes of one routing. The SL-to-VL
//! tables are written with the second pass (the first keeps the held ones); where they differ,
//! a hop may take the old lane at one switch and the new one at the next, so each pass must
//! also be checked with both tables: `deadlock::verify::verify_transition` does, and proves
//! both passes of a repair on Slim Fly q = 5 safe for every SL (see the tests).

use std::collections::HashMap;

use crate::Fabric;
use crate::routing::walk::{Dest, DestWalk, Network};
use crate::routing::{ForwardingTables, LidTable, NO_PORT};
use crate::topology::PortRef;

/// A change from the tables the switches hold to new ones, as passes (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staging {
    /// The tables to write first: the held ones with every changed entry that still forwards
    /// dropped. `None` when no changed entry forwards: the new tables can be written at once.
    pub drop_pass: Option<ForwardingTables>,
    /// Entries (switch, LID) whose port differs between the held and the new tables.
    pub changed: usize,
    /// Of them, the entries the first pass drops (those that still named a cabled port).
    pub dropped: usize,
    /// Of the dropped entries, those whose held route still reached its destination: traffic
    /// that flowed before the change and is lost between the passes.
    pub dropped_working: usize,
}

impl Staging {
    /// The number of passes the change takes: 0 without a change, 1 when the new tables can
    /// be written at once, 2 with a drop pass.
    pub fn passes(&self) -> usize {
        match (&self.drop_pass, self.changed) {
            (_, 0) => 0,
            (None, _) => 1,
            (Some(_), _) => 2,
        }
    }
}

/// Plans the change from `held` (what the switches of `fabric` hold: a cable that is gone
/// makes its entries drop packets) to `target`, both over `fabric`'s switches, whose LIDs
/// `lids` gives.
///
/// Linear in switches × LIDs: one walk of every destination through the held tables.
pub fn stage(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    target: &ForwardingTables,
) -> Staging {
    let net = Network::new(fabric, lids);
    let endpoint_of: HashMap<PortRef, usize> = net
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| (e.port, i))
        .collect();
    let mut drop_pass = held.clone();
    let (mut changed, mut dropped, mut dropped_working) = (0, 0, 0);
    let mut walk = DestWalk::new(net.len());
    let lid_end = usize::from(lids.end())
        .max(longest(held))
        .max(longest(target));
    for lid in 0..lid_end as u16 {
        // Whether the held walk of this LID was made (lazily: only LIDs with a dropped entry
        // are walked), and whether the LID has an owner to reach at all.
        let mut walked: Option<bool> = None;
        for (s, &switch) in net.switches.iter().enumerate() {
            let old = held.port(switch, lid);
            if old == target.port(switch, lid) {
                continue;
            }
            changed += 1;
            let forwards = old.is_some_and(|port| {
                port == 0 || net.link_at(PortRef { node: switch, port }).is_some()
            });
            if !forwards {
                continue;
            }
            dropped += 1;
            drop_pass.set(switch, lid, NO_PORT);
            let owned = *walked.get_or_insert_with(|| {
                dest_of(&net, &endpoint_of, lids, lid)
                    .map(|dest| walk.walk(&net, held, &dest, |_| 0))
                    .is_some()
            });
            if owned && walk.reaches(s) {
                dropped_working += 1;
            }
        }
    }
    Staging {
        drop_pass: (dropped > 0).then_some(drop_pass),
        changed,
        dropped,
        dropped_working,
    }
}

/// The longest table of `tables`.
fn longest(tables: &ForwardingTables) -> usize {
    tables
        .switches()
        .iter()
        .map(|&s| tables.table(s).len())
        .max()
        .unwrap_or(0)
}

/// Where `lid` must be delivered, if a port of the fabric owns it.
fn dest_of(
    net: &Network<'_>,
    endpoint_of: &HashMap<PortRef, usize>,
    lids: &LidTable,
    lid: u16,
) -> Option<Dest> {
    let owner = lids.owner(lid)?;
    if owner.port == 0 {
        let s = net.dense[owner.node.index()] as usize;
        return net.switch_dest(s, lids);
    }
    let port = PortRef {
        node: owner.node,
        port: owner.port,
    };
    let e = &net.endpoints[*endpoint_of.get(&port)?];
    Some(net.endpoint_dest(e, lid - e.base_lid))
}

#[cfg(test)]
mod tests;
