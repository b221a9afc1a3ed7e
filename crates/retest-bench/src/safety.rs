//! `safety`: the mutation study of selection safety (in the style of 002 §4,
//! Rothermel & Harrold's study on the Siemens programs).
//!
//! Phase 1 (oracle, per subject, sequential): the original and each candidate
//! mutant are built with plain `make` and the whole universe is run by the
//! harness's own runner ([`crate::suite`]); a mutant is *fault-revealing* when at
//! least one test's exit status or output changes. Candidates come in the
//! deterministic study order ([`crate::mutate::study_order`]) until enough
//! revealing and non-revealing mutants are found.
//!
//! Phase 2 (retest, 2 mutants at a time): per mutant, a fresh copy; `retest
//! init`, `retest build --paths -- make`, `retest run` (the baseline, with
//! Ball–Larus paths); the mutant is written; `retest build --paths -- make`;
//! `retest select --format json` (timed); `retest audit --format json` (the
//! whole suite on the new build); `retest compare-algorithms --format json`
//! (every algorithm on the same change); `retest select --algorithm path` (its
//! warnings). A *miss* is a test whose behaviour changed — by the harness's
//! oracle or by the audit — that an algorithm left out. Per mutant the harness
//! also checks the nesting path ⊆ valid ⊆ full ⊆ partial ⊆ dejavu, counts
//! multiply-visited nodes, and records where the oracle and the audit disagree.
//! It exits non-zero on any miss, nesting violation or failed mutant (after
//! writing its outputs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::driver::Retest;
use crate::mutate::{Mutant, generate, study_order};
use crate::report::{f, mean, median, table, write_json, write_text};
use crate::suite::{Outcome, fresh_copy, plain_build, run_suite, universe};
use crate::{Common, Subject};

#[derive(clap::Args, Clone)]
pub struct SafetyArgs {
    /// Fault-revealing mutants to study per subject.
    #[arg(long, default_value_t = 30)]
    pub revealing: usize,
    /// Non-revealing (compiling, no output changes) mutants to study per subject.
    #[arg(long, default_value_t = 8)]
    pub non_revealing: usize,
    /// Give up on a subject after classifying this many candidates.
    #[arg(long, default_value_t = 400)]
    pub max_candidates: usize,
    /// Seed of the study order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Mutants run through retest at the same time.
    #[arg(long, default_value_t = 2)]
    pub parallel: usize,
    /// Timeout per test in seconds (oracle and retest).
    #[arg(long, default_value_t = 3.0)]
    pub timeout: f64,
    /// Mutants with more timed-out tests than this are dropped (they only cost time).
    #[arg(long, default_value_t = 5)]
    pub max_timeouts: usize,
}

/// A classified candidate (phase 1).
#[derive(Clone, Serialize, Deserialize)]
pub struct Classified {
    pub mutant: Mutant,
    pub description: String,
    pub diff: String,
    /// Tests whose exit status, stdout or stderr changed (plain builds).
    pub changed: Vec<String>,
    pub timeouts: usize,
}

/// Phase 1 of one subject, written to `safety/<subject>/mutants.json`.
#[derive(Serialize, Deserialize)]
pub struct Oracle {
    pub subject: String,
    pub seed: u64,
    pub candidates: usize,
    pub tried: usize,
    pub not_compiling: usize,
    pub hanging: usize,
    /// Compiling mutants, in study order (revealing or not), hangers excluded.
    pub classified: Vec<Classified>,
    /// The original's whole universe, plain build, the harness's runner, 2 jobs.
    pub plain_suite_seconds: f64,
    /// The same, one job at a time: median of three runs.
    #[serde(default)]
    pub plain_suite_seconds_j1: f64,
}

/// The algorithms of `retest compare-algorithms`, in nesting order: each
/// edge-based one selects a subset of the one after it (000 §4, path ⊆ valid).
pub const NESTED: [&str; 5] = ["path", "valid", "full", "partial", "dejavu"];

/// One algorithm's selection for one mutant (`retest compare-algorithms`).
#[derive(Clone, Serialize, Deserialize)]
pub struct AlgorithmResult {
    pub algorithm: String,
    pub selected: Vec<String>,
    pub analysis_seconds: f64,
    /// Changed (oracle or audit) but not selected.
    pub missed: Vec<String>,
    /// Changed by the audit but not selected, as `compare-algorithms` reports it.
    pub compare_missed: Vec<String>,
}

