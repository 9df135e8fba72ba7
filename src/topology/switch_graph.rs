//! The switch-to-switch graph of a fabric in compressed adjacency form, with the structural
//! metrics the constructions promise (degree, diameter, girth, triangles).
//!
//! Switches are renumbered densely `0..n` in node order; parallel cables between two switches
//! are one edge with a multiplicity. Plain vectors rather than a general graph library: these
//! loops run over every switch pair of fabrics with thousands of switches.

use std::collections::VecDeque;

use super::{Fabric, NodeId};

/// Undirected simple graph of the switches, with cable multiplicities.
#[derive(Debug, Clone)]
pub struct SwitchGraph {
    /// Fabric node id of dense switch index i.
    nodes: Vec<NodeId>,
    /// offsets[i]..offsets[i+1] index `neighbours` and `cables` for switch i.
    offsets: Vec<usize>,
    /// Neighbour switch indices, ascending within each switch.
    neighbours: Vec<u32>,
    /// Number of cables to the corresponding neighbour.
    cables: Vec<u32>,
}

/// Marks an unreached switch in distance vectors.
pub const UNREACHABLE: u32 = u32::MAX;

impl SwitchGraph {
    /// The switch graph of `fabric` (host and router cables are left out; loopback cables too).
    pub fn new(fabric: &Fabric) -> Self {
        let mut dense = vec![u32::MAX; fabric.nodes().len()];
        let nodes: Vec<NodeId> = fabric.switches().collect();
        for (i, id) in nodes.iter().enumerate() {
            dense[id.index()] = i as u32;
        }
        let mut offsets = Vec::with_capacity(nodes.len() + 1);
        let (mut neighbours, mut cables) = (Vec::new(), Vec::new());
        offsets.push(0);
        let mut peers: Vec<u32> = Vec::new();
        for (i, &id) in nodes.iter().enumerate() {
            peers.clear();
            peers.extend(
                fabric
                    .neighbours(id)
                    .map(|(_, peer)| dense[peer.node.index()])
                    .filter(|&j| j != u32::MAX && j != i as u32),
            );
            peers.sort_unstable();
            for chunk in peers.chunk_by(|a, b| a == b) {
                neighbours.push(chunk[0]);
                cables.push(chunk.len() as u32);
            }
            offsets.push(neighbours.len());
        }
        Self {
            nodes,
            offsets,
            neighbours,
            cables,
        }
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no switches.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The fabric node of switch index i.
    pub fn node(&self, i: usize) -> NodeId {
        self.nodes[i]
    }

    /// Distinct neighbour switches of switch i, ascending.
    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.neighbours[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Cables to each of [`Self::neighbours`], in the same order.
    pub fn cables(&self, i: usize) -> &[u32] {
        &self.cables[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Number of cables from switch i to other switches.
    pub fn cable_degree(&self, i: usize) -> u32 {
        self.cables(i).iter().sum()
    }

    /// Number of distinct switch pairs joined by at least one cable.
    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// Number of switch-to-switch cables.
    pub fn cable_count(&self) -> usize {
        self.cables.iter().sum::<u32>() as usize / 2
    }

    /// Hop distances from switch `source` ([`UNREACHABLE`] for other components).
    pub fn distances_from(&self, source: usize) -> Vec<u32> {
        let mut dist = vec![UNREACHABLE; self.len()];
        let mut queue = VecDeque::from([source]);
        dist[source] = 0;
        while let Some(u) = queue.pop_front() {
            for &v in self.neighbours(u) {
                if dist[v as usize] == UNREACHABLE {
                    dist[v as usize] = dist[u] + 1;
                    queue.push_back(v as usize);
                }
            }
        }
        dist
    }

    /// The largest hop distance between two switches, or `None` if the graph is disconnected
    /// (or empty).
    ///
    /// # Complexity
    /// O(n·(n + m)): one breadth-first search per switch.
    pub fn diameter(&self) -> Option<u32> {
        (0..self.len())
            .map(|s| self.distances_from(s).into_iter().max())
            .try_fold(0, |acc, ecc| match ecc {
                Some(UNREACHABLE) | None => None,
                Some(e) => Some(acc.max(e)),
            })
    }

    /// Number of triangles (3-cycles) of the simple graph.
    pub fn triangles(&self) -> usize {
        let mut count = 0;
        for u in 0..self.len() {
            let nu = self.neighbours(u);
            for &v in nu.iter().filter(|&&v| v as usize > u) {
                // Common neighbours w > v, by merging the two sorted lists.
                let nv = self.neighbours(v as usize);
                let (mut i, mut j) = (0, 0);
                while i < nu.len() && j < nv.len() {
                    match nu[i].cmp(&nv[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            count += usize::from(nu[i] > v);
                            i += 1;
                            j += 1;
                        }
                    }
                }
            }
        }
        count
    }

    /// Length of the shortest cycle of the simple graph, `None` if it is a forest.
    ///
    /// # Complexity
    /// O(n·(n + m)).
    pub fn girth(&self) -> Option<u32> {
        let mut best = u32::MAX;
        let mut dist = vec![UNREACHABLE; self.len()];
        let mut parent = vec![u32::MAX; self.len()];
        for s in 0..self.len() {
            dist.fill(UNREACHABLE);
            dist[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                if 2 * dist[u] + 1 >= best {
                    break;
                }
                for &v in self.neighbours(u) {
                    let v = v as usize;
                    if dist[v] == UNREACHABLE {
                        dist[v] = dist[u] + 1;
                        parent[v] = u as u32;
                        queue.push_back(v);
                    } else if parent[u] != v as u32 {
                        best = best.min(dist[u] + dist[v] + 1);
                    }
                }
            }
        }
        (best != u32::MAX).then_some(best)
    }
}
