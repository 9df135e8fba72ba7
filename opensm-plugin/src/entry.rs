//! The entry points OpenSM calls: `create`/`delete`/`report` of the event plugin table, and
//! the routing engine's `setup`, `build_lid_matrices`, `ucast_build_fwd_tables`, `path_sl`,
//! `update_sl2vl` and `mcast_build_stree`.

use std::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use ibfabric::options::DeadlockMode;
use opensm_sys::{
    _ib_api_status_t_IB_ERROR, _ib_api_status_t_IB_SUCCESS, OSM_NO_PATH, OSM_VERSION,
    external_routing_engine_module_t, ib_api_status_t, ib_net16_t, ib_slvl_table_t,
    osm_epi_event_id_t, osm_event_plugin_t, osm_mgrp_box_t, osm_opensm_t, osm_physp_t,
    osm_register_external_routing_engine, osm_routing_engine_t, osm_switch_clear_hops,
    osm_switch_set_hops, osm_switch_t,
};

use crate::config::{Config, Fault, Source};
use crate::engine::{DeadlockSettings, NodeRecord, Routed};
use crate::multicast::{Groups, McastBasis, MemberRecord, Programmed};
use crate::qos::{QosAnswers, packed};
use crate::sweep_log::{self, Outcome, SweepRecord};
use crate::{cabling, engine, logger, mft, snapshot};

/// The routing engine name for `routing_engine` in opensm.conf.
pub const ENGINE_NAME: &CStr = c"layered";

/// Return value of a routing callback that makes OpenSM try its next engine
/// (osm_ucast_mgr.c: ucast_mgr_route; > 0 would run the default minhop step instead).
const NEXT_ENGINE: c_int = -1;

/// The table OpenSM looks up with `dlsym("osm_event_plugin")`.
#[repr(transparent)]
pub struct EventPluginTable(osm_event_plugin_t);

// SAFETY: the table is never written after load; it holds a pointer to a 'static
// NUL-terminated string and three function pointers.
unsafe impl Sync for EventPluginTable {}

/// The plugin's entry table. `osm_version` must equal the running daemon's string, or OpenSM
/// skips the plugin (osm_event_plugin.c); it comes from the headers the plugin is built with.
#[unsafe(no_mangle)]
#[used]
pub static osm_event_plugin: EventPluginTable = EventPluginTable(osm_event_plugin_t {
    osm_version: OSM_VERSION.as_ptr().cast(),
    create: Some(create),
    delete: Some(delete),
    report: Some(report),
});

/// State of one loaded plugin: the daemon, the routing computed by `build_lid_matrices` until
/// `ucast_build_fwd_tables` writes it, the answers of the routing in force, and the last
/// routing with what it was computed from (an unchanged subnet is not routed again).
struct Plugin {
    osm: *mut osm_opensm_t,
    pending: Mutex<Option<Pending>>,
    /// Path SLs and SL-to-VL tables of the tables in force; read by the SA's threads.
    answers: RwLock<Option<Arc<QosAnswers>>>,
    last: Mutex<Option<(Inputs, Arc<Routed>)>>,
    /// The last routing made in full, kept while later sweeps repair: a subnet that returns
    /// to it (the lost cables plugged back) gets exactly its tables again.
    full: Mutex<Option<(Inputs, Arc<Routed>)>>,
    /// The cabling plan of the configuration, while its file is unchanged.
    plan: Mutex<cabling::PlanCache>,
    /// The configuration last logged (warning and settings), so that the log says it once and
    /// again only when it changes, not at every sweep.
    reported: Mutex<Option<(Option<String>, String)>>,
    /// The configured `sweep_log`, as of the last routing pass that read the configuration.
    sweep_log: Mutex<Option<std::path::PathBuf>>,
    /// The multicast trees built over the routing in force (a new routing starts afresh).
    multicast: Mutex<Option<(Arc<Routed>, Groups)>>,
}

