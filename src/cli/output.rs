//! Where results go: stdout, or files replaced atomically (a reader never sees half a file, and a
//! set of files written together is replaced whole or not at all).
//!
//! New files get the permissions the umask allows (0644 under the usual 022), as `>` in a shell
//! would give them: a plan or a routing table is meant to be read by the other admins and by
//! OpenSM, not kept private the way a temporary file is.

use std::fs::Permissions;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use tempfile::{NamedTempFile, TempPath};

/// Writes `text` to `path` (atomically: a temporary file in the same directory, then a rename),
/// or to stdout when `path` is `None` or `-`.
pub fn emit(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        None => write_stdout(text),
        Some(p) if p == Path::new("-") => write_stdout(text),
        Some(p) => write_atomically(p, text.as_bytes()),
    }
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Replaces `path` with `bytes` so that it holds either the old or the new content, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = staged(path, bytes)?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Replaces `path` with what `write` writes, as [`write_atomically`] does, but streamed: the
/// content never has to fit in memory at once (the forwarding tables of the largest fabrics run
/// to a gigabyte and more as text).
pub fn stream_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut tmp = temporary_next_to(path)?;
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        write(&mut out)
            .and_then(|()| out.flush())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Writes every `(path, bytes)` pair, all or none: each goes to a temporary file first, and the
/// renames come only when all are written. Should a rename fail (say the target name is taken
/// by a directory), the files already replaced get their old content back and new ones are
/// removed, so a failed run leaves the directory as it found it.
pub fn write_all_atomically(files: &[(PathBuf, Vec<u8>)]) -> anyhow::Result<()> {
    let staged = files
        .iter()
        .map(|(path, bytes)| staged(path, bytes).map(|tmp| (path, tmp.into_temp_path())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut replaced: Vec<Replaced> = Vec::with_capacity(staged.len());
    for (path, tmp) in staged {
        match replace(path, tmp) {
            Ok(done) => replaced.push(done),
            Err(err) => {
                for done in replaced.into_iter().rev() {
                    done.undo();
                }
                return Err(err);
            }
        }
    }
    Ok(())
}

/// A file put in place by [`write_all_atomically`], with what it replaced (kept aside until the
/// whole set is in place; the aside copy is deleted when this is dropped).
struct Replaced {
    path: PathBuf,
    previous: Option<TempPath>,
}

impl Replaced {
    /// Puts the previous content back, or removes the file if there was none. Best effort: this
    /// runs while another error is being reported.
    fn undo(self) {
        match &self.previous {
            Some(aside) => {
                let _ = std::fs::rename(aside, &self.path);
            }
            None => {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

fn replace(path: &Path, tmp: TempPath) -> anyhow::Result<Replaced> {
    let previous = match std::fs::symlink_metadata(path) {
        Ok(_) => {
            let aside = NamedTempFile::new_in(directory_of(path))
                .with_context(|| format!("replacing {}", path.display()))?
                .into_temp_path();
            std::fs::rename(path, &aside)
                .with_context(|| format!("replacing {}", path.display()))?;
            Some(aside)
        }
        Err(_) => None,
    };
    let done = Replaced {
        path: path.to_path_buf(),
        previous,
    };
    if let Err(err) = tmp.persist(path) {
        done.undo();
        return Err(err.error).with_context(|| format!("replacing {}", path.display()));
    }
    Ok(done)
}

/// `bytes` in a new temporary file next to `path`, synced, with the umask's permissions.
fn staged(path: &Path, bytes: &[u8]) -> anyhow::Result<NamedTempFile> {
    let mut tmp = temporary_next_to(path)?;
    tmp.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(tmp)
}

/// A new, empty temporary file in `path`'s directory, with the umask's permissions.
fn temporary_next_to(path: &Path) -> anyhow::Result<NamedTempFile> {
    let dir = directory_of(path);
    tempfile::Builder::new()
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old content, longer than the new one").unwrap();
        emit(Some(&path), "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let entries = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries, 1);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = write_atomically(&missing.join("out.txt"), b"x").unwrap_err();
        assert!(
            format!("{err:#}").contains(&missing.display().to_string()),
            "{err:#}"
        );
    }

    #[test]
    fn a_streamed_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old").unwrap();
        stream_atomically(&path, |out| {
            (0..3).try_for_each(|i| writeln!(out, "block {i}"))
        })
        .unwrap();
        assert_eq!(
            listing(dir.path()),
            [("out.txt".into(), Some("block 0\nblock 1\nblock 2\n".into()))]
        );
    }

    #[test]
    fn a_stream_that_fails_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old").unwrap();
        let err = stream_atomically(&path, |out| {
            writeln!(out, "half")?;
            Err(std::io::Error::other("the source ran dry"))
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("the source ran dry"), "{err:#}");
        assert_eq!(
            listing(dir.path()),
            [("out.txt".into(), Some("old".into()))]
        );
    }

    fn listing(dir: &Path) -> Vec<(String, Option<String>)> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).ok())
            })
            .collect();
        entries.sort();
        entries
    }

    #[test]
    fn a_set_of_files_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b"), "old b").unwrap();
        let files: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|n| (dir.path().join(n), format!("new {n}").into_bytes()))
            .collect();
        write_all_atomically(&files).unwrap();
        let expected: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|n| (n.to_string(), Some(format!("new {n}"))))
            .collect();
        assert_eq!(listing(dir.path()), expected);
    }

    /// Every position of the failing file in the set: the ones before it were already renamed
    /// into place and must be rolled back, old content restored and new files removed.
    #[test]
    fn a_set_with_one_unwritable_target_leaves_the_directory_as_it_was() {
        for failing in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let names = ["a", "b", "c", "d"];
            std::fs::write(dir.path().join("a"), "old a").unwrap();
            std::fs::write(dir.path().join("c"), "old c").unwrap();
            // A directory can't be replaced by a file: the rename onto it fails.
            std::fs::remove_file(dir.path().join(names[failing])).ok();
            std::fs::create_dir(dir.path().join(names[failing])).unwrap();
            let before = listing(dir.path());
            let files: Vec<_> = names
                .iter()
                .map(|n| (dir.path().join(n), format!("new {n}").into_bytes()))
                .collect();
            let err = write_all_atomically(&files).unwrap_err();
            let failing_path = dir.path().join(names[failing]).display().to_string();
            assert!(format!("{err:#}").contains(&failing_path), "{err:#}");
            assert_eq!(listing(dir.path()), before, "failing file {failing}");
        }
    }
}
