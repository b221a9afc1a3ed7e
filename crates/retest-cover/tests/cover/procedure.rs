//! CFDGs of retest's own procedures: the statement-level CFG splits decisions
//! the shape alone cannot tell apart, and names outcomes exactly.

use crate::common;

use common::{cfg, procedure};
use retest_cover::cfdg::Cfdg;
use retest_cover::mcdc;

#[test]
fn nested_ifs_are_split_by_statement() {
    // if (a) { if (b) x; } — the shape of if (a && b) x;
    let g = cfg("
        entry -> a
        a -T-> b
        a -F-> j
        b -T-> x
        b -F-> j
        x -> j
        j -> exit
    ");
    assert_eq!(Cfdg::build(&g.cfg).decisions.len(), 1, "the shape alone merges them");
    let p = procedure(&g, &[], &[]);
    let d = Cfdg::for_procedure(&p);
    let got: Vec<Vec<String>> = d.decisions.iter().map(|x| g.names(&x.conditions)).collect();
    assert_eq!(got, [vec!["a"], vec!["b"]]);
}

#[test]
fn outcome_values_come_from_the_statement_level() {
    // while (a && !b) body;
    let g = cfg("
        entry -> a
        a -T-> b
        a -F-> post
        b -T-> post
        b -F-> body
        body -> a
        post -> exit
    ");
    // by shape: the last condition's T edge names "true" — the loop exit
    let plain = Cfdg::build(&g.cfg);
    assert_eq!(g.names(&plain.decisions[0].targets(true)), ["post"]);
    let p = procedure(&g, &[("b", "a")], &["b"]);
    let d = Cfdg::for_procedure(&p);
    assert_eq!(d.decisions.len(), 1);
    assert_eq!(g.names(&d.decisions[0].targets(true)), ["body"]);
    assert_eq!(g.names(&d.decisions[0].targets(false)), ["post"]);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    assert_eq!(s.render(&["a".into(), "b".into()]), "a && !b");
}

#[test]
fn value_decisions_name_their_outcomes_after_the_front_ends_outcome_nodes() {
    // r = a && !(b); — one statement: no statement-level labels; the front end's
    // (true) and (false) nodes (here numbered the other way round) name the outcomes
    let g = cfg("
        entry -> a
        a -T-> b
        a -F-> (false)
        b -T-> (false)
        b -F-> (true)
        (true) -> r
        (false) -> r
        r -> exit
    ");
    let p = procedure(&g, &[("a", "r"), ("b", "r"), ("(true)", "r"), ("(false)", "r")], &[]);
    let d = Cfdg::for_procedure(&p);
    assert_eq!(d.decisions.len(), 1);
    assert_eq!(g.names(&d.decisions[0].targets(true)), ["(true)"]);
    assert_eq!(g.names(&d.decisions[0].targets(false)), ["(false)"]);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    assert_eq!(s.render(&["a".into(), "b".into()]), "a && !b");
}

#[test]
fn a_conditional_expression_names_its_consequence_true() {
    // return a && !b ? x : y; — the front end builds (and numbers) the
    // consequence before the alternative
    let g = cfg("
        entry -> a
        x -> r
        y -> r
        a -T-> b
        a -F-> y
        b -T-> y
        b -F-> x
        r -> exit
    ");
    let p = procedure(&g, &[("a", "r"), ("b", "r"), ("x", "r"), ("y", "r")], &[]);
    let d = Cfdg::for_procedure(&p);
    assert_eq!(g.names(&d.decisions[0].targets(true)), ["x"]);
    let s = mcdc::decision_structure(&g.cfg, &d.decisions[0]).unwrap();
    assert_eq!(s.render(&["a".into(), "b".into()]), "a && !b");
}
