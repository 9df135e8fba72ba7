//! The multicast trees of a staged change.
//!
//! A switch replicates a group's packet to every port of its entry but the one the packet came
//! in on, whichever port that was. While a change is written (OpenSM rewrites the MFT blocks of
//! every switch after each routing pass, 16 ports to a block, so even one entry can be half
//! held and half new), a copy may follow held entries at some switches and new ones at others:
//! round a cycle that the two trees make together, replicated without end (InfiniBand has no
//! hop limit), or down the held tree and up the new one, outside the lanes by port pair.
//!
//! So every pass before the last holds the first-pass trees ([`TreeChange::first_pass`]): each
//! switch keeps, of its entry for a group, the ports that the held and the new tree both have.
//! Any mixture of held entries and these replicates along the held trees only, and any mixture
//! of these and the new entries along the new trees only: the drop argument of the forwarding,
//! for trees. Members that the shrunk trees no longer reach receive nothing of the group
//! between the passes. When the lanes change with a later pass, an entry that could carry a
//! copy across a port pair whose SL-to-VL row changes is emptied as well, so that every copy
//! keeps its VL whichever table its switch holds.

use super::Staging;
use crate::Fabric;
use crate::deadlock::Sl2VlTables;
use crate::routing::{ForwardingTables, MulticastTables, PortSet};
use crate::topology::{NodeId, PortRef};

/// The multicast trees of a change: what the switches hold and what the new routing builds.
/// Empty tables when there is no group.
#[derive(Debug, Clone, Copy)]
pub struct TreeChange<'a> {
    /// The entries the switches hold.
    pub held: &'a MulticastTables,
    /// The entries of the trees built over the new routing.
    pub target: &'a MulticastTables,
}

/// No multicast group.
pub static NO_TREES: MulticastTables = MulticastTables::new();

impl TreeChange<'_> {
    /// Whether there is no group on either side.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty() && self.target.is_empty()
    }

    /// Whether the new trees may be written with any pass: every switch's held entry (its
    /// ports that still carry anything) is part of its new one, so every mixture replicates
    /// along the new trees only. That covers the trees for a pass under one set of lanes.
    pub fn only_grow(&self, fabric: &Fabric) -> bool {
        self.held.switches().all(|s| {
            self.held.table(s).all(|(mlid, ports)| {
                let kept = live(fabric, s, ports);
                kept.is_empty()
                    || self
                        .target
                        .ports(s, mlid)
                        .is_some_and(|new| kept.is_subset(&new))
            })
        })
    }

    /// The entries the passes before the last hold: of every switch's entry for a group, the
    /// ports that both the held and the new tree have (held ports onto cables that are gone
    /// left out). With `lanes` (the held and the new SL-to-VL tables), an entry through which a
    /// copy could cross a port pair whose row differs is left empty.
    pub fn first_pass(
        &self,
        fabric: &Fabric,
        lanes: Option<(&Sl2VlTables, &Sl2VlTables)>,
    ) -> MulticastTables {
        let mut first = MulticastTables::new();
        for s in self.held.switches() {
            for (mlid, ports) in self.held.table(s) {
                let Some(new) = self.target.ports(s, mlid) else {
                    continue;
                };
                let kept = live(fabric, s, ports).intersection(&new);
                let crosses = lanes.is_some_and(|(old_lanes, new_lanes)| {
                    let inputs = inputs(fabric, self.held, s, mlid);
                    crosses_changing_row(s, inputs, kept, old_lanes, new_lanes)
                });
                if !crosses {
                    first.set(s, mlid, kept);
                }
            }
        }
        first
    }

    /// `staging`, a plan for the forwarding from `held` (lanes the same or not:
    /// `same_lanes`), completed with the trees: a first pass holds the `first` trees
    /// ([`Self::first_pass`]); without one, the new trees go with the change when every
    /// mixture replicates along them only ([`Self::only_grow`], and with new lanes nothing
    /// left to shrink), else a first pass of the held forwarding shrinks the trees.
    pub fn complete(
        &self,
        fabric: &Fabric,
        held: &ForwardingTables,
        first: MulticastTables,
        same_lanes: bool,
        staging: Staging,
    ) -> Staging {
        if self.is_empty() {
            return staging;
        }
        let shrunk = self.shrunk(fabric, &first);
        if staging.first_pass.is_some() {
            return Staging {
                first_trees: Some(first),
                trees_shrunk: shrunk,
                ..staging
            };
        }
        if self.only_grow(fabric) && (same_lanes || shrunk == 0) {
            return staging;
        }
        // The forwarding could change at once, the trees cannot: they shrink first, under the
        // held forwarding (every changed entry already drops packets) and lanes.
        Staging {
            first_pass: Some(held.clone()),
            changed: staging.changed,
            dropped: 0,
            dropped_working: 0,
            dropped_for_lanes: 0,
            moved: 0,
            last_pass_unproven: false,
            lanes_pass: false,
            first_trees: Some(first),
            trees_shrunk: shrunk,
        }
    }

    /// The entries (switch, group) whose ports `first` changes against the held ones that
    /// still carry anything: the entries a pass shrinks.
    pub fn shrunk(&self, fabric: &Fabric, first: &MulticastTables) -> usize {
        self.held
            .switches()
            .map(|s| {
                self.held
                    .table(s)
                    .filter(|&(mlid, ports)| {
                        let kept = live(fabric, s, ports);
                        !kept.is_empty() && first.ports(s, mlid).unwrap_or_default() != kept
                    })
                    .count()
            })
            .sum()
    }
}

