//! `retest coverage`: coverage reports from the stored coverage matrix: lines,
//! branches and functions, and with `--criteria` the criteria of 001 §VI and
//! MC/DC per evaluation ([`retest_cover::report`]).

use retest_cover::criteria::Reading;
use retest_cover::lines::{Accumulator, FileCoverage, Ratio};
use retest_cover::mcdc::{DecisionMcdc, McdcLayout, Variant};
use retest_cover::report::{self, Measure, RecordedEvaluations, SuiteReport, UnitRuns};
use retest_store::{CoverageState, Recorded, SnapshotId, Store};
use roaring::RoaringBitmap;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, OrFail};

/// The report: per file coverage plus which tests it covers.
pub struct Report {
    pub files: BTreeMap<String, FileCoverage>,
    pub tests: usize,
    pub unknown: Vec<(String, String)>,
    pub snapshot: SnapshotId,
}

/// Accumulates the coverage of the selected tests of a snapshot's matrix.
pub fn build_report(store: &Store, snapshot: SnapshotId, only: Option<&[String]>) -> Result<Report, Error> {
    let mut acc = Accumulator::default();
    let units = store.snapshot_units(snapshot).or_fail()?;
    let mut shapes = BTreeMap::new();
    // units whose build counted executions (`retest build --counts`)
    let mut counted = false;
    for su in &units {
        if shapes.contains_key(&su.unit) {
            continue;
        }
        let u = store.unit(su.unit).or_fail()?;
        let counts = match su.build {
            Some(b) => store.build_recording(b).or_fail()?.counts,
            None => false,
        };
        counted |= counts;
        let shape = acc.add_unit_counted(&u, counts);
        shapes.insert(su.unit, (u, shape));
    }
    let matrix = store.matrix_tests(snapshot).or_fail()?;
    if let Some(only) = only {
        for name in only {
            if !matrix.iter().any(|m| &m.name == name) {
                return Err(Error::usage(format!("test `{name}` has no recorded coverage in snapshot {}", snapshot.0))
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
        acc.begin_test();
        let recorded: HashMap<retest_store::UnitId, Recorded> = if counted {
            store.test_recorded(snapshot, m.test).or_fail()?.into_iter().collect()
        } else {
            HashMap::new()
        };
        for (unit, edges) in store.test_coverage(snapshot, m.test).or_fail()? {
            if let Some((u, shape)) = shapes.get(&unit) {
                let counts = recorded.get(&unit).map(|r| &r.counts).filter(|c| !c.is_empty());
                acc.add_test_counted(u, shape, &edges, counts);
            }
        }
    }
    Ok(Report { files: acc.finish(), tests: n, unknown, snapshot })
}

/// The snapshot whose matrix to report: `--snapshot`, else the baseline.
pub fn report_snapshot(store: &Store, explicit: Option<i64>) -> Result<SnapshotId, Error> {
    if let Some(s) = explicit {
        // a report of nothing would read 100% and pass every --fail-under gate
        let id = SnapshotId(s);
        let baseline = store.baseline().or_fail()?;
        let default = match baseline {
            Some(b) => format!("without --snapshot the baseline (snapshot {}) is reported", b.0),
            None => "`retest run` records coverage".to_string(),
        };
        if let Err(e) = store.snapshot(id) {
            return Err(match e {
                retest_store::StoreError::Missing { .. } => {
                    let there = match store.newest_snapshot().or_fail()? {
                        Some(n) => format!("the snapshots are 1 to {}", n.id.0),
                        None => "nothing has been built with the wrapper yet".to_string(),
                    };
                    Error::usage(format!("there is no snapshot {s} ({there})")).hint(default)
                }
                other => Error::new(other),
            });
        }
        if store.matrix_tests(id).or_fail()?.is_empty() {
            return Err(Error::usage(format!("snapshot {s} has no recorded coverage: no test ran on it")).hint(default));
        }
        return Ok(id);
    }
    store
        .baseline()
        .or_fail()?
        .ok_or_else(|| Error::new("no coverage has been recorded yet").hint("run `retest run` first"))
}

/// The measures `--criteria` names (in the order given, `all` for every one).
pub fn parse_criteria(names: &[String]) -> Result<Vec<Measure>, Error> {
    let mut out: Vec<Measure> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let add: Vec<Measure> = if n.eq_ignore_ascii_case("all") {
            DEFAULT_MEASURES.to_vec()
        } else {
            vec![Measure::parse(n).ok_or_else(|| {
                Error::usage(format!("unknown criterion `{n}`"))
                    .hint("use sc, dc, cc, dcc, mcc, fpc, mcdc, mcdc-unique, mcdc-masking or all")
            })?]
        };
        for m in add {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// `all`: the criteria of 001 §VI and both variants of MC/DC per evaluation.
pub const DEFAULT_MEASURES: [Measure; 9] = [
    Measure::Criterion(retest_cover::criteria::Criterion::Sc),
    Measure::Criterion(retest_cover::criteria::Criterion::Dc),
    Measure::Criterion(retest_cover::criteria::Criterion::Cc),
    Measure::Criterion(retest_cover::criteria::Criterion::Dcc),
    Measure::Criterion(retest_cover::criteria::Criterion::Mcc),
    Measure::Criterion(retest_cover::criteria::Criterion::Fpc),
    Measure::Criterion(retest_cover::criteria::Criterion::Mcdc),
    Measure::Mcdc(Variant::UniqueCause),
    Measure::Mcdc(Variant::Masking),
];

/// What a `--fail-under` gate measures.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum GateOn {
    Lines,
    Branches,
    Functions,
    Measure(Measure),
}

/// A `--fail-under` gate: a measure and the percentage it must reach.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    pub on: GateOn,
    pub percent: f64,
}

/// The gates of `--fail-under CRITERION=PCT,…`.
pub fn parse_gates(specs: &[String]) -> Result<Vec<Gate>, Error> {
    specs
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let bad = || {
                Error::usage(format!("--fail-under {s}: expected CRITERION=PCT"))
                    .hint("e.g. --fail-under mcdc-masking=80,lines=90 (a percentage from 0 to 100)")
            };
            let (name, pct) = s.split_once('=').ok_or_else(bad)?;
            let percent: f64 = pct.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
            if !(0.0..=100.0).contains(&percent) {
                return Err(bad());
            }
            let on = match name.trim().to_ascii_lowercase().as_str() {
                "lines" | "line" | "statements" => GateOn::Lines,
                "branches" | "branch" => GateOn::Branches,
                "functions" | "function" => GateOn::Functions,
                other => GateOn::Measure(Measure::parse(other).ok_or_else(|| {
                    Error::usage(format!("--fail-under {s}: unknown criterion `{}`", name.trim())).hint(
                        "use sc, dc, cc, dcc, mcc, fpc, mcdc, mcdc-unique, mcdc-masking, lines, branches or functions",
                    )
                })?),
            };
            Ok(Gate { on, percent })
        })
        .collect()
}

/// An error of kind [`ErrorKind::CoverageGate`] naming every measure under its threshold.
pub fn check_gates(gates: &[Gate], report: &Report, suite: Option<&SuiteReport>) -> Result<(), Error> {
    let (l, b, f) = totals(&report.files);
    let mut under = Vec::new();
    for g in gates {
        let (title, ratio) = match g.on {
            GateOn::Lines => ("lines".to_string(), l),
            GateOn::Branches => ("branches".to_string(), b),
            GateOn::Functions => ("functions".to_string(), f),
            GateOn::Measure(m) => {
                let r = suite.and_then(|s| s.measure(m)).map(|r| r.total).unwrap_or_default();
                (m.title(), r)
            }
        };
        if ratio.percent() + 1e-9 < g.percent {
            under.push(format!("{title} {:.1}% ({}/{}) < {}%", ratio.percent(), ratio.hit, ratio.total, g.percent));
        }
    }
    if under.is_empty() {
        return Ok(());
    }
    Err(Error {
        what: format!("coverage under the threshold: {}", under.join(", ")),
        hint: None,
        kind: ErrorKind::CoverageGate,
    }
    .hint("the report lists what is missing (--format text or html)"))
}

/// The criteria of every unit of the snapshot, for the selected tests.
pub fn build_suite(
    store: &Store,
    snapshot: SnapshotId,
    only: Option<&[String]>,
    options: report::Options,
) -> Result<SuiteReport, Error> {
    let names: HashMap<retest_store::TestId, String> = store
        .matrix_tests(snapshot)
        .or_fail()?
        .into_iter()
        .filter(|m| matches!(m.state, CoverageState::Known) && only.is_none_or(|o| o.contains(&m.name)))
        .map(|m| (m.test, m.name))
        .collect();
    let mut suite = report::Suite::new(options);
    let mut done = std::collections::BTreeSet::new();
    for su in store.snapshot_units(snapshot).or_fail()? {
        if !done.insert(su.unit) {
            continue;
        }
        let unit = store.unit(su.unit).or_fail()?;
        let coverage: Vec<(&str, RoaringBitmap)> = store
            .unit_coverage(snapshot, su.unit)
            .or_fail()?
            .into_iter()
            .filter_map(|(t, bm)| names.get(&t).map(|n| (n.as_str(), bm)))
            .collect();
        // decision evaluations recorded at run time (`retest cc --mcdc`), where the
        // unit's build recorded them; elsewhere each test's are read off its edges
        let placed = match su.build {
            Some(b) => store.build(b).or_fail()?.recording,
            None => Default::default(),
        };
        let recorded_tests: Vec<(&str, Recorded)> = if placed.mcdc_cells.is_some() {
            store
                .unit_recorded(snapshot, su.unit)
                .or_fail()?
                .into_iter()
                .filter_map(|(t, r)| names.get(&t).map(|n| (n.as_str(), r)))
                .collect()
        } else {
            Vec::new()
        };
        let recorded = placed.mcdc_cells.map(|_| RecordedEvaluations {
            slots: McdcLayout::new(&unit).sinks(&placed),
            tests: recorded_tests.iter().map(|(n, r)| (*n, r)).collect(),
        });
        let runs = UnitRuns { unit: &unit, tests: coverage.iter().map(|(n, bm)| (*n, bm)).collect(), recorded };
        suite.add_unit(&runs);
    }
    Ok(suite.finish())
}

pub fn write_html(report: &Report, suite: Option<&SuiteReport>, root: &Path, dir: &Path) -> Result<(), Error> {
    let mut sources = BTreeMap::new();
    let mut paths: Vec<&str> = report.files.keys().map(String::as_str).collect();
    if let Some(s) = suite {
        paths.extend(s.decisions.iter().map(|d| d.report.file.as_str()));
    }
    for p in paths {
        if sources.contains_key(p) {
            continue;
        }
        let full = if Path::new(p).is_absolute() { PathBuf::from(p) } else { root.join(p) };
        if let Ok(bytes) = std::fs::read(&full) {
            sources.insert(p.to_string(), String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    let decisions: Vec<retest_cover::mcdc::DecisionReport> =
        suite.map(|s| s.decisions.iter().map(|d| d.report.clone()).collect()).unwrap_or_default();
    // conditions as written: each file tokenized once
    let mut tokens: BTreeMap<&str, Vec<crate::source_text::Token>> = BTreeMap::new();
    let written: Vec<Option<Vec<String>>> = decisions
        .iter()
        .map(|d| {
            let src = sources.get(&d.file)?;
            let toks = tokens.entry(d.file.as_str()).or_insert_with(|| crate::source_text::tokenize(src));
            crate::source_text::condition_texts(src, toks, &d.conditions, &d.condition_spans)
        })
        .collect();
    let title = format!("retest coverage — snapshot {}, {} tests", report.snapshot.0, report.tests);
    let pages = retest_cover::html::render(&retest_cover::html::Input {
        title: &title,
        files: &report.files,
        sources: &sources,
        decisions: &decisions,
        measures: suite.map(|s| s.measures.as_slice()).unwrap_or(&[]),
        written: &written,
    });
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
    for (name, text) in pages {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| Error::new(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}

/// `retest.matrix/1`: `{ schema, snapshot, tests: [{ name, state, reason, units: { key: [edge, ...] },
/// recorded?: { key: { mcdc, paths, frames, ids } } }] }` (`recorded` only where a build
/// with `--mcdc` / `--paths` recorded something).
pub fn matrix_json(store: &Store, snapshot: SnapshotId, only: Option<&[String]>) -> Result<serde_json::Value, Error> {
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
        let mut t = serde_json::json!({ "name": m.name, "state": state, "reason": reason, "units": units });
        // what builds with --mcdc / --paths recorded beyond edges, where anything was
        let mut recorded = serde_json::Map::new();
        for (u, r) in store.test_recorded(snapshot, m.test).or_fail()? {
            if r.is_empty() {
                continue;
            }
            let key = keys.get(&u).cloned().unwrap_or_else(|| format!("unit{}", u.0));
            let ids: serde_json::Map<String, serde_json::Value> =
                r.ids.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(v.clone()))).collect();
            recorded.insert(
                key,
                serde_json::json!({
                    "mcdc": r.mcdc.iter().collect::<Vec<u32>>(),
                    "paths": r.paths.iter().collect::<Vec<u32>>(),
                    "frames": r.frames.iter().collect::<Vec<u32>>(),
                    "ids": ids,
                }),
            );
        }
        if !recorded.is_empty() {
            t["recorded"] = serde_json::Value::Object(recorded);
        }
        tests.push(t);
    }
    Ok(serde_json::json!({ "schema": "retest.matrix/1", "snapshot": snapshot.0, "tests": tests }))
}

pub fn totals(files: &BTreeMap<String, FileCoverage>) -> (Ratio, Ratio, Ratio) {
    let mut l = Ratio::default();
    let mut b = Ratio::default();
    let mut f = Ratio::default();
    for fc in files.values() {
        l.hit += fc.lines_hit();
        l.total += fc.lines.len();
        b.hit += fc.branches_hit();
        b.total += fc.branches_total();
        f.hit += fc.functions_hit();
        f.total += fc.functions_total();
    }
    (l, b, f)
}

/// How many missing items the text report lists.
#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    snapshot: i64,
    tests: usize,
    totals: JsonTotals,
    files: Vec<JsonFile<'a>>,
    unknown_coverage: Vec<JsonUnknown<'a>>,
    /// With --criteria: the measures' totals and what is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    criteria: Option<JsonCriteria<'a>>,
    /// With --criteria: every decision with its MC/DC per evaluation.
    #[serde(skip_serializing_if = "Option::is_none")]
    decisions: Option<Vec<JsonDecision<'a>>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

#[derive(Serialize)]
struct JsonCriteria<'a> {
    reading: &'static str,
    measures: Vec<JsonMeasure<'a>>,
    missing: &'a [report::Missing],
}

#[derive(Serialize)]
struct JsonMeasure<'a> {
    measure: &'static str,
    title: String,
    covered: usize,
    total: usize,
    percent: f64,
    files: Vec<JsonFileRatio<'a>>,
}

#[derive(Serialize)]
struct JsonFileRatio<'a> {
    path: &'a str,
    covered: usize,
    total: usize,
}

