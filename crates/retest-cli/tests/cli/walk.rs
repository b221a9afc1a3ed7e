//! The differential random walk of `retest-bench walk` (bench/RESULTS.md), small
//! enough for every CI run: a few versions of one study subject, each edit
//! kind's mix as the bench draws it, with selective and with full probes.
//! After every `retest run --selected` the stored matrix must equal a fresh
//! store's full run bit for bit, and an audited follow-up edit must miss no test,
//! its selection from the changed units alone being the whole program's.

use crate::common;

use std::path::Path;

use common::*;
use retest_bench::walk::{Probes, WalkArgs, run};
use retest_bench::{Common, Subject};

#[test]
fn a_short_random_walk_keeps_every_matrix_exact_and_misses_no_test() {
    let work = tempfile::tempdir().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/subjects/sched").canonicalize().unwrap();
    let c = Common {
        retest: retest_bin(),
        work: work.path().to_path_buf(),
        subjects: vec![Subject { name: "sched".into(), dir }],
        fresh: false,
    };
    let a = WalkArgs {
        seed: 1,
        steps: 3,
        probes: vec![Probes::Selective, Probes::Full],
        record: vec![],
        tests: 40,
        jobs: 2,
        timeout: 10.0,
    };
    let sum = run(&c, &a).unwrap();
    assert_eq!(sum.steps, 3);
    assert!(sum.audits > 0, "no follow-up edit was audited");
    assert!(
        sum.exact(),
        "matrices differ at {:?}; {} audit misses; {} selections from the changed units differ from the whole program's",
        sum.mismatches,
        sum.misses,
        sum.selection_differences
    );
}
