//! The user's workflow on the bundled example, driving the real binary:
//! init → build with the wrapper → run (baseline) → change → select → audit.

use crate::common;

use std::collections::BTreeSet;

use common::*;

/// Tests whose expected output the change breaks, from the change's README.
fn failing_tests(change: &str) -> BTreeSet<String> {
    let readme = std::fs::read_to_string(example_dir().join("changes").join(change).join("README.md")).unwrap();
    // every test name the README mentions as failing looks like NN-name
    readme
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.len() > 3 && w.as_bytes()[0].is_ascii_digit() && w.as_bytes()[2] == b'-')
        .map(String::from)
        .collect()
}

fn selected(dir: &std::path::Path) -> (BTreeSet<String>, serde_json::Value) {
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let names = v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    (names, v)
}

#[test]
fn each_bundled_change_selects_a_safe_subset_with_reasons() {
    for change in ["brake-check", "throttle-gain", "gear-table"] {
        let d = example_copy();
        baseline(d.path());
        apply_change(d.path(), change);
        let (sel, v) = selected(d.path());
        assert_eq!(v["schema"], "retest.selection/1");
        assert_eq!(v["tests_total"], 40);
        let fail = failing_tests(change);
        assert!(!fail.is_empty(), "{change}: the README names failing tests");
        assert!(fail.is_subset(&sel), "{change}: failing tests {fail:?} must be selected, got {sel:?}");
        assert!(sel.len() < 40, "{change}: a local change does not select everything ({})", sel.len());
        for t in v["selected"].as_array().unwrap() {
            let r = &t["reasons"][0];
            assert!(r["text"].as_str().unwrap().contains(".c:"), "{change}: reason names file:line: {r}");
        }
        // the audit runs everything and confirms no miss
        let a = json(&retest(d.path(), &["audit", "--format", "json", "-j2"], 0));
        assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{change}: {a}");
        let changed: BTreeSet<String> = a["changed"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(changed, fail, "{change}: the audit sees exactly the README's failing tests change");
        // every algorithm on the same change: nested selections, no misses against the audit
        let c = json(&retest(d.path(), &["compare-algorithms", "--format", "json"], 0));
        assert_eq!(c["schema"], "retest.compare/1");
        let audited: BTreeSet<String> =
            c["changed"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        assert_eq!(audited, fail, "{change}: compare-algorithms reads the audit");
        let rows: std::collections::BTreeMap<String, (BTreeSet<String>, usize)> = c["algorithms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let names = r["selected_tests"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string());
                (r["algorithm"].as_str().unwrap().to_string(), (names.collect(), r["missed"].as_array().unwrap().len()))
            })
            .collect();
        assert_eq!(rows["dejavu"].0, sel, "{change}");
        assert!(rows["dejavu"].0.is_subset(&rows["function"].0), "{change}: {c}");
        assert!(rows["function"].0.is_subset(&rows["file"].0), "{change}: {c}");
        assert!(rows.values().all(|(_, missed)| *missed == 0), "{change}: {c}");
    }
}

#[test]
fn a_declaration_change_selects_only_tests_reaching_a_use() {
    let d = example_copy();
    baseline(d.path());
    apply_change(d.path(), "gear-table");
    let (_, v) = selected(d.path());
    let kinds: BTreeSet<&str> = v["selected"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["reasons"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, BTreeSet::from(["declaration"]), "the gear table is a global: {v}");
}

#[test]
fn explain_says_why_and_why_not() {
    let d = example_copy();
    baseline(d.path());
    apply_change(d.path(), "brake-check");
    let yes = stdout(&retest(d.path(), &["explain", "22-brake-hold-boundary"], 0));
    assert!(yes.contains("is selected") && yes.contains("controller.c:") && yes.contains("brake_hold > 1"), "{yes}");
    let (sel, _) = selected(d.path());
    let all = test_names(d.path());
    let not = all.iter().find(|t| !sel.contains(*t)).unwrap();
    let no = stdout(&retest(d.path(), &["explain", not], 0));
    assert!(no.contains("is not selected"), "{no}");
    let e = stderr(&retest(d.path(), &["explain", "no-such-test"], 2));
    assert!(e.starts_with("error: no test named `no-such-test`"), "{e}");
}

#[test]
fn names_and_ctest_formats() {
    let d = example_copy();
    baseline(d.path());
    apply_change(d.path(), "brake-check");
    let names = stdout(&retest(d.path(), &["select", "--format", "names"], 0));
    let (sel, _) = selected(d.path());
    assert_eq!(names.lines().map(String::from).collect::<BTreeSet<_>>(), sel);
    let re = stdout(&retest(d.path(), &["select", "--format", "ctest"], 0));
    assert!(re.trim().starts_with("^(") && re.trim().ends_with(")$") && re.contains("22-brake-hold-boundary"));
}

/// No store and no baseline are errors; with nothing built since the
/// baseline, the tests' definitions and files are compared (nothing changed:
/// nothing selected), but a source edited since the build stops the
/// selection with the file's name.
#[test]
fn missing_baseline_and_sources_not_rebuilt_are_clear_errors() {
    let d = example_copy();
    let e = stderr(&retest(d.path(), &["select"], 5));
    assert!(e.starts_with("error: no retest store"), "{e}");
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    let e = stderr(&retest(d.path(), &["select"], 5));
    assert!(e.contains("no baseline") && e.contains("retest run"), "{e}");
    retest(d.path(), &["run", "-j2"], 0);
    let out = stdout(&retest(d.path(), &["select"], 0));
    assert!(out.starts_with("0 of 40 tests selected") && out.contains("nothing built since"), "{out}");
    let h = d.path().join("config.h");
    let text = std::fs::read_to_string(&h).unwrap();
    std::fs::write(&h, format!("{text}\n/* edited */\n")).unwrap();
    let e = stderr(&retest(d.path(), &["select"], 5));
    assert!(e.starts_with("error: config.h changed since the newest build") && e.contains("retest build"), "{e}");
    std::fs::write(&h, text).unwrap();
    retest(d.path(), &["select"], 0);
}

#[test]
fn a_store_from_a_newer_retest_is_refused() {
    let d = example_copy();
    retest(d.path(), &["init"], 0);
    let db = d.path().join(".retest/store.db");
    let st = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("UPDATE meta SET value = '99' WHERE key = 'schema_version';")
        .status()
        .unwrap();
    assert!(st.success());
    let e = stderr(&retest(d.path(), &["coverage"], 5));
    assert!(e.contains("newer retest") && e.contains("upgrade retest"), "{e}");
}

#[test]
fn a_source_that_no_longer_parses_selects_its_tests_with_a_warning() {
    let d = example_copy();
    baseline(d.path());
    // a compilation database for the current sources, then break one of them
    let mut cmds = Vec::new();
    for f in ["main.c", "parse.c", "commands.c", "controller.c", "throttle.c", "report.c"] {
        cmds.push(serde_json::json!({
            "directory": d.path(),
            "file": f,
            "arguments": ["cc", "-O0", "-g", "-Wall", "-Wextra", "-c", "-o", f.replace(".c", ".o"), f],
        }));
    }
    std::fs::write(d.path().join("compile_commands.json"), serde_json::to_string(&cmds).unwrap()).unwrap();
    let src = std::fs::read_to_string(d.path().join("throttle.c")).unwrap();
    std::fs::write(d.path().join("throttle.c"), src.replacen("#include", "#include \"no-such-header.h\"\n#include", 1))
        .unwrap();
    let o = retest(d.path(), &["select", "-p", "compile_commands.json", "--format", "json"], 0);
    assert!(stderr(&o).contains("warning: throttle.c@throttle.o: cannot be analysed"), "{}", stderr(&o));
    let v = json(&o);
    let selected = v["selected"].as_array().unwrap();
    assert!(!selected.is_empty());
    // every selected test entered a function of the unit that cannot be analysed
    for t in selected {
        let kinds: Vec<&str> = t["reasons"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
        assert!(kinds.contains(&"unanalysable"), "{}: {kinds:?}", t["name"]);
    }
    // and every test that entered one is selected
    let baseline_cov = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
    let throttle = baseline_cov["files"].as_array().unwrap().iter().find(|f| f["path"] == "throttle.c").unwrap();
    let entered = throttle["functions"].as_array().unwrap().iter().map(|f| f["tests"].as_u64().unwrap()).max().unwrap();
    assert!(selected.len() as u64 >= entered, "{} selected, {entered} entered throttle.c", selected.len());
}

#[test]
fn coverage_reports() {
    let d = example_copy();
    baseline(d.path());
    let text = stdout(&retest(d.path(), &["coverage"], 0));
    assert!(
        text.contains("coverage of 40 tests") && text.contains("controller.c") && text.contains("engage_blocker"),
        "{text}"
    );
    let v = json(&retest(d.path(), &["coverage", "--format", "json", "--tests", "01-basic,21-brake"], 0));
    assert_eq!(v["schema"], "retest.coverage/1");
    assert_eq!(v["tests"], 2);
    let lcov = stdout(&retest(d.path(), &["coverage", "--format", "lcov"], 0));
    assert!(lcov.contains("SF:controller.c") && lcov.contains("end_of_record") && lcov.contains("BRDA:"));
    let e = stderr(&retest(d.path(), &["coverage", "--tests", "nope"], 2));
    assert!(e.contains("test `nope` has no recorded coverage"), "{e}");
}

#[test]
fn the_demo_runs_on_a_fresh_scratch_copy() {
    let d = tempfile::tempdir().unwrap();
    let o = retest(d.path(), &["demo", "-j2"], 0);
    let out = stdout(&o);
    assert!(out.contains("24 of 40 tests selected"), "{out}");
    assert!(out.contains("the change broke 22-brake-hold-boundary: selection caught it"), "{out}");
    assert!(out.contains(" is selected: ") && out.contains(" is not selected: "), "explain, both ways: {out}");
    assert!(out.contains("changed behaviour") && out.contains("; 0 missed"), "the audit: {out}");
    let e = stderr(&retest(d.path(), &["demo", "--change", "nope"], 2));
    assert!(e.contains("no bundled change named `nope`") && e.contains("brake-check"), "{e}");
}

/// Objects left from before `retest init` are code the store has no record of:
/// a run on them must not record empty coverage that no later change selects.
#[test]
fn objects_the_store_has_no_record_of_are_refused_or_make_coverage_unknown() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    let tests = test_names(dir).len();
    // a new store; `make` finds everything up to date, so nothing goes through the wrapper
    std::fs::remove_dir_all(dir.join(".retest")).unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    let out = retest(dir, &["run"], 5);
    assert!(stderr(&out).contains("holds no translation unit built with the wrapper"), "{}", stderr(&out));
    // one unit rebuilt: the others still run objects of the old store
    let parse = dir.join("parse.c");
    write_newer(&parse, std::fs::read_to_string(&parse).unwrap() + "\n");
    retest(dir, &["build", "--", "make", "-s"], 0);
    let out = retest(dir, &["run"], 0);
    assert!(stdout(&out).contains(&format!("{tests} with unknown coverage")), "{}", stdout(&out));
    assert!(stderr(&out).contains("this store has no record of"), "{}", stderr(&out));
}

/// A link failure leaves no program: every test fails without running any
/// instrumented code. That run is no baseline (it would select nothing after
/// any change); a later run on a working build is.
#[test]
fn a_link_failure_is_not_recorded_as_a_baseline() {
    let d = example_copy();
    let dir = d.path();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2", "LDLIBS=-lno-such-library"], 2);
    assert!(!dir.join("cruise").exists());
    let o = retest(dir, &["run", "-j2"], 5);
    let e = stderr(&o);
    assert!(e.contains("without running any instrumented code") && e.contains("is not made the baseline"), "{e}");
    // the link fixed and a change made: nothing to compare against yet
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    apply_change(dir, "brake-check");
    let e = stderr(&retest(dir, &["select"], 5));
    assert!(e.contains("no baseline"), "{e}");
    retest(dir, &["audit"], 5);
    // on a working build the run is the baseline, and the change selects
    retest(dir, &["run", "-j2"], 1);
    let c = json(&retest(dir, &["coverage", "--format", "json"], 0));
    assert_eq!(c["tests"], 40);
    // a later link failure does not replace that baseline either
    let baseline = c["snapshot"].clone();
    std::fs::copy(example_dir().join("controller.c"), dir.join("controller.c")).unwrap();
    make_newest(&dir.join("controller.c"));
    std::fs::remove_file(dir.join("cruise")).unwrap();
    retest(dir, &["build", "--", "make", "-s", "LDLIBS=-lno-such-library"], 2);
    retest(dir, &["run", "-j2"], 5);
    assert_eq!(json(&retest(dir, &["coverage", "--format", "json"], 0))["snapshot"], baseline);
    let (sel, _) = selected(dir);
    assert!(sel.contains("22-brake-hold-boundary"), "{sel:?}");
}

/// A test whose command is not found, or that ran the program before and
/// does not now, does not "cover nothing": its coverage is unknown (and it
/// is always selected) with the reason.
#[test]
fn tests_that_run_no_instrumented_code_have_unknown_coverage() {
    let d = example_copy();
    let dir = d.path();
    std::fs::write(
        dir.join("suite.txt"),
        "sh tests/run.sh 01-basic\n./no-such-tool tests/01-basic.ev\n./cruise tests/02-comments.ev >/dev/null; true\n",
    )
    .unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let o = retest(dir, &["run", "--universe", "suite.txt"], 1);
    assert!(stdout(&o).contains("coverage recorded for snapshot 1; it is the baseline"), "{}", stdout(&o));
    let state = |dir: &std::path::Path| -> std::collections::BTreeMap<String, (String, String)> {
        let m = json(&retest(dir, &["coverage", "--format", "matrix"], 0));
        m["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let reason = t["reason"].as_str().unwrap_or("").to_string();
                (t["name"].as_str().unwrap().to_string(), (t["state"].as_str().unwrap().to_string(), reason))
            })
            .collect()
    };
    let m = state(dir);
    assert_eq!(m["t1"].0, "ok");
    assert_eq!(m["t2"].0, "unknown", "{m:?}");
    assert!(m["t2"].1.contains("not found") && m["t2"].1.contains("exit 127"), "{m:?}");
    assert_eq!(m["t3"].0, "ok");
    // the program gone: t3 still passes, without running it
    std::fs::remove_file(dir.join("cruise")).unwrap();
    let e = stderr(&retest(dir, &["run"], 5));
    assert!(e.contains("is not made the baseline"), "{e}");
    let m = state(dir);
    assert_eq!(m["t3"].0, "unknown", "{m:?}");
    assert!(m["t3"].1.contains("ran no instrumented code, where the last run"), "{m:?}");
    assert_eq!(m["t1"].0, "unknown", "{m:?}");
    assert!(m["t1"].1.contains("failed (exit 1) without running any instrumented code"), "{m:?}");
}

#[test]
fn an_empty_suite_is_refused() {
    let d = example_copy();
    let dir = d.path();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    std::fs::write(dir.join("blank.txt"), "\n   \n\n").unwrap();
    for f in ["empty.txt", "blank.txt"] {
        let e = stderr(&retest(dir, &["run", "--universe", f], 2));
        assert!(e.starts_with(&format!("error: no tests in {f}: it has no non-empty line")), "{e}");
    }
    std::fs::write(dir.join("empty.toml"), "").unwrap();
    retest(dir, &["run", "--tests", "empty.toml"], 2);
    let e = stderr(&retest(dir, &["coverage"], 5));
    assert!(e.contains("no coverage has been recorded"), "{e}");
}

#[test]
fn coverage_of_a_snapshot_without_coverage_is_an_error_not_100_percent() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    let e = stderr(&retest(dir, &["coverage", "--snapshot", "99", "--fail-under", "lines=90"], 2));
    assert!(e.contains("there is no snapshot 99 (the snapshots are 1 to 1)"), "{e}");
    apply_change(dir, "brake-check");
    let e = stderr(&retest(dir, &["coverage", "--snapshot", "2", "--fail-under", "lines=90"], 2));
    assert!(e.contains("snapshot 2 has no recorded coverage"), "{e}");
    retest(dir, &["coverage", "--snapshot", "1"], 0);
}

