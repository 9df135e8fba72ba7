//! Link width and speed, with the tokens ibnetdiscover prints (`4x`, `EDR`) and the encodings
//! of PortInfo that ibsim net files use.

use std::fmt;
use std::str::FromStr;

/// Active link width (lanes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkWidth {
    /// 1 lane.
    X1,
    /// 2 lanes (split ports, e.g. HDR100).
    X2,
    /// 4 lanes, the usual cable.
    X4,
    /// 8 lanes.
    X8,
    /// 12 lanes.
    X12,
}

/// The rate a link runs at when its two ends report `a` and `b` (a width or a speed): the
/// lower one, or the one that is known.
pub fn link_rate<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl LinkWidth {
    /// Every width, narrowest first.
    pub const ALL: [LinkWidth; 5] = [
        LinkWidth::X1,
        LinkWidth::X2,
        LinkWidth::X4,
        LinkWidth::X8,
        LinkWidth::X12,
    ];

    /// Number of lanes.
    pub fn lanes(self) -> u32 {
        match self {
            LinkWidth::X1 => 1,
            LinkWidth::X2 => 2,
            LinkWidth::X4 => 4,
            LinkWidth::X8 => 8,
            LinkWidth::X12 => 12,
        }
    }

    /// The PortInfo LinkWidth bit (1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x).
    pub fn portinfo_bit(self) -> u32 {
        match self {
            LinkWidth::X1 => 1,
            LinkWidth::X4 => 2,
            LinkWidth::X8 => 4,
            LinkWidth::X12 => 8,
            LinkWidth::X2 => 16,
        }
    }

    /// The width a PortInfo LinkWidthActive value stands for (the inverse of
    /// [`Self::portinfo_bit`]); `None` for 0 (unknown) and for anything that is not one width.
    pub fn from_portinfo_bit(bit: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.portinfo_bit() == bit)
    }
}

impl fmt::Display for LinkWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x", self.lanes())
    }
}

impl FromStr for LinkWidth {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let lanes = s.strip_suffix(['x', 'X']).unwrap_or(s);
        LinkWidth::ALL
            .into_iter()
            .find(|w| w.lanes().to_string() == lanes)
            .ok_or_else(|| format!("unknown link width {s:?} (expected 1x, 2x, 4x, 8x or 12x)"))
    }
}

/// Active link speed (per lane signalling generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkSpeed {
    /// 2.5 Gb/s.
    Sdr,
    /// 5 Gb/s.
    Ddr,
    /// 10 Gb/s.
    Qdr,
    /// 10.3125 Gb/s (Mellanox extension on QDR hardware).
    Fdr10,
    /// 14.0625 Gb/s.
    Fdr,
    /// 25.78125 Gb/s.
    Edr,
    /// 53.125 Gb/s.
    Hdr,
    /// 106.25 Gb/s.
    Ndr,
    /// 212.5 Gb/s.
    Xdr,
}

impl LinkSpeed {
    /// Every speed, slowest first.
    pub const ALL: [LinkSpeed; 9] = [
        LinkSpeed::Sdr,
        LinkSpeed::Ddr,
        LinkSpeed::Qdr,
        LinkSpeed::Fdr10,
        LinkSpeed::Fdr,
        LinkSpeed::Edr,
        LinkSpeed::Hdr,
        LinkSpeed::Ndr,
        LinkSpeed::Xdr,
    ];

