//! Control-flow decision graphs (001 §V): a condition-level CFG annotated with
//! the decisions its condition vertices belong to.
//!
//! A CFDG is the pair `(G, Ds)` of a CFG and a set of *decision subgraphs*, each a
//! set of condition vertices (001 §V). [`Cfdg::build`] infers the decisions from
//! the shape of the graph alone with the paper's Algorithms 1 and 2 (001 §V-A),
//! exactly as written:
//!
//! * every condition starts as its own decision (`D_map = {v ↦ {v}}`);
//! * `merge(D1)` walks the successors of `D1` (the union over its vertices,
//!   *including* successors inside `D1` — the paper's `successor(D)` formula); an
//!   unvisited successor `s` that is a condition is recursed on, and when the
//!   successors returned for `s`'s decision `S` share a vertex with
//!   `successors(D1) \ {s}`, the two decisions are merged (Theorem 1);
//! * the top-level loop calls `merge` on the decision of every condition that is
//!   not yet visited, and does not mark that condition visited.
//!
//! **Order of successors.** The paper iterates over `successors(D1)` as a set.
//! The order matters: with the `visited` marks, a condition is compared only with
//! the decision that reaches it first. In `!(a || b) || c` condition `a` jumps
//! over `b` to `c` (`a` true makes the left operand false); visiting `a`'s `T`
//! successor first marks `c` visited from `a`, with which it shares nothing, and
//! `b` — the only condition `c` can be merged with — later finds `c` visited:
//! the result is `{a, b}`, `{c}`, contradicting Theorem 3 (completeness).
//! [`SuccessorOrder::ReversePostorder`] (the default) visits successors, and runs
//! Algorithm 1's loop, in reverse postorder of the CFG: the conditions of a
//! short-circuit decision are then visited along the chain `c0 → c1 → …` (an
//! edge from every condition to the next always exists), each is compared with
//! the already-merged rest of its decision, and the algorithm is complete for
//! decisions over `&&`, `||` and `!` (the property tests check this).
//! [`SuccessorOrder::Label`] (`T` before `F`) reproduces the counterexample.
//!
//! Decisions are passed by reference as the paper requires: a decision is "the
//! set that currently contains vertex `v`" (a union–find over vertices), so a
//! decision that grows during a recursive call is seen grown by its caller.
//! The recursion is run on an explicit stack, so deep CFGs cannot overflow the
//! thread's stack; set unions are small-into-large, so construction is
//! `O((V + E) log V)` — the paper's linear bound holds for its (Python) sets up to
//! the cost of the unions.
//!
//! A *condition* is a vertex with exactly two out-edges labelled `T` and `F` (the
//! paper's `outdegree(v) = 2`; a two-way `switch` is not a condition).
//!
//! **Beyond the paper: interstitial vertices.** The paper assumes that no
//! non-condition vertex sits between the conditions of a decision and notes that
//! Clang breaks the assumption for loop conditions (001 §VII-A): at `-O0` Clang
//! evaluates `while (a && !b)` into a value (`%25 = xor …; br label %26`) and
//! branches on a `phi i1` in a separate block, so Algorithm 2 leaves the guard and
//! the branching block in different decisions. [`Cfdg::build_with`] takes the set
//! of vertices known to be interstitial (a non-condition vertex whose single
//! successor is a condition or another interstitial vertex of the same decision;
//! [`crate::foreign`] recognises them from the `phi i1` feeding a conditional
//! branch) and glues each to the decision of its successor before running
//! Algorithms 1 and 2 unchanged: with the glued vertex, the condition before it
//! again shares a successor with the decision after it (Theorem 1), so the merge
//! happens. Which vertices are interstitial cannot be decided from the shape of a
//! CFG: `if (a) { s; } if (b) …` has exactly the shape of Clang's `phi`
//! evaluation, so the caller has to say.
//!
//! [`Cfdg::for_procedure`] is the variant for retest's own condition-level CFGs:
//! Algorithms 1–2, then a decision is split where its conditions belong to
//! different statements (the contraction knows), which removes the inherent
//! ambiguity of `if (a) if (b) x;` versus `if (a && b) x;`, and the outcome of
//! each edge leaving a decision is read from the statement-level label.

use std::collections::{BTreeMap, BTreeSet};

