//! "This fabric, routed with these settings": built from its spec, LIDs assigned, routed —
//! once per test process. Routing the large fabrics dominates the routing and deadlock tests,
//! and several tests ask for the same routing (every deadlock scheme of one routing, every
//! VL search of one routing), so the first test to ask routes and the others share the result;
//! a test asking while another routes the same fabric waits for it.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ibfabric::Fabric;
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig};
use ibfabric::routing::{Routed, assign_lids, route_fabric};
use ibfabric::topology::TopologySpec;

/// A fabric with its LIDs and the routing of it.
pub struct RoutedFabric {
    /// The fabric, its ports carrying the LIDs (LMC = log2 of the layer count).
    pub fabric: Fabric,
    /// What the routing computed: LIDs, switch graph, layers, forwarding tables.
    pub routed: Routed,
}

/// `spec` routed with `config`, shared by every test of this process that asks for it.
///
/// # Panics
/// If the spec is invalid or the routing fails (the message names both).
pub fn routed(spec: &str, config: &RoutingConfig) -> Arc<RoutedFabric> {
    static ROUTED: Memo<(String, RoutingConfig), RoutedFabric> = Memo::new();
    ROUTED.get_or_compute((spec.to_owned(), config.clone()), || route(spec, config))
}

/// `spec` routed by layered routing with the default path lengths, `layers` layers and `seed`.
pub fn layered(spec: &str, layers: usize, seed: u64) -> Arc<RoutedFabric> {
    routed(
        spec,
        &RoutingConfig {
            layers,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed,
            ..Default::default()
        },
    )
}

fn route(spec: &str, config: &RoutingConfig) -> RoutedFabric {
    let topology: TopologySpec = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut fabric = topology.build().unwrap_or_else(|e| panic!("{spec}: {e}"));
    let lmc = config.layers.trailing_zeros() as u8;
    assign_lids(&mut fabric, lmc).unwrap_or_else(|e| panic!("{spec} LMC {lmc}: {e}"));
    let routed = route_fabric(&fabric, config).unwrap_or_else(|e| panic!("{spec} {config:?}: {e}"));
    RoutedFabric { fabric, routed }
}

/// Values computed once per key and test process, each behind its own cell, so that tests
/// computing different keys run in parallel and tests asking for the same key wait for one
/// computation.
pub struct Memo<K, V> {
    cells: Mutex<Vec<(K, Cell<V>)>>,
}

/// The value of one key, once computed.
type Cell<V> = Arc<OnceLock<Arc<V>>>;

impl<K: PartialEq, V> Memo<K, V> {
    /// An empty memo (for a `static`).
    pub const fn new() -> Self {
        Self {
            cells: Mutex::new(Vec::new()),
        }
    }

    /// The value for `key`, computed by `compute` if no test has asked for it yet.
    pub fn get_or_compute(&self, key: K, compute: impl FnOnce() -> V) -> Arc<V> {
        let cell = {
            // A test that panicked while holding the lock left the list intact: go on.
            let mut cells = self.cells.lock().unwrap_or_else(PoisonError::into_inner);
            match cells.iter().find(|(k, _)| *k == key) {
                Some((_, cell)) => Arc::clone(cell),
                None => {
                    let cell = Arc::new(OnceLock::new());
                    cells.push((key, Arc::clone(&cell)));
                    cell
                }
            }
        };
        Arc::clone(cell.get_or_init(|| Arc::new(compute())))
    }
}
