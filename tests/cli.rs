//! The `ibfabric` command as a user runs it: outputs, exit statuses and error messages.

use crate::common::shared_fixtures;

use crate::command::{ibfabric, stderr};
use shared_fixtures::shared_fixture;
use std::process::Output;

/// The command refused its input: exit 2 and a message containing `what`.
fn assert_refused(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(stderr(out).contains(what), "{}", stderr(out));
}

/// The help text of one value of an option in `--help`: `- NAME: text` up to the next value.
fn value_help(help: &str, name: &str) -> String {
    let start = help
        .find(&format!("- {name}:"))
        .unwrap_or_else(|| panic!("no value {name} in\n{help}"));
    let rest = &help[start + name.len() + 3..];
    let end = rest.find("\n").unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

#[test]
fn route_help_says_deadlock_auto_is_lanes_by_port_pair_where_two_vls_exist() {
    let out = ibfabric(&["route", "--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let auto = value_help(&help, "auto");
    assert!(
        auto.starts_with("Lanes by port pair where the ports have two data VLs"),
        "{auto}"
    );
    assert!(auto.contains("whatever SL the traffic carries"), "{auto}");
    let port_pair = value_help(&help, "port-pair");
    assert!(port_pair.starts_with("Lanes by port pair"), "{port_pair}");
}

#[test]
fn impossible_parameters_exit_2_naming_the_nearest_valid_ones() {
    let out = ibfabric(&["topo", "slimfly", "--q", "6"]);
    assert_refused(
        &out,
        "q = 5 (50 switches, 200 endpoints, 11 ports per switch), q = 7",
    );
    let out = ibfabric(&["topo", "lsft", "--n", "6"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("n = 5") && stderr(&out).contains("n = 7"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn output_files_are_written_whole_and_read_back_as_the_same_fabric() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["yaml", "json", "ibnetdiscover"] {
        let path = dir.path().join(format!("mlfm.{format}"));
        let out = ibfabric(&[
            "topo",
            "mlfm",
            "--d",
            "3",
            "--format",
            format,
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            leftovers
                .iter()
                .all(|n| n.to_str().unwrap().starts_with("mlfm.")),
            "temporary files left: {leftovers:?}"
        );
        let out = ibfabric(&[
            "diff",
            "--expected",
            "mlfm:d=3",
            "--actual",
            path.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn diff_exits_1_and_lists_exactly_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let out = ibfabric(&["topo", "slimfly", "--q", "5", "--format", "ibnetdiscover"]);
    let dump = String::from_utf8(out.stdout).unwrap();
    // Unplug host h0-0-0-0 (GUID 0x02fab10000000000): drop both ends' port lines.
    let unplugged: String = dump
        .lines()
        .filter(|l| {
            !l.contains("\"H-02fab10000000000\"[1]") && !l.starts_with("[1](2fab10000000001)")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(dump.lines().count() - unplugged.lines().count(), 2);
    let path = dir.path().join("unplugged.topo");
    std::fs::write(&path, unplugged).unwrap();
    let out = ibfabric(&[
        "diff",
        "--expected",
        "slimfly:q=5",
        "--actual",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let findings: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(findings, ["missing cable: sw0-0-0[8] -- h0-0-0-0[1]"]);
}

#[test]
fn a_real_dump_converts_to_every_format() {
    let Some(dump) = shared_fixture("loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt") else {
        return;
    };
    let dump = dump.to_str().unwrap();
    for format in [
        "yaml",
        "json",
        "ibsim",
        "dot",
        "ibnetdiscover",
        "node-name-map",
    ] {
        let out = ibfabric(&["topo", "ibnetdiscover", dump, "--format", format]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert!(!out.stdout.is_empty());
    }
    let out = ibfabric(&["diff", "--expected", dump, "--actual", dump]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn unreadable_sources_are_refused_with_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.topo");
    std::fs::write(&bad, "Switch\t36 \"S-0000000000000001\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n[1 \"S-0000000000000002\"[1]\n").unwrap();
    let out = ibfabric(&["topo", "ibnetdiscover", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.topo: line 2: expected"), "{err}");
    let out = ibfabric(&[
        "diff",
        "--expected",
        "nosuchfile.yaml",
        "--actual",
        "slimfly:q=5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("\"nosuchfile.yaml\" is neither a file nor a topology spec"),
        "{}",
        stderr(&out)
    );
}

/// `route --deadlock` writes tables, path SLs and SL-to-VL tables that `deadlock-check` proves
/// deadlock-free; the same tables on one SL deadlock. Too few VLs: exit 2 with both numbers,
/// or fewer layers by request.
#[test]
fn route_with_deadlock_avoidance_writes_what_deadlock_check_proves() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for scheme in ["dfsssp", "colouring"] {
        let out = ibfabric(&[
            "route",
            "--fabric",
            "slimfly:q=5",
            "--layers",
            "4",
            "--deadlock",
            scheme,
            "--lft-out",
            &path("lfts.txt"),
            "--path-sl-out",
            &path("path-sl.txt"),
            "--sl2vl-out",
            &path("sl2vl.txt"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            report.contains("deadlock-free by") && report.contains("(4 layers)"),
            "{report}"
        );
        let (lfts, sl2vl) = (path("lfts.txt"), path("sl2vl.txt"));
        let check = |extra: &[&str]| {
            let mut args = vec![
                "deadlock-check",
                "--fabric",
                "slimfly:q=5",
                "--lfts",
                &lfts,
                "--sl2vl",
                &sl2vl,
            ];
            args.extend_from_slice(extra);
            ibfabric(&args)
        };
        let sls = path("path-sl.txt");
        let ok = check(&["--path-sl", &sls]);
        assert_eq!(ok.status.code(), Some(0), "{scheme}: {}", stderr(&ok));
        let one_sl = check(&["--default-sl", "0"]);
        assert_eq!(
            one_sl.status.code(),
            Some(1),
            "{scheme}: on SL 0 it deadlocks"
        );
    }
    let short = ibfabric(&[
        "route",
        "--fabric",
        "slimfly:q=5",
        "--deadlock",
        "dfsssp",
        "--vls",
        "1",
    ]);
    assert_refused(
        &short,
        "virtual lanes to be deadlock-free, but only 1 exist",
    );
    let fewer = ibfabric(&[
        "route",
        "--fabric",
        "slimfly:q=5",
        "--deadlock",
        "dfsssp",
        "--vls",
        "2",
        "--on-vl-shortage",
        "fewer-layers",
    ]);
    assert!(fewer.status.success(), "{}", stderr(&fewer));
    let report = String::from_utf8_lossy(&fewer.stdout);
    assert!(report.contains("of 4 asked for: VLs ran short"), "{report}");
}
