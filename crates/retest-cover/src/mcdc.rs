//! MC/DC per decision evaluation, as practitioners and tools measure it.
//!
//! The set-based criteria of [`crate::criteria`] (001 §VI) see a test as the set
//! of edges it walked. Tools instead record every *evaluation* of a decision as a
//! condition vector — which conditions were evaluated, their values, and the
//! outcome — and look for *independence pairs* among the vectors. This module
//! does that for any number of conditions (vectors are bitsets).
//!
//! Variants ([`Variant`]), for a condition `c` and two executed vectors `A`
//! (outcome true) and `B` (outcome false), both evaluating `c` with different values:
//!
//! * **Unique-cause** — what `llvm-cov` reports for `-fcoverage-mcdc` (LLVM 19,
//!   `MCDCRecordProcessor::findIndependencePairs`): `(A.values ⊕ B.values) ∧
//!   A.evaluated ∧ B.evaluated = {c}`. A condition short-circuited in either
//!   vector is a *don't care*: it may differ, or be evaluated in one only.
//! * **Masking** — DO-178C / CAST-6 masking MC/DC: other conditions may change
//!   if `c` *determines* the outcome in both vectors. `c` determines the outcome
//!   of an evaluation unless some operator on the path from `c` to the root of the
//!   decision's expression masks it: an `&&` (`||`) whose other operand was
//!   evaluated to false (true). A left operand that lets `c` (on the right) be
//!   evaluated never masks it; a right operand that was short-circuited is a
//!   don't care, as in unique-cause. The expression comes from the decision's
//!   condition-level subgraph ([`decision_structure`]).
//! * **Strict unique-cause** — the paper's reading (001 Condition 8 on a single
//!   evaluation): every other condition is evaluated in both vectors or in
//!   neither, with equal values. With short-circuit evaluation only the
//!   conditions whose change does not change which other conditions are
//!   evaluated can be shown this way (in `a && b`, only `b`).
//!
//! Every pair found is reported (over distinct vectors, with the tests that
//! produced them), so a report can show both which pairs exist and which are
//! missing.
//!
//! **Path numbering.** [`DecisionPaths`] numbers the paths through a decision's
//! condition subgraph from its first condition to an outcome edge, Ball–Larus
//! style: each edge carries an increment, and the sum of the increments along a
//! path is its id, in `0..count`. One integer per evaluation thus identifies the
//! evaluated mask, the values and the outcome ([`DecisionPaths::decode`]).
//! Increments are assigned in out-edge order (`T` before `F`): the `T` edge of a
//! vertex always has increment 0.

use std::collections::BTreeMap;
use std::fmt;

use fixedbitset::FixedBitSet;
use retest_graph::recording::{Action, Component, MCDC_KEY_BASE, SECT_MCDC, Sink};
use retest_graph::{Cfg, EdgeId, EdgeLabel, NodeId, Unit};
use roaring::RoaringBitmap;
use serde::{Serialize, Serializer};

use crate::cfdg::{Cfdg, Decision};
use crate::criteria::Run;

/// The largest number of conditions [`decision_structure`] analyses.
pub const MAX_STRUCTURE_CONDITIONS: usize = 1024;

/// The default limit on the number of paths [`decision_paths`] materialises.
pub const DEFAULT_PATH_LIMIT: u64 = 1 << 16;

/// One evaluation of a decision: which conditions were evaluated, their values,
/// and the outcome. Values of conditions that were not evaluated are ignored (and
/// cleared by [`CondVector::normalized`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CondVector {
    /// Bit `i`: condition `i` (in evaluation order) was evaluated.
    pub evaluated: FixedBitSet,
    /// Bit `i`: condition `i` was true.
    pub values: FixedBitSet,
    /// The decision's outcome.
    pub outcome: bool,
}

impl CondVector {
    /// A vector over `n` conditions with nothing evaluated.
    pub fn new(n: usize, outcome: bool) -> CondVector {
        CondVector { evaluated: FixedBitSet::with_capacity(n), values: FixedBitSet::with_capacity(n), outcome }
    }

    /// Parses `"TF-"` (one character per condition: `T`, `F`, or `-` for not
    /// evaluated) with the given outcome.
    pub fn parse(s: &str, outcome: bool) -> Option<CondVector> {
        let n = s.chars().count();
        let mut v = CondVector::new(n, outcome);
        for (i, c) in s.chars().enumerate() {
            match c {
                'T' => v.set(i, true),
                'F' => v.set(i, false),
                '-' => {}
                _ => return None,
            }
        }
        Some(v)
    }

    /// Number of conditions.
    pub fn len(&self) -> usize {
        self.evaluated.len()
    }

    /// Whether the vector has no conditions.
    pub fn is_empty(&self) -> bool {
        self.evaluated.len() == 0
    }

    /// Records condition `i` as evaluated with `value`.
    pub fn set(&mut self, i: usize, value: bool) {
        self.evaluated.insert(i);
        self.values.set(i, value);
    }

    /// The value of condition `i`, if it was evaluated.
    pub fn get(&self, i: usize) -> Option<bool> {
        self.evaluated.contains(i).then(|| self.values.contains(i))
    }

    /// The vector with values of unevaluated conditions cleared.
    pub fn normalized(&self) -> CondVector {
        let mut v = self.clone();
        v.values.intersect_with(&self.evaluated);
        v
    }

