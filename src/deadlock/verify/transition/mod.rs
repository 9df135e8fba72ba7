//! The check of a change: from the tables a fabric held (old) to the tables written over them
//! (new), both on the fabric as it is now.
//!
//! A subnet manager writes forwarding tables block by block, switch by switch, and SL-to-VL
//! tables port by port, with no barrier: while it writes, a packet meets each switch before or
//! after that switch's update, independently of the others, and a switch can be written while
//! the packet is elsewhere. So a packet for a destination may take, at every switch, the old or
//! the new next hop, and on every hop the lane of the old or the new SL-to-VL table of that
//! switch (and of its source port). Tables that are safe before and after can still loop or
//! deadlock in between.
//!
//! The check covers every such mixture without enumerating them:
//! * **Loops**: per destination LID, the union of old and new next hops over the live cables
//!   must have no directed cycle ([`hops`]): a cycle of the union is a forwarding loop under
//!   the update order that leaves each of its switches on the entry that makes it.
//! * **Deadlock**: the channel dependency graph of every mixed route. Per destination the walk
//!   of the snapshot verifier follows both next hops and both lanes at every hop; a tail from a
//!   (link, VL, SL) state is the same whatever came before (each switch is chosen on its own),
//!   so the memo of the snapshot walk stays exact: per destination the walk visits the same
//!   (link, VL) states as the snapshot's, each with up to four successors (two next hops × two
//!   lanes) instead of one. Without loops, every walk of the union is simple and is realised
//!   by a fixed old/new choice per switch, so the graph equals the union of the graphs of all
//!   2^n states (the brute-force test proves it on small fabrics). With loops it holds more:
//!   the dependencies of packets that circle while switches change — the loop is reported
//!   first.
//! * **Multicast**: a switch replicates by its old or new MFT entry (or, written in blocks of
//!   ports, a mixture of both), so a copy may leave on every port of their union.
//!
//! An old next hop onto a cable that no longer exists, or a port that is down, drops the packet:
//! no dependency, only a count. Each route carries every SL 0..15 unless path SLs are asked for:
//! a client may hold a path SL from before the change, so only "whatever the SL" covers both.

mod hops;
mod names;
mod render;
mod scan;
#[cfg(test)]
mod tests;

pub use hops::Entry;
pub(super) use names::name_destinations;

use serde::{Deserialize, Serialize};

use super::dependencies::Dependencies;
use super::multicast::Multicast;
use super::routes::{Old, Routes};
use super::verdict::Verdict;
use super::{Scanned, VerifyOptions, conclude};
use crate::deadlock::network::{BrokenRoutes, Channels, Traffic, chunks, threads};
use crate::deadlock::path_sl::PathSl;
use crate::deadlock::sl2vl::Sl2VlTables;
use crate::routing::{ForwardingTables, LidTable, MulticastTables};
use crate::topology::Fabric;
use scan::{MixedScan, scan_mixed};

/// The tables a fabric held before a change, read on the fabric after it.
#[derive(Debug, Clone, Copy)]
pub struct Before<'b> {
    /// Forwarding tables.
    pub tables: &'b ForwardingTables,
    /// SL-to-VL tables.
    pub sl2vl: &'b Sl2VlTables,
    /// Multicast forwarding tables, when multicast is checked.
    pub multicast: Option<&'b MulticastTables>,
}

/// The tables a fabric holds after a change (what a snapshot check takes).
#[derive(Clone, Copy)]
pub struct After<'a> {
    /// Forwarding tables.
    pub tables: &'a ForwardingTables,
    /// The path SLs, used with [`super::RouteSls::PathSl`].
    pub path_sl: &'a dyn PathSl,
    /// SL-to-VL tables.
    pub sl2vl: &'a Sl2VlTables,
    /// Multicast groups, when multicast is checked (their SLs serve the old entries too).
    pub multicast: Option<&'a Multicast<'a>>,
}

/// A forwarding loop some update order makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransitionLoop {
    /// The destination LID.
    pub lid: u16,
    /// The hops of the loop, in order; the last leads back to the first switch.
    pub hops: Vec<LoopHop>,
}

/// One hop of a loop: a switch and the entry it forwards by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopHop {
    /// The switch.
    pub switch: String,
    /// The port it sends the LID out on.
    pub port: u8,
    /// Whether the old entry, the new one or both name that port.
    pub entry: Entry,
}

/// What the check of a change found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransitionVerdict {
    /// (switch, destination LID) entries that differ between the old and the new tables.
    pub changed_entries: usize,
    /// (switch, destination LID) old entries that drop packets on the fabric as it is (a lost
    /// cable, a port that is down, no entry): no dependency, the packets are lost.
    pub old_entries_dropped: usize,
    /// Destination LIDs for which some update order makes a forwarding loop.
    pub looping_lids: usize,
    /// Some of those loops (as many as examples are listed), ascending by LID.
    pub loops: Vec<TransitionLoop>,
    /// The channel dependency graph of every mixture of old and new tables: its `loops` is
    /// [`Self::looping_lids`], its cycles name the destination LIDs that make them.
    pub mixtures: Verdict,
}

