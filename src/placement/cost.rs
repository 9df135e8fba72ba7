//! What a rank placement costs for a collective, and what swapping two ranks would change.
//!
//! A placement maps rank r to a slot (an allocated host) `place[r]`. Its cost is
//!
//! * **hops**: the inter-switch hops of every message of every step, on the real routes;
//! * **contention**: the sum over steps of the step's most loaded directed switch-to-switch
//!   cable (messages of one step sharing it), with hops as the tie-breaker.
//!
//! Swapping ranks a and b changes only the messages a or b send or receive — O(log n) of them
//! for the three collectives — so [`Evaluator::try_swap`] re-costs just those: a hop delta from
//! the matrix, and for contention the loads of the touched cables with per-step load
//! histograms that keep each step's maximum current in O(1) per change.

use super::collective::Schedule;
use super::routes::HostRoutes;

/// What the placement minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Total hops of all messages.
    Hops,
    /// Sum over steps of the maximum link load, then total hops.
    Contention,
}

/// The cost of a placement: both measures, whichever is optimised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Cost {
    /// Total inter-switch hops of all messages.
    pub hops: u64,
    /// Sum over steps of the most loaded cable's number of messages (kept current only when
    /// it is the objective; 0 otherwise in [`Evaluator::cost`]).
    pub contention: u64,
}

impl Cost {
    /// The value the objective compares: hops, or contention then hops.
    pub fn key(&self, objective: Objective) -> (u64, u64) {
        match objective {
            Objective::Hops => (self.hops, 0),
            Objective::Contention => (self.contention, self.hops),
        }
    }
}

/// A placement under evaluation, with the state for cheap swaps.
pub struct Evaluator<'r> {
    routes: &'r HostRoutes,
    objective: Objective,
    /// Messages: (sender rank, receiver rank, step).
    messages: Vec<(u32, u32, u32)>,
    /// `by_rank_start[r]..by_rank_start[r + 1]` index `by_rank`: the messages rank r is in.
    by_rank_start: Vec<u32>,
    by_rank: Vec<u32>,
    place: Vec<u32>,
    cost: Cost,
    steps: usize,
    /// Contention only: `load[step * cables + cable]`.
    load: Vec<u32>,
    /// Contention only: `histogram[step][l]` = cables with load l in that step (l ≥ 1).
    histogram: Vec<Vec<u32>>,
    /// Contention only: each step's maximum load.
    max_load: Vec<u32>,
    /// Scratch: the messages a swap touches.
    touched: Vec<u32>,
}

impl<'r> Evaluator<'r> {
    /// Evaluates `schedule` with rank r on slot `place[r]`.
    ///
    /// # Panics
    /// If `place` is not a list of distinct slots of `routes`, one per rank, or contention is
    /// asked of routes read without paths.
    pub fn new(
        routes: &'r HostRoutes,
        schedule: &Schedule,
        objective: Objective,
        place: Vec<u32>,
    ) -> Self {
        assert_eq!(place.len(), schedule.ranks, "one slot per rank");
        let mut seen = vec![false; routes.len()];
        for &s in &place {
            assert!(
                !std::mem::replace(&mut seen[s as usize], true),
                "slot {s} twice"
            );
        }
        assert!(
            objective == Objective::Hops || routes.has_paths(),
            "contention needs the routes' paths"
        );
        let messages: Vec<(u32, u32, u32)> = schedule
            .steps
            .iter()
            .enumerate()
            .flat_map(|(k, s)| s.messages.iter().map(move |&(a, b)| (a, b, k as u32)))
            .collect();
        let mut count = vec![0u32; schedule.ranks + 1];
        for &(a, b, _) in &messages {
            count[a as usize + 1] += 1;
            count[b as usize + 1] += 1;
        }
        for r in 0..schedule.ranks {
            count[r + 1] += count[r];
        }
        let by_rank_start = count.clone();
        let mut by_rank = vec![0u32; messages.len() * 2];
        for (m, &(a, b, _)) in messages.iter().enumerate() {
            for r in [a, b] {
                by_rank[count[r as usize] as usize] = m as u32;
                count[r as usize] += 1;
            }
        }
        let steps = schedule.steps.len();
        let mut this = Self {
            routes,
            objective,
            messages,
            by_rank_start,
            by_rank,
            place,
            cost: Cost::default(),
            steps,
            load: Vec::new(),
            histogram: Vec::new(),
            max_load: Vec::new(),
            touched: Vec::new(),
        };
        this.cost.hops = this.full_cost().hops;
        if objective == Objective::Contention {
            let largest = schedule
                .steps
                .iter()
                .map(|s| s.messages.len())
                .max()
                .unwrap_or(0);
            this.load = vec![0; steps * routes.cable_count()];
            this.histogram = vec![vec![0; largest + 1]; steps];
            this.max_load = vec![0; steps];
            for m in 0..this.messages.len() {
                this.add_path(m, 1);
            }
            this.cost.contention = this.max_load.iter().map(|&l| u64::from(l)).sum();
        }
        this
    }

