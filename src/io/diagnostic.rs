//! Diagnostics of the text readers: line-numbered warnings and the error that stops a parse.
//!
//! Line numbers are 1-based and count every line of the input, blank ones included. Callers
//! that read from a file prefix the file name (`topo.txt: line 12: …`).

use std::fmt;

/// How bad a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The input was understood; something in it was skipped or looks suspicious.
    Warning,
    /// The input could not be understood at this line.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A message about one line of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, without the line number.
    pub message: String,
    /// Warning or error.
    pub severity: Severity,
}

impl Diagnostic {
    /// A warning about `line`.
    pub fn warning(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
            severity: Severity::Warning,
        }
    }

    /// An error about `line`.
    pub fn error(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
            severity: Severity::Error,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Why a text could not be parsed: the line, what the reader expected there and what it found.
///
/// Displays as `line 7: expected a port line like … , found "…"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: expected {expected}, found {found}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What would have been valid here.
    pub expected: String,
    /// What the line holds, quoted and shortened for the message.
    pub found: String,
}

/// Longest excerpt of a line quoted in a [`ParseError`].
const EXCERPT_CHARS: usize = 80;

impl ParseError {
    /// An error at `line` whose text was `found` (quoted and shortened here).
    pub fn new(line: usize, expected: impl Into<String>, found: &str) -> Self {
        Self {
            line,
            expected: expected.into(),
            found: excerpt(found),
        }
    }
}

impl From<ParseError> for Diagnostic {
    fn from(e: ParseError) -> Self {
        Diagnostic::error(
            e.line,
            format!("expected {}, found {}", e.expected, e.found),
        )
    }
}

/// `text` quoted with Rust escapes, cut after [`EXCERPT_CHARS`] characters.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_line_number() {
        let d = Diagnostic::warning(12, "skipped a line");
        assert_eq!(d.to_string(), "line 12: skipped a line");
        let e = ParseError::new(7, "a node header", "Swich 36");
        assert_eq!(
            e.to_string(),
            "line 7: expected a node header, found \"Swich 36\""
        );
        let d: Diagnostic = e.into();
        assert_eq!(d.severity, Severity::Error);
        assert_eq!(d.line, 7);
        let long = "x".repeat(200);
        assert!(ParseError::new(1, "y", &long).found.ends_with('…'));
    }
}
