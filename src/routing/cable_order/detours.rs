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
    /// The opposite direction of each cable.
    reverse: Vec<u32>,
    /// Neighbour sets as bit rows of `words` words each.
    adjacent: Vec<u64>,
    words: usize,
}

impl<'a> Search<'a> {
    fn new(graph: &'a RoutingGraph, rank: &[u32]) -> Self {
        let n = graph.len();
        let key: Vec<u64> = rank
            .iter()
            .map(|&r| (u64::from(r) + 1) * KEY_SPACING)
            .collect();
        let keys = key.iter().copied().collect();
        let tracked: Vec<bool> = (0..n * n)
            .map(|i| matches!(graph.dist(i / n, i % n), 1 | 2))
            .collect();
        let words = n.div_ceil(64);
        let mut adjacent = vec![0u64; n * words];
        for e in 0..graph.edge_count() {
            let (a, b) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
            adjacent[a * words + b / 64] |= 1 << (b % 64);
        }
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
            reverse: (0..graph.edge_count())
                .map(|e| {
                    let (a, b) = (graph.edge_from[e] as usize, graph.edge_to[e] as usize);
                    graph.edge_between(b, a).expect("cables are symmetric") as u32
                })
                .collect(),
            adjacent,
            words,
        }
    }

    fn run(&mut self, fixed: &[bool]) {
        let n = self.graph.len();
        // Destination by destination, so the cables into it are looked up once.
        for (t, s) in (0..n).flat_map(|t| (0..n).map(move |s| (t, s))) {
            if self.tracked[s * n + t] {
                self.witness[s * n + t] = self.check(s, t);
            }
        }
        let mut moves: Vec<(usize, u64)> = Vec::new();
        loop {
            let mut improved = false;
            for (t, s) in (0..n).flat_map(|t| (0..n).map(move |s| (t, s))) {
                let pair = s * n + t;
                if !self.tracked[pair] || self.witness[pair].is_some() {
                    continue;
                }
                if self.work == 0 {
                    return;
                }
                self.valley_moves(s, t, fixed, &mut moves);
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
        self.look_towards(t);
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
        let words = self.words;
        let row_t = &self.adjacent[t * words..(t + 1) * words];
        for e1 in g.edges(s) {
            let a = g.edge_to[e1] as usize;
            if a == t {
                continue;
            }
            // Switches b next to both a and t: the paths s → a → b → t.
            let row_a = &self.adjacent[a * words..(a + 1) * words];
            for (w, (&x, &y)) in row_a.iter().zip(row_t).enumerate() {
                let mut both = x & y;
                while both != 0 {
                    let b = w * 64 + both.trailing_zeros() as usize;
                    both &= both - 1;
                    if b != s && self.paths.len() < MAX_PATHS {
                        let e2 = g.edge_between(a, b).expect("adjacent") as u32;
                        self.paths.push([e1 as u32, e2, self.into_t[b]]);
                    }
                }
            }
        }
        minimal
    }

    /// Points `into_t` at the cables into t.
    fn look_towards(&mut self, t: usize) {
        let g = self.graph;
        if self.into_for == t {
            return;
        }
        if self.into_for != usize::MAX {
            for e in g.edges(self.into_for) {
                self.into_t[g.edge_to[e] as usize] = NONE;
            }
        }
        for e in g.edges(t) {
            let b = g.edge_to[e] as usize;
            self.into_t[b] = g.edge_between(b, t).expect("cables are symmetric") as u32;
        }
        self.into_for = t;
    }

    /// Three edge-disjoint unimodal candidate paths of (s, t): a minimal one and two detours,
    /// or three detours.
    fn check(&mut self, s: usize, t: usize) -> Option<Witness> {
        self.work = self.work.saturating_sub(1);
        self.greedy(s, t).or_else(|| self.exhaustive(s, t))
    }

    /// [`Search::check`] the quick way, which serves most pairs: the first minimal path, then
    /// detours by first cable, each the first unimodal one disjoint from those taken.
    fn greedy(&mut self, s: usize, t: usize) -> Option<Witness> {
        self.look_towards(t);
        let g = self.graph;
        let into_t = &self.into_t;
        let mut taken = [[NONE; 3]; 3];
        let mut count = 0;
        let mut take = |p: Path, taken: &mut Witness| {
            let free = taken[..count]
                .iter()
                .all(|q| p.iter().all(|&e| e == NONE || !q.contains(&e)));
            if free {
                taken[count] = p;
                count += 1;
            }
            count == 3
        };
        let two = |e1: usize| {
            let a = g.edge_to[e1] as usize;
            (a != t && into_t[a] != NONE).then(|| [e1 as u32, into_t[a], NONE])
        };
        if g.dist(s, t) == 1 {
            take([into_t[s], NONE, NONE], &mut taken);
            for e1 in g.edges(s) {
                if let Some(p) = two(e1)
                    && take(p, &mut taken)
                {
                    return Some(taken);
                }
            }
        } else {
            take(g.edges(s).find_map(two)?, &mut taken);
        }
        for e1 in g.edges(s) {
            let a = g.edge_to[e1] as usize;
            if a == t {
                continue;
            }
            let detour = g.edges(a).find_map(|e2| {
                let b = g.edge_to[e2] as usize;
                let p = [e1 as u32, e2 as u32, into_t[b]];
                (b != s && into_t[b] != NONE && self.unimodal(&p)).then_some(p)
            });
            if let Some(p) = detour
                && take(p, &mut taken)
            {
                return Some(taken);
            }
        }
        None
    }

    /// [`Search::check`] over every combination of the candidate paths.
    fn exhaustive(&mut self, s: usize, t: usize) -> Option<Witness> {
        let minimal = self.candidates(s, t);
        let paths = std::mem::take(&mut self.paths);
        let ok: Vec<bool> = paths.iter().map(|p| self.unimodal(p)).collect();
        // Later usable paths disjoint from path i, as a bit mask (computed when needed: most
        // pairs are served by the first paths tried).
        let later_disjoint = |i: usize| -> u64 {
            if !ok[i] {
                return 0;
            }
            let disjoint = |b: &Path| paths[i].iter().all(|&e| e == NONE || !b.contains(&e));
            (i + 1..paths.len())
                .filter(|&j| ok[j] && disjoint(&paths[j]))
                .fold(0u64, |mask, j| mask | 1 << j)
        };
        let detours = u64::MAX.checked_shl(minimal as u32).unwrap_or(0);
        let mut found = None;
        'search: for first in 0..paths.len() {
            let with_first = later_disjoint(first);
            let mut second = with_first & detours;
            while second != 0 {
                let j = second.trailing_zeros() as usize;
                second &= second - 1;
                let third = with_first & later_disjoint(j);
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
        let next = self
            .keys
            .range(key + 1..)
            .next()
            .copied()
            .unwrap_or(key + 2 * KEY_SPACING);
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
        let touched = self.flipped_pairs(e, old);
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
                Some(w) => {
                    if w.iter().all(|p| self.unimodal(p)) {
                        continue;
                    }
                    let now = self.check(pair / n, pair % n);
                    lost += usize::from(now.is_none());
                    changes.push((pair, now));
                }
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

    /// The tracked pairs with a three-cable candidate path through cable e = a → b that was
    /// unimodal with e at `old` and is not now, or the other way round (once each).
    fn flipped_pairs(&mut self, e: usize, old: u64) -> Vec<usize> {
        let g = self.graph;
        let n = g.len();
        let (a, b) = (g.edge_from[e] as usize, g.edge_to[e] as usize);
        let new = self.key[e];
        let (lo, hi) = (old.min(new), old.max(new));
        let between = |k: u64| lo < k && k < hi;
        let key = &self.key;
        let reverse = &self.reverse;
        // Not a valley: no cable lower than both its neighbours in the middle.
        let unimodal = |k1: u64, k2: u64, k3: u64| !(k1 > k2 && k2 < k3);
        self.epoch += 1;
        let epoch = self.epoch;
        let (stamp, tracked) = (&mut self.stamp, &self.tracked);
        let mut out = Vec::new();
        let mut add = |s: usize, t: usize| {
            let pair = s * n + t;
            if tracked[pair] && stamp[pair] != epoch {
                stamp[pair] = epoch;
                out.push(pair);
            }
        };
        // e first: a → b → y → z, flips only when b → y lies between the old and new key.
        for f2 in g.edges(b).filter(|&f| between(key[f])) {
            let y = g.edge_to[f2] as usize;
            if y == a {
                continue;
            }
            for f3 in g.edges(y) {
                let z = g.edge_to[f3] as usize;
                if z != a
                    && z != b
                    && unimodal(old, key[f2], key[f3]) != unimodal(new, key[f2], key[f3])
                {
                    add(a, z);
                }
            }
        }
        // e last: w → x → a → b, flips only when x → a lies between.
        for out_a in g.edges(a) {
            let x = g.edge_to[out_a] as usize;
            let f2 = reverse[out_a] as usize;
            if x == b || !between(key[f2]) {
                continue;
            }
            for out_x in g.edges(x) {
                let w = g.edge_to[out_x] as usize;
                let f1 = reverse[out_x] as usize;
                if w != a
                    && w != b
                    && unimodal(key[f1], key[f2], old) != unimodal(key[f1], key[f2], new)
                {
                    add(w, b);
                }
            }
        }
        // e in the middle: x → a → b → y, flips only when a neighbour lies between.
        for out_a in g.edges(a) {
            let x = g.edge_to[out_a] as usize;
            let f1 = reverse[out_a] as usize;
            if x == b {
                continue;
            }
            for f3 in g.edges(b) {
                let y = g.edge_to[f3] as usize;
                if y != a
                    && y != x
                    && (between(key[f1]) || between(key[f3]))
                    && unimodal(key[f1], old, key[f3]) != unimodal(key[f1], new, key[f3])
                {
                    add(x, y);
                }
            }
        }
        out
    }
}
