//! What one routing pass of a subnet manager did, as one JSON object per line of the sweep log
//! (the plugin's `sweep_log`): written by the plugin after every pass and read back by
//! `ibfabric metrics --sweep-log`, so both ends share this one definition of the fields.
//! Monitoring reads it without parsing prose, and a fault's effect on the tables (routes
//! changed, routes that had to, switch pairs that lost disjoint paths) can be followed sweep by
//! sweep.
//!
//! Fields added later are optional when read, so logs written by earlier versions still parse.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::deadlock::SchemeOutcome;

use super::routed::Routed;

/// What a routing pass ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The subnet was the one last routed: its tables were written again.
    Unchanged,
    /// The last routing was repaired for lost cables, switches or hosts.
    Repaired,
    /// The subnet was routed in full.
    Routed,
    /// Routed in full because the admin asked for it (`reoptimise_file`).
    Reoptimised,
    /// The plugin failed (an error or a caught panic); OpenSM went on with its next routing
    /// engine.
    Failed,
}

impl Outcome {
    /// Every outcome, in the order the metrics list them.
    pub const ALL: [Outcome; 5] = [
        Outcome::Unchanged,
        Outcome::Repaired,
        Outcome::Routed,
        Outcome::Reoptimised,
        Outcome::Failed,
    ];

    /// The name the sweep log and the metrics' `outcome` label give it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Unchanged => "unchanged",
            Outcome::Repaired => "repaired",
            Outcome::Routed => "routed",
            Outcome::Reoptimised => "reoptimised",
            Outcome::Failed => "failed",
        }
    }
}

/// The balance of one prefix of layers in a [`SweepRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrefixFigure {
    /// K: layers 0..K summed.
    pub layers: usize,
    /// The busiest cable's summed routes over the mean (3 decimals).
    pub max_over_mean: f64,
}

/// The cabling plan's check of a pass: the plan's cables, and those found as planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CablingCheck {
    /// Cables of the plan (findings of the check, one per planned cable).
    pub planned: usize,
    /// Of those, the cables found as planned.
    pub as_planned: usize,
}

/// Which pass of a change written in passes (`session::transition`) a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    /// The changed entries that still forwarded were dropped; the new ones follow once every
    /// switch confirmed and the dropped routes drained.
    Drop,
    /// Only the SL-to-VL tables changed (no route crossed a port pair whose lane changes); the
    /// new entries follow once every switch confirmed.
    Lanes,
    /// The new entries were written over the dropped ones (or at once, when no changed entry
    /// forwarded).
    Install,
}

impl PassKind {
    /// Every kind, in the order the metrics list them.
    pub const ALL: [PassKind; 3] = [PassKind::Drop, PassKind::Lanes, PassKind::Install];

    /// The name the sweep log and the metrics' `kind` label give it.
    pub fn name(self) -> &'static str {
        match self {
            PassKind::Drop => "drop",
            PassKind::Lanes => "lanes",
            PassKind::Install => "install",
        }
    }
}

/// What one pass of a change wrote, counted in (switch, LID) entries against what the
/// switches held before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassFigures {
    /// Which pass.
    pub kind: PassKind,
    /// Entries whose port the pass changed.
    pub written: usize,
    /// Of them, the entries the pass set to drop packets.
    pub dropped: usize,
    /// Of the dropped entries, those whose route still reached its destination before.
    pub dropped_working: usize,
    /// Changed entries moved to their new port in this pass although they still forwarded,
    /// where the transition verifier proved every mixture safe.
    #[serde(default)]
    pub moved: usize,
    /// 64-entry LFT blocks that differ from what the switches had confirmed: the
    /// SubnSet(LinearForwardingTable) MADs the subnet manager sends for the pass.
    #[serde(default)]
    pub blocks: usize,
    /// Multicast entries (switch, group) the pass shrinks to the ports the held and the new
    /// tree share, before the last pass writes the new trees.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trees_shrunk: usize,
}