/// Every violation of the nesting path ⊆ valid ⊆ full ⊆ partial ⊆ dejavu, as
/// `"A ⊄ B: tests"`; an algorithm missing from `algs` is a violation too.
pub fn nesting_violations(algs: &[AlgorithmResult]) -> Vec<String> {
    let get = |n: &str| algs.iter().find(|a| a.algorithm == n).map(|a| a.selected.iter().collect::<BTreeSet<_>>());
    let mut v = Vec::new();
    for w in NESTED.windows(2) {
        match (get(w[0]), get(w[1])) {
            (Some(small), Some(big)) => {
                let extra: Vec<&str> = small.difference(&big).map(|s| s.as_str()).collect();
                if !extra.is_empty() {
                    v.push(format!("{} ⊄ {}: {}", w[0], w[1], extra.join(" ")));
                }
            }
            _ => v.push(format!("{} or {} not reported", w[0], w[1])),
        }
    }
    v
}

/// Phase 2 of one mutant.
#[derive(Clone, Serialize, Deserialize)]
pub struct MutantResult {
    pub subject: String,
    pub id: usize,
    pub description: String,
    pub diff: String,
    pub revealing: bool,
    pub oracle_changed: Vec<String>,
    pub selected: Vec<String>,
    pub tests: usize,
    pub select_seconds: f64,
    pub select_analysis_seconds: f64,
    pub baseline_run_seconds: f64,
    pub build_seconds: f64,
    pub audit_changed: Vec<String>,
    pub audit_missed: Vec<String>,
    pub audit_selected_differs: bool,
    /// Changed (oracle or audit) but not selected.
    pub missed: Vec<String>,
    pub audit_run_seconds: f64,
    /// Changed by the oracle (plain builds) but not by the audit, and the reverse.
    #[serde(default)]
    pub oracle_only: Vec<String>,
    #[serde(default)]
    pub audit_only: Vec<String>,
    /// Every algorithm of `retest compare-algorithms` (baseline built with `--paths`).
    #[serde(default)]
    pub algorithms: Vec<AlgorithmResult>,
    #[serde(default)]
    pub compare_seconds: f64,
    /// Old nodes paired with more than one new node (000 §7).
    #[serde(default)]
    pub multiply_visited_nodes: usize,
    #[serde(default)]
    pub nesting_violations: Vec<String>,
    /// Warnings of `retest select --algorithm path` (e.g. no paths recorded).
    #[serde(default)]
    pub path_warnings: Vec<String>,
    pub error: Option<String>,
}

fn outcomes_differ(a: &Option<Outcome>, b: &Option<Outcome>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.status != b.status || a.stdout != b.stdout || a.stderr != b.stderr,
        _ => true,
    }
}

