//! Tests of the ibnetdiscover reader and writer on the fixtures, mutations and round trips.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::io::fixture;
use crate::io::mutate::{all_fixture_texts, mutants};
use crate::topology::Construction;
use crate::topology::PortRef;
use crate::topology::slimfly::SlimFly;

/// (fixture, switches, CAs, routers, port lines, cables).
///
/// Counted independently of this parser: `grep -c '^Switch'`, `grep -c '^Ca'`,
/// `grep -c '^Rt'` and `grep -c '^\['` on each file; cables = unordered pairs of port lines
/// naming each other, counted by a throw-away Python script over the regexes of cabling.md
/// 1.4 (in every fixture that is port lines / 2: none has a dangling, one-sided or
/// inconsistent line). The NDR numbers match the fixtures README (31 leaves + 9 spines,
/// 582 CAs, 2228 port lines), the Slim Fly ones its 175 + 200 cables.
const DUMPS: &[(&str, usize, usize, usize, usize, usize)] = &[
    ("jabl-ibtopotool_ibm-doc-mt43132_2.topo", 1, 2, 0, 4, 2),
    ("jabl-ibtopotool_manpage-voltaire_1.topo", 2, 4, 0, 14, 7),
    (
        "jabl-ibtopotool_mixed-speed-loopback_3.topo",
        2,
        6,
        0,
        20,
        10,
    ),
    ("jabl-ibtopotool_oracle-sun-dcs36_4.topo", 1, 1, 0, 2, 1),
    (
        "nvidia-topograph_gb200-lone-ca_example-bad.out",
        0,
        1,
        0,
        0,
        0,
    ),
    (
        "nvidia-topograph_ndr-dgx-superpod_example.out",
        40,
        582,
        0,
        2228,
        1114,
    ),
    (
        "loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt",
        8,
        144,
        0,
        384,
        192,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover_-f.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover_-g.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover_-m.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/baseline/ibnetdiscover_node-name-map.topo",
        4,
        6,
        1,
        34,
        17,
    ),
    (
        "ibsim-generated/after-faults/ibnetdiscover.topo",
        4,
        5,
        1,
        30,
        15,
    ),
    (
        "ibsim-generated/slimfly-q5/clean.ibnetdiscover.topo",
        50,
        200,
        0,
        750,
        375,
    ),
    (
        "ibsim-generated/slimfly-q5/faulty.ibnetdiscover.topo",
        50,
        200,
        0,
        748,
        374,
    ),
    (
        "ibsim-generated/slimfly-q5/partial.ibnetdiscover.topo",
        40,
        120,
        0,
        480,
        240,
    ),
];

/// The parsed shared dump `path`, or `None` (skip line printed) when it is missing.
fn dump(path: &str) -> Option<Dump> {
    let text = fixture(path)?;
    Some(parse(&text, None).unwrap_or_else(|e| panic!("{path}: {e}")))
}

type NodeSnapshot = (
    NodeKind,
    String,
    u8,
    u32,
    u32,
    Option<Guid>,
    Vec<(Guid, u16, u8)>,
);
type Cable = ((Guid, u8), (Guid, u8), Option<LinkWidth>, Option<LinkSpeed>);

/// Everything a dump carries, keyed by GUID (names aside).
fn snapshot(f: &Fabric) -> (BTreeMap<Guid, NodeSnapshot>, BTreeSet<Cable>) {
    let nodes = f
        .nodes()
        .iter()
        .map(|n| {
            let ports = n.ports.iter().map(|p| (p.guid, p.lid, p.lmc)).collect();
            let snap = (
                n.kind,
                n.description.clone(),
                n.num_ports(),
                n.vendor_id,
                n.device_id,
                n.system_guid,
                ports,
            );
            (n.guid, snap)
        })
        .collect();
    let end = |e: PortRef| (f.node(e.node).guid, e.port);
    let cables = f
        .links()
        .iter()
        .map(|l| {
            let (a, b) = (end(l.a), end(l.b));
            (a.min(b), a.max(b), l.width, l.speed)
        })
        .collect();
    (nodes, cables)
}

