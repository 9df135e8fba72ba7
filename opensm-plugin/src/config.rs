//! The plugin's configuration: `event_plugin_options` in opensm.conf names a YAML file
//! (`event_plugin_options /etc/opensm/layered.yaml`); without one, the defaults apply.
//!
//! ```yaml
//! layers: 4            # default: 2^LMC of the subnet
//! seed: 1              # random choices of the routing
//! algorithm: layered   # layered | minimal | rues
//! min_extra_hops: 1    # layered: hops beyond the distance a non-minimal path needs
//! max_hops: 3          # layered: longest path when distance + min_extra_hops is shorter
//! keep_percent: 60     # rues: links kept per layer
//! deadlock: auto       # auto (colouring where it applies, else dfsssp) | dfsssp | colouring | none
//! vls: 8               # data VLs to use; default: what every port supports (VLCap)
//! on_vl_shortage: fewer_layers  # fewer_layers | fail (next routing engine)
//! cabling_plan: /etc/opensm/plan.yaml  # log every sweep's differences from this plan
//! path_sl_dump: false  # write layered-path-sl.dump (every pair's SL) next to OpenSM's dumps
//! ```
//!
//! Deadlock avoidance needs `qos TRUE` in opensm.conf: only then does OpenSM program the
//! SL-to-VL tables the plugin answers (`update_sl2vl`). Without it the plugin routes, answers
//! no path SLs and says in the log that the routing is not deadlock-free.

use std::path::Path;

use ibfabric::routing::{Algorithm, PathLengths, RoutingConfig};
use serde::Deserialize;

/// Seed of the routing's random choices when the configuration names none (the same default
/// as `ibfabric route`).
pub const DEFAULT_SEED: u64 = 1;

/// Routing algorithm names in the YAML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AlgorithmName {
    /// Layer 0 minimal, further layers almost-minimal.
    #[default]
    Layered,
    /// Every layer minimal.
    Minimal,
    /// Random uniform edge selection.
    Rues,
}

/// How the routing is made deadlock-free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DeadlockMode {
    /// The colouring scheme where it applies, else the DFSSSP-style assignment.
    #[default]
    Auto,
    /// DFSSSP-style virtual lanes.
    Dfsssp,
    /// The switch-colouring scheme (paths of at most 3 inter-switch hops).
    #[serde(alias = "coloring")]
    Colouring,
    /// No deadlock avoidance: every path on SL 0 (what OpenSM's minhop does).
    None,
}

/// What to do when the routing needs more VLs than the fabric has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ShortagePolicy {
    /// Halve the layers until the routing fits (logged).
    #[default]
    FewerLayers,
    /// Refuse: OpenSM routes with its next engine.
    Fail,
}

/// Faults the configuration can inject (`debug_fault`), so that tests see the plugin fail the
/// ways it can fail in the field, inside the real daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Panic while routing (`build_lid_matrices`).
    RoutingPanic,
    /// Panic after half the switches' tables are written (`ucast_build_fwd_tables`).
    WritePanic,
    /// Fail the write with an error before anything is written.
    WriteError,
}

/// The plugin's settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Layers; `None`: 2^LMC.
    pub layers: Option<usize>,
    /// Seed.
    pub seed: u64,
    /// Algorithm.
    pub algorithm: AlgorithmName,
    /// Layered: minimum extra hops of non-minimal paths.
    pub min_extra_hops: u8,
    /// Layered: longest non-minimal path for close pairs.
    pub max_hops: u8,
    /// RUES: percentage of links kept per layer.
    pub keep_percent: u32,
    /// Deadlock avoidance.
    pub deadlock: DeadlockMode,
    /// Data VLs to use (1..=15); `None`: as many as every port supports.
    pub vls: Option<u8>,
    /// When the VLs do not suffice.
    pub on_vl_shortage: ShortagePolicy,
    /// A cabling plan (YAML, JSON or CSV) to compare every discovered fabric with.
    pub cabling_plan: Option<String>,
    /// Write every (source, destination) LID pair's SL to `layered-path-sl.dump` in OpenSM's
    /// dump directory after each routing (for `ibfabric deadlock-check`; large fabrics make
    /// large files: LIDs² lines).
    pub path_sl_dump: bool,
    /// Testing aid: a fault injected into a routing callback, to exercise the fallback.
    pub debug_fault: Option<Fault>,
}

