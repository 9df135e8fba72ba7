//! `ibfabric deadlock-check --from OLD`: the check of a change from the tables a fabric held to
//! the tables written over them — every order in which a subnet manager may write them, as
//! packets meet some switches before and others after their update.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ibfabric::Fabric;
use ibfabric::deadlock::verify::{After, Before, Multicast, TransitionVerdict, verify_transition};
use ibfabric::deadlock::{PathSl, RouteSls, Sl2VlTables, VerifyOptions};
use ibfabric::routing::{ForwardingTables, LidTable, MulticastTables};

use crate::multicast::load_group_sls;

/// The tables before and after a change, on the fabric as it is now.
pub struct Change<'c> {
    pub fabric: &'c Fabric,
    pub lids: &'c LidTable,
    pub old_tables: &'c ForwardingTables,
    pub old_sl2vl: &'c Sl2VlTables,
    pub tables: &'c ForwardingTables,
    pub sl2vl: &'c Sl2VlTables,
    pub path_sl: &'c dyn PathSl,
}

impl Change<'_> {
    /// Checks the change with every route on every SL: a client may hold a path SL from before
    /// the change or after it, and only "whatever the SL" covers both. `mfts` (the new
    /// multicast tables and the file of the groups' SLs) and `old_mfts` add the groups, each
    /// switch replicating by its old or new entry (the new one when `old_mfts` is `None`).
    pub fn check(
        &self,
        mfts: Option<(&MulticastTables, Option<&PathBuf>)>,
        old_mfts: Option<&MulticastTables>,
        default_sl: u8,
        options: &VerifyOptions,
    ) -> anyhow::Result<TransitionVerdict> {
        let options = VerifyOptions {
            sls: RouteSls::EverySl,
            ..options.clone()
        };
        let group_sls = match mfts.and_then(|(_, file)| file) {
            Some(file) => load_group_sls(file)?,
            None => BTreeMap::new(),
        };
        let multicast = mfts.map(|(tables, _)| Multicast {
            tables,
            sls: &group_sls,
            default_sl,
        });
        let before = Before {
            tables: self.old_tables,
            sl2vl: self.old_sl2vl,
            multicast: old_mfts.or(mfts.map(|(tables, _)| tables)),
        };
        let after = After {
            tables: self.tables,
            path_sl: self.path_sl,
            sl2vl: self.sl2vl,
            multicast: multicast.as_ref(),
        };
        Ok(verify_transition(
            self.fabric,
            self.lids,
            &before,
            &after,
            &options,
        ))
    }
}
