//! The charts the pages draw, as SVG strings: curves (one polyline per series), grouped bars
//! (one filled rectangle per non-zero value), and a small fabric drawn with its cables
//! coloured by load. Axes, ticks, grid, legend and shapes are plotters'.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width and height of every plot, in CSS pixels: two side by side on a laptop screen.
pub const SIZE: (u32, u32) = (760, 420);

/// Series colours, in order (the "tab10" palette: distinct for the colour-blind and in grey
/// print). A page with more series than colours cycles through them.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1F, 0x77, 0xB4),
    RGBColor(0xFF, 0x7F, 0x0E),
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
    RGBColor(0x7F, 0x7F, 0x7F),
    RGBColor(0xBC, 0xBD, 0x22),
    RGBColor(0x17, 0xBE, 0xCF),
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of series `i` as the SVG writes it (`#1F77B4`).
pub fn colour_hex(i: usize) -> String {
    let RGBColor(r, g, b) = colour(i);
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Why a plot could not be drawn (plotters' error, as text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(err: DrawingAreaErrorKind<E>) -> Self {
        Self(err.to_string())
    }
}

/// A named series of values.
pub struct Series {
    /// Its legend entry.
    pub label: String,
    /// Its values, in x order.
    pub values: Vec<f64>,
}

/// Width and height of a fabric drawing, in CSS pixels.
pub const DRAWING_SIZE: (u32, u32) = (760, 800);

/// The load colour ramp, from an idle cable to the busiest (ColorBrewer's RdYlBu, reversed:
/// readable for the colour-blind, and the busy end stays dark in grey print).
pub const LOAD_RAMP: [RGBColor; 3] = [
    RGBColor(0x2C, 0x7B, 0xB6),
    RGBColor(0xFF, 0xD5, 0x6B),
    RGBColor(0xD7, 0x19, 0x1C),
];

/// The colour of a load that is `fraction` (0..=1) of the busiest cable's.
pub fn load_colour(fraction: f64) -> RGBColor {
    let f = fraction.clamp(0.0, 1.0) * (LOAD_RAMP.len() - 1) as f64;
    let i = (f.floor() as usize).min(LOAD_RAMP.len() - 2);
    let t = f - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    let (a, b) = (LOAD_RAMP[i], LOAD_RAMP[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Axis descriptions and title of a chart.
pub struct Axes<'a> {
    /// Above the plot.
    pub title: &'a str,
    /// Under the x axis.
    pub x: &'a str,
    /// Beside the y axis.
    pub y: &'a str,
}

/// Draws into a new SVG of [`SIZE`] with a white background.
fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(out)
}

/// The top of a value axis: a little above the largest value, and 1 when all are 0.
fn axis_top(max: f64) -> f64 {
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

/// Tick labels of a value axis reaching `top`: whole numbers for counts, two decimals for
/// fractions (plotters' default writes "800.0").
fn tick(top: f64) -> impl Fn(&f64) -> String {
    move |y| {
        if top >= 10.0 {
            format!("{y:.0}")
        } else {
            format!("{y:.2}")
        }
    }
}

/// One polyline per series, x = the value's index (0, 1, …), in [`colour`] order.
pub fn curves(axes: &Axes<'_>, series: &[Series]) -> Result<String, PlotError> {
    let len = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(axes.title, ("sans-serif", 24))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..len.max(1) as f64, 0f64..axis_top(max))?;
        let (x_tick, y_tick) = (tick(len as f64), tick(axis_top(max)));
        chart
            .configure_mesh()
            .x_label_formatter(&x_tick)
            .y_label_formatter(&y_tick)
            .x_desc(axes.x)
            .y_desc(axes.y)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(WHITE)
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            chart
                .draw_series(LineSeries::new(
                    s.values.iter().enumerate().map(|(x, &y)| (x as f64, y)),
                    style,
                ))?
                .label(s.label.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        Ok(())
    })
}

