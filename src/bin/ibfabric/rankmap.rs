//! `ibfabric rankmap`: number a job's hosts so that a collective crosses fewer switch hops on
//! the fabric's real routes (two-opt from a baseline mapping), and write the hostfile.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use ibfabric::cli::{input, output};
use ibfabric::io::hostfile::{self, HostfileFormat};
use ibfabric::io::names::NodeResolver;
use ibfabric::placement::{
    Collective, Evaluator, HostRoutes, Mapping, Objective, Slot, rank_order, two_opt,
};
use ibfabric::routing::{Algorithm, LidTable, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::{PortRef, SwitchGraph};
use serde::Serialize;

use crate::source::{has_lids, load_fabric_with_map, load_tables, resolve_hosts};

#[derive(Args)]
pub struct RankmapArgs {
    /// The fabric: topology spec (shortcut:nodes=1024,degree=19,seed=1), fabric document or
    /// plan, or an ibnetdiscover dump.
    #[arg(long)]
    fabric: String,
    /// Forwarding tables the subnet manager programmed (opensm-lfts.dump or `ibroute` output);
    /// without them, the fabric is routed minimally by the core.
    #[arg(long, value_name = "FILE")]
    lfts: Option<PathBuf>,
    /// The job's hosts, one per line (node name, 0x GUID, node-name-map name, NodeDescription
    /// or hostname; repeat a host for several ranks on it).
    #[arg(long, value_name = "FILE")]
    hosts: PathBuf,
    /// The collective to optimise for.
    #[arg(long, value_enum)]
    collective: CollectiveArg,
    /// What to minimise.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Hops)]
    objective: ObjectiveArg,
    /// The starting rank order.
    #[arg(long, value_enum, default_value_t = MappingArg::Ascending)]
    mapping: MappingArg,
    /// Two-opt swaps to try (0: keep the starting order).
    #[arg(long, default_value_t = 200_000)]
    iterations: u64,
    /// Seed of the random mapping and the two-opt swaps.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Hostfile format.
    #[arg(long, value_enum, default_value_t = FormatArg::Openmpi)]
    format: FormatArg,
    /// Node-name-map (`0x<GUID> "name"` per line): names a dump's nodes, and the hosts list
    /// may use its names.
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
    /// Write the hostfile to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write the objective before and after, iterations and seconds as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum CollectiveArg {
    /// Binomial-tree broadcast from rank 0.
    Bcast,
    /// Recursive-doubling allreduce.
    Allreduce,
    /// Bruck's all-to-all.
    Alltoall,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ObjectiveArg {
    /// Total inter-switch hops of all messages.
    Hops,
    /// Sum over steps of the busiest link's messages, then hops.
    Contention,
}

#[derive(Clone, Copy, ValueEnum)]
enum MappingArg {
    /// The order of the hosts file (e.g. the scheduler's).
    AsListed,
    /// Ascending node order of the fabric (construction order for a generated fabric, ring
    /// order for shortcut and circulant; discovery order for an ibnetdiscover dump).
    Ascending,
    /// Seeded random order.
    Random,
    /// Breadth-first over the switches from the first host's switch.
    Tree,
    /// Node (ring) order, starting after the widest gap.
    Ring,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Open MPI `--hostfile`: `host slots=N` lines.
    Openmpi,
    /// Slurm `SLURM_HOSTFILE` for `--distribution=arbitrary`: one host per rank.
    Slurm,
    /// `rank host` lines.
    Plain,
}

/// The `--report` document.
#[derive(Serialize)]
struct Report {
    collective: &'static str,
    objective: &'static str,
    mapping: &'static str,
    ranks: usize,
    objective_before: u64,
    objective_after: u64,
    hops_before: u64,
    hops_after: u64,
    /// Only with the contention objective.
    contention_before: Option<u64>,
    contention_after: Option<u64>,
    iterations: u64,
    accepted_swaps: u64,
    seed: u64,
    seconds: f64,
}

pub fn run(args: RankmapArgs) -> anyhow::Result<ExitCode> {
    let (mut fabric, names) = load_fabric_with_map(&args.fabric, args.node_name_map.as_deref())?;
    let tables = match &args.lfts {
        Some(path) => load_tables(&mut fabric, &args.fabric, path)?,
        None => {
            if !has_lids(&fabric) {
                assign_lids(&mut fabric, 0)?;
            }
            let config = RoutingConfig {
                layers: 1,
                algorithm: Algorithm::Minimal,
                seed: args.seed,
                ..Default::default()
            };
            route_fabric(&fabric, &config)?.tables
        }
    };
    let lids = LidTable::from_fabric(&fabric).with_context(|| args.fabric.clone())?;

    let hosts_name = input::display_name(&args.hosts);
    let text = input::read_text(&args.hosts)?;
    let lines = hostfile::parse_hosts(&text);
    if lines.is_empty() {
        bail!("{hosts_name}: no hosts");
    }
    let nodes = resolve_hosts(
        &NodeResolver::new(&fabric, names.as_ref()),
        &lines,
        &hosts_name,
    )?;
    let graph = SwitchGraph::new(&fabric);
    let mut dense = vec![u32::MAX; fabric.nodes().len()];
    for i in 0..graph.len() {
        dense[graph.node(i).index()] = i as u32;
    }
    let mut slots = Vec::with_capacity(nodes.len());
    for (&(line, host), &node) in lines.iter().zip(&nodes) {
        let slot = fabric.neighbours(node).find_map(|(p, peer)| {
            let port = &fabric.node(node).ports[usize::from(p)];
            let switch = dense[peer.node.index()];
            (switch != u32::MAX && port.lid != 0).then_some(Slot {
                port: PortRef { node, port: p },
                switch,
            })
        });
        match slot {
            Some(slot) => slots.push(slot),
            None => bail!(
                "{hosts_name}:{line}: host {host:?} has no port with a LID cabled to a switch"
            ),
        }
    }

    let collective = match args.collective {
        CollectiveArg::Bcast => Collective::Broadcast,
        CollectiveArg::Allreduce => Collective::Allreduce,
        CollectiveArg::Alltoall => Collective::Alltoall,
    };
    let objective = match args.objective {
        ObjectiveArg::Hops => Objective::Hops,
        ObjectiveArg::Contention => Objective::Contention,
    };
    let mapping = match args.mapping {
        MappingArg::AsListed => Mapping::AsListed,
        MappingArg::Ascending => Mapping::Ascending,
        MappingArg::Random => Mapping::Random,
        MappingArg::Tree => Mapping::Tree,
        MappingArg::Ring => Mapping::Ring,
    };

    let started = Instant::now();
    let ports: Vec<PortRef> = slots.iter().map(|s| s.port).collect();
    let routes = HostRoutes::from_tables(
        &fabric,
        &lids,
        &tables,
        &ports,
        objective == Objective::Contention,
    )
    .with_context(|| args.fabric.clone())?;
    let schedule = collective.schedule(slots.len());
    let start = rank_order(mapping, &slots, &graph, args.seed);
    let mut evaluator = Evaluator::new(&routes, &schedule, objective, start);
    let run = two_opt(&mut evaluator, args.iterations, args.seed);
    let seconds = started.elapsed().as_secs_f64();

    let ordered: Vec<&str> = evaluator
        .placement()
        .iter()
        .map(|&slot| lines[slot as usize].1)
        .collect();
    let format = match args.format {
        FormatArg::Openmpi => HostfileFormat::OpenMpi,
        FormatArg::Slurm => HostfileFormat::Slurm,
        FormatArg::Plain => HostfileFormat::Plain,
    };
    let text = hostfile::write(format, &ordered)?;
    output::emit(args.output.as_deref(), &text)?;

    let (before, after) = (run.before.key(objective).0, run.after.key(objective).0);
    let name = match objective {
        Objective::Hops => "hops",
        Objective::Contention => "contention",
    };
    let change = if before == 0 {
        0.0
    } else {
        100.0 * (before as f64 - after as f64) / before as f64
    };
    let hops_too = match objective {
        Objective::Hops => String::new(),
        Objective::Contention => format!("; hops {} -> {}", run.before.hops, run.after.hops),
    };
    eprintln!(
        "{collective} over {} ranks ({mapping} start): {name} {before} -> {after} \
         ({change:.1}% less){hops_too}; {} of {} swaps kept in {seconds:.2} s",
        slots.len(),
        run.accepted,
        run.iterations,
    );
    if let Some(path) = &args.report {
        let contention = objective == Objective::Contention;
        let report = Report {
            collective: collective.name(),
            objective: name,
            mapping: mapping.name(),
            ranks: slots.len(),
            objective_before: before,
            objective_after: after,
            hops_before: run.before.hops,
            hops_after: run.after.hops,
            contention_before: contention.then_some(run.before.contention),
            contention_after: contention.then_some(run.after.contention),
            iterations: run.iterations,
            accepted_swaps: run.accepted,
            seed: args.seed,
            seconds,
        };
        output::write_atomically(
            path,
            (serde_json::to_string_pretty(&report)? + "\n").as_bytes(),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
