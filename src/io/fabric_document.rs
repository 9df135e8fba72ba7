//! The fabric as a document (YAML or JSON): what `ibfabric topo --format yaml|json` writes and
//! what tools read back as a topology source.
//!
//! The document is its own serde type rather than derives on the model, so the file format is
//! a deliberate interface: GUIDs are `0x`-prefixed hex strings (JSON numbers lose precision past
//! 2^53), cables are listed once with both ends by node name and port, and the rate is the
//! ibnetdiscover token (`4xEDR`).

use serde::{Deserialize, Serialize};

use crate::topology::{Fabric, FabricError, NodeKind, NodeSpec, PortRef};

/// A whole fabric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricDocument {
    /// The fabric's name.
    pub name: String,
    /// Counts, for readers; not checked when the document is read back.
    #[serde(default)]
    pub summary: Option<DocumentSummary>,
    /// Switches, hosts and routers.
    pub nodes: Vec<NodeEntry>,
    /// Cables, each once.
    pub cables: Vec<CableEntry>,
}

/// Counts of what a document holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentSummary {
    /// Switches.
    pub switches: usize,
    /// Channel adapters.
    pub hosts: usize,
    /// Switch-to-switch cables.
    pub switch_cables: usize,
    /// Cables to hosts and routers.
    pub host_cables: usize,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// Unique name.
    pub name: String,
    /// `switch`, `ca` or `router`.
    pub kind: KindEntry,
    /// Node GUID as `0x` + 16 hex digits.
    pub guid: String,
    /// NodeDescription.
    pub description: String,
    /// Number of ports.
    pub ports: u8,
    /// Rack, when the construction places the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<u32>,
}

/// Node kind in documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KindEntry {
    /// A switch.
    Switch,
    /// A channel adapter.
    Ca,
    /// A router.
    Router,
}

/// One cable: `a` and `b` are `node[port]`-style ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CableEntry {
    /// First end's node name.
    pub a: String,
    /// First end's port.
    pub a_port: u8,
    /// Second end's node name.
    pub b: String,
    /// Second end's port.
    pub b_port: u8,
    /// Rate as ibnetdiscover prints it (`4xEDR`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
}

/// Why a document does not describe a valid fabric.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// A GUID that is not `0x` + hex.
    #[error("node {node}: GUID {guid:?} is not 0x followed by hex digits")]
    BadGuid {
        /// The node.
        node: String,
        /// The text.
        guid: String,
    },
    /// A cable naming a node that the document does not list.
    #[error("cable {index}: no node named {name:?}")]
    UnknownNode {
        /// Cable number, from 1.
        index: usize,
        /// The name.
        name: String,
    },
    /// A rate that is not width + speed.
    #[error("cable {index}: rate {rate:?} is not like 4xEDR")]
    BadRate {
        /// Cable number, from 1.
        index: usize,
        /// The text.
        rate: String,
    },
    /// The nodes and cables contradict each other.
    #[error(transparent)]
    Fabric(#[from] FabricError),
}

impl FabricDocument {
    /// The document of `fabric`.
    pub fn from_fabric(fabric: &Fabric) -> Self {
        let s = fabric.summary();
        let nodes = fabric
            .nodes()
            .iter()
            .map(|n| NodeEntry {
                name: n.name.clone(),
                kind: match n.kind {
                    NodeKind::Switch => KindEntry::Switch,
                    NodeKind::Ca => KindEntry::Ca,
                    NodeKind::Router => KindEntry::Router,
                },
                guid: n.guid.to_string(),
                description: n.description.clone(),
                ports: n.num_ports(),
                rack: n.rack,
            })
            .collect();
        let name = |end: PortRef| fabric.node(end.node).name.clone();
        let cables = fabric
            .links()
            .iter()
            .map(|l| CableEntry {
                a: name(l.a),
                a_port: l.a.port,
                b: name(l.b),
                b_port: l.b.port,
                rate: l.width.zip(l.speed).map(|(w, s)| format!("{w}{s}")),
            })
            .collect();
        Self {
            name: fabric.name.clone(),
            summary: Some(DocumentSummary {
                switches: s.switches,
                hosts: s.hosts,
                switch_cables: s.switch_links,
                host_cables: s.host_links + s.routers,
            }),
            nodes,
            cables,
        }
    }

