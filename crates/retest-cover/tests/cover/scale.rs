//! Large inputs: no recursion on the thread's stack, no quadratic blow-up.

use crate::common;

use std::time::Instant;

use common::{B, Ctx, program};
use retest_cover::cfdg::Cfdg;
use retest_cover::criteria::{self, Criterion, Reading, Run};
use retest_cover::mcdc::{self, StructureError};
use retest_graph::{CfgBuilder, EdgeLabel, Node, NodeKind};

fn chain(n: usize, and: bool) -> B {
    let mut e = B::C(n - 1);
    for i in (0..n - 1).rev() {
        e = if and { B::And(Box::new(B::C(i)), Box::new(e)) } else { B::Or(Box::new(B::C(i)), Box::new(e)) };
    }
    e
}

#[test]
fn twenty_thousand_sequential_decisions() {
    // if (a_i && b_i) s_i; repeated: a long path of conditions for Algorithm 2 to recurse along
    let mut b = CfgBuilder::new("big");
    let en = b.add_node(Node::new(NodeKind::Entry, ""));
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    let mut prev = en;
    let n = 20_000;
    for _ in 0..n {
        let a = b.add_node(Node::new(NodeKind::Predicate, "a"));
        let c = b.add_node(Node::new(NodeKind::Predicate, "b"));
        let s = b.add_node(Node::new(NodeKind::Statement, "s"));
        let j = b.add_node(Node::new(NodeKind::Statement, "j"));
        b.add_edge(prev, a, EdgeLabel::Eps);
        b.add_edge(a, c, EdgeLabel::True);
        b.add_edge(a, j, EdgeLabel::False);
        b.add_edge(c, s, EdgeLabel::True);
        b.add_edge(c, j, EdgeLabel::False);
        b.add_edge(s, j, EdgeLabel::Eps);
        prev = j;
    }
    b.add_edge(prev, ex, EdgeLabel::Eps);
    b.set_entry(en);
    b.set_exit(ex);
    let g = b.build().unwrap();
    let t = Instant::now();
    let d = Cfdg::build(&g);
    assert_eq!(d.decisions.len(), n);
    assert!(d.decisions.iter().all(|x| x.conditions.len() == 2 && x.well_formed));
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    // one run with every T edge, one with every F edge (not real runs: sets of edges)
    let all = |v: bool| {
        let edges = g.edges().filter(|(_, e)| {
            e.label == EdgeLabel::Eps || e.label == if v { EdgeLabel::True } else { EdgeLabel::False }
        });
        Run::new(if v { "t" } else { "f" }, edges.map(|(i, _)| i), g.edge_count())
    };
    let r = criteria::evaluate(&g, &d, &[all(true), all(false)], &[Criterion::Dc, Criterion::Mcdc], Reading::Intended);
    assert!(r[0].met());
    // Condition 8: the two runs differ in both conditions of every decision
    assert_eq!(r[1].total - r[1].covered, 2 * n);
}

#[test]
fn a_thousand_conditions_in_one_decision() {
    let n = 1000;
    for and in [true, false] {
        let (cfg, conds, _, _) = program(&chain(n, and), Ctx::While);
        let d = Cfdg::build(&cfg);
        assert_eq!(d.decisions.len(), 1);
        assert_eq!(d.decisions[0].conditions, conds);
        let s = mcdc::decision_structure(&cfg, &d.decisions[0]).unwrap();
        assert!(s.mentions(n - 1));
        let p = mcdc::DecisionPaths::new(&cfg, &d.decisions[0]).unwrap();
        assert_eq!(p.count(), n as u64 + 1);
        let last = p.decode(n as u64).unwrap();
        assert_eq!(p.encode(&last.vector), Some(n as u64));
    }
    let (cfg, _, _, _) = program(&chain(1100, true), Ctx::If);
    let d = Cfdg::build(&cfg);
    assert_eq!(mcdc::decision_structure(&cfg, &d.decisions[0]), Err(StructureError::TooLarge(1100)));
}

#[test]
fn path_counts_that_overflow_are_an_error() {
    // (a0 || b0) && (a1 || b1) && … : 2^k ways to be true
    let k = 70;
    let mut e = B::Or(Box::new(B::C(2 * k - 2)), Box::new(B::C(2 * k - 1)));
    for i in (0..k - 1).rev() {
        e = B::And(Box::new(B::Or(Box::new(B::C(2 * i)), Box::new(B::C(2 * i + 1)))), Box::new(e));
    }
    let (cfg, _, _, _) = program(&e, Ctx::IfElse);
    let d = Cfdg::build(&cfg);
    assert_eq!(mcdc::DecisionPaths::new(&cfg, &d.decisions[0]).unwrap_err(), mcdc::PathError::Overflow);
    let (cfg, _, _, _) = program(&chain(30, false), Ctx::IfElse);
    let d = Cfdg::build(&cfg);
    assert_eq!(mcdc::decision_paths(&cfg, &d.decisions[0]).unwrap().len(), 31);
}
