//! `ibfabric simulate`: run an MPI benchmark (`simgrid/bench.c`, compiled once with `smpicc`
//! and cached) under SimGrid's `smpirun` on the platform of a fabric and its routing, and
//! report the simulated time and the effective bandwidth.
//!
//! SMPI runs with the `CM02` network model (max-min fair sharing, no TCP correction factors)
//! and SMPI's bandwidth and latency factors at 1, so a message costs its links' latency plus
//! its size over its share of the links' bandwidth; computation is not timed. What this model
//! leaves out of InfiniBand is in `ibfabric::simulation`.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ibfabric::cli::output;
use ibfabric::collectives::{self, MlfmSpine, Schedule};
use ibfabric::io::{simgrid, simgrid_bench};
use ibfabric::routing::{LidTable, assign_lids};
use ibfabric::simulation::traffic::{self, PhaseTable};
use ibfabric::simulation::{LayerPolicy, Platform};
use ibfabric::topology::mlfm::Mlfm;
use ibfabric::topology::{Construction, PortRef, SwitchGraph, TopologySpec};
use serde::Serialize;

use crate::simgrid::{PlatformArgs, Routing, notes, platform_of};

/// The benchmark's source, compiled on first use.
const BENCH_SOURCE: &str = include_str!("../../../simgrid/bench.c");

#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    platform: PlatformArgs,
    /// What the ranks do.
    #[arg(long, value_enum)]
    pattern: Pattern,
    /// Message size in bytes (per pair for all-to-all patterns).
    #[arg(long)]
    bytes: u64,
    /// Iterations averaged.
    #[arg(long, default_value_t = 1)]
    iterations: u32,
    /// An all-to-all schedule: `mlfm:d=D,n=N,l=L,m=M[,spine=by-destination]` or
    /// `lsft:n=N[,k=K,m=M]` (as `ibfabric a2a` takes them). Its servers are the ranks, in
    /// schedule order; `--pattern schedule` runs its phases, the other patterns run on the
    /// same ranks. Without --lfts, an MLFM schedule runs on the MLFM layer layout and its
    /// flows take the layer the schedule gives them.
    #[arg(long, value_name = "SPEC")]
    schedule: Option<String>,
    /// Meet at a barrier between phases (phase patterns).
    #[arg(long)]
    barrier: bool,
    /// Seed of the random permutation.
    #[arg(long, default_value_t = 1)]
    traffic_seed: u64,
    /// Extra SimGrid configuration passed to smpirun as --cfg=KEY:VALUE (repeatable).
    #[arg(long, value_name = "KEY:VALUE")]
    smpi_cfg: Vec<String>,
    /// Keep the platform, hostfile and phase file in DIR (default: a scratch directory).
    #[arg(long, value_name = "DIR")]
    keep_files: Option<PathBuf>,
    /// Give up on smpirun after this many seconds.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pattern {
    /// MPI_Alltoall (SMPI's default algorithm selection).
    Alltoall,
    /// MPI_Allreduce of the message (as doubles).
    Allreduce,
    /// MPI_Bcast from rank 0.
    Bcast,
    /// One phase: a seeded random permutation of the ranks.
    Permutation,
    /// One phase: each switch's ranks send to the ranks of a farthest switch.
    Adversarial,
    /// The shift all-to-all in phases: phase p, rank r sends to r + p.
    Shift,
    /// The phases of --schedule.
    Schedule,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Self::Alltoall => "alltoall",
            Self::Allreduce => "allreduce",
            Self::Bcast => "bcast",
            Self::Permutation => "permutation",
            Self::Adversarial => "adversarial",
            Self::Shift => "shift",
            Self::Schedule => "schedule",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table for people.
    Text,
    /// JSON.
    Json,
}

#[derive(Serialize)]
struct Report {
    fabric: String,
    routing: String,
    layer_policy: String,
    pattern: &'static str,
    schedule: Option<String>,
    ranks: usize,
    bytes: u64,
    iterations: u32,
    simulated_seconds: f64,
    /// Bytes the busiest rank sends to other ranks (all-to-all, phases) or the message
    /// (bcast, allreduce).
    bytes_per_rank: u64,
    effective_bandwidth_gbps: f64,
    hosts: usize,
    links: usize,
    routes: usize,
    wall_seconds: f64,
}

/// Parses `key=value,…` after a scheme name.
fn parameters(spec: &str, rest: &str) -> anyhow::Result<Vec<(String, String)>> {
    rest.split(',')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .with_context(|| format!("--schedule {spec:?}: {kv:?} is not key=value"))
        })
        .collect()
}

