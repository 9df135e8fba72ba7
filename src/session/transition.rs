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

use std::collections::{HashMap, HashSet};

use super::sweep_record::{PassFigures, PassKind};
use crate::Fabric;
use crate::deadlock::verify::{After, Before, verify_transition};
use crate::deadlock::{DefaultSl, RouteSls, Sl2VlTables, VerifyOptions};
use crate::routing::walk::{Dest, DestWalk, Network};
use crate::routing::{ForwardingTables, LidTable, NO_PORT};
use crate::topology::{NodeId, PortRef};

/// A change from the tables the switches hold to new ones, as passes (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staging {
    /// The tables to write first: the held ones with every changed entry that still forwards
    /// dropped ([`stage_with_proof`]: or, where proven safe, already moved to its new port).
    /// `None` when the new tables can be written at once.
    pub first_pass: Option<ForwardingTables>,
    /// Entries (switch, LID) whose port differs between the held and the new tables.
    pub changed: usize,
    /// Of them, the entries the first pass drops (those that still named a cabled port).
    pub dropped: usize,
    /// Of the dropped entries, those whose held route still reached its destination: traffic
    /// that flowed before the change and is lost between the passes.
    pub dropped_working: usize,
    /// Of the dropped entries, the unchanged ones dropped because they leave their switch
    /// through a port whose SL-to-VL row changes (the first pass of a change of lanes that
    /// could not be proven otherwise: [`stage_with_proof`]); the others are changed entries.
    pub dropped_for_lanes: usize,
    /// Changed entries that still forwarded and are moved to their new port in the first
    /// pass, where the verifier proved it safe ([`stage_with_proof`]).
    pub moved: usize,
    /// The SL-to-VL tables change with the last pass, and the verifier found a mixture of it
    /// that it could not prove safe ([`stage_with_proof`]); the subnet manager says so.
    pub last_pass_unproven: bool,
    /// The pass to write changes the SL-to-VL tables only: `first_pass` is the held
    /// forwarding (no route crosses a port pair whose lane changes), to be written with the
    /// new lanes; the new entries follow in a further pass ([`stage_with_proof`]).
    pub lanes_pass: bool,
}

impl Staging {
    /// The number of passes the change takes: 0 without a change, 1 when the new tables can
    /// be written at once, 2 with a drop pass.
    pub fn passes(&self) -> usize {
        match (&self.first_pass, self.changed) {
            (_, 0) => 0,
            (None, _) => 1,
            (Some(_), _) => 2,
        }
    }

