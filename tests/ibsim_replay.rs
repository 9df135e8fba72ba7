//! Real fabrics replayed in the simulator: an ibsim net file written from a real
//! `ibnetdiscover` dump loads into ibsim, and the real `ibnetdiscover` then finds the same
//! nodes, cables and link rates as the original dump.

mod common;

use common::Ibsim;
use ibfabric::io::{ibnetdiscover, ibsim};
use ibfabric::topology::compare::compare;

fn replay(fixture: &str) {
    let path = format!(
        "{}/../shared/fixtures/ibnetdiscover/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    let original = ibnetdiscover::parse(&std::fs::read_to_string(&path).unwrap(), None)
        .unwrap()
        .fabric;
    let sim = Ibsim::start(&ibsim::write_net(&original));
    let replayed = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .unwrap()
        .fabric;
    let diff = compare(&original, &replayed);
    assert!(
        diff.is_empty(),
        "{fixture}: the replayed fabric differs:\n{diff}"
    );
}

#[test]
fn a_real_fdr10_and_qdr_cluster_replays_exactly() {
    // 8 SX6036 switches, 144 hosts, FDR10 between switches, QDR to hosts, a dual-port HCA.
    replay("loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt");
}

#[test]
fn loopback_cables_mixed_speeds_and_degraded_links_replay_exactly() {
    replay("jabl-ibtopotool_mixed-speed-loopback_3.topo");
    replay("jabl-ibtopotool_manpage-voltaire_1.topo");
}

#[test]
fn routers_and_dual_port_hosts_replay_exactly() {
    replay("ibsim-generated/baseline/ibnetdiscover.topo");
}
