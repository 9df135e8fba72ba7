//! SL-to-VL tables as the InfiniBand tools print them, read into [`Sl2VlTables`] for a given
//! [`Fabric`] (and written in OpenSM's format).
//!
//! # Formats read
//!
//! * **`opensm-sl2vl.dump`**, which OpenSM writes into `OSM_TMP_DIR` when run with `-D 0x43`:
//!   a block per switch and per CA port, one line per (in port, out port):
//!
//!   ```text
//!   Switch 0xb8599f0300100000, base LID 1, "MF0;sw0-0-0-R01U40:MSB7800/U1"
//!   #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//!   #--------------------------------------------------------
//!   0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7
//!
//!   Channel Adapter 0x0c42a10300d00001, base LID 52, "sfn001 mlx5_0"
//!   0   0   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7
//!   ```
//!
//!   Switches are named by node GUID, CA and router ports by port GUID (a node GUID is taken
//!   as the node's only cabled port).
//! * **`smpquery sl2vl <lid> [out-port]`** output, concatenated for any number of ports:
//!
//!   ```text
//!   # SL2VL table: Lid 1
//!   #                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|
//!   ports: in  0, out  3: | 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 7|
//!   ```
//!
//!   The LID names the switch (its port 0 LID) or the CA/router port (any of its LMC LIDs);
//!   the fabric must carry LIDs (an `ibnetdiscover` dump of the live fabric). Tool noise
//!   (`ibwarn:` lines) is skipped.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::diagnostic::{Diagnostic, ParseError};
use super::scan::Cursor;
use crate::deadlock::sl2vl::{SLS, Sl2VlTables, SlVlRow};
use crate::topology::{Fabric, Guid, NodeId, PortRef};

/// The tables read from a dump.
#[derive(Debug, Clone)]
pub struct Sl2VlDump {
    /// The tables (lookups of pairs the dump does not list give the default row).
    pub tables: Sl2VlTables,
    /// Switches with at least one table.
    pub switches: usize,
    /// CA and router ports with a table.
    pub ports: usize,
    /// Table lines read.
    pub rows: usize,
    /// Skipped blocks (unknown GUIDs or LIDs) and tool errors.
    pub warnings: Vec<Diagnostic>,
}

/// Whose tables the following lines are.
#[derive(Debug, Clone, Copy)]
enum Owner {
    Switch(NodeId),
    Port(PortRef),
    /// A block of a node the fabric does not have: its lines are skipped.
    Unknown,
}

const ROW: &str = "a table line like `0   1   : 0  1  2 …` (opensm-sl2vl.dump) or \
                   `ports: in  0, out  3: | 0| 1| …|` (smpquery sl2vl), or a block header \
                   `Switch 0x…, base LID …` / `# SL2VL table: Lid …`";

/// Reads `opensm-sl2vl.dump` or concatenated `smpquery sl2vl` output into tables for
/// `fabric`; pairs the dump does not list map by `default`.
///
/// # Errors
/// The first line that is neither a header, a table line, a comment nor tool noise; a table
/// line before the first header, with a port the switch does not have, without 16 VLs, or
/// with a VL above 15.
pub fn parse(text: &str, fabric: &Fabric, default: SlVlRow) -> Result<Sl2VlDump, ParseError> {
    let mut tables = Sl2VlTables::new(fabric, default);
    let mut warnings = Vec::new();
    let mut owner: Option<Owner> = None;
    let mut rows = 0;
    let port_guids = port_guids(fabric);
    let lid_owners = lid_owners(fabric);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with("ibwarn:") {
            continue;
        }
        if let Some(rest) = t.strip_prefix("# SL2VL table:") {
            let mut c = Cursor::new(rest.trim());
            let lid = (c.eat("Lid") && c.skip_ws() > 0)
                .then(|| c.uint(0xFFFF))
                .flatten()
                .ok_or_else(|| ParseError::new(line, "`# SL2VL table: Lid <lid>`", raw))?;
            owner = Some(match lid_owners.get(&(lid as u16)) {
                Some(&p) if fabric.node(p.node).is_switch() => Owner::Switch(p.node),
                Some(&p) => Owner::Port(p),
                None => {
                    warnings.push(Diagnostic::warning(
                        line,
                        format!(
                            "LID {lid} is no port of {}: its tables are skipped",
                            fabric.name
                        ),
                    ));
                    Owner::Unknown
                }
            });
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        if let Some((kind, guid)) = opensm_header(t) {
            owner = Some(match kind {
                HeaderKind::Switch => match fabric.node_by_guid(guid) {
                    Some(n) if fabric.node(n).is_switch() => Owner::Switch(n),
                    _ => {
                        warnings.push(Diagnostic::warning(
                            line,
                            format!(
                                "switch GUID {guid} is not in {}: its tables are skipped",
                                fabric.name
                            ),
                        ));
                        Owner::Unknown
                    }
                },
                HeaderKind::Port => match port_guids.get(&guid).copied().or_else(|| {
                    let n = fabric.node_by_guid(guid)?;
                    let mut cabled = fabric.neighbours(n).map(|(p, _)| p);
                    let p = cabled.next()?;
                    cabled
                        .next()
                        .is_none()
                        .then_some(PortRef { node: n, port: p })
                }) {
                    Some(p) if !fabric.node(p.node).is_switch() => Owner::Port(p),
                    _ => {
                        warnings.push(Diagnostic::warning(
                            line,
                            format!(
                                "port GUID {guid} is not in {}: its tables are skipped",
                                fabric.name
                            ),
                        ));
                        Owner::Unknown
                    }
                },
            });
            continue;
        }
        if t.starts_with("smpquery:") || t.starts_with("ibwarn") {
            warnings.push(Diagnostic::warning(line, format!("tool error: {t}")));
            continue;
        }
        let Some((in_port, out_port, row)) = opensm_row(t).or_else(|| smpquery_row(t)) else {
            return Err(ParseError::new(line, ROW, raw));
        };
        let Some(owner) = owner else {
            return Err(ParseError::new(
                line,
                "a block header before the first table line",
                raw,
            ));
        };
        rows += 1;
        match owner {
            Owner::Unknown => {}
            Owner::Port(p) => tables.set_port(p, row),
            Owner::Switch(n) => {
                let node = fabric.node(n);
                if !tables
                    .switch_mut(n, node.num_ports())
                    .set(in_port, out_port, row)
                {
                    return Err(ParseError::new(
                        line,
                        format!("ports of {} (0..={})", node.name, node.num_ports()),
                        raw,
                    ));
                }
            }
        }
    }
    let (switches, ports) = tables.counts();
    Ok(Sl2VlDump {
        tables,
        switches,
        ports,
        rows,
        warnings,
    })
}

