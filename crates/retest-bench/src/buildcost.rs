//! `build`: what a whole build costs through `retest build`, against a plain
//! build and `gcc --coverage`.
//!
//! One project (`--project DIR`, a source tree; copied to `WORK/build/<name>`,
//! never modified itself) is built by `--build CMD`, a shell command that
//! compiles with `$CC` (`make -s -j2 CC="$CC"`), after `--clean CMD`
//! (`make -s clean`). Variants:
//!
//! * plain: `CC=gcc`;
//! * `gcc --coverage`: `CC="gcc --coverage"` (the link gets the flag too);
//! * `retest build`, first build: the analysis cache empty when the build
//!   starts (the one the other variants use is put aside, and back after the
//!   variant's rebuild), as on a fresh clone: every text is analysed, the
//!   system headers the first units include are kept for the later ones;
//! * `retest build` with `RETEST_REUSE=0`: nothing kept, not even the system
//!   headers within the build;
//! * `retest build`, texts analysed before: the analysis cache, filled by the
//!   warm-up round;
//! * `retest build --mcdc --paths`, first build (an empty cache).
//!
//! Timing is interleaved as in `overhead`: every round builds every variant
//! once, in an order rotated by one from round to round, after one warm-up
//! round; the CPU time is user + system of the whole build (`wait4`, the build
//! command and everything it waited for), and a variant's ratio is the median
//! over rounds of its CPU against the same round's plain build. With `--touch
//! FILE` (relative to the project), each variant's full build is followed by
//! a one-file rebuild: a function is appended to `FILE`, the project built
//! again and timed, and `FILE` put back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::overhead::{quote, timed_status};
use crate::report::{f, median, table, write_json, write_text};

#[derive(clap::Args, Clone)]
pub struct BuildArgs {
    /// The project's source tree.
    #[arg(long, value_name = "DIR")]
    pub project: PathBuf,
    /// Builds the project with `$CC` as the C compiler.
    #[arg(long, value_name = "CMD", default_value = "make -s -j2 CC=\"$CC\"")]
    pub build: String,
    /// Removes what the build made.
    #[arg(long, value_name = "CMD", default_value = "make -s clean")]
    pub clean: String,
    /// Run once in the copy before anything else (`./configure`, `cmake -S . -B b`).
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Timed rounds (one warm-up round precedes them).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Also time a rebuild after appending a function to this file of the project.
    #[arg(long, value_name = "FILE")]
    pub touch: Option<PathBuf>,
}

/// One way of building.
struct Variant {
    name: &'static str,
    /// The command, given the build command.
    cmd: fn(&Path, &str) -> String,
    /// Builds with an empty analysis cache.
    fresh: bool,
}

/// Build command `b` through `retest build` (`r`), with `env` before it and
/// `options` after `build`.
fn through(r: &Path, env: &str, options: &str, b: &str) -> String {
    format!("{env}{} build{options} -- sh -c {}", quote(&r.to_string_lossy()), quote(b))
}

fn variants() -> Vec<Variant> {
    vec![
        Variant { name: "plain", cmd: |_, b| format!("export CC=gcc; {b}"), fresh: false },
        Variant { name: "gcc --coverage", cmd: |_, b| format!("export CC='gcc --coverage'; {b}"), fresh: false },
        Variant { name: "retest build (first build)", cmd: |r, b| through(r, "", "", b), fresh: true },
        Variant {
            name: "retest build (RETEST_REUSE=0)",
            cmd: |r, b| through(r, "RETEST_REUSE=0 ", "", b),
            fresh: false,
        },
        Variant { name: "retest build (texts analysed before)", cmd: |r, b| through(r, "", "", b), fresh: false },
        Variant {
            name: "retest build --mcdc --paths (first build)",
            cmd: |r, b| through(r, "", " --mcdc --paths", b),
            fresh: true,
        },
    ]
}

#[derive(Serialize)]
struct VariantResult {
    name: String,
    /// CPU seconds of the full build, per timed round.
    cpu: Vec<f64>,
    /// Its ratio to the same round's plain build.
    ratio: Vec<f64>,
    /// CPU seconds of the one-file rebuild, per timed round (with `--touch`).
    rebuild_cpu: Vec<f64>,
    rebuild_ratio: Vec<f64>,
}

