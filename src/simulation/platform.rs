//! The platform: hosts, links and the programmed route of every host pair.

use std::collections::HashMap;

use crate::routing::walk::{BrokenKind, DestWalk, NONE, Network};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, LinkSpeed, LinkWidth, PortRef};

/// Nominal data rate of one lane in Gb/s (the signalling rate less the line encoding: 8b/10b
/// up to QDR, 64b/66b from FDR10 on; HDR and later as their nominal rates) — what a 4x cable
/// is sold as divided by four.
pub fn data_gbps_per_lane(speed: LinkSpeed) -> f64 {
    match speed {
        LinkSpeed::Sdr => 2.0,
        LinkSpeed::Ddr => 4.0,
        LinkSpeed::Qdr => 8.0,
        LinkSpeed::Fdr10 => 10.0,
        LinkSpeed::Fdr => 14.0625 * 64.0 / 66.0,
        LinkSpeed::Edr => 25.0,
        LinkSpeed::Hdr => 50.0,
        LinkSpeed::Ndr => 100.0,
        LinkSpeed::Xdr => 200.0,
    }
}

/// Bandwidth and latency of the links.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkModel {
    /// Width of a cable whose width the fabric does not know (generated fabrics).
    pub default_width: LinkWidth,
    /// Speed of a cable whose speed the fabric does not know.
    pub default_speed: LinkSpeed,
    /// Bandwidth of every link in Gb/s, whatever its rate (overrides the rates).
    pub bandwidth_gbps: Option<f64>,
    /// Latency of every link in nanoseconds: one switch traversal and a few metres of cable
    /// (a route over h inter-switch cables has h + 2 links).
    pub latency_ns: f64,
}

impl LinkModel {
    /// 4x EDR (100 Gb/s) where the fabric gives no rate; 100 ns per link (an EDR/HDR switch
    /// forwards in about 90 ns, 2 m of cable add 10 ns).
    pub const DEFAULT: Self = Self {
        default_width: LinkWidth::X4,
        default_speed: LinkSpeed::Edr,
        bandwidth_gbps: None,
        latency_ns: 100.0,
    };

    /// Bandwidth in Gb/s of a cable of the given width and speed.
    pub fn bandwidth(&self, width: Option<LinkWidth>, speed: Option<LinkSpeed>) -> f64 {
        self.bandwidth_gbps.unwrap_or_else(|| {
            let width = width.unwrap_or(self.default_width);
            let speed = speed.unwrap_or(self.default_speed);
            f64::from(width.lanes()) * data_gbps_per_lane(speed)
        })
    }
}

impl Default for LinkModel {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Which layer (LID offset from the destination's base LID) a host pair's traffic takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerPolicy {
    /// Every pair on layer K.
    Fixed(u16),
    /// Pair (i, j) of hosts i and j (platform order) on layer (i + j) mod L, L the
    /// destination's LIDs (2^LMC). A synthetic spreading of pairs over the layers, not what an
    /// MPI stack does: UCX, Open MPI's openib BTL and MVAPICH2 send small messages on one
    /// layer and split large ones over several, the same for every pair (see [`super::Ucx`]).
    RoundRobin,
    /// The layer of every ordered pair, `layers[i * hosts + j]` (a schedule's LID offsets).
    PerPair(Vec<u16>),
    /// Layers 0..K as parallel flows: the platform's hosts are K copies of the job's
    /// `endpoints` endpoints (host k · endpoints + e is copy k of endpoint e, on the same
    /// port), and a pair takes the layer of the destination's copy. SimGrid's `Full` zone
    /// holds one route per host pair, so a pair of endpoints gets one route per layer only
    /// through copies; a benchmark that splits each message into one part per copy (rank
    /// k · n + r sends to rank k · n + d) then spreads every pair's traffic evenly over the
    /// first K layers, as UCX splits a rendezvous message over its first K lanes
    /// ([`super::Ucx`]); K = all layers stripes over every LID.
    Parallel {
        /// Distinct endpoints of the job (hosts per copy).
        endpoints: usize,
    },
}

impl LayerPolicy {
    /// The layer of pair (i, j) among `hosts` hosts when the destination has `lids` LIDs.
    fn layer(&self, i: usize, j: usize, hosts: usize, lids: u16) -> u16 {
        match self {
            Self::Fixed(k) => *k,
            Self::RoundRobin => ((i + j) % usize::from(lids.max(1))) as u16,
            Self::PerPair(layers) => layers.get(i * hosts + j).copied().unwrap_or(0),
            Self::Parallel { endpoints } => (j / (*endpoints).max(1)) as u16,
        }
    }
}

/// Why a platform cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// The port is not an endpoint (a CA or router port with a LID, cabled to a switch).
    #[error("{0} is not an endpoint: no LID, or not cabled to a switch")]
    NotAnEndpoint(String),
    /// The pair's layer is beyond the destination's LIDs.
    #[error("{to} has {lids} LID(s) (layers 0..{lids}); no layer {layer} (from {from})")]
    NoSuchLayer {
        /// Source port.
        from: String,
        /// Destination port.
        to: String,
        /// The layer asked for.
        layer: u16,
        /// The destination's LIDs.
        lids: u16,
    },
    /// A per-pair layer list of the wrong length.
    #[error("{given} per-pair layers for {hosts} hosts (expected {expected})")]
    PairLayers {
        /// Layers given.
        given: usize,
        /// Hosts.
        hosts: usize,
        /// hosts².
        expected: usize,
    },
    /// The tables do not lead from one endpoint to the other.
    #[error("the forwarding tables do not lead from {from} to {to} (LID {lid}): {kind}")]
    Unrouted {
        /// Source port.
        from: String,
        /// Destination port.
        to: String,
        /// The destination LID.
        lid: u16,
        /// How the walk fails.
        kind: BrokenKind,
    },
}

/// A simulated host: one endpoint port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHost {
    /// SimGrid host id (the node name, `name/p<port>` for a second port of a node; white space
    /// replaced by `_`).
    pub id: String,
    /// The endpoint.
    pub port: PortRef,
}