#[derive(Serialize)]
struct JsonDecision<'a> {
    file: &'a str,
    line: u32,
    function: &'a str,
    /// number of conditions
    conditions: usize,
    condition_texts: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    expression: Option<&'a str>,
    well_formed: bool,
    /// `recorded` or `edge-sets`
    evaluations_from: report::EvaluationSource,
    /// tests left out: their evaluations of the decision cannot be told apart
    skipped_tests: &'a [String],
    outcomes: JsonOutcomes,
    /// the distinct evaluations: `conditions` as T/F/- per condition, the outcome, the tests
    vectors: Vec<JsonVector<'a>>,
    unique_cause: Option<JsonVariant>,
    masking: Option<JsonVariant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonOutcomes {
    #[serde(rename = "true")]
    t: bool,
    #[serde(rename = "false")]
    f: bool,
}

#[derive(Serialize)]
struct JsonVector<'a> {
    conditions: String,
    outcome: bool,
    tests: &'a [String],
    evaluations: u64,
}

#[derive(Serialize)]
struct JsonVariant {
    /// conditions with an independence pair
    independent: usize,
    conditions: Vec<JsonCondition>,
}

#[derive(Serialize)]
struct JsonCondition {
    index: usize,
    evaluated_true: bool,
    evaluated_false: bool,
    /// independence pairs: indexes into `vectors` of the evaluation with outcome true and with outcome false
    pairs: Vec<JsonPair>,
}

