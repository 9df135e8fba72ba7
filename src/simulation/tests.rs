//! The platform against an independent walk of the tables, over fabrics of every family,
//! layer counts and policies; the link model; the traffic patterns.

use super::traffic::{self, IDLE};
use super::*;
use crate::collectives;
use crate::routing::{
    Algorithm, ForwardingTables, LidTable, PathLengths, RoutingConfig, assign_lids, route_fabric,
};
use crate::topology::{Fabric, LinkSpeed, LinkWidth, PortRef, SwitchGraph, TopologySpec};

const FABRICS: [&str; 5] = [
    "slimfly:q=3",
    "mlfm:d=3",
    "lsft:n=3",
    "fattree:leaves=4,spines=2,links-per-pair=1,hosts-per-leaf=3",
    "random:switches=10,degree=3,hosts=2,seed=5",
];

/// A fabric routed by the core with `layers` layers (layered routing).
pub(super) fn routed(spec: &str, layers: usize) -> (Fabric, LidTable, ForwardingTables) {
    let spec: TopologySpec = spec.parse().expect("valid spec");
    let mut fabric = spec.build().expect("buildable");
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).expect("LIDs fit");
    let config = RoutingConfig {
        layers,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
        ..Default::default()
    };
    let r = route_fabric(&fabric, &config).expect("routes");
    (fabric, r.lids, r.tables)
}

/// Every host port of the fabric (each host's first cabled port).
pub(super) fn host_ports(fabric: &Fabric) -> Vec<PortRef> {
    fabric
        .hosts()
        .filter_map(|h| {
            fabric
                .neighbours(h)
                .next()
                .map(|(p, _)| PortRef { node: h, port: p })
        })
        .collect()
}

/// The ports a packet from `from` to LID `lid` leaves, walked entry by entry from the tables
/// (independently of the routing walk the platform uses).
pub(super) fn walk_by_hand(
    fabric: &Fabric,
    tables: &ForwardingTables,
    from: PortRef,
    to: PortRef,
    lid: u16,
) -> Vec<PortRef> {
    let mut leaving = vec![from];
    let mut at = fabric.peer(from).expect("cabled");
    while at != to {
        assert!(leaving.len() < 64, "loop towards LID {lid}");
        let port = tables.port(at.node, lid).expect("an entry");
        let out = PortRef {
            node: at.node,
            port,
        };
        leaving.push(out);
        at = fabric.peer(out).expect("the entry names a cabled port");
    }
    leaving
}

fn assert_routes_follow_tables(spec: &str, layers: usize, policy: &LayerPolicy) {
    let (fabric, lids, tables) = routed(spec, layers);
    let ports = host_ports(&fabric);
    let platform =
        Platform::build(&fabric, &lids, &tables, &ports, &LinkModel::DEFAULT, policy).unwrap();
    assert_eq!(platform.hosts.len(), ports.len());
    for i in 0..ports.len() {
        for j in (0..ports.len()).filter(|&j| j != i) {
            let layer = platform.layer(i, j);
            assert!(usize::from(layer) < layers, "{spec}: layer {layer}");
            let lid = fabric.node(ports[j].node).ports[usize::from(ports[j].port)].lid + layer;
            let expected = walk_by_hand(&fabric, &tables, ports[i], ports[j], lid);
            let got: Vec<PortRef> = platform
                .route(i, j)
                .iter()
                .map(|&l| platform.links[l as usize].from)
                .collect();
            assert_eq!(got, expected, "{spec}: {i} -> {j} on layer {layer}");
            let last = &platform.links[*platform.route(i, j).last().unwrap() as usize];
            assert_eq!(
                last.to, ports[j],
                "{spec}: the route ends at the destination"
            );
        }
        assert!(platform.route(i, i).is_empty());
    }
}

#[test]
fn every_route_follows_the_tables_on_layer_zero() {
    for spec in FABRICS {
        assert_routes_follow_tables(spec, 1, &LayerPolicy::Fixed(0));
    }
}

#[test]
fn every_route_follows_the_tables_on_a_fixed_upper_layer() {
    for spec in FABRICS {
        assert_routes_follow_tables(spec, 4, &LayerPolicy::Fixed(3));
    }
}

