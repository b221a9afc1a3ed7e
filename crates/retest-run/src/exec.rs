//! Test execution: run [`TestSpec`]s in parallel, each in its own process
//! group, with timeouts, output hashing and one fresh trace directory per
//! test.
//!
//! The model is push-based, like a sink: [`run_tests`] calls `on_start(i)`
//! just before test `i` is spawned and `on_done(outcome)` as soon as it has
//! finished, from the worker thread that ran it. A caller that stores each
//! outcome in `on_done` loses nothing that already finished when the run is
//! interrupted.
//!
//! What every test gets:
//! - **Command**: `/bin/sh -c <cmd>`, in [`TestSpec::cwd`]. A missing
//!   working directory or shell is reported as [`Status::SpawnFailed`], never
//!   as an error of the whole run.
//! - **stdin** is `/dev/null` (a test that reads stdin sees end of file at
//!   once; the command may still redirect it, e.g. `prog < input.txt`).
//! - **stdout and stderr** are pipes, both read concurrently by the worker so
//!   a chatty test never blocks. Each stream is hashed while it streams
//!   (XXH3-128, [`TestOutcome::stdout_hash`]); only the last
//!   [`TAIL_BYTES`] of the two streams together are kept
//!   ([`TestOutcome::output_tail`]), so memory stays bounded however much a
//!   test prints.
//! - **Environment**: the runner's own environment, then [`TestSpec::env`],
//!   then [`RunOptions::extra_env`], then `RETEST_TRACE_DIR` set to the
//!   test's trace directory (later entries win); with
//!   [`RunOptions::preload`], the file tracker is put first in `LD_PRELOAD`
//!   (before what the test's or the runner's environment puts there) and
//!   told to log into the trace directory (`crate::deps`). The trace directory is
//!   `<trace_root>/<index>-<sanitised name>`, absolute, created empty before
//!   the spawn (a leftover directory of the same name is removed first); the
//!   coverage runtime writes its trace files there (see
//!   `docs/trace-format.md` and [`crate::trace::read_dir`]).
//! - **Process group**: the shell is the leader of a new process group, so
//!   the test's processes can be signalled together, and a Ctrl-C on the
//!   terminal does not reach them (the caller sets [`RunOptions::stop`]
//!   instead).
//! - **Timeout** ([`TestSpec::timeout`], else [`RunOptions::default_timeout`]):
//!   when it expires the whole group gets SIGTERM, which lets instrumented
//!   processes write their traces. Processes still alive [`KILL_GRACE`]
//!   later get SIGKILL — also when the shell itself already died of the
//!   SIGTERM: the rest of the group keeps its grace until it is empty (then
//!   `lingering` stays false) or the grace ends (SIGKILL, `lingering` set).
//!   The status is [`Status::TimedOut`] whatever the exit status was.
//! - **Lingering processes**: when the shell has exited normally and
//!   processes of its group are still alive (e.g. `server &`), the group
//!   gets SIGKILL at once and [`TestOutcome::lingering`] is set: the killed
//!   processes wrote no trace, so the caller must treat the test's coverage
//!   as unknown. Zombies (exited, not yet reaped) do not count. Processes
//!   that left the group (`setsid`, daemons) cannot be found this way; if
//!   one of them keeps stdout or stderr open longer than [`PIPE_GRACE`]
//!   after the group was dealt with, the runner stops reading, closes the
//!   pipes and sets `lingering` too.
//! - **Stop**: once [`RunOptions::stop`] is set no further test starts;
//!   running tests get SIGTERM (within [`STOP_POLL`]) and SIGKILL as for a
//!   timeout, and are reported as [`Status::Stopped`]. Tests that were never
//!   started get neither callback.
//!
//! Ordering: tests are started in input order (`on_start` is called in
//! increasing index order, never concurrently with itself), at most
//! [`RunOptions::jobs`] at a time. `on_done` is called exactly once for every
//! index passed to `on_start`, in completion order, possibly concurrently from
//! several worker threads. Both callbacks run on worker threads; a slow
//! `on_done` delays only the next test of that worker, a slow `on_start`
//! delays every start.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use xxhash_rust::xxh3::Xxh3;

use crate::discover::TestSpec;

/// Time between SIGTERM and SIGKILL when a test is timed out or stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long the runner keeps reading stdout and stderr after the test's
/// shell exited (and its group was killed), before it closes the pipes.
pub const PIPE_GRACE: Duration = Duration::from_secs(2);
/// How many bytes of output [`TestOutcome::output_tail`] keeps at most.
pub const TAIL_BYTES: usize = 4096;
/// How often a running test checks [`RunOptions::stop`].
pub const STOP_POLL: Duration = Duration::from_millis(50);
/// How often, while a terminated test's group is in its SIGTERM grace after
/// the shell exited, the runner checks whether the group is empty.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// Environment variable that tells the coverage runtime where to write.
pub const TRACE_DIR_VAR: &str = "RETEST_TRACE_DIR";

