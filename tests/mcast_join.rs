//! The test bed's multicast joins against stock OpenSM under ibsim: hosts join the IPoIB
//! broadcast group and create a group of their own through SA MCMemberRecord requests, the SA
//! lists them, OpenSM programs the groups into the switches' multicast forwarding tables, and a
//! leave takes a member out again.

use crate::common;

use std::time::{Duration, Instant};

use common::mcast::{Creation, IPOIB_BROADCAST, host_port_guids, join, leave, members};
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::io::{ibnetdiscover, ibsim};
use ibfabric::topology::{NodeKind, TopologySpec};

/// A group of the hosts' own (not IPoIB-signed, so it may have an SL of its own).
const PARTIAL_GROUP: &str = "ff12:e001::1";

fn small_fat_tree() -> Ibsim {
    let spec: TopologySpec = "fattree:leaves=4,spines=2,links-per-pair=1,hosts-per-leaf=2"
        .parse()
        .unwrap();
    Ibsim::start(&ibsim::write_net(&spec.build().unwrap()))
}

fn daemon(sim: &Ibsim) -> OpenSm {
    let mut options = OpenSmOptions::new("minhop", 0);
    options.once = false; // the SA must answer the joins
    // Flush the log after every message: the daemon's SUBNET UP line would sit in a buffer.
    options.config = Some("force_log_flush TRUE\n".into());
    OpenSm::start(sim, &options)
}

/// Every switch LID's `ibroute -M` output, concatenated.
fn multicast_tables(sim: &Ibsim, switch_lids: &[u16]) -> String {
    switch_lids
        .iter()
        .map(|lid| sim.run("ibroute", &["-M", &lid.to_string()]))
        .collect()
}

fn until<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "not within 30 s: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn hosts_join_the_ipoib_broadcast_group_and_a_group_they_create_then_one_leaves() {
    let sim = small_fat_tree();
    let _sm = daemon(&sim);
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .expect("ibnetdiscover output")
        .fabric;
    let hosts = host_port_guids(&fabric);
    assert_eq!(hosts.len(), 8);
    let switch_lids: Vec<u16> = fabric
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .map(|n| n.lid())
        .collect();

    let broadcast = join(&sim, IPOIB_BROADCAST, &hosts, Creation::Existing);
    let partial = join(&sim, PARTIAL_GROUP, &hosts[..3], Creation::CreateWithSl(2));
    assert_ne!(broadcast.mlid, partial.mlid);
    assert!(
        broadcast.mlid >= 0xc000 && partial.mlid >= 0xc000,
        "{broadcast:?} {partial:?}"
    );
    assert_eq!(partial.sl, 2);
    assert_eq!(members(&sim, IPOIB_BROADCAST, &hosts), hosts);
    assert_eq!(members(&sim, PARTIAL_GROUP, &hosts), hosts[..3]);

    // The SM programs the trees after the joins: both MLIDs appear in the switches' tables.
    for mlid in [broadcast.mlid, partial.mlid] {
        until(&format!("MLID 0x{mlid:04x} in an MFT"), || {
            multicast_tables(&sim, &switch_lids)
                .to_lowercase()
                .contains(&format!("0x{mlid:04x}"))
                .then_some(())
        });
    }

    leave(&sim, PARTIAL_GROUP, &hosts[..1]);
    assert_eq!(members(&sim, PARTIAL_GROUP, &hosts), hosts[1..3]);
    assert_eq!(members(&sim, IPOIB_BROADCAST, &hosts), hosts);
}
#[test]
fn a_join_of_a_port_the_sm_does_not_know_is_refused_with_the_sa_status() {
    let sim = small_fat_tree();
    let _sm = daemon(&sim);
    let out = sim
        .command(common::mcast::mcast_join_bin().to_str().unwrap())
        .args(["join", "--mgid", IPOIB_BROADCAST, "0x00000000deadbeef"])
        .output()
        .expect("run mcast-join");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ERR_REQ_INVALID"), "{stderr}");
}