#[test]
fn every_route_follows_the_tables_round_robin() {
    for spec in FABRICS {
        for layers in [2, 4] {
            assert_routes_follow_tables(spec, layers, &LayerPolicy::RoundRobin);
        }
    }
}

#[test]
fn round_robin_puts_pair_i_j_on_layer_i_plus_j_mod_layers() {
    let (fabric, lids, tables) = routed("slimfly:q=3", 4);
    let ports = host_ports(&fabric);
    let platform = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::RoundRobin,
    )
    .unwrap();
    for i in 0..ports.len() {
        for j in (0..ports.len()).filter(|&j| j != i) {
            assert_eq!(usize::from(platform.layer(i, j)), (i + j) % 4);
        }
    }
}

#[test]
fn per_pair_layers_are_taken_as_given() {
    let (fabric, lids, tables) = routed("mlfm:d=3", 2);
    let ports: Vec<PortRef> = host_ports(&fabric).into_iter().take(7).collect();
    let n = ports.len();
    let layers: Vec<u16> = (0..n * n).map(|k| (k % 3 % 2) as u16).collect();
    let platform = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::PerPair(layers.clone()),
    )
    .unwrap();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            assert_eq!(platform.layer(i, j), layers[i * n + j]);
        }
    }
}

#[test]
fn a_per_pair_list_of_the_wrong_length_is_refused() {
    let (fabric, lids, tables) = routed("mlfm:d=3", 1);
    let ports = host_ports(&fabric);
    let err = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::PerPair(vec![0; 3]),
    )
    .unwrap_err();
    assert!(matches!(err, PlatformError::PairLayers { given: 3, .. }));
}

#[test]
fn a_layer_the_destination_lacks_is_refused() {
    let (fabric, lids, tables) = routed("slimfly:q=3", 2);
    let ports = host_ports(&fabric);
    let err = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::Fixed(2),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            PlatformError::NoSuchLayer {
                layer: 2,
                lids: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_missing_entry_is_reported_with_the_pair() {
    let (fabric, lids, mut tables) = routed("slimfly:q=3", 1);
    let ports = host_ports(&fabric);
    let dest = ports[1];
    let lid = fabric.node(dest.node).ports[usize::from(dest.port)].lid;
    let source_switch = fabric.peer(ports[0]).unwrap().node;
    let far_switch = fabric
        .switches()
        .find(|&s| s != source_switch && s != fabric.peer(dest).unwrap().node);
    for s in [source_switch].into_iter().chain(far_switch) {
        tables.set(s, lid, crate::routing::NO_PORT);
    }
    let err = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::Fixed(0),
    )
    .unwrap_err();
    match err {
        PlatformError::Unrouted { lid: l, .. } => assert_eq!(l, lid),
        other => panic!("{other}"),
    }
}

#[test]
fn a_port_that_is_no_endpoint_is_refused() {
    let (fabric, lids, tables) = routed("slimfly:q=3", 1);
    let switch = fabric.switches().next().unwrap();
    let err = Platform::build(
        &fabric,
        &lids,
        &tables,
        &[PortRef {
            node: switch,
            port: 1,
        }],
        &LinkModel::DEFAULT,
        &LayerPolicy::Fixed(0),
    )
    .unwrap_err();
    assert!(matches!(err, PlatformError::NotAnEndpoint(_)));
}

#[test]
fn only_the_links_the_routes_use_are_in_the_platform() {
    let (fabric, lids, tables) = routed("slimfly:q=3", 1);
    let ports: Vec<PortRef> = host_ports(&fabric).into_iter().take(2).collect();
    let platform = Platform::build(
        &fabric,
        &lids,
        &tables,
        &ports,
        &LinkModel::DEFAULT,
        &LayerPolicy::Fixed(0),
    )
    .unwrap();
    let mut used: Vec<u32> = [platform.route(0, 1), platform.route(1, 0)].concat();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), platform.links.len());
}

#[test]
fn host_ids_are_node_names_and_unique() {
    for spec in FABRICS {
        let (fabric, lids, tables) = routed(spec, 1);
        let ports = host_ports(&fabric);
        let platform = Platform::build(
            &fabric,
            &lids,
            &tables,
            &ports,
            &LinkModel::DEFAULT,
            &LayerPolicy::Fixed(0),
        )
        .unwrap();
        let mut ids: Vec<&str> = platform.hosts.iter().map(|h| h.id.as_str()).collect();
        for (host, port) in platform.hosts.iter().zip(&ports) {
            assert_eq!(host.id, fabric.node(port.node).name.replace(' ', "_"));
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ports.len(), "{spec}");
    }
}

