//! Cobertura and HTML reports of a small input (golden snapshots).

use crate::common;

use std::collections::BTreeMap;

use common::cfg;
use retest_cover::cfdg::Cfdg;
use retest_cover::criteria::Criterion;
use retest_cover::lines::{Branch, FileCoverage, Function, LineCount, Ratio};
use retest_cover::mcdc::{self, CondVector, Evaluation, Variant};
use retest_cover::report::{Measure, MeasureReport};
use retest_cover::{cobertura, html};

/// `src/a&b.c`: Listing 1 of 001 with a `<` in it, run by three tests.
fn files() -> BTreeMap<String, FileCoverage> {
    let mut fc = FileCoverage::default();
    for (l, t) in [(2, 3), (3, 3), (4, 1), (6, 3)] {
        fc.lines.insert(l, LineCount { tests: t, executions: None });
    }
    fc.lines.insert(9, LineCount { tests: 0, executions: None });
    fc.branches.insert(
        3,
        vec![
            Branch { block: 0, label: "T".into(), tests: 2 },
            Branch { block: 0, label: "F".into(), tests: 1 },
            Branch { block: 1, label: "T".into(), tests: 1 },
            Branch { block: 1, label: "F".into(), tests: 0 },
        ],
    );
    fc.functions.push(Function {
        name: "f".into(),
        line: 1,
        tests: 3,
        lines: vec![2, 3, 4, 6],
        branches: vec![(3, 0, "T".into()), (3, 0, "F".into()), (3, 1, "T".into()), (3, 1, "F".into())],
        recorded: true,
    });
    fc.functions.push(Function {
        name: "unused".into(),
        line: 8,
        tests: 0,
        lines: vec![9],
        branches: vec![],
        recorded: true,
    });
    let mut other = FileCoverage::default();
    other.lines.insert(1, LineCount { tests: 0, executions: None });
    BTreeMap::from([("src/a&b.c".to_string(), fc), ("util.c".to_string(), other)])
}

const SOURCE: &str = "int f(int a, int b) {\n  int x = 0;\n  if (a && b < 2) {\n    x = 1;\n  }\n  return x;\n}\nvoid unused(void) {\n  puts(\"<&>\");\n}\n";

fn decisions() -> Vec<mcdc::DecisionReport> {
    let g = cfg("
        entry -> x0
        x0 -> a
        a -T-> b
        a -F-> ret
        b -T-> x1
        b -F-> ret
        x1 -> ret
        ret -> exit
    ");
    // name the conditions as the source does
    let c = g.cfg.map_nodes(|id, n| {
        let mut n = n.clone();
        if id == g.n("b") {
            n.text = "b < 2".into();
        }
        n
    });
    let d = Cfdg::build(&c);
    let ev = |t: &str, v: &str, o: bool| Evaluation { test: t.into(), vector: CondVector::parse(v, o).unwrap() };
    let evals = [ev("t<1>", "TT", true), ev("t2", "F-", false), ev("t3", "F-", false)];
    vec![mcdc::decision_report(&c, &d.decisions[0], &evals, &Variant::ALL, ("src/a&b.c", 3, "f"))]
}

#[test]
fn cobertura_golden() {
    let mut out = Vec::new();
    let opts = cobertura::Options { source_root: "/project", timestamp: 1_700_000_000_000, version: "retest 0.1.0" };
    cobertura::write(&files(), &opts, &mut out).unwrap();
    let xml = String::from_utf8(out).unwrap();
    assert!(xml.contains(r#"<line number="3" hits="3" branch="true" condition-coverage="75% (3/4)"/>"#));
    assert!(xml.contains(r#"filename="src/a&amp;b.c""#));
    insta::assert_snapshot!("cobertura", xml);
}

#[test]
fn html_golden() {
    let files = files();
    let sources = BTreeMap::from([("src/a&b.c".to_string(), SOURCE.to_string())]);
    let ds = decisions();
    assert_eq!(ds[0].expression.as_deref(), Some("a && b < 2"));
    let dc = Ratio { hit: 7, total: 9 };
    let unique = Ratio { hit: 1, total: 2 };
    let measures = [
        MeasureReport {
            measure: Measure::Criterion(Criterion::Dc),
            total: dc,
            files: BTreeMap::from([("src/a&b.c".to_string(), dc)]),
        },
        MeasureReport {
            measure: Measure::Mcdc(Variant::UniqueCause),
            total: unique,
            files: BTreeMap::from([("src/a&b.c".to_string(), unique)]),
        },
    ];
    let pages = html::render(&html::Input {
        title: "retest <coverage>",
        files: &files,
        sources: &sources,
        decisions: &ds,
        measures: &measures,
        written: &[Some(vec!["a".to_string(), "b < LIMIT".to_string()])],
    });
    let names: Vec<&str> = pages.keys().map(String::as_str).collect();
    assert_eq!(names, ["000-src_a_b.c.html", "001-util.c.html", "index.html"]);
    let page = &pages["000-src_a_b.c.html"];
    // source text and test names are escaped
    assert!(page.contains("puts(&quot;&lt;&amp;&gt;&quot;);"));
    assert!(page.contains("t&lt;1&gt;"));
    assert!(!page.contains("<&>"));
    // a is shown (TT vs F-), b is never false
    assert!(page.contains("missing: never false"));
    assert!(!page.contains("src=") && !page.contains("href=\"http"), "no external assets");
    // the summary lists the measures, the file table each criterion of §VI per file
    let index = &pages["index.html"];
    assert!(index.contains(
        "<tr data-measure=\"dc\"><th scope=\"row\">DC</th><td class=\"num partial\" data-sort=\"77.778\">77.8% (7/9)</td></tr>"
    ));
    assert!(index.contains("<tr data-measure=\"mcdc-unique\"><th scope=\"row\">MC/DC (unique-cause)</th>"));
    assert!(index.contains("<button type=\"button\" class=\"sort\">DC</button>"));
    // conditions as written, the preprocessed text on hover; one the same both ways shown once
    assert!(page.contains("<code class=\"written\" title=\"after macro expansion: b &lt; 2\">b &lt; LIMIT</code>"));
    assert!(page.contains(
        "<code class=\"written\" title=\"after macro expansion: a &amp;&amp; b &lt; 2\">a &amp;&amp; b &lt; LIMIT</code>"
    ));
    assert!(page.contains("<td><code>a</code></td>"));
    for (name, text) in &pages {
        insta::assert_snapshot!(format!("html_{name}"), text);
    }
}
