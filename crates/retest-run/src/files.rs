//! The state of the files a test depends on, and what changed since.
//!
//! A test's dependencies ([`crate::deps::Dependencies`], plus the inputs the
//! user declares) become [`FileState`]s: per path, what the test relied on —
//! a file's content (a 128-bit XXH3 hash), that a path is absent, that a
//! directory exists, or a directory's list of entries. Paths under the
//! project root are kept relative to it (a checkout elsewhere compares the
//! same), others absolute.
//!
//! Hashing is the cost, so each state also keeps the file's [`Stamp`] (size,
//! modification and change times, inode): a file whose stamp is unchanged is
//! not read again. The change time cannot be set by a program, so a tool that
//! restores modification times (`cp -p`, `touch -r`) does not hide an edit.
//! A stamp taken within [`RACY`] of a file's last change is not kept (the
//! file may change again within the same clock tick, unseen): such a file is
//! hashed every time.
//!
//! [`Filter`] says which observed paths count: not `/proc`, `/sys`, `/dev`,
//! not what `retest` itself keeps (the store, trace directories), not the
//! files the compiler wrapper produced (their code is compared through its
//! CFGs, and they change on every build), and not what the user ignores.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::Metadata;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use xxhash_rust::xxh3::Xxh3;

use crate::deps::Dependencies;

/// A 128-bit content hash.
pub type Hash = [u8; 16];

/// A stamp taken this close to the file's last change is not trusted later.
pub const RACY: Duration = Duration::from_secs(2);

/// What a test relied on about one path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Kind {
    /// The file's content (`hash`); for a path that was a directory when
    /// recorded, see [`Kind::Dir`].
    Content,
    /// The path did not exist.
    Absent,
    /// A directory existed there.
    Dir,
    /// The directory's list of entry names (`hash`).
    Listing,
}

impl Kind {
    /// The number stored for this kind.
    pub fn code(self) -> u8 {
        match self {
            Kind::Content => 0,
            Kind::Absent => 1,
            Kind::Dir => 2,
            Kind::Listing => 3,
        }
    }

    /// The kind stored as `code`.
    pub fn from_code(code: u8) -> Option<Kind> {
        Some(match code {
            0 => Kind::Content,
            1 => Kind::Absent,
            2 => Kind::Dir,
            3 => Kind::Listing,
            _ => return None,
        })
    }
}

/// What `stat` says about a file: enough to know it was not changed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
}

impl Stamp {
    pub fn of(md: &Metadata) -> Stamp {
        Stamp {
            size: md.size(),
            mtime_ns: md.mtime().saturating_mul(1_000_000_000).saturating_add(md.mtime_nsec()),
            ctime_ns: md.ctime().saturating_mul(1_000_000_000).saturating_add(md.ctime_nsec()),
            ino: md.ino(),
        }
    }

    /// The stamp as 32 bytes (little endian: size, mtime, ctime, inode).
    pub fn to_bytes(self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0..8].copy_from_slice(&self.size.to_le_bytes());
        b[8..16].copy_from_slice(&self.mtime_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.ctime_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.ino.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Stamp> {
        let w = |i: usize| -> Option<[u8; 8]> { b.get(i..i + 8)?.try_into().ok() };
        (b.len() == 32).then_some(())?;
        Some(Stamp {
            size: u64::from_le_bytes(w(0)?),
            mtime_ns: i64::from_le_bytes(w(8)?),
            ctime_ns: i64::from_le_bytes(w(16)?),
            ino: u64::from_le_bytes(w(24)?),
        })
    }

    /// Whether the file changed so recently before `taken` that a change
    /// within the same clock tick could leave this stamp as it is.
    pub fn racy(&self, taken: SystemTime) -> bool {
        let t = taken.duration_since(UNIX_EPOCH).unwrap_or_default().saturating_sub(RACY);
        let limit = i64::try_from(t.as_nanos()).unwrap_or(i64::MAX);
        self.mtime_ns >= limit || self.ctime_ns >= limit
    }
}

/// One dependency of a test, as recorded.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FileState {
    /// Relative to the project root when under it, else absolute.
    pub path: String,
    pub kind: Kind,
    /// Content or listing hash; zero for [`Kind::Absent`] and [`Kind::Dir`].
    pub hash: Hash,
    /// The file's stamp when it was hashed, if it can be trusted later.
    pub stamp: Option<Stamp>,
}

