//! Which fabric node is which plan device.
//!
//! Evidence is used from the strongest to the weakest, and a device once bound is never
//! re-bound by weaker evidence:
//!
//! 1. **node-name-map**: the site's GUID → name map names the node with a plan device's name;
//! 2. **plan GUID**: the plan records the device's node GUID (generated fabrics, inventories);
//! 3. **description**: the NodeDescription is the plan's expected one, or names the device —
//!    `MF0;<name>:<model>/U1` on managed switches, `<name> mlx5_0` on hosts, where `<name>` is
//!    the device name or starts with it and a separator (`sw0-1-2-R02U38` names `sw0-1-2`). A
//!    name claimed by two nodes binds neither: default descriptions such as
//!    `Quantum Mellanox Technologies` or `MT4129 ConnectX7   Mellanox Technologies` never bind;
//! 4. **cabling**: from the nodes bound so far (the anchors), every cable votes for the device
//!    its far node should be: the plan's far end of the anchor's port, worth 2 when the far port
//!    number matches too, else 1. The strongest vote in the whole fabric is taken first, ties
//!    wait for more evidence, and each new binding votes in turn. A miswired cable casts one
//!    wrong vote among a switch's many right ones, so it never re-labels a switch. When nothing
//!    at all could be identified, the best-connected switch is tried as every plan switch in
//!    turn and the trial that explains the most cables wins;
//! 5. **neighbourhood**: a node still unbound whose bound neighbours are planned neighbours of
//!    exactly one unbound device of its kind is that device (a host plugged into a spare port
//!    of its own switch; a switch needs two such neighbours).
//!
//! Plan devices left unbound were not seen; fabric nodes left unbound are unexpected devices.
//! SHARP aggregation nodes are never bound (their link is inside the switch).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::{PlanIndex, compatible};
/// The device name a NodeDescription carries (one home for every reader of descriptions).
pub use crate::io::names::host_part as described_name;
use crate::io::{NodeNameMap, is_aggregation_node};
use crate::plan::{CableEnd, DeviceKind, Plan};
use crate::topology::{Fabric, Node, NodeId, NodeKind, PortRef};

/// How a plan device was bound to its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundBy {
    /// The node-name-map names the node's GUID with the device's name.
    NodeNameMap,
    /// The plan records the node's GUID for the device.
    PlanGuid,
    /// The node's description names the device.
    Description,
    /// The cabling from already bound neighbours.
    Cabling,
}

impl BoundBy {
    /// Every kind of evidence, strongest first.
    pub const ALL: [BoundBy; 4] = [
        BoundBy::NodeNameMap,
        BoundBy::PlanGuid,
        BoundBy::Description,
        BoundBy::Cabling,
    ];

    /// Words for summaries.
    pub fn text(self) -> &'static str {
        match self {
            BoundBy::NodeNameMap => "node-name-map",
            BoundBy::PlanGuid => "plan GUID",
            BoundBy::Description => "description",
            BoundBy::Cabling => "cabling",
        }
    }
}

/// Plan devices ↔ fabric nodes, one to one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    node_of: Vec<Option<NodeId>>,
    device_of: Vec<Option<usize>>,
    how: Vec<Option<BoundBy>>,
    /// Remarks on the binding (e.g. bound from the cabling structure alone).
    pub warnings: Vec<String>,
}

impl Binding {
    /// An empty binding for `devices` plan devices and `nodes` fabric nodes.
    pub fn new(devices: usize, nodes: usize) -> Self {
        Self {
            node_of: vec![None; devices],
            device_of: vec![None; nodes],
            how: vec![None; devices],
            warnings: Vec::new(),
        }
    }

    /// The node a plan device is bound to.
    pub fn node(&self, device: usize) -> Option<NodeId> {
        self.node_of.get(device).copied().flatten()
    }

