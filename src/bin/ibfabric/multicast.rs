//! The multicast forwarding tables (`ibroute -M` output or OpenSM's `opensm.mcfdbs`) and the
//! groups' SLs (`saquery -g` output or `MLID SL` lines) that `deadlock-check` and `analyze`
//! read.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;
use ibfabric::Fabric;
use ibfabric::cli::input;
use ibfabric::io::mfts;
use ibfabric::routing::MulticastTables;

/// Reads the multicast forwarding tables of `fabric` from `path`.
pub fn load_mfts(fabric: &Fabric, path: &Path) -> anyhow::Result<MulticastTables> {
    let name = input::display_name(path);
    let dump = mfts::parse(&input::read_text(path)?, fabric)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    for warning in &dump.warnings {
        log::warn!("{name}: {warning}");
    }
    if dump.switches == 0 {
        bail!(
            "{name}: no multicast forwarding table of a switch of {} (expected `ibroute -M` \
             output or opensm.mcfdbs)",
            fabric.name
        );
    }
    log::info!(
        "{name}: {} groups, {} entries on {} switches",
        dump.tables.mlids().len(),
        dump.entries,
        dump.switches
    );
    Ok(dump.tables)
}

/// Reads the groups' SLs from `path`.
pub fn load_group_sls(path: &Path) -> anyhow::Result<BTreeMap<u16, u8>> {
    let name = input::display_name(path);
    let sls = mfts::group_sls(&input::read_text(path)?)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?
        .sls;
    if sls.is_empty() {
        bail!("{name}: no group SL in it (expected `MLID SL` lines or `saquery -g` output)");
    }
    Ok(sls)
}