impl Plugin {
    /// Puts the answers of the tables now in force in place (`None` after a failure: OpenSM
    /// then routes with another engine and asks it, not us).
    fn set_answers(&self, answers: Option<Arc<QosAnswers>>) {
        *self.answers.write().unwrap_or_else(|e| e.into_inner()) = answers;
    }

    /// Logs the configuration in force, on one line, after a warning if its file could not be
    /// read; only when this differs from what was logged last.
    /// Appends `record` to the sweep log, if one is configured.
    fn log_sweep(&self, record: &SweepRecord) {
        if let Some(path) = &*self.sweep_log.lock().unwrap_or_else(|e| e.into_inner()) {
            sweep_log::append(path, record);
        }
    }

    fn report_config(&self, config: &Config, source: &Source) {
        let report = (source.warning(), config.summary());
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        if reported.as_ref() == Some(&report) {
            return;
        }
        if let Some(warning) = &report.0 {
            log::warn!("{warning}");
        }
        log::info!("configuration in force: {}", report.1);
        *reported = Some(report);
    }
}

/// The daemon's `event_plugin_options` (the plugin's configuration file), if set.
///
/// # Safety
/// `osm` must be the daemon's `osm_opensm_t`.
unsafe fn event_plugin_options(osm: *mut osm_opensm_t) -> Option<String> {
    // SAFETY: `osm` is the daemon's (caller); `event_plugin_options` is NULL or a C string
    // owned by the options, unchanged while the plugin runs.
    unsafe {
        let p = (*osm).subn.opt.event_plugin_options;
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// The OpenSM version the plugin runs in: the daemon loads the plugin only if its own version
/// string equals the one the plugin was built with (`osm_version` of the table).
fn opensm_version() -> String {
    String::from_utf8_lossy(&OSM_VERSION[..OSM_VERSION.len() - 1]).into_owned()
}

/// Everything a routing depends on.
#[derive(Clone, PartialEq)]
struct Inputs {
    records: Vec<NodeRecord>,
    config: Config,
    lmc: u8,
    deadlock: DeadlockSettings,
}

/// A computed routing and the switch objects to write it to (in fabric switch order).
struct Pending {
    routed: Arc<Routed>,
    switches: Vec<*mut osm_switch_t>,
    started: Instant,
    reused: bool,
    /// What the pass did, for the sweep log.
    outcome: Outcome,
    /// OpenSM's dump directory, when the path SLs are to be written there.
    path_sl_dump: Option<std::path::PathBuf>,
    /// A fault to inject while writing (testing aid).
    fault: Option<Fault>,
}

/// Runs `f`; on panic logs `what` and the panic message and returns `fallback` instead of
/// unwinding into C.
fn guard<R>(what: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            log::error!("{what}: internal error (panic: {message}); falling back");
            fallback
        }
    }
}

/// Whether `osm` looks like the `osm_opensm_t` these bindings describe: the back-pointers
/// OpenSM sets in `osm_subn_init` and `osm_sm_init` must point where our layout says.
///
/// # Safety
/// `osm` must point at the daemon's `osm_opensm_t` (OpenSM passes it to `create`).
unsafe fn layout_matches(osm: *mut osm_opensm_t) -> bool {
    // SAFETY: `osm` is the daemon's (caller); these reads stay inside `sizeof(osm_opensm_t)`
    // as the headers give it, and OpenSM's struct is at least as large if the layouts agree.
    unsafe {
        (*osm).subn.p_osm == osm
            && (*osm).sm.p_subn == &raw mut (*osm).subn
            && (*osm).sm.p_log == &raw mut (*osm).log
    }
}

