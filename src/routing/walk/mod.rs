//! The walk of forwarding tables: where one destination LID leads from every switch.
//!
//! A packet for a LID enters the switches somewhere and each switch forwards it on the port its
//! table names, until a switch delivers it — on the cable to the port that owns the LID, or to
//! itself (port 0) for its own LID. The walk can fail four ways ([`BrokenKind`]); each failure
//! is reported once, at the switch where it happens, and every switch whose walk ends in it is
//! marked with it.
//!
//! [`DestWalk`] walks one destination from every switch in time linear in the switches: walks
//! that join an already resolved switch stop there (memoisation), so each switch is stepped
//! once. The analyser, the deadlock schemes and their verifier, and rank placement all walk
//! with it over the one index of the fabric, [`Network`].

mod network;

use std::fmt;

pub use network::{Dest, Endpoint, Link, Network};

use crate::routing::ForwardingTables;
use crate::topology::PortRef;

/// "None" in the dense index vectors (switches, links, cables, failures).
pub const NONE: u32 = u32::MAX;

/// Hop count of a switch whose walk fails.
pub const FAILED: u32 = u32::MAX;

/// How the walk of a destination LID can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokenKind {
    /// No entry (port 255) for the LID.
    NoEntry,
    /// The entry names a port without a cable, or a port the switch does not have.
    DeadEnd,
    /// The walk comes back to a switch it has visited.
    Loop,
    /// The packet leaves the switches at a port that does not own the LID (another CA or
    /// router port, or the management port of another switch).
    WrongDestination,
}

impl BrokenKind {
    /// Every kind, in declaration order (`ALL[kind as usize] == kind`).
    pub const ALL: [Self; 4] = [
        Self::NoEntry,
        Self::DeadEnd,
        Self::Loop,
        Self::WrongDestination,
    ];
}

impl fmt::Display for BrokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoEntry => "no entry",
            Self::DeadEnd => "dead end",
            Self::Loop => "loop",
            Self::WrongDestination => "wrong destination",
        })
    }
}

/// A walk that fails, at the switch where it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Broken<'w> {
    /// What went wrong.
    pub kind: BrokenKind,
    /// The destination LID.
    pub lid: u16,
    /// Dense index of the switch where it happens (for a loop, the switch the walk comes back
    /// to).
    pub switch: u32,
    /// The port the entry names, when there is one (not for a loop or a missing entry).
    pub port: Option<u8>,
    /// Where the packet arrives instead of the destination (wrong destination only).
    pub arrived: Option<PortRef>,
    /// For a loop, the switches of the loop from `switch` on (the walk comes back to `switch`
    /// after the last); empty otherwise.
    pub cycle: &'w [u32],
}

const UNKNOWN: u8 = 0;
const VISITING: u8 = 1;
const DONE: u8 = 2;

/// Where one destination LID leads from every switch, with reusable buffers: walk a
/// destination, read the result, walk the next one.
#[derive(Debug, Clone)]
pub struct DestWalk {
    /// Link each switch sends the LID out on: towards the next switch, or the delivery link at
    /// the last switch ([`NONE`] there for a switch's own LID, and at every switch whose walk
    /// fails).
    next: Vec<u32>,
    /// Inter-switch hops to the delivering switch, [`FAILED`] if the walk fails.
    hops: Vec<u32>,
    /// The failure id each failed switch's walk ends in (as the `broken` callback gave it).
    failure: Vec<u32>,
    state: Vec<u8>,
    stack: Vec<u32>,
}

impl DestWalk {
    /// Buffers for a fabric of `switches` switches.
    pub fn new(switches: usize) -> Self {
        Self {
            next: vec![NONE; switches],
            hops: vec![FAILED; switches],
            failure: vec![NONE; switches],
            state: vec![UNKNOWN; switches],
            stack: Vec::new(),
        }
    }

