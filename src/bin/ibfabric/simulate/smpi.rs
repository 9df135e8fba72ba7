//! SimGrid's SMPI tools: the benchmark compiled with `smpicc` (cached by the hash of its
//! source) and `smpirun` run under a time limit.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The benchmark's source, compiled on first use.
const BENCH_SOURCE: &str = include_str!("../../../../simgrid/bench.c");

/// FNV-1a, for the cache name of the compiled benchmark.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where the compiled benchmark is cached: $XDG_CACHE_HOME/ibfabric, ~/.cache/ibfabric, or
/// the system's temporary directory.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("ibfabric").join("simgrid")
}

fn missing_simgrid(tool: &str, err: std::io::Error) -> anyhow::Error {
    if err.kind() == std::io::ErrorKind::NotFound {
        anyhow::anyhow!(
            "{tool} not found: install libsimgrid-dev (SimGrid's SMPI: smpicc and smpirun)"
        )
    } else {
        anyhow::anyhow!("cannot run {tool}: {err}")
    }
}

/// The last `lines` lines of `text` that are not indented (SimGrid indents backtraces and its
/// list of configuration keys, which would bury the message).
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.trim().is_empty())
        .collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The benchmark binary, compiled with smpicc on first use.
pub fn compiled_bench() -> anyhow::Result<PathBuf> {
    let dir = cache_dir();
    let binary = dir.join(format!("bench-{:016x}", fnv1a(BENCH_SOURCE.as_bytes())));
    if binary.is_file() {
        return Ok(binary);
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix("bench-build-")
        .tempdir_in(&dir)
        .with_context(|| format!("a scratch directory in {}", dir.display()))?;
    let source = scratch.path().join("bench.c");
    std::fs::write(&source, BENCH_SOURCE)?;
    let built = scratch.path().join("bench");
    log::info!("compiling the benchmark with smpicc into {}", dir.display());
    let out = Command::new("smpicc")
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&built)
        .output()
        .map_err(|e| missing_simgrid("smpicc", e))?;
    if !out.status.success() {
        bail!(
            "smpicc failed ({}):\n{}",
            out.status,
            tail(&String::from_utf8_lossy(&out.stderr), 20)
        );
    }
    std::fs::rename(&built, &binary).with_context(|| format!("storing {}", binary.display()))?;
    Ok(binary)
}

/// Runs `command`, killing it after `timeout`; returns its status, stdout and stderr.
pub fn run_with_timeout(
    mut command: Command,
    timeout: Duration,
) -> anyhow::Result<(std::process::ExitStatus, String, String)> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| missing_simgrid("smpirun", e))?;
    let mut stdout = child.stdout.take().context("smpirun's stdout")?;
    let mut stderr = child.stderr.take().context("smpirun's stderr")?;
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "smpirun did not finish in {} s (--timeout)",
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    Ok((
        status,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}