extern "C" fn create(osm: *mut osm_opensm_t) -> *mut c_void {
    guard("create", std::ptr::null_mut(), || {
        // SAFETY: OpenSM calls create with its own, initialised osm_opensm_t
        // (osm_opensm.c: load_plugins, after osm_subn_init and osm_sm_init).
        if osm.is_null() || !unsafe { layout_matches(osm) } {
            // The log's address is not to be trusted: say it on stderr.
            eprintln!(
                "osmlayered: osm_opensm_t layout differs from the headers this plugin was \
                 built with ({}); plugin not loaded",
                opensm_version()
            );
            return std::ptr::null_mut();
        }
        // SAFETY: `osm->log` lives as long as the daemon; `delete` detaches before dlclose.
        unsafe { logger::attach(&raw mut (*osm).log) };
        // SAFETY: `osm` is the daemon's (checked above).
        let options = unsafe { event_plugin_options(osm) };
        let loaded = Config::load(options.as_deref());
        let from = match &loaded {
            Ok((_, source)) => source.describe(),
            Err(_) => options.clone().unwrap_or_default(),
        };
        log::info!(
            "osmlayered {} loaded in {}; configuration: {from}",
            env!("CARGO_PKG_VERSION"),
            opensm_version()
        );
        let plugin = Box::into_raw(Box::new(Plugin {
            osm,
            pending: Mutex::new(None),
            answers: RwLock::new(None),
            last: Mutex::new(None),
            full: Mutex::new(None),
            plan: Mutex::new(cabling::PlanCache::default()),
            reported: Mutex::new(None),
            sweep_log: Mutex::new(None),
            multicast: Mutex::new(None),
        }));
        let module = external_routing_engine_module_t {
            name: ENGINE_NAME.as_ptr(),
            setup: Some(setup),
            context: std::ptr::null_mut(),
        };
        // SAFETY: `osm` is valid (above); OpenSM copies the module (strdup of the name) and
        // keeps `plugin` as the engine's context (osm_opensm.c:
        // osm_register_external_routing_engine).
        let status = unsafe { osm_register_external_routing_engine(osm, &module, plugin.cast()) };
        if status != 0 {
            log::error!("cannot register routing engine 'layered' (status {status})");
            // SAFETY: `plugin` came from Box::into_raw above and was not handed out.
            drop(unsafe { Box::from_raw(plugin) });
            logger::detach();
            return std::ptr::null_mut();
        }
        log::info!("routing engine 'layered' registered");
        match loaded {
            // SAFETY: `plugin` came from Box::into_raw above; OpenSM does not route before
            // `create` returns.
            Ok((config, source)) => unsafe { &*plugin }.report_config(&config, &source),
            Err(e) => log::error!(
                "config: {e}; OpenSM routes with its next engine until the file is fixed"
            ),
        }
        plugin.cast()
    })
}

extern "C" fn delete(plugin: *mut c_void) {
    guard("delete", (), || {
        if !plugin.is_null() {
            // SAFETY: `plugin` is what `create` returned; OpenSM calls delete once, after
            // destroying the routing engines, and then dlcloses the library.
            drop(unsafe { Box::from_raw(plugin.cast::<Plugin>()) });
        }
        logger::detach();
    });
}

extern "C" fn report(_plugin: *mut c_void, _event: osm_epi_event_id_t, _data: *mut c_void) {}

/// Fills OpenSM's engine record when `routing_engine` names `layered`.
extern "C" fn setup(re: *mut osm_routing_engine_t, _osm: *mut osm_opensm_t) -> c_int {
    guard("setup", -1, || {
        // SAFETY: OpenSM passes a zeroed engine record whose `context` it has set to the
        // registered context, our `Plugin` (osm_opensm.c: setup_routing_engine).
        let re = unsafe { &mut *re };
        re.build_lid_matrices = Some(build_lid_matrices);
        re.ucast_build_fwd_tables = Some(ucast_build_fwd_tables);
        re.path_sl = Some(path_sl);
        re.update_sl2vl = Some(update_sl2vl);
        re.mcast_build_stree = Some(mcast_build_stree);
        0
    })
}