fn names(f: &Fabric) -> BTreeMap<Guid, String> {
    f.nodes().iter().map(|n| (n.guid, n.name.clone())).collect()
}

#[test]
fn every_fixture_parses_with_the_counted_nodes_and_cables() {
    for &(path, switches, cas, routers, port_lines, cables) in DUMPS {
        let Some(d) = dump(path) else { return };
        let s = d.fabric.summary();
        assert_eq!(
            (s.switches, s.hosts, s.routers),
            (switches, cas, routers),
            "{path}"
        );
        assert_eq!(d.port_lines, port_lines, "{path}");
        assert_eq!(d.fabric.links().len(), cables, "{path}");
        assert!(d.dangling.is_empty(), "{path}: {:?}", d.dangling);
        for w in &d.warnings {
            assert!(
                !w.message.contains("inconsistent") && !w.message.contains("one end"),
                "{path}: {w}"
            );
        }
    }
}

#[test]
fn real_world_quirks() {
    // stderr noise on line 1, single spaces, three loopback cables on one switch.
    let Some(d) = dump("jabl-ibtopotool_mixed-speed-loopback_3.topo") else {
        return;
    };
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    assert_eq!(d.warnings[0].line, 1);
    let f = &d.fabric;
    assert_eq!(f.links().iter().filter(|l| l.a.node == l.b.node).count(), 3);
    let sw = f.node_by_name("SwitchIB Mellanox Technologies").unwrap();
    assert_eq!(
        f.peer(PortRef { node: sw, port: 19 }),
        Some(PortRef { node: sw, port: 21 })
    );
    let slow = f.node_by_name("r-ufm96 HCA-1").unwrap();
    let link = f.link(f.node(slow).ports[1].link.unwrap());
    assert_eq!(
        (link.width, link.speed),
        (Some(LinkWidth::X4), Some(LinkSpeed::Sdr))
    );

    // Man page example: 8-space indentation, no sysimgguid on one switch, two links whose
    // ends disagree (4xSDR on the switch, 1xSDR on the other end), 4 CAs sharing one
    // description (so they are named by id), LMC 1.
    let Some(d) = dump("jabl-ibtopotool_manpage-voltaire_1.topo") else {
        return;
    };
    let f = &d.fabric;
    let disagree: Vec<_> = d
        .warnings
        .iter()
        .filter(|w| w.message.contains("disagree"))
        .collect();
    assert_eq!(disagree.len(), 2, "{:?}", d.warnings);
    let isr = f.node_by_name("ISR9024 Voltaire").unwrap();
    let l10 = f.link(f.node(isr).ports[10].link.unwrap());
    assert_eq!(l10.width, Some(LinkWidth::X1), "the lower width is kept");
    let sw6 = f.node(f.node_by_name("SW-6IB4 Voltaire").unwrap());
    assert_eq!(sw6.system_guid, None);
    assert_eq!(sw6.ports[0].lid, 3);
    let ca = f.node(f.node_by_name("H-0008f10403960558").unwrap());
    assert_eq!(ca.description, "MT23108 InfiniHost Mellanox Technologies");
    assert_eq!(ca.ports[2].guid, Guid(0x8f1040396055a));
    assert_eq!((ca.ports[1].lid, ca.ports[1].lmc), (10, 1));

    // IBM doc: no sysimgguid on the switch, a CA cabled on port 2 only.
    let Some(f) = dump("jabl-ibtopotool_ibm-doc-mt43132_2.topo").map(|d| d.fabric) else {
        return;
    };
    let sw = f.node(f.node_by_guid(Guid(0xb8cffff0053ee)).unwrap());
    assert_eq!(
        (sw.system_guid, sw.vendor_id, sw.device_id),
        (None, 0x2c9, 0xa87c)
    );
    let ca = f.node(f.node_by_name("compute-00-00 HCA-1").unwrap());
    assert_eq!(ca.ports[2].guid, Guid(0x2c9030002847e));
    assert_eq!(
        ca.ports[1].guid,
        Guid(0x2c9030002847d),
        "no line: default GUID"
    );
    assert_eq!(ca.system_guid, Some(Guid(0x2c9030002847f)));

    // Oracle doc: no blank line after the header, a line holding one space.
    let Some(d) = dump("jabl-ibtopotool_oracle-sun-dcs36_4.topo") else {
        return;
    };
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!(d.fabric.links()[0].speed, Some(LinkSpeed::Qdr));

    // A lone CA without cables.
    let Some(f) = dump("nvidia-topograph_gb200-lone-ca_example-bad.out").map(|d| d.fabric) else {
        return;
    };
    assert_eq!(f.nodes()[0].name, "dgx-gb200-n01-c1 HCA-1");
    assert_eq!(f.nodes()[0].kind, NodeKind::Ca);

    // NDR SuperPOD: 40 SHARP aggregation nodes (`grep -c '^Ca.*Aggregation Node'`), each
    // on a switch's port 65 (`grep -c '^\[65\]'` = 40); 109 nodes share a description
    // with another node (40 ANs + 69 `MT4129 ConnectX7   Mellanox Technologies`, counted
    // with `sed | sort | uniq -c` on the header descriptions) and are named by id.
    let Some(f) = dump("nvidia-topograph_ndr-dgx-superpod_example.out").map(|d| d.fabric) else {
        return;
    };
    let ans: Vec<_> = f
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| is_aggregation_node(n))
        .collect();
    assert_eq!(ans.len(), 40);
    for (i, _) in &ans {
        let peer = f
            .peer(PortRef {
                node: NodeId(*i as u32),
                port: 1,
            })
            .unwrap();
        assert!(f.node(peer.node).is_switch());
        assert_eq!(peer.port, 65);
    }
    let by_id = f
        .nodes()
        .iter()
        .filter(|n| n.name == node_id(n.kind, n.guid))
        .count();
    assert_eq!(by_id, 109);
    assert!(f.links().iter().all(|l| l.speed == Some(LinkSpeed::Ndr)));

    // FDR10 between switches (`grep -c FDR10` = 94 lines = 47 cables), a dual-port HCA
    // with both ports cabled.
    let Some(f) = dump("loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt").map(|d| d.fabric)
    else {
        return;
    };
    assert_eq!(
        f.links()
            .iter()
            .filter(|l| l.speed == Some(LinkSpeed::Fdr10))
            .count(),
        47
    );
    let tank = f.node_by_name("tank1 mlx4_0").unwrap();
    assert_eq!(f.neighbours(tank).count(), 2);
}

