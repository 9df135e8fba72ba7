//! Cable kinds and length classes.
//!
//! The model is deliberately simple and documented so a site can adjust it: racks stand side by
//! side in rows (one row unless a room layout says how many racks a row holds); a cable inside a
//! rack runs vertically between the two U positions plus a service allowance; a cable between
//! racks climbs from each device to the overhead tray, runs along the row (and across the rows,
//! one row pitch per row) and drops down. The estimate is rounded up to the next catalogue
//! length. A site describes its room in a YAML file ([`RoomLayout`]) with any of the fields.
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
    /// Racks per row; `None` puts every rack in one row.
    pub racks_per_row: Option<u32>,
    /// Distance between the rows, centre to centre, in metres.
    pub row_pitch_m: f64,
}

impl Default for LengthModel {
    fn default() -> Self {
        Self {
            rack_width_m: 0.6,
            rack_units: 42,
            slack_m: 1.0,
            tray_height_m: 0.3,
            racks_per_row: None,
            row_pitch_m: 2.4,
        }
    }
}

/// A site's room layout, as written in its YAML file: every field is optional and falls back
/// to the default [`LengthModel`]'s.
///
/// ```yaml
/// racks_per_row: 8     # racks R01..R08 in the first row, R09.. in the next
/// rack_width_m: 0.6    # rack centre to centre along a row
/// row_pitch_m: 2.4     # row centre to centre (cold and hot aisle)
/// tray_height_m: 0.3   # overhead tray above the rack tops
/// slack_m: 1.0         # routing to the rack side and service loop, per cable
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoomLayout {
    /// Racks per row.
    pub racks_per_row: Option<u32>,
    /// Rack width in metres.
    pub rack_width_m: Option<f64>,
    /// Row pitch in metres.
    pub row_pitch_m: Option<f64>,
    /// Tray height above the racks in metres.
    pub tray_height_m: Option<f64>,
    /// Slack per cable in metres.
    pub slack_m: Option<f64>,
}

impl RoomLayout {
    /// The length model of this room: the default one with the fields given here.
    ///
    /// # Errors
    /// A negative or non-finite distance, or zero racks per row.
    pub fn model(&self) -> Result<LengthModel, String> {
        let d = LengthModel::default();
        let metres = |name: &str, v: Option<f64>, default: f64| match v {
            Some(v) if !v.is_finite() || v < 0.0 => Err(format!(
                "{name} {v} is not a distance in metres (0 or more)"
            )),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        if self.racks_per_row == Some(0) {
            return Err("racks_per_row must be 1 or more".into());
        }
        Ok(LengthModel {
            rack_width_m: metres("rack_width_m", self.rack_width_m, d.rack_width_m)?,
            rack_units: d.rack_units,
            slack_m: metres("slack_m", self.slack_m, d.slack_m)?,
            tray_height_m: metres("tray_height_m", self.tray_height_m, d.tray_height_m)?,
            racks_per_row: self.racks_per_row,
            row_pitch_m: metres("row_pitch_m", self.row_pitch_m, d.row_pitch_m)?,
        })
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
            let place = |rack: usize| match self.racks_per_row {
                Some(n) => (rack / n as usize, rack % n as usize),
                None => (0, rack),
            };
            let ((row_a, column_a), (row_b, column_b)) = (place(rack_a), place(rack_b));
            let along = column_a.abs_diff(column_b) as f64 * self.rack_width_m
                + row_a.abs_diff(row_b) as f64 * self.row_pitch_m;
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

/// The purchase list: how many cables of each kind and length the plan needs, as CSV
/// (`kind,length_m,count`), copper first, shortest first; cables without a length are counted
/// under an empty length.
pub fn purchase_list(cables: &[super::Cable]) -> String {
    /// One line of the list: copper before optical, then by length (none last).
    struct Line {
        optical: bool,
        length_m: Option<f64>,
        count: usize,
    }
    let mut lines: Vec<Line> = Vec::new();
    for c in cables {
        let optical = c.kind == CableKind::Optical;
        match lines
            .iter_mut()
            .find(|l| l.optical == optical && l.length_m == c.length_m)
        {
            Some(l) => l.count += 1,
            None => lines.push(Line {
                optical,
                length_m: c.length_m,
                count: 1,
            }),
        }
    }
    let length = |l: &Line| l.length_m.unwrap_or(f64::INFINITY);
    lines.sort_by(|x, y| {
        x.optical
            .cmp(&y.optical)
            .then(length(x).total_cmp(&length(y)))
    });
    let mut out = String::from("kind,length_m,count\n");
    for l in lines {
        let kind = if l.optical {
            CableKind::Optical
        } else {
            CableKind::Copper
        };
        let length = l.length_m.map_or(String::new(), |m| m.to_string());
        out.push_str(&format!("{kind},{length},{}\n", l.count));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_add_their_pitch_and_a_room_file_sets_only_what_it_names() {
        let room: RoomLayout = yaml_serde::from_str("racks_per_row: 2\nrow_pitch_m: 10\n").unwrap();
        let m = room.model().unwrap();
        assert_eq!(m.rack_width_m, LengthModel::default().rack_width_m);
        // Racks 0 and 2 face each other across one row pitch; 0 and 1 stand side by side.
        let across = m.cable((0, 40), (2, 40)).1;
        let beside = m.cable((0, 40), (1, 40)).1;
        let one_row = LengthModel::default().cable((0, 40), (2, 40)).1;
        assert!(
            across > beside && across > one_row,
            "{across} {beside} {one_row}"
        );
        for (rack_a, rack_b) in [(0, 1), (0, 2), (1, 3), (0, 3)] {
            let (kind, length) = m.cable((rack_a, 20), (rack_b, 20));
            assert_eq!(kind, CableKind::Optical);
            assert!(OPTICAL_LENGTHS_M.contains(&length));
        }
        let bad: RoomLayout = yaml_serde::from_str("racks_per_row: 0\n").unwrap();
        assert!(bad.model().is_err());
        let bad: RoomLayout = yaml_serde::from_str("slack_m: -1\n").unwrap();
        assert_eq!(
            bad.model().unwrap_err(),
            "slack_m -1 is not a distance in metres (0 or more)"
        );
        assert!(yaml_serde::from_str::<RoomLayout>("rows: 2\n").is_err());
    }

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
