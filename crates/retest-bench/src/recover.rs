//! `recover`: RECOVER's exactness and cost over a chain of versions (004 §4,
//! Tables 9–11).
//!
//! v0 is the original subject, v_k the original with mutant k applied (compiling
//! mutants of the `safety` oracle, revealing or not, none that hang). Three
//! working copies per subject:
//!
//! * `sel`  — the chain: baseline v0, then per k `retest build -- make`,
//!   `retest select`, `retest run --selected --format json` (selective probes);
//! * `full` — the same chain with `run --selected --full-probes` (T′ on a fully
//!   instrumented build: Table 10's other column);
//! * `ref`  — recreated per k: `retest init`, full build of v_k, run every test.
//!
//! After each step the matrices of `sel` and `full` must equal `ref`'s.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::driver::{Ran, Retest};
use crate::estimate::{self, EdgeMap, Version, select};
use crate::mutate::{generate, study_order};
use crate::report::{f, mean, median, table, write_json, write_text};
use crate::safety::load_oracle;
use crate::suite::fresh_copy;
use crate::{Common, Subject};

#[derive(clap::Args, Clone)]
pub struct RecoverArgs {
    /// Versions after v0 in each chain.
    #[arg(long, default_value_t = 30)]
    pub steps: usize,
    /// Tests run in parallel by retest.
    #[arg(short = 'j', long, default_value_t = 2)]
    pub jobs: usize,
    /// Timeout per test in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub timeout: f64,
    /// Seed of the mutant order when no `safety` oracle exists.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Each version is the original with one mutant (the default chain is
    /// cumulative: v_k is v_{k-1} with one more mutant applied).
    #[arg(long)]
    pub single: bool,
    /// Only render the tables from the `steps.json` of earlier runs.
    #[arg(long)]
    pub report: bool,
    /// Record beyond edges on every build (`retest build --mcdc --paths`); the
    /// recordings of the recomputed matrix are compared with the full rerun's too.
    #[arg(long)]
    pub mcdc_paths: bool,
}

impl RecoverArgs {
    /// The results directory under `--work`.
    fn dir(&self) -> &'static str {
        if self.mcdc_paths { "recover-mcdc-paths" } else { "recover" }
    }
    fn build(&self) -> Vec<&'static str> {
        if self.mcdc_paths { vec!["build", "--mcdc", "--paths", "--", "make"] } else { vec!["build", "--", "make"] }
    }
}

/// One step of a chain.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct Step {
    pub k: usize,
    pub mutant: usize,
    pub description: String,
    pub tests: usize,
    /// `retest select` on the chain (its T′ before RECOVER's extra reruns).
    pub selected: usize,
    /// T′ of `run --selected` (selected + rerun_extra), selective and full-probe chains.
    pub t_prime_sel: usize,
    pub t_prime_full: usize,
    pub rerun_extra: usize,
    pub full_probes_fallback: bool,
    pub probes_selective: u64,
    pub probes_full: u64,
    pub build_sel_s: f64,
    pub select_s: f64,
    pub run_selected_sel_s: f64,
    pub tprime_run_sel_s: f64,
    pub selective_build_s: f64,
    pub recompute_s: f64,
    pub build_full_s: f64,
    pub run_selected_full_s: f64,
    pub tprime_run_full_s: f64,
    pub ref_build_s: f64,
    pub ref_run_s: f64,
    /// Differences of the chain matrices from the reference (empty = equal).
    pub diff_sel: Vec<String>,
    pub diff_full: Vec<String>,
    /// Differences between two reference runs, when a mismatch made us check.
    pub ref_nondeterminism: Option<Vec<String>>,
    /// Mutants applied in this version (cumulative chain) and the source lines changed from v_{k-1}.
    pub applied: usize,
    /// Tests selected for v_{k-1} → v_k by DejaVu on each coverage of v_{k-1}
    /// (`gt`: rerun-all, the ground truth), and false positives / negatives.
    pub sel_gt: usize,
    pub modes: BTreeMap<String, ModeResult>,
    /// `retest select`'s own selection equals the harness's on the same matrix.
    pub formula_agrees: bool,
    /// Edges of v_{k-1} the estimated mapping carried to v_k, of all.
    pub estimated_mapped: usize,
    pub edges_old: u64,
}

