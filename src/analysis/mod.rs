//! Routing analysis: how good is a routing that is programmed in forwarding tables?
//!
//! [`analyze`] judges any routing — ours, OpenSM's own engines, a fork's — from three inputs:
//! the [`Fabric`] (switches, ports, cables, LIDs), its [`LidTable`], and the
//! [`ForwardingTables`] of every switch. It reports:
//!
//! * **completeness**: every (switch, destination LID) entry is walked through the tables and
//!   the cables; each failure (no entry, a dead end on a port without a cable, a loop, delivery
//!   to the wrong port) is reported once, at the switch where it happens, with the number of
//!   entries whose walk ends in it. Destinations are every CA and router port LID (all LMC
//!   offsets) and every switch LID.
//! * **path lengths per layer** (layer = LID − base LID): inter-switch hops from every source
//!   switch to every endpoint LID on another switch, compared with the switch graph's shortest
//!   distance (minimal / +1 / longer).
//! * **edge-disjoint paths across layers**: for every ordered switch pair (s, t), s ≠ t, t with
//!   endpoints, the maximum number of directed-cable-disjoint s → t paths among the layer paths
//!   to one endpoint port of t (a small max-flow; parallel cables are distinct), minimised over
//!   t's endpoint ports.
//! * **link load**: routes per directed switch-to-switch cable, counting each (source endpoint
//!   port, destination endpoint LID) route once; in total and per layer.
//! * optionally the **maximum achievable throughput** (MAT, [`mat`]) of the routing for uniform
//!   all-to-all traffic and for the adversarial "longest matching" pattern, by linear
//!   programming.
//! * optionally the **throughput of each prefix of layers** ([`prefix`]): what MPI traffic split
//!   evenly over layers 0..K − 1 gets, for all-to-all, random, adversarial and the exact worst
//!   host permutation.
//!
//! With multicast forwarding tables, [`multicast`] reports each group next to the unicast
//! routes: members, tree switches, depth, whether every member reaches exactly the others, and
//! the groups per cable.
//!
//! Switch LIDs are checked for completeness only: they carry management traffic, so the path,
//! disjointness, load and MAT metrics are about the endpoint LIDs.

pub(crate) mod context;
pub mod mat;
pub mod multicast;
pub mod prefix;
mod text;

use serde::{Deserialize, Serialize};

use crate::routing::walk::{BrokenKind, DestWalk, FAILED, NONE};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, UNREACHABLE};
use context::{Context, FailureLog, resolve};

pub use mat::{MatReport, MatResult, Matching};
pub use prefix::{PrefixOptions, PrefixReport, PrefixThroughput};

/// What to compute beyond the metrics that are always computed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Solve the MAT linear programs (seconds for Slim Fly q = 5, longer for larger fabrics).
    pub mat: bool,
    /// Compute the throughput of each prefix of layers ([`prefix`]) with these options.
    pub prefix: Option<PrefixOptions>,
    /// At most this many failures are listed in the report (all are counted).
    pub max_listed_failures: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            mat: false,
            prefix: None,
            max_listed_failures: 100,
        }
    }
}

/// One failure, reported at the switch where it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// What went wrong.
    pub kind: BrokenKind,
    /// The destination LID.
    pub lid: u16,
    /// The switch where it happens (for a loop, the switch where the walk first comes back).
    pub switch: String,
    /// The port the entry names, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u8>,
    /// A sentence for the admin.
    pub detail: String,
    /// How many (switch, LID) entries end in this failure (the walks from all upstream
    /// switches).
    pub entries: usize,
}

/// Failures and affected entries of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCount {
    /// Distinct failures (root causes).
    pub failures: usize,
    /// (switch, LID) entries that end in one of them.
    pub entries: usize,
}

/// Failure counts by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCounts {
    /// [`BrokenKind::NoEntry`].
    pub no_entry: KindCount,
    /// [`BrokenKind::DeadEnd`].
    pub dead_end: KindCount,
    /// [`BrokenKind::Loop`].
    pub loops: KindCount,
    /// [`BrokenKind::WrongDestination`].
    pub wrong_destination: KindCount,
}

impl FailureCounts {
    fn get_mut(&mut self, kind: BrokenKind) -> &mut KindCount {
        match kind {
            BrokenKind::NoEntry => &mut self.no_entry,
            BrokenKind::DeadEnd => &mut self.dead_end,
            BrokenKind::Loop => &mut self.loops,
            BrokenKind::WrongDestination => &mut self.wrong_destination,
        }
    }

