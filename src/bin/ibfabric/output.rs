//! Where results go: stdout, or a file replaced atomically (a reader never sees half a file);
//! diagnostics to stderr at the verbosity asked for; and the exit status (shared by the
//! `ibfabric` and `cabling` commands).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

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
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Sends log records to stderr: warnings by default, `-v` info, `-vv` debug; `RUST_LOG`
/// overrides.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => log::LevelFilter::Warn,
        1 => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    };
    env_logger::Builder::new()
        .filter_level(level)
        .parse_default_env()
        .init();
}

/// The exit status of a command's result: its own code, success when the reader of stdout
/// went away, else the error on stderr (prefixed with `program`) and 2.
pub fn exit_code(program: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{program}: {err:#}");
            ExitCode::from(2)
        }
    }
}
