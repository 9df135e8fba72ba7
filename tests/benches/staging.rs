//! Benchmark: planning the passes of a change (`session::transition`), what the plugin runs
//! under OpenSM's lock before it writes a change, on Slim Flys with 4 layers and lanes by port
//! pair (the plugin's default).
//!
//! `cargo bench --bench staging [q=7]` routes the intact fabric, cuts 1, 2, 5 and 10 seeded
//! random switch-to-switch cables cumulatively (each step repaired from the last, as the
//! plugin does), then puts every cable back (the return to the full routing), and prints one
//! Markdown row per step: the changed entries, the drop pass of `stage` (entries dropped, of
//! them still working) and its time, and `stage_with_proof` (the transition verifier sparing
//! working routes and checking a change of lanes): entries dropped, still working, moved,
//! whether the lanes change and get a pass of their own, and its time; the same plan with
//! three multicast groups (every host, a third of them, every fifth) whose trees the verifier
//! includes, the new trees kept from the old where they still are trees of the new routing, as
//! the plugin builds them: working entries dropped, tree entries shrunk (and with the new
//! trees built afresh), time; then the whole change
//! as the plugin writes it, each pass staged afresh with the proof from what the previous one
//! left: the passes (d drop, l lanes, i install), the entries dropped over all of them, of
//! them still working, and the time the plans took, all passes together (one run).

#[path = "measure.rs"]
mod measure;

use ibfabric::Fabric;
use ibfabric::deadlock::Shortage;
use ibfabric::deadlock::Sl2VlTables;
use ibfabric::options::DeadlockMode;
use ibfabric::rng::Rng;
use ibfabric::routing::multicast::{group_tables, kept_group_tables};
use ibfabric::routing::{ForwardingTables, LidTable, MulticastTables, RoutingConfig, assign_lids};
use ibfabric::session::transition::{NO_TREES, Tables, stage, stage_with_proof};
use ibfabric::session::{DeadlockSettings, Routed, repair, route};
use ibfabric::topology::{PortRef, TopologySpec};
use measure::{measure, median, ms};
use std::time::{Duration, Instant};

fn settings() -> DeadlockSettings {
    DeadlockSettings {
        mode: DeadlockMode::Auto,
        vls: 8,
        shortage: Shortage::Fail,
    }
}

/// The whole change from `held` with `old_lanes` to `target` with `new_lanes`, each pass staged
/// with the proof from what the last one left: the passes' kinds, and the entries dropped over
/// all passes and, of them, those still working.
fn follow(
    fabric: &Fabric,
    lids: &LidTable,
    held: &ForwardingTables,
    target: &ForwardingTables,
    old_lanes: &Sl2VlTables,
    new_lanes: &Sl2VlTables,
) -> (String, usize, usize, Duration) {
    let (mut tables, mut lanes) = (held.clone(), old_lanes.clone());
    let mut planning = Duration::ZERO;
    let (mut kinds, mut dropped, mut working) = (String::new(), 0, 0);
    while tables != *target || !lanes.same_lanes(new_lanes, fabric) {
        assert!(kinds.len() < 6, "more than 6 passes");
        let started = Instant::now();
        let s = stage_with_proof(
            fabric,
            lids,
            Tables {
                forwarding: &tables,
                lanes: &lanes,
                trees: &NO_TREES,
            },
            Tables {
                forwarding: target,
                lanes: new_lanes,
                trees: &NO_TREES,
            },
            true,
        );
        planning += started.elapsed();
        dropped += s.dropped;
        working += s.dropped_working;
        (tables, lanes, kinds) = match s.first_pass {
            Some(first) if s.lanes_pass => (first, new_lanes.clone(), kinds + "l"),
            Some(first) => (first, lanes, kinds + "d"),
            None => (target.clone(), new_lanes.clone(), kinds + "i"),
        };
    }
    (kinds, dropped, working, planning)
}

