use super::*;
use crate::rng::Rng;
use crate::routing::assign_lids;
use crate::topology::{Construction, slimfly::SlimFly};

fn fabric() -> Fabric {
    let mut f = SlimFly::new(5, None).unwrap().build();
    assign_lids(&mut f, 2).unwrap();
    f
}

/// The tables as `ibroute -M <lid>` prints them for every switch (infiniband-diags'
/// `dump_multicast_tables`: a tens row when there are more than 9 ports, the `Ports:` row, one
/// column of two characters per port 0..=N), or with `-b` (`brief`: hex masks per 16 ports).
fn write_ibroute(fabric: &Fabric, tables: &MulticastTables, brief: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for s in fabric.switches() {
        let node = fabric.node(s);
        let nports = usize::from(node.num_ports());
        let _ = writeln!(
            out,
            "Multicast mlids [0xc000-0xc3ff] of switch Lid {} guid 0x{:016x} ({}):",
            node.ports[0].lid, node.guid.0, node.description
        );
        if brief {
            out.push_str(" MLid       Port Mask\n");
        } else {
            if nports > 9 {
                let tens: String = (0..=nports)
                    .map(|i| {
                        if i % 10 == 0 {
                            format!("{} ", i / 10)
                        } else {
                            "  ".into()
                        }
                    })
                    .collect();
                let _ = writeln!(out, "            {tens}");
            }
            let units: String = (0..=nports).map(|i| format!("{} ", i % 10)).collect();
            let _ = writeln!(out, "     Ports: {units}");
            out.push_str(" MLid\n");
        }
        let mut n = 0;
        for (mlid, ports) in tables.table(s) {
            let columns: String = if brief {
                (0..(nports + 1).div_ceil(16))
                    .map(|chunk| {
                        let mask: u16 = (0..16)
                            .filter(|b| ports.contains((chunk * 16 + b) as u8))
                            .fold(0, |m, b| m | 1 << b);
                        format!("{mask:04x}")
                    })
                    .collect()
            } else {
                (0..=nports)
                    .map(|p| if ports.contains(p as u8) { "x " } else { "  " })
                    .collect()
            };
            let _ = writeln!(out, "0x{mlid:04x}      {columns}");
            n += 1;
        }
        let _ = writeln!(out, "{n} valid mlids dumped ");
    }
    out
}

/// The tables as OpenSM's `dump_mcast_routes` writes `opensm.mcfdbs` (switches without
/// entries have no block).
fn write_opensm(fabric: &Fabric, tables: &MulticastTables) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for s in fabric.switches() {
        let mut first = true;
        for (mlid, ports) in tables.table(s) {
            if first {
                let _ = write!(
                    out,
                    "\nSwitch 0x{:016x}\nLID    : Out Port(s)\n",
                    fabric.node(s).guid.0
                );
                first = false;
            }
            let _ = write!(out, "0x{mlid:04X} :");
            for p in ports.iter() {
                let _ = write!(out, " 0x{p:03X} ");
            }
            out.push('\n');
        }
    }
    out
}

/// Random entries for some switches and MLIDs.
fn random_tables(fabric: &Fabric, seed: u64) -> MulticastTables {
    let mut rng = Rng::new(seed);
    let mut tables = MulticastTables::new();
    let switches: Vec<NodeId> = fabric.switches().collect();
    for _ in 0..40 {
        let s = switches[rng.below(switches.len() as u64) as usize];
        let mlid = FIRST_MLID + rng.below(600) as u16;
        let n = fabric.node(s).num_ports();
        let ports: PortSet = (0..=n).filter(|_| rng.below(3) == 0).collect();
        tables.set(s, mlid, ports);
    }
    tables
}

#[test]
fn ibroute_and_opensm_dumps_of_random_tables_read_back_equal() {
    let f = fabric();
    for seed in 0..20 {
        let tables = random_tables(&f, seed);
        for (format, text) in [
            ("ibroute -M", write_ibroute(&f, &tables, false)),
            ("ibroute -M -b", write_ibroute(&f, &tables, true)),
            ("opensm.mcfdbs", write_opensm(&f, &tables)),
        ] {
            let d = parse(&text, &f).unwrap_or_else(|e| panic!("{format}: {e}\n{text}"));
            assert_eq!(d.tables, tables, "{format}, seed {seed}");
            assert_eq!(d.entries, tables.len(), "{format}");
            assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        }
    }
}

/// `ibroute -M 1` on switch sw0-0-0 of a generated Slim Fly q = 5 under ibsim, and the same
/// entry in `opensm.mcfdbs`.
const IBROUTE: &str = "\
Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x02fab00000000000 (MF0;sw0-0-0:slimfly-q5/U1):
            0                   1     
     Ports: 0 1 2 3 4 5 6 7 8 9 0 1 
 MLid
