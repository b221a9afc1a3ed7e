//! `retest coverage --criteria`, `--fail-under`, `--tests`, the Cobertura and
//! HTML formats, and `retest cfdg`'s errors, on the corpus of `common/corpus.rs`.

use crate::common;
use crate::common::corpus;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;
use corpus::Corpus;

fn project() -> (tempfile::TempDir, Corpus) {
    let c = corpus::corpus();
    let d = tempfile::tempdir().unwrap();
    retest(d.path(), &["init"], 0);
    c.write(d.path());
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run", "-j2"], 0);
    (d, c)
}

fn decision<'a>(report: &'a serde_json::Value, c: &Corpus, f: &str) -> &'a serde_json::Value {
    let line = c.functions.iter().find(|x| x.name == f).unwrap().line;
    report["decisions"].as_array().unwrap().iter().find(|d| d["function"] == f && d["line"] == line).unwrap()
}

#[test]
fn criteria_gates_subsets_and_formats() {
    let (d, c) = project();
    let dir = d.path();

    // DC misses exactly the decisions the tests never make true or never make false
    let report = json(&retest(dir, &["coverage", "--format", "json", "--criteria", "dc,mcdc-masking"], 0));
    let one_sided: BTreeSet<String> = c
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name.starts_with('d'))
        .filter(|(k, f)| {
            let outcomes: BTreeSet<bool> =
                c.tests.iter().filter(|t| t.function == *k).map(|t| f.expr.run(&t.vars()).1).collect();
            outcomes.len() < 2
        })
        .map(|(_, f)| f.name.clone())
        .chain(["unused".to_string()])
        .collect();
    assert!(one_sided.contains("d4") && one_sided.contains("d22"), "{one_sided:?}");
    let dc_decisions: BTreeSet<String> = report["criteria"]["missing"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["measure"] == "dc" && m["what"].as_str().unwrap().starts_with("decision "))
        .map(|m| m["function"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(dc_decisions.into_iter().filter(|f| f != "main" && f != "loop3").collect::<BTreeSet<_>>(), {
        let mut s = one_sided.clone();
        s.remove("unused"); // never called: one item for the whole function
        s
    });
    let unused: Vec<&serde_json::Value> =
        report["criteria"]["missing"].as_array().unwrap().iter().filter(|m| m["function"] == "unused").collect();
    assert!(unused.iter().any(|m| m["measure"] == "dc" && m["what"].as_str().unwrap().contains("never called")));
    // the per-evaluation total counts every condition of every decision
    let masking = report["criteria"]["measures"].as_array().unwrap().iter().find(|m| m["measure"] == "mcdc-masking");
    let conditions: usize = c.functions.iter().map(|f| f.conditions()).sum::<usize>() + 2; // + loop guard, main's loop
    assert_eq!(masking.unwrap()["total"].as_u64().unwrap() as usize, conditions);

    // --tests: only these runs count
    let sub =
        json(&retest(dir, &["coverage", "--format", "json", "--criteria", "mcdc-unique", "--tests", "d3-00,d3-11"], 0));
    assert_eq!(sub["tests"], 2);
    let d3 = decision(&sub, &c, "d3");
    let vectors: BTreeSet<String> = d3["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{}={}", v["conditions"].as_str().unwrap(), v["outcome"]))
        .collect();
    assert_eq!(vectors, BTreeSet::from(["F-=false".to_string(), "TT=true".to_string()]));
    assert_eq!(d3["unique_cause"]["independent"], 1, "a is shown, b is not: {d3}");
    assert!(decision(&sub, &c, "d8")["vectors"].as_array().unwrap().is_empty());

    // the text report: totals and what is missing, by file:line
    let text = stdout(&retest(dir, &["coverage", "--criteria", "mcdc-masking", "--tests", "d3-00,d3-11"], 0));
    let d3_line = c.functions.iter().find(|f| f.name == "d3").unwrap().line;
    assert!(text.contains("MC/DC (masking)"), "{text}");
    assert!(
        text.contains(&format!("corpus.c:{d3_line} d3 — MC/DC (masking): condition `b` (C2) of `a && b`: never false")),
        "{text}"
    );
    insta::assert_snapshot!("text_two_tests", &text[text.find("\ncriteria").unwrap()..]);

    // gates: exit 3 and one line naming what is under
    let out = retest(dir, &["coverage", "--fail-under", "mcdc-masking=100,lines=10"], 4);
    let err = stderr(&out);
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap();
    assert!(line.contains("MC/DC (masking)") && line.contains("< 100%") && !line.contains("lines"), "{err}");
    retest(dir, &["coverage", "--format", "json", "--fail-under", "mcdc-masking=10,branches=50"], 0);
    let e = stderr(&retest(dir, &["coverage", "--fail-under", "mcdc=eighty"], 2));
    assert!(e.contains("CRITERION=PCT"), "{e}");
    let e = stderr(&retest(dir, &["coverage", "--criteria", "mc/dc,bogus"], 2));
    assert!(e.contains("unknown criterion `bogus`"), "{e}");
    retest(dir, &["coverage", "--format", "matrix", "--criteria", "sc"], 2);
    let e = stderr(&retest(dir, &["coverage", "--format", "html"], 2));
    assert!(e.contains("-o DIR"), "{e}");

    // Cobertura: totals as in the JSON report
    let xml = stdout(&retest(dir, &["coverage", "--format", "cobertura"], 0));
    let lines = &report["totals"]["statements"];
    let rate = lines["hit"].as_f64().unwrap() / lines["total"].as_f64().unwrap();
    let want = format!("line-rate=\"{}\"", format!("{rate:.4}").trim_end_matches('0').trim_end_matches('.'));
    assert!(xml.starts_with("<?xml") && xml.contains(&want), "{want}:\n{}", &xml[..400.min(xml.len())]);
    assert_eq!(xml.matches("<class ").count(), 1);
    assert!(xml.contains(r#"filename="corpus.c""#));
    assert!(xml.contains(&format!("<source>{}</source>", std::fs::canonicalize(dir).unwrap().display())));

    // HTML into a directory
    retest(dir, &["coverage", "--format", "html", "-o", "report", "--criteria", "mcdc-unique"], 0);
    let index = std::fs::read_to_string(dir.join("report/index.html")).unwrap();
    assert!(index.contains("MC/DC (unique-cause)"));
    assert!(!index.contains("data-measure=\"sc\""), "only the criteria asked for");
}

#[test]
fn cfdg_errors_are_one_line() {
    let d = tempfile::tempdir().unwrap();
    let dir: &Path = d.path();
    let e = stderr(&retest(dir, &["cfdg", "missing.dot"], 5));
    assert!(e.starts_with("error: missing.dot:") && e.lines().count() == 1, "{e}");
    std::fs::write(dir.join("bad.dot"), "digraph {").unwrap();
    let e = stderr(&retest(dir, &["cfdg", "bad.dot"], 5));
    assert!(e.contains("bad.dot: not a DOT file") && e.contains(" — "), "{e}");
    std::fs::write(dir.join("g.dot"), "digraph g { a -> b [label=T]; a -> c [label=F]; }").unwrap();
    retest(dir, &["cfdg", "g.dot", "bad.dot"], 2);
    let v = json(&retest(dir, &["cfdg", "--format", "json", "g.dot"], 0));
    assert_eq!(v["dialect"], "generic");
    assert_eq!(v["functions"][0]["decisions"].as_array().unwrap().len(), 1);
}

/// A decision evaluated for a value whose last condition is negated: shown as
/// written, with its outcomes the right way round (not as `!a || b` with true
/// and false swapped).
#[test]
fn a_negated_last_condition_keeps_its_expression_and_outcomes() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("neg.c"),
        "#include <stdio.h>
#include <stdlib.h>
int f(int a, int b)
{
    int r = a && !(b);
    return r;
}
int g(int a, int b, int x)
{
    return (a && !b) ? x + 1 : x - 1;
}
int main(int argc, char **argv)
{
    int a = atoi(argv[1]), b = atoi(argv[2]);
    printf(\"%d %d\\n\", f(a, b), g(a, b, 5));
    return 0;
}
",
    )
    .unwrap();
    make_project(dir, "neg: neg.c\n\t$(CC) -O0 -o neg neg.c\n", &[("true", "./neg 1 0"), ("false", "./neg 1 1")]);
    retest(dir, &["run"], 0);
    for (test, value) in [("true", true), ("false", false)] {
        let v = json(&retest(dir, &["coverage", "--format", "json", "--criteria", "mcdc-unique", "--tests", test], 0));
        for (function, line) in [("f", 5), ("g", 10)] {
            let dec = v["decisions"].as_array().unwrap().iter().find(|x| x["function"] == function).unwrap();
            assert_eq!((dec["line"].as_u64(), dec["expression"].as_str()), (Some(line), Some("a && !b")), "{dec}");
            assert_eq!(dec["outcomes"]["true"], value, "{test} makes `a && !b` {value} in {function}: {dec}");
            assert_eq!(dec["outcomes"]["false"], !value, "{test} in {function}: {dec}");
        }
    }
    let cfdg = stdout(&retest(dir, &["cfg", "neg.c", "--function", "f", "--cfdg"], 0));
    assert!(cfdg.contains("`a && !b`"), "{cfdg}");
}
