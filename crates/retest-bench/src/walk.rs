//! `walk`: a differential random walk over versions. `retest run --selected`
//! must keep every test's coverage exact after any sequence of edits, and the
//! coverage it keeps must let the next selection miss nothing.
//!
//! Per subject, a walk of `--steps` versions from the original, each step a
//! random mix (seeded by `--seed` and the subject's name) of the kinds of
//! [`Kind`]: one edit or several, an edit of a function together with one of
//! its callers, an edit of the statement right after a call, of `main`, of a
//! declaration outside every function, and reverts of an earlier step's
//! edits, alone or with a new edit in the same step (a fix that replaces a
//! faulty change). Edits are the mutants of [`crate::mutate`]; every version
//! must compile and run every test to completion, twice with the same
//! outcomes (checked with the harness's own runner on plain builds, the
//! second with uninitialised memory filled: see `usable`), and leave at
//! least half the tests as the original left them.
//!
//! For each probe mode (`--probes selective,full`) one working copy follows
//! the walk with `retest build` and `retest run --selected`. After each step:
//!
//! * its matrix (`retest coverage --format matrix`: every test's edges and
//!   what it recorded beyond them) must equal, bit for bit, that of a fresh
//!   store's full `retest run` of the same version;
//! * a random follow-up edit of that version is built in a copy of the
//!   working copy and audited with `retest audit`: no test whose outcome
//!   changed may be left out.
//!
//! Results go to `WORK/walk[-RECORD]/<subject>/steps.json` and
//! `WORK/walk[-RECORD]/tables.md`; the command exits non-zero when any matrix
//! differs or any audit misses a test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::driver::Retest;
use crate::mutate::{Function, Mutant, SplitMix, follows_call, functions, generate};
use crate::recover::{Matrix, compare, matrix};
use crate::report::{table, write_json, write_text};
use crate::{Common, Subject};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Serialize, Deserialize)]
pub enum Probes {
    /// `run --selected --selective-probes`.
    Selective,
    /// `run --selected --full-probes`.
    Full,
}

impl Probes {
    fn flag(self) -> &'static str {
        match self {
            Probes::Selective => "--selective-probes",
            Probes::Full => "--full-probes",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Probes::Selective => "selective",
            Probes::Full => "full",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Record {
    Mcdc,
    Paths,
}

#[derive(clap::Args, Clone)]
pub struct WalkArgs {
    /// Seed of the walk (each subject's walk is seeded with it and its name).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Versions after the original, per subject.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Probe modes: each follows the walk in its own working copy.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "selective,full")]
    pub probes: Vec<Probes>,
    /// Record beyond edges on every build (`retest build --mcdc --paths`).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub record: Vec<Record>,
    /// Only the first N tests of each universe (0: all).
    #[arg(long, default_value_t = 0)]
    pub tests: usize,
    /// Tests run in parallel by retest.
    #[arg(short = 'j', long, default_value_t = 2)]
    pub jobs: usize,
    /// Timeout per test in seconds.
    #[arg(long, default_value_t = 5.0)]
    pub timeout: f64,
}

impl WalkArgs {
    fn dir(&self) -> String {
        let mut d = String::from("walk");
        for r in self.record_flags() {
            d.push_str(&r.replace("--", "-"));
        }
        d
    }
    fn record_flags(&self) -> Vec<&'static str> {
        let mut r: Vec<Record> = self.record.clone();
        r.sort();
        r.dedup();
        r.iter()
            .map(|r| match r {
                Record::Mcdc => "--mcdc",
                Record::Paths => "--paths",
            })
            .collect()
    }
    fn build(&self) -> Vec<&'static str> {
        [&["build"][..], &self.record_flags(), &["--", "make", "-s"]].concat()
    }
}

/// The kinds of steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// One new edit anywhere.
    One,
    /// Two to four new edits anywhere.
    Several,
    /// An edit of a function and one of a function that calls it.
    CallerCallee,
    /// An edit of the statement right after a call of one of the program's functions.
    AfterCall,
    /// An edit of `main`.
    Main,
    /// An edit outside every function (an initialiser, an array size, a
    /// `#define`, in a source or a header).
    Declaration,
    /// Every edit of an earlier step that is still applied is undone.
    Revert,
    /// A revert and one new edit: a fix that replaces a faulty change.
    RevertAndEdit,
}

const KINDS: [(Kind, u64); 8] = [
    (Kind::One, 2),
    (Kind::Several, 2),
    (Kind::CallerCallee, 2),
    (Kind::AfterCall, 2),
    (Kind::Main, 1),
    (Kind::Declaration, 1),
    (Kind::Revert, 1),
    (Kind::RevertAndEdit, 2),
];