/// One coverage mode's selection against the ground truth.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct ModeResult {
    pub selected: usize,
    pub fp: usize,
    pub fn_: usize,
}

pub const MODES: [&str; 3] = ["outdated", "estimated", "updated"];

impl Step {
    pub fn retest_all(&self) -> f64 {
        self.ref_build_s + self.ref_run_s
    }
    pub fn dejavu(&self) -> f64 {
        self.build_sel_s + self.select_s + self.tprime_run_full_s
    }
    pub fn recover_full(&self) -> f64 {
        self.build_full_s + self.run_selected_full_s
    }
    pub fn recover_sel(&self) -> f64 {
        self.build_sel_s + self.run_selected_sel_s
    }
}

/// A normalised `retest.matrix/1`: test → (state, unit key → covered edges,
/// unit key → what was recorded beyond edges, as canonical JSON).
pub type Matrix = BTreeMap<String, Row>;

#[derive(Clone, Default)]
pub struct Row {
    pub known: bool,
    pub state: String,
    pub units: BTreeMap<String, BTreeSet<u64>>,
    pub recorded: BTreeMap<String, String>,
}

pub fn matrix(r: &Retest, dir: &Path, save: &Path) -> Result<Matrix> {
    let out = r.run(dir, &["coverage", "--format", "matrix"], &[], &[0])?;
    std::fs::write(save, &out.stdout)?;
    let v: serde_json::Value = serde_json::from_str(&out.stdout).context("parsing the matrix")?;
    anyhow::ensure!(v["schema"] == "retest.matrix/1", "unexpected schema {}", v["schema"]);
    let prefixes: Vec<String> =
        [dir.to_path_buf(), dir.canonicalize()?].iter().map(|p| format!("{}/", p.display())).collect();
    let norm = |k: &str| prefixes.iter().fold(k.to_string(), |k, p| k.replace(p.as_str(), ""));
    let mut m = Matrix::new();
    for t in v["tests"].as_array().context("no tests in the matrix")? {
        let name = t["name"].as_str().context("a test without a name")?.to_string();
        let state = t["state"].as_str().unwrap_or("?").to_string();
        let mut row = Row { known: state == "ok", state, ..Row::default() };
        if let Some(u) = t["units"].as_object() {
            for (k, edges) in u {
                let e: BTreeSet<u64> =
                    edges.as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default();
                row.units.insert(norm(k), e);
            }
        }
        if let Some(u) = t["recorded"].as_object() {
            for (k, rec) in u {
                row.recorded.insert(norm(k), rec.to_string());
            }
        }
        m.insert(name, row);
    }
    Ok(m)
}

/// Every difference of `got` from `want`, one line each (at most 40).
pub fn compare(got: &Matrix, want: &Matrix) -> Vec<String> {
    let mut d = Vec::new();
    let empty = BTreeSet::new();
    for (t, w) in want {
        let Some(g) = got.get(t) else {
            d.push(format!("{t}: missing from the recomputed matrix"));
            continue;
        };
        if g.state != w.state {
            d.push(format!("{t}: state {} (recomputed) vs {} (full rerun)", g.state, w.state));
        }
        for k in w.units.keys().chain(g.units.keys()).collect::<BTreeSet<_>>() {
            let (we, ge) = (w.units.get(k).unwrap_or(&empty), g.units.get(k).unwrap_or(&empty));
            if we != ge {
                let extra: Vec<&u64> = ge.difference(we).collect();
                let lost: Vec<&u64> = we.difference(ge).collect();
                d.push(format!("{t} unit {k}: recomputed has extra edges {extra:?}, lacks edges {lost:?}"));
            }
        }
        for k in w.recorded.keys().chain(g.recorded.keys()).collect::<BTreeSet<_>>() {
            let (wr, gr) = (w.recorded.get(k), g.recorded.get(k));
            if wr != gr {
                d.push(format!(
                    "{t} unit {k}: recordings differ: recomputed {} vs full rerun {}",
                    gr.map_or("none", |s| s.as_str()),
                    wr.map_or("none", |s| s.as_str())
                ));
            }
        }
    }
    for t in got.keys().filter(|t| !want.contains_key(*t)) {
        d.push(format!("{t}: only in the recomputed matrix"));
    }
    d.truncate(40);
    d
}

