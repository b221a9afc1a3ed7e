//! The files `retest cc` is having the compiler write, journalled in the store
//! directory, so that what an interrupted build leaves half written is removed
//! before the next build.
//!
//! A compiler or linker killed while it writes an object or a program (SIGKILL
//! of the build's process group; `make` deletes the target on SIGINT but cannot
//! on SIGKILL) leaves the file truncated and newer than its inputs: `make` takes
//! it as up to date, and the tests crash on it. A wrapper killed after its
//! compiler finished but before it recorded the unit leaves an object the store
//! knows nothing of. Both look like any finished output on disk.
//!
//! So the wrapper writes `tmp/writing/PID-NANOS` (the absolute paths of the files
//! its compiler run writes, one a line; written whole, then renamed into place)
//! before the compiler runs, and removes it once the compiler has finished and
//! the units are recorded. A journal whose process is gone names files that may
//! be incomplete or unrecorded; the next build through `retest` removes them, so
//! the build tool makes them again.

use std::io;
use std::path::{Path, PathBuf};

fn dir(store_dir: &Path) -> PathBuf {
    store_dir.join("tmp").join("writing")
}

/// One wrapper's journal, removed by [`Journal::finish`]; dropped without it (the
/// wrapper failed after its compiler ran) it stays, and its files are made again.
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// Journals `files` (absolute paths) before the compiler writes them; `None`
    /// when there is nothing to journal.
    pub fn begin(store_dir: &Path, files: &[PathBuf]) -> io::Result<Option<Journal>> {
        if files.is_empty() {
            return Ok(None);
        }
        let dir = dir(store_dir);
        std::fs::create_dir_all(&dir)?;
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let name = format!("{}-{nanos}", std::process::id());
        let mut text = String::new();
        for f in files {
            let Some(s) = f.to_str().filter(|s| !s.contains('\n')) else { continue };
            text.push_str(s);
            text.push('\n');
        }
        // whole or not at all: a journal cut short could name another file
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text)?;
        let path = dir.join(name);
        std::fs::rename(&tmp, &path)?;
        Ok(Some(Journal { path }))
    }

    /// The compiler has finished and what it wrote is recorded.
    pub fn finish(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A journal left by a process that is gone, and the files it names.
pub struct Abandoned {
    journal: PathBuf,
    pub files: Vec<PathBuf>,
}

/// The journals whose wrapper process is gone: their files may be half written
/// or unrecorded.
pub fn abandoned(store_dir: &Path) -> Vec<Abandoned> {
    let Ok(entries) = std::fs::read_dir(dir(store_dir)) else { return Vec::new() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = name.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if retest_run::exec::process_alive(pid) {
            continue;
        }
        let files = if name.ends_with(".tmp") {
            Vec::new() // never renamed into place: the compiler did not start
        } else {
            std::fs::read_to_string(e.path())
                .map(|s| s.lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect())
                .unwrap_or_default()
        };
        out.push(Abandoned { journal: e.path(), files });
    }
    out.sort_by(|a, b| a.journal.cmp(&b.journal));
    out
}

/// Removes the files abandoned journals name (regular files only: never a
/// device such as `-o /dev/null`), then the journals; returns the files removed.
pub fn remove_abandoned(store_dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for a in abandoned(store_dir) {
        for f in &a.files {
            let regular = std::fs::symlink_metadata(f).is_ok_and(|m| m.file_type().is_file());
            if regular && std::fs::remove_file(f).is_ok() {
                removed.push(f.clone());
            }
        }
        let _ = std::fs::remove_file(&a.journal);
    }
    removed.sort();
    removed.dedup();
    removed
}

/// Removes the abandoned journals every file of which was put back as the
/// previous build had it (or removed, not having existed): nothing they name is
/// half written any more (see [`crate::previous`]). Paths are compared with
/// their directories resolved.
pub fn forget_restored(store_dir: &Path, restored: &[PathBuf]) {
    let resolved = |p: &Path| -> PathBuf {
        match (p.parent(), p.file_name()) {
            (Some(d), Some(n)) => std::fs::canonicalize(d).map(|d| d.join(n)).unwrap_or_else(|_| p.to_path_buf()),
            _ => p.to_path_buf(),
        }
    };
    let restored: std::collections::HashSet<PathBuf> = restored.iter().map(|p| resolved(p)).collect();
    for a in abandoned(store_dir) {
        if a.files.iter().all(|f| restored.contains(&resolved(f))) {
            let _ = std::fs::remove_file(&a.journal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_journal_leaves_nothing_and_an_abandoned_one_removes_its_files() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join(".retest");
        let (obj, prog, dev) = (d.path().join("a.o"), d.path().join("prog"), PathBuf::from("/dev/null"));
        std::fs::write(&obj, "half").unwrap();
        std::fs::write(&prog, "").unwrap();
        // our own (live) journal is not abandoned; finished, it is gone
        let j = Journal::begin(&store, std::slice::from_ref(&obj)).unwrap().unwrap();
        assert!(abandoned(&store).is_empty());
        j.finish();
        assert_eq!(std::fs::read_dir(dir(&store)).unwrap().count(), 0);
        // a journal of a process that is gone (pid 0 is never a process of ours)
        std::fs::write(dir(&store).join("0-1"), format!("{}\n{}\n{}\n", obj.display(), prog.display(), dev.display()))
            .unwrap();
        std::fs::write(dir(&store).join("0-2.tmp"), "cut sh").unwrap();
        assert_eq!(abandoned(&store).len(), 2);
        assert_eq!(remove_abandoned(&store), vec![obj.clone(), prog.clone()]);
        assert!(!obj.exists() && !prog.exists() && dev.exists());
        assert_eq!(std::fs::read_dir(dir(&store)).unwrap().count(), 0);
        assert!(Journal::begin(&store, &[]).unwrap().is_none());
    }
}