/// Phase 1 for one subject.
fn classify(c: &Common, s: &Subject, a: &SafetyArgs) -> Result<Oracle> {
    let dir = c.work.join("safety").join(&s.name).join("oracle");
    fresh_copy(&s.dir, &s.name, &dir)?;
    let src_path = dir.join(format!("{}.c", s.name));
    let src = std::fs::read_to_string(&src_path)?;
    let tests = universe(&dir.join("universe.txt"))?;
    anyhow::ensure!(plain_build(&dir, &[])?, "the original {} does not build", s.name);
    let orig = run_suite(&dir, &tests, a.timeout, 2, usize::MAX)?;
    let again = run_suite(&dir, &tests, a.timeout, 2, usize::MAX)?;
    for (i, (x, y)) in orig.outcomes.iter().zip(&again.outcomes).enumerate() {
        anyhow::ensure!(!outcomes_differ(x, y), "{}: test {} is not deterministic", s.name, tests[i].name);
    }
    let mut j1s = Vec::new();
    for _ in 0..3 {
        j1s.push(run_suite(&dir, &tests, a.timeout, 1, usize::MAX)?.elapsed.as_secs_f64());
    }
    let j1 = median(&j1s);
    let order = study_order(generate(&src), a.seed);
    let candidates = order.len();
    let (mut tried, mut not_compiling, mut hanging) = (0, 0, 0);
    let (mut rev, mut nonrev) = (0, 0);
    let mut classified = Vec::new();
    for m in order {
        if (rev >= a.revealing && nonrev >= a.non_revealing) || tried >= a.max_candidates {
            break;
        }
        tried += 1;
        std::fs::write(&src_path, m.apply(&src))?;
        if !plain_build(&dir, &[])? {
            not_compiling += 1;
            continue;
        }
        let run = run_suite(&dir, &tests, a.timeout, 2, a.max_timeouts + 1)?;
        let timeouts = run.outcomes.iter().flatten().filter(|o| o.timed_out).count();
        if timeouts > a.max_timeouts {
            hanging += 1;
            eprintln!("  {}: mutant {} hangs ({} timeouts): dropped", s.name, m.id, timeouts);
            continue;
        }
        let changed: Vec<String> = tests
            .iter()
            .zip(orig.outcomes.iter().zip(&run.outcomes))
            .filter(|(_, (o, n))| outcomes_differ(o, n))
            .map(|(t, _)| t.name.clone())
            .collect();
        if changed.is_empty() {
            nonrev += 1
        } else {
            rev += 1
        }
        eprintln!("  {}: mutant {:>4} {:<60} {} tests changed", s.name, m.id, m.describe(&src), changed.len());
        classified.push(Classified {
            description: m.describe(&src),
            diff: m.diff(&src, &format!("{}.c", s.name)),
            mutant: m,
            changed,
            timeouts,
        });
    }
    std::fs::write(&src_path, &src)?;
    Ok(Oracle {
        subject: s.name.clone(),
        seed: a.seed,
        candidates,
        tried,
        not_compiling,
        hanging,
        classified,
        plain_suite_seconds: orig.elapsed.as_secs_f64(),
        plain_suite_seconds_j1: j1,
    })
}

/// Whether a cached phase 1 classified enough candidates for `a`: as many
/// revealing and non-revealing mutants as asked for, or as many as it could.
fn covers(o: &Oracle, a: &SafetyArgs) -> bool {
    let rev = o.classified.iter().filter(|c| !c.changed.is_empty()).count();
    let non = o.classified.len() - rev;
    (rev >= a.revealing && non >= a.non_revealing) || o.tried >= a.max_candidates.min(o.candidates)
}

