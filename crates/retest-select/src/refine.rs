//! Ball's edge-coverage algorithms (000 §4) on whole programs: re-deciding the
//! tests DejaVu selects.
//!
//! 000 §6 leaves interprocedural control flow open. Here each algorithm runs per
//! procedure pair, on the statement-level CFGs and with the node equivalence of
//! [`crate::equiv`] that DejaVu uses; a test is selected when the algorithm
//! selects it in some procedure, or when DejaVu selects it for a reason that is
//! not about edges (an entry that is not equivalent: changed signature, compile
//! flags, an unanalysable or removed procedure). Such procedures are
//! [`PairWalk::whole`](crate::PairWalk::whole) and keep DejaVu's reasons.
//!
//! Why this is safe. Take the first point at which a test's new run departs from
//! its old run. It lies in some invocation of some procedure P whose state on
//! entry was the same in both runs, and the path that invocation took in the old
//! CFG is in D(G_P, G'_P) (000 §3). Its edges are in the test's coverage of P.
//!
//! * A test's coverage of P is the **union** of all its invocations (recursion,
//!   loops calling P, several processes) and may over-approximate through
//!   unprobed nodes. RH, partial- and full-reachability are monotone in the
//!   covered edges and safe for each invocation, hence for the union: the prefix
//!   of the departing invocation up to `reject` uses covered edges only (full),
//!   and it must leave `V''_accept` through a covered transition (partial).
//! * Valid-reachability's order ⊑ (000 §4.4) has a reachability clause about the
//!   *first* occurrences of edges in *one* complete path. For a union it is
//!   false: a test that runs Fig. 5's procedure once along [U, A, f, V] (in D)
//!   and once along [U, A, t, A, f, V] (in I) covers exactly the edges of the
//!   second path, which valid-reachability with the full order eliminates. So
//!   valid-reachability runs with [`Order::DominanceOnly`] ([`ORDER`]); with
//!   dominance alone its fixpoint removes nothing, and it decides as
//!   full-reachability does. No edge-coverage algorithm can do better on unions:
//!   a test that ran once along the second path has the same coverage.
//!
//! Which pairs are analysed. Only DejaVu's selected tests are re-decided, each
//! only in the pairs where it covers one of DejaVu's dangerous edges. That loses
//! no departure: the departing invocation's route in G'' crosses a transition to
//! `reject` in the part of G'' DejaVu walked, which is one of DejaVu's dangerous
//! edges of the pair. (The interprocedural walk, 002 §3.2, does not walk past a
//! statement every route through which calls a *selectsall* procedure; a route
//! past such a statement completed that call, and every completed call of a
//! *selectsall* procedure departs inside it or inside a deeper *selectsall*
//! call — by induction on the order in which procedures became *selectsall* —
//! so the first departure is never past one.)
//! There every algorithm, safe for one invocation and monotone in the covered
//! edges, selects the test. So each algorithm selects a subset of DejaVu's tests.
//!
//! Path coverage (000 §5, [`crate::paths`]) fits the same frame
//! ([`refine_with_paths`]): where a test's acyclic paths through a procedure
//! were recorded, and none was cut off, they are exactly its executions there
//! split at back edges; it is eliminated when none of them, started from every
//! G'' vertex it may start in, reaches `reject`. Unlike edge coverage this is
//! not blind to unions: each path is one stretch of one execution.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;

use retest_graph::{EdgeId, EdgeLabel, NodeId};
use roaring::RoaringBitmap;

use crate::affected::Affected;
use retest_graph::pathnum::PathNumbering;

use crate::ball::{Algorithm, Decision, Order, PairAnalysis, Step, Target, Transition};
use crate::dejavu::Outcome;
use crate::equiv::{Ctx, at};
use crate::paths::decide_paths;
use crate::program::{ProcRef, Program};
use crate::reason::{At, Reason, ReasonKind, quote};

/// The order valid-reachability uses on stored coverage: dominance only, since
/// a test's coverage of a procedure is the union of all its executions of it
/// (see the module documentation).
pub const ORDER: Order = Order::DominanceOnly;

