//! A verification as technicians and tools read it: text grouped by rack with one imperative
//! line per action, a CSV punch list, a JSON document (the HTML page, with the racks drawn, is
//! `cabling`'s: it draws from these words).
//!
//! Every action line names the cable by its plan id and carries its printed label (both ends:
//! rack, U, device, port), in the wording field technicians know: "swap the cables in R03 U38
//! sw0-2-2 ports 9 and 10", "move cable SF-0087 from R01 U12 sw1-0-3 port 8 to port 7",
//! "reseat or replace cable SF-0123 … (1x instead of 4x; possible cause: cable not fully
//! seated)", "plug a cable SF-0040 between … and …", "remove the cable between … and …".

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::actions::{Action, MoveStep, Step};
use super::findings::{Degradation, Finding, PortCondition, Status, UnexpectedKind};
use super::{Place, Verification};
use crate::plan::{CableEnd, Plan};
use crate::topology::{Fabric, NodeId, NodeKind};

/// Renders a verification; every function here is pure.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The plan verified against.
    pub plan: &'a Plan,
    /// The observed fabric.
    pub fabric: &'a Fabric,
    /// The result.
    pub verification: &'a Verification,
    /// Places where a cable is to be removed (a move into one waits for the removal): built
    /// once, asked once per move.
    removals: HashSet<Place>,
}

impl<'a> Report<'a> {
    /// A report of `verification`.
    pub fn new(plan: &'a Plan, fabric: &'a Fabric, verification: &'a Verification) -> Self {
        let removals = verification
            .unexpected
            .iter()
            .flat_map(|u| [u.a, u.b])
            .collect();
        Self {
            plan,
            fabric,
            verification,
            removals,
        }
    }

    /// Where a place is: `R01 U40 sw0-0-0 port 5`, or an unidentified node by kind,
    /// description and GUID.
    pub fn place(&self, place: Place) -> String {
        match place {
            Place::Device(e) => self.plan.end_text(e),
            Place::Node(p) => format!("{} port {}", self.node(p.node), p.port),
        }
    }

    /// An unidentified node: `unknown host "MT4129 ConnectX7 Mellanox Technologies" (0x…)`.
    pub fn node(&self, node: NodeId) -> String {
        let n = self.fabric.node(node);
        format!(
            "unknown {} \"{}\" ({})",
            kind_word(n.kind),
            n.description.trim(),
            n.guid
        )
    }

    /// What was found of a planned cable, in words for the technician: `the A port holds the
    /// cable to R02 U30 sw1-0-2 port 4; the B port is empty`, `A port: Polling, B port: no
    /// link`, `1x instead of 4x`; `as planned` when it is.
    pub fn finding_text(&self, finding: &Finding) -> String {
        let leads = |end: &str, to: Option<Place>| match to {
            Some(p) => format!("the {end} port holds the cable to {}", self.place(p)),
            None => format!("the {end} port is empty or not seen"),
        };
        match finding.status {
            Status::Ok => "as planned".into(),
            Status::Degraded(d) => shortfall(&d),
            Status::Miswired { at_a, at_b } => {
                format!("{}; {}", leads("A", at_a), leads("B", at_b))
            }
            Status::Missing { a, b } | Status::Down { a, b } => {
                format!("A port: {}, B port: {}", a.text(), b.text())
            }
            Status::NotVerifiable => "neither device seen yet".into(),
        }
    }

    /// The device part of a place: `R03 U38 sw0-2-2`.
    fn device_text(&self, device: usize) -> String {
        self.plan.device_place(&self.plan.devices[device])
    }

    fn label(&self, cable: usize) -> String {
        self.plan.label(&self.plan.cables[cable])
    }

    fn id(&self, cable: usize) -> &str {
        &self.plan.cables[cable].id
    }

    fn ends(&self, cable: usize) -> (String, String) {
        let c = &self.plan.cables[cable];
        (self.plan.end_text(c.a), self.plan.end_text(c.b))
    }

