//! Layer tables: for every layer and destination switch t, each switch's next hop towards t.
//! A layer is destination-based (one next hop per switch and destination), like the forwarding
//! tables it becomes, so each layer and destination is a tree of paths into t.
//!
//! The one routine that extends a layer, [`Layers::attach`], is shared by the minimal routing,
//! the layered routing's completion step and RUES: it connects every switch without a next hop
//! to the part of the tree that has one, along the fewest hops, choosing among equally short
//! next hops the least loaded link, and adds the routes it creates to the link weights.

use super::cable_order::{CableOrder, Shape};
use super::graph::{FAR, NONE, RoutingGraph};

/// "No entry" in the hop-count table.
pub const UNSET: u8 = u8::MAX;

/// Next hops (edge ids) and remaining hop counts per (layer, destination, switch).
#[derive(Debug, Clone)]
pub struct Layers {
    n: usize,
    count: usize,
    /// `next[(l * n + t) * n + s]`: the edge s takes towards t in layer l, or [`NONE`].
    next: Vec<u32>,
    /// `hops[(l * n + t) * n + s]`: hops from s to t along layer l, or [`UNSET`].
    hops: Vec<u8>,
}

impl Layers {
    /// Empty layers for `n` switches; every switch is its own destination's root.
    pub fn new(n: usize, count: usize) -> Self {
        let mut hops = vec![UNSET; count * n * n];
        for l in 0..count {
            for t in 0..n {
                hops[(l * n + t) * n + t] = 0;
            }
        }
        Self {
            n,
            count,
            next: vec![NONE; count * n * n],
            hops,
        }
    }

    /// Adds empty layers up to `count` (each destination its own root), keeping the layers
    /// there are: the driver builds and balances a prefix of layers before it adds the next.
    pub fn extend_to(&mut self, count: usize) {
        let n = self.n;
        for l in self.count..count {
            self.next.extend(std::iter::repeat_n(NONE, n * n));
            self.hops.extend(std::iter::repeat_n(UNSET, n * n));
            for t in 0..n {
                self.hops[(l * n + t) * n + t] = 0;
            }
        }
        self.count = self.count.max(count);
    }

