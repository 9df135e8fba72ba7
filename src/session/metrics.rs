//! The sweep log as Prometheus metrics: counters summed over the routing passes seen, and
//! gauges of the last pass and of the routing in force, in the text exposition format that
//! node_exporter's textfile collector reads (`# HELP`, `# TYPE`, one sample per line; seconds
//! as the unit of time, `_total` on counters).
//!
//! The plugin feeds every record it appends to the sweep log to a [`SweepMetrics`] and writes
//! [`SweepMetrics::render`] after every pass (`metrics_file`); `ibfabric metrics --sweep-log`
//! feeds it a whole log. Both therefore give the same numbers for the same passes, and nothing
//! here is more than the sweep log says: the counters of a plugin start at its load (a counter
//! reset, which Prometheus' `rate` and `increase` allow for), those of the command at the
//! log's first line.

use std::fmt::Write as _;

use crate::deadlock::Guarantee;

use super::sweep_record::{Outcome, PassKind, Sl2VlCount, SweepRecord};

/// Prometheus metric kinds used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (resets when the plugin restarts).
    Counter,
    /// A value of the last pass or of the routing in force.
    Gauge,
}

/// One metric family: its name, kind and HELP text.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The metric name.
    pub name: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
    /// What it counts, for `# HELP` (and the README's table).
    pub help: &'static str,
}

const fn counter(name: &'static str, help: &'static str) -> Family {
    Family {
        name,
        kind: Kind::Counter,
        help,
    }
}

const fn gauge(name: &'static str, help: &'static str) -> Family {
    Family {
        name,
        kind: Kind::Gauge,
        help,
    }
}

