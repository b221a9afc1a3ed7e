//! A self-contained HTML coverage report: no external assets, inline CSS.
//!
//! [`render`] returns the pages as a map file name → contents (the caller writes
//! them, side by side): `index.html` — per file lines, branches, functions and
//! each MC/DC variant computed — and one page per file with its source, lines
//! coloured by execution, branch counts, and under each line the table of every
//! decision that starts there: its conditions, which values each took, the
//! independence pairs found per variant (with the tests that produced them) and
//! what is missing. With the totals of the criteria of 001 §VI
//! ([`Input::measures`]), the index starts with a summary of every measure and
//! shows each criterion per file. All text from the source, the file names and
//! the test names is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::lines::{FileCoverage, Ratio};
use crate::mcdc::{DecisionMcdc, DecisionReport, Variant};
use crate::report::{Measure, MeasureReport};

/// What the report shows.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The report's title.
    pub title: &'a str,
    /// Line, branch and function coverage per file.
    pub files: &'a BTreeMap<String, FileCoverage>,
    /// Source text per file (files without it are shown without source).
    pub sources: &'a BTreeMap<String, String>,
    /// MC/DC per decision.
    pub decisions: &'a [DecisionReport],
    /// Totals of the measures computed (may be empty).
    pub measures: &'a [MeasureReport],
}

