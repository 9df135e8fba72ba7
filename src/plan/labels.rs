//! Cable labels, one per cable end, for label printers and the rack sheets.
//!
//! A cable carries a label at each end, and the technician holding one end wants to read
//! first where *this* end goes: each end's text is the cable id, this end, then the far end
//! (`SF-0001`, `R01-U42-sw0-0-0-P10`, `to R01-U41-sw0-0-1-P11`). Printers take a fixed width, so
//! the text is broken into lines of at most that many characters, between the parts, then
//! after a `-`, and only inside a word when nothing else fits.

use super::{Cable, CableEnd, Plan};

/// The default label width in characters (a 24 mm tape at the usual font size).
pub const DEFAULT_WIDTH: usize = 24;

/// The columns of [`write`].
pub const COLUMNS: [&str; 7] = ["cable_id", "end", "rack", "u", "device", "port", "text"];

/// One end's label parts: the cable id, this end, the far end.
pub fn end_parts(plan: &Plan, cable: &Cable, here: CableEnd) -> [String; 3] {
    let far = if here == cable.a { cable.b } else { cable.a };
    let place = |e: CableEnd| {
        format!(
            "{}-P{}",
            plan.label_place(&plan.devices[e.device]),
            plan.port_label(e).unwrap_or_else(|| e.port.to_string())
        )
    };
    [cable.id.clone(), place(here), format!("to {}", place(far))]
}

/// One end's label on one line (for sheets): `SF-0001 R01-U42-sw0-0-0-P10 to R01-…-P11`.
pub fn end_text(plan: &Plan, cable: &Cable, here: CableEnd) -> String {
    end_parts(plan, cable, here).join(" ")
}

/// The parts broken into lines of at most `width` characters (at least 1).
pub fn wrap(parts: &[String], width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    for part in parts {
        let mut line = String::new();
        // Pieces end after each `-` or space, so a break never loses a character.
        let mut pieces: Vec<&str> = part.split_inclusive(['-', ' ']).collect();
        pieces.reverse();
        while let Some(piece) = pieces.pop() {
            let (have, add) = (line.chars().count(), piece.chars().count());
            if have + add <= width {
                line.push_str(piece);
            } else if have > 0 {
                lines.push(line.trim_end().to_string());
                line = String::new();
                pieces.push(piece);
            } else {
                let cut = piece
                    .char_indices()
                    .nth(width)
                    .map_or(piece.len(), |(i, _)| i);
                lines.push(piece[..cut].to_string());
                if cut < piece.len() {
                    pieces.push(&piece[cut..]);
                }
            }
        }
        if !line.trim_end().is_empty() {
            lines.push(line.trim_end().to_string());
        }
    }
    lines
}

/// The label printer CSV: a header, then one row per cable end (A, then B, cables in wiring
/// order) with its place and its text, lines of at most `width` characters separated by line
/// breaks inside the quoted `text` field.
pub fn write(plan: &Plan, width: usize) -> String {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    out.write_record(COLUMNS).expect("writing to memory");
    for cable in &plan.cables {
        for (end, here) in [("A", cable.a), ("B", cable.b)] {
            let d = &plan.devices[here.device];
            let text = wrap(&end_parts(plan, cable, here), width).join("\n");
            out.write_record([
                cable.id.as_str(),
                end,
                plan.racks[d.rack].name.as_str(),
                &d.u.map_or(String::new(), |u| u.to_string()),
                d.name.as_str(),
                &plan
                    .port_label(here)
                    .unwrap_or_else(|| here.port.to_string()),
                &text,
            ])
            .expect("writing to memory");
        }
    }
    String::from_utf8(out.into_inner().expect("flushing to memory")).expect("UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::build::{PlanOptions, plan_for};

    #[test]
    fn wrapped_lines_fit_and_keep_every_character() {
        let parts = [
            "SF-0001".to_string(),
            "R01-U42-sw0-0-0-P10".to_string(),
            "to R01-U41-a-very-long-hostname-without-breaks-P1".to_string(),
            "x".repeat(40),
        ];
        for width in 1..=60 {
            let lines = wrap(&parts, width);
            assert!(
                lines.iter().all(|l| l.chars().count() <= width),
                "{width}: {lines:?}"
            );
            let squeeze = |t: &str| t.replace(' ', "");
            assert_eq!(
                squeeze(&lines.concat()),
                squeeze(&parts.concat()),
                "{width}"
            );
        }
        assert_eq!(
            wrap(&parts[..3], 24),
            [
                "SF-0001",
                "R01-U42-sw0-0-0-P10",
                "to R01-U41-a-very-long-",
                "hostname-without-breaks-",
                "P1"
            ]
        );
    }

    #[test]
    fn one_row_per_cable_end_each_starting_with_its_own_place() {
        let plan = plan_for(&"slimfly:q=5".parse().unwrap(), &PlanOptions::default()).unwrap();
        for width in [12, DEFAULT_WIDTH, 80] {
            let text = write(&plan, width);
            let mut reader = ::csv::Reader::from_reader(text.as_bytes());
            assert_eq!(
                reader.headers().unwrap().iter().collect::<Vec<_>>(),
                COLUMNS
            );
            let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
            assert_eq!(rows.len(), 2 * plan.cables.len());
            assert_eq!(rows.len(), 750);
            for (row, (cable, end)) in rows
                .iter()
                .zip(plan.cables.iter().flat_map(|c| [(c, c.a), (c, c.b)]))
            {
                assert!(
                    row[6].lines().all(|l| l.chars().count() <= width),
                    "{:?}",
                    &row[6]
                );
                assert_eq!(&row[4], plan.devices[end.device].name);
                let parts = end_parts(&plan, cable, end);
                assert!(parts[1].contains(&format!("-{}-P", &row[4])));
                let squeeze = |t: &str| t.replace([' ', '\n'], "");
                assert_eq!(squeeze(&row[6]), squeeze(&parts.concat()));
            }
        }
    }
}