const PASSES: Family = counter(
    "opensm_layered_routing_passes_total",
    "Routing passes of the layered engine by outcome (failed: an error or a caught panic, OpenSM routed with its next engine).",
);
const SECONDS: Family = counter(
    "opensm_layered_routing_seconds_total",
    "Wall time of the routing passes, summed.",
);
const CORE_SECONDS: Family = counter(
    "opensm_layered_core_routing_seconds_total",
    "Time the core's routing took in the passes, summed (the rest is reading the subnet and the cabling check).",
);
const CHANGED_TOTAL: Family = counter(
    "opensm_layered_repair_routes_changed_total",
    "(layer, switch, destination switch) routes whose next hop a repair changed, summed over repairs.",
);
const HAD_TO_TOTAL: Family = counter(
    "opensm_layered_repair_routes_had_to_change_total",
    "Routes whose path crossed a lost cable or switch (the ones that had to change), summed over repairs.",
);
const CABLES_LOST_TOTAL: Family = counter(
    "opensm_layered_repair_cables_lost_total",
    "Switch-to-switch cables lost, summed over repairs (each counts the losses since the routing it repaired).",
);
const SWITCHES_LOST_TOTAL: Family = counter(
    "opensm_layered_repair_switches_lost_total",
    "Switches lost, summed over repairs (each counts the losses since the routing it repaired).",
);
const CABLES_GAINED_TOTAL: Family = counter(
    "opensm_layered_repair_cables_gained_total",
    "Switch-to-switch cables routed in by repairs, summed.",
);
const SWITCHES_GAINED_TOTAL: Family = counter(
    "opensm_layered_repair_switches_gained_total",
    "Switches routed in by repairs, summed.",
);
const STAGED_PASSES: Family = counter(
    "opensm_layered_staged_passes_total",
    "Passes of staged changes written, by kind: drop (changed entries dropped), lanes (SL-to-VL tables only), install (the new entries).",
);
const DROPPED_WORKING_TOTAL: Family = counter(
    "opensm_layered_staged_dropped_working_entries_total",
    "Forwarding entries that still carried traffic and were dropped between the passes of a change, summed.",
);
const TREES_SHRUNK_TOTAL: Family = counter(
    "opensm_layered_staged_tree_entries_shrunk_total",
    "Multicast entries (switch, group) held to what the old and the new tree share between the passes of a change, summed.",
);
const LFT_BLOCKS_TOTAL: Family = counter(
    "opensm_layered_lft_blocks_total",
    "64-entry LFT blocks the passes of staged changes differed in from the switches' confirmed tables (the SubnSet MADs sent), summed.",
);
const SL2VL_SENT_TOTAL: Family = counter(
    "opensm_layered_sl2vl_tables_sent_total",
    "SL-to-VL tables OpenSM sent after the routing passes because the port held another row (the SubnSet MADs), summed.",
);
const SL2VL_ASKED_TOTAL: Family = counter(
    "opensm_layered_sl2vl_tables_asked_total",
    "SL-to-VL tables OpenSM asked the plugin for after the routing passes (one per switch port pair and end port), summed.",
);
const LAST_TIME: Family = gauge(
    "opensm_layered_last_pass_timestamp_seconds",
    "When the last routing pass ended (seconds since the Unix epoch).",
);
const LAST_DURATION: Family = gauge(
    "opensm_layered_last_pass_duration_seconds",
    "Wall time of the last routing pass.",
);
const LAST_CORE_DURATION: Family = gauge(
    "opensm_layered_last_pass_core_duration_seconds",
    "Time the core's routing took in the last pass.",
);
const LAST_OUTCOME: Family = gauge(
    "opensm_layered_last_pass_outcome",
    "1 for the outcome of the last routing pass, 0 for the others.",
);
const SUCCESS_TIME: Family = gauge(
    "opensm_layered_last_success_timestamp_seconds",
    "When the routing in force was written (the last pass that did not fail).",
);
const SWITCHES: Family = gauge(
    "opensm_layered_switches",
    "Switches of the routing in force.",
);
const LIDS: Family = gauge(
    "opensm_layered_lids",
    "Destination LIDs of the routing in force.",
);
const LAYERS: Family = gauge(
    "opensm_layered_layers",
    "Layers (LID offsets routed apart) of the routing in force.",
);
const LAYERS_REQUESTED: Family = gauge(
    "opensm_layered_layers_requested",
    "Layers asked for; more than opensm_layered_layers when the VLs did not suffice and layers were given up.",
);
const VLS: Family = gauge(
    "opensm_layered_vls",
    "Data VLs the SL-to-VL tables of the deadlock scheme in force map to.",
);
const SCHEME: Family = gauge(
    "opensm_layered_deadlock_scheme",
    "1 for the deadlock avoidance scheme of the routing in force (none: avoidance off), 0 for the others.",
);
const GUARANTEE: Family = gauge(
    "opensm_layered_deadlock_guarantee",
    "1 for the senders the routing in force is deadlock-free for: every_sl (whatever SL the traffic carries), path_sl_only (only clients that use the SA's path SL; UCX does not), none.",
);
const CHANGED: Family = gauge(
    "opensm_layered_repair_routes_changed",
    "Routes the repair in force changed (0 when the routing in force was made in full).",
);
const HAD_TO: Family = gauge(
    "opensm_layered_repair_routes_had_to_change",
    "Routes whose path crossed a loss in the repair in force (0 when made in full).",
);
const CHURN: Family = gauge(
    "opensm_layered_repair_churn_ratio",
    "Routes changed over routes that had to change in the repair in force (at most 1; 0 when made in full or nothing had to change).",
);
const DEGRADED: Family = gauge(
    "opensm_layered_repair_switch_pairs_degraded",
    "Switch pairs with fewer edge-disjoint paths across the layers than in the routing the repair in force started from (0 when made in full).",
);
const BELOW_TARGET: Family = gauge(
    "opensm_layered_repair_switch_pairs_below_target",
    "Of the degraded switch pairs, those now below the target of 3 edge-disjoint paths (fewer with fewer layers).",
);
const PREFIX: Family = gauge(
    "opensm_layered_prefix_max_over_mean_ratio",
    "Busiest switch-to-switch link's summed routes of layers 0..K over the mean, per prefix K (label layers): 1 is perfectly balanced.",
);
const CABLING_TIME: Family = gauge(
    "opensm_layered_cabling_check_timestamp_seconds",
    "When the subnet was last compared with the cabling plan.",
);
const CABLING: Family = gauge(
    "opensm_layered_cabling_cables",
    "Cables of the cabling plan found as planned and not (missing, miswired, degraded, down or not seen) at the last check.",
);

