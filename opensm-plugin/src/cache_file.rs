//! Files the plugin keeps in OpenSM's cache directory, next to the `guid2lid` file OpenSM keeps
//! there for the same reason — a restarted subnet manager should give the fabric what it had:
//! JSON with a `format` and a layout `version`, written whole or not at all (a temporary file in
//! the same directory, synced, renamed over the old one, the directory synced). A file of
//! another format or version is refused by name, so that no other file is mistaken for one.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// OpenSM's cache directory: `OSM_CACHE_DIR`, else `/var/cache/opensm` (as OpenSM finds it for
/// `guid2lid`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("OSM_CACHE_DIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("/var/cache/opensm"), PathBuf::from)
}

/// Why a cache file was not used.
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
    /// The file is not one of this format and version.
    #[error("{path}: {what}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, and where.
        what: String,
    },
}

/// What a cache file holds: its format's name (in the file's `format` field and in messages),
/// the version of its layout, and what to call a file of another format.
pub struct Kind {
    /// The `format` field.
    pub format: &'static str,
    /// The `version` field; a file of another version is refused.
    pub version: u32,
    /// A file of another format is "not a {this}".
    pub what: &'static str,
}

/// The content of the file at `path`; `None` when there is no file.
///
/// # Errors
/// As [`parse`], or a file that cannot be read.
pub fn load<T: DeserializeOwned>(kind: &Kind, path: &Path) -> Result<Option<T>, LoadError> {
    match fs::read_to_string(path) {
        Ok(text) => parse(kind, &path.display().to_string(), &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LoadError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// The content in `text`, of the file `path` (its name in messages): the fields beside
/// `format`, `version` and `written_by`.
///
/// # Errors
/// Not JSON of the expected layout (the message gives the line and column), or of another
/// format or version.
pub fn parse<T: DeserializeOwned>(kind: &Kind, path: &str, text: &str) -> Result<T, LoadError> {
    let invalid = |what: String| LoadError::Invalid {
        path: path.to_string(),
        what,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let format = value.get("format").and_then(|f| f.as_str());
    if format != Some(kind.format) {
        return Err(invalid(format!(
            "not a {} (format {}, expected \"{}\")",
            kind.what,
            format.map_or("missing".to_string(), |f| format!("\"{f}\"")),
            kind.format
        )));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(u64::from(kind.version)) {
        return Err(invalid(format!(
            "saved by another version of the plugin (layout version {}, expected {})",
            version.map_or("missing".to_string(), |v| v.to_string()),
            kind.version
        )));
    }
    serde_json::from_str(text).map_err(|e| invalid(e.to_string()))
}

#[derive(Serialize)]
struct OnDisk<'a, T> {
    format: &'a str,
    version: u32,
    written_by: String,
    #[serde(flatten)]
    content: &'a T,
}

/// Writes `content` to `path` whole: a temporary file beside it, synced and renamed over it,
/// then the directory synced, so that a crash leaves the old file or the new one.
///
/// # Errors
/// Any failure to create, write, sync or rename (the temporary file is removed).
pub fn save<T: Serialize>(kind: &Kind, path: &Path, content: &T) -> std::io::Result<()> {
    let file = OnDisk {
        format: kind.format,
        version: kind.version,
        written_by: format!("osmlayered {}", env!("CARGO_PKG_VERSION")),
        content,
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

/// Removes the file at `path`, if there is one.
///
/// # Errors
/// A file that exists and cannot be removed.
pub fn remove(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
