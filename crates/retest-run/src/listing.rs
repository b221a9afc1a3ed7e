//! CTest's test list, reused while nothing it was made from changed.
//!
//! `ctest --show-only=json-v1` costs 15–20 ms even for a small suite: more
//! than the rest of a `retest select` that finds nothing changed. The list
//! depends on what ctest reads: the `CTestTestfile.cmake` files and what
//! they include, CTest's own configuration files (or their absence), ctest
//! itself and its libraries, the environment, and, through `if(EXISTS …)`
//! and ctest's search for each test's program, whether files exist. So the
//! listing is made once under the file tracker ([`crate::deps`]), and kept
//! with the state of everything the tracker saw ctest consult (a file's
//! content by its stamp, which a change of content always changes, or by its
//! hash when the stamp is too recent to trust); it is reused
//! only while every one of those states still holds and the environment and
//! the `ctest` found on `PATH` are the same.
//!
//! What ctest only *looked up* (`stat`, `access`: the tests' programs) counts
//! by its existence, type and permission bits, not its content: rebuilding
//! a test program does not change the list. That holds only when the scripts
//! ctest ran are declarative — [`declarative`]: nothing but `add_test`,
//! `set_tests_properties`, `subdirs`, `set_directory_properties`, `include`,
//! `set` and `if`/`elseif`/`else`/`endif` without `IS_NEWER_THAN`. A listing
//! that ran anything else, or any program (`gtest_discover_tests` in
//! `PRE_TEST` mode runs the test binaries to list their cases), or that the
//! tracker could not fully see, is never kept: it is made again every time.
//! A file that changed while ctest ran (its change time is later than the
//! listing's start, less the file clock's lag) keeps the listing from being stored, so a listing is
//! never kept beside a state it was not made from.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::deps;
use crate::discover::{DiscoverError, TestSpec, ctest_dir, parse_ctest_json, run_ctest};
use crate::files::{self, FileState, Kind, Paths, Stamp, StateCache};

/// First line of a kept listing; the number changes with the format.
const MAGIC: &str = "retest ctest listing 1";

/// Where a listing is kept, and the file tracker that observes ctest.
#[derive(Clone, Debug)]
pub struct ListingCache {
    /// The file the listing is kept in.
    pub file: PathBuf,
    /// The file tracker's shared object; without one, nothing is kept.
    pub tracker: Option<PathBuf>,
}

/// Where a listing came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// The kept listing: nothing it was made from changed.
    Reused,
    /// Made by ctest, and kept.
    Kept,
    /// Made by ctest, and not kept, for the reason given.
    NotKept(String),
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listed::Reused => write!(f, "CTest's list kept from before: nothing it was made from changed"),
            Listed::Kept => write!(f, "CTest's list made by ctest, and kept"),
            Listed::NotKept(why) => write!(f, "CTest's list made by ctest, not kept: {why}"),
        }
    }
}

/// The tests of the listing kept in `cache`, when nothing it was made from
/// changed: [`from_ctest_cached`] without running `ctest`, which `None`
/// says it would have to.
pub fn from_ctest_kept(
    build_dir: &Path,
    cache: &ListingCache,
) -> Option<Result<(Vec<TestSpec>, Listed), DiscoverError>> {
    let build_dir = match ctest_dir(build_dir) {
        Ok(d) => d,
        Err(e) => return Some(Err(e)),
    };
    let key = key(&on_path("ctest")?, &build_dir);
    let Some(Kept::Listing(out)) = kept(&cache.file, &key) else { return None };
    parse_ctest_json(&build_dir, &out).ok().map(|tests| Ok((tests, Listed::Reused)))
}

