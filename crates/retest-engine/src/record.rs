//! From a test's trace files to the edge coverage stored for it.
//!
//! Coverage is *unknown* — and the test always selected later — when a process
//! died without writing its trace (a leftover live marker), a trace is corrupt or
//! flagged incomplete, processes were still running when the test ended, or the
//! test ran a build of the project's code that is not part of the snapshot being
//! recorded (a stale binary), or a selectively instrumented build outside
//! `retest run --selected` (objects an interrupted one left behind).

use std::collections::HashMap;
use std::rc::Rc;

use fixedbitset::FixedBitSet;
use retest_abi::{SECT_EDGE_COUNTS, SECT_EDGES, SECT_FRAMES, SECT_MCDC, SECT_PATHS};
use retest_graph::Unit;
use retest_graph::coverage::{edge_counts, edge_coverage};
use retest_graph::stopped::StoppedUnit;
use retest_lang_c::instrument::UnitCells;
use retest_run::trace::{TraceDir, TraceError};
use retest_store::{BuildHash, Recorded, Store, UnitId, UnitRecording};
use roaring::RoaringBitmap;

/// What the recorder knows about the builds of one snapshot.
pub struct Builds {
    /// Build hash → (unit key, unit) for the snapshot.
    snapshot: HashMap<BuildHash, (String, UnitId)>,
    cache: HashMap<BuildHash, Rc<BuildView>>,
    /// Traces of selectively instrumented builds are taken (only `run --selected`,
    /// which knows what they measure, may).
    selective_ok: bool,
}

pub struct BuildView {
    pub unit_id: UnitId,
    pub unit: Rc<Unit>,
    pub plan: Vec<Vec<retest_graph::coverage::Probe>>,
    pub cells: UnitCells,
    pub recording: UnitRecording,
    /// Every node is probed as full instrumentation probes it.
    pub full: bool,
}

impl BuildView {
    /// Whether procedure `i` has a hit cell in `set` (the unit's hit cells).
    fn any_hit(&self, set: &FixedBitSet, i: usize) -> bool {
        let base = self.cells.base[i] as usize;
        let end = self.cells.base.get(i + 1).map_or(self.cells.total as usize, |&b| b as usize);
        set.count_ones(base..end) > 0
    }

    /// Procedure `i`'s cells (numbered from its first) that are hit in `set`.
    fn hit<'a>(&self, set: &'a FixedBitSet, i: usize) -> impl Fn(u32) -> bool + 'a {
        let base = self.cells.base[i];
        move |c| set.contains((base + c) as usize)
    }
}

/// Edges of a test some of whose code may have been stopped part-way through a
/// statement (a trace flagged `SIGNAL`, `THREADS` or `HANDLER`):
/// [`retest_graph::stopped::stopped_edges`] over the units whose cells the
/// test's traces report, which decides what procedures may have been running
/// and claims what code stopped before it showed its start may have run; here
/// its edges become unit-wide edge numbers.
fn stopped_edges(units: &[(Rc<BuildView>, FixedBitSet)], out: &mut HashMap<UnitId, RoaringBitmap>) {
    let hits: Vec<_> = units
        .iter()
        .map(|(view, set)| move |i: usize, c: u32| set.contains((view.cells.base[i] + c) as usize))
        .collect();
    let stopped: Vec<StoppedUnit<'_>> = units
        .iter()
        .zip(&hits)
        .map(|((view, _), hit)| StoppedUnit { unit: &view.unit, plan: &view.plan, layouts: &view.cells.layouts, hit })
        .collect();
    for ((view, _), procs) in units.iter().zip(retest_graph::stopped::stopped_edges(&stopped)) {
        let bases = view.unit.edge_bases();
        let bm = out.entry(view.unit_id).or_default();
        for (i, d) in procs.into_iter().enumerate() {
            for e in d.edges.ones() {
                bm.insert(bases[i] + e as u32);
            }
        }
    }
}

/// What a test recorded: per unit, the covered condition-level edges (unit-wide
/// numbers) and what was recorded beyond edges.
pub struct TestCoverage {
    pub edges: Vec<(UnitId, RoaringBitmap)>,
    pub recorded: Vec<(UnitId, Recorded)>,
    /// Code may have been stopped part-way: `edges` also claims what it may
    /// have run ([`stopped_edges`]), which depends on the build's probes.
    pub stopped: bool,
}

