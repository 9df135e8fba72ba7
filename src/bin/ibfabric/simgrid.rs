//! `ibfabric simgrid`: write the SimGrid platform of a fabric and its routing (the core's, or
//! forwarding tables read back) and the `smpirun` hostfile of its hosts. What the platform
//! holds and where its flow model is not InfiniBand: `ibfabric::simulation`.
//!
//! The options shared with `ibfabric simulate` (fabric, routing, hosts, link model, layer
//! policy) and the platform they build live here too.

use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::{Context, bail};
use clap::Args;
use ibfabric::Fabric;
use ibfabric::cli::{input, output};
use ibfabric::io::hostfile;
use ibfabric::io::names::NodeResolver;
use ibfabric::io::node_name_map::NodeNameMap;
use ibfabric::io::simgrid;
use ibfabric::options::{FrontEndDefaults, MAX_LAYERS, PathOptions};
use ibfabric::routing::{ForwardingTables, LidTable, assign_lids, route_fabric};
use ibfabric::simulation::{LayerPolicy, LinkModel, Platform, Ucx};
use ibfabric::topology::{LinkSpeed, LinkWidth, PortRef};

use crate::source::{has_lids, load_fabric, load_tables, read_node_name_map, resolve_hosts};

const DEFAULT_LAYERS: usize = FrontEndDefaults::COMMAND
    .layers
    .expect("the command's default layers");

/// Which fabric, which routing, which hosts, which link model: what a platform is made of.
#[derive(Args, Clone)]
pub struct PlatformArgs {
    /// The fabric: topology spec (slimfly:q=5), fabric document or plan, or an ibnetdiscover
    /// dump.
    #[arg(long)]
    pub fabric: String,
    /// Forwarding tables the subnet manager programmed (opensm-lfts.dump or `ibroute`
    /// output); without them the core routes the fabric (--algorithm, --layers).
    #[arg(long, value_name = "FILE")]
    pub lfts: Option<PathBuf>,
    /// Layers the core routes (a power of two; ignored with --lfts).
    #[arg(long, default_value_t = DEFAULT_LAYERS)]
    pub layers: usize,
    #[command(flatten)]
    pub paths: PathOptions,
    /// The job's hosts, one rank per line (node name, 0x GUID, node-name-map name or hostname;
    /// `host slots=N` as Open MPI and `ibfabric rankmap` write it); default: every host, one
    /// rank each, in node order.
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,
    /// Which layers (LID offsets) a host pair's traffic takes. `ucx[:K]` (simulate's
    /// default): what UCX, the transport under Open MPI 5 and MPICH, does with
    /// UCX_IB_LID_PATH_BITS configured — messages up to --rndv-thresh on layer 0, larger ones
    /// split evenly over layers 0..K-1 (K = UCX_MAX_RNDV_RAILS, default 2 or the LIDs if
    /// fewer); every endpoint becomes K SimGrid hosts on its one cable, copy k reached over
    /// layer k. `fixed:K` (simgrid's default): every pair on layer K; layer 0 is all UCX uses
    /// without path bits. `parallel`: the split over all layers at once. `round-robin`: pair
    /// i, j of the platform's hosts on layer (i + j) mod the destination's LIDs, a synthetic
    /// spreading no MPI stack does. SimGrid holds one route per host pair.
    #[arg(long, value_name = "POLICY")]
    pub layer_policy: Option<LayerPolicyArg>,
    /// Rate of cables whose rate the fabric does not give (generated fabrics), as
    /// `WIDTH:SPEED`, e.g. 4x:HDR.
    #[arg(long, default_value = "4x:EDR", value_name = "WIDTH:SPEED")]
    pub rate: RateArg,
    /// Bandwidth of every link in Gb/s, whatever its rate.
    #[arg(long, value_name = "GBPS")]
    pub bandwidth: Option<f64>,
    /// Latency of every link in nanoseconds (a switch traversal and its cable).
    #[arg(long, default_value_t = LinkModel::DEFAULT.latency_ns, value_name = "NS")]
    pub latency: f64,
    /// Node-name-map (`0x<GUID> "name"` per line): names a dump's nodes, and hosts and
    /// schedule ranks may use its names.
    #[arg(long, value_name = "FILE")]
    pub node_name_map: Option<PathBuf>,
}

/// `--layer-policy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayerPolicyArg {
    /// `fixed:K`.
    Fixed(u16),
    /// `round-robin`.
    RoundRobin,
    /// `parallel`.
    Parallel,
    /// `ucx` or `ucx:K`.
    Ucx(Option<u16>),
}

