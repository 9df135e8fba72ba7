//! The entry points OpenSM calls: `create`/`delete`/`report` of the event plugin table, and
//! the routing engine's `setup`, `build_lid_matrices`, `ucast_build_fwd_tables`, `path_sl`,
//! `update_sl2vl` and `mcast_build_stree`. Only the C side is here: the callbacks, the
//! conversions and the commit to OpenSM; which routing to write is the core's session
//! ([`crate::sweep`]), and SAFETY.md ("Threads and locks") says which OpenSM thread calls what.

use std::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use ibfabric::session::PassKind;
use opensm_sys::{
    _ib_api_status_t_IB_ERROR, _ib_api_status_t_IB_SUCCESS, OSM_VERSION,
    external_routing_engine_module_t, ib_api_status_t, ib_net16_t, ib_slvl_table_t,
    osm_epi_event_id_t, osm_epi_event_id_t_OSM_EVENT_ID_SUBNET_UP,
    osm_epi_event_id_t_OSM_EVENT_ID_UCAST_ROUTING_DONE,
    osm_epi_ucast_routing_flags_t_UCAST_ROUTING_REROUTE, osm_event_plugin_t, osm_mgrp_box_t,
    osm_opensm_t, osm_physp_t, osm_register_external_routing_engine, osm_routing_engine_t,
};

use crate::commit::{clear, log_written, write_path_sl_dump};
use crate::config::Config;
use crate::daemon::{event_plugin_options, layout_matches, opensm_version};
use crate::guard::{guard, panic_message, record_panic_locations};
use crate::pass::write_pass;
use crate::plugin::{Daemon, Plugin, unpoisoned};
use crate::qos::packed;
use crate::sweep::compute;
use crate::sweep_log::{SweepRecord, now};
use crate::{logger, mft, sl2vl};

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
        record_panic_locations();
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
        let plugin = Box::into_raw(Box::new(Plugin::new(Daemon(osm))));
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

/// OpenSM's events: the end of a routing pass and of a heavy sweep (see `events`).
extern "C" fn report(plugin: *mut c_void, event: osm_epi_event_id_t, data: *mut c_void) {
    guard("report", (), || {
        if plugin.is_null() {
            return;
        }
        // SAFETY: `plugin` is what `create` returned; OpenSM reports events until `delete`.
        let plugin = unsafe { &*plugin.cast::<Plugin>() };
        if event == osm_epi_event_id_t_OSM_EVENT_ID_UCAST_ROUTING_DONE {
            // The event's data is the kind of routing, an enum value (osm_state_mgr.c).
            let reroute = osm_epi_ucast_routing_flags_t_UCAST_ROUTING_REROUTE as usize;
            plugin.on_routing_done(data as usize == reroute);
        } else if event == osm_epi_event_id_t_OSM_EVENT_ID_SUBNET_UP {
            plugin.on_sweep_end();
        }
    });
}

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

/// The sweep log's record of a routing pass that panicked (OpenSM falls back to its next
/// engine, as for an error).
fn panicked(payload: &(dyn std::any::Any + Send), started: Instant) -> SweepRecord {
    let message = format!("internal error (panic: {})", panic_message(payload));
    SweepRecord::failed(&message, started.elapsed(), now())
}

/// Snapshots the subnet and computes the routing (nothing is written yet).
unsafe extern "C" fn build_lid_matrices(context: *mut c_void) -> c_int {
    guard("build_lid_matrices", NEXT_ENGINE, || {
        // SAFETY: `context` is the `Plugin` registered in `create`, alive until `delete`,
        // which OpenSM calls only after destroying its routing engines.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let mut pending = unpoisoned(plugin.pending.lock());
        *pending = None;
        let started = Instant::now();
        match catch_unwind(AssertUnwindSafe(|| compute(plugin))) {
            Ok(Ok(computed)) => {
                *pending = Some(computed);
                0
            }
            Ok(Err(message)) => {
                log::error!("{message}; falling back to the next routing engine");
                plugin.log_sweep(&SweepRecord::failed(&message, started.elapsed(), now()));
                NEXT_ENGINE
            }
            Err(payload) => {
                // Recorded as a failed pass; the guard logs it and falls back.
                plugin.log_sweep(&panicked(payload.as_ref(), started));
                std::panic::resume_unwind(payload)
            }
        }
    })
}

