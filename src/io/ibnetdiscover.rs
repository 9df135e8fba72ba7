//! `ibnetdiscover` topology dumps: reading them into a [`Fabric`] and writing a fabric in the
//! exact format of the real tool (infiniband-diags `dump_topology`).
//!
//! # What the reader accepts
//!
//! Every output variant of the tool: plain, `-g` (chassis grouping: `Chassis …`,
//! `Non-Chassis Nodes`, `switchguid=…\t# …`, `[ext N]` port suffixes), `-f` (` s=4 w=2 v=4`
//! suffixes), `-m` (extra header comments), `-s` progress lines, and dumps made with
//! `--node-name-map` (remapped switch header and peer descriptions). Tabs or runs of spaces
//! separate fields; a `0x` on GUIDs is optional; NodeDescriptions may contain `#` and `"` (a
//! description runs to the *last* quote of the line, which must be followed by ` lid N` on
//! port lines); `??` widths and `???` speeds read as unknown; `sysimgguid=` and blank lines may
//! be missing; routers (`Rt`), multi-port CAs and SHARP aggregation nodes are kept.
//!
//! Lines that cannot matter (stderr noise such as `src/query_smp.c:195; umad … bad status
//! 110`, `ibwarn:` lines, `-s` progress lines) are skipped with a warning. A line that starts
//! like a node header (`Switch`, `Ca`, `Rt` and a blank), a port line (`[`) or a
//! `key=value` line but is malformed stops the parse with a [`ParseError`] naming the line.
//!
//! # How the fabric is built
//!
//! * Nodes in dump order, with kind, port count, description, node GUID, vendor and device id
//!   and system image GUID from the block. A switch's LID and LMC (from its header) go to port
//!   0; switch ports share the node GUID. A CA or router port takes its GUID, LID and LMC from
//!   its own port line (`[1](portguid) … # lid N lmc M …`); ports without a line keep the
//!   defaults of [`Fabric::add_node`].
//! * **Names**: the node-name-map's name when the map has the node GUID; otherwise the
//!   NodeDescription when it is non-blank and no other node in the dump has the same one;
//!   otherwise the ibnetdiscover id (`S-0002c90300001234`, `H-…`, `R-…`). When two nodes would
//!   get the same name (e.g. a map naming two GUIDs alike), both get their ids, with a warning.
//! * **Cables**: every cable appears twice, once per end. Matching half-edges become one
//!   [`Link`](crate::topology::Link); when the two ends report different widths or speeds the
//!   lower one is kept, with a warning. A half-edge whose peer node is not in the dump (a
//!   partial dump taken mid-wiring) goes to [`Dump::dangling`]. A half-edge whose peer port
//!   lists a different cable is dropped with a warning naming both lines; one whose peer node is
//!   present but lists nothing on that port is kept, with a warning. A loopback cable between
//!   two ports of one node is an ordinary link.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::diagnostic::{Diagnostic, ParseError, excerpt};
use super::node_name_map::NodeNameMap;
use super::scan::Cursor;
use crate::topology::{
    Fabric, Guid, LinkSpeed, LinkWidth, Node, NodeId, NodeKind, NodeSpec, PortRef,
};

/// NodeDescription of the SHARP aggregation node inside Quantum switches.
pub const AGGREGATION_NODE_DESCRIPTION: &str = "Mellanox Technologies Aggregation Node";

/// Whether `node` is a SHARP aggregation node: the CA built into a Quantum switch (on its
/// last port, 41 or 65), reported as a CA with description
/// [`AGGREGATION_NODE_DESCRIPTION`]. Its "cable" is internal to the switch, so cabling checks
/// ignore it.
pub fn is_aggregation_node(node: &Node) -> bool {
    node.kind == NodeKind::Ca && node.description.trim() == AGGREGATION_NODE_DESCRIPTION
}

/// The ibnetdiscover id of a node: `S-`, `H-` or `R-` and the node GUID in 16 hex digits.
pub fn node_id(kind: NodeKind, guid: Guid) -> String {
    format!("{}-{:016x}", kind.id_prefix(), guid.0)
}

/// A parsed dump.
#[derive(Debug, Clone)]
pub struct Dump {
    /// The nodes and the cables whose both ends are in the dump. Named `ibnetdiscover`.
    pub fabric: Fabric,
    /// Skipped lines and inconsistencies, in line order.
    pub warnings: Vec<Diagnostic>,
    /// Half-edges whose peer node is not in the dump.
    pub dangling: Vec<DanglingCable>,
    /// Number of port lines (half-edges) read.
    pub port_lines: usize,
}

/// A cable seen from one end only, because the node at the other end is not in the dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingCable {
    /// Line of the port line.
    pub line: usize,
    /// The node that reported the cable.
    pub node: NodeId,
    /// Its node GUID.
    pub node_guid: Guid,
    /// Its port.
    pub port: u8,
    /// The kind the peer id claims (`S-`, `H-`, `R-`; `None` for `?-`).
    pub peer_kind: Option<NodeKind>,
    /// The peer's node GUID.
    pub peer_guid: Guid,
    /// The peer's port.
    pub peer_port: u8,
    /// The peer's port GUID, when printed (peers that are not switches).
    pub peer_port_guid: Option<Guid>,
    /// The peer's description as printed (node-name-map remapped if the dump was).
    pub peer_desc: String,
    /// Active width, `None` for `??`.
    pub width: Option<LinkWidth>,
    /// Active speed, `None` for `???`.
    pub speed: Option<LinkSpeed>,
}

/// Reads an ibnetdiscover dump. `names` supplies node names by node GUID (see the module
/// documentation for the naming rule).
///
/// # Errors
/// The first line that looks like a node header, port line or `key=value` line but is
/// malformed, or that contradicts the dump (a node listed twice, a port beyond the node's
/// port count, two different port lines for one port).
pub fn parse(text: &str, names: Option<&NodeNameMap>) -> Result<Dump, ParseError> {
    let mut parser = Parser::default();
    for (i, line) in text.lines().enumerate() {
        parser.line(i + 1, line)?;
    }
    parser.finish(names)
}

const PORT_HINT: &str =
    "a port line like [3] \"S-0002c90300001234\"[5] # \"desc\" lid 1 4xHDR, or a node header";
const HEADER_HINT: &str =
    "a node header like Switch 36 \"S-0002c90300001234\" # \"desc\" enhanced port 0 lid 1 lmc 0";

/// One node block as read.
struct RawNode<'a> {
    line: usize,
    kind: NodeKind,
    guid: Guid,
    num_ports: u8,
    desc: &'a str,
    vendor_id: u32,
    device_id: u32,
    system_guid: Option<Guid>,
    lid: u16,
    lmc: u8,
    /// Index into `Parser::edges` of each port's line (index 0 unused).
    ports: Vec<Option<u32>>,
}

/// One port line: a cable seen from one end.
struct HalfEdge<'a> {
    line: usize,
    node: u32,
    port: u8,
    port_guid: Option<Guid>,
    lid: Option<(u16, u8)>,
    peer_kind: Option<NodeKind>,
    peer_guid: Guid,
    peer_port: u8,
    peer_port_guid: Option<Guid>,
    peer_desc: &'a str,
    width: Option<LinkWidth>,
    speed: Option<LinkSpeed>,
}

/// `key=value` lines seen since the last node header.
#[derive(Default)]
struct Pending {
    line: usize,
    vendor_id: Option<u32>,
    device_id: Option<u32>,
    system_guid: Option<Guid>,
    node_guid: Option<Guid>,
}

#[derive(Default)]
struct Parser<'a> {
    nodes: Vec<RawNode<'a>>,
    by_guid: HashMap<Guid, u32>,
    edges: Vec<HalfEdge<'a>>,
    pending: Pending,
    warnings: Vec<Diagnostic>,
}

