//! The fabrics the routing, deadlock and plugin tests run on, listed once.
//!
//! The lists are macros that hand their entries to a macro of the test (`$then!`), so that a
//! test can generate one `#[test]` per fabric, named after it: a failure names its fabric, and
//! the cases run in parallel.
// The benches compile this module too and use some of the lists, or none.
#![allow(unused_macros, unused_imports)]

/// The topology spec of Slim Fly q.
pub fn slim_fly(q: u32) -> String {
    format!("slimfly:q={q}")
}

/// The routing issue's acceptance set: Slim Flies q = 4 to 13, two MLFMs, two LSFTs, a fat tree
/// with parallel cables, a three-level fat tree and two random regular fabrics.
///
/// Calls `$then! { name "spec" size, ... }`, where `name` is an identifier for the fabric and
/// `size` is `small`, `large` (Slim Fly q = 11) or `largest` (q = 13), so that a test can
/// leave the slowest cases out of its costlier checks.
macro_rules! acceptance_set {
    ($then:ident) => {
        $then! {
            slimfly_q4 "slimfly:q=4" small,
            slimfly_q5 "slimfly:q=5" small,
            slimfly_q7 "slimfly:q=7" small,
            slimfly_q8 "slimfly:q=8" small,
            slimfly_q9 "slimfly:q=9" small,
            slimfly_q11 "slimfly:q=11" large,
            slimfly_q13 "slimfly:q=13" largest,
            mlfm_d3 "mlfm:d=3" small,
            mlfm_d4 "mlfm:d=4" small,
            lsft_n3 "lsft:n=3" small,
            lsft_n5 "lsft:n=5" small,
            fattree_12x6 "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18" small,
            kary_ntree_4x3 "kary-ntree:k=4,n=3" small,
            random_40x5 "random:switches=40,degree=5,hosts=3,seed=1" small,
            random_64x7 "random:switches=64,degree=7,hosts=2,seed=2" small,
        }
    };
}
pub(crate) use acceptance_set;

/// Slim Flies q = 3 to 27 with the layer counts among 1, 2, 4 and 8 whose LIDs fit in IB's
/// 49151 unicast LIDs: all four up to q = 13; q = 16, 17, 19 up to 4 layers; q = 23 and 25 up
/// to 2; q = 27 only 1 (8 layers would need 8 × 30618 endpoint LIDs) — but for the most layers
/// of q = 19, 23 and 25. Routing those at the tests' `opt-level = 1` took 35–69 s each beside
/// the other tests, a sixth of the suite's CPU, and proves nothing their fewer layers and the
/// smaller fabrics' do not: `cargo bench --bench deadlock -- colouring` routes and checks them
/// (and q = 27) in release with the same assertions.
///
/// Calls `$then! { name q [layers, ...], ... }`.
macro_rules! slim_flies_up_to_q27 {
    ($then:ident) => {
        $then! {
            q3 3 [1, 2, 4, 8],
            q4 4 [1, 2, 4, 8],
            q5 5 [1, 2, 4, 8],
            q7 7 [1, 2, 4, 8],
            q8 8 [1, 2, 4, 8],
            q9 9 [1, 2, 4, 8],
            q11 11 [1, 2, 4, 8],
            q13 13 [1, 2, 4, 8],
            q16 16 [1, 2, 4],
            q17 17 [1, 2, 4],
            q19 19 [1, 2],
            q23 23 [1],
            q25 25 [1],
            q27 27 [1],
        }
    };
}
pub(crate) use slim_flies_up_to_q27;

/// A small fat tree with parallel cables (4 leaves, 2 spines, 2 cables per pair, 3 hosts per
/// leaf): quick under ibsim.
pub const SMALL_FAT_TREE: &str = "fattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=3";

/// Small fabrics of every other kind than Slim Fly, for the tests under ibsim and OpenSM:
/// an MLFM, an LSFT, [`SMALL_FAT_TREE`], a three-level fat tree and a random regular fabric.
///
/// Calls `$then! { name spec, ... }` (each spec an expression).
macro_rules! small_fabrics_for_ibsim {
    ($then:ident) => {
        $then! {
            mlfm_d3 "mlfm:d=3",
            lsft_n3 "lsft:n=3",
            fattree_4x2 $crate::common::fabrics::SMALL_FAT_TREE,
            kary_ntree_3x3 "kary-ntree:k=3,n=3",
            random_24x5 "random:switches=24,degree=5,hosts=2,seed=9",
        }
    };
}
pub(crate) use small_fabrics_for_ibsim;