#[test]
fn run_with_a_filter_says_what_it_recorded() {
    let d = example_copy();
    let dir = d.path();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let out = stdout(&retest(dir, &["run", "--filter", "01-*"], 0));
    assert!(
        out.contains("coverage of 1 of 40 tests recorded for snapshot 1, which is not the baseline")
            && out.contains("there is no baseline yet"),
        "{out}"
    );
    retest(dir, &["run", "-j2"], 0);
    let out = stdout(&retest(dir, &["run", "--filter", "01-*"], 0));
    assert!(out.contains("coverage of 1 of 40 tests updated in the baseline (snapshot 1)"), "{out}");
    apply_change(dir, "brake-check");
    let out = stdout(&retest(dir, &["run", "--filter", "01-*"], 0));
    assert!(out.contains("recorded for snapshot 2") && out.contains("still compares against snapshot 1"), "{out}");
}

/// Builds since the baseline record into one open snapshot: an audit of an
/// earlier build of it says nothing about the current one.
#[test]
fn compare_algorithms_ignores_an_audit_of_an_earlier_build() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    apply_change(dir, "brake-check");
    retest(dir, &["audit", "-j2"], 0);
    let c = json(&retest(dir, &["compare-algorithms", "--format", "json"], 0));
    assert_eq!(c["changed"], serde_json::json!(["22-brake-hold-boundary"]));
    // the brake check undone, the throttle gain changed: the same snapshot, another build
    std::fs::copy(example_dir().join("controller.c"), dir.join("controller.c")).unwrap();
    apply_change(dir, "throttle-gain");
    let o = retest(dir, &["compare-algorithms", "--format", "json"], 0);
    let c = json(&o);
    assert_eq!(c["new_snapshot"], 2);
    assert!(c["changed"].is_null(), "{}", c["changed"]);
    assert!(c["algorithms"].as_array().unwrap().iter().all(|r| r["missed"].is_null()));
    assert!(stderr(&o).contains("ran on an earlier build"), "{}", stderr(&o));
    retest(dir, &["audit", "-j2"], 0);
    let c = json(&retest(dir, &["compare-algorithms", "--format", "json"], 0));
    let changed: BTreeSet<String> =
        c["changed"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
    assert_eq!(changed, failing_tests("throttle-gain"));
}

