//! The repair keeps every route that does not cross a loss, completes the rest within the
//! turn rule, and routes in full only when it must.

use super::*;
use crate::routing::config::{PathLengths, longest_allowed};
use crate::routing::disjoint::{count_disjoint, pairs_with_disjoint_paths};
use crate::routing::tree::route_loads;
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
/// kept routes over the moved switches become valleys (1,516 routes changed where 1,257 had
/// to). Fixing it means moving the cables of the moved switches' subtrees to fit, not only
/// the two cables to the new parent.
#[test]
#[ignore = "known gap: churn 1.21 after ten cuts on Slim Fly q = 5 in the cable order"]
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

/// One step of a cut sequence: the routing repaired (graph, layers, order), the damaged graph
/// with its switch map and the LIDs per tree, the switch-to-switch cables lost since the
/// intact fabric, and the repair.
struct SequenceStep {
    what: String,
    before: Case,
    graph: RoutingGraph,
    old_of: Vec<Option<usize>>,
    tree_lids: Vec<u32>,
    lost_cables: usize,
    repaired: Repaired,
}

/// The steps of the plugin's fault sequence on `spec` with 4 layers in the cable order and
/// LIDs for them: 1, 2, 5 and 10 seeded random switch-to-switch cables cut cumulatively, then
/// a switch lost, each step repairing the routing the previous one left.
fn cut_sequence(spec: &str, seed: u64) -> Vec<SequenceStep> {
    let mut whole = build(spec);
    crate::routing::assign_lids(&mut whole, 2).unwrap();
    let inter: Vec<usize> = (0..whole.links().len())
        .filter(|&i| {
            let link = &whole.links()[i];
            whole.node(link.a.node).is_switch() && whole.node(link.b.node).is_switch()
        })
        .collect();
    let victim = whole.node(whole.switches().nth(5).unwrap()).name.clone();
    let mut rng = crate::rng::Rng::new(seed);
    let mut cut: Vec<usize> = Vec::new();
    let mut case = routed(&whole, 4, Turns::Unimodal);
    let mut fabric = whole.clone();
    let mut steps = Vec::new();
    for (cables, gone) in [(1, false), (2, false), (5, false), (10, false), (10, true)] {
        while cut.len() < cables {
            let c = inter[rng.below(inter.len() as u64) as usize];
            if !cut.contains(&c) {
                cut.push(c);
            }
        }
        let next = whole.after_losses(
            |id| gone && whole.node(id).name == victim,
            |l| cut.contains(&(l.0 as usize)),
        );
        let graph = RoutingGraph::new(&next);
        let old_of: Vec<Option<usize>> = graph
            .nodes
            .iter()
            .map(|&id| {
                let old = fabric.node_by_guid(next.node(id).guid)?;
                Some(case.graph.index_of[old.index()] as usize)
            })
            .collect();
        let previous = Previous {
            graph: &case.graph,
            layers: &case.layers,
            order: case.order.as_ref(),
        };
        let lids = LidTable::from_fabric(&next).unwrap();
        let tree_lids = lids_per_tree(&next, &graph, &lids, 4);
        let repaired = repair_for_lids(&previous, &graph, &old_of, &case.config, Some(&tree_lids));
        let lost_cables = whole.summary().switch_links - next.summary().switch_links;
        let what = format!(
            "{spec} seed {seed}: {cables} cables{}",
            if gone { " and a switch" } else { "" }
        );
        let after = Case {
            graph: graph.clone(),
            layers: repaired.layers.clone(),
            order: repaired.order.clone(),
            config: case.config.clone(),
        };
        steps.push(SequenceStep {
            what,
            before: case,
            graph,
            old_of,
            tree_lids,
            lost_cables,
            repaired,
        });
        (case, fabric) = (after, next);
    }
    steps
}

/// The cut sequences of Slim Fly q = 5 and q = 7 over three seeds, made once for all tests.
fn sequences() -> &'static [(&'static str, Vec<SequenceStep>)] {
    static SEQUENCES: std::sync::OnceLock<Vec<(&'static str, Vec<SequenceStep>)>> =
        std::sync::OnceLock::new();
    SEQUENCES.get_or_init(|| {
        ["slimfly:q=5", "slimfly:q=7"]
            .into_iter()
            .flat_map(|spec| (1..=3).map(move |seed| (spec, cut_sequence(spec, seed))))
            .collect()
    })
}

fn steps() -> impl Iterator<Item = &'static SequenceStep> {
    sequences().iter().flat_map(|(_, steps)| steps)
}

