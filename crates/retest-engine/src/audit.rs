//! `retest audit`: controlled regression testing as a check on selection.
//!
//! The baseline's outcomes were recorded when its coverage was (`retest run`). The
//! audit selects tests for the change since then, runs the *whole* suite on the
//! current build — same commands, same environment — and compares every test's
//! exit status and the hashes of its stdout and stderr with the baseline's. A test
//! whose behaviour changed but was not selected is a *miss*; any miss makes the
//! command fail. The run's coverage is recorded in the current snapshot's matrix
//! (it is exactly what a full rerun gives).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use retest_store::{CoverageState, Outcome, SnapshotId, Store, TestId, UnitId};
use serde::Serialize;

use crate::Context;
use crate::error::{Error, OrFail};
use crate::run::{Executed, RunKind, execute, outcome_of};
use crate::select::{SelectOptions, Selection, compute};
use crate::steady;
use retest_run::discover::TestSpec;

/// The baseline outcome of each test, by key: from the run that recorded its coverage.
pub fn baseline_outcomes(store: &Store, baseline: SnapshotId) -> Result<BTreeMap<String, Outcome>, Error> {
    let matrix = store.matrix_tests(baseline).or_fail()?;
    let mut runs: BTreeMap<i64, HashMap<TestId, Outcome>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for m in &matrix {
        if let std::collections::btree_map::Entry::Vacant(e) = runs.entry(m.run.0) {
            e.insert(store.run_results(m.run).or_fail()?);
        }
        if let Some(o) = runs[&m.run.0].get(&m.test) {
            out.insert(m.key.clone(), o.clone());
        }
    }
    Ok(out)
}

/// The tests whose behaviour changed between the baseline and the newest audit
/// of `snapshot` (name → what changed), if an audit ran on it.
pub fn changed_in_audit(
    cx: &Context,
    store: &Store,
    baseline: SnapshotId,
    snapshot: SnapshotId,
) -> Result<Option<BTreeMap<String, String>>, Error> {
    let Some(run) = store.latest_run(snapshot, RunKind::Audit.name()).or_fail()? else {
        return Ok(None);
    };
    // builds since the baseline record into one open snapshot: the audit must
    // have run on what the snapshot holds now
    let audited = store.meta(&audited_key(run)).or_fail()?;
    if audited.as_deref() != Some(build_digest(store, baseline, snapshot)?.as_str()) {
        cx.reporter.warn(&format!(
            "the last audit of snapshot {} ran on an earlier build (the snapshot was rebuilt since); its results are not used — run `retest audit` again",
            snapshot.0
        ));
        return Ok(None);
    }
    let before = baseline_outcomes(store, baseline)?;
    let names: HashMap<TestId, (String, String)> =
        store.tests().or_fail()?.into_iter().map(|t| (t.id, (t.key, t.name))).collect();
    let mut changed = BTreeMap::new();
    for (id, after) in store.run_results(run).or_fail()? {
        if let Some((key, name)) = names.get(&id)
            && let Some(old) = before.get(key)
            && let Some(d) = difference(old, &after)
        {
            changed.insert(name.clone(), d);
        }
    }
    Ok(Some(changed))
}

/// The meta key under which an audit run remembers what it ran on.
fn audited_key(run: retest_store::RunId) -> String {
    format!("audited_build_{}", run.0)
}

/// What an audit of `snapshot` against `baseline` runs on: a digest of the two
/// snapshot ids and of every unit of `snapshot` with its build and flags. A
/// rebuild that changes any unit changes it.
fn build_digest(store: &Store, baseline: SnapshotId, snapshot: SnapshotId) -> Result<String, Error> {
    let mut text = format!("{} {}\n", baseline.0, snapshot.0);
    for u in store.snapshot_units(snapshot).or_fail()? {
        text.push_str(&format!("{}\t{}\t{:?}\t{}\n", u.key, u.unit.0, u.build.map(|b| b.0), u.flags));
    }
    Ok(format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes())))
}