    /// Number of layers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.n
    }

    fn at(&self, l: usize, s: usize, t: usize) -> usize {
        (l * self.n + t) * self.n + s
    }

    /// The edge switch s takes towards t in layer l.
    pub fn next_edge(&self, l: usize, s: usize, t: usize) -> Option<usize> {
        let e = self.next[self.at(l, s, t)];
        (e != NONE).then_some(e as usize)
    }

    /// Every switch's next hop towards t in layer l, by switch ([`NONE`]: none): one row of
    /// [`Self::next_edge`], for loops that read many switches towards one destination.
    pub fn next_row(&self, l: usize, t: usize) -> &[u32] {
        let start = self.at(l, 0, t);
        &self.next[start..start + self.n]
    }

    /// Every switch's hops to t in layer l, by switch ([`UNSET`]: no route): one row of
    /// [`Self::hops`].
    pub fn hops_row(&self, l: usize, t: usize) -> &[u8] {
        let start = self.at(l, 0, t);
        &self.hops[start..start + self.n]
    }

    /// Hops from s to t in layer l, if s has a route.
    pub fn hops(&self, l: usize, s: usize, t: usize) -> Option<u8> {
        let h = self.hops[self.at(l, s, t)];
        (h != UNSET).then_some(h)
    }

    /// Whether s has a route (or is t) in layer l.
    pub fn is_routed(&self, l: usize, s: usize, t: usize) -> bool {
        self.hops[self.at(l, s, t)] != UNSET
    }

    /// Sets s's next hop towards t in layer l.
    pub fn set(&mut self, l: usize, s: usize, t: usize, edge: usize, hops: u8) {
        let i = self.at(l, s, t);
        self.next[i] = edge as u32;
        self.hops[i] = hops;
    }

    /// Points s's next hop towards t in layer l at `edge`, its hop count unknown until
    /// [`Layers::recompute_hops`] (the repair copies surviving next hops this way).
    pub fn set_next(&mut self, l: usize, s: usize, t: usize, edge: usize) {
        let i = self.at(l, s, t);
        self.next[i] = edge as u32;
        self.hops[i] = UNSET;
    }

    /// Removes s's route towards t in layer l.
    pub fn clear_next(&mut self, l: usize, s: usize, t: usize) {
        let i = self.at(l, s, t);
        self.next[i] = NONE;
        self.hops[i] = UNSET;
    }

    /// Removes the next hop of every switch whose route does not reach t in layer l (hop
    /// count unknown after [`Layers::recompute_hops`]), so it can be attached anew.
    pub fn drop_unreached(&mut self, l: usize, t: usize) {
        let base = self.at(l, 0, t);
        for v in 0..self.n {
            if self.hops[base + v] == UNSET {
                self.next[base + v] = NONE;
            }
        }
    }

    /// The switches of the path from s to t in layer l (s first, t last), or `None` if s has
    /// no route.
    pub fn path(&self, graph: &RoutingGraph, l: usize, s: usize, t: usize) -> Option<Vec<usize>> {
        let mut path = vec![s];
        let mut v = s;
        while v != t {
            v = graph.edge_to[self.next_edge(l, v, t)?] as usize;
            path.push(v);
            if path.len() > self.n {
                return None; // cannot happen for tables built here; guards external input
            }
        }
        Some(path)
    }

    /// Whether the route from v to t in layer l passes switch x (or starts there).
    pub fn passes(&self, graph: &RoutingGraph, l: usize, mut v: usize, t: usize, x: usize) -> bool {
        loop {
            if v == x {
                return true;
            }
            if v == t {
                return false;
            }
            match self.next_edge(l, v, t) {
                Some(e) => v = graph.edge_to[e] as usize,
                None => return false,
            }
        }
    }

    /// Recomputes the hop counts of every routed switch towards t in layer l from the next
    /// hops (after routes were re-pointed).
    pub fn recompute_hops(&mut self, graph: &RoutingGraph, l: usize, t: usize) {
        let n = self.n;
        let base = self.at(l, 0, t);
        for v in 0..n {
            if v != t && self.next[base + v] != NONE {
                self.hops[base + v] = UNSET;
            }
        }
        let mut chain = Vec::new();
        for v in 0..n {
            // Walk to the first switch with a known count, then fill the walk backwards.
            let mut x = v;
            while self.hops[base + x] == UNSET && self.next[base + x] != NONE {
                chain.push(x);
                x = graph.edge_to[self.next[base + x] as usize] as usize;
            }
            let mut h = self.hops[base + x];
            while let Some(y) = chain.pop() {
                h = h.saturating_add(1);
                self.hops[base + y] = h;
            }
        }
    }

    /// Adds `load` to every edge of the existing route from v to t in layer l.
    pub fn load_chain(
        &self,
        graph: &RoutingGraph,
        l: usize,
        mut v: usize,
        t: usize,
        load: u64,
        weights: &mut [u64],
    ) {
        while v != t {
            let e = self.next[self.at(l, v, t)] as usize;
            weights[e] += load;
            v = graph.edge_to[e] as usize;
        }
    }

    /// Sum of the weights along the existing route from v to t in layer l.
    pub fn chain_weight(
        &self,
        graph: &RoutingGraph,
        l: usize,
        mut v: usize,
        t: usize,
        weights: &[u64],
    ) -> u64 {
        let mut sum = 0;
        while v != t {
            let e = self.next[self.at(l, v, t)] as usize;
            sum += weights[e];
            v = graph.edge_to[e] as usize;
        }
        sum
    }

    /// Gives every switch without a route to t in layer l one, using only edges for which
    /// `allowed` holds: the fewest total hops to t (hops to a routed switch plus its route),
    /// among equally short next hops the least loaded link. The routes created add
    /// (sending endpoints × endpoints of t) to the weights of the links they use.
    ///
    /// Switches that cannot reach the routed part through allowed edges stay without route.
    pub fn attach(
        &mut self,
        graph: &RoutingGraph,
        l: usize,
        t: usize,
        weights: &mut [u64],
        allowed: impl Fn(usize) -> bool,
        scratch: &mut AttachScratch,
    ) {
        let n = self.n;
        let AttachScratch {
            label, order, sub, ..
        } = scratch;
        label.clear();
        label.resize(n, FAR);
        order.clear();
        // Multi-source search from the routed switches, by total hops to t. Routed labels can
        // differ by more than one, so process them in buckets of increasing label.
        let mut buckets: Vec<Vec<u32>> = Vec::new();
        let routed_hops = &self.hops[self.at(l, 0, t)..self.at(l, 0, t) + n];
        for (v, (&h, slot)) in routed_hops.iter().zip(label.iter_mut()).enumerate() {
            if h != UNSET {
                *slot = h;
                if buckets.len() <= usize::from(h) {
                    buckets.resize(usize::from(h) + 1, Vec::new());
                }
                buckets[usize::from(h)].push(v as u32);
            }
        }
        let mut level = 0usize;
        while level < buckets.len() {
            let current = std::mem::take(&mut buckets[level]);
            for &v in &current {
                let v = v as usize;
                if usize::from(label[v]) != level {
                    continue;
                }
                for e in graph.edges(v) {
                    let u = graph.edge_to[e] as usize; // u -> v is the reverse of e
                    let next_label = label[v].saturating_add(1);
                    if label[u] == FAR && next_label < FAR && self.hops[self.at(l, u, t)] == UNSET {
                        let back = graph.edge_between(u, v).expect("cables are symmetric");
                        if !allowed(back) {
                            continue;
                        }
                        label[u] = next_label;
                        order.push(u as u32);
                        if buckets.len() <= usize::from(next_label) {
                            buckets.resize(usize::from(next_label) + 1, Vec::new());
                        }
                        buckets[usize::from(next_label)].push(u as u32);
                    }
                }
            }
            level += 1;
        }
        // Farthest first, so each switch's subtree of senders is known when it picks its link.
        sub.clear();
        sub.resize(n, 0);
        let receivers = u64::from(graph.endpoints[t]);
        for &u in order.iter().rev() {
            let u = u as usize;
            let want = label[u] - 1;
            let best = graph
                .edges(u)
                .filter(|&e| allowed(e) && label[graph.edge_to[e] as usize] == want)
                .min_by_key(|&e| (weights[e], e))
                .expect("a labelled switch has a neighbour one hop closer");
            let w = graph.edge_to[best] as usize;
            self.set(l, u, t, best, label[u]);
            sub[u] += u64::from(graph.endpoints[u]);
            let load = sub[u] * receivers;
            weights[best] += load;
            // A next hop attached in this pass is processed later and carries the subtree on;
            // one routed before carries the load along its existing route now.
            if self.is_routed(l, w, t) {
                self.load_chain(graph, l, w, t, load, weights);
            } else {
                sub[w] += sub[u];
            }
        }
    }
}

