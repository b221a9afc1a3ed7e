//! Rothermel & Harrold's safe test selection (DejaVu).
//!
//! For each pair of corresponding procedures, `Compare` walks the two
//! statement-level CFGs synchronously from their entries along identically
//! labelled edges (002 §3.1, Fig. 3; 003 Fig. 5). When the successors `C` and `C'`
//! along an edge `(N, C)` are not equivalent, the edge is *dangerous*: every test
//! that traversed it may behave differently. Otherwise the walk continues from
//! `(C, C')` — unless `C` is already marked "`C'`-visited". The mark is per pair,
//! not a plain visited flag: with a plain flag `twovisits` (002 Fig. 5) would be
//! missed.
//!
//! Improvements of 002 §3.1.4 implemented here: comments and layout never matter
//! (nodes carry normalised token text); declaration changes are handled through
//! *affected names* (see [`crate::affected`]); switches are multiway nodes compared
//! by case label — a removed case makes its edge dangerous, an added case makes the
//! old `default` edge dangerous.
//!
//! `SelectInterTests` (002 §3.2, Fig. 9) starts at the entry procedures (`main`),
//! enters a callee when it reaches an equivalent node that calls it, keeps a
//! `proctable` with status *visited* / *selectsall*, and stops walking past a call
//! to a *selectsall* procedure (every test through it is already selected) —
//! only where every route through the statement makes that call: past
//! `if (a && f(x))` the walk goes on for the tests that find `a` false
//! (`Walker::calls_select_all`).
//! Procedures the walk does not reach — called only through pointers, from other
//! programs of the project, or only after changes — are then compared pairwise as
//! in the naive mode, so the combination is safe for libraries and callbacks too.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use retest_graph::summary::Summary;
use retest_graph::{EdgeId, EdgeLabel, NodeId, NodeKind};

use crate::affected::Affected;
use crate::equiv::{Ctx, at};
use crate::program::{ProcRef, Program};
use crate::reason::{Reason, ReasonKind};

/// Which walk to run.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Mode {
    /// `SelectInterTests` from the entry procedures, then the naive comparison for
    /// the procedures it did not reach.
    #[default]
    Inter,
    /// Compare every pair of corresponding procedures.
    Naive,
}

/// A dangerous edge of the old version.
#[derive(Clone, Debug)]
pub struct Dangerous {
    pub procedure: ProcRef,
    /// A statement-level edge of the old procedure.
    pub edge: EdgeId,
    pub reason: Reason,
}

/// What the walk learned about one pair of corresponding procedures (MOD-DejaVu,
/// 004 §3: the matched pairs are the basis of `entityMap`, the new targets of
/// dangerous edges the change set `C`).
#[derive(Clone, Debug, Default)]
pub struct PairWalk {
    pub old: Option<ProcRef>,
    pub new: Option<ProcRef>,
    /// Pairs (N, N') compared and found equivalent ("N marked N'-visited").
    pub visited: Vec<(NodeId, NodeId)>,
    /// New-version nodes found to differ from their old counterparts.
    pub changed: BTreeSet<NodeId>,
    /// The walk reached the exit: some tests pass through without becoming
    /// modification-traversing.
    pub exit_reached: bool,
    /// The whole procedure counts as changed (entry not equivalent).
    pub whole: bool,
}

/// Result of a selection walk.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub dangerous: Vec<Dangerous>,
    pub walks: Vec<PairWalk>,
    /// Procedures of the new version with no old counterpart.
    pub added: Vec<ProcRef>,
    /// Old nodes marked visited with more than one new node (the
    /// multiply-visited-node condition of 002 §3.1.2), per old procedure.
    pub multiply_visited: BTreeMap<ProcRef, BTreeSet<NodeId>>,
    /// Number of node pairs compared.
    pub compares: usize,
    /// Names affected by declaration changes, with why.
    pub affected_globals: Affected,
    /// Pairs [`select_changes`] proved unchanged from their summaries without
    /// walking them (they have no entry in `walks`).
    pub unwalked: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Status {
    Visited,
    SelectsAll,
}

