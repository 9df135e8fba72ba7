//! Benchmark: repairing the routing after cable and switch losses, side by side with routing
//! the damaged fabric in full, on Slim Flys with 4 layers and lanes by port pair (the plugin's
//! default).
//!
//! `cargo bench --bench repair [q=7]` cuts 1, 2, 5 and 10 seeded random switch-to-switch cables
//! cumulatively, then one whole switch, and prints one Markdown row per step: the core's time
//! to repair (routing, tables and lanes — what the plugin runs under OpenSM's lock), the
//! changed routes against those whose path crossed a loss (churn), and the time and churn of a
//! full routing of the same damaged fabric, and the switch pairs with at least 3
//! edge-disjoint paths over their 4 layers: before any loss, after the repair, after the full
//! routing, and the repair's drop from the intact fabric against what the issue allows (0.5
//! points per switch-to-switch cable lost so far, a lost switch's cables included). The repair
//! columns also give the budget its disjoint repair used (of crossing − changed after the
//! completion) and the pairs it left with fewer disjoint paths than before (of which below 3).

#[path = "measure.rs"]
mod measure;

use std::time::Instant;

use ibfabric::Fabric;
use ibfabric::deadlock::{
    DeadlockFree, SchemeChoice, Shortage, repair_deadlock_free, route_deadlock_free,
};
use ibfabric::rng::Rng;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{LidTable, RoutingConfig, assign_lids, pairs_with_disjoint_paths};
use ibfabric::topology::TopologySpec;

/// `whole` without the links whose index is in `cut` and without the node named `gone`.
fn damaged(whole: &Fabric, cut: &[usize], gone: Option<&str>) -> Fabric {
    whole.after_losses(
        |id| Some(whole.node(id).name.as_str()) == gone,
        |l| cut.contains(&(l.0 as usize)),
    )
}

fn routed(fabric: &Fabric, config: &RoutingConfig) -> (RoutingGraph, DeadlockFree) {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let graph = RoutingGraph::new(fabric);
    let done = route_deadlock_free(
        fabric,
        &lids,
        &graph,
        config,
        &SchemeChoice::Auto.schemes(8),
        Shortage::Fail,
    )
    .unwrap();
    (graph, done)
}

/// (routes changed, routes that crossed a loss) between two routings of the same switches
/// (switch i of `after` is switch `old_of[i]` of `before`), in (layer, switch, destination).
fn changes(
    before: (&RoutingGraph, &DeadlockFree),
    after: (&RoutingGraph, &DeadlockFree),
    old_of: &[usize],
) -> u64 {
    let (bg, b) = before;
    let (ag, a) = after;
    let mut changed = 0;
    for l in 0..a.routing.count() {
        for t in 0..ag.len() {
            for v in (0..ag.len()).filter(|&v| v != t) {
                let was = b
                    .routing
                    .next_edge(l, old_of[v], old_of[t])
                    .map(|e| bg.nodes[bg.edge_to[e] as usize]);
                let is = a
                    .routing
                    .next_edge(l, v, t)
                    .map(|e| ag.nodes[ag.edge_to[e] as usize]);
                // Node ids differ between the fabrics only when a switch is gone; compare by
                // position in the old graph instead.
                let is = is.map(|n| bg.nodes[old_of[ag.index_of[n.index()] as usize]]);
                changed += u64::from(was != is);
            }
        }
    }
    changed
}

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    println!(
        "| fabric | step | repair | changed / had to change | budget used | pairs degraded \
         (below 3) | full routing | its changed routes | pairs with ≥ 3 disjoint paths: repair / \
         full | drop (allowed) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for q in [7u32, 11, 17] {
        let spec = format!("slimfly:q={q}");
        if filter.as_deref().is_some_and(|f| !spec.contains(f)) {
            continue;
        }
        let mut whole = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut whole, 2).unwrap();
        let config = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let (mut graph, mut done) = routed(&whole, &config);
        let percent = |graph: &RoutingGraph, done: &DeadlockFree| {
            let (good, all) = pairs_with_disjoint_paths(graph, &done.routing, 3);
            100.0 * good as f64 / all.max(1) as f64
        };
        let intact = percent(&graph, &done);
        println!("| Slim Fly q = {q} | intact | | | | | | | {intact:.2} % | |");
        let mut current = whole.clone();
        let inter: Vec<usize> = whole
            .links()
            .iter()
            .enumerate()
            .filter(|(_, l)| whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch())
            .map(|(i, _)| i)
            .collect();
        let mut rng = Rng::new(u64::from(q));
        let mut cut: Vec<usize> = Vec::new();
        let victim = whole.node(whole.switches().nth(5).unwrap()).name.clone();
        for (step, cables, gone) in [
            ("1 cable", 1, None),
            ("2 cables", 2, None),
            ("5 cables", 5, None),
            ("10 cables", 10, None),
            ("10 cables + 1 switch", 10, Some(victim.as_str())),
        ] {
            while cut.len() < cables {
                let c = inter[rng.below(inter.len() as u64) as usize];
                if !cut.contains(&c) {
                    cut.push(c);
                }
            }
            let next = damaged(&whole, &cut, gone);
            let lids = LidTable::from_fabric(&next).unwrap();
            let next_graph = RoutingGraph::new(&next);
            let old_of: Vec<Option<usize>> = next_graph
                .nodes
                .iter()
                .map(|&id| {
                    let old = current.node_by_guid(next.node(id).guid)?;
                    Some(graph.index_of[old.index()] as usize)
                })
                .collect();
            let scheme = &SchemeChoice::PortPair.schemes(8)[0];
            let started = Instant::now();
            let (repaired, report) = repair_deadlock_free(
                &next,
                &lids,
                &next_graph,
                &done,
                &graph,
                &old_of,
                &config,
                scheme,
            )
            .expect("lanes by port pair")
            .expect("the lanes fit");
            let repair_time = started.elapsed();
            let started = Instant::now();
            let (_, full) = routed(&next, &config);
            let full_time = started.elapsed();
            let old_of: Vec<usize> = old_of.into_iter().map(Option::unwrap).collect();
            let full_changed = changes((&graph, &done), (&next_graph, &full), &old_of);
            let lost_cables = whole.summary().switch_links - next.summary().switch_links;
            let after = percent(&next_graph, &repaired);
            println!(
                "| Slim Fly q = {q} | {step} | {} | {} / {} (churn {:.2}){} | {} / {} | {} ({}) \
                 | {} | {} ({:.1}×) | {after:.2} % / {:.2} % | {:.2} ({:.2}) |",
                measure::ms(repair_time),
                report.changed,
                report.crossing,
                report.churn(),
                report
                    .full_routing
                    .as_deref()
                    .map_or(String::new(), |w| format!("; full: {w}")),
                report.spent,
                report.budget,
                report.degraded,
                report.below_target,
                measure::ms(full_time),
                full_changed,
                full_changed as f64 / report.crossing.max(1) as f64,
                percent(&next_graph, &full),
                intact - after,
                0.5 * lost_cables as f64,
            );
            (graph, done, current) = (next_graph, repaired, next);
        }
    }
}
