//! The cheap prefix figure: how evenly the summed routes of layers 0..K − 1 spread over the
//! cables (max / mean). No solver and O(routes), so the OpenSM plugin can log it after every
//! routing; the throughput figures of [`super`] are the real judgement.

use serde::{Deserialize, Serialize};

use crate::routing::graph::NONE;
use crate::routing::graph::RoutingGraph;
use crate::routing::layers::Layers;
use crate::routing::{ForwardingTables, LidTable, lid_tree};
use crate::topology::{Fabric, PortRef};

/// The summed load of one prefix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrefixBalance {
    /// K: layers 0..K summed.
    pub layers: usize,
    /// The heaviest cable's summed routes.
    pub max: u64,
    /// The mean over the cables.
    pub mean: f64,
    /// `max / mean` (0 when nothing is routed).
    pub max_over_mean: f64,
}

/// Per prefix in `prefixes`, the balance of `loads[0] + … + loads[K − 1]` (one load per cable
/// and layer; every cable counted).
pub fn prefix_balance(loads: &[Vec<u64>], prefixes: &[usize]) -> Vec<PrefixBalance> {
    let cables = loads.first().map_or(0, Vec::len);
    let mut sum = vec![0u64; cables];
    let mut summed = 0;
    let mut out = Vec::new();
    for &k in prefixes {
        for layer in loads.iter().take(k).skip(summed) {
            sum.iter_mut().zip(layer).for_each(|(a, b)| *a += b);
        }
        summed = summed.max(k.min(loads.len()));
        let max = sum.iter().copied().max().unwrap_or(0);
        let mean = if cables == 0 {
            0.0
        } else {
            sum.iter().sum::<u64>() as f64 / cables as f64
        };
        out.push(PrefixBalance {
            layers: k,
            max,
            mean,
            max_over_mean: if mean > 0.0 { max as f64 / mean } else { 0.0 },
        });
    }
    out
}

/// Routes per layer and directed edge of the routing graph: every switch pair's path of the
/// layer, weighted by sending hosts × receiving hosts (what a routing engine has at hand
/// before any table is written).
pub fn layer_loads(graph: &RoutingGraph, layers: &Layers) -> Vec<Vec<u64>> {
    layer_loads_by(graph, layers.count(), |l, v, t, _| {
        layers.next_edge(l, v, t)
    })
}

/// [`layer_loads`] of what `tables` hold, for `count` layers: the tables of a hierarchical
/// fabric spread each destination switch's LIDs over several next hops, which its layers'
/// trees do not show. An endpoint LID is routed on layer offset mod `count`.
pub fn table_layer_loads(
    fabric: &Fabric,
    graph: &RoutingGraph,
    lids: &LidTable,
    tables: &ForwardingTables,
    count: usize,
) -> Vec<Vec<u64>> {
    let count = count.max(1);
    let mut loads = vec![vec![0u64; graph.edge_count()]; count];
    let n = graph.len();
    for (lid, owner) in lids.iter() {
        let Some(tree) = lid_tree(fabric, graph, count, owner) else {
            continue;
        };
        if tree.delivery_port == 0 {
            continue;
        }
        let t = tree.switch;
        for s in (0..n).filter(|&s| s != t && graph.endpoints[s] > 0) {
            let (mut v, mut steps) = (s, 0);
            while v != t && steps <= n {
                let Some(port) = tables.port(graph.nodes[v], lid) else {
                    break;
                };
                let Some(peer) = fabric.peer(PortRef {
                    node: graph.nodes[v],
                    port,
                }) else {
                    break;
                };
                let w = graph.index_of[peer.node.index()];
                let Some(e) = (w != NONE)
                    .then(|| graph.edge_between(v, w as usize))
                    .flatten()
                else {
                    break;
                };
                loads[tree.layer][e] += u64::from(graph.endpoints[s]);
                v = w as usize;
                steps += 1;
            }
        }
    }
    loads
}

fn layer_loads_by(
    graph: &RoutingGraph,
    count: usize,
    next: impl Fn(usize, usize, usize, ()) -> Option<usize>,
) -> Vec<Vec<u64>> {
    let n = graph.len();
    (0..count)
        .map(|l| {
            let mut loads = vec![0u64; graph.edge_count()];
            for t in (0..n).filter(|&t| graph.endpoints[t] > 0) {
                for s in (0..n).filter(|&s| s != t && graph.endpoints[s] > 0) {
                    let routes = u64::from(graph.endpoints[s]) * u64::from(graph.endpoints[t]);
                    let mut v = s;
                    let mut steps = 0;
                    while v != t && steps <= n {
                        let Some(e) = next(l, v, t, ()) else {
                            break;
                        };
                        loads[e] += routes;
                        v = graph.edge_to[e] as usize;
                        steps += 1;
                    }
                }
            }
            loads
        })
        .collect()
}
