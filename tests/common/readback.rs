//! Reading back what OpenSM programmed into an ibsim fabric — forwarding tables, SL-to-VL
//! tables, the SLs the SA answers — and comparing it with what the core computes for the
//! same subnet.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

use ibfabric::Fabric;
use ibfabric::deadlock::{
    DeadlockFree, DefaultSl, Guarantee, PathSl, RouteSls, Scheme, Shortage, Sl2VlTables, Verdict,
    VerifyOptions, route_deadlock_free, verify,
};
use ibfabric::io::{ibnetdiscover, lfts, path_sl, sl2vl};
use ibfabric::rng::Rng;
use ibfabric::routing::graph::RoutingGraph;
use ibfabric::routing::{
    Algorithm, ForwardingTables, LidTable, MulticastTables, PathLengths, RoutingConfig,
};
use ibfabric::topology::{NodeId, PortRef};

use super::{Ibsim, OpenSm};

/// Path SLs asked by LID only: a routing computed on another copy of the fabric (other node
/// ids) can then be asked about this one.
pub struct ByLid<'a>(pub &'a dyn PathSl);

impl PathSl for ByLid<'_> {
    fn sl(&self, slid: u16, dlid: u16) -> u8 {
        self.0.sl(slid, dlid)
    }
}

/// The SLs the SA answers for a routing made deadlock-free as `expected`: the scheme's path
/// SLs, or OpenSM's own choice — SL 0 without a QoS policy — when any SL is safe (lanes by
/// port pair).
pub fn sa_sls(expected: &DeadlockFree) -> &dyn PathSl {
    match &expected.path_sls {
        Some(sls) => sls,
        None => &DefaultSl(0),
    }
}

/// What the plugin computes with its defaults (2^LMC = 4 layers, layered, seed 1) and the
/// deadlock `schemes` (8 VLs: ibsim's ports report VLCap VL0-7), for the canonical fabric of
/// the subnet it saw.
pub fn core_routing(canon: &Fabric, schemes: &[Scheme]) -> DeadlockFree {
    let lids = LidTable::from_fabric(canon).unwrap();
    let graph = RoutingGraph::new(canon);
    let routing = RoutingConfig {
        layers: 4,
        algorithm: Algorithm::Layered(PathLengths::default()),
        seed: 1,
        ..Default::default()
    };
    route_deadlock_free(canon, &lids, &graph, &routing, schemes, Shortage::Fail).unwrap()
}

