//! The routing options as the two front ends offer them: `ibfabric route` as flags
//! (`--algorithm rues --keep-percent 50`), the OpenSM plugin as keys of its YAML file
//! (`algorithm: rues`, `keep_percent: 50`). Their value names, their defaults and what they
//! mean for the core are defined here once; each front end reads its own input format and
//! checks ranges with its own messages.
//!
//! Where the front ends deliberately differ, [`FrontEndDefaults`] says how and why.
//!
//! With the `cli` feature the enums are also clap value enums and [`PathOptions`] is a clap
//! argument group, so that their doc comments are the command's help text.

use serde::Deserialize;

use crate::deadlock::{SchemeChoice, Shortage};
use crate::routing::{Algorithm, PathLengths, RoutingConfig};

/// Seed of the routing's random choices.
pub const DEFAULT_SEED: u64 = 1;
/// RUES: percentage of links kept in each further layer.
pub const DEFAULT_KEEP_PERCENT: u32 = 60;
/// Most layers a routing can have: LMC 7 gives every port 128 LIDs.
pub const MAX_LAYERS: usize = 128;
/// Most data VLs a port can have (VL15 is the management lane).
pub const MAX_VLS: u8 = 15;

/// The routing algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum AlgorithmName {
    /// Layer 0 minimal, further layers almost-minimal and diverse.
    #[default]
    Layered,
    /// Every layer minimal and balanced (the baseline of OpenSM's minhop/SSSP).
    Minimal,
    /// Random uniform edge selection per layer (the paper's comparison).
    Rues,
    /// The MLFM all-to-all layer layout of `ibfabric a2a mlfm` (layer x carries same-column
    /// traffic through the spine of the schedules' server k = x), for the whole machine; a
    /// fabric that is not an MLFM cabled by its port plan is refused.
    #[serde(rename = "mlfm-a2a", alias = "mlfm_a2a")]
    MlfmA2a,
}

/// How the routing is made deadlock-free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum DeadlockMode {
    /// No deadlock avoidance: every route on SL 0 (what OpenSM's minhop does).
    None,
    /// Lanes by port pair where the ports have two data VLs (deadlock-free whatever SL the
    /// traffic carries); with one VL, DFSSSP-style virtual lanes (only for senders that use
    /// the SA's path SL).
    Auto,
    /// DFSSSP-style virtual lanes.
    Dfsssp,
    /// The switch-colouring scheme (paths of at most 3 inter-switch hops).
    #[serde(alias = "coloring")]
    #[cfg_attr(feature = "cli", value(alias = "coloring"))]
    Colouring,
    /// Lanes by port pair: a VL per (input port, output port), the same for every SL, over
    /// routes that rise and then fall in a cable order.
    #[serde(rename = "port_pair")]
    PortPair,
}

impl DeadlockMode {
    /// The core's choice of schemes; `None` for no deadlock avoidance.
    pub fn scheme_choice(self) -> Option<SchemeChoice> {
        match self {
            DeadlockMode::None => None,
            DeadlockMode::Auto => Some(SchemeChoice::Auto),
            DeadlockMode::Dfsssp => Some(SchemeChoice::Dfsssp),
            DeadlockMode::Colouring => Some(SchemeChoice::Colouring),
            DeadlockMode::PortPair => Some(SchemeChoice::PortPair),
        }
    }
}

/// What to do when the routing needs more VLs than there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ShortagePolicy {
    /// Refuse, saying how many VLs are needed and how many there are (the plugin: OpenSM
    /// routes with its next engine).
    Fail,
    /// Halve the layers until the routing fits (each reduction is reported).
    FewerLayers,
}

impl From<ShortagePolicy> for Shortage {
    fn from(policy: ShortagePolicy) -> Self {
        match policy {
            ShortagePolicy::Fail => Shortage::Fail,
            ShortagePolicy::FewerLayers => Shortage::FewerLayers,
        }
    }
}

/// The defaults of the options where the two front ends differ on purpose.
///
/// The command computes what it is asked for on a fabric it may only know from a spec, and
/// says when that cannot be done. The plugin runs inside the subnet manager of a live fabric:
/// it takes what the subnet offers and must leave it routed and deadlock-free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontEndDefaults {
    /// Layers; `None`: 2^LMC of the subnet (the plugin routes every LID OpenSM assigned).
    pub layers: Option<usize>,
    /// Deadlock avoidance. The command routes without it unless asked (its report is about
    /// paths); the plugin makes the routing deadlock-free unless told not to.
    pub deadlock: DeadlockMode,
    /// Data VLs; `None`: as many as every cabled port supports (VLCap, within OpenSM's
    /// `max_op_vls`), which only the plugin can see.
    pub vls: Option<u8>,
    /// When the VLs do not suffice. The command fails so that its output is exactly the routing
    /// asked for; the plugin routes with fewer layers rather than leave the fabric to OpenSM's
    /// next engine.
    pub on_vl_shortage: ShortagePolicy,
}

