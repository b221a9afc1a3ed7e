//! What a test's processes read and run, beyond the code the wrapper built:
//! data files, scripts, tools, shared objects, and paths probed but absent.
//!
//! Observation is an interposed shared object (`preload/retest_deps.c`),
//! loaded with `LD_PRELOAD` into every dynamically linked process of a test:
//! it wraps the C library's `open`/`fopen`/`stat`/`access`/`opendir`/`dlopen`
//! and `exec*`/`posix_spawn` and writes one line per event into the
//! directory [`DIR_ENV`] names — the test's trace directory — as
//! `deps.<pid>.log` (the format is in the C file). It puts itself and that
//! variable back into the environment of every program it starts, so `env -i`
//! does not escape it (the coverage runtime's `RETEST_TRACE_DIR` is left
//! alone: a program that loses it still reports so). A process it cannot see — statically linked, setuid —
//! is still noticed: its parent's exec has no matching start, and the test's
//! dependencies are then *unknown*.
//!
//! This module builds the shared object ([`build_preload`]) and reads what it
//! wrote ([`read_dir`] → [`Observed`]). Deciding which paths count (the
//! project's ignore settings, build outputs) and hashing them is the caller's.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The C source of the interposed library.
pub const PRELOAD_SOURCE: &str = include_str!("../preload/retest_deps.c");

/// Environment variable naming the directory the tracker writes its logs to.
pub const DIR_ENV: &str = "RETEST_DEPS_DIR";

/// Environment variable naming the exec that started a process image; the
/// test's shell gets [`ROOT_NONCE`].
pub const EXEC_ENV: &str = "RETEST_DEPS_EXEC";

/// The nonce of the process `retest` itself starts for a test.
pub const ROOT_NONCE: &str = "root";

/// The `LD_PRELOAD` value that loads the tracker `lib` first, before the
/// objects `theirs` (the value the process would otherwise have) names.
pub fn preload_first(lib: &Path, theirs: Option<&std::ffi::OsStr>) -> std::ffi::OsString {
    let mut value = lib.as_os_str().to_os_string();
    if let Some(t) = theirs.filter(|t| !t.is_empty()) {
        value.push(":");
        value.push(t);
    }
    value
}

/// Errors building the interposed library.
#[derive(Debug, thiserror::Error)]
pub enum PreloadError {
    #[error("cannot run the C compiler `{compiler}` to build the file tracker: {source}")]
    Spawn { compiler: String, source: io::Error },
    #[error("building the file tracker with `{compiler}` failed: {message}")]
    Compile { compiler: String, message: String },
    #[error("cannot write the file tracker to {}: {source}", dir.display())]
    Io { dir: PathBuf, source: io::Error },
}

/// Builds the interposed library with `compiler` into `dir` (once: the file
/// name carries a digest of the source and the compiler's name) and returns
/// its absolute path. Written to a temporary name and renamed, so concurrent
/// builders never see half a library.
pub fn build_preload(compiler: &str, dir: &Path) -> Result<PathBuf, PreloadError> {
    let io_err = |source| PreloadError::Io { dir: dir.to_path_buf(), source };
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let dir = dir.canonicalize().map_err(io_err)?;
    let digest = xxhash_rust::xxh3::xxh3_64(format!("{compiler}\n{PRELOAD_SOURCE}").as_bytes());
    let lib = dir.join(format!("libretest_deps-{digest:016x}.so"));
    if lib.exists() {
        return Ok(lib);
    }
    // per process: runs building it at once (shards of one store) must not
    // compile a source another one is rewriting
    let src = dir.join(format!(".retest_deps-{digest:016x}.{}.c", std::process::id()));
    std::fs::write(&src, PRELOAD_SOURCE).map_err(io_err)?;
    let tmp = dir.join(format!(".libretest_deps-{digest:016x}.{}.so", std::process::id()));
    let out = Command::new(compiler)
        .args(["-shared", "-fPIC", "-O2", "-w", "-o"])
        .arg(&tmp)
        .arg(&src)
        .arg("-ldl")
        .output()
        .map_err(|source| PreloadError::Spawn { compiler: compiler.to_string(), source });
    let _ = std::fs::remove_file(&src);
    let out = out?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let message =
            String::from_utf8_lossy(&out.stderr).lines().find(|l| l.contains("error")).unwrap_or("").to_string();
        return Err(PreloadError::Compile { compiler: compiler.to_string(), message });
    }
    std::fs::rename(&tmp, &lib).map_err(io_err)?;
    Ok(lib)
}

