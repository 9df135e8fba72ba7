//! The schedules: shift (baseline), MLFM partial all-to-all, Latin-square full and partial.

use super::{AdmissibilityError, Phase, Schedule};
use crate::topology::lsft::{Lsft, Point};
use crate::topology::mlfm::Mlfm;

/// The shift pattern over `ranks` (server names in rank order): in phase p rank r sends to
/// rank (r + p) mod N. Phase 0 is every rank's message to itself.
pub fn shift(ranks: Vec<String>) -> Schedule {
    let n = ranks.len() as u32;
    let phases = (0..n)
        .map(|p| Phase {
            label: format!("shift {p}"),
            destination: (0..n).map(|r| (r + p) % n).collect(),
            lid_offset: Vec::new(),
        })
        .collect();
    Schedule {
        name: format!("shift ({n} ranks)"),
        ranks,
        phases,
        layers: 1,
    }
}

/// How the MLFM schedule picks the spine of same-column traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MlfmSpine {
    /// The paper: by the *source* server k, spine {j, (j + k + 1) mod ℓ}. IB forwards by
    /// destination, so the flow's LID offset (layer) is k and the fabric needs m LID layers
    /// ([`super::mlfm_layer_tables`]).
    #[default]
    BySource,
    /// Ours: by the *destination* server k', spine {j, (j + k' + 1) mod ℓ} — just as
    /// congestion-free (the m destinations of a leaf in a phase are distinct), and plain
    /// destination routing realises it with one layer, so it fits every machine's LID space.
    ByDestination,
}

/// The peer column of the spine that layer `x` uses for same-column traffic in column `j`
/// when the allocation spans `columns` = ℓ columns of an MLFM with d = `d`:
/// (j + x + 1) mod ℓ for j < ℓ and x + 1 < ℓ; otherwise the machine's offset arithmetic
/// (j + (x mod d) + 1) mod (d + 1).
pub fn same_column_peer(j: u32, x: u32, columns: u32, d: u32) -> u32 {
    if j < columns && x + 1 < columns {
        (j + x + 1) % columns
    } else {
        (j + (x % d) + 1) % (d + 1)
    }
}

