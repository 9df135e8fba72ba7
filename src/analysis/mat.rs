//! Maximum achievable throughput (MAT) of a routing, by linear programming.
//!
//! The path-based LP of TopoBench (Jyothi et al., SC16) restricted to the routing's own paths:
//! switch-level commodities (s, t) with demand D(s, t) from a traffic matrix; one variable per
//! distinct switch-level path of (s, t) among the layer paths to the LIDs of t's first endpoint
//! port; capacity 1 per directed switch-to-switch cable; maximise K such that every commodity
//! routes at least D(s, t) · K:
//!
//! ```text
//! maximise K  subject to  Σ_p x_p ≥ D(s,t)·K  for every commodity (s, t)
//!                         Σ_{p ∋ c} x_p ≤ 1    for every directed cable c,   x ≥ 0
//! ```
//!
//! A commodity with a single path needs no variable: its flow is D·K on that path. So for a
//! single-path routing (minhop on a Slim Fly, one layer) the LP collapses to
//! K = 1 / (heaviest demand-weighted cable load).
//!
//! Traffic matrices (endpoints not on a switch: see [`super::analyze`]):
//! * **uniform all-to-all**: each endpoint port sends 1 in total, spread evenly over all other
//!   endpoint ports: D(s, t) = n_s · n_t / (N − 1); traffic between ports of one switch is left
//!   out (it crosses no switch-to-switch cable).
//! * **adversarial** (the "longest matching" of TopoBench and the Slim Fly paper): switches with
//!   endpoints are paired by a matching that maximises the shortest-path distance — greedy
//!   (longest pairs first, ties by switch order) and then improved by swapping partners between
//!   two pairs while that lengthens the pair sum (not guaranteed optimal) — and each endpoint of
//!   a switch sends 1 to a distinct endpoint of its partner, in both directions:
//!   D(s, t) = D(t, s) = min(n_s, n_t).
//!
//! Solver: `good_lp` with `microlp`, a pure-Rust simplex solver (no C libraries).

use std::time::Instant;

use good_lp::{
    Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable, microlp,
    variable,
};
use serde::{Deserialize, Serialize};

use super::context::Context;
use crate::topology::UNREACHABLE;

/// The solver, as named in reports.
pub const SOLVER: &str = "good_lp 1.15 with microlp (pure-Rust simplex)";

/// MAT for both traffic patterns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatReport {
    /// Which LP solver was used.
    pub solver: String,
    /// Uniform all-to-all.
    pub uniform: MatResult,
    /// The adversarial longest-matching pattern.
    pub adversarial: MatResult,
    /// The switch matching the adversarial pattern uses.
    pub matching: Matching,
}

/// The LP's answer for one traffic pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatResult {
    /// The largest K such that K × the traffic matrix is routable on the routing's paths with
    /// unit cable capacities (per endpoint: each endpoint injects 1 at K = 1). `None` when
    /// there is no inter-switch traffic or the LP failed (see `note`).
    pub throughput: Option<f64>,
    /// Commodities (switch pairs with demand).
    pub commodities: usize,
    /// Commodities with more than one distinct path (the others need no variable).
    pub multipath_commodities: usize,
    /// LP variables (K and one per path of a multipath commodity).
    pub variables: usize,
    /// LP constraints.
    pub constraints: usize,
    /// Wall-clock seconds to build and solve the LP.
    pub seconds: f64,
    /// Why there is no value, or a remark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The switch pairing of the adversarial pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matching {
    /// How it was found.
    pub method: String,
    /// Switch pairs.
    pub pairs: usize,
    /// Mean shortest-path distance of the pairs.
    pub mean_distance: f64,
    /// Pairs by distance (index = hops).
    pub distance_histogram: Vec<usize>,
}

/// A commodity: source and destination switch (dense indices) and demand.
type Commodity = (usize, usize, f64);

/// Solves both LPs. `paths[s * n + t]` holds the distinct paths (as directed cables) of (s, t).
pub(crate) fn solve(ctx: &Context<'_>, paths: &[Vec<Vec<u32>>]) -> MatReport {
    let n = ctx.switches();
    let hosts: Vec<usize> = (0..n).map(|s| ctx.endpoints_at(s).len()).collect();
    let total: usize = hosts.iter().sum();
    let mut uniform = Vec::new();
    if total > 1 {
        for s in (0..n).filter(|&s| hosts[s] > 0) {
            for t in (0..n).filter(|&t| t != s && hosts[t] > 0) {
                let d = (hosts[s] * hosts[t]) as f64 / (total - 1) as f64;
                uniform.push((s, t, d));
            }
        }
    }
    let with_hosts: Vec<usize> = (0..n).filter(|&s| hosts[s] > 0).collect();
    let dist: Vec<Vec<u32>> = with_hosts
        .iter()
        .map(|&s| ctx.graph.distances_from(s))
        .collect();
    // Distance between the i-th and j-th switch with hosts.
    let d = |i: usize, j: usize| {
        let v = dist[i][with_hosts[j]];
        if v == UNREACHABLE { 0 } else { v }
    };
    let pairs = longest_matching(with_hosts.len(), d);
    let mut adversarial = Vec::new();
    let mut histogram = Vec::new();
    let mut distance_sum = 0u64;
    for &(i, j) in &pairs {
        let hops = d(i, j) as usize;
        if histogram.len() <= hops {
            histogram.resize(hops + 1, 0);
        }
        histogram[hops] += 1;
        distance_sum += hops as u64;
        let (s, t) = (with_hosts[i], with_hosts[j]);
        let demand = hosts[s].min(hosts[t]) as f64;
        adversarial.extend([(s, t, demand), (t, s, demand)]);
    }
    let matching = Matching {
        method: "greedy maximum-distance matching improved by pairwise partner swaps".into(),
        pairs: pairs.len(),
        mean_distance: if pairs.is_empty() {
            0.0
        } else {
            distance_sum as f64 / pairs.len() as f64
        },
        distance_histogram: histogram,
    };
    MatReport {
        solver: SOLVER.into(),
        uniform: solve_lp(ctx, paths, &uniform),
        adversarial: solve_lp(ctx, paths, &adversarial),
        matching,
    }
}

