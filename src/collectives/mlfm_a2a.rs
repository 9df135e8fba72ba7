//! The MLFM layer layout as a subnet's routing (`algorithm: mlfm-a2a`): the layers of
//! [`mlfm_layers`] for the whole machine, made deadlock-free by the configured scheme, and
//! the schedules a damaged routing still serves congestion-free.
//!
//! Lanes by port pair need every route unimodal in a cable order. The layout's leaf-to-leaf
//! routes (every server's traffic) have two cables and fit any order; the other routes (from
//! spines, and to switch LIDs) are made unimodal in the up*/down* order from spine {0, 1}
//! (cables towards it rank low and rise as they near it, cables away from it rank above them
//! and fall as they leave it). That order admits a route from every spine to every leaf
//! without touching a leaf-to-leaf route: spine {0, 1} only falls; a spine {0, c} or {1, c}
//! goes through its leaf in column 0 or 1 (rising) and then away (falling); a spine {a, b} with
//! a, b ≥ 2 goes to a leaf of column a (rising) and from there rises on towards a destination
//! in column 0 or 1, or rises once to the destination column's spine and falls. Routes to
//! spines are free and the order's spanning tree always has one. The tests check both claims
//! for every d up to 8.

use std::fmt::Write as _;

use super::detect::DetectedMlfm;
use super::layout::mlfm_layers;
use super::schemes::{MlfmSpine, mlfm};
use super::{CheckError, CongestionReport, check};
use crate::deadlock::{
    DeadlockError, DeadlockFree, LayerRouter, Scheme, Shortage, route_deadlock_free_with,
};
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::{AttachScratch, Layers};
use crate::routing::{ForwardingTables, LidTable, RoutingConfig};
use crate::topology::{Fabric, NodeSpec};

/// Routes the detected MLFM with the layer layout (every layer of `routing`, all d + 1
/// columns) and makes it deadlock-free with the first of `schemes` that fits, as
/// [`route_deadlock_free_with`] does for any routing (same shortage policy and logging).
///
/// # Errors
/// As [`route_deadlock_free_with`].
pub fn mlfm_a2a_deadlock_free(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    detected: &DetectedMlfm,
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
        &MlfmA2aRouter { detected },
    )
}

/// The layer layout of the whole machine over `graph` (the routing graph of the detected
/// fabric), without a deadlock scheme.
pub fn mlfm_a2a_layers(detected: &DetectedMlfm, graph: &RoutingGraph, layers: usize) -> Layers {
    let mlfm = &detected.mlfm;
    mlfm_layers(mlfm, &detected.named, graph, layers, mlfm.columns())
}

/// The layout as [`route_deadlock_free_with`] asks for it.
struct MlfmA2aRouter<'a> {
    detected: &'a DetectedMlfm,
}

impl LayerRouter for MlfmA2aRouter<'_> {
    fn spreads(&self) -> bool {
        false
    }

    fn order(&self, graph: &RoutingGraph, _routing: &RoutingConfig) -> CableOrder {
        let root = self
            .detected
            .named
            .node_by_name("spine0-1")
            .expect("every MLFM has spine {0, 1}");
        CableOrder::up_down(graph, graph.index_of[root.index()] as usize)
    }

    fn route(
        &self,
        graph: &RoutingGraph,
        config: &RoutingConfig,
        order: Option<&CableOrder>,
    ) -> Layers {
        let layout = mlfm_a2a_layers(self.detected, graph, config.layers);
        let Some(order) = order else {
            return layout;
        };
        let unimodal = made_unimodal(&layout, graph, order);
        let named = &self.detected.named;
        let leaves: Vec<usize> = (0..graph.len())
            .filter(|&s| named.node(graph.nodes[s]).name.starts_with("leaf"))
            .collect();
        for l in 0..layout.count() {
            for &s in &leaves {
                for &t in &leaves {
                    if layout.next_edge(l, s, t) != unimodal.next_edge(l, s, t) {
                        log::warn!(
                            "mlfm-a2a: the layout's route from {} to {} in layer {l} had to \
                             change to keep the cable order; schedules over it may be congested",
                            named.node(graph.nodes[s]).name,
                            named.node(graph.nodes[t]).name
                        );
                    }
                }
            }
        }
        unimodal
    }
}

