//! A run: discover the tests, execute them, record each one's outcome and coverage.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use retest_run::discover::{self, TestSpec};
use retest_run::exec::{RunOptions, Status, TestOutcome, run_tests};
use retest_run::partition::Partition;
use retest_run::scratch::TraceRoot;
use retest_store::{Outcome, SnapshotId, Store, TestRecord};

use crate::Context;
use crate::error::{Error, OrFail};
use crate::record::Builds;
use crate::store::MetaKey;

/// Where the tests come from: at most one of these (none: `retest.toml`).
#[derive(Clone, Debug, Default)]
pub struct TestSource {
    /// A universe file: one shell command per line, run from the file's
    /// directory; test N is named tN.
    pub universe: Option<PathBuf>,
    /// A CMake build directory: tests from `ctest --show-only=json-v1`.
    pub ctest: Option<PathBuf>,
    /// A retest.toml (default: retest.toml in the current directory, else in
    /// the project root).
    pub tests: Option<PathBuf>,
}

/// Which probes `retest run --selected` runs the tests on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Probes {
    /// Weighed by the recorded test and build times (`recover::Cycle`): the
    /// whole suite when it costs little more than the tests to rerun;
    /// selective instrumentation when it removes at least a quarter of the
    /// probes and saves the tests more time than two rebuilds cost; the
    /// current, fully instrumented build otherwise.
    #[default]
    Auto,
    /// The current, fully instrumented build, with no rebuild.
    Full,
    /// Always rebuild with selective instrumentation.
    Selective,
}

/// How to run the tests.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    pub source: TestSource,
    /// Only tests whose name matches this glob ([`test_filter`]).
    pub filter: Option<String>,
    /// Tests run in parallel (none: the number of CPUs).
    pub jobs: Option<usize>,
    /// Timeout per test in seconds, for tests that set none.
    pub timeout: Option<f64>,
    /// `run --selected`: the build command (run with `sh -c`), if `retest
    /// build` did not record one.
    pub build: Option<String>,
    /// `run --selected`: leave the selectively instrumented objects in place.
    pub keep_selective: bool,
    /// `run --selected`: which probes.
    pub probes: Probes,
    /// Only this shard of the tests (`--partition`), after every other filter.
    pub partition: Option<Partition>,
}

/// What a run is, as the store records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// The whole suite: its coverage becomes the baseline.
    Full,
    /// Some tests (`--filter`), recorded into the newest snapshot.
    Partial,
    /// One shard of the suite (`--partition`): recorded into the newest
    /// snapshot, which becomes the baseline, complete once every shard has run.
    Shard,
    /// The tests `run --selected` chose (RECOVER).
    Selected,
    /// The whole suite run by `retest audit`, recorded beside the baseline.
    Audit,
    /// The tests `retest audit` runs a second time on the same build, because
    /// their coverage differed from their record in code that did not change
    /// ([`crate::steady`]); recorded in no matrix.
    Recheck,
}

impl RunKind {
    /// The kind as stored in the store's runs (stable).
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Full => "full",
            RunKind::Partial => "partial",
            RunKind::Shard => "shard",
            RunKind::Selected => "selected",
            RunKind::Audit => "audit",
            RunKind::Recheck => "recheck",
        }
    }
}

/// What a run did, for the caller to show.
#[derive(Debug)]
pub struct RunReport {
    pub summary: RunSummary,
    /// Tests run.
    pub ran: usize,
    /// The snapshot the tests ran on.
    pub snapshot: SnapshotId,
    /// Whether the run made `snapshot` the baseline (a full run).
    pub made_baseline: bool,
    /// Whether there is a run to summarise (false: nothing was run).
    pub ran_anything: bool,
    /// What became of the recorded coverage, one line each.
    pub conclusion: Vec<String>,
    /// `run --selected`'s statistics.
    pub stats: Option<crate::recover::RecoverStats>,
    /// The run happened, but its result could not be kept as asked (it was
    /// interrupted, or no test ran the project's code): why, and what to do.
    pub error: Option<Error>,
    /// The tests of the suite this run left out on purpose (`run --selected`:
    /// the tests not selected), in the suite's order.
    pub not_run: Vec<NotRun>,
}

/// A test of the suite that a run did not run, and why.
#[derive(Debug, Clone)]
pub struct NotRun {
    pub name: String,
    pub cmd: String,
    pub why: String,
}

impl NotRun {
    pub fn new(test: &TestSpec, why: String) -> NotRun {
        NotRun { name: test.name.clone(), cmd: test.cmd.clone(), why }
    }
}

impl RunReport {
    pub fn new(summary: RunSummary, ran: usize, snapshot: SnapshotId) -> RunReport {
        RunReport {
            summary,
            ran,
            snapshot,
            made_baseline: false,
            ran_anything: true,
            conclusion: Vec::new(),
            stats: None,
            error: None,
            not_run: Vec::new(),
        }
    }

    pub(crate) fn concluding(mut self, line: String) -> RunReport {
        self.conclusion.push(line);
        self
    }

    pub(crate) fn failed(mut self, error: Error) -> RunReport {
        self.error = Some(error);
        self
    }

    pub(crate) fn leaving_out(mut self, not_run: Vec<NotRun>) -> RunReport {
        self.not_run = not_run;
        self
    }

    pub(crate) fn quiet(mut self) -> RunReport {
        self.ran_anything = false;
        self
    }