    /// All distinct failures.
    pub fn failures(&self) -> usize {
        self.no_entry.failures
            + self.dead_end.failures
            + self.loops.failures
            + self.wrong_destination.failures
    }
}

/// Does every entry reach its destination?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completeness {
    /// Every checked entry reaches its destination.
    pub complete: bool,
    /// (switch, destination LID) entries walked: switches × destination LIDs.
    pub entries_checked: usize,
    /// Entries whose walk reaches the destination.
    pub entries_reaching: usize,
    /// Failures by kind.
    pub counts: FailureCounts,
    /// The first failures (at most [`Options::max_listed_failures`]), in LID order.
    pub failures: Vec<Failure>,
    /// CA and router ports with a LID that are not cabled to a switch (not checked).
    pub unattached_ports: usize,
}

/// Path lengths of one layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerPaths {
    /// The layer (LID offset from the base LID).
    pub layer: usize,
    /// Working paths: (source switch, endpoint LID of this layer on another switch) pairs
    /// whose walk reaches the destination.
    pub paths: usize,
    /// Pairs whose walk fails (see [`Completeness`]); not in the statistics.
    pub broken: usize,
    /// Mean inter-switch hops.
    pub mean_hops: f64,
    /// Longest path, in inter-switch hops.
    pub max_hops: u32,
    /// Number of paths by hop count (index = hops).
    pub hops_histogram: Vec<usize>,
    /// Paths as short as the switch graph's shortest distance.
    pub minimal: usize,
    /// Paths one hop longer than the shortest distance.
    pub plus_one: usize,
    /// Paths two or more hops longer.
    pub longer: usize,
    /// `minimal / paths`.
    pub fraction_minimal: f64,
    /// `plus_one / paths`.
    pub fraction_plus_one: f64,
    /// `longer / paths`.
    pub fraction_longer: f64,
}

/// Edge-disjoint paths across the layers, per ordered switch pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisjointPaths {
    /// Ordered switch pairs (s, t), s ≠ t, t with endpoints.
    pub pairs: usize,
    /// Pairs by their number of edge-disjoint paths (index = number).
    pub histogram: Vec<usize>,
    /// Mean number of edge-disjoint paths.
    pub mean: f64,
    /// Fraction of pairs with at least 2.
    pub at_least_two: f64,
    /// Fraction of pairs with at least 3.
    pub at_least_three: f64,
}

/// Routes per directed switch-to-switch cable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStats {
    /// Directed cables counted (each switch-to-switch cable twice; loopback cables left out).
    pub links: usize,
    /// Sum of the loads: route-cable traversals.
    pub total: u64,
    /// Least loaded direction.
    pub min: u64,
    /// Mean load.
    pub mean: f64,
    /// Most loaded direction.
    pub max: u64,
    /// `max / mean` (0 when nothing is routed).
    pub max_over_mean: f64,
    /// The most loaded direction (`sw[port] -> sw[port]`), the first one in cable order.
    pub busiest: Option<String>,
}

/// Link load in total and per layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkLoad {
    /// All layers together.
    pub total: LoadStats,
    /// Each layer's routes alone.
    pub per_layer: Vec<LoadStats>,
    /// One entry per layer: the load of every directed cable that [`LoadStats`] counts
    /// (loopbacks left out), in cable order — what the pictures of `--format html` plot. Not in
    /// the JSON report, which stays a summary: a large fabric's loads run to megabytes there.
    #[serde(skip)]
    pub cable_loads: Vec<Vec<u64>>,
    /// For each entry of a `cable_loads` row, the cable's sending and receiving switch as
    /// indices into `switch_names`: what a drawing of the fabric needs. Not in the JSON report.
    #[serde(skip)]
    pub cable_switches: Vec<(u32, u32)>,
    /// The switches' names, in the fabric's switch order. Not in the JSON report.
    #[serde(skip)]
    pub switch_names: Vec<String>,
}