use retest_graph::{Cfg, EdgeId, EdgeLabel, NodeId, Procedure};
use serde::{Deserialize, Serialize};

/// Index of a decision within its [`Cfdg`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DecisionId(pub u32);

impl DecisionId {
    /// The id as a `usize` index into [`Cfdg::decisions`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An edge leaving a decision (an *outcome edge*) and the decision outcome it stands for.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct OutcomeEdge {
    /// The edge in the CFG.
    pub edge: EdgeId,
    /// Its source: a condition (or interstitial vertex) of the decision.
    pub from: NodeId,
    /// Its target: a successor of the decision (001 Lemma 1).
    pub to: NodeId,
    /// The decision outcome this edge stands for. See [`Decision`] for how it is
    /// determined.
    pub value: bool,
}

/// One decision subgraph `D ∈ Ds`.
///
/// Outcome values: when the caller knows them (the statement-level labels and,
/// for decisions evaluated for a value, the front end's outcome nodes, see
/// [`Cfdg::for_procedure`]) they are exact. Otherwise, when the decision has two
/// successors, the successor reached by the `T` edge of its last condition is the
/// *true* outcome — exact unless the last condition is negated (`a && !b`), in
/// which case the two outcomes are named the other way round (which no criterion
/// cares about: they only ever compare outcomes for difference). When both
/// outcomes reach the same vertex (`if (a && b) ;`), the label of each outcome
/// edge names its outcome, which is exact without negations.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Decision {
    /// The vertex that dominates the decision (001 Lemma 2): the first condition.
    pub entry: NodeId,
    /// Condition vertices in evaluation order (a topological order of the
    /// decision's subgraph, which is unique for a decision built from `&&`, `||`
    /// and `!`: it is the left-to-right order of the conditions in the source).
    pub conditions: Vec<NodeId>,
    /// Non-condition vertices that are part of the decision (see the module
    /// documentation); empty for decisions found by the paper's algorithms alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interstitial: Vec<NodeId>,
    /// The edges leaving the decision, by edge id.
    pub outcome_edges: Vec<OutcomeEdge>,
    /// The decision has one entry, an acyclic subgraph, and both outcomes. Decisions
    /// that are not well formed come from irregular graphs (a loop whose body is a
    /// single `if (…) break;` has the shape of `while (a && !b) ;`, and the
    /// algorithm merges the two into a cyclic "decision").
    pub well_formed: bool,
}

impl Decision {
    /// Every vertex of the decision: conditions then interstitial vertices.
    pub fn vertices(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.conditions.iter().chain(&self.interstitial).copied()
    }

    /// Whether `v` is one of the decision's vertices.
    pub fn contains(&self, v: NodeId) -> bool {
        self.conditions.contains(&v) || self.interstitial.contains(&v)
    }

    /// Position of condition `v` in [`Decision::conditions`].
    pub fn condition_index(&self, v: NodeId) -> Option<usize> {
        self.conditions.iter().position(|&c| c == v)
    }

    /// The decision's successors `successors(D) \ D` (001 Lemma 1: two for a
    /// well-formed decision, one when both outcomes reach the same vertex), sorted.
    pub fn successors(&self) -> Vec<NodeId> {
        let s: BTreeSet<NodeId> = self.outcome_edges.iter().map(|o| o.to).collect();
        s.into_iter().collect()
    }

    /// The outcome of leaving the decision along `edge`, if it is an outcome edge.
    pub fn outcome_of(&self, edge: EdgeId) -> Option<bool> {
        self.outcome_edges.iter().find(|o| o.edge == edge).map(|o| o.value)
    }

    /// The targets reached by outcome `value`, sorted and without duplicates.
    pub fn targets(&self, value: bool) -> Vec<NodeId> {
        let s: BTreeSet<NodeId> = self.outcome_edges.iter().filter(|o| o.value == value).map(|o| o.to).collect();
        s.into_iter().collect()
    }
}

/// A control-flow decision graph: the decisions of one CFG (the CFG itself is
/// not copied; pass it alongside).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Cfdg {
    /// The decision subgraphs, ordered by their entry vertex.
    pub decisions: Vec<Decision>,
    /// For every vertex of the CFG, the decision it belongs to.
    pub decision_of: Vec<Option<DecisionId>>,
}

