//! Multicast in the deadlock proof on the real stack: stock OpenSM 3.3.23 routes a fabric in
//! ibsim with its own engines (`dfsssp`, `nue`; QoS on, so SL-to-VL tables are programmed),
//! every host joins the IPoIB broadcast group and two subsets create groups of their own
//! (SA MCMemberRecord joins through the test bed's `mcast-join`), and OpenSM builds the groups'
//! spanning trees. The multicast forwarding tables are read back twice — `ibroute -M` on every
//! switch and OpenSM's `opensm.mcfdbs` dump — and must parse to the same tables; every group
//! must reach exactly the ports that joined it; and the verifier runs on the unicast routes and
//! the groups together. Its verdicts are printed, not asserted: whether OpenSM's engines are
//! deadlock-free with multicast is what the verifier reports (BENCHMARKS.md), not a premise.
//!
//! Unicast packets are taken on SL 0 (clients that never ask the SA for a path SL) and each
//! group on the SL the SA answered for it; then everything on every SL.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::mcast::{Creation, IPOIB_BROADCAST, host_port_guids, join};
use common::readback::ReadBack;
use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::analysis::multicast::analyze_groups;
use ibfabric::deadlock::verify::{Multicast, verify_with_multicast};
use ibfabric::deadlock::{DefaultSl, RouteSls, Verdict, VerifyOptions, verify};
use ibfabric::io::ibsim;
use ibfabric::topology::PortRef;

/// Two groups of the hosts' own (not IPoIB-signed, so they may have an SL of their own).
const PARTIAL_GROUPS: [&str; 2] = ["ff12:e001::1", "ff12:e001::2"];

/// What one case found.
struct Verdicts {
    unicast: Verdict,
    with_multicast: Verdict,
    every_sl: Verdict,
}

/// Routes `spec` with OpenSM's `engine`, joins the groups, reads everything back, checks
/// delivery and runs the verifier.
fn run_case(spec: &str, engine: &str) -> Verdicts {
    let sim = Ibsim::start(&ibsim::write_net(&common::generated(spec)));
    let mut options = OpenSmOptions::new(engine, 0);
    options.once = false; // the SA must answer the joins
    options.extra_args = vec!["-Q".into()];
    options.config = Some("force_log_flush TRUE\n".into());
    options.up_within = Duration::from_secs(300);
    let sm = OpenSm::start(&sim, &options);
    let back = ReadBack::read(&sim, &sm);
    let fabric = &back.fabric;
    let hosts = host_port_guids(fabric);
    let port_of: BTreeMap<u64, PortRef> = fabric
        .hosts()
        .map(|h| PortRef { node: h, port: 1 })
        .map(|p| (fabric.node(p.node).ports[1].guid.0, p))
        .collect();

    // The broadcast group from every host; a third and every fifth host in two more.
    let third: Vec<u64> = hosts[..hosts.len() / 3].to_vec();
    let fifth: Vec<u64> = hosts.iter().copied().step_by(5).collect();
    let mut members: BTreeMap<u16, Vec<PortRef>> = BTreeMap::new();
    let mut group_sls: BTreeMap<u16, u8> = BTreeMap::new();
    let mut joined = Vec::new();
    for (mgid, guids, creation) in [
        (IPOIB_BROADCAST, &hosts, Creation::Existing),
        (PARTIAL_GROUPS[0], &third, Creation::CreateWithSl(0)),
        (PARTIAL_GROUPS[1], &fifth, Creation::CreateWithSl(1)),
    ] {
        let group = join(&sim, mgid, guids, creation);
        let mut ports: Vec<PortRef> = guids.iter().map(|g| port_of[g]).collect();
        ports.sort_unstable();
        members.insert(group.mlid, ports);
        group_sls.insert(group.mlid, group.sl);
        joined.push(group);
    }
    let mlids: Vec<u16> = joined.iter().map(|g| g.mlid).collect();
    let (tables, _) = back.read_mfts(&sim, &sm, &mlids);

    // Every group reaches exactly the ports that joined it, from each of them.
    let delivery = analyze_groups(fabric, &tables, &members);
    for g in &delivery.groups {
        assert!(
            members.contains_key(&g.mlid),
            "MLID 0x{:04x} is in the tables but was not joined",
            g.mlid
        );
        assert!(g.delivers, "{engine} on {spec}: {delivery}");
    }
    for (mlid, ports) in &members {
        // The entries' host ports are the members too.
        assert_eq!(&tables.members(fabric, *mlid), ports, "MLID 0x{mlid:04x}");
    }
    println!("{engine} on {spec}:\n{delivery}");

    let multicast = Multicast {
        tables: &tables,
        sls: &group_sls,
        default_sl: 0,
    };
    let options = VerifyOptions::default();
    let (lids, lfts, sl2vl) = (&back.lids, &back.tables, &back.sl2vl);
    let unicast = verify(fabric, lids, lfts, &DefaultSl(0), sl2vl, &options);
    let with_multicast = verify_with_multicast(
        fabric,
        lids,
        lfts,
        &DefaultSl(0),
        sl2vl,
        &multicast,
        &options,
    );
    let every = VerifyOptions {
        sls: RouteSls::EverySl,
        ..options
    };
    let every_sl =
        verify_with_multicast(fabric, lids, lfts, &DefaultSl(0), sl2vl, &multicast, &every);

    // The verifier ran on the tables read back: every route, every group.
    let endpoints: usize = fabric.hosts().count() + fabric.switches().count();
    for v in [&unicast, &with_multicast, &every_sl] {
        assert_eq!(v.sources, endpoints, "{v}");
        assert_eq!(v.broken.count, 0, "{v}");
    }
    for v in [&with_multicast, &every_sl] {
        let m = v.multicast.expect("the groups were checked");
        assert_eq!((m.groups, m.entries), (3, tables.len()), "{v}");
    }
    assert!(with_multicast.dependencies >= unicast.dependencies);
    println!(
        "{engine} on {spec}, unicast on SL 0:\n{unicast}\n\
         {engine} on {spec}, unicast on SL 0 + groups on their SLs {group_sls:?}:\n{with_multicast}\n\
         {engine} on {spec}, unicast + groups on every SL:\n{every_sl}"
    );
    Verdicts {
        unicast,
        with_multicast,
        every_sl,
    }
}

