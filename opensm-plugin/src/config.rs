//! The plugin's configuration: `event_plugin_options` in opensm.conf names a YAML file
//! (`event_plugin_options /etc/opensm/layered.yaml`); without one, the defaults apply. A file
//! that is named but missing or unreadable means the defaults too, with a warning in the log.
//!
//! ```yaml
//! layers: 4            # default: 2^LMC of the subnet
//! seed: 1              # random choices of the routing
//! algorithm: layered   # layered | minimal | rues | mlfm-a2a (the MLFM all-to-all layout)
//! min_extra_hops: 1    # layered: hops beyond the distance a non-minimal path needs
//! max_hops: 3          # layered: longest path when distance + min_extra_hops is shorter
//! keep_percent: 60     # rues: links kept per layer
//! deadlock: auto       # auto (port_pair where 2 VLs exist) | port_pair | dfsssp | colouring | none
//! vls: 8               # data VLs to use; default: what every port supports (VLCap)
//! on_vl_shortage: fewer_layers  # fewer_layers | fail (next routing engine)
//! cabling_plan: /etc/opensm/plan.yaml  # log every sweep's differences from this plan
//! path_sl_dump: false  # write layered-path-sl.dump (every pair's SL) next to OpenSM's dumps
//! sweep_log: /var/log/opensm-layered.jsonl  # one JSON line per routing pass (default: none)
//! reoptimise_file: /var/cache/opensm/layered.reoptimise  # exists: route in full once (default: none)
//! metrics_file: /var/lib/prometheus/node-exporter/opensm-layered.prom  # Prometheus metrics (default: none)
//! staged_transitions: true  # write changes in passes safe at every instant (default: true)
//! transition_drain_ms: 500  # wait between the passes (default: from OpenSM's packet_life_time)
//! spare_working_routes: true  # prove working routes can move at once (runs under the lock)
//! routing_threads: 0   # threads the routing runs on (default 0: every core OpenSM may use)
//! ```
//!
//! The value names and the defaults are those of `ibfabric route` (`ibfabric::options`), except
//! where the plugin reads them from the subnet or must keep it routed: layers, deadlock, vls and
//! on_vl_shortage (`FrontEndDefaults` says why).
//!
//! Deadlock avoidance needs `qos TRUE` in opensm.conf: only then does OpenSM program the
//! SL-to-VL tables the plugin answers (`update_sl2vl`). Without it the plugin routes, answers
//! no path SLs and says in the log that the routing is not deadlock-free.

use ibfabric::options::{
    AlgorithmName, DeadlockMode, FrontEndDefaults, MAX_LAYERS, MAX_VLS, PathOptions, ShortagePolicy,
};
use ibfabric::routing::RoutingConfig;
use serde::Deserialize;

/// Faults the configuration can inject (`debug_fault`), so that tests see the plugin fail the
/// ways it can fail in the field, inside the real daemon. Only a plugin built with the
/// `debug-fault` feature reads the key (the tests build it so); a production build refuses it
/// as an unknown key, so no configuration file can make it fail on purpose.
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

impl Fault {
    /// The value of the `debug_fault` key.
    pub fn name(self) -> &'static str {
        match self {
            Fault::RoutingPanic => "routing_panic",
            Fault::WritePanic => "write_panic",
            Fault::WriteError => "write_error",
        }
    }
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
    /// A file to append one JSON line to per routing pass (`sweep_log`).
    pub sweep_log: Option<String>,
    /// A file whose existence asks for one full re-optimisation: the next routing pass routes
    /// the subnet in full (no repair, no reuse) and removes it.
    pub reoptimise_file: Option<String>,
    /// A file rewritten after every routing pass with the sweep log's counters and the routing
    /// in force as Prometheus metrics (`metrics_file`), for node_exporter's textfile
    /// collector.
    pub metrics_file: Option<String>,
    /// Whether a change of the tables reaches the switches in passes that are loop-free and
    /// deadlock-free whatever order OpenSM writes them in (`session::transition`): first the
    /// changed entries dropped, then the new ones. `false` writes every change at once, as
    /// OpenSM's own engines do.
    pub staged_transitions: bool,
    /// Milliseconds between a confirmed drop pass and the pass that installs the new entries,
    /// for the packets sent along the dropped entries to leave the fabric; `None`: the switch
    /// lifetime OpenSM programs (`packet_life_time`) times the hops of the longest route.
    pub transition_drain_ms: Option<u64>,
    /// Whether the transition verifier runs to spare routes that still work from being dropped
    /// between the passes (moving them at once where every mixture is proven safe). It runs
    /// under OpenSM's lock: about 0.3 s on Slim Fly q = 7 and 2-3 s on q = 11 on 2 cores.
    pub spare_working_routes: bool,
    /// Threads the routing passes run on while OpenSM waits for them under its lock; 0: every
    /// core OpenSM's process may run on. The tables are the same whatever the number.
    pub routing_threads: usize,
    /// Testing aid (feature `debug-fault`): a fault injected into a routing callback, to
    /// exercise the fallback.
    #[cfg(feature = "debug-fault")]
    pub debug_fault: Option<Fault>,
}

