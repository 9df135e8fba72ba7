//! `--schedule`: the all-to-all schedules `ibfabric a2a` builds, their ranks, and the MLFM
//! layer layout an MLFM schedule runs on when no tables are given.

use anyhow::{Context, bail};
use ibfabric::collectives::{self, MlfmSpine, Schedule};
use ibfabric::io::names::{self, NodeResolver, Want};
use ibfabric::io::node_name_map::NodeNameMap;
use ibfabric::routing::{LidTable, assign_lids};
use ibfabric::topology::mlfm::Mlfm;
use ibfabric::topology::{Construction, PortRef, TopologySpec};

use crate::simgrid::Routing;

/// Parses `key=value,…` after a scheme name.
fn parameters(spec: &str, rest: &str) -> anyhow::Result<Vec<(String, String)>> {
    rest.split(',')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .with_context(|| format!("--schedule {spec:?}: {kv:?} is not key=value"))
        })
        .collect()
}

/// The schedule `--schedule` names, and the MLFM it is for (when it is one).
pub fn schedule(spec: &str) -> anyhow::Result<(Schedule, Option<Mlfm>)> {
    let (scheme, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let params = parameters(spec, rest)?;
    let get = |key: &str| -> anyhow::Result<Option<u32>> {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| {
                v.parse()
                    .with_context(|| format!("--schedule {spec:?}: {key}={v:?} is not a number"))
            })
            .transpose()
    };
    let need = |key: &str| -> anyhow::Result<u32> {
        get(key)?.with_context(|| format!("--schedule {spec:?}: {scheme} needs {key}="))
    };
    match scheme {
        "mlfm" => {
            let spine = match params.iter().find(|(k, _)| k == "spine") {
                None => MlfmSpine::BySource,
                Some((_, v)) if v == "by-source" => MlfmSpine::BySource,
                Some((_, v)) if v == "by-destination" => MlfmSpine::ByDestination,
                Some((_, v)) => {
                    bail!("--schedule {spec:?}: spine={v:?} (by-source or by-destination)")
                }
            };
            let d = need("d")?;
            let s = collectives::mlfm(d, need("n")?, need("l")?, need("m")?, spine)?;
            Ok((s, Some(Mlfm::new(d)?)))
        }
        "lsft" => {
            let n = need("n")?;
            let s = match (get("k")?, get("m")?) {
                (None, None) => collectives::lsft_full(n)?,
                (Some(k), Some(m)) => collectives::lsft_partial(n, k, m)?,
                _ => bail!("--schedule {spec:?}: give both k= and m= (partial) or neither"),
            };
            Ok((s, None))
        }
        other => bail!("--schedule {spec:?}: unknown scheme {other:?} (mlfm or lsft)"),
    }
}

/// The routing of an MLFM schedule without --lfts: the MLFM layer layout on the construction.
pub fn mlfm_layout(fabric_spec: &str, mlfm: &Mlfm, schedule: &Schedule) -> anyhow::Result<Routing> {
    let spec: TopologySpec = fabric_spec.parse().with_context(|| {
        format!(
            "the MLFM layer layout needs --fabric mlfm:d={} (or give --lfts)",
            mlfm.d()
        )
    })?;
    if spec != (TopologySpec::Mlfm { d: mlfm.d() }) {
        bail!(
            "--schedule is for mlfm:d={}, --fabric is {}; give --fabric mlfm:d={} or --lfts",
            mlfm.d(),
            fabric_spec,
            mlfm.d()
        );
    }
    let mut fabric = mlfm.build();
    assign_lids(&mut fabric, schedule.layers.trailing_zeros() as u8)?;
    let lids = LidTable::from_fabric(&fabric)?;
    let spine = if schedule.layers > 1 {
        MlfmSpine::BySource
    } else {
        MlfmSpine::ByDestination
    };
    let columns = schedule_columns(schedule).unwrap_or(mlfm.columns());
    let tables = collectives::mlfm_layer_tables(mlfm, &fabric, &lids, columns, spine);
    let plural = if schedule.layers == 1 { "" } else { "s" };
    Ok(Routing {
        fabric,
        lids,
        tables,
        description: format!("MLFM layer layout, {} layer{plural}", schedule.layers),
    })
}

/// ℓ of an MLFM schedule, from its name `mlfm d=… n=… l=… m=…`.
fn schedule_columns(schedule: &Schedule) -> Option<u32> {
    schedule
        .name
        .split_whitespace()
        .find_map(|w| w.strip_prefix("l=")?.parse().ok())
}

/// The ranks of a schedule: its servers by name, resolved in the fabric as every name is (a
/// dump names them by NodeDescription or by the node-name-map `names`).
pub fn schedule_ranks(
    routing: &Routing,
    schedule: &Schedule,
    names: Option<&NodeNameMap>,
) -> anyhow::Result<Vec<PortRef>> {
    let fabric = &routing.fabric;
    let resolver = NodeResolver::new(fabric, names);
    let mut rules = Vec::with_capacity(schedule.ranks.len());
    let ranks = schedule
        .ranks
        .iter()
        .enumerate()
        .map(|(rank, name)| {
            let found = resolver
                .resolve(name, Want::Host)
                .with_context(|| format!("the schedule's rank {rank}"))?;
            rules.push(found.rule);
            crate::simgrid::endpoint_of(fabric, found.node)
                .with_context(|| format!("{name}: no port with a LID cabled to a switch"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    log::info!(
        "{}: the schedule's {} ranks found: {}",
        fabric.name,
        ranks.len(),
        names::summary(rules)
    );
    Ok(ranks)
}