    /// The plan device a node is bound to.
    pub fn device(&self, node: NodeId) -> Option<usize> {
        self.device_of.get(node.index()).copied().flatten()
    }

    /// How a plan device was bound.
    pub fn how(&self, device: usize) -> Option<BoundBy> {
        self.how.get(device).copied().flatten()
    }

    /// Plan devices not bound to any node (not seen).
    pub fn unbound_devices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.node_of.len()).filter(|&d| self.node_of[d].is_none())
    }

    /// Number of devices bound by each kind of evidence, strongest first.
    pub fn counts(&self) -> Vec<(BoundBy, usize)> {
        BoundBy::ALL
            .iter()
            .map(|&b| (b, self.how.iter().filter(|&&h| h == Some(b)).count()))
            .collect()
    }

    /// Binds `device` to `node` unless either is bound already; returns whether it did.
    pub fn bind(&mut self, device: usize, node: NodeId, how: BoundBy) -> bool {
        if self.node_of[device].is_some() || self.device_of[node.index()].is_some() {
            return false;
        }
        self.node_of[device] = Some(node);
        self.device_of[node.index()] = Some(device);
        self.how[device] = Some(how);
        true
    }

    fn bound_count(&self) -> usize {
        self.how.iter().filter(|h| h.is_some()).count()
    }
}

/// Whether a node never takes part in binding (SHARP aggregation nodes).
pub fn is_excluded(node: &Node) -> bool {
    is_aggregation_node(node)
}

/// Binds the plan's devices to the fabric's nodes (see the module documentation).
pub fn bind(plan: &Plan, fabric: &Fabric, names: Option<&NodeNameMap>) -> Binding {
    let ignored = super::findings::ignored_links(fabric);
    bind_with(plan, &PlanIndex::new(plan), fabric, names, &ignored)
}

pub(crate) fn bind_with(
    plan: &Plan,
    index: &PlanIndex,
    fabric: &Fabric,
    names: Option<&NodeNameMap>,
    ignored: &[bool],
) -> Binding {
    let mut binding = Binding::new(plan.devices.len(), fabric.nodes().len());
    let g = Graph {
        plan,
        index,
        fabric,
        ignored,
    };
    let by_name = plan.device_index();
    let usable = |n: &Node| !is_excluded(n);
    // 1. node-name-map.
    if let Some(names) = names {
        for (i, node) in fabric.nodes().iter().enumerate() {
            let Some(&device) = names.get(node.guid).and_then(|name| by_name.get(name)) else {
                continue;
            };
            if usable(node) && compatible(plan.devices[device].kind, node.kind) {
                binding.bind(device, NodeId(i as u32), BoundBy::NodeNameMap);
            }
        }
    }
    // 2. GUIDs the plan records.
    for (device, d) in plan.devices.iter().enumerate() {
        let Some(node) = d.guid.and_then(|g| fabric.node_by_guid(g)) else {
            continue;
        };
        let n = fabric.node(node);
        if usable(n) && compatible(d.kind, n.kind) {
            binding.bind(device, node, BoundBy::PlanGuid);
        }
    }
    // 3. Descriptions: the expected description, then the name the description carries.
    let mut by_description: HashMap<&str, Vec<usize>> = HashMap::new();
    for (device, d) in plan.devices.iter().enumerate() {
        if let Some(desc) = d.description.as_deref() {
            by_description.entry(desc.trim()).or_default().push(device);
        }
    }
    let mut claims: HashMap<usize, Vec<NodeId>> = HashMap::new();
    let mut node_desc_count: HashMap<&str, usize> = HashMap::new();
    for node in fabric.nodes() {
        *node_desc_count.entry(node.description.trim()).or_default() += 1;
    }
    for (i, node) in fabric.nodes().iter().enumerate() {
        let id = NodeId(i as u32);
        if !usable(node) || binding.device(id).is_some() {
            continue;
        }
        let desc = node.description.trim();
        let exact = by_description
            .get(desc)
            .filter(|d| d.len() == 1 && node_desc_count[desc] == 1)
            .map(|d| d[0]);
        let device = exact.or_else(|| device_named(described_name(desc), &by_name));
        if let Some(device) = device
            && binding.node(device).is_none()
            && compatible(plan.devices[device].kind, node.kind)
        {
            claims.entry(device).or_default().push(id);
        }
    }
    let mut claims: Vec<(usize, Vec<NodeId>)> = claims.into_iter().collect();
    claims.sort_unstable();
    for (device, nodes) in claims {
        if let [node] = nodes[..] {
            binding.bind(device, node, BoundBy::Description);
        }
    }
    // 4. Cabling, from the anchors bound so far (or from a structural seed).
    if binding.bound_count() == 0 {
        seed(&g, &mut binding);
    } else {
        g.propagate(&mut binding);
    }
    // 5. Neighbourhoods, then cabling again from what they bound.
    while g.neighbourhoods(&mut binding) > 0 {
        g.propagate(&mut binding);
    }
    binding
}

