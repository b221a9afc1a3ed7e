//! The coverage criteria of a whole test suite: every decision of every
//! procedure of every unit, measured against the tests' recorded coverage.
//!
//! For each procedure, [`Cfdg::for_procedure`] gives its decisions (001 §V). Two
//! families of measures are computed over them ([`Measure`]):
//!
//! * the criteria of 001 §VI ([`Criterion`]), on runs as sets of edges
//!   ([`crate::criteria`]): a test's run of a procedure is the set of its
//!   condition-level edges the test walked;
//! * MC/DC per decision evaluation ([`Variant`], [`crate::mcdc`]): the condition
//!   vectors of every evaluation, and the independence pairs among them.
//!
//! **Where the evaluations come from** ([`EvaluationSource`]). A unit built to
//! record its decision evaluations (`retest cc --mcdc`) gives, per test, the set
//! of decision paths it took ([`RecordedEvaluations`]; path numbering of
//! [`crate::mcdc::DecisionPaths`]): that source is exact and is preferred. Without
//! it, a test's evaluation of a decision is read off its edge set
//! ([`crate::mcdc::evaluations_from_runs`]), which is exact when the test
//! evaluated the decision once, or always along the same path. A test that
//! evaluated it along several paths (in a loop, or in a function called several
//! times) has an edge set that does not tell the evaluations apart: it is left
//! out of that decision's MC/DC and *named* in [`DecisionCoverage::skipped_tests`]
//! and in a warning — never dropped silently.
//!
//! Decisions of the same function at the same place seen in several units (a
//! `static inline` function of a header) are reported once, with the
//! evaluations of all units; the criteria of 001 §VI are counted per unit, as
//! each unit is a separate copy of the code.

use std::collections::{BTreeMap, BTreeSet};

use fixedbitset::FixedBitSet;
use retest_graph::recording::{Recorded, Sink};
use retest_graph::{Cfg, NodeId, NodeKind, Unit};
use roaring::RoaringBitmap;
use serde::Serialize;

use crate::cfdg::{Cfdg, Decision};
use crate::criteria::{self, Criterion, Obligation, Reading, Run};
use crate::lines::Ratio;
use crate::mcdc::{self, DecisionMcdc, DecisionPaths, DecisionReport, Evaluation, Expr, McdcError, Variant};

/// One coverage measure: a criterion of 001 §VI or a variant of MC/DC per evaluation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Measure {
    /// A criterion of 001 §VI, on runs as sets of edges.
    Criterion(Criterion),
    /// MC/DC per decision evaluation: conditions with an independence pair.
    Mcdc(Variant),
}

impl Measure {
    /// Every measure, in report order.
    pub const ALL: [Measure; 10] = [
        Measure::Criterion(Criterion::Sc),
        Measure::Criterion(Criterion::Dc),
        Measure::Criterion(Criterion::Cc),
        Measure::Criterion(Criterion::Dcc),
        Measure::Criterion(Criterion::Mcc),
        Measure::Criterion(Criterion::Fpc),
        Measure::Criterion(Criterion::Mcdc),
        Measure::Mcdc(Variant::UniqueCause),
        Measure::Mcdc(Variant::Masking),
        Measure::Mcdc(Variant::StrictUniqueCause),
    ];

    /// The name on the command line: `sc` … `mcdc` (001 §VI), `mcdc-unique`,
    /// `mcdc-masking`, `mcdc-strict` (per evaluation).
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Criterion(c) => c.as_str(),
            Measure::Mcdc(Variant::UniqueCause) => "mcdc-unique",
            Measure::Mcdc(Variant::Masking) => "mcdc-masking",
            Measure::Mcdc(Variant::StrictUniqueCause) => "mcdc-strict",
        }
    }

    /// The name in reports: `SC`, `D/CC`, `MC/DC`, `MC/DC (masking)`, ….
    pub fn title(self) -> String {
        match self {
            Measure::Criterion(c) => c.title().to_string(),
            Measure::Mcdc(v) => format!("MC/DC ({})", v.as_str()),
        }
    }

    /// Parses [`Measure::as_str`] (any case; also `d/cc`, `mc/dc`, and the
    /// variants' long names `mcdc-unique-cause`, `mcdc-strict-unique-cause`).
    pub fn parse(s: &str) -> Option<Measure> {
        let l = s.to_ascii_lowercase().replace('/', "");
        if let Some(c) = Criterion::parse(&l) {
            return Some(Measure::Criterion(c));
        }
        let v = l.strip_prefix("mcdc-")?;
        match v {
            "unique" => Some(Measure::Mcdc(Variant::UniqueCause)),
            "strict" => Some(Measure::Mcdc(Variant::StrictUniqueCause)),
            other => Variant::parse(other).map(Measure::Mcdc),
        }
    }
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct Options {
    /// The measures to total (MC/DC per evaluation is computed for every decision
    /// in any case, unique-cause and masking at least).
    pub measures: Vec<Measure>,
    /// How to read the paper's formulas.
    pub reading: Reading,
}

