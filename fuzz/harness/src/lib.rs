//! What each fuzz target does with its input: every reader of a file that the tools or the
//! OpenSM plugin take, called as the program that reads the file calls it, and then the first
//! step that trusts what it read (a dump becomes a fabric, a plan its fabric, a saved session
//! its subnets).
//!
//! One home for both users of the targets: the libFuzzer binaries under `fuzz/libfuzzer`
//! (`cargo fuzz`, one binary per [`TARGETS`] entry) and the replay test of this crate, which
//! runs every input of `fuzz/corpus` and `fuzz/regressions` in the normal test run ([`replay`]).
//! The OpenSM plugin's own readers (its configuration, its saved session) are targets of the
//! plugin crate (`osmlayered::fuzz`): a binary that links the plugin's library links OpenSM's
//! entry points too, so they are replayed by the plugin's unit tests, through [`replay`].
//!
//! The property a target checks is the readers' contract: return a value or an error that
//! says something — never panic. Allocation and time are bounded by the fuzzer's limits
//! (`-malloc_limit_mb`, `-timeout`; see `fuzz/README.md`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ibfabric::Fabric;
use ibfabric::io::diagnostic::ParseError;
use ibfabric::io::fabric_document::FabricDocument;
use ibfabric::io::names::{NodeResolver, Want};
use ibfabric::io::node_name_map::NodeNameMap;
use ibfabric::io::{
    hostfile, iblinkinfo, ibnetdiscover, lfts, mfts, path_sl, simgrid_bench, sl2vl,
};
use ibfabric::plan;
use ibfabric::session::sweep_record;
use ibfabric::topology::TopologySpec;

/// One fuzz target: its name (the libFuzzer binary's and the corpus folder's) and what it does
/// with a text input.
pub struct Target {
    /// Name of the binary and of its folders under `fuzz/corpus` and `fuzz/regressions`.
    pub name: &'static str,
    /// Reads the input; panics only where the reader breaks its contract.
    pub read: fn(&str),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "ibnetdiscover",
        read: read_ibnetdiscover,
    },
    Target {
        name: "iblinkinfo",
        read: read_iblinkinfo,
    },
    Target {
        name: "lfts",
        read: read_lfts,
    },
    Target {
        name: "mfts",
        read: read_mfts,
    },
    Target {
        name: "group_sls",
        read: read_group_sls,
    },
    Target {
        name: "sl2vl",
        read: read_sl2vl,
    },
    Target {
        name: "path_sl",
        read: read_path_sl,
    },
    Target {
        name: "node_name_map",
        read: read_node_name_map,
    },
    Target {
        name: "hostfile",
        read: read_hostfile,
    },
    Target {
        name: "plan",
        read: read_plan,
    },
    Target {
        name: "fabric_document",
        read: read_fabric_document,
    },
    Target {
        name: "topology_spec",
        read: read_topology_spec,
    },
    Target {
        name: "sweep_log",
        read: read_sweep_log,
    },
    Target {
        name: "simgrid_result",
        read: read_simgrid_result,
    },
];

/// Runs the target `name` on `data` ([`run_text`]).
///
/// # Panics
/// For an unknown target name, and wherever the target's reader breaks its contract.
pub fn run(name: &str, data: &[u8]) {
    let target = TARGETS
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no fuzz target {name:?}"));
    run_text(target.read, data);
}

/// Runs `read` on `data` if it is text. The files are text: input that is not UTF-8 is refused
/// by every program before a reader sees it (`read_to_string`), so it is skipped here.
pub fn run_text(read: fn(&str), data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        read(text);
    }
}

/// Runs `read`, the target `target`, on each of its inputs: every file of `fuzz/corpus/<target>`
/// (the seeds and what `cargo fuzz cmin` kept of the runs; there must be some) and of
/// `fuzz/regressions/<target>` (each finding, minimised). Returns how many of each it read.
///
/// # Panics
/// Naming the input, if the target panics on one; if the corpus is empty.
pub fn replay(target: &str, read: fn(&str)) -> (usize, usize) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = inputs(&fuzz.join("corpus").join(target));
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/{target} has no inputs (bash fuzz/seeds.sh writes its seeds)"
    );
    let regressions = inputs(&fuzz.join("regressions").join(target));
    for input in corpus.iter().chain(&regressions) {
        let data = fs::read(input).expect("read a fuzz input");
        let outcome = std::panic::catch_unwind(|| run_text(read, &data));
        assert!(outcome.is_ok(), "{target}: {} panicked", input.display());
    }
    (corpus.len(), regressions.len())
}

/// The files of `dir` (none when it does not exist), in name order.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("read a fuzz input folder").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Largest fabric a spec is built into (switches plus endpoints): building is the reader's
/// next step, and what matters is that a larger spec is refused or sized without building.
const MAX_BUILT_NODES: usize = 2_000;

