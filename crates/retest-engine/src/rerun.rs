//! `retest run --selected` when nothing was built since the baseline: only
//! the tests' definitions and the files they read can have changed. The code
//! is the baseline's, so no coverage has to be carried over (RECOVER has
//! nothing to map): the selected tests run on the baseline's build, and each
//! one's row of the baseline matrix — outcome, coverage, definition, files —
//! is replaced in its own transaction, as `retest run --filter` does; the
//! other tests keep theirs.

use retest_run::discover::TestSpec;
use retest_store::Store;

use crate::Context;
use crate::error::{Error, OrFail};
use crate::run::{RunKind, RunReport, RunSettings, RunSummary, execute};
use crate::select::Selection;

pub fn in_place(
    cx: &Context,
    store: &mut Store,
    a: &RunSettings,
    sel: &Selection,
    tests: &[TestSpec],
) -> Result<RunReport, Error> {
    let selected: Vec<TestSpec> = tests.iter().filter(|t| sel.selected.contains_key(&t.name)).cloned().collect();
    let chosen = match &a.partition {
        Some(p) => p.select(&selected, |t| t.key.as_str()),
        None => selected,
    };
    let mine: std::collections::HashSet<&str> = chosen.iter().map(|t| t.name.as_str()).collect();
    let mut not_run =
        crate::recover::not_selected(tests.iter().filter(|t| !sel.selected.contains_key(&t.name)), sel.baseline);
    if let Some(p) = &a.partition {
        not_run.extend(crate::run::not_in_shard(
            tests.iter().filter(|t| sel.selected.contains_key(&t.name) && !mine.contains(t.name.as_str())),
            p,
        ));
    }
    if sel.selected.is_empty() {
        return Ok(RunReport::new(RunSummary::default(), 0, sel.baseline).quiet().leaving_out(not_run).concluding(format!(
            "no test is selected: nothing was built since the baseline (snapshot {}) and no test's definition or files changed",
            sel.baseline.0
        )));
    }
    if chosen.is_empty() {
        let p = a.partition.as_ref().map(|p| p.to_string()).unwrap_or_default();
        return Ok(RunReport::new(RunSummary::default(), 0, sel.baseline).quiet().leaving_out(not_run).concluding(
            format!("no selected test is in shard {p}: {} selected, all run by other shards", sel.selected.len()),
        ));
    }
    let (_, _, summary) =
        execute(cx, store, sel.baseline, Some(sel.baseline), RunKind::Selected, &chosen, a.jobs, a.timeout)?;
    if summary.stopped {
        let error = Error::interrupted(format!(
            "interrupted: the tests that finished are recorded in the baseline (snapshot {}); the others stay selected",
            sel.baseline.0
        ))
        .hint("rerun `retest run --selected`");
        return Ok(RunReport::new(summary, chosen.len(), sel.baseline).failed(error).leaving_out(not_run));
    }
    // tests that left the suite leave the baseline
    let keep = crate::run::suite_ids(store, tests)?;
    store.make_baseline(sel.baseline, &keep).or_fail()?;
    let conclusion = format!(
        "ran {} of {} tests (nothing was built since the baseline: selected for their definitions or files); their records in the baseline (snapshot {}) are replaced",
        chosen.len(),
        tests.len(),
        sel.baseline.0
    );
    Ok(RunReport::new(summary, chosen.len(), sel.baseline).concluding(conclusion).leaving_out(not_run))
}
