//! `overhead`: run-time cost of instrumentation on a CPU-bound workload.
//!
//! Each subject is built several ways, all at the same `-O` level (`--opt`,
//! default `-O2`): plain gcc; `retest build -- make` with edge probes only, with
//! `--mcdc`, with `--paths`, with both and with `--counts` (execution
//! counters) (runtime active: `RETEST_TRACE_DIR`
//! set where `retest run` would put it — on tmpfs where the machine has one),
//! the edge build once more with the runtime inactive and once more with the
//! trace directory on the disk, in the build directory, where gcov's `.gcda`
//! and clang's `.profraw` files go; `gcc --coverage`;
//! and, when `clang-19` is installed, plain clang, retest (edges, and `--mcdc`)
//! with clang as the real compiler, clang source-based coverage
//! (`-fprofile-instr-generate -fcoverage-mapping`) and the same with
//! `-fcoverage-mcdc`. Every variant's stdout must equal the plain build's.
//!
//! Workload: one large input made by concatenating the subject's `inputs/`
//! files until the plain build needs at least `--min-seconds`. Timing is
//! interleaved: each round runs every variant once, in an order rotated by one
//! from round to round, so machine noise (the machine may be shared) hits every
//! variant alike; the first round is a warm-up. Per variant we report the median
//! wall time, and as ratios the median over rounds of (variant / its plain
//! build of the same round) — wall time and user+system CPU time (the
//! process's resource usage from `wait4`, to the microsecond). Noise on a
//! shared machine only ever adds time, so beside the median we report the
//! *best* CPU ratio: per build and layout the least CPU time over the rounds,
//! the median of those over the layouts, against the plain build's. Instruction
//! counts, which are free of noise, come from one run under `valgrind
//! --tool=callgrind` on a smaller input (`--callgrind-bytes`).
//!
//! A tight loop's speed depends on where its code happens to fall: the plain
//! lexer's CPU time on its big input moves by 20 % with `-falign-loops=64`
//! alone. With `--layouts N` every build is made in `N` code layouts
//! ([`layouts`]: the compiler's default, then alignment flags added to
//! `CFLAGS`), all of them timed in the same interleaved rounds, and a round's
//! time of a variant is the median over its layouts — so a ratio no longer
//! rests on one layout's luck. Instructions and the universe use the default
//! layout. A layout's time is repeatable to about 1 % from run to run, but
//! over layouts it can fall into two modes (lexer with byte-store probes:
//! 1.0 or 1.2 times plain), so a median over few layouts can land in either;
//! the table therefore also gives the *mean* over layouts of the per-layout
//! best ratio, and `results.json` every layout's least CPU time.
//!
//! With `--universe-rounds N`, the whole test universe (every line of
//! `universe.txt`, one after another, in one shell) is timed the same way: many
//! short processes, so start-up and trace writing weigh more there. Each round
//! of a retest variant starts with an empty trace directory. Beside them runs
//! the whole command users run, `retest run -j1 --universe universe.txt` on the
//! `retest (edges)` build, which also records each test's coverage in the store;
//! and, to compare like with like, what per-test coverage costs with gcov and
//! with clang: after each test, that tool's own export of the test's coverage
//! into a file, and the counters reset (`PER_TEST`).
//!
//! The subjects reject large inputs by design (lexer: 64 KiB; textsub: lines of
//! 1000 bytes or more), so the copy built here has `MAX_INPUT` raised for lexer
//! and the workload keeps only textsub's shorter lines; nothing else changes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::driver::Retest;
use crate::report::{f, mean, median, table, write_json, write_text};
use crate::suite::fresh_copy;
use crate::{Common, Subject};

#[derive(clap::Args, Clone)]
pub struct OverheadArgs {
    /// Timed rounds (each runs every variant once; one more warm-up round precedes them).
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// The workload input is at least this large.
    #[arg(long, default_value_t = 5_000_000)]
    pub min_bytes: usize,
    /// …and large enough that the plain build runs at least this long.
    #[arg(long, default_value_t = 0.5)]
    pub min_seconds: f64,
    /// The optimisation flag every variant is built with.
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    pub opt: String,
    /// Input size for the instruction counts under callgrind (0: no counts).
    #[arg(long, default_value_t = 1_000_000)]
    pub callgrind_bytes: usize,
    /// Rounds of timing the whole universe (0: not timed).
    #[arg(long, default_value_t = 0)]
    pub universe_rounds: usize,
    /// Code layouts each build of the big-input timing is made in (1–32; see
    /// the module documentation).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub layouts: u8,
}

