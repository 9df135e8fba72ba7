//! The congestion checker: every flow walked through the forwarding tables, flows counted per
//! directed link, per phase.

use serde::Serialize;

use super::Schedule;
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, NodeKind, PortRef};

/// Longest walk through the switches before a route counts as a loop.
const MAX_HOPS: usize = 64;

/// Why a schedule could not be checked on a routing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// A rank's server is not in the fabric (or has no cabled port or no LID).
    #[error("rank {rank}: {problem}")]
    Rank {
        /// The rank.
        rank: usize,
        /// What is wrong.
        problem: String,
    },
    /// A flow does not reach its destination through the tables.
    #[error("phase {phase}: {source_name} → {destination} (LID {lid}): {problem}")]
    Route {
        /// The phase label.
        phase: String,
        /// Source server.
        source_name: String,
        /// Destination server.
        destination: String,
        /// The destination LID used.
        lid: u16,
        /// What went wrong.
        problem: String,
    },
}

/// A directed link with its flow count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkLoad {
    /// `node[port] -> node[port]`.
    pub link: String,
    /// Flows on it.
    pub flows: u32,
}

/// One phase's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseReport {
    /// The phase label.
    pub label: String,
    /// Mean over its flows of 1 / flows on the flow's most loaded link.
    pub ratio: f64,
    /// Flows on its most loaded link (0 when no flow crosses a link).
    pub max_link_flows: u32,
}

/// The checker's verdict on a schedule and a routing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CongestionReport {
    /// The schedule's name.
    pub schedule: String,
    /// Ranks (servers).
    pub ranks: usize,
    /// Phases.
    pub phases: usize,
    /// The paper's throughput ratio: 1 / (flows on the most loaded link of the path), averaged
    /// over paths and phases; 1.0 = congestion-free.
    pub throughput_ratio: f64,
    /// Whether no directed link ever carries two flows of one phase.
    pub congestion_free: bool,
    /// Flows on the most loaded link over all phases.
    pub max_link_flows: u32,
    /// The phase with the lowest ratio (the first of them).
    pub worst_phase: Option<PhaseReport>,
    /// The most loaded link of the worst phase.
    pub worst_link: Option<LinkLoad>,
    /// Every phase, in order.
    pub per_phase: Vec<PhaseReport>,
}

/// Rank endpoints and directed-link numbering.
struct Walker<'a> {
    fabric: &'a Fabric,
    tables: &'a ForwardingTables,
    /// Out port of each rank's server.
    ports: Vec<PortRef>,
    /// Base LID of each rank's server port.
    base: Vec<u16>,
    /// First directed-link id of each node (id = base + port).
    link_base: Vec<u32>,
}

impl<'a> Walker<'a> {
    fn new(
        fabric: &'a Fabric,
        lids: &LidTable,
        tables: &'a ForwardingTables,
        schedule: &Schedule,
    ) -> Result<Self, CheckError> {
        let mut ports = Vec::with_capacity(schedule.ranks.len());
        let mut base = Vec::with_capacity(schedule.ranks.len());
        for (rank, name) in schedule.ranks.iter().enumerate() {
            let fail = |problem: String| CheckError::Rank { rank, problem };
            let node = fabric
                .node_by_name(name)
                .ok_or_else(|| fail(format!("no node {name:?} in {}", fabric.name)))?;
            let n = fabric.node(node);
            if n.kind == NodeKind::Switch {
                return Err(fail(format!("{name} is a switch")));
            }
            let port = (1..=n.num_ports())
                .find(|&p| fabric.peer(PortRef { node, port: p }).is_some())
                .ok_or_else(|| fail(format!("{name} has no cabled port")))?;
            let lid = n.ports[usize::from(port)].lid;
            if lid == 0 {
                return Err(fail(format!("{name} has no LID")));
            }
            let owner = lids.owner(lid);
            if owner.is_none_or(|o| o.node != node || o.offset != 0) {
                return Err(fail(format!("LID {lid} of {name} is not its base LID")));
            }
            ports.push(PortRef { node, port });
            base.push(lid);
        }
        let mut link_base = Vec::with_capacity(fabric.nodes().len());
        let mut next = 0u32;
        for node in fabric.nodes() {
            link_base.push(next);
            next += u32::from(node.num_ports()) + 1;
        }
        Ok(Self {
            fabric,
            tables,
            ports,
            base,
            link_base,
        })
    }

    fn link_id(&self, out: PortRef) -> u32 {
        self.link_base[out.node.index()] + u32::from(out.port)
    }

    fn link_name(&self, id: u32) -> String {
        let node = self.link_base.partition_point(|&b| b <= id) - 1;
        let out = PortRef {
            node: crate::topology::NodeId(node as u32),
            port: (id - self.link_base[node]) as u8,
        };
        match self.fabric.peer(out) {
            Some(peer) => format!(
                "{} -> {}",
                self.fabric.port_name(out),
                self.fabric.port_name(peer)
            ),
            None => self.fabric.port_name(out),
        }
    }

