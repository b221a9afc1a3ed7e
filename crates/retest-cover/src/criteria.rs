//! The coverage criteria of 001 §VI, defined on a CFDG with runs as sets of edges.
//!
//! A *run* is the set of edges one test walked (001 §III-D; loops make a run
//! walk an edge any number of times, the set forgets how often and in which
//! order). The paper defines eight conditions and each criterion as a set of them:
//!
//! | criterion | conditions |
//! |-----------|------------|
//! | SC        | 1          |
//! | DC        | 1, 2       |
//! | CC        | 1, 3       |
//! | D/CC      | 1, 2, 3    |
//! | MCC       | 1, 4       |
//! | FPC       | 1, 5       |
//! | MC/DC     | 2, 3, 6, 7, 8 |
//!
//! The conditions:
//!
//! 1. every vertex is visited;
//! 2. every decision takes both outcomes;
//! 3. every condition takes both edges;
//! 4. for every condition, two runs take different edges of it while the other
//!    vertices of the decision take the same edges;
//! 5. for every condition, two runs take different edges of it and leave the
//!    decision by different outcomes;
//! 6. the entry vertices are visited;
//! 7. the exit vertices are visited;
//! 8. Conditions 4 and 5 by the same pair of runs.
//!
//! Each condition is reported as *obligations* at the granularity of the
//! paper's `∀` (a vertex, a decision, a condition of a decision), each covered
//! with a witness (test names) or missing.
//!
//! **Readings.** The formulas as printed differ from the prose in ways that
//! matter, so both are offered ([`Reading`]):
//!
//! * [`Reading::AsPrinted`]: Conditions 2 and 3 quantify one run (`∃ r ∈ R`
//!   containing both edges), which only a loop can satisfy; Conditions 5 and 8
//!   require the *same* vertex `c` (`o`) to leave the decision in both runs; edges
//!   are compared by their target vertices (`s1 ≠ s2`), so `if (c) ;` — both
//!   edges to one vertex — can never be covered; entry and exit vertices are all
//!   vertices without in-edges (out-edges), which includes unreachable code.
//! * [`Reading::Intended`]: two runs for Conditions 2 and 3 ("test cases which
//!   visit both …"), any vertices of the decision for the outcome change in 5 and
//!   8, edges compared as edges and outcomes by their value, and the CFG's entry
//!   and exit.
//!
//! In both readings `successors(D)` in Conditions 5 and 8 means the decision's
//! successors outside it (001 Lemma 1); the paper's own definition of
//! `successor(D)` also contains the decision's inner vertices, which would make
//! `{x1, x2} = successors(D)` false for every decision with two conditions or more.
//!
//! Condition 4 (and so 8) compares *all* other edges of the decision: a
//! condition that short-circuits the ones after it can only be shown when the
//! runs evaluate the decision several times. In `a && b` (no loop) `a` never
//! satisfies Condition 8, where per-evaluation unique-cause MC/DC
//! ([`crate::mcdc`]) treats the short-circuited `b` as a don't care.

use std::collections::BTreeMap;
use std::fmt;

use fixedbitset::FixedBitSet;
use retest_graph::{Cfg, EdgeId, NodeId};
use serde::Serialize;

use crate::cfdg::{Cfdg, Decision, DecisionId};

/// The edges one test walked in one CFG (condition level), by edge id.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Run {
    /// The test's name.
    pub test: String,
    /// Bit `e` is set when the test walked edge `e`.
    pub edges: FixedBitSet,
}

impl Run {
    /// A run from the ids of the edges walked.
    pub fn new(test: impl Into<String>, edges: impl IntoIterator<Item = EdgeId>, edge_count: usize) -> Run {
        let mut set = FixedBitSet::with_capacity(edge_count);
        for e in edges {
            set.grow(e.index() + 1);
            set.insert(e.index());
        }
        Run { test: test.into(), edges: set }
    }

    fn has(&self, e: EdgeId) -> bool {
        self.edges.contains(e.index())
    }
}

/// A coverage criterion of 001 §VI.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Criterion {
    /// Statement coverage (§VI-A).
    Sc,
    /// Decision coverage (§VI-B).
    Dc,
    /// Condition coverage (§VI-C).
    Cc,
    /// Decision/condition coverage (§VI-D).
    Dcc,
    /// Multiple condition coverage (§VI-E), as the paper formalises it (Condition 4).
    Mcc,
    /// Full predicate coverage (§VI-F).
    Fpc,
    /// Modified condition/decision coverage (§VI-G).
    Mcdc,
}

