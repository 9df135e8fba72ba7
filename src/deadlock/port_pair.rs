//! Lanes by port pair: SL-to-VL tables whose VL depends on the (input, output) port pair and
//! not on the SL, so the routing stays deadlock-free whatever SL a sender puts into its
//! packets (UCX and verbs programs use one fixed SL and never ask the SA for a path SL).
//!
//! The VLs are split into classes of two — the ascending and the descending lane of the
//! routing's [`CableOrder`] — and each SL is given a class (`sl mod classes`): 8 VLs make four
//! classes, so SLs can still separate traffic for QoS, and every class is deadlock-free on its
//! own because a packet never changes its SL. Every route must be unimodal in the order
//! ([`crate::routing::cable_order`]); the verifier proves the result on what the fabric holds.

use super::DeadlockError;
use super::network::{Channels, Traffic};
use super::sl2vl::{SLS, Sl2VlTables, SlVlRow, SwitchSl2Vl};
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::{NONE, RoutingGraph};
use crate::routing::walk::DestWalk;
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, NodeId, PortRef};
use rayon::prelude::*;

/// The lanes-by-port-pair scheme's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortPairConfig {
    /// Data VLs: two make one class (every SL shares it), 8 make four.
    pub vls: u8,
}

/// What the scheme gives a routing whose every route is unimodal in the cable order.
#[derive(Debug, Clone)]
pub struct PortPairLanes {
    /// The SL-to-VL tables of every port.
    pub sl2vl: Sl2VlTables,
    /// Classes (SL s uses class s mod classes).
    pub classes: u8,
}

/// The lanes by port pair for `tables`, routed over `graph` with every route unimodal in
/// `order`; checks on the tables themselves that no route falls and then rises again (which
/// would close a cycle), so a routing that does not keep the rule is refused, never
/// programmed.
///
/// # Errors
/// A VL count without room for one class; [`DeadlockError::NotUnimodal`] for tables with a
/// route that rises again after falling.
pub fn lanes_by_port_pair(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    tables: &ForwardingTables,
    order: &CableOrder,
    config: &PortPairConfig,
) -> Result<PortPairLanes, DeadlockError> {
    lanes_by_port_pair_checking(fabric, lids, graph, tables, order, config, &|_| true)
}

/// As [`lanes_by_port_pair`], walking the tables for valleys only towards the LIDs for which
/// `check` holds. A repair passes the LIDs of the destination trees it changed: every other
/// tree is the previous routing's, whose tables were walked when it was made, and the repair
/// kept it only where its routes stay unimodal in `order` — so the walk costs what changed
/// instead of every LID (on Slim Fly q = 17, 0.9 s of a 1.2 s repair).
///
/// # Errors
/// As [`lanes_by_port_pair`].
pub fn lanes_by_port_pair_checking(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    tables: &ForwardingTables,
    order: &CableOrder,
    config: &PortPairConfig,
    check: &(dyn Fn(u16) -> bool + Sync),
) -> Result<PortPairLanes, DeadlockError> {
    let lanes = lanes(fabric, graph, order, config)?;
    if let Some((routes, example)) = valleys(fabric, lids, tables, &lanes.sl2vl, check) {
        return Err(DeadlockError::NotUnimodal { routes, example });
    }
    Ok(lanes)
}

/// Of the LIDs for which `check` holds, those whose routes in `tables` leave the lanes by port
/// pair of `order` somewhere (a route that takes a descending lane and then an ascending one),
/// in LID order.
///
/// # Errors
/// As [`lanes_by_port_pair`]: the VLs do not make the lanes.
pub fn lids_leaving_the_lanes(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    tables: &ForwardingTables,
    order: &CableOrder,
    config: &PortPairConfig,
    check: &(dyn Fn(u16) -> bool + Sync),
) -> Result<Vec<u16>, DeadlockError> {
    let lanes = lanes(fabric, graph, order, config)?;
    Ok(valleys_by_lid(fabric, lids, tables, &lanes.sl2vl, check)
        .into_iter()
        .map(|(lid, _, _)| lid)
        .collect())
}