/// Everything the analyser says about a routing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The fabric's name.
    pub fabric: String,
    /// Switches.
    pub switches: usize,
    /// CA and router ports with LIDs, cabled to switches.
    pub endpoints: usize,
    /// Layers: the most LIDs an endpoint port has (2^LMC).
    pub layers: usize,
    /// Destination LIDs checked (endpoint LIDs of every layer, and switch LIDs).
    pub destination_lids: usize,
    /// Every entry reaches its destination?
    pub completeness: Completeness,
    /// Path lengths, one entry per layer.
    pub paths: Vec<LayerPaths>,
    /// Edge-disjoint paths across the layers.
    pub disjoint: DisjointPaths,
    /// Routes per directed cable.
    pub link_load: LinkLoad,
    /// Maximum achievable throughput, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mat: Option<MatReport>,
    /// Throughput of each prefix of layers, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<PrefixReport>,
    /// The multicast groups, when their tables were given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast: Option<multicast::MulticastReport>,
}

impl Report {
    /// Whether every entry reaches its destination.
    pub fn is_complete(&self) -> bool {
        self.completeness.complete
    }
}

#[derive(Default)]
struct LayerAcc {
    paths: usize,
    broken: usize,
    hop_sum: u64,
    histogram: Vec<usize>,
    minimal: usize,
    plus_one: usize,
    longer: usize,
}

