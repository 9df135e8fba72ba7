//! The page of `ibfabric analyze --format html` as people see it: Slim Fly q = 7 routed with
//! 4 layers, analysed through the command line, the page checked for its plots and their data
//! marks, then rendered by headless Chromium and the screenshot checked for those marks'
//! colours — the bars cover the area their SVG rectangles declare, every curve is drawn.

use ibfabric::cli::html::analysis::{FABRIC_PLOT, PLOTS};
use ibfabric::cli::html::plot::{SIZE, colour, colour_hex};
use serde_json::Value;

use crate::command;
use crate::common::chromium::screenshot;

/// The routed fabric's tables, the JSON report and the page, in a scratch directory.
struct Analysed {
    dir: tempfile::TempDir,
    report: Value,
    html: String,
}

fn analyse_slimfly_q7() -> Analysed {
    let dir = tempfile::tempdir().unwrap();
    let lfts = dir.path().join("lfts.dump");
    let lfts_arg = lfts.to_str().unwrap();
    let out = command::ibfabric(&[
        "route",
        "--fabric",
        "slimfly:q=7",
        "--layers",
        "4",
        "--no-prefix",
        "--lft-out",
        lfts_arg,
    ]);
    assert!(out.status.success(), "route: {}", command::stderr(&out));
    let analyze = ["analyze", "--fabric", "slimfly:q=7", "--lfts", lfts_arg];
    let out = command::ibfabric(&[&analyze[..], &["--format", "json"]].concat());
    assert!(out.status.success(), "analyze: {}", command::stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let page = dir.path().join("analysis.html");
    let out = command::ibfabric(
        &[
            &analyze[..],
            &["--format", "html", "--output", page.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.status.success(), "analyze: {}", command::stderr(&out));
    assert!(out.stdout.is_empty(), "the page goes to --output only");
    let html = std::fs::read_to_string(&page).unwrap();
    Analysed { dir, report, html }
}

/// The `<figure>` with this id.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no figure {id}"));
    let end = start + html[start..].find("</figure>").unwrap();
    &html[start..end]
}

/// The elements `<tag …/>` of `svg` whose attributes include `attr`.
fn elements<'a>(svg: &'a str, tag: &str, attr: &str) -> Vec<&'a str> {
    svg.split(&format!("<{tag} "))
        .skip(1)
        .map(|e| &e[..e.find("/>").unwrap()])
        .filter(|e| e.contains(attr))
        .collect()
}

/// The numeric attribute `name` of an element.
fn number(element: &str, name: &str) -> i64 {
    let value = element
        .split(&format!(" {name}=\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no {name} in {element}"));
    value[..value.find('"').unwrap()].parse().unwrap()
}