/// Everything the processes of one test reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// Files whose content the test may depend on: opened for reading (or for
    /// update), stat'ed (`S`), run, or loaded as shared objects.
    pub read: BTreeSet<PathBuf>,
    /// Files the test created or truncated: its outputs.
    pub written: BTreeSet<PathBuf>,
    /// Paths probed and not found.
    pub missing: BTreeSet<PathBuf>,
    /// Directories whose existence was checked.
    pub dirs: BTreeSet<PathBuf>,
    /// Directories whose entries were listed.
    pub listed: BTreeSet<PathBuf>,
    /// Programs an exec started that reported nothing: statically linked,
    /// setuid, or otherwise out of the tracker's reach.
    pub unobserved: BTreeSet<PathBuf>,
    /// Whether the process `retest` started for the test reported.
    pub root_seen: bool,
    /// Of [`Observed::read`], the files whose metadata alone was asked
    /// (`stat`, `access`): never opened, run or loaded. A test depends on
    /// their content all the same (a program may compare times); a listing
    /// made by declarative scripts depends only on their existence and mode
    /// (see [`crate::listing`]).
    pub looked_up: BTreeSet<PathBuf>,
    /// Files opened for reading (`R`), without those only run or loaded.
    pub opened: BTreeSet<PathBuf>,
    /// How many execs were attempted (`X` lines), failed ones included.
    pub execs: usize,
}

impl Observed {
    /// Why the dependencies of a test whose command is `cmd` cannot be
    /// known, if they cannot: as [`Observed::unknown_because`], naming the
    /// program when it ran without the shell ([`crate::exec::plain_words`])
    /// and did not report.
    pub fn unknown_because_for(&self, cmd: &str) -> Option<String> {
        if !self.root_seen
            && let Some(words) = crate::exec::plain_words(cmd)
        {
            return Some(format!("{} ran and could not be observed (statically linked or setuid)", words[0]));
        }
        self.unknown_because()
    }

    /// Why the test's dependencies cannot be known, if they cannot.
    pub fn unknown_because(&self) -> Option<String> {
        if !self.root_seen {
            return Some("the file tracker did not start in the test's shell".to_string());
        }
        let first = self.unobserved.iter().next()?;
        Some(format!(
            "{} ran and could not be observed (statically linked or setuid){}",
            first.display(),
            match self.unobserved.len() {
                1 => String::new(),
                n => format!(", and {} more", n - 1),
            }
        ))
    }

    /// The test's dependencies: what it read and did not write itself, the
    /// paths it found absent and never created, directories it checked or
    /// listed. Paths are lexically normal (no `.`, `..` resolved).
    pub fn dependencies(&self) -> Dependencies {
        let read: BTreeSet<PathBuf> = self.read.difference(&self.written).cloned().collect();
        let missing = self
            .missing
            .iter()
            .filter(|p| !self.written.contains(*p) && !read.contains(*p) && !self.dirs.contains(*p))
            .cloned()
            .collect();
        Dependencies {
            content: read,
            absent: missing,
            exists: self.dirs.difference(&self.listed).cloned().collect(),
            listing: self.listed.clone(),
        }
    }
}

/// What a test depends on outside the code, by kind of observation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Files whose content counts.
    pub content: BTreeSet<PathBuf>,
    /// Paths that must stay absent.
    pub absent: BTreeSet<PathBuf>,
    /// Directories that must keep existing.
    pub exists: BTreeSet<PathBuf>,
    /// Directories whose list of entries counts.
    pub listing: BTreeSet<PathBuf>,
}

/// `path` with `.` removed and `..` applied, lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Reads every `deps.*.log` file in a test's trace directory.
pub fn read_dir(dir: &Path) -> io::Result<Observed> {
    let mut text = String::new();
    let mut names: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("deps.") && n.to_string_lossy().ends_with(".log"))
        {
            names.push(p);
        }
    }
    names.sort();
    for p in names {
        text.push_str(&String::from_utf8_lossy(&std::fs::read(p)?));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok(parse(&text))
}

