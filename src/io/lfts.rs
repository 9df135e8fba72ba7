//! Linear forwarding tables as the InfiniBand tools print them, read into
//! [`ForwardingTables`] for a given [`Fabric`] (and written in `ibroute`'s format).
//!
//! # Formats read
//!
//! * **`opensm-lfts.dump`**, which OpenSM writes into `OSM_TMP_DIR` when run with `-D 0x43`
//!   (one block per switch):
//!
//!   ```text
//!   Unicast lids [0-851] of switch Lid 1 guid 0x02fab00000000000 ('MF0;sw0-0-0:slimfly-q5/U1'):
//!   0x0001 000 # Switch portguid 0x02fab00000000000: 'MF0;sw0-0-0:slimfly-q5/U1'
//!   0x0350 007 # Channel Adapter portguid 0x02fab10000000bf1: 'h1-4-2-3 HCA-1 slimfly-q5'
//!   851 lids dumped
//!   ```
//!
//!   (older OpenSM versions print `[0x0-0x353]`; entries without a route are left out.)
//! * **`ibroute <lid>`** output, concatenated for any number of switches (also the format of
//!   OpenSM's `file` routing engine, `lfts_file`):
//!
//!   ```text
//!   Unicast lids [0x0-0x353] of switch Lid 1 guid 0x02fab00000000000 (MF0;sw0-0-0:slimfly-q5/U1):
//!     Lid  Out   Destination
//!          Port     Info
//!   0x0001 000 : (Switch portguid 0x02fab00000000000: 'MF0;sw0-0-0:slimfly-q5/U1')
//!   0x0351 005 : (path #2 out of 4: portguid 0x02fab10000000bf1)
//!   850 valid lids dumped
//!   ```
//!
//!   Also the `DR path slid 0; dlid 0; 0,1,…` header variant and decimal LIDs; `Multicast
//!   mlids` blocks (`ibroute -M`) are skipped; tool noise (`ibwarn:` lines) too.
//!
//! Switches are identified by the node GUID in the block header, never by LID. An entry with
//! port 255 means "no route" (`ibroute -a`). Blocks of one switch may be split (`ibroute LID
//! START END`), but two different ports for one (switch, LID) are an error. The destination
//! comments (`portguid 0x…`) are collected in [`LftDump::destinations`]: they tell which port
//! owns each LID, which [`apply_destination_lids`] uses to give LIDs to a fabric that has none
//! (a generated one).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::diagnostic::{Diagnostic, ParseError};
use super::scan::Cursor;
use crate::routing::lids::MAX_UNICAST_LID;
use crate::routing::{ForwardingTables, LidTable};
use crate::topology::{Fabric, Guid, NodeId, NodeKind, PortRef};

/// The forwarding tables read from a dump.
#[derive(Debug, Clone)]
pub struct LftDump {
    /// The tables, for the switches of the fabric given to [`parse`].
    pub tables: ForwardingTables,
    /// Switches with at least one block.
    pub switches: usize,
    /// Entries read (with a port other than 255).
    pub entries: usize,
    /// `(LID, port GUID)` from the destination comments, ascending by LID (first seen wins).
    pub destinations: Vec<(u16, Guid)>,
    /// Skipped lines and inconsistencies (switches of the fabric without a block, a header
    /// LID that differs from the fabric's, destination comments that disagree).
    pub warnings: Vec<Diagnostic>,
}

const HEADER: &str = "a block header like `Unicast lids [0-851] of switch Lid 1 guid 0x… (…):`";
const ENTRY: &str = "an entry like `0x0001 005 # …` (opensm-lfts.dump) or `0x0001 005 : (…)` \
                     (ibroute), a block header `Unicast lids […] of switch … guid 0x… (…):`, or \
                     a `… lids dumped` line";