/// Per test: known, and unit key → edges (for `estimate::select`).
fn lookup(m: &Matrix) -> impl Fn(&str) -> estimate::TestCov + '_ {
    move |t| m.get(t).map(|r| (r.known, r.units.clone()))
}

/// A matrix with every test's edges of every unit rewritten by `f` (one unit per subject).
fn map_matrix(m: &Matrix, f: &dyn Fn(&BTreeSet<u64>) -> BTreeSet<u64>) -> Matrix {
    m.iter()
        .map(|(t, r)| {
            let units = r.units.iter().map(|(k, e)| (k.clone(), f(e))).collect();
            (t.clone(), Row { units, recorded: BTreeMap::new(), ..r.clone() })
        })
        .collect()
}

fn cfg_of(r: &Retest, dir: &Path, file: &str) -> Result<Version> {
    let out = r.run(dir, &["cfg", "--level", "condition", "--format", "json", file], &[], &[0])?;
    Version::parse(&out.stdout, &std::fs::read_to_string(dir.join(file))?)
}

/// Whether `src` builds and runs every test without a timeout (a cumulative
/// chain must not hang) and deterministically (two runs give the same exit
/// statuses and outputs: a mutant that reads an uninitialised variable does
/// not, and then no two runs — a full rerun included — need cover the same
/// edges), checked with plain `make` in `dir`.
fn usable(s: &Subject, dir: &Path, src: &str, tests: &[crate::suite::Test]) -> Result<bool> {
    fresh_copy(&s.dir, &s.name, dir)?;
    std::fs::write(dir.join(format!("{}.c", s.name)), src)?;
    if !crate::suite::plain_build(dir, &["-s", "CFLAGS=-O0 -w"])? {
        return Ok(false);
    }
    let first = crate::suite::run_suite(dir, tests, 1.0, 2, 1)?;
    if !first.outcomes.iter().all(|o| o.as_ref().is_some_and(|o| !o.timed_out)) {
        return Ok(false);
    }
    let second = crate::suite::run_suite(dir, tests, 1.0, 2, 1)?;
    Ok(first.outcomes == second.outcomes)
}

fn stat<T: std::str::FromStr + Default>(ran: &Ran, key: &str) -> T {
    ran.stats().and_then(|s| s.get(key).and_then(|v| v.parse().ok())).unwrap_or_default()
}

/// The reference: fresh store, full build of the current source, every test.
fn reference(
    r: &Retest,
    s: &Subject,
    dir: &Path,
    src: &str,
    a: &RecoverArgs,
    save: &Path,
) -> Result<(f64, f64, Matrix)> {
    fresh_copy(&s.dir, &s.name, dir)?;
    std::fs::write(dir.join(format!("{}.c", s.name)), src)?;
    r.run(dir, &["init"], &[], &[0])?;
    let b = r.run(dir, &a.build(), &[], &[0])?;
    let (j, to) = (a.jobs.to_string(), a.timeout.to_string());
    let run = r.run(dir, &["run", "--universe", "universe.txt", "-j", &j, "--timeout", &to], &[], &[0, 1])?;
    let m = matrix(r, dir, save)?;
    Ok((b.seconds, run.seconds, m))
}

