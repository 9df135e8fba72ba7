//! The text report of a [`TransitionVerdict`]: the change, the loops some update order makes,
//! and the verdict on every mixture of the tables.

use std::fmt;

use super::{Entry, TransitionLoop, TransitionVerdict};

impl fmt::Display for TransitionVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "change: {} entries differ; {} old entries drop packets on the fabric as it is",
            self.changed_entries, self.old_entries_dropped
        )?;
        if self.looping_lids == 0 {
            writeln!(
                f,
                "no update order loops: for every LID the old and new next hops form no cycle"
            )?;
        } else {
            writeln!(
                f,
                "LOOPS: for {} destination LIDs some update order makes a forwarding loop, e.g.",
                self.looping_lids
            )?;
            for l in &self.loops {
                writeln!(f, "  {}", loop_line(l))?;
            }
        }
        writeln!(
            f,
            "Every mixture of old and new tables (each switch and SL-to-VL table old or new):"
        )?;
        write!(f, "{}", self.mixtures)?;
        if self.looping_lids > 0 && self.mixtures.cycle.is_some() {
            writeln!(
                f,
                "(packets circling the loops above also wait on their own channels: remove the \
                 loops first, then look at the cycles that remain)"
            )?;
        }
        writeln!(
            f,
            "{}",
            if self.is_safe() {
                "transition-safe: no update order loops or deadlocks"
            } else {
                "NOT transition-safe"
            }
        )
    }
}

/// `LID 12: sw1[3] (old) -> sw2[5] (new) -> back to sw1`.
fn loop_line(l: &TransitionLoop) -> String {
    let hops: Vec<String> = l
        .hops
        .iter()
        .map(|h| {
            let entry = match h.entry {
                Entry::Old => "old",
                Entry::New => "new",
                Entry::Both => "old and new",
            };
            format!("{}[{}] ({entry})", h.switch, h.port)
        })
        .collect();
    format!(
        "LID {}: {} -> back to {}",
        l.lid,
        hops.join(" -> "),
        l.hops.first().map_or("", |h| h.switch.as_str())
    )
}