/// How paths are stored: relative to the project root when under it.
#[derive(Clone, Debug)]
pub struct Paths {
    root: PathBuf,
}

impl Paths {
    /// `root` should be absolute with symbolic links resolved.
    pub fn new(root: &Path) -> Paths {
        Paths { root: root.to_path_buf() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The stored form of an absolute path.
    pub fn stored(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            Ok(_) => ".".to_string(),
            Err(_) => abs.to_string_lossy().into_owned(),
        }
    }

    /// The absolute path of a stored one.
    pub fn on_disk(&self, stored: &str) -> PathBuf {
        if stored == "." {
            self.root.clone()
        } else if stored.starts_with('/') {
            PathBuf::from(stored)
        } else {
            self.root.join(stored)
        }
    }
}

/// Which observed paths count as dependencies.
pub struct Filter {
    paths: Paths,
    /// Everything under these (inclusive) is left out.
    prefixes: Vec<PathBuf>,
    /// These exact paths are left out.
    exact: HashSet<PathBuf>,
    /// The user's `ignore` globs.
    ignore: GlobSet,
}

/// A glob of the user's `ignore` list that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("`{pattern}` is not a valid glob: {message}")]
pub struct GlobError {
    pub pattern: String,
    pub message: String,
}

/// The paths no test depends on: the kernel's views of processes, devices
/// and the system.
pub const SYSTEM_PREFIXES: &[&str] = &["/proc", "/sys", "/dev"];

impl Filter {
    /// A filter that leaves out [`SYSTEM_PREFIXES`], everything under
    /// `prefixes`, the `exact` paths (absolute) and what the `ignore` globs
    /// match. A glob without `/` matches a file name at any depth; one that
    /// starts with `/` matches absolute paths, any other one paths relative
    /// to the project root; `*` stays within one directory, `**` crosses
    /// them. A path is also left out when a glob matches a directory above it.
    pub fn new(
        paths: Paths,
        prefixes: impl IntoIterator<Item = PathBuf>,
        exact: impl IntoIterator<Item = PathBuf>,
        ignore: &[String],
    ) -> Result<Filter, GlobError> {
        let mut b = GlobSetBuilder::new();
        for pattern in ignore {
            let p = pattern.trim_end_matches('/');
            let p = if p.contains('/') { p.to_string() } else { format!("**/{p}") };
            let g = GlobBuilder::new(&p)
                .literal_separator(true)
                .build()
                .map_err(|e| GlobError { pattern: pattern.clone(), message: e.kind().to_string() })?;
            b.add(g);
        }
        let ignore = b.build().map_err(|e| GlobError { pattern: ignore.join(", "), message: e.to_string() })?;
        let mut all: Vec<PathBuf> = SYSTEM_PREFIXES.iter().map(PathBuf::from).collect();
        all.extend(prefixes);
        Ok(Filter { paths, prefixes: all, exact: exact.into_iter().collect(), ignore })
    }

    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// Whether a dependency on `abs` (absolute, lexically normal) counts.
    pub fn counts(&self, abs: &Path) -> bool {
        self.counts_by_name(abs) && !self.is_link_to_output(abs, self.link_metadata(abs).as_ref())
    }

    /// [`check`] of a recorded state, `None` when its path does not count
    /// ([`Filter::counts`]). A path that is not a symbolic link is looked up
    /// once for both.
    pub fn check(&self, state: &FileState) -> Option<Change> {
        let abs = self.paths.on_disk(&state.path);
        if !self.counts_by_name(&abs) {
            return None;
        }
        let link = self.link_metadata(&abs);
        if self.is_link_to_output(&abs, link.as_ref()) {
            return None;
        }
        let md = match link {
            // not a link: what `metadata` would read; absent either way
            Some(Some(m)) if !m.file_type().is_symlink() => Some(m),
            Some(None) => None,
            _ => std::fs::metadata(&abs).ok(),
        };
        check_found(&abs, state, md)
    }

    /// What `symlink_metadata` reads of `abs`, when an output could be
    /// linked to (`None` when there are no outputs: not looked up).
    fn link_metadata(&self, abs: &Path) -> Option<Option<std::fs::Metadata>> {
        (!self.exact.is_empty()).then(|| std::fs::symlink_metadata(abs).ok())
    }

