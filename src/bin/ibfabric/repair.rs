//! `ibfabric route --repair-from`: route the fabric as it was, then repair that routing for
//! the fabric as it is — what the plugin does when a sweep finds lost or new cables or
//! switches — so an admin can see on files what a failure or an addition would change.

use std::path::Path;

use anyhow::{Context, bail};
use ibfabric::Fabric;
use ibfabric::deadlock::DeadlockFree;
use ibfabric::routing::repair::target_paths;
use ibfabric::routing::{RoutingConfig, assign_lids};
use ibfabric::session::{self, DeadlockSettings, Repair};

use crate::source::load_fabric;

/// Routes `previous` (a fabric source) as `deadlock` says, repairs it for `fabric` as the
/// plugin's session does and returns the repaired routing with a line on what changed: the
/// switch pairs that lost disjoint paths, the disjoint repair's budget, the routes changed
/// (the churn last).
///
/// # Errors
/// Unreadable sources, LIDs that differ between the two fabrics, or a scheme other than lanes
/// by port pair. Switches and cables that `fabric` has and `previous` lacks are routed in.
pub fn route_and_repair(
    previous: &str,
    fabric: &Fabric,
    config: &RoutingConfig,
    deadlock: &DeadlockSettings,
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
    let full =
        session::route(before, config, deadlock).with_context(|| format!("routing {previous}"))?;
    let needs_port_pair = "--repair-from needs lanes by port pair (--deadlock auto or port-pair)";
    let repaired =
        session::repair(&full, fabric.clone(), config, deadlock, true)?.context(needs_port_pair)?;
    let (Some(base), Some(repair)) = (&repaired.base, &repaired.repair) else {
        bail!(needs_port_pair);
    };
    Ok((base.routing().clone(), repair_line(previous, repair)))
}

/// What the repair from `previous` changed, in one line.
fn repair_line(previous: &str, repair: &Repair) -> String {
    let Repair {
        lost_cables,
        lost_switches,
        gained_cables,
        gained_switches,
        layers,
        report,
    } = repair;
    let mut line = format!(
        "repaired from {previous}: {lost_cables} cables and {lost_switches} switches lost, \
         {gained_cables} cables and {gained_switches} switches gained (routed in); {} \
         switch pairs have fewer edge-disjoint paths than before ({} below {}) after the \
         disjoint repair, which changed {} more routes of its budget of {} (routes that had to \
         change but did not); {} of the (layer, switch, destination switch) routes changed, {} \
         had to (churn {:.2})",
        report.degraded,
        report.below_target,
        target_paths(*layers),
        report.spent,
        report.budget,
        report.changed,
        report.crossing,
        report.churn()
    );
    if let Some(why) = &report.full_routing {
        line += &format!("; routed in full: {why}");
    }
    line
}
