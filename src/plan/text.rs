//! A plan from the text of a file, whichever of the two forms it is in: the YAML/JSON plan
//! document (`cabling plan --format yaml|json`) or a CSV cable list (`--format csv`, or a
//! site's own spreadsheet export). Shared by `cabling verify` and the OpenSM plugin, which
//! compares every sweep with the plan its configuration names.

use super::Plan;
use super::PlanError;
use super::csv::{self, CsvError};
use super::document::PlanDocument;

/// Why a text is not a plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanTextError {
    /// Neither YAML nor JSON of a plan document.
    #[error("not a plan document: {0}")]
    Document(String),
    /// A plan document that does not make a plan.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A CSV cable list with an error.
    #[error(transparent)]
    Csv(#[from] CsvError),
}

/// Reads `text`, a CSV cable list when `extension` is `csv` (or, without a known extension,
/// when its first line names an `a_device` column), else a YAML/JSON plan document. `name`
/// names a CSV plan (the file stem).
///
/// # Errors
/// What the reader of the form found.
pub fn from_text(text: &str, name: &str, extension: Option<&str>) -> Result<Plan, PlanTextError> {
    let extension = extension.map(str::to_ascii_lowercase);
    let is_csv = match extension.as_deref() {
        Some("csv") => true,
        Some("yaml" | "yml" | "json") => false,
        _ => text
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.contains(',') && l.to_ascii_lowercase().contains("a_device")),
    };
    if is_csv {
        return Ok(csv::read(text, name)?);
    }
    let doc: PlanDocument = yaml_serde::from_str(text)
        .map_err(|e| PlanTextError::Document(e.to_string().replace('\n', " ")))?;
    Ok(doc.to_plan()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build::{PlanOptions, plan_for};
    use crate::topology::TopologySpec;

    #[test]
    fn both_forms_read_back_the_same_cables() {
        let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
        let plan = plan_for(&spec, &PlanOptions::default()).unwrap();
        let yaml = yaml_serde::to_string(&PlanDocument::from_plan(&plan)).unwrap();
        let csv_text = csv::write(&plan);
        for (text, ext) in [
            (&yaml, Some("yaml")),
            (&yaml, None),
            (&csv_text, Some("csv")),
            (&csv_text, None),
        ] {
            let read = from_text(text, "plan", ext).unwrap();
            assert_eq!(read.cables.len(), plan.cables.len(), "{ext:?}");
        }
        assert!(matches!(
            from_text("cables: [", "plan", Some("yaml")),
            Err(PlanTextError::Document(_))
        ));
    }
}