/// One C file of a subject: its original text, its mutants and functions.
struct Source {
    name: String,
    original: String,
    mutants: Vec<Mutant>,
    functions: Vec<Function>,
}

/// An edit: mutant `m` of file `file`, applied at step `step`.
#[derive(Clone)]
struct Edit {
    file: usize,
    m: usize,
    step: usize,
}

/// The program of a subject: its C files and what the walk has applied.
struct Program {
    sources: Vec<Source>,
    /// Every function the program defines.
    defined: BTreeSet<String>,
    applied: Vec<Edit>,
}

impl Program {
    /// The C sources and headers of `dir`.
    fn load(dir: &Path) -> Result<Program> {
        let mut names: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".c") || n.ends_with(".h"))
            .collect();
        names.sort();
        anyhow::ensure!(!names.is_empty(), "no C file in {}", dir.display());
        let mut files = Vec::new();
        for name in names {
            let text = std::fs::read_to_string(dir.join(&name))?;
            files.push((name, text));
        }
        Ok(Program::new(files))
    }

    /// A program of these (file name, text) pairs.
    fn new(files: Vec<(String, String)>) -> Program {
        let sources: Vec<Source> = files
            .into_iter()
            .map(|(name, original)| Source {
                mutants: generate(&original),
                functions: functions(&original),
                name,
                original,
            })
            .collect();
        let defined = sources.iter().flat_map(|s| s.functions.iter().map(|f| f.name.clone())).collect();
        Program { sources, defined, applied: Vec::new() }
    }

    fn mutant(&self, e: &Edit) -> &Mutant {
        &self.sources[e.file].mutants[e.m]
    }

    /// The text of file `i` with the edits `edits` applied.
    fn text(&self, i: usize, edits: &[Edit]) -> String {
        let mut mine: Vec<&Mutant> = edits.iter().filter(|e| e.file == i).map(|e| self.mutant(e)).collect();
        mine.sort_by_key(|m| std::cmp::Reverse(m.start));
        mine.iter().fold(self.sources[i].original.clone(), |acc, m| m.apply(&acc))
    }

    /// The function of file `i` whose body holds byte `pos`.
    fn function_at(&self, i: usize, pos: usize) -> Option<&Function> {
        self.sources[i].functions.iter().find(|f| f.body.contains(&pos))
    }

    fn describe(&self, e: &Edit) -> String {
        let m = self.mutant(e);
        let f = self.function_at(e.file, m.start).map_or("file scope".to_string(), |f| format!("{}()", f.name));
        format!("{}: {} in {f}", self.sources[e.file].name, m.describe(&self.sources[e.file].original))
    }

    /// Whether edit `e` overlaps one of `edits`.
    fn overlaps(&self, e: &Edit, edits: &[Edit]) -> bool {
        let m = self.mutant(e);
        edits.iter().any(|x| {
            x.file == e.file && {
                let n = self.mutant(x);
                n.start < m.end && m.start < n.end
            }
        })
    }

    /// Every edit that does not overlap `edits` and for which `keep` holds.
    fn candidates(&self, edits: &[Edit], keep: impl Fn(usize, &Mutant) -> bool) -> Vec<Edit> {
        let mut out = Vec::new();
        for (i, s) in self.sources.iter().enumerate() {
            for (k, m) in s.mutants.iter().enumerate() {
                let e = Edit { file: i, m: k, step: 0 };
                if keep(i, m) && !self.overlaps(&e, edits) {
                    out.push(e);
                }
            }
        }
        out
    }
}

fn pick<T: Clone>(rng: &mut SplitMix, v: &[T]) -> Option<T> {
    (!v.is_empty()).then(|| v[(rng.next_u64() % v.len() as u64) as usize].clone())
}

