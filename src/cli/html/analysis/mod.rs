//! The page of `ibfabric analyze --format html`: the routing analysis's key numbers as
//! tables, its distributions as plots, and the text report folded away at the end.
//!
//! Plots (each a `<figure>` with one `<svg>`, ids in [`PLOTS`]):
//! * `load-prefixes`: load per directed cable, sorted, for each prefix of layers K (the
//!   layers 0..K − 1 summed and divided by K, so the curves share a scale; the last K is all
//!   layers) — a flat curve is a balanced routing, a spike at the left is a hot cable;
//! * `load-layers`: the same for each layer alone;
//! * [`FABRIC_PLOT`] (fabrics of at most [`DRAWN_SWITCHES`] switches): the switches on a
//!   circle and every cable coloured by the routes on its busier direction, all layers;
//! * `path-lengths`: paths by inter-switch hops, one bar per layer;
//! * `disjoint-paths`: ordered switch pairs by their number of edge-disjoint paths;
//! * `prefix-throughput` (when the report has the prefix section): all-to-all, random,
//!   adversarial and worst-permutation throughput per K;
//! * [`MAT_PLOT`] (when the report has MAT): the LP's maximum achievable throughput over all
//!   layers' paths beside what each even split over a prefix gets, for all-to-all and the
//!   adversarial pattern — how much of the paths' capacity the split MPI uses reaches.

use super::plot::{self, Axes, Series};
use super::{Page, escape};
use crate::analysis::prefix::prefixes;
use crate::analysis::{LoadStats, Report};

/// The id of the fabric drawing, on pages of fabrics small enough to read it.
pub const FABRIC_PLOT: &str = "fabric-load";

/// Most switches the fabric drawing has: beyond, its lines merge into a grey disc.
pub const DRAWN_SWITCHES: usize = 128;

/// Most switches whose names the fabric drawing writes.
const NAMED_SWITCHES: usize = 60;

/// The id of the MAT plot, on pages whose report has MAT (`--mat`).
pub const MAT_PLOT: &str = "mat-throughput";

/// The ids of the plots every page has (the last with the prefix section), in page order.
pub const PLOTS: [&str; 5] = [
    "load-prefixes",
    "load-layers",
    "path-lengths",
    "disjoint-paths",
    "prefix-throughput",
];

/// The whole page for `report`; `notes` (one line each, such as `route`'s deadlock-freedom
/// verdict) go under the completeness verdict.
pub fn analysis_page(report: &Report, notes: &[String]) -> String {
    let mut page = Page::new(&format!("Routing analysis of {}", report.fabric));
    summary(&mut page, report);
    for note in notes {
        page.paragraph_html(&escape(note));
    }
    page.heading("Link load");
    load_table(&mut page, report);
    let ks = prefix_ks(report);
    page.figure(
        PLOTS[0],
        load_prefixes(report, &ks),
        "Routes per directed switch-to-switch cable, most loaded first, for traffic split \
         evenly over layers 0..K-1 (the layers' loads summed and divided by K). The flatter \
         the curve, the better the load is spread.",
    );
    page.figure(
        PLOTS[1],
        load_layers(report),
        "Routes per directed switch-to-switch cable of each layer alone, most loaded first.",
    );
    let switches = report.link_load.switch_names.len();
    if switches > 0 && switches <= DRAWN_SWITCHES {
        page.figure(
            FABRIC_PLOT,
            fabric_load(report),
            "The fabric: switches on a circle in the fabric's switch order, every cable \
             coloured (and thickened) by the routes of all layers on its busier direction, \
             the busiest drawn on top.",
        );
    }
    page.heading("Paths");
    paths_table(&mut page, report);
    page.figure(
        PLOTS[2],
        path_lengths(report),
        "Paths from every source switch to every endpoint LID on another switch, by \
         inter-switch hops, per layer.",
    );
    page.figure(
        PLOTS[3],
        disjoint_paths(report),
        "Ordered switch pairs by the number of edge-disjoint paths their layers give.",
    );
    if report.prefix.is_some() {
        page.heading("Throughput of each prefix of layers");
        prefix_table(&mut page, report);
        page.figure(
            PLOTS[4],
            prefix_throughput(report),
            "Throughput per host (1 = its link rate) when traffic is split evenly over \
             layers 0..K-1.",
        );
    }
    if let Some(mat) = &report.mat {
        page.heading("Maximum achievable throughput");
        let row = |name: &str, r: &crate::analysis::MatResult| {
            vec![
                name.to_string(),
                r.throughput.map_or("-".into(), |t| format!("{t:.4}")),
                r.commodities.to_string(),
                r.note.clone().unwrap_or_default(),
            ]
        };
        page.table(
            "mat",
            &["pattern", "throughput", "commodities", "note"],
            &[
                row("uniform all-to-all", &mat.uniform),
                row("adversarial matching", &mat.adversarial),
            ],
        );
        page.figure(
            MAT_PLOT,
            mat_against_prefixes(report, mat),
            "Maximum achievable throughput (MAT: the best split of every switch pair's traffic \
             over all layers' paths, a linear program) beside the even split over layers \
             0..K-1 that MPI stacks use, per host (1 = its link rate). MAT's adversarial \
             pattern is one longest matching of the switches; the even split's is the mean \
             over the prefix section's farthest-switch permutations.",
        );
    }
    page.details("The text report", &report.to_string());
    page.finish()
}

