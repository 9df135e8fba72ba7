//! Findings combined into the fewest technician actions.
//!
//! Every wrong observed cable shares at most one port with each of at most two planned cables
//! (the ones planned on its two ports), and every planned cable shares a port with at most two
//! wrong cables. Saying "this wrong cable *is* that planned cable, with one end in the wrong
//! place" is a matching in that graph, whose components are paths and cycles: a maximum
//! matching makes the most cables a single move instead of a removal plus a new cable. Among
//! the maximum matchings of a component (one for an even path, one per left-out node for an
//! odd path, two for a cycle) the one is taken whose moves are shortest (same device, then same
//! rack), move switch ends rather than host ends, and pair up into the most swaps.
//!
//! The moves are then ordered: a move whose target port is held by another move's cable waits
//! for it. Two moves holding each other's targets are a **swap** ("swap the cables in R03 U38
//! sw0-2-2 ports 9 and 10" — also between the same two switches, which GUID-only tools miss);
//! a longer cycle is a **rotation** (unplug one, shift the others, plug it back); a sequence is
//! a **chain** done in order. Wrong cables left unmatched are removed, planned cables left
//! unmatched are plugged, degraded cables are reseated, down ports checked.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use super::findings::{
    Degradation, Observed, PortCondition, Status, UnexpectedCable, UnexpectedKind,
};
use super::{Context, Place, other_end};
use crate::plan::{CableEnd, DeviceKind, Plan};
use crate::topology::NodeKind;

/// One cable end moved from one port to another; the cable's other end stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveStep {
    /// The planned cable this cable is (index into [`Plan::cables`]).
    pub cable: usize,
    /// Where the end is now.
    pub from: Place,
    /// Where it belongs.
    pub to: CableEnd,
    /// Where the other end is (and stays).
    pub fixed: Place,
}

/// What the technician does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Exchange the cables in two ports (each move's `from` is the other's `to`).
    Swap([MoveStep; 2]),
    /// Move one cable end.
    Move(MoveStep),
    /// Moves done in this order, each into the port the one before freed.
    Chain(Vec<MoveStep>),
    /// A cycle of three or more moves: unplug the first, do the others in order, plug the first
    /// into its port.
    Rotate(Vec<MoveStep>),
    /// Plug a new cable where the plan has one.
    Plug {
        /// The planned cable.
        cable: usize,
        /// What is known of its A port.
        a: PortCondition,
        /// What is known of its B port.
        b: PortCondition,
    },
    /// Remove a cable that is not in the plan.
    Remove(UnexpectedCable),
    /// Reseat or replace a cable that runs below its expected rate.
    Reseat {
        /// The planned cable.
        cable: usize,
        /// How it falls short.
        degradation: Degradation,
    },
    /// Check a planned cable whose port state says it is there but failing.
    Check {
        /// The planned cable.
        cable: usize,
        /// State of its A port.
        a: PortCondition,
        /// State of its B port.
        b: PortCondition,
    },
}

/// A primitive cabling change, for tools that replay actions (a simulator console).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Unplug the cable in this port (both its ends).
    Disconnect(Place),
    /// Plug a cable between two ports.
    Connect(Place, Place),
}

