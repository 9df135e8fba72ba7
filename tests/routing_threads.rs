//! The routing on any number of threads: `ibfabric --threads N route` writes the same
//! forwarding, path-SL and SL-to-VL tables for 1, 2 and 4 threads, on a fabric of each kind
//! and deadlock scheme the regression cases cover.

use crate::command::{ibfabric, stderr};
use std::path::Path;

/// The tables `ibfabric route` writes for `args` on `threads` threads, read back.
fn tables(dir: &Path, threads: usize, args: &[&str]) -> [Vec<u8>; 3] {
    let files = ["lft", "path-sl", "sl2vl"].map(|name| dir.join(format!("{name}.{threads}")));
    let threads = threads.to_string();
    let mut argv = vec!["--threads", &threads, "route", "-q", "--no-prefix"];
    argv.extend_from_slice(args);
    let paths = files.clone().map(|f| f.to_string_lossy().into_owned());
    argv.extend([
        "--lft-out",
        &paths[0],
        "--path-sl-out",
        &paths[1],
        "--sl2vl-out",
        &paths[2],
    ]);
    let out = ibfabric(&argv);
    assert!(out.status.success(), "{argv:?}: {}", stderr(&out));
    files.map(|f| std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
}

/// Routes `args` on 1, 2 and 4 threads and asserts the tables are byte-identical.
fn same_tables_on_any_threads(args: &[&str]) {
    let dir = tempfile::tempdir().expect("scratch directory");
    let one = tables(dir.path(), 1, args);
    assert!(!one[0].is_empty(), "{args:?}: no forwarding tables written");
    for threads in [2, 4] {
        let many = tables(dir.path(), threads, args);
        for (what, (a, b)) in ["forwarding", "path-SL", "SL-to-VL"]
            .iter()
            .zip(one.iter().zip(&many))
        {
            assert!(
                a == b,
                "{args:?}: {what} tables differ on {threads} threads"
            );
        }
    }
}

/// `ibfabric route --fabric FABRIC --layers LAYERS --deadlock DEADLOCK` on 1, 2 and 4 threads.
fn same_tables_for(fabric: &str, layers: &str, deadlock: &str) {
    same_tables_on_any_threads(&[
        "--fabric",
        fabric,
        "--layers",
        layers,
        "--deadlock",
        deadlock,
    ]);
}

#[test]
fn slim_fly_q7_four_layers_by_port_pair() {
    same_tables_for("slimfly:q=7", "4", "port-pair");
}

#[test]
fn slim_fly_q5_four_layers_auto() {
    same_tables_for("slimfly:q=5", "4", "auto");
}

#[test]
fn slim_fly_q5_two_layers_dfsssp() {
    same_tables_for("slimfly:q=5", "2", "dfsssp");
}

#[test]
fn slim_fly_q5_two_layers_colouring() {
    same_tables_for("slimfly:q=5", "2", "colouring");
}

#[test]
fn mlfm_d4_two_layers() {
    same_tables_for("mlfm:d=4", "2", "auto");
}

#[test]
fn fat_tree_with_parallel_cables() {
    same_tables_for(
        "fattree:leaves=6,spines=3,links-per-pair=2,hosts-per-leaf=4",
        "2",
        "auto",
    );
}

#[test]
fn random_regular_fabric_any_turns() {
    same_tables_for("random:switches=30,degree=5,hosts=2,seed=4", "4", "dfsssp");
}