/// The first code layouts: the compiler's default, then alignment flags.
const FIRST_LAYOUTS: [&str; 8] = [
    "",
    "-falign-functions=64 -falign-loops=64",
    "-falign-functions=32 -falign-loops=32",
    "-falign-functions=16 -falign-loops=1",
    "-falign-loops=64",
    "-falign-functions=64 -falign-jumps=32",
    "-fno-align-loops -fno-align-jumps -fno-align-labels",
    "-falign-functions=128 -falign-loops=16 -falign-jumps=16",
];

/// Alignment flags of the `n` code layouts `--layouts n` adds to `CFLAGS`
/// (gcc and clang accept them alike): [`FIRST_LAYOUTS`], then function and
/// loop alignments of 1, 16, 32 and 64 bytes, with and without
/// `-falign-jumps=1`, skipping those already in the first eight.
pub fn layouts(n: usize) -> Vec<String> {
    let mut all: Vec<String> = FIRST_LAYOUTS.iter().map(|l| l.to_string()).collect();
    for jumps in ["", " -falign-jumps=1"] {
        for f in [1, 16, 32, 64] {
            for l in [1, 16, 32, 64] {
                let flags = format!("-falign-functions={f} -falign-loops={l}{jumps}");
                if !all.contains(&flags) {
                    all.push(flags);
                }
            }
        }
    }
    all.truncate(n);
    all
}

/// One variant's figures on one subject and workload.
#[derive(Clone, Serialize, Deserialize)]
pub struct Measured {
    pub subject: String,
    /// `big input` or `universe`.
    pub workload: String,
    pub variant: String,
    /// The plain build this variant is compared with.
    pub baseline: String,
    pub median_s: f64,
    /// Median over rounds of wall(variant) / wall(baseline) of the same round.
    pub wall_ratio: f64,
    /// The same for user+system CPU time.
    pub cpu_ratio: f64,
    /// Least CPU time over the rounds, median over the layouts, over the
    /// same of the baseline (`None` in results written before it existed).
    #[serde(default)]
    pub cpu_best_ratio: Option<f64>,
    /// Per layout, least CPU time over the rounds over the same of the
    /// baseline in the same layout flags; the mean over the layouts.
    #[serde(default)]
    pub cpu_best_mean_ratio: Option<f64>,
    /// Per layout, the least CPU time over the rounds (seconds).
    #[serde(default)]
    pub cpu_best_s: Vec<f64>,
    /// Instructions (callgrind's Ir, whole process), when counted.
    pub instructions: Option<u64>,
    pub rounds: usize,
    /// Code layouts a round's time is the median over (`--layouts`; 1 for the universe).
    #[serde(default)]
    pub layouts: usize,
    pub input_bytes: u64,
    pub wall_s: Vec<f64>,
    pub cpu_s: Vec<f64>,
}

/// How a variant is built and run.
struct Variant {
    name: &'static str,
    /// Index of the plain variant it is compared with.
    baseline: usize,
    build: Build,
    /// Environment of the run (`$D` is the build directory).
    env: &'static [(&'static str, &'static str)],
}

