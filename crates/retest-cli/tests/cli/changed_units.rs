//! Selection from the changed units alone: `retest select` decodes and
//! compares only the units whose text or flags changed when the change
//! leaves what the other units see alone, and otherwise every unit. Either
//! way it must select what comparing the whole program selects, reason for
//! reason: the same JSON as with `RETEST_WHOLE_PROGRAM=1`, but for the
//! analysis time and the count of units compared.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

/// `retest select --format json` with units left out where they can be, and
/// with every unit compared: both outputs, with `units_compared` and the time
/// taken out of them (the only fields allowed to differ), and the units compared.
fn both_ways(dir: &Path) -> (serde_json::Value, serde_json::Value, u64, u64) {
    let run = |whole: bool| {
        let mut cmd = Command::new(retest_bin());
        cmd.args(["select", "--format", "json"]).current_dir(dir).env("CI", "1").env_remove("RETEST_STORE");
        if whole {
            cmd.env("RETEST_WHOLE_PROGRAM", "1");
        } else {
            cmd.env_remove("RETEST_WHOLE_PROGRAM");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "retest select: {}", String::from_utf8_lossy(&out.stderr));
        let mut v = json(&out);
        let compared = v["units_compared"].as_u64().expect("units_compared");
        v.as_object_mut().unwrap().remove("units_compared");
        v.as_object_mut().unwrap().remove("analysis_seconds");
        (v, compared)
    };
    let (changed, n) = run(false);
    let (whole, all) = run(true);
    (changed, whole, n, all)
}

/// Panics, briefly, where two selections differ.
fn assert_same(changed: &serde_json::Value, whole: &serde_json::Value, step: &str) {
    if changed == whole {
        return;
    }
    let (a, b) = (changed.as_object().unwrap(), whole.as_object().unwrap());
    let fields: Vec<&String> = a.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
    let first = |v: &serde_json::Value| {
        let s = v.to_string();
        s.chars().take(600).collect::<String>()
    };
    let sa = a["selected"].as_array().unwrap();
    let sb = b["selected"].as_array().unwrap();
    let at = sa.iter().zip(sb).position(|(x, y)| x != y);
    panic!(
        "{step}: the selection from the changed units differs in {fields:?}; first differing test:\n  changed units: {}\n  whole program: {}",
        at.map(|i| first(&sa[i])).unwrap_or_default(),
        at.map(|i| first(&sb[i])).unwrap_or_default()
    );
}

/// Replaces `from` (present exactly once) with `to` in the example's `file`.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{file}: `{from}`");
    write_newer(&p, text.replacen(from, to, 1));
}

fn build(dir: &Path) {
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
}

#[test]
fn selecting_from_the_changed_units_alone_selects_what_the_whole_program_does() {
    let d = example_copy();
    let dir = d.path();
    baseline(dir);

    // nothing built since the baseline: no unit to compare
    let (changed, whole, n, all) = both_ways(dir);
    assert_same(&changed, &whole, "nothing built");
    assert_eq!((n, all, whole["units"].as_u64()), (0, 6, Some(6)));

    // one function body: that unit alone, and tests are selected for it
    copy_change(dir, "brake-check");
    build(dir);
    let (changed, whole, n, all) = both_ways(dir);
    assert_same(&changed, &whole, "one body");
    assert_eq!((n, all), (1, 6));
    assert!(whole["tests_selected"].as_u64().unwrap() > 0, "{whole}");

    // a second unit, with a new static helper: names seen outside are the same
    edit(
        dir,
        "parse.c",
        "static int is_blank(int ch)\n{\n    return ch == ' ' || ch == '\\t' || ch == '\\r' || ch == '\\n';\n}",
        "static int is_tab(int ch)\n{\n    return ch == '\\t';\n}\n\nstatic int is_blank(int ch)\n{\n    return ch == ' ' || is_tab(ch) || ch == '\\r' || ch == '\\n';\n}",
    );
    build(dir);
    let (changed, whole, n, all) = both_ways(dir);
    assert_same(&changed, &whole, "static helper");
    assert_eq!((n, all), (2, 6));
    let reasons = whole.to_string();
    assert!(reasons.contains("parse.c") && reasons.contains("controller.c"), "{whole}");

    // a function other units may call: every unit is compared
    edit(
        dir,
        "report.c",
        "const char *state_name(cc_state s)\n{",
        "int report_spare(void)\n{\n    return 0;\n}\n\nconst char *state_name(cc_state s)\n{",
    );
    build(dir);
    let (changed, whole, n, all) = both_ways(dir);
    assert_same(&changed, &whole, "new extern");
    assert_eq!((n, all), (6, 6));

    // back without it, then a declaration change (a table's initialiser): every unit
    edit(dir, "report.c", "int report_spare(void)\n{\n    return 0;\n}\n\n", "");
    build(dir);
    let (changed, whole, n, _) = both_ways(dir);
    assert_same(&changed, &whole, "extern gone");
    assert_eq!(n, 2);
    edit(dir, "controller.c", "{  35, 140,  75,    100 },", "{  35, 140,  70,    100 },");
    build(dir);
    let (changed, whole, n, all) = both_ways(dir);
    assert_same(&changed, &whole, "declaration");
    assert_eq!((n, all), (6, 6));
    assert!(whole.to_string().contains("declaration"), "{whole}");
}