impl FromStr for LayerPolicyArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "round-robin" => return Ok(Self::RoundRobin),
            "parallel" => return Ok(Self::Parallel),
            "ucx" => return Ok(Self::Ucx(None)),
            _ => {}
        }
        let number = |prefix: &str| s.strip_prefix(prefix).and_then(|k| k.parse().ok());
        number("fixed:")
            .map(Self::Fixed)
            .or_else(|| number("ucx:").map(|k| Self::Ucx(Some(k))))
            .ok_or_else(|| {
                format!(
                    "{s:?}: expected ucx, ucx:K (K rendezvous layers), fixed:K (K a layer \
                     number), round-robin or parallel"
                )
            })
    }
}

impl std::fmt::Display for LayerPolicyArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(k) => write!(f, "fixed:{k}"),
            Self::RoundRobin => f.write_str("round-robin"),
            Self::Parallel => f.write_str("parallel"),
            Self::Ucx(None) => f.write_str("ucx"),
            Self::Ucx(Some(k)) => write!(f, "ucx:{k}"),
        }
    }
}

/// How a job's messages use the layers: the policy of every host pair, and how many copies of
/// each endpoint the platform holds (more than one: a message is split into that many parts,
/// copy k to copy k over layer k).
#[derive(Clone, Debug)]
pub struct Layering {
    /// The policy (for copies > 1, [`LayerPolicy::Parallel`]).
    pub policy: LayerPolicy,
    /// Hosts per endpoint.
    pub copies: usize,
    /// Bytes of each part of a message (the message when copies = 1).
    pub part_bytes: u64,
    /// What the report and the platform's notes call it.
    pub name: String,
}

impl Layering {
    /// `arg` on `ranks` of `routing`, for messages of `bytes` (None: a rendezvous-size message,
    /// for a platform written without a benchmark) with UCX's rendezvous threshold
    /// `rndv_thresh`.
    pub fn resolve(
        arg: &LayerPolicyArg,
        routing: &Routing,
        ranks: &[PortRef],
        bytes: Option<u64>,
        rndv_thresh: u64,
    ) -> anyhow::Result<Self> {
        let lids = fewest_lids(&routing.fabric, ranks);
        let whole = |policy| Self {
            policy,
            copies: 1,
            part_bytes: bytes.unwrap_or(0),
            name: arg.to_string(),
        };
        Ok(match arg {
            LayerPolicyArg::Fixed(k) => whole(LayerPolicy::Fixed(*k)),
            LayerPolicyArg::RoundRobin => whole(LayerPolicy::RoundRobin),
            LayerPolicyArg::Parallel => {
                let copies = usize::from(lids);
                Self {
                    policy: split_over(copies),
                    copies,
                    part_bytes: bytes.unwrap_or(0).div_ceil(copies as u64),
                    name: arg.to_string(),
                }
            }
            LayerPolicyArg::Ucx(rails) => {
                let ucx = Ucx {
                    rails: *rails,
                    rndv_thresh,
                };
                let size = bytes.unwrap_or(rndv_thresh.saturating_add(1));
                let split = ucx.split(size, lids).context("--layer-policy")?;
                let rails = ucx.rails(lids)?;
                let copies = split.layers();
                let how = if copies == 1 && size > rndv_thresh {
                    "rendezvous on layer 0".to_string()
                } else if copies == 1 {
                    "eager on layer 0".to_string()
                } else {
                    format!(
                        "rendezvous split over layers 0..{}, {} B per part",
                        copies - 1,
                        split.largest_part()
                    )
                };
                Self {
                    policy: split_over(copies),
                    copies,
                    part_bytes: if bytes.is_some() {
                        split.largest_part()
                    } else {
                        0
                    },
                    name: format!("ucx:{rails} ({how}; rendezvous above {rndv_thresh} B)"),
                }
            }
        })
    }
}

/// The fewest LIDs (2^LMC) of the ranks' ports: the layers every pair can take.
pub fn fewest_lids(fabric: &Fabric, ranks: &[PortRef]) -> u16 {
    ranks
        .iter()
        .map(|p| 1u16 << fabric.node(p.node).ports[usize::from(p.port)].lmc)
        .min()
        .unwrap_or(1)
}

/// `--rate WIDTH:SPEED`.
#[derive(Clone, Copy, Debug)]
pub struct RateArg(LinkWidth, LinkSpeed);

impl FromStr for RateArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (w, v) = s
            .split_once(':')
            .ok_or_else(|| format!("{s:?}: expected WIDTH:SPEED, e.g. 4x:EDR"))?;
        Ok(Self(w.parse()?, v.parse()?))
    }
}