/// Reads `opensm-lfts.dump` or concatenated `ibroute` output into tables for `fabric`.
///
/// # Errors
/// The first line that is neither a header, an entry, a table heading, a `… lids dumped` line
/// nor tool noise; a header whose GUID is not a switch of `fabric`; an entry before the first
/// header, with a port the switch does not have, with a LID outside the unicast range, or
/// contradicting an earlier entry.
pub fn parse(text: &str, fabric: &Fabric) -> Result<LftDump, ParseError> {
    let mut tables = ForwardingTables::new(fabric, 0);
    let mut warnings = Vec::new();
    let mut current: Option<NodeId> = None;
    let mut in_multicast = false;
    let mut seen = vec![false; fabric.nodes().len()];
    let mut entries = 0;
    let mut destinations: Vec<Option<Guid>> = Vec::new();
    let mut conflicting_destinations = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("Unicast lids") {
            in_multicast = false;
            let node = header_switch(trimmed, fabric).ok_or_else(|| {
                ParseError::new(
                    line,
                    format!("{HEADER} whose GUID is a switch of fabric {}", fabric.name),
                    raw,
                )
            })?;
            if let Some(lid) = header_lid(trimmed) {
                let known = fabric.node(node).ports[0].lid;
                if known != 0 && known != lid {
                    warnings.push(Diagnostic::warning(
                        line,
                        format!(
                            "{} has LID {known} in the fabric but LID {lid} here",
                            fabric.node(node).name
                        ),
                    ));
                }
            }
            seen[node.index()] = true;
            current = Some(node);
            continue;
        }
        if trimmed.starts_with("Multicast mlids") {
            in_multicast = true;
            current = None;
            continue;
        }
        if in_multicast
            || trimmed.ends_with("lids dumped")
            || (trimmed.starts_with("Lid") && trimmed.contains("Out"))
            || (trimmed.starts_with("Port") && trimmed.contains("Info"))
        {
            continue;
        }
        if trimmed.starts_with("ibwarn:") {
            continue;
        }
        if trimmed.starts_with("ibroute:") {
            warnings.push(Diagnostic::warning(line, format!("tool error: {trimmed}")));
            continue;
        }
        let Some((lid, port, comment)) = entry(trimmed) else {
            return Err(ParseError::new(line, ENTRY, raw));
        };
        let Some(node) = current else {
            return Err(ParseError::new(
                line,
                format!("{HEADER} before the first entry"),
                raw,
            ));
        };
        if port == 255 {
            continue;
        }
        let switch = fabric.node(node);
        if port > switch.num_ports() {
            return Err(ParseError::new(
                line,
                format!(
                    "a port of {} (0..={}, or 255 for none)",
                    switch.name,
                    switch.num_ports()
                ),
                raw,
            ));
        }
        if lid == 0 {
            continue; // reserved; OpenSM never routes it
        }
        if lid > MAX_UNICAST_LID {
            return Err(ParseError::new(
                line,
                format!("a unicast LID (1..={MAX_UNICAST_LID})"),
                raw,
            ));
        }
        if let Some(earlier) = tables.port(node, lid) {
            if earlier != port {
                return Err(ParseError::new(
                    line,
                    format!(
                        "port {earlier} for LID {lid} at {}, as an earlier entry says",
                        switch.name
                    ),
                    raw,
                ));
            }
        } else {
            entries += 1;
        }
        tables.set(node, lid, port);
        if let Some(guid) = comment.and_then(comment_guid) {
            let slot = usize::from(lid);
            if destinations.len() <= slot {
                destinations.resize(slot + 1, None);
            }
            match destinations[slot] {
                None => destinations[slot] = Some(guid),
                Some(g) if g != guid && !conflicting_destinations => {
                    conflicting_destinations = true;
                    warnings.push(Diagnostic::warning(
                        line,
                        format!("LID {lid} belongs to port GUID {guid} here but to {g} earlier"),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    let missing: Vec<&str> = fabric
        .switches()
        .filter(|s| !seen[s.index()])
        .map(|s| fabric.node(s).name.as_str())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        warnings.push(Diagnostic::warning(
            text.lines().count().max(1),
            format!(
                "no table for {} switch(es) of the fabric: {}{}",
                missing.len(),
                shown.join(", "),
                if missing.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(LftDump {
        tables,
        switches: seen.iter().filter(|&&s| s).count(),
        entries,
        destinations: destinations
            .iter()
            .enumerate()
            .filter_map(|(l, g)| g.map(|g| (l as u16, g)))
            .collect(),
        warnings,
    })
}

/// The switch whose node GUID follows ` guid ` in a header.
fn header_switch(header: &str, fabric: &Fabric) -> Option<NodeId> {
    let at = header.find(" guid ")?;
    let guid = Cursor::new(&header[at + " guid ".len()..]).guid()?;
    fabric
        .node_by_guid(guid)
        .filter(|&n| fabric.node(n).is_switch())
}

/// The LID after `of switch Lid ` in a header, when it is there.
fn header_lid(header: &str) -> Option<u16> {
    let at = header.find("of switch Lid ")?;
    let lid = Cursor::new(&header[at + "of switch Lid ".len()..]).uint(u64::from(u16::MAX))?;
    Some(lid as u16)
}

/// `0x0001 005 # comment`, `0x0001 005 : (comment)` or `     1 005 : (…)`: LID, port and the
/// comment.
fn entry(line: &str) -> Option<(u16, u8, Option<&str>)> {
    let mut c = Cursor::new(line);
    let lid = if line.starts_with("0x") || line.starts_with("0X") {
        c.hex(4)?
    } else {
        c.uint(u64::from(u16::MAX))?
    };
    if c.skip_ws() == 0 {
        return None;
    }
    let port = c.uint(255)? as u8;
    let spaces = c.skip_ws();
    if c.is_empty() {
        return Some((lid as u16, port, None));
    }
    if spaces == 0 || !(c.eat_byte(b'#') || c.eat_byte(b':')) {
        return None;
    }
    Some((lid as u16, port, Some(c.rest())))
}

/// The GUID after `portguid ` in a destination comment.
fn comment_guid(comment: &str) -> Option<Guid> {
    let at = comment.find("portguid ")?;
    Cursor::new(&comment[at + "portguid ".len()..]).guid()
}

/// Why LIDs could not be taken from a dump's destination comments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DestinationLidError(pub String);

/// Gives the ports of `fabric` the LIDs that the dump's destination comments assign to their
/// port GUIDs (base LID and LMC from the run of consecutive LIDs of each port). For a fabric
/// without LIDs (a generated one whose GUIDs the simulated or real fabric shares). Returns how
/// many ports got LIDs; GUIDs the fabric does not have are skipped.
///
/// # Errors
/// A port whose LIDs are not 2^k consecutive LIDs aligned to 2^k, or a switch with more than
/// one LID.
pub fn apply_destination_lids(
    fabric: &mut Fabric,
    destinations: &[(u16, Guid)],
) -> Result<usize, DestinationLidError> {
    let mut ports: HashMap<Guid, PortRef> = HashMap::new();
    for (i, node) in fabric.nodes().iter().enumerate() {
        let id = NodeId(i as u32);
        if node.kind == NodeKind::Switch {
            ports.insert(node.guid, PortRef { node: id, port: 0 });
        } else {
            for (p, port) in node.ports.iter().enumerate().skip(1) {
                if port.link.is_some() {
                    ports.insert(
                        port.guid,
                        PortRef {
                            node: id,
                            port: p as u8,
                        },
                    );
                }
            }
        }
    }
    let mut by_port: HashMap<PortRef, Vec<u16>> = HashMap::new();
    for &(lid, guid) in destinations {
        if let Some(&port) = ports.get(&guid) {
            by_port.entry(port).or_default().push(lid);
        }
    }
    let mut assigned: Vec<(PortRef, u16, u8)> = Vec::new();
    for (port, mut lids) in by_port {
        lids.sort_unstable();
        let base = lids[0];
        let count = lids.len();
        let name = fabric.port_name(port);
        let consecutive = lids.iter().enumerate().all(|(k, &l)| l == base + k as u16);
        if !count.is_power_of_two() || !consecutive || usize::from(base) % count != 0 {
            return Err(DestinationLidError(format!(
                "{name} has LIDs {lids:?} in the dump: not 2^LMC consecutive LIDs from an aligned base"
            )));
        }
        if port.port == 0 && count > 1 {
            return Err(DestinationLidError(format!(
                "switch {name} has {count} LIDs in the dump; a switch has one"
            )));
        }
        assigned.push((port, base, count.trailing_zeros() as u8));
    }
    for &(port, lid, lmc) in &assigned {
        let p = &mut fabric.node_mut(port.node).ports[usize::from(port.port)];
        (p.lid, p.lmc) = (lid, lmc);
    }
    Ok(assigned.len())
}

/// The tables in `ibroute`'s format, one block per switch (what OpenSM's `file` routing
/// engine reads as `lfts_file`, and what [`parse`] reads back).
pub fn write_ibroute(fabric: &Fabric, lids: &LidTable, tables: &ForwardingTables) -> String {
    let mut out = Vec::new();
    write_ibroute_to(&mut out, fabric, lids, tables).expect("writing to memory");
    String::from_utf8(out).expect("the dump is UTF-8")
}

/// [`write_ibroute`] into `out`, block by block: the dump of the largest fabrics (Slim Fly
/// q = 19 with 4 layers: 32 M entries) is over a gigabyte of text, better streamed to its file
/// than held.
pub fn write_ibroute_to(
    out: &mut dyn std::io::Write,
    fabric: &Fabric,
    lids: &LidTable,
    tables: &ForwardingTables,
) -> std::io::Result<()> {
    let mut block = String::new();
    for &s in tables.switches() {
        block.clear();
        let node = fabric.node(s);
        let table = tables.table(s);
        let _ = writeln!(
            block,
            "Unicast lids [0x0-0x{:x}] of switch Lid {} guid 0x{:016x} ({}):",
            table.len().saturating_sub(1),
            node.ports[0].lid,
            node.guid.0,
            node.description
        );
        block.push_str("  Lid  Out   Destination\n       Port     Info \n");
        let mut valid = 0;
        for (lid, &port) in table.iter().enumerate() {
            if port == crate::routing::NO_PORT || lid == 0 {
                continue;
            }
            valid += 1;
            let lid = lid as u16;
            let _ = write!(block, "0x{lid:04x} {port:03} : ");
            match lids.owner(lid) {
                Some(o) => {
                    let owner = fabric.node(o.node);
                    let guid = owner.ports[usize::from(o.port)].guid.0;
                    if o.offset > 0 {
                        let of = 1u32 << owner.ports[usize::from(o.port)].lmc;
                        let _ = writeln!(
                            block,
                            "(path #{} out of {of}: portguid 0x{guid:016x})",
                            o.offset + 1
                        );
                    } else {
                        let kind = match owner.kind {
                            NodeKind::Switch => "Switch",
                            NodeKind::Ca => "Channel Adapter",
                            NodeKind::Router => "Router",
                        };
                        let _ = writeln!(
                            block,
                            "({kind} portguid 0x{guid:016x}: '{}')",
                            owner.description
                        );
                    }
                }
                None => block.push_str("(unknown node and type)\n"),
            }
        }
        let _ = writeln!(block, "{valid} valid lids dumped ");
        out.write_all(block.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::assign_lids;
    use crate::topology::{Construction, slimfly::SlimFly};

    fn fabric() -> Fabric {
        let mut f = SlimFly::new(5, None).unwrap().build();
        assign_lids(&mut f, 2).unwrap();
        f
    }

    /// Switch sw0-0-0 of a generated Slim Fly q = 5, as OpenSM 3.3.23 dumped it under ibsim
    /// (first lines, and the LMC entries of one host).
    const OPENSM_DUMP: &str = "\
Unicast lids [0-851] of switch Lid 1 guid 0x02fab00000000000 ('MF0;sw0-0-0:slimfly-q5/U1'):
0x0001 000 # Switch portguid 0x02fab00000000000: 'MF0;sw0-0-0:slimfly-q5/U1'
0x0002 006 # Switch portguid 0x02fab00000000100: 'MF0;sw0-0-1:slimfly-q5/U1'
0x0346 004 # Channel Adapter portguid 0x02fab100000008f1: 'h1-2-0-3 HCA-1 slimfly-q5'
0x0347 004 # Channel Adapter portguid 0x02fab100000008f1: 'h1-2-0-3 HCA-1 slimfly-q5'
851 lids dumped
";

    const IBROUTE: &str = "\
ibwarn: [27809] sim_connect: attached as client 0 at node \"sw0-0-0\"
Unicast lids [0x0-0x353] of switch Lid 1 guid 0x02fab00000000000 (MF0;sw0-0-0:slimfly-q5/U1):
  Lid  Out   Destination
       Port     Info 
0x0001 000 : (Switch portguid 0x02fab00000000000: 'MF0;sw0-0-0:slimfly-q5/U1')
0x0346 004 : (Channel Adapter portguid 0x02fab100000008f1: 'h1-2-0-3 HCA-1 slimfly-q5')
0x0347 004 : (path #2 out of 4: portguid 0x02fab100000008f1)
0x0348 255 : (illegal port)
3 valid lids dumped 
Unicast lids [0x5-0x8] of switch DR path slid 0; dlid 0; 0,1 guid 0x02fab00000000100 (MF0;sw0-0-1:slimfly-q5/U1):
0x0002 000 : (Switch portguid 0x02fab00000000100: 'MF0;sw0-0-1:slimfly-q5/U1')
     1 006 : (Switch portguid 0x02fab00000000000: 'MF0;sw0-0-0:slimfly-q5/U1')
Multicast mlids [0xc000-0xc3ff] of switch Lid 2 guid 0x02fab00000000100 (x):
0xc000 xxx
";

    #[test]
    fn opensm_dump_and_ibroute_blocks_read_into_tables_by_guid() {
        let f = fabric();
        let sw0 = f.node_by_name("sw0-0-0").unwrap();
        let sw1 = f.node_by_name("sw0-0-1").unwrap();
        let d = parse(OPENSM_DUMP, &f).unwrap();
        assert_eq!((d.switches, d.entries), (1, 4));
        assert_eq!(d.tables.port(sw0, 1), Some(0));
        assert_eq!(d.tables.port(sw0, 0x347), Some(4));
        assert_eq!(d.tables.port(sw0, 3), None);
        assert_eq!(d.destinations[2], (0x346, Guid(0x02fab100000008f1)));
        assert_eq!(
            d.warnings.len(),
            1,
            "49 switches have no table: {:?}",
            d.warnings
        );
        assert!(d.warnings[0].message.contains("49 switch(es)"));
        let r = parse(IBROUTE, &f).unwrap();
        assert_eq!((r.switches, r.entries), (2, 5));
        assert_eq!(r.tables.port(sw0, 0x348), None, "port 255 is no route");
        assert_eq!(r.tables.port(sw1, 1), Some(6), "decimal LIDs");
        assert_eq!(r.tables.port(sw0, 0x347), Some(4));
        assert_eq!(r.destinations[3], (0x347, Guid(0x02fab100000008f1)));
        assert_eq!(r.destinations.len(), 4, "LIDs 1, 2, 0x346, 0x347");
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let f = fabric();
        let err = |text: &str| parse(text, &f).unwrap_err();
        let e = err("0x0001 000 # x\n");
        assert_eq!(e.line, 1);
        assert!(e.expected.contains("before the first entry"), "{e}");
        let header = "Unicast lids [0-3] of switch Lid 1 guid 0x02fab00000000000 ('x'):\n";
        let e = err(&format!("{header}0x0002 012 # x\n"));
        assert_eq!(e.line, 2);
        assert!(e.expected.contains("a port of sw0-0-0 (0..=11"), "{e}");
        let e = err(&format!("{header}\n0x0002 006 # x\n0x0002 007 # x\n"));
        assert_eq!(e.line, 4);
        assert!(e.expected.contains("port 6 for LID 2"), "{e}");
        let e = err("Unicast lids [0-3] of switch Lid 1 guid 0x0123 ('x'):\n");
        assert!(e.expected.contains("a switch of fabric slimfly-q5"), "{e}");
        let e = err(&format!("{header}0x0002 six # x\n"));
        assert!(e.expected.contains("an entry like"), "{e}");
        assert!(e.to_string().starts_with("line 2: expected"), "{e}");
        let e = err(&format!("{header}0xc000 001 # x\n"));
        assert!(e.expected.contains("unicast LID"), "{e}");
    }

    #[test]
    fn written_tables_read_back_equal_and_give_a_generated_fabric_its_lids() {
        let f = fabric();
        let lids = LidTable::from_fabric(&f).unwrap();
        let mut tables = ForwardingTables::for_lids(&f, &lids);
        for (k, &s) in f.switches().collect::<Vec<_>>().iter().enumerate() {
            for (lid, _) in lids.iter() {
                tables.set(s, lid, ((usize::from(lid) + k) % 11) as u8 + 1);
            }
        }
        let text = write_ibroute(&f, &lids, &tables);
        let back = parse(&text, &f).unwrap();
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        for &s in tables.switches() {
            for (lid, _) in lids.iter() {
                assert_eq!(back.tables.port(s, lid), tables.port(s, lid));
            }
        }
        // The same fabric without LIDs gets them back from the destination comments.
        let mut bare = SlimFly::new(5, None).unwrap().build();
        let ports = apply_destination_lids(&mut bare, &back.destinations).unwrap();
        assert_eq!(ports, 50 + 200);
        assert_eq!(LidTable::from_fabric(&bare).unwrap(), lids);
    }
}