/// Routes that keep a turn rule: every route unimodal in a [`CableOrder`].
impl Layers {
    /// The shape of every switch's route to t in layer l, into `out` (`None`: no route; a
    /// route that does not reach t counts as a valley).
    pub fn shapes(
        &self,
        graph: &RoutingGraph,
        order: &CableOrder,
        l: usize,
        t: usize,
        out: &mut Vec<Option<Shape>>,
    ) {
        let n = self.n;
        out.clear();
        out.resize(n, None);
        if t >= n {
            return;
        }
        out[t] = Some(Shape::Root);
        let base = self.at(l, 0, t);
        let mut chain: Vec<usize> = Vec::new();
        for v in 0..n {
            let mut x = v;
            while out[x].is_none() && self.next[base + x] != NONE && chain.len() <= n {
                chain.push(x);
                x = graph.edge_to[self.next[base + x] as usize] as usize;
            }
            let mut shape = if chain.len() > n {
                Some(Shape::Valley)
            } else {
                out[x]
            };
            while let Some(y) = chain.pop() {
                shape = shape.map(|s| s.extend(order, self.next[base + y] as usize));
                out[y] = shape;
            }
        }
    }

    /// Whether every route to t in layer l is unimodal in `order` (switches without a route
    /// are not judged here).
    pub fn unimodal_into(
        &self,
        graph: &RoutingGraph,
        order: &CableOrder,
        l: usize,
        t: usize,
    ) -> bool {
        let mut shapes = Vec::new();
        self.shapes(graph, order, l, t, &mut shapes);
        shapes.iter().all(|s| s.is_none_or(Shape::is_valid))
    }