/// Checks the MLFM parameters: 1 ≤ n ≤ d layers, 2 ≤ ℓ ≤ d + 1 columns, 1 ≤ m ≤ ℓ − 1 servers
/// per leaf (the corrected constraint; the paper prints ℓ − 1 ≤ m).
pub fn mlfm_admissible(d: u32, n: u32, l: u32, m: u32) -> Result<(), AdmissibilityError> {
    let rule = format!(
        "admissible for d = {d}: 1 ≤ n ≤ {d}, 2 ≤ ℓ ≤ {}, 1 ≤ m ≤ ℓ − 1 (so m ≤ {d})",
        d + 1
    );
    // The construction's own message says what is wrong with d and the nearest valid d; the
    // bounds of n, ℓ and m mean nothing before d is valid.
    if let Err(e) = Mlfm::new(d) {
        return Err(AdmissibilityError(e.to_string()));
    }
    let problem = if n == 0 || n > d {
        Some(format!("n = {n} layers"))
    } else if l < 2 || l > d + 1 {
        Some(format!("ℓ = {l} columns"))
    } else if m == 0 || m >= l {
        Some(format!(
            "m = {m} servers per leaf with ℓ = {l} (same-column traffic of server k uses spine \
             {{j, (j + k + 1) mod ℓ}}, which needs k + 1 < ℓ)"
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(AdmissibilityError(format!(
            "mlfm: {p} is not admissible; {rule}"
        ))),
        None => Ok(()),
    }
}

/// The MLFM partial all-to-all (the MLFM paper §2) on servers (i, j, k), i < n, j < ℓ, k < m of
/// the MLFM of 2d-port switches. Ranks are (i·ℓ + j)·m + k; phases (s, t, u) in lexicographic
/// order. In phase (s, t, u) server (i, j, k) sends to ((i + s) mod n, j', (k + u) mod m) with
/// j' = j for t = 0 and otherwise j' = (j + o) mod ℓ if o = t + k + 1 < ℓ, else (j + o + 1) mod ℓ.
/// Same-column flows (t = 0, s ≠ 0) cross the spine chosen by `spine`; their LID offset is k
/// for [`MlfmSpine::BySource`] (so the schedule has m layers), 0 otherwise.
///
/// # Errors
/// Inadmissible parameters ([`mlfm_admissible`]).
pub fn mlfm(
    d: u32,
    n: u32,
    l: u32,
    m: u32,
    spine: MlfmSpine,
) -> Result<Schedule, AdmissibilityError> {
    mlfm_admissible(d, n, l, m)?;
    Ok(mlfm_unchecked(d, n, l, m, spine))
}

/// [`mlfm`] without the admissibility check (for the exhaustive tests: the schedule of
/// inadmissible parameters is well defined as a destination table).
pub fn mlfm_unchecked(d: u32, n: u32, l: u32, m: u32, spine: MlfmSpine) -> Schedule {
    let rank = |i: u32, j: u32, k: u32| (i * l + j) * m + k;
    let mut ranks = Vec::with_capacity((n * l * m) as usize);
    for i in 0..n {
        for j in 0..l {
            for k in 0..m {
                ranks.push(format!("srv{i}-{j}-{k}"));
            }
        }
    }
    let by_source = spine == MlfmSpine::BySource && n > 1;
    let mut phases = Vec::with_capacity(ranks.len());
    for s in 0..n {
        for t in 0..l {
            for u in 0..m {
                let mut destination = vec![0; ranks.len()];
                let mut lid_offset = if by_source {
                    vec![0; ranks.len()]
                } else {
                    Vec::new()
                };
                for i in 0..n {
                    for j in 0..l {
                        for k in 0..m {
                            let j2 = if t == 0 {
                                j
                            } else {
                                let o = t + k + 1;
                                if o < l { (j + o) % l } else { (j + o + 1) % l }
                            };
                            let r = rank(i, j, k) as usize;
                            destination[r] = rank((i + s) % n, j2, (k + u) % m);
                            if by_source && t == 0 && s != 0 {
                                lid_offset[r] = k as u8;
                            }
                        }
                    }
                }
                phases.push(Phase {
                    label: format!("(s,t,u) = ({s},{t},{u})"),
                    destination,
                    lid_offset,
                });
            }
        }
    }
    let layers = if by_source {
        (m as usize).next_power_of_two()
    } else {
        1
    };
    Schedule {
        name: format!("mlfm d={d} n={n} l={l} m={m}"),
        ranks,
        phases,
        layers,
    }
}

/// The server name of server `k` of the leaf of `point` in an LSFT.
fn lsft_server(point: Point, k: u32) -> String {
    format!("{point}-s{k}")
}

/// The Latin-square full all-to-all (Latin-square paper §3.1) on all (n + 1)(n² + n + 1)
/// servers of the LSFT of order n. Ranks: points in canonical order, then server k (the
/// fabric's node order). Phases: the shift triples (a, b, c) ∈ {0..n}³ with b ≠ 0 or b = c = 0,
/// lexicographic. Ports are numbered as the construction's port plan: a leaf's lower port k is
/// its server k, its upper port t its t-th line (canonical order); a spine's port t is its t-th
/// point. A flow goes up with shift a, across the spine with shift b, down with shift c.
///
/// # Errors
/// n not a prime power (or too large).
pub fn lsft_full(n: u32) -> Result<Schedule, AdmissibilityError> {
    let lsft = Lsft::new(n)
        .map_err(|e| AdmissibilityError(format!("{e}; admissible: n a prime power")))?;
    let points = lsft.points();
    let d = n + 1;
    let mut ranks = Vec::with_capacity(points * d as usize);
    for p in 0..points {
        for k in 0..d {
            ranks.push(lsft_server(lsft.point(p), k));
        }
    }
    let lines: Vec<Vec<_>> = (0..points)
        .map(|p| lsft.lines_through(lsft.point(p)))
        .collect();
    let line_points: Vec<Vec<usize>> = (0..points)
        .map(|l| {
            lsft.points_on(lsft.line(l))
                .into_iter()
                .map(|p| lsft.point_index(p))
                .collect()
        })
        .collect();
    let mut phases = Vec::with_capacity(ranks.len());
    for a in 0..d {
        for b in 0..d {
            for c in 0..d {
                if b == 0 && c != 0 {
                    continue;
                }
                let mut destination = vec![0; ranks.len()];
                for p in 0..points {
                    let point = lsft.point(p);
                    for k in 0..d {
                        let t = (k + a) % d;
                        let line = lines[p][t as usize];
                        let li = lsft.line_index(line);
                        let x = lsft.point_position(line, point).expect("incident");
                        let q = line_points[li][((x + b) % d) as usize];
                        let t2 = lsft.line_position(lsft.point(q), line).expect("incident");
                        let k2 = (t2 + c) % d;
                        destination[p * d as usize + k as usize] = q as u32 * d + k2;
                    }
                }
                phases.push(Phase {
                    label: format!("(a,b,c) = ({a},{b},{c})"),
                    destination,
                    lid_offset: Vec::new(),
                });
            }
        }
    }
    Ok(Schedule {
        name: format!("lsft full n={n}"),
        ranks,
        phases,
        layers: 1,
    })
}

/// Checks the partial LSFT parameters: n a prime power, 1 ≤ k ≤ n, and 1 ≤ m ≤ k or
/// m = k + 1 with k ≥ n − 1 (so m ≤ n + 1, the servers of a leaf).
///
/// The paper states 1 ≤ m ≤ k ≤ n; the exhaustive check (every k, m for n ∈ {2, 3, 4, 5, 7})
/// finds the scheme also congestion-free for m = k + 1 when k ≥ n − 1 (e.g. the whole
/// n × n grid with all n + 1 servers per leaf) and congested for every other m > k.
pub fn lsft_partial_admissible(n: u32, k: u32, m: u32) -> Result<(), AdmissibilityError> {
    let rule = "admissible: n a prime power, 1 ≤ k ≤ n, and 1 ≤ m ≤ k ≤ n (the paper's rule) \
                or m = k + 1 with k ≥ n − 1";
    if let Err(e) = Lsft::new(n) {
        // The construction's message starts with `lsft: ` itself.
        return Err(AdmissibilityError(format!("{e}; {rule}")));
    }
    if k == 0 || k > n {
        return Err(AdmissibilityError(format!(
            "lsft: k = {k} columns of the {n} × {n} grid is not admissible; {rule}"
        )));
    }
    if m == 0 || m > k + 1 || (m == k + 1 && k + 1 < n) {
        return Err(AdmissibilityError(format!(
            "lsft: m = {m} servers per leaf with k = {k} is not admissible (two flows of a \
             phase would share a spine link); {rule}"
        )));
    }
    Ok(())
}

/// A vector of the partial scheme: slope (None = ∞) and hop, or the zero vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vector {
    /// [s, h]: slope s (`None` = ∞), hop h.
    Move(Option<u32>, u32),
    /// [*]: stay.
    Zero,
}

/// Column 0 of the vector table: `[∞, 1..n−1]`, then `[s, 1..k−1]` for s = 0..n−1, then `[*]`.
pub fn lsft_vector_column(n: u32, k: u32) -> Vec<Vector> {
    let mut col: Vec<Vector> = (1..n).map(|h| Vector::Move(None, h)).collect();
    for s in 0..n {
        col.extend((1..k).map(|h| Vector::Move(Some(s), h)));
    }
    col.push(Vector::Zero);
    col
}

/// The Latin-square partial all-to-all (Latin-square paper §3.2, the text's formula) on the
/// n × k rectangle of grid leaves P(x, y), x < k, and servers 0..m−1 of each. Ranks (as the
/// paper's Table 3): (y·k + x)·m + ID. Phase group g, phase i: server (a, ID j) sends to
/// server (i + j) mod m of the leaf `T[g][j](a)`, `T[g][j] = col0[(g − j(n − 1)) mod nk]`.
/// A move by [s, h]: b_x = (a_x + h) mod k, b_y = a_y + s·(b_x − a_x) (in GF(n)); [∞, h]:
/// (a_x, a_y + h).
///
/// # Errors
/// Inadmissible parameters ([`lsft_partial_admissible`]).
pub fn lsft_partial(n: u32, k: u32, m: u32) -> Result<Schedule, AdmissibilityError> {
    lsft_partial_admissible(n, k, m)?;
    Ok(lsft_partial_unchecked(n, k, m))
}

/// [`lsft_partial`] without the admissibility check (m may be up to n + 1).
///
/// # Panics
/// n not a prime power, k > n or m > n + 1.
pub fn lsft_partial_unchecked(n: u32, k: u32, m: u32) -> Schedule {
    let lsft = Lsft::new(n).expect("prime power n");
    assert!(k >= 1 && k <= n && m >= 1 && m <= n + 1);
    let f = lsft.field();
    let rank = |x: u32, y: u32, id: u32| (y * k + x) * m + id;
    let mut ranks = vec![String::new(); (n * k * m) as usize];
    for y in 0..n {
        for x in 0..k {
            for id in 0..m {
                ranks[rank(x, y, id) as usize] = lsft_server(Point::Grid(x, y), id);
            }
        }
    }
    let col = lsft_vector_column(n, k);
    let groups = (n * k) as usize;
    let apply = |v: Vector, (ax, ay): (u32, u32)| match v {
        Vector::Zero => (ax, ay),
        Vector::Move(None, h) => (ax, f.add(ay, h)),
        Vector::Move(Some(s), h) => {
            let bx = (ax + h) % k;
            (bx, f.add(ay, f.mul(s, f.sub(bx, ax))))
        }
    };
    let mut phases = Vec::with_capacity(ranks.len());
    for g in 0..groups {
        for i in 0..m {
            let mut destination = vec![0; ranks.len()];
            for y in 0..n {
                for x in 0..k {
                    for j in 0..m {
                        let shift = (j as usize * (n as usize - 1)) % groups;
                        let v = col[(g + groups - shift) % groups];
                        let (bx, by) = apply(v, (x, y));
                        destination[rank(x, y, j) as usize] = rank(bx, by, (i + j) % m);
                    }
                }
            }
            phases.push(Phase {
                label: format!("group {g} phase {i}"),
                destination,
                lid_offset: Vec::new(),
            });
        }
    }
    Schedule {
        name: format!("lsft partial n={n} k={k} m={m}"),
        ranks,
        phases,
        layers: 1,
    }
}
