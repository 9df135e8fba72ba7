//! The colouring scheme of the Slim Fly paper (§5.2; the reference implementation's
//! `osm_ucast_lnmp.c`), for routings whose paths have at most 3 inter-switch hops.
//!
//! The V data VLs are split into three buckets by hop position (V = 8: VL 0–2 | 3–5 | 6–7).
//! The switches get a proper colouring, each colour an SL. A route's SL is the colour of its
//! second switch (of its first switch for a route that stays on one switch). A switch then
//! knows from a packet alone which inter-switch hop it is about to take:
//!
//! * it came from a host port (or from the switch itself): the first hop → bucket 0;
//! * its SL is the switch's own colour: the second hop → bucket 1;
//! * otherwise: the third hop → bucket 2 (the third switch is adjacent to the second, so a
//!   proper colouring gives it another colour).
//!
//! Delivery to a host (or to the switch itself) may use any VL: the host link has no channel
//! after it. Every dependency between inter-switch channels thus goes from a lower bucket to a
//! higher one, and the CDG is acyclic — for every routing with paths of at most 3 hops, on any
//! topology, with one colouring. The catch is the number of colours, which must not exceed the
//! SLs given to colours; [`super::colour_graph`] finds few enough for every Slim Fly up to
//! q = 27 (the reference implementation's greedy colouring allows 13 and fails from q ≈ 23).
//!
//! SLs that are not colours (default SL 0 and SL 15) map like the third hop after the first: a
//! route of at most 2 hops with such an SL stays deadlock-free; longer ones are not covered.

use std::ops::Range;

use super::DeadlockError;
use super::colour_graph::{Colouring, ColouringEffort, colour};
use super::network::{BrokenRoutes, Channels, Traffic, chunks, threads};
use super::path_sl::SwitchSls;
use super::sl2vl::{SLS, Sl2VlTables, SlVlRow, SwitchSl2Vl};
use crate::routing::walk::{DestWalk, NONE};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, NodeId, PortRef, SwitchGraph};

/// Longest path (inter-switch hops) the scheme covers.
pub const MAX_HOPS: u8 = 3;

/// Parameters of the scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColouringConfig {
    /// Data VLs available (3..=15).
    pub vls: u8,
    /// The SLs that stand for colours, in colour order (default SL 1..=14: SL 0, the default
    /// SL of traffic that does not ask the SA, and SL 15 stay out).
    pub colour_sls: Vec<u8>,
    /// How hard to look for few colours.
    pub effort: ColouringEffort,
}

impl Default for ColouringConfig {
    fn default() -> Self {
        Self {
            vls: 8,
            colour_sls: (1..=14).collect(),
            effort: ColouringEffort::default(),
        }
    }
}

/// The three VL buckets for `vls` data VLs (sizes ⌈V/3⌉-ish as the reference implementation:
/// V = 8 → 0..3, 3..6, 6..8).
pub fn buckets(vls: u8) -> [Range<u8>; 3] {
    let (third, rest) = (vls / 3, vls % 3);
    let sizes = [
        third + u8::from(rest > 0),
        third + u8::from(rest > 1),
        third,
    ];
    let b0 = 0..sizes[0];
    let b1 = b0.end..b0.end + sizes[1];
    let b2 = b1.end..b1.end + sizes[2];
    [b0, b1, b2]
}

/// The scheme for one routing: colours, path SLs and what the SL-to-VL tables need.
#[derive(Debug, Clone)]
pub struct ColouringScheme {
    /// The colouring of the switches (dense order of `fabric.switches()`).
    pub colouring: Colouring,
    /// SL of each colour.
    pub colour_sls: Vec<u8>,
    /// Data VLs.
    pub vls: u8,
    /// The longest route, in inter-switch hops.
    pub max_hops: u8,
    /// The path SLs.
    pub path_sls: SwitchSls,
    /// Walks through the tables that fail (their routes keep the default SL).
    pub broken: BrokenRoutes,
    /// Fabric node of each dense switch.
    switches: Vec<NodeId>,
}

