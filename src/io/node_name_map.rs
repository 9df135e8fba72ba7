//! The node-name-map of infiniband-diags and OpenSM: node GUID → name, one entry per line.
//!
//! Read with the exact rules of `util/node_name_map.c` (rdma-core):
//!
//! * leading whitespace is skipped; empty lines and lines starting with `#` are comments;
//! * the GUID is read like `strtoull(p, &end, 0)`: base 0, so it **must carry `0x`** — a bare
//!   `0008f104…` is read as octal and stops at the `8`, and a bare `b8cef6…` is no number at
//!   all; the character after the number must be whitespace, `#` or the end of the line,
//!   otherwise the whole file is rejected (here: a [`ParseError`] naming the line). An optional
//!   sign is accepted as `strtoull` does (`-` negates modulo 2^64);
//! * the name is the first token of the rest of the line split on `"` and `#` (`strtok(p,
//!   "\"#")`, which skips leading delimiters): `0x… "name"`, `0x… name` and
//!   `0x… "name"  # comment` all give `name`; an unquoted name keeps inner and trailing blanks;
//!   a line with a GUID and no name adds nothing;
//! * the first occurrence of a GUID wins.
//!
//! Deviations, both on the safe side: a GUID that overflows 64 bits is an error (the C code
//! silently reads it as `0xffffffffffffffff`), and a `\r` before the newline (a file edited on
//! Windows) is treated as part of the line ending, not of the name. The C reader splits lines
//! longer than 255 bytes; names here are never that long in practice and are not split.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::diagnostic::ParseError;
use crate::topology::{Fabric, Guid};

/// Node GUID → name, in the order the entries were read or inserted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeNameMap {
    entries: Vec<(Guid, String)>,
    index: HashMap<Guid, usize>,
}

impl NodeNameMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a node-name-map file's text (see the module documentation for the rules).
    ///
    /// # Errors
    /// The first line whose GUID is not a base-0 number followed by whitespace, `#` or the end
    /// of the line (e.g. a GUID without `0x`), with its line number.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut map = Self::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let p = raw.trim_start_matches(c_isspace);
            if p.is_empty() || p.starts_with('#') {
                continue;
            }
            let (guid, used) = strtoull_base0(p).ok_or_else(|| {
                ParseError::new(
                    line,
                    "a node GUID with 0x (base 0, like 0x0002c90300001234) followed by a name",
                    raw,
                )
            })?;
            let after = &p[used..];
            if !after.is_empty() && !after.starts_with(|c: char| c_isspace(c) || c == '#') {
                return Err(ParseError::new(
                    line,
                    "whitespace, # or the end of the line after the GUID (a GUID without 0x \
                     is read as an octal or decimal number)",
                    raw,
                ));
            }
            let rest = after.trim_start_matches(c_isspace);
            let name = rest.split(['"', '#']).find(|token| !token.is_empty());
            if let Some(name) = name {
                map.insert(Guid(guid), name);
            }
        }
        Ok(map)
    }

    /// The map naming every node of `fabric` by its node GUID (node order).
    pub fn from_fabric(fabric: &Fabric) -> Self {
        let mut map = Self::new();
        for node in fabric.nodes() {
            map.insert(node.guid, node.name.as_str());
        }
        map
    }

    /// Adds an entry unless the GUID is already mapped (the first occurrence wins, as in the
    /// file). Returns whether it was added.
    pub fn insert(&mut self, guid: Guid, name: impl Into<String>) -> bool {
        if self.index.contains_key(&guid) {
            return false;
        }
        self.index.insert(guid, self.entries.len());
        self.entries.push((guid, name.into()));
        true
    }

    /// The name of the node with node GUID `guid`.
    pub fn get(&self, guid: Guid) -> Option<&str> {
        self.index.get(&guid).map(|&i| self.entries[i].1.as_str())
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (Guid, &str)> + '_ {
        self.entries.iter().map(|(g, n)| (*g, n.as_str()))
    }

    /// The map as a file: a comment line, then `0x<16 hex digits> "<name>"` per entry.
    ///
    /// The format cannot carry every string: `"` and `#` in a name become `_`, line breaks
    /// become spaces, and an entry with an empty name is left out (each with a `log` warning).
    /// Everything else reads back identically with [`Self::parse`].
    pub fn write(&self) -> String {
        let mut out = String::with_capacity(32 + self.entries.len() * 40);
        out.push_str("# node-name-map: node GUID -> name\n");
        for (guid, name) in &self.entries {
            if name.is_empty() {
                log::warn!("node-name-map: {guid} has an empty name, left out");
                continue;
            }
            let clean: String = name
                .chars()
                .map(|c| match c {
                    '"' | '#' => '_',
                    '\n' | '\r' => ' ',
                    c => c,
                })
                .collect();
            if clean != *name {
                log::warn!("node-name-map: name {name:?} of {guid} written as {clean:?}");
            }
            let _ = writeln!(out, "{:#018x} \"{clean}\"", guid.0);
        }
        out
    }
}