    /// Whether every test that ran passed and the run ended as asked.
    pub fn ok(&self) -> bool {
        self.summary.failed.is_empty() && !self.summary.stopped && self.error.is_none()
    }
}

impl TestSource {
    fn is_given(&self) -> bool {
        self.universe.is_some() || self.ctest.is_some() || self.tests.is_some()
    }

    /// `kind\tabsolute path`, as remembered in the store.
    fn remembered(&self) -> Option<String> {
        let (kind, p) = match (&self.universe, &self.ctest, &self.tests) {
            (Some(u), _, _) => ("universe", u),
            (_, Some(c), _) => ("ctest", c),
            (_, _, Some(t)) => ("tests", t),
            _ => return None,
        };
        let abs = std::fs::canonicalize(p).ok()?;
        Some(format!("{kind}\t{}", abs.to_str()?))
    }

    fn from_remembered(v: &str) -> Option<TestSource> {
        let (kind, p) = v.split_once('\t')?;
        let p = Some(PathBuf::from(p));
        match kind {
            "universe" => Some(TestSource { universe: p, ..Default::default() }),
            "ctest" => Some(TestSource { ctest: p, ..Default::default() }),
            "tests" => Some(TestSource { tests: p, ..Default::default() }),
            _ => None,
        }
    }

    /// This source if one was given on the command line, else the one the last
    /// `retest run` used (if it still exists), else the default (retest.toml).
    pub fn resolve(&self, store: &Store) -> TestSource {
        if self.is_given() {
            return self.clone();
        }
        let remembered =
            store.meta(MetaKey::TestSource.name()).ok().flatten().and_then(|v| TestSource::from_remembered(&v));
        match remembered {
            Some(s) if s.universe.iter().chain(&s.ctest).chain(&s.tests).all(|p| p.exists()) => s,
            _ => self.clone(),
        }
    }

    /// Remembers an explicitly given source for later commands.
    pub fn remember(&self, store: &mut Store) -> Result<(), Error> {
        match self.remembered() {
            Some(v) => store.set_meta(MetaKey::TestSource.name(), &v).or_fail(),
            None => Ok(()),
        }
    }
}

/// Discovers the tests of `source`, or of the source the last `retest run` used
/// when none is given (see [`TestSource::resolve`]).
/// A CTest listing is reused while nothing it was made from changed
/// ([`crate::deps::listing_cache`]).
pub fn discover_tests(source: &TestSource, root: &Path, store: &Store) -> Result<Vec<TestSpec>, Error> {
    let listing = crate::deps::listing_cache(source, root, store)?;
    discover_resolved(&source.resolve(store), root, listing.as_ref()).map(|(tests, _)| tests)
}

/// The tests listed, and where a CTest listing came from.
pub type Discovered = (Vec<TestSpec>, Option<retest_run::listing::Listed>);

/// A universe file this long takes longer to read than a thread costs to
/// start: 6,000 lines of short commands, a few milliseconds. (At 1 MiB, a
/// universe of 10^5 short lines was read on the calling thread, 55 ms before
/// the selection's own reads could start.)
const LONG_UNIVERSE: u64 = 64 << 10;

/// [`discover_resolved`] when listing is quick: a `retest.toml`, a short
/// universe file, a CTest listing kept and still holding. `None` when it may
/// take a while (running `ctest`, a long universe file): a caller with other
/// work to do lists on a thread of its own, which otherwise costs more than
/// the listing (a thread, and a heap of fresh pages for it).
pub fn discover_quick(
    source: &TestSource,
    root: &Path,
    listing: Option<&retest_run::listing::ListingCache>,
) -> Option<Result<Discovered, Error>> {
    if let Some(u) = &source.universe
        && std::fs::metadata(u).is_ok_and(|m| m.len() >= LONG_UNIVERSE)
    {
        return None;
    }
    if let Some(d) = &source.ctest {
        return match retest_run::listing::from_ctest_kept(d, listing?)? {
            Ok((tests, listed)) => Some(ctest_listed(d, tests, Some(listed))),
            Err(e) => Some(Err(e).or_fail()),
        };
    }
    Some(discover_resolved(source, root, listing))
}

/// The tests CTest listed in `d`, refused when there are none.
fn ctest_listed(
    d: &Path,
    tests: Vec<TestSpec>,
    listed: Option<retest_run::listing::Listed>,
) -> Result<Discovered, Error> {
    if tests.is_empty() {
        return Err(Error::usage(format!("no tests: CTest lists none in {}", d.display()))
            .hint("check that the build directory is configured with tests (`ctest -N` lists them)"));
    }
    Ok((tests, listed))
}