    /// Copies the next hops and hop counts of every switch towards t in layer l into `saved`.
    pub fn save(&self, l: usize, t: usize, saved: &mut Vec<(u32, u8)>) {
        let base = self.at(l, 0, t);
        saved.clear();
        saved.extend((base..base + self.n).map(|i| (self.next[i], self.hops[i])));
    }

    /// Puts back what [`Layers::save`] copied.
    pub fn restore(&mut self, l: usize, t: usize, saved: &[(u32, u8)]) {
        let base = self.at(l, 0, t);
        for (i, &(next, hops)) in (base..).zip(saved) {
            self.next[i] = next;
            self.hops[i] = hops;
        }
    }

    /// Whether every route of every layer is unimodal in `order` (switches without a route
    /// are not judged here).
    pub fn all_unimodal(&self, graph: &RoutingGraph, order: &CableOrder) -> bool {
        (0..self.count).all(|l| (0..self.n).all(|t| self.unimodal_into(graph, order, l, t)))
    }

    /// [`Layers::attach`] keeping every route unimodal in `order`: a switch takes a next hop
    /// only if that switch's route accepts the edge ([`Shape::accepts`]) — among those the
    /// fewest total hops, then the least loaded link — so switches are attached nearest
    /// first, each one's shape known before the switches behind it choose. Only `kept` edges
    /// are used when given.
    ///
    /// Without `kept`, every switch connected to t gets a route: one the greedy search leaves
    /// without (every neighbour's route rejects it) takes the shortest unimodal route through
    /// switches without one to a route that accepts it ([`Layers::attach_shortest`]), and the
    /// search goes on from there. Only where there is none, and for a switch whose route
    /// became a valley, the route is the order's up*/down* spanning tree's
    /// ([`CableOrder::tree_next`], always unimodal), re-pointing the switches on that route.
    /// Each step gives one more switch a unimodal route and takes none away, so it ends.
    ///
    /// The weights change exactly as [`Layers::attach`] changes them: by the load of the
    /// routes created (and, when the fallback re-points routed switches, of the routes moved).
    // The arguments are `attach`'s (layer, destination, weights, scratch) plus the order and
    // the kept edges: one list with `attach` keeps the two completions side by side.
    #[allow(clippy::too_many_arguments)]
    pub fn attach_unimodal(
        &mut self,
        graph: &RoutingGraph,
        l: usize,
        t: usize,
        weights: &mut [u64],
        order: &CableOrder,
        kept: Option<&[bool]>,
        scratch: &mut AttachScratch,
    ) {
        let receivers = u64::from(graph.endpoints[t]);
        self.tree_load(graph, l, t, receivers, weights, false);
        let mut added = std::mem::take(&mut scratch.added);
        added.clear();
        added.resize(weights.len(), 0);
        let mut shapes = std::mem::take(&mut scratch.shapes);
        loop {
            self.attach_by_shape(
                graph,
                l,
                t,
                weights,
                &mut added,
                order,
                kept,
                scratch,
                &mut shapes,
            );
            if kept.is_some() {
                break;
            }
            self.shapes(graph, order, l, t, &mut shapes);
            let Some(v) = (0..self.n).find(|&v| {
                v != t
                    && shapes[v].is_none_or(|s| !s.is_valid())
                    && order.tree_next(graph, v, t).is_some()
            }) else {
                break;
            };
            if shapes[v].is_none() && self.attach_shortest(graph, l, t, v, order, &shapes, scratch)
            {
                continue;
            }
            let mut x = v;
            while let Some(e) = order.tree_next(graph, x, t) {
                let i = self.at(l, x, t);
                self.next[i] = e as u32;
                self.hops[i] = 0;
                x = graph.edge_to[e] as usize;
            }
            self.recompute_hops(graph, l, t);
        }
        for (w, a) in weights.iter_mut().zip(&added) {
            *w -= a;
        }
        self.tree_load(graph, l, t, receivers, weights, true);
        scratch.added = added;
        scratch.shapes = shapes;
    }