/// One step's row: the change from `held` (lanes of `old`) to `new` on `fabric`.
fn row(q: u32, step: &str, fabric: &Fabric, old: &Routed, new: &Routed) {
    let lids = LidTable::from_fabric(fabric).unwrap();
    let lanes = |r: &Routed| r.qos.as_ref().unwrap().lanes_on(fabric);
    let (old_lanes, new_lanes) = (lanes(old), lanes(new));
    let (plain_times, plain) = measure(|| stage(fabric, &lids, &old.tables, &new.tables));
    // The first plan with the proof, with the groups' trees `trees` (old, new).
    let plan = |trees: (&MulticastTables, &MulticastTables)| {
        measure(|| {
            stage_with_proof(
                fabric,
                &lids,
                Tables {
                    forwarding: &old.tables,
                    lanes: &old_lanes,
                    trees: trees.0,
                },
                Tables {
                    forwarding: &new.tables,
                    lanes: &new_lanes,
                    trees: trees.1,
                },
                true,
            )
        })
    };
    let (proof_times, proof) = plan((&NO_TREES, &NO_TREES));
    // The same plan with three groups (every host, a third, every fifth) as the plugin builds
    // their trees over each routing: the verifier's runs then include the trees.
    let trees = |r: &Routed| {
        let hosts: Vec<PortRef> = r
            .multicast
            .fabric
            .hosts()
            .map(|node| PortRef { node, port: 1 })
            .collect();
        let groups = [
            (0xc000, hosts.clone()),
            (0xc001, hosts[..hosts.len() / 3].to_vec()),
            (0xc002, hosts.iter().copied().step_by(5).collect()),
        ];
        let basis = &r.multicast;
        let built = group_tables(&basis.fabric, &basis.graph, basis.order.as_ref(), &groups);
        (groups, built)
    };
    // The new routing's trees as the plugin builds them, kept from those the switches hold
    // where they are still trees of it; and, to compare, built afresh.
    let ((groups, old_trees), (_, afresh)) = (trees(old), trees(new));
    let basis = &new.multicast;
    let new_trees = kept_group_tables(
        &basis.fabric,
        &basis.graph,
        basis.order.as_ref(),
        &groups,
        &old_trees,
    );
    let (tree_times, with_trees) = plan((&old_trees, &new_trees));
    let (_, with_afresh) = plan((&old_trees, &afresh));
    let lanes_change = !old_lanes.same_lanes(&new_lanes, fabric);
    let (passes, all_dropped, all_working, planning) = follow(
        fabric,
        &lids,
        &old.tables,
        &new.tables,
        &old_lanes,
        &new_lanes,
    );
    println!(
        "| q = {q} | {step} | {} | {} / {} | {} | {} / {} / {} | {} | {} | {} / {} ({} afresh) | {} | {passes}: {all_dropped} / {all_working} | {} |",
        plain.changed,
        plain.dropped,
        plain.dropped_working,
        ms(median(&plain_times)),
        proof.dropped,
        proof.dropped_working,
        proof.moved,
        match (
            lanes_change,
            proof.lanes_pass || proof.dropped > plain.dropped
        ) {
            (false, _) => "no",
            (true, true) => "yes: lanes pass",
            (true, false) => "yes: proven",
        },
        ms(median(&proof_times)),
        with_trees.dropped_working,
        with_trees.trees_shrunk,
        with_afresh.trees_shrunk,
        ms(median(&tree_times)),
        ms(planning),
    );
}

fn main() {
    let q: u32 = std::env::args()
        .skip(1)
        .find_map(|a| a.strip_prefix("q=").and_then(|v| v.parse().ok()))
        .unwrap_or(7);
    let mut whole = format!("slimfly:q={q}")
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut whole, 2).unwrap();
    let config = RoutingConfig {
        layers: 4,
        ..RoutingConfig::default()
    };
    println!(
        "| fabric | step | entries changed | stage: dropped / still working | time | \
         with proof: dropped / still working / moved | lanes change | time | \
         with 3 groups: still working dropped / tree entries shrunk (new trees afresh) | time | \
         whole change: passes: dropped / still working | time |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let full = route(whole.clone(), &config, &settings()).unwrap();
    let cables: Vec<u32> = (0..whole.links().len() as u32)
        .filter(|&i| {
            let l = &whole.links()[i as usize];
            whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch()
        })
        .collect();
    let mut rng = Rng::new(7);
    let mut cut: Vec<u32> = Vec::new();
    let mut last = full;
    let first = route(whole.clone(), &config, &settings()).unwrap();
    for (step, n) in [
        ("1 cable", 1),
        ("2 cables", 2),
        ("5 cables", 5),
        ("10 cables", 10),
    ] {
        while cut.len() < n {
            let c = cables[rng.below(cables.len() as u64) as usize];
            if !cut.contains(&c) {
                cut.push(c);
            }
        }
        let damaged = whole.after_losses(|_| false, |l| cut.contains(&l.0));
        let repaired = repair(&last, damaged.clone(), &config, &settings(), false)
            .unwrap()
            .expect("repairable");
        row(q, step, &damaged, &last, &repaired);
        last = repaired;
    }
    row(q, "every cable back", &whole, &last, &first);
}
