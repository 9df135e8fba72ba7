//! Slim Fly: the McKay–Miller–Širáň (MMS) graphs of diameter 2, for every prime power
//! q = 4w + δ with δ ∈ {−1, 0, 1}.
//!
//! Switches are labelled (s, a, b) ∈ {0, 1} × GF(q) × GF(q) and joined by
//! * (0, x, y) ~ (0, x, y')  iff y − y' ∈ X,
//! * (1, m, c) ~ (1, m, c')  iff c − c' ∈ X',
//! * (0, x, y) ~ (1, m, c)   iff y = m·x + c,
//!
//! with the generator sets X, X' built from powers of a primitive element ξ (see
//! [`generator_sets`]). Every switch has network radix k' = (3q − δ)/2; there are 2q² switches.
//!
//! # Names, racks and ports
//! * Switch (s, a, b) is named `sw<s>-<a>-<b>` (a and b as field-element encodings), host k of
//!   it `h<s>-<a>-<b>-<k>`; node ids follow the same order: switch (s, a, b) has id
//!   s·q² + a·q + b, hosts follow the switches.
//! * Group (s, a) is the q switches with that s and a. Rack r holds groups (0, r) and (1, r):
//!   q racks of 2q switches, exactly 2q cables between every two racks.
//! * Ports, 1-based: on (0, x, y), port 1 + m goes to (1, m, y − m·x), which lives in rack m;
//!   on (1, m, c), port 1 + x goes to (0, x, m·x + c), in rack x. So every switch of a rack uses
//!   the same port towards a given other rack. Ports q + 1 ..= q + |X| go to the group
//!   neighbours, one per generator g in ascending encoding order (neighbour b + g). Hosts are on
//!   ports k' + 1 ..= k' + p.

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};
use crate::gf::{GaloisField, prime_power};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u32 = 254;

/// A Slim Fly MMS graph with endpoints.
#[derive(Debug, Clone)]
pub struct SlimFly {
    field: GaloisField,
    delta: i32,
    hosts_per_switch: u32,
    /// X: neighbour offsets inside subgraph 0 groups, ascending.
    x: Vec<u32>,
    /// X': neighbour offsets inside subgraph 1 groups, ascending.
    x_prime: Vec<u32>,
}

/// δ ∈ {−1, 0, 1} with q = 4w + δ, or `None` when q ≡ 2 (mod 4).
pub fn delta(q: u32) -> Option<i32> {
    match q % 4 {
        0 => Some(0),
        1 => Some(1),
        3 => Some(-1),
        _ => None,
    }
}

/// The generator sets (X, X') of the MMS graph over `field`, each sorted by encoding.
///
/// With ξ the primitive element and q = 4w + δ:
/// * δ = 1:  X = {ξ⁰, ξ², …, ξ^(q−3)},  X' = {ξ¹, ξ³, …, ξ^(q−2)} (squares and non-squares);
/// * δ = 0:  X = {ξ⁰, ξ², …, ξ^(q−2)},  X' = {ξ¹, ξ³, …, ξ^(q−1)};
/// * δ = −1: X = {ξ⁰, ξ², …, ξ^(2w−2)} ∪ {ξ^(2w−1), ξ^(2w+1), …, ξ^(4w−3)},
///   X' = {ξ¹, ξ³, …, ξ^(2w−1)} ∪ {ξ^(2w), ξ^(2w+2), …, ξ^(4w−2)}.
///
/// # Panics
/// If q ≡ 2 (mod 4).
pub fn generator_sets(field: &GaloisField) -> (Vec<u32>, Vec<u32>) {
    let q = field.order();
    let d = delta(q).expect("q ≡ 0, ±1 (mod 4)");
    let w = (q as i32 - d) as u32 / 4;
    let powers = |exponents: &mut dyn Iterator<Item = u32>| -> Vec<u32> {
        let mut set: Vec<u32> = exponents.map(|e| field.pow_primitive(e)).collect();
        set.sort_unstable();
        set
    };
    let evens = |from: u32, to: u32| (from..=to).step_by(2);
    match d {
        1 => (powers(&mut evens(0, q - 3)), powers(&mut evens(1, q - 2))),
        0 => (powers(&mut evens(0, q - 2)), powers(&mut evens(1, q - 1))),
        _ => (
            powers(&mut evens(0, 2 * w - 2).chain(evens(2 * w - 1, 4 * w - 3))),
            powers(&mut evens(1, 2 * w - 1).chain(evens(2 * w, 4 * w - 2))),
        ),
    }
}

