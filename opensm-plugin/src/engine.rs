//! The pure part of the plugin: from a copy of OpenSM's subnet (plain records, no pointers) to
//! a [`Fabric`], and from the fabric to every switch's forwarding entries and hop counts.
//! Nothing here touches C; it is unit-tested without OpenSM.

use std::sync::Arc;
use std::time::Duration;

use ibfabric::Fabric;
use ibfabric::analysis::prefix::{PrefixBalance, layer_loads, prefix_balance, prefixes};
use ibfabric::collectives::{self, DetectedMlfm, NotMlfm};
use ibfabric::deadlock::{
    DeadlockError, DeadlockFree, Guarantee, Scheme, SchemeOutcome, Shortage, repair_deadlock_free,
    route_deadlock_free,
};
use ibfabric::options::DeadlockMode;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::layered;
use ibfabric::routing::layers::Layers;
use ibfabric::routing::repair::{FabricChanges, RepairReport, target_paths};
use ibfabric::routing::{
    Algorithm, ForwardingTables, LidError, LidTable, RoutingConfig, forwarding_tables,
};
use ibfabric::topology::{
    FabricError, Guid, LinkSpeed, LinkWidth, NodeId, NodeKind, NodeSpec, PortRef, link_rate,
};

use crate::multicast::McastBasis;
use crate::qos::QosAnswers;

/// One node of the subnet as OpenSM knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRecord {
    /// Switch, CA or router.
    pub kind: NodeKind,
    /// Node GUID (host order).
    pub guid: u64,
    /// NodeDescription.
    pub description: String,
    /// Ports 0..=num_ports (`None` for a port OpenSM has no valid record of).
    pub ports: Vec<Option<PortRecord>>,
}

/// One physical port of a [`NodeRecord`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortRecord {
    /// Port GUID (host order).
    pub guid: u64,
    /// Base LID (host order; 0 if unassigned).
    pub lid: u16,
    /// LMC.
    pub lmc: u8,
    /// VLCap as PortInfo encodes it (1: VL0, 2: VL0–1, 3: VL0–3, 4: VL0–7, 5: VL0–14; 0 if
    /// unknown); see [`data_vls`].
    pub vl_cap: u8,
    /// PortInfo LinkWidthActive (1: 1x, 2: 4x, 4: 8x, 8: 12x, 16: 2x; 0 if unknown).
    pub width_active: u8,
    /// PortInfo LinkSpeedActive (1: SDR, 2: DDR, 4: QDR; 0 if unknown).
    pub speed_active: u8,
    /// PortInfo LinkSpeedExtActive (1: FDR, 2: EDR, 4: HDR, 8: NDR; 0: none), which overrides
    /// LinkSpeedActive when set.
    pub speed_ext_active: u8,
    /// The port at the other end of the cable: (record index, port number).
    pub remote: Option<(usize, u8)>,
}

