//! The source's import structure, checked: imports point one way. Every `crate::` and `super::`
//! path in `src/**/*.rs` (in `use` trees and in code; comments and literals aside) is resolved
//! to the file that defines the module it names, which gives the file-level import graph of
//! each crate (the library, each binary). That graph must have no cycle, and the topology
//! (the fabric model and the constructions) must import nothing from routing, which builds on
//! it.
//!
//! Containment (`mod x;`) and relative paths (`x::y` naming a child module) are not imports of
//! another file: a parent re-exporting its children is the one direction allowed.
//!
//! Test code is not part of the structure: a unit test imports fixtures that import the code
//! under test, which is the point of a fixture. Inline `#[cfg(test)] mod … { … }` blocks and
//! the files of `#[cfg(test)] mod …;` declarations (and everything below them) are left out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

/// One import: the file it is in, the line, the path as written, and the file it resolves to.
#[derive(Debug, Clone)]
struct Import {
    from: PathBuf,
    line: usize,
    path: String,
    to: PathBuf,
}

#[test]
fn the_file_import_graph_has_no_cycle() {
    let imports = imports_of(&src_dir());
    let mut graph = DiGraph::<PathBuf, ()>::new();
    let mut node = BTreeMap::<PathBuf, NodeIndex>::new();
    let mut index = |graph: &mut DiGraph<PathBuf, ()>, file: &PathBuf| {
        *node
            .entry(file.clone())
            .or_insert_with(|| graph.add_node(file.clone()))
    };
    for import in &imports {
        let (a, b) = (
            index(&mut graph, &import.from),
            index(&mut graph, &import.to),
        );
        graph.update_edge(a, b, ());
    }
    let mut report = String::new();
    for component in tarjan_scc(&graph).into_iter().filter(|c| c.len() > 1) {
        let files: Vec<&PathBuf> = component.iter().map(|&n| &graph[n]).collect();
        writeln!(report, "cycle through {files:?}:").unwrap();
        for import in imports
            .iter()
            .filter(|i| files.contains(&&i.from) && files.contains(&&i.to))
        {
            writeln!(
                report,
                "  {}:{} `{}` -> {}",
                import.from.display(),
                import.line,
                import.path,
                import.to.display()
            )
            .unwrap();
        }
    }
    assert!(report.is_empty(), "import cycles between files:\n{report}");
}

#[test]
fn topology_imports_nothing_from_routing() {
    let offending: Vec<String> = imports_of(&src_dir())
        .into_iter()
        .filter(|i| i.from.starts_with("topology") && i.to.starts_with("routing"))
        .map(|i| format!("{}:{} `{}`", i.from.display(), i.line, i.path))
        .collect();
    assert!(offending.is_empty(), "{offending:#?}");
}