/// [`discover_tests`] from a source already resolved ([`TestSource::resolve`]):
/// without the store, so that it can run on a thread of its own. A CTest
/// listing comes from `listing` when given and still valid, else from ctest;
/// where it came from is returned with the tests.
pub fn discover_resolved(
    source: &TestSource,
    root: &Path,
    listing: Option<&retest_run::listing::ListingCache>,
) -> Result<Discovered, Error> {
    // an empty suite would make a baseline that selects nothing, whatever the change
    if let Some(u) = &source.universe {
        let tests = discover::from_universe(u).or_fail()?;
        if tests.is_empty() {
            return Err(Error::usage(format!("no tests in {}: it has no non-empty line", u.display()))
                .hint("write one shell command per line, one line per test"));
        }
        return Ok((tests, None));
    }
    if let Some(d) = &source.ctest {
        let (tests, listed) = match listing {
            Some(cache) => {
                let (tests, listed) = retest_run::listing::from_ctest_cached(d, cache).or_fail()?;
                (tests, Some(listed))
            }
            None => (discover::from_ctest(d).or_fail()?, None),
        };
        return ctest_listed(d, tests, listed);
    }
    let toml = match &source.tests {
        Some(t) => t.clone(),
        None => {
            let here = PathBuf::from("retest.toml");
            if here.is_file() { here } else { root.join("retest.toml") }
        }
    };
    if !toml.is_file() {
        return Err(Error::usage(format!("no tests: {} does not exist", toml.display()))
            .hint("add [[test]] tables to retest.toml, or pass --universe FILE or --ctest BUILD_DIR"));
    }
    let tests = discover::from_toml(&toml).or_fail()?;
    if tests.is_empty() {
        return Err(Error::usage(format!("no tests in {}", toml.display()))
            .hint("add [[test]] tables (see `retest init`), or pass --universe FILE or --ctest BUILD_DIR"));
    }
    Ok((tests, None))
}

/// A `--filter` pattern: `*` (any characters, `/` included), `?`, `[…]`,
/// `{a,b}`, matched in time linear in the name (globset).
pub fn test_filter(pat: &str) -> Result<globset::GlobMatcher, Error> {
    globset::GlobBuilder::new(pat)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| Error::usage(format!("--filter `{pat}`: {e}")).hint("use `*` and `?` as wildcards"))
}

/// The stored form of a test's outcome.
pub fn outcome_of(o: &TestOutcome) -> Outcome {
    let (status, code) = match &o.status {
        Status::Passed => ("pass", Some(0)),
        Status::Failed { code } => ("fail", Some(*code)),
        Status::Signaled { signal } => ("signal", Some(*signal)),
        Status::TimedOut => ("timeout", None),
        Status::SpawnFailed { .. } => ("error", None),
        Status::Stopped => ("stopped", None),
    };
    Outcome {
        status: status.to_string(),
        code,
        stdout_hash: Some(o.stdout_hash),
        stderr_hash: Some(o.stderr_hash),
        duration: o.duration,
    }
}

/// One test's result, as a run reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TestResult {
    pub name: String,
    /// `pass`, `fail`, `signal`, `timeout`, `error` (could not start) or `stopped`.
    pub status: String,
    /// The exit code (`fail`) or signal number (`signal`).
    pub code: Option<i32>,
    pub seconds: f64,
    /// Why the test's coverage is unknown (it is then always selected).
    pub coverage_unknown: Option<String>,
    /// Why the files the test depends on are unknown (it is then always selected).
    pub dependencies_unknown: Option<String>,
    /// Its command line (not in `retest.run/1`: `retest run --list` shows it).
    #[serde(skip)]
    pub cmd: String,
}

impl TestResult {
    pub(crate) fn new(test: &TestSpec, e: &Executed) -> TestResult {
        let o = outcome_of(&e.outcome);
        TestResult {
            name: test.name.clone(),
            cmd: test.cmd.clone(),
            status: o.status,
            code: o.code,
            seconds: o.duration.as_secs_f64(),
            coverage_unknown: e.coverage.as_ref().err().cloned(),
            dependencies_unknown: e.deps.unknown.clone(),
        }
    }
}

/// Summary of a run.
#[derive(Default, Debug, Clone)]
pub struct RunSummary {
    /// Every test that ran, in the suite's order.
    pub results: Vec<TestResult>,
    pub passed: usize,
    pub failed: Vec<String>,
    pub unknown: Vec<(String, String)>,
    /// Tests whose file dependencies are unknown, with why.
    pub deps_unknown: Vec<(String, String)>,
    pub elapsed: Duration,
    pub stopped: bool,
    /// Tests the run was to run but never started: it was interrupted first.
    pub not_started: Vec<NotRun>,
}

/// One test's result as `execute` returns it.
pub struct Executed {
    pub outcome: TestOutcome,
    /// The coverage recorded, or why it is unknown.
    pub coverage: Result<crate::record::TestCoverage, String>,
    /// The test ran no instrumented code (its coverage is empty, or unknown
    /// for that reason).
    pub no_code: bool,
    /// Its definition and the files it read (`crate::deps`).
    pub deps: retest_store::TestDeps,
}