/// The mutants of phase 1 that phase 2 studies: the first `revealing` revealing
/// and the first `non_revealing` non-revealing ones.
fn chosen<'a>(o: &'a Oracle, a: &SafetyArgs) -> Vec<&'a Classified> {
    let rev = o.classified.iter().filter(|c| !c.changed.is_empty()).take(a.revealing);
    let non = o.classified.iter().filter(|c| c.changed.is_empty()).take(a.non_revealing);
    let mut v: Vec<&Classified> = rev.chain(non).collect();
    v.sort_by_key(|c| o.classified.iter().position(|x| x.mutant.id == c.mutant.id));
    v
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Phase 2 for one mutant.
fn study(c: &Common, s: &Subject, cl: &Classified, timeout: f64) -> Result<MutantResult> {
    let r = Retest { bin: c.retest.clone() };
    let dir: PathBuf = c.work.join("safety").join(&s.name).join(format!("m{}", cl.mutant.id));
    fresh_copy(&s.dir, &s.name, &dir)?;
    let src_path = dir.join(format!("{}.c", s.name));
    let src = std::fs::read_to_string(&src_path)?;
    let to = format!("{timeout}");
    let uni = ["--universe", "universe.txt"];
    r.run(&dir, &["init"], &[], &[0])?;
    r.run(&dir, &["build", "--paths", "--", "make"], &[], &[0])?;
    let base = r.run(&dir, &[&["run"][..], &uni, &["-j", "1", "--timeout", &to]].concat(), &[], &[0, 1])?;
    std::fs::write(&src_path, cl.mutant.apply(&src))?;
    let build = r.run(&dir, &["build", "--paths", "--", "make"], &[], &[0])?;
    let sel = r.run(&dir, &[&["select", "--format", "json"][..], &uni].concat(), &[], &[0])?;
    let sj: serde_json::Value = serde_json::from_str(&sel.stdout).context("parsing `retest select --format json`")?;
    let selected: Vec<String> = sj["selected"]
        .as_array()
        .context("no `selected` in the selection")?
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    let audit =
        r.run(&dir, &[&["audit", "--format", "json", "-j", "1", "--timeout", &to][..], &uni].concat(), &[], &[0, 3])?;
    let aj: serde_json::Value = serde_json::from_str(&audit.stdout).context("parsing `retest audit --format json`")?;
    let audit_changed: Vec<String> = aj["changed"].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let audit_missed = names(&aj["missed"]);
    let audit_selected: BTreeSet<String> = names(&aj["selected"]).into_iter().collect();
    let sel_set: BTreeSet<String> = selected.iter().cloned().collect();
    let missed: Vec<String> = cl
        .changed
        .iter()
        .chain(&audit_changed)
        .filter(|t| !sel_set.contains(*t))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let changed_any: BTreeSet<&String> = cl.changed.iter().chain(&audit_changed).collect();
    let oracle_set: BTreeSet<&String> = cl.changed.iter().collect();
    let audit_set: BTreeSet<&String> = audit_changed.iter().collect();
    let oracle_only: Vec<String> = oracle_set.difference(&audit_set).map(|s| s.to_string()).collect();
    let audit_only: Vec<String> = audit_set.difference(&oracle_set).map(|s| s.to_string()).collect();
    // every algorithm on the same change; the audit above is what it counts misses against
    let cmp = r.run(&dir, &[&["compare-algorithms", "--format", "json"][..], &uni].concat(), &[], &[0])?;
    let cj: serde_json::Value =
        serde_json::from_str(&cmp.stdout).context("parsing `retest compare-algorithms --format json`")?;
    anyhow::ensure!(cj["schema"] == "retest.compare/1", "compare-algorithms: schema {}", cj["schema"]);
    let algorithms: Vec<AlgorithmResult> = cj["algorithms"]
        .as_array()
        .context("no `algorithms` in the comparison")?
        .iter()
        .map(|row| {
            let selected = names(&row["selected_tests"]);
            let set: BTreeSet<&String> = selected.iter().collect();
            AlgorithmResult {
                algorithm: row["algorithm"].as_str().unwrap_or("?").to_string(),
                missed: changed_any.iter().filter(|t| !set.contains(*t)).map(|t| t.to_string()).collect(),
                compare_missed: names(&row["missed"]),
                analysis_seconds: row["analysis_seconds"].as_f64().unwrap_or(f64::NAN),
                selected,
            }
        })
        .collect();
    let nesting = nesting_violations(&algorithms);
    if let Some(d) = algorithms.iter().find(|x| x.algorithm == "dejavu") {
        anyhow::ensure!(
            d.selected.iter().collect::<BTreeSet<_>>() == selected.iter().collect::<BTreeSet<_>>(),
            "compare-algorithms' dejavu selection differs from `retest select`'s"
        );
    }
    let pathsel =
        r.run(&dir, &[&["select", "--algorithm", "path", "--format", "json"][..], &uni].concat(), &[], &[0])?;
    let pj: serde_json::Value = serde_json::from_str(&pathsel.stdout).context("parsing the path selection")?;
    let path_warnings: Vec<String> = pj["warnings"]
        .as_array()
        .map(|a| a.iter().map(|w| w.as_str().map(String::from).unwrap_or_else(|| w.to_string())).collect())
        .unwrap_or_default();
    let res = MutantResult {
        subject: s.name.clone(),
        id: cl.mutant.id,
        description: cl.description.clone(),
        diff: cl.diff.clone(),
        revealing: !cl.changed.is_empty(),
        oracle_changed: cl.changed.clone(),
        tests: sj["tests_total"].as_u64().unwrap_or(0) as usize,
        select_seconds: sel.seconds,
        select_analysis_seconds: sj["analysis_seconds"].as_f64().unwrap_or(f64::NAN),
        baseline_run_seconds: base.seconds,
        build_seconds: build.seconds,
        audit_selected_differs: audit_selected != sel_set,
        audit_changed,
        audit_missed,
        missed,
        audit_run_seconds: aj["run_seconds"].as_f64().unwrap_or(f64::NAN),
        selected,
        oracle_only,
        audit_only,
        compare_seconds: cmp.seconds,
        multiply_visited_nodes: cj["multiply_visited_nodes"].as_u64().unwrap_or(0) as usize,
        nesting_violations: nesting,
        path_warnings,
        algorithms,
        error: None,
    };
    let clean = res.missed.is_empty()
        && res.audit_missed.is_empty()
        && res.algorithms.iter().all(|a| a.missed.is_empty())
        && res.nesting_violations.is_empty()
        && res.oracle_only.is_empty()
        && res.audit_only.is_empty();
    if clean {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(res)
}

pub fn run(c: &Common, a: &SafetyArgs) -> Result<()> {
    let out = c.work.join("safety");
    let mut oracles = Vec::new();
    for s in &c.subjects {
        let path = out.join(&s.name).join("mutants.json");
        let o = match std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<Oracle>(&t).ok()) {
            Some(o) if o.seed == a.seed && !c.fresh && covers(&o, a) => {
                eprintln!("{}: phase 1 from {}", s.name, path.display());
                o
            }
            _ => {
                eprintln!("{}: phase 1 (oracle runs of candidate mutants)", s.name);
                let t = std::time::Instant::now();
                let o = classify(c, s, a)?;
                eprintln!("{}: phase 1 took {:.0} s", s.name, t.elapsed().as_secs_f64());
                write_json(&path, &o)?;
                o
            }
        };
        oracles.push(o);
    }
    let jobs: Vec<(&Subject, &Classified)> =
        c.subjects.iter().zip(&oracles).flat_map(|(s, o)| chosen(o, a).into_iter().map(move |cl| (s, cl))).collect();
    eprintln!("phase 2: {} mutants through retest, {} at a time", jobs.len(), a.parallel);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(a.parallel).build()?;
    let t2 = std::time::Instant::now();
    let results: Vec<MutantResult> = pool.install(|| {
        jobs.par_iter()
            .map(|(s, cl)| {
                let r = study(c, s, cl, a.timeout).unwrap_or_else(|e| MutantResult {
                    subject: s.name.clone(),
                    id: cl.mutant.id,
                    description: cl.description.clone(),
                    diff: cl.diff.clone(),
                    revealing: !cl.changed.is_empty(),
                    oracle_changed: cl.changed.clone(),
                    selected: vec![],
                    tests: 0,
                    select_seconds: f64::NAN,
                    select_analysis_seconds: f64::NAN,
                    baseline_run_seconds: f64::NAN,
                    build_seconds: f64::NAN,
                    audit_changed: vec![],
                    audit_missed: vec![],
                    audit_selected_differs: false,
                    missed: vec![],
                    audit_run_seconds: f64::NAN,
                    oracle_only: vec![],
                    audit_only: vec![],
                    algorithms: vec![],
                    compare_seconds: f64::NAN,
                    multiply_visited_nodes: 0,
                    nesting_violations: vec![],
                    path_warnings: vec![],
                    error: Some(format!("{e:#}")),
                });
                let per_alg: String =
                    r.algorithms.iter().map(|x| format!(" {}={}", x.algorithm, x.selected.len())).collect();
                let alg_missed: usize = r.algorithms.iter().map(|x| x.missed.len()).sum();
                eprintln!(
                    "  {} m{:<4} selected {:>3}/{:<3} changed {:>3} missed {} |{per_alg} | alg-missed {alg_missed} nesting {} mv {} oracle≠audit {}/{}{}",
                    r.subject,
                    r.id,
                    r.selected.len(),
                    r.tests,
                    r.oracle_changed.len(),
                    r.missed.len(),
                    r.nesting_violations.len(),
                    r.multiply_visited_nodes,
                    r.oracle_only.len(),
                    r.audit_only.len(),
                    r.error.as_ref().map(|e| format!(" ERROR {e}")).unwrap_or_default()
                );
                r
            })
            .collect()
    });
    eprintln!("phase 2 took {:.0} s", t2.elapsed().as_secs_f64());
    write_json(&out.join("results.json"), &results)?;
    let md = render(&oracles, &results);
    write_text(&out.join("tables.md"), &md)?;
    println!("{md}");
    let missing =
        results.iter().filter(|r| !r.missed.is_empty() || r.algorithms.iter().any(|x| !x.missed.is_empty())).count();
    let unnested = results.iter().filter(|r| !r.nesting_violations.is_empty()).count();
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    anyhow::ensure!(
        missing == 0 && unnested == 0 && failed == 0,
        "{missing} mutant(s) with a miss, {unnested} with a nesting violation, {failed} that failed (see {})",
        out.join("tables.md").display()
    );
    Ok(())
}