    /// `to port 7` on the same device, else the whole place.
    fn target(&self, m: &MoveStep) -> String {
        match m.from {
            Place::Device(e) if e.device == m.to.device => {
                format!("port {}", self.plan.port_text(m.to))
            }
            _ => self.plan.end_text(m.to),
        }
    }

    /// The one imperative line for an action.
    pub fn action_text(&self, action: &Action) -> String {
        let labels = |cables: &[usize]| {
            let l: Vec<String> = cables.iter().map(|&c| self.label(c)).collect();
            format!(" [{}]", l.join("; "))
        };
        match action {
            Action::Move(m) => {
                let mut text = format!(
                    "move cable {} from {} to {}",
                    self.id(m.cable),
                    self.place(m.from),
                    self.target(m)
                );
                if self.removals.contains(&Place::Device(m.to)) {
                    text.push_str(" (after removing the cable now in that port)");
                }
                text + &labels(&[m.cable])
            }
            Action::Swap([x, y]) => {
                let mut text = match (x.from, y.from) {
                    (Place::Device(a), Place::Device(b)) if a.device == b.device => format!(
                        "swap the cables in {} ports {} and {}",
                        self.device_text(a.device),
                        self.plan.port_text(a),
                        self.plan.port_text(b)
                    ),
                    (a, b) => format!("swap the cables in {} and {}", self.place(a), self.place(b)),
                };
                if let (Place::Device(a), Place::Device(b)) = (x.fixed, y.fixed)
                    && a.device == b.device
                {
                    let _ = write!(
                        text,
                        " (both run to {} ports {} and {}: swapped between the same two devices)",
                        self.device_text(a.device),
                        self.plan.port_text(a.min(b)),
                        self.plan.port_text(a.max(b))
                    );
                }
                let mut cables = [x.cable, y.cable];
                cables.sort_by(|&a, &b| self.id(a).cmp(self.id(b)));
                text + &labels(&cables)
            }
            Action::Chain(ms) => {
                let cables: Vec<usize> = ms.iter().map(|m| m.cable).collect();
                let text = match single_device(ms) {
                    Some(d) => format!(
                        "move the cables in {} in this order: {}",
                        self.device_text(d),
                        ms.iter()
                            .map(|m| format!(
                                "{} from port {} to port {}",
                                self.id(m.cable),
                                port_of(m.from),
                                m.to.port
                            ))
                            .collect::<Vec<_>>()
                            .join(", then ")
                    ),
                    None => format!(
                        "move, in this order: {}",
                        ms.iter()
                            .map(|m| format!(
                                "cable {} from {} to {}",
                                self.id(m.cable),
                                self.place(m.from),
                                self.target(m)
                            ))
                            .collect::<Vec<_>>()
                            .join(", then ")
                    ),
                };
                text + &labels(&cables)
            }
            Action::Rotate(ms) => {
                let cables: Vec<usize> = ms.iter().map(|m| m.cable).collect();
                let (first, rest) = (&ms[0], &ms[1..]);
                let text = match single_device(ms) {
                    Some(d) => format!(
                        "rotate the cables in {}: unplug {} from port {}, {}, then plug {} into port {}",
                        self.device_text(d),
                        self.id(first.cable),
                        port_of(first.from),
                        rest.iter()
                            .map(|m| format!(
                                "move {} from port {} to port {}",
                                self.id(m.cable),
                                port_of(m.from),
                                m.to.port
                            ))
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.id(first.cable),
                        first.to.port
                    ),
                    None => format!(
                        "rotate cables: unplug {} from {}, {}, then plug {} into {}",
                        self.id(first.cable),
                        self.place(first.from),
                        rest.iter()
                            .map(|m| format!(
                                "move {} from {} to {}",
                                self.id(m.cable),
                                self.place(m.from),
                                self.target(m)
                            ))
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.id(first.cable),
                        self.plan.end_text(first.to)
                    ),
                };
                text + &labels(&cables)
            }
            Action::Plug { cable, a, b } => {
                let (ea, eb) = self.ends(*cable);
                let mut text = format!("plug a cable {} between {ea} and {eb}", self.id(*cable));
                let c = &self.plan.cables[*cable];
                let unseen: Vec<String> = [(c.a, a), (c.b, b)]
                    .iter()
                    .filter(|(_, cond)| **cond == PortCondition::Unseen)
                    .map(|(e, _)| self.plan.devices[e.device].name.clone())
                    .collect();
                if !unseen.is_empty() {
                    let _ = write!(text, " ({} not found in the fabric)", unseen.join(" and "));
                } else if *a == PortCondition::Polling || *b == PortCondition::Polling {
                    text.push_str(
                        " (no link, port Polling: if a cable is plugged in, reseat or replace it)",
                    );
                }
                text + &labels(&[*cable])
            }
            Action::Remove(u) => match (u.kind, u.a, u.b) {
                (UnexpectedKind::Loopback, Place::Device(x), Place::Device(y)) => format!(
                    "remove the loopback cable in {} ports {} and {}",
                    self.device_text(x.device),
                    x.port.min(y.port),
                    x.port.max(y.port)
                ),
                (kind, a, b) => format!(
                    "remove the cable between {} and {} ({})",
                    self.place(a),
                    self.place(b),
                    kind.text()
                ),
            },
            Action::Reseat { cable, degradation } => {
                let (ea, eb) = self.ends(*cable);
                format!(
                    "reseat or replace cable {} between {ea} and {eb} ({}; possible cause: cable not fully seated){}",
                    self.id(*cable),
                    shortfall(degradation),
                    labels(&[*cable])
                )
            }
            Action::Check { cable, a, b } => {
                let (ea, eb) = self.ends(*cable);
                let c = &self.plan.cables[*cable];
                let (end, cond) = if a.is_trouble() { (c.a, a) } else { (c.b, b) };
                let port = self.plan.end_text(end);
                let why = match cond {
                    PortCondition::Disabled => format!(
                        "{port} is Disabled: enable the port, then reseat or replace the cable if the link stays down"
                    ),
                    PortCondition::ErrorRecovery => {
                        format!("{port} is in LinkErrorRecovery: replace the cable")
                    }
                    PortCondition::Training => format!(
                        "{port} is still training: verify again; if it stays so, reseat or replace the cable"
                    ),
                    PortCondition::UpUndiscovered => format!(
                        "{port} is up but its far end was not discovered: run ibnetdiscover again and check the far device"
                    ),
                    _ => format!("{port} is not up: reseat or replace the cable"),
                };
                format!(
                    "check cable {} between {ea} and {eb}: {why}{}",
                    self.id(*cable),
                    labels(&[*cable])
                )
            }
        }
    }

