//! `retest run --selected`: run only the selected tests and still end with the
//! coverage matrix a full rerun would give (RECOVER, 004 §3).
//!
//! 1. select (MOD-DejaVu: tests T′, change set, matched pairs → `entityMap`);
//! 2. plan the selective instrumentation and rebuild the affected units with it
//!    (their objects are removed, the recorded build command runs; it also runs
//!    when the last build did not finish, and first removes what an interrupted
//!    build left half written: `crate::writing`);
//! 3. run T′ on that build (and, when it is selective, the tests stopped
//!    part-way — in this run or the old one — on the build made full again);
//! 4. recompute the matrix: measured entities from the run, every other entry
//!    transferred from the old matrix through `entityMap`;
//! 5. write the matrix, seal the new snapshot and make it the baseline — one
//!    transaction, so an interruption anywhere before leaves the old baseline;
//! 6. rebuild the affected units with full instrumentation again (unless
//!    `--keep-selective`), so the next build and run see ordinary objects.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use retest_cover::plan::RecordOptions;
use retest_cover::recover::{EntityMap, RecordedTransfer, TestInput, must_rerun, recompute, selective_probes};
use retest_graph::coverage::{Probe, measured_edges};
use retest_lang_c::instrument::full_plan;
use retest_run::discover::TestSpec;
use retest_run::exec::Status;
use retest_store::{CoverageState, MatrixRow, Recorded, RunId, Store, UnitId};
use roaring::RoaringBitmap;

use crate::Context;
use crate::build::{run_build, run_build_keeping};
use crate::error::{Error, OrFail};
use crate::previous::Previous;
use crate::run::{Probes, RunKind, RunReport, RunSettings, RunSummary, discover_tests, execute};
use crate::select::{Algorithm, SelectOptions, compute};
use crate::store::MetaKey;
use retest_abi::hex;

/// The recording options `retest build` was last run with.
fn recorded_options(store: &Store) -> RecordOptions {
    crate::store::build_command(store).ok().flatten().map(|c| c.record).unwrap_or_default()
}

/// The build command: `--build CMD` (run with `sh -c`), else the one `retest build` recorded.
fn build_command(store: &Store, explicit: Option<&str>, root: &Path) -> Result<(Vec<String>, PathBuf), Error> {
    if let Some(cmd) = explicit {
        return Ok((vec!["sh".into(), "-c".into(), cmd.to_string()], std::env::current_dir().or_fail()?));
    }
    let rec = crate::store::build_command(store)?.ok_or_else(|| {
        Error::new("no build command is recorded").hint("build once with `retest build -- CMD`, or pass --build CMD")
    })?;
    let argv = rec.argv;
    let cwd = if rec.cwd.as_os_str().is_empty() { root.to_path_buf() } else { rec.cwd };
    if argv.is_empty() {
        return Err(Error::new("the recorded build command is empty").hint("pass --build CMD"));
    }
    Ok((argv, cwd))
}

/// The object a unit key names (`src@obj`), if any.
fn output_path(root: &Path, key: &str) -> Option<PathBuf> {
    let (_, out) = key.rsplit_once('@')?;
    (out != "-").then(|| if Path::new(out).is_absolute() { PathBuf::from(out) } else { root.join(out) })
}

/// Removes the object a unit key names (`src@obj`), so the build recompiles it.
pub fn remove_output(root: &Path, key: &str) {
    if let Some(p) = output_path(root, key) {
        let _ = std::fs::remove_file(p);
    }
}

