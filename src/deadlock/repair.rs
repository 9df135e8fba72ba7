//! Deadlock freedom kept through a repair: after losses, the routing is repaired in the cable
//! order it was made in ([`crate::routing::repair`]) and the lanes by port pair are given
//! again, so every kept and every new route stays deadlock-free whatever SL it carries, with
//! all its layers. The other schemes assign lanes to whole routes and are routed in full.

use super::port_pair::{lanes_by_port_pair_checking, lids_leaving_the_lanes};
use super::{DeadlockError, DeadlockFree, Scheme, SchemeOutcome};
use crate::routing::graph::RoutingGraph;
use crate::routing::hierarchy::Hierarchy;
use crate::routing::kept_entries::{free_the_junctions, keep_working_entries};
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
    let mut tables: ForwardingTables =
        spread_forwarding_tables(fabric, graph, &repaired.layers, lids, Some(order));
    let changed = changed_lids(fabric, lids, graph, &repaired.changed_trees);
    // On a hierarchy the tables spread every LID over the repaired graph's next hops, so a
    // LID whose tree did not change may still take other cables: the entries of routes that
    // still work are kept, and every LID is checked.
    let spread = Hierarchy::recognise(graph).is_some();
    let check = |lid: u16| spread || changed.get(usize::from(lid)).copied().unwrap_or(true);
    if spread {
        let fresh = tables.clone();
        let kept = keep_working_entries(
            fabric,
            lids,
            graph,
            &mut tables,
            &previous.tables,
            previous_graph,
            old_of,
        );
        if kept > 0 {
            // A new route joining a kept one may leave the lanes (a spine that lost its cable
            // down to the destination's leaf detours over another leaf, whose kept route may
            // climb in the wrong order): those LIDs are spread afresh, every switch's entry as
            // the repaired layers give it.
            let every = |_: u16| true;
            let leaving =
                lids_leaving_the_lanes(fabric, lids, graph, &tables, order, lanes, &every);
            let leaving = leaving.unwrap_or_default();
            for &lid in &leaving {
                free_the_junctions(fabric, &mut tables, &fresh, lid);
            }
            // Only the LIDs just changed can have left the lanes since.
            let changed = |lid: u16| leaving.binary_search(&lid).is_ok();
            let still =
                lids_leaving_the_lanes(fabric, lids, graph, &tables, order, lanes, &changed);
            for lid in still.into_iter().flatten() {
                for &switch in fresh.switches() {
                    tables.set(switch, lid, fresh.table(switch)[usize::from(lid)]);
                }
            }
        }
    }
    let checked = lanes_by_port_pair_checking(fabric, lids, graph, &tables, order, lanes, &check);
    Some(checked.map(|lanes| {
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
    }))
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
    use crate::deadlock::PortPairConfig;
    use crate::deadlock::{SchemeChoice, Shortage, route_deadlock_free, verify_every_sl};
    use crate::routing::assign_lids;
    use crate::routing::repair::RepairReport;
    use crate::topology::{LinkId, NodeId, PortRef, TopologySpec};

    /// A routing of `spec` with 4 layers by lanes by port pair, and its repair after `cut`
    /// switch-to-switch cables (evenly spread over the fabric's list) were lost.
    struct Repaired {
        report: RepairReport,
        whole: Fabric,
        done: DeadlockFree,
        damaged: Fabric,
        damaged_lids: LidTable,
        damaged_graph: RoutingGraph,
        repaired: DeadlockFree,
    }

    fn repaired_after_cuts(spec: &str, cut: usize) -> Repaired {
        let mut whole = spec.parse::<TopologySpec>().unwrap().build().unwrap();
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
        Repaired {
            report,
            whole,
            done,
            damaged,
            damaged_lids,
            damaged_graph,
            repaired,
        }
    }

    /// The verifier finds the repaired tables and lanes deadlock-free with every route on every
    /// SL, though only the changed trees were walked for valleys, and checking every LID's
    /// routes finds no valley either.
    fn assert_deadlock_free_for_every_sl(r: &Repaired, what: &str) {
        let verdict = verify_every_sl(
            &r.damaged,
            &r.damaged_lids,
            &r.repaired.tables,
            &r.repaired.sl2vl,
        );
        assert!(verdict.is_deadlock_free(), "{what}: {verdict}");
        let order = r.repaired.order.as_ref().unwrap();
        let full_check = super::super::port_pair::lanes_by_port_pair(
            &r.damaged,
            &r.damaged_lids,
            &r.damaged_graph,
            &r.repaired.tables,
            order,
            &PortPairConfig { vls: 8 },
        )
        .expect("no valley towards any LID");
        assert_eq!(full_check.sl2vl, r.repaired.sl2vl, "{what}");
    }

    fn repaired_on_slim_fly_q5_is_deadlock_free_for_every_sl(cut: usize) {
        let r = repaired_after_cuts("slimfly:q=5", cut);
        assert!(r.report.crossing > 0);
        assert_deadlock_free_for_every_sl(&r, &format!("{cut} cables lost"));
    }

    /// Whether switch `at` of the damaged fabric, following the intact routing's entries for
    /// `lid` hop by hop over the cables left, delivers it (walked here without the library's
    /// walk, as the oracle of the kept entries).
    fn old_route_delivers(r: &Repaired, at: NodeId, lid: u16) -> bool {
        let owner = r.damaged_lids.owner(lid).expect("assigned");
        let mut x = at;
        for _ in 0..64 {
            let old = r
                .whole
                .node_by_guid(r.damaged.node(x).guid)
                .expect("same switch");
            let Some(port) = r.done.tables.port(old, lid) else {
                return false;
            };
            if port == 0 {
                return owner.node == x;
            }
            let Some(peer) = r.damaged.peer(PortRef { node: x, port }) else {
                return false; // the cable is lost
            };
            if peer.node == owner.node && peer.port == owner.port {
                return true;
            }
            if !r.damaged.node(peer.node).is_switch() {
                return false;
            }
            x = peer.node;
        }
        false
    }

    /// On a fat tree, whose tables spread every LID afresh, a repair keeps the entry of every
    /// switch whose old route towards a LID still delivers, except where a route the repair
    /// diverted joins it: so a LID whose every old route still delivers keeps all its entries,
    /// and working entries move only towards LIDs some loss broke a route to — far fewer than
    /// when every LID is spread afresh. The result stays deadlock-free for every SL.
    fn fat_tree_repair_keeps_working_entries(spec: &str, cut: usize) {
        let r = repaired_after_cuts(spec, cut);
        let fresh = spread_forwarding_tables(
            &r.damaged,
            &r.damaged_graph,
            &r.repaired.routing,
            &r.damaged_lids,
            r.repaired.order.as_ref(),
        );
        let (mut changed, mut working_moved, mut fresh_moved) = (0, 0, 0);
        for (lid, _) in r.damaged_lids.iter() {
            let broken = r
                .damaged
                .switches()
                .any(|s| !old_route_delivers(&r, s, lid));
            for switch in r.damaged.switches() {
                let old = r.whole.node_by_guid(r.damaged.node(switch).guid).unwrap();
                let before = r.done.tables.port(old, lid);
                let working = old_route_delivers(&r, switch, lid);
                if working && fresh.port(switch, lid) != before {
                    fresh_moved += 1;
                }
                if before != r.repaired.tables.port(switch, lid) {
                    changed += 1;
                    if working {
                        working_moved += 1;
                        assert!(
                            broken,
                            "{spec}: LID {lid}, untouched by the losses, moved a working entry"
                        );
                    }
                }
            }
        }
        eprintln!(
            "{spec}, {cut} lost: {changed} entries changed, {working_moved} of them still \
             worked ({fresh_moved} would have, spread afresh)"
        );
        assert!(changed > 0, "{spec}: nothing changed after {cut} losses");
        assert!(working_moved < fresh_moved, "{spec}: no working entry kept");
        assert_deadlock_free_for_every_sl(&r, spec);
    }

    #[test]
    fn fat_tree_repair_keeps_working_entries_after_one_loss() {
        fat_tree_repair_keeps_working_entries(
            "fattree:leaves=12,spines=6,links-per-pair=1,hosts-per-leaf=6",
            1,
        );
    }

    #[test]
    fn fat_tree_with_parallel_cables_repair_keeps_working_entries_after_three_losses() {
        fat_tree_repair_keeps_working_entries(
            "fattree:leaves=6,spines=3,links-per-pair=2,hosts-per-leaf=4",
            3,
        );
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
