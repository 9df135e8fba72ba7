//! The heaviest transportation plan: source switches with `supply` hosts each, destination
//! classes with `demand` hosts each, a weight per (source, class) pair; find the integer flow
//! (at most the supply out of a source, at most the demand into a class) of largest total
//! weight. It is the host-level assignment problem with the hosts of a switch (or class) merged
//! into one node, so it has switches, not hosts, for nodes: on Slim Fly q = 11 a cable's
//! problem has a few dozen nodes where the host-level one has hundreds of rows, and
//! Kuhn–Munkres (cubic in the hosts) took minutes per prefix (BENCHMARKS.md).
//!
//! Successive shortest paths with costs −weight and Bellman–Ford (queue-based): the cheapest
//! augmenting path is taken while it still gains weight; the cost of a min-cost flow is
//! convex in the flow value, so stopping at the first path that gains nothing is optimal.

/// Largest total weight of a plan. `edges`: (source, class, weight > 0).
pub(crate) fn heaviest_plan(supply: &[u32], demand: &[u32], edges: &[(u32, u32, u32)]) -> u64 {
    let (ns, nd) = (supply.len(), demand.len());
    // Nodes: 0 = origin, 1 = sink, 2.. sources, then classes.
    let nodes = 2 + ns + nd;
    let mut g = Graph::new(nodes);
    for (i, &s) in supply.iter().enumerate() {
        g.arc(0, 2 + i, s, 0);
    }
    for (j, &d) in demand.iter().enumerate() {
        g.arc(2 + ns + j, 1, d, 0);
    }
    for &(i, j, w) in edges {
        let cap = supply[i as usize].min(demand[j as usize]);
        g.arc(2 + i as usize, 2 + ns + j as usize, cap, -i64::from(w));
    }
    g.index();
    let mut total = 0i64;
    let mut dist = vec![i64::MAX; nodes];
    let mut via = vec![usize::MAX; nodes];
    let mut queued = vec![false; nodes];
    let mut queue = std::collections::VecDeque::new();
    loop {
        dist.fill(i64::MAX);
        via.fill(usize::MAX);
        dist[0] = 0;
        queue.push_back(0);
        queued[0] = true;
        while let Some(u) = queue.pop_front() {
            queued[u] = false;
            for a in g.first[u]..g.first[u + 1] {
                let arc = g.order[a];
                if g.cap[arc] == 0 {
                    continue;
                }
                let v = g.to[arc];
                let d = dist[u] + g.cost[arc];
                if d < dist[v] {
                    dist[v] = d;
                    via[v] = arc;
                    if !queued[v] {
                        queued[v] = true;
                        queue.push_back(v);
                    }
                }
            }
        }
        if dist[1] >= 0 {
            return total.unsigned_abs();
        }
        let mut push = u32::MAX;
        let mut v = 1;
        while v != 0 {
            let arc = via[v];
            push = push.min(g.cap[arc]);
            v = g.to[arc ^ 1];
        }
        let mut v = 1;
        while v != 0 {
            let arc = via[v];
            g.cap[arc] -= push;
            g.cap[arc ^ 1] += push;
            v = g.to[arc ^ 1];
        }
        total += dist[1] * i64::from(push);
    }
}

/// Residual arcs in pairs (arc 2a forward, 2a + 1 its reverse), indexed by tail.
struct Graph {
    to: Vec<usize>,
    cap: Vec<u32>,
    cost: Vec<i64>,
    tail: Vec<usize>,
    /// Arcs sorted by tail: `order[first[u]..first[u + 1]]` leave `u`.
    order: Vec<usize>,
    first: Vec<usize>,
    nodes: usize,
}

impl Graph {
    fn new(nodes: usize) -> Self {
        Self {
            to: Vec::new(),
            cap: Vec::new(),
            cost: Vec::new(),
            tail: Vec::new(),
            order: Vec::new(),
            first: vec![0; nodes + 1],
            nodes,
        }
    }

    fn arc(&mut self, from: usize, to: usize, cap: u32, cost: i64) {
        self.to.extend([to, from]);
        self.tail.extend([from, to]);
        self.cap.extend([cap, 0]);
        self.cost.extend([cost, -cost]);
    }

    /// Groups the arcs by tail; call once, after the last [`Self::arc`].
    fn index(&mut self) {
        self.first = vec![0; self.nodes + 1];
        for &t in &self.tail {
            self.first[t + 1] += 1;
        }
        for u in 0..self.nodes {
            self.first[u + 1] += self.first[u];
        }
        let mut next = self.first.clone();
        self.order = vec![0; self.tail.len()];
        for (a, &t) in self.tail.iter().enumerate() {
            self.order[next[t]] = a;
            next[t] += 1;
        }
    }
}