impl Criterion {
    /// All criteria, weakest first.
    pub const ALL: [Criterion; 7] =
        [Criterion::Sc, Criterion::Dc, Criterion::Cc, Criterion::Dcc, Criterion::Mcc, Criterion::Fpc, Criterion::Mcdc];

    /// The short name used on the command line (`sc`, `dc`, `cc`, `dcc`, `mcc`, `fpc`, `mcdc`).
    pub fn as_str(self) -> &'static str {
        match self {
            Criterion::Sc => "sc",
            Criterion::Dc => "dc",
            Criterion::Cc => "cc",
            Criterion::Dcc => "dcc",
            Criterion::Mcc => "mcc",
            Criterion::Fpc => "fpc",
            Criterion::Mcdc => "mcdc",
        }
    }

    /// The name used in reports (`SC`, `D/CC`, `MC/DC`, …).
    pub fn title(self) -> &'static str {
        match self {
            Criterion::Sc => "SC",
            Criterion::Dc => "DC",
            Criterion::Cc => "CC",
            Criterion::Dcc => "D/CC",
            Criterion::Mcc => "MCC",
            Criterion::Fpc => "FPC",
            Criterion::Mcdc => "MC/DC",
        }
    }

    /// Parses [`Criterion::as_str`] (also `d/cc` and `mc/dc`, any case).
    pub fn parse(s: &str) -> Option<Criterion> {
        let s = s.to_ascii_lowercase().replace('/', "");
        Criterion::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The paper's conditions the criterion consists of.
    pub fn conditions(self) -> &'static [u8] {
        match self {
            Criterion::Sc => &[1],
            Criterion::Dc => &[1, 2],
            Criterion::Cc => &[1, 3],
            Criterion::Dcc => &[1, 2, 3],
            Criterion::Mcc => &[1, 4],
            Criterion::Fpc => &[1, 5],
            Criterion::Mcdc => &[2, 3, 6, 7, 8],
        }
    }
}

/// How to read the paper's formulas (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// The formulas as printed.
    AsPrinted,
    /// What the prose says.
    #[default]
    Intended,
}

/// Something a condition requires.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Obligation {
    /// Condition 1: the vertex is visited.
    Vertex {
        /// The vertex.
        node: NodeId,
    },
    /// Condition 2: the decision takes both outcomes.
    DecisionOutcomes {
        /// The decision.
        decision: DecisionId,
    },
    /// Condition 3: the condition takes both edges.
    ConditionOutcomes {
        /// The decision.
        decision: DecisionId,
        /// The condition vertex.
        node: NodeId,
    },
    /// Conditions 4, 5 and 8: a pair of runs that varies the condition as required.
    Pair {
        /// 4, 5 or 8.
        condition: u8,
        /// The decision.
        decision: DecisionId,
        /// The condition vertex.
        node: NodeId,
    },
    /// Condition 6: the entry vertex is left.
    Entry {
        /// The vertex.
        node: NodeId,
    },
    /// Condition 7: the exit vertex is reached.
    Exit {
        /// The vertex.
        node: NodeId,
    },
}

impl fmt::Display for Obligation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Obligation::Vertex { node } => write!(f, "visit n{}", node.0),
            Obligation::DecisionOutcomes { decision } => write!(f, "decision {} takes both outcomes", decision.0),
            Obligation::ConditionOutcomes { node, decision } => {
                write!(f, "condition n{} of decision {} takes both edges", node.0, decision.0)
            }
            Obligation::Pair { condition: 4, node, decision } => {
                write!(f, "two runs vary only condition n{} of decision {} (Condition 4)", node.0, decision.0)
            }
            Obligation::Pair { condition: 5, node, decision } => write!(
                f,
                "two runs vary condition n{} of decision {} and its outcome (Condition 5)",
                node.0, decision.0
            ),
            Obligation::Pair { condition, node, decision } => write!(
                f,
                "two runs vary only condition n{} of decision {} and its outcome (Condition {condition})",
                node.0, decision.0
            ),
            Obligation::Entry { node } => write!(f, "leave entry vertex n{}", node.0),
            Obligation::Exit { node } => write!(f, "reach exit vertex n{}", node.0),
        }
    }
}

/// An obligation and whether it is met.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct ObligationResult {
    /// What is required.
    pub obligation: Obligation,
    /// Tests that meet it (one, or the two of a pair); empty when missing.
    pub witness: Vec<String>,
    /// When missing, what exactly is lacking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl ObligationResult {
    /// Whether the obligation is met.
    pub fn covered(&self) -> bool {
        self.missing.is_none()
    }
}

