//! The resolution rules, one case each, on the MLFM d = 3 as `ibnetdiscover` reports it when the
//! project's ibsim net file is loaded (NodeDescriptions kept, generated GUIDs), and on small
//! hand-made fabrics for the cases a construction never produces.

use super::*;
use crate::io::ibnetdiscover;
use crate::topology::mlfm::Mlfm;
use crate::topology::{Construction, NodeSpec};

/// The generated MLFM d = 3.
fn generated() -> Fabric {
    Mlfm::new(3).unwrap().build()
}

/// The generated fabric read back as a dump: nodes named by their NodeDescriptions.
fn dump_of(fabric: &Fabric) -> Fabric {
    ibnetdiscover::parse(&ibnetdiscover::write(fabric), None)
        .unwrap()
        .fabric
}

/// The dump's node with the generated node's GUID.
fn same_node(dump: &Fabric, generated: &Fabric, name: &str) -> NodeId {
    let guid = generated.node(generated.node_by_name(name).unwrap()).guid;
    dump.node_by_guid(guid).unwrap()
}

/// A fabric of hosts and switches given as (kind, name, description, GUID).
fn hand_made(nodes: &[(NodeKind, &str, &str, u64)]) -> Fabric {
    let mut fabric = Fabric::new("hand-made");
    for &(kind, name, description, guid) in nodes {
        fabric
            .add_node(NodeSpec {
                kind,
                name: name.into(),
                description: description.into(),
                guid: Guid(guid),
                num_ports: 2,
                rack: None,
            })
            .unwrap();
    }
    fabric
}

#[test]
fn a_dump_names_hosts_by_description_and_not_by_the_generated_name() {
    // The failure: the schedule's "srv0-0-0" is no node name of the dump.
    let dump = dump_of(&generated());
    assert_eq!(dump.node_by_name("srv0-0-0"), None);
    let description = &dump.node(same_node(&dump, &generated(), "srv0-0-0")).name;
    assert!(description.starts_with("srv0-0-0 "), "{description}");
}

#[test]
fn the_node_name_decides_first() {
    let fabric = generated();
    let r = NodeResolver::new(&fabric, None)
        .resolve("srv1-2-0", Want::Host)
        .unwrap();
    assert_eq!(r.node, fabric.node_by_name("srv1-2-0").unwrap());
    assert_eq!(r.rule, Rule::Name);
}

#[test]
fn a_node_guid_with_0x_names_the_node() {
    let (generated, dump) = (generated(), dump_of(&generated()));
    let want = same_node(&dump, &generated, "srv2-1-1");
    let guid = dump.node(want).guid.to_string();
    assert!(guid.starts_with("0x"), "{guid}");
    let r = NodeResolver::new(&dump, None)
        .resolve(&guid, Want::Host)
        .unwrap();
    assert_eq!((r.node, r.rule), (want, Rule::Guid));
}

#[test]
fn a_port_guid_names_its_host() {
    let (generated, dump) = (generated(), dump_of(&generated()));
    let want = same_node(&dump, &generated, "srv0-3-2");
    let port_guid = dump.node(want).ports[1].guid;
    assert_ne!(port_guid, dump.node(want).guid);
    let r = NodeResolver::new(&dump, None)
        .resolve(&port_guid.to_string(), Want::Host)
        .unwrap();
    assert_eq!((r.node, r.rule), (want, Rule::Guid));
}

#[test]
fn the_node_name_maps_name_names_the_node_when_the_dump_was_read_without_it() {
    let (generated, dump) = (generated(), dump_of(&generated()));
    let want = same_node(&dump, &generated, "srv0-0-0");
    let mut map = NodeNameMap::new();
    map.insert(dump.node(want).guid, "node001");
    let r = NodeResolver::new(&dump, Some(&map))
        .resolve("node001", Want::Host)
        .unwrap();
    assert_eq!((r.node, r.rule), (want, Rule::NodeNameMap));
}

#[test]
fn a_dump_read_with_the_map_reports_the_map_as_the_rule() {
    let generated = generated();
    let map = NodeNameMap::from_fabric(&generated);
    let dump = ibnetdiscover::parse(&ibnetdiscover::write(&generated), Some(&map))
        .unwrap()
        .fabric;
    let r = NodeResolver::new(&dump, Some(&map))
        .resolve("leaf2-3", Want::Switch)
        .unwrap();
    assert_eq!(r.node, dump.node_by_name("leaf2-3").unwrap());
    assert_eq!(r.rule, Rule::NodeNameMap);
}

