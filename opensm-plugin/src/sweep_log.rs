//! What every routing pass did, as one JSON object per line in a file the admin names
//! (`sweep_log`), next to the human lines in OpenSM's log: monitoring reads it without
//! parsing prose, and a fault's effect on the tables (routes changed, routes that had to) can
//! be followed sweep by sweep.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::engine::Routed;

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
    /// (layer, switch, destination switch) routes whose next hop changed, and those whose path
    /// crossed a loss (the ones that had to change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes_changed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes_had_to: Option<u64>,
    /// Why a repair gave way to a full routing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_routing: Option<String>,
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
            routes_changed: repair.map(|r| r.report.changed),
            routes_had_to: repair.map(|r| r.report.crossing),
            full_routing: repair.and_then(|r| r.report.full_routing.clone()),
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
            routes_changed: None,
            routes_had_to: None,
            full_routing: None,
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
