//! Ball's examples (000 Figures 1, 4, 5 and 6) with the results the paper states,
//! and property tests of safety and precision over random pairs of small CFGs.
//!
//! The paper's figures are pictures; the graphs here are rebuilt from what its
//! text says about them (vertex names, the paths in I and D, D, D_reject,
//! V''_accept and the order ⊑).

use std::collections::{BTreeSet, HashMap, VecDeque};

use proptest::prelude::*;
use retest_graph::pathnum::PathNumbering;
use retest_graph::{Cfg, CfgBuilder, EdgeId, EdgeLabel, Node, NodeId, NodeKind};
use retest_select::ball::{Algorithm, Decision, Order, Pair, PairAnalysis, Target};
use retest_select::paths::decide_paths;

/// A CFG with its nodes named as in the paper's figures.
struct G {
    cfg: Cfg,
    names: HashMap<String, NodeId>,
}

fn label(s: &str) -> EdgeLabel {
    match s {
        "t" => EdgeLabel::True,
        "f" => EdgeLabel::False,
        "e" | "ε" => EdgeLabel::Eps,
        "default" => EdgeLabel::Default,
        c => EdgeLabel::Case(c.to_string()),
    }
}

/// `"A t C; A f C; C t W; ..."`: edges `src label dst`. The first source is the
/// entry, the node without out-edges the exit. A node's text is its name without
/// trailing digits (`C1`, `C2` are two occurrences of block `C`).
fn graph(spec: &str) -> G {
    let mut b = CfgBuilder::new("f");
    let mut names: HashMap<String, NodeId> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let triples: Vec<(String, String, String)> = spec
        .split(';')
        .map(|t| {
            let w: Vec<&str> = t.split_whitespace().collect();
            assert_eq!(w.len(), 3, "bad edge {t:?}");
            (w[0].to_string(), w[1].to_string(), w[2].to_string())
        })
        .collect();
    let mut id = |b: &mut CfgBuilder, n: &str| -> NodeId {
        if let Some(&i) = names.get(n) {
            return i;
        }
        let i = b.add_node(Node::new(NodeKind::Statement, n.trim_end_matches(|c: char| c.is_ascii_digit())));
        names.insert(n.to_string(), i);
        order.push(n.to_string());
        i
    };
    for (s, l, d) in &triples {
        let (si, di) = (id(&mut b, s), id(&mut b, d));
        b.add_edge(si, di, label(l));
    }
    let exits: Vec<&String> = order.iter().filter(|n| !triples.iter().any(|(s, _, _)| s == *n)).collect();
    assert_eq!(exits.len(), 1, "one exit: {exits:?}");
    let (entry, exit) = (names[&triples[0].0], names[exits[0]]);
    b.node_mut(entry).kind = NodeKind::Entry;
    b.node_mut(exit).kind = NodeKind::Exit;
    b.set_entry(entry);
    b.set_exit(exit);
    G { cfg: b.build().unwrap(), names }
}

impl G {
    fn n(&self, name: &str) -> NodeId {
        self.names[name]
    }

    /// The transition (v, l).
    fn e(&self, v: &str, l: &str) -> EdgeId {
        self.cfg.out_edge_labelled(self.n(v), &label(l)).unwrap()
    }

    /// `"A f C t W e X"` as a walk of edges.
    fn walk(&self, path: &str) -> Vec<EdgeId> {
        let w: Vec<&str> = path.split_whitespace().collect();
        let out: Vec<EdgeId> = w.chunks(2).filter(|c| c.len() == 2).map(|c| self.e(c[0], c[1])).collect();
        let last = self.cfg.edge(*out.last().unwrap()).dst;
        assert_eq!(last, self.n(w[w.len() - 1]), "walk {path} ends where it says");
        out
    }

    fn edges(&self, path: &str) -> Vec<EdgeId> {
        let mut v = self.walk(path);
        v.sort();
        v.dedup();
        v
    }
}

/// Equivalence for the examples: identical text and identical out-labels.
fn equiv<'a>(g: &'a Cfg, h: &'a Cfg) -> impl Fn(NodeId, NodeId) -> bool + 'a {
    move |a, b| {
        g.node(a).text == h.node(b).text && g.out_labels(a).collect::<Vec<_>>() == h.out_labels(b).collect::<Vec<_>>()
    }
}

fn analysis<'a>(g: &'a G, h: &'a G) -> PairAnalysis<'a> {
    PairAnalysis::new(&g.cfg, &h.cfg, equiv(&g.cfg, &h.cfg))
}

