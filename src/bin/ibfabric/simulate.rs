//! `ibfabric simulate`: run an MPI benchmark (`simgrid/bench.c`, compiled once with `smpicc`
//! and cached) under SimGrid's `smpirun` on the platform of a fabric and its routing, and
//! report the simulated time and the effective bandwidth.
//!
//! SMPI runs with the `CM02` network model (max-min fair sharing, no TCP correction factors)
//! and SMPI's bandwidth and latency factors at 1, so a message costs its links' latency plus
//! its size over its share of the links' bandwidth; computation is not timed. What this model
//! leaves out of InfiniBand is in `ibfabric::simulation`.

mod patterns;
mod schedule;
mod smpi;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ibfabric::cli::output;
use ibfabric::io::{simgrid, simgrid_bench};
use ibfabric::simulation::traffic::{self, PhaseTable};
use ibfabric::simulation::{LayerPolicy, Platform, Ucx};
use serde::Serialize;

use crate::simgrid::{LayerPolicyArg, Layering, PlatformArgs, notes, platform_of};
use patterns::{Pattern, phases};
use smpi::{compiled_bench, run_with_timeout, tail};

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
    /// UCX_RNDV_THRESH for --layer-policy ucx: the largest message sent eagerly on layer 0;
    /// larger ones are split over the first K layers. The default is the IB transports'
    /// segment size, the floor of UCX's own estimate ("auto"; see `ibfabric::simulation::Ucx`).
    #[arg(long, value_name = "BYTES", default_value_t = Ucx::DEFAULT_RNDV_THRESH)]
    rndv_thresh: u64,
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
    let schedule = args
        .schedule
        .as_deref()
        .map(schedule::schedule)
        .transpose()?;
    let routing = match &schedule {
        Some((s, Some(mlfm))) if args.platform.lfts.is_none() => {
            schedule::mlfm_layout(&args.platform.fabric, mlfm, s)?
        }
        _ => args.platform.route(args.platform.load_fabric()?)?,
    };
    let explicit = args.platform.layer_policy.clone();
    let arg = explicit.clone().unwrap_or(LayerPolicyArg::Ucx(None));
    let ranks = match &schedule {
        Some((s, _)) => schedule::schedule_ranks(&routing, s, args.platform.names()?.as_ref())?,
        None => args.platform.ranks(&routing.fabric)?,
    };
    let layering = match &schedule {
        Some((s, _)) if s.layers > 1 && args.platform.lfts.is_none() => {
            if let Some(arg) = &explicit
                && !matches!(arg, LayerPolicyArg::Fixed(_) | LayerPolicyArg::RoundRobin)
            {
                bail!(
                    "the MLFM layer layout gives each of the schedule's flows its layer; \
                     --layer-policy {arg} needs tables (--lfts)"
                );
            }
            Layering {
                policy: LayerPolicy::PerPair(traffic::schedule_pair_layers(s)),
                copies: 1,
                part_bytes: args.bytes,
                name: "the schedule's".to_string(),
            }
        }
        _ => Layering::resolve(&arg, &routing, &ranks, Some(args.bytes), args.rndv_thresh)?,
    };
    let table = phases(
        args.pattern,
        &routing,
        &ranks,
        schedule.as_ref().map(|(s, _)| s),
        args.traffic_seed,
    )?;
    let (platform, host_of) = platform_of(&routing, &ranks, &model, &layering)?;
    let policy_name = layering.name.clone();
    let notes = notes(&routing, &policy_name, &model);
    // When the policy splits messages, every rank is one rank per part, each sending its part.
    let copies = layering.copies;
    let (sent_table, part_bytes) = match &table {
        Some(t) if copies > 1 => (
            Some(traffic::split_over_copies(t, copies)),
            layering.part_bytes,
        ),
        None if copies > 1 => bail!(
            "--layer-policy {policy_name} splits each message into {copies} parts, which only \
             a phase pattern (permutation, adversarial, half-shift, shift, schedule) can send; \
             MPI's collectives ({}) cannot be split: give --layer-policy fixed:0 or ucx:1, or \
             messages of at most --rndv-thresh bytes",
            args.pattern.name()
        ),
        _ => (table.clone(), args.bytes),
    };

    let bench = compiled_bench()?;
    let scratch = tempfile::Builder::new()
        .prefix("ibfabric-simulate-")
        .tempdir()
        .context("a scratch directory")?;
    let dir = args.keep_files.as_deref().unwrap_or(scratch.path());
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // smpirun runs in the scratch directory: the files' paths must not be relative.
    let dir = &std::fs::canonicalize(dir).with_context(|| dir.display().to_string())?;
    let files = write_run_files(dir, &platform, &notes, &host_of, sent_table.as_ref())?;

    let mut command = Command::new("smpirun");
    command
        .current_dir(scratch.path())
        .arg("-np")
        .arg(host_of.len().to_string())
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
        .arg(part_bytes.to_string())
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
