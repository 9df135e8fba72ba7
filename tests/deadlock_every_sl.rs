//! The verifier's every-SL mode: every route on every SL 0..15 at once, in one channel
//! dependency graph — what clients that put one fixed SL into every packet (and never ask the
//! SA for the path SL) need. DFSSSP's lanes are deadlock-free on the path SLs only, a routing
//! acyclic on one lane stays deadlock-free on every SL, and `ibfabric deadlock-check
//! --every-sl` reports both verdicts and which guarantee holds.

use crate::command::{ibfabric, stderr};
use ibfabric::deadlock::{
    DfssspConfig, RouteSls, Sl2VlTables, VerifyOptions, assign_vls, identity_row, verify,
};
use ibfabric::routing::{Algorithm, PathLengths, Routed, RoutingConfig, assign_lids, route_fabric};
use ibfabric::topology::{Fabric, TopologySpec};

const FAT_TREE: &str = "fattree:leaves=6,spines=3,links-per-pair=2,hosts-per-leaf=4";

/// `spec` with LIDs for `layers`, routed by `algorithm`.
fn routed(spec: &str, layers: usize, algorithm: Algorithm) -> (Fabric, Routed) {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
    let config = RoutingConfig {
        layers,
        algorithm,
        seed: 7,
        ..RoutingConfig::default()
    };
    let routed = route_fabric(&fabric, &config).unwrap();
    (fabric, routed)
}

fn options(sls: RouteSls) -> VerifyOptions {
    VerifyOptions {
        sls,
        ..VerifyOptions::default()
    }
}

#[test]
fn dfsssp_lanes_of_slim_fly_q5_with_4_layers_are_deadlock_free_on_path_sls_only() {
    let (fabric, routed) = routed("slimfly:q=5", 4, Algorithm::Layered(PathLengths::default()));
    let (lids, tables) = (&routed.lids, &routed.tables);
    let a = assign_vls(&fabric, lids, tables, &DfssspConfig::default()).unwrap();
    assert!(a.vls_needed >= 2, "several VLs: {}", a.vls_needed);
    let sl2vl = a.sl2vl(&fabric);
    let on_path_sls = verify(
        &fabric,
        lids,
        tables,
        &a.path_sls,
        &sl2vl,
        &options(RouteSls::PathSl),
    );
    assert!(on_path_sls.is_deadlock_free(), "{on_path_sls}");
    let on_every_sl = verify(
        &fabric,
        lids,
        tables,
        &a.path_sls,
        &sl2vl,
        &options(RouteSls::EverySl),
    );
    assert!(!on_every_sl.is_deadlock_free(), "{on_every_sl}");
    assert_eq!(
        on_every_sl.routes, on_path_sls.routes,
        "routes, not route × SL"
    );
    assert!(on_every_sl.dependencies > on_path_sls.dependencies);
    let cycle = on_every_sl.cycle.as_ref().unwrap();
    assert!(
        cycle
            .channels
            .iter()
            .all(|c| c.routes > 0 && c.examples.iter().all(|r| r.sl < 16)),
        "every dependency of the cycle is named with its routes and SLs:\n{on_every_sl}"
    );
}

#[test]
fn minimal_routing_of_a_fat_tree_is_deadlock_free_on_every_sl() {
    let (fabric, routed) = routed(FAT_TREE, 1, Algorithm::Minimal);
    // SL i on VL i mod 8: every lane carries the whole routing, acyclic on each.
    let sl2vl = Sl2VlTables::uniform(&fabric, identity_row(8));
    let verdict = verify(
        &fabric,
        &routed.lids,
        &routed.tables,
        &ibfabric::deadlock::DefaultSl(0),
        &sl2vl,
        &options(RouteSls::EverySl),
    );
    assert!(verdict.is_deadlock_free(), "{verdict}");
    assert_eq!(verdict.vls, (0..8).collect::<Vec<u8>>(), "{verdict}");
}