/// Rebuilds (recompiling the objects of `stale`) so that, interrupted or
/// failed, the previous build is left as it was: its files are kept aside
/// until the build has finished and then put back (`crate::previous`), and
/// what the build recorded in the store is undone — the units of the new
/// snapshot, the pending selective plans, the mark of a running build.
#[allow(clippy::too_many_arguments)]
fn rebuild_keeping_previous(
    cx: &Context,
    store: &mut Store,
    root: &Path,
    stale: &[&str],
    argv: &[String],
    cwd: &Path,
    snapshot: retest_store::SnapshotId,
    plans_before: Option<String>,
    what: &str,
    baseline: retest_store::SnapshotId,
) -> Result<(), Error> {
    let stop = crate::interrupt::flag();
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let units_before = store.snapshot_units(snapshot).or_fail()?;
    let running_before = store.meta(MetaKey::BuildRunning.name()).or_fail()?;
    let previous = Previous::begin(&store_dir).or_fail()?;
    let mut kept = Ok(());
    for k in stale {
        if let Some(p) = output_path(root, k) {
            kept = kept.and(previous.keep(&p));
        }
    }
    let built = match kept {
        Ok(()) => run_build_keeping(cx, store, argv, cwd, recorded_options(store), Some(previous.dir())),
        Err(e) => Err(Error::new(format!("cannot keep the previous build's objects aside: {e}"))),
    };
    let succeeded = matches!(&built, Ok(status) if status.success());
    let interrupted = crate::interrupt::came(&stop, !succeeded);
    if succeeded && !interrupted {
        previous.discard();
        return Ok(());
    }
    // the previous build, as it was
    let restored = previous.restore().or_fail_hint("the previous build could not be put back; run `retest build`")?;
    crate::writing::forget_restored(&store_dir, &restored);
    let keys: std::collections::HashSet<&str> = units_before.iter().map(|u| u.key.as_str()).collect();
    for u in store.snapshot_units(snapshot).or_fail()? {
        if !keys.contains(u.key.as_str()) {
            store.forget_unit(snapshot, &u.key).or_fail()?;
        }
    }
    for u in &units_before {
        store.record_unit(snapshot, &u.key, &u.source, u.unit, u.build, &u.flags).or_fail()?;
    }
    store.set_meta(MetaKey::InstrumentPlan.name(), plans_before.as_deref().unwrap_or("[]")).or_fail()?;
    store.set_meta(MetaKey::BuildRunning.name(), running_before.as_deref().unwrap_or("")).or_fail()?;
    let kept = format!("the previous build is back in place and the baseline stays snapshot {}", baseline.0);
    if interrupted {
        return Err(
            Error::interrupted(format!("interrupted during {what}: {kept}")).hint("rerun `retest run --selected`")
        );
    }
    match built {
        Err(f) => Err(Error::new(format!("{what} could not run ({}): {kept}", f.what)).hint("pass --build CMD")),
        Ok(_) => Err(Error::new(format!("{what} failed: {kept}")).hint("see the build output above")),
    }
}

/// Each test's duration (seconds) in the run that recorded its coverage in the
/// baseline, by name.
fn recorded_durations(
    store: &Store,
    matrix: &[retest_store::MatrixTest],
    name_of: &HashMap<&str, &str>,
) -> Result<HashMap<String, f64>, Error> {
    let mut runs: HashMap<RunId, HashMap<retest_store::TestId, retest_store::Outcome>> = HashMap::new();
    let mut out = HashMap::new();
    for m in matrix {
        let Some(name) = name_of.get(m.key.as_str()) else { continue };
        let results = match runs.entry(m.run) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(store.run_results(m.run).or_fail()?),
        };
        if let Some(o) = results.get(&m.test) {
            out.insert(name.to_string(), o.duration.as_secs_f64());
        }
    }
    Ok(out)
}

/// What a regression cycle is expected to cost, from the store's records:
/// each test's duration in the run that recorded its coverage (a test with
/// none counts the median), and the seconds per unit of the last build.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cycle {
    /// Seconds the tests to run take.
    rerun: f64,
    /// Seconds the whole suite takes.
    all: f64,
}

impl Cycle {
    /// The share of an instrumented test's time its probes may take: what
    /// removing every probe saves at most (instrumented suites run 1.0–1.45
    /// times as long as plain ones, bench/RESULTS.md).
    const PROBE_SHARE: f64 = 0.25;

    fn new<'n>(
        durations: &HashMap<String, f64>,
        suite: impl Iterator<Item = &'n str>,
        rerun: &BTreeSet<String>,
    ) -> Cycle {
        let mut known: Vec<f64> = durations.values().copied().collect();
        known.sort_by(f64::total_cmp);
        let median = known.get(known.len() / 2).copied().unwrap_or(0.0);
        let mut c = Cycle { rerun: 0.0, all: 0.0 };
        for name in suite {
            let t = durations.get(name).copied().unwrap_or(median);
            c.all += t;
            if rerun.contains(name) {
                c.rerun += t;
            }
        }
        c
    }

    /// Why the whole suite should run instead of the tests to rerun, if it
    /// should: it costs at most a tenth more, and measures every test's
    /// coverage instead of carrying it over.
    fn whole_suite(&self) -> Option<String> {
        (self.rerun > 0.0 && self.all - self.rerun <= 0.1 * self.rerun).then(|| {
            format!(
                "the tests to rerun take {:.2} s of the suite's {:.2} s, so all of them cost at most a tenth more",
                self.rerun, self.all
            )
        })
    }

    /// Whether rebuilding `units` units with `keep` of `full` probes, and
    /// rebuilding them fully again after, costs less than fewer probes save
    /// the tests; else why not.
    fn selective_pays(&self, keep: u64, full: u64, per_unit: Option<f64>, units: usize) -> Result<(), String> {
        let Some(per_unit) = per_unit else {
            return Err("no build time is recorded to weigh two rebuilds against".to_string());
        };
        let removed = if full == 0 { 0.0 } else { 1.0 - keep as f64 / full as f64 };
        let saved = Self::PROBE_SHARE * self.rerun * removed;
        let rebuilds = 2.0 * per_unit * units as f64;
        if saved > rebuilds {
            Ok(())
        } else {
            Err(format!(
                "fewer probes would save at most {saved:.2} s of the tests' {:.2} s, and the two rebuilds would cost about {rebuilds:.2} s",
                self.rerun
            ))
        }
    }
}