/// Parses the tracker's lines (any order, any number of files concatenated).
pub fn parse(text: &str) -> Observed {
    let mut o = Observed::default();
    let mut execs: BTreeMap<&str, &str> = BTreeMap::new();
    let mut started: BTreeSet<&str> = BTreeSet::new();
    let mut failed: BTreeSet<&str> = BTreeSet::new();
    // what was loaded or run is more than looked up (opened: `o.opened`)
    let mut more: BTreeSet<PathBuf> = BTreeSet::new();
    for line in text.lines() {
        let Some((kind, rest)) = line.split_once(' ') else { continue };
        let path = |p: &str| normalize(Path::new(p));
        match kind {
            "R" => {
                o.read.insert(path(rest));
                o.opened.insert(path(rest));
            }
            "L" => {
                o.read.insert(path(rest));
                more.insert(path(rest));
            }
            "S" => {
                o.read.insert(path(rest));
                o.looked_up.insert(path(rest));
            }
            "W" => {
                o.written.insert(path(rest));
            }
            "M" => {
                o.missing.insert(path(rest));
            }
            "E" => {
                o.dirs.insert(path(rest));
            }
            "D" => {
                o.listed.insert(path(rest));
            }
            "X" => {
                o.execs += 1;
                if let Some((nonce, p)) = rest.split_once(' ') {
                    execs.insert(nonce, p);
                }
            }
            "F" => {
                failed.insert(rest.trim());
            }
            "P" => {
                let (nonce, exe) = rest.split_once(' ').unwrap_or((rest, ""));
                started.insert(nonce);
                o.root_seen |= nonce == ROOT_NONCE;
                if !exe.is_empty() {
                    o.read.insert(path(exe));
                    more.insert(path(exe));
                }
            }
            _ => {}
        }
    }
    for (nonce, p) in execs {
        if failed.contains(nonce) {
            continue;
        }
        // the program an exec ran is read by the kernel, not through open()
        o.read.insert(normalize(Path::new(p)));
        more.insert(normalize(Path::new(p)));
        if !started.contains(nonce) {
            o.unobserved.insert(normalize(Path::new(p)));
        }
    }
    o.looked_up.retain(|p| !more.contains(p) && !o.opened.contains(p));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_dependencies_and_unobserved_execs() {
        let o = parse(
            "P root /usr/bin/dash\nR /w/./data.txt\nW /w/out.txt\nR /w/out.txt\nM /w/nothere\nM /usr/local/bin/cat\n\
             X 7.1 /usr/local/bin/cat\nF 7.1\nX 7.2 /usr/bin/cat\nP 7.2 /usr/bin/cat\nX 8.1 /w/static-tool\n\
             E /w\nD /w/in\nL /usr/lib/libc.so.6\n",
        );
        assert!(o.root_seen);
        assert_eq!(o.unobserved, BTreeSet::from([PathBuf::from("/w/static-tool")]));
        let d = o.dependencies();
        let content: Vec<&str> = d.content.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(content, ["/usr/bin/cat", "/usr/bin/dash", "/usr/lib/libc.so.6", "/w/data.txt", "/w/static-tool"]);
        let absent: Vec<&str> = d.absent.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(absent, ["/usr/local/bin/cat", "/w/nothere"]);
        assert_eq!(d.listing, BTreeSet::from([PathBuf::from("/w/in")]));
        assert!(o.unknown_because().unwrap().contains("/w/static-tool"));
    }

    #[test]
    fn a_file_only_looked_up_is_read_and_known_as_looked_up() {
        let o = parse(
            "P root /bin/sh\nS /w/a\nS /w/b\nR /w/b\nS /w/tool\nX 1.1 /w/tool\nP 1.1 /w/tool\nS /w/lib.so\n\
             L /w/lib.so\nS /w/c\n",
        );
        let read: Vec<&str> = o.read.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(read, ["/bin/sh", "/w/a", "/w/b", "/w/c", "/w/lib.so", "/w/tool"]);
        let looked: Vec<&str> = o.looked_up.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(looked, ["/w/a", "/w/c"]);
        assert_eq!(o.opened, BTreeSet::from([PathBuf::from("/w/b")]));
        assert_eq!(o.execs, 1);
        assert!(o.dependencies().content.contains(Path::new("/w/a")), "a test depends on what it stat'ed");
    }

    #[test]
    fn a_test_whose_shell_never_reported_is_unknown() {
        assert!(parse("R /x\n").unknown_because().is_some());
        assert!(parse("P root /bin/sh\n").unknown_because().is_none());
    }

    /// A program run without the shell that never reported is named; a
    /// command the shell ran says the shell did not report.
    #[test]
    fn a_test_whose_first_process_never_reported_is_unknown_and_named() {
        let o = parse("");
        let why = o.unknown_because_for("./st --fast").unwrap();
        assert_eq!(why, "./st ran and could not be observed (statically linked or setuid)");
        assert_eq!(o.unknown_because_for("./st > out").unwrap(), "the file tracker did not start in the test's shell");
        assert!(parse("P root /w/st\n").unknown_because_for("./st").is_none());
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
