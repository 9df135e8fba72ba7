//! What the OpenSM plugin says when it is loaded: its version, the OpenSM it runs in, the
//! configuration file it read (or that there is none), the settings in force on one line, and
//! a warning naming a configured file it cannot read (it still routes, with the defaults).

use crate::common;

use common::plugin::{LAYERED_USED, plugin_config, run_opensm_with_plugin};
use common::{Ibsim, OpenSm};
use ibfabric::io::ibsim;
use ibfabric::topology::TopologySpec;

/// The installed daemon's version line (`OpenSM 3.3.23`), as `opensm --version` prints it.
fn opensm_version() -> String {
    let out = std::process::Command::new("timeout")
        .args(["10", "opensm", "--version"])
        .output()
        .expect("run opensm --version");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find(|l| l.starts_with("OpenSM "))
        .unwrap_or_else(|| panic!("no version in `opensm --version`:\n{text}"))
        .trim()
        .to_string()
}

fn small_fabric() -> Ibsim {
    let spec: TopologySpec = "slimfly:q=5".parse().unwrap();
    Ibsim::start(&ibsim::write_net(&spec.build().unwrap()))
}

/// The plugin's lines of the log (after OpenSM's own prefix).
fn plugin_lines(sm: &OpenSm) -> Vec<String> {
    sm.log()
        .lines()
        .filter_map(|l| l.split_once("layered: ").map(|(_, rest)| rest.to_string()))
        .collect()
}

fn load_line() -> String {
    format!(
        "osmlayered {} loaded in {}; configuration: ",
        env!("CARGO_PKG_VERSION"),
        opensm_version()
    )
}

fn count(lines: &[String], prefix: &str) -> usize {
    lines.iter().filter(|l| l.starts_with(prefix)).count()
}

#[test]
fn without_options_the_load_line_says_defaults_and_the_settings_are_logged_once() {
    let sim = small_fabric();
    let sm = run_opensm_with_plugin(&sim, None, true);
    let lines = plugin_lines(&sm);
    let expected = format!("{}no event_plugin_options: defaults", load_line());
    assert_eq!(count(&lines, &expected), 1, "{lines:#?}");
    assert_eq!(
        count(&lines, "configuration in force: layers: 2^LMC, "),
        1,
        "{lines:#?}"
    );
    assert!(sm.log().contains(LAYERED_USED), "{}", sm.log());
}

#[test]
fn a_read_file_is_named_on_the_load_line_and_its_settings_are_logged() {
    let sim = small_fabric();
    let path = plugin_config(&sim, "layered.yaml", "layers: 2\nseed: 3\n");
    let sm = run_opensm_with_plugin(&sim, Some(&path), true);
    let lines = plugin_lines(&sm);
    assert_eq!(
        count(&lines, &format!("{}{path}", load_line())),
        1,
        "{lines:#?}"
    );
    assert_eq!(
        count(&lines, "configuration in force: layers: 2, seed: 3, "),
        1,
        "{lines:#?}"
    );
    assert!(!sm.log().contains("cannot be read"), "{}", sm.log());
}

#[test]
fn a_missing_file_is_a_warning_naming_it_and_the_defaults_route() {
    let sim = small_fabric();
    let missing = sim.dir().join("no-such-layered.yaml");
    let missing = missing.to_str().unwrap();
    let sm = run_opensm_with_plugin(&sim, Some(missing), true);
    let log = sm.log();
    let warning = log
        .lines()
        .find(|l| l.contains(&format!("layered: WARNING: configuration file {missing} ")))
        .unwrap_or_else(|| panic!("no warning naming {missing}:\n{log}"));
    assert!(warning.contains("cannot be read"), "{warning}");
    assert!(warning.contains("routing with the defaults"), "{warning}");
    // Warnings go to OpenSM's error level (0x01), so the default log level keeps them.
    assert!(warning.contains(" 0x01 -> "), "{warning}");
    let lines = plugin_lines(&sm);
    assert_eq!(
        count(&lines, "configuration in force: layers: 2^LMC, "),
        1,
        "{lines:#?}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
}

#[test]
fn an_unreadable_file_is_a_warning_naming_it_and_the_defaults_route() {
    let sim = small_fabric();
    // A directory where the file should be: unreadable for root too.
    let path = sim.dir().join("layered.d");
    std::fs::create_dir(&path).unwrap();
    let path = path.to_str().unwrap();
    let sm = run_opensm_with_plugin(&sim, Some(path), true);
    let log = sm.log();
    assert!(
        log.contains(&format!(
            "layered: WARNING: configuration file {path} (event_plugin_options) cannot be read"
        )),
        "{log}"
    );
    assert!(log.contains(LAYERED_USED), "{log}");
}
