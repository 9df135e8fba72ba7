//! Proper colourings of the switch graph, for the colouring scheme ([`super::colouring`]).
//!
//! [`colour`] runs DSatur (Brélaz 1979) and then tries to remove one colour at a time with a
//! tabu search over conflicting colourings (TabuCol: Hertz and de Werra 1987, with the tenure
//! of Galinier and Hao 1999). DSatur alone needs 16 colours for the Slim Fly q = 27 and
//! 15 for q = 23 and 25 (research notes §1.4); the tabu search brings every Slim Fly up to
//! q = 27 within the colour SLs (see BENCHMARKS.md for the counts).
//!
//! Deterministic: the only randomness is a seeded generator.

use crate::rng::Rng;
use crate::topology::SwitchGraph;

/// A proper colouring: `colours[i]` is the colour of dense switch i (the [`SwitchGraph`]
/// order), in `0..count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colouring {
    /// Colour of each switch.
    pub colours: Vec<u8>,
    /// Number of colours used.
    pub count: usize,
}

/// How hard to look for few colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColouringEffort {
    /// Stop removing colours at this many (a colouring with this many is good enough).
    pub target: usize,
    /// Tabu-search moves allowed per attempt to remove one colour.
    pub moves_per_colour: u64,
    /// Seed of the tabu search.
    pub seed: u64,
}

impl Default for ColouringEffort {
    fn default() -> Self {
        Self {
            target: 1,
            moves_per_colour: 400_000,
            seed: 1,
        }
    }
}