/// Ground truth: whether the complete path `walk` of `g` is in D(G, G') — its
/// block and label sequence does not replay to an identical path of `h`.
fn in_d(g: &Cfg, h: &Cfg, walk: &[EdgeId]) -> bool {
    let eq = equiv(g, h);
    let (mut v, mut v2) = (g.entry(), h.entry());
    if !eq(v, v2) {
        return true;
    }
    for &e in walk {
        let edge = g.edge(e);
        let Some(w2) = h.succ_labelled(v2, &edge.label) else { return true };
        v = edge.dst;
        v2 = w2;
        if !eq(v, v2) || (v == g.exit()) != (v2 == h.exit()) {
            return true;
        }
    }
    false
}

fn sel(a: &PairAnalysis<'_>, algo: Algorithm, covered: &[EdgeId], order: Order) -> bool {
    a.selects(algo, covered, order)
}

fn pair(g: &G, v: &str, h: &G, v2: &str) -> Pair {
    Pair { old: g.n(v), new: h.n(v2) }
}

const ALL: [Algorithm; 4] = [Algorithm::Rh, Algorithm::Partial, Algorithm::Full, Algorithm::Valid];

// ---------------------------------------------------------------- Figure 1

fn fig1() -> (G, G) {
    let g = graph("A t C; A f C; C t W; C f X; W e X");
    // P': the true arm got its own copy of C whose successors differ
    let h = graph("A t C1; A f C2; C1 t Y; C1 f Z; Y e X; Z e X; C2 t W; C2 f X; W e X");
    (g, h)
}

#[test]
fn figure1_intersection_graph() {
    let (g, h) = fig1();
    let a = analysis(&g, &h);
    let mut v: Vec<Pair> = a.pairs().to_vec();
    v.sort();
    let mut want =
        vec![pair(&g, "A", &h, "A"), pair(&g, "C", &h, "C1"), pair(&g, "C", &h, "C2"), pair(&g, "W", &h, "W")];
    want.sort();
    assert_eq!(v, want, "V''");
    assert_eq!(a.multiply_visited(), vec![g.n("C")], "C is a multiply-visited vertex");
    let acc: BTreeSet<Pair> = a.accepting().collect();
    assert_eq!(
        acc,
        [pair(&g, "A", &h, "A"), pair(&g, "C", &h, "C2"), pair(&g, "W", &h, "W")].into_iter().collect(),
        "the dotted outline V''_accept"
    );
    // the two paths in I(G, G')
    for p in ["A f C f X", "A f C t W e X"] {
        assert!(!in_d(&g.cfg, &h.cfg, &g.walk(p)), "{p}");
    }
    // any path that begins with (A, t) is in D(G, G')
    for p in ["A t C f X", "A t C t W e X"] {
        assert!(in_d(&g.cfg, &h.cfg, &g.walk(p)), "{p}");
    }
    assert_eq!(a.step_from(pair(&g, "A", &h, "A"), g.e("A", "t")), Some(Target::Pair(pair(&g, "C", &h, "C1"))));
    assert_eq!(a.step_from(pair(&g, "C", &h, "C2"), g.e("C", "f")), Some(Target::Accept));
    assert_eq!(a.step_from(pair(&g, "C", &h, "C1"), g.e("C", "t")), Some(Target::Reject));
}

#[test]
fn figure1_rh_selects_partial_reachability_eliminates() {
    let (g, h) = fig1();
    let a = analysis(&g, &h);
    let d: BTreeSet<EdgeId> = a.d().iter().map(|t| t.edge).collect();
    assert_eq!(d, [g.e("C", "t"), g.e("C", "f")].into_iter().collect(), "D = {{(C,t), (C,f)}}");
    let dr: BTreeSet<EdgeId> = a.d_reject().iter().map(|t| t.edge).collect();
    assert_eq!(
        dr,
        [g.e("A", "t")].into_iter().collect(),
        "D_reject = {{(A,t)}}: the only transition leaving V''_accept"
    );
    let p = g.edges("A f C t W e X");
    let rh = a.decide(Algorithm::Rh, &p, Order::Full);
    assert_eq!(rh.dangerous_edges(), vec![g.e("C", "t")], "RH: p covers (C,t) ∈ D");
    assert!(!sel(&a, Algorithm::Partial, &p, Order::Full), "partial-reachability eliminates p");
    assert!(!sel(&a, Algorithm::Full, &p, Order::Full));
    assert!(!sel(&a, Algorithm::Valid, &p, Order::Full));
    assert!(!sel(&a, Algorithm::Valid, &p, Order::DominanceOnly));
    // every path from A to X covers a transition of D: RH selects every test
    for q in ["A f C f X", "A t C f X", "A t C t W e X"] {
        assert!(sel(&a, Algorithm::Rh, &g.edges(q), Order::Full), "{q}");
    }
    // every algorithm selects the paths in D
    for q in ["A t C f X", "A t C t W e X"] {
        for algo in ALL {
            assert!(sel(&a, algo, &g.edges(q), Order::Full), "{algo:?} {q}");
        }
    }
    let why = a.decide(Algorithm::Partial, &g.edges("A t C f X"), Order::Full);
    assert_eq!(why.dangerous_edges(), vec![g.e("A", "t")]);
}