/// The plan device `name` names: the device of that name, else the longest device name that
/// `name` starts with followed by a separator (`-`, `_`, `.`, `:`, `/`).
fn device_named(name: &str, by_name: &HashMap<&str, usize>) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    if let Some(&d) = by_name.get(name) {
        return Some(d);
    }
    name.char_indices()
        .rev()
        .filter(|&(i, c)| i > 0 && matches!(c, '-' | '_' | '.' | ':' | '/'))
        .find_map(|(i, _)| by_name.get(&name[..i]).copied())
}

/// The plan and the observed graph, for the cabling stages.
struct Graph<'a> {
    plan: &'a Plan,
    index: &'a PlanIndex,
    fabric: &'a Fabric,
    ignored: &'a [bool],
}

/// A vote: score, then node and device (lowest first among equal scores, for determinism).
type Vote = (u32, Reverse<u32>, Reverse<u32>);

/// Accumulated cabling votes: score per (node, device), candidates per node, and a heap of
/// (score, node, device) entries, the latest per pair being current.
#[derive(Default)]
struct Votes {
    scores: HashMap<(u32, u32), u32>,
    candidates: HashMap<u32, Vec<u32>>,
    heap: BinaryHeap<Vote>,
}

impl Votes {
    fn cast(&mut self, votes: Vec<(NodeId, usize, u32)>) {
        for (far, device, weight) in votes {
            let key = (far.0, device as u32);
            let score = self.scores.entry(key).or_insert(0);
            if *score == 0 {
                self.candidates
                    .entry(far.0)
                    .or_default()
                    .push(device as u32);
            }
            *score += weight;
            self.heap
                .push((*score, Reverse(far.0), Reverse(device as u32)));
        }
    }
}