/// One merge performed by Algorithm 2 (line 9), for tracing the construction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MergeStep {
    /// `D1` before the merge (sorted).
    pub into: Vec<NodeId>,
    /// `D2` (sorted).
    pub absorbed: Vec<NodeId>,
    /// The shared successors `(successors(D1) \ {s}) ∩ S` that justified it (sorted).
    pub shared: Vec<NodeId>,
    /// The partition of all decision vertices after the merge (each set sorted,
    /// sets ordered by their smallest vertex).
    pub partition: Vec<Vec<NodeId>>,
}

/// The order in which Algorithm 2 visits `successors(D1)` and Algorithm 1 its
/// vertices (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum SuccessorOrder {
    /// Reverse postorder of a depth-first search from the entry (out-edges in label
    /// order); vertices unreachable from the entry follow, by id. Complete for
    /// short-circuit decisions.
    #[default]
    ReversePostorder,
    /// Vertex id order for Algorithm 1, and for each vertex of `D1` (by id) its
    /// out-edges in label order (`T` before `F`). Incomplete: see the module
    /// documentation.
    Label,
}

/// Options for [`Cfdg::build_with_options`].
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Options {
    /// Visiting order.
    pub order: SuccessorOrder,
    /// Vertices known to be interstitial (see the module documentation).
    pub interstitial: Vec<NodeId>,
}

/// Whether `v` is a condition: exactly two out-edges, labelled `T` and `F`.
pub fn is_condition(cfg: &Cfg, v: NodeId) -> bool {
    let mut labels = cfg.out_labels(v);
    matches!((labels.next(), labels.next(), labels.next()), (Some(EdgeLabel::True), Some(EdgeLabel::False), None))
}

/// Union–find over vertices: `D_map` with by-reference decisions.
struct Dmap {
    parent: Vec<u32>,
    /// Members of each root's decision.
    members: Vec<Vec<NodeId>>,
    /// `successors(D)` of each root's decision (including successors inside `D`).
    succ: Vec<BTreeSet<NodeId>>,
    in_map: Vec<bool>,
}

impl Dmap {
    fn new(cfg: &Cfg, in_map: Vec<bool>) -> Dmap {
        let n = cfg.node_count();
        let mut members = vec![Vec::new(); n];
        let mut succ = vec![BTreeSet::new(); n];
        for v in cfg.node_ids() {
            if in_map[v.index()] {
                members[v.index()].push(v);
                succ[v.index()] = cfg.succs(v).collect();
            }
        }
        Dmap { parent: (0..n as u32).collect(), members, succ, in_map }
    }

    fn find(&mut self, v: NodeId) -> usize {
        let mut r = v.index();
        while self.parent[r] as usize != r {
            r = self.parent[r] as usize;
        }
        let mut x = v.index();
        while self.parent[x] as usize != r {
            let next = self.parent[x] as usize;
            self.parent[x] = r as u32;
            x = next;
        }
        r
    }

    /// `D1 ← D1 ∪ D2` and `D_map(v) ← D1` for its vertices; returns the new root.
    fn union(&mut self, a: usize, b: usize) -> usize {
        if a == b {
            return a;
        }
        let (big, small) = if self.members[a].len() >= self.members[b].len() { (a, b) } else { (b, a) };
        self.parent[small] = big as u32;
        let m = std::mem::take(&mut self.members[small]);
        self.members[big].extend(m);
        let s = std::mem::take(&mut self.succ[small]);
        if self.succ[big].len() >= s.len() {
            self.succ[big].extend(s);
        } else {
            let mut s = s;
            s.append(&mut self.succ[big]);
            self.succ[big] = s;
        }
        big
    }

    fn partition(&mut self) -> Vec<Vec<NodeId>> {
        let n = self.parent.len();
        let mut out: Vec<Vec<NodeId>> = Vec::new();
        for v in 0..n {
            if self.in_map[v] && self.find(NodeId(v as u32)) == v {
                let mut m = self.members[v].clone();
                m.sort();
                out.push(m);
            }
        }
        out.sort();
        out
    }
}