enum Build {
    /// `make CC=… CFLAGS='OPT EXTRA'`.
    Make { cc: &'static str, extra: &'static str },
    /// `[CC=cc] retest build [FLAGS] -- make CFLAGS=OPT`.
    Retest { cc: &'static str, flags: &'static [&'static str] },
    /// The binary of another variant.
    Same(usize),
}

/// The universe measured through `retest run -j1` with the `retest (edges)`
/// build: the tests' runtime cost plus the recording of per-test coverage.
const RETEST_RUN: &str = "retest run -j1 (edges; records each test's coverage)";

/// Per-test coverage with gcov and with clang's source-based coverage, the
/// way a user of those tools gets it: after each test, the tool's own export
/// of that test's data into one file per test, then the counters reset (gcov:
/// `gcov -t -j` into `tN.json`, then the `.gcda` files removed; clang:
/// `llvm-profdata merge` and `llvm-cov export -format=lcov` into `tN.info`).
/// The files go to the trace root, where `retest run` puts its traces.
const PER_TEST: [(&str, &str); 2] = [
    ("gcc --coverage", "gcc --coverage, per-test coverage (gcov -t -j after each test)"),
    (
        "clang-19 -fprofile-instr-generate -fcoverage-mapping",
        "clang-19 cov, per-test coverage (llvm-profdata merge, llvm-cov export after each test)",
    ),
];

/// One per-test-coverage loop over the universe (see [`PER_TEST`]).
struct PerTest {
    name: &'static str,
    /// The variant whose build it runs.
    variant: usize,
    cmd: String,
    /// Where the per-test files go (`tN.EXT`).
    out: PathBuf,
    ext: &'static str,
}

impl PerTest {
    /// Every test of the universe left a non-empty coverage file: the loop
    /// did the work it was timed for.
    fn check(&self, dir: &Path) -> Result<()> {
        let tests = retest_run::discover::from_universe(&dir.join("universe.txt"))?.len();
        for n in 1..=tests {
            let f = self.out.join(format!("t{n}.{}", self.ext));
            let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
            anyhow::ensure!(len > 0, "{}: no coverage in {}", self.name, f.display());
        }
        Ok(())
    }
}

/// The per-test-coverage loops for the variants that were built (clang's
/// only where `llvm-profdata-19` and `llvm-cov-19` are installed).
fn per_test_commands(vs: &[Variant], dirs: &[PathBuf], root: &Path, s: &Subject) -> Vec<PerTest> {
    let installed = |t: &str| Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success());
    let mut out = Vec::new();
    for (variant_name, name) in PER_TEST {
        let Some(i) = vs.iter().position(|v| v.name == variant_name) else { continue };
        let p = root.join(format!("{}-v{i}-per-test", s.name));
        let q = quote(&p.display().to_string());
        let (env, each, ext) = if name.starts_with("gcc") {
            (String::new(), format!("gcov -t -j {}.c > {q}/t$n.json 2>/dev/null; rm -f *.gcda", s.name), "json")
        } else if installed("llvm-profdata-19") && installed("llvm-cov-19") {
            let each = format!(
                "llvm-profdata-19 merge -sparse {q}/t.profraw -o {q}/t.profdata && \
                 llvm-cov-19 export -format=lcov -instr-profile={q}/t.profdata ./{} > {q}/t$n.info; rm -f {q}/t.profraw",
                s.name
            );
            (format!("LLVM_PROFILE_FILE={q}/t.profraw "), each, "info")
        } else {
            eprintln!("  {}: llvm-profdata-19 or llvm-cov-19 missing: no row `{name}`", s.name);
            continue;
        };
        let cmd = format!(
            "rm -rf {q} && mkdir -p {q} && cd {} && rm -f *.gcda && n=0 && \
             while IFS= read -r t; do case $t in *[![:space:]]*) ;; *) continue ;; esac; n=$((n+1)); \
             {env}sh -c \"$t\" >/dev/null 2>&1 </dev/null; {each}; done < universe.txt",
            quote(&dirs[i].display().to_string())
        );
        out.push(PerTest { name, variant: i, cmd, out: p, ext });
    }
    out
}

/// The trace directory where `retest run` would put it (`$T`: in the run's
/// trace root, on tmpfs where the machine has one), and in the build directory
/// on the disk (`$D`), as gcov's and clang's default profile files are.
const TRACE: &[(&str, &str)] = &[("RETEST_TRACE_DIR", "$T")];
const TRACE_DISK: &[(&str, &str)] = &[("RETEST_TRACE_DIR", "$D/traces")];
const PROFILE: &[(&str, &str)] = &[("LLVM_PROFILE_FILE", "$D/default.profraw")];

fn variants(clang: bool) -> Vec<Variant> {
    let mut v = vec![
        Variant { name: "plain gcc", baseline: 0, build: Build::Make { cc: "gcc", extra: "" }, env: &[] },
        Variant { name: "retest (edges)", baseline: 0, build: Build::Retest { cc: "gcc", flags: &[] }, env: TRACE },
        Variant { name: "retest (edges), runtime inactive", baseline: 0, build: Build::Same(1), env: &[] },
        Variant { name: "retest (edges), traces on disk", baseline: 0, build: Build::Same(1), env: TRACE_DISK },
        Variant {
            name: "retest --mcdc",
            baseline: 0,
            build: Build::Retest { cc: "gcc", flags: &["--mcdc"] },
            env: TRACE,
        },
        Variant {
            name: "retest --paths",
            baseline: 0,
            build: Build::Retest { cc: "gcc", flags: &["--paths"] },
            env: TRACE,
        },
        Variant {
            name: "retest --mcdc --paths",
            baseline: 0,
            build: Build::Retest { cc: "gcc", flags: &["--mcdc", "--paths"] },
            env: TRACE,
        },
        Variant {
            name: "retest --counts",
            baseline: 0,
            build: Build::Retest { cc: "gcc", flags: &["--counts"] },
            env: TRACE,
        },
        Variant {
            name: "gcc --coverage",
            baseline: 0,
            build: Build::Make { cc: "gcc", extra: "--coverage" },
            env: &[],
        },
    ];
    if clang {
        let p = v.len();
        v.extend([
            Variant { name: "plain clang-19", baseline: p, build: Build::Make { cc: "clang-19", extra: "" }, env: &[] },
            Variant {
                name: "retest (edges), clang-19",
                baseline: p,
                build: Build::Retest { cc: "clang-19", flags: &[] },
                env: TRACE,
            },
            Variant {
                name: "retest --mcdc, clang-19",
                baseline: p,
                build: Build::Retest { cc: "clang-19", flags: &["--mcdc"] },
                env: TRACE,
            },
            Variant {
                name: "clang-19 -fprofile-instr-generate -fcoverage-mapping",
                baseline: p,
                build: Build::Make { cc: "clang-19", extra: "-fprofile-instr-generate -fcoverage-mapping" },
                env: PROFILE,
            },
            Variant {
                name: "clang-19 … -fcoverage-mcdc",
                baseline: p,
                build: Build::Make {
                    cc: "clang-19",
                    extra: "-fprofile-instr-generate -fcoverage-mapping -fcoverage-mcdc",
                },
                env: PROFILE,
            },
        ]);
    }
    v
}

/// The workload arguments of each subject (stdin is the big input).
fn workload_args(subject: &str) -> &'static [&'static str] {
    match subject {
        "lexer" => &["-k"],
        "sched" => &["-v", "-a", "3", "-q", "2"],
        "textsub" => &["-gi", "[a-z]*e[a-z]*", "<&>"],
        _ => &[],
    }
}