    /// `T`, `F` or `-` per condition (the [`CondVector::parse`] form).
    pub fn conditions_string(&self) -> String {
        (0..self.len())
            .map(|i| match self.get(i) {
                Some(true) => 'T',
                Some(false) => 'F',
                None => '-',
            })
            .collect()
    }
}

impl fmt::Display for CondVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.conditions_string(), if self.outcome { 'T' } else { 'F' })
    }
}

impl Serialize for CondVector {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct V {
            conditions: String,
            outcome: bool,
        }
        V { conditions: self.conditions_string(), outcome: self.outcome }.serialize(s)
    }
}

/// One recorded evaluation and the test that made it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Evaluation {
    /// The test's name.
    pub test: String,
    /// What was evaluated.
    pub vector: CondVector,
}

/// A decision's boolean structure in negation normal form: conditions are
/// numbered in evaluation order; `&&` and `||` are short-circuit operators.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub enum Expr {
    /// Condition `index`, negated or not.
    Cond {
        /// Position in [`Decision::conditions`].
        index: usize,
        /// The decision uses the condition's negation (`!c`): its `F` edge
        /// continues where a true operand would.
        negated: bool,
    },
    /// Short-circuit conjunction.
    And(Box<Expr>, Box<Expr>),
    /// Short-circuit disjunction.
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Evaluates with short-circuiting, given every condition's value: the vector
    /// of what is evaluated, and the outcome.
    pub fn evaluate(&self, values: &[bool]) -> CondVector {
        let mut v = CondVector::new(values.len(), false);
        v.outcome = self.eval_full(values, &mut v);
        v
    }

    fn eval_full(&self, values: &[bool], v: &mut CondVector) -> bool {
        match self {
            Expr::Cond { index, negated } => {
                let x = values.get(*index).copied().unwrap_or(false);
                if *index < v.len() {
                    v.set(*index, x);
                }
                x != *negated
            }
            Expr::And(l, r) => l.eval_full(values, v) && r.eval_full(values, v),
            Expr::Or(l, r) => l.eval_full(values, v) || r.eval_full(values, v),
        }
    }

    /// The value of this subexpression in an evaluation, `None` if it was not
    /// (completely) evaluated.
    pub fn value_in(&self, v: &CondVector) -> Option<bool> {
        match self {
            Expr::Cond { index, negated } => v.get(*index).map(|x| x != *negated),
            Expr::And(l, r) => match l.value_in(v)? {
                false => Some(false),
                true => r.value_in(v),
            },
            Expr::Or(l, r) => match l.value_in(v)? {
                true => Some(true),
                false => r.value_in(v),
            },
        }
    }

    /// Whether the vector is what short-circuit evaluation of its own values gives:
    /// exactly the conditions evaluated that must be, and the right outcome.
    pub fn consistent(&self, v: &CondVector) -> bool {
        let mut seen = FixedBitSet::with_capacity(v.len());
        let out = self.walk(v, &mut seen);
        out == Some(v.outcome) && seen == v.evaluated
    }

    fn walk(&self, v: &CondVector, seen: &mut FixedBitSet) -> Option<bool> {
        match self {
            Expr::Cond { index, negated } => {
                let x = v.get(*index)?;
                seen.insert(*index);
                Some(x != *negated)
            }
            Expr::And(l, r) => match l.walk(v, seen)? {
                false => Some(false),
                true => r.walk(v, seen),
            },
            Expr::Or(l, r) => match l.walk(v, seen)? {
                true => Some(true),
                false => r.walk(v, seen),
            },
        }
    }

    /// Whether condition `c` determines the outcome of evaluation `v` (is not
    /// masked): for every operator above `c` whose other operand is to the right of
    /// `c` and was evaluated, that operand has the operator's non-controlling value
    /// (true for `&&`, false for `||`).
    pub fn determines(&self, c: usize, v: &CondVector) -> bool {
        if v.get(c).is_none() {
            return false;
        }
        let mut e = self;
        loop {
            match e {
                Expr::Cond { index, .. } => return *index == c,
                Expr::And(l, r) | Expr::Or(l, r) => {
                    let controlling = matches!(e, Expr::Or(..));
                    if l.mentions(c) {
                        if r.value_in(v) == Some(controlling) {
                            return false;
                        }
                        e = l;
                    } else {
                        e = r;
                    }
                }
            }
        }
    }

    /// Whether condition `c` occurs in this subexpression.
    pub fn mentions(&self, c: usize) -> bool {
        match self {
            Expr::Cond { index, .. } => *index == c,
            Expr::And(l, r) | Expr::Or(l, r) => l.mentions(c) || r.mentions(c),
        }
    }

    /// Renders the expression with the given condition names (`c0`, `c1`, … where
    /// a name is missing).
    pub fn render(&self, names: &[String]) -> String {
        fn go(e: &Expr, names: &[String], parent_and: Option<bool>, out: &mut String) {
            match e {
                Expr::Cond { index, negated } => {
                    if *negated {
                        out.push('!');
                    }
                    match names.get(*index) {
                        Some(n) => out.push_str(n),
                        None => {
                            out.push('c');
                            out.push_str(&index.to_string());
                        }
                    }
                }
                Expr::And(l, r) | Expr::Or(l, r) => {
                    let is_and = matches!(e, Expr::And(..));
                    let paren = parent_and.is_some_and(|p| p != is_and);
                    if paren {
                        out.push('(');
                    }
                    go(l, names, Some(is_and), out);
                    out.push_str(if is_and { " && " } else { " || " });
                    go(r, names, Some(is_and), out);
                    if paren {
                        out.push(')');
                    }
                }
            }
        }
        let mut s = String::new();
        go(self, names, None, &mut s);
        s
    }
}