impl SlimFly {
    /// The Slim Fly for q with p hosts per switch (default ⌈k'/2⌉, full global bandwidth).
    ///
    /// # Errors
    /// q not a prime power ≡ 0, ±1 (mod 4), or more than 254 ports per switch needed; the error
    /// names the nearest valid q with their sizes.
    pub fn new(q: u32, hosts_per_switch: Option<u32>) -> Result<Self, TopologyError> {
        let problem = if prime_power(q).is_none() {
            Some(format!("q = {q} is not a prime power"))
        } else if delta(q).is_none() {
            Some(format!(
                "q = {q} is not of the form 4w + δ with δ ∈ {{−1, 0, 1}}"
            ))
        } else {
            None
        };
        let p_default = |q: u32| network_radix(q).div_ceil(2);
        if let Some(problem) = problem {
            return Err(TopologyError::scalar(
                "slimfly",
                "q",
                q,
                problem,
                (3, 1024),
                |v| valid_q(v).then(|| size_of(v, hosts_per_switch.unwrap_or(p_default(v)))),
            ));
        }
        let p = hosts_per_switch.unwrap_or(p_default(q));
        let size = size_of(q, p);
        if size.ports_per_switch as u32 > MAX_PORTS {
            return Err(TopologyError::plain(
                "slimfly",
                format!(
                    "q = {q} with p = {p} needs {} ports per switch (at most {MAX_PORTS})",
                    size.ports_per_switch
                ),
            ));
        }
        let field =
            GaloisField::new(q).map_err(|e| TopologyError::plain("slimfly", e.to_string()))?;
        let (x, x_prime) = generator_sets(&field);
        Ok(Self {
            delta: delta(q).expect("validated"),
            field,
            hosts_per_switch: p,
            x,
            x_prime,
        })
    }

    /// q, the field order.
    pub fn q(&self) -> u32 {
        self.field.order()
    }

    /// δ with q = 4w + δ.
    pub fn delta(&self) -> i32 {
        self.delta
    }

    /// The field the graph is built over.
    pub fn field(&self) -> &GaloisField {
        &self.field
    }

    /// Generator set X (subgraph 0), ascending.
    pub fn x(&self) -> &[u32] {
        &self.x
    }

    /// Generator set X' (subgraph 1), ascending.
    pub fn x_prime(&self) -> &[u32] {
        &self.x_prime
    }

    /// Network radix k' = (3q − δ)/2.
    pub fn network_radix(&self) -> u32 {
        network_radix(self.q())
    }

    /// Hosts per switch p.
    pub fn hosts_per_switch(&self) -> u32 {
        self.hosts_per_switch
    }

    /// Switch index s·q² + a·q + b of label (s, a, b).
    pub fn index(&self, (s, a, b): (u32, u32, u32)) -> usize {
        let q = self.q() as usize;
        s as usize * q * q + a as usize * q + b as usize
    }

    /// Label (s, a, b) of switch index i.
    pub fn label(&self, i: usize) -> (u32, u32, u32) {
        let q = self.q() as usize;
        ((i / (q * q)) as u32, ((i / q) % q) as u32, (i % q) as u32)
    }

    /// The network neighbours of a switch, as (port, neighbour label, neighbour's port), in
    /// port order: the port plan described in the module documentation.
    pub fn network_ports(&self, (s, a, b): (u32, u32, u32)) -> Vec<(u32, (u32, u32, u32), u32)> {
        let f = &self.field;
        let q = self.q();
        let generators = if s == 0 { &self.x } else { &self.x_prime };
        let group_port = |g: u32| {
            q + 1
                + generators
                    .binary_search(&g)
                    .expect("generator sets are symmetric") as u32
        };
        let mut ports = Vec::with_capacity(self.network_radix() as usize);
        for other in 0..q {
            // s = 0: (0, x=a, y=b) -> (1, m=other, y − m·x), reached back on its port 1 + x.
            // s = 1: (1, m=a, c=b) -> (0, x=other, m·x + c), reached back on its port 1 + m.
            let peer = if s == 0 {
                (1, other, f.sub(b, f.mul(other, a)))
            } else {
                (0, other, f.add(f.mul(a, other), b))
            };
            ports.push((1 + other, peer, 1 + a));
        }
        for &g in generators {
            ports.push((group_port(g), (s, a, f.add(b, g)), group_port(f.neg(g))));
        }
        ports
    }
}

fn network_radix(q: u32) -> u32 {
    (3 * q as i32 - delta(q).unwrap_or(0)) as u32 / 2
}

fn valid_q(q: u32) -> bool {
    prime_power(q).is_some() && delta(q).is_some()
}

