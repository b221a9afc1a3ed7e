//! RECOVER (004): `retest run --selected` keeps every test's coverage exact.
//! The paper's Grade example v0 → v1 → v2 with its test suite (Table 1), checking
//! the statement-coverage matrices of Figs. 1–3 after each step, and that every
//! recomputed matrix equals a full rerun bit for bit.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::*;

// One statement per line; the comment gives the paper's statement number.
const V0: &str = "int calcGrade(int finalScore, int midTermScore)
{
    int grade = 0;                  /* s1 */
    if (finalScore > 70) {          /* s2 */
        if (midTermScore > 80) {    /* s3 */
            grade = 4;              /* s4 */
        } else {
            grade = 3;              /* s5 */
        }
    } else if (finalScore < 50) {   /* s6 */
        grade = 2;                  /* s7 */
    } else {
        grade = 3;                  /* s8 */
    }
    report(grade);                  /* s9 */
    return grade;                   /* s10 */
}
";

const V1: &str = "int calcGrade(int finalScore, int midTermScore)
{
    int grade = 0;                  /* s1 */
    if (finalScore > 70) {          /* s2 */
        if (midTermScore > 80) {    /* s3 */
            grade = 4;              /* s4 */
        } else {
            grade = 3;              /* s5 */
        }
    } else if (finalScore > 60) {   /* s6: change c1 */
        grade = 3;                  /* s7 */
    } else if (finalScore < 35) {   /* s8: change c2 */
        grade = 1;                  /* s9 */
    } else {
        grade = 2;                  /* s10 */
    }
    report(grade);                  /* s11 */
    return grade;                   /* s12 */
}
";

// v2 changes the condition c2 (004 Fig. 3: afterwards no test executes s9).
const V2: &str = "int calcGrade(int finalScore, int midTermScore)
{
    int grade = 0;                  /* s1 */
    if (finalScore > 70) {          /* s2 */
        if (midTermScore > 80) {    /* s3 */
            grade = 4;              /* s4 */
        } else {
            grade = 3;              /* s5 */
        }
    } else if (finalScore > 60) {   /* s6 */
        grade = 3;                  /* s7 */
    } else if (finalScore < 30) {   /* s8: change c3 */
        grade = 1;                  /* s9 */
    } else {
        grade = 2;                  /* s10 */
    }
    report(grade);                  /* s11 */
    return grade;                   /* s12 */
}
";

const MAIN: &str = "#include <stdio.h>
#include <stdlib.h>
int calcGrade(int finalScore, int midTermScore);
void report(int grade) { printf(\"Grade = %d\\n\", grade); }
int main(int argc, char **argv) { return argc == 3 ? calcGrade(atoi(argv[1]), atoi(argv[2])) * 0 : 2; }
";

fn write_version(dir: &Path, src: &str) {
    write_newer(&dir.join("grade.c"), format!("void report(int grade);\n{src}"));
}

fn project(src: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("main.c"), MAIN).unwrap();
    std::fs::write(d.path().join("grade.c"), format!("void report(int grade);\n{src}")).unwrap();
    std::fs::write(
        d.path().join("Makefile"),
        "grade: main.o grade.o\n\t$(CC) -o grade main.o grade.o\n%.o: %.c\n\t$(CC) -O0 -c -o $@ $<\n",
    )
    .unwrap();
    // Table 1 of 004
    let mut toml = String::new();
    for (t, a, b) in [("t1", 71, 81), ("t2", 71, 71), ("t3", 34, 60), ("t4", 52, 50)] {
        toml.push_str(&format!("[[test]]\nname = \"{t}\"\ncmd = \"./grade {a} {b}\"\n\n"));
    }
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    d
}

/// Statement coverage matrix of grade.c: statement number → tests that executed it.
fn matrix(dir: &Path) -> BTreeMap<u32, BTreeSet<String>> {
    let src = std::fs::read_to_string(dir.join("grade.c")).unwrap();
    let stmt_of_line: BTreeMap<u32, u32> = src
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let s = l.split("/* s").nth(1)?;
            let n: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
            Some((i as u32 + 1, n.parse().ok()?))
        })
        .collect();
    let mut m: BTreeMap<u32, BTreeSet<String>> = stmt_of_line.values().map(|s| (*s, BTreeSet::new())).collect();
    for t in ["t1", "t2", "t3", "t4"] {
        let v = json(&retest(dir, &["coverage", "--format", "json", "--tests", t], 0));
        let f = v["files"].as_array().unwrap().iter().find(|f| f["path"] == "grade.c").unwrap().clone();
        for l in f["lines"].as_array().unwrap() {
            let (line, n) = (l[0].as_u64().unwrap() as u32, l[1].as_u64().unwrap());
            if n > 0
                && let Some(s) = stmt_of_line.get(&line)
            {
                m.get_mut(s).unwrap().insert(t.to_string());
            }
        }
    }
    m
}

fn expect(rows: &[(u32, &[&str])]) -> BTreeMap<u32, BTreeSet<String>> {
    rows.iter().map(|(s, ts)| (*s, ts.iter().map(|t| t.to_string()).collect())).collect()
}