/// One paper condition over a CFDG.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct ConditionReport {
    /// The condition's number (1–8).
    pub condition: u8,
    /// Obligations met.
    pub covered: usize,
    /// Obligations.
    pub total: usize,
    /// Every obligation.
    pub results: Vec<ObligationResult>,
}

/// One criterion: its conditions and their sums.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct CriterionReport {
    /// The criterion.
    pub criterion: Criterion,
    /// Obligations met, over all its conditions.
    pub covered: usize,
    /// Obligations, over all its conditions.
    pub total: usize,
    /// The conditions, in the order of [`Criterion::conditions`].
    pub conditions: Vec<ConditionReport>,
}

impl CriterionReport {
    /// Whether every obligation is met (100 %).
    pub fn met(&self) -> bool {
        self.covered == self.total
    }

    /// Covered obligations in percent (100 when there are none).
    pub fn percent(&self) -> f64 {
        if self.total == 0 { 100.0 } else { 100.0 * self.covered as f64 / self.total as f64 }
    }

    /// The obligations that are not met.
    pub fn missing(&self) -> impl Iterator<Item = &ObligationResult> {
        self.conditions.iter().flat_map(|c| &c.results).filter(|r| !r.covered())
    }
}

/// Evaluates `criteria` for the runs of one CFG and its CFDG.
pub fn evaluate(
    cfg: &Cfg,
    cfdg: &Cfdg,
    runs: &[Run],
    criteria: &[Criterion],
    reading: Reading,
) -> Vec<CriterionReport> {
    let mut cache: BTreeMap<u8, ConditionReport> = BTreeMap::new();
    criteria
        .iter()
        .map(|&c| {
            let conditions: Vec<ConditionReport> = c
                .conditions()
                .iter()
                .map(|&k| cache.entry(k).or_insert_with(|| condition(cfg, cfdg, runs, k, reading)).clone())
                .collect();
            CriterionReport {
                criterion: c,
                covered: conditions.iter().map(|x| x.covered).sum(),
                total: conditions.iter().map(|x| x.total).sum(),
                conditions,
            }
        })
        .collect()
}

/// Evaluates the paper's condition `k` (1–8; anything else gives no obligations).
pub fn condition(cfg: &Cfg, cfdg: &Cfdg, runs: &[Run], k: u8, reading: Reading) -> ConditionReport {
    let results = match k {
        1 => vertices(cfg, runs),
        2..=5 | 8 => decisions(cfg, cfdg, runs, k, reading),
        6 => ends(cfg, runs, reading, true),
        7 => ends(cfg, runs, reading, false),
        _ => Vec::new(),
    };
    ConditionReport {
        condition: k,
        covered: results.iter().filter(|r| r.covered()).count(),
        total: results.len(),
        results,
    }
}

fn met(obligation: Obligation, witness: Vec<String>) -> ObligationResult {
    ObligationResult { obligation, witness, missing: None }
}

fn unmet(obligation: Obligation, why: String) -> ObligationResult {
    ObligationResult { obligation, witness: Vec::new(), missing: Some(why) }
}

/// Condition 1.
fn vertices(cfg: &Cfg, runs: &[Run]) -> Vec<ObligationResult> {
    let mut first: Vec<Option<usize>> = vec![None; cfg.node_count()];
    for (i, r) in runs.iter().enumerate() {
        for e in r.edges.ones() {
            if e >= cfg.edge_count() {
                continue;
            }
            let ed = cfg.edge(EdgeId(e as u32));
            for v in [ed.src, ed.dst] {
                first[v.index()].get_or_insert(i);
            }
        }
    }
    cfg.node_ids()
        .map(|v| {
            let o = Obligation::Vertex { node: v };
            match first[v.index()] {
                Some(i) => met(o, vec![runs[i].test.clone()]),
                None => unmet(o, format!("no run visits n{}", v.0)),
            }
        })
        .collect()
}

