//! What the caller chooses about a routing: the algorithm, the path lengths a non-minimal
//! layer may use, the number of layers and the seed.
//!
//! Every other routing file reads these types and none of them writes back, so this file sits
//! at the bottom of the routing module: it imports nothing from it. The length rule lives here
//! too ([`PathLengths::range`], [`longest_allowed`]): the path search, the rebalancing pass and
//! the local search all have to agree on it, or one pass would undo what another one built.

use std::ops::RangeInclusive;

/// Longest path (in hops) the layered search considers; [`PathLengths::range`] never allows
/// more.
pub(super) const MAX_SEARCH_HOPS: usize = 8;

/// How to route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Algorithm {
    /// Every layer minimal and balanced (what OpenSM's minhop/SSSP compute), for comparison.
    Minimal,
    /// Layer 0 minimal; further layers almost-minimal.
    Layered(PathLengths),
    /// Random uniform edge selection: layer 0 minimal; each further layer keeps a random
    /// fraction of the links (in per mille) and routes shortest paths inside it.
    Rues {
        /// Fraction of links kept per layer, in per mille (e.g. 600 = 60 %).
        keep_per_mille: u32,
    },
    /// The MLFM all-to-all layout (`collectives::mlfm_a2a_deadlock_free`): every layer
    /// minimal, with the spine of same-column traffic set per layer. The routing passes route
    /// it as [`Algorithm::Minimal`]; the layout needs the MLFM's structure, which the front
    /// ends detect and apply.
    MlfmA2a,
}

/// The lengths a non-minimal layer path of a pair at distance d may have: from
/// d + `min_extra_hops` to max(d + `min_extra_hops`, `max_hops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLengths {
    /// Hops beyond the distance a path needs at least (1 = almost-minimal).
    pub min_extra_hops: u8,
    /// Longest path allowed when d + `min_extra_hops` is shorter.
    pub max_hops: u8,
}

impl PathLengths {
    /// The allowed lengths for a pair at distance d.
    pub fn range(&self, d: u8) -> RangeInclusive<usize> {
        let shortest = usize::from(d.saturating_add(self.min_extra_hops));
        shortest
            ..=shortest
                .max(usize::from(self.max_hops))
                .min(MAX_SEARCH_HOPS)
    }
}

impl Default for PathLengths {
    fn default() -> Self {
        Self {
            min_extra_hops: 1,
            max_hops: 3,
        }
    }
}

/// Which sequences of cables a route may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Turns {
    /// Any sequence: deadlock freedom is left to path SLs (the colouring schemes).
    #[default]
    Any,
    /// Every route of every layer rises and then falls in the cable order
    /// `CableOrder::for_routing(graph, seed)`, so lanes chosen by port pair alone
    /// (`deadlock::port_pair`) keep the fabric deadlock-free whatever SL a sender uses.
    Unimodal,
}

/// Routing parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingConfig {
    /// Number of layers (2^LMC).
    pub layers: usize,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Seed for the random choices (pair order within a priority level, destination order,
    /// and the cable order of [`Turns::Unimodal`]).
    pub seed: u64,
    /// The turn rule every route keeps.
    pub turns: Turns,
}

impl Default for RoutingConfig {
    /// One almost-minimal-capable layer set of one layer, seed 1, any turns: callers name the
    /// fields they choose and take the rest from here.
    fn default() -> Self {
        Self {
            layers: 1,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            turns: Turns::Any,
        }
    }
}

/// Longest route allowed in layer l towards a destination at distance d: layer 0, and every
/// layer when there are no `lengths` (minimal routing), stays minimal; further layers may go
/// up to the end of [`PathLengths::range`]. The passes that move routes after the layers are
/// built ([`rebalance`](super::rebalance), [`polish`](super::polish)) keep every route within
/// it.
pub(super) fn longest_allowed(lengths: Option<&PathLengths>, l: usize, d: u8) -> usize {
    match lengths {
        Some(lengths) if l > 0 => *lengths.range(d).end(),
        _ => usize::from(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length rule the configuration can express over the distances a fabric can have.
    fn rules() -> impl Iterator<Item = PathLengths> {
        (0..=4u8).flat_map(|min_extra_hops| {
            (0..=10u8).map(move |max_hops| PathLengths {
                min_extra_hops,
                max_hops,
            })
        })
    }

    #[test]
    fn the_range_starts_at_the_distance_plus_the_extra_hops() {
        for lengths in rules() {
            for d in 0..=12u8 {
                let range = lengths.range(d);
                assert_eq!(
                    *range.start(),
                    usize::from(d + lengths.min_extra_hops),
                    "{lengths:?} d={d}"
                );
            }
        }
    }

    #[test]
    fn the_range_ends_at_max_hops_or_its_start_and_never_beyond_the_search_depth() {
        for lengths in rules() {
            for d in 0..=12u8 {
                let range = lengths.range(d);
                let unbounded = (*range.start()).max(usize::from(lengths.max_hops));
                assert_eq!(
                    *range.end(),
                    unbounded.min(MAX_SEARCH_HOPS),
                    "{lengths:?} d={d}"
                );
                assert!(*range.end() <= MAX_SEARCH_HOPS, "{lengths:?} d={d}");
            }
        }
    }

    #[test]
    fn the_default_is_almost_minimal_with_three_hop_detours() {
        let lengths = PathLengths::default();
        for d in 1..=6u8 {
            let expected_end = usize::from(d + 1).max(3);
            assert_eq!(lengths.range(d), usize::from(d + 1)..=expected_end, "d={d}");
        }
    }

    #[test]
    fn layer_zero_and_minimal_routing_allow_only_the_distance() {
        for lengths in rules() {
            for d in 0..=12u8 {
                assert_eq!(longest_allowed(Some(&lengths), 0, d), usize::from(d));
                for l in 0..8 {
                    assert_eq!(longest_allowed(None, l, d), usize::from(d));
                }
            }
        }
    }

    #[test]
    fn further_layers_allow_the_end_of_the_range() {
        for lengths in rules() {
            for d in 0..=12u8 {
                for l in 1..8 {
                    assert_eq!(
                        longest_allowed(Some(&lengths), l, d),
                        *lengths.range(d).end(),
                        "{lengths:?} l={l} d={d}"
                    );
                }
            }
        }
    }
}
