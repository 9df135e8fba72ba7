//! Fabrics of diameter 2 and girth 5 (Slim Fly q = 5, the Hoffman–Singleton graph; the
//! Petersen graph): the layers the order must leave room for, decided exactly, and the order
//! searched together with them.
//!
//! On such a fabric the layered routing's lengths leave little choice. Two adjacent switches
//! have no detour of at most 3 hops (it would close a cycle of at most 4), so every layer
//! routes them directly. A switch s at distance 2 from t has exactly one common neighbour m
//! (two would close a 4-cycle), so its minimal route is s → m → t, and its only 3-hop routes go
//! to another neighbour n, which is at distance 2 too, and on along n's minimal route
//! n → m_n → t. In one layer's tree towards t, s can therefore detour only through a
//! neighbour whose own route in that layer is minimal. Any two such detours, and each of
//! them and the minimal route, are edge-disjoint (sharing a cable would close a cycle of at
//! most 4 too), so s has three edge-disjoint paths exactly when it detours through two
//! different neighbours in two of the layers after layer 0 (which is minimal).
//!
//! With four layers that is a *split* per destination: each switch at distance 2 routes
//! minimally in one of the layers 1, 2, 3 (its *minimal layer*) and detours in the other two
//! through neighbours whose minimal layer they are — different neighbours by construction.
//! Whether a detour s → n → m_n → t may be taken depends on the cable order (it must not be a
//! valley), so the order decides which splits serve every switch. A local search over each
//! destination's split ([`Split::solve`]) finds one serving all where the order allows it;
//! [`design`] re-ranks the cables the up*/down* guarantee leaves free (and moves the tree's
//! cables only between their neighbours in the tree's order) until every destination's split
//! serves every switch at distance 2: 6/7 of all switch pairs, the most the girth allows
//! (the order's general local search, `detours`, leaves a few pairs without, since it
//! ignores that a layer is a tree).
//!
//! The search is deterministic for a given seed; the routing finds the same splits again
//! from the order alone ([`minimal_layers`]).

use crate::rng::Rng;
use crate::routing::graph::RoutingGraph;

use super::CableOrder;

/// The layers after layer 0 that a split fills: the three that give a switch its minimal
/// route and two disjoint detours.
pub(in crate::routing) const SPLIT_LAYERS: usize = 3;

/// Steps of one run of [`Split::solve`] (a step re-assigns one switch; on Slim Fly q = 5 a
/// split that serves all is found within a few hundred where the order allows one).
const SOLVE_STEPS: usize = 20_000;

/// Runs of [`Split::solve`] from fresh random splits before a destination is given up as
/// short.
const SOLVE_RUNS: usize = 4;

/// Steps a destination's split may take to recover after [`design`] moves a cable.
const REPAIR_STEPS: usize = 3_000;

/// Cable moves [`design`] may try (Slim Fly q = 5: seeds 1 to 12 need 21 to 457, most under
/// 75; the count is in the debug log).
const DESIGN_MOVES: usize = 2_000;

/// Whether every pair of switches is at most 2 hops apart and no cycle is shorter than 5
/// (no two switches share two neighbours, no neighbours share one): the fabrics on which a
/// split decides the layers exactly. Stops at the first short cycle, so it is cheap on every
/// other fabric.
pub(in crate::routing) fn applies(graph: &RoutingGraph) -> bool {
    let n = graph.len();
    if n < 5 {
        return false;
    }
    let mut neighbour = vec![false; n];
    let mut seen_from = vec![u32::MAX; n];
    for v in 0..n {
        for e in graph.edges(v) {
            neighbour[graph.edge_to[e] as usize] = true;
        }
        let mut short_cycle = false;
        'around: for e in graph.edges(v) {
            let u = graph.edge_to[e] as usize;
            for f in graph.edges(u) {
                let w = graph.edge_to[f] as usize;
                if w == v {
                    continue;
                }
                // A triangle v-u-w, or a 4-cycle v-u-w-u'.
                if neighbour[w] || seen_from[w] == v as u32 {
                    short_cycle = true;
                    break 'around;
                }
                seen_from[w] = v as u32;
            }
        }
        for e in graph.edges(v) {
            neighbour[graph.edge_to[e] as usize] = false;
        }
        if short_cycle {
            return false;
        }
    }
    (0..n).all(|t| graph.dist_to(t).iter().all(|&d| d <= 2))
}