enum HeaderKind {
    Switch,
    Port,
}

/// `Switch 0x…, base LID …` or `Channel Adapter 0x…, …` / `Router 0x…, …`.
fn opensm_header(t: &str) -> Option<(HeaderKind, Guid)> {
    let (kind, rest) = if let Some(r) = t.strip_prefix("Switch ") {
        (HeaderKind::Switch, r)
    } else if let Some(r) = t.strip_prefix("Channel Adapter ") {
        (HeaderKind::Port, r)
    } else if let Some(r) = t.strip_prefix("Router ") {
        (HeaderKind::Port, r)
    } else {
        return None;
    };
    let mut c = Cursor::new(rest.trim_start());
    let guid = c.guid()?;
    c.eat_byte(b',').then_some((kind, guid))
}

/// `IN OUT : v0 … v15`.
fn opensm_row(t: &str) -> Option<(u8, u8, SlVlRow)> {
    let mut c = Cursor::new(t);
    let in_port = c.uint(255)? as u8;
    c.skip_ws();
    let out_port = c.uint(255)? as u8;
    c.skip_ws();
    if !c.eat_byte(b':') {
        return None;
    }
    let vls: Vec<&str> = c.rest().split_whitespace().collect();
    Some((in_port, out_port, row_of(&vls)?))
}

/// `ports: in  0, out  3: | 0| 1| …|15|`.
fn smpquery_row(t: &str) -> Option<(u8, u8, SlVlRow)> {
    let mut c = Cursor::new(t.strip_prefix("ports:")?.trim_start());
    if !c.eat("in") {
        return None;
    }
    c.skip_ws();
    let in_port = c.uint(255)? as u8;
    if !c.eat_byte(b',') {
        return None;
    }
    c.skip_ws();
    if !c.eat("out") {
        return None;
    }
    c.skip_ws();
    let out_port = c.uint(255)? as u8;
    if !c.eat_byte(b':') {
        return None;
    }
    let vls: Vec<&str> = c
        .rest()
        .split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    Some((in_port, out_port, row_of(&vls)?))
}

fn row_of(fields: &[&str]) -> Option<SlVlRow> {
    if fields.len() != SLS {
        return None;
    }
    let mut row = [0u8; SLS];
    for (slot, f) in row.iter_mut().zip(fields) {
        *slot = f.parse::<u8>().ok().filter(|&v| v <= 15)?;
    }
    Some(row)
}

/// Port GUID → CA/router port.
fn port_guids(fabric: &Fabric) -> HashMap<Guid, PortRef> {
    let mut map = HashMap::new();
    for (i, node) in fabric.nodes().iter().enumerate() {
        if node.is_switch() {
            continue;
        }
        for (p, port) in node.ports.iter().enumerate().skip(1) {
            map.entry(port.guid).or_insert(PortRef {
                node: NodeId(i as u32),
                port: p as u8,
            });
        }
    }
    map
}

/// LID → switch port 0 or CA/router port (every LMC LID).
fn lid_owners(fabric: &Fabric) -> HashMap<u16, PortRef> {
    let mut map = HashMap::new();
    for (i, node) in fabric.nodes().iter().enumerate() {
        let id = NodeId(i as u32);
        if node.is_switch() {
            if node.ports[0].lid != 0 {
                map.insert(node.ports[0].lid, PortRef { node: id, port: 0 });
            }
            continue;
        }
        for (p, port) in node.ports.iter().enumerate().skip(1) {
            if port.lid == 0 {
                continue;
            }
            for k in 0..(1u32 << port.lmc.min(7)) {
                if let Ok(lid) = u16::try_from(u32::from(port.lid) + k) {
                    map.insert(
                        lid,
                        PortRef {
                            node: id,
                            port: p as u8,
                        },
                    );
                }
            }
        }
    }
    map
}

