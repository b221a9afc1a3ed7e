//! `retest run`: runs tests and records each one's outcome and coverage;
//! `--selected` runs only the selected ones and brings every test's coverage
//! up to date (RECOVER).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use retest_engine::run::{Probes, RunReport, RunSettings, run_tests_now, tests_to_run};
use retest_run::partition::Partition;
use serde::Serialize;

use crate::args::{TestSourceArgs, TextOrJson};
use crate::fail::{Fail, OrFail, TESTS_FAILED};
use crate::{junit, progress};

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: TestSourceArgs,
    /// Only tests whose name matches this pattern (`*` and `?` wildcards).
    #[arg(long)]
    pub filter: Option<String>,
    /// List the tests and exit.
    #[arg(long)]
    pub list: bool,
    /// Tests run in parallel (default: the number of CPUs).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Timeout per test in seconds, for tests that set none.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Run one shard of the tests, for CI workers that split the suite:
    /// `hash:K/N` (shard K of N by a stable hash of each test's key — XXH64 —
    /// so a test keeps its shard as others come and go) or `count:K/N`
    /// (round-robin over the tests sorted by key: even shards). Applies after
    /// --filter and --selected. A shard's run makes the build the baseline,
    /// complete once every shard has recorded.
    #[arg(long, value_name = "hash:K/N|count:K/N", value_parser = parse_partition, conflicts_with_all = ["selective_probes", "keep_selective"])]
    pub partition: Option<Partition>,
    /// Run only the tests selected for the change since the baseline, on a build
    /// instrumented only where the change can have an effect, and bring every
    /// test's coverage up to date (RECOVER); the new version becomes the baseline.
    #[arg(long, conflicts_with_all = ["filter", "list"])]
    pub selected: bool,
    /// With --selected: the build command (run with `sh -c`), if `retest build` did not record one.
    #[arg(long, value_name = "CMD", requires = "selected")]
    pub build: Option<String>,
    /// With --selected: leave the selectively instrumented objects in place.
    #[arg(long, requires = "selected")]
    pub keep_selective: bool,
    /// With --selected: run the selected tests on the current, fully
    /// instrumented build, with no rebuild (default: weighed by the recorded
    /// test and build times — the whole suite when it costs little more,
    /// selective instrumentation when it saves more than two rebuilds cost).
    #[arg(long, requires = "selected", conflicts_with = "selective_probes")]
    pub full_probes: bool,
    /// With --selected: always rebuild with selective instrumentation, however few
    /// probes it removes.
    #[arg(long, requires = "selected")]
    pub selective_probes: bool,
    /// `text` for people; `json` (`retest.run/1`, docs/json.md) on stdout for
    /// machines, the summary then going to stderr.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Also write the run as JUnit XML to FILE (replaced atomically), for CI
    /// test reports; with --selected the tests not selected are `<skipped>`.
    #[arg(long, value_name = "FILE", conflicts_with = "list")]
    pub junit: Option<PathBuf>,
}

impl RunArgs {
    fn settings(&self) -> RunSettings {
        RunSettings {
            source: self.source.source(),
            filter: self.filter.clone(),
            jobs: self.jobs,
            timeout: self.timeout,
            build: self.build.clone(),
            keep_selective: self.keep_selective,
            partition: self.partition,
            probes: if self.full_probes {
                Probes::Full
            } else if self.selective_probes {
                Probes::Selective
            } else {
                Probes::Auto
            },
        }
    }
}

pub fn run(store_opt: Option<&Path>, a: RunArgs) -> Result<ExitCode, Fail> {
    // Ctrl-C from here on stops the run at its next check and says so, also
    // while the tests are still being listed or the build is being checked
    let _ = retest_engine::interrupt::flag();
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let cx = progress::context(&progress::RETEST)?;
    let settings = a.settings();
    if let Some(f) = &a.junit {
        junit::check_target(f)?;
    }
    let kind = match (a.selected, &a.filter, a.partition) {
        (true, _, _) => "selected",
        (false, Some(_), _) => "filtered",
        (false, None, Some(_)) => "shard",
        (false, None, None) => "full",
    };
    let suite = junit::Suite::of(&settings.source.resolve(&store), kind);
    let started = std::time::SystemTime::now();
    let report = if a.selected {
        retest_engine::recover::run_selected(&cx, &mut store, &root, &settings)?
    } else {
        let tests = tests_to_run(&mut store, &root, &settings)?;
        if a.list {
            for t in &tests {
                println!("{}\t{}", t.name, t.cmd);
            }
            return Ok(ExitCode::SUCCESS);
        }
        run_tests_now(&cx, &mut store, &root, &settings, &tests)?
    };
    show(&report, a.format)?;
    if let Some(f) = &a.junit {
        junit::write(f, &report, &suite, started)?;
    }
    if let Some(e) = report.error {
        return Err(e);
    }
    if report.summary.stopped {
        return Ok(ExitCode::from(retest_engine::interrupt::EXIT_CODE));
    }
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::from(TESTS_FAILED) })
}

