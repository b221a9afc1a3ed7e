//! The examples of 001 (Listings 1 and 2, Figures 1 and 2) and hand-computed
//! criteria and MC/DC.

use crate::common;

use common::{Named, cfg};
use retest_cover::cfdg::{Cfdg, Options, SuccessorOrder};
use retest_cover::criteria::{self, Criterion, Reading, Run};
use retest_cover::mcdc::{self, CondVector, Evaluation, Variant};
use retest_graph::NodeId;

/// Listing 1: `x = 0; if (a && b) { x = 1; } return x;`
fn listing1() -> Named {
    cfg("
        entry -> x0
        x0 -> a
        a -T-> b
        a -F-> ret
        b -T-> x1
        b -F-> ret
        x1 -> ret
        ret -> exit
    ")
}

/// Figure 1: the three runs of Listing 1.
fn figure1(g: &Named) -> Vec<Run> {
    vec![
        g.run("1a", &["entry", "x0", "a:T", "b:T", "x1", "ret", "exit"]),
        g.run("1b", &["entry", "x0", "a:T", "b:F", "ret", "exit"]),
        g.run("1c", &["entry", "x0", "a:F", "ret", "exit"]),
    ]
}

/// Listing 2: `x = ((a && b) || c);` — Figure 2a.
fn listing2() -> Named {
    cfg("
        entry -> a
        a -T-> b
        a -F-> c
        b -T-> T
        b -F-> c
        c -T-> T
        c -F-> F
        T -> x
        F -> x
        x -> exit
    ")
}

fn sets(g: &Named, p: &[Vec<NodeId>]) -> Vec<Vec<String>> {
    p.iter().map(|s| g.names(s)).collect()
}

#[test]
fn listing1_has_one_decision_with_both_conditions() {
    let g = listing1();
    let d = Cfdg::build(&g.cfg);
    assert_eq!(d.decisions.len(), 1);
    let dec = &d.decisions[0];
    assert_eq!(g.names(&dec.conditions), ["a", "b"]);
    assert_eq!(dec.entry, g.n("a"));
    assert!(dec.well_formed);
    assert_eq!(g.names(&dec.targets(true)), ["x1"]);
    assert_eq!(g.names(&dec.targets(false)), ["ret"]);
    assert_eq!(dec.outcome_edges.len(), 3, "a:F, b:T and b:F leave the decision");
    assert_eq!(d.decision_of[g.n("b").index()], Some(retest_cover::cfdg::DecisionId(0)));
    assert_eq!(d.decision_of[g.n("x1").index()], None);
}

#[test]
fn figure2_merge_steps() {
    let g = listing2();
    let (d, steps) = Cfdg::build_traced(&g.cfg, &Default::default());
    // 2a: every condition its own decision; 2b: D2 ∪ D3 over the shared successor T
    assert_eq!(steps.len(), 2);
    assert_eq!(g.names(&steps[0].into), ["b"]);
    assert_eq!(g.names(&steps[0].absorbed), ["c"]);
    assert_eq!(g.names(&steps[0].shared), ["T"]);
    assert_eq!(sets(&g, &steps[0].partition), [vec!["a"], vec!["b", "c"]]);
    // 2c: D1 ∪ (D2 ∪ D3). The shared successor is c itself: successors({b, c})
    // contains c (b -F-> c), as the paper's successor(D) formula defines it. The
    // prose ("compared to {T, F}") would give an empty intersection.
    assert_eq!(g.names(&steps[1].into), ["a"]);
    assert_eq!(g.names(&steps[1].absorbed), ["b", "c"]);
    assert_eq!(g.names(&steps[1].shared), ["c"]);
    assert_eq!(sets(&g, &steps[1].partition), [vec!["a", "b", "c"]]);
    assert_eq!(d.decisions.len(), 1);
    assert_eq!(g.names(&d.decisions[0].conditions), ["a", "b", "c"]);
    assert_eq!(g.names(&d.decisions[0].successors()), ["T", "F"]);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    assert_eq!(s.render(&["a".into(), "b".into(), "c".into()]), "(a && b) || c");
}

#[test]
fn merge_order_does_not_depend_on_which_condition_algorithm1_starts_from() {
    // the same graph with the conditions numbered backwards
    let g = cfg("
        entry -> x
        c -T-> T
        c -F-> F
        b -T-> T
        b -F-> c
        x -> a
        a -T-> b
        a -F-> c
        T -> y
        F -> y
        y -> exit
    ");
    let d = Cfdg::build(&g.cfg);
    assert_eq!(d.decisions.len(), 1);
    assert_eq!(g.names(&d.decisions[0].conditions), ["a", "b", "c"]);
}

#[test]
fn label_order_makes_algorithm2_incomplete() {
    // !(a || b) || c, i.e. (!a && !b) || c: a true skips b and goes to c
    let g = cfg("
        entry -> a
        a -T-> c
        a -F-> b
        b -T-> c
        b -F-> T
        c -T-> T
        c -F-> F
        T -> x
        F -> x
        x -> exit
    ");
    let label = Cfdg::build_with_options(&g.cfg, &Options { order: SuccessorOrder::Label, ..Options::default() });
    let got: Vec<Vec<String>> = label.decisions.iter().map(|x| g.names(&x.conditions)).collect();
    assert_eq!(got, [vec!["a", "b"], vec!["c"]], "c is visited from a first, and b never compares with it");
    let rpo = Cfdg::build(&g.cfg);
    let got: Vec<Vec<String>> = rpo.decisions.iter().map(|x| g.names(&x.conditions)).collect();
    assert_eq!(got, [vec!["a", "b", "c"]]);
    let s = mcdc::decision_structure(&g.cfg, &rpo.decisions[0]).unwrap();
    assert_eq!(s.render(&["a".into(), "b".into(), "c".into()]), "(!a && !b) || c");
}

#[test]
fn separate_decisions_stay_separate() {
    // if (a) s; if (b && c) t;
    let g = cfg("
        entry -> a
        a -T-> s
        a -F-> b
        s -> b
        b -T-> c
        b -F-> j
        c -T-> t
        c -F-> j
        t -> j
        j -> exit
    ");
    let d = Cfdg::build(&g.cfg);
    let got: Vec<Vec<String>> = d.decisions.iter().map(|x| g.names(&x.conditions)).collect();
    assert_eq!(got, [vec!["a"], vec!["b", "c"]]);
}

#[test]
fn listing1_criteria_intended() {
    let g = listing1();
    let d = Cfdg::build(&g.cfg);
    let runs = figure1(&g);
    let r = criteria::evaluate(&g.cfg, &d, &runs, &Criterion::ALL, Reading::Intended);
    let got: Vec<(&str, usize, usize)> = r.iter().map(|c| (c.criterion.title(), c.covered, c.total)).collect();
    assert_eq!(
        got,
        [
            ("SC", 7, 7),
            ("DC", 8, 8),
            ("CC", 9, 9),
            ("D/CC", 10, 10),
            // Condition 4 for `a`: a:F short-circuits b, so b's edges differ
            ("MCC", 8, 9),
            ("FPC", 9, 9),
            // 2 (1) + 3 (2) + 6 (1) + 7 (1) + 8 (1 of 2)
            ("MC/DC", 6, 7),
        ]
    );
    let mcdc = r.iter().find(|c| c.criterion == Criterion::Mcdc).unwrap();
    let missing: Vec<String> = mcdc.missing().map(|m| m.obligation.to_string()).collect();
    assert_eq!(
        missing,
        [format!("two runs vary only condition n{} of decision 0 and its outcome (Condition 8)", g.n("a").0)]
    );
    let c8 = mcdc.conditions.iter().find(|c| c.condition == 8).unwrap();
    assert_eq!(c8.results[1].witness, ["1a", "1b"]);
    let fpc = r.iter().find(|c| c.criterion == Criterion::Fpc).unwrap();
    let c5 = fpc.conditions.iter().find(|c| c.condition == 5).unwrap();
    assert_eq!(c5.results[0].witness, ["1a", "1c"]);
}

#[test]
fn listing1_criteria_as_printed() {
    let g = listing1();
    let d = Cfdg::build(&g.cfg);
    let runs = figure1(&g);
    let r = criteria::evaluate(
        &g.cfg,
        &d,
        &runs,
        &[Criterion::Dc, Criterion::Cc, Criterion::Fpc, Criterion::Mcdc],
        Reading::AsPrinted,
    );
    let got: Vec<(&str, usize, usize)> = r.iter().map(|c| (c.criterion.title(), c.covered, c.total)).collect();
    // one run never takes both outcomes (no loop); FPC's `c` must be the same vertex
    // in both runs, so `a` (decision left by a in 1c, by b in 1a) fails
    assert_eq!(got, [("DC", 7, 8), ("CC", 7, 9), ("FPC", 8, 9), ("MC/DC", 3, 7)]);
}

#[test]
fn loops_let_one_run_take_both_outcomes() {
    // while (a && b) body;
    let g = cfg("
        entry -> a
        a -T-> b
        a -F-> post
        b -T-> body
        b -F-> post
        body -> a
        post -> exit
    ");
    let d = Cfdg::build(&g.cfg);
    assert_eq!(d.decisions.len(), 1);
    let runs = vec![
        g.run("two-iterations-then-b-false", &["entry", "a:T", "b:T", "body", "a:T", "b:F", "post", "exit"]),
        g.run("a-false", &["entry", "a:F", "post", "exit"]),
    ];
    let r = criteria::evaluate(&g.cfg, &d, &runs, &[Criterion::Dc, Criterion::Mcdc], Reading::AsPrinted);
    assert_eq!((r[0].covered, r[0].total), (r[0].total, r[0].total), "one run leaves the loop both ways");
    // b shown by the single looping run (b:T and b:F, a's edges the same)
    let c8 = r[1].conditions.iter().find(|c| c.condition == 8).unwrap();
    assert!(c8.results[1].covered());
    assert_eq!(c8.results[1].witness, ["two-iterations-then-b-false"]);
    assert!(!c8.results[0].covered());
}

fn ev(test: &str, v: &str, outcome: bool) -> Evaluation {
    Evaluation { test: test.into(), vector: CondVector::parse(v, outcome).unwrap() }
}

#[test]
fn a_and_b_unique_cause_pairs() {
    let g = listing1();
    let d = Cfdg::build(&g.cfg);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    let evals = [ev("TT", "TT", true), ev("TF", "TF", false), ev("FT", "F-", false)];
    let m = mcdc::analyze(2, Some(&s), &evals, Variant::UniqueCause).unwrap();
    assert_eq!(m.independent, 2);
    let pair = |c: usize| -> Vec<(String, String)> {
        m.conditions[c]
            .pairs
            .iter()
            .map(|p| (m.tests_of(p.when_true).join(","), m.tests_of(p.when_false).join(",")))
            .collect()
    };
    assert_eq!(pair(0), [("TT".to_string(), "FT".to_string())]);
    assert_eq!(pair(1), [("TT".to_string(), "TF".to_string())]);
    let strict = mcdc::analyze(2, Some(&s), &evals, Variant::StrictUniqueCause).unwrap();
    assert_eq!(strict.independent, 1, "a is only shown with b as a don't care");
    assert!(strict.conditions[0].pairs.is_empty());
    let masking = mcdc::analyze(2, Some(&s), &evals, Variant::Masking).unwrap();
    assert_eq!(masking.independent, 2);
}

#[test]
fn masking_differs_from_unique_cause_on_listing2() {
    let g = listing2();
    let d = Cfdg::build(&g.cfg);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    // (a && b) || c: TFT → T and F-F → F vary c; a also varies, but in both a && b
    // is false: a is masked
    let evals = [ev("t1", "TFT", true), ev("t2", "F-F", false)];
    let u = mcdc::analyze(3, Some(&s), &evals, Variant::UniqueCause).unwrap();
    let m = mcdc::analyze(3, Some(&s), &evals, Variant::Masking).unwrap();
    assert!(u.conditions[2].pairs.is_empty(), "a is evaluated in both with different values");
    assert_eq!(m.conditions[2].pairs.len(), 1);
    assert_eq!(u.independent, 0);
    assert_eq!(m.independent, 1);
    // a: TT- → T, F-F → F shows a under both (b and c don't cares / not masking)
    let evals = [ev("t1", "TT-", true), ev("t2", "F-F", false), ev("t3", "TFF", false)];
    let u = mcdc::analyze(3, Some(&s), &evals, Variant::UniqueCause).unwrap();
    let m = mcdc::analyze(3, Some(&s), &evals, Variant::Masking).unwrap();
    assert_eq!(u.conditions[0].pairs.len(), 1);
    assert_eq!(m.conditions[0].pairs.len(), 1);
    // b: TT- vs TFF (c evaluated only in one: don't care)
    assert_eq!(u.conditions[1].pairs.len(), 1);
    assert_eq!(m.conditions[1].pairs.len(), 1);
    // TFF vs TT-: c false in TFF masks nothing (|| right operand false is non-controlling)
    assert!(m.conditions[1].pairs.iter().any(|p| m.tests_of(p.when_false) == ["t3"]));
}

#[test]
fn inconsistent_vectors_are_rejected() {
    let g = listing1();
    let d = Cfdg::build(&g.cfg);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    // a false short-circuits b: b cannot have been evaluated
    let e = mcdc::analyze(2, Some(&s), &[ev("bad", "FT", false)], Variant::UniqueCause).unwrap_err();
    assert!(matches!(e, mcdc::McdcError::Inconsistent { .. }), "{e}");
    let e = mcdc::analyze(3, None, &[ev("w", "TT", true)], Variant::UniqueCause).unwrap_err();
    assert!(matches!(e, mcdc::McdcError::Width { expected: 3, found: 2, .. }));
    assert_eq!(mcdc::analyze(2, None, &[], Variant::Masking).unwrap_err(), mcdc::McdcError::NoStructure);
}

#[test]
fn paths_of_listing2_decode_to_their_vectors() {
    let g = listing2();
    let d = Cfdg::build(&g.cfg);
    let paths = mcdc::decision_paths(&g.cfg, &d.decisions[0]).unwrap();
    let got: Vec<(u64, String)> = paths.iter().map(|p| (p.id, p.vector.to_string())).collect();
    // T edges first: a:T b:T | a:T b:F c:T | a:T b:F c:F | a:F c:T | a:F c:F
    assert_eq!(
        got,
        [
            (0, "TT- → T".to_string()),
            (1, "TFT → T".to_string()),
            (2, "TFF → F".to_string()),
            (3, "F-T → T".to_string()),
            (4, "F-F → F".to_string()),
        ]
    );
    let p = mcdc::DecisionPaths::new(&g.cfg, &d.decisions[0]).unwrap();
    for pv in &paths {
        assert_eq!(p.encode(&pv.vector), Some(pv.id));
    }
    assert_eq!(p.decode(5), None);
    // only a:F (3) and b:F (1) need an increment
    let nonzero: Vec<(String, u64)> = p
        .increments()
        .into_iter()
        .filter(|x| x.increment != 0)
        .map(|x| {
            let e = g.cfg.edge(x.edge);
            (format!("{}:{}", g.name(e.src), e.label), x.increment)
        })
        .collect();
    assert_eq!(nonzero, [("a:F".to_string(), 3), ("b:F".to_string(), 1), ("c:F".to_string(), 1)]);
    // runs that evaluate the decision once give exact evaluations
    let run = g.run("r", &["entry", "a:F", "c:T", "T", "x", "exit"]);
    let (evals, mixed) = mcdc::evaluations_from_runs(&g.cfg, &d.decisions[0], &[run]).unwrap();
    assert!(mixed.is_empty());
    assert_eq!(evals[0].vector.to_string(), "F-T → T");
}