/// One line for BENCHMARKS.md: each verdict, with the channels in cyclic components and
/// whether the first cycle takes a dependency only a group makes.
fn summary(spec: &str, engine: &str, v: &Verdicts) -> String {
    let word = |v: &Verdict| {
        if v.is_deadlock_free() {
            return "deadlock-free".to_string();
        }
        let channels: usize = v.cyclic_components.iter().map(|c| c.channels).sum();
        let through_group = v.cycle.as_ref().is_some_and(|c| {
            c.channels
                .iter()
                .any(|ch| !ch.groups.is_empty() && ch.routes == 0)
        });
        format!(
            "cyclic: {} component{}, {channels} channels{}",
            v.cyclic_components.len(),
            if v.cyclic_components.len() == 1 {
                ""
            } else {
                "s"
            },
            if through_group {
                "; the cycle shown needs a group"
            } else {
                ""
            }
        )
    };
    let added = |v: &Verdict| v.multicast.map_or(0, |m| m.dependencies);
    format!(
        "| {spec} | {engine} | {} | {}; groups add {} dependencies | {}; groups add {} dependencies |",
        word(&v.unicast),
        word(&v.with_multicast),
        added(&v.with_multicast),
        word(&v.every_sl),
        added(&v.every_sl)
    )
}

macro_rules! cases {
    ($($name:ident $spec:literal $engine:literal $($ignore:ident)?,)*) => {$(
        #[test]
        $(#[$ignore])?
        fn $name() {
            let v = run_case($spec, $engine);
            println!("{}", summary($spec, $engine, &v));
        }
    )*};
}

cases! {
    slimfly_q5_dfsssp "slimfly:q=5" "dfsssp",
    slimfly_q5_nue "slimfly:q=5" "nue",
    mlfm_d3_dfsssp "mlfm:d=3" "dfsssp",
    mlfm_d3_nue "mlfm:d=3" "nue",
    slimfly_q7_dfsssp "slimfly:q=7" "dfsssp" ignore,
    slimfly_q7_nue "slimfly:q=7" "nue" ignore,
}
