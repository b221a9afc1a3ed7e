//! `retest coverage`: coverage reports from the stored coverage matrix.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use retest_cover::lines::{Accumulator, FileCoverage, Ratio};
use retest_store::{CoverageState, SnapshotId, Store};
use serde::Serialize;

use crate::context;
use crate::fail::{Fail, OrFail};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Lcov,
    /// The raw coverage matrix: per test, per unit, the covered condition-level
    /// edge ids (`retest.matrix/1`), for exact comparisons.
    Matrix,
}

#[derive(Args)]
pub struct CoverageArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Only these tests (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    tests: Vec<String>,
    /// Only the tests named in this file (one per line).
    #[arg(long, value_name = "FILE")]
    tests_from: Option<PathBuf>,
    /// Write the report to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Report the matrix of this snapshot (default: the baseline).
    #[arg(long)]
    snapshot: Option<i64>,
}

/// The report: per file coverage plus which tests it covers.
pub struct Report {
    pub files: BTreeMap<String, FileCoverage>,
    pub tests: usize,
    pub unknown: Vec<(String, String)>,
    pub snapshot: SnapshotId,
}

/// Accumulates the coverage of the selected tests of a snapshot's matrix.
pub fn build_report(store: &Store, snapshot: SnapshotId, only: Option<&[String]>) -> Result<Report, Fail> {
    let mut acc = Accumulator::default();
    let units = store.snapshot_units(snapshot).or_fail()?;
    let mut shapes = BTreeMap::new();
    for su in &units {
        if shapes.contains_key(&su.unit) {
            continue;
        }
        let u = store.unit(su.unit).or_fail()?;
        let shape = acc.add_unit(&u);
        shapes.insert(su.unit, (u, shape));
    }
    let matrix = store.matrix_tests(snapshot).or_fail()?;
    if let Some(only) = only {
        for name in only {
            if !matrix.iter().any(|m| &m.name == name) {
                return Err(Fail::new(format!("test `{name}` has no recorded coverage in snapshot {}", snapshot.0))
                    .hint("`retest run --list` shows the tests; run them with `retest run` first"));
            }
        }
    }
    let mut unknown = Vec::new();
    let mut n = 0;
    for m in matrix {
        if only.is_some_and(|o| !o.contains(&m.name)) {
            continue;
        }
        if let CoverageState::Unknown(why) = &m.state {
            unknown.push((m.name.clone(), why.clone()));
            continue;
        }
        n += 1;
        for (unit, edges) in store.test_coverage(snapshot, m.test).or_fail()? {
            if let Some((u, shape)) = shapes.get(&unit) {
                acc.add_test(u, shape, &edges);
            }
        }
    }
    Ok(Report { files: acc.finish(), tests: n, unknown, snapshot })
}

/// The snapshot whose matrix to report: `--snapshot`, else the baseline.
pub fn report_snapshot(store: &Store, explicit: Option<i64>) -> Result<SnapshotId, Fail> {
    if let Some(s) = explicit {
        return Ok(SnapshotId(s));
    }
    store
        .baseline()
        .or_fail()?
        .ok_or_else(|| Fail::new("no coverage has been recorded yet").hint("run `retest run` first"))
}

fn test_filter(a: &CoverageArgs) -> Result<Option<Vec<String>>, Fail> {
    let mut names = a.tests.clone();
    if let Some(f) = &a.tests_from {
        let text = std::fs::read_to_string(f).or_fail()?;
        names.extend(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    }
    Ok(if names.is_empty() && a.tests_from.is_none() { None } else { Some(names) })
}

pub fn run(store_opt: Option<&Path>, a: CoverageArgs) -> Result<(), Fail> {
    let (store, _root) = context::open(store_opt)?;
    let snapshot = report_snapshot(&store, a.snapshot)?;
    let only = test_filter(&a)?;
    if a.format == Format::Matrix {
        let doc = matrix_json(&store, snapshot, only.as_deref())?;
        let mut out: Box<dyn Write> = match &a.output {
            Some(p) => Box::new(io::BufWriter::new(std::fs::File::create(p).or_fail()?)),
            None => Box::new(io::BufWriter::new(io::stdout().lock())),
        };
        return serde_json::to_writer(&mut out, &doc).map_err(io::Error::other).and_then(|_| writeln!(out)).or_fail();
    }
    let report = build_report(&store, snapshot, only.as_deref())?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(io::BufWriter::new(std::fs::File::create(p).or_fail()?)),
        None => Box::new(io::BufWriter::new(io::stdout().lock())),
    };
    match a.format {
        Format::Text => write_text(&report, &mut out),
        Format::Lcov => retest_cover::lcov::write(&report.files, "retest", &mut out),
        Format::Json => write_json(&report, &mut out),
        Format::Matrix => unreachable!("handled above"),
    }
    .and_then(|_| out.flush())
    .or_fail()?;
    for (t, why) in &report.unknown {
        eprintln!("warning: {t} is not included: its coverage is unknown ({why})");
    }
    Ok(())
}

