//! Fewer VLs after the cycle breaking: iterated greedy re-packing, then a tabu search that
//! tries to empty the highest class.
//!
//! Cycle breaking decides every move locally: the routes on a cycle's weakest dependency go
//! up, wherever the rest of that VL's routes happen to be. Two searches then look for an
//! assignment with fewer classes, each bounded in work so that large fabrics keep the plain
//! assignment's speed:
//!
//! * **Re-packing** (Culberson's iterated greedy, here for acyclic instead of independent
//!   sets): every group is taken out and put first-fit into the lowest class whose CDG stays
//!   acyclic with it, taking the old classes whole in a new order (reversed, or shuffled). This
//!   never needs more classes (the k-th class taken finds class k holding only groups of its
//!   own), and it changes how many groups end up in the highest class; the rounds keep the
//!   assignment whose highest class is smallest.
//! * **Tabu search** on that remainder (on Slim Fly q = 5 with 4 layers, a few dozen of 36,000
//!   groups): it is taken out as a pool, and its groups go into the lower classes one at a
//!   time, each into the class where it evicts the fewest groups: inserting a group closes
//!   cycles only through its own dependencies, and each such cycle is opened by evicting the
//!   groups of its weakest dependency into the pool. Groups evicted from a class may not
//!   return to it for a while (the tabu tenure of TabuCol, Hertz and de Werra 1987; the pool
//!   is that of PartialCol, Blöchliger and Zufferey 2008), so the search wanders instead of
//!   cycling. When the pool is empty the routing needs one VL fewer and the search goes on
//!   with the next highest class; when its budget runs out first, the assignment is restored.
//!
//! Every class below the pool stays acyclic throughout (each insertion is an exact check on
//! the class's topological order), so whatever the searches end with is deadlock-free.

use std::fmt;

use super::VlSearch;
use super::lanes::Lanes;
use crate::rng::Rng;

/// Group insertions the re-packing rounds may take in all (each round re-inserts every group;
/// an insertion takes about 0.3 µs on Slim Fly q = 5 and 0.6 µs on q = 7). Fabrics where
/// this allows fewer than [`REPACK_MIN_ROUNDS`] go without.
const REPACK_WORK: usize = 4_000_000;

/// Most re-packing rounds. On Slim Fly q = 5 with 4 layers the rounds reach 3 VLs after 15 to
/// 83 rounds, depending on the seed of their shuffles.
const REPACK_ROUNDS: usize = 120;
const REPACK_MIN_ROUNDS: usize = 2;

/// The tabu search starts on a highest class of at most this many groups.
const POOL_LIMIT: usize = 100;

/// Insertions the tabu search tries per group of the starting pool, at least and at most in
/// all (each takes about 20 µs on Slim Fly q = 5: it walks the class's CDG).
const TABU_PER_GROUP: usize = 1_000;
const TABU_MIN: usize = 20_000;
const TABU_MAX: usize = 100_000;

/// Iterations an evicted group stays out of its class: 1..=TENURE at random.
const TENURE: u64 = 10;

/// What the searches found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    /// Classes after the cycle breaking.
    pub before: usize,
    /// Re-packing rounds run, and the classes and groups in the highest class after them.
    pub rounds: usize,
    pub repacked: (usize, usize),
    /// Classes the tabu search emptied.
    pub emptied: usize,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} classes after cycle breaking; {} re-packing rounds: {} classes, {} groups in the \
             highest; the tabu search emptied {}",
            self.before, self.rounds, self.repacked.0, self.repacked.1, self.emptied
        )
    }
}

/// Runs both searches on the classes of `lanes` (`groups`: every group with turns).
pub(super) fn fewer_classes(
    lanes: &mut Lanes<'_, '_>,
    groups: &[usize],
    turn_groups: &TurnGroups<'_>,
    which: VlSearch,
) -> Found {
    let before = lanes.used();
    let rounds = match REPACK_WORK / groups.len().max(1) {
        _ if !which.repack => 0,
        r if r < REPACK_MIN_ROUNDS => 0,
        r => r.min(REPACK_ROUNDS),
    };
    let mut rng = Rng::new(1);
    let repacked = if rounds > 0 {
        repack_rounds(lanes, groups, rounds, &mut rng)
    } else {
        top_size(lanes)
    };
    let emptied = if which.tabu {
        empty_top_classes(lanes, groups, turn_groups, &mut rng)
    } else {
        0
    };
    Found {
        before,
        rounds,
        repacked,
        emptied,
    }
}

/// The groups that make each turn: `groups[offsets[t]..offsets[t + 1]]`.
pub(super) struct TurnGroups<'a> {
    pub offsets: &'a [u32],
    pub groups: &'a [u32],
}

impl TurnGroups<'_> {
    fn of(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        self.groups[self.offsets[t] as usize..self.offsets[t + 1] as usize]
            .iter()
            .map(|&g| g as usize)
    }
}

