//! Benchmark: the acceptance measurement of the prefix throughput on the tables OpenSM
//! programmed. For each fabric (Slim Fly, fat trees, a real dump, the other direct fabrics)
//! and LMC, ibsim runs the fabric's net file and stock OpenSM
//! 3.3.23 (once, `-D 0x43`, under `timeout`) routes it with the layered plugin in its default
//! configuration (`qos TRUE`, 2^LMC layers, as `.ci/demo` runs it) or with its own `minhop` or
//! `dfsssp` (references). The fabric is read back (`ibnetdiscover`, OpenSM's
//! `opensm-lfts.dump`) and the analyser's prefix report runs on what the switches hold: the
//! throughput of traffic split evenly over layers 0..K − 1 (how UCX spreads bulk transfers),
//! against layer 0 alone (where small messages go) on the same tables.
//!
//! The layered rows are judged against the targets of the prefix-balancing change (for every
//! K ≥ 2, as a ratio to layer 0 alone): all-to-all ≥ 0.80, random permutations (mean) ≥ 1.15 /
//! 1.30 / 1.40 (K = 2 / 4 / 8), adversarial ≥ 1.5 / 2.0 / 2.2, worst permutation ≥ 0.90.
//!
//! `cargo bench --bench prefix_opensm` prints one Markdown row per (fabric, LMC, engine, K);
//! arguments (`-- q=5 layered`) keep the cases whose "spec lmc=L engine" contains every one.
//! With `SHOW_LOG` set in the environment, OpenSM's log of each run goes to stderr;
//! `PREFIX_SAMPLES=N` draws N random permutations instead of 20.
//! The MAT linear programs (all layers) run on q = 5 only (seconds there, minutes on q = 7).

#[path = "../common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::plugin::{LAYERED_USED, with_plugin};
use common::readback::wait_for_dump;
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::Fabric;
use ibfabric::analysis::{Options, PrefixOptions, PrefixThroughput, Report, analyze};
use ibfabric::io::{ibnetdiscover, ibsim, lfts};
use ibfabric::routing::{ForwardingTables, LidTable};

/// The fabrics and LMCs measured, in order, each with the engines run on it. A fabric is a
/// topology spec or `dump:FILE`, an `ibnetdiscover` dump of `../shared/fixtures/ibnetdiscover`
/// replayed in ibsim (skipped, with a line saying so, where that directory is missing).
const CASES: &[(&str, u8, &[&str])] = &[
    ("slimfly:q=5", 2, SLIM_FLY),
    ("slimfly:q=5", 3, SLIM_FLY),
    ("slimfly:q=7", 2, SLIM_FLY),
    ("slimfly:q=7", 3, SLIM_FLY),
    ("slimfly:q=11", 2, SLIM_FLY),
    (
        "fattree:leaves=12,spines=6,links-per-pair=1,hosts-per-leaf=6",
        2,
        FAT_TREE,
    ),
    (
        "fattree:leaves=12,spines=6,links-per-pair=2,hosts-per-leaf=6",
        2,
        FAT_TREE,
    ),
    ("kary-ntree:k=4,n=3", 2, FAT_TREE),
    (DAMAGED_TREE, 2, REAL_TREE),
    (SUPERPOD, 2, REAL_TREE),
    (FDR10_CLUSTER, 2, REAL_TREE),
    ("mlfm:d=4", 2, OTHER),
    ("lsft:n=5", 2, OTHER),
    ("polarfly:q=7", 2, OTHER),
    ("random:switches=32,degree=5,hosts=2,seed=1", 2, OTHER),
];

/// The NVIDIA DGX SuperPOD NDR dump: 31 leaves, 9 spines with parallel and missing cables,
/// 582 hosts, a SHARP aggregation node in every switch.
const SUPERPOD: &str = "dump:nvidia-topograph_ndr-dgx-superpod_example.out";

/// A real FDR10/QDR cluster: 6 leaves and 2 spines (SX6036), four cables per leaf-spine pair
/// but one missing, 144 hosts, one dual-port HCA with both ports on one leaf.
const FDR10_CLUSTER: &str = "dump:loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt";

/// A real tree's references: `ftree` needs the regular shape it is made for (it falls back to
/// minhop on this one).
const REAL_TREE: &[&str] = &["layered", "minhop", "updn"];

/// The other fabrics of the every-fabric issue: OpenSM's general engines. `updn` is left out:
/// it finds no roots on PolarFly and random regular fabrics (and falls back to minhop), and on
/// MLFM and LSFT the roots it picks leave most host LIDs unreached.
const OTHER: &[&str] = &["layered", "minhop", "dfsssp"];

/// The plugin and OpenSM's references on Slim Fly.
const SLIM_FLY: &[&str] = &["layered", "minhop", "dfsssp"];

