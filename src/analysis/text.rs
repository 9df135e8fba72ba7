//! The report as text for a terminal.

use std::fmt;

use super::multicast::MulticastReport;
use super::prefix::PrefixReport;
use super::{LoadStats, MatResult, Report};

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "routing analysis of {}: {} switches, {} endpoint ports, {} layer(s), {} destination LIDs",
            self.fabric, self.switches, self.endpoints, self.layers, self.destination_lids
        )?;
        let c = &self.completeness;
        writeln!(f)?;
        if c.complete {
            writeln!(
                f,
                "completeness: complete — all {} (switch, LID) entries reach their destination",
                c.entries_checked
            )?;
        } else {
            writeln!(
                f,
                "completeness: INCOMPLETE — {} of {} (switch, LID) entries do not reach their destination",
                c.entries_checked - c.entries_reaching,
                c.entries_checked
            )?;
            for (name, k) in [
                ("no entry", c.counts.no_entry),
                ("dead end", c.counts.dead_end),
                ("loop", c.counts.loops),
                ("wrong destination", c.counts.wrong_destination),
            ] {
                if k.failures > 0 {
                    writeln!(
                        f,
                        "  {name}: {} failure(s), {} entries",
                        k.failures, k.entries
                    )?;
                }
            }
            for failure in &c.failures {
                writeln!(
                    f,
                    "  LID {} at {}: {} ({} entries)",
                    failure.lid, failure.switch, failure.detail, failure.entries
                )?;
            }
            let unlisted = c.counts.failures().saturating_sub(c.failures.len());
            if unlisted > 0 {
                writeln!(f, "  ... and {unlisted} more failure(s)")?;
            }
        }
        if c.unattached_ports > 0 {
            writeln!(
                f,
                "  ({} CA/router port(s) with a LID are not cabled to a switch and were not checked)",
                c.unattached_ports
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "path lengths (inter-switch hops, source switch to endpoint LIDs on other switches):"
        )?;
        writeln!(
            f,
            "  layer     paths  broken   mean  max  minimal      +1  longer  histogram (hops: paths)"
        )?;
        for l in &self.paths {
            let histogram: Vec<String> = l
                .hops_histogram
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(h, n)| format!("{h}:{n}"))
                .collect();
            writeln!(
                f,
                "  {:>5} {:>9} {:>7} {:>6.3} {:>4} {:>7.1}% {:>6.1}% {:>6.1}%  {}",
                l.layer,
                l.paths,
                l.broken,
                l.mean_hops,
                l.max_hops,
                100.0 * l.fraction_minimal,
                100.0 * l.fraction_plus_one,
                100.0 * l.fraction_longer,
                histogram.join(" ")
            )?;
        }
        let d = &self.disjoint;
        writeln!(f)?;
        writeln!(
            f,
            "edge-disjoint paths across layers: {} ordered switch pairs, mean {:.3}, ≥2: {:.1}%, ≥3: {:.1}%",
            d.pairs,
            d.mean,
            100.0 * d.at_least_two,
            100.0 * d.at_least_three
        )?;
        let histogram: Vec<String> = d
            .histogram
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{k}:{n}"))
            .collect();
        writeln!(f, "  pairs by number of paths: {}", histogram.join(" "))?;
        writeln!(f)?;
        writeln!(
            f,
            "link load (routes per directed switch-to-switch cable, one route per source endpoint and destination LID):"
        )?;
        writeln!(f, "  {:<8} {}", "all", load_line(&self.link_load.total))?;
        for (layer, l) in self.link_load.per_layer.iter().enumerate() {
            writeln!(f, "  {:<8} {}", format!("layer {layer}"), load_line(l))?;
        }
        if let Some(mat) = &self.mat {
            writeln!(f)?;
            writeln!(f, "maximum achievable throughput ({}):", mat.solver)?;
            writeln!(f, "  uniform all-to-all: {}", mat_line(&mat.uniform))?;
            writeln!(f, "  adversarial:        {}", mat_line(&mat.adversarial))?;
            writeln!(
                f,
                "  (adversarial matching: {}; {} pairs, mean distance {:.2})",
                mat.matching.method, mat.matching.pairs, mat.matching.mean_distance
            )?;
        }
        if let Some(p) = &self.prefix {
            writeln!(f)?;
            write!(f, "{p}")?;
        }
        if let Some(m) = &self.multicast {
            writeln!(f)?;
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

impl fmt::Display for MulticastReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "multicast: {} groups, {} deliver to exactly their members",
            self.groups.len(),
            self.delivering
        )?;
        writeln!(f, "  MLID    members  switches  depth  links  delivery")?;
        for g in &self.groups {
            writeln!(
                f,
                "  0x{:04x} {:>8} {:>9} {:>6} {:>6}  {}",
                g.mlid,
                g.members,
                g.switches,
                g.depth,
                g.links,
                if g.delivers { "exact" } else { "WRONG" }
            )?;
            for p in &g.problems {
                writeln!(f, "      {p}")?;
            }
        }
        let l = &self.load;
        write!(
            f,
            "  groups per directed switch-to-switch cable: mean {:.2} max {} ({} of {} directions used)",
            l.mean, l.max, l.links_used, l.links
        )?;
        if let Some(b) = &l.busiest {
            write!(f, "; busiest {b}")?;
        }
        writeln!(f)
    }
}