/// Classes in use and groups in the highest.
fn top_size(lanes: &Lanes<'_, '_>) -> (usize, usize) {
    (lanes.used(), lanes.groups_in[lanes.used() - 1])
}

/// Re-packs the classes `rounds` times, in reversed and shuffled orders by turns, and leaves
/// the assignment whose highest class was smallest; returns its [`top_size`].
fn repack_rounds(
    lanes: &mut Lanes<'_, '_>,
    groups: &[usize],
    rounds: usize,
    rng: &mut Rng,
) -> (usize, usize) {
    let mut best = (top_size(lanes), lanes.class.clone());
    for round in 0..rounds {
        if lanes.used() == 1 {
            break;
        }
        let mut order: Vec<usize> = (0..lanes.used()).collect();
        if round % 2 == 0 {
            order.reverse();
        } else {
            rng.shuffle(&mut order);
        }
        lanes.repack(groups, &order);
        log::trace!("round {round}: {:?}", top_size(lanes));
        if top_size(lanes) < best.0 {
            best = (top_size(lanes), lanes.class.clone());
        }
    }
    lanes.restore(groups, &best.1);
    best.0
}

/// Empties the highest classes of `lanes` while each starts small enough and the search's
/// budget lasts; returns the classes emptied.
fn empty_top_classes(
    lanes: &mut Lanes<'_, '_>,
    groups: &[usize],
    turn_groups: &TurnGroups<'_>,
    rng: &mut Rng,
) -> usize {
    let mut search = Search {
        rng: rng.clone(),
        pool: Vec::new(),
        in_pool: vec![u32::MAX; lanes.class.len()],
        tabu: std::collections::HashMap::new(),
        evicted: Vec::new(),
        path: Vec::new(),
        other: Vec::new(),
        parent: vec![u32::MAX; lanes.net.links.len()],
        queue: Vec::new(),
        next: Vec::new(),
    };
    let mut emptied = 0;
    while lanes.used() > 1 && lanes.groups_in[lanes.used() - 1] <= POOL_LIMIT {
        let top = lanes.used() - 1;
        let saved = lanes.class.clone();
        for &g in groups {
            if usize::from(lanes.class[g]) != top {
                continue;
            }
            lanes.path_of(g, &mut search.path);
            lanes.remove(g, top, &search.path);
            lanes.class[g] = u8::MAX;
            search.push(g);
        }
        let start = search.pool.len();
        let budget = (start * TABU_PER_GROUP).clamp(TABU_MIN, TABU_MAX);
        let spent = search.run(lanes, turn_groups, top, budget);
        log::debug!(
            "DFSSSP: tabu search on class {top}: {start} groups in the pool, {} left after {spent} \
             insertions",
            search.pool.len()
        );
        if !search.pool.is_empty() {
            search.clear_pool();
            lanes.restore(groups, &saved);
            break;
        }
        search.tabu.clear();
        emptied += 1;
    }
    emptied
}

/// The pool of unplaced groups and the search's scratch space.
struct Search {
    rng: Rng,
    pool: Vec<usize>,
    /// Position in `pool` per group (`u32::MAX`: not in it).
    in_pool: Vec<u32>,
    /// (group, class) → the iteration until which the group may not enter the class.
    tabu: std::collections::HashMap<(u32, u8), usize>,
    evicted: Vec<usize>,
    path: Vec<(usize, u32, u32)>,
    other: Vec<(usize, u32, u32)>,
    /// Breadth-first search over links: the link each was reached from.
    parent: Vec<u32>,
    queue: Vec<u32>,
    next: Vec<u32>,
}

impl Search {
    fn push(&mut self, g: usize) {
        self.in_pool[g] = self.pool.len() as u32;
        self.pool.push(g);
    }

    fn take(&mut self, g: usize) {
        let i = self.in_pool[g] as usize;
        let last = *self.pool.last().expect("g is in the pool");
        self.pool.swap_remove(i);
        if last != g {
            self.in_pool[last] = i as u32;
        }
        self.in_pool[g] = u32::MAX;
    }

    fn clear_pool(&mut self) {
        for &g in &self.pool {
            self.in_pool[g] = u32::MAX;
        }
        self.pool.clear();
    }

