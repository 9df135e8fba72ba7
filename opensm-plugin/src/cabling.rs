//! The cabling check of every sweep: when the configuration names a cabling plan, the
//! discovered subnet is compared with it (the `cabling verify` core) and the differences go to
//! OpenSM's log before routing, so an admin sees a miswired or missing cable the moment the
//! subnet manager does.

use std::sync::Arc;

use ibfabric::Fabric;
use ibfabric::plan::{self, Plan};
use ibfabric::session::sweep_record::CablingCheck;
use ibfabric::verify::belonging::{self, DEFAULT_MIN_IDENTIFIED_PERCENT};
use ibfabric::verify::report::Report;
use ibfabric::verify::{self, Observation};

/// Most actions logged per sweep; the rest are counted.
const MAX_ACTIONS_LOGGED: usize = 50;

/// The plan last read, kept while its file is unchanged (reading a large plan takes longer
/// than routing a small fabric).
#[derive(Default)]
pub struct PlanCache {
    cached: Option<(String, Option<std::time::SystemTime>, Arc<Plan>)>,
}

impl PlanCache {
    /// The plan at `path`, read again only when the path or the file's modification time
    /// changed.
    ///
    /// # Errors
    /// As [`read_plan`].
    pub fn get(&mut self, path: &str) -> Result<Arc<Plan>, String> {
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if let Some((p, m, plan)) = &self.cached
            && p == path
            && *m == modified
            && modified.is_some()
        {
            return Ok(Arc::clone(plan));
        }
        let plan = Arc::new(read_plan(path)?);
        self.cached = Some((path.to_string(), modified, Arc::clone(&plan)));
        Ok(plan)
    }
}

/// Reads the plan at `path` (YAML/JSON document or CSV cable list).
///
/// # Errors
/// The file cannot be read or is not a plan: a message naming the file.
pub fn read_plan(path: &str) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let file = std::path::Path::new(path);
    let name = file
        .file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy().into_owned());
    let extension = file.extension().map(|e| e.to_string_lossy().into_owned());
    plan::text::from_text(&text, &name, extension.as_deref()).map_err(|e| format!("{path}: {e}"))
}

/// What a sweep's cabling check found.
#[derive(Debug)]
pub struct Differences {
    /// Whether the fabric is exactly as planned.
    pub clean: bool,
    /// The log lines: one summary line, then one line per action a technician would take (at
    /// most [`MAX_ACTIONS_LOGGED`]).
    pub lines: Vec<String>,
    /// The plan's cables and those as planned; `None` when the plan was not checked.
    pub check: Option<CablingCheck>,
}

