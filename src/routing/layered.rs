//! The routing driver: [`route`] fills every layer with the chosen [`Algorithm`] — layered
//! multipath routing (the Slim Fly paper, §4 and Appendix B) and the baselines it is compared
//! with — by calling the passes of the files below it, in this order:
//!
//! * Layer 0 is minimal and balanced: per destination, each switch takes the least loaded of its
//!   shortest next hops ([`Layers::attach`]).
//! * Every further layer gives each ordered switch pair one *almost-minimal* path
//!   (`almost_minimal_layer`): at least one hop longer than their distance d and at most
//!   max(d + 1, 3) hops by default, so adjacent switches may take a 2- or 3-hop detour (as the
//!   reference engine's `lnmp_max_path_len 3`), chosen to give every switch disjoint paths and
//!   to keep the link loads even. Pairs left without such a path get the shortest path
//!   consistent with the layer.
//! * On fabrics of diameter 2 and girth 5 (Slim Fly q = 5), with the cable order of
//!   [`Turns::Unimodal`] and four layers or more, layers 1 to 3 are laid instead from the
//!   splits the order was designed for (`lay_split_layer`): per destination, the layer each
//!   switch routes minimally in; in the other two it detours through neighbours minimal there.
//! * The layers are built and balanced prefix by prefix ([`prefix_blocks`]): layer 0, layer 1,
//!   then layers 2-3, then 4-7. MPI stacks put small messages on layer 0 and split bulk data evenly
//!   over the first K layers (UCX: 2 by default, 4 or 8 when configured), so every prefix
//!   0..K must be balanced on its own, not only all layers together. Once a block is built,
//!   `rebalance` moves subtrees between parents of the block's layers where that evens the
//!   link loads of the prefix up to it, keeping every layer loop-free, within its lengths, and
//!   every switch's disjoint paths (up to three); the layers below the block stay as they are.
//! * On fabrics of up to a million routes per layer set, `polish` then searches locally over
//!   the block within a bounded budget: pairs lacking disjoint paths first, then the prefix's
//!   link loads sorted from the largest down, so the maximum rather than the sum of squares.
//!   From layers 2-3 on, it may also move the routes of the earlier layers, as long as the
//!   largest link load of every shorter prefix does not grow ([`polish_layers`]).
//!   The next block is built against the loads this one ended with.
//! * On small fabrics, a routing that still has a link over 1.10 × the mean load is built
//!   again from the start with the next seeds (`restarts`), and the best one is kept.
//!
//! On hierarchical fabrics (fat trees: hosts on the leaves, every cable between adjacent
//! levels; [`Hierarchy`]) the layered algorithm routes every layer minimally instead, and the
//! tables spread each destination switch's LIDs over the equal-cost next hops and parallel
//! cables (`spread`, d-mod-k with one channel further per layer): a fat tree's minimal paths
//! already give every leaf pair one path per spine, so detours only load the spines' downlinks
//! twice (layers 2-3 of a 12 × 6 tree reached 6 × the mean load), and spread minimal layers
//! carry all-to-all at the full rate in every prefix, as minhop and updn do. The fabric is
//! logged as recognised.
//!
//! Link weights are shared by all layers and start with layer 0's load, so each prefix stays
//! balanced as it grows (the reference implementation balances layer 0 separately, which
//! leaves the sum of the layers uneven). Balancing all layers together only, as this driver
//! did before, left each prefix short of all layers uneven: on Slim Fly q = 5 with 4 layers,
//! layers 0-1 carried all-to-all traffic at half the rate of layer 0 alone (BENCHMARKS.md,
//! "Throughput of each prefix of layers").
//!
//! This file is the top of the routing passes: it imports them, and none of them imports it.

use super::almost_minimal::{LayerState, almost_minimal_layer};
use super::cable_order::CableOrder;
use super::cable_order::split::{self, MinimalLayers, SPLIT_LAYERS};
use super::config::Turns;
use super::config::{Algorithm, PathLengths, RoutingConfig};
use super::disjoint::count_disjoint;
use super::graph::RoutingGraph;
use super::hierarchy::{self, Hierarchy};
use super::layers::{AttachScratch, Layers};
use super::polish::polish;
use super::rebalance::rebalance;
use super::restarts::best_of;
use super::split_layers::lay_split_layer;
use super::tree::route_loads;
use crate::rng::Rng;
use std::ops::Range;
use std::time::Instant;

