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

use crate::common;

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

/// Switches with several labels on one statement, fall-through, a `default`
/// sharing a statement with a case, case ranges and an implicit `default`
/// (and a loop condition). Not here: labels that leave the switch at once
/// (`case 3: break;`), which gcov counts one by one and retest as one branch
/// with each other and an implicit `default` (see `retest_cover::lines`).
const SWITCHES: &str = r#"#include <stdio.h>
#include <stdlib.h>

int vowel(int c)
{
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
    case 'A': case 'E': case 'I': case 'O': case 'U':
    case 'y': case 'Y':
        return 1;
    case '0': case '1': case '2': case '3': case '4':
        return 2;
    case ' ':
        return 3;
    default:
        return 0;
    }
}

int fall(int c)
{
    int r = 0;
    switch (c) {
    case 1:
        r += 1;
        /* fallthrough */
    case 2: case 3:
        r += 2;
        /* fallthrough */
    case 4:
    default:
        r += 4;
    }
    return r;
}

int ranges(int c)
{
    switch (c) {
    case 0 ... 9:
        return 1;
    case 10: case 20 ... 29: case 40:
        return 2;
    case 30:
        return 3;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int s = 0;
    for (int i = 1; i < argc; i++)
        s += vowel(argv[i][0]) + fall(atoi(argv[i])) + ranges(atoi(argv[i]));
    printf("%d\n", s);
    return 0;
}
"#;

/// line → (branches, branches taken), from gcov's JSON output for `gcda`.
fn gcov_branches(dir: &Path, gcda: &str) -> BTreeMap<u32, (usize, usize)> {
    let o = Command::new("gcov").args(["-b", "--json-format", "--stdout", gcda]).current_dir(dir).output().unwrap();
    assert!(o.status.success(), "gcov failed: {}", String::from_utf8_lossy(&o.stderr));
    let mut out = BTreeMap::new();
    for doc in String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(doc).unwrap();
        for f in v["files"].as_array().unwrap() {
            for l in f["lines"].as_array().unwrap() {
                let b = l["branches"].as_array().unwrap();
                if !b.is_empty() {
                    let taken = b.iter().filter(|x| x["count"].as_u64().unwrap() > 0).count();
                    out.insert(l["line_number"].as_u64().unwrap() as u32, (b.len(), taken));
                }
            }
        }
    }
    out
}

#[test]
fn switch_branches_are_counted_as_gcov_counts_them() {
    let runs = ["a 1", "25", "Y 3 ' '", "10 40 30 z 50"];
    // gcov
    let g = tempfile::tempdir().unwrap();
    std::fs::write(g.path().join("sw.c"), SWITCHES).unwrap();
    let st =
        Command::new("gcc").args(["-O0", "--coverage", "-o", "sw", "sw.c"]).current_dir(g.path()).status().unwrap();
    assert!(st.success());
    for r in runs {
        let st = Command::new("sh").args(["-c", &format!("./sw {r}")]).current_dir(g.path()).status().unwrap();
        assert!(st.success());
    }
    let gcda = std::fs::read_dir(g.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".gcda"))
        .unwrap();
    let gcov = gcov_branches(g.path(), &gcda);
    // retest, one test per run
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sw.c"), SWITCHES).unwrap();
    std::fs::write(d.path().join("Makefile"), "sw: sw.c\n\t$(CC) -O0 -o sw sw.c\n").unwrap();
    let toml: String =
        runs.iter().enumerate().map(|(i, r)| format!("[[test]]\nname = \"t{i}\"\ncmd = \"./sw {r}\"\n\n")).collect();
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    let v = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
    let mut ours: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    for b in v["files"][0]["branch_outcomes"].as_array().unwrap() {
        let e = ours.entry(b[0].as_u64().unwrap() as u32).or_default();
        e.0 += 1;
        e.1 += usize::from(b[3].as_u64().unwrap() > 0);
    }
    assert_eq!(ours, gcov, "per line: (branches, taken) — retest against gcov");
    // the switch with twelve labels on one statement is four branches, not nineteen
    assert_eq!(ours[&6], (4, 4));
    assert_eq!(v["totals"]["branches"]["total"], gcov.values().map(|b| b.0).sum::<usize>());
}
