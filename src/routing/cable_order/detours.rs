//! The detours a cable order leaves unimodal, and a local search over the ranks that the
//! up*/down* guarantee does not fix, so that more switch pairs keep three disjoint routes.
//!
//! The layered routing gives a pair at distance d ≤ 2 a minimal path in layer 0 and paths of
//! d + 1 to max(d + 1, 3) hops in the other layers; three edge-disjoint ones among them are its
//! goal. Two-cable paths are always unimodal, but a third of the three-cable detours are
//! valleys in an up*/down* or a random order, and for some pairs exactly the ones they need
//! (Slim Fly q = 7: 400 of 9506 pairs are left without three disjoint unimodal paths of the
//! allowed lengths; q = 5: 57 of the 2100 pairs the fabric's girth allows).
//!
//! Only the spanning tree's chains have to keep their order for every pair to keep a unimodal
//! route; every other directed cable can take any rank. The search goes through the pairs
//! short of three disjoint unimodal paths and, for each valley among their detours, tries the
//! smallest moves that lift it: the middle cable just above one of its neighbours, or a
//! neighbour just below it. A move stays when it gives more pairs three disjoint unimodal
//! paths than it takes away. Deterministic: pairs in index order, moves in a fixed order.

use std::collections::BTreeSet;

use crate::routing::graph::{NONE, RoutingGraph};

/// Cables of one candidate path (unused slots [`NONE`]).
type Path = [u32; 3];

/// Three edge-disjoint paths that show a pair is served: their cables.
type Witness = [Path; 3];

/// Most candidate paths a pair's check looks at (Slim Fly q = 19: about 30 per pair).
const MAX_PATHS: usize = 64;

/// Re-ranks the cables not marked `fixed` so that more switch pairs at distance 1 or 2 have
/// three edge-disjoint unimodal paths of the layered routing's lengths, spending at most
/// `work` pair checks. `rank` is a permutation of the edges; it stays one, and the relative
/// order of the fixed cables does not change.
pub(super) fn spread_detours(graph: &RoutingGraph, rank: &mut [u32], fixed: &[bool], work: u64) {
    let mut search = Search::new(graph, rank);
    search.work = work;
    search.run(fixed);
    let mut by_key: Vec<usize> = (0..rank.len()).collect();
    by_key.sort_unstable_by_key(|&e| search.key[e]);
    for (r, e) in by_key.into_iter().enumerate() {
        rank[e] = r as u32;
    }
}

/// Gaps between the initial keys: room for that many halvings around every cable.
const KEY_SPACING: u64 = 1 << 40;

struct Search<'a> {
    graph: &'a RoutingGraph,
    /// The cables' positions in the order (sparse, so a cable can move between two others).
    key: Vec<u64>,
    keys: BTreeSet<u64>,
    /// Per pair (`s * n + t`): three disjoint unimodal paths, if it has them.
    witness: Vec<Option<Witness>>,
    /// Pairs at distance 1 or 2, the ones the search serves.
    tracked: Vec<bool>,
    /// Pair-check budget.
    work: u64,
    /// Marks of the pairs a move touches (de-duplication).
    stamp: Vec<u32>,
    epoch: u32,
    paths: Vec<Path>,
    /// For each switch: the edge into the current destination, or [`NONE`].
    into_t: Vec<u32>,
    into_for: usize,
}

impl<'a> Search<'a> {
    fn new(graph: &'a RoutingGraph, rank: &[u32]) -> Self {
        let n = graph.len();
        let key: Vec<u64> = rank.iter().map(|&r| (u64::from(r) + 1) * KEY_SPACING).collect();
        let keys = key.iter().copied().collect();
        let tracked: Vec<bool> = (0..n * n)
            .map(|i| matches!(graph.dist(i / n, i % n), 1 | 2))
            .collect();
        Self {
            graph,
            key,
            keys,
            witness: vec![None; n * n],
            tracked,
            work: 0,
            stamp: vec![0; n * n],
            epoch: 0,
            paths: Vec::with_capacity(MAX_PATHS),
            into_t: vec![NONE; n],
            into_for: usize::MAX,
        }
    }