/// Whether a count is zero (left out of the sweep log).
fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The SL-to-VL tables a subnet manager asked the routing engine for after a pass (one per
/// switch port pair and end port, `update_sl2vl`), and those it sent because the port held
/// another row: what the lanes cost on the wire, beside the LFT blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sl2VlCount {
    /// Tables sent (SubnSet(SLtoVLMappingTable) MADs).
    pub sent: u64,
    /// Tables asked for.
    pub asked: u64,
}

/// A line of the sweep log that completes the record before it: the SL-to-VL tables are
/// programmed after the routing pass has been recorded (OpenSM sends them once the forwarding
/// tables are written, and reports the routing done after), so their count follows on a line
/// of its own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sl2VlLine {
    /// Seconds since the Unix epoch.
    pub time: f64,
    /// The tables of the pass recorded on the line before.
    pub sl2vl_tables: Sl2VlCount,
}

impl Sl2VlLine {
    /// The line as JSON, newline included.
    pub fn line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }
}

/// One line of the sweep log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    /// Seconds since the Unix epoch.
    pub time: f64,
    /// What the pass ended in.
    pub outcome: Outcome,
    /// Switches, destination LIDs and layers of the routing written (0 for a failed pass).
    #[serde(default)]
    pub switches: usize,
    /// See `switches`.
    #[serde(default)]
    pub lids: usize,
    /// See `switches`.
    #[serde(default)]
    pub layers: usize,
    /// Layers asked for: more than `layers` when the VLs did not suffice and layers were given
    /// up (`on_vl_shortage: fewer_layers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers_requested: Option<usize>,
    /// Switch-to-switch cables and switches lost since the routing that was repaired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_cables: Option<usize>,
    /// See `lost_cables`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_switches: Option<usize>,
    /// Switch-to-switch cables and switches routed in since the routing repaired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gained_cables: Option<usize>,
    /// See `gained_cables`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gained_switches: Option<usize>,
    /// (layer, switch, destination switch) routes whose next hop changed, and those whose path
    /// crossed a loss (the ones that had to change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes_changed: Option<u64>,
    /// See `routes_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes_had_to: Option<u64>,
    /// Switch pairs with fewer edge-disjoint paths across the layers than before the repair,
    /// and of those the ones now below the target (3 with 3 layers or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_degraded: Option<u64>,
    /// See `pairs_degraded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_below_target: Option<u64>,
    /// Routes the disjoint repair could change beyond those that crossed a loss (crossing −
    /// changed after the completion, so that at most the routes that had to change do), and
    /// how many it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disjoint_budget: Option<u64>,
    /// See `disjoint_budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disjoint_budget_used: Option<u64>,
    /// Why a repair gave way to a full routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_routing: Option<String>,
    /// Max/mean of the summed routes of layers 0..K per cable, for K = 1, 2, 4, … (the
    /// prefixes MPI stacks split bulk data over); empty for a failed pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix_balance: Vec<PrefixFigure>,
    /// Wall time of the pass, and of the core's routing in it.
    #[serde(default)]
    pub ms: u128,
    /// See `ms`.
    #[serde(default)]
    pub core_ms: u128,
    /// The deadlock scheme's outcome line.
    #[serde(default)]
    pub deadlock: String,
    /// The scheme in force, by its configuration name (`port_pair`, `dfsssp`, `colouring`), or
    /// `none` without deadlock avoidance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// The data VLs the SL-to-VL tables of the scheme map to (none without a scheme).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vls: Option<u32>,
    /// The senders the routing is deadlock-free for, as the log line says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<String>,
    /// With a cabling plan: its cables, and those found as planned before the pass routed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cables_planned: Option<usize>,
    /// See `cables_planned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cables_as_planned: Option<usize>,
    /// Why the pass failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With staged transitions: which pass of the change this was and what it wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<PassFigures>,
    /// The SL-to-VL tables of the pass, from the [`Sl2VlLine`] after it (never on the record's
    /// own line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sl2vl_tables: Option<Sl2VlCount>,
}

/// The configuration name of the scheme that gave `outcome` (`deadlock:` of the plugin's
/// configuration, `--deadlock` of `ibfabric route`).
pub fn scheme_key(outcome: &SchemeOutcome) -> &'static str {
    match outcome {
        SchemeOutcome::PortPair { .. } => "port_pair",
        SchemeOutcome::Dfsssp { .. } => "dfsssp",
        SchemeOutcome::Colouring { .. } => "colouring",
    }
}