/// `retest.matrix/1`: `{ schema, snapshot, tests: [{ name, state, reason, units: { key: [edge, ...] } }] }`.
fn matrix_json(store: &Store, snapshot: SnapshotId, only: Option<&[String]>) -> Result<serde_json::Value, Fail> {
    let keys: BTreeMap<retest_store::UnitId, String> =
        store.snapshot_units(snapshot).or_fail()?.into_iter().map(|u| (u.unit, u.key)).collect();
    let mut tests = Vec::new();
    for m in store.matrix_tests(snapshot).or_fail()? {
        if only.is_some_and(|o| !o.contains(&m.name)) {
            continue;
        }
        let mut units = serde_json::Map::new();
        for (u, bm) in store.test_coverage(snapshot, m.test).or_fail()? {
            let key = keys.get(&u).cloned().unwrap_or_else(|| format!("unit{}", u.0));
            units.insert(key, serde_json::Value::from(bm.iter().collect::<Vec<u32>>()));
        }
        let (state, reason) = match &m.state {
            CoverageState::Known => ("ok", None),
            CoverageState::Unknown(r) => ("unknown", Some(r.clone())),
        };
        tests.push(serde_json::json!({ "name": m.name, "state": state, "reason": reason, "units": units }));
    }
    Ok(serde_json::json!({ "schema": "retest.matrix/1", "snapshot": snapshot.0, "tests": tests }))
}

fn totals(files: &BTreeMap<String, FileCoverage>) -> (Ratio, Ratio, Ratio) {
    let mut l = Ratio::default();
    let mut b = Ratio::default();
    let mut f = Ratio::default();
    for fc in files.values() {
        l.hit += fc.lines_hit();
        l.total += fc.lines.len();
        b.hit += fc.branches_hit();
        b.total += fc.branches_total();
        f.hit += fc.functions_hit();
        f.total += fc.functions.len();
    }
    (l, b, f)
}

fn write_text(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "coverage of {} tests (snapshot {})", r.tests, r.snapshot.0)?;
    writeln!(w, "{:<40} {:>16} {:>16} {:>12}", "file / function", "statements", "branches", "tests")?;
    let cell = |x: Ratio| format!("{}/{} {:>5.1}%", x.hit, x.total, x.percent());
    for (path, fc) in &r.files {
        let lines = Ratio { hit: fc.lines_hit(), total: fc.lines.len() };
        let br = Ratio { hit: fc.branches_hit(), total: fc.branches_total() };
        writeln!(w, "{:<40} {:>16} {:>16}", path, cell(lines), cell(br))?;
        let mut fns = fc.functions.clone();
        fns.sort_by_key(|f| f.line);
        for f in &fns {
            let (fl, fb) = fc.function_stats(f);
            writeln!(
                w,
                "  {:<38} {:>16} {:>16} {:>12}",
                format!("{}:{}", f.name, f.line),
                cell(fl),
                cell(fb),
                f.tests
            )?;
        }
    }
    let (l, b, f) = totals(&r.files);
    writeln!(w, "{:<40} {:>16} {:>16}   functions {}/{}", "total", cell(l), cell(b), f.hit, f.total)
}

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    snapshot: i64,
    tests: usize,
    totals: JsonTotals,
    files: Vec<JsonFile<'a>>,
    unknown_coverage: Vec<JsonUnknown<'a>>,
}

#[derive(Serialize)]
struct JsonTotals {
    statements: Ratio,
    branches: Ratio,
    functions: Ratio,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    statements: Ratio,
    branches: Ratio,
    functions: Vec<JsonFunction<'a>>,
    /// [line, tests that executed it]
    lines: Vec<(u32, u32)>,
    /// [line, decision on the line, outcome, tests that took it]
    branch_outcomes: Vec<(u32, u32, &'a str, u32)>,
}

#[derive(Serialize)]
struct JsonFunction<'a> {
    name: &'a str,
    line: u32,
    tests: u32,
    statements: Ratio,
    branches: Ratio,
}

#[derive(Serialize)]
struct JsonUnknown<'a> {
    test: &'a str,
    reason: &'a str,
}

fn write_json(r: &Report, w: &mut dyn Write) -> io::Result<()> {
    let (l, b, f) = totals(&r.files);
    let files = r
        .files
        .iter()
        .map(|(path, fc)| JsonFile {
            path,
            statements: Ratio { hit: fc.lines_hit(), total: fc.lines.len() },
            branches: Ratio { hit: fc.branches_hit(), total: fc.branches_total() },
            functions: fc
                .functions
                .iter()
                .map(|f| {
                    let (fl, fb) = fc.function_stats(f);
                    JsonFunction { name: &f.name, line: f.line, tests: f.tests, statements: fl, branches: fb }
                })
                .collect(),
            lines: fc.lines.iter().map(|(l, c)| (*l, c.tests)).collect(),
            branch_outcomes: fc
                .branches
                .iter()
                .flat_map(|(l, v)| v.iter().map(move |b| (*l, b.block, b.label.as_str(), b.tests)))
                .collect(),
        })
        .collect();
    let doc = JsonReport {
        schema: "retest.coverage/1",
        snapshot: r.snapshot.0,
        tests: r.tests,
        totals: JsonTotals { statements: l, branches: b, functions: f },
        files,
        unknown_coverage: r.unknown.iter().map(|(t, why)| JsonUnknown { test: t, reason: why }).collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(io::Error::other)?;
    writeln!(w)
}
