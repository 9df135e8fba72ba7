//! The routing pipeline: a full routing (the layered routing or the MLFM all-to-all layout,
//! with or without a deadlock scheme) and the repair of an earlier one, each ending in the
//! [`Routed`] a subnet manager writes.

use std::sync::Arc;

use crate::Fabric;
use crate::collectives::{self, DetectedMlfm};
use crate::deadlock::{
    DeadlockError, DeadlockFree, Scheme, SchemeOutcome, Shortage, repair_deadlock_free,
    route_deadlock_free,
};
use crate::routing::graph::RoutingGraph;
use crate::routing::layered;
use crate::routing::layers::Layers;
use crate::routing::repair::FabricChanges;
use crate::routing::{
    Algorithm, ForwardingTables, LidTable, RoutingConfig, spread_forwarding_tables,
};

use super::answers::{McastBasis, QosAnswers};
use super::routed::{Repair, RepairBase, RouteError, Routed, balance_of_prefixes, entries};
use super::settings::DeadlockSettings;

/// Routes `fabric` (with its ports' LIDs), makes it deadlock-free when `deadlock` asks for a
/// scheme, and checks that every switch has an entry for every LID on every layer.
///
/// # Errors
/// LID conflicts, no switches, an unreachable destination, or a deadlock scheme that does not
/// fit (after the shortage policy).
pub fn route(
    fabric: Fabric,
    config: &RoutingConfig,
    deadlock: &DeadlockSettings,
) -> Result<Routed, RouteError> {
    let started = std::time::Instant::now();
    let lids = LidTable::from_fabric(&fabric)?;
    let graph = RoutingGraph::new(&fabric);
    if graph.is_empty() {
        return Err(RouteError::NoSwitches);
    }
    let schemes = deadlock.schemes();
    let mlfm = match config.algorithm {
        Algorithm::MlfmA2a => Some(Arc::new(detect(&fabric, config)?)),
        _ => None,
    };
    let done = match layout(
        &fabric,
        &lids,
        &graph,
        config,
        mlfm.as_deref(),
        &schemes,
        deadlock.shortage,
    )? {
        Layout::DeadlockFree(done) => *done,
        Layout::Plain { layers, tables } => {
            let switches = entries(&fabric, &graph, &layers, &lids, &tables)?;
            let prefix_balance = balance_of_prefixes(&fabric, &graph, &layers, &lids, &tables);
            return Ok(Routed {
                lids: switches.first().map_or(0, |(_, e)| e.len()),
                switches,
                layers: layers.count(),
                requested_layers: config.layers.max(1),
                reductions: Vec::new(),
                tables,
                qos: None,
                deadlock_summary: "deadlock avoidance off: every path on SL 0".to_string(),
                guarantee: None,
                scheme: None,
                base: None,
                repair: None,
                multicast: Arc::new(McastBasis {
                    fabric,
                    graph,
                    order: None,
                    scheme: "deadlock avoidance off".into(),
                }),
                prefix_balance,
                elapsed: started.elapsed(),
            });
        }
    };
    finish(fabric, lids, graph, done, config, None, mlfm, started)
}

/// The MLFM of `fabric` for `algorithm: mlfm-a2a`, with a log line on what the layout
/// serves.
fn detect(fabric: &Fabric, config: &RoutingConfig) -> Result<DetectedMlfm, RouteError> {
    let detected = collectives::detect_mlfm(fabric)?;
    let d = detected.mlfm.d();
    log::info!(
        "mlfm-a2a: MLFM d = {d} recognised ({} leaves, {} spines); {} layer{}: the layout of \
         `ibfabric a2a mlfm` serves every schedule with m ≤ {} servers per leaf \
         (LID offset = the sender's server index)",
        detected.mlfm.leaves(),
        detected.mlfm.spines(),
        config.layers,
        if config.layers == 1 { "" } else { "s" },
        config.layers.min(d as usize)
    );
    Ok(detected)
}

