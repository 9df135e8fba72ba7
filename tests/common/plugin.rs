//! Running stock OpenSM with the layered plugin against an ibsim fabric: building and placing
//! `libosmlayered.so`, the opensm.conf that loads it, and the canonical node order the plugin
//! routes in (so a test can compute the same routing with the core).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ibfabric::Fabric;
use ibfabric::topology::{NodeKind, NodeSpec, PortRef};

use super::{Ibsim, OpenSm, OpenSmOptions};

/// OpenSM's line when our engine's tables are in use.
pub const LAYERED_USED: &str = "layered tables configured on all switches";
/// The plugin's line when it wrote the first pass of a staged change (the changed entries
/// dropped) ...
pub const DROP_PASS: &str = "staged change, drop pass";
/// ... or a pass that changes only the SL-to-VL tables, with a pass to follow ...
pub const LANES_PASS: &str = "staged change, lanes pass";
/// ... and when it asks OpenSM for the next pass, once the drain time passed.
pub const NEXT_PASS_ASKED: &str = "drain time over, asking OpenSM for the next pass";
/// The end of OpenSM's line when any engine's tables are in use.
const ANY_CONFIGURED: &str = "tables configured on all switches";
/// OpenSM's line when it fell back to minhop.
pub const MINHOP_USED: &str = "minhop tables configured on all switches";

/// Builds the plugin (with the cargo, target dir and profile this test runs under, and the
/// `debug-fault` feature, so that tests can inject faults) and returns a directory holding
/// only `libosmlayered.so`, for `LD_LIBRARY_PATH`.
pub fn plugin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let _building = super::building_shared_artifacts();
        let profile_dir = super::build_package_with_features("opensm-layered", &["debug-fault"]);
        let dir = profile_dir.join("osmlayered-plugin");
        std::fs::create_dir_all(&dir).unwrap();
        // Copy to a new name and rename: a running OpenSM of another test keeps its mapping.
        let tmp = dir.join(format!("libosmlayered.so.{}", std::process::id()));
        std::fs::copy(profile_dir.join("libosmlayered.so"), &tmp).expect("libosmlayered.so built");
        std::fs::rename(&tmp, dir.join("libosmlayered.so")).unwrap();
        dir
    })
}

/// Runs OpenSM with the plugin on `sim`, once (`-o`) or as a daemon.
pub fn run_opensm_with_plugin(sim: &Ibsim, plugin_options: Option<&str>, once: bool) -> OpenSm {
    run_opensm_with_conf(sim, "", plugin_options, once)
}

/// As [`run_opensm_with_plugin`], with further opensm.conf lines (e.g. `qos TRUE\n`).
pub fn run_opensm_with_conf(
    sim: &Ibsim,
    conf: &str,
    plugin_options: Option<&str>,
    once: bool,
) -> OpenSm {
    OpenSm::start(sim, &with_plugin(conf, plugin_options, once))
}

/// The options that run OpenSM with the plugin: `routing_engine layered,minhop`, LMC 2,
/// further opensm.conf lines `conf`, and `event_plugin_options`.
pub fn with_plugin(conf: &str, plugin_options: Option<&str>, once: bool) -> OpenSmOptions {
    let mut config = String::from(
        "event_plugin_name osmlayered\nrouting_engine layered,minhop\nlmc 2\n\
         force_log_flush TRUE\n",
    );
    config += conf;
    if let Some(options) = plugin_options {
        config += &format!("event_plugin_options {options}\n");
    }
    OpenSmOptions {
        config: Some(config),
        once,
        env: vec![(
            "LD_LIBRARY_PATH".into(),
            plugin_dir().clone().into_os_string(),
        )],
        ..OpenSmOptions::new("layered,minhop", 2)
    }
}

/// `fabric` rebuilt the way the plugin snapshots OpenSM's subnet: switches in ascending node
/// GUID, then the other nodes in ascending node GUID (routing depends on the switch order).
pub fn canonical(fabric: &Fabric) -> Fabric {
    let mut order: Vec<usize> = (0..fabric.nodes().len()).collect();
    order.sort_by_key(|&i| {
        let n = &fabric.nodes()[i];
        (n.kind != NodeKind::Switch, n.guid)
    });
    let mut out = Fabric::new("canonical");
    let mut new_id = vec![None; order.len()];
    for &i in &order {
        let n = &fabric.nodes()[i];
        let id = out
            .add_node(NodeSpec {
                kind: n.kind,
                name: n.name.clone(),
                description: n.description.clone(),
                guid: n.guid,
                num_ports: n.num_ports(),
                rack: None,
            })
            .unwrap();
        out.node_mut(id).ports.clone_from(&n.ports);
        for p in &mut out.node_mut(id).ports {
            p.link = None;
        }
        new_id[i] = Some(id);
    }
    for link in fabric.links() {
        let map = |end: PortRef| PortRef {
            node: new_id[end.node.index()].unwrap(),
            port: end.port,
        };
        out.connect(map(link.a), map(link.b), link.width, link.speed)
            .unwrap();
    }
    out
}