/// Concatenations of the subject's inputs (for textsub, lines shorter than 900
/// bytes only), at least `min_bytes` long.
fn make_input(s: &Subject, path: &Path, min_bytes: usize) -> Result<u64> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(s.dir.join("inputs"))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut one = Vec::new();
    for p in files {
        let b = std::fs::read(&p)?;
        if s.name == "textsub" {
            for l in b.split_inclusive(|&c| c == b'\n').filter(|l| l.len() < 900) {
                one.extend_from_slice(l);
            }
        } else {
            one.extend_from_slice(&b);
        }
        if !one.ends_with(b"\n") {
            one.push(b'\n');
        }
    }
    let mut all = Vec::new();
    while all.len() < min_bytes {
        all.extend_from_slice(&one);
    }
    std::fs::write(path, &all)?;
    Ok(all.len() as u64)
}

/// Builds variant `v` of subject `s` in a fresh copy at `d`, with `cflags`.
fn build_variant(r: &Retest, s: &Subject, v: &Variant, d: &Path, cflags: &str) -> Result<()> {
    fresh_copy(&s.dir, &s.name, d)?;
    if s.name == "lexer" {
        let p = d.join("lexer.c");
        let src = std::fs::read_to_string(&p)?;
        let new = src.replace("#define MAX_INPUT   65536", "#define MAX_INPUT   (256 << 20)");
        anyhow::ensure!(new != src, "lexer.c: MAX_INPUT not found");
        std::fs::write(&p, new)?;
    }
    match &v.build {
        Build::Make { cc, extra } => {
            sh(&format!("make CC={cc} CFLAGS='{cflags} {extra}'"), d, &[])
                .with_context(|| format!("{}: {}", s.name, v.name))?;
        }
        Build::Retest { cc, flags } => {
            r.run(d, &["init"], &[], &[0])?;
            let cflags = format!("CFLAGS={cflags}");
            let mut args = vec!["build"];
            args.extend(flags.iter());
            args.extend(["--", "make", &cflags]);
            r.run(d, &args, &[("CC", cc)], &[0])?;
        }
        Build::Same(_) => unreachable!("a variant that reuses another's build is not built"),
    }
    std::fs::create_dir_all(d.join("traces"))?;
    Ok(())
}

