//! Which node of a fabric a name means: the one place where a name given on the command line,
//! in a host list or as a schedule's rank is turned into a node, whatever the fabric was read
//! from (a topology spec, a fabric document, a live `ibnetdiscover` dump with or without a
//! node-name-map).
//!
//! A live dump names its nodes by NodeDescription (`srv0-0-0 HCA-1 mlfm-d3`), by a site's
//! node-name-map, or by ibnetdiscover id when the description is blank or shared, while users,
//! schedulers and the project's schedules name them by hostname or by the construction's names
//! (`srv0-0-0`). The rules, strongest first; the first rule that matches decides:
//!
//! 1. **node name**: the fabric's own name of the node (a generated name on a generated
//!    fabric; the map's name, the description or the id on a dump);
//! 2. **node-name-map**: the site's map gives a node GUID of the fabric that name;
//! 3. **GUID**: `0x` and the node GUID, or a port GUID of a host's port;
//! 4. **ibnetdiscover id**: `S-`, `H-` or `R-` and the node GUID in hex;
//! 5. **NodeDescription**: the whole description, blanks around it trimmed;
//! 6. **host part**: the name the description carries, as `ibhosts` and Slurm use it — the
//!    first word on hosts (`node17 HCA-1`), the name between `MF0;` and `:` on managed switches
//!    (`MF0;leaf0-0:MQM8700/U1`);
//! 7. **construction**: the construction the command knows (a schedule's MLFM, a topology
//!    spec) has a node of that name, and the fabric a node with its GUID — the project's ibsim
//!    net files keep the generated GUIDs, whatever the descriptions say.
//!
//! A rule that matches only nodes of the wrong kind (a switch where a host was asked for) does
//! not decide; weaker rules are tried, and if none finds a node of the right kind the error
//! says what the name is. A rule that matches several nodes is an error naming them — except
//! the host part shared by channel adapters whose descriptions differ (`node17 HCA-1`,
//! `node17 HCA-2`): one host with several HCAs, which is its first HCA in node order. A name
//! that matches nothing is an error listing the nearest names the fabric has.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::ParseError;
use super::ibnetdiscover::is_aggregation_node;
use super::node_name_map::NodeNameMap;
use crate::topology::{Fabric, Guid, NodeId, NodeKind};

/// Candidates listed when a name matches nothing.
const NEAREST: usize = 3;

/// How a name was matched to a node (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The fabric's own name of the node.
    Name,
    /// The node-name-map's name of the node's GUID.
    NodeNameMap,
    /// `0x` and the node GUID or a port GUID.
    Guid,
    /// The ibnetdiscover id (`H-0002c90300001234`).
    DumpId,
    /// The whole NodeDescription.
    Description,
    /// The name the NodeDescription carries (hostname).
    HostPart,
    /// A node of the construction with the node's GUID.
    Construction,
}

impl Rule {
    /// Every rule, strongest first: the order in which they are tried.
    pub const ALL: [Rule; 7] = [
        Rule::Name,
        Rule::NodeNameMap,
        Rule::Guid,
        Rule::DumpId,
        Rule::Description,
        Rule::HostPart,
        Rule::Construction,
    ];

    /// Words for notes and errors.
    pub fn text(self) -> &'static str {
        match self {
            Rule::Name => "node name",
            Rule::NodeNameMap => "node-name-map",
            Rule::Guid => "GUID",
            Rule::DumpId => "ibnetdiscover id",
            Rule::Description => "NodeDescription",
            Rule::HostPart => "NodeDescription's host part",
            Rule::Construction => "construction's GUID",
        }
    }
}

/// Which kind of node a name must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Any node.
    Any,
    /// A host: a channel adapter or router (an endpoint of traffic).
    Host,
    /// A switch.
    Switch,
}

impl Want {
    fn accepts(self, kind: NodeKind) -> bool {
        match self {
            Want::Any => true,
            Want::Host => kind != NodeKind::Switch,
            Want::Switch => kind == NodeKind::Switch,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Want::Any => "node",
            Want::Host => "host",
            Want::Switch => "switch",
        }
    }
}

/// A name resolved: the node and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// The node.
    pub node: NodeId,
    /// How it was found.
    pub rule: Rule,
}

/// The name a NodeDescription carries: `MF0;<name>:<model>/U1` on managed switches and
/// routers, else the first word (`<hostname> mlx5_0`, `<hostname> HCA-1`). Empty for a blank
/// description.
pub fn host_part(description: &str) -> &str {
    let d = description.trim();
    if let Some(rest) = d.strip_prefix("MF0;") {
        return rest.split(':').next().unwrap_or(rest).trim();
    }
    d.split_whitespace().next().unwrap_or("")
}