impl FrontEndDefaults {
    /// `ibfabric route`.
    pub const COMMAND: Self = Self {
        layers: Some(4),
        deadlock: DeadlockMode::None,
        vls: Some(8),
        on_vl_shortage: ShortagePolicy::Fail,
    };
    /// The OpenSM plugin.
    pub const PLUGIN: Self = Self {
        layers: None,
        deadlock: DeadlockMode::Auto,
        vls: None,
        on_vl_shortage: ShortagePolicy::FewerLayers,
    };
}

/// How paths are chosen: the algorithm, its parameters and the seed. The same defaults in both
/// front ends.
///
/// The plugin reads the same fields from its YAML file as keys of the same names (its file
/// refuses unknown keys, which serde cannot combine with a flattened struct, so it lists them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct PathOptions {
    /// Routing algorithm.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = PathOptions::default().algorithm))]
    pub algorithm: AlgorithmName,
    /// Seed of the random choices.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = PathOptions::default().seed))]
    pub seed: u64,
    /// Layered: hops a non-minimal path needs beyond the pair's distance.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = PathOptions::default().min_extra_hops))]
    pub min_extra_hops: u8,
    /// Layered: the longest path allowed when distance + min-extra-hops is shorter.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = PathOptions::default().max_hops))]
    pub max_hops: u8,
    /// RUES: percentage of links kept in each further layer (above 100 counts as 100).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = PathOptions::default().keep_percent))]
    pub keep_percent: u32,
}

impl Default for PathOptions {
    fn default() -> Self {
        let lengths = PathLengths::default();
        Self {
            algorithm: AlgorithmName::default(),
            seed: DEFAULT_SEED,
            min_extra_hops: lengths.min_extra_hops,
            max_hops: lengths.max_hops,
            keep_percent: DEFAULT_KEEP_PERCENT,
        }
    }
}

impl PathOptions {
    /// The core's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self.algorithm {
            AlgorithmName::Layered => Algorithm::Layered(PathLengths {
                min_extra_hops: self.min_extra_hops,
                max_hops: self.max_hops,
            }),
            AlgorithmName::Minimal => Algorithm::Minimal,
            AlgorithmName::Rues => Algorithm::Rues {
                keep_per_mille: self.keep_percent.min(100) * 10,
            },
            AlgorithmName::MlfmA2a => Algorithm::MlfmA2a,
        }
    }

    /// The core's routing parameters for `layers` layers.
    pub fn routing(&self, layers: usize) -> RoutingConfig {
        RoutingConfig {
            layers,
            algorithm: self.algorithm(),
            seed: self.seed,
            ..RoutingConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_paths_are_layered_with_the_core_path_lengths_and_seed_1() {
        let routing = PathOptions::default().routing(4);
        assert_eq!(routing.layers, 4);
        assert_eq!(routing.seed, DEFAULT_SEED);
        assert_eq!(
            routing.algorithm,
            Algorithm::Layered(PathLengths::default())
        );
    }

    #[test]
    fn rues_keeps_the_percentage_in_per_mille_up_to_all_links() {
        for keep_percent in 0..=150 {
            let options = PathOptions {
                algorithm: AlgorithmName::Rues,
                keep_percent,
                ..PathOptions::default()
            };
            assert_eq!(
                options.algorithm(),
                Algorithm::Rues {
                    keep_per_mille: keep_percent.min(100) * 10
                }
            );
        }
    }

    #[test]
    fn every_deadlock_mode_but_none_is_a_scheme_choice() {
        let modes = [
            DeadlockMode::None,
            DeadlockMode::Auto,
            DeadlockMode::Dfsssp,
            DeadlockMode::Colouring,
            DeadlockMode::PortPair,
        ];
        let choices: Vec<_> = modes.iter().map(|m| m.scheme_choice()).collect();
        assert_eq!(
            choices,
            [
                None,
                Some(SchemeChoice::Auto),
                Some(SchemeChoice::Dfsssp),
                Some(SchemeChoice::Colouring),
                Some(SchemeChoice::PortPair)
            ]
        );
    }

    /// The command's value names are the YAML file's, with `-` for `_`.
    #[cfg(feature = "cli")]
    fn same_names_in_both_front_ends<T>()
    where
        T: clap::ValueEnum + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        for value in T::value_variants() {
            let names = value.to_possible_value().unwrap();
            for name in names.get_name_and_aliases() {
                let yaml: T = yaml_serde::from_str(&name.replace('-', "_")).unwrap();
                assert_eq!(&yaml, value, "{name}");
            }
        }
    }

    #[cfg(feature = "cli")]
    #[test]
    fn algorithm_names_are_the_same_in_both_front_ends() {
        same_names_in_both_front_ends::<AlgorithmName>();
    }

    #[cfg(feature = "cli")]
    #[test]
    fn deadlock_mode_names_are_the_same_in_both_front_ends() {
        same_names_in_both_front_ends::<DeadlockMode>();
    }

    #[cfg(feature = "cli")]
    #[test]
    fn shortage_policy_names_are_the_same_in_both_front_ends() {
        same_names_in_both_front_ends::<ShortagePolicy>();
    }
}
