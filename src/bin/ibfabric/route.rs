//! `ibfabric route`: compute a routing for a fabric, report its quality with the analyser, and
//! write the forwarding tables OpenSM's `file` engine (`lfts_file`) can load; with
//! `--deadlock`, also make it deadlock-free and write its path SLs and SL-to-VL tables.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, ValueEnum};
use ibfabric::analysis::{self, Options};
use ibfabric::deadlock::{SchemeChoice, Shortage, route_deadlock_free};
use ibfabric::io::{lfts, path_sl, sl2vl};
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{
    Algorithm, LidTable, PathLengths, Routed, RoutingConfig, assign_lids, route_fabric,
};

use crate::output;
use crate::source::load_fabric;

#[derive(Args)]
pub struct RouteArgs {
    /// The fabric: topology spec (slimfly:q=5), fabric document or plan, or an ibnetdiscover
    /// dump (its LIDs are used when it has them; otherwise LIDs are assigned).
    #[arg(long)]
    fabric: String,
    /// Number of layers (a power of two: LID offsets 0..L of every endpoint port).
    #[arg(long, default_value_t = 4)]
    layers: usize,
    /// Routing algorithm.
    #[arg(long, value_enum, default_value_t = AlgorithmArg::Layered)]
    algorithm: AlgorithmArg,
    /// Seed of the random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Layered: hops a non-minimal path needs beyond the pair's distance.
    #[arg(long, default_value_t = 1)]
    min_extra_hops: u8,
    /// Layered: the longest path allowed when distance + min-extra-hops is shorter.
    #[arg(long, default_value_t = 3)]
    max_hops: u8,
    /// RUES: percentage of links kept in each further layer.
    #[arg(long, default_value_t = 60)]
    keep_percent: u32,
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
    /// Make the routing deadlock-free: DFSSSP-style virtual lanes, the switch-colouring
    /// scheme, or auto (colouring where it applies, else DFSSSP).
    #[arg(long, value_enum, default_value_t = DeadlockArg::None)]
    deadlock: DeadlockArg,
    /// Data VLs the deadlock scheme may use (1..=15).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=15))]
    vls: u8,
    /// When the VLs do not suffice: fail, or halve the layers until the routing fits.
    #[arg(long, value_enum, default_value_t = ShortageArg::Fail)]
    on_vl_shortage: ShortageArg,
    /// Write every (source LID, destination LID) pair's SL to FILE (`SLID DLID SL` lines, as
    /// `deadlock-check --path-sl` reads). Needs --deadlock.
    #[arg(long, value_name = "FILE", requires = "deadlock")]
    path_sl_out: Option<PathBuf>,
    /// Write the SL-to-VL tables to FILE (opensm-sl2vl.dump format). Needs --deadlock.
    #[arg(long, value_name = "FILE", requires = "deadlock")]
    sl2vl_out: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DeadlockArg {
    /// No deadlock avoidance (every route on one SL).
    None,
    /// DFSSSP-style virtual lanes, else the colouring scheme.
    Auto,
    /// DFSSSP-style virtual lanes.
    Dfsssp,
    /// The switch-colouring scheme (paths of at most 3 hops).
    Colouring,
}

#[derive(Clone, Copy, ValueEnum)]
enum ShortageArg {
    /// Exit 2 with the VLs needed and available.
    Fail,
    /// Halve the layers until the routing fits (each reduction is reported).
    FewerLayers,
}

#[derive(Clone, Copy, ValueEnum)]
enum AlgorithmArg {
    /// Layer 0 minimal, further layers almost-minimal and diverse.
    Layered,
    /// Every layer minimal and balanced (the baseline of OpenSM's minhop/SSSP).
    Minimal,
    /// Random uniform edge selection per layer (the paper's comparison).
    Rues,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A report for people.
    Text,
    /// The analyser's report as JSON.
    Json,
}

/// Routes, reports; exit status 0 when the tables are complete, 1 otherwise.
pub fn run(args: RouteArgs) -> anyhow::Result<ExitCode> {
    if !args.layers.is_power_of_two() || args.layers > 128 {
        bail!(
            "--layers {} must be a power of two from 1 to 128 (LMC 0..7)",
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
    let algorithm = match args.algorithm {
        AlgorithmArg::Layered => Algorithm::Layered(PathLengths {
            min_extra_hops: args.min_extra_hops,
            max_hops: args.max_hops,
        }),
        AlgorithmArg::Minimal => Algorithm::Minimal,
        AlgorithmArg::Rues => Algorithm::Rues {
            keep_per_mille: args.keep_percent.min(100) * 10,
        },
    };
    let started = std::time::Instant::now();
    let config = RoutingConfig {
        layers: args.layers,
        algorithm,
        seed: args.seed,
        ..Default::default()
    };
    let choice = match args.deadlock {
        DeadlockArg::None => None,
        DeadlockArg::Auto => Some(SchemeChoice::Auto),
        DeadlockArg::Dfsssp => Some(SchemeChoice::Dfsssp),
        DeadlockArg::Colouring => Some(SchemeChoice::Colouring),
    };
    let (lids, tables, deadlock_free) = match choice {
        None => {
            let Routed { lids, tables, .. } = route_fabric(&fabric, &config)?;
            (lids, tables, None)
        }
        Some(choice) => {
            let lids = LidTable::from_fabric(&fabric)?;
            let graph = RoutingGraph::new(&fabric);
            let shortage = match args.on_vl_shortage {
                ShortageArg::Fail => Shortage::Fail,
                ShortageArg::FewerLayers => Shortage::FewerLayers,
            };
            let done = route_deadlock_free(
                &fabric,
                &lids,
                &graph,
                &config,
                &choice.schemes(args.vls),
                shortage,
            )?;
            let tables = done.tables.clone();
            (lids, tables, Some(done))
        }
    };
    log::info!(
        "routed {} in {:.2} s",
        fabric.name,
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = &args.lft_out {
        output::write_atomically(
            path,
            lfts::write_ibroute(&fabric, &lids, &tables).as_bytes(),
        )?;
    }
    let report = analysis::analyze(
        &fabric,
        &lids,
        &tables,
        &Options {
            mat: args.mat,
            ..Options::default()
        },
    );
    if let Some(done) = &deadlock_free {
        if let Some(path) = &args.path_sl_out {
            let text = path_sl::write_every_pair(&lids, &done.path_sls);
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
    let rendered = match args.format {
        Format::Text => {
            let mut text = format!("{}: {}\n{report}", fabric.name, fabric.summary());
            if let Some(line) = &deadlock_line {
                text += &format!("\n{line}\n");
            }
            text
        }
        Format::Json => {
            let mut value = serde_json::to_value(&report)?;
            if let Some(line) = deadlock_line {
                value["deadlock"] = serde_json::Value::String(line);
            }
            serde_json::to_string_pretty(&value)? + "\n"
        }
    };
    output::emit(None, &rendered)?;
    Ok(if report.is_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