/// New edits of a step of kind `kind` on top of `base` (none when the kind
/// has no candidate in this version).
fn new_edits(p: &Program, rng: &mut SplitMix, kind: Kind, base: &[Edit]) -> Vec<Edit> {
    /// Adds a random candidate for which `keep` holds; false when there is none.
    fn add(
        p: &Program,
        rng: &mut SplitMix,
        base: &[Edit],
        chosen: &mut Vec<Edit>,
        keep: &dyn Fn(usize, &Mutant) -> bool,
    ) -> bool {
        let all: Vec<Edit> = [base, chosen.as_slice()].concat();
        match pick(rng, &p.candidates(&all, keep)) {
            Some(e) => {
                chosen.push(e);
                true
            }
            None => false,
        }
    }
    let in_fn = |name: String| move |i: usize, m: &Mutant| p.function_at(i, m.start).is_some_and(|f| f.name == name);
    let mut chosen: Vec<Edit> = Vec::new();
    match kind {
        Kind::One | Kind::RevertAndEdit => {
            add(p, rng, base, &mut chosen, &|_, _| true);
        }
        Kind::Several => {
            let n = 2 + rng.next_u64() % 3;
            for _ in 0..n {
                add(p, rng, base, &mut chosen, &|_, _| true);
            }
        }
        Kind::CallerCallee => {
            // (caller, callee) pairs of the program's own functions
            let pairs: Vec<(String, String)> = p
                .sources
                .iter()
                .flat_map(|s| s.functions.iter())
                .flat_map(|f| {
                    f.calls
                        .iter()
                        .filter(|c| p.defined.contains(*c) && **c != f.name)
                        .map(|c| (f.name.clone(), c.clone()))
                })
                .collect();
            if let Some((caller, callee)) = pick(rng, &pairs)
                && add(p, rng, base, &mut chosen, &in_fn(callee))
                && !add(p, rng, base, &mut chosen, &in_fn(caller))
            {
                chosen.clear();
            }
        }
        Kind::AfterCall => {
            let defined: Vec<&str> = p.defined.iter().map(String::as_str).collect();
            add(p, rng, base, &mut chosen, &|i, m| {
                p.function_at(i, m.start).is_some() && follows_call(&p.sources[i].original, m.start, &defined)
            });
        }
        Kind::Main => {
            add(p, rng, base, &mut chosen, &in_fn("main".into()));
        }
        Kind::Declaration => {
            add(p, rng, base, &mut chosen, &|i, m| p.function_at(i, m.start).is_none());
        }
        Kind::Revert => {}
    }
    chosen
}

/// A subject's working directory: its files copied (directories named
/// `inputs` linked), its universe cut to `tests` lines if non-zero.
fn copy_subject(s: &Subject, dst: &Path, tests: usize) -> Result<()> {
    if dst.exists() {
        std::fs::remove_dir_all(dst).with_context(|| format!("removing {}", dst.display()))?;
    }
    copy_tree(&s.dir, dst, true)?;
    if tests > 0 {
        let u = std::fs::read_to_string(s.dir.join("universe.txt"))?;
        let cut: String =
            u.split('\n').filter(|l| !l.trim().is_empty()).take(tests).map(|l| format!("{l}\n")).collect();
        std::fs::write(dst.join("universe.txt"), cut)?;
    }
    Ok(())
}

/// Copies a tree (symbolic links as links). With `top`, `inputs/` becomes a link
/// to the original and the store and build outputs are left out.
fn copy_tree(from: &Path, to: &Path, top: bool) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (p, name) = (e.path(), e.file_name());
        let n = name.to_string_lossy();
        let ty = e.file_type()?;
        if top && (n == ".retest" || n.ends_with(".o")) {
            continue;
        }
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p)?, to.join(&name))?;
        } else if ty.is_dir() {
            if top && n == "inputs" {
                std::os::unix::fs::symlink(p.canonicalize()?, to.join(&name))?;
            } else {
                copy_tree(&p, &to.join(&name), false)?;
            }
        } else {
            std::fs::copy(&p, to.join(&name))?;
        }
    }
    Ok(())
}

/// Writes the version's files into `dir` (only those whose text differs, so
/// `make` rebuilds only what changed).
fn write_version(p: &Program, edits: &[Edit], dir: &Path) -> Result<()> {
    for (i, s) in p.sources.iter().enumerate() {
        let text = p.text(i, edits);
        let path = dir.join(&s.name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text)?;
        }
    }
    Ok(())
}

/// Each test's outcome (exit status, output hashes) on one version.
type Outcomes = Vec<Option<crate::suite::Outcome>>;

