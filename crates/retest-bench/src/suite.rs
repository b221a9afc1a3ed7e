//! The harness's own test runner: the oracle of the safety study.
//!
//! Each universe line runs with `sh -c` from the subject's directory, stdin from
//! `/dev/null`, under `timeout -s KILL`; its outcome is the exit status and the
//! hashes of stdout and stderr (streamed, so a runaway mutant cannot fill memory).
//! This runner shares no code with `retest`, so a test it sees change is a change
//! `retest` had to select.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

/// One test of a universe file.
#[derive(Clone, Debug)]
pub struct Test {
    /// `tN`, as `retest` names universe tests (N counts non-empty lines from 1).
    pub name: String,
    pub cmd: String,
}

/// Reads a universe file the way `retest` does.
pub fn universe(path: &Path) -> Result<Vec<Test>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| Test { name: format!("t{}", i + 1), cmd: l.to_string() })
        .collect())
}

/// What one run of a test did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Exit code, or 128 + signal; `timeout` reports a kill after the limit as 137.
    pub status: i32,
    pub timed_out: bool,
    pub stdout: u64,
    pub stderr: u64,
}

/// A whole-suite run.
pub struct SuiteRun {
    /// Per test; `None` for the tests skipped after too many timeouts.
    pub outcomes: Vec<Option<Outcome>>,
    pub elapsed: Duration,
}

fn hash_all(mut r: impl Read) -> u64 {
    let mut h = Xxh3::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => h.update(&buf[..n]),
        }
    }
    h.digest()
}

fn run_one(dir: &Path, cmd: &str, timeout: f64) -> Result<Outcome> {
    let start = Instant::now();
    let mut child = Command::new("timeout")
        .args(["-s", "KILL", &format!("{timeout}"), "sh", "-c", cmd])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawning timeout(1)")?;
    let err = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || hash_all(err));
    let stdout = hash_all(child.stdout.take().expect("piped"));
    let stderr = err_thread.join().unwrap_or(0);
    let st = child.wait()?;
    use std::os::unix::process::ExitStatusExt;
    let status = st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
    let timed_out = status == 137 && start.elapsed().as_secs_f64() >= timeout * 0.95;
    Ok(Outcome { status, timed_out, stdout, stderr })
}

/// Runs every test of `tests` in `dir` with `jobs` in parallel. After
/// `give_up_after` timeouts the remaining tests are not run (their outcome is
/// `None`): a mutant that hangs that often is dropped from the study anyway.
pub fn run_suite(dir: &Path, tests: &[Test], timeout: f64, jobs: usize, give_up_after: usize) -> Result<SuiteRun> {
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let timeouts = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Outcome>>>> = Mutex::new((0..tests.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= tests.len() || timeouts.load(Ordering::Relaxed) >= give_up_after {
                        break;
                    }
                    let r = run_one(dir, &tests[i].cmd, timeout);
                    if r.as_ref().is_ok_and(|o| o.timed_out) {
                        timeouts.fetch_add(1, Ordering::Relaxed);
                    }
                    results.lock().expect("poisoned")[i] = Some(r);
                }
            });
        }
    });
    let outcomes =
        results.into_inner().expect("poisoned").into_iter().map(|r| r.transpose()).collect::<Result<Vec<_>>>()?;
    Ok(SuiteRun { outcomes, elapsed: start.elapsed() })
}

/// Builds `dir`'s program with plain `make` (no wrapper); true when it compiled.
pub fn plain_build(dir: &Path, extra: &[&str]) -> Result<bool> {
    let _ = Command::new("make").arg("clean").current_dir(dir).output();
    let out = Command::new("make").args(extra).current_dir(dir).output().context("running make")?;
    Ok(out.status.success())
}

/// Copies a subject into `dst` (fresh): the C file, Makefile and universe, with
/// `inputs/` as a symbolic link to the original (tests only read it).
pub fn fresh_copy(subject_dir: &Path, name: &str, dst: &Path) -> Result<PathBuf> {
    if dst.exists() {
        std::fs::remove_dir_all(dst).with_context(|| format!("removing {}", dst.display()))?;
    }
    std::fs::create_dir_all(dst)?;
    for f in [format!("{name}.c"), "Makefile".into(), "universe.txt".into()] {
        std::fs::copy(subject_dir.join(&f), dst.join(&f)).with_context(|| format!("copying {f}"))?;
    }
    std::os::unix::fs::symlink(subject_dir.join("inputs"), dst.join("inputs"))?;
    Ok(dst.to_path_buf())
}
