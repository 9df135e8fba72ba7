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
//! * [`port_pair`]: lanes by port pair — the VL depends on the (input, output) port pair and
//!   not on the SL, over a routing whose every route rises and then falls in a cable order.
//!   The only scheme that holds whatever SL senders put into their packets (UCX and verbs
//!   programs use one fixed SL and never ask the SA); needs two VLs.
//! * [`verify()`]: builds the channel dependency graph over (directed link, VL) channels of
//!   every route from forwarding tables, path SLs and SL-to-VL tables — computed here or read
//!   back from a fabric — and reports deadlock freedom or a concrete cycle with its routes.
//!
//! [`route_deadlock_free`] ties routing and the schemes together, with a policy for when VLs
//! run out: fail with both numbers, or route with fewer layers until it fits. Every outcome
//! names its [`Guarantee`]: for every SL, or only for senders that use the SA's path SL.
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
mod repair;
pub mod sl2vl;
pub mod verify;

pub use colour_graph::{Colouring, ColouringEffort};
pub use colouring::{ColouringConfig, ColouringScheme, colouring_scheme};
pub use dfsssp::{DfssspConfig, VlAssignment, VlSearch, assign_vls};
pub use network::BrokenRoutes;
pub use path_sl::{DefaultSl, PathSl, SlTable, SwitchSls};
pub use port_pair::{PortPairConfig, PortPairLanes, lanes_by_port_pair};
pub use repair::repair_deadlock_free;
pub use sl2vl::{Sl2VlTables, SlVlRow, SwitchSl2Vl, identity_row};
pub use verify::{
    Cycle, CycleChannel, CyclicComponent, RouteExample, RouteSls, Verdict, VerifyOptions,
    VlChannels, verify, verify_every_sl,
};

use crate::routing::cable_order::CableOrder;
use crate::routing::graph::RoutingGraph;
use crate::routing::layered::route_in_order;
use crate::routing::layers::Layers;
use crate::routing::{ForwardingTables, LidTable, forwarding_tables, spread_forwarding_tables};
use crate::routing::{RoutingConfig, Turns};
use crate::topology::Fabric;
use std::time::Instant;

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
    /// Lanes by port pair need every route to rise and then fall in the cable order.
    #[error(
        "lanes by port pair need every route to rise and then fall in the cable order, but \
         {routes} (switch, destination LID) routes rise again after falling ({example})"
    )]
    NotUnimodal {
        /// (switch, destination LID) routes with a valley.
        routes: u64,
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
    /// Lanes by port pair over routes unimodal in the cable order.
    PortPair(PortPairConfig),
}

impl Scheme {
    /// The scheme's name in logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Dfsssp(_) => "DFSSSP virtual lanes",
            Self::Colouring(_) => "switch colouring",
            Self::PortPair(_) => "lanes by port pair",
        }
    }

    /// The turn rule the routing must keep for this scheme: lanes by port pair need
    /// unimodal routes; the others take any routes (`asked`).
    pub fn turns(&self, asked: Turns) -> Turns {
        match self {
            Self::PortPair(_) => Turns::Unimodal,
            Self::Dfsssp(_) | Self::Colouring(_) => asked,
        }
    }
}

/// Which remedy, as configuration files and command lines name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeChoice {
    /// Lanes by port pair wherever the ports have two data VLs: deadlock-free whatever SL the
    /// traffic carries, on any topology. With a single VL, the colouring scheme where it
    /// applies, else DFSSSP-style virtual lanes — both only for senders that use the SA's
    /// path SL.
    Auto,
    /// DFSSSP-style virtual lanes.
    Dfsssp,
    /// The colouring scheme.
    Colouring,
    /// Lanes by port pair.
    PortPair,
}