/// A fabric with its LIDs and tables, and how the tables came about (for notes and reports).
pub struct Routing {
    pub fabric: Fabric,
    pub lids: LidTable,
    pub tables: ForwardingTables,
    pub description: String,
}

impl PlatformArgs {
    /// The link model the options give.
    pub fn link_model(&self) -> anyhow::Result<LinkModel> {
        if !(self.latency.is_finite() && self.latency >= 0.0) {
            bail!(
                "--latency {} must be a number of nanoseconds ≥ 0",
                self.latency
            );
        }
        if let Some(b) = self.bandwidth
            && !(b.is_finite() && b > 0.0)
        {
            bail!("--bandwidth {b} must be a positive number of Gb/s");
        }
        Ok(LinkModel {
            default_width: self.rate.0,
            default_speed: self.rate.1,
            bandwidth_gbps: self.bandwidth,
            latency_ns: self.latency,
        })
    }

    /// The fabric, without routing it.
    pub fn load_fabric(&self) -> anyhow::Result<Fabric> {
        load_fabric(&self.fabric, self.node_name_map.as_deref())
    }

    /// The node-name-map given, for resolving hosts and ranks by its names.
    pub fn names(&self) -> anyhow::Result<Option<NodeNameMap>> {
        self.node_name_map
            .as_deref()
            .map(read_node_name_map)
            .transpose()
    }

    /// The fabric routed: its tables read back (--lfts) or the core's routing.
    pub fn route(&self, mut fabric: Fabric) -> anyhow::Result<Routing> {
        if let Some(path) = &self.lfts {
            let tables = load_tables(&mut fabric, &self.fabric, path)?;
            let lids = LidTable::from_fabric(&fabric).with_context(|| self.fabric.clone())?;
            return Ok(Routing {
                fabric,
                lids,
                tables,
                description: format!("tables {}", input::display_name(path)),
            });
        }
        if !self.layers.is_power_of_two() || self.layers > MAX_LAYERS {
            bail!(
                "--layers {} must be a power of two from 1 to {MAX_LAYERS} (LMC 0..7)",
                self.layers
            );
        }
        if !has_lids(&fabric) {
            assign_lids(&mut fabric, self.layers.trailing_zeros() as u8)?;
        }
        let routed = route_fabric(&fabric, &self.paths.routing(self.layers))?;
        let plural = if self.layers == 1 { "" } else { "s" };
        Ok(Routing {
            fabric,
            lids: routed.lids,
            tables: routed.tables,
            description: format!("{:?}, {} layer{plural}", self.paths.algorithm, self.layers)
                .to_lowercase(),
        })
    }

    /// The job's ranks as endpoint ports (--hosts, or every host in node order).
    pub fn ranks(&self, fabric: &Fabric) -> anyhow::Result<Vec<PortRef>> {
        match &self.hosts {
            Some(path) => ranks_from_file(fabric, self.names()?.as_ref(), path),
            None => {
                let ranks: Vec<PortRef> = fabric
                    .hosts()
                    .filter_map(|h| endpoint_of(fabric, h))
                    .collect();
                if ranks.is_empty() {
                    bail!("{}: no host with a LID cabled to a switch", fabric.name);
                }
                Ok(ranks)
            }
        }
    }
}

/// The first port of `node` with a LID cabled to a switch.
pub fn endpoint_of(fabric: &Fabric, node: ibfabric::topology::NodeId) -> Option<PortRef> {
    fabric.neighbours(node).find_map(|(p, peer)| {
        let lid = fabric.node(node).ports[usize::from(p)].lid;
        (lid != 0 && fabric.node(peer.node).is_switch()).then_some(PortRef { node, port: p })
    })
}

/// Ranks from a host list (`host` or `host slots=N` per line).
fn ranks_from_file(
    fabric: &Fabric,
    names: Option<&NodeNameMap>,
    path: &std::path::Path,
) -> anyhow::Result<Vec<PortRef>> {
    let name = input::display_name(path);
    let text = input::read_text(path)?;
    let mut lines = Vec::new();
    for (line, entry) in hostfile::parse_hosts(&text) {
        let mut words = entry.split_whitespace();
        let host = words.next().unwrap_or(entry);
        let mut slots = 1usize;
        for word in words {
            match word.strip_prefix("slots=").map(str::parse::<usize>) {
                Some(Ok(n)) if n > 0 => slots = n,
                _ => bail!("{name}:{line}: expected `host` or `host slots=N`, found {entry:?}"),
            }
        }
        lines.extend(std::iter::repeat_n((line, host), slots));
    }
    if lines.is_empty() {
        bail!("{name}: no hosts");
    }
    let nodes = resolve_hosts(&NodeResolver::new(fabric, names), &lines, &name)?;
    lines
        .iter()
        .zip(nodes)
        .map(|(&(line, host), node)| {
            endpoint_of(fabric, node).with_context(|| {
                format!("{name}:{line}: host {host:?} has no port with a LID cabled to a switch")
            })
        })
        .collect()
}

