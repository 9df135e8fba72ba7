//! The multicast trees the switches hold, kept across restarts in OpenSM's cache directory
//! beside the saved routing session ([`crate::saved_session`]).
//!
//! A switch keeps its multicast entries while OpenSM restarts, or while a standby takes over,
//! but OpenSM reads none back: it rewrites a group's rows when it builds the group's tree. A
//! tree built afresh then meets the old rows at the switches not yet written, and a copy can
//! follow both: round a cycle they make together, or down one and up the other. With the trees
//! of this file as what the switches hold, the first tree of each group after the restart is
//! kept from the held one (`Groups::hold`), as after a join, so the two lie in one tree.
//!
//! Trees change on joins and leaves, outside any routing pass, so the file is written on the
//! plugin's own thread after each change (the latest state wins; a crash in between leaves the
//! trees of the change before). One that is unreadable or of another format or version is
//! logged and ignored, and the trees are then built as on a first start.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache_file::{self, Kind, LoadError};
use crate::multicast::{HeldTrees, MemberRecord};

/// The file's name in the cache directory.
pub const FILE_NAME: &str = "layered-trees.json";

/// The file's format and layout version.
const KIND: Kind = Kind {
    format: "osmlayered multicast trees",
    version: 1,
    what: "saved multicast tree file",
};

/// The lowest multicast LID.
const FIRST_MLID: u16 = 0xc000;

/// The groups' trees as the switches hold them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedTrees {
    /// Every group with a tree, by ascending MLID.
    pub groups: Vec<SavedGroup>,
}

/// One group's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedGroup {
    /// The group's multicast LID.
    pub mlid: u16,
    /// Its member ports when the tree was built.
    pub members: Vec<MemberRecord>,
    /// Per switch node GUID, the ports of its entry for the group.
    pub entries: Vec<(u64, Vec<u8>)>,
}

impl SavedTrees {
    /// What `held` holds.
    pub fn of(held: &HeldTrees) -> Self {
        Self {
            groups: held
                .iter()
                .map(|(mlid, members, entries)| SavedGroup {
                    mlid,
                    members: members.to_vec(),
                    entries: entries.to_vec(),
                })
                .collect(),
        }
    }
}

/// The trees saved at `path`; `None` when there is no file.
///
/// # Errors
/// A file that cannot be read, is not JSON of the expected layout (the message gives the line
/// and column), of another format or version, or holds a group that is no multicast group.
pub fn load(path: &Path) -> Result<Option<SavedTrees>, LoadError> {
    let saved: Option<SavedTrees> = cache_file::load(&KIND, path)?;
    saved
        .map(|s| checked(&path.display().to_string(), s))
        .transpose()
}

/// The trees in `text`, the content of the file `path` (its name in messages).
///
/// # Errors
/// As [`load`].
pub fn parse(path: &str, text: &str) -> Result<SavedTrees, LoadError> {
    checked(path, cache_file::parse(&KIND, path, text)?)
}

/// `saved` if every group has a multicast LID, once, and no port 255.
fn checked(path: &str, saved: SavedTrees) -> Result<SavedTrees, LoadError> {
    let invalid = |what: String| LoadError::Invalid {
        path: path.to_string(),
        what,
    };
    let mut seen = std::collections::BTreeSet::new();
    for (i, group) in saved.groups.iter().enumerate() {
        let mlid = group.mlid;
        if !(FIRST_MLID..u16::MAX).contains(&mlid) {
            return Err(invalid(format!(
                "group {}: MLID {mlid:#06x} (expected a multicast LID, 0xc000 to 0xfffe)",
                i + 1
            )));
        }
        if !seen.insert(mlid) {
            return Err(invalid(format!(
                "group {}: MLID {mlid:#06x} a second time",
                i + 1
            )));
        }
        if let Some((guid, _)) = group.entries.iter().find(|(_, p)| p.contains(&255)) {
            return Err(invalid(format!(
                "group {} (MLID {mlid:#06x}): switch {guid:#018x} has port 255 (expected 0 to \
                 254)",
                i + 1
            )));
        }
    }
    Ok(saved)
}

/// Writes `trees` to `path` whole (see [`cache_file::save`]).
///
/// # Errors
/// Any failure to create, write, sync or rename (the temporary file is removed).
pub fn save(path: &Path, trees: &SavedTrees) -> std::io::Result<()> {
    cache_file::save(&KIND, path, trees)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trees() -> SavedTrees {
        SavedTrees {
            groups: vec![
                SavedGroup {
                    mlid: 0xc000,
                    members: vec![MemberRecord {
                        port_guid: 0x0002_c903_0000_0011,
                        node_guid: 0x0002_c903_0000_0010,
                        port: 1,
                    }],
                    entries: vec![(0x0002_c903_0000_0100, vec![0, 3, 7])],
                },
                SavedGroup {
                    mlid: 0xc001,
                    members: Vec::new(),
                    entries: Vec::new(),
                },
            ],
        }
    }

    #[test]
    fn saved_trees_load_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        save(&path, &trees()).unwrap();
        assert_eq!(load(&path).unwrap(), Some(trees()));
        assert_eq!(load(&dir.path().join("none.json")).unwrap(), None);
    }

    #[test]
    fn a_saved_session_is_not_taken_for_trees() {
        let err = parse(
            "t.json",
            r#"{"format": "osmlayered routing session", "version": 1}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("t.json: not a saved multicast tree file"),
            "{err}"
        );
    }

    /// What loading `t`, saved, is refused with.
    fn refused(t: &SavedTrees) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        save(&path, t).unwrap();
        load(&path).unwrap_err().to_string()
    }

    #[test]
    fn a_unicast_lid_is_refused_by_group() {
        let mut t = trees();
        t.groups[1].mlid = 0x0011;
        let err = refused(&t);
        assert!(
            err.contains("group 2: MLID 0x0011 (expected a multicast LID"),
            "{err}"
        );
    }

    #[test]
    fn a_group_twice_is_refused() {
        let mut t = trees();
        t.groups[1].mlid = 0xc000;
        let err = refused(&t);
        assert!(err.contains("group 2: MLID 0xc000 a second time"), "{err}");
    }

    #[test]
    fn port_255_is_refused() {
        let mut t = trees();
        t.groups[0].entries[0].1.push(255);
        let err = refused(&t);
        assert!(err.contains("has port 255 (expected 0 to 254)"), "{err}");
    }
}