/// The outcomes of the version if it builds with plain `make` and runs every
/// test to completion with the same outcomes twice (in `dir`, a copy of the
/// subject); `None` otherwise. The second time the build fills every local
/// variable with a pattern before its first use
/// (`-ftrivial-auto-var-init=pattern`) and glibc fills what `malloc` returns
/// (`MALLOC_PERTURB_`): a version whose outputs depend on memory it never set
/// (a mutant that leaves a variable uninitialised) is not used, since its
/// outputs would change with any change to the code around it — the
/// instrumentation included — whatever a selection did. A third build runs
/// under AddressSanitizer and UBSan: a version that reads or writes out of
/// bounds is not used either.
fn usable(p: &Program, edits: &[Edit], dir: &Path, a: &WalkArgs) -> Result<Option<Outcomes>> {
    write_version(p, edits, dir)?;
    if !crate::suite::plain_build(dir, &["-s", "CFLAGS=-O0 -w"])? {
        return Ok(None);
    }
    let tests = crate::suite::universe(&dir.join("universe.txt"))?;
    let first = crate::suite::run_suite(dir, &tests, a.timeout.min(2.0), a.jobs, 1)?;
    if !first.outcomes.iter().all(|o| o.as_ref().is_some_and(|o| !o.timed_out)) {
        return Ok(None);
    }
    if !crate::suite::plain_build(dir, &["-s", "CFLAGS=-O0 -w -ftrivial-auto-var-init=pattern"])? {
        return Ok(None);
    }
    let perturbed: Vec<crate::suite::Test> = tests
        .iter()
        .map(|t| crate::suite::Test {
            name: t.name.clone(),
            cmd: format!("MALLOC_PERTURB_=165; export MALLOC_PERTURB_; {}", t.cmd),
        })
        .collect();
    let second = crate::suite::run_suite(dir, &perturbed, a.timeout.min(2.0), a.jobs, 1)?;
    if first.outcomes != second.outcomes {
        return Ok(None);
    }
    // Out-of-bounds reads and writes see other memory once the program is
    // instrumented (the runtime's state, addresses that vary from run to run),
    // so such a version records other coverage on every run and no stored
    // matrix can equal "the" fresh one: AddressSanitizer and UBSan put it back.
    if !crate::suite::plain_build(dir, &["-s", "CFLAGS=-O0 -w -fsanitize=address,undefined -fno-sanitize-recover=all"])?
    {
        return Ok(None);
    }
    let checked: Vec<crate::suite::Test> = tests
        .iter()
        .map(|t| crate::suite::Test {
            name: t.name.clone(),
            cmd: format!(
                "ASAN_OPTIONS=exitcode={SANITIZED}:detect_leaks=0 UBSAN_OPTIONS=exitcode={SANITIZED}; export ASAN_OPTIONS UBSAN_OPTIONS; {}",
                t.cmd
            ),
        })
        .collect();
    let third = crate::suite::run_suite(dir, &checked, a.timeout.min(4.0), a.jobs, 1)?;
    // each test ends as in the plain build: none stopped by a sanitizer, and a
    // sanitizer that cannot run here shows as every test ending otherwise
    let clean = third.outcomes.iter().zip(&first.outcomes).all(|(s, f)| match (s, f) {
        (Some(s), Some(f)) => !s.timed_out && s.status != SANITIZED && s.status == f.status,
        _ => false,
    });
    Ok(clean.then_some(first.outcomes))
}

/// The exit status of a test that a sanitizer stopped.
const SANITIZED: i32 = 86;

/// How many tests have other outcomes in `a` than in `b`.
fn changed(a: &Outcomes, b: &Outcomes) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

/// What one probe mode's working copy did at one step.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct ChainStep {
    /// `selected`, `rerun_extra`, `full_probes_used`, `probes_selective`, `probes_full` (and the timings) of `run --selected --format json`.
    pub stats: BTreeMap<String, String>,
    /// Tests whose stored coverage differs from the fresh full run's.
    pub wrong: Vec<String>,
    /// The differences (at most 40 lines).
    pub diff: Vec<String>,
    /// The audit of the follow-up edit: tests selected, tests whose outcome changed, misses.
    pub audit_selected: usize,
    pub audit_changed: usize,
    pub missed: Vec<String>,
    /// The follow-up edit's `retest select` from the changed units alone
    /// differs from the whole program's (`RETEST_WHOLE_PROGRAM=1`).
    #[serde(default)]
    pub selection_differs: bool,
}

/// One step of a walk.
#[derive(Clone, Serialize, Deserialize)]
pub struct Step {
    pub k: usize,
    pub kind: Kind,
    pub added: Vec<String>,
    pub reverted: Vec<String>,
    /// Edits applied to the original in this version.
    pub applied: usize,
    pub follow_up: Option<String>,
    /// Per probe mode.
    pub chains: BTreeMap<String, ChainStep>,
    /// When a matrix differed: whether a third fresh full run equals the first.
    pub reference_repeats: Option<bool>,
    /// Versions drawn for this step and put back because two fresh full runs
    /// of them recorded different coverage.
    #[serde(default)]
    pub redrawn_nondeterministic: usize,
}

/// The tests whose rows differ.
fn wrong_tests(got: &Matrix, want: &Matrix) -> Vec<String> {
    let names: BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    names
        .into_iter()
        .filter(|t| match (got.get(*t), want.get(*t)) {
            (Some(g), Some(w)) => g.state != w.state || g.units != w.units || g.recorded != w.recorded,
            _ => true,
        })
        .cloned()
        .collect()
}

