//! Deterministic mutations of a text, for the readers' robustness tests (test builds only).

use crate::rng::Rng;

/// Characters garbage is made of: the format's punctuation, digits, letters, blanks and a few
/// multi-byte ones.
const GARBAGE: &[char] = &[
    '[', ']', '(', ')', '"', '#', '-', 'x', '0', '1', '9', 'f', 'S', 'H', 'R', ' ', '\t', '=', ':',
    '/', '?', 'é', '→', 'l', 'i', 'd', '<', '>',
];

/// `count` mutants of `text`: a line deleted, duplicated, truncated, two characters swapped,
/// a character replaced, garbage inserted, or all tabs replaced by spaces.
pub(crate) fn mutants(text: &str, seed: u64, count: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut rng = Rng::new(seed);
    let mut below = |n: usize| rng.below(n as u64) as usize;
    let mut out = Vec::with_capacity(count);
    if lines.is_empty() {
        return out;
    }
    for k in 0..count {
        let mut lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        let i = below(lines.len());
        match k % 7 {
            0 => {
                lines.remove(i);
            }
            1 => {
                let copy = lines[i].clone();
                let j = below(lines.len());
                lines.insert(j, copy);
            }
            2 => {
                let chars: Vec<char> = lines[i].chars().collect();
                let cut = below(chars.len() + 1);
                lines[i] = chars[..cut].iter().collect();
            }
            3 => {
                let mut chars: Vec<char> = lines[i].chars().collect();
                if chars.len() >= 2 {
                    let a = below(chars.len());
                    let b = below(chars.len());
                    chars.swap(a, b);
                }
                lines[i] = chars.into_iter().collect();
            }
            4 => {
                let mut chars: Vec<char> = lines[i].chars().collect();
                if !chars.is_empty() {
                    let a = below(chars.len());
                    chars[a] = GARBAGE[below(GARBAGE.len())];
                }
                lines[i] = chars.into_iter().collect();
            }
            5 => {
                let len = below(40);
                let garbage: String = (0..len).map(|_| GARBAGE[below(GARBAGE.len())]).collect();
                // Half the time glue the garbage to the start of an existing line, so it
                // looks like a port line or header gone wrong.
                if below(2) == 0 {
                    lines.insert(i, garbage);
                } else {
                    lines[i] = format!("{garbage}{}", lines[i]);
                }
            }
            _ => {
                for line in &mut lines {
                    *line = line.replace('\t', " ");
                }
            }
        }
        out.push(lines.join("\n"));
    }
    out
}

/// Every text fixture under `shared/fixtures/ibnetdiscover/` (binary caches read lossily), or
/// `None` after a skip line when the shared dumps are not beside the repository.
pub(crate) fn all_fixture_texts() -> Option<Vec<(String, String)>> {
    let root = crate::io::shared_fixtures::shared_fixture("")?;
    let mut stack = vec![std::path::PathBuf::from(&root)];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                out.push((path.display().to_string(), text));
            }
        }
    }
    Some(out)
}