/// The tests of a CMake build directory, as [`crate::discover::from_ctest`]
/// lists them, from `cache` when nothing the kept listing was made from
/// changed.
pub fn from_ctest_cached(build_dir: &Path, cache: &ListingCache) -> Result<(Vec<TestSpec>, Listed), DiscoverError> {
    if let Some(kept) = from_ctest_kept(build_dir, cache) {
        return kept;
    }
    let build_dir = ctest_dir(build_dir)?;
    let Some(ctest) = on_path("ctest") else {
        // `run_ctest` says that ctest cannot be run
        let out = run_ctest(Path::new("ctest"), &build_dir, &[])?;
        return Ok((parse_ctest_json(&build_dir, &out)?, Listed::NotKept("`ctest` is not on PATH".into())));
    };
    let key = key(&ctest, &build_dir);
    // the scripts are as they were when their listing could not be kept:
    // ctest lists, without the tracker's cost
    if let Some(Kept::Unkeepable(why)) = kept(&cache.file, &key) {
        let out = run_ctest(&ctest, &build_dir, &[])?;
        return Ok((parse_ctest_json(&build_dir, &out)?, Listed::NotKept(why)));
    }
    let Some(tracker) = &cache.tracker else {
        let out = run_ctest(&ctest, &build_dir, &[])?;
        return Ok((parse_ctest_json(&build_dir, &out)?, Listed::NotKept("the file tracker is not available".into())));
    };
    let logs = tempfile::tempdir().map_err(|source| DiscoverError::Scratch { source })?;
    let preload = deps::preload_first(tracker, std::env::var_os("LD_PRELOAD").as_deref());
    let started = SystemTime::now();
    let out = run_ctest(
        &ctest,
        &build_dir,
        &[
            ("LD_PRELOAD", &preload),
            (deps::DIR_ENV, logs.path().as_os_str()),
            (deps::EXEC_ENV, OsStr::new(deps::ROOT_NONCE)),
        ],
    )?;
    let tests = parse_ctest_json(&build_dir, &out)?;
    let listed = match deps::read_dir(logs.path()) {
        Err(e) => Listed::NotKept(format!("the file tracker's logs cannot be read: {e}")),
        Ok(observed) => match states(&observed, &[logs.path()], started) {
            Err(NotKeepable { why, scripts: None }) => Listed::NotKept(why),
            Err(NotKeepable { why, scripts: Some(scripts) }) => {
                // remembered, so that the next listings skip the tracker;
                // failing to remember costs only that
                let _ = keep(&cache.file, &key, &Kept::Unkeepable(why.clone()), &scripts);
                Listed::NotKept(why)
            }
            Ok(states) => match keep(&cache.file, &key, &Kept::Listing(out), &states) {
                Ok(()) => Listed::Kept,
                Err(e) => Listed::NotKept(format!("cannot write {}: {e}", cache.file.display())),
            },
        },
    };
    Ok((tests, listed))
}

/// One thing a listing was made from, as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Dep {
    /// A state the tracker's file states describe (content, absence, a
    /// directory, a directory's entries).
    State(FileState),
    /// A file that existed with this type and these permission bits.
    Exists { path: String, mode: u32 },
    /// A file whose content counts, known by its stamp alone: a change of
    /// content changes the stamp (the change time cannot be set back), so
    /// what is unchanged need not be hashed, when kept nor when checked.
    Stamped { path: String, stamp: Stamp },
}

/// How far behind the clock a file's change time may be: the kernel stamps
/// files from the coarse clock, updated once per tick, so by up to a tick.
/// Twice the coarse clock's resolution (a tick: 1–10 ms), within 2–50 ms.
fn clock_lag() -> std::time::Duration {
    let mut res = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `res` is a valid timespec for the call to fill
    let tick = match unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut res) } {
        0 => std::time::Duration::new(res.tv_sec.max(0) as u64, res.tv_nsec.clamp(0, 999_999_999) as u32),
        _ => std::time::Duration::from_millis(25),
    };
    (2 * tick).clamp(std::time::Duration::from_millis(2), std::time::Duration::from_millis(50))
}

/// The bits of a mode that [`Dep::Exists`] keeps: file type and permissions.
const MODE_BITS: u32 = 0o170_777;

/// Why a listing is not kept; with the states of the scripts ctest read
/// when the reason lies in them (or in what they run), so that it is
/// remembered until they change.
struct NotKeepable {
    why: String,
    scripts: Option<Vec<Dep>>,
}