fn size_of(q: u32, p: u32) -> Size {
    let switches = 2 * (q as usize).pow(2);
    Size {
        switches,
        endpoints: switches * p as usize,
        ports_per_switch: (network_radix(q) + p) as usize,
    }
}

impl Construction for SlimFly {
    fn name(&self) -> String {
        format!("slimfly-q{}", self.q())
    }

    fn size(&self) -> Size {
        size_of(self.q(), self.hosts_per_switch)
    }

    fn build(&self) -> Fabric {
        let q = self.q();
        let radix = self.network_radix();
        let num_ports = (radix + self.hosts_per_switch) as usize;
        let mut builder = FabricBuilder::new(self.name());
        let labels: Vec<_> = (0..2 * (q * q) as usize).map(|i| self.label(i)).collect();
        let switches: Vec<_> = labels
            .iter()
            .map(|&(s, a, b)| builder.switch(format!("sw{s}-{a}-{b}"), num_ports, Some(a)))
            .collect();
        for (i, &label) in labels.iter().enumerate() {
            for (port, peer, peer_port) in self.network_ports(label) {
                let j = self.index(peer);
                // Each cable once: from the lower index (a loop-free graph has no i == j).
                if i < j {
                    builder.cable(switches[i], port as usize, switches[j], peer_port as usize);
                }
            }
        }
        for (i, &(s, a, b)) in labels.iter().enumerate() {
            for k in 0..self.hosts_per_switch {
                let host = builder.host(format!("h{s}-{a}-{b}-{k}"), Some(a));
                builder.cable(switches[i], (radix + 1 + k) as usize, host, 1);
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::topology::{NodeKind, SwitchGraph};

    fn valid_qs(max: u32) -> impl Iterator<Item = u32> {
        (3..=max).filter(|&q| valid_q(q))
    }

    #[test]
    fn every_valid_q_up_to_49_has_the_promised_structure() {
        for q in valid_qs(49) {
            let sf = SlimFly::new(q, None).unwrap();
            let fabric = sf.build();
            let graph = SwitchGraph::new(&fabric);
            let k = sf.network_radix();
            assert_eq!(graph.len(), 2 * (q * q) as usize, "q={q}");
            for i in 0..graph.len() {
                assert_eq!(
                    graph.neighbours(i).len() as u32,
                    k,
                    "q={q}: degree of switch {i}"
                );
                assert_eq!(graph.cable_degree(i), k, "q={q}: no parallel cables");
            }
            assert_eq!(graph.edge_count(), (q * q * k) as usize, "q={q}: links");
            assert_eq!(graph.diameter(), Some(2), "q={q}");
            let summary = fabric.summary();
            assert_eq!(summary.hosts, graph.len() * k.div_ceil(2) as usize);
            assert_eq!(summary.host_links, summary.hosts);
        }
    }

    #[test]
    fn generator_sets_are_symmetric_and_of_size_q_minus_delta_over_2() {
        for q in valid_qs(128) {
            let field = GaloisField::new(q).unwrap();
            let (x, xp) = generator_sets(&field);
            let size = (q as i32 - delta(q).unwrap()) as usize / 2;
            for set in [&x, &xp] {
                assert_eq!(set.len(), size, "q={q}");
                assert!(
                    set.iter().all(|&g| set.contains(&field.neg(g))),
                    "q={q}: not symmetric"
                );
                assert!(!set.contains(&0));
            }
        }
    }

    #[test]
    fn two_q_cables_between_every_two_racks() {
        for q in valid_qs(49) {
            let fabric = SlimFly::new(q, Some(0)).unwrap().build();
            let mut between: HashMap<(u32, u32), usize> = HashMap::new();
            for link in fabric.links() {
                let (ra, rb) = (
                    fabric.node(link.a.node).rack.unwrap(),
                    fabric.node(link.b.node).rack.unwrap(),
                );
                *between.entry((ra.min(rb), ra.max(rb))).or_default() += 1;
            }
            for a in 0..q {
                for b in a + 1..q {
                    assert_eq!(between[&(a, b)], 2 * q as usize, "q={q}: racks {a},{b}");
                }
                let delta = delta(q).unwrap();
                let intra = q as i32 * (q as i32 - delta) / 2 + q as i32;
                assert_eq!(between[&(a, a)] as i32, intra, "q={q}: inside rack {a}");
            }
        }
    }

    #[test]
    fn every_switch_of_a_rack_uses_the_same_port_towards_a_given_rack() {
        for q in valid_qs(49) {
            let fabric = SlimFly::new(q, None).unwrap().build();
            let mut port_to: HashMap<(u32, u32), u8> = HashMap::new();
            for link in fabric.links() {
                for (end, other) in [(link.a, link.b), (link.b, link.a)] {
                    let (n, o) = (fabric.node(end.node), fabric.node(other.node));
                    if o.kind != NodeKind::Switch || n.rack == o.rack {
                        continue;
                    }
                    let key = (n.rack.unwrap(), o.rack.unwrap());
                    let port = *port_to.entry(key).or_insert(end.port);
                    assert_eq!(port, end.port, "q={q}: rack pair {key:?}");
                }
            }
        }
    }

    #[test]
    fn q5_is_the_hoffman_singleton_graph() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        let graph = SwitchGraph::new(&fabric);
        assert_eq!(graph.girth(), Some(5));
        assert_eq!(graph.triangles(), 0);
        // Moore graph: every non-adjacent pair has exactly one common neighbour.
        for u in 0..graph.len() {
            for v in u + 1..graph.len() {
                let (nu, nv) = (graph.neighbours(u), graph.neighbours(v));
                let common = nu.iter().filter(|w| nv.contains(w)).count();
                assert_eq!(common, usize::from(!nu.contains(&(v as u32))), "({u},{v})");
            }
        }
    }

    #[test]
    fn triangle_counts_and_girth_match_the_research_table() {
        let expected = [
            (3, 6),
            (4, 0),
            (5, 0),
            (7, 98),
            (8, 128),
            (9, 108),
            (11, 726),
            (13, 676),
            (16, 2048),
            (17, 2312),
            (19, 5054),
            (23, 11638),
            (25, 12500),
            (27, 23814),
        ];
        for (q, triangles) in expected {
            let graph = SwitchGraph::new(&SlimFly::new(q, Some(0)).unwrap().build());
            assert_eq!(graph.triangles(), triangles, "q={q}");
        }
        for (q, girth) in [(3, 3), (4, 4), (5, 5), (7, 3), (8, 3), (9, 3)] {
            let graph = SwitchGraph::new(&SlimFly::new(q, Some(0)).unwrap().build());
            assert_eq!(graph.girth(), Some(girth), "q={q}");
        }
    }

    #[test]
    fn q5_matches_the_published_adjacency_and_generator_sets() {
        let sf = SlimFly::new(5, None).unwrap();
        assert_eq!((sf.x(), sf.x_prime()), (&[1, 4][..], &[2, 3][..]));
        assert_eq!(sf.network_radix(), 7);
        assert_eq!(sf.hosts_per_switch(), 4);
        let neighbours = |label| {
            let mut n: Vec<_> = sf
                .network_ports(label)
                .into_iter()
                .map(|(_, l, _)| l)
                .collect();
            n.sort_unstable();
            n
        };
        assert_eq!(
            neighbours((0, 0, 0)),
            [
                (0, 0, 1),
                (0, 0, 4),
                (1, 0, 0),
                (1, 1, 0),
                (1, 2, 0),
                (1, 3, 0),
                (1, 4, 0)
            ]
        );
        assert_eq!(
            neighbours((1, 0, 0)),
            [
                (0, 0, 0),
                (0, 1, 0),
                (0, 2, 0),
                (0, 3, 0),
                (0, 4, 0),
                (1, 0, 2),
                (1, 0, 3)
            ]
        );
        let f = SlimFly::new(7, None).unwrap();
        assert_eq!((f.x(), f.x_prime()), (&[1, 2, 5, 6][..], &[1, 3, 4, 6][..]));
        let f = SlimFly::new(13, None).unwrap();
        assert_eq!(
            (f.x(), f.x_prime()),
            (&[1, 3, 4, 9, 10, 12][..], &[2, 5, 6, 7, 8, 11][..])
        );
    }

    #[test]
    fn impossible_q_is_refused_with_the_nearest_valid_ones() {
        let err = SlimFly::new(6, None).unwrap_err().to_string();
        assert_eq!(
            err,
            "slimfly: q = 6 is not a prime power; nearest valid: \
             q = 5 (50 switches, 200 endpoints, 11 ports per switch), \
             q = 7 (98 switches, 588 endpoints, 17 ports per switch)"
        );
        let err = SlimFly::new(21, None).unwrap_err().to_string();
        assert!(
            err.starts_with("slimfly: q = 21 is not a prime power; nearest valid: q = 19"),
            "{err}"
        );
        assert!(
            err.contains("q = 23 (1058 switches, 19044 endpoints, 53 ports per switch)"),
            "{err}"
        );
        assert!(
            SlimFly::new(2, None)
                .unwrap_err()
                .to_string()
                .contains("4w + δ")
        );
        assert!(
            SlimFly::new(5, Some(300))
                .unwrap_err()
                .to_string()
                .contains("ports per switch")
        );
    }
}