fn selection(dir: &Path) -> BTreeSet<String> {
    stdout(&retest(dir, &["select", "--format", "names"], 0)).lines().map(String::from).collect()
}

/// The selection recomputed from `dangerous_condition_edges` and the raw matrix.
fn selection_on_matrix(dir: &Path) -> BTreeSet<String> {
    let sj = json(&retest(dir, &["select", "--format", "json"], 0));
    let dangerous = sj["dangerous_condition_edges"].as_object().unwrap();
    assert!(!dangerous.is_empty());
    let m = raw_matrix(dir);
    m["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["state"] != "ok"
                || dangerous.iter().any(|(k, d)| {
                    let covered = t["units"][k].as_array().cloned().unwrap_or_default();
                    d.as_array().unwrap().iter().any(|e| covered.contains(e))
                })
        })
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn raw_matrix(dir: &Path) -> serde_json::Value {
    let mut v = json(&retest(dir, &["coverage", "--format", "matrix"], 0));
    v["snapshot"] = serde_json::Value::Null;
    v
}

/// A fresh copy of the project at `src`, fully rerun: the ground truth.
fn rerun_all(src: &str) -> serde_json::Value {
    let d = project(src);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    raw_matrix(d.path())
}

#[test]
fn grade_v0_v1_v2_matrices_and_selections_match_the_paper() {
    let d = project(V0);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    let all: &[&str] = &["t1", "t2", "t3", "t4"];
    // Fig. 1
    assert_eq!(
        matrix(d.path()),
        expect(&[
            (1, all),
            (2, all),
            (3, &["t1", "t2"]),
            (4, &["t1"]),
            (5, &["t2"]),
            (6, &["t3", "t4"]),
            (7, &["t3"]),
            (8, &["t4"]),
            (9, all),
            (10, all)
        ])
    );
    // v0 → v1: MOD-DejaVu selects t3 and t4; RECOVER reruns them only
    write_version(d.path(), V1);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(d.path()), BTreeSet::from(["t3".to_string(), "t4".to_string()]));
    assert_eq!(selection_on_matrix(d.path()), selection(d.path()), "dangerous_condition_edges select the same");
    let out = stdout(&retest(d.path(), &["run", "--selected"], 0));
    assert!(out.contains("ran 2 of 4 tests"), "{out}");
    // Fig. 2, updated coverage
    assert_eq!(
        matrix(d.path()),
        expect(&[
            (1, all),
            (2, all),
            (3, &["t1", "t2"]),
            (4, &["t1"]),
            (5, &["t2"]),
            (6, &["t3", "t4"]),
            (7, &[]),
            (8, &["t3", "t4"]),
            (9, &["t3"]),
            (10, &["t4"]),
            (11, all),
            (12, all)
        ])
    );
    assert_eq!(raw_matrix(d.path()), rerun_all(V1), "v1: the recomputed matrix equals a full rerun");
    // v1 → v2: with the updated matrix the selection is {t3, t4}, not {t4}
    write_version(d.path(), V2);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(d.path()), BTreeSet::from(["t3".to_string(), "t4".to_string()]));
    assert_eq!(selection_on_matrix(d.path()), selection(d.path()));
    retest(d.path(), &["run", "--selected"], 0);
    // Fig. 3, updated coverage
    assert_eq!(
        matrix(d.path()),
        expect(&[
            (1, all),
            (2, all),
            (3, &["t1", "t2"]),
            (4, &["t1"]),
            (5, &["t2"]),
            (6, &["t3", "t4"]),
            (7, &[]),
            (8, &["t3", "t4"]),
            (9, &[]),
            (10, &["t3", "t4"]),
            (11, all),
            (12, all)
        ])
    );
    assert_eq!(raw_matrix(d.path()), rerun_all(V2), "v2: the recomputed matrix equals a full rerun");
}

#[test]
fn bundled_changes_recover_exactly() {
    for change in ["brake-check", "throttle-gain", "gear-table"] {
        let a = example_copy();
        baseline(a.path());
        let b = example_copy();
        baseline(b.path());
        apply_change(a.path(), change);
        apply_change(b.path(), change);
        // some selected tests fail on these changes: exit 1, coverage still recorded
        retest(a.path(), &["run", "--selected", "--selective-probes", "-j2"], 1);
        retest(b.path(), &["run", "-j2"], 1);
        assert_eq!(raw_matrix(a.path()), raw_matrix(b.path()), "{change}");
    }
}

#[test]
fn an_interrupted_run_selected_leaves_the_baseline_usable() {
    let d = project(V0);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    let before = raw_matrix(d.path());
    write_version(d.path(), V1);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    // a build command that fails midway: nothing may advance
    let o = retest(d.path(), &["run", "--selected", "--selective-probes", "--build", "make -s && false"], 5);
    assert!(stderr(&o).contains("rebuild failed"), "{}", stderr(&o));
    assert_eq!(raw_matrix(d.path()), before, "the old baseline is intact");
    assert_eq!(selection(d.path()), BTreeSet::from(["t3".to_string(), "t4".to_string()]));
    // and a later run completes
    retest(d.path(), &["run", "--selected"], 0);
    assert_eq!(raw_matrix(d.path()), rerun_all(V1));
}

