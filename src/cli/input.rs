//! Where inputs come from: a file, or standard input for `-` (so a dump can be piped in:
//! `ibnetdiscover | ibfabric analyze --fabric - ...`).
//!
//! Text is read leniently: dumps of live fabrics carry node descriptions as the devices report
//! them, and one byte that is not UTF-8 in a description must not reject the whole dump. Such
//! bytes become U+FFFD, with a warning naming each line where that happened.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};

/// Set once standard input has been read: a second `-` would get nothing.
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// The name of `path` in messages: `standard input` for `-`.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// The text of `path` (`-`: standard input), bytes that are not UTF-8 replaced (see the module
/// documentation).
///
/// # Errors
/// The file cannot be read, or `-` is given a second time.
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    let name = display_name(path);
    let bytes = if is_stdin(path) {
        if STDIN_TAKEN.swap(true, Ordering::SeqCst) {
            bail!("standard input (-) is given twice; it can be read only once");
        }
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {name}"))?;
        bytes
    } else {
        std::fs::read(path).with_context(|| format!("reading {name}"))?
    };
    let (text, lines) = lossy_text(bytes);
    for line in lines {
        log::warn!("{name}: line {line}: bytes that are not UTF-8 read as U+FFFD");
    }
    Ok(text)
}

/// `bytes` as text, and the (1-based) lines that held bytes that are not UTF-8.
pub fn lossy_text(bytes: Vec<u8>) -> (String, Vec<usize>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, Vec::new()),
        Err(e) => {
            let bytes = e.into_bytes();
            let lines = bytes
                .split(|&b| b == b'\n')
                .enumerate()
                .filter(|(_, line)| std::str::from_utf8(line).is_err())
                .map(|(i, _)| i + 1)
                .collect();
            (String::from_utf8_lossy(&bytes).into_owned(), lines)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_text_is_read_as_is_without_lines_to_warn_about() {
        let (text, lines) = lossy_text("a\nb – c\n".as_bytes().to_vec());
        assert_eq!(text, "a\nb – c\n");
        assert!(lines.is_empty());
    }

    /// A bad byte on each line in turn: exactly that line is named, and the rest of the text
    /// is kept.
    #[test]
    fn each_line_with_a_bad_byte_is_named() {
        let good = ["first", "second", "third", "fourth"];
        for bad in 0..good.len() {
            let mut bytes = Vec::new();
            for (i, line) in good.iter().enumerate() {
                bytes.extend_from_slice(line.as_bytes());
                if i == bad {
                    bytes.push(0xff);
                }
                bytes.push(b'\n');
            }
            let (text, lines) = lossy_text(bytes);
            assert_eq!(lines, [bad + 1]);
            for line in good {
                assert!(text.contains(line), "{text}");
            }
            assert_eq!(text.matches('\u{fffd}').count(), 1);
        }
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = read_text(Path::new("/nonexistent/dump.txt")).unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/dump.txt"));
    }
}
