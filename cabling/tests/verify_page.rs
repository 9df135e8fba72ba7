//! The page of `cabling verify --format html` as a technician sees it: the project's Slim Fly
//! q = 5 plan against a dump of the fabric with cables swapped, left out and added, rendered by
//! headless Chromium. The faulty devices' boxes must show in the fault colour, over at least the
//! area of one small device box each; the page of the fabric as planned must show none of it.

use std::path::Path;
use std::process::Command;

use ibfabric::plan::{CableEnd, DeviceKind, Plan};
use ibfabric::verify::wiring::Wiring;

use crate::common::chromium::screenshot;

/// The fill of a device with a cable to fix (`svg .vf` in the page's style sheet).
const FAULT_FILL: [u8; 3] = [0xf0, 0x80, 0x80];

fn cabling(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cabling"))
        .args(args)
        .output()
        .expect("run cabling")
}

/// The plan `cabling plan` writes, read back.
fn plan(dir: &Path) -> (Plan, String) {
    let out = dir.join("plan");
    let made = cabling(&[
        "plan",
        "slimfly",
        "--q",
        "5",
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let path = out.join("plan.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let plan = ibfabric::plan::text::from_text(&text, "plan", Some("yaml")).unwrap();
    (plan, path.to_str().unwrap().to_string())
}

/// `cabling verify --format html` of `plan` against the dump of `wiring`; the page's path and
/// the exit status.
fn page(dir: &Path, plan: (&Plan, &str), wiring: &Wiring, name: &str) -> (std::path::PathBuf, i32) {
    let fabric = wiring.to_fabric(plan.0, 2).unwrap();
    let dump = dir.join(format!("{name}.topo"));
    std::fs::write(&dump, ibfabric::io::ibnetdiscover::write(&fabric)).unwrap();
    let html = dir.join(format!("{name}.html"));
    let out = cabling(&[
        "verify",
        "--plan",
        plan.1,
        "--ibnetdiscover",
        dump.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    (html, out.status.code().unwrap_or(-1))
}

/// Pixels of the fault colour in a screenshot of `html` tall enough for every sheet.
fn fault_pixels(html: &Path) -> Option<usize> {
    let sheets = std::fs::read_to_string(html)
        .unwrap()
        .matches("<section class=\"sheet\"")
        .count() as u32;
    // A sheet on screen is an A4 page (about 1,120 px at 96 dpi) and its margin.
    let (rgb, _, _) = screenshot(html, 1000, sheets * 1200 + 200)?;
    let near = |p: &[u8], c: [u8; 3]| p.iter().zip(c).all(|(&a, b)| a.abs_diff(b) <= 12);
    Some(rgb.chunks(3).filter(|p| near(p, FAULT_FILL)).count())
}

#[test]
fn chromium_shows_every_faulty_device_in_the_fault_colour_and_none_when_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, plan_path) = plan(dir.path());
    let wiring = Wiring::from_plan(&plan);
    let (clean, status) = page(dir.path(), (&plan, &plan_path), &wiring, "clean");
    assert_eq!(status, 0, "the fabric as planned verifies clean");
    let Some(clean_pixels) = fault_pixels(&clean) else {
        return;
    };
    assert_eq!(clean_pixels, 0, "nothing marked on a clean fabric");

    // Faults in three racks: two ends swapped, a cable left out, a cable between spare ports.
    let mut faulty = wiring.clone();
    let (x, y) = (faulty.wires[0], faulty.wires[40]);
    faulty.swap_ends(x.a, y.b);
    let gone = faulty.wires[150];
    faulty.unplug(gone.a);
    let switches: Vec<usize> = (0..plan.devices.len())
        .filter(|&d| plan.devices[d].kind == DeviceKind::Switch)
        .collect();
    let spare = |d: usize| CableEnd {
        device: d,
        port: plan.devices[d].ports + 1,
    };
    faulty.plug(spare(switches[3]), spare(switches[45]));
    let (html, status) = page(dir.path(), (&plan, &plan_path), &faulty, "faulty");
    assert_eq!(status, 1, "findings exit 1");
    let text = std::fs::read_to_string(&html).unwrap();
    let marked: std::collections::BTreeSet<&str> = text
        .match_indices("class=\"vf\" data-device=\"")
        .map(|(i, m)| text[i + m.len()..].split('"').next().unwrap())
        .collect();
    for end in [
        x.a,
        x.b,
        y.a,
        y.b,
        gone.a,
        gone.b,
        spare(switches[3]),
        spare(switches[45]),
    ] {
        let name = plan.devices[end.device].name.as_str();
        assert!(marked.contains(name), "{name} not marked: {marked:?}");
    }
    let pixels = fault_pixels(&html).expect("chromium ran for the clean page");
    // The smallest device box on these sheets (a host in a shared unit) is well over 100 px.
    assert!(
        pixels >= 100 * marked.len(),
        "{pixels} fault-coloured pixels for {} marked devices",
        marked.len()
    );
}