/// `sh -c cmd` in `dir`, failing with its output when it fails.
fn sh(cmd: &str, dir: &Path) -> Result<()> {
    let out = std::process::Command::new("sh").args(["-c", cmd]).current_dir(dir).output()?;
    if !out.status.success() {
        bail!("`{cmd}` in {} failed:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// The CPU seconds of `cmd` run in `dir`, which must succeed.
fn build(dir: &Path, cmd: &str) -> Result<f64> {
    let (_, cpu, code) = timed_status(&format!("cd {} && {cmd}", quote(&dir.to_string_lossy())))?;
    if code != 0 {
        bail!("`{cmd}` in {} exited with {code}", dir.display());
    }
    Ok(cpu)
}

pub fn run(retest: &Path, work: &Path, a: &BuildArgs) -> Result<()> {
    let src = a.project.canonicalize().with_context(|| format!("--project {}", a.project.display()))?;
    let name = src.file_name().map_or("project".into(), |n| n.to_string_lossy().into_owned());
    let out_dir = work.join("build");
    let dir = out_dir.join(&name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&out_dir)?;
    sh(&format!("cp -a {} {}", quote(&src.to_string_lossy()), quote(&dir.to_string_lossy())), &out_dir)?;
    let _ = std::fs::remove_dir_all(dir.join(".retest"));
    if let Some(setup) = &a.setup {
        sh(setup, &dir)?;
    }
    sh(&format!("{} init >/dev/null", quote(&retest.to_string_lossy())), &dir)?;
    let touched = a.touch.as_ref().map(|t| dir.join(t));
    let original = match &touched {
        Some(t) => Some(std::fs::read(t).with_context(|| format!("--touch {}", t.display()))?),
        None => None,
    };
    let vs = variants();
    let mut results: Vec<VariantResult> = vs
        .iter()
        .map(|v| VariantResult {
            name: v.name.into(),
            cpu: Vec::new(),
            ratio: Vec::new(),
            rebuild_cpu: Vec::new(),
            rebuild_ratio: Vec::new(),
        })
        .collect();
    for round in 0..=a.runs {
        let mut cpu = vec![0.0; vs.len()];
        let mut rebuild = vec![0.0; vs.len()];
        for k in 0..vs.len() {
            let i = (k + round) % vs.len();
            let cmd = (vs[i].cmd)(retest, &a.build);
            sh(&a.clean, &dir)?;
            let (cache, aside) = (dir.join(".retest/cache"), dir.join(".retest/cache.aside"));
            if vs[i].fresh && cache.exists() {
                std::fs::rename(&cache, &aside)?;
            }
            cpu[i] = build(&dir, &cmd).with_context(|| format!("{} (round {round})", vs[i].name))?;
            if let (Some(t), Some(orig)) = (&touched, &original) {
                let mut text = orig.clone();
                text.extend(format!("\nint retest_bench_added_{round}_{i}(void) {{ return {i}; }}\n").bytes());
                std::fs::write(t, text)?;
                rebuild[i] = build(&dir, &cmd).with_context(|| format!("{} rebuilding (round {round})", vs[i].name))?;
                std::fs::write(t, orig)?;
            }
            if vs[i].fresh && aside.exists() {
                let _ = std::fs::remove_dir_all(&cache);
                std::fs::rename(&aside, &cache)?;
            }
            eprintln!(
                "round {round} {:<42} {:.2} s{}",
                vs[i].name,
                cpu[i],
                if touched.is_some() { format!(", rebuild {:.2} s", rebuild[i]) } else { String::new() }
            );
        }
        if round == 0 {
            continue; // warm-up: fills the analysis cache
        }
        for i in 0..vs.len() {
            results[i].cpu.push(cpu[i]);
            results[i].ratio.push(cpu[i] / cpu[0]);
            if touched.is_some() {
                results[i].rebuild_cpu.push(rebuild[i]);
                results[i].rebuild_ratio.push(rebuild[i] / rebuild[0]);
            }
        }
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.cpu.iter().map(|c| f(*c, 2)).collect::<Vec<_>>().join(", "),
                f(median(&r.cpu), 2),
                f(median(&r.ratio), 2),
                if r.rebuild_cpu.is_empty() { "–".into() } else { f(median(&r.rebuild_cpu), 2) },
                if r.rebuild_ratio.is_empty() { "–".into() } else { f(median(&r.rebuild_ratio), 2) },
            ]
        })
        .collect();
    let text = format!(
        "{name}: `{}`, CPU (user + system) of the whole build, {} rounds after a warm-up\n\n{}",
        a.build,
        a.runs,
        table(
            &["build", "CPU per round (s)", "median (s)", "ratio to plain", "one-file rebuild (s)", "ratio to plain"],
            &rows
        )
    );
    println!("{text}");
    write_json(&out_dir.join(format!("{name}.json")), &results)?;
    write_text(&out_dir.join(format!("{name}.md")), &text)?;
    Ok(())
}
