//! The route groups' VL classes and the channel dependency graph of every class, with the
//! acyclicity checks the assignment and its searches share.

use crate::deadlock::cdg::TopoOrder;
use crate::deadlock::network::Channels;
use crate::routing::walk::NONE;

/// The turns between inter-switch links, laid out for the acyclicity checks' neighbour scans.
pub(super) struct Turns {
    /// Per link: the switch it arrives at ([`NONE`] for a host).
    head: Vec<u32>,
    /// Per link: the turn into the first out-link of its head switch.
    row: Vec<u32>,
    /// Per link x: `pred[pred_start[x]..pred_start[x + 1]]` are the (in-link, turn) pairs of the
    /// inter-switch links x follows.
    pred_start: Vec<u32>,
    pred: Vec<(u32, u32)>,
}

impl Turns {
    pub(super) fn new(net: &Channels<'_>) -> Self {
        let links = net.links.len();
        let mut head = vec![NONE; links];
        let mut row = vec![NONE; links];
        let mut pred_start = Vec::with_capacity(links + 1);
        let mut pred = Vec::new();
        for (x, link) in net.links.iter().enumerate() {
            head[x] = link.to_switch;
            if link.to_switch != NONE {
                row[x] = net.turn_at(x as u32, 0) as u32;
            }
            pred_start.push(pred.len() as u32);
            if link.from_switch != NONE && link.to_switch != NONE {
                for &a in net.in_links(link.from_switch as usize) {
                    if net.links[a as usize].from_switch != NONE {
                        pred.push((a, net.turn(a, x as u32) as u32));
                    }
                }
            }
        }
        pred_start.push(pred.len() as u32);
        Self {
            head,
            row,
            pred_start,
            pred,
        }
    }

    /// The inter-switch links that follow link `x` in a class whose turns are the bits of
    /// `present` (only inter-switch turns are ever counted).
    pub(super) fn successors(
        &self,
        net: &Channels<'_>,
        present: &[u64],
        x: u32,
        out: &mut Vec<u32>,
    ) {
        let v = self.head[x as usize];
        if v == NONE {
            return;
        }
        let outs = net.out_links(v as usize);
        let base = self.row[x as usize] as usize;
        let mut from = base;
        while let Some(p) = next_bit(present, from, base + outs.len()) {
            out.push(outs[p - base]);
            from = p + 1;
        }
    }

    /// The inter-switch links that link `x` follows in a class with turns `present`.
    pub(super) fn predecessors(&self, present: &[u64], x: u32, out: &mut Vec<u32>) {
        let range = self.pred_start[x as usize] as usize..self.pred_start[x as usize + 1] as usize;
        for &(a, t) in &self.pred[range] {
            if present[t as usize / 64] & (1 << (t % 64)) != 0 {
                out.push(a);
            }
        }
    }
}

/// The groups' VL classes and the channel dependency graph of every class.
pub(super) struct Lanes<'n, 'a> {
    pub(super) net: &'n Channels<'a>,
    pub(super) turns: Turns,
    pub(super) n: usize,
    /// Next link per (destination, switch).
    pub(super) next: Vec<u32>,
    /// Routes per group, by source switch.
    pub(super) weight: Vec<u64>,
    /// `count[c][turn]`: routes of class c that make the turn.
    pub(super) count: Vec<Vec<u64>>,
    /// `present[c]`: a bit per turn with a non-zero count (for fast neighbour scans).
    pub(super) present: Vec<Vec<u64>>,
    /// Topological orders of the finished classes' CDGs.
    pub(super) orders: Vec<TopoOrder>,
    pub(super) class: Vec<u8>,
    pub(super) groups_in: Vec<usize>,
    pub(super) path: Vec<(usize, u32, u32)>,
    /// Node visits an acyclicity check may take.
    pub(super) budget: usize,
}

