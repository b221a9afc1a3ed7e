//! Cross-check against clang-19's source-based coverage: on the corpus of
//! `common/corpus.rs` (decisions of one to six conditions) and its test suite,
//! `retest coverage --criteria mcdc-unique,mcdc-masking` agrees with
//! `llvm-cov show --show-mcdc` decision by decision, and retest's branch and line
//! coverage agree with llvm-cov's branches and gcov's lines on the same runs.
//!
//! What is compared, per decision of the corpus:
//!
//! * the executed condition vectors (llvm-cov's "Executed MC/DC Test Vectors")
//!   equal retest's, once retest's values of conditions written `!x` are negated
//!   (retest's condition is the variable, llvm-cov's the leaf as written); both
//!   equal the short-circuit evaluations of the tests' inputs, computed here;
//! * unique-cause: a condition has a pair in retest exactly when llvm-cov says
//!   `Ci-Pair: covered` — LLVM 19 implements unique-cause MC/DC with
//!   short-circuited conditions as don't cares;
//! * masking (which llvm-cov does not compute): a condition has a pair in retest
//!   exactly when two of the vectors with different outcomes give it different
//!   values and, in both, some values of the conditions not evaluated would let
//!   flipping it flip the outcome — computed here by brute force from the
//!   expression;
//! * one-condition decisions (llvm-cov makes no MC/DC record for them): a pair
//!   exactly when llvm-cov's branch counts show both outcomes.
//!
//! LLVM 19 does not instrument decisions where `!` applies to a nested `&&` or
//! `||` (`!(a || b) || c`: "unsupported MC/DC boolean expression"); retest
//! does. For those the vectors and pairs computed here from the tests' inputs are
//! the oracle, and the test checks that llvm-cov indeed has no record.
//!
//! `loop3` evaluates `p || q` three times per run. Read off edge sets, the tests
//! that take it along several paths cannot be told apart and are skipped (and
//! named); recorded evaluations (`retest cc --mcdc`) see every one, and then the
//! results must equal llvm-cov's.
//!
//! Needs clang-19, llvm-profdata-19, llvm-cov-19 and clang's profile runtime
//! (Debian: clang-19, llvm-19, libclang-rt-19-dev); a missing one fails the test
//! (`.ci/run` installs them).

use crate::common;
use crate::common::corpus;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::*;
use corpus::{Corpus, E};

/// An llvm-cov MC/DC decision: conditions, executed vectors and which
/// conditions have an independence pair.
#[derive(Debug)]
struct LlvmDecision {
    conditions: usize,
    vectors: BTreeSet<(Vec<Option<bool>>, bool)>,
    covered: Vec<bool>,
}

fn tf(s: &str) -> Option<bool> {
    match s.trim() {
        "T" => Some(true),
        "F" => Some(false),
        _ => None,
    }
}

/// Parses `llvm-cov show --show-mcdc` output: decisions by their first line.
fn parse_show(text: &str) -> BTreeMap<u32, LlvmDecision> {
    let mut out = BTreeMap::new();
    let mut cur: Option<(u32, LlvmDecision)> = None;
    for raw in text.lines() {
        let l = raw.trim_start_matches([' ', '|']).trim();
        if let Some(rest) = l.strip_prefix("---> MC/DC Decision Region (") {
            if let Some((line, d)) = cur.take() {
                out.insert(line, d);
            }
            let line: u32 = rest.split(':').next().unwrap().parse().unwrap();
            cur = Some((line, LlvmDecision { conditions: 0, vectors: BTreeSet::new(), covered: Vec::new() }));
            continue;
        }
        let Some((_, d)) = cur.as_mut() else { continue };
        if let Some(n) = l.strip_prefix("Number of Conditions: ") {
            d.conditions = n.trim().parse().unwrap();
            d.covered = vec![false; d.conditions];
        } else if let Some(open) = l.find('{')
            && l.ends_with('}')
            && l[..open].trim().chars().all(|c| c.is_ascii_digit())
        {
            let body = &l[open + 1..l.len() - 1];
            let (conds, result) = body.split_once('=').unwrap();
            let v: Vec<Option<bool>> = conds.split(',').map(tf).collect();
            d.vectors.insert((v, tf(result).unwrap()));
        } else if let Some(rest) = l.strip_prefix('C')
            && let Some((k, state)) = rest.split_once("-Pair: ")
        {
            let k: usize = k.parse().unwrap();
            d.covered[k - 1] = state.starts_with("covered");
        }
    }
    if let Some((line, d)) = cur {
        out.insert(line, d);
    }
    out
}

