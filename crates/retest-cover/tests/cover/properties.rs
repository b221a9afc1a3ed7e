//! Property tests: random decisions over `&&`, `||` and `!` with up to ten
//! conditions, compiled to condition-level CFGs the way short-circuit evaluation
//! runs them.

use crate::common;

use std::collections::BTreeSet;

use common::{B, Ctx, Sc, program};
use proptest::prelude::*;
use retest_cover::cfdg::Cfdg;
use retest_cover::criteria::{self, Criterion, Reading, Run};
use retest_cover::mcdc::{self, Evaluation, Variant};
use retest_graph::{EdgeLabel, NodeKind};

/// Expressions with exactly `n` leaves, conditions numbered left to right.
fn expr(n: usize) -> BoxedStrategy<B> {
    fn go(lo: usize, n: usize) -> BoxedStrategy<B> {
        if n == 1 {
            return prop_oneof![3 => Just(B::C(lo)), 1 => Just(B::Not(Box::new(B::C(lo))))].boxed();
        }
        (1..n, any::<bool>(), any::<bool>())
            .prop_flat_map(move |(k, and, not)| {
                (go(lo, k), go(lo + k, n - k)).prop_map(move |(l, r)| {
                    let e = if and { B::And(Box::new(l), Box::new(r)) } else { B::Or(Box::new(l), Box::new(r)) };
                    if not { B::Not(Box::new(e)) } else { e }
                })
            })
            .boxed()
    }
    go(0, n)
}

fn any_expr() -> impl Strategy<Value = B> {
    (1usize..=10).prop_flat_map(expr)
}

fn ctx() -> impl Strategy<Value = Ctx> {
    prop_oneof![Just(Ctx::IfElse), Just(Ctx::If), Just(Ctx::While), Just(Ctx::Value)]
}