/// Where a decision's evaluations were read from.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvaluationSource {
    /// Recorded at run time, one path per evaluation: exact.
    Recorded,
    /// Read off each test's set of walked edges: exact for tests that evaluated
    /// the decision along one path; other tests are skipped and named.
    EdgeSets,
}

/// The decision evaluations a unit recorded at run time (`retest cc --mcdc`).
#[derive(Clone, Debug)]
pub struct RecordedEvaluations<'a> {
    /// `slots[p][d]`: where decision `d` (in the order of [`Cfdg::for_procedure`])
    /// of procedure `p` recorded its evaluations — cell `base + id`, or id `id`
    /// under `key`, for an evaluation along path `id` of its [`DecisionPaths`] —
    /// or `None` where it was not recorded (its evaluations are then read off
    /// edge sets). [`crate::mcdc::McdcLayout::sinks`] gives them for a build.
    pub slots: Vec<Vec<Option<Sink>>>,
    /// Per test: its name and what it recorded in the unit.
    pub tests: Vec<(&'a str, &'a Recorded)>,
}

/// One unit and what the tests did in it.
#[derive(Clone, Debug)]
pub struct UnitRuns<'a> {
    /// The unit.
    pub unit: &'a Unit,
    /// Per test: its name and the unit-wide condition-level edges it walked.
    pub tests: Vec<(&'a str, &'a RoaringBitmap)>,
    /// Recorded evaluations, when the unit was built to record them.
    pub recorded: Option<RecordedEvaluations<'a>>,
}

/// A measure's totals.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MeasureReport {
    /// The measure.
    pub measure: Measure,
    /// Over everything.
    pub total: Ratio,
    /// Per source file.
    pub files: BTreeMap<String, Ratio>,
}

impl MeasureReport {
    /// Covered in percent (100 when there is nothing to cover).
    pub fn percent(&self) -> f64 {
        self.total.percent()
    }
}

/// One decision's MC/DC per evaluation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DecisionCoverage {
    /// Location, conditions, expression and one result per variant.
    pub report: DecisionReport,
    /// Where the evaluations came from.
    pub source: EvaluationSource,
    /// Tests whose evaluations could not be told apart (see the module
    /// documentation); they are not in [`DecisionCoverage::report`].
    pub skipped_tests: Vec<String>,
    /// The decision has one entry, is acyclic and has both outcomes.
    pub well_formed: bool,
}

/// Something a measure requires that no test does.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Missing {
    /// The measure (its [`Measure::as_str`]).
    pub measure: &'static str,
    /// Where.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The function.
    pub function: String,
    /// What is missing.
    pub what: String,
}

/// The whole suite's criteria.
#[derive(Clone, Debug, Default)]
pub struct SuiteReport {
    /// One per measure asked for, in the order asked.
    pub measures: Vec<MeasureReport>,
    /// Every decision, by file, line and function.
    pub decisions: Vec<DecisionCoverage>,
    /// What is missing, per measure asked for, in file and line order.
    pub missing: Vec<Missing>,
    /// Things the reader must know (tests skipped for MC/DC per evaluation).
    pub warnings: Vec<String>,
}

impl SuiteReport {
    /// The totals of `m`, if it was asked for.
    pub fn measure(&self, m: Measure) -> Option<&MeasureReport> {
        self.measures.iter().find(|r| r.measure == m)
    }
}

/// Identity of a decision across units.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct DecisionKey {
    file: String,
    line: u32,
    function: String,
    /// position among the procedure's decisions
    ordinal: usize,
    conditions: Vec<String>,
}