    /// Gives v, which has no route to t in layer l, the shortest route that is unimodal in
    /// `order` and keeps every route already set: through switches without a route (which
    /// take it on) to t or to a switch whose route accepts the way in (`shapes`: every
    /// switch's route's shape). Whether there was one.
    ///
    /// A breadth-first search over (last cable, whether the ranks fall yet): what a route may
    /// still do depends on nothing else. The shortest route found is simple: a walk that
    /// returned to a switch could leave out the loop, arriving in a state that allows at
    /// least as much (a falling walk only falls further, and rising allows all that falling
    /// does), so it would be shorter. The new routes' loads are left to the caller, which
    /// recounts the whole tree.
    // `attach_unimodal`'s layer, destination and scratch, the switch and the shapes it knows.
    #[allow(clippy::too_many_arguments)]
    fn attach_shortest(
        &mut self,
        graph: &RoutingGraph,
        l: usize,
        t: usize,
        v: usize,
        order: &CableOrder,
        shapes: &[Option<Shape>],
        scratch: &mut AttachScratch,
    ) -> bool {
        let AttachScratch { came_from, .. } = scratch;
        // State 2e + falling: the walk's last cable is e, and whether its ranks fall yet.
        // `came_from`: the state before (FROM_V: none, the walk starts at v), NONE: unseen.
        const FROM_V: u32 = NONE - 1;
        came_from.clear();
        came_from.resize(2 * graph.edge_count(), NONE);
        let state_of = |e: usize, falling: bool| 2 * e + usize::from(falling);
        // Whether a walk in state (last cable, falling) may go on along a route of `shape`.
        let joins = |last: usize, falling: bool, shape: Shape| match shape {
            Shape::Root => true,
            Shape::Falling { first } => !falling || order.rank(first as usize) < order.rank(last),
            Shape::Rising { first } => !falling && order.rank(first as usize) > order.rank(last),
            Shape::Valley => false,
        };
        let mut level: Vec<(usize, Option<(usize, bool)>)> = vec![(v, None)];
        let mut best: Option<(usize, usize)> = None; // (route length, final state)
        let mut depth = 0;
        while !level.is_empty() && best.is_none_or(|(length, _)| length > depth + 1) {
            let mut next_level = Vec::new();
            for &(x, state) in &level {
                for f in graph.edges(x) {
                    let y = graph.edge_to[f] as usize;
                    let falling = match state {
                        None => false,
                        Some((last, falling)) => {
                            let down = order.rank(f) < order.rank(last);
                            if falling && !down {
                                continue;
                            }
                            falling || down
                        }
                    };
                    let here = state_of(f, falling);
                    if y == v || came_from[here] != NONE {
                        continue;
                    }
                    if let Some(h) = self.hops(l, y, t) {
                        let fits = shapes[y].is_some_and(|shape| joins(f, falling, shape));
                        let length = depth + 1 + usize::from(h);
                        if fits && best.is_none_or(|(shortest, _)| length < shortest) {
                            came_from[here] =
                                state.map_or(FROM_V, |(e, down)| state_of(e, down) as u32);
                            best = Some((length, here));
                        }
                        continue;
                    }
                    came_from[here] = state.map_or(FROM_V, |(e, down)| state_of(e, down) as u32);
                    next_level.push((y, Some((f, falling))));
                }
            }
            level = next_level;
            depth += 1;
        }
        let Some((length, last)) = best else {
            return false;
        };
        let mut state = last as u32;
        let mut edges = Vec::new();
        while state != FROM_V {
            edges.push(state as usize / 2);
            state = came_from[state as usize];
        }
        let mut x = v;
        for (i, &e) in edges.iter().rev().enumerate() {
            debug_assert!(!self.is_routed(l, x, t), "the route found is simple");
            self.set(l, x, t, e, (length - i) as u8);
            x = graph.edge_to[e] as usize;
        }
        true
    }