/// Snapshots the subnet and computes the routing (nothing is written yet).
unsafe extern "C" fn build_lid_matrices(context: *mut c_void) -> c_int {
    guard("build_lid_matrices", NEXT_ENGINE, || {
        // SAFETY: `context` is the `Plugin` registered in `create`, alive until `delete`,
        // which OpenSM calls only after destroying its routing engines.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let mut pending = plugin.pending.lock().unwrap_or_else(|e| e.into_inner());
        *pending = None;
        let started = Instant::now();
        match compute(plugin) {
            Ok(computed) => {
                *pending = Some(computed);
                0
            }
            Err(message) => {
                log::error!("{message}; falling back to the next routing engine");
                plugin.log_sweep(&SweepRecord::failed(&message, started.elapsed()));
                NEXT_ENGINE
            }
        }
    })
}

fn compute(plugin: &Plugin) -> Result<Pending, String> {
    let started = Instant::now();
    let osm = plugin.osm;
    // SAFETY: `osm` is the daemon's; `event_plugin_options` is NULL or a C string owned by
    // the options, unchanged while the subnet is routed.
    let (options, lmc, qos, max_op_vls, dump_dir) = unsafe {
        let opt = &(*osm).subn.opt;
        let string = |p: *const std::ffi::c_char| {
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        };
        (
            string(opt.event_plugin_options),
            opt.lmc,
            opt.qos != 0,
            opt.max_op_vls,
            string(opt.dump_files_dir),
        )
    };
    let (config, source) = Config::load(options.as_deref()).map_err(|e| format!("config: {e}"))?;
    plugin.report_config(&config, &source);
    *plugin.sweep_log.lock().unwrap_or_else(|e| e.into_inner()) =
        config.sweep_log.as_ref().map(std::path::PathBuf::from);
    let reoptimise = config
        .reoptimise_file
        .as_deref()
        .is_some_and(|path| sweep_log::take_reoptimise_request(std::path::Path::new(path)));
    if config.debug_fault == Some(Fault::RoutingPanic) {
        panic!("debug_fault routing_panic is set in the configuration");
    }
    // SAFETY: called from a routing callback, with OpenSM's lock held exclusively
    // (osm_ucast_mgr.c: osm_ucast_mgr_process).
    let snapshot = unsafe { snapshot::take(osm) }.map_err(|e| format!("subnet snapshot: {e}"))?;
    let (fabric, order) =
        engine::build_fabric("opensm", &snapshot.records).map_err(|e| e.to_string())?;
    if let Some(path) = &config.cabling_plan {
        let plan = plugin
            .plan
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path);
        match plan {
            Ok(plan) => {
                let (clean, lines) = cabling::differences(path, &plan, &fabric);
                for line in lines {
                    if clean {
                        log::info!("{line}");
                    } else {
                        log::warn!("{line}");
                    }
                }
            }
            Err(e) => log::warn!("cabling plan not checked: {e}"),
        }
    }
    let deadlock = deadlock_settings(&config, qos, max_op_vls, &snapshot.records);
    let inputs_fault = config.debug_fault;
    let path_sl_dump = config
        .path_sl_dump
        .then(|| std::path::PathBuf::from(dump_dir.unwrap_or_else(|| "/var/log".into())));
    let inputs = Inputs {
        records: engine::canonical_records(&snapshot.records),
        config,
        lmc,
        deadlock,
    };
    let mut last = plugin.last.lock().unwrap_or_else(|e| e.into_inner());
    let mut full = plugin.full.lock().unwrap_or_else(|e| e.into_inner());
    let same = |known: &Option<(Inputs, Arc<Routed>)>| {
        known
            .as_ref()
            .filter(|(previous, _)| *previous == inputs)
            .map(|(_, routed)| Arc::clone(routed))
    };
    let reusable = if reoptimise {
        None
    } else {
        same(&last).or_else(|| same(&full))
    };
    let (routed, reused) = if let Some(routed) = reusable {
        (routed, true)
    } else {
        let routing = inputs.config.routing(lmc);
        let repaired = if reoptimise {
            None
        } else {
            repair_after_losses(&[&*last, &*full], &inputs, &fabric, &routing)?
        };
        *last = None;
        let routed = match repaired {
            Some(routed) => Arc::new(routed),
            None => {
                *full = None;
                let routed = Arc::new(
                    engine::route(fabric, &routing, &inputs.deadlock).map_err(|e| e.to_string())?,
                );
                *full = Some((inputs.clone(), Arc::clone(&routed)));
                routed
            }
        };
        *last = Some((inputs, Arc::clone(&routed)));
        (routed, false)
    };
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
        switches.push(sw);
    }
    let outcome = if reused {
        Outcome::Unchanged
    } else if reoptimise {
        Outcome::Reoptimised
    } else if routed.repair.is_some() {
        Outcome::Repaired
    } else {
        Outcome::Routed
    };
    Ok(Pending {
        routed,
        switches,
        started,
        reused,
        outcome,
        path_sl_dump,
        fault: inputs_fault,
    })
}

