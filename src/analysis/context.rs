//! The fabric seen by the analyser: switches in dense order, endpoint ports, directed
//! switch-to-switch cables, and the walk of one destination LID through the forwarding tables.

use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, NodeId, NodeKind, PortRef, SwitchGraph};

use super::{Failure, FailureCounts, FailureKind};

/// "None" in the dense index vectors.
pub(crate) const NONE: u32 = u32::MAX;
/// Hop count of a walk that does not reach its destination.
pub(crate) const FAILED: u32 = u32::MAX;

/// A CA or router port with a LID, cabled to a switch: a source and destination of traffic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint {
    /// The port.
    pub port: PortRef,
    /// Dense index of the switch it is cabled to.
    pub switch: u32,
    /// Base LID.
    pub base_lid: u16,
    /// 2^LMC: how many LIDs (layers) it answers to.
    pub lids: u16,
}

/// One direction of a switch-to-switch cable: leaving `from`, arriving at `to`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DirectedCable {
    /// Where the packet leaves.
    pub from: PortRef,
    /// Where it arrives.
    pub to: PortRef,
    /// Dense index of the switch it arrives at.
    pub to_switch: u32,
    /// Whether both ends are on one switch (a loopback cable, never part of a valid route).
    pub loopback: bool,
}

/// Everything the metrics share.
pub(crate) struct Context<'a> {
    pub fabric: &'a Fabric,
    pub lids: &'a LidTable,
    pub tables: &'a ForwardingTables,
    pub graph: SwitchGraph,
    /// Dense switch index of each fabric node ([`NONE`] for CAs and routers).
    pub dense: Vec<u32>,
    /// Endpoints, grouped by switch (ascending dense index), then in port order.
    pub endpoints: Vec<Endpoint>,
    /// Per dense switch, the range of its endpoints in [`Self::endpoints`].
    pub endpoint_range: Vec<std::ops::Range<usize>>,
    /// Directed switch-to-switch cables.
    pub cables: Vec<DirectedCable>,
    /// Per dense switch, the directed cable leaving each port ([`NONE`] if not to a switch).
    pub cable_of: Vec<Vec<u32>>,
    /// The most LIDs any endpoint has (2^LMC): the number of layers.
    pub layers: usize,
    /// CA and router ports with LIDs that are not cabled to a switch (no switch can reach them).
    pub unattached_ports: usize,
}

