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
//!
//! Conditions are shown as written in the source when the caller found that
//! text ([`Input::written`]), with the preprocessed text on hover; otherwise as
//! preprocessed. Each page explains its colours and numbers (a legend; the
//! numbers count tests, as the store records per test whether code ran, and,
//! where a build counted executions (`--counts`), a Runs column says how many
//! times each line ran), the file table sorts by any column (buttons in its header), and a
//! file page moves to the next or previous line or decision with something
//! missing (`n` / `p`, or its buttons). The script for both is inline: the
//! report loads nothing.

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
    /// Per decision (same order as [`Input::decisions`]; shorter or empty:
    /// unknown), its conditions' texts as written in the source, when found.
    pub written: &'a [Option<Vec<String>>],
}

/// The paper the criteria come from (README's table of papers).
const PAPER_001: &str = "S. Kauffman, C. Moreno, S. Fischmeister, <cite>Annotating Control-Flow Graphs for \
                         Formalized Test Coverage Criteria</cite>";

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
table.src th{border:none;background:none;font-weight:normal;color:#555;font-size:.85em;text-align:right}\
table.src tr.hit td.code{background:#dff5df}table.src tr.miss td.code{background:#f9d6d6}\
table.src td.ln,table.src td.hits,table.src td.br{color:#555;text-align:right}\
table.src td.br.partial{background:#f6e7a6}table.src td.br.bad{background:#f4b9b9}\
table.src td.br.good{background:#c8efc8}table.src td.br.good,table.src td.br.partial,table.src td.br.bad{color:#222}\
tr.decision td{white-space:normal;font-family:sans-serif;padding:4px 6px 10px 3em}\
div.decision table td,div.decision table th{font-size:.9em}\
code{font-family:monospace}code.written{text-decoration:underline dotted}\
.missing{color:#8b0000}.note{color:#555}\
:focus{outline:3px solid #1a5fb4;outline-offset:1px}\
nav.uncovered{position:sticky;top:0;background:#fff;padding:.3em 0;border-bottom:1px solid #ccc}\
button{font:inherit}th button.sort{border:none;background:none;padding:0;font-weight:bold;cursor:pointer;color:#222}\
th button.sort::after{content:' \\2195';color:#555}\
th[aria-sort=ascending] button.sort::after{content:' \\2191'}th[aria-sort=descending] button.sort::after{content:' \\2193'}\
dl.legend{display:grid;grid-template-columns:max-content auto;gap:2px 10px;font-size:.9em}\
dl.legend dt{font-family:monospace;padding:0 6px}dl.legend dd{margin:0}";

/// Sorting of the file table (index) by the column of the clicked header button.
const SORT_JS: &str = "(function(){var t=document.querySelector('table.files');if(!t)return;\
var b=t.tBodies[0];var hs=t.tHead.rows[0].cells;\
Array.prototype.forEach.call(t.querySelectorAll('button.sort'),function(btn){btn.addEventListener('click',function(){\
var th=btn.parentNode,col=th.cellIndex,asc=th.getAttribute('aria-sort')!=='ascending';\
Array.prototype.forEach.call(hs,function(h){h.removeAttribute('aria-sort');});\
th.setAttribute('aria-sort',asc?'ascending':'descending');\
var key=function(r){var c=r.cells[col];var v=c.getAttribute('data-sort');return v===null?c.textContent:+v;};\
var rows=Array.prototype.slice.call(b.rows);\
rows.sort(function(x,y){var a=key(x),c=key(y);var d=(typeof a==='number')?a-c:(a<c?-1:a>c?1:0);return asc?d:-d;});\
rows.forEach(function(r){b.appendChild(r);});});});})();";

/// Moving to the next / previous place with something missing (file pages).
const NAV_JS: &str = "(function(){var ts=document.querySelectorAll('[data-uncovered]');var cur=-1;\
var st=document.getElementById('nav-status');\
function go(d){if(!ts.length)return;cur=(cur+d+ts.length)%ts.length;var e=ts[cur];\
e.focus();e.scrollIntoView({block:'center'});\
if(st)st.textContent=(cur+1)+' of '+ts.length+': '+e.getAttribute('data-uncovered');}\
var n=document.getElementById('next-uncovered'),p=document.getElementById('prev-uncovered');\
if(n)n.addEventListener('click',function(){go(1);});if(p)p.addEventListener('click',function(){go(-1);});\
document.addEventListener('keydown',function(ev){if(ev.ctrlKey||ev.metaKey||ev.altKey)return;\
var tg=ev.target&&ev.target.tagName;if(tg==='INPUT'||tg==='TEXTAREA'||tg==='SELECT')return;\
if(ev.key==='n'){go(1);ev.preventDefault();}else if(ev.key==='p'){go(-1);ev.preventDefault();}});})();";

fn page(title: &str, body: &str, script: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n<script>{script}</script>\n</body>\n</html>\n",
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
        return "<td class=\"num\" data-sort=\"101\">–</td>".to_string();
    }
    format!(
        "<td class=\"num {}\" data-sort=\"{:.3}\">{:.1}% ({}/{})</td>",
        class(r),
        r.percent(),
        r.percent(),
        r.hit,
        r.total
    )
}

/// A header cell of the file table: a button that sorts by its column.
fn sort_th(label: &str) -> String {
    format!("<th scope=\"col\"><button type=\"button\" class=\"sort\">{}</button></th>", escape(label))
}

/// What the abbreviations of the measures stand for.
fn glossary(b: &mut String, criteria: bool, mcdc: bool) {
    let _ = writeln!(b, "<h2>Measures</h2>\n<dl class=\"legend\">");
    let _ = writeln!(
        b,
        "<dt>Lines</dt><dd>lines with code that at least one test ran (hit / lines with code)</dd>\n\
         <dt>Branches</dt><dd>outcomes of conditions and <code>switch</code> targets that at least one test took</dd>\n\
         <dt>Functions</dt><dd>functions that at least one test called</dd>"
    );
    if criteria {
        let _ = writeln!(
            b,
            "<dt>SC</dt><dd>statement coverage</dd>\n<dt>DC</dt><dd>decision coverage: each decision true and false</dd>\n\
             <dt>CC</dt><dd>condition coverage: each condition true and false</dd>\n\
             <dt>D/CC</dt><dd>decision/condition coverage: DC and CC together</dd>\n\
             <dt>MCC</dt><dd>multiple condition coverage: every combination of condition values</dd>\n\
             <dt>FPC</dt><dd>full predicate coverage: each condition true and false with the decision's outcome equal to it</dd>\n\
             <dt>MC/DC</dt><dd>modified condition/decision coverage, on runs as sets of edges</dd>"
        );
    }
    if mcdc {
        let _ = writeln!(
            b,
            "<dt>MC/DC (unique-cause)</dt><dd>per decision evaluation, as llvm-cov: conditions not evaluated \
             (short-circuited) are don't cares</dd>\n\
             <dt>MC/DC (masking)</dt><dd>per decision evaluation, DO-178C masking: other conditions may change \
             where their effect is masked</dd>\n\
             <dt>MC/DC (strict-unique-cause)</dt><dd>per decision evaluation: every other condition evaluated \
             identically</dd>"
        );
    }
    let _ = writeln!(b, "</dl>");
    if criteria {
        let _ = writeln!(
            b,
            "<p class=\"note\">SC … MC/DC are the criteria of {PAPER_001}, section VI, on each test's set of \
             walked edges, counted as obligations met. The decisions are found from the control-flow graph as \
             that paper's section V describes.</p>"
        );
    }
    let _ = writeln!(
        b,
        "<p class=\"note\">Colours: green all covered, yellow partly, red nothing. Numbers count \
         <strong>tests</strong>: the store records for each test whether code ran, not how many times.</p>"
    );
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
    let mut by_file: BTreeMap<&str, Vec<Shown<'_>>> = BTreeMap::new();
    for (i, d) in input.decisions.iter().enumerate() {
        let written = input.written.get(i).and_then(|w| w.as_deref()).filter(|w| w.len() == d.conditions.len());
        by_file.entry(d.file.as_str()).or_default().push(Shown { d, written });
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
        let _ = writeln!(
            b,
            "<h2>Summary</h2>\n<table class=\"summary\">\n<tr><th scope=\"col\">Measure</th><th scope=\"col\">Covered</th></tr>"
        );
        for m in input.measures {
            let _ = writeln!(
                b,
                "<tr data-measure=\"{}\"><th scope=\"row\">{}</th>{}</tr>",
                m.measure.as_str(),
                escape(&m.measure.title()),
                cell(m.total)
            );
        }
        let _ = writeln!(b, "</table>");
    }
    let _ = writeln!(b, "<h2>Files</h2>");
    let _ = write!(
        b,
        "<table class=\"files\">\n<caption class=\"note\">Sort by a column with the buttons in its header.</caption>\n<thead><tr>"
    );
    for h in ["File", "Lines", "Branches", "Functions"] {
        b.push_str(&sort_th(h));
    }
    for m in &criteria {
        b.push_str(&sort_th(&m.measure.title()));
    }
    for v in &vs {
        b.push_str(&sort_th(&format!("MC/DC ({})", v.as_str())));
    }
    let _ = writeln!(b, "</tr></thead>\n<tbody>");
    let mut totals = (Ratio::default(), Ratio::default(), Ratio::default());
    let mut all_decisions: Vec<&DecisionReport> = Vec::new();
    let no_decisions = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let fc = input.files.get(*p).unwrap_or(&empty);
        let lines = Ratio { hit: fc.lines_hit(), total: fc.lines.len() };
        let branches = Ratio { hit: fc.branches_hit(), total: fc.branches_total() };
        let functions = Ratio { hit: fc.functions_hit(), total: fc.functions_total() };
        for (t, r) in [(&mut totals.0, lines), (&mut totals.1, branches), (&mut totals.2, functions)] {
            t.hit += r.hit;
            t.total += r.total;
        }
        let shown = by_file.get(p).unwrap_or(&no_decisions);
        let ds: Vec<&DecisionReport> = shown.iter().map(|s| s.d).collect();
        all_decisions.extend(&ds);
        let _ = write!(
            b,
            "<tr><th scope=\"row\"><a href=\"{}\">{}</a></th>{}{}{}",
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
        out.insert(page_name(i, p), file_page(input, p, fc, shown, &vs, &criteria));
    }
    let _ = write!(
        b,
        "</tbody>\n<tfoot><tr><th scope=\"row\">Total</th>{}{}{}",
        cell(totals.0),
        cell(totals.1),
        cell(totals.2)
    );
    for m in &criteria {
        b.push_str(&cell(m.total));
    }
    for v in &vs {
        b.push_str(&cell(mcdc_ratio(&all_decisions, *v)));
    }
    let _ = writeln!(b, "</tr></tfoot>\n</table>");
    glossary(&mut b, !criteria.is_empty(), !vs.is_empty());
    out.insert("index.html".to_string(), page(input.title, &b, SORT_JS));
    out
}

/// A decision and, when found, its conditions as written in the source.
#[derive(Clone, Copy)]
struct Shown<'a> {
    d: &'a DecisionReport,
    written: Option<&'a [String]>,
}

impl Shown<'_> {
    /// Whether the decision lacks something: an outcome, a condition value, or
    /// an independence pair in some variant.
    fn gaps(&self) -> bool {
        self.d.results.iter().any(|m| {
            !m.outcomes[0]
                || !m.outcomes[1]
                || m.conditions.iter().any(|c| !c.evaluated_true || !c.evaluated_false || c.pairs.is_empty())
        }) || self.d.results.is_empty()
    }
}

fn file_page(
    input: &Input<'_>,
    path: &str,
    fc: &FileCoverage,
    shown: &[Shown<'_>],
    vs: &[Variant],
    criteria: &[&MeasureReport],
) -> String {
    let ds: Vec<&DecisionReport> = shown.iter().map(|s| s.d).collect();
    let ds = ds.as_slice();
    let mut b = String::new();
    let _ = writeln!(b, "<nav aria-label=\"report\"><a href=\"index.html\">{}</a></nav>", escape(input.title));
    let _ = writeln!(b, "<h1>{}</h1>", escape(path));
    let lines = Ratio { hit: fc.lines_hit(), total: fc.lines.len() };
    let branches = Ratio { hit: fc.branches_hit(), total: fc.branches_total() };
    let functions = Ratio { hit: fc.functions_hit(), total: fc.functions_total() };
    let _ = write!(
        b,
        "<table>\n<tr><th scope=\"col\">Lines</th><th scope=\"col\">Branches</th><th scope=\"col\">Functions</th>"
    );
    for m in criteria {
        let _ = write!(b, "<th scope=\"col\">{}</th>", escape(&m.measure.title()));
    }
    for v in vs {
        let _ = write!(b, "<th scope=\"col\">MC/DC ({})</th>", escape(v.as_str()));
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
            "<h2>Functions</h2>\n<table>\n<tr><th scope=\"col\">Function</th><th scope=\"col\">Line</th><th scope=\"col\">Tests that called it</th><th scope=\"col\">Lines</th><th scope=\"col\">Branches</th></tr>"
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
    let mut at_line: BTreeMap<u32, Vec<Shown<'_>>> = BTreeMap::new();
    for s in shown {
        at_line.entry(s.d.line).or_default().push(*s);
    }
    let _ = writeln!(b, "<h2 id=\"source\">Source</h2>");
    let missed_lines = fc.lines.values().filter(|c| c.tests == 0).count();
    let gap_decisions = shown.iter().filter(|s| s.gaps()).count();
    let _ = writeln!(
        b,
        "<nav class=\"uncovered\" aria-label=\"uncovered code\"><button type=\"button\" id=\"prev-uncovered\">\
         ◀ Previous uncovered</button> <button type=\"button\" id=\"next-uncovered\">Next uncovered ▶</button> \
         <span class=\"note\">(keys <kbd>p</kbd> / <kbd>n</kbd>) {} not run, {} with branches not all \
         taken, {} with something missing</span> <span id=\"nav-status\" class=\"note\" \
         aria-live=\"polite\"></span></nav>",
        plural(missed_lines, "line", "lines"),
        plural(fc.branches.values().filter(|bs| bs.iter().any(|x| x.tests == 0)).count(), "line", "lines"),
        plural(gap_decisions, "decision", "decisions"),
    );
    // execution counts: only where a build of the file counted (`--counts`)
    let counted = fc.lines.values().any(|c| c.executions.is_some());
    let tests_legend = if counted {
        "<dt>Tests</dt><dd>the number of tests that ran the line</dd>\n\
         <dt>Runs</dt><dd>how many times the line ran, summed over the tests (its build counted executions: \
         <code>retest build --counts</code>): once each time control entered the line from elsewhere, as gcov \
         counts; blank where no counting build holds the line</dd>\n"
    } else {
        "<dt>Tests</dt><dd>the number of tests that ran the line (not how many times it ran: the store \
         records for each test whether a line ran)</dd>\n"
    };
    let _ = writeln!(
        b,
        "<dl class=\"legend\" aria-label=\"legend\">\n\
         {tests_legend}\
         <dt>Branches</dt><dd>outcomes taken by some test / outcomes of the line (hover for each outcome's tests)</dd>\n\
         <dt style=\"background:#dff5df\">line</dt><dd>run by at least one test</dd>\n\
         <dt style=\"background:#f9d6d6\">line</dt><dd>code no test ran</dd>\n\
         <dt class=\"good\">2/2</dt><dd>every branch outcome taken</dd>\n\
         <dt class=\"partial\">1/2</dt><dd>some taken</dd>\n\
         <dt class=\"bad\">0/2</dt><dd>none taken</dd>\n\
         <dt><code class=\"written\" title=\"after macro expansion: c == 'c'\">c == LITCHAR</code></dt><dd>a condition as written in the source; hover for \
         its text after macro expansion</dd>\n\
         <dt>T F ✓ ✗</dt><dd>decision tables: true, false; seen, never seen</dd>\n</dl>"
    );
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
    let _ = writeln!(
        b,
        "<table class=\"src\">\n<thead><tr><th scope=\"col\">Line</th><th scope=\"col\">Tests</th>{}\
         <th scope=\"col\">Branches</th><th scope=\"col\" style=\"text-align:left\">Source</th></tr></thead>\n<tbody>",
        if counted { "<th scope=\"col\">Runs</th>" } else { "" }
    );
    for n in numbers {
        let code = (n as usize).checked_sub(1).and_then(|i| text_lines.get(i)).copied().unwrap_or("");
        let (row, hits) = match fc.lines.get(&n) {
            Some(c) if c.tests > 0 => (" class=\"hit\"", c.tests.to_string()),
            Some(_) => (" class=\"miss\"", "0".to_string()),
            None => ("", String::new()),
        };
        let runs = match (counted, fc.lines.get(&n).and_then(|c| c.executions)) {
            (false, _) => String::new(),
            (true, Some(x)) => format!("<td class=\"hits\">{x}</td>"),
            (true, None) => "<td class=\"hits\"></td>".to_string(),
        };
        let mut missing: Vec<&str> = Vec::new();
        if fc.lines.get(&n).is_some_and(|c| c.tests == 0) {
            missing.push("line not run");
        }
        let (bclass, btext, btitle) = match fc.branches.get(&n) {
            Some(bs) if !bs.is_empty() => {
                let r = Ratio { hit: bs.iter().filter(|x| x.tests > 0).count(), total: bs.len() };
                if r.hit < r.total {
                    missing.push("branch outcomes not taken");
                }
                let title: Vec<String> =
                    bs.iter().map(|x| format!("decision {} {}: {} tests", x.block, x.label, x.tests)).collect();
                (format!(" {}", class(r)), format!("{}/{}", r.hit, r.total), title.join("; "))
            }
            _ => (String::new(), String::new(), String::new()),
        };
        let nav = if missing.is_empty() {
            String::new()
        } else {
            format!(" tabindex=\"-1\" data-uncovered=\"line {n}: {}\"", missing.join(", "))
        };
        let _ = writeln!(
            b,
            "<tr id=\"L{n}\"{row}{nav}><td class=\"ln\">{n}</td><td class=\"hits\">{hits}</td>{runs}<td class=\"br{bclass}\" title=\"{}\">{btext}</td><td class=\"code\">{}</td></tr>",
            escape(&btitle),
            escape(code)
        );
        for s in at_line.get(&n).into_iter().flatten() {
            let nav = if s.gaps() {
                format!(" tabindex=\"-1\" data-uncovered=\"decision on line {n}\"")
            } else {
                String::new()
            };
            let _ = writeln!(
                b,
                "<tr class=\"decision\"{nav}><td colspan=\"{}\">{}</td></tr>",
                if counted { 5 } else { 4 },
                decision_table(s.d, s.written, vs)
            );
        }
    }
    let _ = writeln!(b, "</tbody>\n</table>");
    page(&format!("{} — {}", input.title, path), &b, NAV_JS)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A condition (or expression) as shown: the source text with the preprocessed
/// one on hover when they differ.
fn shown_code(written: Option<&str>, expanded: &str) -> String {
    match written {
        Some(w) if w.split_whitespace().collect::<String>() != expanded.split_whitespace().collect::<String>() => {
            format!(
                "<code class=\"written\" title=\"after macro expansion: {}\">{}</code>",
                escape(expanded),
                escape(w)
            )
        }
        _ => format!("<code>{}</code>", escape(expanded)),
    }
}

fn tests(m: &DecisionMcdc, i: usize) -> String {
    let t = m.tests_of(i);
    let mut s: Vec<String> = t.iter().take(TESTS_SHOWN).map(|x| escape(x)).collect();
    if t.len() > TESTS_SHOWN {
        s.push(format!("+{} more", t.len() - TESTS_SHOWN));
    }
    s.join(", ")
}

fn decision_table(d: &DecisionReport, written: Option<&[String]>, vs: &[Variant]) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<div class=\"decision\" data-line=\"{}\" data-conditions=\"{}\"><p>Decision in <code>{}</code>",
        d.line,
        d.conditions.len(),
        escape(&d.function)
    );
    if let Some(e) = &d.expression {
        let w = written.zip(d.structure.as_ref()).map(|(w, s)| s.render(w));
        let _ = write!(b, ": {}", shown_code(w.as_deref(), e));
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
    let _ = write!(
        b,
        "<table><tr><th scope=\"col\">#</th><th scope=\"col\">Condition</th><th scope=\"col\">True</th><th scope=\"col\">False</th>"
    );
    for v in vs {
        let _ = write!(b, "<th scope=\"col\">{}</th>", escape(v.as_str()));
    }
    let _ = writeln!(b, "</tr>");
    for (i, c) in d.conditions.iter().enumerate() {
        let (t, f) = first
            .and_then(|m| m.conditions.get(i))
            .map(|c| (c.evaluated_true, c.evaluated_false))
            .unwrap_or((false, false));
        let mark = |x: bool| if x { "<td class=\"good\">✓</td>" } else { "<td class=\"bad\">✗</td>" };
        let w = written.and_then(|w| w.get(i)).map(String::as_str);
        let _ = write!(b, "<tr><td class=\"num\">C{}</td><td>{}</td>{}{}", i + 1, shown_code(w, c), mark(t), mark(f));
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
                let n = m.tests_of(i).len();
                format!(
                    "<code>{}</code> ({} {}: {})",
                    escape(&m.vectors[i].vector.to_string()),
                    n,
                    if n == 1 { "test" } else { "tests" },
                    tests(m, i)
                )
            })
            .collect();
        let _ = writeln!(b, "{}</p>", parts.join("; "));
    }
    b.push_str("</div>");
    b
}
