//! `retest audit`: controlled regression testing as a check on selection
//! (`retest_engine::audit`). Exit code 3 on a miss.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use retest_engine::audit::{AuditReport, audit};

use crate::args::{SelectionArgs, TextOrJson};
use crate::fail::{AUDIT_MISS, Fail, OrFail};
use crate::progress;

#[derive(Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub opts: SelectionArgs,
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Tests run in parallel (default: the number of CPUs).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Timeout per test in seconds, for tests that set none.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

pub fn run(store_opt: Option<&Path>, a: AuditArgs) -> Result<ExitCode, Fail> {
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let cx = progress::context(&progress::RETEST)?;
    let report = audit(&cx, &mut store, &root, &a.opts.options(), a.jobs, a.timeout)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match a.format {
        TextOrJson::Json => {
            serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::other).and_then(|_| writeln!(out))
        }
        TextOrJson::Text => write_human(&report, &mut out),
    }
    .and_then(|_| out.flush())
    .or_fail()?;
    Ok(if report.missed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(AUDIT_MISS) })
}

fn write_human(r: &AuditReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "audit of snapshot {} against baseline {}: {} tests run, {} selected, {} changed behaviour, {} missed",
        r.new_snapshot.unwrap_or(0),
        r.baseline_snapshot,
        r.tests,
        r.selected.len(),
        r.changed.len(),
        r.missed.len()
    )?;
    for (name, what) in &r.changed {
        let mark = if r.missed.contains(name) { "MISSED  " } else { "selected" };
        writeln!(w, "  {mark} {name}: {what}")?;
    }
    if !r.not_compared.is_empty() {
        writeln!(
            w,
            "  {} tests have no baseline outcome to compare with: {}",
            r.not_compared.len(),
            r.not_compared.join(", ")
        )?;
    }
    for (name, why) in &r.unsteady {
        writeln!(w, "  UNSTEADY {name}: {why}")?;
    }
    if !r.unsteady.is_empty() {
        writeln!(
            w,
            "  {} tests ran differently on unchanged code: they are now selected on every change that can change a test's behaviour",
            r.unsteady.len()
        )?;
    }
    if r.missed.is_empty() {
        writeln!(w, "no test whose behaviour changed was left out")?;
    }
    Ok(())
}
