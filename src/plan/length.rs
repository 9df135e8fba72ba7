//! Cable kinds and length classes.
//!
//! The model is deliberately simple and documented so a site can adjust it: racks stand side by
//! side in one row; a cable inside a rack runs vertically between the two U positions plus a
//! service allowance; a cable between racks climbs from each device to the overhead tray, runs
//! along the row and drops down. The estimate is rounded up to the next catalogue length.
//! Copper (passive DAC) is used inside a rack, optical (AOC) between racks, because DAC does not
//! reach across racks at EDR rates and above.

use std::fmt;
use std::str::FromStr;

/// Height of one rack unit in metres.
const RACK_UNIT_M: f64 = 0.04445;

/// Catalogue lengths of copper cables (DAC), in metres.
const COPPER_LENGTHS_M: [f64; 7] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0];
/// Catalogue lengths of optical cables (AOC), in metres.
const OPTICAL_LENGTHS_M: [f64; 10] = [3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 70.0, 100.0];

/// The kind of cable a connection needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CableKind {
    /// Passive copper (DAC), inside a rack.
    Copper,
    /// Active optical (AOC) or transceivers and fibre, between racks.
    Optical,
}

impl fmt::Display for CableKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CableKind::Copper => "copper",
            CableKind::Optical => "optical",
        })
    }
}

impl FromStr for CableKind {
    type Err = String;

    /// Reads `copper`/`dac` and `optical`/`aoc`/`fiber`/`fibre`; the placement words of other
    /// cable lists (`intra-rack`, `host` → copper; `inter-rack` → optical) are understood too.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "copper" | "dac" | "intra-rack" | "host" => Ok(CableKind::Copper),
            "optical" | "aoc" | "fiber" | "fibre" | "inter-rack" => Ok(CableKind::Optical),
            other => Err(format!(
                "unknown cable kind {other:?} (expected copper or optical)"
            )),
        }
    }
}

/// Geometry of the machine room for length estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LengthModel {
    /// Width of a rack, centre to centre, in metres.
    pub rack_width_m: f64,
    /// Height of the racks in rack units.
    pub rack_units: u32,
    /// Allowance for routing to the rack's side and a service loop, per cable, in metres.
    pub slack_m: f64,
    /// Height of the overhead tray above the rack top, in metres.
    pub tray_height_m: f64,
}

impl Default for LengthModel {
    fn default() -> Self {
        Self {
            rack_width_m: 0.6,
            rack_units: 42,
            slack_m: 1.0,
            tray_height_m: 0.3,
        }
    }
}

impl LengthModel {
    /// Kind and catalogue length of a cable between U `u_a` of rack position `rack_a` and U
    /// `u_b` of rack position `rack_b`.
    pub fn cable(
        &self,
        (rack_a, u_a): (usize, u32),
        (rack_b, u_b): (usize, u32),
    ) -> (CableKind, f64) {
        let height = |u: u32| f64::from(u) * RACK_UNIT_M;
        if rack_a == rack_b {
            let run = (height(u_a) - height(u_b)).abs() + self.slack_m;
            (CableKind::Copper, catalogue(&COPPER_LENGTHS_M, run))
        } else {
            let top = height(self.rack_units) + self.tray_height_m;
            let along = rack_a.abs_diff(rack_b) as f64 * self.rack_width_m;
            let run = (top - height(u_a)) + along + (top - height(u_b)) + self.slack_m;
            (CableKind::Optical, catalogue(&OPTICAL_LENGTHS_M, run))
        }
    }
}

/// The shortest catalogue length that is at least `run` (the longest one if none is).
fn catalogue(lengths: &[f64], run: f64) -> f64 {
    lengths
        .iter()
        .copied()
        .find(|&l| l >= run)
        .unwrap_or(lengths[lengths.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_grow_with_distance_and_stay_in_the_catalogue() {
        let m = LengthModel::default();
        assert_eq!(m.cable((0, 40), (0, 39)), (CableKind::Copper, 1.5));
        assert_eq!(m.cable((0, 42), (0, 1)), (CableKind::Copper, 3.0));
        let (kind, near) = m.cable((0, 40), (1, 40));
        let (_, far) = m.cable((0, 40), (4, 40));
        assert_eq!(kind, CableKind::Optical);
        assert!(near <= far && OPTICAL_LENGTHS_M.contains(&far));
        assert_eq!("inter-rack".parse(), Ok(CableKind::Optical));
        assert!("string".parse::<CableKind>().is_err());
    }
}