/// How many tests are named per vector before "+N more".
const TESTS_SHOWN: usize = 3;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em}\
table{border-collapse:collapse;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#eee}td.num{text-align:right}\
.good{background:#c8efc8}.partial{background:#f6e7a6}.bad{background:#f4b9b9}\
table.src{border:none}table.src td{border:none;padding:0 6px;font-family:monospace;white-space:pre}\
table.src tr.hit td.code{background:#dff5df}table.src tr.miss td.code{background:#f9d6d6}\
table.src td.ln,table.src td.hits,table.src td.br{color:#666;text-align:right}\
table.src td.br.partial{background:#f6e7a6}table.src td.br.bad{background:#f4b9b9}\
table.src td.br.good{background:#c8efc8}\
tr.decision td{white-space:normal;font-family:sans-serif;padding:4px 6px 10px 3em}\
div.decision table td,div.decision table th{font-size:.9em}\
code{font-family:monospace}.missing{color:#a00}.note{color:#666}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

fn class(r: Ratio) -> &'static str {
    if r.total == 0 || r.hit == r.total {
        "good"
    } else if r.hit == 0 {
        "bad"
    } else {
        "partial"
    }
}

fn cell(r: Ratio) -> String {
    if r.total == 0 {
        return "<td class=\"num\">–</td>".to_string();
    }
    format!("<td class=\"num {}\">{:.1}% ({}/{})</td>", class(r), r.percent(), r.hit, r.total)
}

/// The page name of file number `i` with path `path`.
fn page_name(i: usize, path: &str) -> String {
    let s: String =
        path.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    format!("{i:03}-{s}.html")
}

fn variants(decisions: &[DecisionReport]) -> Vec<Variant> {
    Variant::ALL.into_iter().filter(|v| decisions.iter().any(|d| d.result(*v).is_some())).collect()
}

/// MC/DC of some decisions under one variant: independent conditions / conditions
/// (decisions where the variant could not be computed count their conditions as
/// not shown).
fn mcdc_ratio(ds: &[&DecisionReport], v: Variant) -> Ratio {
    let mut r = Ratio::default();
    for d in ds {
        r.total += d.conditions.len();
        r.hit += d.result(v).map(|m| m.independent).unwrap_or(0);
    }
    r
}

/// Renders the report: `index.html` and one page per file.
pub fn render(input: &Input<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let vs = variants(input.decisions);
    let mut by_file: BTreeMap<&str, Vec<&DecisionReport>> = BTreeMap::new();
    for d in input.decisions {
        by_file.entry(d.file.as_str()).or_default().push(d);
    }
    let mut paths: Vec<&str> = input.files.keys().map(String::as_str).collect();
    for p in by_file.keys() {
        if !input.files.contains_key(*p) {
            paths.push(p);
        }
    }
    let empty = FileCoverage::default();
    // index
    let criteria: Vec<&MeasureReport> =
        input.measures.iter().filter(|m| matches!(m.measure, Measure::Criterion(_))).collect();
    let mut b = String::new();
    let _ = writeln!(b, "<h1>{}</h1>", escape(input.title));
    if !input.measures.is_empty() {
        let _ = writeln!(b, "<h2>Summary</h2>\n<table class=\"summary\">\n<tr><th>Measure</th><th>Covered</th></tr>");
        for m in input.measures {
            let _ = writeln!(
                b,
                "<tr data-measure=\"{}\"><td>{}</td>{}</tr>",
                m.measure.as_str(),
                escape(&m.measure.title()),
                cell(m.total)
            );
        }
        let _ = writeln!(b, "</table>");
        let _ = writeln!(
            b,
            "<p class=\"note\">SC … MC/DC: the criteria of Kauffman et al. (001 §VI) on each test's set of \
             walked edges, as obligations met; MC/DC (variant): conditions whose independent effect on their \
             decision's outcome is shown by two evaluations.</p>"
        );
    }
    let _ = writeln!(b, "<h2>Files</h2>");
    let _ = write!(b, "<table class=\"files\">\n<tr><th>File</th><th>Lines</th><th>Branches</th><th>Functions</th>");
    for m in &criteria {
        let _ = write!(b, "<th>{}</th>", escape(&m.measure.title()));
    }
    for v in &vs {
        let _ = write!(b, "<th>MC/DC ({})</th>", escape(v.as_str()));
    }
    let _ = writeln!(b, "</tr>");
    let mut totals = (Ratio::default(), Ratio::default(), Ratio::default());
    let mut all_decisions: Vec<&DecisionReport> = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let fc = input.files.get(*p).unwrap_or(&empty);
        let lines = Ratio { hit: fc.lines_hit(), total: fc.lines.len() };
        let branches = Ratio { hit: fc.branches_hit(), total: fc.branches_total() };
        let functions = Ratio { hit: fc.functions_hit(), total: fc.functions_total() };
        for (t, r) in [(&mut totals.0, lines), (&mut totals.1, branches), (&mut totals.2, functions)] {
            t.hit += r.hit;
            t.total += r.total;
        }
        let ds = by_file.get(p).cloned().unwrap_or_default();
        all_decisions.extend(&ds);
        let _ = write!(
            b,
            "<tr><td><a href=\"{}\">{}</a></td>{}{}{}",
            escape(&page_name(i, p)),
            escape(p),
            cell(lines),
            cell(branches),
            cell(functions)
        );
        for m in &criteria {
            b.push_str(&cell(m.files.get(*p).copied().unwrap_or_default()));
        }
        for v in &vs {
            b.push_str(&cell(mcdc_ratio(&ds, *v)));
        }
        let _ = writeln!(b, "</tr>");
        out.insert(page_name(i, p), file_page(input, p, fc, &ds, &vs, &criteria));
    }
    let _ = write!(b, "<tr><th>Total</th>{}{}{}", cell(totals.0), cell(totals.1), cell(totals.2));
    for m in &criteria {
        b.push_str(&cell(m.total));
    }
    for v in &vs {
        b.push_str(&cell(mcdc_ratio(&all_decisions, *v)));
    }
    let _ = writeln!(b, "</tr>\n</table>");
    if !vs.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"note\">MC/DC: conditions whose independent effect on their decision's outcome is shown, \
             per variant: unique-cause (as llvm-cov: short-circuited conditions are don't cares), masking \
             (DO-178C: other conditions may change where masked), strict unique-cause (every other condition \
             evaluated identically).</p>"
        );
    }
    out.insert("index.html".to_string(), page(input.title, &b));
    out
}

fn file_page(
    input: &Input<'_>,
    path: &str,
    fc: &FileCoverage,
    ds: &[&DecisionReport],
    vs: &[Variant],
    criteria: &[&MeasureReport],
) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<p><a href=\"index.html\">{}</a></p>", escape(input.title));
    let _ = writeln!(b, "<h1>{}</h1>", escape(path));
    let lines = Ratio { hit: fc.lines_hit(), total: fc.lines.len() };
    let branches = Ratio { hit: fc.branches_hit(), total: fc.branches_total() };
    let functions = Ratio { hit: fc.functions_hit(), total: fc.functions_total() };
    let _ = write!(b, "<table>\n<tr><th>Lines</th><th>Branches</th><th>Functions</th>");
    for m in criteria {
        let _ = write!(b, "<th>{}</th>", escape(&m.measure.title()));
    }
    for v in vs {
        let _ = write!(b, "<th>MC/DC ({})</th>", escape(v.as_str()));
    }
    let _ = write!(b, "</tr>\n<tr>{}{}{}", cell(lines), cell(branches), cell(functions));
    for m in criteria {
        b.push_str(&cell(m.files.get(path).copied().unwrap_or_default()));
    }
    for v in vs {
        b.push_str(&cell(mcdc_ratio(ds, *v)));
    }
    let _ = writeln!(b, "</tr>\n</table>");
    if !fc.functions.is_empty() {
        let _ = writeln!(
            b,
            "<h2>Functions</h2>\n<table>\n<tr><th>Function</th><th>Line</th><th>Tests</th><th>Lines</th><th>Branches</th></tr>"
        );
        let mut fns: Vec<_> = fc.functions.iter().collect();
        fns.sort_by_key(|f| (f.line, f.name.clone()));
        for f in fns {
            let (l, br) = fc.function_stats(f);
            let _ = writeln!(
                b,
                "<tr><td><a href=\"#L{}\">{}</a></td><td class=\"num\">{}</td><td class=\"num {}\">{}</td>{}{}</tr>",
                f.line,
                escape(&f.name),
                f.line,
                if f.tests > 0 {
                    "good"
                } else if f.recorded {
                    "bad"
                } else {
                    ""
                },
                if f.recorded { f.tests.to_string() } else { "not recorded".to_string() },
                cell(l),
                cell(br)
            );
        }
        let _ = writeln!(b, "</table>");
    }
    let mut at_line: BTreeMap<u32, Vec<&DecisionReport>> = BTreeMap::new();
    for d in ds {
        at_line.entry(d.line).or_default().push(d);
    }
    let _ = writeln!(b, "<h2>Source</h2>");
    let source = input.sources.get(path);
    let text_lines: Vec<&str> = source.map(|s| s.lines().collect()).unwrap_or_default();
    if source.is_none() {
        let _ = writeln!(b, "<p class=\"note\">Source not available: only lines with coverage data are shown.</p>");
    }
    let mut numbers: Vec<u32> = (1..=text_lines.len() as u32).collect();
    if source.is_none() {
        let mut s: std::collections::BTreeSet<u32> = fc.lines.keys().copied().collect();
        s.extend(fc.branches.keys());
        s.extend(at_line.keys());
        numbers = s.into_iter().collect();
    } else {
        // data beyond the end of the text (a stale source) still shows
        let last = text_lines.len() as u32;
        let extra: std::collections::BTreeSet<u32> =
            fc.lines.keys().chain(fc.branches.keys()).chain(at_line.keys()).copied().filter(|&l| l > last).collect();
        numbers.extend(extra);
    }
    let _ = writeln!(b, "<table class=\"src\">");
    for n in numbers {
        let code = (n as usize).checked_sub(1).and_then(|i| text_lines.get(i)).copied().unwrap_or("");
        let (row, hits) = match fc.lines.get(&n) {
            Some(c) if c.tests > 0 => (" class=\"hit\"", c.tests.to_string()),
            Some(_) => (" class=\"miss\"", "0".to_string()),
            None => ("", String::new()),
        };
        let (bclass, btext, btitle) = match fc.branches.get(&n) {
            Some(bs) if !bs.is_empty() => {
                let r = Ratio { hit: bs.iter().filter(|x| x.tests > 0).count(), total: bs.len() };
                let title: Vec<String> =
                    bs.iter().map(|x| format!("decision {} {}: {} tests", x.block, x.label, x.tests)).collect();
                (format!(" {}", class(r)), format!("{}/{}", r.hit, r.total), title.join("; "))
            }
            _ => (String::new(), String::new(), String::new()),
        };
        let _ = writeln!(
            b,
            "<tr id=\"L{n}\"{row}><td class=\"ln\">{n}</td><td class=\"hits\">{hits}</td><td class=\"br{bclass}\" title=\"{}\">{btext}</td><td class=\"code\">{}</td></tr>",
            escape(&btitle),
            escape(code)
        );
        for d in at_line.get(&n).into_iter().flatten() {
            let _ = writeln!(b, "<tr class=\"decision\"><td colspan=\"4\">{}</td></tr>", decision_table(d, vs));
        }
    }
    let _ = writeln!(b, "</table>");
    page(&format!("{} — {}", input.title, path), &b)
}

fn tests(m: &DecisionMcdc, i: usize) -> String {
    let t = m.tests_of(i);
    let mut s: Vec<String> = t.iter().take(TESTS_SHOWN).map(|x| escape(x)).collect();
    if t.len() > TESTS_SHOWN {
        s.push(format!("+{} more", t.len() - TESTS_SHOWN));
    }
    s.join(", ")
}

fn decision_table(d: &DecisionReport, vs: &[Variant]) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<div class=\"decision\" data-line=\"{}\" data-conditions=\"{}\"><p>Decision in <code>{}</code>",
        d.line,
        d.conditions.len(),
        escape(&d.function)
    );
    if let Some(e) = &d.expression {
        let _ = write!(b, ": <code>{}</code>", escape(e));
    }
    let first = d.results.first();
    if let Some(m) = first {
        let mark = |x: bool| if x { "✓" } else { "<span class=\"missing\">✗</span>" };
        let _ = write!(b, " — outcome true {}, false {}", mark(m.outcomes[1]), mark(m.outcomes[0]));
    }
    let _ = writeln!(b, "</p>");
    if let Some(n) = &d.note {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(n));
    }
    let _ = write!(b, "<table><tr><th>#</th><th>Condition</th><th>True</th><th>False</th>");
    for v in vs {
        let _ = write!(b, "<th>{}</th>", escape(v.as_str()));
    }
    let _ = writeln!(b, "</tr>");
    for (i, c) in d.conditions.iter().enumerate() {
        let (t, f) = first
            .and_then(|m| m.conditions.get(i))
            .map(|c| (c.evaluated_true, c.evaluated_false))
            .unwrap_or((false, false));
        let mark = |x: bool| if x { "<td class=\"good\">✓</td>" } else { "<td class=\"bad\">✗</td>" };
        let _ =
            write!(b, "<tr><td class=\"num\">C{}</td><td><code>{}</code></td>{}{}", i + 1, escape(c), mark(t), mark(f));
        for v in vs {
            let Some(m) = d.result(*v) else {
                let _ = write!(b, "<td class=\"note\">not computed</td>");
                continue;
            };
            let Some(cm) = m.conditions.get(i) else {
                let _ = write!(b, "<td></td>");
                continue;
            };
            if let Some(p) = cm.pairs.first() {
                let _ = write!(
                    b,
                    "<td class=\"good\"><code>{}</code> ({}) / <code>{}</code> ({})",
                    escape(&m.vectors[p.when_true].vector.to_string()),
                    tests(m, p.when_true),
                    escape(&m.vectors[p.when_false].vector.to_string()),
                    tests(m, p.when_false)
                );
                if cm.pairs.len() > 1 {
                    let _ = write!(b, " <span class=\"note\">+{} more pairs</span>", cm.pairs.len() - 1);
                }
                let _ = write!(b, "</td>");
            } else {
                let why = crate::report::why_no_pair(m, i);
                let _ = write!(b, "<td class=\"bad\"><span class=\"missing\">missing: {why}</span></td>");
            }
        }
        let _ = writeln!(b, "</tr>");
    }
    let _ = writeln!(b, "</table>");
    if let Some(m) = first
        && !m.vectors.is_empty()
    {
        let _ = write!(b, "<p>Evaluations: ");
        let parts: Vec<String> = (0..m.vectors.len())
            .map(|i| {
                format!(
                    "<code>{}</code> ({}×: {})",
                    escape(&m.vectors[i].vector.to_string()),
                    m.vectors[i].evaluations,
                    tests(m, i)
                )
            })
            .collect();
        let _ = writeln!(b, "{}</p>", parts.join("; "));
    }
    b.push_str("</div>");
    b
}
