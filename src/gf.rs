//! Finite fields GF(p^k) for the topology constructions (Slim Fly, PolarFly, projective planes).
//!
//! Elements are the integers `0..q`, read as polynomials over Z_p in base p:
//! `a0 + a1·p + a2·p² + …` stands for `a0 + a1·x + a2·x² + …` (mod the field polynomial).
//! For a prime q this is plain arithmetic mod q.
//!
//! The field polynomial is the Conway polynomial where one is tabulated (so element encodings match
//! the published generator sets), otherwise the first monic polynomial, in encoding order, that
//! yields a field. The primitive element is never assumed: it is the smallest element whose
//! multiplicative order is found to be exactly q − 1. Finding one also proves the polynomial
//! irreducible (a ring with zero divisors has fewer than q − 1 units).

use std::fmt;

/// Conway polynomials for the prime powers the constructions use most, as
/// (p, k, coefficients c0..c(k-1) of the monic polynomial x^k + c(k-1)x^(k-1) + … + c0).
const CONWAY: &[(u32, u32, &[u32])] = &[
    (2, 2, &[1, 1]),
    (2, 3, &[1, 1, 0]),
    (2, 4, &[1, 1, 0, 0]),
    (2, 5, &[1, 0, 1, 0, 0]),
    (2, 6, &[1, 1, 0, 1, 1, 0]),
    (2, 7, &[1, 1, 0, 0, 0, 0, 0]),
    (3, 2, &[2, 2]),
    (3, 3, &[1, 2, 0]),
    (3, 4, &[2, 0, 0, 2]),
    (5, 2, &[2, 4]),
    (5, 3, &[3, 3, 0]),
    (7, 2, &[3, 6]),
    (11, 2, &[2, 7]),
    (13, 2, &[2, 12]),
    (17, 2, &[3, 16]),
    (19, 2, &[2, 18]),
];

/// Why a field could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// q is not p^k for a prime p and k ≥ 1.
    #[error("{0} is not a prime power")]
    NotPrimePower(u32),
    /// q is larger than the tables this module is willing to build.
    #[error("GF({0}) is larger than the supported maximum GF({max})", max = GaloisField::MAX_ORDER)]
    TooLarge(u32),
}

/// The finite field GF(q), q = p^k, with precomputed log/exp and addition tables.
#[derive(Clone)]
pub struct GaloisField {
    p: u32,
    k: u32,
    q: u32,
    /// Coefficients c0..c(k-1) of the monic field polynomial (empty for k = 1).
    modulus: Vec<u32>,
    primitive: u32,
    /// exp[i] = ξ^i for i in 0..2(q-1), doubled so products need no reduction.
    exp: Vec<u32>,
    /// log[a] = i with ξ^i = a, for a ≠ 0 (log[0] is unused).
    log: Vec<u32>,
    /// add[a*q + b] = a + b.
    add: Vec<u32>,
    /// neg[a] = −a.
    neg: Vec<u32>,
}

impl fmt::Debug for GaloisField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GF({}) [p={}, k={}, ξ={}]",
            self.q, self.p, self.k, self.primitive
        )
    }
}

/// Returns `(p, k)` when `q = p^k` for a prime p and k ≥ 1.
pub fn prime_power(q: u32) -> Option<(u32, u32)> {
    if q < 2 {
        return None;
    }
    let p = (2..=q).find(|d| q.is_multiple_of(*d))?;
    let (mut rest, mut k) = (q, 0);
    while rest % p == 0 {
        rest /= p;
        k += 1;
    }
    (rest == 1).then_some((p, k))
}

impl GaloisField {
    /// The largest order built (tables are O(q²)).
    pub const MAX_ORDER: u32 = 1024;