/// `--algorithm function` selects a test for running a changed function; its
/// reason says so, not that the test ran a changed line it never reached.
#[test]
fn function_level_reasons_say_the_test_ran_the_changed_function() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    let src = std::fs::read_to_string(dir.join("controller.c")).unwrap();
    write_newer(&dir.join("controller.c"), src.replace("return \"gear too low\";", "return \"gear is too low\";"));
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let (dejavu, _) = selected(dir);
    assert!(!dejavu.contains("01-basic"), "01-basic never reaches the changed line: {dejavu:?}");
    let out = stdout(&retest(dir, &["explain", "01-basic", "--algorithm", "function"], 0));
    assert!(
        out.contains("- ran `engage_blocker` (controller.c:60), which changed: controller.c:74 changed: `return \"gear too low\" ;`"),
        "{out}"
    );
    let v = json(&retest(dir, &["select", "--algorithm", "function", "--format", "json"], 0));
    let t = v["selected"].as_array().unwrap().iter().find(|t| t["name"] == "01-basic").unwrap();
    assert_eq!(t["reasons"].as_array().unwrap().len(), 1, "{t}");
    assert!(t["reasons"][0]["text"].as_str().unwrap().starts_with("ran `engage_blocker`"), "{t}");
    let out = stdout(&retest(dir, &["explain", "01-basic", "--algorithm", "file"], 0));
    assert!(out.contains("- ran code of controller.c ("), "{out}");
    // every function of the unit counts as changed for the same reason: one line, once
    let v = json(&retest(dir, &["select", "--algorithm", "file", "--format", "json"], 0));
    let t = v["selected"].as_array().unwrap().iter().find(|t| t["name"] == "01-basic").unwrap();
    let texts: Vec<&str> = t["reasons"].as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts.len(), 1, "{texts:#?}");
}

