//! The Prometheus metrics file (`metrics_file`): after every routing pass the plugin rewrites
//! it with the core's rendering of the passes so far ([`SweepMetrics`]), for node_exporter's
//! textfile collector, which reads every `*.prom` file of its directory at each scrape. The
//! file is replaced whole — written to a temporary file in the same directory, synced, renamed
//! over the old one — so a scrape never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use ibfabric::session::metrics::SweepMetrics;

/// Replaces the file at `path` with `text` atomically: a temporary file beside it (a name
/// the textfile collector ignores: it does not end in `.prom`), synced to disk, renamed over
/// `path`; then the directory synced, so the rename survives a crash. The temporary file is
/// removed on failure.
///
/// # Errors
/// What creating, writing, syncing or renaming returned.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "metrics".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // Best effort: a directory that cannot be opened or synced leaves a valid file in place.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The metrics of the passes since the plugin was loaded, and the file they go to.
#[derive(Default)]
pub struct MetricsFile {
    /// The configured `metrics_file`, as of the last pass that read the configuration.
    pub path: Option<PathBuf>,
    /// Every pass recorded since the plugin was loaded.
    pub metrics: SweepMetrics,
}

impl MetricsFile {
    /// Writes the metrics to the configured file, if any. A file that cannot be written costs
    /// a warning, never the routing.
    pub fn write(&self) {
        if let Some(path) = &self.path
            && let Err(e) = write_atomically(path, &self.metrics.render())
        {
            log::warn!("metrics_file {}: cannot write: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layered.prom");
        write_atomically(&path, "first\n").unwrap();
        write_atomically(&path, "second\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second\n");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["layered.prom"]);
    }

    #[test]
    fn a_directory_that_does_not_exist_is_an_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("layered.prom");
        assert!(write_atomically(&path, "x\n").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
