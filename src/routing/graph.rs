//! The switch graph as routing sees it: dense switch indexes, one directed edge per ordered
//! pair of cabled switches (parallel cables are one edge with several ports), endpoint counts,
//! and all-pairs hop distances.
//!
//! Plain vectors indexed by switch and edge: the routing loops visit every switch pair of
//! fabrics with over a thousand switches, several times per layer.

use std::collections::VecDeque;

use crate::topology::{Fabric, NodeId, NodeKind, is_aggregation_node};

/// Marks "no edge" / "no switch" in index vectors.
pub const NONE: u32 = u32::MAX;
/// Marks an unreachable pair in the distance matrix.
pub const FAR: u8 = u8::MAX;

/// Directed switch graph with the data routing needs.
#[derive(Debug, Clone)]
pub struct RoutingGraph {
    /// Fabric node of each switch index.
    pub nodes: Vec<NodeId>,
    /// Switch index of each fabric node ([`NONE`] for non-switches).
    pub index_of: Vec<u32>,
    /// `offsets[s]..offsets[s + 1]` are the edge ids leaving switch s.
    offsets: Vec<u32>,
    /// Head switch of each edge.
    pub edge_to: Vec<u32>,
    /// Tail switch of each edge.
    pub edge_from: Vec<u32>,
    /// `port_offsets[e]..port_offsets[e + 1]` index `ports`: the local ports of edge e's cables.
    port_offsets: Vec<u32>,
    ports: Vec<u8>,
    /// Endpoint (CA and router) ports cabled to each switch.
    pub endpoints: Vec<u32>,
    /// Of those, the ports of hosts: every endpoint but a SHARP aggregation node, which sits
    /// inside every Quantum switch, spines included, and makes none of them a leaf.
    pub hosts: Vec<u32>,
    /// Hop distances, `dist[t * n + s]` from s to t ([`FAR`] if unreachable or > 254).
    dist: Vec<u8>,
}

impl RoutingGraph {
    /// The routing graph of `fabric` (loopback cables are ignored).
    pub fn new(fabric: &Fabric) -> Self {
        let nodes: Vec<NodeId> = fabric.switches().collect();
        let mut index_of = vec![NONE; fabric.nodes().len()];
        for (i, id) in nodes.iter().enumerate() {
            index_of[id.index()] = i as u32;
        }
        let n = nodes.len();
        let mut offsets = Vec::with_capacity(n + 1);
        let (mut edge_to, mut edge_from) = (Vec::new(), Vec::new());
        let (mut port_offsets, mut ports) = (vec![0u32], Vec::new());
        let mut endpoints = vec![0u32; n];
        let mut hosts = vec![0u32; n];
        let mut peers: Vec<(u32, u8)> = Vec::new();
        offsets.push(0);
        for (s, &id) in nodes.iter().enumerate() {
            peers.clear();
            for (port, peer) in fabric.neighbours(id) {
                let kind = fabric.node(peer.node).kind;
                match kind {
                    NodeKind::Switch if peer.node != id => {
                        peers.push((index_of[peer.node.index()], port))
                    }
                    NodeKind::Switch => {}
                    NodeKind::Ca | NodeKind::Router => {
                        endpoints[s] += 1;
                        if !is_aggregation_node(fabric.node(peer.node)) {
                            hosts[s] += 1;
                        }
                    }
                }
            }
            peers.sort_unstable();
            for group in peers.chunk_by(|a, b| a.0 == b.0) {
                edge_to.push(group[0].0);
                edge_from.push(s as u32);
                ports.extend(group.iter().map(|&(_, p)| p));
                port_offsets.push(ports.len() as u32);
            }
            offsets.push(edge_to.len() as u32);
        }
        let mut graph = Self {
            nodes,
            index_of,
            offsets,
            edge_to,
            edge_from,
            port_offsets,
            ports,
            endpoints,
            hosts,
            dist: Vec::new(),
        };
        graph.dist = graph.all_pairs_distances();
        graph
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no switches.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of directed edges.
    pub fn edge_count(&self) -> usize {
        self.edge_to.len()
    }

    /// Edge ids leaving switch s.
    pub fn edges(&self, s: usize) -> std::ops::Range<usize> {
        self.offsets[s] as usize..self.offsets[s + 1] as usize
    }

    /// The edge from s to t, if they are cabled.
    pub fn edge_between(&self, s: usize, t: usize) -> Option<usize> {
        let range = self.edges(s);
        let heads = &self.edge_to[range.clone()];
        heads
            .binary_search(&(t as u32))
            .ok()
            .map(|i| range.start + i)
    }

    /// The local ports of the cables of edge e.
    pub fn ports(&self, e: usize) -> &[u8] {
        &self.ports[self.port_offsets[e] as usize..self.port_offsets[e + 1] as usize]
    }

    /// Hop distance from s to t ([`FAR`] if unreachable).
    pub fn dist(&self, s: usize, t: usize) -> u8 {
        self.dist[t * self.len() + s]
    }

    /// Distances from every switch to t, indexed by switch.
    pub fn dist_to(&self, t: usize) -> &[u8] {
        &self.dist[t * self.len()..(t + 1) * self.len()]
    }

    /// The edges of s into switches one hop closer to t: the first hops of s's minimal
    /// routes to t.
    pub fn closer_edges(&self, s: usize, t: usize) -> impl Iterator<Item = usize> + '_ {
        let dist = self.dist_to(t);
        self.edges(s)
            .filter(move |&e| dist[self.edge_to[e] as usize] + 1 == dist[s])
    }

    fn all_pairs_distances(&self) -> Vec<u8> {
        let n = self.len();
        let mut dist = vec![FAR; n * n];
        let mut queue = VecDeque::with_capacity(n);
        for t in 0..n {
            let row = &mut dist[t * n..(t + 1) * n];
            row[t] = 0;
            queue.clear();
            queue.push_back(t);
            while let Some(v) = queue.pop_front() {
                let next = row[v].saturating_add(1);
                for e in self.edges(v) {
                    let w = self.edge_to[e] as usize;
                    if row[w] == FAR && next < FAR {
                        row[w] = next;
                        queue.push_back(w);
                    }
                }
            }
        }
        dist
    }
}
