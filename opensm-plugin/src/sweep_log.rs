//! What every routing pass did, as one JSON object per line in a file the admin names
//! (`sweep_log`), next to the human lines in OpenSM's log: monitoring reads it without
//! parsing prose, and a fault's effect on the tables (routes changed, routes that had to,
//! switch pairs that lost disjoint paths) can be followed sweep by sweep.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use ibfabric::session::Routed;

/// What a routing pass ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The subnet was the one last routed: its tables were written again.
    Unchanged,
    /// The last routing was repaired for lost cables, switches or hosts.
    Repaired,
    /// The subnet was routed in full.
    Routed,
    /// Routed in full because the admin asked for it (`reoptimise_file`).
    Reoptimised,
    /// The plugin failed; OpenSM went on with its next routing engine.
    Failed,
}

/// The balance of one prefix of layers in a [`SweepRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrefixFigure {
    /// K: layers 0..K summed.
    pub layers: usize,
    /// The busiest cable's summed routes over the mean (3 decimals).
    pub max_over_mean: f64,
}

/// One line of the sweep log.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRecord {
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub outcome: Outcome,
    pub switches: usize,
    pub lids: usize,
    pub layers: usize,
    /// Switch-to-switch cables and switches lost since the routing that was repaired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_cables: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_switches: Option<usize>,
    /// Switch-to-switch cables and switches routed in since the routing repaired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gained_cables: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gained_switches: Option<usize>,
    /// (layer, switch, destination switch) routes whose next hop changed, and those whose path
    /// crossed a loss (the ones that had to change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes_changed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes_had_to: Option<u64>,
    /// Switch pairs with fewer edge-disjoint paths across the layers than before the repair,
    /// and of those the ones now below the target (3 with 3 layers or more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs_degraded: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs_below_target: Option<u64>,
    /// Routes the disjoint repair could change beyond those that crossed a loss (crossing −
    /// changed after the completion, so that at most the routes that had to change do), and
    /// how many it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disjoint_budget: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disjoint_budget_used: Option<u64>,
    /// Why a repair gave way to a full routing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_routing: Option<String>,
    /// Max/mean of the summed routes of layers 0..K per cable, for K = 1, 2, 4, … (the
    /// prefixes MPI stacks split bulk data over); empty for a failed pass.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefix_balance: Vec<PrefixFigure>,
    /// Wall time of the pass, and of the core's routing in it.
    pub ms: u128,
    pub core_ms: u128,
    /// The deadlock scheme's outcome and the senders it holds for.
    pub deadlock: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl SweepRecord {
    /// The record of tables written from `routed`.
    pub fn written(routed: &Routed, outcome: Outcome, elapsed: Duration) -> Self {
        let repair = routed.repair.as_ref();
        Self {
            time: now(),
            outcome,
            switches: routed.switches.len(),
            lids: routed.lids,
            layers: routed.layers,
            lost_cables: repair.map(|r| r.lost_cables),
            lost_switches: repair.map(|r| r.lost_switches),
            gained_cables: repair.map(|r| r.gained_cables),
            gained_switches: repair.map(|r| r.gained_switches),
            routes_changed: repair.map(|r| r.report.changed),
            routes_had_to: repair.map(|r| r.report.crossing),
            pairs_degraded: repair.map(|r| r.report.degraded),
            pairs_below_target: repair.map(|r| r.report.below_target),
            disjoint_budget: repair.map(|r| r.report.budget),
            disjoint_budget_used: repair.map(|r| r.report.spent),
            full_routing: repair.and_then(|r| r.report.full_routing.clone()),
            prefix_balance: routed
                .prefix_balance
                .iter()
                .map(|b| PrefixFigure {
                    layers: b.layers,
                    max_over_mean: (b.max_over_mean * 1000.0).round() / 1000.0,
                })
                .collect(),
            ms: elapsed.as_millis(),
            core_ms: routed.elapsed.as_millis(),
            deadlock: routed.deadlock_summary.clone(),
            guarantee: routed.guarantee.map(|g| g.to_string()),
            error: None,
        }
    }

    /// The record of a pass that failed with `error`.
    pub fn failed(error: &str, elapsed: Duration) -> Self {
        Self {
            time: now(),
            outcome: Outcome::Failed,
            switches: 0,
            lids: 0,
            layers: 0,
            lost_cables: None,
            lost_switches: None,
            gained_cables: None,
            gained_switches: None,
            routes_changed: None,
            routes_had_to: None,
            pairs_degraded: None,
            pairs_below_target: None,
            disjoint_budget: None,
            disjoint_budget_used: None,
            full_routing: None,
            prefix_balance: Vec::new(),
            ms: elapsed.as_millis(),
            core_ms: 0,
            deadlock: String::new(),
            guarantee: None,
            error: Some(error.to_string()),
        }
    }

    /// The record as one line of JSON, newline included.
    pub fn line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|e| {
            format!("{{\"outcome\":\"failed\",\"error\":\"sweep record: {e}\"}}")
        });
        line.push('\n');
        line
    }
}