/// The schedule `--schedule` names, and the MLFM it is for (when it is one).
fn schedule(spec: &str) -> anyhow::Result<(Schedule, Option<Mlfm>)> {
    let (scheme, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let params = parameters(spec, rest)?;
    let get = |key: &str| -> anyhow::Result<Option<u32>> {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| {
                v.parse()
                    .with_context(|| format!("--schedule {spec:?}: {key}={v:?} is not a number"))
            })
            .transpose()
    };
    let need = |key: &str| -> anyhow::Result<u32> {
        get(key)?.with_context(|| format!("--schedule {spec:?}: {scheme} needs {key}="))
    };
    match scheme {
        "mlfm" => {
            let spine = match params.iter().find(|(k, _)| k == "spine") {
                None => MlfmSpine::BySource,
                Some((_, v)) if v == "by-source" => MlfmSpine::BySource,
                Some((_, v)) if v == "by-destination" => MlfmSpine::ByDestination,
                Some((_, v)) => {
                    bail!("--schedule {spec:?}: spine={v:?} (by-source or by-destination)")
                }
            };
            let d = need("d")?;
            let s = collectives::mlfm(d, need("n")?, need("l")?, need("m")?, spine)?;
            Ok((s, Some(Mlfm::new(d)?)))
        }
        "lsft" => {
            let n = need("n")?;
            let s = match (get("k")?, get("m")?) {
                (None, None) => collectives::lsft_full(n)?,
                (Some(k), Some(m)) => collectives::lsft_partial(n, k, m)?,
                _ => bail!("--schedule {spec:?}: give both k= and m= (partial) or neither"),
            };
            Ok((s, None))
        }
        other => bail!("--schedule {spec:?}: unknown scheme {other:?} (mlfm or lsft)"),
    }
}

/// The routing of an MLFM schedule without --lfts: the MLFM layer layout on the construction.
fn mlfm_layout(args: &SimulateArgs, mlfm: &Mlfm, schedule: &Schedule) -> anyhow::Result<Routing> {
    let spec: TopologySpec = args.platform.fabric.parse().with_context(|| {
        format!(
            "the MLFM layer layout needs --fabric mlfm:d={} (or give --lfts)",
            mlfm.d()
        )
    })?;
    if spec != (TopologySpec::Mlfm { d: mlfm.d() }) {
        bail!(
            "--schedule is for mlfm:d={}, --fabric is {}; give --fabric mlfm:d={} or --lfts",
            mlfm.d(),
            args.platform.fabric,
            mlfm.d()
        );
    }
    let mut fabric = mlfm.build();
    assign_lids(&mut fabric, schedule.layers.trailing_zeros() as u8)?;
    let lids = LidTable::from_fabric(&fabric)?;
    let spine = if schedule.layers > 1 {
        MlfmSpine::BySource
    } else {
        MlfmSpine::ByDestination
    };
    let columns = schedule_columns(schedule).unwrap_or(mlfm.columns());
    let tables = collectives::mlfm_layer_tables(mlfm, &fabric, &lids, columns, spine);
    let plural = if schedule.layers == 1 { "" } else { "s" };
    Ok(Routing {
        fabric,
        lids,
        tables,
        description: format!("MLFM layer layout, {} layer{plural}", schedule.layers),
    })
}

/// ℓ of an MLFM schedule, from its name `mlfm d=… n=… l=… m=…`.
fn schedule_columns(schedule: &Schedule) -> Option<u32> {
    schedule
        .name
        .split_whitespace()
        .find_map(|w| w.strip_prefix("l=")?.parse().ok())
}

/// The ranks of a schedule: its servers by name.
fn schedule_ranks(routing: &Routing, schedule: &Schedule) -> anyhow::Result<Vec<PortRef>> {
    let fabric = &routing.fabric;
    schedule
        .ranks
        .iter()
        .map(|name| {
            let node = fabric.node_by_name(name).with_context(|| {
                format!("the schedule's server {name:?} is not in {}", fabric.name)
            })?;
            crate::simgrid::endpoint_of(fabric, node)
                .with_context(|| format!("{name}: no port with a LID cabled to a switch"))
        })
        .collect()
}