/// Colours the switches of `fabric` and gives every route of `tables` its SL.
///
/// # Errors
/// [`DeadlockError::BadVls`] for fewer than 3 or more than 15 VLs (or bad colour SLs),
/// [`DeadlockError::TooManyColours`] when the colouring needs more colours than
/// `config.colour_sls`, [`DeadlockError::PathTooLong`] when a route has more than 3
/// inter-switch hops.
pub fn colouring_scheme(
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
    config: &ColouringConfig,
) -> Result<ColouringScheme, DeadlockError> {
    if !(3..=15).contains(&config.vls) {
        return Err(DeadlockError::BadVls {
            vls: config.vls,
            needed: "3..=15 (three buckets)",
        });
    }
    let mut sorted = config.colour_sls.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != config.colour_sls.len() || sorted.iter().any(|&s| usize::from(s) >= SLS) {
        return Err(DeadlockError::BadVls {
            vls: config.vls,
            needed: "distinct colour SLs in 0..=15",
        });
    }
    let graph = SwitchGraph::new(fabric);
    let effort = ColouringEffort {
        target: config.effort.target.max(1),
        ..config.effort
    };
    let colouring = colour(&graph, &effort);
    log::info!(
        "colouring: {} switches, {} colours",
        graph.len(),
        colouring.count
    );
    if colouring.count > config.colour_sls.len() {
        return Err(DeadlockError::TooManyColours {
            needed: colouring.count,
            available: config.colour_sls.len(),
        });
    }
    let net = Channels::new(fabric, lids, Traffic { switch_lids: true });
    let n = net.len();
    let mut path_sls = SwitchSls::new(fabric, lids, config.colour_sls[0]);
    // Destinations in contiguous chunks, one thread each; each writes its own rows.
    let parts = chunks(net.dests.len(), threads());
    let starts: Vec<u16> = parts.iter().map(|r| net.dests[r.start].lid).collect();
    let regions = path_sls.regions(&starts);
    let results: Vec<PathScan> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .zip(regions)
            .zip(&starts)
            .map(|((range, region), &first)| {
                let (net, colouring) = (&net, &colouring);
                let first = if range.start == 0 {
                    0
                } else {
                    usize::from(first)
                };
                scope.spawn(move || {
                    let mut scan = PathScan::default();
                    let mut tree = DestWalk::new(n);
                    for dest in &net.dests[range.clone()] {
                        tree.walk(net, tables, dest, |b| {
                            scan.broken.record(net, b, 5);
                            NONE
                        });
                        let at = (usize::from(dest.lid) - first) * n;
                        for (s, sl) in region[at..at + n].iter_mut().enumerate() {
                            if !tree.reaches(s) {
                                continue;
                            }
                            // Paths longer than 254 hops count as 254 (too long anyway).
                            let hops = tree.hops(s).min(254) as u8;
                            scan.max_hops = scan.max_hops.max(hops);
                            if hops > MAX_HOPS {
                                scan.too_long += 1;
                                scan.example.get_or_insert((s, dest.lid, hops));
                                continue;
                            }
                            let second = match tree.next(s) {
                                l if l != NONE && net.links[l as usize].to_switch != NONE => {
                                    net.links[l as usize].to_switch as usize
                                }
                                _ => s,
                            };
                            *sl = config.colour_sls[usize::from(colouring.colours[second])];
                        }
                    }
                    scan
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a path SL thread panicked"))
            .collect()
    });
    let mut broken = BrokenRoutes::default();
    let (mut max_hops, mut too_long, mut example) = (0u8, 0usize, None);
    for scan in results {
        broken.merge(scan.broken, 5);
        max_hops = max_hops.max(scan.max_hops);
        too_long += scan.too_long;
        example = example.or(scan.example);
    }
    if let Some((s, lid, hops)) = example {
        return Err(DeadlockError::PathTooLong {
            routes: too_long,
            longest: max_hops,
            example: format!("{} reaches LID {lid} in {hops} hops", net.switch_name(s)),
        });
    }
    Ok(ColouringScheme {
        colouring,
        colour_sls: config.colour_sls.clone(),
        vls: config.vls,
        max_hops,
        path_sls,
        broken,
        switches: net.switches.clone(),
    })
}

/// What one thread found while giving routes their SLs.
#[derive(Default)]
struct PathScan {
    broken: BrokenRoutes,
    max_hops: u8,
    too_long: usize,
    example: Option<(usize, u16, u8)>,
}

/// What kind of neighbour a port has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortKind {
    /// Port 0, or a cable to a CA or router: where traffic enters and leaves the switches.
    Edge,
    /// A cable to a switch.
    Switch,
    /// No cable.
    None,
}

impl ColouringScheme {
    /// The colour of a switch, if it is one of the fabric's switches.
    pub fn colour_of(&self, switch: NodeId) -> Option<u8> {
        let i = self.switches.iter().position(|&s| s == switch)?;
        Some(self.colouring.colours[i])
    }

    /// The SL-to-VL tables of the scheme for every switch and CA/router port of `fabric`.
    ///
    /// # Complexity
    /// One pass over the (in port, out port) pairs of every switch; rows are shared.
    pub fn sl2vl(&self, fabric: &Fabric) -> Sl2VlTables {
        let v = self.vls;
        let [b0, b1, b2] = buckets(v);
        let (n0, n1, n2) = (b0.len(), b1.len(), b2.len());
        let delivery =
            |i: usize| -> SlVlRow { std::array::from_fn(|sl| ((sl + i) % usize::from(v)) as u8) };
        let mut tables = Sl2VlTables::new(
            fabric,
            std::array::from_fn(|sl| (sl % usize::from(v)) as u8),
        );
        let mut kinds: Vec<PortKind> = Vec::new();
        for (s, &node_id) in self.switches.iter().enumerate() {
            let node = fabric.node(node_id);
            let own = self.colour_sls[usize::from(self.colouring.colours[s])];
            let ports = node.num_ports();
            kinds.clear();
            kinds.push(PortKind::Edge);
            for p in 1..=ports {
                kinds.push(
                    match fabric.peer(PortRef {
                        node: node_id,
                        port: p,
                    }) {
                        None => PortKind::None,
                        Some(peer)
                            if fabric.node(peer.node).is_switch() && peer.node != node_id =>
                        {
                            PortKind::Switch
                        }
                        Some(peer) if peer.node == node_id => PortKind::None,
                        Some(_) => PortKind::Edge,
                    },
                );
            }
            let mut t = SwitchSl2Vl::new(ports);
            // Row ids by key, created on first use.
            let transit_keys = n1 * n2;
            let mut ids = vec![u16::MAX; usize::from(v) + n0 + transit_keys];
            let mut id = |t: &mut SwitchSl2Vl, key: usize, make: &dyn Fn() -> SlVlRow| {
                if ids[key] == u16::MAX {
                    ids[key] = t.add_row(make());
                }
                ids[key]
            };
            for i in 0..=usize::from(ports) {
                if kinds[i] == PortKind::None {
                    continue;
                }
                for o in 0..=usize::from(ports) {
                    let row = match (kinds[i], kinds[o]) {
                        (_, PortKind::None) => continue,
                        (_, PortKind::Edge) => {
                            let k = i % usize::from(v);
                            id(&mut t, k, &|| delivery(k))
                        }
                        (PortKind::Edge, PortKind::Switch) => {
                            let k = (i + o) % n0;
                            let vl = b0.start + k as u8;
                            id(&mut t, usize::from(v) + k, &|| [vl; SLS])
                        }
                        _ => {
                            let k = (i + o) % transit_keys;
                            let (second, third) =
                                (b1.start + (k % n1) as u8, b2.start + (k % n2) as u8);
                            id(&mut t, usize::from(v) + n0 + k, &|| {
                                std::array::from_fn(
                                    |sl| if sl as u8 == own { second } else { third },
                                )
                            })
                        }
                    };
                    t.set_id(i as u8, o as u8, row);
                }
            }
            tables.set_switch(node_id, t);
        }
        for (i, node) in fabric.nodes().iter().enumerate() {
            if node.is_switch() {
                continue;
            }
            let id = NodeId(i as u32);
            for (p, _) in fabric.neighbours(id) {
                tables.set_port(PortRef { node: id, port: p }, delivery(0));
            }
        }
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_reference_sizes() {
        assert_eq!(buckets(8), [0..3, 3..6, 6..8]);
        assert_eq!(buckets(3), [0..1, 1..2, 2..3]);
        assert_eq!(buckets(4), [0..2, 2..3, 3..4]);
        assert_eq!(buckets(15), [0..5, 5..10, 10..15]);
    }
}