/// A frame of `merge(D1, D_map, visited)` on the explicit stack.
struct Frame {
    /// A vertex of `D1`: the decision is whatever set currently contains it.
    rep: NodeId,
    /// `successors(D1)` when the loop on line 2 started.
    succs: Vec<NodeId>,
    next: usize,
    /// The successor `s` whose recursive call (line 7) is in progress.
    pending: Option<NodeId>,
}

fn frame(cfg: &Cfg, dm: &mut Dmap, rep: NodeId, rank: Option<&[u32]>) -> Frame {
    let r = dm.find(rep);
    let mut members = dm.members[r].clone();
    members.sort();
    let mut seen = BTreeSet::new();
    let mut succs = Vec::new();
    for m in members {
        for s in cfg.succs(m) {
            if seen.insert(s) {
                succs.push(s);
            }
        }
    }
    if let Some(rank) = rank {
        succs.sort_by_key(|s| rank[s.index()]);
    }
    Frame { rep, succs, next: 0, pending: None }
}

/// Position of every vertex in reverse postorder of a depth-first search from the
/// entry (out-edges in label order), unreachable vertices after, by id.
pub fn reverse_postorder(cfg: &Cfg) -> Vec<u32> {
    let n = cfg.node_count();
    let mut seen = vec![false; n];
    let mut post: Vec<NodeId> = Vec::with_capacity(n);
    let mut stack: Vec<(NodeId, usize)> = vec![(cfg.entry(), 0)];
    seen[cfg.entry().index()] = true;
    while let Some((v, i)) = stack.last_mut() {
        let v = *v;
        match cfg.succs(v).nth(*i) {
            Some(s) => {
                *i += 1;
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    stack.push((s, 0));
                }
            }
            None => {
                post.push(v);
                stack.pop();
            }
        }
    }
    let mut rank = vec![0u32; n];
    let reachable = post.len();
    for (i, v) in post.iter().rev().enumerate() {
        rank[v.index()] = i as u32;
    }
    let mut next = reachable as u32;
    for v in 0..n {
        if !seen[v] {
            rank[v] = next;
            next += 1;
        }
    }
    rank
}

/// `(successors(D1) \ {s}) ∩ S`, sorted.
fn shared(d1: &BTreeSet<NodeId>, s: NodeId, big_s: &BTreeSet<NodeId>) -> Vec<NodeId> {
    let (small, large) = if d1.len() <= big_s.len() { (d1, big_s) } else { (big_s, d1) };
    small.iter().copied().filter(|&x| x != s && large.contains(&x)).collect()
}