/// The phase table of a phase pattern over `ranks`.
fn phases(
    pattern: Pattern,
    routing: &Routing,
    ranks: &[PortRef],
    schedule: Option<&Schedule>,
    seed: u64,
) -> anyhow::Result<Option<PhaseTable>> {
    Ok(match pattern {
        Pattern::Alltoall | Pattern::Allreduce | Pattern::Bcast => None,
        Pattern::Permutation => Some(traffic::random_permutation(ranks.len(), seed)),
        Pattern::Shift => {
            let names = (0..ranks.len()).map(|r| r.to_string()).collect();
            Some(traffic::from_schedule(&collectives::shift(names)))
        }
        Pattern::Schedule => match schedule {
            Some(s) => Some(traffic::from_schedule(s)),
            None => bail!("--pattern schedule needs --schedule"),
        },
        Pattern::Adversarial => {
            let fabric = &routing.fabric;
            let graph = SwitchGraph::new(fabric);
            let mut dense = vec![u32::MAX; fabric.nodes().len()];
            for s in 0..graph.len() {
                dense[graph.node(s).index()] = s as u32;
            }
            let switch_of: Vec<u32> = ranks
                .iter()
                .map(|&p| fabric.peer(p).map_or(u32::MAX, |q| dense[q.node.index()]))
                .collect();
            let distance = distances_from(&graph, &switch_of);
            Some(traffic::adversarial(&switch_of, |a, b| {
                distance
                    .get(&a)
                    .map_or(0, |d| d.get(b as usize).copied().unwrap_or(0))
            }))
        }
    })
}

/// Hop distances from each switch that holds a rank (breadth-first).
fn distances_from(
    graph: &SwitchGraph,
    switches: &[u32],
) -> std::collections::HashMap<u32, Vec<u32>> {
    let mut out = std::collections::HashMap::new();
    for &s in switches {
        if s == u32::MAX || out.contains_key(&s) {
            continue;
        }
        let mut d = vec![u32::MAX; graph.len()];
        d[s as usize] = 0;
        let mut queue = std::collections::VecDeque::from([s as usize]);
        while let Some(u) = queue.pop_front() {
            for &v in graph.neighbours(u) {
                if d[v as usize] == u32::MAX {
                    d[v as usize] = d[u] + 1;
                    queue.push_back(v as usize);
                }
            }
        }
        out.insert(s, d);
    }
    out
}

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
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.trim().is_empty())
        .collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The benchmark binary, compiled with smpicc on first use.