/// The first of `known` routings (the last one, then the last full one) that `fabric` only
/// lost switches, cables or hosts since, repaired: every route that did not cross a loss is
/// kept. Failing that, the first that `fabric` also gained switches or cables since, repaired
/// and extended: new switches and cables are routed in without changing the other routes.
/// Losses come first so that cables plugged back return to their routes in the last full
/// routing. `None` when none serves (a full routing is due).
fn repair_after_losses(
    known: &[&Option<(Inputs, Arc<Routed>)>],
    inputs: &Inputs,
    fabric: &ibfabric::Fabric,
    routing: &ibfabric::routing::RoutingConfig,
) -> Result<Option<Routed>, String> {
    let attempts = [false, true].into_iter().flat_map(|gains| {
        known
            .iter()
            .filter_map(|k| k.as_ref())
            .map(move |k| (k, gains))
    });
    for ((previous, routed), gains) in attempts {
        let settings_match = previous.config == inputs.config
            && previous.lmc == inputs.lmc
            && previous.deadlock == inputs.deadlock;
        if !settings_match {
            continue;
        }
        let repaired = engine::repair(routed, fabric.clone(), routing, &inputs.deadlock, gains)
            .map_err(|e| e.to_string())?;
        if let Some(r) = repaired.filter(|r| {
            r.repair
                .as_ref()
                .is_some_and(|p| p.report.full_routing.is_none())
        }) {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// The deadlock settings for this subnet: the configured mode unless OpenSM will not program
/// SL-to-VL tables (`qos FALSE`), the VLs every port supports within OpenSM's `max_op_vls`
/// (or the configured number, if fewer).
fn deadlock_settings(
    config: &Config,
    qos: bool,
    max_op_vls: u8,
    records: &[NodeRecord],
) -> DeadlockSettings {
    let supported =
        engine::common_vls(records)
            .unwrap_or(8)
            .min(match engine::data_vls(max_op_vls) {
                0 => 15,
                v => v,
            });
    let vls = match config.vls {
        Some(wanted) if wanted > supported => {
            log::warn!(
                "vls {wanted} configured, but the ports support {supported} data VLs: using \
                 {supported}"
            );
            supported
        }
        Some(wanted) => wanted,
        None => supported,
    };
    let mode = if !qos && config.deadlock != DeadlockMode::None {
        log::warn!(
            "qos is FALSE in opensm.conf: OpenSM programs no SL-to-VL tables, so the routing \
             is NOT deadlock-free; set `qos TRUE` (or `deadlock: none` in the plugin's \
             configuration to accept this)"
        );
        DeadlockMode::None
    } else {
        config.deadlock
    };
    DeadlockSettings {
        mode,
        vls,
        shortage: config.on_vl_shortage.into(),
    }
}

/// Writes the computed routing into every switch's `new_lft` and hop table.
unsafe extern "C" fn ucast_build_fwd_tables(context: *mut c_void) -> c_int {
    guard("ucast_build_fwd_tables", NEXT_ENGINE, || {
        // SAFETY: as in `build_lid_matrices`.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let pending = plugin
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(pending) = pending else {
            log::error!("no routing computed; falling back to the next routing engine");
            plugin.set_answers(None);
            return NEXT_ENGINE;
        };
        let mut written = false;
        let result = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the switch objects were read in `build_lid_matrices` of this same
            // routing pass (osm_ucast_mgr_process holds the lock across both callbacks).
            unsafe { write(&pending, &mut written) }
        }));
        match result {
            Ok(Ok(())) => {
                let r = &pending.routed;
                for why in &r.reductions {
                    log::warn!("fewer layers: {why}");
                }
                if pending.reused {
                    log::info!(
                        "subnet unchanged since the last routing: its tables rewritten \
                         ({} switches, {} LIDs, {} layers) in {} ms",
                        r.switches.len(),
                        r.lids,
                        r.layers,
                        pending.started.elapsed().as_millis()
                    );
                } else {
                    log::info!(
                        "routed {} switches, {} LIDs, {} layers in {} ms (core {} ms)",
                        r.switches.len(),
                        r.lids,
                        r.layers,
                        pending.started.elapsed().as_millis(),
                        r.elapsed.as_millis()
                    );
                }
                if let Some(repair) = &r.repair {
                    log::info!("{repair}");
                }
                log::info!("{}", engine::prefix_balance_line(&r.prefix_balance));
                log::info!("{}", r.deadlock_summary);
                if let Some(guarantee) = &r.guarantee {
                    log::info!("{guarantee}");
                }
                plugin.set_answers(r.qos.clone());
                if let (Some(dir), Some(answers)) = (&pending.path_sl_dump, &r.qos) {
                    write_path_sl_dump(dir, answers);
                }
                plugin.log_sweep(&SweepRecord::written(
                    r,
                    pending.outcome,
                    pending.started.elapsed(),
                ));
                0
            }
            Ok(Err(message)) => {
                plugin.set_answers(None);
                // SAFETY: as above.
                unsafe { clear(&pending.switches) };
                log::error!("{message}; tables cleared, falling back to the next routing engine");
                plugin.log_sweep(&SweepRecord::failed(&message, pending.started.elapsed()));
                NEXT_ENGINE
            }
            Err(payload) => {
                plugin.set_answers(None);
                if written {
                    // SAFETY: as above.
                    unsafe { clear(&pending.switches) };
                }
                std::panic::resume_unwind(payload)
            }
        }
    })
}

