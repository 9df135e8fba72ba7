//! `cabling plan`: the wiring plan of a topology, in every format a site needs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use ibfabric::cli::{Construction, input, output};
use ibfabric::io::{NodeNameMap, ibsim};
use ibfabric::plan::build::{PlanOptions, plan_for};
use ibfabric::plan::document::PlanDocument;
use ibfabric::plan::{
    LengthModel, Plan, RoomLayout, SwitchLayout, SwitchModel, csv, labels, purchase_list,
};

use crate::html;

#[derive(Args)]
pub struct PlanArgs {
    #[command(subcommand)]
    source: Source,
    /// Output format (one file); see --out-dir for all at once.
    #[arg(long, value_enum, default_value_t = Format::Yaml, global = true)]
    format: Format,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(
        short,
        long,
        value_name = "FILE",
        global = true,
        conflicts_with = "out_dir"
    )]
    output: Option<PathBuf>,
    /// Write every format into DIR: plan.yaml, plan.csv, plan.html, fabric.net, node-name-map,
    /// labels.csv, purchase.csv.
    #[arg(long, value_name = "DIR", global = true)]
    out_dir: Option<PathBuf>,
    /// Rack height in units.
    #[arg(long, default_value_t = 42, global = true)]
    rack_units: u32,
    /// Hosts sharing one rack unit (multi-node chassis) [default: the fewest that fit].
    #[arg(long, global = true)]
    hosts_per_u: Option<u32>,
    /// Cable id prefix [default: SF, MLFM, LSFT, PF or FT by topology].
    #[arg(long, global = true)]
    cable_prefix: Option<String>,
    /// Room layout YAML for cable lengths: racks_per_row, rack_width_m, row_pitch_m,
    /// tray_height_m, slack_m (each optional) [default: one row of 0.6 m racks, 0.3 m tray,
    /// 1 m slack].
    #[arg(long, value_name = "FILE", global = true)]
    room: Option<PathBuf>,
    /// Longest line of a cable label, in characters (--format labels).
    #[arg(long, value_name = "CHARS", global = true,
          default_value_t = labels::DEFAULT_WIDTH as u16,
          value_parser = clap::value_parser!(u16).range(8..))]
    label_width: u16,
    /// Place the switches on a catalogue model: msb7800 (EDR, 36 ports), qm8700 (HDR, 40),
    /// qm9700 (NDR, 64 ports in 32 OSFP cages, labelled cage/split like 17/2). On every switch
    /// hosts take ports 1, 2, …, the network the ports right after them, the rest are spare.
    #[arg(
        long,
        value_name = "NAME",
        global = true,
        conflicts_with = "switch_ports"
    )]
    switch_model: Option<String>,
    /// Place the switches on generic N-port switches (no catalogue model, no faceplate labels),
    /// ports laid out as with --switch-model.
    #[arg(long, value_name = "N", global = true,
          value_parser = clap::value_parser!(u8).range(1..))]
    switch_ports: Option<u8>,
}