/// Resolves names to the nodes of one fabric (see the module documentation).
#[derive(Debug)]
pub struct NodeResolver<'a> {
    fabric: &'a Fabric,
    map: Option<&'a NodeNameMap>,
    construction: Option<&'a Fabric>,
    by_map_name: HashMap<&'a str, Vec<NodeId>>,
    by_description: HashMap<&'a str, Vec<NodeId>>,
    by_host_part: HashMap<&'a str, Vec<NodeId>>,
    by_port_guid: HashMap<Guid, NodeId>,
}

impl<'a> NodeResolver<'a> {
    /// Indexes `fabric`; `map` is the site's node-name-map, when one was given (whether or not
    /// the fabric was read with it).
    pub fn new(fabric: &'a Fabric, map: Option<&'a NodeNameMap>) -> Self {
        let mut by_map_name: HashMap<&str, Vec<NodeId>> = HashMap::new();
        if let Some(map) = map {
            for (guid, name) in map.iter() {
                if let Some(node) = fabric.node_by_guid(guid) {
                    by_map_name.entry(name).or_default().push(node);
                }
            }
        }
        let mut by_description: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut by_host_part: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut by_port_guid = HashMap::new();
        for (i, node) in fabric.nodes().iter().enumerate() {
            let id = NodeId(i as u32);
            let description = node.description.trim();
            // A SHARP aggregation node's description is the same in every switch, and its host
            // part ("Mellanox") names nothing.
            if !description.is_empty() && !is_aggregation_node(node) {
                by_description.entry(description).or_default().push(id);
                by_host_part
                    .entry(host_part(description))
                    .or_default()
                    .push(id);
            }
            if node.kind != NodeKind::Switch {
                for port in node.ports.iter().skip(1) {
                    by_port_guid.entry(port.guid).or_insert(id);
                }
            }
        }
        Self {
            fabric,
            map,
            construction: None,
            by_map_name,
            by_description,
            by_host_part,
            by_port_guid,
        }
    }

    /// Also resolves the names of `construction` (the fabric the command generated, e.g. the
    /// schedule's MLFM) through their node GUIDs.
    pub fn with_construction(mut self, construction: &'a Fabric) -> Self {
        self.construction = Some(construction);
        self
    }

    /// The node `name` names, of the kind `want`.
    ///
    /// # Errors
    /// No node of that kind matches, or the deciding rule matches several.
    pub fn resolve(&self, name: &str, want: Want) -> Result<Resolved, ResolveError> {
        let name = name.trim();
        let mut wrong_kind: Option<(NodeId, Rule)> = None;
        for rule in Rule::ALL {
            let found = self.matches(rule, name);
            if found.is_empty() {
                continue;
            }
            let fitting: Vec<NodeId> = found
                .iter()
                .copied()
                .filter(|&n| want.accepts(self.fabric.node(n).kind))
                .collect();
            match fitting.as_slice() {
                [] => {
                    wrong_kind.get_or_insert((found[0], rule));
                }
                &[node] => {
                    return Ok(Resolved {
                        node,
                        rule: self.label(rule, node, name),
                    });
                }
                several if rule == Rule::HostPart && self.one_host(several) => {
                    return Ok(Resolved {
                        node: several[0],
                        rule,
                    });
                }
                several => {
                    return Err(ResolveError::Ambiguous {
                        name: name.to_string(),
                        fabric: self.fabric.name.clone(),
                        rule: rule.text(),
                        nodes: several
                            .iter()
                            .map(|&n| self.fabric.node(n).name.clone())
                            .collect(),
                    });
                }
            }
        }
        if let Some((node, rule)) = wrong_kind {
            let kind = self.fabric.node(node).kind;
            return Err(ResolveError::WrongKind {
                name: name.to_string(),
                fabric: self.fabric.name.clone(),
                node: self.fabric.node(node).name.clone(),
                rule: rule.text(),
                kind: if kind == NodeKind::Switch {
                    "switch"
                } else {
                    "host"
                },
                want: want.text(),
            });
        }
        Err(ResolveError::Missing {
            name: name.to_string(),
            want: want.text(),
            fabric: self.fabric.name.clone(),
            looked: self.looked(),
            candidates: self.nearest(name, want),
        })
    }

    /// The nodes of every line of a host list (`(line, name)` as
    /// [`parse_hosts`](super::hostfile::parse_hosts) gives them).
    ///
    /// # Errors
    /// The first line whose name resolves to no host or to several, with its line number.
    pub fn resolve_lines(
        &self,
        lines: &[(usize, &str)],
        want: Want,
    ) -> Result<Vec<Resolved>, ParseError> {
        lines
            .iter()
            .map(|&(line, name)| {
                self.resolve(name, want)
                    .map_err(|e| ParseError::new(line, e.expected(), name))
            })
            .collect()
    }

