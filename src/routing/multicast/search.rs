//! The tree search: candidate trees grown level by level from the switches most central to
//! the members (under the rank rule when there is a cable order), plus the order's own
//! spanning tree, each pruned to the member switches; the one whose cables carry the fewest
//! groups so far wins, then the shallower one.
//!
//! Growing: each level attaches every switch not yet in the tree that a switch of the
//! previous level may take as its child — any neighbour without an order; under the rank
//! rule, one whose two cables rank below the parent's own cables to its parent. A switch that
//! several may take goes to the one whose cable carries the fewest groups, then to the one
//! leaving it the most room (the higher of its cables' two ranks bounds its own children). A
//! switch is attached at the first level that can take it: the tree has the fewest levels the
//! rule allows for these choices, but the greedy choice can leave a member out, and then the
//! candidate is dropped.

use super::load::CableLoad;
use crate::routing::cable_order::CableOrder;
use crate::routing::graph::{FAR, RoutingGraph};

/// Candidate roots grown per group: the switches most central to its members, one
/// breadth-first search each. Measured on Slim Fly q = 7 (order of seed 1) with the broadcast
/// group and 200 groups of 2 to 31 random hosts: the busiest cable carries 159 groups with the
/// order's own tree alone, 144 with 8 candidate roots, 125 with 32 (385 of the 539 cables
/// used, against 97), 116 with every switch as a candidate. The rank rule keeps most trees
/// close to the order's tree; shortest-path trees without the rule load no cable beyond 12.
const CANDIDATE_ROOTS: usize = 32;

/// A tree as (child, parent) links from a root, each parent before its children.
#[derive(Debug, Clone)]
pub(super) struct Skeleton {
    pub root: usize,
    pub links: Vec<(usize, usize)>,
}

/// The best tree spanning `switches` (sorted, distinct), or `None` when, with an `order`, no
/// candidate under the rank rule reaches them all. Without an order, the tree reaches the
/// member switches connected to the most central one.
pub(super) fn best_tree(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    switches: &[usize],
    load: &CableLoad,
) -> Option<Skeleton> {
    let (&first, rest) = switches.split_first()?;
    if rest.is_empty() {
        return Some(Skeleton {
            root: first,
            links: Vec::new(),
        });
    }
    let mut is_member = vec![false; graph.len()];
    for &s in switches {
        is_member[s] = true;
    }
    let mut candidates: Vec<(Cost, Skeleton)> = Vec::new();
    let mut consider = |skeleton: Skeleton| {
        let cost = cost(graph, load, &skeleton, &is_member, switches.len());
        candidates.push((cost, skeleton));
    };
    for root in central_switches(graph, switches) {
        if let Some(s) = grow(graph, order, load, root, &is_member, switches.len()) {
            consider(s);
        }
    }
    if let Some(order) = order
        && let Some(s) = order_subtree(order, &is_member, switches)
    {
        consider(s);
    }
    candidates
        .into_iter()
        .min_by_key(|(cost, s)| (*cost, s.root))
        .map(|(_, s)| s)
}

/// What a candidate costs: members it leaves out, then groups already on its cables plus one
/// per cable (so a larger tree on idle cables can still beat a small one on busy cables),
/// then its depth.
type Cost = (usize, u64, usize);

fn cost(
    graph: &RoutingGraph,
    load: &CableLoad,
    skeleton: &Skeleton,
    is_member: &[bool],
    members: usize,
) -> Cost {
    let mut depth = vec![0usize; graph.len()];
    let mut groups = 0u64;
    let mut reached = usize::from(is_member[skeleton.root]);
    for &(child, parent) in &skeleton.links {
        depth[child] = depth[parent] + 1;
        reached += usize::from(is_member[child]);
        let down = graph
            .edge_between(parent, child)
            .expect("tree switches are cabled");
        groups += 1 + u64::from(load.lightest(down).1);
    }
    (
        members - reached,
        groups,
        depth.into_iter().max().unwrap_or(0),
    )
}

/// The switches nearest to all of `switches`: fewest of them unreachable, then the smallest
/// largest distance, then the smallest total.
fn central_switches(graph: &RoutingGraph, switches: &[usize]) -> Vec<usize> {
    let mut ranked: Vec<((usize, u8, u64), usize)> = (0..graph.len())
        .map(|v| {
            let (mut unreachable, mut farthest, mut total) = (0usize, 0u8, 0u64);
            for &m in switches {
                match graph.dist(v, m) {
                    FAR => unreachable += 1,
                    d => {
                        farthest = farthest.max(d);
                        total += u64::from(d);
                    }
                }
            }
            ((unreachable, farthest, total), v)
        })
        .collect();
    ranked.sort_unstable();
    ranked
        .into_iter()
        .take(CANDIDATE_ROOTS)
        .map(|(_, v)| v)
        .collect()
}

/// A switch's best offer of a level: groups on the cable, room lost (the smaller, the more
/// its own children may use), the parent, and the bounds it would pass on.
type Offer = (u32, u32, usize, (u32, u32));

/// The tree grown level by level from `root` (see the file's doc), pruned to the member
/// switches it reaches; `None` under an order when it misses one.
fn grow(
    graph: &RoutingGraph,
    order: Option<&CableOrder>,
    load: &CableLoad,
    root: usize,
    is_member: &[bool],
    members: usize,
) -> Option<Skeleton> {
    let mut growth = Growth::new(graph.len());
    growth.parent[root] = root;
    growth.top_down.push(root);
    let reached = growth.grow(graph, order, load, vec![root], is_member, members);
    if order.is_some() && reached < members {
        return None;
    }
    Some(prune(root, &growth.parent, &growth.top_down, is_member))
}