impl Builds {
    pub fn new(store: &Store, snapshot: retest_store::SnapshotId) -> Result<Builds, retest_store::StoreError> {
        Ok(Builds { snapshot: store.snapshot_build_hashes(snapshot)?, cache: HashMap::new(), selective_ok: false })
    }

    /// Also takes traces of selectively instrumented builds (for `run --selected`).
    pub fn allow_selective(mut self) -> Builds {
        self.selective_ok = true;
        self
    }

    fn view(&mut self, store: &Store, hash: &BuildHash) -> Result<Option<Rc<BuildView>>, String> {
        if let Some(v) = self.cache.get(hash) {
            return Ok(Some(v.clone()));
        }
        let Some(b) = store.build_by_hash(hash).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let unit = store.unit(b.unit).map_err(|e| e.to_string())?;
        let cells = UnitCells::new(&unit, &b.plan);
        let full = b.plan == retest_lang_c::instrument::full_plan(&unit);
        let v = Rc::new(BuildView { unit_id: b.unit, unit, plan: b.plan, cells, recording: b.recording, full });
        self.cache.insert(*hash, v.clone());
        Ok(Some(v))
    }

    /// The covered condition-level edges (unit-wide numbers) per unit, or why the
    /// coverage is unknown, from what [`retest_run::trace::read_dir`] read of the test's
    /// trace directory.
    pub fn coverage(
        &mut self,
        store: &Store,
        traces: &Result<TraceDir, TraceError>,
        lingering: bool,
    ) -> Result<TestCoverage, String> {
        if lingering {
            return Err("processes of the test were still running when it ended and had to be killed".into());
        }
        let td = traces.as_ref().map_err(|e| format!("cannot read the test's traces: {e}"))?;
        if let Some(e) = td.errors.first() {
            return Err(format!("a trace file is unusable: {}: {}", e.path.display(), e.error));
        }
        if let Some(m) = td.live.first() {
            let who = match (m.pid, m.command.is_empty()) {
                (Some(pid), false) => format!("pid {pid}: {}", m.command.join(" ")),
                (Some(pid), true) => format!("pid {pid}"),
                (None, _) => m.path.display().to_string(),
            };
            return Err(format!(
                "a process of the test ({who}) ended without writing its coverage (killed by a signal it could not catch?)"
            ));
        }
        let cov = td.coverage().map_err(|e| format!("traces do not merge: {e}"))?;
        if cov.is_clobbered() {
            return Err("the program wrote past the end of its own data into the coverage runtime's guard (an out-of-bounds write of a global array?): the runtime's state may be damaged".into());
        }
        if cov.is_incomplete() {
            return Err("a trace is marked incomplete by the runtime".into());
        }
        let mut out: HashMap<UnitId, RoaringBitmap> = HashMap::new();
        let mut recorded: HashMap<UnitId, Recorded> = HashMap::new();
        // per unit: its build and hit edge cells
        let mut edge_cells: Vec<(Rc<BuildView>, FixedBitSet)> = Vec::new();
        for (hash, kind, hits) in cov.iter_cells() {
            let known_here = self.snapshot.contains_key(hash);
            let Some(view) = self.view(store, hash)? else {
                // a build this store never recorded: an object left from before `retest
                // init`, or a tool instrumented by another store — its edges cannot be
                // attributed, and dropping them could hide what the test ran
                return Err(
                    "the test ran instrumented code this store has no record of (built before `retest init`, or by another project's retest) — rebuild from clean with `retest build`"
                        .to_string(),
                );
            };
            if !known_here {
                return Err(format!(
                    "the test ran a build of {} that is not in the snapshot being recorded — rebuild with the wrapper",
                    view.unit.files.first().map(|f| f.path.as_str()).unwrap_or("a translation unit")
                ));
            }
            if !view.full && !self.selective_ok {
                return Err(format!(
                    "the test ran a selectively instrumented build of {} (left by an interrupted `retest run --selected`, or --keep-selective) — rebuild with `retest build`",
                    view.unit.files.first().map(|f| f.path.as_str()).unwrap_or("a translation unit")
                ));
            }
            if kind != SECT_EDGES {
                let r = &view.recording;
                let (want, into): (Option<u32>, fn(&mut Recorded) -> &mut RoaringBitmap) = match kind {
                    SECT_MCDC => (r.mcdc_cells, |x| &mut x.mcdc),
                    SECT_PATHS => (r.path_cells, |x| &mut x.paths),
                    SECT_FRAMES => (r.path_cells.map(|_| view.unit.procedures.len() as u32), |x| &mut x.frames),
                    _ => (None, |x| &mut x.mcdc),
                };
                match want {
                    Some(n) if n == hits.len => {
                        into(recorded.entry(view.unit_id).or_default()).extend(hits.hit.iter().copied());
                    }
                    _ => {
                        return Err(format!(
                            "a trace reports a section of kind {kind} with {} cells that the build of {} does not have",
                            hits.len,
                            view.unit.files.first().map(|f| f.path.as_str()).unwrap_or("a translation unit")
                        ));
                    }
                }
                continue;
            }
            if hits.len != view.cells.total {
                return Err(format!("a trace reports {} cells for a unit that has {}", hits.len, view.cells.total));
            }
            let mut set = FixedBitSet::with_capacity(hits.len as usize);
            for &c in &hits.hit {
                // a cell beyond the unit's count makes the trace unusable, not a panic
                if c >= hits.len {
                    return Err(format!("a trace reports cell {c} of a unit that has {}", hits.len));
                }
                set.insert(c as usize);
            }
            edge_cells.push((view, set));
        }
        if cov.stopped_part_way() {
            stopped_edges(&edge_cells, &mut out);
        } else {
            for (view, set) in &edge_cells {
                let bases = view.unit.edge_bases();
                let bm = out.entry(view.unit_id).or_default();
                for (i, p) in view.unit.procedures.iter().enumerate() {
                    // every covered edge follows from a hit cell of its function
                    if !view.any_hit(set, i) {
                        continue;
                    }
                    let edges = edge_coverage(&p.cond, &view.plan[i], &view.cells.layouts[i], &view.hit(set, i));
                    for e in edges.ones() {
                        bm.insert(bases[i] + e as u32);
                    }
                }
            }
        }
        // execution counts (`--counts`): per edge, from the counters summed
        // over the test's processes; edges the counters do not determine are
        // left out, as are those that never ran
        for (hash, kind, len, counts) in cov.iter_counts() {
            let Some(view) = self.view(store, hash)? else { continue };
            if !self.snapshot.contains_key(hash) {
                continue; // reported above with the unit's cells
            }
            if kind != SECT_EDGE_COUNTS || len != view.cells.total || !view.recording.counts {
                return Err(format!(
                    "a trace reports counts of kind {kind} for {len} cells that the build of {} does not have",
                    view.unit.files.first().map(|f| f.path.as_str()).unwrap_or("a translation unit")
                ));
            }
            let bases = view.unit.edge_bases();
            let mine = &mut recorded.entry(view.unit_id).or_default().counts;
            for (i, p) in view.unit.procedures.iter().enumerate() {
                let base = view.cells.base[i];
                let count = |c: u32| counts.get(&(base + c)).copied().unwrap_or(0);
                for (e, n) in
                    edge_counts(&p.cond, &view.plan[i], &view.cells.layouts[i], &count).into_iter().enumerate()
                {
                    if let Some(n) = n.filter(|&n| n > 0) {
                        mine.insert(bases[i] + e as u32, n);
                    }
                }
            }
        }
        for (hash, _kind, key, ids) in cov.iter_ids() {
            let Some(view) = self.view(store, hash)? else { continue };
            if !self.snapshot.contains_key(hash) {
                continue; // reported above with the unit's cells
            }
            let mine = recorded.entry(view.unit_id).or_default().ids.entry(key).or_default();
            mine.extend_from_slice(ids);
            mine.sort_unstable();
            mine.dedup();
        }
        let mut edges: Vec<(UnitId, RoaringBitmap)> = out.into_iter().filter(|(_, b)| !b.is_empty()).collect();
        edges.sort_by_key(|(u, _)| *u);
        let mut recorded: Vec<(UnitId, Recorded)> = recorded.into_iter().filter(|(_, r)| !r.is_empty()).collect();
        recorded.sort_by_key(|(u, _)| *u);
        Ok(TestCoverage { edges, recorded, stopped: cov.stopped_part_way() })
    }
}