/// Per tree (`l * n + t`): the routes whose previous path crossed a loss and the routes whose
/// next switch differs between the previous routing and `layers`, counted by walking every
/// previous route.
fn recount_changes(step: &SequenceStep, layers: &Layers) -> Vec<(u64, u64)> {
    let (before, graph) = (&step.before, &step.graph);
    let mut new_of = vec![None; before.graph.len()];
    for (v, old) in step.old_of.iter().enumerate() {
        new_of[old.unwrap()] = Some(v);
    }
    let survives = |e: usize| match (
        new_of[before.graph.edge_from[e] as usize],
        new_of[before.graph.edge_to[e] as usize],
    ) {
        (Some(a), Some(b)) => graph.edge_between(a, b).is_some(),
        _ => false,
    };
    let n = graph.len();
    let mut per_tree = vec![(0, 0); before.layers.count() * n];
    for l in 0..before.layers.count() {
        for t in 0..n {
            let old_t = step.old_of[t].unwrap();
            for v in (0..n).filter(|&v| v != t) {
                let old_v = step.old_of[v].unwrap();
                let path = before.layers.path(&before.graph, l, old_v, old_t).unwrap();
                let crosses = path
                    .windows(2)
                    .any(|w| !survives(before.graph.edge_between(w[0], w[1]).unwrap()));
                let was = new_of[path[1]];
                let is = layers.next_edge(l, v, t).map(|e| graph.edge_to[e] as usize);
                per_tree[l * n + t].0 += u64::from(crosses);
                per_tree[l * n + t].1 += u64::from(was != is);
            }
        }
    }
    per_tree
}

#[test]
fn cut_sequences_change_no_more_routes_than_crossed_a_loss() {
    for step in steps() {
        let report = &step.repaired.report;
        assert_eq!(report.full_routing, None, "{}", step.what);
        let (crossing, changed) = recount_changes(step, &step.repaired.layers)
            .into_iter()
            .fold((0, 0), |(c, d), (x, y)| (c + x, d + y));
        assert_eq!(
            (report.crossing, report.changed),
            (crossing, changed),
            "{}",
            step.what
        );
        assert!(
            changed <= crossing,
            "{}: {changed} changed, {crossing} had to",
            step.what
        );
        assert!(report.spent <= report.budget, "{}: {report:?}", step.what);
    }
}

/// Every LID that follows a tree has an entry per route of the tree (a layer-0 tree also
/// carries its switch's LID), so the routes weighed by their tree's LIDs are the forwarding
/// entries: those that change stay at most those whose route crossed a loss.
#[test]
fn cut_sequences_change_no_more_forwarding_entries_than_crossed_a_loss() {
    for step in steps() {
        let (mut crossing, mut changed) = (0, 0);
        let per_tree = recount_changes(step, &step.repaired.layers);
        for (&(c, d), &lids) in per_tree.iter().zip(&step.tree_lids) {
            crossing += c * u64::from(lids);
            changed += d * u64::from(lids);
        }
        assert!(
            changed <= crossing,
            "{}: {changed} entries changed, {crossing} had to",
            step.what
        );
    }
}

#[test]
fn cut_sequences_leave_every_tree_complete_loop_free_and_unimodal() {
    for step in steps() {
        let order = step.repaired.order.as_ref().expect("an order");
        crate::routing::fixtures::assert_unimodal(
            &step.graph,
            &step.repaired.layers,
            order,
            None,
            &step.what,
        );
    }
}

/// Per pair (s, t) of the repaired graph, t with endpoints (`t * n + s`): its edge-disjoint
/// paths across the layers before the step and after it, counted over every pair.
fn all_counts(step: &SequenceStep) -> (Vec<u8>, Vec<u8>) {
    let (before, graph) = (&step.before, &step.graph);
    let (n, old_n) = (graph.len(), before.graph.len());
    let mut old = vec![0u8; old_n * old_n];
    count_disjoint(&before.graph, &before.layers, 4, &mut old);
    let mut now = vec![0u8; n * n];
    count_disjoint(graph, &step.repaired.layers, 4, &mut now);
    let mut was = vec![0u8; n * n];
    for t in 0..n {
        for s in 0..n {
            was[t * n + s] = old[step.old_of[t].unwrap() * old_n + step.old_of[s].unwrap()];
        }
    }
    (was, now)
}