    /// Walks `dest` from every switch of `net` through `tables`. Calls `broken` once per
    /// failure, at the switch where it happens; the id it returns marks every switch whose
    /// walk ends in that failure ([`Self::failure`]). Returns how many switches deliver.
    ///
    /// Linear in the number of switches: every switch is stepped once.
    pub fn walk(
        &mut self,
        net: &Network<'_>,
        tables: &ForwardingTables,
        dest: &Dest,
        mut broken: impl FnMut(&Broken<'_>) -> u32,
    ) -> usize {
        let n = net.len();
        self.next.resize(n, NONE);
        self.hops.resize(n, FAILED);
        self.failure.resize(n, NONE);
        self.state.resize(n, UNKNOWN);
        self.state.fill(UNKNOWN);
        self.next.fill(NONE);
        let mut reached = 0;
        for s in 0..n {
            if self.state[s] != UNKNOWN {
                continue;
            }
            self.stack.clear();
            let mut cur = s;
            // The outcome at the end of the walk: hops from `cur`, or the failure id.
            let (mut hops, failure) = loop {
                match self.state[cur] {
                    DONE => break (self.hops[cur], self.failure[cur]),
                    VISITING => {
                        let start = self.stack.iter().position(|&v| v as usize == cur);
                        let id = broken(&Broken {
                            kind: BrokenKind::Loop,
                            lid: dest.lid,
                            switch: cur as u32,
                            port: None,
                            arrived: None,
                            cycle: &self.stack[start.unwrap_or(0)..],
                        });
                        break (FAILED, id);
                    }
                    _ => {}
                }
                match step(net, tables, dest, cur) {
                    Step::Next { link, to } => {
                        self.state[cur] = VISITING;
                        self.next[cur] = link;
                        self.stack.push(cur as u32);
                        cur = to as usize;
                    }
                    Step::Delivered(link) => {
                        self.state[cur] = DONE;
                        (self.next[cur], self.hops[cur], self.failure[cur]) = (link, 0, NONE);
                        reached += 1;
                        break (0, NONE);
                    }
                    Step::Fail(kind, port, arrived) => {
                        let id = broken(&Broken {
                            kind,
                            lid: dest.lid,
                            switch: cur as u32,
                            port,
                            arrived,
                            cycle: &[],
                        });
                        self.state[cur] = DONE;
                        (self.hops[cur], self.failure[cur]) = (FAILED, id);
                        break (FAILED, id);
                    }
                }
            };
            while let Some(v) = self.stack.pop() {
                let v = v as usize;
                if hops == FAILED {
                    self.next[v] = NONE;
                } else {
                    hops += 1;
                    reached += 1;
                }
                (self.state[v], self.hops[v], self.failure[v]) = (DONE, hops, failure);
            }
        }
        reached
    }

    /// Whether switch `s` delivers the LID (its walk does not fail).
    pub fn reaches(&self, s: usize) -> bool {
        self.hops[s] != FAILED
    }

    /// Inter-switch hops from switch `s` to the delivering switch ([`FAILED`] if its walk
    /// fails).
    pub fn hops(&self, s: usize) -> u32 {
        self.hops[s]
    }

    /// Inter-switch hops from every switch.
    pub fn all_hops(&self) -> &[u32] {
        &self.hops
    }

    /// The link switch `s` sends the LID out on (see [`Self::next_links`]).
    pub fn next(&self, s: usize) -> u32 {
        self.next[s]
    }

    /// Per switch, the link it sends the LID out on: towards the next switch, or the delivery
    /// link at the last switch; [`NONE`] at the last switch for a switch's own LID and at
    /// every switch whose walk fails.
    pub fn next_links(&self) -> &[u32] {
        &self.next
    }

    /// The failure id the walk from switch `s` ends in ([`NONE`] if it delivers).
    pub fn failure(&self, s: usize) -> u32 {
        self.failure[s]
    }

    /// The links from switch `s` to the destination: the inter-switch links, then the
    /// delivery link (none for a switch's own LID). Empty for a switch whose walk fails.
    pub fn path<'w>(&'w self, net: &'w Network<'_>, s: usize) -> impl Iterator<Item = u32> + 'w {
        let mut cur = s as u32;
        std::iter::from_fn(move || {
            let l = *self.next.get(cur as usize)?;
            if l == NONE {
                cur = NONE;
                return None;
            }
            cur = net.links[l as usize].to_switch;
            Some(l)
        })
    }

    /// The cables (dense numbers, [`Network::cables`]) from switch `s` to the delivering
    /// switch. Empty for a switch whose walk fails.
    pub fn cables<'w>(&'w self, net: &'w Network<'_>, s: usize) -> impl Iterator<Item = u32> + 'w {
        self.path(net, s)
            .map(|l| net.cable_of_link[l as usize])
            .take_while(|&c| c != NONE)
    }
}

/// What the table of one switch does with a destination.
pub(crate) enum Step {
    /// On to the switch `to` over `link`.
    Next { link: u32, to: u32 },
    /// Delivered, on the delivery link ([`NONE`] for a switch's own LID).
    Delivered(u32),
    /// The walk fails here: kind, the port the entry names, where the packet arrives instead.
    Fail(BrokenKind, Option<u8>, Option<PortRef>),
}

/// What the table of dense switch `s` does with `dest`.
pub(crate) fn step(net: &Network<'_>, tables: &ForwardingTables, dest: &Dest, s: usize) -> Step {
    let node = net.switches[s];
    let Some(port) = tables.port(node, dest.lid) else {
        return Step::Fail(BrokenKind::NoEntry, None, None);
    };
    if port == 0 {
        return if dest.link == NONE && dest.switch as usize == s {
            Step::Delivered(NONE)
        } else {
            let own = PortRef { node, port: 0 };
            Step::Fail(BrokenKind::WrongDestination, Some(0), Some(own))
        };
    }
    let Some(link) = net.link_at(PortRef { node, port }) else {
        return Step::Fail(BrokenKind::DeadEnd, Some(port), None);
    };
    let l = net.links[link as usize];
    if l.to_switch != NONE {
        Step::Next {
            link,
            to: l.to_switch,
        }
    } else if link == dest.link {
        Step::Delivered(link)
    } else {
        Step::Fail(BrokenKind::WrongDestination, Some(port), Some(l.to))
    }
}

#[cfg(test)]
mod tests;
