//! The up*/down* switch order for hierarchies of three levels and more (k-ary n-trees,
//! three-level folded Clos): higher levels closer to the root, so that the minimal routes,
//! which rise to a common ancestor and fall, keep their shape in the cable order.
//!
//! An up*/down* order from one root by breadth-first distance ([`CableOrder::for_routing`]'s
//! order elsewhere) puts the top switches that do not share a neighbour with the root far
//! from it: on a three-level tree a leaf's cable up into the middle switch below such a top
//! then leads *away* from the root, and every route over that top falls and rises again — a
//! valley. Lanes by port pair cannot carry valleys, so the layers detour, and on a 4-ary
//! 3-tree layer 0 carried all-to-all at 0.08 of what minimal routing carries.
//!
//! Here the order grows from a top switch by the highest level first: of the switches
//! next to those already placed, the next is one of the highest level (seeded ties). A top
//! switch is placed as soon as one of its neighbours is, so the switches of each level come
//! before those below them except the few through which the search first reaches a part of
//! the tree (one leaf into the middle switches of the other pods, one middle switch into
//! the tops above it), and those cables lead away from the root on every route through
//! them. On every k-ary 3-tree every minimal route is then unimodal. Every switch but the
//! root has a neighbour placed before it, so this is an up*/down* order like the
//! breadth-first one, with its spanning tree and its guarantee of a unimodal route for every
//! connected pair.

use super::super::graph::RoutingGraph;
use crate::rng::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The switches in key order: per connected component, from one of its highest switches, the
/// highest-level switch next to those already placed (ties by the seeded `tie`).
pub(super) fn highest_level_first(graph: &RoutingGraph, level: &[u8], seed: u64) -> Vec<usize> {
    let n = graph.len();
    let mut tie: Vec<u64> = (0..n as u64).collect();
    Rng::new(seed ^ 0x1E7E_1500).shuffle(&mut tie);
    let mut by_priority: Vec<usize> = (0..n).collect();
    by_priority.sort_unstable_by_key(|&v| (Reverse(level[v]), tie[v]));
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut frontier = BinaryHeap::new();
    for root in by_priority {
        if placed[root] {
            continue;
        }
        frontier.push((level[root], Reverse(tie[root]), root));
        while let Some((_, _, v)) = frontier.pop() {
            if placed[v] {
                continue;
            }
            placed[v] = true;
            order.push(v);
            for e in graph.edges(v) {
                let w = graph.edge_to[e] as usize;
                if !placed[w] {
                    frontier.push((level[w], Reverse(tie[w]), w));
                }
            }
        }
    }
    order
}
