//! Placement on generated fabrics with core routing: routes against graph distances, the
//! circulant optimum, incremental against full costs, two-opt's guarantees.

use super::*;
use crate::rng::Rng;
use crate::routing::layered::{Algorithm, RoutingConfig};
use crate::routing::{Routed, assign_lids, route_fabric};
use crate::topology::{Fabric, SwitchGraph, TopologySpec};

struct RoutedFabric {
    fabric: Fabric,
    routed: Routed,
}

fn routed(spec: &str) -> RoutedFabric {
    let spec: TopologySpec = spec.parse().unwrap();
    let mut fabric = spec.build().unwrap();
    assign_lids(&mut fabric, 0).unwrap();
    let config = RoutingConfig {
        layers: 1,
        algorithm: Algorithm::Minimal,
        seed: 1,
    };
    let routed = route_fabric(&fabric, &config).unwrap();
    RoutedFabric { fabric, routed }
}

fn routes_for(r: &RoutedFabric, slots: &[Slot], paths: bool) -> HostRoutes {
    let ports: Vec<_> = slots.iter().map(|s| s.port).collect();
    HostRoutes::from_tables(&r.fabric, &r.routed.lids, &r.routed.tables, &ports, paths).unwrap()
}

#[test]
fn minimal_routes_between_hosts_are_graph_distances_and_paths_match_hops() {
    for spec in [
        "shortcut:nodes=40,degree=5,hosts=2,seed=3",
        "circulant:nodes=32,hosts=1",
        "random:switches=30,degree=4,hosts=1,seed=2",
    ] {
        let r = routed(spec);
        let graph = SwitchGraph::new(&r.fabric);
        let slots = host_slots(&r.fabric, &graph);
        let routes = routes_for(&r, &slots, true);
        for (a, sa) in slots.iter().enumerate() {
            let dist = graph.distances_from(sa.switch as usize);
            for (b, sb) in slots.iter().enumerate() {
                let hops = routes.hops(a as u32, b as u32);
                assert_eq!(hops, dist[sb.switch as usize], "{spec}: {a} -> {b}");
                assert_eq!(
                    routes.path(a as u32, b as u32).len(),
                    hops as usize,
                    "{spec}"
                );
            }
        }
    }
}

#[test]
fn consecutive_ranks_on_the_power_of_two_circulant_take_one_hop_per_message() {
    // G(n, log2 n): every message of the three collectives crosses one cable when ranks follow
    // the ring, for all nodes and for every stride-n/m sub-circulant of m = 2^j nodes.
    for n in [8u32, 16, 64] {
        let r = routed(&format!("circulant:nodes={n},hosts=1"));
        let graph = SwitchGraph::new(&r.fabric);
        let all = host_slots(&r.fabric, &graph);
        let mut m = 2;
        while m <= n as usize {
            let stride = n as usize / m;
            let slots: Vec<Slot> = (0..m).map(|i| all[(3 + i * stride) % n as usize]).collect();
            let routes = routes_for(&r, &slots, false);
            for collective in Collective::ALL {
                let schedule = collective.schedule(m);
                let eval =
                    Evaluator::new(&routes, &schedule, Objective::Hops, (0..m as u32).collect());
                assert_eq!(
                    eval.cost().hops,
                    schedule.message_count() as u64,
                    "n={n} m={m} {collective}"
                );
            }
            m *= 2;
        }
    }
}

