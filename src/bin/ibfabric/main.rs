//! `ibfabric`: generate, convert and analyse InfiniBand fabrics.
//!
//! Results go to stdout (or `-o FILE`, written atomically); diagnostics to stderr.
//! Exit status: 0 success, 1 the command ran and found a problem, 2 bad input or usage.
//! What it shares with `cabling` (output files, exit status, `-v`, the construction
//! subcommands) is in `ibfabric::cli`.

mod a2a;
mod analyze;
mod deadlock_check;
mod deadlock_transition;
mod diff;
mod metrics;
mod multicast;
mod rankmap;
mod repair;
mod route;
mod simgrid;
mod simulate;
mod source;
mod topo;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use ibfabric::cli::{CompletionsArgs, ManArgs, Verbosity, exit_code};

/// Routing, cabling and analysis for low-diameter InfiniBand fabrics.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    verbosity: Verbosity,
    /// Threads of the routing passes (0: every core this process may use); the tables are the
    /// same whatever the number
    #[arg(long, global = true, default_value_t = 0, value_name = "N")]
    threads: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compute a routing (layered, minimal or RUES), report its quality and write its tables.
    Route(route::RouteArgs),
    /// Generate a topology (or convert a discovered one) to YAML, JSON, an ibsim net file or DOT.
    Topo(topo::TopoArgs),
    /// Compare two fabrics physically (nodes by GUID, cables by GUID and port); exit 1 if they differ.
    Diff(diff::DiffArgs),
    /// Judge a routing from its forwarding tables (opensm-lfts.dump or ibroute output); exit 1 if incomplete.
    Analyze(analyze::AnalyzeArgs),
    /// Check a routing for deadlocks from its forwarding, SL and SL-to-VL tables (or, with --from, every state of a change of them); exit 1 and print the cycle if there is one.
    DeadlockCheck(deadlock_check::DeadlockCheckArgs),
    /// All-to-all schedules (shift, MLFM, Latin-square fat-tree) and their congestion check.
    A2a(a2a::A2aArgs),
    /// Number a job's hosts so that a collective crosses fewer switch hops (two-opt rank placement); write the hostfile.
    Rankmap(rankmap::RankmapArgs),
    /// Write the SimGrid platform (hosts, links, every pair's programmed route) and hostfile of a routed fabric.
    Simgrid(simgrid::SimgridArgs),
    /// Simulate an MPI collective or traffic pattern on the programmed routes with SimGrid's smpirun.
    Simulate(simulate::SimulateArgs),
    /// Turn the OpenSM plugin's sweep log into Prometheus metrics (node_exporter's textfile format), as its metrics_file holds them.
    Metrics(metrics::MetricsArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write it and one page per subcommand into a directory.
    Man(ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.verbosity.init_logging();
    let pool = match ibfabric::threads::pool(cli.threads) {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("ibfabric: cannot start {} threads: {e}", cli.threads);
            return ExitCode::from(2);
        }
    };
    let result = pool.install(|| match cli.command {
        Command::Topo(args) => topo::run(args),
        Command::Route(args) => route::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::DeadlockCheck(args) => deadlock_check::run(args),
        Command::A2a(args) => a2a::run(args),
        Command::Rankmap(args) => rankmap::run(args),
        Command::Simgrid(args) => simgrid::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Metrics(args) => metrics::run(args),
        Command::Completions(args) => args.run(Cli::command()),
        Command::Man(args) => args.run(Cli::command()),
    });
    exit_code("ibfabric", result)
}
