//! The plugin's readers as fuzz targets: what OpenSM hands the plugin from files an admin or a
//! crash left behind — its configuration (`event_plugin_options`), and the saved routing session
//! it settles again at start and the saved multicast trees it takes as what the switches hold
//! (one target for the two files of the cache directory: the same JSON header, one input for
//! both readers). Inputs that a reader refuses must be refused with a message; none
//! may panic inside OpenSM.
//!
//! Each returns the reader's outcome, and the fuzz harness checks it as it checks every target
//! (`fuzz_harness::checked`). The libFuzzer binaries (`fuzz/libfuzzer`, targets `plugin_config`
//! and `saved_session`) call these; the unit tests below replay their corpus and regressions (a binary outside this
//! crate's unit tests would link the OpenSM entry points, whose symbols exist only in opensm).

use crate::config::Config;
use crate::{saved_session, saved_trees, subnet};

/// Reads `text` as the plugin's configuration, then derives what every sweep derives from it.
///
/// # Errors
/// What the reader refused, as its message says it.
pub fn read_config(text: &str) -> Result<(), String> {
    let config = Config::parse("layered.yaml", text).map_err(|e| e.to_string())?;
    let _ = config.summary();
    let _ = config.routing(2);
    Ok(())
}

/// Reads `text` as the saved multicast trees, then takes them as held trees, as a restart does.
///
/// # Errors
/// What the reader refused, as its message says it.
pub fn read_saved_trees(text: &str) -> Result<(), String> {
    let saved = saved_trees::parse(saved_trees::FILE_NAME, text).map_err(|e| e.to_string())?;
    let mut held = crate::multicast::HeldTrees::default();
    held.restore(
        saved
            .groups
            .into_iter()
            .map(|g| (g.mlid, g.members, g.entries)),
    );
    let _ = saved_trees::SavedTrees::of(&held);
    Ok(())
}

/// Reads `text` as the saved routing session, then rebuilds each saved step's subnet, as a
/// restart does before it settles the steps again (and, like it, stops at the first that fails).
///
/// # Errors
/// What the reader or the rebuild refused, as its message says it.
pub fn read_saved_session(text: &str) -> Result<(), String> {
    let session =
        saved_session::parse(saved_session::FILE_NAME, text).map_err(|e| e.to_string())?;
    for step in &session.steps {
        subnet::build_fabric("opensm", &step.subnet).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn plugin_config_inputs_are_read() {
        let (corpus, regressions) = fuzz_harness::replay("plugin_config", |text| {
            fuzz_harness::checked(super::read_config(text))
        });
        println!("plugin_config: {corpus} corpus inputs and {regressions} regressions read");
    }

    #[test]
    fn saved_session_inputs_are_read() {
        let (corpus, regressions) = fuzz_harness::replay("saved_session", |text| {
            fuzz_harness::checked(super::read_saved_session(text));
            fuzz_harness::checked(super::read_saved_trees(text));
        });
        println!("saved_session: {corpus} corpus inputs and {regressions} regressions read");
    }
}
