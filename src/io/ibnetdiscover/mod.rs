//! `ibnetdiscover` topology dumps: reading them into a [`Fabric`] and writing a fabric in the
//! exact format of the real tool (infiniband-diags `dump_topology`).
//!
//! # What the reader accepts
//!
//! Every output variant of the tool: plain, `-g` (chassis grouping: `Chassis …`,
//! `Non-Chassis Nodes`, `switchguid=…\t# …`, `[ext N]` port suffixes), `-f` (` s=4 w=2 v=4`
//! suffixes), `-m` (extra header comments), `-s` progress lines, and dumps made with
//! `--node-name-map` (remapped switch header and peer descriptions). Tabs or runs of spaces
//! separate fields; a `0x` on GUIDs is optional; NodeDescriptions may contain `#` and `"` (a
//! description runs to the *last* quote of the line, which must be followed by ` lid N` on
//! port lines); `??` widths and `???` speeds read as unknown; `sysimgguid=` and blank lines may
//! be missing; routers (`Rt`), multi-port CAs and SHARP aggregation nodes are kept.
//!
//! Lines that cannot matter (stderr noise such as `src/query_smp.c:195; umad … bad status
//! 110`, `ibwarn:` lines, `-s` progress lines) are skipped with a warning. A line that starts
//! like a node header (`Switch`, `Ca`, `Rt` and a blank), a port line (`[`) or a
//! `key=value` line but is malformed stops the parse with a [`ParseError`] naming the line.
//!
//! # How the fabric is built
//!
//! * Nodes in dump order, with kind, port count, description, node GUID, vendor and device id
//!   and system image GUID from the block. A switch's LID and LMC (from its header) go to port
//!   0; switch ports share the node GUID. A CA or router port takes its GUID, LID and LMC from
//!   its own port line (`[1](portguid) … # lid N lmc M …`); ports without a line keep the
//!   defaults of [`Fabric::add_node`].
//! * **Names**: the node-name-map's name when the map has the node GUID; otherwise the
//!   NodeDescription when it is non-blank and no other node in the dump has the same one;
//!   otherwise the ibnetdiscover id (`S-0002c90300001234`, `H-…`, `R-…`). When two nodes would
//!   get the same name (e.g. a map naming two GUIDs alike), both get their ids, with a warning.
//! * **Cables**: every cable appears twice, once per end. Matching half-edges become one
//!   [`Link`](crate::topology::Link); when the two ends report different widths or speeds the
//!   lower one is kept, with a warning. A half-edge whose peer node is not in the dump (a
//!   partial dump taken mid-wiring) goes to [`Dump::dangling`]. A half-edge whose peer port
//!   lists a different cable is dropped with a warning naming both lines; one whose peer node is
//!   present but lists nothing on that port is kept, with a warning. A loopback cable between
//!   two ports of one node is an ordinary link.

mod parser;
#[cfg(test)]
mod tests;
mod write;

pub use write::write;

use super::diagnostic::{Diagnostic, ParseError};
use super::node_name_map::NodeNameMap;
use crate::topology::{Fabric, Guid, LinkSpeed, LinkWidth, NodeId, NodeKind};
use parser::Parser;

pub use crate::topology::{AGGREGATION_NODE_DESCRIPTION, is_aggregation_node};

/// The ibnetdiscover id of a node: `S-`, `H-` or `R-` and the node GUID in 16 hex digits.
pub fn node_id(kind: NodeKind, guid: Guid) -> String {
    format!("{}-{:016x}", kind.id_prefix(), guid.0)
}

/// A parsed dump.
#[derive(Debug, Clone)]
pub struct Dump {
    /// The nodes and the cables whose both ends are in the dump. Named `ibnetdiscover`.
    pub fabric: Fabric,
    /// Skipped lines and inconsistencies, in line order.
    pub warnings: Vec<Diagnostic>,
    /// Half-edges whose peer node is not in the dump.
    pub dangling: Vec<DanglingCable>,
    /// Number of port lines (half-edges) read.
    pub port_lines: usize,
}

/// A cable seen from one end only, because the node at the other end is not in the dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingCable {
    /// Line of the port line.
    pub line: usize,
    /// The node that reported the cable.
    pub node: NodeId,
    /// Its node GUID.
    pub node_guid: Guid,
    /// Its port.
    pub port: u8,
    /// The kind the peer id claims (`S-`, `H-`, `R-`; `None` for `?-`).
    pub peer_kind: Option<NodeKind>,
    /// The peer's node GUID.
    pub peer_guid: Guid,
    /// The peer's port.
    pub peer_port: u8,
    /// The peer's port GUID, when printed (peers that are not switches).
    pub peer_port_guid: Option<Guid>,
    /// The peer's description as printed (node-name-map remapped if the dump was).
    pub peer_desc: String,
    /// Active width, `None` for `??`.
    pub width: Option<LinkWidth>,
    /// Active speed, `None` for `???`.
    pub speed: Option<LinkSpeed>,
}

/// Reads an ibnetdiscover dump. `names` supplies node names by node GUID (see the module
/// documentation for the naming rule).
///
/// # Errors
/// The first line that looks like a node header, port line or `key=value` line but is
/// malformed, or that contradicts the dump (a node listed twice, a port beyond the node's
/// port count, two different port lines for one port).
pub fn parse(text: &str, names: Option<&NodeNameMap>) -> Result<Dump, ParseError> {
    let mut parser = Parser::default();
    for (i, line) in text.lines().enumerate() {
        parser.line(i + 1, line)?;
    }
    parser.finish(names)
}