/// Why the subnet could not be routed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The records do not make a fabric.
    #[error("subnet snapshot: {0}")]
    Fabric(#[from] FabricError),
    /// LIDs conflict.
    #[error("LIDs: {0}")]
    Lids(#[from] LidError),
    /// A port number beyond what OpenSM said the node has.
    #[error("node {guid:#018x} port {port}: {what}")]
    BadPort {
        /// Node GUID.
        guid: u64,
        /// Port.
        port: u8,
        /// What is wrong.
        what: &'static str,
    },
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

/// The canonical fabric of a snapshot: switches sorted by node GUID, then CAs and routers
/// sorted by node GUID. Routing depends on the switch order, so the same subnet always routes
/// the same way whatever order OpenSM discovered it in (and a test can rebuild it from
/// `ibnetdiscover`). Returns the fabric and, for each fabric node, its record index.
///
/// # Errors
/// Duplicate GUIDs or cables to ports that do not exist.
pub fn build_fabric(
    name: &str,
    records: &[NodeRecord],
) -> Result<(Fabric, Vec<usize>), EngineError> {
    let order = canonical_order(records);
    let mut node_of = vec![None; records.len()];
    let mut fabric = Fabric::new(name);
    for &i in &order {
        let r = &records[i];
        let num_ports =
            u8::try_from(r.ports.len().saturating_sub(1)).map_err(|_| EngineError::BadPort {
                guid: r.guid,
                port: u8::MAX,
                what: "more than 255 ports",
            })?;
        let id = fabric.add_node(NodeSpec {
            kind: r.kind,
            name: format!("{}-{:016x}", r.kind.id_prefix(), r.guid),
            description: r.description.clone(),
            guid: Guid(r.guid),
            num_ports,
            rack: None,
        })?;
        node_of[i] = Some(id);
        let node = fabric.node_mut(id);
        for (p, port) in r.ports.iter().enumerate() {
            if let Some(port) = port {
                let slot = &mut node.ports[p];
                slot.guid = Guid(port.guid);
                slot.lid = port.lid;
                slot.lmc = port.lmc;
            }
        }
    }
    for &i in &order {
        let r = &records[i];
        let a_node = node_of[i].expect("every record has a node");
        for (p, port) in r.ports.iter().enumerate().skip(1) {
            let Some((remote, remote_port)) = port.as_ref().and_then(|port| port.remote) else {
                continue;
            };
            let Some(b_node) = node_of.get(remote).copied().flatten() else {
                continue;
            };
            let a = PortRef {
                node: a_node,
                port: p as u8,
            };
            let b = PortRef {
                node: b_node,
                port: remote_port,
            };
            // Each cable is seen from both ends: add it from the smaller end.
            if (a.node, a.port) < (b.node, b.port) {
                if remote_port == 0 {
                    return Err(EngineError::BadPort {
                        guid: records[remote].guid,
                        port: 0,
                        what: "cable on port 0",
                    });
                }
                let rate = |record: &NodeRecord, port: usize| {
                    record.ports[port]
                        .as_ref()
                        .map_or((None, None), PortRecord::rate)
                };
                let (wa, sa) = rate(r, p);
                let (wb, sb) = rate(&records[remote], usize::from(remote_port));
                fabric.connect(a, b, link_rate(wa, wb), link_rate(sa, sb))?;
            }
        }
    }
    let fabric_order = {
        let mut v = vec![0; records.len()];
        for (i, id) in node_of.iter().enumerate() {
            if let Some(id) = id {
                v[id.index()] = i;
            }
        }
        v
    };
    Ok((fabric, fabric_order))
}

impl PortRecord {
    /// The width and speed the link runs at, as this port reports them.
    pub fn rate(&self) -> (Option<LinkWidth>, Option<LinkSpeed>) {
        (
            LinkWidth::from_portinfo_bit(self.width_active.into()),
            LinkSpeed::from_portinfo_bits(self.speed_active.into(), self.speed_ext_active.into()),
        )
    }
}

/// Record indexes in canonical order: switches by node GUID, then the other nodes by node GUID.
fn canonical_order(records: &[NodeRecord]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (records[i].kind != NodeKind::Switch, records[i].guid));
    order
}

/// The records in canonical order with their cable ends renumbered to match: two snapshots of
/// the same subnet are equal whatever order OpenSM discovered it in (the plugin compares them
/// to skip routing an unchanged subnet again).
pub fn canonical_records(records: &[NodeRecord]) -> Vec<NodeRecord> {
    let order = canonical_order(records);
    let mut position = vec![usize::MAX; records.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new;
    }
    order
        .iter()
        .map(|&i| {
            let mut record = records[i].clone();
            for port in record.ports.iter_mut().flatten() {
                if let Some((remote, _)) = &mut port.remote {
                    *remote = position.get(*remote).copied().unwrap_or(usize::MAX);
                }
            }
            record
        })
        .collect()
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

/// How the engine makes the routing deadlock-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockSettings {
    /// The scheme(s) to use.
    pub mode: DeadlockMode,
    /// Data VLs available.
    pub vls: u8,
    /// What to do when they do not suffice.
    pub shortage: Shortage,
}

impl DeadlockSettings {
    /// The schemes to try, in order (none: no deadlock avoidance).
    fn schemes(&self) -> Vec<Scheme> {
        self.mode
            .scheme_choice()
            .map_or_else(Vec::new, |choice| choice.schemes(self.vls))
    }
}

/// The data VLs a port with PortInfo VLCap `vl_cap` supports (0 for an unknown encoding).
pub fn data_vls(vl_cap: u8) -> u8 {
    match vl_cap {
        1 => 1,
        2 => 2,
        3 => 4,
        4 => 8,
        5 => 15,
        _ => 0,
    }
}

/// The data VLs every cabled port of the snapshot supports (ports that report no VLCap are
/// left out); `None` when no port reports one.
pub fn common_vls(records: &[NodeRecord]) -> Option<u8> {
    records
        .iter()
        .flat_map(|r| r.ports.iter().flatten())
        .filter(|p| p.remote.is_some())
        .map(|p| data_vls(p.vl_cap))
        .filter(|&v| v > 0)
        .min()
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
fn balance_of_prefixes(graph: &RoutingGraph, layers: &Layers) -> Vec<PrefixBalance> {
    prefix_balance(&layer_loads(graph, layers), &prefixes(layers.count()))
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
    fabric: Fabric,
    graph: RoutingGraph,
    done: DeadlockFree,
    /// The MLFM the routing laid out (`algorithm: mlfm-a2a`): a repair names what it lost
    /// and checks the schedules on the repaired tables.
    mlfm: Option<Arc<DetectedMlfm>>,
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

/// Routes `fabric` (with its ports' LIDs), makes it deadlock-free when `deadlock` asks for a
/// scheme, and checks that every switch has an entry for every LID on every layer.
///
/// # Errors
/// LID conflicts, no switches, an unreachable destination, or a deadlock scheme that does not
/// fit (after the shortage policy).
pub fn route(
    fabric: Fabric,
    config: &RoutingConfig,
    deadlock: &DeadlockSettings,
) -> Result<Routed, EngineError> {
    let started = std::time::Instant::now();
    let lids = LidTable::from_fabric(&fabric)?;
    let graph = RoutingGraph::new(&fabric);
    if graph.is_empty() {
        return Err(EngineError::NoSwitches);
    }
    let schemes = deadlock.schemes();
    let mlfm = match config.algorithm {
        Algorithm::MlfmA2a => Some(Arc::new(detect(&fabric, config)?)),
        _ => None,
    };
    if schemes.is_empty() {
        let layers = match &mlfm {
            Some(mlfm) => collectives::mlfm_a2a_layers(mlfm, &graph, config.layers),
            None => layered::route(&graph, config),
        };
        let tables = forwarding_tables(&fabric, &graph, &layers, &lids);
        let switches = entries(&fabric, &graph, &layers, &lids, &tables)?;
        let prefix_balance = balance_of_prefixes(&graph, &layers);
        return Ok(Routed {
            lids: switches.first().map_or(0, |(_, e)| e.len()),
            switches,
            layers: layers.count(),
            requested_layers: config.layers.max(1),
            reductions: Vec::new(),
            tables,
            qos: None,
            deadlock_summary: "deadlock avoidance off: every path on SL 0".to_string(),
            guarantee: None,
            base: None,
            repair: None,
            multicast: Arc::new(McastBasis {
                fabric,
                graph,
                order: None,
                scheme: "deadlock avoidance off".into(),
            }),
            prefix_balance,
            elapsed: started.elapsed(),
        });
    }
    let done = match &mlfm {
        Some(mlfm) => collectives::mlfm_a2a_deadlock_free(
            &fabric,
            &lids,
            &graph,
            mlfm,
            config,
            &schemes,
            deadlock.shortage,
        )?,
        None => route_deadlock_free(&fabric, &lids, &graph, config, &schemes, deadlock.shortage)?,
    };
    finish(fabric, lids, graph, done, config, None, mlfm, started)
}

/// The MLFM of `fabric` for `algorithm: mlfm-a2a`, with a log line on what the layout
/// serves.
fn detect(fabric: &Fabric, config: &RoutingConfig) -> Result<DetectedMlfm, EngineError> {
    let detected = collectives::detect_mlfm(fabric)?;
    let d = detected.mlfm.d();
    log::info!(
        "mlfm-a2a: MLFM d = {d} recognised ({} leaves, {} spines); {} layer{}: the layout of \
         `ibfabric a2a mlfm` serves every schedule with m ≤ {} servers per leaf \
         (LID offset = the sender's server index)",
        detected.mlfm.leaves(),
        detected.mlfm.spines(),
        config.layers,
        if config.layers == 1 { "" } else { "s" },
        config.layers.min(d as usize)
    );
    Ok(detected)
}

/// Repairs `previous` for `fabric`, which lost switches, cables or hosts since — and, with
/// `gains`, gained some — keeping every route that did not cross a loss and the lanes by port
/// pair; new switches and cables get routes without changing the others. `None` when it
/// cannot be repaired that way: `previous` was not made by lanes by port pair, the settings
/// differ, or `fabric` gained a switch or cable and `gains` is false (route in full then).
///
/// # Errors
/// As [`route`].
pub fn repair(
    previous: &Routed,
    fabric: Fabric,
    config: &RoutingConfig,
    deadlock: &DeadlockSettings,
    gains: bool,
) -> Result<Option<Routed>, EngineError> {
    let started = std::time::Instant::now();
    let Some(base) = &previous.base else {
        return Ok(None);
    };
    let Some(scheme) = deadlock
        .schemes()
        .into_iter()
        .find(|s| matches!(s, Scheme::PortPair(_)))
    else {
        return Ok(None);
    };
    let lids = LidTable::from_fabric(&fabric)?;
    let graph = RoutingGraph::new(&fabric);
    if graph.is_empty() {
        return Err(EngineError::NoSwitches);
    }
    let changes = FabricChanges::between(&base.fabric, &base.graph, &fabric, &graph);
    if !gains && !changes.only_losses() {
        return Ok(None);
    }
    let Some(repaired) = repair_deadlock_free(
        &fabric,
        &lids,
        &graph,
        &base.done,
        &base.graph,
        &changes.old_of,
        config,
        &scheme,
    ) else {
        return Ok(None);
    };
    let (done, report) = repaired?;
    if let Some(mlfm) = &base.mlfm
        && report.full_routing.is_none()
    {
        log_schedules(mlfm, &fabric, &lids, &done);
    }
    let repair = Repair {
        lost_cables: changes.lost_cables,
        lost_switches: changes.lost_switches,
        gained_cables: changes.gained_cables,
        gained_switches: changes.gained_switches,
        layers: done.layers,
        report,
    };
    let mlfm = base.mlfm.clone();
    finish(
        fabric,
        lids,
        graph,
        done,
        config,
        Some(repair),
        mlfm,
        started,
    )
    .map(Some)
}

/// Logs the cables an MLFM routing lost and, from the schedule check on the repaired tables,
/// which schedules stay congestion-free and which are affected.
fn log_schedules(mlfm: &DetectedMlfm, fabric: &Fabric, lids: &LidTable, done: &DeadlockFree) {
    for cable in collectives::lost_cables(mlfm, fabric) {
        log::info!("mlfm-a2a: lost cable {cable}");
    }
    let named = collectives::named_like(mlfm, fabric);
    let verdicts = collectives::schedule_verdicts(mlfm, &named, lids, &done.tables, done.layers);
    for line in collectives::verdict_lines(&verdicts) {
        log::info!("{line}");
    }
}

/// Entries, answers and the repair base of a deadlock-free routing.
// The routing's parts, what it repaired and the MLFM it laid out: each is needed, and a
// struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn finish(
    fabric: Fabric,
    lids: LidTable,
    graph: RoutingGraph,
    done: DeadlockFree,
    config: &RoutingConfig,
    repair: Option<Repair>,
    mlfm: Option<Arc<DetectedMlfm>>,
    started: std::time::Instant,
) -> Result<Routed, EngineError> {
    let switches = entries(&fabric, &graph, &done.routing, &lids, &done.tables)?;
    let prefix_balance = balance_of_prefixes(&graph, &done.routing);
    let qos = QosAnswers::new(
        fabric.clone(),
        lids,
        done.path_sls.clone(),
        done.sl2vl.clone(),
    );
    let multicast = Arc::new(McastBasis {
        fabric: fabric.clone(),
        graph: graph.clone(),
        order: done.order.clone(),
        scheme: scheme_name(&done.outcome).into(),
    });
    let base = matches!(done.outcome, SchemeOutcome::PortPair { .. }).then(|| {
        Arc::new(RepairBase {
            fabric,
            graph,
            done: done.clone(),
            mlfm,
        })
    });
    Ok(Routed {
        lids: switches.first().map_or(0, |(_, e)| e.len()),
        switches,
        layers: done.layers,
        requested_layers: config.layers.max(1),
        reductions: done.reductions,
        tables: done.tables,
        qos: Some(Arc::new(qos)),
        deadlock_summary: done.outcome.to_string(),
        guarantee: Some(done.outcome.guarantee()),
        base,
        repair,
        multicast,
        prefix_balance,
        elapsed: started.elapsed(),
    })
}

/// The name of the scheme that made the routing deadlock-free, as [`Scheme::name`] gives it.
fn scheme_name(outcome: &SchemeOutcome) -> &'static str {
    match outcome {
        SchemeOutcome::Dfsssp { .. } => "DFSSSP virtual lanes",
        SchemeOutcome::Colouring { .. } => "switch colouring",
        SchemeOutcome::PortPair { .. } => "lanes by port pair",
    }
}

/// Every switch's entries (port and hops) for every LID, checked complete.
fn entries(
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: &Layers,
    lids: &LidTable,
    tables: &ForwardingTables,
) -> Result<Vec<(NodeId, Vec<Entry>)>, EngineError> {
    let mut switches = Vec::with_capacity(graph.len());
    for (s, &id) in graph.nodes.iter().enumerate() {
        let mut entries = Vec::new();
        for (lid, owner) in lids.iter() {
            let (t, layer, extra) =
                destination(fabric, graph, layers, owner.node, owner.port, owner.offset);
            let incomplete = || EngineError::Incomplete {
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
/// [`forwarding_tables`] does.
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

#[cfg(test)]
mod tests {
    use super::*;
    use ibfabric::routing::assign_lids;
    use ibfabric::routing::{Algorithm, PathLengths};
    use ibfabric::topology::TopologySpec;

    /// The records OpenSM would hold for `fabric` (with LIDs), in a scrambled order.
    fn records_of(fabric: &Fabric) -> Vec<NodeRecord> {
        let n = fabric.nodes().len();
        // Reverse order: the canonical sort must undo it.
        let position = |id: NodeId| n - 1 - id.index();
        let mut records = vec![None; n];
        for (i, node) in fabric.nodes().iter().enumerate() {
            let id = NodeId(i as u32);
            let ports = node
                .ports
                .iter()
                .enumerate()
                .map(|(p, port)| {
                    let record = PortRecord {
                        guid: port.guid.0,
                        lid: port.lid,
                        lmc: port.lmc,
                        vl_cap: 4,
                        width_active: 2,
                        speed_active: 4,
                        speed_ext_active: 2,
                        remote: fabric
                            .peer(PortRef {
                                node: id,
                                port: p as u8,
                            })
                            .map(|peer| (position(peer.node), peer.port)),
                    };
                    // A CA has no port 0.
                    (p != 0 || node.is_switch()).then_some(record)
                })
                .collect();
            records[position(id)] = Some(NodeRecord {
                kind: node.kind,
                guid: node.guid.0,
                description: node.description.clone(),
                ports,
            });
        }
        records.into_iter().map(Option::unwrap).collect()
    }

    fn config(layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        }
    }

    fn no_deadlock_scheme() -> DeadlockSettings {
        DeadlockSettings {
            mode: DeadlockMode::None,
            vls: 8,
            shortage: Shortage::Fail,
        }
    }

    fn slim_fly_q5() -> Fabric {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let mut fabric = spec.build().unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        fabric
    }

    #[test]
    fn snapshot_round_trip_keeps_nodes_cables_and_lids() {
        let fabric = slim_fly_q5();
        let (rebuilt, order) = build_fabric("snapshot", &records_of(&fabric)).unwrap();
        assert_eq!(rebuilt.summary(), fabric.summary());
        assert_eq!(order.len(), fabric.nodes().len());
        for node in fabric.nodes() {
            let id = rebuilt.node_by_guid(node.guid).unwrap();
            let copy = rebuilt.node(id);
            assert_eq!(copy.kind, node.kind);
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                assert_eq!(copy.ports[p].lid, port.lid);
                assert_eq!(copy.ports[p].lmc, port.lmc);
                assert_eq!(copy.ports[p].link.is_some(), port.link.is_some());
            }
        }
        // Switches first, ascending GUID.
        let guids: Vec<u64> = rebuilt.switches().map(|s| rebuilt.node(s).guid.0).collect();
        assert!(guids.is_sorted());
        assert_eq!(
            rebuilt.switches().last().unwrap().index() + 1,
            guids.len(),
            "switches come first"
        );
    }

    #[test]
    fn port_rates_decode_as_portinfo_encodes_them() {
        let port = |w, s, e| PortRecord {
            guid: 1,
            lid: 1,
            lmc: 0,
            vl_cap: 4,
            width_active: w,
            speed_active: s,
            speed_ext_active: e,
            remote: None,
        };
        assert_eq!(
            port(2, 4, 2).rate(),
            (Some(LinkWidth::X4), Some(LinkSpeed::Edr))
        );
        assert_eq!(
            port(1, 1, 0).rate(),
            (Some(LinkWidth::X1), Some(LinkSpeed::Sdr))
        );
        assert_eq!(
            port(16, 4, 4).rate(),
            (Some(LinkWidth::X2), Some(LinkSpeed::Hdr))
        );
        assert_eq!(port(0, 0, 0).rate(), (None, None));
    }

    #[test]
    fn slim_fly_routes_every_lid_on_every_layer() {
        let (fabric, _) = build_fabric("snapshot", &records_of(&slim_fly_q5())).unwrap();
        let routed = route(fabric.clone(), &config(4), &no_deadlock_scheme()).unwrap();
        assert_eq!(routed.switches.len(), 50);
        assert_eq!(routed.lids, 200 * 4 + 50);
        assert_eq!(routed.layers, 4);
        for (s, entries) in &routed.switches {
            assert_eq!(entries.len(), routed.lids);
            for e in entries {
                assert_eq!(routed.tables.port(*s, e.lid), Some(e.port));
                if e.port == 0 {
                    assert_eq!(fabric.node(*s).ports[0].lid, e.lid);
                    assert_eq!(e.hops, 0);
                } else {
                    // Diameter 2 + the host cable; almost-minimal layers go up to 3 + 1.
                    assert!((1..=4).contains(&e.hops), "{e:?}");
                }
            }
        }
    }

    #[test]
    fn same_subnet_routes_the_same_whatever_the_discovery_order() {
        let fabric = slim_fly_q5();
        let mut records = records_of(&fabric);
        let a = route(
            build_fabric("a", &records).unwrap().0,
            &config(4),
            &no_deadlock_scheme(),
        )
        .unwrap();
        // Rotate the records (fixing up the remote indexes).
        let n = records.len();
        records.rotate_left(7);
        for r in &mut records {
            for port in r.ports.iter_mut().flatten() {
                if let Some((i, _)) = &mut port.remote {
                    *i = (*i + n - 7) % n;
                }
            }
        }
        assert_eq!(
            canonical_records(&records),
            canonical_records(&records_of(&fabric)),
            "the same subnet in another order has the same canonical records"
        );
        let b = route(
            build_fabric("b", &records).unwrap().0,
            &config(4),
            &no_deadlock_scheme(),
        )
        .unwrap();
        assert_eq!(a.switches, b.switches);
    }

    #[test]
    fn conflicting_lids_are_an_error() {
        let mut fabric = slim_fly_q5();
        let host = fabric.hosts().next().unwrap();
        fabric.node_mut(host).ports[1].lid = 1; // a switch's LID
        let (fabric, _) = build_fabric("conflict", &records_of(&fabric)).unwrap();
        assert!(matches!(
            route(fabric, &config(4), &no_deadlock_scheme()),
            Err(EngineError::Lids(_))
        ));
    }

    /// Every deadlock mode's answers: the routing with its path SLs and SL-to-VL tables is
    /// deadlock-free by the independent verifier — with every route on every SL where the
    /// guarantee says so (lanes by port pair, which answer no SL of their own: OpenSM's choice
    /// stands), else with the SLs answered for every LID pair.
    #[test]
    fn deadlock_modes_answer_sls_that_the_verifier_accepts() {
        use ibfabric::deadlock::{DefaultSl, RouteSls, VerifyOptions, verify};
        let (fabric, _) = build_fabric("snapshot", &records_of(&slim_fly_q5())).unwrap();
        for mode in [
            DeadlockMode::Auto,
            DeadlockMode::PortPair,
            DeadlockMode::Dfsssp,
            DeadlockMode::Colouring,
        ] {
            let settings = DeadlockSettings {
                mode,
                vls: 8,
                shortage: Shortage::Fail,
            };
            let routed = route(fabric.clone(), &config(4), &settings).unwrap();
            assert_eq!(routed.layers, 4, "{mode:?}");
            let qos = routed.qos.as_ref().expect("answers");
            let lids = LidTable::from_fabric(&fabric).unwrap();
            // The verifier reads path SLs through the `PathSl` trait: hand it the answers.
            struct Answers<'a>(&'a QosAnswers);
            impl ibfabric::deadlock::PathSl for Answers<'_> {
                fn sl(&self, slid: u16, dlid: u16) -> u8 {
                    self.0.path_sl(slid, dlid).expect("known LIDs")
                }
            }
            let verdict = if routed.guarantee == Some(Guarantee::EverySl) {
                assert_eq!(qos.path_sl(1, 2), None, "{mode:?}: OpenSM's choice stands");
                verify(
                    &fabric,
                    &lids,
                    &routed.tables,
                    &DefaultSl(0),
                    qos.tables(),
                    &VerifyOptions {
                        sls: RouteSls::EverySl,
                        ..VerifyOptions::default()
                    },
                )
            } else {
                verify(
                    &fabric,
                    &lids,
                    &routed.tables,
                    &Answers(qos),
                    qos.tables(),
                    &VerifyOptions::default(),
                )
            };
            assert!(verdict.is_deadlock_free(), "{mode:?}: {verdict:?}");
            let every_sl = matches!(mode, DeadlockMode::Auto | DeadlockMode::PortPair);
            assert_eq!(
                routed.guarantee == Some(Guarantee::EverySl),
                every_sl,
                "{mode:?}"
            );
            assert!(routed.deadlock_summary.starts_with("deadlock-free"));
            // Unknown LIDs are left to OpenSM.
            assert_eq!(qos.path_sl(0, 1), None);
            assert_eq!(qos.path_sl(1, 60000), None);
            // Every switch port pair has a row; unknown nodes have none.
            let s = fabric.switches().next().unwrap();
            let guid = fabric.node(s).guid.0;
            assert!(qos.sl2vl(guid, 1, 2).is_some());
            assert_eq!(qos.sl2vl(0xdead, 1, 2), None);
        }
    }

    /// `algorithm: mlfm-a2a`: an MLFM is laid out and made deadlock-free for every SL, a lost
    /// cable is repaired keeping the MLFM for the next repair, and a Slim Fly is refused.
    #[test]
    fn mlfm_a2a_routes_and_repairs_an_mlfm_and_refuses_other_fabrics() {
        use ibfabric::topology::Construction;
        let mut mlfm = ibfabric::topology::mlfm::Mlfm::new(3).unwrap().build();
        assign_lids(&mut mlfm, 2).unwrap();
        let (fabric, _) = build_fabric("snapshot", &records_of(&mlfm)).unwrap();
        let config = RoutingConfig {
            algorithm: Algorithm::MlfmA2a,
            ..config(4)
        };
        let settings = DeadlockSettings {
            mode: DeadlockMode::Auto,
            vls: 8,
            shortage: Shortage::Fail,
        };
        let routed = route(fabric.clone(), &config, &settings).unwrap();
        assert_eq!(routed.layers, 4);
        assert_eq!(routed.guarantee, Some(Guarantee::EverySl));
        let uplink = fabric
            .links()
            .iter()
            .position(|l| fabric.node(l.a.node).is_switch() && fabric.node(l.b.node).is_switch())
            .unwrap();
        let cut = fabric.after_losses(|_| false, |l| l.0 == uplink as u32);
        let repaired = repair(&routed, cut, &config, &settings, false)
            .unwrap()
            .expect("a lost cable is repaired");
        assert_eq!(repaired.repair.as_ref().unwrap().lost_cables, 1);
        assert!(repaired.base.as_ref().unwrap().mlfm.is_some());
        let (slim_fly, _) = build_fabric("snapshot", &records_of(&slim_fly_q5())).unwrap();
        let refused = route(slim_fly, &config, &settings).unwrap_err();
        assert!(matches!(refused, EngineError::NotMlfm(_)), "{refused}");
        assert!(refused.to_string().contains("mlfm-a2a refused"));
    }

    #[test]
    fn too_few_vls_fail_or_reduce_layers_by_policy() {
        let (fabric, _) = build_fabric("snapshot", &records_of(&slim_fly_q5())).unwrap();
        let fail = DeadlockSettings {
            mode: DeadlockMode::Dfsssp,
            vls: 2,
            shortage: Shortage::Fail,
        };
        let err = route(fabric.clone(), &config(4), &fail).unwrap_err();
        assert!(
            err.to_string().contains("virtual lanes"),
            "the error says what is needed: {err}"
        );
        let fewer = DeadlockSettings {
            shortage: Shortage::FewerLayers,
            ..fail
        };
        let routed = route(fabric, &config(4), &fewer).unwrap();
        assert!(routed.layers < 4);
        assert_eq!(routed.requested_layers, 4);
        assert!(!routed.reductions.is_empty());
    }
}