/// `layers` with every route that is not unimodal in `order` given a new one that is,
/// keeping every route that is (as a repair keeps the routes that survive).
fn made_unimodal(layers: &Layers, graph: &RoutingGraph, order: &CableOrder) -> Layers {
    let n = graph.len();
    let mut layers = layers.clone();
    let mut shapes = Vec::new();
    let mut affected = Vec::new();
    for l in 0..layers.count() {
        for t in 0..n {
            layers.shapes(graph, order, l, t, &mut shapes);
            let mut any = false;
            for (v, shape) in shapes.iter().enumerate() {
                if v != t && shape.is_none_or(|s| !s.is_valid()) {
                    layers.clear_next(l, v, t);
                    any = true;
                }
            }
            if any {
                layers.recompute_hops(graph, l, t);
                layers.drop_unreached(l, t);
                affected.push((l, t));
            }
        }
    }
    if affected.is_empty() {
        return layers;
    }
    // The load of the routes kept, so the new ones balance against it.
    let mut weights = vec![0u64; graph.edge_count()];
    for l in 0..layers.count() {
        for t in 0..n {
            let receivers = u64::from(graph.endpoints[t]);
            for v in (0..n).filter(|&v| v != t && layers.is_routed(l, v, t)) {
                let load = u64::from(graph.endpoints[v]) * receivers;
                layers.load_chain(graph, l, v, t, load, &mut weights);
            }
        }
    }
    let mut scratch = AttachScratch::default();
    for (l, t) in affected {
        layers.attach_unimodal(graph, l, t, &mut weights, order, None, &mut scratch);
    }
    layers
}

/// The fabric `fabric` (a later snapshot of the detected one, which may have lost nodes and
/// cables) with the detected names, by node GUID; nodes the detection did not see keep their
/// names, marked.
pub fn named_like(detected: &DetectedMlfm, fabric: &Fabric) -> Fabric {
    let named = &detected.named;
    let mut copy = Fabric::new(fabric.name.clone());
    for node in fabric.nodes() {
        let name = named.node_by_guid(node.guid).map_or_else(
            || format!("new {}", node.name),
            |id| named.node(id).name.clone(),
        );
        let id = copy
            .add_node(NodeSpec {
                kind: node.kind,
                name,
                description: node.description.clone(),
                guid: node.guid,
                num_ports: node.num_ports(),
                rack: node.rack,
            })
            .expect("GUIDs and names are unique in both fabrics");
        for (to, from) in copy.node_mut(id).ports.iter_mut().zip(&node.ports) {
            to.guid = from.guid;
            to.lid = from.lid;
            to.lmc = from.lmc;
        }
    }
    for link in fabric.links() {
        copy.connect(link.a, link.b, link.width, link.speed)
            .expect("the same cables");
    }
    copy
}

/// The switch-to-switch cables of the detected fabric that `fabric` (a later snapshot) no
/// longer has, one line each, by the construction's names: `leaf0-1 port 5 – spine1-2 port 1
/// (spine {1, 2}, columns 1 and 2)`.
pub fn lost_cables(detected: &DetectedMlfm, fabric: &Fabric) -> Vec<String> {
    let named = &detected.named;
    let mut lost = Vec::new();
    for link in named.links() {
        let (a, b) = (named.node(link.a.node), named.node(link.b.node));
        if !(a.is_switch() && b.is_switch()) {
            continue;
        }
        let end = |node: &crate::topology::Node, port: u8| {
            fabric
                .node_by_guid(node.guid)
                .map(|id| crate::topology::PortRef { node: id, port })
        };
        let kept = match (end(a, link.a.port), end(b, link.b.port)) {
            (Some(x), Some(y)) => fabric.peer(x) == Some(y),
            _ => false,
        };
        if kept {
            continue;
        }
        let (leaf, leaf_port, spine, spine_port) = if a.name.starts_with("leaf") {
            (a, link.a.port, b, link.b.port)
        } else {
            (b, link.b.port, a, link.a.port)
        };
        let mut line = format!(
            "{} port {leaf_port} – {} port {spine_port}",
            leaf.name, spine.name
        );
        if let Some((j0, j1)) = spine
            .name
            .strip_prefix("spine")
            .and_then(|c| c.split_once('-'))
        {
            let _ = write!(line, " (spine {{{j0}, {j1}}}, columns {j0} and {j1})");
        }
        lost.push(line);
    }
    lost
}