// ---------------------------------------------------------------- Figure 4

#[test]
fn figure4_full_but_not_partial_reachability_eliminates() {
    let g = graph("A t C; A f C; C t W; C f X; W e X");
    let h = graph("A t C1; A f C2; C1 t Y; C1 f X; Y e X; C2 t W; C2 f X; W e X");
    let a = analysis(&g, &h);
    let d: Vec<EdgeId> = a.d().iter().map(|t| t.edge).collect();
    let dr: Vec<EdgeId> = a.d_reject().iter().map(|t| t.edge).collect();
    assert_eq!(d, vec![g.e("C", "t")], "D = {{(C,t)}}");
    assert_eq!(dr, d, "D_reject = D");
    assert_eq!(a.accepting().count(), a.pairs().len(), "every vertex reaches accept");
    let p = g.edges("A f C t W e X");
    assert!(!in_d(&g.cfg, &h.cfg, &g.walk("A f C t W e X")));
    assert!(sel(&a, Algorithm::Rh, &p, Order::Full));
    assert!(sel(&a, Algorithm::Partial, &p, Order::Full), "partial-reachability is not edge-optimal");
    assert!(a.reject_routes(&p).is_empty(), "reject is not reachable in G''_p");
    assert!(!sel(&a, Algorithm::Full, &p, Order::Full), "full-reachability eliminates p");
    assert!(!sel(&a, Algorithm::Valid, &p, Order::Full));
    // any complete path with (A, f) is in I(G, G')
    for q in ["A f C f X", "A f C t W e X"] {
        assert!(!sel(&a, Algorithm::Full, &g.edges(q), Order::DominanceOnly), "{q}");
    }
    assert!(sel(&a, Algorithm::Full, &g.edges("A t C t W e X"), Order::Full));
}

// ---------------------------------------------------------------- Figure 5

fn fig5() -> (G, G) {
    let g = graph("U e A; A t A; A f V");
    let h = graph("U e A1; A1 t A2; A1 f Z; Z e V; A2 t A2; A2 f V");
    (g, h)
}

#[test]
fn figure5_valid_but_not_full_reachability_eliminates() {
    let (g, h) = fig5();
    let a = analysis(&g, &h);
    let walk = g.walk("U e A t A f V");
    let p = g.edges("U e A t A f V");
    assert!(!in_d(&g.cfg, &h.cfg, &walk));
    // every path covering exactly these transitions is in I(G, G')
    for k in 1..6 {
        let q = format!("U e {}A f V", "A t ".repeat(k));
        assert_eq!(g.edges(&q), p);
        assert!(!in_d(&g.cfg, &h.cfg, &g.walk(&q)), "{q}");
    }
    // ⊑ on G: (U,ε) ⊑ (A,t) ⊑ (A,f)
    let (u, at, af) = (g.e("U", "e"), g.e("A", "t"), g.e("A", "f"));
    assert!(a.precedes(u, at, Order::Full) && a.precedes(at, af, Order::Full) && a.precedes(u, af, Order::Full));
    assert!(!a.precedes(af, at, Order::Full) && !a.precedes(at, u, Order::Full));
    assert!(!a.precedes(at, af, Order::DominanceOnly), "(A,t) does not dominate (A,f)");
    // reject is reachable in G''_p via [U, ε, A, f, reject], so R = {(U,ε), (A,f)}
    assert_eq!(a.reject_routes(&p), vec![u, af]);
    for algo in [Algorithm::Rh, Algorithm::Partial, Algorithm::Full] {
        assert!(sel(&a, algo, &p, Order::Full), "{algo:?} selects p");
    }
    assert!(!sel(&a, Algorithm::Valid, &p, Order::Full), "valid-reachability eliminates p");
    assert!(sel(&a, Algorithm::Valid, &p, Order::DominanceOnly), "with dominance alone, valid = full");
}