#[test]
fn degraded_pairs_equal_a_brute_force_recount() {
    for step in steps() {
        let (was, now) = all_counts(step);
        let n = step.graph.len();
        let pairs = (0..n)
            .filter(|&t| step.graph.endpoints[t] > 0)
            .flat_map(|t| (0..n).filter(move |&s| s != t).map(move |s| t * n + s));
        let (mut degraded, mut below_target) = (0, 0);
        for i in pairs {
            degraded += u64::from(now[i] < was[i]);
            below_target += u64::from(was[i] >= 3 && now[i] < 3);
        }
        let report = &step.repaired.report;
        assert_eq!(
            (report.degraded, report.below_target),
            (degraded, below_target),
            "{}",
            step.what
        );
    }
}

/// Percent of pairs (s, t), t with endpoints, with at least three edge-disjoint paths.
fn three_path_percent(graph: &RoutingGraph, layers: &Layers) -> f64 {
    let (good, all) = pairs_with_disjoint_paths(graph, layers, 3);
    100.0 * good as f64 / all as f64
}

#[test]
fn on_slim_fly_q7_three_path_pairs_drop_at_most_half_a_point_per_lost_cable() {
    for (spec, steps) in sequences()
        .iter()
        .filter(|(spec, _)| *spec == "slimfly:q=7")
    {
        let intact = three_path_percent(&steps[0].before.graph, &steps[0].before.layers);
        for step in steps {
            let now = three_path_percent(&step.graph, &step.repaired.layers);
            let allowed = 0.5 * step.lost_cables as f64;
            assert!(
                intact - now <= allowed,
                "{spec} {}: {intact:.2} % -> {now:.2} %, {} cables lost",
                step.what,
                step.lost_cables
            );
        }
    }
}

/// The completion alone, as the repair makes it before its disjoint repair.
fn completion(step: &SequenceStep) -> Layers {
    let previous = Previous {
        graph: &step.before.graph,
        layers: &step.before.layers,
        order: step.before.order.as_ref(),
    };
    try_repair(&previous, &step.graph, &step.old_of, &step.before.config)
        .expect("repaired")
        .0
}

#[test]
fn the_disjoint_repair_leaves_no_more_pairs_short_of_three_paths_than_the_completion() {
    for step in steps() {
        let completed = completion(step);
        let (before, _) = pairs_with_disjoint_paths(&step.graph, &completed, 3);
        let (after, _) = pairs_with_disjoint_paths(&step.graph, &step.repaired.layers, 3);
        assert!(after >= before, "{}: {before} -> {after}", step.what);
    }
}

#[test]
fn the_disjoint_repair_lengthens_no_route_beyond_its_allowed_length() {
    let lengths = PathLengths::default();
    for step in steps() {
        let completed = completion(step);
        let n = step.graph.len();
        for l in 0..4 {
            for t in 0..n {
                for s in (0..n).filter(|&s| s != t) {
                    let d = step.graph.dist(s, t);
                    let allowed = longest_allowed(Some(&lengths), l, d);
                    let was = usize::from(completed.hops(l, s, t).unwrap());
                    let now = usize::from(step.repaired.layers.hops(l, s, t).unwrap());
                    assert!(
                        now <= allowed.max(was),
                        "{}: layer {l}: {s} -> {t} takes {now} hops, {was} after the \
                         completion, {allowed} allowed",
                        step.what
                    );
                }
            }
        }
    }
}
#[test]
fn the_disjoint_repair_loads_no_link_above_the_completions_highest_load() {
    for step in steps() {
        let completed = route_loads(&step.graph, &completion(step));
        let repaired = route_loads(&step.graph, &step.repaired.layers);
        assert!(
            repaired.iter().max() <= completed.iter().max(),
            "{}: {:?} -> {:?}",
            step.what,
            completed.iter().max(),
            repaired.iter().max()
        );
    }
}

