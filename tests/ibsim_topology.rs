//! End to end on the real stack: a generated fabric, loaded into ibsim, is discovered by the
//! real `ibnetdiscover`, and reading that dump gives back exactly the generated switches, hosts
//! and cables (by GUID, description and port, and by name through a node-name-map).

use crate::common;

use common::Ibsim;
use common::fabrics::SMALL_FAT_TREE;
use ibfabric::io::{NodeNameMap, ibnetdiscover, ibsim};
use ibfabric::topology::TopologySpec;
use ibfabric::topology::compare::compare;

fn discover_and_compare(spec: &str) {
    let spec: TopologySpec = spec.parse().unwrap();
    let generated = spec.build().unwrap();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let dump = sim.run("ibnetdiscover", &[]);
    let names = NodeNameMap::from_fabric(&generated);
    let discovered = ibnetdiscover::parse(&dump, Some(&names)).unwrap();
    assert!(
        discovered.dangling.is_empty(),
        "{spec}: dangling cables {:?}",
        discovered.dangling
    );
    // Nodes by GUID with kind, description and port count; cables by GUID and port at both
    // ends, at the generated rate.
    let diff = compare(&generated, &discovered.fabric);
    assert!(
        diff.is_empty(),
        "{spec}: the discovered fabric differs:\n{diff}"
    );
    assert_eq!(discovered.fabric.summary(), generated.summary(), "{spec}");
    // Through the node-name-map, every node carries its generated name.
    for node in generated.nodes() {
        let found = discovered.fabric.node_by_guid(node.guid).unwrap();
        assert_eq!(discovered.fabric.node(found).name, node.name, "{spec}");
    }
}

#[test]
fn slimfly_q5_is_discovered_exactly_as_generated() {
    discover_and_compare("slimfly:q=5");
}

#[test]
fn mlfm_d3_is_discovered_exactly_as_generated() {
    discover_and_compare("mlfm:d=3");
}

#[test]
fn lsft_n3_is_discovered_exactly_as_generated() {
    discover_and_compare("lsft:n=3");
}

#[test]
fn polarfly_and_fat_tree_are_discovered_exactly_as_generated() {
    discover_and_compare("polarfly:q=5");
    discover_and_compare(SMALL_FAT_TREE);
}

#[test]
fn shortcut_and_circulant_networks_are_discovered_exactly_as_generated() {
    discover_and_compare("shortcut:nodes=32,degree=5,hosts=2,seed=1");
    discover_and_compare("circulant:nodes=16,hosts=1");
    discover_and_compare("circulant:nodes=12,jumps=1,2,6,hosts=1");
}
