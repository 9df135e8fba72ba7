//! `ibfabric topo`: build a construction and write it in one of the fabric formats.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use ibfabric::Fabric;
use ibfabric::cli::{Construction, output};
use ibfabric::io::{NodeNameMap, dot, fabric_document::FabricDocument, ibnetdiscover, ibsim};

use crate::source::load_fabric;

#[derive(Args)]
pub struct TopoArgs {
    #[command(subcommand)]
    kind: Kind,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Yaml, global = true)]
    format: Format,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE", global = true)]
    output: Option<PathBuf>,
}

/// The topology kinds, with the parameter names scripts and docs rely on.
#[derive(Subcommand)]
enum Kind {
    #[command(flatten)]
    Construction(Construction),
    /// Convert a discovered fabric (an `ibnetdiscover` dump) like any other topology source.
    Ibnetdiscover {
        /// The dump (plain, -g, -f or -m output of ibnetdiscover).
        file: PathBuf,
        /// Names for the nodes, by node GUID (`0x<guid> "name"` per line).
        #[arg(long, value_name = "FILE")]
        node_name_map: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// The fabric document (nodes, GUIDs, racks, cables).
    Yaml,
    /// The same document as JSON.
    Json,
    /// An ibsim net file (`ibsim -s FILE`).
    Ibsim,
    /// Graphviz DOT.
    Dot,
    /// ibnetdiscover's text format.
    Ibnetdiscover,
    /// A node-name-map (node GUID → name) for infiniband-diags and OpenSM.
    NodeNameMap,
}

impl Kind {
    fn fabric(&self) -> anyhow::Result<Fabric> {
        match self {
            Kind::Construction(c) => Ok(c.spec().build()?),
            Kind::Ibnetdiscover {
                file,
                node_name_map,
            } => {
                let source = file
                    .to_str()
                    .ok_or_else(|| anyhow::anyhow!("path is not UTF-8"))?;
                load_fabric(source, node_name_map.as_deref())
            }
        }
    }
}

pub fn run(args: TopoArgs) -> anyhow::Result<ExitCode> {
    let fabric = args.kind.fabric()?;
    let text = render(&fabric, args.format)?;
    output::emit(args.output.as_deref(), &text)?;
    if let Some(path) = &args.output {
        eprintln!(
            "{}: {} -> {}",
            fabric.name,
            fabric.summary(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn render(fabric: &Fabric, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Yaml => yaml_serde::to_string(&FabricDocument::from_fabric(fabric))?,
        Format::Json => serde_json::to_string_pretty(&FabricDocument::from_fabric(fabric))? + "\n",
        Format::Ibsim => ibsim::write_net(fabric),
        Format::Dot => dot::write_dot(fabric),
        Format::Ibnetdiscover => ibnetdiscover::write(fabric),
        Format::NodeNameMap => NodeNameMap::from_fabric(fabric).write(),
    })
}