/// Every family [`SweepMetrics::render`] can write, in the order it writes them.
pub const FAMILIES: &[Family] = &[
    PASSES,
    SECONDS,
    CORE_SECONDS,
    CHANGED_TOTAL,
    HAD_TO_TOTAL,
    CABLES_LOST_TOTAL,
    SWITCHES_LOST_TOTAL,
    CABLES_GAINED_TOTAL,
    SWITCHES_GAINED_TOTAL,
    STAGED_PASSES,
    DROPPED_WORKING_TOTAL,
    TREES_SHRUNK_TOTAL,
    LFT_BLOCKS_TOTAL,
    SL2VL_SENT_TOTAL,
    SL2VL_ASKED_TOTAL,
    LAST_TIME,
    LAST_DURATION,
    LAST_CORE_DURATION,
    LAST_OUTCOME,
    SUCCESS_TIME,
    SWITCHES,
    LIDS,
    LAYERS,
    LAYERS_REQUESTED,
    VLS,
    SCHEME,
    GUARANTEE,
    CHANGED,
    HAD_TO,
    CHURN,
    DEGRADED,
    BELOW_TARGET,
    PREFIX,
    CABLING_TIME,
    CABLING,
];

/// The values of the `scheme` label, as the sweep log names the schemes.
pub const SCHEMES: [&str; 4] = ["port_pair", "dfsssp", "colouring", "none"];

/// The values of the `guarantee` label.
pub const GUARANTEES: [&str; 3] = ["every_sl", "path_sl_only", "none"];

/// The `guarantee` label of a sweep record's guarantee line (`None`: no scheme); `None` for a
/// line no [`Guarantee`] prints.
pub fn guarantee_label(line: Option<&str>) -> Option<&'static str> {
    let Some(line) = line else {
        return Some("none");
    };
    [
        (Guarantee::EverySl, "every_sl"),
        (Guarantee::PathSlOnly, "path_sl_only"),
    ]
    .into_iter()
    .find(|(g, _)| g.to_string() == line)
    .map(|(_, label)| label)
}

/// The metrics of the routing passes seen so far.
#[derive(Debug, Clone, Default)]
pub struct SweepMetrics {
    passes: [u64; Outcome::ALL.len()],
    ms: u128,
    core_ms: u128,
    changed: u64,
    had_to: u64,
    cables_lost: u64,
    switches_lost: u64,
    cables_gained: u64,
    switches_gained: u64,
    /// Passes of staged changes by kind ([`PassKind::ALL`] order); `None` before the first.
    staged: Option<[u64; PassKind::ALL.len()]>,
    dropped_working: u64,
    trees_shrunk: u64,
    lft_blocks: u64,
    /// SL-to-VL tables sent and asked for; `None` before the first count.
    sl2vl: Option<Sl2VlCount>,
    /// The last pass.
    last: Option<SweepRecord>,
    /// The last pass that wrote tables: the routing in force.
    in_force: Option<SweepRecord>,
    /// Time, cables planned and as planned of the last pass that checked the cabling.
    cabling: Option<(f64, usize, usize)>,
}

impl SweepMetrics {
    /// No passes seen.
    pub fn new() -> Self {
        Self::default()
    }