/// First contact: the wrapper explains itself and answers a build system's
/// probe of the compiler without a store; `retest init` keeps the store out
/// of git and says what to do when a store exists, damaged or not; a bad
/// `retest.toml` and a damaged store are one line each, naming the file and
/// the remedy, and no internal name.
#[test]
fn first_contact_messages_say_what_to_do() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let help = stdout(&retest(dir, &["cc", "--help"], 0));
    assert!(help.contains("compiler wrapper") && help.contains("retest build"), "{help}");
    let version = stdout(&retest(dir, &["cc", "--version"], 0));
    assert!(!version.trim().is_empty(), "the real compiler's --version");
    let e = stderr(&retest(dir, &["cc", "-c", "x.c"], 1));
    assert!(e.contains("no retest store") && e.contains("retest init"), "{e}");

    retest(dir, &["init"], 0);
    let ignore = std::fs::read_to_string(dir.join(".retest/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
    let e = stderr(&retest(dir, &["init"], 2));
    assert!(e.contains("already holds a retest store") && e.contains("use the existing one"), "{e}");

    std::fs::write(dir.join("retest.toml"), "[[test]]\nname = 1\n").unwrap();
    let e = stderr(&retest(dir, &["run", "--list"], 5));
    assert!(e.contains("retest.toml:2:8") && e.contains("README") && !e.contains("retest_run"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");

    std::fs::write(dir.join(".retest/store.db"), "not a database").unwrap();
    for args in [&["run"][..], &["init"][..]] {
        let e = stderr(&retest(dir, args, 5));
        assert!(e.contains("is damaged") && e.contains("aside") && e.contains("retest init"), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// `retest cfg` on a source that does not compile still prints the graph (the
/// parser's guess), and says so once per unit, alone or through a compilation
/// database: where the compiler finds the first error, what it is, and what to
/// do. A source the compiler accepts gets no warning.
#[test]
fn cfg_of_a_file_with_syntax_errors_says_where_the_first_one_is() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let good =
        "int f(int x)\n{\n    if (x > 0) {\n        return 1;\n    }\n    return 0;\n}\n\nint h(void) { return 3; }\n";
    let bad = good.replace("(x > 0)", "(x > 0").replace("return 3;", "return 3");
    std::fs::write(dir.join("bad.c"), &bad).unwrap();
    let db = format!(r#"[{{"directory": "{}", "file": "bad.c", "arguments": ["cc", "-c", "bad.c"]}}]"#, dir.display());
    std::fs::write(dir.join("compile_commands.json"), db).unwrap();
    let graph_or_summary =
        [(&["cfg", "bad.c"][..], "cfg f ("), (&["cfg", "-p", "compile_commands.json"][..], "2 functions")];
    for (args, printed) in graph_or_summary {
        let out = retest(dir, args, 0);
        assert!(stdout(&out).contains(printed), "{args:?}: {}", stdout(&out));
        let e = stderr(&out);
        let warned: Vec<&str> = e.lines().filter(|l| l.contains("the compiler rejects this code")).collect();
        assert_eq!(warned.len(), 1, "{args:?}: {e}");
        assert!(
            warned[0].starts_with("warning: bad.c:3:")
                // GCC quotes with ‘’ in a UTF-8 locale, Clang with ''
                && warned[0].contains("(expected ")
                && warned[0].contains("fix the error and run `retest cfg` again"),
            "{args:?}: {e}"
        );
    }
    std::fs::write(dir.join("bad.c"), good).unwrap();
    for args in [&["cfg", "bad.c"][..], &["cfg", "-p", "compile_commands.json"][..]] {
        let e = stderr(&retest(dir, args, 0));
        assert!(!e.contains("warning"), "{args:?}: {e}");
    }
}

/// An inline function of a header the build reaches through `-isystem` (a
/// vendored library's, say) gets no CFG, but a change to its body is a
/// change of its declaration: the tests that call it are selected, the
/// others not. (Its declaration was once its signature alone, and such a
/// change selected nothing while the test that called it failed.)
/// A source removed in the same change as a header it included: its unit is
/// carried into the new snapshot as it was and never rebuilt, so the header's
/// change is no stale build; the selection goes on (it once stopped with
/// "h.h changed since the newest build", which no rebuild could cure).
#[test]
fn a_removed_source_does_not_stop_the_selection_when_its_header_changes() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let header = "static inline int twice(int v) { return 2 * v; }\n";
    std::fs::write(dir.join("h.h"), header).unwrap();
    std::fs::write(dir.join("t1.c"), "#include \"h.h\"\nint main(void) { return twice(2) == 4 ? 0 : 1; }\n").unwrap();
    std::fs::write(dir.join("t2.c"), "#include \"h.h\"\nint main(void) { return twice(3) == 6 ? 0 : 1; }\n").unwrap();
    let make = |progs: &[&str]| {
        let rules: String = progs.iter().map(|p| format!("{p}: {p}.c h.h\n\t$(CC) -O0 -o {p} {p}.c\n")).collect();
        std::fs::write(dir.join("Makefile"), format!("all: {}\n{rules}", progs.join(" "))).unwrap();
        let tests: String = progs.iter().map(|p| format!("[[test]]\nname = \"{p}\"\ncmd = \"./{p}\"\n\n")).collect();
        std::fs::write(dir.join("retest.toml"), tests).unwrap();
    };
    make(&["t1", "t2"]);
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    let r = retest(dir, &["run"], 0);
    assert!(stdout(&r).contains("2 passed"), "{}", stdout(&r));
    std::fs::remove_file(dir.join("t2.c")).unwrap();
    make(&["t1"]);
    write_newer(&dir.join("h.h"), header.replace("2 * v", "v + v"));
    retest(dir, &["build", "--", "make", "-s"], 0);
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let names: Vec<&str> = v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t1"], "{v}");
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    // the header is still checked for the unit that is still built
    let kept = std::fs::read_to_string(dir.join("h.h")).unwrap();
    write_newer(&dir.join("h.h"), format!("{kept}/* edited */\n"));
    let e = stderr(&retest(dir, &["select"], 5));
    assert!(e.starts_with("error: h.h changed since the newest build"), "{e}");
}

/// A header rewritten with the time it had before the build (a build step
/// that copies it keeping its time, as CMake's `file(COPY)` does, within the
/// second of the last compile) leaves `make` nothing to do, and the program
/// built from the header's earlier text: the selection stops, naming the
/// header and the unit analysed with its earlier text, and says to touch
/// that unit's source (touching the header would not do where a build step
/// copies it again with its old time). Touched and built, the selection
/// goes on.
#[test]
fn a_header_older_than_its_objects_names_the_unit_built_without_its_change() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let header = "static inline int twice(int v) { return 2 * v; }\n";
    std::fs::write(dir.join("h.h"), header).unwrap();
    std::fs::write(dir.join("t1.c"), "#include \"h.h\"\nint main(void) { return twice(2) == 4 ? 0 : 1; }\n").unwrap();
    make_project(dir, "t1: t1.c h.h\n\t$(CC) -O0 -o t1 t1.c\n", &[("t1", "./t1")]);
    retest(dir, &["run"], 0);
    let h = dir.join("h.h");
    let before = std::fs::metadata(&h).unwrap().modified().unwrap();
    let changed = header.replace("2 * v", "v + v");
    std::fs::write(&h, &changed).unwrap();
    std::fs::File::options().write(true).open(&h).unwrap().set_modified(before).unwrap();
    let out = retest(dir, &["build", "--", "make", "-s"], 0);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("nothing to compile"), "make sees nothing to do: {said}");
    let e = stderr(&retest(dir, &["select"], 5));
    assert!(
        e.starts_with("error: h.h changed since the newest build")
            && e.contains("with `t1.c`")
            && e.contains("touch `t1.c`"),
        "{e}"
    );
    make_newest(&dir.join("t1.c"));
    retest(dir, &["build", "--", "make", "-s"], 0);
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let names: Vec<&str> = v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t1"], "{v}");
}

#[test]
fn a_changed_function_in_an_isystem_header_selects_its_callers() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::create_dir(dir.join("vendor")).unwrap();
    let header =
        "static inline int twice(int v) { return 2 * v; }\nstatic inline int thrice(int v) { return 3 * v; }\n";
    std::fs::write(dir.join("vendor/h.h"), header).unwrap();
    std::fs::write(dir.join("t1.c"), "#include <h.h>\nint main(void) { return twice(2) == 4 ? 0 : 1; }\n").unwrap();
    std::fs::write(dir.join("t2.c"), "#include <h.h>\nint main(void) { return thrice(2) == 6 ? 0 : 1; }\n").unwrap();
    make_project(
        dir,
        "all: t1 t2\nt1: t1.c vendor/h.h\n\t$(CC) -isystem vendor -O0 -o t1 t1.c\n\
         t2: t2.c vendor/h.h\n\t$(CC) -isystem vendor -O0 -o t2 t2.c\n",
        &[("t1", "./t1"), ("t2", "./t2")],
    );
    let r = retest(dir, &["run"], 0);
    assert!(stdout(&r).contains("2 passed"), "{}", stdout(&r));
    write_newer(&dir.join("vendor/h.h"), header.replace("2 * v", "3 * v"));
    retest(dir, &["build", "--", "make", "-s"], 0);
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let names: Vec<&str> = v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t1"], "{v}");
    assert!(v.to_string().contains("the declaration of `twice` changed"), "{v}");
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
}
