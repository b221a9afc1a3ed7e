//! Keeping coverage exact across versions: RECOVER (Chittimalli & Harrold, 004 §3).
//!
//! After a change, only the selected tests T′ rerun, on a build *selectively
//! instrumented* where the change can have an effect; every other entry of the new
//! coverage matrix is *transferred* from the old matrix through `entityMap`, the
//! pairs of old and new entities the selection walk matched. Entities are
//! condition-level CFG edges (what retest records).
//!
//! * [`EntityMap`] — from MOD-DejaVu's matched node pairs (`PairWalk::visited`):
//!   each matched statement-level pair has identical internal structure (equal
//!   text gives equal condition-level sub-graphs), so its condition-level nodes
//!   pair up in order and their out-edges by label — except the dangerous edges.
//! * [`selective_probes`] — `SelectiveInstrument` (Fig. 6): nodes to probe.
//! * [`recompute`] — `RecomputeMatrix` (Fig. 5).
//!
//! Two refinements over Fig. 5/6, both needed for the new matrix to equal a full
//! rerun bit for bit:
//! 1. A test in T′ may, in its *old* run, revisit an unchanged entity after it
//!    diverged at a change, while its new run cannot reach it again. So besides
//!    everything reachable from the changes in the new version, retest probes the
//!    counterparts of what is reachable from the change points in the *old*
//!    version, and the sources of dangerous edges (a selected test's way into the
//!    change must be measured, not transferred).
//! 2. Transfer through a node the walk matched with several new nodes (the
//!    multiply-visited-node condition) is ambiguous: tests not selected that
//!    covered such a node are rerun too, and all its partners are probed.
//!
//! Reachability is interprocedural: into callees at call nodes (direct calls, and
//! every address-taken procedure at calls through pointers) and from a callee's
//! exit back to every call site of it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use fixedbitset::FixedBitSet;
use retest_graph::coverage::Probe;
use retest_graph::{EdgeId, NodeId, NodeKind, Procedure};
use retest_select::{Outcome, ProcRef, Program};
use roaring::RoaringBitmap;

/// New unit-wide condition-level edge → the old (unit, unit-wide edge) entities it corresponds to.
#[derive(Clone, Debug, Default)]
pub struct EntityMap {
    /// Per new unit index: new edge → old (unit index, edge).
    pub units: BTreeMap<usize, BTreeMap<u32, Vec<(usize, u32)>>>,
    /// Old statement-level nodes matched with more than one new node: (old proc, node).
    pub ambiguous: BTreeSet<(ProcRef, NodeId)>,
    /// New statement-level nodes whose group structure did not correspond (never
    /// expected; probed to stay exact).
    pub unmatched: BTreeSet<(ProcRef, NodeId)>,
}

/// Condition-level nodes of statement-level node `g`, in id order.
fn members(p: &Procedure, g: NodeId) -> Vec<NodeId> {
    p.map.node.iter().enumerate().filter(|(_, c)| **c == g).map(|(i, _)| NodeId(i as u32)).collect()
}

impl EntityMap {
    /// Builds the map from a selection walk (`dejavu::select`).
    pub fn new(old: &Program<'_>, new: &Program<'_>, outcome: &Outcome) -> EntityMap {
        let mut m = EntityMap::default();
        let dangerous: HashSet<(ProcRef, EdgeId)> = outcome.dangerous.iter().map(|d| (d.procedure, d.edge)).collect();
        let obases: HashMap<usize, Vec<u32>> =
            (0..old.units.len()).map(|u| (u, old.units[u].unit.edge_bases())).collect();
        let nbases: HashMap<usize, Vec<u32>> =
            (0..new.units.len()).map(|u| (u, new.units[u].unit.edge_bases())).collect();
        for w in &outcome.walks {
            let (Some(o), Some(n)) = (w.old, w.new) else { continue };
            let (po, pn) = (old.procedure(o), new.procedure(n));
            let (ob, nb) = (obases[&o.unit][o.proc], nbases[&n.unit][n.proc]);
            let mut partners: HashMap<NodeId, BTreeSet<NodeId>> = HashMap::new();
            for &(g, g2) in &w.visited {
                partners.entry(g).or_default().insert(g2);
                let (fo, fn_) = (members(po, g), members(pn, g2));
                let same_shape = fo.len() == fn_.len()
                    && fo.iter().zip(&fn_).all(|(a, b)| po.cond.node(*a).text == pn.cond.node(*b).text);
                if !same_shape {
                    m.unmatched.insert((n, g2));
                    continue;
                }
                for (&f, &f2) in fo.iter().zip(&fn_) {
                    for e in po.cond.out_edges(f) {
                        // a dangerous edge leads into a change: no counterpart
                        if let Some(s) = po.map.edge[e.index()]
                            && dangerous.contains(&(o, s))
                        {
                            continue;
                        }
                        let label = &po.cond.edge(e).label;
                        if let Some(e2) = pn.cond.out_edge_labelled(f2, label) {
                            m.units.entry(n.unit).or_default().entry(nb + e2.0).or_default().push((o.unit, ob + e.0));
                        }
                    }
                }
            }
            for (g, ps) in partners {
                if ps.len() > 1 {
                    m.ambiguous.insert((o, g));
                }
            }
        }
        m
    }