/// The shell that runs a test command that is not one program with plain
/// words ([`plain_words`]).
const SHELL: &str = "/bin/sh";
/// Size of one read from a test's pipe.
const READ_CHUNK: usize = 64 * 1024;
/// Longest sanitised test name used in a trace directory's name.
const MAX_DIR_NAME: usize = 64;

/// How [`run_tests`] runs a list of tests.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Number of tests run at the same time; 0 means the number of CPUs.
    pub jobs: usize,
    /// Time limit for tests whose [`TestSpec::timeout`] is `None`; `None`
    /// here means no limit.
    pub default_timeout: Option<Duration>,
    /// Directory under which every test gets its own trace directory;
    /// created if missing, then made absolute with symbolic links and `..`
    /// resolved.
    pub trace_root: PathBuf,
    /// Variables added to the environment of every test, after
    /// [`TestSpec::env`].
    pub extra_env: Vec<(String, String)>,
    /// The file tracker (`crate::deps::build_preload`) to load into every
    /// process of every test, if any.
    pub preload: Option<PathBuf>,
    /// Set by the caller (e.g. on Ctrl-C) to end the run early: no new test
    /// starts, running ones are terminated and reported as
    /// [`Status::Stopped`].
    pub stop: Arc<AtomicBool>,
    /// The process group of every test spawned so far (its shell's pid),
    /// added right after the spawn; the caller may read it at any time.
    pub groups: Arc<Mutex<HashSet<u32>>>,
}

impl RunOptions {
    /// Options with one job per CPU, no default timeout, no extra
    /// environment and a fresh stop flag.
    pub fn new(trace_root: impl Into<PathBuf>) -> Self {
        RunOptions {
            jobs: 0,
            default_timeout: None,
            trace_root: trace_root.into(),
            extra_env: Vec::new(),
            preload: None,
            stop: Arc::new(AtomicBool::new(false)),
            groups: Arc::default(),
        }
    }
}

/// How a test ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Exit status 0 (or non-zero for a test with
    /// [`TestSpec::expect_failure`]).
    Passed,
    /// Non-zero exit status (or 0 for a test with
    /// [`TestSpec::expect_failure`]).
    Failed {
        /// The exit status of the shell.
        code: i32,
    },
    /// The shell was killed by a signal (e.g. `kill -SEGV $$`, or the shell
    /// `exec`ed a program that crashed).
    Signaled {
        /// The signal number.
        signal: i32,
    },
    /// The time limit expired; the test's process group was terminated.
    TimedOut,
    /// The test could not be started (missing working directory, missing
    /// shell, trace directory not creatable, ...).
    SpawnFailed {
        /// What went wrong, with the operating system's reason.
        message: String,
    },
    /// [`RunOptions::stop`] was set while the test ran; it was terminated.
    Stopped,
}

impl Status {
    /// True only for [`Status::Passed`].
    pub fn is_pass(&self) -> bool {
        matches!(self, Status::Passed)
    }
}

/// The result of running one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestOutcome {
    /// Index of the test in the slice given to [`run_tests`].
    pub index: usize,
    /// How the test ended.
    pub status: Status,
    /// XXH3-128 of everything the test wrote to stdout, in the canonical
    /// (big-endian) byte order `xxhsum -H2` prints.
    pub stdout_hash: [u8; 16],
    /// XXH3-128 of everything the test wrote to stderr.
    pub stderr_hash: [u8; 16],
    /// The last (at most [`TAIL_BYTES`]) bytes of stdout and stderr together,
    /// in the order the runner read them, decoded lossily as UTF-8; for
    /// failure messages only.
    pub output_tail: String,
    /// From just before the spawn until the runner saw the shell exit.
    pub duration: Duration,
    /// The test's trace directory (the value of `RETEST_TRACE_DIR`).
    pub trace_dir: PathBuf,
    /// Processes of the test outlived its shell and had to be killed (or
    /// kept its output pipes open): their coverage is incomplete.
    pub lingering: bool,
    /// The test's process group (its shell's pid; 0 if it never started).
    pub group: u32,
    /// Wall-clock time just before the spawn (to compare with file times).
    pub started_at: SystemTime,
}

