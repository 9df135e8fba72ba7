//! `ibfabric metrics`: the plugin's sweep log as Prometheus metrics, the same that the plugin's
//! `metrics_file` holds, for sites that keep the log but not the file (a cron job can write
//! them into node_exporter's textfile directory).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use ibfabric::cli::emit;
use ibfabric::cli::input::{display_name, read_text};
use ibfabric::session::metrics::SweepMetrics;
use ibfabric::session::sweep_record::parse_sweep_log;

#[derive(Args)]
pub struct MetricsArgs {
    /// The plugin's sweep log (`sweep_log:`): one JSON object per routing pass; - for stdin.
    #[arg(long, value_name = "FILE")]
    sweep_log: PathBuf,
    /// Write the metrics here (atomically; e.g. `<textfile directory>/opensm-layered.prom`)
    /// instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Prints (or writes) the metrics of every pass of the log; exit 2 naming the file and line
/// of the first line that is not a sweep record.
pub fn run(args: MetricsArgs) -> anyhow::Result<ExitCode> {
    let text = read_text(&args.sweep_log)?;
    let records = parse_sweep_log(&text)
        .with_context(|| format!("sweep log {}", display_name(&args.sweep_log)))?;
    log::info!(
        "{} routing passes read from {}",
        records.len(),
        display_name(&args.sweep_log)
    );
    emit(args.output.as_deref(), &SweepMetrics::of(&records).render())?;
    Ok(ExitCode::SUCCESS)
}
