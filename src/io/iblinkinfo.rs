//! `iblinkinfo` output: the state of every port the tool lists, including down switch ports,
//! which `ibnetdiscover` leaves out.
//!
//! Two layouts are read (infiniband-diags `iblinkinfo.c`, `print_node_header`/`print_port`):
//!
//! * **default**: a node header per node — `Switch: 0x<port 0 GUID> <desc>:`, but only
//!   `CA: <desc>:` / `Router: <desc>:` for channel adapters and routers — then one line per
//!   port, `      [0x<port GUID> (CA/router only)] LID PORT[EXT] ==(WIDTH SPEED STATE/
//!   PHYSSTATE)==>  PEERLID PEERPORT[EXT] "peer desc" (hints)`;
//! * **`-l`** (line mode): no headers; each line starts with the port GUID and the node
//!   description right-aligned in quotes (`0x… "      MF0;ib-spine2:MQM8700/U1"`), and the peer
//!   part starts with the peer's port GUID.
//!
//! A down port reads `==(              Down/ Polling)==>             [  ] "" ( )`; a port that is
//! not down but has no peer reads `… "Port not available"`. The hints are `Could be 12X` and
//! `Could be 53.125 Gbps` (or `Could be FDR10 …`): the widest width / fastest speed both ends
//! support when the link runs below it.
//!
//! Lines of `--diff` output (prefixed `<` or `>`) and anything else that is neither a header
//! nor a port line are skipped with a warning; a line with `==(` or a node header that is
//! malformed stops the parse with a [`ParseError`].

use super::diagnostic::{Diagnostic, ParseError, excerpt};
use super::scan::Cursor;
use crate::topology::{Guid, LinkSpeed, LinkWidth, NodeKind};

/// PortState, the logical link state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogicalState {
    /// `NoChange` (0).
    NoChange,
    /// `Down`: no link.
    Down,
    /// `Initialize`: link up, no subnet manager has configured the port yet.
    Initialize,
    /// `Armed`.
    Armed,
    /// `Active`: configured by the subnet manager, carrying traffic.
    Active,
    /// Any other value (`?(N)`).
    Unknown,
}

impl LogicalState {
    /// The state for the word iblinkinfo prints.
    pub fn from_token(token: &str) -> Self {
        match token {
            "NoChange" => Self::NoChange,
            "Down" => Self::Down,
            "Initialize" => Self::Initialize,
            "Armed" => Self::Armed,
            "Active" => Self::Active,
            _ => Self::Unknown,
        }
    }
}

/// PortPhysicalState.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhysicalState {
    /// `NoChange` (0).
    NoChange,
    /// `Sleep`.
    Sleep,
    /// `Polling`: looking for a peer (nothing plugged in, or the far end is off).
    Polling,
    /// `Disabled`: switched off administratively.
    Disabled,
    /// `PortConfigurationTraining`: link training in progress.
    PortConfigurationTraining,
    /// `LinkUp`.
    LinkUp,
    /// `LinkErrorRecovery`: the link is failing (often a bad cable).
    LinkErrorRecovery,
    /// `PhyTest`.
    PhyTest,
    /// Any other value (`?(N)`).
    Unknown,
}

impl PhysicalState {
    /// The state for the word iblinkinfo prints.
    pub fn from_token(token: &str) -> Self {
        match token {
            "NoChange" => Self::NoChange,
            "Sleep" => Self::Sleep,
            "Polling" => Self::Polling,
            "Disabled" => Self::Disabled,
            "PortConfigurationTraining" => Self::PortConfigurationTraining,
            "LinkUp" => Self::LinkUp,
            "LinkErrorRecovery" => Self::LinkErrorRecovery,
            "PhyTest" | "Phy Test" => Self::PhyTest,
            _ => Self::Unknown,
        }
    }
}