fn render(oracles: &[Oracle], results: &[MutantResult]) -> String {
    let mut rows = Vec::new();
    let mut misses = String::new();
    for o in oracles {
        let rs: Vec<&MutantResult> = results.iter().filter(|r| r.subject == o.subject && r.error.is_none()).collect();
        let errors = results.iter().filter(|r| r.subject == o.subject && r.error.is_some()).count();
        let pct = |r: &&MutantResult| 100.0 * r.selected.len() as f64 / r.tests.max(1) as f64;
        let all: Vec<f64> = rs.iter().map(pct).collect();
        let rev: Vec<f64> = rs.iter().filter(|r| r.revealing).map(pct).collect();
        let nonrev: Vec<f64> = rs.iter().filter(|r| !r.revealing).map(pct).collect();
        let changed: Vec<f64> =
            rs.iter().filter(|r| r.revealing).map(|r| 100.0 * r.oracle_changed.len() as f64 / r.tests as f64).collect();
        let miss_tests: usize = rs.iter().map(|r| r.missed.len()).sum();
        let miss_mutants = rs.iter().filter(|r| !r.missed.is_empty() || !r.audit_missed.is_empty()).count();
        let sel_t: Vec<f64> = rs.iter().map(|r| r.select_seconds).collect();
        let suite_t: Vec<f64> = rs.iter().map(|r| r.audit_run_seconds).collect();
        let disagree = rs.iter().filter(|r| {
            let a: BTreeSet<&String> = r.audit_changed.iter().collect();
            let b: BTreeSet<&String> = r.oracle_changed.iter().collect();
            a != b
        });
        rows.push(vec![
            o.subject.clone(),
            format!("{} / {} / {}", o.candidates, o.tried, o.tried - o.not_compiling - o.hanging),
            format!("{} ({} + {})", rs.len(), rs.iter().filter(|r| r.revealing).count(), nonrev.len()),
            format!("{} / {}", f(mean(&all), 1), f(median(&all), 1)),
            format!("{} / {}", f(mean(&rev), 1), f(median(&rev), 1)),
            f(mean(&nonrev), 1),
            f(mean(&changed), 1),
            format!("{miss_mutants} ({miss_tests} tests)"),
            format!("{} s", f(mean(&sel_t), 3)),
            format!("{} s", f(mean(&suite_t), 2)),
            format!("{}", f(mean(&sel_t) / mean(&suite_t), 3)),
            format!("{}", disagree.count()),
            format!("{errors}"),
        ]);
        for r in rs.iter().filter(|r| !r.missed.is_empty() || !r.audit_missed.is_empty()) {
            misses.push_str(&format!(
                "\n### MISS: {} mutant {} ({})\n\nmissed (oracle ∪ audit): {}\naudit missed: {}\n\n```diff\n{}```\n",
                r.subject,
                r.id,
                r.description,
                r.missed.join(", "),
                r.audit_missed.join(", "),
                r.diff
            ));
        }
    }
    let mut s = String::from("### Safety: mutation study\n\n");
    s.push_str(&table(
        &[
            "subject",
            "candidates / tried / compiling",
            "studied (revealing + not)",
            "% selected mean / median",
            "% selected, revealing: mean / median",
            "% selected, non-revealing: mean",
            "% tests changed (revealing): mean",
            "misses: mutants (tests)",
            "select time (mean)",
            "full suite, instrumented, -j1 (mean)",
            "ratio",
            "oracle ≠ audit",
            "errors",
        ],
        &rows,
    ));
    if misses.is_empty() {
        s.push_str("\nNo misses: every test whose behaviour changed was selected.\n");
    } else {
        s.push_str(&misses);
    }
    for r in results.iter().filter(|r| r.error.is_some()) {
        s.push_str(&format!("\nerror: {} mutant {}: {}\n", r.subject, r.id, r.error.as_deref().unwrap_or("")));
    }
    s.push_str(&render_timing(oracles, results));
    s.push_str(&render_algorithms(oracles, results));
    s.push_str(&render_disagreements(results));
    s
}

