//! The wiring sheets as a technician prints them: rendered to PDF by headless Chromium on A4
//! and on Letter paper for the 36-port and the NDR (cage/split) switch models, and read back
//! as text with `pdftotext`. Every rack-sheet row must print its cable kind as a whole word:
//! narrow columns that broke words mid-way ("copp" / "er") made the sheets hard to read.

use std::path::Path;
use std::process::Command;

/// Runs a program, asserting success; returns stdout.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e} (installed by .ci/setup)"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Prints `html` to `pdf` with Chromium on `paper` (`A4` or `letter`).
fn print(html: &Path, paper: &str, pdf: &Path) {
    let text = std::fs::read_to_string(html).unwrap();
    let sized = text.replacen(
        "@page { size: auto;",
        &format!("@page {{ size: {paper};"),
        1,
    );
    assert_ne!(
        sized, text,
        "the sheets keep the printer's paper with `size: auto`"
    );
    let copy = html.with_file_name(format!("plan-{paper}.html"));
    std::fs::write(&copy, sized).unwrap();
    run(
        "chromium",
        &[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            &format!("--print-to-pdf={}", pdf.display()),
            copy.to_str().unwrap(),
        ],
    );
}

fn sheets_print_whole_words(model: &str, paper: &str, page_size: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("plan");
    run(
        env!("CARGO_BIN_EXE_cabling"),
        &[
            "plan",
            "slimfly",
            "--q",
            "5",
            "--switch-model",
            model,
            "--out-dir",
            out_dir.to_str().unwrap(),
        ],
    );
    let cables = std::fs::read_to_string(out_dir.join("plan.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    let pdf = dir.path().join("plan.pdf");
    print(&out_dir.join("plan.html"), paper, &pdf);
    let info = run("pdfinfo", &[pdf.to_str().unwrap()]);
    assert!(info.contains(page_size), "{model} on {paper}: {info}");
    let text = run("pdftotext", &["-layout", pdf.to_str().unwrap(), "-"]);
    let whole_kinds = text
        .split_whitespace()
        .filter(|w| *w == "copper" || *w == "optical")
        .count();
    // Each cable has a row on the rack sheet of both its ends.
    assert!(
        whole_kinds >= 2 * cables,
        "{model} on {paper}: {whole_kinds} whole cable kinds for {cables} cables"
    );
}

#[test]
fn msb7800_sheets_print_whole_words_on_a4() {
    sheets_print_whole_words("msb7800", "A4", "(A4)");
}

#[test]
fn msb7800_sheets_print_whole_words_on_letter() {
    sheets_print_whole_words("msb7800", "letter", "(letter)");
}

#[test]
fn qm9700_sheets_print_whole_words_on_a4() {
    sheets_print_whole_words("qm9700", "A4", "(A4)");
}

#[test]
fn qm9700_sheets_print_whole_words_on_letter() {
    sheets_print_whole_words("qm9700", "letter", "(letter)");
}