/// llvm-cov's branch counts per line (in column order): (true taken, false taken).
fn llvm_branches(export: &serde_json::Value) -> BTreeMap<u32, Vec<(bool, bool)>> {
    let mut rows: Vec<(u32, u32, bool, bool)> = Vec::new();
    for f in export["data"][0]["files"].as_array().unwrap() {
        if !f["filename"].as_str().unwrap().ends_with("corpus.c") {
            continue;
        }
        for b in f["branches"].as_array().unwrap() {
            let n = |i: usize| b[i].as_u64().unwrap();
            rows.push((n(0) as u32, n(1) as u32, n(4) > 0, n(5) > 0));
        }
    }
    rows.sort();
    let mut out: BTreeMap<u32, Vec<(bool, bool)>> = BTreeMap::new();
    for (l, _, t, f) in rows {
        out.entry(l).or_default().push((t, f));
    }
    out
}

/// Whether condition `c` can decide the outcome of the evaluation `v`: for some
/// values of the conditions `v` did not evaluate, flipping `c` flips the outcome.
fn determines(e: &E, c: usize, v: &[Option<bool>]) -> bool {
    let free: Vec<usize> = (0..v.len()).filter(|&i| i != c && v[i].is_none()).collect();
    (0u32..1 << free.len()).any(|m| {
        let mut vals: Vec<bool> = v.iter().map(|x| x.unwrap_or(false)).collect();
        for (k, &i) in free.iter().enumerate() {
            vals[i] = m & (1 << k) != 0;
        }
        let x = e.eval(&vals);
        vals[c] = !vals[c];
        e.eval(&vals) != x
    })
}

/// Unique-cause MC/DC: two vectors with different outcomes in which the
/// condition differs and every other condition evaluated in both is equal.
fn unique_cause(n: usize, vectors: &BTreeSet<(Vec<Option<bool>>, bool)>) -> Vec<bool> {
    (0..n)
        .map(|c| {
            vectors.iter().filter(|(_, o)| *o).any(|(a, _)| {
                vectors.iter().filter(|(_, o)| !*o).any(|(b, _)| {
                    matches!((a[c], b[c]), (Some(x), Some(y)) if x != y)
                        && (0..n).all(|i| i == c || a[i].is_none() || b[i].is_none() || a[i] == b[i])
                })
            })
        })
        .collect()
}

/// The vectors the tests of function `k` make, from their inputs.
fn expected_vectors(c: &Corpus, k: usize) -> BTreeSet<(Vec<Option<bool>>, bool)> {
    c.tests.iter().filter(|t| t.function == k).map(|t| c.functions[k].expr.run(&t.vars())).collect()
}

/// Masking MC/DC of a set of vectors, by brute force.
fn masking(e: &E, vectors: &BTreeSet<(Vec<Option<bool>>, bool)>) -> Vec<bool> {
    (0..e.leaves())
        .map(|c| {
            vectors.iter().filter(|(_, o)| *o).any(|(a, _)| {
                vectors.iter().filter(|(_, o)| !*o).any(|(b, _)| {
                    matches!((a[c], b[c]), (Some(x), Some(y)) if x != y) && determines(e, c, a) && determines(e, c, b)
                })
            })
        })
        .collect()
}

