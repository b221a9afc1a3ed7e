//! `retest-bench csmith` on three csmith programs with two mutants each: every
//! step of the study runs for real (csmith, plain and `retest` builds at -O0 and
//! -O2, gcov, `retest audit`, `retest compare-algorithms`), and the study must
//! report no failure. csmith missing is a failure, not a skip: `.ci/run`
//! installs it (Debian packages csmith and libcsmith-dev).

use std::path::Path;
use std::process::Command;

mod support;
use support::retest_bin;

fn results(work: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(work.join("csmith/results.json")).expect("results.json written");
    serde_json::from_str(&text).expect("results.json is JSON")
}

#[test]
fn csmith_study_on_three_programs_has_no_failure() {
    let work = tempfile::tempdir().unwrap();
    // (csmith writes platform.info into its working directory)
    let v = Command::new("csmith").arg("--version").current_dir(work.path()).output();
    assert!(
        v.as_ref().is_ok_and(|o| o.status.success()),
        "csmith is not installed: install the Debian packages csmith and libcsmith-dev (.ci/run does)"
    );
    assert!(
        Path::new("/usr/include/csmith/csmith.h").exists(),
        "no /usr/include/csmith/csmith.h: install libcsmith-dev"
    );
    let retest = retest_bin();
    // small programs (a few hundred lines) keep the test short
    let out = Command::new(env!("CARGO_BIN_EXE_retest-bench"))
        .arg("--retest")
        .arg(&retest)
        .arg("--work")
        .arg(work.path())
        .args(["csmith", "--programs", "3", "--seed", "1", "--mutants-per-program", "2", "--opt", "O0,O2"])
        .args(["--csmith-flags", "--max-funcs 3 --max-block-depth 3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the study failed:\n{stdout}\n{stderr}");
    assert!(stderr.contains("reproduce: retest-bench"), "no reproducing command printed:\n{stderr}");
    let r = results(work.path());
    let programs = r["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 3);
    let studied: Vec<&serde_json::Value> = programs.iter().filter(|p| p["status"] == "studied").collect();
    assert!(!studied.is_empty(), "no program was studied: {r:#}");
    for p in &studied {
        assert!(p["failures"].as_array().unwrap().is_empty(), "{p:#}");
        let levels = p["levels"].as_array().unwrap();
        assert_eq!(levels.len(), 2);
        for l in levels {
            assert_eq!(l["identical"], true, "{l:#}");
            assert!(l["lines"]["compared"].as_u64().unwrap() > 0, "no line compared with gcov: {l:#}");
        }
        assert!(p["frontend"]["functions"].as_u64().unwrap() > 0);
        for m in p["mutants"].as_array().unwrap() {
            let algs: Vec<&str> =
                m["algorithms"].as_array().unwrap().iter().map(|a| a["algorithm"].as_str().unwrap()).collect();
            for a in ["dejavu", "partial", "full", "valid", "path", "function", "file"] {
                assert!(algs.contains(&a), "{a} not compared: {m:#}");
            }
        }
    }
    let audited: usize = studied.iter().map(|p| p["mutants"].as_array().unwrap().len()).sum();
    assert!(audited >= 2 * studied.len().min(2), "{audited} mutants audited");
    let tables = std::fs::read_to_string(work.path().join("csmith/tables.md")).unwrap();
    assert!(tables.contains("| dejavu |"), "{tables}");
}
