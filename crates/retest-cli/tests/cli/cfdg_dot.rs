//! `retest cfdg` on CFG dumps generated here, by gcc 12
//! (`-fdump-tree-cfg-graph`) and by clang-19 + opt-19 (`-passes=dot-cfg`), from
//! the corpus of `common/corpus.rs`: every decision is found with all its
//! conditions — including Clang's loop decisions, whose guard is evaluated into a
//! value and branched on in a separate block (interstitial vertices, 001 §VII-A).
//! The one thing a CFG cannot show is a condition that never branches: Clang
//! evaluates `r = (a && b) || c;` with branches for all but the last condition,
//! whose value flows into a `phi`; there every *branching* condition is found.
//! `retest cfg --cfdg` draws the same decisions for retest's own CFGs.
//!
//! The LLVM half needs clang-19 and opt-19 (Debian: clang-19, llvm-19) and is
//! a missing tool fails the test (`.ci/run` installs them).

use crate::common;
use crate::common::corpus;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use corpus::{Corpus, Ctx};

/// Decisions per function of a `retest.cfdg/1` report: (conditions, interstitial, well formed).
fn decisions_of(report: &serde_json::Value) -> BTreeMap<String, Vec<(usize, usize, bool)>> {
    assert_eq!(report["schema"], "retest.cfdg/1");
    let mut out = BTreeMap::new();
    for f in report["functions"].as_array().unwrap() {
        let ds = f["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["conditions"].as_array().unwrap().len(),
                    d.get("interstitial").and_then(|x| x.as_array()).map_or(0, Vec::len),
                    d["well_formed"].as_bool().unwrap(),
                )
            })
            .collect();
        out.insert(f["name"].as_str().unwrap().to_string(), ds);
    }
    out
}

/// What the functions of the corpus contain, as sorted condition counts.
fn expected(c: &Corpus) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> =
        c.functions.iter().filter(|f| f.name != "loop3").map(|f| (f.name.clone(), vec![f.conditions()])).collect();
    out.insert("loop3".into(), vec![1, 2]);
    out.insert("main".into(), vec![1]);
    out
}

fn counts(ds: &[(usize, usize, bool)]) -> Vec<usize> {
    let mut v: Vec<usize> = ds.iter().map(|d| d.0).collect();
    v.sort_unstable();
    v
}

fn run_ok(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&o.stderr));
}

/// Annotates `files` with `retest cfdg --out-dir`; returns the JSON reports and
/// the annotated DOT texts by input file name.
fn annotate(dir: &Path, files: &[PathBuf]) -> Vec<(String, serde_json::Value, String)> {
    let mut args: Vec<String> = vec!["cfdg".into(), "--out-dir".into(), "out".into()];
    args.extend(files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = retest(dir, &refs, 0);
    assert!(stderr(&o).is_empty(), "no warnings: {}", stderr(&o));
    files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".dot").unwrap();
            let json = std::fs::read_to_string(dir.join("out").join(format!("{stem}.cfdg.json"))).unwrap();
            let dot = std::fs::read_to_string(dir.join("out").join(format!("{stem}.cfdg.dot"))).unwrap();
            (name, serde_json::from_str(&json).unwrap(), dot)
        })
        .collect()
}

fn clusters(dot: &str) -> usize {
    dot.matches("label=\"Decision ").count()
}

#[test]
fn gcc_dumps_every_decision_whole() {
    let c = corpus::corpus();
    let d = tempfile::tempdir().unwrap();
    c.write(d.path());
    run_ok(
        Command::new("gcc")
            .args(["-O0", "-fdump-tree-cfg-graph", "-c", "corpus.c", "-o", "corpus.o"])
            .current_dir(d.path()),
    );
    let dumps: Vec<PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".cfg.dot"))
        .collect();
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    let out = annotate(d.path(), &dumps);
    let (_, report, dot) = &out[0];
    assert_eq!(report["dialect"], "gcc");
    let got = decisions_of(report);
    let want = expected(&c);
    let got_counts: BTreeMap<String, Vec<usize>> = got.iter().map(|(k, v)| (k.clone(), counts(v))).collect();
    assert_eq!(got_counts, want, "every decision of every function, with all its conditions");
    assert!(got.values().flatten().all(|d| d.2), "all well formed");
    assert_eq!(clusters(dot), got.values().map(Vec::len).sum::<usize>());
    // the annotated file reads back with the same decisions
    let again_path = std::fs::read_dir(d.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".cfdg.dot"))
        .unwrap();
    let again = json(&retest(d.path(), &["cfdg", "--format", "json", again_path.to_str().unwrap()], 0));
    assert_eq!(decisions_of(&again), got);
}

