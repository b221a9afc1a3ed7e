//! `retest-bench`: the evaluation harness of `retest` (results in `bench/RESULTS.md`).
//!
//! ```sh
//! retest-bench --retest PATH safety     # selection safety on seeded mutants (002 §4)
//! retest-bench --retest PATH recover    # RECOVER exactness and cost over a version chain (004 §4)
//! retest-bench --retest PATH overhead   # run-time cost of instrumentation
//! retest-bench --retest PATH --only lexer,sched,examples/cruise walk --seed 1 --steps 100
//!                                        # random walk: RECOVER exact after any sequence of edits
//! retest-bench --retest PATH csmith     # behaviour, front end, lines and mutants over csmith programs
//! retest-bench --retest PATH scale --dir DIR [--store URL]
//!                                        # a synthetic 10⁵-test store: index read, `retest select` timing
//! retest-bench --retest PATH build --project DIR [--build CMD] [--clean CMD] [--touch FILE]
//!                                        # a whole build's CPU: plain, gcc --coverage, retest build
//! ```
//!
//! Every experiment works on copies of the subjects under `--work`; the subjects
//! themselves are never modified. Each subcommand writes `results.json` and
//! `tables.md` under `WORK/<subcommand>/` and prints the tables.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use retest_bench::{Common, Subject, buildcost, csmith, mutate, overhead, recover, safety, scale, walk};

#[derive(Parser)]
#[command(name = "retest-bench", about = "The study harness of retest: safety, RECOVER exactness, overhead, csmith")]
struct Cli {
    /// The `retest` binary under study.
    #[arg(long, value_name = "PATH")]
    retest: PathBuf,
    /// The directory holding the subjects (`<name>/<name>.c`, Makefile, universe.txt, inputs/).
    #[arg(long, value_name = "DIR", default_value = "bench/subjects")]
    subjects: PathBuf,
    /// Scratch directory for the experiments.
    #[arg(long, value_name = "DIR", default_value = "/work/scratch/eval")]
    work: PathBuf,
    /// Only these subjects (comma-separated; default: lexer, sched, textsub).
    #[arg(long, value_delimiter = ',', default_value = "lexer,sched,textsub")]
    only: Vec<String>,
    /// Recompute cached intermediate results (the safety oracle).
    #[arg(long)]
    fresh: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Mutation study: are all tests whose output changes selected?
    Safety(safety::SafetyArgs),
    /// Chain of versions: does `run --selected` keep the matrix exact, and at what cost?
    Recover(recover::RecoverArgs),
    /// Run-time overhead of retest's instrumentation against gcov and clang coverage.
    Overhead(overhead::OverheadArgs),
    /// Random walk over versions: is every matrix `run --selected` keeps the one a
    /// fresh full run records, and does an audited follow-up edit miss no test?
    Walk(walk::WalkArgs),
    /// Randomised study over csmith programs: behaviour at each level, front end,
    /// lines against gcov, audited mutants.
    Csmith(csmith::CsmithArgs),
    /// A synthetic store at a CI fleet's size (10⁵ tests, 100 units of 10⁵
    /// edges, 50 changed edges): the index read, and how to time `retest select`.
    Scale(scale::ScaleArgs),
    /// What a whole build costs through `retest build` (first build, texts
    /// analysed before, `--mcdc --paths`), against plain and `gcc --coverage`:
    /// CPU ratios from `wait4`, interleaved rounds, medians.
    Build(buildcost::BuildArgs),
    /// List the mutants of each subject in study order (nothing is run).
    Mutants {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print each mutant as a diff.
        #[arg(long)]
        diff: bool,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let retest = cli.retest.canonicalize().with_context(|| format!("--retest {}", cli.retest.display()))?;
    std::fs::create_dir_all(&cli.work)?;
    let work = cli.work.canonicalize()?;
    // the csmith study generates its programs: it has no subjects
    let subjects = if matches!(cli.cmd, Cmd::Csmith(_) | Cmd::Scale(_) | Cmd::Build(_)) {
        Vec::new()
    } else {
        let root = cli.subjects.canonicalize().with_context(|| format!("--subjects {}", cli.subjects.display()))?;
        cli.only
            .iter()
            .map(|n| {
                if let Cmd::Walk(_) = cli.cmd {
                    // any directory with a Makefile and a universe, by name or path
                    let dir = walk::subject_dir(&root, n)?;
                    let name = dir.file_name().map_or(n.clone(), |f| f.to_string_lossy().into_owned());
                    return Ok(Subject { name, dir });
                }
                let dir = root.join(n);
                anyhow::ensure!(dir.join(format!("{n}.c")).exists(), "no subject {n} in {}", root.display());
                Ok(Subject { name: n.clone(), dir })
            })
            .collect::<Result<Vec<_>>>()?
    };
    let c = Common { retest, work, subjects, fresh: cli.fresh };
    let t = Instant::now();
    match &cli.cmd {
        Cmd::Safety(a) => safety::run(&c, a)?,
        Cmd::Recover(a) => recover::run(&c, a)?,
        Cmd::Overhead(a) => overhead::run(&c, a)?,
        Cmd::Walk(a) => {
            let sum = walk::run(&c, a)?;
            if !sum.exact() {
                anyhow::bail!(
                    "{} matrix mismatches ({} tests), {} audit misses",
                    sum.mismatches.len(),
                    sum.wrong_tests,
                    sum.misses
                );
            }
        }
        Cmd::Csmith(a) => csmith::run(&c, a)?,
        Cmd::Scale(a) => scale::run(&c.retest, a)?,
        Cmd::Build(a) => buildcost::run(&c.retest, &c.work, a)?,
        Cmd::Mutants { seed, diff } => {
            for s in &c.subjects {
                let src = std::fs::read_to_string(s.dir.join(format!("{}.c", s.name)))?;
                let all = mutate::generate(&src);
                let mut per_op = std::collections::BTreeMap::new();
                for m in &all {
                    *per_op.entry(m.op.name()).or_insert(0) += 1;
                }
                println!("{}: {} mutants {:?}", s.name, all.len(), per_op);
                for m in mutate::study_order(all, *seed) {
                    if *diff {
                        print!("{}", m.diff(&src, &format!("{}.c", s.name)));
                    } else {
                        println!("  {:>4} {}", m.id, m.describe(&src));
                    }
                }
            }
        }
    }
    eprintln!("done in {:.0} s", t.elapsed().as_secs_f64());
    Ok(())
}