/// Runs `tests` on `snapshot`'s build, recording each result — into `matrix`'s
/// coverage when given — in its own transaction as soon as the test finishes, so
/// an interrupted run keeps every finished test.
#[allow(clippy::too_many_arguments)]
pub fn execute(
    cx: &Context,
    store: &mut Store,
    snapshot: SnapshotId,
    matrix: Option<SnapshotId>,
    kind: RunKind,
    tests: &[TestSpec],
    jobs: Option<usize>,
    timeout: Option<f64>,
) -> Result<(retest_store::RunId, Vec<Executed>, RunSummary), Error> {
    let names: Vec<retest_store::TestName> = tests
        .iter()
        .map(|t| retest_store::TestName { key: t.key.clone(), name: t.name.clone(), cmd: t.cmd.clone() })
        .collect();
    let ids = store.upsert_tests_named(&names).or_fail()?;
    let run = store.begin_run(snapshot, kind.name()).or_fail()?;
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let half: Vec<String> = crate::writing::abandoned(&store_dir)
        .into_iter()
        .flat_map(|a| a.files)
        .filter(|f| f.is_file())
        .map(|f| f.display().to_string())
        .collect();
    if !half.is_empty() {
        cx.reporter.warn(&format!(
            "a build was interrupted while writing {} — the tests may run on half-written files; `retest build` makes them again",
            half.join(", ")
        ));
    }
    let store_dir = std::fs::canonicalize(&store_dir).unwrap_or(store_dir);
    let unrecorded = UnrecordedWatch::start(&store_dir);
    let scratch = TraceRoot::choose(&store_dir.join("tmp")).or_fail()?;
    let trace_root = scratch.path().to_path_buf();
    let root = store_dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut tracking = crate::deps::Tracking::start(cx, store, &root, snapshot, &trace_root)?;
    let stop = crate::interrupt::flag();
    let opts = RunOptions {
        jobs: jobs.unwrap_or(0),
        default_timeout: timeout.map(Duration::from_secs_f64),
        trace_root: trace_root.clone(),
        extra_env: Vec::new(),
        preload: tracking.preload(),
        stop: stop.clone(),
        groups: Default::default(),
    };
    let pb = cx.reporter.progress(tests.len() as u64, "running");
    let started = Instant::now();
    let mut builds = Builds::new(store, snapshot).or_fail()?;
    // read before any result of this run replaces a row of it
    let ran_code_before = store.tests_that_ran_code().or_fail()?;
    if matrix.is_none() && kind == RunKind::Selected {
        builds = builds.allow_selective();
    }
    let (tx, rx) = mpsc::channel::<TestOutcome>();
    let mut results: Vec<Executed> = Vec::new();
    let runner_result = std::thread::scope(|scope| -> Result<(), Error> {
        let opts = &opts;
        let runner = scope.spawn(move || {
            let tx = tx;
            run_tests(tests, opts, &|_| {}, &|o: TestOutcome| {
                let _ = tx.send(o);
            })
        });
        // the channel closes when the runner returns and drops its sender
        for o in rx.iter() {
            let id = ids[o.index];
            // taken whatever the status, so the test's own reports are consumed
            let lost = unrecorded.take(o.group, o.started_at, &opts.groups);
            // read once: for the check below and for the coverage
            let traces = retest_run::trace::read_dir(&o.trace_dir);
            let names: Vec<&str> = traces.as_ref().map(|t| t.file_names().collect()).unwrap_or_default();
            let gone = unrecorded.missing_trace(o.group, &names);
            let lost = lost.or(gone);
            let coverage = match &o.status {
                Status::TimedOut => Err("the test timed out".to_string()),
                Status::Stopped => Err("the run was interrupted".to_string()),
                Status::SpawnFailed { message } => Err(format!("the test could not start: {message}")),
                _ => match lost {
                    Some(why) => Err(why),
                    None => builds.coverage(store, &traces, o.lingering),
                },
            };
            let no_code = coverage.as_ref().is_ok_and(|c| c.edges.is_empty());
            let coverage = match coverage {
                Ok(c) if no_code => match ran_no_code(&o.status, ran_code_before.contains(&id)) {
                    Some(why) => Err(why),
                    None => Ok(c),
                },
                other => other,
            };
            // what it read, before its trace directory goes
            let deps = tracking.record(store, &tests[o.index], &o.trace_dir)?;
            let _ = std::fs::remove_dir_all(&o.trace_dir);
            let rec = TestRecord {
                test: id,
                outcome: outcome_of(&o),
                coverage: coverage.as_ref().map(|c| c.edges.clone()).map_err(Clone::clone),
                recorded: coverage.as_ref().map(|c| c.recorded.clone()).unwrap_or_default(),
                deps: Some(deps.clone()),
                stopped: coverage.as_ref().is_ok_and(|c| c.stopped),
            };
            store.record_result(run, matrix, &rec).or_fail()?;
            cx.reporter.detail(&finished(&tests[o.index].name, &rec.outcome, coverage.as_ref().err()));
            pb.inc(1);
            results.push(Executed { outcome: o, coverage, no_code, deps });
        }
        runner.join().map_err(|_| Error::new("the test runner panicked"))?.or_fail()
    });
    pb.finish();
    drop(scratch);
    for u in unrecorded.finish() {
        cx.reporter.warn(&format!(
            "pid {} ({}) ran instrumented code without a usable RETEST_TRACE_DIR during the run, outside every test's process group and while no test ran; its coverage is not recorded",
            u.pid,
            shown_command(&u.command)
        ));
    }
    runner_result?;
    store.finish_run(run, matrix).or_fail()?;
    let mut s = RunSummary { elapsed: started.elapsed(), stopped: stop.load(Ordering::SeqCst), ..Default::default() };
    results.sort_by_key(|r| r.outcome.index);
    let started: std::collections::HashSet<usize> = results.iter().map(|r| r.outcome.index).collect();
    s.not_started = (0..tests.len())
        .filter(|i| !started.contains(i))
        .map(|i| NotRun::new(&tests[i], "not run: the run was interrupted (Ctrl-C) before it started".to_string()))
        .collect();
    for r in &results {
        let name = tests[r.outcome.index].name.clone();
        s.results.push(TestResult::new(&tests[r.outcome.index], r));
        match r.outcome.status {
            Status::Passed => s.passed += 1,
            _ => s.failed.push(name.clone()),
        }
        if let Some(why) = &r.deps.unknown {
            s.deps_unknown.push((name.clone(), why.clone()));
        }
        if let Err(why) = &r.coverage {
            s.unknown.push((name, why.clone()));
        }
    }
    Ok((run, results, s))
}

