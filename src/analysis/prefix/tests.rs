//! Small fabrics against brute force over every host permutation, and properties over
//! fabrics and seeds.

use super::*;
use crate::analysis::{Options, analyze as analyze_all};
use crate::routing::{
    Algorithm, ForwardingTables, LidTable, PathLengths, RoutingConfig, assign_lids, route_fabric,
};
use crate::topology::{Fabric, TopologySpec};

fn routed(
    spec: &str,
    layers: usize,
    algorithm: Algorithm,
    seed: u64,
) -> (Fabric, LidTable, ForwardingTables) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let config = RoutingConfig {
        layers,
        algorithm,
        seed,
        ..RoutingConfig::default()
    };
    let r = route_fabric(&fabric, &config).unwrap();
    (fabric, r.lids, r.tables)
}

fn layered() -> Algorithm {
    Algorithm::Layered(PathLengths::default())
}

/// The heaviest cable load over every host permutation (Heap's algorithm), per prefix.
fn brute_force_worst(paths: &HostPaths<'_, '_>, ks: &[usize]) -> Vec<u64> {
    let hosts = paths.hosts();
    let mut perm: Vec<usize> = (0..hosts).collect();
    let mut load = vec![0u64; paths.ctx.net.cables.len()];
    let mut worst = vec![0u64; ks.len()];
    let mut visit = |p: &[usize]| {
        for (w, &k) in worst.iter_mut().zip(ks) {
            *w = (*w).max(permutation_load(paths, p, k, &mut load));
        }
    };
    let mut c = vec![0usize; hosts];
    visit(&perm);
    let mut i = 1;
    while i < hosts {
        if c[i] < i {
            let j = if i % 2 == 0 { 0 } else { c[i] };
            perm.swap(j, i);
            visit(&perm);
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    worst
}

/// Small fabrics whose hosts (≤ 8) allow every permutation.
const SMALL: [&str; 4] = [
    "random:switches=4,degree=3,hosts=2,seed=1",
    "random:switches=6,degree=3,hosts=1,seed=2",
    "random:switches=5,degree=2,hosts=1,seed=3",
    "random:switches=6,degree=2,hosts=1,seed=4",
];

#[test]
fn the_worst_permutation_equals_brute_force_over_every_permutation() {
    for spec in SMALL {
        for (algorithm, layers) in [(layered(), 4), (Algorithm::Minimal, 2), (layered(), 2)] {
            for seed in 1..=3 {
                let (f, lids, tables) = routed(spec, layers, algorithm.clone(), seed);
                let ctx = Context::new(&f, &lids, &tables);
                let paths = HostPaths::new(&ctx, ctx.layers);
                assert!(paths.hosts() <= 8, "{spec}: too many hosts for brute force");
                let ks = prefixes(ctx.layers);
                let expected = brute_force_worst(&paths, &ks);
                for (&k, &want) in ks.iter().zip(&expected) {
                    let got = worst::worst(&paths, k, 0);
                    assert_eq!(got.load, want, "{spec} {algorithm:?} seed {seed} K={k}");
                    // A known load at or below the answer (what sampled permutations give the
                    // pruning) changes nothing.
                    assert_eq!(worst::worst(&paths, k, want / 2).load, want);
                    assert_eq!(worst::worst(&paths, k, want).load, want);
                }
            }
        }
    }
}

#[test]
fn every_pattern_is_at_least_as_good_as_the_worst_permutation() {
    for seed in 1..=6 {
        let spec = format!("random:switches=12,degree=4,hosts=3,seed={seed}");
        for algorithm in [layered(), Algorithm::Minimal] {
            let (f, lids, tables) = routed(&spec, 4, algorithm.clone(), seed);
            let ctx = Context::new(&f, &lids, &tables);
            let options = PrefixOptions {
                seed,
                ..PrefixOptions::default()
            };
            let report = analyze(&ctx, &options);
            assert_eq!(report.prefixes.len(), 3);
            for p in &report.prefixes {
                let worst = p.worst.unwrap();
                let all = [
                    p.all_to_all,
                    p.random_mean,
                    p.random_min,
                    p.adversarial_mean,
                    worst,
                ];
                assert!(all.iter().all(|&v| v > 0.0 && v <= 1.0), "{spec}: {p:?}");
                // All-to-all is a mixture of permutations (Birkhoff), so never below the worst.
                assert!(p.all_to_all >= worst - 1e-12, "{spec}: {p:?}");
                assert!(p.random_min >= worst - 1e-12, "{spec}: {p:?}");
                assert!(p.random_mean >= p.random_min, "{spec}: {p:?}");
                assert!(p.adversarial_mean >= worst - 1e-12, "{spec}: {p:?}");
            }
        }
    }
}

#[test]
fn all_to_all_of_each_layer_alone_follows_from_the_link_load_report() {
    for (spec, algorithm) in [
        ("slimfly:q=5", Algorithm::Minimal),
        ("slimfly:q=5", layered()),
        ("random:switches=16,degree=4,hosts=3,seed=7", layered()),
    ] {
        let (f, lids, tables) = routed(spec, 4, algorithm, 1);
        let options = Options {
            prefix: Some(PrefixOptions {
                worst: false,
                ..PrefixOptions::default()
            }),
            ..Options::default()
        };
        let report = analyze_all(&f, &lids, &tables, &options);
        let prefix = report.prefix.unwrap();
        let n = report.endpoints as f64;
        // Layer 0's routes per cable, each route 1/(N − 1) of a host's rate.
        let max0 = report.link_load.per_layer[0].max as f64;
        let expected = ((n - 1.0) / max0).min(1.0);
        assert!(
            (prefix.prefixes[0].all_to_all - expected).abs() < 1e-12,
            "{spec}: {} vs {expected}",
            prefix.prefixes[0].all_to_all
        );
        assert!(
            (prefix.prefixes[0].balance - report.link_load.per_layer[0].max_over_mean).abs() < 1e-9
        );
        assert!(prefix.prefixes[0].worst.is_none());
    }
}

#[test]
fn minimal_routing_of_slim_fly_is_the_same_on_every_prefix_of_its_identical_layers() {
    // Minimal routing gives every layer of a Slim Fly the same paths (checked here), so
    // splitting over more layers changes nothing.
    let (f, lids, tables) = routed("slimfly:q=5", 4, Algorithm::Minimal, 1);
    let ctx = Context::new(&f, &lids, &tables);
    let paths = HostPaths::new(&ctx, ctx.layers);
    for l in 1..ctx.layers {
        for h in 0..paths.hosts() {
            for s in 0..paths.n {
                assert!(paths.cables(s, h, l).eq(paths.cables(s, h, 0)));
            }
        }
    }
    let report = analyze(&ctx, &PrefixOptions::default());
    assert_eq!(report.adversarial_farthest, 1.0);
    let first = &report.prefixes[0];
    for p in &report.prefixes[1..] {
        assert_eq!(p.all_to_all, first.all_to_all);
        assert_eq!(p.worst, first.worst);
        assert_eq!(p.random_mean, first.random_mean);
        assert_eq!(p.random_min, first.random_min);
    }
}

#[test]
fn the_report_is_deterministic_for_a_seed() {
    let (f, lids, tables) = routed(
        "random:switches=10,degree=3,hosts=2,seed=5",
        4,
        layered(),
        5,
    );
    let ctx = Context::new(&f, &lids, &tables);
    let a = analyze(&ctx, &PrefixOptions::default());
    let b = analyze(&ctx, &PrefixOptions::default());
    let strip = |r: &PrefixReport| -> Vec<(f64, f64, f64, Option<f64>)> {
        r.prefixes
            .iter()
            .map(|p| (p.all_to_all, p.random_mean, p.adversarial_mean, p.worst))
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn prefixes_are_the_powers_of_two_and_the_layer_count() {
    assert_eq!(prefixes(0), Vec::<usize>::new());
    assert_eq!(prefixes(1), vec![1]);
    assert_eq!(prefixes(4), vec![1, 2, 4]);
    assert_eq!(prefixes(6), vec![1, 2, 4, 6]);
    assert_eq!(prefixes(8), vec![1, 2, 4, 8]);
}

#[test]
fn balance_of_the_routing_layers_matches_the_analysers_link_load() {
    use crate::routing::graph::RoutingGraph;
    for seed in 1..=4 {
        let spec = format!("random:switches=14,degree=4,hosts=2,seed={seed}");
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        let config = RoutingConfig {
            layers: 4,
            algorithm: layered(),
            seed,
            ..RoutingConfig::default()
        };
        let r = route_fabric(&fabric, &config).unwrap();
        let graph = RoutingGraph::new(&fabric);
        let loads = balance::layer_loads(&graph, &r.layers);
        let report = analyze_all(&fabric, &r.lids, &r.tables, &Options::default());
        for (l, stats) in report.link_load.per_layer.iter().enumerate() {
            assert_eq!(
                loads[l].iter().sum::<u64>(),
                stats.total,
                "{spec} layer {l}"
            );
            assert_eq!(
                loads[l].iter().copied().max(),
                Some(stats.max),
                "{spec} layer {l}"
            );
        }
        let ks = prefixes(4);
        let balance = prefix_balance(&loads, &ks);
        for (b, &k) in balance.iter().zip(&ks) {
            let summed: Vec<u64> = (0..loads[0].len())
                .map(|c| loads.iter().take(k).map(|l| l[c]).sum())
                .collect();
            assert_eq!(b.max, summed.iter().copied().max().unwrap());
            let mean = summed.iter().sum::<u64>() as f64 / summed.len() as f64;
            assert!((b.mean - mean).abs() < 1e-9);
        }
    }
}

#[test]
fn the_transportation_plan_equals_kuhn_munkres_on_the_hosts() {
    use crate::rng::Rng;
    use pathfinding::kuhn_munkres::kuhn_munkres;
    use pathfinding::matrix::Matrix;
    let mut rng = Rng::new(11);
    for case in 0..300 {
        let ns = 1 + rng.below(6) as usize;
        let nd = 1 + rng.below(6) as usize;
        let supply: Vec<u32> = (0..ns).map(|_| 1 + rng.below(4) as u32).collect();
        let demand: Vec<u32> = (0..nd).map(|_| 1 + rng.below(4) as u32).collect();
        let mut weight = vec![0u32; ns * nd];
        let mut edges = Vec::new();
        for i in 0..ns {
            for j in 0..nd {
                if rng.below(3) > 0 {
                    let w = 1 + rng.below(8) as u32;
                    weight[i * nd + j] = w;
                    edges.push((i as u32, j as u32, w));
                }
            }
        }
        // Host level: one row per unit of supply, one column per unit of demand.
        let rows: Vec<usize> = (0..ns)
            .flat_map(|i| std::iter::repeat_n(i, supply[i] as usize))
            .collect();
        let columns: Vec<usize> = (0..nd)
            .flat_map(|j| std::iter::repeat_n(j, demand[j] as usize))
            .collect();
        let w = |a: usize, b: usize| i64::from(weight[rows[a] * nd + columns[b]]);
        let expected = if rows.len() <= columns.len() {
            kuhn_munkres(&Matrix::from_fn(rows.len(), columns.len(), |(a, b)| {
                w(a, b)
            }))
            .0
        } else {
            kuhn_munkres(&Matrix::from_fn(columns.len(), rows.len(), |(b, a)| {
                w(a, b)
            }))
            .0
        };
        assert_eq!(
            transport::heaviest_plan(&supply, &demand, &edges),
            expected as u64,
            "case {case}: supply {supply:?} demand {demand:?} edges {edges:?}"
        );
    }
}