#[test]
fn the_descriptions_host_part_names_a_host() {
    let (generated, dump) = (generated(), dump_of(&generated()));
    let r = NodeResolver::new(&dump, None)
        .resolve("srv0-0-0", Want::Host)
        .unwrap();
    assert_eq!(r.node, same_node(&dump, &generated, "srv0-0-0"));
    assert_eq!(r.rule, Rule::HostPart);
}

#[test]
fn a_managed_switchs_description_carries_its_name_between_mf0_and_the_colon() {
    let (generated, dump) = (generated(), dump_of(&generated()));
    let want = same_node(&dump, &generated, "spine1-3");
    assert!(dump.node(want).description.starts_with("MF0;spine1-3:"));
    let r = NodeResolver::new(&dump, None)
        .resolve("spine1-3", Want::Switch)
        .unwrap();
    assert_eq!((r.node, r.rule), (want, Rule::HostPart));
}

#[test]
fn the_whole_description_names_the_node() {
    let (generated, mut dump) = (generated(), dump_of(&generated()));
    let want = same_node(&dump, &generated, "srv1-1-1");
    let description = dump.node(want).description.clone();
    dump.rename_node(want, "renamed").unwrap();
    let r = NodeResolver::new(&dump, None)
        .resolve(&description, Want::Host)
        .unwrap();
    assert_eq!((r.node, r.rule), (want, Rule::Description));
}

#[test]
fn an_ibnetdiscover_id_names_the_node() {
    let fabric = generated();
    let node = fabric.node_by_name("leaf0-0").unwrap();
    let id = ibnetdiscover::node_id(NodeKind::Switch, fabric.node(node).guid);
    let r = NodeResolver::new(&fabric, None)
        .resolve(&id, Want::Any)
        .unwrap();
    assert_eq!((r.node, r.rule), (node, Rule::DumpId));
}

#[test]
fn the_constructions_name_finds_the_node_with_its_guid_when_descriptions_say_nothing() {
    let generated = generated();
    let mut anonymous = generated.clone();
    for i in 0..anonymous.nodes().len() {
        anonymous.node_mut(NodeId(i as u32)).description = String::new();
    }
    let dump = dump_of(&anonymous);
    let r = NodeResolver::new(&dump, None)
        .with_construction(&generated)
        .resolve("srv2-0-2", Want::Host)
        .unwrap();
    assert_eq!(r.node, same_node(&dump, &generated, "srv2-0-2"));
    assert_eq!(r.rule, Rule::Construction);
}

#[test]
fn a_default_description_shared_by_hosts_is_ambiguous() {
    let default = "MT4123 ConnectX6   Mellanox Technologies";
    let fabric = hand_made(&[
        (NodeKind::Ca, "H-a", default, 0xa),
        (NodeKind::Ca, "H-b", default, 0xb),
    ]);
    let err = NodeResolver::new(&fabric, None)
        .resolve("MT4123", Want::Host)
        .unwrap_err();
    assert_eq!(
        err,
        ResolveError::Ambiguous {
            name: "MT4123".into(),
            fabric: "hand-made".into(),
            rule: Rule::HostPart.text(),
            nodes: vec!["H-a".into(), "H-b".into()],
        }
    );
    assert!(err.to_string().contains("ambiguous"), "{err}");
}

#[test]
fn a_map_naming_two_guids_alike_is_ambiguous() {
    let fabric = hand_made(&[
        (NodeKind::Ca, "H-a", "", 0xa),
        (NodeKind::Ca, "H-b", "", 0xb),
    ]);
    let mut map = NodeNameMap::new();
    map.insert(Guid(0xa), "node1");
    map.insert(Guid(0xb), "node1");
    let err = NodeResolver::new(&fabric, Some(&map))
        .resolve("node1", Want::Host)
        .unwrap_err();
    assert!(
        matches!(&err, ResolveError::Ambiguous { rule, nodes, .. }
            if *rule == Rule::NodeNameMap.text() && nodes.len() == 2),
        "{err}"
    );
}

#[test]
fn a_hosts_hcas_share_its_hostname_and_the_first_is_taken() {
    let fabric = hand_made(&[
        (NodeKind::Ca, "n17a", "node17 HCA-1", 0xa),
        (NodeKind::Ca, "n17b", "node17 HCA-2", 0xb),
    ]);
    let r = NodeResolver::new(&fabric, None)
        .resolve("node17", Want::Host)
        .unwrap();
    assert_eq!((r.node, r.rule), (NodeId(0), Rule::HostPart));
}

