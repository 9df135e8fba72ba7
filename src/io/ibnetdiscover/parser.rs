//! The line-by-line reader of `ibnetdiscover` output (see the module documentation of
//! [`super`] for what it accepts and how the fabric is built).

use std::collections::HashMap;

use super::{DanglingCable, Dump, node_id};
use crate::io::diagnostic::{Diagnostic, ParseError, excerpt};
use crate::io::node_name_map::NodeNameMap;
use crate::io::scan::Cursor;
use crate::topology::{
    Fabric, Guid, LinkSpeed, LinkWidth, NodeId, NodeKind, NodeSpec, PortRef, link_rate,
};

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
pub(super) struct Parser<'a> {
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
    pub(super) fn line(&mut self, n: usize, raw: &'a str) -> Result<(), ParseError> {
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

    pub(super) fn finish(mut self, map: Option<&NodeNameMap>) -> Result<Dump, ParseError> {
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
        let (width, speed) = (link_rate(e.width, f.width), link_rate(e.speed, f.speed));
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
