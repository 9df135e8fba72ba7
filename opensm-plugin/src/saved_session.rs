//! The routing session kept across restarts: the journal of the core's session (the subnet of
//! the last full routing, then of every repair since) in OpenSM's cache directory, next to the
//! `guid2lid` file OpenSM keeps there for the same reason — a restarted subnet manager should
//! give the fabric what it had.
//!
//! After a restart (or on a standby that was handed the file), the first routing pass settles
//! the saved steps again in a fresh session. Routing is deterministic, so an unchanged subnet
//! then keeps every entry of its tables, a damaged one is repaired from the same routing as
//! before, and cables plugged back get the full routing's tables again — instead of a full
//! routing of whatever the subnet is at restart, which moved a third of the entries of a
//! Slim Fly that had lost five cables.
//!
//! The file is written whole or not at all (a temporary file in the same directory, synced,
//! renamed over the old one, the directory synced). One that is unreadable, of another format
//! or version, or made under other settings is logged and ignored: the plugin routes as if it
//! had started afresh, and the next routing overwrites it.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::subnet::NodeRecord;

/// The file's name in the cache directory.
pub const FILE_NAME: &str = "layered-session.json";

/// What the file's `format` field says, so that no other JSON file is mistaken for one.
const FORMAT: &str = "osmlayered routing session";

/// The version of the file's layout; a file of another version is ignored.
const VERSION: u32 = 1;

/// Saved journals longer than this are not written (every step is a whole subnet, and settling
/// them again at restart takes a repair each): the file is removed instead, and a restart then
/// routes in full.
pub const MAX_STEPS: usize = 16;

/// OpenSM's cache directory: `OSM_CACHE_DIR`, else `/var/cache/opensm` (as OpenSM finds it for
/// `guid2lid`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("OSM_CACHE_DIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("/var/cache/opensm"), PathBuf::from)
}

/// One step of the journal: the subnet's records in canonical order and whether the admin
/// asked for a full routing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedStep {
    /// Whether the step was a requested re-optimisation.
    pub reoptimise: bool,
    /// The subnet, as the plugin compares it.
    pub subnet: Vec<NodeRecord>,
}

/// A saved journal and the settings it was made under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSession {
    /// The plugin's configuration, the LMC and OpenSM's qos options, on one line: steps made
    /// under other settings would not route the same way.
    pub settings: String,
    /// The journal, oldest first.
    pub steps: Vec<SavedStep>,
}

#[derive(Serialize, Deserialize)]
struct OnDisk {
    format: String,
    version: u32,
    written_by: String,
    #[serde(flatten)]
    session: SavedSession,
}

/// Why a saved session was not used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a saved session of this version.
    #[error("{path}: {what}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, and where.
        what: String,
    },
}

/// The session saved at `path`; `None` when there is no file.
///
/// # Errors
/// A file that cannot be read, is not JSON of the expected layout (the message gives the line
/// and column), or is of another format or version.
pub fn load(path: &Path) -> Result<Option<SavedSession>, LoadError> {
    match fs::read_to_string(path) {
        Ok(text) => parse(&path.display().to_string(), &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LoadError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// The session in `text`, the content of the file `path` (its name in messages).
///
/// # Errors
/// Not JSON of the expected layout (the message gives the line and column), or of another
/// format or version.
pub fn parse(path: &str, text: &str) -> Result<SavedSession, LoadError> {
    let invalid = |what: String| LoadError::Invalid {
        path: path.to_string(),
        what,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let format = value.get("format").and_then(|f| f.as_str());
    if format != Some(FORMAT) {
        return Err(invalid(format!(
            "not a saved routing session (format {}, expected \"{FORMAT}\")",
            format.map_or("missing".to_string(), |f| format!("\"{f}\""))
        )));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(u64::from(VERSION)) {
        return Err(invalid(format!(
            "saved by another version of the plugin (layout version {}, expected {VERSION})",
            version.map_or("missing".to_string(), |v| v.to_string())
        )));
    }
    let file: OnDisk = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    Ok(file.session)
}

/// Writes `session` to `path` whole: a temporary file beside it, synced and renamed over it,
/// then the directory synced, so that a crash leaves the old file or the new one.
///
/// # Errors
/// Any failure to create, write, sync or rename (the temporary file is removed).
pub fn save(path: &Path, session: &SavedSession) -> std::io::Result<()> {
    let file = OnDisk {
        format: FORMAT.into(),
        version: VERSION,
        written_by: format!("osmlayered {}", env!("CARGO_PKG_VERSION")),
        session: session.clone(),
    };
    let text = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = File::create(&temporary)?;
        out.write_all(&text)?;
        out.sync_all()?;
        fs::rename(&temporary, path)?;
        // The rename is durable once the directory is synced.
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// Removes the saved session at `path`, if there is one.
///
/// # Errors
/// A file that exists and cannot be removed.
pub fn remove(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