#[test]
fn ibsim_variants_routers_lids_and_multi_port_cas() {
    let Some(plain) = dump("ibsim-generated/baseline/ibnetdiscover.topo") else {
        return;
    };
    assert!(plain.warnings.is_empty(), "{:?}", plain.warnings);
    let f = &plain.fabric;
    let rt = f.node(f.node_by_name("MF0;gw1:IBR/U1/RT").unwrap());
    assert_eq!((rt.kind, rt.num_ports()), (NodeKind::Router, 2));
    assert_eq!(rt.ports[2].guid, Guid(0xb8e9240300d00002));
    assert_eq!((rt.ports[1].lid, rt.ports[2].lid), (6, 7));
    let spine1 = f.node_by_guid(Guid(0xb8cef60300a10000)).unwrap();
    assert_eq!(f.node(spine1).ports[0].lid, 1);
    assert!(
        f.node(spine1)
            .ports
            .iter()
            .all(|p| p.guid == Guid(0xb8cef60300a10000))
    );
    let node05 = f.node(f.node_by_name("node05 mlx5_0").unwrap());
    assert_eq!(node05.ports[1].guid, Guid(0xc42a10300c00041));
    assert_eq!((node05.ports[2].lid, node05.ports[2].lmc), (12, 0));
    assert_eq!(node05.device_id, 0x1017);
    let leaf2 = f.node_by_name("MF0;ib-leaf2:MQM8700/U1").unwrap();
    let degraded = f.link(f.node(leaf2).ports[38].link.unwrap());
    assert_eq!(degraded.width, Some(LinkWidth::X1));
    assert_eq!(degraded.speed, Some(LinkSpeed::Hdr));

    // -f, -g and -m read to the same fabric, names included.
    for variant in ["_-f.topo", "_-g.topo", "_-m.topo"] {
        let Some(d) = dump(&format!("ibsim-generated/baseline/ibnetdiscover{variant}")) else {
            return;
        };
        assert!(d.warnings.is_empty(), "{variant}: {:?}", d.warnings);
        assert_eq!(snapshot(&d.fabric), snapshot(f), "{variant}");
        assert_eq!(names(&d.fabric), names(f), "{variant}");
    }

    // No SM: CA LIDs 0, the EDR-only HCA at 4xEDR.
    let Some(f) =
        dump("ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo").map(|d| d.fabric)
    else {
        return;
    };
    let node06 = f.node_by_name("node06 mlx5_0").unwrap();
    assert_eq!(f.node(node06).ports[1].lid, 0);
    let link = f.link(f.node(node06).ports[1].link.unwrap());
    assert_eq!(link.speed, Some(LinkSpeed::Edr));
}

