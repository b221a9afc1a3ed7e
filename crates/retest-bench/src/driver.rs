//! Drives the `retest` binary under study: one process per command, timed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};

/// The `retest` binary, run with `CI=1` (plain output).
#[derive(Clone)]
pub struct Retest {
    pub bin: PathBuf,
}

/// The result of one `retest` command.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

impl Ran {
    /// The statistics of `retest run --selected --format json` (its
    /// `recover` object, `retest.run/1`), as key → value.
    pub fn stats(&self) -> Option<std::collections::BTreeMap<String, String>> {
        let doc: serde_json::Value = serde_json::from_str(&self.stdout).ok()?;
        let rec = doc.get("recover")?.as_object()?;
        Some(
            rec.iter()
                .map(|(k, v)| (k.clone(), v.as_str().map(String::from).unwrap_or_else(|| v.to_string())))
                .collect(),
        )
    }
}

impl Retest {
    /// Runs `retest ARGS` in `dir`. Exit codes in `ok` are accepted; any other, or
    /// an `error:` line on stderr, is a failure of the harness step.
    pub fn run(&self, dir: &Path, args: &[&str], env: &[(&str, &str)], ok: &[i32]) -> Result<Ran> {
        let start = Instant::now();
        let mut c = Command::new(&self.bin);
        c.args(args).current_dir(dir).env("CI", "1");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output()?;
        let seconds = start.elapsed().as_secs_f64();
        let ran = Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            seconds,
        };
        let error_line = ran.stderr.lines().any(|l| l.starts_with("error:"));
        if !ok.contains(&ran.code) || error_line {
            bail!(
                "`retest {}` in {} exited {}:\n{}{}",
                args.join(" "),
                dir.display(),
                ran.code,
                tail(&ran.stderr, 30),
                tail(&ran.stdout, 10)
            );
        }
        Ok(ran)
    }
}

/// The last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let mut t = lines[lines.len().saturating_sub(n)..].join("\n");
    if !t.is_empty() {
        t.push('\n');
    }
    t
}