    /// What the pass to write now does, for the sweep log: the drop pass when there is one,
    /// else the new tables (`blocks` is the subnet manager's to count, 0 here).
    pub fn figures(&self) -> PassFigures {
        if self.lanes_pass {
            return PassFigures {
                kind: PassKind::Lanes,
                written: 0,
                dropped: 0,
                dropped_working: 0,
                moved: 0,
                blocks: 0,
            };
        }
        match self.first_pass {
            Some(_) => PassFigures {
                kind: PassKind::Drop,
                written: self.dropped + self.moved,
                dropped: self.dropped,
                dropped_working: self.dropped_working,
                moved: self.moved,
                blocks: 0,
            },
            None => PassFigures {
                kind: PassKind::Install,
                written: self.changed,
                dropped: 0,
                dropped_working: 0,
                moved: self.moved,
                blocks: 0,
            },
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
    let changes = changes(fabric, lids, held, target);
    let mut first_pass = held.clone();
    for c in &changes.forwarding {
        first_pass.set(c.switch, c.lid, NO_PORT);
    }
    let dropped = changes.forwarding.len();
    Staging {
        first_pass: (dropped > 0).then_some(first_pass),
        changed: changes.changed,
        dropped,
        dropped_working: changes.forwarding.iter().filter(|c| c.working).count(),
        dropped_for_lanes: 0,
        moved: 0,
        last_pass_unproven: false,
        lanes_pass: false,
    }
}

/// As [`stage`], for a change whose SL-to-VL tables go from `old_lanes` (what the ports hold;
/// the first pass keeps them) to `new_lanes` (written with the last pass), with two gains
/// where the transition verifier can prove them (every mixture of forwarding entries and
/// SL-to-VL tables loop-free and deadlock-free for every route on every SL):
///
/// * with `spare_working`, routes that still work are not dropped without need: the change is
///   written at once when that is proven safe; else the first pass moves the entries of every
///   LID whose old and new next hops form no loop and drops only the changed entries of the
///   others, when both passes are proven safe;
/// * when the lanes change, the last pass of [`stage`]'s plan (which the drop argument covers
///   only for unchanged lanes) is checked; when it cannot be proven, the lanes change in a pass
///   of their own ([`Staging::lanes_pass`]), after a first pass that also drops every entry
///   leaving a switch through a port whose SL-to-VL row changes: no route then crosses a
///   changing row, so each hop keeps its VL whichever table its port holds, and the last pass
///   installs the new entries under the new lanes only (the drop argument). Only when an
///   endport's own row changes is that impossible: [`Staging::last_pass_unproven`] says so.
///
/// Costs up to three runs of the verifier (parallel, linear in routes × hops) when some
/// changed entry still carried traffic (and `spare_working`) or the lanes change; none
/// otherwise (`cargo bench --bench staging`: about 130 ms a run on Slim Fly q = 7, 1 s on
/// q = 11, on 2 cores).
pub fn stage_with_proof(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    target: &ForwardingTables,
    old_lanes: &Sl2VlTables,
    new_lanes: &Sl2VlTables,
    spare_working: bool,
) -> Staging {
    let plain = stage(fabric, lids, held, target);
    let same_lanes = old_lanes.same_lanes(new_lanes, fabric);
    if same_lanes && (plain.changed == 0 || plain.dropped_working == 0 || !spare_working) {
        return plain;
    }
    let proven = |from: (&ForwardingTables, &Sl2VlTables),
                  to: (&ForwardingTables, &Sl2VlTables)| {
        verify_transition(
            fabric,
            lids,
            &Before {
                tables: from.0,
                sl2vl: from.1,
                multicast: None,
            },
            &After {
                tables: to.0,
                path_sl: &DefaultSl(0),
                sl2vl: to.1,
                multicast: None,
            },
            &VerifyOptions {
                switch_lids: true,
                max_listed: usize::MAX,
                sls: RouteSls::EverySl,
            },
        )
    };
    let at_once = proven((held, old_lanes), (target, new_lanes));
    if at_once.is_safe() {
        return Staging {
            first_pass: None,
            changed: plain.changed,
            dropped: 0,
            dropped_working: 0,
            dropped_for_lanes: 0,
            moved: plain.dropped,
            last_pass_unproven: false,
            lanes_pass: false,
        };
    }
    if spare_working && plain.dropped_working > 0 {
        let looping: HashSet<u16> = at_once.loops.iter().map(|l| l.lid).collect();
        let changes = changes(fabric, lids, held, target);
        let mut first = held.clone();
        let (mut moved, mut dropped, mut dropped_working) = (0, 0, 0);
        for c in &changes.forwarding {
            if looping.contains(&c.lid) {
                first.set(c.switch, c.lid, NO_PORT);
                dropped += 1;
                dropped_working += usize::from(c.working);
            } else {
                let port = target.port(c.switch, c.lid).unwrap_or(NO_PORT);
                first.set(c.switch, c.lid, port);
                moved += 1;
            }
        }
        let partial_proven = moved > 0
            && proven((held, old_lanes), (&first, old_lanes)).is_safe()
            && (same_lanes || proven((&first, old_lanes), (target, new_lanes)).is_safe());
        if partial_proven {
            return Staging {
                first_pass: (dropped > 0).then_some(first),
                changed: plain.changed,
                dropped,
                dropped_working,
                dropped_for_lanes: 0,
                moved,
                last_pass_unproven: false,
                lanes_pass: false,
            };
        }
    }
    if same_lanes {
        return plain;
    }
    let last_proven = match &plain.first_pass {
        Some(first) => proven((first, old_lanes), (target, new_lanes)).is_safe(),
        // The last pass is the whole change, already checked.
        None => false,
    };
    if last_proven {
        return plain;
    }
    match off_changed_lanes(
        fabric,
        lids,
        held,
        plain.first_pass.as_ref().unwrap_or(held),
        old_lanes,
        new_lanes,
    ) {
        Some(off) if off.dropped == 0 => Staging {
            first_pass: Some(held.clone()),
            changed: plain.changed,
            dropped: 0,
            dropped_working: 0,
            dropped_for_lanes: 0,
            moved: 0,
            last_pass_unproven: false,
            lanes_pass: true,
        },
        Some(off) => Staging {
            first_pass: Some(off.tables),
            changed: plain.changed,
            dropped: plain.dropped + off.dropped,
            dropped_working: plain.dropped_working + off.dropped_working,
            dropped_for_lanes: off.dropped,
            moved: 0,
            last_pass_unproven: false,
            lanes_pass: false,
        },
        None => Staging {
            last_pass_unproven: true,
            ..plain
        },
    }
}

/// `first` with the entries dropped that would send packets out of a port whose SL-to-VL
/// row changes (for any input port) between `old_lanes` and `new_lanes`.
struct OffChangedLanes {
    tables: ForwardingTables,
    /// Entries it drops beyond `first`'s.
    dropped: usize,
    /// Of them, those whose held route still reached its destination.
    dropped_working: usize,
}

/// The forwarding under which a change of lanes is safe in any order: no route leaves a
/// switch through a port whose row changes, so every hop keeps its VL whichever table the
/// port holds (the routes are a subset of `first`'s, which are safe with the old lanes).
/// `None` when an endport's own row changes (its first hop's VL would change on every route).
fn off_changed_lanes(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    first: &ForwardingTables,
    old_lanes: &Sl2VlTables,
    new_lanes: &Sl2VlTables,
) -> Option<OffChangedLanes> {
    for node in fabric.nodes().iter().enumerate() {
        let (id, node) = (NodeId(node.0 as u32), node.1);
        if node.is_switch() {
            continue;
        }
        for port in 1..=node.num_ports() {
            let p = PortRef { node: id, port };
            if fabric.peer(p).is_some() && old_lanes.port_row(p) != new_lanes.port_row(p) {
                return None;
            }
        }
    }
    let mut tables = first.clone();
    let mut off = Vec::new();
    for s in fabric.switches() {
        let n = fabric.node(s).num_ports();
        let cabled = |port: u8| port == 0 || fabric.peer(PortRef { node: s, port }).is_some();
        let changed_out: Vec<bool> = (0..=n)
            .map(|out| {
                cabled(out)
                    && (0..=n)
                        .filter(|&i| cabled(i))
                        .any(|i| old_lanes.switch_row(s, i, out) != new_lanes.switch_row(s, i, out))
            })
            .collect();
        for (lid, &port) in first.table(s).iter().enumerate() {
            if port != NO_PORT && port != 0 && changed_out.get(usize::from(port)) == Some(&true) {
                tables.set(s, lid as u16, NO_PORT);
                off.push((s, lid as u16));
            }
        }
    }
    let dropped_working = working(fabric, lids, held, &off);
    Some(OffChangedLanes {
        tables,
        dropped: off.len(),
        dropped_working,
    })
}

/// How many of the (switch, LID) `entries` lie on a held route that reaches its destination.
fn working(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    entries: &[(NodeId, u16)],
) -> usize {
    let net = Network::new(fabric, lids);
    let endpoint_of = endpoint_index(&net);
    let dense: HashMap<NodeId, usize> = net
        .switches
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, i))
        .collect();
    let mut walk = DestWalk::new(net.len());
    let mut walked: Option<(u16, bool)> = None;
    let mut count = 0;
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|&(_, lid)| lid);
    for (switch, lid) in sorted {
        if walked.map(|(l, _)| l) != Some(lid) {
            let owned = dest_of(&net, &endpoint_of, lids, lid)
                .map(|dest| walk.walk(&net, held, &dest, |_| 0))
                .is_some();
            walked = Some((lid, owned));
        }
        if walked.is_some_and(|(_, owned)| owned) && walk.reaches(dense[&switch]) {
            count += 1;
        }
    }
    count
}

