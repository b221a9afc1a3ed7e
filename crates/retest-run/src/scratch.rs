//! Where a run keeps its tests' trace directories.
//!
//! Every process of an instrumented test creates a file in its trace directory
//! when it starts and renames it when it ends. On a disk file system that costs
//! more than many a short test does by itself (ext4 on a virtual disk: a few
//! hundred microseconds per process, against tens on tmpfs), so a run keeps its
//! trace directories in RAM when the machine offers a RAM file system
//! (`/dev/shm` on tmpfs), and on the disk, under the store, otherwise.
//! [`TRACE_ROOT_VAR`] names another place, for tests whose processes cannot
//! see `/dev/shm` (a container that mounts only the project): a process that
//! cannot write its trace directory reports itself, and its test's coverage is
//! unknown, never empty.
//!
//! The directory is private to the run (`retest-run-<pid namespace>-<pid>-
//! <random>`, mode 0700) and removed when the [`TraceRoot`] is dropped; what a
//! killed run left behind is removed by the next run in the same place and the
//! same pid namespace (a container sharing the place cannot see this one's
//! processes, so it leaves their directories alone).

use std::path::{Path, PathBuf};

/// Environment variable naming the directory in which a run creates its trace
/// root (instead of `/dev/shm` or the store).
pub const TRACE_ROOT_VAR: &str = "RETEST_TRACE_ROOT";

/// Prefix of every run's private directory.
const PREFIX: &str = "retest-run-";

/// Why no trace root could be made.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    /// The directory could not be created.
    #[error("cannot create a trace directory in {}: {source} — check permissions and free space, or set {TRACE_ROOT_VAR} to another directory", path.display())]
    Create {
        /// Where it was to be created.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

/// A run's trace root: the directory under which each test gets its trace
/// directory. Removed, with everything in it, when dropped.
#[derive(Debug)]
pub struct TraceRoot {
    path: PathBuf,
    in_ram: bool,
}

impl TraceRoot {
    /// The trace root for a run: in the directory [`TRACE_ROOT_VAR`] names if
    /// set, else in `/dev/shm` if it is a tmpfs this user can write, else in
    /// `disk` (the store's scratch directory, created if missing).
    pub fn choose(disk: &Path) -> Result<TraceRoot, ScratchError> {
        if let Some(dir) = std::env::var_os(TRACE_ROOT_VAR).filter(|v| !v.is_empty()) {
            return TraceRoot::create_in(Path::new(&dir), false);
        }
        let shm = Path::new("/dev/shm");
        if is_tmpfs(shm)
            && let Ok(root) = TraceRoot::create_in(shm, true)
        {
            return Ok(root);
        }
        TraceRoot::create_in(disk, false)
    }

    /// A fresh private trace root in `parent` (created if missing), after
    /// removing what killed runs left there.
    pub fn create_in(parent: &Path, in_ram: bool) -> Result<TraceRoot, ScratchError> {
        let fail = |source| ScratchError::Create { path: parent.to_path_buf(), source };
        std::fs::create_dir_all(parent).map_err(fail)?;
        let ns = pid_namespace();
        remove_abandoned(parent, ns);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{ns}-{}-", std::process::id()))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(parent)
            .map_err(fail)?;
        let path = dir.keep();
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        Ok(TraceRoot { path, in_ram })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it is on a RAM file system chosen by default.
    pub fn in_ram(&self) -> bool {
        self.in_ram
    }
}

impl Drop for TraceRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Whether `dir` is a directory on tmpfs.
fn is_tmpfs(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a valid C string and `st` a properly sized buffer
        // that statfs fills in; nothing else is read or written.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::statfs(c.as_ptr(), &mut st) };
        r == 0 && st.f_type as i64 == TMPFS_MAGIC
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        false
    }
}

/// The inode number of this process's pid namespace (0 where there is none to
/// read).
fn pid_namespace() -> u64 {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| l.to_str().and_then(|t| t.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()))
        .unwrap_or(0)
}

/// Removes the private directories of runs that no longer run: this user's
/// `retest-run-<ns>-<pid>-*` in `parent` of pid namespace `ns` whose process
/// is gone.
fn remove_abandoned(parent: &Path, ns: u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((their_ns, pid)) = name.to_str().and_then(run_pid) else {
            continue;
        };
        if their_ns != ns {
            continue;
        }
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || crate::exec::process_alive(pid) {
            continue;
        }
        let _ = std::fs::remove_dir_all(e.path());
    }
}

/// The pid namespace and pid in a run directory's name
/// `retest-run-<ns>-<pid>-<random>`.
fn run_pid(name: &str) -> Option<(u64, u32)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (ns, rest) = rest.split_once('-')?;
    let (pid, random) = rest.split_once('-')?;
    if random.is_empty() {
        return None;
    }
    Some((ns.parse().ok()?, pid.parse().ok().filter(|&p: &u32| p > 0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_directories_name_their_process() {
        assert_eq!(run_pid("retest-run-4026531836-123-abc"), Some((4026531836, 123)));
        assert_eq!(run_pid("retest-run-0-123-abc"), Some((0, 123)));
        assert_eq!(run_pid("retest-run-7-123-"), None);
        assert_eq!(run_pid("retest-run-7-x-abc"), None);
        assert_eq!(run_pid("retest-run-7-0-abc"), None);
        assert_eq!(run_pid("retest-run-123-abc"), None);
        assert_eq!(run_pid("other-7-123-abc"), None);
    }

    #[test]
    fn a_trace_root_is_private_removed_when_dropped_and_what_a_dead_run_left_goes() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        // a dead run's directory (a pid that cannot exist), a live one's (ours),
        // and a dead pid's of another pid namespace (it may live there)
        let ns = pid_namespace();
        let dead = parent.path().join(format!("{PREFIX}{ns}-{}-zz", i32::MAX));
        let live = parent.path().join(format!("{PREFIX}{ns}-{}-yy", std::process::id()));
        let elsewhere = parent.path().join(format!("{PREFIX}{}-{}-xx", ns + 1, i32::MAX));
        let other = parent.path().join("retest-run-notes");
        for d in [&dead, &live, &elsewhere, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("t.rtt"), b"x").unwrap();
        }
        let root = TraceRoot::create_in(parent.path(), false).unwrap();
        assert!(!dead.exists(), "a dead run's directory is removed");
        assert!(live.exists() && elsewhere.exists() && other.exists(), "a live run's and foreign ones stay");
        let path = root.path().to_path_buf();
        assert!(path.starts_with(std::fs::canonicalize(parent.path()).unwrap()));
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::create_dir(path.join("0-t")).unwrap();
        std::fs::write(path.join("0-t/1-a-0.rtt"), b"x").unwrap();
        drop(root);
        assert!(!path.exists(), "removed with its contents when dropped");
    }

    #[test]
    fn dev_shm_is_seen_as_tmpfs_where_it_is_one() {
        let shm = Path::new("/dev/shm");
        let mounted_tmpfs = std::fs::read_to_string("/proc/self/mounts")
            .map(|m| m.lines().any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.split(' ').nth(2) == Some("tmpfs")))
            .unwrap_or(false);
        assert_eq!(is_tmpfs(shm), mounted_tmpfs);
        assert!(!is_tmpfs(Path::new("/nonexistent/dir")));
    }
}
