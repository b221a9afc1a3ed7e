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
    let chosen: Vec<TestSpec> = tests.iter().filter(|t| sel.selected.contains_key(&t.name)).cloned().collect();
    let not_run =
        crate::recover::not_selected(tests.iter().filter(|t| !sel.selected.contains_key(&t.name)), sel.baseline);
    if chosen.is_empty() {
        return Ok(RunReport::new(RunSummary::default(), 0, sel.baseline).quiet().leaving_out(not_run).concluding(format!(
            "no test is selected: nothing was built since the baseline (snapshot {}) and no test's definition or files changed",
            sel.baseline.0
        )));
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
    let suite: std::collections::HashSet<&str> = tests.iter().map(|t| t.key.as_str()).collect();
    let keep: Vec<retest_store::TestId> =
        store.tests().or_fail()?.into_iter().filter(|t| suite.contains(t.key.as_str())).map(|t| t.id).collect();
    store.retain_matrix_tests(sel.baseline, &keep).or_fail()?;
    let conclusion = format!(
        "ran {} of {} tests (nothing was built since the baseline: selected for their definitions or files); their records in the baseline (snapshot {}) are replaced",
        chosen.len(),
        tests.len(),
        sel.baseline.0
    );
    Ok(RunReport::new(summary, chosen.len(), sel.baseline).concluding(conclusion).leaving_out(not_run))
}
