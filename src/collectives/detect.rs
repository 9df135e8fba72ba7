//! Recognising an MLFM in a discovered fabric, so that the layer layout (which finds leaves,
//! spines and servers by their construction names and ports) can route a subnet whose nodes
//! are named by GUID.
//!
//! The cabling says everything when it follows the MLFM port plan (what `cabling plan mlfm`
//! wires, see [`crate::topology::mlfm`]): a spine's port 2i + 1 or 2i + 2 gives the layer i of
//! the leaf on it and whether that leaf is the spine's lower or higher column, and leaf (i, j)
//! is the higher column on exactly j of its d spines. From that every leaf, spine and server
//! gets its name, and the whole cabling is checked against the construction: a fabric that is
//! not an MLFM, or not cabled by its plan, is refused with the first difference found.

use crate::topology::mlfm::Mlfm;
use crate::topology::{Fabric, NodeId, NodeSpec, PortRef};

/// Why a fabric is not recognised as an MLFM (cabled by the MLFM port plan).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an MLFM cabled by its port plan: {0}")]
pub struct NotMlfm(pub String);

/// An MLFM found in a fabric.
#[derive(Debug, Clone)]
pub struct DetectedMlfm {
    /// The construction.
    pub mlfm: Mlfm,
    /// The fabric with the construction's names (`leaf<i>-<j>`, `spine<j0>-<j1>`,
    /// `srv<i>-<j>-<k>`): the same node ids, ports, GUIDs, LIDs and cables as the fabric it
    /// was found in, so tables made on it are tables of that fabric.
    pub named: Fabric,
}

/// What a switch is in the construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Leaf { i: u32, j: u32 },
    Spine { j0: u32, j1: u32 },
}

