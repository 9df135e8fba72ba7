//! A routing session: what a subnet manager's routing engine does at every sweep, without the
//! subnet manager. From a request (the fabric, the settings, whether the admin asked for a
//! full routing) to a [`Routed`] outcome (every switch's entries, the deadlock scheme's
//! answers, the report lines), deciding what the earlier routings allow:
//!
//! * **reuse** — the subnet and the settings are those of the last routing, or of the last
//!   routing made in full (the lost cables plugged back): its tables are written again;
//! * **repair** — the subnet lost switches, cables or hosts since the last (then the last full)
//!   routing: every route that did not cross a loss is kept; failing that, it also gained
//!   some: the new switches and cables are routed in without changing the other routes;
//! * **full routing** — otherwise, or when the admin asked for it (reoptimise).
//!
//! Every request that changed what the session keeps is recorded in its
//! [`journal`](Session::journal): the request of the last full routing and the repairs after it. A
//! subnet manager that stores the journal and, after a restart or on a standby, settles the
//! same requests again in a fresh session gets the same routings back (routing is
//! deterministic), so an unchanged subnet keeps its tables and cables plugged back get the full
//! routing's tables again.
//!
//! The files import downwards only: [`settings`] (the deadlock settings a subnet allows) and
//! [`answers`] (path SLs, SL-to-VL rows and the multicast basis of a routing) below
//! [`routed`] (the outcome and its report), below [`pipeline`] (the one dispatch of a full
//! routing and the repair), below this file (the decisions). [`sweep_record`] (one pass as a
//! line of the sweep log) builds on [`routed`], and [`metrics`] (the sweep log as Prometheus
//! metrics) on it. The OpenSM plugin calls
//! [`Session::settle`] from its routing callback; `ibfabric route` calls [`pipeline::layout`].

pub mod answers;
pub mod metrics;
pub mod pipeline;
pub mod routed;
pub mod settings;
pub mod sweep_record;
pub mod transition;

use std::sync::Arc;

pub use answers::{McastBasis, QosAnswers};
pub use pipeline::{Layout, layout, repair, route};
pub use routed::{Entry, Repair, RepairBase, RouteError, Routed, prefix_balance_line};
pub use settings::{DeadlockSettings, Wanted, data_vls};
pub use sweep_record::{Outcome, PassFigures, PassKind, SweepRecord};

use crate::Fabric;
use crate::routing::RoutingConfig;

/// One routing pass asked of a [`Session`].
#[derive(Debug, Clone)]
pub struct Request<N, S> {
    /// The fabric to route, its ports carrying their LIDs.
    pub fabric: Fabric,
    /// What the fabric was read from, compared to decide reuse (the plugin: the subnet's
    /// records in canonical order, which also carry what the fabric leaves out, such as the
    /// ports' VL capabilities).
    pub subnet: N,
    /// Whatever else the routing depends on, compared to decide reuse and repair (the plugin:
    /// its configuration and the LMC): a routing made with other settings is never kept.
    pub settings: S,
    /// The routing parameters.
    pub routing: RoutingConfig,
    /// The deadlock scheme, VLs and shortage policy.
    pub deadlock: DeadlockSettings,
    /// Route in full whatever the earlier routings (the admin asked for it).
    pub reoptimise: bool,
}

/// What a [`Session`] decided for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The subnet and settings of the last routing, or of the last full one: its tables again.
    Reused,
    /// An earlier routing repaired for losses (and gains).
    Repaired,
    /// Routed in full: nothing earlier could be reused or repaired.
    Routed,
    /// Routed in full because the request said so.
    Reoptimised,
}

/// The outcome of a request: the routing to write and how it was reached.
#[derive(Debug, Clone)]
pub struct Settled {
    /// The routing to write (the very one kept, when reused).
    pub routed: Arc<Routed>,
    /// How it was reached.
    pub decision: Decision,
}

/// One request that changed what a [`Session`] keeps, without its fabric (which the subnet
/// stands for): settled again in order in a fresh session, the steps of
/// [`Session::journal`] rebuild its routings.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<N, S> {
    /// What the fabric was read from.
    pub subnet: N,
    /// The request's other settings.
    pub settings: S,
    /// The routing parameters.
    pub routing: RoutingConfig,
    /// The deadlock settings.
    pub deadlock: DeadlockSettings,
    /// Whether the request asked for a full routing.
    pub reoptimise: bool,
}

impl<N: Clone, S: Clone> Step<N, S> {
    fn of(request: &Request<N, S>) -> Self {
        Self {
            subnet: request.subnet.clone(),
            settings: request.settings.clone(),
            routing: request.routing.clone(),
            deadlock: request.deadlock.clone(),
            reoptimise: request.reoptimise,
        }
    }
}

/// A routing kept with what it was computed from.
#[derive(Debug)]
struct Kept<N, S> {
    subnet: N,
    settings: S,
    routing: RoutingConfig,
    deadlock: DeadlockSettings,
    routed: Arc<Routed>,
}

impl<N: PartialEq, S: PartialEq> Kept<N, S> {
    /// Whether a routing made with `request`'s settings could be this one repaired.
    fn same_settings(&self, request: &Request<N, S>) -> bool {
        self.settings == request.settings
            && self.routing == request.routing
            && self.deadlock == request.deadlock
    }