struct Walker<'c, 'p, 'a> {
    ctx: &'c Ctx<'p, 'a>,
    mode: Mode,
    proctable: HashMap<ProcRef, Status>,
    out: Outcome,
    /// Old node → partners seen, per old procedure.
    partners: HashMap<ProcRef, HashMap<NodeId, HashSet<NodeId>>>,
    /// Prove pairs unchanged from their summaries where possible ([`select_changes`]).
    prove: bool,
    /// Old procedures whose proof failed for a reason that stays: their pair is walked.
    unprovable: HashSet<ProcRef>,
}

/// The state of one [`Walker::prove`]: the procedures being proved, by
/// depth, and those proved in a cycle with one of them, kept or dropped with it.
#[derive(Default)]
struct Attempt {
    depth: HashMap<ProcRef, usize>,
    /// In the order proved.
    pending: Vec<ProcRef>,
    /// The depth each of `pending` assumed.
    assumed: HashMap<ProcRef, usize>,
}

impl Attempt {
    /// Drops what was proved since `pending` was `mark` long.
    fn drop_from(&mut self, mark: usize) {
        for p in self.pending.drain(mark..) {
            self.assumed.remove(&p);
        }
    }
}

impl Walker<'_, '_, '_> {
    fn dangerous(
        &mut self,
        o: ProcRef,
        edge: EdgeId,
        kind: ReasonKind,
        old_node: NodeId,
        new: Option<(ProcRef, NodeId)>,
    ) {
        let reason = Reason {
            kind,
            old: Some(at(self.ctx.old, &self.ctx.keys, o, old_node)),
            new: new.map(|(r, n)| at(self.ctx.new, &self.ctx.keys, r, n)),
        };
        self.out.dangerous.push(Dangerous { procedure: o, edge, reason });
    }

    /// What walking a pair whose units were read with bodies on demand would
    /// leave in the proctable, when that can be told from the procedures'
    /// summaries: the walk would find nothing and enter no callee it would
    /// not find the same in.
    ///
    /// The two statement-level CFGs and local declarations are the same
    /// (equal walk digests), so the walk pairs each node with its own copy,
    /// and a pair can differ only through what is around the procedure
    /// (`Ctx::difference`): other flags, an affected name it refers to, a
    /// call whose targets changed, a call through a pointer when the
    /// address-taken procedures changed, a member call. With none of these,
    /// and every procedure it calls walked already and not *selectsall*, not
    /// walked at all (no counterpart), or itself proved *visited*, the walk
    /// finds no dangerous edge, never stops at a call, and reaches the exit
    /// exactly when the exit is reachable. Anything else: `None`, and the pair
    /// is walked.
    ///
    /// Callees are proved before their callers (the walk meets callers
    /// first, so without this a caller's proof would wait for walks that its
    /// own walk starts). Procedures that call each other are proved together:
    /// a callee still being proved is assumed *visited*, and the procedures
    /// of such a cycle (a strongly connected component, found as Tarjan's
    /// algorithm finds it) are kept only when every one of them is proved
    /// *visited*. That is what the walk finds too, in whatever order it meets
    /// them: none of them is ever *selectsall*, so the walk goes past every
    /// call and each reaches its exit. A proved pair is in the proctable
    /// and counted in `Outcome::unwalked`.
    fn prove(&mut self, o: ProcRef, n: ProcRef) -> Option<Status> {
        let mut attempt = Attempt::default();
        self.attempt(o, n, &mut attempt).map(|(status, _)| status)
    }

    /// One procedure of [`Walker::prove`]: its status, and the depth of the
    /// shallowest procedure still being proved that it assumed *visited*
    /// (`usize::MAX` for none).
    fn attempt(&mut self, o: ProcRef, n: ProcRef, at: &mut Attempt) -> Option<(Status, usize)> {
        /// Deeper call chains are walked: the recursion stays well inside a thread's stack.
        const DEPTH: usize = 2_000;
        if self.unprovable.contains(&o) || at.depth.len() >= DEPTH {
            return None;
        }
        let ctx = self.ctx;
        let (so, sn) = (ctx.old.summary(o)?, ctx.new.summary(n)?);
        let (ho, hn) = (ctx.old.head(o), ctx.new.head(n));
        if ctx.old.unit(o).flags != ctx.new.unit(n).flags
            || ho.digest != hn.digest
            || so.walk_digest != sn.walk_digest
            || so.dispatch
            || sn.dispatch
            || (so.indirect_call && ctx.indirect_change.is_some())
            || so.names.iter().any(|h| ctx.affected_hashes.contains(h))
            || (ctx.globals.every_name() && !so.names.is_empty())
        {
            self.unprovable.insert(o);
            return None;
        }
        let depth = at.depth.len();
        let mark = at.pending.len();
        at.depth.insert(o, depth);
        let low = self.callees_proved(o, n, so, at);
        at.depth.remove(&o);
        let Some(low) = low else {
            at.drop_from(mark);
            return None;
        };
        let status = if so.exit_reachable { Status::Visited } else { Status::SelectsAll };
        if low < depth {
            // in a cycle with a procedure still being proved: kept with it
            if status != Status::Visited {
                at.drop_from(mark);
                return None;
            }
            at.pending.push(o);
            at.assumed.insert(o, low);
            return Some((status, low));
        }
        // the first procedure of its cycle, or in none
        if status != Status::Visited && at.pending.len() > mark {
            at.drop_from(mark);
            return None;
        }
        for p in at.pending.drain(mark..).chain([o]) {
            at.assumed.remove(&p);
            self.proctable.insert(p, status);
            self.out.unwalked += 1;
        }
        Some((status, usize::MAX))
    }

    /// Whether every procedure `o` calls lets it be proved, proving those
    /// not walked yet; the shallowest depth assumed, as [`Walker::attempt`].
    fn callees_proved(&mut self, o: ProcRef, n: ProcRef, so: &Summary, at: &mut Attempt) -> Option<usize> {
        let ctx = self.ctx;
        let mut low = usize::MAX;
        for name in &so.calls {
            let callees = ctx.old.resolve(o.unit, name);
            let ro: BTreeSet<&String> = callees.iter().map(|r| &ctx.pairing.old_keys[r]).collect();
            let rn: BTreeSet<&String> =
                ctx.new.resolve(n.unit, name).iter().map(|r| &ctx.pairing.new_keys[r]).collect();
            if ro != rn {
                self.unprovable.insert(o);
                return None;
            }
            for r in callees {
                match self.proctable.get(&r) {
                    Some(Status::Visited) => {}
                    Some(Status::SelectsAll) => {
                        self.unprovable.insert(o);
                        return None;
                    }
                    None => {
                        let Some(&r2) = ctx.pairing.old_to_new.get(&r) else { continue };
                        if let Some(&d) = at.depth.get(&r) {
                            low = low.min(d);
                            continue;
                        }
                        // proved already in a cycle still being proved
                        if let Some(&l) = at.assumed.get(&r) {
                            low = low.min(l);
                            continue;
                        }
                        match self.attempt(r, r2, at)? {
                            (Status::Visited, l) => low = low.min(l),
                            (Status::SelectsAll, _) => return None,
                        }
                    }
                }
            }
        }
        Some(low)
    }

    /// `SelectTests2(P, P')`.
    fn select_tests2(&mut self, o: ProcRef, n: ProcRef) {
        if self.prove && self.prove(o, n).is_some() {
            return;
        }
        self.proctable.insert(o, Status::Visited);
        let ctx = self.ctx;
        let (po, pn) = (ctx.old.procedure(o), ctx.new.procedure(n));
        let mut walk = PairWalk { old: Some(o), new: Some(n), ..Default::default() };
        let (entry, entry2) = (po.stmt.entry(), pn.stmt.entry());
        if let Some(kind) = ctx.entry_difference(o, n) {
            for e in po.stmt.out_edges(entry) {
                self.dangerous(o, e, kind.clone(), entry, Some((n, entry2)));
            }
            walk.whole = true;
            walk.changed.insert(entry2);
            self.proctable.insert(o, Status::SelectsAll);
            self.out.walks.push(walk);
            return;
        }
        let locals = ctx.locals(o, n);
        let mut visited: HashSet<(NodeId, NodeId)> = HashSet::new();
        visited.insert((entry, entry2));
        walk.visited.push((entry, entry2));
        let mut stack = vec![(entry, entry2)];
        while let Some((nn, nn2)) = stack.pop() {
            self.out.compares += 1;
            if po.stmt.node(nn).kind == NodeKind::Exit {
                walk.exit_reached = true;
                continue;
            }
            let labels: Vec<&EdgeLabel> = po.stmt.out_labels(nn).collect();
            let labels2: Vec<&EdgeLabel> = pn.stmt.out_labels(nn2).collect();
            let is_switch = po.stmt.node(nn).kind == NodeKind::Switch;
            if !is_switch && labels != labels2 {
                // OutEdgesEquivalent fails: every edge out of N is dangerous
                for e in po.stmt.out_edges(nn) {
                    self.dangerous(o, e, ReasonKind::Structure, nn, Some((n, nn2)));
                }
                walk.changed.insert(nn2);
                continue;
            }
            if is_switch {
                // a new case: tests that took `default` may now take it (002 §3.1.4)
                for l in &labels2 {
                    if let EdgeLabel::Case(text) = l
                        && po.stmt.out_edge_labelled(nn, l).is_none()
                        && let Some(d) = po.stmt.out_edge_labelled(nn, &EdgeLabel::Default)
                    {
                        self.dangerous(o, d, ReasonKind::CaseAdded(text.clone()), nn, Some((n, nn2)));
                        walk.changed.insert(nn2);
                    }
                }
            }
            for e in po.stmt.out_edges(nn) {
                let edge = po.stmt.edge(e);
                let c = edge.dst;
                let Some(c2) = pn.stmt.succ_labelled(nn2, &edge.label) else {
                    // a removed case: its tests may take another branch
                    let l = match &edge.label {
                        EdgeLabel::Case(t) => t.clone(),
                        other => other.to_string(),
                    };
                    self.dangerous(o, e, ReasonKind::CaseRemoved(l), nn, Some((n, nn2)));
                    walk.changed.insert(nn2);
                    continue;
                };
                if visited.contains(&(c, c2)) {
                    continue;
                }
                if let Some(kind) = ctx.difference(o, c, n, c2, &locals) {
                    self.dangerous(o, e, kind, c, Some((n, c2)));
                    walk.changed.insert(c2);
                    continue;
                }
                // record partners for the multiply-visited-node condition
                self.partners.entry(o).or_default().entry(c).or_default().insert(c2);
                if self.mode == Mode::Inter && po.stmt.node(c).has_calls() && self.calls_select_all(o, c) {
                    // every test through this call is selected already
                    visited.insert((c, c2));
                    walk.visited.push((c, c2));
                    continue;
                }
                visited.insert((c, c2));
                walk.visited.push((c, c2));
                stack.push((c, c2));
            }
        }
        if !walk.exit_reached {
            self.proctable.insert(o, Status::SelectsAll);
        }
        self.out.walks.push(walk);
    }

    /// Compare2's call handling: walks into callees not yet in the proctable and
    /// says whether the walk may stop at `c`: whether every route through `c`
    /// completes a call of a *selectsall* procedure, so that every test that
    /// leaves `c` is selected already.
    ///
    /// The paper's CFG node is one call; a statement-level node is a whole
    /// statement, and may call only on some routes through it (`if (a && f(x))`,
    /// `g(a ? f(x) : 0)`). A test that passes such a node without calling `f`
    /// is not selected for `f`, so the walk must go on past the node for it:
    /// there it may meet a change (it must be selected) or take edges whose
    /// counterparts RECOVER's `entityMap` needs. So the walk stops only at a
    /// statement with one condition-level node, which makes every call it names
    /// (a node that names a call only on some routes is one of several).
    fn calls_select_all(&mut self, o: ProcRef, c: NodeId) -> bool {
        let ctx = self.ctx;
        let p = ctx.old.procedure(o);
        let node = p.stmt.node(c);
        let mut any_all = false;
        // C++ member calls: one labelled out-edge per method the call may
        // reach (003 §5.2), each entered as a callee; the rest by name
        // (callees, whether every target is one of them: a target defined
        // nowhere in the program — pure virtual, or in a library — may be
        // the one a run calls)
        let mut sites: Vec<(Vec<ProcRef>, bool)> = node
            .dispatch
            .iter()
            .filter_map(|d| {
                let targets = ctx.old_classes.targets(d);
                let per_key: Vec<Vec<ProcRef>> = targets.keys.iter().map(|k| ctx.old.resolve(o.unit, k)).collect();
                let complete = per_key.iter().all(|v| !v.is_empty());
                let callees: Vec<ProcRef> = per_key.into_iter().flatten().collect();
                (!targets.keys.is_empty()).then_some((callees, complete))
            })
            .collect();
        sites.extend(node.calls.iter().map(|name| (ctx.old.resolve(o.unit, name), true)));
        for (callees, complete) in sites {
            for &callee in &callees {
                if !self.proctable.contains_key(&callee)
                    && let Some(&callee2) = ctx.pairing.old_to_new.get(&callee)
                {
                    self.select_tests2(callee, callee2);
                }
            }
            // a name may resolve to several procedures, of which a run calls one
            if complete
                && !callees.is_empty()
                && callees.iter().all(|r| self.proctable.get(r) == Some(&Status::SelectsAll))
            {
                any_all = true;
            }
        }
        any_all && p.map.node.iter().filter(|g| **g == c).count() == 1
    }
}

