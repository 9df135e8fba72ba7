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
//!
//! The multicast trees follow the same argument ([`trees`]): until the last pass every
//! switch's entry for a group holds only the ports the held and the new tree share.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::sweep_record::{PassFigures, PassKind};
use crate::Fabric;
use crate::deadlock::verify::{After, Before, Multicast, TransitionVerdict, verify_transition};
use crate::deadlock::{DefaultSl, RouteSls, Sl2VlTables, VerifyOptions};
use crate::routing::walk::{Dest, DestWalk, Network};
use crate::routing::{ForwardingTables, LidTable, MulticastTables, NO_PORT};
use crate::topology::{NodeId, PortRef};

pub mod trees;

pub use trees::{NO_TREES, TreeChange, trees_cross_changing_rows};

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
    /// The multicast entries to hold with `first_pass`: per switch and group, the ports both
    /// the held and the new tree have ([`TreeChange::first_pass`]). `None`: the new trees go
    /// with the pass written now (or the plan was made without trees).
    pub first_trees: Option<MulticastTables>,
    /// Multicast entries (switch, group) `first_trees` shrinks: the members they led to
    /// receive nothing of the group until the last pass.
    pub trees_shrunk: usize,
}

impl Staging {
    /// The number of passes the change takes: 0 without a change, 1 when the new tables can
    /// be written at once, 2 with a drop pass.
    pub fn passes(&self) -> usize {
        match (&self.first_pass, self.changed) {
            (Some(_), _) => 2,
            (None, 0) => 0,
            (None, _) => 1,
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
                trees_shrunk: self.trees_shrunk,
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
                trees_shrunk: self.trees_shrunk,
            },
            None => PassFigures {
                kind: PassKind::Install,
                written: self.changed,
                dropped: 0,
                dropped_working: 0,
                moved: self.moved,
                blocks: 0,
                trees_shrunk: 0,
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
        first_trees: None,
        trees_shrunk: 0,
    }
}

/// As [`stage`], for a change whose SL-to-VL tables go from `held.lanes` (what the ports hold;
/// the first pass keeps them) to `target.lanes` (written with the last pass) and whose
/// multicast trees go from `held.trees` to `target.trees` (the passes before the last hold
/// the trees to what both share, [`trees`]), with two gains where the transition verifier
/// can prove them (every mixture of forwarding entries, SL-to-VL tables and tree entries
/// loop-free and deadlock-free for every route and group on every SL):
///
/// * when the lanes change and no held route crosses a switch from an input to an output whose
///   SL-to-VL row changes (a cable that came back changes only its own rows), the lanes change
///   first, in a pass of their own ([`Staging::lanes_pass`]) that needs no proof: every hop
///   keeps its VL whichever table its switch holds. The forwarding then changes under the same
///   lanes, staged afresh;
/// * with `spare_working`, routes that still work are not dropped without need: the change is
///   written at once when that is proven safe; else the first pass moves the entries of every
///   LID whose old and new next hops form no loop and drops only the changed entries of the
///   others, when both passes are proven safe. When a mixture of that pass has a cycle, the
///   destinations that make one dependency of it are dropped too and the pass is tried again,
///   up to [`SPARING_ROUNDS`] times while the cycles shrink;
/// * when the lanes change otherwise, the last pass of [`stage`]'s plan (which the drop
///   argument covers only for unchanged lanes) is checked; when it cannot be proven, the first
///   pass also drops the entries of the routes that cross a changing row, so that the lanes
///   pass can follow, and the last pass installs the new entries under the new lanes only (the
///   drop argument). Only when an endport's own row changes is that impossible:
///   [`Staging::last_pass_unproven`] says so.
///
/// Costs no run of the verifier when no changed entry still carried traffic (or not
/// `spare_working`) and the lanes stay, or change off the held routes; else one run for the
/// whole change, up to [`SPARING_ROUNDS`] more (two each when the lanes change) and one for
/// the last pass (parallel, linear in routes × hops; `cargo bench --bench staging`: about
/// 130 ms a run on Slim Fly q = 7, 1 s on q = 11, on 2 cores).
pub fn stage_with_proof(
    fabric: &Fabric,
    lids: &LidTable,
    held: Tables<'_>,
    target: Tables<'_>,
    spare_working: bool,
) -> Staging {
    let trees = TreeChange {
        held: held.trees,
        target: target.trees,
    };
    let same_lanes = held.lanes.same_lanes(target.lanes, fabric);
    let first_trees = trees.first_pass(fabric, (!same_lanes).then_some((held.lanes, target.lanes)));
    let (staging, trees_proven) = stage_forwarding(
        fabric,
        lids,
        held,
        target,
        &first_trees,
        same_lanes,
        spare_working,
    );
    if trees_proven {
        return staging;
    }
    trees.complete(fabric, held.forwarding, first_trees, same_lanes, staging)
}

/// What the switches hold, or what a change writes: the forwarding, the lanes and the
/// multicast trees ([`trees::NO_TREES`] without groups).
#[derive(Debug, Clone, Copy)]
pub struct Tables<'a> {
    /// The forwarding tables.
    pub forwarding: &'a ForwardingTables,
    /// The SL-to-VL tables.
    pub lanes: &'a Sl2VlTables,
    /// The multicast forwarding tables.
    pub trees: &'a MulticastTables,
}

