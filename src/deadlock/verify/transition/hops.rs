//! The next hops of one destination during a change: per switch, the link of its old entry and
//! the link of its new one, over the live cables, and a directed cycle of their union if there
//! is one.
//!
//! A switch is written at some moment between the start and the end of the change, and a
//! packet meets it before or after that moment, independently of every other switch; so a
//! packet's path is any walk of the union graph. If the union has no cycle, every such walk is
//! simple and some order of the updates realises it with each switch fixed at old or new; if it
//! has one, some order leaves every switch of a simple cycle on the entry that makes it — a
//! forwarding loop, which InfiniBand has no hop limit to end.

use crate::routing::ForwardingTables;
use crate::routing::walk::{Broken, BrokenKind, Dest, NONE, Network, Step, step};
use crate::topology::PortRef;

/// Which tables make a hop of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Entry {
    /// Only the old tables.
    Old,
    /// Only the new tables.
    New,
    /// Both (the entry did not change).
    Both,
}

/// What an entry does on the live fabric.
enum Hop {
    /// Leaves on this link (to a switch, or delivering to the destination's port).
    Link(u32),
    /// The switch keeps the packet (its own LID).
    Kept,
    /// Dropped: no entry, a port without a live cable, or the wrong port.
    Dropped,
}

/// Per switch, the links its new and its old entry send the destination out on ([`NONE`] for
/// none), with the scratch of the cycle search.
pub(super) struct MixedHops {
    /// `[new, old]` per switch; `old` is [`NONE`] too when it equals `new`.
    next: Vec<[u32; 2]>,
    /// Per switch, whether its old and new entries leave on the same link.
    same: Vec<bool>,
    state: Vec<u8>,
    stack: Vec<(u32, u8)>,
}

const UNSEEN: u8 = 0;
const ON_PATH: u8 = 1;
const DONE: u8 = 2;

impl super::super::walker::NextHops for MixedHops {
    fn next_hops(&self, v: usize) -> [u32; 2] {
        self.next[v]
    }
}

/// What [`MixedHops::build`] found wrong with the tables for one destination.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Failures {
    /// Old entries that drop the packet on the live fabric (a lost cable, a dead port, no
    /// entry).
    pub(super) old_dropped: usize,
    /// Entries that differ between the old and the new tables.
    pub(super) changed: usize,
}

impl MixedHops {
    pub(super) fn new(switches: usize) -> Self {
        Self {
            next: vec![[NONE; 2]; switches],
            same: vec![false; switches],
            state: vec![UNSEEN; switches],
            stack: Vec::new(),
        }
    }

    /// The next hops of `dest` under the `new` and `old` tables. Failures of the new tables go
    /// to `broken` (as a snapshot check reports them); old entries that drop are only counted:
    /// their packets are lost, which makes no dependency.
    pub(super) fn build(
        &mut self,
        net: &Network<'_>,
        new: &ForwardingTables,
        old: &ForwardingTables,
        dest: &Dest,
        mut broken: impl FnMut(&Broken<'_>),
    ) -> Failures {
        let mut failures = Failures::default();
        for s in 0..net.len() {
            let node = net.switches[s];
            if new.port(node, dest.lid) != old.port(node, dest.lid) {
                failures.changed += 1;
            }
            let new_hop = hop(net, new, dest, s, |kind, port, arrived| {
                broken(&Broken {
                    kind,
                    lid: dest.lid,
                    switch: s as u32,
                    port,
                    arrived,
                    cycle: &[],
                });
            });
            let old_hop = hop(net, old, dest, s, |_, _, _| failures.old_dropped += 1);
            let link = |h: Hop| match h {
                Hop::Link(l) => l,
                Hop::Kept | Hop::Dropped => NONE,
            };
            let (n, o) = (link(new_hop), link(old_hop));
            self.same[s] = o == n;
            self.next[s] = [n, if o == n { NONE } else { o }];
        }
        failures
    }

    /// Which tables send switch `s` out on link `l`.
    pub(super) fn entry(&self, s: usize, l: u32) -> Entry {
        match self.next[s] {
            [n, _] if n == l && self.same[s] => Entry::Both,
            [n, _] if n == l => Entry::New,
            _ => Entry::Old,
        }
    }

    /// A directed cycle of the union of the switches' old and new next hops: (switch, link
    /// it leaves on) in order, the last link leading back to the first switch. `None` when
    /// no update order can loop.
    pub(super) fn find_cycle(&mut self, net: &Network<'_>) -> Option<Vec<(u32, u32)>> {
        self.state.fill(UNSEEN);
        for root in 0..net.len() {
            if self.state[root] != UNSEEN {
                continue;
            }
            self.state[root] = ON_PATH;
            self.stack.clear();
            self.stack.push((root as u32, 0));
            while let Some(&(v, i)) = self.stack.last() {
                let v = v as usize;
                if usize::from(i) >= 2 {
                    self.state[v] = DONE;
                    self.stack.pop();
                    continue;
                }
                self.stack.last_mut().expect("not empty").1 += 1;
                let l = self.next[v][usize::from(i)];
                if l == NONE {
                    continue;
                }
                let w = net.links[l as usize].to_switch;
                if w == NONE {
                    continue;
                }
                match self.state[w as usize] {
                    UNSEEN => {
                        self.state[w as usize] = ON_PATH;
                        self.stack.push((w, 0));
                    }
                    ON_PATH => {
                        let from = self
                            .stack
                            .iter()
                            .position(|&(u, _)| u == w)
                            .expect("a switch on the path is on the stack");
                        // The link each switch of the cycle took is the one its counter just
                        // passed.
                        return Some(
                            self.stack[from..]
                                .iter()
                                .map(|&(u, i)| (u, self.next[u as usize][usize::from(i) - 1]))
                                .collect(),
                        );
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

/// What switch `s`'s entry in `tables` does with `dest` on the live fabric; `fail` hears why
/// it drops (kind, the port named, where the packet arrives instead).
fn hop(
    net: &Network<'_>,
    tables: &ForwardingTables,
    dest: &Dest,
    s: usize,
    mut fail: impl FnMut(BrokenKind, Option<u8>, Option<PortRef>),
) -> Hop {
    match step(net, tables, dest, s) {
        Step::Next { link, .. } | Step::Delivered(link) if link != NONE => Hop::Link(link),
        Step::Next { .. } | Step::Delivered(_) => Hop::Kept,
        Step::Fail(kind, port, arrived) => {
            fail(kind, port, arrived);
            Hop::Dropped
        }
    }
}