/// One schedule's verdict on a routing.
#[derive(Debug, Clone)]
pub struct ScheduleVerdict {
    /// The schedule's name (`mlfm d=3 n=2 l=4 m=3`).
    pub name: String,
    /// The check, or why it could not run (e.g. a server lost).
    pub report: Result<CongestionReport, CheckError>,
}

impl ScheduleVerdict {
    /// Whether the schedule is congestion-free on the routing.
    pub fn congestion_free(&self) -> bool {
        self.report.as_ref().is_ok_and(|r| r.congestion_free)
    }
}

/// Most flows [`schedule_verdicts`] checks (Σ ranks² over the schedules) before it keeps to
/// the whole-machine schedules (n = d, ℓ = d + 1): about a second of checking.
const MAX_CHECKED_FLOWS: usize = 20_000_000;

/// The MLFM schedules with source-chosen spines that `layers` LID layers serve (m ≤ layers),
/// every admissible (n, ℓ, m), checked on `tables` of `named` (the detected fabric's names,
/// e.g. [`named_like`] after a loss). On large machines only the whole-machine schedules
/// (n = d, ℓ = d + 1) are checked ([`MAX_CHECKED_FLOWS`]).
pub fn schedule_verdicts(
    detected: &DetectedMlfm,
    named: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    layers: usize,
) -> Vec<ScheduleVerdict> {
    let d = detected.mlfm.d();
    let mut sets = Vec::new();
    for n in 1..=d {
        for l in 2..=d + 1 {
            for m in (1..l).filter(|&m| m as usize <= layers) {
                sets.push((n, l, m));
            }
        }
    }
    let flows: usize = sets
        .iter()
        .map(|&(n, l, m)| ((n * l * m) as usize).pow(2))
        .sum();
    if flows > MAX_CHECKED_FLOWS {
        sets.retain(|&(n, l, _)| n == d && l == d + 1);
    }
    sets.into_iter()
        .map(|(n, l, m)| {
            let schedule = mlfm(d, n, l, m, MlfmSpine::BySource).expect("admissible");
            ScheduleVerdict {
                name: schedule.name.clone(),
                report: check(named, lids, tables, &schedule),
            }
        })
        .collect()
}