/// The forwarding part of [`stage_with_proof`], given the trees of its first pass (in every
/// proof) and whether the lanes stay. Also says whether the pass it plans to write at once
/// was proven with the new trees.
fn stage_forwarding(
    fabric: &Fabric,
    lids: &LidTable,
    held: Tables<'_>,
    target: Tables<'_>,
    first_trees: &MulticastTables,
    same_lanes: bool,
    spare_working: bool,
) -> (Staging, bool) {
    let (old_lanes, new_lanes) = (held.lanes, target.lanes);
    let (held_trees, new_trees) = (held.trees, target.trees);
    let (held, target) = (held.forwarding, target.forwarding);
    let plain = stage(fabric, lids, held, target);
    if same_lanes && (plain.changed == 0 || plain.dropped_working == 0 || !spare_working) {
        return (plain, false);
    }
    // A change of lanes that no held route crosses is written first, in a pass of its own: it
    // needs no proof and drops nothing, and the forwarding then changes under the same lanes.
    let endports_change = !same_lanes && endport_rows_change(fabric, old_lanes, new_lanes);
    let off_held = (!same_lanes && !endports_change)
        .then(|| off_changed_lanes(fabric, lids, held, held, old_lanes, new_lanes));
    if off_held.as_ref().is_some_and(|off| off.dropped == 0)
        && !trees_cross_changing_rows(fabric, held_trees, old_lanes, new_lanes)
    {
        return (
            Staging {
                first_pass: Some(held.clone()),
                dropped: 0,
                dropped_working: 0,
                dropped_for_lanes: 0,
                moved: 0,
                last_pass_unproven: false,
                lanes_pass: true,
                ..plain
            },
            false,
        );
    }
    let with_trees = !(held_trees.is_empty() && new_trees.is_empty());
    let proven = |from: (&ForwardingTables, &Sl2VlTables, &MulticastTables),
                  to: (&ForwardingTables, &Sl2VlTables, &MulticastTables)| {
        let no_sls = BTreeMap::new();
        let to_trees = Multicast {
            tables: to.2,
            sls: &no_sls,
            default_sl: 0,
        };
        verify_transition(
            fabric,
            lids,
            &Before {
                tables: from.0,
                sl2vl: from.1,
                multicast: with_trees.then_some(from.2),
            },
            &After {
                tables: to.0,
                path_sl: &DefaultSl(0),
                sl2vl: to.1,
                multicast: with_trees.then_some(&to_trees),
            },
            &VerifyOptions {
                switch_lids: true,
                max_listed: usize::MAX,
                sls: RouteSls::EverySl,
            },
        )
    };
    let at_once = proven(
        (held, old_lanes, held_trees),
        (target, new_lanes, new_trees),
    );
    if at_once.is_safe() {
        return (
            Staging {
                first_pass: None,
                dropped: 0,
                dropped_working: 0,
                moved: plain.dropped,
                ..plain
            },
            true,
        );
    }
    if spare_working && plain.dropped_working > 0 {
        let changes = changes(fabric, lids, held, target);
        let mut held_back: HashSet<u16> = at_once.loops.iter().map(|l| l.lid).collect();
        let mut last_cyclic = None;
        for _ in 0..SPARING_ROUNDS {
            let mut first = held.clone();
            let (mut moved, mut dropped, mut dropped_working) = (HashSet::new(), 0, 0);
            for c in &changes.forwarding {
                if held_back.contains(&c.lid) {
                    first.set(c.switch, c.lid, NO_PORT);
                    dropped += 1;
                    dropped_working += usize::from(c.working);
                } else {
                    first.set(
                        c.switch,
                        c.lid,
                        target.port(c.switch, c.lid).unwrap_or(NO_PORT),
                    );
                    moved.insert(c.lid);
                }
            }
            if moved.is_empty() {
                break;
            }
            let verdict = proven(
                (held, old_lanes, held_trees),
                (&first, old_lanes, first_trees),
            );
            if verdict.is_safe()
                && (same_lanes
                    || proven(
                        (&first, old_lanes, first_trees),
                        (target, new_lanes, new_trees),
                    )
                    .is_safe())
            {
                let moved_entries = changes.forwarding.len() - dropped;
                // Entries that did not forward before are new ones: the next pass writes them.
                // With the trees to shrink, the pass is written even when it is the target.
                let first_pass = (first != *target || *first_trees != *new_trees).then_some(first);
                return (
                    Staging {
                        first_pass,
                        dropped,
                        dropped_working,
                        moved: moved_entries,
                        ..plain
                    },
                    false,
                );
            }
            let more = culprits(&verdict, &moved);
            let cyclic = cyclic_channels(&verdict);
            // Cycles that many destinations make (the return to a full routing after a
            // repair) barely shrink from round to round: stop rather than spend more time
            // under the lock.
            if more.is_empty() || last_cyclic.is_some_and(|last| cyclic * 4 > last * 3) {
                break;
            }
            last_cyclic = Some(cyclic);
            held_back.extend(more);
        }
    }
    if same_lanes {
        return (plain, false);
    }
    let last_proven = match &plain.first_pass {
        Some(first) => proven(
            (first, old_lanes, first_trees),
            (target, new_lanes, new_trees),
        )
        .is_safe(),
        // The last pass is the whole change, already checked.
        None => false,
    };
    if last_proven {
        return (plain, false);
    }
    // Else the first pass also takes the held routes that cross a changing row off it.
    let Some(off_held) = off_held else {
        return (
            Staging {
                last_pass_unproven: true,
                ..plain
            },
            false,
        );
    };
    let off = match &plain.first_pass {
        Some(first) => off_changed_lanes(fabric, lids, held, first, old_lanes, new_lanes),
        None => off_held,
    };
    (
        Staging {
            first_pass: Some(off.tables),
            dropped: plain.dropped + off.dropped,
            dropped_working: plain.dropped_working + off.dropped_working,
            dropped_for_lanes: off.dropped,
            moved: 0,
            last_pass_unproven: false,
            lanes_pass: false,
            ..plain
        },
        false,
    )
}