    /// Transfers a test's old coverage to the new version: a new edge is covered
    /// if any of its old counterparts was.
    pub fn transfer(&self, new_unit: usize, old_cov: &HashMap<usize, RoaringBitmap>) -> RoaringBitmap {
        let mut out = RoaringBitmap::new();
        if let Some(map) = self.units.get(&new_unit) {
            for (e2, olds) in map {
                if olds.iter().any(|(u, e)| old_cov.get(u).is_some_and(|b| b.contains(*e))) {
                    out.insert(*e2);
                }
            }
        }
        out
    }
}

/// Interprocedural forward reachability over statement-level nodes of a program,
/// from `starts`.
fn reach(p: &Program<'_>, starts: impl IntoIterator<Item = (ProcRef, NodeId)>) -> HashSet<(ProcRef, NodeId)> {
    // call sites of each procedure, and address-taken procedures
    let mut callers: HashMap<ProcRef, Vec<(ProcRef, NodeId)>> = HashMap::new();
    let mut address_taken: Vec<ProcRef> = Vec::new();
    for (ui, u) in p.units.iter().enumerate() {
        for name in &u.unit.address_taken {
            address_taken.extend(p.resolve(ui, name));
        }
    }
    address_taken.sort();
    address_taken.dedup();
    let callees_of = |r: ProcRef, n: NodeId| -> Vec<ProcRef> {
        let node = p.procedure(r).stmt.node(n);
        let mut v: Vec<ProcRef> = node.calls.iter().flat_map(|c| p.resolve(r.unit, c)).collect();
        if node.indirect_call {
            v.extend(address_taken.iter().copied());
        }
        v
    };
    for r in p.procedures() {
        let proc = p.procedure(r);
        for (n, node) in proc.stmt.nodes() {
            if node.has_calls() {
                for c in callees_of(r, n) {
                    callers.entry(c).or_default().push((r, n));
                }
            }
        }
    }
    let mut seen: HashSet<(ProcRef, NodeId)> = HashSet::new();
    let mut stack: Vec<(ProcRef, NodeId)> = Vec::new();
    for s in starts {
        if seen.insert(s) {
            stack.push(s);
        }
    }
    while let Some((r, n)) = stack.pop() {
        let proc = p.procedure(r);
        let mut next: Vec<(ProcRef, NodeId)> = proc.stmt.succs(n).map(|s| (r, s)).collect();
        if proc.stmt.node(n).has_calls() {
            for c in callees_of(r, n) {
                next.push((c, p.procedure(c).stmt.entry()));
            }
        }
        if proc.stmt.node(n).kind == NodeKind::Exit {
            // return into every caller, after its call site
            for &(cr, cn) in callers.get(&r).map(Vec::as_slice).unwrap_or(&[]) {
                next.extend(p.procedure(cr).stmt.succs(cn).map(|s| (cr, s)));
            }
        }
        for x in next {
            if seen.insert(x) {
                stack.push(x);
            }
        }
    }
    seen
}