/// A changed entry that still forwards in the held tables.
struct Forwarding {
    switch: NodeId,
    lid: u16,
    /// The held route through it still reached its destination.
    working: bool,
}

/// The entries that differ between `held` and `target`.
struct Changes {
    changed: usize,
    forwarding: Vec<Forwarding>,
}

/// Counts the changed entries and lists those that still forward.
fn changes(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    target: &ForwardingTables,
) -> Changes {
    let net = Network::new(fabric, lids);
    let endpoint_of = endpoint_index(&net);
    let mut changes = Changes {
        changed: 0,
        forwarding: Vec::new(),
    };
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
            changes.changed += 1;
            let forwards = old.is_some_and(|port| {
                port == 0 || net.link_at(PortRef { node: switch, port }).is_some()
            });
            if !forwards {
                continue;
            }
            let owned = *walked.get_or_insert_with(|| {
                dest_of(&net, &endpoint_of, lids, lid)
                    .map(|dest| walk.walk(&net, held, &dest, |_| 0))
                    .is_some()
            });
            changes.forwarding.push(Forwarding {
                switch,
                lid,
                working: owned && walk.reaches(s),
            });
        }
    }
    changes
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

/// Each endpoint port's index in `net.endpoints`, for [`dest_of`].
fn endpoint_index(net: &Network<'_>) -> HashMap<PortRef, usize> {
    net.endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| (e.port, i))
        .collect()
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