    /// Rack name of an action's location (`None` for unidentified nodes).
    fn action_rack(&self, action: &Action) -> Option<usize> {
        match action.location(self.plan) {
            Place::Device(e) => Some(self.plan.devices[e.device].rack),
            Place::Node(_) => None,
        }
    }

    /// The text report: summary, actions grouped by rack, what is not yet verifiable or not
    /// seen, unexpected devices, per-rack progress.
    pub fn text(&self) -> String {
        let v = self.verification;
        let plan = self.plan;
        let c = v.counts();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "cabling verify: plan {} ({} devices, {} cables) against {} nodes and {} cables",
            plan.name,
            plan.devices.len(),
            plan.cables.len(),
            self.fabric.nodes().len(),
            v.observed_cables
        );
        let bound = plan.devices.len() - c.unbound_devices;
        let how: Vec<String> = v
            .binding
            .counts()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(b, n)| format!("{n} by {}", b.text()))
            .collect();
        let _ = writeln!(
            out,
            "devices: {bound} of {} bound{}; {} not seen, {} unexpected",
            plan.devices.len(),
            if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            },
            c.unbound_devices,
            c.unexpected_devices
        );
        let _ = writeln!(
            out,
            "cables: {} ok, {} degraded, {} miswired, {} missing, {} down, {} not yet verifiable; {} unexpected",
            c.ok, c.degraded, c.miswired, c.missing, c.down, c.not_verifiable, c.unexpected
        );
        for w in &v.binding.warnings {
            let _ = writeln!(out, "note: {w}");
        }
        if v.actions.is_empty() {
            let _ = writeln!(
                out,
                "\nno actions{}",
                if v.is_clean() {
                    ": the fabric is cabled as planned"
                } else {
                    ""
                }
            );
        } else {
            let _ = writeln!(out, "\n{} actions:", v.actions.len());
            let mut current: Option<Option<usize>> = None;
            for a in &v.actions {
                let rack = self.action_rack(a);
                if current != Some(rack) {
                    current = Some(rack);
                    let _ = writeln!(
                        out,
                        "\n{}",
                        rack.map_or("unidentified devices", |r| plan.racks[r].name.as_str())
                    );
                }
                let _ = writeln!(out, "  {}", self.action_text(a));
            }
        }
        let waiting: Vec<String> = v
            .progress
            .iter()
            .filter(|p| p.not_verifiable > 0)
            .map(|p| format!("{} {}", plan.racks[p.rack].name, p.not_verifiable))
            .collect();
        if !waiting.is_empty() {
            let _ = writeln!(
                out,
                "\nnot yet verifiable (neither device seen), cables per rack: {}",
                waiting.join(", ")
            );
        }
        if c.unbound_devices > 0 {
            let _ = writeln!(out, "\nnot found in the fabric:");
            for (r, rack) in plan.racks.iter().enumerate() {
                let mut devices: Vec<usize> = v
                    .binding
                    .unbound_devices()
                    .filter(|&d| plan.devices[d].rack == r)
                    .collect();
                devices.sort_by_key(|&d| {
                    let dev = &plan.devices[d];
                    (
                        std::cmp::Reverse(dev.u.unwrap_or(0)),
                        dev.slot.unwrap_or(0),
                        d,
                    )
                });
                let names: Vec<&str> = devices
                    .iter()
                    .map(|&d| plan.devices[d].name.as_str())
                    .collect();
                if names.is_empty() {
                    continue;
                }
                let total = plan.devices.iter().filter(|d| d.rack == r).count();
                let shown = names.len().min(12);
                let _ = writeln!(
                    out,
                    "  {}: {} of {total} devices: {}{}",
                    rack.name,
                    names.len(),
                    names[..shown].join(", "),
                    if names.len() > shown {
                        format!(" and {} more", names.len() - shown)
                    } else {
                        String::new()
                    }
                );
            }
        }
        if !v.unexpected_devices.is_empty() {
            let _ = writeln!(out, "\nunexpected devices (not in the plan):");
            for &n in &v.unexpected_devices {
                let _ = writeln!(out, "  {}{}", self.node(n), self.attached(n));
            }
        }
        let _ = writeln!(out, "\nprogress (cables verified / expected):");
        let width = plan
            .racks
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(3)
            .max(3);
        for p in &v.progress {
            let _ = writeln!(
                out,
                "  {:width$}  {}/{}{}",
                plan.racks[p.rack].name,
                p.verified,
                p.expected,
                if p.not_verifiable > 0 {
                    format!(" ({} not yet verifiable)", p.not_verifiable)
                } else {
                    String::new()
                }
            );
        }
        let _ = writeln!(out, "  {:width$}  {}/{}", "all", c.ok, plan.cables.len());
        out
    }

    /// ` cabled to R01 U40 sw0-0-0 port 13` for an unexpected node next to plan devices.
    fn attached(&self, node: NodeId) -> String {
        let places: Vec<String> = self
            .fabric
            .neighbours(node)
            .filter_map(|(_, far)| {
                self.verification.binding.device(far.node).map(|device| {
                    self.plan.end_text(CableEnd {
                        device,
                        port: far.port,
                    })
                })
            })
            .collect();
        if places.is_empty() {
            String::new()
        } else {
            format!(", cabled to {}", places.join(", "))
        }
    }

    /// The punch list as CSV: one row per action, `rack,u,device,port,action,cables,instruction`.
    pub fn csv(&self) -> String {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "rack",
            "u",
            "device",
            "port",
            "action",
            "cables",
            "instruction",
        ])
        .expect("writing to memory");
        for a in &self.verification.actions {
            let (rack, u, device, port) = self.location_fields(a.location(self.plan));
            let cables: Vec<&str> = a.cables().iter().map(|&c| self.id(c)).collect();
            w.write_record([
                rack,
                u,
                device,
                port,
                a.word().to_string(),
                cables.join(" "),
                self.action_text(a),
            ])
            .expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("flushing to memory")).expect("UTF-8 fields")
    }

    fn location_fields(&self, place: Place) -> (String, String, String, String) {
        match place {
            Place::Device(e) => {
                let d = &self.plan.devices[e.device];
                (
                    self.plan.racks[d.rack].name.clone(),
                    match d.u {
                        Some(_) => self.plan.position_text(d).trim_start_matches('U').into(),
                        None => String::new(),
                    },
                    d.name.clone(),
                    e.port.to_string(),
                )
            }
            Place::Node(p) => {
                let n = self.fabric.node(p.node);
                (
                    String::new(),
                    String::new(),
                    crate::io::ibnetdiscover::node_id(n.kind, n.guid),
                    p.port.to_string(),
                )
            }
        }
    }

    /// A place as JSON: `{rack, u, device, port}` or `{guid, kind, description, port}`.
    pub fn place_json(&self, place: Place) -> Value {
        match place {
            Place::Device(e) => {
                let d = &self.plan.devices[e.device];
                json!({
                    "rack": self.plan.racks[d.rack].name,
                    "u": d.u,
                    "slot": d.slot,
                    "device": d.name,
                    "port": e.port,
                })
            }
            Place::Node(p) => {
                let n = self.fabric.node(p.node);
                json!({
                    "guid": n.guid.to_string(),
                    "kind": kind_word(n.kind),
                    "description": n.description.trim(),
                    "port": p.port,
                })
            }
        }
    }

    /// The whole verification as a JSON document (see the CLI documentation for its fields).
    pub fn json_value(&self) -> Value {
        let v = self.verification;
        let plan = self.plan;
        let c = v.counts();
        let actions: Vec<Value> = v
            .actions
            .iter()
            .map(|a| {
                let steps: Vec<Value> = a
                    .steps(plan)
                    .into_iter()
                    .map(|s| match s {
                        Step::Disconnect(p) => {
                            json!({"op": "disconnect", "at": self.place_json(p)})
                        }
                        Step::Connect(x, y) => json!({
                            "op": "connect",
                            "a": self.place_json(x),
                            "b": self.place_json(y),
                        }),
                    })
                    .collect();
                json!({
                    "action": a.word(),
                    "location": self.place_json(a.location(plan)),
                    "cables": a.cables().iter().map(|&c| self.id(c)).collect::<Vec<_>>(),
                    "text": self.action_text(a),
                    "steps": steps,
                })
            })
            .collect();
        let findings: Vec<Value> = v
            .findings
            .iter()
            .filter(|f| f.status != Status::Ok)
            .map(|f| {
                let mut o = json!({
                    "cable": self.id(f.cable),
                    "label": self.label(f.cable),
                    "status": f.status.word(),
                });
                let extra = match f.status {
                    Status::Degraded(d) => json!({
                        "active": rate(d.width, d.speed),
                        "expected": rate(d.expected_width, d.expected_speed),
                        "could_be": rate(d.could_be_width, d.could_be_speed),
                        "narrow": d.narrow,
                        "slow": d.slow,
                    }),
                    Status::Miswired { at_a, at_b } => json!({
                        "a_port_leads_to": at_a.map(|p| self.place_json(p)),
                        "b_port_leads_to": at_b.map(|p| self.place_json(p)),
                    }),
                    Status::Missing { a, b } | Status::Down { a, b } => json!({
                        "a_port": a.text(),
                        "b_port": b.text(),
                    }),
                    _ => json!({}),
                };
                if let (Value::Object(o), Value::Object(extra)) = (&mut o, extra) {
                    o.extend(extra);
                }
                o
            })
            .collect();
        let unexpected: Vec<Value> = v
            .unexpected
            .iter()
            .map(|u| {
                json!({
                    "a": self.place_json(u.a),
                    "b": self.place_json(u.b),
                    "kind": u.kind.text(),
                })
            })
            .collect();
        let unbound: Vec<Value> = v
            .binding
            .unbound_devices()
            .map(|d| {
                let dev = &plan.devices[d];
                json!({"device": dev.name, "rack": plan.racks[dev.rack].name, "u": dev.u})
            })
            .collect();
        let unexpected_devices: Vec<Value> = v
            .unexpected_devices
            .iter()
            .map(|&n| {
                let node = self.fabric.node(n);
                json!({
                    "guid": node.guid.to_string(),
                    "kind": kind_word(node.kind),
                    "description": node.description.trim(),
                })
            })
            .collect();
        let progress: Vec<Value> = v
            .progress
            .iter()
            .map(|p| {
                json!({
                    "rack": plan.racks[p.rack].name,
                    "expected": p.expected,
                    "verified": p.verified,
                    "not_verifiable": p.not_verifiable,
                })
            })
            .collect();
        let binding: serde_json::Map<String, Value> = v
            .binding
            .counts()
            .into_iter()
            .map(|(b, n)| (b.text().to_string(), json!(n)))
            .collect();
        json!({
            "plan": plan.name,
            "clean": v.is_clean(),
            "counts": {
                "cables": plan.cables.len(),
                "ok": c.ok,
                "degraded": c.degraded,
                "miswired": c.miswired,
                "missing": c.missing,
                "down": c.down,
                "not_verifiable": c.not_verifiable,
                "unexpected_cables": c.unexpected,
                "unbound_devices": c.unbound_devices,
                "unexpected_devices": c.unexpected_devices,
                "actions": c.actions,
                "observed_cables": v.observed_cables,
                "ignored_links": v.ignored_links,
            },
            "binding": binding,
            "binding_notes": v.binding.warnings,
            "actions": actions,
            "findings": findings,
            "unexpected_cables": unexpected,
            "unbound_devices": unbound,
            "unexpected_devices": unexpected_devices,
            "progress": progress,
        })
    }

    /// [`Self::json_value`] as pretty-printed text.
    pub fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.json_value()).expect("JSON values");
        text.push('\n');
        text
    }
}