/// C `isspace` in the "C" locale (includes vertical tab, unlike `char::is_ascii_whitespace`).
fn c_isspace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// `strtoull(s, &end, 0)` on a string without leading whitespace: the value and the number of
/// bytes consumed, or `None` when no digit was consumed or the value overflows 64 bits.
fn strtoull_base0(s: &str) -> Option<(u64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let radix: u32;
    if b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            radix = 16;
            i += 2;
        } else {
            // "0", octal, or "0x" without hex digits (which strtoull reads as the number 0,
            // leaving the "x" unconsumed).
            radix = 8;
        }
    } else {
        radix = 10;
    }
    let start = i;
    let mut value: u64 = 0;
    while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(radix)) {
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(d))?;
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((
        if negative {
            value.wrapping_neg()
        } else {
            value
        },
        i,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::fixture;

    #[test]
    fn the_mini_fabrics_map_parses() {
        let Some(text) = fixture("ibsim-generated/node-name-map.txt") else {
            return;
        };
        let map = NodeNameMap::parse(&text).unwrap();
        // 7 entries: `grep -c '^0x' ibsim-generated/node-name-map.txt`.
        assert_eq!(map.len(), 7);
        assert_eq!(map.get(Guid(0xb8cef60300a10000)), Some("R01-U42-spine1"));
        assert_eq!(
            map.get(Guid(0x0c42a10300c00040)),
            Some("R01-U05-node05 HCA0"),
            "quoted name with a trailing comment"
        );
        assert_eq!(map.get(Guid(0xb8e9240300d00000)), Some("gw1-unquoted"));
    }

    #[test]
    fn the_slim_flys_map_parses_and_round_trips() {
        let Some(text) = fixture("ibsim-generated/slimfly-q5/node-name-map.txt") else {
            return;
        };
        let map = NodeNameMap::parse(&text).unwrap();
        assert_eq!(NodeNameMap::parse(&map.write()).unwrap(), map);
        // 250 entries: `grep -c '^0x' slimfly-q5/node-name-map.txt` (50 switches + 200 hosts).
        assert_eq!(map.len(), 250);
        assert_eq!(map.get(Guid(0xb8599f0300100000)), Some("sw0-0-0"));
    }

    #[test]
    fn the_c_rules() {
        let text = "  # comment\n\n\
                    0x10 \"a b\" # c\n\
                    0x11 plain name  # c\n\
                    0x12#hash-right-after\n\
                    0x13\n\
                    0x10 \"second\"\n\
                    \t0X14\t\"tab\"\n\
                    0x15 # only a comment\n\
                    017 \"octal\"\n\
                    42 \"decimal\"\n";
        let map = NodeNameMap::parse(text).unwrap();
        assert_eq!(map.get(Guid(0x10)), Some("a b"), "first occurrence wins");
        assert_eq!(map.get(Guid(0x11)), Some("plain name  "));
        assert_eq!(map.get(Guid(0x12)), Some("hash-right-after"));
        assert_eq!(
            map.get(Guid(0x13)),
            None,
            "a GUID without a name adds nothing"
        );
        assert_eq!(map.get(Guid(0x14)), Some("tab"));
        // strtok skips the leading '#' and returns the comment text as the name, like the C.
        assert_eq!(map.get(Guid(0x15)), Some(" only a comment"));
        assert_eq!(map.get(Guid(0o17)), Some("octal"));
        assert_eq!(map.get(Guid(42)), Some("decimal"));
    }

    #[test]
    fn bad_guids_are_errors_with_line_numbers() {
        let bare = "0x01 \"ok\"\n# c\n0008f10403960558 \"bare\"\n";
        let e = NodeNameMap::parse(bare).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.to_string().starts_with("line 3: expected whitespace"),
            "{e}"
        );
        for (text, line) in [
            ("b8cef60300a10000 \"no 0x\"\n", 1),
            ("0x1\n\n0xZZ \"bad hex\"\n", 3),
            ("0x1 a\n0x12345678901234567 \"17 digits\"\n", 2),
            ("0x1\"quote right after\"\n", 1),
            ("name-without-guid\n", 1),
            ("0x \"empty hex\"\n", 1),
        ] {
            let e = NodeNameMap::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn write_then_parse_round_trips() {
        let mut map = NodeNameMap::new();
        map.insert(Guid(0x0002c90300001234), "R01-U40 leaf 1");
        map.insert(Guid(0xb8cef60300a10000), "  padded  ");
        map.insert(Guid(7), "x");
        assert!(!map.insert(Guid(7), "y"));
        let text = map.write();
        assert!(
            text.contains("0x0002c90300001234 \"R01-U40 leaf 1\"\n"),
            "{text}"
        );
        assert_eq!(NodeNameMap::parse(&text).unwrap(), map);

        let mut odd = NodeNameMap::new();
        odd.insert(Guid(1), "a\"b#c");
        odd.insert(Guid(2), "");
        let back = NodeNameMap::parse(&odd.write()).unwrap();
        assert_eq!(back.get(Guid(1)), Some("a_b_c"));
        assert_eq!(back.get(Guid(2)), None);
    }

    #[test]
    fn from_fabric_names_every_node() {
        use crate::topology::Construction;
        use crate::topology::slimfly::SlimFly;
        let fabric = SlimFly::new(5, None).unwrap().build();
        let map = NodeNameMap::from_fabric(&fabric);
        assert_eq!(map.len(), fabric.nodes().len());
        for node in fabric.nodes() {
            assert_eq!(map.get(node.guid), Some(node.name.as_str()));
        }
        assert_eq!(NodeNameMap::parse(&map.write()).unwrap(), map);
    }
}