    /// Builds GF(q).
    ///
    /// # Errors
    /// [`FieldError::NotPrimePower`] if q is not a prime power, [`FieldError::TooLarge`] above
    /// [`Self::MAX_ORDER`].
    pub fn new(q: u32) -> Result<Self, FieldError> {
        let (p, k) = prime_power(q).ok_or(FieldError::NotPrimePower(q))?;
        if q > Self::MAX_ORDER {
            return Err(FieldError::TooLarge(q));
        }
        // Addition is digit-wise mod p whatever the polynomial, so it is tabulated once.
        let add: Vec<u32> = (0..q)
            .flat_map(|a| (0..q).map(move |b| add_digits(a, b, p, k)))
            .collect();
        let neg: Vec<u32> = (0..q).map(|a| neg_digits(a, p, k)).collect();
        let conway = CONWAY.iter().find(|(cp, ck, _)| *cp == p && *ck == k);
        // Tabulated polynomial first, then every monic polynomial of degree k in encoding order.
        let candidates = conway
            .map(|(_, _, coeffs)| coeffs.to_vec())
            .into_iter()
            .chain((0..q).map(|code| digits(code, p, k)));
        for modulus in candidates {
            let modulus = if k == 1 { Vec::new() } else { modulus };
            if let Some((primitive, exp, log)) = power_tables(p, k, &modulus, &add) {
                return Ok(Self {
                    p,
                    k,
                    q,
                    modulus,
                    primitive,
                    exp,
                    log,
                    add,
                    neg,
                });
            }
        }
        Err(FieldError::NotPrimePower(q))
    }

    /// The order q of the field.
    pub fn order(&self) -> u32 {
        self.q
    }

    /// The characteristic p.
    pub fn characteristic(&self) -> u32 {
        self.p
    }

    /// The degree k of the field over Z_p.
    pub fn degree(&self) -> u32 {
        self.k
    }

    /// Coefficients c0..c(k−1) of the monic field polynomial x^k + … (empty for prime fields).
    pub fn modulus(&self) -> &[u32] {
        &self.modulus
    }

    /// The primitive element ξ used by [`Self::pow_primitive`].
    pub fn primitive(&self) -> u32 {
        self.primitive
    }

    /// a + b.
    pub fn add(&self, a: u32, b: u32) -> u32 {
        self.add[(a * self.q + b) as usize]
    }

    /// −a.
    pub fn neg(&self, a: u32) -> u32 {
        self.neg[a as usize]
    }

    /// a − b.
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        self.add(a, self.neg(b))
    }

    /// a · b.
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        if a == 0 || b == 0 {
            return 0;
        }
        self.exp[(self.log[a as usize] + self.log[b as usize]) as usize]
    }

    /// The multiplicative inverse of a, or `None` for 0.
    pub fn inv(&self, a: u32) -> Option<u32> {
        (a != 0).then(|| self.exp[((self.q - 1 - self.log[a as usize]) % (self.q - 1)) as usize])
    }

    /// ξ^e for the primitive element ξ.
    pub fn pow_primitive(&self, e: u32) -> u32 {
        self.exp[(e % (self.q - 1)) as usize]
    }

    /// All elements, in encoding order.
    pub fn elements(&self) -> std::ops::Range<u32> {
        0..self.q
    }
}

/// The base-p digits (lowest first) of `value`, k of them.
fn digits(mut value: u32, p: u32, k: u32) -> Vec<u32> {
    (0..k)
        .map(|_| {
            let d = value % p;
            value /= p;
            d
        })
        .collect()
}

fn from_digits(digits: &[u32], p: u32) -> u32 {
    digits.iter().rev().fold(0, |acc, &d| acc * p + d)
}

fn add_digits(a: u32, b: u32, p: u32, k: u32) -> u32 {
    let sum: Vec<u32> = digits(a, p, k)
        .iter()
        .zip(digits(b, p, k))
        .map(|(x, y)| (x + y) % p)
        .collect();
    from_digits(&sum, p)
}

fn neg_digits(a: u32, p: u32, k: u32) -> u32 {
    let neg: Vec<u32> = digits(a, p, k).iter().map(|d| (p - d) % p).collect();
    from_digits(&neg, p)
}

/// a · b in Z_p[x]/(x^k + modulus), by shift-and-add (only used while building the tables).
fn poly_mul(a: u32, b: u32, p: u32, k: u32, modulus: &[u32], add: &[u32], q: u32) -> u32 {
    if k == 1 {
        return (a * b) % p;
    }
    let times_x = |v: u32| -> u32 {
        // v·x = shift up; the coefficient falling off at x^k is replaced by −lead·modulus.
        let mut d = digits(v, p, k);
        let lead = d.pop().expect("k >= 2");
        d.insert(0, 0);
        for (coefficient, m) in d.iter_mut().zip(modulus) {
            *coefficient = (*coefficient + (p - lead * m % p)) % p;
        }
        from_digits(&d, p)
    };
    let scale = |v: u32, s: u32| -> u32 {
        let d: Vec<u32> = digits(v, p, k).iter().map(|c| c * s % p).collect();
        from_digits(&d, p)
    };
    let mut result = 0;
    let mut power = a; // a·x^i
    for coefficient in digits(b, p, k) {
        result = add[(result * q + scale(power, coefficient)) as usize];
        power = times_x(power);
    }
    result
}

