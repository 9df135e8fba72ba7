//! Whether a plan and the observed fabric belong together at all.
//!
//! Binding falls back to the cabling graph when no device can be identified, which is right
//! for a site without names but turns a plan checked against *another* fabric into hundreds
//! of "move" and "remove" actions — a technician who follows them rips out a working fabric.
//! So before any action list is shown, enough of the plan's devices must have been identified
//! by evidence that names them (node-name-map, plan GUID, description), and an `iblinkinfo`
//! dump must describe the same nodes as the `ibnetdiscover` dumps.
//!
//! The share is taken of the plan's devices or of the fabric's nodes, whichever are fewer: mid
//! wiring, a dump holds only the racks cabled so far, and every node in it should be named.

use std::collections::HashSet;

use super::{BoundBy, Verification};
use crate::io::LinkInfo;
use crate::plan::Plan;
use crate::topology::Fabric;

/// The default least share, in percent, of identified devices (see [`check_identified`]).
pub const DEFAULT_MIN_IDENTIFIED_PERCENT: u8 = 50;

/// Checks that at least `min_percent` % of the plan's devices — or of the fabric's nodes, when
/// it has fewer — were bound by node-name-map, plan GUID or description. `0` accepts anything.
///
/// # Errors
/// One line saying how many were identified, how many were needed, and what to do.
pub fn check_identified(
    plan: &Plan,
    fabric: &Fabric,
    verification: &Verification,
    min_percent: u8,
) -> Result<(), String> {
    let identified: usize = verification
        .binding
        .counts()
        .iter()
        .filter(|(how, _)| *how != BoundBy::Cabling)
        .map(|(_, n)| n)
        .sum();
    let nodes = fabric
        .nodes()
        .iter()
        .filter(|n| !super::binding::is_excluded(n))
        .count();
    let (base, of_what) = if nodes < plan.devices.len() {
        (nodes, format!("the fabric's {nodes} nodes"))
    } else {
        let devices = plan.devices.len();
        (devices, format!("the plan's {devices} devices"))
    };
    if identified * 100 >= usize::from(min_percent) * base {
        return Ok(());
    }
    Err(format!(
        "the plan and the fabric do not belong together: {identified} of {of_what} \
         identified by node-name-map, GUID or description, at least {min_percent}% needed \
         (give the site's node-name-map, or --min-identified 0 to bind by cabling alone)"
    ))
}

/// Checks that an `iblinkinfo` dump describes the fabric of the `ibnetdiscover` dumps: at
/// least half of the nodes it lists are in the fabric, by node or port GUID. A dump without
/// any GUID (it cannot be matched) passes.
///
/// # Errors
/// One line saying how many of its nodes the fabric has.
pub fn check_link_info(fabric: &Fabric, info: &LinkInfo) -> Result<(), String> {
    let port_guids: HashSet<u64> = fabric
        .nodes()
        .iter()
        .flat_map(|n| n.ports.iter().map(|p| p.guid.0))
        .collect();
    let mut listed: HashSet<u64> = HashSet::new();
    let mut known: HashSet<u64> = HashSet::new();
    for port in &info.ports {
        let Some(key) = port.node_guid.or(port.port_guid) else {
            continue;
        };
        listed.insert(key.0);
        let in_fabric = port
            .node_guid
            .is_some_and(|g| fabric.node_by_guid(g).is_some())
            || port.port_guid.is_some_and(|g| port_guids.contains(&g.0));
        if in_fabric {
            known.insert(key.0);
        }
    }
    if known.len() * 2 >= listed.len() {
        return Ok(());
    }
    Err(format!(
        "describes another fabric: {} of its {} nodes are in the ibnetdiscover dumps",
        known.len(),
        listed.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build::{PlanOptions, plan_for};
    use crate::verify::{Observation, verify};

    fn check(plan: &Plan, fabric: &Fabric, min_percent: u8) -> Result<(), String> {
        let observation = Observation {
            fabric,
            link_info: None,
            names: None,
        };
        check_identified(plan, fabric, &verify(plan, &observation), min_percent)
    }

    /// The plan without GUIDs, and its fabric with `anonymous` of its nodes described by
    /// nothing that names them.
    fn anonymised(anonymous: usize) -> (Plan, Fabric) {
        let mut plan = plan_for(&"mlfm:d=3".parse().unwrap(), &PlanOptions::default()).unwrap();
        let mut fabric = plan.to_fabric().unwrap();
        plan.devices.iter_mut().for_each(|d| d.guid = None);
        let nodes: Vec<_> = fabric.switches().chain(fabric.hosts()).collect();
        for &n in nodes.iter().take(anonymous) {
            fabric.node_mut(n).description = "MT4129 ConnectX7   Mellanox Technologies".into();
        }
        (plan, fabric)
    }

    #[test]
    fn the_share_of_identified_devices_decides_at_every_threshold() {
        let devices = anonymised(0).0.devices.len();
        for anonymous in [0, devices / 4, devices / 2, devices - 1, devices] {
            let (plan, fabric) = anonymised(anonymous);
            let identified = devices - anonymous;
            for min_percent in [0, 1, 25, 50, 75, 100] {
                let accepted = identified * 100 >= usize::from(min_percent) * devices;
                let result = check(&plan, &fabric, min_percent);
                assert_eq!(
                    result.is_ok(),
                    accepted,
                    "{identified} of {devices} at {min_percent}%: {result:?}"
                );
                if let Err(reason) = result {
                    assert!(!reason.contains('\n'), "one line: {reason}");
                    assert!(
                        reason.contains(&format!("{identified} of the plan's {devices} devices")),
                        "{reason}"
                    );
                }
            }
        }
    }

    #[test]
    fn mid_wiring_the_share_is_of_the_nodes_seen() {
        // Rack R05 and R04's hosts not cabled yet: 160 of the 250 devices seen, all named. A
        // share of the plan's devices (64 %) would refuse at 75 %; of the nodes seen it is all.
        let Some([plan, dump]) = crate::io::shared_fixtures::shared_texts([
            "ibsim-generated/slimfly-q5/slimfly_q5_plan.csv",
            "ibsim-generated/slimfly-q5/partial.ibnetdiscover.topo",
        ]) else {
            return;
        };
        let plan = crate::plan::csv::read(&plan, "sf5").unwrap();
        let dump = crate::io::ibnetdiscover::parse(&dump, None).unwrap();
        assert_eq!((plan.devices.len(), dump.fabric.nodes().len()), (250, 160));
        assert_eq!(check(&plan, &dump.fabric, 75), Ok(()));
        assert_eq!(check(&plan, &dump.fabric, 100), Ok(()));
    }

    #[test]
    fn an_iblinkinfo_of_other_nodes_is_refused() {
        let Some([dump, own, other]) = crate::io::shared_fixtures::shared_texts([
            "ibsim-generated/slimfly-q5/clean.ibnetdiscover.topo",
            "ibsim-generated/slimfly-q5/clean.iblinkinfo.txt",
            "ibsim-generated/baseline/iblinkinfo.txt",
        ]) else {
            return;
        };
        let dump = crate::io::ibnetdiscover::parse(&dump, None).unwrap();
        let own = crate::io::iblinkinfo::parse(&own).unwrap();
        assert_eq!(check_link_info(&dump.fabric, &own), Ok(()));
        let other = crate::io::iblinkinfo::parse(&other).unwrap();
        let reason = check_link_info(&dump.fabric, &other).unwrap_err();
        assert!(
            reason.starts_with("describes another fabric: 0 of its "),
            "{reason}"
        );
    }
}