/// The resolver on the shapes that occur: nested `use` groups, `super` from a file and from an
/// inline module, paths in code, look-alikes in comments, strings, chars and macros, and test
/// code left out.
#[test]
fn imports_are_resolved_to_the_files_that_define_their_modules() {
    let modules = [
        ("lib.rs", ""),
        ("a/mod.rs", "a"),
        ("a/b.rs", "a::b"),
        ("a/c.rs", "a::c"),
        ("d.rs", "d"),
    ];
    let modules: BTreeMap<Vec<String>, PathBuf> = modules
        .iter()
        .map(|(file, module)| (segments(module), PathBuf::from(file)))
        .collect();
    let source = r#"
        //! Links to [`crate::d::X`] are no imports.
        use super::{c::Y, Z as W};
        use crate::{d, a::{b::*, c}};
        /* crate::d::Hidden */
        fn f() -> char {
            let s = "crate::d::InAString";
            let _ = crate::d::g();
            '"'
        }
        fn lifetime<'a>(x: &'a str) -> &'a str { x }
        macro_rules! m { () => { $crate::d::h() } }
        mod inner {
            use super::*;
            use super::super::c::T;
        }
        #[cfg(test)]
        mod tests {
            use crate::d::InATest;
        }
        #[cfg(test)]
        mod fixtures;
    "#;
    let file = imports_in(Path::new("a/b.rs"), &segments("a::b"), source, &modules);
    assert_eq!(file.test_modules, vec![segments("a::b::fixtures")]);
    let found: Vec<(usize, String, String)> = file
        .imports
        .into_iter()
        .map(|i| (i.line, i.path, i.to.display().to_string()))
        .collect();
    let expected = [
        (3, "super::c::Y", "a/c.rs"),
        (3, "super::Z", "a/mod.rs"),
        (4, "crate::d", "d.rs"),
        (4, "crate::a::b::*", "a/b.rs"),
        (4, "crate::a::c", "a/c.rs"),
        (8, "crate::d::g", "d.rs"),
        (14, "super::*", "a/b.rs"),
        (15, "super::super::c::T", "a/c.rs"),
    ];
    let expected: Vec<(usize, String, String)> = expected
        .iter()
        .map(|&(line, path, to)| (line, path.to_owned(), to.to_owned()))
        .collect();
    assert_eq!(found, expected);
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn segments(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Every import of every crate under `src` (the library at `lib.rs`, each binary under
/// `bin/<name>/` at its `main.rs`), between two different files; paths relative to `src`.
fn imports_of(src: &Path) -> Vec<Import> {
    let mut files = Vec::new();
    collect_rs_files(src, src, &mut files);
    files.sort();
    // Crate of each file: its binary's directory, or the library.
    let crate_of = |file: &Path| -> PathBuf {
        match file.strip_prefix("bin") {
            Ok(rest) => Path::new("bin").join(rest.iter().next().expect("bin/<name>")),
            Err(_) => PathBuf::new(),
        }
    };
    let mut crates: BTreeMap<PathBuf, BTreeMap<Vec<String>, PathBuf>> = BTreeMap::new();
    for file in &files {
        let root = crate_of(file);
        let module = module_of(file.strip_prefix(&root).expect("in its crate"));
        crates.entry(root).or_default().insert(module, file.clone());
    }
    let mut imports = Vec::new();
    let mut test_only: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for file in &files {
        let root = crate_of(file);
        let module = module_of(file.strip_prefix(&root).expect("in its crate"));
        let text = std::fs::read_to_string(src.join(file)).expect("readable source");
        let found = imports_in(file, &module, &text, &crates[&root]);
        test_only.extend(found.test_modules.into_iter().map(|m| (root.clone(), m)));
        imports.extend(found.imports.into_iter().filter(|i| i.to != *file));
    }
    let is_test_only = |file: &Path| {
        let root = crate_of(file);
        let module = module_of(file.strip_prefix(&root).expect("in its crate"));
        test_only
            .iter()
            .any(|(r, m)| *r == root && module.starts_with(m))
    };
    imports.retain(|i| !is_test_only(&i.from) && !is_test_only(&i.to));
    imports
}

/// What one file holds: its imports outside test code, and the modules it declares test-only
/// (`#[cfg(test)] mod x;`, as full module paths).
struct FileImports {
    imports: Vec<Import>,
    test_modules: Vec<Vec<String>>,
}

/// Whether the tokens ending just before `i` are the attribute `#[cfg(test)]`.
fn after_cfg_test(tokens: &[(usize, Token)], i: usize) -> bool {
    let expected = ["#", "[", "cfg", "(", "test", ")", "]"];
    i >= expected.len()
        && tokens[i - expected.len()..i].iter().zip(expected).all(
            |((_, token), want)| match token {
                Token::Ident(word) => word == want,
                Token::Punct(c) => want.len() == 1 && want.starts_with(*c),
                Token::PathSep => false,
            },
        )
}

/// The `.rs` files under `dir`, relative to `src`.
fn collect_rs_files(src: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            collect_rs_files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src).expect("under src").to_path_buf());
        }
    }
}

/// The module a file defines, relative to its crate root: `lib.rs`/`main.rs` → [],
/// `a/mod.rs` → [a], `a/b.rs` → [a, b].
fn module_of(file: &Path) -> Vec<String> {
    let mut module: Vec<String> = file
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(
        module.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        module.pop();
    }
    module
}

/// A token of Rust source, as far as paths need: identifiers (and `$crate`), `::` and single
/// punctuation characters, each with its line.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `source`, without comments, string and char literals.
fn tokens(source: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let count_lines =
        |from: usize, to: usize| chars[from..to].iter().filter(|&&c| c == '\n').count();
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(start, i);
        } else if c == 'r' && matches!(next, Some('"' | '#')) && raw_string_end(&chars, i).is_some()
        {
            let end = raw_string_end(&chars, i).expect("checked");
            line += count_lines(i, end);
            i = end;
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            line += count_lines(start, i.min(chars.len()));
        } else if c == '\'' {
            // A char literal ('x', '\n', '\''), or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push((line, Token::PathSep));
            i += 2;
        } else if c == '$' || c == '_' || c.is_alphanumeric() {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i] == '_' || chars[i].is_alphanumeric()) {
                i += 1;
            }
            out.push((line, Token::Ident(chars[start..i].iter().collect())));
        } else {
            out.push((line, Token::Punct(c)));
            i += 1;
        }
    }
    out
}

