//! Tests of the wiring sheets: structure, contents and page geometry.

use super::*;
use ibfabric::plan::build::{PlanOptions, plan_for};

fn plan(spec: &str) -> Plan {
    plan_for(&spec.parse().unwrap(), &PlanOptions::default()).unwrap()
}

/// The sheets of a document: (kind, text), split at the sheet markers (the plan's sheets and
/// the verification page's alike).
pub(super) fn sheets(doc: &str) -> Vec<(&str, &str)> {
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
                Escaped(name)
            );
            assert!(steps.contains(&row), "{spec}: {row}");
        }
        // And the label legend shows a real label.
        assert!(summary.contains(&Escaped(&p.label(&p.cables[0])).to_string()));
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
    assert!(doc.contains("<title>Wiring sheets: fabric &lt;one&gt; &amp; &quot;two&quot;</title>"));
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
            let open =
                doc.matches(&format!("<{tag}>")).count() + doc.matches(&format!("<{tag} ")).count();
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
