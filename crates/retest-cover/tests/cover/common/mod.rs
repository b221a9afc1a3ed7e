//! Test helpers: CFGs from a small text notation, and short-circuit CFGs of
//! boolean expressions.

#![allow(dead_code)]

use std::collections::BTreeMap;

use retest_cover::criteria::Run;
use retest_graph::{Cfg, CfgBuilder, Contraction, EdgeId, EdgeLabel, Node, NodeId, NodeKind, Procedure};

/// A CFG and its node names.
pub struct Named {
    pub cfg: Cfg,
    pub ids: BTreeMap<String, NodeId>,
}

impl Named {
    pub fn n(&self, name: &str) -> NodeId {
        self.ids[name]
    }

    pub fn name(&self, n: NodeId) -> &str {
        self.ids.iter().find(|(_, v)| **v == n).map(|(k, _)| k.as_str()).unwrap()
    }

    pub fn names(&self, ns: &[NodeId]) -> Vec<String> {
        ns.iter().map(|&n| self.name(n).to_string()).collect()
    }

    /// The edge `src -label-> …`.
    pub fn e(&self, src: &str, label: &str) -> EdgeId {
        let l = EdgeLabel::parse(label).unwrap();
        self.cfg.out_edge_labelled(self.n(src), &l).unwrap_or_else(|| panic!("no edge {src} -{label}->"))
    }

    /// A run through the named vertices: consecutive names must be joined by an
    /// edge; where two edges join them, `name:T` / `name:F` picks one.
    pub fn run(&self, test: &str, path: &[&str]) -> Run {
        let mut edges = Vec::new();
        for w in path.windows(2) {
            let (src, label) = match w[0].split_once(':') {
                Some((s, l)) => (s, Some(l)),
                None => (w[0], None),
            };
            let dst = w[1].split(':').next().unwrap();
            let (s, d) = (self.n(src), self.n(dst));
            let e = self
                .cfg
                .out_edges(s)
                .find(|&e| {
                    let ed = self.cfg.edge(e);
                    ed.dst == d && label.is_none_or(|l| ed.label.to_string() == l)
                })
                .unwrap_or_else(|| panic!("no edge {src} -> {dst}"));
            edges.push(e);
        }
        Run::new(test, edges, self.cfg.edge_count())
    }
}

/// Builds a CFG from lines `a -> b` (ε), `a -T-> b`, `a -F-> b`. Nodes are numbered
/// in order of first appearance; `entry` and `exit` are the terminals; a node
/// with `T`/`F` edges is a predicate.
pub fn cfg(spec: &str) -> Named {
    let mut order: Vec<String> = Vec::new();
    let mut edges = Vec::new();
    for line in spec.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (src, rest, label) = if let Some((a, b)) = line.split_once("-T->") {
            (a, b, EdgeLabel::True)
        } else if let Some((a, b)) = line.split_once("-F->") {
            (a, b, EdgeLabel::False)
        } else {
            let (a, b) = line.split_once("->").expect("edge");
            (a, b, EdgeLabel::Eps)
        };
        let (src, dst) = (src.trim().to_string(), rest.trim().to_string());
        for n in [&src, &dst] {
            if !order.contains(n) {
                order.push(n.clone());
            }
        }
        edges.push((src, dst, label));
    }
    let mut b = CfgBuilder::new("f");
    let mut ids = BTreeMap::new();
    for name in &order {
        let kind = match name.as_str() {
            "entry" => NodeKind::Entry,
            "exit" => NodeKind::Exit,
            _ if edges.iter().any(|(s, _, l)| s == name && *l == EdgeLabel::True) => NodeKind::Predicate,
            _ => NodeKind::Statement,
        };
        ids.insert(name.clone(), b.add_node(Node::new(kind, name.as_str())));
    }
    b.set_entry(ids["entry"]);
    b.set_exit(ids["exit"]);
    for (s, d, l) in edges {
        b.add_edge(ids[&s], ids[&d], l);
    }
    Named { cfg: b.build().unwrap(), ids }
}

