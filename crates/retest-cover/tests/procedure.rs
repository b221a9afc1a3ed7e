//! CFDGs of retest's own procedures: the statement-level CFG splits decisions
//! the shape alone cannot tell apart, and names outcomes exactly.

mod common;

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
