//! Physical comparison of two fabrics: which nodes (by GUID) and which cables (by GUID and port
//! at both ends) one has and the other lacks, and which cables run at another rate.
//!
//! This is the plain "is it the same fabric" check. Telling a technician which cable to move is
//! the job of `cabling verify`, which binds plan names and reasons about swaps.

use std::collections::BTreeMap;
use std::fmt;

use super::{Fabric, Guid, LinkSpeed, LinkWidth, PortRef};

/// A cable end identified physically.
type End = (Guid, u8);

/// What differs between an expected and an actual fabric; empty when they are the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FabricDiff {
    /// Expected nodes absent from the actual fabric (by name).
    pub missing_nodes: Vec<String>,
    /// Actual nodes the expected fabric does not have.
    pub unexpected_nodes: Vec<String>,
    /// Nodes present in both whose kind, description or port count differ.
    pub changed_nodes: Vec<String>,
    /// Expected cables absent from the actual fabric.
    pub missing_cables: Vec<String>,
    /// Actual cables the expected fabric does not have.
    pub unexpected_cables: Vec<String>,
    /// Cables in both whose rate differs.
    pub rate_changes: Vec<String>,
}

impl FabricDiff {
    /// Whether the fabrics are physically the same.
    pub fn is_empty(&self) -> bool {
        self == &FabricDiff::default()
    }
}

/// Compares `actual` against `expected`.
pub fn compare(expected: &Fabric, actual: &Fabric) -> FabricDiff {
    let mut diff = FabricDiff::default();
    for node in expected.nodes() {
        match actual.node_by_guid(node.guid).map(|id| actual.node(id)) {
            None => diff
                .missing_nodes
                .push(format!("{} ({})", node.name, node.guid)),
            Some(other) => {
                if (other.kind, &other.description, other.num_ports())
                    != (node.kind, &node.description, node.num_ports())
                {
                    diff.changed_nodes.push(format!(
                        "{} ({}): expected {:?} {:?} with {} ports, found {:?} {:?} with {} ports",
                        node.name,
                        node.guid,
                        node.kind,
                        node.description,
                        node.num_ports(),
                        other.kind,
                        other.description,
                        other.num_ports()
                    ));
                }
            }
        }
    }
    for node in actual.nodes() {
        if expected.node_by_guid(node.guid).is_none() {
            diff.unexpected_nodes
                .push(format!("{} ({})", node.name, node.guid));
        }
    }
    let (want, got) = (cables(expected), cables(actual));
    for (key, (rate, text)) in &want {
        match got.get(key) {
            None => diff.missing_cables.push(text.clone()),
            Some((other_rate, _)) if other_rate != rate => diff.rate_changes.push(format!(
                "{text}: expected {}, found {}",
                rate_text(*rate),
                rate_text(*other_rate)
            )),
            Some(_) => {}
        }
    }
    diff.unexpected_cables = got
        .iter()
        .filter(|(k, _)| !want.contains_key(*k))
        .map(|(_, (_, t))| t.clone())
        .collect();
    diff
}

type Rate = (Option<LinkWidth>, Option<LinkSpeed>);

fn rate_text((w, s): Rate) -> String {
    match (w, s) {
        (Some(w), Some(s)) => format!("{w}{s}"),
        _ => "unknown rate".into(),
    }
}

/// Cables keyed by their sorted physical ends, with rate and a readable description.
fn cables(fabric: &Fabric) -> BTreeMap<[End; 2], (Rate, String)> {
    let end = |e: PortRef| (fabric.node(e.node).guid, e.port);
    fabric
        .links()
        .iter()
        .map(|l| {
            let mut key = [end(l.a), end(l.b)];
            key.sort();
            let text = format!("{} -- {}", fabric.port_name(l.a), fabric.port_name(l.b));
            (key, ((l.width, l.speed), text))
        })
        .collect()
}

impl fmt::Display for FabricDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sections = [
            ("missing node", &self.missing_nodes),
            ("unexpected node", &self.unexpected_nodes),
            ("changed node", &self.changed_nodes),
            ("missing cable", &self.missing_cables),
            ("unexpected cable", &self.unexpected_cables),
            ("rate differs", &self.rate_changes),
        ];
        for (what, items) in sections {
            for item in items {
                writeln!(f, "{what}: {item}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn a_fabric_equals_itself_and_a_moved_cable_shows_twice() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        assert!(compare(&fabric, &fabric).is_empty());
        // The same fabric with one more port per node and the last cable's far end moved one
        // port up.
        let mut moved = crate::topology::Fabric::new("moved");
        for n in fabric.nodes() {
            let spec = crate::topology::NodeSpec {
                kind: n.kind,
                name: n.name.clone(),
                description: n.description.clone(),
                guid: n.guid,
                num_ports: n.num_ports() + 1,
                rack: n.rack,
            };
            moved.add_node(spec).unwrap();
        }
        for (i, l) in fabric.links().iter().enumerate() {
            let b = if i == fabric.links().len() - 1 {
                PortRef {
                    port: l.b.port + 1,
                    ..l.b
                }
            } else {
                l.b
            };
            moved.connect(l.a, b, l.width, l.speed).unwrap();
        }
        let diff = compare(&fabric, &moved);
        assert_eq!(diff.missing_cables.len(), 1);
        assert_eq!(diff.unexpected_cables.len(), 1);
        assert_eq!(
            diff.changed_nodes.len(),
            fabric.nodes().len(),
            "port counts differ everywhere"
        );
        assert!(diff.missing_nodes.is_empty() && diff.unexpected_nodes.is_empty());
    }
}