impl Lanes<'_, '_> {
    /// The turns of group `g` between consecutive inter-switch links: (turn, in, out).
    pub(super) fn path_of(&self, g: usize, out: &mut Vec<(usize, u32, u32)>) {
        out.clear();
        let (net, n) = (self.net, self.n);
        let di = g / n;
        let mut a = self.next[g];
        if a == NONE {
            return;
        }
        loop {
            let v = net.links[a as usize].to_switch;
            if v == NONE {
                return;
            }
            let b = self.next[di * n + v as usize];
            if b == NONE || net.links[b as usize].to_switch == NONE {
                return;
            }
            out.push((net.turn(a, b), a, b));
            a = b;
        }
    }

    fn grow(&mut self, c: usize) {
        while self.count.len() <= c {
            self.count.push(vec![0; self.net.turns()]);
            self.present.push(vec![0; self.net.turns().div_ceil(64)]);
            self.groups_in.push(0);
        }
    }

    /// Puts group `g` (with turns `path`) in class `c` without a check.
    pub(super) fn add(&mut self, g: usize, c: usize, path: &[(usize, u32, u32)]) {
        self.grow(c);
        let w = self.weight[g % self.n];
        for &(t, _, _) in path {
            if self.count[c][t] == 0 {
                self.present[c][t / 64] |= 1 << (t % 64);
            }
            self.count[c][t] += w;
        }
        self.class[g] = c as u8;
        self.groups_in[c] += 1;
    }

    /// Takes group `g` (with turns `path`) out of class `c`.
    pub(super) fn remove(&mut self, g: usize, c: usize, path: &[(usize, u32, u32)]) {
        self.withdraw(g, c, path);
        self.groups_in[c] -= 1;
    }

    /// Puts group `g` (with turns `path`) in the finished class `c` if its CDG stays acyclic.
    pub(super) fn try_insert(&mut self, g: usize, c: usize, path: &[(usize, u32, u32)]) -> bool {
        match self.insert_from(g, c, path, 0) {
            None => true,
            Some(failed) => {
                self.withdraw(g, c, &path[..failed]);
                false
            }
        }
    }

    /// Adds the turns `path[from..]` of group `g` to the finished class `c` one by one, each
    /// only if the class's CDG stays acyclic with it. Returns the index of the first turn that
    /// would close a cycle (the turns before it stay in), or `None` when all are in and `g`
    /// belongs to `c`.
    pub(super) fn insert_from(
        &mut self,
        g: usize,
        c: usize,
        path: &[(usize, u32, u32)],
        from: usize,
    ) -> Option<usize> {
        let w = self.weight[g % self.n];
        let Self {
            net,
            turns,
            count,
            present,
            orders,
            budget,
            ..
        } = self;
        let turns: &Turns = turns;
        let budget = *budget;
        let net: &Channels<'_> = net;
        for (i, &(t, a, b)) in path.iter().enumerate().skip(from) {
            if count[c][t] == 0 {
                let bits = &present[c];
                let fits = orders[c].add_edge(
                    a,
                    b,
                    budget,
                    |x, out| turns.successors(net, bits, x, out),
                    |x, out| turns.predecessors(bits, x, out),
                );
                if !fits {
                    return Some(i);
                }
                present[c][t / 64] |= 1 << (t % 64);
            }
            count[c][t] += w;
        }
        self.class[g] = c as u8;
        self.groups_in[c] += 1;
        None
    }

    /// Takes the turns `path` of group `g`, added by [`Self::insert_from`], out of class `c`
    /// again (the group is not in the class).
    pub(super) fn withdraw(&mut self, g: usize, c: usize, path: &[(usize, u32, u32)]) {
        let w = self.weight[g % self.n];
        for &(t, _, _) in path {
            self.count[c][t] -= w;
            if self.count[c][t] == 0 {
                self.present[c][t / 64] &= !(1 << (t % 64));
            }
        }
    }

    /// Class `c` is acyclic: keep a topological order of its CDG for later insertions.
    pub(super) fn finish(&mut self, c: usize) {
        debug_assert_eq!(self.orders.len(), c);
        let (net, turns, bits) = (self.net, &self.turns, &self.present[c]);
        self.orders
            .push(TopoOrder::of_acyclic(net.links.len(), |x, out| {
                turns.successors(net, bits, x, out)
            }));
    }

