//! `cabling`: rack wiring plans for InfiniBand fabrics, and their verification against the live
//! fabric.
//!
//! Results go to stdout or files (written atomically); diagnostics to stderr. Exit status: 0
//! success, 1 the command ran and found a problem, 2 bad input or usage.
//!
//! The construction subcommands, output files, exit status and `-v` flag are the `ibfabric`
//! command's, from `ibfabric::cli`.

mod html;
mod plan_cmd;
mod verify_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use ibfabric::cli::{CompletionsArgs, ManArgs, Verbosity, exit_code};

/// Rack wiring plans for InfiniBand fabrics, and their verification against the live fabric.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    verbosity: Verbosity,
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
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write it and one page per subcommand into a directory.
    Man(ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.verbosity.init_logging();
    let result = match cli.command {
        Command::Plan(args) => plan_cmd::run(args),
        Command::Verify(args) => verify_cmd::run(args),
        Command::Completions(args) => args.run(Cli::command()),
        Command::Man(args) => args.run(Cli::command()),
    };
    exit_code("cabling", result)
}