#[test]
fn bandwidth_is_lanes_times_the_lane_data_rate() {
    let model = LinkModel::DEFAULT;
    assert_eq!(model.bandwidth(None, None), 100.0);
    assert_eq!(
        model.bandwidth(Some(LinkWidth::X4), Some(LinkSpeed::Qdr)),
        32.0
    );
    assert_eq!(
        model.bandwidth(Some(LinkWidth::X2), Some(LinkSpeed::Hdr)),
        100.0
    );
    for speed in LinkSpeed::ALL {
        for width in LinkWidth::ALL {
            let gbps = model.bandwidth(Some(width), Some(speed));
            // Encoding costs something, never more than 8b/10b does.
            assert!(gbps <= f64::from(width.lanes()) * speed.lane_gbps());
            assert!(gbps >= 0.8 * f64::from(width.lanes()) * speed.lane_gbps() * 0.9);
        }
    }
    let fixed = LinkModel {
        bandwidth_gbps: Some(7.5),
        ..LinkModel::DEFAULT
    };
    assert_eq!(
        fixed.bandwidth(Some(LinkWidth::X12), Some(LinkSpeed::Ndr)),
        7.5
    );
}

#[test]
fn a_random_permutation_is_a_permutation() {
    for ranks in [1, 2, 7, 50] {
        for seed in 0..5 {
            let t = traffic::random_permutation(ranks, seed);
            let mut d = t.phases[0].clone();
            d.sort_unstable();
            assert_eq!(d, (0..ranks as u32).collect::<Vec<_>>());
        }
    }
}

#[test]
fn adversarial_traffic_sends_a_switch_s_ranks_to_one_farthest_switch() {
    for spec in ["slimfly:q=3", "slimfly:q=5", "mlfm:d=3"] {
        let fabric: Fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
        let graph = SwitchGraph::new(&fabric);
        let mut dense = vec![u32::MAX; fabric.nodes().len()];
        for s in 0..graph.len() {
            dense[graph.node(s).index()] = s as u32;
        }
        let switch_of: Vec<u32> = host_ports(&fabric)
            .iter()
            .map(|&p| dense[fabric.peer(p).unwrap().node.index()])
            .collect();
        let distance = all_distances(&graph);
        let n = graph.len();
        let table = traffic::adversarial(&switch_of, |a, b| distance[a as usize * n + b as usize]);
        let diameter = (0..switch_of.len())
            .map(|r| distance[switch_of[0] as usize * n + switch_of[r] as usize])
            .max()
            .unwrap();
        let first = switch_of[0];
        let target = switch_of[table.phases[0][0] as usize];
        assert_eq!(distance[first as usize * n + target as usize], diameter);
        for (r, &d) in table.phases[0].iter().enumerate() {
            assert_ne!(d, IDLE);
            let same_switch: Vec<u32> = (0..switch_of.len())
                .filter(|&k| switch_of[k] == switch_of[r])
                .map(|k| switch_of[table.phases[0][k] as usize])
                .collect();
            assert!(same_switch.iter().all(|&t| t == same_switch[0]), "{spec}");
            assert_ne!(switch_of[d as usize], switch_of[r], "{spec}");
        }
    }
}

/// Hop distances between all switches (breadth-first search).
fn all_distances(graph: &SwitchGraph) -> Vec<u32> {
    let n = graph.len();
    let mut d = vec![u32::MAX; n * n];
    for s in 0..n {
        let mut queue = std::collections::VecDeque::from([s]);
        d[s * n + s] = 0;
        while let Some(u) = queue.pop_front() {
            for &v in graph.neighbours(u) {
                if d[s * n + v as usize] == u32::MAX {
                    d[s * n + v as usize] = d[s * n + u] + 1;
                    queue.push_back(v as usize);
                }
            }
        }
    }
    d
}