/// A unit's probe plan: its key, its content hash and the probes of each procedure.
type UnitPlan = (String, [u8; 16], Vec<Vec<Probe>>);

fn save_plans(store: &mut Store, plans: &[UnitPlan]) -> Result<(), Error> {
    if !plans.is_empty() {
        crate::build::mark_selective_objects(store, plans.iter().map(|(k, _, _)| k.as_str()))?;
    }
    let v: Vec<(&String, String, &Vec<Vec<Probe>>)> = plans.iter().map(|(k, h, p)| (k, hex(h), p)).collect();
    store.set_meta(MetaKey::InstrumentPlan.name(), &serde_json::to_string(&v).or_fail()?).or_fail()
}

/// The summary of T′'s runs, each test as its last run left it.
fn merged_summary(
    chosen: &[TestSpec],
    by_name: &HashMap<&str, (&crate::run::Executed, RunId, bool)>,
    first: &RunSummary,
    again: Option<&RunSummary>,
) -> RunSummary {
    let mut s = RunSummary {
        elapsed: first.elapsed + again.map_or(Duration::ZERO, |s| s.elapsed),
        stopped: false,
        ..Default::default()
    };
    for t in chosen {
        let Some((r, _, _)) = by_name.get(t.name.as_str()) else { continue };
        s.results.push(crate::run::TestResult::new(t, r));
        match r.outcome.status {
            Status::Passed => s.passed += 1,
            _ => s.failed.push(t.name.clone()),
        }
        if let Err(why) = &r.coverage {
            s.unknown.push((t.name.clone(), why.clone()));
        }
        if let Some(why) = &r.deps.unknown {
            s.deps_unknown.push((t.name.clone(), why.clone()));
        }
    }
    s
}

/// The tests `run --selected` leaves out, with why, for reports that list
/// every test of the suite (`--junit`).
pub(crate) fn not_selected<'a>(
    left_out: impl Iterator<Item = &'a TestSpec>,
    baseline: retest_store::SnapshotId,
) -> Vec<crate::run::NotRun> {
    left_out
        .map(|t| {
            let why = format!(
                "not selected: no change since the baseline (snapshot {}) reaches the code it ran, its definition or the files it read (`retest explain {}` says more)",
                baseline.0, t.name
            );
            crate::run::NotRun::new(t, why)
        })
        .collect()
}

/// Statistics of one `run --selected`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RecoverStats {
    pub selected: usize,
    pub rerun_extra: usize,
    pub probes_selective: u64,
    pub probes_full: u64,
    pub full_probes_used: bool,
    pub build_seconds: f64,
    pub run_seconds: f64,
    pub recompute_seconds: f64,
}

/// The baseline a sharded `run --selected` compares against when an earlier
/// shard of the same cycle already moved the baseline: while the baseline is
/// the newest snapshot, incomplete, and a sharded `run --selected` carried
/// its coverage over from another snapshot, that one — so every shard of the
/// cycle makes the same selection, and each its part of the same T′.
fn shard_origin(store: &Store) -> Result<Option<retest_store::SnapshotId>, Error> {
    let Some(b) = store.baseline().or_fail()? else { return Ok(None) };
    let newest = store.newest_snapshot().or_fail()?.map(|s| s.id);
    if newest != Some(b) {
        return Ok(None);
    }
    let incomplete = store.missing_tests(b).or_fail()?.is_some_and(|m| !m.is_empty());
    Ok(if incomplete { store.origin(b).or_fail()? } else { None })
}