/// Writes `tables` in the format of `opensm-sl2vl.dump` (what [`parse`] reads back): every
/// (in, out) pair a switch has a table for, grouped by out port, and every CA/router port.
pub fn write_opensm(fabric: &Fabric, tables: &Sl2VlTables) -> String {
    let mut out = String::new();
    let heading = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n\
                   #--------------------------------------------------------\n";
    let row_text = |out: &mut String, i: u8, o: u8, row: &SlVlRow| {
        let _ = write!(out, "{i:<3} {o:<3} :");
        for v in row {
            let _ = write!(out, " {v:<2}");
        }
        out.push('\n');
    };
    for (node_id, t) in tables.switches() {
        let node = fabric.node(node_id);
        let _ = writeln!(
            out,
            "Switch 0x{:016x}, base LID {}, \"{}\"",
            node.guid.0, node.ports[0].lid, node.description
        );
        out.push_str(heading);
        for o in 0..=t.num_ports() {
            for i in 0..=t.num_ports() {
                if let Some(row) = t.get(i, o) {
                    row_text(&mut out, i, o, row);
                }
            }
        }
        out.push_str("#--------------------------------------------------------\n\n");
    }
    for (port, row) in tables.ports() {
        let node = fabric.node(port.node);
        let p = &node.ports[usize::from(port.port)];
        let _ = writeln!(
            out,
            "Channel Adapter 0x{:016x}, base LID {}, \"{}\"",
            p.guid.0, p.lid, node.description
        );
        out.push_str(heading);
        row_text(&mut out, 0, 0, &row);
        out.push_str("#--------------------------------------------------------\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadlock::sl2vl::identity_row;
    use crate::routing::assign_lids;
    use crate::topology::TopologySpec;

    fn fabric() -> Fabric {
        let mut f = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut f, 0).unwrap();
        f
    }

    #[test]
    fn opensm_dump_lines_are_read() {
        let f = fabric();
        let sw = f.switches().next().unwrap();
        let host = f.hosts().next().unwrap();
        let text = format!(
            "Switch 0x{:016x}, base LID 1, \"x\"\n\
             #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n\
             #----\n\
             0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 \n\
             3   2   : 7  7  7  7  7  7  7  7  7  7  7  7  7  7  7  7\n\n\
             Channel Adapter 0x{:016x}, base LID 52, \"h\"\n\
             0   0   : 1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1\n",
            f.node(sw).guid.0,
            f.node(host).ports[1].guid.0
        );
        let d = parse(&text, &f, identity_row(8)).unwrap();
        assert_eq!((d.switches, d.ports, d.rows), (1, 1, 3));
        assert_eq!(d.tables.switch_vl(sw, 0, 1, 9), 1);
        assert_eq!(d.tables.switch_vl(sw, 3, 2, 0), 7);
        assert_eq!(
            d.tables.switch_vl(sw, 2, 3, 5),
            5,
            "default for unlisted pairs"
        );
        assert_eq!(
            d.tables.port_vl(
                PortRef {
                    node: host,
                    port: 1
                },
                4
            ),
            1
        );
    }

    #[test]
    fn smpquery_output_is_read_by_lid() {
        let f = fabric();
        let sw = f.switches().next().unwrap();
        let lid = f.node(sw).ports[0].lid;
        let text = format!(
            "ibwarn: [8561] sim_connect: attached as client 0 at node \"sw0-0-0\"\n\
             # SL2VL table: Lid {lid}\n\
             #                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\
             ports: in  2, out  3: | 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 3|\n"
        );
        let d = parse(&text, &f, identity_row(8)).unwrap();
        assert_eq!(d.tables.switch_vl(sw, 2, 3, 15), 3);
        assert_eq!(d.switches, 1);
    }

    #[test]
    fn bad_lines_say_what_is_expected() {
        let f = fabric();
        let e = parse("Switch 0x1, base LID 1\n0 1 : 0 1 2\n", &f, identity_row(8)).unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse(
            "0 1 : 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7\n",
            &f,
            identity_row(8),
        )
        .unwrap_err();
        assert!(e.expected.contains("header"), "{e}");
    }

    #[test]
    fn written_tables_read_back() {
        let f = fabric();
        let tables = Sl2VlTables::uniform(&f, identity_row(5));
        let text = write_opensm(&f, &tables);
        let d = parse(&text, &f, [0; SLS]).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        for (sw, t) in tables.switches() {
            for i in 0..=t.num_ports() {
                for o in 0..=t.num_ports() {
                    assert_eq!(d.tables.switch(sw).unwrap().get(i, o), t.get(i, o));
                }
            }
        }
        assert_eq!(d.tables.ports(), tables.ports());
    }
}
