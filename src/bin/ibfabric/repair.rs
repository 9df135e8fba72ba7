//! `ibfabric route --repair-from`: route the fabric as it was, then repair that routing for
//! the fabric as it is — what the plugin does when a sweep finds lost or new cables or
//! switches — so an admin can see on files what a failure or an addition would change.

use std::path::Path;

use anyhow::{Context, bail};
use ibfabric::Fabric;
use ibfabric::deadlock::{
    DeadlockFree, Scheme, Shortage, repair_deadlock_free, route_deadlock_free,
};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::repair::{FabricChanges, target_paths};
use ibfabric::routing::{LidTable, RoutingConfig, assign_lids};

use crate::source::load_fabric;

/// Routes `previous` (a fabric source) with `schemes`, repairs it for `fabric` and returns the
/// repaired routing with a line on what changed: the switch pairs that lost disjoint paths,
/// the disjoint repair's budget, the routes changed (the churn last).
///
/// # Errors
/// Unreadable sources, LIDs that differ between the two fabrics, or a scheme other than lanes
/// by port pair. Switches and cables that `fabric` has and `previous` lacks are routed in.
pub fn route_and_repair(
    previous: &str,
    fabric: &Fabric,
    config: &RoutingConfig,
    schemes: &[Scheme],
    node_name_map: Option<&Path>,
) -> anyhow::Result<(DeadlockFree, String)> {
    let mut before = load_fabric(previous, node_name_map)?;
    if !before
        .nodes()
        .iter()
        .any(|n| n.ports.iter().any(|p| p.lid != 0))
    {
        assign_lids(&mut before, config.layers.trailing_zeros() as u8)?;
    }
    for node in fabric.nodes() {
        let Some(old) = before.node_by_guid(node.guid) else {
            continue; // new: routed in
        };
        for (p, port) in node.ports.iter().enumerate() {
            let was = before.node(old).ports.get(p).map(|q| q.lid);
            if port.lid != 0 && was != Some(port.lid) {
                bail!(
                    "{previous}: {} port {p} has LID {} there and {} in the fabric: the two must share their LIDs",
                    node.name,
                    was.unwrap_or(0),
                    port.lid
                );
            }
        }
    }
    let before_lids = LidTable::from_fabric(&before).with_context(|| previous.to_string())?;
    let before_graph = RoutingGraph::new(&before);
    let done = route_deadlock_free(
        &before,
        &before_lids,
        &before_graph,
        config,
        schemes,
        Shortage::Fail,
    )
    .with_context(|| format!("routing {previous}"))?;
    let lids = LidTable::from_fabric(fabric)?;
    let graph = RoutingGraph::new(fabric);
    let changes = FabricChanges::between(&before, &before_graph, fabric, &graph);
    let scheme = schemes
        .iter()
        .find(|s| matches!(s, Scheme::PortPair(_)))
        .context("--repair-from needs lanes by port pair (--deadlock auto or port-pair)")?;
    let (repaired, report) = repair_deadlock_free(
        fabric,
        &lids,
        &graph,
        &done,
        &before_graph,
        &changes.old_of,
        config,
        scheme,
    )
    .context("--repair-from needs lanes by port pair (--deadlock auto or port-pair)")??;
    let FabricChanges {
        lost_cables,
        lost_switches,
        gained_cables,
        gained_switches,
        ..
    } = changes;
    let mut line = format!(
        "repaired from {previous}: {lost_cables} cables and {lost_switches} switches lost, \
         {gained_cables} cables and {gained_switches} switches gained (routed in); {} \
         switch pairs have fewer edge-disjoint paths than before ({} below {}) after the \
         disjoint repair, which changed {} more routes of its budget of {} (routes that had to \
         change but did not); {} of the (layer, switch, destination switch) routes changed, {} \
         had to (churn {:.2})",
        report.degraded,
        report.below_target,
        target_paths(repaired.layers),
        report.spent,
        report.budget,
        report.changed,
        report.crossing,
        report.churn()
    );
    if let Some(why) = &report.full_routing {
        line += &format!("; routed in full: {why}");
    }
    Ok((repaired, line))
}