    /// A symbolic link to what the wrapper wrote (`libfoo.so.1` →
    /// `libfoo.so.1.2`, made by the build) is that output; pointed
    /// elsewhere, it counts again.
    fn is_link_to_output(&self, abs: &Path, link: Option<&Option<std::fs::Metadata>>) -> bool {
        link.is_some_and(|m| m.as_ref().is_some_and(|m| m.file_type().is_symlink()))
            && std::fs::canonicalize(abs).is_ok_and(|c| self.exact.contains(&c))
    }

    /// Whether `abs` counts by its name: not under a left-out prefix, not a
    /// left-out path, not matched by an `ignore` glob, nor a directory above it.
    fn counts_by_name(&self, abs: &Path) -> bool {
        if self.exact.contains(abs) || self.prefixes.iter().any(|p| abs.starts_with(p)) {
            return false;
        }
        if self.ignore.is_empty() {
            return true;
        }
        let rel = abs.strip_prefix(self.paths.root()).ok().filter(|r| !r.as_os_str().is_empty());
        let mut cur = Some(abs);
        let mut cur_rel = rel;
        while let Some(p) = cur {
            if p == Path::new("/") {
                break;
            }
            if self.ignore.is_match(p) || cur_rel.is_some_and(|r| self.ignore.is_match(r)) {
                return false;
            }
            cur = p.parent();
            cur_rel = cur_rel.and_then(|r| r.parent()).filter(|r| !r.as_os_str().is_empty());
        }
        true
    }
}

/// States computed during one run, so that each file is hashed once however
/// many tests read it (again when its stamp changes: a test wrote it).
#[derive(Default)]
pub struct StateCache {
    known: HashMap<(PathBuf, Kind), (Option<Stamp>, FileState)>,
}

impl StateCache {
    /// The state of `abs` for a dependency of kind `kind` (what it is now:
    /// a file read may be gone, a path found absent may exist — the test
    /// made it).
    pub fn state(&mut self, paths: &Paths, abs: &Path, kind: Kind) -> FileState {
        let md = std::fs::metadata(abs).ok();
        let stamp = md.as_ref().map(Stamp::of);
        let key = (abs.to_path_buf(), kind);
        if let (Some(s), Some((cached, state))) = (stamp, self.known.get(&key))
            && *cached == Some(s)
        {
            return state.clone();
        }
        let state = current_state(paths, abs, kind, md.as_ref());
        self.known.insert(key, (stamp, state.clone()));
        state
    }
}

/// What `abs` is now, for a dependency of kind `kind`.
fn current_state(paths: &Paths, abs: &Path, kind: Kind, md: Option<&Metadata>) -> FileState {
    let path = paths.stored(abs);
    let absent = FileState { path: path.clone(), kind: Kind::Absent, hash: [0; 16], stamp: None };
    let Some(md) = md else { return absent };
    let taken = SystemTime::now();
    let stamp = Stamp::of(md);
    let trusted = (!stamp.racy(taken)).then_some(stamp);
    if md.is_dir() {
        return match kind {
            Kind::Listing => match listing_hash(abs) {
                Ok(h) => FileState { path, kind: Kind::Listing, hash: h, stamp: trusted },
                Err(_) => FileState { path, kind: Kind::Dir, hash: [0; 16], stamp: None },
            },
            _ => FileState { path, kind: Kind::Dir, hash: [0; 16], stamp: None },
        };
    }
    match kind {
        Kind::Absent => absent_or_content(path, abs, md, trusted),
        _ => match content_hash(abs, md) {
            Ok(h) => {
                // a file that changed while it was hashed keeps no stamp
                let after = std::fs::metadata(abs).ok().map(|m| Stamp::of(&m));
                let stamp = trusted.filter(|s| after == Some(*s));
                FileState { path, kind: Kind::Content, hash: h, stamp }
            }
            Err(_) => absent,
        },
    }
}

/// A path found absent that exists after the test (the test made it): what
/// it is now.
fn absent_or_content(path: String, abs: &Path, md: &Metadata, stamp: Option<Stamp>) -> FileState {
    match content_hash(abs, md) {
        Ok(h) => FileState { path, kind: Kind::Content, hash: h, stamp },
        Err(_) => FileState { path, kind: Kind::Absent, hash: [0; 16], stamp: None },
    }
}

/// The content hash of a file; other files than regular ones (pipes,
/// sockets, devices) are never opened: their hash is that of their type.
pub fn content_hash(abs: &Path, md: &Metadata) -> io::Result<Hash> {
    let mut h = Xxh3::new();
    if !md.is_file() {
        h.update(format!("special {:o}", md.mode() & 0o170000).as_bytes());
        return Ok(h.digest128().to_le_bytes());
    }
    let mut f = std::fs::File::open(abs)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.digest128().to_le_bytes())
}

