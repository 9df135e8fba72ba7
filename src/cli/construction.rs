//! The topology constructions as command-line subcommands, with the parameter names scripts
//! and docs rely on. Shared by `ibfabric topo` and `cabling plan`.

use clap::Subcommand;

use crate::topology::TopologySpec;

/// A construction and its parameters.
#[derive(Subcommand)]
pub enum Construction {
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
    /// k-ary n-tree: the fat tree of n levels (three and more), k^(n−1) switches per level.
    KaryNtree {
        /// Arity k: hosts per leaf, down- and up-links per switch (2k ports).
        #[arg(long)]
        k: u32,
        /// Levels n (3 for a three-level fat tree).
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
    /// Ring-based random shortcut network: a ring plus random shortcuts to degree d.
    Shortcut {
        /// Switches on the ring.
        #[arg(long)]
        nodes: u32,
        /// Network degree, ring included (nodes × degree even).
        #[arg(long)]
        degree: u32,
        /// Hosts per switch.
        #[arg(long, default_value_t = 1)]
        hosts: u32,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u32,
    },
    /// Circulant network: switch i cabled to i ± every jump.
    Circulant {
        /// Switches.
        #[arg(long)]
        nodes: u32,
        /// Jumps, comma-separated, each in 1..=nodes/2 [default: 1,2,4,…,nodes/2 for nodes a
        /// power of two].
        #[arg(long, value_delimiter = ',')]
        jumps: Vec<u32>,
        /// Hosts per switch.
        #[arg(long, default_value_t = 1)]
        hosts: u32,
    },
}

impl Construction {
    /// The spec the core builds.
    pub fn spec(&self) -> TopologySpec {
        match *self {
            Construction::Shortcut {
                nodes,
                degree,
                hosts,
                seed,
            } => TopologySpec::Shortcut {
                nodes,
                degree,
                hosts,
                seed,
            },
            Construction::Circulant {
                nodes,
                ref jumps,
                hosts,
            } => TopologySpec::Circulant {
                nodes,
                jumps: jumps.clone(),
                hosts,
            },
            Construction::Slimfly { q, p } => TopologySpec::SlimFly { q, p },
            Construction::Mlfm { d } => TopologySpec::Mlfm { d },
            Construction::Lsft { n } => TopologySpec::Lsft { n },
            Construction::KaryNtree { k, n } => TopologySpec::KaryNTree { k, n },
            Construction::Polarfly { q, p } => TopologySpec::PolarFly { q, p },
            Construction::Fattree {
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
            Construction::Random {
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
        }
    }
}