const KV_KEYS: [&str; 6] = [
    "vendid",
    "devid",
    "sysimgguid",
    "switchguid",
    "caguid",
    "rtguid",
];

/// The node kind a header line starts with (`Switch`, `Ca`, `Rt` and a blank).
fn header_kind(line: &str) -> Option<NodeKind> {
    [
        ("Switch", NodeKind::Switch),
        ("Ca", NodeKind::Ca),
        ("Rt", NodeKind::Router),
    ]
    .into_iter()
    .find(|(word, _)| {
        line.strip_prefix(word)
            .is_some_and(|rest| rest.starts_with([' ', '\t']))
    })
    .map(|(_, kind)| kind)
}

/// `"S-<guid>"`: the kind its letter names (`None` for `?`) and the GUID.
fn quoted_id(c: &mut Cursor<'_>) -> Option<(Option<NodeKind>, Guid)> {
    if !c.eat_byte(b'"') {
        return None;
    }
    let kind = match c.peek()? {
        b'S' => Some(NodeKind::Switch),
        b'H' => Some(NodeKind::Ca),
        b'R' => Some(NodeKind::Router),
        b'?' => None,
        _ => return None,
    };
    c.eat_byte(c.peek()?);
    if !c.eat_byte(b'-') {
        return None;
    }
    let guid = c.guid()?;
    c.eat_byte(b'"').then_some((kind, guid))
}

/// `[ext N]` after a port number, if present. `None` when it is malformed.
fn ext_port(c: &mut Cursor<'_>) -> Option<()> {
    if c.eat("[ext") {
        c.skip_ws();
        c.uint(255)?;
        if !c.eat_byte(b']') {
            return None;
        }
    }
    Some(())
}

/// `(guid)`, if present. `Err` when it is malformed.
fn paren_guid(c: &mut Cursor<'_>) -> Result<Option<Guid>, ()> {
    if !c.eat_byte(b'(') {
        return Ok(None);
    }
    let guid = c.guid().ok_or(())?;
    if c.eat_byte(b')') {
        Ok(Some(guid))
    } else {
        Err(())
    }
}

/// A rate token like `4xHDR`, `1xSDR`, `??SDR`, `4x???`.
enum Rate {
    Known(Option<LinkWidth>, Option<LinkSpeed>),
    /// Readable as width + speed, but one of them is not a known token.
    Unknown(Option<LinkWidth>, Option<LinkSpeed>, String),
}

fn rate(token: &str) -> Option<Rate> {
    let (width, width_text, speed_text) = if let Some(rest) = token.strip_prefix("??") {
        (None, "??", rest)
    } else {
        let digits = token.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !matches!(token.as_bytes().get(digits), Some(b'x' | b'X')) {
            return None;
        }
        let width_text = &token[..=digits];
        (
            width_text.parse::<LinkWidth>().ok(),
            width_text,
            &token[digits + 1..],
        )
    };
    if speed_text.is_empty() {
        return None;
    }
    let speed = if speed_text.bytes().all(|b| b == b'?') {
        None
    } else {
        speed_text.parse::<LinkSpeed>().ok()
    };
    let width_unknown = width.is_none() && width_text != "??";
    let speed_unknown = speed.is_none() && !speed_text.bytes().all(|b| b == b'?');
    Some(if width_unknown || speed_unknown {
        Rate::Unknown(
            width,
            speed,
            format!("unknown link rate {token:?} read as partly unknown"),
        )
    } else {
        Rate::Known(width, speed)
    })
}

/// Skips `-f`, `-g` and Xsigo suffixes after the rate; returns leftover text, if any.
fn trailing<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    loop {
        c.skip_ws();
        if c.is_empty() {
            return None;
        }
        let before = *c;
        let token = c.token();
        let known = match token {
            "(scp)" => true,
            "slot" => {
                c.skip_ws();
                c.uint(u64::MAX).is_some()
            }
            t => {
                ["s=", "w=", "v="].iter().any(|p| t.starts_with(p))
                    && t[2..].bytes().all(|b| b.is_ascii_digit())
            }
        };
        if !known {
            return Some(before.rest());
        }
    }
}

impl<'a> Parser<'a> {
    fn line(&mut self, n: usize, raw: &'a str) -> Result<(), ParseError> {
        let line = raw.trim_matches([' ', '\t', '\r']);
        let Some(first) = line.bytes().next() else {
            return Ok(());
        };
        match first {
            b'#' => Ok(()),
            b'[' => self.port_line(n, line),
            _ => {
                if let Some(key) = KV_KEYS.into_iter().find(|k| {
                    line.strip_prefix(k)
                        .is_some_and(|rest| rest.starts_with('='))
                }) {
                    self.key_value(n, line, key)
                } else if let Some(kind) = header_kind(line) {
                    self.header(n, line, kind)
                } else if line.starts_with("Chassis ")
                    || line.starts_with("Non-Chassis Nodes")
                    || line.starts_with("Hostname: ")
                {
                    Ok(()) // -g grouping lines
                } else {
                    self.warnings.push(Diagnostic::warning(
                        n,
                        format!(
                            "skipped a line that is not ibnetdiscover output: {}",
                            excerpt(line)
                        ),
                    ));
                    Ok(())
                }
            }
        }
    }

    fn key_value(&mut self, n: usize, line: &str, key: &str) -> Result<(), ParseError> {
        let mut c = Cursor::new(line);
        c.eat(key);
        c.eat_byte(b'=');
        let err = |what: &str| ParseError::new(n, format!("{what} after {key}="), line);
        if self.pending.line == 0 {
            self.pending.line = n;
        }
        match key {
            "vendid" | "devid" => {
                let value = c
                    .hex(8)
                    .ok_or_else(|| err("a hex number like 0x2c9 (at most 8 digits)"))?;
                let value = u32::try_from(value).unwrap_or(u32::MAX);
                if key == "vendid" {
                    self.pending.vendor_id = Some(value);
                } else {
                    self.pending.device_id = Some(value);
                }
            }
            _ => {
                let guid = c
                    .guid()
                    .ok_or_else(|| err("a 64-bit hex GUID like 0x0002c90300001234"))?;
                if key == "sysimgguid" {
                    self.pending.system_guid = Some(guid);
                } else {
                    self.pending.node_guid = Some(guid);
                    paren_guid(&mut c).map_err(|()| err("a port GUID in parentheses"))?;
                }
            }
        }
        c.skip_ws();
        if !c.is_empty() && c.peek() != Some(b'#') {
            return Err(err("the end of the line or a # comment after the value"));
        }
        Ok(())
    }