#[derive(Serialize)]
struct JsonPair {
    #[serde(rename = "true")]
    t: usize,
    #[serde(rename = "false")]
    f: usize,
}

fn json_variant(r: Option<&DecisionMcdc>) -> Option<JsonVariant> {
    let r = r?;
    Some(JsonVariant {
        independent: r.independent,
        conditions: r
            .conditions
            .iter()
            .map(|c| JsonCondition {
                index: c.index,
                evaluated_true: c.evaluated_true,
                evaluated_false: c.evaluated_false,
                pairs: c.pairs.iter().map(|p| JsonPair { t: p.when_true, f: p.when_false }).collect(),
            })
            .collect(),
    })
}

fn json_suite(s: &SuiteReport, reading: Reading) -> (JsonCriteria<'_>, Vec<JsonDecision<'_>>) {
    let criteria = JsonCriteria {
        reading: match reading {
            Reading::Intended => "intended",
            Reading::AsPrinted => "as-printed",
        },
        measures: s
            .measures
            .iter()
            .map(|m| JsonMeasure {
                measure: m.measure.as_str(),
                title: m.measure.title(),
                covered: m.total.hit,
                total: m.total.total,
                percent: (m.percent() * 100.0).round() / 100.0,
                files: m.files.iter().map(|(p, r)| JsonFileRatio { path: p, covered: r.hit, total: r.total }).collect(),
            })
            .collect(),
        missing: &s.missing,
    };
    let decisions = s
        .decisions
        .iter()
        .map(|d| {
            let r = &d.report;
            let first = r.results.first();
            JsonDecision {
                file: &r.file,
                line: r.line,
                function: &r.function,
                conditions: r.conditions.len(),
                condition_texts: &r.conditions,
                expression: r.expression.as_deref(),
                well_formed: d.well_formed,
                evaluations_from: d.source,
                skipped_tests: &d.skipped_tests,
                outcomes: JsonOutcomes {
                    t: first.is_some_and(|m| m.outcomes[1]),
                    f: first.is_some_and(|m| m.outcomes[0]),
                },
                vectors: first
                    .map(|m| {
                        m.vectors
                            .iter()
                            .map(|v| JsonVector {
                                conditions: v.vector.conditions_string(),
                                outcome: v.vector.outcome,
                                tests: &v.tests,
                                evaluations: v.evaluations,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                unique_cause: json_variant(r.result(Variant::UniqueCause)),
                masking: json_variant(r.result(Variant::Masking)),
                note: r.note.as_deref(),
            }
        })
        .collect();
    (criteria, decisions)
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
    /// [line, times it ran, summed over the tests], for the lines a build
    /// with counters holds (`retest build --counts`); absent without one
    #[serde(skip_serializing_if = "Vec::is_empty")]
    executions: Vec<(u32, u64)>,
    /// [line, decision on the line, outcome, tests that took it]
    branch_outcomes: Vec<(u32, u32, &'a str, u32)>,
}

#[derive(Serialize)]
struct JsonFunction<'a> {
    name: &'a str,
    line: u32,
    tests: u32,
    /// false: no run records it (it runs only while compiling, or is a C++11
    /// `constexpr` function); `tests` is then 0 and means nothing
    recorded: bool,
    statements: Ratio,
    branches: Ratio,
}

#[derive(Serialize)]
struct JsonUnknown<'a> {
    test: &'a str,
    reason: &'a str,
}

pub fn write_json(r: &Report, suite: Option<&SuiteReport>, reading: Reading, w: &mut dyn Write) -> io::Result<()> {
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
                    JsonFunction {
                        name: &f.name,
                        line: f.line,
                        tests: f.tests,
                        recorded: f.recorded,
                        statements: fl,
                        branches: fb,
                    }
                })
                .collect(),
            lines: fc.lines.iter().map(|(l, c)| (*l, c.tests)).collect(),
            executions: fc.lines.iter().filter_map(|(l, c)| c.executions.map(|x| (*l, x))).collect(),
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
        criteria: None,
        decisions: None,
        warnings: suite.map(|s| s.warnings.as_slice()).unwrap_or(&[]),
    };
    let mut doc = doc;
    if let Some(s) = suite {
        let (c, d) = json_suite(s, reading);
        doc.criteria = Some(c);
        doc.decisions = Some(d);
    }
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(io::Error::other)?;
    writeln!(w)
}
