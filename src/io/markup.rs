//! Text made safe inside HTML, SVG and XML: element text and attribute values.
//!
//! One escaper for every page and document the project writes (the analysis pages, the
//! cabling sheets, SimGrid platforms), so a name with markup characters in it — a
//! NodeDescription is whatever the host's administrator typed — reads the same everywhere.
//! The apostrophe becomes the numeric reference `&#39;`, which XML 1.0 and every HTML
//! version accept alike (`&apos;` is not an HTML 4 entity).

use std::fmt;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, written without allocating.
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

/// `text` escaped, as an owned string.
pub fn escape(text: &str) -> String {
    Escaped(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn plain_text_and_multibyte_text_pass_unchanged() {
        assert_eq!(escape("P(1,2)-s0"), "P(1,2)-s0");
        assert_eq!(escape("Größe ≤ 3"), "Größe ≤ 3");
        assert_eq!(escape("ä<ö"), "ä&lt;ö");
    }
}