/// The reachability clause of ⊑ assumes one execution: a test that runs the
/// procedure twice — once along a path in D, once along p — covers exactly E_p.
#[test]
fn figure5_union_of_two_invocations_needs_dominance_only() {
    let (g, h) = fig5();
    let a = analysis(&g, &h);
    let first = g.walk("U e A f V");
    assert!(in_d(&g.cfg, &h.cfg, &first), "A1 f leads to Z");
    let mut union = first.clone();
    union.extend(g.walk("U e A t A f V"));
    union.sort();
    union.dedup();
    assert_eq!(union, g.edges("U e A t A f V"));
    assert!(!sel(&a, Algorithm::Valid, &union, Order::Full), "Order::Full would drop the test: unsafe");
    let d = a.decide(Algorithm::Valid, &union, Order::DominanceOnly);
    assert_eq!(d.dangerous_edges(), vec![g.e("A", "f")], "DominanceOnly keeps it");
}

// ---------------------------------------------------------------- Figure 6

fn fig6() -> (G, G, G) {
    let g = graph("U e A; A t A; A f V");
    // one iteration is fine, two or more lead to Z
    let h = graph("U e A1; A1 t A2; A1 f V; A2 t A3; A2 f V; A3 t A3; A3 f Z; Z e V");
    // nested once more: two iterations are fine, three or more lead to Z
    let nested = graph("U e A1; A1 t A2; A1 f V; A2 t A3; A2 f V; A3 t A4; A3 f V; A4 t A4; A4 f Z; Z e V");
    (g, h, nested)
}

fn paths_of(pn: &PathNumbering, g: &G, walk: &[EdgeId]) -> Vec<u64> {
    let mut v = pn.split(&g.cfg, walk).unwrap();
    v.sort();
    v.dedup();
    v
}

#[test]
fn figure6_edge_coverage_cannot_decide_path_coverage_does() {
    let (g, h, _) = fig6();
    let a = analysis(&g, &h);
    let (p, q) = (g.walk("U e A t A f V"), g.walk("U e A t A t A f V"));
    assert!(!in_d(&g.cfg, &h.cfg, &p) && in_d(&g.cfg, &h.cfg, &q));
    let (ep, eq) = (g.edges("U e A t A f V"), g.edges("U e A t A t A f V"));
    assert_eq!(ep, eq, "E_p = E_q");
    for algo in ALL {
        assert!(sel(&a, algo, &ep, Order::Full), "{algo:?} must select p to be safe for q");
    }
    // the ABL decomposition: back edge A -t-> A, four paths
    let pn = PathNumbering::new(&g.cfg).unwrap();
    assert_eq!(pn.back_edges(), &[g.e("A", "t")]);
    assert_eq!(pn.path_count(), 4);
    let id = |s: &str, path: &str| pn.number(&g.cfg, g.n(s), &g.walk(path)).unwrap();
    let p1 = id("U", "U e A f V");
    let p2 = id("U", "U e A t A");
    let p3 = id("A", "A t A");
    let p4 = id("A", "A f V");
    let mut all = vec![p1, p2, p3, p4];
    all.sort();
    assert_eq!(all, vec![0, 1, 2, 3]);
    assert_eq!(paths_of(&pn, &g, &p), sorted(&[p2, p4]), "p = p2 p4");
    assert_eq!(paths_of(&pn, &g, &q), sorted(&[p2, p3, p4]), "q = p2 p3 p4");
    let dp = decide_paths(&a, &pn, &[p2, p4], Order::Full).unwrap();
    assert_eq!(dp, Decision::Eliminated, "path coverage eliminates p");
    let dq = decide_paths(&a, &pn, &[p2, p3, p4], Order::Full).unwrap();
    assert_eq!(dq.dangerous_edges(), vec![g.e("A", "f")], "and selects q");
    assert!(decide_paths(&a, &pn, &[p1], Order::Full).unwrap() == Decision::Eliminated);
    assert!(decide_paths(&a, &pn, &[4], Order::Full).is_err(), "an unknown path number is an error");
}

#[test]
fn figure6_nested_defeats_bounded_paths() {
    let (g, _, h) = fig6();
    let a = analysis(&g, &h);
    let (q, r) = (g.walk("U e A t A t A f V"), g.walk("U e A t A t A t A f V"));
    assert!(!in_d(&g.cfg, &h.cfg, &q), "q ∈ I(G, G')");
    assert!(in_d(&g.cfg, &h.cfg, &r), "r ∈ D(G, G')");
    let pn = PathNumbering::new(&g.cfg).unwrap();
    assert_eq!(paths_of(&pn, &g, &q), paths_of(&pn, &g, &r), "both cover {{p2, p3, p4}}");
    let ids = paths_of(&pn, &g, &q);
    assert!(decide_paths(&a, &pn, &ids, Order::Full).unwrap().is_selected(), "q must be selected to be safe for r");
    // p (one iteration) is still told apart
    let p = g.walk("U e A t A f V");
    assert!(!in_d(&g.cfg, &h.cfg, &p));
    assert_eq!(decide_paths(&a, &pn, &paths_of(&pn, &g, &p), Order::Full).unwrap(), Decision::Eliminated);
}