#[test]
fn incremental_costs_equal_full_recomputation_after_random_swaps() {
    let r = routed("shortcut:nodes=48,degree=5,hosts=2,seed=7");
    let graph = SwitchGraph::new(&r.fabric);
    let all = host_slots(&r.fabric, &graph);
    for ranks in [2usize, 5, 13, 32, 37] {
        let chosen = allocate(Mapping::Random, &all, ranks, &graph, ranks as u64);
        let slots: Vec<Slot> = chosen.iter().map(|&i| all[i as usize]).collect();
        let routes = routes_for(&r, &slots, true);
        for collective in Collective::ALL {
            let schedule = collective.schedule(ranks);
            for objective in [Objective::Hops, Objective::Contention] {
                let mut eval =
                    Evaluator::new(&routes, &schedule, objective, (0..ranks as u32).collect());
                assert_eq!(
                    eval.cost().key(objective),
                    eval.full_cost().key(objective),
                    "{collective} {objective:?} start"
                );
                let mut rng = Rng::new(ranks as u64);
                for i in 0..300 {
                    let a = rng.below(ranks as u64) as u32;
                    let b = rng.below(ranks as u64) as u32;
                    if a == b {
                        continue;
                    }
                    if i % 2 == 0 {
                        eval.swap(a, b);
                    } else {
                        eval.try_swap(a, b);
                    }
                    let full = eval.full_cost();
                    match objective {
                        Objective::Hops => assert_eq!(eval.cost().hops, full.hops),
                        Objective::Contention => assert_eq!(eval.cost(), full),
                    }
                }
            }
        }
    }
}

#[test]
fn two_opt_is_never_worse_than_its_start_and_deterministic_per_seed() {
    let r = routed("shortcut:nodes=64,degree=6,hosts=1,seed=1");
    let graph = SwitchGraph::new(&r.fabric);
    let all = host_slots(&r.fabric, &graph);
    for mapping in [
        Mapping::Ascending,
        Mapping::Random,
        Mapping::Tree,
        Mapping::Ring,
    ] {
        let chosen = allocate(mapping, &all, 24, &graph, 5);
        let slots: Vec<Slot> = chosen.iter().map(|&i| all[i as usize]).collect();
        let routes = routes_for(&r, &slots, true);
        for collective in Collective::ALL {
            let schedule = collective.schedule(slots.len());
            for objective in [Objective::Hops, Objective::Contention] {
                for seed in 0..3 {
                    let run_once = || {
                        let mut eval =
                            Evaluator::new(&routes, &schedule, objective, (0..24).collect());
                        let run = two_opt(&mut eval, 2000, seed);
                        assert_eq!(eval.cost().key(objective), eval.full_cost().key(objective));
                        (run, eval.placement().to_vec())
                    };
                    let (run, placement) = run_once();
                    assert!(
                        run.after.key(objective) <= run.before.key(objective),
                        "{mapping} {collective} {objective:?}: {run:?}"
                    );
                    let mut sorted = placement.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, (0..24).collect::<Vec<u32>>(), "a permutation");
                    assert_eq!(run_once(), (run, placement), "same seed, same result");
                }
            }
        }
    }
}

#[test]
fn allocations_pick_distinct_hosts_and_rank_orders_are_permutations() {
    let r = routed("shortcut:nodes=50,degree=4,hosts=2,seed=2");
    let graph = SwitchGraph::new(&r.fabric);
    let all = host_slots(&r.fabric, &graph);
    assert_eq!(all.len(), 100);
    for mapping in [
        Mapping::Ascending,
        Mapping::Random,
        Mapping::Tree,
        Mapping::Ring,
    ] {
        for count in [0, 1, 17, 100] {
            let chosen = allocate(mapping, &all, count, &graph, 9);
            let mut sorted = chosen.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), count, "{mapping}: distinct hosts");
            let slots: Vec<Slot> = chosen.iter().map(|&i| all[i as usize]).collect();
            let mut order = rank_order(mapping, &slots, &graph, 4);
            order.sort_unstable();
            assert_eq!(order, (0..count as u32).collect::<Vec<_>>(), "{mapping}");
        }
    }
    // Ring-consecutive: hosts of consecutive ring switches; tree: a connected set of switches.
    let ring = allocate(Mapping::Ring, &all, 30, &graph, 3);
    for w in ring.windows(2) {
        assert_eq!((w[0] + 1) % 100, w[1]);
    }
    // A wrapped allocation is numbered as one line by the ring order.
    let wrapped: Vec<Slot> = [96, 97, 98, 99, 0, 1, 2, 3]
        .iter()
        .map(|&i| all[i])
        .collect();
    let order = rank_order(Mapping::Ring, &wrapped, &graph, 0);
    assert_eq!(order, vec![0, 1, 2, 3, 4, 5, 6, 7]);
}