fn assignments(n: usize) -> impl Iterator<Item = Vec<bool>> {
    (0u32..1 << n).map(move |m| (0..n).map(|i| m & (1 << i) != 0).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Algorithms 1–2 recover exactly one decision with all its conditions, in
    /// evaluation order; its structure evaluates like the expression.
    #[test]
    fn one_decision_with_all_conditions(e in any_expr(), ctx in ctx()) {
        let n = e.leaves();
        let (cfg, conds, tt, ft) = program(&e, ctx);
        let d = Cfdg::build(&cfg);
        prop_assert_eq!(d.decisions.len(), 1);
        let dec = &d.decisions[0];
        prop_assert_eq!(&dec.conditions, &conds);
        prop_assert!(dec.interstitial.is_empty());
        prop_assert!(dec.well_formed);
        prop_assert_eq!(dec.successors(), { let mut s = vec![tt, ft]; s.sort(); s });
        // outcome values name the two successors consistently
        let t_value = dec.outcome_edges.iter().find(|o| o.to == tt).unwrap().value;
        prop_assert!(dec.outcome_edges.iter().all(|o| o.value == ((o.to == tt) == t_value)));
        let flip = !t_value;
        let s = mcdc::decision_structure(&cfg, dec).unwrap();
        let p = mcdc::DecisionPaths::new(&cfg, dec).unwrap();
        let mut vectors = BTreeSet::new();
        for v in assignments(n) {
            let got = s.evaluate(&v);
            prop_assert_eq!(got.outcome != flip, e.eval(&v));
            let mut order = Vec::new();
            e.evaluated(&v, &mut order);
            prop_assert_eq!(got.evaluated.ones().collect::<Vec<_>>(), { let mut o = order.clone(); o.sort(); o });
            prop_assert!(s.consistent(&got.normalized()));
            let id = p.encode(&got).unwrap();
            prop_assert_eq!(p.decode(id).unwrap().vector, got.normalized());
            vectors.insert(got.normalized().to_string());
        }
        prop_assert_eq!(p.count() as usize, vectors.len(), "one path per distinct evaluation");
    }

    /// Two decisions in sequence, separated by statements, stay two decisions.
    #[test]
    fn two_decisions_in_sequence(e1 in (1usize..=5).prop_flat_map(expr), e2 in (1usize..=5).prop_flat_map(expr)) {
        let mut s = Sc::new();
        let en = s.node(NodeKind::Entry, "f");
        let ex = s.node(NodeKind::Exit, "");
        let (t1, f1) = s.branch(&e1, vec![(en, EdgeLabel::Eps)]);
        let first = s.conds.clone();
        let a = s.node(NodeKind::Statement, "a");
        let mid = s.node(NodeKind::Statement, "mid");
        s.link(t1, a);
        s.link(f1, mid);
        s.b.add_edge(a, mid, EdgeLabel::Eps);
        let (t2, f2) = s.branch(&e2, vec![(mid, EdgeLabel::Eps)]);
        let second: Vec<_> = s.conds[first.len()..].to_vec();
        let b = s.node(NodeKind::Statement, "b");
        s.link(t2, b);
        s.link(f2, ex);
        s.b.add_edge(b, ex, EdgeLabel::Eps);
        s.b.set_entry(en);
        s.b.set_exit(ex);
        let cfg = s.b.build().unwrap();
        let d = Cfdg::build(&cfg);
        let got: Vec<_> = d.decisions.iter().map(|x| x.conditions.clone()).collect();
        prop_assert_eq!(got, vec![first, second]);
    }

    /// With every evaluation executed, every condition of a read-once decision is
    /// shown independent under unique-cause and masking MC/DC; strict pairs are
    /// unique-cause pairs.
    #[test]
    fn full_truth_table_shows_every_condition(e in (1usize..=7).prop_flat_map(expr)) {
        let n = e.leaves();
        let (cfg, _, _, _) = program(&e, Ctx::IfElse);
        let d = Cfdg::build(&cfg);
        let s = mcdc::decision_structure(&cfg, &d.decisions[0]).unwrap();
        let evals: Vec<Evaluation> = assignments(n)
            .enumerate()
            .map(|(i, v)| Evaluation { test: format!("t{i}"), vector: s.evaluate(&v) })
            .collect();
        let u = mcdc::analyze(n, Some(&s), &evals, Variant::UniqueCause).unwrap();
        let m = mcdc::analyze(n, Some(&s), &evals, Variant::Masking).unwrap();
        let st = mcdc::analyze(n, Some(&s), &evals, Variant::StrictUniqueCause).unwrap();
        prop_assert_eq!(u.independent, n);
        prop_assert_eq!(m.independent, n);
        prop_assert_eq!(&u.vectors, &st.vectors);
        for c in 0..n {
            for p in &st.conditions[c].pairs {
                prop_assert!(u.conditions[c].pairs.contains(p));
            }
        }
        // the last condition is always shown strictly (nothing after it)
        prop_assert!(st.conditions[n - 1].independent());
    }

    /// Set-based criteria with one run per path through the decision: DC, CC and
    /// FPC are met (intended reading), and runs read back as exact evaluations.
    #[test]
    fn one_run_per_path_meets_dc_cc_fpc(e in (1usize..=6).prop_flat_map(expr)) {
        let (cfg, _, _, _) = program(&e, Ctx::IfElse);
        let d = Cfdg::build(&cfg);
        let dec = &d.decisions[0];
        let p = mcdc::DecisionPaths::new(&cfg, dec).unwrap();
        // the edges outside the decision do not matter to Conditions 2, 3 and 5
        let outside: Vec<_> = cfg.edges().filter(|(_, ed)| !dec.contains(ed.src)).map(|(i, _)| i).collect();
        let runs: Vec<Run> = (0..p.count())
            .map(|id| {
                let pv = p.decode(id).unwrap();
                let path = p.increments().into_iter().map(|x| x.edge).filter(|&x| {
                    let ed = cfg.edge(x);
                    dec.condition_index(ed.src).is_some_and(|c| pv.vector.get(c) == Some(ed.label == EdgeLabel::True))
                });
                Run::new(format!("p{id}"), path.chain(outside.iter().copied()), cfg.edge_count())
            })
            .collect();
        let r = criteria::evaluate(&cfg, &d, &runs, &[Criterion::Dc, Criterion::Cc, Criterion::Fpc], Reading::Intended);
        for c in &r {
            prop_assert!(c.met(), "{:?}: {:?}", c.criterion, c.missing().collect::<Vec<_>>());
        }
        let (evals, mixed) = mcdc::evaluations_from_runs(&cfg, dec, &runs).unwrap();
        prop_assert!(mixed.is_empty());
        for (id, ev) in evals.iter().enumerate() {
            prop_assert_eq!(Some(id as u64), p.encode(&ev.vector));
        }
    }
}
