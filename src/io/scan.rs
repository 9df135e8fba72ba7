//! A small byte cursor over one line, for the hand-written line parsers.
//!
//! It only ever advances over ASCII bytes or to positions found by searching for ASCII bytes,
//! so every position is a `char` boundary and slicing never panics.

use crate::topology::Guid;

/// Position in one line of text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `s`.
    pub(crate) fn new(s: &'a str) -> Self {
        Self { s, pos: 0 }
    }

    /// The text not consumed yet.
    pub(crate) fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// Whether everything was consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// The next byte.
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    /// Skips spaces and tabs; returns how many.
    pub(crate) fn skip_ws(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Consumes `prefix` (ASCII) if the rest starts with it.
    pub(crate) fn eat(&mut self, prefix: &str) -> bool {
        if self.rest().starts_with(prefix) {
            self.pos += prefix.len();
            true
        } else {
            false
        }
    }

    /// Consumes one ASCII byte if it is `c`.
    pub(crate) fn eat_byte(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes a run of decimal digits as a number; `None` (nothing consumed) when there is
    /// no digit or the number exceeds `max`.
    pub(crate) fn uint(&mut self, max: u64) -> Option<u64> {
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
                .filter(|v| *v <= max)
                .or_else(|| {
                    self.pos = start;
                    None
                })?;
            self.pos += 1;
        }
        (self.pos > start).then_some(value)
    }

    /// Consumes a hexadecimal number with an optional `0x`/`0X` prefix, up to `max_digits`
    /// significant digits (leading zeros do not count); `None` (nothing consumed) otherwise.
    pub(crate) fn hex(&mut self, max_digits: usize) -> Option<u64> {
        let start = self.pos;
        if !self.eat("0x") {
            self.eat("0X");
        }
        let digits_start = self.pos;
        let mut value: u64 = 0;
        let mut significant = 0;
        while let Some(d) = self.peek().and_then(|b| (b as char).to_digit(16)) {
            if value != 0 || d != 0 {
                significant += 1;
            }
            if significant > max_digits {
                self.pos = start;
                return None;
            }
            value = (value << 4) | u64::from(d);
            self.pos += 1;
        }
        if self.pos == digits_start {
            self.pos = start;
            return None;
        }
        Some(value)
    }

    /// A 64-bit GUID in hex, with or without `0x`.
    pub(crate) fn guid(&mut self) -> Option<Guid> {
        self.hex(16).map(Guid)
    }

    /// Consumes everything up to (not including) the next `c`; `None` if there is none.
    pub(crate) fn until(&mut self, c: u8) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest.bytes().position(|b| b == c)?;
        self.pos += len;
        Some(&rest[..len])
    }

    /// Consumes everything up to (not including) the last `c` of the line; `None` if there is
    /// none.
    pub(crate) fn until_last(&mut self, c: u8) -> Option<&'a str> {
        let rest = self.rest();
        let len = rest.bytes().rposition(|b| b == c)?;
        self.pos += len;
        Some(&rest[..len])
    }

    /// Consumes a run of bytes that are not space or tab.
    pub(crate) fn token(&mut self) -> &'a str {
        let rest = self.rest();
        let len = rest
            .bytes()
            .position(|b| b == b' ' || b == b'\t')
            .unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_guids() {
        let mut c = Cursor::new("0x00c42a10300c00041) x");
        assert_eq!(c.guid(), Some(Guid(0xc42a10300c00041)));
        assert!(c.eat_byte(b')'));
        assert_eq!(c.skip_ws(), 1);
        assert_eq!(c.guid(), None);
        assert_eq!(c.rest(), "x");
        let mut c = Cursor::new("12345678901234567");
        assert_eq!(c.guid(), None, "17 hex digits do not fit");
        assert_eq!(c.uint(u64::from(u8::MAX)), None);
        assert_eq!(c.uint(u64::MAX), Some(12345678901234567));
        assert!(c.is_empty());
        let mut c = Cursor::new("256]");
        assert_eq!(c.uint(255), None);
        assert_eq!(c.rest(), "256]");
        let mut c = Cursor::new("a \"b\" c\" lid");
        assert_eq!(c.token(), "a");
        c.skip_ws();
        assert_eq!(c.until_last(b'"'), Some("\"b\" c"));
        assert_eq!(c.until(b'x'), None);
    }
}