fn sorted(v: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v.sort();
    v
}

// ------------------------------------------------------ the fixpoint of §4.4

/// §4.4's check taken literally: eliminate if reject is unreachable, or if some
/// covered e ∉ R precedes some f ∈ R — with ⊑ on G (`within` false, the paper's
/// constructive definition) or within the covered edges.
fn literal_valid(a: &PairAnalysis<'_>, covered: &[EdgeId], within: bool) -> bool {
    let r = a.reject_routes(covered);
    if r.is_empty() {
        return false;
    }
    let precedes = |e: EdgeId, f: EdgeId| {
        if within { a.precedes_within(e, f, Order::Full, covered) } else { a.precedes(e, f, Order::Full) }
    };
    let outside: Vec<EdgeId> = covered.iter().copied().filter(|e| !r.contains(e)).collect();
    !outside.iter().any(|&e| r.iter().any(|&f| precedes(e, f)))
}

/// `while (B) A;` becomes `while (B) Y; Z;`: the loop body and the code after
/// the loop both change. p = [S, ε, B, t, A, ε, B, f, X] is in D(G, G') at its
/// first (B, t). In G''_p, reject is reached through (B, t) and through (B, f);
/// (A, ε) lies on neither route and precedes (B, f). §4.4's single check sees
/// e = (A, ε) ∉ R, f = (B, f) ∈ R, e ⊑ f and drops the test; the fixpoint drops
/// only the route through (B, f) and keeps the one through (B, t).
#[test]
fn literal_closure_check_is_unsafe_fixpoint_is_not() {
    let g = graph("S e B; B t A; B f X; A e B");
    let h = graph("S e B; B t Y; B f Z; Y e B; Z e X");
    let a = analysis(&g, &h);
    let walk = g.walk("S e B t A e B f X");
    assert!(in_d(&g.cfg, &h.cfg, &walk));
    let ep = g.edges("S e B t A e B f X");
    assert_eq!(a.reject_routes(&ep), vec![g.e("S", "e"), g.e("B", "t"), g.e("B", "f")], "R");
    assert!(a.precedes(g.e("A", "e"), g.e("B", "f"), Order::Full));
    assert!(!literal_valid(&a, &ep, false), "the literal check eliminates a test in D(G, G')");
    assert!(!literal_valid(&a, &ep, true), "also with ⊑ within the covered edges");
    let d = a.decide(Algorithm::Valid, &ep, Order::Full);
    assert_eq!(d.dangerous_edges(), vec![g.e("B", "t")], "the fixpoint keeps it, because of (B, t)");
}

/// With ⊑ computed on the whole of G (000 §4.4's constructive definition), the
/// algorithm is not edge-optimal: (A, f) and (A, t) are mutually reachable in G
/// only through (B, f), which the test never covered. Computed within the
/// covered edges, (A, f) ⊑_p (A, t), the route to reject through (A, t) is
/// invalid and the test is eliminated — and indeed every path with E_p is in I.
#[test]
fn order_within_the_covered_edges_is_needed_for_edge_optimality() {
    let g = graph("S e A; A t B; A f A; B t X; B f A");
    // P' peels off a first iteration whose true branch differs
    let h = graph("S e A0; A0 t A; A0 f A; A t B; A f A; B t X; B f A");
    let a = analysis(&g, &h);
    let ep = g.edges("S e A f A t B t X");
    assert!(!in_d(&g.cfg, &h.cfg, &g.walk("S e A f A t B t X")));
    assert!(!some_d_path_covers_exactly(&g.cfg, &h.cfg, &ep), "P_p ⊆ I(G, G')");
    let (af, at) = (g.e("A", "f"), g.e("A", "t"));
    assert!(!a.precedes(af, at, Order::Full), "in G, (A,t) reaches (A,f) through (B,f)");
    assert!(a.precedes_within(af, at, Order::Full, &ep), "in G_p it does not");
    assert_eq!(a.reject_routes(&ep), vec![g.e("S", "e"), at]);
    assert!(literal_valid(&a, &ep, false), "⊑ on G selects");
    assert!(!literal_valid(&a, &ep, true));
    assert!(!a.selects(Algorithm::Valid, &ep, Order::Full), "⊑_p eliminates");
    assert!(a.selects(Algorithm::Full, &ep, Order::Full));
}