/// A simulated link: one direction of a cable.
#[derive(Debug, Clone, PartialEq)]
pub struct SimLink {
    /// SimGrid link id: the sending port, `node[port]`.
    pub id: String,
    /// Where the direction leaves.
    pub from: PortRef,
    /// Where it arrives.
    pub to: PortRef,
    /// Bandwidth in Gb/s.
    pub bandwidth_gbps: f64,
    /// Latency in nanoseconds.
    pub latency_ns: f64,
}

/// The SimGrid platform of a job on a routed fabric (see the module documentation).
#[derive(Debug, Clone)]
pub struct Platform {
    /// The fabric's name.
    pub fabric: String,
    /// The hosts, in the order given.
    pub hosts: Vec<SimHost>,
    /// The links the routes use.
    pub links: Vec<SimLink>,
    /// `route_start[i * n + j]..route_start[i * n + j + 1]` index `route_links`.
    route_start: Vec<u32>,
    route_links: Vec<u32>,
    /// The layer of every ordered pair.
    layers: Vec<u16>,
}

impl Platform {
    /// The platform of `ports` (the job's endpoints, distinct) on `fabric` routed by `tables`.
    /// Time O(layers used × hosts × switches) for the walks, plus the routes' length.
    ///
    /// # Errors
    /// A port that is not an endpoint, a layer the destination lacks, or a pair the tables do
    /// not route.
    pub fn build(
        fabric: &Fabric,
        lids: &LidTable,
        tables: &ForwardingTables,
        ports: &[PortRef],
        model: &LinkModel,
        policy: &LayerPolicy,
    ) -> Result<Self, PlatformError> {
        let net = Network::new(fabric, lids);
        let n = ports.len();
        if let LayerPolicy::PerPair(layers) = policy
            && layers.len() != n * n
        {
            return Err(PlatformError::PairLayers {
                given: layers.len(),
                hosts: n,
                expected: n * n,
            });
        }
        let by_port: HashMap<PortRef, usize> = net
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, e)| (e.port, i))
            .collect();
        let endpoints = ports
            .iter()
            .map(|p| {
                by_port
                    .get(p)
                    .map(|&i| net.endpoints[i])
                    .ok_or_else(|| PlatformError::NotAnEndpoint(fabric.port_name(*p)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let hosts = host_ids(fabric, ports);

        let mut layers = vec![0u16; n * n];
        for i in 0..n {
            for (j, dest) in endpoints.iter().enumerate() {
                let layer = policy.layer(i, j, n, dest.lids);
                if i != j && layer >= dest.lids {
                    return Err(PlatformError::NoSuchLayer {
                        from: fabric.port_name(ports[i]),
                        to: fabric.port_name(ports[j]),
                        layer,
                        lids: dest.lids,
                    });
                }
                layers[i * n + j] = layer;
            }
        }

        let mut paths: Vec<Vec<u32>> = vec![Vec::new(); n * n];
        let mut walk = DestWalk::new(net.len());
        let mut kinds = Vec::new();
        for (j, dest) in endpoints.iter().enumerate() {
            let mut wanted: Vec<u16> = (0..n)
                .filter(|&i| i != j)
                .map(|i| layers[i * n + j])
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            for layer in wanted {
                let target = net.endpoint_dest(dest, layer);
                kinds.clear();
                walk.walk(&net, tables, &target, |broken| {
                    kinds.push(broken.kind);
                    (kinds.len() - 1) as u32
                });
                for (i, source) in endpoints.iter().enumerate() {
                    if i == j || layers[i * n + j] != layer {
                        continue;
                    }
                    let s = source.switch as usize;
                    if !walk.reaches(s) {
                        let kind = kinds
                            .get(walk.failure(s) as usize)
                            .copied()
                            .unwrap_or(BrokenKind::NoEntry);
                        return Err(PlatformError::Unrouted {
                            from: fabric.port_name(ports[i]),
                            to: fabric.port_name(ports[j]),
                            lid: target.lid,
                            kind,
                        });
                    }
                    let path = &mut paths[i * n + j];
                    path.push(source.up);
                    path.extend(walk.path(&net, s));
                }
            }
        }

        // The links the routes use, numbered in the network's link order.
        let mut used = vec![NONE; net.links.len()];
        for path in &paths {
            for &l in path {
                used[l as usize] = 0;
            }
        }
        let mut links = Vec::new();
        for (l, mark) in used.iter_mut().enumerate() {
            if *mark == NONE {
                continue;
            }
            *mark = links.len() as u32;
            let link = net.links[l];
            let cable = fabric.node(link.from.node).ports[usize::from(link.from.port)]
                .link
                .map(|id| fabric.link(id));
            links.push(SimLink {
                id: fabric.port_name(link.from),
                from: link.from,
                to: link.to,
                bandwidth_gbps: model
                    .bandwidth(cable.and_then(|c| c.width), cable.and_then(|c| c.speed)),
                latency_ns: model.latency_ns,
            });
        }
        let mut route_start = Vec::with_capacity(n * n + 1);
        let mut route_links = Vec::new();
        route_start.push(0);
        for path in &paths {
            route_links.extend(path.iter().map(|&l| used[l as usize]));
            route_start.push(route_links.len() as u32);
        }
        Ok(Self {
            fabric: fabric.name.clone(),
            hosts: hosts
                .into_iter()
                .zip(ports)
                .map(|(id, &port)| SimHost { id, port })
                .collect(),
            links,
            route_start,
            route_links,
            layers,
        })
    }

    /// The links (indices into [`Self::links`]) from host `i` to host `j`, in order; empty for
    /// i = j (SimGrid's loopback).
    pub fn route(&self, i: usize, j: usize) -> &[u32] {
        let k = i * self.hosts.len() + j;
        &self.route_links[self.route_start[k] as usize..self.route_start[k + 1] as usize]
    }

    /// The layer host `i`'s traffic to host `j` takes.
    pub fn layer(&self, i: usize, j: usize) -> u16 {
        self.layers[i * self.hosts.len() + j]
    }

    /// Number of routes (ordered pairs of distinct hosts).
    pub fn route_count(&self) -> usize {
        let n = self.hosts.len();
        n * n.saturating_sub(1)
    }
}

/// SimGrid host ids for `ports`: the node name (white space replaced), `/p<port>` added for a
/// node's second and further ports, and `~<k>` where ids still collide.
fn host_ids(fabric: &Fabric, ports: &[PortRef]) -> Vec<String> {
    let mut ports_of_node: HashMap<u32, usize> = HashMap::new();
    for p in ports {
        *ports_of_node.entry(p.node.0).or_default() += 1;
    }
    let mut taken: HashMap<String, usize> = HashMap::new();
    ports
        .iter()
        .map(|p| {
            let name: String = fabric
                .node(p.node)
                .name
                .chars()
                .map(|c| if c.is_whitespace() { '_' } else { c })
                .collect();
            let base = if ports_of_node[&p.node.0] > 1 {
                format!("{name}/p{}", p.port)
            } else {
                name
            };
            let seen = taken.entry(base.clone()).or_default();
            *seen += 1;
            if *seen == 1 {
                base
            } else {
                format!("{base}~{seen}")
            }
        })
        .collect()
}