/// The hash of a directory's entry names, sorted.
pub fn listing_hash(abs: &Path) -> io::Result<Hash> {
    let mut names: Vec<Vec<u8>> = Vec::new();
    for e in std::fs::read_dir(abs)? {
        names.push(std::os::unix::ffi::OsStrExt::as_bytes(e?.file_name().as_os_str()).to_vec());
    }
    names.sort();
    let mut h = Xxh3::new();
    for n in &names {
        h.update(n);
        h.update(&[0]);
    }
    Ok(h.digest128().to_le_bytes())
}

/// How a dependency differs from what was recorded.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Change {
    /// The file's content differs.
    Modified,
    /// The file or directory is no longer there.
    Removed,
    /// A path that was absent exists now.
    Appeared,
    /// A file is now a directory, or a directory now something else.
    Replaced,
    /// A directory's list of entries differs.
    Listing,
}

impl Change {
    /// Says what happened to `path`, for a reason.
    pub fn describe(&self, path: &str) -> String {
        match self {
            Change::Modified => format!("file changed: {path}"),
            Change::Removed => format!("file removed: {path}"),
            Change::Appeared => format!("file now exists: {path} (the test looked for it and did not find it)"),
            Change::Replaced => format!("file replaced by another kind of file: {path}"),
            Change::Listing => format!("directory listing changed: {path} (the test listed it)"),
        }
    }
}

/// Whether `state` still holds on disk, and if not, how it changed.
pub fn check(paths: &Paths, state: &FileState) -> Option<Change> {
    let abs = paths.on_disk(&state.path);
    let md = std::fs::metadata(&abs).ok();
    check_found(&abs, state, md)
}

/// [`check`] of the file at `abs`, whose metadata (following links) is `md`.
fn check_found(abs: &Path, state: &FileState, md: Option<std::fs::Metadata>) -> Option<Change> {
    match state.kind {
        Kind::Absent => md.map(|_| Change::Appeared),
        Kind::Dir => match md {
            None => Some(Change::Removed),
            Some(m) if !m.is_dir() => Some(Change::Replaced),
            Some(_) => None,
        },
        Kind::Listing => match md {
            None => Some(Change::Removed),
            Some(m) if !m.is_dir() => Some(Change::Replaced),
            Some(m) => {
                if state.stamp == Some(Stamp::of(&m)) {
                    return None;
                }
                match listing_hash(abs) {
                    Ok(h) if h == state.hash => None,
                    _ => Some(Change::Listing),
                }
            }
        },
        Kind::Content => match md {
            None => Some(Change::Removed),
            Some(m) if m.is_dir() => Some(Change::Replaced),
            Some(m) => {
                if state.stamp == Some(Stamp::of(&m)) {
                    return None;
                }
                match content_hash(abs, &m) {
                    Ok(h) if h == state.hash => None,
                    Ok(_) => Some(Change::Modified),
                    Err(_) => Some(Change::Removed),
                }
            }
        },
    }
}

/// The states of a test's dependencies that `filter` lets count: the files
/// it read, the paths it found absent, the directories it checked or listed,
/// and every path under the `declared` inputs (absolute; a directory counts
/// with its listing and everything in it; one that does not exist counts as
/// absent). Sorted, without duplicates.
pub fn states(deps: &Dependencies, declared: &[PathBuf], filter: &Filter, cache: &mut StateCache) -> Vec<FileState> {
    let mut want: BTreeSet<(PathBuf, Kind)> = BTreeSet::new();
    let kinds = [
        (&deps.content, Kind::Content),
        (&deps.absent, Kind::Absent),
        (&deps.exists, Kind::Dir),
        (&deps.listing, Kind::Listing),
    ];
    for (set, kind) in kinds {
        for p in set.iter().filter(|p| filter.counts(p)) {
            want.insert((p.clone(), kind));
        }
    }
    for d in declared {
        declare(d, &mut want);
    }
    let mut out: Vec<FileState> = want.into_iter().map(|(p, k)| cache.state(filter.paths(), &p, k)).collect();
    out.sort_by(|a, b| (&a.path, a.kind).cmp(&(&b.path, b.kind)));
    out.dedup();
    out
}

