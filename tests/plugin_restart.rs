//! The plugin across a restart of OpenSM, on the real stack (ibsim + stock OpenSM, LMC 2,
//! `qos TRUE`): the routing session saved in OpenSM's cache directory is settled again by the
//! restarted daemon, so a damaged Slim Fly keeps every entry its switches held, and cables
//! plugged back after the restart get the full routing's tables again; a standby OpenSM that
//! shares the cache directory takes over with the same tables. A saved file that cannot be
//! used is logged and the subnet routed as on a first start.

use crate::common;

use std::path::Path;

use common::plugin::{LAYERED_USED, MINHOP_USED, wait_settled, with_plugin};
use common::readback::ReadBack;
use common::{Ibsim, OpenSm, OpenSmOptions, STANDBY};
use ibfabric::io::ibsim;
use ibfabric::rng::Rng;

/// The saved session's file in OpenSM's cache directory.
const SAVED: &str = "layered-session.json";

/// The plugin's default configuration (`qos TRUE`), keeping its cache in `cache` when given
/// (a restart) and in the daemon's own scratch directory otherwise.
fn options(cache: Option<&Path>) -> OpenSmOptions {
    let mut options = with_plugin("qos TRUE\n", None, false);
    if let Some(cache) = cache {
        options
            .env
            .push(("OSM_CACHE_DIR".into(), cache.as_os_str().to_owned()));
    }
    options
}

#[test]
fn a_restart_after_lost_cables_changes_no_entry_and_plugging_back_restores_the_full_routing() {
    let generated = common::generated("slimfly:q=5");
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = OpenSm::start(&sim, &options(None));
    let routings = wait_settled(&sm, 0);
    let full = ReadBack::read(&sim, &sm);

    let cut = five_cables(&generated);
    let end = |p| common::console_port(&generated, p);
    for l in &cut {
        sim.console(&format!("Unlink {}", end(l.a)));
    }
    wait_settled(&sm, routings);
    let damaged = ReadBack::read(&sim, &sm);
    assert!(
        sm.log().contains("layered: repaired after losing"),
        "{}",
        sm.log()
    );
    let cache = sm.dump_dir().to_path_buf();
    assert!(cache.join(SAVED).exists(), "the session is saved");
    drop(sm);

    let sm = OpenSm::start(&sim, &options(Some(&cache)));
    let routings = wait_settled(&sm, 0);
    let log = sm.log();
    assert!(log.contains("routing session restored from"), "{log}");
    assert!(!log.contains(MINHOP_USED), "{log}");
    let restarted = ReadBack::read(&sim, &sm);
    assert_eq!(
        restarted.lids, damaged.lids,
        "OpenSM kept the LIDs (guid2lid)"
    );
    assert!(
        restarted.tables == damaged.tables,
        "the restarted daemon changed {} entries",
        common::readback::churn(&damaged, &restarted).0
    );
    assert_eq!(restarted.sl2vl, damaged.sl2vl);

    for l in &cut {
        sim.console(&format!("Link {} {}", end(l.a), end(l.b)));
    }
    wait_settled(&sm, routings);
    let back = ReadBack::read(&sim, &sm);
    assert!(
        back.tables == full.tables,
        "{} entries differ from the full routing's",
        common::readback::churn(&full, &back).0
    );
    assert_eq!(back.sl2vl, full.sl2vl);
}

/// The five switch-to-switch cables a test cuts (a seeded choice; a Slim Fly q = 5 stays
/// connected: its switch graph is 7-connected).
fn five_cables(fabric: &ibfabric::Fabric) -> Vec<&ibfabric::topology::Link> {
    let inter = common::switch_cables(fabric);
    let mut rng = Rng::new(34);
    let mut cut = Vec::new();
    while cut.len() < 5 {
        let l = inter[rng.below(inter.len() as u64) as usize];
        if !cut.contains(&l) {
            cut.push(l);
        }
    }
    cut
}

/// A daemon of an HA pair: attached to the simulator at host `host`, with SM priority
/// `priority`, polling the master every second (the default is 10 s, 4 times) so that a
/// standby takes over within seconds.
fn pair_member(cache: &Path, host: &str, priority: u8) -> OpenSmOptions {
    let mut options = with_plugin(
        &format!(
            "qos TRUE\nsm_priority {priority}\nsminfo_polling_timeout 1000\n\
             polling_retry_number 2\n"
        ),
        None,
        false,
    );
    options
        .env
        .push(("OSM_CACHE_DIR".into(), cache.as_os_str().to_owned()));
    options.env.push(("SIM_HOST".into(), host.into()));
    options
}

#[test]
fn a_standby_sharing_the_cache_directory_takes_over_without_changing_an_entry() {
    let generated = common::generated("slimfly:q=5");
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let cache = sim.dir().join("shared-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let hosts: Vec<String> = generated
        .hosts()
        .take(2)
        .map(|h| generated.node(h).name.clone())
        .collect();
    let master = OpenSm::start(&sim, &pair_member(&cache, &hosts[0], 15));
    let routings = wait_settled(&master, 0);
    let standby = OpenSm::start(
        &sim,
        &OpenSmOptions {
            ready: STANDBY,
            ..pair_member(&cache, &hosts[1], 1)
        },
    );
    let end = |p| common::console_port(&generated, p);
    for l in five_cables(&generated) {
        sim.console(&format!("Unlink {}", end(l.a)));
    }
    wait_settled(&master, routings);
    let damaged = ReadBack::read(&sim, &master);
    drop(master);

    wait_settled(&standby, 0);
    let log = standby.log();
    assert!(log.contains("Entering MASTER state"), "{log}");
    assert!(log.contains("routing session restored from"), "{log}");
    assert!(!log.contains(MINHOP_USED), "{log}");
    let taken_over = ReadBack::read(&sim, &standby);
    assert_eq!(taken_over.lids, damaged.lids);
    assert!(
        taken_over.tables == damaged.tables,
        "the standby changed {} entries",
        common::readback::churn(&damaged, &taken_over).0
    );
    assert_eq!(taken_over.sl2vl, damaged.sl2vl);
}

#[test]
fn a_corrupt_saved_session_is_logged_and_the_subnet_routed_afresh() {
    let generated = common::generated("slimfly:q=5");
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let cache = sim.dir().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join(SAVED),
        "{\"format\": \"osmlayered routing session\", \"vers",
    )
    .unwrap();
    let sm = OpenSm::start(&sim, &options(Some(&cache)));
    wait_settled(&sm, 0);
    let log = sm.log();
    assert!(log.contains("saved routing session ignored:"), "{log}");
    assert!(log.contains("layered: routed 50 switches"), "{log}");
    assert!(log.contains(LAYERED_USED), "{log}");
    let read = ReadBack::read(&sim, &sm);
    assert!(read.verify_every_sl().is_deadlock_free());
    // The routing just made replaced the corrupt file.
    let text = std::fs::read_to_string(cache.join(SAVED)).unwrap();
    assert!(
        text.starts_with("{\"format\":\"osmlayered routing session\""),
        "{text:.80}"
    );
}