/// What the listing `observed` describes was made from, or why it must not
/// be kept. Paths under `scratch` (the tracker's own logs) do not count.
fn states(observed: &deps::Observed, scratch: &[&Path], started: SystemTime) -> Result<Vec<Dep>, NotKeepable> {
    let counts = |p: &Path| {
        !(files::SYSTEM_PREFIXES.iter().any(|s| p.starts_with(s)) || scratch.iter().any(|s| p.starts_with(s)))
    };
    let root = Paths::new(Path::new("/"));
    let mut cache = StateCache::default();
    // every file ctest opened is a program or library (its content counts),
    // or a script that must be declarative
    let mut scripts = Vec::new();
    let mut why = observed.unknown_because();
    if why.is_none() && observed.execs > 0 {
        why = Some("ctest ran a program while it listed the tests".into());
    }
    for p in observed.opened.iter().filter(|p| counts(p)) {
        let Ok(bytes) = std::fs::read(p) else {
            return Err(NotKeepable { why: format!("cannot read {}", p.display()), scripts: None });
        };
        if bytes.starts_with(b"\x7fELF") {
            continue;
        }
        scripts.push(Dep::State(cache.state(&root, p, Kind::Content)));
        if why.is_none() {
            why = match std::str::from_utf8(&bytes) {
                Err(_) => Some(format!("{} is not a CMake script", p.display())),
                Ok(text) => declarative(text).err().map(|w| format!("{}: {w}", p.display())),
            };
        }
    }
    if let Some(why) = why {
        return Err(NotKeepable { why, scripts: Some(scripts) });
    }
    let raced = |why: String| NotKeepable { why, scripts: None };
    // file times come from a clock that lags by up to a tick
    let started_ns = started
        .checked_sub(clock_lag())
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(i64::MAX);
    let mut out = Vec::new();
    let mut want = |p: &Path, kind: Option<Kind>| -> Result<(), NotKeepable> {
        if !counts(p) {
            return Ok(());
        }
        let text = p
            .to_str()
            .filter(|t| !t.contains('\n'))
            .ok_or_else(|| raced(format!("{} has no plain name", p.display())))?;
        let md = std::fs::metadata(p).ok();
        // changed since ctest started: the listing may be of the older state
        // (a directory that was there is there: what else changed in it
        // matters only to a listing of its entries)
        if let Some(md) = &md
            && kind != Some(Kind::Dir)
            && Stamp::of(md).ctime_ns >= started_ns
        {
            return Err(raced(format!("{} changed while ctest listed the tests", p.display())));
        }
        match kind {
            // a file's stamp says enough, unless it was taken so soon after a
            // change that another could leave it as it is: then its content
            Some(Kind::Content)
                if let Some(md) = &md
                    && md.is_file()
                    && !Stamp::of(md).racy(SystemTime::now()) =>
            {
                out.push(Dep::Stamped { path: text.to_string(), stamp: Stamp::of(md) });
            }
            Some(kind) => {
                let state = cache.state(&root, p, kind);
                if state.kind != kind && !(kind == Kind::Listing && state.kind == Kind::Dir) {
                    return Err(raced(format!("{} changed while ctest listed the tests", p.display())));
                }
                out.push(Dep::State(state));
            }
            None => match md {
                Some(md) if !md.is_dir() => {
                    out.push(Dep::Exists { path: text.to_string(), mode: md.mode() & MODE_BITS })
                }
                _ => return Err(raced(format!("{} changed while ctest listed the tests", p.display()))),
            },
        }
        Ok(())
    };
    for p in observed.read.difference(&observed.looked_up) {
        want(p, Some(Kind::Content))?;
    }
    for p in &observed.looked_up {
        want(p, None)?;
    }
    for p in &observed.missing {
        want(p, Some(Kind::Absent))?;
    }
    for p in observed.dirs.difference(&observed.listed) {
        want(p, Some(Kind::Dir))?;
    }
    for p in &observed.listed {
        want(p, Some(Kind::Listing))?;
    }
    Ok(out)
}

/// Whether a CMake script is declarative: only the commands a listing can
/// run without running a program or comparing file times. `Err` says why
/// not, or where it could not be read.
pub fn declarative(text: &str) -> Result<(), String> {
    const ALLOWED: [&str; 10] = [
        "add_test",
        "set_tests_properties",
        "subdirs",
        "set_directory_properties",
        "include",
        "set",
        "if",
        "elseif",
        "else",
        "endif",
    ];
    if text.contains("IS_NEWER_THAN") {
        return Err("compares file times (`IS_NEWER_THAN`)".into());
    }
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return Ok(());
        }
        if b[i] == b'#' {
            i = comment(b, i)?;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i == start || b[start].is_ascii_digit() {
            return Err(format!("unexpected text at byte {start}"));
        }
        let name = text[start..i].to_ascii_lowercase();
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if b.get(i) != Some(&b'(') {
            return Err(format!("`{name}` is not followed by `(`"));
        }
        i = arguments(b, i + 1)?;
        if !ALLOWED.contains(&name.as_str()) {
            return Err(format!("runs `{name}`"));
        }
    }
}

/// The end of the comment starting at `b[i] == '#'`.
fn comment(b: &[u8], i: usize) -> Result<usize, String> {
    if let Some(end) = bracket(b, i + 1)? {
        return Ok(end);
    }
    Ok(b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n + 1))
}