fn ok_results<'a>(results: &'a [MutantResult], subject: &str) -> Vec<&'a MutantResult> {
    results.iter().filter(|r| r.subject == subject && r.error.is_none()).collect()
}

/// `retest select` wall time per mutant against the whole suite's run time.
fn render_timing(oracles: &[Oracle], results: &[MutantResult]) -> String {
    let mut rows = Vec::new();
    for o in oracles {
        let rs = ok_results(results, &o.subject);
        let sel: Vec<f64> = rs.iter().map(|r| r.select_seconds).collect();
        let ana: Vec<f64> = rs.iter().map(|r| r.select_analysis_seconds).collect();
        let base: Vec<f64> = rs.iter().map(|r| r.baseline_run_seconds).collect();
        let ratios: Vec<f64> = rs.iter().map(|r| r.select_seconds / r.baseline_run_seconds).collect();
        rows.push(vec![
            o.subject.clone(),
            format!("{}", rs.len()),
            format!("{} / {}", f(1e3 * mean(&sel), 1), f(1e3 * median(&sel), 1)),
            format!("{} / {}", f(1e3 * mean(&ana), 2), f(1e3 * median(&ana), 2)),
            format!("{} / {}", f(median(&base), 3), f(o.plain_suite_seconds_j1, 3)),
            format!("{} %", f(100.0 * median(&ratios), 2)),
            format!("{} %", f(100.0 * median(&sel) / o.plain_suite_seconds_j1, 2)),
        ]);
    }
    let mut s = String::from("\n### Selection time against the whole suite\n\n");
    s.push_str(&table(
        &[
            "subject",
            "mutants",
            "`retest select` wall ms: mean / median",
            "analysis ms (`analysis_seconds`): mean / median",
            "whole suite s: `retest run -j1` (instrumented, median) / plain build, harness runner -j1 (median of 3)",
            "select / `retest run -j1` (median of per-mutant ratios)",
            "median select / plain -j1",
        ],
        &rows,
    ));
    s
}