/// Why a decision's structure or paths could not be derived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StructureError {
    /// The decision's subgraph has a cycle (see [`Decision::well_formed`]).
    #[error("the decision's subgraph is cyclic")]
    Cyclic,
    /// The subgraph is not the short-circuit evaluation of an expression over
    /// `&&`, `||` and `!` in which every condition occurs once (for example `?:`
    /// between conditions, or a value computed in an interstitial block).
    #[error("the decision is not a short-circuit expression of its conditions with && || !")]
    NotReadOnce,
    /// More conditions than [`MAX_STRUCTURE_CONDITIONS`].
    #[error("the decision has {0} conditions (at most {MAX_STRUCTURE_CONDITIONS} are analysed)")]
    TooLarge(usize),
    /// The decision has no conditions.
    #[error("the decision has no conditions")]
    Empty,
}

/// Where an edge inside a decision leads: a vertex of the decision (index into
/// the decision's vertex order) or out of it with an outcome.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    Vertex(usize),
    Exit(bool),
}

/// The decision's vertices in order (conditions then interstitial ones, each
/// in topological order) with their out-edges.
struct Local {
    vertices: Vec<NodeId>,
    /// condition index of each vertex
    cond: Vec<Option<usize>>,
    /// (edge, condition value of the edge for a condition vertex, step)
    out: Vec<Vec<(EdgeId, Option<bool>, Step)>>,
    entry: usize,
}

fn local(cfg: &Cfg, d: &Decision) -> Local {
    let vertices: Vec<NodeId> = d.vertices().collect();
    let pos: BTreeMap<NodeId, usize> = vertices.iter().enumerate().map(|(i, v)| (*v, i)).collect();
    let cond: Vec<Option<usize>> = (0..vertices.len()).map(|i| (i < d.conditions.len()).then_some(i)).collect();
    let out = vertices
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            cfg.out_edges(v)
                .map(|e| {
                    let ed = cfg.edge(e);
                    let value = cond[i].map(|_| ed.label == EdgeLabel::True);
                    let step = match (d.outcome_of(e), pos.get(&ed.dst)) {
                        (Some(o), _) => Step::Exit(o),
                        (None, Some(&k)) => Step::Vertex(k),
                        (None, None) => Step::Exit(false),
                    };
                    (e, value, step)
                })
                .collect()
        })
        .collect();
    let entry = pos.get(&d.entry).copied().unwrap_or(0);
    Local { vertices, cond, out, entry }
}

/// Reverse topological order of the local graph, or `Cyclic`.
fn reverse_topological(l: &Local) -> Result<Vec<usize>, StructureError> {
    let n = l.vertices.len();
    let mut indeg = vec![0usize; n];
    for outs in &l.out {
        for (_, _, s) in outs {
            if let Step::Vertex(k) = s {
                indeg[*k] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = ready.pop() {
        order.push(v);
        for (_, _, s) in &l.out[v] {
            if let Step::Vertex(k) = s {
                indeg[*k] -= 1;
                if indeg[*k] == 0 {
                    ready.push(*k);
                }
            }
        }
    }
    if order.len() != n {
        return Err(StructureError::Cyclic);
    }
    order.reverse();
    Ok(order)
}

/// Recovers the decision's boolean structure from its condition subgraph: the
/// unique (up to associativity) expression over `&&`, `||` and `!` whose
/// short-circuit evaluation has this subgraph, with conditions in evaluation
/// order. Interstitial vertices are stepped through.
pub fn decision_structure(cfg: &Cfg, d: &Decision) -> Result<Expr, StructureError> {
    let n = d.conditions.len();
    if n == 0 {
        return Err(StructureError::Empty);
    }
    if n > MAX_STRUCTURE_CONDITIONS {
        return Err(StructureError::TooLarge(n));
    }
    let l = local(cfg, d);
    reverse_topological(&l)?;
    // targets of each condition: 0..n a condition, n = outcome true, n + 1 = false
    let resolve = |mut step: Step| -> Result<usize, StructureError> {
        let mut guard = 0;
        loop {
            match step {
                Step::Exit(true) => return Ok(n),
                Step::Exit(false) => return Ok(n + 1),
                Step::Vertex(k) => match l.cond[k] {
                    Some(c) => return Ok(c),
                    None => {
                        // an interstitial vertex: one successor
                        let outs = &l.out[k];
                        if outs.len() != 1 || guard > l.vertices.len() {
                            return Err(StructureError::NotReadOnce);
                        }
                        step = outs[0].2;
                        guard += 1;
                    }
                },
            }
        }
    };
    let mut tgt = Vec::with_capacity(n);
    for c in 0..n {
        let mut t = None;
        let mut f = None;
        for &(_, value, step) in &l.out[c] {
            match value {
                Some(true) => t = Some(resolve(step)?),
                Some(false) => f = Some(resolve(step)?),
                None => {}
            }
        }
        let (Some(t), Some(f)) = (t, f) else { return Err(StructureError::NotReadOnce) };
        for x in [t, f] {
            if x < n && x <= c {
                return Err(StructureError::NotReadOnce);
            }
        }
        tgt.push((t, f));
    }
    parse(&tgt, n, 0, n, n, n + 1).ok_or(StructureError::NotReadOnce)
}

/// Parses conditions `[i, j)` evaluated with true continuation `t` and false
/// continuation `f` (targets as in [`decision_structure`]).
fn parse(tgt: &[(usize, usize)], n: usize, i: usize, j: usize, t: usize, f: usize) -> Option<Expr> {
    if j == i + 1 {
        let (hi, lo) = tgt[i];
        return if hi == t && lo == f {
            Some(Expr::Cond { index: i, negated: false })
        } else if hi == f && lo == t {
            Some(Expr::Cond { index: i, negated: true })
        } else {
            None
        };
    }
    let inside = |x: usize| x < n && x > i && x < j;
    let mut max_inside = i;
    let (mut uses_t, mut uses_f) = (false, false);
    for k in i + 1..j {
        // extend L = [i, k) by condition k - 1
        let (hi, lo) = tgt[k - 1];
        for x in [hi, lo] {
            if inside(x) {
                max_inside = max_inside.max(x);
            } else if x == t {
                uses_t = true;
            } else if x == f {
                uses_f = true;
            } else {
                return None; // leaves the range other than by its continuations
            }
        }
        if max_inside != k || uses_t == uses_f {
            continue;
        }
        // the smallest split is a top-level operator of some association of the
        // expression; no other split is tried (so the parse is O(n²) on any input)
        let (l, r) = if uses_f {
            // L's other continuation is k: L && R
            (parse(tgt, n, i, k, k, f)?, parse(tgt, n, k, j, t, f)?)
        } else {
            (parse(tgt, n, i, k, t, k)?, parse(tgt, n, k, j, t, f)?)
        };
        return Some(if uses_f { Expr::And(Box::new(l), Box::new(r)) } else { Expr::Or(Box::new(l), Box::new(r)) });
    }
    None
}

/// Why paths could not be numbered or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The decision's subgraph is cyclic.
    #[error("the decision's subgraph is cyclic")]
    Cyclic,
    /// The number of paths does not fit in 64 bits.
    #[error("the decision has more than 2^64 paths")]
    Overflow,
    /// More paths than the limit asked for.
    #[error("the decision has {count} paths (limit {limit})")]
    TooMany {
        /// Paths in the decision.
        count: u64,
        /// The limit.
        limit: u64,
    },
}

/// One edge of a decision's subgraph with its Ball–Larus increment.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub struct PathEdge {
    /// The CFG edge (inside the decision, or an outcome edge).
    pub edge: EdgeId,
    /// What taking it adds to the path id.
    pub increment: u64,
}

/// One path through a decision: its id and what it evaluates.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct PathVector {
    /// The path id, in `0..count`.
    pub id: u64,
    /// Conditions evaluated along the path, their values, and the outcome.
    pub vector: CondVector,
    /// The outcome edge the path leaves by.
    pub exit: EdgeId,
}

