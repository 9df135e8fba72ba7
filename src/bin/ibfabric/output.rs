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

/// Whether the error is a closed stdout (`ibfabric ... | head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
