//! `cabling verify` on the Slim Fly q=5 fixtures (dumps of the real tools under ibsim, read
//! from the shared dumps beside the repository when present): the exact technician text, the
//! punch lists, exit statuses and errors; and on the project's own generated plan and dump.

use crate::common::shared_fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shared_fixtures::shared_fixture;

/// A file of the shared Slim Fly q = 5 dumps, or `None` (skip line printed) when missing.
fn fixture(name: &str) -> Option<PathBuf> {
    shared_fixture(&format!("ibsim-generated/slimfly-q5/{name}"))
}

fn cabling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

/// `cabling verify` of the shared plan against the shared dump `dump`, or `None` (skip line
/// printed) when either is missing.
fn verify(dump: &str, extra: &[&str]) -> Option<Output> {
    let plan = fixture("slimfly_q5_plan.csv")?;
    let dump = fixture(dump)?;
    let mut args = vec![
        "verify",
        "--plan",
        plan.to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Some(cabling(&args))
}

/// The project's own Slim Fly q = 5, written into `dir`: the plan `cabling plan` makes
/// (`plan.csv`) and the `ibnetdiscover` dump of the fabric as built (`fabric.topo`), which
/// match cable for cable.
fn generated(dir: &Path) -> (PathBuf, PathBuf) {
    let out = cabling(&["plan", "slimfly", "--q", "5", "--format", "csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = dir.join("plan.csv");
    std::fs::write(&plan, &out.stdout).unwrap();
    let fabric = "slimfly:q=5"
        .parse::<ibfabric::topology::TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    let dump = dir.join("fabric.topo");
    std::fs::write(&dump, ibfabric::io::ibnetdiscover::write(&fabric)).unwrap();
    (plan, dump)
}

/// `cabling verify` of the generated plan against the generated dump (see [`generated`]).
fn verify_generated(extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (plan, dump) = generated(dir.path());
    let mut args = vec![
        "verify",
        "--plan",
        plan.to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    cabling(&args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const FAULTY_TEXT: &str = "\
cabling verify: plan slimfly_q5_plan (250 devices, 375 cables) against 250 nodes and 374 cables
devices: 250 of 250 bound (250 by node-name-map); 0 not seen, 0 unexpected
cables: 368 ok, 1 degraded, 5 miswired, 1 missing, 0 down, 0 not yet verifiable; 0 unexpected

6 actions:

R01
  move cable SF-0185 from R01 U38 sw0-0-2 port 12 to port 2 [SF-0185 R01-U38-sw0-0-2-P2 to R01-sfn010-P1]
  move cable SF-0093 from R01 U35 sw1-0-0 port 14 to port 10 [SF-0093 R04-U40-sw0-3-0-P7 to R01-U35-sw1-0-0-P10]

R02
  swap the cables in R02 U38 sw0-1-2 ports 7 and 8 [SF-0045 R02-U38-sw0-1-2-P7 to R01-U33-sw1-0-2-P8; SF-0046 R02-U38-sw0-1-2-P8 to R02-U34-sw1-1-1-P8]

R03
  reseat or replace cable SF-0077 between R03 U38 sw0-2-2 port 9 and R03 U32 sw1-2-3 port 9 (1x instead of 4x; possible cause: cable not fully seated) [SF-0077 R03-U38-sw0-2-2-P9 to R03-U32-sw1-2-3-P9]

R04
  plug a cable SF-0169 between R04 U34 sw1-3-1 port 6 and R04 U32 sw1-3-3 port 5 [SF-0169 R04-U34-sw1-3-1-P6 to R04-U32-sw1-3-3-P5]

R05
  move cable SF-0195 from R05 U36 sw0-4-4 port 13 to R01 U36 sw0-0-4 port 4 [SF-0195 R01-U36-sw0-0-4-P4 to R01-sfn020-P1]

progress (cables verified / expected):
  R01  91/95
  R02  93/95
  R03  94/95
  R04  93/95
  R05  95/95
  all  368/375
";

#[test]
fn the_faulty_fixture_reads_as_six_actions_for_its_six_faults() {
    let Some(map) = fixture("node-name-map.txt") else {
        return;
    };
    let Some(out) = verify(
        "faulty.ibnetdiscover.topo",
        &["--node-name-map", map.to_str().unwrap()],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), FAULTY_TEXT);
    // By descriptions alone the same actions; iblinkinfo adds that the missing cable's ports
    // are dark.
    let Some(links) = fixture("faulty.iblinkinfo.txt") else {
        return;
    };
    let Some(out) = verify(
        "faulty.ibnetdiscover.topo",
        &["--iblinkinfo", links.to_str().unwrap()],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("(250 by description)"), "{text}");
    assert!(text.contains(
        "plug a cable SF-0169 between R04 U34 sw1-3-1 port 6 and R04 U32 sw1-3-3 port 5 (no link, port Polling: if a cable is plugged in, reseat or replace it)"
    ));
    let strip = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with("  ") && !l.contains("plug a cable"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&text), strip(FAULTY_TEXT));
}

#[test]
fn the_clean_fixture_exits_0_and_the_partial_one_lists_what_is_left_to_cable() {
    let Some(links) = fixture("clean.iblinkinfo.txt") else {
        return;
    };
    let Some(out) = verify(
        "clean.ibnetdiscover.topo",
        &["--iblinkinfo", links.to_str().unwrap()],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("\nno actions: the fabric is cabled as planned\n"));

    let Some(out) = verify("partial.ibnetdiscover.topo", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("\n80 actions:\n"), "{text}");
    assert!(text.contains("not yet verifiable (neither device seen), cables per rack: R05 55"));
    assert!(
        text.contains("  R05: 50 of 50 devices: sw0-4-0, "),
        "{text}"
    );
    assert!(text.contains("  R05  0/95 (55 not yet verifiable)\n"));
}

#[test]
fn punch_lists_come_as_csv_and_json() {
    let Some(out) = verify("faulty.ibnetdiscover.topo", &["--format", "csv"]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let csv = stdout(&out);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "rack,u,device,port,action,cables,instruction");
    assert_eq!(lines.len(), 7);
    assert!(lines[3].starts_with(
        "R02,38,sw0-1-2,7,swap,SF-0045 SF-0046,swap the cables in R02 U38 sw0-1-2 ports 7 and 8 ["
    ), "{}", lines[3]);
    let Some(out) = verify("faulty.ibnetdiscover.topo", &["--format", "json"]) else {
        return;
    };
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["counts"]["miswired"], 5);
    assert_eq!(doc["actions"][2]["action"], "swap");
    assert_eq!(doc["actions"][2]["steps"].as_array().unwrap().len(), 4);
    assert_eq!(doc["findings"].as_array().unwrap().len(), 7);
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, dump) = generated(dir.path());
    let not_a_dump = dir.path().join("faults.txt");
    std::fs::write(&not_a_dump, "F1: swapped pair on sw0-1-2 ports 7 and 8\n").unwrap();
    let out = cabling(&[
        "verify",
        "--plan",
        plan.to_str().unwrap(),
        "--ibnetdiscover",
        not_a_dump.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("faults.txt: no node found"),
        "{}",
        stderr(&out)
    );

    let out = verify_generated(&["--iblinkinfo", "/nonexistent/links"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("reading /nonexistent/links"),
        "{}",
        stderr(&out)
    );

    let bad_plan = dir.path().join("bad-plan.csv");
    std::fs::write(&bad_plan, "a_device,a_port,b_device,b_port\ns1,x,s2,1\n").unwrap();
    let out = cabling(&[
        "verify",
        "--plan",
        bad_plan.to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad-plan.csv: line 2: a_port \"x\" is not a port number"),
        "{}",
        stderr(&out)
    );

    let out = cabling(&["verify", "--plan", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "--ibnetdiscover is required");
}

#[test]
fn the_generated_plan_and_the_fabric_it_describes_verify_clean() {
    let out = verify_generated(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("\nno actions: the fabric is cabled as planned\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_plan_without_extension_is_recognised_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let (generated_plan, dump) = generated(dir.path());
    let plan = dir.path().join("cable-list");
    std::fs::rename(generated_plan, &plan).unwrap();
    let out = cabling(&[
        "verify",
        "--plan",
        plan.to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A refusal: exit 2, one line on stderr containing `reason`, nothing on stdout.
fn assert_refused(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stdout(out));
    assert_eq!(stdout(out), "", "no action list");
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(reason), "{err}");
}

#[test]
fn a_plan_cut_inside_a_quoted_field_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let (full, dump) = generated(dir.path());
    let text = std::fs::read_to_string(&full).unwrap();
    // Cut inside the quoted step name of the first cable (line 2).
    let cut = text.find(",\"").unwrap() + 5;
    assert_eq!(text[..cut].lines().count(), 2);
    let plan = dir.path().join("cut.csv");
    std::fs::write(&plan, &text[..cut]).unwrap();
    let out = cabling(&[
        "verify",
        "--plan",
        plan.to_str().unwrap(),
        "--ibnetdiscover",
        dump.to_str().unwrap(),
    ]);
    assert_refused(
        &out,
        "cut.csv: line 2: a quoted field opens here and is never closed",
    );
}

#[test]
fn a_dump_of_another_site_is_refused_before_any_action() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, _) = generated(dir.path());
    for other in [
        "loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt",
        "nvidia-topograph_ndr-dgx-superpod_example.out",
    ] {
        let Some(dump) = shared_fixture(other) else {
            return;
        };
        let args = [
            "verify",
            "--plan",
            plan.to_str().unwrap(),
            "--ibnetdiscover",
            dump.to_str().unwrap(),
        ];
        let out = cabling(&args);
        assert_refused(
            &out,
            "the plan and the fabric do not belong together: 0 of ",
        );
        // Binding by cabling alone, when asked for, gives the old punch list and exit 1.
        let mut anyway = args.to_vec();
        anyway.extend(["--min-identified", "0"]);
        let out = cabling(&anyway);
        assert_eq!(out.status.code(), Some(1), "{other}: {}", stderr(&out));
        assert!(stdout(&out).contains("by cabling"), "{other}");
    }
}

#[test]
fn an_iblinkinfo_of_another_fabric_is_refused() {
    let Some(links) = shared_fixture("ibsim-generated/baseline/iblinkinfo.txt") else {
        return;
    };
    let out = verify_generated(&["--iblinkinfo", links.to_str().unwrap()]);
    assert_refused(
        &out,
        "iblinkinfo.txt: describes another fabric: 0 of its 13 nodes are in the ibnetdiscover dumps",
    );
}

#[test]
fn a_threshold_beyond_100_percent_is_a_usage_error() {
    let out = verify_generated(&["--min-identified", "101"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--min-identified"),
        "{}",
        stderr(&out)
    );
}
