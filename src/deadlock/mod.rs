//! Deadlock freedom for routings programmed in forwarding tables.
//!
//! Layered routing with non-minimal paths creates cyclic channel dependencies, and InfiniBand's
//! credit-based flow control then deadlocks. Two remedies (the Slim Fly paper, §5.2) and the
//! verifier that proves the result:
//!
//! * [`dfsssp`]: DFSSSP-style virtual lanes — routes move to higher VLs until the channel
//!   dependency graph of every VL is acyclic, then spread over the spare VLs. Works for any
//!   routing, needs as many VLs as the cycle breaking finds.
//! * [`colouring`]: the colouring scheme — three VL buckets by hop position, SL = colour of the
//!   route's second switch. Needs paths of at most 3 hops and at most as many colours as SLs.
//! * [`verify()`]: builds the channel dependency graph over (directed link, VL) channels of
//!   every route from forwarding tables, path SLs and SL-to-VL tables — computed here or read
//!   back from a fabric — and reports deadlock freedom or a concrete cycle with its routes.
//!
//! [`route_deadlock_free`] ties routing and the schemes together, with a policy for when VLs
//! run out: fail with both numbers, or route with fewer layers until it fits.
//!
//! Pure: no IO; the readers of OpenSM's and infiniband-diags' SL2VL output are in
//! [`crate::io::sl2vl`].

mod cdg;
pub mod colour_graph;
pub mod colouring;
pub mod dfsssp;
mod network;
pub mod path_sl;
pub mod port_pair;
pub mod sl2vl;
pub mod verify;

pub use colour_graph::{Colouring, ColouringEffort};
pub use colouring::{ColouringConfig, ColouringScheme, colouring_scheme};
pub use dfsssp::{DfssspConfig, VlAssignment, VlSearch, assign_vls};
pub use network::BrokenRoutes;
pub use path_sl::{DefaultSl, PathSl, SlTable, SwitchSls};
pub use sl2vl::{Sl2VlTables, SlVlRow, SwitchSl2Vl, identity_row};
pub use verify::{
    Cycle, CycleChannel, CyclicComponent, RouteExample, RouteSls, Verdict, VerifyOptions,
    VlChannels, verify,
};

use crate::routing::RoutingConfig;
use crate::routing::graph::RoutingGraph;
use crate::routing::layered::route;
use crate::routing::layers::Layers;
use crate::routing::{ForwardingTables, LidTable, forwarding_tables};
use crate::topology::Fabric;

/// Why a routing could not be made deadlock-free.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeadlockError {
    /// The DFSSSP assignment needs more VLs than exist.
    #[error(
        "this routing needs {needed} virtual lanes to be deadlock-free, but only {available} exist; route with fewer layers (a smaller LMC), use the colouring scheme, or allow more VLs"
    )]
    NotEnoughVls {
        /// VLs the routing needs.
        needed: usize,
        /// VLs available.
        available: u8,
    },
    /// A VL count (or colour SL list) the scheme cannot work with.
    #[error("{vls} virtual lanes: the scheme needs {needed}")]
    BadVls {
        /// VLs given.
        vls: u8,
        /// What it needs.
        needed: &'static str,
    },
    /// The switch colouring needs more colours than there are colour SLs.
    #[error(
        "the colouring scheme needs {needed} colours (SLs) for this fabric, but only {available} SLs are given to colours; use the DFSSSP scheme"
    )]
    TooManyColours {
        /// Colours the colouring found.
        needed: usize,
        /// Colour SLs.
        available: usize,
    },
    /// The colouring scheme covers paths of at most 3 inter-switch hops.
    #[error(
        "the colouring scheme covers paths of at most 3 inter-switch hops, but {routes} (switch, destination) routes are longer (up to {longest} hops; {example}); route with fewer layers or use the DFSSSP scheme"
    )]
    PathTooLong {
        /// (source switch, destination LID) pairs with longer paths.
        routes: usize,
        /// The longest path.
        longest: u8,
        /// One of them.
        example: String,
    },
}

/// Which remedy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheme {
    /// DFSSSP-style VL assignment.
    Dfsssp(DfssspConfig),
    /// The colouring scheme.
    Colouring(ColouringConfig),
}

/// Which remedy, as configuration files and command lines name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeChoice {
    /// The colouring scheme where it applies (paths of at most 3 hops, enough colour SLs),
    /// else DFSSSP-style virtual lanes. The colouring costs a switch colouring and one walk of
    /// the routes whatever the cycles, so it is the fast choice on the large low-diameter
    /// fabrics it covers (every Slim Fly up to q = 27); DFSSSP covers the rest.
    Auto,
    /// DFSSSP-style virtual lanes.
    Dfsssp,
    /// The colouring scheme.
    Colouring,
}

impl SchemeChoice {
    /// The schemes to try, in order, with `vls` data VLs (the colouring scheme needs 3).
    pub fn schemes(self, vls: u8) -> Vec<Scheme> {
        let dfsssp = || {
            Scheme::Dfsssp(DfssspConfig {
                vls,
                ..DfssspConfig::default()
            })
        };
        let colouring = || {
            Scheme::Colouring(ColouringConfig {
                vls,
                ..ColouringConfig::default()
            })
        };
        match self {
            Self::Auto if vls >= 3 => vec![colouring(), dfsssp()],
            Self::Auto | Self::Dfsssp => vec![dfsssp()],
            Self::Colouring => vec![colouring()],
        }
    }
}

