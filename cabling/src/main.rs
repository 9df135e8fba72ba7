//! `cabling`: rack wiring plans for InfiniBand fabrics and their verification against the live
//! fabric.

use std::process::ExitCode;

use clap::Parser;

/// Rack wiring plans for InfiniBand fabrics, and their verification against the live fabric.
#[derive(Parser)]
#[command(version, about)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    eprintln!("cabling: no command given; see --help");
    ExitCode::from(2)
}
