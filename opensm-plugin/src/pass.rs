//! Which pass of a change to write now, and writing it: what the switches hold, read from
//! OpenSM's confirmed tables (and [`crate::sent`] where a block was not confirmed), staged
//! against the routing computed by the core (`ibfabric::session::transition`), with the lanes
//! of the answers in force as what the ports hold and the multicast entries the plugin set last
//! as what the switches replicate by; the pass written, recorded and logged, and the trees it
//! allows kept for the tree requests of its sweep.

use std::sync::Arc;
use std::time::Instant;

use ibfabric::routing::{ForwardingTables, LidTable, NO_PORT};
use ibfabric::session::transition::{Staging, Tables, TreeChange, stage, stage_with_proof};
use ibfabric::session::{PassFigures, PassKind};
use opensm_sys::osm_switch_t;

use crate::commit::{Pending, SwitchPtr, write};
use crate::mft;
use crate::plugin::{Plugin, unpoisoned};
use crate::sent::BLOCK;

/// Writes the pass of `pending` that is due: with staged transitions, the drop pass when
/// changed entries still forward (said in the log), else the routing; records what was
/// written. The figures of the pass, with staged transitions.
///
/// # Safety
/// As [`write`]: from `ucast_build_fwd_tables`, under OpenSM's lock.
pub(crate) unsafe fn write_pass(
    plugin: &Plugin,
    pending: &Pending,
    written: &mut bool,
) -> Result<Option<PassFigures>, String> {
    // No pass holds the trees back unless this one says so (below).
    *unpoisoned(plugin.staged_trees.lock()) = None;
    if !pending.staged {
        // SAFETY: as the caller's.
        return unsafe { write(pending, None, written) }.map(|()| None);
    }
    let planning = Instant::now();
    // SAFETY: as the caller's.
    let plan = unsafe { plan(plugin, pending) }?;
    let planned_ms = planning.elapsed().as_millis();
    let mut figures = plan.staging.figures();
    // SAFETY: as the caller's.
    unsafe { write(pending, plan.staging.first_pass.as_ref(), written) }?;
    let (changed, working) = (plan.staging.changed, plan.staging.dropped_working);
    let for_lanes = plan.staging.dropped_for_lanes;
    let unproven = plan.staging.last_pass_unproven;
    // Until the last pass, the groups' trees (built after this callback) keep to the entries
    // the first pass allows.
    *unpoisoned(plugin.staged_trees.lock()) = plan.staging.first_pass.as_ref().map(|_| {
        let first = plan.staging.first_trees.clone().unwrap_or_default();
        (Arc::clone(&pending.routed), first)
    });
    let trees = match figures.trees_shrunk {
        0 => String::new(),
        shrunk => {
            format!("; {shrunk} multicast entries shrunk to what the old and the new trees share")
        }
    };
    // SAFETY: as the caller's, after the write.
    figures.blocks = unsafe { record(plugin, pending, plan) };
    match figures.kind {
        PassKind::Drop => log::info!(
            "staged change, drop pass: {} of {changed} changed entries dropped{} ({working} of \
             the dropped still carried traffic), {} moved where proven safe, in {} LFT blocks \
             (planned in {planned_ms} ms); the new entries follow once every switch confirmed \
             and {} ms passed{trees}",
            figures.dropped - for_lanes,
            if for_lanes > 0 {
                format!(
                    ", and {for_lanes} unchanged ones leaving through a port whose SL-to-VL \
                     row changes"
                )
            } else {
                String::new()
            },
            figures.moved,
            figures.blocks,
            pending.drain.as_millis()
        ),
        PassKind::Lanes => log::info!(
            "staged change, lanes pass: the SL-to-VL tables change while no route crosses a \
             port whose lane changes; the new entries follow once every switch confirmed and \
             {} ms passed{trees}",
            pending.drain.as_millis()
        ),
        PassKind::Install if changed > 0 => log::info!(
            "staged change, last pass: {changed} entries written ({} moved at once, proven \
             safe) in {} LFT blocks (planned in {planned_ms} ms)",
            figures.moved,
            figures.blocks
        ),
        PassKind::Install => {}
    }
    if unproven {
        log::warn!(
            "staged change: the SL-to-VL tables change with the last pass, and some mixture of \
             old and new lanes on the new routes could not be proven deadlock-free"
        );
    }
    // A pass that changes nothing (the subnet unchanged, every block confirmed) is no pass of
    // a change: the sweep log and the metrics count only passes that write.
    let wrote = changed > 0 || figures.kind != PassKind::Install || figures.blocks > 0;
    Ok(wrote.then_some(figures))
}

/// The pass to write, and what every switch was believed to hold before it (recorded with
/// what is written, see [`record`]).
pub(crate) struct Plan {
    pub(crate) staging: Staging,
    /// Per switch: GUID, the table it confirmed, and what it may hold.
    held: Vec<(u64, Vec<u8>, Vec<u8>)>,
}