/// The far end of an up port, as iblinkinfo prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// The peer port's LID (a switch's LID for switch peers; 0 without a subnet manager).
    pub lid: u16,
    /// The peer's port number.
    pub port: u8,
    /// The peer's external (chassis) port number, when printed.
    pub ext_port: Option<u8>,
    /// The peer's description (node-name-map remapped if the output was).
    pub desc: String,
    /// The peer's port GUID (`-l` format only).
    pub port_guid: Option<Guid>,
}

/// One port line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortStatus {
    /// 1-based line number.
    pub line: usize,
    /// The node kind from the header (default format); `None` in `-l` format.
    pub kind: Option<NodeKind>,
    /// The node GUID: switches in default format (from `Switch: 0x…`); `None` otherwise.
    pub node_guid: Option<Guid>,
    /// The port GUID: CA and router lines in default format, every line in `-l` format (on a
    /// switch it equals the node GUID).
    pub port_guid: Option<Guid>,
    /// The node's description (node-name-map remapped if the output was).
    pub node_desc: String,
    /// Port number.
    pub port: u8,
    /// External (chassis) port number, when printed.
    pub ext_port: Option<u8>,
    /// The port's LID (a switch's LID on switch ports).
    pub lid: u16,
    /// Logical state.
    pub logical: LogicalState,
    /// Physical state.
    pub physical: PhysicalState,
    /// Active width; `None` when the port is down or the width unreadable.
    pub width: Option<LinkWidth>,
    /// Active speed; `None` when the port is down or the speed unreadable.
    pub speed: Option<LinkSpeed>,
    /// `Could be …X`: the widest width both ends support, when the link runs narrower.
    pub could_be_width: Option<LinkWidth>,
    /// `Could be … Gbps` / `Could be FDR10`: the fastest speed both ends support, when the
    /// link runs slower.
    pub could_be_speed: Option<LinkSpeed>,
    /// The far end, for ports with a link.
    pub peer: Option<Peer>,
}

impl PortStatus {
    /// Whether the link is down (logical state `Down`, whatever the physical state).
    pub fn is_down(&self) -> bool {
        self.logical == LogicalState::Down
    }

    /// Whether the link is up: physically `LinkUp` and not logically down.
    pub fn is_up(&self) -> bool {
        self.physical == PhysicalState::LinkUp && !self.is_down()
    }

    /// Whether the link is up but below what both ends support (a "could be" hint).
    pub fn is_degraded(&self) -> bool {
        self.is_up() && (self.could_be_width.is_some() || self.could_be_speed.is_some())
    }
}

/// A parsed iblinkinfo output.
#[derive(Debug, Clone, Default)]
pub struct LinkInfo {
    /// The port lines in input order.
    pub ports: Vec<PortStatus>,
    /// Skipped lines and unreadable values, in line order.
    pub warnings: Vec<Diagnostic>,
}

impl LinkInfo {
    /// The line for port `port` of the node with node GUID or port GUID `guid` (a switch's
    /// GUID, or a CA or router port's GUID).
    pub fn port(&self, guid: Guid, port: u8) -> Option<&PortStatus> {
        self.ports
            .iter()
            .find(|p| p.port == port && (p.node_guid == Some(guid) || p.port_guid == Some(guid)))
    }

    /// The first line for port `port` of a node described as `desc`.
    pub fn port_by_desc(&self, desc: &str, port: u8) -> Option<&PortStatus> {
        self.ports
            .iter()
            .find(|p| p.port == port && p.node_desc == desc)
    }
}

/// The node a default-format port line belongs to.
struct Header<'a> {
    kind: NodeKind,
    guid: Option<Guid>,
    desc: &'a str,
}

const PORT_HINT: &str = "a port line like `      4   38[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==>       1    4[  ] \"desc\" ( )`";

