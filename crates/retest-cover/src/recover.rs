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
//! * [`RecordedTransfer`] — the same for what builds record beyond edges
//!   (MC/DC evaluations, paths): transferred exactly, or the test reruns.
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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use fixedbitset::FixedBitSet;
use retest_graph::coverage::Probe;
use retest_graph::pathnum::AcyclicPath;
use retest_graph::recording::{PathLayout, ProcPaths, Recorded, Sink, UnitRecording};
use retest_graph::{EdgeId, NodeId, NodeKind, Procedure};
use retest_select::{Outcome, ProcRef, Program};
use roaring::RoaringBitmap;

use crate::mcdc::McdcLayout;

/// Old (unit index, unit-wide edge) → the new (unit index, edge) entities it corresponds to.
pub type Image = HashMap<(usize, u32), Vec<(usize, u32)>>;

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
    /// The inverse of `units`, built on first use: old (unit index, edge) → its
    /// new counterparts (unit index, edge).
    image: std::sync::OnceLock<Image>,
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
                // the walk matched the groups; a declaration node's text (local
                // declarations without initialisers) is compared through affected
                // names instead, and its one way out corresponds all the same
                let same_shape = fo.len() == fn_.len()
                    && fo.iter().zip(&fn_).all(|(a, b)| {
                        let (x, y) = (po.cond.node(*a), pn.cond.node(*b));
                        x.text == y.text || (x.kind == NodeKind::Declaration && y.kind == NodeKind::Declaration)
                    });
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

    /// Old (unit index, edge) → its new counterparts (unit index, edge).
    pub fn image(&self) -> &Image {
        self.image.get_or_init(|| {
            let mut image = Image::new();
            for (nu, edges) in &self.units {
                for (ne, olds) in edges {
                    for o in olds {
                        image.entry(*o).or_default().push((*nu, *ne));
                    }
                }
            }
            image
        })
    }

    /// Transfers a test's old coverage to the new version, per new unit index:
    /// a new edge is covered if any of its old counterparts was. The work is
    /// the test's covered edges, not every edge of the program
    /// (`transferring_through_the_image_is_transferring_edge_by_edge`).
    pub fn transfer(&self, old_cov: &HashMap<usize, RoaringBitmap>) -> HashMap<usize, RoaringBitmap> {
        let image = self.image();
        let mut out: HashMap<usize, RoaringBitmap> = HashMap::new();
        for (&u, covered) in old_cov {
            for e in covered {
                for &(nu, ne) in image.get(&(u, e)).into_iter().flatten() {
                    out.entry(nu).or_default().insert(ne);
                }
            }
        }
        out
    }

    /// Transfers a test's old execution counts (old unit index → unit-wide
    /// edge → count; `retest build --counts`) to the new version through the
    /// same correspondence as [`EntityMap::transfer`]: a new edge ran as
    /// often as its old counterparts together (one, unless the walk matched
    /// several old edges with it).
    pub fn transfer_counts(&self, old: &HashMap<usize, BTreeMap<u32, u64>>) -> HashMap<usize, BTreeMap<u32, u64>> {
        let image = self.image();
        let mut out: HashMap<usize, BTreeMap<u32, u64>> = HashMap::new();
        for (&u, counts) in old {
            for (&e, &n) in counts {
                for &(nu, ne) in image.get(&(u, e)).into_iter().flatten() {
                    let c = out.entry(nu).or_default().entry(ne).or_default();
                    *c = c.saturating_add(n);
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
            // a derived node can only be measured through measured in-edges, an
            // edge without a cell of its own only through its target
            let mut changed = true;
            while changed {
                changed = false;
                for n in on.clone().ones() {
                    let needs: Vec<usize> = match p.probes[n] {
                        Probe::Derived => {
                            p.cond.in_edges(NodeId(n as u32)).iter().map(|&e| p.cond.edge(e).src.index()).collect()
                        }
                        probe @ (Probe::Ahead | Probe::Edges(_) | Probe::Paired { .. }) => p
                            .cond
                            .out_edges(NodeId(n as u32))
                            .enumerate()
                            .filter(|(k, _)| !probe.has_edge_cell(*k))
                            .map(|(_, e)| p.cond.edge(e).dst.index())
                            .collect(),
                        Probe::Node | Probe::PerEdge | Probe::Off | Probe::Entered => Vec::new(),
                    };
                    for s in needs {
                        if !on.contains(s) {
                            on.insert(s);
                            changed = true;
                        }
                    }
                }
            }
            // an entry derived from every other cell of the procedure keeps a
            // cell of its own where some of those cells are left out (and only
            // there: the plan never has more cells than full instrumentation)
            let cell_left_out = (0..p.cond.node_count()).any(|n| !on.contains(n) && p.probes[n].is_probed());
            unit_plan.push(
                (0..p.cond.node_count())
                    .map(|n| match (on.contains(n), p.probes[n]) {
                        (false, _) => Probe::Off,
                        (true, Probe::Entered) if cell_left_out => Probe::Node,
                        (true, probe) => probe,
                    })
                    .collect(),
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
    let transferred = match input {
        TestInput::Kept { old } | TestInput::Rerun { old: Some(old), .. } => map.transfer(old),
        TestInput::Rerun { old: None, .. } => HashMap::new(),
    };
    let transferred_in = |u: usize| transferred.get(&u).cloned().unwrap_or_default();
    (0..new_units)
        .map(|u| match input {
            TestInput::Kept { .. } => transferred_in(u),
            TestInput::Rerun { ran, old } => {
                let mut cov = ran.get(&u).cloned().unwrap_or_default();
                if old.is_some() {
                    // unmeasured entities: what the run did show covered, else the old value
                    cov |= transferred_in(u) - &measured[u];
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

/// Carries what tests recorded beyond edges (MC/DC evaluations, Ball–Larus
/// paths, cut-off frames) from the old version to the new one for tests that
/// are not rerun — exactly, or not at all.
///
/// A test not in T′ takes no dangerous edge, so its run of the new version
/// takes the matched counterpart of every edge it took before, in the same
/// order: each old evaluation of a decision (a path through its conditions) is
/// an evaluation along the mapped edges of the new decision, and each old
/// acyclic path is the mapped path of the new procedure. [`RecordedTransfer::transfer`]
/// maps them and re-numbers them in the new layouts; where any edge has no
/// single counterpart, or a new decision or procedure the test reaches records
/// but its old counterpart did not, it fails, and the caller reruns the test.
pub struct RecordedTransfer<'p> {
    old: &'p Program<'p>,
    new: &'p Program<'p>,
    /// Old (unit, unit-wide edge) → its new counterparts (unit, unit-wide edge).
    image: Image,
    old_mcdc: Vec<Option<McdcLayout>>,
    new_mcdc: Vec<Option<McdcLayout>>,
    old_paths: Vec<Option<PathLayout>>,
    new_paths: Vec<Option<PathLayout>>,
    new_rec: Vec<&'p UnitRecording>,
    /// Per old unit: its build counted executions.
    old_counts: Vec<bool>,
    /// The entity map, for execution counts.
    map: &'p EntityMap,
    old_bases: Vec<Vec<u32>>,
    new_bases: Vec<Vec<u32>>,
    /// Tests share most evaluations and paths: each is mapped once.
    /// (old unit, procedure, decision, path id) → (new unit, procedure, decision, path id).
    evaluations: RefCell<HashMap<Evaluated, Result<Evaluated, String>>>,
    /// (old unit, procedure, path id) → (new unit, procedure, path id).
    paths: RefCell<HashMap<Profiled, Result<Profiled, String>>>,
}

/// An evaluation of a decision: (unit, procedure, decision, path id).
type Evaluated = (usize, usize, usize, u64);
/// An acyclic path of a procedure: (unit, procedure, path id).
type Profiled = (usize, usize, u64);

/// The (procedure, local edge) of a unit-wide edge number.
fn locate(bases: &[u32], e: u32) -> Option<(usize, EdgeId)> {
    let i = bases.partition_point(|&b| b <= e).checked_sub(1)?;
    (i + 1 < bases.len()).then(|| (i, EdgeId(e - bases[i])))
}

impl<'p> RecordedTransfer<'p> {
    /// `old_rec[u]` / `new_rec[u]`: what the builds of each unit record (as placed).
    pub fn new(
        old: &'p Program<'p>,
        new: &'p Program<'p>,
        map: &'p EntityMap,
        old_rec: Vec<&'p UnitRecording>,
        new_rec: Vec<&'p UnitRecording>,
    ) -> RecordedTransfer<'p> {
        let image = map.image().clone();
        let mcdc = |p: &Program<'_>, r: &[&UnitRecording]| -> Vec<Option<McdcLayout>> {
            p.units.iter().zip(r).map(|(u, r)| r.mcdc_cells.map(|_| McdcLayout::new(u.unit))).collect()
        };
        let paths = |p: &Program<'_>, r: &[&UnitRecording]| -> Vec<Option<PathLayout>> {
            p.units.iter().zip(r).map(|(u, r)| r.path_cells.map(|_| PathLayout::new(u.unit))).collect()
        };
        RecordedTransfer {
            image,
            old_mcdc: mcdc(old, &old_rec),
            new_mcdc: mcdc(new, &new_rec),
            old_paths: paths(old, &old_rec),
            new_paths: paths(new, &new_rec),
            old_bases: old.units.iter().map(|u| u.unit.edge_bases()).collect(),
            new_bases: new.units.iter().map(|u| u.unit.edge_bases()).collect(),
            old_counts: old_rec.iter().map(|r| r.counts).collect(),
            map,
            old,
            new,
            new_rec,
            evaluations: RefCell::default(),
            paths: RefCell::default(),
        }
    }

    /// Whether anything beyond edges is recorded in the new version.
    pub fn is_empty(&self) -> bool {
        self.new_rec.iter().all(|r| r.is_empty())
    }

    /// The single new counterpart of old edge `e` of procedure `(u, i)`: (new unit, procedure, edge).
    fn image_of(&self, u: usize, i: usize, e: EdgeId) -> Result<(usize, usize, EdgeId), String> {
        let what = || format!("{}()", self.old.units[u].unit.procedures[i].name);
        match self.image.get(&(u, self.old_bases[u][i] + e.0)).map(Vec::as_slice) {
            Some(&[(nu, ne)]) => {
                let (ni, le) = locate(&self.new_bases[nu], ne).ok_or_else(|| format!("{}: bad edge", what()))?;
                Ok((nu, ni, le))
            }
            Some([]) | None => Err(format!("an edge of {} has no counterpart in the new version", what())),
            Some(_) => Err(format!("an edge of {} has several counterparts in the new version", what())),
        }
    }

    /// A test's recordings in the new version (new unit index → recorded),
    /// given its old recordings (old unit index → recorded) and its new edge
    /// coverage as transferred (new unit index → unit-wide edges).
    pub fn transfer(
        &self,
        old_recorded: &HashMap<usize, Recorded>,
        new_edges: &HashMap<usize, RoaringBitmap>,
    ) -> Result<HashMap<usize, Recorded>, String> {
        let mut out: HashMap<usize, Recorded> = HashMap::new();
        // per new (unit, procedure, decision) and (unit, procedure): data arrived
        let mut evaluated: HashSet<(usize, usize, usize)> = HashSet::new();
        let mut profiled: HashSet<(usize, usize)> = HashSet::new();
        for (&u, rec) in old_recorded {
            let unit = self.old.units[u].unit;
            if let Some(layout) = &self.old_mcdc[u] {
                for (i, pd) in layout.procs.iter().enumerate() {
                    for j in 0..pd.slots.len() {
                        let key = decision_key(layout, i, j);
                        let ids = key.and_then(|k| rec.ids.get(&k)).map(Vec::as_slice).unwrap_or(&[]);
                        let Ok(paths) = &pd.slots[j].paths else { continue };
                        for pv in layout.evaluations(i, j, &rec.mcdc, ids) {
                            let mapped = self
                                .evaluations
                                .borrow_mut()
                                .entry((u, i, j, pv.id))
                                .or_insert_with(|| {
                                    let edges =
                                        paths.decode_edges(pv.id).ok_or("a recorded evaluation does not decode")?;
                                    self.map_evaluation(u, i, &edges)
                                })
                                .clone();
                            let (nu, ni, j2, id2) = mapped?;
                            evaluated.insert((nu, ni, j2));
                            record_evaluation(out.entry(nu).or_default(), self.new_mcdc[nu].as_ref(), ni, j2, id2);
                        }
                    }
                }
            }
            if let Some(layout) = &self.old_paths[u] {
                for (i, pp) in layout.procs.iter().enumerate() {
                    let Some(numbering) = pp.numbering() else { continue };
                    let p = &unit.procedures[i];
                    let ids: Vec<u64> = match pp {
                        ProcPaths::Cells { base, numbering } => rec
                            .paths
                            .range(*base..(*base as u64 + numbering.path_count()).min(u32::MAX as u64) as u32)
                            .map(|c| u64::from(c - base))
                            .collect(),
                        ProcPaths::Ids { .. } => rec.ids.get(&(i as u32)).cloned().unwrap_or_default(),
                        ProcPaths::Off(_) | ProcPaths::Single => Vec::new(),
                    };
                    for id in ids {
                        let mapped = self
                            .paths
                            .borrow_mut()
                            .entry((u, i, id))
                            .or_insert_with(|| {
                                let path = numbering.decode(&p.stmt, id).ok_or("a recorded path does not decode")?;
                                self.map_path(u, i, &path)
                            })
                            .clone();
                        let (nu, ni, id2) = mapped?;
                        profiled.insert((nu, ni));
                        record_path(out.entry(nu).or_default(), self.new_paths[nu].as_ref(), ni, id2)?;
                    }
                    if rec.frames.contains(i as u32) {
                        let (nu, ni) = self.proc_image(u, i)?;
                        profiled.insert((nu, ni));
                        out.entry(nu).or_default().frames.insert(ni as u32);
                    }
                }
            }
        }
        // whatever the new build records and the test reaches must have arrived
        for (nu, u) in self.new.units.iter().enumerate() {
            let cov = new_edges.get(&nu);
            let covered = |i: usize, e: EdgeId| cov.is_some_and(|b| b.contains(self.new_bases[nu][i] + e.0));
            let rec = self.new_rec[nu];
            for (i, p) in u.unit.procedures.iter().enumerate() {
                if let Some(layout) = &self.new_mcdc[nu] {
                    for (j, d) in layout.procs[i].cfdg.decisions.iter().enumerate() {
                        if rec.records_decision(i, j)
                            && !evaluated.contains(&(nu, i, j))
                            && p.cond.out_edges(d.entry).any(|e| covered(i, e))
                        {
                            return Err(format!("evaluations of a decision in {}() were not recorded before", p.name));
                        }
                    }
                }
                if rec.records_paths(i) && !profiled.contains(&(nu, i)) && p.cond.edges().any(|(e, _)| covered(i, e)) {
                    return Err(format!("paths of {}() were not recorded before", p.name));
                }
            }
        }
        // execution counts: carried with the edges, into the new units that
        // count; a counting unit the test reaches whose old counterparts did
        // not count has none to carry (the test reruns)
        let old_counts: HashMap<usize, BTreeMap<u32, u64>> =
            old_recorded.iter().filter(|(_, r)| !r.counts.is_empty()).map(|(u, r)| (*u, r.counts.clone())).collect();
        for (nu, counts) in self.map.transfer_counts(&old_counts) {
            if self.new_rec[nu].counts {
                out.entry(nu).or_default().counts = counts;
            }
        }
        for (nu, rec) in self.new_rec.iter().enumerate() {
            if !rec.counts || new_edges.get(&nu).is_none_or(|b| b.is_empty()) {
                continue;
            }
            let fed_by_uncounted = self
                .map
                .units
                .get(&nu)
                .into_iter()
                .flatten()
                .any(|(ne, olds)| new_edges[&nu].contains(*ne) && olds.iter().any(|(ou, _)| !self.old_counts[*ou]));
            if fed_by_uncounted {
                let file = self.new.units[nu].unit.files.first().map(|f| f.path.as_str()).unwrap_or("a unit");
                return Err(format!("executions in {file} were not counted before"));
            }
        }
        Ok(out)
    }

    /// The new procedure of old procedure `(u, i)`, through its edges' counterparts.
    fn proc_image(&self, u: usize, i: usize) -> Result<(usize, usize), String> {
        let p = &self.old.units[u].unit.procedures[i];
        let mut seen = BTreeSet::new();
        for (e, _) in p.cond.edges() {
            if let Ok((nu, ni, _)) = self.image_of(u, i, e) {
                seen.insert((nu, ni));
            }
        }
        match seen.len() {
            1 => Ok(seen.into_iter().next().unwrap()),
            _ => Err(format!("{}() has no single counterpart in the new version", p.name)),
        }
    }

    /// An old evaluation (condition-level edges of decision in `(u, i)`) as an
    /// evaluation of a new decision: (new unit, procedure, decision, path id).
    fn map_evaluation(&self, u: usize, i: usize, edges: &[EdgeId]) -> Result<(usize, usize, usize, u64), String> {
        let mapped: Vec<(usize, usize, EdgeId)> =
            edges.iter().map(|&e| self.image_of(u, i, e)).collect::<Result<_, _>>()?;
        let (nu, ni, first) = mapped[0];
        if mapped.iter().any(|&(a, b, _)| (a, b) != (nu, ni)) {
            return Err("an evaluation maps into several procedures".into());
        }
        let layout = self.new_mcdc[nu].as_ref().ok_or("the new build does not record MC/DC")?;
        let np = &self.new.units[nu].unit.procedures[ni];
        let src = np.cond.edge(first).src;
        let pd = &layout.procs[ni];
        let j =
            pd.cfdg.decision_of.get(src.index()).copied().flatten().ok_or("an evaluation maps outside a decision")?;
        let paths = pd.slots[j.index()].paths.as_ref().map_err(|e| e.clone())?;
        let new_edges: Vec<EdgeId> = mapped.iter().map(|m| m.2).collect();
        let id = paths.encode_edges(&new_edges).ok_or("an evaluation is not a path of the new decision")?;
        if !self.new_rec[nu].records_decision(ni, j.index()) {
            return Err(format!("a decision of {}() is not recorded in the new build", np.name));
        }
        Ok((nu, ni, j.index(), id))
    }

    /// An old acyclic path of procedure `(u, i)` as a path of the new procedure:
    /// (new unit, procedure, path id).
    fn map_path(&self, u: usize, i: usize, path: &AcyclicPath) -> Result<(usize, usize, u64), String> {
        let op = &self.old.units[u].unit.procedures[i];
        let mut target: Option<(usize, usize)> = None;
        let mut edges = Vec::with_capacity(path.edges.len());
        for &se in &path.edges {
            // the statement-level edge's counterpart, through its condition-level preimage
            let mut images = BTreeSet::new();
            for fine in op.map.preimage(se) {
                let (nu, ni, ne) = self.image_of(u, i, fine)?;
                if *target.get_or_insert((nu, ni)) != (nu, ni) {
                    return Err("a path maps into several procedures".into());
                }
                let np = &self.new.units[nu].unit.procedures[ni];
                images.insert(np.map.edge[ne.index()].ok_or("a path edge maps inside a statement")?);
            }
            match images.len() {
                1 => edges.push(images.into_iter().next().unwrap()),
                _ => return Err(format!("a path edge of {}() has no single counterpart", op.name)),
            }
        }
        let (nu, ni) = match target {
            Some(t) => t,
            None => self.proc_image(u, i)?,
        };
        let np = &self.new.units[nu].unit.procedures[ni];
        let layout = self.new_paths[nu].as_ref().ok_or("the new build does not record paths")?;
        let numbering = layout.procs[ni].numbering().ok_or_else(|| format!("{}() records no paths", np.name))?;
        let start = if path.start == op.stmt.entry() {
            np.stmt.entry()
        } else {
            np.stmt.edge(*edges.first().ok_or("an empty path")?).src
        };
        let id = numbering.number(&np.stmt, start, &edges).ok_or("a path is not a path of the new procedure")?;
        if !self.new_rec[nu].records_paths(ni) {
            return Err(format!("paths of {}() are not recorded in the new build", np.name));
        }
        Ok((nu, ni, id))
    }
}

/// The id-set key of decision `j` of procedure `i`, if it records ids.
fn decision_key(layout: &McdcLayout, i: usize, j: usize) -> Option<u32> {
    match layout.procs[i].slots[j].sink {
        Some(Sink::Id { key }) => Some(key),
        _ => None,
    }
}

fn record_evaluation(r: &mut Recorded, layout: Option<&McdcLayout>, i: usize, j: usize, id: u64) {
    match layout.and_then(|l| l.procs[i].slots[j].sink) {
        Some(Sink::Cell { base, .. }) => {
            r.mcdc.insert(base + id as u32);
        }
        Some(Sink::Id { key }) => insert_id(r, key, id),
        None => {}
    }
}

fn record_path(r: &mut Recorded, layout: Option<&PathLayout>, i: usize, id: u64) -> Result<(), String> {
    match layout.map(|l| &l.procs[i]) {
        Some(ProcPaths::Cells { base, .. }) => {
            r.paths.insert(base + id as u32);
            Ok(())
        }
        Some(ProcPaths::Ids { .. }) => {
            insert_id(r, i as u32, id);
            Ok(())
        }
        _ => Err("the new build does not record this procedure's paths".into()),
    }
}

fn insert_id(r: &mut Recorded, key: u32, id: u64) {
    let v = r.ids.entry(key).or_default();
    if let Err(k) = v.binary_search(&id) {
        v.insert(k, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `transfer` through the inverse map covers a new edge exactly when one
        /// of its old counterparts was covered (the definition, edge by edge).
        #[test]
        fn transferring_through_the_image_is_transferring_edge_by_edge(
            pairs in prop::collection::vec((0usize..3, 0u32..40, prop::collection::vec((0usize..3, 0u32..40), 0..3)), 0..60),
            covered in prop::collection::vec((0usize..3, 0u32..40), 0..50),
        ) {
            let mut map = EntityMap::default();
            for (nu, ne, olds) in pairs {
                map.units.entry(nu).or_default().entry(ne).or_default().extend(olds);
            }
            let mut old: HashMap<usize, RoaringBitmap> = HashMap::new();
            for (u, e) in covered {
                old.entry(u).or_default().insert(e);
            }
            let got = map.transfer(&old);
            for nu in 0..3 {
                let mut want = RoaringBitmap::new();
                for (e2, olds) in map.units.get(&nu).into_iter().flatten() {
                    if olds.iter().any(|(u, e)| old.get(u).is_some_and(|b| b.contains(*e))) {
                        want.insert(*e2);
                    }
                }
                prop_assert_eq!(got.get(&nu).cloned().unwrap_or_default(), want);
            }
        }
    }
}