/// The lanes by port pair of `order` with `config`'s VLs, before any route is checked.
fn lanes(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: &CableOrder,
    config: &PortPairConfig,
) -> Result<PortPairLanes, DeadlockError> {
    Ok(PortPairLanes {
        classes: classes(config.vls)?,
        sl2vl: port_pair_sl2vl(fabric, graph, order, config.vls)?,
    })
}

/// Counts the (switch, destination LID) routes of `tables` that take a descending lane and
/// then an ascending one in `sl2vl` (lanes as [`port_pair_sl2vl`] numbers them: odd VLs
/// descend), with one of them described; `None` when there is none.
///
/// Per destination, a route through switch v enters v's next cable on the descending lane if
/// any switch forwarding to v does so over a port pair of v mapped to it; a valley is a
/// switch u whose next cable some route enters descending and whose next switch v maps the
/// pair (u's cable, v's next cable) to the ascending lane. Linear in switches × LIDs.
fn valleys(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    sl2vl: &Sl2VlTables,
    check: &(dyn Fn(u16) -> bool + Sync),
) -> Option<(u64, String)> {
    let mut found = valleys_by_lid(fabric, lids, tables, sl2vl, check).into_iter();
    let (_, first, example) = found.next()?;
    Some((
        first + found.map(|(_, count, _)| count).sum::<u64>(),
        example,
    ))
}

/// The destination LIDs of `tables` whose routes have valleys in `sl2vl` (see [`valleys`]), in
/// LID order: each with its count of valleys and one described.
fn valleys_by_lid(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    sl2vl: &Sl2VlTables,
    check: &(dyn Fn(u16) -> bool + Sync),
) -> Vec<(u16, u64, String)> {
    let net = Channels::new(fabric, lids, Traffic { switch_lids: true });
    let n = net.len();
    let descending = DescendingPairs::new(fabric, &net.switches, sl2vl);
    // The lane of the cable leaving v's next hop for a packet arriving over v's next cable:
    // `None` when v's next hop delivers (or v's walk ends at v).
    let lane_after = |walk: &DestWalk, v: usize| -> Option<(usize, bool)> {
        let l = walk.next(v);
        if l == NONE || !net.links[l as usize].between_switches() {
            return None;
        }
        let arrived = net.links[l as usize];
        let w = arrived.to_switch as usize;
        let out = walk.next(w);
        if out == NONE || !net.links[out as usize].between_switches() {
            return None;
        }
        let (in_port, out_port) = (arrived.to.port, net.links[out as usize].from.port);
        let descends = descending
            .get(w, in_port, out_port)
            .unwrap_or_else(|| sl2vl.switch_vl(net.switches[w], in_port, out_port, 0) % 2 == 1);
        Some((w, descends))
    };
    // Destinations are independent: each thread walks its own, and the results are collected
    // in the destinations' order, whatever the threads.
    net.dests
        .par_iter()
        .filter(|d| check(d.lid))
        .map_init(
            || (DestWalk::new(n), vec![false; n]),
            |(walk, descends), dest| {
                walk.walk(&net, tables, dest, |_| NONE);
                descends.fill(false);
                for v in 0..n {
                    if let Some((w, true)) = lane_after(walk, v) {
                        descends[w] = true;
                    }
                }
                let (mut count, mut example) = (0u64, None);
                for (v, &entered_descending) in descends.iter().enumerate() {
                    if entered_descending && let Some((w, false)) = lane_after(walk, v) {
                        count += 1;
                        example.get_or_insert_with(|| {
                            format!(
                                "towards LID {}, routes enter {} on the descending lane and \
                                 leave over {} on the ascending one",
                                dest.lid,
                                net.link_name(walk.next(v)),
                                net.link_name(walk.next(w))
                            )
                        });
                    }
                }
                example.map(|example| (dest.lid, count, example))
            },
        )
        .flatten()
        .collect()
}

