//! A discovered fabric read as the construction it was cabled from: its nodes take the names
//! the construction (and so the project's schedules and layouts) gives them.

use std::collections::HashMap;

use super::{NodeResolver, ResolveError, Resolved, Rule, Want};
use crate::io::NodeNameMap;
use crate::topology::{Fabric, NodeId};

/// Gives the nodes of `fabric` that `names` name (names of `construction`, e.g. a schedule's
/// ranks) those names: the discovered fabric read as the construction it was cabled from, so
/// that schedules and layouts written with the construction's names run on it. Every name is
/// resolved (kind `want`) before any node is renamed. Returns the rule that found each name.
///
/// # Errors
/// A name that resolves to no node or to several, two names that resolve to the same node, or
/// a name already taken by a node of another kind.
pub fn adopt_names<S: AsRef<str>>(
    fabric: &mut Fabric,
    construction: &Fabric,
    map: Option<&NodeNameMap>,
    names: &[S],
    want: Want,
) -> Result<Vec<Rule>, AdoptError> {
    let resolved: Vec<Resolved> = {
        let resolver = NodeResolver::new(fabric, map).with_construction(construction);
        names
            .iter()
            .map(|n| resolver.resolve(n.as_ref(), want))
            .collect::<Result<_, ResolveError>>()?
    };
    let mut claimed: HashMap<NodeId, usize> = HashMap::new();
    for (i, r) in resolved.iter().enumerate() {
        if let Some(&first) = claimed.get(&r.node) {
            return Err(AdoptError::Shared {
                first: names[first].as_ref().to_string(),
                second: names[i].as_ref().to_string(),
                node: fabric.node(r.node).name.clone(),
            });
        }
        claimed.insert(r.node, i);
    }
    for (name, r) in names.iter().zip(&resolved) {
        let name = name.as_ref();
        fabric
            .rename_node(r.node, name)
            .map_err(|e| AdoptError::Taken(name.to_string(), e.to_string()))?;
    }
    Ok(resolved.into_iter().map(|r| r.rule).collect())
}

/// Why a fabric cannot take its construction's names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdoptError {
    /// A construction node resolves to no node, or to several.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// Two construction nodes resolve to one node.
    #[error("{first:?} and {second:?} both name {node}")]
    Shared {
        /// The first construction node.
        first: String,
        /// The second.
        second: String,
        /// The fabric's node.
        node: String,
    },
    /// The name is another node's.
    #[error("cannot name a node {0:?}: {1}")]
    Taken(String, String),
}