fn run_ok(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Builds the corpus with clang's MC/DC instrumentation and runs every test.
/// A missing tool fails the test (`.ci/run` installs them).
fn llvm_run(c: &Corpus, dir: &Path) -> (String, serde_json::Value) {
    for tool in ["clang-19", "llvm-profdata-19", "llvm-cov-19"] {
        assert!(corpus::have(tool), "{tool} is not installed (Debian: clang-19, llvm-19; `.ci/run` installs them)");
    }
    c.write(dir);
    let o = Command::new("clang-19")
        .args(["-O0", "-fprofile-instr-generate", "-fcoverage-mapping", "-fcoverage-mcdc", "-o", "corpus", "corpus.c"])
        .current_dir(dir)
        .output()
        .unwrap();
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("libclang_rt.profile"),
            "clang's profile runtime is not installed (Debian: libclang-rt-19-dev; `.ci/run` installs it)"
        );
        panic!("clang-19 failed:\n{err}");
    }
    for (i, t) in c.tests.iter().enumerate() {
        run_ok(
            Command::new("sh").args(["-c", &t.cmd]).current_dir(dir).env("LLVM_PROFILE_FILE", format!("t{i}.profraw")),
        );
    }
    let profraws: Vec<String> = (0..c.tests.len()).map(|i| format!("t{i}.profraw")).collect();
    run_ok(Command::new("llvm-profdata-19").args(["merge", "-o", "corpus.profdata"]).args(&profraws).current_dir(dir));
    let show = run_ok(
        Command::new("llvm-cov-19")
            .args(["show", "./corpus", "-instr-profile=corpus.profdata", "--show-mcdc", "corpus.c"])
            .current_dir(dir),
    );
    let export = run_ok(
        Command::new("llvm-cov-19").args(["export", "./corpus", "-instr-profile=corpus.profdata"]).current_dir(dir),
    );
    (String::from_utf8(show.stdout).unwrap(), serde_json::from_slice(&export.stdout).unwrap())
}

/// retest's decisions by (function, line).
fn our_decisions(report: &serde_json::Value) -> BTreeMap<(String, u32), serde_json::Value> {
    report["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| ((d["function"].as_str().unwrap().to_string(), d["line"].as_u64().unwrap() as u32), d.clone()))
        .collect()
}

/// retest's executed vectors of a decision, in llvm-cov's terms (leaves written
/// `!x` negated).
fn our_vectors(d: &serde_json::Value, negated: &[bool]) -> BTreeSet<(Vec<Option<bool>>, bool)> {
    d["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let conds: Vec<Option<bool>> = v["conditions"]
                .as_str()
                .unwrap()
                .chars()
                .zip(negated)
                .map(|(c, &neg)| match c {
                    'T' => Some(!neg),
                    'F' => Some(neg),
                    _ => None,
                })
                .collect();
            (conds, v["outcome"].as_bool().unwrap())
        })
        .collect()
}

fn independent(d: &serde_json::Value, variant: &str) -> Vec<bool> {
    d[variant]["conditions"].as_array().unwrap().iter().map(|c| !c["pairs"].as_array().unwrap().is_empty()).collect()
}

