//! What every routing pass did, as one JSON object per line in a file the admin names
//! (`sweep_log`), next to the human lines in OpenSM's log: monitoring reads it without
//! parsing prose, and a fault's effect on the tables (routes changed, routes that had to,
//! switch pairs that lost disjoint paths) can be followed sweep by sweep. The record is the
//! core's [`SweepRecord`]; this file appends it, and serves the admin's re-optimisation
//! request.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

// The record is the core's, so that `ibfabric metrics --sweep-log` reads what is written here.
pub use ibfabric::session::sweep_record::{
    CablingCheck, Outcome, Sl2VlCount, Sl2VlLine, SweepRecord,
};

/// Seconds since the Unix epoch, for a record's `time`.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Appends `record` to the file at `path` (created if missing). A file that cannot be written
/// costs a warning, never the routing.
pub fn append(path: &Path, record: &SweepRecord) {
    append_line(path, &record.line());
}

/// Appends `line` (newline included) to the file at `path`, as [`append`].
pub fn append_line(path: &Path, line: &str) {
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
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
    use std::time::Duration;

    use super::*;

    #[test]
    fn records_are_appended_one_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweeps.jsonl");
        append(&path, &SweepRecord::failed("first", Duration::ZERO, now()));
        append(&path, &SweepRecord::failed("second", Duration::ZERO, now()));
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