/// An out-edge in [`DecisionPaths`]: (edge, condition value, step, increment).
type NumberedEdge = (EdgeId, Option<bool>, Step, u64);

/// Ball–Larus path numbering of one decision (see the module documentation).
#[derive(Clone, Debug)]
pub struct DecisionPaths {
    local_vertices: Vec<NodeId>,
    cond: Vec<Option<usize>>,
    /// per vertex: (edge, condition value, step, increment)
    out: Vec<Vec<NumberedEdge>>,
    entry: usize,
    conditions: usize,
    count: u64,
}

impl DecisionPaths {
    /// Numbers the paths of decision `d` of `cfg`.
    pub fn new(cfg: &Cfg, d: &Decision) -> Result<DecisionPaths, PathError> {
        let l = local(cfg, d);
        let order = reverse_topological(&l).map_err(|_| PathError::Cyclic)?;
        let mut num = vec![0u64; l.vertices.len()];
        let mut out: Vec<Vec<NumberedEdge>> = vec![Vec::new(); l.vertices.len()];
        for &v in &order {
            let mut total = 0u64;
            for &(e, value, step) in &l.out[v] {
                out[v].push((e, value, step, total));
                let k = match step {
                    Step::Exit(_) => 1,
                    Step::Vertex(k) => num[k],
                };
                total = total.checked_add(k).ok_or(PathError::Overflow)?;
            }
            num[v] = total;
        }
        Ok(DecisionPaths {
            local_vertices: l.vertices,
            cond: l.cond,
            count: num.get(l.entry).copied().unwrap_or(0),
            out,
            entry: l.entry,
            conditions: d.conditions.len(),
        })
    }

    /// Number of paths from the decision's entry to an outcome edge.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Number of conditions (the width of the vectors).
    pub fn conditions(&self) -> usize {
        self.conditions
    }

    /// Every edge of the decision (inside it, and its outcome edges) with its
    /// increment, by edge id. Edges with increment 0 need no instrumentation.
    pub fn increments(&self) -> Vec<PathEdge> {
        let mut v: Vec<PathEdge> =
            self.out.iter().flatten().map(|&(edge, _, _, increment)| PathEdge { edge, increment }).collect();
        v.sort_by_key(|p| p.edge);
        v
    }

    /// The increment of `edge`, if it is an edge of the decision.
    pub fn increment(&self, edge: EdgeId) -> Option<u64> {
        self.out.iter().flatten().find(|x| x.0 == edge).map(|x| x.3)
    }

    /// The vertices of the decision in the order used here (conditions in
    /// evaluation order, then interstitial vertices).
    pub fn vertices(&self) -> &[NodeId] {
        &self.local_vertices
    }

