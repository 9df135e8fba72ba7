//! Multicast forwarding tables as the InfiniBand tools print them, read into
//! [`MulticastTables`] for a given [`Fabric`]; and the groups' SLs as the SA answers them.
//!
//! # Formats read
//!
//! * **`ibroute -M <lid>`** output, concatenated for any number of switches (one `x` column
//!   per port 0..=N under the `Ports:` heading; with `-b`, one 16-bit hex mask per 16 ports,
//!   ports 0-15 first):
//!
//!   ```text
//!   Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x02fab00000000000 (MF0;sw0-0-0):
//!               0                   1
//!        Ports: 0 1 2 3 4 5 6 7 8 9 0 1
//!    MLid
//!   0xc000        x     x           x
//!   1 valid mlids dumped
//!   ```
//!
//!   `Unicast lids` blocks (`ibroute` without `-M`) are skipped; tool noise (`ibwarn:`) too.
//! * **`opensm.mcfdbs`**, which OpenSM writes into its dump directory after programming the
//!   MFTs when the routing log level is on (`-D 0x43`; a switch without entries has no block):
//!
//!   ```text
//!   Switch 0x02fab00000000000
//!   LID    : Out Port(s)
//!   0xC000 : 0x002  0x005  0x00B
//!   ```
//!
//! Switches are identified by the node GUID in the block header. A GUID that is not a switch
//! of the fabric, or (`ibroute`) a switch LID that is not the fabric's, means the tables are
//! of another fabric: refused. Entries of one (switch, MLID) may repeat (split dumps) but must
//! agree.
//!
//! [`group_sls`] reads the SL of each group from `saquery -g` output (MCMemberRecord group
//! dump) or MCMember Record dumps (`saquery MCMemberRecord --mlid …`), or from plain `MLID SL`
//! lines.

use std::collections::BTreeMap;

use super::diagnostic::{Diagnostic, ParseError};
use super::scan::Cursor;
use crate::routing::mft::{FIRST_MLID, LAST_MLID, is_mlid};
use crate::routing::{MulticastTables, PortSet};
use crate::topology::{Fabric, NodeId};

/// The multicast forwarding tables read from a dump.
#[derive(Debug, Clone)]
pub struct MftDump {
    /// The tables, for the switches of the fabric given to [`parse`].
    pub tables: MulticastTables,
    /// Switches with a block.
    pub switches: usize,
    /// (switch, MLID) entries read with at least one port.
    pub entries: usize,
    /// Skipped lines (tool errors).
    pub warnings: Vec<Diagnostic>,
}

const IBROUTE_HEADER: &str =
    "a block header like `Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x… (…):`";
const OPENSM_HEADER: &str = "a block header like `Switch 0x02fab00000000000`";
const ENTRY: &str = "an MFT entry like `0xc000      x   x` (ibroute -M), `0xc000      0012` \
                     (ibroute -M -b) or `0xC000 : 0x001  0x003` (opensm.mcfdbs), or a block \
                     header `Multicast mlids […] of switch … guid 0x… (…):` or `Switch 0x…`";

/// Where the entries of the current block go, and how they are written.
#[derive(Clone, Copy)]
enum Block {
    /// No block yet.
    None,
    /// An `ibroute` unicast block: skipped.
    Unicast,
    /// `ibroute -M` of this switch.
    Ibroute(NodeId),
    /// `opensm.mcfdbs` of this switch.
    OpenSm(NodeId),
}

