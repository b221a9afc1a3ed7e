//! CFDGs of retest's own procedures: the statement-level CFG splits decisions
//! the shape alone cannot tell apart, and names outcomes exactly.

mod common;

use common::{Named, cfg};
use retest_cover::cfdg::Cfdg;
use retest_cover::mcdc;
use retest_graph::{Contraction, EdgeLabel, Node, NodeId, NodeKind, Procedure};

/// A procedure whose condition-level CFG is `g`; `group[i]` names the statement
/// of node `i` (as a node of `g`), and edges between nodes of one group are
/// inside the statement. Statement-level labels: as in `g`, with `flip` naming
/// conditions whose decision outcome is the opposite of their own label (`!b`).
fn procedure(g: &Named, group: &[(&str, &str)], flip: &[&str]) -> Procedure {
    let cond = g.cfg.clone();
    let mut of: Vec<NodeId> = cond.node_ids().collect();
    for (n, s) in group {
        of[g.n(n).index()] = g.n(s);
    }
    // coarse nodes: the representatives, renumbered
    let reps: Vec<NodeId> = {
        let mut r: Vec<NodeId> = of.clone();
        r.sort();
        r.dedup();
        r
    };
    let idx = |n: NodeId| NodeId(reps.iter().position(|&r| r == n).unwrap() as u32);
    let group_of: Vec<NodeId> = of.iter().map(|&r| idx(r)).collect();
    let coarse_nodes: Vec<Node> = reps
        .iter()
        .map(|&r| {
            let n = cond.node(r);
            let kind = if group.iter().any(|(_, s)| g.n(s) == r) { NodeKind::Predicate } else { n.kind };
            Node::new(kind, n.text.clone())
        })
        .collect();
    let labels: Vec<Option<EdgeLabel>> = cond
        .edges()
        .map(|(_, e)| {
            if group_of[e.src.index()] == group_of[e.dst.index()] {
                return None;
            }
            let flipped = flip.iter().any(|f| g.n(f) == e.src);
            Some(match (&e.label, flipped) {
                (EdgeLabel::True, true) => EdgeLabel::False,
                (EdgeLabel::False, true) => EdgeLabel::True,
                (l, _) => l.clone(),
            })
        })
        .collect();
    let (stmt, map): (_, Contraction) = cond.contract("f", &group_of, coarse_nodes, &labels).unwrap();
    Procedure {
        name: "f".into(),
        is_static: false,
        span: None,
        probes: vec![retest_graph::coverage::Probe::Derived; cond.node_count()],
        cond,
        stmt,
        map,
        locals: Vec::new(),
        unanalysable: None,
        digest: 0,
    }
}

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
