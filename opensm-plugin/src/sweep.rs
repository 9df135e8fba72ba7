//! One routing pass of `build_lid_matrices`: OpenSM's options and the plugin's configuration
//! read, the subnet copied and checked against the cabling plan, the deadlock settings it
//! allows, and the core's routing session asked to reuse, repair or route.

use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ibfabric::Fabric;

use ibfabric::session::{DeadlockSettings, Decision, Request, Wanted};

use crate::cache_file;
use crate::commit::{Pending, SwitchPtr};
use crate::config::{Config, Fault};
use crate::plugin::{Plugin, Routings, unpoisoned};
use crate::saved_session::{self, SavedSession, SavedStep};
use crate::subnet::{self, NodeRecord, build_fabric, canonical_records};
use crate::sweep_log::{self, CablingCheck, Outcome};
use crate::{cabling, snapshot};

/// What the routing reads of OpenSM's options.
struct OpensmOptions {
    /// `event_plugin_options`: the plugin's configuration file.
    plugin_options: Option<String>,
    lmc: u8,
    qos: bool,
    max_op_vls: u8,
    dump_dir: Option<String>,
    /// The switch lifetime OpenSM programs (SwitchInfo LifeTimeValue): 4.096 µs × 2^value.
    packet_life_time: u8,
}

/// Reads OpenSM's options.
///
/// # Safety
/// `plugin.osm` is the daemon's; called from a routing callback, under OpenSM's lock.
unsafe fn opensm_options(plugin: &Plugin) -> OpensmOptions {
    // SAFETY: `osm` is the daemon's; the string options are NULL or C strings owned by the
    // options, unchanged while the subnet is routed.
    unsafe {
        let opt = &(*plugin.osm.0).subn.opt;
        let string = |p: *const c_char| {
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        };
        OpensmOptions {
            plugin_options: string(opt.event_plugin_options),
            lmc: opt.lmc,
            qos: opt.qos != 0,
            max_op_vls: opt.max_op_vls,
            dump_dir: string(opt.dump_files_dir),
            packet_life_time: opt.packet_life_time,
        }
    }
}

/// Computes the routing of this pass (nothing is written yet).
///
/// # Errors
/// The message for the log: the configuration, the snapshot or the routing failed.
pub(crate) fn compute(plugin: &Plugin) -> Result<Pending, String> {
    let started = Instant::now();
    // SAFETY: called from `build_lid_matrices`, under OpenSM's lock.
    let opensm = unsafe { opensm_options(plugin) };
    let (config, source) =
        Config::load(opensm.plugin_options.as_deref()).map_err(|e| format!("config: {e}"))?;
    plugin.report_config(&config, &source);
    *unpoisoned(plugin.sweep_log.lock()) = config.sweep_log.as_ref().map(PathBuf::from);
    unpoisoned(plugin.metrics.lock()).path = config.metrics_file.as_ref().map(PathBuf::from);
    let reoptimise = config
        .reoptimise_file
        .as_deref()
        .is_some_and(|path| sweep_log::take_reoptimise_request(Path::new(path)));
    if config.fault() == Some(Fault::RoutingPanic) {
        panic!("debug_fault routing_panic is set in the configuration");
    }
    // SAFETY: called from a routing callback, with OpenSM's lock held exclusively
    // (osm_ucast_mgr.c: osm_ucast_mgr_process).
    let snapshot =
        unsafe { snapshot::take(plugin.osm.0) }.map_err(|e| format!("subnet snapshot: {e}"))?;
    let (fabric, order) = build_fabric("opensm", &snapshot.records).map_err(|e| e.to_string())?;
    let cabling = config
        .cabling_plan
        .as_ref()
        .and_then(|path| check_cabling(plugin, path, &fabric));
    let fault = config.fault();
    let path_sl_dump = config
        .path_sl_dump
        .then(|| PathBuf::from(opensm.dump_dir.as_deref().unwrap_or("/var/log")));
    let saved_settings = saved_settings(&config, &opensm);
    let request = request_for(
        &config,
        &opensm,
        fabric,
        canonical_records(&snapshot.records),
        reoptimise,
    );
    let first_pass = !plugin.restore_tried.swap(true, Ordering::Relaxed);
    if first_pass {
        plugin.restore_trees();
    }
    let (settled, routing_threads) = {
        let mut session = unpoisoned(plugin.session.lock());
        if first_pass {
            restore(&mut session, &config, &opensm, &saved_settings);
        }
        let steps = session.journal().len();
        let routings = &mut *session;
        let (settled, threads) =
            plugin.on_routing_threads(config.routing_threads, || routings.settle(request));
        let settled = settled.map_err(|e| e.to_string())?;
        if settled.decision != Decision::Reused || session.journal().len() != steps {
            save(&session, saved_settings);
        }
        (settled, threads)
    };
    let routed = settled.routed;
    let drain = config.transition_drain_ms.map_or_else(
        || drain_time(opensm.packet_life_time, &routed),
        Duration::from_millis,
    );
    let mut switches = Vec::with_capacity(routed.switches.len());
    for (id, _) in &routed.switches {
        let record = order[id.index()];
        let sw = snapshot.switches[record];
        if sw.is_null() {
            return Err(format!(
                "switch {:#018x} has no switch object",
                snapshot.records[record].guid
            ));
        }
        switches.push(SwitchPtr(sw));
    }
    let outcome = match settled.decision {
        Decision::Reused => Outcome::Unchanged,
        Decision::Reoptimised => Outcome::Reoptimised,
        Decision::Repaired => Outcome::Repaired,
        Decision::Routed => Outcome::Routed,
    };
    Ok(Pending {
        routed,
        switches,
        started,
        reused: settled.decision == Decision::Reused,
        outcome,
        cabling,
        path_sl_dump,
        fault,
        staged: config.staged_transitions,
        drain,
        spare_working: config.spare_working_routes,
        threads: routing_threads,
    })
}