/// The name of an algorithm as the paper gives it.
pub fn algorithm_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Rh => "RH",
        Algorithm::Partial => "partial-reachability",
        Algorithm::Full => "full-reachability",
        Algorithm::Valid => "valid-reachability",
    }
}

/// A control transition (v, l) of a version, located: the statement v and the
/// label l of the edge taken out of it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Branch {
    pub at: At,
    /// The edge label (`T`, `F`, `case 3`, …; `ε` for a statement's only edge).
    pub label: String,
}

impl fmt::Display for Branch {
    /// `file:line `text` → T` (the arrow only for labelled edges).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.at)?;
        if !self.at.text.is_empty() {
            write!(f, " {}", quote(&self.at.text))?;
        }
        if self.label != "ε" {
            write!(f, " → {}", self.label)?;
        }
        Ok(())
    }
}

/// One reason a test is selected.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Why {
    /// The old procedure.
    pub procedure: ProcRef,
    /// The old statement-level edge the algorithm holds responsible.
    pub edge: EdgeId,
    /// Set when that edge is not itself a transition to `reject` but leaves
    /// `V''_accept` (partial-reachability, 000 §4.2): every path from there
    /// reaches a change, the one in `reason` for instance.
    pub via: Option<Branch>,
    /// The change: what differs, where in both versions.
    pub reason: Reason,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.via {
            None => write!(f, "{}", self.reason),
            Some(b) => write!(f, "after {b} every path reaches a change: {}", self.reason),
        }
    }
}

/// Why an algorithm eliminates, in one procedure, a test DejaVu selects there.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Elimination {
    pub algorithm: Algorithm,
    /// The procedure's key.
    pub procedure: String,
    pub detail: Detail,
}

/// The facts behind an [`Elimination`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Detail {
    /// Path coverage (000 §5): none of the test's recorded acyclic paths of the
    /// procedure, run through G'' from every vertex it may start in, reaches
    /// `reject`.
    NoPathReaches { paths: usize },
    /// Partial-reachability: every path to `reject` leaves `V''_accept` through
    /// one of `exits` (`D_reject`), and the test covered none of them; the
    /// dangerous edges it covers lead to `reject` only from states outside
    /// `V''_accept`.
    NotLeaving { dangerous: Vec<Branch>, exits: Vec<Branch> },
    /// Full- or valid-reachability: `reject` is not reachable from (s, s') along
    /// the covered edges. Per dangerous edge the test covers: the new nodes v'
    /// from which the transition leads to `reject`, and the ones the covered
    /// edges pair the old node with instead.
    Unreached { contexts: Vec<Context> },
}

/// Where a covered dangerous edge (v, l) leads to `reject`, and where the
/// covered edges take the new version instead.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Context {
    pub branch: Branch,
    /// New nodes v' with (v, v') →l `reject` in G''.
    pub rejecting: Vec<At>,
    /// New nodes v' with (v, v') reachable from (s, s') along covered edges.
    pub reached: Vec<At>,
}

/// A node as `file:line `text``.
struct Located<'a>(&'a At);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        if !self.0.text.is_empty() {
            write!(f, " {}", quote(&self.0.text))?;
        }
        Ok(())
    }
}

/// At most this many items of a list are spelled out in an explanation.
const SHOWN: usize = 3;

fn list<T: fmt::Display>(items: &[T]) -> String {
    let mut s: Vec<String> = items.iter().take(SHOWN).map(|i| i.to_string()).collect();
    if items.len() > SHOWN {
        s.push(format!("{} more", items.len() - SHOWN));
    }
    s.join(", ")
}