impl Graph<'_> {
    fn usable(&self, node: NodeId) -> bool {
        !is_excluded(self.fabric.node(node))
    }

    /// Cabled ports of `node` with their far ends, without ignored links.
    fn cables(&self, node: NodeId) -> impl Iterator<Item = (u8, PortRef)> + '_ {
        let n = self.fabric.node(node);
        n.ports
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(move |(p, port)| {
                let link = port.link?;
                if self.ignored[link.0 as usize] {
                    return None;
                }
                let here = PortRef {
                    node,
                    port: p as u8,
                };
                Some((p as u8, self.fabric.link(link).other_end(here)))
            })
    }

    /// The votes a bound node casts for its unbound neighbours.
    fn votes_from(&self, binding: &Binding, node: NodeId) -> Vec<(NodeId, usize, u32)> {
        let Some(device) = binding.device(node) else {
            return Vec::new();
        };
        let mut votes = Vec::new();
        for (port, far) in self.cables(node) {
            if binding.device(far.node).is_some() || !self.usable(far.node) {
                continue;
            }
            let Some(planned) = self.index.peer(self.plan, CableEnd { device, port }) else {
                continue;
            };
            if binding.node(planned.device).is_some()
                || !compatible(
                    self.plan.devices[planned.device].kind,
                    self.fabric.node(far.node).kind,
                )
            {
                continue;
            }
            let weight = if planned.port == far.port { 2 } else { 1 };
            votes.push((far.node, planned.device, weight));
        }
        votes
    }

    /// Binds by cabling from every bound node, strongest evidence first.
    fn propagate(&self, binding: &mut Binding) {
        let mut votes = Votes::default();
        for i in 0..self.fabric.nodes().len() {
            votes.cast(self.votes_from(binding, NodeId(i as u32)));
        }
        while let Some((score, Reverse(node), Reverse(device))) = votes.heap.pop() {
            let (node_id, device) = (NodeId(node), device as usize);
            if binding.device(node_id).is_some()
                || binding.node(device).is_some()
                || votes.scores[&(node, device as u32)] != score
            {
                continue;
            }
            // Two equally supported candidates: wait for more evidence.
            let tie = votes.candidates[&node].iter().any(|&other| {
                other as usize != device
                    && binding.node(other as usize).is_none()
                    && votes.scores[&(node, other)] >= score
            });
            if tie {
                continue;
            }
            binding.bind(device, node_id, BoundBy::Cabling);
            votes.cast(self.votes_from(binding, node_id));
        }
    }

    /// Binds nodes whose bound neighbours point at exactly one unbound device of their kind;
    /// returns how many it bound.
    fn neighbourhoods(&self, binding: &mut Binding) -> usize {
        let mut proposals: Vec<(usize, NodeId, usize)> = Vec::new();
        for i in 0..self.fabric.nodes().len() {
            let node = NodeId(i as u32);
            if binding.device(node).is_some() || !self.usable(node) {
                continue;
            }
            let kind = self.fabric.node(node).kind;
            let mut counts: HashMap<usize, usize> = HashMap::new();
            let mut neighbours: Vec<usize> = self
                .cables(node)
                .filter_map(|(_, far)| binding.device(far.node))
                .collect();
            neighbours.sort_unstable();
            neighbours.dedup();
            for d in neighbours {
                let mut seen: Vec<usize> = self
                    .index
                    .planned_ports(self.plan, d)
                    .map(|(_, far)| far.device)
                    .filter(|&e| {
                        binding.node(e).is_none() && compatible(self.plan.devices[e].kind, kind)
                    })
                    .collect();
                seen.sort_unstable();
                seen.dedup();
                for e in seen {
                    *counts.entry(e).or_default() += 1;
                }
            }
            let best = counts.values().copied().max().unwrap_or(0);
            // A host has one neighbour to go by; a switch needs two that agree.
            let enough = if kind == NodeKind::Switch { 2 } else { 1 };
            let mut top = counts.iter().filter(|&(_, &c)| c == best);
            if let (Some((&device, _)), None, true) = (top.next(), top.next(), best >= enough) {
                proposals.push((best, node, device));
            }
        }
        // A device proposed by two nodes with equal support goes to neither.
        proposals.sort_unstable_by_key(|&(score, node, device)| (Reverse(score), device, node));
        let mut bound = 0;
        for (k, &(score, node, device)) in proposals.iter().enumerate() {
            let contested = proposals
                .iter()
                .enumerate()
                .any(|(j, &(s, _, d))| j != k && d == device && s == score);
            if !contested && binding.bind(device, node, BoundBy::Cabling) {
                bound += 1;
            }
        }
        bound
    }

    /// Observed cables whose both ends are bound and that the plan has exactly so.
    fn explained(&self, binding: &Binding) -> usize {
        self.fabric
            .links()
            .iter()
            .enumerate()
            .filter(|&(i, l)| {
                !self.ignored[i]
                    && match (binding.device(l.a.node), binding.device(l.b.node)) {
                        (Some(a), Some(b)) => {
                            self.index.peer(
                                self.plan,
                                CableEnd {
                                    device: a,
                                    port: l.a.port,
                                },
                            ) == Some(CableEnd {
                                device: b,
                                port: l.b.port,
                            })
                        }
                        _ => false,
                    }
            })
            .count()
    }
}

