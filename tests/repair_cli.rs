//! `ibfabric route --repair-from`: the routing of a fabric repaired for a copy that lost
//! cables, with the churn reported; a copy that gained cables has them routed in, no route changed.

use crate::command::{ibfabric, stderr};
use ibfabric::Fabric;
use ibfabric::io::fabric_document::FabricDocument;
use ibfabric::routing::assign_lids;
use ibfabric::topology::TopologySpec;

/// Slim Fly q = 5 with LIDs for 4 layers, and the same fabric without its switch-to-switch
/// cables number 3 and 40.
fn intact_and_damaged() -> (Fabric, Fabric) {
    let mut whole = "slimfly:q=5"
        .parse::<TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    assign_lids(&mut whole, 2).unwrap();
    let mut inter = 0;
    let cut: Vec<bool> = whole
        .links()
        .iter()
        .map(|l| {
            let between = whole.node(l.a.node).is_switch() && whole.node(l.b.node).is_switch();
            inter += usize::from(between);
            between && (inter == 4 || inter == 41)
        })
        .collect();
    let damaged = whole.after_losses(|_| false, |l| cut[l.0 as usize]);
    (whole, damaged)
}

fn write(dir: &std::path::Path, name: &str, fabric: &Fabric) -> String {
    let path = dir.join(name);
    let text = serde_json::to_string(&FabricDocument::from_fabric(fabric)).unwrap();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `ibfabric route --fabric after --repair-from before` with 4 layers and auto lanes.
fn route_repaired(after: &str, before: &str) -> std::process::Output {
    ibfabric(&[
        "route",
        "--fabric",
        after,
        "--repair-from",
        before,
        "--layers",
        "4",
        "--deadlock",
        "auto",
    ])
}

/// The output of a successful [`route_repaired`] and its line on the repair.
fn repair_line(after: &str, before: &str) -> (String, String) {
    let out = route_repaired(after, before);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("repaired from"))
        .unwrap_or_else(|| panic!("no repair line:\n{text}"))
        .to_string();
    (text, line)
}

#[test]
fn a_routing_repaired_for_lost_cables_reports_churn_of_at_most_one() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, damaged) = intact_and_damaged();
    let before = write(dir.path(), "before.json", &whole);
    let after = write(dir.path(), "after.json", &damaged);
    let (text, line) = repair_line(&after, &before);
    assert!(line.contains("2 cables and 0 switches lost"), "{line}");
    let churn: f64 = line
        .rsplit("churn ")
        .next()
        .and_then(|c| c.trim_end_matches(')').parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(churn > 0.0 && churn <= 1.0, "{line}");
    assert!(
        text.contains("deadlock-free whatever SL the traffic carries"),
        "{text}"
    );
}

#[test]
fn a_fabric_that_gained_cables_is_routed_with_no_route_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, damaged) = intact_and_damaged();
    let before = write(dir.path(), "before.json", &damaged);
    let after = write(dir.path(), "after.json", &whole);
    let (text, line) = repair_line(&after, &before);
    assert!(
        line.contains("0 cables and 0 switches lost, 2 cables and 0 switches gained"),
        "{line}"
    );
    assert!(
        line.contains("0 of the (layer, switch, destination switch) routes changed, 0 had to"),
        "{line}"
    );
    assert!(
        text.contains("deadlock-free whatever SL the traffic carries"),
        "{text}"
    );
}