/// Reads concatenated `ibroute -M` output or `opensm.mcfdbs` into tables for `fabric`.
///
/// # Errors
/// The first line that is neither a header, an entry, a heading, a `… mlids dumped` line nor
/// tool noise; a header whose GUID is not a switch of `fabric` or whose LID is not that
/// switch's; an entry before the first header, with an MLID outside the multicast range, a
/// port the switch does not have, or contradicting an earlier entry.
pub fn parse(text: &str, fabric: &Fabric) -> Result<MftDump, ParseError> {
    let mut tables = MulticastTables::new();
    let mut warnings = Vec::new();
    let mut block = Block::None;
    let mut seen = vec![false; fabric.nodes().len()];
    let mut entries = 0;
    // Ports per (switch, MLID) read so far in this parse: repeats must agree.
    let mut read: BTreeMap<(NodeId, u16), (usize, PortSet)> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end_matches('\r');
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("Multicast mlids") {
            let node = switch_after(trimmed, " guid ", fabric).ok_or_else(|| {
                ParseError::new(
                    line,
                    format!(
                        "{IBROUTE_HEADER} whose GUID is a switch of fabric {}",
                        fabric.name
                    ),
                    raw,
                )
            })?;
            check_lid(trimmed, node, fabric).map_err(|e| ParseError::new(line, e, raw))?;
            seen[node.index()] = true;
            block = Block::Ibroute(node);
            continue;
        }
        if trimmed.starts_with("Unicast lids") {
            block = Block::Unicast;
            continue;
        }
        if trimmed.starts_with("Switch ") {
            let node = switch_after(trimmed, "Switch ", fabric).ok_or_else(|| {
                ParseError::new(
                    line,
                    format!(
                        "{OPENSM_HEADER} whose GUID is a switch of fabric {}",
                        fabric.name
                    ),
                    raw,
                )
            })?;
            seen[node.index()] = true;
            block = Block::OpenSm(node);
            continue;
        }
        if trimmed.starts_with("ibwarn:") || trimmed.ends_with("lids dumped") {
            continue;
        }
        if trimmed.starts_with("ibroute:") {
            warnings.push(Diagnostic::warning(line, format!("tool error: {trimmed}")));
            continue;
        }
        let (node, entry) = match block {
            Block::Unicast => continue,
            Block::None => {
                return Err(ParseError::new(
                    line,
                    format!("{IBROUTE_HEADER} or {OPENSM_HEADER} before the first entry"),
                    raw,
                ));
            }
            Block::Ibroute(node) => {
                if is_ibroute_heading(trimmed) {
                    continue;
                }
                (node, ibroute_entry(raw))
            }
            Block::OpenSm(node) => {
                if trimmed.starts_with("LID") && trimmed.contains("Out Port") {
                    continue;
                }
                (node, opensm_entry(trimmed))
            }
        };
        let Some((mlid, ports)) = entry else {
            return Err(ParseError::new(line, ENTRY, raw));
        };
        if !is_mlid(mlid) {
            return Err(ParseError::new(
                line,
                format!("a multicast LID (0x{FIRST_MLID:04x}..=0x{LAST_MLID:04x})"),
                raw,
            ));
        }
        let switch = fabric.node(node);
        if let Some(p) = ports.highest().filter(|&p| p > switch.num_ports()) {
            return Err(ParseError::new(
                line,
                format!(
                    "ports of {} (0..={}), not port {p}",
                    switch.name,
                    switch.num_ports()
                ),
                raw,
            ));
        }
        match read.get(&(node, mlid)) {
            Some(&(earlier_line, earlier)) if earlier != ports => {
                return Err(ParseError::new(
                    line,
                    format!(
                        "ports {earlier} for MLID 0x{mlid:04x} at {}, as line {earlier_line} says",
                        switch.name
                    ),
                    raw,
                ));
            }
            Some(_) => continue,
            None => {}
        }
        read.insert((node, mlid), (line, ports));
        if !ports.is_empty() {
            entries += 1;
            tables.set(node, mlid, ports);
        }
    }
    Ok(MftDump {
        tables,
        switches: seen.iter().filter(|&&s| s).count(),
        entries,
        warnings,
    })
}

/// The switch of `fabric` whose node GUID follows `after` in a header.
fn switch_after(header: &str, after: &str, fabric: &Fabric) -> Option<NodeId> {
    let at = header.find(after)?;
    let guid = Cursor::new(&header[at + after.len()..]).guid()?;
    fabric
        .node_by_guid(guid)
        .filter(|&n| fabric.node(n).is_switch())
}

/// Refuses an `ibroute` header whose `of switch Lid N` is not the LID the fabric gives the
/// switch (when the fabric has LIDs): the tables are of another fabric or another sweep.
fn check_lid(header: &str, node: NodeId, fabric: &Fabric) -> Result<(), String> {
    let Some(at) = header.find("of switch Lid ") else {
        return Ok(()); // the `DR path` variant names no LID
    };
    let Some(lid) = Cursor::new(&header[at + "of switch Lid ".len()..]).uint(u64::from(u16::MAX))
    else {
        return Err(format!("{IBROUTE_HEADER} with a switch LID"));
    };
    let switch = fabric.node(node);
    let known = switch.ports[0].lid;
    if known != 0 && u64::from(known) != lid {
        return Err(format!(
            "{} with LID {known} (as the fabric has it), not LID {lid}: tables of another fabric",
            switch.name
        ));
    }
    Ok(())
}

/// The headings `ibroute -M` prints above the entries: the tens row of the port numbers, the
/// `Ports:` row, ` MLid` and (`-b`) ` MLid       Port Mask`.
fn is_ibroute_heading(trimmed: &str) -> bool {
    trimmed.starts_with("Ports:")
        || trimmed.starts_with("MLid")
        || trimmed.starts_with("Switch multicast mlid capability")
        || (trimmed.starts_with('0') && trimmed.bytes().all(|b| b == b' ' || b.is_ascii_digit()))
}

/// Where `ibroute -M` starts the port columns: after `0x%04x` and six spaces.
const PORT_COLUMNS: usize = 12;

