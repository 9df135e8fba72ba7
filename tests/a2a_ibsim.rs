//! The Latin-square schedules on tables read back from a simulated fabric: the LSFT n = 2
//! (21 servers) is loaded into ibsim, OpenSM (minhop) programs the switches, and the checker
//! walks OpenSM's `opensm-lfts.dump` on the fabric `ibnetdiscover` finds.

use crate::common;

use common::{Ibsim, OpenSm, OpenSmOptions};
use ibfabric::collectives::{self, check};
use ibfabric::io::{ibnetdiscover, ibsim, lfts};
use ibfabric::routing::LidTable;
use ibfabric::topology::Construction;
use ibfabric::topology::lsft::Lsft;

#[test]
fn lsft_schedules_are_congestion_free_on_tables_read_back_from_ibsim() {
    let generated = Lsft::new(2).unwrap().build();
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    let sm = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 0));
    // Names by GUID from the generated fabric (as a site's node-name-map would give them).
    let names = ibfabric::io::NodeNameMap::from_fabric(&generated);
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), Some(&names))
        .unwrap()
        .fabric;
    let dump = std::fs::read_to_string(sm.lfts_dump_path()).expect("opensm-lfts.dump");
    let dump = lfts::parse(&dump, &fabric).unwrap();
    assert_eq!(dump.switches, 14);
    let lids = LidTable::from_fabric(&fabric).unwrap();
    for schedule in [
        collectives::lsft_full(2).unwrap(),
        collectives::lsft_partial(2, 2, 2).unwrap(),
        collectives::lsft_partial(2, 2, 3).unwrap(),
    ] {
        let report = check(&fabric, &lids, &dump.tables, &schedule).unwrap();
        assert_eq!(report.throughput_ratio, 1.0, "{}", schedule.name);
    }
    // The shift baseline on the same tables is congested.
    let ranks = generated
        .hosts()
        .map(|h| generated.node(h).name.clone())
        .collect();
    let report = check(&fabric, &lids, &dump.tables, &collectives::shift(ranks)).unwrap();
    assert!(report.throughput_ratio < 1.0);
}

#[test]
fn the_mlfm_layer_layout_programmed_by_opensm_is_congestion_free_when_read_back() {
    use ibfabric::collectives::{MlfmSpine, mlfm_layer_tables};
    use ibfabric::topology::mlfm::Mlfm;
    // MLFM d = 3 (36 servers), the whole machine: n = 3, ℓ = 4, m = 3 needs 3 layers (LMC 2).
    let mlfm = Mlfm::new(3).unwrap();
    let generated = mlfm.build();
    let names = ibfabric::io::NodeNameMap::from_fabric(&generated);
    let sim = Ibsim::start(&ibsim::write_net(&generated));
    // A first sweep assigns the LIDs (LMC 2) ...
    let first = OpenSm::start(&sim, &OpenSmOptions::new("minhop", 2));
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), Some(&names))
        .unwrap()
        .fabric;
    let lids = LidTable::from_fabric(&fabric).unwrap();
    let schedule = collectives::mlfm(3, 3, 4, 3, MlfmSpine::BySource).unwrap();
    let layout = mlfm_layer_tables(&mlfm, &fabric, &lids, 4, MlfmSpine::BySource);
    assert_eq!(
        check(&fabric, &lids, &layout, &schedule)
            .unwrap()
            .throughput_ratio,
        1.0
    );
    // ... minhop's own tables do not realise the source-chosen spines ...
    let minhop = std::fs::read_to_string(first.lfts_dump_path()).unwrap();
    let minhop = lfts::parse(&minhop, &fabric).unwrap();
    assert!(
        check(&fabric, &lids, &minhop.tables, &schedule)
            .unwrap()
            .throughput_ratio
            < 1.0
    );
    // ... then OpenSM's file engine programs the layer layout on the same LIDs, and the
    // tables it dumps (what the switches hold) are congestion-free for the schedule.
    let file = sim.dir().join("layout.lft");
    std::fs::write(&file, lfts::write_ibroute(&fabric, &lids, &layout)).unwrap();
    let mut options = OpenSmOptions::new("file", 2);
    options.extra_args = vec!["-U".into(), file.to_str().unwrap().into()];
    let second = OpenSm::start(&sim, &options);
    let again = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), Some(&names))
        .unwrap()
        .fabric;
    let lids_again = LidTable::from_fabric(&again).unwrap();
    assert_eq!(lids_again, lids, "OpenSM kept the LIDs");
    let dump = std::fs::read_to_string(second.lfts_dump_path()).unwrap();
    let dump = lfts::parse(&dump, &again).unwrap();
    let report = check(&again, &lids_again, &dump.tables, &schedule).unwrap();
    assert_eq!(report.throughput_ratio, 1.0, "{:?}", report.worst_link);
}
