//! A plan's fabric, loaded into ibsim from the plan's own net file, is discovered by the real
//! `ibnetdiscover` with exactly the plan's cables, by device name through the plan's
//! node-name-map.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use common::Ibsim;
use ibfabric::io::{NodeNameMap, ibnetdiscover};
use ibfabric::plan::document::PlanDocument;

type NamedCable = [(String, u8); 2];

fn cabling(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling");
    assert!(
        out.status.success(),
        "cabling {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn plan_round_trip(kind: &str, params: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let mut args = vec!["plan", kind];
    args.extend_from_slice(params);
    args.extend_from_slice(&["--out-dir", out_dir]);
    cabling(&args);
    let read = |file: &str| std::fs::read_to_string(dir.path().join(file)).unwrap();
    let doc: PlanDocument = yaml_serde::from_str(&read("plan.yaml")).unwrap();
    let planned: BTreeSet<NamedCable> = doc
        .cables
        .iter()
        .map(|c| {
            let mut pair = [(c.a.clone(), c.a_port), (c.b.clone(), c.b_port)];
            pair.sort();
            pair
        })
        .collect();
    assert_eq!(planned.len(), doc.cables.len());

    let sim = Ibsim::start(&read("fabric.net"));
    let dump = sim.run("ibnetdiscover", &[]);
    let names = NodeNameMap::parse(&read("node-name-map")).unwrap();
    let discovered = ibnetdiscover::parse(&dump, Some(&names)).unwrap();
    assert!(discovered.dangling.is_empty());
    let fabric = &discovered.fabric;
    let found: BTreeSet<NamedCable> = fabric
        .links()
        .iter()
        .map(|l| {
            let end = |e: ibfabric::topology::PortRef| (fabric.node(e.node).name.clone(), e.port);
            let mut pair = [end(l.a), end(l.b)];
            pair.sort();
            pair
        })
        .collect();
    let missing: Vec<_> = planned.difference(&found).take(5).collect();
    let extra: Vec<_> = found.difference(&planned).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{kind}: missing {missing:?}, unexpected {extra:?}"
    );
    assert_eq!(
        fabric.nodes().len(),
        doc.devices.len(),
        "{kind}: every device discovered"
    );
}

#[test]
fn slimfly_q5_plan_is_what_the_simulated_fabric_holds() {
    plan_round_trip("slimfly", &["--q", "5"]);
}

#[test]
fn slimfly_q7_plan_is_what_the_simulated_fabric_holds() {
    plan_round_trip("slimfly", &["--q", "7"]);
}

#[test]
fn mlfm_and_lsft_plans_are_what_the_simulated_fabric_holds() {
    plan_round_trip("mlfm", &["--d", "3"]);
    plan_round_trip("lsft", &["--n", "3"]);
}