/// What to do when the routing does not fit the VLs (or, for the colouring scheme, has too
/// long paths).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortage {
    /// Return the error, which says what is needed and what exists.
    Fail,
    /// Halve the number of layers and try again, down to one layer (the LIDs stay: LID offsets
    /// share layers modulo the new count). Every reduction is logged and reported.
    FewerLayers,
}

/// What the scheme found, besides SLs and tables.
#[derive(Debug, Clone)]
pub enum SchemeOutcome {
    /// The DFSSSP assignment (its path SLs moved to [`DeadlockFree::path_sls`]).
    Dfsssp {
        /// VLs needed (after the cycle breaking and the searches for fewer).
        vls_needed: u8,
        /// Routes per VL after balancing.
        routes_per_vl: Vec<u64>,
    },
    /// The colouring scheme.
    Colouring {
        /// Colours used.
        colours: usize,
        /// Longest path.
        max_hops: u8,
    },
}

impl std::fmt::Display for SchemeOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dfsssp {
                vls_needed,
                routes_per_vl,
            } => write!(
                f,
                "deadlock-free by DFSSSP virtual lanes: {vls_needed} of {} VLs needed",
                routes_per_vl.len()
            ),
            Self::Colouring { colours, max_hops } => write!(
                f,
                "deadlock-free by switch colouring: {colours} colours, paths up to {max_hops} \
                 hops"
            ),
        }
    }
}

/// A deadlock-free routing: forwarding tables, path SLs and SL-to-VL tables.
#[derive(Debug, Clone)]
pub struct DeadlockFree {
    /// Layers routed.
    pub layers: usize,
    /// Layers asked for (more than `layers` when the policy reduced them).
    pub requested_layers: usize,
    /// Why layers were reduced, one sentence per reduction.
    pub reductions: Vec<String>,
    /// Next hops per layer and destination switch (what the tables realise; hop counts).
    pub routing: Layers,
    /// The forwarding tables.
    pub tables: ForwardingTables,
    /// SL per (source, destination LID).
    pub path_sls: SwitchSls,
    /// SL-to-VL tables of every port.
    pub sl2vl: Sl2VlTables,
    /// Scheme details.
    pub outcome: SchemeOutcome,
}

/// Applies `scheme` to existing forwarding tables.
///
/// # Errors
/// What the scheme returns.
pub fn apply_scheme(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    scheme: &Scheme,
) -> Result<(SwitchSls, Sl2VlTables, SchemeOutcome), DeadlockError> {
    match scheme {
        Scheme::Dfsssp(config) => {
            let a = assign_vls(fabric, lids, tables, config)?;
            let sl2vl = a.sl2vl(fabric);
            Ok((
                a.path_sls,
                sl2vl,
                SchemeOutcome::Dfsssp {
                    vls_needed: a.vls_needed,
                    routes_per_vl: a.routes_per_vl,
                },
            ))
        }
        Scheme::Colouring(config) => {
            let c = colouring_scheme(fabric, lids, tables, config)?;
            let sl2vl = c.sl2vl(fabric);
            Ok((
                c.path_sls,
                sl2vl,
                SchemeOutcome::Colouring {
                    colours: c.colouring.count,
                    max_hops: c.max_hops,
                },
            ))
        }
    }
}

/// Routes `fabric` with `routing` and makes it deadlock-free with the first of `schemes` that
/// fits (e.g. DFSSSP, then the colouring scheme); when none fits (VLs run short, or paths are
/// too long for the colouring scheme) follows `shortage`.
///
/// # Errors
/// The last scheme's error when `shortage` is [`Shortage::Fail`], when even one layer does not
/// fit, or when fewer layers cannot help (too many colours, bad VL counts); `BadVls` when
/// `schemes` is empty.
pub fn route_deadlock_free(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    routing: &RoutingConfig,
    schemes: &[Scheme],
    shortage: Shortage,
) -> Result<DeadlockFree, DeadlockError> {
    let requested = routing.layers.max(1);
    let mut layers = requested;
    let mut reductions = Vec::new();
    loop {
        let config = RoutingConfig {
            layers,
            ..routing.clone()
        };
        let routed = route(graph, &config);
        let tables = forwarding_tables(fabric, graph, &routed, lids);
        let mut last = DeadlockError::BadVls {
            vls: 0,
            needed: "at least one scheme",
        };
        for scheme in schemes {
            match apply_scheme(fabric, lids, &tables, scheme) {
                Ok((path_sls, sl2vl, outcome)) => {
                    return Ok(DeadlockFree {
                        layers,
                        requested_layers: requested,
                        reductions,
                        routing: routed,
                        tables,
                        path_sls,
                        sl2vl,
                        outcome,
                    });
                }
                Err(e) => last = e,
            }
        }
        match last {
            e @ (DeadlockError::NotEnoughVls { .. } | DeadlockError::PathTooLong { .. })
                if shortage == Shortage::FewerLayers && layers > 1 =>
            {
                let fewer = layers / 2;
                let why = format!("{layers} layers: {e}; trying {fewer}");
                log::warn!("{why}");
                reductions.push(why);
                layers = fewer;
            }
            e => return Err(e),
        }
    }
}