    fn run(&mut self, fixed: &[bool]) {
        let n = self.graph.len();
        for pair in 0..n * n {
            if self.tracked[pair] {
                self.witness[pair] = self.check(pair / n, pair % n);
            }
        }
        let mut moves: Vec<(usize, u64)> = Vec::new();
        loop {
            let mut improved = false;
            for pair in 0..n * n {
                if !self.tracked[pair] || self.witness[pair].is_some() {
                    continue;
                }
                if self.work == 0 {
                    return;
                }
                self.valley_moves(pair / n, pair % n, fixed, &mut moves);
                for &(e, key) in &moves {
                    if self.try_move(e, key) {
                        improved = true;
                        break;
                    }
                }
            }
            if !improved {
                return;
            }
        }
    }

    fn unimodal(&self, path: &Path) -> bool {
        let k = |i: usize| self.key[path[i] as usize];
        match path.iter().filter(|&&e| e != NONE).count() {
            3 => !(k(0) > k(1) && k(1) < k(2)),
            _ => true,
        }
    }

    /// The candidate paths of (s, t), unimodal or not, into `self.paths`: the minimal ones
    /// first (their number is returned), then the detours of one more hop, and of three hops
    /// for adjacent switches.
    fn candidates(&mut self, s: usize, t: usize) -> usize {
        let g = self.graph;
        if self.into_for != t {
            self.into_t.fill(NONE);
            for e in g.edges(t) {
                let b = g.edge_to[e] as usize;
                self.into_t[b] = g.edge_between(b, t).expect("cables are symmetric") as u32;
            }
            self.into_for = t;
        }
        self.paths.clear();
        let d = g.dist(s, t);
        if d == 1 {
            let e = self.into_t[s];
            self.paths.push([e, NONE, NONE]);
        }
        // Two cables: minimal at distance 2, a detour at distance 1.
        for e1 in g.edges(s) {
            let a = g.edge_to[e1] as usize;
            if a != t && self.into_t[a] != NONE && self.paths.len() < MAX_PATHS {
                self.paths.push([e1 as u32, self.into_t[a], NONE]);
            }
        }
        let minimal = if d == 1 { 1 } else { self.paths.len() };
        for e1 in g.edges(s) {
            let a = g.edge_to[e1] as usize;
            if a == t {
                continue;
            }
            for e2 in g.edges(a) {
                let b = g.edge_to[e2] as usize;
                if b != s && b != t && self.into_t[b] != NONE && self.paths.len() < MAX_PATHS {
                    self.paths.push([e1 as u32, e2 as u32, self.into_t[b]]);
                }
            }
        }
        minimal
    }

