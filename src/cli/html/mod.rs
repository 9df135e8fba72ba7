//! Pages for people: one self-contained HTML file per report, its plots drawn as inline SVG by
//! `plotters` (no scripts, no external style sheets, fonts or images), so a page can be mailed,
//! attached to a ticket or opened from a USB stick on a machine without network access.
//!
//! [`plot`] draws the charts (the axes, ticks and legends are plotters'; text is SVG `<text>`
//! set by the browser, so no font files are read); [`Page`] puts them together with the key
//! numbers. [`analysis`] is the page of `ibfabric analyze --format html`.
//!
//! Rendering is pure (report in, `String` out); writing the page is [`super::output`]'s job.

pub mod analysis;
pub mod plot;

use std::fmt::Write;

pub use crate::io::markup::escape;

pub use analysis::analysis_page;

/// The look shared by every page: readable on screen and on paper, plots side by side when
/// the window is wide enough.
const STYLE: &str = "\
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.15em; margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { display: inline-block; vertical-align: top; margin: 0.5em 1em 1em 0; }
figcaption { max-width: 800px; font-size: 0.9em; color: #444; }
pre { font-size: 0.8em; }
.bad { color: #B00; font-weight: bold; }
";

/// An HTML page being assembled: headings, tables, figures, preformatted text.
pub struct Page {
    body: String,
    title: String,
}

impl Page {
    /// A page titled `title` (escaped here).
    pub fn new(title: &str) -> Self {
        let mut page = Self {
            body: String::new(),
            title: escape(title),
        };
        let _ = writeln!(page.body, "<h1>{}</h1>", page.title);
        page
    }

    /// A section heading.
    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(text));
    }

    /// A paragraph of already escaped HTML.
    pub fn paragraph_html(&mut self, html: &str) {
        let _ = writeln!(self.body, "<p>{html}</p>");
    }

    /// A table with a header row; cells are escaped here.
    pub fn table(&mut self, id: &str, header: &[&str], rows: &[Vec<String>]) {
        let _ = writeln!(self.body, "<table id=\"{}\">", escape(id));
        let head: String = header
            .iter()
            .map(|h| format!("<th>{}</th>", escape(h)))
            .collect();
        let _ = writeln!(self.body, "<tr>{head}</tr>");
        for row in rows {
            let cells: String = row
                .iter()
                .map(|c| format!("<td>{}</td>", escape(c)))
                .collect();
            let _ = writeln!(self.body, "<tr>{cells}</tr>");
        }
        self.body.push_str("</table>\n");
    }

    /// A plot: the SVG (or, if drawing failed, why) with its caption.
    pub fn figure(&mut self, id: &str, svg: Result<String, plot::PlotError>, caption: &str) {
        let content = match svg {
            Ok(svg) => svg,
            Err(err) => format!(
                "<p class=\"bad\">could not draw this plot: {}</p>",
                escape(&err.to_string())
            ),
        };
        let _ = writeln!(
            self.body,
            "<figure id=\"{}\">\n{content}\n<figcaption>{}</figcaption>\n</figure>",
            escape(id),
            escape(caption)
        );
    }

    /// Preformatted text, folded away under `summary`.
    pub fn details(&mut self, summary: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            escape(summary),
            escape(text)
        );
    }

    /// The whole document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            self.title, self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_plot_says_so_in_its_figure() {
        let mut page = Page::new("t");
        page.figure("f", Err(plot::PlotError("no room".into())), "caption");
        let html = page.finish();
        assert!(html.contains("could not draw this plot: no room"), "{html}");
    }
}
