//! `ibfabric topo`: build a construction and write it in one of the fabric formats.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use ibfabric::Fabric;
use ibfabric::io::{NodeNameMap, dot, fabric_document::FabricDocument, ibnetdiscover, ibsim};
use ibfabric::topology::TopologySpec;

use crate::output;
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
    /// Slim Fly (MMS graph) for a prime power q = 4w + δ, δ ∈ {−1, 0, 1}.
    Slimfly {
        /// Field order q (3, 4, 5, 7, 8, 9, 11, 13, 16, ...).
        #[arg(long)]
        q: u32,
        /// Hosts per switch [default: ⌈k'/2⌉, full global bandwidth].
        #[arg(long)]
        p: Option<u32>,
    },
    /// Multi-Layer Full Mesh of 2d-port switches.
    Mlfm {
        /// Half the switch port count: d layers, d+1 leaves per layer, d servers per leaf.
        #[arg(long)]
        d: u32,
    },
    /// Latin-square fat-tree from the projective plane of order n (a prime power).
    Lsft {
        /// Plane order n: n²+n+1 leaves and spines, n+1 servers per leaf.
        #[arg(long)]
        n: u32,
    },
    /// PolarFly (Erdős–Rényi polarity graph) for a prime power q.
    Polarfly {
        /// Field order q.
        #[arg(long)]
        q: u32,
        /// Hosts per router [default: ⌊(q+1)/2⌋].
        #[arg(long)]
        p: Option<u32>,
    },
    /// Two-level fat tree.
    Fattree {
        /// Leaf switches.
        #[arg(long)]
        leaves: u32,
        /// Spine switches.
        #[arg(long)]
        spines: u32,
        /// Parallel cables between each leaf and each spine.
        #[arg(long)]
        links_per_pair: u32,
        /// Hosts per leaf switch.
        #[arg(long)]
        hosts_per_leaf: u32,
    },
    /// Seeded random regular switch graph (irregular test fabric).
    Random {
        /// Switches.
        #[arg(long)]
        switches: u32,
        /// Network degree (cables to other switches per switch).
        #[arg(long)]
        degree: u32,
        /// Hosts per switch.
        #[arg(long, default_value_t = 1)]
        hosts: u32,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u32,
    },
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
        let spec = match *self {
            Kind::Slimfly { q, p } => TopologySpec::SlimFly { q, p },
            Kind::Mlfm { d } => TopologySpec::Mlfm { d },
            Kind::Lsft { n } => TopologySpec::Lsft { n },
            Kind::Polarfly { q, p } => TopologySpec::PolarFly { q, p },
            Kind::Fattree {
                leaves,
                spines,
                links_per_pair,
                hosts_per_leaf,
            } => TopologySpec::FatTree {
                leaves,
                spines,
                links_per_pair,
                hosts_per_leaf,
            },
            Kind::Random {
                switches,
                degree,
                hosts,
                seed,
            } => TopologySpec::Random {
                switches,
                degree,
                hosts,
                seed,
            },
            Kind::Ibnetdiscover {
                ref file,
                ref node_name_map,
            } => {
                let source = file
                    .to_str()
                    .ok_or_else(|| anyhow::anyhow!("path is not UTF-8"))?;
                return load_fabric(source, node_name_map.as_deref());
            }
        };
        Ok(spec.construction()?.build())
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
