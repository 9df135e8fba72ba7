//! What the plugin reads of the daemon that loads it: its options (the plugin's configuration
//! file), its version, and whether its `osm_opensm_t` has the layout of the headers the plugin
//! was built with — checked before anything else is read through it.

use std::ffi::CStr;

use opensm_sys::{OSM_VERSION, osm_opensm_t};

/// The daemon's `event_plugin_options` (the plugin's configuration file), if set.
///
/// # Safety
/// `osm` must be the daemon's `osm_opensm_t`.
pub(crate) unsafe fn event_plugin_options(osm: *mut osm_opensm_t) -> Option<String> {
    // SAFETY: `osm` is the daemon's (caller); `event_plugin_options` is NULL or a C string
    // owned by the options, unchanged while the plugin runs.
    unsafe {
        let p = (*osm).subn.opt.event_plugin_options;
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// The OpenSM version the plugin runs in: the daemon loads the plugin only if its own version
/// string equals the one the plugin was built with (`osm_version` of the table).
pub(crate) fn opensm_version() -> String {
    String::from_utf8_lossy(&OSM_VERSION[..OSM_VERSION.len() - 1]).into_owned()
}

/// Whether `osm` looks like the `osm_opensm_t` these bindings describe: the back-pointers
/// OpenSM sets in `osm_subn_init` and `osm_sm_init` must point where our layout says.
///
/// # Safety
/// `osm` must point at the daemon's `osm_opensm_t` (OpenSM passes it to `create`).
pub(crate) unsafe fn layout_matches(osm: *mut osm_opensm_t) -> bool {
    // SAFETY: `osm` is the daemon's (caller); these reads stay inside `sizeof(osm_opensm_t)`
    // as the headers give it, and OpenSM's struct is at least as large if the layouts agree.
    unsafe {
        (*osm).subn.p_osm == osm
            && (*osm).sm.p_subn == &raw mut (*osm).subn
            && (*osm).sm.p_log == &raw mut (*osm).log
    }
}
