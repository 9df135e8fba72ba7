//! Routings to check schedules on: the core's minimal routing, and the MLFM layer layout.

use super::schemes::{MlfmSpine, same_column_peer};
use crate::routing::graph::RoutingGraph;
use crate::routing::layered::route;
use crate::routing::layers::Layers;
use crate::routing::{
    Algorithm, ForwardingTables, LidError, LidTable, RoutingConfig, assign_lids, forwarding_tables,
};
use crate::topology::mlfm::Mlfm;
use crate::topology::{Fabric, PortRef};

/// The routing the core computes for a generated fabric: LIDs with 2^lmc per port (assigned
/// when the fabric has none), every layer minimal and balanced ([`Algorithm::Minimal`]). On
/// LSFT and MLFM, minimal paths between leaves of different lines / columns are unique.
///
/// # Errors
/// Too many LIDs for IB, or conflicting LIDs in the fabric.
pub fn core_tables(
    fabric: &mut Fabric,
    layers: usize,
) -> Result<(LidTable, ForwardingTables), LidError> {
    let layers = layers.max(1).next_power_of_two();
    let has_lids = fabric
        .nodes()
        .iter()
        .any(|n| n.ports.iter().any(|p| p.lid != 0));
    if !has_lids {
        assign_lids(fabric, layers.trailing_zeros() as u8)?;
    }
    let lids = LidTable::from_fabric(fabric)?;
    let graph = RoutingGraph::new(fabric);
    let routed = route(
        &graph,
        &RoutingConfig {
            layers,
            algorithm: Algorithm::Minimal,
            seed: 1,
            ..Default::default()
        },
    );
    let tables = forwarding_tables(fabric, &graph, &routed, &lids);
    Ok((lids, tables))
}

/// The MLFM layer layout: the core's minimal routing (`core_tables` on the same LIDs), with
/// the entries of same-column traffic replaced so that the spine is determined:
/// at leaf (i, j), a LID of a server on leaf (i', j), i' ≠ i, goes up to spine {j, j''} with
/// * [`MlfmSpine::BySource`]: j'' = [`same_column_peer`]`(j, x, ℓ, d)` for the LID's offset
///   x (layer x = the source's server index k in the MLFM schedule) — the layers of
///   [`mlfm_layers`], so the leaf's own LID (layer 0) takes layer 0's spine too;
/// * [`MlfmSpine::ByDestination`]: j'' = same_column_peer(j, k', ℓ, d) for the destination's
///   server index k' (every layer alike).
///
/// `columns` is the allocation's ℓ (d + 1 for the whole machine). Everything else
/// (different columns: the unique two-hop path; same leaf: the server port; spines: the
/// minimal routes) is left as the core routes it. Servers are found by their construction
/// names `srv<i>-<j>-<k>` on leaves `leaf<i>-<j>`.
///
/// # Panics
/// If the fabric is not the construction's (a missing leaf or spine name).
pub fn mlfm_layer_tables(
    mlfm: &Mlfm,
    fabric: &Fabric,
    lids: &LidTable,
    columns: u32,
    spine: MlfmSpine,
) -> ForwardingTables {
    let d = mlfm.d();
    let layers = lids
        .iter()
        .map(|(_, o)| usize::from(o.offset) + 1)
        .max()
        .unwrap_or(1)
        .next_power_of_two();
    let graph = RoutingGraph::new(fabric);
    if spine == MlfmSpine::BySource {
        let routed = mlfm_layers(mlfm, fabric, &graph, layers, columns);
        return forwarding_tables(fabric, &graph, &routed, lids);
    }
    let routed = route(&graph, &minimal(layers));
    let mut tables = forwarding_tables(fabric, &graph, &routed, lids);
    let leaf = |i: u32, j: u32| {
        fabric
            .node_by_name(&format!("leaf{i}-{j}"))
            .unwrap_or_else(|| panic!("no leaf{i}-{j} in {}", fabric.name))
    };
    for (lid, owner) in lids.iter() {
        if fabric.node(owner.node).is_switch() {
            continue;
        }
        let Some(peer) = fabric.peer(PortRef {
            node: owner.node,
            port: owner.port,
        }) else {
            continue;
        };
        let Some((i2, j, k2)) = parse_server(&fabric.node(owner.node).name) else {
            continue;
        };
        debug_assert_eq!(peer.node, leaf(i2, j));
        let other = same_column_peer(j, k2, columns, d);
        let port = mlfm.leaf_port_to_spine(j, other) as u8;
        for i in (0..d).filter(|&i| i != i2) {
            tables.set(leaf(i, j), lid, port);
        }
    }
    tables
}

/// The layers of the MLFM layout with source-chosen spines ([`MlfmSpine::BySource`]): every
/// layer minimal ([`Algorithm::Minimal`], seed 1), and in layer x every leaf (i, j) reaches
/// every other leaf (i', j) of its column through spine {j, [`same_column_peer`]`(j, x, ℓ,
/// d)`}. Destination routing realises them: a LID with offset x is routed on layer x.
///
/// # Panics
/// If the fabric is not the construction's (a missing leaf or spine name, or no cable
/// between a leaf and its spine).
pub fn mlfm_layers(
    mlfm: &Mlfm,
    fabric: &Fabric,
    graph: &RoutingGraph,
    layers: usize,
    columns: u32,
) -> Layers {
    let d = mlfm.d();
    let mut routed = route(graph, &minimal(layers));
    let switch = |name: String| {
        let id = fabric
            .node_by_name(&name)
            .unwrap_or_else(|| panic!("no {name} in {}", fabric.name));
        graph.index_of[id.index()] as usize
    };
    for x in 0..routed.count() {
        for j in 0..mlfm.columns() {
            let other = same_column_peer(j, x as u32, columns, d);
            let spine = switch(format!("spine{}-{}", j.min(other), j.max(other)));
            for i in 0..d {
                let from = switch(format!("leaf{i}-{j}"));
                let up = graph
                    .edge_between(from, spine)
                    .unwrap_or_else(|| panic!("leaf{i}-{j} has no cable to its spine"));
                for i2 in (0..d).filter(|&i2| i2 != i) {
                    routed.set(x, from, switch(format!("leaf{i2}-{j}")), up, 2);
                }
            }
        }
    }
    routed
}

fn minimal(layers: usize) -> RoutingConfig {
    RoutingConfig {
        layers,
        algorithm: Algorithm::Minimal,
        seed: 1,
        ..Default::default()
    }
}

fn parse_server(name: &str) -> Option<(u32, u32, u32)> {
    let mut parts = name.strip_prefix("srv")?.split('-').map(|x| x.parse().ok());
    let (i, j, k) = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some((i, j, k))
}
