//! What each switch was last sent, so that a staged change starts from what the switches may
//! hold, also when a write was lost.
//!
//! OpenSM keeps per switch the LFT it last had confirmed (`osm_switch_t::lft`): before it
//! sends a 64-entry block it zeroes the stored block, and the switch's answer fills it in
//! again. A block that was sent but never answered (a lost MAD, a switch that went away) stays
//! zero, and the switch holds either the block it had or the one sent. The staged transition
//! (`ibfabric::session::transition`) must start from a single table per switch that is at
//! least as dangerous as either: where a pass only dropped entries or only wrote entries over
//! dropped ones, that is, per entry, the one of the two that forwards.

use std::collections::HashMap;

use ibfabric::routing::NO_PORT;

/// Entries per LFT block (the payload of one SubnSet(LinearForwardingTable)).
pub const BLOCK: usize = 64;

/// One switch's last pass: what it was believed to hold before, and what was written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sent {
    before: Vec<u8>,
    written: Vec<u8>,
}

/// The last pass written to every switch, by node GUID (switch objects come and go with the
/// sweeps; GUIDs stay).
#[derive(Debug, Default)]
pub struct SentTables {
    by_guid: HashMap<u64, Sent>,
}

impl SentTables {
    /// Records the pass just written: per switch GUID, the table it was believed to hold and
    /// the one written (`new_lft`). Replaces the record of the pass before.
    pub fn record(&mut self, passes: impl IntoIterator<Item = (u64, Vec<u8>, Vec<u8>)>) {
        self.by_guid = passes
            .into_iter()
            .map(|(guid, before, written)| (guid, Sent { before, written }))
            .collect();
    }

    /// What the switch `guid` may hold, from OpenSM's confirmed table `confirmed`: every block
    /// that does not equal the block last written to it was not confirmed, and holds, per
    /// entry, the written port where the write forwards and the port before it otherwise.
    /// Blocks of a switch never written (or written before the last pass) are taken as
    /// confirmed.
    pub fn believed(&self, guid: u64, confirmed: &[u8]) -> Vec<u8> {
        let mut held = confirmed.to_vec();
        let Some(sent) = self.by_guid.get(&guid) else {
            return held;
        };
        let at = |table: &[u8], i: usize| table.get(i).copied().unwrap_or(NO_PORT);
        for (b, block) in held.chunks_mut(BLOCK).enumerate() {
            let start = b * BLOCK;
            let confirmed_block =
                (0..block.len()).all(|i| block[i] == at(&sent.written, start + i));
            if confirmed_block {
                continue;
            }
            for (i, entry) in block.iter_mut().enumerate() {
                let written = at(&sent.written, start + i);
                *entry = if written != NO_PORT {
                    written
                } else {
                    at(&sent.before, start + i)
                };
            }
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUID: u64 = 0x0002_c903_0000_0001;

    fn table(entries: &[(usize, u8)], len: usize) -> Vec<u8> {
        let mut t = vec![NO_PORT; len];
        for &(i, p) in entries {
            t[i] = p;
        }
        t
    }

    #[test]
    fn a_switch_never_written_holds_its_confirmed_table() {
        let confirmed = table(&[(1, 3), (70, 4)], 128);
        assert_eq!(SentTables::default().believed(GUID, &confirmed), confirmed);
    }

    #[test]
    fn a_confirmed_pass_is_what_the_switch_holds() {
        let before = table(&[(1, 3), (70, 4)], 128);
        let written = table(&[(1, 3)], 128);
        let mut sent = SentTables::default();
        sent.record([(GUID, before, written.clone())]);
        assert_eq!(sent.believed(GUID, &written), written);
    }

    /// A lost drop pass: the zeroed block may still hold the entries it was to drop.
    #[test]
    fn an_unanswered_drop_keeps_the_entries_it_dropped() {
        let before = table(&[(1, 3), (2, 5), (70, 4)], 128);
        let written = table(&[(1, 3), (70, 4)], 128);
        let mut sent = SentTables::default();
        sent.record([(GUID, before.clone(), written.clone())]);
        let mut confirmed = written.clone();
        confirmed[..BLOCK].fill(0);
        let held = sent.believed(GUID, &confirmed);
        assert_eq!(held[..BLOCK], before[..BLOCK]);
        assert_eq!(
            held[BLOCK..],
            written[BLOCK..],
            "the answered block as confirmed"
        );
    }

    /// A lost install pass: the zeroed block may hold the new entries.
    #[test]
    fn an_unanswered_install_has_the_entries_it_wrote() {
        let before = table(&[(1, 3)], 64);
        let written = table(&[(1, 3), (2, 6)], 64);
        let mut sent = SentTables::default();
        sent.record([(GUID, before, written.clone())]);
        assert_eq!(sent.believed(GUID, &[0; 64]), written);
    }

    #[test]
    fn another_switch_is_not_affected() {
        let mut sent = SentTables::default();
        sent.record([(GUID, table(&[(1, 3)], 64), table(&[], 64))]);
        let zero = vec![0; 64];
        assert_eq!(sent.believed(GUID + 1, &zero), zero);
    }
}