#[test]
fn run_selected_with_nothing_to_run_does_not_rebuild() {
    let d = project(V0);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    let lines = |d: &Path| -> Vec<u64> {
        let v = json(&retest(d, &["coverage", "--format", "json", "--tests", "t1"], 0));
        let f = v["files"].as_array().unwrap().iter().find(|f| f["path"] == "grade.c").unwrap().clone();
        f["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l[1].as_u64().unwrap() > 0)
            .map(|l| l[0].as_u64().unwrap())
            .collect()
    };
    let before = lines(d.path());
    // a comment line moves every line but changes no statement: no test to rerun
    let v0_moved = format!("/* moved down a line */\n{V0}");
    write_version(d.path(), &v0_moved);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(d.path()), BTreeSet::new());
    let o = retest(d.path(), &["run", "--selected", "--build", "touch rebuilt && make -s"], 0);
    assert!(stdout(&o).contains("ran 0 of 4 tests"), "{}", stdout(&o));
    assert!(!d.path().join("rebuilt").exists(), "no rebuild when no test is to run");
    assert_eq!(raw_matrix(d.path()), rerun_all(&v0_moved), "the carried coverage is what a full rerun records");
    let moved: Vec<u64> = before.iter().map(|l| l + 1).collect();
    assert_eq!(lines(d.path()), moved, "the new version is the baseline");
}

/// Per test name and unit key: what the baseline's matrix recorded beyond edges.
fn recordings(dir: &Path) -> BTreeMap<(String, String), retest_store::Recorded> {
    let store = retest_store::Store::open(&retest_store::Store::dir_for(dir)).unwrap();
    let base = store.baseline().unwrap().unwrap();
    let keys: BTreeMap<_, _> = store.snapshot_units(base).unwrap().into_iter().map(|u| (u.unit, u.key)).collect();
    let mut out = BTreeMap::new();
    for t in store.tests().unwrap() {
        for (u, r) in store.test_recorded(base, t.id).unwrap() {
            out.insert((t.name.clone(), keys[&u].clone()), r);
        }
    }
    out
}

#[test]
fn mcdc_evaluations_and_paths_recover_exactly() {
    for change in ["brake-check", "gear-table"] {
        let (a, b) = (example_copy(), example_copy());
        for d in [a.path(), b.path()] {
            retest(d, &["init"], 0);
            retest(d, &["build", "--mcdc", "--paths", "--", "make", "-s", "-j2"], 0);
            retest(d, &["run", "-j2"], 0);
        }
        let before = recordings(a.path());
        assert!(before.values().any(|r| !r.mcdc.is_empty()) && before.values().any(|r| !r.paths.is_empty()));
        apply_change_with(a.path(), change, &["--mcdc", "--paths"]);
        apply_change_with(b.path(), change, &["--mcdc", "--paths"]);
        let out = stdout(&retest(a.path(), &["run", "--selected", "--selective-probes", "-j2"], 1));
        assert!(!out.contains(&format!("ran {n} of {n}", n = before.len())), "{out}");
        retest(b.path(), &["run", "-j2"], 1);
        assert_eq!(raw_matrix(a.path()), raw_matrix(b.path()), "{change}: edges");
        assert_eq!(recordings(a.path()), recordings(b.path()), "{change}: evaluations and paths");
    }
}

#[test]
fn full_probes_run_on_the_current_build_without_rebuilding() {
    let d = project(V0);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    // the tests come from the universe file the first run names, and later
    // commands find it without the flag
    std::fs::write(d.path().join("retest.toml"), "").unwrap();
    std::fs::write(d.path().join("universe.txt"), "./grade 71 81\n./grade 71 71\n./grade 34 60\n./grade 52 50\n")
        .unwrap();
    retest(d.path(), &["run", "--universe", "universe.txt"], 0);
    write_version(d.path(), V1);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    // a build command that would fail proves that none runs
    let out = stdout(&retest(d.path(), &["run", "--selected", "--full-probes", "--build", "false"], 0));
    assert!(out.contains("(full instrumentation)") && out.contains("of 4 tests"), "{out}");
    let recovered = raw_matrix(d.path());
    retest(d.path(), &["run"], 0);
    assert_eq!(recovered, raw_matrix(d.path()), "equal to a full rerun of the same universe");
}

/// The Grade project with slow tests (each sleeps `ms` first), at v0 with its
/// baseline recorded, then v1 built: ready for `run --selected`.
fn slow_project_at_v1(ms: u32) -> tempfile::TempDir {
    let d = project(V0);
    let mut toml = String::new();
    for (t, a, b) in [("t1", 71, 81), ("t2", 71, 71), ("t3", 34, 60), ("t4", 52, 50)] {
        toml.push_str(&format!(
            "[[test]]\nname = \"{t}\"\ncmd = \"sleep {} && ./grade {a} {b}\"\n\n",
            f64::from(ms) / 1000.0
        ));
    }
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run", "-j4"], 0);
    write_version(d.path(), V1);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    d
}

/// When an interruption comes: so many ms after `retest run --selected` started,
/// or after it advanced the baseline (it then rebuilds with full instrumentation).
#[derive(Clone, Copy, Debug)]
enum After {
    Start(u64),
    Advance(u64),
}