    /// The fabric this document describes.
    ///
    /// # Errors
    /// Bad GUIDs or rates, cables to unknown nodes or ports, duplicate names.
    pub fn to_fabric(&self) -> Result<Fabric, DocumentError> {
        let mut fabric = Fabric::new(self.name.clone());
        for n in &self.nodes {
            let guid = n.guid.parse().map_err(|_| DocumentError::BadGuid {
                node: n.name.clone(),
                guid: n.guid.clone(),
            })?;
            let kind = match n.kind {
                KindEntry::Switch => NodeKind::Switch,
                KindEntry::Ca => NodeKind::Ca,
                KindEntry::Router => NodeKind::Router,
            };
            fabric.add_node(NodeSpec {
                kind,
                name: n.name.clone(),
                description: n.description.clone(),
                guid,
                num_ports: n.ports,
                rack: n.rack,
            })?;
        }
        for (i, c) in self.cables.iter().enumerate() {
            let end = |name: &str, port| {
                fabric
                    .node_by_name(name)
                    .map(|node| PortRef { node, port })
                    .ok_or_else(|| DocumentError::UnknownNode {
                        index: i + 1,
                        name: name.into(),
                    })
            };
            let (a, b) = (end(&c.a, c.a_port)?, end(&c.b, c.b_port)?);
            let (width, speed) = match &c.rate {
                None => (None, None),
                Some(rate) => {
                    let bad = || DocumentError::BadRate {
                        index: i + 1,
                        rate: rate.clone(),
                    };
                    let split = rate.find(['x', 'X']).ok_or_else(bad)? + 1;
                    let width = rate[..split].parse().map_err(|_| bad())?;
                    let speed = rate[split..].parse().map_err(|_| bad())?;
                    (Some(width), Some(speed))
                }
            };
            fabric.connect(a, b, width, speed)?;
        }
        Ok(fabric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn document_round_trips_through_yaml_and_json() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        let doc = FabricDocument::from_fabric(&fabric);
        let yaml = yaml_serde::to_string(&doc).unwrap();
        let json = serde_json::to_string(&doc).unwrap();
        for back in [
            yaml_serde::from_str::<FabricDocument>(&yaml).unwrap(),
            serde_json::from_str(&json).unwrap(),
        ] {
            let again = back.to_fabric().unwrap();
            assert_eq!(
                FabricDocument {
                    summary: None,
                    ..FabricDocument::from_fabric(&again)
                },
                FabricDocument {
                    summary: None,
                    ..doc.clone()
                }
            );
        }
    }

    #[test]
    fn bad_documents_name_what_is_wrong() {
        let doc = |cables: &str| {
            format!(
                "name: t\nnodes:\n- {{name: s, kind: switch, guid: '0x1', description: d, ports: 2}}\ncables:\n{cables}"
            )
        };
        let read = |text: &str| {
            yaml_serde::from_str::<FabricDocument>(text)
                .unwrap()
                .to_fabric()
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            read(&doc("- {a: s, a_port: 1, b: x, b_port: 1}")),
            "cable 1: no node named \"x\""
        );
        assert_eq!(
            read(&doc("- {a: s, a_port: 1, b: s, b_port: 3}")),
            "s has no port 3 (ports 1..=2)"
        );
        assert_eq!(
            read(&doc("- {a: s, a_port: 1, b: s, b_port: 2, rate: fast}")),
            "cable 1: rate \"fast\" is not like 4xEDR"
        );
    }
}