    fn header(&mut self, n: usize, line: &'a str, kind: NodeKind) -> Result<(), ParseError> {
        let err = |what: &str| ParseError::new(n, format!("{what} in {HEADER_HINT}"), line);
        let mut c = Cursor::new(line);
        c.token();
        c.skip_ws();
        let num_ports = c
            .uint(255)
            .filter(|&p| p > 0)
            .ok_or_else(|| err("the number of ports (1..=255)"))? as u8;
        if c.skip_ws() == 0 {
            return Err(err("a blank after the number of ports"));
        }
        let (id_kind, guid) =
            quoted_id(&mut c).ok_or_else(|| err("a quoted node id like \"S-0002c90300001234\""))?;
        c.skip_ws();
        if !c.eat_byte(b'#') {
            return Err(err("# after the node id"));
        }
        c.skip_ws();
        if !c.eat_byte(b'"') {
            return Err(err("the quoted NodeDescription after #"));
        }
        let desc = c
            .until_last(b'"')
            .ok_or_else(|| err("the closing quote of the NodeDescription"))?;
        c.eat_byte(b'"');
        c.skip_ws();
        let (mut lid, mut lmc) = (0, 0);
        if c.eat("enhanced") || c.eat("base") {
            let sma = (|| {
                c.skip_ws();
                c.eat("port").then_some(())?;
                c.skip_ws();
                c.uint(255)?;
                c.skip_ws();
                c.eat("lid").then_some(())?;
                c.skip_ws();
                let lid = c.uint(u64::from(u16::MAX))? as u16;
                c.skip_ws();
                c.eat("lmc").then_some(())?;
                c.skip_ws();
                let lmc = c.uint(7)? as u8;
                Some((lid, lmc))
            })()
            .ok_or_else(|| err("`port 0 lid N lmc M` after enhanced/base"))?;
            (lid, lmc) = sma;
        }
        c.skip_ws();
        c.eat("(scp)");
        c.skip_ws();
        if !c.is_empty() {
            return Err(err("the end of the header after the description"));
        }

        if let Some(&prev) = self.by_guid.get(&guid) {
            return Err(ParseError::new(
                n,
                format!(
                    "a node not listed before ({} already has a header at line {})",
                    node_id(kind, guid),
                    self.nodes[prev as usize].line
                ),
                line,
            ));
        }
        if id_kind.is_some_and(|k| k != kind) {
            self.warnings.push(Diagnostic::warning(
                n,
                format!(
                    "node id {} has the wrong letter for a {kind:?} header",
                    excerpt(&line[line.find('"').unwrap_or(0)..])
                ),
            ));
        }
        let pending = std::mem::take(&mut self.pending);
        if let Some(g) = pending.node_guid.filter(|&g| g != guid) {
            self.warnings.push(Diagnostic::warning(
                n,
                format!(
                    "the node GUID {g} of line {} differs from the header's {guid}; using the header's",
                    pending.line
                ),
            ));
        }
        self.by_guid.insert(guid, self.nodes.len() as u32);
        self.nodes.push(RawNode {
            line: n,
            kind,
            guid,
            num_ports,
            desc,
            vendor_id: pending.vendor_id.unwrap_or(0),
            device_id: pending.device_id.unwrap_or(0),
            system_guid: pending.system_guid.filter(|g| g.0 != 0),
            lid,
            lmc,
            ports: vec![None; usize::from(num_ports) + 1],
        });
        Ok(())
    }

    fn port_line(&mut self, n: usize, line: &'a str) -> Result<(), ParseError> {
        let err = |what: &str| ParseError::new(n, format!("{what} in {PORT_HINT}"), line);
        let Some(node_index) = self.nodes.len().checked_sub(1) else {
            return Err(ParseError::new(
                n,
                "a node header (Switch, Ca or Rt) before the first port line",
                line,
            ));
        };
        let mut c = Cursor::new(line);
        c.eat_byte(b'[');
        let port = c.uint(255).ok_or_else(|| err("a port number"))? as u8;
        if !c.eat_byte(b']') {
            return Err(err("] after the port number"));
        }
        ext_port(&mut c).ok_or_else(|| err("[ext N]"))?;
        let port_guid = paren_guid(&mut c).map_err(|()| err("a port GUID in parentheses"))?;
        c.skip_ws();
        let (peer_kind, peer_guid) =
            quoted_id(&mut c).ok_or_else(|| err("a quoted peer id like \"S-0002c90300001234\""))?;
        if !c.eat_byte(b'[') {
            return Err(err("[ after the peer id"));
        }
        let peer_port = c
            .uint(255)
            .filter(|&p| p > 0)
            .ok_or_else(|| err("the peer port number (1..=255)"))? as u8;
        if !c.eat_byte(b']') {
            return Err(err("] after the peer port number"));
        }
        ext_port(&mut c).ok_or_else(|| err("[ext N]"))?;
        c.skip_ws();
        let peer_port_guid =
            paren_guid(&mut c).map_err(|()| err("a peer port GUID in parentheses"))?;
        c.skip_ws();
        if !c.eat_byte(b'#') {
            return Err(err("# before the peer description"));
        }
        c.skip_ws();
        let lid = if c.eat("lid") {
            let own = (|| {
                c.skip_ws();
                let lid = c.uint(u64::from(u16::MAX))? as u16;
                c.skip_ws();
                c.eat("lmc").then_some(())?;
                c.skip_ws();
                let lmc = c.uint(7)? as u8;
                c.skip_ws();
                Some((lid, lmc))
            })();
            Some(own.ok_or_else(|| err("`lid N lmc M` (own LID) after #"))?)
        } else {
            None
        };
        if !c.eat_byte(b'"') {
            return Err(err("the quoted peer description"));
        }
        let peer_desc = c
            .until_last(b'"')
            .ok_or_else(|| err("the closing quote of the peer description"))?;
        c.eat_byte(b'"');
        c.skip_ws();
        let rate = (|| {
            c.eat("lid").then_some(())?;
            c.skip_ws();
            c.uint(u64::from(u16::MAX))?;
            if c.skip_ws() == 0 {
                return None;
            }
            rate(c.token())
        })()
        .ok_or_else(|| err("`lid N` and a rate like 4xHDR after the peer description"))?;
        let (width, speed) = match rate {
            Rate::Known(w, s) => (w, s),
            Rate::Unknown(w, s, message) => {
                self.warnings.push(Diagnostic::warning(n, message));
                (w, s)
            }
        };
        if let Some(rest) = trailing(&mut c) {
            self.warnings.push(Diagnostic::warning(
                n,
                format!("ignored {} at the end of the port line", excerpt(rest)),
            ));
        }

        let node = &self.nodes[node_index];
        if port == 0 || port > node.num_ports {
            return Err(ParseError::new(
                n,
                format!(
                    "a port number 1..={} ({} has {} ports, header at line {})",
                    node.num_ports,
                    node_id(node.kind, node.guid),
                    node.num_ports,
                    node.line
                ),
                line,
            ));
        }
        if let Some(prev) = node.ports[usize::from(port)] {
            let prev = &self.edges[prev as usize];
            if prev.peer_guid == peer_guid && prev.peer_port == peer_port {
                self.warnings.push(Diagnostic::warning(
                    n,
                    format!("repeats the port line at line {}; ignored", prev.line),
                ));
                return Ok(());
            }
            return Err(ParseError::new(
                n,
                format!(
                    "one port line per port ({}[{port}] already listed at line {})",
                    node_id(node.kind, node.guid),
                    prev.line
                ),
                line,
            ));
        }
        let index = self.edges.len() as u32;
        self.nodes[node_index].ports[usize::from(port)] = Some(index);
        self.edges.push(HalfEdge {
            line: n,
            node: node_index as u32,
            port,
            port_guid,
            lid,
            peer_kind,
            peer_guid,
            peer_port,
            peer_port_guid,
            peer_desc,
            width,
            speed,
        });
        Ok(())
    }

    /// Node names: map name, unique description, or id; duplicates fall back to ids.
    fn names(&mut self, map: Option<&NodeNameMap>) -> Vec<String> {
        let mut desc_count: HashMap<&str, u32> = HashMap::new();
        for node in &self.nodes {
            *desc_count.entry(node.desc).or_default() += 1;
        }
        let candidates: Vec<(String, bool)> = self
            .nodes
            .iter()
            .map(|node| match map.and_then(|m| m.get(node.guid)) {
                Some(name) => (name.to_owned(), true),
                None if !node.desc.trim().is_empty() && desc_count[node.desc] == 1 => {
                    (node.desc.to_owned(), false)
                }
                None => (node_id(node.kind, node.guid), false),
            })
            .collect();
        let mut count: HashMap<&str, u32> = HashMap::new();
        for (name, _) in &candidates {
            *count.entry(name.as_str()).or_default() += 1;
        }
        let mut names = Vec::with_capacity(candidates.len());
        for (node, (name, from_map)) in self.nodes.iter().zip(&candidates) {
            if count[name.as_str()] > 1 {
                let id = node_id(node.kind, node.guid);
                if *from_map {
                    self.warnings.push(Diagnostic::warning(
                        node.line,
                        format!("the node-name-map name {name:?} is not unique; named {id}"),
                    ));
                }
                names.push(id);
            } else {
                names.push(name.clone());
            }
        }
        names
    }