/// The longest wait between the passes of a change the configuration may ask for: longer would
/// leave routes dropped for longer than any switch keeps a packet.
pub const MAX_DRAIN_MS: u64 = 600_000;

/// The most threads the configuration may ask for: more than any subnet manager host has cores.
pub const MAX_ROUTING_THREADS: usize = 1024;

/// The defaults of the options where the plugin and `ibfabric route` differ (and why).
const PLUGIN_DEFAULTS: FrontEndDefaults = FrontEndDefaults::PLUGIN;

impl Default for Config {
    fn default() -> Self {
        let paths = PathOptions::default();
        Self {
            layers: PLUGIN_DEFAULTS.layers,
            seed: paths.seed,
            algorithm: paths.algorithm,
            min_extra_hops: paths.min_extra_hops,
            max_hops: paths.max_hops,
            keep_percent: paths.keep_percent,
            deadlock: PLUGIN_DEFAULTS.deadlock,
            vls: PLUGIN_DEFAULTS.vls,
            on_vl_shortage: PLUGIN_DEFAULTS.on_vl_shortage,
            cabling_plan: None,
            path_sl_dump: false,
            sweep_log: None,
            reoptimise_file: None,
            metrics_file: None,
            staged_transitions: true,
            transition_drain_ms: None,
            spare_working_routes: true,
            routing_threads: 0,
            #[cfg(feature = "debug-fault")]
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

/// Where the configuration in force came from, for the log: an admin reading it must be able to
/// tell a file that was read from one that was named but never found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// No `event_plugin_options` line (or an empty one).
    NoOptions,
    /// The file named by `event_plugin_options`, read.
    File(String),
    /// The file named by `event_plugin_options`, missing or unreadable: the defaults apply.
    Unreadable {
        /// The path.
        path: String,
        /// Why it could not be read.
        reason: String,
    },
}

impl Source {
    /// The configuration's origin, as the load line gives it.
    pub fn describe(&self) -> String {
        match self {
            Source::NoOptions => "no event_plugin_options: defaults".into(),
            Source::File(path) => path.clone(),
            Source::Unreadable { path, .. } => format!("{path} (unreadable: defaults)"),
        }
    }

    /// The warning an unread configuration file deserves, naming it.
    pub fn warning(&self) -> Option<String> {
        match self {
            Source::Unreadable { path, reason } => Some(format!(
                "WARNING: configuration file {path} (event_plugin_options) cannot be read: \
                 {reason}; routing with the defaults"
            )),
            _ => None,
        }
    }
}

impl Config {
    /// The configuration `event_plugin_options` points at, and where it came from: the
    /// defaults when the options are empty, or when the file is missing or unreadable (the
    /// plugin keeps the subnet routed; [`Source::warning`] says why the file was not used).
    ///
    /// # Errors
    /// A file that was read but is invalid.
    pub fn load(options: Option<&str>) -> Result<(Self, Source), ConfigError> {
        let Some(path) = options.map(str::trim).filter(|p| !p.is_empty()) else {
            return Ok((Self::default(), Source::NoOptions));
        };
        match std::fs::read_to_string(path) {
            Ok(text) => Ok((Self::parse(path, &text)?, Source::File(path.into()))),
            Err(e) => Ok((
                Self::default(),
                Source::Unreadable {
                    path: path.into(),
                    reason: e.to_string(),
                },
            )),
        }
    }

    /// The keys a routing depends on, the others at their defaults: a routing made under other
    /// routing keys is never reused or repaired, while the files the plugin writes or reads
    /// beside the routing (`sweep_log`, `metrics_file`, `path_sl_dump`, `cabling_plan`,
    /// `reoptimise_file`), how a change is written (`staged_transitions`,
    /// `transition_drain_ms`, `spare_working_routes`) and the threads that compute it
    /// (`routing_threads`) can be changed without routing the subnet again.
    pub fn routing_keys(&self) -> Self {
        Self {
            layers: self.layers,
            seed: self.seed,
            algorithm: self.algorithm,
            min_extra_hops: self.min_extra_hops,
            max_hops: self.max_hops,
            keep_percent: self.keep_percent,
            deadlock: self.deadlock,
            vls: self.vls,
            on_vl_shortage: self.on_vl_shortage,
            ..Self::default()
        }
    }

    /// Every setting in force, on one line, by the keys of the file.
    pub fn summary(&self) -> String {
        let algorithm = match self.algorithm {
            AlgorithmName::Layered => "layered",
            AlgorithmName::Minimal => "minimal",
            AlgorithmName::Rues => "rues",
            AlgorithmName::MlfmA2a => "mlfm-a2a",
        };
        let deadlock = match self.deadlock {
            DeadlockMode::None => "none",
            DeadlockMode::Auto => "auto",
            DeadlockMode::Dfsssp => "dfsssp",
            DeadlockMode::Colouring => "colouring",
            DeadlockMode::PortPair => "port_pair",
        };
        let shortage = match self.on_vl_shortage {
            ShortagePolicy::Fail => "fail",
            ShortagePolicy::FewerLayers => "fewer_layers",
        };
        let layers = self.layers.map_or("2^LMC".to_string(), |l| l.to_string());
        let vls = self
            .vls
            .map_or("all the ports support".to_string(), |v| v.to_string());
        let line = format!(
            "layers: {layers}, seed: {}, algorithm: {algorithm}, min_extra_hops: {}, \
             max_hops: {}, keep_percent: {}, deadlock: {deadlock}, vls: {vls}, \
             on_vl_shortage: {shortage}, cabling_plan: {}, path_sl_dump: {}, sweep_log: {}, \
             reoptimise_file: {}, metrics_file: {}, staged_transitions: {}, \
             transition_drain_ms: {}, spare_working_routes: {}, routing_threads: {}",
            self.seed,
            self.min_extra_hops,
            self.max_hops,
            self.keep_percent,
            self.cabling_plan.as_deref().unwrap_or("none"),
            self.path_sl_dump,
            self.sweep_log.as_deref().unwrap_or("none"),
            self.reoptimise_file.as_deref().unwrap_or("none"),
            self.metrics_file.as_deref().unwrap_or("none"),
            self.staged_transitions,
            self.transition_drain_ms
                .map_or("the switch lifetime".to_string(), |ms| ms.to_string()),
            self.spare_working_routes,
            match self.routing_threads {
                0 => format!("every core ({})", ibfabric::threads::available()),
                n => n.to_string(),
            },
        );
        match self.fault() {
            Some(fault) => line + &format!(", debug_fault: {}", fault.name()),
            None => line,
        }
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
            && !(1..=MAX_LAYERS).contains(&layers)
        {
            return Err(invalid(format!(
                "layers {layers} is not in 1..={MAX_LAYERS}"
            )));
        }
        if let Some(vls) = config.vls
            && !(1..=MAX_VLS).contains(&vls)
        {
            return Err(invalid(format!("vls {vls} is not in 1..={MAX_VLS}")));
        }
        if let Some(ms) = config.transition_drain_ms
            && ms > MAX_DRAIN_MS
        {
            return Err(invalid(format!(
                "transition_drain_ms {ms} is more than {MAX_DRAIN_MS} (ten minutes)"
            )));
        }
        if config.routing_threads > MAX_ROUTING_THREADS {
            return Err(invalid(format!(
                "routing_threads {} is more than {MAX_ROUTING_THREADS}",
                config.routing_threads
            )));
        }
        if config.keep_percent == 0 || config.keep_percent > 100 {
            return Err(invalid(format!(
                "keep_percent {} is not in 1..=100",
                config.keep_percent
            )));
        }
        Ok(config)
    }

    /// How paths are chosen.
    pub fn paths(&self) -> PathOptions {
        PathOptions {
            algorithm: self.algorithm,
            seed: self.seed,
            min_extra_hops: self.min_extra_hops,
            max_hops: self.max_hops,
            keep_percent: self.keep_percent,
        }
    }

    /// The fault to inject, if any.
    #[cfg(feature = "debug-fault")]
    pub fn fault(&self) -> Option<Fault> {
        self.debug_fault
    }

    /// The fault to inject: none without the `debug-fault` feature.
    #[cfg(not(feature = "debug-fault"))]
    pub fn fault(&self) -> Option<Fault> {
        None
    }

    /// The core's routing parameters for a subnet with LMC `lmc`.
    pub fn routing(&self, lmc: u8) -> RoutingConfig {
        self.paths().routing(self.layers.unwrap_or(1 << lmc.min(7)))
    }
}

#[cfg(test)]
mod tests {
    use ibfabric::routing::{Algorithm, PathLengths};

    use super::*;

    #[test]
    fn no_options_give_the_defaults_and_say_so() {
        for options in [None, Some("  ")] {
            let (config, source) = Config::load(options).unwrap();
            assert_eq!(config, Config::default());
            assert_eq!(source.describe(), "no event_plugin_options: defaults");
            assert_eq!(source.warning(), None);
        }
    }

    #[test]
    fn a_missing_file_gives_the_defaults_with_a_warning_naming_it() {
        let path = "/nonexistent/layered.yaml";
        let (config, source) = Config::load(Some(path)).unwrap();
        assert_eq!(config, Config::default());
        let warning = source.warning().expect("a warning");
        assert!(warning.contains(path), "{warning}");
        assert!(source.describe().contains(path));
    }

    #[test]
    fn an_unreadable_file_gives_the_defaults_with_a_warning_naming_it() {
        // A directory: it exists, but cannot be read as a file (whatever the user, root too).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        let (config, source) = Config::load(Some(path)).unwrap();
        assert_eq!(config, Config::default());
        assert!(source.warning().unwrap().contains(path));
    }

    #[test]
    fn a_read_file_is_named_and_its_values_are_in_the_summary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layered.yaml");
        std::fs::write(&path, "layers: 2\nseed: 7\ndeadlock: port_pair\n").unwrap();
        let path = path.to_str().unwrap();
        let (config, source) = Config::load(Some(path)).unwrap();
        assert_eq!(source, Source::File(path.into()));
        assert_eq!(source.warning(), None);
        let summary = config.summary();
        for part in ["layers: 2,", "seed: 7,", "deadlock: port_pair,"] {
            assert!(summary.contains(part), "{part}: {summary}");
        }
        assert!(!summary.contains('\n'));
    }

    /// Every key of the file is in the summary, so the log shows the whole configuration.
    #[test]
    fn the_summary_names_every_key() {
        let summary = Config::default().summary();
        for key in [
            "layers",
            "seed",
            "algorithm",
            "min_extra_hops",
            "max_hops",
            "keep_percent",
            "deadlock",
            "vls",
            "on_vl_shortage",
            "cabling_plan",
            "path_sl_dump",
            "sweep_log",
            "reoptimise_file",
            "metrics_file",
            "staged_transitions",
            "transition_drain_ms",
            "spare_working_routes",
            "routing_threads",
        ] {
            assert!(summary.contains(&format!("{key}: ")), "{key}: {summary}");
        }
    }

    /// The commented file the package installs: as shipped it means the defaults, and with
    /// every setting uncommented it is still valid (so its keys and values are current).
    #[test]
    fn the_shipped_file_is_the_defaults_and_valid_when_uncommented() {
        let shipped = include_str!("../layered.yaml");
        assert_eq!(
            Config::parse("layered.yaml", shipped).unwrap(),
            Config::default()
        );
        let uncommented: String = shipped
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| l.split_once(':').is_some_and(|(k, _)| !k.contains(' ')))
            .map(|l| format!("{}\n", l.split(" #").next().unwrap().trim_end()))
            .collect();
        let config = Config::parse("layered.yaml", &uncommented)
            .unwrap_or_else(|e| panic!("{e}:\n{uncommented}"));
        assert_eq!(uncommented.lines().count(), 18, "{uncommented}");
        assert_eq!(
            config.staged_transitions,
            Config::default().staged_transitions
        );
        assert_eq!(config.paths(), Config::default().paths());
        assert_eq!(config.deadlock, Config::default().deadlock);
        assert_eq!(config.on_vl_shortage, Config::default().on_vl_shortage);
    }