/// Analyses the routing in `tables` (see the module documentation for the metrics).
///
/// # Complexity
/// Completeness, path lengths and link load: O(LIDs · switches · path length).
/// Disjoint paths: O(switches · endpoints · layers · path length) plus one tiny max-flow per
/// (switch, endpoint port) whose layer paths differ from its neighbour port's. MAT: one linear
/// program per traffic pattern (see [`mat`]).
pub fn analyze(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    options: &Options,
) -> Report {
    let ctx = Context::new(fabric, lids, tables);
    let n = ctx.switches();
    let layers = ctx.layers;
    let mut log = FailureLog::new(options.max_listed_failures);
    let mut entries_checked = 0;
    let mut entries_reaching = 0;
    let mut destination_lids = 0;
    let mut acc: Vec<LayerAcc> = (0..layers).map(|_| LayerAcc::default()).collect();
    let mut loads = vec![vec![0u64; ctx.net.cables.len()]; layers];
    // Per ordered pair s * n + t: edge-disjoint paths (u8::MAX: not counted).
    let mut disjoint = vec![u8::MAX; n * n];
    let mut mat_paths: Vec<Vec<Vec<u32>>> = if options.mat {
        vec![Vec::new(); n * n]
    } else {
        Vec::new()
    };
    let mut routes: Vec<DestWalk> = (0..layers).map(|_| DestWalk::new(n)).collect();
    let mut flow = MaxFlow::default();
    // Endpoints that send: how many per switch.
    let senders: Vec<u64> = (0..n).map(|s| ctx.endpoints_at(s).len() as u64).collect();
    // The previous endpoint port's layer cables and per-source values, for reuse.
    let mut previous_key: Vec<u32> = Vec::new();
    let mut key: Vec<u32> = Vec::new();
    let mut values = vec![0u8; n];

    for t in 0..n {
        let endpoints = ctx.endpoints_at(t);
        if endpoints.is_empty() {
            continue;
        }
        let dist = ctx.graph.distances_from(t);
        previous_key.clear();
        for (i, e) in endpoints.iter().enumerate() {
            let k = usize::from(e.lids);
            for (layer, r) in routes.iter_mut().enumerate().take(k) {
                let dest = ctx.net.endpoint_dest(e, layer as u16);
                let reached = resolve(&ctx, r, &dest, &mut log);
                destination_lids += 1;
                entries_checked += n;
                entries_reaching += reached;
                let a = &mut acc[layer];
                let load = &mut loads[layer];
                for s in (0..n).filter(|&s| s != t) {
                    let hops = r.hops(s);
                    if hops == FAILED {
                        a.broken += 1;
                        continue;
                    }
                    a.paths += 1;
                    a.hop_sum += u64::from(hops);
                    let h = hops as usize;
                    if a.histogram.len() <= h {
                        a.histogram.resize(h + 1, 0);
                    }
                    a.histogram[h] += 1;
                    match hops.checked_sub(dist[s]) {
                        _ if dist[s] == UNREACHABLE => a.longer += 1,
                        Some(0) => a.minimal += 1,
                        Some(1) => a.plus_one += 1,
                        _ => a.longer += 1,
                    }
                    if senders[s] > 0 {
                        for c in r.cables(&ctx.net, s) {
                            load[c as usize] += senders[s];
                        }
                    }
                }
            }
            let layer_routes = &routes[..k];
            // Disjoint paths: reuse the previous port's values when its layer cables are the
            // same (common: one path per switch pair and layer).
            key.clear();
            for r in layer_routes {
                key.extend((0..n).map(|s| match r.next(s) {
                    _ if !r.reaches(s) => FAILED - 1,
                    NONE => NONE,
                    l => ctx.net.cable_of_link[l as usize],
                }));
            }
            if key != previous_key {
                for (s, value) in values.iter_mut().enumerate() {
                    *value = if s == t {
                        0
                    } else {
                        flow.edge_disjoint(&ctx, s, t, layer_routes)
                    };
                }
                std::mem::swap(&mut key, &mut previous_key);
            }
            for s in (0..n).filter(|&s| s != t) {
                let d = &mut disjoint[s * n + t];
                *d = (*d).min(values[s]);
            }
            if options.mat && i == 0 {
                for s in (0..n).filter(|&s| s != t) {
                    let paths = &mut mat_paths[s * n + t];
                    for r in layer_routes.iter().filter(|r| r.reaches(s)) {
                        let p: Vec<u32> = r.cables(&ctx.net, s).collect();
                        if !paths.contains(&p) {
                            paths.push(p);
                        }
                    }
                }
            }
        }
    }
    // Switch LIDs: completeness only.
    let mut r = DestWalk::new(n);
    for t in 0..n {
        let Some(dest) = ctx.net.switch_dest(t, lids) else {
            continue;
        };
        entries_checked += n;
        destination_lids += 1;
        entries_reaching += resolve(&ctx, &mut r, &dest, &mut log);
    }

    let mut failures = log.listed;
    failures.sort_by(|a, b| (a.lid, &a.switch).cmp(&(b.lid, &b.switch)));
    let completeness = Completeness {
        complete: entries_reaching == entries_checked,
        entries_checked,
        entries_reaching,
        counts: log.counts,
        failures,
        unattached_ports: ctx.net.unattached_ports,
    };
    let paths = acc
        .into_iter()
        .enumerate()
        .map(|(layer, a)| layer_paths(layer, a))
        .collect();
    let disjoint = disjoint_stats(&disjoint, layers);
    let total: Vec<u64> = (0..ctx.net.cables.len())
        .map(|c| loads.iter().map(|l| l[c]).sum())
        .collect();
    let link_load = LinkLoad {
        total: load_stats(&ctx, &total),
        per_layer: loads.iter().map(|l| load_stats(&ctx, l)).collect(),
        cable_loads: loads
            .iter()
            .map(|l| {
                l.iter()
                    .enumerate()
                    .filter(|&(c, _)| !ctx.is_loopback(c))
                    .map(|(_, &load)| load)
                    .collect()
            })
            .collect(),
        cable_switches: (0..ctx.net.cables.len())
            .filter(|&c| !ctx.is_loopback(c))
            .map(|c| {
                let link = &ctx.net.links[ctx.net.cables[c] as usize];
                (link.from_switch, link.to_switch)
            })
            .collect(),
        switch_names: ctx
            .net
            .switches
            .iter()
            .map(|&s| ctx.net.fabric.node(s).name.clone())
            .collect(),
    };
    let mat = options.mat.then(|| mat::solve(&ctx, &mat_paths));
    let prefix = options.prefix.as_ref().map(|o| prefix::analyze(&ctx, o));
    Report {
        fabric: fabric.name.clone(),
        switches: n,
        endpoints: ctx.net.endpoints.len(),
        layers,
        destination_lids,
        completeness,
        paths,
        disjoint,
        link_load,
        mat,
        prefix,
        multicast: None,
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

fn layer_paths(layer: usize, a: LayerAcc) -> LayerPaths {
    LayerPaths {
        layer,
        paths: a.paths,
        broken: a.broken,
        mean_hops: if a.paths == 0 {
            0.0
        } else {
            a.hop_sum as f64 / a.paths as f64
        },
        max_hops: a.histogram.len().saturating_sub(1) as u32,
        hops_histogram: a.histogram,
        minimal: a.minimal,
        plus_one: a.plus_one,
        longer: a.longer,
        fraction_minimal: ratio(a.minimal, a.paths),
        fraction_plus_one: ratio(a.plus_one, a.paths),
        fraction_longer: ratio(a.longer, a.paths),
    }
}

fn disjoint_stats(values: &[u8], layers: usize) -> DisjointPaths {
    let mut histogram = vec![0usize; layers + 1];
    let mut pairs = 0;
    let mut sum = 0usize;
    for &v in values.iter().filter(|&&v| v != u8::MAX) {
        let v = usize::from(v);
        if histogram.len() <= v {
            histogram.resize(v + 1, 0);
        }
        histogram[v] += 1;
        pairs += 1;
        sum += v;
    }
    let at_least = |k: usize| histogram.iter().skip(k).sum::<usize>();
    DisjointPaths {
        pairs,
        mean: ratio(sum, pairs),
        at_least_two: ratio(at_least(2), pairs),
        at_least_three: ratio(at_least(3), pairs),
        histogram,
    }
}

fn load_stats(ctx: &Context<'_>, loads: &[u64]) -> LoadStats {
    let mut stats = LoadStats {
        links: 0,
        total: 0,
        min: u64::MAX,
        mean: 0.0,
        max: 0,
        max_over_mean: 0.0,
        busiest: None,
    };
    let mut busiest = None;
    for (c, &load) in loads.iter().enumerate() {
        if ctx.is_loopback(c) {
            continue;
        }
        stats.links += 1;
        stats.total += load;
        stats.min = stats.min.min(load);
        if busiest.is_none() || load > stats.max {
            stats.max = load;
            busiest = Some(c as u32);
        }
    }
    if stats.links == 0 {
        stats.min = 0;
        return stats;
    }
    stats.mean = stats.total as f64 / stats.links as f64;
    if stats.total > 0 {
        stats.max_over_mean = stats.max as f64 / stats.mean;
        stats.busiest = busiest.map(|c| ctx.cable_name(c));
    }
    stats
}

/// Unit-capacity max-flow on the union of a few paths, with reusable buffers.
#[derive(Default)]
struct MaxFlow {
    cables: Vec<u32>,
    /// Local nodes (dense switch indices).
    nodes: Vec<u32>,
    /// Arcs: (from, to) local indices; arc 2i is cable i, arc 2i+1 its residual reverse.
    arcs: Vec<(u32, u32)>,
    capacity: Vec<u8>,
    parent: Vec<u32>,
    queue: Vec<u32>,
}

impl MaxFlow {
    /// The number of directed-cable-disjoint s → t paths in the union of the working layer
    /// paths from s.
    fn edge_disjoint(
        &mut self,
        ctx: &Context<'_>,
        s: usize,
        t: usize,
        layer_routes: &[DestWalk],
    ) -> u8 {
        self.cables.clear();
        let mut working = 0;
        for r in layer_routes.iter().filter(|r| r.reaches(s)) {
            working += 1;
            self.cables.extend(r.cables(&ctx.net, s));
        }
        if working <= 1 {
            return working;
        }
        self.cables.sort_unstable();
        self.cables.dedup();
        self.nodes.clear();
        self.nodes.extend([s as u32, t as u32]);
        self.arcs.clear();
        self.capacity.clear();
        for &c in &self.cables {
            let cable = ctx.net.links[ctx.net.cables[c as usize] as usize];
            let from = local(&mut self.nodes, cable.from_switch);
            let to = local(&mut self.nodes, cable.to_switch);
            self.arcs.extend([(from, to), (to, from)]);
            self.capacity.extend([1, 0]);
        }
        let mut flow = 0u8;
        // Breadth-first augmenting paths (Edmonds–Karp); at most `working` rounds.
        loop {
            self.parent.clear();
            self.parent.resize(self.nodes.len(), NONE);
            self.queue.clear();
            self.queue.push(0);
            self.parent[0] = 0;
            let mut head = 0;
            while head < self.queue.len() && self.parent[1] == NONE {
                let u = self.queue[head];
                head += 1;
                for (a, &(from, to)) in self.arcs.iter().enumerate() {
                    if from == u && self.capacity[a] > 0 && self.parent[to as usize] == NONE {
                        self.parent[to as usize] = a as u32;
                        self.queue.push(to);
                    }
                }
            }
            if self.parent[1] == NONE {
                return flow;
            }
            let mut v = 1u32;
            while v != 0 {
                let a = self.parent[v as usize] as usize;
                self.capacity[a] -= 1;
                self.capacity[a ^ 1] += 1;
                v = self.arcs[a].0;
            }
            flow += 1;
        }
    }
}

fn local(nodes: &mut Vec<u32>, dense: u32) -> u32 {
    match nodes.iter().position(|&n| n == dense) {
        Some(i) => i as u32,
        None => {
            nodes.push(dense);
            (nodes.len() - 1) as u32
        }
    }
}

#[cfg(test)]
mod tests;
