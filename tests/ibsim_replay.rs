//! Real fabrics replayed in the simulator: an ibsim net file written from a real
//! `ibnetdiscover` dump loads into ibsim, and the real `ibnetdiscover` then finds the same
//! nodes, cables and link rates as the original dump.

use crate::common;

use common::Ibsim;
use common::shared_fixtures::shared_text;
use ibfabric::io::{ibnetdiscover, ibsim};
use ibfabric::topology::compare::compare;

/// Replays the shared dump `fixture` (skipped, with a line on stderr, when it is missing).
fn replay(fixture: &str) {
    let Some(text) = shared_text(fixture) else {
        return;
    };
    let original = ibnetdiscover::parse(&text, None).unwrap().fabric;
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
fn loopback_cables_and_mixed_speeds_replay_exactly() {
    replay("jabl-ibtopotool_mixed-speed-loopback_3.topo");
}

#[test]
fn a_degraded_link_and_two_port_hcas_replay_exactly() {
    // The example of `man ibnetdiscover`: a 1xSDR link, HCAs with both ports cabled.
    replay("jabl-ibtopotool_manpage-voltaire_1.topo");
}

#[test]
fn routers_and_dual_port_hosts_replay_exactly() {
    replay("ibsim-generated/baseline/ibnetdiscover.topo");
}