0xc000        x   x   x       x     
0xc001      x                     x 
2 valid mlids dumped 
";

#[test]
fn an_ibroute_block_names_each_port_by_its_column() {
    let f = fabric();
    let sw0 = f.node_by_name("sw0-0-0").unwrap();
    let d = parse(IBROUTE, &f).unwrap();
    assert_eq!((d.switches, d.entries), (1, 2));
    assert_eq!(d.tables.ports(sw0, 0xc000).unwrap().to_string(), "1,3,5,9");
    assert_eq!(d.tables.ports(sw0, 0xc001).unwrap().to_string(), "0,11");
    let opensm = "\nSwitch 0x02fab00000000000\nLID    : Out Port(s)\n0xC000 : 0x001  0x003  \
                  0x005  0x009 \n0xC001 : 0x000  0x00B \n";
    assert_eq!(parse(opensm, &f).unwrap().tables, d.tables);
    // Trailing blanks stripped by an editor change nothing.
    let stripped: String = IBROUTE
        .lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect();
    assert_eq!(parse(&stripped, &f).unwrap().tables, d.tables);
    // Unicast blocks in the same file are skipped.
    let mixed = format!(
        "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x02fab00000000000 (x):\n0x0001 000 : (x)\n{IBROUTE}"
    );
    assert_eq!(parse(&mixed, &f).unwrap().tables, d.tables);
}

#[test]
fn errors_name_the_line_and_what_was_expected() {
    let f = fabric();
    let err = |text: &str| parse(text, &f).unwrap_err();
    let e = err("0xC000 : 0x001\n");
    assert_eq!(e.line, 1);
    assert!(e.expected.contains("before the first entry"), "{e}");
    let e = err("Switch 0x0123\n");
    assert!(e.expected.contains("a switch of fabric slimfly-q5"), "{e}");
    let header = "Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x02fab00000000000 (x):\n";
    let e = err(&header.replace("Lid 1", "Lid 7"));
    assert!(e.expected.contains("tables of another fabric"), "{e}");
    let e = err(&format!("{header}0xc000        x  y\n"));
    assert_eq!(e.line, 2);
    assert!(e.expected.contains("an MFT entry like"), "{e}");
    let e = err(&format!("{header}0xc000      {}x\n", "  ".repeat(12)));
    assert!(
        e.expected
            .contains("ports of sw0-0-0 (0..=11), not port 12"),
        "{e}"
    );
    let e = err(&format!("{header}0x0001      x\n"));
    assert!(e.expected.contains("a multicast LID"), "{e}");
    let switch = "Switch 0x02fab00000000000\n";
    let e = err(&format!("{switch}0xC000 : 0x001\n0xC000 : 0x002\n"));
    assert_eq!(e.line, 3);
    assert!(
        e.expected
            .contains("ports 1 for MLID 0xc000 at sw0-0-0, as line 2 says"),
        "{e}"
    );
    let e = err(&format!("{switch}0xC000 : 1 2\n"));
    assert!(e.expected.contains("an MFT entry like"), "{e}");
    assert!(e.to_string().starts_with("line 2: expected"), "{e}");
}

#[test]
fn group_sls_from_saquery_records_and_plain_lines() {
    let saquery = "MCMemberRecord group dump:\n\t\tMGID....................ff12:401b:ffff::ffff:ffff\n\
                   \t\tMlid....................0xC000\n\t\tMtu.....................0x4\n\
                   \t\tpkey....................0xFFFF\n\t\tRate....................0x3\n\
                   \t\tSL......................0x0\n\
                   MCMemberRecord group dump:\n\t\tMGID....................ff12:601b:ffff::1\n\
                   \t\tMlid....................0xC001\n\t\tSL......................0xA\n";
    let g = group_sls(saquery).unwrap();
    assert_eq!(g.sls, [(0xc000, 0), (0xc001, 10)].into_iter().collect());
    let member = "MCMember Record dump:\n\t\tMGID....................ff12::1\n\
                  \t\tmlid....................0xc002\n\t\tSL......................0x3\n";
    assert_eq!(group_sls(member).unwrap().sls[&0xc002], 3);
    let plain = "# MLID SL\n0xc000 2\n0xC005   15\n";
    assert_eq!(
        group_sls(plain).unwrap().sls,
        [(0xc000, 2), (0xc005, 15)].into_iter().collect()
    );
    let e = group_sls("0xc000 16\n").unwrap_err();
    assert!(e.expected.contains("`MLID SL`"), "{e}");
    let e = group_sls("0x0001 1\n").unwrap_err();
    assert_eq!(e.line, 1);
    let e = group_sls("\t\tSL......................0x3\n").unwrap_err();
    assert!(
        e.expected.contains("after the record's `Mlid....` line"),
        "{e}"
    );
}