/// A fresh store's full run of the version: its matrix.
fn reference(
    r: &Retest,
    s: &Subject,
    p: &Program,
    edits: &[Edit],
    dir: &Path,
    a: &WalkArgs,
    save: &Path,
) -> Result<Matrix> {
    copy_subject(s, dir, a.tests)?;
    write_version(p, edits, dir)?;
    r.run(dir, &["init"], &[], &[0])?;
    r.run(dir, &a.build(), &[], &[0])?;
    let (j, to) = (a.jobs.to_string(), a.timeout.to_string());
    r.run(dir, &["run", "--universe", "universe.txt", "-j", &j, "--timeout", &to], &[], &[0, 1])?;
    matrix(r, dir, save)
}

fn walk_subject(c: &Common, s: &Subject, a: &WalkArgs) -> Result<Vec<Step>> {
    let r = Retest { bin: c.retest.clone() };
    let base = c.work.join(a.dir()).join(&s.name);
    let mats = base.join("matrices");
    std::fs::create_dir_all(&mats)?;
    let mut p = Program::load(&s.dir)?;
    let seed = s.name.bytes().fold(a.seed, |h, b| h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b)));
    let mut rng = SplitMix(seed);
    let (j, to) = (a.jobs.to_string(), a.timeout.to_string());
    let uni = ["--universe", "universe.txt"];
    let chain = |m: Probes| base.join(format!("chain-{}", m.name()));
    for &m in &a.probes {
        let d = chain(m);
        copy_subject(s, &d, a.tests)?;
        r.run(&d, &["init"], &[], &[0])?;
        r.run(&d, &a.build(), &[], &[0])?;
        r.run(&d, &[&["run"][..], &uni, &["-j", &j, "--timeout", &to]].concat(), &[], &[0, 1])?;
    }
    let probe = base.join("probe");
    copy_subject(s, &probe, a.tests)?;
    // a version must leave most tests as the original left them, or the walk
    // would soon wander among programs that fail every test the same way
    let original = usable(&p, &[], &probe, a)?.with_context(|| {
        format!(
            "{}: the unchanged program does not run deterministically, or does not build or pass under AddressSanitizer and UBSan (-fsanitize=address,undefined: are libasan and libubsan installed?)",
            s.name
        )
    })?;
    let mut steps = Vec::new();
    for k in 1..=a.steps {
        // the next version
        let t0 = std::time::Instant::now();
        let mut attempt = 0;
        let mut redrawn = 0;
        let (kind, next, added, reverted, current, want) = loop {
            attempt += 1;
            anyhow::ensure!(attempt <= 200, "{}: no usable version for step {k} after 200 attempts", s.name);
            let total: u64 = KINDS.iter().map(|(_, w)| w).sum();
            let mut x = rng.next_u64() % total;
            let mut kind = Kind::One;
            for (kd, w) in KINDS {
                if x < w {
                    kind = kd;
                    break;
                }
                x -= w;
            }
            // long-lived edits pile up: revert more often then
            if p.applied.len() >= 10 && rng.next_u64().is_multiple_of(2) {
                kind = if rng.next_u64().is_multiple_of(2) { Kind::Revert } else { Kind::RevertAndEdit };
            }
            let mut keep = p.applied.clone();
            let mut reverted = Vec::new();
            if matches!(kind, Kind::Revert | Kind::RevertAndEdit) {
                let earlier: BTreeSet<usize> = p.applied.iter().map(|e| e.step).collect();
                let Some(step) = pick(&mut rng, &earlier.into_iter().collect::<Vec<_>>()) else { continue };
                reverted = p.applied.iter().filter(|e| e.step == step).cloned().collect();
                keep.retain(|e| e.step != step);
            }
            let mut added = new_edits(&p, &mut rng, kind, &keep);
            if kind != Kind::Revert && added.is_empty() {
                continue;
            }
            for e in &mut added {
                e.step = k;
            }
            let next: Vec<Edit> = [keep, added.clone()].concat();
            if let Some(o) = usable(&p, &next, &probe, a)?
                && 2 * changed(&o, &original) <= o.len()
            {
                // A program that reads or writes out of bounds may see other
                // memory once instrumented (the runtime's state, addresses that
                // vary from run to run) and record other coverage on every run:
                // no stored matrix can then equal "the" fresh one. Such a version
                // says nothing about RECOVER; it is counted and another is drawn.
                let want = reference(&r, s, &p, &next, &base.join("ref"), a, &mats.join(format!("v{k}-ref.json")))?;
                let again = reference(&r, s, &p, &next, &base.join("ref2"), a, &mats.join(format!("v{k}-ref2.json")))?;
                let differ = wrong_tests(&again, &want);
                if differ.is_empty() {
                    break (kind, next, added, reverted, o, want);
                }
                redrawn += 1;
                eprintln!(
                    "  {} {k:>3}: two fresh full runs of a version differ ({}): another version is drawn",
                    s.name,
                    differ.join(", ")
                );
            }
        };
        let mut st = Step {
            k,
            kind,
            added: added.iter().map(|e| p.describe(e)).collect(),
            reverted: reverted.iter().map(|e| p.describe(e)).collect(),
            applied: next.len(),
            follow_up: None,
            chains: BTreeMap::new(),
            reference_repeats: None,
            redrawn_nondeterministic: redrawn,
        };
        p.applied = next;
        // each version's sources, to reproduce a step by hand
        let vdir = base.join("versions").join(format!("v{k}"));
        std::fs::create_dir_all(&vdir)?;
        write_version(&p, &p.applied, &vdir)?;
        let t_pick = t0.elapsed().as_secs_f64();
        for &m in &a.probes {
            let d = chain(m);
            write_version(&p, &p.applied, &d)?;
            r.run(&d, &a.build(), &[], &[0])?;
            let ran = r.run(
                &d,
                &[&["run", "--selected", m.flag(), "--format", "json"][..], &uni, &["-j", &j, "--timeout", &to]]
                    .concat(),
                &[],
                &[0, 1],
            )?;
            let got = matrix(&r, &d, &mats.join(format!("v{k}-{}.json", m.name())))?;
            let stats = ran.stats().unwrap_or_default();
            st.chains.insert(
                m.name().to_string(),
                ChainStep {
                    stats,
                    wrong: wrong_tests(&got, &want),
                    diff: compare(&got, &want),
                    ..ChainStep::default()
                },
            );
        }
        if st.chains.values().any(|c| !c.wrong.is_empty()) {
            let again = reference(&r, s, &p, &p.applied, &base.join("ref3"), a, &mats.join(format!("v{k}-ref3.json")))?;
            st.reference_repeats = Some(wrong_tests(&again, &want).is_empty());
        }

        let t_chains = t0.elapsed().as_secs_f64() - t_pick;
        // a follow-up edit, audited on a copy of each working copy: one that
        // changes some test's outcome if one of a few tries does
        let mut follow = None;
        for tries in 0..50 {
            let cands = p.candidates(&p.applied, |_, _| true);
            let Some(mut e) = pick(&mut rng, &cands) else { break };
            e.step = k + 1;
            let v: Vec<Edit> = [p.applied.clone(), vec![e.clone()]].concat();
            if let Some(o) = usable(&p, &v, &probe, a)? {
                let visible = changed(&o, &current) > 0;
                if visible || follow.is_none() {
                    follow = Some((e, v));
                }
                if visible || tries >= 10 {
                    break;
                }
            }
        }
        if let Some((e, v)) = &follow {
            st.follow_up = Some(p.describe(e));
            for &m in &a.probes {
                let d = base.join(format!("audit-{}", m.name()));
                if d.exists() {
                    std::fs::remove_dir_all(&d)?;
                }
                copy_tree(&chain(m), &d, false)?;
                write_version(&p, v, &d)?;
                r.run(&d, &a.build(), &[], &[0])?;
                // the selection from the changed units alone, as the whole program's
                let select = |whole: &str| -> Result<serde_json::Value> {
                    let out = r.run(
                        &d,
                        &[&["select", "--format", "json"][..], &uni].concat(),
                        &[("RETEST_WHOLE_PROGRAM", whole)],
                        &[0],
                    )?;
                    let mut v: serde_json::Value =
                        serde_json::from_str(&out.stdout).context("parsing the selection")?;
                    if let Some(o) = v.as_object_mut() {
                        o.remove("analysis_seconds");
                        o.remove("units_compared");
                    }
                    Ok(v)
                };
                let selection_differs = select("0")? != select("1")?;
                let out = r.run(
                    &d,
                    &[&["audit", "--format", "json"][..], &uni, &["-j", &j, "--timeout", &to]].concat(),
                    &[],
                    &[0, 3],
                )?;
                let v: serde_json::Value = serde_json::from_str(&out.stdout).context("parsing the audit")?;
                let names = |x: &serde_json::Value| -> Vec<String> {
                    x.as_array()
                        .map(|a| a.iter().filter_map(|t| t.as_str().map(String::from)).collect())
                        .unwrap_or_default()
                };
                let cs = st.chains.get_mut(m.name()).expect("chain ran");
                cs.audit_selected = names(&v["selected"]).len();
                cs.audit_changed = v["changed"].as_object().map_or(0, |o| o.len());
                cs.missed = names(&v["missed"]);
                cs.selection_differs = selection_differs;
            }
        }
        let line: Vec<String> = st
            .chains
            .iter()
            .map(|(m, c)| {
                format!(
                    "{m}: T′ {}+{}{} {} audit {}/{} missed {}",
                    c.stats.get("selected").map_or("?", String::as_str),
                    c.stats.get("rerun_extra").map_or("?", String::as_str),
                    if c.stats.get("full_probes_used").is_some_and(|v| v == "true") { " (full probes)" } else { "" },
                    if c.wrong.is_empty() { "exact".to_string() } else { format!("WRONG {} tests", c.wrong.len()) },
                    c.audit_selected,
                    c.audit_changed,
                    c.missed.len()
                )
            })
            .collect();
        eprintln!(
            "  {} {k:>3} {:?} [{}] {} ({attempt} tries {t_pick:.1} s, runs {t_chains:.1} s, audits {:.1} s)",
            s.name,
            st.kind,
            st.added.len() + st.reverted.len(),
            line.join("; "),
            t0.elapsed().as_secs_f64() - t_pick - t_chains
        );
        for (m, c) in &st.chains {
            for l in c.diff.iter().take(5) {
                eprintln!("      {m} MISMATCH {l}");
            }
            if !c.missed.is_empty() {
                eprintln!("      {m} MISSED {:?} after {}", c.missed, st.follow_up.as_deref().unwrap_or("?"));
            }
        }
        steps.push(st);
        write_json(&base.join("steps.json"), &steps)?;
    }
    Ok(steps)
}