    /// The token ibnetdiscover prints.
    pub fn token(self) -> &'static str {
        match self {
            LinkSpeed::Sdr => "SDR",
            LinkSpeed::Ddr => "DDR",
            LinkSpeed::Qdr => "QDR",
            LinkSpeed::Fdr10 => "FDR10",
            LinkSpeed::Fdr => "FDR",
            LinkSpeed::Edr => "EDR",
            LinkSpeed::Hdr => "HDR",
            LinkSpeed::Ndr => "NDR",
            LinkSpeed::Xdr => "XDR",
        }
    }

    /// Per-lane data rate in Gb/s as iblinkinfo prints it.
    pub fn lane_gbps(self) -> f64 {
        match self {
            LinkSpeed::Sdr => 2.5,
            LinkSpeed::Ddr => 5.0,
            LinkSpeed::Qdr | LinkSpeed::Fdr10 => 10.0,
            LinkSpeed::Fdr => 14.0625,
            LinkSpeed::Edr => 25.78125,
            LinkSpeed::Hdr => 53.125,
            LinkSpeed::Ndr => 106.25,
            LinkSpeed::Xdr => 212.5,
        }
    }

    /// The ibsim/PortInfo encoding: `(LinkSpeed bit, LinkSpeedExt bit)`; one of them is 0.
    /// FDR10 has no standard encoding and is given as QDR.
    pub fn portinfo_bits(self) -> (u32, u32) {
        match self {
            LinkSpeed::Sdr => (1, 0),
            LinkSpeed::Ddr => (2, 0),
            LinkSpeed::Qdr | LinkSpeed::Fdr10 => (4, 0),
            LinkSpeed::Fdr => (0, 1),
            LinkSpeed::Edr => (0, 2),
            LinkSpeed::Hdr => (0, 4),
            LinkSpeed::Ndr => (0, 8),
            LinkSpeed::Xdr => (0, 32),
        }
    }

    /// The speed a port reports in PortInfo LinkSpeedActive (`base`: 1 SDR, 2 DDR, 4 QDR) and
    /// LinkSpeedExtActive (`ext`: 1 FDR, 2 EDR, 4 HDR, 8 NDR), the extended one overriding
    /// the base one when set; `None` when neither is one of these. XDR, which OpenSM 3.3.23 does
    /// not know, is not decoded.
    pub fn from_portinfo_bits(base: u32, ext: u32) -> Option<Self> {
        match (ext, base) {
            (1, _) => Some(LinkSpeed::Fdr),
            (2, _) => Some(LinkSpeed::Edr),
            (4, _) => Some(LinkSpeed::Hdr),
            (8, _) => Some(LinkSpeed::Ndr),
            (_, 1) => Some(LinkSpeed::Sdr),
            (_, 2) => Some(LinkSpeed::Ddr),
            (_, 4) => Some(LinkSpeed::Qdr),
            _ => None,
        }
    }
}

impl fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

impl FromStr for LinkSpeed {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LinkSpeed::ALL
            .into_iter()
            .find(|v| v.token().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown link speed {s:?} (expected SDR … XDR)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_runs_at_the_lower_rate_of_its_ends() {
        assert_eq!(
            link_rate(Some(LinkWidth::X4), Some(LinkWidth::X1)),
            Some(LinkWidth::X1)
        );
        assert_eq!(link_rate(None, Some(LinkSpeed::Edr)), Some(LinkSpeed::Edr));
        assert_eq!(link_rate::<LinkSpeed>(None, None), None);
    }

    #[test]
    fn portinfo_width_bits_decode_to_the_width_they_encode() {
        for w in LinkWidth::ALL {
            assert_eq!(LinkWidth::from_portinfo_bit(w.portinfo_bit()), Some(w));
        }
    }

    #[test]
    fn other_portinfo_width_values_are_no_width() {
        let bits: Vec<u32> = LinkWidth::ALL.iter().map(|w| w.portinfo_bit()).collect();
        for value in (0..=u32::from(u8::MAX)).filter(|v| !bits.contains(v)) {
            assert_eq!(LinkWidth::from_portinfo_bit(value), None, "{value}");
        }
    }

    #[test]
    fn portinfo_speed_bits_decode_to_the_speed_they_encode_up_to_ndr() {
        for s in LinkSpeed::ALL {
            let (base, ext) = s.portinfo_bits();
            let expected = match s {
                LinkSpeed::Fdr10 => Some(LinkSpeed::Qdr),
                LinkSpeed::Xdr => None,
                _ => Some(s),
            };
            assert_eq!(LinkSpeed::from_portinfo_bits(base, ext), expected, "{s}");
        }
    }

    #[test]
    fn the_extended_speed_overrides_the_base_speed() {
        for base in [0, 1, 2, 4] {
            for s in [
                LinkSpeed::Fdr,
                LinkSpeed::Edr,
                LinkSpeed::Hdr,
                LinkSpeed::Ndr,
            ] {
                let (_, ext) = s.portinfo_bits();
                assert_eq!(LinkSpeed::from_portinfo_bits(base, ext), Some(s));
            }
        }
        assert_eq!(LinkSpeed::from_portinfo_bits(0, 0), None);
    }

    #[test]
    fn tokens_round_trip() {
        for w in LinkWidth::ALL {
            assert_eq!(w.to_string().parse::<LinkWidth>(), Ok(w));
        }
        for s in LinkSpeed::ALL {
            assert_eq!(s.to_string().parse::<LinkSpeed>(), Ok(s));
        }
        assert!("3x".parse::<LinkWidth>().is_err());
        assert!("???".parse::<LinkSpeed>().is_err());
    }
}
