//! `retest run --selected` when nothing was built since the baseline: only
//! the tests' definitions and the files they read can have changed. The code
//! is the baseline's, so no coverage has to be carried over (RECOVER has
//! nothing to map): the selected tests run on the baseline's build, and each
//! one's row of the baseline matrix — outcome, coverage, definition, files —
//! is replaced in its own transaction, as `retest run --filter` does; the
//! other tests keep theirs.

use std::process::ExitCode;

use retest_run::discover::TestSpec;
use retest_store::Store;

use crate::fail::{Fail, OrFail};
use crate::run::{RunArgs, execute, print_summary};
use crate::select::Selection;

pub fn in_place(store: &mut Store, a: &RunArgs, sel: &Selection, tests: &[TestSpec]) -> Result<ExitCode, Fail> {
    let chosen: Vec<TestSpec> = tests.iter().filter(|t| sel.selected.contains_key(&t.name)).cloned().collect();
    if chosen.is_empty() {
        println!(
            "no test is selected: nothing was built since the baseline (snapshot {}) and no test's definition or files changed",
            sel.baseline.0
        );
        return Ok(ExitCode::SUCCESS);
    }
    let (_, _, summary) = execute(store, sel.baseline, Some(sel.baseline), "selected", &chosen, a.jobs, a.timeout)?;
    print_summary(&summary, chosen.len(), sel.baseline, false);
    if summary.stopped {
        return Err(Fail::new(format!(
            "interrupted: the tests that finished are recorded in the baseline (snapshot {}); the others stay selected",
            sel.baseline.0
        ))
        .hint("rerun `retest run --selected`"));
    }
    // tests that left the suite leave the baseline
    let suite: std::collections::HashSet<&str> = tests.iter().map(|t| t.key.as_str()).collect();
    let keep: Vec<retest_store::TestId> =
        store.tests().or_fail()?.into_iter().filter(|t| suite.contains(t.key.as_str())).map(|t| t.id).collect();
    store.retain_matrix_tests(sel.baseline, &keep).or_fail()?;
    println!(
        "ran {} of {} tests (nothing was built since the baseline: selected for their definitions or files); their records in the baseline (snapshot {}) are replaced",
        chosen.len(),
        tests.len(),
        sel.baseline.0
    );
    Ok(if summary.failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