/// The K of each prefix: the report's, else every prefix the layers have.
fn prefix_ks(report: &Report) -> Vec<usize> {
    match &report.prefix {
        Some(p) => p.prefixes.iter().map(|t| t.layers).collect(),
        None => prefixes(report.layers),
    }
}

fn summary(page: &mut Page, r: &Report) {
    let c = &r.completeness;
    let verdict = if c.complete {
        format!(
            "complete: all {} (switch, LID) entries reach their destination",
            c.entries_checked
        )
    } else {
        format!(
            "<span class=\"bad\">INCOMPLETE</span>: {} of {} (switch, LID) entries reach their \
             destination; {} failures",
            c.entries_reaching,
            c.entries_checked,
            c.counts.failures()
        )
    };
    page.paragraph_html(&verdict);
    let d = &r.disjoint;
    page.table(
        "key-numbers",
        &["", "value"],
        &[
            vec!["switches".into(), r.switches.to_string()],
            vec!["endpoint ports".into(), r.endpoints.to_string()],
            vec!["layers".into(), r.layers.to_string()],
            vec!["destination LIDs".into(), r.destination_lids.to_string()],
            vec!["switch pairs".into(), d.pairs.to_string()],
            vec!["mean edge-disjoint paths".into(), format!("{:.3}", d.mean)],
            vec![
                "pairs with ≥ 2 disjoint paths".into(),
                percent(d.at_least_two),
            ],
            vec![
                "pairs with ≥ 3 disjoint paths".into(),
                percent(d.at_least_three),
            ],
            vec![
                "load max/mean, all layers".into(),
                format!("{:.3}", r.link_load.total.max_over_mean),
            ],
        ],
    );
}