    /// `key: most + 1` is refused with an error naming the file and the key; `key: most` is
    /// read: the configuration it gives.
    fn refused_above(key: &str, most: u64) -> Config {
        let err = Config::parse("x.yaml", &format!("{key}: {}\n", most + 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("x.yaml") && err.contains(key), "{err}");
        Config::parse("x.yaml", &format!("{key}: {most}\n")).unwrap()
    }

    #[test]
    fn more_routing_threads_than_the_limit_are_refused_naming_the_key() {
        let at_most = refused_above("routing_threads", MAX_ROUTING_THREADS as u64);
        assert_eq!(at_most.routing_threads, MAX_ROUTING_THREADS);
    }

    #[test]
    fn a_drain_time_beyond_ten_minutes_is_refused_naming_the_key() {
        let at_most = refused_above("transition_drain_ms", MAX_DRAIN_MS);
        assert_eq!(at_most.transition_drain_ms, Some(MAX_DRAIN_MS));
    }

    #[test]
    fn an_invalid_file_is_still_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.yaml");
        std::fs::write(&path, "layers: 0\n").unwrap();
        assert!(Config::load(Some(path.to_str().unwrap())).is_err());
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
    fn defaults_choose_paths_as_ibfabric_route_does_on_every_lmc() {
        for lmc in 0..=7u8 {
            assert_eq!(
                Config::default().routing(lmc),
                PathOptions::default().routing(1 << lmc)
            );
        }
    }

    #[test]
    fn every_path_option_is_a_key_of_the_same_name() {
        let text = "algorithm: rues\nseed: 9\nmin_extra_hops: 2\nmax_hops: 4\nkeep_percent: 50\n";
        // A struct literal: a new path option fails to compile here until it has a key.
        let expected = PathOptions {
            algorithm: AlgorithmName::Rues,
            seed: 9,
            min_extra_hops: 2,
            max_hops: 4,
            keep_percent: 50,
        };
        assert_eq!(Config::parse("x.yaml", text).unwrap().paths(), expected);
    }

    #[test]
    fn file_values_override_the_defaults() {
        let config = Config::parse("x.yaml", "layers: 2\nseed: 7\nalgorithm: minimal\n").unwrap();
        let routing = config.routing(3);
        assert_eq!(routing.layers, 2);
        assert_eq!(routing.seed, 7);
        assert_eq!(routing.algorithm, Algorithm::Minimal);
        assert_eq!(config.fault(), None);
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
    }

    #[cfg(feature = "debug-fault")]
    #[test]
    fn a_fault_is_read_with_the_feature() {
        let faulty = Config::parse("x.yaml", "debug_fault: write_panic\n").unwrap();
        assert_eq!(faulty.fault(), Some(Fault::WritePanic));
        assert!(faulty.summary().ends_with(", debug_fault: write_panic"));
    }

    #[cfg(not(feature = "debug-fault"))]
    #[test]
    fn a_fault_is_an_unknown_key_without_the_feature() {
        let err = Config::parse("x.yaml", "debug_fault: write_panic\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `debug_fault`"), "{err}");
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

    #[test]
    fn the_files_beside_the_routing_are_not_routing_keys() {
        let config = Config::default();
        let with_files = Config {
            sweep_log: Some("/var/log/sweeps.jsonl".into()),
            metrics_file: Some("/var/lib/node-exporter/layered.prom".into()),
            path_sl_dump: true,
            cabling_plan: Some("/etc/opensm/plan.yaml".into()),
            reoptimise_file: Some("/var/cache/opensm/reoptimise".into()),
            ..Config::default()
        };
        assert_eq!(with_files.routing_keys(), config.routing_keys());
    }

    #[test]
    fn every_routing_key_is_kept() {
        let base = Config::default().routing_keys();
        let changed = [
            Config {
                layers: Some(2),
                ..Config::default()
            },
            Config {
                seed: 7,
                ..Config::default()
            },
            Config {
                algorithm: AlgorithmName::Rues,
                ..Config::default()
            },
            Config {
                min_extra_hops: 2,
                ..Config::default()
            },
            Config {
                max_hops: 5,
                ..Config::default()
            },
            Config {
                keep_percent: 50,
                ..Config::default()
            },
            Config {
                deadlock: DeadlockMode::Dfsssp,
                ..Config::default()
            },
            Config {
                vls: Some(4),
                ..Config::default()
            },
            Config {
                on_vl_shortage: ShortagePolicy::Fail,
                ..Config::default()
            },
        ];
        for config in changed {
            assert_eq!(config.routing_keys(), config, "{config:?}");
            assert_ne!(config.routing_keys(), base, "{config:?}");
        }
    }
}