/// The plugin and OpenSM's references on fat trees: minhop, and the engines made for trees —
/// `updn` (its roots found by OpenSM from the topology, no root GUID file) and `ftree` (which
/// finds the leaves and roots itself when no GUID files name them; LMC 0 only).
const FAT_TREE: &[&str] = &["layered", "minhop", "updn", "ftree"];

/// OpenSM with `engine` at `lmc`, once: the plugin as the demo runs it (its defaults,
/// `qos TRUE`), OpenSM's own engines as `tests/analyze_opensm.rs` runs them.
fn options(engine: &str, lmc: u8) -> OpenSmOptions {
    let mut options = if engine == "layered" {
        let mut o = with_plugin("qos TRUE\n", None, true);
        o.config = o
            .config
            .map(|c| c.replace("lmc 2\n", &format!("lmc {lmc}\n")));
        o.lmc = lmc;
        o
    } else {
        OpenSmOptions::new(engine, lmc)
    };
    // DFSSSP takes over a minute on q = 11 on a loaded machine.
    options.up_within = Duration::from_secs(900);
    options
}

/// The log line that proves `engine` itself programmed the tables (no fallback to minhop).
fn configured(engine: &str) -> String {
    if engine == "layered" {
        LAYERED_USED.to_string()
    } else {
        format!("{engine} tables configured on all switches")
    }
}

/// The fabric with OpenSM's LIDs and the tables OpenSM dumped after its sweep.
fn read_back(sim: &Ibsim, sm: &OpenSm) -> (Fabric, LidTable, ForwardingTables) {
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .expect("ibnetdiscover output")
        .fabric;
    let lids = LidTable::from_fabric(&fabric).expect("LIDs");
    let dump = lfts::parse(&wait_for_dump(sm, "opensm-lfts.dump"), &fabric).expect("LFT dump");
    assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    (fabric, lids, dump.tables)
}

/// Minimum ratios to layer 0 alone for prefix `k` (≥ 2): all-to-all, random mean,
/// adversarial mean, worst permutation.
fn targets(k: usize) -> [f64; 4] {
    let (random, adversarial) = match k {
        2 => (1.15, 1.5),
        4 => (1.30, 2.0),
        _ => (1.40, 2.2),
    };
    [0.80, random, adversarial, 0.90]
}

/// "met" or "missed: …" naming every target below its bound.
fn verdict(k: usize, ratios: [f64; 4]) -> String {
    let names = ["a2a", "random", "adv", "worst"];
    let missed: Vec<String> = targets(k)
        .iter()
        .zip(ratios)
        .zip(names)
        .filter(|((bound, ratio), _)| ratio < *bound)
        .map(|((bound, ratio), name)| format!("{name} {ratio:.2} < {bound:.2}"))
        .collect();
    if missed.is_empty() {
        "met".into()
    } else {
        format!("**missed**: {}", missed.join(", "))
    }
}

fn row(
    label: &str,
    p: &PrefixThroughput,
    first: &PrefixThroughput,
    judged: bool,
    mat: &str,
) -> String {
    let worst = p.worst.unwrap_or(f64::NAN);
    let ratio = |a: f64, b: f64| a / b;
    let r_a2a = ratio(p.all_to_all, first.all_to_all);
    let r_mean = ratio(p.random_mean, first.random_mean);
    let r_min = ratio(p.random_min, first.random_min);
    let r_adv = ratio(p.adversarial_mean, first.adversarial_mean);
    let r_worst = ratio(worst, first.worst.unwrap_or(f64::NAN));
    let judgement = if judged && p.layers >= 2 {
        verdict(p.layers, [r_a2a, r_mean, r_adv, r_worst])
    } else {
        String::new()
    };
    format!(
        "| {label} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {worst:.3} | {r_a2a:.2} / {r_mean:.2} / {r_min:.2} / {r_adv:.2} / {r_worst:.2} | {judgement} | {mat} |",
        p.layers, p.all_to_all, p.random_mean, p.random_min, p.adversarial_mean,
    )
}

