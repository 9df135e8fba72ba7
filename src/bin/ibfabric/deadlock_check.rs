//! `ibfabric deadlock-check`: prove a routing deadlock-free, or show a cycle of channel
//! dependencies, from the tables any subnet manager programmed — forwarding tables, path SLs
//! and SL-to-VL tables, as OpenSM dumps them or the diagnostic tools read them back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ibfabric::analysis::multicast::{GroupReport, MulticastReport, analyze_groups};
use ibfabric::cli::output;
use ibfabric::deadlock::verify::{Multicast, verify_with_multicast};
use ibfabric::deadlock::{RouteSls, SlTable, Verdict, VerifyOptions, identity_row, verify};
use ibfabric::io::{path_sl, sl2vl};
use ibfabric::routing::LidTable;
use serde::Serialize;

use crate::deadlock_transition::Change;
use crate::multicast::{load_group_sls, load_mfts};
use crate::source::{load_fabric, load_tables};

#[derive(Args)]
pub struct DeadlockCheckArgs {
    /// The fabric: an ibnetdiscover dump of the live fabric (with LIDs), a fabric document, or
    /// a topology spec (slimfly:q=5; LIDs are then taken from the tables' destination comments).
    #[arg(long)]
    fabric: String,
    /// The forwarding tables: OpenSM's opensm-lfts.dump (`-D 0x43`, in OSM_TMP_DIR) or the
    /// output of `ibroute <lid>` for every switch, concatenated.
    #[arg(long, value_name = "FILE")]
    lfts: PathBuf,
    /// The SL-to-VL tables: OpenSM's opensm-sl2vl.dump or `smpquery sl2vl <lid> [port]`
    /// output, concatenated. Tables it does not list (all, without this option) map SL i to
    /// VL i mod --vls.
    #[arg(long, value_name = "FILE")]
    sl2vl: Option<PathBuf>,
    /// The path SLs: `SLID DLID SL` lines, or `saquery -p` PathRecord output. Routes it does
    /// not list use --default-sl.
    #[arg(long, value_name = "FILE")]
    path_sl: Option<PathBuf>,
    /// The SL of every route the --path-sl file does not list (of all routes without it).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=15))]
    default_sl: u8,
    /// Data VLs of the SL-to-VL mapping used where no table is given.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=15))]
    vls: u8,
    /// Also check every route on every SL 0..15 at once, in one channel dependency graph — what
    /// clients that never ask the SA for the path SL need (UCX for Open MPI and MPICH, verbs
    /// programs, multicast: one fixed SL in every packet). The report gives both verdicts and
    /// which guarantee holds; exit status 0 only when deadlock-free whatever the SL, 1
    /// otherwise.
    #[arg(long)]
    every_sl: bool,
    /// Leave the switches' own LIDs out as sources and destinations (check CA traffic only).
    #[arg(long)]
    no_switch_lids: bool,
    /// The multicast forwarding tables: OpenSM's opensm.mcfdbs (in its dump directory) or the
    /// output of `ibroute -M <lid>` for every switch, concatenated. The groups join the unicast
    /// routes in the channel dependency graph: the report gives the unicast verdict and the
    /// unicast + multicast one (exit status from the latter), and the groups whose tables do
    /// not deliver to exactly their members (the ports of their entries; exit status 1).
    #[arg(long, value_name = "FILE")]
    mfts: Option<PathBuf>,
    /// The SL of each multicast group: `saquery -g` output or `MLID SL` lines. Groups it does
    /// not list (all, without this option) use --default-sl.
    #[arg(long, value_name = "FILE", requires = "mfts")]
    mcast_sls: Option<PathBuf>,
    /// Node-name-map applied when reading an ibnetdiscover dump (names in the report).
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// At most this many example routes per dependency of a cycle (and failures) are listed.
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_examples: usize,
    /// Check a change instead of a snapshot: FILE holds the forwarding tables the fabric had
    /// before (same formats as --lfts), --lfts those written over them, --fabric the fabric
    /// as it is now. Every order of the updates is checked: no destination LID may loop when
    /// some switches forward by their old entry and others by their new one, and the channel
    /// dependencies of every such mixture (each hop on the lane of its switch's old or new
    /// SL-to-VL table) must be acyclic with every route on every SL. Old entries onto cables
    /// that are gone drop their packets. Exit status 0 only when the change is safe.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// The SL-to-VL tables before the change (as --sl2vl); without it, they are taken to be
    /// the --sl2vl tables (unchanged).
    #[arg(long, value_name = "FILE", requires = "from")]
    from_sl2vl: Option<PathBuf>,
    /// The multicast forwarding tables before the change (as --mfts): a switch replicates by
    /// its old or its new entry, so copies may leave on every port of both. Without it, the
    /// --mfts tables are taken to be unchanged.
    #[arg(long, value_name = "FILE", requires_all = ["from", "mfts"])]
    from_mfts: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// A report for people.
    Text,
    /// The verdict as JSON.
    Json,
}