    /// Appends the directed links of the flow src → dst (LID offset `offset`) to `path`.
    fn walk(
        &self,
        schedule: &Schedule,
        phase: usize,
        src: usize,
        dst: usize,
        offset: u8,
        path: &mut Vec<u32>,
    ) -> Result<(), CheckError> {
        if src == dst {
            return Ok(());
        }
        let lid = self.base[dst] + u16::from(offset);
        let fail = |problem: String| CheckError::Route {
            phase: schedule.phases[phase].label.clone(),
            source_name: schedule.ranks[src].clone(),
            destination: schedule.ranks[dst].clone(),
            lid,
            problem,
        };
        let target = self.ports[dst];
        let mut out = self.ports[src];
        for _ in 0..MAX_HOPS {
            path.push(self.link_id(out));
            let next = self
                .fabric
                .peer(out)
                .ok_or_else(|| fail(format!("dead end at {}", self.fabric.port_name(out))))?;
            if next == target {
                return Ok(());
            }
            if !self.fabric.node(next.node).is_switch() {
                return Err(fail(format!(
                    "delivered to {}",
                    self.fabric.port_name(next)
                )));
            }
            let port = self
                .tables
                .port(next.node, lid)
                .ok_or_else(|| fail(format!("no entry at {}", self.fabric.node(next.node).name)))?;
            if port == 0 {
                return Err(fail(format!(
                    "delivered to the management port of {}",
                    self.fabric.node(next.node).name
                )));
            }
            out = PortRef {
                node: next.node,
                port,
            };
        }
        Err(fail("loop".to_string()))
    }
}

/// Scratch for one phase: the flows' paths and the link counters.
struct PhaseLoads {
    links: Vec<u32>,
    ends: Vec<usize>,
    counts: Vec<u32>,
}

impl PhaseLoads {
    fn fill(
        &mut self,
        walker: &Walker<'_>,
        schedule: &Schedule,
        p: usize,
    ) -> Result<(), CheckError> {
        for &l in &self.links {
            self.counts[l as usize] = 0;
        }
        self.links.clear();
        self.ends.clear();
        let phase = &schedule.phases[p];
        for (src, &dst) in phase.destination.iter().enumerate() {
            walker.walk(
                schedule,
                p,
                src,
                dst as usize,
                phase.offset(src),
                &mut self.links,
            )?;
            self.ends.push(self.links.len());
        }
        for &l in &self.links {
            self.counts[l as usize] += 1;
        }
        Ok(())
    }
}

/// The flows on every loaded directed link in phase `p` (link name, flows), busiest first.
///
/// # Errors
/// A rank that is not a server of the fabric, or a flow the tables do not deliver.
pub fn phase_link_loads(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    schedule: &Schedule,
    p: usize,
) -> Result<Vec<LinkLoad>, CheckError> {
    let walker = Walker::new(fabric, lids, tables, schedule)?;
    let mut loads = PhaseLoads {
        links: Vec::new(),
        ends: Vec::new(),
        counts: vec![0; *walker.link_base.last().unwrap_or(&0) as usize + 256],
    };
    loads.fill(&walker, schedule, p)?;
    let mut ids = loads.links.clone();
    ids.sort_unstable();
    ids.dedup();
    let mut out: Vec<LinkLoad> = ids
        .into_iter()
        .map(|id| LinkLoad {
            link: walker.link_name(id),
            flows: loads.counts[id as usize],
        })
        .collect();
    out.sort_by(|a, b| b.flows.cmp(&a.flows).then_with(|| a.link.cmp(&b.link)));
    Ok(out)
}

/// Checks `schedule` on the routing in `tables`: every flow of every phase is walked from its
/// server through the tables (to the destination's base LID + the flow's LID offset) and
/// counted on every directed link it crosses (server uplink, switch links, server downlink).
/// A flow to itself crosses no link and counts as ratio 1.
///
/// # Errors
/// A rank that is not a server of the fabric, or a flow the tables do not deliver.
pub fn check(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    schedule: &Schedule,
) -> Result<CongestionReport, CheckError> {
    let walker = Walker::new(fabric, lids, tables, schedule)?;
    let mut loads = PhaseLoads {
        links: Vec::new(),
        ends: Vec::new(),
        counts: vec![0; *walker.link_base.last().unwrap_or(&0) as usize + 256],
    };
    let mut per_phase = Vec::with_capacity(schedule.phases.len());
    let mut worst: Option<(usize, LinkLoad)> = None;
    let mut total = 0.0;
    let mut max_all = 0;
    for p in 0..schedule.phases.len() {
        loads.fill(&walker, schedule, p)?;
        let mut sum = 0.0;
        let mut start = 0;
        for &end in &loads.ends {
            let max = loads.links[start..end]
                .iter()
                .map(|&l| loads.counts[l as usize])
                .max()
                .unwrap_or(1);
            sum += 1.0 / f64::from(max.max(1));
            start = end;
        }
        let flows = loads.ends.len().max(1);
        let ratio = sum / flows as f64;
        let (busiest, max_link_flows) = loads
            .links
            .iter()
            .map(|&l| (l, loads.counts[l as usize]))
            .max_by_key(|&(l, c)| (c, std::cmp::Reverse(l)))
            .unwrap_or((0, 0));
        max_all = max_all.max(max_link_flows);
        total += ratio;
        let is_worse = match &worst {
            None => true,
            Some((w, _)) => ratio < per_phase_ratio(&per_phase, *w),
        };
        if is_worse && max_link_flows > 0 {
            worst = Some((
                p,
                LinkLoad {
                    link: walker.link_name(busiest),
                    flows: max_link_flows,
                },
            ));
        }
        per_phase.push(PhaseReport {
            label: schedule.phases[p].label.clone(),
            ratio,
            max_link_flows,
        });
    }
    let phases = per_phase.len();
    let (worst_phase, worst_link) = match worst {
        Some((p, link)) => (Some(per_phase[p].clone()), Some(link)),
        None => (None, None),
    };
    Ok(CongestionReport {
        schedule: schedule.name.clone(),
        ranks: schedule.ranks.len(),
        phases,
        throughput_ratio: if phases == 0 {
            1.0
        } else {
            total / phases as f64
        },
        congestion_free: max_all <= 1,
        max_link_flows: max_all,
        worst_phase,
        worst_link,
        per_phase,
    })
}

fn per_phase_ratio(per_phase: &[PhaseReport], p: usize) -> f64 {
    per_phase[p].ratio
}
