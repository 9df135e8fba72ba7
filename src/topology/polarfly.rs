//! PolarFly (Lakhotia et al., SC22): the Erdős–Rényi polarity graph ER_q of the projective plane
//! PG(2, q), for every prime power q; diameter 2 with radix close to the Moore bound.
//!
//! The routers are the q² + q + 1 points of PG(2, q), written as left-normalised nonzero vectors
//! of GF(q)³ (the first nonzero coordinate is 1). Routers u ≠ v are joined iff u·v = 0 (the dot
//! product in GF(q)). The q + 1 *absolute* points (u·u = 0, the "quadrics") would be joined to
//! themselves; that self loop is dropped, so they have q neighbours while all other routers have
//! q + 1. There are q(q + 1)²/2 router–router cables, every router pair is at most 2 hops apart
//! (the common neighbour of u and v is u × v), the absolute points are an independent set and the
//! graph has (q + 1)q(q − 1)/6 triangles.
//!
//! Every router serves p hosts, by default p = ⌊(q + 1)/2⌋ (as the IntelLabs/PolarFly
//! generator does); routers need q + 1 + p ports.
//!
//! # Names, node order, racks and ports
//! * Vertex order: the left-normalised vectors in lexicographic order of their coordinate
//!   encodings, [0,0,1], [0,1,0], …, [0,1,q−1], [1,0,0], …, [1,q−1,q−1]; vector [0,0,1] has
//!   index 0, [0,1,z] index 1 + z and [1,y,z] index 1 + q + y·q + z. Router nodes follow this
//!   order (node id = vertex index), hosts follow the routers, by router, then k.
//! * Router [x,y,z] is named `pf<x>-<y>-<z>` (coordinates as field-element encodings), host k
//!   of it `pf<x>-<y>-<z>-h<k>`.
//! * Racks (the default): consecutive blocks in vertex order. Rack 0 holds the q + 1 routers
//!   [0,0,1] and [0,1,z]; rack 1 + y holds the q routers [1,y,z]. Hosts share their router's
//!   rack. Geometrically the racks are the pencil of q + 1 lines through the point [0,0,1]
//!   (the line x = 0, and the lines y = y₀·x), with [0,0,1] itself in rack 0.
//! * Ports, 1-based: ports 1 ..= q + 1 go to the network neighbours in ascending vertex order
//!   (the t-th smallest neighbour on port t); an absolute point has only q neighbours and leaves
//!   port q + 1 free. Host k is on port q + 2 + k; hosts use their port 1.

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};
use crate::gf::{GaloisField, prime_power};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u32 = 254;

/// A PolarFly ER_q graph with hosts.
#[derive(Debug, Clone)]
pub struct PolarFly {
    field: GaloisField,
    hosts_per_router: u32,
}

