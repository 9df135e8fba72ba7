//! The two kinds of chart the pages draw, as SVG strings: curves (one polyline per series)
//! and grouped bars (one filled rectangle per non-zero value). Axes, ticks, grid and legend
//! are plotters'.

use plotters::coord::Shift;
use plotters::prelude::*;

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
}
