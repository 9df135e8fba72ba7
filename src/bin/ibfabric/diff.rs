//! `ibfabric diff`: is the actual fabric physically the expected one?

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use ibfabric::topology::compare::compare;

use crate::source::load_fabric;

#[derive(Args)]
pub struct DiffArgs {
    /// The expected fabric: topology spec (slimfly:q=5), fabric document or ibnetdiscover dump.
    #[arg(long)]
    expected: String,
    /// The actual fabric, in any of the same forms (typically an ibnetdiscover dump).
    #[arg(long)]
    actual: String,
    /// Node-name-map applied when reading ibnetdiscover dumps (names in the report).
    #[arg(long, value_name = "FILE")]
    node_name_map: Option<PathBuf>,
}

/// Prints every difference; exit status 0 when there is none, 1 otherwise.
pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let map = args.node_name_map.as_deref();
    let expected = load_fabric(&args.expected, map)?;
    let actual = load_fabric(&args.actual, map)?;
    let diff = compare(&expected, &actual);
    println!("expected: {} ({})", expected.name, expected.summary());
    println!("actual:   {} ({})", actual.name, actual.summary());
    if diff.is_empty() {
        println!("same fabric: every node and cable matches, at the same rates");
        Ok(ExitCode::SUCCESS)
    } else {
        print!("{diff}");
        Ok(ExitCode::from(1))
    }
}
