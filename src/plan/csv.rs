//! Plans as CSV cable lists: one row per cable with A and Z columns (rack, U, device, port),
//! cable id, label, kind, length, rate and wiring step. The file opens in a spreadsheet (header
//! row, RFC 4180 quoting) and a site with its own layout can write one and verify against it.
//!
//! Reading needs only `a_device`, `a_port`, `b_device` and `b_port`; every other column is
//! optional, header names are matched without regard to case, and unknown columns are ignored.
//! Without `a_kind`/`b_kind`, a device is taken for a host when it has at most two cables, on
//! ports 1 and 2 only, and every device it is cabled to has at least three cables; all others
//! are switches. Without `kind`, cables inside a rack are copper and between racks optical.

use std::collections::{BTreeMap, HashMap};

use super::document::{RawCable, assemble};
use super::{CableKind, Device, DeviceKind, Plan, PlanError, Rack, SwitchModel};
use crate::topology::FabricError;

/// The columns written, in order. The first ten are the columns of common cable lists
/// (`cable_id, a_rack, a_u, a_device, a_port, b_rack, b_u, b_device, b_port, kind`).
pub const COLUMNS: [&str; 19] = [
    "cable_id",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "kind",
    "length_m",
    "rate",
    "step",
    "step_name",
    "label",
    "a_slot",
    "b_slot",
    "a_kind",
    "b_kind",
];

/// The columns added when a device of the plan has a switch model: the model of each end and
/// the faceplate label of each port (empty where it is the port number).
pub const MODEL_COLUMNS: [&str; 4] = ["a_model", "b_model", "a_port_label", "b_port_label"];

/// Renders the plan as CSV, one row per cable in wiring order; with [`MODEL_COLUMNS`] after
/// [`COLUMNS`] when the plan names switch models.
pub fn write(plan: &Plan) -> String {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    let models = plan.devices.iter().any(|d| d.model.is_some());
    let mut header: Vec<&str> = COLUMNS.to_vec();
    if models {
        header.extend(MODEL_COLUMNS);
    }
    out.write_record(&header).expect("writing to memory");
    let opt = |v: Option<u32>| v.map_or(String::new(), |v| v.to_string());
    for c in &plan.cables {
        let (a, b) = (&plan.devices[c.a.device], &plan.devices[c.b.device]);
        let mut record = vec![
            c.id.clone(),
            plan.racks[a.rack].name.clone(),
            opt(a.u),
            a.name.clone(),
            c.a.port.to_string(),
            plan.racks[b.rack].name.clone(),
            opt(b.u),
            b.name.clone(),
            c.b.port.to_string(),
            c.kind.to_string(),
            c.length_m.map_or(String::new(), |l| l.to_string()),
            c.rate.clone().unwrap_or_default(),
            c.step.to_string(),
            plan.steps[c.step as usize - 1].clone(),
            plan.label(c),
            opt(a.slot),
            opt(b.slot),
            a.kind.to_string(),
            b.kind.to_string(),
        ];
        if models {
            let model = |d: &Device| d.model.as_ref().map_or(String::new(), |m| m.name.clone());
            record.extend([
                model(a),
                model(b),
                plan.port_label(c.a).unwrap_or_default(),
                plan.port_label(c.b).unwrap_or_default(),
            ]);
        }
        out.write_record(&record).expect("writing to memory");
    }
    String::from_utf8(out.into_inner().expect("flushing to memory")).expect("UTF-8 fields")
}

/// Why a CSV cable list could not be read: the line (1-based, the header is line 1) and what
/// was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct CsvError {
    /// Line number.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// One cable as read from a row.
struct Row {
    line: u64,
    id: String,
    a: RowEnd,
    b: RowEnd,
    kind: Option<CableKind>,
    length_m: Option<f64>,
    rate: Option<String>,
    step: u32,
    step_name: Option<String>,
}

/// One end as read from a row.
struct RowEnd {
    rack: Option<String>,
    u: Option<u32>,
    slot: Option<u32>,
    device: String,
    port: u8,
    kind: Option<DeviceKind>,
    model: Option<SwitchModel>,
}