impl SweepRecord {
    /// The record of tables written from `routed` at `time` (seconds since the Unix epoch; the
    /// core reads no clock).
    pub fn written(routed: &Routed, outcome: Outcome, elapsed: Duration, time: f64) -> Self {
        let repair = routed.repair.as_ref();
        Self {
            time,
            outcome,
            switches: routed.switches.len(),
            lids: routed.lids,
            layers: routed.layers,
            layers_requested: Some(routed.requested_layers),
            lost_cables: repair.map(|r| r.lost_cables),
            lost_switches: repair.map(|r| r.lost_switches),
            gained_cables: repair.map(|r| r.gained_cables),
            gained_switches: repair.map(|r| r.gained_switches),
            routes_changed: repair.map(|r| r.report.changed),
            routes_had_to: repair.map(|r| r.report.crossing),
            pairs_degraded: repair.map(|r| r.report.degraded),
            pairs_below_target: repair.map(|r| r.report.below_target),
            disjoint_budget: repair.map(|r| r.report.budget),
            disjoint_budget_used: repair.map(|r| r.report.spent),
            full_routing: repair.and_then(|r| r.report.full_routing.clone()),
            prefix_balance: routed
                .prefix_balance
                .iter()
                .map(|b| PrefixFigure {
                    layers: b.layers,
                    max_over_mean: (b.max_over_mean * 1000.0).round() / 1000.0,
                })
                .collect(),
            ms: elapsed.as_millis(),
            core_ms: routed.elapsed.as_millis(),
            deadlock: routed.deadlock_summary.clone(),
            scheme: Some(routed.scheme.as_ref().map_or("none", scheme_key).into()),
            vls: routed
                .qos
                .as_ref()
                .map(|q| q.tables().vls_mapped().count_ones()),
            guarantee: routed.guarantee.map(|g| g.to_string()),
            cables_planned: None,
            cables_as_planned: None,
            error: None,
            pass: None,
            sl2vl_tables: None,
        }
    }

    /// The record of a pass that failed with `error` at `time`.
    pub fn failed(error: &str, elapsed: Duration, time: f64) -> Self {
        Self {
            time,
            outcome: Outcome::Failed,
            switches: 0,
            lids: 0,
            layers: 0,
            layers_requested: None,
            lost_cables: None,
            lost_switches: None,
            gained_cables: None,
            gained_switches: None,
            routes_changed: None,
            routes_had_to: None,
            pairs_degraded: None,
            pairs_below_target: None,
            disjoint_budget: None,
            disjoint_budget_used: None,
            full_routing: None,
            prefix_balance: Vec::new(),
            ms: elapsed.as_millis(),
            core_ms: 0,
            deadlock: String::new(),
            scheme: None,
            vls: None,
            guarantee: None,
            cables_planned: None,
            cables_as_planned: None,
            error: Some(error.to_string()),
            pass: None,
            sl2vl_tables: None,
        }
    }

    /// The record with the cabling plan's check of its pass (`None`: no plan, or not checked).
    pub fn with_cabling(mut self, check: Option<CablingCheck>) -> Self {
        self.cables_planned = check.map(|c| c.planned);
        self.cables_as_planned = check.map(|c| c.as_planned);
        self
    }

    /// The record with the pass of a staged change it wrote.
    pub fn with_pass(mut self, pass: Option<PassFigures>) -> Self {
        self.pass = pass;
        self
    }

    /// The record as one line of JSON, newline included.
    pub fn line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|e| {
            format!("{{\"outcome\":\"failed\",\"error\":\"sweep record: {e}\"}}")
        });
        line.push('\n');
        line
    }
}

/// A line of a sweep log that is not a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SweepLogError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong, and what a record has.
    pub message: String,
}

