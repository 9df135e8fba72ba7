//! Committing a computed routing to OpenSM: every entry checked against the switches' tables,
//! then written into their `new_lft` and hop tables (undone whole on failure), the lines that
//! report it, and the path SL dump.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ibfabric::routing::{ForwardingTables, NO_PORT};
use ibfabric::session::{QosAnswers, Routed, prefix_balance_line};
use opensm_sys::{OSM_NO_PATH, osm_switch_clear_hops, osm_switch_set_hops, osm_switch_t};

use crate::config::Fault;
use crate::sweep_log::{CablingCheck, Outcome};

/// A switch object of OpenSM's subnet, as read in `build_lid_matrices`.
#[derive(Clone, Copy)]
pub(crate) struct SwitchPtr(pub(crate) *mut osm_switch_t);

// SAFETY: the pointer is only dereferenced in `write` and `clear`, from
// `ucast_build_fwd_tables` of the routing pass that read it, which OpenSM runs under the same
// exclusive hold of its lock as `build_lid_matrices` (osm_ucast_mgr.c:
// osm_ucast_mgr_process); moving the pointer between threads changes nothing.
unsafe impl Send for SwitchPtr {}

/// A computed routing and the switch objects to write it to (in fabric switch order).
pub(crate) struct Pending {
    pub(crate) routed: Arc<Routed>,
    pub(crate) switches: Vec<SwitchPtr>,
    pub(crate) started: Instant,
    pub(crate) reused: bool,
    /// What the pass did, for the sweep log.
    pub(crate) outcome: Outcome,
    /// The cabling plan's check of this pass, for the sweep log.
    pub(crate) cabling: Option<CablingCheck>,
    /// OpenSM's dump directory, when the path SLs are to be written there.
    pub(crate) path_sl_dump: Option<PathBuf>,
    /// A fault to inject while writing (testing aid).
    pub(crate) fault: Option<Fault>,
    /// Whether a change is written in passes (`staged_transitions`).
    pub(crate) staged: bool,
    /// The wait between a confirmed drop pass and the next pass.
    pub(crate) drain: Duration,
    /// Whether the transition verifier may spare working routes (`spare_working_routes`).
    pub(crate) spare_working: bool,
    /// The threads the routing ran on (`routing_threads`).
    pub(crate) threads: usize,
}

/// Checks every entry against the switches' tables, then writes them all: the routing's
/// entries, or with `drop_pass` that pass's tables (the routing's hops in both cases).
///
/// # Safety
/// The switch objects must be live and not used by anyone else during the call.
pub(crate) unsafe fn write(
    pending: &Pending,
    drop_pass: Option<&ForwardingTables>,
    written: &mut bool,
) -> Result<(), String> {
    for ((id, entries), &SwitchPtr(sw)) in pending.routed.switches.iter().zip(&pending.switches) {
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
        if let Some(row) = drop_pass.map(|t| t.table(*id))
            && let Some(port) = row.iter().find(|&&p| p != NO_PORT && p >= num_ports)
        {
            return Err(format!("port {port} beyond the switch's {num_ports}"));
        }
    }
    if pending.fault == Some(Fault::WriteError) {
        return Err("debug_fault write_error is set in the configuration".into());
    }
    *written = true;
    let half = pending.switches.len() / 2;
    for (i, ((id, entries), &SwitchPtr(sw))) in pending
        .routed
        .switches
        .iter()
        .zip(&pending.switches)
        .enumerate()
    {
        if i == half && pending.fault == Some(Fault::WritePanic) {
            panic!("debug_fault write_panic is set in the configuration");
        }
        if let Some(row) = drop_pass.map(|t| t.table(*id)) {
            // SAFETY: live switch (caller); `new_lft` has `lft_size` bytes (osm_switch.c:
            // osm_switch_prepare_path_rebuild), and at most that many are copied.
            unsafe {
                let len = row.len().min(usize::from((*sw).lft_size));
                std::ptr::copy_nonoverlapping(row.as_ptr(), (*sw).new_lft, len);
            }
        }
        for e in entries {
            if drop_pass.is_none() {
                // SAFETY: live switch (caller); `e.lid < lft_size` was checked above, and
                // `new_lft` has `lft_size` bytes (osm_switch.c: osm_switch_prepare_path_rebuild).
                unsafe { *(*sw).new_lft.add(usize::from(e.lid)) = e.port };
            }
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
pub(crate) unsafe fn clear(switches: &[SwitchPtr]) {
    for &SwitchPtr(sw) in switches {
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

/// The log lines of a routing written: the layers given up, what was written and how fast,
/// the repair, the prefix balance, the deadlock scheme and its guarantee.
pub(crate) fn log_written(pending: &Pending) {
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
            "routed {} switches, {} LIDs, {} layers in {} ms (core {} ms on {} thread{})",
            r.switches.len(),
            r.lids,
            r.layers,
            pending.started.elapsed().as_millis(),
            r.elapsed.as_millis(),
            pending.threads,
            if pending.threads == 1 { "" } else { "s" }
        );
    }
    if let Some(repair) = &r.repair {
        log::info!("{repair}");
    }
    log::info!("{}", prefix_balance_line(&r.prefix_balance));
    log::info!("{}", r.deadlock_summary);
    if let Some(guarantee) = &r.guarantee {
        log::info!("{guarantee}");
    }
}

/// Writes every pair's SL to `layered-path-sl.dump` in `dir`, atomically (a temporary file
/// renamed into place), so a reader never sees half a table. Failures are logged, not fatal.
pub(crate) fn write_path_sl_dump(dir: &Path, answers: &QosAnswers) {
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