fn chain_subject(c: &Common, s: &Subject, a: &RecoverArgs) -> Result<Vec<Step>> {
    let r = Retest { bin: c.retest.clone() };
    let base = c.work.join(a.dir()).join(&s.name);
    let file = format!("{}.c", s.name);
    let src = std::fs::read_to_string(s.dir.join(&file))?;
    let mutants: Vec<(crate::mutate::Mutant, String)> = match load_oracle(&c.work, &s.name) {
        Some(o) => o.classified.into_iter().filter(|c| c.timeouts == 0).map(|c| (c.mutant, c.description)).collect(),
        None => study_order(generate(&src), a.seed).into_iter().map(|m| (m.clone(), m.describe(&src))).collect(),
    };
    let universe = crate::suite::universe(&s.dir.join("universe.txt"))?;
    let (sel, full, refd) = (base.join("sel"), base.join("full"), base.join("ref"));
    let mats = base.join("matrices");
    std::fs::create_dir_all(&mats)?;
    let (j, to) = (a.jobs.to_string(), a.timeout.to_string());
    let uni = ["--universe", "universe.txt"];
    let build = a.build();
    for d in [&sel, &full] {
        fresh_copy(&s.dir, &s.name, d)?;
        r.run(d, &["init"], &[], &[0])?;
        r.run(d, &build, &[], &[0])?;
        r.run(d, &[&["run"][..], &uni, &["-j", &j, "--timeout", &to]].concat(), &[], &[0, 1])?;
    }
    // v0: its matrix (a full run) is where every coverage mode starts
    let m0 = matrix(&r, &sel, &mats.join("v0.json"))?;
    let v0 = cfg_of(&r, &sel, &file)?;
    let (mut prev_cfg, mut prev_ref, mut prev_sel, mut estimated) =
        (cfg_of(&r, &sel, &file)?, m0.clone(), m0.clone(), m0.clone());
    let mut applied: Vec<&crate::mutate::Mutant> = Vec::new();
    let mut next = 0;
    let mut steps = Vec::new();
    for k in 1..=a.steps {
        // the next version: one more mutant that does not overlap the applied ones,
        // builds, and lets every test finish
        let (m, desc, v) = loop {
            let Some((m, desc)) = mutants.get(next) else {
                anyhow::bail!("{}: mutants exhausted after {} versions", s.name, k - 1);
            };
            next += 1;
            if a.single {
                break (m, desc, m.apply(&src));
            }
            if applied.iter().any(|p| p.start < m.end && m.start < p.end) {
                continue;
            }
            let mut all: Vec<&crate::mutate::Mutant> = applied.clone();
            all.push(m);
            all.sort_by_key(|x| std::cmp::Reverse(x.start));
            let v = all.iter().fold(src.clone(), |acc, x| x.apply(&acc));
            if usable(s, &base.join("probe"), &v, &universe)? {
                applied.push(m);
                break (m, desc, v);
            }
        };
        let mut st = Step {
            k,
            mutant: m.id,
            description: desc.clone(),
            applied: if a.single { 1 } else { applied.len() },
            ..Step::default()
        };

        // the chain with selective probes
        std::fs::write(sel.join(&file), &v)?;
        st.build_sel_s = r.run(&sel, &build, &[], &[0])?.seconds;
        let sj = r.run(&sel, &[&["select", "--format", "json"][..], &uni].concat(), &[], &[0])?;
        st.select_s = sj.seconds;
        let sv: serde_json::Value = serde_json::from_str(&sj.stdout)?;
        st.selected = sv["tests_selected"].as_u64().unwrap_or(0) as usize;
        st.tests = sv["tests_total"].as_u64().unwrap_or(0) as usize;
        let retest_sel: BTreeSet<String> = sv["selected"]
            .as_array()
            .map(|a| a.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect())
            .unwrap_or_default();
        let dangerous: BTreeMap<String, BTreeSet<u64>> = sv["dangerous_condition_edges"]
            .as_object()
            .context("`retest select --format json` has no dangerous_condition_edges")?
            .iter()
            .map(|(k, v)| {
                let e = v.as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default();
                (k.clone(), e)
            })
            .collect();
        let cfg = cfg_of(&r, &sel, &file)?;

        // the next selection (v_{k-1} → v_k) on each coverage of v_{k-1}
        let names: Vec<String> = universe.iter().map(|t| t.name.clone()).collect();
        let pick = |m: &Matrix| select(names.iter().map(String::as_str), &lookup(m), &dangerous);
        let gt = pick(&prev_ref);
        let upd = pick(&prev_sel);
        st.formula_agrees = upd == retest_sel;
        if !st.formula_agrees {
            eprintln!(
                "  {} v{k}: WARNING the harness's selection on the chain's matrix ({}) differs from `retest select` ({})",
                s.name,
                upd.len(),
                retest_sel.len()
            );
        }
        let outdated_m = map_matrix(&m0, &|e| estimate::outdated(&v0, &prev_cfg, e));
        st.sel_gt = gt.len();
        for (mode, chosen) in [("outdated", pick(&outdated_m)), ("estimated", pick(&estimated)), ("updated", upd)] {
            st.modes.insert(
                mode.to_string(),
                ModeResult {
                    selected: chosen.len(),
                    fp: chosen.difference(&gt).count(),
                    fn_: gt.difference(&chosen).count(),
                },
            );
        }
        // the estimate for v_k
        let em = EdgeMap::new(&prev_cfg, &cfg);
        st.estimated_mapped = em.len();
        st.edges_old = prev_cfg.edge_count();
        estimated = map_matrix(&estimated, &|e| em.apply(e));

        let rs = r.run(
            &sel,
            &[
                &["run", "--selected", "--selective-probes", "--format", "json"][..],
                &uni,
                &["-j", &j, "--timeout", &to],
            ]
            .concat(),
            &[],
            &[0, 1],
        )?;
        anyhow::ensure!(rs.stats().is_some(), "no `recover` statistics from `run --selected`:\n{}", rs.stdout);
        st.run_selected_sel_s = rs.seconds;
        st.t_prime_sel = stat::<usize>(&rs, "selected") + stat::<usize>(&rs, "rerun_extra");
        st.rerun_extra = stat(&rs, "rerun_extra");
        st.full_probes_fallback = stat::<String>(&rs, "full_probes_used") == "true";
        st.probes_selective = stat(&rs, "probes_selective");
        st.probes_full = stat(&rs, "probes_full");
        st.tprime_run_sel_s = stat(&rs, "run_seconds");
        st.selective_build_s = stat(&rs, "build_seconds");
        st.recompute_s = stat(&rs, "recompute_seconds");
        let m_sel = matrix(&r, &sel, &mats.join(format!("v{k}-sel.json")))?;

        // the chain with full probes
        std::fs::write(full.join(&file), &v)?;
        st.build_full_s = r.run(&full, &build, &[], &[0])?.seconds;
        let rf = r.run(
            &full,
            &[&["run", "--selected", "--full-probes", "--format", "json"][..], &uni, &["-j", &j, "--timeout", &to]]
                .concat(),
            &[],
            &[0, 1],
        )?;
        st.run_selected_full_s = rf.seconds;
        st.t_prime_full = stat::<usize>(&rf, "selected") + stat::<usize>(&rf, "rerun_extra");
        st.tprime_run_full_s = stat(&rf, "run_seconds");
        let m_full = matrix(&r, &full, &mats.join(format!("v{k}-full.json")))?;

        // the reference
        let (rb, rr, m_ref) = reference(&r, s, &refd, &v, a, &mats.join(format!("v{k}-ref.json")))?;
        st.ref_build_s = rb;
        st.ref_run_s = rr;
        st.diff_sel = compare(&m_sel, &m_ref);
        st.diff_full = compare(&m_full, &m_ref);
        if !st.diff_sel.is_empty() || !st.diff_full.is_empty() {
            let (_, _, again) = reference(&r, s, &base.join("ref2"), &v, a, &mats.join(format!("v{k}-ref2.json")))?;
            st.ref_nondeterminism = Some(compare(&again, &m_ref));
            for l in st.diff_sel.iter().chain(&st.diff_full).take(10) {
                eprintln!("  {} v{k}: MISMATCH {l}", s.name);
            }
        }
        let mr = |m: &str| st.modes.get(m).cloned().unwrap_or_default();
        eprintln!(
            "  {} v{k:<2} m{:<4} T′ {:>3}/{:<3} probes {:>4}/{:<4} run --selected {:.2} s (T′ {:.2} s / full probes {:.2} s) retest-all {:.2} s; next-selection gt {} outdated {}/{}/{} estimated {}/{}/{} updated {}/{}/{}; {}",
            s.name,
            m.id,
            st.t_prime_sel,
            st.tests,
            st.probes_selective,
            st.probes_full,
            st.run_selected_sel_s,
            st.tprime_run_sel_s,
            st.tprime_run_full_s,
            st.retest_all(),
            st.sel_gt,
            mr("outdated").selected,
            mr("outdated").fp,
            mr("outdated").fn_,
            mr("estimated").selected,
            mr("estimated").fp,
            mr("estimated").fn_,
            mr("updated").selected,
            mr("updated").fp,
            mr("updated").fn_,
            if st.diff_sel.is_empty() && st.diff_full.is_empty() {
                "matrices equal".to_string()
            } else {
                format!("MISMATCH sel {} full {}", st.diff_sel.len(), st.diff_full.len())
            }
        );
        steps.push(st);
        write_json(&base.join("steps.json"), &steps)?;
        prev_cfg = cfg;
        prev_ref = m_ref;
        prev_sel = m_sel;
    }
    Ok(steps)
}