/// Grouped bars: for each group (x position, labelled `groups[g]`), one bar per series with
/// that series' value `values[g]`, side by side. Zero values draw no bar. `y_top`: the value
/// axis's top (else a little above the largest value).
pub fn grouped_bars(
    axes: &Axes<'_>,
    groups: &[String],
    series: &[Series],
    y_top: Option<f64>,
) -> Result<String, PlotError> {
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let top = y_top.unwrap_or_else(|| axis_top(max));
    // x in hundredths of a group (plotters formats integer axes with key points; f64 ones
    // it does not): group g is centred on 100 g, its bars fill the middle 80.
    let n = groups.len().max(1) as i32;
    let keys: Vec<i32> = (0..n).map(|g| 100 * g).collect();
    let width = 80 / series.len().max(1) as i32;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(axes.title, ("sans-serif", 24))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((-50..100 * n - 50).with_key_points(keys), 0f64..top)?;
        let label = |x: &i32| {
            if x % 100 == 0 && *x >= 0 {
                groups.get((x / 100) as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let y_tick = tick(top);
        chart
            .configure_mesh()
            .x_desc(axes.x)
            .y_desc(axes.y)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .x_label_formatter(&label)
            .y_label_formatter(&y_tick)
            .disable_x_mesh()
            .light_line_style(WHITE)
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let fill = colour(i).filled();
            let left = |g: usize| 100 * g as i32 - 40 + i as i32 * width;
            chart
                .draw_series(
                    s.values
                        .iter()
                        .enumerate()
                        .filter(|&(_, &v)| v > 0.0)
                        .map(|(g, &v)| {
                            Rectangle::new([(left(g), 0.0), (left(g) + width, v)], fill)
                        }),
                )?
                .label(s.label.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], fill));
        }
        if series.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 15))
                .position(SeriesLabelPosition::UpperRight)
                .draw()?;
        }
        Ok(())
    })
}