/// Routes every layer of `graph`.
///
/// # Complexity
/// Layer 0: O(n·(n + m)). Each layered layer: O(n²) pair searches, each bounded by the
/// search depth and pruned by distance and weight (about k'² steps for one extra hop).
pub fn route(graph: &RoutingGraph, config: &RoutingConfig) -> Layers {
    let order =
        (config.turns == Turns::Unimodal).then(|| CableOrder::for_routing(graph, config.seed));
    route_in_order(graph, config, order.as_ref())
}

/// [`route`] with the cable order of [`Turns::Unimodal`] given (`None` for [`Turns::Any`]),
/// for callers that need the order too — the lanes by port pair are chosen from it — and
/// should not compute it twice.
///
/// Layered routings of small fabrics that end with a link over 1.10 × the mean load are built
/// again with the seeds after the configured one ([`restarts`](super::restarts)), in the same
/// order; the best is kept.
pub fn route_in_order(
    graph: &RoutingGraph,
    config: &RoutingConfig,
    order: Option<&CableOrder>,
) -> Layers {
    debug_assert_eq!(order.is_some(), config.turns == Turns::Unimodal);
    if matches!(config.algorithm, Algorithm::Layered(_)) && Hierarchy::recognise(graph).is_some() {
        log::info!("{}", hierarchy::describe(graph));
        let minimal = RoutingConfig {
            algorithm: Algorithm::Minimal,
            ..config.clone()
        };
        return route_once(graph, &minimal, order);
    }
    if !matches!(config.algorithm, Algorithm::Layered(_)) {
        return route_once(graph, config, order);
    }
    best_of(graph, config.layers, config.seed, |seed| {
        let config = RoutingConfig {
            seed,
            ..config.clone()
        };
        route_once(graph, &config, order)
    })
}

/// One routing of every layer with `config.seed`: the passes in the order the module
/// documentation gives, prefix by prefix ([`prefix_blocks`]) for the layered algorithm.
fn route_once(graph: &RoutingGraph, config: &RoutingConfig, order: Option<&CableOrder>) -> Layers {
    let n = graph.len();
    let count = config.layers.max(1);
    let layered = matches!(config.algorithm, Algorithm::Layered(_));
    let mut layers = Layers::new(n, if layered { 1 } else { count });
    let mut weights = vec![0u64; graph.edge_count()];
    let mut rng = Rng::new(config.seed);
    let mut scratch = AttachScratch::default();
    let mut destinations: Vec<usize> = (0..n).collect();
    let mut complete = |layers: &mut Layers,
                        l: usize,
                        weights: &mut [u64],
                        rng: &mut Rng,
                        kept: Option<&[bool]>| {
        rng.shuffle(&mut destinations);
        for &t in &destinations {
            if let Some(order) = order {
                if kept.is_some() {
                    layers.attach_unimodal(graph, l, t, weights, order, kept, &mut scratch);
                }
                layers.attach_unimodal(graph, l, t, weights, order, None, &mut scratch);
                continue;
            }
            if let Some(kept) = kept {
                layers.attach(graph, l, t, weights, |e| kept[e], &mut scratch);
            }
            layers.attach(graph, l, t, weights, |_| true, &mut scratch);
        }
    };
    let started = Instant::now();
    complete(&mut layers, 0, &mut weights, &mut rng, None);
    log::debug!("layer 0 routed in {:.2?}", started.elapsed());
    let mut levels = vec![0u8; n * n];
    let mut disjoint = vec![1u8; n * n];
    let splits = order.and_then(|order| Some((order, split_layers(graph, config, order)?)));
    let blocks = if layered {
        prefix_blocks(count)
    } else {
        // Minimal and RUES layers are built in one go: they have no passes to stage.
        std::iter::once(1..count).collect()
    };
    for block in blocks {
        layers.extend_to(block.end);
        // Layer 0 is built above: every later layer is built against its load.
        for l in block.clone().filter(|&l| l > 0) {
            let started = Instant::now();
            match &config.algorithm {
                Algorithm::Minimal | Algorithm::MlfmA2a => {
                    complete(&mut layers, l, &mut weights, &mut rng, None)
                }
                Algorithm::Layered(_) if l <= SPLIT_LAYERS && splits.is_some() => {
                    let (order, minimal) = splits.as_ref().expect("checked");
                    lay_split_layer(
                        graph,
                        &mut layers,
                        l,
                        minimal,
                        order,
                        &mut weights,
                        &mut levels,
                    );
                    if l + 1 < block.end {
                        count_disjoint(graph, &layers, l + 1, &mut disjoint);
                    }
                }
                Algorithm::Layered(lengths) => {
                    let state = LayerState {
                        levels: &mut levels,
                        disjoint: &disjoint,
                        order,
                    };
                    almost_minimal_layer(
                        graph,
                        &mut layers,
                        l,
                        lengths,
                        &mut weights,
                        state,
                        &mut rng,
                    );
                    complete(&mut layers, l, &mut weights, &mut rng, None);
                    if l + 1 < block.end {
                        count_disjoint(graph, &layers, l + 1, &mut disjoint);
                    }
                }
                Algorithm::Rues { keep_per_mille } => {
                    let kept = sample_links(graph, *keep_per_mille, &mut rng);
                    complete(&mut layers, l, &mut weights, &mut rng, Some(&kept));
                }
            }
            log::debug!("layer {l} routed in {:.2?}", started.elapsed());
        }
        if let Algorithm::Layered(lengths) = &config.algorithm {
            let started = Instant::now();
            let counts = balance_block(
                graph,
                &mut layers,
                lengths,
                order,
                config.seed,
                block.clone(),
                count,
            );
            log::debug!(
                "layers {}-{} balanced in {:.2?}",
                block.start,
                block.end - 1,
                started.elapsed()
            );
            if block.end < count {
                // The next prefix is built against the loads and paths this one ended with
                // (layer 0 alone gives every pair the one path the search starts from).
                weights = route_loads(graph, &layers);
                if block.start > 0 {
                    for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                        for s in (0..n).filter(|&s| s != t) {
                            disjoint[t * n + s] = counts[t * n + s];
                        }
                    }
                }
            }
        }
    }
    debug_assert!(
        order.is_none_or(|order| layers.all_unimodal(graph, order)),
        "a route is not unimodal in the cable order"
    );
    layers
}