/// If a bracket (`[`, `=`…, `[`) opens at `i`: the end of what it encloses.
fn bracket(b: &[u8], i: usize) -> Result<Option<usize>, String> {
    if b.get(i) != Some(&b'[') {
        return Ok(None);
    }
    let mut j = i + 1;
    while b.get(j) == Some(&b'=') {
        j += 1;
    }
    if b.get(j) != Some(&b'[') {
        return Ok(None);
    }
    let close: Vec<u8> = std::iter::once(b']').chain(std::iter::repeat_n(b'=', j - i - 1)).chain([b']']).collect();
    let body = j + 1;
    b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map(|n| Some(body + n + close.len()))
        .ok_or_else(|| format!("unclosed bracket at byte {i}"))
}

/// The end of the arguments starting after the `(` before `i`.
fn arguments(b: &[u8], mut i: usize) -> Result<usize, String> {
    let mut depth = 0usize;
    loop {
        let Some(&c) = b.get(i) else { return Err("unclosed `(`".into()) };
        match c {
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                i += 1;
                if depth == 0 {
                    return Ok(i);
                }
                depth -= 1;
            }
            b'#' => i = comment(b, i)?,
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err("unclosed `\"`".into()),
                        Some(b'\\') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            b'[' => match bracket(b, i)? {
                Some(end) => i = end,
                None => i += 1,
            },
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Variables of the environment that no listing depends on: the shell's
/// bookkeeping, and the variable of random length hyperfine sets for every
/// run it times.
const VOLATILE: [&str; 3] = ["_", "OLDPWD", "HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET"];

/// What identifies a listing besides the files: the format, the `ctest`
/// run, the build directory and the environment (but for [`VOLATILE`]).
fn key(ctest: &Path, build_dir: &Path) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for part in [MAGIC.as_bytes(), ctest.as_os_str().as_bytes(), build_dir.as_os_str().as_bytes()] {
        h.update(part);
        h.update(&[0]);
    }
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        std::env::vars_os().filter(|(k, _)| !VOLATILE.iter().any(|v| k == v)).collect();
    env.sort();
    for (k, v) in &env {
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
        h.update(&[0]);
    }
    format!("{:032x}", h.digest128())
}

/// The first executable `name` on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// What is kept for a key.
#[derive(Debug, PartialEq, Eq)]
enum Kept {
    /// What ctest printed, valid while the states kept with it hold.
    Listing(Vec<u8>),
    /// Why no listing can be kept while the states kept with it (the
    /// scripts') hold.
    Unkeepable(String),
}

/// Writes what is kept and the states it holds under (to a temporary file
/// renamed into place: a reader sees the old or the new, never half).
fn keep(file: &Path, key: &str, what: &Kept, states: &[Dep]) -> std::io::Result<()> {
    let head = match what {
        Kept::Listing(_) => "listing".to_string(),
        Kept::Unkeepable(why) => format!("unkeepable {}", why.replace('\n', " ")),
    };
    let mut text = format!("{MAGIC}\n{key}\n{head}\n{}\n", states.len());
    for d in states {
        match d {
            Dep::State(s) => {
                let kind = match s.kind {
                    Kind::Content => 'C',
                    Kind::Absent => 'A',
                    Kind::Dir => 'D',
                    Kind::Listing => 'L',
                };
                let stamp = s.stamp.map_or("-".to_string(), |st| hex(&st.to_bytes()));
                text.push_str(&format!("{kind} {} {stamp} {}\n", hex(&s.hash), s.path));
            }
            Dep::Exists { path, mode } => text.push_str(&format!("E {mode:o} - {path}\n")),
            Dep::Stamped { path, stamp } => text.push_str(&format!("S - {} {path}\n", hex(&stamp.to_bytes()))),
        }
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    if let Kept::Listing(output) = what {
        tmp.write_all(output)?;
    }
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// What `file` keeps, if it was kept under `key` and every state kept with
/// it still holds.
fn kept(file: &Path, key: &str) -> Option<Kept> {
    let bytes = std::fs::read(file).ok()?;
    let mut rest: &[u8] = &bytes;
    let mut line = || -> Option<&str> {
        let n = rest.iter().position(|&c| c == b'\n')?;
        let l = std::str::from_utf8(&rest[..n]).ok();
        rest = &rest[n + 1..];
        l
    };
    if line()? != MAGIC || line()? != key {
        return None;
    }
    let head = line()?.to_string();
    let n: usize = line()?.parse().ok()?;
    let root = Paths::new(Path::new("/"));
    for _ in 0..n {
        let l = line()?;
        let mut parts = l.splitn(4, ' ');
        let (kind, value, stamp, path) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let holds = if kind == "E" {
            let mode = u32::from_str_radix(value, 8).ok()?;
            std::fs::metadata(path).is_ok_and(|m| !m.is_dir() && m.mode() & MODE_BITS == mode)
        } else if kind == "S" {
            let kept = Stamp::from_bytes(&unhex(stamp)?)?;
            std::fs::metadata(path).is_ok_and(|m| m.is_file() && Stamp::of(&m) == kept)
        } else {
            let kind = match kind {
                "C" => Kind::Content,
                "A" => Kind::Absent,
                "D" => Kind::Dir,
                "L" => Kind::Listing,
                _ => return None,
            };
            let hash: files::Hash = unhex(value)?.try_into().ok()?;
            let stamp = if stamp == "-" { None } else { Some(Stamp::from_bytes(&unhex(stamp)?)?) };
            let state = FileState { path: path.to_string(), kind, hash, stamp };
            files::check(&root, &state).is_none()
        };
        if !holds {
            return None;
        }
    }
    match head.split_once(' ') {
        None if head == "listing" => Some(Kept::Listing(rest.to_vec())),
        Some(("unkeepable", why)) => Some(Kept::Unkeepable(why.to_string())),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    s.len().is_multiple_of(2).then_some(())?;
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The allowance for the file clock's lag holds on this machine: a file
    /// changed after a moment never has a change time earlier than that
    /// moment less [`clock_lag`].
    #[test]
    fn a_change_time_is_never_earlier_than_the_clock_lag_allows() {
        let lag = clock_lag();
        assert!(lag >= std::time::Duration::from_millis(2) && lag <= std::time::Duration::from_millis(50), "{lag:?}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        for i in 0..300 {
            let before = SystemTime::now();
            std::fs::write(&f, i.to_string()).unwrap();
            let ctime = Stamp::of(&std::fs::metadata(&f).unwrap()).ctime_ns;
            let floor = before.checked_sub(lag).unwrap().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
            assert!(i128::from(ctime) >= floor as i128, "change {i}: {ctime} < {floor} (lag {lag:?})");
        }
    }

    #[test]
    fn what_cmake_writes_for_tests_is_declarative() {
        let ctest_testfile = "# CMake generated Testfile for \n# Source directory: /s\n\
            add_test(t \"/b/bin/t\" \"WORKING_DIRECTORY\" \"/b/tmp\")\n\
            set_tests_properties(t PROPERTIES  _BACKTRACE_TRIPLES \"/s/CMakeLists.txt;5;add_test;/s/CMakeLists.txt;0;\")\n\
            subdirs(\"sub\")\n\
            include(\"/b/t[1]_include.cmake\")\n";
        assert_eq!(declarative(ctest_testfile), Ok(()));
        // gtest_discover_tests, POST_BUILD: the include file and the tests file it includes
        let include = "if(EXISTS \"/b/t[1]_tests.cmake\")\n  include(\"/b/t[1]_tests.cmake\")\nelse()\n  \
            add_test(t_NOT_BUILT t_NOT_BUILT)\nendif()\n";
        assert_eq!(declarative(include), Ok(()));
        let tests = "add_test( [=[S.a]=] /b/t [==[--gtest_filter=S.a]==] --gtest_also_run_disabled_tests)\n\
            set_tests_properties( [=[S.a]=] PROPERTIES WORKING_DIRECTORY /b SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==])\n\
            set( t_TESTS S.a)\n#[[ a bracket\ncomment ) ]]\nset(x \"a \\\" ) b\" (nested (parens)))\n";
        assert_eq!(declarative(tests), Ok(()));
        assert_eq!(declarative(""), Ok(()));
    }

    #[test]
    fn a_script_that_runs_or_compares_times_is_not_declarative() {
        // gtest_discover_tests, PRE_TEST: runs the binary when it is newer than its list
        let pre_test = "if(NOT EXISTS \"/b/t_tests.cmake\" OR\n   NOT \"/b/t_tests.cmake\" IS_NEWER_THAN \"/b/t\")\n  \
            include(\"/usr/share/cmake/Modules/GoogleTestAddTests.cmake\")\n  gtest_discover_tests_impl(TEST_EXECUTABLE \"/b/t\")\nendif()\n";
        assert!(declarative(pre_test).unwrap_err().contains("IS_NEWER_THAN"));
        assert_eq!(declarative("execute_process(COMMAND /b/t --list)\n"), Err("runs `execute_process`".into()));
        assert_eq!(declarative("function(f)\nendfunction()\n"), Err("runs `function`".into()));
        assert_eq!(declarative("file(READ /x y)\n"), Err("runs `file`".into()));
        // what cannot be read is not declarative either
        assert!(declarative("add_test(t \"/b/t)\n").is_err());
        assert!(declarative("add_test(t [[x)\n").is_err());
        assert!(declarative("add_test t\n").is_err());
        assert!(declarative("add_test(t (x)\n").is_err());
    }

    proptest::proptest! {
        /// Any text: an answer, never a panic.
        #[test]
        fn declarative_reads_any_text(text in "[a-z_()\\[\\]=#\"\\\\ \n]{0,64}") {
            let _ = declarative(&text);
        }

        /// Commands whose arguments hold parentheses, `#` and quotes inside
        /// quoted and bracket arguments: a script passes exactly when every
        /// command is allowed.
        #[test]
        fn only_allowed_commands_pass(
            cmds in proptest::collection::vec(
                ("(add_test|set|if|endif|file|execute_process|function|include)", "[a-z ]{0,8}|\"[a-z ()#]{0,6}\"|\\[=\\[[a-z ()\"]{0,6}\\]=\\]"),
                0..6,
            )
        ) {
            let text: String = cmds.iter().map(|(c, a)| format!("{c}({a})\n")).collect();
            let allowed = cmds.iter().all(|(c, _)| ["add_test", "set", "if", "endif", "include"].contains(&c.as_str()));
            proptest::prop_assert_eq!(declarative(&text).is_ok(), allowed, "{}", text);
        }
    }

    #[test]
    fn the_kept_form_reads_back_and_a_changed_state_discards_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("CTestTestfile.cmake");
        let prog = dir.path().join("prog");
        std::fs::write(&data, "add_test(a /x)\n").unwrap();
        std::fs::write(&prog, "binary").unwrap();
        let root = Paths::new(Path::new("/"));
        let mut cache = StateCache::default();
        let states = vec![
            Dep::State(cache.state(&root, &data, Kind::Content)),
            Dep::State(cache.state(&root, &dir.path().join("absent"), Kind::Absent)),
            Dep::Exists {
                path: prog.to_str().unwrap().to_string(),
                mode: std::fs::metadata(&prog).unwrap().mode() & MODE_BITS,
            },
        ];
        // a file known by its stamp: the same stamp holds, another does not
        let lib = dir.path().join("lib.so");
        std::fs::write(&lib, "\x7fELF").unwrap();
        let stamped = Dep::Stamped {
            path: lib.to_str().unwrap().to_string(),
            stamp: Stamp::of(&std::fs::metadata(&lib).unwrap()),
        };
        keep(&dir.path().join("s"), "k", &Kept::Listing(b"x".to_vec()), std::slice::from_ref(&stamped)).unwrap();
        assert_eq!(kept(&dir.path().join("s"), "k"), Some(Kept::Listing(b"x".to_vec())));
        std::fs::write(&lib, "\x7fELF.").unwrap();
        assert_eq!(kept(&dir.path().join("s"), "k"), None, "rewritten: another stamp");
        let file = dir.path().join("kept");
        keep(&file, "k1", &Kept::Listing(b"{\"json\":1}\n".to_vec()), &states).unwrap();
        assert_eq!(kept(&file, "k1"), Some(Kept::Listing(b"{\"json\":1}\n".to_vec())));
        assert_eq!(kept(&file, "k2"), None, "another key");
        // the program rebuilt: its content is not what the listing was made from
        std::fs::write(&prog, "another binary").unwrap();
        assert!(kept(&file, "k1").is_some());
        // but its permission bits are
        std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(kept(&file, "k1"), None);
        keep(&file, "k1", &Kept::Unkeepable("runs `execute_process`".into()), &states[..2]).unwrap();
        assert_eq!(kept(&file, "k1"), Some(Kept::Unkeepable("runs `execute_process`".into())));
        assert!(kept(&file, "k1").is_some());
        std::fs::write(dir.path().join("absent"), "").unwrap();
        assert_eq!(kept(&file, "k1"), None, "a path that was absent exists");
        std::fs::remove_file(dir.path().join("absent")).unwrap();
        std::fs::write(&data, "add_test(b /x)\n").unwrap();
        assert_eq!(kept(&file, "k1"), None, "a script changed");
    }
}
