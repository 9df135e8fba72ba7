//! `cabling`: rack wiring plans for InfiniBand fabrics, and their verification against the live
//! fabric.
//!
//! Results go to stdout or files (written atomically); diagnostics to stderr. Exit status: 0
//! success, 1 the command ran and found a problem, 2 bad input or usage.

/// The construction subcommands: the same as the `ibfabric topo` command's.
#[path = "../../src/bin/ibfabric/construction_args.rs"]
mod construction_args;
mod html;
/// Writing results (stdout, atomic file replacement): the same code as the `ibfabric` command's.
#[path = "../../src/bin/ibfabric/output.rs"]
mod output;
mod plan_cmd;
mod verify_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Rack wiring plans for InfiniBand fabrics, and their verification against the live fabric.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the wiring plan of a topology: YAML, CSV, printable HTML sheets, ibsim net file,
    /// node-name-map.
    Plan(plan_cmd::PlanArgs),
    /// Compare the live fabric (ibnetdiscover dumps, iblinkinfo) with a plan and list what to fix:
    /// swap, move, plug, remove, reseat; exit 0 when all is as planned, 1 with findings.
    Verify(verify_cmd::VerifyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    output::init_logging(cli.verbose);
    let result = match cli.command {
        Command::Plan(args) => plan_cmd::run(args),
        Command::Verify(args) => verify_cmd::run(args),
    };
    output::exit_code("cabling", result)
}
