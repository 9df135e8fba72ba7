//! The analysis page of a routed Slim Fly q = 5: its plots and its numbers.

use super::*;
use crate::analysis::{Options, PrefixOptions, analyze};
use crate::routing::{RoutingConfig, assign_lids, route_fabric};
use crate::topology::TopologySpec;

/// Slim Fly q = 5 routed with 2 layers, analysed (with the prefix section when `prefix`).
fn report(prefix: bool) -> Report {
    analysed(
        "slimfly:q=5",
        &Options {
            prefix: prefix.then(|| PrefixOptions {
                samples: 3,
                ..PrefixOptions::default()
            }),
            ..Options::default()
        },
    )
}

/// The fabric of `spec` routed with 2 layers and analysed with `options`.
fn analysed(spec: &str, options: &Options) -> Report {
    let mut fabric = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    assign_lids(&mut fabric, 1).unwrap();
    let config = RoutingConfig {
        layers: 2,
        ..Default::default()
    };
    let routed = route_fabric(&fabric, &config).unwrap();
    analyze(&fabric, &routed.lids, &routed.tables, options)
}

fn figure<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let start = html.find(&format!("<figure id=\"{id}\">"))?;
    Some(&html[start..start + html[start..].find("</figure>")?])
}

#[test]
fn every_plot_is_a_figure_with_one_svg() {
    let html = analysis_page(&report(true), &[]);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    for id in PLOTS {
        let f = figure(&html, id).unwrap_or_else(|| panic!("no figure {id}"));
        assert_eq!(f.matches("<svg").count(), 1, "{id}");
        assert_eq!(f.matches("</svg>").count(), 1, "{id}");
    }
    assert_eq!(
        html.matches("<figure").count(),
        html.matches("</figure>").count()
    );
    assert_eq!(
        html.matches("<table").count(),
        html.matches("</table>").count()
    );
}

#[test]
fn the_numbers_are_the_reports() {
    let r = report(true);
    let html = analysis_page(&r, &[]);
    let row = |name: &str, value: String| format!("<td>{name}</td><td>{value}</td>");
    assert!(html.contains(&row("switches", r.switches.to_string())));
    assert!(html.contains(&row("endpoint ports", r.endpoints.to_string())));
    assert!(html.contains(&row("layers", r.layers.to_string())));
    assert!(html.contains(&row(
        "mean edge-disjoint paths",
        format!("{:.3}", r.disjoint.mean)
    )));
    let all = &r.link_load.total;
    assert!(html.contains(&format!(
        "<td>all layers</td><td>{}</td><td>{:.2}</td><td>{}</td>",
        all.min, all.mean, all.max
    )));
    for p in &r.paths {
        assert!(html.contains(&format!(
            "<td>layer {}</td><td>{}</td><td>{}</td><td>{:.3}</td>",
            p.layer, p.paths, p.broken, p.mean_hops
        )));
    }
    for t in &r.prefix.as_ref().unwrap().prefixes {
        assert!(html.contains(&format!(
            "<td>K = {}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td>",
            t.layers, t.all_to_all, t.random_mean, t.random_min, t.adversarial_mean
        )));
    }
    assert!(html.contains("complete: all"));
}

#[test]
fn notes_are_shown_escaped() {
    let html = analysis_page(&report(false), &["deadlock-free <2 VLs>".into()]);
    assert!(
        html.contains("<p>deadlock-free &lt;2 VLs&gt;</p>"),
        "{html}"
    );
}

#[test]
fn without_the_prefix_section_there_is_no_throughput_plot() {
    let html = analysis_page(&report(false), &[]);
    assert!(figure(&html, "prefix-throughput").is_none());
    assert!(figure(&html, "load-prefixes").is_some());
}

#[test]
fn a_report_read_back_from_json_says_its_load_plots_cannot_be_drawn() {
    let r = report(false);
    let json = serde_json::to_string(&r).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    let html = analysis_page(&back, &[]);
    let f = figure(&html, "load-layers").unwrap();
    assert!(f.contains("no per-cable loads"), "{f}");
    assert!(figure(&html, "path-lengths").unwrap().contains("<svg"));
}

#[test]
fn mat_is_drawn_beside_every_even_split_and_only_when_computed() {
    assert!(figure(&analysis_page(&report(true), &[]), MAT_PLOT).is_none());
    let r = analysed(
        "slimfly:q=4",
        &Options {
            mat: true,
            prefix: Some(PrefixOptions {
                samples: 3,
                ..PrefixOptions::default()
            }),
            ..Options::default()
        },
    );
    let html = analysis_page(&r, &[]);
    let f = figure(&html, MAT_PLOT).expect("the MAT plot");
    assert_eq!(f.matches("<svg").count(), 1);
    // One series for MAT and one per prefix (K = 1, 2), each a bar per pattern, in the
    // series' colours.
    let prefixes = r.prefix.as_ref().unwrap().prefixes.len();
    assert_eq!(prefixes, 2);
    for i in 0..1 + prefixes {
        let fill = format!("fill=\"{}\"", plot::colour_hex(i));
        // Its two bars and its legend mark.
        assert_eq!(f.matches(&fill).count(), 3, "series {i}: {fill}");
    }
    for label in ["MAT, all layers", "even split, K = 1", "even split, K = 2"] {
        assert!(f.contains(label), "{label}");
    }
}

#[test]
fn the_fabric_is_drawn_up_to_the_limit_of_switches() {
    let r = report(false);
    assert!(figure(&analysis_page(&r, &[]), FABRIC_PLOT).is_some());
    let mut large = r.clone();
    let names = &mut large.link_load.switch_names;
    names.extend((names.len()..=DRAWN_SWITCHES).map(|i| format!("extra{i}")));
    assert!(figure(&analysis_page(&large, &[]), FABRIC_PLOT).is_none());
}
