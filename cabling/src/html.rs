//! Printable wiring sheets (HTML with SVG drawings).
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

use ibfabric::plan::{Cable, CableEnd, CableKind, Device, DeviceKind, Plan};

/// `write!` into a `String`, which cannot fail.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {
        $out.write_fmt(format_args!($($arg)*)).expect("writing to a String cannot fail")
    };
}

/// Renders the plan as one printable HTML document.
pub fn render(plan: &Plan) -> String {
    let ctx = Context::new(plan);
    let mut out = String::with_capacity(4096 + plan.cables.len() * 600);
    put!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Wiring sheets: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        Esc(&plan.name)
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

/// Text with `&`, `<`, `>`, `\"` and `'` escaped, for element text and attribute values.
struct Esc<'a>(&'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

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

    fn rack_name(&self, rack: usize) -> Esc<'a> {
        Esc(&self.plan.racks[rack].name)
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
    put!(
        out,
        "<section class=\"sheet\" id=\"{id}\" data-sheet=\"{kind}\">\n\
         <div class=\"head\"><span class=\"plan\">{}</span><h1>{title}</h1>\
         <span class=\"no\">sheet {no} of {}</span></div>\n",
        Esc(&ctx.plan.name),
        ctx.sheets()
    );
}

/// The first header row of a table: repeats plan and sheet on every printed page.
fn title_row(out: &mut String, ctx: &Context, columns: usize, title: &str, no: usize) {
    put!(
        out,
        "<tr class=\"title\"><th colspan=\"{columns}\"><b>{}</b> · {title} · sheet {no} of {}</th></tr>\n",
        Esc(&ctx.plan.name),
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
        Esc(&plan.name)
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
                Esc(&plan.cables[i].id).to_string()
            }
        };
        put!(
            out,
            "<tr data-step=\"{step}\"><td class=\"n\">{step}</td><td>{}</td><td class=\"n\">{n}</td>\
             <td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>\n",
            Esc(name),
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
        put!(out, "<div class=\"label\">{}</div>\n", Esc(&plan.label(c)));
        (
            c.id.clone(),
            plan.racks[d.rack].name.clone(),
            plan.position_text(d),
            d.name.clone(),
            format!("P{}", c.a.port),
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
         <tr><td>{}</td><td>port number</td></tr>\n\
         <tr><td>A to B</td><td>the end named first (A) is wired first; on the rack sheets, \
         “End” tells which end of the cable a row is. Tick the box when the cable is in place \
         and both ends are labelled.</td></tr>\n\
         </tbody>\n</table>\n",
        Esc(&id),
        Esc(&rack),
        Esc(&u),
        Esc(&device),
        Esc(&port)
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
            Esc(&rack.name),
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

fn rack_sheet(out: &mut String, ctx: &Context, rack: usize) {
    let plan = ctx.plan;
    let no = rack + 2;
    let title = format!("Rack {}", ctx.rack_name(rack));
    sheet_start(out, ctx, &format!("rack-{}", rack + 1), "rack", no, &title);
    put!(out, "<div data-rack=\"{}\">\n", ctx.rack_name(rack));

    // What is in the rack and where its cables go.
    let ends = &ctx.rack_ends[rack];
    let devices = &ctx.rack_devices[rack];
    let count = |k: DeviceKind| {
        devices
            .iter()
            .filter(|&&i| plan.devices[i].kind == k)
            .count()
    };
    let mut far_racks: BTreeMap<usize, usize> = BTreeMap::new();
    let mut per_step: BTreeMap<u32, usize> = BTreeMap::new();
    let mut inside = 0;
    for e in ends {
        let far = plan.devices[e.far.device].rack;
        if far == rack {
            // Counted once per cable, at its A end.
            if e.is_a {
                inside += 1;
                *per_step.entry(plan.cables[e.cable].step).or_default() += 1;
            }
        } else {
            *far_racks.entry(far).or_default() += 1;
            *per_step.entry(plan.cables[e.cable].step).or_default() += 1;
        }
    }
    out.push_str("<table class=\"info\">\n");
    put!(
        out,
        "<tr><th>Rack</th><td>{} · {} U · {} switches · {} hosts</td></tr>\n",
        ctx.rack_name(rack),
        plan.racks[rack].units,
        count(DeviceKind::Switch),
        count(DeviceKind::Host)
    );
    put!(
        out,
        "<tr><th>Cables</th><td>{} with an end here: {inside} inside the rack, {} to other racks</td></tr>\n",
        inside + far_racks.values().sum::<usize>(),
        far_racks.values().sum::<usize>()
    );
    if !per_step.is_empty() {
        out.push_str("<tr><th>Per step</th><td>");
        for (i, (step, n)) in per_step.iter().enumerate() {
            let sep = if i == 0 { "" } else { " · " };
            put!(out, "{sep}step {step}: {n}");
        }
        out.push_str("</td></tr>\n");
    }
    if !far_racks.is_empty() {
        out.push_str("<tr><th>To racks</th><td>");
        for (i, (far, n)) in far_racks.iter().enumerate() {
            let sep = if i == 0 { "" } else { " · " };
            let (a, b) = (rack.min(*far) + 1, rack.max(*far) + 1);
            put!(
                out,
                "{sep}<a href=\"#pair-{a}-{b}\">{}</a>: {n}",
                ctx.rack_name(*far)
            );
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</table>\n");

    out.push_str("<figure>\n");
    elevation(out, ctx, rack, devices);
    put!(
        out,
        "<figcaption>Front view of rack {}, top unit first. Grey: switch; white: host; \
         several boxes in one unit: multi-node chassis, slots numbered left to right.",
        ctx.rack_name(rack)
    );
    let unplaced: Vec<&str> = devices
        .iter()
        .filter(|&&i| plan.devices[i].u.is_none())
        .map(|&i| plan.devices[i].name.as_str())
        .collect();
    if !unplaced.is_empty() {
        put!(out, " Not placed (no U): {}.", Esc(&unplaced.join(", ")));
    }
    out.push_str("</figcaption>\n</figure>\n");

    // The cable table, on its own pages.
    out.push_str("<table class=\"cables rk\">\n<thead>\n");
    title_row(out, ctx, 13, &format!("{title}: cables by U and port"), no);
    out.push_str(
        "<tr><th>✓</th><th>Cable</th><th>U</th><th>Device</th><th class=\"n\">Port</th>\
         <th>End</th><th>Far rack</th><th>Far U</th><th>Far device</th><th class=\"n\">Far port</th>\
         <th>Kind</th><th class=\"n\">Length</th><th class=\"n\">Step</th></tr>\n</thead>\n<tbody>\n",
    );
    let mut last_device = usize::MAX;
    for e in ends {
        let c = &plan.cables[e.cable];
        let (here, far) = (&plan.devices[e.here.device], &plan.devices[e.far.device]);
        let class = if e.here.device == last_device {
            "m"
        } else {
            "f"
        };
        last_device = e.here.device;
        put!(
            out,
            "<tr class=\"{class}\"><td></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            Esc(&c.id),
            plan.position_text(here),
            Esc(&here.name),
            e.here.port,
            if e.is_a { "A" } else { "B" },
            ctx.rack_name(far.rack),
            plan.position_text(far),
            Esc(&far.name),
            e.far.port,
            c.kind,
            Length(c.length_m),
            c.step
        );
    }
    if ends.is_empty() {
        out.push_str("<tr><td colspan=\"13\">No cables in this rack.</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The sheet of the cables between racks `left` and `right`, sheet number `no`.
fn pair_sheet(
    out: &mut String,
    ctx: &Context,
    no: usize,
    (left, right): (usize, usize),
    cables: &[usize],
) {
    let plan = ctx.plan;
    let title = format!("Racks {} – {}", ctx.rack_name(left), ctx.rack_name(right));
    sheet_start(
        out,
        ctx,
        &format!("pair-{}-{}", left + 1, right + 1),
        "pair",
        no,
        &title,
    );
    put!(
        out,
        "<div data-racks=\"{} {}\">\n<p>{} cables between rack {} (left) and rack {} (right), \
         drawn from port to port; the cable id is written at both ends of its line. Only units \
         with cables to the other rack are drawn.</p>\n",
        ctx.rack_name(left),
        ctx.rack_name(right),
        cables.len(),
        ctx.rack_name(left),
        ctx.rack_name(right)
    );
    let parts = drawing_parts(ctx, left, cables);
    for (i, part) in parts.iter().enumerate() {
        out.push_str("<figure>\n");
        pair_drawing(out, ctx, left, right, part);
        if parts.len() > 1 {
            put!(
                out,
                "<figcaption>Part {} of {}: cables {} to {}.</figcaption>\n",
                i + 1,
                parts.len(),
                Esc(&plan.cables[part[0]].id),
                Esc(&plan.cables[part[part.len() - 1]].id)
            );
        }
        out.push_str("</figure>\n");
    }

    out.push_str("<table class=\"cables pr\">\n<thead>\n");
    title_row(
        out,
        ctx,
        11,
        &format!("{title}: cables in wiring order"),
        no,
    );
    put!(
        out,
        "<tr><th rowspan=\"2\">✓</th><th rowspan=\"2\">Cable</th><th colspan=\"3\">Left: rack {}</th>\
         <th colspan=\"3\">Right: rack {}</th><th rowspan=\"2\">Kind</th>\
         <th rowspan=\"2\" class=\"n\">Length</th><th rowspan=\"2\" class=\"n\">Step</th></tr>\n\
         <tr><th>U</th><th>Device</th><th class=\"n\">Port</th><th>U</th><th>Device</th>\
         <th class=\"n\">Port</th></tr>\n</thead>\n<tbody>\n",
        ctx.rack_name(left),
        ctx.rack_name(right)
    );
    for &i in cables {
        let c = &plan.cables[i];
        let (l, r) = sides(plan, c, left);
        let (dl, dr) = (&plan.devices[l.device], &plan.devices[r.device]);
        put!(
            out,
            "<tr><td></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>\n",
            Esc(&c.id),
            plan.position_text(dl),
            Esc(&dl.name),
            l.port,
            plan.position_text(dr),
            Esc(&dr.name),
            r.port,
            c.kind,
            Length(c.length_m),
            c.step
        );
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The ends of a cable between two racks: the one in `left`, then the other.
fn sides(plan: &Plan, c: &Cable, left: usize) -> (CableEnd, CableEnd) {
    if plan.devices[c.a.device].rack == left {
        (c.a, c.b)
    } else {
        (c.b, c.a)
    }
}

// ---------------------------------------------------------------------------------------------
// Drawings. SVG user units are millimetres on paper.

/// Width of every drawing.
const PAGE_W: f64 = 186.0;
/// Height available to the rack elevation.
const ELEVATION_H: f64 = 195.0;
/// Height available to one rack pair drawing; taller ones are split into parts.
const PAIR_H: f64 = 200.0;

/// Estimated width of `text` at font size `size` (DejaVu Sans is about 0.6 em per character).
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * 0.61 * size
}

/// Writes `<text>` at (x, y) with the given anchor, class and font size, squeezed into `room`
/// when the estimate says it would not fit.
#[allow(clippy::too_many_arguments)]
fn svg_text(
    out: &mut String,
    x: f64,
    y: f64,
    anchor: &str,
    class: &str,
    size: f64,
    room: f64,
    text: &str,
) {
    put!(out, "<text x=\"{x:.1}\" y=\"{y:.1}\"");
    if class_font(class) != Some(size) {
        put!(out, " font-size=\"{size:.2}\"");
    }
    if anchor != "start" {
        put!(out, " text-anchor=\"{anchor}\"");
    }
    if !class.is_empty() {
        put!(out, " class=\"{class}\"");
    }
    if text_width(text, size) > room {
        put!(
            out,
            " textLength=\"{:.1}\" lengthAdjust=\"spacingAndGlyphs\"",
            room.max(0.5)
        );
    }
    put!(out, ">{}</text>", Esc(text));
}

/// Font size the style sheet gives a class of SVG text (keep in step with [`CSS`]).
fn class_font(class: &str) -> Option<f64> {
    match class {
        "pn" | "pb" => Some(2.5),
        "pu" | "pp" => Some(2.3),
        "id" => Some(2.2),
        "gap" => Some(1.9),
        _ => None,
    }
}

fn svg_start(out: &mut String, width: f64, height: f64, label: &str) {
    put!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.1}mm\" height=\"{height:.1}mm\" \
         viewBox=\"0 0 {width:.1} {height:.1}\" role=\"img\" aria-label=\"{}\">\n",
        Esc(label)
    );
}

/// The rack seen from the front: every U from the top down, each device at its U with its name,
/// shared units divided into slots.
fn elevation(out: &mut String, ctx: &Context, rack: usize, devices: &[usize]) {
    let plan = ctx.plan;
    let units = plan.racks[rack].units.max(1);
    let highest = devices
        .iter()
        .filter_map(|&i| plan.devices[i].u)
        .max()
        .unwrap_or(0)
        .max(units);
    let uh = (ELEVATION_H / f64::from(highest)).min(4.5);
    let font = (uh * 0.62).min(2.6);
    // Shared units of a rack are drawn with the same slots, so that the columns line up.
    let slots = devices
        .iter()
        .filter_map(|&i| plan.devices[i].slot)
        .max()
        .unwrap_or(0)
        .min(64) as usize;
    let (label_w, body_x, body_w) = (8.0, 9.0, 84.0);
    let note_x = body_x + body_w + label_w + 2.0;
    let top = 1.0;
    let height = top * 2.0 + uh * f64::from(highest);
    svg_start(
        out,
        PAGE_W,
        height,
        &format!("elevation of rack {}", plan.racks[rack].name),
    );
    let y_of = |u: u32| top + uh * f64::from(highest - u);
    // Units and their numbers on both sides.
    for u in 1..=highest {
        let y = y_of(u);
        put!(
            out,
            "<line class=\"ul\" x1=\"{body_x}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
            body_x + body_w
        );
        let (size, base) = ((uh * 0.55).min(2.2), y + uh * 0.5 + uh.min(4.0) * 0.2);
        put!(
            out,
            "<text class=\"u\" x=\"{:.2}\" y=\"{base:.2}\" font-size=\"{size:.2}\" text-anchor=\"end\">{u}</text>\
             <text class=\"u\" x=\"{:.2}\" y=\"{base:.2}\" font-size=\"{size:.2}\">{u}</text>\n",
            label_w - 0.5,
            body_x + body_w + 1.0
        );
    }
    put!(
        out,
        "<rect class=\"fr\" x=\"{body_x}\" y=\"{top}\" width=\"{body_w}\" height=\"{:.1}\"/>\n",
        uh * f64::from(highest)
    );
    // Devices, unit by unit.
    let mut by_u: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in devices {
        if let Some(u) = plan.devices[i].u {
            by_u.entry(u).or_default().push(i);
        }
    }
    for (&u, list) in by_u.iter_mut() {
        list.sort_by_key(|&i| walk_key(&plan.devices[i]));
        let y = y_of(u);
        let base = y + uh * 0.5 + font * 0.36;
        let cells = slot_cells(plan, list, slots);
        let n = cells.len();
        let cell_w = body_w / n as f64;
        let names_fit = list
            .iter()
            .all(|&i| text_width(&plan.devices[i].name, font) <= cell_w - 1.0)
            || n == 1;
        for (k, cell) in cells.iter().enumerate() {
            let x = body_x + cell_w * k as f64;
            let Some(i) = *cell else {
                put!(
                    out,
                    "<rect class=\"sl\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" stroke-dasharray=\"0.6 0.6\"/>",
                    x + 0.25,
                    y + 0.25,
                    cell_w - 0.5,
                    uh - 0.5
                );
                continue;
            };
            let d = &plan.devices[i];
            let class = match (d.kind, n) {
                (DeviceKind::Switch, _) => "sw",
                (DeviceKind::Host, 1) => "ho",
                (DeviceKind::Host, _) => "sl",
            };
            put!(
                out,
                "<rect class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                x + 0.25,
                y + 0.25,
                cell_w - 0.5,
                uh - 0.5
            );
            let bold = if d.kind == DeviceKind::Switch {
                "b"
            } else {
                ""
            };
            if names_fit {
                svg_text(
                    out,
                    x + cell_w / 2.0,
                    base,
                    "middle",
                    bold,
                    font,
                    cell_w - 1.0,
                    &d.name,
                );
            } else {
                let slot = d.slot.map_or((k + 1) as u32, |s| s);
                svg_text(
                    out,
                    x + cell_w / 2.0,
                    base,
                    "middle",
                    bold,
                    font.min(cell_w * 0.8),
                    cell_w - 0.3,
                    &slot.to_string(),
                );
            }
        }
        // Notes to the right: names that did not fit, or a switch's cable count.
        let note = if !names_fit {
            let first = &plan.devices[list[0]];
            let last = &plan.devices[list[list.len() - 1]];
            if list.len() == 1 {
                first.name.clone()
            } else if list.len() == 2 {
                format!("{}, {}", first.name, last.name)
            } else {
                format!("{} … {} ({} hosts)", first.name, last.name, list.len())
            }
        } else if list.len() == 1 && plan.devices[list[0]].kind == DeviceKind::Switch {
            let i = list[0];
            match ctx.leaving[i] {
                0 => format!("{} cables", ctx.cables_on[i]),
                m => format!("{} cables, {m} to other racks", ctx.cables_on[i]),
            }
        } else {
            String::new()
        };
        if !note.is_empty() {
            svg_text(
                out,
                note_x,
                base,
                "start",
                "an",
                font,
                PAGE_W - note_x,
                &note,
            );
        }
        out.push('\n');
    }
    out.push_str("</svg>\n");
}

/// Cells of one U: a single device, or the slots of a shared U (empty slots as `None`).
fn slot_cells(plan: &Plan, list: &[usize], slots: usize) -> Vec<Option<usize>> {
    let n = if list.len() == 1 && plan.devices[list[0]].slot.is_none() {
        1
    } else {
        list.len().max(slots)
    };
    let mut cells = vec![None; n];
    let mut rest = Vec::new();
    for &i in list {
        match plan.devices[i].slot {
            Some(s) if (1..=n).contains(&(s as usize)) && cells[s as usize - 1].is_none() => {
                cells[s as usize - 1] = Some(i);
            }
            _ => rest.push(i),
        }
    }
    for i in rest {
        if let Some(free) = cells.iter_mut().find(|c| c.is_none()) {
            *free = Some(i);
        }
    }
    cells
}

/// Vertical layout of a rack pair drawing.
const PITCH: f64 = 3.4;
const ROW_PAD: f64 = 0.4;
const ROW_GAP: f64 = 0.6;
/// Extra space where units without cables to the other rack are left out.
const ROW_BREAK: f64 = 2.6;

/// Splits a pair's cables into drawings that each fit a page: cables taken by their left end
/// from the top of the rack down.
fn drawing_parts(ctx: &Context, left: usize, cables: &[usize]) -> Vec<Vec<usize>> {
    let plan = ctx.plan;
    let mut order: Vec<usize> = cables.to_vec();
    order.sort_by_cached_key(|&i| {
        let (l, _) = sides(plan, &plan.cables[i], left);
        (walk_key(&plan.devices[l.device]), l.device, l.port, i)
    });
    // The height only grows with more cables: take the longest run that fits, at least one.
    let fits = |part: &[usize]| pair_layout(plan, left, part).height <= PAIR_H;
    let mut parts = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let (mut lo, mut hi) = (start + 1, order.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(&order[start..mid]) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        parts.push(order[start..lo].to_vec());
        start = lo;
    }
    parts
}

/// Where everything of a rack pair drawing goes.
struct PairLayout {
    left: (Vec<Row>, Vec<(f64, u32, u32)>),
    right: (Vec<Row>, Vec<(f64, u32, u32)>),
    /// y of the left and right end of each cable of the part.
    y_left: Vec<f64>,
    y_right: Vec<f64>,
    /// Height of the drawing.
    height: f64,
}

fn pair_layout(plan: &Plan, left: usize, part: &[usize]) -> PairLayout {
    let mut left_ends = Vec::with_capacity(part.len());
    let mut right_ends = Vec::with_capacity(part.len());
    for (k, &i) in part.iter().enumerate() {
        let (l, r) = sides(plan, &plan.cables[i], left);
        left_ends.push((l, k));
        right_ends.push((r, k));
    }
    let mut y_left = vec![0.0; part.len()];
    let mut y_right = vec![0.0; part.len()];
    let (left_rows, left_breaks, hl) = side_rows(plan, &left_ends, &mut y_left);
    let (right_rows, right_breaks, hr) = side_rows(plan, &right_ends, &mut y_right);
    PairLayout {
        left: (left_rows, left_breaks),
        right: (right_rows, right_breaks),
        y_left,
        y_right,
        height: hl.max(hr) + 6.0,
    }
}

/// One device row of a rack pair drawing.
struct Row {
    device: usize,
    top: f64,
    height: f64,
    /// Port and cable (index into the part) of each end, top to bottom.
    ends: Vec<(u8, usize)>,
}

/// Rows of one side, top of the rack first, and the units left out between them (y of the
/// gap, highest and lowest unit not drawn); sets the y of each cable's end; returns the height.
fn side_rows(
    plan: &Plan,
    ends: &[(CableEnd, usize)],
    y_of: &mut [f64],
) -> (Vec<Row>, Vec<(f64, u32, u32)>, f64) {
    let mut sorted: Vec<(CableEnd, usize)> = ends.to_vec();
    sorted.sort_by_cached_key(|&(end, k)| {
        (walk_key(&plan.devices[end.device]), end.device, end.port, k)
    });
    let mut by_device: Vec<(usize, Vec<(u8, usize)>)> = Vec::new();
    for (end, k) in sorted {
        match by_device.last_mut() {
            Some((device, list)) if *device == end.device => list.push((end.port, k)),
            _ => by_device.push((end.device, vec![(end.port, k)])),
        }
    }
    let mut rows = Vec::new();
    let mut breaks = Vec::new();
    let mut y = 0.5;
    let mut above: Option<u32> = None;
    for (device, list) in by_device {
        let u = plan.devices[device].u;
        if let (Some(prev), Some(u)) = (above, u)
            && prev > u + 1
        {
            breaks.push((y + ROW_BREAK / 2.0 - ROW_GAP / 2.0, prev - 1, u + 1));
            y += ROW_BREAK;
        }
        above = u;
        let height = 2.0 * ROW_PAD + PITCH * list.len() as f64;
        for (j, &(_, k)) in list.iter().enumerate() {
            y_of[k] = y + ROW_PAD + PITCH * (j as f64 + 0.5);
        }
        rows.push(Row {
            device,
            top: y,
            height,
            ends: list,
        });
        y += height + ROW_GAP;
    }
    (rows, breaks, y)
}

/// Two racks side by side, every cable of `part` drawn from its port on the left to its port on
/// the right, labelled with its id at both ends.
fn pair_drawing(out: &mut String, ctx: &Context, left: usize, right: usize, part: &[usize]) {
    let plan = ctx.plan;
    let PairLayout {
        left: (left_rows, left_breaks),
        right: (right_rows, right_breaks),
        y_left: yl,
        y_right: yr,
        height,
    } = pair_layout(plan, left, part);
    svg_start(
        out,
        PAGE_W,
        height,
        &format!(
            "cables between racks {} and {}",
            plan.racks[left].name, plan.racks[right].name
        ),
    );
    // Geometry: U labels | device boxes | label stubs | crossing | label stubs | boxes | U labels.
    let (u_w, box_w, stub) = (9.0, 44.0, 20.0);
    let (lx0, lx1) = (u_w, u_w + box_w);
    let (rx1, rx0) = (PAGE_W - u_w, PAGE_W - u_w - box_w);
    let bottom = height - 1.5;
    // Rack names below the drawing.
    for (x, rack) in [((lx0 + lx1) / 2.0, left), ((rx0 + rx1) / 2.0, right)] {
        svg_text(
            out,
            x,
            bottom,
            "middle",
            "b",
            3.0,
            box_w,
            &format!("rack {}", plan.racks[rack].name),
        );
    }
    out.push('\n');
    let name_font = 2.5;
    let port_font = 2.3;
    for (breaks, x0) in [(&left_breaks, lx0), (&right_breaks, rx0)] {
        for &(y, high, low) in breaks.iter() {
            let text = if high == low {
                format!("U{high:02} not shown")
            } else {
                format!("U{high:02}–U{low:02} not shown")
            };
            svg_text(
                out,
                x0 + box_w / 2.0,
                y + 0.7,
                "middle",
                "gap",
                1.9,
                box_w,
                &text,
            );
        }
    }
    for (rows, is_left) in [(&left_rows, true), (&right_rows, false)] {
        let (x0, x1) = if is_left { (lx0, lx1) } else { (rx0, rx1) };
        for row in rows.iter() {
            let d = &plan.devices[row.device];
            let class = if d.kind == DeviceKind::Switch {
                "sw"
            } else {
                "ho"
            };
            put!(
                out,
                "<rect class=\"{class}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{box_w:.1}\" height=\"{:.1}\"/>",
                row.top,
                row.height
            );
            let base = row.top + ROW_PAD + PITCH * 0.5 + name_font * 0.36;
            let pos = plan.position_text(d);
            let (ux, anchor) = if is_left {
                (x0 - 0.8, "end")
            } else {
                (x1 + 0.8, "start")
            };
            svg_text(out, ux, base, anchor, "pu", 2.3, u_w - 1.0, &pos);
            let ports_w = row
                .ends
                .iter()
                .map(|&(p, _)| text_width(&format!("P{p}"), port_font))
                .fold(0.0, f64::max);
            let room = box_w - ports_w - 2.5;
            let (nx, anchor) = if is_left {
                (x0 + 1.0, "start")
            } else {
                (x1 - 1.0, "end")
            };
            let class = if d.kind == DeviceKind::Switch {
                "pb"
            } else {
                "pn"
            };
            svg_text(out, nx, base, anchor, class, name_font, room, &d.name);
            for &(port, k) in &row.ends {
                let y = if is_left { yl[k] } else { yr[k] };
                let (px, anchor) = if is_left {
                    (x1 - 1.0, "end")
                } else {
                    (x0 + 1.0, "start")
                };
                svg_text(
                    out,
                    px,
                    y + port_font * 0.36,
                    anchor,
                    "pp",
                    port_font,
                    box_w / 2.0,
                    &format!("P{port}"),
                );
            }
            out.push('\n');
        }
    }
    // Lines: horizontal stubs carrying the ids, then a straight crossing.
    let styles = line_styles(&yl, &yr);
    for k in 0..part.len() {
        put!(
            out,
            "<path class=\"s{}\" d=\"M{lx1:.1} {:.1}H{:.1}L{:.1} {:.1}H{rx0:.1}\"/>",
            styles[k],
            yl[k],
            lx1 + stub,
            rx0 - stub,
            yr[k]
        );
    }
    out.push('\n');
    for k in 0..part.len() {
        put!(
            out,
            "<circle cx=\"{lx1:.1}\" cy=\"{:.1}\" r=\"0.55\"/><circle cx=\"{rx0:.1}\" cy=\"{:.1}\" r=\"0.55\"/>",
            yl[k],
            yr[k]
        );
        let id = &plan.cables[part[k]].id;
        svg_text(
            out,
            lx1 + 1.0,
            yl[k] - 0.55,
            "start",
            "id",
            2.2,
            stub - 1.5,
            id,
        );
        svg_text(
            out,
            rx0 - 1.0,
            yr[k] - 0.55,
            "end",
            "id",
            2.2,
            stub - 1.5,
            id,
        );
        out.push('\n');
    }
    out.push_str("</svg>\n");
}

/// Number of line styles (`s0` … in [`CSS`]).
const LINE_STYLES: usize = 6;

/// A line style per cable such that cables whose ends are next to each other, on either side,
/// differ; the styles cycle down the left side where they can.
fn line_styles(y_left: &[f64], y_right: &[f64]) -> Vec<usize> {
    let n = y_left.len();
    let by = |y: &[f64]| {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| y[a].total_cmp(&y[b]));
        order
    };
    let mut neighbours = vec![Vec::new(); n];
    for order in [by(y_left), by(y_right)] {
        for w in order.windows(2) {
            neighbours[w[0]].push(w[1]);
            neighbours[w[1]].push(w[0]);
        }
    }
    // At most four neighbours each: one of six styles is always free.
    let mut styles = vec![usize::MAX; n];
    for (pos, k) in by(y_left).into_iter().enumerate() {
        let taken = |s: usize| neighbours[k].iter().any(|&j| styles[j] == s);
        styles[k] = (0..LINE_STYLES)
            .map(|d| (pos + d) % LINE_STYLES)
            .find(|&s| !taken(s))
            .unwrap_or(pos % LINE_STYLES);
    }
    styles
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibfabric::plan::build::{PlanOptions, plan_for};

    fn plan(spec: &str) -> Plan {
        plan_for(&spec.parse().unwrap(), &PlanOptions::default()).unwrap()
    }

    /// The sheets of a document: (kind, text), split at the sheet markers.
    fn sheets(doc: &str) -> Vec<(&str, &str)> {
        let marker = "<section class=\"sheet\"";
        let mut starts: Vec<usize> = doc.match_indices(marker).map(|(i, _)| i).collect();
        starts.push(doc.len());
        starts
            .windows(2)
            .map(|w| {
                let text = &doc[w[0]..w[1]];
                let kind = text
                    .split("data-sheet=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .unwrap();
                (kind, text)
            })
            .collect()
    }

    /// The value of the summary cell with the given id.
    fn summary_count(doc: &str, id: &str) -> usize {
        let key = format!("id=\"n-{id}\">");
        let at = doc.find(&key).unwrap_or_else(|| panic!("no {key}")) + key.len();
        doc[at..].split('<').next().unwrap().parse().unwrap()
    }

    /// A cable id as a table cell.
    fn cell(id: &str) -> String {
        format!("<td>{id}</td>")
    }

    #[test]
    fn slimfly_q5_has_a_sheet_per_rack_and_rack_pair_with_every_cable() {
        let p = plan("slimfly:q=5");
        let doc = render(&p);
        let sheets = sheets(&doc);
        let count = |kind: &str| sheets.iter().filter(|s| s.0 == kind).count();
        assert_eq!((count("summary"), count("rack"), count("pair")), (1, 5, 10));
        assert_eq!(sheets.len(), 16);
        assert_eq!(sheets[0].0, "summary");
        assert!(sheets[15].1.contains("sheet 16 of 16"));

        let rack_sheet = |r: usize| {
            let marker = format!("data-rack=\"{}\"", p.racks[r].name);
            sheets
                .iter()
                .find(|s| s.0 == "rack" && s.1.contains(&marker))
                .unwrap()
                .1
        };
        let pair_sheet = |a: usize, b: usize| {
            let marker = format!(
                "data-racks=\"{} {}\"",
                p.racks[a.min(b)].name,
                p.racks[a.max(b)].name
            );
            sheets
                .iter()
                .find(|s| s.0 == "pair" && s.1.contains(&marker))
                .unwrap()
                .1
        };
        for c in &p.cables {
            let (ra, rb) = (p.devices[c.a.device].rack, p.devices[c.b.device].rack);
            let id = cell(&c.id);
            let rows = |sheet: &str| sheet.matches(&id).count();
            if ra == rb {
                // One row per end, both in the same rack.
                assert_eq!(rows(rack_sheet(ra)), 2, "{}", c.id);
            } else {
                assert_eq!(rows(rack_sheet(ra)), 1, "{}", c.id);
                assert_eq!(rows(rack_sheet(rb)), 1, "{}", c.id);
                let pair = pair_sheet(ra, rb);
                assert_eq!(rows(pair), 1, "{} in the table of its pair", c.id);
                // Drawn, and labelled at both ends of its line.
                assert_eq!(
                    pair.matches(&format!(">{}</text>", c.id)).count(),
                    2,
                    "{}",
                    c.id
                );
            }
        }
        // Each pair sheet has its 10 cables, and only them.
        for (kind, text) in &sheets {
            if *kind == "pair" {
                assert_eq!(text.matches("<tr><td></td>").count(), 10);
                assert_eq!(text.matches("<path ").count(), 10);
            }
        }
        // A rack's table is in walking order: U from the top down.
        let table = &rack_sheet(0)[rack_sheet(0).find("<table class=\"cables rk\"").unwrap()..];
        let us: Vec<u32> = table
            .split("<tr class=")
            .filter(|row| row.starts_with("\"f\"") || row.starts_with("\"m\""))
            .map(|row| row.split("<td>").nth(3).unwrap()[1..3].parse().unwrap())
            .collect();
        // 15 switch cables and 40 host cables inside the rack (two ends each), 4 × 10 leaving it.
        assert_eq!(us.len(), 2 * 15 + 2 * 40 + 4 * 10);
        assert!(us.windows(2).all(|w| w[0] >= w[1]), "{us:?}");
    }

    #[test]
    fn summary_counts_match_the_plan() {
        for spec in [
            "slimfly:q=5",
            "mlfm:d=3",
            "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18",
        ] {
            let p = plan(spec);
            let doc = render(&p);
            let summary = sheets(&doc)[0].1;
            let devices = |k| p.devices.iter().filter(|d| d.kind == k).count();
            let cables = |k| p.cables.iter().filter(|c| c.kind == k).count();
            assert_eq!(summary_count(summary, "racks"), p.racks.len());
            assert_eq!(
                summary_count(summary, "switches"),
                devices(DeviceKind::Switch)
            );
            assert_eq!(summary_count(summary, "hosts"), devices(DeviceKind::Host));
            assert_eq!(summary_count(summary, "cables"), p.cables.len());
            assert_eq!(summary_count(summary, "copper"), cables(CableKind::Copper));
            assert_eq!(
                summary_count(summary, "optical"),
                cables(CableKind::Optical)
            );
            // The purchase list adds up per kind and length.
            let purchase = &summary[summary.find("id=\"purchase\"").unwrap()..];
            let purchase = &purchase[..purchase.find("</table>").unwrap()];
            let mut listed = 0;
            for row in purchase.split("<tr data-kind=\"").skip(1) {
                let kind: CableKind = row.split('"').next().unwrap().parse().unwrap();
                let cells: Vec<&str> = row
                    .split("<td class=\"n\">")
                    .skip(1)
                    .map(|s| s.split('<').next().unwrap())
                    .collect();
                let length: f64 = cells[0].trim_end_matches(" m").parse().unwrap();
                let n: usize = cells[1].parse().unwrap();
                let expected = p
                    .cables
                    .iter()
                    .filter(|c| c.kind == kind && c.length_m == Some(length))
                    .count();
                assert_eq!(n, expected, "{spec}: {kind} {length} m");
                listed += n;
            }
            assert_eq!(listed, p.cables.len(), "{spec}");
            // Steps in order with their names and counts.
            let steps = &summary[summary.find("id=\"steps\"").unwrap()..];
            for (s, (name, n)) in p.steps.iter().zip(p.cables_per_step()).enumerate() {
                let row = format!(
                    "<tr data-step=\"{}\"><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{n}</td>",
                    s + 1,
                    s + 1,
                    Esc(name)
                );
                assert!(steps.contains(&row), "{spec}: {row}");
            }
            // And the label legend shows a real label.
            assert!(summary.contains(&Esc(&p.label(&p.cables[0])).to_string()));
        }
    }

    #[test]
    fn text_is_escaped() {
        let mut p = plan("slimfly:q=3");
        let evil = "sw<b>&\"quoted\"'s";
        let i = p.device_by_name("sw0-0-0").unwrap();
        p.devices[i].name = evil.into();
        p.racks[1].name = "R<2>&".into();
        p.name = "fabric <one> & \"two\"".into();
        p.steps[0] = "step <1> & 'first'".into();
        p.cables[0].id = "C<1>".into();
        let doc = render(&p);
        assert!(!doc.contains("<b>&"), "raw name in the document");
        assert!(!doc.contains("R<2>") && !doc.contains("<one>") && !doc.contains("C<1>"));
        let escaped = "sw&lt;b&gt;&amp;&quot;quoted&quot;&#39;s";
        // In the elevation, the tables of its rack and its neighbours' racks and pairs.
        assert!(doc.matches(escaped).count() > 5);
        assert!(doc.contains("R&lt;2&gt;&amp;"));
        assert!(
            doc.contains("<title>Wiring sheets: fabric &lt;one&gt; &amp; &quot;two&quot;</title>")
        );
        assert!(doc.contains("step &lt;1&gt; &amp; &#39;first&#39;"));
        assert!(doc.contains("C&lt;1&gt;"));
        // Every `<` starts a tag or a comment: no raw text `<`.
        for (i, _) in doc.match_indices('<') {
            let next = doc[i + 1..].chars().next().unwrap();
            assert!(
                next.is_ascii_alphabetic() || next == '/' || next == '!',
                "raw < at {i}: {}",
                &doc[i.saturating_sub(30)..(i + 30).min(doc.len())]
            );
        }
    }

    #[test]
    fn elements_are_balanced() {
        for spec in [
            "slimfly:q=5",
            "mlfm:d=3",
            "lsft:n=3",
            "fattree:leaves=12,spines=6,links-per-pair=3,hosts-per-leaf=18",
            "polarfly:q=5",
        ] {
            let doc = render(&plan(spec));
            for tag in [
                "svg", "table", "section", "thead", "tbody", "figure", "tr", "text",
            ] {
                let open = doc.matches(&format!("<{tag}>")).count()
                    + doc.matches(&format!("<{tag} ")).count();
                let close = doc.matches(&format!("</{tag}>")).count();
                assert_eq!(open, close, "{spec}: <{tag}>");
                assert!(open > 0, "{spec}: no <{tag}>");
            }
            assert!(doc.starts_with("<!DOCTYPE html>") && doc.ends_with("</html>\n"));
            // Self-contained: no scripts, nothing fetched.
            assert!(!doc.contains("<script") && !doc.contains("src=") && !doc.contains("url("));
            // Every drawing fits the printable width.
            for svg in doc.split("<svg ").skip(1) {
                let width: f64 = svg
                    .split("width=\"")
                    .nth(1)
                    .and_then(|s| s.split("mm\"").next())
                    .unwrap()
                    .parse()
                    .unwrap();
                let height: f64 = svg
                    .split("height=\"")
                    .nth(1)
                    .and_then(|s| s.split("mm\"").next())
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(
                    width <= 186.0 && height <= 215.0,
                    "{spec}: {width} x {height}"
                );
            }
        }
    }

    #[test]
    fn large_pairs_are_split_into_drawings_that_fit_a_page() {
        // 18 cables from each leaf to the spine rack; with a single spine rack of 6 spines
        // that is fine, but a pair of 200 cables must be split.
        let p = plan("fattree:leaves=4,spines=2,links-per-pair=40,hosts-per-leaf=2");
        let doc = render(&p);
        let pair = sheets(&doc).into_iter().find(|s| s.0 == "pair").unwrap().1;
        let drawings = pair.matches("<svg ").count();
        assert!(drawings > 1, "{drawings} drawings");
        assert_eq!(pair.matches("<path ").count(), 80);
    }

    #[test]
    fn neighbouring_lines_differ_in_style() {
        // Left ends in order, right ends in reverse and shuffled orders.
        let left: Vec<f64> = (0..40).map(f64::from).collect();
        for right in [
            left.iter().rev().copied().collect::<Vec<_>>(),
            (0..40).map(|i| f64::from((i * 7) % 40)).collect(),
            vec![0.0; 40],
        ] {
            let styles = line_styles(&left, &right);
            assert!(styles.iter().all(|&s| s < LINE_STYLES));
            assert!(styles.windows(2).all(|w| w[0] != w[1]));
            let mut order: Vec<usize> = (0..40).collect();
            order.sort_by(|&a, &b| right[a].total_cmp(&right[b]));
            if right.iter().any(|&y| y != 0.0) {
                assert!(order.windows(2).all(|w| styles[w[0]] != styles[w[1]]));
            }
        }
    }
}
