//! The criteria of a whole suite ([`retest_cover::report`]): Listing 1 of 001 as a
//! unit run by the tests of Figure 1, evaluations read off edge sets or recorded,
//! tests that mix evaluations named, units sharing a function.

use crate::common;

use common::{Named, cfg, procedure};
use retest_cover::criteria::{Criterion, Reading};
use retest_cover::mcdc::{DecisionPaths, Variant};
use retest_cover::report::{EvaluationSource, Measure, Options, RecordedEvaluations, Suite, SuiteReport, UnitRuns};
use retest_graph::recording::{Recorded, SECT_MCDC, Sink};
use retest_graph::{SourceFile, Span, Unit};
use roaring::RoaringBitmap;

/// Listing 1 (`x = 0; if (a && b) { x = 1; } return x;`) at lines 1–5 of `l1.c`.
fn listing1() -> Named {
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
    let line = |name: &str| match name {
        "entry" | "x0" => 1,
        "a" | "b" => 2,
        "x1" => 3,
        _ => 5,
    };
    let cfg = g.cfg.map_nodes(|id, n| {
        let l = line(g.name(id));
        n.clone().with_span(Span { file: 0, line: l, col: 1, end_line: l })
    });
    Named { cfg, ids: g.ids }
}

fn unit(g: &Named) -> Unit {
    let mut p = procedure(g, &[("b", "a")], &[]);
    p.span = Some(Span { file: 0, line: 1, col: 1, end_line: 5 });
    Unit { files: vec![SourceFile { path: "l1.c".into(), system: false }], procedures: vec![p], ..Unit::default() }
}

/// A test's unit-wide edges along a path of `g` (see `Named::run`).
fn edges(g: &Named, paths: &[&[&str]]) -> RoaringBitmap {
    let mut bm = RoaringBitmap::new();
    for p in paths {
        bm.extend(g.run("", p).edges.ones().map(|e| e as u32));
    }
    bm
}

fn all_measures() -> Options {
    Options { measures: Measure::ALL.to_vec(), reading: Reading::Intended }
}

fn totals(r: &SuiteReport) -> Vec<(String, usize, usize)> {
    r.measures.iter().map(|m| (m.measure.title(), m.total.hit, m.total.total)).collect()
}

const RUN_1A: &[&str] = &["entry", "x0", "a:T", "b:T", "x1", "ret", "exit"];
const RUN_1B: &[&str] = &["entry", "x0", "a:T", "b:F", "ret", "exit"];
const RUN_1C: &[&str] = &["entry", "x0", "a:F", "ret", "exit"];

#[test]
fn figure1_runs_give_the_papers_criteria_and_both_mcdc_variants() {
    let g = listing1();
    let u = unit(&g);
    let (a, b, c) = (edges(&g, &[RUN_1A]), edges(&g, &[RUN_1B]), edges(&g, &[RUN_1C]));
    let mut s = Suite::new(all_measures());
    s.add_unit(&UnitRuns { unit: &u, tests: vec![("1a", &a), ("1b", &b), ("1c", &c)], recorded: None });
    let r = s.finish();
    assert_eq!(
        totals(&r),
        [
            // as computed by hand for Listing 1 in paper.rs
            ("SC".to_string(), 7, 7),
            ("DC".into(), 8, 8),
            ("CC".into(), 9, 9),
            ("D/CC".into(), 10, 10),
            ("MCC".into(), 8, 9),
            ("FPC".into(), 9, 9),
            ("MC/DC".into(), 6, 7),
            // a: TT/F-, b: TT/TF
            ("MC/DC (unique-cause)".into(), 2, 2),
            ("MC/DC (masking)".into(), 2, 2),
            // a's pair changes whether b is evaluated
            ("MC/DC (strict-unique-cause)".into(), 1, 2),
        ]
    );
    assert_eq!(r.decisions.len(), 1);
    let d = &r.decisions[0];
    assert_eq!((d.report.file.as_str(), d.report.line, d.report.function.as_str()), ("l1.c", 2, "f"));
    assert_eq!(d.report.expression.as_deref(), Some("a && b"));
    assert_eq!(d.source, EvaluationSource::EdgeSets);
    assert!(d.skipped_tests.is_empty() && r.warnings.is_empty());
    let m = d.report.result(Variant::UniqueCause).unwrap();
    let v: Vec<(String, Vec<String>)> = m.vectors.iter().map(|x| (x.vector.to_string(), x.tests.clone())).collect();
    assert_eq!(
        v,
        [
            ("TF → F".to_string(), vec!["1b".to_string()]),
            ("F- → F".into(), vec!["1c".into()]),
            ("TT → T".into(), vec!["1a".into()]),
        ]
    );
    // what is missing, in source terms: the paper's Condition 8 for a, Condition 4 for a
    let missing: Vec<String> =
        r.missing.iter().map(|m| format!("{} {}:{} {}", m.measure, m.file, m.line, m.what)).collect();
    assert_eq!(missing.len(), 3, "{missing:#?}");
    assert!(
        missing[0].starts_with("mcc l1.c:2 condition `a` (C1) of `a && b`: no two runs take different edges of `a`"),
        "{missing:#?}"
    );
    assert!(missing[1].starts_with("mcdc l1.c:2 condition `a` (C1) of `a && b`"), "{missing:#?}");
    assert!(
        missing[2].starts_with("mcdc-strict l1.c:2 condition `a` (C1) of `a && b`: no independence pair"),
        "{missing:#?}"
    );
}