/// A declared input: a file's content, or a directory's listing and every
/// file and directory under it (symbolic links to directories are not
/// followed).
fn declare(p: &Path, want: &mut BTreeSet<(PathBuf, Kind)>) {
    let Ok(md) = std::fs::metadata(p) else {
        want.insert((p.to_path_buf(), Kind::Absent));
        return;
    };
    if !md.is_dir() {
        want.insert((p.to_path_buf(), Kind::Content));
        return;
    }
    want.insert((p.to_path_buf(), Kind::Listing));
    let Ok(entries) = std::fs::read_dir(p) else { return };
    for e in entries.flatten() {
        let child = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => declare(&child, want),
            _ => {
                want.insert((child, Kind::Content));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(root: &Path, ignore: &[&str]) -> Filter {
        let ignore: Vec<String> = ignore.iter().map(|s| s.to_string()).collect();
        Filter::new(Paths::new(root), [root.join(".retest")], [root.join("prog")], &ignore).unwrap()
    }

    #[test]
    fn the_filter_leaves_out_the_system_the_store_the_wrapper_outputs_and_ignored_paths() {
        let root = Path::new("/w");
        let f = filter(root, &["*.log", "/usr/lib/**", "build/tmp", "data/*.bak"]);
        for p in ["/w/data/in.txt", "/usr/bin/cat", "/w/sub/data/x.bak", "/w/prog.c", "/etc/passwd"] {
            assert!(f.counts(Path::new(p)), "{p} counts");
        }
        for p in [
            "/proc/self/maps",
            "/dev/null",
            "/sys/kernel",
            "/w/.retest/lib/x.so",
            "/w/prog",
            "/w/out/run.log",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/w/build/tmp/a/b",
            "/w/data/old.bak",
        ] {
            assert!(!f.counts(Path::new(p)), "{p} does not count");
        }
        assert!(Filter::new(Paths::new(root), [], [], &["a[".to_string()]).is_err());
    }

    /// A link the build made to a library the wrapper wrote (`libfoo.so.1`)
    /// is that library: it changes with every build and its code is compared
    /// through its CFGs. Pointed at something else, it counts again.
    #[test]
    fn a_symbolic_link_to_a_wrapper_output_is_that_output() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::write(root.join("libfoo.so.1.2"), "elf").unwrap();
        std::fs::write(root.join("other.so"), "elf").unwrap();
        std::os::unix::fs::symlink("libfoo.so.1.2", root.join("libfoo.so.1")).unwrap();
        let f = Filter::new(Paths::new(&root), [], [root.join("libfoo.so.1.2")], &[]).unwrap();
        assert!(!f.counts(&root.join("libfoo.so.1.2")));
        assert!(!f.counts(&root.join("libfoo.so.1")));
        assert!(f.counts(&root.join("other.so")));
        std::fs::remove_file(root.join("libfoo.so.1")).unwrap();
        std::os::unix::fs::symlink("other.so", root.join("libfoo.so.1")).unwrap();
        assert!(f.counts(&root.join("libfoo.so.1")));
    }

    /// `Filter::check` looks a path up once where it can, and answers as
    /// `counts` followed by `check` would: for files changed or not, links
    /// to an output and elsewhere, absent paths and directories, with and
    /// without outputs to leave out.
    #[test]
    fn a_filters_check_is_counts_then_check() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let paths = Paths::new(&root);
        let w = |name: &str, text: &str| std::fs::write(root.join(name), text).unwrap();
        for name in ["libfoo.so.1.2", "other.so", "kept", "edited", "gone"] {
            w(name, name);
        }
        std::fs::create_dir(root.join("dir")).unwrap();
        std::os::unix::fs::symlink("libfoo.so.1.2", root.join("libfoo.so.1")).unwrap();
        std::os::unix::fs::symlink("other.so", root.join("to_other")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        let mut cache = StateCache::default();
        let mut states = Vec::new();
        for name in ["libfoo.so.1.2", "libfoo.so.1", "other.so", "to_other", "kept", "edited", "gone", "dangling"] {
            states.push(cache.state(&paths, &root.join(name), Kind::Content));
        }
        states.push(cache.state(&paths, &root.join("dir"), Kind::Dir));
        states.push(cache.state(&paths, &root.join("absent"), Kind::Absent));
        w("edited", "edited, longer");
        w("other.so", "other, longer");
        w("libfoo.so.1.2", "rebuilt, longer");
        w("absent", "appeared");
        std::fs::remove_file(root.join("gone")).unwrap();
        let mut changes = 0;
        for exact in [vec![], vec![root.join("libfoo.so.1.2")]] {
            let f = Filter::new(paths.clone(), [], exact, &[]).unwrap();
            for s in &states {
                let expected = f.counts(&paths.on_disk(&s.path)).then(|| check(&paths, s)).flatten();
                changes += usize::from(expected.is_some());
                assert_eq!(f.check(s), expected, "{}", s.path);
            }
        }
        // edited, other.so, to_other, gone, absent, twice; libfoo.so.1.2 and
        // libfoo.so.1 without outputs to leave out
        assert_eq!(changes, 12);
    }

    #[test]
    fn paths_under_the_root_are_stored_relative_to_it() {
        let p = Paths::new(Path::new("/w"));
        assert_eq!(p.stored(Path::new("/w/a/b")), "a/b");
        assert_eq!(p.stored(Path::new("/w")), ".");
        assert_eq!(p.stored(Path::new("/wx/a")), "/wx/a");
        assert_eq!(p.on_disk("a/b"), PathBuf::from("/w/a/b"));
        assert_eq!(p.on_disk("/etc/x"), PathBuf::from("/etc/x"));
        assert_eq!(p.on_disk("."), PathBuf::from("/w"));
    }

    #[test]
    fn stamps_round_trip() {
        let s = Stamp { size: 7, mtime_ns: -3, ctime_ns: 1 << 40, ino: 99 };
        assert_eq!(Stamp::from_bytes(&s.to_bytes()), Some(s));
        assert_eq!(Stamp::from_bytes(&[0; 31]), None);
    }

    /// Every kind of change is seen, also one that keeps the size and puts
    /// the modification time back; an unchanged file is not.
    #[test]
    fn changes_are_seen_whatever_the_stamp_says() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let paths = Paths::new(&root);
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::write(root.join("dir/a.txt"), "one\n").unwrap();
        let mut deps = Dependencies::default();
        deps.content.insert(root.join("dir/a.txt"));
        deps.absent.insert(root.join("dir/b.txt"));
        deps.listing.insert(root.join("dir"));
        deps.exists.insert(root.join("sub"));
        std::fs::create_dir(root.join("sub")).unwrap();
        let f = Filter::new(paths.clone(), [], [], &[]).unwrap();
        let mut cache = StateCache::default();
        let st = states(&deps, &[], &f, &mut cache);
        let kinds: Vec<(&str, Kind)> = st.iter().map(|s| (s.path.as_str(), s.kind)).collect();
        assert_eq!(
            kinds,
            [("dir", Kind::Listing), ("dir/a.txt", Kind::Content), ("dir/b.txt", Kind::Absent), ("sub", Kind::Dir)]
        );
        assert!(st.iter().all(|s| check(&paths, s).is_none()));
        // same size, modification time put back
        let a = root.join("dir/a.txt");
        let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, "two\n").unwrap();
        std::fs::File::options().write(true).open(&a).unwrap().set_modified(mtime).unwrap();
        assert_eq!(check(&paths, &st[1]), Some(Change::Modified));
        std::fs::write(root.join("dir/b.txt"), "").unwrap();
        assert_eq!(check(&paths, &st[2]), Some(Change::Appeared));
        assert_eq!(check(&paths, &st[0]), Some(Change::Listing));
        std::fs::remove_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub"), "").unwrap();
        assert_eq!(check(&paths, &st[3]), Some(Change::Replaced));
        std::fs::remove_file(&a).unwrap();
        assert_eq!(check(&paths, &st[1]), Some(Change::Removed));
    }

    #[test]
    fn declared_directories_count_with_everything_in_them() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("in/deep")).unwrap();
        std::fs::write(root.join("in/deep/x"), "x").unwrap();
        std::fs::write(root.join("one"), "1").unwrap();
        let f = Filter::new(Paths::new(&root), [], [], &[]).unwrap();
        let st = states(
            &Dependencies::default(),
            &[root.join("in"), root.join("one"), root.join("none")],
            &f,
            &mut StateCache::default(),
        );
        let kinds: Vec<(&str, Kind)> = st.iter().map(|s| (s.path.as_str(), s.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("in", Kind::Listing),
                ("in/deep", Kind::Listing),
                ("in/deep/x", Kind::Content),
                ("none", Kind::Absent),
                ("one", Kind::Content)
            ]
        );
    }
}