/// `first` with the entries dropped that would carry packets across a port pair whose
/// SL-to-VL row changes between `old_lanes` and `new_lanes`.
struct OffChangedLanes {
    tables: ForwardingTables,
    /// Entries it drops beyond `first`'s.
    dropped: usize,
    /// Of them, those whose held route still reached its destination.
    dropped_working: usize,
}

/// How many times [`stage_with_proof`] holds back the destinations that make a cycle of the
/// mixtures and tries again to move the others at once: each try is a run of the verifier
/// under the subnet manager's lock.
const SPARING_ROUNDS: usize = 4;

/// The destination LIDs to hold back (drop rather than move) so that the mixtures `verdict`
/// found unsafe lose their loops and cycles: every LID that loops, and in each cycle the
/// moved LIDs of the dependency that the most of them make (holding back the most per round
/// breaks the cycles in fewer runs of the verifier; a dependency no moved LID makes cannot be
/// broken by holding one back). `moved`: the LIDs whose changed entries the checked
/// pass moved.
fn culprits(verdict: &TransitionVerdict, moved: &HashSet<u16>) -> HashSet<u16> {
    let mut lids: HashSet<u16> = verdict.loops.iter().map(|l| l.lid).collect();
    let cycles = verdict.mixtures.cycle.iter().chain(
        verdict
            .mixtures
            .cyclic_components
            .iter()
            .filter_map(|c| c.cycle.as_ref()),
    );
    for cycle in cycles {
        let most = cycle
            .channels
            .iter()
            .map(|c| {
                c.dlids
                    .iter()
                    .copied()
                    .filter(|lid| moved.contains(lid))
                    .collect::<Vec<u16>>()
            })
            .filter(|made| !made.is_empty())
            .max_by_key(Vec::len);
        lids.extend(most.into_iter().flatten());
    }
    lids
}

