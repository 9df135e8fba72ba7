//! `ibfabric route`: compute a routing for a fabric, report its quality with the analyser, and
//! write the forwarding tables OpenSM's `file` engine (`lfts_file`) can load; with
//! `--deadlock`, also make it deadlock-free and write its path SLs and SL-to-VL tables.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, ValueEnum};
use ibfabric::analysis::{self, Options};
use ibfabric::cli::progress::Progress;
use ibfabric::cli::{html, output};
use ibfabric::collectives::detect_mlfm;
use ibfabric::deadlock::SwitchSls;
use ibfabric::io::{lfts, path_sl, sl2vl};
use ibfabric::options::{
    AlgorithmName, DeadlockMode, FrontEndDefaults, MAX_LAYERS, MAX_VLS, PathOptions, ShortagePolicy,
};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{LidTable, assign_lids};
use ibfabric::session::{DeadlockSettings, Layout, layout};

use crate::source::load_fabric;

/// The command's defaults of the options where it and the plugin differ.
const COMMAND_DEFAULTS: FrontEndDefaults = FrontEndDefaults::COMMAND;
// Evaluated at compile time: the command always has these two.
const DEFAULT_LAYERS: usize = COMMAND_DEFAULTS
    .layers
    .expect("the command's default layers");
const DEFAULT_VLS: u8 = COMMAND_DEFAULTS.vls.expect("the command's default VLs");

#[derive(Args)]
pub struct RouteArgs {
    /// The fabric: topology spec (slimfly:q=5), fabric document or plan, or an ibnetdiscover
    /// dump (its LIDs are used when it has them; otherwise LIDs are assigned).
    #[arg(long)]
    fabric: String,
    /// Number of layers (a power of two: LID offsets 0..L of every endpoint port).
    #[arg(long, default_value_t = DEFAULT_LAYERS)]
    layers: usize,
    #[command(flatten)]
    paths: PathOptions,
    /// Write the forwarding tables to FILE (ibroute / opensm-lfts.dump format).
    #[arg(long, value_name = "FILE")]
    lft_out: Option<PathBuf>,
    /// Node-name-map applied when reading an ibnetdiscover dump.
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also compute the maximum achievable throughput (linear programs; slow on large fabrics).
    #[arg(long)]
    mat: bool,
    #[command(flatten)]
    prefix: crate::analyze::PrefixArgs,
    /// Make the routing deadlock-free: lanes by port pair (deadlock-free whatever SL the
    /// traffic carries), DFSSSP-style virtual lanes or the switch-colouring scheme (both only
    /// for senders that use the path SLs), or auto (lanes by port pair where 2 VLs exist).
    #[arg(long, value_enum, default_value_t = COMMAND_DEFAULTS.deadlock)]
    deadlock: DeadlockMode,
    /// Data VLs the deadlock scheme may use (1..=15).
    #[arg(
        long,
        default_value_t = DEFAULT_VLS,
        value_parser = clap::value_parser!(u8).range(1..=i64::from(MAX_VLS))
    )]
    vls: u8,
    /// When the VLs do not suffice: fail, or halve the layers until the routing fits.
    #[arg(long, value_enum, default_value_t = COMMAND_DEFAULTS.on_vl_shortage)]
    on_vl_shortage: ShortagePolicy,
    /// Write every (source LID, destination LID) pair's SL to FILE (`SLID DLID SL` lines, as
    /// `deadlock-check --path-sl` reads). Needs --deadlock.
    #[arg(long, value_name = "FILE", requires = "deadlock")]
    path_sl_out: Option<PathBuf>,
    /// Write the SL-to-VL tables to FILE (opensm-sl2vl.dump format). Needs --deadlock.
    #[arg(long, value_name = "FILE", requires = "deadlock")]
    sl2vl_out: Option<PathBuf>,
    /// Route FABRIC first (a dump, document or spec, as --fabric), then repair that routing
    /// for --fabric, which lost cables, switches or hosts since — what the plugin does on a
    /// sweep — and report the churn: routes changed against routes whose path crossed a loss.
    /// Needs lanes by port pair (--deadlock auto or port-pair).
    #[arg(long, value_name = "FABRIC", requires = "deadlock")]
    repair_from: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A report for people.
    Text,
    /// The analyser's report as JSON.
    Json,
    /// The analyser's report as one self-contained HTML page with plots (see `analyze
    /// --format html`).
    Html,
}

