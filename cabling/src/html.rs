//! Printable wiring sheets (HTML with SVG drawings).

use ibfabric::plan::Plan;

/// Renders the plan as one printable HTML document.
pub fn render(plan: &Plan) -> String {
    format!("<!DOCTYPE html><title>{}</title>", plan.name)
}
