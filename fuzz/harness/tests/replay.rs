//! Replays every input the fuzzers keep for the core's readers through its target, as the
//! fuzzer ran it ([`fuzz_harness::replay`]); one test per target.

use std::path::Path;

use fuzz_harness::TARGETS;

fn replay(target: &str) {
    let read = TARGETS
        .iter()
        .find(|t| t.name == target)
        .expect("a target")
        .read;
    let (corpus, regressions) = fuzz_harness::replay(target, read);
    println!("{target}: {corpus} corpus inputs and {regressions} regressions read");
}

macro_rules! replayed {
    ($($target:ident),* $(,)?) => {
        $(#[test] fn $target() { replay(stringify!($target)); })*
        const REPLAYED: &[&str] = &[$(stringify!($target)),*];
    };
}

replayed!(
    ibnetdiscover,
    iblinkinfo,
    lfts,
    mfts,
    group_sls,
    sl2vl,
    path_sl,
    node_name_map,
    hostfile,
    plan,
    fabric_document,
    topology_spec,
    sweep_log,
    simgrid_result,
);

#[test]
fn every_target_is_replayed() {
    let targets: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    assert_eq!(targets, REPLAYED);
}

#[test]
fn every_target_has_a_libfuzzer_binary() {
    for target in TARGETS {
        let binary = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../libfuzzer/fuzz_targets")
            .join(format!("{}.rs", target.name));
        assert!(binary.is_file(), "no {}", binary.display());
    }
}
