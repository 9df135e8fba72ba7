use super::*;
use crate::subnet::PortRecord;
use ibfabric::topology::NodeKind;
use std::fs;

/// A switch cabled to a host, every field of the records set.
fn subnet() -> Vec<NodeRecord> {
    let port = |guid, lid, remote| {
        Some(PortRecord {
            guid,
            lid,
            lmc: 2,
            vl_cap: 4,
            width_active: 2,
            speed_active: 1,
            speed_ext_active: 8,
            remote,
        })
    };
    vec![
        NodeRecord {
            kind: NodeKind::Switch,
            guid: 0x0002_c903_0000_0001,
            description: "spine \"1\" — row 3".into(),
            ports: vec![port(0x11, 1, None), port(0x11, 0, Some((1, 1))), None],
        },
        NodeRecord {
            kind: NodeKind::Ca,
            guid: 0x0002_c903_0000_0002,
            description: "node1 HCA-1".into(),
            ports: vec![None, port(0x21, 4, Some((0, 1)))],
        },
    ]
}

fn session(steps: usize) -> SavedSession {
    SavedSession {
        settings: "layers: 2^LMC, seed: 1; lmc 2; qos true; max_op_vls 8".into(),
        steps: (0..steps)
            .map(|i| SavedStep {
                reoptimise: i == 0,
                subnet: subnet(),
            })
            .collect(),
    }
}

#[test]
fn a_saved_session_loads_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    save(&path, &session(3)).unwrap();
    assert_eq!(load(&path).unwrap(), Some(session(3)));
}

#[test]
fn saving_leaves_no_temporary_file_and_replaces_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    save(&path, &session(3)).unwrap();
    save(&path, &session(1)).unwrap();
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [FILE_NAME]);
    assert_eq!(load(&path).unwrap(), Some(session(1)));
}

#[test]
fn a_missing_file_is_no_session() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(&dir.path().join(FILE_NAME)).unwrap(), None);
}

#[test]
fn a_truncated_file_is_refused_with_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    save(&path, &session(1)).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, &text[..text.len() / 2]).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(err.contains("line 1 column"), "{err}");
}

#[test]
fn another_json_file_is_refused_as_another_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    fs::write(&path, r#"{"format": "something else", "version": 1}"#).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("not a saved routing session"), "{err}");
    assert!(err.contains("\"something else\""), "{err}");
}

#[test]
fn a_file_of_another_layout_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    fs::write(
        &path,
        format!(r#"{{"format": "{}", "version": 99}}"#, KIND.format),
    )
    .unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("layout version 99, expected 1"), "{err}");
}

#[test]
fn an_unknown_node_kind_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    save(&path, &session(1)).unwrap();
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("\"Ca\"", "\"Hub\"");
    fs::write(&path, text).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(
        err.contains("node kind \"Hub\" (expected Switch, Ca or Rt)"),
        "{err}"
    );
}

#[test]
fn removing_a_missing_file_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    crate::cache_file::remove(&dir.path().join(FILE_NAME)).unwrap();
}
