//! The text report of a [`Verdict`]: the counts, the warnings, and the cycles with their
//! example routes.

use std::fmt;

use super::verdict::{Cycle, CyclicComponent, Verdict};

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vls: Vec<String> = self.vls.iter().map(u8::to_string).collect();
        writeln!(
            f,
            "{} routes ({} sources × {} destinations), {} channels on VL {}, {} dependencies",
            self.routes,
            self.sources,
            self.destinations,
            self.channels,
            if vls.is_empty() {
                "-".into()
            } else {
                vls.join(",")
            },
            self.dependencies
        )?;
        if let Some(m) = &self.multicast {
            writeln!(
                f,
                "multicast: {} groups ({} switch entries) add {} dependencies and {} channels to the unicast routes'",
                m.groups, m.entries, m.dependencies, m.channels
            )?;
        }
        if self.broken.count > 0 {
            writeln!(
                f,
                "warning: {} walks through the tables fail ({} loops); their routes are not checked (ibfabric analyze tells more):",
                self.broken.count, self.loops
            )?;
            for e in &self.broken.examples {
                writeln!(f, "  {e}")?;
            }
        }
        if self.dropped.count > 0 {
            writeln!(
                f,
                "warning: {} (link, SL) pairs map routes to VL 15, where data packets are dropped:",
                self.dropped.count
            )?;
            for e in &self.dropped.examples {
                writeln!(f, "  {e}")?;
            }
        }
        match &self.cycle {
            None if self.loops == 0 => writeln!(
                f,
                "deadlock-free: the channel dependency graph has no cycle"
            ),
            None => writeln!(f, "NOT deadlock-free: the tables have forwarding loops"),
            Some(cycle) => {
                writeln!(
                    f,
                    "DEADLOCK: a cycle of {} channel dependencies:",
                    cycle.channels.len()
                )?;
                write_cycle(f, cycle, "  ")?;
                write_components(f, &self.cyclic_components)
            }
        }
    }
}

/// The dependencies of `cycle`, one line each with its example routes, indented by `indent`.
fn write_cycle(f: &mut fmt::Formatter<'_>, cycle: &Cycle, indent: &str) -> fmt::Result {
    let n = cycle.channels.len();
    for (i, c) in cycle.channels.iter().enumerate() {
        let next = &cycle.channels[(i + 1) % n];
        if !c.dlids.is_empty() {
            let lids: Vec<String> = c.dlids.iter().map(u16::to_string).collect();
            writeln!(
                f,
                "{indent}{} VL {} -> {} VL {}: mixed routes to LID {}",
                c.link,
                c.vl,
                next.link,
                next.vl,
                lids.join(", ")
            )?;
        } else {
            writeln!(
                f,
                "{indent}{} VL {} -> {} VL {}: {} routes, e.g.",
                c.link, c.vl, next.link, next.vl, c.routes
            )?;
        }
        for r in &c.examples {
            writeln!(
                f,
                "{indent}    LID {} -> LID {} SL {} ({} -> {})",
                r.slid, r.dlid, r.sl, r.source, r.destination
            )?;
        }
        if !c.groups.is_empty() {
            let mlids: Vec<String> = c.groups.iter().map(|m| format!("0x{m:04x}")).collect();
            writeln!(f, "{indent}    multicast MLID {}", mlids.join(", "))?;
        }
    }
    Ok(())
}

/// `VL 0: 12, VL 3: 4` (what `count` gives each VL).
fn per_vl<T>(items: &[T], vl: impl Fn(&T) -> (u8, usize)) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|i| {
            let (v, k) = vl(i);
            format!("VL {v}: {k}")
        })
        .collect();
    parts.join(", ")
}

/// The cyclic components: how many (per VL), their sizes, and the cycle of each but the first.
fn write_components(f: &mut fmt::Formatter<'_>, components: &[CyclicComponent]) -> fmt::Result {
    let mut on_vl: Vec<(u8, usize)> = Vec::new();
    for c in components {
        for v in &c.vls {
            match on_vl.iter_mut().find(|(vl, _)| *vl == v.vl) {
                Some((_, k)) => *k += 1,
                None => on_vl.push((v.vl, 1)),
            }
        }
    }
    on_vl.sort_unstable();
    writeln!(
        f,
        "{} cyclic strongly connected component{} of the channel dependency graph (components on {}):",
        components.len(),
        if components.len() == 1 { "" } else { "s" },
        per_vl(&on_vl, |&p| p)
    )?;
    for (i, c) in components.iter().enumerate() {
        write!(
            f,
            "  {}: {} channels ({}), {} dependencies",
            i + 1,
            c.channels,
            per_vl(&c.vls, |v| (v.vl, v.channels)),
            c.dependencies
        )?;
        match &c.cycle {
            None => writeln!(f, "; the cycle above")?,
            Some(cycle) => {
                writeln!(
                    f,
                    "; a cycle of {} channel dependencies:",
                    cycle.channels.len()
                )?;
                write_cycle(f, cycle, "    ")?;
            }
        }
    }
    Ok(())
}
