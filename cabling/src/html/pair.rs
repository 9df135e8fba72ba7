//! The rack pair sheets: both racks side by side with every cable between them drawn port
//! to port, split into drawings that fit a page.

use std::fmt::Write;

use ibfabric::plan::{Cable, CableEnd, DeviceKind, Plan};

use super::*;

/// The sheet of the cables between racks `left` and `right`, sheet number `no`.
pub(super) fn pair_sheet(
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
                Escaped(&plan.cables[part[0]].id),
                Escaped(&plan.cables[part[part.len() - 1]].id)
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
            Escaped(&c.id),
            plan.position_text(dl),
            Escaped(&dl.name),
            plan.port_text(l),
            plan.position_text(dr),
            Escaped(&dr.name),
            plan.port_text(r),
            c.kind,
            Length(c.length_m),
            c.step
        );
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The ends of a cable between two racks: the one in `left`, then the other.
pub(super) fn sides(plan: &Plan, c: &Cable, left: usize) -> (CableEnd, CableEnd) {
    if plan.devices[c.a.device].rack == left {
        (c.a, c.b)
    } else {
        (c.b, c.a)
    }
}

// ---------------------------------------------------------------------------------------------
// Drawings. SVG user units are millimetres on paper.

/// Vertical layout of a rack pair drawing.
pub(super) const PITCH: f64 = 3.4;
pub(super) const ROW_PAD: f64 = 0.4;
pub(super) const ROW_GAP: f64 = 0.6;
/// Extra space where units without cables to the other rack are left out.
pub(super) const ROW_BREAK: f64 = 2.6;

/// Splits a pair's cables into drawings that each fit a page: cables taken by their left end
/// from the top of the rack down.
pub(super) fn drawing_parts(ctx: &Context, left: usize, cables: &[usize]) -> Vec<Vec<usize>> {
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
pub(super) struct PairLayout {
    left: (Vec<Row>, Vec<(f64, u32, u32)>),
    right: (Vec<Row>, Vec<(f64, u32, u32)>),
    /// y of the left and right end of each cable of the part.
    y_left: Vec<f64>,
    y_right: Vec<f64>,
    /// Height of the drawing.
    height: f64,
}

pub(super) fn pair_layout(plan: &Plan, left: usize, part: &[usize]) -> PairLayout {
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
pub(super) struct Row {
    device: usize,
    top: f64,
    height: f64,
    /// Port and cable (index into the part) of each end, top to bottom.
    ends: Vec<(u8, usize)>,
}

/// Rows of one side, top of the rack first, and the units left out between them (y of the
/// gap, highest and lowest unit not drawn); sets the y of each cable's end; returns the height.
pub(super) fn side_rows(
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
pub(super) fn pair_drawing(
    out: &mut String,
    ctx: &Context,
    left: usize,
    right: usize,
    part: &[usize],
) {
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
            (x, bottom),
            &TextStyle {
                anchor: "middle",
                class: "b",
                size: 3.0,
                room: box_w,
            },
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
                (x0 + box_w / 2.0, y + 0.7),
                &TextStyle {
                    anchor: "middle",
                    class: "gap",
                    size: 1.9,
                    room: box_w,
                },
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
            svg_text(
                out,
                (ux, base),
                &TextStyle {
                    anchor,
                    class: "pu",
                    size: 2.3,
                    room: u_w - 1.0,
                },
                &pos,
            );
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
            svg_text(
                out,
                (nx, base),
                &TextStyle {
                    anchor,
                    class,
                    size: name_font,
                    room,
                },
                &d.name,
            );
            for &(port, k) in &row.ends {
                let y = if is_left { yl[k] } else { yr[k] };
                let (px, anchor) = if is_left {
                    (x1 - 1.0, "end")
                } else {
                    (x0 + 1.0, "start")
                };
                svg_text(
                    out,
                    (px, y + port_font * 0.36),
                    &TextStyle {
                        anchor,
                        class: "pp",
                        size: port_font,
                        room: box_w / 2.0,
                    },
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
            (lx1 + 1.0, yl[k] - 0.55),
            &TextStyle {
                anchor: "start",
                class: "id",
                size: 2.2,
                room: stub - 1.5,
            },
            id,
        );
        svg_text(
            out,
            (rx0 - 1.0, yr[k] - 0.55),
            &TextStyle {
                anchor: "end",
                class: "id",
                size: 2.2,
                room: stub - 1.5,
            },
            id,
        );
        out.push('\n');
    }
    out.push_str("</svg>\n");
}

/// Number of line styles (`s0` … in [`CSS`]).
pub(super) const LINE_STYLES: usize = 6;

/// A line style per cable such that cables whose ends are next to each other, on either side,
/// differ; the styles cycle down the left side where they can.
pub(super) fn line_styles(y_left: &[f64], y_right: &[f64]) -> Vec<usize> {
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
