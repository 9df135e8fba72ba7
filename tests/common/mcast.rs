//! Multicast groups in an ibsim fabric: the test bed's `mcast-join` tool sends SA
//! MCMemberRecord joins and leaves through libibumad under umad2sim, as IPoIB and MPI do on
//! real hosts, so the SM builds (and the tests read back) the groups' spanning trees.

use std::path::PathBuf;
use std::sync::OnceLock;

use ibfabric::Fabric;
use ibfabric::topology::NodeKind;

use super::Ibsim;

/// The IPoIB IPv4 broadcast group of the default partition: OpenSM creates it at start-up
/// and every IPoIB host joins it.
pub const IPOIB_BROADCAST: &str = "ff12:401b:ffff::ffff:ffff";

/// Builds `mcast-join` (with the cargo, target dir and profile this test runs under) and
/// returns its path.
pub fn mcast_join_bin() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| super::build_package("mcast-join").join("mcast-join"))
}

/// How a group comes to exist: it is already there (the IPoIB broadcast group), or the first
/// join creates it with SL `sl`.
#[derive(Debug, Clone, Copy)]
pub enum Creation {
    Existing,
    CreateWithSl(u8),
}

/// A group joined by some ports, as the SA answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    pub mlid: u16,
    pub sl: u8,
}

/// Joins `port_guids` to the group `mgid` as full members; returns the MLID and SL the SA
/// answered (the same for every member).
///
/// # Panics
/// If the tool fails (its stderr in the message) or the answers disagree.
pub fn join(sim: &Ibsim, mgid: &str, port_guids: &[u64], creation: Creation) -> Joined {
    let mut args = vec!["join".to_string(), "--mgid".into(), mgid.into()];
    if let Creation::CreateWithSl(sl) = creation {
        args.extend(["--create".into(), "--sl".into(), sl.to_string()]);
    }
    let answers = run(sim, args, port_guids);
    let mut joined: Option<Joined> = None;
    for line in answers.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"joined"), "unexpected answer: {line}");
        let mlid = u16::from_str_radix(words[4].trim_start_matches("0x"), 16).expect("mlid");
        let sl = words[6].parse().expect("sl");
        let this = Joined { mlid, sl };
        if let Some(first) = &joined {
            assert_eq!(first, &this, "members of {mgid} got different groups");
        }
        joined = Some(this);
    }
    joined.expect("at least one member joined")
}

/// Which of `port_guids` the SA lists as members of the group `mgid` (asked port by port:
/// saquery under umad2sim sees only the first MAD of a longer answer).
pub fn members(sim: &Ibsim, mgid: &str, port_guids: &[u64]) -> Vec<u64> {
    run(
        sim,
        vec!["query".into(), "--mgid".into(), mgid.into()],
        port_guids,
    )
    .lines()
    .filter(|line| line.starts_with("member "))
    .map(|line| {
        let guid = line.split_whitespace().nth(1).expect("a GUID");
        u64::from_str_radix(guid.trim_start_matches("0x"), 16).expect("hex GUID")
    })
    .collect()
}

/// Removes `port_guids` from the group `mgid`.
pub fn leave(sim: &Ibsim, mgid: &str, port_guids: &[u64]) {
    run(
        sim,
        vec!["leave".into(), "--mgid".into(), mgid.into()],
        port_guids,
    );
}

/// How long the tool waits for each answer and how often it resends: an SA busy with a sweep's
/// SMPs in the simulator can take seconds to answer, and IPoIB and MPI keep resending too.
const PATIENCE: [&str; 4] = ["--timeout-ms", "2000", "--retries", "14"];

fn run(sim: &Ibsim, mut args: Vec<String>, port_guids: &[u64]) -> String {
    let list = sim
        .dir()
        .join(format!("mcast-members-{}.txt", std::process::id()));
    let text: String = port_guids.iter().map(|g| format!("0x{g:016x}\n")).collect();
    std::fs::write(&list, text).expect("write member list");
    args.extend(["--guids-from".into(), list.display().to_string()]);
    args.extend(PATIENCE.map(String::from));
    let out = sim
        .command(mcast_join_bin().to_str().expect("utf-8 path"))
        .args(&args)
        .output()
        .expect("run mcast-join");
    assert!(
        out.status.success(),
        "mcast-join {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The port GUIDs of the fabric's hosts (port 1 of every CA), in node order.
pub fn host_port_guids(fabric: &Fabric) -> Vec<u64> {
    fabric
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Ca)
        .filter_map(|n| n.ports.get(1).map(|p| p.guid.0))
        .collect()
}
