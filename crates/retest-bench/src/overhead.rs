//! `overhead`: run-time cost of instrumentation on a CPU-bound workload.
//!
//! Each subject is built several ways — plain `cc -O2`, `retest build -- make
//! CFLAGS=-O2` (runtime active: `RETEST_TRACE_DIR` set; and inactive), `gcc -O2
//! --coverage`, and with `clang-19` plain and with source-based coverage — and
//! run on one large input made by concatenating its `inputs/` files until the
//! plain build needs at least `--min-seconds`. Timing is `hyperfine`'s median
//! when it is installed, else the median of our own runs. Every variant's
//! stdout must equal the plain build's.
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
use crate::report::{f, median, table, write_json, write_text};
use crate::suite::fresh_copy;
use crate::{Common, Subject};

#[derive(clap::Args, Clone)]
pub struct OverheadArgs {
    /// Timed runs per variant.
    #[arg(long, default_value_t = 10)]
    pub runs: usize,
    /// The workload input is at least this large.
    #[arg(long, default_value_t = 5_000_000)]
    pub min_bytes: usize,
    /// …and large enough that the plain build runs at least this long.
    #[arg(long, default_value_t = 0.5)]
    pub min_seconds: f64,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct Measured {
    pub subject: String,
    pub variant: String,
    pub median_s: f64,
    pub runs: usize,
    pub tool: String,
    pub input_bytes: u64,
}

/// The workload arguments of each subject (stdin is the big input).
fn workload_args(subject: &str) -> &'static str {
    match subject {
        "lexer" => "-k",
        "sched" => "-v -a 3 -q 2",
        "textsub" => "-gi '[a-z]*e[a-z]*' '<&>'",
        _ => "",
    }
}

/// `times` concatenations of the subject's inputs (for textsub, lines shorter
/// than 900 bytes only).
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