#[test]
fn llvm_dumps_every_decision_with_interstitial_loop_blocks() {
    for tool in ["clang-19", "opt-19"] {
        assert!(corpus::have(tool), "{tool} is not installed (Debian: clang-19, llvm-19; `.ci/run` installs them)");
    }
    let c = corpus::corpus();
    let d = tempfile::tempdir().unwrap();
    c.write(d.path());
    run_ok(
        Command::new("clang-19")
            .args(["-O0", "-Xclang", "-disable-O0-optnone", "-S", "-emit-llvm", "corpus.c", "-o", "corpus.ll"])
            .current_dir(d.path()),
    );
    run_ok(Command::new("opt-19").args(["-passes=dot-cfg", "-disable-output", "corpus.ll"]).current_dir(d.path()));
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with('.') && p.extension().is_some_and(|x| x == "dot")
        })
        .collect();
    dumps.sort();
    let want = expected(&c);
    assert_eq!(dumps.len(), want.len(), "one dump per function: {dumps:?}");
    let mut got: BTreeMap<String, Vec<(usize, usize, bool)>> = BTreeMap::new();
    for (_, report, dot) in annotate(d.path(), &dumps) {
        assert_eq!(report["dialect"], "llvm");
        let ds = decisions_of(&report);
        assert_eq!(clusters(&dot), ds.values().map(Vec::len).sum::<usize>());
        got.extend(ds);
    }
    assert!(got.values().flatten().all(|d| d.2), "all well formed: {got:?}");
    let mut interstitial_loops = 0;
    for f in &c.functions {
        let ds = &got[&f.name];
        let n = f.conditions();
        if f.ctx == Ctx::Value && f.name != "loop3" {
            // the last condition is a value, never a branch
            let found: usize = ds.iter().map(|d| d.0).sum();
            assert_eq!(found, n - 1, "{}: every branching condition is in a decision: {ds:?}", f.name);
            continue;
        }
        let want_f = &want[&f.name];
        assert_eq!(&counts(ds), want_f, "{}: {ds:?}", f.name);
        if matches!(f.ctx, Ctx::While | Ctx::For) && n > 1 {
            assert!(ds[0].1 > 0, "{}: a loop decision holds Clang's interstitial blocks: {ds:?}", f.name);
            interstitial_loops += 1;
        }
    }
    assert!(interstitial_loops >= 5, "{interstitial_loops} loop decisions with interstitial blocks");
    assert_eq!(counts(&got["main"]), want["main"]);
}

#[test]
fn retest_cfg_cfdg_draws_the_same_decisions() {
    let c = corpus::corpus();
    let d = tempfile::tempdir().unwrap();
    c.write(d.path());
    let v = json(&retest(d.path(), &["cfg", "corpus.c", "--cfdg", "--format", "json"], 0));
    assert_eq!(v["level"], "condition");
    let mut got: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for f in v["translation_units"][0]["functions"].as_array().unwrap() {
        let mut n: Vec<usize> =
            f["decisions"].as_array().unwrap().iter().map(|d| d["conditions"].as_array().unwrap().len()).collect();
        n.sort_unstable();
        got.insert(f["name"].as_str().unwrap().to_string(), n);
    }
    assert_eq!(got, expected(&c));
    // expressions as written (up to the parentheses the renderer needs)
    let d0 = v["translation_units"][0]["functions"].as_array().unwrap().iter().find(|f| f["name"] == "d8").unwrap();
    assert_eq!(d0["decisions"][0]["expression"], "(a && b) || c");
    let dot = stdout(&retest(d.path(), &["cfg", "corpus.c", "--cfdg", "--format", "dot", "--function", "d25"], 0));
    assert_eq!(clusters(&dot), 1);
    assert!(dot.contains("label=\"Decision 0\""));
    let text = stdout(&retest(d.path(), &["cfg", "corpus.c", "--cfdg", "--function", "d25"], 0));
    assert!(text.contains("Decision 0 line"), "{text}");
    // the DOT of our own CFDG is itself input for `retest cfdg`
    std::fs::write(d.path().join("d25.dot"), &dot).unwrap();
    let again = json(&retest(d.path(), &["cfdg", "--format", "json", "d25.dot"], 0));
    assert_eq!(again["dialect"], "retest");
    assert_eq!(decisions_of(&again)["d25"].iter().map(|x| x.0).collect::<Vec<_>>(), [6]);
}