impl SchemeChoice {
    /// The schemes to try, in order, with `vls` data VLs (lanes by port pair need 2, the
    /// colouring scheme 3).
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
        let port_pair = || Scheme::PortPair(PortPairConfig { vls });
        if self == Self::Auto && vls < port_pair::LANES_PER_CLASS {
            log::warn!(
                "lanes by port pair need 2 data VLs but {vls} exist{}: falling back to DFSSSP \
                 virtual lanes, deadlock-free only for clients that use the SA's path SL",
                if vls == 1 { "s" } else { "" }
            );
        }
        match self {
            Self::Auto if vls >= 3 => vec![port_pair(), colouring(), dfsssp()],
            Self::Auto if vls >= port_pair::LANES_PER_CLASS => vec![port_pair(), dfsssp()],
            Self::Auto | Self::Dfsssp => vec![dfsssp()],
            Self::Colouring => vec![colouring()],
            Self::PortPair => vec![port_pair()],
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
    /// Lanes by port pair.
    PortPair {
        /// Classes: SL s uses class s mod classes, two VLs each.
        classes: u8,
    },
}

/// Which senders a deadlock-free routing is deadlock-free for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarantee {
    /// Every sender, whatever SL its packets carry: one fixed SL (UCX, verbs programs with
    /// their own address handles, multicast) as well as the SA's path SL.
    EverySl,
    /// Only senders that put the SA's path SL into their packets (rdma-cm users, IPoIB's
    /// unicast paths); UCX and programs with a fixed SL can deadlock.
    PathSlOnly,
}

impl std::fmt::Display for Guarantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::EverySl => "deadlock-free whatever SL the traffic carries",
            Self::PathSlOnly => {
                "deadlock-free only for clients that use the SA's path SL (UCX does not)"
            }
        })
    }
}

impl SchemeOutcome {
    /// The guarantee the scheme gives. DFSSSP that needed a single VL gives it for every SL
    /// too: the whole routing's channel dependencies are then acyclic on one lane, so any
    /// mapping of SLs to lanes keeps every lane acyclic.
    pub fn guarantee(&self) -> Guarantee {
        match self {
            Self::PortPair { .. } | Self::Dfsssp { vls_needed: 1, .. } => Guarantee::EverySl,
            Self::Dfsssp { .. } | Self::Colouring { .. } => Guarantee::PathSlOnly,
        }
    }
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
            Self::PortPair { classes } => write!(
                f,
                "deadlock-free by lanes by port pair: {} VLs, {classes} class{} of an \
                 ascending and a descending lane (SL s in class s mod {classes})",
                classes * port_pair::LANES_PER_CLASS,
                if *classes == 1 { "" } else { "es" },
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
    /// SL per (source, destination LID); `None` when any SL is safe (lanes by port pair), so
    /// the SA should answer what the requester or the subnet manager's policy chose.
    pub path_sls: Option<SwitchSls>,
    /// SL-to-VL tables of every port.
    pub sl2vl: Sl2VlTables,
    /// Scheme details.
    pub outcome: SchemeOutcome,
    /// The cable order every route is unimodal in, for lanes by port pair (a repair keeps
    /// routing in it).
    pub order: Option<CableOrder>,
}

/// Applies `scheme` to existing forwarding tables of `fabric` (routed over `graph`; for lanes
/// by port pair, with every route unimodal in `order`).
///
/// # Errors
/// What the scheme returns; lanes by port pair without an `order` are
/// [`DeadlockError::NotUnimodal`].
pub fn apply_scheme(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    tables: &ForwardingTables,
    scheme: &Scheme,
    order: Option<&CableOrder>,
) -> Result<(Option<SwitchSls>, Sl2VlTables, SchemeOutcome), DeadlockError> {
    match scheme {
        Scheme::Dfsssp(config) => {
            let a = assign_vls(fabric, lids, tables, config)?;
            let sl2vl = a.sl2vl(fabric);
            Ok((
                Some(a.path_sls),
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
                Some(c.path_sls),
                sl2vl,
                SchemeOutcome::Colouring {
                    colours: c.colouring.count,
                    max_hops: c.max_hops,
                },
            ))
        }
        Scheme::PortPair(config) => {
            let order = order.ok_or_else(|| DeadlockError::NotUnimodal {
                routes: 0,
                example: "the routing was not made in a cable order".into(),
            })?;
            let lanes = lanes_by_port_pair(fabric, lids, graph, tables, order, config)?;
            Ok((
                None,
                lanes.sl2vl,
                SchemeOutcome::PortPair {
                    classes: lanes.classes,
                },
            ))
        }
    }
}

/// Routes `fabric` with `routing` and makes it deadlock-free with the first of `schemes` that
/// fits (e.g. lanes by port pair, then the colouring scheme, then DFSSSP), each on a routing
/// with the turns it needs ([`Scheme::turns`]); when none fits (VLs run short, or paths are
/// too long for the colouring scheme) follows `shortage`. Every scheme that does not fit and
/// leaves the choice to the next one is logged, so a weaker guarantee is never silent.
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
    route_deadlock_free_with(
        fabric,
        lids,
        graph,
        routing,
        schemes,
        shortage,
        &LayeredRouter,
    )
}