/// Recognises `fabric` as an MLFM cabled by the port plan: 3d(d + 1)/2 switches, d(d + 1)
/// leaves with their d spine cables on ports d + 1..=2d, servers on ports 1..=d, and every
/// leaf–spine cable where the construction has it. Servers may be missing (a host that is
/// down); every other difference is refused.
///
/// # Errors
/// The first difference from an MLFM, naming the switch and port.
pub fn detect_mlfm(fabric: &Fabric) -> Result<DetectedMlfm, NotMlfm> {
    let err = |s: String| Err(NotMlfm(s));
    let switches: Vec<NodeId> = fabric.switches().collect();
    let n = switches.len();
    let Some(d) = (1..=127u32).find(|&d| 3 * d as usize * (d as usize + 1) / 2 == n) else {
        return err(format!(
            "{n} switches (an MLFM of 2d-port switches has 3d(d + 1)/2: 3, 9, 18, 30, ...)"
        ));
    };
    let mlfm = Mlfm::new(d).map_err(|e| NotMlfm(e.to_string()))?;
    let name = |id: NodeId| fabric.node(id).name.clone();
    let switch_cables = |id: NodeId| -> Vec<(u8, PortRef)> {
        fabric
            .neighbours(id)
            .filter(|(_, p)| fabric.node(p.node).is_switch())
            .collect()
    };
    // Leaves: d switch cables, on ports d + 1..=2d, all into spine ports of one layer.
    let mut role: Vec<Option<Role>> = vec![None; fabric.nodes().len()];
    for &s in &switches {
        let cables = switch_cables(s);
        if cables.len() == 2 * d as usize {
            continue; // a spine; named from its leaves below
        }
        if cables.len() != d as usize {
            return err(format!(
                "switch {} has {} switch cables (a leaf has d = {d}, a spine 2d = {})",
                name(s),
                cables.len(),
                2 * d
            ));
        }
        let mut layer = None;
        let mut higher = 0;
        for &(port, peer) in &cables {
            if u32::from(port) <= d || u32::from(port) > 2 * d {
                return err(format!(
                    "leaf {} has a switch cable on port {port} (the plan puts its spines on \
                     ports {}..={})",
                    name(s),
                    d + 1,
                    2 * d
                ));
            }
            let q = u32::from(peer.port);
            if q == 0 || q > 2 * d {
                return err(format!(
                    "leaf {} port {port} is cabled to port {q} of {} (spine ports are 1..={})",
                    name(s),
                    name(peer.node),
                    2 * d
                ));
            }
            let i = (q - 1) / 2;
            if *layer.get_or_insert(i) != i {
                return err(format!(
                    "leaf {} is cabled to spine ports of layers {} and {i}",
                    name(s),
                    layer.unwrap_or(i)
                ));
            }
            higher += u32::from(q % 2 == 0);
        }
        role[s.index()] = Some(Role::Leaf {
            i: layer.unwrap_or(0),
            j: higher,
        });
    }
    // Spines: the columns of the leaves on their ports 1 and 2.
    for &s in &switches {
        if role[s.index()].is_some() {
            continue;
        }
        let column = |port: u8| -> Result<u32, NotMlfm> {
            let peer = fabric.peer(PortRef { node: s, port });
            match peer.and_then(|p| role[p.node.index()]) {
                Some(Role::Leaf { j, .. }) => Ok(j),
                _ => Err(NotMlfm(format!(
                    "spine {} has no leaf on port {port}",
                    name(s)
                ))),
            }
        };
        let (j0, j1) = (column(1)?, column(2)?);
        if j0 >= j1 {
            return err(format!(
                "spine {} has the leaf of column {j0} on port 1 and of column {j1} on port 2 \
                 (the plan puts the lower column on the odd ports)",
                name(s)
            ));
        }
        role[s.index()] = Some(Role::Spine { j0, j1 });
    }
    // Every switch named once, and every leaf port where the construction cables it.
    let mut leaf_at = vec![None; mlfm.leaves()];
    let mut spine_at = vec![None; mlfm.spines()];
    for &s in &switches {
        let slot = match role[s.index()] {
            Some(Role::Leaf { i, j }) if j <= d => &mut leaf_at[mlfm.leaf_index(i, j)],
            Some(Role::Spine { j0, j1 }) if j1 <= d => &mut spine_at[mlfm.spine_position(j0, j1)],
            _ => return err(format!("switch {} fits no place of the MLFM", name(s))),
        };
        if let Some(other) = slot.replace(s) {
            return err(format!(
                "switches {} and {} both take the place of {}",
                name(other),
                name(s),
                role_name(role[s.index()].expect("set above"))
            ));
        }
    }
    for i in 0..d {
        for j in 0..mlfm.columns() {
            let leaf = leaf_at[mlfm.leaf_index(i, j)].expect("every place is taken");
            for o in 1..=d {
                let other = (j + o) % mlfm.columns();
                let (j0, j1) = (j.min(other), j.max(other));
                let spine = spine_at[mlfm.spine_position(j0, j1)].expect("every place is taken");
                let port = mlfm.leaf_port_to_spine(j, other) as u8;
                let expected = PortRef {
                    node: spine,
                    port: mlfm.spine_port_to_leaf((j0, j1), i, j) as u8,
                };
                let found = fabric.peer(PortRef { node: leaf, port });
                if found != Some(expected) {
                    return err(format!(
                        "leaf {} (leaf{i}-{j}) port {port} is cabled to {}, the plan has {} \
                         (spine{j0}-{j1}) port {}",
                        name(leaf),
                        found.map_or("nothing".into(), |p| fabric.port_name(p)),
                        name(spine),
                        expected.port
                    ));
                }
            }
        }
    }
    let mut names: Vec<String> = fabric.nodes().iter().map(|n| n.name.clone()).collect();
    for &s in &switches {
        names[s.index()] = role_name(role[s.index()].expect("every switch has a role"));
    }
    for (h, node) in fabric.nodes().iter().enumerate() {
        if node.is_switch() {
            continue;
        }
        let id = NodeId(h as u32);
        let mut place = None;
        for (_, peer) in fabric.neighbours(id) {
            let k = u32::from(peer.port);
            match role[peer.node.index()] {
                Some(Role::Leaf { i, j }) if (1..=d).contains(&k) && place.is_none() => {
                    place = Some(format!("srv{i}-{j}-{}", k - 1));
                }
                Some(_) => {
                    return err(format!(
                        "{} is cabled to port {k} of {} ({}), which is no server port of the \
                         plan",
                        node.name,
                        name(peer.node),
                        names[peer.node.index()]
                    ));
                }
                None => {}
            }
        }
        // A node on no switch keeps its name, marked so it cannot take a server's.
        names[h] = place.unwrap_or_else(|| format!("unplaced {}", node.name));
    }
    let named = renamed(fabric, names).map_err(|e| NotMlfm(e.to_string()))?;
    Ok(DetectedMlfm { mlfm, named })
}

fn role_name(role: Role) -> String {
    match role {
        Role::Leaf { i, j } => format!("leaf{i}-{j}"),
        Role::Spine { j0, j1 } => format!("spine{j0}-{j1}"),
    }
}