    /// The out-edges of decision vertex `v` with their increments (empty if `v`
    /// is not a vertex of the decision).
    pub fn out_edges_of(&self, v: NodeId) -> impl Iterator<Item = (EdgeId, u64)> + '_ {
        let k = self.local_vertices.iter().position(|&x| x == v);
        k.into_iter().flat_map(move |k| self.out[k].iter().map(|&(e, _, _, inc)| (e, inc)))
    }

    /// The edges of the path with this id, from the decision's entry to its
    /// outcome edge, or `None` if `id >= count`.
    pub fn decode_edges(&self, id: u64) -> Option<Vec<EdgeId>> {
        if id >= self.count {
            return None;
        }
        let mut rem = id;
        let mut at = self.entry;
        let mut edges = Vec::new();
        for _ in 0..=self.local_vertices.len() {
            let (e, _, step, inc) = *self.out[at].iter().rev().find(|x| x.3 <= rem)?;
            rem -= inc;
            edges.push(e);
            match step {
                Step::Exit(_) => return (rem == 0).then_some(edges),
                Step::Vertex(k) => at = k,
            }
        }
        None
    }

    /// The id of the path along `edges` (from the decision's entry to an
    /// outcome edge), or `None` if they are not such a path.
    pub fn encode_edges(&self, edges: &[EdgeId]) -> Option<u64> {
        let mut at = self.entry;
        let mut id = 0u64;
        for (i, &e) in edges.iter().enumerate() {
            let &(_, _, step, inc) = self.out[at].iter().find(|x| x.0 == e)?;
            id += inc;
            match step {
                Step::Exit(_) => return (i + 1 == edges.len()).then_some(id),
                Step::Vertex(k) => at = k,
            }
        }
        None
    }

    /// The path with this id, or `None` if `id >= count`.
    pub fn decode(&self, id: u64) -> Option<PathVector> {
        if id >= self.count {
            return None;
        }
        let mut rem = id;
        let mut at = self.entry;
        let mut v = CondVector::new(self.conditions, false);
        for _ in 0..=self.local_vertices.len() {
            let (e, value, step, inc) = *self.out[at].iter().rev().find(|x| x.3 <= rem)?;
            rem -= inc;
            if let (Some(c), Some(x)) = (self.cond[at], value) {
                v.set(c, x);
            }
            match step {
                Step::Exit(o) => {
                    v.outcome = o;
                    return (rem == 0).then_some(PathVector { id, vector: v, exit: e });
                }
                Step::Vertex(k) => at = k,
            }
        }
        None
    }

    /// The id of the path that evaluates `v` (its evaluated conditions' values
    /// choose the way; its outcome must match), if there is one.
    pub fn encode(&self, v: &CondVector) -> Option<u64> {
        let mut at = self.entry;
        let mut id = 0u64;
        for _ in 0..=self.local_vertices.len() {
            let outs = &self.out[at];
            let pick = match self.cond[at] {
                Some(c) => {
                    let x = v.get(c)?;
                    outs.iter().find(|o| o.1 == Some(x))?
                }
                None => outs.first()?,
            };
            id += pick.3;
            match pick.2 {
                Step::Exit(o) => {
                    let vv = self.decode(id)?;
                    return (o == v.outcome && vv.vector.evaluated == v.evaluated).then_some(id);
                }
                Step::Vertex(k) => at = k,
            }
        }
        None
    }

    /// Every path, in id order, if there are at most `limit`.
    pub fn paths(&self, limit: u64) -> Result<Vec<PathVector>, PathError> {
        if self.count > limit {
            return Err(PathError::TooMany { count: self.count, limit });
        }
        Ok((0..self.count).filter_map(|i| self.decode(i)).collect())
    }

    /// The evaluation a run's edge set shows, when it shows exactly one: the run
    /// entered the decision, and its edges inside the decision form one path.
    /// `Ok(None)`: the run did not evaluate the decision; `Err(())`: it evaluated
    /// it more than once along different paths (a loop), so the set cannot tell
    /// the evaluations apart.
    #[allow(clippy::result_unit_err)]
    pub fn from_edges(&self, edges: &FixedBitSet) -> Result<Option<PathVector>, ()> {
        let taken = |e: EdgeId| edges.contains(e.index());
        let total: usize = self.out.iter().flatten().filter(|x| taken(x.0)).count();
        if total == 0 {
            return Ok(None);
        }
        let mut at = self.entry;
        let mut id = 0u64;
        let mut walked = 0usize;
        let mut v = CondVector::new(self.conditions, false);
        for _ in 0..=self.local_vertices.len() {
            let mut it = self.out[at].iter().filter(|x| taken(x.0));
            let (Some(&(e, value, step, inc)), None) = (it.next(), it.next()) else { return Err(()) };
            walked += 1;
            id += inc;
            if let (Some(c), Some(x)) = (self.cond[at], value) {
                v.set(c, x);
            }
            match step {
                Step::Exit(o) => {
                    v.outcome = o;
                    return if walked == total { Ok(Some(PathVector { id, vector: v, exit: e })) } else { Err(()) };
                }
                Step::Vertex(k) => at = k,
            }
        }
        Err(())
    }
}

/// Every path through decision `d` (path id → condition vector), for decisions
/// with at most [`DEFAULT_PATH_LIMIT`] paths.
pub fn decision_paths(cfg: &Cfg, d: &Decision) -> Result<Vec<PathVector>, PathError> {
    DecisionPaths::new(cfg, d)?.paths(DEFAULT_PATH_LIMIT)
}