/// `retest run --selected` in its own process group, killed (the whole group, as a
/// terminal's Ctrl-C or a CI runner's cancel does) with `signal` at `after`.
fn interrupt_run_selected(dir: &Path, build: &str, signal: &str, after: After) {
    use std::os::unix::process::CommandExt;
    let store = retest_store::Store::open(&retest_store::Store::dir_for(dir)).unwrap();
    let baseline = store.baseline().unwrap();
    let mut child = std::process::Command::new(retest_bin())
        .args(["run", "--selected", "--selective-probes", "-j1", "--build", build])
        .current_dir(dir)
        .env("CI", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let ms = match after {
        After::Start(ms) => ms,
        After::Advance(ms) => {
            // however loaded the machine, this point comes after the advance
            while store.baseline().unwrap() == baseline {
                assert!(child.try_wait().unwrap().is_none(), "run --selected ended without advancing the baseline");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            ms
        }
    };
    std::thread::sleep(std::time::Duration::from_millis(ms));
    let pgid = format!("-{}", child.id());
    let kill = |sig: &str| {
        let _ =
            std::process::Command::new("kill").args([sig, "--", &pgid]).stderr(std::process::Stdio::null()).status();
    };
    kill(signal);
    let _ = child.wait();
    // whatever of the group outlived the signal (SIGINT spares tests in their own groups)
    std::thread::sleep(std::time::Duration::from_millis(400));
    kill("-KILL");
}

/// After `run --selected` was interrupted at `at` in the Grade project at v1:
/// the store holds the old baseline (and then `select` works and, with
/// `retry_first`, a retried `run --selected` is exact) or an exact new one;
/// whatever the objects and the program were left in, a plain build and full run
/// record exact coverage; and the next version recovers exactly. Returns whether
/// the baseline had advanced. `want`: full reruns of v1 and v2.
fn check_after_interruption(
    d: &Path,
    before: &serde_json::Value,
    want: &(serde_json::Value, serde_json::Value),
    at: &str,
    retry_first: bool,
) -> bool {
    let (want_v1, want_v2) = want;
    let now = raw_matrix(d);
    let advanced = now != *before;
    if advanced {
        assert_eq!(now, *want_v1, "{at}: the advanced baseline is exact");
    } else {
        assert_eq!(
            selection(d),
            BTreeSet::from(["t3".to_string(), "t4".to_string()]),
            "{at}: select works on the old baseline"
        );
        if retry_first {
            retest(d, &["run", "--selected", "--build", "make -s"], 0);
            assert_eq!(raw_matrix(d), *want_v1, "{at}: a later run --selected is exact");
        }
    }
    retest(d, &["build", "--", "make", "-s"], 0);
    retest(d, &["run", "-j4"], 0);
    assert_eq!(raw_matrix(d), *want_v1, "{at}: a full run after the interruption");
    write_version(d, V2);
    retest(d, &["build", "--", "make", "-s"], 0);
    retest(d, &["run", "--selected", "-j4"], 0);
    assert_eq!(raw_matrix(d), *want_v2, "{at}: the next step recovers exactly");
    advanced
}

#[test]
fn run_selected_interrupted_at_any_point_leaves_the_old_baseline_or_an_exact_new_one() {
    let want = (rerun_all(V1), rerun_all(V2));
    // build 0.6 s (sleeps around make), T′ = {t3, t4} 2 × 0.4 s at -j1, then the
    // baseline advances and the objects are rebuilt fully (another 0.6 s: the
    // interruptions 350 ms after the advance come during that rebuild's make)
    let build = "sleep 0.3 && make -s && sleep 0.3";
    let points = [
        ("-KILL", After::Start(150)),
        ("-KILL", After::Start(450)),
        ("-KILL", After::Start(1000)),
        ("-KILL", After::Start(1500)),
        ("-KILL", After::Advance(350)),
        ("-INT", After::Start(450)),
        ("-INT", After::Start(1000)),
        ("-INT", After::Advance(350)),
    ];
    for (signal, after) in points {
        // afterwards: retry `run --selected` first, or first a plain build and full run
        for retry_first in [true, false] {
            let d = slow_project_at_v1(400);
            let before = raw_matrix(d.path());
            interrupt_run_selected(d.path(), build, signal, after);
            let at = format!("{signal} {after:?} (retry first: {retry_first})");
            let advanced = check_after_interruption(d.path(), &before, &want, &at, retry_first);
            if let After::Advance(_) = after {
                assert!(advanced, "{at}: the baseline had advanced");
            }
        }
    }
}

/// A stand-in for the compiler: on the `KILL_AT`-th run of it that writes
/// `KILL_TARGET` it kills its whole process group — `retest`, the build, `make`,
/// the wrapper — as SIGKILL of a cancelled job would: `before` writing the file,
/// with the file `half` written, or `after` writing it whole (before the wrapper
/// records the unit).
const KILLING_CC: &str = r#"#!/bin/sh
for a; do [ "$prev" = -o ] && out=$a; prev=$a; done
if [ "$out" = "$KILL_TARGET" ]; then
    n=$(( $(cat killcc.count 2>/dev/null || echo 0) + 1 )); echo $n > killcc.count
    if [ "$n" = "$KILL_AT" ]; then
        case $KILL_WHEN in
            half) printf '\177ELF' > "$out" ;;
            after) cc "$@" ;;
        esac
        kill -KILL 0
    fi