// ------------------------------------------------------------ switch labels

#[test]
fn an_added_case_makes_default_reject() {
    let g = graph("S e W; W 1 P; W default Q; P e X; Q e X");
    let h = graph("S e W; W 1 P; W 2 R; W default Q; P e X; Q e X; R e X");
    // equivalence that ignores out-labels, as DejaVu's does for switches
    let eq = |a: NodeId, b: NodeId| g.cfg.node(a).text == h.cfg.node(b).text;
    let a = PairAnalysis::new(&g.cfg, &h.cfg, eq);
    let d: Vec<EdgeId> = a.d().iter().map(|t| t.edge).collect();
    assert_eq!(d, vec![g.e("W", "default")]);
    assert!(!a.selects(Algorithm::Valid, &g.edges("S e W 1 P e X"), Order::DominanceOnly));
    assert!(a.selects(Algorithm::Valid, &g.edges("S e W default Q e X"), Order::DominanceOnly));
    // a removed case: its edge rejects
    let b = PairAnalysis::new(&h.cfg, &g.cfg, |x: NodeId, y: NodeId| h.cfg.node(x).text == g.cfg.node(y).text);
    let d: Vec<EdgeId> = b.d().iter().map(|t| t.edge).collect();
    assert_eq!(d, vec![h.e("W", "2")]);
}

#[test]
fn different_entries_select_every_test_that_ran() {
    let g = graph("A t C; A f C; C t W; C f X; W e X");
    let h = graph("B t C; B f C; C t W; C f X; W e X");
    let a = analysis(&g, &h);
    assert!(!a.entry_equivalent());
    for algo in ALL {
        assert!(a.selects(algo, &g.edges("A f C f X"), Order::DominanceOnly));
        assert_eq!(a.decide(algo, &[], Order::DominanceOnly), Decision::Eliminated, "did not run");
    }
}

#[test]
fn an_entry_outside_v_accept_puts_every_entry_edge_in_d_reject() {
    // every complete path of G is in D: nothing is accepted, nothing "leaves" V''_accept
    let g = graph("A t C; A f C; C e X");
    let h = graph("A t C; A f C; C e Y; Y e X");
    let a = analysis(&g, &h);
    assert_eq!(a.accepting().count(), 0);
    let dr: Vec<EdgeId> = a.d_reject().iter().map(|t| t.edge).collect();
    assert_eq!(dr, vec![g.e("A", "t"), g.e("A", "f")]);
    assert!(a.selects(Algorithm::Partial, &g.edges("A t C e X"), Order::Full));
}

// ------------------------------------------------------------ random graphs

/// SplitMix64: the graphs are a function of one proptest-chosen seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// An abstract graph: node 0 is the entry, the last node the exit.
#[derive(Clone, Debug)]
struct Spec {
    text: Vec<String>,
    succ: Vec<Vec<(EdgeLabel, usize)>>,
}

impl Spec {
    fn exit(&self) -> usize {
        self.text.len() - 1
    }

    fn random(rng: &mut Rng) -> Spec {
        let n = 3 + rng.below(6);
        let mut s = Spec { text: Vec::new(), succ: Vec::new() };
        for i in 0..n {
            let (text, succ) = if i == 0 {
                ("s".to_string(), vec![(EdgeLabel::Eps, 1 + rng.below(n - 1))])
            } else if i == n - 1 {
                ("x".to_string(), vec![])
            } else {
                let t = ["a", "b"][rng.below(2)].to_string();
                let pred = rng.below(2) == 0;
                (t, random_outs(rng, n, pred))
            };
            s.text.push(text);
            s.succ.push(succ);
        }
        s.repair();
        s
    }

    /// Makes the exit reachable from every node.
    fn repair(&mut self) {
        loop {
            let co = self.co_exit();
            let Some(v) = (0..self.text.len()).find(|&v| !co[v]) else { return };
            let x = self.exit();
            if let Some(last) = self.succ[v].last_mut() {
                last.1 = x;
            }
        }
    }

    fn co_exit(&self) -> Vec<bool> {
        let mut co = vec![false; self.text.len()];
        co[self.exit()] = true;
        loop {
            let mut changed = false;
            for v in 0..self.text.len() {
                if !co[v] && self.succ[v].iter().any(|(_, w)| co[*w]) {
                    co[v] = true;
                    changed = true;
                }
            }
            if !changed {
                return co;
            }
        }
    }