/// Adjacency in compressed form (simple undirected graph, no loops).
#[derive(Debug, Clone)]
pub(crate) struct Adjacency {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Adjacency {
    pub(crate) fn from_switch_graph(graph: &SwitchGraph) -> Self {
        let mut offsets = Vec::with_capacity(graph.len() + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        for i in 0..graph.len() {
            targets.extend_from_slice(graph.neighbours(i));
            offsets.push(targets.len());
        }
        Self { offsets, targets }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn neighbours(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// A proper colouring of `graph` with as few colours as `effort` finds (at least
/// `effort.target` unless DSatur already does better).
pub fn colour(graph: &SwitchGraph, effort: &ColouringEffort) -> Colouring {
    let adj = Adjacency::from_switch_graph(graph);
    let mut best = dsatur(&adj);
    let mut rng = Rng::new(effort.seed);
    while best.count > effort.target.max(1) {
        match tabucol(
            &adj,
            &best,
            best.count - 1,
            effort.moves_per_colour,
            &mut rng,
        ) {
            Some(better) => best = better,
            None => break,
        }
    }
    debug_assert!(is_proper(graph, &best.colours));
    best
}

/// Whether no two adjacent switches share a colour.
pub fn is_proper(graph: &SwitchGraph, colours: &[u8]) -> bool {
    (0..graph.len()).all(|v| {
        graph
            .neighbours(v)
            .iter()
            .all(|&w| colours[w as usize] != colours[v])
    })
}

/// DSatur: repeatedly colour the uncoloured vertex with the most distinct colours among its
/// neighbours (ties: most uncoloured neighbours, then lowest index) with the lowest free colour.
fn dsatur(adj: &Adjacency) -> Colouring {
    let n = adj.len();
    const NONE: u8 = u8::MAX;
    let mut colours = vec![NONE; n];
    let max_degree = (0..n).map(|v| adj.neighbours(v).len()).max().unwrap_or(0);
    let width = max_degree + 1;
    // seen[v * width + c]: neighbours of v with colour c.
    let mut seen = vec![0u32; n * width];
    let mut saturation = vec![0u32; n];
    let mut free_degree: Vec<u32> = (0..n).map(|v| adj.neighbours(v).len() as u32).collect();
    let mut count = 0usize;
    for _ in 0..n {
        let v = (0..n)
            .filter(|&v| colours[v] == NONE)
            .max_by_key(|&v| (saturation[v], free_degree[v], std::cmp::Reverse(v)))
            .expect("an uncoloured vertex");
        let c = (0..width)
            .find(|&c| seen[v * width + c] == 0)
            .expect("degree + 1 colours suffice");
        colours[v] = c as u8;
        count = count.max(c + 1);
        for &w in adj.neighbours(v) {
            let w = w as usize;
            free_degree[w] -= 1;
            let slot = &mut seen[w * width + c];
            if *slot == 0 {
                saturation[w] += 1;
            }
            *slot += 1;
        }
    }
    Colouring { colours, count }
}

/// Tries to turn `start` into a proper colouring with `k` colours: the vertices of the colours
/// ≥ k take their least conflicting colour below k, then tabu search moves one conflicting
/// vertex at a time to the colour that lowers the conflicts most.
fn tabucol(
    adj: &Adjacency,
    start: &Colouring,
    k: usize,
    max_moves: u64,
    rng: &mut Rng,
) -> Option<Colouring> {
    let n = adj.len();
    if k == 0 || n == 0 {
        return None;
    }
    let mut colours: Vec<u8> = start.colours.clone();
    // gamma[v * k + c]: neighbours of v with colour c (for c < k).
    let mut gamma = vec![0u32; n * k];
    let mut order: Vec<usize> = (0..n).filter(|&v| usize::from(colours[v]) >= k).collect();
    for v in 0..n {
        if usize::from(colours[v]) < k {
            for &w in adj.neighbours(v) {
                gamma[w as usize * k + usize::from(colours[v])] += 1;
            }
        }
    }
    rng.shuffle(&mut order);
    for &v in &order {
        let row = &gamma[v * k..(v + 1) * k];
        let least = *row.iter().min().expect("k > 0");
        let ties: Vec<usize> = (0..k).filter(|&c| row[c] == least).collect();
        let c = ties[rng.below(ties.len() as u64) as usize];
        colours[v] = c as u8;
        for &w in adj.neighbours(v) {
            gamma[w as usize * k + c] += 1;
        }
    }
    let conflicts_of =
        |v: usize, colours: &[u8], gamma: &[u32]| gamma[v * k + usize::from(colours[v])];
    let mut total: u64 = (0..n)
        .map(|v| u64::from(conflicts_of(v, &colours, &gamma)))
        .sum::<u64>()
        / 2;
    // Conflicting vertices as an indexed set.
    let mut conflicting: Vec<u32> = Vec::new();
    let mut position = vec![u32::MAX; n];
    let mut update_membership = |v: usize, inside: bool, conflicting: &mut Vec<u32>| {
        let at = position[v];
        if inside && at == u32::MAX {
            position[v] = conflicting.len() as u32;
            conflicting.push(v as u32);
        } else if !inside && at != u32::MAX {
            let last = *conflicting.last().expect("non-empty");
            conflicting.swap_remove(at as usize);
            if last as usize != v {
                position[last as usize] = at;
            }
            position[v] = u32::MAX;
        }
    };
    for v in 0..n {
        if conflicts_of(v, &colours, &gamma) > 0 {
            update_membership(v, true, &mut conflicting);
        }
    }
    let mut tabu_until = vec![0u64; n * k];
    let mut best_total = total;
    let mut candidates: Vec<(u32, u8)> = Vec::new();
    for iteration in 1..=max_moves {
        if total == 0 {
            break;
        }
        let mut best_delta = i64::MAX;
        candidates.clear();
        for &v in &conflicting {
            let v = v as usize;
            let own = usize::from(colours[v]);
            let here = i64::from(gamma[v * k + own]);
            for c in 0..k {
                if c == own {
                    continue;
                }
                let delta = i64::from(gamma[v * k + c]) - here;
                let tabu = tabu_until[v * k + c] > iteration;
                // Aspiration: a tabu move is allowed when it beats the best so far.
                if tabu && (total as i64 + delta) >= best_total as i64 {
                    continue;
                }
                if delta < best_delta {
                    best_delta = delta;
                    candidates.clear();
                }
                if delta == best_delta {
                    candidates.push((v as u32, c as u8));
                }
            }
        }
        if candidates.is_empty() {
            // Every move is tabu: take a random conflicting vertex to a random other colour.
            let v = conflicting[rng.below(conflicting.len() as u64) as usize] as usize;
            let own = usize::from(colours[v]);
            let c = (own + 1 + rng.below(k as u64 - 1).min(k as u64 - 1) as usize) % k;
            best_delta = i64::from(gamma[v * k + c]) - i64::from(gamma[v * k + own]);
            candidates.push((v as u32, c as u8));
        }
        let (v, c) = candidates[rng.below(candidates.len() as u64) as usize];
        let (v, c) = (v as usize, usize::from(c));
        let old = usize::from(colours[v]);
        colours[v] = c as u8;
        total = (total as i64 + best_delta) as u64;
        let tenure = rng.below(10) + (conflicting.len() as u64 * 6) / 10;
        tabu_until[v * k + old] = iteration + tenure + 1;
        for &w in adj.neighbours(v) {
            let w = w as usize;
            gamma[w * k + old] -= 1;
            gamma[w * k + c] += 1;
            let inside = conflicts_of(w, &colours, &gamma) > 0;
            update_membership(w, inside, &mut conflicting);
        }
        let inside = conflicts_of(v, &colours, &gamma) > 0;
        update_membership(v, inside, &mut conflicting);
        best_total = best_total.min(total);
    }
    (total == 0).then_some(Colouring { colours, count: k })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologySpec;

    fn graph(spec: &str) -> SwitchGraph {
        let fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        SwitchGraph::new(&fabric)
    }

    #[test]
    fn dsatur_and_tabu_give_proper_colourings() {
        for spec in ["slimfly:q=5", "slimfly:q=7", "mlfm:d=3", "lsft:n=3"] {
            let g = graph(spec);
            let c = colour(&g, &ColouringEffort::default());
            assert!(is_proper(&g, &c.colours), "{spec}");
            assert_eq!(
                usize::from(*c.colours.iter().max().unwrap()) + 1,
                c.count,
                "{spec}"
            );
        }
    }
}