impl Action {
    /// One word: `swap`, `move`, `chain`, `rotate`, `plug`, `remove`, `reseat`, `check`.
    pub fn word(&self) -> &'static str {
        match self {
            Action::Swap(_) => "swap",
            Action::Move(_) => "move",
            Action::Chain(_) => "chain",
            Action::Rotate(_) => "rotate",
            Action::Plug { .. } => "plug",
            Action::Remove(_) => "remove",
            Action::Reseat { .. } => "reseat",
            Action::Check { .. } => "check",
        }
    }

    /// The moves of a swap, move, chain or rotation, in order.
    pub fn moves(&self) -> &[MoveStep] {
        match self {
            Action::Swap(m) => m,
            Action::Move(m) => std::slice::from_ref(m),
            Action::Chain(m) | Action::Rotate(m) => m,
            _ => &[],
        }
    }

    /// The planned cables the action concerns.
    pub fn cables(&self) -> Vec<usize> {
        match self {
            Action::Plug { cable, .. }
            | Action::Reseat { cable, .. }
            | Action::Check { cable, .. } => {
                vec![*cable]
            }
            Action::Remove(_) => Vec::new(),
            Action::Swap([x, y]) => vec![x.cable.min(y.cable), x.cable.max(y.cable)],
            _ => self.moves().iter().map(|m| m.cable).collect(),
        }
    }

    /// Where the technician starts: the first moved end, the cable's A end, or the removed
    /// cable's end on a plan device.
    pub fn location(&self, plan: &Plan) -> Place {
        match self {
            Action::Plug { cable, .. }
            | Action::Reseat { cable, .. }
            | Action::Check { cable, .. } => Place::Device(plan.cables[*cable].a),
            Action::Remove(u) => u.a,
            _ => {
                let m = &self.moves()[0];
                [m.from, m.fixed, Place::Device(m.to)]
                    .into_iter()
                    .find(|p| matches!(p, Place::Device(_)))
                    .unwrap_or(m.from)
            }
        }
    }

    /// The primitive changes that carry the action out, in order. Reseating and checking
    /// change no cabling and have none.
    pub fn steps(&self, plan: &Plan) -> Vec<Step> {
        let move_steps = |m: &MoveStep| {
            [
                Step::Disconnect(m.from),
                Step::Connect(m.fixed, Place::Device(m.to)),
            ]
        };
        match self {
            Action::Move(m) => move_steps(m).to_vec(),
            Action::Chain(ms) => ms.iter().flat_map(move_steps).collect(),
            Action::Swap([x, y]) => vec![
                Step::Disconnect(x.from),
                Step::Disconnect(y.from),
                Step::Connect(x.fixed, Place::Device(x.to)),
                Step::Connect(y.fixed, Place::Device(y.to)),
            ],
            Action::Rotate(ms) => {
                let mut steps = vec![Step::Disconnect(ms[0].from)];
                for m in &ms[1..] {
                    steps.extend(move_steps(m));
                }
                steps.push(Step::Connect(ms[0].fixed, Place::Device(ms[0].to)));
                steps
            }
            Action::Plug { cable, .. } => {
                let c = &plan.cables[*cable];
                vec![Step::Connect(Place::Device(c.a), Place::Device(c.b))]
            }
            Action::Remove(u) => vec![Step::Disconnect(u.a)],
            Action::Reseat { .. } | Action::Check { .. } => Vec::new(),
        }
    }
}

/// A node of the matching graph: a wrong observed cable or a miswired planned cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Vertex {
    Wrong(usize),
    Planned(usize),
}

