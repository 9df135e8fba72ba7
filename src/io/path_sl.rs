//! Path SLs per (source LID, destination LID), read from text.
//!
//! # Formats read
//!
//! * One route per line, `SLID DLID SL` (decimal or `0x` hex, spaces or tabs), with `#`
//!   comments — what [`write()`] produces:
//!
//!   ```text
//!   # slid dlid sl
//!   52 100 2
//!   0x34 0x65 3
//!   ```
//! * `saquery -p` PathRecord dumps (e.g. `saquery -p --slid 52 --dlid 100`, concatenated):
//!   each `PathRecord dump:` block gives its `slid`, `dlid` and `sl` lines
//!   (`sl......................0x2`); other fields and tool noise are skipped.

use std::fmt::Write as _;

use super::diagnostic::ParseError;
use super::scan::Cursor;
use crate::deadlock::PathSl;
use crate::routing::LidTable;

/// SLs read from a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathSlDump {
    /// `(slid, dlid, sl)` in file order.
    pub entries: Vec<(u16, u16, u8)>,
}

const LINE: &str = "a route line `SLID DLID SL` (decimal or 0x hex) or a `saquery -p` \
                    PathRecord dump";

/// Reads route lines or `saquery -p` PathRecord dumps.
///
/// # Errors
/// A line that is neither; a PathRecord block without `slid`, `dlid` or `sl`; an SL above 15.
pub fn parse(text: &str) -> Result<PathSlDump, ParseError> {
    let mut entries = Vec::new();
    // The PathRecord block being read: its first line and the fields seen.
    let mut record: Option<(usize, [Option<u64>; 3])> = None;
    let finish = |record: &mut Option<(usize, [Option<u64>; 3])>,
                  entries: &mut Vec<(u16, u16, u8)>|
     -> Result<(), ParseError> {
        if let Some((line, fields)) = record.take() {
            match fields {
                [Some(s), Some(d), Some(sl)] if s <= 0xFFFF && d <= 0xFFFF && sl <= 15 => {
                    entries.push((s as u16, d as u16, sl as u8));
                }
                _ => {
                    return Err(ParseError::new(
                        line,
                        "a PathRecord with slid, dlid and an sl of 0..=15",
                        "PathRecord dump:",
                    ));
                }
            }
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("ibwarn") {
            continue;
        }
        if t.starts_with("PathRecord dump:") {
            finish(&mut record, &mut entries)?;
            record = Some((line, [None; 3]));
            continue;
        }
        if let Some((_, fields)) = record.as_mut() {
            // `key.......value`
            if let Some(dots) = t.find("..") {
                let key = &t[..dots];
                let value = t[dots..].trim_start_matches('.');
                let slot = match key {
                    "slid" => Some(0),
                    "dlid" => Some(1),
                    "sl" => Some(2),
                    _ => None,
                };
                if let Some(slot) = slot {
                    fields[slot] = Some(number(value).ok_or_else(|| {
                        ParseError::new(line, format!("a number after {key}"), raw)
                    })?);
                }
                continue;
            }
            finish(&mut record, &mut entries)?;
        }
        let fields: Vec<&str> = t.split_whitespace().collect();
        let parsed = (fields.len() == 3)
            .then(|| {
                let s = number(fields[0]).filter(|&v| v <= 0xFFFF)?;
                let d = number(fields[1]).filter(|&v| v <= 0xFFFF)?;
                let sl = number(fields[2]).filter(|&v| v <= 15)?;
                Some((s as u16, d as u16, sl as u8))
            })
            .flatten();
        entries.push(parsed.ok_or_else(|| ParseError::new(line, LINE, raw))?);
    }
    finish(&mut record, &mut entries)?;
    Ok(PathSlDump { entries })
}

fn number(text: &str) -> Option<u64> {
    let mut c = Cursor::new(text.trim());
    let v = if text.trim().starts_with("0x") || text.trim().starts_with("0X") {
        c.hex(16)?
    } else {
        c.uint(u64::MAX)?
    };
    c.is_empty().then_some(v)
}

/// Writes route lines `SLID DLID SL`.
pub fn write(entries: &[(u16, u16, u8)]) -> String {
    let mut out = String::from("# slid dlid sl\n");
    for (s, d, sl) in entries {
        let _ = writeln!(out, "{s} {d} {sl}");
    }
    out
}

/// Writes the SL of every (source LID, destination LID) pair of `lids`, source ≠ destination,
/// as [`write()`] does: the whole table a subnet manager answers from. Grows with the square of
/// the LIDs.
pub fn write_every_pair(lids: &LidTable, sls: &dyn PathSl) -> String {
    let all: Vec<u16> = lids.iter().map(|(l, _)| l).collect();
    let mut entries = Vec::with_capacity(all.len() * all.len().saturating_sub(1));
    for &s in &all {
        for &d in &all {
            if s != d {
                entries.push((s, d, sls.sl(s, d)));
            }
        }
    }
    write(&entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_saquery_records_are_read() {
        let text = "# slid dlid sl\n52 100 2\n0x34\t0x65 3\n\
                    ibwarn: [1] sim_connect: attached\n\
                    PathRecord dump:\n\t\tservice_id..............0x0000000000000000\n\
                    \t\tdlid....................100\n\t\tslid....................52\n\
                    \t\tsl......................0x2\n\t\tmtu.....................0x5\n\
                    PathRecord dump:\n\t\tdlid....................1\n\t\tslid....................52\n\
                    \t\tsl......................0x0\n";
        let d = parse(text).unwrap();
        assert_eq!(
            d.entries,
            vec![(52, 100, 2), (52, 101, 3), (52, 100, 2), (52, 1, 0)]
        );
        assert_eq!(parse(&write(&d.entries)).unwrap(), d);
    }

    #[test]
    fn bad_lines_are_refused() {
        assert_eq!(parse("1 2\n").unwrap_err().line, 1);
        assert_eq!(parse("1 2 16\n").unwrap_err().line, 1);
        assert!(parse("PathRecord dump:\n\t\tdlid....1\n").is_err());
    }
}