/// The blocks of layers the layered routing builds and balances one after the other: layer 0,
/// layer 1, then layers 2-3, 4-7, ... (the last block ends at `count`). MPI stacks split bulk data
/// evenly over the first K layers (UCX: `UCX_MAX_RNDV_RAILS`, 2 by default; 4 or 8 when
/// configured), so each prefix 0..K with K a power of two is balanced on its own before the
/// next block is added, and the passes over a block never move the routes of the prefix
/// below it.
pub(super) fn prefix_blocks(count: usize) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    blocks.push(0..1);
    let mut start = 1;
    while start < count {
        let end = (2 * start).min(count);
        blocks.push(start..end);
        start = end;
    }
    blocks
}

/// Rebalances the layers in `movable` against the loads of the layers up to its end, then
/// polishes them (and, from layers 2-3 on, the earlier layers: [`polish_layers`]), in a routing
/// of `count` layers; returns the edge-disjoint paths of every pair across those layers (`t * n + s`, for
/// the destinations with endpoints), as the passes keep them.
fn balance_block(
    graph: &RoutingGraph,
    layers: &mut Layers,
    lengths: &PathLengths,
    order: Option<&CableOrder>,
    seed: u64,
    movable: Range<usize>,
    count: usize,
) -> Vec<u8> {
    let (loads, disjoint) = rebalance(
        graph,
        layers,
        Some(lengths),
        order,
        REBALANCE_ROUNDS,
        movable.clone(),
    );
    // Whether the polish runs depends on the whole routing's size, not the prefix's: the
    // fabrics it skips leave no time to spare on any block.
    let budget = polish_budget(graph, count);
    if budget == 0 {
        return disjoint;
    }
    let (polished, guarded) = polish_layers(count, &movable);
    polish(
        graph,
        layers,
        Some(lengths),
        loads,
        disjoint,
        order,
        seed,
        budget,
        polished,
        &guarded,
    )
}

/// The layers the polish of the block `movable` may move, and the ends of the shorter prefixes
/// whose largest link load it must keep. Blocks after layer 1 may move every earlier layer,
/// each shorter prefix guarded: the earlier layers were balanced for their own prefix, and the
/// new ones alone (unimodal, longer) often cannot even the longer prefix out (Slim Fly q = 7
/// with 4 layers: all-to-all over layers 0-3 at 0.709 of a link moving layers 2-3 only, 0.758
/// with layers 0-1 movable under their guards; layers 0 and 0-1 keep exactly their all-to-all
/// figures). Layer 1's block moves layer 1 only: moving layer 0 there under its guard lowered
/// the adversarial pattern over layers 0-1 (q = 5 and 7: 0.142 to 0.133, 0.100 to 0.094).
fn polish_layers(count: usize, movable: &Range<usize>) -> (Range<usize>, Vec<usize>) {
    if movable.start < 2 {
        return (movable.clone(), Vec::new());
    }
    let guarded = prefix_blocks(count)
        .iter()
        .map(|block| block.end)
        .filter(|&end| end < movable.end)
        .collect();
    (0..movable.end, guarded)
}

