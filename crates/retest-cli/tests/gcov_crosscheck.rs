//! Cross-check against gcov: for every test of the bundled example, the lines
//! retest records as executed equal the lines `gcc --coverage` + `gcov` report as
//! executed — on every line both consider executable.
//!
//! Lines only one side considers executable are not compared: gcov also counts
//! function headers, `break`/`continue`/`goto` lines and closing braces (they
//! carry jumps or epilogues), while retest's statement nodes are statements,
//! decisions and initialised declarations. The one kind of line retest counts
//! and gcov does not is a statement the compiler emits no code for — in the
//! example, `(void)ev;` — which is still a statement (a change to it must be
//! seen by selection).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::*;

/// (file, line) → executed, from gcov's JSON output for every .gcda in `dir`.
fn gcov_lines(dir: &Path) -> BTreeMap<(String, u32), bool> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "gcda") {
            let o = Command::new("gcov").args(["--json-format", "--stdout"]).arg(&p).current_dir(dir).output().unwrap();
            assert!(o.status.success(), "gcov failed: {}", String::from_utf8_lossy(&o.stderr));
            // one JSON document per line
            for doc in String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(doc).unwrap();
                for f in v["files"].as_array().unwrap() {
                    let file = f["file"].as_str().unwrap().to_string();
                    if file.starts_with('/') {
                        continue; // system headers
                    }
                    for l in f["lines"].as_array().unwrap() {
                        let line = l["line_number"].as_u64().unwrap() as u32;
                        let hit = l["count"].as_u64().unwrap() > 0;
                        let e = out.entry((file.clone(), line)).or_insert(false);
                        *e |= hit;
                    }
                }
            }
        }
    }
    out
}

fn retest_lines(dir: &Path, test: &str) -> BTreeMap<(String, u32), bool> {
    let o = retest(dir, &["coverage", "--format", "json", "--tests", test], 0);
    let v = json(&o);
    let mut out = BTreeMap::new();
    for f in v["files"].as_array().unwrap() {
        let file = f["path"].as_str().unwrap().to_string();
        for l in f["lines"].as_array().unwrap() {
            out.insert((file.clone(), l[0].as_u64().unwrap() as u32), l[1].as_u64().unwrap() > 0);
        }
    }
    out
}

#[test]
fn executed_lines_equal_gcov_for_every_example_test() {
    let gcov_dir = example_copy();
    let st = Command::new("make").args(["-s", "CFLAGS=-O0 --coverage"]).current_dir(gcov_dir.path()).status().unwrap();
    assert!(st.success());
    let ours = example_copy();
    baseline(ours.path());
    let tests = test_names(ours.path());
    assert_eq!(tests.len(), 40);
    let mut compared = 0usize;
    let mut disagreements = Vec::new();
    let mut only_ours: BTreeSet<(String, u32)> = BTreeSet::new();
    for t in &tests {
        for e in std::fs::read_dir(gcov_dir.path()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "gcda") {
                std::fs::remove_file(p).unwrap();
            }
        }
        let _ = Command::new("sh").args(["tests/run.sh", t]).current_dir(gcov_dir.path()).output().unwrap();
        let g = gcov_lines(gcov_dir.path());
        let r = retest_lines(ours.path(), t);
        for (k, ours_hit) in &r {
            match g.get(k) {
                Some(gcov_hit) => {
                    compared += 1;
                    if gcov_hit != ours_hit {
                        disagreements.push(format!("{t}: {}:{} retest={ours_hit} gcov={gcov_hit}", k.0, k.1));
                    }
                }
                None => {
                    only_ours.insert(k.clone());
                }
            }
        }
    }
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
    // every line retest treats as executable is one gcov has code for, except
    // statements without code (a cast of a variable to void)
    let no_code = |(file, line): &(String, u32)| {
        let text = std::fs::read_to_string(ours.path().join(file)).unwrap();
        let l = text.lines().nth(*line as usize - 1).unwrap_or("").trim().to_string();
        l.starts_with("(void)")
            && l.ends_with(';')
            && l[6..l.len() - 1].chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let unexplained: Vec<_> = only_ours.iter().filter(|k| !no_code(k)).collect();
    assert!(unexplained.is_empty(), "lines retest counts that gcov does not: {unexplained:?}");
    assert!(compared > 40 * 100, "compared {compared} (test, line) pairs");
}