fn kind_word(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Switch => "switch",
        NodeKind::Ca => "host",
        NodeKind::Router => "router",
    }
}

/// `4xEDR`, `1x`, `EDR` or nothing.
fn rate(
    width: Option<crate::topology::LinkWidth>,
    speed: Option<crate::topology::LinkSpeed>,
) -> Option<String> {
    match (width, speed) {
        (None, None) => None,
        (w, s) => Some(format!(
            "{}{}",
            w.map_or(String::new(), |w| w.to_string()),
            s.map_or("", |s| s.token())
        )),
    }
}

/// `1x instead of 4x`, `SDR instead of EDR`, `1xSDR instead of 4xEDR`.
fn shortfall(d: &Degradation) -> String {
    match (d.narrow, d.slow) {
        (true, false) => format!(
            "{} instead of {}",
            rate(d.width, None).unwrap_or_default(),
            rate(d.expected_width, None).unwrap_or_default()
        ),
        (false, true) => format!(
            "{} instead of {}",
            rate(None, d.speed).unwrap_or_default(),
            rate(None, d.expected_speed).unwrap_or_default()
        ),
        _ => format!(
            "{} instead of {}",
            rate(d.width, d.speed).unwrap_or_default(),
            rate(d.expected_width, d.expected_speed).unwrap_or_default()
        ),
    }
}

/// The device all moves happen on, when they all start and end on one device.
fn single_device(ms: &[MoveStep]) -> Option<usize> {
    let d = ms[0].to.device;
    ms.iter()
        .all(|m| m.to.device == d && matches!(m.from, Place::Device(e) if e.device == d))
        .then_some(d)
}

fn port_of(place: Place) -> u8 {
    match place {
        Place::Device(e) => e.port,
        Place::Node(p) => p.port,
    }
}