/// For every switch (dense index), the (input port, output port) pairs whose SL 0 lane is the
/// descending one (an odd VL), as one bit set. The check looks up two pairs per switch and LID;
/// read from the SL-to-VL tables (16 bytes per pair, megabytes in all on large fabrics) each
/// lookup missed the cache, and the lookups took most of the check (Slim Fly q = 19: 44,042
/// LIDs × 722 switches).
struct DescendingPairs {
    /// Where each switch's pairs start, in bits, and its ports plus one (port 0 included).
    base: Vec<usize>,
    ports: Vec<usize>,
    bits: Vec<u64>,
}

impl DescendingPairs {
    fn new(fabric: &Fabric, switches: &[NodeId], sl2vl: &Sl2VlTables) -> Self {
        let ports: Vec<usize> = switches
            .iter()
            .map(|&id| usize::from(fabric.node(id).num_ports()) + 1)
            .collect();
        let mut base = Vec::with_capacity(switches.len());
        let mut total = 0;
        for &p in &ports {
            base.push(total);
            total += p * p;
        }
        let mut bits = vec![0u64; total.div_ceil(64)];
        for (w, &id) in switches.iter().enumerate() {
            for in_port in 0..ports[w] {
                for out_port in 0..ports[w] {
                    if sl2vl.switch_vl(id, in_port as u8, out_port as u8, 0) % 2 == 1 {
                        let at = base[w] + in_port * ports[w] + out_port;
                        bits[at / 64] |= 1 << (at % 64);
                    }
                }
            }
        }
        Self { base, ports, bits }
    }

    /// Whether switch w sends SL 0 from `in_port` to `out_port` on the descending lane; `None`
    /// for a port beyond the switch's ports (read from the tables instead).
    fn get(&self, w: usize, in_port: u8, out_port: u8) -> Option<bool> {
        let ports = self.ports[w];
        let (i, o) = (usize::from(in_port), usize::from(out_port));
        (i < ports && o < ports).then(|| {
            let at = self.base[w] + i * ports + o;
            self.bits[at / 64] & (1 << (at % 64)) != 0
        })
    }
}

/// The VLs of one class: the ascending lane and the descending lane.
pub const LANES_PER_CLASS: u8 = 2;

/// How the SLs map to classes for `vls` data VLs: `sl mod classes`, classes = vls / 2.
///
/// # Errors
/// Fewer than two VLs, or more than 15.
pub fn classes(vls: u8) -> Result<u8, DeadlockError> {
    if !(LANES_PER_CLASS..=15).contains(&vls) {
        return Err(DeadlockError::BadVls {
            vls,
            needed: "2 to 15 (an ascending and a descending lane)",
        });
    }
    Ok(vls / LANES_PER_CLASS)
}

/// The row of the ascending (`descending = false`) or descending lane: SL s takes VL
/// 2 · (s mod classes) + descending.
pub fn lane_row(classes: u8, descending: bool) -> SlVlRow {
    std::array::from_fn(|sl| {
        let class = (sl % usize::from(classes.max(1))) as u8;
        class * LANES_PER_CLASS + u8::from(descending)
    })
}

