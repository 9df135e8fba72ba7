//! The routes between the hosts of an allocation, read once from the forwarding tables so that
//! a placement search never walks a table again: a host × host matrix of inter-switch hops and,
//! for link contention, each route's directed switch-to-switch cables.
//!
//! The walk is [`crate::routing::walk`]'s: one walk per destination LID from every switch, so
//! the cost is O(hosts × switches) however many pairs there are. Routes are the
//! ones the tables really program — core routing or tables read back from a subnet manager —
//! to each destination port's base LID (the route MPI traffic takes without multipathing).

use crate::routing::walk::{Dest, DestWalk, NONE, Network};
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, PortRef};

/// Why the routes between the hosts cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoutesError {
    /// The port has no LID or is not cabled to a switch.
    #[error("{0} has no LID or is not cabled to a switch")]
    Unattached(String),
    /// The tables do not lead from one host to another.
    #[error("the forwarding tables do not lead from {from} to {to}")]
    Unrouted {
        /// Source port.
        from: String,
        /// Destination port.
        to: String,
    },
}

/// Routes between host slots (a slot is a host port; a host may fill several slots).
#[derive(Debug, Clone)]
pub struct HostRoutes {
    slots: usize,
    /// `hops[a * slots + b]`: inter-switch hops from slot a to slot b.
    hops: Vec<u16>,
    /// `path_start[a * slots + b]..path_start[a * slots + b + 1]` index `path_cables`.
    path_start: Vec<u32>,
    /// Directed switch-to-switch cables of every route (dense cable ids).
    path_cables: Vec<u32>,
    /// Number of directed switch-to-switch cables (the range of the cable ids).
    cables: usize,
}

impl HostRoutes {
    /// Reads the routes between `slots` from `tables`; with `paths`, also every route's cables
    /// (needed for contention; about hops × slots² × 4 bytes).
    ///
    /// # Errors
    /// A slot without a LID or switch, or a pair the tables do not route.
    pub fn from_tables(
        fabric: &Fabric,
        lids: &LidTable,
        tables: &ForwardingTables,
        slots: &[PortRef],
        paths: bool,
    ) -> Result<Self, RoutesError> {
        let net = Network::new(fabric, lids);
        let n = slots.len();
        let mut switch_of = Vec::with_capacity(n);
        for &slot in slots {
            let lid = fabric
                .node(slot.node)
                .ports
                .get(usize::from(slot.port))
                .map_or(0, |p| p.lid);
            let peer = fabric.peer(slot);
            let switch = peer.map_or(NONE, |peer| net.dense[peer.node.index()]);
            let delivery = peer.and_then(|peer| net.link_at(peer));
            let Some(link) = delivery.filter(|_| lid != 0 && switch != NONE) else {
                return Err(RoutesError::Unattached(fabric.port_name(slot)));
            };
            switch_of.push((switch as usize, link));
        }
        let mut hops = vec![0u16; n * n];
        let mut path_of: Vec<Vec<u32>> = if paths {
            vec![Vec::new(); n * n]
        } else {
            Vec::new()
        };
        let mut routes = DestWalk::new(net.len());
        // Slots sharing a port share the walk.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&b| slots[b]);
        let mut walked: Option<PortRef> = None;
        for &b in &order {
            let port = slots[b];
            if walked != Some(port) {
                let (switch, link) = switch_of[b];
                let dest = Dest {
                    lid: fabric.node(port.node).ports[usize::from(port.port)].lid,
                    port,
                    switch: switch as u32,
                    link,
                };
                routes.walk(&net, tables, &dest, |_| NONE);
                walked = Some(port);
            }
            for a in 0..n {
                if slots[a] == port {
                    continue;
                }
                let from = switch_of[a].0;
                if !routes.reaches(from) {
                    return Err(RoutesError::Unrouted {
                        from: fabric.port_name(slots[a]),
                        to: fabric.port_name(port),
                    });
                }
                hops[a * n + b] = u16::try_from(routes.hops(from)).unwrap_or(u16::MAX);
                if paths {
                    path_of[a * n + b] = routes.cables(&net, from).collect();
                }
            }
        }
        let mut path_start = Vec::with_capacity(if paths { n * n + 1 } else { 0 });
        let mut path_cables = Vec::new();
        if paths {
            path_start.push(0);
            for p in &path_of {
                path_cables.extend_from_slice(p);
                path_start.push(path_cables.len() as u32);
            }
        }
        Ok(Self {
            slots: n,
            hops,
            path_start,
            path_cables,
            cables: net.cables.len(),
        })
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.slots
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.slots == 0
    }

    /// Inter-switch hops from slot `a` to slot `b` (0 on the same switch).
    #[inline]
    pub fn hops(&self, a: u32, b: u32) -> u32 {
        u32::from(self.hops[a as usize * self.slots + b as usize])
    }

    /// Whether the routes' cables were read.
    pub fn has_paths(&self) -> bool {
        !self.path_start.is_empty()
    }

    /// The directed cables from slot `a` to slot `b` (dense ids below [`Self::cable_count`]).
    ///
    /// # Panics
    /// If the routes were read without paths.
    #[inline]
    pub fn path(&self, a: u32, b: u32) -> &[u32] {
        let i = a as usize * self.slots + b as usize;
        &self.path_cables[self.path_start[i] as usize..self.path_start[i + 1] as usize]
    }

    /// Number of directed switch-to-switch cables of the fabric.
    pub fn cable_count(&self) -> usize {
        self.cables
    }
}
