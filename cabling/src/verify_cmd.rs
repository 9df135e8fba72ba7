//! `cabling verify`: the live fabric against its plan, as a technician's punch list.
//!
//! Reads the plan (the YAML document of `cabling plan`, or a CSV cable list), one or more
//! `ibnetdiscover` dumps (several islands mid-wiring are merged by GUID), optionally
//! `iblinkinfo` output (down ports, "could be" hints) and the site's node-name-map, and prints
//! what to do: text grouped by rack → U → port, a CSV/JSON punch list, or a page with the
//! racks drawn and every finding marked on them.
//!
//! Exit status: 0 the fabric is cabled exactly as planned, 1 there are findings, 2 bad input —
//! including a plan that does not parse to its end, and a plan and dumps that do not belong
//! together (see `ibfabric::verify::belonging`), so no action list is ever printed for them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use clap::{Args, ValueEnum};
use ibfabric::cli::{input, output};
use ibfabric::io::{LinkInfo, NodeNameMap, iblinkinfo, ibnetdiscover};
use ibfabric::plan::{self, Plan};
use ibfabric::verify::belonging::{self, DEFAULT_MIN_IDENTIFIED_PERCENT};
use ibfabric::verify::{self, Observation, report::Report};

use crate::html;

#[derive(Args)]
pub struct VerifyArgs {
    /// The plan: YAML (or JSON) from `cabling plan`, or a CSV cable list (by extension, else by
    /// content).
    #[arg(long, value_name = "FILE")]
    plan: PathBuf,
    /// ibnetdiscover output; repeat for dumps taken from different islands (merged by GUID).
    #[arg(long = "ibnetdiscover", value_name = "DUMP", required = true)]
    dumps: Vec<PathBuf>,
    /// iblinkinfo output, for down ports and "could be" rates; may be repeated.
    #[arg(long = "iblinkinfo", value_name = "FILE")]
    link_info: Vec<PathBuf>,
    /// node-name-map naming fabric GUIDs with plan device names (the strongest binding).
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// Least share (percent) of the plan's devices — or of the fabric's nodes, when fewer are
    /// seen mid-wiring — that must be identified by node-name-map, GUID or description; below
    /// it the plan and the dumps are taken for different fabrics and verify exits 2 without
    /// actions. 0 binds by cabling alone.
    #[arg(long, value_name = "PERCENT", default_value_t = DEFAULT_MIN_IDENTIFIED_PERCENT,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    min_identified: u8,
    /// Output format: text for technicians, a CSV/JSON punch list, or an HTML page.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Actions grouped by rack, U and port; per-rack progress.
    Text,
    /// One row per action: rack, u, device, port, action, cables, instruction.
    Csv,
    /// Counts, actions with their steps, findings, unexpected cables and devices, progress.
    Json,
    /// One self-contained page: the racks drawn as the plan's sheets draw them, every device
    /// with a finding marked and what was found beside it, the punch list, progress per rack.
    Html,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let lap = |what: &str| log::debug!("{what}: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    let plan = read_plan(&args.plan)?;
    lap("plan read");
    let names = match &args.node_name_map {
        Some(path) => Some(
            NodeNameMap::parse(&read(path)?)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        ),
        None => None,
    };
    let mut dumps = Vec::with_capacity(args.dumps.len());
    for path in &args.dumps {
        let dump = ibnetdiscover::parse(&read(path)?, names.as_ref())
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if dump.fabric.nodes().is_empty() {
            bail!(
                "{}: no node found; expected the output of ibnetdiscover",
                path.display()
            );
        }
        for w in &dump.warnings {
            log::info!("{}: {w}", path.display());
        }
        if !dump.warnings.is_empty() {
            log::warn!(
                "{}: {} lines skipped or inconsistent (-v lists them)",
                path.display(),
                dump.warnings.len()
            );
        }
        dumps.push(dump);
    }
    lap("dumps read");
    // One complete dump is its own merge.
    let fabric = if dumps.len() == 1 && dumps[0].dangling.is_empty() {
        dumps.pop().expect("one dump").fabric
    } else {
        let merged = verify::merge(&dumps)?;
        for w in &merged.warnings {
            log::warn!("{w}");
        }
        merged.fabric
    };
    let link_info = if args.link_info.is_empty() {
        None
    } else {
        let mut all = LinkInfo::default();
        for path in &args.link_info {
            let info = iblinkinfo::parse(&read(path)?)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            if info.ports.is_empty() {
                bail!(
                    "{}: no port line found; expected the output of iblinkinfo",
                    path.display()
                );
            }
            belonging::check_link_info(&fabric, &info)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            all.ports.extend(info.ports);
        }
        Some(all)
    };
    let observation = Observation {
        fabric: &fabric,
        link_info: link_info.as_ref(),
        names: names.as_ref(),
    };
    lap("dumps merged, iblinkinfo read");
    let verification = verify::verify(&plan, &observation);
    lap("verified");
    belonging::check_identified(&plan, &fabric, &verification, args.min_identified)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.plan.display()))?;
    let report = Report::new(&plan, &fabric, &verification);
    let text = match args.format {
        Format::Text => report.text(),
        Format::Csv => report.csv(),
        Format::Json => report.json(),
        Format::Html => html::render_verification(&report),
    };
    output::emit(args.output.as_deref(), &text)?;
    lap("report written");
    Ok(if verification.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn read(path: &Path) -> anyhow::Result<String> {
    input::read_text(path)
}

/// A plan from its YAML/JSON document or a CSV cable list.
fn read_plan(path: &Path) -> anyhow::Result<Plan> {
    let text = read(path)?;
    let name = path
        .file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy().into_owned());
    let extension = path.extension().map(|e| e.to_string_lossy().into_owned());
    plan::text::from_text(&text, &name, extension.as_deref())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
