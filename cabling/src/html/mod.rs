//! Printable wiring sheets (HTML with SVG drawings), and the verification of a cabled fabric
//! drawn on the same racks (`verify.rs`).
//!
//! One self-contained document (inline CSS, no scripts, no external resources):
//!
//! 1. a summary sheet: counts, the purchase list (cables per kind and length class), the wiring
//!    steps, the label format, and an index of the other sheets;
//! 2. one sheet per rack: a rack elevation and every cable with an end in the rack, in the order
//!    a technician walks the rack (top U first, then slot, then port);
//! 3. one sheet per pair of racks with cables between them: both racks side by side with every
//!    cable drawn port to port, and the cables in wiring order.
//!
//! Every sheet is a `<section class="sheet">` starting on a new page. Lengths on the page are in
//! millimetres and fit the printable width of both A4 and Letter (`@page { size: auto }` keeps
//! the paper the printer has); drawings stay below the height of a Letter page. Tables repeat
//! their header, which names the plan and the sheet, on every printed page.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write};

use ibfabric::io::markup::Escaped;
use ibfabric::plan::{CableEnd, CableKind, Device, DeviceKind, Plan};

/// `write!` into a `String`, which cannot fail.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {
        $out.write_fmt(format_args!($($arg)*)).expect("writing to a String cannot fail")
    };
}

mod pair;
mod rack;
mod svg;
#[cfg(test)]
mod tests;
mod verify;
#[cfg(test)]
mod verify_tests;

use pair::*;
use rack::*;
use svg::*;
pub use verify::render_verification;