/// `SelectiveInstrument`: per new unit and procedure, which condition-level
/// nodes to probe. Everything else is left unprobed (`Probe::Off`).
pub fn selective_probes(
    old: &Program<'_>,
    new: &Program<'_>,
    outcome: &Outcome,
    map: &EntityMap,
) -> Vec<Vec<Vec<Probe>>> {
    // the change set C: new nodes that differ, whole procedures, added procedures
    let mut starts_new: Vec<(ProcRef, NodeId)> = Vec::new();
    let mut starts_old: Vec<(ProcRef, NodeId)> = Vec::new();
    for w in &outcome.walks {
        if let Some(n) = w.new {
            starts_new.extend(w.changed.iter().map(|c| (n, *c)));
            if w.whole {
                starts_new.push((n, new.procedure(n).stmt.entry()));
            }
        }
        if w.whole
            && let Some(o) = w.old
        {
            starts_old.push((o, old.procedure(o).stmt.entry()));
        }
    }
    for a in &outcome.added {
        starts_new.push((*a, new.procedure(*a).stmt.entry()));
    }
    for d in &outcome.dangerous {
        let p = old.procedure(d.procedure);
        starts_old.push((d.procedure, p.stmt.edge(d.edge).dst));
    }
    starts_new.extend(map.unmatched.iter().copied());
    let mut probe: HashSet<(ProcRef, NodeId)> = reach(new, starts_new);
    // the old change points' reach, mapped to the new version through the matched pairs
    let old_reach = reach(old, starts_old);
    let mut partners: HashMap<(ProcRef, NodeId), Vec<(ProcRef, NodeId)>> = HashMap::new();
    let mut new_of_old_proc: HashMap<ProcRef, ProcRef> = HashMap::new();
    for w in &outcome.walks {
        if let (Some(o), Some(n)) = (w.old, w.new) {
            new_of_old_proc.insert(o, n);
            for &(g, g2) in &w.visited {
                partners.entry((o, g)).or_default().push((n, g2));
            }
        }
    }
    for x in &old_reach {
        if let Some(ps) = partners.get(x) {
            probe.extend(ps.iter().copied());
        }
    }
    // the sources of dangerous edges (their new counterparts)
    for d in &outcome.dangerous {
        let src = old.procedure(d.procedure).stmt.edge(d.edge).src;
        if let Some(ps) = partners.get(&(d.procedure, src)) {
            probe.extend(ps.iter().copied());
        }
    }
    // every partner of an ambiguous (multiply visited) old node
    for x in &map.ambiguous {
        if let Some(ps) = partners.get(x) {
            probe.extend(ps.iter().copied());
        }
    }
    // condition-level plan, closed so that every probed edge is measured
    let mut out: Vec<Vec<Vec<Probe>>> = Vec::new();
    for (ui, u) in new.units.iter().enumerate() {
        let mut unit_plan = Vec::new();
        for (pi, p) in u.unit.procedures.iter().enumerate() {
            let r = ProcRef { unit: ui, proc: pi };
            let mut on = FixedBitSet::with_capacity(p.cond.node_count());
            for (n, g) in p.map.node.iter().enumerate() {
                if probe.contains(&(r, *g)) {
                    on.insert(n);
                }
            }
            // a derived node can only be measured through measured in-edges
            let mut changed = true;
            while changed {
                changed = false;
                for n in on.clone().ones() {
                    if p.probes[n] != Probe::Derived {
                        continue;
                    }
                    for &e in p.cond.in_edges(NodeId(n as u32)) {
                        let s = p.cond.edge(e).src.index();
                        if !on.contains(s) {
                            on.insert(s);
                            changed = true;
                        }
                    }
                }
            }
            unit_plan.push(
                (0..p.cond.node_count()).map(|n| if on.contains(n) { p.probes[n] } else { Probe::Off }).collect(),
            );
        }
        out.push(unit_plan);
    }
    out
}

/// One test's input to [`recompute`].
pub enum TestInput<'a> {
    /// Not selected: its old coverage (old unit index → edges).
    Kept { old: &'a HashMap<usize, RoaringBitmap> },
    /// Rerun on the selective build: what the run measured (new unit index →
    /// covered edges) and, when known, its old coverage for the unprobed rest.
    Rerun { ran: &'a HashMap<usize, RoaringBitmap>, old: Option<&'a HashMap<usize, RoaringBitmap>> },
}

/// `RecomputeMatrix` for one test: its coverage in the new version, per new unit.
/// `measured[u]` are the edges of new unit `u` the selective build determines.
pub fn recompute(
    new_units: usize,
    map: &EntityMap,
    measured: &[RoaringBitmap],
    input: &TestInput<'_>,
) -> Vec<RoaringBitmap> {
    (0..new_units)
        .map(|u| match input {
            TestInput::Kept { old } => map.transfer(u, old),
            TestInput::Rerun { ran, old } => {
                let ran_u = ran.get(&u).cloned().unwrap_or_default();
                let mut cov = ran_u.clone();
                if let Some(old) = old {
                    // unmeasured entities: what the run did show covered, else the old value
                    let transferred = map.transfer(u, old) - &measured[u];
                    cov |= transferred;
                }
                cov
            }
        })
        .collect()
}

/// Tests not selected that must still rerun for the result to be exact: those
/// whose old coverage touches an out-edge of an ambiguous (multiply visited) node.
pub fn must_rerun(old: &Program<'_>, map: &EntityMap, old_cov: &HashMap<usize, RoaringBitmap>) -> bool {
    map.ambiguous.iter().any(|(r, g)| {
        let p = old.procedure(*r);
        let base = old.units[r.unit].unit.edge_bases()[r.proc];
        members(p, *g)
            .iter()
            .any(|f| p.cond.out_edges(*f).any(|e| old_cov.get(&r.unit).is_some_and(|b| b.contains(base + e.0))))
    })
}