/// What a walk found, over every subject and probe mode.
#[derive(Default)]
pub struct Summary {
    pub steps: usize,
    /// (subject, probe mode, step) of every matrix that differed.
    pub mismatches: Vec<(String, String, usize)>,
    /// Tests with wrong coverage, summed over steps.
    pub wrong_tests: usize,
    pub audits: usize,
    pub misses: usize,
    /// Follow-up edits whose selection from the changed units alone differed
    /// from the whole program's.
    pub selection_differences: usize,
}

impl Summary {
    pub fn exact(&self) -> bool {
        self.mismatches.is_empty() && self.misses == 0 && self.selection_differences == 0
    }
}

pub fn run(c: &Common, a: &WalkArgs) -> Result<Summary> {
    let out = c.work.join(a.dir());
    let command: Vec<String> = std::env::args().collect();
    let mut all: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    for s in &c.subjects {
        let t = std::time::Instant::now();
        eprintln!("{}: walk of {} steps (seed {})", s.name, a.steps, a.seed);
        let steps = walk_subject(c, s, a).with_context(|| format!("walk over {}", s.name))?;
        eprintln!("{}: took {:.0} s", s.name, t.elapsed().as_secs_f64());
        all.insert(s.name.clone(), steps);
    }
    let mut sum = Summary::default();
    let mut rows = Vec::new();
    for (name, steps) in &all {
        sum.steps += steps.len();
        for &m in &a.probes {
            let cs: Vec<(usize, &ChainStep)> =
                steps.iter().filter_map(|s| s.chains.get(m.name()).map(|c| (s.k, c))).collect();
            let wrong: Vec<usize> = cs.iter().filter(|(_, c)| !c.wrong.is_empty()).map(|(k, _)| *k).collect();
            let wrong_tests: usize = cs.iter().map(|(_, c)| c.wrong.len()).sum();
            let audited: Vec<&ChainStep> =
                steps.iter().filter(|s| s.follow_up.is_some()).filter_map(|s| s.chains.get(m.name())).collect();
            let misses: usize = audited.iter().map(|c| c.missed.len()).sum();
            let fallback =
                cs.iter().filter(|(_, c)| c.stats.get("full_probes_used").is_some_and(|v| v == "true")).count();
            for k in &wrong {
                sum.mismatches.push((name.clone(), m.name().to_string(), *k));
            }
            sum.wrong_tests += wrong_tests;
            sum.audits += audited.len();
            sum.misses += misses;
            sum.selection_differences += audited.iter().filter(|c| c.selection_differs).count();
            rows.push(vec![
                name.clone(),
                m.name().to_string(),
                cs.len().to_string(),
                format!("{} / {}", cs.len() - wrong.len(), cs.len()),
                wrong_tests.to_string(),
                fallback.to_string(),
                audited.len().to_string(),
                audited.iter().map(|c| c.audit_changed).sum::<usize>().to_string(),
                misses.to_string(),
            ]);
        }
    }
    let kinds: BTreeMap<String, usize> = all.values().flatten().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(format!("{:?}", s.kind)).or_insert(0) += 1;
        m
    });
    let mut md = format!(
        "### Random walk (seed {}, {} steps per subject, builds `retest {}`)\n\n`{}`\n\n",
        a.seed,
        a.steps,
        a.build().join(" "),
        command.join(" ")
    );
    md.push_str(&table(
        &[
            "subject",
            "probes",
            "steps",
            "matrix = fresh full run",
            "tests with wrong coverage",
            "steps run on full probes",
            "audits",
            "tests changed in audits",
            "audit misses",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\nSteps by kind: {}.\n",
        kinds.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
    ));
    let redrawn: usize = all.values().flatten().map(|s| s.redrawn_nondeterministic).sum();
    md.push_str(&format!(
        "\nVersions put back because two fresh full runs of them differed (out-of-bounds reads or writes that see other memory once instrumented): {redrawn}.\n"
    ));
    md.push_str(&format!(
        "\n{} steps, {} matrix mismatches ({} tests), {} audits, {} misses, {} selections from the changed units that differ from the whole program's.\n",
        sum.steps,
        sum.mismatches.len(),
        sum.wrong_tests,
        sum.audits,
        sum.misses,
        sum.selection_differences
    ));
    write_text(&out.join("tables.md"), &md)?;
    for (name, steps) in &all {
        write_json(&out.join(name).join("steps.json"), steps)?;
    }
    println!("{md}");
    Ok(sum)
}