/// Per destination t and switch s (`t * n + s`), the layer (1 to [`SPLIT_LAYERS`]) in which s
/// routes minimally; 0 for t, its neighbours, and switches no split could serve (they route
/// minimally in every layer).
pub(in crate::routing) struct MinimalLayers {
    n: usize,
    layer: Vec<u8>,
}

impl MinimalLayers {
    /// The layer in which s routes minimally towards t (0: every layer).
    pub(in crate::routing) fn of(&self, s: usize, t: usize) -> u8 {
        self.layer[t * self.n + s]
    }
}

/// The splits of every destination under `order` (see the module documentation); `graph`
/// must be one [`applies`] accepts. Deterministic for a given seed: the splits [`design`]
/// judged the order by.
pub(in crate::routing) fn minimal_layers(
    graph: &RoutingGraph,
    order: &CableOrder,
    seed: u64,
) -> MinimalLayers {
    let n = graph.len();
    let rank: Vec<f64> = (0..graph.edge_count())
        .map(|e| f64::from(order.rank(e)))
        .collect();
    let mut layer = vec![0u8; n * n];
    for t in 0..n {
        let split = Split::fresh(graph, t, &rank, seed);
        for (i, &s) in split.far.iter().enumerate() {
            if split.serves(i) {
                layer[t * n + s as usize] = split.minimal[i] + 1;
            }
        }
    }
    MinimalLayers { n, layer }
}

/// Re-ranks the cables of `rank` so that every destination's split serves every switch at
/// distance 2, where a bounded search finds such an order: a cable not `fixed` may take any
/// rank, a fixed one any rank between the fixed cables ranked next to it (their relative
/// order is the up*/down* guarantee). A move lifts a valley off a detour of a switch a split
/// leaves short; it stays unless it costs served switches (with a small chance it may cost
/// one, to leave a local optimum). The best order found, judged by the splits
/// [`minimal_layers`] finds again from scratch, is kept.
pub(super) fn design(graph: &RoutingGraph, rank: &mut [u32], fixed: &[bool], seed: u64) {
    let n = graph.len();
    let mut place: Vec<f64> = rank.iter().map(|&r| f64::from(r)).collect();
    let fresh = |place: &[f64]| -> Vec<Split> {
        (0..n)
            .map(|t| Split::fresh(graph, t, place, seed))
            .collect()
    };
    let total = |splits: &[Split]| -> usize { splits.iter().map(Split::served).sum() };
    let mut rng = Rng::new(seed ^ 0x5B11_7DE5);
    let mut splits = fresh(&place);
    let goal: usize = splits.iter().map(|s| s.far.len()).sum();
    let mut served = total(&splits);
    // The best order as the routing will see it (splits found afresh), and the best the
    // search saw (splits carried along from move to move), checked afresh at the end.
    let mut best = (served, place.clone());
    let mut seen = best.clone();
    let mut moves = 0;
    while moves < DESIGN_MOVES {
        moves += 1;
        if served == goal {
            splits = fresh(&place);
            served = total(&splits);
            if served > best.0 {
                best = (served, place.clone());
            }
            if served == goal {
                break;
            }
        }
        let Some((e, to)) = pick_move(graph, &splits, &place, fixed, &mut rng) else {
            continue;
        };
        let old = place[e];
        place[e] = to;
        let mut changed = Vec::new();
        let mut after = served;
        for (t, split) in splits.iter().enumerate() {
            let mut moved = split.clone();
            if moved.reorder(graph, t, &place) {
                moved.improve(&mut rng, REPAIR_STEPS);
                after = after + moved.served() - split.served();
                changed.push((t, moved));
            }
        }
        if after >= served || (after + 1 == served && rng.below(5) == 0) {
            served = after;
            for (t, moved) in changed {
                splits[t] = moved;
            }
            if served > seen.0 {
                seen = (served, place.clone());
            }
        } else {
            place[e] = old;
        }
    }
    if seen.0 > best.0 {
        let again = total(&fresh(&seen.1));
        if again > best.0 {
            best = (again, seen.1);
        }
    }
    log::debug!(
        "cable order: the splits serve {} of the {goal} switch pairs at distance 2 after {moves} \
         cable moves",
        best.0
    );
    let mut by_place: Vec<usize> = (0..rank.len()).collect();
    by_place.sort_by(|&a, &b| best.1[a].total_cmp(&best.1[b]));
    for (r, e) in by_place.into_iter().enumerate() {
        rank[e] = r as u32;
    }
}