/// `NAME: STATUS in S s`, for `--verbose`.
fn finished(name: &str, o: &Outcome, coverage_unknown: Option<&String>) -> String {
    let status = match (o.status.as_str(), o.code) {
        ("fail", Some(c)) => format!("fail (exit code {c})"),
        ("signal", Some(s)) => format!("fail (signal {s})"),
        (s, _) => s.to_string(),
    };
    let unknown = coverage_unknown.map(|why| format!("; coverage unknown: {why}")).unwrap_or_default();
    format!("{name}: {status} in {:.3} s{unknown}", o.duration.as_secs_f64())
}

/// Why the coverage of a test that ran no instrumented code is unknown rather
/// than empty, if it is: a test that failed without reaching the project's code
/// (its command was not found, the program did not link, is missing or is not
/// executable) or one that passed without running it where the last run that
/// recorded its coverage did. Recorded as covering nothing, it would never be
/// selected again, however the program changes once it is there.
fn ran_no_code(status: &Status, ran_code_before: bool) -> Option<String> {
    match status {
        Status::Failed { code: code @ (126 | 127) } => Some(format!(
            "its command was not found or could not be executed (exit {code}) and it ran no instrumented code — fix the command (its output says which), then `retest run`"
        )),
        Status::Failed { code } => Some(format!(
            "it failed (exit {code}) without running any instrumented code — is the program built? (a failed link, a missing or stale executable)"
        )),
        Status::Signaled { signal } => {
            Some(format!("it was killed by signal {signal} without running any instrumented code"))
        }
        Status::Passed if ran_code_before => Some(
            "it ran no instrumented code, where the last run that recorded its coverage did — is the program built? (a failed link, a missing executable, a program built without the wrapper)"
                .to_string(),
        ),
        _ => None,
    }
}

/// Processes that ran instrumented code without `RETEST_TRACE_DIR`.
///
/// While a run lasts, `<store>/unrecorded` exists and the runtime of every
/// image that registers instrumented code without the variable reports itself
/// there (docs/trace-format.md, `RETEST_RT_UNRECORDED`), named by its process
/// group. Such a test would otherwise look like one that ran no instrumented
/// code and never be selected; instead its coverage is unknown. A report from
/// outside the test's group (a process that called `setsid`) made while the
/// test ran makes it unknown too: it may be the test's. Each run marks itself
/// with `.run-<pid>`; the last one to finish removes the directory, so
/// programs run outside `retest run` pay one failed `open` and leave nothing.
struct UnrecordedWatch {
    dir: PathBuf,
    me: PathBuf,
    /// Reports from outside a test's group already charged to some test.
    charged: std::cell::RefCell<std::collections::HashSet<PathBuf>>,
    /// How far `.images` has been read, and the images read but not yet
    /// checked, by process group.
    images: std::cell::RefCell<(u64, std::collections::HashMap<u32, Vec<String>>)>,
}

