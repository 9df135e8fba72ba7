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

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache_file::{self, Kind, LoadError};
use crate::subnet::NodeRecord;

/// The file's name in the cache directory.
pub const FILE_NAME: &str = "layered-session.json";

/// The file's format and layout version.
const KIND: Kind = Kind {
    format: "osmlayered routing session",
    version: 1,
    what: "saved routing session",
};

/// Saved journals longer than this are not written (every step is a whole subnet, and settling
/// them again at restart takes a repair each): the file is removed instead, and a restart then
/// routes in full.
pub const MAX_STEPS: usize = 16;

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

/// The session saved at `path`; `None` when there is no file.
///
/// # Errors
/// A file that cannot be read, is not JSON of the expected layout (the message gives the line
/// and column), or is of another format or version.
pub fn load(path: &Path) -> Result<Option<SavedSession>, LoadError> {
    cache_file::load(&KIND, path)
}

/// The session in `text`, the content of the file `path` (its name in messages).
///
/// # Errors
/// Not JSON of the expected layout (the message gives the line and column), or of another
/// format or version.
pub fn parse(path: &str, text: &str) -> Result<SavedSession, LoadError> {
    cache_file::parse(&KIND, path, text)
}

/// Writes `session` to `path` whole (see [`cache_file::save`]).
///
/// # Errors
/// Any failure to create, write, sync or rename (the temporary file is removed).
pub fn save(path: &Path, session: &SavedSession) -> std::io::Result<()> {
    cache_file::save(&KIND, path, session)
}

#[cfg(test)]
mod tests;