fi
exec cc "$@"
"#;

#[test]
fn run_selected_killed_while_the_build_writes_leaves_nothing_half_written_behind() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    // the selective rebuild compiles main.o (grade.c's plan would keep every
    // probe: its object stays), then links grade; after the tests and the
    // baseline's advance, the full rebuild does the same again
    let windows = [
        ("main.o", 1, "half", "the selective object half written"),
        ("main.o", 1, "after", "the selective object written but not recorded"),
        ("grade", 1, "half", "the program half written, its objects selective and recorded"),
        ("grade", 1, "before", "the objects recorded, the program not linked yet"),
        ("grade", 2, "half", "the program half written by the full rebuild"),
    ];
    let want = (rerun_all(V1), rerun_all(V2));
    std::thread::scope(|scope| {
        for (target, n, when, what) in windows {
            // after the baseline advanced there is nothing to retry
            for retry_first in if n == 1 { vec![true, false] } else { vec![false] } {
                let want = &want;
                scope.spawn(move || {
                    let d = slow_project_at_v1(0);
                    let cc = d.path().join("killcc");
                    std::fs::write(&cc, KILLING_CC).unwrap();
                    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
                    let before = raw_matrix(d.path());
                    let status = std::process::Command::new(retest_bin())
                        .args(["run", "--selected", "--selective-probes", "-j1", "--build", "make -s"])
                        .current_dir(d.path())
                        .env("CI", "1")
                        .env_remove("RETEST_STORE")
                        .env("CC", &cc)
                        .env("KILL_TARGET", target)
                        .env("KILL_AT", n.to_string())
                        .env("KILL_WHEN", when)
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .process_group(0)
                        .status()
                        .unwrap();
                    assert_eq!(status.signal(), Some(9), "{what}: killed");
                    let at = format!("killed with {what} (retry first: {retry_first})");
                    let advanced = check_after_interruption(d.path(), &before, want, &at, retry_first);
                    assert_eq!(advanced, n == 2, "{at}");
                });
            }
        }
    });
}

#[test]
fn a_changed_local_declaration_keeps_the_coverage_of_tests_that_do_not_use_it() {
    // `buf` is declared without an initialiser (the procedure's declaration node);
    // t1 stops before using it, so it is not selected, and its coverage through the
    // declaration node must carry over
    let src = |n: u32| {
        format!(
            "#include <stdio.h>\n#include <string.h>\nint main(int argc, char **argv)\n{{\n    static int calls;\n    char buf[{n}];\n    if (argc < 2)\n        return 1;\n    strncpy(buf, argv[1], 15);\n    buf[15] = 0;\n    calls++;\n    printf(\"%s %d\\n\", buf, calls);\n    return 0;\n}}\n"
        )
    };
    let setup = |n: u32| {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("p.c"), src(n)).unwrap();
        std::fs::write(d.path().join("Makefile"), "p: p.c\n\t$(CC) -O0 -o p p.c\n").unwrap();
        std::fs::write(
            d.path().join("retest.toml"),
            "[[test]]\nname = \"t1\"\ncmd = \"./p || true\"\n\n[[test]]\nname = \"t2\"\ncmd = \"./p hello\"\n",
        )
        .unwrap();
        retest(d.path(), &["init"], 0);
        retest(d.path(), &["build", "--", "make", "-s"], 0);
        retest(d.path(), &["run"], 0);
        d
    };
    let d = setup(16);
    write_newer(&d.path().join("p.c"), src(32));
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(d.path()), BTreeSet::from(["t2".to_string()]));
    retest(d.path(), &["run", "--selected"], 0);
    assert_eq!(raw_matrix(d.path()), raw_matrix(setup(32).path()));
}

#[test]
fn paths_recorded_on_a_study_subject_recover_exactly() {
    // bench/subjects/lexer, the first 140 tests, one relational mutation in main's
    // error handling; Ball–Larus paths and MC/DC evaluations recorded
    let subject = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/subjects/lexer");
    let universe: String = std::fs::read_to_string(subject.join("universe.txt"))
        .unwrap()
        .lines()
        .take(140)
        .map(|l| format!("{l}\n"))
        .collect();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [a.path(), b.path()] {
        for f in ["lexer.c", "Makefile"] {
            std::fs::copy(subject.join(f), d.join(f)).unwrap();
        }
        std::fs::write(d.join("universe.txt"), &universe).unwrap();
        std::os::unix::fs::symlink(subject.join("inputs"), d.join("inputs")).unwrap();
        retest(d, &["init"], 0);
        retest(d, &["build", "--mcdc", "--paths", "--", "make", "-s"], 0);
        retest(d, &["run", "--universe", "universe.txt", "-j2"], 1);
    }
    for d in [a.path(), b.path()] {
        let src = std::fs::read_to_string(d.join("lexer.c")).unwrap();
        assert!(src.contains("if (err != NULL) {"));
        write_newer(&d.join("lexer.c"), src.replacen("if (err != NULL) {", "if (err > NULL) {", 1));
        retest(d, &["build", "--mcdc", "--paths", "--", "make", "-s"], 0);
    }
    let out = stdout(&retest(a.path(), &["run", "--selected", "--universe", "universe.txt", "-j2"], 1));
    assert!(!out.contains("ran 140 of 140"), "{out}");
    retest(b.path(), &["run", "--universe", "universe.txt", "-j2"], 1);
    assert_eq!(raw_matrix(a.path()), raw_matrix(b.path()), "edges");
    assert_eq!(recordings(a.path()), recordings(b.path()), "evaluations and paths");
}

