//! Two-opt rank placement: pick two ranks at random, swap their hosts if that lowers the
//! objective, repeat. Seeded (the same seed gives the same placement) and never worse than the
//! start, since only improving swaps are kept.

use super::cost::{Cost, Evaluator};
use crate::rng::Rng;

/// What a two-opt run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TwoOptRun {
    /// The cost before.
    pub before: Cost,
    /// The cost after.
    pub after: Cost,
    /// Swaps tried.
    pub iterations: u64,
    /// Swaps kept.
    pub accepted: u64,
}

/// Runs `iterations` two-opt attempts on `evaluator` with random pairs from `seed`.
pub fn two_opt(evaluator: &mut Evaluator<'_>, iterations: u64, seed: u64) -> TwoOptRun {
    let before = evaluator.cost();
    let n = evaluator.ranks() as u64;
    let mut rng = Rng::new(seed);
    let mut accepted = 0;
    if n >= 2 {
        for _ in 0..iterations {
            let a = rng.below(n);
            let mut b = rng.below(n - 1);
            if b >= a {
                b += 1;
            }
            if evaluator.try_swap(a as u32, b as u32) {
                accepted += 1;
            }
        }
    }
    TwoOptRun {
        before,
        after: evaluator.cost(),
        iterations: if n >= 2 { iterations } else { 0 },
        accepted,
    }
}