/// Appends `record` to the file at `path` (created if missing). A file that cannot be written
/// costs a warning, never the routing.
pub fn append(path: &Path, record: &SweepRecord) {
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(record.line().as_bytes()));
    if let Err(e) = written {
        log::warn!("sweep_log {}: cannot append: {e}", path.display());
    }
}

/// Whether the admin asked for a full re-optimisation by creating the file at `path`: if it
/// exists it is removed (so the request is served once) and the pass routes in full. A file
/// that cannot be removed is logged: it would ask again at every sweep.
pub fn take_reoptimise_request(path: &Path) -> bool {
    if !path.exists() {
        return false;
    }
    match std::fs::remove_file(path) {
        Ok(()) => log::info!(
            "full re-optimisation requested ({} existed, now removed): routing the subnet in \
             full instead of repairing or reusing the last routing",
            path.display()
        ),
        Err(e) => log::warn!(
            "full re-optimisation requested ({}), but the file cannot be removed ({e}): every \
             sweep will route in full until it is",
            path.display()
        ),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_pass_is_one_json_line_naming_the_error() {
        let line = SweepRecord::failed("no switches", Duration::from_millis(3)).line();
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["outcome"], "failed");
        assert_eq!(value["error"], "no switches");
        assert_eq!(value["ms"], 3);
        assert!(value.get("routes_changed").is_none());
    }

    /// Slim Fly q = 5 with 4 layers and lanes by port pair, repaired after three lost cables:
    /// the log line and the record say what the core's report says about the routes and the
    /// switch pairs.
    #[test]
    fn a_repair_logs_and_records_the_pairs_it_degraded_and_its_budget() {
        use ibfabric::deadlock::Shortage;
        use ibfabric::options::DeadlockMode;
        use ibfabric::routing::{RoutingConfig, assign_lids};
        use ibfabric::session::{DeadlockSettings, repair, route};
        use ibfabric::topology::TopologySpec;

        let mut fabric = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        let config = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let settings = DeadlockSettings {
            mode: DeadlockMode::Auto,
            vls: 8,
            shortage: Shortage::Fail,
        };
        let routed = route(fabric.clone(), &config, &settings).unwrap();
        let inter: Vec<usize> = (0..fabric.links().len())
            .filter(|&i| {
                let link = &fabric.links()[i];
                fabric.node(link.a.node).is_switch() && fabric.node(link.b.node).is_switch()
            })
            .collect();
        let lost = [inter[3], inter[40], inter[77]];
        let damaged = fabric.after_losses(|_| false, |l| lost.contains(&(l.0 as usize)));
        let repaired = repair(&routed, damaged, &config, &settings, false)
            .unwrap()
            .expect("lost cables are repaired");
        let outcome = repaired.repair.as_ref().expect("a repair");
        let r = &outcome.report;
        assert_eq!(r.full_routing, None);
        assert!(r.spent <= r.budget && r.changed <= r.crossing, "{r:?}");
        let line = outcome.to_string();
        assert!(
            line.starts_with("repaired after losing 3 cables and 0 switches"),
            "{line}"
        );
        assert!(
            line.contains(&format!(
                "{} switch pairs with fewer disjoint paths than before ({} below 3)",
                r.degraded, r.below_target
            )) || (r.degraded == 1 && line.contains("1 switch pair with")),
            "{line}"
        );
        assert!(
            line.contains(&format!("of a budget of {}", r.budget)),
            "{line}"
        );
        let record = SweepRecord::written(&repaired, Outcome::Repaired, Duration::ZERO);
        let value: serde_json::Value = serde_json::from_str(&record.line()).unwrap();
        assert_eq!(value["outcome"], "repaired");
        assert_eq!(value["lost_cables"], 3);
        assert_eq!(value["gained_cables"], 0);
        assert_eq!(value["routes_changed"], r.changed);
        assert_eq!(value["routes_had_to"], r.crossing);
        assert_eq!(value["pairs_degraded"], r.degraded);
        assert_eq!(value["pairs_below_target"], r.below_target);
        assert_eq!(value["disjoint_budget"], r.budget);
        assert_eq!(value["disjoint_budget_used"], r.spent);
    }

    #[test]
    fn records_are_appended_one_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweeps.jsonl");
        append(&path, &SweepRecord::failed("first", Duration::ZERO));
        append(&path, &SweepRecord::failed("second", Duration::ZERO));
        let text = std::fs::read_to_string(&path).unwrap();
        let errors: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["error"].to_string())
            .collect();
        assert_eq!(errors, ["\"first\"", "\"second\""]);
    }

    #[test]
    fn a_reoptimise_request_is_served_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reoptimise");
        assert!(!take_reoptimise_request(&path));
        std::fs::write(&path, "").unwrap();
        assert!(take_reoptimise_request(&path));
        assert!(!path.exists());
        assert!(!take_reoptimise_request(&path));
    }
}
