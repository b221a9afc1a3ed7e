//! `retest coverage`: coverage reports from the stored coverage matrix
//! (`retest_engine::coverage`): text, JSON, LCOV, Cobertura, HTML and the raw matrix.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use retest_cover::criteria::Reading;
use retest_cover::lines::Ratio;
use retest_cover::report::{self, Measure, SuiteReport};
use retest_engine::coverage::{
    DEFAULT_MEASURES, GateOn, Report, build_report, build_suite, check_gates, matrix_json, parse_criteria, parse_gates,
    report_snapshot, totals, write_html, write_json,
};

use crate::fail::{Fail, OrFail};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Lcov,
    /// Cobertura XML (Jenkins, GitLab).
    Cobertura,
    /// A self-contained HTML report in the directory given with -o.
    Html,
    /// The raw coverage matrix: per test, per unit, the covered condition-level
    /// edge ids (`retest.matrix/1`), for exact comparisons.
    Matrix,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReadingArg {
    /// What the prose of 001 §VI says (two runs for both outcomes, …).
    Intended,
    /// The formulas of 001 §VI exactly as printed.
    AsPrinted,
}

#[derive(Args)]
pub struct CoverageArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Coverage criteria to report: sc, dc, cc, dcc, mcc, fpc, mcdc (Kauffman et
    /// al. §VI, on each test's set of walked edges), mcdc-unique, mcdc-masking,
    /// mcdc-strict (MC/DC per decision evaluation: unique-cause, masking, strict
    /// unique-cause), or `all`. Default for html: all.
    #[arg(long, value_delimiter = ',', value_name = "CRITERION,...")]
    criteria: Vec<String>,
    /// How to read the formulas of §VI: as the prose means them, or as printed.
    #[arg(long, value_enum, default_value_t = ReadingArg::Intended)]
    reading: ReadingArg,
    /// Fail (exit code 4) when a measure is under a percentage: CRITERION=PCT,
    /// where CRITERION is one of --criteria's names or lines, branches, functions.
    #[arg(long = "fail-under", value_delimiter = ',', value_name = "CRITERION=PCT")]
    fail_under: Vec<String>,
    /// The HTML report into this directory (the same as --format html -o DIR).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["format", "output"])]
    html: Option<PathBuf>,
    /// Only these tests (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    tests: Vec<String>,
    /// Only the tests named in this file (one per line).
    #[arg(long, value_name = "FILE")]
    tests_from: Option<PathBuf>,
    /// Write the report to this file instead of stdout (for html: the directory).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Report the matrix of this snapshot (default: the baseline).
    #[arg(long)]
    snapshot: Option<i64>,
}

