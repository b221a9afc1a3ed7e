//! The previous build, kept aside while `retest run --selected` rebuilds, so
//! that an interrupted or failed rebuild leaves the previous build usable.
//!
//! The rebuild recompiles some objects with other probes and relinks the
//! program. `make` deletes the target it is writing when interrupted, and a
//! build stopped half way leaves some objects new and the program old (or
//! gone). So nothing of the previous build is deleted before the rebuild has
//! finished: while `RETEST_KEEP_PREVIOUS` names a directory, the wrapper moves
//! each output its compiler is about to write into it (or notes that the
//! output did not exist), and `run --selected` moves there the objects it
//! wants recompiled instead of removing them. A finished rebuild discards the
//! directory; an interrupted or failed one moves every file back (with its
//! time stamps, so `make` sees the previous build as up to date) and removes
//! what did not exist before.
//!
//! Each file is *claimed* once, by the first process to move it: a file
//! `<hash of the path>.path` created exclusively, holding the path and whether
//! the file existed, then the file itself renamed to `<hash of the path>`. A
//! claim whose file is missing although it existed was cut short before the
//! rename: the file is still where it was.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// The environment variable that tells the wrapper where to keep the files
/// its compiler replaces.
pub const ENV: &str = "RETEST_KEEP_PREVIOUS";

/// The directory the previous build is kept in.
pub struct Previous {
    dir: PathBuf,
}

/// `path` with its directory resolved (so every process names one file alike).
fn normalised(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            std::fs::canonicalize(parent).map(|p| p.join(name)).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

fn slot(dir: &Path, path: &Path) -> PathBuf {
    let h = xxhash_rust::xxh3::xxh3_128(path.as_os_str().as_encoded_bytes());
    dir.join(format!("{h:032x}"))
}

/// Moves `from` to `to`, keeping its time stamps (a copy where a rename cannot go).
fn move_file(from: &Path, to: &Path) -> io::Result<()> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    let meta = std::fs::metadata(from)?;
    std::fs::copy(from, to)?;
    let times = std::fs::FileTimes::new().set_accessed(meta.accessed()?).set_modified(meta.modified()?);
    std::fs::File::options().write(true).open(to)?.set_times(times)?;
    std::fs::remove_file(from)
}

/// Keeps `file` (any path) in `dir`, unless a process has already claimed it.
pub fn keep(dir: &Path, file: &Path) -> io::Result<()> {
    let path = normalised(file);
    let Some(text) = path.to_str().filter(|s| !s.contains('\n')) else { return Ok(()) };
    let data = slot(dir, &path);
    let claim = data.with_extension("path");
    let existed = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    let mut f = match std::fs::File::options().write(true).create_new(true).open(&claim) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    };
    writeln!(f, "{text}\n{}", if existed { "existed" } else { "absent" })?;
    f.sync_all()?;
    if existed {
        move_file(&path, &data)?;
    }
    Ok(())
}

/// Removes what a `retest` killed outright (SIGKILL) during a rebuild kept
/// aside: nothing can tell which of the store's records go with those files,
/// so the build makes the files again (the journal of each compiler run,
/// `crate::writing`, covers what was half written).
pub fn discard_abandoned(store_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(store_dir.join("tmp")) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("previous-")).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !retest_run::exec::process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl Previous {
    /// Starts keeping the previous build in a fresh directory under the store's `tmp`.
    pub fn begin(store_dir: &Path) -> io::Result<Previous> {
        let dir = store_dir.join("tmp").join(format!("previous-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(Previous { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps `file` aside (instead of removing it, so that the build makes it again).
    pub fn keep(&self, file: &Path) -> io::Result<()> {
        keep(&self.dir, file)
    }

    /// The rebuild finished: the previous build is no longer needed.
    pub fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// The rebuild did not finish: every kept file goes back where it was and
    /// every file that did not exist before is removed. Returns the paths put
    /// back or removed.
    pub fn restore(self) -> io::Result<Vec<PathBuf>> {
        let mut done = Vec::new();
        for e in std::fs::read_dir(&self.dir)? {
            let claim = e?.path();
            if claim.extension().is_none_or(|x| x != "path") {
                continue;
            }
            let text = std::fs::read_to_string(&claim)?;
            let mut lines = text.lines();
            let (Some(path), Some(state)) = (lines.next(), lines.next()) else { continue };
            let path = PathBuf::from(path);
            let data = claim.with_extension("");
            if data.exists() {
                move_file(&data, &path)?;
            } else if state == "absent" {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            } else {
                continue; // cut short before the move: the file never left
            }
            done.push(path);
        }
        std::fs::remove_dir_all(&self.dir)?;
        done.sort();
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfinished_rebuild_gets_the_previous_files_back_and_loses_the_new_ones() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join(".retest");
        let (obj, prog, new) = (d.path().join("a.o"), d.path().join("prog"), d.path().join("b.o"));
        std::fs::write(&obj, "old object").unwrap();
        std::fs::write(&prog, "old program").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options().write(true).open(&obj).unwrap().set_modified(old).unwrap();
        let p = Previous::begin(&store).unwrap();
        p.keep(&obj).unwrap();
        assert!(!obj.exists(), "kept aside, so the build makes it again");
        // the wrapper claims what its compiler writes; a second claim is no-op
        keep(p.dir(), &prog).unwrap();
        keep(p.dir(), &d.path().join(".").join("a.o")).unwrap();
        keep(p.dir(), &new).unwrap();
        std::fs::write(&obj, "half").unwrap();
        std::fs::write(&new, "new object").unwrap();
        // a claim cut short before its move: the file stays as it is
        let late = d.path().join("late.o");
        std::fs::write(&late, "late").unwrap();
        let claim = slot(p.dir(), &normalised(&late)).with_extension("path");
        std::fs::write(claim, format!("{}\nexisted\n", normalised(&late).display())).unwrap();
        let dir = p.dir().to_path_buf();
        let back = p.restore().unwrap();
        assert_eq!(back.len(), 3, "{back:?}");
        assert_eq!(std::fs::read_to_string(&obj).unwrap(), "old object");
        assert_eq!(std::fs::metadata(&obj).unwrap().modified().unwrap(), old, "time stamps kept");
        assert_eq!(std::fs::read_to_string(&prog).unwrap(), "old program");
        assert!(!new.exists(), "what did not exist before is gone");
        assert_eq!(std::fs::read_to_string(&late).unwrap(), "late");
        assert!(!dir.exists());
    }

    #[test]
    fn what_a_killed_retest_kept_aside_is_discarded_and_a_live_ones_is_not() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join(".retest");
        let mine = Previous::begin(&store).unwrap();
        // pid 0 is never a process of ours
        let dead = store.join("tmp/previous-0");
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join("0123.path"), "/x\nexisted\n").unwrap();
        discard_abandoned(&store);
        assert!(!dead.exists());
        assert!(mine.dir().exists());
    }

    #[test]
    fn a_finished_rebuild_discards_the_previous_files() {
        let d = tempfile::tempdir().unwrap();
        let obj = d.path().join("a.o");
        std::fs::write(&obj, "old").unwrap();
        let p = Previous::begin(&d.path().join(".retest")).unwrap();
        p.keep(&obj).unwrap();
        std::fs::write(&obj, "new").unwrap();
        let dir = p.dir().to_path_buf();
        p.discard();
        assert_eq!(std::fs::read_to_string(&obj).unwrap(), "new");
        assert!(!dir.exists());
    }
}