/// What changed about a test's behaviour.
fn difference(old: &Outcome, new: &Outcome) -> Option<String> {
    let mut d = Vec::new();
    if old.status != new.status || old.code != new.code {
        d.push(format!(
            "{}{} → {}{}",
            old.status,
            old.code.map(|c| format!(" ({c})")).unwrap_or_default(),
            new.status,
            new.code.map(|c| format!(" ({c})")).unwrap_or_default()
        ));
    }
    if old.stdout_hash != new.stdout_hash {
        d.push("stdout differs".into());
    }
    if old.stderr_hash != new.stderr_hash {
        d.push("stderr differs".into());
    }
    (!d.is_empty()).then(|| d.join(", "))
}

/// What an audit found (`retest.audit/1`).
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    pub schema: &'static str,
    pub baseline_snapshot: i64,
    pub new_snapshot: Option<i64>,
    pub tests: usize,
    pub selected: Vec<String>,
    /// Tests whose outcome or output changed: name → what changed.
    pub changed: BTreeMap<String, String>,
    /// Changed but not selected.
    pub missed: Vec<String>,
    /// Tests without a baseline outcome to compare with.
    pub not_compared: Vec<String>,
    /// Tests not selected whose coverage differed from their record in code
    /// that did not change: name → what differed and what a second run showed
    /// ([`crate::steady`]). They are flagged in the store.
    pub unsteady: BTreeMap<String, String>,
    pub analysis_seconds: f64,
    pub run_seconds: f64,
}

/// `retest audit`: selects for the change since the baseline, runs the whole
/// suite on the current build, and reports every test whose behaviour changed
/// and whether it was selected.
pub fn audit(
    cx: &Context,
    store: &mut Store,
    root: &Path,
    opts: &SelectOptions,
    jobs: Option<usize>,
    timeout: Option<f64>,
) -> Result<AuditReport, Error> {
    let sel = compute(store, root, opts)?;
    let Some(new_snapshot) = sel.new_snapshot else {
        return Err(Error::new("the audit runs the tests on the current build").hint(
            "build the new version with the wrapper (`retest build -- make`); -p cannot be audited without building",
        ));
    };
    // listed by ctest itself, not from a kept listing: the audit checks what
    // selection relies on
    let (tests, _) = crate::run::discover_resolved(&opts.source.resolve(store), root, None)?;
    let baseline = baseline_outcomes(store, sel.baseline)?;
    let digest = build_digest(store, sel.baseline, new_snapshot)?;
    // with nothing built since the baseline the audit runs on the baseline's
    // build: its results do not replace the baseline's
    let into = (new_snapshot != sel.baseline).then_some(new_snapshot);
    let (run, results, summary) = execute(cx, store, new_snapshot, into, RunKind::Audit, &tests, jobs, timeout)?;
    store.set_meta(&audited_key(run), &digest).or_fail()?;
    let mut changed = BTreeMap::new();
    let mut not_compared = Vec::new();
    for r in &results {
        let name = &tests[r.outcome.index].name;
        match baseline.get(&tests[r.outcome.index].key) {
            None => not_compared.push(name.clone()),
            Some(old) => {
                if let Some(d) = difference(old, &outcome_of(&r.outcome)) {
                    changed.insert(name.clone(), d);
                }
            }
        }
    }
    let missed: Vec<String> = changed.keys().filter(|n| !sel.selected.contains_key(*n)).cloned().collect();
    let unsteady = unsteady(cx, store, &sel, new_snapshot, &tests, &results, jobs, timeout)?;
    let report = AuditReport {
        schema: "retest.audit/1",
        baseline_snapshot: sel.baseline.0,
        new_snapshot: Some(new_snapshot.0),
        tests: tests.len(),
        selected: sel.selected.keys().cloned().collect(),
        changed,
        missed,
        not_compared,
        unsteady,
        analysis_seconds: sel.elapsed.as_secs_f64(),
        run_seconds: summary.elapsed.as_secs_f64(),
    };
    Ok(report)
}

/// One unit's covered edges.
type Coverage = (UnitId, roaring::RoaringBitmap);

