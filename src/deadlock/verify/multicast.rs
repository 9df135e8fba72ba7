//! The channel dependencies of multicast groups: a packet for an MLID that arrives at a switch
//! on port p is replicated to every other port of the switch's MFT entry, each copy on the
//! lane the switch's (p, out port) table gives the group's SL, so the channel it arrived on
//! depends on every channel it leaves on.
//!
//! Senders are the ports of the entries: the CA and router ports cabled to them (members
//! inject from their host port onto the cable into the switch) and the switches whose entry
//! holds port 0. A port that is not in any entry is taken not to send to the group: IB
//! senders join first (IPoIB joins as a send-only member before it sends to a group it is not
//! in), and a send-only member is in the entries like any other. From every sender the
//! replication is followed through the switches, with the lanes each hop picks, so a channel
//! is entered on exactly the VLs the tables give it. Hosts are sinks: a copy delivered to a
//! host makes no dependency.

use std::collections::{BTreeMap, HashMap};

use super::RouteSls;
use super::routes::{EVERY_SL, by_lane};
use crate::deadlock::network::Channels;
use crate::deadlock::sl2vl::{Sl2VlTables, SlVlRow, VL15};
use crate::routing::MulticastTables;
use crate::routing::walk::NONE;
use crate::topology::PortRef;

/// The multicast groups to check together with the unicast routes.
#[derive(Debug, Clone, Copy)]
pub struct Multicast<'m> {
    /// The switches' multicast forwarding tables.
    pub tables: &'m MulticastTables,
    /// The SL of each group (its MCMemberRecord SL); groups not listed use `default_sl`.
    pub sls: &'m BTreeMap<u16, u8>,
    /// The SL of groups `sls` does not list.
    pub default_sl: u8,
}

impl Multicast<'_> {
    /// The SLs (a bit set) group `mlid` carries.
    fn group_sls(&self, mlid: u16, sls: RouteSls) -> u16 {
        match sls {
            RouteSls::PathSl => 1 << (self.sls.get(&mlid).copied().unwrap_or(self.default_sl) & 15),
            RouteSls::EverySl => EVERY_SL,
        }
    }
}

/// What following one group's replication finds, hop by hop.
pub(super) enum Hop {
    /// Channel (link `a`, VL index `x`) into a switch depends on (link `b`, VL index `y`) out.
    Dependency { a: u32, x: usize, b: u32, y: usize },
    /// A copy leaves a switch's port 0 sender on (link `b`, VL index `y`): used, no
    /// dependency.
    Start { b: u32, y: usize },
    /// A copy is mapped to VL 15 and dropped: a sentence.
    Dropped(String),
}

/// A point of the replication still to follow: the channel the copy holds (none for a
/// switch's own port 0), the switch it is in, the port it arrived on and its SLs.
struct Copy {
    held: Option<(u32, usize)>,
    v: u32,
    in_port: u8,
    sls: u16,
}

/// Follows group `mlid` from every sender through the tables and reports each hop to `hop`.
/// `index` gives each VL its dense index. Each hop takes the lanes of every table of `sl2vl`
/// given: one, or during a change the new and the old ones.
pub(super) fn replicate(
    net: &Channels<'_>,
    sl2vl: [Option<&Sl2VlTables>; 2],
    index: &[u8; 16],
    multicast: &Multicast<'_>,
    route_sls: RouteSls,
    mlid: u16,
    mut hop: impl FnMut(Hop),
) {
    let fabric = net.fabric;
    let sls = multicast.group_sls(mlid, route_sls);
    let dense = |vl: u8| (vl != VL15).then(|| usize::from(index[usize::from(vl & 15)]));
    let mut pending: Vec<Copy> = Vec::new();
    for (s, ports) in multicast.tables.group(mlid) {
        let v = net.dense[s.index()];
        if v == NONE {
            continue;
        }
        for q in ports.iter() {
            if q == 0 {
                pending.push(Copy {
                    held: None,
                    v,
                    in_port: 0,
                    sls,
                });
                continue;
            }
            let here = PortRef { node: s, port: q };
            let Some(host) = fabric
                .peer(here)
                .filter(|p| !fabric.node(p.node).is_switch())
            else {
                continue;
            };
            let Some(up) = net.link_at(host) else {
                continue;
            };
            for (vl, group) in lanes(sl2vl, sls, |t| t.port_row(host)) {
                match dense(vl) {
                    Some(h) => pending.push(Copy {
                        held: Some((up, h)),
                        v,
                        in_port: q,
                        sls: group,
                    }),
                    None => hop(Hop::Dropped(format!(
                        "MLID 0x{mlid:04x}: SLs {group:#06x} leaving {}",
                        fabric.port_name(host)
                    ))),
                }
            }
        }
    }
    // SLs already followed per held channel, and per switch for its own port 0.
    let mut seen: HashMap<(u32, usize), u16> = HashMap::new();
    let mut started: HashMap<u32, u16> = HashMap::new();
    while let Some(c) = pending.pop() {
        let followed = match c.held {
            Some(key) => seen.entry(key).or_default(),
            None => started.entry(c.v).or_default(),
        };
        let sls = c.sls & !*followed;
        if sls == 0 {
            continue;
        }
        *followed |= sls;
        let node = net.switches[c.v as usize];
        let Some(entry) = multicast.tables.ports(node, mlid) else {
            continue; // no entry: the switch drops the copy (the delivery check names it)
        };
        for q in entry.iter().filter(|&q| q != c.in_port && q != 0) {
            let Some(b) = net.link_at(PortRef { node, port: q }) else {
                continue;
            };
            for (vl, group) in lanes(sl2vl, sls, |t| t.switch_row(node, c.in_port, q)) {
                let Some(y) = dense(vl) else {
                    hop(Hop::Dropped(format!(
                        "MLID 0x{mlid:04x}: SLs {group:#06x} at {} from port {} to port {q}",
                        net.switch_name(c.v as usize),
                        c.in_port
                    )));
                    continue;
                };
                match c.held {
                    Some((a, x)) => hop(Hop::Dependency { a, x, b, y }),
                    None => hop(Hop::Start { b, y }),
                }
                let to = net.links[b as usize];
                if to.to_switch != NONE {
                    pending.push(Copy {
                        held: Some((b, y)),
                        v: to.to_switch,
                        in_port: to.to.port,
                        sls: group,
                    });
                }
            }
        }
    }
}

/// The SLs of `sls` grouped by lane under each of `tables`' row `row` gives (the old row only
/// where it differs from the new one).
fn lanes<'t>(
    tables: [Option<&'t Sl2VlTables>; 2],
    sls: u16,
    row: impl Fn(&'t Sl2VlTables) -> &'t SlVlRow,
) -> impl Iterator<Item = (u8, u16)> {
    let [new, old] = tables.map(|t| t.map(&row));
    let old = old.filter(|o| Some(*o) != new);
    [new, old]
        .into_iter()
        .flatten()
        .flat_map(move |r| by_lane(r, sls))
}
