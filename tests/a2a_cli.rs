//! `ibfabric a2a`: destination tables, the check on computed and on read-back tables, and the
//! refusal of inadmissible parameters.

use std::process::Command;

fn a2a(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .arg("a2a")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ratio(json: &str) -> f64 {
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    value["throughput_ratio"].as_f64().unwrap()
}

#[test]
fn mlfm_prints_destinations_with_lid_offsets_and_checks_congestion_free() {
    let (code, out, err) = a2a(&[
        "mlfm", "--d", "3", "--n", "3", "--l", "4", "--m", "2", "--check", "--format", "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(ratio(&out), 1.0);
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["phases"].as_array().unwrap().len(), 24);
    assert_eq!(value["layers"], 2);
    // Phase (s,t,u) = (1,0,0): server (0,0,1) (rank 1) sends to (1,0,1) (rank 9) on layer 1.
    let phase = &value["phases"][8];
    assert_eq!(phase["label"], "(s,t,u) = (1,0,0)");
    assert_eq!(phase["destination"][1], 9);
    assert_eq!(phase["lid_offset"][1], 1);
    let (code, out, _) = a2a(&["mlfm", "--d", "3", "--n", "2", "--l", "3", "--m", "2"]);
    assert_eq!(code, 0);
    assert!(out.contains("phase 0 (s,t,u) = (0,0,0)"), "{out}");
    assert!(out.contains("srv0-0-0 -> 0 srv0-0-0 +0"), "{out}");
    let (code, out, _) = a2a(&[
        "mlfm", "--d", "3", "--n", "2", "--l", "3", "--m", "2", "--format", "csv",
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("phase,label,rank,source,destination_rank,destination,lid_offset\n"));
    assert_eq!(out.lines().count(), 1 + 12 * 12);
}

#[test]
fn inadmissible_parameters_are_refused_saying_what_is_admissible() {
    let (code, _, err) = a2a(&["mlfm", "--d", "3", "--n", "2", "--l", "3", "--m", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("1 ≤ m ≤ ℓ − 1"), "{err}");
    let (code, _, err) = a2a(&["lsft", "--n", "5", "--k", "3", "--m", "4"]);
    assert_eq!(code, 2);
    assert!(err.contains("1 ≤ m ≤ k ≤ n"), "{err}");
    let (code, _, err) = a2a(&["lsft", "--n", "5", "--k", "4", "--m", "5", "--check"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = a2a(&["lsft", "--n", "6"]);
    assert_eq!(code, 2);
    assert!(err.contains("prime power"), "{err}");
    let (code, _, err) = a2a(&["lsft", "--n", "5", "--k", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("--k and --m"), "{err}");
}

#[test]
fn lsft_is_congestion_free_and_shift_is_not() {
    for args in [
        &["lsft", "--n", "3", "--check", "--format", "json"][..],
        &[
            "lsft", "--n", "5", "--k", "4", "--m", "3", "--check", "--format", "json",
        ],
    ] {
        let (code, out, err) = a2a(args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(ratio(&out), 1.0);
    }
    let (code, out, err) = a2a(&[
        "shift",
        "--topology",
        "lsft:n=3",
        "--check",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r = ratio(&out);
    assert!(r > 0.0 && r < 1.0, "{r}");
    let (code, out, err) = a2a(&[
        "shift",
        "--topology",
        "lsft:n=2",
        "--servers",
        "P-s0,P(1,1)-s2,P(0)-s1",
        "--check",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 ranks, 3 phases"), "{out}");
    let (code, _, err) = a2a(&["shift", "--topology", "lsft:n=2", "--servers", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--servers: no host \"nope\""), "{err}");
}

#[test]
fn the_check_reads_tables_back() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("mlfm.lft");
    let tables = tables.to_str().unwrap();
    let params = ["mlfm", "--d", "4", "--n", "4", "--l", "5", "--m", "4"];
    let (code, out, err) = a2a(&[
        &params[..],
        &["--check", "--format", "json", "--lft-out", tables],
    ]
    .concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(ratio(&out), 1.0);
    // The written layer layout, read back on the generated fabric (LIDs from the dump).
    let (code, out, err) = a2a(&[
        &params[..],
        &[
            "--check", "--format", "json", "--fabric", "mlfm:d=4", "--lfts", tables,
        ],
    ]
    .concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(ratio(&out), 1.0);
    // Minimal tables without the layout: the paper's source-chosen spines collide.
    let minimal = dir.path().join("minimal.lft");
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args([
            "route",
            "--fabric",
            "mlfm:d=4",
            "--algorithm",
            "minimal",
            "--layers",
            "4",
        ])
        .arg("--lft-out")
        .arg(&minimal)
        .output()
        .unwrap();
    assert!(out.status.success());
    let (code, out, _) = a2a(&[
        &params[..],
        &[
            "--check", "--format", "json", "--fabric", "mlfm:d=4", "--lfts",
        ],
        &[minimal.to_str().unwrap()],
    ]
    .concat());
    assert_eq!(code, 1, "congested: exit 1");
    assert!(ratio(&out) < 1.0);
}
