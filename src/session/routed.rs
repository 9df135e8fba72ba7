//! A routing as a subnet manager writes it: every switch's entries (port and hops) for every
//! LID, the deadlock scheme's answers, what a later sweep repairs from, and the lines that
//! report it.

use std::sync::Arc;
use std::time::Duration;

use crate::Fabric;
use crate::analysis::prefix::{
    PrefixBalance, layer_loads, prefix_balance, prefixes, table_layer_loads,
};
use crate::collectives::{DetectedMlfm, NotMlfm};
use crate::deadlock::{DeadlockError, DeadlockFree, Guarantee, SchemeOutcome};
use crate::routing::graph::RoutingGraph;
use crate::routing::hierarchy::Hierarchy;
use crate::routing::layers::Layers;
use crate::routing::repair::{RepairReport, target_paths};
use crate::routing::{ForwardingTables, LidError, LidTable};
use crate::topology::{NodeId, PortRef};

use super::answers::{McastBasis, QosAnswers};

/// Why a fabric could not be routed (the message names what was wrong).
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    /// LIDs conflict.
    #[error("LIDs: {0}")]
    Lids(#[from] LidError),
    /// No switch in the subnet.
    #[error("no switches")]
    NoSwitches,
    /// The deadlock scheme does not fit.
    #[error("deadlock avoidance: {0}")]
    Deadlock(#[from] DeadlockError),
    /// `algorithm: mlfm-a2a` on a fabric that is not an MLFM.
    #[error("algorithm mlfm-a2a refused: {0}")]
    NotMlfm(#[from] NotMlfm),
    /// The routing left an entry without a port.
    #[error("no route from switch {switch} to LID {lid} on layer {layer}")]
    Incomplete {
        /// Switch name.
        switch: String,
        /// Destination LID.
        lid: u16,
        /// Layer (LID offset).
        layer: u8,
    },
}

/// One forwarding entry of a switch: destination LID, output port, hops to the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Destination LID.
    pub lid: u16,
    /// Output port (0: the switch itself).
    pub port: u8,
    /// Hops from this switch to the destination port.
    pub hops: u8,
}

/// A routed fabric: every switch's entries for every LID, and the deadlock scheme's answers.
#[derive(Debug)]
pub struct Routed {
    /// The fabric's switches (in fabric order) and their entries, ascending by LID.
    pub switches: Vec<(NodeId, Vec<Entry>)>,
    /// Number of destination LIDs.
    pub lids: usize,
    /// Number of layers routed.
    pub layers: usize,
    /// Number of layers asked for (more than `layers` when VLs ran short).
    pub requested_layers: usize,
    /// Why layers were reduced, one sentence each.
    pub reductions: Vec<String>,
    /// The forwarding tables (what the entries hold), for comparison in tests.
    pub tables: ForwardingTables,
    /// Path SLs and SL-to-VL tables, when a deadlock scheme was applied.
    pub qos: Option<Arc<QosAnswers>>,
    /// One line on the scheme's outcome ("deadlock avoidance off" without one).
    pub deadlock_summary: String,
    /// Which senders the routing is deadlock-free for (`None` without a scheme).
    pub guarantee: Option<Guarantee>,
    /// The scheme that made the routing deadlock-free and what it found (`None` without one):
    /// the sweep log and the metrics name the scheme in force.
    pub scheme: Option<SchemeOutcome>,
    /// What a later sweep can repair from (lanes by port pair only).
    pub base: Option<Arc<RepairBase>>,
    /// What the repair changed, when this routing is a repair.
    pub repair: Option<Repair>,
    /// What the multicast trees of this routing are built over.
    pub multicast: Arc<McastBasis>,
    /// How evenly the summed routes of each prefix of layers 0..K (K = 1, 2, 4, …) spread over
    /// the switch-to-switch links (parallel cables counted as one link): MPI stacks split bulk data evenly over such a prefix, so each must be
    /// balanced on its own (cheap figures; `ibfabric analyze` gives the throughput).
    pub prefix_balance: Vec<PrefixBalance>,
    /// Time the routing took.
    pub elapsed: Duration,
}

/// The balance of each prefix of `layers` ([`Routed::prefix_balance`]).
///
/// From the tables on hierarchical fabrics, whose tables spread the LIDs of a destination
/// switch over next hops the layers' trees do not show; from the trees elsewhere (the same
/// figures, cheaper).
pub(super) fn balance_of_prefixes(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
    tables: &ForwardingTables,
) -> Vec<PrefixBalance> {
    let loads = if Hierarchy::recognise(graph).is_some() {
        table_layer_loads(fabric, graph, lids, tables, layers.count())
    } else {
        layer_loads(graph, layers)
    };
    prefix_balance(&loads, &prefixes(layers.count()))
}

/// One log line on [`Routed::prefix_balance`], e.g. "summed routes of layers 0..K, max/mean:
/// K = 1 1.00, K = 2 1.04, K = 4 1.02".
pub fn prefix_balance_line(balance: &[PrefixBalance]) -> String {
    let figures: Vec<String> = balance
        .iter()
        .map(|b| format!("K = {} {:.2}", b.layers, b.max_over_mean))
        .collect();
    format!(
        "prefixes of layers as MPI splits bulk data over them (summed routes of layers 0..K, \
         max/mean per switch-to-switch link, parallel cables as one): {}",
        figures.join(", ")
    )
}

/// A routing made deadlock-free by lanes by port pair, with the fabric it was made for: a
/// later sweep that finds cables, switches or hosts lost repairs it instead of routing anew.
#[derive(Debug)]
pub struct RepairBase {
    pub(super) fabric: Fabric,
    pub(super) graph: RoutingGraph,
    pub(super) done: DeadlockFree,
    /// The MLFM the routing laid out (`algorithm: mlfm-a2a`): a repair names what it lost
    /// and checks the schedules on the repaired tables.
    pub(super) mlfm: Option<Arc<DetectedMlfm>>,
}

impl RepairBase {
    /// The deadlock-free routing repaired from: its tables, path SLs, SL-to-VL tables and
    /// the scheme's outcome.
    pub fn routing(&self) -> &DeadlockFree {
        &self.done
    }
}

/// A repair's outcome, for the log.
#[derive(Debug, Clone)]
pub struct Repair {
    /// Switch-to-switch cables lost since the routing repaired.
    pub lost_cables: usize,
    /// Switches lost.
    pub lost_switches: usize,
    /// Switch-to-switch cables and switches the routing repaired did not have, routed in
    /// without changing the routes of the others.
    pub gained_cables: usize,
    /// Switches gained (see `gained_cables`).
    pub gained_switches: usize,
    /// Layers of the repaired routing.
    pub layers: usize,
    /// (layer, switch, destination switch) routes and switch pairs counted as the core counts
    /// them.
    pub report: RepairReport,
}

impl std::fmt::Display for Repair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.report;
        let plural =
            |n: usize, one: &'static str, more: &'static str| if n == 1 { one } else { more };
        write!(
            f,
            "repaired after losing {} cable{} and {} switch{}",
            self.lost_cables,
            plural(self.lost_cables, "", "s"),
            self.lost_switches,
            plural(self.lost_switches, "", "es"),
        )?;
        if self.gained_cables + self.gained_switches > 0 {
            write!(
                f,
                " and gaining {} cable{} and {} switch{} (routed in, the other routes kept)",
                self.gained_cables,
                plural(self.gained_cables, "", "s"),
                self.gained_switches,
                plural(self.gained_switches, "", "es"),
            )?;
        }
        write!(
            f,
            ": {} of the routes changed, {} had to (churn {:.2})",
            r.changed,
            r.crossing,
            r.churn()
        )?;
        write!(
            f,
            "; {} switch pair{} with fewer disjoint paths than before ({} below {}); the disjoint \
             repair changed {} more route{} of a budget of {} (routes that had to change but \
             did not)",
            r.degraded,
            plural(r.degraded as usize, "", "s"),
            r.below_target,
            target_paths(self.layers),
            r.spent,
            plural(r.spent as usize, "", "s"),
            r.budget
        )?;
        if let Some(why) = &r.full_routing {
            write!(f, "; routed in full: {why}")?;
        }
        Ok(())
    }
}