/// A move for [`design`]: the cable and its new place. It takes a switch some split leaves
/// short, one of its detours that is a valley, and one of the detour's three cables, and
/// places that cable just past its neighbour so the valley is gone — unless it is a fixed
/// cable that cannot go there.
fn pick_move(
    graph: &RoutingGraph,
    splits: &[Split],
    place: &[f64],
    fixed: &[bool],
    rng: &mut Rng,
) -> Option<(usize, f64)> {
    let short: Vec<usize> = (0..splits.len())
        .filter(|&t| splits[t].served() < splits[t].far.len())
        .collect();
    let t = short[rng.below(short.len() as u64) as usize];
    let split = &splits[t];
    let unserved: Vec<usize> = (0..split.far.len()).filter(|&i| !split.serves(i)).collect();
    let s = split.far[unserved[rng.below(unserved.len() as u64) as usize]] as usize;
    let valleys: Vec<[usize; 3]> = graph
        .edges(s)
        .filter_map(|e| detour(graph, t, e))
        .filter(|p| !unimodal(place, p))
        .collect();
    if valleys.is_empty() {
        return None;
    }
    let p = valleys[rng.below(valleys.len() as u64) as usize];
    let i = rng.below(3) as usize;
    let nudge = 1e-3 * (1.0 + rng.below(1000) as f64 * 1e-4);
    let to = match i {
        1 => place[p[0]].min(place[p[2]]) + nudge,
        _ => place[p[1]] - nudge,
    };
    if fixed[p[i]] {
        let here = place[p[i]];
        let between = |e: usize| fixed[e] && e != p[i];
        let below = (0..place.len())
            .filter(|&e| between(e) && place[e] < here)
            .map(|e| place[e])
            .fold(f64::NEG_INFINITY, f64::max);
        let above = (0..place.len())
            .filter(|&e| between(e) && place[e] > here)
            .map(|e| place[e])
            .fold(f64::INFINITY, f64::min);
        if !(below < to && to < above) {
            return None;
        }
    }
    Some((p[i], to))
}

/// The detour towards t that starts with edge `first` (from a switch at distance 2 to a
/// neighbour at distance 2): its three edges, or `None` if `first` leads elsewhere.
fn detour(graph: &RoutingGraph, t: usize, first: usize) -> Option<[usize; 3]> {
    let n = graph.edge_to[first] as usize;
    if graph.dist(n, t) != 2 || graph.dist(graph.edge_from[first] as usize, t) != 2 {
        return None;
    }
    let m = via(graph, n, t);
    Some([
        first,
        graph.edge_between(n, m).expect("a neighbour"),
        graph.edge_between(m, t).expect("a neighbour"),
    ])
}

/// The common neighbour of s and t, at distance 2 from each other.
pub(in crate::routing) fn via(graph: &RoutingGraph, s: usize, t: usize) -> usize {
    graph
        .edges(s)
        .map(|e| graph.edge_to[e] as usize)
        .find(|&m| graph.dist(m, t) == 1)
        .expect("a switch at distance 2 has a neighbour at distance 1")
}

/// Whether the three cables `p`, in travel order, rise and then fall in `place`.
fn unimodal(place: &[f64], p: &[usize; 3]) -> bool {
    !(place[p[0]] > place[p[1]] && place[p[1]] < place[p[2]])
}

