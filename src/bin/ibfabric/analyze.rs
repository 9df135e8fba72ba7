//! `ibfabric analyze`: judge a routing programmed in a fabric (OpenSM's own engines, any fork,
//! ours) from its forwarding tables.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use ibfabric::analysis::multicast::analyze_groups;
use ibfabric::analysis::{self, Options, PrefixOptions};
use ibfabric::cli::{html, output};
use ibfabric::routing::LidTable;

use crate::multicast::load_mfts;
use crate::source::{load_fabric, load_tables};

#[derive(Args)]
pub struct AnalyzeArgs {
    /// The fabric: an ibnetdiscover dump of the live fabric (with LIDs), a fabric document, or
    /// a topology spec (slimfly:q=5; LIDs are then taken from the tables' destination comments).
    #[arg(long)]
    fabric: String,
    /// The forwarding tables: OpenSM's opensm-lfts.dump (`-D 0x43`, in OSM_TMP_DIR) or the
    /// output of `ibroute <lid>` for every switch, concatenated.
    #[arg(long, value_name = "FILE")]
    lfts: PathBuf,
    /// The multicast forwarding tables: OpenSM's opensm.mcfdbs or `ibroute -M <lid>` output
    /// for every switch, concatenated. Adds each group (members, tree switches, depth,
    /// cables, whether every member reaches exactly the others) and the groups per cable;
    /// exit status 1 also when a group does not deliver to exactly its members.
    #[arg(long, value_name = "FILE")]
    mfts: Option<PathBuf>,
    /// Node-name-map applied when reading an ibnetdiscover dump (names in the report).
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also compute the maximum achievable throughput (linear programs; can take minutes on
    /// large fabrics).
    #[arg(long)]
    mat: bool,
    #[command(flatten)]
    prefix: PrefixArgs,
    /// At most this many failures are listed (all are counted).
    #[arg(long, default_value_t = 100, value_name = "N")]
    max_failures: usize,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// The throughput of each prefix of layers (traffic split evenly over layers 0..K-1, as MPI
/// stacks split bulk transfers), shared by `analyze` and `route`.
#[derive(Args)]
pub struct PrefixArgs {
    /// Leave out the throughput of each prefix of layers.
    #[arg(long)]
    no_prefix: bool,
    /// Leave out the exact worst host permutation of each prefix (its costly part).
    #[arg(long)]
    no_worst_permutation: bool,
    /// Random host permutations per prefix.
    #[arg(long, default_value_t = PrefixOptions::default().samples, value_name = "N")]
    prefix_samples: usize,
    /// Seed of the random permutations and of the adversarial matchings.
    #[arg(long, default_value_t = PrefixOptions::default().seed, value_name = "SEED")]
    prefix_seed: u64,
    /// Adversarial farthest-switch permutations per prefix.
    #[arg(long, default_value_t = PrefixOptions::default().adversarial_seeds, value_name = "N")]
    adversarial_seeds: usize,
}

impl PrefixArgs {
    /// The analyser's options, `None` with --no-prefix.
    pub fn options(&self) -> Option<PrefixOptions> {
        (!self.no_prefix).then_some(PrefixOptions {
            samples: self.prefix_samples,
            seed: self.prefix_seed,
            adversarial_seeds: self.adversarial_seeds,
            worst: !self.no_worst_permutation,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A report for people.
    Text,
    /// The report as JSON.
    Json,
    /// One self-contained HTML page: the key numbers, and plots of the load per cable, the
    /// path lengths, the disjoint paths and the prefix throughput (inline SVG, no external
    /// files).
    Html,
}

/// Prints the report; exit status 0 when every entry reaches its destination (and every group
/// its members), 1 otherwise.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let mut fabric = load_fabric(&args.fabric, args.node_name_map.as_deref())?;
    let tables = load_tables(&mut fabric, &args.fabric, &args.lfts)?;
    let lids = LidTable::from_fabric(&fabric).with_context(|| args.fabric.clone())?;
    let options = Options {
        mat: args.mat,
        prefix: args.prefix.options(),
        max_listed_failures: args.max_failures,
    };
    let mut report = analysis::analyze(&fabric, &lids, &tables, &options);
    if let Some(file) = &args.mfts {
        let groups = load_mfts(&fabric, file)?;
        report.multicast = Some(analyze_groups(&fabric, &groups, &BTreeMap::new()));
    }
    let rendered = match args.format {
        Format::Text => report.to_string(),
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Html => html::analysis_page(&report, &[]),
    };
    output::emit(args.output.as_deref(), &rendered)?;
    let delivers = report.multicast.as_ref().is_none_or(|m| m.all_deliver());
    Ok(if report.is_complete() && delivers {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