/// Every switch's entries (port and hops) for every LID, checked complete.
pub(super) fn entries(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
    tables: &ForwardingTables,
) -> Result<Vec<(NodeId, Vec<Entry>)>, RouteError> {
    let mut switches = Vec::with_capacity(graph.len());
    for (s, &id) in graph.nodes.iter().enumerate() {
        let mut entries = Vec::new();
        for (lid, owner) in lids.iter() {
            let (t, layer, extra) =
                destination(fabric, graph, layers, owner.node, owner.port, owner.offset);
            let incomplete = || RouteError::Incomplete {
                switch: fabric.node(id).name.clone(),
                lid,
                layer: owner.offset,
            };
            let Some(t) = t else {
                // An endpoint not cabled to a switch: no switch can route it.
                continue;
            };
            let port = tables.port(id, lid).ok_or_else(incomplete)?;
            let hops = if s == t {
                0
            } else {
                layers.hops(layer, s, t).ok_or_else(incomplete)?
            };
            entries.push(Entry {
                lid,
                port,
                hops: hops.saturating_add(extra),
            });
        }
        switches.push((id, entries));
    }
    Ok(switches)
}

/// The switch index a LID is delivered by, the layer it is routed on, and the hops beyond
/// that switch (1 for an endpoint's cable, 0 for the switch itself) — as
/// [`crate::routing::forwarding_tables`] does.
fn destination(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    node: NodeId,
    port: u8,
    offset: u8,
) -> (Option<usize>, usize, u8) {
    if fabric.node(node).is_switch() {
        return (Some(graph.index_of[node.index()] as usize), 0, 0);
    }
    let layer = usize::from(offset) % layers.count();
    match fabric.peer(PortRef { node, port }) {
        Some(peer) if fabric.node(peer.node).is_switch() => {
            (Some(graph.index_of[peer.node.index()] as usize), layer, 1)
        }
        _ => (None, layer, 0),
    }
}