/// `--partition`'s values: the parse error says what is wrong.
fn parse_partition(v: &str) -> Result<Partition, String> {
    v.parse::<Partition>().map_err(|e| e.why)
}

/// `retest.run/1`.
#[derive(Serialize)]
struct JsonRun<'a> {
    schema: &'static str,
    snapshot: i64,
    tests_run: usize,
    passed: usize,
    failed: usize,
    interrupted: bool,
    seconds: f64,
    /// Whether the run made `snapshot` the baseline.
    baseline: bool,
    tests: &'a [retest_engine::run::TestResult],
    conclusion: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    recover: Option<&'a retest_engine::recover::RecoverStats>,
    /// Why the run's result was not kept as asked, if it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn show(r: &RunReport, format: TextOrJson) -> Result<(), Fail> {
    match format {
        TextOrJson::Text => {
            if r.ran_anything {
                print_summary(r, &mut std::io::stdout().lock()).or_fail()?;
            }
            if progress::chatty() {
                for line in &r.conclusion {
                    println!("{line}");
                }
            }
        }
        TextOrJson::Json => {
            if r.ran_anything {
                print_summary(r, &mut std::io::stderr().lock()).or_fail()?;
            }
            let s = &r.summary;
            let doc = JsonRun {
                schema: "retest.run/1",
                snapshot: r.snapshot.0,
                tests_run: s.passed + s.failed.len(),
                passed: s.passed,
                failed: s.failed.len(),
                interrupted: s.stopped,
                seconds: s.elapsed.as_secs_f64(),
                baseline: r.made_baseline,
                tests: &s.results,
                conclusion: &r.conclusion,
                recover: r.stats.as_ref(),
                error: r.error.as_ref().map(|e| e.what.clone()),
            };
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &doc).or_fail()?;
            writeln!(out).or_fail()?;
        }
    }
    Ok(())
}

/// The failed tests and unknowns on stderr, the counts on `out`; with
/// `--quiet` only the failed and stopped tests and the counts.
fn print_summary(r: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    let s = &r.summary;
    let chatty = progress::chatty();
    // a test Ctrl-C stopped did not fail: it did not finish
    let stopped: Vec<&str> = s.results.iter().filter(|t| t.status == "stopped").map(|t| t.name.as_str()).collect();
    for f in s.failed.iter().filter(|f| !stopped.contains(&f.as_str())) {
        eprintln!("FAIL {f}");
    }
    for t in &stopped {
        eprintln!("STOPPED {t}: interrupted before it finished; its coverage is not known until it runs again");
    }
    for (t, why) in s.unknown.iter().filter(|(t, _)| chatty && !stopped.contains(&t.as_str())) {
        eprintln!("coverage unknown for {t}: {why} (it will always be selected)");
    }
    for (t, why) in s.deps_unknown.iter().filter(|_| chatty) {
        eprintln!(
            "dependencies unknown for {t}: {why} (it will always be selected; declare its inputs in retest.toml to change that)"
        );
    }
    let failed = s.failed.len() - stopped.len();
    let unknown = s.unknown.iter().filter(|(t, _)| !stopped.contains(&t.as_str())).count();
    writeln!(
        out,
        "{}/{} tests run in {:.1}s: {} passed, {failed} failed{}{}",
        s.passed + failed,
        r.ran,
        s.elapsed.as_secs_f64(),
        s.passed,
        if unknown == 0 { String::new() } else { format!(", {unknown} with unknown coverage") },
        if s.stopped { format!(", {} stopped (interrupted)", stopped.len()) } else { String::new() }
    )?;
    if r.made_baseline && chatty {
        writeln!(out, "coverage recorded for snapshot {}; it is the baseline for `retest select`", r.snapshot.0)?;
    }
    Ok(())
}