/// The fabric drawn with its switches on a circle (in the order of `names`, the first at the
/// top, clockwise) and one line per cable `(a, b, load)` between switch indices, coloured by
/// its load on [`LOAD_RAMP`] — idle blue, the mean load yellow, twice the mean or more red —
/// and the busier the thicker; the busiest drawn last, on top. A balanced routing is all
/// yellow; a hot cable stands out in red whatever the fabric's size. Switch names are written
/// beside the circle when there are at most `label_limit` switches. The colour scale, with the
/// loads it stands for, runs along the bottom.
pub fn fabric_drawing(
    title: &str,
    names: &[String],
    cables: &[(usize, usize, f64)],
    label_limit: usize,
) -> Result<String, PlotError> {
    let n = names.len().max(1);
    let at = |i: usize| {
        let angle = std::f64::consts::TAU * i as f64 / n as f64;
        (angle.sin(), angle.cos())
    };
    let mean = cables.iter().map(|c| c.2).sum::<f64>() / cables.len().max(1) as f64;
    let top = 2.0 * mean;
    let fraction = |load: f64| if top > 0.0 { load / top } else { 0.0 };
    let mut order: Vec<&(usize, usize, f64)> = cables.iter().collect();
    order.sort_by(|x, y| x.2.total_cmp(&y.2));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, DRAWING_SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (drawing, scale) = root.split_vertically(DRAWING_SIZE.1 - 70);
        let mut chart = ChartBuilder::on(&drawing)
            .caption(title, ("sans-serif", 24))
            .margin(12)
            .build_cartesian_2d(-1.3f64..1.3, -1.3f64..1.3)?;
        chart.draw_series(order.iter().map(|&&(a, b, load)| {
            let f = fraction(load);
            PathElement::new(
                [at(a), at(b)],
                load_colour(f).stroke_width(1 + (2.0 * f).round() as u32),
            )
        }))?;
        chart.draw_series((0..names.len()).map(|i| Circle::new(at(i), 3, BLACK.filled())))?;
        if names.len() <= label_limit {
            chart.draw_series(names.iter().enumerate().map(|(i, name)| {
                let (x, y) = at(i);
                let anchor = if x >= 0.0 {
                    Pos::new(HPos::Left, VPos::Center)
                } else {
                    Pos::new(HPos::Right, VPos::Center)
                };
                Text::new(
                    name.clone(),
                    (x * 1.06, y * 1.06),
                    ("sans-serif", 11).into_font().color(&BLACK).pos(anchor),
                )
            }))?;
        }
        // The scale: the ramp in 40 steps, the loads at its ends and middle.
        let (x0, width, y) = (150i32, 460i32, 4i32);
        for k in 0..40 {
            let left = x0 + width * k / 40;
            scale.draw(&Rectangle::new(
                [(left, y), (x0 + width * (k + 1) / 40, y + 16)],
                load_colour((f64::from(k) + 0.5) / 40.0).filled(),
            ))?;
        }
        let style = ("sans-serif", 14).into_font().color(&BLACK);
        for (k, text) in [
            (0, "0".to_string()),
            (1, format!("{mean:.0} (mean)")),
            (2, format!("{top:.0} or more")),
        ] {
            scale.draw(&Text::new(
                text,
                (x0 + width * k / 2, y + 22),
                style.clone().pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        scale.draw(&Text::new(
            "routes on the busier direction".to_string(),
            (x0 + width / 2, y + 40),
            style.pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        root.present()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes() -> Axes<'static> {
        Axes {
            title: "t",
            x: "x",
            y: "y",
        }
    }

    #[test]
    fn a_curve_is_one_polyline_through_every_value() {
        let values: Vec<f64> = (0..57).map(|i| f64::from(i % 7)).collect();
        let svg = curves(
            &axes(),
            &[Series {
                label: "a".into(),
                values: values.clone(),
            }],
        )
        .unwrap();
        let stroke = format!("stroke=\"{}\"", colour_hex(0));
        let longest = svg
            .split("<polyline")
            .skip(1)
            .filter(|p| p.contains(&stroke))
            .map(|p| {
                p.split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .map(|points| points.split_whitespace().count())
            .max()
            .unwrap();
        assert_eq!(longest, values.len());
    }

    #[test]
    fn every_non_zero_bar_is_a_filled_rectangle_of_its_series() {
        let series = [
            Series {
                label: "a".into(),
                values: vec![3.0, 0.0, 1.0],
            },
            Series {
                label: "b".into(),
                values: vec![2.0, 5.0, 0.0],
            },
        ];
        let groups: Vec<String> = ["one", "two", "three"].map(String::from).to_vec();
        let svg = grouped_bars(&axes(), &groups, &series, None).unwrap();
        for (i, s) in series.iter().enumerate() {
            let fill = format!("fill=\"{}\"", colour_hex(i));
            let rects = svg
                .split("<rect")
                .skip(1)
                .filter(|r| r.contains(&fill))
                .count();
            let bars = s.values.iter().filter(|&&v| v > 0.0).count();
            // One per bar and one in the legend.
            assert_eq!(rects, bars + 1, "series {i}");
        }
        for g in &groups {
            assert!(svg.contains(&format!("\n{g}\n</text>")), "group label {g}");
        }
    }

    #[test]
    fn the_load_ramp_runs_from_idle_through_the_mean_to_twice_the_mean() {
        assert_eq!(load_colour(0.0), LOAD_RAMP[0]);
        assert_eq!(load_colour(0.5), LOAD_RAMP[1]);
        assert_eq!(load_colour(1.0), LOAD_RAMP[2]);
        assert_eq!(load_colour(7.0), LOAD_RAMP[2], "clamped");
        assert_eq!(load_colour(-1.0), LOAD_RAMP[0], "clamped");
        // Between two stops, each channel between the stops'.
        let RGBColor(r, g, b) = load_colour(0.75);
        let (a, z) = (LOAD_RAMP[1], LOAD_RAMP[2]);
        for (c, (lo, hi)) in [(r, (a.0, z.0)), (g, (a.1, z.1)), (b, (a.2, z.2))] {
            assert!((lo.min(hi)..=lo.max(hi)).contains(&c));
        }
    }

    #[test]
    fn the_drawing_has_a_dot_per_switch_and_a_line_per_cable_in_its_load_colour() {
        let names: Vec<String> = (0..6).map(|i| format!("s{i}")).collect();
        // Mean load 10: the idle cable blue, the mean ones yellow, the busy one red.
        let cables = [
            (0, 1, 0.0),
            (1, 2, 10.0),
            (2, 3, 10.0),
            (3, 4, 10.0),
            (4, 5, 20.0),
        ];
        let svg = fabric_drawing("t", &names, &cables, 60).unwrap();
        assert_eq!(svg.matches("<circle").count(), names.len());
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let lines = |colour: RGBColor| {
            svg.split("<polyline")
                .skip(1)
                .filter(|p| p.contains(&format!("stroke=\"{}\"", hex(colour))))
                .count()
        };
        assert_eq!(
            [
                lines(LOAD_RAMP[0]),
                lines(LOAD_RAMP[1]),
                lines(LOAD_RAMP[2])
            ],
            [1, 3, 1]
        );
        for name in &names {
            assert!(svg.contains(&format!(">\n{name}\n</text>")), "{name} named");
        }
        let unnamed = fabric_drawing("t", &names, &cables, 5).unwrap();
        assert!(
            !unnamed.contains(">\ns0\n</text>"),
            "more switches than the label limit"
        );
    }
}