impl PolarFly {
    /// The PolarFly for q with p hosts per router (default ⌊(q + 1)/2⌋).
    ///
    /// # Errors
    /// q not a prime power, or more than 254 ports per router needed (q + 1 + p); the error
    /// names the nearest valid q with their sizes.
    pub fn new(q: u32, hosts_per_router: Option<u32>) -> Result<Self, TopologyError> {
        let p_of = |q: u32| hosts_per_router.unwrap_or(default_hosts(q));
        let fits = |q: u32| u64::from(q) + 1 + u64::from(p_of(q)) <= u64::from(MAX_PORTS);
        let problem = if prime_power(q).is_none() {
            Some(format!("q = {q} is not a prime power"))
        } else if !fits(q) {
            Some(format!(
                "q = {q} with p = {} needs {} ports per router (at most {MAX_PORTS})",
                p_of(q),
                u64::from(q) + 1 + u64::from(p_of(q))
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(TopologyError::scalar(
                "polarfly",
                "q",
                q,
                problem,
                (2, MAX_PORTS),
                |v| (prime_power(v).is_some() && fits(v)).then(|| size_of(v, p_of(v))),
            ));
        }
        let field =
            GaloisField::new(q).map_err(|e| TopologyError::plain("polarfly", e.to_string()))?;
        Ok(Self {
            field,
            hosts_per_router: p_of(q),
        })
    }

    /// q, the field order.
    pub fn q(&self) -> u32 {
        self.field.order()
    }

    /// The field the graph is built over.
    pub fn field(&self) -> &GaloisField {
        &self.field
    }

    /// Hosts per router p.
    pub fn hosts_per_router(&self) -> u32 {
        self.hosts_per_router
    }

    /// Network radix q + 1 (the degree of the non-absolute routers).
    pub fn network_radix(&self) -> u32 {
        self.q() + 1
    }

    /// Number of routers, q² + q + 1.
    pub fn routers(&self) -> usize {
        let q = self.q() as usize;
        q * q + q + 1
    }

    /// The left-normalised vector [x, y, z] of vertex `index`.
    pub fn vector(&self, index: usize) -> [u32; 3] {
        let q = self.q() as usize;
        assert!(index < self.routers(), "vertex {index} out of range");
        match index {
            0 => [0, 0, 1],
            i if i <= q => [0, 1, (i - 1) as u32],
            i => [1, ((i - 1 - q) / q) as u32, ((i - 1 - q) % q) as u32],
        }
    }

    /// The vertex index of the projective point of a nonzero vector (normalised first).
    ///
    /// # Panics
    /// For the zero vector or coordinates outside GF(q).
    pub fn index(&self, v: [u32; 3]) -> usize {
        let [x, y, z] = self.normalise(v);
        let q = self.q() as usize;
        match (x, y) {
            (0, 0) => 0,
            (0, _) => 1 + z as usize,
            _ => 1 + q + y as usize * q + z as usize,
        }
    }

    /// The left-normalised multiple of a nonzero vector.
    ///
    /// # Panics
    /// For the zero vector or coordinates outside GF(q).
    pub fn normalise(&self, v: [u32; 3]) -> [u32; 3] {
        assert!(
            v.iter().all(|&c| c < self.q()),
            "{v:?} is not over GF({})",
            self.q()
        );
        let lead = v.iter().copied().find(|&c| c != 0).expect("nonzero vector");
        let inv = self.field.inv(lead).expect("lead ≠ 0");
        v.map(|c| self.field.mul(c, inv))
    }

    /// u · v in GF(q).
    pub fn dot(&self, u: [u32; 3], v: [u32; 3]) -> u32 {
        let f = &self.field;
        (0..3).fold(0, |acc, i| f.add(acc, f.mul(u[i], v[i])))
    }

    /// Whether vertex `index` is an absolute point (v · v = 0, degree q).
    pub fn is_absolute(&self, index: usize) -> bool {
        let v = self.vector(index);
        self.dot(v, v) == 0
    }

    /// The q + 1 absolute points, ascending.
    pub fn absolute_points(&self) -> Vec<usize> {
        (0..self.routers())
            .filter(|&i| self.is_absolute(i))
            .collect()
    }

    /// The neighbours of vertex `index`, ascending: the points of its polar line u^⊥ other than
    /// itself (q of them for an absolute point, q + 1 otherwise). Neighbour t is on port t + 1.
    pub fn neighbours(&self, index: usize) -> Vec<usize> {
        let f = &self.field;
        let u = self.vector(index);
        // u^⊥ is a 2-dimensional space: with the pivot (first nonzero, = 1) coordinate solved
        // for, the other two coordinates are free. Its basis: e_a, e_b.
        let pivot = u.iter().position(|&c| c != 0).expect("nonzero");
        let [a, b] = match pivot {
            0 => [1, 2],
            1 => [0, 2],
            _ => [0, 1],
        };
        let basis = |free: usize| {
            let mut e = [0; 3];
            e[free] = 1;
            e[pivot] = f.neg(u[free]);
            e
        };
        let (ea, eb) = (basis(a), basis(b));
        let mut points: Vec<usize> = std::iter::once(self.index(ea))
            .chain(f.elements().map(|s| {
                let v: [u32; 3] = std::array::from_fn(|c| f.add(eb[c], f.mul(s, ea[c])));
                self.index(v)
            }))
            .filter(|&j| j != index)
            .collect();
        points.sort_unstable();
        points
    }

    /// The default rack of vertex `index`: 0 for [0,·,·], 1 + y for [1,y,·].
    pub fn rack(&self, index: usize) -> u32 {
        match self.vector(index) {
            [0, _, _] => 0,
            [_, y, _] => 1 + y,
        }
    }

    /// The network cables of vertex `index` as (port, neighbour, neighbour's port), in port
    /// order: the port plan described in the module documentation.
    pub fn network_ports(&self, index: usize) -> Vec<(u32, usize, u32)> {
        self.neighbours(index)
            .into_iter()
            .enumerate()
            .map(|(t, j)| {
                let back = self
                    .neighbours(j)
                    .binary_search(&index)
                    .expect("the relation is symmetric");
                (t as u32 + 1, j, back as u32 + 1)
            })
            .collect()
    }

    fn name_of(&self, index: usize) -> String {
        let [x, y, z] = self.vector(index);
        format!("pf{x}-{y}-{z}")
    }
}

/// ⌊(q + 1)/2⌋ = ⌈q/2⌉.
fn default_hosts(q: u32) -> u32 {
    q.div_ceil(2)
}

fn size_of(q: u32, p: u32) -> Size {
    let routers = (q as usize).pow(2) + q as usize + 1;
    Size {
        switches: routers,
        endpoints: routers * p as usize,
        ports_per_switch: (q + 1 + p) as usize,
    }
}

impl Construction for PolarFly {
    fn name(&self) -> String {
        format!("polarfly-q{}", self.q())
    }

    fn size(&self) -> Size {
        size_of(self.q(), self.hosts_per_router)
    }

    fn build(&self) -> Fabric {
        let radix = self.network_radix();
        let ports = (radix + self.hosts_per_router) as usize;
        let mut builder = FabricBuilder::new(self.name());
        let routers: Vec<_> = (0..self.routers())
            .map(|i| builder.switch(self.name_of(i), ports, Some(self.rack(i))))
            .collect();
        let neighbours: Vec<Vec<usize>> = (0..self.routers()).map(|i| self.neighbours(i)).collect();
        for (i, list) in neighbours.iter().enumerate() {
            for (t, &j) in list.iter().enumerate() {
                // Each cable once, from the lower index (there are no self loops).
                if i < j {
                    let back = neighbours[j].binary_search(&i).expect("symmetric");
                    builder.cable(routers[i], t + 1, routers[j], back + 1);
                }
            }
        }
        for (i, &router) in routers.iter().enumerate() {
            for k in 0..self.hosts_per_router {
                let host = builder.host(format!("{}-h{k}", self.name_of(i)), Some(self.rack(i)));
                builder.cable(router, (radix + 1 + k) as usize, host, 1);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::topology::lsft::Lsft;
    use crate::topology::{NodeKind, SwitchGraph};

    const ORDERS: [u32; 9] = [2, 3, 4, 5, 7, 8, 9, 11, 13];

    fn valid_qs(max: u32) -> impl Iterator<Item = u32> {
        (2..=max).filter(|&q| prime_power(q).is_some())
    }

    /// Neighbours by brute force over all vertex pairs, independent of the polar-line solver.
    fn brute_force_neighbours(pf: &PolarFly) -> Vec<Vec<usize>> {
        let n = pf.routers();
        (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| j != i && pf.dot(pf.vector(i), pf.vector(j)) == 0)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn vertices_are_the_left_normalised_vectors_in_lexicographic_order() {
        for q in valid_qs(32) {
            let pf = PolarFly::new(q, None).unwrap();
            let vectors: Vec<[u32; 3]> = (0..pf.routers()).map(|i| pf.vector(i)).collect();
            let mut expected = Vec::new();
            for x in 0..q {
                for y in 0..q {
                    for z in 0..q {
                        let v = [x, y, z];
                        if v != [0, 0, 0] && pf.normalise(v) == v {
                            expected.push(v);
                        }
                        if v != [0, 0, 0] {
                            assert_eq!(pf.vector(pf.index(v)), pf.normalise(v), "q={q}");
                        }
                    }
                }
            }
            assert_eq!(vectors, expected, "q={q}");
            for (i, &v) in vectors.iter().enumerate() {
                assert_eq!(pf.index(v), i);
            }
        }
    }

    #[test]
    fn polarity_graph_structure_for_every_prime_power_up_to_32() {
        for q in valid_qs(32) {
            let pf = PolarFly::new(q, None).unwrap();
            let fabric = pf.build();
            let graph = SwitchGraph::new(&fabric);
            let qu = q as usize;
            let n = qu * qu + qu + 1;
            assert_eq!(graph.len(), n, "q={q}: routers");
            let absolute = pf.absolute_points();
            assert_eq!(absolute.len(), qu + 1, "q={q}: absolute points");
            let brute = brute_force_neighbours(&pf);
            for (i, brute_i) in brute.iter().enumerate() {
                let expected_degree = if absolute.contains(&i) { qu } else { qu + 1 };
                assert_eq!(
                    graph.neighbours(i).len(),
                    expected_degree,
                    "q={q}: degree {i}"
                );
                assert_eq!(
                    graph.cable_degree(i) as usize,
                    expected_degree,
                    "q={q}: simple"
                );
                assert_eq!(pf.neighbours(i), *brute_i, "q={q}: neighbours of {i}");
                let graph_neighbours: Vec<usize> =
                    graph.neighbours(i).iter().map(|&j| j as usize).collect();
                assert_eq!(
                    graph_neighbours, *brute_i,
                    "q={q}: cabled neighbours of {i}"
                );
            }
            assert_eq!(
                graph.edge_count(),
                qu * (qu + 1) * (qu + 1) / 2,
                "q={q}: edges"
            );
            assert_eq!(graph.diameter(), Some(2), "q={q}");
            for &a in &absolute {
                assert!(
                    absolute.iter().all(|b| !brute[a].contains(b)),
                    "q={q}: independent"
                );
            }
            assert_eq!(
                graph.triangles(),
                (qu + 1) * qu * (qu - 1) / 6,
                "q={q}: triangles"
            );
            // V1: non-absolute neighbours of absolute points; V2: the rest.
            let v1 = (0..n)
                .filter(|i| !absolute.contains(i))
                .filter(|&i| brute[i].iter().any(|j| absolute.contains(j)))
                .count();
            let v2 = n - (qu + 1) - v1;
            if q % 2 == 1 {
                assert_eq!((v1, v2), (qu * (qu + 1) / 2, qu * (qu - 1) / 2), "q={q}");
            } else {
                assert_eq!((v1, v2), (qu * qu, 0), "q={q}");
            }
            let summary = fabric.summary();
            assert_eq!(summary.hosts, n * qu.div_ceil(2), "q={q}: hosts");
            assert_eq!(summary.host_links, summary.hosts);
            assert_eq!(pf.size().endpoints, summary.hosts);
        }
    }

    #[test]
    fn two_routers_have_one_common_neighbour_unless_it_is_a_dropped_loop() {
        for q in valid_qs(19) {
            let pf = PolarFly::new(q, Some(0)).unwrap();
            let graph = SwitchGraph::new(&pf.build());
            for u in 0..graph.len() {
                for v in u + 1..graph.len() {
                    let (nu, nv) = (graph.neighbours(u), graph.neighbours(v));
                    let common = nu.iter().filter(|w| nv.contains(w)).count();
                    let adjacent = nu.contains(&(v as u32));
                    let loop_lost = adjacent && (pf.is_absolute(u) || pf.is_absolute(v));
                    assert_eq!(common, usize::from(!loop_lost), "q={q}: ({u},{v})");
                }
            }
        }
    }

    #[test]
    fn every_cable_follows_the_documented_port_plan() {
        for q in [2, 3, 4, 5, 7, 9] {
            let pf = PolarFly::new(q, None).unwrap();
            let fabric = pf.build();
            let brute = brute_force_neighbours(&pf);
            let index_of: HashMap<String, usize> =
                (0..pf.routers()).map(|i| (pf.name_of(i), i)).collect();
            let p = pf.hosts_per_router();
            for (i, node) in fabric.nodes().iter().enumerate().take(pf.routers()) {
                let [x, y, z] = pf.vector(i);
                assert_eq!(node.name, format!("pf{x}-{y}-{z}"));
                assert_eq!(u32::from(node.num_ports()), q + 1 + p);
                assert_eq!(node.rack, Some(if x == 0 { 0 } else { 1 + y }));
            }
            for link in fabric.links() {
                for (end, other) in [(link.a, link.b), (link.b, link.a)] {
                    let (me, peer) = (fabric.node(end.node), fabric.node(other.node));
                    let port = u32::from(end.port);
                    match (index_of.get(&me.name), index_of.get(&peer.name)) {
                        (Some(&i), Some(&j)) => {
                            let t = brute[i].iter().position(|&x| x == j).unwrap();
                            assert_eq!(port as usize, t + 1, "q={q}: {} -> {}", me.name, peer.name);
                        }
                        (Some(&i), None) => {
                            let k: u32 = peer
                                .name
                                .strip_prefix(&format!("{}-h", me.name))
                                .unwrap()
                                .parse()
                                .unwrap();
                            assert_eq!(port, q + 2 + k, "q={q}: {}", peer.name);
                            assert_eq!(peer.rack, Some(pf.rack(i)));
                            assert_eq!(peer.kind, NodeKind::Ca);
                        }
                        (None, Some(_)) => assert_eq!(port, 1),
                        (None, None) => panic!("host-to-host cable"),
                    }
                }
            }
            // Absolute points leave port q + 1 free; every other network port is used.
            for i in 0..pf.routers() {
                let id = fabric.node_by_name(&pf.name_of(i)).unwrap();
                let used: Vec<u8> = fabric.neighbours(id).map(|(port, _)| port).collect();
                let network = if pf.is_absolute(i) { q } else { q + 1 };
                let expected: Vec<u8> = (1..=network)
                    .chain(q + 2..q + 2 + p)
                    .map(|x| x as u8)
                    .collect();
                assert_eq!(used, expected, "q={q}: ports of {}", pf.name_of(i));
            }
            for i in 0..pf.routers() {
                for (port, j, back) in pf.network_ports(i) {
                    assert_eq!(brute[i][port as usize - 1], j);
                    assert_eq!(brute[j][back as usize - 1], i);
                }
            }
        }
        let pf = PolarFly::new(3, None).unwrap();
        let fabric = pf.build();
        let names: Vec<&str> = fabric.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names[..5],
            ["pf0-0-1", "pf0-1-0", "pf0-1-1", "pf0-1-2", "pf1-0-0"]
        );
        assert_eq!(names[12], "pf1-2-2");
        assert_eq!(names[13..15], ["pf0-0-1-h0", "pf0-0-1-h1"]);
        assert_eq!(pf.name(), "polarfly-q3");
    }

    #[test]
    fn racks_are_the_pencil_through_0_0_1() {
        for q in ORDERS {
            let pf = PolarFly::new(q, None).unwrap();
            let mut sizes = vec![0; q as usize + 1];
            for i in 0..pf.routers() {
                sizes[pf.rack(i) as usize] += 1;
                let v = pf.vector(i);
                // Rack 1 + y lies on the line y·X − Y = 0 (through [0,0,1] and [1,y,0]); rack 0
                // is the line X = 0.
                let line = if v[0] == 0 {
                    [1, 0, 0]
                } else {
                    [v[1], pf.field().neg(1), 0]
                };
                assert_eq!(pf.dot(v, line), 0, "q={q}: {v:?}");
                assert_eq!(pf.dot([0, 0, 1], line), 0);
            }
            let mut expected = vec![q as usize; q as usize + 1];
            expected[0] += 1;
            assert_eq!(sizes, expected, "q={q}");
        }
    }

    #[test]
    fn the_lsft_is_the_bipartite_double_cover_of_er_q_with_loops() {
        for q in ORDERS {
            let pf = PolarFly::new(q, Some(0)).unwrap();
            let lsft = Lsft::new(q).unwrap();
            let mut lines_seen = vec![false; pf.routers()];
            for i in 0..lsft.points() {
                let line = lsft.line(i);
                let pole = pf.index(lsft.line_coordinates(line));
                assert!(
                    !std::mem::replace(&mut lines_seen[pole], true),
                    "q={q}: poles"
                );
                let polar: Vec<usize> = pf.neighbours(pole);
                for j in 0..lsft.points() {
                    let point = lsft.point(j);
                    let u = pf.index(lsft.point_coordinates(point));
                    let adjacent_or_loop = polar.contains(&u) || (u == pole && pf.is_absolute(u));
                    assert_eq!(lsft.incident(point, line), adjacent_or_loop, "q={q}");
                }
            }
        }
    }

    #[test]
    fn sizes_match_the_notes() {
        for (q, routers, endpoints) in [
            (23, 553, 6636),
            (25, 651, 8463),
            (31, 993, 15888),
            (41, 1723, 36183),
        ] {
            let size = PolarFly::new(q, None).unwrap().size();
            assert_eq!(
                (size.switches, size.endpoints),
                (routers, endpoints),
                "q={q}"
            );
        }
        assert_eq!(PolarFly::new(23, None).unwrap().size().ports_per_switch, 36);
        assert_eq!(PolarFly::new(7, Some(2)).unwrap().hosts_per_router(), 2);
    }

    #[test]
    fn impossible_q_is_refused_with_the_nearest_valid_ones() {
        assert_eq!(
            PolarFly::new(6, None).unwrap_err().to_string(),
            "polarfly: q = 6 is not a prime power; nearest valid: \
             q = 5 (31 switches, 93 endpoints, 9 ports per switch), \
             q = 7 (57 switches, 228 endpoints, 12 ports per switch)"
        );
        let err = PolarFly::new(1, None).unwrap_err().to_string();
        assert!(
            err.ends_with("q = 2 (7 switches, 7 endpoints, 4 ports per switch)"),
            "{err}"
        );
        let err = PolarFly::new(169, None).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "polarfly: q = 169 with p = 85 needs 255 ports per router (at most 254); \
                 nearest valid: q = 167"
            ),
            "{err}"
        );
        assert!(PolarFly::new(167, None).is_ok());
        assert!(PolarFly::new(5, Some(300)).is_err());
        for q in 0..=300 {
            let ok = prime_power(q).is_some() && q + 1 + q.div_ceil(2) <= 254;
            assert_eq!(PolarFly::new(q, None).is_ok(), ok, "q={q}");
        }
    }
}