/// How [`route_deadlock_free_with`] makes the routing a scheme is applied to.
pub trait LayerRouter {
    /// The cable order unimodal routes keep: one per fabric and seed, whatever the layers.
    fn order(&self, graph: &RoutingGraph, routing: &RoutingConfig) -> CableOrder;
    /// The layers for `config`, every route unimodal in `order` when it is given.
    fn route(
        &self,
        graph: &RoutingGraph,
        config: &RoutingConfig,
        order: Option<&CableOrder>,
    ) -> Layers;
    /// Whether the tables may spread the LIDs of a destination switch over equal-cost next
    /// hops on hierarchical fabrics ([`spread_forwarding_tables`]); a layout whose routes are
    /// designed one by one (the MLFM all-to-all schedule) keeps its trees exactly.
    fn spreads(&self) -> bool {
        true
    }
}

/// The core's routing ([`route_in_order`]) in the order [`CableOrder::for_routing`] makes.
pub struct LayeredRouter;

impl LayerRouter for LayeredRouter {
    fn order(&self, graph: &RoutingGraph, routing: &RoutingConfig) -> CableOrder {
        CableOrder::for_routing(graph, routing.seed)
    }

    fn route(
        &self,
        graph: &RoutingGraph,
        config: &RoutingConfig,
        order: Option<&CableOrder>,
    ) -> Layers {
        route_in_order(graph, config, order)
    }
}

/// [`route_deadlock_free`] with the routing made by `router` (e.g. a layout that fixes some
/// routes), with the same scheme order, shortage policy and logging.
///
/// # Errors
/// As [`route_deadlock_free`].
pub fn route_deadlock_free_with(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    routing: &RoutingConfig,
    schemes: &[Scheme],
    shortage: Shortage,
    router: &dyn LayerRouter,
) -> Result<DeadlockFree, DeadlockError> {
    let requested = routing.layers.max(1);
    let mut layers = requested;
    let mut reductions = Vec::new();
    // The cable order of unimodal routings: one per fabric and seed, whatever the layers.
    let mut order: Option<CableOrder> = None;
    loop {
        // One routing per turn rule, made when a scheme first needs it.
        let mut routed: Vec<(Turns, Layers, ForwardingTables)> = Vec::new();
        let mut last = DeadlockError::BadVls {
            vls: 0,
            needed: "at least one scheme",
        };
        for (i, scheme) in schemes.iter().enumerate() {
            let turns = scheme.turns(routing.turns);
            let at = match routed.iter().position(|(t, _, _)| *t == turns) {
                Some(at) => at,
                None => {
                    let config = RoutingConfig {
                        layers,
                        turns,
                        ..routing.clone()
                    };
                    let started = Instant::now();
                    let order = (turns == Turns::Unimodal)
                        .then(|| &*order.get_or_insert_with(|| router.order(graph, routing)));
                    log::debug!("cable order in {:.2?}", started.elapsed());
                    let started = Instant::now();
                    let layered = router.route(graph, &config, order);
                    log::debug!("layers routed in {:.2?}", started.elapsed());
                    let started = Instant::now();
                    let tables = if router.spreads() {
                        spread_forwarding_tables(fabric, graph, &layered, lids, order)
                    } else {
                        forwarding_tables(fabric, graph, &layered, lids)
                    };
                    log::debug!("forwarding tables in {:.2?}", started.elapsed());
                    routed.push((turns, layered, tables));
                    routed.len() - 1
                }
            };
            let tables = &routed[at].2;
            let started = Instant::now();
            let applied = apply_scheme(fabric, lids, graph, tables, scheme, order.as_ref());
            log::debug!("{scheme:?} applied in {:.2?}", started.elapsed());
            match applied {
                Ok((path_sls, sl2vl, outcome)) => {
                    let (_, routing, tables) = routed.swap_remove(at);
                    return Ok(DeadlockFree {
                        layers,
                        requested_layers: requested,
                        reductions,
                        routing,
                        tables,
                        path_sls,
                        sl2vl,
                        outcome,
                        order: if turns == Turns::Unimodal {
                            order
                        } else {
                            None
                        },
                    });
                }
                Err(e) => {
                    if i + 1 < schemes.len() {
                        log::warn!("{}: {e}; trying the next scheme", scheme.name());
                    }
                    last = e;
                }
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

#[cfg(test)]
mod tests;