    /// Places pool groups into the classes below `top` until the pool is empty or `budget`
    /// insertions were tried; returns the insertions tried.
    fn run(
        &mut self,
        lanes: &mut Lanes<'_, '_>,
        turn_groups: &TurnGroups<'_>,
        top: usize,
        budget: usize,
    ) -> usize {
        let mut tried = 0;
        let mut iteration = 0usize;
        while !self.pool.is_empty() && tried < budget {
            iteration += 1;
            // A pool group at random, into the class where it evicts the fewest groups (ties
            // at random). (Taking the best move of several pool groups does worse: it gets
            // stuck.)
            let g = self.pool[self.rng.below(self.pool.len() as u64) as usize];
            lanes.path_of(g, &mut self.path);
            let mut best: Option<(usize, usize, u64)> = None;
            for c in 0..top {
                if self
                    .tabu
                    .get(&(g as u32, c as u8))
                    .is_some_and(|&until| until > iteration)
                {
                    continue;
                }
                tried += 1;
                let limit = best.map_or(usize::MAX, |(n, _, _)| n);
                if self.insert_evicting(lanes, turn_groups, g, c, limit) {
                    let n = self.evicted.len();
                    self.undo(lanes, g, c);
                    let tie = self.rng.next_u64();
                    if best.is_none_or(|(m, _, t)| n < m || (n == m && tie < t)) {
                        best = Some((n, c, tie));
                    }
                    if n == 0 {
                        break;
                    }
                }
            }
            let Some((_, c, _)) = best else {
                continue;
            };
            let placed = self.insert_evicting(lanes, turn_groups, g, c, usize::MAX);
            debug_assert!(placed);
            self.take(g);
            // A short random tenure: PartialCol's 0.6 × pool + rand(10) lets the pool grow
            // into the thousands here.
            let tenure = iteration + self.rng.below(TENURE) as usize + 1;
            for i in 0..self.evicted.len() {
                let h = self.evicted[i];
                self.push(h);
                self.tabu.insert((h as u32, c as u8), tenure);
            }
        }
        tried
    }

    /// Inserts group g (turns in `self.path`) into class c, first evicting the groups of the
    /// weakest dependency of every cycle it would close; `self.evicted` lists them. Gives up
    /// (restoring the class) once more than `limit` groups would go.
    fn insert_evicting(
        &mut self,
        lanes: &mut Lanes<'_, '_>,
        turn_groups: &TurnGroups<'_>,
        g: usize,
        c: usize,
        limit: usize,
    ) -> bool {
        self.evicted.clear();
        let mut from = 0;
        loop {
            let Some(failed) = lanes.insert_from(g, c, &self.path, from) else {
                return true;
            };
            from = failed;
            let Some(t) = self.weakest_on_cycle(lanes, c, failed) else {
                lanes.withdraw(g, c, &self.path[..from]);
                self.restore_evicted(lanes, c);
                return false;
            };
            for h in turn_groups.of(t) {
                if usize::from(lanes.class[h]) == c {
                    lanes.path_of(h, &mut self.other);
                    lanes.remove(h, c, &self.other);
                    lanes.class[h] = u8::MAX;
                    self.evicted.push(h);
                }
            }
            if self.evicted.len() > limit {
                lanes.withdraw(g, c, &self.path[..from]);
                self.restore_evicted(lanes, c);
                return false;
            }
        }
    }

    /// Takes g out of class c again and puts the groups it evicted back.
    fn undo(&mut self, lanes: &mut Lanes<'_, '_>, g: usize, c: usize) {
        lanes.remove(g, c, &self.path);
        lanes.class[g] = u8::MAX;
        self.restore_evicted(lanes, c);
    }

    fn restore_evicted(&mut self, lanes: &mut Lanes<'_, '_>, c: usize) {
        for &h in &self.evicted {
            lanes.path_of(h, &mut self.other);
            // The class held these groups before: together they are acyclic.
            let back = lanes.try_insert(h, c, &self.other);
            assert!(back, "a class takes back the groups it held");
        }
        self.evicted.clear();
    }

    /// The cycle that turn `self.path[failed]` of g would close in class c (which holds g's
    /// turns before it): its dependency that is not g's and carries the fewest routes.
    fn weakest_on_cycle(
        &mut self,
        lanes: &Lanes<'_, '_>,
        c: usize,
        failed: usize,
    ) -> Option<usize> {
        let net = lanes.net;
        let bits = &lanes.present[c];
        let order = &lanes.orders[c];
        let (_, a, b) = self.path[failed];
        // Breadth-first from b to a; the class's order puts every link of such a path between
        // them.
        let bound = order.position(a);
        self.queue.clear();
        self.queue.push(b);
        self.parent[b as usize] = b;
        let mut head = 0;
        let mut found = false;
        while head < self.queue.len() && !found {
            let x = self.queue[head];
            head += 1;
            self.next.clear();
            lanes.turns.successors(net, bits, x, &mut self.next);
            for &y in &self.next {
                if self.parent[y as usize] == u32::MAX && order.position(y) <= bound {
                    self.parent[y as usize] = x;
                    self.queue.push(y);
                    if y == a {
                        found = true;
                        break;
                    }
                }
            }
        }
        let mut weakest: Option<(usize, u64)> = None;
        if found {
            let mut y = a;
            while y != b {
                let x = self.parent[y as usize];
                let turn = net.turn(x, y);
                let own = self.path.iter().any(|&(p, _, _)| p == turn);
                let routes = lanes.count[c][turn];
                if !own && weakest.is_none_or(|(_, m)| routes < m) {
                    weakest = Some((turn, routes));
                }
                y = x;
            }
        }
        for &x in &self.queue {
            self.parent[x as usize] = u32::MAX;
        }
        weakest.map(|(turn, _)| turn)
    }
}