#[test]
fn node_name_map_names_nodes() {
    let Some(map) = fixture("ibsim-generated/node-name-map.txt") else {
        return;
    };
    let map = NodeNameMap::parse(&map).unwrap();
    let Some(text) = fixture("ibsim-generated/baseline/ibnetdiscover_node-name-map.topo") else {
        return;
    };
    let f = parse(&text, Some(&map)).unwrap().fabric;
    let name = |g: u64| f.node(f.node_by_guid(Guid(g)).unwrap()).name.clone();
    assert_eq!(name(0xb8cef60300a10000), "R01-U42-spine1");
    assert_eq!(name(0x0c42a10300c00000), "R01-U01-node01 HCA0");
    assert_eq!(name(0xb8e9240300d00000), "gw1-unquoted");
    assert_eq!(
        name(0x0c42a10300c00010),
        "node02 mlx5_0",
        "not in the map: description"
    );
    // The dump itself remapped the switch headers but not the CA headers.
    let spine1 = f.node(f.node_by_guid(Guid(0xb8cef60300a10000)).unwrap());
    assert_eq!(spine1.description, "R01-U42-spine1");
    let node01 = f.node(f.node_by_guid(Guid(0x0c42a10300c00000)).unwrap());
    assert_eq!(node01.description, "node01 mlx5_0");

    // Slim Fly with its map: every node gets its plan name.
    let Some(map) = fixture("ibsim-generated/slimfly-q5/node-name-map.txt") else {
        return;
    };
    let map = NodeNameMap::parse(&map).unwrap();
    for variant in ["clean", "faulty", "partial"] {
        let Some(text) = fixture(&format!(
            "ibsim-generated/slimfly-q5/{variant}.ibnetdiscover.topo"
        )) else {
            return;
        };
        let f = parse(&text, Some(&map)).unwrap().fabric;
        for n in f.nodes() {
            assert_eq!(Some(n.name.as_str()), map.get(n.guid), "{variant}");
        }
        if variant == "faulty" {
            // F5: sw0-2-2[9] <-> sw1-2-3[9] at 1x (`grep 1xEDR` finds both ends).
            let a = f.node_by_name("sw0-2-2").unwrap();
            let l = f.link(f.node(a).ports[9].link.unwrap());
            assert_eq!(
                (l.width, l.speed),
                (Some(LinkWidth::X1), Some(LinkSpeed::Edr))
            );
            assert_eq!(
                f.node(l.other_end(PortRef { node: a, port: 9 }).node).name,
                "sw1-2-3"
            );
        }
    }
}

