//! Drawing primitives. SVG user units are millimetres on paper.

use std::fmt::Write;

use super::*;

/// Width of every drawing.
pub(super) const PAGE_W: f64 = 186.0;
/// Height available to the rack elevation.
pub(super) const ELEVATION_H: f64 = 195.0;
/// Height available to one rack pair drawing; taller ones are split into parts.
pub(super) const PAIR_H: f64 = 200.0;

/// Estimated width of `text` at font size `size` (DejaVu Sans is about 0.6 em per character).
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * 0.61 * size
}

/// How a line of SVG text is set.
pub(super) struct TextStyle<'a> {
    /// `start`, `middle` or `end`: where (x, y) is on the line.
    pub anchor: &'a str,
    /// The style sheet's class (see [`class_font`]), or empty.
    pub class: &'a str,
    /// Font size.
    pub size: f64,
    /// The width the line must fit in: it is squeezed when the estimate says it would not.
    pub room: f64,
}

/// Writes `<text>` at (x, y), set as `style` says.
pub(super) fn svg_text(out: &mut String, (x, y): (f64, f64), style: &TextStyle<'_>, text: &str) {
    let TextStyle {
        anchor,
        class,
        size,
        room,
    } = *style;
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
    put!(out, ">{}</text>", Escaped(text));
}

/// Font size the style sheet gives a class of SVG text (keep in step with [`CSS`]).
pub(super) fn class_font(class: &str) -> Option<f64> {
    match class {
        "pn" | "pb" => Some(2.5),
        "pu" | "pp" => Some(2.3),
        "id" => Some(2.2),
        "gap" => Some(1.9),
        _ => None,
    }
}

pub(super) fn svg_start(out: &mut String, width: f64, height: f64, label: &str) {
    put!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.1}mm\" height=\"{height:.1}mm\" \
         viewBox=\"0 0 {width:.1} {height:.1}\" role=\"img\" aria-label=\"{}\">\n",
        Escaped(label)
    );
}
