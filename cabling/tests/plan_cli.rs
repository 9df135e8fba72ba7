//! `cabling plan` from the command line: imported cable lists keep their rack and U positions
//! and say which devices have none; label printer output.

use crate::common::shared_fixtures;

use std::process::{Command, Output};

use ibfabric::plan::document::PlanDocument;
use shared_fixtures::shared_fixture;

fn cabling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

#[test]
fn an_import_keeps_the_lists_racks_and_us_and_names_devices_without_a_u() {
    // A cable list made outside this project (by hand, for the ibsim Slim Fly fixtures).
    let Some(list) = shared_fixture("ibsim-generated/slimfly-q5/slimfly_q5_plan.csv") else {
        return;
    };
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

/// The purchase list's rows as (kind, length, count).
fn purchase(extra: &[&str]) -> Vec<(String, String, usize)> {
    let mut args = vec!["plan", "slimfly", "--q", "5", "--format", "purchase"];
    args.extend_from_slice(extra);
    let out = cabling(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.headers().unwrap(), vec!["kind", "length_m", "count"]);
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[1].to_string(), r[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn the_purchase_list_counts_every_cable_and_a_room_in_rows_needs_longer_ones() {
    let one_row = purchase(&[]);
    let dir = tempfile::tempdir().unwrap();
    let room = dir.path().join("room.yaml");
    std::fs::write(&room, "racks_per_row: 2\nrow_pitch_m: 3\n").unwrap();
    let rows = purchase(&["--room", room.to_str().unwrap()]);
    for list in [&one_row, &rows] {
        assert_eq!(list.iter().map(|r| r.2).sum::<usize>(), 375);
    }
    let longest = |list: &[(String, String, usize)]| {
        list.iter()
            .filter(|r| r.0 == "optical")
            .map(|r| r.1.parse::<f64>().unwrap())
            .fold(0.0, f64::max)
    };
    assert!(longest(&rows) > longest(&one_row));
    // Copper stays inside racks: the room does not change it.
    let copper = |list: &[(String, String, usize)]| {
        list.iter()
            .filter(|r| r.0 == "copper")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(copper(&rows), copper(&one_row));

    std::fs::write(&room, "rows: 2\n").unwrap();
    let out = cabling(&[
        "plan",
        "slimfly",
        "--q",
        "5",
        "--room",
        room.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field `rows`"));
}