/// Evaluations of decision `d` read off edge-set runs: exact for runs that
/// evaluated it once (or always along the same path). Also returns the names of
/// the runs whose edge set mixes several evaluations and was skipped.
pub fn evaluations_from_runs(
    cfg: &Cfg,
    d: &Decision,
    runs: &[Run],
) -> Result<(Vec<Evaluation>, Vec<String>), PathError> {
    let p = DecisionPaths::new(cfg, d)?;
    let mut evals = Vec::new();
    let mut mixed = Vec::new();
    for r in runs {
        match p.from_edges(&r.edges) {
            Ok(Some(pv)) => evals.push(Evaluation { test: r.test.clone(), vector: pv.vector }),
            Ok(None) => {}
            Err(()) => mixed.push(r.test.clone()),
        }
    }
    Ok((evals, mixed))
}

/// Which MC/DC (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// `llvm-cov`'s: short-circuited conditions are don't cares.
    UniqueCause,
    /// DO-178C masking MC/DC.
    Masking,
    /// Other conditions evaluated identically in both vectors.
    StrictUniqueCause,
}

impl Variant {
    /// All variants, in report order.
    pub const ALL: [Variant; 3] = [Variant::UniqueCause, Variant::Masking, Variant::StrictUniqueCause];

    /// The name used in reports and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::UniqueCause => "unique-cause",
            Variant::Masking => "masking",
            Variant::StrictUniqueCause => "strict-unique-cause",
        }
    }

    /// Parses [`Variant::as_str`].
    pub fn parse(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A distinct condition vector that was executed, and by which tests.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct ExecutedVector {
    /// The vector (normalised: values of unevaluated conditions cleared).
    pub vector: CondVector,
    /// Tests that produced it, in first-seen order, without duplicates.
    pub tests: Vec<String>,
    /// How many evaluations produced it.
    pub evaluations: u64,
}

/// An independence pair: indexes into [`DecisionMcdc::vectors`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub struct IndependencePair {
    /// The vector with outcome true.
    pub when_true: usize,
    /// The vector with outcome false.
    pub when_false: usize,
}

/// MC/DC of one condition.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct ConditionMcdc {
    /// Position in the decision's conditions.
    pub index: usize,
    /// Some evaluation found it true.
    pub evaluated_true: bool,
    /// Some evaluation found it false.
    pub evaluated_false: bool,
    /// Every independence pair among the executed vectors (empty: missing).
    pub pairs: Vec<IndependencePair>,
}

impl ConditionMcdc {
    /// Whether independence is shown.
    pub fn independent(&self) -> bool {
        !self.pairs.is_empty()
    }
}

/// MC/DC of one decision under one variant.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct DecisionMcdc {
    /// The variant computed.
    pub variant: Variant,
    /// Distinct executed vectors, outcome-false ones first, each group in first-seen order.
    pub vectors: Vec<ExecutedVector>,
    /// Per condition.
    pub conditions: Vec<ConditionMcdc>,
    /// Outcome false was seen / outcome true was seen.
    pub outcomes: [bool; 2],
    /// Conditions whose independence is shown.
    pub independent: usize,
}

impl DecisionMcdc {
    /// Tests that produced vector `i`.
    pub fn tests_of(&self, i: usize) -> &[String] {
        self.vectors.get(i).map(|v| v.tests.as_slice()).unwrap_or(&[])
    }
}

/// Errors from [`analyze`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McdcError {
    /// A vector has the wrong number of conditions.
    #[error("test {test}: the vector has {found} conditions, the decision {expected}")]
    Width {
        /// The test.
        test: String,
        /// Conditions of the decision.
        expected: usize,
        /// Conditions in the vector.
        found: usize,
    },
    /// A vector that short-circuit evaluation of the decision cannot produce.
    #[error("test {test}: {vector} is not a short-circuit evaluation of {expr}")]
    Inconsistent {
        /// The test.
        test: String,
        /// The vector, as `TF- → T`.
        vector: String,
        /// The decision's structure.
        expr: String,
    },
    /// Masking MC/DC needs the decision's structure.
    #[error("masking MC/DC needs the decision's structure, which is unknown")]
    NoStructure,
}