fn read(path: &Path) -> anyhow::Result<String> {
    ibfabric::cli::input::read_text(path)
}

/// Prints the verdict; exit status 0 when deadlock-free, 1 when a cycle (or a forwarding loop)
/// is found (with `--every-sl`: 0 only when deadlock-free whatever the SL).
pub fn run(args: DeadlockCheckArgs) -> anyhow::Result<ExitCode> {
    let mut fabric = load_fabric(&args.fabric, args.node_name_map.as_deref())?;
    let lfts = load_tables(&mut fabric, &args.fabric, &args.lfts)?;
    let lids = LidTable::from_fabric(&fabric).with_context(|| args.fabric.clone())?;

    let default_row = identity_row(args.vls);
    let tables = match &args.sl2vl {
        Some(file) => load_sl2vl(file, &fabric, default_row)?,
        None => ibfabric::deadlock::Sl2VlTables::new(&fabric, default_row),
    };
    let mut sls = SlTable {
        default: args.default_sl,
        ..SlTable::default()
    };
    if let Some(file) = &args.path_sl {
        let name = file.display().to_string();
        let d = path_sl::parse(&read(file)?).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if d.entries.is_empty() {
            bail!(
                "{name}: no path SL in it (expected `SLID DLID SL` lines or `saquery -p` \
                 PathRecords)"
            );
        }
        let unknown = d
            .entries
            .iter()
            .filter(|(s, d, _)| lids.owner(*s).is_none() || lids.owner(*d).is_none())
            .count();
        if unknown > 0 {
            log::warn!("{name}: {unknown} routes name LIDs that are not in the fabric");
        }
        sls.entries = d.entries.iter().map(|&(s, d, sl)| ((s, d), sl)).collect();
    }
    let options = VerifyOptions {
        switch_lids: !args.no_switch_lids,
        max_listed: args.max_examples,
        sls: RouteSls::PathSl,
    };
    let header = format!("{}: {}", fabric.name, fabric.summary());
    if let Some(from) = &args.from {
        if args.path_sl.is_some() {
            log::warn!(
                "--path-sl is not used with --from: a change is checked with every route on \
                 every SL, which covers the path SLs before and after it"
            );
        }
        let old_tables = load_tables(&mut fabric, &args.fabric, from)?;
        let old_sl2vl = match &args.from_sl2vl {
            Some(file) => load_sl2vl(file, &fabric, default_row)?,
            None => tables.clone(),
        };
        let change = Change {
            fabric: &fabric,
            lids: &lids,
            old_tables: &old_tables,
            old_sl2vl: &old_sl2vl,
            tables: &lfts,
            sl2vl: &tables,
            path_sl: &sls,
        };
        let mfts = match &args.mfts {
            Some(file) => Some((load_mfts(&fabric, file)?, args.mcast_sls.as_ref())),
            None => None,
        };
        let old_mfts = match &args.from_mfts {
            Some(file) => Some(load_mfts(&fabric, file)?),
            None => None,
        };
        let report = change.check(
            mfts.as_ref().map(|(m, s)| (m, *s)),
            old_mfts.as_ref(),
            args.default_sl,
            &options,
        )?;
        let rendered = match args.format {
            Format::Text => format!("{header}\n{report}"),
            Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        };
        output::emit(args.output.as_deref(), &rendered)?;
        return Ok(exit_status(report.is_safe()));
    }
    let every_options = VerifyOptions {
        sls: RouteSls::EverySl,
        ..options.clone()
    };
    let unicast = Verdicts::new(
        verify(&fabric, &lids, &lfts, &sls, &tables, &options),
        args.every_sl
            .then(|| verify(&fabric, &lids, &lfts, &sls, &tables, &every_options)),
    );
    let Some(mfts_file) = &args.mfts else {
        let rendered = match args.format {
            Format::Text => format!("{header}\n{}", unicast.text()),
            Format::Json => unicast.json()?,
        };
        output::emit(args.output.as_deref(), &rendered)?;
        return Ok(exit_status(unicast.deadlock_free()));
    };
    let groups = load_mfts(&fabric, mfts_file)?;
    let group_sls = match &args.mcast_sls {
        Some(file) => load_group_sls(file)?,
        None => BTreeMap::new(),
    };
    let multicast = Multicast {
        tables: &groups,
        sls: &group_sls,
        default_sl: args.default_sl,
    };
    let with = |options: &VerifyOptions| {
        verify_with_multicast(&fabric, &lids, &lfts, &sls, &tables, &multicast, options)
    };
    let unicast_multicast =
        Verdicts::new(with(&options), args.every_sl.then(|| with(&every_options)));
    let delivery = analyze_groups(&fabric, &groups, &BTreeMap::new());
    let report = MulticastCheck {
        unicast,
        unicast_multicast,
        delivery,
    };
    let rendered = match args.format {
        Format::Text => format!("{header}\n{}", report.text()),
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
    };
    output::emit(args.output.as_deref(), &rendered)?;
    Ok(exit_status(
        report.unicast_multicast.deadlock_free() && report.delivery.all_deliver(),
    ))
}