/// Checks every entry against the switches' tables, then writes them all.
///
/// # Safety
/// The switch objects must be live and not used by anyone else during the call.
unsafe fn write(pending: &Pending, written: &mut bool) -> Result<(), String> {
    for ((_, entries), &sw) in pending.routed.switches.iter().zip(&pending.switches) {
        // SAFETY: live switch (caller).
        let (max_lid, lft_size, num_ports, new_lft) = unsafe {
            (
                (*sw).max_lid_ho,
                (*sw).lft_size,
                (*sw).num_ports,
                (*sw).new_lft,
            )
        };
        if new_lft.is_null() {
            return Err("a switch has no new_lft".into());
        }
        for e in entries {
            if e.lid > max_lid || e.lid >= lft_size {
                return Err(format!(
                    "LID {} beyond the switch's table (max LID {max_lid})",
                    e.lid
                ));
            }
            if e.port >= num_ports {
                return Err(format!("port {} beyond the switch's {num_ports}", e.port));
            }
        }
    }
    if pending.fault == Some(Fault::WriteError) {
        return Err("debug_fault write_error is set in the configuration".into());
    }
    *written = true;
    let half = pending.switches.len() / 2;
    for (i, ((_, entries), &sw)) in pending
        .routed
        .switches
        .iter()
        .zip(&pending.switches)
        .enumerate()
    {
        if i == half && pending.fault == Some(Fault::WritePanic) {
            panic!("debug_fault write_panic is set in the configuration");
        }
        for e in entries {
            // SAFETY: live switch (caller); `e.lid < lft_size` was checked above, and
            // `new_lft` has `lft_size` bytes (osm_switch.c: osm_switch_prepare_path_rebuild).
            unsafe { *(*sw).new_lft.add(usize::from(e.lid)) = e.port };
            // SAFETY: live switch; lid and port are in range (checked above).
            let status = unsafe { osm_switch_set_hops(sw, e.lid, e.port, e.hops) };
            if status != 0 {
                return Err(format!("cannot set hops for LID {}", e.lid));
            }
        }
    }
    Ok(())
}