/// The platform of `ranks` (one host per distinct port, in first-rank order) and each rank's
/// host index. With more than one copy ([`Layering`]), every port is that many hosts and every
/// rank that many ranks, copy k of rank r at k · ranks + r on copy k of its host, reached over
/// layer k.
pub fn platform_of(
    routing: &Routing,
    ranks: &[PortRef],
    model: &LinkModel,
    layering: &Layering,
) -> anyhow::Result<(Platform, Vec<usize>)> {
    let mut ports: Vec<PortRef> = Vec::new();
    let mut host_of = Vec::with_capacity(ranks.len());
    let mut index = std::collections::HashMap::new();
    for &r in ranks {
        let next = ports.len();
        let i = *index.entry(r).or_insert(next);
        if i == next {
            ports.push(r);
        }
        host_of.push(i);
    }
    let parallel;
    let policy = if layering.copies > 1 {
        let (n, copies) = (ports.len(), layering.copies);
        ports = (0..copies).flat_map(|_| ports.iter().copied()).collect();
        host_of = (0..copies)
            .flat_map(|k| host_of.iter().map(move |&h| k * n + h))
            .collect();
        parallel = LayerPolicy::Parallel { endpoints: n };
        &parallel
    } else {
        &layering.policy
    };
    let platform = Platform::build(
        &routing.fabric,
        &routing.lids,
        &routing.tables,
        &ports,
        model,
        policy,
    )
    .with_context(|| routing.fabric.name.clone())?;
    Ok((platform, host_of))
}

/// The comment lines at the top of the platform file.
pub fn notes(routing: &Routing, policy: &str, model: &LinkModel) -> Vec<String> {
    let rate = match model.bandwidth_gbps {
        Some(b) => format!("every link {b} Gb/s"),
        None => format!(
            "links at their IB data rate ({}x {} where the fabric gives none)",
            model.default_width.lanes(),
            model.default_speed
        ),
    };
    vec![
        format!("routing: {}; layer policy {policy}", routing.description),
        format!("{rate}, {} ns per link", model.latency_ns),
    ]
}

#[derive(Args)]
pub struct SimgridArgs {
    #[command(flatten)]
    platform: PlatformArgs,
    /// Write the platform XML to FILE.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Write the `smpirun -hostfile` (one SimGrid host per rank) to FILE.
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
}

pub fn run(args: SimgridArgs) -> anyhow::Result<ExitCode> {
    let model = args.platform.link_model()?;
    let routing = args.platform.route(args.platform.load_fabric()?)?;
    let ranks = args.platform.ranks(&routing.fabric)?;
    let arg = args
        .platform
        .layer_policy
        .clone()
        .unwrap_or(LayerPolicyArg::Fixed(0));
    // Without a message size, `ucx` is written for rendezvous messages (K hosts per endpoint);
    // copy 0 of every host is also the eager lane, layer 0.
    let layering = Layering::resolve(&arg, &routing, &ranks, None, Ucx::DEFAULT_RNDV_THRESH)?;
    let (platform, host_of) = platform_of(&routing, &ranks, &model, &layering)?;
    let notes = notes(&routing, &layering.name, &model);
    let mut files = vec![(
        args.out.clone(),
        simgrid::write_platform(&platform, &notes).into_bytes(),
    )];
    if let Some(path) = &args.hostfile {
        let hosts = host_of.iter().map(|&h| platform.hosts[h].id.as_str());
        files.push((path.clone(), simgrid::write_hostfile(hosts).into_bytes()));
    }
    output::write_all_atomically(&files)?;
    eprintln!(
        "{}: {} hosts, {} links, {} routes ({}; layer policy {})",
        routing.fabric.name,
        platform.hosts.len(),
        platform.links.len(),
        platform.route_count(),
        routing.description,
        layering.name
    );
    Ok(ExitCode::SUCCESS)
}

/// The platform policy for a message sent as `copies` parts, copy k over layer k: one part is
/// layer 0 alone, more are the parallel copies of every endpoint.
fn split_over(copies: usize) -> LayerPolicy {
    if copies == 1 {
        LayerPolicy::Fixed(0)
    } else {
        LayerPolicy::Parallel { endpoints: 0 }
    }
}