/// A copy of `fabric` with node i named `names[i]` (same ids, ports, GUIDs, LIDs, cables).
fn renamed(fabric: &Fabric, names: Vec<String>) -> Result<Fabric, crate::topology::FabricError> {
    let mut copy = Fabric::new(fabric.name.clone());
    for (node, name) in fabric.nodes().iter().zip(names) {
        let id = copy.add_node(NodeSpec {
            kind: node.kind,
            name,
            description: node.description.clone(),
            guid: node.guid,
            num_ports: node.num_ports(),
            rack: node.rack,
        })?;
        let new = copy.node_mut(id);
        new.system_guid = node.system_guid;
        new.vendor_id = node.vendor_id;
        new.device_id = node.device_id;
        for (to, from) in new.ports.iter_mut().zip(&node.ports) {
            to.guid = from.guid;
            to.lid = from.lid;
            to.lmc = from.lmc;
        }
    }
    for link in fabric.links() {
        copy.connect(link.a, link.b, link.width, link.speed)?;
    }
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Construction;

    /// The fabric with every node named by GUID, as the plugin's snapshot names them.
    fn by_guid(fabric: &Fabric) -> Fabric {
        let names = fabric
            .nodes()
            .iter()
            .map(|n| format!("{}-{:016x}", n.kind.id_prefix(), n.guid.0))
            .collect();
        renamed(fabric, names).unwrap()
    }

    #[test]
    fn every_mlfm_up_to_d8_is_found_with_its_construction_names() {
        for d in 1..=8 {
            let built = Mlfm::new(d).unwrap().build();
            let found = detect_mlfm(&by_guid(&built)).unwrap();
            assert_eq!(found.mlfm.d(), d);
            for (a, b) in built.nodes().iter().zip(found.named.nodes()) {
                assert_eq!(a.name, b.name, "d={d}");
                assert_eq!(a.guid, b.guid);
            }
            assert_eq!(found.named.links(), built.links());
        }
    }

    #[test]
    fn missing_servers_are_allowed() {
        let built = Mlfm::new(3).unwrap().build();
        let lost: Vec<NodeId> = built.hosts().take(5).collect();
        let damaged = built.after_losses(|id| lost.contains(&id), |_| false);
        let found = detect_mlfm(&by_guid(&damaged)).unwrap();
        assert_eq!(found.mlfm.d(), 3);
        assert!(found.named.node_by_name("leaf2-3").is_some());
    }

    #[test]
    fn other_fabrics_and_other_cablings_are_refused_saying_why() {
        for (spec, says) in [
            ("slimfly:q=5", "50 switches"),
            ("lsft:n=2", "14 switches"),
            (
                "fattree:leaves=6,spines=3,links-per-pair=1,hosts-per-leaf=2",
                "switch cables",
            ),
            ("circulant:nodes=9,jumps=1", "switch cable on port 1"),
        ] {
            let fabric = spec
                .parse::<crate::topology::TopologySpec>()
                .unwrap()
                .build()
                .unwrap();
            let e = detect_mlfm(&fabric).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
        // Two uplinks of a leaf swapped: the port plan is broken.
        let built = Mlfm::new(3).unwrap().build();
        let leaf = built.node_by_name("leaf0-0").unwrap();
        let mut swapped = Fabric::new("swapped");
        for node in built.nodes() {
            swapped
                .add_node(NodeSpec {
                    kind: node.kind,
                    name: node.name.clone(),
                    description: String::new(),
                    guid: node.guid,
                    num_ports: node.num_ports(),
                    rack: None,
                })
                .unwrap();
        }
        let swap = |end: PortRef| match (end.node == leaf, end.port) {
            (true, 4) => PortRef {
                node: leaf,
                port: 5,
            },
            (true, 5) => PortRef {
                node: leaf,
                port: 4,
            },
            _ => end,
        };
        for link in built.links() {
            swapped
                .connect(swap(link.a), swap(link.b), None, None)
                .unwrap();
        }
        let e = detect_mlfm(&swapped).unwrap_err().to_string();
        assert!(e.contains("port"), "{e}");
        // A lost leaf–spine cable: the leaf has too few switch cables.
        let cable = built
            .links()
            .iter()
            .position(|l| built.node(l.a.node).is_switch() && built.node(l.b.node).is_switch())
            .unwrap();
        let cut = built.after_losses(|_| false, |l| l.0 == cable as u32);
        assert!(detect_mlfm(&cut).is_err());
    }
}