#[test]
fn a_test_with_two_evaluations_is_skipped_and_named_unless_recorded() {
    let g = listing1();
    let u = unit(&g);
    let one = edges(&g, &[RUN_1A]);
    // both TT and F- in one run: its edge set cannot say which evaluations happened
    let both = edges(&g, &[RUN_1A, RUN_1C]);
    let mut s = Suite::new(all_measures());
    s.add_unit(&UnitRuns { unit: &u, tests: vec![("t1", &one), ("loop", &both)], recorded: None });
    let r = s.finish();
    let d = &r.decisions[0];
    assert_eq!(d.skipped_tests, ["loop"]);
    assert!(d.report.note.as_deref().unwrap().contains("1 test evaluated this decision along several paths"));
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("(loop)") && r.warnings[0].contains("retest cc --mcdc"), "{}", r.warnings[0]);
    assert_eq!(d.report.result(Variant::Masking).unwrap().independent, 0, "only TT is seen");
    let missing = r.missing.iter().filter(|m| m.measure == "mcdc-masking").map(|m| m.what.as_str()).collect::<Vec<_>>();
    assert!(missing.iter().all(|w| w.contains("not counting 1 test")), "{missing:?}");

    // recorded: cell base + path id per evaluation
    let cfdg = retest_cover::cfdg::Cfdg::for_procedure(&u.procedures[0]);
    let paths = DecisionPaths::new(&u.procedures[0].cond, &cfdg.decisions[0]).unwrap();
    let base = 40;
    let id = |s: &str, o| paths.encode(&retest_cover::mcdc::CondVector::parse(s, o).unwrap()).unwrap() as u32;
    let one_rec = Recorded { mcdc: RoaringBitmap::from_iter([base + id("TT", true)]), ..Default::default() };
    let both_rec = Recorded {
        mcdc: RoaringBitmap::from_iter([base + id("TT", true), base + id("F-", false)]),
        ..Default::default()
    };
    let recorded = RecordedEvaluations {
        slots: vec![vec![Some(Sink::Cell { sect: SECT_MCDC, base })]],
        tests: vec![("t1", &one_rec), ("loop", &both_rec)],
    };
    let mut s = Suite::new(all_measures());
    s.add_unit(&UnitRuns { unit: &u, tests: vec![("t1", &one), ("loop", &both)], recorded: Some(recorded) });
    let r = s.finish();
    let d = &r.decisions[0];
    assert_eq!(d.source, EvaluationSource::Recorded);
    assert!(d.skipped_tests.is_empty() && r.warnings.is_empty());
    let m = d.report.result(Variant::Masking).unwrap();
    assert_eq!(m.independent, 1, "a: TT (t1, loop) / F- (loop)");
    assert_eq!(m.vectors.iter().map(|v| v.tests.len()).sum::<usize>(), 3);
    // the paper's criteria do not change with the source of evaluations
    assert_eq!(r.measure(Measure::Criterion(Criterion::Mcdc)).unwrap().total.total, 7);
}