fn percent(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

fn load_row(name: String, s: &LoadStats) -> Vec<String> {
    vec![
        name,
        s.min.to_string(),
        format!("{:.2}", s.mean),
        s.max.to_string(),
        format!("{:.3}", s.max_over_mean),
        s.links.to_string(),
        s.busiest.clone().unwrap_or_default(),
    ]
}

fn load_table(page: &mut Page, r: &Report) {
    let mut rows = vec![load_row("all layers".into(), &r.link_load.total)];
    rows.extend(
        r.link_load
            .per_layer
            .iter()
            .enumerate()
            .map(|(l, s)| load_row(format!("layer {l}"), s)),
    );
    page.table(
        "link-load",
        &[
            "",
            "min",
            "mean",
            "max",
            "max/mean",
            "directed cables",
            "busiest",
        ],
        &rows,
    );
}

fn paths_table(page: &mut Page, r: &Report) {
    let rows: Vec<Vec<String>> = r
        .paths
        .iter()
        .map(|p| {
            vec![
                format!("layer {}", p.layer),
                p.paths.to_string(),
                p.broken.to_string(),
                format!("{:.3}", p.mean_hops),
                p.max_hops.to_string(),
                percent(p.fraction_minimal),
                percent(p.fraction_plus_one),
                percent(p.fraction_longer),
            ]
        })
        .collect();
    page.table(
        "path-table",
        &[
            "",
            "paths",
            "broken",
            "mean hops",
            "max",
            "minimal",
            "+1",
            "longer",
        ],
        &rows,
    );
}

fn prefix_table(page: &mut Page, r: &Report) {
    let Some(p) = &r.prefix else { return };
    let rows: Vec<Vec<String>> = p
        .prefixes
        .iter()
        .map(|t| {
            vec![
                format!("K = {}", t.layers),
                format!("{:.3}", t.all_to_all),
                format!("{:.3}", t.random_mean),
                format!("{:.3}", t.random_min),
                format!("{:.3}", t.adversarial_mean),
                t.worst.map_or("-".into(), |w| format!("{w:.3}")),
                format!("{:.3}", t.balance),
            ]
        })
        .collect();
    page.table(
        "prefix-table",
        &[
            "",
            "all-to-all",
            "random mean",
            "random min",
            "adversarial",
            "worst permutation",
            "max/mean routes",
        ],
        &rows,
    );
    page.paragraph_html(&escape(&format!(
        "{} hosts; {} random permutations from seed {}; {} adversarial farthest-switch \
         matchings ({} of switches at their largest distance).",
        p.hosts,
        p.samples,
        p.seed,
        p.adversarial_seeds,
        percent(p.adversarial_farthest)
    )));
}

/// `values` sorted largest first, as f64.
fn sorted_desc(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(|a, b| b.total_cmp(a));
    v
}

fn no_loads() -> plot::PlotError {
    plot::PlotError("the report carries no per-cable loads (read back from JSON?)".into())
}

fn load_prefixes(r: &Report, ks: &[usize]) -> Result<String, plot::PlotError> {
    let loads = &r.link_load.cable_loads;
    if loads.is_empty() {
        return Err(no_loads());
    }
    let cables = loads[0].len();
    let series: Vec<Series> = ks
        .iter()
        .map(|&k| {
            let k_used = k.min(loads.len()).max(1);
            let summed = (0..cables)
                .map(|c| loads.iter().take(k_used).map(|l| l[c]).sum::<u64>() as f64 / k as f64);
            let all = if k >= r.layers { " (all layers)" } else { "" };
            Series {
                label: format!("K = {k}{all}"),
                values: sorted_desc(summed),
            }
        })
        .collect();
    plot::curves(
        &Axes {
            title: "Load per directed cable, per prefix of layers",
            x: "directed cables, most loaded first",
            y: "routes per layer",
        },
        &series,
    )
}

fn load_layers(r: &Report) -> Result<String, plot::PlotError> {
    let loads = &r.link_load.cable_loads;
    if loads.is_empty() {
        return Err(no_loads());
    }
    let series: Vec<Series> = loads
        .iter()
        .enumerate()
        .map(|(l, load)| Series {
            label: format!("layer {l}"),
            values: sorted_desc(load.iter().map(|&x| x as f64)),
        })
        .collect();
    plot::curves(
        &Axes {
            title: "Load per directed cable, per layer",
            x: "directed cables, most loaded first",
            y: "routes",
        },
        &series,
    )
}

fn path_lengths(r: &Report) -> Result<String, plot::PlotError> {
    let longest = r
        .paths
        .iter()
        .map(|p| p.hops_histogram.len())
        .max()
        .unwrap_or(0);
    let hops: Vec<usize> = (1..longest).collect();
    let groups: Vec<String> = hops.iter().map(|h| h.to_string()).collect();
    let series: Vec<Series> = r
        .paths
        .iter()
        .map(|p| Series {
            label: format!("layer {}", p.layer),
            values: hops
                .iter()
                .map(|&h| p.hops_histogram.get(h).copied().unwrap_or(0) as f64)
                .collect(),
        })
        .collect();
    plot::grouped_bars(
        &Axes {
            title: "Path lengths per layer",
            x: "inter-switch hops",
            y: "paths",
        },
        &groups,
        &series,
        None,
    )
}

fn disjoint_paths(r: &Report) -> Result<String, plot::PlotError> {
    let h = &r.disjoint.histogram;
    let groups: Vec<String> = (0..h.len()).map(|n| n.to_string()).collect();
    plot::grouped_bars(
        &Axes {
            title: "Edge-disjoint paths per switch pair",
            x: "edge-disjoint paths",
            y: "ordered switch pairs",
        },
        &groups,
        &[Series {
            label: "switch pairs".into(),
            values: h.iter().map(|&n| n as f64).collect(),
        }],
        None,
    )
}

fn prefix_throughput(r: &Report) -> Result<String, plot::PlotError> {
    let Some(p) = &r.prefix else {
        return Err(plot::PlotError("no prefix section".into()));
    };
    let groups: Vec<String> = p
        .prefixes
        .iter()
        .map(|t| format!("K = {}", t.layers))
        .collect();
    let figure = |label: &str, f: &dyn Fn(&crate::analysis::PrefixThroughput) -> f64| Series {
        label: label.into(),
        values: p.prefixes.iter().map(f).collect(),
    };
    let mut series = vec![
        figure("all-to-all", &|t| t.all_to_all),
        figure("random mean", &|t| t.random_mean),
        figure("random min", &|t| t.random_min),
        figure("adversarial", &|t| t.adversarial_mean),
    ];
    if p.prefixes.iter().any(|t| t.worst.is_some()) {
        series.push(figure("worst permutation", &|t| t.worst.unwrap_or(0.0)));
    }
    plot::grouped_bars(
        &Axes {
            title: "Throughput per prefix of layers",
            x: "traffic split over layers 0..K-1",
            y: "throughput per host",
        },
        &groups,
        &series,
        Some(1.25),
    )
}

fn fabric_load(r: &Report) -> Result<String, plot::PlotError> {
    let l = &r.link_load;
    if l.cable_loads.is_empty() {
        return Err(no_loads());
    }
    // Both directions of a cable (and parallel cables) as one line: the busier load.
    let mut busiest: std::collections::BTreeMap<(usize, usize), f64> = Default::default();
    for (c, &(from, to)) in l.cable_switches.iter().enumerate() {
        let load: u64 = l.cable_loads.iter().map(|layer| layer[c]).sum();
        let key = (from.min(to) as usize, from.max(to) as usize);
        let entry = busiest.entry(key).or_default();
        *entry = entry.max(load as f64);
    }
    let cables: Vec<(usize, usize, f64)> =
        busiest.into_iter().map(|((a, b), v)| (a, b, v)).collect();
    plot::fabric_drawing(
        "Load per cable, all layers",
        &l.switch_names,
        &cables,
        NAMED_SWITCHES,
    )
}

fn mat_against_prefixes(
    r: &Report,
    mat: &crate::analysis::MatReport,
) -> Result<String, plot::PlotError> {
    let value = |m: &crate::analysis::MatResult| m.throughput.unwrap_or(0.0);
    let mut series = vec![Series {
        label: "MAT, all layers".into(),
        values: vec![value(&mat.uniform), value(&mat.adversarial)],
    }];
    if let Some(p) = &r.prefix {
        series.extend(p.prefixes.iter().map(|t| Series {
            label: format!("even split, K = {}", t.layers),
            values: vec![t.all_to_all, t.adversarial_mean],
        }));
    }
    plot::grouped_bars(
        &Axes {
            title: "The paths' capacity and what an even split reaches",
            x: "traffic pattern",
            y: "throughput per host",
        },
        &["all-to-all".to_string(), "adversarial".to_string()],
        &series,
        None,
    )
}

#[cfg(test)]
mod tests;