/// Whether a copy along `trees` can cross a switch from one port to another whose SL-to-VL row
/// differs between `old` and `new`: while it can, the lanes must not change.
pub fn trees_cross_changing_rows(
    fabric: &Fabric,
    trees: &MulticastTables,
    old: &Sl2VlTables,
    new: &Sl2VlTables,
) -> bool {
    trees.switches().any(|s| {
        trees.table(s).any(|(mlid, ports)| {
            crosses_changing_row(
                s,
                inputs(fabric, trees, s, mlid),
                live(fabric, s, ports),
                old,
                new,
            )
        })
    })
}

/// The ports of a switch's entry that can carry anything on `fabric`: port 0 (the switch
/// itself) and cabled ports.
fn live(fabric: &Fabric, switch: NodeId, ports: PortSet) -> PortSet {
    ports
        .iter()
        .filter(|&port| port == 0 || fabric.peer(PortRef { node: switch, port }).is_some())
        .collect()
}

/// The ports a copy for group `mlid` can enter switch `s` on, whatever the entries of `trees`
/// or any part of them the switches hold: port 0 and the ports of CAs and routers (any port
/// may send to a group, member or not), and the switch cables whose far switch has the cable
/// in its entry.
fn inputs(fabric: &Fabric, trees: &MulticastTables, s: NodeId, mlid: u16) -> PortSet {
    (0..=fabric.node(s).num_ports())
        .filter(|&port| {
            port == 0
                || fabric.peer(PortRef { node: s, port }).is_some_and(|far| {
                    !fabric.node(far.node).is_switch()
                        || trees
                            .ports(far.node, mlid)
                            .is_some_and(|p| p.contains(far.port))
                })
        })
        .collect()
}

/// Whether a copy entering switch `s` on a port of `inputs` and leaving on another port of
/// `outputs` (not the switch itself) crosses a port pair whose row differs.
fn crosses_changing_row(
    s: NodeId,
    inputs: PortSet,
    outputs: PortSet,
    old: &Sl2VlTables,
    new: &Sl2VlTables,
) -> bool {
    outputs.iter().filter(|&o| o != 0).any(|o| {
        inputs
            .iter()
            .any(|i| i != o && old.switch_row(s, i, o) != new.switch_row(s, i, o))
    })
}