/// `retest run --selected`: selects, runs T′ (rebuilding with selective
/// instrumentation when it pays off) and makes the new version the baseline
/// with every test's coverage brought up to date.
pub fn run_selected(cx: &Context, store: &mut Store, root: &Path, a: &RunSettings) -> Result<RunReport, Error> {
    // a shard runs on the build as it stands (the fleet builds once), and
    // selects against the version the first shard carried coverage over from
    let a = &RunSettings { probes: if a.partition.is_some() { Probes::Full } else { a.probes }, ..a.clone() };
    let against = match a.partition {
        Some(_) => shard_origin(store)?,
        None => None,
    };
    let opts = SelectOptions {
        algorithm: Algorithm::Dejavu,
        source: a.source.clone(),
        baseline: against,
        // RECOVER maps the entities of every unit
        whole_program: true,
        every_walk: true,
        ..Default::default()
    };
    let sel = compute(store, root, &opts)?;
    let new_snapshot = sel.new_snapshot.ok_or_else(|| Error::new("no new build to run"))?;
    let tests = discover_tests(&a.source, root, store)?;
    if new_snapshot == sel.baseline {
        // only definitions and files changed: no entity moved
        return crate::rerun::in_place(cx, store, a, &sel, &tests);
    }
    // matrix rows are found by key (a universe test's command), shown by name
    let name_of: HashMap<&str, &str> = tests.iter().map(|t| (t.key.as_str(), t.name.as_str())).collect();
    let (old, new) = sel.programs();
    let map = EntityMap::new(&old, &new, &sel.outcome);

    // the old matrix, per test
    let matrix = store.matrix_tests(sel.baseline).or_fail()?;
    let old_id_to_index: HashMap<UnitId, usize> =
        sel.old_units.iter().enumerate().filter_map(|(i, u)| u.unit_id.map(|id| (id, i))).collect();
    let mut old_cov: HashMap<String, HashMap<usize, RoaringBitmap>> = HashMap::new();
    let mut old_recorded: HashMap<String, HashMap<usize, Recorded>> = HashMap::new();
    // tests whose old coverage claims what code stopped part-way may have run
    // (or may: recorded before retest knew), a claim of the old probes
    let claims: BTreeSet<String> = matrix
        .iter()
        .filter(|m| m.stopped != Some(false))
        .filter_map(|m| name_of.get(m.key.as_str()).map(|n| n.to_string()))
        .collect();
    for m in &matrix {
        let Some(&name) = name_of.get(m.key.as_str()) else { continue };
        // a test whose definition or files changed may run differently
        // anywhere: nothing of its old coverage is carried over
        if m.state == CoverageState::Known && !sel.inputs_changed(name) {
            let cov = store.test_coverage(sel.baseline, m.test).or_fail()?;
            old_cov.insert(
                name.to_string(),
                cov.into_iter().filter_map(|(u, b)| old_id_to_index.get(&u).map(|i| (*i, b))).collect(),
            );
            let rec = store.test_recorded(sel.baseline, m.test).or_fail()?;
            old_recorded.insert(
                name.to_string(),
                rec.into_iter().filter_map(|(u, r)| old_id_to_index.get(&u).map(|i| (*i, r))).collect(),
            );
        }
    }
    // what builds record beyond edges (MC/DC evaluations, paths): carried over exactly, or rerun
    let transfer = RecordedTransfer::new(
        &old,
        &new,
        &map,
        sel.old_units.iter().map(|u| u.recording(store)).collect::<Result<_, _>>()?,
        sel.new_units.iter().map(|u| u.recording(store)).collect::<Result<_, _>>()?,
    );
    let mut transferred: HashMap<String, HashMap<usize, Recorded>> = HashMap::new();
    // T′: the selected tests, plus those whose coverage cannot be carried over exactly
    let mut rerun: BTreeSet<String> = sel.selected.keys().cloned().collect();
    let mut extra = 0;
    for t in &tests {
        let Some(c) = old_cov.get(&t.name) else { continue };
        if rerun.contains(&t.name) {
            continue;
        }
        let mut carried = !must_rerun(&old, &map, c);
        if carried && !transfer.is_empty() {
            let mut edges = map.transfer(c);
            for u in 0..new.units.len() {
                edges.entry(u).or_default();
            }
            let empty = HashMap::new();
            match transfer.transfer(old_recorded.get(&t.name).unwrap_or(&empty), &edges) {
                Ok(r) => {
                    transferred.insert(t.name.clone(), r);
                }
                Err(_) => carried = false,
            }
        }
        if !carried {
            rerun.insert(t.name.clone());
            extra += 1;
        }
    }
    // what the cycle costs, from the store's records (see `Cycle`): when the
    // selected tests take nearly the whole suite's time, the whole suite runs
    // on the current build, and every test's coverage is measured
    let cycle =
        Cycle::new(&recorded_durations(store, &matrix, &name_of)?, tests.iter().map(|t| t.name.as_str()), &rerun);
    let whole_suite = (a.probes == Probes::Auto && rerun.len() < tests.len()).then(|| cycle.whole_suite()).flatten();
    if let Some(why) = &whole_suite {
        cx.reporter.note(&format!("running the whole suite: {why}"));
        rerun.extend(tests.iter().map(|t| t.name.clone()));
    }
    let count = |p: &[Vec<Probe>], u: &retest_graph::Unit| -> u64 {
        u.procedures
            .iter()
            .zip(p)
            .map(|(pr, probes)| retest_graph::coverage::CellLayout::new(&pr.cond, probes).cells as u64)
            .sum()
    };
    let mut full: Vec<Vec<Vec<Probe>>> = new.units.iter().map(|u| full_plan(u.unit)).collect();
    let probes_full: u64 = new.units.iter().zip(&full).map(|(u, p)| count(p, u.unit)).sum();
    // full probes: a rerun test without old coverage cannot take transfers, nor
    // can one whose old coverage claims what stopped code may have run (so
    // when every rerun test's does, see below, no rebuild pays off); with
    // nothing to rerun the build as it stands serves (no rebuild at all); and when
    // the build records Ball–Larus paths, some runs on a selectively probed build
    // record other path ids than on the full build (bench/subjects/lexer)
    let needs_full = a.probes == Probes::Full
        || whole_suite.is_some()
        || rerun.is_empty()
        || recorded_options(store).paths
        || rerun.iter().any(|t| !old_cov.contains_key(t))
        || rerun.iter().all(|t| claims.contains(t));
    // say why the current build serves, where nothing else will
    let full_because = if a.probes == Probes::Full || whole_suite.is_some() || rerun.is_empty() {
        None
    } else if recorded_options(store).paths {
        Some("the build records paths, which a selective build would number differently")
    } else if rerun.iter().any(|t| !old_cov.contains_key(t)) {
        Some("a test to rerun has no recorded coverage to carry over")
    } else if rerun.iter().all(|t| claims.contains(t)) {
        Some("every test to rerun stopped part-way last time, and such tests run on the full build")
    } else {
        None
    };
    if let Some(why) = full_because {
        cx.reporter.note(&format!("the tests run on the current, fully instrumented build (no rebuild): {why}"));
    }
    let selective_plans = (!needs_full).then(|| {
        let mut plans = selective_probes(&old, &new, &sel.outcome, &map);
        // a unit whose selective plan would keep every probe keeps its own plan
        for ((plan, f), u) in plans.iter_mut().zip(&full).zip(&new.units) {
            if count(plan, u.unit) >= count(f, u.unit) {
                plan.clone_from(f);
            }
        }
        plans
    });
    let would_keep: Option<u64> =
        selective_plans.as_ref().map(|plans| new.units.iter().zip(plans).map(|(u, p)| count(p, u.unit)).sum());
    let rebuilt_units =
        selective_plans.as_ref().map_or(0, |plans| plans.iter().zip(&full).filter(|(p, f)| p != f).count());
    let per_unit = store.meta(MetaKey::BuildSecondsPerUnit.name()).or_fail()?.and_then(|v| v.parse::<f64>().ok());
    // two rebuilds (selective, then full again) pay off only when many probes
    // go and the time the tests save exceeds what the rebuilds cost
    let worth_it = |keep: u64| -> Result<(), String> {
        if a.probes == Probes::Selective {
            return Ok(());
        }
        if keep.saturating_mul(4) > probes_full.saturating_mul(3) {
            return Err("fewer than a quarter of the probes would go".to_string());
        }
        cycle.selective_pays(keep, probes_full, per_unit, rebuilt_units)
    };
    let verdict = would_keep.map(worth_it);
    let (plans, full_probes, probes_selective) = match (selective_plans, would_keep, verdict) {
        (Some(plans), Some(keep), Some(Ok(()))) => (plans, false, keep),
        (_, keep, verdict) => {
            if let Some(keep) = keep {
                let would = if keep == probes_full {
                    format!("would remove none of the {probes_full} probes")
                } else {
                    let why = verdict.and_then(Result::err).map(|w| format!(": {w}")).unwrap_or_default();
                    format!("would keep {keep} of {probes_full} probes{why}")
                };
                cx.reporter.note(&format!(
                    "selective instrumentation {would}; the tests run on the current, fully instrumented build (no rebuild; --selective-probes forces it)"
                ));
            }
            (std::mem::take(&mut full), true, probes_full)
        }
    };

    // the units whose plan differs from full instrumentation
    let selective: Vec<UnitPlan> = if full_probes {
        Vec::new()
    } else {
        sel.new_units
            .iter()
            .zip(&plans)
            .zip(&full)
            .filter(|((_, p), f)| p != f)
            .map(|((u, p), _)| (u.key.clone(), u.src_hash, p.clone()))
            .collect()
    };
    // what the objects hold now (an interrupted run may have left other plans)
    let mut current: HashMap<String, Vec<Vec<Probe>>> = HashMap::new();
    for u in store.snapshot_units(new_snapshot).or_fail()? {
        if let Some(b) = u.build {
            current.insert(u.key, store.build(b).or_fail()?.plan);
        }
    }
    let stale: Vec<&str> = sel
        .new_units
        .iter()
        .zip(&plans)
        .filter(|(u, p)| current.get(&u.key) != Some(*p))
        .map(|(u, _)| u.key.as_str())
        .collect();
    // a build that did not finish may have left objects or the program half
    // written, or objects linked into no program yet: the build runs again first
    // (it removes what was half written), however current the objects' plans are
    let unfinished = !rerun.is_empty() && crate::build::last_build_interrupted(store)?;
    let rebuild = !stale.is_empty() || unfinished;
    if let (Some(p), true) = (&a.partition, rebuild) {
        let why = if unfinished {
            "the last build did not finish".to_string()
        } else {
            format!("the objects of {} are not fully instrumented", stale.join(", "))
        };
        return Err(Error::new(format!(
            "shard {p} would have to rebuild before its tests run ({why}); shards run on the build as it stands"
        ))
        .hint("build once with `retest build -- CMD` before the shards run (or run `retest run --selected` without --partition)"));
    }
    let (argv, cwd) = if !rebuild && selective.is_empty() {
        (Vec::new(), root.to_path_buf())
    } else {
        build_command(store, a.build.as_deref(), root)?
    };
    let t_build = Instant::now();
    let plans_before = store.meta(MetaKey::InstrumentPlan.name()).or_fail()?;
    save_plans(store, &selective)?;
    if rebuild {
        if stale.is_empty() {
            cx.reporter.note("the last build did not finish; building again before the tests run");
        }
        let what = if full_probes { "the rebuild" } else { "the selectively instrumented rebuild" };
        rebuild_keeping_previous(cx, store, root, &stale, &argv, &cwd, new_snapshot, plans_before, what, sel.baseline)?;
    }
    let build_seconds = t_build.elapsed().as_secs_f64();

    // run T′ (its coverage is recorded below, recomputed, not as measured).
    // What a run stopped part-way (a crash, a signal, threads, a handler of the
    // program's own) is claimed to have run depends on where the probes are: a
    // selective build claims other edges than a full one, and code without
    // probes would keep the claims of the old run. So on a selective build the
    // tests whose old run stopped part-way, and those that stop part-way there,
    // run on the fully instrumented build, rebuilt before the baseline moves.
    let chosen: Vec<_> = tests.iter().filter(|t| rerun.contains(&t.name)).cloned().collect();
    let mut not_run = not_selected(tests.iter().filter(|t| !rerun.contains(&t.name)), sel.baseline);
    // a shard runs its part of T′ and carries over its part of the others:
    // over the shards, every test's row is written exactly once
    let (chosen, owned): (Vec<TestSpec>, Option<BTreeSet<String>>) = match &a.partition {
        None => (chosen, None),
        Some(p) => {
            let mine = p.select(&chosen, |t| t.key.as_str());
            let kept: Vec<TestSpec> = tests.iter().filter(|t| !rerun.contains(&t.name)).cloned().collect();
            let owned = mine.iter().chain(&p.select(&kept, |t| t.key.as_str())).map(|t| t.name.clone()).collect();
            let names: BTreeSet<&str> = mine.iter().map(|t| t.name.as_str()).collect();
            not_run.extend(crate::run::not_in_shard(chosen.iter().filter(|t| !names.contains(t.name.as_str())), p));
            (mine, Some(owned))
        }
    };
    let on_selective = !selective.is_empty();
    let (first, mut again): (Vec<TestSpec>, Vec<TestSpec>) =
        chosen.iter().cloned().partition(|t| !on_selective || !claims.contains(&t.name));
    let interrupted = |summary: RunSummary, n: usize| -> RunReport {
        let error = Error::interrupted(format!(
            "interrupted: the coverage was not recomputed; the baseline stays snapshot {}",
            sel.baseline.0
        ))
        .hint("rerun `retest run --selected`");
        RunReport::new(summary, n, new_snapshot).failed(error).leaving_out(not_run.clone())
    };
    let (run, results, summary) = execute(cx, store, new_snapshot, None, RunKind::Selected, &first, a.jobs, a.timeout)?;
    if summary.stopped {
        return Ok(interrupted(summary, first.len()));
    }
    if on_selective {
        again.extend(
            results
                .iter()
                .filter(|r| r.coverage.as_ref().is_ok_and(|c| c.stopped))
                .map(|r| first[r.outcome.index].clone()),
        );
    }
    let mut rebuilt_full = false;
    let (run_again, results_again, summary_again) = if again.is_empty() {
        (run, Vec::new(), None)
    } else {
        cx.reporter.note(&format!(
            "{} test(s) stopped part-way in this run or the last (a crash, a signal, threads, a signal handler) run on the fully instrumented build",
            again.len()
        ));
        let plans_before = store.meta(MetaKey::InstrumentPlan.name()).or_fail()?;
        save_plans(store, &[])?;
        let keys: Vec<&str> = selective.iter().map(|(k, _, _)| k.as_str()).collect();
        let what = "the rebuild with full instrumentation for them";
        rebuild_keeping_previous(cx, store, root, &keys, &argv, &cwd, new_snapshot, plans_before, what, sel.baseline)?;
        rebuilt_full = true;
        let (r, res, s) = execute(cx, store, new_snapshot, None, RunKind::Selected, &again, a.jobs, a.timeout)?;
        if s.stopped {
            return Ok(interrupted(s, again.len()));
        }
        (r, res, Some(s))
    };

    // what the selective builds measure, per new unit
    let t_rec = Instant::now();
    let new_index: HashMap<UnitId, usize> =
        sel.new_units.iter().enumerate().filter_map(|(i, u)| u.unit_id.map(|id| (id, i))).collect();
    let measured: Vec<RoaringBitmap> = new
        .units
        .iter()
        .zip(&plans)
        .map(|(u, plan)| {
            let bases = u.unit.edge_bases();
            let mut bm = RoaringBitmap::new();
            for (i, (p, probes)) in u.unit.procedures.iter().zip(plan).enumerate() {
                for e in measured_edges(&p.cond, probes).ones() {
                    bm.insert(bases[i] + e as u32);
                }
            }
            bm
        })
        .collect();
    // per test: its result, the run, and whether it ran on the full build
    let mut by_name: HashMap<&str, (&crate::run::Executed, RunId, bool)> =
        results.iter().map(|r| (first[r.outcome.index].name.as_str(), (r, run, !on_selective))).collect();
    for r in &results_again {
        by_name.insert(again[r.outcome.index].name.as_str(), (r, run_again, true));
    }
    let test_ids: HashMap<String, retest_store::TestId> = store
        .tests()
        .or_fail()?
        .into_iter()
        .filter_map(|t| name_of.get(t.key.as_str()).map(|n| (n.to_string(), t.id)))
        .collect();
    let old_runs: HashMap<&str, RunId> =
        matrix.iter().filter_map(|m| name_of.get(m.key.as_str()).map(|n| (*n, m.run))).collect();
    // definitions and files: measured for the tests that ran, carried over for the others
    let mut old_deps = store.matrix_deps(sel.baseline).or_fail()?;
    let mut rows = Vec::new();
    for t in &tests {
        if owned.as_ref().is_some_and(|o| !o.contains(&t.name)) {
            continue;
        }
        let Some(&id) = test_ids.get(&t.name) else { continue };
        let mut recorded: Vec<(UnitId, Recorded)> = Vec::new();
        let (state, cov, run_id) = if let Some(&(r, run, full)) = by_name.get(t.name.as_str()) {
            match &r.coverage {
                Err(why) => (CoverageState::Unknown(why.clone()), Vec::new(), run),
                Ok(ran) => {
                    // the selective build records everything beyond edges in
                    // full, but execution counts only where it probes
                    recorded = ran.recorded.clone();
                    let ran: HashMap<usize, RoaringBitmap> =
                        ran.edges.iter().filter_map(|(u, b)| new_index.get(u).map(|i| (*i, b.clone()))).collect();
                    // on the full build everything was measured
                    let old = if full { None } else { old_cov.get(&t.name) };
                    if old.is_some()
                        && let Some(old_rec) = old_recorded.get(&t.name)
                    {
                        // the unmeasured edges' counts, as their coverage: the old ones
                        let old_counts: HashMap<usize, BTreeMap<u32, u64>> = old_rec
                            .iter()
                            .filter(|(_, r)| !r.counts.is_empty())
                            .map(|(u, r)| (*u, r.counts.clone()))
                            .collect();
                        for (nu, counts) in map.transfer_counts(&old_counts) {
                            let Some(uid) = sel.new_units[nu].unit_id else { continue };
                            let kept: BTreeMap<u32, u64> =
                                counts.into_iter().filter(|(e, _)| !measured[nu].contains(*e)).collect();
                            if kept.is_empty() {
                                continue;
                            }
                            match recorded.iter_mut().find(|(u, _)| *u == uid) {
                                Some((_, r)) => r.counts.extend(kept),
                                None => recorded.push((uid, Recorded { counts: kept, ..Default::default() })),
                            }
                        }
                        recorded.sort_by_key(|(u, _)| *u);
                    }
                    let input = TestInput::Rerun { ran: &ran, old };
                    (CoverageState::Known, recompute(new.units.len(), &map, &measured, &input), run)
                }
            }
        } else {
            match old_cov.get(&t.name) {
                Some(old_c) => {
                    if let Some(r) = transferred.get(&t.name) {
                        recorded = r
                            .iter()
                            .filter(|(_, r)| !r.is_empty())
                            .filter_map(|(i, r)| sel.new_units[*i].unit_id.map(|u| (u, r.clone())))
                            .collect();
                        recorded.sort_by_key(|(u, _)| *u);
                    }
                    let input = TestInput::Kept { old: old_c };
                    let run_id = old_runs.get(t.name.as_str()).copied().unwrap_or(run);
                    (CoverageState::Known, recompute(new.units.len(), &map, &measured, &input), run_id)
                }
                // unknown before and not rerun (cannot happen: such tests are selected)
                None => (CoverageState::Unknown("no coverage was recorded".into()), Vec::new(), run),
            }
        };
        let coverage: Vec<(UnitId, RoaringBitmap)> = cov
            .into_iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .filter_map(|(i, b)| sel.new_units[i].unit_id.map(|u| (u, b)))
            .collect();
        let deps = match by_name.get(t.name.as_str()) {
            Some((r, _, _)) => Some(r.deps.clone()),
            None => old_deps.remove(&id),
        };
        rows.push(MatrixRow { test: id, run: run_id, state, coverage, recorded, deps });
    }
    let recompute_seconds = t_rec.elapsed().as_secs_f64();
    match &a.partition {
        None => store.advance_baseline(new_snapshot, &rows).or_fail()?,
        Some(_) => {
            let suite = crate::run::suite_ids(store, &tests)?;
            store.advance_baseline_shard(new_snapshot, &rows, &suite, Some(sel.baseline)).or_fail()?;
        }
    }

    // ordinary objects again for the next build
    save_plans(store, &[])?;
    if a.keep_selective && rebuilt_full {
        cx.reporter.note("the objects are fully instrumented again (tests stopped part-way ran on them)");
    }
    if !a.keep_selective && !selective.is_empty() && !rebuilt_full {
        for (k, _, _) in &selective {
            remove_output(root, k);
        }
        let stop = crate::interrupt::flag();
        let status = run_build(cx, store, &argv, &cwd, recorded_options(store))?;
        if crate::interrupt::came(&stop, !status.success()) {
            return Err(Error::interrupted(format!(
                "interrupted while rebuilding with full instrumentation: snapshot {} is the baseline, with the coverage of every test",
                new_snapshot.0
            ))
            .hint("`retest build` makes the fully instrumented objects again"));
        }
        if !status.success() {
            return Err(
                Error::new("rebuilding with full instrumentation failed").hint("rerun the build with `retest build`")
            );
        }
        store.seal(new_snapshot).or_fail()?;
    }
    let summary = merged_summary(&chosen, &by_name, &summary, summary_again.as_ref());
    let stats = RecoverStats {
        selected: sel.selected.len(),
        rerun_extra: extra,
        probes_selective,
        probes_full,
        full_probes_used: full_probes,
        build_seconds,
        run_seconds: summary.elapsed.as_secs_f64(),
        recompute_seconds,
    };
    let shard = a.partition.map(|p| format!("shard {p}: ")).unwrap_or_default();
    let brought = match &a.partition {
        None => format!("coverage of all {} tests brought up to date", tests.len()),
        Some(_) => {
            let missing = store.missing_tests(new_snapshot).or_fail()?.map_or(0, |m| m.len());
            let rest = if missing == 0 {
                "every test of the suite has a record".to_string()
            } else {
                format!("{missing} tests still have no record (the other shards)")
            };
            format!("coverage of this shard's {} tests brought up to date, {rest}", rows.len())
        }
    };
    let conclusion = format!(
        "{shard}ran {} of {} tests ({} selected{}); probes {} of {} ({}); {brought}: snapshot {} is the baseline",
        chosen.len(),
        tests.len(),
        stats.selected,
        if whole_suite.is_some() {
            ", the others because the whole suite costs little more".to_string()
        } else if extra > 0 {
            format!(", {extra} more whose coverage could not be carried over exactly")
        } else {
            String::new()
        },
        stats.probes_selective,
        stats.probes_full,
        if full_probes { "full instrumentation" } else { "selective instrumentation" },
        new_snapshot.0
    );
    let mut report = RunReport::new(summary, chosen.len(), new_snapshot).concluding(conclusion).leaving_out(not_run);
    report.stats = Some(stats);
    Ok(report)
}

