//! Several `ibnetdiscover` dumps as one fabric, by node GUID.
//!
//! Mid-wiring, a fabric falls apart into islands that no single dump can see (discovery never
//! crosses a host); a technician takes one dump per island. Nodes are merged by node GUID (the
//! first dump's description and port count win), cables by their ends. A cable a dump saw from
//! one end only, because its far node is in no dump ([`Dump::dangling`]), is kept: the far node
//! becomes a node with the GUID, kind and description the near end printed for it, and as many
//! ports as the highest port seen on it.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::io::Dump;
use crate::io::ibnetdiscover::node_id;
use crate::topology::{
    Fabric, FabricError, Guid, LinkSpeed, LinkWidth, NodeId, NodeKind, NodeSpec, PortRef,
};

/// The merged fabric and what did not fit.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Every node and cable of every dump. Named `merged`.
    pub fabric: Fabric,
    /// Conflicts between dumps (one port cabled differently), one sentence each.
    pub warnings: Vec<String>,
}

/// Why the dumps could not be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// A node's name is another node's, and so is its ibnetdiscover id, which would have
    /// replaced it (node descriptions and node-name-maps are free text).
    #[error(
        "node {guid} cannot be named: {name:?} and its id {fallback:?} both name other nodes; \
         give them distinct names in the node-name-map"
    )]
    NameTaken {
        /// The node.
        guid: Guid,
        /// The name the dump gave it.
        name: String,
        /// Its ibnetdiscover id.
        fallback: String,
    },
    /// A node the fabric refused (such as a node without ports).
    #[error(transparent)]
    Fabric(#[from] FabricError),
}

/// Merges dumps by node GUID. Where two dumps disagree on a port's cable the earlier dump wins,
/// with a warning. A node whose name another node has already is named by its ibnetdiscover
/// id.
///
/// # Errors
/// A node whose name and id both name other nodes; a node the fabric refuses.
pub fn merge(dumps: &[Dump]) -> Result<Merged, MergeError> {
    let mut fabric = Fabric::new("merged");
    let mut warnings = Vec::new();
    let mut by_guid: HashMap<Guid, NodeId> = HashMap::new();
    let mut names: HashSet<String> = HashSet::new();
    let mut add = |fabric: &mut Fabric, by_guid: &mut HashMap<Guid, NodeId>, spec: NodeSpec| {
        let mut spec = spec;
        if !names.insert(spec.name.clone()) {
            let fallback = node_id(spec.kind, spec.guid);
            if !names.insert(fallback.clone()) {
                return Err(MergeError::NameTaken {
                    guid: spec.guid,
                    name: spec.name,
                    fallback,
                });
            }
            spec.name = fallback;
        }
        let guid = spec.guid;
        let id = fabric.add_node(spec)?;
        by_guid.insert(guid, id);
        Ok(id)
    };
    for (d, dump) in dumps.iter().enumerate() {
        for node in dump.fabric.nodes() {
            if let Some(&existing) = by_guid.get(&node.guid) {
                if fabric.node(existing).num_ports() < node.num_ports() {
                    warnings.push(format!(
                        "dump {}: {} has {} ports, {} in an earlier dump; keeping {}",
                        d + 1,
                        node_id(node.kind, node.guid),
                        node.num_ports(),
                        fabric.node(existing).num_ports(),
                        fabric.node(existing).num_ports()
                    ));
                }
                continue;
            }
            let id = add(
                &mut fabric,
                &mut by_guid,
                NodeSpec {
                    kind: node.kind,
                    name: node.name.clone(),
                    description: node.description.clone(),
                    guid: node.guid,
                    num_ports: node.num_ports(),
                    rack: None,
                },
            )?;
            let merged = fabric.node_mut(id);
            merged.system_guid = node.system_guid;
            merged.vendor_id = node.vendor_id;
            merged.device_id = node.device_id;
            for (to, from) in merged.ports.iter_mut().zip(&node.ports) {
                to.guid = from.guid;
                to.lid = from.lid;
                to.lmc = from.lmc;
            }
        }
    }
    // Far ends that no dump holds: nodes known only from their neighbours' port lines.
    let mut ghosts: BTreeMap<Guid, (NodeKind, String, u8)> = BTreeMap::new();
    for dump in dumps {
        for c in &dump.dangling {
            if by_guid.contains_key(&c.peer_guid) {
                continue;
            }
            let ghost = ghosts.entry(c.peer_guid).or_insert((
                c.peer_kind.unwrap_or(NodeKind::Switch),
                c.peer_desc.clone(),
                1,
            ));
            ghost.2 = ghost.2.max(c.peer_port);
        }
    }
    for (guid, (kind, description, ports)) in ghosts {
        add(
            &mut fabric,
            &mut by_guid,
            NodeSpec {
                kind,
                name: node_id(kind, guid),
                description,
                guid,
                num_ports: ports,
                rack: None,
            },
        )?;
    }
    for (d, dump) in dumps.iter().enumerate() {
        let map = |p: PortRef| PortRef {
            node: by_guid[&dump.fabric.node(p.node).guid],
            port: p.port,
        };
        for link in dump.fabric.links() {
            connect(
                &mut fabric,
                &mut warnings,
                d,
                [map(link.a), map(link.b)],
                (link.width, link.speed),
            );
        }
    }
    for (d, dump) in dumps.iter().enumerate() {
        for c in &dump.dangling {
            let a = PortRef {
                node: by_guid[&c.node_guid],
                port: c.port,
            };
            let b = PortRef {
                node: by_guid[&c.peer_guid],
                port: c.peer_port,
            };
            if b.port == 0 || b.port > fabric.node(b.node).num_ports() {
                warnings.push(format!(
                    "dump {} line {}: {} → port {} of {}, which has {} ports; not merged",
                    d + 1,
                    c.line,
                    fabric.port_name(a),
                    c.peer_port,
                    fabric.node(b.node).name,
                    fabric.node(b.node).num_ports()
                ));
                continue;
            }
            if let Some(guid) = c.peer_port_guid {
                let node = fabric.node_mut(b.node);
                if node.kind != NodeKind::Switch {
                    node.ports[usize::from(b.port)].guid = guid;
                }
            }
            connect(&mut fabric, &mut warnings, d, [a, b], (c.width, c.speed));
        }
    }
    Ok(Merged { fabric, warnings })
}

