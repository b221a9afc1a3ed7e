//! RECOVER (004): `retest run --selected` keeps every test's coverage exact.
//! The paper's Grade example v0 → v1 → v2 with its test suite (Table 1), checking
//! the statement-coverage matrices of Figs. 1–3 after each step, and that every
//! recomputed matrix equals a full rerun bit for bit.

mod common;

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
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(dir.join("grade.c"), format!("void report(int grade);\n{src}")).unwrap();
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
    let o = retest(d.path(), &["run", "--selected", "--selective-probes", "--build", "make -s && false"], 1);
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
        assert!(out.contains("(selective instrumentation)"), "{out}");
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
    std::fs::write(d.path().join("universe.txt"), "./grade 71 81\n./grade 71 71\n./grade 34 60\n./grade 52 50\n").unwrap();
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
