//! Latin-square fat-tree (LSFT, Shimizu & Nakashima): the point–line incidence graph of the
//! projective plane of order n, one leaf switch per point, one spine switch per line.
//!
//! The plane is built over GF(n) for any prime power n (for prime n the arithmetic is mod n; the
//! paper treats prime n only, prime powers are our generalisation with the same naming). Its
//! n² + n + 1 points and n² + n + 1 lines are named as in the paper (c, r, i are field-element
//! encodings, arithmetic in GF(n)):
//! * points `P`, `P(c)` (0 ≤ c < n, the point at infinity of slope c) and the grid part
//!   `P(c,r)` (column x = c, row y = r);
//! * lines `L = {P} ∪ {P(c)}`, `L(c) = {P} ∪ {P(c,i) | i}` (the vertical line x = c) and
//!   `L(c,r) = {P(c)} ∪ {P(i, r + c·i) | i}` (slope c, intercept r).
//!
//! In homogeneous coordinates P = [0:1:0], P(c) = [1:c:0], P(c,r) = [c:r:1] and the line [a:b:e]
//! holds the points [x:y:z] with ax + by + ez = 0: L = [0:0:1], L(c) = [1:0:−c],
//! L(c,r) = [c:−1:r] (see [`Lsft::point_coordinates`]).
//!
//! Every line has n + 1 points, every point lies on n + 1 lines, two points span exactly one line
//! and two lines meet in exactly one point. So two leaves have exactly one common spine (a unique
//! two-hop path), every switch uses n + 1 network ports, and each leaf serves n + 1 servers:
//! (n + 1)(n² + n + 1) servers on 2(n² + n + 1) switches of 2(n + 1) ports.
//!
//! # Names, node order, racks and ports
//! * Canonical order of points: `P`, then `P(c)` by c, then `P(c,r)` by c then r; point index
//!   0, 1 + c, 1 + n + c·n + r. Lines likewise: `L`, `L(c)` by c, `L(c,r)` by c then r.
//! * Leaf switches are named as their point (`P`, `P(2)`, `P(1,3)`), spines as their line (`L`,
//!   `L(2)`, `L(1,3)`), server k of a leaf `<point>-s<k>` (`P(1,3)-s0`).
//! * Node order (and node ids): the leaves in point order, the spines in line order, then the
//!   servers by point, then k.
//! * Racks (the default): rack c (0 ≤ c < n) holds the grid column c (leaves `P(c,0)` …
//!   `P(c,n−1)` with their servers) and the n spines of slope c (`L(c,0)` … `L(c,n−1)`); rack n
//!   holds the leaves `P`, `P(0)` … `P(n−1)` with their servers and the spines `L`, `L(0)` …
//!   `L(n−1)`. So n racks of n leaves and n spines and one of n + 1 leaves and n + 1 spines.
//! * Ports, 1-based; every switch has 2(n + 1) ports:
//!   * leaf: ports 1 ..= n + 1 → its servers (server k on port k + 1, servers use their port 1);
//!     ports n + 2 ..= 2n + 2 → the n + 1 lines through the point in canonical line order. That
//!     is, for `P`: L, L(0), …, L(n−1); for `P(c)`: L, L(c,0), …, L(c,n−1); for `P(x,y)`: L(x),
//!     then L(c, y − c·x) for c = 0, …, n−1 (the line of slope c on port n + 3 + c).
//!   * spine: ports 1 ..= n + 1 → the n + 1 points of the line in canonical point order: for
//!     `L`: P, P(0), …, P(n−1); for `L(c)`: P, P(c,0), …, P(c,n−1); for `L(c,r)`: P(c), then
//!     P(i, r + c·i) for i = 0, …, n−1 (column i on port i + 2). Ports n + 2 ..= 2n + 2 (the
//!     "other side" that a mirrored LSFT would use) stay free.

use std::fmt;

use super::{Construction, Fabric, FabricBuilder, Size, TopologyError};
use crate::gf::{GaloisField, prime_power};

/// The largest switch port count accepted (an IB switch has at most 254 external ports).
const MAX_PORTS: u32 = 254;
/// The largest order n with 2(n + 1) ≤ 254 ports.
const MAX_N: u32 = MAX_PORTS / 2 - 1;