/// The text of dump `name` of `sm`, once written.
pub fn wait_for_dump(sm: &OpenSm, name: &str) -> String {
    let path = sm.dump_dir().join(name);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(&path)
            && !text.is_empty()
        {
            // Written in one go after the sweep; give the writer a moment to finish.
            std::thread::sleep(Duration::from_millis(300));
            return std::fs::read_to_string(&path).unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "{name} not written:\n{}",
            sm.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// When dump `name` of `sm` was last written, if it exists.
pub fn dump_modified(sm: &OpenSm, name: &str) -> Option<SystemTime> {
    std::fs::metadata(sm.dump_dir().join(name))
        .and_then(|m| m.modified())
        .ok()
}

/// What the fabric holds.
pub struct ReadBack {
    /// The fabric as `ibnetdiscover` sees it, with OpenSM's LIDs.
    pub fabric: Fabric,
    /// Its LIDs.
    pub lids: LidTable,
    /// Forwarding tables: from `ibroute` of every switch ([`Self::read`]) or from
    /// `opensm-lfts.dump` ([`Self::read_dumps`]).
    pub tables: ForwardingTables,
    /// SL-to-VL tables from `opensm-sl2vl.dump`.
    pub sl2vl: Sl2VlTables,
}

impl ReadBack {
    /// The change from `before` (another read-back of the same subnet) to these tables, judged
    /// by the transition verifier with every route on every SL.
    pub fn verify_change_from(
        &self,
        before: &ReadBack,
    ) -> ibfabric::deadlock::verify::TransitionVerdict {
        self.verify_change_with_trees(before, None)
    }

    /// As [`Self::verify_change_from`], with the multicast entries before and after the
    /// change (`trees`, both over this read-back's fabric): every group on every SL too, each
    /// switch's entry old, new or any part of each.
    pub fn verify_change_with_trees(
        &self,
        before: &ReadBack,
        trees: Option<(&MulticastTables, &MulticastTables)>,
    ) -> ibfabric::deadlock::verify::TransitionVerdict {
        use ibfabric::deadlock::verify::{After, Before, Multicast, verify_transition};
        let (old, old_sl2vl) = before.onto(&self.fabric);
        let sls = std::collections::BTreeMap::new();
        let new_trees = trees.map(|(_, new)| Multicast {
            tables: new,
            sls: &sls,
            default_sl: 0,
        });
        verify_transition(
            &self.fabric,
            &self.lids,
            &Before {
                tables: &old,
                sl2vl: &old_sl2vl,
                multicast: trees.map(|(old, _)| old),
            },
            &After {
                tables: &self.tables,
                path_sl: &DefaultSl(0),
                sl2vl: &self.sl2vl,
                multicast: new_trees.as_ref(),
            },
            &VerifyOptions {
                sls: RouteSls::EverySl,
                ..VerifyOptions::default()
            },
        )
    }

    /// These forwarding and SL-to-VL tables moved onto `fabric` (another discovery of the same
    /// subnet: switches and ports matched by GUID), for the LIDs of `fabric`.
    pub fn onto(&self, fabric: &Fabric) -> (ForwardingTables, Sl2VlTables) {
        let read = self;
        let lids = LidTable::from_fabric(fabric).unwrap();
        let mut tables = ForwardingTables::for_lids(fabric, &lids);
        let mut sl2vl = Sl2VlTables::new(fabric, read.sl2vl.default);
        for s in read.fabric.switches() {
            let Some(here) = fabric.node_by_guid(read.fabric.node(s).guid) else {
                continue;
            };
            for (lid, _) in lids.iter() {
                if let Some(port) = read.tables.port(s, lid) {
                    tables.set(here, lid, port);
                }
            }
            if let Some(t) = read.sl2vl.switch(s) {
                sl2vl.set_switch(here, t.clone());
            }
        }
        for (port, row) in read.sl2vl.ports() {
            if let Some(here) = fabric.node_by_guid(read.fabric.node(port.node).guid) {
                sl2vl.set_port(
                    PortRef {
                        node: here,
                        port: port.port,
                    },
                    row,
                );
            }
        }
        (tables, sl2vl)
    }

    /// Reads the fabric: `ibnetdiscover`, `ibroute` of every switch, and OpenSM's SL-to-VL
    /// dump (written after every sweep with `-D 0x43`).
    pub fn read(sim: &Ibsim, sm: &OpenSm) -> Self {
        let (fabric, lids) = discover(sim);
        let tables = ibroute_tables(sim, &fabric);
        let sl2vl = sl2vl_dump(sm, &fabric);
        Self {
            fabric,
            lids,
            tables,
            sl2vl,
        }
    }

    /// As [`Self::read`], with the forwarding tables OpenSM says it programmed
    /// (`opensm-lfts.dump`, written with the SL-to-VL dump after every heavy sweep) instead of
    /// one `ibroute` per switch: one file instead of a process per switch. Every switch must
    /// have a block. [`Self::assert_switches_hold`] proves the dump equal to the switches.
    pub fn read_dumps(sim: &Ibsim, sm: &OpenSm) -> Self {
        let (fabric, lids) = discover(sim);
        let dump = lfts::parse(&wait_for_dump(sm, "opensm-lfts.dump"), &fabric).unwrap();
        assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
        let sl2vl = sl2vl_dump(sm, &fabric);
        Self {
            fabric,
            lids,
            tables: dump.tables,
            sl2vl,
        }
    }

    /// Reads every switch's forwarding table with `ibroute` and asserts it holds the port of
    /// [`Self::tables`] for every LID (entries unset on both sides agree): the check that a
    /// [`Self::read_dumps`] read what the switches hold.
    pub fn assert_switches_hold(&self, sim: &Ibsim, what: &str) {
        let switches = ibroute_tables(sim, &self.fabric);
        for s in self.fabric.switches() {
            let end = self.tables.table(s).len().max(switches.table(s).len());
            for lid in 0..end {
                let lid = u16::try_from(lid).expect("a unicast LID");
                assert_eq!(
                    self.tables.port(s, lid),
                    switches.port(s, lid),
                    "{what}: switch {} LID {lid}: read before (left), ibroute (right)",
                    self.fabric.node(s).name
                );
            }
        }
    }

    /// Asserts that the forwarding tables and the SL-to-VL tables (every switch (in, out)
    /// pair of a cabled out port, every host port) are those of `expected`, computed on
    /// `canon` (the same subnet, other node ids). Returns the number of SL-to-VL rows compared.
    pub fn assert_equals(&self, canon: &Fabric, expected: &DeadlockFree) -> usize {
        let fabric = &self.fabric;
        let in_canon = |n: NodeId| canon.node_by_guid(fabric.node(n).guid).unwrap();
        for s in fabric.switches() {
            for (lid, _) in self.lids.iter() {
                assert_eq!(
                    self.tables.port(s, lid),
                    expected.tables.port(in_canon(s), lid),
                    "switch {} LID {lid}",
                    fabric.node(s).name
                );
            }
        }
        let mut rows = 0;
        for s in fabric.switches() {
            for (out, _) in fabric.neighbours(s) {
                for input in 0..=fabric.node(s).num_ports() {
                    let got = self.sl2vl.switch(s).and_then(|t| t.get(input, out));
                    let got = got.unwrap_or_else(|| {
                        panic!("no SL2VL row {input}->{out} of {}", fabric.node(s).name)
                    });
                    assert_eq!(
                        got,
                        expected.sl2vl.switch_row(in_canon(s), input, out),
                        "switch {} in {input} out {out}",
                        fabric.node(s).name
                    );
                    rows += 1;
                }
            }
        }
        for h in fabric.hosts() {
            for (p, _) in fabric.neighbours(h) {
                assert_eq!(
                    self.sl2vl.port_row(PortRef { node: h, port: p }),
                    expected.sl2vl.port_row(PortRef {
                        node: in_canon(h),
                        port: p
                    }),
                    "host {}",
                    fabric.node(h).name
                );
                rows += 1;
            }
        }
        rows
    }

    /// Asks the SA (`saquery -p`) for `per_switch` random destinations from every switch
    /// (alternately its own LID and one of its hosts' LIDs) and asserts each SL is `expected`'s.
    /// Returns the distinct SLs seen.
    pub fn assert_sa_answers(
        &self,
        sim: &Ibsim,
        expected: &dyn PathSl,
        seed: u64,
        per_switch: usize,
    ) -> BTreeSet<u8> {
        let fabric = &self.fabric;
        let mut rng = Rng::new(seed);
        let all: Vec<u16> = self.lids.iter().map(|(l, _)| l).collect();
        let mut records = String::new();
        let mut asked = 0;
        for (i, s) in fabric.switches().enumerate() {
            let host = fabric
                .neighbours(s)
                .find(|(_, peer)| !fabric.node(peer.node).is_switch())
                .map(|(_, h)| fabric.node(h.node).ports[usize::from(h.port)].lid);
            // Hosts' LIDs of every layer (LID offset) in turn.
            let slid = match host.map(|lid| lid + (i / 2 % 4) as u16) {
                Some(lid) if i % 2 == 1 && self.lids.owner(lid).is_some() => lid,
                _ => fabric.node(s).ports[0].lid,
            };
            for _ in 0..per_switch {
                let dlid = all[rng.below(all.len() as u64) as usize];
                if dlid == slid {
                    continue;
                }
                records += &sim.run(
                    "saquery",
                    &[
                        "-p",
                        "--slid",
                        &slid.to_string(),
                        "--dlid",
                        &dlid.to_string(),
                    ],
                );
                asked += 1;
            }
        }
        let answered = path_sl::parse(&records).unwrap();
        assert_eq!(answered.entries.len(), asked, "{records}");
        let mut distinct = BTreeSet::new();
        for &(slid, dlid, sl) in &answered.entries {
            assert_eq!(sl, expected.sl(slid, dlid), "SA's SL for {slid} -> {dlid}");
            distinct.insert(sl);
        }
        distinct
    }

    /// Asserts with the independent verifier that the read-back tables are deadlock-free as
    /// `expected` promises: with the SLs the SA answers, and — when its guarantee is for every
    /// SL — with every route on every SL.
    pub fn assert_deadlock_free(&self, expected: &DeadlockFree, what: &str) {
        let verdict = self.verify(&ByLid(sa_sls(expected)));
        assert!(verdict.is_deadlock_free(), "{what}: {verdict}");
        if expected.outcome.guarantee() == Guarantee::EverySl {
            let verdict = self.verify_every_sl();
            assert!(
                verdict.is_deadlock_free(),
                "{what}, every route on every SL: {verdict}"
            );
        }
    }

    /// The independent verifier on the read-back tables with every route on every SL.
    pub fn verify_every_sl(&self) -> Verdict {
        ibfabric::deadlock::verify_every_sl(&self.fabric, &self.lids, &self.tables, &self.sl2vl)
    }

    /// The independent verifier on the read-back tables with `path_sls`.
    pub fn verify(&self, path_sls: &dyn PathSl) -> Verdict {
        verify(
            &self.fabric,
            &self.lids,
            &self.tables,
            path_sls,
            &self.sl2vl,
            &VerifyOptions::default(),
        )
    }
}

/// The fabric as `ibnetdiscover` sees it, and its LIDs.
fn discover(sim: &Ibsim) -> (Fabric, LidTable) {
    let fabric = ibnetdiscover::parse(&sim.run("ibnetdiscover", &[]), None)
        .unwrap()
        .fabric;
    let lids = LidTable::from_fabric(&fabric).unwrap();
    (fabric, lids)
}

/// The forwarding tables of every switch of `fabric`, from one `ibroute` per switch.
fn ibroute_tables(sim: &Ibsim, fabric: &Fabric) -> ForwardingTables {
    let lids: Vec<Vec<String>> = fabric
        .switches()
        .map(|s| vec![fabric.node(s).ports[0].lid.to_string()])
        .collect();
    let routes = sim.run_each("ibroute", &lids).concat();
    let ibroute = lfts::parse(&routes, fabric).unwrap();
    assert!(ibroute.warnings.is_empty(), "{:?}", ibroute.warnings);
    ibroute.tables
}

/// The SL-to-VL tables of OpenSM's `opensm-sl2vl.dump`.
fn sl2vl_dump(sm: &OpenSm, fabric: &Fabric) -> Sl2VlTables {
    let dump = sl2vl::parse(&wait_for_dump(sm, "opensm-sl2vl.dump"), fabric, [15; 16]).unwrap();
    assert!(dump.warnings.is_empty(), "{:?}", dump.warnings);
    dump.tables
}

/// Between two read-backs of one subnet: (forwarding entries that changed, entries whose route
/// in `before` crossed a switch-to-switch cable that `after` lacks), over the switches and
/// LIDs both have. The first should not exceed the second: a repair changes only what it must.
pub fn churn(before: &ReadBack, after: &ReadBack) -> (usize, usize) {
    use ibfabric::routing::walk::{DestWalk, NONE, Network};
    let (b, a) = (&before.fabric, &after.fabric);
    let in_after = |n: NodeId| a.node_by_guid(b.node(n).guid);
    let lost = |from: PortRef, to: PortRef| -> bool {
        let (Some(x), Some(y)) = (in_after(from.node), in_after(to.node)) else {
            return true;
        };
        a.peer(PortRef {
            node: x,
            port: from.port,
        }) != Some(PortRef {
            node: y,
            port: to.port,
        })
    };
    let net = Network::new(b, &before.lids);
    let mut walk = DestWalk::new(net.len());
    let mut dests: Vec<_> = net
        .endpoints
        .iter()
        .flat_map(|e| (0..e.lids).map(|l| net.endpoint_dest(e, l)))
        .collect();
    dests.extend((0..net.len()).filter_map(|s| net.switch_dest(s, &before.lids)));
    let (mut changed, mut crossing) = (0, 0);
    for dest in &dests {
        if after.lids.owner(dest.lid).is_none() {
            continue;
        }
        walk.walk(&net, &before.tables, dest, |_| NONE);
        for s in 0..net.len() {
            let node = net.switches[s];
            let Some(now) = in_after(node) else { continue };
            if before.tables.port(node, dest.lid) != after.tables.port(now, dest.lid) {
                changed += 1;
            }
            let crossed = walk.path(&net, s).any(|l| {
                let link = net.links[l as usize];
                link.between_switches() && lost(link.from, link.to)
            });
            crossing += usize::from(crossed);
        }
    }
    (changed, crossing)
}

impl ReadBack {
    /// The multicast forwarding tables: `ibroute -M` of every switch, once it holds every MLID
    /// of `mlids` and agrees with OpenSM's `opensm.mcfdbs` dump (OpenSM programs the switches
    /// and then writes the dump); with the `ibroute -M` text, for the analyser's input.
    pub fn read_mfts(
        &self,
        sim: &Ibsim,
        sm: &OpenSm,
        mlids: &[u16],
    ) -> (ibfabric::routing::MulticastTables, String) {
        use ibfabric::io::mfts;
        let fabric = &self.fabric;
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let text: String = fabric
                .switches()
                .map(|s| sim.run("ibroute", &["-M", &fabric.node(s).ports[0].lid.to_string()]))
                .collect();
            let read = mfts::parse(&text, fabric).expect("ibroute -M output");
            assert!(read.warnings.is_empty(), "{:?}", read.warnings);
            assert_eq!(read.switches, fabric.switches().count());
            let dump =
                mfts::parse(&wait_for_dump(sm, "opensm.mcfdbs"), fabric).expect("opensm.mcfdbs");
            let complete = mlids.iter().all(|m| read.tables.mlids().contains(m));
            if complete && dump.tables == read.tables {
                return (read.tables, text);
            }
            assert!(
                Instant::now() < deadline,
                "the switches' MFTs and opensm.mcfdbs do not agree on the groups {mlids:?} \
                 within 90 s:\nibroute -M: {:?}\nopensm.mcfdbs: {:?}",
                read.tables.mlids(),
                dump.tables.mlids()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}