fn run(spec: &str, lmc: u8, engine: &str) {
    // OpenSM's ftree refuses LMC > 0 ("LMC > 0 is not supported by fat-tree routing") and
    // falls back to minhop: it runs at LMC 0, and its one layer is compared with layer 0.
    let lmc = if engine == "ftree" { 0 } else { lmc };
    let Some(original) = fabric_of(spec) else {
        return;
    };
    let sim = Ibsim::start(&ibsim::write_net(&original));
    let started = Instant::now();
    let sm = OpenSm::start(&sim, &options(engine, lmc));
    let log = sm.log();
    assert!(
        log.contains(&configured(engine)),
        "{spec} lmc {lmc}: {engine} did not route:\n{log}"
    );
    let (fabric, lids, tables) = read_back(&sim, &sm);
    let routed = started.elapsed().as_secs_f64();
    if std::env::var_os("SHOW_LOG").is_some() {
        eprintln!("{}", sm.log());
    }
    // Every cabled host port (some hosts are cabled on port 2 only).
    for h in fabric.hosts() {
        for port in fabric
            .node(h)
            .ports
            .iter()
            .skip(1)
            .filter(|p| p.link.is_some())
        {
            assert_eq!(port.lmc, lmc, "{engine}: LMC {lmc}");
        }
    }
    let started = Instant::now();
    let report: Report = analyze(
        &fabric,
        &lids,
        &tables,
        &Options {
            prefix: Some(PrefixOptions {
                samples: std::env::var("PREFIX_SAMPLES")
                    .ok()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(PrefixOptions::default().samples),
                ..PrefixOptions::default()
            }),
            ..Options::default()
        },
    );
    let analysed = started.elapsed().as_secs_f64();
    // updn and ftree leave a spine's LID unrouted from the other spines (that route would go
    // down and up again): every host LID must still be reached from every switch.
    let hosts_reached = report.paths.iter().all(|p| p.broken == 0);
    assert!(
        report.is_complete() || engine != "layered",
        "{spec} {engine}:\n{report}"
    );
    if !report.is_complete() && (!is_tree(spec) || !hosts_reached) {
        // A reference that leaves hosts unreached (updn with hosts on a spine: the other
        // spine would reach them down and up again) has no throughput to compare.
        let c = &report.completeness;
        println!(
            "| {spec} | {lmc} | {engine} | — | incomplete: {} of {} (switch, LID) entries reach no destination | | | | | | | |",
            c.entries_checked - c.entries_reaching,
            c.entries_checked
        );
        return;
    }
    assert_eq!(report.layers, 1 << lmc, "{spec} {engine}: every LID offset");
    let mat = (spec == "slimfly:q=5").then(|| {
        let started = Instant::now();
        let with_mat = analyze(
            &fabric,
            &lids,
            &tables,
            &Options {
                mat: true,
                ..Options::default()
            },
        );
        let m = with_mat.mat.expect("asked for");
        let value = |t: Option<f64>| t.map_or("—".into(), |t| format!("{t:.3}"));
        format!(
            "{} / {} ({:.1} s)",
            value(m.uniform.throughput),
            value(m.adversarial.throughput),
            started.elapsed().as_secs_f64()
        )
    });
    let prefix = report.prefix.expect("asked for");
    let first = &prefix.prefixes[0];
    let label = format!("{spec} | {lmc} | {engine}");
    for p in &prefix.prefixes {
        // MAT spreads over every layer: shown on the row of all layers.
        let mat_cell = match &mat {
            Some(m) if p.layers == report.layers => m.as_str(),
            _ => "",
        };
        println!("{}", row(&label, p, first, engine == "layered", mat_cell));
    }
    eprintln!(
        "{spec} lmc {lmc} {engine}: OpenSM and read-back {routed:.1} s, prefix analysis {analysed:.2} s"
    );
}

/// The 4-ary 3-tree without one cable from a leaf up: the extra LID of each destination
/// over the leaf's three cables (see `routing::spread`).
const DAMAGED_TREE: &str = "kary-ntree:k=4,n=3 without a leaf uplink";

/// The fabric of a case: a topology spec built (with " without a leaf uplink": less the first
/// cable from a leaf up), or a shared dump read (`None` when missing).
fn fabric_of(spec: &str) -> Option<Fabric> {
    if let Some(whole) = spec.strip_suffix(" without a leaf uplink") {
        let whole = common::generated(whole);
        let is_switch = |n| whole.node(n).is_switch();
        let leaf = whole.links().iter().find_map(|l| {
            match (is_switch(l.a.node), is_switch(l.b.node)) {
                (true, false) => Some(l.a.node),
                (false, true) => Some(l.b.node),
                _ => None,
            }
        })?;
        let up = whole.links().iter().position(|l| {
            (l.a.node == leaf && is_switch(l.b.node)) || (l.b.node == leaf && is_switch(l.a.node))
        })? as u32;
        return Some(whole.after_losses(|_| false, |l| l.0 == up));
    }
    match spec.strip_prefix("dump:") {
        Some(file) => {
            let text = common::shared_fixtures::shared_text(file)?;
            Some(
                ibnetdiscover::parse(&text, None)
                    .expect("a valid dump")
                    .fabric,
            )
        }
        None => Some(common::generated(spec)),
    }
}

/// Fat trees, where updn and ftree leave the spines' own LIDs unrouted from other spines.
fn is_tree(spec: &str) -> bool {
    ["fattree", "kary-ntree", "dump:"]
        .iter()
        .any(|prefix| spec.starts_with(prefix))
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!(
        "| fabric | lmc | engine | K | all-to-all | random mean | random min | adversarial | worst perm | ratio to K = 1 (a2a / mean / min / adv / worst) | targets | MAT uniform / adversarial (all layers) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &(spec, lmc, engines) in CASES {
        for &engine in engines {
            let name = format!("{spec} lmc={lmc} {engine}");
            if filters.iter().all(|f| name.contains(f.as_str())) {
                run(spec, lmc, engine);
            }
        }
    }
}