/// One destination's split: its switches at distance 2 (`far`), the neighbours each may
/// detour through (indices into `far`, the detours the order leaves unimodal), and each one's
/// minimal layer (0 to [`SPLIT_LAYERS`] − 1).
#[derive(Clone)]
struct Split {
    far: Vec<u32>,
    detours: Vec<Vec<u32>>,
    /// For each switch, the switches that may detour through it.
    users: Vec<Vec<u32>>,
    minimal: Vec<u8>,
    serving: Vec<bool>,
}

impl Split {
    /// The best split [`Split::solve`] finds for t from fresh random starts.
    fn fresh(graph: &RoutingGraph, t: usize, place: &[f64], seed: u64) -> Self {
        let far: Vec<u32> = (0..graph.len() as u32)
            .filter(|&s| graph.dist(s as usize, t) == 2)
            .collect();
        let mut split = Split {
            minimal: vec![0; far.len()],
            serving: vec![false; far.len()],
            far,
            detours: Vec::new(),
            users: Vec::new(),
        };
        split.reorder(graph, t, place);
        let mut rng = Rng::new(seed ^ (t as u64).wrapping_mul(0x9E37_79B9));
        let mut best = split.clone();
        for _ in 0..SOLVE_RUNS {
            for m in &mut split.minimal {
                *m = rng.below(SPLIT_LAYERS as u64) as u8;
            }
            split.rescore();
            split.improve(&mut rng, SOLVE_STEPS);
            if split.served() > best.served() || best.served() == 0 {
                best = split.clone();
            }
            if best.served() == best.far.len() {
                break;
            }
        }
        best
    }

    /// Recomputes which detours `place` leaves unimodal; whether any changed.
    fn reorder(&mut self, graph: &RoutingGraph, t: usize, place: &[f64]) -> bool {
        let index = |v: usize| self.far.iter().position(|&x| x as usize == v);
        let detours: Vec<Vec<u32>> = self
            .far
            .iter()
            .map(|&s| {
                graph
                    .edges(s as usize)
                    .filter_map(|e| detour(graph, t, e))
                    .filter(|p| unimodal(place, p))
                    .map(|p| index(graph.edge_to[p[0]] as usize).expect("far") as u32)
                    .collect()
            })
            .collect();
        if detours == self.detours {
            return false;
        }
        self.users = vec![Vec::new(); self.far.len()];
        for (s, list) in detours.iter().enumerate() {
            for &v in list {
                self.users[v as usize].push(s as u32);
            }
        }
        self.detours = detours;
        self.rescore();
        true
    }

    /// Whether switch i (an index into `far`) has a detour in both layers it does not route
    /// minimally in.
    fn check(&self, i: usize) -> bool {
        (0..SPLIT_LAYERS as u8)
            .filter(|&k| k != self.minimal[i])
            .all(|k| {
                self.detours[i]
                    .iter()
                    .any(|&v| self.minimal[v as usize] == k)
            })
    }

    fn rescore(&mut self) {
        self.serving = (0..self.far.len()).map(|i| self.check(i)).collect();
    }

    fn serves(&self, i: usize) -> bool {
        self.serving[i]
    }

    fn served(&self) -> usize {
        self.serving.iter().filter(|&&b| b).count()
    }

    /// The change in switches served if switch v's minimal layer became k.
    fn gain(&mut self, v: usize, k: u8) -> isize {
        let old = self.minimal[v];
        self.minimal[v] = k;
        let mut gain = isize::from(self.check(v)) - isize::from(self.serving[v]);
        for &u in &self.users[v] {
            let u = u as usize;
            if u != v {
                gain += isize::from(self.check(u)) - isize::from(self.serving[u]);
            }
        }
        self.minimal[v] = old;
        gain
    }

    fn assign(&mut self, v: usize, k: u8) {
        self.minimal[v] = k;
        self.serving[v] = self.check(v);
        for i in 0..self.users[v].len() {
            let u = self.users[v][i] as usize;
            self.serving[u] = self.check(u);
        }
    }

