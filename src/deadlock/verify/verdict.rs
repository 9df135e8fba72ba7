//! What the verifier reports: the verdict, and the cycles and cyclic components of the channel
//! dependency graph with the routes that form them.

use serde::{Deserialize, Serialize};

use crate::deadlock::network::BrokenRoutes;

/// A route named in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteExample {
    /// Source LID.
    pub slid: u16,
    /// Destination LID.
    pub dlid: u16,
    /// Its SL.
    pub sl: u8,
    /// The sending port (`name[port]`).
    pub source: String,
    /// The port that owns the destination LID.
    pub destination: String,
}

/// One channel of a cycle, and the dependency on the next channel of the cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CycleChannel {
    /// The directed link, `switch[port] -> switch[port]`.
    pub link: String,
    /// Its virtual lane.
    pub vl: u8,
    /// Routes that arrive on this channel and leave on the next one of the cycle (each once,
    /// whatever the SLs it makes this dependency on).
    pub routes: u64,
    /// Some of them.
    pub examples: Vec<RouteExample>,
    /// Multicast groups (MLIDs, ascending, as many as examples are listed) whose trees make
    /// this dependency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<u16>,
    /// In a check of a change: destination LIDs (ascending, as many as examples are listed)
    /// whose routes, mixing old and new tables, make this dependency (`routes` and `examples`
    /// are then not counted: a mixed route is not one table's route).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dlids: Vec<u16>,
}

/// A cycle of the channel dependency graph: each channel depends on the next, the last on the
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycle {
    /// The channels in order.
    pub channels: Vec<CycleChannel>,
}

/// A strongly connected component of the CDG that holds a cycle: every channel in it waits,
/// through some chain of dependencies, on every other, so breaking one cycle of it may leave
/// others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CyclicComponent {
    /// Channels (link, VL) in it.
    pub channels: usize,
    /// Dependencies between its channels.
    pub dependencies: usize,
    /// Its channels per VL, ascending by VL.
    pub vls: Vec<VlChannels>,
    /// One of its cycles (a shortest one through its first channel); `None` for the first
    /// component, whose cycle is [`Verdict::cycle`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<Cycle>,
}

/// How many channels of a component are on one VL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlChannels {
    /// The VL.
    pub vl: u8,
    /// Channels on it.
    pub channels: usize,
}

/// The verifier's finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Source LIDs.
    pub sources: usize,
    /// Destination LIDs.
    pub destinations: usize,
    /// (source LID, destination LID) routes that reach their destination and were checked.
    pub routes: u64,
    /// Channels (link, VL) some route uses.
    pub channels: usize,
    /// Dependencies between channels (edges of the CDG).
    pub dependencies: usize,
    /// The VLs routes use.
    pub vls: Vec<u8>,
    /// Walks through the tables that fail (their routes are not in the CDG).
    pub broken: BrokenRoutes,
    /// Forwarding loops among them: packets that circle forever hold their channels forever.
    pub loops: usize,
    /// (link, SL) states where a route is mapped to VL 15 and dropped.
    pub dropped: BrokenRoutes,
    /// A cycle, when there is one: the first the depth-first search meets.
    pub cycle: Option<Cycle>,
    /// Every strongly connected component of the CDG with a cycle; the first holds
    /// [`Self::cycle`], the others follow by their first channel (link, VL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cyclic_components: Vec<CyclicComponent>,
    /// The multicast groups checked with the routes, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast: Option<MulticastCounts>,
}

/// What the multicast groups add to the channel dependency graph of the unicast routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MulticastCounts {
    /// Groups (MLIDs with an entry in some switch).
    pub groups: usize,
    /// (switch, MLID) entries.
    pub entries: usize,
    /// Dependencies the groups make that no unicast route makes.
    pub dependencies: usize,
    /// Channels the groups use that no unicast route uses.
    pub channels: usize,
}

impl Verdict {
    /// No cycle in the CDG and no forwarding loop.
    pub fn is_deadlock_free(&self) -> bool {
        self.cycle.is_none() && self.loops == 0
    }
}