/// Our MC/DC per decision against llvm-cov's (and the inputs' own vectors where
/// LLVM does not instrument): every decision read from `source`; returns the
/// numbers of MC/DC decisions, one-condition decisions and conditions compared.
fn check_mcdc(
    c: &Corpus,
    llvm: &BTreeMap<u32, LlvmDecision>,
    branches: &BTreeMap<u32, Vec<(bool, bool)>>,
    report: &serde_json::Value,
    source: &str,
) -> (usize, usize, usize) {
    let decisions = our_decisions(report);
    let mut compared = (0usize, 0usize, 0usize); // MC/DC decisions, one-condition decisions, conditions
    for (k, f) in c.functions.iter().enumerate().filter(|(_, f)| f.name != "loop3") {
        let n = f.conditions();
        let d = decisions
            .get(&(f.name.clone(), f.line))
            .unwrap_or_else(|| panic!("{}: no decision at line {}", f.name, f.line));
        assert_eq!(d["conditions"].as_u64().unwrap() as usize, n, "{}", f.name);
        assert_eq!(d["evaluations_from"], source);
        assert!(d["skipped_tests"].as_array().unwrap().is_empty(), "{}: one evaluation per test", f.name);
        let unique = independent(d, "unique_cause");
        let mask = independent(d, "masking");
        assert_eq!(d["unique_cause"]["independent"].as_u64().unwrap() as usize, unique.iter().filter(|x| **x).count());
        let mut negated = Vec::new();
        f.expr.negated_leaves(&mut negated);
        let expected = expected_vectors(c, k);
        assert_eq!(our_vectors(d, &negated), expected, "{}: executed vectors", f.name);
        assert_eq!(unique, unique_cause(n, &expected), "{}: unique-cause, per condition", f.name);
        assert_eq!(mask, masking(&f.expr, &expected), "{}: masking, per condition", f.name);
        if n == 1 {
            let (t, fl) = branches[&f.line][0];
            assert_eq!(unique, [t && fl], "{}: one condition, independent iff both branches", f.name);
            compared.1 += 1;
            continue;
        }
        if f.expr.negates_a_subexpression() {
            assert!(!llvm.contains_key(&f.line), "{}: LLVM 19 does not instrument `!(…)` decisions", f.name);
            continue;
        }
        let l = llvm
            .get(&f.line)
            .unwrap_or_else(|| panic!("{}: llvm-cov has no MC/DC decision at line {}", f.name, f.line));
        assert_eq!(l.conditions, n, "{}", f.name);
        assert_eq!(l.vectors, expected, "{}: llvm-cov's executed vectors", f.name);
        assert_eq!(unique, l.covered, "{}: unique-cause equals llvm-cov's, per condition", f.name);
        compared.0 += 1;
        compared.2 += n;
    }
    let unsupported = c.functions.iter().filter(|f| f.expr.negates_a_subexpression()).count();
    assert_eq!(
        compared.0 + compared.1 + unsupported,
        corpus::DECISIONS.len() + 1,
        "every decision compared (and `unused`)"
    );
    assert!(compared.0 >= 15, "{} decisions compared with llvm-cov", compared.0);
    // not everything is covered, and masking shows more than unique-cause somewhere
    let (mut all_u, mut all_m, mut shown_u, mut shown_m) = (0, 0, 0, 0);
    for f in c.functions.iter().filter(|f| f.name.starts_with('d')) {
        let d = &decisions[&(f.name.clone(), f.line)];
        all_u += f.conditions();
        all_m += f.conditions();
        shown_u += d["unique_cause"]["independent"].as_u64().unwrap() as usize;
        shown_m += d["masking"]["independent"].as_u64().unwrap() as usize;
    }
    assert!(
        shown_u < all_u && shown_m < all_m,
        "the sample leaves pairs missing: {shown_u}/{all_u}, {shown_m}/{all_m}"
    );
    assert!(shown_m > shown_u, "masking finds pairs unique-cause does not: {shown_m} vs {shown_u}");
    let measures: BTreeMap<String, (u64, u64)> = report["criteria"]["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (m["measure"].as_str().unwrap().to_string(), (m["covered"].as_u64().unwrap(), m["total"].as_u64().unwrap()))
        })
        .collect();
    assert!(measures.contains_key("mcdc-unique") && measures.contains_key("mcdc-masking"), "{measures:?}");

    // loop3: p || q evaluated three times per run
    let d = &decisions[&("loop3".to_string(), c.loop_line)];
    let l = &llvm[&c.loop_line];
    let ours_v = our_vectors(d, &[false, false]);
    let loop_tests: Vec<&corpus::Test> = c.tests.iter().filter(|t| t.name.starts_with("loop3")).collect();
    match d["evaluations_from"].as_str().unwrap() {
        "recorded" => {
            assert_eq!(ours_v, l.vectors, "loop3: recorded evaluations equal llvm-cov's");
            assert_eq!(independent(d, "unique_cause"), l.covered);
        }
        "edge-sets" => {
            let skipped: BTreeSet<String> =
                d["skipped_tests"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
            let mixed: BTreeSet<String> = loop_tests
                .iter()
                .filter(|t| Corpus::loop_paths(t.args[0], t.args[1]).len() > 1)
                .map(|t| t.name.clone())
                .collect();
            assert_eq!(skipped, mixed, "loop3: exactly the tests with several paths are skipped, and named");
            assert!(!skipped.is_empty());
            let warned = report["warnings"].as_array().unwrap();
            assert!(warned.iter().any(|w| w.as_str().unwrap().contains("several paths")), "{warned:?}");
            assert!(ours_v.is_subset(&l.vectors), "loop3: what edge sets show is a subset of llvm-cov's vectors");
            assert!(ours_v.len() < l.vectors.len(), "loop3: edge sets cannot show every evaluation");
            let u = independent(d, "unique_cause");
            assert!(u.iter().zip(&l.covered).all(|(o, l)| !o || *l), "loop3: no pair llvm-cov does not have");
        }
        other => panic!("unknown source {other}"),
    }

    compared
}

