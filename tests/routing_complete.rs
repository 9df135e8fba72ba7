//! Every routing algorithm fills complete, loop-free forwarding tables on every fabric of the
//! acceptance set and every layer count, as the independent analyser walks them; layer 0 is
//! minimal and layered paths never exceed max(d + 1, 3) hops.

use crate::common;

use common::fabrics::acceptance_set;
use common::routed::routed;
use ibfabric::analysis::{Options, analyze};
use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig};

/// Routes `spec` with `layers` layers of `algorithm` (seed 7) and checks the tables.
fn check(spec: &str, layers: usize, algorithm: Algorithm) {
    let config = RoutingConfig {
        layers,
        algorithm: algorithm.clone(),
        seed: 7,
        ..Default::default()
    };
    let routed = routed(spec, &config);
    let (fabric, routed) = (&routed.fabric, &routed.routed);
    let report = analyze(fabric, &routed.lids, &routed.tables, &Options::default());
    assert!(
        report.is_complete(),
        "{spec} L={layers} {algorithm:?}:\n{report}"
    );
    assert_eq!(report.paths.len(), layers, "{spec}");
    assert!(
        report.paths[0].longer == 0 && report.paths[0].plus_one == 0,
        "{spec}: layer 0 minimal"
    );
    if let Algorithm::Layered(lengths) = algorithm {
        // A pair at distance d may take up to max(d + min_extra_hops, max_hops) hops.
        let graph = &routed.graph;
        let diameter = (0..graph.len())
            .flat_map(|t| graph.dist_to(t).iter().copied())
            .max()
            .unwrap_or(0);
        let bound = u32::from(lengths.max_hops.max(diameter + lengths.min_extra_hops));
        for layer in &report.paths {
            assert!(
                layer.max_hops <= bound,
                "{spec} L={layers}: layer {} has {}-hop paths (bound {bound})",
                layer.layer,
                layer.max_hops
            );
        }
        if diameter == 2 {
            assert!(
                report.paths.iter().all(|l| l.max_hops <= 3),
                "{spec} L={layers}: a path over 3 hops"
            );
        }
    }
}

/// One module per fabric of the acceptance set, one test per layer count.
macro_rules! layered_routing_is_complete {
    ($($name:ident $spec:literal $size:ident,)*) => {$(
        mod $name {
            use super::*;
            fn check_layered(layers: usize) {
                check($spec, layers, Algorithm::Layered(PathLengths::default()));
            }
            #[test]
            fn layers_1() {
                check_layered(1);
            }
            #[test]
            fn layers_2() {
                check_layered(2);
            }
            #[test]
            fn layers_4() {
                check_layered(4);
            }
            #[test]
            fn layers_8() {
                check_layered(8);
            }
        }
    )*};
}

/// The baselines with 4 layers, on every fabric but the two largest Slim Flies.
macro_rules! baselines_are_complete {
    ($($name:ident $spec:literal $size:ident,)*) => {$(
        baselines_are_complete!(@one $name $spec $size);
    )*};
    (@one $name:ident $spec:literal large) => {};
    (@one $name:ident $spec:literal largest) => {};
    (@one $name:ident $spec:literal small) => {
        mod $name {
            use super::*;
            #[test]
            fn minimal() {
                check($spec, 4, Algorithm::Minimal);
            }
            #[test]
            fn rues() {
                check(
                    $spec,
                    4,
                    Algorithm::Rues {
                        keep_per_mille: 600,
                    },
                );
            }
        }
    };
}

mod layered_routing {
    use super::*;
    acceptance_set!(layered_routing_is_complete);
}

mod baselines {
    use super::*;
    acceptance_set!(baselines_are_complete);
}