/// Trials after a good one, looking for an equally good one.
const SYMMETRY_TRIALS: usize = 32;

/// Nothing identified by name or GUID: try the best-connected switch as every plan switch (best
/// matching cable counts first) and keep the trial that explains the most observed cables.
fn seed(g: &Graph<'_>, binding: &mut Binding) {
    let degree = |n: NodeId| g.cables(n).count();
    let Some(start) = g
        .fabric
        .switches()
        .filter(|&n| g.usable(n))
        .max_by_key(|&n| (degree(n), Reverse(n)))
    else {
        return;
    };
    let observed = g.ignored.iter().filter(|&&i| !i).count();
    let mut candidates: Vec<usize> = (0..g.plan.devices.len())
        .filter(|&d| g.plan.devices[d].kind == DeviceKind::Switch)
        .collect();
    let planned = |d: usize| g.index.planned_ports(g.plan, d).count();
    candidates.sort_by_key(|&d| (planned(d).abs_diff(degree(start)), d));
    let mut best: Option<(usize, Binding, usize)> = None;
    let mut ties = 0;
    // Once a trial explains nine cables in ten, a few more look for another that does as well
    // (a symmetry of the plan: then names are only known up to it).
    let mut more_trials: Option<usize> = None;
    for device in candidates {
        if more_trials == Some(0) {
            break;
        }
        more_trials = more_trials.map(|n| n - 1);
        let mut trial = binding.clone();
        trial.bind(device, start, BoundBy::Cabling);
        g.propagate(&mut trial);
        let score = g.explained(&trial);
        match &best {
            Some((s, _, _)) if score < *s => {}
            Some((s, _, _)) if score == *s => ties += 1,
            _ => {
                best = Some((score, trial, device));
                ties = 0;
            }
        }
        if more_trials.is_none() && score * 10 >= observed * 9 && score > 0 {
            more_trials = Some(SYMMETRY_TRIALS);
        }
    }
    if let Some((score, trial, device)) = best {
        *binding = trial;
        let node = g.fabric.node(start);
        binding.warnings.push(format!(
            "no device could be identified by node-name-map, GUID or description: bound from the \
             cabling alone, taking {} ({}) for {}; {score} of {observed} cables explained{}",
            node.name,
            node.guid,
            g.plan.devices[device].name,
            if ties > 0 {
                "; other bindings explain as many cables (the plan has symmetries): names may be \
                 permuted, give a node-name-map or name a few devices"
            } else {
                ""
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_name_devices_by_name_or_prefix() {
        assert_eq!(
            described_name("MF0;sw0-1-2-R02U38:MSB7800/U1"),
            "sw0-1-2-R02U38"
        );
        assert_eq!(described_name("sfn010 mlx5_0"), "sfn010");
        assert_eq!(described_name("  MF0;gw1:IBR/U1/RT"), "gw1");
        assert_eq!(
            described_name("MT4129 ConnectX7   Mellanox Technologies"),
            "MT4129"
        );
        let names: HashMap<&str, usize> = [("sw0-1-2", 0), ("sw0-1-20", 1), ("sfn010", 2)]
            .into_iter()
            .collect();
        assert_eq!(device_named("sw0-1-2-R02U38", &names), Some(0));
        assert_eq!(device_named("sw0-1-20-R02U37", &names), Some(1));
        assert_eq!(device_named("sfn010.cluster", &names), Some(2));
        assert_eq!(device_named("sw0-1-200", &names), None);
        assert_eq!(device_named("Quantum", &names), None);
        assert_eq!(device_named("", &names), None);
    }
}