/// Conditions 6 (`entry`) and 7.
fn ends(cfg: &Cfg, runs: &[Run], reading: Reading, entry: bool) -> Vec<ObligationResult> {
    let ends: Vec<NodeId> = match (reading, entry) {
        (Reading::Intended, true) => vec![cfg.entry()],
        (Reading::Intended, false) => vec![cfg.exit()],
        (Reading::AsPrinted, true) => cfg.node_ids().filter(|&v| cfg.in_edges(v).is_empty()).collect(),
        (Reading::AsPrinted, false) => cfg.node_ids().filter(|&v| cfg.out_edges(v).len() == 0).collect(),
    };
    ends.into_iter()
        .map(|v| {
            let edges: Vec<EdgeId> = if entry { cfg.out_edges(v).collect() } else { cfg.in_edges(v).to_vec() };
            let o = if entry { Obligation::Entry { node: v } } else { Obligation::Exit { node: v } };
            match runs.iter().find(|r| edges.iter().any(|&e| r.has(e))) {
                Some(r) => met(o, vec![r.test.clone()]),
                None if entry => unmet(o, format!("no run leaves entry vertex n{}", v.0)),
                None => unmet(o, format!("no run reaches exit vertex n{}", v.0)),
            }
        })
        .collect()
}

/// A decision's edges and the distinct projections of the runs onto them.
struct Projections {
    /// out-edges of the decision's vertices
    edges: Vec<EdgeId>,
    /// for each edge: (source, target, outcome value if an outcome edge)
    info: Vec<(NodeId, NodeId, Option<bool>)>,
    /// distinct projections with the index of the first run that has it
    sets: Vec<(FixedBitSet, usize)>,
    /// successors of the decision outside it
    succ: Vec<NodeId>,
}

impl Projections {
    fn new(cfg: &Cfg, d: &Decision, runs: &[Run]) -> Projections {
        let mut verts: Vec<NodeId> = d.vertices().collect();
        verts.sort();
        let edges: Vec<EdgeId> = verts.iter().flat_map(|&v| cfg.out_edges(v)).collect();
        let info = edges
            .iter()
            .map(|&e| {
                let ed = cfg.edge(e);
                (ed.src, ed.dst, d.outcome_of(e))
            })
            .collect();
        let mut seen: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        let mut sets = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let mut p = FixedBitSet::with_capacity(edges.len());
            for (k, &e) in edges.iter().enumerate() {
                if r.has(e) {
                    p.insert(k);
                }
            }
            let key: Vec<usize> = p.ones().collect();
            if key.is_empty() || seen.contains_key(&key) {
                continue;
            }
            seen.insert(key, i);
            sets.push((p, i));
        }
        Projections { edges, info, sets, succ: d.successors() }
    }

    /// Edge indexes (into `edges`) leaving vertex `v`.
    fn of(&self, v: NodeId) -> Vec<usize> {
        (0..self.edges.len()).filter(|&k| self.info[k].0 == v).collect()
    }

    /// Two different edges of `v`, one in each projection (compared by target as printed).
    fn varies(&self, v_edges: &[usize], a: &FixedBitSet, b: &FixedBitSet, reading: Reading) -> bool {
        v_edges.iter().any(|&x| {
            a.contains(x)
                && v_edges.iter().any(|&y| {
                    b.contains(y)
                        && match reading {
                            Reading::AsPrinted => self.info[x].1 != self.info[y].1,
                            Reading::Intended => x != y,
                        }
                })
        })
    }

    /// The other vertices of the decision take the same edges.
    fn others_equal(&self, v_edges: &[usize], a: &FixedBitSet, b: &FixedBitSet) -> bool {
        (0..self.edges.len()).all(|k| v_edges.contains(&k) || a.contains(k) == b.contains(k))
    }

    /// The decision is left by different outcomes.
    fn outcome_changes(&self, a: &FixedBitSet, b: &FixedBitSet, reading: Reading) -> bool {
        let exits = |p: &FixedBitSet| -> Vec<usize> { p.ones().filter(|&k| self.info[k].2.is_some()).collect() };
        let (ea, eb) = (exits(a), exits(b));
        match reading {
            Reading::Intended => ea.iter().any(|&x| eb.iter().any(|&y| self.info[x].2 != self.info[y].2)),
            Reading::AsPrinted => ea.iter().any(|&x| {
                eb.iter().any(|&y| {
                    // the same vertex o leaves by x1 in one run and x2 in the other,
                    // {x1, x2} = successors(D)
                    let (x1, x2) = (self.info[x].1, self.info[y].1);
                    let mut pair = vec![x1, x2];
                    pair.sort();
                    pair.dedup();
                    self.info[x].0 == self.info[y].0 && pair == self.succ
                })
            }),
        }
    }
}

