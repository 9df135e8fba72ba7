//! The repair keeps every route that does not cross a loss, completes the rest within the
//! turn rule, and routes in full only when it must.

use super::*;
use crate::topology::{Fabric, TopologySpec};

/// `whole` without the switch-to-switch cables `cut` names (by their index among those
/// cables) and without the switches `gone` names; the new switch of each old one.
fn damaged(
    whole: &Fabric,
    cut: impl Fn(usize) -> bool,
    gone: &[&str],
) -> (RoutingGraph, Vec<Option<usize>>) {
    let inter: Vec<Option<usize>> = whole
        .links()
        .iter()
        .scan(0, |n, l| {
            let between = whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch();
            *n += usize::from(between);
            Some(between.then(|| *n - 1))
        })
        .collect();
    let fabric = whole.after_losses(
        |id| gone.contains(&whole.node(id).name.as_str()),
        |l| inter[l.0 as usize].is_some_and(&cut),
    );
    let old = RoutingGraph::new(whole);
    let graph = RoutingGraph::new(&fabric);
    let old_of = graph
        .nodes
        .iter()
        .map(|&id| {
            let old_id = whole.node_by_guid(fabric.node(id).guid)?;
            Some(old.index_of[old_id.index()] as usize)
        })
        .collect();
    (graph, old_of)
}

struct Case {
    graph: RoutingGraph,
    layers: Layers,
    order: Option<CableOrder>,
    config: RoutingConfig,
}

fn routed(whole: &Fabric, layers: usize, turns: Turns) -> Case {
    let graph = RoutingGraph::new(whole);
    let config = RoutingConfig {
        layers,
        turns,
        seed: 4,
        ..RoutingConfig::default()
    };
    let order = (turns == Turns::Unimodal).then(|| CableOrder::for_routing(&graph, config.seed));
    let layers = route_in_order(&graph, &config, order.as_ref());
    Case {
        graph,
        layers,
        order,
        config,
    }
}

/// Repairs `case` for the damaged graph and checks: no full routing, every connected pair
/// routed loop-free in every layer, unimodal in the order when the turn rule asks, and —
/// with `churn_at_most_one` — no more routes changed than crossed a loss.
fn check_repair(what: &str, case: &Case, graph: &RoutingGraph, old_of: &[Option<usize>]) {
    check_repair_with(what, case, graph, old_of, true);
}

fn check_repair_with(
    what: &str,
    case: &Case,
    graph: &RoutingGraph,
    old_of: &[Option<usize>],
    churn_at_most_one: bool,
) {
    let previous = Previous {
        graph: &case.graph,
        layers: &case.layers,
        order: case.order.as_ref(),
    };
    let repaired = repair(&previous, graph, old_of, &case.config);
    let report = &repaired.report;
    assert_eq!(report.full_routing, None, "{what}");
    assert!(report.crossing > 0, "{what}: the damage crosses routes");
    assert!(
        !churn_at_most_one || report.changed <= report.crossing,
        "{what}: {} changed, {} had to",
        report.changed,
        report.crossing
    );
    let n = graph.len();
    // A tree counts as changed exactly when one of its switches' next switch changed.
    let mut new_of = vec![None; case.graph.len()];
    for (v, old) in old_of.iter().enumerate() {
        new_of[old.unwrap()] = Some(v);
    }
    for l in 0..repaired.layers.count() {
        for t in 0..n {
            let old_t = old_of[t].unwrap();
            let differs = (0..n).filter(|&v| v != t).any(|v| {
                let after = repaired
                    .layers
                    .next_edge(l, v, t)
                    .map(|e| Some(graph.edge_to[e] as usize));
                let before = case
                    .layers
                    .next_edge(l, old_of[v].unwrap(), old_t)
                    .map(|e| new_of[case.graph.edge_to[e] as usize]);
                after != before
            });
            assert_eq!(
                repaired.changed_trees.contains(l, t),
                differs,
                "{what}: layer {l}, tree of switch {t}"
            );
        }
    }
    for l in 0..repaired.layers.count() {
        for t in 0..n {
            let dist = graph.dist_to(t);
            for v in (0..n).filter(|&v| v != t && dist[v] != FAR) {
                let path = repaired
                    .layers
                    .path(graph, l, v, t)
                    .unwrap_or_else(|| panic!("{what}: layer {l}: {v} -> {t} has no route"));
                let mut seen = path.clone();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), path.len(), "{what}: a loop {path:?}");
                if let Some(order) = &repaired.order {
                    let edges: Vec<usize> = path
                        .windows(2)
                        .map(|w| graph.edge_between(w[0], w[1]).unwrap())
                        .collect();
                    assert!(order.is_unimodal(&edges), "{what}: valley {path:?}");
                }
            }
        }
    }
}

fn cases() -> Vec<(&'static str, usize)> {
    vec![
        ("slimfly:q=5", 4),
        ("slimfly:q=7", 4),
        ("mlfm:d=3", 2),
        ("lsft:n=3", 4),
        ("random:switches=24,degree=5,hosts=2,seed=9", 4),
    ]
}