impl<'a> Context<'a> {
    pub fn new(fabric: &'a Fabric, lids: &'a LidTable, tables: &'a ForwardingTables) -> Self {
        let graph = SwitchGraph::new(fabric);
        let mut dense = vec![NONE; fabric.nodes().len()];
        for i in 0..graph.len() {
            dense[graph.node(i).index()] = i as u32;
        }
        let mut cables = Vec::new();
        let mut cable_of = Vec::with_capacity(graph.len());
        for i in 0..graph.len() {
            let node = graph.node(i);
            let mut ports = vec![NONE; usize::from(fabric.node(node).num_ports()) + 1];
            for (p, peer) in fabric.neighbours(node) {
                let to_switch = dense[peer.node.index()];
                if to_switch != NONE {
                    ports[usize::from(p)] = cables.len() as u32;
                    cables.push(DirectedCable {
                        from: PortRef { node, port: p },
                        to: peer,
                        to_switch,
                        loopback: peer.node == node,
                    });
                }
            }
            cable_of.push(ports);
        }
        let mut endpoints = Vec::new();
        let mut unattached_ports = 0;
        for (i, node) in fabric.nodes().iter().enumerate() {
            if node.kind == NodeKind::Switch {
                continue;
            }
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                if port.link.is_none() || port.lid == 0 {
                    continue;
                }
                let end = PortRef {
                    node: NodeId(i as u32),
                    port: p as u8,
                };
                let switch = fabric
                    .peer(end)
                    .map_or(NONE, |peer| dense[peer.node.index()]);
                if switch == NONE {
                    unattached_ports += 1;
                    continue;
                }
                // Only the LIDs the LID table gives this port (it drops LIDs beyond the unicast
                // range).
                let lids_owned = (0..1u32 << port.lmc.min(7))
                    .take_while(|&k| {
                        u16::try_from(u32::from(port.lid) + k)
                            .ok()
                            .and_then(|l| lids.owner(l))
                            .is_some_and(|o| o.node == end.node && o.port == end.port)
                    })
                    .count() as u16;
                if lids_owned == 0 {
                    continue;
                }
                endpoints.push(Endpoint {
                    port: end,
                    switch,
                    base_lid: port.lid,
                    lids: lids_owned,
                });
            }
        }
        endpoints.sort_by_key(|e| (e.switch, e.port));
        let mut endpoint_range = vec![0..0; graph.len()];
        let mut start = 0;
        for chunk in endpoints.chunk_by(|a, b| a.switch == b.switch) {
            endpoint_range[chunk[0].switch as usize] = start..start + chunk.len();
            start += chunk.len();
        }
        let layers = endpoints
            .iter()
            .map(|e| usize::from(e.lids))
            .max()
            .unwrap_or(0);
        Self {
            fabric,
            lids,
            tables,
            graph,
            dense,
            endpoints,
            endpoint_range,
            cables,
            cable_of,
            layers,
            unattached_ports,
        }
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.graph.len()
    }

    /// Endpoints attached to dense switch `s`.
    pub fn endpoints_at(&self, s: usize) -> &[Endpoint] {
        &self.endpoints[self.endpoint_range[s].clone()]
    }

    /// Name of dense switch `s`.
    pub fn switch_name(&self, s: usize) -> &str {
        &self.fabric.node(self.graph.node(s)).name
    }

    /// `sw[3] -> sw2[1]` for a directed cable.
    pub fn cable_name(&self, c: u32) -> String {
        let c = self.cables[c as usize];
        format!(
            "{} -> {}",
            self.fabric.port_name(c.from),
            self.fabric.port_name(c.to)
        )
    }

    /// What the table of dense switch `s` does with `lid`.
    fn step(&self, s: usize, lid: u16, target: Target) -> Step {
        let node = self.graph.node(s);
        let Some(port) = self.tables.port(node, lid) else {
            return Step::Fail(FailureKind::NoEntry, None, None);
        };
        if port == 0 {
            return if target == Target::Switch(s as u32) {
                Step::Reached
            } else {
                Step::Fail(
                    FailureKind::WrongDestination,
                    Some(0),
                    Some(PortRef { node, port: 0 }),
                )
            };
        }
        let Some(peer) = self.fabric.peer(PortRef { node, port }) else {
            return Step::Fail(FailureKind::DeadEnd, Some(port), None);
        };
        let cable = self.cable_of[s]
            .get(usize::from(port))
            .copied()
            .unwrap_or(NONE);
        if cable != NONE {
            return Step::Next {
                cable,
                to: self.cables[cable as usize].to_switch,
            };
        }
        if target == Target::Port(peer) {
            Step::Reached
        } else {
            Step::Fail(FailureKind::WrongDestination, Some(port), Some(peer))
        }
    }
}

/// Where a destination LID must arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A switch's management port 0 (dense index).
    Switch(u32),
    /// A CA or router port, through its cable.
    Port(PortRef),
}

enum Step {
    Next { cable: u32, to: u32 },
    Reached,
    Fail(FailureKind, Option<u8>, Option<PortRef>),
}

/// Failures found so far: counted in full, listed up to a cap.
pub(crate) struct FailureLog {
    pub listed: Vec<Failure>,
    pub cap: usize,
    pub counts: FailureCounts,
}

/// Failure ids at or above this are not listed; the low bits hold the kind.
const UNLISTED: u32 = 0x8000_0000;

impl FailureLog {
    pub fn new(cap: usize) -> Self {
        Self {
            listed: Vec::new(),
            cap,
            counts: FailureCounts::default(),
        }
    }

    fn record(
        &mut self,
        kind: FailureKind,
        lid: u16,
        switch: &str,
        port: Option<u8>,
        detail: impl FnOnce() -> String,
    ) -> u32 {
        self.counts.get_mut(kind).failures += 1;
        if self.listed.len() < self.cap {
            self.listed.push(Failure {
                kind,
                lid,
                switch: switch.to_string(),
                port,
                detail: detail(),
                entries: 0,
            });
            (self.listed.len() - 1) as u32
        } else {
            UNLISTED | kind as u32
        }
    }

    /// One more (switch, LID) entry ends in failure `id`.
    fn affect(&mut self, id: u32) {
        let kind = if id >= UNLISTED {
            FailureKind::from_index(id & !UNLISTED)
        } else {
            let f = &mut self.listed[id as usize];
            f.entries += 1;
            f.kind
        };
        self.counts.get_mut(kind).entries += 1;
    }
}

/// Where one destination LID leads from every switch.
pub(crate) struct LidRoutes {
    /// Inter-switch hops from each switch to the destination, [`FAILED`] if it is not reached.
    pub hops: Vec<u32>,
    /// The directed cable each switch sends the LID out on ([`NONE`] at the last switch and on
    /// failure).
    pub cable: Vec<u32>,
    state: Vec<u8>,
    failure: Vec<u32>,
    stack: Vec<u32>,
}

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const DONE: u8 = 2;