    fn finish(mut self, map: Option<&NodeNameMap>) -> Result<Dump, ParseError> {
        let names = self.names(map);
        let mut fabric = Fabric::new("ibnetdiscover");
        for (node, name) in self.nodes.iter().zip(names) {
            let spec = NodeSpec {
                kind: node.kind,
                name,
                description: node.desc.to_owned(),
                guid: node.guid,
                num_ports: node.num_ports,
                rack: None,
            };
            let id = fabric.add_node(spec).map_err(|e| {
                ParseError::new(
                    node.line,
                    format!("a node with a unique name ({e})"),
                    node.desc,
                )
            })?;
            let n = fabric.node_mut(id);
            n.vendor_id = node.vendor_id;
            n.device_id = node.device_id;
            n.system_guid = node.system_guid;
            if node.kind == NodeKind::Switch {
                n.ports[0].lid = node.lid;
                n.ports[0].lmc = node.lmc;
            }
        }
        for e in &self.edges {
            let node = fabric.node_mut(NodeId(e.node));
            if node.kind == NodeKind::Switch {
                continue;
            }
            let port = &mut node.ports[usize::from(e.port)];
            if let Some(guid) = e.port_guid {
                port.guid = guid;
            }
            if let Some((lid, lmc)) = e.lid {
                port.lid = lid;
                port.lmc = lmc;
            }
        }

        let mut warnings = std::mem::take(&mut self.warnings);
        let mut dangling = Vec::new();
        let mut done = vec![false; self.edges.len()];
        let end = |e: &HalfEdge<'_>| PortRef {
            node: NodeId(e.node),
            port: e.port,
        };
        // Matching pairs first, so that one-sided lines cannot take their ports.
        for i in 0..self.edges.len() {
            let e = &self.edges[i];
            let Some(j) = self.mate(e) else { continue };
            if done[i] {
                continue;
            }
            done[i] = true;
            done[j] = true;
            if i == j {
                warnings.push(Diagnostic::warning(
                    e.line,
                    format!("{} is cabled to itself; ignored", fabric.port_name(end(e))),
                ));
                continue;
            }
            let f = &self.edges[j];
            let (width, speed) = self.check_pair(&fabric, e, f, &mut warnings);
            if let Err(err) = fabric.connect(end(e), end(f), width, speed) {
                warnings.push(Diagnostic::warning(e.line, format!("cable ignored: {err}")));
            }
        }
        for (i, e) in self.edges.iter().enumerate() {
            if done[i] {
                continue;
            }
            let here = fabric.port_name(end(e));
            let Some(&peer) = self.by_guid.get(&e.peer_guid) else {
                dangling.push(DanglingCable {
                    line: e.line,
                    node: NodeId(e.node),
                    node_guid: self.nodes[e.node as usize].guid,
                    port: e.port,
                    peer_kind: e.peer_kind,
                    peer_guid: e.peer_guid,
                    peer_port: e.peer_port,
                    peer_port_guid: e.peer_port_guid,
                    peer_desc: e.peer_desc.to_owned(),
                    width: e.width,
                    speed: e.speed,
                });
                continue;
            };
            let p = &self.nodes[peer as usize];
            let there = PortRef {
                node: NodeId(peer),
                port: e.peer_port,
            };
            if e.peer_port > p.num_ports {
                warnings.push(Diagnostic::warning(
                    e.line,
                    format!(
                        "{here} → port {} of {}, which has {} ports (header at line {}); cable ignored",
                        e.peer_port,
                        fabric.node(NodeId(peer)).name,
                        p.num_ports,
                        p.line
                    ),
                ));
            } else if let Some(j) = p.ports[usize::from(e.peer_port)] {
                let f = &self.edges[j as usize];
                let claimed = match self.by_guid.get(&f.peer_guid) {
                    Some(&q) => fabric.port_name(PortRef {
                        node: NodeId(q),
                        port: f.peer_port,
                    }),
                    None => format!("{:#x}[{}]", f.peer_guid.0, f.peer_port),
                };
                warnings.push(Diagnostic::warning(
                    e.line,
                    format!(
                        "inconsistent cable: line {} says {here} → {}, but line {} says {} → {claimed}; ignored",
                        e.line,
                        fabric.port_name(there),
                        f.line,
                        fabric.port_name(there),
                    ),
                ));
            } else {
                warnings.push(Diagnostic::warning(
                    e.line,
                    format!(
                        "{here} → {} is reported from this end only ({} lists no cable on port {}, header at line {}); kept",
                        fabric.port_name(there),
                        fabric.node(NodeId(peer)).name,
                        e.peer_port,
                        p.line
                    ),
                ));
                if let Err(err) = fabric.connect(end(e), there, e.width, e.speed) {
                    warnings.push(Diagnostic::warning(e.line, format!("cable ignored: {err}")));
                }
            }
        }
        warnings.sort_by_key(|d| d.line);
        Ok(Dump {
            fabric,
            warnings,
            dangling,
            port_lines: self.edges.len(),
        })
    }

    /// The index of the half-edge at the other end of `e`, if it points back at `e`.
    fn mate(&self, e: &HalfEdge<'_>) -> Option<usize> {
        let peer = &self.nodes[*self.by_guid.get(&e.peer_guid)? as usize];
        let j = (*peer.ports.get(usize::from(e.peer_port))?)? as usize;
        let f = &self.edges[j];
        (f.peer_guid == self.nodes[e.node as usize].guid && f.peer_port == e.port).then_some(j)
    }

    /// Cross-checks the two ends of one cable; returns the rate to keep.
    fn check_pair(
        &self,
        fabric: &Fabric,
        e: &HalfEdge<'_>,
        f: &HalfEdge<'_>,
        warnings: &mut Vec<Diagnostic>,
    ) -> (Option<LinkWidth>, Option<LinkSpeed>) {
        for (x, y) in [(e, f), (f, e)] {
            let peer = &self.nodes[y.node as usize];
            if x.peer_kind.is_some_and(|k| k != peer.kind) {
                warnings.push(Diagnostic::warning(
                    x.line,
                    format!(
                        "peer id letter says {:?} but {} is a {:?} (line {})",
                        x.peer_kind.unwrap_or(peer.kind),
                        node_id(peer.kind, peer.guid),
                        peer.kind,
                        peer.line
                    ),
                ));
            }
            let said_own = x.peer_port_guid.zip(y.port_guid);
            if let Some((said, own)) =
                said_own.filter(|(s, o)| s != o && peer.kind != NodeKind::Switch)
            {
                warnings.push(Diagnostic::warning(
                    x.line,
                    format!(
                        "peer port GUID {said} differs from {own} on line {}",
                        y.line
                    ),
                ));
            }
        }
        let (width, speed) = (lower(e.width, f.width), lower(e.speed, f.speed));
        if e.width != f.width || e.speed != f.speed {
            let show = |h: &HalfEdge<'_>| {
                format!(
                    "{}{}",
                    h.width.map_or("??".into(), |w| w.to_string()),
                    h.speed.map_or("???", LinkSpeed::token)
                )
            };
            warnings.push(Diagnostic::warning(
                e.line,
                format!(
                    "the ends of {} disagree on the rate: {} here, {} on line {}; keeping the lower",
                    fabric.port_name(PortRef {
                        node: NodeId(e.node),
                        port: e.port
                    }),
                    show(e),
                    show(f),
                    f.line
                ),
            ));
        }
        (width, speed)
    }
}