/// The splits that lay layers 1 to [`SPLIT_LAYERS`] ([`lay_split_layer`]), where they decide
/// them exactly: layered unimodal routing with at least one layer more than they fill, lengths
/// that allow distance-2 pairs 3 hops, on a fabric of diameter 2 and girth 5.
fn split_layers(
    graph: &RoutingGraph,
    config: &RoutingConfig,
    order: &CableOrder,
) -> Option<MinimalLayers> {
    let Algorithm::Layered(lengths) = &config.algorithm else {
        return None;
    };
    (config.layers > SPLIT_LAYERS && lengths.range(2).contains(&3) && split::applies(graph))
        .then(|| split::minimal_layers(graph, order, config.seed))
}

/// Rounds of [`rebalance`]: each round tries to move every switch's subtree once. The first
/// rounds make nearly all the moves (Slim Fly q = 19, 4 layers: 730k, 270k, 17k, 1.4k); four
/// keep the pass under a second there.
const REBALANCE_ROUNDS: usize = 4;

/// Work budget of [`polish`] (move evaluations, about 0.1 µs each): [`POLISH_WORK`], or none
/// on fabrics with more than [`POLISH_MAX_ENTRIES`] routes (layers × switches²), which the
/// earlier passes already balance and where the path search leaves no time to spare.
fn polish_budget(graph: &RoutingGraph, layers: usize) -> u64 {
    let n = graph.len() as u64;
    if layers as u64 * n * n > POLISH_MAX_ENTRIES {
        return 0;
    }
    POLISH_WORK
}

/// Largest fabric [`polish`] runs on: layers × switches² (Slim Fly q = 13 with 8 layers: 914k).
const POLISH_MAX_ENTRIES: u64 = 1_000_000;

/// The work [`polish`] spends (about 0.2 s on Slim Fly q = 7 with 4 layers). Going back to a
/// tree it looked at before costs the search little (it keeps them), so a unit buys more
/// search than it did when every visit built the tree again: 900k now reach further than 2 M
/// then, in less time (q = 7 with 4 layers, unimodal: 96.03 % of the pairs with three
/// disjoint paths against 95.86 %).
const POLISH_WORK: u64 = 900_000;