/// The tests the audit did not select whose fresh coverage differs from their
/// record in the units the baseline and the audited build share: each is run
/// once more on the same build, flagged in the store, and returned (name →
/// why). A test not selected runs the path it ran before, so only a test whose
/// path depends on more than the code — or a fault of selection — shows one.
#[allow(clippy::too_many_arguments)]
fn unsteady(
    cx: &Context,
    store: &mut Store,
    sel: &Selection,
    snapshot: SnapshotId,
    tests: &[TestSpec],
    results: &[Executed],
    jobs: Option<usize>,
    timeout: Option<f64>,
) -> Result<BTreeMap<String, String>, Error> {
    let before_units = store.snapshot_units(sel.baseline).or_fail()?;
    let now_units = store.snapshot_units(snapshot).or_fail()?;
    let before_ids: HashSet<UnitId> = before_units.iter().map(|u| u.unit).collect();
    let shared: HashSet<UnitId> = now_units.iter().map(|u| u.unit).filter(|u| before_ids.contains(u)).collect();
    let every: HashSet<UnitId> = now_units.iter().map(|u| u.unit).collect();
    let source: HashMap<UnitId, &str> = now_units.iter().map(|u| (u.unit, u.source.as_str())).collect();
    let matrix: HashMap<String, retest_store::MatrixTest> =
        store.matrix_tests(sel.baseline).or_fail()?.into_iter().map(|m| (m.key.clone(), m)).collect();
    // (test index, its fresh coverage, how it differs from the record, whether
    // either record claims what stopped code may have run)
    let mut differ: Vec<(usize, &[Coverage], steady::Difference, bool)> = Vec::new();
    for r in results {
        let t = &tests[r.outcome.index];
        let Some(m) = matrix.get(&t.key) else { continue };
        // a selected test may run differently
        if sel.selected.contains_key(&t.name) || m.state != CoverageState::Known {
            continue;
        }
        let (Ok(now), Some(stopped)) = (&r.coverage, m.stopped) else { continue };
        let before = store.test_coverage(sel.baseline, m.test).or_fail()?;
        if let Some(d) = steady::compare(&before, &now.edges, &shared) {
            // a record of a test stopped part-way also claims what the stopped
            // code may have run, reckoned over the whole program, changed
            // units included: only two runs of the same build that differ
            // tell its variation apart
            differ.push((r.outcome.index, &now.edges, d, stopped || now.stopped));
        }
    }
    if differ.is_empty() {
        return Ok(BTreeMap::new());
    }
    let again: Vec<TestSpec> = differ.iter().map(|(i, ..)| tests[*i].clone()).collect();
    cx.reporter.note(&format!(
        "{} tests not selected ran differently in code that did not change; running them once more on the same build",
        again.len()
    ));
    let (_, second, _) = execute(cx, store, snapshot, None, RunKind::Recheck, &again, jobs, timeout)?;
    let second: HashMap<usize, &Executed> = second.iter().map(|r| (r.outcome.index, r)).collect();
    let mut found = BTreeMap::new();
    let mut flags = BTreeMap::new();
    for (n, (i, first, d, claims)) in differ.iter().enumerate() {
        let second = second.get(&n).map(|r| &r.coverage);
        let differed_again = matches!(second, Some(Ok(c)) if steady::compare(first, &c.edges, &every).is_some());
        if *claims && !differed_again {
            continue;
        }
        let files: Vec<&str> = d.units.iter().filter_map(|u| source.get(u).copied()).collect();
        let what = format!(
            "its coverage on snapshot {} differs from its record in code that did not change ({} edges no longer run, {} newly run, in {})",
            snapshot.0,
            d.only_first,
            d.only_second,
            files.join(", ")
        );
        let verdict = match second {
            Some(Ok(_)) if differed_again => {
                "a second run on the same build differed again: its path depends on more than the code (timing, scheduling, randomness, files it writes)".to_string()
            }
            Some(Ok(_)) => "a second run on the same build matched the first: the variation did not recur (if a later audit finds it again on an unchanged test, report it as a possible selection fault)".to_string(),
            Some(Err(why)) => format!("a second run recorded no coverage ({why})"),
            None => "a second run did not finish".to_string(),
        };
        let why = format!("{what}; {verdict}");
        flags.insert(tests[*i].key.clone(), why.clone());
        found.insert(tests[*i].name.clone(), why);
    }
    steady::flag(store, &flags)?;
    Ok(found)
}