    /// A min-conflicts search: a switch left short, and the best new minimal layer for it or
    /// for one of the neighbours it could detour through (a random one every tenth step).
    /// Keeps the best split seen.
    fn improve(&mut self, rng: &mut Rng, steps: usize) {
        let mut best = (self.served(), self.minimal.clone());
        for _ in 0..steps {
            if best.0 == self.far.len() {
                break;
            }
            let short: Vec<usize> = (0..self.far.len()).filter(|&i| !self.serving[i]).collect();
            let s = short[rng.below(short.len() as u64) as usize];
            let mut moves = Vec::new();
            for v in std::iter::once(s).chain(self.detours[s].iter().map(|&v| v as usize)) {
                for k in (0..SPLIT_LAYERS as u8).filter(|&k| k != self.minimal[v]) {
                    moves.push((v, k));
                }
            }
            let (v, k) = if rng.below(10) == 0 {
                moves[rng.below(moves.len() as u64) as usize]
            } else {
                let mut top = (isize::MIN, moves[0]);
                for &(v, k) in &moves {
                    let g = self.gain(v, k);
                    if g > top.0 {
                        top = (g, (v, k));
                    }
                }
                top.1
            };
            self.assign(v, k);
            if self.served() > best.0 {
                best = (self.served(), self.minimal.clone());
            }
        }
        self.minimal = best.1;
        self.rescore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::fixtures::{damaged, graph};

    #[test]
    fn applies_to_slim_fly_q5_and_no_fabric_with_a_short_cycle_or_a_longer_distance() {
        assert!(
            applies(&graph("slimfly:q=5")),
            "the Hoffman–Singleton graph"
        );
        for spec in [
            "slimfly:q=4",
            "slimfly:q=7",
            "slimfly:q=8",
            "mlfm:d=3",
            "lsft:n=3",
            "polarfly:q=7",
            "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=4",
            "random:switches=30,degree=4,hosts=1,seed=3",
        ] {
            assert!(!applies(&graph(spec)), "{spec}");
        }
        // A lost cable leaves its switches 3 hops apart (no other 2-hop path in girth 5).
        assert!(!applies(&damaged("slimfly:q=5", 4)), "slimfly:q=5 cut");
    }

    #[test]
    fn designed_orders_serve_every_switch_at_distance_2_for_every_seed() {
        let g = graph("slimfly:q=5");
        let n = g.len();
        for seed in 1..=12 {
            let order = CableOrder::for_routing(&g, seed);
            let minimal = minimal_layers(&g, &order, seed);
            let served = (0..n)
                .flat_map(|t| (0..n).map(move |s| (s, t)))
                .filter(|&(s, t)| minimal.of(s, t) != 0)
                .count();
            assert_eq!(served, 2100, "seed {seed}: switches at distance 2 served");
            assert_eq!(
                minimal_layers(&g, &order, seed).layer,
                minimal.layer,
                "seed {seed}: the splits are found again from the order alone"
            );
        }
    }

    #[test]
    fn a_split_serves_exactly_the_switches_with_detours_in_both_other_layers() {
        // Brute force over a few random splits of one destination: `check` against the
        // definition (a detour in every layer but the minimal one, through a neighbour that
        // is minimal there).
        let g = graph("slimfly:q=5");
        let order = CableOrder::for_routing(&g, 1);
        let place: Vec<f64> = (0..g.edge_count())
            .map(|e| f64::from(order.rank(e)))
            .collect();
        let mut rng = Rng::new(5);
        for t in [0, 17, 49] {
            let mut split = Split::fresh(&g, t, &place, 1);
            for _ in 0..20 {
                for m in &mut split.minimal {
                    *m = rng.below(SPLIT_LAYERS as u64) as u8;
                }
                split.rescore();
                for (i, &s) in split.far.iter().enumerate() {
                    let s = s as usize;
                    let layers_with_detour = (0..SPLIT_LAYERS as u8)
                        .filter(|&k| k != split.minimal[i])
                        .filter(|&k| {
                            g.edges(s).filter_map(|e| detour(&g, t, e)).any(|p| {
                                let v = g.edge_to[p[0]] as usize;
                                let j = split.far.iter().position(|&x| x as usize == v).unwrap();
                                order.is_unimodal(&p) && split.minimal[j] == k
                            })
                        })
                        .count();
                    assert_eq!(split.serves(i), layers_with_detour == 2, "t {t} s {s}");
                }
            }
        }
    }
}