/// Why [`run_tests`] could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The trace root directory could not be created.
    #[error("cannot create the trace directory {}: {source} — check permissions and free space, or choose another directory", path.display())]
    TraceRoot {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// Not a single worker thread could be started.
    #[error("cannot start a worker thread: {source} — lower the number of parallel jobs or raise the process limit")]
    Threads {
        /// The operating system's reason.
        source: io::Error,
    },
}

/// Runs `tests` in parallel and reports each outcome through `on_done`.
///
/// See the [module documentation](self) for what each test's process gets,
/// the timeout and stop protocol, and the order of the callbacks. Returns
/// when every started test has finished and been reported; `Ok` also when
/// the run was stopped early (the caller sees which indices were never
/// started). Errors only when nothing could run at all; problems of one test
/// are that test's [`Status`].
pub fn run_tests(
    tests: &[TestSpec],
    opts: &RunOptions,
    on_start: &(dyn Fn(usize) + Sync),
    on_done: &(dyn Fn(TestOutcome) + Sync),
) -> Result<(), ExecError> {
    let trace_root = fs::create_dir_all(&opts.trace_root)
        .and_then(|()| fs::canonicalize(&opts.trace_root))
        .map_err(|source| ExecError::TraceRoot { path: opts.trace_root.clone(), source })?;
    if tests.is_empty() {
        return Ok(());
    }
    let jobs = match opts.jobs {
        0 => thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(tests.len());

    let next = Mutex::new(0usize);
    let pwds = Mutex::new(HashMap::new());
    let ctx = Worker { tests, opts, trace_root: &trace_root, next: &next, pwds: &pwds, on_start, on_done };
    thread::scope(|scope| {
        let mut started = 0;
        let mut failure = None;
        for w in 0..jobs {
            let spawned = thread::Builder::new().name(format!("retest-job-{w}")).spawn_scoped(scope, || ctx.run());
            match spawned {
                Ok(_) => started += 1,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        match (started, failure) {
            (0, Some(source)) => Err(ExecError::Threads { source }),
            _ => Ok(()),
        }
    })
}

/// What every worker thread shares.
struct Worker<'a> {
    tests: &'a [TestSpec],
    opts: &'a RunOptions,
    trace_root: &'a Path,
    /// Index of the next test to start; held while a test is being started
    /// so starts happen in input order.
    next: &'a Mutex<usize>,
    /// [`Worker::shell_pwd`]'s answers, by directory and inherited `PWD`.
    pwds: &'a Mutex<HashMap<(PathBuf, Option<OsString>), OsString>>,
    on_start: &'a (dyn Fn(usize) + Sync),
    on_done: &'a (dyn Fn(TestOutcome) + Sync),
}

impl Worker<'_> {
    /// Takes tests in order until none is left or the run is stopped.
    fn run(&self) {
        // one read buffer for all of this worker's tests
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let started = {
                let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
                if self.opts.stop.load(Ordering::SeqCst) || *next >= self.tests.len() {
                    return;
                }
                let index = *next;
                *next += 1;
                self.start(index)
            };
            let outcome = match started {
                Started::Running(running) => running.finish(&self.opts.stop, &mut buf),
                Started::Failed(outcome) => outcome,
            };
            (self.on_done)(outcome);
        }
    }

    /// Prepares the trace directory, calls `on_start` and spawns test
    /// `index`.
    fn start(&self, index: usize) -> Started {
        let spec = &self.tests[index];
        let trace_dir = self.trace_root.join(format!("{index}-{}", sanitize(&spec.name)));
        let prepared = fresh_dir(&trace_dir);
        (self.on_start)(index);
        let start = Instant::now();
        let started_at = SystemTime::now();
        let failed = |message: String| TestOutcome {
            index,
            status: Status::SpawnFailed { message },
            stdout_hash: empty_hash(),
            stderr_hash: empty_hash(),
            output_tail: String::new(),
            duration: start.elapsed(),
            trace_dir: trace_dir.clone(),
            lingering: false,
            group: 0,
            started_at,
        };
        if let Err(e) = prepared {
            return Started::Failed(failed(format!("cannot create the trace directory {}: {e}", trace_dir.display())));
        }
        if !spec.cwd.is_dir() {
            return Started::Failed(failed(format!(
                "working directory {} does not exist or is not a directory",
                spec.cwd.display()
            )));
        }

        // one program with plain words runs as the shell would run it, without it
        let shell = || {
            let mut cmd = Command::new(SHELL);
            cmd.arg("-c").arg(&spec.cmd);
            self.configure(&mut cmd, spec, &trace_dir);
            cmd
        };
        let spawned = match plain_words(&spec.cmd) {
            Some(words) => {
                // a relative path is the child's, after it changed directory
                let mut cmd = Command::new(&words[0]);
                cmd.args(&words[1..]);
                self.configure(&mut cmd, spec, &trace_dir);
                cmd.env("PWD", self.shell_pwd(spec)).spawn().or_else(|_| {
                    // not found, not executable, not a program: the shell
                    // says so, with its exit status
                    shell().spawn()
                })
            }
            None => shell().spawn(),
        };
        match spawned {
            Ok(child) => {
                if let Ok(mut g) = self.opts.groups.lock() {
                    g.insert(child.id());
                }
                Started::Running(RunningTest {
                    index,
                    expect_failure: spec.expect_failure,
                    timeout: spec.timeout.or(self.opts.default_timeout),
                    start,
                    started_at,
                    trace_dir,
                    child,
                })
            }
            Err(e) => Started::Failed(failed(format!("cannot start `{SHELL} -c` in {}: {e}", spec.cwd.display()))),
        }
    }

    /// Everything of a test's command but the program and its arguments:
    /// working directory, pipes, process group, environment, the tracker.
    fn configure(&self, cmd: &mut Command, spec: &TestSpec, trace_dir: &Path) {
        cmd.current_dir(&spec.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .envs(self.opts.extra_env.iter().map(|(k, v)| (k, v)))
            .env(TRACE_DIR_VAR, trace_dir);
        if let Some(lib) = &self.opts.preload {
            let theirs =
                self.test_env(spec, "LD_PRELOAD").and_then(|v| v.into_string().ok()).filter(|v| !v.trim().is_empty());
            cmd.env("LD_PRELOAD", crate::deps::preload_first(lib, theirs.as_deref().map(std::ffi::OsStr::new)))
                .env(crate::deps::DIR_ENV, trace_dir)
                .env(crate::deps::EXEC_ENV, crate::deps::ROOT_NONCE);
        }
    }

    /// The value of variable `key` in the environment a test gets: the last
    /// of [`TestSpec::env`] and [`RunOptions::extra_env`] that sets it, else
    /// retest's own.
    fn test_env(&self, spec: &TestSpec, key: &str) -> Option<OsString> {
        spec.env
            .iter()
            .chain(&self.opts.extra_env)
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| OsString::from(v))
            .or_else(|| std::env::var_os(key))
    }

    /// `PWD` as `/bin/sh` sets it in `spec.cwd`: the one the test inherits
    /// when that names the directory (absolute, without `.` or `..`), else
    /// the directory's path with symbolic links resolved.
    fn shell_pwd(&self, spec: &TestSpec) -> OsString {
        let inherited = self.test_env(spec, "PWD");
        let mut known = self.pwds.lock().unwrap_or_else(|e| e.into_inner());
        let key = (spec.cwd.clone(), inherited.clone());
        if let Some(p) = known.get(&key) {
            return p.clone();
        }
        let same = |p: &Path| {
            use std::os::unix::fs::MetadataExt;
            let plain = p.is_absolute()
                && p.components().all(|c| !matches!(c, std::path::Component::CurDir | std::path::Component::ParentDir));
            plain
                && match (fs::metadata(p), fs::metadata(&spec.cwd)) {
                    (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                    _ => false,
                }
        };
        let pwd = match inherited {
            Some(p) if same(Path::new(&p)) => p,
            _ => {
                fs::canonicalize(&spec.cwd).map_or_else(|_| spec.cwd.clone().into_os_string(), PathBuf::into_os_string)
            }
        };
        known.insert(key, pwd.clone());
        pwd
    }
}

/// The words of `cmd` when `/bin/sh -c cmd` would run one program with them
/// and do nothing else, so that the test may run without the shell: one
/// simple command whose words are plain characters, single-quoted text,
/// double-quoted text without expansions, or backslash-escaped characters;
/// whose first word names the program by a path (holds a `/`, so no
/// built-in, keyword, alias or `PATH` search is involved) and is not an
/// assignment. Anything else (expansions, globs, redirections, pipes,
/// lists, comments, a tilde) is `None`, and the shell runs it.
///
/// Exact: `plain_words_are_what_the_shell_makes_of_them` compares with
/// `/bin/sh` on random text.
pub fn plain_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => return None,
                    c => word.push(c),
                }
            }
            c if c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c) => {
                in_word = true;
                word.push(c);
            }
            _ => return None,
        }
    }
    if in_word {
        words.push(word);
    }
    let first = words.first()?;
    let assignment = first.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    (first.contains('/') && !assignment).then_some(words)
}