    /// The metrics of `records`, in order.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a SweepRecord>) -> Self {
        let mut metrics = Self::new();
        for r in records {
            metrics.observe(r);
        }
        metrics
    }

    /// Counts one pass. A repair's figures go to the counters only for the pass that repaired
    /// (a pass that reuses the repaired routing carries them again in its record).
    pub fn observe(&mut self, record: &SweepRecord) {
        let index = Outcome::ALL
            .iter()
            .position(|&o| o == record.outcome)
            .expect("every outcome is listed");
        self.passes[index] += 1;
        self.ms += record.ms;
        self.core_ms += record.core_ms;
        if record.outcome == Outcome::Repaired {
            let n = |v: Option<usize>| v.unwrap_or(0) as u64;
            self.changed += record.routes_changed.unwrap_or(0);
            self.had_to += record.routes_had_to.unwrap_or(0);
            self.cables_lost += n(record.lost_cables);
            self.switches_lost += n(record.lost_switches);
            self.cables_gained += n(record.gained_cables);
            self.switches_gained += n(record.gained_switches);
        }
        if let Some(pass) = &record.pass {
            let staged = self.staged.get_or_insert_default();
            let kind = PassKind::ALL.iter().position(|&k| k == pass.kind);
            staged[kind.expect("every kind is listed")] += 1;
            self.dropped_working += pass.dropped_working as u64;
            self.trees_shrunk += pass.trees_shrunk as u64;
            self.lft_blocks += pass.blocks as u64;
        }
        if let Some(tables) = record.sl2vl_tables {
            self.observe_sl2vl(tables);
        }
        if let (Some(planned), Some(as_planned)) = (record.cables_planned, record.cables_as_planned)
        {
            self.cabling = Some((record.time, planned, as_planned));
        }
        if record.outcome != Outcome::Failed {
            self.in_force = Some(record.clone());
        }
        self.last = Some(record.clone());
    }

    /// Counts the SL-to-VL tables of the last pass, which follow its record (an
    /// [`Sl2VlLine`](super::sweep_record::Sl2VlLine)): the same sums as when
    /// [`parse_sweep_log`](super::sweep_record::parse_sweep_log) attaches them to the record.
    pub fn observe_sl2vl(&mut self, tables: Sl2VlCount) {
        let sum = self.sl2vl.get_or_insert(Sl2VlCount { sent: 0, asked: 0 });
        sum.sent += tables.sent;
        sum.asked += tables.asked;
    }

    /// Passes seen with `outcome`.
    pub fn passes(&self, outcome: Outcome) -> u64 {
        Outcome::ALL
            .iter()
            .position(|&o| o == outcome)
            .map_or(0, |i| self.passes[i])
    }

    /// The metrics in Prometheus' text exposition format (version 0.0.4), ending in a newline.
    /// Families without a value (no pass yet, no cabling plan, a field older logs lack) are
    /// left out rather than written as 0.
    pub fn render(&self) -> String {
        let mut out = Exposition::default();
        let outcomes = |f: &dyn Fn(Outcome) -> f64| -> Vec<Sample> {
            Outcome::ALL
                .iter()
                .map(|&o| Sample::labelled("outcome", o.name(), f(o)))
                .collect()
        };
        out.family(&PASSES, &outcomes(&|o| self.passes(o) as f64));
        out.one(&SECONDS, self.ms as f64 / 1000.0);
        out.one(&CORE_SECONDS, self.core_ms as f64 / 1000.0);
        out.one(&CHANGED_TOTAL, self.changed as f64);
        out.one(&HAD_TO_TOTAL, self.had_to as f64);
        out.one(&CABLES_LOST_TOTAL, self.cables_lost as f64);
        out.one(&SWITCHES_LOST_TOTAL, self.switches_lost as f64);
        out.one(&CABLES_GAINED_TOTAL, self.cables_gained as f64);
        out.one(&SWITCHES_GAINED_TOTAL, self.switches_gained as f64);
        if let Some(staged) = &self.staged {
            let kinds: Vec<Sample> = PassKind::ALL
                .iter()
                .zip(staged)
                .map(|(k, &n)| Sample::labelled("kind", k.name(), n as f64))
                .collect();
            out.family(&STAGED_PASSES, &kinds);
            out.one(&DROPPED_WORKING_TOTAL, self.dropped_working as f64);
            out.one(&TREES_SHRUNK_TOTAL, self.trees_shrunk as f64);
            out.one(&LFT_BLOCKS_TOTAL, self.lft_blocks as f64);
        }
        if let Some(sl2vl) = self.sl2vl {
            out.one(&SL2VL_SENT_TOTAL, sl2vl.sent as f64);
            out.one(&SL2VL_ASKED_TOTAL, sl2vl.asked as f64);
        }
        if let Some(last) = &self.last {
            out.one(&LAST_TIME, last.time);
            out.one(&LAST_DURATION, last.ms as f64 / 1000.0);
            out.one(&LAST_CORE_DURATION, last.core_ms as f64 / 1000.0);
            out.family(
                &LAST_OUTCOME,
                &outcomes(&|o| f64::from(u8::from(o == last.outcome))),
            );
        }
        if let Some(r) = &self.in_force {
            self.render_in_force(&mut out, r);
        }
        if let Some((time, planned, as_planned)) = self.cabling {
            out.one(&CABLING_TIME, time);
            out.family(
                &CABLING,
                &[
                    Sample::labelled("state", "as_planned", as_planned as f64),
                    Sample::labelled(
                        "state",
                        "not_as_planned",
                        planned.saturating_sub(as_planned) as f64,
                    ),
                ],
            );
        }
        out.text
    }

    fn render_in_force(&self, out: &mut Exposition, r: &SweepRecord) {
        let flag = |b: bool| f64::from(u8::from(b));
        out.one(&SUCCESS_TIME, r.time);
        out.one(&SWITCHES, r.switches as f64);
        out.one(&LIDS, r.lids as f64);
        out.one(&LAYERS, r.layers as f64);
        if let Some(requested) = r.layers_requested {
            out.one(&LAYERS_REQUESTED, requested as f64);
        }
        if let Some(vls) = r.vls {
            out.one(&VLS, f64::from(vls));
        }
        if let Some(scheme) = &r.scheme {
            let samples: Vec<Sample> = SCHEMES
                .iter()
                .map(|s| Sample::labelled("scheme", s, flag(s == scheme)))
                .collect();
            out.family(&SCHEME, &samples);
        }
        if let Some(label) = guarantee_label(r.guarantee.as_deref()) {
            let samples: Vec<Sample> = GUARANTEES
                .iter()
                .map(|g| Sample::labelled("guarantee", g, flag(*g == label)))
                .collect();
            out.family(&GUARANTEE, &samples);
        }
        let changed = r.routes_changed.unwrap_or(0);
        let had_to = r.routes_had_to.unwrap_or(0);
        out.one(&CHANGED, changed as f64);
        out.one(&HAD_TO, had_to as f64);
        let churn = if had_to == 0 {
            0.0
        } else {
            changed as f64 / had_to as f64
        };
        out.one(&CHURN, churn);
        out.one(&DEGRADED, r.pairs_degraded.unwrap_or(0) as f64);
        out.one(&BELOW_TARGET, r.pairs_below_target.unwrap_or(0) as f64);
        let prefixes: Vec<Sample> = r
            .prefix_balance
            .iter()
            .map(|p| Sample::labelled("layers", &p.layers.to_string(), p.max_over_mean))
            .collect();
        out.family(&PREFIX, &prefixes);
    }
}