/// MC/DC of one decision with `conditions` conditions from its recorded
/// evaluations. `structure` (from [`decision_structure`]) is required for
/// [`Variant::Masking`]; when given, every vector is checked against it.
pub fn analyze(
    conditions: usize,
    structure: Option<&Expr>,
    evaluations: &[Evaluation],
    variant: Variant,
) -> Result<DecisionMcdc, McdcError> {
    if variant == Variant::Masking && structure.is_none() {
        return Err(McdcError::NoStructure);
    }
    let mut groups: [Vec<ExecutedVector>; 2] = [Vec::new(), Vec::new()];
    let mut seen: std::collections::HashMap<CondVector, (bool, usize)> = std::collections::HashMap::new();
    for ev in evaluations {
        if ev.vector.len() != conditions {
            return Err(McdcError::Width { test: ev.test.clone(), expected: conditions, found: ev.vector.len() });
        }
        let v = ev.vector.normalized();
        if let Some(s) = structure
            && !s.consistent(&v)
        {
            return Err(McdcError::Inconsistent { test: ev.test.clone(), vector: v.to_string(), expr: s.render(&[]) });
        }
        let key = match seen.get(&v) {
            Some(&k) => k,
            None => {
                let g = &mut groups[v.outcome as usize];
                g.push(ExecutedVector { vector: v.clone(), tests: Vec::new(), evaluations: 0 });
                let k = (v.outcome, g.len() - 1);
                seen.insert(v, k);
                k
            }
        };
        let x = &mut groups[key.0 as usize][key.1];
        x.evaluations += 1;
        if !x.tests.contains(&ev.test) {
            x.tests.push(ev.test.clone());
        }
    }
    let [falses, trues] = groups;
    let nf = falses.len();
    let vectors: Vec<ExecutedVector> = falses.into_iter().chain(trues).collect();
    let mut per = Vec::with_capacity(conditions);
    for c in 0..conditions {
        let evaluated_true = vectors.iter().any(|v| v.vector.get(c) == Some(true));
        let evaluated_false = vectors.iter().any(|v| v.vector.get(c) == Some(false));
        let mut pairs = Vec::new();
        for (ti, a) in vectors.iter().enumerate().skip(nf) {
            for (fi, b) in vectors.iter().enumerate().take(nf) {
                if shows(c, &a.vector, &b.vector, structure, variant) {
                    pairs.push(IndependencePair { when_true: ti, when_false: fi });
                }
            }
        }
        per.push(ConditionMcdc { index: c, evaluated_true, evaluated_false, pairs });
    }
    let independent = per.iter().filter(|c| c.independent()).count();
    let outcomes = [vectors.iter().any(|v| !v.vector.outcome), vectors.iter().any(|v| v.vector.outcome)];
    Ok(DecisionMcdc { variant, vectors, conditions: per, outcomes, independent })
}

/// Whether vectors `a` (outcome true) and `b` (outcome false) show condition `c`'s
/// independence under `variant`.
pub fn shows(c: usize, a: &CondVector, b: &CondVector, structure: Option<&Expr>, variant: Variant) -> bool {
    let (Some(x), Some(y)) = (a.get(c), b.get(c)) else { return false };
    if x == y || a.outcome == b.outcome {
        return false;
    }
    match variant {
        Variant::UniqueCause => {
            let mut diff = a.values.clone();
            diff.symmetric_difference_with(&b.values);
            diff.intersect_with(&a.evaluated);
            diff.intersect_with(&b.evaluated);
            diff.count_ones(..) == 1
        }
        Variant::StrictUniqueCause => {
            if a.evaluated != b.evaluated {
                return false;
            }
            let mut diff = a.values.clone();
            diff.symmetric_difference_with(&b.values);
            diff.intersect_with(&a.evaluated);
            diff.count_ones(..) == 1
        }
        Variant::Masking => structure.is_some_and(|s| s.determines(c, a) && s.determines(c, b)),
    }
}

/// One decision's MC/DC located in the source, for reports ([`crate::html`]).
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct DecisionReport {
    /// The source file (as the coverage data names it).
    pub file: String,
    /// The line of the decision's first condition.
    pub line: u32,
    /// The function it is in.
    pub function: String,
    /// The decision as an expression over its conditions' texts, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// The conditions' texts, in evaluation order.
    pub conditions: Vec<String>,
    /// One result per variant computed.
    pub results: Vec<DecisionMcdc>,
    /// Why some variant could not be computed, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where each condition starts in [`DecisionReport::file`] (`None`: no span,
    /// or a span in another file), so reports can show the text as written.
    #[serde(skip)]
    pub condition_spans: Vec<Option<ConditionSpan>>,
    /// The decision's structure, to render it with other condition texts.
    #[serde(skip)]
    pub structure: Option<Expr>,
}

/// Where a condition starts in its file: the line and column of its first token in
/// the preprocessed text (the column is the source's only up to the first macro
/// expanded on that line) and the line of its last token.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConditionSpan {
    /// The line of the first token.
    pub line: u32,
    /// The column (1-based, in the preprocessed text) of the first token.
    pub col: u32,
    /// The line of the last token.
    pub end_line: u32,
}

impl ConditionSpan {
    /// The span of `s`.
    pub fn of(s: &retest_graph::Span) -> ConditionSpan {
        ConditionSpan { line: s.line, col: s.col, end_line: s.end_line }
    }
}

impl DecisionReport {
    /// The result for `variant`, if computed.
    pub fn result(&self, variant: Variant) -> Option<&DecisionMcdc> {
        self.results.iter().find(|r| r.variant == variant)
    }
}