/// A test after the attempt to spawn it.
enum Started {
    /// The shell runs.
    Running(RunningTest),
    /// The test could not start; this is its outcome.
    Failed(TestOutcome),
}

/// Why the runner is terminating a test.
#[derive(Clone, Copy)]
enum Kill {
    TimedOut,
    Stopped,
}

/// A spawned test whose shell has not been waited for yet.
struct RunningTest {
    index: usize,
    expect_failure: bool,
    timeout: Option<Duration>,
    start: Instant,
    started_at: SystemTime,
    trace_dir: PathBuf,
    child: Child,
}

/// One of the two output pipes.
struct Stream {
    file: Option<File>,
    hasher: Xxh3,
}

impl Stream {
    fn new(fd: Option<OwnedFd>) -> Self {
        Stream { file: fd.map(File::from), hasher: Xxh3::new() }
    }
}

/// How the poll loop of [`RunningTest::finish`] learns that the test's shell
/// exited, without blocking.
enum ExitWatch {
    /// A pidfd (Linux 5.3 and later): readable once the shell has exited; its
    /// status is then taken with `try_wait`. No thread, no pipe.
    Pidfd { fd: OwnedFd, child: Child },
    /// Elsewhere a thread waits for the shell, sends the status and closes
    /// the write end of `notify`, which makes the read end readable.
    Thread { notify: io::PipeReader, status: mpsc::Receiver<io::Result<ExitStatus>>, waiter: thread::JoinHandle<()> },
}