/// Where the plan comes from: a construction, or a site's own cable list.
#[derive(Subcommand)]
enum Source {
    #[command(flatten)]
    Construction(Construction),
    /// Import a site's cable list (CSV with a_device, a_port, b_device, b_port, and optionally
    /// cable_id, a_rack, a_u, b_rack, b_u, kind, length_m, rate, step, step_name, a_kind, b_kind).
    Import {
        /// The CSV file.
        file: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The canonical plan (what `cabling verify` reads).
    Yaml,
    /// One row per cable, A and Z ends, for spreadsheets.
    Csv,
    /// Printable wiring sheets: summary, one per rack, one per rack pair.
    Html,
    /// ibsim net file of the planned fabric.
    Ibsim,
    /// node-name-map (GUID → device name) for infiniband-diags and OpenSM.
    NodeNameMap,
    /// CSV for label printers: one row per cable end, its text in lines of at most
    /// --label-width characters, this end's place first.
    Labels,
    /// Purchase list: cables by kind and catalogue length, with counts.
    Purchase,
}

impl Format {
    const ALL: [(Format, &'static str); 7] = [
        (Format::Yaml, "plan.yaml"),
        (Format::Csv, "plan.csv"),
        (Format::Html, "plan.html"),
        (Format::Ibsim, "fabric.net"),
        (Format::NodeNameMap, "node-name-map"),
        (Format::Labels, "labels.csv"),
        (Format::Purchase, "purchase.csv"),
    ];
}

pub fn run(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let plan = plan_of(&args)?;
    if matches!(args.source, Source::Import { .. }) {
        let unplaced = plan.unplaced_devices();
        if !unplaced.is_empty() {
            let shown: Vec<&str> = unplaced.iter().copied().take(5).collect();
            eprintln!(
                "{}: {} of {} devices have no U position in the list ({}{}): sheets and labels \
                 give their rack and name only",
                plan.name,
                unplaced.len(),
                plan.devices.len(),
                shown.join(", "),
                if unplaced.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            );
        }
    }
    write_plan(&plan, &args)
}

/// The plan the arguments ask for.
fn plan_of(args: &PlanArgs) -> anyhow::Result<Plan> {
    let switches = match (&args.switch_model, args.switch_ports) {
        (Some(name), _) => {
            let model = SwitchModel::by_name(name).map_err(|e| anyhow::anyhow!("{e}"))?;
            Some(SwitchLayout {
                ports: model.ports,
                model: Some(model),
            })
        }
        (None, Some(ports)) => Some(SwitchLayout { ports, model: None }),
        (None, None) => None,
    };
    if switches.is_some() && matches!(args.source, Source::Import { .. }) {
        anyhow::bail!(
            "--switch-model and --switch-ports place a construction's switches; an imported list \
             names its models in a_model/b_model columns"
        );
    }
    let lengths = match &args.room {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let room: RoomLayout = yaml_serde::from_str(&text).map_err(|e| {
                anyhow::anyhow!("{}: {}", path.display(), e.to_string().replace('\n', " "))
            })?;
            room.model()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        }
        None => LengthModel::default(),
    };
    args.source.plan(&PlanOptions {
        rack_units: args.rack_units,
        hosts_per_u: args.hosts_per_u,
        cable_prefix: args.cable_prefix.clone(),
        switches,
        lengths,
    })
}

/// Writes the plan in the format(s) asked for.
fn write_plan(plan: &Plan, args: &PlanArgs) -> anyhow::Result<ExitCode> {
    match &args.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            // All or none: a set with plan.yaml but no plan.html would look complete to a reader.
            let files = Format::ALL
                .iter()
                .map(|&(format, file)| {
                    Ok((dir.join(file), render(plan, format, args)?.into_bytes()))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            output::write_all_atomically(&files)?;
            eprintln!("{}: {} -> {}", plan.name, summary(plan), dir.display());
        }
        None => {
            output::emit(args.output.as_deref(), &render(plan, args.format, args)?)?;
            if let Some(path) = &args.output {
                eprintln!("{}: {} -> {}", plan.name, summary(plan), path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

impl Source {
    fn plan(&self, options: &PlanOptions) -> anyhow::Result<Plan> {
        match self {
            Source::Construction(c) => Ok(plan_for(&c.spec(), options)?),
            Source::Import { file } => import_csv(file),
        }
    }
}

/// Reads a CSV cable list; errors name the file and line.
pub fn import_csv(path: &Path) -> anyhow::Result<Plan> {
    let text = input::read_text(path)?;
    let name = path
        .file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy().into_owned());
    csv::read(&text, &name).map_err(|e| anyhow::anyhow!("{}: {e}", input::display_name(path)))
}

fn render(plan: &Plan, format: Format, args: &PlanArgs) -> anyhow::Result<String> {
    Ok(match format {
        Format::Yaml => yaml_serde::to_string(&PlanDocument::from_plan(plan))?,
        Format::Csv => csv::write(plan),
        Format::Html => html::render(plan),
        Format::Ibsim => ibsim::write_net(&plan.to_fabric()?),
        Format::NodeNameMap => NodeNameMap::from_fabric(&plan.to_fabric()?).write(),
        Format::Labels => labels::write(plan, usize::from(args.label_width)),
        Format::Purchase => purchase_list(&plan.cables),
    })
}

fn summary(plan: &Plan) -> String {
    let switches = plan
        .devices
        .iter()
        .filter(|d| d.kind == ibfabric::plan::DeviceKind::Switch)
        .count();
    let spare: usize = (0..plan.devices.len())
        .filter(|&d| plan.devices[d].kind == ibfabric::plan::DeviceKind::Switch)
        .map(|d| plan.spare_ports(d).len())
        .sum();
    let model = plan
        .devices
        .iter()
        .find_map(|d| d.model.as_ref())
        .map_or(String::new(), |m| format!(" ({})", m.name));
    format!(
        "{} racks, {switches} switches{model}, {} hosts, {} cables{}",
        plan.racks.len(),
        plan.devices.len() - switches,
        plan.cables.len(),
        if spare > 0 {
            format!(", {spare} spare switch ports")
        } else {
            String::new()
        }
    )
}
