//! One routing pass of `build_lid_matrices`: OpenSM's options and the plugin's configuration
//! read, the subnet copied and checked against the cabling plan, the deadlock settings it
//! allows, and the core's routing session asked to reuse, repair or route.

use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::time::Instant;

use ibfabric::session::{DeadlockSettings, Decision, Request, Wanted};

use crate::commit::{Pending, SwitchPtr};
use crate::config::{Config, Fault};
use crate::plugin::{Plugin, unpoisoned};
use crate::subnet::{self, build_fabric, canonical_records};
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
    let deadlock = DeadlockSettings::for_subnet(
        Wanted {
            mode: config.deadlock,
            vls: config.vls,
            shortage: config.on_vl_shortage,
        },
        subnet::common_vls(&snapshot.records),
        opensm.max_op_vls,
        opensm.qos,
    );
    let fault = config.fault();
    let path_sl_dump = config
        .path_sl_dump
        .then(|| PathBuf::from(opensm.dump_dir.unwrap_or_else(|| "/var/log".into())));
    let request = Request {
        fabric,
        subnet: canonical_records(&snapshot.records),
        routing: config.routing(opensm.lmc),
        settings: (config, opensm.lmc),
        deadlock,
        reoptimise,
    };
    let settled = unpoisoned(plugin.session.lock())
        .settle(request)
        .map_err(|e| e.to_string())?;
    let routed = settled.routed;
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
    })
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