/// Reads iblinkinfo output (default or `-l` format).
///
/// # Errors
/// The first malformed node header or port line (a line containing `==(`), or a
/// default-format port line before any node header.
pub fn parse(text: &str) -> Result<LinkInfo, ParseError> {
    let mut info = LinkInfo::default();
    let mut header: Option<Header<'_>> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_matches([' ', '\t', '\r']);
        if line.is_empty() {
            continue;
        }
        if line.starts_with("< ") || line.starts_with("> ") {
            info.warnings.push(Diagnostic::warning(
                n,
                "skipped a --diff line (prefixed < or >)",
            ));
        } else if let Some(h) = parse_header(n, line)? {
            header = Some(h);
        } else if line.contains("==(") {
            let port = parse_port(n, line, header.as_ref(), &mut info.warnings)?;
            info.ports.push(port);
        } else {
            info.warnings.push(Diagnostic::warning(
                n,
                format!(
                    "skipped a line that is not iblinkinfo output: {}",
                    excerpt(line)
                ),
            ));
        }
    }
    Ok(info)
}

fn parse_header<'a>(n: usize, line: &'a str) -> Result<Option<Header<'a>>, ParseError> {
    let Some((kind, rest)) = [
        ("Switch:", NodeKind::Switch),
        ("CA:", NodeKind::Ca),
        ("Router:", NodeKind::Router),
    ]
    .into_iter()
    .find_map(|(word, kind)| line.strip_prefix(word).map(|rest| (kind, rest))) else {
        return Ok(None);
    };
    let err = |what: &str| {
        ParseError::new(
            n,
            format!(
                "{what} in a node header like `Switch: 0x0002c90300001234 desc:` or `CA: desc:`"
            ),
            line,
        )
    };
    let mut c = Cursor::new(rest);
    c.skip_ws();
    let guid = if kind == NodeKind::Switch {
        let guid = c.guid().ok_or_else(|| err("the switch GUID"))?;
        if c.skip_ws() == 0 && !c.is_empty() {
            return Err(err("a blank after the switch GUID"));
        }
        Some(guid)
    } else {
        None
    };
    let desc = c
        .rest()
        .strip_suffix(':')
        .ok_or_else(|| err("a colon at the end"))?;
    Ok(Some(Header { kind, guid, desc }))
}

/// `LID PORT[EXT]`: the LID, port number and external port number.
fn lid_port(c: &mut Cursor<'_>) -> Option<(u16, u8, Option<u8>)> {
    c.skip_ws();
    let lid = c.uint(u64::from(u16::MAX))? as u16;
    c.skip_ws();
    let port = c.uint(255)? as u8;
    if !c.eat_byte(b'[') {
        return None;
    }
    let ext = c.until(b']')?.trim();
    c.eat_byte(b']');
    let ext = if ext.is_empty() {
        None
    } else {
        Some(ext.parse::<u8>().ok()?)
    };
    Some((lid, port, ext))
}

/// The speed in an iblinkinfo speed string (`53.125 Gbps`, `10.0 Gbps (FDR10)`).
fn speed(text: &str) -> Option<LinkSpeed> {
    if text.contains("FDR10") {
        return Some(LinkSpeed::Fdr10);
    }
    let mut tokens = text.split_whitespace();
    let number = tokens.next()?;
    if tokens.next() != Some("Gbps") {
        return None;
    }
    Some(match number {
        "2.5" => LinkSpeed::Sdr,
        "5.0" => LinkSpeed::Ddr,
        "10.0" => LinkSpeed::Qdr,
        "14.0625" => LinkSpeed::Fdr,
        "25.78125" => LinkSpeed::Edr,
        "53.125" => LinkSpeed::Hdr,
        "106.25" => LinkSpeed::Ndr,
        "212.5" => LinkSpeed::Xdr,
        _ => return None,
    })
}