/// For the ring Z_p[x]/(x^k + modulus): the smallest element of multiplicative order q − 1 and
/// its exp/log tables, or `None` when there is none (the ring is not a field).
fn power_tables(p: u32, k: u32, modulus: &[u32], add: &[u32]) -> Option<(u32, Vec<u32>, Vec<u32>)> {
    let q = p.pow(k);
    let mul = |a: u32, b: u32| poly_mul(a, b, p, k, modulus, add, q);
    let primitive = (1..q).find(|&g| multiplicative_order(g, q, &mul) == q - 1)?;
    let mut exp = Vec::with_capacity(2 * (q as usize - 1));
    let mut log = vec![0u32; q as usize];
    let mut value = 1u32;
    for i in 0..q - 1 {
        exp.push(value);
        log[value as usize] = i;
        value = mul(value, primitive);
    }
    exp.extend_from_within(..);
    Some((primitive, exp, log))
}

/// The multiplicative order of g, or 0 if its powers never return to 1 within q steps.
fn multiplicative_order(g: u32, q: u32, mul: &impl Fn(u32, u32) -> u32) -> u32 {
    let mut value = g;
    for order in 1..=q {
        if value == 1 {
            return order;
        }
        value = mul(value, g);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prime_powers_up_to(n: u32) -> impl Iterator<Item = u32> {
        (2..=n).filter(|&q| prime_power(q).is_some())
    }

    #[test]
    fn field_axioms_hold_for_every_prime_power_up_to_128() {
        for q in prime_powers_up_to(128) {
            let f = GaloisField::new(q).unwrap();
            assert_eq!(f.order(), q);
            // ξ has order exactly q − 1: its powers hit every non-zero element once.
            let mut seen = vec![false; q as usize];
            for e in 0..q - 1 {
                let v = f.pow_primitive(e);
                assert!(v != 0 && !seen[v as usize], "q={q}: ξ^{e} repeats");
                seen[v as usize] = true;
            }
            for a in f.elements() {
                assert_eq!(f.add(a, f.neg(a)), 0);
                assert_eq!(f.add(a, 0), a);
                assert_eq!(f.mul(a, 1), a);
                if a != 0 {
                    assert_eq!(f.mul(a, f.inv(a).unwrap()), 1, "q={q} a={a}");
                }
            }
            // Distributivity and commutativity on a sample that covers small fields fully.
            let step = (q / 16).max(1);
            for a in (0..q).step_by(step as usize) {
                for b in (0..q).step_by(step as usize) {
                    assert_eq!(f.mul(a, b), f.mul(b, a));
                    for c in (0..q).step_by(step as usize) {
                        let lhs = f.mul(a, f.add(b, c));
                        let rhs = f.add(f.mul(a, b), f.mul(a, c));
                        assert_eq!(lhs, rhs, "q={q}: {a}·({b}+{c})");
                    }
                }
            }
        }
    }

    #[test]
    fn prime_fields_use_the_smallest_primitive_root() {
        for (q, root) in [
            (3, 2),
            (5, 2),
            (7, 3),
            (11, 2),
            (13, 2),
            (17, 3),
            (19, 2),
            (23, 5),
            (41, 6),
        ] {
            assert_eq!(GaloisField::new(q).unwrap().primitive(), root, "q={q}");
        }
    }

    #[test]
    fn gf9_matches_the_conway_encoding() {
        // x² + 2x + 2 over Z_3: α² = α + 1, α = 3 in the encoding.
        let f = GaloisField::new(9).unwrap();
        assert_eq!(f.primitive(), 3);
        assert_eq!(f.mul(3, 3), 4);
    }

    #[test]
    fn non_prime_powers_are_refused() {
        for q in [0, 1, 6, 10, 12, 15, 18, 20, 21, 100] {
            assert_eq!(
                GaloisField::new(q).unwrap_err(),
                FieldError::NotPrimePower(q)
            );
        }
    }

    #[test]
    fn fields_without_a_tabulated_polynomial_are_found_by_search() {
        // 3^5, 7^3 and 2^9 are not in the Conway table; the search must still find a field.
        for q in [243, 343, 512] {
            let f = GaloisField::new(q).unwrap();
            assert_eq!(f.mul(f.primitive(), f.inv(f.primitive()).unwrap()), 1);
        }
    }
}