/// Routes, reports; exit status 0 when the tables are complete, 1 otherwise.
pub fn run(args: RouteArgs) -> anyhow::Result<ExitCode> {
    if !args.layers.is_power_of_two() || args.layers > MAX_LAYERS {
        bail!(
            "--layers {} must be a power of two from 1 to {MAX_LAYERS} (LMC 0..7)",
            args.layers
        );
    }
    let mut fabric = load_fabric(&args.fabric, args.node_name_map.as_deref())?;
    let has_lids = fabric
        .nodes()
        .iter()
        .any(|n| n.ports.iter().any(|p| p.lid != 0));
    if !has_lids {
        assign_lids(&mut fabric, args.layers.trailing_zeros() as u8)?;
    }
    let started = std::time::Instant::now();
    let config = args.paths.routing(args.layers);
    // The MLFM all-to-all layout needs the MLFM's structure: found in the cabling, or refused.
    let mlfm = match args.paths.algorithm {
        AlgorithmName::MlfmA2a => Some(detect_mlfm(&fabric)?),
        _ => None,
    };
    if mlfm.is_some() && args.repair_from.is_some() {
        bail!("--repair-from is not offered with --algorithm mlfm-a2a");
    }
    let mut repair_line = None;
    let progress = Progress::start(match args.deadlock.scheme_choice() {
        None => "routing layers",
        Some(_) => "routing layers and assigning VLs",
    });
    let settings = DeadlockSettings {
        mode: args.deadlock,
        vls: args.vls,
        shortage: args.on_vl_shortage.into(),
    };
    let (lids, tables, deadlock_free) = match args.deadlock.scheme_choice() {
        Some(_) if args.repair_from.is_some() => {
            let previous = args.repair_from.as_deref().unwrap_or_default();
            let (done, line) = crate::repair::route_and_repair(
                previous,
                &fabric,
                &config,
                &settings,
                args.node_name_map.as_deref(),
            )?;
            repair_line = Some(line);
            let lids = LidTable::from_fabric(&fabric)?;
            let tables = done.tables.clone();
            (lids, tables, Some(done))
        }
        _ => {
            // The dispatch the plugin's routing session makes too.
            let lids = LidTable::from_fabric(&fabric)?;
            let graph = RoutingGraph::new(&fabric);
            match layout(
                &fabric,
                &lids,
                &graph,
                &config,
                mlfm.as_ref(),
                &settings.schemes(),
                settings.shortage,
            )? {
                Layout::Plain { tables, .. } => (lids, tables, None),
                Layout::DeadlockFree(done) => {
                    let tables = done.tables.clone();
                    (lids, tables, Some(*done))
                }
            }
        }
    };
    log::info!(
        "routed {} in {:.2} s on {} thread(s)",
        fabric.name,
        started.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    if let Some(path) = &args.lft_out {
        output::stream_atomically(path, |out| {
            lfts::write_ibroute_to(out, &fabric, &lids, &tables)
        })?;
    }
    progress.phase("analysing the routing");
    let report = analysis::analyze(
        &fabric,
        &lids,
        &tables,
        &Options {
            mat: args.mat,
            prefix: args.prefix.options(),
            ..Options::default()
        },
    );
    drop(progress);
    if let Some(done) = &deadlock_free {
        if let Some(path) = &args.path_sl_out {
            let any_sl;
            let sls = match &done.path_sls {
                Some(sls) => sls,
                None => {
                    log::info!(
                        "{}: every SL is deadlock-free with lanes by port pair; every pair is \
                         written with SL 0",
                        path.display()
                    );
                    any_sl = SwitchSls::new(&fabric, &lids, 0);
                    &any_sl
                }
            };
            let text = path_sl::write_every_pair(&lids, sls);
            output::write_atomically(path, text.as_bytes())?;
        }
        if let Some(path) = &args.sl2vl_out {
            output::write_atomically(path, sl2vl::write_opensm(&fabric, &done.sl2vl).as_bytes())?;
        }
    }
    let deadlock_line = deadlock_free.as_ref().map(|done| {
        let plural = if done.layers == 1 { "" } else { "s" };
        let mut line = format!("{} ({} layer{plural}", done.outcome, done.layers);
        if done.layers < done.requested_layers {
            line += &format!(" of {} asked for: VLs ran short", done.requested_layers);
        }
        line + ")"
    });
    let guarantee = deadlock_free
        .as_ref()
        .map(|done| done.outcome.guarantee().to_string());
    let rendered = match args.format {
        Format::Text => {
            let mut text = format!("{}: {}\n{report}", fabric.name, fabric.summary());
            if let (Some(line), Some(guarantee)) = (&deadlock_line, &guarantee) {
                text += &format!("\n{line}\n{guarantee}\n");
            }
            if let Some(line) = &repair_line {
                text += &format!("{line}\n");
            }
            text
        }
        Format::Json => {
            let mut value = serde_json::to_value(&report)?;
            if let (Some(line), Some(guarantee)) = (deadlock_line, guarantee) {
                value["deadlock"] = serde_json::Value::String(line);
                value["deadlock_guarantee"] = serde_json::Value::String(guarantee);
            }
            if let Some(line) = repair_line {
                value["repair"] = serde_json::Value::String(line);
            }
            serde_json::to_string_pretty(&value)? + "\n"
        }
        Format::Html => {
            let notes: Vec<String> = [deadlock_line, guarantee, repair_line]
                .into_iter()
                .flatten()
                .collect();
            html::analysis_page(&report, &notes)
        }
    };
    output::emit(None, &rendered)?;
    Ok(if report.is_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