impl ExitWatch {
    /// Watches `child`, with a pidfd when `pidfd` is set and the kernel
    /// offers one. On error `child` is dropped (it is neither killed nor
    /// reaped).
    fn new(child: Child, index: usize, pidfd: bool) -> io::Result<ExitWatch> {
        if pidfd && let Some(fd) = pidfd_open(child.id()) {
            return Ok(ExitWatch::Pidfd { fd, child });
        }
        let (notify, notify_w) = io::pipe()?;
        let (tx, status) = mpsc::channel();
        let mut child = child;
        let waiter = thread::Builder::new().name(format!("retest-wait-{index}")).spawn(move || {
            let _ = tx.send(child.wait());
            drop(notify_w);
        })?;
        Ok(ExitWatch::Thread { notify, status, waiter })
    }

    /// The descriptor to poll until [`ExitWatch::try_status`] gave the status.
    fn fd(&self) -> libc::c_int {
        match self {
            ExitWatch::Pidfd { fd, .. } => fd.as_raw_fd(),
            ExitWatch::Thread { notify, .. } => notify.as_raw_fd(),
        }
    }

    /// The shell's exit status once it has exited (call when [`ExitWatch::fd`]
    /// polled readable); `None` while it runs.
    fn try_status(&mut self) -> Option<io::Result<ExitStatus>> {
        match self {
            ExitWatch::Pidfd { child, .. } => child.try_wait().transpose(),
            ExitWatch::Thread { status, .. } => status.try_recv().ok(),
        }
    }

    /// Ends the watch; the shell must have been reaped (or its status lost
    /// with the thread).
    fn close(self) {
        if let ExitWatch::Thread { waiter, .. } = self {
            let _ = waiter.join();
        }
    }
}

/// `pidfd_open(2)` of process `pid`; `None` where the kernel has no pidfds
/// (before Linux 5.3) or refuses one.
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    // SAFETY: a non-negative result is a descriptor we now own (pidfds are
    // opened close-on-exec).
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