/// Algorithms 1 and 2 over the vertices marked in `in_map`, after gluing the
/// interstitial vertices. Returns the partition (each set sorted).
fn algorithms_1_2(
    cfg: &Cfg,
    interstitial: &[bool],
    order: SuccessorOrder,
    trace: Option<&mut Vec<MergeStep>>,
) -> Vec<Vec<NodeId>> {
    let n = cfg.node_count();
    let cond: Vec<bool> = cfg.node_ids().map(|v| is_condition(cfg, v)).collect();
    // An interstitial vertex counts only if its single successor is a condition or
    // another interstitial vertex (it lies *between* conditions).
    let mut inter = vec![false; n];
    for v in cfg.node_ids() {
        let i = v.index();
        if interstitial.get(i).copied().unwrap_or(false) && !cond[i] && cfg.out_edges(v).len() == 1 {
            inter[i] = true;
        }
    }
    // Chains of interstitial vertices must end at a condition.
    loop {
        let mut changed = false;
        for v in cfg.node_ids() {
            if inter[v.index()] {
                let s = cfg.succs(v).next().map(|s| s.index());
                if !s.is_some_and(|s| cond[s] || inter[s]) || s == Some(v.index()) {
                    inter[v.index()] = false;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let in_map: Vec<bool> = (0..n).map(|i| cond[i] || inter[i]).collect();
    let mut dm = Dmap::new(cfg, in_map);
    for v in cfg.node_ids() {
        if inter[v.index()]
            && let Some(s) = cfg.succs(v).next()
        {
            let (a, b) = (dm.find(v), dm.find(s));
            dm.union(a, b);
        }
    }
    let mut trace = trace;
    let rank = match order {
        SuccessorOrder::ReversePostorder => Some(reverse_postorder(cfg)),
        SuccessorOrder::Label => None,
    };
    let mut top: Vec<NodeId> = cfg.node_ids().collect();
    if let Some(rank) = &rank {
        top.sort_by_key(|v| rank[v.index()]);
    }
    let rank = rank.as_deref();
    // Algorithm 1
    let mut visited = vec![false; n];
    for v in top {
        if !dm.in_map[v.index()] || visited[v.index()] {
            continue;
        }
        // merge(D_map(v)) — Algorithm 2 on an explicit stack
        let mut stack = vec![frame(cfg, &mut dm, v, rank)];
        while let Some(top) = stack.last_mut() {
            if let Some(s) = top.pending.take() {
                // line 8: S is the successor set of s's decision after the recursion
                let rep = top.rep;
                let r1 = dm.find(rep);
                let r2 = dm.find(s);
                if r1 != r2 {
                    let common = shared(&dm.succ[r1], s, &dm.succ[r2]);
                    if !common.is_empty() {
                        let mut into = dm.members[r1].clone();
                        into.sort();
                        let mut absorbed = dm.members[r2].clone();
                        absorbed.sort();
                        dm.union(r1, r2); // lines 9–11
                        if let Some(t) = trace.as_deref_mut() {
                            t.push(MergeStep { into, absorbed, shared: common, partition: dm.partition() });
                        }
                    }
                }
                continue;
            }
            if top.next == top.succs.len() {
                stack.pop();
                continue;
            }
            let s = top.succs[top.next];
            top.next += 1;
            if visited[s.index()] {
                continue;
            }
            visited[s.index()] = true;
            if dm.in_map[s.index()] {
                top.pending = Some(s);
                let f = frame(cfg, &mut dm, s, rank);
                stack.push(f);
            }
        }
    }
    dm.partition()
}

impl Cfdg {
    /// Algorithms 1 and 2 of 001 §V-A as written, successors visited in reverse
    /// postorder.
    pub fn build(cfg: &Cfg) -> Cfdg {
        Cfdg::build_with_options(cfg, &Options::default())
    }

    /// Algorithms 1 and 2 after gluing the given interstitial vertices to the
    /// decision of their successor (see the module documentation). Vertices that
    /// are conditions, have more than one successor, or do not lead to a condition
    /// through interstitial vertices are ignored.
    pub fn build_with(cfg: &Cfg, interstitial: &[NodeId]) -> Cfdg {
        Cfdg::build_with_options(cfg, &Options { interstitial: interstitial.to_vec(), ..Options::default() })
    }

    /// Algorithms 1 and 2 with explicit options.
    pub fn build_with_options(cfg: &Cfg, options: &Options) -> Cfdg {
        let sets = algorithms_1_2(cfg, &interstitial_mask(cfg, options), options.order, None);
        Cfdg::from_sets(cfg, sets, &|_| None)
    }

    /// Like [`Cfdg::build_with_options`], also returning every merge Algorithm 2
    /// performed, in order (001 Fig. 2 shows these steps for Listing 2).
    pub fn build_traced(cfg: &Cfg, options: &Options) -> (Cfdg, Vec<MergeStep>) {
        let mut steps = Vec::new();
        let sets = algorithms_1_2(cfg, &interstitial_mask(cfg, options), options.order, Some(&mut steps));
        (Cfdg::from_sets(cfg, sets, &|_| None), steps)
    }

    /// The CFDG of one of retest's own procedures: Algorithms 1–2 on its
    /// condition-level CFG, decisions split where their conditions belong to
    /// different statements, and outcome values taken from the statement-level
    /// `T`/`F` label of each outcome edge where it has one. Decisions evaluated
    /// for a value have none: `x = a && !b;` leads to the front end's `(true)`
    /// and `(false)` nodes, which name the outcomes, and `c ? y : z` to its two
    /// arms, the consequence built (and numbered) before the alternative — so
    /// of two successors the lower-numbered is the true one. (The default
    /// naming of [`Decision`] would name `a && !b` the other way round.)
    pub fn for_procedure(p: &Procedure) -> Cfdg {
        let cfg = &p.cond;
        let sets = algorithms_1_2(cfg, &vec![false; cfg.node_count()], SuccessorOrder::default(), None);
        let mut split = Vec::new();
        for set in sets {
            let mut by_group: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
            for v in set {
                let g = p.map.node.get(v.index()).copied().unwrap_or(v);
                by_group.entry(g).or_default().push(v);
            }
            split.extend(by_group.into_values());
        }
        let label = |e: EdgeId| -> Option<bool> {
            let coarse = p.map.edge.get(e.index()).copied().flatten()?;
            match p.stmt.edge(coarse).label {
                EdgeLabel::True => Some(true),
                EdgeLabel::False => Some(false),
                _ => None,
            }
        };
        let mut cfdg = Cfdg::from_sets(cfg, split, &label);
        for d in &mut cfdg.decisions {
            if d.outcome_edges.iter().any(|o| label(o.edge).is_some()) {
                continue;
            }
            let targets: BTreeSet<NodeId> = d.outcome_edges.iter().map(|o| o.to).collect();
            let [first, second] = targets.iter().copied().collect::<Vec<_>>()[..] else { continue };
            let text = |v: NodeId| cfg.node(v).text.as_str();
            let true_target = match (text(first), text(second)) {
                ("(false)", "(true)") => second,
                _ => first,
            };
            for o in &mut d.outcome_edges {
                o.value = o.to == true_target;
            }
        }
        cfdg
    }

    /// Builds the CFDG from given decision vertex sets (each a set of conditions and
    /// interstitial vertices). `value` may name the outcome of an outcome edge.
    pub fn from_sets(cfg: &Cfg, sets: Vec<Vec<NodeId>>, value: &dyn Fn(EdgeId) -> Option<bool>) -> Cfdg {
        let mut decisions: Vec<Decision> =
            sets.into_iter().filter(|s| !s.is_empty()).map(|s| decision(cfg, &s, value)).collect();
        decisions.sort_by_key(|d| d.entry);
        let mut decision_of = vec![None; cfg.node_count()];
        for (i, d) in decisions.iter().enumerate() {
            for v in d.vertices() {
                decision_of[v.index()] = Some(DecisionId(i as u32));
            }
        }
        Cfdg { decisions, decision_of }
    }

    /// The decision `v` belongs to.
    pub fn decision(&self, v: NodeId) -> Option<&Decision> {
        self.decision_of.get(v.index()).copied().flatten().map(|d| &self.decisions[d.index()])
    }

    /// Clusters for [`retest_graph::dot::write_cfg`]: one `Decision N` per decision.
    pub fn clusters(&self) -> Vec<(String, Vec<NodeId>)> {
        self.decisions.iter().enumerate().map(|(i, d)| (format!("Decision {i}"), d.vertices().collect())).collect()
    }
}

fn interstitial_mask(cfg: &Cfg, options: &Options) -> Vec<bool> {
    let mut mask = vec![false; cfg.node_count()];
    for v in &options.interstitial {
        if let Some(m) = mask.get_mut(v.index()) {
            *m = true;
        }
    }
    mask
}

/// Entry, evaluation order and outcome edges of one decision vertex set.
fn decision(cfg: &Cfg, set: &[NodeId], value: &dyn Fn(EdgeId) -> Option<bool>) -> Decision {
    let member: BTreeSet<NodeId> = set.iter().copied().collect();
    // entries: vertices with a predecessor outside the set, or none at all
    let entries: Vec<NodeId> = member
        .iter()
        .copied()
        .filter(|&v| cfg.in_edges(v).is_empty() || cfg.preds(v).any(|p| !member.contains(&p)))
        .collect();
    let entry = entries.first().copied().unwrap_or(set[0]);
    // an edge back to the entry leaves the decision: the next evaluation starts
    // (`do { x--; } while (x > 0 && a)` where GCC puts `x--` in the first condition's block)
    let inside = |d: NodeId| member.contains(&d) && d != entry;
    let (order, acyclic) = topological(cfg, &member, entry);
    let conditions: Vec<NodeId> = order.iter().copied().filter(|&v| is_condition(cfg, v)).collect();
    let interstitial: Vec<NodeId> = order.iter().copied().filter(|&v| !is_condition(cfg, v)).collect();
    // outcome edges, with the default naming
    let exits: Vec<(EdgeId, NodeId, NodeId)> = order
        .iter()
        .flat_map(|&v| cfg.out_edges(v).map(move |e| (e, v)))
        .filter_map(|(e, v)| {
            let d = cfg.edge(e).dst;
            (!inside(d)).then_some((e, v, d))
        })
        .collect();
    let targets: BTreeSet<NodeId> = exits.iter().map(|x| x.2).collect();
    let last_t = conditions.last().and_then(|&c| cfg.succ_labelled(c, &EdgeLabel::True)).filter(|&t| !inside(t));
    let mut outcome_edges: Vec<OutcomeEdge> = exits
        .iter()
        .map(|&(e, from, to)| {
            let default = if targets.len() == 1 {
                cfg.edge(e).label != EdgeLabel::False
            } else {
                match last_t {
                    Some(t) => to == t,
                    None => Some(to) == targets.first().copied(),
                }
            };
            OutcomeEdge { edge: e, from, to, value: value(e).unwrap_or(default) }
        })
        .collect();
    outcome_edges.sort_by_key(|o| o.edge);
    let both = outcome_edges.iter().any(|o| o.value) && outcome_edges.iter().any(|o| !o.value);
    let single_entry = entries.len() == 1 && entries[0] == entry;
    Decision { entry, conditions, interstitial, outcome_edges, well_formed: acyclic && both && single_entry }
}

/// A topological order of the subgraph induced by `member` without the edges
/// into `start`, starting from `start`; back edges (of a depth-first search from
/// `start`) are ignored when the rest is still cyclic. Ties are broken by vertex id. Returns the order and whether
/// the subgraph was acyclic.
fn topological(cfg: &Cfg, member: &BTreeSet<NodeId>, start: NodeId) -> (Vec<NodeId>, bool) {
    // depth-first search for back edges (iterative)
    let mut state: BTreeMap<NodeId, u8> = BTreeMap::new(); // 1 = on stack, 2 = done
    let mut back: BTreeSet<EdgeId> = BTreeSet::new();
    let mut roots: Vec<NodeId> = vec![start];
    roots.extend(member.iter().copied().filter(|&v| v != start));
    for root in roots {
        if state.contains_key(&root) {
            continue;
        }
        let mut stack: Vec<(NodeId, Vec<EdgeId>, usize)> = vec![(root, cfg.out_edges(root).collect(), 0)];
        state.insert(root, 1);
        while let Some((v, edges, i)) = stack.last_mut() {
            if *i == edges.len() {
                state.insert(*v, 2);
                stack.pop();
                continue;
            }
            let e = edges[*i];
            *i += 1;
            let d = cfg.edge(e).dst;
            if !member.contains(&d) || d == start {
                continue;
            }
            match state.get(&d) {
                Some(1) => {
                    back.insert(e);
                }
                Some(_) => {}
                None => {
                    state.insert(d, 1);
                    stack.push((d, cfg.out_edges(d).collect(), 0));
                }
            }
        }
    }
    let mut indeg: BTreeMap<NodeId, usize> = member.iter().map(|&v| (v, 0)).collect();
    for &v in member {
        for e in cfg.out_edges(v) {
            let d = cfg.edge(e).dst;
            if member.contains(&d) && d != start && !back.contains(&e) {
                *indeg.get_mut(&d).expect("member") += 1;
            }
        }
    }
    let mut ready: BTreeSet<NodeId> = indeg.iter().filter(|(_, d)| **d == 0).map(|(v, _)| *v).collect();
    // the start vertex goes first when it is ready
    let mut order = Vec::with_capacity(member.len());
    if ready.remove(&start) {
        order.push(start);
        relax(cfg, member, &back, start, start, &mut indeg, &mut ready);
    }
    while let Some(v) = ready.pop_first() {
        order.push(v);
        relax(cfg, member, &back, start, v, &mut indeg, &mut ready);
    }
    (order, back.is_empty())
}

fn relax(
    cfg: &Cfg,
    member: &BTreeSet<NodeId>,
    back: &BTreeSet<EdgeId>,
    start: NodeId,
    v: NodeId,
    indeg: &mut BTreeMap<NodeId, usize>,
    ready: &mut BTreeSet<NodeId>,
) {
    for e in cfg.out_edges(v) {
        let d = cfg.edge(e).dst;
        if member.contains(&d) && d != start && !back.contains(&e) {
            let k = indeg.get_mut(&d).expect("member");
            *k -= 1;
            if *k == 0 {
                ready.insert(d);
            }
        }
    }
}
