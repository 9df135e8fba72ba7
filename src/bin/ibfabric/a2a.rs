//! `ibfabric a2a`: congestion-free all-to-all schedules (MLFM, Latin-square fat-tree) and the
//! shift baseline: the per-phase destination table, and with `--check` the throughput ratio on
//! a routing (computed, or read back from a fabric's forwarding tables).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ibfabric::Fabric;
use ibfabric::cli::output;
use ibfabric::collectives::{self, CongestionReport, MlfmSpine, Schedule};
use ibfabric::io::lfts;
use ibfabric::io::names::{self, NodeResolver, Want};
use ibfabric::io::node_name_map::NodeNameMap;
use ibfabric::routing::{ForwardingTables, LidTable, assign_lids};
use ibfabric::topology::lsft::Lsft;
use ibfabric::topology::mlfm::Mlfm;
use ibfabric::topology::{Construction, TopologySpec};

use crate::source::{load_fabric_with_map, load_tables};

#[derive(Args)]
pub struct A2aArgs {
    /// The scheme.
    #[arg(value_enum)]
    scheme: Scheme,
    /// mlfm: the machine's d (2d-port switches).
    #[arg(long)]
    d: Option<u32>,
    /// mlfm: layers used; lsft: the plane order.
    #[arg(long)]
    n: Option<u32>,
    /// mlfm: columns used (ℓ).
    #[arg(long)]
    l: Option<u32>,
    /// mlfm: servers per leaf used; lsft: servers per leaf of the partial scheme.
    #[arg(long)]
    m: Option<u32>,
    /// lsft: columns of the grid rectangle of the partial scheme (without k and m: the full
    /// machine).
    #[arg(long)]
    k: Option<u32>,
    /// mlfm: how same-column traffic picks its spine: by source (the paper; LID offset k,
    /// m layers) or by destination (one layer).
    #[arg(long, value_enum, default_value_t = SpineArg::BySource)]
    spine: SpineArg,
    /// shift: the topology (same spec as `topo`, e.g. lsft:n=5).
    #[arg(long)]
    topology: Option<String>,
    /// shift: the servers in rank order, comma-separated, by name or 0x GUID (commas inside
    /// parentheses, as in `P(1,2)-s0`, belong to the name; default: every server in node
    /// order).
    #[arg(long)]
    servers: Option<String>,
    /// The fabric to check on (topology spec, fabric document or ibnetdiscover dump of the
    /// live fabric); default: the scheme's topology. A dump's nodes take the construction's
    /// names (found by node-name-map, GUID, NodeDescription or its host part).
    #[arg(long)]
    fabric: Option<String>,
    /// Node-name-map (`0x<GUID> "name"` per line) of the fabric checked on: names a dump's
    /// nodes; the schedule's servers are found by it, by NodeDescription or its host part, or by
    /// the construction's GUIDs.
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// Forwarding tables to check on (opensm-lfts.dump or ibroute output); default: the routing
    /// the core computes (the MLFM layer layout for mlfm).
    #[arg(long, value_name = "FILE")]
    lfts: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Check the schedule on the routing: throughput ratio, worst phase and link.
    #[arg(long)]
    check: bool,
    /// With --check: also write the tables checked on (ibroute format, as `route --lft-out`;
    /// for mlfm the layer layout, loadable by OpenSM's `file` engine).
    #[arg(long, value_name = "FILE")]
    lft_out: Option<PathBuf>,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scheme {
    /// The shift pattern (baseline): phase p, rank r → r + p.
    Shift,
    /// The MLFM partial all-to-all.
    Mlfm,
    /// The Latin-square fat-tree full or partial all-to-all.
    Lsft,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SpineArg {
    /// The paper's choice (by the source server; needs m LID layers).
    BySource,
    /// By the destination server (one layer).
    ByDestination,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// For people.
    Text,
    /// JSON.
    Json,
    /// CSV: phase, label, rank, source, destination rank, destination, LID offset.
    Csv,
}

fn need(value: Option<u32>, name: &str, scheme: &str) -> anyhow::Result<u32> {
    value.with_context(|| format!("{scheme} needs --{name}"))
}

/// The schedule and the fabric it is meant for (the scheme's topology).
fn schedule(args: &A2aArgs) -> anyhow::Result<(Schedule, Fabric, Option<Mlfm>)> {
    let spine = match args.spine {
        SpineArg::BySource => MlfmSpine::BySource,
        SpineArg::ByDestination => MlfmSpine::ByDestination,
    };
    Ok(match args.scheme {
        Scheme::Mlfm => {
            let d = need(args.d, "d", "mlfm")?;
            let (n, l, m) = (
                need(args.n, "n", "mlfm")?,
                need(args.l, "l", "mlfm")?,
                need(args.m, "m", "mlfm")?,
            );
            let schedule = collectives::mlfm(d, n, l, m, spine)?;
            let mlfm = Mlfm::new(d)?;
            (schedule, mlfm.build(), Some(mlfm))
        }
        Scheme::Lsft => {
            let n = need(args.n, "n", "lsft")?;
            let schedule = match (args.k, args.m) {
                (None, None) => collectives::lsft_full(n)?,
                (Some(k), Some(m)) => collectives::lsft_partial(n, k, m)?,
                _ => bail!("lsft: give both --k and --m (partial) or neither (full machine)"),
            };
            (schedule, Lsft::new(n)?.build(), None)
        }
        Scheme::Shift => {
            let spec = args
                .topology
                .as_deref()
                .context("shift needs --topology (e.g. lsft:n=5)")?;
            let spec: TopologySpec = spec
                .parse()
                .with_context(|| format!("{spec:?} is not a topology spec"))?;
            let fabric = spec.build()?;
            let ranks = match &args.servers {
                Some(list) => {
                    // Any name of a server (GUID, description, …), ranked by its node name.
                    let resolver = NodeResolver::new(&fabric, None);
                    split_names(list)
                        .iter()
                        .map(|name| {
                            let found = resolver.resolve(name, Want::Host);
                            let found = found.with_context(|| "--servers".to_string())?;
                            Ok(fabric.node(found.node).name.clone())
                        })
                        .collect::<anyhow::Result<Vec<_>>>()?
                }
                None => fabric
                    .hosts()
                    .map(|h| fabric.node(h).name.clone())
                    .collect(),
            };
            (collectives::shift(ranks), fabric, None)
        }
    })
}

/// Splits a comma-separated list of names at the commas outside parentheses.
fn split_names(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                names.push(list[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    names.push(list[start..].trim().to_string());
    names.retain(|n| !n.is_empty());
    names
}

/// Fabric, LIDs and tables to check on.
fn routing(
    args: &A2aArgs,
    schedule: &Schedule,
    generated: Fabric,
    mlfm: Option<Mlfm>,
) -> anyhow::Result<(Fabric, LidTable, ForwardingTables)> {
    let mut fabric = match &args.fabric {
        Some(source) => {
            let (mut fabric, names) = load_fabric_with_map(source, args.node_name_map.as_deref())?;
            let layout = args.lfts.is_none() && mlfm.is_some();
            adopt_construction(
                &mut fabric,
                &generated,
                names.as_ref(),
                schedule,
                layout,
                source,
            )?;
            fabric
        }
        None => generated,
    };
    if let Some(path) = &args.lfts {
        let source = args.fabric.clone().unwrap_or_else(|| fabric.name.clone());
        let tables = load_tables(&mut fabric, &source, path)?;
        let lids = LidTable::from_fabric(&fabric)?;
        return Ok((fabric, lids, tables));
    }
    match mlfm {
        Some(mlfm) => {
            if !fabric
                .nodes()
                .iter()
                .any(|n| n.ports.iter().any(|p| p.lid != 0))
            {
                assign_lids(&mut fabric, schedule.layers.trailing_zeros() as u8).with_context(
                    || {
                        format!(
                            "the schedule needs {} LID layers (by-source spines); \
                             --spine by-destination needs one",
                            schedule.layers
                        )
                    },
                )?;
            }
            let lids = LidTable::from_fabric(&fabric)?;
            let spine = if schedule.layers > 1 {
                MlfmSpine::BySource
            } else {
                match args.spine {
                    SpineArg::BySource if args.n.unwrap_or(1) > 1 => MlfmSpine::BySource,
                    _ => MlfmSpine::ByDestination,
                }
            };
            let tables = collectives::mlfm_layer_tables(
                &mlfm,
                &fabric,
                &lids,
                args.l.unwrap_or(mlfm.columns()),
                spine,
            );
            Ok((fabric, lids, tables))
        }
        None => {
            let (lids, tables) = collectives::core_tables(&mut fabric, schedule.layers)?;
            Ok((fabric, lids, tables))
        }
    }
}

/// The fabric read from `source` (a live fabric's dump, named by NodeDescription or by the
/// node-name-map `names`) takes the construction's names of the schedule's servers, and of its
/// switches, which the MLFM layout computed on it needs (`layout`); without the layout,
/// switches that cannot all be found keep the dump's names.
fn adopt_construction(
    fabric: &mut Fabric,
    construction: &Fabric,
    names: Option<&NodeNameMap>,
    schedule: &Schedule,
    layout: bool,
    source: &str,
) -> anyhow::Result<()> {
    let rules = names::adopt_names(fabric, construction, names, &schedule.ranks, Want::Host)
        .with_context(|| format!("{source}: the schedule's servers"))?;
    log::info!(
        "{source}: the schedule's {} servers found: {}",
        rules.len(),
        names::summary(rules)
    );
    let switches: Vec<&str> = construction
        .switches()
        .map(|s| construction.node(s).name.as_str())
        .collect();
    match names::adopt_names(fabric, construction, names, &switches, Want::Switch) {
        Ok(rules) => log::info!(
            "{source}: the {} switches of {} found: {}",
            rules.len(),
            construction.name,
            names::summary(rules)
        ),
        Err(e) if layout => {
            bail!(
                "{source}: the MLFM layout needs every switch of {}: {e}",
                construction.name
            )
        }
        Err(e) => log::info!("{source}: the switches keep the dump's names ({e})"),
    }
    Ok(())
}

fn text(schedule: &Schedule, report: Option<&CongestionReport>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} ranks, {} phases, {} LID layer(s)",
        schedule.name,
        schedule.ranks.len(),
        schedule.phases.len(),
        schedule.layers
    );
    for (p, phase) in schedule.phases.iter().enumerate() {
        let _ = writeln!(out, "phase {p} {}", phase.label);
        for (r, &dst) in phase.destination.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {r} {} -> {dst} {} +{}",
                schedule.ranks[r],
                schedule.ranks[dst as usize],
                phase.offset(r)
            );
        }
    }
    if let Some(report) = report {
        let _ = writeln!(
            out,
            "throughput ratio {:.6} ({}), most flows on a link: {}",
            report.throughput_ratio,
            if report.congestion_free {
                "congestion-free"
            } else {
                "congested"
            },
            report.max_link_flows
        );
        if let (Some(phase), Some(link)) = (&report.worst_phase, &report.worst_link) {
            let _ = writeln!(
                out,
                "worst phase {} (ratio {:.6}), busiest link {} with {} flows",
                phase.label, phase.ratio, link.link, link.flows
            );
        }
    }
    out
}