fn compiled_bench() -> anyhow::Result<PathBuf> {
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
fn run_with_timeout(
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

/// The input files of one run, in `dir`.
struct RunFiles {
    platform: PathBuf,
    hostfile: PathBuf,
    phases: Option<PathBuf>,
}

fn write_run_files(
    dir: &Path,
    platform: &Platform,
    notes: &[String],
    host_of: &[usize],
    table: Option<&PhaseTable>,
) -> anyhow::Result<RunFiles> {
    let files = RunFiles {
        platform: dir.join("platform.xml"),
        hostfile: dir.join("hostfile.txt"),
        phases: table.map(|_| dir.join("phases.txt")),
    };
    output::write_atomically(
        &files.platform,
        simgrid::write_platform(platform, notes).as_bytes(),
    )?;
    let hosts = host_of.iter().map(|&h| platform.hosts[h].id.as_str());
    output::write_atomically(&files.hostfile, simgrid::write_hostfile(hosts).as_bytes())?;
    if let (Some(path), Some(table)) = (&files.phases, table) {
        output::write_atomically(path, simgrid_bench::write_phases(table).as_bytes())?;
    }
    Ok(files)
}

pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    if args.bytes == 0 || args.bytes > 1 << 30 {
        bail!("--bytes {} must be from 1 to 2^30", args.bytes);
    }
    if args.iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    let model = args.platform.link_model()?;
    let schedule = args.schedule.as_deref().map(schedule).transpose()?;
    let routing = match &schedule {
        Some((s, Some(mlfm))) if args.platform.lfts.is_none() => mlfm_layout(&args, mlfm, s)?,
        _ => args.platform.route(args.platform.load_fabric()?)?,
    };
    let (ranks, policy, policy_name) = match &schedule {
        Some((s, _)) => {
            let ranks = schedule_ranks(&routing, s)?;
            if s.layers > 1 && args.platform.lfts.is_none() {
                let layers = traffic::schedule_pair_layers(s);
                (
                    ranks,
                    LayerPolicy::PerPair(layers),
                    "the schedule's".to_string(),
                )
            } else {
                let name = args.platform.layer_policy.to_string();
                (ranks, args.platform.layer_policy(), name)
            }
        }
        None => {
            let name = args.platform.layer_policy.to_string();
            (
                args.platform.ranks(&routing.fabric)?,
                args.platform.layer_policy(),
                name,
            )
        }
    };
    let table = phases(
        args.pattern,
        &routing,
        &ranks,
        schedule.as_ref().map(|(s, _)| s),
        args.traffic_seed,
    )?;
    let (platform, host_of) = platform_of(&routing, &ranks, &model, &policy)?;
    let notes = notes(&routing, &policy_name, &model);

    let bench = compiled_bench()?;
    let scratch = tempfile::Builder::new()
        .prefix("ibfabric-simulate-")
        .tempdir()
        .context("a scratch directory")?;
    let dir = args.keep_files.as_deref().unwrap_or(scratch.path());
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // smpirun runs in the scratch directory: the files' paths must not be relative.
    let dir = &std::fs::canonicalize(dir).with_context(|| dir.display().to_string())?;
    let files = write_run_files(dir, &platform, &notes, &host_of, table.as_ref())?;

    let mut command = Command::new("smpirun");
    command
        .current_dir(scratch.path())
        .arg("-np")
        .arg(ranks.len().to_string())
        .arg("-platform")
        .arg(&files.platform)
        .arg("-hostfile")
        .arg(&files.hostfile);
    // smpirun's `-tmpdir DIR` (3.32) shifts one argument instead of two; its default is the
    // directory of `mktemp -u`, which follows TMPDIR. SMPI copies the benchmark there once
    // per rank.
    command.env("TMPDIR", scratch.path());
    for cfg in [
        "smpi/simulate-computation:no",
        "network/model:CM02",
        "smpi/bw-factor:1",
        "smpi/lat-factor:1",
    ] {
        command.arg(format!("--cfg={cfg}"));
    }
    for cfg in &args.smpi_cfg {
        command.arg(format!("--cfg={cfg}"));
    }
    command.arg("--log=root.thres:warning").arg(&bench);
    let bench_pattern = if table.is_some() {
        "phases"
    } else {
        args.pattern.name()
    };
    command
        .arg(bench_pattern)
        .arg(args.bytes.to_string())
        .arg(args.iterations.to_string());
    if let Some(path) = &files.phases {
        command.arg(path);
        if args.barrier {
            command.arg("barrier");
        }
    }
    log::info!("running {command:?}");
    let started = Instant::now();
    let (status, stdout, stderr) =
        run_with_timeout(command, Duration::from_secs(args.timeout.max(1)))?;
    let wall_seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("smpirun failed ({status}):\n{}", tail(&stderr, 20));
    }
    let result = simgrid_bench::parse_result(&stdout).map_err(|e| {
        anyhow::anyhow!(
            "the benchmark's output: {e}\nsmpirun's stderr:\n{}",
            tail(&stderr, 20)
        )
    })?;

    let n = ranks.len() as u64;
    let bytes_per_rank = match (&table, args.pattern) {
        (Some(t), _) => t.max_messages_sent() as u64 * args.bytes,
        (None, Pattern::Alltoall) => n.saturating_sub(1) * args.bytes,
        (None, _) => args.bytes,
    };
    let bandwidth = if result.simulated_seconds > 0.0 {
        bytes_per_rank as f64 * 8.0 / result.simulated_seconds / 1e9
    } else {
        0.0
    };
    let report = Report {
        fabric: routing.fabric.name.clone(),
        routing: routing.description.clone(),
        layer_policy: policy_name,
        pattern: args.pattern.name(),
        schedule: schedule.as_ref().map(|(s, _)| s.name.clone()),
        ranks: ranks.len(),
        bytes: args.bytes,
        iterations: args.iterations,
        simulated_seconds: result.simulated_seconds,
        bytes_per_rank,
        effective_bandwidth_gbps: bandwidth,
        hosts: platform.hosts.len(),
        links: platform.links.len(),
        routes: platform.route_count(),
        wall_seconds,
    };
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Text => text(&report),
    };
    output::emit(None, &text)?;
    Ok(ExitCode::SUCCESS)
}

fn text(r: &Report) -> String {
    let schedule = r
        .schedule
        .as_ref()
        .map_or(String::new(), |s| format!(" ({s})"));
    let rows = [
        ("fabric", r.fabric.clone()),
        (
            "routing",
            format!("{}; layer policy {}", r.routing, r.layer_policy),
        ),
        (
            "pattern",
            format!(
                "{}{schedule}, {} ranks, {} B per message, {} iteration(s)",
                r.pattern, r.ranks, r.bytes, r.iterations
            ),
        ),
        ("simulated", format!("{:.6e} s", r.simulated_seconds)),
        (
            "bandwidth",
            format!(
                "{:.3} Gb/s per rank ({} B sent by the busiest rank)",
                r.effective_bandwidth_gbps, r.bytes_per_rank
            ),
        ),
        (
            "platform",
            format!(
                "{} hosts, {} links, {} routes; smpirun {:.2} s",
                r.hosts, r.links, r.routes, r.wall_seconds
            ),
        ),
    ];
    rows.iter().map(|(k, v)| format!("{k:<10} {v}\n")).collect()
}