/// The lower of two optional values, ignoring unknowns.
fn lower<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A NodeDescription as the tool prints it: non-printable characters become spaces.
fn clean(desc: &str) -> std::borrow::Cow<'_, str> {
    if desc.chars().all(|c| !c.is_control()) {
        desc.into()
    } else {
        desc.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
            .into()
    }
}

/// Writes `fabric` as ibnetdiscover prints a discovered fabric: a header comment, then every
/// switch, CA and router block (in this order, each in fabric order) with one port line per
/// cabled port. Switches are written as `enhanced`; unknown widths and speeds as `??`/`???`.
/// Reading the text back with [`parse`] gives the same nodes (kinds, GUIDs, descriptions,
/// port counts, vendor/device/system GUIDs, LIDs, port GUIDs of cabled ports) and cables.
pub fn write(fabric: &Fabric) -> String {
    let mut out = String::with_capacity(256 + fabric.links().len() * 2 * 100);
    let first = fabric.hosts().next().or_else(|| fabric.switches().next());
    let (from_node, from_port) = first.map_or((0, 0), |id| {
        let n = fabric.node(id);
        (n.guid.0, n.ports.get(1).map_or(n.guid.0, |p| p.guid.0))
    });
    let _ = write!(
        out,
        "#\n# Topology file: generated by ibfabric from {}\n#\n\
         # Initiated from node {from_node:016x} port {from_port:016x}\n",
        clean(&fabric.name)
    );
    for kind in [NodeKind::Switch, NodeKind::Ca, NodeKind::Router] {
        for (i, node) in fabric.nodes().iter().enumerate() {
            if node.kind == kind {
                write_node(&mut out, fabric, NodeId(i as u32), node);
            }
        }
    }
    out
}