#[test]
fn partial_dumps_lack_the_island_and_keep_dangling_half_edges() {
    // The partial fixture: rack R05 had no inter-rack cable yet, so ibnetdiscover never
    // reached it and prints nothing about it — not even half-edges (it prints a port only
    // when the far node answered). `grep -c R05 partial.ibnetdiscover.topo` = 0.
    let Some(d) = dump("ibsim-generated/slimfly-q5/partial.ibnetdiscover.topo") else {
        return;
    };
    assert!(
        d.fabric
            .nodes()
            .iter()
            .all(|n| !n.description.contains("R05"))
    );
    assert!(d.dangling.is_empty());

    // Dangling half-edges: drop spine1's block from the baseline; its four cables
    // (leaf1[37,38], leaf2[37,38]) are then seen from the leaves only.
    let Some(text) = fixture("ibsim-generated/baseline/ibnetdiscover.topo") else {
        return;
    };
    let without: Vec<&str> = text
        .split("\n\n")
        .filter(|block| !block.contains("Switch\t40 \"S-b8cef60300a10000\""))
        .collect();
    let d = parse(&without.join("\n\n"), None).unwrap();
    assert_eq!(d.fabric.summary().switches, 3);
    assert_eq!(d.dangling.len(), 4, "{:?}", d.dangling);
    assert_eq!(d.fabric.links().len(), 13);
    for c in &d.dangling {
        assert_eq!(c.peer_guid, Guid(0xb8cef60300a10000));
        assert_eq!(c.peer_kind, Some(NodeKind::Switch));
        assert_eq!(c.peer_desc, "MF0;ib-spine1:MQM8700/U1");
        assert_eq!(d.fabric.node(c.node).guid, c.node_guid);
    }
    let leaf2 = Guid(0xb8cef60300b20000);
    let degraded = d
        .dangling
        .iter()
        .find(|c| c.node_guid == leaf2 && c.port == 38)
        .unwrap();
    assert_eq!(
        (degraded.peer_port, degraded.width),
        (4, Some(LinkWidth::X1))
    );
}

const SMALL: &str = "\
vendid=0x2c9
devid=0xd2f0
switchguid=0xa(a)
Switch\t4 \"S-000000000000000a\"\t\t# \"A\" enhanced port 0 lid 1 lmc 0
[1]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR
[2]\t\"S-000000000000000c\"[3]\t\t# \"C\" lid 3 4xHDR

Switch\t4 \"S-000000000000000b\"\t\t# \"B\" enhanced port 0 lid 2 lmc 0
[2]\t\"S-000000000000000c\"[5]\t\t# \"C\" lid 3 4xHDR

Switch\t8 \"S-000000000000000c\"\t\t# \"C\" enhanced port 0 lid 3 lmc 0
[5]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR
";

#[test]
fn inconsistent_and_one_sided_half_edges() {
    let d = parse(SMALL, None).unwrap();
    let f = &d.fabric;
    // B[2] <-> C[5] agree; A[1] -> B[2] contradicts B[2]'s line; A[2] -> C[3] is one-sided.
    assert_eq!(f.links().len(), 2, "{:?}", d.warnings);
    let inconsistent = d
        .warnings
        .iter()
        .find(|w| w.message.contains("inconsistent"))
        .unwrap();
    assert_eq!(inconsistent.line, 5);
    assert!(
        inconsistent.message.contains("line 5") && inconsistent.message.contains("line 9"),
        "{inconsistent}"
    );
    assert!(
        inconsistent.message.contains("A[1] → B[2]")
            && inconsistent.message.contains("B[2] → C[5]"),
        "{inconsistent}"
    );
    let one_sided = d
        .warnings
        .iter()
        .find(|w| w.message.contains("this end only"))
        .unwrap();
    assert_eq!(one_sided.line, 6);
    let a = f.node_by_name("A").unwrap();
    let c = f.node_by_name("C").unwrap();
    assert_eq!(
        f.peer(PortRef { node: a, port: 2 }),
        Some(PortRef { node: c, port: 3 })
    );
    assert_eq!(f.peer(PortRef { node: a, port: 1 }), None);
}