    /// Three edge-disjoint unimodal candidate paths of (s, t): a minimal one and two detours,
    /// or three detours.
    fn check(&mut self, s: usize, t: usize) -> Option<Witness> {
        self.work = self.work.saturating_sub(1);
        let minimal = self.candidates(s, t);
        let paths = std::mem::take(&mut self.paths);
        let ok: Vec<bool> = paths.iter().map(|p| self.unimodal(p)).collect();
        let disjoint = |a: &Path, b: &Path| a.iter().all(|&e| e == NONE || !b.contains(&e));
        // compatible[i]: later usable paths disjoint from path i.
        let compatible: Vec<u64> = (0..paths.len())
            .map(|i| {
                (i + 1..paths.len())
                    .filter(|&j| ok[i] && ok[j] && disjoint(&paths[i], &paths[j]))
                    .fold(0u64, |mask, j| mask | 1 << j)
            })
            .collect();
        let detours = u64::MAX.checked_shl(minimal as u32).unwrap_or(0);
        let mut found = None;
        'search: for first in 0..paths.len() {
            let mut second = compatible[first] & detours;
            while second != 0 {
                let j = second.trailing_zeros() as usize;
                second &= second - 1;
                let third = compatible[first] & compatible[j];
                if third != 0 {
                    let k = third.trailing_zeros() as usize;
                    found = Some([paths[first], paths[j], paths[k]]);
                    break 'search;
                }
            }
        }
        self.paths = paths;
        found
    }

    /// The moves that lift the valleys among the detours of (s, t), into `moves`.
    fn valley_moves(&mut self, s: usize, t: usize, fixed: &[bool], moves: &mut Vec<(usize, u64)>) {
        moves.clear();
        self.candidates(s, t);
        for p in &self.paths {
            if p[2] == NONE || self.unimodal(p) {
                continue;
            }
            let [e1, e2, e3] = p.map(|e| e as usize);
            let (k1, k2, k3) = (self.key[e1], self.key[e2], self.key[e3]);
            if !fixed[e2] {
                for target in [k1.min(k3), k1.max(k3)] {
                    if let Some(key) = self.just_above(target) {
                        moves.push((e2, key));
                    }
                }
            }
            for e in [e1, e3] {
                if !fixed[e]
                    && let Some(key) = self.just_below(k2)
                {
                    moves.push((e, key));
                }
            }
        }
    }

    fn just_above(&self, key: u64) -> Option<u64> {
        let next = self.keys.range(key + 1..).next().copied().unwrap_or(key + 2 * KEY_SPACING);
        (next - key >= 2).then(|| key + (next - key) / 2)
    }

    fn just_below(&self, key: u64) -> Option<u64> {
        let prev = self.keys.range(..key).next_back().copied().unwrap_or(0);
        (key - prev >= 2).then(|| prev + (key - prev) / 2)
    }

    /// Moves cable e to `key` if that serves more pairs than it stops serving; whether it did.
    fn try_move(&mut self, e: usize, key: u64) -> bool {
        let old = self.key[e];
        self.key[e] = key;
        let touched = self.touched_pairs(e);
        let mut changes: Vec<(usize, Option<Witness>)> = Vec::new();
        let (mut gained, mut lost) = (0usize, 0usize);
        for &pair in &touched {
            let n = self.graph.len();
            match self.witness[pair] {
                None => {
                    if let Some(w) = self.check(pair / n, pair % n) {
                        gained += 1;
                        changes.push((pair, Some(w)));
                    }
                }
                Some(w) if w.iter().any(|p| p.contains(&(e as u32))) => {
                    if w.iter().all(|p| self.unimodal(p)) {
                        continue;
                    }
                    let now = self.check(pair / n, pair % n);
                    lost += usize::from(now.is_none());
                    changes.push((pair, now));
                }
                Some(_) => {}
            }
        }
        if gained > lost {
            self.keys.remove(&old);
            self.keys.insert(key);
            for (pair, w) in changes {
                self.witness[pair] = w;
            }
            true
        } else {
            self.key[e] = old;
            false
        }
    }

    /// The tracked pairs with a candidate path through cable e = a → b (once each).
    fn touched_pairs(&mut self, e: usize) -> Vec<usize> {
        let g = self.graph;
        let n = g.len();
        let (a, b) = (g.edge_from[e] as usize, g.edge_to[e] as usize);
        self.epoch += 1;
        let mut out = Vec::new();
        let mut add = |s: usize, t: usize, stamp: &mut [u32], epoch: u32| {
            let pair = s * n + t;
            if s != t && self.tracked[pair] && stamp[pair] != epoch {
                stamp[pair] = epoch;
                out.push(pair);
            }
        };
        let mut stamp = std::mem::take(&mut self.stamp);
        let epoch = self.epoch;
        let neighbours = |v: usize| g.edges(v).map(|f| g.edge_to[f] as usize);
        add(a, b, &mut stamp, epoch);
        for y in neighbours(b) {
            add(a, y, &mut stamp, epoch); // e first of two
            for z in neighbours(y) {
                add(a, z, &mut stamp, epoch); // e first of three
            }
        }
        for x in neighbours(a) {
            add(x, b, &mut stamp, epoch); // e last of two
            for w in neighbours(x) {
                add(w, b, &mut stamp, epoch); // e last of three
            }
            for y in neighbours(b) {
                add(x, y, &mut stamp, epoch); // e in the middle
            }
        }
        self.stamp = stamp;
        out
    }
}