#[test]
fn schedule_pair_layers_are_the_schedules_lid_offsets() {
    let schedule = collectives::mlfm(3, 2, 3, 2, collectives::MlfmSpine::BySource).unwrap();
    let layers = traffic::schedule_pair_layers(&schedule);
    let n = schedule.ranks.len();
    for phase in &schedule.phases {
        for (r, &d) in phase.destination.iter().enumerate() {
            assert_eq!(layers[r * n + d as usize], u16::from(phase.offset(r)));
        }
    }
    assert!(layers.iter().any(|&l| l > 0));
}

#[test]
fn a_schedules_phase_table_keeps_its_phases_in_order() {
    let schedule = collectives::lsft_full(3).unwrap();
    let table = traffic::from_schedule(&schedule);
    assert_eq!(table.phases.len(), schedule.phases.len());
    for (row, phase) in table.phases.iter().zip(&schedule.phases) {
        assert_eq!(row, &phase.destination);
    }
    assert_eq!(table.max_messages_sent(), schedule.ranks.len() - 1);
}

#[test]
fn parallel_copies_take_the_destination_copys_layer_along_the_tables() {
    for spec in FABRICS {
        let (fabric, lids, tables) = routed(spec, 4);
        let ports = host_ports(&fabric);
        let n = ports.len();
        let copies: Vec<PortRef> = (0..4).flat_map(|_| ports.iter().copied()).collect();
        let policy = LayerPolicy::Parallel { endpoints: n };
        let platform = Platform::build(
            &fabric,
            &lids,
            &tables,
            &copies,
            &LinkModel::DEFAULT,
            &policy,
        )
        .unwrap();
        let ids: std::collections::HashSet<&str> =
            platform.hosts.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids.len(), 4 * n, "{spec}: host ids are unique");
        for a in 0..4 * n {
            for b in (0..4 * n).filter(|&b| ports[b % n] != ports[a % n]) {
                let layer = platform.layer(a, b);
                assert_eq!(usize::from(layer), b / n, "{spec}: {a} -> {b}");
                let to = ports[b % n];
                let lid = fabric.node(to.node).ports[usize::from(to.port)].lid + layer;
                let expected = walk_by_hand(&fabric, &tables, ports[a % n], to, lid);
                let got: Vec<PortRef> = platform
                    .route(a, b)
                    .iter()
                    .map(|&l| platform.links[l as usize].from)
                    .collect();
                assert_eq!(got, expected, "{spec}: {a} -> {b} on layer {layer}");
            }
        }
    }
}

#[test]
fn parallel_copies_beyond_the_destinations_lids_are_refused() {
    let (fabric, lids, tables) = routed("slimfly:q=3", 2);
    let ports = host_ports(&fabric);
    let n = ports.len();
    let copies: Vec<PortRef> = (0..4).flat_map(|_| ports.iter().copied()).collect();
    let err = Platform::build(
        &fabric,
        &lids,
        &tables,
        &copies,
        &LinkModel::DEFAULT,
        &LayerPolicy::Parallel { endpoints: n },
    )
    .unwrap_err();
    assert!(
        matches!(err, PlatformError::NoSuchLayer { lids: 2, .. }),
        "{err}"
    );
}

#[test]
fn splitting_over_copies_sends_copy_k_of_a_rank_to_copy_k_of_its_destination() {
    for (ranks, copies) in [(1, 1), (5, 2), (12, 4), (7, 3)] {
        let mut table = traffic::random_permutation(ranks, ranks as u64);
        table.phases.push(
            (0..ranks as u32)
                .map(|r| if r % 2 == 0 { IDLE } else { 0 })
                .collect(),
        );
        let split = traffic::split_over_copies(&table, copies);
        assert_eq!(split.ranks, ranks * copies);
        assert_eq!(split.phases.len(), table.phases.len());
        for (phase, original) in split.phases.iter().zip(&table.phases) {
            assert_eq!(phase.len(), ranks * copies);
            for (a, &d) in phase.iter().enumerate() {
                let (k, r) = (a / ranks, a % ranks);
                match original[r] {
                    IDLE => assert_eq!(d, IDLE),
                    o => assert_eq!(d as usize, k * ranks + o as usize),
                }
            }
        }
        assert_eq!(split.max_messages_sent(), table.max_messages_sent());
    }
}