fn test_filter(a: &CoverageArgs) -> Result<Option<Vec<String>>, Fail> {
    let mut names = a.tests.clone();
    if let Some(f) = &a.tests_from {
        let text = std::fs::read_to_string(f).or_fail()?;
        names.extend(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    }
    Ok(if names.is_empty() && a.tests_from.is_none() { None } else { Some(names) })
}

pub fn run(store_opt: Option<&Path>, a: CoverageArgs) -> Result<ExitCode, Fail> {
    let (store, root) = retest_engine::store::open(store_opt)?;
    let snapshot = report_snapshot(&store, a.snapshot)?;
    let only = test_filter(&a)?;
    let (format, output) = match &a.html {
        Some(dir) => (Format::Html, Some(dir.clone())),
        None => (a.format, a.output.clone()),
    };
    let mut measures = parse_criteria(&a.criteria)?;
    let gates = parse_gates(&a.fail_under)?;
    if format == Format::Matrix {
        if !measures.is_empty() || !gates.is_empty() {
            return Err(Fail::usage("--criteria and --fail-under do not apply to --format matrix")
                .hint("use --format text, json or html for criteria"));
        }
        let doc = matrix_json(&store, snapshot, only.as_deref())?;
        let mut out: Box<dyn Write> = match &output {
            Some(p) => Box::new(io::BufWriter::new(std::fs::File::create(p).or_fail()?)),
            None => Box::new(io::BufWriter::new(io::stdout().lock())),
        };
        serde_json::to_writer(&mut out, &doc).map_err(io::Error::other).and_then(|_| writeln!(out)).or_fail()?;
        return Ok(ExitCode::SUCCESS);
    }
    if format == Format::Html && measures.is_empty() {
        measures = DEFAULT_MEASURES.to_vec();
    }
    for g in &gates {
        if let GateOn::Measure(m) = g.on
            && !measures.contains(&m)
        {
            measures.push(m);
        }
    }
    let report = build_report(&store, snapshot, only.as_deref())?;
    let reading = match a.reading {
        ReadingArg::Intended => Reading::Intended,
        ReadingArg::AsPrinted => Reading::AsPrinted,
    };
    let suite = if measures.is_empty() {
        None
    } else {
        Some(build_suite(&store, snapshot, only.as_deref(), report::Options { measures, reading })?)
    };
    match format {
        Format::Html => {
            let Some(dir) = &output else {
                return Err(Fail::usage("--format html writes a directory").hint("give it with -o DIR (or --html DIR)"));
            };
            write_html(&report, suite.as_ref(), &root, dir)?;
        }
        _ => {
            let mut out: Box<dyn Write> = match &output {
                Some(p) => Box::new(io::BufWriter::new(std::fs::File::create(p).or_fail()?)),
                None => Box::new(io::BufWriter::new(io::stdout().lock())),
            };
            match format {
                Format::Text => write_text(&report, suite.as_ref(), reading, &mut out),
                Format::Lcov => retest_cover::lcov::write(&report.files, "retest", &mut out),
                Format::Cobertura => {
                    let version = format!("retest {}", env!("CARGO_PKG_VERSION"));
                    let timestamp = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_millis() as u64)
                        .unwrap_or(0);
                    let root = root.display().to_string();
                    let opts = retest_cover::cobertura::Options { source_root: &root, timestamp, version: &version };
                    retest_cover::cobertura::write(&report.files, &opts, &mut out)
                }
                Format::Json => write_json(&report, suite.as_ref(), reading, &mut out),
                Format::Html | Format::Matrix => unreachable!("handled above"),
            }
            .and_then(|_| out.flush())
            .or_fail()?;
        }
    }
    for (t, why) in &report.unknown {
        eprintln!("warning: {t} is not included: its coverage is unknown ({why})");
    }
    if let Some(s) = &suite {
        for w in &s.warnings {
            eprintln!("warning: {w}");
        }
    }
    check_gates(&gates, &report, suite.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

const MISSING_SHOWN: usize = 50;

fn write_text(r: &Report, suite: Option<&SuiteReport>, reading: Reading, w: &mut dyn Write) -> io::Result<()> {
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
            let name = format!("{}:{}", f.name, f.line);
            if !f.recorded {
                writeln!(w, "  {name:<38} {:>16} {:>16} {:>12}", "not recorded", "", "")?;
                continue;
            }
            let (fl, fb) = fc.function_stats(f);
            writeln!(w, "  {name:<38} {:>16} {:>16} {:>12}", cell(fl), cell(fb), f.tests)?;
        }
    }
    let (l, b, f) = totals(&r.files);
    writeln!(w, "{:<40} {:>16} {:>16}   functions {}/{}", "total", cell(l), cell(b), f.hit, f.total)?;
    let Some(s) = suite else { return Ok(()) };
    writeln!(w)?;
    writeln!(
        w,
        "criteria (Kauffman et al. §VI, {} reading: obligations met; MC/DC per evaluation: conditions with an \
         independence pair)",
        match reading {
            Reading::Intended => "intended",
            Reading::AsPrinted => "as-printed",
        }
    )?;
    for m in &s.measures {
        writeln!(w, "  {:<28} {:>18}", m.measure.title(), cell(m.total))?;
    }
    writeln!(
        w,
        "  {} decisions, {} conditions",
        s.decisions.len(),
        s.decisions.iter().map(|d| d.report.conditions.len()).sum::<usize>()
    )?;
    if !s.missing.is_empty() {
        writeln!(w)?;
        let shown = s.missing.len().min(MISSING_SHOWN);
        if shown < s.missing.len() {
            writeln!(w, "missing (the first {shown} of {}; --format json or html lists all):", s.missing.len())?;
        } else {
            writeln!(w, "missing:")?;
        }
        for m in &s.missing[..shown] {
            let title = Measure::parse(m.measure).map(Measure::title).unwrap_or_else(|| m.measure.to_string());
            writeln!(w, "  {}:{} {} — {}: {}", m.file, m.line, m.function, title, m.what)?;
        }
    }
    Ok(())
}