/// Renders the plan as one printable HTML document.
pub fn render(plan: &Plan) -> String {
    let ctx = Context::new(plan);
    let mut out = String::with_capacity(4096 + plan.cables.len() * 600);
    put!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Wiring sheets: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        Escaped(&plan.name)
    );
    summary_sheet(&mut out, &ctx);
    for rack in 0..plan.racks.len() {
        rack_sheet(&mut out, &ctx, rack);
    }
    for (i, (&(left, right), cables)) in ctx.pairs.iter().enumerate() {
        let no = 2 + plan.racks.len() + i;
        pair_sheet(&mut out, &ctx, no, (left, right), cables);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The document's style sheet. Page geometry: 186 mm wide content fits A4 (210 mm) and Letter
/// (215.9 mm) with 12 mm margins; drawings are at most about 200 mm high, which fits the
/// 255 mm of a Letter page with its sheet header.
const CSS: &str = "
@page { size: auto; margin: 12mm; }
* { box-sizing: border-box; }
html { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif; font-size: 8.5pt; color: #000; }
body { margin: 0; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.sheet { width: 186mm; break-before: page; }
.sheet:first-of-type { break-before: auto; }
@media screen {
  .sheet { content-visibility: auto; contain-intrinsic-size: auto 297mm; }
  body { background: #8a8a8a; padding: 6mm 0; }
  .sheet { background: #fff; width: 210mm; padding: 12mm; margin: 0 auto 6mm; box-shadow: 0 1mm 3mm rgba(0,0,0,.4); }
}
.head { display: flex; justify-content: space-between; align-items: baseline; border-bottom: 0.6mm solid #000; padding-bottom: 1mm; margin-bottom: 3mm; }
.head h1 { font-size: 15pt; margin: 0; }
.head .plan { font-size: 10pt; font-weight: bold; }
.head .no { font-size: 8.5pt; white-space: nowrap; }
h2 { font-size: 10.5pt; margin: 4mm 0 1.5mm; break-after: avoid; }
p { margin: 1mm 0 2mm; }
table { border-collapse: collapse; width: 100%; margin-bottom: 3mm; }
thead { display: table-header-group; }
tr { break-inside: avoid; }
th, td { border: 0.2mm solid #777; padding: 0.35mm 1mm; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #e4e4e4; font-weight: bold; }
tr.title th { background: #fff; border: none; border-bottom: 0.4mm solid #000; font-size: 8pt; font-weight: normal; padding: 0 0 0.8mm; }
tr.title b { font-size: 9pt; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.c { text-align: center; }
table.cables td:first-child { width: 5mm; text-align: center; }
table.cables td:first-child:empty::before { content: ''; display: inline-block; width: 2.8mm; height: 2.8mm; border: 0.25mm solid #000; vertical-align: middle; }
table.cables td:nth-child(2) { font-weight: bold; white-space: nowrap; }
table.rk { break-before: page; }
table.rk td:nth-child(5), table.rk td:nth-child(10), table.rk td:nth-child(12), table.rk td:nth-child(13),
table.pr td:nth-child(5), table.pr td:nth-child(8), table.pr td:nth-child(10), table.pr td:nth-child(11) { text-align: right; font-variant-numeric: tabular-nums; }
table.rk td:nth-child(6) { text-align: center; }
table.rk th, table.rk td, table.pr th, table.pr td { overflow-wrap: normal; }
table.rk td, table.pr td { white-space: nowrap; }
table.rk td.lb { font-size: 7pt; white-space: normal; overflow-wrap: anywhere; }
table.rk tr.f td { border-top: 0.5mm solid #000; }
table.rk tr.m td:nth-child(3), table.rk tr.m td:nth-child(4) { color: #777; }
table.narrow { width: auto; min-width: 100mm; }
table.matrix { width: auto; }
table.matrix td, table.matrix th { text-align: center; min-width: 7mm; padding: 0.3mm 0.5mm; }
table.matrix td.diag { background: #eee; }
.cols { display: flex; gap: 6mm; align-items: flex-start; }
.cols > div { flex: 1 1 0; }
.legend td:first-child { width: 1%; white-space: nowrap; font-family: 'DejaVu Sans Mono', monospace; }
code, .mono { font-family: 'DejaVu Sans Mono', 'Liberation Mono', monospace; }
.label { font-family: 'DejaVu Sans Mono', 'Liberation Mono', monospace; font-size: 9.5pt; border: 0.3mm solid #000; padding: 1mm 2mm; display: inline-block; margin: 1mm 0 2mm; }
.index { columns: 3; column-gap: 6mm; margin: 0 0 3mm; padding: 0; list-style: none; }
.index li { break-inside: avoid; }
.info { margin-bottom: 2mm; }
.info th { white-space: nowrap; width: 1%; }
.info td, .info th { padding: 0.2mm 1mm; }
figure { margin: 0 0 3mm; break-inside: avoid; }
figcaption { font-size: 7.5pt; margin-top: 1mm; }
svg { display: block; }
svg text { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; }
svg .u { font-size: 2.2px; fill: #444; }
svg .fr { fill: none; stroke: #000; stroke-width: 0.6; }
svg .ul { stroke: #bbb; stroke-width: 0.15; }
svg .sw { fill: #cfcfcf; stroke: #000; stroke-width: 0.3; }
svg .ho { fill: #fff; stroke: #000; stroke-width: 0.25; }
svg .sl { fill: #fff; stroke: #000; stroke-width: 0.2; }
svg text.b { font-weight: bold; }
svg .an { fill: #222; }
svg .pn { font-size: 2.5px; }
svg .pb { font-size: 2.5px; font-weight: bold; }
svg .pu, svg .pp { font-size: 2.3px; }
svg .id { font-size: 2.2px; font-weight: bold; stroke: #fff; stroke-width: 0.7; paint-order: stroke; stroke-linejoin: round; }
svg .gap { font-size: 1.9px; fill: #555; font-style: italic; }
svg path { fill: none; stroke-width: 0.45; }
svg .s0 { stroke: #000; }
svg .s1 { stroke: #1450a0; stroke-dasharray: 2.2 0.9; }
svg .s2 { stroke: #b22222; stroke-dasharray: 0.5 0.7; stroke-width: 0.6; stroke-linecap: round; }
svg .s3 { stroke: #17703a; stroke-dasharray: 3 0.8 0.6 0.8; }
svg .s4 { stroke: #7a2d91; stroke-dasharray: 1 1; }
svg .s5 { stroke: #a0620a; stroke-dasharray: 4 1.2; stroke-width: 0.6; }
svg circle { stroke: none; }
";

/// A length class: `0.5 m`, `10 m`, or `?` when unknown.
struct Length(Option<f64>);

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(m) => write!(f, "{m} m"),
            None => f.write_str("?"),
        }
    }
}

/// One end of a cable as seen from a rack: the row of a rack sheet.
#[derive(Debug, Clone, Copy)]
struct EndRow {
    cable: usize,
    here: CableEnd,
    far: CableEnd,
    is_a: bool,
}

/// What the sheets need, computed once.
struct Context<'a> {
    plan: &'a Plan,
    /// Per rack, its devices.
    rack_devices: Vec<Vec<usize>>,
    /// Per rack, every cable end in it, in walking order.
    rack_ends: Vec<Vec<EndRow>>,
    /// Cables between two racks (lower index first), in wiring order.
    pairs: BTreeMap<(usize, usize), Vec<usize>>,
    /// Per device, the number of cables on it.
    cables_on: Vec<usize>,
    /// Per device, the number of its cables that leave its rack.
    leaving: Vec<usize>,
}

impl<'a> Context<'a> {
    fn new(plan: &'a Plan) -> Self {
        let rack_of = |e: CableEnd| plan.devices[e.device].rack;
        let mut rack_devices = vec![Vec::new(); plan.racks.len()];
        for (i, d) in plan.devices.iter().enumerate() {
            rack_devices[d.rack].push(i);
        }
        let mut rack_ends = vec![Vec::new(); plan.racks.len()];
        let mut pairs: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
        let mut cables_on = vec![0; plan.devices.len()];
        let mut leaving = vec![0; plan.devices.len()];
        for (i, c) in plan.cables.iter().enumerate() {
            let (ra, rb) = (rack_of(c.a), rack_of(c.b));
            for (here, far, is_a) in [(c.a, c.b, true), (c.b, c.a, false)] {
                rack_ends[rack_of(here)].push(EndRow {
                    cable: i,
                    here,
                    far,
                    is_a,
                });
                cables_on[here.device] += 1;
                if ra != rb {
                    leaving[here.device] += 1;
                }
            }
            if ra != rb {
                pairs.entry((ra.min(rb), ra.max(rb))).or_default().push(i);
            }
        }
        for ends in &mut rack_ends {
            ends.sort_by_cached_key(|e| {
                (
                    walk_key(&plan.devices[e.here.device]),
                    e.here.device,
                    e.here.port,
                    e.cable,
                )
            });
        }
        Self {
            plan,
            rack_devices,
            rack_ends,
            pairs,
            cables_on,
            leaving,
        }
    }

    fn sheets(&self) -> usize {
        1 + self.plan.racks.len() + self.pairs.len()
    }

    fn rack_name(&self, rack: usize) -> Escaped<'a> {
        Escaped(&self.plan.racks[rack].name)
    }
}

/// The order a technician walks a rack: placed devices from the top U down, slots left to right,
/// unplaced devices last.
fn walk_key(d: &Device) -> (bool, Reverse<Option<u32>>, Option<u32>, &str) {
    (d.u.is_none(), Reverse(d.u), d.slot, d.name.as_str())
}

/// Index of a cable kind in the purchase list.
fn kind_order(kind: CableKind) -> u8 {
    match kind {
        CableKind::Copper => 0,
        CableKind::Optical => 1,
    }
}

/// The sheet header: plan name, sheet title, sheet number.
fn sheet_start(out: &mut String, ctx: &Context, id: &str, kind: &str, no: usize, title: &str) {
    sheet_head(out, &ctx.plan.name, id, kind, (no, ctx.sheets()), title);
}

/// A sheet's header for a document of `of.1` sheets, this one number `of.0`.
fn sheet_head(out: &mut String, plan: &str, id: &str, kind: &str, of: (usize, usize), title: &str) {
    put!(
        out,
        "<section class=\"sheet\" id=\"{id}\" data-sheet=\"{kind}\">\n\
         <div class=\"head\"><span class=\"plan\">{}</span><h1>{title}</h1>\
         <span class=\"no\">sheet {} of {}</span></div>\n",
        Escaped(plan),
        of.0,
        of.1
    );
}

/// The first header row of a table: repeats plan and sheet on every printed page.
fn title_row(out: &mut String, ctx: &Context, columns: usize, title: &str, no: usize) {
    put!(
        out,
        "<tr class=\"title\"><th colspan=\"{columns}\"><b>{}</b> · {title} · sheet {no} of {}</th></tr>\n",
        Escaped(&ctx.plan.name),
        ctx.sheets()
    );
}

fn summary_sheet(out: &mut String, ctx: &Context) {
    let plan = ctx.plan;
    sheet_start(out, ctx, "summary", "summary", 1, "Summary");
    let count = |k: DeviceKind| plan.devices.iter().filter(|d| d.kind == k).count();
    let by_kind = |k: CableKind| plan.cables.iter().filter(|c| c.kind == k).count();
    let inter_rack: usize = ctx.pairs.values().map(Vec::len).sum();
    out.push_str("<div class=\"cols\"><div>\n<h2>Fabric</h2>\n<table class=\"info\">\n");
    put!(
        out,
        "<tr><th>Fabric</th><td id=\"n-name\">{}</td></tr>\n",
        Escaped(&plan.name)
    );
    for (id, label, n) in [
        ("racks", "Racks", plan.racks.len()),
        ("switches", "Switches", count(DeviceKind::Switch)),
        ("hosts", "Hosts", count(DeviceKind::Host)),
        ("cables", "Cables", plan.cables.len()),
        ("copper", "Copper cables (DAC)", by_kind(CableKind::Copper)),
        (
            "optical",
            "Optical cables (AOC)",
            by_kind(CableKind::Optical),
        ),
        ("inter-rack", "Cables between racks", inter_rack),
        ("pairs", "Rack pairs with cables", ctx.pairs.len()),
    ] {
        put!(
            out,
            "<tr><th>{label}</th><td class=\"n\" id=\"n-{id}\">{n}</td></tr>\n"
        );
    }
    out.push_str("</table>\n</div><div>\n");

    // The purchase list: cables per kind and length class (millimetres as the key).
    let mut lengths: BTreeMap<(u8, Option<u64>), usize> = BTreeMap::new();
    for c in &plan.cables {
        let mm = c.length_m.map(|m| (m * 1000.0).round() as u64);
        *lengths.entry((kind_order(c.kind), mm)).or_default() += 1;
    }
    out.push_str(
        "<h2>Purchase list</h2>\n<table class=\"info\" id=\"purchase\">\n\
         <thead><tr><th>Kind</th><th class=\"n\">Length</th><th class=\"n\">Cables</th></tr></thead>\n<tbody>\n",
    );
    for kind in [CableKind::Copper, CableKind::Optical] {
        let mut total = 0;
        for (&(_, mm), &n) in
            lengths.range((kind_order(kind), None)..=(kind_order(kind), Some(u64::MAX)))
        {
            let length = mm.map(|mm| mm as f64 / 1000.0);
            put!(
                out,
                "<tr data-kind=\"{kind}\"><td>{kind}</td><td class=\"n\">{}</td><td class=\"n\">{n}</td></tr>\n",
                Length(length)
            );
            total += n;
        }
        if total > 0 {
            put!(
                out,
                "<tr><th>{kind} total</th><th></th><th class=\"n\">{total}</th></tr>\n"
            );
        }
    }
    out.push_str("</tbody>\n</table>\n</div></div>\n");

    // Wiring steps, in order.
    let mut per_step: BTreeMap<u32, (usize, usize, usize)> = BTreeMap::new();
    for (i, c) in plan.cables.iter().enumerate() {
        let e = per_step.entry(c.step).or_insert((0, i, i));
        e.0 += 1;
        e.2 = i;
    }
    out.push_str(
        "<h2>Wiring steps</h2>\n<p>Wire the steps in order. Cable ids follow the wiring order; \
         inside a step, work rack by rack (rack pair by rack pair), from the top of the rack down.</p>\n\
         <table id=\"steps\">\n<thead><tr><th class=\"n\">Step</th><th>What</th>\
         <th class=\"n\">Cables</th><th>First cable</th><th>Last cable</th></tr></thead>\n<tbody>\n",
    );
    let steps: Vec<u32> = (1..=plan.steps.len() as u32)
        .chain(per_step.keys().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for step in steps {
        let name = plan
            .steps
            .get((step as usize).wrapping_sub(1))
            .map_or("(unnamed step)", String::as_str);
        let (n, first, last) = per_step.get(&step).copied().unwrap_or((0, 0, 0));
        let id = |i: usize| {
            if n == 0 {
                String::new()
            } else {
                Escaped(&plan.cables[i].id).to_string()
            }
        };
        put!(
            out,
            "<tr data-step=\"{step}\"><td class=\"n\">{step}</td><td>{}</td><td class=\"n\">{n}</td>\
             <td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>\n",
            Escaped(name),
            id(first),
            id(last)
        );
    }
    out.push_str("</tbody>\n</table>\n");

    // The label format, explained on the first cable's label.
    out.push_str(
        "<h2>Cable labels</h2>\n<p>Print the label on both ends of the cable. Example:</p>\n",
    );
    let example = plan.cables.first().map(|c| {
        let d = &plan.devices[c.a.device];
        put!(
            out,
            "<div class=\"label\">{}</div>\n",
            Escaped(&plan.label(c))
        );
        (
            c.id.clone(),
            plan.racks[d.rack].name.clone(),
            plan.position_text(d),
            d.name.clone(),
            format!(
                "P{}",
                plan.port_label(c.a).unwrap_or_else(|| c.a.port.to_string())
            ),
        )
    });
    let (id, rack, u, device, port) = example.unwrap_or_else(|| {
        let text = |s: &str| s.to_string();
        (
            text("ID"),
            text("R01"),
            text("U40"),
            text("name"),
            text("P5"),
        )
    });
    put!(
        out,
        "<table class=\"legend info\">\n<tbody>\n\
         <tr><td>{}</td><td>cable id (the fabric's prefix, then the number in wiring order)</td></tr>\n\
         <tr><td>{}</td><td>rack</td></tr>\n\
         <tr><td>{}</td><td>rack unit: the lowest unit the device occupies (U01 at the bottom); \
         U17.2 is slot 2 of a multi-node chassis in U17, slots counted left to right</td></tr>\n\
         <tr><td>{}</td><td>device name (switch or host)</td></tr>\n\
         <tr><td>{}</td><td>{}</td></tr>\n\
         <tr><td>A to B</td><td>the end named first (A) is wired first; on the rack sheets, \
         “End” tells which end of the cable a row is. Tick the box when the cable is in place \
         and both ends are labelled.</td></tr>\n\
         </tbody>\n</table>\n",
        Escaped(&id),
        Escaped(&rack),
        Escaped(&u),
        Escaped(&device),
        Escaped(&port),
        if plan
            .devices
            .iter()
            .any(|d| { d.model.as_ref().is_some_and(|m| m.ports_per_cage > 1) })
        {
            "port: its faceplate label, cage/split on switches with twin-port cages (17/2 is \
             the second port of cage 17, InfiniBand port 34); the sheets give the port number \
             that ibnetdiscover reports first and the faceplate label after it"
        } else {
            "port number"
        }
    );

    // Index of the other sheets.
    out.push_str("<h2>Rack sheets</h2>\n<table class=\"narrow\" id=\"racks\">\n<thead><tr><th class=\"n\">Sheet</th><th>Rack</th>\
         <th class=\"n\">Units</th><th class=\"n\">Switches</th><th class=\"n\">Hosts</th>\
         <th class=\"n\">Cable ends</th></tr></thead>\n<tbody>\n");
    for (r, rack) in plan.racks.iter().enumerate() {
        let here = |k: DeviceKind| {
            ctx.rack_devices[r]
                .iter()
                .filter(|&&i| plan.devices[i].kind == k)
                .count()
        };
        put!(
            out,
            "<tr><td class=\"n\">{}</td><td><a href=\"#rack-{}\">{}</a></td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
            r + 2,
            r + 1,
            Escaped(&rack.name),
            rack.units,
            here(DeviceKind::Switch),
            here(DeviceKind::Host),
            ctx.rack_ends[r].len()
        );
    }
    out.push_str("</tbody>\n</table>\n");
    if !ctx.pairs.is_empty() {
        pair_index(out, ctx);
    }
    out.push_str("</section>\n");
}

/// Rack pair sheets: a matrix of cable counts for a handful of racks, a list otherwise.
fn pair_index(out: &mut String, ctx: &Context) {
    let plan = ctx.plan;
    let first = 2 + plan.racks.len();
    out.push_str("<h2>Rack pair sheets</h2>\n");
    let possible = plan.racks.len() * plan.racks.len().saturating_sub(1) / 2;
    if plan.racks.len() <= 20 && 2 * ctx.pairs.len() >= possible {
        out.push_str(
            "<p>Cables between two racks; a number links to the sheet of that pair.</p>\n\
             <table class=\"matrix\" id=\"pairs\">\n<thead><tr><th></th>",
        );
        for r in 0..plan.racks.len() {
            put!(out, "<th>{}</th>", ctx.rack_name(r));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        let sheet_of: HashMap<(usize, usize), usize> =
            ctx.pairs.keys().enumerate().map(|(i, &k)| (k, i)).collect();
        for a in 0..plan.racks.len() {
            put!(out, "<tr><th>{}</th>", ctx.rack_name(a));
            for b in 0..plan.racks.len() {
                let key = (a.min(b), a.max(b));
                match (a == b, sheet_of.get(&key)) {
                    (true, _) => out.push_str("<td class=\"diag\"></td>"),
                    (false, Some(&i)) => put!(
                        out,
                        "<td><a href=\"#pair-{}-{}\" title=\"sheet {}\">{}</a></td>",
                        key.0 + 1,
                        key.1 + 1,
                        first + i,
                        ctx.pairs[&key].len()
                    ),
                    (false, None) => out.push_str("<td></td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
    } else {
        out.push_str("<ul class=\"index\" id=\"pairs\">\n");
        for (i, (&(a, b), cables)) in ctx.pairs.iter().enumerate() {
            put!(
                out,
                "<li>sheet {}: <a href=\"#pair-{}-{}\">{} – {}</a>, {} cables</li>\n",
                first + i,
                a + 1,
                b + 1,
                ctx.rack_name(a),
                ctx.rack_name(b),
                cables.len()
            );
        }
        out.push_str("</ul>\n");
    }
}