/// The directory of a subject given by path (`examples/cruise`) or by name under `root`.
pub fn subject_dir(root: &Path, n: &str) -> Result<PathBuf> {
    let dir = if n.contains('/') { PathBuf::from(n) } else { root.join(n) };
    let dir = dir.canonicalize().with_context(|| format!("subject {n}"))?;
    if !dir.join("Makefile").is_file() || !dir.join("universe.txt").is_file() {
        bail!("{} has no Makefile or no universe.txt", dir.display());
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "static int limit = 10;
static int g(int x)
{
    if (x > limit)
        return 1;
    return x + 2;
}
int f(int x)
{
    int y = g(x);
    y = y * 3;
    return y - 1;
}
int main(void)
{
    return f(2) > 4;
}
";

    /// The functions (or file scope) and lines of `kind`'s edits, over many draws.
    fn draws(kind: Kind) -> Vec<Vec<(String, usize)>> {
        let p = Program::new(vec![("a.c".into(), SRC.into())]);
        (0..40)
            .map(|seed| {
                let mut rng = SplitMix(seed);
                new_edits(&p, &mut rng, kind, &[])
                    .iter()
                    .map(|e| {
                        let m = p.mutant(e);
                        (p.function_at(0, m.start).map_or("-".to_string(), |f| f.name.clone()), m.line)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn each_kind_edits_where_it_says() {
        for d in draws(Kind::CallerCallee) {
            let fs: Vec<&str> = d.iter().map(|(f, _)| f.as_str()).collect();
            assert!(fs == ["g", "f"] || fs == ["f", "main"], "{d:?}");
        }
        // the statement after `int y = g(x);`
        assert!(draws(Kind::AfterCall).iter().all(|d| d.len() == 1 && d[0] == ("f".into(), 11)));
        assert!(draws(Kind::Main).iter().all(|d| d.len() == 1 && d[0].0 == "main"));
        assert!(draws(Kind::Declaration).iter().all(|d| d.len() == 1 && d[0] == ("-".into(), 1)));
        assert!(draws(Kind::Several).iter().all(|d| (2..=4).contains(&d.len())));
        assert!(draws(Kind::Revert).iter().all(|d| d.is_empty()));
        // several edits never overlap
        let p = Program::new(vec![("a.c".into(), SRC.into())]);
        for seed in 0..40 {
            let edits = new_edits(&p, &mut SplitMix(seed), Kind::Several, &[]);
            for (i, e) in edits.iter().enumerate() {
                assert!(!p.overlaps(e, &edits[i + 1..]));
            }
        }
    }

    #[test]
    fn a_row_that_differs_anywhere_is_wrong() {
        use crate::recover::Row;
        let row = |edges: &[u64], rec: &str| Row {
            known: true,
            state: "ok".into(),
            units: BTreeMap::from([("a.c@a".to_string(), edges.iter().copied().collect())]),
            recorded: if rec.is_empty() {
                BTreeMap::new()
            } else {
                BTreeMap::from([("a.c@a".to_string(), rec.into())])
            },
        };
        let want: Matrix = BTreeMap::from([("t1".into(), row(&[1, 2], "")), ("t2".into(), row(&[3], "{}"))]);
        assert!(wrong_tests(&want.clone(), &want).is_empty());
        let mut got = want.clone();
        got.insert("t1".into(), row(&[1], ""));
        got.insert("t2".into(), row(&[3], "{\"paths\":[1]}"));
        got.insert("t3".into(), row(&[], ""));
        assert_eq!(wrong_tests(&got, &want), ["t1", "t2", "t3"]);
    }
}
