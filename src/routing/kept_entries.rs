//! After a repair, the forwarding entries of routes that still work, kept.
//!
//! On hierarchical fabrics the tables spread every LID over the repaired layers' equal-cost
//! next hops ([`spread`](super::spread)), so a lost cable moves the spread of every LID its
//! destination switch owns, not only the routes that crossed it: on a 12 × 6 two-level fat tree
//! with 4 layers, one lost cable changed 502 entries, 356 of them on routes that still worked.
//! Every such entry is a switch write for nothing, and with staged transitions a route dropped
//! for the drain time. So each switch whose old route towards a LID — the previous tables
//! followed on the fabric as it is now — still delivers keeps its old entry.
//!
//! What that leaves is loop-free and as short as before: a switch that keeps its entry reaches
//! the destination through switches that all keep theirs (their old routes are the tail of its
//! working one), and a switch with a new entry follows new entries until it meets a kept one.
//! On the fabrics where the tables spread (every route minimal), a kept route is minimal on the
//! damaged fabric too: losses only lengthen distances, and it still exists. Whether the routes
//! stay inside the deadlock scheme's lanes is checked afterwards, like every repaired route.

use super::graph::{NONE, RoutingGraph};
use super::lft::{ForwardingTables, NO_PORT};
use super::lids::LidTable;
use super::walk::{DestWalk, Network};
use crate::topology::{Fabric, PortRef};

/// Sets, in `tables` (for `fabric`, whose switch i of `graph` was switch `old_of[i]` of
/// `previous_graph`), the old entry of `previous` wherever the route it starts still delivers
/// on `fabric`; returns how many entries that changed back. LIDs are the subnet's: the same
/// number names the same port before and after the losses.
pub fn keep_working_entries(
    fabric: &Fabric,
    lids: &LidTable,
    graph: &RoutingGraph,
    tables: &mut ForwardingTables,
    previous: &ForwardingTables,
    previous_graph: &RoutingGraph,
    old_of: &[Option<usize>],
) -> usize {
    // The previous tables on the switches as they are now.
    let mut old = ForwardingTables::for_lids(fabric, lids);
    old.fill_tables(|switch, table| {
        let i = graph.index_of[switch.index()];
        let Some(Some(o)) = (i != NONE).then(|| old_of.get(i as usize).copied().flatten()) else {
            return;
        };
        let row = previous.table(previous_graph.nodes[o]);
        let len = row.len().min(table.len());
        table[..len].copy_from_slice(&row[..len]);
    });
    let net = Network::new(fabric, lids);
    let mut walk = DestWalk::new(net.len());
    let mut kept = 0;
    for dest in net.every_dest(lids) {
        walk.walk(&net, &old, &dest, |_| NONE);
        for (s, &switch) in net.switches.iter().enumerate() {
            if !walk.reaches(s) {
                continue;
            }
            let Some(port) = old.port(switch, dest.lid) else {
                continue; // no old entry to keep
            };
            if port != NO_PORT && tables.port(switch, dest.lid) != Some(port) {
                tables.set(switch, dest.lid, port);
                kept += 1;
            }
        }
    }
    kept
}

/// For `lid`, whose kept entries in `tables` let some route leave the lanes: gives the switches
/// where a route with a fresh entry (as in `fresh`) enters one with a kept entry their fresh
/// entry too, until no fresh route joins a kept one — the detours the repair laid then run on
/// fresh entries to the end, and the switches no detour enters keep theirs. Returns how many
/// entries stay kept. Whether that is inside the lanes is for the caller to check.
pub fn free_the_junctions(
    fabric: &Fabric,
    tables: &mut ForwardingTables,
    fresh: &ForwardingTables,
    lid: u16,
) -> usize {
    let switches = fresh.switches();
    let kept = |tables: &ForwardingTables, s| tables.port(s, lid) != fresh.port(s, lid);
    loop {
        let mut joined = Vec::new();
        for &u in switches {
            if kept(tables, u) {
                continue;
            }
            let Some(port) = tables.port(u, lid).filter(|&p| p != 0) else {
                continue;
            };
            let Some(next) = fabric.peer(PortRef { node: u, port }) else {
                continue;
            };
            if fabric.node(next.node).is_switch() && kept(tables, next.node) {
                joined.push(next.node);
            }
        }
        if joined.is_empty() {
            return switches.iter().filter(|&&s| kept(tables, s)).count();
        }
        for v in joined {
            tables.set(v, lid, fresh.table(v)[usize::from(lid)]);
        }
    }
}