/// Writes `text` as the plugin's YAML file in the simulator's directory; returns its path.
pub fn plugin_config(sim: &Ibsim, name: &str, text: &str) -> String {
    let path = sim.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Waits until OpenSM has configured the layered engine's tables more than `before` times,
/// finished that sweep (its dumps written) and then kept quiet for a while (one fault can take
/// several sweeps, and a staged change two passes: no drop pass may wait for its next one);
/// returns the count.
pub fn wait_settled(sm: &OpenSm, before: usize) -> usize {
    wait_configured(sm, before, LAYERED_USED, Duration::from_secs(120))
}

/// How long OpenSM must stay quiet after the end of a sweep that configured tables before the
/// routing counts as settled: no further sweep configured tables in that time. A sweep OpenSM
/// starts at once after another (a trap that came during it, or a next pass) configures its
/// tables within about a second of its start on Slim Fly q = 7 under ibsim (discovery, routing
/// and the LFT writes), a few seconds on a loaded machine.
const QUIET_AFTER_SWEEP: Duration = Duration::from_secs(2);

/// OpenSM's lines at the end of a heavy sweep: the subnet up, or not (errors while
/// configuring it). OpenSM writes its dumps (`-D 0x43`: `opensm-lfts.dump`, ...) just before
/// the first, so a sweep that ended has its dumps in place.
const SWEEP_ENDS: [&str; 2] = [super::SUBNET_UP, "ERRORS DURING INITIALIZATION"];

/// Whether the last sweep in `log` that configured tables (`configured`) has ended.
fn last_configuring_sweep_ended(log: &str, configured: &str) -> bool {
    let Some(configured_at) = log.rfind(configured) else {
        return false;
    };
    SWEEP_ENDS
        .iter()
        .filter_map(|end| log.rfind(end))
        .any(|ended_at| ended_at > configured_at)
}

/// Whether a staged change in `log` has a pass still to come: a drop or lanes pass whose
/// drain time has not run out, or a next pass asked for and not yet configured (OpenSM may
/// start that sweep seconds later on a busy machine; reading the tables before it would read
/// the drop pass's).
fn next_pass_due(log: &str) -> bool {
    let waiting = log.matches(DROP_PASS).count() + log.matches(LANES_PASS).count()
        > log.matches(NEXT_PASS_ASKED).count();
    // Whichever engine configured the tables answers the request.
    let asked_unanswered = match (log.rfind(NEXT_PASS_ASKED), log.rfind(ANY_CONFIGURED)) {
        (Some(asked), Some(done)) => asked > done,
        (Some(_), None) => true,
        (None, _) => false,
    };
    waiting || asked_unanswered
}

/// As [`wait_settled`], counting OpenSM's log lines `configured` (another engine's "... tables
/// configured on all switches"), for at most `within`.
pub fn wait_configured(sm: &OpenSm, before: usize, configured: &str, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    let mut last = (0, false);
    let mut quiet_since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let log = sm.log();
        let now = (
            log.matches(configured).count(),
            last_configuring_sweep_ended(&log, configured),
        );
        // A new routing, the end of its sweep, or a pass still to come: not quiet yet.
        if now != last || next_pass_due(&log) {
            last = now;
            quiet_since = Instant::now();
        }
        let (count, ended) = last;
        if count > before && ended && quiet_since.elapsed() > QUIET_AFTER_SWEEP {
            return count;
        }
        assert!(
            Instant::now() < deadline,
            "no settled routing after {before} (now {count}, its sweep {}):\n{log}",
            if ended { "ended" } else { "not ended" }
        );
    }
}

/// Makes the change `act` and reads back every pass of it: each pass a further one follows (a
/// drop or lanes pass) with `read_pass` once its sweep ended (from OpenSM's dumps: `ibroute`
/// asks the switches by LID, and a drop pass drops some of the routes to them), then the
/// fabric with `read_end` once the plugin settled. The drain time must leave room to read a
/// pass before the next one is asked for (asserted).
pub fn passes_read_with<T>(
    sim: &mut Ibsim,
    sm: &OpenSm,
    act: impl FnOnce(&mut Ibsim),
    read_pass: impl Fn(&Ibsim, &OpenSm) -> T,
    read_end: impl Fn(&Ibsim, &OpenSm) -> T,
) -> Vec<T> {
    let count = |what: &str| sm.log().matches(what).count();
    let staged = || count(DROP_PASS) + count(LANES_PASS);
    let first_used = count(LAYERED_USED);
    let (mut used, mut intermediate) = (first_used, staged());
    act(sim);
    let mut read = Vec::new();
    loop {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let log = sm.log();
            let last_used = log.rfind(LAYERED_USED);
            let swept = last_used.is_some_and(|at| log[at..].contains(super::SUBNET_UP));
            if log.matches(LAYERED_USED).count() > used && swept {
                break;
            }
            assert!(Instant::now() < deadline, "no routing pass:\n{log}");
            std::thread::sleep(Duration::from_millis(200));
        }
        used = count(LAYERED_USED);
        if staged() == intermediate {
            break;
        }
        intermediate = staged();
        std::thread::sleep(Duration::from_secs(1));
        read.push(read_pass(sim, sm));
        assert_eq!(
            count(NEXT_PASS_ASKED),
            intermediate - 1,
            "the next pass started while this one was read back: raise the drain time"
        );
    }
    wait_settled(sm, first_used);
    read.push(read_end(sim, sm));
    read
}