/// The actions for the findings, sorted by location, and the cables to remove.
pub(crate) fn plan_actions(
    ctx: &Context<'_>,
    observed: &Observed,
) -> (Vec<Action>, Vec<UnexpectedCable>) {
    let plan = ctx.plan;
    let wrong = &observed.wrong;
    // Edges: wrong cable i keeps its end `side` on a port of planned cable c.
    let mut of_wrong: Vec<Vec<usize>> = vec![Vec::new(); wrong.len()];
    let mut of_planned: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut side: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, w) in wrong.iter().enumerate() {
        for (s, end) in w.ends.iter().enumerate() {
            let Place::Device(end) = *end else { continue };
            let Some(c) = ctx.index.cable_at(end) else {
                continue;
            };
            if side.insert((i, c), s).is_none() {
                of_wrong[i].push(c);
                of_planned.entry(c).or_default().push(i);
            }
        }
    }
    let neighbours = |v: Vertex| -> Vec<Vertex> {
        match v {
            Vertex::Wrong(i) => of_wrong[i].iter().map(|&c| Vertex::Planned(c)).collect(),
            Vertex::Planned(c) => of_planned.get(&c).map_or(Vec::new(), |is| {
                is.iter().map(|&i| Vertex::Wrong(i)).collect()
            }),
        }
    };
    let step_of = |i: usize, c: usize| {
        let s = side[&(i, c)];
        let Place::Device(keep) = wrong[i].ends[s] else {
            unreachable!("edges keep plan device ends")
        };
        MoveStep {
            cable: c,
            from: wrong[i].ends[1 - s],
            to: other_end(plan, c, keep),
            fixed: wrong[i].ends[s],
        }
    };
    let mut matched_wrong = vec![false; wrong.len()];
    let mut matched_planned: HashMap<usize, bool> = HashMap::new();
    let mut moves: Vec<MoveStep> = Vec::new();
    let mut seen: HashMap<Vertex, bool> = HashMap::new();
    let mut starts: Vec<Vertex> = (0..wrong.len()).map(Vertex::Wrong).collect();
    let mut planned_keys: Vec<usize> = of_planned.keys().copied().collect();
    planned_keys.sort_unstable();
    starts.extend(planned_keys.into_iter().map(Vertex::Planned));
    for start in starts {
        if seen.contains_key(&start) {
            continue;
        }
        // The component, as a path (from an end) or a cycle.
        let mut component = vec![start];
        seen.insert(start, true);
        let mut k = 0;
        while k < component.len() {
            for n in neighbours(component[k]) {
                if seen.insert(n, true).is_none() {
                    component.push(n);
                }
            }
            k += 1;
        }
        let first = component
            .iter()
            .copied()
            .find(|&v| neighbours(v).len() <= 1);
        let is_cycle = first.is_none();
        let mut order = vec![first.unwrap_or(component[0])];
        let mut in_order: HashSet<Vertex> = order.iter().copied().collect();
        while order.len() < component.len() {
            let cur = *order.last().expect("non-empty");
            let next = neighbours(cur).into_iter().find(|n| !in_order.contains(n));
            let Some(next) = next else { break };
            in_order.insert(next);
            order.push(next);
        }
        let pair = |a: Vertex, b: Vertex| match (a, b) {
            (Vertex::Wrong(i), Vertex::Planned(c)) | (Vertex::Planned(c), Vertex::Wrong(i)) => {
                (i, c)
            }
            _ => unreachable!("the graph is bipartite"),
        };
        let n = order.len();
        let mut options: Vec<Vec<(usize, usize)>> = Vec::new();
        if is_cycle {
            options.push(
                (0..n)
                    .step_by(2)
                    .map(|k| pair(order[k], order[k + 1]))
                    .collect(),
            );
            options.push(
                (1..n)
                    .step_by(2)
                    .map(|k| pair(order[k], order[(k + 1) % n]))
                    .collect(),
            );
        } else if n % 2 == 0 {
            options.push(
                (0..n)
                    .step_by(2)
                    .map(|k| pair(order[k], order[k + 1]))
                    .collect(),
            );
        } else {
            for skip in (0..n).step_by(2) {
                let mut pairs = Vec::new();
                let mut k = 0;
                while k + 1 < n {
                    if k == skip {
                        k += 1;
                        continue;
                    }
                    pairs.push(pair(order[k], order[k + 1]));
                    k += 2;
                }
                options.push(pairs);
            }
        }
        let best = options
            .into_iter()
            .map(|pairs| {
                let steps: Vec<MoveStep> = pairs.iter().map(|&(i, c)| step_of(i, c)).collect();
                (cost(ctx, &steps), pairs, steps)
            })
            .min_by(|x, y| x.0.cmp(&y.0))
            .expect("at least one matching");
        for &(i, c) in &best.1 {
            matched_wrong[i] = true;
            matched_planned.insert(c, true);
        }
        moves.extend(best.2);
    }
    let mut actions = group_moves(ctx, moves);
    let mut unexpected = Vec::new();
    for (i, w) in wrong.iter().enumerate() {
        if !matched_wrong[i] {
            let u = unexpected_cable(ctx, w.link, w.ends);
            unexpected.push(u);
            actions.push(Action::Remove(u));
        }
    }
    for f in &observed.findings {
        let condition = |e: CableEnd| {
            if ctx.binding.node(e.device).is_some() {
                PortCondition::NoLink
            } else {
                PortCondition::Unseen
            }
        };
        let c = &plan.cables[f.cable];
        match f.status {
            Status::Degraded(degradation) => actions.push(Action::Reseat {
                cable: f.cable,
                degradation,
            }),
            Status::Missing { a, b } => actions.push(Action::Plug {
                cable: f.cable,
                a,
                b,
            }),
            Status::Down { a, b } => actions.push(Action::Check {
                cable: f.cable,
                a,
                b,
            }),
            Status::Miswired { .. } if !matched_planned.contains_key(&f.cable) => {
                actions.push(Action::Plug {
                    cable: f.cable,
                    a: condition(c.a),
                    b: condition(c.b),
                })
            }
            _ => {}
        }
    }
    let rank = |a: &Action| match a {
        Action::Remove(_) => 0,
        Action::Swap(_) | Action::Move(_) | Action::Chain(_) | Action::Rotate(_) => 1,
        Action::Plug { .. } => 2,
        Action::Check { .. } => 3,
        Action::Reseat { .. } => 4,
    };
    actions.sort_by_cached_key(|a| (place_key(ctx, a.location(plan)), rank(a)));
    unexpected.sort_by_cached_key(|u| place_key(ctx, u.a));
    (actions, unexpected)
}

/// Sort key of a place: rack, U from the top down, slot, device, port; unidentified nodes last.
pub(crate) fn place_key(
    ctx: &Context<'_>,
    place: Place,
) -> (usize, Reverse<u32>, u32, usize, u64, u8) {
    match place {
        Place::Device(e) => {
            let d = &ctx.plan.devices[e.device];
            (
                d.rack,
                Reverse(d.u.unwrap_or(0)),
                d.slot.unwrap_or(0),
                e.device,
                0,
                e.port,
            )
        }
        Place::Node(p) => (
            usize::MAX,
            Reverse(0),
            0,
            usize::MAX,
            ctx.fabric.node(p.node).guid.0,
            p.port,
        ),
    }
}

