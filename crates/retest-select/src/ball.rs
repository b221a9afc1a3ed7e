//! Ball's edge-coverage selection algorithms on the intersection graph (000 §3–§4).
//!
//! A CFG is a DFA over basic blocks and edge labels; the complete paths of the old
//! graph G that are also paths of the new graph G' need no re-testing
//! (`I(G, G')`), the others do (`D(G, G')`). The *intersection graph* G'' has a
//! vertex (v, v') for every pair of equivalent nodes reachable from (s, s') by
//! identically labelled edges, plus `accept` and `reject` (000 §3, Fig. 2). On it:
//!
//! * [`Algorithm::Rh`] — Rothermel/Harrold restated (§4.1): `D`, the transitions
//!   (v, l) that lead to `reject` from some vertex; a test is selected iff it
//!   covers one.
//! * [`Algorithm::Partial`] — partial-reachability (§4.2): `D_reject`, the
//!   transitions that leave `V''_accept`; same cost as RH, never less precise.
//! * [`Algorithm::Full`] — full-reachability (§4.3): is `reject` reachable from
//!   (s, s') in G''_p, the intersection graph restricted to the covered edges?
//! * [`Algorithm::Valid`] — valid-reachability (§4.4): full-reachability that
//!   ignores routes to `reject` no execution with exactly this coverage can take,
//!   using the order ⊑ on edges.
//!
//! [`PairAnalysis`] is built once per procedure pair; [`PairAnalysis::decide`]
//! answers for one test's coverage.
//!
//! Where this differs from the paper, and why:
//!
//! * G'' is kept implicitly (000 §3): the visited pairs and their index, O(|V''|)
//!   space; E'' is derived on demand by looking the successor pair up.
//! * `V''_accept` is computed by backward reachability from the vertices with an
//!   edge to `accept`. Figure 2 folds it into the DFS, which misses vertices
//!   whose only way to `accept` leads through a vertex still on the DFS stack.
//! * If (s, s') is not in `V''_accept`, every complete path is in `D(G, G')`, yet
//!   no transition *leaves* `V''_accept`: `D_reject` then holds every out-edge of
//!   the entry. If the entries are not equivalent (I(G, G') is empty, 000 §4
//!   footnote 7), every algorithm selects every test that covers any edge; the
//!   out-edges of the entry are reported as its transitions to `reject`, from the
//!   pseudo-vertex (s, s').
//! * Equivalent nodes need not have the same out-labels (a `switch` with an added
//!   case). A transition (v, l) from (v, v') goes to `reject` when v' has no
//!   `l`-edge, when l is `default` and v' has a case v lacks (values that took
//!   `default` may now take it), and — for any other difference in the label
//!   sets — for every l. This mirrors DejaVu's `Compare` (002 §3.1.4).
//! * The valid-reachability check is a greatest fixpoint, not §4.4's single test
//!   (see [`PairAnalysis::decide`]); ⊑'s reachability clause is evaluated within
//!   the covered edges, and comes in two strengths ([`Order`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use retest_graph::dom::EdgeDominators;
use retest_graph::reach::scc;
use retest_graph::{Cfg, EdgeId, EdgeLabel, NodeId};

/// A vertex (v, v') of the intersection graph: an old node and an equivalent new
/// node reached by the same label sequence.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Pair {
    /// v, a node of the old graph G.
    pub old: NodeId,
    /// v', a node of the new graph G'.
    pub new: NodeId,
}

/// Where a transition of the intersection graph leads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Target {
    /// Another vertex (w, w') of V''.
    Pair(Pair),
    /// Both graphs reach their exits: the path is in I(G, G').
    Accept,
    /// The successors differ: every path through this transition is in D(G, G').
    Reject,
}

/// An edge of the intersection graph: the old edge `edge` = (v, l) taken from
/// vertex `from` = (v, v').
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Transition {
    /// The vertex (v, v') the transition leaves.
    pub from: Pair,
    /// The old edge (v, l).
    pub edge: EdgeId,
    /// Where it leads.
    pub to: Target,
}

/// Which of Ball's edge-coverage algorithms to run (000 §4, Table 1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Algorithm {
    /// Rothermel/Harrold restated on G'' (§4.1).
    Rh,
    /// Partial-reachability (§4.2).
    Partial,
    /// Full-reachability (§4.3).
    Full,
    /// Valid-reachability, the edge-optimal algorithm (§4.4).
    Valid,
}