/// One sample: its labels (name, value) and value.
struct Sample {
    labels: Vec<(&'static str, String)>,
    value: f64,
}

impl Sample {
    fn labelled(name: &'static str, value: &str, v: f64) -> Self {
        Self {
            labels: vec![(name, value.to_string())],
            value: v,
        }
    }
}

/// The text being written.
#[derive(Default)]
struct Exposition {
    text: String,
}

impl Exposition {
    fn one(&mut self, family: &Family, value: f64) {
        self.family(
            family,
            &[Sample {
                labels: Vec::new(),
                value,
            }],
        );
    }

    /// Writes the family's HELP and TYPE lines and its samples (nothing without samples).
    fn family(&mut self, family: &Family, samples: &[Sample]) {
        if samples.is_empty() {
            return;
        }
        let kind = match family.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let help = family.help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {} {help}", family.name);
        let _ = writeln!(self.text, "# TYPE {} {kind}", family.name);
        for s in samples {
            self.text.push_str(family.name);
            if !s.labels.is_empty() {
                let labels: Vec<String> = s
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                let _ = write!(self.text, "{{{}}}", labels.join(","));
            }
            let _ = writeln!(self.text, " {}", number(s.value));
        }
    }
}

/// A label value with backslash, double quote and newline escaped, as the format asks.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value as the format spells it (Rust's `inf` and `NaN` are not its spellings).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests;
