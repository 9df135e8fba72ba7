//! Where results go: stdout, or a file replaced atomically (a reader never sees half a file).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Writes `text` to `path` (atomically: a temporary file in the same directory, then a rename),
/// or to stdout when `path` is `None` or `-`.
pub fn emit(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        None => write_stdout(text),
        Some(p) if p == Path::new("-") => write_stdout(text),
        Some(p) => write_atomically(p, text.as_bytes()),
    }
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Replaces `path` with `bytes` so that it holds either the old or the new content, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old content, longer than the new one").unwrap();
        emit(Some(&path), "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = write_atomically(&missing.join("out.txt"), b"x").unwrap_err();
        assert!(
            format!("{err:#}").contains(&missing.display().to_string()),
            "{err:#}"
        );
    }
}