/// Reads SL-to-VL tables (opensm-sl2vl.dump or `smpquery sl2vl` output) for `fabric`; tables it
/// does not list map by `default_row`.
fn load_sl2vl(
    file: &Path,
    fabric: &ibfabric::Fabric,
    default_row: ibfabric::deadlock::SlVlRow,
) -> anyhow::Result<ibfabric::deadlock::Sl2VlTables> {
    let name = file.display().to_string();
    let d = sl2vl::parse(&read(file)?, fabric, default_row)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    for warning in &d.warnings {
        log::warn!("{name}: {warning}");
    }
    if d.switches == 0 && d.ports == 0 {
        bail!("{name}: no SL-to-VL table of a port of {}", fabric.name);
    }
    log::info!(
        "{name}: tables of {} switches and {} ports",
        d.switches,
        d.ports
    );
    Ok(d.tables)
}

fn exit_status(good: bool) -> ExitCode {
    if good {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The verdict with the path SLs, and with `--every-sl` also the one with every route on every
/// SL.
#[derive(Serialize)]
#[serde(untagged)]
enum Verdicts {
    PathSl(Box<Verdict>),
    Both(Box<BothVerdicts>),
}

impl Verdicts {
    fn new(path_sl: Verdict, every_sl: Option<Verdict>) -> Self {
        match every_sl {
            None => Self::PathSl(Box::new(path_sl)),
            Some(every) => Self::Both(Box::new(BothVerdicts::new(path_sl, every))),
        }
    }

    /// Deadlock-free (with `--every-sl`: whatever the SL).
    fn deadlock_free(&self) -> bool {
        match self {
            Self::PathSl(v) => v.is_deadlock_free(),
            Self::Both(both) => both.guarantee == Guarantee::WhateverSl,
        }
    }

    fn text(&self) -> String {
        match self {
            Self::PathSl(v) => v.to_string(),
            Self::Both(both) => both.text(),
        }
    }

    fn json(&self) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }
}

/// The report of `--mfts`: the unicast routes alone, unicast and multicast together, and the
/// groups' delivery.
#[derive(Serialize)]
struct MulticastCheck {
    unicast: Verdicts,
    unicast_multicast: Verdicts,
    delivery: MulticastReport,
}

impl MulticastCheck {
    fn text(&self) -> String {
        let wrong: Vec<&GroupReport> = self
            .delivery
            .groups
            .iter()
            .filter(|g| !g.delivers)
            .collect();
        let mut delivery = if wrong.is_empty() {
            format!(
                "multicast delivery: all {} groups deliver to exactly their members\n",
                self.delivery.groups.len()
            )
        } else {
            format!(
                "multicast delivery: {} of {} groups do NOT deliver to exactly their members:\n",
                wrong.len(),
                self.delivery.groups.len()
            )
        };
        for g in wrong {
            delivery += &format!("  MLID 0x{:04x} ({} members):\n", g.mlid, g.members);
            for p in &g.problems {
                delivery += &format!("    {p}\n");
            }
        }
        format!(
            "Unicast routes:\n{}\nUnicast routes and multicast groups:\n{}\n{delivery}",
            self.unicast.text(),
            self.unicast_multicast.text()
        )
    }
}

/// Which deadlock freedom the tables give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Guarantee {
    /// Acyclic with every route on every SL: any client, whatever SL it puts in its packets.
    WhateverSl,
    /// Acyclic only with the path SLs: clients that ask the SA and use its SL.
    PathSlOnly,
    /// Cyclic (or looping) even with the path SLs.
    None,
}

impl Guarantee {
    fn of(path_sl: &Verdict, every_sl: &Verdict) -> Self {
        if every_sl.is_deadlock_free() && path_sl.is_deadlock_free() {
            Self::WhateverSl
        } else if path_sl.is_deadlock_free() {
            Self::PathSlOnly
        } else {
            Self::None
        }
    }

    fn sentence(self) -> &'static str {
        match self {
            Self::WhateverSl => "deadlock-free whatever SL the traffic carries",
            Self::PathSlOnly => "deadlock-free only for clients that use the SA's path SL",
            Self::None => "not deadlock-free",
        }
    }
}

/// The report of `--every-sl`: the verdict with the path SLs, the verdict with every route on
/// every SL, and the guarantee they give together.
#[derive(Serialize)]
struct BothVerdicts {
    path_sl: Verdict,
    every_sl: Verdict,
    guarantee: Guarantee,
}

impl BothVerdicts {
    fn new(path_sl: Verdict, every_sl: Verdict) -> Self {
        let guarantee = Guarantee::of(&path_sl, &every_sl);
        Self {
            path_sl,
            every_sl,
            guarantee,
        }
    }

    fn text(&self) -> String {
        format!(
            "With the path SLs:\n{}\nWhatever the SL (every route on every SL 0..15, one channel \
             dependency graph):\n{}\n{}\n",
            self.path_sl,
            self.every_sl,
            self.guarantee.sentence()
        )
    }
}