/// Issue 5: every algorithm per mutant.
fn render_algorithms(oracles: &[Oracle], results: &[MutantResult]) -> String {
    let algs = ["dejavu", "partial", "full", "valid", "path", "function", "file"];
    let mut s = String::from("\n### Algorithms (`retest compare-algorithms`, baseline built with `--paths`)\n\n");
    let mut rows = Vec::new();
    let mut summary = Vec::new();
    for o in oracles {
        let rs: Vec<&MutantResult> =
            ok_results(results, &o.subject).into_iter().filter(|r| !r.algorithms.is_empty()).collect();
        for alg in algs {
            let rows_of: Vec<&AlgorithmResult> =
                rs.iter().filter_map(|r| r.algorithms.iter().find(|x| x.algorithm == alg)).collect();
            let pct: Vec<f64> = rs
                .iter()
                .filter_map(|r| {
                    r.algorithms
                        .iter()
                        .find(|x| x.algorithm == alg)
                        .map(|x| 100.0 * x.selected.len() as f64 / r.tests.max(1) as f64)
                })
                .collect();
            let t: Vec<f64> = rows_of.iter().map(|x| 1e3 * x.analysis_seconds).collect();
            let miss_m = rows_of.iter().filter(|x| !x.missed.is_empty()).count();
            let miss_t: usize = rows_of.iter().map(|x| x.missed.len()).sum();
            rows.push(vec![
                o.subject.clone(),
                alg.to_string(),
                format!("{}", rows_of.len()),
                f(mean(&pct), 1),
                format!("{miss_m} ({miss_t} tests)"),
                format!("{} / {}", f(mean(&t), 2), f(median(&t), 2)),
            ]);
        }
        let sel = |r: &MutantResult, a: &str| r.algorithms.iter().find(|x| x.algorithm == a).map(|x| x.selected.len());
        let mv: Vec<&&MutantResult> = rs.iter().filter(|r| r.multiply_visited_nodes > 0).collect();
        let fewer = mv
            .iter()
            .filter(|r| ["partial", "full", "valid", "path"].iter().any(|a| sel(r, a) < sel(r, "dejavu")))
            .count();
        let fewer_any = rs
            .iter()
            .filter(|r| ["partial", "full", "valid", "path"].iter().any(|a| sel(r, a) < sel(r, "dejavu")))
            .count();
        let path_warned = rs.iter().filter(|r| !r.path_warnings.is_empty()).count();
        summary.push(vec![
            o.subject.clone(),
            format!("{}", rs.len()),
            format!("{}", rs.iter().filter(|r| !r.nesting_violations.is_empty()).count()),
            format!("{}", mv.len()),
            format!("{fewer}"),
            format!("{fewer_any}"),
            format!("{path_warned}"),
        ]);
    }
    s.push_str(&table(
        &[
            "subject",
            "algorithm",
            "mutants",
            "% selected (mean)",
            "misses: mutants (tests)",
            "analysis ms: mean / median",
        ],
        &rows,
    ));
    s.push('\n');
    s.push_str(&table(
        &[
            "subject",
            "mutants",
            "nesting violations (path ⊆ valid ⊆ full ⊆ partial ⊆ dejavu)",
            "with a multiply-visited node",
            "… of which Ball's algorithms select fewer than dejavu",
            "Ball's algorithms select fewer than dejavu (all mutants)",
            "path selection with warnings",
        ],
        &summary,
    ));
    for r in results.iter().filter(|r| !r.nesting_violations.is_empty()) {
        s.push_str(&format!(
            "\n#### NESTING: {} mutant {} ({})\n\n{}\n\n```diff\n{}```\n",
            r.subject,
            r.id,
            r.description,
            r.nesting_violations.join("\n"),
            r.diff
        ));
    }
    for r in results {
        for x in r.algorithms.iter().filter(|x| !x.missed.is_empty()) {
            s.push_str(&format!(
                "\n#### MISS ({}): {} mutant {} ({})\n\nmissed: {}\n\n```diff\n{}```\n",
                x.algorithm,
                r.subject,
                r.id,
                r.description,
                x.missed.join(", "),
                r.diff
            ));
        }
    }
    for r in results.iter().filter(|r| r.multiply_visited_nodes > 0) {
        let counts: Vec<String> =
            r.algorithms.iter().map(|x| format!("{} {}", x.algorithm, x.selected.len())).collect();
        s.push_str(&format!(
            "\n- multiply-visited: {} mutant {} ({}): {} node(s); selected: {}\n",
            r.subject,
            r.id,
            r.description,
            r.multiply_visited_nodes,
            counts.join(", ")
        ));
    }
    s
}

