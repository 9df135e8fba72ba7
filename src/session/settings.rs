//! The deadlock settings a routing is made with: the configured scheme and VLs, clamped to
//! what the subnet can carry (the VLs every port supports, the subnet manager's limit) and
//! switched off when the subnet manager will not program SL-to-VL tables.

use crate::deadlock::{Scheme, Shortage};
use crate::options::{DeadlockMode, ShortagePolicy};

/// How the engine makes the routing deadlock-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockSettings {
    /// The scheme(s) to use.
    pub mode: DeadlockMode,
    /// Data VLs available.
    pub vls: u8,
    /// What to do when they do not suffice.
    pub shortage: Shortage,
}

impl DeadlockSettings {
    /// The schemes to try, in order (none: no deadlock avoidance).
    pub fn schemes(&self) -> Vec<Scheme> {
        self.mode
            .scheme_choice()
            .map_or_else(Vec::new, |choice| choice.schemes(self.vls))
    }
}

/// The data VLs a port with PortInfo VLCap `vl_cap` supports (0 for an unknown encoding).
pub fn data_vls(vl_cap: u8) -> u8 {
    match vl_cap {
        1 => 1,
        2 => 2,
        3 => 4,
        4 => 8,
        5 => 15,
        _ => 0,
    }
}

/// What the caller configured, before the subnet's limits apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    /// The deadlock mode asked for.
    pub mode: DeadlockMode,
    /// The data VLs asked for (`None`: as many as the ports support).
    pub vls: Option<u8>,
    /// What to do when the VLs do not suffice.
    pub shortage: ShortagePolicy,
}

impl DeadlockSettings {
    /// The settings for a subnet: the `wanted` mode unless the subnet manager will not program
    /// SL-to-VL tables (`qos` false: a scheme would only be a claim, so none is applied and the
    /// log says so), the data VLs every port supports (`port_vls`, 8 when no port reports
    /// them) within the subnet manager's limit `max_op_vls` (a PortInfo VLCap encoding, 0:
    /// none), or the wanted number if fewer (a warning when more were wanted).
    pub fn for_subnet(wanted: Wanted, port_vls: Option<u8>, max_op_vls: u8, qos: bool) -> Self {
        let supported = port_vls.unwrap_or(8).min(match data_vls(max_op_vls) {
            0 => 15,
            v => v,
        });
        let vls = match wanted.vls {
            Some(asked) if asked > supported => {
                log::warn!(
                    "vls {asked} configured, but the ports support {supported} data VLs: using \
                     {supported}"
                );
                supported
            }
            Some(asked) => asked,
            None => supported,
        };
        let mode = if !qos && wanted.mode != DeadlockMode::None {
            log::warn!(
                "qos is FALSE in opensm.conf: OpenSM programs no SL-to-VL tables, so the routing \
                 is NOT deadlock-free; set `qos TRUE` (or `deadlock: none` in the plugin's \
                 configuration to accept this)"
            );
            DeadlockMode::None
        } else {
            wanted.mode
        };
        DeadlockSettings {
            mode,
            vls,
            shortage: wanted.shortage.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(mode: DeadlockMode, vls: Option<u8>) -> Wanted {
        Wanted {
            mode,
            vls,
            shortage: ShortagePolicy::Fail,
        }
    }

    #[test]
    fn vlcap_encodings_decode_to_data_vls() {
        let decoded: Vec<u8> = (0..=6).map(data_vls).collect();
        assert_eq!(decoded, [0, 1, 2, 4, 8, 15, 0]);
    }

    #[test]
    fn unconfigured_vls_are_what_every_port_supports() {
        let s = DeadlockSettings::for_subnet(wanted(DeadlockMode::Auto, None), Some(4), 0, true);
        assert_eq!((s.mode, s.vls), (DeadlockMode::Auto, 4));
    }

    #[test]
    fn ports_that_report_no_vls_count_as_eight() {
        let s = DeadlockSettings::for_subnet(wanted(DeadlockMode::Auto, None), None, 0, true);
        assert_eq!(s.vls, 8);
    }

    #[test]
    fn the_subnet_managers_limit_clamps_the_ports_vls() {
        // max_op_vls 3 is VLCap "VL0-3": 4 data VLs.
        let s = DeadlockSettings::for_subnet(wanted(DeadlockMode::Auto, None), Some(8), 3, true);
        assert_eq!(s.vls, data_vls(3));
    }

    #[test]
    fn more_vls_than_supported_are_clamped() {
        let s =
            DeadlockSettings::for_subnet(wanted(DeadlockMode::Dfsssp, Some(8)), Some(2), 0, true);
        assert_eq!(s.vls, 2);
    }

    #[test]
    fn fewer_vls_than_supported_are_kept() {
        let s =
            DeadlockSettings::for_subnet(wanted(DeadlockMode::Dfsssp, Some(2)), Some(8), 0, true);
        assert_eq!(s.vls, 2);
    }

    #[test]
    fn without_qos_the_scheme_is_dropped() {
        let s =
            DeadlockSettings::for_subnet(wanted(DeadlockMode::PortPair, None), Some(8), 0, false);
        assert_eq!(s.mode, DeadlockMode::None);
        assert!(s.schemes().is_empty());
    }

    #[test]
    fn without_qos_no_scheme_stays_none() {
        let s = DeadlockSettings::for_subnet(wanted(DeadlockMode::None, None), Some(8), 0, false);
        assert_eq!(s.mode, DeadlockMode::None);
    }

    #[test]
    fn the_shortage_policy_is_carried_over() {
        let w = Wanted {
            shortage: ShortagePolicy::FewerLayers,
            ..wanted(DeadlockMode::Auto, None)
        };
        let s = DeadlockSettings::for_subnet(w, Some(8), 0, true);
        assert_eq!(s.shortage, Shortage::FewerLayers);
    }
}