impl UnrecordedWatch {
    fn start(store_dir: &Path) -> UnrecordedWatch {
        let dir = store_dir.join(retest_run::trace::UNRECORDED_DIR);
        let me = dir.join(format!(".run-{}", std::process::id()));
        // marked first, then cleaned: two runs starting at once (shards of one
        // store) each see the other, and neither removes the other's mark
        // (without the directory nothing is reported: the run is as before)
        let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&me, b""));
        // what a killed run left is stale: its groups may come again
        if !other_runs_alive(&dir) {
            remove_reports(&dir, Some(&me));
        }
        UnrecordedWatch { dir, me, charged: Default::default(), images: Default::default() }
    }

    /// Why the coverage of the test that ran in process group `group` from
    /// `started` until now is unknown, if a process of it, or one outside the
    /// group of every test spawned so far (`tests`) while it ran, reported.
    /// Reports of its own group are consumed.
    fn take(
        &self,
        group: u32,
        started: std::time::SystemTime,
        tests: &std::sync::Mutex<std::collections::HashSet<u32>>,
    ) -> Option<String> {
        if group == 0 {
            return None;
        }
        let reports = retest_run::trace::read_unrecorded(&self.dir);
        if reports.is_empty() {
            return None;
        }
        let (mine, others): (Vec<_>, Vec<_>) = reports.into_iter().partition(|u| u.group == group);
        // reports of other tests (finished but not yet recorded, or running)
        // are theirs; a group that belongs to no test is outside every test
        let others: Vec<_> = match tests.lock() {
            Ok(t) => others.into_iter().filter(|u| !t.contains(&u.group)).collect(),
            Err(_) => others,
        };
        for u in &mine {
            let _ = std::fs::remove_file(&u.path);
        }
        if let Some(u) = mine.first() {
            return Some(format!(
                "a process of the test (pid {}: {}) ran instrumented code without a usable RETEST_TRACE_DIR (removed from its environment by `env -i` or the test harness, or changed to a directory it cannot write), so its coverage was not recorded — let the variable through",
                u.pid,
                shown_command(&u.command)
            ));
        }
        // file times lag the clock by up to a scheduler tick: allow a little
        let since = started.checked_sub(Duration::from_millis(50)).unwrap_or(started);
        let during = others
            .iter()
            .find(|u| std::fs::metadata(&u.path).and_then(|m| m.modified()).map(|t| t >= since).unwrap_or(true))?;
        self.charged.borrow_mut().insert(during.path.clone());
        Some(format!(
            "a process outside the test's process group (pid {}: {}) ran instrumented code without a usable RETEST_TRACE_DIR while the test ran; it may be the test's (one that called setsid), and its coverage was not recorded",
            during.pid,
            shown_command(&during.command)
        ))
    }

    /// Why the coverage of the test that ran in process group `group` is
    /// unknown, if an image of it that the runtime logged in `.images` left
    /// neither a trace nor a live marker among `names`, the files of its trace
    /// directory (the test removed them).
    fn missing_trace(&self, group: u32, names: &[&str]) -> Option<String> {
        let mut images = self.images.borrow_mut();
        let (offset, pending) = &mut *images;
        if let Ok(mut f) = std::fs::File::open(self.dir.join(retest_run::trace::IMAGES_LOG)) {
            use std::io::{Read, Seek};
            let mut buf = Vec::new();
            if f.seek(std::io::SeekFrom::Start(*offset)).is_ok() && f.read_to_end(&mut buf).is_ok() {
                // complete lines only: a line being written is read next time
                let end = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                *offset += end as u64;
                for line in String::from_utf8_lossy(&buf[..end]).lines() {
                    if let Some((g, stem)) = line.split_once(' ')
                        && let Ok(g) = g.parse::<u32>()
                    {
                        pending.entry(g).or_default().push(stem.to_string());
                    }
                }
            }
        }
        let stems = pending.remove(&group)?;
        let present: Vec<String> = names
            .iter()
            .filter_map(|n| match retest_abi::trace::FileName::parse(n)? {
                retest_abi::trace::FileName::Trace { pid, nonce, .. }
                | retest_abi::trace::FileName::Live { pid, nonce } => Some(format!("{pid}-{nonce}")),
            })
            .collect();
        let gone = stems.iter().find(|stem| !present.contains(stem))?;
        Some(format!(
            "the trace of a process of the test (pid {}) is missing from its trace directory — did the test delete files in $RETEST_TRACE_DIR?",
            gone.split('-').next().unwrap_or(gone)
        ))
    }

    /// Ends this run's watch: the reports no test was charged with (programs
    /// run beside the run). The directory goes when no other run on this store
    /// is alive.
    fn finish(self) -> Vec<retest_run::trace::Unrecorded> {
        let charged = self.charged.into_inner();
        let left: Vec<_> =
            retest_run::trace::read_unrecorded(&self.dir).into_iter().filter(|u| !charged.contains(&u.path)).collect();
        let _ = std::fs::remove_file(&self.me);
        if !other_runs_alive(&self.dir) {
            // a run that marked itself meanwhile keeps the directory
            remove_reports(&self.dir, None);
            let _ = std::fs::remove_dir(&self.dir);
        }
        left
    }
}

/// Removes the reports in `dir` (and the marks of runs no longer alive),
/// keeping `keep` and the marks of live runs.
fn remove_reports(dir: &Path, keep: Option<&Path>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if Some(p.as_path()) == keep {
            continue;
        }
        let name = e.file_name();
        let live = name
            .to_str()
            .and_then(|n| n.strip_prefix(".run-"))
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(retest_run::exec::process_alive);
        if !live {
            let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        }
    }
}

/// Whether a `retest run` other than this one marked itself in `dir` and lives.
fn other_runs_alive(dir: &Path) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        e.file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(".run-"))
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && retest_run::exec::process_alive(pid))
    })
}

fn shown_command(command: &[String]) -> String {
    if command.is_empty() { "command line unknown".to_string() } else { command.join(" ") }
}

/// The tests of `a.source` that `a.filter` and `a.partition` keep.
pub fn tests_to_run(store: &mut Store, root: &Path, a: &RunSettings) -> Result<Vec<TestSpec>, Error> {
    let mut tests = discover_tests(&a.source, root, store)?;
    a.source.remember(store)?;
    if let Some(f) = &a.filter {
        let m = test_filter(f)?;
        tests.retain(|t| m.is_match(&t.name));
        if tests.is_empty() {
            return Err(Error::usage(format!("no test matches `{f}`")).hint("`retest run --list` shows the test names"));
        }
    }
    if let Some(p) = &a.partition {
        // an empty shard is no error: a small suite over many workers leaves some idle
        tests = p.select(&tests, |t| t.key.as_str());
    }
    Ok(tests)
}

/// The ids of the tests of `suite`, registering those the store does not
/// know yet (a new test another shard runs is part of the suite too).
pub(crate) fn suite_ids(store: &mut Store, suite: &[TestSpec]) -> Result<Vec<retest_store::TestId>, Error> {
    let names: Vec<retest_store::TestName> = suite
        .iter()
        .map(|t| retest_store::TestName { key: t.key.clone(), name: t.name.clone(), cmd: t.cmd.clone() })
        .collect();
    store.upsert_tests_named(&names).or_fail()
}

/// Why a test of the suite is not in shard `p`, for reports that list every test.
pub(crate) fn not_in_shard<'a>(left_out: impl Iterator<Item = &'a TestSpec>, p: &Partition) -> Vec<NotRun> {
    left_out.map(|t| NotRun::new(t, format!("not in shard {p}: another worker runs it"))).collect()
}