impl Default for Config {
    fn default() -> Self {
        let lengths = PathLengths::default();
        Self {
            layers: None,
            seed: DEFAULT_SEED,
            algorithm: AlgorithmName::Layered,
            min_extra_hops: lengths.min_extra_hops,
            max_hops: lengths.max_hops,
            keep_percent: 60,
            deadlock: DeadlockMode::Auto,
            vls: None,
            on_vl_shortage: ShortagePolicy::FewerLayers,
            cabling_plan: None,
            path_sl_dump: false,
            debug_fault: None,
        }
    }
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid YAML for [`Config`].
    #[error("{path}: {message}")]
    Parse {
        /// The path.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// A value out of range.
    #[error("{path}: {message}")]
    Invalid {
        /// The path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Config {
    /// The configuration `event_plugin_options` points at: the defaults when the options are
    /// empty or the file does not exist.
    ///
    /// # Errors
    /// An unreadable or invalid file.
    pub fn from_options(options: Option<&str>) -> Result<Self, ConfigError> {
        let Some(path) = options.map(str::trim).filter(|p| !p.is_empty()) else {
            return Ok(Self::default());
        };
        if !Path::new(path).exists() {
            return Ok(Self::default());
        }
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses the YAML text of the file `path`.
    ///
    /// # Errors
    /// Invalid YAML, unknown keys, values out of range.
    pub fn parse(path: &str, text: &str) -> Result<Self, ConfigError> {
        let config: Self = if text.trim().is_empty() {
            Self::default()
        } else {
            yaml_serde::from_str(text).map_err(|e| ConfigError::Parse {
                path: path.into(),
                message: e.to_string().replace('\n', " "),
            })?
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: path.into(),
            message,
        };
        if let Some(layers) = config.layers
            && !(1..=128).contains(&layers)
        {
            return Err(invalid(format!("layers {layers} is not in 1..=128")));
        }
        if let Some(vls) = config.vls
            && !(1..=15).contains(&vls)
        {
            return Err(invalid(format!("vls {vls} is not in 1..=15")));
        }
        if config.keep_percent == 0 || config.keep_percent > 100 {
            return Err(invalid(format!(
                "keep_percent {} is not in 1..=100",
                config.keep_percent
            )));
        }
        Ok(config)
    }

    /// The core's routing parameters for a subnet with LMC `lmc`.
    pub fn routing(&self, lmc: u8) -> RoutingConfig {
        RoutingConfig {
            layers: self.layers.unwrap_or(1 << lmc.min(7)),
            algorithm: match self.algorithm {
                AlgorithmName::Layered => Algorithm::Layered(PathLengths {
                    min_extra_hops: self.min_extra_hops,
                    max_hops: self.max_hops,
                }),
                AlgorithmName::Minimal => Algorithm::Minimal,
                AlgorithmName::Rues => Algorithm::Rues {
                    keep_per_mille: self.keep_percent * 10,
                },
            },
            seed: self.seed,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_options_or_missing_file_give_the_defaults() {
        assert_eq!(Config::from_options(None).unwrap(), Config::default());
        assert_eq!(Config::from_options(Some("  ")).unwrap(), Config::default());
        assert_eq!(
            Config::from_options(Some("/nonexistent/layered.yaml")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn defaults_route_layered_with_seed_1_and_2_to_the_lmc_layers() {
        let routing = Config::default().routing(2);
        assert_eq!(routing.layers, 4);
        assert_eq!(routing.seed, 1);
        assert_eq!(
            routing.algorithm,
            Algorithm::Layered(PathLengths::default())
        );
    }

    #[test]
    fn file_values_override_the_defaults() {
        let config = Config::parse("x.yaml", "layers: 2\nseed: 7\nalgorithm: minimal\n").unwrap();
        let routing = config.routing(3);
        assert_eq!(routing.layers, 2);
        assert_eq!(routing.seed, 7);
        assert_eq!(routing.algorithm, Algorithm::Minimal);
        assert_eq!(config.debug_fault, None);
        assert_eq!(config.deadlock, DeadlockMode::Auto);
    }

    #[test]
    fn deadlock_settings_are_read() {
        let config = Config::parse(
            "x.yaml",
            "deadlock: coloring\nvls: 6\non_vl_shortage: fail\ncabling_plan: /p.yaml\n",
        )
        .unwrap();
        assert_eq!(config.deadlock, DeadlockMode::Colouring);
        assert_eq!(config.vls, Some(6));
        assert_eq!(config.on_vl_shortage, ShortagePolicy::Fail);
        assert_eq!(config.cabling_plan.as_deref(), Some("/p.yaml"));
        let faulty = Config::parse("x.yaml", "debug_fault: write_panic\n").unwrap();
        assert_eq!(faulty.debug_fault, Some(Fault::WritePanic));
    }

    #[test]
    fn bad_files_are_refused_with_the_path() {
        for text in [
            "layers: [",
            "colour: blue",
            "layers: 0",
            "algorithm: fastest",
            "deadlock: sometimes",
            "vls: 16",
            "on_vl_shortage: panic",
            "debug_fault: sometimes",
        ] {
            let err = Config::parse("bad.yaml", text).unwrap_err().to_string();
            assert!(err.starts_with("bad.yaml: "), "{text}: {err}");
        }
    }
}