impl fmt::Display for PrefixReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "throughput of each prefix of layers (traffic split evenly over layers 0..K-1; \
             units of one host link; {} hosts):",
            self.hosts
        )?;
        writeln!(
            f,
            "  K  all-to-all  random mean   min  adversarial  worst perm  max/mean routes"
        )?;
        for p in &self.prefixes {
            let worst = p
                .worst
                .map_or_else(|| "-".to_string(), |w| format!("{w:.3}"));
            writeln!(
                f,
                "  {:<2} {:>10.3} {:>12.3} {:>5.3} {:>12.3} {:>11} {:>16.3}",
                p.layers,
                p.all_to_all,
                p.random_mean,
                p.random_min,
                p.adversarial_mean,
                worst,
                p.balance
            )?;
        }
        writeln!(
            f,
            "  ({} random permutations from seed {}; adversarial: {} farthest-switch matchings, \
             {:.1}% of switches at their largest distance)",
            self.samples,
            self.seed,
            self.adversarial_seeds,
            100.0 * self.adversarial_farthest
        )?;
        let solved: Vec<String> = self
            .prefixes
            .iter()
            .filter_map(|p| {
                let (solved, cables) = p.worst_cables_solved?;
                Some(format!(
                    "K={}: {solved} of {cables} cables solved, {:.2} s",
                    p.layers,
                    p.worst_seconds.unwrap_or(0.0)
                ))
            })
            .collect();
        if !solved.is_empty() {
            writeln!(
                f,
                "  (worst permutation: exact, a transportation problem per cable; {})",
                solved.join("; ")
            )?;
        }
        Ok(())
    }
}

fn load_line(l: &LoadStats) -> String {
    let mut line = format!(
        "min {} mean {:.2} max {} max/mean {:.3} ({} directions)",
        l.min, l.mean, l.max, l.max_over_mean, l.links
    );
    if let Some(b) = &l.busiest {
        line += &format!("; busiest {b}");
    }
    line
}

fn mat_line(m: &MatResult) -> String {
    let value = m
        .throughput
        .map_or_else(|| "n/a".to_string(), |v| format!("{v:.4}"));
    let mut line = format!(
        "{value} ({} commodities, {} with several paths; {} variables, {} constraints; {:.2} s)",
        m.commodities, m.multipath_commodities, m.variables, m.constraints, m.seconds
    );
    if let Some(note) = &m.note {
        line += &format!(" — {note}");
    }
    line
}