/// The SL-to-VL tables of every switch and endpoint port of `fabric` for `order` over
/// `graph` (the routing graph of the same fabric) with `vls` data VLs.
///
/// A packet leaving a switch over an inter-switch cable takes the descending lane when it
/// arrived over a cable ranked above that one, else the ascending lane (arriving from an
/// endpoint or from the switch itself counts as ascending). Deliveries to endpoints and the
/// endpoints' own sends take the ascending lane: nothing depends on them.
///
/// # Errors
/// A VL count without room for one class ([`classes`]).
pub fn port_pair_sl2vl(
    fabric: &Fabric,
    graph: &RoutingGraph,
    order: &CableOrder,
    vls: u8,
) -> Result<Sl2VlTables, DeadlockError> {
    let classes = classes(vls)?;
    let (up, down) = (lane_row(classes, false), lane_row(classes, true));
    let mut tables = Sl2VlTables::new(fabric, up);
    // Per local port: the edge a packet leaves over, and the edge it arrived over (the
    // reverse direction of the same cable).
    let (mut out_edge, mut in_edge): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for (s, &node) in graph.nodes.iter().enumerate() {
        let ports = fabric.node(node).num_ports();
        out_edge.clear();
        out_edge.resize(usize::from(ports) + 1, NONE);
        in_edge.clear();
        in_edge.resize(usize::from(ports) + 1, NONE);
        for e in graph.edges(s) {
            let back = graph
                .edge_between(graph.edge_to[e] as usize, s)
                .expect("cables are symmetric");
            for &p in graph.ports(e) {
                out_edge[usize::from(p)] = e as u32;
                in_edge[usize::from(p)] = back as u32;
            }
        }
        let mut t = SwitchSl2Vl::new(ports);
        let (up_id, down_id) = (t.add_row(up), t.add_row(down));
        for in_port in 0..=ports {
            let from = in_edge[usize::from(in_port)];
            let from = (from != NONE).then_some(from as usize);
            for out_port in 1..=ports {
                let to = out_edge[usize::from(out_port)];
                let descending = to != NONE && !order.ascends(from, to as usize);
                t.set_id(in_port, out_port, if descending { down_id } else { up_id });
            }
        }
        tables.set_switch(node, t);
    }
    for (i, node) in fabric.nodes().iter().enumerate() {
        if node.is_switch() {
            continue;
        }
        let id = crate::topology::NodeId(i as u32);
        for (port, _) in fabric.neighbours(id) {
            tables.set_port(PortRef { node: id, port }, up);
        }
    }
    debug_assert_eq!(up.len(), SLS);
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadlock::verify::verify_every_sl;
    use crate::routing::{RoutingConfig, Turns, assign_lids, route_fabric};
    use crate::topology::TopologySpec;

    #[test]
    fn every_sl_of_a_class_shares_its_two_lanes() {
        for vls in 2..=15u8 {
            let classes = classes(vls).unwrap();
            let (up, down) = (lane_row(classes, false), lane_row(classes, true));
            for sl in 0..SLS {
                assert_eq!(up[sl] / 2, down[sl] / 2, "vls {vls}: one class per SL");
                assert_eq!(down[sl], up[sl] + 1);
                assert!(down[sl] < vls, "vls {vls}: SL {sl} maps beyond the VLs");
            }
        }
        assert!(classes(1).is_err());
        assert!(classes(16).is_err());
    }

    fn slim_fly_q5() -> Fabric {
        "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap()
    }

    #[test]
    fn switch_rows_follow_the_order_for_every_port_pair() {
        let fabric = slim_fly_q5();
        let graph = RoutingGraph::new(&fabric);
        let order = CableOrder::random(&graph, 2);
        let tables = port_pair_sl2vl(&fabric, &graph, &order, 8).unwrap();
        for s in 0..graph.len() {
            for a in graph.edges(s) {
                for b in graph.edges(s) {
                    // A packet that arrived over the reverse of a and leaves over b.
                    let back = graph.edge_between(graph.edge_to[a] as usize, s).unwrap();
                    let (pa, pb) = (graph.ports(a)[0], graph.ports(b)[0]);
                    if a == b {
                        continue;
                    }
                    for sl in 0..16u8 {
                        let vl = tables.switch_vl(graph.nodes[s], pa, pb, sl);
                        let ascending = order.rank(back) < order.rank(b);
                        assert_eq!(
                            vl.is_multiple_of(2),
                            ascending,
                            "switch {s} {pa}->{pb} SL {sl}"
                        );
                        assert_eq!(vl / 2, sl % 4, "class of SL {sl}");
                    }
                }
            }
        }
    }

    /// Routes `spec` with `turns` and checks the tables with lanes by port pair (8 VLs) with
    /// every route on every SL at once (one channel dependency graph: senders that put any
    /// fixed SL into their packets, each its own); returns whether that is deadlock-free.
    fn deadlock_free_for_every_sl(spec: &str, layers: usize, turns: Turns) -> bool {
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
        let config = RoutingConfig {
            layers,
            seed: 3,
            turns,
            ..RoutingConfig::default()
        };
        let routed = route_fabric(&fabric, &config).unwrap();
        let order = CableOrder::for_routing(&routed.graph, config.seed);
        let sl2vl = port_pair_sl2vl(&fabric, &routed.graph, &order, 8).unwrap();
        verify_every_sl(&fabric, &routed.lids, &routed.tables, &sl2vl).is_deadlock_free()
    }

    #[test]
    fn unimodal_routing_is_deadlock_free_for_every_sl_with_lanes_by_port_pair() {
        for (spec, layers) in [
            ("slimfly:q=5", 4),
            ("mlfm:d=3", 2),
            ("lsft:n=3", 4),
            ("random:switches=20,degree=4,hosts=2,seed=3", 4),
        ] {
            assert!(
                deadlock_free_for_every_sl(spec, layers, Turns::Unimodal),
                "{spec} L={layers}"
            );
        }
    }

    /// `spec` routed with `turns` (4 layers), and the lanes by port pair for its tables.
    fn lanes_for(spec: &str, turns: Turns) -> Result<PortPairLanes, DeadlockError> {
        let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        let config = RoutingConfig {
            layers: 4,
            seed: 5,
            turns,
            ..RoutingConfig::default()
        };
        let routed = route_fabric(&fabric, &config).unwrap();
        let order = CableOrder::for_routing(&routed.graph, config.seed);
        lanes_by_port_pair(
            &fabric,
            &routed.lids,
            &routed.graph,
            &routed.tables,
            &order,
            &PortPairConfig { vls: 4 },
        )
    }

    #[test]
    fn lanes_are_given_to_tables_whose_routes_all_rise_then_fall() {
        for spec in [
            "slimfly:q=5",
            "mlfm:d=3",
            "random:switches=20,degree=4,hosts=2,seed=3",
        ] {
            let lanes = lanes_for(spec, Turns::Unimodal).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(lanes.classes, 2, "{spec}");
        }
    }

    #[test]
    fn lanes_are_refused_to_tables_with_a_valley_naming_one() {
        let Err(DeadlockError::NotUnimodal { routes, example }) =
            lanes_for("slimfly:q=5", Turns::Any)
        else {
            panic!("the unconstrained routing has valleys in any order")
        };
        assert!(routes > 0);
        assert!(example.contains("towards LID"), "{example}");
    }

    /// The bit set against the tables it is read from, for every port pair of every switch,
    /// and no answer beyond a switch's ports.
    #[test]
    fn the_descending_pairs_are_those_the_tables_map_to_odd_vls() {
        let fabric = slim_fly_q5();
        let graph = RoutingGraph::new(&fabric);
        let order = CableOrder::for_routing(&graph, 1);
        let sl2vl = port_pair_sl2vl(&fabric, &graph, &order, 8).unwrap();
        let switches: Vec<NodeId> = fabric.switches().collect();
        let pairs = DescendingPairs::new(&fabric, &switches, &sl2vl);
        let mut descending = 0;
        for (w, &id) in switches.iter().enumerate() {
            let ports = fabric.node(id).num_ports();
            for in_port in 0..=ports {
                for out_port in 0..=ports {
                    let expected = sl2vl.switch_vl(id, in_port, out_port, 0) % 2 == 1;
                    assert_eq!(pairs.get(w, in_port, out_port), Some(expected));
                    descending += usize::from(expected);
                }
            }
            assert_eq!(pairs.get(w, ports + 1, 1), None);
            assert_eq!(pairs.get(w, 1, ports + 1), None);
        }
        assert!(
            descending > 0,
            "no descending pair: the check would be vacuous"
        );
    }

    #[test]
    fn the_verifier_finds_the_deadlocks_of_routes_that_ignore_the_order() {
        // The same lanes under the unconstrained routing: valleys close cycles, so the check
        // above is not passing vacuously.
        assert!(!deadlock_free_for_every_sl("slimfly:q=5", 4, Turns::Any));
    }
}