fn sh(cmd: &str, dir: &Path) -> Result<()> {
    let out = Command::new("sh").args(["-c", cmd]).current_dir(dir).output()?;
    if !out.status.success() {
        bail!("`{cmd}` in {} failed:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn stdout_of(cmd: &str) -> Result<Vec<u8>> {
    Ok(Command::new("sh").args(["-c", cmd]).stderr(Stdio::null()).output()?.stdout)
}

/// Median wall time of `cmd` (a shell command).
fn time_cmd(cmd: &str, runs: usize, json: &Path) -> Result<(f64, String)> {
    if Path::new("/usr/bin/hyperfine").exists() {
        let out = Command::new("/usr/bin/hyperfine")
            .args([
                "--shell=sh",
                "-i",
                "--style",
                "basic",
                "--warmup",
                "2",
                "--runs",
                &runs.to_string(),
                "--export-json",
            ])
            .arg(json)
            .arg(cmd)
            .output()?;
        if !out.status.success() {
            bail!("hyperfine failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json)?)?;
        let m = v["results"][0]["median"].as_f64().context("no median from hyperfine")?;
        return Ok((m, "hyperfine".into()));
    }
    let mut ts = Vec::new();
    for i in 0..runs + 2 {
        let t = Instant::now();
        Command::new("sh").args(["-c", &format!("{cmd} >/dev/null 2>&1")]).status()?;
        if i >= 2 {
            ts.push(t.elapsed().as_secs_f64());
        }
    }
    Ok((median(&ts), "own median".into()))
}

pub fn run(c: &Common, a: &OverheadArgs) -> Result<()> {
    let r = Retest { bin: c.retest.clone() };
    let out = c.work.join("overhead");
    let clang = Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success());
    let mut results = Vec::new();
    for s in &c.subjects {
        let base = out.join(&s.name);
        std::fs::create_dir_all(&base)?;
        let input = base.join("big.in");
        let mut bytes = make_input(s, &input, a.min_bytes)?;
        // (name, make command, environment prefix of the run)
        let mut variants: Vec<(&str, String, String)> = vec![
            ("plain gcc -O2", "make CFLAGS=-O2".into(), String::new()),
            ("retest (runtime active)", String::new(), "RETEST_TRACE_DIR=$D/traces ".into()),
            ("retest (no trace dir)", String::new(), String::new()),
            ("gcc -O2 --coverage", "make CFLAGS='-O2 --coverage'".into(), String::new()),
        ];
        if clang {
            variants.push(("plain clang-19 -O2", "make CC=clang-19 CFLAGS=-O2".into(), String::new()));
            variants.push((
                "clang-19 -O2 -fprofile-instr-generate -fcoverage-mapping",
                "make CC=clang-19 CFLAGS='-O2 -fprofile-instr-generate -fcoverage-mapping'".into(),
                "LLVM_PROFILE_FILE=$D/default.profraw ".into(),
            ));
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for (i, (name, make, _)) in variants.iter().enumerate() {
            let d = base.join(format!("v{i}"));
            if i == 2 {
                dirs.push(dirs[1].clone()); // the same retest build, run without a trace directory
                continue;
            }
            fresh_copy(&s.dir, &s.name, &d)?;
            if s.name == "lexer" {
                let p = d.join("lexer.c");
                let src = std::fs::read_to_string(&p)?;
                let new = src.replace("#define MAX_INPUT   65536", "#define MAX_INPUT   (256 << 20)");
                anyhow::ensure!(new != src, "lexer.c: MAX_INPUT not found");
                std::fs::write(&p, new)?;
            }
            if make.is_empty() {
                r.run(&d, &["init"], &[], &[0])?;
                r.run(&d, &["build", "--", "make", "CFLAGS=-O2"], &[], &[0])?;
                std::fs::create_dir_all(d.join("traces"))?;
            } else {
                sh(make, &d).with_context(|| format!("{}: {name}", s.name))?;
            }
            eprintln!("  {}: built {name}", s.name);
            dirs.push(d);
        }
        let cmd = |i: usize| {
            let d = dirs[i].display().to_string();
            format!(
                "{}{d}/{} {} < {} > /dev/null",
                variants[i].2.replace("$D", &d),
                s.name,
                workload_args(&s.name),
                input.display()
            )
        };
        // grow the input until the plain build is slow enough
        loop {
            let t = Instant::now();
            stdout_of(&cmd(0))?;
            let secs = t.elapsed().as_secs_f64();
            if secs >= a.min_seconds || bytes > 400_000_000 {
                eprintln!("  {}: input {} bytes, plain run {:.2} s", s.name, bytes, secs);
                break;
            }
            bytes = make_input(s, &input, (bytes as f64 * (a.min_seconds / secs.max(0.01)) * 1.3) as usize)?;
        }
        // same output everywhere
        let want = stdout_of(&cmd(0).replace(" > /dev/null", ""))?;
        for (i, (name, _, _)) in variants.iter().enumerate().skip(1) {
            let got = stdout_of(&cmd(i).replace(" > /dev/null", ""))?;
            anyhow::ensure!(got == want, "{}: {name} prints something else than the plain build", s.name);
        }
        for (i, (name, _, _)) in variants.iter().enumerate() {
            let (m, tool) = time_cmd(&cmd(i), a.runs, &base.join(format!("hyperfine-{i}.json")))?;
            eprintln!("  {}: {name}: median {:.3} s", s.name, m);
            results.push(Measured {
                subject: s.name.clone(),
                variant: name.to_string(),
                median_s: m,
                runs: a.runs,
                tool,
                input_bytes: bytes,
            });
        }
        for d in dirs.iter().filter(|d| d.join("traces").exists()) {
            let _ = std::fs::remove_dir_all(d.join("traces"));
        }
    }
    write_json(&out.join("results.json"), &results)?;
    let md = render(&results);
    write_text(&out.join("tables.md"), &md)?;
    println!("{md}");
    Ok(())
}

fn render(rs: &[Measured]) -> String {
    let mut rows = Vec::new();
    let mut subjects: Vec<&str> = rs.iter().map(|m| m.subject.as_str()).collect();
    subjects.dedup();
    for s in subjects {
        let of = |v: &str| rs.iter().find(|m| m.subject == s && m.variant == v).map(|m| m.median_s);
        let gcc = of("plain gcc -O2").unwrap_or(f64::NAN);
        let clang = of("plain clang-19 -O2");
        for m in rs.iter().filter(|m| m.subject == s) {
            let vs_clang = match (m.variant.starts_with("clang-19"), clang) {
                (true, Some(c)) => format!("{}×", f(m.median_s / c, 2)),
                _ => "".into(),
            };
            rows.push(vec![
                s.to_string(),
                format!("{:.1} MB", m.input_bytes as f64 / 1e6),
                m.variant.clone(),
                f(m.median_s, 3),
                format!("{}×", f(m.median_s / gcc, 2)),
                vs_clang,
            ]);
        }
    }
    let mut s = String::from("### Instrumentation overhead: median wall time of one run on the large input\n\n");
    s.push_str(&table(&["subject", "input", "build", "median (s)", "vs plain gcc", "vs plain clang"], &rows));
    s
}