/// How much of the order ⊑ valid-reachability may use (000 §4.4).
///
/// `e ⊑ f` iff e dominates f, or f is reachable from e and e is not reachable
/// from f. The dominance clause holds for every walk from the entry. The
/// reachability clause only says that the *first* e precedes the *first* f in a
/// complete path that contains both: it is sound only when the covered edges
/// come from ONE complete execution of the procedure. Coverage that is the union
/// of several invocations (a test that calls the procedure twice, recursion,
/// several processes), or that over-approximates the executed edges, must use
/// [`Order::DominanceOnly`]. With dominance alone the fixpoint never removes an
/// edge (every route to an edge passes its dominators, which are then on the
/// route too), so valid-reachability selects exactly what full-reachability
/// selects.
///
/// Valid-reachability evaluates the reachability clause within the covered edges
/// (G_p, the graph an execution with this coverage moves in), not within all of
/// G as §4.4's constructive definition does: that is just as sound for one
/// execution, and it is what Theorem 3's proof needs — with G's reachability two
/// covered edges can be mutually reachable only through an edge the test never
/// took, and the algorithm is not edge-optimal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Order {
    /// Dominance and the reachability clause: only for single-execution coverage
    /// (Ball's examples).
    Full,
    /// The dominance clause alone: safe for any coverage.
    DominanceOnly,
}

/// The answer for one test.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Decision {
    /// The test cannot behave differently: every execution with this coverage is
    /// in I(G, G').
    Eliminated,
    /// The test must run again.
    Selected {
        /// The transitions responsible, as each algorithm sees them: RH the covered
        /// transitions to `reject`; partial-reachability the covered transitions
        /// leaving `V''_accept`; full- and valid-reachability the transitions to
        /// `reject` reachable from (s, s') along the (valid) covered routes. Sorted,
        /// without duplicates; never empty.
        because: Vec<Transition>,
    },
}

impl Decision {
    /// Whether the test is selected.
    pub fn is_selected(&self) -> bool {
        matches!(self, Decision::Selected { .. })
    }

    /// The old edges of the responsible transitions (the *dangerous edges* of
    /// this test), ascending, without duplicates.
    pub fn dangerous_edges(&self) -> Vec<EdgeId> {
        match self {
            Decision::Eliminated => Vec::new(),
            Decision::Selected { because } => {
                let mut v: Vec<EdgeId> = because.iter().map(|t| t.edge).collect();
                v.sort();
                v.dedup();
                v
            }
        }
    }
}

/// How the out-labels of v' relate to those of v, for an equivalent pair.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Compat {
    Same,
    /// v' has cases v lacks: `default` goes to `reject`.
    DefaultRejects,
    /// Any other label difference: every transition goes to `reject`.
    AllReject,
}

/// A transition target by vertex index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Step {
    State(u32),
    Accept,
    Reject,
}

/// Data for the order ⊑ on the old graph's edges, computed on first use.
struct OrderData {
    edom: EdgeDominators,
    /// Immediately dominating edge of each edge.
    idom: Vec<Option<EdgeId>>,
    /// Edges reachable from the entry, every edge after its dominators.
    dom_order: Vec<EdgeId>,
    /// The condensation of G.
    cond: Condensation,
}

/// The strongly connected components of a CFG restricted to some edges, and the
/// DAG between them.
struct Condensation {
    /// Component of each node; successors have smaller numbers.
    comp: Vec<u32>,
    /// Distinct successor components of each component.
    succ: Vec<Vec<u32>>,
}