/// `retest run`: runs `tests` (the suite, or the part `a.filter` or
/// `a.partition` keeps) on the newest build and records their coverage; the
/// whole suite's becomes the baseline, and so does a shard's (complete once
/// every shard has recorded its tests).
pub fn run_tests_now(
    cx: &Context,
    store: &mut Store,
    root: &Path,
    a: &RunSettings,
    tests: &[TestSpec],
) -> Result<RunReport, Error> {
    let snapshot = store.newest_snapshot().or_fail()?.ok_or_else(|| {
        Error::new("nothing has been built with the wrapper yet")
            .hint("run `retest build -- make` (or `CC=\"retest cc\" make`) first")
    })?;
    // coverage recorded against a snapshot without units would be empty for every
    // test, and no later change could select one
    if store.snapshot_units(snapshot.id).or_fail()?.is_empty() {
        return Err(Error::new(format!("snapshot {} holds no translation unit built with the wrapper", snapshot.id.0))
            .hint("rebuild from clean so every source goes through the wrapper (`make clean`, then `retest build -- make`)"));
    }
    let full = a.filter.is_none();
    let kind = match (full, a.partition) {
        (true, None) => RunKind::Full,
        (true, Some(_)) => RunKind::Shard,
        (false, _) => RunKind::Partial,
    };
    // a shard (or a filter) needs the whole suite: what the baseline is to cover
    let suite = match kind {
        RunKind::Full => tests.to_vec(),
        _ => discover_tests(&a.source, root, store)?,
    };
    // every test of the suite registered first, in its order: a shard's
    // store numbers the tests as one worker's does
    let ids = suite_ids(store, &suite)?;
    let (_, results, s) = execute(cx, store, snapshot.id, Some(snapshot.id), kind, tests, a.jobs, a.timeout)?;
    let mut report = RunReport::new(s, tests.len(), snapshot.id);
    if let Some(p) = &a.partition {
        let mine: std::collections::HashSet<&str> = tests.iter().map(|t| t.key.as_str()).collect();
        report = report.leaving_out(not_in_shard(suite.iter().filter(|t| !mine.contains(t.key.as_str())), p));
    }
    let s = &report.summary;
    // a baseline in which no test ran the project's code selects nothing
    // whatever the change: the program was not there (a failed link, a broken
    // build) or the tests run another one. (A shard that ran no test leaves
    // the baseline to the others.)
    if full && !s.stopped && results.iter().all(|r| r.no_code) && !(kind == RunKind::Shard && results.is_empty()) {
        let why = match s.unknown.first() {
            Some((t, why)) => format!("{t}: {why}"),
            None => "every test passed without running any of it".to_string(),
        };
        let error = Error::new(format!(
            "no test ran instrumented code ({why}), so snapshot {} is not made the baseline",
            snapshot.id.0
        ))
        .hint("build the program with the wrapper (`retest build -- make`), check that the tests run it, then `retest run`");
        return Ok(report.failed(error));
    }
    let stopped = s.stopped;
    if full && !stopped {
        // the suite is what ran (or what the shards run): tests that left it
        // leave the matrix
        store.make_baseline(snapshot.id, &ids).or_fail()?;
        report.made_baseline = true;
        if let Some(p) = &a.partition {
            let missing = store.missing_tests(snapshot.id).or_fail()?.map_or(0, |m| m.len());
            let line = if missing == 0 {
                format!(
                    "shard {p}: coverage of {} of {} tests recorded; every test of the suite has a record: snapshot {} is a complete baseline",
                    tests.len(),
                    suite.len(),
                    snapshot.id.0
                )
            } else {
                format!(
                    "shard {p}: coverage of {} of {} tests recorded for snapshot {}, the baseline; {missing} tests of the suite have no record yet (the other shards), and `retest select` selects them until they do",
                    tests.len(),
                    suite.len(),
                    snapshot.id.0
                )
            };
            report = report.concluding(line);
        }
    }
    if !full && !stopped {
        let all = suite.len();
        let baseline = store.baseline().or_fail()?;
        let line = if baseline == Some(snapshot.id) {
            format!("coverage of {} of {all} tests updated in the baseline (snapshot {})", tests.len(), snapshot.id.0)
        } else {
            let now = match baseline {
                Some(b) => format!("selection still compares against snapshot {}", b.0),
                None => "there is no baseline yet".to_string(),
            };
            format!(
                "coverage of {} of {all} tests recorded for snapshot {}, which is not the baseline: --filter ran only some tests ({now}); `retest run` without --filter makes it the baseline",
                tests.len(),
                snapshot.id.0
            )
        };
        report = report.concluding(line);
    }
    Ok(report)
}

#[cfg(test)]
mod filter_tests {
    use super::test_filter;

    #[test]
    fn filters_match_like_shell_globs() {
        let m = |p: &str, s: &str| test_filter(p).unwrap().is_match(s);
        assert!(m("t*", "t12") && m("t?", "t1") && !m("t?", "t12"));
        assert!(m("ninja_test/*.Restat*", "ninja_test/BuildTest.RestatDepfile"));
        assert!(m("t[12]", "t2") && !m("t[12]", "t3"));
        assert!(test_filter("t[").is_err());
    }

