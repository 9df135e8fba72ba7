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
use super::sl2vl::{SLS, Sl2VlTables, SlVlRow, SwitchSl2Vl};
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::{NONE, RoutingGraph};
use crate::topology::{Fabric, PortRef};

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
    use crate::deadlock::path_sl::DefaultSl;
    use crate::deadlock::verify::{RouteSls, VerifyOptions, verify};
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

    #[test]
    fn switch_rows_follow_the_order_for_every_port_pair() {
        let fabric = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
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
                        assert_eq!(vl % 2 == 0, ascending, "switch {s} {pa}->{pb} SL {sl}");
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
        let every_sl = VerifyOptions {
            sls: RouteSls::EverySl,
            ..VerifyOptions::default()
        };
        verify(
            &fabric,
            &routed.lids,
            &routed.tables,
            &DefaultSl(0),
            &sl2vl,
            &every_sl,
        )
        .is_deadlock_free()
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

    #[test]
    fn the_verifier_finds_the_deadlocks_of_routes_that_ignore_the_order() {
        // The same lanes under the unconstrained routing: valleys close cycles, so the check
        // above is not passing vacuously.
        assert!(!deadlock_free_for_every_sl("slimfly:q=5", 4, Turns::Any));
    }
}