/// Where the raw string literal starting at `i` (`r"…"`, `r#"…"#`, …) ends, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && (chars[i - 1] == '_' || chars[i - 1].is_alphanumeric()) {
        return None; // the end of an identifier such as `for`
    }
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    let hashes = j - i - 1;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The imports of `file` (module `module` of its crate) into the files of `modules` (module →
/// file); self-imports included.
fn imports_in(
    file: &Path,
    module: &[String],
    source: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> FileImports {
    let tokens = tokens(source);
    let mut imports = Vec::new();
    let mut test_modules = Vec::new();
    // Inline modules (`mod tests { … }`) open at a brace depth: `super` counts from them.
    // Each remembers whether it is test code.
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let current: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(name, _, _)| name.clone()))
            .collect();
        let in_test = inline.iter().any(|&(_, _, test)| test);
        let mut record = |line: usize, path: Vec<String>| {
            if in_test {
                return;
            }
            if let Some(import) = resolve(file, &current, line, &path, modules) {
                imports.push(import);
            }
        };
        match &tokens[i].1 {
            Token::Ident(word) if word == "mod" => {
                let test = after_cfg_test(&tokens, i);
                match (tokens.get(i + 1), tokens.get(i + 2)) {
                    (Some((_, Token::Ident(name))), Some((_, Token::Punct('{')))) => {
                        depth += 1;
                        inline.push((name.clone(), depth, test));
                        i += 3;
                        continue;
                    }
                    (Some((_, Token::Ident(name))), Some((_, Token::Punct(';')))) if test => {
                        let mut declared = current.clone();
                        declared.push(name.clone());
                        test_modules.push(declared);
                    }
                    _ => {}
                }
            }
            Token::Ident(word) if word == "use" => {
                let mut trees = Vec::new();
                i = use_tree(&tokens, i + 1, Vec::new(), &mut trees);
                for (line, path) in trees {
                    record(line, path);
                }
                continue;
            }
            Token::Ident(word)
                if (word == "crate" || word == "super")
                    && tokens.get(i + 1).map(|t| &t.1) == Some(&Token::PathSep) =>
            {
                let line = tokens[i].0;
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while let (Some((_, Token::PathSep)), Some((_, Token::Ident(next)))) =
                    (tokens.get(j), tokens.get(j + 1))
                {
                    path.push(next.clone());
                    j += 2;
                }
                record(line, path);
                i = j;
                continue;
            }
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if inline.last().is_some_and(|&(_, d, _)| d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    FileImports {
        imports,
        test_modules,
    }
}

/// Parses the use tree at `i` under `prefix` into `out` (line and full path of each leaf,
/// `*` included); returns the index after it (after the `;` at the top level).
fn use_tree(
    tokens: &[(usize, Token)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(usize, Vec<String>)>,
) -> usize {
    let line = tokens.get(i).map_or(0, |t| t.0);
    while let Some((_, token)) = tokens.get(i) {
        match token {
            Token::Ident(word) if word == "as" => i += 2,
            Token::Ident(segment) => {
                prefix.push(segment.clone());
                i += 1;
            }
            Token::PathSep => i += 1,
            Token::Punct('*') => {
                prefix.push("*".into());
                i += 1;
            }
            Token::Punct('{') => {
                i += 1;
                while !matches!(tokens.get(i), None | Some((_, Token::Punct('}')))) {
                    i = use_tree(tokens, i, prefix.clone(), out);
                }
                i += 1;
                prefix.clear();
            }
            Token::Punct(',') => {
                i += 1;
                break;
            }
            Token::Punct(';') => {
                i += 1;
                break;
            }
            Token::Punct('}') => break,
            Token::Punct(_) => i += 1,
        }
    }
    if !prefix.is_empty() {
        out.push((line, prefix));
    }
    i
}

/// The import `path` (from module `current` of `file`) stands for, if it starts at `crate` or
/// `super`: the file defining the longest module prefix of the path it names.
fn resolve(
    file: &Path,
    current: &[String],
    line: usize,
    path: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Import> {
    let mut target: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") => current.to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        target.pop();
        while rest.first().is_some_and(|s| s == "super") {
            target.pop();
            rest = &rest[1..];
        }
    }
    target.extend(rest.iter().filter(|s| *s != "*").cloned());
    let to = (0..=target.len())
        .rev()
        .find_map(|n| modules.get(&target[..n]))?;
    Some(Import {
        from: file.to_path_buf(),
        line,
        path: path.join("::"),
        to: to.clone(),
    })
}