pub fn run(c: &Common, a: &RecoverArgs) -> Result<()> {
    let out = c.work.join(a.dir());
    let mut all: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    for s in &c.subjects {
        let t = std::time::Instant::now();
        eprintln!("{}: chain of {} versions", s.name, a.steps);
        let steps: Vec<Step> = if a.report {
            serde_json::from_str(&std::fs::read_to_string(out.join(&s.name).join("steps.json"))?)?
        } else {
            chain_subject(c, s, a)?
        };
        eprintln!("{}: took {:.0} s", s.name, t.elapsed().as_secs_f64());
        write_json(&out.join(&s.name).join("steps.json"), &steps)?;
        all.insert(s.name.clone(), steps);
    }
    let md = render(&all, a);
    write_text(&out.join("tables.md"), &md)?;
    println!("{md}");
    Ok(())
}

fn render(all: &BTreeMap<String, Vec<Step>>, a: &RecoverArgs) -> String {
    let col = |v: &[Step], g: fn(&Step) -> f64| mean(&v.iter().map(g).collect::<Vec<_>>());
    let pct = |a: f64, b: f64| format!("{} %", f(100.0 * (1.0 - a / b), 1));
    let (mut ex, mut t9, mut t10, mut t11) = (vec![], vec![], vec![], vec![]);
    let mut details = String::new();
    for (name, v) in all {
        let eq_sel = v.iter().filter(|s| s.diff_sel.is_empty()).count();
        let eq_full = v.iter().filter(|s| s.diff_full.is_empty()).count();
        let same_t = v.iter().filter(|s| s.t_prime_sel == s.t_prime_full).count();
        ex.push(vec![
            name.clone(),
            v.len().to_string(),
            format!("{eq_sel} / {}", v.len()),
            format!("{eq_full} / {}", v.len()),
            f(col(v, |s| s.t_prime_sel as f64), 1),
            f(col(v, |s| 100.0 * s.t_prime_sel as f64 / s.tests.max(1) as f64), 1),
            v.iter().map(|s| s.rerun_extra).sum::<usize>().to_string(),
            v.iter().filter(|s| s.full_probes_fallback).count().to_string(),
            format!("{same_t} / {}", v.len()),
        ]);
        let (pf, ps) = (col(v, |s| s.probes_full as f64), col(v, |s| s.probes_selective as f64));
        t9.push(vec![name.clone(), f(pf, 1), f(ps, 1), pct(ps, pf)]);
        let (rf, rs) = (col(v, |s| s.tprime_run_full_s), col(v, |s| s.tprime_run_sel_s));
        // per-step ratios (the two chains run the same step back to back), median
        let ratio = |num: fn(&Step) -> f64, den: fn(&Step) -> f64| {
            let r: Vec<f64> = v.iter().filter(|s| den(s) > 0.0).map(|s| num(s) / den(s)).collect();
            f(median(&r), 2)
        };
        t10.push(vec![
            name.clone(),
            f(rf, 3),
            f(rs, 3),
            pct(rs, rf),
            ratio(|s| s.tprime_run_sel_s, |s| s.tprime_run_full_s),
        ]);
        let all_t = col(v, Step::retest_all);
        let share = |x: f64| format!("{} ({} %)", f(x, 2), f(100.0 * x / all_t, 0));
        t11.push(vec![
            name.clone(),
            f(all_t, 2),
            share(col(v, Step::dejavu)),
            share(col(v, Step::recover_full)),
            share(col(v, Step::recover_sel)),
            format!(
                "{} / {} / {}",
                ratio(Step::dejavu, Step::retest_all),
                ratio(Step::recover_full, Step::retest_all),
                ratio(Step::recover_sel, Step::retest_all)
            ),
            f(col(v, |s| s.select_s), 3),
            f(col(v, |s| s.selective_build_s), 3),
            f(col(v, |s| s.recompute_s), 3),
        ]);
        for s in v.iter().filter(|s| !s.diff_sel.is_empty() || !s.diff_full.is_empty()) {
            details.push_str(&format!(
                "\n### MISMATCH: {name} v{} (mutant {}: {})\n\nselective chain vs reference:\n{}\nfull-probe chain vs reference:\n{}\nreference vs a second reference: {}\n",
                s.k,
                s.mutant,
                s.description,
                s.diff_sel.iter().map(|l| format!("- {l}\n")).collect::<String>(),
                s.diff_full.iter().map(|l| format!("- {l}\n")).collect::<String>(),
                match &s.ref_nondeterminism {
                    Some(d) if d.is_empty() => "identical (the reference is deterministic)".to_string(),
                    Some(d) => format!("DIFFERENT: {}", d.join("; ")),
                    None => "not checked".into(),
                }
            ));
        }
    }
    let mut s = format!(
        "### RECOVER: exactness over the chain ({}, builds `retest {}`)\n\n",
        if a.single { "v_k = v0 + mutant k" } else { "cumulative: v_k = v_{k-1} + one more mutant" },
        a.build().join(" ")
    );
    s.push_str(&table(
        &[
            "subject",
            "versions",
            "matrix = full rerun (selective probes)",
            "matrix = full rerun (full probes)",
            "mean |T′|",
            "mean % T′",
            "extra reruns (must_rerun)",
            "full-probe fallbacks",
            "same T′ in both chains",
        ],
        &ex,
    ));
    if details.is_empty() {
        s.push_str("\nEvery recomputed matrix equals the full rerun's.\n");
    } else {
        s.push_str(&details);
    }
    s.push_str(&selection_tables(all));
    s.push_str("\n### Probes (cf. 004 Table 9), mean over the chain\n\n");
    s.push_str(&table(&["subject", "full instrumentation", "selective instrumentation", "savings"], &t9));
    s.push_str("\n### Time to run T′ (cf. 004 Table 10), seconds, mean over the chain\n\n");
    s.push_str(&table(
        &["subject", "full probes", "selective probes", "savings", "median per-step ratio selective / full"],
        &t10,
    ));
    s.push_str("\n### Regression-testing time per version (cf. 004 Table 11), seconds, mean over the chain\n\n");
    s.push_str(&table(
        &[
            "subject",
            "retest-all",
            "select only (DejaVu)",
            "select + RECOVER, full probes",
            "select + RECOVER, selective probes",
            "median per-step ratio to retest-all (select only / +RECOVER full / +RECOVER selective)",
            "of which select",
            "selective build",
            "recompute",
        ],
        &t11,
    ));
    s
}

