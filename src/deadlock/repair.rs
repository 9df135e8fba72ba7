//! Deadlock freedom kept through a repair: after losses, the routing is repaired in the cable
//! order it was made in ([`crate::routing::repair`]) and the lanes by port pair are given
//! again, so every kept and every new route stays deadlock-free whatever SL it carries, with
//! all its layers. The other schemes assign lanes to whole routes and are routed in full.

use super::{DeadlockError, DeadlockFree, Scheme, apply_scheme};
use crate::routing::graph::RoutingGraph;
use crate::routing::repair::{Previous, RepairReport, repair};
use crate::routing::{ForwardingTables, LidTable, RoutingConfig, Turns, forwarding_tables};
use crate::topology::Fabric;

/// Repairs `previous` (routed over `previous_graph` with `routing`, made deadlock-free by
/// lanes by port pair) for `fabric`, whose switch i was switch `old_of[i]` of the previous
/// graph, and gives it `scheme`'s lanes. `None` when `previous` was not made by lanes by port
/// pair or `scheme` is not that scheme: route in full then.
///
/// # Errors
/// What the scheme returns on the repaired tables.
// The fabric and its LIDs and graph, the previous routing with its graph and the switch map,
// the configuration and the scheme: each is needed, and a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn repair_deadlock_free(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    previous: &DeadlockFree,
    previous_graph: &RoutingGraph,
    old_of: &[Option<usize>],
    routing: &RoutingConfig,
    scheme: &Scheme,
) -> Option<Result<(DeadlockFree, RepairReport), DeadlockError>> {
    let (Scheme::PortPair(_), Some(order)) = (scheme, &previous.order) else {
        return None;
    };
    let config = RoutingConfig {
        layers: previous.layers,
        turns: Turns::Unimodal,
        ..routing.clone()
    };
    let before = Previous {
        graph: previous_graph,
        layers: &previous.routing,
        order: Some(order),
    };
    let repaired = repair(&before, graph, old_of, &config);
    let tables: ForwardingTables = forwarding_tables(fabric, graph, &repaired.layers, lids);
    Some(
        apply_scheme(
            fabric,
            lids,
            graph,
            &tables,
            scheme,
            repaired.order.as_ref(),
        )
        .map(|(path_sls, sl2vl, outcome)| {
            (
                DeadlockFree {
                    layers: previous.layers,
                    requested_layers: previous.requested_layers,
                    reductions: previous.reductions.clone(),
                    routing: repaired.layers,
                    tables,
                    path_sls,
                    sl2vl,
                    outcome,
                    order: repaired.order,
                },
                repaired.report,
            )
        }),
    )
}