    /// A few random edits: a block's text, a redirected edge, a duplicated block
    /// (which makes multiply-visited vertices likely), a branch made a statement.
    fn mutate(&self, rng: &mut Rng) -> Spec {
        let mut s = self.clone();
        for round in 0..1 + rng.below(3) {
            let x = s.exit();
            let inner: Vec<usize> = (1..x).collect();
            if inner.is_empty() {
                break;
            }
            let v = inner[rng.below(inner.len())];
            let kind = if round == 0 && rng.below(2) == 0 { 2 } else { rng.below(4) };
            match kind {
                0 => s.text[v] = ["a", "b", "c"][rng.below(3)].to_string(),
                1 => {
                    let k = rng.below(s.succ[v].len());
                    s.succ[v][k].1 = 1 + rng.below(x);
                }
                2 => {
                    // duplicate v before the exit and send one edge to the copy
                    let copy = x;
                    s.text.insert(copy, s.text[v].clone());
                    s.succ.insert(copy, s.succ[v].clone());
                    for outs in &mut s.succ {
                        for (_, w) in outs.iter_mut() {
                            if *w == copy {
                                *w = copy + 1; // the exit moved
                            }
                        }
                    }
                    // mostly an edge that went to v: v then has two partners
                    let into: Vec<(usize, usize)> = (0..copy)
                        .flat_map(|u| (0..s.succ[u].len()).map(move |k| (u, k)))
                        .filter(|&(u, k)| s.succ[u][k].1 == v)
                        .collect();
                    let (from, k) = if !into.is_empty() && rng.below(4) != 0 {
                        into[rng.below(into.len())]
                    } else {
                        let from = rng.below(copy);
                        (from, rng.below(s.succ[from].len()))
                    };
                    s.succ[from][k].1 = copy;
                }
                _ => {
                    let n = s.text.len();
                    let pred = s.succ[v].len() == 1;
                    s.succ[v] = random_outs(rng, n, pred);
                }
            }
        }
        s.repair();
        s
    }

    fn cfg(&self) -> Cfg {
        let mut b = CfgBuilder::new("f");
        let x = self.exit();
        for (i, t) in self.text.iter().enumerate() {
            let kind = if i == 0 {
                NodeKind::Entry
            } else if i == x {
                NodeKind::Exit
            } else {
                NodeKind::Statement
            };
            b.add_node(Node::new(kind, t.clone()));
        }
        b.set_entry(NodeId(0));
        b.set_exit(NodeId(x as u32));
        for (v, outs) in self.succ.iter().enumerate() {
            for (l, w) in outs {
                b.add_edge(NodeId(v as u32), NodeId(*w as u32), l.clone());
            }
        }
        b.build().unwrap()
    }
}

/// Out-edges to random non-entry nodes: `T`/`F` or `ε`.
fn random_outs(rng: &mut Rng, n: usize, pred: bool) -> Vec<(EdgeLabel, usize)> {
    if pred {
        vec![(EdgeLabel::True, 1 + rng.below(n - 1)), (EdgeLabel::False, 1 + rng.below(n - 1))]
    } else {
        vec![(EdgeLabel::Eps, 1 + rng.below(n - 1))]
    }
}

/// A random complete path: a random walk, steered to the exit after `budget` steps.
fn random_walk(g: &Cfg, rng: &mut Rng, budget: usize) -> Vec<EdgeId> {
    let n = g.node_count();
    let mut dist = vec![usize::MAX; n];
    dist[g.exit().index()] = 0;
    let mut q = VecDeque::from([g.exit()]);
    while let Some(v) = q.pop_front() {
        for &e in g.in_edges(v) {
            let u = g.edge(e).src;
            if dist[u.index()] == usize::MAX {
                dist[u.index()] = dist[v.index()] + 1;
                q.push_back(u);
            }
        }
    }
    let mut out = Vec::new();
    let mut v = g.entry();
    while v != g.exit() {
        let outs: Vec<EdgeId> = g.out_edges(v).collect();
        let e = if out.len() < budget {
            outs[rng.below(outs.len())]
        } else {
            *outs.iter().min_by_key(|e| dist[g.edge(**e).dst.index()]).unwrap()
        };
        out.push(e);
        v = g.edge(e).dst;
    }
    out
}