/// A project of one file `p.c` (built with `make`), its tests the `universe`
/// lines, the baseline recorded with `retest build OPTIONS`.
fn one_file_project(src: &str, universe: &[&str], options: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("p.c"), src).unwrap();
    std::fs::write(d.path().join("Makefile"), "p: p.c\n\t$(CC) -O0 -o p p.c\n").unwrap();
    std::fs::write(d.path().join("universe.txt"), universe.iter().map(|l| format!("{l}\n")).collect::<String>())
        .unwrap();
    retest(d.path(), &["init"], 0);
    retest(d.path(), &[&["build"][..], options, &["--", "make", "-s"]].concat(), 0);
    retest(d.path(), &["run", "--universe", "universe.txt"], 0);
    d
}

/// Writes the next version of `p.c` and builds it.
fn next_version(dir: &Path, src: &str, options: &[&str]) {
    write_newer(&dir.join("p.c"), src);
    retest(dir, &[&["build"][..], options, &["--", "make", "-s"]].concat(), 0);
}

/// The matrix of a fresh store's full run of `src` (edges and recordings).
fn fresh_run(
    src: &str,
    universe: &[&str],
    options: &[&str],
) -> (serde_json::Value, BTreeMap<(String, String), retest_store::Recorded>) {
    let d = one_file_project(src, universe, options);
    (raw_matrix(d.path()), recordings(d.path()))
}