/// A procedure whose condition-level CFG is `g`; `group[i]` names the statement
/// of node `i` (as a node of `g`), and edges between nodes of one group are
/// inside the statement. Statement-level labels: as in `g`, with `flip` naming
/// conditions whose decision outcome is the opposite of their own label (`!b`).
pub fn procedure(g: &Named, group: &[(&str, &str)], flip: &[&str]) -> Procedure {
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

/// A boolean expression over conditions `0..n`.
#[derive(Clone, Debug)]
pub enum B {
    C(usize),
    Not(Box<B>),
    And(Box<B>, Box<B>),
    Or(Box<B>, Box<B>),
}

impl B {
    pub fn eval(&self, v: &[bool]) -> bool {
        match self {
            B::C(i) => v[*i],
            B::Not(a) => !a.eval(v),
            B::And(a, b) => a.eval(v) && b.eval(v),
            B::Or(a, b) => a.eval(v) || b.eval(v),
        }
    }

    /// Short-circuit evaluation: the conditions evaluated, in order.
    pub fn evaluated(&self, v: &[bool], out: &mut Vec<usize>) -> bool {
        match self {
            B::C(i) => {
                out.push(*i);
                v[*i]
            }
            B::Not(a) => !a.evaluated(v, out),
            B::And(a, b) => a.evaluated(v, out) && b.evaluated(v, out),
            B::Or(a, b) => a.evaluated(v, out) || b.evaluated(v, out),
        }
    }

    pub fn leaves(&self) -> usize {
        match self {
            B::C(_) => 1,
            B::Not(a) => a.leaves(),
            B::And(a, b) | B::Or(a, b) => a.leaves() + b.leaves(),
        }
    }
}

/// A pending edge: (source, label).
type Pend = Vec<(NodeId, EdgeLabel)>;

/// Condition-level CFG builder, the way short-circuit evaluation (and retest's
/// front end) builds it.
pub struct Sc {
    pub b: CfgBuilder,
    pub conds: Vec<NodeId>,
}

impl Sc {
    pub fn new() -> Sc {
        Sc { b: CfgBuilder::new("p"), conds: Vec::new() }
    }

    pub fn node(&mut self, kind: NodeKind, text: &str) -> NodeId {
        self.b.add_node(Node::new(kind, text))
    }

    pub fn link(&mut self, from: Pend, to: NodeId) {
        for (s, l) in from {
            self.b.add_edge(s, to, l);
        }
    }

    /// Builds `e` reached by `inc`; returns the pending true and false exits.
    pub fn branch(&mut self, e: &B, inc: Pend) -> (Pend, Pend) {
        match e {
            B::C(i) => {
                let n = self.node(NodeKind::Predicate, &format!("c{i}"));
                self.conds.push(n);
                self.link(inc, n);
                (vec![(n, EdgeLabel::True)], vec![(n, EdgeLabel::False)])
            }
            B::Not(a) => {
                let (t, f) = self.branch(a, inc);
                (f, t)
            }
            B::And(a, b) => {
                let (at, af) = self.branch(a, inc);
                let (bt, mut bf) = self.branch(b, at);
                bf.splice(0..0, af);
                (bt, bf)
            }
            B::Or(a, b) => {
                let (mut at, af) = self.branch(a, inc);
                let (bt, bf) = self.branch(b, af);
                at.extend(bt);
                (at, bf)
            }
        }
    }
}

/// Context a decision is placed in.
#[derive(Clone, Copy, Debug)]
pub enum Ctx {
    /// `pre; if (e) then; else other; post;`
    IfElse,
    /// `pre; if (e) then; post;`
    If,
    /// `pre; while (e) body; post;`
    While,
    /// `pre; x = e; post;` with `(true)`/`(false)` value nodes.
    Value,
}

/// The CFG of `e` in context `ctx`; returns it, the condition vertices in
/// evaluation order, and the vertices the true and false outcomes reach.
pub fn program(e: &B, ctx: Ctx) -> (Cfg, Vec<NodeId>, NodeId, NodeId) {
    let mut s = Sc::new();
    let en = s.node(NodeKind::Entry, "f");
    let ex = s.node(NodeKind::Exit, "");
    let pre = s.node(NodeKind::Statement, "pre");
    s.b.add_edge(en, pre, EdgeLabel::Eps);
    let (t, f) = s.branch(e, vec![(pre, EdgeLabel::Eps)]);
    let post = s.node(NodeKind::Statement, "post");
    s.b.add_edge(post, ex, EdgeLabel::Eps);
    let (tt, ft) = match ctx {
        Ctx::IfElse | Ctx::Value => {
            let th = s.node(NodeKind::Statement, if matches!(ctx, Ctx::Value) { "(true)" } else { "then" });
            let el = s.node(NodeKind::Statement, if matches!(ctx, Ctx::Value) { "(false)" } else { "else" });
            s.link(t, th);
            s.link(f, el);
            s.b.add_edge(th, post, EdgeLabel::Eps);
            s.b.add_edge(el, post, EdgeLabel::Eps);
            (th, el)
        }
        Ctx::If => {
            let th = s.node(NodeKind::Statement, "then");
            s.link(t, th);
            s.link(f, post);
            s.b.add_edge(th, post, EdgeLabel::Eps);
            (th, post)
        }
        Ctx::While => {
            let body = s.node(NodeKind::Statement, "body");
            s.link(t, body);
            s.link(f, post);
            s.b.add_edge(body, s.conds[0], EdgeLabel::Eps);
            (body, post)
        }
    };
    s.b.set_entry(en);
    s.b.set_exit(ex);
    let conds = s.conds.clone();
    (s.b.build().unwrap(), conds, tt, ft)
}