/// Whether some complete path q of `g` with exactly the edges `ep` is in D(G, G')
/// — by search over (node, edges covered so far, node of `h` or "rejected").
fn some_d_path_covers_exactly(g: &Cfg, h: &Cfg, ep: &[EdgeId]) -> bool {
    let eq = equiv(g, h);
    let bit = |e: EdgeId| ep.iter().position(|x| *x == e).map(|i| 1u64 << i);
    let full = (1u64 << ep.len()) - 1;
    let start = (g.entry(), 0u64, if eq(g.entry(), h.entry()) { Some(h.entry()) } else { None });
    let mut seen = std::collections::HashSet::from([start]);
    let mut stack = vec![start];
    while let Some((v, mask, v2)) = stack.pop() {
        if v == g.exit() {
            if mask == full && v2.is_none() {
                return true;
            }
            continue;
        }
        for e in g.out_edges(v) {
            let Some(b) = bit(e) else { continue };
            let edge = g.edge(e);
            let w = edge.dst;
            let w2 = v2
                .and_then(|v2| h.succ_labelled(v2, &edge.label))
                .filter(|&w2| eq(w, w2) && (w == g.exit()) == (w2 == h.exit()));
            let next = (w, mask | b, w2);
            if seen.insert(next) {
                stack.push(next);
            }
        }
    }
    false
}

fn edge_set(walks: &[&[EdgeId]]) -> Vec<EdgeId> {
    let mut v: Vec<EdgeId> = walks.iter().flat_map(|w| w.iter().copied()).collect();
    v.sort();
    v.dedup();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn safety_nesting_and_optimality(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let gs = Spec::random(&mut rng);
        let hs = gs.mutate(&mut rng);
        let (g, h) = (gs.cfg(), hs.cfg());
        let a = PairAnalysis::new(&g, &h, equiv(&g, &h));
        let pn = PathNumbering::new(&g).unwrap();
        let acyclic = pn.back_edges().is_empty();
        let no_mvv = a.multiply_visited().is_empty();
        let mut walks = Vec::new();
        for _ in 0..4 {
            let budget = rng.below(12);
            walks.push(random_walk(&g, &mut rng, budget));
        }
        for p in &walks {
            let truth = in_d(&g, &h, p);
            let ep = edge_set(&[p]);
            let rh = a.selects(Algorithm::Rh, &ep, Order::Full);
            let partial = a.selects(Algorithm::Partial, &ep, Order::Full);
            let full = a.selects(Algorithm::Full, &ep, Order::Full);
            let valid = a.selects(Algorithm::Valid, &ep, Order::Full);
            let valid_dom = a.selects(Algorithm::Valid, &ep, Order::DominanceOnly);
            let ids = pn.split(&g, p).unwrap();
            let path = decide_paths(&a, &pn, &ids, Order::Full).unwrap().is_selected();
            let path_dom = decide_paths(&a, &pn, &ids, Order::DominanceOnly).unwrap().is_selected();
            if truth {
                prop_assert!(rh && partial && full && valid && valid_dom && path && path_dom,
                    "p ∈ D must be selected: rh {} partial {} full {} valid {} valid_dom {} path {} path_dom {}",
                    rh, partial, full, valid, valid_dom, path, path_dom);
            }
            prop_assert!(!valid || full, "valid ⊆ full");
            prop_assert!(!full || partial, "full ⊆ partial");
            prop_assert!(!partial || rh, "partial ⊆ RH");
            prop_assert!(!path || valid, "path ⊆ valid");
            prop_assert_eq!(valid_dom, full, "dominance alone: valid = full");
            if no_mvv {
                prop_assert_eq!(rh, truth, "without multiply-visited vertices RH is optimal");
            }
            if acyclic {
                prop_assert_eq!(valid, truth, "acyclic: P_p = {{p}}, edge-optimal = optimal");
                prop_assert_eq!(path, truth, "acyclic: one path records the whole execution");
            }
            if ep.len() <= 24 {
                prop_assert_eq!(valid, some_d_path_covers_exactly(&g, &h, &ep),
                    "edge-optimal and safe: valid selects iff some path with E_p is in D");
            }
            let lit = literal_valid(&a, &ep, true);
            prop_assert!(!lit || valid, "the fixpoint selects whatever the literal check selects");
            // explanations name covered dangerous edges
            for algo in ALL {
                let d = a.decide(algo, &ep, Order::Full);
                prop_assert!(d.dangerous_edges().iter().all(|e| ep.contains(e)));
            }
        }
        // a test that runs the procedure twice: the union of two executions
        let (p, q) = (&walks[0], &walks[1]);
        let union = edge_set(&[p, q]);
        if in_d(&g, &h, p) || in_d(&g, &h, q) {
            prop_assert!(a.selects(Algorithm::Valid, &union, Order::DominanceOnly));
            let mut ids = pn.split(&g, p).unwrap();
            ids.extend(pn.split(&g, q).unwrap());
            prop_assert!(decide_paths(&a, &pn, &ids, Order::DominanceOnly).unwrap().is_selected());
        }
    }
}