fn build(spec: &str) -> Fabric {
    spec.parse::<TopologySpec>().unwrap().build().unwrap()
}

#[test]
fn one_lost_cable_changes_only_routes_that_crossed_it() {
    for (spec, layers) in cases() {
        let whole = build(spec);
        for turns in [Turns::Any, Turns::Unimodal] {
            let case = routed(&whole, layers, turns);
            for cable in [0, 7, 19] {
                let (graph, old_of) = damaged(&whole, |c| c == cable, &[]);
                check_repair(
                    &format!("{spec} L{layers} {turns:?} cable {cable}"),
                    &case,
                    &graph,
                    &old_of,
                );
            }
        }
    }
}

/// Every 13th cable of the first 130: ten cables on the larger fabrics.
fn ten_cut(c: usize) -> bool {
    c % 13 == 5 && c < 13 * 10
}

#[test]
fn ten_lost_cables_change_only_routes_that_crossed_them() {
    for (spec, layers) in cases() {
        let whole = build(spec);
        let case = routed(&whole, layers, Turns::Any);
        let (graph, old_of) = damaged(&whole, ten_cut, &[]);
        check_repair(&format!("{spec} L{layers}"), &case, &graph, &old_of);
    }
}

#[test]
fn ten_lost_cables_are_repaired_within_the_cable_order() {
    for (spec, layers) in cases() {
        let whole = build(spec);
        let case = routed(&whole, layers, Turns::Unimodal);
        let (graph, old_of) = damaged(&whole, ten_cut, &[]);
        check_repair_with(&format!("{spec} L{layers}"), &case, &graph, &old_of, false);
    }
}

/// The target for the unimodal repair: on Slim Fly q = 5 the ten cuts break the spanning
/// tree so that no switch fits back where its cables rank, the order is made again, and
/// kept routes over the moved switches become valleys (1,464 routes changed where 1,247 had
/// to). Fixing it means moving the cables of the moved switches' subtrees to fit, not only
/// the two cables to the new parent.
#[test]
#[ignore = "known gap: churn 1.17 after ten cuts on Slim Fly q = 5 in the cable order"]
fn ten_lost_cables_change_only_routes_that_crossed_them_in_the_cable_order() {
    for (spec, layers) in cases() {
        let whole = build(spec);
        let case = routed(&whole, layers, Turns::Unimodal);
        let (graph, old_of) = damaged(&whole, ten_cut, &[]);
        check_repair(&format!("{spec} L{layers}"), &case, &graph, &old_of);
    }
}

#[test]
fn a_lost_switch_changes_only_routes_that_crossed_it() {
    for (spec, layers) in cases() {
        let whole = build(spec);
        let victim = whole.node(whole.switches().nth(3).unwrap()).name.clone();
        for turns in [Turns::Any, Turns::Unimodal] {
            let case = routed(&whole, layers, turns);
            let (graph, old_of) = damaged(&whole, |_| false, &[&victim]);
            check_repair(
                &format!("{spec} {turns:?} without {victim}"),
                &case,
                &graph,
                &old_of,
            );
        }
    }
}

#[test]
fn an_intact_fabric_keeps_every_route() {
    let whole = build("slimfly:q=5");
    for turns in [Turns::Any, Turns::Unimodal] {
        let case = routed(&whole, 4, turns);
        let (graph, old_of) = damaged(&whole, |_| false, &[]);
        let previous = Previous {
            graph: &case.graph,
            layers: &case.layers,
            order: case.order.as_ref(),
        };
        let repaired = repair(&previous, &graph, &old_of, &case.config);
        assert_eq!(repaired.report, RepairReport::default(), "{turns:?}");
        assert_eq!(repaired.changed_trees.count(), 0, "{turns:?}");
        for l in 0..4 {
            for t in 0..graph.len() {
                for v in 0..graph.len() {
                    assert_eq!(
                        repaired.layers.next_edge(l, v, t),
                        case.layers.next_edge(l, v, t),
                        "{turns:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_changed_layer_count_is_a_full_routing_that_says_why() {
    let whole = build("slimfly:q=5");
    let case = routed(&whole, 4, Turns::Unimodal);
    let (graph, old_of) = damaged(&whole, |c| c == 3, &[]);
    let previous = Previous {
        graph: &case.graph,
        layers: &case.layers,
        order: case.order.as_ref(),
    };
    let config = RoutingConfig {
        layers: 2,
        ..case.config.clone()
    };
    let repaired = repair(&previous, &graph, &old_of, &config);
    let why = repaired.report.full_routing.expect("a full routing");
    assert!(why.contains("layers changed from 4 to 2"), "{why}");
    assert_eq!(repaired.layers.count(), 2);
    assert_eq!(repaired.changed_trees.count(), 2 * graph.len());
}