    /// The current placement: rank → slot.
    pub fn placement(&self) -> &[u32] {
        &self.place
    }

    /// The current cost.
    pub fn cost(&self) -> Cost {
        self.cost
    }

    /// The objective.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.place.len()
    }

    /// The cost recomputed from scratch (hops always; contention when the routes have paths):
    /// the reference the incremental updates are tested against.
    pub fn full_cost(&self) -> Cost {
        let hops = self
            .messages
            .iter()
            .map(|&(a, b, _)| {
                u64::from(
                    self.routes
                        .hops(self.place[a as usize], self.place[b as usize]),
                )
            })
            .sum();
        let contention = if self.routes.has_paths() {
            let mut load = vec![0u32; self.routes.cable_count()];
            let mut total = 0;
            for k in 0..self.steps as u32 {
                load.fill(0);
                let mut max = 0;
                for &(a, b, _) in self.messages.iter().filter(|m| m.2 == k) {
                    for &c in self
                        .routes
                        .path(self.place[a as usize], self.place[b as usize])
                    {
                        load[c as usize] += 1;
                        max = max.max(load[c as usize]);
                    }
                }
                total += u64::from(max);
            }
            total
        } else {
            0
        };
        Cost { hops, contention }
    }

    /// Collects the messages rank a or b is in, each once, into `touched`.
    fn collect_touched(&mut self, a: u32, b: u32) {
        self.touched.clear();
        let (sa, ea) = (
            self.by_rank_start[a as usize],
            self.by_rank_start[a as usize + 1],
        );
        self.touched
            .extend_from_slice(&self.by_rank[sa as usize..ea as usize]);
        let (sb, eb) = (
            self.by_rank_start[b as usize],
            self.by_rank_start[b as usize + 1],
        );
        for &m in &self.by_rank[sb as usize..eb as usize] {
            let (x, y, _) = self.messages[m as usize];
            // Messages between a and b are already in a's list.
            if x != a && y != a {
                self.touched.push(m);
            }
        }
    }

    /// Hops of message m under the current placement with ranks a and b exchanged.
    #[inline]
    fn hops_swapped(&self, m: u32, a: u32, b: u32) -> u32 {
        let (x, y, _) = self.messages[m as usize];
        let slot = |r: u32| {
            let r = if r == a {
                b
            } else if r == b {
                a
            } else {
                r
            };
            self.place[r as usize]
        };
        self.routes.hops(slot(x), slot(y))
    }

    /// The change of total hops if ranks a and b swapped slots (nothing changes).
    pub fn hop_delta(&mut self, a: u32, b: u32) -> i64 {
        self.collect_touched(a, b);
        let mut delta = 0i64;
        for &m in &self.touched {
            let (x, y, _) = self.messages[m as usize];
            let before = self
                .routes
                .hops(self.place[x as usize], self.place[y as usize]);
            delta += i64::from(self.hops_swapped(m, a, b)) - i64::from(before);
        }
        delta
    }

    /// Adds (`sign` = 1) or removes (−1) message m's path in its step's loads.
    fn add_path(&mut self, m: usize, sign: i32) {
        let (x, y, k) = self.messages[m];
        let k = k as usize;
        let cables = self.routes.cable_count();
        let path = self
            .routes
            .path(self.place[x as usize], self.place[y as usize]);
        for &c in path {
            let l = &mut self.load[k * cables + c as usize];
            let hist = &mut self.histogram[k];
            if sign > 0 {
                if *l > 0 {
                    hist[*l as usize] -= 1;
                }
                *l += 1;
                hist[*l as usize] += 1;
                self.max_load[k] = self.max_load[k].max(*l);
            } else {
                hist[*l as usize] -= 1;
                if *l == self.max_load[k] && hist[*l as usize] == 0 {
                    self.max_load[k] -= 1;
                }
                *l -= 1;
                if *l > 0 {
                    hist[*l as usize] += 1;
                }
            }
        }
    }

    /// Swaps the slots of ranks a and b, updating the cost.
    pub fn swap(&mut self, a: u32, b: u32) {
        match self.objective {
            Objective::Hops => {
                let delta = self.hop_delta(a, b);
                self.cost.hops = (self.cost.hops as i64 + delta) as u64;
                self.place.swap(a as usize, b as usize);
            }
            Objective::Contention => {
                self.collect_touched(a, b);
                let touched = std::mem::take(&mut self.touched);
                let mut delta = 0i64;
                for &m in &touched {
                    let (x, y, _) = self.messages[m as usize];
                    delta -= i64::from(
                        self.routes
                            .hops(self.place[x as usize], self.place[y as usize]),
                    );
                    self.add_path(m as usize, -1);
                }
                self.place.swap(a as usize, b as usize);
                for &m in &touched {
                    let (x, y, _) = self.messages[m as usize];
                    delta += i64::from(
                        self.routes
                            .hops(self.place[x as usize], self.place[y as usize]),
                    );
                    self.add_path(m as usize, 1);
                }
                self.touched = touched;
                self.cost.hops = (self.cost.hops as i64 + delta) as u64;
                self.cost.contention = self.max_load.iter().map(|&l| u64::from(l)).sum();
            }
        }
    }

    /// Whether a message in `touched` crosses a cable with its step's maximum load.
    fn touches_a_busiest_cable(&self) -> bool {
        let cables = self.routes.cable_count();
        self.touched.iter().any(|&m| {
            let (x, y, k) = self.messages[m as usize];
            let (k, max) = (k as usize, self.max_load[k as usize]);
            self.routes
                .path(self.place[x as usize], self.place[y as usize])
                .iter()
                .any(|&c| self.load[k * cables + c as usize] == max)
        })
    }

    /// Swaps ranks a and b if that lowers the objective; returns whether it did.
    pub fn try_swap(&mut self, a: u32, b: u32) -> bool {
        match self.objective {
            Objective::Hops => {
                let delta = self.hop_delta(a, b);
                if delta < 0 {
                    self.cost.hops = (self.cost.hops as i64 + delta) as u64;
                    self.place.swap(a as usize, b as usize);
                    true
                } else {
                    false
                }
            }
            Objective::Contention => {
                // Contention can only fall if a touched message leaves a busiest cable of its
                // step (other cables keep their loads); otherwise only fewer hops can make the
                // swap better, and the hop delta is cheap.
                if self.hop_delta(a, b) >= 0 && !self.touches_a_busiest_cable() {
                    return false;
                }
                let before = self.cost.key(self.objective);
                self.swap(a, b);
                if self.cost.key(self.objective) < before {
                    true
                } else {
                    self.swap(a, b);
                    false
                }
            }
        }
    }
}