/// Undoes a partial write: every `new_lft` entry back to "no path", hop tables cleared.
///
/// # Safety
/// As [`write`].
unsafe fn clear(switches: &[*mut osm_switch_t]) {
    for &sw in switches {
        // SAFETY: live switch (caller); `new_lft` has `lft_size` bytes.
        unsafe {
            let new_lft = (*sw).new_lft;
            if !new_lft.is_null() {
                std::ptr::write_bytes(new_lft, OSM_NO_PATH as u8, usize::from((*sw).lft_size));
            }
            osm_switch_clear_hops(sw);
        }
    }
}

/// Writes every pair's SL to `layered-path-sl.dump` in `dir`, atomically (a temporary file
/// renamed into place), so a reader never sees half a table. Failures are logged, not fatal.
fn write_path_sl_dump(dir: &std::path::Path, answers: &QosAnswers) {
    let Some(text) = answers.dump_text() else {
        log::info!(
            "no path SL dump: every SL is deadlock-free with lanes by port pair, so the SA \
             answers OpenSM's own choice"
        );
        return;
    };
    let path = dir.join("layered-path-sl.dump");
    let tmp = dir.join(format!(".layered-path-sl.dump.{}", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
    match result {
        Ok(()) => log::info!("path SLs written to {}", path.display()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            log::warn!("cannot write {}: {e}", path.display());
        }
    }
}

/// The SL of a path, for the SA's PathRecords and the SM's own SL: the deadlock scheme's answer,
/// or OpenSM's `hint` for LIDs this routing does not know, when no scheme is in force, and
/// when any SL is safe (lanes by port pair: the requester's SL or the QoS policy's stands).
unsafe extern "C" fn path_sl(
    context: *mut c_void,
    hint: u8,
    slid: ib_net16_t,
    dlid: ib_net16_t,
) -> u8 {
    guard("path_sl", hint, || {
        // SAFETY: as in `build_lid_matrices`.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let answers = plugin.answers.read().unwrap_or_else(|e| e.into_inner());
        answers
            .as_ref()
            .and_then(|a| a.path_sl(u16::from_be(slid), u16::from_be(dlid)))
            .unwrap_or(hint)
    })
}

/// The SL-to-VL table of `port` (a switch's output port, with `in_port`, or an endport): the
/// deadlock scheme's row; OpenSM's default row (already in `table`) otherwise.
unsafe extern "C" fn update_sl2vl(
    context: *mut c_void,
    port: *mut osm_physp_t,
    in_port: u8,
    _out_port: u8,
    table: *mut ib_slvl_table_t,
) {
    guard("update_sl2vl", (), || {
        if port.is_null() || table.is_null() {
            return;
        }
        // SAFETY: as in `build_lid_matrices`.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let answers = plugin.answers.read().unwrap_or_else(|e| e.into_inner());
        let Some(answers) = answers.as_ref() else {
            return;
        };
        // SAFETY: OpenSM passes a live port of a live node (osm_qos.c: qos_extports_setup and
        // qos_endport_setup, under its lock); `port_num` is the output port for a switch.
        let (node_guid, port_num) = unsafe {
            let node = (*port).p_node;
            if node.is_null() {
                return;
            }
            (u64::from_be((*node).node_info.node_guid), (*port).port_num)
        };
        if let Some(row) = answers.sl2vl(node_guid, port_num, in_port) {
            // SAFETY: `table` is OpenSM's 8-byte table for this port pair (non-null above).
            unsafe { (*table).raw_vl_by_sl = packed(&row) };
        }
    })
}

/// Builds the spanning tree of one multicast group and sets it in the switches' MFTs: over the
/// routing in force (inside the lanes by port pair when they are the scheme), else — no
/// routing of ours, a member it does not know, an internal error — a plain shortest-path tree
/// over a fresh snapshot, said in the log. OpenSM has no fallback of its own here
/// (osm_mcast_mgr.c: mcast_mgr_process_mlid), so an error leaves the group without a tree.
unsafe extern "C" fn mcast_build_stree(
    context: *mut c_void,
    mbox: *mut osm_mgrp_box_t,
) -> ib_api_status_t {
    guard("mcast_build_stree", _ib_api_status_t_IB_ERROR, || {
        if mbox.is_null() {
            return _ib_api_status_t_IB_ERROR;
        }
        // SAFETY: as in `build_lid_matrices`.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        // SAFETY: OpenSM passes the live box of the MLID it processes, under its lock
        // (osm_mcast_mgr.c: osm_mcast_mgr_process -> mcast_mgr_process_mlid).
        let (mlid, members) = unsafe { mft::members(mbox) };
        let programmed =
            match catch_unwind(AssertUnwindSafe(|| tree_of_routing(plugin, mlid, &members))) {
                Ok(Ok(p)) => Ok(p),
                Ok(Err(why)) => Err(why),
                Err(_) => Err("internal error (panic) building the tree".to_string()),
            };
        let programmed = programmed.or_else(|why| {
            log::warn!("multicast MLID {mlid:#06x}: {why}; a plain shortest-path tree instead");
            plain_tree(plugin, mlid, &members, &why)
        });
        let result = programmed.and_then(|p| {
            // SAFETY: `plugin.osm` is the daemon's; called under its lock (above).
            unsafe { mft::set(plugin.osm, mlid, &p.entries) }.map(|()| p.line)
        });
        match result {
            Ok(line) => {
                log::info!("{line}");
                _ib_api_status_t_IB_SUCCESS
            }
            Err(e) => {
                log::error!("multicast MLID {mlid:#06x}: {e}; the group has no tree");
                _ib_api_status_t_IB_ERROR
            }
        }
    })
}

/// The group's tree over the routing in force, on the loads of the trees built over it.
fn tree_of_routing(
    plugin: &Plugin,
    mlid: u16,
    members: &[MemberRecord],
) -> Result<Programmed, String> {
    let routed = plugin
        .last
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|(_, routed)| Arc::clone(routed))
        .ok_or("no routing of this engine in force")?;
    let mut state = plugin.multicast.lock().unwrap_or_else(|e| e.into_inner());
    let current = matches!(&*state, Some((r, _)) if Arc::ptr_eq(r, &routed));
    if !current {
        *state = Some((Arc::clone(&routed), Groups::default()));
    }
    let (_, groups) = state.as_mut().expect("set above");
    groups.program(&routed.multicast, mlid, members)
}

/// A shortest-path tree over a fresh snapshot of the subnet, no deadlock proof claimed.
fn plain_tree(
    plugin: &Plugin,
    mlid: u16,
    members: &[MemberRecord],
    why: &str,
) -> Result<Programmed, String> {
    // SAFETY: called from `mcast_build_stree`, under OpenSM's lock.
    let snapshot = unsafe { snapshot::take(plugin.osm) }.map_err(|e| e.to_string())?;
    let (fabric, _) =
        engine::build_fabric("opensm", &snapshot.records).map_err(|e| e.to_string())?;
    let graph = ibfabric::routing::graph::RoutingGraph::new(&fabric);
    let basis = McastBasis {
        fabric,
        graph,
        order: None,
        scheme: format!("plain shortest-path tree: {why}"),
    };
    Groups::default().program(&basis, mlid, members)
}