/// The channels in the cyclic components of the mixtures `verdict` checked.
fn cyclic_channels(verdict: &TransitionVerdict) -> usize {
    verdict
        .mixtures
        .cyclic_components
        .iter()
        .map(|c| c.channels)
        .sum()
}

/// Whether the row of a cabled CA or router port changes: its first hop's VL would change on
/// every route it sends, which no forwarding can avoid.
fn endport_rows_change(fabric: &Fabric, old_lanes: &Sl2VlTables, new_lanes: &Sl2VlTables) -> bool {
    fabric.nodes().iter().enumerate().any(|(i, node)| {
        !node.is_switch()
            && (1..=node.num_ports()).any(|port| {
                let p = PortRef {
                    node: NodeId(i as u32),
                    port,
                };
                fabric.peer(p).is_some() && old_lanes.port_row(p) != new_lanes.port_row(p)
            })
    })
}

/// The forwarding under which a change of lanes is safe in any order, when no endport's row
/// changes ([`endport_rows_change`]): no packet crosses a switch from an input port to an
/// output port whose row changes, so every hop keeps its VL whichever table the switch holds
/// (the routes are a subset of `first`'s, which are safe with the old lanes).
///
/// An entry (switch, LID) is dropped only when a packet to that LID can reach it through an
/// input whose row to the entry's output changes: port 0 and the ports of CAs, which inject to
/// every LID, or a switch cable whose far switch forwards that LID into it under `first`. The
/// rows of a cable that `first` sends nothing over (one that came back since `first` was
/// computed: its rows are new, but nothing enters through it yet) do not drop anything. Inputs
/// are taken from `first` before any of these drops; a drop only removes inputs, so the
/// result is safe.
fn off_changed_lanes(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    first: &ForwardingTables,
    old_lanes: &Sl2VlTables,
    new_lanes: &Sl2VlTables,
) -> OffChangedLanes {
    let mut tables = first.clone();
    let mut off = Vec::new();
    for s in fabric.switches() {
        let inputs = ChangedInputs::of(fabric, s, old_lanes, new_lanes);
        if inputs.none_changed() {
            continue;
        }
        for (lid, &port) in first.table(s).iter().enumerate() {
            if port == NO_PORT || port == 0 {
                continue;
            }
            let lid = lid as u16;
            if inputs.crossed(port, |far| first.port(far.node, lid) == Some(far.port)) {
                tables.set(s, lid, NO_PORT);
                off.push((s, lid));
            }
        }
    }
    let dropped_working = working(fabric, lids, held, &off);
    OffChangedLanes {
        tables,
        dropped: off.len(),
        dropped_working,
    }
}