impl RunningTest {
    /// Reads the output, enforces the timeout and the stop flag, waits for
    /// the shell and cleans up its process group. Never panics.
    fn finish(mut self, stop: &AtomicBool, buf: &mut [u8]) -> TestOutcome {
        // The group id is the shell's pid (process_group(0)).
        let pgid = self.child.id() as libc::pid_t;
        let mut streams = [
            Stream::new(self.child.stdout.take().map(OwnedFd::from)),
            Stream::new(self.child.stderr.take().map(OwnedFd::from)),
        ];

        let mut watch = match ExitWatch::new(self.child, self.index, true) {
            Ok(w) => w,
            Err(e) => {
                // The child was dropped with the failed attempt: kill and reap it.
                signal_group(pgid, libc::SIGKILL);
                reap(pgid);
                return TestOutcome {
                    index: self.index,
                    status: Status::SpawnFailed { message: format!("cannot watch the test's shell: {e}") },
                    stdout_hash: empty_hash(),
                    stderr_hash: empty_hash(),
                    output_tail: String::new(),
                    duration: self.start.elapsed(),
                    trace_dir: self.trace_dir,
                    lingering: false,
                    group: pgid as u32,
                    started_at: self.started_at,
                };
            }
        };

        let deadline = self.timeout.map(|t| self.start + t);
        // Why and since when the group is being terminated (SIGTERM sent).
        let mut kill: Option<(Kill, Instant)> = None;
        let mut killed = false;
        let mut exit: Option<io::Result<ExitStatus>> = None;
        // When the shell was reaped.
        let mut ended_at: Option<Instant> = None;
        // When, after the shell's exit, no process of the group was left
        // alive (or the rest had been killed): from then on only the pipes
        // are drained, for at most PIPE_GRACE.
        let mut settled_at: Option<Instant> = None;
        let mut lingering = false;
        let mut tail = Tail::default();
        loop {
            let now = Instant::now();
            if settled_at.is_none() {
                match kill {
                    None if exit.is_none() => {
                        let why = if deadline.is_some_and(|d| now >= d) {
                            Some(Kill::TimedOut)
                        } else if stop.load(Ordering::SeqCst) {
                            Some(Kill::Stopped)
                        } else {
                            None
                        };
                        if let Some(why) = why {
                            signal_group(pgid, libc::SIGTERM);
                            kill = Some((why, now));
                        }
                    }
                    Some((_, at)) if !killed && now >= at + KILL_GRACE => {
                        signal_group(pgid, libc::SIGKILL);
                        killed = true;
                        if exit.is_some() {
                            // The shell is gone but others ignored SIGTERM.
                            lingering = true;
                            settled_at = Some(now);
                        }
                    }
                    Some(_) if exit.is_some() && !group_alive(pgid) => {
                        // Everything ended within the grace, traces written.
                        settled_at = Some(now);
                    }
                    _ => {}
                }
            }
            if let Some(settled) = settled_at {
                if streams.iter().all(|s| s.file.is_none()) {
                    break;
                }
                if now >= settled + PIPE_GRACE {
                    // Someone outside the group still holds the pipes.
                    lingering = true;
                    break;
                }
            }

            // When to wake up at the latest.
            let wake = match (settled_at, kill) {
                (Some(settled), _) => settled + PIPE_GRACE,
                (None, None) => {
                    let tick = now + STOP_POLL;
                    deadline.map_or(tick, |d| d.min(tick))
                }
                (None, Some((_, at))) => {
                    let tick = now + if exit.is_some() { GROUP_POLL } else { STOP_POLL };
                    if killed { tick } else { tick.min(at + KILL_GRACE) }
                }
            };
            let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
            for s in &streams {
                if let Some(f) = &s.file {
                    fds.push(pollfd(f.as_raw_fd()));
                }
            }
            let watched = exit.is_none().then(|| watch.fd());
            if let Some(fd) = watched {
                fds.push(pollfd(fd));
            }
            if poll(&mut fds, wake.saturating_duration_since(now)).is_err() {
                // Only EINVAL or ENOMEM are possible here; do not spin.
                thread::sleep(Duration::from_millis(10));
            }

            let mut i = 0;
            for s in &mut streams {
                let Some(f) = &mut s.file else { continue };
                let revents = fds[i].revents;
                i += 1;
                if revents == 0 {
                    continue;
                }
                match f.read(buf) {
                    Ok(0) => s.file = None,
                    Ok(n) => {
                        s.hasher.update(&buf[..n]);
                        tail.push(&buf[..n]);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => s.file = None,
                }
            }

            if watched.is_some()
                && fds[i].revents != 0
                && let Some(status) = watch.try_status()
            {
                let now = Instant::now();
                exit = Some(status);
                ended_at = Some(now);
                if kill.is_none() {
                    // A normal end: whatever is left of the group lingers.
                    if group_alive(pgid) {
                        signal_group(pgid, libc::SIGKILL);
                        lingering = true;
                    }
                    settled_at = Some(now);
                } else if killed {
                    settled_at = Some(now);
                }
                // Otherwise the rest of the group keeps its SIGTERM grace,
                // so that its processes can write their traces.
            }
        }
        watch.close();

        let status = match (kill, exit) {
            (Some((Kill::TimedOut, _)), _) => Status::TimedOut,
            (Some((Kill::Stopped, _)), _) => Status::Stopped,
            (None, Some(Ok(st))) => exit_status(st, self.expect_failure),
            (None, Some(Err(e))) => Status::SpawnFailed { message: format!("cannot wait for the test's shell: {e}") },
            (None, None) => Status::SpawnFailed { message: "the test's shell vanished without an exit status".into() },
        };
        let [out, err] = streams;
        TestOutcome {
            index: self.index,
            status,
            stdout_hash: out.hasher.digest128().to_be_bytes(),
            stderr_hash: err.hasher.digest128().to_be_bytes(),
            output_tail: tail.into_string(),
            duration: ended_at.unwrap_or_else(Instant::now) - self.start,
            trace_dir: self.trace_dir,
            lingering,
            group: pgid as u32,
            started_at: self.started_at,
        }
    }
}

/// Maps the shell's exit status; see [`Status`].
fn exit_status(st: ExitStatus, expect_failure: bool) -> Status {
    match (st.code(), st.signal()) {
        (Some(0), _) if expect_failure => Status::Failed { code: 0 },
        (Some(0), _) => Status::Passed,
        (Some(_), _) if expect_failure => Status::Passed,
        (Some(code), _) => Status::Failed { code },
        (None, Some(signal)) => Status::Signaled { signal },
        // Stopped or continued: not reported by `wait`; be conservative.
        (None, None) => Status::Failed { code: -1 },
    }
}

/// The last [`TAIL_BYTES`] bytes of output.
#[derive(Default)]
struct Tail {
    buf: VecDeque<u8>,
}

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
        let excess = (self.buf.len() + bytes.len()).saturating_sub(TAIL_BYTES);
        self.buf.drain(..excess);
        self.buf.extend(bytes);
    }

    /// Lossy UTF-8, without the broken character the cut may have left at
    /// the start.
    fn into_string(mut self) -> String {
        let bytes = self.buf.make_contiguous();
        let skip = bytes.iter().take(3).take_while(|&&b| b & 0xC0 == 0x80).count();
        String::from_utf8_lossy(&bytes[skip..]).into_owned()
    }
}

