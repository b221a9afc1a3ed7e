//! Helpers for the CLI tests: scratch copies of the bundled example, running the
//! real `retest` binary.

#![allow(dead_code)]

pub mod corpus;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cruise")
}

pub fn retest_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_retest"))
}

/// Copies a directory tree (files only, no build outputs).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n == ".retest" || n.ends_with(".o") || n == "cruise" || n.ends_with(".gcda") || n.ends_with(".gcno") {
            continue;
        }
        if p.is_dir() {
            copy_tree(&p, &to.join(&name));
        } else {
            std::fs::copy(&p, to.join(&name)).unwrap();
        }
    }
}

/// A scratch copy of the example.
pub fn example_copy() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_tree(&example_dir(), d.path());
    d
}

/// A project in `dir` that `make` builds: its `Makefile`, a `retest.toml`
/// with one `[[test]]` per (name, command), then `retest init` and
/// `retest build -- make -s`.
pub fn make_project(dir: &Path, makefile: &str, tests: &[(&str, &str)]) {
    std::fs::write(dir.join("Makefile"), makefile).unwrap();
    let toml: Vec<String> = tests
        .iter()
        .map(|(name, cmd)| {
            assert!(!format!("{name}{cmd}").contains(['"', '\\']), "{name}: {cmd} needs escaping in TOML");
            format!("[[test]]\nname = \"{name}\"\ncmd = \"{cmd}\"\n")
        })
        .collect();
    std::fs::write(dir.join("retest.toml"), toml.join("\n")).unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
}

/// Runs `retest ARGS` in `dir` as CI would (`CI=1`, no `RETEST_STORE`), whatever it exits with.
pub fn retest_output(dir: &Path, args: &[&str]) -> Output {
    Command::new(retest_bin()).args(args).current_dir(dir).env("CI", "1").env_remove("RETEST_STORE").output().unwrap()
}

/// Runs `retest ARGS` in `dir`; panics with its output unless it exits with `code`.
pub fn retest(dir: &Path, args: &[&str], code: i32) -> Output {
    let out = retest_output(dir, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "retest {args:?} exited {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// init + build with the wrapper + run: a recorded baseline.
pub fn baseline(dir: &Path) {
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    retest(dir, &["run", "-j2"], 0);
}

/// Applies one of the example's bundled changes and rebuilds with the wrapper.
pub fn apply_change(dir: &Path, change: &str) {
    apply_change_with(dir, change, &[]);
}

/// [`apply_change`], building with `retest build OPTIONS -- make`.
pub fn apply_change_with(dir: &Path, change: &str, options: &[&str]) {
    copy_change(dir, change);
    let mut args = vec!["build"];
    args.extend_from_slice(options);
    args.extend_from_slice(&["--", "make", "-s", "-j2"]);
    retest(dir, &args, 0);
}

/// Copies one of the example's bundled changes over its sources, each file
/// made the newest, without building.
pub fn copy_change(dir: &Path, change: &str) {
    let ch = dir.join("changes").join(change);
    for e in std::fs::read_dir(&ch).unwrap() {
        let e = e.unwrap();
        let n = e.file_name();
        if n.to_string_lossy().ends_with(".c") || n.to_string_lossy().ends_with(".h") {
            std::fs::copy(e.path(), dir.join(&n)).unwrap();
        }
    }
    for e in std::fs::read_dir(&ch).unwrap() {
        let n = e.unwrap().file_name();
        let p = dir.join(&n);
        if p.exists() {
            make_newest(&p);
        }
    }
}

/// Writes `contents` into `path` and makes it the newest file of its
/// directory ([`make_newest`]), so that `make` rebuilds what depends on it.
pub fn write_newer(path: &Path, contents: impl AsRef<[u8]>) {
    std::fs::write(path, contents).unwrap();
    make_newest(path);
}

/// Sets `path`'s mtime after that of every other file under its directory
/// (symbolic links not followed): `make` decides by mtime, and a file written
/// in the tick — or, where timestamps are coarse, the second — of the last
/// build would not look newer than what was built from it. Now, unless some
/// file is as new (a coarse clock): then a millisecond later, or a second on a
/// file system that keeps whole seconds.
pub fn make_newest(path: &Path) {
    fn newest(dir: &Path, skip: &Path, max: &mut SystemTime) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                newest(&p, skip, max);
            } else if m.is_file() && p != skip {
                *max = (*max).max(m.modified().unwrap());
            }
        }
    }
    let mut others = SystemTime::UNIX_EPOCH;
    newest(path.parent().unwrap(), path, &mut others);
    let f = std::fs::File::options().append(true).open(path).unwrap();
    for step in [Duration::from_millis(1), Duration::from_secs(1)] {
        f.set_modified(SystemTime::now().max(others + step)).unwrap();
        if f.metadata().unwrap().modified().unwrap() > others {
            return;
        }
    }
    panic!("cannot make {} newer than the files next to it", path.display());
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(o)))
}

pub fn test_names(dir: &Path) -> Vec<String> {
    let out = retest(dir, &["run", "--list"], 0);
    stdout(&out).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

/// A small xorshift generator for the fault tests' kill points, seeded from
/// the clock unless `RETEST_FAULT_SEED` is set (the seed is in every failure
/// message: `rng.0` before the first draw).
pub struct Rng(pub u64);

impl Rng {
    pub fn from_env() -> Rng {
        let seed = std::env::var("RETEST_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64
        });
        Rng(seed | 1)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