/// Conditions 2, 3, 4, 5 and 8.
fn decisions(cfg: &Cfg, cfdg: &Cfdg, runs: &[Run], k: u8, reading: Reading) -> Vec<ObligationResult> {
    let mut out = Vec::new();
    for (di, d) in cfdg.decisions.iter().enumerate() {
        let id = DecisionId(di as u32);
        let p = Projections::new(cfg, d, runs);
        let test = |i: usize| runs[i].test.clone();
        if k == 2 {
            let o = Obligation::DecisionOutcomes { decision: id };
            let taken = |value: bool| {
                p.sets.iter().find(|(s, _)| s.ones().any(|x| p.info[x].2 == Some(value))).map(|(_, i)| *i)
            };
            let r = match reading {
                Reading::Intended => match (taken(true), taken(false)) {
                    (Some(a), Some(b)) => met(o, dedup(vec![test(a), test(b)])),
                    (a, b) => unmet(o, never(a.is_none(), b.is_none())),
                },
                Reading::AsPrinted => {
                    let one = p.sets.iter().find(|(s, _)| {
                        let mut t: Vec<NodeId> =
                            s.ones().filter(|&x| p.info[x].2.is_some()).map(|x| p.info[x].1).collect();
                        t.sort();
                        t.dedup();
                        t.len() >= 2
                    });
                    match one {
                        Some((_, i)) => met(o, vec![test(*i)]),
                        None => unmet(o, {
                            let mut why = "no single run leaves the decision to two different successors".to_string();
                            let (a, b) = (taken(true), taken(false));
                            if a.is_none() || b.is_none() {
                                why = format!("{why}; {}", never(a.is_none(), b.is_none()));
                            }
                            why
                        }),
                    }
                }
            };
            out.push(r);
            continue;
        }
        for &v in &d.conditions {
            let ve = p.of(v);
            if k == 3 {
                let o = Obligation::ConditionOutcomes { decision: id, node: v };
                let with = |x: usize| p.sets.iter().find(|(s, _)| s.contains(x)).map(|(_, i)| *i);
                let r = match reading {
                    Reading::Intended => {
                        let found: Vec<Option<usize>> = ve.iter().map(|&x| with(x)).collect();
                        if found.iter().all(Option::is_some) && ve.len() >= 2 {
                            met(o, dedup(found.into_iter().flatten().map(test).collect()))
                        } else {
                            let lacking: Vec<String> = ve
                                .iter()
                                .zip(&found)
                                .filter(|(_, f)| f.is_none())
                                .map(|(&x, _)| cfg.edge(p.edges[x]).label.to_string())
                                .collect();
                            unmet(o, format!("no run takes the {} edge of n{}", lacking.join(" and "), v.0))
                        }
                    }
                    Reading::AsPrinted => match p.sets.iter().find(|(s, _)| p.varies(&ve, s, s, Reading::AsPrinted)) {
                        Some((_, i)) => met(o, vec![test(*i)]),
                        None => unmet(o, format!("no single run takes both edges of n{} to different vertices", v.0)),
                    },
                };
                out.push(r);
                continue;
            }
            let o = Obligation::Pair { condition: k, decision: id, node: v };
            let mut found = None;
            'outer: for (i, (a, ra)) in p.sets.iter().enumerate() {
                for (b, rb) in &p.sets[i..] {
                    let ok = p.varies(&ve, a, b, reading)
                        && match k {
                            4 => p.others_equal(&ve, a, b),
                            5 => p.outcome_changes(a, b, reading),
                            _ => p.others_equal(&ve, a, b) && p.outcome_changes(a, b, reading),
                        };
                    if ok {
                        found = Some((*ra, *rb));
                        break 'outer;
                    }
                }
            }
            out.push(match found {
                Some((a, b)) => met(o, dedup(vec![test(a), test(b)])),
                None => unmet(
                    o,
                    match k {
                        4 => format!("no two runs take different edges of n{} and the same edges elsewhere in the decision", v.0),
                        5 => format!("no two runs take different edges of n{} and leave the decision by different outcomes", v.0),
                        _ => format!(
                            "no two runs take different edges of n{}, the same edges elsewhere in the decision, and different outcomes",
                            v.0
                        ),
                    },
                ),
            });
        }
    }
    out
}

fn never(t: bool, f: bool) -> String {
    match (t, f) {
        (true, true) => "the decision is never evaluated".to_string(),
        (true, false) => "outcome true is never taken".to_string(),
        _ => "outcome false is never taken".to_string(),
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|x| seen.insert(x.clone()));
    v
}