/// XXH3-128 of no bytes, canonical byte order.
fn empty_hash() -> [u8; 16] {
    Xxh3::new().digest128().to_be_bytes()
}

/// `name` reduced to `[A-Za-z0-9._-]` (others become `_`), at most
/// [`MAX_DIR_NAME`] characters.
fn sanitize(name: &str) -> String {
    name.chars()
        .take(MAX_DIR_NAME)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect()
}

/// Creates `dir` empty, removing whatever had that name before.
fn fresh_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(dir)?,
        Ok(_) => fs::remove_file(dir)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir(dir)
}

fn pollfd(fd: libc::c_int) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}

/// `poll(2)` for at most `timeout` (rounded up to whole milliseconds);
/// an interrupted call counts as a timeout.
fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()`
    // pollfd structures for the duration of the call.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
        for f in fds.iter_mut() {
            f.revents = 0;
        }
    }
    Ok(())
}

/// Sends `signal` to every process of group `pgid`; a group that no longer
/// exists is not an error.
fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // Never signal group 0 (our own) or -1 (every process we may signal).
    if pgid > 1 {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether a process of group `pgid` is still alive.
///
/// Zombies do not count: an orphan that already exited stays in its group
/// until `init` reaps it, which some container init processes never do.
/// `kill(-pgid, 0)` answers cheaply for the common case of an empty group;
/// otherwise `/proc` is consulted where it exists.
fn group_alive(pgid: libc::pid_t) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks for existence.
    let r = unsafe { libc::kill(-pgid, 0) };
    if r != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        return false;
    }
    live_member_in_proc(pgid).unwrap_or(true)
}

/// Whether process `pid` is still running: it exists and is not a zombie (a
/// killed process whose parent died too stays a zombie where the container's
/// init does not reap it).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid, 0) };
    if r != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EPERM) {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) state ..."; comm may contain anything
        Ok(stat) => !matches!(
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_ascii_whitespace().next()),
            Some("Z" | "X" | "x")
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound && Path::new("/proc/self").exists() => false,
        Err(_) => true,
    }
}

/// Scans `/proc` for a process of group `pgid` that is not a zombie; `None`
/// when `/proc` cannot be read.
fn live_member_in_proc(pgid: libc::pid_t) -> Option<bool> {
    for entry in fs::read_dir("/proc").ok()? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        // Gone in the meantime: not alive.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // "pid (comm) state ppid pgrp ..."; comm may contain anything, so
        // parse after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|f| f.parse::<libc::pid_t>().ok());
        if pgrp == Some(pgid) && !matches!(state, Some("Z" | "X" | "x")) {
            return Some(true);
        }
    }
    Some(false)
}

/// Reaps process `pid` (a child of ours whose `Child` handle is gone).
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer for the call.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `w` until it reports the status, as the run loop does.
    fn status_of(mut w: ExitWatch) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut fds = [pollfd(w.fd())];
            poll(&mut fds, Duration::from_millis(100)).unwrap();
            if fds[0].revents != 0
                && let Some(st) = w.try_status()
            {
                w.close();
                return st.unwrap();
            }
            assert!(Instant::now() < deadline, "no exit status within 20 s");
        }
    }

    #[test]
    fn both_exit_watches_report_the_shells_status_once_it_exits() {
        for pidfd in [true, false] {
            let child = Command::new(SHELL).args(["-c", "sleep 0.2; exit 3"]).spawn().unwrap();
            let pid = child.id();
            let w = ExitWatch::new(child, 0, pidfd).unwrap();
            assert_eq!(matches!(w, ExitWatch::Pidfd { .. }), pidfd && pidfd_open(std::process::id()).is_some());
            // still running: not readable yet
            let mut fds = [pollfd(w.fd())];
            poll(&mut fds, Duration::ZERO).unwrap();
            assert_eq!(fds[0].revents, 0, "pidfd {pidfd}: readable while the shell sleeps");
            assert_eq!(status_of(w).code(), Some(3), "pidfd {pidfd}");
            // reaped: the pid is gone
            assert!(!process_alive(pid), "pidfd {pidfd}: the shell was not reaped");
        }
    }

    #[test]
    fn a_killed_shell_is_reported_by_its_signal() {
        for pidfd in [true, false] {
            let child = Command::new(SHELL).args(["-c", "kill -9 $$"]).spawn().unwrap();
            let st = status_of(ExitWatch::new(child, 0, pidfd).unwrap());
            assert_eq!(st.signal(), Some(libc::SIGKILL), "pidfd {pidfd}");
        }
    }

    #[test]
    fn one_program_with_plain_words_runs_without_the_shell() {
        let words =
            |s: &str| plain_words(s).map(|w| w.iter().map(String::as_str).map(str::to_string).collect::<Vec<_>>());
        let v = |w: &[&str]| Some(w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(words("./prog 5"), v(&["./prog", "5"]));
        assert_eq!(words("  /usr/bin/env  -u X\tA=1 "), v(&["/usr/bin/env", "-u", "X", "A=1"]));
        assert_eq!(
            words(r#"'/opt/my tests/t' --gtest_filter='Suite.*' "a b" c\'d"#),
            v(&["/opt/my tests/t", "--gtest_filter=Suite.*", "a b", "c'd"])
        );
        assert_eq!(words("./t ''"), v(&["./t", ""]));
        // the shell does something more, or decides what runs
        for s in [
            "prog 5",
            "A=1 ./prog",
            "./prog > out",
            "./prog < in",
            "./a | ./b",
            "./a; ./b",
            "./a && ./b",
            "./a &",
            "./prog $HOME",
            "./prog \"$HOME\"",
            "./prog `date`",
            "./prog *",
            "./prog a?",
            "./prog [ab]",
            "./prog ~",
            "~/prog",
            "./prog # comment",
            "./prog (x)",
            "./prog {a,b}",
            "./prog\n./other",
            "./prog 'unterminated",
            "./prog \"unterminated",
            "./prog \\",
            "",
            "   ",
            "'' ./prog",
            "./prög",
        ] {
            assert_eq!(plain_words(s), None, "{s:?}");
        }
    }

    /// Text a shell reads: mostly plain characters and quoted or escaped
    /// pieces, now and then a character the shell treats specially.
    fn shell_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            6 => "[ab/.= \t-]",
            2 => "'[ab \"\\\\$*;\n]*'",
            2 => "\"[ab '$\\\\]*\"",
            2 => "\\\\[ab'\" $*\n]",
            1 => "[#*~;<>|&$\n]",
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]

        /// Invariant **plain_words_are_what_the_shell_makes_of_them**: whenever
        /// `plain_words` answers, `/bin/sh` makes the same words of the text.
        #[test]
        fn plain_words_are_what_the_shell_makes_of_them(rest in shell_text()) {
            let cmd = format!("./x {rest}");
            if let Some(words) = plain_words(&cmd) {
                let out = Command::new(SHELL)
                    .arg("-c")
                    .arg(format!("printf '%s\\0' {cmd}"))
                    .output()
                    .unwrap();
                proptest::prop_assert!(out.status.success(), "{cmd:?}");
                let shell: Vec<String> = String::from_utf8(out.stdout)
                    .unwrap()
                    .split_terminator('\0')
                    .map(str::to_string)
                    .collect();
                proptest::prop_assert_eq!(shell, words, "{:?}", cmd);
            }
        }

        /// What `discover::shell_quote` makes of any words, `plain_words` takes
        /// apart again.
        #[test]
        fn quoted_words_come_apart_again(words in proptest::collection::vec(".{0,8}", 0..4)) {
            let mut all = vec!["./t".to_string()];
            all.extend(words);
            let cmd = all.iter().map(|w| crate::discover::shell_quote(w)).collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(plain_words(&cmd), Some(all));
        }
    }
}