#[test]
fn malformed_lines_are_errors_with_line_numbers() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "[1]\t\"S-000000000000000b\"[2]\t\t# \"B\" lid 2 4xHDR\n",
            1,
            "node header",
        ),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\"\n[1 \"S-b\"[2] # \"B\" lid 2 4xHDR\n",
            2,
            "] after the port number",
        ),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\"\n[5]\t\"S-b\"[2]\t\t# \"B\" lid 2 4xHDR\n",
            2,
            "1..=4",
        ),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B\" 4xHDR\n",
            2,
            "lid N",
        ),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B\" lid 2 HDR\n",
            2,
            "4xHDR",
        ),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\"\n[1]\t\"S-b\"[2]\t\t# \"B lid 2 4xHDR\n",
            2,
            "closing quote",
        ),
        ("Switch\t0 \"S-a\"\t\t# \"A\"\n", 1, "number of ports"),
        ("Switch\t4 \"X-a\"\t\t# \"A\"\n", 1, "quoted node id"),
        (
            "Switch\t4 \"S-a\"\t\t# \"A\" enhanced port 0 lid x lmc 0\n",
            1,
            "port 0 lid",
        ),
        (
            "Switch\t4 \"S-a\" # \"A\"\n\nSwitch\t4 \"S-a\" # \"A\"\n",
            3,
            "already has a header at line 1",
        ),
        ("vendid=0xzz\n", 1, "hex number"),
        ("switchguid=0xa(b\n", 1, "port GUID"),
        (
            "Switch\t4 \"S-a\" # \"A\"\n[1]\t\"S-b\"[2]\t# \"B\" lid 2 4xHDR\n[1]\t\"S-c\"[2]\t# \"C\" lid 2 4xHDR\n",
            3,
            "already listed at line 2",
        ),
    ];
    for &(text, line, needle) in cases {
        let e = parse(text, None).unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("line {line}: expected ")),
            "{e}"
        );
    }
    // `ibnetdiscover -l` output is not a topology: its first line is a malformed header.
    // Tolerated: unknown rates, `0x` in ids, noise, a repeated line.
    let ext =
        "Switch\t8 \"S-a\" # \"A\"\n[3][ext 5]\t\"S-b\"[4][ext 2]\t\t# \"B\" lid 2 4xHDR slot 3\n";
    let d = parse(ext, None).unwrap();
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!((d.dangling[0].port, d.dangling[0].peer_port), (3, 4));
    let text = "garbage\nSwitch 4 \"S-0xa\" # \"A\"\n[1] \"H-0xb\"[1](0xc) # \"B\" lid 2 ?????\n\
                [1] \"H-0xb\"[1](0xc) # \"B\" lid 2 ?????\n[2] \"H-d\"[1] # \"D\" lid 2 3xFOO s=1 w=2 v=3 extra\n";
    let d = parse(text, None).unwrap();
    assert_eq!(d.dangling.len(), 2);
    assert_eq!((d.dangling[0].width, d.dangling[0].speed), (None, None));
    assert_eq!(d.dangling[0].peer_port_guid, Some(Guid(0xc)));
    let lines: Vec<usize> = d.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 4, 5, 5], "{:?}", d.warnings);
}

