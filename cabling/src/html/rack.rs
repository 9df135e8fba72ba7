//! The rack sheets: a rack elevation and every cable with an end in the rack.

use std::collections::BTreeMap;
use std::fmt::Write;

use ibfabric::plan::{DeviceKind, Plan, labels};

use super::*;

pub(super) fn rack_sheet(out: &mut String, ctx: &Context, rack: usize) {
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
    spare_ports_row(out, plan, devices);
    out.push_str("</table>\n");

    out.push_str("<figure>\n");
    elevation(out, ctx, rack, devices, None);
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
        put!(
            out,
            " Not placed (no U): {}.",
            Escaped(&unplaced.join(", "))
        );
    }
    out.push_str("</figcaption>\n</figure>\n");

    // The cable table, on its own pages.
    out.push_str("<table class=\"cables rk\">\n<thead>\n");
    title_row(out, ctx, 14, &format!("{title}: cables by U and port"), no);
    out.push_str(
        "<tr><th>✓</th><th>Cable</th><th>U</th><th>Device</th><th class=\"n\">Port</th>\
         <th>End</th><th>Far rack</th><th>Far U</th><th>Far device</th><th class=\"n\">Far port</th>\
         <th>Kind</th><th class=\"n\">Length</th><th class=\"n\">Step</th>\
         <th>Label at this end</th></tr>\n</thead>\n<tbody>\n",
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
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"lb\">{}</td></tr>\n",
            Escaped(&c.id),
            plan.position_text(here),
            Escaped(&here.name),
            plan.port_text(e.here),
            if e.is_a { "A" } else { "B" },
            ctx.rack_name(far.rack),
            plan.position_text(far),
            Escaped(&far.name),
            plan.port_text(e.far),
            c.kind,
            Length(c.length_m),
            c.step,
            Escaped(&labels::end_text(plan, c, e.here))
        );
    }
    if ends.is_empty() {
        out.push_str("<tr><td colspan=\"14\">No cables in this rack.</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The switches' ports no cable is planned for, switches with the same spare ports together:
/// `12–36: sw0-0-0, sw0-0-1`, faceplate labels after the numbers on cage switches. Only for
/// switches of a catalogue model (a construction's own switches have just the ports its
/// topology uses), and nothing when none of them has a spare port.
fn spare_ports_row(out: &mut String, plan: &Plan, devices: &[usize]) {
    let mut groups: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    for &d in devices {
        if plan.devices[d].kind != DeviceKind::Switch || plan.devices[d].model.is_none() {
            continue;
        }
        let spare = plan.spare_ports(d);
        if spare.is_empty() {
            continue;
        }
        match groups.iter_mut().find(|(s, _)| *s == spare) {
            Some((_, list)) => list.push(d),
            None => groups.push((spare, vec![d])),
        }
    }
    if groups.is_empty() {
        return;
    }
    out.push_str("<tr><th>Spare ports</th><td>");
    for (i, (spare, list)) in groups.iter().enumerate() {
        let sep = if i == 0 { "" } else { " · " };
        let first = CableEnd {
            device: list[0],
            port: 0,
        };
        let ranges: Vec<String> = port_ranges(spare)
            .into_iter()
            .map(|(from, to)| {
                let text = |port| plan.port_text(CableEnd { port, ..first });
                if from == to {
                    text(from)
                } else {
                    format!("{}–{}", text(from), text(to))
                }
            })
            .collect();
        let names: Vec<&str> = list
            .iter()
            .map(|&d| plan.devices[d].name.as_str())
            .collect();
        put!(
            out,
            "{sep}{} ({} ports): {}",
            ranges.join(", "),
            spare.len(),
            Escaped(&names.join(", "))
        );
    }
    out.push_str("</td></tr>\n");
}

/// Runs of consecutive port numbers, as (first, last).
fn port_ranges(ports: &[u8]) -> Vec<(u8, u8)> {
    let mut runs: Vec<(u8, u8)> = Vec::new();
    for &p in ports {
        match runs.last_mut() {
            Some((_, last)) if p > 0 && *last == p - 1 => *last = p,
            _ => runs.push((p, p)),
        }
    }
    runs
}

/// How a verification marks devices on an elevation (the verify page's; the plan's sheets
/// draw none).
pub(super) struct Marks {
    /// Per plan device, the style sheet's class of its box when marked: `vf` a cable to fix,
    /// `vd` a cable below its rate, `vu` not seen in the fabric.
    pub class: Vec<Option<&'static str>>,
    /// Per plan device, what the note beside its unit says instead of the cable count.
    pub note: Vec<Option<String>>,
}

/// The rack seen from the front: every U from the top down, each device at its U with its name,
/// shared units divided into slots; with `marks`, the marked devices in their colours and their
/// notes beside them.
pub(super) fn elevation(
    out: &mut String,
    ctx: &Context,
    rack: usize,
    devices: &[usize],
    marks: Option<&Marks>,
) {
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
            let marked = marks.and_then(|m| m.class[i]);
            let class = marked.unwrap_or(class);
            let device = match marked {
                Some(_) => format!(" data-device=\"{}\"", Escaped(&d.name)),
                None => String::new(),
            };
            put!(
                out,
                "<rect class=\"{class}\"{device} x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
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
                    (x + cell_w / 2.0, base),
                    &TextStyle {
                        anchor: "middle",
                        class: bold,
                        size: font,
                        room: cell_w - 1.0,
                    },
                    &d.name,
                );
            } else {
                let slot = d.slot.map_or((k + 1) as u32, |s| s);
                svg_text(
                    out,
                    (x + cell_w / 2.0, base),
                    &TextStyle {
                        anchor: "middle",
                        class: bold,
                        size: font.min(cell_w * 0.8),
                        room: cell_w - 0.3,
                    },
                    &slot.to_string(),
                );
            }
        }
        // Notes to the right: what a verification found, names that did not fit, or a
        // switch's cable count.
        let marked_notes: Vec<&str> = list
            .iter()
            .filter_map(|&i| marks.and_then(|m| m.note[i].as_deref()))
            .collect();
        let note = if !marked_notes.is_empty() {
            marked_notes.join("; ")
        } else if !names_fit {
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
                (note_x, base),
                &TextStyle {
                    anchor: "start",
                    class: if marked_notes.is_empty() { "an" } else { "vn" },
                    size: font,
                    room: PAGE_W - note_x,
                },
                &note,
            );
        }
        out.push('\n');
    }
    out.push_str("</svg>\n");
}

/// Cells of one U: a single device, or the slots of a shared U (empty slots as `None`).
pub(super) fn slot_cells(plan: &Plan, list: &[usize], slots: usize) -> Vec<Option<usize>> {
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