/// A random subset of the links, each kept with probability `keep_per_mille`/1000; both
/// directions of a link share the decision.
fn sample_links(graph: &RoutingGraph, keep_per_mille: u32, rng: &mut Rng) -> Vec<bool> {
    let mut kept = vec![false; graph.edge_count()];
    for e in 0..graph.edge_count() {
        let (s, t) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
        if s < t {
            let keep = rng.below(1000) < u64::from(keep_per_mille);
            kept[e] = keep;
            kept[graph.edge_between(t, s).expect("symmetric")] = keep;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::restarts::Outcome;
    use crate::routing::{PathLengths, pairs_with_disjoint_paths};

    use crate::routing::fixtures::{assert_unimodal, damaged, graph};

    fn layered(layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        }
    }

    /// Max number of edge-disjoint s→t paths among the given switch paths (unit capacities on
    /// directed edges; a tiny augmenting-path max flow).
    pub(crate) fn disjoint(paths: &[Vec<usize>], s: usize, t: usize) -> usize {
        use std::collections::HashMap;
        let mut cap: HashMap<(usize, usize), i32> = HashMap::new();
        for p in paths {
            for w in p.windows(2) {
                cap.insert((w[0], w[1]), 1);
                cap.entry((w[1], w[0])).or_insert(0);
            }
        }
        let mut flow = 0;
        loop {
            let mut prev: HashMap<usize, usize> = HashMap::new();
            let mut stack = vec![s];
            prev.insert(s, s);
            while let Some(v) = stack.pop() {
                for (&(a, b), &c) in &cap {
                    if a == v && c > 0 && !prev.contains_key(&b) {
                        prev.insert(b, v);
                        stack.push(b);
                    }
                }
            }
            if !prev.contains_key(&t) {
                return flow;
            }
            let mut v = t;
            while v != s {
                let u = prev[&v];
                *cap.get_mut(&(u, v)).unwrap() -= 1;
                *cap.get_mut(&(v, u)).unwrap() += 1;
                v = u;
            }
            flow += 1;
        }
    }

    /// The fabrics the unimodal routing is checked on: each family, a fat tree and random
    /// regular graphs.
    const UNIMODAL_FABRICS: [&str; 8] = [
        "slimfly:q=4",
        "slimfly:q=5",
        "slimfly:q=7",
        "mlfm:d=3",
        "lsft:n=3",
        "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4",
        "random:switches=30,degree=4,hosts=1,seed=3",
        "random:switches=24,degree=5,hosts=2,seed=8",
    ];

    fn unimodal(layers: usize, seed: u64) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed,
            turns: Turns::Unimodal,
        }
    }

    /// Routes `g` with [`Turns::Unimodal`] and checks every route of every layer (complete,
    /// loop-free, unimodal in the order the deadlock scheme recomputes); returns the routes
    /// beyond the length rule, per layer.
    fn check_unimodal(g: &RoutingGraph, count: usize, seed: u64, what: &str) -> Vec<usize> {
        let layers = route(g, &unimodal(count, seed));
        let order = CableOrder::for_routing(g, seed);
        let what = format!("{what} L={count} seed {seed}");
        assert_unimodal(g, &layers, &order, Some(&PathLengths::default()), &what)
    }

    #[test]
    fn layers_0_and_1_are_polished_alone() {
        for count in 1..=8 {
            for block in prefix_blocks(count).into_iter().filter(|b| b.start < 2) {
                assert_eq!(polish_layers(count, &block), (block.clone(), Vec::new()));
            }
        }
    }

    #[test]
    fn later_blocks_polish_every_layer_and_guard_each_shorter_prefix() {
        for count in 3..=16 {
            let blocks = prefix_blocks(count);
            for (i, block) in blocks.iter().enumerate().filter(|(_, b)| b.start >= 2) {
                let (polished, guarded) = polish_layers(count, block);
                assert_eq!(polished, 0..block.end, "{count} layers, block {block:?}");
                let ends: Vec<usize> = blocks[..i].iter().map(|b| b.end).collect();
                assert_eq!(guarded, ends, "{count} layers, block {block:?}");
            }
        }
    }

    #[test]
    fn unimodal_routing_gives_every_pair_a_unimodal_route_in_every_layer() {
        for spec in UNIMODAL_FABRICS {
            let g = graph(spec);
            let diameter = (0..g.len())
                .map(|t| g.dist_to(t).iter().max().copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            for count in [1, 2, 4, 8] {
                let too_long = check_unimodal(&g, count, 1, spec);
                // Every route of at most two cables is unimodal, so layer 0 stays minimal
                // wherever the distances are; beyond, a minimal route may have to be a valley.
                if diameter <= 2 {
                    assert_eq!(too_long[0], 0, "{spec} L={count}: layer 0 minimal");
                }
            }
        }
    }

    #[test]
    fn unimodal_routes_on_intact_slim_flies_keep_the_length_rule_in_every_layer() {
        // Layer 0 minimal, every other layer at most max(d + 1, 3) hops: the bound the
        // deadlock colourings and the analysis assume, now with no spanning-tree detours.
        for q in [4, 5, 7, 8] {
            let spec = format!("slimfly:q={q}");
            let g = graph(&spec);
            for count in [2, 4, 8] {
                for seed in [1, 2] {
                    let too_long = check_unimodal(&g, count, seed, &spec);
                    assert_eq!(
                        too_long,
                        vec![0; count],
                        "{spec} L={count} seed {seed}: routes beyond the length rule per layer"
                    );
                }
            }
        }
    }

    #[test]
    fn unimodal_routing_completes_damaged_fabrics() {
        for (spec, every) in [
            ("slimfly:q=5", 4),
            ("slimfly:q=4", 2),
            ("mlfm:d=3", 3),
            ("lsft:n=3", 2),
            ("random:switches=30,degree=4,hosts=1,seed=3", 5),
        ] {
            let g = damaged(spec, every);
            for count in [1, 4] {
                for seed in [1, 2] {
                    check_unimodal(&g, count, seed, &format!("{spec} cut 1/{every}"));
                }
            }
        }
    }

    fn quality(spec: &str, config: &RoutingConfig) -> (f64, u8) {
        let g = graph(spec);
        let layers = route(&g, config);
        let (mut good, mut pairs, mut longest) = (0, 0, 0u8);
        for t in 0..g.len() {
            for s in (0..g.len()).filter(|&s| s != t) {
                let paths: Vec<Vec<usize>> = (0..layers.count())
                    .map(|l| layers.path(&g, l, s, t).unwrap())
                    .collect();
                for (l, p) in paths.iter().enumerate() {
                    let extra = (p.len() - 1) as u8 - g.dist(s, t);
                    longest = longest.max(extra);
                    if l == 0 {
                        assert_eq!(extra, 0, "{spec}: layer 0 is minimal");
                    }
                }
                pairs += 1;
                good += usize::from(disjoint(&paths, s, t) >= 3);
            }
        }
        // The routing's own count agrees with the brute-force flow above.
        assert_eq!(
            pairs_with_disjoint_paths(&g, &layers, 3),
            (good, pairs),
            "{spec}"
        );
        (good as f64 / pairs as f64, longest)
    }

    #[test]
    fn slim_fly_q5_with_4_layers_comes_near_the_structural_limit() {
        // Girth 5: adjacent switches have no 2- or 3-hop detour, so at most 6/7 of the pairs
        // can have 3 disjoint paths. Balancing all layers together reached it; built and
        // balanced prefix by prefix (layer 1 stays when layers 2-3 come), seed 1 gives 84.4 %
        // (2068 of the 2100 possible pairs): the price of layers 0-1 balanced on their own.
        let (fraction, longest) = quality("slimfly:q=5", &layered(4));
        assert!(
            fraction <= 6.0 / 7.0 + 1e-9,
            "{fraction} beats the structural limit: the count is wrong"
        );
        assert!(fraction >= 0.84, "{fraction}");
        assert_eq!(longest, 1, "3-hop paths for distance-2 pairs, no longer");
    }

    #[test]
    fn unimodal_slim_fly_q5_with_4_layers_comes_near_the_structural_limit_for_every_seed() {
        // The cable order designed with the splits (`cable_order::split`) and the layers laid
        // from them give every pair at distance 2 three disjoint unimodal paths; balancing
        // layer 1 on its own before layers 2-3 are laid costs a few of them (seeds 1 to 8:
        // 81.7 % to 83.7 % against 6/7 = 85.7 %).
        for seed in 1..=8 {
            let (fraction, longest) = quality("slimfly:q=5", &unimodal(4, seed));
            println!("seed {seed}: {fraction:.4}");
            assert!(
                (0.81..=6.0 / 7.0 + 1e-9).contains(&fraction),
                "seed {seed}: {fraction} of the pairs with three disjoint paths"
            );
            assert_eq!(longest, 1, "seed {seed}: 3-hop paths for distance-2 pairs");
        }
    }

    #[test]
    fn slim_fly_q7_quality() {
        // With every path at most 3 hops, seed 1 gives 94.7 % of pairs three disjoint paths
        // with 4 layers built prefix by prefix (97 % to 98 % when all layers were balanced
        // together, which left layers 0-1 unbalanced on their own), and over 99.5 % with 8.
        let (f4, _) = quality("slimfly:q=7", &layered(4));
        let (f8, _) = quality("slimfly:q=7", &layered(8));
        println!("q = 7: {f4:.4} with 4 layers, {f8:.4} with 8");
        assert!(f4 >= 0.945, "{f4}");
        assert!(f8 >= 0.995, "{f8}");
    }

    #[test]
    fn restarts_bring_slim_fly_q4_with_two_unimodal_layers_within_the_load_cap() {
        let g = graph("slimfly:q=4");
        let config = unimodal(2, 1);
        let order = CableOrder::for_routing(&g, config.seed);
        let once = route_once(&g, &config, Some(&order));
        assert!(
            Outcome::of(&g, &once).over_cap > 0,
            "seed 1 alone ends within the cap: pick a case that needs the restarts"
        );
        let restarted = route_in_order(&g, &config, Some(&order));
        assert_eq!(Outcome::of(&g, &restarted).over_cap, 0);
        assert!(restarted.all_unimodal(&g, &order));
    }

    #[test]
    fn a_restarted_routing_is_never_worse_than_its_first_attempt() {
        let g = graph("slimfly:q=4");
        for seed in 1..=6 {
            let config = unimodal(2, seed);
            let order = CableOrder::for_routing(&g, seed);
            let once = Outcome::of(&g, &route_once(&g, &config, Some(&order)));
            let best = Outcome::of(&g, &route_in_order(&g, &config, Some(&order)));
            assert!(
                best <= once,
                "seed {seed}: {best:?} after restarts, {once:?} before"
            );
        }
    }
}