/// Writes the computed routing into every switch's `new_lft` and hop table.
unsafe extern "C" fn ucast_build_fwd_tables(context: *mut c_void) -> c_int {
    guard("ucast_build_fwd_tables", NEXT_ENGINE, || {
        // SAFETY: as in `build_lid_matrices`.
        let plugin = unsafe { &*context.cast::<Plugin>() };
        let pending = unpoisoned(plugin.pending.lock()).take();
        let Some(pending) = pending else {
            log::error!("no routing computed; falling back to the next routing engine");
            plugin.set_answers(None);
            return NEXT_ENGINE;
        };
        let mut written = false;
        let result = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the switch objects were read in `build_lid_matrices` of this same
            // routing pass (osm_ucast_mgr_process holds the lock across both callbacks).
            unsafe { write_pass(plugin, &pending, &mut written) }
        }));
        match result {
            Ok(Ok(figures)) => {
                let r = &pending.routed;
                log_written(&pending);
                let kind = figures.map(|f| f.kind);
                if kind == Some(PassKind::Drop) {
                    // The switches keep the lanes and the SA its answers until the new
                    // entries are written.
                    *unpoisoned(plugin.next_pass_after.lock()) = Some(pending.drain);
                } else if kind == Some(PassKind::Lanes) {
                    // OpenSM writes the new lanes (update_sl2vl) after this callback.
                    plugin.set_answers(r.qos.clone());
                    *unpoisoned(plugin.next_pass_after.lock()) = Some(pending.drain);
                } else {
                    plugin.set_answers(r.qos.clone());
                    if let (Some(dir), Some(answers)) = (&pending.path_sl_dump, &r.qos) {
                        write_path_sl_dump(dir, answers);
                    }
                }
                plugin.log_sweep(
                    &SweepRecord::written(r, pending.outcome, pending.started.elapsed(), now())
                        .with_cabling(pending.cabling)
                        .with_pass(figures),
                );
                0
            }
            Ok(Err(message)) => {
                plugin.set_answers(None);
                // SAFETY: as above.
                unsafe { clear(&pending.switches) };
                log::error!("{message}; tables cleared, falling back to the next routing engine");
                plugin.log_sweep(&SweepRecord::failed(
                    &message,
                    pending.started.elapsed(),
                    now(),
                ));
                NEXT_ENGINE
            }
            Err(payload) => {
                plugin.set_answers(None);
                if written {
                    // SAFETY: as above.
                    unsafe { clear(&pending.switches) };
                }
                plugin.log_sweep(&panicked(payload.as_ref(), pending.started));
                std::panic::resume_unwind(payload)
            }
        }
    })
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
        let answers = unpoisoned(plugin.answers.read());
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
        let Some(answers) = unpoisoned(plugin.answers.read()).clone() else {
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
        // SAFETY: `port` is live (above), `table` is the row OpenSM sends next (non-null); the
        // daemon's subnet is read under OpenSM's lock, which the QoS set-up holds.
        let sent = unsafe {
            let forced = (*port).need_update != 0 || (*plugin.osm.0).subn.need_update != 0;
            forced || sl2vl::holds_other_row(port, in_port, (*table).raw_vl_by_sl)
        };
        plugin.sl2vl_wire.count(sent);
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
            match catch_unwind(AssertUnwindSafe(|| plugin.tree_of_routing(mlid, &members))) {
                Ok(Ok(p)) => Ok(p),
                Ok(Err(why)) => Err(why),
                Err(_) => Err("internal error (panic) building the tree".to_string()),
            };
        let programmed = programmed.or_else(|why| {
            log::warn!("multicast MLID {mlid:#06x}: {why}; a plain shortest-path tree instead");
            // SAFETY: under OpenSM's lock (above).
            unsafe { mft::plain_tree(plugin.osm.0, mlid, &members, &why) }
        });
        let programmed = programmed.map(|p| plugin.staged_tree(mlid, p));
        let result = programmed.and_then(|p| {
            // SAFETY: `plugin.osm` is the daemon's; called under its lock (above).
            let set = unsafe { mft::set(plugin.osm.0, mlid, &p.entries) };
            // OpenSM cleared the group's rows before asking: they hold what was set, if any.
            let held = if set.is_ok() { &p.entries[..] } else { &[] };
            plugin.record_tree(mlid, &members, held);
            set.map(|()| p.line)
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