    /// `*a*a*…*b` against a long name of `a`s took seconds with backtracking
    /// (6.7 s for eight `*a` against 40 characters, 71 s for ten); compiled
    /// and matched as a glob, twenty `*a` against 100 characters take well
    /// under 10 ms (the best of five, so a busy machine does not decide).
    #[test]
    fn many_stars_take_linear_time() {
        let pat = format!("{}b", "*a".repeat(20));
        let name = "a".repeat(100);
        let best = (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                assert!(!test_filter(&pat).unwrap().is_match(&name));
                t.elapsed()
            })
            .min()
            .unwrap();
        assert!(best < std::time::Duration::from_millis(10), "{best:?}");
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::time::{Duration, SystemTime};

    use super::UnrecordedWatch;

    /// A universe of 10^5 short commands (a fleet's scale, under 1 MiB) is
    /// listed on a thread of its own, while the selection reads the store;
    /// one of a few hundred lines is read at once, the same tests.
    #[test]
    fn a_long_universe_of_short_lines_is_listed_on_a_thread() {
        let d = tempfile::tempdir().unwrap();
        let (long, short) = (d.path().join("long.txt"), d.path().join("short.txt"));
        let lines = |n: usize| (0..n).map(|i| format!("./t {i}\n")).collect::<String>();
        std::fs::write(&long, lines(100_000)).unwrap();
        std::fs::write(&short, lines(300)).unwrap();
        assert!(std::fs::metadata(&long).unwrap().len() < 1 << 20);
        let source = |u: &std::path::Path| super::TestSource { universe: Some(u.to_path_buf()), ..Default::default() };
        assert!(super::discover_quick(&source(&long), d.path(), None).is_none(), "long: on a thread");
        let (quick, _) = super::discover_quick(&source(&short), d.path(), None).expect("short: at once").unwrap();
        let (listed, _) = super::discover_resolved(&source(&short), d.path(), None).unwrap();
        assert_eq!(quick.len(), 300);
        assert_eq!(quick, listed);
    }

    fn report(w: &UnrecordedWatch, group: u32, pid: u32, command: &str) {
        std::fs::write(w.dir.join(format!("{group}-{pid}-00000000000000ab")), format!("{command}\0")).unwrap();
    }

    /// A test is charged with the reports of its own group, and with a report
    /// from a group that belongs to no test of the run made while it ran; never
    /// with another test's report, even one the recorder has not reached yet.
    #[test]
    fn reports_are_charged_to_their_own_test_or_to_the_tests_that_ran_beside_them() {
        let store = tempfile::tempdir().unwrap();
        let w = UnrecordedWatch::start(store.path());
        let tests = Mutex::new(HashSet::from([100, 200, 300]));
        let long_ago = SystemTime::now() - Duration::from_secs(3600);
        report(&w, 200, 201, "./later-test");
        let why = w.take(200, long_ago, &tests).unwrap();
        assert!(why.contains("pid 201: ./later-test"), "{why}");
        assert!(w.take(200, long_ago, &tests).is_none(), "consumed");

        report(&w, 300, 301, "./other-test");
        assert!(w.take(100, long_ago, &tests).is_none(), "another test's report is its own");
        report(&w, 900, 900, "./daemon");
        let why = w.take(100, long_ago, &tests).unwrap();
        assert!(why.contains("outside the test's process group (pid 900: ./daemon)"), "{why}");
        // a test that started after the report is not charged
        assert!(w.take(100, SystemTime::now() + Duration::from_secs(5), &tests).is_none());
        // the other test still takes its own; the charged report is no warning
        assert!(w.take(300, long_ago, &tests).unwrap().contains("./other-test"));
        assert!(w.finish().is_empty());
        assert!(!store.path().join(retest_run::trace::UNRECORDED_DIR).exists());
    }

    /// Another run on the store (here: a mark of a live process, pid 1) keeps
    /// what it relies on: a run starting or ending beside it removes neither
    /// its mark nor the reports its tests may be charged with.
    #[test]
    fn a_run_beside_another_leaves_the_others_mark_and_reports() {
        let store = tempfile::tempdir().unwrap();
        let dir = store.path().join(retest_run::trace::UNRECORDED_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".run-1"), "").unwrap();
        std::fs::write(dir.join("700-701-00000000000000ab"), "./its-test\0").unwrap();
        let w = UnrecordedWatch::start(store.path());
        assert!(dir.join(".run-1").exists() && dir.join("700-701-00000000000000ab").exists());
        w.finish();
        assert!(dir.join(".run-1").exists() && dir.join("700-701-00000000000000ab").exists());
        // once the other run is gone, the next run cleans up
        std::fs::remove_file(dir.join(".run-1")).unwrap();
        let w = UnrecordedWatch::start(store.path());
        assert!(!dir.join("700-701-00000000000000ab").exists());
        w.finish();
        assert!(!dir.exists());
    }

    /// A report nobody was charged with (made while no test ran) is left for
    /// the warning; what a killed run left behind is gone at the next start.
    #[test]
    fn a_report_no_test_was_charged_with_is_left_for_a_warning() {
        let store = tempfile::tempdir().unwrap();
        let stale = store.path().join(retest_run::trace::UNRECORDED_DIR);
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::write(stale.join("700-700-00000000000000ab"), "./from-a-killed-run\0").unwrap();
        std::fs::write(stale.join(".run-999999999"), "").unwrap();
        let w = UnrecordedWatch::start(store.path());
        assert!(!stale.join("700-700-00000000000000ab").exists());
        report(&w, 900, 900, "./by-hand");
        let left = w.finish();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].pid, left[0].command.clone()), (900, vec!["./by-hand".to_string()]));
    }
}