/// The longest a packet sent along a dropped entry can stay in the fabric: the switch
/// lifetime (`packet_life_time`: 4.096 µs × 2^value, at most 2^19, larger values meaning
/// "infinite" in the InfiniBand specification) at every switch of the longest route.
fn drain_time(packet_life_time: u8, routed: &ibfabric::session::Routed) -> Duration {
    let lifetime = Duration::from_nanos(4096 << packet_life_time.min(19));
    let switches_on_longest = routed
        .switches
        .iter()
        .flat_map(|(_, entries)| entries.iter().map(|e| e.hops))
        .max()
        .unwrap_or(0);
    lifetime * u32::from(switches_on_longest.max(1))
}

/// The request of a routing pass over `fabric`, whose records (canonical order) are `subnet`.
fn request_for(
    config: &Config,
    opensm: &OpensmOptions,
    fabric: Fabric,
    subnet: Vec<NodeRecord>,
    reoptimise: bool,
) -> Request<Vec<NodeRecord>, (Config, u8)> {
    let deadlock = DeadlockSettings::for_subnet(
        Wanted {
            mode: config.deadlock,
            vls: config.vls,
            shortage: config.on_vl_shortage,
        },
        subnet::common_vls(&subnet),
        opensm.max_op_vls,
        opensm.qos,
    );
    Request {
        fabric,
        subnet,
        routing: config.routing(opensm.lmc),
        settings: (config.routing_keys(), opensm.lmc),
        deadlock,
        reoptimise,
    }
}

/// Everything besides the subnet that a routing depends on, on one line: a saved session made
/// under other settings is not settled again (a change of the files beside the routing, such
/// as the sweep log's, does not count).
fn saved_settings(config: &Config, opensm: &OpensmOptions) -> String {
    format!(
        "{}; lmc {}; qos {}; max_op_vls {}",
        config.routing_keys().summary(),
        opensm.lmc,
        opensm.qos,
        opensm.max_op_vls
    )
}

/// After a restart (the first routing pass of this plugin), settles the saved session's steps
/// again in `session`, so that the routings it kept before are kept again. A file that cannot
/// be used is logged and ignored.
fn restore(session: &mut Routings, config: &Config, opensm: &OpensmOptions, settings: &str) {
    let path = cache_file::cache_dir().join(saved_session::FILE_NAME);
    let saved = match saved_session::load(&path) {
        Ok(Some(saved)) => saved,
        Ok(None) => return,
        Err(e) => {
            log::warn!("saved routing session ignored: {e}");
            return;
        }
    };
    if saved.settings != settings {
        log::info!(
            "saved routing session {} ignored: it was made under other settings ({})",
            path.display(),
            saved.settings
        );
        return;
    }
    let started = Instant::now();
    let steps = saved.steps.len();
    for (i, step) in saved.steps.into_iter().enumerate() {
        let replayed = build_fabric("opensm", &step.subnet)
            .map_err(|e| e.to_string())
            .and_then(|(fabric, _)| {
                let request = request_for(config, opensm, fabric, step.subnet, step.reoptimise);
                session.settle(request).map_err(|e| e.to_string())
            });
        if let Err(e) = replayed {
            log::warn!(
                "saved routing session {} ignored: step {} of {steps} failed: {e}",
                path.display(),
                i + 1
            );
            *session = Routings::new();
            return;
        }
    }
    log::info!(
        "routing session restored from {}: its last full routing and {} repairs settled \
         again in {:.2} s",
        path.display(),
        steps.saturating_sub(1),
        started.elapsed().as_secs_f64()
    );
}

/// Saves `session`'s journal to OpenSM's cache directory (a journal too long to save removes
/// the file: a restart then routes in full rather than from an older state).
fn save(session: &Routings, settings: String) {
    let path = cache_file::cache_dir().join(saved_session::FILE_NAME);
    let journal = session.journal();
    let written = if journal.len() > saved_session::MAX_STEPS {
        log::info!(
            "routing session not saved: {} repairs since the last full routing (at most {}); \
             a restart will route in full",
            journal.len() - 1,
            saved_session::MAX_STEPS - 1
        );
        cache_file::remove(&path)
    } else {
        let steps = journal
            .iter()
            .map(|step| SavedStep {
                reoptimise: step.reoptimise,
                subnet: step.subnet.clone(),
            })
            .collect();
        saved_session::save(&path, &SavedSession { settings, steps })
    };
    if let Err(e) = written {
        log::warn!("routing session not saved to {}: {e}", path.display());
    }
}

/// Logs how the subnet differs from the cabling plan at `path` (info lines when it matches);
/// the plan's cables and those as planned, for the sweep log, when the plan was checked.
fn check_cabling(plugin: &Plugin, path: &str, fabric: &ibfabric::Fabric) -> Option<CablingCheck> {
    let plan = unpoisoned(plugin.plan.lock()).get(path);
    match plan {
        Ok(plan) => {
            let differences = cabling::differences(path, &plan, fabric);
            for line in differences.lines {
                if differences.clean {
                    log::info!("{line}");
                } else {
                    log::warn!("{line}");
                }
            }
            differences.check
        }
        Err(e) => {
            log::warn!("cabling plan not checked: {e}");
            None
        }
    }
}