#[test]
fn mcdc_branches_and_lines_agree_with_llvm_cov_and_gcov() {
    let c = corpus::corpus();
    let llvm_dir = tempfile::tempdir().unwrap();
    let (show, export) = llvm_run(&c, llvm_dir.path());
    let llvm = parse_show(&show);
    let branches = llvm_branches(&export);

    let ours = tempfile::tempdir().unwrap();
    retest(ours.path(), &["init"], 0);
    c.write(ours.path());
    retest(ours.path(), &["build", "--", "make", "-s"], 0);
    retest(ours.path(), &["run", "-j2"], 0);
    let out = retest(ours.path(), &["coverage", "--format", "json", "--criteria", "mcdc-unique,mcdc-masking"], 0);
    let report = json(&out);
    assert_eq!(report["schema"], "retest.coverage/1");
    assert_eq!(report["tests"].as_u64().unwrap() as usize, c.tests.len());

    let compared = check_mcdc(&c, &llvm, &branches, &report, "edge-sets");
    // branches: every condition's outcomes, line by line
    let mut negated_on: BTreeMap<u32, Vec<bool>> = BTreeMap::new();
    for f in &c.functions {
        let mut v = Vec::new();
        f.expr.negated_leaves(&mut v);
        negated_on.insert(f.line, v);
    }
    let mut ours_b: BTreeMap<u32, BTreeMap<u64, (bool, bool)>> = BTreeMap::new();
    for file in report["files"].as_array().unwrap() {
        for b in file["branch_outcomes"].as_array().unwrap() {
            let (line, block, label, tests) =
                (b[0].as_u64().unwrap() as u32, b[1].as_u64().unwrap(), b[2].as_str().unwrap(), b[3].as_u64().unwrap());
            let e = ours_b.entry(line).or_default().entry(block).or_default();
            match label {
                "T" => e.0 = tests > 0,
                "F" => e.1 = tests > 0,
                other => panic!("unexpected branch label {other}"),
            }
        }
    }
    let ours_b: BTreeMap<u32, Vec<(bool, bool)>> = ours_b
        .into_iter()
        .map(|(line, blocks)| {
            let neg = negated_on.get(&line).cloned().unwrap_or_default();
            let v = blocks
                .into_values()
                .enumerate()
                .map(|(i, (t, f))| if neg.get(i).copied().unwrap_or(false) { (f, t) } else { (t, f) })
                .collect();
            (line, v)
        })
        .collect();
    assert_eq!(ours_b, branches, "branch coverage per line equals llvm-cov's");
    let taken: usize = branches.values().flatten().map(|(t, f)| *t as usize + *f as usize).sum();
    let total: usize = branches.values().map(|v| 2 * v.len()).sum();
    assert!(taken < total && total > 150, "{taken}/{total} branch outcomes compared");

    // lines: gcov on a build with gcc --coverage, the same tests
    let gcov_dir = tempfile::tempdir().unwrap();
    c.write(gcov_dir.path());
    run_ok(Command::new("gcc").args(["-O0", "--coverage", "-o", "corpus", "corpus.c"]).current_dir(gcov_dir.path()));
    for t in &c.tests {
        run_ok(Command::new("sh").args(["-c", &t.cmd]).current_dir(gcov_dir.path()));
    }
    let gcda: Vec<_> = std::fs::read_dir(gcov_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gcda"))
        .collect();
    assert_eq!(gcda.len(), 1);
    let g = run_ok(Command::new("gcov").args(["--json-format", "--stdout"]).arg(&gcda[0]).current_dir(gcov_dir.path()));
    let mut gcov_lines: BTreeMap<u32, bool> = BTreeMap::new();
    for doc in String::from_utf8_lossy(&g.stdout).lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(doc).unwrap();
        for f in v["files"].as_array().unwrap() {
            if f["file"].as_str().unwrap().ends_with("corpus.c") {
                for l in f["lines"].as_array().unwrap() {
                    *gcov_lines.entry(l["line_number"].as_u64().unwrap() as u32).or_default() |=
                        l["count"].as_u64().unwrap() > 0;
                }
            }
        }
    }
    let mut lines_compared = 0;
    let mut unexecuted = 0;
    for file in report["files"].as_array().unwrap() {
        for l in file["lines"].as_array().unwrap() {
            let (line, tests) = (l[0].as_u64().unwrap() as u32, l[1].as_u64().unwrap());
            let g = gcov_lines.get(&line).unwrap_or_else(|| panic!("line {line}: executable for retest, not for gcov"));
            assert_eq!(tests > 0, *g, "line {line}: retest {tests} tests, gcov executed={g}");
            lines_compared += 1;
            unexecuted += (tests == 0) as usize;
        }
    }
    assert!(lines_compared > 100 && unexecuted >= 5, "{lines_compared} lines compared, {unexecuted} unexecuted");
    eprintln!(
        "{} tests; compared {} MC/DC decisions ({} conditions), {} one-condition decisions, {total} branch outcomes, \
         {lines_compared} lines",
        c.tests.len(),
        compared.0,
        compared.2,
        compared.1
    );
}

/// Built with `retest build --mcdc`, every decision's evaluations are recorded
/// one by one: loop3's three evaluations per run too, and then MC/DC equals
/// llvm-cov's everywhere LLVM instruments.
#[test]
fn recorded_evaluations_agree_with_llvm_cov_everywhere() {
    let c = corpus::corpus();
    let llvm_dir = tempfile::tempdir().unwrap();
    let (show, export) = llvm_run(&c, llvm_dir.path());
    let llvm = parse_show(&show);
    let branches = llvm_branches(&export);
    let ours = tempfile::tempdir().unwrap();
    retest(ours.path(), &["init"], 0);
    c.write(ours.path());
    retest(ours.path(), &["build", "--mcdc", "--", "make", "-s"], 0);
    retest(ours.path(), &["run", "-j2"], 0);
    let out = retest(ours.path(), &["coverage", "--format", "json", "--criteria", "mcdc-unique,mcdc-masking"], 0);
    let report = json(&out);
    assert!(report["warnings"].as_array().is_none_or(|w| w.is_empty()), "{}", report["warnings"]);
    let compared = check_mcdc(&c, &llvm, &branches, &report, "recorded");
    assert!(compared.0 >= 15, "{compared:?}");
}