#[test]
fn a_missing_name_is_an_error_with_the_nearest_names() {
    let dump = dump_of(&generated());
    let err = NodeResolver::new(&dump, None)
        .resolve("srv0-0-9", Want::Host)
        .unwrap_err();
    let ResolveError::Missing {
        name, candidates, ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(name, "srv0-0-9");
    // One edit away: the three servers of leaf 0-0 by hostname, nearest first.
    assert_eq!(candidates, &["srv0-0-0", "srv0-0-1", "srv0-0-2"]);
    let text = err.to_string();
    assert!(text.starts_with("no host \"srv0-0-9\" in ibnetdiscover (looked for node name"));
    assert!(
        text.ends_with("nearest: \"srv0-0-0\", \"srv0-0-1\", \"srv0-0-2\""),
        "{text}"
    );
}

#[test]
fn a_switch_named_where_a_host_is_wanted_is_an_error_saying_so() {
    let dump = dump_of(&generated());
    let err = NodeResolver::new(&dump, None)
        .resolve("leaf0-0", Want::Host)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            ResolveError::WrongKind {
                kind: "switch",
                want: "host",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn host_list_errors_name_the_line_and_what_was_expected() {
    let dump = dump_of(&generated());
    let lines = [(1, "srv0-0-0"), (3, "srv9")];
    let err = NodeResolver::new(&dump, None)
        .resolve_lines(&lines, Want::Host)
        .unwrap_err();
    assert_eq!(err.line, 3);
    assert_eq!(err.found, "\"srv9\"");
    assert!(
        err.expected
            .starts_with("a host of ibnetdiscover (by node name"),
        "{err}"
    );
}

#[test]
fn a_dump_takes_its_constructions_names() {
    let generated = generated();
    let mut dump = dump_of(&generated);
    let all: Vec<&str> = generated.nodes().iter().map(|n| n.name.as_str()).collect();
    let rules = adopt_names(&mut dump, &generated, None, &all, Want::Any).unwrap();
    assert_eq!(rules.len(), generated.nodes().len());
    assert!(rules.iter().all(|&r| r == Rule::HostPart));
    for node in generated.nodes() {
        let id = dump.node_by_name(&node.name).unwrap();
        assert_eq!(dump.node(id).guid, node.guid, "{}", node.name);
    }
    assert_eq!(
        summary(rules),
        format!("{} by NodeDescription's host part", generated.nodes().len())
    );
}

#[test]
fn two_names_of_one_node_are_refused_before_anything_is_renamed() {
    let generated = generated();
    let mut dump = dump_of(&generated);
    let node = same_node(&dump, &generated, "srv0-0-1");
    let guid = dump.node(node).guid.to_string();
    let err = adopt_names(
        &mut dump,
        &generated,
        None,
        &["srv0-0-1", &guid],
        Want::Host,
    )
    .unwrap_err();
    assert!(
        matches!(&err, AdoptError::Shared { first, second, .. }
            if first == "srv0-0-1" && *second == guid),
        "{err}"
    );
    assert_eq!(dump.node_by_name("srv0-0-1"), None, "nothing renamed");
}

#[test]
fn host_parts_of_every_description_form() {
    assert_eq!(host_part("MF0;sw0-1-2-R02U38:MSB7800/U1"), "sw0-1-2-R02U38");
    assert_eq!(host_part("sfn010 mlx5_0"), "sfn010");
    assert_eq!(host_part("  MF0;gw1:IBR/U1/RT"), "gw1");
    assert_eq!(host_part("   "), "");
}

#[test]
fn the_sharp_aggregation_nodes_description_names_no_host() {
    let aggregation = crate::io::ibnetdiscover::AGGREGATION_NODE_DESCRIPTION;
    let fabric = hand_made(&[
        (NodeKind::Ca, "H-a", aggregation, 0xa),
        (NodeKind::Ca, "n1", "node1 HCA-1", 0xb),
    ]);
    let err = NodeResolver::new(&fabric, None)
        .resolve(host_part(aggregation), Want::Host)
        .unwrap_err();
    assert!(
        matches!(&err, ResolveError::Missing { candidates, .. }
            if !candidates.iter().any(|c| c.as_str() == host_part(aggregation))),
        "{err}"
    );
}