/// `ibnetdiscover -l` output is not a topology: its first line is a malformed header.
#[test]
fn a_node_list_is_refused_at_line_1() {
    let Some(text) = fixture("ibsim-generated/baseline/ibnetdiscover_-l.txt") else {
        return;
    };
    assert_eq!(parse(&text, None).unwrap_err().line, 1);
}

#[test]
fn writer_reproduces_the_tools_lines() {
    // The tool prints switches, CAs and routers in that order and so does the writer; as
    // the fabric keeps dump order, everything after the header comment is byte-identical.
    for path in [
        "ibsim-generated/baseline/ibnetdiscover.topo",
        "ibsim-generated/baseline/ibnetdiscover_no-sm_initialize.topo",
        "ibsim-generated/slimfly-q5/clean.ibnetdiscover.topo",
        "ibsim-generated/slimfly-q5/faulty.ibnetdiscover.topo",
        "nvidia-topograph_ndr-dgx-superpod_example.out",
        "loginoff-infiniband_topology_fdr10-qdr-8sw_topo.txt",
        "nvidia-topograph_gb200-lone-ca_example-bad.out",
    ] {
        let Some(text) = fixture(path) else { return };
        let written = write(&parse(&text, None).unwrap().fabric);
        let body = |t: &str| t[t.find("\n\nvendid").unwrap()..].trim_end().to_owned();
        let (want, got) = (body(&text), body(&written));
        if want != got {
            let first = want.lines().zip(got.lines()).position(|(a, b)| a != b);
            panic!("{path}: first difference at body line {first:?}");
        }
    }
}

#[test]
fn write_then_parse_round_trips_a_slim_fly() {
    let fabric = SlimFly::new(5, None).unwrap().build();
    let text = write(&fabric);
    let map = NodeNameMap::from_fabric(&fabric);
    let d = parse(&text, Some(&map)).unwrap();
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert!(d.dangling.is_empty());
    assert_eq!(snapshot(&d.fabric), snapshot(&fabric));
    assert_eq!(names(&d.fabric), names(&fabric));
    assert_eq!(d.port_lines, 2 * fabric.links().len());
    // Without a map the descriptions (unique in generated fabrics) become the names.
    let d = parse(&text, None).unwrap();
    assert!(d.fabric.nodes().iter().all(|n| n.name == n.description));
}

#[test]
fn parse_write_parse_round_trips_every_fixture() {
    for &(path, ..) in DUMPS {
        let Some(first) = dump(path) else { return };
        let written = write(&first.fabric);
        let second = parse(&written, None).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(snapshot(&second.fabric), snapshot(&first.fabric), "{path}");
        assert_eq!(names(&second.fabric), names(&first.fabric), "{path}");
        assert!(second.warnings.is_empty(), "{path}: {:?}", second.warnings);
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let mut parsed = 0;
    let mut failed = 0;
    for (seed, &(path, ..)) in (0x1b_0000..).zip(DUMPS) {
        let Some(text) = fixture(path) else { return };
        let count = if text.len() > 100_000 { 70 } else { 350 };
        for (k, mutant) in mutants(&text, seed, count).iter().enumerate() {
            match std::panic::catch_unwind(|| parse(mutant, None)) {
                Ok(Ok(_)) => parsed += 1,
                Ok(Err(e)) => {
                    failed += 1;
                    assert!(e.line >= 1, "{path} mutant {k}: {e}");
                }
                Err(_) => panic!("{path} mutant {k} panicked:\n{mutant}"),
            }
        }
    }
    assert!(parsed > 0 && failed > 0, "parsed {parsed}, failed {failed}");
    // Every other fixture (iblinkinfo, -p, caches, net files) is read without panicking.
    let Some(all) = all_fixture_texts() else {
        return;
    };
    for (path, text) in all {
        let _ = std::panic::catch_unwind(|| parse(&text, None))
            .unwrap_or_else(|_| panic!("{path} panicked"));
    }
}