/// Writes `spec`'s tables with `ibfabric route --deadlock dfsssp` and `layers` layers into
/// `dir`; returns the `deadlock-check` arguments that read them.
fn dfsssp_tables(dir: &std::path::Path, spec: &str, layers: &str) -> Vec<String> {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let out = ibfabric(&[
        "route",
        "--fabric",
        spec,
        "--layers",
        layers,
        "--deadlock",
        "dfsssp",
        "--lft-out",
        &path("lfts.txt"),
        "--path-sl-out",
        &path("path-sl.txt"),
        "--sl2vl-out",
        &path("sl2vl.txt"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    [
        "deadlock-check",
        "--fabric",
        spec,
        "--lfts",
        &path("lfts.txt"),
        "--path-sl",
        &path("path-sl.txt"),
        "--sl2vl",
        &path("sl2vl.txt"),
    ]
    .map(String::from)
    .to_vec()
}

/// `ibfabric ARGS EXTRA`: exit status and stdout.
fn check(args: &[String], extra: &[&str]) -> (Option<i32>, String) {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend_from_slice(extra);
    let out = ibfabric(&all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout + &stderr(&out))
}

#[test]
fn deadlock_check_every_sl_gives_both_verdicts_and_exits_1_for_dfsssp_on_slim_fly() {
    let dir = tempfile::tempdir().unwrap();
    let args = dfsssp_tables(dir.path(), "slimfly:q=5", "4");
    let (code, report) = check(&args, &["--every-sl"]);
    assert_eq!(code, Some(1), "{report}");
    let path_part = report.find("With the path SLs:").expect(&report);
    let every_part = report.find("Whatever the SL").expect(&report);
    assert!(path_part < every_part, "{report}");
    let (on_path, on_every) = report.split_at(every_part);
    assert!(
        on_path.contains("deadlock-free: the channel dependency graph has no cycle"),
        "{report}"
    );
    assert!(on_every.contains("DEADLOCK: a cycle of"), "{report}");
    assert!(on_every.contains("routes, e.g."), "{report}");
    assert_eq!(
        report.trim_end().lines().last(),
        Some("deadlock-free only for clients that use the SA's path SL"),
        "{report}"
    );
}

#[test]
fn deadlock_check_every_sl_json_holds_both_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let args = dfsssp_tables(dir.path(), "slimfly:q=5", "4");
    let (code, report) = check(&args, &["--every-sl", "--format", "json"]);
    assert_eq!(code, Some(1), "{report}");
    let both: serde_json::Value = serde_json::from_str(&report).expect(&report);
    assert!(both["path_sl"]["cycle"].is_null(), "{report}");
    assert!(both["every_sl"]["cycle"].is_object(), "{report}");
    assert_eq!(both["path_sl"]["routes"], both["every_sl"]["routes"]);
    assert_eq!(both["guarantee"], "path-sl-only");
}

#[test]
fn deadlock_check_every_sl_exits_0_for_one_layer_on_a_fat_tree() {
    let dir = tempfile::tempdir().unwrap();
    let args = dfsssp_tables(dir.path(), FAT_TREE, "1");
    let (code, report) = check(&args, &["--every-sl"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report
            .matches("deadlock-free: the channel dependency graph has no cycle")
            .count(),
        2,
        "{report}"
    );
    assert_eq!(
        report.trim_end().lines().last(),
        Some("deadlock-free whatever SL the traffic carries"),
        "{report}"
    );
}

#[test]
fn deadlock_check_without_every_sl_prints_one_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let args = dfsssp_tables(dir.path(), "slimfly:q=5", "4");
    let (code, report) = check(&args, &[]);
    assert_eq!(code, Some(0), "{report}");
    assert!(!report.contains("Whatever the SL"), "{report}");
    assert!(!report.contains("With the path SLs"), "{report}");
}

#[test]
fn deadlock_check_help_documents_the_every_sl_exit_status() {
    let out = ibfabric(&["deadlock-check", "--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let at = help.find("--every-sl").expect("--every-sl in --help");
    // Clap wraps the text: compare it with the line breaks folded.
    let text = help[at..].split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("exit status 0 only when deadlock-free whatever the SL, 1 otherwise"),
        "{help}"
    );
}