/// The log lines of `verdicts` after a repair: one summary, then one line per schedule
/// (`mlfm-a2a schedule mlfm d=3 n=2 l=4 m=3: congestion-free` or `...: congested (...)`).
pub fn verdict_lines(verdicts: &[ScheduleVerdict]) -> Vec<String> {
    let free = verdicts.iter().filter(|v| v.congestion_free()).count();
    let mut lines = vec![format!(
        "mlfm-a2a: {free} of {} schedules stay congestion-free, {} are affected",
        verdicts.len(),
        verdicts.len() - free
    )];
    for v in verdicts {
        let verdict = match &v.report {
            Ok(r) if r.congestion_free => "congestion-free".to_string(),
            Ok(r) => {
                let mut why = format!("congested (throughput ratio {:.6}", r.throughput_ratio);
                if let (Some(phase), Some(link)) = (&r.worst_phase, &r.worst_link) {
                    let _ = write!(
                        why,
                        "; phase {} has {} flows on {}",
                        phase.label, link.flows, link.link
                    );
                }
                why + ")"
            }
            Err(e) => format!("not checked ({e})"),
        };
        lines.push(format!("mlfm-a2a schedule {}: {verdict}", v.name));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::detect::detect_mlfm;
    use crate::deadlock::{PortPairConfig, verify_every_sl};
    use crate::routing::{assign_lids, forwarding_tables};
    use crate::topology::Construction;
    use crate::topology::mlfm::Mlfm;

    fn detected(d: u32, lmc: u8) -> (DetectedMlfm, LidTable, RoutingGraph) {
        let mut fabric = Mlfm::new(d).unwrap().build();
        assign_lids(&mut fabric, lmc).unwrap();
        let found = detect_mlfm(&fabric).unwrap();
        let lids = LidTable::from_fabric(&found.named).unwrap();
        let graph = RoutingGraph::new(&found.named);
        (found, lids, graph)
    }

    /// The whole-machine layout serves every admissible schedule with m ≤ layers, whatever
    /// the allocation's ℓ (the plugin cannot know it).
    #[test]
    fn the_whole_machine_layout_serves_every_schedule_up_to_d6() {
        for d in 1..=6 {
            let layers = (d as usize).next_power_of_two();
            let (found, lids, graph) = detected(d, layers.trailing_zeros() as u8);
            let routed = mlfm_a2a_layers(&found, &graph, layers);
            let tables = forwarding_tables(&found.named, &graph, &routed, &lids);
            let verdicts = schedule_verdicts(&found, &found.named, &lids, &tables, layers);
            let expected: u32 = d * d * (d + 1) / 2;
            assert_eq!(verdicts.len() as u32, expected, "d={d}");
            for v in &verdicts {
                assert!(v.congestion_free(), "{}: {:?}", v.name, v.report);
            }
        }
    }

    /// Lanes by port pair on the layout: every route unimodal in the order from spine {0, 1}
    /// without changing a leaf-to-leaf route, and deadlock-free for every SL by the verifier.
    #[test]
    fn the_layout_is_made_deadlock_free_for_every_sl_keeping_every_server_route() {
        for d in 1..=8 {
            let layers = 4;
            let (found, lids, graph) = detected(d, 2);
            let router = MlfmA2aRouter { detected: &found };
            let config = RoutingConfig {
                layers,
                ..RoutingConfig::default()
            };
            let order = router.order(&graph, &config);
            let layout = mlfm_a2a_layers(&found, &graph, layers);
            let unimodal = made_unimodal(&layout, &graph, &order);
            assert!(unimodal.all_unimodal(&graph, &order), "d={d}");
            let leaves: Vec<usize> = (0..graph.len())
                .filter(|&s| found.named.node(graph.nodes[s]).name.starts_with("leaf"))
                .collect();
            for l in 0..layers {
                for &s in &leaves {
                    for &t in &leaves {
                        assert_eq!(
                            layout.next_edge(l, s, t),
                            unimodal.next_edge(l, s, t),
                            "d={d}"
                        );
                    }
                }
            }
            let done = mlfm_a2a_deadlock_free(
                &found.named,
                &lids,
                &graph,
                &found,
                &config,
                &[Scheme::PortPair(PortPairConfig { vls: 8 })],
                Shortage::Fail,
            )
            .unwrap();
            let verdict = verify_every_sl(&found.named, &lids, &done.tables, &done.sl2vl);
            assert!(verdict.is_deadlock_free(), "d={d}");
            for v in schedule_verdicts(&found, &found.named, &lids, &done.tables, layers) {
                assert!(v.congestion_free(), "d={d} {}", v.name);
            }
        }
    }

    #[test]
    fn lost_cables_are_named_by_spine_and_columns() {
        let (found, _, _) = detected(3, 0);
        let named = &found.named;
        let cable = named
            .links()
            .iter()
            .position(|l| named.node(l.a.node).is_switch() && named.node(l.b.node).is_switch())
            .unwrap();
        let cut = named.after_losses(|_| false, |l| l.0 == cable as u32);
        let lines = lost_cables(&found, &cut);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("spine {"), "{}", lines[0]);
        assert_eq!(
            named_like(&found, &cut).links().len(),
            named.links().len() - 1
        );
    }
}
