//! The plugin's readers as fuzz targets: what OpenSM hands the plugin from files an admin or a
//! crash left behind — its configuration (`event_plugin_options`) and the saved routing session
//! it settles again at start. Inputs that a reader refuses must be refused with a message; none
//! may panic inside OpenSM.
//!
//! The libFuzzer binaries (`fuzz/libfuzzer`, targets `plugin_config` and `saved_session`) call
//! these; the unit tests below replay their corpus and regressions (a binary outside this
//! crate's unit tests would link the OpenSM entry points, whose symbols exist only in opensm).

use crate::config::Config;
use crate::{saved_session, subnet};

/// Reads `text` as the plugin's configuration, then derives what every sweep derives from it.
pub fn read_config(text: &str) {
    match Config::parse("layered.yaml", text) {
        Ok(config) => {
            let _ = config.summary();
            let _ = config.routing(2);
        }
        Err(e) => refused(e),
    }
}

/// Reads `text` as the saved routing session, then rebuilds each saved step's subnet, as a
/// restart does before it settles the steps again.
pub fn read_saved_session(text: &str) {
    match saved_session::parse(saved_session::FILE_NAME, text) {
        Ok(session) => {
            for step in &session.steps {
                if let Err(e) = subnet::build_fabric("opensm", &step.subnet) {
                    refused(e);
                }
            }
        }
        Err(e) => refused(e),
    }
}

/// An error must say what went wrong.
fn refused(error: impl std::fmt::Display) {
    assert!(
        !error.to_string().trim().is_empty(),
        "an error without a message"
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn plugin_config_inputs_are_read() {
        let (corpus, regressions) = fuzz_harness::replay("plugin_config", super::read_config);
        println!("plugin_config: {corpus} corpus inputs and {regressions} regressions read");
    }

    #[test]
    fn saved_session_inputs_are_read() {
        let (corpus, regressions) =
            fuzz_harness::replay("saved_session", super::read_saved_session);
        println!("saved_session: {corpus} corpus inputs and {regressions} regressions read");
    }
}