/// Every record of a sweep log's text, in order (blank lines skipped), each with the SL-to-VL
/// tables of the [`Sl2VlLine`] after it, if any (one before the first record, as in a log cut
/// by rotation, is skipped).
///
/// # Errors
/// The first line that is neither a sweep record (a JSON object with at least `time` and
/// `outcome`) nor an [`Sl2VlLine`], with its number.
pub fn parse_sweep_log(text: &str) -> Result<Vec<SweepRecord>, SweepLogError> {
    let mut records: Vec<SweepRecord> = Vec::new();
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str::<SweepRecord>(l) {
            Ok(record) => records.push(record),
            Err(e) => {
                let Ok(tables) = serde_json::from_str::<Sl2VlLine>(l) else {
                    return Err(not_a_record(i + 1, &e));
                };
                if let Some(last) = records.last_mut() {
                    last.sl2vl_tables = Some(tables.sl2vl_tables);
                }
            }
        }
    }
    Ok(records)
}

/// The error for line `line`, which serde read as a record with `e`.
fn not_a_record(line: usize, e: &serde_json::Error) -> SweepLogError {
    // serde_json says where in the text it read (always line 1 of one line): the column is
    // what helps.
    let full = e.to_string();
    let what = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(w, _)| w);
    SweepLogError {
        line,
        message: format!(
            "not a sweep record ({what}, column {}); expected one JSON object per line with at \
             least \"time\" (seconds since the epoch) and \"outcome\" (one of {}), or \"time\" \
             and \"sl2vl_tables\" after a record",
            e.column(),
            Outcome::ALL.map(Outcome::name).join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_are_the_times_written_to_the_last_bit() {
        // Seconds since the epoch with the sub-microsecond digits a clock gives: the metrics
        // file renders the value written, `ibfabric metrics --sweep-log` the value read back.
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..10_000 {
            let time = 1.7e9 + rng.below(100_000_000) as f64 + rng.below(1 << 30) as f64 / 1e9;
            let line = SweepRecord::failed("x", Duration::from_millis(1), time).line();
            let read = parse_sweep_log(&line).unwrap();
            assert_eq!(read[0].time.to_bits(), time.to_bits(), "{line}");
        }
        let seen = 1_795_814_984.516_916_5;
        let line = SweepRecord::failed("x", Duration::from_millis(1), seen).line();
        assert_eq!(parse_sweep_log(&line).unwrap()[0].time, seen);
    }

    #[test]
    fn a_failed_pass_is_one_json_line_naming_the_error() {
        let line = SweepRecord::failed("no switches", Duration::from_millis(3), 1.5).line();
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["outcome"], "failed");
        assert_eq!(value["error"], "no switches");
        assert_eq!(value["ms"], 3);
        assert_eq!(value["time"], 1.5);
        assert!(value.get("routes_changed").is_none());
    }

    #[test]
    fn records_read_back_as_written() {
        let failed = SweepRecord::failed("boom", Duration::from_millis(7), 2.0).with_cabling(Some(
            CablingCheck {
                planned: 10,
                as_planned: 9,
            },
        ));
        let text = format!("{}\n{}", failed.line(), failed.line());
        assert_eq!(
            parse_sweep_log(&text).unwrap(),
            vec![failed.clone(), failed]
        );
    }

    #[test]
    fn outcome_names_are_the_serialised_names() {
        for outcome in Outcome::ALL {
            assert_eq!(
                serde_json::to_value(outcome).unwrap(),
                serde_json::Value::from(outcome.name())
            );
        }
    }

    /// A line of SL-to-VL tables completes the record before it; one before the first record
    /// (a log cut by rotation) is skipped; one with other fields is not a line of the log.
    #[test]
    fn an_sl2vl_line_completes_the_record_before_it() {
        let tables = |sent, asked| Sl2VlLine {
            time: 0.0,
            sl2vl_tables: Sl2VlCount { sent, asked },
        };
        let text = [
            tables(1, 1).line(),
            SweepRecord::failed("first", Duration::ZERO, 1.0).line(),
            tables(7, 40).line(),
            SweepRecord::failed("second", Duration::ZERO, 2.0).line(),
        ]
        .concat();
        let records = parse_sweep_log(&text).unwrap();
        let read: Vec<_> = records
            .iter()
            .map(|r| (r.error.as_deref(), r.sl2vl_tables))
            .collect();
        let expected = Some(Sl2VlCount { sent: 7, asked: 40 });
        assert_eq!(read, [(Some("first"), expected), (Some("second"), None)]);
        let other = "{\"time\": 1.0, \"sl2vl_tables\": {\"sent\": 1, \"asked\": 2}, \"x\": 1}";
        let e = parse_sweep_log(other).unwrap_err();
        assert!(e.message.contains("\"sl2vl_tables\" after a record"), "{e}");
    }

    #[test]
    fn a_bad_line_is_named_with_what_a_record_has() {
        let good = SweepRecord::failed("x", Duration::ZERO, 1.0).line();
        for (bad, what) in [
            ("not json", "expected"),
            ("{\"time\": 1.0}", "missing field `outcome`"),
            (
                "{\"time\": 1.0, \"outcome\": \"exploded\"}",
                "unknown variant",
            ),
        ] {
            let text = format!("{good}\n{bad}\n");
            let e = parse_sweep_log(&text).unwrap_err();
            assert_eq!(e.line, 3, "{bad}");
            assert!(e.message.contains(what), "{bad}: {e}");
            assert!(
                e.to_string().starts_with("line 3: not a sweep record"),
                "{e}"
            );
            assert!(
                e.message
                    .contains("\"outcome\" (one of unchanged, repaired"),
                "{e}"
            );
            assert!(!e.message.contains("at line 1"), "{e}");
        }
    }

    /// Slim Fly q = 5 with 4 layers and lanes by port pair, repaired after three lost cables:
    /// the record says what the core's report says about the routes and the switch pairs, and
    /// names the scheme, its VLs and its guarantee.
    #[test]
    fn a_repair_records_the_pairs_it_degraded_and_its_budget() {
        use crate::deadlock::{Guarantee, Shortage};
        use crate::options::DeadlockMode;
        use crate::routing::{RoutingConfig, assign_lids};
        use crate::session::{DeadlockSettings, repair, route};
        use crate::topology::TopologySpec;

        let mut fabric = "slimfly:q=5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut fabric, 2).unwrap();
        let config = RoutingConfig {
            layers: 4,
            ..RoutingConfig::default()
        };
        let settings = DeadlockSettings {
            mode: DeadlockMode::Auto,
            vls: 8,
            shortage: Shortage::Fail,
        };
        let routed = route(fabric.clone(), &config, &settings).unwrap();
        let inter: Vec<usize> = (0..fabric.links().len())
            .filter(|&i| {
                let link = &fabric.links()[i];
                fabric.node(link.a.node).is_switch() && fabric.node(link.b.node).is_switch()
            })
            .collect();
        let lost = [inter[3], inter[40], inter[77]];
        let damaged = fabric.after_losses(|_| false, |l| lost.contains(&(l.0 as usize)));
        let repaired = repair(&routed, damaged, &config, &settings, false)
            .unwrap()
            .expect("lost cables are repaired");
        let r = &repaired.repair.as_ref().expect("a repair").report;
        let record =
            SweepRecord::written(&repaired, Outcome::Repaired, Duration::from_millis(9), 5.0);
        let value: serde_json::Value = serde_json::from_str(&record.line()).unwrap();
        assert_eq!(value["outcome"], "repaired");
        assert_eq!(value["lost_cables"], lost.len());
        assert_eq!(value["gained_cables"], 0);
        assert_eq!(value["routes_changed"], r.changed);
        assert_eq!(value["routes_had_to"], r.crossing);
        assert_eq!(value["pairs_degraded"], r.degraded);
        assert_eq!(value["pairs_below_target"], r.below_target);
        assert_eq!(value["disjoint_budget"], r.budget);
        assert_eq!(value["disjoint_budget_used"], r.spent);
        assert_eq!(value["scheme"], "port_pair");
        assert_eq!(value["layers"], repaired.layers);
        assert_eq!(value["layers_requested"], 4);
        let mapped = repaired.qos.as_ref().unwrap().tables().vls_mapped();
        assert_eq!(value["vls"], mapped.count_ones());
        assert_eq!(value["guarantee"], Guarantee::EverySl.to_string());
        let back = parse_sweep_log(&record.line()).unwrap();
        assert_eq!(back, vec![record]);
    }
}