/// No bound: a root's cables, or any cable without an order.
pub(super) const OPEN: u32 = u32::MAX;

/// A tree being grown: per switch its parent (`usize::MAX` while it is outside the tree; a
/// switch that may not join is its own parent) and the bounds its children's cables must rank
/// below (up, down), and the switches in the tree, each parent before its children.
pub(super) struct Growth {
    pub parent: Vec<usize>,
    pub bound: Vec<(u32, u32)>,
    pub top_down: Vec<usize>,
}

impl Growth {
    /// Nothing grown on `n` switches.
    pub fn new(n: usize) -> Self {
        Growth {
            parent: vec![usize::MAX; n],
            bound: vec![(OPEN, OPEN); n],
            top_down: Vec::new(),
        }
    }

    /// Grows the tree from the switches of `level` (in it already), a level at a time, until
    /// it holds `members` member switches or can grow no further; returns how many it holds
    /// (`level`'s own included).
    pub fn grow(
        &mut self,
        graph: &RoutingGraph,
        order: Option<&CableOrder>,
        load: &CableLoad,
        mut level: Vec<usize>,
        is_member: &[bool],
        members: usize,
    ) -> usize {
        let mut reached = level.iter().filter(|&&v| is_member[v]).count();
        let mut offer: Vec<Option<Offer>> = vec![None; graph.len()];
        while !level.is_empty() && reached < members {
            let mut next = Vec::new();
            for &x in &level {
                for e in graph.edges(x) {
                    let y = graph.edge_to[e] as usize;
                    if self.parent[y] != usize::MAX {
                        continue;
                    }
                    let ranks = match order {
                        Some(order) => {
                            let up =
                                order.rank(graph.edge_between(y, x).expect("cables run both ways"));
                            let down = order.rank(e);
                            if up >= self.bound[x].0 || down >= self.bound[x].1 {
                                continue;
                            }
                            (up, down)
                        }
                        None => (OPEN, OPEN),
                    };
                    let candidate = (load.lightest(e).1, OPEN - ranks.0.max(ranks.1), x, ranks);
                    match &offer[y] {
                        None => {
                            next.push(y);
                            offer[y] = Some(candidate);
                        }
                        Some(best) if (candidate.0, candidate.1) < (best.0, best.1) => {
                            offer[y] = Some(candidate);
                        }
                        Some(_) => {}
                    }
                }
            }
            for &y in &next {
                let (_, _, x, ranks) = offer[y].take().expect("offered above");
                self.parent[y] = x;
                self.bound[y] = ranks;
                reached += usize::from(is_member[y]);
                self.top_down.push(y);
            }
            level = next;
        }
        reached
    }
}

/// The up*/down* spanning tree of `order` pruned to `switches`, or `None` when they lie in
/// different trees of it (an order a repair left as a forest) or it has no tree.
fn order_subtree(order: &CableOrder, is_member: &[bool], switches: &[usize]) -> Option<Skeleton> {
    let n = is_member.len();
    let mut parent = vec![usize::MAX; n];
    let mut depth = vec![0usize; n];
    let mut root = None;
    for &m in switches {
        // The chain up to the first switch already seen (or the root).
        let mut chain = vec![m];
        let mut v = m;
        while parent[v] == usize::MAX {
            match order.tree_parent(v) {
                Some(p) => {
                    parent[v] = p;
                    chain.push(p);
                    v = p;
                }
                None => {
                    parent[v] = v;
                    if *root.get_or_insert(v) != v {
                        return None;
                    }
                }
            }
            if chain.len() > n {
                return None;
            }
        }
        // Depths top-down along the chain.
        for &c in chain.iter().rev() {
            if parent[c] != c {
                depth[c] = depth[parent[c]] + 1;
            }
        }
    }
    let root = root?;
    let mut top_down: Vec<usize> = (0..n).filter(|&v| parent[v] != usize::MAX).collect();
    top_down.sort_by_key(|&v| (depth[v], v));
    Some(prune(root, &parent, &top_down, is_member))
}

/// The subtree of (`root`, `parent`) that spans the members: every switch with a member below
/// it, then without the chain above the highest switch that is a member or joins two
/// branches. `top_down` lists the tree's switches, each parent before its children.
fn prune(root: usize, parent: &[usize], top_down: &[usize], is_member: &[bool]) -> Skeleton {
    let n = parent.len();
    let mut keep = vec![false; n];
    let mut kept_children = vec![0u32; n];
    for &v in top_down.iter().rev() {
        keep[v] |= is_member[v];
        if keep[v] && v != root {
            let p = parent[v];
            keep[p] = true;
            kept_children[p] += 1;
        }
    }
    let mut top = root;
    let mut above = vec![false; n];
    while !is_member[top] && kept_children[top] == 1 {
        above[top] = true;
        top = *top_down
            .iter()
            .find(|&&c| c != top && parent[c] == top && keep[c])
            .expect("one kept child");
    }
    let links = top_down
        .iter()
        .filter(|&&v| keep[v] && v != top && !above[v])
        .map(|&v| (v, parent[v]))
        .collect();
    Skeleton { root: top, links }
}
