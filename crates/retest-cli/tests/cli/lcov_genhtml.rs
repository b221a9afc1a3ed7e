//! The LCOV report is what `genhtml` (lcov) reads: on the bundled example,
//! `retest coverage --format lcov` goes through `genhtml` without an error or
//! a warning, and the page it writes counts the lines and functions the text
//! report counts. A missing `genhtml` fails the test (`.ci/run` installs lcov).

use crate::common;

use std::process::Command;

use common::*;

#[test]
fn genhtml_reads_the_lcov_report() {
    let ok = Command::new("genhtml").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "genhtml is not installed (Debian: lcov; `.ci/run` installs it)");
    let d = example_copy();
    baseline(d.path());
    let lcov = retest(d.path(), &["coverage", "--format", "lcov"], 0);
    std::fs::write(d.path().join("cov.info"), &lcov.stdout).unwrap();
    let out = Command::new("genhtml")
        .args(["--branch-coverage", "cov.info", "-o", "html"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "genhtml failed:\n{err}");
    assert!(!err.to_lowercase().contains("warning"), "genhtml warned:\n{err}");
    assert!(d.path().join("html/index.html").exists());
    // genhtml's summary counts what the LCOV file declares
    let text = String::from_utf8_lossy(&out.stdout);
    let info = String::from_utf8_lossy(&lcov.stdout);
    let sum = |key: &str| -> u64 {
        info.lines().filter_map(|l| l.strip_prefix(key)).map(|v| v.trim().parse::<u64>().unwrap()).sum()
    };
    let (lf, lh) = (sum("LF:"), sum("LH:"));
    assert!(lf > 100 && lh > 0 && lh <= lf, "LF {lf} LH {lh}");
    let summary = format!("({lh} of {lf} lines)");
    assert!(text.contains(&summary), "genhtml's summary does not say {summary}:\n{text}");
}