/// Mutants where the harness's oracle (plain builds) and `retest audit`
/// (instrumented builds) disagree about which tests changed behaviour.
fn render_disagreements(results: &[MutantResult]) -> String {
    let mut s = String::from("\n### Oracle (plain builds) against `retest audit` (instrumented builds)\n\n");
    let d: Vec<&MutantResult> = results
        .iter()
        .filter(|r| r.error.is_none() && (!r.oracle_only.is_empty() || !r.audit_only.is_empty()))
        .collect();
    if d.is_empty() {
        s.push_str("They agree on every mutant.\n");
    }
    for r in d {
        s.push_str(&format!(
            "\n#### {} mutant {} ({})\n\noracle only: {}\naudit only: {}\nselected (dejavu): {}\n\n```diff\n{}```\n",
            r.subject,
            r.id,
            r.description,
            r.oracle_only.join(" "),
            r.audit_only.join(" "),
            if r.oracle_only.iter().chain(&r.audit_only).all(|t| r.selected.contains(t)) {
                "all of them"
            } else {
                "NOT all"
            },
            r.diff
        ));
    }
    s
}

/// The classified mutants of a subject from a previous `safety` run, if any.
pub fn load_oracle(work: &Path, subject: &str) -> Option<Oracle> {
    let t = std::fs::read_to_string(work.join("safety").join(subject).join("mutants.json")).ok()?;
    serde_json::from_str(&t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alg(name: &str, sel: &[&str]) -> AlgorithmResult {
        AlgorithmResult {
            algorithm: name.into(),
            selected: sel.iter().map(|s| s.to_string()).collect(),
            analysis_seconds: 0.0,
            missed: vec![],
            compare_missed: vec![],
        }
    }

    #[test]
    fn nesting_holds_and_breaks() {
        let mut v = vec![
            alg("dejavu", &["t1", "t2", "t3"]),
            alg("partial", &["t1", "t2"]),
            alg("full", &["t1", "t2"]),
            alg("valid", &["t1"]),
            alg("path", &[]),
            alg("file", &["t1", "t2", "t3", "t4"]),
        ];
        assert!(nesting_violations(&v).is_empty());
        v[4] = alg("path", &["t2"]);
        assert_eq!(nesting_violations(&v), vec!["path ⊄ valid: t2".to_string()]);
        v.remove(2);
        let n = nesting_violations(&v);
        assert_eq!(n.len(), 3, "{n:?}");
        assert!(n.iter().filter(|x| x.contains("not reported")).count() == 2);
    }
}