impl fmt::Display for Elimination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Detail::NoPathReaches { paths } = &self.detail {
            return write!(
                f,
                "path coverage, in `{}`: none of the {paths} acyclic path(s) the test took, run from every state in \
                 which it may start, reaches the change",
                self.procedure
            );
        }
        write!(f, "{}, in `{}`: ", algorithm_name(self.algorithm), self.procedure)?;
        match &self.detail {
            Detail::NoPathReaches { .. } => Ok(()),
            Detail::NotLeaving { dangerous, exits } => write!(
                f,
                "every path to the change first leaves the states from which the new version can still finish as \
                 the old one (V''_accept) through {}; the test took none of these, so its dangerous edges ({}) \
                 cannot lead it to the change",
                list(exits),
                list(dangerous)
            ),
            Detail::Unreached { contexts } => {
                for (i, c) in contexts.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    if c.rejecting.is_empty() {
                        write!(
                            f,
                            "the dangerous edge {} leads to no change from any matching new statement",
                            c.branch
                        )?;
                    } else {
                        let located: Vec<Located> = c.rejecting.iter().map(Located).collect();
                        let reached: Vec<Located> = c.reached.iter().map(Located).collect();
                        write!(
                            f,
                            "the dangerous edge {} leads to the change only where the new version is at {}; along \
                             the edges this test covered, old {} corresponds only to new {}",
                            c.branch,
                            list(&located),
                            c.branch.at,
                            if reached.is_empty() { "nothing".to_string() } else { list(&reached) }
                        )?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// The decision for one test DejaVu selects.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Still selected, with the reasons (by procedure and edge, no two with the same text).
    Selected(Vec<Why>),
    /// Eliminated: why, per procedure in which DejaVu selects it.
    Eliminated(Vec<Elimination>),
}

/// The outcome of [`refine`].
#[derive(Clone, Debug, Default)]
pub struct Refinement {
    /// Per test DejaVu selects (by id): the algorithm's verdict.
    pub verdicts: BTreeMap<u32, Verdict>,
    /// Procedure pairs whose intersection graph was built.
    pub pairs_analysed: usize,
}

/// What is known of a test's paths through an old procedure, for path-based
/// selection ([`refine_with_paths`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum PathData {
    /// Every acyclic path (Ball–Larus number in the old procedure's
    /// statement-level numbering) its executions of the procedure took.
    Recorded(Vec<u64>),
    /// No usable path record, and why: selection uses edge coverage there.
    Unavailable(String),
}

/// Re-decides every test DejaVu selects with one of Ball's algorithms.
///
/// `by_test` is [`crate::tests_for`] of `outcome.dangerous` (test → indexes of
/// the dangerous edges it traversed); `tests_on_edge(unit, edge)` is
/// `TestsOnEdge` for a condition-level edge numbered unit-wide, as for
/// `tests_for`.
pub fn refine(
    old: &Program<'_>,
    new: &Program<'_>,
    outcome: &Outcome,
    by_test: &BTreeMap<u32, Vec<usize>>,
    algorithm: Algorithm,
    tests_on_edge: &mut dyn FnMut(usize, u32) -> RoaringBitmap,
) -> Refinement {
    refine_impl(old, new, outcome, by_test, algorithm, tests_on_edge, None)
}

/// Path-based selection (000 §5, [`crate::paths::decide_paths`]): like
/// [`refine`] with valid-reachability, but where `paths(procedure, test)` has
/// the test's recorded paths through an old procedure, the test is eliminated
/// there unless one of them reaches `reject` — and valid-reachability on their
/// edges must select it too. Where paths are unavailable (not recorded, or cut
/// off by `exit`, `longjmp`, a signal), the procedure is decided on edges.
pub fn refine_with_paths(
    old: &Program<'_>,
    new: &Program<'_>,
    outcome: &Outcome,
    by_test: &BTreeMap<u32, Vec<usize>>,
    tests_on_edge: &mut dyn FnMut(usize, u32) -> RoaringBitmap,
    paths: &mut dyn FnMut(ProcRef, u32) -> PathData,
) -> Refinement {
    refine_impl(old, new, outcome, by_test, Algorithm::Valid, tests_on_edge, Some(paths))
}

fn refine_impl(
    old: &Program<'_>,
    new: &Program<'_>,
    outcome: &Outcome,
    by_test: &BTreeMap<u32, Vec<usize>>,
    algorithm: Algorithm,
    tests_on_edge: &mut dyn FnMut(usize, u32) -> RoaringBitmap,
    mut paths: Option<&mut dyn FnMut(ProcRef, u32) -> PathData>,
) -> Refinement {
    let ctx = Ctx::new(old, new);
    let analysable: HashMap<ProcRef, ProcRef> =
        outcome.walks.iter().filter(|w| !w.whole).filter_map(|w| Some((w.old?, w.new?))).collect();
    let mut whys: BTreeMap<u32, Vec<Why>> = BTreeMap::new();
    let mut eliminations: BTreeMap<u32, Vec<Elimination>> = BTreeMap::new();
    // per analysable procedure: the tests to decide and the dangerous edges each covers there
    let mut per_proc: BTreeMap<ProcRef, BTreeMap<u32, Vec<EdgeId>>> = BTreeMap::new();
    for (&t, ds) in by_test {
        for &i in ds {
            let d = &outcome.dangerous[i];
            if analysable.contains_key(&d.procedure) {
                per_proc.entry(d.procedure).or_default().entry(t).or_default().push(d.edge);
            } else {
                whys.entry(t).or_default().push(Why {
                    procedure: d.procedure,
                    edge: d.edge,
                    via: None,
                    reason: d.reason.clone(),
                });
            }
        }
    }
    let mut bases: HashMap<usize, Vec<u32>> = HashMap::new();
    let pairs_analysed = per_proc.len();
    for (o, tests) in per_proc {
        let n = analysable[&o];
        let (po, pn) = (old.procedure(o), new.procedure(n));
        let locals = ctx.locals(o, n);
        let pair = PairCtx { ctx: &ctx, o, n, locals: &locals };
        let analysis = PairAnalysis::new(&po.stmt, &pn.stmt, |v, v2| pair.equivalent(v, v2));
        let ids: RoaringBitmap = tests.keys().copied().collect();
        let base = bases.entry(o.unit).or_insert_with(|| old.units[o.unit].unit.edge_bases())[o.proc];
        let covered = covered_edges(old, o, base, &ids, tests_on_edge);
        let numbering = paths.as_ref().and_then(|_| PathNumbering::new(&po.stmt).ok());
        for (t, dangerous) in tests {
            let cov = covered.get(&t).map(Vec::as_slice).unwrap_or(&[]);
            let recorded = match (&mut paths, &numbering) {
                (Some(f), Some(n)) => match f(o, t) {
                    // the paths must explain every covered edge, else they are not all of the test's
                    PathData::Recorded(ids) if explains(n, &po.stmt, &ids, cov) => Some(ids),
                    PathData::Recorded(_) | PathData::Unavailable(_) => None,
                },
                _ => None,
            };
            let decision = match (&recorded, &numbering) {
                (Some(ids), Some(n)) => {
                    decide_paths(&analysis, n, ids, ORDER).unwrap_or_else(|_| decide(&analysis, algorithm, cov))
                }
                _ => decide(&analysis, algorithm, cov),
            };
            match decision {
                Decision::Selected { because } => {
                    let w = whys.entry(t).or_default();
                    for tr in &because {
                        w.push(pair.why(&analysis, tr, cov));
                    }
                }
                Decision::Eliminated => {
                    let e = match &recorded {
                        Some(ids) => Elimination {
                            algorithm,
                            procedure: pair.ctx.keys.key(old, o),
                            detail: Detail::NoPathReaches { paths: ids.len() },
                        },
                        None => pair.elimination(&analysis, algorithm, cov, &dangerous),
                    };
                    eliminations.entry(t).or_default().push(e)
                }
            }
        }
    }
    let mut verdicts = BTreeMap::new();
    for &t in by_test.keys() {
        let v = match whys.remove(&t) {
            Some(mut w) if !w.is_empty() => {
                w.sort_by_key(|x| (x.procedure, x.edge, x.to_string()));
                let mut seen = BTreeSet::new();
                w.retain(|x| seen.insert(x.to_string()));
                Verdict::Selected(w)
            }
            _ => Verdict::Eliminated(eliminations.remove(&t).unwrap_or_default()),
        };
        verdicts.insert(t, v);
    }
    Refinement { verdicts, pairs_analysed }
}

/// Whether the acyclic paths `ids` decode (in numbering `n` of `g`) and their
/// edges include every edge of `covered`.
fn explains(n: &PathNumbering, g: &retest_graph::Cfg, ids: &[u64], covered: &[EdgeId]) -> bool {
    let mut walked = BTreeSet::new();
    for &id in ids {
        match n.decode(g, id) {
            Some(p) => walked.extend(p.edges),
            None => return false,
        }
    }
    covered.iter().all(|e| walked.contains(e))
}

/// One test in one procedure pair: `covered` are the old statement-level edges
/// its executions of the procedure traversed (their union).
pub fn decide(analysis: &PairAnalysis<'_>, algorithm: Algorithm, covered: &[EdgeId]) -> Decision {
    analysis.decide(algorithm, covered, ORDER)
}

/// Per test of `tests`: the statement-level edges of old procedure `o` it
/// traversed (a statement-level edge is traversed when a condition-level edge
/// mapping onto it is), ascending.
fn covered_edges(
    old: &Program<'_>,
    o: ProcRef,
    base: u32,
    tests: &RoaringBitmap,
    tests_on_edge: &mut dyn FnMut(usize, u32) -> RoaringBitmap,
) -> HashMap<u32, Vec<EdgeId>> {
    let p = old.procedure(o);
    let mut out: HashMap<u32, Vec<EdgeId>> = HashMap::new();
    for (fine, coarse) in p.map.edge.iter().enumerate() {
        let Some(c) = coarse else { continue };
        let on = tests_on_edge(o.unit, base + fine as u32) & tests;
        for t in on.iter() {
            out.entry(t).or_default().push(*c);
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

/// A procedure pair with what comparing its nodes needs.
struct PairCtx<'c, 'p, 'a> {
    ctx: &'c Ctx<'p, 'a>,
    o: ProcRef,
    n: ProcRef,
    locals: &'c Affected,
}

impl PairCtx<'_, '_, '_> {
    /// `Equiv(v, v')` (000 §3) as DejaVu's `Equivalent` (002 §3.1): entries by
    /// signature and flags, other nodes by [`Ctx::difference`].
    fn equivalent(&self, v: NodeId, v2: NodeId) -> bool {
        let (po, pn) = (self.ctx.old.procedure(self.o), self.ctx.new.procedure(self.n));
        let (s, s2) = (po.stmt.entry(), pn.stmt.entry());
        if v == s || v2 == s2 {
            return v == s && v2 == s2 && self.ctx.entry_difference(self.o, self.n).is_none();
        }
        self.ctx.difference(self.o, v, self.n, v2, self.locals).is_none()
    }

    fn old_at(&self, v: NodeId) -> At {
        at(self.ctx.old, &self.ctx.keys, self.o, v)
    }

    fn new_at(&self, v: NodeId) -> At {
        at(self.ctx.new, &self.ctx.keys, self.n, v)
    }

    fn branch(&self, analysis: &PairAnalysis<'_>, e: EdgeId) -> Branch {
        let edge = analysis.old().edge(e);
        Branch { at: self.old_at(edge.src), label: edge.label.to_string() }
    }

    /// Why a transition to `reject` rejects, as DejaVu's `Compare` would say it.
    fn reject_reason(&self, analysis: &PairAnalysis<'_>, t: &Transition) -> Reason {
        let (g, h) = (analysis.old(), analysis.new_graph());
        let (v, v2) = (t.from.old, t.from.new);
        let edge = g.edge(t.edge);
        let here = |kind| Reason { kind, old: Some(self.old_at(v)), new: Some(self.new_at(v2)) };
        let mut extra_case: Option<&str> = None;
        let mut other = false;
        for l in h.out_labels(v2) {
            if g.out_edge_labelled(v, l).is_none() {
                match l {
                    EdgeLabel::Case(c) => extra_case = extra_case.or(Some(c.as_str())),
                    _ => other = true,
                }
            }
        }
        let has_default = g.out_edge_labelled(v, &EdgeLabel::Default).is_some();
        if other || (extra_case.is_some() && !has_default) {
            return here(ReasonKind::Structure);
        }
        if let (Some(c), EdgeLabel::Default) = (extra_case, &edge.label) {
            return here(ReasonKind::CaseAdded(c.to_string()));
        }
        let Some(w2) = h.succ_labelled(v2, &edge.label) else {
            let l = match &edge.label {
                EdgeLabel::Case(c) => c.clone(),
                other => other.to_string(),
            };
            return here(ReasonKind::CaseRemoved(l));
        };
        let kind = self.ctx.difference(self.o, edge.dst, self.n, w2, self.locals).unwrap_or(ReasonKind::Modified);
        Reason { kind, old: Some(self.old_at(edge.dst)), new: Some(self.new_at(w2)) }
    }

    /// The reason for one transition an algorithm holds responsible.
    fn why(&self, analysis: &PairAnalysis<'_>, t: &Transition, covered: &[EdgeId]) -> Why {
        match t.to {
            Target::Reject => {
                Why { procedure: self.o, edge: t.edge, via: None, reason: self.reject_reason(analysis, t) }
            }
            Target::Pair(p) => {
                let reason = match nearest_reject(analysis, p, covered) {
                    Some(r) => self.reject_reason(analysis, &r),
                    None => Reason { kind: ReasonKind::Modified, old: Some(self.old_at(p.old)), new: None },
                };
                Why { procedure: self.o, edge: t.edge, via: Some(self.branch(analysis, t.edge)), reason }
            }
            Target::Accept => Why {
                procedure: self.o,
                edge: t.edge,
                via: Some(self.branch(analysis, t.edge)),
                reason: Reason { kind: ReasonKind::Modified, old: Some(self.old_at(t.from.old)), new: None },
            },
        }
    }

    /// Why `algorithm` eliminates a test that covers DejaVu's dangerous edges
    /// `dangerous` of this procedure.
    fn elimination(
        &self,
        analysis: &PairAnalysis<'_>,
        algorithm: Algorithm,
        covered: &[EdgeId],
        dangerous: &[EdgeId],
    ) -> Elimination {
        let mut dangerous = dangerous.to_vec();
        dangerous.sort();
        dangerous.dedup();
        let branches = |edges: &mut dyn Iterator<Item = EdgeId>| -> Vec<Branch> {
            let set: BTreeSet<EdgeId> = edges.collect();
            set.into_iter().map(|e| self.branch(analysis, e)).collect()
        };
        let detail = match algorithm {
            Algorithm::Partial | Algorithm::Rh => Detail::NotLeaving {
                dangerous: branches(&mut dangerous.iter().copied()),
                exits: branches(&mut analysis.d_reject().iter().map(|t| t.edge)),
            },
            Algorithm::Full | Algorithm::Valid => {
                let reached = reachable(analysis, covered);
                let contexts = dangerous
                    .iter()
                    .map(|&e| {
                        let v = analysis.old().edge(e).src;
                        let rejecting: BTreeSet<NodeId> =
                            analysis.d().iter().filter(|t| t.edge == e).map(|t| t.from.new).collect();
                        let at_v: BTreeSet<NodeId> = reached.iter().filter(|p| p.0 == v).map(|p| p.1).collect();
                        Context {
                            branch: self.branch(analysis, e),
                            rejecting: rejecting.into_iter().map(|n| self.new_at(n)).collect(),
                            reached: at_v.into_iter().map(|n| self.new_at(n)).collect(),
                        }
                    })
                    .collect();
                Detail::Unreached { contexts }
            }
        };
        Elimination { algorithm, procedure: self.ctx.keys.key(self.ctx.old, self.o), detail }
    }
}

/// The vertices (v, v') of G'' reachable from (s, s') along `covered` edges.
fn reachable(analysis: &PairAnalysis<'_>, covered: &[EdgeId]) -> Vec<(NodeId, NodeId)> {
    let allowed: BTreeSet<EdgeId> = covered.iter().copied().collect();
    let Some(start) = analysis.start() else { return Vec::new() };
    let pairs = analysis.pairs();
    let mut seen = vec![false; pairs.len()];
    seen[start as usize] = true;
    let mut stack = vec![start];
    while let Some(i) = stack.pop() {
        for e in analysis.old().out_edges(pairs[i as usize].old) {
            if let (true, Step::State(j)) = (allowed.contains(&e), analysis.step(i, e))
                && !seen[j as usize]
            {
                seen[j as usize] = true;
                stack.push(j);
            }
        }
    }
    pairs.iter().zip(&seen).filter(|(_, s)| **s).map(|(p, _)| (p.old, p.new)).collect()
}

/// The transition to `reject` nearest to vertex `from` in G'', along covered
/// edges if there is one, else along any.
fn nearest_reject(analysis: &PairAnalysis<'_>, from: crate::ball::Pair, covered: &[EdgeId]) -> Option<Transition> {
    let allowed: BTreeSet<EdgeId> = covered.iter().copied().collect();
    let start = analysis.state(from)?;
    for only_covered in [true, false] {
        let mut seen = vec![false; analysis.pairs().len()];
        seen[start as usize] = true;
        let mut queue = VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            for e in analysis.old().out_edges(analysis.pairs()[i as usize].old) {
                if only_covered && !allowed.contains(&e) {
                    continue;
                }
                match analysis.step(i, e) {
                    Step::Reject => return Some(analysis.transition(i, e, Step::Reject)),
                    Step::State(j) if !seen[j as usize] => {
                        seen[j as usize] = true;
                        queue.push_back(j);
                    }
                    _ => {}
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use retest_graph::{NodeKind, Unit};

    use super::*;
    use crate::dejavu::{Mode, select};
    use crate::program::UnitRef;
    use crate::tests_for;

    use crate::tests::fixture;

    fn prog<'a>(units: &'a [(&'a str, Unit)]) -> Program<'a> {
        Program::new(
            units.iter().map(|(k, u)| UnitRef { key: k, unit: u, flags: "", broken: None, bodies: None }).collect(),
        )
    }

    // fixture refine-old, 000 Fig. 1, G: A (line 6) t C; A f C; C (line 8) t W; C f X; W (line 9) ε X
    //     void f(int a, int c) { if (a) { } if (c) w(); }
    // fixture refine-new, G': A t C1 (line 7); A f C2 (line 12); C1 t Y; C1 f Z; C2 t W; C2 f X
    //     void f(int a, int c) { if (a) { if (c) y(); else z(); } else { if (c) w(); } }
    // (both after declarations of w, y and z; refine-signature is refine-old with `long c`)

    /// Test id → the statement-level edges of `f` it covered after the entry and
    /// the declaration node, as (line of the source statement, label); `TestsOnEdge` then answers for every
    /// condition-level edge mapping onto one of them.
    fn tests_on_edge(
        p: &Program<'_>,
        tests: &[(u32, &[(u32, &str)])],
    ) -> impl FnMut(usize, u32) -> RoaringBitmap + use<> {
        let f = p.procedure(ProcRef { unit: 0, proc: 0 });
        let coarse_of = |line: u32, label: &str| -> EdgeId {
            f.stmt
                .edges()
                .find(|(_, e)| f.stmt.node(e.src).span.is_some_and(|s| s.line == line) && e.label.to_string() == label)
                .map(|(id, _)| id)
                .unwrap_or_else(|| panic!("no edge {line} {label}"))
        };
        // every execution leaves the entry and the declaration node
        let prologue: Vec<EdgeId> = f
            .stmt
            .edges()
            .filter(|(_, e)| matches!(f.stmt.node(e.src).kind, NodeKind::Entry | NodeKind::Declaration))
            .map(|(id, _)| id)
            .collect();
        let covered: Vec<(u32, BTreeSet<EdgeId>)> = tests
            .iter()
            .map(|(t, es)| (*t, es.iter().map(|(l, lab)| coarse_of(*l, lab)).chain(prologue.iter().copied()).collect()))
            .collect();
        let map = f.map.edge.clone();
        move |_, fine| {
            let mut b = RoaringBitmap::new();
            if let Some(Some(c)) = map.get(fine as usize) {
                for (t, set) in &covered {
                    if set.contains(c) {
                        b.insert(*t);
                    }
                }
            }
            b
        }
    }

    /// a0c1 takes [A, f, C, t, W]; a1c1 [A, t, C, t, W]; a0c0 [A, f, C, f].
    const TESTS: [(u32, &[(u32, &str)]); 3] =
        [(1, &[(6, "F"), (8, "T"), (9, "ε")]), (2, &[(6, "T"), (8, "T"), (9, "ε")]), (3, &[(6, "F"), (8, "F")])];

    #[test]
    fn figure1_partial_and_full_reachability_refine_dejavu() {
        let old_units = [("u.c", fixture("refine-old"))];
        let new_units = [("u.c", fixture("refine-new"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Inter);
        let mut on_edge = tests_on_edge(&old, &TESTS);
        let by_test = tests_for(&old, &outcome.dangerous, &mut on_edge);
        assert_eq!(by_test.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3], "DejaVu selects every test");
        assert_eq!(outcome.multiply_visited.values().map(|s| s.len()).sum::<usize>(), 1, "C");

        let partial = refine(&old, &new, &outcome, &by_test, Algorithm::Partial, &mut on_edge);
        assert_eq!(partial.pairs_analysed, 1);
        let Verdict::Eliminated(e) = &partial.verdicts[&1] else { panic!("{:?}", partial.verdicts[&1]) };
        let Detail::NotLeaving { dangerous, exits } = &e[0].detail else { panic!("{e:?}") };
        assert_eq!((exits.len(), exits[0].at.line, exits[0].label.as_str()), (1, 6, "T"), "D_reject = {{(A, t)}}");
        assert_eq!((dangerous[0].at.line, dangerous[0].label.as_str()), (8, "T"));
        assert!(matches!(partial.verdicts[&3], Verdict::Eliminated(_)));
        let Verdict::Selected(w) = &partial.verdicts[&2] else { panic!() };
        assert_eq!(w.len(), 1);
        let via = w[0].via.as_ref().unwrap();
        assert_eq!((via.at.line, via.label.as_str()), (6, "T"));
        assert_eq!(w[0].reason.kind, ReasonKind::Modified);
        assert_eq!(w[0].reason.new.as_ref().unwrap().text, "y ( ) ;", "the covered route goes C1 t Y");

        for alg in [Algorithm::Full, Algorithm::Valid] {
            let full = refine(&old, &new, &outcome, &by_test, alg, &mut on_edge);
            let Verdict::Eliminated(e) = &full.verdicts[&1] else { panic!() };
            let Detail::Unreached { contexts } = &e[0].detail else { panic!("{e:?}") };
            let lines = |v: &[At]| v.iter().map(|a| a.line).collect::<Vec<_>>();
            assert_eq!(lines(&contexts[0].rejecting), vec![7], "(C, C1) →t reject");
            assert_eq!(lines(&contexts[0].reached), vec![12], "a0c1 only reaches (C, C2)");
            let Verdict::Selected(w) = &full.verdicts[&2] else { panic!() };
            assert!(w.iter().all(|w| w.via.is_none()), "full-reachability names the transitions to reject");
        }
    }

    #[test]
    fn whole_procedure_changes_keep_dejavus_reasons() {
        let old_units = [("u.c", fixture("refine-old"))];
        let new_units = [("u.c", fixture("refine-signature"))];
        let (old, new) = (prog(&old_units), prog(&new_units));
        let outcome = select(&old, &new, Mode::Inter);
        let mut on_edge = tests_on_edge(&old, &TESTS);
        let by_test = tests_for(&old, &outcome.dangerous, &mut on_edge);
        for alg in [Algorithm::Partial, Algorithm::Full, Algorithm::Valid] {
            let r = refine(&old, &new, &outcome, &by_test, alg, &mut on_edge);
            assert_eq!(r.pairs_analysed, 0);
            for t in [1, 2, 3] {
                let Verdict::Selected(w) = &r.verdicts[&t] else { panic!() };
                assert!(w.iter().all(|w| w.reason.kind == ReasonKind::Signature), "{w:?}");
            }
        }
    }
}