fn write_node(out: &mut String, fabric: &Fabric, id: NodeId, node: &Node) {
    let _ = write!(
        out,
        "\nvendid=0x{:x}\ndevid=0x{:x}\n",
        node.vendor_id, node.device_id
    );
    if let Some(g) = node.system_guid.filter(|g| g.0 != 0) {
        let _ = writeln!(out, "sysimgguid=0x{:x}", g.0);
    }
    let nid = node_id(node.kind, node.guid);
    let desc = clean(&node.description);
    let num_ports = node.num_ports();
    match node.kind {
        NodeKind::Switch => {
            let _ = write!(
                out,
                "switchguid=0x{:x}({:x})\nSwitch\t{num_ports} \"{nid}\"\t\t# \"{desc}\" enhanced port 0 lid {} lmc {}\n",
                node.guid.0, node.ports[0].guid.0, node.ports[0].lid, node.ports[0].lmc
            );
        }
        NodeKind::Ca | NodeKind::Router => {
            let (key, word) = if node.kind == NodeKind::Ca {
                ("caguid", "Ca")
            } else {
                ("rtguid", "Rt")
            };
            let _ = write!(
                out,
                "{key}=0x{:x}\n{word}\t{num_ports} \"{nid}\"\t\t# \"{desc}\"\n",
                node.guid.0
            );
        }
    }
    for port in 1..=num_ports {
        let here = PortRef { node: id, port };
        let Some(peer) = fabric.peer(here) else {
            continue;
        };
        let link = fabric.link(
            node.ports[usize::from(port)]
                .link
                .expect("peer implies a link"),
        );
        let peer_node = fabric.node(peer.node);
        let peer_port = &peer_node.ports[usize::from(peer.port)];
        let peer_lid = if peer_node.is_switch() {
            peer_node.ports[0].lid
        } else {
            peer_port.lid
        };
        let width = link
            .width
            .map_or_else(|| "??".to_owned(), |w| w.to_string());
        let speed = link.speed.map_or("???", LinkSpeed::token);
        let peer_id = node_id(peer_node.kind, peer_node.guid);
        let peer_desc = clean(&peer_node.description);
        if node.is_switch() {
            let _ = write!(out, "[{port}]\t\"{peer_id}\"[{}]", peer.port);
            if !peer_node.is_switch() {
                let _ = write!(out, "({:x}) ", peer_port.guid.0);
            }
            let _ = writeln!(out, "\t\t# \"{peer_desc}\" lid {peer_lid} {width}{speed}");
        } else {
            let own = &node.ports[usize::from(port)];
            let _ = write!(
                out,
                "[{port}]({:x}) \t\"{peer_id}\"[{}]",
                own.guid.0, peer.port
            );
            if !peer_node.is_switch() {
                let _ = write!(out, " ({:x}) ", peer_port.guid.0);
            }
            let _ = writeln!(
                out,
                "\t\t# lid {} lmc {} \"{peer_desc}\" lid {peer_lid} {width}{speed}",
                own.lid, own.lmc
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::io::fixture;
    use crate::io::mutate::{all_fixture_texts, mutants};
    use crate::topology::Construction;
    use crate::topology::slimfly::SlimFly;

    /// (fixture, switches, CAs, routers, port lines, cables).
    ///
    /// Counted independently of this parser: `grep -c '^Switch'`, `grep -c '^Ca'`,
    /// `grep -c '^Rt'` and `grep -c '^\['` on each file; cables = unordered pairs of port lines
    /// naming each other, counted by a throw-away Python script over the regexes of cabling.md
    /// 1.4 (in every fixture that is port lines / 2: none has a dangling, one-sided or
    /// inconsistent line). The NDR numbers match the fixtures README (31 leaves + 9 spines,
    /// 582 CAs, 2228 port lines), the Slim Fly ones its 175 + 200 cables.
    const DUMPS: &[(&str, usize, usize, usize, usize, usize)] = &[
        ("jabl-ibtopotool_ibm-doc-mt43132_2.topo", 1, 2, 0, 4, 2),
        ("jabl-ibtopotool_manpage-voltaire_1.topo", 2, 4, 0, 14, 7),
        (
            "jabl-ibtopotool_mixed-speed-loopback_3.topo",
            2,
            6,
            0,
            20,
            10,
        ),
        ("jabl-ibtopotool_oracle-sun-dcs36_4.topo", 1, 1, 0, 2, 1),
        (
            "nvidia-topograph_gb200-lone-ca_example-bad.out",
            0,
            1,
            0,
            0,
            0,
        ),
        (
            "nvidia-topograph_ndr-dgx-superpod_example.out",
            40,
            582,
            0,
            2228,
            1114,
        ),
        (
            "loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt",
            8,
            144,
            0,
            384,
            192,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover_-f.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover_-g.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover_-m.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/baseline/ibnetdiscover_node-name-map.topo",
            4,
            6,
            1,
            34,
            17,
        ),
        (
            "ibsim-generated/after-faults/ibnetdiscover.topo",
            4,
            5,
            1,
            30,
            15,
        ),
        (
            "ibsim-generated/slimfly-q5/clean.ibnetdiscover.topo",
            50,
            200,
            0,
            750,
            375,
        ),
        (
            "ibsim-generated/slimfly-q5/faulty.ibnetdiscover.topo",
            50,
            200,
            0,
            748,
            374,
        ),
        (
            "ibsim-generated/slimfly-q5/partial.ibnetdiscover.topo",
            40,
            120,
            0,
            480,
            240,
        ),
    ];

    fn dump(path: &str) -> Dump {
        parse(&fixture(path), None).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    type NodeSnapshot = (
        NodeKind,
        String,
        u8,
        u32,
        u32,
        Option<Guid>,
        Vec<(Guid, u16, u8)>,
    );
    type Cable = ((Guid, u8), (Guid, u8), Option<LinkWidth>, Option<LinkSpeed>);

    /// Everything a dump carries, keyed by GUID (names aside).
    fn snapshot(f: &Fabric) -> (BTreeMap<Guid, NodeSnapshot>, BTreeSet<Cable>) {
        let nodes = f
            .nodes()
            .iter()
            .map(|n| {
                let ports = n.ports.iter().map(|p| (p.guid, p.lid, p.lmc)).collect();
                let snap = (
                    n.kind,
                    n.description.clone(),
                    n.num_ports(),
                    n.vendor_id,
                    n.device_id,
                    n.system_guid,
                    ports,
                );
                (n.guid, snap)
            })
            .collect();
        let end = |e: PortRef| (f.node(e.node).guid, e.port);
        let cables = f
            .links()
            .iter()
            .map(|l| {
                let (a, b) = (end(l.a), end(l.b));
                (a.min(b), a.max(b), l.width, l.speed)
            })
            .collect();
        (nodes, cables)
    }

    fn names(f: &Fabric) -> BTreeMap<Guid, String> {
        f.nodes().iter().map(|n| (n.guid, n.name.clone())).collect()
    }

    #[test]
    fn every_fixture_parses_with_the_counted_nodes_and_cables() {
        for &(path, switches, cas, routers, port_lines, cables) in DUMPS {
            let d = dump(path);
            let s = d.fabric.summary();
            assert_eq!(
                (s.switches, s.hosts, s.routers),
                (switches, cas, routers),
                "{path}"
            );
            assert_eq!(d.port_lines, port_lines, "{path}");
            assert_eq!(d.fabric.links().len(), cables, "{path}");
            assert!(d.dangling.is_empty(), "{path}: {:?}", d.dangling);
            for w in &d.warnings {
                assert!(
                    !w.message.contains("inconsistent") && !w.message.contains("one end"),
                    "{path}: {w}"
                );
            }
        }
    }

    #[test]
    fn real_world_quirks() {
        // stderr noise on line 1, single spaces, three loopback cables on one switch.
        let d = dump("jabl-ibtopotool_mixed-speed-loopback_3.topo");
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert_eq!(d.warnings[0].line, 1);
        let f = &d.fabric;
        assert_eq!(f.links().iter().filter(|l| l.a.node == l.b.node).count(), 3);
        let sw = f.node_by_name("SwitchIB Mellanox Technologies").unwrap();
        assert_eq!(
            f.peer(PortRef { node: sw, port: 19 }),
            Some(PortRef { node: sw, port: 21 })
        );
        let slow = f.node_by_name("r-ufm96 HCA-1").unwrap();
        let link = f.link(f.node(slow).ports[1].link.unwrap());
        assert_eq!(
            (link.width, link.speed),
            (Some(LinkWidth::X4), Some(LinkSpeed::Sdr))
        );

        // Man page example: 8-space indentation, no sysimgguid on one switch, two links whose
        // ends disagree (4xSDR on the switch, 1xSDR on the other end), 4 CAs sharing one
        // description (so they are named by id), LMC 1.
        let d = dump("jabl-ibtopotool_manpage-voltaire_1.topo");
        let f = &d.fabric;
        let disagree: Vec<_> = d
            .warnings
            .iter()
            .filter(|w| w.message.contains("disagree"))
            .collect();
        assert_eq!(disagree.len(), 2, "{:?}", d.warnings);
        let isr = f.node_by_name("ISR9024 Voltaire").unwrap();
        let l10 = f.link(f.node(isr).ports[10].link.unwrap());
        assert_eq!(l10.width, Some(LinkWidth::X1), "the lower width is kept");
        let sw6 = f.node(f.node_by_name("SW-6IB4 Voltaire").unwrap());
        assert_eq!(sw6.system_guid, None);
        assert_eq!(sw6.ports[0].lid, 3);
        let ca = f.node(f.node_by_name("H-0008f10403960558").unwrap());
        assert_eq!(ca.description, "MT23108 InfiniHost Mellanox Technologies");
        assert_eq!(ca.ports[2].guid, Guid(0x8f1040396055a));
        assert_eq!((ca.ports[1].lid, ca.ports[1].lmc), (10, 1));

        // IBM doc: no sysimgguid on the switch, a CA cabled on port 2 only.
        let f = dump("jabl-ibtopotool_ibm-doc-mt43132_2.topo").fabric;
        let sw = f.node(f.node_by_guid(Guid(0xb8cffff0053ee)).unwrap());
        assert_eq!(
            (sw.system_guid, sw.vendor_id, sw.device_id),
            (None, 0x2c9, 0xa87c)
        );
        let ca = f.node(f.node_by_name("compute-00-00 HCA-1").unwrap());
        assert_eq!(ca.ports[2].guid, Guid(0x2c9030002847e));
        assert_eq!(
            ca.ports[1].guid,
            Guid(0x2c9030002847d),
            "no line: default GUID"
        );
        assert_eq!(ca.system_guid, Some(Guid(0x2c9030002847f)));

        // Oracle doc: no blank line after the header, a line holding one space.
        let d = dump("jabl-ibtopotool_oracle-sun-dcs36_4.topo");
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(d.fabric.links()[0].speed, Some(LinkSpeed::Qdr));

        // A lone CA without cables.
        let f = dump("nvidia-topograph_gb200-lone-ca_example-bad.out").fabric;
        assert_eq!(f.nodes()[0].name, "dgx-gb200-n01-c1 HCA-1");
        assert_eq!(f.nodes()[0].kind, NodeKind::Ca);

        // NDR SuperPOD: 40 SHARP aggregation nodes (`grep -c '^Ca.*Aggregation Node'`), each
        // on a switch's port 65 (`grep -c '^\[65\]'` = 40); 109 nodes share a description
        // with another node (40 ANs + 69 `MT4129 ConnectX7   Mellanox Technologies`, counted
        // with `sed | sort | uniq -c` on the header descriptions) and are named by id.
        let f = dump("nvidia-topograph_ndr-dgx-superpod_example.out").fabric;
        let ans: Vec<_> = f
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, n)| is_aggregation_node(n))
            .collect();
        assert_eq!(ans.len(), 40);
        for (i, _) in &ans {
            let peer = f
                .peer(PortRef {
                    node: NodeId(*i as u32),
                    port: 1,
                })
                .unwrap();
            assert!(f.node(peer.node).is_switch());
            assert_eq!(peer.port, 65);
        }
        let by_id = f
            .nodes()
            .iter()
            .filter(|n| n.name == node_id(n.kind, n.guid))
            .count();
        assert_eq!(by_id, 109);
        assert!(f.links().iter().all(|l| l.speed == Some(LinkSpeed::Ndr)));

        // FDR10 between switches (`grep -c FDR10` = 94 lines = 47 cables), a dual-port HCA
        // with both ports cabled.
        let f = dump("loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt").fabric;
        assert_eq!(
            f.links()
                .iter()
                .filter(|l| l.speed == Some(LinkSpeed::Fdr10))
                .count(),
            47
        );
        let tank = f.node_by_name("tank1 mlx4_0").unwrap();
        assert_eq!(f.neighbours(tank).count(), 2);
    }

    #[test]
    fn ibsim_variants_routers_lids_and_multi_port_cas() {
        let plain = dump("ibsim-generated/baseline/ibnetdiscover.topo");
        assert!(plain.warnings.is_empty(), "{:?}", plain.warnings);
        let f = &plain.fabric;
        let rt = f.node(f.node_by_name("MF0;gw1:IBR/U1/RT").unwrap());
        assert_eq!((rt.kind, rt.num_ports()), (NodeKind::Router, 2));
        assert_eq!(rt.ports[2].guid, Guid(0xb8e9240300d00002));
        assert_eq!((rt.ports[1].lid, rt.ports[2].lid), (6, 7));
        let spine1 = f.node_by_guid(Guid(0xb8cef60300a10000)).unwrap();
        assert_eq!(f.node(spine1).ports[0].lid, 1);
        assert!(
            f.node(spine1)
                .ports
                .iter()
                .all(|p| p.guid == Guid(0xb8cef60300a10000))
        );
        let node05 = f.node(f.node_by_name("node05 mlx5_0").unwrap());
        assert_eq!(node05.ports[1].guid, Guid(0xc42a10300c00041));
        assert_eq!((node05.ports[2].lid, node05.ports[2].lmc), (12, 0));
        assert_eq!(node05.device_id, 0x1017);
        let leaf2 = f.node_by_name("MF0;ib-leaf2:MQM8700/U1").unwrap();
        let degraded = f.link(f.node(leaf2).ports[38].link.unwrap());
        assert_eq!(degraded.width, Some(LinkWidth::X1));
        assert_eq!(degraded.speed, Some(LinkSpeed::Hdr));

        // -f, -g and -m read to the same fabric, names included.
        for variant in ["_-f.topo", "_-g.topo", "_-m.topo"] {
            let d = dump(&format!("ibsim-generated/baseline/ibnetdiscover{variant}"));
            assert!(d.warnings.is_empty(), "{variant}: {:?}", d.warnings);
            assert_eq!(snapshot(&d.fabric), snapshot(f), "{variant}");
            assert_eq!(names(&d.fabric), names(f), "{variant}");
        }

        // No SM: CA LIDs 0, the EDR-only HCA at 4xEDR.
        let f = dump("ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo").fabric;
        let node06 = f.node_by_name("node06 mlx5_0").unwrap();
        assert_eq!(f.node(node06).ports[1].lid, 0);
        let link = f.link(f.node(node06).ports[1].link.unwrap());
        assert_eq!(link.speed, Some(LinkSpeed::Edr));
    }

    #[test]
    fn node_name_map_names_nodes() {
        let map = NodeNameMap::parse(&fixture("ibsim-generated/node-name-map.txt")).unwrap();
        let text = fixture("ibsim-generated/baseline/ibnetdiscover_node-name-map.topo");
        let f = parse(&text, Some(&map)).unwrap().fabric;
        let name = |g: u64| f.node(f.node_by_guid(Guid(g)).unwrap()).name.clone();
        assert_eq!(name(0xb8cef60300a10000), "R01-U42-spine1");
        assert_eq!(name(0x0c42a10300c00000), "R01-U01-node01 HCA0");
        assert_eq!(name(0xb8e9240300d00000), "gw1-unquoted");
        assert_eq!(
            name(0x0c42a10300c00010),
            "node02 mlx5_0",
            "not in the map: description"
        );
        // The dump itself remapped the switch headers but not the CA headers.
        let spine1 = f.node(f.node_by_guid(Guid(0xb8cef60300a10000)).unwrap());
        assert_eq!(spine1.description, "R01-U42-spine1");
        let node01 = f.node(f.node_by_guid(Guid(0x0c42a10300c00000)).unwrap());
        assert_eq!(node01.description, "node01 mlx5_0");

        // Slim Fly with its map: every node gets its plan name.
        let map =
            NodeNameMap::parse(&fixture("ibsim-generated/slimfly-q5/node-name-map.txt")).unwrap();
        for variant in ["clean", "faulty", "partial"] {
            let text = fixture(&format!(
                "ibsim-generated/slimfly-q5/{variant}.ibnetdiscover.topo"
            ));
            let f = parse(&text, Some(&map)).unwrap().fabric;
            for n in f.nodes() {
                assert_eq!(Some(n.name.as_str()), map.get(n.guid), "{variant}");
            }
            if variant == "faulty" {
                // F5: sw0-2-2[9] <-> sw1-2-3[9] at 1x (`grep 1xEDR` finds both ends).
                let a = f.node_by_name("sw0-2-2").unwrap();
                let l = f.link(f.node(a).ports[9].link.unwrap());
                assert_eq!(
                    (l.width, l.speed),
                    (Some(LinkWidth::X1), Some(LinkSpeed::Edr))
                );
                assert_eq!(
                    f.node(l.other_end(PortRef { node: a, port: 9 }).node).name,
                    "sw1-2-3"
                );
            }
        }
    }

    #[test]
    fn partial_dumps_lack_the_island_and_keep_dangling_half_edges() {
        // The partial fixture: rack R05 had no inter-rack cable yet, so ibnetdiscover never
        // reached it and prints nothing about it — not even half-edges (it prints a port only
        // when the far node answered). `grep -c R05 partial.ibnetdiscover.topo` = 0.
        let d = dump("ibsim-generated/slimfly-q5/partial.ibnetdiscover.topo");
        assert!(
            d.fabric
                .nodes()
                .iter()
                .all(|n| !n.description.contains("R05"))
        );
        assert!(d.dangling.is_empty());

        // Dangling half-edges: drop spine1's block from the baseline; its four cables
        // (leaf1[37,38], leaf2[37,38]) are then seen from the leaves only.
        let text = fixture("ibsim-generated/baseline/ibnetdiscover.topo");
        let without: Vec<&str> = text
            .split("\n\n")
            .filter(|block| !block.contains("Switch\t40 \"S-b8cef60300a10000\""))
            .collect();
        let d = parse(&without.join("\n\n"), None).unwrap();
        assert_eq!(d.fabric.summary().switches, 3);
        assert_eq!(d.dangling.len(), 4, "{:?}", d.dangling);
        assert_eq!(d.fabric.links().len(), 13);
        for c in &d.dangling {
            assert_eq!(c.peer_guid, Guid(0xb8cef60300a10000));
            assert_eq!(c.peer_kind, Some(NodeKind::Switch));
            assert_eq!(c.peer_desc, "MF0;ib-spine1:MQM8700/U1");
            assert_eq!(d.fabric.node(c.node).guid, c.node_guid);
        }
        let leaf2 = Guid(0xb8cef60300b20000);
        let degraded = d
            .dangling
            .iter()
            .find(|c| c.node_guid == leaf2 && c.port == 38)
            .unwrap();
        assert_eq!(
            (degraded.peer_port, degraded.width),
            (4, Some(LinkWidth::X1))
        );
    }

    const SMALL: &str = "\
vendid=0x2c9
devid=0xd2f0
switchguid=0xa(a)
Switch\t4 \"S-000000000000000a\"\t\t# \"A\" enhanced port 0 lid 1 lmc 0
[1]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR
[2]\t\"S-000000000000000c\"[3]\t\t# \"C\" lid 3 4xHDR

Switch\t4 \"S-000000000000000b\"\t\t# \"B\" enhanced port 0 lid 2 lmc 0
[2]\t\"S-000000000000000c\"[5]\t\t# \"C\" lid 3 4xHDR

Switch\t8 \"S-000000000000000c\"\t\t# \"C\" enhanced port 0 lid 3 lmc 0
[5]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR
";

    #[test]
    fn inconsistent_and_one_sided_half_edges() {
        let d = parse(SMALL, None).unwrap();
        let f = &d.fabric;
        // B[2] <-> C[5] agree; A[1] -> B[2] contradicts B[2]'s line; A[2] -> C[3] is one-sided.
        assert_eq!(f.links().len(), 2, "{:?}", d.warnings);
        let inconsistent = d
            .warnings
            .iter()
            .find(|w| w.message.contains("inconsistent"))
            .unwrap();
        assert_eq!(inconsistent.line, 5);
        assert!(
            inconsistent.message.contains("line 5") && inconsistent.message.contains("line 9"),
            "{inconsistent}"
        );
        assert!(
            inconsistent.message.contains("A[1] → B[2]")
                && inconsistent.message.contains("B[2] → C[5]"),
            "{inconsistent}"
        );
        let one_sided = d
            .warnings
            .iter()
            .find(|w| w.message.contains("this end only"))
            .unwrap();
        assert_eq!(one_sided.line, 6);
        let a = f.node_by_name("A").unwrap();
        let c = f.node_by_name("C").unwrap();
        assert_eq!(
            f.peer(PortRef { node: a, port: 2 }),
            Some(PortRef { node: c, port: 3 })
        );
        assert_eq!(f.peer(PortRef { node: a, port: 1 }), None);
    }

    #[test]
    fn malformed_lines_are_errors_with_line_numbers() {
        let cases: &[(&str, usize, &str)] = &[
            (
                "[1]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR\n",
                1,
                "node header",
            ),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\"\n[1 \"S-b\"[2] # \"B\" lid 2 4xHDR\n",
                2,
                "] after the port number",
            ),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\"\n[5]\t\"S-b\"[2]\t\t# \"B\" lid 2 4xHDR\n",
                2,
                "1..=4",
            ),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B\" 4xHDR\n",
                2,
                "lid N",
            ),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B\" lid 2 HDR\n",
                2,
                "4xHDR",
            ),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B lid 2 4xHDR\n",
                2,
                "closing quote",
            ),
            ("Switch\t0 \"S-a\"\t\t# \"A\"\n", 1, "number of ports"),
            ("Switch\t4 \"X-a\"\t\t# \"A\"\n", 1, "quoted node id"),
            (
                "Switch\t4 \"S-a\"\t\t# \"A\" enhanced port 0 lid x lmc 0\n",
                1,
                "port 0 lid",
            ),
            (
                "Switch\t4 \"S-a\" # \"A\"\n\nSwitch\t4 \"S-a\" # \"A\"\n",
                3,
                "already has a header at line 1",
            ),
            ("vendid=0xzz\n", 1, "hex number"),
            ("switchguid=0xa(b\n", 1, "port GUID"),
            (
                "Switch\t4 \"S-a\" # \"A\"\n[1]\t\"S-b\"[2]\t# \"B\" lid 2 4xHDR\n[1]\t\"S-c\"[2]\t# \"C\" lid 2 4xHDR\n",
                3,
                "already listed at line 2",
            ),
        ];
        for &(text, line, needle) in cases {
            let e = parse(text, None).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("line {line}: expected ")),
                "{e}"
            );
        }
        // `ibnetdiscover -l` output is not a topology: its first line is a malformed header.
        let e = parse(
            &fixture("ibsim-generated/baseline/ibnetdiscover_-l.txt"),
            None,
        )
        .unwrap_err();
        assert_eq!(e.line, 1);
        // Tolerated: unknown rates, `0x` in ids, noise, a repeated line.
        let ext = "Switch\t8 \"S-a\" # \"A\"\n[3][ext 5]\t\"S-b\"[4][ext 2]\t\t# \"B\" lid 2 4xHDR slot 3\n";
        let d = parse(ext, None).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!((d.dangling[0].port, d.dangling[0].peer_port), (3, 4));
        let text = "garbage\nSwitch 4 \"S-0xa\" # \"A\"\n[1] \"H-0xb\"[1](0xc) # \"B\" lid 2 ?????\n\
                    [1] \"H-0xb\"[1](0xc) # \"B\" lid 2 ?????\n[2] \"H-d\"[1] # \"D\" lid 2 3xFOO s=1 w=2 v=3 extra\n";
        let d = parse(text, None).unwrap();
        assert_eq!(d.dangling.len(), 2);
        assert_eq!((d.dangling[0].width, d.dangling[0].speed), (None, None));
        assert_eq!(d.dangling[0].peer_port_guid, Some(Guid(0xc)));
        let lines: Vec<usize> = d.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [1, 4, 5, 5], "{:?}", d.warnings);
    }

    #[test]
    fn writer_reproduces_the_tools_lines() {
        // The tool prints switches, CAs and routers in that order and so does the writer; as
        // the fabric keeps dump order, everything after the header comment is byte-identical.
        for path in [
            "ibsim-generated/baseline/ibnetdiscover.topo",
            "ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo",
            "ibsim-generated/slimfly-q5/clean.ibnetdiscover.topo",
            "ibsim-generated/slimfly-q5/faulty.ibnetdiscover.topo",
            "nvidia-topograph_ndr-dgx-superpod_example.out",
            "loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt",
            "nvidia-topograph_gb200-lone-ca_example-bad.out",
        ] {
            let text = fixture(path);
            let written = write(&parse(&text, None).unwrap().fabric);
            let body = |t: &str| t[t.find("\n\nvendid").unwrap()..].trim_end().to_owned();
            let (want, got) = (body(&text), body(&written));
            if want != got {
                let first = want.lines().zip(got.lines()).position(|(a, b)| a != b);
                panic!("{path}: first difference at body line {first:?}");
            }
        }
    }

    #[test]
    fn write_then_parse_round_trips_a_slim_fly() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        let text = write(&fabric);
        let map = NodeNameMap::from_fabric(&fabric);
        let d = parse(&text, Some(&map)).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert!(d.dangling.is_empty());
        assert_eq!(snapshot(&d.fabric), snapshot(&fabric));
        assert_eq!(names(&d.fabric), names(&fabric));
        assert_eq!(d.port_lines, 2 * fabric.links().len());
        // Without a map the descriptions (unique in generated fabrics) become the names.
        let d = parse(&text, None).unwrap();
        assert!(d.fabric.nodes().iter().all(|n| n.name == n.description));
    }

    #[test]
    fn parse_write_parse_round_trips_every_fixture() {
        for &(path, ..) in DUMPS {
            let first = dump(path);
            let written = write(&first.fabric);
            let second = parse(&written, None).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(snapshot(&second.fabric), snapshot(&first.fabric), "{path}");
            assert_eq!(names(&second.fabric), names(&first.fabric), "{path}");
            assert!(second.warnings.is_empty(), "{path}: {:?}", second.warnings);
        }
    }

    #[test]
    fn mutated_fixtures_never_panic() {
        let mut parsed = 0;
        let mut failed = 0;
        for &(path, ..) in DUMPS {
            let text = fixture(path);
            let count = if text.len() > 100_000 { 70 } else { 350 };
            for (k, mutant) in mutants(&text, 0x1b_0000 + k_seed(path), count)
                .iter()
                .enumerate()
            {
                match std::panic::catch_unwind(|| parse(mutant, None)) {
                    Ok(Ok(_)) => parsed += 1,
                    Ok(Err(e)) => {
                        failed += 1;
                        assert!(e.line >= 1, "{path} mutant {k}: {e}");
                    }
                    Err(_) => panic!("{path} mutant {k} panicked:\n{mutant}"),
                }
            }
        }
        assert!(parsed > 0 && failed > 0, "parsed {parsed}, failed {failed}");
        // Every other fixture (iblinkinfo, -p, caches, net files) is read without panicking.
        for (path, text) in all_fixture_texts() {
            let _ = std::panic::catch_unwind(|| parse(&text, None))
                .unwrap_or_else(|_| panic!("{path} panicked"));
        }
    }

    fn k_seed(path: &str) -> u64 {
        path.bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
    }
}