/// A switch's node GUID and the table OpenSM last had confirmed by it.
///
/// # Safety
/// `sw` is a live switch object, under OpenSM's lock.
unsafe fn confirmed(sw: *mut osm_switch_t) -> (u64, Vec<u8>) {
    // SAFETY: live switch (caller): `p_node` is its node, `lft` has `lft_size` bytes
    // (osm_switch.c: alloc_lft) or is NULL before the first routing.
    unsafe {
        let guid = u64::from_be((*(*sw).p_node).node_info.node_guid);
        let lft = (*sw).lft;
        let table = if lft.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(lft, usize::from((*sw).lft_size)).to_vec()
        };
        (guid, table)
    }
}

/// Stages the change from what the switches of `pending` hold to its routing.
///
/// # Safety
/// The switch objects of `pending` are live, under OpenSM's lock (`ucast_build_fwd_tables`).
pub(crate) unsafe fn plan(plugin: &Plugin, pending: &Pending) -> Result<Plan, String> {
    let routed = &pending.routed;
    let fabric = &routed.multicast.fabric;
    let lids = LidTable::from_fabric(fabric).map_err(|e| format!("staged change: {e}"))?;
    let sent = unpoisoned(plugin.sent.lock());
    let mut held = ForwardingTables::for_lids(fabric, &lids);
    let mut believed = Vec::with_capacity(pending.switches.len());
    for ((id, _), &SwitchPtr(sw)) in routed.switches.iter().zip(&pending.switches) {
        // SAFETY: live switch (caller).
        let (guid, table) = unsafe { confirmed(sw) };
        let row = sent.believed(guid, &table);
        for (lid, &port) in row.iter().enumerate() {
            if port != NO_PORT {
                let lid = u16::try_from(lid).map_err(|_| "LFT longer than 65536 LIDs")?;
                held.set(*id, lid, port);
            }
        }
        believed.push((guid, table, row));
    }
    drop(sent);
    // The lanes the ports hold (the answers in force, which OpenSM programmed) and the new
    // ones: with both known, the verifier may spare working routes and checks a lane change.
    // The groups' trees as the switches hold them and as the new routing builds them; the
    // groups OpenSM deleted since are forgotten (it cleared their rows).
    // SAFETY: under OpenSM's lock (caller).
    unpoisoned(plugin.held_trees.lock()).retain(|mlid| unsafe { mft::exists(plugin.osm.0, mlid) });
    let (held_trees, new_trees) = plugin.trees_for_plan(routed);
    let old = unpoisoned(plugin.answers.read()).clone();
    let staging = match (old, &routed.qos) {
        (Some(old), Some(new)) => stage_with_proof(
            fabric,
            &lids,
            Tables {
                forwarding: &held,
                lanes: &old.lanes_on(fabric),
                trees: &held_trees,
            },
            Tables {
                forwarding: &routed.tables,
                lanes: new.tables(),
                trees: &new_trees,
            },
            pending.spare_working,
        ),
        // No lanes of ours on one side: the plain plan, the trees shrunk with its first pass.
        _ => {
            let trees = TreeChange {
                held: &held_trees,
                target: &new_trees,
            };
            let first = trees.first_pass(fabric, None);
            let plain = stage(fabric, &lids, &held, &routed.tables);
            trees.complete(fabric, &held, first, true, plain)
        }
    };
    Ok(Plan {
        staging,
        held: believed,
    })
}

/// Records what was just written to every switch (`new_lft`, which OpenSM sends block by
/// block where it differs from the confirmed table) next to what it was believed to hold;
/// returns the number of blocks OpenSM will send.
///
/// # Safety
/// As [`plan`], after the write of the same pass.
pub(crate) unsafe fn record(plugin: &Plugin, pending: &Pending, plan: Plan) -> usize {
    let mut blocks = 0;
    let mut passes = Vec::with_capacity(plan.held.len());
    for ((guid, confirmed, before), &SwitchPtr(sw)) in plan.held.into_iter().zip(&pending.switches)
    {
        // SAFETY: live switch (caller); `new_lft` has `lft_size` bytes
        // (osm_switch.c: osm_switch_prepare_path_rebuild).
        let written = unsafe {
            let new_lft = (*sw).new_lft;
            if new_lft.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(new_lft, usize::from((*sw).lft_size)).to_vec()
            }
        };
        blocks += written
            .chunks(BLOCK)
            .enumerate()
            .filter(|&(b, new)| confirmed.get(b * BLOCK..b * BLOCK + new.len()) != Some(new))
            .count();
        passes.push((guid, before, written));
    }
    unpoisoned(plugin.sent.lock()).record(passes);
    blocks
}
