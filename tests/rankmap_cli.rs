//! `ibfabric rankmap` as a job script runs it: hostfiles in rank order, the report, errors.

use crate::command::{ibfabric, stderr};
use std::process::Output;

const FABRIC: &str = "shortcut:nodes=96,degree=6,hosts=2,seed=4";

/// Every other switch's first host, in a scrambled order.
fn hosts() -> Vec<String> {
    (0..48).map(|i| format!("sc{}-h0", (i * 37) % 96)).collect()
}

fn run(dir: &std::path::Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let hosts_path = dir.join("hosts.txt");
    std::fs::write(&hosts_path, hosts().join("\n") + "\n").unwrap();
    let report = dir.join("report.json");
    let mut args = vec![
        "rankmap",
        "--fabric",
        FABRIC,
        "--hosts",
        hosts_path.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = ibfabric(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (out, report)
}

#[test]
fn hostfiles_list_every_host_once_in_rank_order_and_the_report_shows_the_gain() {
    let dir = tempfile::tempdir().unwrap();
    for collective in ["bcast", "allreduce", "alltoall"] {
        for mapping in ["ascending", "random", "tree", "ring"] {
            let (out, report) = run(
                dir.path(),
                &[
                    "--collective",
                    collective,
                    "--mapping",
                    mapping,
                    "--iterations",
                    "20000",
                ],
            );
            let text = String::from_utf8(out.stdout.clone()).unwrap();
            let mut listed: Vec<String> = text
                .lines()
                .map(|l| {
                    let (host, slots) = l.split_once(' ').unwrap();
                    assert_eq!(slots, "slots=1");
                    host.to_string()
                })
                .collect();
            listed.sort();
            let mut want = hosts();
            want.sort();
            assert_eq!(listed, want, "{collective} {mapping}");
            let before = report["objective_before"].as_u64().unwrap();
            let after = report["objective_after"].as_u64().unwrap();
            assert!(after <= before, "{collective} {mapping}: {report}");
            assert_eq!(report["iterations"].as_u64(), Some(20000));
            assert!(report["seconds"].as_f64().unwrap() >= 0.0);
            assert!(
                stderr(&out).contains(&format!("hops {before} -> {after}")),
                "{}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_hostfile_and_formats_agree() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--collective",
        "alltoall",
        "--mapping",
        "random",
        "--seed",
        "7",
    ];
    let (first, _) = run(dir.path(), &[&args[..], &["--format", "slurm"]].concat());
    let (second, _) = run(dir.path(), &[&args[..], &["--format", "slurm"]].concat());
    assert_eq!(first.stdout, second.stdout);
    let (plain, _) = run(dir.path(), &[&args[..], &["--format", "plain"]].concat());
    let slurm = String::from_utf8(first.stdout).unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    for (r, (s, p)) in slurm.lines().zip(plain.lines()).enumerate() {
        assert_eq!(p, format!("{r} {s}"));
    }
    assert_eq!(slurm.lines().count(), 48);
}

#[test]
fn contention_objective_reports_both_measures() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = run(
        dir.path(),
        &[
            "--collective",
            "bcast",
            "--objective",
            "contention",
            "--mapping",
            "random",
        ],
    );
    assert_eq!(report["objective"], "contention");
    assert_eq!(report["objective_before"], report["contention_before"]);
    assert!(report["contention_after"].as_u64() <= report["contention_before"].as_u64());
}

#[test]
fn tables_read_back_give_the_hops_of_the_routes_they_program() {
    let dir = tempfile::tempdir().unwrap();
    let lfts = dir.path().join("lfts.dump");
    let out = ibfabric(&[
        "route",
        "--fabric",
        FABRIC,
        "--layers",
        "1",
        "--algorithm",
        "minimal",
        "--lft-out",
        lfts.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let base = ["--collective", "allreduce", "--iterations", "0"];
    let (_, core) = run(dir.path(), &base);
    let (_, read_back) = run(
        dir.path(),
        &[&base[..], &["--lfts", lfts.to_str().unwrap()]].concat(),
    );
    // Both are minimal routings: every message crosses the distance of its hosts' switches.
    assert_eq!(core["objective_before"], read_back["objective_before"]);
    assert!(core["objective_before"].as_u64().unwrap() > 0);
}

#[test]
fn unknown_hosts_are_named_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.hosts");
    std::fs::write(&path, "sc0-h0\n# comment\nsc1-h0\nnode-x\n").unwrap();
    let out = ibfabric(&[
        "rankmap",
        "--fabric",
        FABRIC,
        "--hosts",
        path.to_str().unwrap(),
        "--collective",
        "bcast",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("job.hosts: line 4") && err.contains("\"node-x\""),
        "{err}"
    );
}

#[test]
fn output_files_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let hostfile = dir.path().join("ranks.hostfile");
    let (out, _) = run(
        dir.path(),
        &["--collective", "bcast", "-o", hostfile.to_str().unwrap()],
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&hostfile).unwrap().lines().count(),
        48
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| ["hosts.txt", "report.json", "ranks.hostfile"].contains(&n.as_str())),
        "{names:?}"
    );
}

#[test]
fn a_cabling_plan_is_the_same_fabric_as_its_spec() {
    use ibfabric::plan::build::{PlanOptions, plan_for};
    use ibfabric::plan::document::PlanDocument;
    let spec = "shortcut:nodes=32,degree=5,hosts=1,seed=1";
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(&spec.parse().unwrap(), &PlanOptions::default()).unwrap();
    let plan_path = dir.path().join("plan.yaml");
    let yaml = yaml_serde::to_string(&PlanDocument::from_plan(&plan)).unwrap();
    std::fs::write(&plan_path, yaml).unwrap();
    let hosts_path = dir.path().join("hosts.txt");
    let hosts: Vec<String> = (0..20).map(|i| format!("sc{}-h0", i * 3 % 32)).collect();
    std::fs::write(&hosts_path, hosts.join("\n")).unwrap();
    let hostfile = |fabric: &str| {
        let out = ibfabric(&[
            "rankmap",
            "--fabric",
            fabric,
            "--hosts",
            hosts_path.to_str().unwrap(),
            "--collective",
            "alltoall",
            "--mapping",
            "as-listed",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The objective before and after, without the time taken.
        let objective = stderr(&out).split(';').next().unwrap().to_string();
        (out.stdout, objective)
    };
    assert_eq!(hostfile(spec), hostfile(plan_path.to_str().unwrap()));
}