impl LidRoutes {
    pub fn new(switches: usize) -> Self {
        Self {
            hops: vec![FAILED; switches],
            cable: vec![NONE; switches],
            state: vec![UNKNOWN; switches],
            failure: vec![NONE; switches],
            stack: Vec::new(),
        }
    }

    /// Walks `lid` from every switch, recording each failure once (at the switch where it
    /// happens) and counting the entries that end in it. Returns how many switches reach it.
    ///
    /// Linear in the number of switches: every switch is stepped once (walks that join an
    /// already resolved switch stop there).
    pub fn resolve(
        &mut self,
        ctx: &Context<'_>,
        lid: u16,
        target: Target,
        log: &mut FailureLog,
    ) -> usize {
        let n = ctx.switches();
        self.state.fill(UNKNOWN);
        self.cable.fill(NONE);
        let mut reached = 0;
        for s in 0..n {
            if self.state[s] != UNKNOWN {
                continue;
            }
            self.stack.clear();
            let mut cur = s;
            let (mut hops, failure);
            loop {
                match self.state[cur] {
                    DONE => {
                        (hops, failure) = (self.hops[cur], self.failure[cur]);
                        break;
                    }
                    VISITING => {
                        let start = self.stack.iter().position(|&v| v as usize == cur);
                        let cycle = &self.stack[start.unwrap_or(0)..];
                        let id =
                            log.record(FailureKind::Loop, lid, ctx.switch_name(cur), None, || {
                                let mut names: Vec<&str> =
                                    cycle.iter().map(|&v| ctx.switch_name(v as usize)).collect();
                                names.push(ctx.switch_name(cur));
                                format!("loop {}", names.join(" -> "))
                            });
                        (hops, failure) = (FAILED, id);
                        break;
                    }
                    _ => {}
                }
                match ctx.step(cur, lid, target) {
                    Step::Next { cable, to } => {
                        self.state[cur] = VISITING;
                        self.stack.push(cur as u32);
                        self.cable[cur] = cable;
                        cur = to as usize;
                    }
                    Step::Reached => {
                        (self.state[cur], self.hops[cur], self.failure[cur]) = (DONE, 0, NONE);
                        reached += 1;
                        (hops, failure) = (0, NONE);
                        break;
                    }
                    Step::Fail(kind, port, arrived) => {
                        let id = log.record(kind, lid, ctx.switch_name(cur), port, || {
                            failure_detail(ctx, kind, lid, cur, port, arrived)
                        });
                        log.affect(id);
                        (self.state[cur], self.hops[cur], self.failure[cur]) = (DONE, FAILED, id);
                        (hops, failure) = (FAILED, id);
                        break;
                    }
                }
            }
            while let Some(v) = self.stack.pop() {
                let v = v as usize;
                if hops != FAILED {
                    hops += 1;
                    reached += 1;
                } else {
                    log.affect(failure);
                }
                (self.state[v], self.hops[v], self.failure[v]) = (DONE, hops, failure);
            }
        }
        reached
    }

    /// The directed cables from dense switch `s` to the destination (empty if `s` is the last
    /// switch; only meaningful when `hops[s] != FAILED`).
    pub fn path<'c>(&'c self, ctx: &'c Context<'_>, s: usize) -> impl Iterator<Item = u32> + 'c {
        let mut cur = s;
        std::iter::from_fn(move || {
            let c = self.cable[cur];
            (c != NONE).then(|| {
                cur = ctx.cables[c as usize].to_switch as usize;
                c
            })
        })
    }
}

fn failure_detail(
    ctx: &Context<'_>,
    kind: FailureKind,
    lid: u16,
    s: usize,
    port: Option<u8>,
    arrived: Option<PortRef>,
) -> String {
    let fabric = ctx.fabric;
    let owner = ctx.lids.owner(lid).map_or_else(
        || "nobody".to_string(),
        |o| {
            fabric.port_name(PortRef {
                node: o.node,
                port: o.port,
            })
        },
    );
    let here = ctx.switch_name(s);
    match kind {
        FailureKind::NoEntry => format!("{here} has no entry for LID {lid} (of {owner})"),
        FailureKind::DeadEnd => format!(
            "{here} sends LID {lid} (of {owner}) to port {} without a cable",
            port.unwrap_or(0)
        ),
        FailureKind::WrongDestination => format!(
            "{here} delivers LID {lid} to {}, but it belongs to {owner}",
            arrived.map_or_else(|| "?".into(), |a| fabric.port_name(a))
        ),
        FailureKind::Loop => format!("loop at {here} for LID {lid}"),
    }
}