/// A decision's evaluations gathered over units.
struct DecisionAcc {
    /// where each condition starts, in the decision's file
    spans: Vec<Option<mcdc::ConditionSpan>>,
    structure: Result<Expr, mcdc::StructureError>,
    evaluations: Vec<Evaluation>,
    skipped: BTreeSet<String>,
    recorded_everywhere: bool,
    /// why evaluations could not be read at all
    unreadable: Option<String>,
    well_formed: bool,
}

/// Accumulates units into a [`SuiteReport`].
pub struct Suite {
    options: Options,
    criteria: Vec<Criterion>,
    totals: BTreeMap<Criterion, (Ratio, BTreeMap<String, Ratio>)>,
    decisions: BTreeMap<DecisionKey, DecisionAcc>,
    missing: Vec<Missing>,
}

impl Suite {
    /// A suite measuring `options.measures`.
    pub fn new(options: Options) -> Suite {
        let mut criteria: Vec<Criterion> = options
            .measures
            .iter()
            .filter_map(|m| match m {
                Measure::Criterion(c) => Some(*c),
                Measure::Mcdc(_) => None,
            })
            .collect();
        criteria.sort();
        criteria.dedup();
        Suite { options, criteria, totals: BTreeMap::new(), decisions: BTreeMap::new(), missing: Vec::new() }
    }