/// How `fabric` differs from `plan`. A plan of another fabric (too few devices identified,
/// see `ibfabric::verify::belonging`) gives one line saying so instead of an action list, and
/// no counts.
pub fn differences(plan_path: &str, plan: &Plan, fabric: &Fabric) -> Differences {
    let observation = Observation {
        fabric,
        link_info: None,
        names: None,
    };
    let verification = verify::verify(plan, &observation);
    if let Err(reason) =
        belonging::check_identified(plan, fabric, &verification, DEFAULT_MIN_IDENTIFIED_PERCENT)
    {
        return Differences {
            clean: false,
            lines: vec![format!("cabling plan {plan_path} not checked: {reason}")],
            check: None,
        };
    }
    let c = verification.counts();
    let clean = verification.is_clean();
    let mut lines = vec![format!(
        "cabling plan {plan_path}: {} of {} cables as planned; {} degraded, {} miswired, {} \
         missing, {} down, {} not seen, {} unexpected cables, {} plan devices not found, {} \
         unexpected devices; {} actions",
        c.ok,
        verification.findings.len(),
        c.degraded,
        c.miswired,
        c.missing,
        c.down,
        c.not_verifiable,
        c.unexpected,
        c.unbound_devices,
        c.unexpected_devices,
        c.actions
    )];
    let report = Report::new(plan, fabric, &verification);
    for action in verification.actions.iter().take(MAX_ACTIONS_LOGGED) {
        lines.push(format!("cabling: {}", report.action_text(action)));
    }
    if verification.actions.len() > MAX_ACTIONS_LOGGED {
        lines.push(format!(
            "cabling: ... and {} more actions (run `cabling verify` for the full list)",
            verification.actions.len() - MAX_ACTIONS_LOGGED
        ));
    }
    Differences {
        clean,
        lines,
        check: Some(CablingCheck {
            planned: verification.findings.len(),
            as_planned: c.ok,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibfabric::plan::build::{PlanOptions, plan_for};
    use ibfabric::topology::TopologySpec;
    use ibfabric::verify::wiring::Wiring;

    #[test]
    fn plans_are_read_again_only_when_their_file_changes() {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let plan = plan_for(&spec, &PlanOptions::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.csv");
        std::fs::write(&path, ibfabric::plan::csv::write(&plan)).unwrap();
        let path = path.to_str().unwrap();
        let mut cache = PlanCache::default();
        let first = cache.get(path).unwrap();
        assert!(Arc::ptr_eq(&first, &cache.get(path).unwrap()), "cached");
        // A new file (other modification time): read again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut fewer = plan.clone();
        fewer.cables.pop();
        std::fs::write(path, ibfabric::plan::csv::write(&fewer)).unwrap();
        let again = cache.get(path).unwrap();
        assert_eq!(again.cables.len(), plan.cables.len() - 1);
        assert!(cache.get("/nonexistent/plan.yaml").is_err());
    }

    #[test]
    fn a_plan_of_another_fabric_is_one_line_without_actions() {
        // Generated fabrics number their GUIDs alike: the plan as a CSV list carries none, as
        // a site's own list would not.
        let generated = plan_for(&"slimfly:q=5".parse().unwrap(), &PlanOptions::default());
        let csv = ibfabric::plan::csv::write(&generated.unwrap());
        let plan = ibfabric::plan::csv::read(&csv, "plan").unwrap();
        for other in ["mlfm:d=3", "lsft:n=3", "polarfly:q=7"] {
            let spec: TopologySpec = other.parse().unwrap();
            let fabric = plan_for(&spec, &PlanOptions::default())
                .unwrap()
                .to_fabric()
                .unwrap();
            let Differences {
                clean,
                lines,
                check,
            } = differences("plan.yaml", &plan, &fabric);
            assert!(!clean, "{other}");
            assert_eq!(check, None, "{other}");
            assert_eq!(lines.len(), 1, "{other}: {lines:?}");
            assert!(
                lines[0].starts_with("cabling plan plan.yaml not checked: the plan and the fabric do not belong together: 0 of "),
                "{other}: {lines:?}"
            );
        }
    }

    #[test]
    fn a_fabric_as_planned_is_clean_and_a_swap_is_named() {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let plan = plan_for(&spec, &PlanOptions::default()).unwrap();
        let fabric = plan.to_fabric().unwrap();
        let Differences {
            clean,
            lines,
            check,
        } = differences("plan.yaml", &plan, &fabric);
        assert!(clean, "{lines:?}");
        let planned = plan.cables.len();
        assert_eq!(
            check,
            Some(CablingCheck {
                planned,
                as_planned: planned
            })
        );
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("cables as planned; 0 degraded, 0 miswired"),
            "{lines:?}"
        );

        // Swap the switch ends of the first two switch-to-switch cables of the plan.
        let mut wiring = Wiring::from_plan(&plan);
        let switch_ends: Vec<_> = plan.switch_cables().take(2).map(|c| c.a).collect();
        wiring.swap_ends(switch_ends[0], switch_ends[1]);
        let miswired = wiring.to_fabric(&plan, 0).unwrap();
        let Differences {
            clean,
            lines,
            check,
        } = differences("plan.yaml", &plan, &miswired);
        assert!(!clean);
        let check = check.expect("checked");
        assert_eq!(check.planned, plan.cables.len());
        assert_eq!(check.as_planned, check.planned - 2, "two cables miswired");
        assert!(lines[0].contains("2 miswired"), "{lines:?}");
        assert!(lines.len() > 1, "an action is logged: {lines:?}");
    }
}
