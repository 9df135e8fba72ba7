//! The verification as a page (`cabling verify --format html`): the racks as the plan's sheets
//! draw them, with every finding marked on its device, cable and port, and the punch list.
//!
//! 1. a summary sheet: the verdict, the counts, progress per rack, the punch list grouped by
//!    rack (the text report's lines), unexpected cables and devices, devices not found;
//! 2. one sheet per rack with something to do: its elevation with the devices that have a
//!    finding coloured (red: a cable to fix or remove; amber: a cable below its rate; dashed:
//!    not seen in the fabric) and what was found beside each, the rack's cable ends that are not
//!    as planned (one row per end, the finding in words), and the rack's actions.
//!
//! Racks where every cable is verified get no sheet: the summary's progress table says so.
//! The words come from [`Report`], so the page, the text, the CSV and the JSON never disagree.

use std::collections::BTreeMap;

use ibfabric::io::markup::Escaped;
use ibfabric::plan::CableEnd;
use ibfabric::verify::report::Report;
use ibfabric::verify::{Finding, Place, Status};

use super::*;

/// The style of a marked device box, cable row and note; added to the sheets' style sheet.
const VERIFY_CSS: &str = "
.verdict { font-size: 11pt; font-weight: bold; padding: 1.5mm 2mm; border: 0.5mm solid; margin: 0 0 3mm; }
.verdict.clean { border-color: #17703a; color: #17703a; }
.verdict.work { border-color: #c00000; color: #c00000; }
tr.vf td { background: #fde0e0; }
tr.vd td { background: #fff3cc; }
tr.vu td { color: #555; }
table.vt td, table.vt th { white-space: nowrap; overflow-wrap: normal; }
table.vt td.w { white-space: normal; }
td.st { font-weight: bold; }
ol.punch { margin: 0 0 3mm; padding-left: 7mm; }
ol.punch li { margin: 0.6mm 0; break-inside: avoid; }
.bar { display: inline-block; height: 2.6mm; background: #17703a; vertical-align: middle; }
.bar.rest { background: #e0a0a0; }
svg .vf { fill: #f08080; stroke: #c00000; stroke-width: 0.6; }
svg .vd { fill: #ffd966; stroke: #a06000; stroke-width: 0.5; }
svg .vu { fill: #fff; stroke: #888; stroke-width: 0.3; stroke-dasharray: 0.8 0.6; }
svg .vn { fill: #c00000; font-weight: bold; }
";

/// How bad a finding is for marking: a cable to fix beats one below its rate beats a device
/// not seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Severity {
    Unseen,
    Degraded,
    Fault,
}

impl Severity {
    fn of(status: &Status) -> Option<Self> {
        match status {
            Status::Ok => None,
            Status::Degraded(_) => Some(Self::Degraded),
            Status::NotVerifiable => Some(Self::Unseen),
            Status::Miswired { .. } | Status::Missing { .. } | Status::Down { .. } => {
                Some(Self::Fault)
            }
        }
    }

    fn class(self) -> &'static str {
        match self {
            Self::Fault => "vf",
            Self::Degraded => "vd",
            Self::Unseen => "vu",
        }
    }
}

/// What the sheets mark, computed once from the verification.
struct Marked<'a> {
    report: &'a Report<'a>,
    /// Per rack, its cable ends that are not as planned: (end, finding).
    ends: Vec<Vec<(EndRow, &'a Finding)>>,
    /// Per rack, the indices of its actions (into the verification's list).
    actions: BTreeMap<Option<usize>, Vec<usize>>,
    /// Per plan device, the worst finding on it and the ports it concerns.
    devices: Vec<Option<(Severity, Vec<u8>)>>,
    /// Per plan device, ports holding a cable that is not in the plan.
    unexpected_ports: Vec<Vec<u8>>,
}

impl<'a> Marked<'a> {
    fn new(report: &'a Report<'a>, ctx: &Context<'a>) -> Self {
        let plan = report.plan;
        let v = report.verification;
        let finding_of: Vec<Option<&Finding>> = {
            let mut of = vec![None; plan.cables.len()];
            for f in &v.findings {
                of[f.cable] = Some(f);
            }
            of
        };
        let mut devices: Vec<Option<(Severity, Vec<u8>)>> = vec![None; plan.devices.len()];
        let mut mark = |end: CableEnd, severity: Severity| {
            let entry = devices[end.device].get_or_insert((severity, Vec::new()));
            entry.0 = entry.0.max(severity);
            if !entry.1.contains(&end.port) {
                entry.1.push(end.port);
            }
        };
        let ends: Vec<Vec<(EndRow, &Finding)>> = ctx
            .rack_ends
            .iter()
            .map(|rack| {
                rack.iter()
                    .filter_map(|e| {
                        let f = finding_of[e.cable]?;
                        let severity = Severity::of(&f.status)?;
                        mark(e.here, severity);
                        Some((*e, f))
                    })
                    .collect()
            })
            .collect();
        let mut unexpected_ports = vec![Vec::new(); plan.devices.len()];
        for u in &v.unexpected {
            for place in [u.a, u.b] {
                if let Place::Device(end) = place {
                    mark(end, Severity::Fault);
                    unexpected_ports[end.device].push(end.port);
                }
            }
        }
        for d in v.binding.unbound_devices() {
            devices[d].get_or_insert((Severity::Unseen, Vec::new()));
        }
        let mut actions: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
        for (i, a) in v.actions.iter().enumerate() {
            let rack = match a.location(plan) {
                Place::Device(e) => Some(plan.devices[e.device].rack),
                Place::Node(_) => None,
            };
            actions.entry(rack).or_default().push(i);
        }
        Self {
            report,
            ends,
            actions,
            devices,
            unexpected_ports,
        }
    }

    /// Racks with something to do or not yet seen: the ones that get a sheet.
    fn racks_with_work(&self) -> Vec<usize> {
        let plan = self.report.plan;
        (0..plan.racks.len())
            .filter(|&r| {
                !self.ends[r].is_empty()
                    || self.actions.contains_key(&Some(r))
                    || plan
                        .devices
                        .iter()
                        .enumerate()
                        .any(|(d, dev)| dev.rack == r && self.devices[d].is_some())
            })
            .collect()
    }

    /// The elevation marks: classes and notes per plan device.
    fn marks(&self) -> Marks {
        let plan = self.report.plan;
        let bound = |d: usize| self.report.verification.binding.node(d).is_some();
        // A device not found is drawn dashed whatever its cables' findings say: they follow
        // from its absence.
        let class = self
            .devices
            .iter()
            .enumerate()
            .map(|(d, m)| {
                let (severity, _) = m.as_ref()?;
                Some(if bound(d) { severity.class() } else { "vu" })
            })
            .collect();
        let note = self
            .devices
            .iter()
            .enumerate()
            .map(|(d, m)| {
                let (severity, ports) = m.as_ref()?;
                if !bound(d) {
                    return Some(format!("{}: not found in the fabric", plan.devices[d].name));
                }
                let mut ports = ports.clone();
                ports.sort_unstable();
                let texts: Vec<String> = ports
                    .iter()
                    .map(|&port| plan.port_text(CableEnd { device: d, port }))
                    .collect();
                let what = match severity {
                    Severity::Fault => "to fix",
                    Severity::Degraded => "below rate",
                    Severity::Unseen => "not verifiable",
                };
                let unexpected = self.unexpected_ports[d].len();
                Some(format!(
                    "{}: port{} {} {what}{}",
                    plan.devices[d].name,
                    if texts.len() == 1 { "" } else { "s" },
                    texts.join(", "),
                    if unexpected > 0 {
                        format!(
                            " ({unexpected} cable{} not in the plan)",
                            plural(unexpected)
                        )
                    } else {
                        String::new()
                    }
                ))
            })
            .collect();
        Marks { class, note }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Renders the verification as one self-contained HTML page (inline CSS and SVG, no scripts).
pub fn render_verification(report: &Report<'_>) -> String {
    let plan = report.plan;
    let ctx = Context::new(plan);
    let marked = Marked::new(report, &ctx);
    let racks = marked.racks_with_work();
    let sheets = 1 + racks.len();
    let mut out = String::with_capacity(8192 + report.verification.findings.len() * 200);
    put!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Cabling verification: {}</title>\n<style>{CSS}{VERIFY_CSS}</style>\n</head>\n<body>\n",
        Escaped(&plan.name)
    );
    summary(&mut out, &marked, &racks, sheets);
    let marks = marked.marks();
    for (i, &rack) in racks.iter().enumerate() {
        rack_findings(&mut out, &ctx, &marked, &marks, rack, (i + 2, sheets));
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn summary(out: &mut String, marked: &Marked, racks: &[usize], sheets: usize) {
    let report = marked.report;
    let (plan, v) = (report.plan, report.verification);
    let c = v.counts();
    sheet_head(
        out,
        &plan.name,
        "summary",
        "summary",
        (1, sheets),
        "Cabling verification",
    );
    if v.is_clean() {
        out.push_str(
            "<p class=\"verdict clean\" id=\"verdict\">The fabric is cabled as planned: \
             every cable verified, nothing unexpected.</p>\n",
        );
    } else {
        put!(
            out,
            "<p class=\"verdict work\" id=\"verdict\">{} action{} to take; {} of {} cables \
             verified.</p>\n",
            c.actions,
            plural(c.actions),
            c.ok,
            plan.cables.len()
        );
    }
    out.push_str("<div class=\"cols\"><div>\n<h2>Cables</h2>\n<table class=\"info\">\n");
    for (id, label, n) in [
        ("ok", "As planned", c.ok),
        ("degraded", "Below their rate", c.degraded),
        ("miswired", "Miswired", c.miswired),
        ("missing", "Missing", c.missing),
        ("down", "Down", c.down),
        ("not-verifiable", "Not yet verifiable", c.not_verifiable),
        ("unexpected", "Not in the plan", c.unexpected),
    ] {
        put!(
            out,
            "<tr><th>{label}</th><td class=\"n\" id=\"n-{id}\">{n}</td></tr>\n"
        );
    }
    out.push_str("</table>\n</div><div>\n<h2>Devices</h2>\n<table class=\"info\">\n");
    put!(
        out,
        "<tr><th>In the plan</th><td class=\"n\">{}</td></tr>\n\
         <tr><th>Not found in the fabric</th><td class=\"n\" id=\"n-unbound\">{}</td></tr>\n\
         <tr><th>Not in the plan</th><td class=\"n\" id=\"n-unexpected-devices\">{}</td></tr>\n\
         <tr><th>Cables observed</th><td class=\"n\">{}</td></tr>\n",
        plan.devices.len(),
        c.unbound_devices,
        c.unexpected_devices,
        v.observed_cables
    );
    out.push_str("</table>\n</div></div>\n");
    for w in &v.binding.warnings {
        put!(out, "<p>Note: {}</p>\n", Escaped(w));
    }

    // Progress per rack, with a link to each rack's sheet.
    let sheet_of: BTreeMap<usize, usize> =
        racks.iter().enumerate().map(|(i, &r)| (r, i + 2)).collect();
    out.push_str(
        "<h2>Progress per rack</h2>\n<table class=\"narrow\" id=\"progress\">\n<thead><tr>\
         <th>Rack</th><th class=\"n\">Verified</th><th class=\"n\">Expected</th><th></th>\
         <th class=\"n\">Not yet verifiable</th><th class=\"n\">Ends not as planned</th><th>Sheet</th></tr></thead>\n<tbody>\n",
    );
    for p in &v.progress {
        let name = Escaped(&plan.racks[p.rack].name);
        let width = |n: usize| 30.0 * n as f64 / p.expected.max(1) as f64;
        let sheet = match sheet_of.get(&p.rack) {
            Some(no) => format!("<a href=\"#rack-{}\">sheet {no}</a>", p.rack + 1),
            None => "all verified".into(),
        };
        put!(
            out,
            "<tr data-rack=\"{name}\"><td>{name}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td><span class=\"bar\" style=\"width:{:.1}mm\"></span><span class=\"bar rest\" style=\"width:{:.1}mm\"></span></td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{sheet}</td></tr>\n",
            p.verified,
            p.expected,
            width(p.verified),
            width(p.expected - p.verified),
            p.not_verifiable,
            marked.ends[p.rack].len()
        );
    }
    out.push_str("</tbody>\n</table>\n");

    // The punch list, rack by rack.
    if !v.actions.is_empty() {
        put!(out, "<h2>Punch list: {} actions</h2>\n", v.actions.len());
        for (rack, list) in &marked.actions {
            let name = rack.map_or("unidentified devices", |r| plan.racks[r].name.as_str());
            put!(out, "<h3>{}</h3>\n", Escaped(name));
            punch_list(out, report, list);
        }
    }
    if !v.unexpected.is_empty() {
        out.push_str(
            "<h2>Cables not in the plan</h2>\n<table id=\"unexpected\">\n<thead><tr><th>One end</th>\
             <th>Other end</th><th>Why</th></tr></thead>\n<tbody>\n",
        );
        for u in &v.unexpected {
            put!(
                out,
                "<tr class=\"vf\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                Escaped(&report.place(u.a)),
                Escaped(&report.place(u.b)),
                u.kind.text()
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    if !v.unexpected_devices.is_empty() {
        out.push_str("<h2>Devices not in the plan</h2>\n<ul>\n");
        for &n in &v.unexpected_devices {
            put!(out, "<li>{}</li>\n", Escaped(&report.node(n)));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn rack_findings(
    out: &mut String,
    ctx: &Context,
    marked: &Marked,
    marks: &Marks,
    rack: usize,
    of: (usize, usize),
) {
    let report = marked.report;
    let plan = report.plan;
    let title = format!("Rack {}", ctx.rack_name(rack));
    sheet_head(
        out,
        &plan.name,
        &format!("rack-{}", rack + 1),
        "rack",
        of,
        &title,
    );
    put!(out, "<div data-rack=\"{}\">\n", ctx.rack_name(rack));
    let ends = &marked.ends[rack];
    let mut per_status: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, f) in ends {
        *per_status.entry(f.status.word()).or_default() += 1;
    }
    let summary: Vec<String> = per_status.iter().map(|(w, n)| format!("{n} {w}")).collect();
    put!(
        out,
        "<p>{} cable end{} in this rack not as planned{}.</p>\n",
        ends.len(),
        plural(ends.len()),
        if summary.is_empty() {
            String::new()
        } else {
            format!(": {}", summary.join(", "))
        }
    );
    out.push_str("<figure>\n");
    elevation(out, ctx, rack, &ctx.rack_devices[rack], Some(marks));
    put!(
        out,
        "<figcaption>Front view of rack {}, top unit first. Red: a device with a cable to fix \
         or remove; amber: a cable below its rate; dashed: not seen in the fabric. Beside each: \
         the ports concerned.</figcaption>\n</figure>\n",
        ctx.rack_name(rack)
    );
    if !ends.is_empty() {
        out.push_str("<table class=\"vt\" id=\"findings\">\n<thead>\n");
        put!(
            out,
            "<tr class=\"title\"><th colspan=\"8\"><b>{}</b> · {title}: cables not as planned · \
             sheet {} of {}</th></tr>\n",
            Escaped(&plan.name),
            of.0,
            of.1
        );
        out.push_str(
            "<tr><th>Status</th><th>Cable</th><th>U</th><th>Device</th><th class=\"n\">Port</th>\
             <th>End</th><th>Far end</th><th>Found</th></tr>\n</thead>\n<tbody>\n",
        );
        for (e, f) in ends {
            let c = &plan.cables[e.cable];
            let here = &plan.devices[e.here.device];
            let class = Severity::of(&f.status).map_or("", Severity::class);
            put!(
                out,
                "<tr class=\"{class}\" data-cable=\"{}\"><td class=\"st\">{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"w\">{}</td><td class=\"w\">{}</td></tr>\n",
                Escaped(&c.id),
                f.status.word(),
                Escaped(&c.id),
                plan.position_text(here),
                Escaped(&here.name),
                plan.port_text(e.here),
                if e.is_a { "A" } else { "B" },
                Escaped(&plan.end_text(e.far)),
                Escaped(&report.finding_text(f))
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    if let Some(list) = marked.actions.get(&Some(rack)) {
        put!(out, "<h2>Actions in rack {}</h2>\n", ctx.rack_name(rack));
        punch_list(out, report, list);
    }
    out.push_str("</div>\n</section>\n");
}

/// The actions `list` (indices into the verification's) as a numbered list, one line each as
/// the text report words it.
fn punch_list(out: &mut String, report: &Report, list: &[usize]) {
    out.push_str("<ol class=\"punch\">\n");
    for &i in list {
        let a = &report.verification.actions[i];
        put!(
            out,
            "<li data-action=\"{}\">{}</li>\n",
            a.word(),
            Escaped(&report.action_text(a))
        );
    }
    out.push_str("</ol>\n");
}