/// `0xc000      x   x` (a column of two characters per port 0..=N, `x` for a member) or,
/// with `-b`, `0xc000      0012abcd` (one 16-bit hex mask per 16 ports, ports 0-15 first).
fn ibroute_entry(raw: &str) -> Option<(u16, PortSet)> {
    let mut c = Cursor::new(raw);
    let mlid = c.hex(4)? as u16;
    // `get`, not indexing: a line of other text may have a multi-byte character there.
    let (Some(gap), Some(rest)) = (raw.get(6..PORT_COLUMNS), raw.get(PORT_COLUMNS..)) else {
        return None;
    };
    if !gap.bytes().all(|b| b == b' ') {
        return None;
    }
    let word = rest.trim_end();
    if !word.is_empty()
        && !word.contains(' ')
        && word.len() % 4 == 0
        && word.bytes().all(|b| b.is_ascii_hexdigit())
    {
        let mut ports = PortSet::EMPTY;
        for (chunk, mask) in word.as_bytes().chunks(4).enumerate() {
            let mask = u16::from_str_radix(std::str::from_utf8(mask).ok()?, 16).ok()?;
            for bit in 0..16 {
                if mask & (1 << bit) != 0 {
                    ports.insert(u8::try_from(chunk * 16 + bit).ok()?);
                }
            }
        }
        return Some((mlid, ports));
    }
    let mut ports = PortSet::EMPTY;
    for (i, b) in rest.bytes().enumerate() {
        match (i % 2, b) {
            (0, b'x') => ports.insert(u8::try_from(i / 2).ok()?),
            (_, b' ') => {}
            _ => return None,
        }
    }
    Some((mlid, ports))
}

/// `0xC000 : 0x001  0x003 ` (the MLID, then each port in hex).
fn opensm_entry(trimmed: &str) -> Option<(u16, PortSet)> {
    let mut c = Cursor::new(trimmed);
    let mlid = c.hex(4)? as u16;
    c.skip_ws();
    if !c.eat_byte(b':') {
        return None;
    }
    let mut ports = PortSet::EMPTY;
    loop {
        c.skip_ws();
        if c.is_empty() {
            break;
        }
        if !(c.rest().starts_with("0x") || c.rest().starts_with("0X")) {
            return None;
        }
        let port = c.hex(2)?;
        ports.insert(u8::try_from(port).ok()?);
    }
    Some((mlid, ports))
}

/// The SL of each multicast group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupSls {
    /// MLID → SL (the last record of an MLID wins; they agree for OpenSM, whose groups have
    /// one SL).
    pub sls: BTreeMap<u16, u8>,
}

const GROUP_SL: &str = "`MLID SL` (e.g. `0xc000 0`), or `saquery -g` output (`Mlid....0xC000` \
                        and `SL......0x0` lines)";

/// Reads group SLs from `saquery -g` output (MCMemberRecord group dump) or MCMember Record
/// dumps, whose records carry `Mlid....` (`mlid....`) and `SL....` lines (other lines are
/// skipped), or from plain `MLID SL` lines (`#` comments allowed).
///
/// # Errors
/// A plain line that is not an MLID and an SL, an MLID outside the multicast range, an SL
/// above 15, or a record's SL without its MLID.
pub fn group_sls(text: &str) -> Result<GroupSls, ParseError> {
    let mut out = GroupSls::default();
    let mut mlid: Option<u16> = None;
    let mut records = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(value) = dotted(trimmed, "Mlid").or_else(|| dotted(trimmed, "mlid")) {
            records = true;
            let lid = Cursor::new(value)
                .hex(4)
                .map(|l| l as u16)
                .filter(|&l| is_mlid(l));
            mlid =
                Some(lid.ok_or_else(|| {
                    ParseError::new(line, "a multicast LID after `Mlid....`", raw)
                })?);
            continue;
        }
        if let Some(value) = dotted(trimmed, "SL") {
            records = true;
            let sl = Cursor::new(value).hex(2).filter(|&s| s <= 15);
            let (Some(m), Some(sl)) = (mlid, sl) else {
                return Err(ParseError::new(
                    line,
                    "an SL 0x0..=0xf after the record's `Mlid....` line",
                    raw,
                ));
            };
            out.sls.insert(m, sl as u8);
            continue;
        }
        if records || trimmed.contains("....") || trimmed.ends_with(':') {
            continue; // another field of a record, or a record heading
        }
        let mut c = Cursor::new(trimmed);
        let lid = c.hex(4).map(|l| l as u16);
        let spaced = c.skip_ws() > 0;
        let sl = c.uint(15);
        c.skip_ws();
        match (lid, spaced, sl, c.is_empty()) {
            (Some(l), true, Some(sl), true) if is_mlid(l) => {
                out.sls.insert(l, sl as u8);
            }
            _ => return Err(ParseError::new(line, GROUP_SL, raw)),
        }
    }
    Ok(out)
}

/// The value after `name` and its run of dots (`Mlid....................0xC000`).
fn dotted<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?;
    let value = rest.trim_start_matches('.');
    (value.len() + 3 <= rest.len()).then_some(value.trim())
}

#[cfg(test)]
mod tests;