/// Tables 3–8: the next selection on outdated, estimated and updated coverage
/// against the one on rerun-all coverage.
fn selection_tables(all: &BTreeMap<String, Vec<Step>>) -> String {
    let cell = |r: &ModeResult| format!("{} / {} / {}", r.selected, r.fp, r.fn_);
    let mut s = String::from(
        "\n### The next selection on each coverage (cf. 004 Tables 3–8): selected / false positives / false negatives\n",
    );
    let mut summary = Vec::new();
    for (name, v) in all {
        let mut rows = Vec::new();
        let mut tot: BTreeMap<&str, ModeResult> = BTreeMap::new();
        let mut gt = 0;
        for st in v {
            let mut row = vec![format!("(v{}, v{})", st.k - 1, st.k), st.sel_gt.to_string()];
            gt += st.sel_gt;
            for m in MODES {
                let r = st.modes.get(m).cloned().unwrap_or_default();
                let t = tot.entry(m).or_default();
                t.selected += r.selected;
                t.fp += r.fp;
                t.fn_ += r.fn_;
                row.push(cell(&r));
            }
            rows.push(row);
        }
        let mut total = vec!["total".to_string(), gt.to_string()];
        total.extend(MODES.iter().map(|m| format!("**{}**", cell(&tot[m]))));
        rows.push(total);
        let mut sum = vec![name.clone(), v.len().to_string(), gt.to_string()];
        sum.extend(MODES.iter().map(|m| cell(&tot[m])));
        sum.push(format!("{} / {}", v.iter().filter(|s| s.formula_agrees).count(), v.len()));
        summary.push(sum);
        s.push_str(&format!("\n#### {name}\n\n"));
        s.push_str(&table(&["versions", "rerun-all (truth)", "outdated", "estimated", "updated (RECOVER)"], &rows));
    }
    s.push_str("\n#### Totals over the chains\n\n");
    s.push_str(&table(
        &[
            "subject",
            "selections",
            "rerun-all selected",
            "outdated",
            "estimated",
            "updated (RECOVER)",
            "harness selection = `retest select`",
        ],
        &summary,
    ));
    s
}