/// Repairs `previous` for `fabric`, which lost switches, cables or hosts since — and, with
/// `gains`, gained some — keeping every route that did not cross a loss and the lanes by port
/// pair; new switches and cables get routes without changing the others. `None` when it
/// cannot be repaired that way: `previous` was not made by lanes by port pair, the settings
/// differ, or `fabric` gained a switch or cable and `gains` is false (route in full then).
///
/// # Errors
/// As [`route`].
pub fn repair(
    previous: &Routed,
    fabric: Fabric,
    config: &RoutingConfig,
    deadlock: &DeadlockSettings,
    gains: bool,
) -> Result<Option<Routed>, RouteError> {
    let started = std::time::Instant::now();
    let Some(base) = &previous.base else {
        return Ok(None);
    };
    let Some(scheme) = deadlock
        .schemes()
        .into_iter()
        .find(|s| matches!(s, Scheme::PortPair(_)))
    else {
        return Ok(None);
    };
    let lids = LidTable::from_fabric(&fabric)?;
    let graph = RoutingGraph::new(&fabric);
    if graph.is_empty() {
        return Err(RouteError::NoSwitches);
    }
    let changes = FabricChanges::between(&base.fabric, &base.graph, &fabric, &graph);
    if !gains && !changes.only_losses() {
        return Ok(None);
    }
    let Some(repaired) = repair_deadlock_free(
        &fabric,
        &lids,
        &graph,
        &base.done,
        &base.graph,
        &changes.old_of,
        config,
        &scheme,
    ) else {
        return Ok(None);
    };
    let (done, report) = repaired?;
    if let Some(mlfm) = &base.mlfm
        && report.full_routing.is_none()
    {
        log_schedules(mlfm, &fabric, &lids, &done);
    }
    let repair = Repair {
        lost_cables: changes.lost_cables,
        lost_switches: changes.lost_switches,
        gained_cables: changes.gained_cables,
        gained_switches: changes.gained_switches,
        layers: done.layers,
        report,
    };
    let mlfm = base.mlfm.clone();
    finish(
        fabric,
        lids,
        graph,
        done,
        config,
        Some(repair),
        mlfm,
        started,
    )
    .map(Some)
}

/// Logs the cables an MLFM routing lost and, from the schedule check on the repaired tables,
/// which schedules stay congestion-free and which are affected.
fn log_schedules(mlfm: &DetectedMlfm, fabric: &Fabric, lids: &LidTable, done: &DeadlockFree) {
    for cable in collectives::lost_cables(mlfm, fabric) {
        log::info!("mlfm-a2a: lost cable {cable}");
    }
    let named = collectives::named_like(mlfm, fabric);
    let verdicts = collectives::schedule_verdicts(mlfm, &named, lids, &done.tables, done.layers);
    for line in collectives::verdict_lines(&verdicts) {
        log::info!("{line}");
    }
}

/// Entries, answers and the repair base of a deadlock-free routing.
// The routing's parts, what it repaired and the MLFM it laid out: each is needed, and a
// struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn finish(
    fabric: Fabric,
    lids: LidTable,
    graph: RoutingGraph,
    done: DeadlockFree,
    config: &RoutingConfig,
    repair: Option<Repair>,
    mlfm: Option<Arc<DetectedMlfm>>,
    started: std::time::Instant,
) -> Result<Routed, RouteError> {
    let switches = entries(&fabric, &graph, &done.routing, &lids, &done.tables)?;
    let prefix_balance = balance_of_prefixes(&fabric, &graph, &done.routing, &lids, &done.tables);
    let qos = QosAnswers::new(
        fabric.clone(),
        lids,
        done.path_sls.clone(),
        done.sl2vl.clone(),
    );
    let multicast = Arc::new(McastBasis {
        fabric: fabric.clone(),
        graph: graph.clone(),
        order: done.order.clone(),
        scheme: scheme_name(&done.outcome).into(),
    });
    let base = matches!(done.outcome, SchemeOutcome::PortPair { .. }).then(|| {
        Arc::new(RepairBase {
            fabric,
            graph,
            done: done.clone(),
            mlfm,
        })
    });
    Ok(Routed {
        lids: switches.first().map_or(0, |(_, e)| e.len()),
        switches,
        layers: done.layers,
        requested_layers: config.layers.max(1),
        reductions: done.reductions,
        tables: done.tables,
        qos: Some(Arc::new(qos)),
        deadlock_summary: done.outcome.to_string(),
        guarantee: Some(done.outcome.guarantee()),
        scheme: Some(done.outcome.clone()),
        base,
        repair,
        multicast,
        prefix_balance,
        elapsed: started.elapsed(),
    })
}

/// The name of the scheme that made the routing deadlock-free, as [`Scheme::name`] gives it.
fn scheme_name(outcome: &SchemeOutcome) -> &'static str {
    match outcome {
        SchemeOutcome::Dfsssp { .. } => "DFSSSP virtual lanes",
        SchemeOutcome::Colouring { .. } => "switch colouring",
        SchemeOutcome::PortPair { .. } => "lanes by port pair",
    }
}