/// For one switch, the port pairs whose SL-to-VL row changes, by output port: the inputs that
/// inject to every LID (port 0 and CA ports) and the switch cables, each with the far end that
/// feeds it.
struct ChangedInputs {
    /// Per output port: some injecting input's row to it changes.
    from_injection: Vec<bool>,
    /// Per output port: the far ends (switch, port) of the switch cables whose row to it
    /// changes.
    from_switches: Vec<Vec<PortRef>>,
}

impl ChangedInputs {
    fn of(fabric: &Fabric, s: NodeId, old_lanes: &Sl2VlTables, new_lanes: &Sl2VlTables) -> Self {
        let n = fabric.node(s).num_ports();
        let peer = |port: u8| fabric.peer(PortRef { node: s, port });
        let mut inputs = ChangedInputs {
            from_injection: vec![false; usize::from(n) + 1],
            from_switches: vec![Vec::new(); usize::from(n) + 1],
        };
        for out in (1..=n).filter(|&o| peer(o).is_some()) {
            let o = usize::from(out);
            for i in 0..=n {
                let far = if i == 0 { None } else { peer(i) };
                if (i != 0 && far.is_none())
                    || old_lanes.switch_row(s, i, out) == new_lanes.switch_row(s, i, out)
                {
                    continue;
                }
                match far.filter(|f| fabric.node(f.node).is_switch()) {
                    Some(far) => inputs.from_switches[o].push(far),
                    None => inputs.from_injection[o] = true,
                }
            }
        }
        inputs
    }

    fn none_changed(&self) -> bool {
        !self.from_injection.iter().any(|&c| c) && self.from_switches.iter().all(Vec::is_empty)
    }

    /// Whether a packet leaving through `out` may have entered through a changed row:
    /// `feeds(far)` says whether the far end of a switch cable forwards the packet's LID into
    /// it.
    fn crossed(&self, out: u8, feeds: impl Fn(PortRef) -> bool) -> bool {
        let o = usize::from(out);
        self.from_injection.get(o) == Some(&true)
            || self
                .from_switches
                .get(o)
                .is_some_and(|fars| fars.iter().any(|&far| feeds(far)))
    }
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
    // The differing entries, found switch by switch (each table read in order: read LID by
    // LID across the switches, every entry was a cache miss), then taken LID by LID.
    let mut differing: Vec<(u16, u32)> = Vec::new();
    for (s, &switch) in net.switches.iter().enumerate() {
        let (old, new) = (
            held.table_of(switch).unwrap_or_default(),
            target.table_of(switch).unwrap_or_default(),
        );
        // Equal bytes are equal entries, and unequal ones differ (NO_PORT is the only "none");
        // blocks of the length both tables have are compared whole first.
        let common = old.len().min(new.len()).min(lid_end);
        for (block, (a, b)) in old[..common]
            .chunks(64)
            .zip(new[..common].chunks(64))
            .enumerate()
        {
            if a != b {
                let differs = a.iter().zip(b).enumerate().filter(|(_, (x, y))| x != y);
                differing.extend(differs.map(|(i, _)| ((block * 64 + i) as u16, s as u32)));
            }
        }
        let entry = |table: &[u8], lid: usize| table.get(lid).copied().filter(|&p| p != NO_PORT);
        for lid in common..lid_end {
            if entry(old, lid) != entry(new, lid) {
                differing.push((lid as u16, s as u32));
            }
        }
    }
    differing.sort_unstable();
    for lid_entries in differing.chunk_by(|a, b| a.0 == b.0) {
        let lid = lid_entries[0].0;
        // Whether the held walk of this LID was made (lazily: only LIDs with a dropped entry
        // are walked), and whether the LID has an owner to reach at all.
        let mut walked: Option<bool> = None;
        for &(_, s) in lid_entries {
            let (s, switch) = (s as usize, net.switches[s as usize]);
            let old = held.port(switch, lid);
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
#[cfg(test)]
mod tree_tests;