    /// Whether `request` is exactly what this routing was computed from.
    fn same_inputs(&self, request: &Request<N, S>) -> bool {
        self.subnet == request.subnet && self.same_settings(request)
    }
}

/// The routings of a subnet manager's sweeps: the last one, and the last one made in full,
/// kept while later sweeps repair, so that a subnet that returns to it (the lost cables
/// plugged back) gets exactly its tables again.
#[derive(Debug)]
pub struct Session<N, S> {
    last: Option<Kept<N, S>>,
    full: Option<Kept<N, S>>,
    /// The request of the last full routing, then every repair since, in order (empty when
    /// nothing is kept).
    journal: Vec<Step<N, S>>,
}

impl<N, S> Default for Session<N, S> {
    fn default() -> Self {
        Self {
            last: None,
            full: None,
            journal: Vec::new(),
        }
    }
}

impl<N: Clone + PartialEq, S: Clone + PartialEq> Session<N, S> {
    /// A session with no routing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The routing in force: that of the last request that succeeded (the last full routing
    /// again when a request reused it), if any.
    pub fn last(&self) -> Option<&Arc<Routed>> {
        self.last.as_ref().map(|k| &k.routed)
    }

    /// The requests that rebuild what this session keeps, when settled in order in a fresh
    /// session: the last full routing's, then the repairs since (see the module
    /// documentation). Reuses are left out: they change nothing.
    pub fn journal(&self) -> &[Step<N, S>] {
        &self.journal
    }

    /// Decides and computes the routing of `request`: reuse, repair or full routing (see the
    /// module documentation). After an error in a full routing, nothing is kept: the next
    /// request routes in full; an error in a repair keeps the earlier routings.
    ///
    /// # Errors
    /// What [`route`] or [`repair`] return.
    pub fn settle(&mut self, mut request: Request<N, S>) -> Result<Settled, RouteError> {
        if !request.reoptimise {
            let same = |known: &Option<Kept<N, S>>| {
                known
                    .as_ref()
                    .filter(|k| k.same_inputs(&request))
                    .map(|k| Arc::clone(&k.routed))
            };
            if let Some(routed) = same(&self.last) {
                return Ok(Settled {
                    routed,
                    decision: Decision::Reused,
                });
            }
            if let Some(routed) = same(&self.full) {
                // The tables written are the full routing's again: it is the routing in force
                // (multicast trees are built over it) and the base of the next repair.
                self.last = Some(Self::keep(&request, &routed));
                self.journal.truncate(1);
                return Ok(Settled {
                    routed,
                    decision: Decision::Reused,
                });
            }
        }
        let repaired = if request.reoptimise {
            None
        } else {
            self.repair_after_changes(&request)?
        };
        self.last = None;
        let step = Step::of(&request);
        let (routed, decision) = match repaired {
            Some(routed) => {
                self.journal.push(step);
                (Arc::new(routed), Decision::Repaired)
            }
            None => {
                self.full = None;
                self.journal.clear();
                // The last use of the fabric: moved, not copied.
                let fabric = std::mem::take(&mut request.fabric);
                let routed = Arc::new(route(fabric, &request.routing, &request.deadlock)?);
                self.full = Some(Self::keep(&request, &routed));
                self.journal.push(step);
                let decision = if request.reoptimise {
                    Decision::Reoptimised
                } else {
                    Decision::Routed
                };
                (routed, decision)
            }
        };
        self.last = Some(Self::keep(&request, &routed));
        Ok(Settled { routed, decision })
    }

    fn keep(request: &Request<N, S>, routed: &Arc<Routed>) -> Kept<N, S> {
        Kept {
            subnet: request.subnet.clone(),
            settings: request.settings.clone(),
            routing: request.routing.clone(),
            deadlock: request.deadlock.clone(),
            routed: Arc::clone(routed),
        }
    }

    /// The first of the kept routings (the last one, then the last full one) that the
    /// request's fabric only lost switches, cables or hosts since, repaired: every route that
    /// did not cross a loss is kept. Failing that, the first that the fabric also gained
    /// switches or cables since, repaired and extended: new switches and cables are routed in
    /// without changing the other routes. Losses come first so that cables plugged back
    /// return to their routes in the last full routing. `None` when none serves (a full
    /// routing is due), and for a repair that had to route in full.
    fn repair_after_changes(&self, request: &Request<N, S>) -> Result<Option<Routed>, RouteError> {
        let known = [&self.last, &self.full];
        let attempts = [false, true].into_iter().flat_map(|gains| {
            known
                .iter()
                .filter_map(|k| k.as_ref())
                .map(move |k| (k, gains))
        });
        for (kept, gains) in attempts {
            if !kept.same_settings(request) {
                continue;
            }
            let repaired = repair(
                &kept.routed,
                request.fabric.clone(),
                &request.routing,
                &request.deadlock,
                gains,
            )?;
            if let Some(r) = repaired.filter(|r| {
                r.repair
                    .as_ref()
                    .is_some_and(|p| p.report.full_routing.is_none())
            }) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod tests;