/// `spec` routed without every seventh switch-to-switch cable and without its third switch
/// (`turns`), then repaired for the whole fabric: the cables and the switch come back new.
fn gains(spec: &str, layers: usize, turns: Turns) -> (Case, RoutingGraph, Vec<Option<usize>>) {
    use crate::routing::fixtures::after_losses;
    use crate::routing::repair::old_switches;
    let whole = build(spec);
    let newcomer = whole.switches().nth(3).unwrap();
    let before = after_losses(&whole, |i| i % 7 == 6, |id| id == newcomer);
    let case = routed(&before, layers, turns);
    let graph = RoutingGraph::new(&whole);
    let old_of = old_switches(&before, &case.graph, &whole, &graph);
    (case, graph, old_of)
}

#[test]
fn new_switches_and_cables_are_routed_in_and_no_route_that_was_there_changes() {
    for (spec, layers) in cases() {
        for turns in [Turns::Any, Turns::Unimodal] {
            let what = format!("{spec} L={layers} {turns:?}");
            let (case, graph, old_of) = gains(spec, layers, turns);
            assert_eq!(old_of.iter().filter(|o| o.is_none()).count(), 1, "{what}");
            let previous = Previous {
                graph: &case.graph,
                layers: &case.layers,
                order: case.order.as_ref(),
            };
            let repaired = repair(&previous, &graph, &old_of, &case.config);
            let report = &repaired.report;
            assert_eq!(report.full_routing, None, "{what}");
            assert_eq!((report.crossing, report.changed), (0, 0), "{what}");
            let n = graph.len();
            for l in 0..layers {
                for t in 0..n {
                    for v in (0..n).filter(|&v| v != t) {
                        let path = repaired.layers.path(&graph, l, v, t);
                        let path = path.unwrap_or_else(|| panic!("{what}: layer {l}: {v} -> {t}"));
                        let edges: Vec<usize> = path
                            .windows(2)
                            .map(|w| graph.edge_between(w[0], w[1]).unwrap())
                            .collect();
                        if let Some(order) = &repaired.order {
                            assert!(order.is_unimodal(&edges), "{what}: valley {path:?}");
                        }
                        let (Some(old_v), Some(old_t)) = (old_of[v], old_of[t]) else {
                            assert!(repaired.changed_trees.contains(l, t), "{what}: {l} {t}");
                            continue;
                        };
                        let was = case.layers.path(&case.graph, l, old_v, old_t).unwrap();
                        let is: Vec<Option<usize>> = path.iter().map(|&x| old_of[x]).collect();
                        assert_eq!(
                            is,
                            was.into_iter().map(Some).collect::<Vec<_>>(),
                            "{what}: layer {l}: the route {v} -> {t} moved"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_changes_one_way_are_the_changes_the_other_way_round() {
    use crate::routing::fixtures::after_losses;
    for spec in [
        "slimfly:q=5",
        "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4",
    ] {
        let whole = build(spec);
        let gone = whole.switches().nth(3).unwrap();
        let damaged = after_losses(&whole, |i| i % 5 == 4, |id| id == gone);
        let (g_whole, g_damaged) = (RoutingGraph::new(&whole), RoutingGraph::new(&damaged));
        let lost = FabricChanges::between(&whole, &g_whole, &damaged, &g_damaged);
        let gained = FabricChanges::between(&damaged, &g_damaged, &whole, &g_whole);
        let cut = whole.summary().switch_links - damaged.summary().switch_links;
        assert!(lost.only_losses(), "{spec}: {lost:?}");
        assert_eq!((lost.lost_cables, lost.lost_switches), (cut, 1), "{spec}");
        assert_eq!((gained.lost_cables, gained.lost_switches), (0, 0), "{spec}");
        assert_eq!(gained.gained_switches, 1, "{spec}");
        if spec.starts_with("slimfly") {
            // One cable per switch pair: every cable cut (the lost switch's too) comes back
            // between switches that had none.
            assert_eq!(gained.gained_cables, cut, "{spec}");
        } else {
            // Parallel cables: one that comes back beside a twin that stayed is not gained.
            assert!(
                0 < gained.gained_cables && gained.gained_cables <= cut,
                "{spec}"
            );
        }
        assert_eq!(
            lost.old_of.iter().flatten().count(),
            g_damaged.len(),
            "{spec}: every switch that stayed is matched"
        );
    }
}