fn parse_port(
    n: usize,
    line: &str,
    header: Option<&Header<'_>>,
    warnings: &mut Vec<Diagnostic>,
) -> Result<PortStatus, ParseError> {
    let err = |what: &str| ParseError::new(n, format!("{what} in {PORT_HINT}"), line);
    let open = line.find("==(").ok_or_else(|| err("==("))?;
    let close = line[open..]
        .find(")==>")
        .map(|k| open + k)
        .ok_or_else(|| err(")==> after the link state"))?;
    let (left, mid, right) = (&line[..open], &line[open + 3..close], &line[close + 4..]);

    // Left: [0xGUID ["desc"]] LID PORT[EXT]
    let mut c = Cursor::new(left);
    let mut kind = header.map(|h| h.kind);
    let mut node_guid = header.and_then(|h| h.guid);
    let mut node_desc = header.map(|h| h.desc);
    let mut port_guid = None;
    if c.rest().starts_with("0x") {
        port_guid = Some(c.guid().ok_or_else(|| err("a port GUID"))?);
        c.skip_ws();
        if c.eat_byte(b'"') {
            // -l: the node's description, right-aligned in 30 columns.
            let desc = c
                .until_last(b'"')
                .ok_or_else(|| err("the closing quote of the node description"))?;
            c.eat_byte(b'"');
            kind = None;
            node_guid = None;
            node_desc = Some(desc.trim_start_matches(' '));
        }
    }
    let node_desc = node_desc.ok_or_else(|| {
        ParseError::new(
            n,
            "a node header (Switch:, CA: or Router:) before the first port line",
            line,
        )
    })?;
    let (lid, port, ext_port) = lid_port(&mut c).ok_or_else(|| err("`LID PORT[  ]`"))?;
    c.skip_ws();
    if !c.is_empty() {
        return Err(err("==( after the port number"));
    }

    // Middle: [WIDTH SPEED] STATE/PHYSSTATE [) (HOQ:… VL_Stall:…]
    let mid = mid.find(") (HOQ").map_or(mid, |k| &mid[..k]);
    let (states, phys) = mid
        .rsplit_once('/')
        .ok_or_else(|| err("STATE/PHYSSTATE in the link part"))?;
    let states = states.trim();
    let (rate, logical) = states
        .rsplit_once([' ', '\t'])
        .map_or(("", states), |(r, s)| (r.trim(), s));
    let logical = LogicalState::from_token(logical);
    let physical = PhysicalState::from_token(phys.trim());
    let (mut width, mut speed_active) = (None, None);
    if !rate.is_empty() {
        let (w, s) = rate
            .split_once([' ', '\t'])
            .map_or((rate, ""), |(w, s)| (w, s.trim()));
        width = w.parse::<LinkWidth>().ok();
        speed_active = speed(s);
        if width.is_none() || speed_active.is_none() {
            warnings.push(Diagnostic::warning(
                n,
                format!("unreadable width or speed {}", excerpt(rate)),
            ));
        }
    }

    // Right: peer, or `[  ] "" ( )`, or `"Port not available"`.
    let right = right.trim();
    let mut peer = None;
    let (mut could_be_width, mut could_be_speed) = (None, None);
    if !(right.starts_with('[') || right.starts_with("\"Port not available\"")) {
        let mut c = Cursor::new(right);
        let peer_guid = if c.rest().starts_with("0x") {
            let g = c.guid().ok_or_else(|| err("the peer port GUID"))?;
            Some(g)
        } else {
            None
        };
        let (peer_lid, peer_port, peer_ext) =
            lid_port(&mut c).ok_or_else(|| err("the peer's `LID PORT[  ]`"))?;
        c.skip_ws();
        let rest = c.rest();
        let quoted = rest
            .strip_prefix('"')
            .ok_or_else(|| err("the quoted peer description"))?;
        let split = quoted
            .rfind("\" (")
            .ok_or_else(|| err("`\" (` after the peer description"))?;
        let desc = &quoted[..split];
        let hints = quoted[split + 3..]
            .strip_suffix(')')
            .ok_or_else(|| err(") at the end of the line"))?;
        for hint in hints.split("Could be ").map(str::trim) {
            if hint.is_empty() {
                continue;
            }
            if let Ok(w) = hint.parse::<LinkWidth>() {
                could_be_width = Some(w);
            } else if let Some(s) = speed(hint) {
                could_be_speed = Some(s);
            } else {
                warnings.push(Diagnostic::warning(
                    n,
                    format!("unreadable hint {}", excerpt(hint)),
                ));
            }
        }
        peer = Some(Peer {
            lid: peer_lid,
            port: peer_port,
            ext_port: peer_ext,
            desc: desc.to_owned(),
            port_guid: peer_guid,
        });
    }

    Ok(PortStatus {
        line: n,
        kind,
        node_guid,
        port_guid,
        node_desc: node_desc.to_owned(),
        port,
        ext_port,
        lid,
        logical,
        physical,
        width,
        speed: speed_active,
        could_be_width,
        could_be_speed,
        peer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::fixture;
    use crate::io::mutate::{all_fixture_texts, mutants};

    /// (fixture, port lines, down ports, `-l` format).
    ///
    /// Counted with `grep -c '==('` and `grep -c 'Down/'` on each file (the `--diff` output
    /// is left out: its `<`/`>` lines are skipped by design).
    const OUTPUTS: &[(&str, usize, usize, bool)] = &[
        ("baseline/iblinkinfo.txt", 169, 135, false),
        ("baseline/iblinkinfo_-l.txt", 169, 135, true),
        ("baseline/iblinkinfo_--switches-only_-l.txt", 160, 135, true),
        ("baseline/iblinkinfo_-d.txt", 135, 135, false),
        ("baseline/iblinkinfo_no-sm_initialize.txt", 169, 135, false),
        ("after-faults/iblinkinfo.txt", 168, 138, false),
        ("after-faults/iblinkinfo_-d.txt", 138, 138, false),
        ("slimfly-q5/clean.iblinkinfo.txt", 2000, 1250, false),
        ("slimfly-q5/faulty.iblinkinfo.txt", 2000, 1252, false),
        ("slimfly-q5/partial.iblinkinfo.txt", 1560, 1080, false),
    ];

    /// The parsed shared dump `ibsim-generated/{path}`, or `None` (skip line printed).
    fn info(path: &str) -> Option<LinkInfo> {
        let text = fixture(&format!("ibsim-generated/{path}"))?;
        Some(parse(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
    }

    #[test]
    fn fixtures_parse_with_the_counted_ports() {
        for &(path, ports, down, line_mode) in OUTPUTS {
            let Some(i) = info(path) else { return };
            assert!(i.warnings.is_empty(), "{path}: {:?}", i.warnings);
            assert_eq!(i.ports.len(), ports, "{path}");
            assert_eq!(
                i.ports.iter().filter(|p| p.is_down()).count(),
                down,
                "{path}"
            );
            for p in &i.ports {
                assert_eq!(p.is_up(), !p.is_down(), "{path} line {}", p.line);
                assert_eq!(p.peer.is_some(), p.is_up(), "{path} line {}", p.line);
                assert_eq!(
                    p.width.is_some() && p.speed.is_some(),
                    p.is_up(),
                    "{path} line {}",
                    p.line
                );
                assert_eq!(p.kind.is_none(), line_mode, "{path} line {}", p.line);
                assert!(
                    p.port_guid.is_some() || p.node_guid.is_some(),
                    "{path} line {}",
                    p.line
                );
                if line_mode {
                    assert!(p.peer.as_ref().is_none_or(|peer| peer.port_guid.is_some()));
                }
            }
        }
    }

    #[test]
    fn the_degraded_link_and_down_ports() {
        let leaf2 = Guid(0xb8cef60300b20000);
        for path in ["baseline/iblinkinfo.txt", "baseline/iblinkinfo_-l.txt"] {
            let Some(i) = info(path) else { return };
            let p = i.port(leaf2, 38).unwrap();
            assert_eq!(p.width, Some(LinkWidth::X1), "{path}");
            assert_eq!(p.speed, Some(LinkSpeed::Hdr));
            assert_eq!(
                p.could_be_width,
                Some(LinkWidth::X12),
                "ibsim claims 12X everywhere"
            );
            assert_eq!(p.could_be_speed, None);
            assert!(p.is_degraded());
            assert_eq!(
                (p.logical, p.physical),
                (LogicalState::Active, PhysicalState::LinkUp)
            );
            assert_eq!(p.node_desc, "MF0;ib-leaf2:MQM8700/U1");
            assert_eq!(p.lid, 4);
            let peer = p.peer.as_ref().unwrap();
            assert_eq!((peer.lid, peer.port, peer.ext_port), (1, 4, None));
            assert_eq!(peer.desc, "MF0;ib-spine1:MQM8700/U1");
            if path.ends_with("-l.txt") {
                assert_eq!(peer.port_guid, Some(Guid(0xb8cef60300a10000)));
            }

            let down = i.port(leaf2, 3).unwrap();
            assert!(down.is_down() && !down.is_up());
            assert_eq!(
                (down.logical, down.physical),
                (LogicalState::Down, PhysicalState::Polling)
            );
            assert_eq!((down.width, down.speed, &down.peer), (None, None, &None));
        }

        // Default format: CA headers carry only the description, the port line the port GUID.
        let Some(i) = info("baseline/iblinkinfo.txt") else {
            return;
        };
        let p = i.port(Guid(0x0c42a10300c00042), 2).unwrap();
        assert_eq!((p.kind, p.node_guid), (Some(NodeKind::Ca), None));
        assert_eq!(p.node_desc, "node05 mlx5_0");
        assert_eq!(p.lid, 12);
        let rt = i.port_by_desc("MF0;gw1:IBR/U1/RT", 1).unwrap();
        assert_eq!(rt.kind, Some(NodeKind::Router));
        assert_eq!(rt.port_guid, Some(Guid(0xb8e9240300d00001)));
        let sw = i.port_by_desc("MF0;ib-spine2:MQM8700/U1", 1).unwrap();
        assert_eq!(
            (sw.kind, sw.node_guid),
            (Some(NodeKind::Switch), Some(Guid(0xb8cef60300a20000)))
        );

        // No SM: Initialize, the EDR-only HCA could run HDR.
        let Some(i) = info("baseline/iblinkinfo_no-sm_initialize.txt") else {
            return;
        };
        let p = i.port_by_desc("node06 mlx5_0", 1).unwrap();
        assert_eq!(p.logical, LogicalState::Initialize);
        assert!(p.is_up());
        assert_eq!(
            (p.speed, p.could_be_speed),
            (Some(LinkSpeed::Edr), Some(LinkSpeed::Hdr))
        );

        // Slim Fly faults: the 1x link (F5) and the missing cable F2 (sw1-3-3[5] down).
        let Some(i) = info("slimfly-q5/faulty.iblinkinfo.txt") else {
            return;
        };
        let p = i.port_by_desc("MF0;sw0-2-2-R03U38:MSB7800/U1", 9).unwrap();
        assert_eq!(p.width, Some(LinkWidth::X1));
        assert_eq!(
            p.peer.as_ref().unwrap().desc,
            "MF0;sw1-2-3-R03U32:MSB7800/U1"
        );
        let missing = i.port_by_desc("MF0;sw1-3-3-R04U32:MSB7800/U1", 5).unwrap();
        assert!(missing.is_down());
    }

    #[test]
    fn diff_output_parses_its_headers_and_skips_prefixed_lines_with_warnings() {
        let Some(i) = info("after-faults/iblinkinfo_--diff.txt") else {
            return;
        };
        assert!(i.ports.is_empty());
        // 18 prefixed lines: `grep -c '^[<>]'`.
        assert_eq!(i.warnings.len(), 18);
    }

    #[test]
    fn other_layouts_and_errors() {
        let text = "Switch: 0x0000000000000001 a:b:\n\
                    \x20     1    2[ 3] ==( 4X 10.0 Gbps (FDR10) Active/  LinkUp) (HOQ:1 VL_Stall:2)==>       7    8[  ] \"p \" (q\" (Could be FDR10 (Found link at QDR but expected speed is FDR10))\n\
                    \x20     1    3[  ] ==(                Armed/ LinkUp)==>     \"Port not available\"\n\
                    \x20     1    4[  ] ==(                Down/ Disabled)==>             [  ] \"\" ( )\n";
        let i = parse(text).unwrap();
        assert!(i.warnings.is_empty(), "{:?}", i.warnings);
        let p = &i.ports[0];
        assert_eq!(p.node_desc, "a:b");
        assert_eq!((p.ext_port, p.speed), (Some(3), Some(LinkSpeed::Fdr10)));
        assert_eq!(p.could_be_speed, Some(LinkSpeed::Fdr10));
        assert_eq!(p.peer.as_ref().unwrap().desc, "p \" (q");
        assert_eq!(i.ports[1].logical, LogicalState::Armed);
        assert!(i.ports[1].peer.is_none());
        assert_eq!(i.ports[2].physical, PhysicalState::Disabled);

        for (text, line) in [
            (
                "      1 2[  ] ==( 4X 53.125 Gbps Active/ LinkUp)==> 1 2[  ] \"x\" ( )\n",
                1,
            ),
            (
                "CA: a:\n      0x1 1 2[  ] ==( 4X 53.125 Gbps Active LinkUp)==> 1 2[  ] \"x\" ( )\n",
                2,
            ),
            (
                "CA: a:\n      0x1 1 2[  ] ==( 4X 53.125 Gbps Active/LinkUp)==> 1 2[  ] \"x\n",
                2,
            ),
            (
                "CA: a:\n      0x1 1 2[  ] ==( 4X 53.125 Gbps Active/LinkUp)==> 1 [  ] \"x\" ( )\n",
                2,
            ),
            (
                "CA: a:\n      0x1 1 2[  ] ==( 4X 53.125 Gbps Active/LinkUp ==> 1 2[  ] \"x\" ( )\n",
                2,
            ),
            ("x\nSwitch: nope:\n", 2),
            ("CA: no colon\n", 1),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn mutated_fixtures_never_panic() {
        for &(path, ..) in OUTPUTS {
            let Some(text) = fixture(&format!("ibsim-generated/{path}")) else {
                return;
            };
            let count = if text.len() > 100_000 { 70 } else { 200 };
            for (k, mutant) in mutants(&text, 0x11_0000 + path.len() as u64, count)
                .iter()
                .enumerate()
            {
                if std::panic::catch_unwind(|| parse(mutant)).is_err() {
                    panic!("{path} mutant {k} panicked:\n{mutant}");
                }
            }
        }
        let Some(all) = all_fixture_texts() else {
            return;
        };
        for (path, text) in all {
            let _ = std::panic::catch_unwind(|| parse(&text))
                .unwrap_or_else(|_| panic!("{path} panicked"));
            let _ = std::panic::catch_unwind(|| crate::io::NodeNameMap::parse(&text))
                .unwrap_or_else(|_| panic!("{path} panicked in the node-name-map reader"));
            for (k, mutant) in mutants(&text, 0x99, 20).iter().enumerate() {
                let _ = std::panic::catch_unwind(|| crate::io::NodeNameMap::parse(mutant))
                    .unwrap_or_else(|_| {
                        panic!("{path} mutant {k} panicked in the node-name-map reader")
                    });
            }
        }
    }
}