fn csv(schedule: &Schedule) -> String {
    let mut out = String::from("phase,label,rank,source,destination_rank,destination,lid_offset\n");
    for (p, phase) in schedule.phases.iter().enumerate() {
        for (r, &dst) in phase.destination.iter().enumerate() {
            let _ = writeln!(
                out,
                "{p},\"{}\",{r},{},{dst},{},{}",
                phase.label,
                schedule.ranks[r],
                schedule.ranks[dst as usize],
                phase.offset(r)
            );
        }
    }
    out
}

fn json(schedule: &Schedule, report: Option<&CongestionReport>) -> anyhow::Result<String> {
    let phases: Vec<_> = schedule
        .phases
        .iter()
        .map(|p| {
            serde_json::json!({
                "label": p.label,
                "destination": p.destination,
                "lid_offset": (0..schedule.ranks.len()).map(|r| p.offset(r)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut value = serde_json::json!({
        "schedule": schedule.name,
        "ranks": schedule.ranks,
        "layers": schedule.layers,
        "phases": phases,
    });
    if let Some(report) = report {
        value["throughput_ratio"] = serde_json::json!(report.throughput_ratio);
        value["check"] = serde_json::to_value(report)?;
    }
    Ok(serde_json::to_string(&value)? + "\n")
}

/// Prints the schedule (and the check); exit 1 when a congestion-free scheme is congested on
/// the routing.
pub fn run(args: A2aArgs) -> anyhow::Result<ExitCode> {
    if args.lft_out.is_some() && !args.check {
        bail!("--lft-out needs --check");
    }
    let (schedule, generated, mlfm) = schedule(&args)?;
    if let Err(problem) = schedule.verify_all_to_all() {
        bail!(
            "internal error: {} is not an all-to-all: {problem}",
            schedule.name
        );
    }
    let report = if args.check {
        let (fabric, lids, tables) = routing(&args, &schedule, generated, mlfm)?;
        if let Some(path) = &args.lft_out {
            output::stream_atomically(path, |out| {
                lfts::write_ibroute_to(out, &fabric, &lids, &tables)
            })?;
        }
        Some(collectives::check(&fabric, &lids, &tables, &schedule)?)
    } else {
        None
    };
    let rendered = match args.format {
        Format::Text => text(&schedule, report.as_ref()),
        Format::Json => json(&schedule, report.as_ref())?,
        Format::Csv => csv(&schedule),
    };
    output::emit(args.output.as_deref(), &rendered)?;
    let congested = report
        .as_ref()
        .is_some_and(|r| !r.congestion_free && args.scheme != Scheme::Shift);
    Ok(if congested {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
