//! The fabric seen by the analyser: the walk index of the fabric ([`Network`]), its switch
//! graph for shortest distances, and the failures the walks through the tables find.

use crate::routing::walk::{Broken, BrokenKind, Dest, DestWalk, Network};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{PortRef, SwitchGraph};

use super::{Failure, FailureCounts};

/// Everything the metrics share.
pub(crate) struct Context<'a> {
    /// Switches, links, cables and endpoints.
    pub net: Network<'a>,
    pub lids: &'a LidTable,
    pub tables: &'a ForwardingTables,
    /// The switch graph, for shortest distances.
    pub graph: SwitchGraph,
    /// The most LIDs any endpoint has (2^LMC): the number of layers.
    pub layers: usize,
}

impl<'a> Context<'a> {
    pub fn new(
        fabric: &'a crate::topology::Fabric,
        lids: &'a LidTable,
        tables: &'a ForwardingTables,
    ) -> Self {
        let net = Network::new(fabric, lids);
        let layers = net
            .endpoints
            .iter()
            .map(|e| usize::from(e.lids))
            .max()
            .unwrap_or(0);
        Self {
            net,
            lids,
            tables,
            graph: SwitchGraph::new(fabric),
            layers,
        }
    }

    /// Number of switches.
    pub fn switches(&self) -> usize {
        self.net.len()
    }

    /// Endpoints attached to dense switch `s`.
    pub fn endpoints_at(&self, s: usize) -> &[crate::routing::walk::Endpoint] {
        self.net.endpoints_at(s)
    }

    /// Name of dense switch `s`.
    pub fn switch_name(&self, s: usize) -> &str {
        self.net.switch_name(s)
    }

    /// `sw[3] -> sw2[1]` for cable `c` (a dense cable number).
    pub fn cable_name(&self, c: u32) -> String {
        self.net.link_name(self.net.cables[c as usize])
    }

    /// Whether cable `c` has both ends on one switch.
    pub fn is_loopback(&self, c: usize) -> bool {
        self.net.links[self.net.cables[c] as usize].is_loopback()
    }
}

/// Walks `dest` from every switch into `walk`, recording each failure once in `log` (at the
/// switch where it happens) and counting the entries that end in it. Returns how many
/// switches reach the destination.
pub(crate) fn resolve(
    ctx: &Context<'_>,
    walk: &mut DestWalk,
    dest: &Dest,
    log: &mut FailureLog,
) -> usize {
    let reached = walk.walk(&ctx.net, ctx.tables, dest, |b| log.record(ctx, b));
    for s in (0..ctx.switches()).filter(|&s| !walk.reaches(s)) {
        log.affect(walk.failure(s));
    }
    reached
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

    /// Counts a failure and lists it while there is room; returns its id.
    fn record(&mut self, ctx: &Context<'_>, b: &Broken<'_>) -> u32 {
        self.counts.get_mut(b.kind).failures += 1;
        if self.listed.len() < self.cap {
            self.listed.push(Failure {
                kind: b.kind,
                lid: b.lid,
                switch: ctx.switch_name(b.switch as usize).to_string(),
                port: b.port,
                detail: failure_detail(ctx, b),
                entries: 0,
            });
            (self.listed.len() - 1) as u32
        } else {
            UNLISTED | b.kind as u32
        }
    }

    /// One more (switch, LID) entry ends in failure `id`.
    fn affect(&mut self, id: u32) {
        let kind = if id >= UNLISTED {
            BrokenKind::ALL[(id & !UNLISTED) as usize]
        } else {
            let f = &mut self.listed[id as usize];
            f.entries += 1;
            f.kind
        };
        self.counts.get_mut(kind).entries += 1;
    }
}

/// A sentence for the admin about failure `b`.
fn failure_detail(ctx: &Context<'_>, b: &Broken<'_>) -> String {
    let fabric = ctx.net.fabric;
    let lid = b.lid;
    let owner = ctx.lids.owner(lid).map_or_else(
        || "nobody".to_string(),
        |o| {
            fabric.port_name(PortRef {
                node: o.node,
                port: o.port,
            })
        },
    );
    let here = ctx.switch_name(b.switch as usize);
    match b.kind {
        BrokenKind::NoEntry => format!("{here} has no entry for LID {lid} (of {owner})"),
        BrokenKind::DeadEnd => format!(
            "{here} sends LID {lid} (of {owner}) to port {} without a cable",
            b.port.unwrap_or(0)
        ),
        BrokenKind::WrongDestination => format!(
            "{here} delivers LID {lid} to {}, but it belongs to {owner}",
            b.arrived
                .map_or_else(|| "?".into(), |a| fabric.port_name(a))
        ),
        BrokenKind::Loop => {
            let mut names: Vec<&str> = b
                .cycle
                .iter()
                .map(|&v| ctx.switch_name(v as usize))
                .collect();
            names.push(here);
            format!("loop {}", names.join(" -> "))
        }
    }
}