    /// The greedy search of [`Layers::attach_unimodal`]: nearest first, by shape. Adds each
    /// attached switch's own routes along its route to `weights` and to `added`.
    // `attach_unimodal`'s arguments plus the two buffers it lends out of its scratch for the
    // whole loop (taken out so the fallback can use the scratch meanwhile).
    #[allow(clippy::too_many_arguments)]
    fn attach_by_shape(
        &mut self,
        graph: &RoutingGraph,
        l: usize,
        t: usize,
        weights: &mut [u64],
        added: &mut [u64],
        order: &CableOrder,
        kept: Option<&[bool]>,
        scratch: &mut AttachScratch,
        shapes: &mut Vec<Option<Shape>>,
    ) {
        let n = self.n;
        let allowed = |e: usize| kept.is_none_or(|k| k[e]);
        self.shapes(graph, order, l, t, shapes);
        let AttachScratch {
            label,
            order: found,
            ..
        } = scratch;
        label.clear();
        label.resize(n, FAR);
        let mut buckets: Vec<Vec<u32>> = Vec::new();
        for (v, slot) in label.iter_mut().enumerate() {
            let h = self.hops[self.at(l, v, t)];
            if h != UNSET {
                *slot = h;
                if buckets.len() <= usize::from(h) {
                    buckets.resize(usize::from(h) + 1, Vec::new());
                }
                buckets[usize::from(h)].push(v as u32);
            }
        }
        let receivers = u64::from(graph.endpoints[t]);
        let mut level = 0usize;
        while level < buckets.len() {
            let current = std::mem::take(&mut buckets[level]);
            let next_label = (level + 1).min(usize::from(FAR)) as u8;
            found.clear();
            for &v in &current {
                let v = v as usize;
                let Some(shape) = shapes[v] else { continue };
                if usize::from(label[v]) != level || next_label == FAR {
                    continue;
                }
                for e in graph.edges(v) {
                    let u = graph.edge_to[e] as usize;
                    if label[u] != FAR || self.hops[self.at(l, u, t)] != UNSET {
                        continue;
                    }
                    let back = graph.edge_between(u, v).expect("cables are symmetric");
                    if allowed(back) && shape.accepts(order, back) {
                        label[u] = next_label;
                        found.push(u as u32);
                    }
                }
            }
            for &u in found.iter() {
                let u = u as usize;
                let best = graph
                    .edges(u)
                    .filter(|&e| {
                        let w = graph.edge_to[e] as usize;
                        allowed(e)
                            && usize::from(label[w]) == level
                            && shapes[w].is_some_and(|s| s.accepts(order, e))
                    })
                    .min_by_key(|&e| (weights[e], e))
                    .expect("a found switch has an accepting neighbour one hop closer");
                let w = graph.edge_to[best] as usize;
                self.set(l, u, t, best, next_label);
                shapes[u] = shapes[w].map(|s| s.extend(order, best));
                let load = u64::from(graph.endpoints[u]) * receivers;
                let mut x = u;
                while x != t {
                    let e = self.next[self.at(l, x, t)] as usize;
                    weights[e] += load;
                    added[e] += load;
                    x = graph.edge_to[e] as usize;
                }
            }
            if !found.is_empty() {
                if buckets.len() <= usize::from(next_label) {
                    buckets.resize(usize::from(next_label) + 1, Vec::new());
                }
                buckets[usize::from(next_label)].extend_from_slice(found);
            }
            level += 1;
        }
    }

    /// Adds (`add`) or removes the load of every route to t in layer l to or from `weights`.
    pub(super) fn tree_load(
        &self,
        graph: &RoutingGraph,
        l: usize,
        t: usize,
        receivers: u64,
        weights: &mut [u64],
        add: bool,
    ) {
        for v in (0..self.n).filter(|&v| v != t && self.is_routed(l, v, t)) {
            let load = u64::from(graph.endpoints[v]) * receivers;
            let mut x = v;
            while x != t {
                let e = self.next[self.at(l, x, t)] as usize;
                if add {
                    weights[e] += load;
                } else {
                    weights[e] -= load;
                }
                x = graph.edge_to[e] as usize;
            }
        }
    }
}

/// Reusable buffers for [`Layers::attach`].
#[derive(Debug, Default)]
pub struct AttachScratch {
    label: Vec<u8>,
    order: Vec<u32>,
    sub: Vec<u64>,
    /// [`Layers::attach_unimodal`]: the load its search added, and the routes' shapes.
    added: Vec<u64>,
    shapes: Vec<Option<Shape>>,
    /// [`Layers::attach_shortest`]: each search state's predecessor.
    came_from: Vec<u32>,
}