#[cfg(test)]
mod cycle_tests {
    use std::collections::{BTreeSet, HashMap};

    use super::Cycle;

    fn cycle(durations: &[(&str, f64)], suite: &[&str], rerun: &[&str]) -> Cycle {
        let d: HashMap<String, f64> = durations.iter().map(|(n, t)| (n.to_string(), *t)).collect();
        let r: BTreeSet<String> = rerun.iter().map(|s| s.to_string()).collect();
        Cycle::new(&d, suite.iter().copied(), &r)
    }

    #[test]
    fn the_whole_suite_runs_when_it_costs_at_most_a_tenth_more() {
        let suite = ["a", "b", "c"];
        let c = cycle(&[("a", 10.0), ("b", 10.0), ("c", 1.0)], &suite, &["a", "b"]);
        assert_eq!(c, Cycle { rerun: 20.0, all: 21.0 });
        assert!(c.whole_suite().is_some());
        let c = cycle(&[("a", 10.0), ("b", 10.0), ("c", 5.0)], &suite, &["a", "b"]);
        assert!(c.whole_suite().is_none());
        // nothing known, nothing to weigh: the selection stands
        assert!(cycle(&[], &suite, &["a"]).whole_suite().is_none());
        // a test without a record counts the median of the others
        let c = cycle(&[("a", 1.0), ("b", 3.0)], &suite, &["c"]);
        assert_eq!(c, Cycle { rerun: 3.0, all: 7.0 });
    }

    #[test]
    fn selective_probes_pay_only_when_the_tests_save_more_than_two_rebuilds_cost() {
        let c = Cycle { rerun: 100.0, all: 200.0 };
        // half the probes go: at most 12.5 s saved
        assert!(c.selective_pays(50, 100, Some(1.0), 4).is_ok());
        let why = c.selective_pays(50, 100, Some(2.0), 4).unwrap_err();
        assert!(why.contains("12.50 s") && why.contains("16.00 s"), "{why}");
        assert!(c.selective_pays(50, 100, None, 1).is_err());
        assert!(c.selective_pays(100, 100, Some(0.0), 0).is_err());
    }
}