impl TransitionVerdict {
    /// No update order loops and no mixture of the tables can deadlock.
    pub fn is_safe(&self) -> bool {
        self.looping_lids == 0 && self.mixtures.is_deadlock_free()
    }
}

/// Checks the change from `before` to `after` on `fabric`: every order in which the switches'
/// entries and SL-to-VL tables can be rewritten (see the module documentation).
pub fn verify_transition(
    fabric: &Fabric,
    lids: &LidTable,
    before: &Before<'_>,
    after: &After<'_>,
    options: &VerifyOptions,
) -> TransitionVerdict {
    let net = Channels::new(
        fabric,
        lids,
        Traffic {
            switch_lids: options.switch_lids,
        },
    );
    let old = Old {
        tables: before.tables,
        sl2vl: before.sl2vl,
    };
    let routes = Routes {
        net: &net,
        tables: after.tables,
        path_sl: after.path_sl,
        sl2vl: after.sl2vl,
        sls: options.sls,
        cap: options.max_listed,
        old: Some(old),
    };
    let cap = options.max_listed;
    let mapped = after.sl2vl.vls_mapped() | before.sl2vl.vls_mapped();
    let parts = chunks(net.dests.len(), threads());
    let scans: Vec<MixedScan> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|range| scope.spawn(move || scan_mixed(routes, old, mapped, range.clone())))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a verifier thread panicked"))
            .collect()
    });
    let mut deps = Dependencies::new(mapped, net.turns(), net.links.len());
    let (mut broken, mut dropped) = (BrokenRoutes::default(), BrokenRoutes::default());
    let (mut checked, mut changed, mut old_dropped, mut looping) = (0u64, 0, 0, 0);
    let mut loops = Vec::new();
    for part in scans {
        deps.merge(&part.deps);
        broken.merge(part.broken, cap);
        dropped.merge(part.dropped, cap);
        checked += part.routes;
        changed += part.changed;
        old_dropped += part.old_dropped;
        looping += part.looping;
        loops.extend(part.loops);
    }
    loops.truncate(cap);
    let union = after
        .multicast
        .map(|m| union_tables(m.tables, before.multicast));
    let multicast = after
        .multicast
        .zip(union.as_ref())
        .map(|(m, tables)| Multicast {
            tables,
            sls: m.sls,
            default_sl: m.default_sl,
        });
    let mixtures = conclude(
        routes,
        deps,
        Scanned {
            routes: checked,
            broken,
            loops: looping,
            dropped,
        },
        multicast.as_ref(),
        [Some(after.sl2vl), Some(before.sl2vl)],
        options,
    );
    TransitionVerdict {
        changed_entries: changed,
        old_entries_dropped: old_dropped,
        looping_lids: looping,
        loops,
        mixtures,
    }
}

/// The multicast groups of either table, each switch's entry the union of its old and new
/// ports: every set of ports a copy may leave on while the entry is rewritten (an MFT is
/// written in blocks of ports, so even one entry can be half old, half new).
pub(super) fn union_tables(
    new: &MulticastTables,
    old: Option<&MulticastTables>,
) -> MulticastTables {
    let mut tables = new.clone();
    if let Some(old) = old {
        for s in old.switches() {
            for (mlid, ports) in old.table(s) {
                for p in ports.iter() {
                    tables.add_port(s, mlid, p);
                }
            }
        }
    }
    tables
}

/// The dependencies of every mixture as (link, VL) → (link, VL) pairs, for the brute-force
/// test.
#[cfg(test)]
pub(super) fn mixed_dependencies(
    fabric: &Fabric,
    lids: &LidTable,
    before: &Before<'_>,
    after: &After<'_>,
    options: &VerifyOptions,
) -> std::collections::BTreeSet<((u32, u8), (u32, u8))> {
    let net = Channels::new(
        fabric,
        lids,
        Traffic {
            switch_lids: options.switch_lids,
        },
    );
    let old = Old {
        tables: before.tables,
        sl2vl: before.sl2vl,
    };
    let routes = Routes {
        net: &net,
        tables: after.tables,
        path_sl: after.path_sl,
        sl2vl: after.sl2vl,
        sls: options.sls,
        cap: options.max_listed,
        old: Some(old),
    };
    let mapped = after.sl2vl.vls_mapped() | before.sl2vl.vls_mapped();
    let deps = scan_mixed(routes, old, mapped, 0..net.dests.len()).deps;
    let mut out = std::collections::BTreeSet::new();
    for (a, link) in net.links.iter().enumerate() {
        if link.to_switch == crate::routing::walk::NONE {
            continue;
        }
        for &b in net.out_links(link.to_switch as usize) {
            let turn = net.turn(a as u32, b);
            for x in 0..deps.nv {
                for y in 0..deps.nv {
                    if deps.has(turn, x, y) {
                        out.insert(((a as u32, deps.vl_of[x]), (b, deps.vl_of[y])));
                    }
                }
            }
        }
    }
    out
}
