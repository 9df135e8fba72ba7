//! `cabling plan` from the command line: imported cable lists keep their rack and U positions
//! and say which devices have none; label printer output.

use std::path::PathBuf;
use std::process::{Command, Output};

use ibfabric::plan::document::PlanDocument;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/fixtures/ibnetdiscover/ibsim-generated/slimfly-q5"
    ))
    .join(name)
}

fn cabling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

#[test]
fn an_import_keeps_the_lists_racks_and_us_and_names_devices_without_a_u() {
    let list = fixture("slimfly_q5_plan.csv");
    let out = cabling(&["plan", "import", list.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: PlanDocument = yaml_serde::from_slice(&out.stdout).unwrap();
    // Every row of the list, read here independently: the plan has the same rack and U.
    let text = std::fs::read_to_string(&list).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut without_u = std::collections::BTreeSet::new();
    for row in reader.records() {
        let row = row.unwrap();
        for (rack, u, device) in [(1, 2, 3), (5, 6, 7)] {
            let d = doc.devices.iter().find(|d| d.name == row[device]).unwrap();
            assert_eq!(d.rack, row[rack], "{}", d.name);
            assert_eq!(d.u, row[u].parse().ok(), "{}", d.name);
            if row[u].is_empty() {
                without_u.insert(row[device].to_string());
            }
        }
    }
    assert!(!without_u.is_empty(), "the fixture lists hosts without U");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{} of {} devices have no U position in the list",
            without_u.len(),
            doc.devices.len()
        )),
        "{err}"
    );
    // Sheets say so instead of printing a placeholder U.
    let out = cabling(&[
        "plan",
        "import",
        list.to_str().unwrap(),
        "--format",
        "labels",
    ]);
    let labels = String::from_utf8(out.stdout).unwrap();
    assert!(!labels.contains("U?"));
    let host = without_u.iter().next().unwrap();
    assert!(labels.contains(&format!("-{host}-P")), "{host}");
}

#[test]
fn a_generated_plan_places_every_device_and_says_nothing_about_u() {
    let out = cabling(&["plan", "slimfly", "--q", "5", "--format", "labels"]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no U position"));
}