/// MC/DC of decision `d` of `cfg` under each of `variants`, with the conditions
/// named by their node text. A variant that cannot be computed (masking without
/// a structure, or vectors the structure cannot produce) is left out and
/// explained in [`DecisionReport::note`].
pub fn decision_report(
    cfg: &Cfg,
    d: &Decision,
    evaluations: &[Evaluation],
    variants: &[Variant],
    location: (&str, u32, &str),
) -> DecisionReport {
    let (file, line, function) = location;
    let conditions: Vec<String> = d.conditions.iter().map(|&c| cfg.node(c).text.clone()).collect();
    let structure = decision_structure(cfg, d);
    let mut notes = Vec::new();
    let mut results = Vec::new();
    for &v in variants {
        match analyze(d.conditions.len(), structure.as_ref().ok(), evaluations, v) {
            Ok(r) => results.push(r),
            Err(McdcError::NoStructure) => {
                if let Err(e) = &structure {
                    notes.push(format!("{}: {e}", v.as_str()));
                }
            }
            Err(e) => notes.push(format!("{}: {e}", v.as_str())),
        }
    }
    DecisionReport {
        file: file.to_string(),
        line,
        function: function.to_string(),
        expression: structure.as_ref().ok().map(|s| s.render(&conditions)),
        condition_spans: d.conditions.iter().map(|&c| cfg.node(c).span.as_ref().map(ConditionSpan::of)).collect(),
        structure: structure.ok(),
        conditions,
        results,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// A decision with at most this many paths records its evaluations in cells;
/// one with more, in the runtime's id set.
pub const EVALUATION_CELL_LIMIT: u64 = DEFAULT_PATH_LIMIT;

/// One decision of a unit under `retest cc --mcdc`: its path numbering and where
/// its evaluations are recorded.
#[derive(Clone, Debug)]
pub struct DecisionSlot {
    /// The numbering, or why the decision's evaluations are not recorded.
    pub paths: Result<DecisionPaths, String>,
    /// Where evaluations go (`None` when not recorded).
    pub sink: Option<Sink>,
}

/// The decisions of one procedure.
#[derive(Clone, Debug)]
pub struct ProcDecisions {
    /// The procedure's CFDG ([`Cfdg::for_procedure`]); `slots[j]` is `cfdg.decisions[j]`.
    pub cfdg: Cfdg,
    pub slots: Vec<DecisionSlot>,
}

/// Where every decision of a unit records its evaluations: cell `base + id` of
/// the MC/DC section for an evaluation along path `id` of the decision's
/// [`DecisionPaths`], or id `id` under key [`MCDC_KEY_BASE`] + the decision's
/// number in the unit for decisions with more than [`EVALUATION_CELL_LIMIT`]
/// paths. Deterministic in the unit: the instrumenter and every reader compute
/// the same layout.
#[derive(Clone, Debug)]
pub struct McdcLayout {
    pub procs: Vec<ProcDecisions>,
    /// Cells of the MC/DC section.
    pub cells: u32,
}

impl McdcLayout {
    pub fn new(unit: &Unit) -> McdcLayout {
        let mut cells = 0u32;
        let mut number = 0u32;
        let mut procs = Vec::with_capacity(unit.procedures.len());
        for p in &unit.procedures {
            let cfdg = Cfdg::for_procedure(p);
            let slots = cfdg
                .decisions
                .iter()
                .map(|d| {
                    let key = MCDC_KEY_BASE + number;
                    number += 1;
                    let paths = if d.well_formed {
                        DecisionPaths::new(&p.cond, d).map_err(|e| e.to_string())
                    } else {
                        Err("the decision is not well formed (it is not a short-circuit expression)".to_string())
                    };
                    let sink = match &paths {
                        Ok(dp) if dp.count() <= EVALUATION_CELL_LIMIT && u64::from(cells) + dp.count() < 1 << 31 => {
                            let base = cells;
                            cells += dp.count() as u32;
                            Some(Sink::Cell { sect: SECT_MCDC, base })
                        }
                        Ok(_) => Some(Sink::Id { key }),
                        Err(_) => None,
                    };
                    DecisionSlot { paths, sink }
                })
                .collect();
            procs.push(ProcDecisions { cfdg, slots });
        }
        McdcLayout { procs, cells }
    }

    /// The recording components of procedure `i`'s decisions, with each
    /// decision's index: the first condition sets the register to its edge's
    /// increment, later edges add theirs, and every outcome edge records.
    pub fn components(&self, i: usize) -> Vec<(u32, Component)> {
        let pd = &self.procs[i];
        let mut out = Vec::new();
        for (j, (d, slot)) in pd.cfdg.decisions.iter().zip(&pd.slots).enumerate() {
            let (Ok(paths), Some(sink)) = (&slot.paths, slot.sink) else { continue };
            let mut c = Component::default();
            for v in paths.vertices() {
                for (e, inc) in paths.out_edges_of(*v) {
                    let mut acts = Vec::with_capacity(2);
                    if *v == d.entry {
                        acts.push(Action::Set(inc));
                    } else if inc != 0 {
                        acts.push(Action::Add(inc));
                    }
                    if d.outcome_of(e).is_some() {
                        acts.push(Action::Record { sink, add: 0 });
                    }
                    c.push(e, &acts);
                }
            }
            out.push((j as u32, c));
        }
        out
    }

    /// Per procedure and decision: where its evaluations are recorded in a build
    /// that placed `placed` (`None` for decisions not recorded there).
    pub fn sinks(&self, placed: &retest_graph::recording::UnitRecording) -> Vec<Vec<Option<Sink>>> {
        self.procs
            .iter()
            .enumerate()
            .map(|(i, pd)| {
                pd.slots.iter().enumerate().map(|(j, s)| s.sink.filter(|_| placed.records_decision(i, j))).collect()
            })
            .collect()
    }

    /// The evaluations of decision `j` of procedure `i` that recorded `cells`
    /// (the unit's MC/DC cells that were hit) and `ids` (the ids recorded under
    /// the decision's key), decoded.
    pub fn evaluations(&self, i: usize, j: usize, cells: &RoaringBitmap, ids: &[u64]) -> Vec<PathVector> {
        let slot = &self.procs[i].slots[j];
        let Ok(paths) = &slot.paths else { return Vec::new() };
        match slot.sink {
            Some(Sink::Cell { base, .. }) => {
                let hi = base as u64 + paths.count();
                cells
                    .range(base..hi.min(u64::from(u32::MAX)) as u32)
                    .filter_map(|c| paths.decode(u64::from(c - base)))
                    .collect()
            }
            Some(Sink::Id { .. }) => ids.iter().filter_map(|&id| paths.decode(id)).collect(),
            None => Vec::new(),
        }
    }
}