/// Reads a CSV cable list into a plan called `name`.
///
/// # Errors
/// A missing required column, a field that is not what its column holds (with the line), or an
/// inconsistent plan (a device in two racks, two cables on one port, ...).
pub fn read(text: &str, name: &str) -> Result<Plan, CsvError> {
    if let Some(line) = unclosed_quote(text) {
        return Err(CsvError {
            line,
            message: "a quoted field opens here and is never closed: the file looks cut short"
                .into(),
        });
    }
    let mut reader = ::csv::ReaderBuilder::new()
        .trim(::csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| CsvError {
            line: 1,
            message: e.to_string(),
        })?
        .iter()
        .map(|h| h.trim_start_matches('#').to_ascii_lowercase())
        .collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    for required in ["a_device", "a_port", "b_device", "b_port"] {
        if column(required).is_none() {
            return Err(CsvError {
                line: 1,
                message: format!(
                    "expected a header with at least a_device, a_port, b_device, b_port; {required} is missing"
                ),
            });
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut records = reader.records().peekable();
    while let Some(record) = records.next() {
        let record = record.map_err(|e| CsvError {
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let last = records.peek().is_none();
        if last && record.len() < header.len() && !text.ends_with('\n') {
            return Err(CsvError {
                line,
                message: format!(
                    "the last row has {} of the header's {} fields and no line end: the file \
                     looks cut short",
                    record.len(),
                    header.len()
                ),
            });
        }
        if record.iter().all(str::is_empty) {
            continue;
        }
        let field = |name: &str| {
            column(name)
                .and_then(|i| record.get(i))
                .filter(|v| !v.is_empty())
        };
        let fail = |message: String| CsvError { line, message };
        let number = |name: &str| -> Result<Option<u32>, CsvError> {
            field(name)
                .map(|v| {
                    v.parse().map_err(|e: std::num::ParseIntError| {
                        fail(match e.kind() {
                            std::num::IntErrorKind::PosOverflow => {
                                format!("{name} {v} is too large (at most {})", u32::MAX)
                            }
                            _ => format!("{name} {v:?} is not a whole number"),
                        })
                    })
                })
                .transpose()
        };
        let end = |side: &str| -> Result<RowEnd, CsvError> {
            let device = field(&format!("{side}_device"))
                .ok_or_else(|| fail(format!("{side}_device is empty")))?;
            let model = field(&format!("{side}_model"))
                .map(|m| SwitchModel::by_name(m).map_err(|e| fail(format!("{side}_model: {e}"))))
                .transpose()?;
            let port_text = field(&format!("{side}_port")).unwrap_or("");
            let port = match &model {
                Some(m) => m.port_from_label(port_text).ok_or_else(|| {
                    fail(format!(
                        "{side}_port {port_text:?} is not a port of a {} (1..={}{})",
                        m.name,
                        m.ports,
                        m.port_label(m.ports)
                            .map_or(String::new(), |l| format!(" or 1/1..={l}"))
                    ))
                })?,
                None => port_text.parse().ok().filter(|&p| p > 0).ok_or_else(|| {
                    fail(format!(
                        "{side}_port {port_text:?} is not a port number (1..=255)"
                    ))
                })?,
            };
            let kind = match field(&format!("{side}_kind")) {
                None => None,
                Some(k) if k.eq_ignore_ascii_case("switch") => Some(DeviceKind::Switch),
                Some(k) if k.eq_ignore_ascii_case("host") => Some(DeviceKind::Host),
                Some(k) => return Err(fail(format!("{side}_kind {k:?} is not switch or host"))),
            };
            Ok(RowEnd {
                rack: field(&format!("{side}_rack")).map(str::to_string),
                u: number(&format!("{side}_u"))?,
                slot: number(&format!("{side}_slot"))?,
                device: device.to_string(),
                port,
                kind,
                model,
            })
        };
        let (a, b) = (end("a")?, end("b")?);
        let kind = field("kind")
            .map(|k| k.parse::<CableKind>().map_err(&fail))
            .transpose()?;
        let length = field("length_m")
            .map(|v| {
                v.parse::<f64>()
                    .map_err(|_| fail(format!("length_m {v:?} is not a number")))
            })
            .transpose()?;
        let id =
            field("cable_id").map_or_else(|| format!("C-{:04}", rows.len() + 1), str::to_string);
        let step = number("step")?.unwrap_or(1);
        if step == 0 {
            return Err(fail("step must be 1 or more".into()));
        }
        let (rate, step_name) = (
            field("rate").map(str::to_string),
            field("step_name").map(str::to_string),
        );
        rows.push(Row {
            line,
            id,
            a,
            b,
            kind,
            length_m: length,
            rate,
            step,
            step_name,
        });
    }
    assemble_rows(rows, name)
}

/// The line where a quoted field opens that the text never closes (RFC 4180: a quote opens a
/// field only at its start, and `""` inside it is a quote), which the CSV reader would take
/// for a field running to the end of the file.
fn unclosed_quote(text: &str) -> Option<u64> {
    let (mut line, mut opened) = (1, None);
    let mut at_field_start = true;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (opened, c) {
            (Some(_), '"') if chars.peek() == Some(&'"') => {
                chars.next();
            }
            (Some(_), '"') => opened = None,
            (None, '"') if at_field_start => opened = Some(line),
            _ => {}
        }
        if c == '\n' {
            line += 1;
        }
        at_field_start = opened.is_none() && matches!(c, ',' | '\n' | '\r');
    }
    opened
}

fn assemble_rows(rows: Vec<Row>, name: &str) -> Result<Plan, CsvError> {
    // Devices: rack, U, slot and kind from their rows (they must agree), ports up to the highest used.
    struct Seen {
        rack: String,
        u: Option<u32>,
        slot: Option<u32>,
        kind: Option<DeviceKind>,
        model: Option<SwitchModel>,
        max_port: u8,
        cables: usize,
        ports: Vec<u8>,
        peers: Vec<String>,
        first_line: u64,
    }
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for Row { line, a, b, .. } in &rows {
        for (end, other) in [(a, b), (b, a)] {
            let rack = end.rack.clone().unwrap_or_else(|| "R01".into());
            let entry = seen.entry(end.device.clone()).or_insert_with(|| {
                order.push(end.device.clone());
                Seen {
                    rack: rack.clone(),
                    u: None,
                    slot: None,
                    kind: None,
                    model: None,
                    max_port: 0,
                    cables: 0,
                    ports: Vec::new(),
                    peers: Vec::new(),
                    first_line: *line,
                }
            });
            if entry.rack != rack {
                return Err(CsvError {
                    line: *line,
                    message: format!(
                        "{} is in rack {} here but in rack {} at line {}",
                        end.device, rack, entry.rack, entry.first_line
                    ),
                });
            }
            entry.u = entry.u.or(end.u);
            entry.slot = entry.slot.or(end.slot);
            entry.kind = entry.kind.or(end.kind);
            if let (Some(had), Some(model)) = (&entry.model, &end.model)
                && had != model
            {
                return Err(CsvError {
                    line: *line,
                    message: format!(
                        "{} is a {} here but a {} at line {}",
                        end.device, model.name, had.name, entry.first_line
                    ),
                });
            }
            entry.model = entry.model.take().or_else(|| end.model.clone());
            entry.max_port = entry.max_port.max(end.port);
            entry.cables += 1;
            entry.ports.push(end.port);
            entry.peers.push(other.device.clone());
        }
    }
    let cables_of: HashMap<&str, usize> =
        seen.iter().map(|(n, s)| (n.as_str(), s.cables)).collect();
    let mut rack_names: Vec<&str> = seen.values().map(|s| s.rack.as_str()).collect();
    rack_names.sort_by_key(|r| natural_key(r));
    rack_names.dedup();
    let rack_index: HashMap<&str, usize> = rack_names
        .iter()
        .enumerate()
        .map(|(i, &r)| (r, i))
        .collect();
    let tallest = seen.values().filter_map(|s| s.u).max().unwrap_or(0);
    let racks: Vec<Rack> = rack_names
        .iter()
        .map(|&r| Rack {
            name: r.to_string(),
            units: tallest.max(42),
        })
        .collect();
    let devices: Vec<Device> = order
        .iter()
        .map(|name| {
            let s = &seen[name];
            let looks_like_host = s.cables <= 2
                && s.ports.iter().all(|&p| p <= 2)
                && s.peers.iter().all(|p| cables_of[p.as_str()] >= 3);
            let kind = s.kind.unwrap_or(if looks_like_host && s.model.is_none() {
                DeviceKind::Host
            } else {
                DeviceKind::Switch
            });
            Device {
                name: name.clone(),
                kind,
                rack: rack_index[s.rack.as_str()],
                u: s.u,
                slot: s.slot,
                ports: s.model.as_ref().map_or(0, |m| m.ports).max(s.max_port),
                guid: None,
                description: None,
                model: s.model.clone(),
            }
        })
        .collect();
    let max_step = rows.iter().map(|r| r.step).max().unwrap_or(1);
    let mut steps: Vec<String> = (1..=max_step).map(|s| format!("step {s}")).collect();
    for row in &rows {
        if let Some(step_name) = &row.step_name {
            steps[row.step as usize - 1] = step_name.clone();
        }
    }
    let lines: HashMap<String, u64> = rows.iter().map(|r| (r.id.clone(), r.line)).collect();
    // The lines on which each port is cabled: a port cabled twice is reported at its second.
    let mut port_lines: HashMap<(String, u8), Vec<u64>> = HashMap::new();
    for row in &rows {
        for end in [&row.a, &row.b] {
            port_lines
                .entry((end.device.clone(), end.port))
                .or_default()
                .push(row.line);
        }
    }
    let raw = rows
        .into_iter()
        .map(
            |Row {
                 id,
                 a,
                 b,
                 kind,
                 length_m,
                 rate,
                 step,
                 ..
             }| {
                let same_rack = seen[&a.device].rack == seen[&b.device].rack;
                let kind = kind.unwrap_or(if same_rack {
                    CableKind::Copper
                } else {
                    CableKind::Optical
                });
                RawCable {
                    id,
                    a: (a.device, a.port),
                    b: (b.device, b.port),
                    kind,
                    length_m,
                    step,
                    rate,
                }
            },
        )
        .collect();
    assemble(name.to_string(), racks, devices, raw, steps).map_err(|e| {
        let line = match &e {
            PlanError::Duplicate { name, .. } | PlanError::UnknownDevice { cable: name, .. } => {
                lines.get(name).copied()
            }
            PlanError::Fabric(FabricError::PortInUse { node, port, .. }) => port_lines
                .get(&(node.clone(), *port))
                .and_then(|at| at.get(1).copied()),
            _ => None,
        };
        CsvError {
            line: line.unwrap_or(0),
            message: e.to_string(),
        }
    })
}

/// Sorts `R2` before `R10`: text with its digit runs compared as numbers.
fn natural_key(text: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(split);
        let digits = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        key.push((word.to_string(), tail[..digits].parse().unwrap_or(0)));
        rest = &tail[digits..];
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::CableEnd;
    use crate::plan::build::{PlanOptions, plan_for};
    use crate::plan::document::PlanDocument;

    #[test]
    fn written_csv_reads_back_as_the_same_plan() {
        for text in ["slimfly:q=5", "mlfm:d=3", "lsft:n=3"] {
            let plan = plan_for(&text.parse().unwrap(), &PlanOptions::default()).unwrap();
            let csv = write(&plan);
            assert!(csv.starts_with(
                "cable_id,a_rack,a_u,a_device,a_port,b_rack,b_u,b_device,b_port,kind,"
            ));
            assert_eq!(csv.lines().count(), plan.cables.len() + 1);
            let back = read(&csv, &plan.name).unwrap();
            // CSV carries no GUIDs, descriptions, rack heights or port counts (a device has as
            // many ports as its highest cabled one); everything else survives.
            let strip = |p: &Plan| {
                let mut p = p.clone();
                p.devices
                    .iter_mut()
                    .for_each(|d| (d.guid, d.description) = (None, None));
                p.racks.iter_mut().for_each(|r| r.units = 42);
                let mut doc = PlanDocument::from_plan(&p);
                doc.devices.sort_by(|a, b| a.name.cmp(&b.name));
                doc.devices.iter_mut().for_each(|d| d.ports = 0);
                doc
            };
            assert_eq!(strip(&back), strip(&plan), "{text}");
        }
    }

    #[test]
    fn the_fixture_cable_list_imports_with_hosts_recognised() {
        let Some(text) = crate::io::fixture("ibsim-generated/slimfly-q5/slimfly_q5_plan.csv")
        else {
            return;
        };
        let plan = read(&text, "slimfly-q5").unwrap();
        // 375 data rows (wc -l gives 376 with the header); 50 switches and 200 hosts named
        // sw* and sfn* in the file.
        assert_eq!(plan.cables.len(), 375);
        let count = |k| plan.devices.iter().filter(|d| d.kind == k).count();
        assert_eq!(
            (count(DeviceKind::Switch), count(DeviceKind::Host)),
            (50, 200)
        );
        assert!(
            plan.devices
                .iter()
                .filter(|d| d.kind == DeviceKind::Host)
                .all(|d| d.name.starts_with("sfn"))
        );
        assert_eq!(
            plan.racks
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            ["R01", "R02", "R03", "R04", "R05"]
        );
        let inter = plan
            .cables
            .iter()
            .filter(|c| c.kind == CableKind::Optical)
            .count();
        assert_eq!(inter, 100, "inter-rack rows are optical");
    }

    #[test]
    fn a_file_cut_inside_a_quoted_field_is_an_error_naming_the_line() {
        let plan = plan_for(&"slimfly:q=5".parse().unwrap(), &PlanOptions::default()).unwrap();
        let text = write(&plan);
        for row in 2..6 {
            let start: usize = text.lines().take(row - 1).map(|l| l.len() + 1).sum();
            let line = text.lines().nth(row - 1).unwrap();
            let quote = start + line.find(",\"").unwrap() + 2;
            let err = read(&text[..quote + 3], "cut").unwrap_err();
            assert_eq!(err.line, row as u64, "{err}");
            assert!(err.message.contains("never closed"), "{err}");
        }
    }

    #[test]
    fn every_cut_of_a_written_list_is_an_error_or_its_complete_rows() {
        let plan = plan_for(&"mlfm:d=3".parse().unwrap(), &PlanOptions::default()).unwrap();
        let text = write(&plan);
        let ends = |p: &Plan| {
            p.cables
                .iter()
                .map(|c| {
                    let end = |e: CableEnd| (p.devices[e.device].name.clone(), e.port);
                    (c.id.clone(), end(c.a), end(c.b))
                })
                .collect::<Vec<_>>()
        };
        let full = ends(&plan);
        let first_rows: usize = text.lines().take(5).map(|l| l.len() + 1).sum();
        for cut in (0..=first_rows).filter(|&i| text.is_char_boundary(i)) {
            let prefix = &text[..cut];
            let Ok(back) = read(prefix, "cut") else {
                continue;
            };
            // Read without error: every row after the header is a whole cable of the plan.
            let got = ends(&back);
            assert_eq!(
                got.len(),
                prefix.lines().count() - 1,
                "cut at {cut}: {prefix:?}"
            );
            assert_eq!(got, full[..got.len()], "cut at {cut}: {prefix:?}");
        }
    }

    #[test]
    fn switch_models_and_cage_labels_read_back() {
        let model = SwitchModel::by_name("qm9700").unwrap();
        let options = PlanOptions {
            switches: Some(crate::plan::SwitchLayout {
                ports: model.ports,
                model: Some(model.clone()),
            }),
            ..PlanOptions::default()
        };
        let plan = plan_for(&"slimfly:q=5".parse().unwrap(), &options).unwrap();
        let text = write(&plan);
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with(&MODEL_COLUMNS.join(","))
        );
        let back = read(&text, &plan.name).unwrap();
        for d in &back.devices {
            let switch = d.kind == DeviceKind::Switch;
            assert_eq!(d.model.is_some(), switch, "{}", d.name);
            if switch {
                assert_eq!(d.ports, 64, "{}", d.name);
            }
        }
        let labels = |p: &Plan| p.cables.iter().map(|c| p.label(c)).collect::<Vec<_>>();
        assert_eq!(labels(&back), labels(&plan));

        // A port given by its faceplate label.
        let header = "a_device,a_port,a_model,b_device,b_port,b_model\n";
        let plan = read(&format!("{header}s1,17/2,qm9700,s2,1/1,qm9700\n"), "t").unwrap();
        assert_eq!((plan.cables[0].a.port, plan.cables[0].b.port), (34, 1));
        let err = read(&format!("{header}s1,33/1,qm9700,s2,1,qm9700\n"), "t")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "line 2: a_port \"33/1\" is not a port of a qm9700 (1..=64 or 1/1..=32/2)"
        );
        let err = read(&format!("{header}s1,1,qm9700,s1,2,msb7800\n"), "t")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "line 2: s1 is a msb7800 here but a qm9700 at line 2");
    }

    #[test]
    fn bad_rows_name_the_line_and_the_column() {
        let header = "cable_id,a_rack,a_u,a_device,a_port,b_rack,b_u,b_device,b_port\n";
        let err = |body: &str| {
            read(&format!("{header}{body}"), "t")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("C1,R01,1,s1,x,R01,2,s2,1\n"),
            "line 2: a_port \"x\" is not a port number (1..=255)"
        );
        assert_eq!(
            err("C1,R01,1,s1,1,R01,2,s2,1\nC2,R02,1,s1,2,R01,2,s2,2\n"),
            "line 3: s1 is in rack R02 here but in rack R01 at line 2"
        );
        assert_eq!(
            err("C1,R01,1,s1,1,R01,2,s2,1\nC1,R01,1,s1,2,R01,2,s2,2\n"),
            "line 3: cable id \"C1\" is listed twice"
        );
        assert_eq!(
            err("C1,R01,1,s1,1,R01,2,s2,1\nC2,R01,1,s1,1,R01,2,s3,1\n"),
            "line 3: s1 port 1 already has a cable (to s2[1])"
        );
        let err = read("a_device,a_port,b_device\ns,1,t\n", "t")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "line 1: expected a header with at least a_device, a_port, b_device, b_port; b_port is missing"
        );
    }
}