/// Adds a cable unless the same cable is already there; a conflicting one is left out with a
/// warning.
fn connect(
    fabric: &mut Fabric,
    warnings: &mut Vec<String>,
    dump: usize,
    [a, b]: [PortRef; 2],
    (width, speed): (Option<LinkWidth>, Option<LinkSpeed>),
) {
    if fabric.peer(a) == Some(b) {
        return;
    }
    if let Err(err) = fabric.connect(a, b, width, speed) {
        warnings.push(format!(
            "dump {}: cable {} – {} not merged: {err}",
            dump + 1,
            fabric.port_name(a),
            fabric.port_name(b)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::ibnetdiscover;

    #[test]
    fn islands_merge_into_one_fabric_and_shared_cables_count_once() {
        use crate::topology::Construction;
        let fabric = crate::topology::slimfly::SlimFly::new(5, None)
            .unwrap()
            .build();
        let text = ibnetdiscover::write(&fabric);
        let whole = ibnetdiscover::parse(&text, None).unwrap();
        let merged = merge(&[whole.clone(), whole.clone()]).unwrap();
        assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
        assert_eq!(merged.fabric.summary(), whole.fabric.summary());
        assert_eq!(merge(&[]).unwrap().fabric.nodes().len(), 0);
    }

    #[test]
    fn cables_seen_from_one_end_keep_their_far_node() {
        // A dump that lost the far switch's block: its cable dangles and the far switch is
        // known by GUID, kind and description only.
        let text = "Switch\t8 \"S-0000000000000001\"\t\t# \"MF0;a:X/U1\" enhanced port 0 lid 0 lmc 0\n\
                    [3]\t\"S-0000000000000002\"[5]\t\t# \"MF0;b:X/U1\" lid 0 4xEDR\n";
        let dump = ibnetdiscover::parse(text, None).unwrap();
        assert_eq!(dump.dangling.len(), 1);
        let merged = merge(&[dump]).unwrap();
        let f = &merged.fabric;
        let b = f.node_by_guid(Guid(2)).unwrap();
        assert_eq!(f.node(b).description, "MF0;b:X/U1");
        assert_eq!(f.node(b).num_ports(), 5);
        assert_eq!(
            f.peer(PortRef { node: b, port: 5 }),
            Some(PortRef {
                node: f.node_by_guid(Guid(1)).unwrap(),
                port: 3
            })
        );
    }

    /// A one-switch dump: switch `guid` described `description`, with a cable from port 1 to
    /// port `peer_port` of switch `peer` (described `peer_description`), which no dump holds.
    fn lone_switch(guid: u64, description: &str, peer: u64, peer_description: &str) -> Dump {
        let text = format!(
            "Switch\t8 \"S-{guid:016x}\"\t\t# \"{description}\" enhanced port 0 lid 0 lmc 0\n\
             [1]\t\"S-{peer:016x}\"[2]\t\t# \"{peer_description}\" lid 0 4xEDR\n"
        );
        ibnetdiscover::parse(&text, None).unwrap()
    }

    #[test]
    fn a_node_named_like_another_takes_its_id() {
        let first = lone_switch(1, "spine", 9, "x");
        let second = lone_switch(2, "spine", 9, "x");
        let merged = merge(&[first, second]).unwrap();
        let f = &merged.fabric;
        let second = f.node_by_guid(Guid(2)).unwrap();
        assert_eq!(f.node(second).name, node_id(NodeKind::Switch, Guid(2)));
    }

    #[test]
    fn a_node_whose_name_and_id_are_both_taken_is_an_error_not_a_panic() {
        // Switch 1 is described as switch 2's id, and switch 2 as well: switch 2 can have
        // neither name.
        let id_of_2 = node_id(NodeKind::Switch, Guid(2));
        let dumps = [
            lone_switch(1, &id_of_2, 9, "x"),
            lone_switch(2, &id_of_2, 9, "x"),
        ];
        assert_eq!(
            merge(&dumps).unwrap_err(),
            MergeError::NameTaken {
                guid: Guid(2),
                name: id_of_2.clone(),
                fallback: id_of_2,
            }
        );
    }

    #[test]
    fn a_far_node_whose_id_names_a_dumped_node_is_an_error_not_a_panic() {
        // Switch 1 is described as the id of switch 2, which only its cable shows.
        let id_of_2 = node_id(NodeKind::Switch, Guid(2));
        let dump = lone_switch(1, &id_of_2, 2, "far");
        let err = merge(&[dump]).unwrap_err();
        assert!(
            matches!(&err, MergeError::NameTaken { guid, .. } if *guid == Guid(2)),
            "{err}"
        );
    }
}