/// `a` and `b` change at their first statement (so every test that calls one
/// takes a dangerous edge at once); `a` is called on one route through the
/// condition of `main`'s `if`, `b` on one route through a `?:`.
const CALLS: &str = "#include <stdio.h>
#include <stdlib.h>
int a(int x)
{
    if (x > 5)
        return 1;
    return 0;
}
int b(int x)
{
    if (x > 3)
        return 2;
    return 3;
}
int main(int argc, char **argv)
{
    int x = atoi(argv[1]);
    int r = 0;
    if (argc > 2 && a(x))
        r = 1;
    printf(\"r=%d\\n\", r);
    printf(\"b=%d\\n\", x > 2 ? b(x) : 0);
    return 0;
}
";

const CALLS_TESTS: [&str; 4] = ["./p 1", "./p 7", "./p 1 y", "./p 7 y"];

/// v1 changes a; v2 reverts it and changes b (a fix replacing a faulty
/// change). t1 and t2 pass the `if` that calls a without calling it (argc is
/// 2); t1 passes the statement that calls b without calling it (x is 1).
fn calls_versions() -> [String; 2] {
    [CALLS.replace("x > 5", "x > 6"), CALLS.replace("x > 3", "x > 4")]
}

#[test]
fn a_fix_that_reverts_a_change_keeps_the_coverage_after_a_call_made_on_some_routes() {
    for probes in ["--full-probes", "--selective-probes"] {
        let d = one_file_project(CALLS, &CALLS_TESTS, &[]);
        for (k, v) in calls_versions().iter().enumerate() {
            next_version(d.path(), v, &[]);
            retest(d.path(), &["run", "--selected", probes, "--universe", "universe.txt"], 0);
            assert_eq!(
                raw_matrix(d.path()),
                fresh_run(v, &CALLS_TESTS, &[]).0,
                "{probes}: v{} recovered exactly",
                k + 1
            );
        }
    }
}

#[test]
fn after_a_fix_that_reverts_a_change_an_edit_after_the_call_leaves_out_no_test() {
    // v3 edits the line after the call of b: every test prints it, none may be left out
    let d = one_file_project(CALLS, &CALLS_TESTS, &[]);
    for v in calls_versions() {
        next_version(d.path(), &v, &[]);
        retest(d.path(), &["run", "--selected", "--full-probes", "--universe", "universe.txt"], 0);
    }
    let v3 = calls_versions()[1].replace("b=%d", "b = %d");
    next_version(d.path(), &v3, &[]);
    assert_eq!(selection(d.path()), ["t1", "t2", "t3", "t4"].map(String::from).into());
    let audit = json(&retest(d.path(), &["audit", "--format", "json", "--universe", "universe.txt"], 0));
    assert_eq!(audit["changed"].as_object().map(|c| c.len()), Some(4), "{audit}");
    assert_eq!(audit["missed"], serde_json::json!([]));
}

/// `init` runs before `divide`, whose change it cannot see: selective
/// instrumentation leaves it without probes. In v0 `divide(0)` faults; in v1
/// it does not.
const STOPS: &str = "#include <stdio.h>
#include <stdlib.h>
static int mode;
static void init(int a, int b)
{
    if (a > 2) {
        if (b > 0)
            mode = 4;
        else
            mode = 3;
    } else {
        if (b > 0)
            mode = 2;
        else
            mode = 1;
    }
    printf(\"mode %d\\n\", mode);
}
static int divide(int x)
{
    int *p = NULL;
    if (x == 0)
        return *p;
    return 100 / x;
}
int main(int argc, char **argv)
{
    init(argc, atoi(argv[1]));
    printf(\"%d\\n\", divide(atoi(argv[1])));
    return 0;
}
";

const STOPS_TESTS: [&str; 3] = ["./p 0 || true", "./p 5", "./p 0 x || true"];

#[test]
fn tests_stopped_part_way_recover_exactly_on_selective_probes() {
    // the coverage of a run stopped part-way (here by SIGSEGV) also claims what
    // the stopped code may have run: in `init`, both branches of `a > 2` for
    // t1 and t3, though each took one. A run of v1, which does not fault,
    // claims nothing of the kind, and a run of v0 on a selectively
    // instrumented build would claim other edges than a fully instrumented one
    let faults = STOPS.to_string();
    let fixed = STOPS.replace("return *p;", "return p == NULL ? -1 : *p;");
    for (from, to, what) in [(&faults, &fixed, "the fault fixed"), (&fixed, &faults, "a fault brought in")] {
        let d = one_file_project(from, &STOPS_TESTS, &[]);
        next_version(d.path(), to, &[]);
        assert_eq!(selection(d.path()), BTreeSet::from(["t1".to_string(), "t3".to_string()]), "{what}");
        retest(d.path(), &["run", "--selected", "--selective-probes", "--universe", "universe.txt"], 0);
        assert_eq!(raw_matrix(d.path()), fresh_run(to, &STOPS_TESTS, &[]).0, "{what}: recovered exactly");
    }
}

/// `retest run --selected` in its own process group, given Ctrl-C (SIGINT to
/// the group, as a terminal sends it) once `mark` exists: its exit status and
/// stderr.
fn ctrl_c_run_selected_when(dir: &Path, build: &str, mark: &str) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    let child = std::process::Command::new(retest_bin())
        .args(["run", "--selected", "--selective-probes", "-j1", "--build", build])
        .current_dir(dir)
        .env("CI", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !dir.join(mark).exists() {
        assert!(started.elapsed().as_secs() < 60, "the build never reached {mark}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let st = std::process::Command::new("kill").args(["-INT", "--", &format!("-{}", child.id())]).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Ctrl-C during `run --selected`'s rebuild — before the build made anything,
/// or after it recompiled and relinked with selective probes — leaves the
/// previous build in place: the objects, the program and the store as they
/// were, so a plain `retest run` records exact coverage.
#[test]
fn ctrl_c_during_the_rebuild_leaves_the_previous_build_usable() {
    let want = rerun_all(V1);
    for (build, mark) in
        [("touch started && sleep 5 && make -s", "started"), ("make -s && touch built && sleep 5", "built")]
    {
        let d = slow_project_at_v1(0);
        let dir = d.path();
        let before = raw_matrix(dir);
        let files: Vec<Vec<u8>> =
            ["grade", "grade.o", "main.o"].iter().map(|f| std::fs::read(dir.join(f)).unwrap()).collect();
        let (code, err) = ctrl_c_run_selected_when(dir, build, mark);
        assert_eq!(code, Some(130), "{build}: {err}");
        assert!(err.contains("interrupted during the selectively instrumented rebuild"), "{build}: {err}");
        assert!(err.contains("the previous build is back in place and the baseline stays snapshot 1"), "{err}");
        let now: Vec<Vec<u8>> =
            ["grade", "grade.o", "main.o"].iter().map(|f| std::fs::read(dir.join(f)).unwrap()).collect();
        assert!(now == files, "{build}: the program and its objects are the previous build's");
        assert_eq!(raw_matrix(dir), before, "{build}: the old baseline is intact");
        assert_eq!(selection(dir), BTreeSet::from(["t3".to_string(), "t4".to_string()]));
        let left: Vec<_> = std::fs::read_dir(dir.join(".retest/tmp"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("previous-"))
            .collect();
        assert!(left.is_empty(), "{build}: nothing kept aside is left");
        // no rebuild: the tests run on the previous build and record exact coverage
        let o = retest(dir, &["run", "-j4"], 0);
        assert!(!stderr(&o).contains("unknown"), "{build}: {}", stderr(&o));
        assert_eq!(raw_matrix(dir), want, "{build}: a plain run on the previous build");
    }
}

/// Selective instrumentation never plans more probes than full
/// instrumentation: a change at the start of `main` reaches everything.
#[test]
fn selective_instrumentation_never_keeps_more_probes_than_full() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    let src = std::fs::read_to_string(dir.join("main.c")).unwrap();
    write_newer(&dir.join("main.c"), src.replace("    int i, rc = 0;", "    int i, rc = 0 * 1;"));
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let o = retest(dir, &["run", "--selected", "-j2"], 0);
    let e = stderr(&o);
    assert!(e.contains("selective instrumentation would remove none of the"), "{e}");
    let out = stdout(&o);
    let probes = out.split("; probes ").nth(1).unwrap();
    let (keep, rest) = probes.split_once(" of ").unwrap();
    let full = rest.split_whitespace().next().unwrap();
    assert!(keep.parse::<u32>().unwrap() <= full.parse::<u32>().unwrap(), "{out}");
}

/// `run --selected` weighs the cycle by what the store recorded: when the
/// selected test takes nearly all of the suite's time, the whole suite runs
/// on the current build (every test's coverage measured, none carried over),
/// and says why; when the time fewer probes would save is less than two
/// rebuilds cost, the tests run on the current build with no rebuild, and it
/// says why. Either way the matrix equals a full rerun's.
#[test]
fn run_selected_never_costs_more_than_it_saves() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let prog = "#include <stdio.h>\n#include <string.h>\n\
                int slow_part(int v) { return v * 2; }\n\
                int fast_part(int v) { return v + 1; }\n\
                int main(int argc, char **argv) {\n\
                    if (argc > 1 && strcmp(argv[1], \"slow\") == 0) printf(\"%d\\n\", slow_part(3));\n\
                    else printf(\"%d\\n\", fast_part(3));\n\
                    return 0;\n}\n";
    std::fs::write(dir.join("p.c"), prog).unwrap();
    make_project(dir, "p: p.c\n\t$(CC) -O1 -o p p.c\n", &[("slow", "./p slow && sleep 1"), ("fast", "./p fast")]);
    retest(dir, &["run"], 0);
    // the slow test's code changes: it is nearly all of the suite's time
    write_newer(&dir.join("p.c"), prog.replace("return v * 2;", "return v + v;"));
    retest(dir, &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(dir), BTreeSet::from(["slow".to_string()]));
    let o = retest(dir, &["run", "--selected"], 0);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(err.contains("running the whole suite: the tests to rerun take"), "{err}");
    assert!(
        out.contains("ran 2 of 2 tests (1 selected, the others because the whole suite costs little more)"),
        "{out}"
    );
    // the fast test's code changes: the slow one is not run, and no rebuild
    // pays for the little a selective build would save
    write_newer(
        &dir.join("p.c"),
        prog.replace("return v * 2;", "return v + v;").replace("return v + 1;", "return 1 + v;"),
    );
    retest(dir, &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(dir), BTreeSet::from(["fast".to_string()]));
    let o = retest(dir, &["run", "--selected"], 0);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.contains("ran 1 of 2 tests (1 selected)"), "{out}");
    assert!(out.contains("(full instrumentation)"), "{out}");
    assert!(!err.contains("rebuild with selective"), "{err}");
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    // a new test has nothing to carry over: the current build serves, and it says so
    let toml = std::fs::read_to_string(dir.join("retest.toml")).unwrap();
    std::fs::write(dir.join("retest.toml"), toml + "\n[[test]]\nname = \"new\"\ncmd = \"./p fast\"\n").unwrap();
    write_newer(
        &dir.join("p.c"),
        prog.replace("return v * 2;", "return v + v;").replace("return v + 1;", "return v + 1 + 0;"),
    );
    retest(dir, &["build", "--", "make", "-s"], 0);
    let err = stderr(&retest(dir, &["run", "--selected"], 0));
    assert!(
        err.contains("the tests run on the current, fully instrumented build (no rebuild): a test to rerun has no recorded coverage"),
        "{err}"
    );
}

/// The store's meta value `key` (empty when absent).
fn meta_value(dir: &Path, key: &str) -> String {
    let q = format!("SELECT value FROM meta WHERE key = '{key}'");
    let o = std::process::Command::new("sqlite3").arg(dir.join(".retest/store.db")).arg(q).output().unwrap();
    assert!(o.status.success(), "sqlite3 (installed by .ci/run): {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// Objects that `run --selected --keep-selective` leaves selectively
/// instrumented are listed (meta `selective_objects`) before their plan is
/// saved, and the next `retest build` recompiles exactly those with full
/// probes, reading no other unit (invariant
/// **only_listed_units_hold_selective_objects**); a plain run on that build
/// records what a fresh store's full run records.
#[test]
fn the_build_after_keep_selective_makes_the_listed_objects_full_again() {
    let d = slow_project_at_v1(0);
    let dir = d.path();
    assert_eq!(meta_value(dir, "selective_objects"), "[]", "nothing is selective after a build");
    retest(dir, &["run", "--selected", "--selective-probes", "--keep-selective", "-j4"], 0);
    let listed: Vec<String> = serde_json::from_str(&meta_value(dir, "selective_objects")).unwrap();
    assert!(!listed.is_empty());
    // make takes the selective objects as up to date; the build removes them first
    let b = stderr(&retest(dir, &["build", "--", "make", "-s"], 0));
    assert!(b.contains(&format!("{} translation unit(s) instrumented", listed.len())), "{listed:?}: {b}");
    assert_eq!(meta_value(dir, "selective_objects"), "[]");
    let again = stderr(&retest(dir, &["build", "--", "make", "-s"], 0));
    assert!(again.contains("nothing to compile: the build found every object up to date"), "{again}");
    let o = retest(dir, &["run", "-j4"], 0);
    assert!(!stderr(&o).contains("unknown"), "{}", stderr(&o));
    assert_eq!(raw_matrix(dir), rerun_all(V1));
}