/// A routing before the subnet manager's concerns (entries, answers, repair base): plain
/// layers and their tables, or a routing made deadlock-free.
#[derive(Debug)]
pub enum Layout {
    /// No deadlock scheme asked for.
    Plain {
        /// Next hops per layer and destination switch.
        layers: Layers,
        /// The forwarding tables.
        tables: ForwardingTables,
    },
    /// Made deadlock-free by one of the schemes (boxed: it is much the larger).
    DeadlockFree(Box<DeadlockFree>),
}

/// The one dispatch of a full routing, for `ibfabric route` and the plugin alike: the MLFM
/// all-to-all layout when `mlfm` is given, the layered routing otherwise; made deadlock-free
/// by the first of `schemes` that fits (none: no scheme), with `shortage` when VLs run short.
///
/// # Errors
/// A deadlock scheme that does not fit (after the shortage policy).
pub fn layout(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    config: &RoutingConfig,
    mlfm: Option<&DetectedMlfm>,
    schemes: &[Scheme],
    shortage: Shortage,
) -> Result<Layout, DeadlockError> {
    if schemes.is_empty() {
        let layers = match mlfm {
            Some(mlfm) => collectives::mlfm_a2a_layers(mlfm, graph, config.layers),
            None => layered::route(graph, config),
        };
        let tables = spread_forwarding_tables(fabric, graph, &layers, lids, None);
        return Ok(Layout::Plain { layers, tables });
    }
    Ok(Layout::DeadlockFree(Box::new(match mlfm {
        Some(mlfm) => collectives::mlfm_a2a_deadlock_free(
            fabric, lids, graph, mlfm, config, schemes, shortage,
        )?,
        None => route_deadlock_free(fabric, lids, graph, config, schemes, shortage)?,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadlock::Guarantee;
    use crate::options::DeadlockMode;
    use crate::routing::{PathLengths, assign_lids};
    use crate::topology::TopologySpec;

    fn config(layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        }
    }

    fn no_deadlock_scheme() -> DeadlockSettings {
        DeadlockSettings {
            mode: DeadlockMode::None,
            vls: 8,
            shortage: Shortage::Fail,
        }
    }

    fn slim_fly_q5() -> Fabric {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let mut fabric = spec.build().unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        fabric
    }

    #[test]
    fn slim_fly_routes_every_lid_on_every_layer() {
        let fabric = slim_fly_q5();
        let routed = route(fabric.clone(), &config(4), &no_deadlock_scheme()).unwrap();
        assert_eq!(routed.switches.len(), 50);
        assert_eq!(routed.lids, 200 * 4 + 50);
        assert_eq!(routed.layers, 4);
        for (s, entries) in &routed.switches {
            assert_eq!(entries.len(), routed.lids);
            for e in entries {
                assert_eq!(routed.tables.port(*s, e.lid), Some(e.port));
                if e.port == 0 {
                    assert_eq!(fabric.node(*s).ports[0].lid, e.lid);
                    assert_eq!(e.hops, 0);
                } else {
                    // Diameter 2 + the host cable; almost-minimal layers go up to 3 + 1.
                    assert!((1..=4).contains(&e.hops), "{e:?}");
                }
            }
        }
    }

    /// Every deadlock mode's answers: the routing with its path SLs and SL-to-VL tables is
    /// deadlock-free by the independent verifier — with every route on every SL where the
    /// guarantee says so (lanes by port pair, which answer no SL of their own: OpenSM's choice
    /// stands), else with the SLs answered for every LID pair.
    #[test]
    fn deadlock_modes_answer_sls_that_the_verifier_accepts() {
        use crate::deadlock::{VerifyOptions, verify, verify_every_sl};
        let fabric = slim_fly_q5();
        for mode in [
            DeadlockMode::Auto,
            DeadlockMode::PortPair,
            DeadlockMode::Dfsssp,
            DeadlockMode::Colouring,
        ] {
            let settings = DeadlockSettings {
                mode,
                vls: 8,
                shortage: Shortage::Fail,
            };
            let routed = route(fabric.clone(), &config(4), &settings).unwrap();
            assert_eq!(routed.layers, 4, "{mode:?}");
            let qos = routed.qos.as_ref().expect("answers");
            let lids = LidTable::from_fabric(&fabric).unwrap();
            // The verifier reads path SLs through the `PathSl` trait: hand it the answers.
            struct Answers<'a>(&'a QosAnswers);
            impl crate::deadlock::PathSl for Answers<'_> {
                fn sl(&self, slid: u16, dlid: u16) -> u8 {
                    self.0.path_sl(slid, dlid).expect("known LIDs")
                }
            }
            let verdict = if routed.guarantee == Some(Guarantee::EverySl) {
                assert_eq!(qos.path_sl(1, 2), None, "{mode:?}: OpenSM's choice stands");
                verify_every_sl(&fabric, &lids, &routed.tables, qos.tables())
            } else {
                verify(
                    &fabric,
                    &lids,
                    &routed.tables,
                    &Answers(qos),
                    qos.tables(),
                    &VerifyOptions::default(),
                )
            };
            assert!(verdict.is_deadlock_free(), "{mode:?}: {verdict:?}");
            let every_sl = matches!(mode, DeadlockMode::Auto | DeadlockMode::PortPair);
            assert_eq!(
                routed.guarantee == Some(Guarantee::EverySl),
                every_sl,
                "{mode:?}"
            );
            assert!(routed.deadlock_summary.starts_with("deadlock-free"));
            // Unknown LIDs are left to OpenSM.
            assert_eq!(qos.path_sl(0, 1), None);
            assert_eq!(qos.path_sl(1, 60000), None);
            // Every switch port pair has a row; unknown nodes have none.
            let s = fabric.switches().next().unwrap();
            let guid = fabric.node(s).guid.0;
            assert!(qos.sl2vl(guid, 1, 2).is_some());
            assert_eq!(qos.sl2vl(0xdead, 1, 2), None);
        }
    }

    /// `algorithm: mlfm-a2a`: an MLFM is laid out and made deadlock-free for every SL, a lost
    /// cable is repaired keeping the MLFM for the next repair, and a Slim Fly is refused.
    #[test]
    fn mlfm_a2a_routes_and_repairs_an_mlfm_and_refuses_other_fabrics() {
        use crate::topology::Construction;
        let mut mlfm = crate::topology::mlfm::Mlfm::new(3).unwrap().build();
        assign_lids(&mut mlfm, 2).unwrap();
        let fabric = mlfm;
        let config = RoutingConfig {
            algorithm: Algorithm::MlfmA2a,
            ..config(4)
        };
        let settings = DeadlockSettings {
            mode: DeadlockMode::Auto,
            vls: 8,
            shortage: Shortage::Fail,
        };
        let routed = route(fabric.clone(), &config, &settings).unwrap();
        assert_eq!(routed.layers, 4);
        assert_eq!(routed.guarantee, Some(Guarantee::EverySl));
        let uplink = fabric
            .links()
            .iter()
            .position(|l| fabric.node(l.a.node).is_switch() && fabric.node(l.b.node).is_switch())
            .unwrap();
        let cut = fabric.after_losses(|_| false, |l| l.0 == uplink as u32);
        let repaired = repair(&routed, cut, &config, &settings, false)
            .unwrap()
            .expect("a lost cable is repaired");
        assert_eq!(repaired.repair.as_ref().unwrap().lost_cables, 1);
        assert!(repaired.base.as_ref().unwrap().mlfm.is_some());
        let slim_fly = slim_fly_q5();
        let refused = route(slim_fly, &config, &settings).unwrap_err();
        assert!(matches!(refused, RouteError::NotMlfm(_)), "{refused}");
        assert!(refused.to_string().contains("mlfm-a2a refused"));
    }

    #[test]
    fn too_few_vls_fail_or_reduce_layers_by_policy() {
        let fabric = slim_fly_q5();
        let fail = DeadlockSettings {
            mode: DeadlockMode::Dfsssp,
            vls: 2,
            shortage: Shortage::Fail,
        };
        let err = route(fabric.clone(), &config(4), &fail).unwrap_err();
        assert!(
            err.to_string().contains("virtual lanes"),
            "the error says what is needed: {err}"
        );
        let fewer = DeadlockSettings {
            shortage: Shortage::FewerLayers,
            ..fail
        };
        let routed = route(fabric, &config(4), &fewer).unwrap();
        assert!(routed.layers < 4);
        assert_eq!(routed.requested_layers, 4);
        assert!(!routed.reductions.is_empty());
    }
}