    /// The nodes `rule` finds for `name`, in node order, without repeats.
    fn matches(&self, rule: Rule, name: &str) -> Vec<NodeId> {
        let fabric = self.fabric;
        let mut found: Vec<NodeId> = match rule {
            Rule::Name => fabric.node_by_name(name).into_iter().collect(),
            Rule::NodeNameMap => self.by_map_name.get(name).cloned().unwrap_or_default(),
            Rule::Guid => match name.parse::<Guid>() {
                Ok(guid) => fabric
                    .node_by_guid(guid)
                    .or_else(|| self.by_port_guid.get(&guid).copied())
                    .into_iter()
                    .collect(),
                Err(_) => Vec::new(),
            },
            Rule::DumpId => dump_id(name)
                .and_then(|(prefix, guid)| {
                    fabric
                        .node_by_guid(guid)
                        .filter(|&n| fabric.node(n).kind.id_prefix() == prefix)
                })
                .into_iter()
                .collect(),
            Rule::Description => self.by_description.get(name).cloned().unwrap_or_default(),
            Rule::HostPart => self.by_host_part.get(name).cloned().unwrap_or_default(),
            Rule::Construction => self
                .construction
                .and_then(|c| c.node_by_name(name).map(|n| c.node(n).guid))
                .and_then(|guid| fabric.node_by_guid(guid))
                .into_iter()
                .collect(),
        };
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The rule reported for a match: a node name that is the map's name counts as the map's.
    fn label(&self, rule: Rule, node: NodeId, name: &str) -> Rule {
        let guid = self.fabric.node(node).guid;
        if rule == Rule::Name && self.map.and_then(|m| m.get(guid)) == Some(name) {
            Rule::NodeNameMap
        } else {
            rule
        }
    }

    /// Whether nodes sharing a host part are one host's HCAs: all hosts, all descriptions
    /// different (`node17 HCA-1`, `node17 HCA-2`), not one default description shared.
    fn one_host(&self, nodes: &[NodeId]) -> bool {
        let mut descriptions: Vec<&str> = nodes
            .iter()
            .map(|&n| self.fabric.node(n).description.trim())
            .collect();
        descriptions.sort_unstable();
        let distinct = descriptions.windows(2).all(|w| w[0] != w[1]);
        distinct
            && nodes
                .iter()
                .all(|&n| self.fabric.node(n).kind != NodeKind::Switch)
    }

    /// The rules this resolver can use, in words.
    fn looked(&self) -> String {
        let mut out = String::from("node name, ");
        if self.map.is_some() {
            out.push_str("node-name-map name, ");
        }
        out.push_str("0x GUID, ibnetdiscover id, NodeDescription, its host part");
        if let Some(c) = self.construction {
            let _ = write!(out, ", name in {}", c.name);
        }
        out
    }

    /// The fabric's names nearest to `name` (edit distance, then alphabetical): node names,
    /// map names and host parts of nodes of the kind wanted.
    fn nearest(&self, name: &str, want: Want) -> Vec<String> {
        let mut keys: Vec<&str> = Vec::new();
        for node in self.fabric.nodes() {
            if !want.accepts(node.kind) {
                continue;
            }
            if is_aggregation_node(node) {
                continue;
            }
            keys.push(&node.name);
            let part = host_part(&node.description);
            if !part.is_empty() {
                keys.push(part);
            }
            if let Some(mapped) = self.map.and_then(|m| m.get(node.guid)) {
                keys.push(mapped);
            }
        }
        if let Some(c) = self.construction {
            keys.extend(
                c.nodes()
                    .iter()
                    .filter(|n| want.accepts(n.kind) && self.fabric.node_by_guid(n.guid).is_some())
                    .map(|n| n.name.as_str()),
            );
        }
        keys.sort_unstable();
        keys.dedup();
        let mut scored: Vec<(usize, &str)> = keys
            .into_iter()
            .map(|k| (strsim::levenshtein(name, k), k))
            .collect();
        scored.sort_unstable();
        scored
            .into_iter()
            .take(NEAREST)
            .map(|(_, k)| k.to_string())
            .collect()
    }
}

/// `S-`/`H-`/`R-` and 16 hex digits (an ibnetdiscover id): the kind prefix and the GUID.
fn dump_id(name: &str) -> Option<(char, Guid)> {
    let (prefix, hex) = name.split_once('-')?;
    let prefix = match prefix {
        "S" => 'S',
        "H" => 'H',
        "R" => 'R',
        _ => return None,
    };
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((prefix, Guid(u64::from_str_radix(hex, 16).ok()?)))
}

/// How many names each rule resolved, strongest rule first, as a note:
/// `36 by NodeDescription's host part, 2 by node name`.
pub fn summary(rules: impl IntoIterator<Item = Rule>) -> String {
    let mut counts: HashMap<Rule, usize> = HashMap::new();
    for rule in rules {
        *counts.entry(rule).or_default() += 1;
    }
    let parts: Vec<String> = Rule::ALL
        .iter()
        .filter_map(|r| counts.get(r).map(|n| format!("{n} by {}", r.text())))
        .collect();
    parts.join(", ")
}

mod adopt;
mod error;
#[cfg(test)]
mod tests;

pub use adopt::{AdoptError, adopt_names};
pub use error::ResolveError;
