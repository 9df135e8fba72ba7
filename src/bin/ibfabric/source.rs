//! Where a fabric comes from: a topology spec (`slimfly:q=5`), a fabric document (YAML or JSON,
//! as `ibfabric topo` writes), a cabling plan (`plan.yaml` of `cabling plan`), or an
//! `ibnetdiscover` dump of a live fabric; and the forwarding tables programmed in it
//! (`opensm-lfts.dump` or `ibroute` output).

use std::path::Path;

use anyhow::{Context, bail};
use ibfabric::Fabric;
use ibfabric::cli::input;
use ibfabric::io::fabric_document::FabricDocument;
use ibfabric::io::ibnetdiscover;
use ibfabric::io::lfts;
use ibfabric::io::names::{self, NodeResolver, Want};
use ibfabric::io::node_name_map::NodeNameMap;
use ibfabric::plan::document::PlanDocument;
use ibfabric::routing::ForwardingTables;
use ibfabric::topology::NodeId;
use ibfabric::topology::TopologySpec;

/// Loads the fabric named by `source`: an existing file is read by its content, anything else
/// must be a topology spec.
pub fn load_fabric(source: &str, node_name_map: Option<&Path>) -> anyhow::Result<Fabric> {
    let map = node_name_map.map(read_node_name_map).transpose()?;
    read_fabric(source, map.as_ref())
}

/// [`load_fabric`], and the node-name-map read, for resolving names given later (ranks, host
/// lists) by the same map ([`NodeResolver`]).
pub fn load_fabric_with_map(
    source: &str,
    node_name_map: Option<&Path>,
) -> anyhow::Result<(Fabric, Option<NodeNameMap>)> {
    let map = node_name_map.map(read_node_name_map).transpose()?;
    Ok((read_fabric(source, map.as_ref())?, map))
}

/// Reads the fabric `source` names; a dump's nodes take the map's names.
fn read_fabric(source: &str, names: Option<&NodeNameMap>) -> anyhow::Result<Fabric> {
    let path = Path::new(source);
    if !path.exists() && !input::is_stdin(path) {
        let spec: TopologySpec = source
            .parse()
            .with_context(|| format!("{source:?} is neither a file nor a topology spec"))?;
        return Ok(spec.build()?);
    }
    let text = input::read_text(path)?;
    let source = &input::display_name(path);
    let start = text.trim_start();
    if start.starts_with('{') {
        let doc: FabricDocument = serde_json::from_str(&text)
            .with_context(|| format!("{source}: not a fabric document"))?;
        return doc.to_fabric().with_context(|| source.to_string());
    }
    if text.lines().any(|l| l == "racks:" || l == "steps:") {
        let doc: PlanDocument =
            yaml_serde::from_str(&text).with_context(|| format!("{source}: not a cabling plan"))?;
        let plan = doc.to_plan().with_context(|| source.to_string())?;
        return plan.to_fabric().with_context(|| source.to_string());
    }
    if start.starts_with("name:") || text.lines().any(|l| l == "nodes:") {
        let doc: FabricDocument = yaml_serde::from_str(&text)
            .with_context(|| format!("{source}: not a fabric document"))?;
        return doc.to_fabric().with_context(|| source.to_string());
    }
    let dump = ibnetdiscover::parse(&text, names).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    for warning in &dump.warnings {
        log::warn!("{source}: {warning}");
    }
    if dump.fabric.nodes().is_empty() {
        bail!("{source}: no nodes found (expected ibnetdiscover output or a fabric document)");
    }
    Ok(dump.fabric)
}

/// Reads a node-name-map file (`0x<guid> "name"` per line).
pub fn read_node_name_map(path: &Path) -> anyhow::Result<NodeNameMap> {
    let text = input::read_text(path)?;
    NodeNameMap::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", input::display_name(path)))
}

/// The hosts of a host list (`(line, name)` as `hostfile::parse_hosts` gives them), read from
/// `list` (its name in messages): every name resolved as names are everywhere
/// ([`NodeResolver`]); with `-v` a note says which rules found them.
pub fn resolve_hosts(
    resolver: &NodeResolver<'_>,
    lines: &[(usize, &str)],
    list: &str,
) -> anyhow::Result<Vec<NodeId>> {
    let resolved = resolver
        .resolve_lines(lines, Want::Host)
        .map_err(|e| anyhow::anyhow!("{list}: {e}"))?;
    log::info!(
        "{list}: {} hosts found: {}",
        resolved.len(),
        names::summary(resolved.iter().map(|r| r.rule))
    );
    Ok(resolved.into_iter().map(|r| r.node).collect())
}

/// Reads forwarding tables (opensm-lfts.dump or concatenated `ibroute` output) for `fabric`
/// (named `fabric_source` in messages); a fabric without LIDs takes them from the tables'
/// destination comments.
pub fn load_tables(
    fabric: &mut Fabric,
    fabric_source: &str,
    path: &Path,
) -> anyhow::Result<ForwardingTables> {
    let name = input::display_name(path);
    let text = input::read_text(path)?;
    let dump = lfts::parse(&text, fabric).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    for warning in &dump.warnings {
        log::warn!("{name}: {warning}");
    }
    if dump.switches == 0 {
        bail!("{name}: no forwarding table of a switch of {}", fabric.name);
    }
    if !has_lids(fabric) {
        let ports = lfts::apply_destination_lids(fabric, &dump.destinations)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if ports == 0 {
            bail!(
                "{fabric_source}: the fabric has no LIDs and {name} names no port of it; give an \
                 ibnetdiscover dump of the live fabric"
            );
        }
        log::info!("{fabric_source}: {ports} port LIDs taken from {name}");
    }
    Ok(dump.tables)
}

/// Whether any port of the fabric has a LID (a live fabric's dump, or tables applied).
pub fn has_lids(fabric: &Fabric) -> bool {
    fabric
        .nodes()
        .iter()
        .any(|n| n.ports.iter().any(|p| p.lid != 0))
}
