//! Congestion-free all-to-all schedules for MLFM and Latin-square fat-trees, the shift baseline,
//! and a congestion checker on real routes (forwarding tables, computed or read back).
//!
//! * A [`Schedule`] is a list of [`Phase`]s over ranks (server names); each phase maps every
//!   rank to one destination rank and, where the routing needs it, a LID offset (the layer
//!   whose path the flow must take).
//! * The schemes: [`shift`] (the baseline), [`mlfm`] (the MLFM paper's partial all-to-all on
//!   n·ℓ·m servers), [`lsft_full`] and [`lsft_partial`] (the Latin-square paper's full and
//!   partial schemes). Inadmissible parameters are refused with an [`AdmissibilityError`]
//!   saying what is admissible.
//! * [`check`] walks every flow of every phase through the forwarding tables and counts the
//!   flows on every directed link; the throughput ratio is, per flow, 1 / the flows on its most
//!   loaded link, averaged over flows and phases (1.0 = congestion-free).
//! * [`mlfm_layer_tables`]: the MLFM layer layout that makes the paper's source-chosen spines
//!   real on InfiniBand (layer x sends same-column traffic through a determined spine).
//! * [`detect_mlfm`] and [`mlfm_a2a_deadlock_free`]: the layout as a subnet's routing
//!   (`algorithm: mlfm-a2a`) on a discovered MLFM, deadlock-free, and after a repair the
//!   schedules it still serves ([`schedule_verdicts`]).

mod check;
mod detect;
mod layout;
mod mlfm_a2a;
mod schemes;

pub use check::{CheckError, CongestionReport, LinkLoad, PhaseReport, check, phase_link_loads};
pub use detect::{DetectedMlfm, NotMlfm, detect_mlfm};
pub use layout::{core_tables, mlfm_layer_tables, mlfm_layers};
pub use mlfm_a2a::{
    ScheduleVerdict, lost_cables, mlfm_a2a_deadlock_free, mlfm_a2a_layers, named_like,
    schedule_verdicts, verdict_lines,
};
pub use schemes::{
    MlfmSpine, Vector, lsft_full, lsft_partial, lsft_partial_admissible, lsft_partial_unchecked,
    lsft_vector_column, mlfm, mlfm_admissible, mlfm_unchecked, same_column_peer, shift,
};

/// Parameters a scheme does not work for; the message says what is admissible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AdmissibilityError(pub String);

/// One phase: every rank sends one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// The scheme's name of the phase, e.g. `(s,t,u) = (1,0,2)`.
    pub label: String,
    /// `destination[r]`: the rank that rank r sends to.
    pub destination: Vec<u32>,
    /// `lid_offset[r]`: the offset from the destination's base LID rank r sends to (the layer);
    /// empty when every offset is 0.
    pub lid_offset: Vec<u8>,
}

impl Phase {
    /// The LID offset of rank r's flow.
    pub fn offset(&self, r: usize) -> u8 {
        self.lid_offset.get(r).copied().unwrap_or(0)
    }
}

/// An all-to-all schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// What it is, e.g. `mlfm d=4 n=3 l=4 m=2`.
    pub name: String,
    /// Server name of every rank (as the constructions name them).
    pub ranks: Vec<String>,
    /// The phases, in order.
    pub phases: Vec<Phase>,
    /// LID offsets per port the routing must provide (a power of two; 1 = plain routing).
    pub layers: usize,
}

impl Schedule {
    /// Whether every phase is a permutation and the phases together hold every ordered pair
    /// (self pairs included) exactly once; otherwise the first problem found.
    pub fn verify_all_to_all(&self) -> Result<(), String> {
        let n = self.ranks.len();
        if self.phases.len() != n {
            return Err(format!("{} phases for {n} ranks", self.phases.len()));
        }
        let mut seen = vec![false; n * n];
        let mut received = vec![usize::MAX; n];
        for (p, phase) in self.phases.iter().enumerate() {
            if phase.destination.len() != n {
                return Err(format!(
                    "phase {}: {} flows",
                    phase.label,
                    phase.destination.len()
                ));
            }
            for (r, &dst) in phase.destination.iter().enumerate() {
                let dst = dst as usize;
                if dst >= n {
                    return Err(format!("phase {}: rank {r} sends to {dst}", phase.label));
                }
                if received[dst] == p {
                    return Err(format!("phase {}: rank {dst} receives twice", phase.label));
                }
                received[dst] = p;
                if std::mem::replace(&mut seen[r * n + dst], true) {
                    return Err(format!(
                        "pair {r} → {dst} occurs twice (again in phase {})",
                        phase.label
                    ));
                }
            }
        }
        Ok(())
    }
}