    /// Classes in use (at least one).
    pub(super) fn used(&self) -> usize {
        self.groups_in
            .iter()
            .rposition(|&c| c > 0)
            .map_or(1, |l| l + 1)
    }

    /// Re-packs `groups` first-fit, taking the current classes whole in the order `order`
    /// (an index into the classes in use), each group into the lowest class whose CDG stays
    /// acyclic with it. Never needs more classes than before: the k-th class taken finds class
    /// k holding only groups of its own, which were acyclic together (the argument of
    /// Culberson's iterated greedy colouring), so every check here is exact.
    pub(super) fn repack(&mut self, groups: &[usize], order: &[usize]) {
        let classes = self.used();
        let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); classes];
        for &g in groups {
            by_class[usize::from(self.class[g])].push(g);
        }
        for c in 0..self.count.len() {
            self.count[c].fill(0);
            self.present[c].fill(0);
            self.groups_in[c] = 0;
        }
        let links = self.net.links.len();
        self.orders = (0..self.count.len())
            .map(|_| TopoOrder::of_acyclic(links, |_, _| {}))
            .collect();
        self.budget = usize::MAX;
        let mut path = std::mem::take(&mut self.path);
        for &k in order {
            for &g in &by_class[k] {
                self.path_of(g, &mut path);
                let placed = (0..classes).any(|c| self.try_insert(g, c, &path));
                assert!(placed, "a group fits at the latest into its own class");
            }
        }
        self.path = path;
    }

    /// Puts every group of `groups` back into its class of `saved`, with the classes'
    /// topological orders made anew.
    pub(super) fn restore(&mut self, groups: &[usize], saved: &[u8]) {
        for c in 0..self.count.len() {
            self.count[c].fill(0);
            self.present[c].fill(0);
            self.groups_in[c] = 0;
        }
        let mut path = std::mem::take(&mut self.path);
        for &g in groups {
            self.path_of(g, &mut path);
            self.add(g, usize::from(saved[g]), &path);
        }
        self.path = path;
        let (net, turns) = (self.net, &self.turns);
        self.orders = self
            .present
            .iter()
            .map(|bits| {
                TopoOrder::of_acyclic(net.links.len(), |x, out| {
                    turns.successors(net, bits, x, out)
                })
            })
            .collect();
    }

    /// Empties the highest class while its groups fit into lower ones; returns the classes
    /// before and the groups moved.
    pub(super) fn compact(&mut self) -> (usize, usize) {
        let used =
            |groups_in: &[usize]| groups_in.iter().rposition(|&c| c > 0).map_or(1, |l| l + 1);
        let before = used(&self.groups_in);
        let mut moved = 0;
        // The classes to empty are small: decide every insertion exactly.
        self.budget = usize::MAX;
        loop {
            let top = used(&self.groups_in) - 1;
            if top == 0 {
                return (before, moved);
            }
            for g in 0..self.class.len() {
                if usize::from(self.class[g]) != top || self.weight[g % self.n] == 0 {
                    continue;
                }
                let mut path = std::mem::take(&mut self.path);
                self.path_of(g, &mut path);
                self.remove(g, top, &path);
                if (0..top).any(|lower| self.try_insert(g, lower, &path)) {
                    moved += 1;
                } else {
                    self.add(g, top, &path);
                }
                self.path = path;
            }
            if self.groups_in[top] > 0 {
                return (before, moved);
            }
        }
    }
}

/// The first set bit in `start..end`.
pub(super) fn next_bit(bits: &[u64], start: usize, end: usize) -> Option<usize> {
    let mut i = start;
    while i < end {
        let word = bits[i / 64] >> (i % 64);
        if word != 0 {
            let p = i + word.trailing_zeros() as usize;
            return (p < end).then_some(p);
        }
        i = (i / 64 + 1) * 64;
    }
    None
}