/// Runs DejaVu on two program versions.
pub fn select(old: &Program<'_>, new: &Program<'_>, mode: Mode) -> Outcome {
    run(old, new, mode, false)
}

/// DejaVu's dangerous edges, the same as [`select`]'s, without walking the
/// pairs of units read with bodies on demand that their summaries prove
/// unchanged (`Walker::prove`): their bodies are then never
/// decoded. The outcome's `walks` lack those pairs, so it is not for
/// RECOVER's entity map or Ball's algorithms, which read every pair's walk.
pub fn select_changes(old: &Program<'_>, new: &Program<'_>, mode: Mode) -> Outcome {
    run(old, new, mode, true)
}

fn run(old: &Program<'_>, new: &Program<'_>, mode: Mode, prove: bool) -> Outcome {
    let ctx = Ctx::new(old, new);
    let mut w = Walker {
        ctx: &ctx,
        mode,
        proctable: HashMap::new(),
        out: Outcome::default(),
        partners: HashMap::new(),
        prove,
        unprovable: HashSet::new(),
    };
    // units whose new version could not be analysed: all their old procedures changed
    let broken: HashMap<&str, &str> = new.units.iter().filter_map(|u| u.broken.map(|b| (u.key, b))).collect();
    for o in old.procedures() {
        if let Some(why) = broken.get(old.unit(o).key) {
            let p = old.procedure(o);
            let entry = p.stmt.entry();
            for e in p.stmt.out_edges(entry) {
                w.dangerous(o, e, ReasonKind::Unanalysable((*why).to_string()), entry, None);
            }
            w.proctable.insert(o, Status::SelectsAll);
            w.out.walks.push(PairWalk { old: Some(o), new: None, whole: true, ..Default::default() });
        }
    }
    if mode == Mode::Inter {
        let entries: Vec<ProcRef> = ctx
            .pairing
            .old_to_new
            .keys()
            .copied()
            .filter(|r| old.unit(*r).unit.entry_points.contains(&old.head(*r).name))
            .collect();
        for o in entries {
            if !w.proctable.contains_key(&o) {
                let n = ctx.pairing.old_to_new[&o];
                w.select_tests2(o, n);
            }
        }
    }
    // every pair the walk did not reach (all of them in the naive mode)
    let pairs: Vec<(ProcRef, ProcRef)> = ctx.pairing.old_to_new.iter().map(|(a, b)| (*a, *b)).collect();
    for (o, n) in pairs {
        if !w.proctable.contains_key(&o) {
            w.select_tests2(o, n);
        }
    }
    // removed procedures: every test that entered one is selected
    for o in old.procedures() {
        if !ctx.pairing.old_to_new.contains_key(&o) && !broken.contains_key(old.unit(o).key) {
            let p = old.procedure(o);
            let entry = p.stmt.entry();
            for e in p.stmt.out_edges(entry) {
                w.dangerous(o, e, ReasonKind::Removed, entry, None);
            }
            w.out.walks.push(PairWalk { old: Some(o), new: None, whole: true, ..Default::default() });
        }
    }
    w.out.added = new.procedures().filter(|r| !ctx.pairing.new_to_old.contains_key(r)).collect();
    for (p, m) in std::mem::take(&mut w.partners) {
        let multi: BTreeSet<NodeId> = m.into_iter().filter(|(_, s)| s.len() > 1).map(|(n, _)| n).collect();
        if !multi.is_empty() {
            w.out.multiply_visited.insert(p, multi);
        }
    }
    w.out.affected_globals = ctx.globals.clone();
    // in program order (unit, procedure, edge), not in the order the walk met
    // them: the walk's order depends on where it starts, and a selection
    // that leaves out units the change did not touch starts elsewhere
    w.out.dangerous.sort_by_key(|d| (d.procedure, d.edge));
    w.out
}