/// How costly a matching's moves are: total distance (0 same device, 1 same rack, 2 another
/// rack, 3 from an unidentified node), then host ends moved, then fewer swaps.
fn cost(ctx: &Context<'_>, moves: &[MoveStep]) -> (u32, u32, Reverse<u32>) {
    let plan = ctx.plan;
    let mut distance = 0;
    let mut host_ends = 0;
    for m in moves {
        distance += match m.from {
            Place::Device(e) if e.device == m.to.device => 0,
            Place::Device(e) if plan.devices[e.device].rack == plan.devices[m.to.device].rack => 1,
            Place::Device(_) => 2,
            Place::Node(_) => 3,
        };
        if plan.devices[m.to.device].kind == DeviceKind::Host {
            host_ends += 1;
        }
    }
    let by_from: HashMap<Place, &MoveStep> = moves.iter().map(|m| (m.from, m)).collect();
    let swaps = moves
        .iter()
        .filter(|x| {
            by_from
                .get(&Place::Device(x.to))
                .is_some_and(|y| y.from != x.from && Place::Device(y.to) == x.from)
        })
        .count() as u32
        / 2;
    (distance, host_ends, Reverse(swaps))
}

/// Orders moves by the ports they free: swaps, rotations, chains and single moves.
fn group_moves(ctx: &Context<'_>, moves: Vec<MoveStep>) -> Vec<Action> {
    let by_from: HashMap<Place, usize> =
        moves.iter().enumerate().map(|(i, m)| (m.from, i)).collect();
    // pred[i]: the move whose cable is in i's target port, which must go first.
    let pred: Vec<Option<usize>> = moves
        .iter()
        .map(|m| by_from.get(&Place::Device(m.to)).copied())
        .collect();
    let mut succ: Vec<Option<usize>> = vec![None; moves.len()];
    for (i, p) in pred.iter().enumerate() {
        if let Some(j) = *p {
            succ[j] = Some(i);
        }
    }
    let mut done = vec![false; moves.len()];
    let mut actions = Vec::new();
    let follow = |start: usize, done: &mut Vec<bool>| {
        let mut group = vec![start];
        done[start] = true;
        let mut cur = start;
        while let Some(next) = succ[cur] {
            if done[next] {
                break;
            }
            done[next] = true;
            group.push(next);
            cur = next;
        }
        group
    };
    for i in 0..moves.len() {
        if pred[i].is_none() && !done[i] {
            let group = follow(i, &mut done);
            let steps: Vec<MoveStep> = group.iter().map(|&k| moves[k]).collect();
            actions.push(if steps.len() == 1 {
                Action::Move(steps[0])
            } else {
                Action::Chain(steps)
            });
        }
    }
    for i in 0..moves.len() {
        if !done[i] {
            // A cycle: start at its first port in rack order.
            let group = follow(i, &mut done);
            let start = (0..group.len())
                .min_by_key(|&k| place_key(ctx, moves[group[k]].from))
                .expect("non-empty cycle");
            let steps: Vec<MoveStep> = (0..group.len())
                .map(|k| moves[group[(start + k) % group.len()]])
                .collect();
            actions.push(match steps[..] {
                [x, y] => Action::Swap([x, y]),
                _ => Action::Rotate(steps),
            });
        }
    }
    actions
}

/// Why an observed cable that has to go is unexpected; its `a` end is the one to work at.
fn unexpected_cable(
    ctx: &Context<'_>,
    link: crate::topology::LinkId,
    ends: [Place; 2],
) -> UnexpectedCable {
    let l = ctx.fabric.link(link);
    let kind_of = |p: crate::topology::PortRef| ctx.fabric.node(p.node).kind;
    let spare_switch_port = |p: Place| match p {
        Place::Device(e) => {
            ctx.plan.devices[e.device].kind == DeviceKind::Switch && ctx.index.cable_at(e).is_none()
        }
        Place::Node(_) => false,
    };
    let kind = if l.a.node == l.b.node {
        UnexpectedKind::Loopback
    } else if (spare_switch_port(ends[0]) && kind_of(l.b) != NodeKind::Switch)
        || (spare_switch_port(ends[1]) && kind_of(l.a) != NodeKind::Switch)
    {
        UnexpectedKind::HostInSparePort
    } else if ends.iter().any(|p| matches!(p, Place::Node(_))) {
        UnexpectedKind::UnknownDevice
    } else {
        UnexpectedKind::NotInPlan
    };
    // Work at a plan device's end, a switch's first.
    let score = |p: &Place| match p {
        Place::Device(e) if ctx.plan.devices[e.device].kind == DeviceKind::Switch => 0,
        Place::Device(_) => 1,
        Place::Node(_) => 2,
    };
    let [x, y] = ends;
    let (a, b) = if (score(&y), place_key(ctx, y)) < (score(&x), place_key(ctx, x)) {
        (y, x)
    } else {
        (x, y)
    };
    UnexpectedCable { link, a, b, kind }
}