/// The points of a polyline.
fn points(polyline: &str) -> Vec<(i64, i64)> {
    let list = polyline.split("points=\"").nth(1).unwrap();
    list[..list.find('"').unwrap()]
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

fn array(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// The K of the report's prefixes.
fn prefix_ks(report: &Value) -> Vec<u64> {
    report["prefix"]["prefixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["layers"].as_u64().unwrap())
        .collect()
}

/// Curves: in each figure, one polyline per series (colour in series order) through every
/// directed cable the report counts.
fn assert_curves(html: &str, id: &str, series: usize, cables: usize) {
    let svg = figure(html, id);
    for i in 0..series {
        let stroke = format!("stroke=\"{}\"", colour_hex(i));
        let longest = elements(svg, "polyline", &stroke)
            .iter()
            .map(|p| points(p).len())
            .max()
            .unwrap_or(0);
        assert_eq!(longest, cables, "{id}: series {i}");
    }
}

/// Bars: at least one filled rectangle per non-zero value, in the series' colour.
fn assert_bars(html: &str, id: &str, series: &[Vec<f64>]) {
    let svg = figure(html, id);
    for (i, values) in series.iter().enumerate() {
        let fill = format!("fill=\"{}\"", colour_hex(i));
        let bars = values.iter().filter(|&&v| v > 0.0).count();
        assert!(bars > 0, "{id}: series {i} has data");
        let rects = elements(svg, "rect", &fill).len();
        assert!(rects >= bars, "{id}: series {i}: {rects} bars of {bars}");
    }
}

#[test]
fn the_page_has_every_plot_with_its_data_marks() {
    let Analysed { report, html, .. } = analyse_slimfly_q7();
    for id in PLOTS {
        assert_eq!(
            figure(&html, id).matches("<svg").count(),
            1,
            "{id}: one SVG per plot"
        );
    }
    // Slim Fly q = 7 has 98 switches: few enough for the fabric drawing.
    assert_eq!(
        html.matches("<svg").count(),
        PLOTS.len() + 1,
        "the plots and the fabric drawing"
    );
    for external in ["<script", "<link", "<img", "src=", "url("] {
        assert!(!html.contains(external), "self-contained: found {external}");
    }
    let layers = report["layers"].as_u64().unwrap() as usize;
    assert_eq!(layers, 4);
    let cables = report["link_load"]["total"]["links"].as_u64().unwrap() as usize;
    assert_curves(&html, PLOTS[0], prefix_ks(&report).len(), cables);
    assert_curves(&html, PLOTS[1], layers, cables);
    // The drawing: a dot per switch, a line per cable (both directions in one).
    let drawing = figure(&html, FABRIC_PLOT);
    assert_eq!(
        elements(drawing, "circle", "").len() as u64,
        report["switches"].as_u64().unwrap()
    );
    let lines = elements(drawing, "polyline", "")
        .into_iter()
        .filter(|l| points(l).len() == 2)
        .count();
    assert_eq!(lines, cables / 2, "one line per cable");

    let hops: Vec<Vec<f64>> = report["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            array(&p["hops_histogram"])
                .iter()
                .map(|&n| n as f64)
                .collect()
        })
        .collect();
    assert_bars(&html, PLOTS[2], &hops);
    let disjoint = array(&report["disjoint"]["histogram"]);
    assert_bars(
        &html,
        PLOTS[3],
        &[disjoint.iter().map(|&n| n as f64).collect()],
    );
    let prefixes = report["prefix"]["prefixes"].as_array().unwrap();
    let figures: Vec<Vec<f64>> = [
        "all_to_all",
        "random_mean",
        "random_min",
        "adversarial_mean",
        "worst",
    ]
    .iter()
    .map(|f| prefixes.iter().map(|p| p[f].as_f64().unwrap()).collect())
    .collect();
    assert_bars(&html, PLOTS[4], &figures);

    // The key numbers, as the report computed them.
    let d = &report["disjoint"];
    assert!(html.contains(&format!(
        "<td>mean edge-disjoint paths</td><td>{:.3}</td>",
        d["mean"].as_f64().unwrap()
    )));
    for p in prefixes {
        assert!(html.contains(&format!(
            "<td>K = {}</td><td>{:.3}</td>",
            p["layers"],
            p["all_to_all"].as_f64().unwrap()
        )));
    }
}

#[test]
fn chromium_shows_the_plots_marks() {
    let Analysed { dir, report, html } = analyse_slimfly_q7();
    // Tall enough for every plot one under the other, whatever the wrapping.
    let height = (PLOTS.len() as u32 + 4) * (SIZE.1 + 120) + 1200;
    let Some((rgb, width, shot_height)) =
        screenshot(&dir.path().join("analysis.html"), 1000, height)
    else {
        return;
    };
    assert_eq!((width, shot_height), (1000, height));
    let pixels: Vec<[u8; 3]> = rgb.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
    let near = |p: &[u8; 3], c: [u8; 3]| p.iter().zip(c).all(|(&a, b)| a.abs_diff(b) <= 40);

    // Bars: every series colour covers (nearly) the area of its rectangles in the SVGs; the
    // rest of a rectangle's edge is anti-aliased.
    let series = report["layers"].as_u64().unwrap() as usize + 1;
    for i in 0..series {
        let fill = format!("fill=\"{}\"", colour_hex(i));
        let area: i64 = [PLOTS[2], PLOTS[3], PLOTS[4]]
            .iter()
            .flat_map(|id| elements(figure(&html, id), "rect", &fill))
            .map(|r| number(r, "width") * number(r, "height"))
            .sum();
        let c = colour(i);
        let exact = pixels.iter().filter(|p| **p == [c.0, c.1, c.2]).count() as i64;
        assert!(area > 0, "colour {i} fills bars");
        assert!(
            exact * 10 >= area * 9,
            "colour {i}: {exact} pixels on screen for {area} declared"
        );
    }
    // Curves: each series' colour is on screen in at least as many pixels as its curve spans
    // columns (a 2-pixel line, drawn across the plot).
    for (id, count) in [
        (PLOTS[0], prefix_ks(&report).len()),
        (PLOTS[1], report["layers"].as_u64().unwrap() as usize),
    ] {
        for i in 0..count {
            let stroke = format!("stroke=\"{}\"", colour_hex(i));
            let span = elements(figure(&html, id), "polyline", &stroke)
                .iter()
                .map(|p| {
                    let pts = points(p);
                    pts.last().unwrap().0 - pts[0].0
                })
                .max()
                .unwrap();
            let c = colour(i);
            let seen = pixels.iter().filter(|p| near(p, [c.0, c.1, c.2])).count() as i64;
            assert!(
                span > (SIZE.0 / 2) as i64,
                "{id}: series {i} spans the plot"
            );
            assert!(
                seen >= span,
                "{id}: series {i}: {seen} pixels for {span} columns"
            );
        }
    }
    // Not a blank page: the plots' grid, axes, text and marks.
    let ink = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        ink * 20 > pixels.len(),
        "{ink} of {} pixels drawn",
        pixels.len()
    );
}

#[test]
fn route_writes_the_same_page_with_its_deadlock_verdict() {
    let route = [
        "route",
        "--fabric",
        "slimfly:q=5",
        "--layers",
        "2",
        "--deadlock",
        "auto",
        "--format",
    ];
    let out = command::ibfabric(&[&route[..], &["json"]].concat());
    assert!(out.status.success(), "route: {}", command::stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = report["deadlock"].as_str().unwrap();
    let out = command::ibfabric(&[&route[..], &["html"]].concat());
    assert!(out.status.success(), "route: {}", command::stderr(&out));
    let html = String::from_utf8(out.stdout).unwrap();
    for id in PLOTS {
        assert_eq!(figure(&html, id).matches("<svg").count(), 1, "{id}");
    }
    assert!(html.contains(&format!("<p>{verdict}</p>")), "{verdict}");
}