/// The fabric the table readers read against: the small fat tree of `fuzz/seeds.sh`, as
/// `ibnetdiscover` printed it under OpenSM (its LIDs are those of the seed dumps).
fn fabric() -> &'static Fabric {
    static FABRIC: OnceLock<Fabric> = OnceLock::new();
    FABRIC.get_or_init(|| {
        ibnetdiscover::parse(include_str!("../fabric.topo"), None)
            .expect("the harness's fabric.topo is an ibnetdiscover dump")
            .fabric
    })
}

/// A reader's outcome: a value, or an error that says what went wrong.
pub fn checked(outcome: Result<(), impl std::fmt::Display>) {
    if let Err(e) = outcome {
        refused(e);
    }
}

/// An error must say what went wrong.
pub fn refused(error: impl std::fmt::Display) {
    assert!(
        !error.to_string().trim().is_empty(),
        "an error without a message"
    );
}

/// A reader's error must name a line of `text` (or the line after the last, for what ended
/// too early) and say what was expected there.
fn refused_at_line(text: &str, error: &ParseError) {
    let lines = text.lines().count();
    assert!(
        (1..=lines + 1).contains(&error.line),
        "{error}: no such line in {lines} lines"
    );
    assert!(
        !error.expected.trim().is_empty(),
        "{error}: nothing expected"
    );
}

fn read_ibnetdiscover(text: &str) {
    match ibnetdiscover::parse(text, None) {
        Ok(dump) => {
            // What was read is a fabric the writer can print and the reader read back alike.
            let again = ibnetdiscover::parse(&ibnetdiscover::write(&dump.fabric), None)
                .unwrap_or_else(|e| panic!("the written dump does not read back: {e}"));
            assert_eq!(again.fabric.nodes().len(), dump.fabric.nodes().len());
            assert_eq!(again.fabric.links().len(), dump.fabric.links().len());
        }
        Err(e) => refused_at_line(text, &e),
    }
}

fn read_iblinkinfo(text: &str) {
    if let Err(e) = iblinkinfo::parse(text) {
        refused_at_line(text, &e);
    }
}

fn read_lfts(text: &str) {
    let mut fabric = fabric().clone();
    match lfts::parse(text, &fabric) {
        // The destination comments name ports: taking LIDs from them is what `analyze` does
        // for a fabric without LIDs.
        Ok(dump) => {
            if let Err(e) = lfts::apply_destination_lids(&mut fabric, &dump.destinations) {
                refused(e);
            }
        }
        Err(e) => refused_at_line(text, &e),
    }
}

fn read_mfts(text: &str) {
    if let Err(e) = mfts::parse(text, fabric()) {
        refused_at_line(text, &e);
    }
}

fn read_group_sls(text: &str) {
    if let Err(e) = mfts::group_sls(text) {
        refused_at_line(text, &e);
    }
}

fn read_sl2vl(text: &str) {
    if let Err(e) = sl2vl::parse(text, fabric(), [15; 16]) {
        refused_at_line(text, &e);
    }
}

fn read_path_sl(text: &str) {
    if let Err(e) = path_sl::parse(text) {
        refused_at_line(text, &e);
    }
}

fn read_node_name_map(text: &str) {
    if let Err(e) = NodeNameMap::parse(text) {
        refused_at_line(text, &e);
    }
}

fn read_hostfile(text: &str) {
    let lines = hostfile::parse_hosts(text);
    if let Err(e) = NodeResolver::new(fabric(), None).resolve_lines(&lines, Want::Host) {
        refused(e);
    }
}

fn read_plan(text: &str) {
    // As `cabling verify` and the plugin read it: by the extension, or by the content.
    for extension in [None, Some("csv"), Some("yaml")] {
        match plan::text::from_text(text, "fuzz", extension) {
            Ok(plan) => {
                if let Err(e) = plan.to_fabric() {
                    refused(e);
                }
            }
            Err(e) => refused(e),
        }
    }
}

fn read_fabric_document(text: &str) {
    let json = serde_json::from_str::<FabricDocument>(text).map_err(|e| e.to_string());
    let yaml = yaml_serde::from_str::<FabricDocument>(text).map_err(|e| e.to_string());
    for document in [json, yaml] {
        match document {
            Ok(document) => {
                if let Err(e) = document.to_fabric() {
                    refused(e);
                }
            }
            Err(e) => refused(e),
        }
    }
}

fn read_topology_spec(text: &str) {
    let spec = match text.parse::<TopologySpec>() {
        Ok(spec) => spec,
        Err(e) => return refused(e),
    };
    match spec.construction() {
        Ok(construction) => {
            let size = construction.size();
            if size.switches + size.endpoints <= MAX_BUILT_NODES {
                let fabric = construction.build();
                assert_eq!(fabric.switches().count(), size.switches, "{spec}: switches");
            }
        }
        Err(e) => refused(e),
    }
}

fn read_sweep_log(text: &str) {
    if let Err(e) = sweep_record::parse_sweep_log(text) {
        refused(e);
    }
}

fn read_simgrid_result(text: &str) {
    if let Err(e) = simgrid_bench::parse_result(text) {
        refused_at_line(text, &e);
    }
}