fn sh(cmd: &str, dir: &Path, env: &[(&str, &str)]) -> Result<()> {
    let mut c = Command::new("sh");
    c.args(["-c", cmd]).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output()?;
    if !out.status.success() {
        bail!("`{cmd}` in {} failed:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One timed run of the shell command `cmd`: (wall, user+system CPU) seconds.
pub(crate) fn timed(cmd: &str) -> Result<(f64, f64)> {
    // the workloads may exit non-zero (lexer reports its ERROR tokens)
    timed_status(cmd).map(|(wall, cpu, _)| (wall, cpu))
}

/// [`timed`], with the exit code; a signal is a failure.
pub(crate) fn timed_status(cmd: &str) -> Result<(f64, f64, i32)> {
    let t = Instant::now();
    let child = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("running sh")?;
    // `wait4` reaps the child and gives its resource usage (its own and that
    // of the children it waited for), as `/usr/bin/time` reports it, but to
    // the microsecond
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data, valid when zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child, not yet waited for; both pointers are valid.
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    let wall = t.elapsed().as_secs_f64();
    if r < 0 {
        bail!("waiting for `{cmd}`: {}", std::io::Error::last_os_error());
    }
    if libc::WIFSIGNALED(status) {
        bail!("`{cmd}` was killed by signal {}", libc::WTERMSIG(status));
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Ok((wall, secs(ru.ru_utime) + secs(ru.ru_stime), libc::WEXITSTATUS(status)))
}

/// Instructions executed by `argv` (callgrind's `Collected`), stdin from `input`.
fn instructions(argv: &[String], env: &[(String, String)], input: &Path) -> Result<u64> {
    let mut c = Command::new("valgrind");
    c.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"]).args(argv);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.stdin(std::fs::File::open(input)?).stdout(Stdio::null()).output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find_map(|l| l.split_once("Collected :").and_then(|(_, n)| n.trim().parse().ok()))
        .with_context(|| format!("no instruction count from callgrind:\n{err}"))
}

/// Times `cmds` (one shell command per variant) in `rounds` interleaved rounds
/// after one warm-up round: per variant the wall and CPU times of every round.
fn interleaved(cmds: &[String], rounds: usize, what: &str) -> Result<Vec<(Vec<f64>, Vec<f64>)>> {
    let n = cmds.len();
    let mut out = vec![(Vec::new(), Vec::new()); n];
    for round in 0..=rounds {
        for k in 0..n {
            let i = (round + k) % n;
            let (w, c) = timed(&cmds[i])?;
            if round > 0 {
                out[i].0.push(w);
                out[i].1.push(c);
            }
        }
        if round > 0 {
            eprintln!("  {what}: round {round}/{rounds} done");
        }
    }
    Ok(out)
}

fn ratio(a: &[f64], b: &[f64]) -> f64 {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    median(&r)
}

pub fn run(c: &Common, a: &OverheadArgs) -> Result<()> {
    let r = Retest { bin: c.retest.clone() };
    let out = c.work.join("overhead");
    let clang = Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success());
    let vs = variants(clang);
    let trace_root = retest_run::scratch::TraceRoot::choose(&out.join("traces"))?;
    eprintln!(
        "  trace directories in {}{}",
        trace_root.path().display(),
        if trace_root.in_ram() { " (tmpfs, as `retest run` chooses)" } else { "" }
    );
    let mut results = Vec::new();
    for s in &c.subjects {
        let base = out.join(&s.name);
        std::fs::create_dir_all(&base)?;
        let input = base.join("big.in");
        let small = base.join("small.in");
        let mut bytes = make_input(s, &input, a.min_bytes)?;
        let layouts = &layouts(a.layouts as usize);
        // per layout, per variant: its build directory
        let mut built: Vec<Vec<PathBuf>> = Vec::new();
        for (l, layout) in layouts.iter().enumerate() {
            let mut dirs: Vec<PathBuf> = Vec::new();
            for (i, v) in vs.iter().enumerate() {
                let d = base.join(if l == 0 { format!("v{i}") } else { format!("v{i}-l{l}") });
                if let Build::Same(j) = v.build {
                    dirs.push(dirs[j].clone());
                    continue;
                }
                build_variant(&r, s, v, &d, &format!("{} {layout}", a.opt))?;
                eprintln!(
                    "  {}: built {}{}",
                    s.name,
                    v.name,
                    if l == 0 { String::new() } else { format!(" ({layout})") }
                );
                dirs.push(d);
            }
            built.push(dirs);
        }
        let dirs = built[0].clone();
        let trace_of = |i: usize| trace_root.path().join(format!("{}-v{i}", s.name));
        for i in 0..vs.len() {
            std::fs::create_dir_all(trace_of(i))?;
        }
        let env_in = |l: usize, i: usize| -> Vec<(String, String)> {
            let d = built[l][i].display().to_string();
            let t = trace_of(i).display().to_string();
            vs[i].env.iter().map(|(k, v)| (k.to_string(), v.replace("$D", &d).replace("$T", &t))).collect()
        };
        let env_of = |i: usize| env_in(0, i);
        let argv_in = |l: usize, i: usize| -> Vec<String> {
            let mut v = vec![built[l][i].join(&s.name).display().to_string()];
            v.extend(workload_args(&s.name).iter().map(|x| x.to_string()));
            v
        };
        let argv = |i: usize| argv_in(0, i);
        let cmd_in = |l: usize, i: usize, input: &Path, stdout: &str| {
            let env: String = env_in(l, i).iter().map(|(k, v)| format!("{k}={} ", quote(v))).collect();
            let args: Vec<String> = argv_in(l, i).iter().map(|x| quote(x)).collect();
            format!("{env}exec {} < {} > {stdout}", args.join(" "), quote(&input.display().to_string()))
        };
        let cmd = |i: usize, input: &Path, stdout: &str| cmd_in(0, i, input, stdout);
        // grow the input until the plain build is slow enough
        loop {
            let (secs, _) = timed(&cmd(0, &input, "/dev/null"))?;
            if secs >= a.min_seconds || bytes > 400_000_000 {
                eprintln!("  {}: input {} bytes, plain run {:.2} s", s.name, bytes, secs);
                break;
            }
            bytes = make_input(s, &input, (bytes as f64 * (a.min_seconds / secs.max(0.01)) * 1.3) as usize)?;
        }
        // same output everywhere (compared by digest: the outputs can be large)
        let digest = |l: usize, i: usize| -> Result<Vec<u8>> {
            let c = cmd_in(l, i, &input, "/dev/stdout").replacen("exec ", "", 1);
            Ok(Command::new("sh").args(["-c", &format!("{c} | md5sum")]).stderr(Stdio::null()).output()?.stdout)
        };
        let want = digest(0, 0)?;
        for (l, layout) in layouts.iter().enumerate() {
            for (i, v) in vs.iter().enumerate() {
                anyhow::ensure!(
                    digest(l, i)? == want,
                    "{}: {} ({layout}) prints something else than the plain build",
                    s.name,
                    v.name
                );
            }
        }
        // every variant in every layout in the same rounds; a round's time of a
        // variant is the median over its layouts
        let cmds: Vec<String> = (0..layouts.len())
            .flat_map(|l| (0..vs.len()).map(move |i| (l, i)))
            .map(|(l, i)| cmd_in(l, i, &input, "/dev/null"))
            .collect();
        let all = interleaved(&cmds, a.runs, &s.name)?;
        // per variant and layout: the least CPU time over the rounds
        let least = |xs: &[f64]| xs.iter().copied().fold(f64::INFINITY, f64::min);
        let best: Vec<Vec<f64>> =
            (0..vs.len()).map(|i| (0..layouts.len()).map(|l| least(&all[l * vs.len() + i].1)).collect()).collect();
        // (wall, CPU) of variant `i` in round `round`: the medians over layouts
        let per_round = |i: usize, round: usize| -> (f64, f64) {
            let of = |wall: bool| {
                let xs: Vec<f64> = (0..layouts.len())
                    .map(|l| {
                        let (w, c) = &all[l * vs.len() + i];
                        if wall { w[round] } else { c[round] }
                    })
                    .collect();
                median(&xs)
            };
            (of(true), of(false))
        };
        let times: Vec<(Vec<f64>, Vec<f64>)> =
            (0..vs.len()).map(|i| (0..a.runs).map(|round| per_round(i, round)).unzip()).collect();
        let counts: Vec<Option<u64>> = if a.callgrind_bytes > 0 {
            make_input(s, &small, a.callgrind_bytes)?;
            (0..vs.len())
                .map(|i| {
                    let n = instructions(&argv(i), &env_of(i), &small)?;
                    eprintln!("  {}: {}: {n} instructions", s.name, vs[i].name);
                    Ok(Some(n))
                })
                .collect::<Result<_>>()?
        } else {
            vec![None; vs.len()]
        };
        let names: Vec<(&str, usize)> = vs.iter().map(|v| (v.name, v.baseline)).collect();
        push_results(&mut results, s, "big input", &names, &times, &best, &counts, (a.runs, layouts.len()), bytes);
        if a.universe_rounds > 0 {
            let cmds: Vec<String> = (0..vs.len())
                .map(|i| {
                    let env: String = env_of(i).iter().map(|(k, v)| format!("export {k}={}; ", quote(v))).collect();
                    // each round starts with an empty trace directory, as each
                    // test does under `retest run`
                    let fresh: String = env_of(i)
                        .iter()
                        .filter(|(k, _)| k == "RETEST_TRACE_DIR")
                        .map(|(_, v)| format!("rm -rf {0} && mkdir -p {0} && ", quote(v)))
                        .collect();
                    format!(
                        "{fresh}cd {} && {env}while IFS= read -r t; do sh -c \"$t\" >/dev/null 2>&1 </dev/null; done < universe.txt",
                        quote(&dirs[i].display().to_string())
                    )
                })
                .collect();
            // and the whole command users run: `retest run` over the same
            // universe and build, which also records every test's coverage
            // in the store (one process per test, one after another)
            let edges = vs.iter().position(|v| v.name == "retest (edges)").context("no `retest (edges)` variant")?;
            let mut cmds = cmds;
            cmds.push(format!(
                "cd {} && exec {} run -j1 --universe universe.txt",
                quote(&dirs[edges].display().to_string()),
                quote(&r.bin.display().to_string())
            ));
            let mut names = names;
            names.push((RETEST_RUN, vs[edges].baseline));
            // what per-test coverage costs with the other tools (see PER_TEST)
            let per_test = per_test_commands(&vs, &dirs, trace_root.path(), s);
            for p in &per_test {
                cmds.push(p.cmd.clone());
                names.push((p.name, vs[p.variant].baseline));
            }
            let times = interleaved(&cmds, a.universe_rounds, &format!("{} universe", s.name))?;
            let best: Vec<Vec<f64>> = times.iter().map(|(_, c)| vec![least(c)]).collect();
            for p in &per_test {
                p.check(&dirs[p.variant])?;
                let _ = std::fs::remove_dir_all(&p.out);
            }
            push_results(
                &mut results,
                s,
                "universe",
                &names,
                &times,
                &best,
                &vec![None; names.len()],
                (a.universe_rounds, 1),
                0,
            );
        }
        for d in built.iter().flatten() {
            let _ = std::fs::remove_dir_all(d.join("traces"));
            let _ = std::fs::create_dir_all(d.join("traces"));
        }
        for i in 0..vs.len() {
            let _ = std::fs::remove_dir_all(trace_of(i));
        }
    }
    write_json(&out.join("results.json"), &results)?;
    let md = render(&results, &a.opt);
    write_text(&out.join("tables.md"), &md)?;
    println!("{md}");
    Ok(())
}

/// One result per entry of `names` (a variant's name and the index in `names`
/// of the plain build it is compared with), from the times, best CPU times
/// (per layout) and counts at the same index.
#[allow(clippy::too_many_arguments)]
fn push_results(
    results: &mut Vec<Measured>,
    s: &Subject,
    workload: &str,
    names: &[(&str, usize)],
    times: &[(Vec<f64>, Vec<f64>)],
    best: &[Vec<f64>],
    counts: &[Option<u64>],
    (rounds, layouts): (usize, usize),
    bytes: u64,
) {
    for (i, &(name, b)) in names.iter().enumerate() {
        results.push(Measured {
            subject: s.name.clone(),
            workload: workload.into(),
            variant: name.into(),
            baseline: names[b].0.into(),
            median_s: median(&times[i].0),
            wall_ratio: ratio(&times[i].0, &times[b].0),
            cpu_ratio: ratio(&times[i].1, &times[b].1),
            cpu_best_ratio: Some(median(&best[i]) / median(&best[b])),
            cpu_best_mean_ratio: Some(mean(&best[i].iter().zip(&best[b]).map(|(x, y)| x / y).collect::<Vec<_>>())),
            cpu_best_s: best[i].clone(),
            instructions: counts[i],
            rounds,
            layouts,
            input_bytes: bytes,
            wall_s: times[i].0.clone(),
            cpu_s: times[i].1.clone(),
        });
    }
}

fn render(rs: &[Measured], opt: &str) -> String {
    let ir = |m: &Measured| {
        let base = rs.iter().find(|b| b.subject == m.subject && b.workload == m.workload && b.variant == m.baseline);
        match (m.instructions, base.and_then(|b| b.instructions)) {
            (Some(x), Some(y)) => format!("{}×", f(x as f64 / y as f64, 2)),
            _ => "–".into(),
        }
    };
    let layouts = rs.iter().map(|m| m.layouts).max().unwrap_or(1);
    let per_layout = if layouts > 1 {
        format!(" On the big input a round's time is the median over {layouts} code layouts of the build.")
    } else {
        String::new()
    };
    let mut s = format!(
        "### Instrumentation overhead ({opt} everywhere): ratios to the plain build of the same compiler\n\n\
         Wall and CPU: median over interleaved rounds of variant / plain of the same round.{per_layout} \
         CPU (best): the least CPU time over the rounds, median over the layouts, over the same of plain; \
         (best, mean): per layout the least CPU time over plain's in the same layout flags, mean over the layouts. \
         Instructions: callgrind, one run on a smaller input (default layout).\n\n"
    );
    let mut rows = Vec::new();
    for m in rs {
        rows.push(vec![
            m.subject.clone(),
            m.workload.clone(),
            if m.input_bytes > 0 { format!("{:.1} MB", m.input_bytes as f64 / 1e6) } else { "–".into() },
            m.variant.clone(),
            f(m.median_s, 3),
            format!("{}×", f(m.wall_ratio, 2)),
            format!("{}×", f(m.cpu_ratio, 2)),
            m.cpu_best_ratio.map_or_else(|| "–".into(), |r| format!("{}×", f(r, 3))),
            m.cpu_best_mean_ratio.map_or_else(|| "–".into(), |r| format!("{}×", f(r, 3))),
            ir(m),
        ]);
    }
    s.push_str(&table(
        &[
            "subject",
            "workload",
            "input",
            "build",
            "median wall (s)",
            "wall ratio",
            "CPU ratio",
            "CPU (best)",
            "CPU (best, mean)",
            "instructions ratio",
        ],
        &rows,
    ));
    // recording beyond edges, against edge probes
    let mut rows = Vec::new();
    let mut keys: Vec<(&str, &str)> = rs.iter().map(|m| (m.subject.as_str(), m.workload.as_str())).collect();
    keys.dedup();
    for (subj, wl) in keys {
        let of = |v: &str| rs.iter().find(|m| m.subject == subj && m.workload == wl && m.variant == v);
        let Some(edges) = of("retest (edges)") else { continue };
        for v in ["retest --mcdc", "retest --paths", "retest --mcdc --paths", "retest --counts"] {
            let Some(m) = of(v) else { continue };
            let inst = match (m.instructions, edges.instructions) {
                (Some(x), Some(y)) => format!("{}×", f(x as f64 / y as f64, 2)),
                _ => "–".into(),
            };
            rows.push(vec![
                subj.to_string(),
                wl.to_string(),
                format!("{v} / retest (edges)"),
                format!("{}×", f(ratio(&m.wall_s, &edges.wall_s), 2)),
                format!("{}×", f(ratio(&m.cpu_s, &edges.cpu_s), 2)),
                inst,
            ]);
        }
    }
    s.push_str("\n### Recording beyond edges, against edge probes\n\n");
    s.push_str(&table(&["subject", "workload", "ratio", "wall", "CPU", "instructions"], &rows));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_distinct_layouts_the_default_first() {
        let all = layouts(32);
        assert_eq!(all.len(), 32);
        assert_eq!(all[0], "");
        assert_eq!(all[..8], FIRST_LAYOUTS.map(String::from));
        let mut distinct = all.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 32);
        assert_eq!(layouts(3).len(), 3);
    }
}