#[test]
fn a_function_in_two_units_is_one_decision_and_counted_per_unit() {
    let g = listing1();
    let (u1, u2) = (unit(&g), unit(&g));
    let (a, c) = (edges(&g, &[RUN_1A]), edges(&g, &[RUN_1C]));
    let mut s = Suite::new(Options {
        measures: vec![Measure::Criterion(Criterion::Dc), Measure::Mcdc(Variant::UniqueCause)],
        reading: Reading::Intended,
    });
    s.add_unit(&UnitRuns { unit: &u1, tests: vec![("1a", &a)], recorded: None });
    s.add_unit(&UnitRuns { unit: &u2, tests: vec![("1c", &c)], recorded: None });
    let r = s.finish();
    assert_eq!(r.decisions.len(), 1);
    let m = r.decisions[0].report.result(Variant::UniqueCause).unwrap();
    assert_eq!(m.independent, 1, "TT from one unit, F- from the other show a");
    let dc = r.measure(Measure::Criterion(Criterion::Dc)).unwrap();
    // per unit 7 vertices and 1 decision: 1a visits every vertex but takes only outcome true (7 of 8),
    // 1c misses b and x1 and takes only outcome false (5 of 8)
    assert_eq!((dc.total.hit, dc.total.total), (7 + 5, 16));
    assert_eq!(dc.files["l1.c"], dc.total);
}

#[test]
fn a_function_no_test_calls_is_one_missing_item_per_measure() {
    let g = listing1();
    let u = unit(&g);
    let mut s = Suite::new(all_measures());
    s.add_unit(&UnitRuns { unit: &u, tests: Vec::new(), recorded: None });
    let r = s.finish();
    let per: Vec<(&str, &str)> = r.missing.iter().map(|m| (m.measure, m.what.as_str())).collect();
    assert_eq!(per.len(), Measure::ALL.len(), "{per:#?}");
    assert!(per[..7].iter().all(|(_, w)| w.starts_with("`f` is never called (")), "{per:#?}");
    assert!(per[7..].iter().all(|(_, w)| *w == "decision `a && b` (2 conditions) is never evaluated"), "{per:#?}");
}

/// Line execution counts (`retest build --counts`): a line counts the times
/// control entered it from elsewhere — `a && b` on line 2 once per entry,
/// not once per condition — summed over tests; an uncounted build has none.
#[test]
fn line_execution_counts_are_the_counts_of_edges_entering_the_line() {
    use retest_cover::lines::Accumulator;
    use std::collections::BTreeMap;
    let g = listing1();
    let mut u = unit(&g);
    // probed (a function without probes has no lines to report), and the
    // statement-level nodes where their conditions are
    let p = &mut u.procedures[0];
    p.probes = vec![retest_graph::coverage::Probe::Node; p.cond.node_count()];
    let span_of = |s: retest_graph::NodeId| {
        let first = p.map.node.iter().position(|&c| c == s).unwrap();
        p.cond.node(retest_graph::NodeId(first as u32)).span
    };
    let spans: Vec<_> = p.stmt.node_ids().map(span_of).collect();
    p.stmt = p.stmt.map_nodes(|id, n| match spans[id.index()] {
        Some(sp) => n.clone().with_span(sp),
        None => n.clone(),
    });
    let counts = |runs: &[(&[&str], u64)]| -> BTreeMap<u32, u64> {
        let mut c = BTreeMap::new();
        for (p, n) in runs {
            for e in g.run("", p).edges.ones() {
                *c.entry(e as u32).or_default() += n;
            }
        }
        c
    };
    let first = counts(&[(RUN_1A, 3), (RUN_1C, 2)]);
    let second = counts(&[(RUN_1B, 1)]);
    let mut acc = Accumulator::default();
    let shape = acc.add_unit_counted(&u, true);
    for c in [&first, &second] {
        acc.begin_test();
        acc.add_test_counted(&u, &shape, &c.keys().copied().collect(), Some(c));
    }
    let files = acc.finish();
    let got: Vec<(u32, u32, Option<u64>)> =
        files["l1.c"].lines.iter().map(|(l, c)| (*l, c.tests, c.executions)).collect();
    // line 1: x0 (6 runs); 2: a, entered from x0, b from a on the same line
    // (6); 3: x1 after a:T b:T (3); 5: ret from a:F, b:F or x1 (6)
    assert_eq!(got, vec![(1, 2, Some(6)), (2, 2, Some(6)), (3, 1, Some(3)), (5, 2, Some(6))]);
    // without counters: no execution counts, the same numbers of tests
    let mut acc = Accumulator::default();
    let shape = acc.add_unit(&u);
    for c in [&first, &second] {
        acc.begin_test();
        acc.add_test(&u, &shape, &c.keys().copied().collect());
    }
    let got: Vec<(u32, u32, Option<u64>)> =
        acc.finish()["l1.c"].lines.iter().map(|(l, c)| (*l, c.tests, c.executions)).collect();
    assert_eq!(got, vec![(1, 2, None), (2, 2, None), (3, 1, None), (5, 2, None)]);
}