impl Condensation {
    fn of(g: &Cfg, keep: impl Fn(EdgeId) -> bool) -> Condensation {
        let lists: Vec<Vec<u32>> =
            g.node_ids().map(|n| g.out_edges(n).filter(|e| keep(*e)).map(|e| g.edge(e).dst.0).collect()).collect();
        let comp = scc(&lists);
        let nc = comp.iter().map(|c| *c as usize + 1).max().unwrap_or(0);
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); nc];
        for (id, e) in g.edges() {
            let (a, b) = (comp[e.src.index()], comp[e.dst.index()]);
            if a != b && keep(id) {
                succ[a as usize].push(b);
            }
        }
        for s in &mut succ {
            s.sort_unstable();
            s.dedup();
        }
        Condensation { comp, succ }
    }

    /// The reachability clause of ⊑ for e ≠ f: f is reachable from e and e is not
    /// reachable from f. Both at once means all four end points lie in one
    /// component, so the second part is a component test.
    fn reach_clause(&self, g: &Cfg, e: EdgeId, f: EdgeId) -> bool {
        let (a, b) = (g.edge(e), g.edge(f));
        let c = |n: NodeId| self.comp[n.index()];
        if c(a.src) == c(a.dst) && c(a.dst) == c(b.src) && c(b.src) == c(b.dst) {
            return false;
        }
        // is comp(f.src) reachable from comp(e.dst)? Successors have smaller numbers.
        let (from, to) = (c(a.dst), c(b.src));
        let mut seen = vec![false; self.succ.len()];
        let mut stack = vec![from];
        seen[from as usize] = true;
        while let Some(k) = stack.pop() {
            if k == to {
                return true;
            }
            for &s in &self.succ[k as usize] {
                if s >= to && !seen[s as usize] {
                    seen[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        false
    }
}

/// The intersection graph of one procedure pair, with what every algorithm needs
/// precomputed: `V''`, `V''_accept`, `D` and `D_reject` (000 §3–§4.2).
pub struct PairAnalysis<'g> {
    old: &'g Cfg,
    new: &'g Cfg,
    entry_equivalent: bool,
    exit_equivalent: bool,
    /// V'' without `accept`/`reject`; vertex 0 is (s, s') when the entries are equivalent.
    pairs: Vec<Pair>,
    compat: Vec<Compat>,
    index: HashMap<Pair, u32>,
    /// Membership in `V''_accept`, per vertex.
    accepting: Vec<bool>,
    /// RH's `D` as transitions, sorted by edge.
    d: Vec<Transition>,
    /// `D_reject` as transitions, sorted by edge.
    d_reject: Vec<Transition>,
    order: OnceLock<OrderData>,
}

impl<'g> PairAnalysis<'g> {
    /// Builds the intersection graph of `old` (G) and `new` (G') by the
    /// synchronous depth-first search of 000 Fig. 2, with `equiv(v, v')` deciding
    /// whether old node v and new node v' are equivalent (`Equiv`, 000 §3).
    /// Whatever `equiv` says, an exit is equivalent only to an exit (000 §3,
    /// footnote 3). `equiv` is called O(|E''|) times and not kept.
    pub fn new(old: &'g Cfg, new: &'g Cfg, equiv: impl Fn(NodeId, NodeId) -> bool) -> PairAnalysis<'g> {
        let eq = |a: NodeId, b: NodeId| {
            let (ax, bx) = (a == old.exit(), b == new.exit());
            if ax || bx { ax && bx && equiv(a, b) } else { equiv(a, b) }
        };
        let (s, s2) = (old.entry(), new.entry());
        let entry_equivalent = eq(s, s2);
        let exit_equivalent = eq(old.exit(), new.exit());
        let mut a = PairAnalysis {
            old,
            new,
            entry_equivalent,
            exit_equivalent,
            pairs: Vec::new(),
            compat: Vec::new(),
            index: HashMap::new(),
            accepting: Vec::new(),
            d: Vec::new(),
            d_reject: Vec::new(),
            order: OnceLock::new(),
        };
        if entry_equivalent && s != old.exit() {
            a.insert(Pair { old: s, new: s2 });
            let mut stack = vec![0u32];
            while let Some(i) = stack.pop() {
                let Pair { old: v, new: v2 } = a.pairs[i as usize];
                let compat = a.compat[i as usize];
                for e in old.out_edges(v) {
                    let edge = old.edge(e);
                    if rejects(compat, &edge.label) {
                        continue;
                    }
                    let Some(w2) = new.succ_labelled(v2, &edge.label) else { continue };
                    let w = edge.dst;
                    let next = Pair { old: w, new: w2 };
                    if w == old.exit() || w2 == new.exit() || a.index.contains_key(&next) || !eq(w, w2) {
                        continue;
                    }
                    stack.push(a.insert(next));
                }
            }
        }
        a.classify();
        a
    }

    fn insert(&mut self, p: Pair) -> u32 {
        let i = self.pairs.len() as u32;
        self.pairs.push(p);
        self.compat.push(compat(self.old, self.new, p.old, p.new));
        self.index.insert(p, i);
        i
    }

    /// Computes `V''_accept`, `D` and `D_reject`.
    fn classify(&mut self) {
        let n = self.pairs.len();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut accepting = vec![false; n];
        let mut work = Vec::new();
        for i in 0..n as u32 {
            for e in self.old.out_edges(self.pairs[i as usize].old) {
                match self.step(i, e) {
                    Step::State(j) => preds[j as usize].push(i),
                    Step::Accept if !accepting[i as usize] => {
                        accepting[i as usize] = true;
                        work.push(i);
                    }
                    _ => {}
                }
            }
        }
        while let Some(j) = work.pop() {
            for &i in &preds[j as usize] {
                if !accepting[i as usize] {
                    accepting[i as usize] = true;
                    work.push(i);
                }
            }
        }
        self.accepting = accepting;
        let (s, s2) = (self.old.entry(), self.new.entry());
        if !self.entry_equivalent {
            let all: Vec<Transition> = self
                .old
                .out_edges(s)
                .map(|e| Transition { from: Pair { old: s, new: s2 }, edge: e, to: Target::Reject })
                .collect();
            self.d = all.clone();
            self.d_reject = all;
            return;
        }
        for i in 0..n as u32 {
            let from_accepting = self.accepting[i as usize];
            for e in self.old.out_edges(self.pairs[i as usize].old) {
                let st = self.step(i, e);
                let t = self.transition(i, e, st);
                if st == Step::Reject {
                    self.d.push(t);
                }
                let leaves = match st {
                    Step::Reject => from_accepting,
                    Step::State(j) => from_accepting && !self.accepting[j as usize],
                    Step::Accept => false,
                };
                // (s, s') outside V''_accept: every complete path is in D(G, G')
                if leaves || (i == 0 && !from_accepting) {
                    self.d_reject.push(t);
                }
            }
        }
        let key = |t: &Transition| (t.edge, t.from);
        self.d.sort_by_key(key);
        self.d_reject.sort_by_key(key);
    }

    /// The target of old edge `e` taken from vertex `i` (E'' derived on demand).
    pub(crate) fn step(&self, i: u32, e: EdgeId) -> Step {
        let Pair { new: v2, .. } = self.pairs[i as usize];
        let edge = self.old.edge(e);
        if rejects(self.compat[i as usize], &edge.label) {
            return Step::Reject;
        }
        let Some(w2) = self.new.succ_labelled(v2, &edge.label) else { return Step::Reject };
        let w = edge.dst;
        let (wx, w2x) = (w == self.old.exit(), w2 == self.new.exit());
        if wx || w2x {
            return if wx && w2x && self.exit_equivalent { Step::Accept } else { Step::Reject };
        }
        // every equivalent successor pair of a visited vertex was visited
        match self.index.get(&Pair { old: w, new: w2 }) {
            Some(&j) => Step::State(j),
            None => Step::Reject,
        }
    }

    pub(crate) fn transition(&self, i: u32, e: EdgeId, st: Step) -> Transition {
        Transition {
            from: self.pairs[i as usize],
            edge: e,
            to: match st {
                Step::State(j) => Target::Pair(self.pairs[j as usize]),
                Step::Accept => Target::Accept,
                Step::Reject => Target::Reject,
            },
        }
    }

    /// The start vertex (s, s'), if the entries are equivalent.
    pub(crate) fn start(&self) -> Option<u32> {
        (!self.pairs.is_empty()).then_some(0)
    }

    /// The vertex index of a pair.
    pub(crate) fn state(&self, p: Pair) -> Option<u32> {
        self.index.get(&p).copied()
    }

    /// The old graph G.
    pub fn old(&self) -> &'g Cfg {
        self.old
    }

    /// The new graph G'.
    pub fn new_graph(&self) -> &'g Cfg {
        self.new
    }

    /// Whether the entries are equivalent. If not, I(G, G') is empty and every
    /// test that executed the procedure is selected.
    pub fn entry_equivalent(&self) -> bool {
        self.entry_equivalent
    }

    /// The vertices of V'' other than `accept` and `reject`, (s, s') first.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// The transition of E'' for old edge `e` from vertex `from`; `None` if
    /// `from` is not in V'' or `e` does not leave `from.old`.
    pub fn step_from(&self, from: Pair, e: EdgeId) -> Option<Target> {
        let i = self.state(from)?;
        if e.index() >= self.old.edge_count() || self.old.edge(e).src != from.old {
            return None;
        }
        Some(self.transition(i, e, self.step(i, e)).to)
    }

    /// The new node a transition reaches in G' (`succ(v', l)`), if any — with the
    /// old target, what an explanation of a transition to `reject` compares.
    pub fn new_successor(&self, t: &Transition) -> Option<NodeId> {
        if t.edge.index() >= self.old.edge_count() || t.from.new.index() >= self.new.node_count() {
            return None;
        }
        self.new.succ_labelled(t.from.new, &self.old.edge(t.edge).label)
    }

    /// `V''_accept`: the vertices from which `accept` is reachable (000 Fig. 2).
    pub fn accepting(&self) -> impl Iterator<Item = Pair> + '_ {
        self.pairs.iter().zip(&self.accepting).filter(|(_, a)| **a).map(|(p, _)| *p)
    }

    /// Whether vertex `p` is in `V''_accept`.
    pub fn is_accepting(&self, p: Pair) -> bool {
        self.state(p).is_some_and(|i| self.accepting[i as usize])
    }

    /// Old nodes paired with more than one new node — Rothermel and Harrold's
    /// "multiply-visited vertices" (000 §4.1). Without them RH is optimal.
    pub fn multiply_visited(&self) -> Vec<NodeId> {
        let mut olds: Vec<NodeId> = self.pairs.iter().map(|p| p.old).collect();
        olds.sort();
        let mut out: Vec<NodeId> = olds.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        out.dedup();
        out
    }

    /// RH's `D` (000 §4.1) as transitions of G'' to `reject`, sorted by edge.
    pub fn d(&self) -> &[Transition] {
        &self.d
    }

    /// `D_reject` (000 §4.2) as the transitions of G'' that leave `V''_accept`,
    /// sorted by edge.
    pub fn d_reject(&self) -> &[Transition] {
        &self.d_reject
    }

    /// Whether the test is selected; see [`PairAnalysis::decide`].
    pub fn selects(&self, algorithm: Algorithm, covered: &[EdgeId], order: Order) -> bool {
        self.decide(algorithm, covered, order).is_selected()
    }

    /// Decides one test from `covered`, the edges of G its execution(s) of the
    /// procedure traversed (ids out of range are ignored). `order` matters only
    /// for [`Algorithm::Valid`].
    ///
    /// Valid-reachability (000 §4.4) computes R, the covered edges on routes from
    /// (s, s') to `reject` in G''_p, and the paper eliminates the test as soon as
    /// some covered e ∉ R precedes some f ∈ R (e ⊑ f). That single check is
    /// unsafe: f may lie on one route that no execution can take while another
    /// route, which respects ⊑, is taken by a path in D(G, G') with the same
    /// coverage. Here the check is a greatest fixpoint: remove from R every f
    /// preceded by a covered edge outside R, recompute the routes using only what
    /// is left, and repeat; the test is eliminated only when no route to `reject`
    /// survives. The edges of any execution's route to `reject` are never removed
    /// (they are closed under ⊑), so no test in D(G, G') is dropped; and the
    /// surviving set is closed, which is what Theorem 3 needs. With
    /// [`Order::Full`] the result is edge-optimal — checked against exhaustive
    /// search on random small graphs: selected iff some complete path with exactly
    /// these edges is in D(G, G').
    pub fn decide(&self, algorithm: Algorithm, covered: &[EdgeId], order: Order) -> Decision {
        let set = self.edge_set(covered);
        if !self.entry_equivalent {
            if covered.iter().all(|e| e.index() >= self.old.edge_count()) {
                return Decision::Eliminated;
            }
            let hit: Vec<Transition> = self.d.iter().filter(|t| set[t.edge.index()]).copied().collect();
            return selected(if hit.is_empty() { self.d.clone() } else { hit });
        }
        match algorithm {
            Algorithm::Rh => selected(self.d.iter().filter(|t| set[t.edge.index()]).copied().collect()),
            Algorithm::Partial => selected(self.d_reject.iter().filter(|t| set[t.edge.index()]).copied().collect()),
            Algorithm::Full => selected(self.routes(&set).rejects),
            Algorithm::Valid => match self.valid_routes(&set, order) {
                Some(r) => selected(r.rejects),
                None => Decision::Eliminated,
            },
        }
    }

    /// R (000 §4.4): the covered edges on some route from (s, s') to `reject` in
    /// G''_p, ascending. Empty iff full-reachability eliminates the test.
    pub fn reject_routes(&self, covered: &[EdgeId]) -> Vec<EdgeId> {
        let r = self.routes(&self.edge_set(covered));
        r.edges.iter().enumerate().filter(|(_, b)| **b).map(|(i, _)| EdgeId(i as u32)).collect()
    }

    /// Whether `e ⊑ f` in G (000 §4.4): e dominates f, or — with
    /// [`Order::Full`] — f is reachable from e and e is not reachable from f.
    /// Reflexive; false for ids out of range.
    pub fn precedes(&self, e: EdgeId, f: EdgeId, order: Order) -> bool {
        self.precedes_with(e, f, order, &self.order_data().cond)
    }

    /// Whether `e ⊑_p f`: as [`PairAnalysis::precedes`], with reachability taken
    /// within the covered edges (the graph G_p an execution with this coverage
    /// moves in) — the order valid-reachability uses.
    pub fn precedes_within(&self, e: EdgeId, f: EdgeId, order: Order, covered: &[EdgeId]) -> bool {
        let set = self.edge_set(covered);
        let cond = Condensation::of(self.old, |x| set[x.index()]);
        self.precedes_with(e, f, order, &cond)
    }

    fn precedes_with(&self, e: EdgeId, f: EdgeId, order: Order, cond: &Condensation) -> bool {
        let m = self.old.edge_count();
        if e.index() >= m || f.index() >= m {
            return false;
        }
        if e == f {
            return true;
        }
        if self.order_data().edom.edge_dominates(e, f) {
            return true;
        }
        order == Order::Full && cond.reach_clause(self.old, e, f)
    }

    fn edge_set(&self, covered: &[EdgeId]) -> Vec<bool> {
        let mut set = vec![false; self.old.edge_count()];
        for e in covered {
            if let Some(b) = set.get_mut(e.index()) {
                *b = true;
            }
        }
        set
    }

    /// The routes from (s, s') to `reject` using only `allowed` edges.
    fn routes(&self, allowed: &[bool]) -> Routes {
        let mut out = Routes { edges: vec![false; self.old.edge_count()], rejects: Vec::new() };
        let Some(start) = self.start() else { return out };
        let n = self.pairs.len();
        let mut seen = vec![false; n];
        seen[start as usize] = true;
        let mut stack = vec![start];
        // reachable transitions between vertices, and the vertices with a reject
        let mut inner: Vec<(u32, EdgeId, u32)> = Vec::new();
        let mut co = vec![false; n];
        let mut work = Vec::new();
        while let Some(i) = stack.pop() {
            for e in self.old.out_edges(self.pairs[i as usize].old) {
                if !allowed[e.index()] {
                    continue;
                }
                match self.step(i, e) {
                    Step::State(j) => {
                        inner.push((i, e, j));
                        if !seen[j as usize] {
                            seen[j as usize] = true;
                            stack.push(j);
                        }
                    }
                    Step::Reject => {
                        out.rejects.push(self.transition(i, e, Step::Reject));
                        out.edges[e.index()] = true;
                        if !co[i as usize] {
                            co[i as usize] = true;
                            work.push(i);
                        }
                    }
                    Step::Accept => {}
                }
            }
        }
        if out.rejects.is_empty() {
            return out;
        }
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(i, _, j) in &inner {
            preds[j as usize].push(i);
        }
        while let Some(j) = work.pop() {
            for &i in &preds[j as usize] {
                if !co[i as usize] {
                    co[i as usize] = true;
                    work.push(i);
                }
            }
        }
        for &(_, e, j) in &inner {
            if co[j as usize] {
                out.edges[e.index()] = true;
            }
        }
        out
    }

    /// The greatest fixpoint of valid-reachability: the surviving routes, or
    /// `None` if none survives (the test is eliminated).
    pub(crate) fn valid_routes(&self, covered: &[bool], order: Order) -> Option<Routes> {
        let cond = (order == Order::Full).then(|| Condensation::of(self.old, |e| covered[e.index()]));
        let mut allowed = covered.to_vec();
        loop {
            let r = self.routes(&allowed);
            if r.rejects.is_empty() {
                return None;
            }
            let outside: Vec<bool> = covered.iter().zip(&r.edges).map(|(c, r)| *c && !*r).collect();
            let remove = self.preceded(&r.edges, &outside, cond.as_ref());
            if remove.is_empty() {
                return Some(r);
            }
            allowed = r.edges;
            for f in remove {
                allowed[f.index()] = false;
            }
        }
    }

    /// The edges f with `inside[f]` for which some e with `outside[e]` has
    /// e ⊑ f (`inside` and `outside` are disjoint); the reachability clause is
    /// evaluated on `cond` if given.
    fn preceded(&self, inside: &[bool], outside: &[bool], cond: Option<&Condensation>) -> Vec<EdgeId> {
        let od = self.order_data();
        let m = self.old.edge_count();
        // dominance: an outside edge among f's dominating edges
        let mut dominated = vec![false; m];
        for &f in &od.dom_order {
            if let Some(p) = od.idom[f.index()] {
                dominated[f.index()] = dominated[p.index()] || outside[p.index()];
            }
        }
        // reachability clause, on the condensation: `reach[k]` — component k is
        // reachable from the target of an outside edge; `strict[k]` — from one
        // whose source lies outside component k, or through another component
        let nc = cond.map_or(0, |c| c.succ.len());
        let (mut reach, mut strict) = (vec![false; nc], vec![false; nc]);
        if let Some(c) = cond {
            for (i, _) in outside.iter().enumerate().filter(|(_, o)| **o) {
                let edge = self.old.edge(EdgeId(i as u32));
                let k = c.comp[edge.dst.index()] as usize;
                reach[k] = true;
                if c.comp[edge.src.index()] as usize != k {
                    strict[k] = true;
                }
            }
            for k in (0..nc).rev() {
                if reach[k] {
                    for &s in &c.succ[k] {
                        reach[s as usize] = true;
                        strict[s as usize] = true;
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (i, _) in inside.iter().enumerate().filter(|(_, b)| **b) {
            let edge = self.old.edge(EdgeId(i as u32));
            let by_reach = cond.is_some_and(|c| {
                let (cs, cd) = (c.comp[edge.src.index()] as usize, c.comp[edge.dst.index()] as usize);
                if cs == cd { strict[cs] } else { reach[cs] }
            });
            if dominated[i] || by_reach {
                out.push(EdgeId(i as u32));
            }
        }
        out
    }

    fn order_data(&self) -> &OrderData {
        self.order.get_or_init(|| {
            let g = self.old;
            let edom = EdgeDominators::compute(g);
            let idom: Vec<Option<EdgeId>> = g.edges().map(|(id, _)| edom.idom_edge(id)).collect();
            let mut children: Vec<Vec<EdgeId>> = vec![Vec::new(); g.edge_count()];
            let mut dom_order: Vec<EdgeId> = Vec::new();
            for (id, _) in g.edges() {
                match idom[id.index()] {
                    Some(p) => children[p.index()].push(id),
                    None if edom.edge_reachable(id) => dom_order.push(id),
                    None => {}
                }
            }
            let mut k = 0;
            while k < dom_order.len() {
                let e = dom_order[k];
                dom_order.extend_from_slice(&children[e.index()]);
                k += 1;
            }
            OrderData { edom, idom, dom_order, cond: Condensation::of(g, |_| true) }
        })
    }
}

/// Routes to `reject` in a restricted intersection graph.
pub(crate) struct Routes {
    /// R: the old edges on some route from (s, s') to `reject`.
    pub(crate) edges: Vec<bool>,
    /// The reachable transitions to `reject`.
    pub(crate) rejects: Vec<Transition>,
}

/// `Selected` with the transitions sorted, or `Eliminated` if there are none.
pub(crate) fn selected(mut because: Vec<Transition>) -> Decision {
    if because.is_empty() {
        return Decision::Eliminated;
    }
    because.sort_by_key(|t| (t.edge, t.from));
    because.dedup();
    Decision::Selected { because }
}

fn rejects(c: Compat, label: &EdgeLabel) -> bool {
    match c {
        Compat::Same => false,
        Compat::DefaultRejects => *label == EdgeLabel::Default,
        Compat::AllReject => true,
    }
}

fn compat(old: &Cfg, new: &Cfg, v: NodeId, v2: NodeId) -> Compat {
    let mut extra_case = false;
    for l in new.out_labels(v2) {
        if old.out_edge_labelled(v, l).is_none() {
            match l {
                EdgeLabel::Case(_) => extra_case = true,
                _ => return Compat::AllReject,
            }
        }
    }
    if !extra_case {
        Compat::Same
    } else if old.out_edge_labelled(v, &EdgeLabel::Default).is_some() {
        Compat::DefaultRejects
    } else {
        Compat::AllReject
    }
}
