//! SimGrid's inputs, as strings: the platform XML (version 4.1) of a
//! [`Platform`](crate::simulation::Platform) and the `smpirun` hostfile.
//!
//! The platform is one zone with `Full` routing: every host, every link (one per direction of
//! a cable, so a cable carries its two directions independently, as an IB cable is full
//! duplex; each direction `SHARED` among its flows), and one `<route symmetrical="NO">` per
//! ordered host pair — the way back is the tables' own route, not the way there reversed.
//! Host speed is a placeholder: the benchmark computes nothing and the command switches
//! SMPI's computation timing off.

use std::fmt::Write as _;

use super::markup::escape;
use crate::simulation::Platform;

/// `--` may not occur inside an XML comment.
fn comment(text: &str) -> String {
    let mut text = text.to_string();
    while text.contains("--") {
        text = text.replace("--", "- -");
    }
    text
}

/// The platform XML. `notes` become comment lines at the top (what was routed how).
pub fn write_platform(platform: &Platform, notes: &[String]) -> String {
    let mut out = String::new();
    out.push_str("<?xml version='1.0'?>\n");
    out.push_str("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
    out.push_str("<platform version=\"4.1\">\n");
    let _ = writeln!(
        out,
        "<!-- {}: {} hosts, {} links (one per cable direction), {} routes as the forwarding \
         tables program them -->",
        comment(&platform.fabric),
        platform.hosts.len(),
        platform.links.len(),
        platform.route_count()
    );
    for note in notes {
        let _ = writeln!(out, "<!-- {} -->", comment(note));
    }
    out.push_str("  <zone id=\"fabric\" routing=\"Full\">\n");
    for host in &platform.hosts {
        let _ = writeln!(out, "    <host id=\"{}\" speed=\"1Gf\"/>", escape(&host.id));
    }
    for link in &platform.links {
        let _ = writeln!(
            out,
            "    <link id=\"{}\" bandwidth=\"{}Gbps\" latency=\"{}ns\"/>",
            escape(&link.id),
            link.bandwidth_gbps,
            link.latency_ns
        );
    }
    let n = platform.hosts.len();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let _ = write!(
                out,
                "    <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">",
                escape(&platform.hosts[i].id),
                escape(&platform.hosts[j].id)
            );
            for &l in platform.route(i, j) {
                let _ = write!(
                    out,
                    "<link_ctn id=\"{}\"/>",
                    escape(&platform.links[l as usize].id)
                );
            }
            out.push_str("</route>\n");
        }
    }
    out.push_str("  </zone>\n</platform>\n");
    out
}

/// The `smpirun -hostfile` text: one SimGrid host id per line, rank r on line r.
pub fn write_hostfile<'a>(ranks: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for host in ranks {
        out.push_str(host);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_hold_no_double_dash() {
        assert!(!comment("--lfts x --- y").contains("--"));
    }

    #[test]
    fn the_hostfile_lists_one_host_per_rank() {
        assert_eq!(write_hostfile(["a", "b", "a"]), "a\nb\na\n");
    }
}
