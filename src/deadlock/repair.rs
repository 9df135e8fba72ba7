//! Deadlock freedom kept through a repair: after losses, the routing is repaired in the cable
//! order it was made in ([`crate::routing::repair`]) and the lanes by port pair are given
//! again, so every kept and every new route stays deadlock-free whatever SL it carries, with
//! all its layers. The other schemes assign lanes to whole routes and are routed in full.

use super::port_pair::lanes_by_port_pair_checking;
use super::{DeadlockError, DeadlockFree, Scheme, SchemeOutcome};
use crate::routing::graph::RoutingGraph;
use crate::routing::hierarchy::Hierarchy;
use crate::routing::repair::{
    ChangedTrees, Previous, RepairReport, lids_per_tree, repair_for_lids,
};
use crate::routing::{
    ForwardingTables, LidTable, RoutingConfig, Turns, lid_tree, spread_forwarding_tables,
};
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
    let (Scheme::PortPair(lanes), Some(order)) = (scheme, &previous.order) else {
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
    let tree_lids = lids_per_tree(fabric, graph, lids, previous.layers);
    let repaired = repair_for_lids(&before, graph, old_of, &config, Some(&tree_lids));
    let Some(order) = repaired.order.as_ref() else {
        return Some(Err(DeadlockError::NotUnimodal {
            routes: 0,
            example: "the repaired routing has no cable order".into(),
        }));
    };
    let tables: ForwardingTables =
        spread_forwarding_tables(fabric, graph, &repaired.layers, lids, Some(order));
    let changed = changed_lids(fabric, lids, graph, &repaired.changed_trees);
    // On a hierarchy the tables spread every LID over the repaired graph's next hops, so a
    // LID whose tree did not change may still take other cables: check them all.
    let spread = Hierarchy::recognise(graph).is_some();
    let check = |lid: u16| spread || changed.get(usize::from(lid)).copied().unwrap_or(true);
    Some(
        lanes_by_port_pair_checking(fabric, lids, graph, &tables, order, lanes, &check).map(
            |lanes| {
                (
                    DeadlockFree {
                        layers: previous.layers,
                        requested_layers: previous.requested_layers,
                        reductions: previous.reductions.clone(),
                        routing: repaired.layers,
                        tables,
                        path_sls: None,
                        sl2vl: lanes.sl2vl,
                        outcome: SchemeOutcome::PortPair {
                            classes: lanes.classes,
                        },
                        order: repaired.order,
                    },
                    repaired.report,
                )
            },
        ),
    )
}

/// Per LID: whether it follows a destination tree the repair changed (LIDs no switch routes
/// count as changed, so nothing is skipped by mistake).
fn changed_lids(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    trees: &ChangedTrees,
) -> Vec<bool> {
    let layers = trees.layers();
    let mut changed = vec![true; usize::from(lids.end())];
    for (lid, owner) in lids.iter() {
        if let Some(tree) = lid_tree(fabric, graph, layers, owner) {
            changed[usize::from(lid)] = trees.contains(tree.layer, tree.switch);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadlock::verify::{RouteSls, VerifyOptions, verify};
    use crate::deadlock::{DefaultSl, SchemeChoice, Shortage, route_deadlock_free};
    use crate::routing::assign_lids;
    use crate::topology::{LinkId, TopologySpec};

    /// Slim Fly q = 5 with 4 layers by lanes by port pair, then `cut` switch-to-switch cables
    /// lost and the routing repaired: the verifier finds the repaired tables and lanes
    /// deadlock-free with every route on every SL, though only the changed trees were walked
    /// for valleys, and checking every LID's routes finds no valley either.
    fn repaired_on_slim_fly_q5_is_deadlock_free_for_every_sl(cut: usize) {
        let mut whole = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut whole, 2).unwrap();
        let lids = LidTable::from_fabric(&whole).unwrap();
        let graph = RoutingGraph::new(&whole);
        let routing = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let schemes = SchemeChoice::PortPair.schemes(8);
        let done =
            route_deadlock_free(&whole, &lids, &graph, &routing, &schemes, Shortage::Fail).unwrap();
        let inter: Vec<LinkId> = (0..whole.links().len())
            .map(|l| LinkId(l as u32))
            .filter(|&l| {
                let link = &whole.links()[l.0 as usize];
                whole.node(link.a.node).is_switch() && whole.node(link.b.node).is_switch()
            })
            .collect();
        let lost: Vec<LinkId> = inter
            .iter()
            .step_by(inter.len() / cut)
            .take(cut)
            .copied()
            .collect();
        let damaged = whole.after_losses(|_| false, |l| lost.contains(&l));
        let damaged_lids = LidTable::from_fabric(&damaged).unwrap();
        let damaged_graph = RoutingGraph::new(&damaged);
        let old_of: Vec<Option<usize>> = damaged_graph
            .nodes
            .iter()
            .map(|&id| {
                let old = whole.node_by_guid(damaged.node(id).guid)?;
                Some(graph.index_of[old.index()] as usize)
            })
            .collect();
        let (repaired, report) = repair_deadlock_free(
            &damaged,
            &damaged_lids,
            &damaged_graph,
            &done,
            &graph,
            &old_of,
            &routing,
            &schemes[0],
        )
        .expect("a port pair routing is repaired")
        .expect("the lanes fit");
        assert_eq!(report.full_routing, None);
        assert!(report.crossing > 0);
        let verdict = verify(
            &damaged,
            &damaged_lids,
            &repaired.tables,
            &DefaultSl(0),
            &repaired.sl2vl,
            &VerifyOptions {
                sls: RouteSls::EverySl,
                ..VerifyOptions::default()
            },
        );
        assert!(verdict.is_deadlock_free(), "{cut} cables lost: {verdict}");
        let Scheme::PortPair(lanes) = &schemes[0] else {
            unreachable!()
        };
        let order = repaired.order.as_ref().unwrap();
        let full_check = super::super::port_pair::lanes_by_port_pair(
            &damaged,
            &damaged_lids,
            &damaged_graph,
            &repaired.tables,
            order,
            lanes,
        )
        .expect("no valley towards any LID");
        assert_eq!(full_check.sl2vl, repaired.sl2vl);
    }

    #[test]
    fn one_lost_cable() {
        repaired_on_slim_fly_q5_is_deadlock_free_for_every_sl(1);
    }

    #[test]
    fn five_lost_cables() {
        repaired_on_slim_fly_q5_is_deadlock_free_for_every_sl(5);
    }

    #[test]
    fn twelve_lost_cables() {
        repaired_on_slim_fly_q5_is_deadlock_free_for_every_sl(12);
    }
}