    /// Adds one unit: the criteria of each of its procedures, and the evaluations
    /// of each of its decisions.
    pub fn add_unit(&mut self, u: &UnitRuns<'_>) {
        let unit = u.unit;
        let bases = unit.edge_bases();
        for (pi, p) in unit.procedures.iter().enumerate() {
            let cfg = &p.cond;
            let cfdg = Cfdg::for_procedure(p);
            let file = p.span.map(|s| unit.file_path(&s).to_string()).unwrap_or_else(|| "?".to_string());
            let (lo, hi) = (bases[pi], bases[pi + 1]);
            let runs: Vec<Run> = u
                .tests
                .iter()
                .filter(|(_, bm)| hi > lo && bm.range_cardinality(lo..hi) > 0)
                .map(|(name, bm)| {
                    let mut edges = FixedBitSet::with_capacity(cfg.edge_count());
                    for e in bm.range(lo..hi) {
                        edges.insert((e - lo) as usize);
                    }
                    Run { test: name.to_string(), edges }
                })
                .collect();
            let here = Place { unit, cfg, cfdg: &cfdg, file: &file, function: &p.name, called: !runs.is_empty() };
            if !self.criteria.is_empty() {
                let reports = criteria::evaluate(cfg, &cfdg, &runs, &self.criteria, self.options.reading);
                for r in &reports {
                    let (total, files) = self.totals.entry(r.criterion).or_default();
                    let f = files.entry(file.clone()).or_default();
                    for x in [total, f] {
                        x.hit += r.covered;
                        x.total += r.total;
                    }
                    self.missing.extend(here.missing(r));
                }
            }
            let recorded = u.recorded.as_ref().and_then(|rec| rec.slots.get(pi).map(|b| (rec, b)));
            for (di, d) in cfdg.decisions.iter().enumerate() {
                let (dfile, line) = here.location(d);
                let key = DecisionKey {
                    file: dfile,
                    line,
                    function: p.name.clone(),
                    ordinal: di,
                    conditions: d.conditions.iter().map(|&c| cfg.node(c).text.clone()).collect(),
                };
                let spans = d
                    .conditions
                    .iter()
                    .map(|&c| {
                        cfg.node(c).span.filter(|s| unit.file_path(s) == key.file).map(|s| mcdc::ConditionSpan::of(&s))
                    })
                    .collect();
                let acc = self.decisions.entry(key).or_insert_with(|| DecisionAcc {
                    spans,
                    structure: mcdc::decision_structure(cfg, d),
                    evaluations: Vec::new(),
                    skipped: BTreeSet::new(),
                    recorded_everywhere: true,
                    unreadable: None,
                    well_formed: d.well_formed,
                });
                let paths = match DecisionPaths::new(cfg, d) {
                    Ok(p) => p,
                    Err(e) => {
                        acc.unreadable = Some(format!("evaluations cannot be numbered: {e}"));
                        continue;
                    }
                };
                match recorded.and_then(|(rec, b)| b.get(di).copied().flatten().map(|sink| (rec, sink))) {
                    Some((rec, sink)) => {
                        for (test, r) in &rec.tests {
                            let ids: Vec<u64> = match sink {
                                Sink::Cell { base, .. } => {
                                    let end = (base as u64 + paths.count()).min(u32::MAX as u64) as u32;
                                    r.mcdc.range(base..end).map(|c| u64::from(c - base)).collect()
                                }
                                Sink::Id { key } => r.ids.get(&key).cloned().unwrap_or_default(),
                            };
                            for id in ids {
                                if let Some(pv) = paths.decode(id) {
                                    acc.evaluations.push(Evaluation { test: test.to_string(), vector: pv.vector });
                                }
                            }
                        }
                    }
                    None => {
                        acc.recorded_everywhere = false;
                        for r in &runs {
                            match paths.from_edges(&r.edges) {
                                Ok(Some(pv)) => {
                                    acc.evaluations.push(Evaluation { test: r.test.clone(), vector: pv.vector })
                                }
                                Ok(None) => {}
                                Err(()) => {
                                    acc.skipped.insert(r.test.clone());
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The report.
    pub fn finish(self) -> SuiteReport {
        let mut variants: Vec<Variant> = vec![Variant::UniqueCause, Variant::Masking];
        for m in &self.options.measures {
            if let Measure::Mcdc(v) = m
                && !variants.contains(v)
            {
                variants.push(*v);
            }
        }
        variants.sort();
        let mut decisions = Vec::with_capacity(self.decisions.len());
        let mut missing = self.missing;
        let mut skipped_decisions = 0usize;
        let mut skipped_tests: BTreeSet<String> = BTreeSet::new();
        for (key, acc) in self.decisions {
            let structure = acc.structure.as_ref().ok();
            let mut notes = Vec::new();
            let mut results = Vec::new();
            if let Some(why) = &acc.unreadable {
                notes.push(why.clone());
            } else {
                for &v in &variants {
                    match mcdc::analyze(key.conditions.len(), structure, &acc.evaluations, v) {
                        Ok(r) => results.push(r),
                        Err(McdcError::NoStructure) => {
                            if let Err(e) = &acc.structure {
                                notes.push(format!("{} not computed: {e}", v.as_str()));
                            }
                        }
                        Err(e) => notes.push(format!("{} not computed: {e}", v.as_str())),
                    }
                }
            }
            if !acc.skipped.is_empty() {
                skipped_decisions += 1;
                skipped_tests.extend(acc.skipped.iter().cloned());
                notes.push(format!(
                    "{} evaluated this decision along several paths in one run, which edge coverage cannot tell \
                     apart: not counted here ({})",
                    plural(acc.skipped.len(), "test", "tests"),
                    acc.skipped.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                        + if acc.skipped.len() > 5 { ", …" } else { "" }
                ));
            }
            let report = DecisionReport {
                file: key.file.clone(),
                line: key.line,
                function: key.function.clone(),
                expression: structure.map(|s| s.render(&key.conditions)),
                conditions: key.conditions.clone(),
                results,
                note: (!notes.is_empty()).then(|| notes.join("; ")),
                condition_spans: acc.spans,
                structure: structure.cloned(),
            };
            for m in &self.options.measures {
                if let Measure::Mcdc(v) = m {
                    missing.extend(mcdc_missing(&report, *v, acc.skipped.len()));
                }
            }
            decisions.push(DecisionCoverage {
                report,
                source: if acc.recorded_everywhere && acc.unreadable.is_none() {
                    EvaluationSource::Recorded
                } else {
                    EvaluationSource::EdgeSets
                },
                skipped_tests: acc.skipped.into_iter().collect(),
                well_formed: acc.well_formed,
            });
        }
        let order = |m: &str| self.options.measures.iter().position(|x| x.as_str() == m).unwrap_or(usize::MAX);
        missing.sort_by(|a, b| {
            (order(a.measure), &a.file, a.line, &a.function).cmp(&(order(b.measure), &b.file, b.line, &b.function))
        });
        let mut measures = Vec::new();
        let mut seen = BTreeSet::new();
        for &m in &self.options.measures {
            if !seen.insert(m) {
                continue;
            }
            measures.push(match m {
                Measure::Criterion(c) => {
                    let (total, files) = self.totals.get(&c).cloned().unwrap_or_default();
                    MeasureReport { measure: m, total, files }
                }
                Measure::Mcdc(v) => {
                    let mut total = Ratio::default();
                    let mut files: BTreeMap<String, Ratio> = BTreeMap::new();
                    for d in &decisions {
                        let n = d.report.conditions.len();
                        let hit = d.report.result(v).map(|r| r.independent).unwrap_or(0);
                        let f = files.entry(d.report.file.clone()).or_default();
                        for x in [&mut total, f] {
                            x.hit += hit;
                            x.total += n;
                        }
                    }
                    MeasureReport { measure: m, total, files }
                }
            });
        }
        let mut warnings = Vec::new();
        if skipped_decisions > 0 {
            warnings.push(format!(
                "{} evaluated {} along several paths in one run ({}): edge coverage cannot tell those \
                 evaluations apart, so they are not counted for MC/DC per evaluation — build with \
                 `retest cc --mcdc` to record every evaluation",
                plural(skipped_tests.len(), "test", "tests"),
                plural(skipped_decisions, "decision", "decisions"),
                skipped_tests.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                    + if skipped_tests.len() > 5 { ", …" } else { "" }
            ));
        }
        SuiteReport { measures, decisions, missing, warnings }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A procedure being measured.
struct Place<'a> {
    unit: &'a Unit,
    cfg: &'a Cfg,
    cfdg: &'a Cfdg,
    file: &'a str,
    function: &'a str,
    /// some test entered the procedure
    called: bool,
}

impl Place<'_> {
    /// File and line of a node (the procedure's file and line 0 without a span).
    fn at(&self, n: NodeId) -> (String, u32) {
        match self.cfg.node(n).span {
            Some(s) => (self.unit.file_path(&s).to_string(), s.line),
            None => (self.file.to_string(), 0),
        }
    }

    /// File and line of a decision's first condition.
    fn location(&self, d: &Decision) -> (String, u32) {
        self.at(d.conditions.first().copied().unwrap_or(d.entry))
    }

    fn text(&self, n: NodeId) -> String {
        let t = self.cfg.node(n).text.trim();
        if t.chars().count() > 60 { format!("{}…", t.chars().take(59).collect::<String>()) } else { t.to_string() }
    }

    fn decision_text(&self, d: &Decision) -> String {
        let names: Vec<String> = d.conditions.iter().map(|&c| self.text(c)).collect();
        match mcdc::decision_structure(self.cfg, d) {
            Ok(e) => e.render(&names),
            Err(_) => names.join(", "),
        }
    }

    fn item(&self, c: Criterion, (file, line): (String, u32), what: String) -> Missing {
        Missing { measure: c.as_str(), file, line, function: self.function.to_string(), what }
    }

    /// The missing obligations of one criterion, described in source terms. A
    /// procedure no test entered gives one item for all of them.
    fn missing(&self, r: &criteria::CriterionReport) -> Vec<Missing> {
        let c = r.criterion;
        if !self.called {
            let n = r.total - r.covered;
            if n == 0 {
                return Vec::new();
            }
            let what =
                format!("`{}` is never called ({} missing)", self.function, plural(n, "obligation", "obligations"));
            return vec![self.item(c, self.at(self.cfg.entry()), what)];
        }
        let mut out = Vec::new();
        let mut vertex_lines: BTreeMap<(String, u32), Vec<NodeId>> = BTreeMap::new();
        for m in r.missing() {
            match m.obligation {
                Obligation::Vertex { node } => vertex_lines.entry(self.at(node)).or_default().push(node),
                Obligation::Entry { node } => {
                    out.push(self.item(c, self.at(node), format!("`{}` is never called", self.function)))
                }
                Obligation::Exit { node } => {
                    out.push(self.item(c, self.at(node), format!("`{}` never returns", self.function)))
                }
                Obligation::DecisionOutcomes { decision } => {
                    let d = &self.cfdg.decisions[decision.index()];
                    let why = m.missing.as_deref().unwrap_or("");
                    out.push(self.item(c, self.location(d), format!("decision `{}`: {why}", self.decision_text(d))));
                }
                Obligation::ConditionOutcomes { decision, node } | Obligation::Pair { decision, node, .. } => {
                    let d = &self.cfdg.decisions[decision.index()];
                    let why = name_nodes(m.missing.as_deref().unwrap_or(""), self.cfg);
                    let k = d.condition_index(node).map(|i| format!(" (C{})", i + 1)).unwrap_or_default();
                    out.push(self.item(
                        c,
                        self.at(node),
                        format!("condition `{}`{k} of `{}`: {why}", self.text(node), self.decision_text(d)),
                    ));
                }
            }
        }
        for ((file, line), nodes) in vertex_lines {
            let shown: Vec<NodeId> =
                nodes.iter().copied().filter(|&n| self.cfg.node(n).kind != NodeKind::Exit).collect();
            let Some(&first) = shown.first() else {
                out.push(self.item(c, (file, line), format!("the exit of `{}` is never reached", self.function)));
                continue;
            };
            let more =
                if shown.len() > 1 { format!(" (and {} more on the line)", shown.len() - 1) } else { String::new() };
            out.push(self.item(c, (file, line), format!("`{}` is never executed{more}", self.text(first))));
        }
        out
    }
}

/// Replaces the `nN` node names of a criteria message with the nodes' texts.
fn name_nodes(s: &str, cfg: &Cfg) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('n') {
        let before_ok = i == 0 || !rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let digits: String = rest[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        let after = &rest[i + 1 + digits.len()..];
        let after_ok = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..i]);
        match digits.parse::<u32>() {
            Ok(id) if before_ok && after_ok && (id as usize) < cfg.node_count() => {
                out.push('`');
                out.push_str(cfg.node(NodeId(id)).text.trim());
                out.push('`');
                rest = after;
            }
            _ => {
                out.push('n');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Conditions of a decision without an independence pair under `v`; `skipped`
/// tests evaluated it in ways edge sets cannot tell apart.
fn mcdc_missing(d: &DecisionReport, v: Variant, skipped: usize) -> Vec<Missing> {
    let m = Measure::Mcdc(v).as_str();
    let expr = d.expression.clone().unwrap_or_else(|| d.conditions.join(", "));
    let item =
        |what: String| Missing { measure: m, file: d.file.clone(), line: d.line, function: d.function.clone(), what };
    let Some(r) = d.result(v) else {
        let why = d.note.clone().unwrap_or_else(|| "not computed".to_string());
        return vec![item(format!("decision `{expr}`: {why}"))];
    };
    if r.vectors.is_empty() {
        let n = plural(d.conditions.len(), "condition", "conditions");
        let what = if skipped > 0 {
            format!(
                "decision `{expr}` ({n}): no evaluation could be read ({} whose evaluations edge coverage cannot \
                 tell apart)",
                plural(skipped, "test", "tests")
            )
        } else {
            format!("decision `{expr}` ({n}) is never evaluated")
        };
        return vec![item(what)];
    }
    r.conditions
        .iter()
        .filter(|c| !c.independent())
        .map(|c| {
            let text = d.conditions.get(c.index).map(String::as_str).unwrap_or("?");
            let also = if skipped > 0 {
                format!(
                    " (not counting {} whose evaluations edge coverage cannot tell apart)",
                    plural(skipped, "test", "tests")
                )
            } else {
                String::new()
            };
            item(format!("condition `{text}` (C{}) of `{expr}`: {}{also}", c.index + 1, why_no_pair(r, c.index)))
        })
        .collect()
}

/// Why condition `i` has no independence pair in `r`.
pub fn why_no_pair(r: &DecisionMcdc, i: usize) -> &'static str {
    let Some(c) = r.conditions.get(i) else { return "no independence pair" };
    match (c.evaluated_true, c.evaluated_false) {
        (false, false) => "never evaluated",
        (false, true) => "never true",
        (true, false) => "never false",
        (true, true) if !r.outcomes[0] => "no independence pair (the decision is never false)",
        (true, true) if !r.outcomes[1] => "no independence pair (the decision is never true)",
        (true, true) => "no independence pair among the evaluations",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_parse_their_names() {
        for m in Measure::ALL {
            assert_eq!(Measure::parse(m.as_str()), Some(m));
        }
        assert_eq!(Measure::parse("MC/DC"), Some(Measure::Criterion(Criterion::Mcdc)));
        assert_eq!(Measure::parse("d/cc"), Some(Measure::Criterion(Criterion::Dcc)));
        assert_eq!(Measure::parse("mcdc-unique-cause"), Some(Measure::Mcdc(Variant::UniqueCause)));
        assert_eq!(Measure::parse("mcdc-"), None);
        assert_eq!(Measure::parse("lines"), None);
    }
}