/// Greedy maximum-weight matching of `m` items by `weight`, improved by 2-opt swaps.
fn longest_matching(m: usize, weight: impl Fn(usize, usize) -> u32) -> Vec<(usize, usize)> {
    let mut candidates: Vec<(u32, usize, usize)> = (0..m)
        .flat_map(|i| (i + 1..m).map(move |j| (i, j)))
        .map(|(i, j)| (weight(i, j), i, j))
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
    let mut matched = vec![false; m];
    let mut pairs = Vec::new();
    for (_, i, j) in candidates {
        if !matched[i] && !matched[j] {
            matched[i] = true;
            matched[j] = true;
            pairs.push((i, j));
        }
    }
    // 2-opt: re-pair (a, b), (c, d) as (a, c), (b, d) or (a, d), (b, c) when longer.
    let mut improved = true;
    let mut rounds = 0;
    while improved && rounds < 100 {
        improved = false;
        rounds += 1;
        for x in 0..pairs.len() {
            for y in x + 1..pairs.len() {
                let ((a, b), (c, d)) = (pairs[x], pairs[y]);
                let now = weight(a, b) + weight(c, d);
                if weight(a, c) + weight(b, d) > now {
                    (pairs[x], pairs[y]) = ((a, c), (b, d));
                    improved = true;
                } else if weight(a, d) + weight(b, c) > now {
                    (pairs[x], pairs[y]) = ((a, d), (b, c));
                    improved = true;
                }
            }
        }
    }
    pairs
}

fn solve_lp(ctx: &Context<'_>, paths: &[Vec<Vec<u32>>], commodities: &[Commodity]) -> MatResult {
    let started = Instant::now();
    let n = ctx.switches();
    let mut result = MatResult {
        throughput: None,
        commodities: commodities.len(),
        multipath_commodities: 0,
        variables: 1,
        constraints: 0,
        seconds: 0.0,
        note: None,
    };
    if commodities.is_empty() {
        result.note = Some("no traffic between switches".into());
        return result;
    }
    let mut vars = ProblemVariables::new();
    let k = vars.add(variable().min(0));
    let cables = ctx.net.cables.len();
    let mut k_coefficient = vec![0.0f64; cables];
    let mut cable_flows: Vec<Vec<Variable>> = vec![Vec::new(); cables];
    let mut demands: Vec<(Vec<Variable>, f64)> = Vec::new();
    for &(s, t, demand) in commodities {
        let ps = &paths[s * n + t];
        match ps.len() {
            0 => {
                result.throughput = Some(0.0);
                result.note = Some(format!(
                    "{} has no working path to {}",
                    ctx.switch_name(s),
                    ctx.switch_name(t)
                ));
                result.seconds = started.elapsed().as_secs_f64();
                return result;
            }
            1 => {
                for &c in &ps[0] {
                    k_coefficient[c as usize] += demand;
                }
            }
            _ => {
                result.multipath_commodities += 1;
                let xs: Vec<Variable> = ps.iter().map(|_| vars.add(variable().min(0))).collect();
                for (x, p) in xs.iter().zip(ps) {
                    for &c in p {
                        cable_flows[c as usize].push(*x);
                    }
                }
                result.variables += xs.len();
                demands.push((xs, demand));
            }
        }
    }
    let mut problem = vars.maximise(k).using(microlp);
    for (c, flows) in cable_flows.into_iter().enumerate() {
        if flows.is_empty() && k_coefficient[c] == 0.0 {
            continue;
        }
        let mut load: Expression = flows.into_iter().sum();
        load.add_mul(k_coefficient[c], k);
        problem.add_constraint(load.leq(1.0));
        result.constraints += 1;
    }
    for (xs, demand) in demands {
        let routed: Expression = xs.into_iter().sum();
        problem.add_constraint(routed.geq(demand * k));
        result.constraints += 1;
    }
    match problem.solve() {
        Ok(solution) => result.throughput = Some(solution.value(k)),
        Err(ResolutionError::Unbounded) => {
            result.note = Some("unbounded: no cable constrains the traffic".into());
        }
        Err(e) => result.note = Some(format!("the LP solver failed: {e}")),
    }
    result.seconds = started.elapsed().as_secs_f64();
    result
}
