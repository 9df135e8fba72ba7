//! Generates the bindings from the installed OpenSM headers (`libopensm-dev`), so that the
//! plugin's `osm_version` string and struct layouts are those of the daemon that loads it.

use std::env;
use std::path::PathBuf;

/// Where Debian's `libopensm-dev` installs the headers (they include `<complib/...>`,
/// `<iba/...>` and `<opensm/...>` relative to it).
const INCLUDE_DIR: &str = "/usr/include/infiniband";

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    // The headers are read from OPENSM_INCLUDE_DIR when it is set: rebuild when it changes,
    // and watch the directory actually read, not the default one.
    println!("cargo:rerun-if-env-changed=OPENSM_INCLUDE_DIR");
    let include = env::var("OPENSM_INCLUDE_DIR").unwrap_or_else(|_| INCLUDE_DIR.to_string());
    println!("cargo:rerun-if-changed={include}/opensm");

    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_arg(format!("-I{include}"))
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        // The version string the daemon compares with `osm_event_plugin.osm_version`.
        .allowlist_var("OSM_VERSION")
        // "No route" in an LFT and in a hop table.
        .allowlist_var("OSM_NO_PATH")
        // Log levels for `osm_log`.
        .allowlist_var("OSM_LOG_(ERROR|INFO|VERBOSE|DEBUG)")
        // Node types of `ib_node_info_t::node_type`.
        .allowlist_var("IB_NODE_TYPE_(CA|SWITCH|ROUTER)")
        // The table OpenSM looks up with dlsym("osm_event_plugin").
        .allowlist_type("osm_event_plugin_t")
        // The daemon: `subn` (switch and node maps, options), `sm`, `log`; read in callbacks.
        .allowlist_type("osm_opensm_t")
        // What `setup` fills and what `osm_register_external_routing_engine` takes.
        .allowlist_type("osm_routing_engine_t")
        .allowlist_type("external_routing_engine_module_t")
        // The subnet objects the snapshot reads and the LFTs are written to.
        .allowlist_type("osm_switch_t")
        .allowlist_type("osm_node_t")
        .allowlist_type("osm_physp_t")
        .allowlist_type("osm_port_t")
        // A multicast group's members, handed to `mcast_build_stree` per MLID: the box's
        // groups, each group's member ports.
        .allowlist_type("osm_mgrp_box_t")
        .allowlist_type("osm_mgrp_t")
        .allowlist_type("osm_mcm_port_t")
        // What `mcast_build_stree` returns (IB_SUCCESS, IB_ERROR).
        .allowlist_var("_ib_api_status_t_IB_(SUCCESS|ERROR)")
        // The first multicast LID (MFT row 0).
        .allowlist_var("IB_LID_MCAST_START_HO")
        // Sets one port of an MLID in a switch's MFT (lives in the opensm executable).
        .allowlist_function("osm_mcast_tbl_set")
        // Registers the `layered` engine from `create` (lives in the opensm executable).
        .allowlist_function("osm_register_external_routing_engine")
        // Asks the state manager for a sweep: the next pass of a staged change (lives in the
        // opensm executable).
        .allowlist_function("osm_sm_sweep")
        // The event that says a routing pass was confirmed on every switch, whether a heavy
        // sweep (its multicast trees and the end of the sweep follow) or a reroute made it,
        // and the event at the end of a heavy sweep.
        .allowlist_var("osm_epi_event_id_t_OSM_EVENT_ID_UCAST_ROUTING_DONE")
        .allowlist_type("osm_epi_ucast_routing_flags_t")
        .allowlist_var("osm_epi_event_id_t_OSM_EVENT_ID_SUBNET_UP")
        // Hop tables (lid matrices) next to the LFTs; multicast and dumps read them.
        .allowlist_function("osm_switch_set_hops")
        .allowlist_function("osm_switch_clear_hops")
        // The daemon's logger (libopensm); the plugin calls it only with a "%.*s" format.
        .allowlist_function("osm_log")
        .derive_default(false)
        // The headers' robodoc comments are not Rust docs.
        .generate_comments(false)
        .layout_tests(true)
        .generate()
        .expect("bindgen over the OpenSM headers (are libopensm-dev and libclang-dev installed?)");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR set by cargo"));
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("write bindings.rs");
}