/// A point of the projective plane of order n, named as in the Latin-square paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Point {
    /// `P`: the point at infinity of the vertical lines.
    P,
    /// `P(c)`: the point at infinity of the lines of slope c.
    Slope(u32),
    /// `P(c,r)`: the grid point in column c, row r.
    Grid(u32, u32),
}

/// A line of the projective plane of order n, named as in the Latin-square paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Line {
    /// `L`: the line at infinity, `{P} ∪ {P(c)}`.
    L,
    /// `L(c)`: the vertical line x = c, `{P} ∪ {P(c,i)}`.
    Column(u32),
    /// `L(c,r)`: the line y = c·x + r, `{P(c)} ∪ {P(i, r + c·i)}`.
    Sloped(u32, u32),
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Point::P => write!(f, "P"),
            Point::Slope(c) => write!(f, "P({c})"),
            Point::Grid(c, r) => write!(f, "P({c},{r})"),
        }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::L => write!(f, "L"),
            Line::Column(c) => write!(f, "L({c})"),
            Line::Sloped(c, r) => write!(f, "L({c},{r})"),
        }
    }
}

/// A Latin-square fat-tree over the projective plane of order n.
#[derive(Debug, Clone)]
pub struct Lsft {
    field: GaloisField,
}

impl Lsft {
    /// The LSFT of order n: leaves and spines of 2(n + 1) ports, n + 1 servers per leaf.
    ///
    /// # Errors
    /// n not a prime power (no projective plane is known then, and none exists for n = 6 or
    /// n = 10), or n > 126 (more than 254 ports per switch); the error names the nearest valid n
    /// with their sizes.
    pub fn new(n: u32) -> Result<Self, TopologyError> {
        let problem = if prime_power(n).is_none() {
            Some(format!("n = {n} is not a prime power"))
        } else if n > MAX_N {
            Some(format!(
                "n = {n} needs {} ports per switch (at most {MAX_PORTS})",
                2 * (u64::from(n) + 1)
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(TopologyError::scalar(
                "lsft",
                "n",
                n,
                problem,
                (2, MAX_N),
                |v| prime_power(v).map(|_| size_of(v)),
            ));
        }
        let field = GaloisField::new(n).map_err(|e| TopologyError::plain("lsft", e.to_string()))?;
        Ok(Self { field })
    }

    /// n, the order of the plane.
    pub fn n(&self) -> u32 {
        self.field.order()
    }

    /// The field GF(n) the plane is built over.
    pub fn field(&self) -> &GaloisField {
        &self.field
    }

    /// Number of points (= leaves) and of lines (= spines), n² + n + 1.
    pub fn points(&self) -> usize {
        let n = self.n() as usize;
        n * n + n + 1
    }

    /// Ports of every switch, 2(n + 1).
    pub fn ports_per_switch(&self) -> u32 {
        2 * (self.n() + 1)
    }

    fn valid(&self, x: u32) -> u32 {
        assert!(x < self.n(), "{x} is not an element of GF({})", self.n());
        x
    }

    /// Index of a point in canonical order: 0, 1 + c, 1 + n + c·n + r.
    pub fn point_index(&self, point: Point) -> usize {
        let n = self.n() as usize;
        match point {
            Point::P => 0,
            Point::Slope(c) => 1 + self.valid(c) as usize,
            Point::Grid(c, r) => 1 + n + self.valid(c) as usize * n + self.valid(r) as usize,
        }
    }

    /// The point with canonical index `index`.
    pub fn point(&self, index: usize) -> Point {
        let n = self.n() as usize;
        assert!(index < self.points(), "point index {index} out of range");
        match index {
            0 => Point::P,
            i if i <= n => Point::Slope((i - 1) as u32),
            i => Point::Grid(((i - 1 - n) / n) as u32, ((i - 1 - n) % n) as u32),
        }
    }

    /// Index of a line in canonical order: 0, 1 + c, 1 + n + c·n + r.
    pub fn line_index(&self, line: Line) -> usize {
        let n = self.n() as usize;
        match line {
            Line::L => 0,
            Line::Column(c) => 1 + self.valid(c) as usize,
            Line::Sloped(c, r) => 1 + n + self.valid(c) as usize * n + self.valid(r) as usize,
        }
    }

    /// The line with canonical index `index`.
    pub fn line(&self, index: usize) -> Line {
        match self.point(index) {
            Point::P => Line::L,
            Point::Slope(c) => Line::Column(c),
            Point::Grid(c, r) => Line::Sloped(c, r),
        }
    }

    /// The position (0 ..= n) of `line` among the lines through `point` in canonical order, or
    /// `None` if the point is not on the line.
    pub fn line_position(&self, point: Point, line: Line) -> Option<u32> {
        let f = &self.field;
        match (point, line) {
            (Point::P, Line::L) | (Point::Slope(_), Line::L) => Some(0),
            (Point::P, Line::Column(c)) => Some(1 + c),
            (Point::Slope(c), Line::Sloped(c2, r)) if c == c2 => Some(1 + r),
            (Point::Grid(x, _), Line::Column(c)) if c == x => Some(0),
            (Point::Grid(x, y), Line::Sloped(c, r)) if y == f.add(r, f.mul(c, x)) => Some(1 + c),
            _ => None,
        }
    }

    /// The position (0 ..= n) of `point` among the points of `line` in canonical order, or
    /// `None` if the point is not on the line.
    pub fn point_position(&self, line: Line, point: Point) -> Option<u32> {
        let f = &self.field;
        match (line, point) {
            (Line::L, Point::P) | (Line::Column(_), Point::P) => Some(0),
            (Line::L, Point::Slope(c)) => Some(1 + c),
            (Line::Column(c), Point::Grid(x, y)) if c == x => Some(1 + y),
            (Line::Sloped(c, _), Point::Slope(c2)) if c == c2 => Some(0),
            (Line::Sloped(c, r), Point::Grid(x, y)) if y == f.add(r, f.mul(c, x)) => Some(1 + x),
            _ => None,
        }
    }

    /// Whether `point` lies on `line`.
    pub fn incident(&self, point: Point, line: Line) -> bool {
        self.line_position(point, line).is_some()
    }

    /// The n + 1 lines through `point`, in canonical order (the order of the leaf's uplinks).
    pub fn lines_through(&self, point: Point) -> Vec<Line> {
        let f = &self.field;
        let n = self.n();
        match point {
            Point::P => std::iter::once(Line::L)
                .chain((0..n).map(Line::Column))
                .collect(),
            Point::Slope(c) => std::iter::once(Line::L)
                .chain((0..n).map(|r| Line::Sloped(c, r)))
                .collect(),
            Point::Grid(x, y) => std::iter::once(Line::Column(x))
                .chain((0..n).map(|c| Line::Sloped(c, f.sub(y, f.mul(c, x)))))
                .collect(),
        }
    }

    /// The n + 1 points of `line`, in canonical order (the order of the spine's ports).
    pub fn points_on(&self, line: Line) -> Vec<Point> {
        let f = &self.field;
        let n = self.n();
        match line {
            Line::L => std::iter::once(Point::P)
                .chain((0..n).map(Point::Slope))
                .collect(),
            Line::Column(c) => std::iter::once(Point::P)
                .chain((0..n).map(|i| Point::Grid(c, i)))
                .collect(),
            Line::Sloped(c, r) => std::iter::once(Point::Slope(c))
                .chain((0..n).map(|i| Point::Grid(i, f.add(r, f.mul(c, i)))))
                .collect(),
        }
    }

    /// The line through two distinct points (the spine of their unique two-hop path), or `None`
    /// if a = b.
    pub fn line_through(&self, a: Point, b: Point) -> Option<Line> {
        let f = &self.field;
        let line = match (a.min(b), a.max(b)) {
            (a, b) if a == b => return None,
            (Point::P, Point::Slope(_)) | (Point::Slope(_), Point::Slope(_)) => Line::L,
            (Point::P, Point::Grid(c, _)) => Line::Column(c),
            (Point::Slope(c), Point::Grid(x, y)) => Line::Sloped(c, f.sub(y, f.mul(c, x))),
            (Point::Grid(x, y), Point::Grid(x2, y2)) => {
                if x == x2 {
                    Line::Column(x)
                } else {
                    let slope = f.mul(f.sub(y2, y), f.inv(f.sub(x2, x)).expect("x ≠ x2"));
                    Line::Sloped(slope, f.sub(y, f.mul(slope, x)))
                }
            }
            _ => unreachable!("points are ordered P < P(c) < P(c,r)"),
        };
        Some(line)
    }

    /// The point where two distinct lines meet (the leaf they share), or `None` if a = b.
    pub fn meet(&self, a: Line, b: Line) -> Option<Point> {
        let f = &self.field;
        let point = match (a.min(b), a.max(b)) {
            (a, b) if a == b => return None,
            (Line::L, Line::Column(_)) | (Line::Column(_), Line::Column(_)) => Point::P,
            (Line::L, Line::Sloped(c, _)) => Point::Slope(c),
            (Line::Column(x), Line::Sloped(c, r)) => Point::Grid(x, f.add(r, f.mul(c, x))),
            (Line::Sloped(c, r), Line::Sloped(c2, r2)) => {
                if c == c2 {
                    Point::Slope(c)
                } else {
                    let x = f.mul(f.sub(r2, r), f.inv(f.sub(c, c2)).expect("c ≠ c2"));
                    Point::Grid(x, f.add(r, f.mul(c, x)))
                }
            }
            _ => unreachable!("lines are ordered L < L(c) < L(c,r)"),
        };
        Some(point)
    }

    /// The leaf port of `point` towards the spine of `line` (n + 2 ..= 2n + 2), if incident.
    pub fn leaf_port(&self, point: Point, line: Line) -> Option<u32> {
        self.line_position(point, line).map(|t| self.n() + 2 + t)
    }

    /// The spine port of `line` towards the leaf of `point` (1 ..= n + 1), if incident.
    pub fn spine_port(&self, line: Line, point: Point) -> Option<u32> {
        self.point_position(line, point).map(|t| 1 + t)
    }

    /// The default rack of a point's leaf and servers: c for `P(c,r)`, n for `P` and `P(c)`.
    pub fn point_rack(&self, point: Point) -> u32 {
        match point {
            Point::Grid(c, _) => c,
            Point::P | Point::Slope(_) => self.n(),
        }
    }

    /// The default rack of a line's spine: c for `L(c,r)`, n for `L` and `L(c)`.
    pub fn line_rack(&self, line: Line) -> u32 {
        match line {
            Line::Sloped(c, _) => c,
            Line::L | Line::Column(_) => self.n(),
        }
    }

    /// Homogeneous coordinates [x:y:z] of a point: P = [0:1:0], P(c) = [1:c:0], P(c,r) = [c:r:1].
    pub fn point_coordinates(&self, point: Point) -> [u32; 3] {
        match point {
            Point::P => [0, 1, 0],
            Point::Slope(c) => [1, c, 0],
            Point::Grid(c, r) => [c, r, 1],
        }
    }

    /// Homogeneous coordinates [a:b:e] of a line (the points with ax + by + ez = 0):
    /// L = [0:0:1], L(c) = [1:0:−c], L(c,r) = [c:−1:r].
    pub fn line_coordinates(&self, line: Line) -> [u32; 3] {
        let f = &self.field;
        match line {
            Line::L => [0, 0, 1],
            Line::Column(c) => [1, 0, f.neg(c)],
            Line::Sloped(c, r) => [c, f.neg(1), r],
        }
    }
}

fn size_of(n: u32) -> Size {
    let n = n as usize;
    let points = n * n + n + 1;
    Size {
        switches: 2 * points,
        endpoints: (n + 1) * points,
        ports_per_switch: 2 * (n + 1),
    }
}

impl Construction for Lsft {
    fn name(&self) -> String {
        format!("lsft-n{}", self.n())
    }

    fn size(&self) -> Size {
        size_of(self.n())
    }

    fn build(&self) -> Fabric {
        let n = self.n();
        let ports = self.ports_per_switch() as usize;
        let mut builder = FabricBuilder::new(self.name());
        let points: Vec<Point> = (0..self.points()).map(|i| self.point(i)).collect();
        let leaves: Vec<_> = points
            .iter()
            .map(|&p| builder.switch(p.to_string(), ports, Some(self.point_rack(p))))
            .collect();
        for index in 0..self.points() {
            let line = self.line(index);
            let spine = builder.switch(line.to_string(), ports, Some(self.line_rack(line)));
            for (t, point) in self.points_on(line).into_iter().enumerate() {
                let leaf_port = self.leaf_port(point, line).expect("point on its line");
                builder.cable(
                    leaves[self.point_index(point)],
                    leaf_port as usize,
                    spine,
                    t + 1,
                );
            }
        }
        for (&point, &leaf) in points.iter().zip(&leaves) {
            for k in 0..=n {
                let server = builder.host(format!("{point}-s{k}"), Some(self.point_rack(point)));
                builder.cable(leaf, k as usize + 1, server, 1);
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

    const ORDERS: [u32; 9] = [2, 3, 4, 5, 7, 8, 9, 11, 13];

    fn valid_ns(max: u32) -> impl Iterator<Item = u32> {
        (2..=max).filter(|&n| prime_power(n).is_some())
    }

    #[test]
    fn incidence_is_a_projective_plane_for_every_prime_power_up_to_32() {
        for n in valid_ns(32) {
            let lsft = Lsft::new(n).unwrap();
            let count = lsft.points();
            let points: Vec<Point> = (0..count).map(|i| lsft.point(i)).collect();
            let lines: Vec<Line> = (0..count).map(|i| lsft.line(i)).collect();
            let on: Vec<Vec<bool>> = points
                .iter()
                .map(|&p| lines.iter().map(|&l| lsft.incident(p, l)).collect())
                .collect();
            for (i, &p) in points.iter().enumerate() {
                assert_eq!(lsft.point_index(p), i);
                assert_eq!(lsft.line_index(lines[i]), i);
                let through = lsft.lines_through(p);
                assert_eq!(through.len() as u32, n + 1, "n={n}: lines through {p}");
                assert!(
                    through
                        .windows(2)
                        .all(|w| lsft.line_index(w[0]) < lsft.line_index(w[1]))
                );
                assert_eq!(on[i].iter().filter(|&&x| x).count() as u32, n + 1);
                for (t, &l) in through.iter().enumerate() {
                    assert!(on[i][lsft.line_index(l)]);
                    assert_eq!(lsft.line_position(p, l), Some(t as u32));
                }
            }
            for (j, &l) in lines.iter().enumerate() {
                let pts = lsft.points_on(l);
                assert_eq!(pts.len() as u32, n + 1, "n={n}: points on {l}");
                assert!(
                    pts.windows(2)
                        .all(|w| lsft.point_index(w[0]) < lsft.point_index(w[1]))
                );
                assert_eq!((0..count).filter(|&i| on[i][j]).count() as u32, n + 1);
                for (t, &p) in pts.iter().enumerate() {
                    assert!(on[lsft.point_index(p)][j]);
                    assert_eq!(lsft.point_position(l, p), Some(t as u32));
                }
            }
            // Two points span exactly one line, two lines meet in exactly one point.
            for a in 0..count {
                for b in a + 1..count {
                    let common: Vec<usize> = (0..count).filter(|&j| on[a][j] && on[b][j]).collect();
                    assert_eq!(common.len(), 1, "n={n}: {} {}", points[a], points[b]);
                    assert_eq!(
                        lsft.line_through(points[a], points[b]),
                        Some(lines[common[0]])
                    );
                    assert_eq!(
                        lsft.line_through(points[b], points[a]),
                        Some(lines[common[0]])
                    );
                    let meet: Vec<usize> = (0..count).filter(|&i| on[i][a] && on[i][b]).collect();
                    assert_eq!(meet.len(), 1, "n={n}: {} {}", lines[a], lines[b]);
                    assert_eq!(lsft.meet(lines[a], lines[b]), Some(points[meet[0]]));
                    assert_eq!(lsft.meet(lines[b], lines[a]), Some(points[meet[0]]));
                }
                assert_eq!(lsft.line_through(points[a], points[a]), None);
                assert_eq!(lsft.meet(lines[a], lines[a]), None);
            }
        }
    }

    #[test]
    fn names_agree_with_homogeneous_coordinates() {
        for n in valid_ns(32) {
            let lsft = Lsft::new(n).unwrap();
            let f = lsft.field();
            let dot =
                |u: [u32; 3], v: [u32; 3]| (0..3).fold(0, |acc, i| f.add(acc, f.mul(u[i], v[i])));
            let mut seen = std::collections::HashSet::new();
            for i in 0..lsft.points() {
                let p = lsft.point(i);
                assert!(
                    seen.insert(lsft.point_coordinates(p)),
                    "n={n}: distinct points"
                );
                for j in 0..lsft.points() {
                    let l = lsft.line(j);
                    let zero = dot(lsft.point_coordinates(p), lsft.line_coordinates(l)) == 0;
                    assert_eq!(zero, lsft.incident(p, l), "n={n}: {p} on {l}");
                }
            }
        }
    }

    #[test]
    fn switch_graph_structure_for_the_orders_of_the_notes() {
        for n in ORDERS {
            let lsft = Lsft::new(n).unwrap();
            let fabric = lsft.build();
            let count = lsft.points();
            let nu = n as usize;
            let summary = fabric.summary();
            assert_eq!(summary.switches, 2 * count, "n={n}");
            assert_eq!(summary.hosts, (nu + 1) * count, "n={n}: servers");
            assert_eq!(summary.switch_links, (nu + 1) * count, "n={n}: incidences");
            assert_eq!(summary.host_links, summary.hosts);
            assert_eq!(lsft.size().switches, summary.switches);
            assert_eq!(lsft.size().endpoints, summary.hosts);
            let graph = SwitchGraph::new(&fabric);
            for s in 0..graph.len() {
                assert_eq!(graph.neighbours(s).len(), nu + 1, "n={n}: degree of {s}");
                assert_eq!(graph.cable_degree(s) as usize, nu + 1, "n={n}: simple");
                let hosts = fabric
                    .neighbours(graph.node(s))
                    .filter(|(_, p)| fabric.node(p.node).kind == NodeKind::Ca)
                    .count();
                assert_eq!(hosts, if s < count { nu + 1 } else { 0 }, "n={n}");
            }
            // Every two leaves share exactly one spine, every two spines exactly one leaf.
            for a in 0..graph.len() {
                let dist = graph.distances_from(a);
                for (b, &distance) in dist.iter().enumerate().skip(a + 1) {
                    let common = graph
                        .neighbours(a)
                        .iter()
                        .filter(|t| graph.neighbours(b).contains(t))
                        .count();
                    let same_side = (a < count) == (b < count);
                    assert_eq!(common, usize::from(same_side), "n={n}: ({a},{b})");
                    let expected = if same_side {
                        2
                    } else if graph.neighbours(a).contains(&(b as u32)) {
                        1
                    } else {
                        3
                    };
                    assert_eq!(distance, expected, "n={n}: distance ({a},{b})");
                }
            }
            // The Levi graph of a projective plane: diameter 3, girth 6.
            assert_eq!(graph.diameter(), Some(3), "n={n}");
            assert_eq!(graph.girth(), Some(6), "n={n}");
            assert_eq!(graph.triangles(), 0);
        }
    }

    #[test]
    fn every_cable_follows_the_documented_port_plan() {
        for n in [2, 3, 4, 5, 9] {
            let lsft = Lsft::new(n).unwrap();
            let fabric = lsft.build();
            let by_name: HashMap<String, Result<Point, Line>> = (0..lsft.points())
                .flat_map(|i| {
                    let (p, l) = (lsft.point(i), lsft.line(i));
                    [(p.to_string(), Ok(p)), (l.to_string(), Err(l))]
                })
                .collect();
            let mut uplinks = 0;
            for link in fabric.links() {
                for (end, other) in [(link.a, link.b), (link.b, link.a)] {
                    let (me, peer) = (fabric.node(end.node), fabric.node(other.node));
                    let port = u32::from(end.port);
                    match (by_name.get(&me.name), by_name.get(&peer.name)) {
                        (Some(&Ok(point)), Some(&Err(line))) => {
                            let through = lsft.lines_through(point);
                            let t = through.iter().position(|&x| x == line).unwrap() as u32;
                            assert_eq!(port, n + 2 + t, "n={n}: {point} -> {line}");
                            assert_eq!(me.rack, Some(lsft.point_rack(point)));
                            uplinks += 1;
                        }
                        (Some(&Err(line)), Some(&Ok(point))) => {
                            let pts = lsft.points_on(line);
                            let t = pts.iter().position(|&x| x == point).unwrap() as u32;
                            assert_eq!(port, 1 + t, "n={n}: {line} -> {point}");
                            assert_eq!(me.rack, Some(lsft.line_rack(line)));
                        }
                        (Some(&Ok(point)), None) => {
                            let k: u32 = peer
                                .name
                                .strip_prefix(&format!("{point}-s"))
                                .unwrap()
                                .parse()
                                .unwrap();
                            assert_eq!(port, k + 1, "n={n}: {}", peer.name);
                            assert_eq!(peer.rack, me.rack);
                        }
                        (None, Some(&Ok(_))) => assert_eq!(port, 1),
                        _ => panic!("n={n}: unexpected cable {} - {}", me.name, peer.name),
                    }
                }
            }
            assert_eq!(uplinks, (n as usize + 1) * lsft.points());
        }
        // Spot checks of the plan for n = 3.
        let lsft = Lsft::new(3).unwrap();
        assert_eq!(
            lsft.lines_through(Point::Grid(1, 2)),
            [
                Line::Column(1),
                Line::Sloped(0, 2),
                Line::Sloped(1, 1),
                Line::Sloped(2, 0)
            ]
        );
        assert_eq!(
            lsft.points_on(Line::Sloped(2, 1)),
            [
                Point::Slope(2),
                Point::Grid(0, 1),
                Point::Grid(1, 0),
                Point::Grid(2, 2)
            ]
        );
        assert_eq!(
            lsft.leaf_port(Point::Grid(1, 2), Line::Sloped(1, 1)),
            Some(7)
        );
        assert_eq!(
            lsft.spine_port(Line::Sloped(2, 1), Point::Grid(2, 2)),
            Some(4)
        );
        assert_eq!(lsft.leaf_port(Point::Grid(1, 2), Line::L), None);
    }

    #[test]
    fn names_node_order_and_racks() {
        let lsft = Lsft::new(3).unwrap();
        let fabric = lsft.build();
        let names: Vec<&str> = fabric.nodes().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names[..6],
            ["P", "P(0)", "P(1)", "P(2)", "P(0,0)", "P(0,1)"]
        );
        assert_eq!(names[12], "P(2,2)");
        assert_eq!(names[13..17], ["L", "L(0)", "L(1)", "L(2)"]);
        assert_eq!(names[25], "L(2,2)");
        assert_eq!(names[26..28], ["P-s0", "P-s1"]);
        assert_eq!(names.last(), Some(&"P(2,2)-s3"));
        assert_eq!(lsft.name(), "lsft-n3");
        for n in ORDERS {
            let fabric = Lsft::new(n).unwrap().build();
            let mut per_rack: HashMap<u32, (usize, usize, usize)> = HashMap::new();
            for node in fabric.nodes() {
                let e = per_rack.entry(node.rack.unwrap()).or_default();
                match (node.kind, node.name.starts_with('L')) {
                    (NodeKind::Switch, false) => e.0 += 1,
                    (NodeKind::Switch, true) => e.1 += 1,
                    _ => e.2 += 1,
                }
            }
            let nu = n as usize;
            assert_eq!(per_rack.len(), nu + 1);
            for c in 0..n {
                assert_eq!(per_rack[&c], (nu, nu, nu * (nu + 1)), "n={n}: rack {c}");
            }
            assert_eq!(per_rack[&n], (nu + 1, nu + 1, (nu + 1) * (nu + 1)));
        }
    }

    #[test]
    fn sizes_match_table_5_of_the_paper() {
        for (n, servers) in [
            (3, 52),
            (5, 186),
            (7, 456),
            (11, 1596),
            (13, 2562),
            (17, 5526),
        ] {
            assert_eq!(Lsft::new(n).unwrap().size().endpoints, servers, "n={n}");
        }
        assert_eq!(Lsft::new(17).unwrap().size().ports_per_switch, 36);
    }

    #[test]
    fn impossible_n_is_refused_with_the_nearest_valid_ones() {
        assert_eq!(
            Lsft::new(6).unwrap_err().to_string(),
            "lsft: n = 6 is not a prime power; nearest valid: \
             n = 5 (62 switches, 186 endpoints, 12 ports per switch), \
             n = 7 (114 switches, 456 endpoints, 16 ports per switch)"
        );
        let err = Lsft::new(10).unwrap_err().to_string();
        assert!(err.contains("n = 9 (182 switches, 910 endpoints, 20 ports per switch)"));
        assert!(err.contains("n = 11 (266 switches, 1596 endpoints, 24 ports per switch)"));
        assert!(
            Lsft::new(1)
                .unwrap_err()
                .to_string()
                .ends_with("nearest valid: n = 2 (14 switches, 21 endpoints, 6 ports per switch)")
        );
        let err = Lsft::new(127).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "lsft: n = 127 needs 256 ports per switch (at most 254); nearest valid: n = 125"
            ),
            "{err}"
        );
        assert!(Lsft::new(125).is_ok());
        for n in 0..=200 {
            assert_eq!(
                Lsft::new(n).is_ok(),
                prime_power(n).is_some() && 2 * (n + 1) <= 254,
                "n={n}"
            );
        }
    }
}
