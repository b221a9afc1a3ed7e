//! A selection: which tests must run again for the change since the baseline, and why.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use retest_graph::Unit;
use retest_graph::recording::{PathLayout, ProcPaths};
use retest_lang_c::project::read_compile_commands;
use retest_select::ball;
use retest_select::coarse::{Granularity, coarsen};
use retest_select::refine::{Elimination, PathData, Verdict, Why, refine, refine_with_paths};
use retest_select::{Dangerous, Mode, Outcome, Program, UnitRef, select, tests_for};
use retest_store::{BuildId, CoverageState, EdgeIndex, SnapshotId, Store, UnitId};
use serde::Serialize;

use crate::error::{Error, OrFail};
use crate::run::TestSource;
use retest_run::discover::TestSpec;

/// A selection algorithm. Ball's algorithms re-decide the tests DejaVu selects
/// (`retest_select::refine`), `path` with the paths `retest build --paths`
/// recorded; the coarse ones widen DejaVu's dangerous edges to whole functions
/// or units. [`Algorithm::about`] says what each selects.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Algorithm {
    #[default]
    Dejavu,
    Partial,
    Full,
    Valid,
    Path,
    Function,
    File,
}

impl Algorithm {
    /// Every algorithm, in the order `retest compare-algorithms` shows them.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::Dejavu,
        Algorithm::Partial,
        Algorithm::Full,
        Algorithm::Valid,
        Algorithm::Path,
        Algorithm::Function,
        Algorithm::File,
    ];

    /// The algorithm called `name` (as [`Algorithm::name`] spells it).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Dejavu => "dejavu",
            Algorithm::Partial => "partial",
            Algorithm::Full => "full",
            Algorithm::Valid => "valid",
            Algorithm::Path => "path",
            Algorithm::Function => "function",
            Algorithm::File => "file",
        }
    }

    /// One line on what the algorithm selects (for `--algorithm`'s help).
    pub fn about(self) -> &'static str {
        match self {
            Algorithm::Dejavu => "Rothermel & Harrold's DejaVu (default): tests through a dangerous edge",
            Algorithm::Partial => "Ball's partial-reachability: tests through a transition leaving V''_accept",
            Algorithm::Full => {
                "Ball's full-reachability: tests whose covered edges reach `reject` from the entry in G''"
            }
            Algorithm::Valid => "Ball's valid-reachability (⊑ by dominance only: coverage is a union of executions)",
            Algorithm::Path => {
                "Ball's path-based selection on the acyclic paths `retest build --paths` recorded, refined by valid-reachability; edge coverage where no paths were recorded"
            }
            Algorithm::Function => "Tests that executed any changed function (testmon / RustyRTS granularity)",
            Algorithm::File => "Tests that executed anything in a changed translation unit (Ekstazi granularity)",
        }
    }

    /// Ball's algorithm (000 §4) that re-decides DejaVu's tests, for those that are one.
    pub fn ball(self) -> Option<ball::Algorithm> {
        match self {
            Algorithm::Partial => Some(ball::Algorithm::Partial),
            Algorithm::Full => Some(ball::Algorithm::Full),
            Algorithm::Valid | Algorithm::Path => Some(ball::Algorithm::Valid),
            Algorithm::Dejavu | Algorithm::Function | Algorithm::File => None,
        }
    }
}

/// What to select against, and how.
#[derive(Clone, Debug, Default)]
pub struct SelectOptions {
    /// Analyse the sources named by this compilation database as the new
    /// version, without building (none: the newest snapshot built with the wrapper).
    pub project: Option<PathBuf>,
    pub algorithm: Algorithm,
    /// Compare every pair of same-named procedures instead of walking from the entry.
    pub naive: bool,
    pub source: TestSource,
    /// Set aside changes in constructors and operators (003 §6.4), as
    /// `skip_constructor_and_operator_changes` in `retest.toml` does.
    pub skip_constructors_and_operators: bool,
    /// Apply the `[select]` table of `retest.toml` (what the user asked to
    /// set aside); RECOVER's own selection does not.
    pub scoped: bool,
    /// Class-level selection (003 §4): only changes in this class (by last
    /// name) and its bases count.
    pub class: Option<String>,
    /// Compare against this snapshot's matrix instead of the baseline's (a
    /// sharded `run --selected` against the baseline the first shard
    /// carried coverage over from).
    pub baseline: Option<SnapshotId>,
    /// Decode and compare every unit, also those the change left the same
    /// (RECOVER maps every unit's entities; `RETEST_WHOLE_PROGRAM=1`).
    /// Otherwise only changed units are, when that gives the same selection
    /// ([`changed_units`]).
    pub whole_program: bool,
    /// Decode every procedure and walk every pair, keeping each walk (RECOVER
    /// maps entities through them; `RETEST_WHOLE_PROGRAM=1`). Otherwise a
    /// DejaVu, function- or file-level selection reads stored units with
    /// their bodies decoded on demand and leaves the pairs their summaries
    /// prove unchanged undecoded ([`retest_select::select_changes`]).
    pub every_walk: bool,
}

/// One unit of a version.
pub struct Loaded {
    pub key: String,
    pub flags: String,
    pub unit: Rc<Unit>,
    pub unit_id: Option<UnitId>,
    pub src_hash: [u8; 16],
    pub broken: Option<String>,
    /// The unit's instrumented build, if it was built with the wrapper.
    pub build: Option<BuildId>,
    /// What the build records beyond edges, read on first use.
    recording: OnceCell<retest_store::UnitRecording>,
    /// A stored unit read with its bodies decoded on demand: `unit` is then
    /// a shell (see [`retest_select::UnitRef::bodies`]); read procedures
    /// through [`Loaded::procedure`].
    pub bodies: Option<Rc<retest_store::StoredBodies>>,
}

impl Selection {
    /// How many file states test `name` of the suite depends on, if its
    /// dependencies were recorded.
    pub fn file_deps(&self, name: &str) -> Option<u64> {
        self.suite.iter().position(|t| t == name).and_then(|i| self.file_deps[i])
    }
}

impl Loaded {
    /// A unit of a stored snapshot, with its bodies decoded on demand when
    /// `lazy` and its encoding allows.
    fn stored(store: &Store, su: retest_store::SnapshotUnit, lazy: bool) -> Result<Loaded, Error> {
        let (unit, bodies) = if lazy {
            store.units_lazy(&[su.unit]).or_fail()?.pop().expect("one unit asked for")
        } else {
            (store.unit(su.unit).or_fail()?, None)
        };
        Ok(Loaded {
            unit,
            bodies,
            build: su.build,
            recording: OnceCell::new(),
            key: su.key,
            flags: su.flags,
            unit_id: Some(su.unit),
            src_hash: su.src_hash,
            broken: None,
        })
    }

    /// Procedure `i` in full (its body decoded on first use).
    pub fn procedure(&self, i: usize) -> &retest_graph::Procedure {
        use retest_graph::summary::Bodies;
        match &self.bodies {
            Some(b) => b.body(i),
            None => &self.unit.procedures[i],
        }
    }

    /// Unit-wide number of each procedure's first condition-level edge.
    pub fn edge_bases(&self) -> Vec<u32> {
        use retest_graph::summary::Bodies;
        match &self.bodies {
            Some(b) => b.edge_bases(self.unit.procedures.len()),
            None => self.unit.edge_bases(),
        }
    }

    fn dyn_bodies(&self) -> Option<&dyn retest_graph::summary::Bodies> {
        self.bodies.as_deref().map(|b| b as &dyn retest_graph::summary::Bodies)
    }

    /// What the unit's build records beyond edges (nothing when not built).
    pub fn recording(&self, store: &Store) -> Result<&retest_store::UnitRecording, Error> {
        if let Some(r) = self.recording.get() {
            return Ok(r);
        }
        let r = match self.build {
            Some(b) => store.build_recording(b).or_fail()?,
            None => Default::default(),
        };
        Ok(self.recording.get_or_init(|| r))
    }
}

/// The per-test records a selection read (`Selection::_held`).
struct Held {
    _specs: Option<Vec<TestSpec>>,
    _matrix: Vec<retest_store::MatrixTest>,
    _deps: Vec<Option<retest_store::TestDeps>>,
}

/// The outcome of a selection, with tests resolved.
pub struct Selection {
    pub algorithm: Algorithm,
    pub baseline: SnapshotId,
    pub new_snapshot: Option<SnapshotId>,
    pub suite: Vec<String>,
    /// The command of each selected test, when the tests could be listed.
    pub commands: BTreeMap<String, String>,
    /// Selected test name → reasons (one line each).
    pub selected: BTreeMap<String, Vec<String>>,
    /// The kind (JSON `kind`) of each reason that is not about code.
    pub other_kinds: HashMap<String, &'static str>,
    /// Tests of the baseline no longer in the suite (names as last shown).
    pub removed: Vec<String>,
    /// Tests of the suite the baseline has no record of though its suite
    /// holds them (an incomplete baseline: a shard not run, stopped or not
    /// merged); they are selected.
    pub incomplete: Vec<String>,
    /// Per test of the suite (as `suite`), how many file states it depends
    /// on, if its dependencies were recorded ([`Selection::file_deps`]).
    file_deps: Vec<Option<u64>>,
    /// The recorded file states that no longer hold.
    pub files_changed: usize,
    /// Selected test name → structured reasons, for JSON.
    pub reasons: BTreeMap<String, Vec<Why>>,
    /// Tests DejaVu selects that Ball's algorithm eliminates, with why.
    pub eliminated: BTreeMap<String, Vec<Elimination>>,
    /// Procedure pairs whose intersection graph was built (Ball's algorithms).
    pub pairs_analysed: Option<usize>,
    /// The part of `elapsed` Ball's algorithm took after DejaVu.
    pub refine_elapsed: Option<Duration>,
    pub outcome: Outcome,
    /// The dangerous edges of the chosen algorithm (DejaVu's — also for Ball's
    /// algorithms, which decide which of their tests need to run — or coarsened).
    pub dangerous: Vec<Dangerous>,
    pub elapsed: Duration,
    pub warnings: Vec<String>,
    /// The units compared (for RECOVER), in the programs' order: every unit,
    /// or with `elsewhere` set only those the change touched.
    pub old_units: Vec<Loaded>,
    pub new_units: Vec<Loaded>,
    /// When the units the change left the same were not compared: the names
    /// they define with external linkage (name → how often), which still
    /// decide how procedures are named ([`Program::with_elsewhere`]).
    pub elsewhere: Option<HashMap<String, usize>>,
    /// What the selection read per test, handed to the caller with it: at
    /// 10^5 tests, freeing it takes longer than some selections do, and a
    /// process that exits after printing need not (`retest select` forgets
    /// the selection).
    _held: Held,
    /// How many units the new version has (compared or not).
    pub units: usize,
    /// Where CTest's list came from (kept from before, or made, and why it
    /// was not kept), when the tests come from CTest.
    pub listing: Option<String>,
}

impl Selection {
    /// Whether test `name` is selected for something beyond its code: its
    /// definition, the files it reads, unknown dependencies, or being new.
    /// Its behaviour may then differ anywhere, not only where the code
    /// changed, so none of its old coverage can be carried over.
    pub fn inputs_changed(&self, name: &str) -> bool {
        self.selected.get(name).is_some_and(|why| why.iter().any(|r| self.other_kinds.contains_key(r)))
    }

    /// The two programs, rebuilt from the units (same indexes as in `outcome`).
    pub fn programs(&self) -> (Program<'_>, Program<'_>) {
        programs(&self.old_units, &self.new_units, self.elsewhere.as_ref())
    }
}

fn programs<'a>(
    old_units: &'a [Loaded],
    new_units: &'a [Loaded],
    elsewhere: Option<&'a HashMap<String, usize>>,
) -> (Program<'a>, Program<'a>) {
    let old = Program::new(
        old_units
            .iter()
            .map(|u| UnitRef { key: &u.key, unit: &u.unit, flags: &u.flags, broken: None, bodies: u.dyn_bodies() })
            .collect(),
    );
    let new = Program::new(
        new_units
            .iter()
            .map(|u| UnitRef {
                key: &u.key,
                unit: &u.unit,
                flags: &u.flags,
                broken: u.broken.as_deref(),
                bodies: u.dyn_bodies(),
            })
            .collect(),
    );
    match elsewhere {
        Some(names) => (old.with_elsewhere(names), new.with_elsewhere(names)),
        None => (old, new),
    }
}

/// The units of two snapshots a selection needs to decode: those whose text
/// or flags differ. `None` when the selection must compare every unit.
struct Changed {
    old_units: Vec<Loaded>,
    new_units: Vec<Loaded>,
    /// Externally visible names of the units left out, with how often.
    elsewhere: HashMap<String, usize>,
    /// The facts of the units left out.
    left_out: Vec<retest_store::UnitFacts>,
    /// Per unit of the new snapshot, in key order, its syntax error outside
    /// any procedure: (where, what).
    unattributed: Vec<(String, String)>,
}

/// The units a change touched, when comparing only them selects what
/// comparing every unit does (`old_su`, `new_su`: the units of the baseline
/// and of the new snapshot `new`).
///
/// A unit with the same preprocessed text (the same stored unit) and flags in
/// both snapshots compares equal to itself, procedure by procedure: DejaVu
/// finds no dangerous edge in it unless something outside it changed what its
/// code means — a declaration it refers to (`affected` names), where its
/// calls by name go, the set of procedures calls through pointers may reach,
/// or a class hierarchy. So the units left out are those, and only when:
/// * both snapshots hold the same unit keys (no unit added or removed);
/// * every changed unit defines the same externally visible names and takes
///   the same procedures' addresses in both versions — then every call by
///   name resolves as before, procedures keep their names across versions,
///   and the address-taken set is the same;
/// * no unit defines classes (C++ hierarchies span units);
/// * and, checked after the walk by the caller, no unit left out names
///   anything a declaration change affects (`Outcome::affected_globals`,
///   against each unit's name hashes, `UnitFacts::may_name`). A declaration
///   change is one in a changed unit, since the others are the same; a unit
///   that names none of the affected names has no node they reach, no
///   declaration that would carry the change further (the closure of
///   `affected` goes through mentions), and no text of those names that
///   would change how the change is told.
///
/// What the walk then misses of the units left out is their pairs' walks,
/// each an identity: RECOVER, which maps every unit's entities, asks for the
/// whole program. Guarded by the test
/// `selecting_from_the_changed_units_alone_selects_what_the_whole_program_does`
/// (invariant **changed_units_select_as_the_whole_program**).
fn changed_units(
    store: &Store,
    old_su: Vec<retest_store::SnapshotUnit>,
    new_su: Vec<retest_store::SnapshotUnit>,
    new: SnapshotId,
    lazy: bool,
) -> Result<Option<Changed>, Error> {
    if old_su.len() != new_su.len() || old_su.iter().zip(&new_su).any(|(a, b)| a.key != b.key) {
        return Ok(None);
    }
    let mut out = Changed {
        old_units: Vec::new(),
        new_units: Vec::new(),
        elsewhere: HashMap::new(),
        left_out: Vec::new(),
        unattributed: Vec::new(),
    };
    // the changed units, decoded together (in parallel)
    let changed = changed_pairs(&old_su, &new_su);
    if lazy {
        store.units_lazy(&changed).or_fail()?;
    } else {
        store.units(&changed).or_fail()?;
    }
    // the left-out units' facts, in one read
    let mut stored_facts = store.snapshot_facts(new).or_fail()?;
    // room for every name exported (10^5 at a fleet's scale), reserved once
    out.elsewhere.reserve(stored_facts.values().map(|f| f.exported.len()).sum());
    for (o, n) in old_su.into_iter().zip(new_su) {
        if (o.unit, &o.flags) == (n.unit, &n.flags) {
            let mut facts = match stored_facts.remove(&n.unit) {
                Some(f) => f,
                None => store.unit_facts(n.unit).or_fail()?,
            };
            if facts.classes {
                return Ok(None);
            }
            for name in std::mem::take(&mut facts.exported) {
                *out.elsewhere.entry(name).or_default() += 1;
            }
            if let Some((at, what)) = &facts.unattributed_error {
                out.unattributed.push((at.clone().unwrap_or_else(|| n.key.clone()), what.clone()));
            }
            out.left_out.push(facts);
            continue;
        }
        let (o, n) = (Loaded::stored(store, o, lazy)?, Loaded::stored(store, n, lazy)?);
        fn visible(u: &Unit) -> (Vec<&str>, BTreeSet<&str>) {
            let mut names: Vec<&str> = u.procedures.iter().filter(|p| !p.is_static).map(|p| p.name.as_str()).collect();
            names.sort_unstable();
            (names, u.address_taken.iter().map(String::as_str).collect())
        }
        if !o.unit.classes.is_empty() || !n.unit.classes.is_empty() || visible(&o.unit) != visible(&n.unit) {
            return Ok(None);
        }
        if let Some(p) = &n.unit.unattributed_error {
            out.unattributed.push((unattributed_at(&n), p.message.clone()));
        }
        out.old_units.push(o);
        out.new_units.push(n);
    }
    Ok(Some(out))
}

/// The row of the matrix (whose tests have the keys `matrix`, each once) of
/// each test of `keys`, if it has one. A universe file or a CTest listing
/// keeps its order from run to run, and the matrix is ordered by test id,
/// given in the order tests were first seen: most tests are at the row
/// after the last one found, and only the others are looked up by key (a map
/// of 10^5 keys cost a selection at a fleet's scale 10–15 ms).
fn matrix_rows(keys: &[&str], matrix: &[&str]) -> Vec<Option<usize>> {
    let mut by_key: Option<HashMap<&str, usize>> = None;
    let mut next = 0;
    keys.iter()
        .map(|k| {
            let j = if matrix.get(next) == Some(k) {
                Some(next)
            } else {
                by_key.get_or_insert_with(|| matrix.iter().enumerate().map(|(i, m)| (*m, i)).collect()).get(k).copied()
            };
            if let Some(j) = j {
                next = j + 1;
            }
            j
        })
        .collect()
}

/// The units of two snapshots' lists that differ, pair by pair (old, new).
fn changed_pairs(old: &[retest_store::SnapshotUnit], new: &[retest_store::SnapshotUnit]) -> Vec<UnitId> {
    old.iter()
        .zip(new)
        .filter(|(o, n)| (o.unit, &o.flags) != (n.unit, &n.flags))
        .flat_map(|(o, n)| [o.unit, n.unit])
        .collect()
}

/// Where a unit's syntax error outside any procedure is (`file:line`, or the unit's key).
fn unattributed_at(u: &Loaded) -> String {
    let p = u.unit.unattributed_error.as_ref();
    p.and_then(|p| p.span).map(|s| format!("{}:{}", u.unit.file_path(&s), s.line)).unwrap_or_else(|| u.key.clone())
}

/// A snapshot's units; with their bodies decoded on demand when `lazy`.
pub fn load_snapshot(store: &Store, id: SnapshotId, lazy: bool) -> Result<Vec<Loaded>, Error> {
    let units = store.snapshot_units(id).or_fail()?;
    let ids: Vec<UnitId> = units.iter().map(|su| su.unit).collect();
    if lazy {
        store.units_lazy(&ids).or_fail()?;
    } else {
        store.units(&ids).or_fail()?;
    }
    units.into_iter().map(|su| Loaded::stored(store, su, lazy)).collect()
}

/// The new version from a compilation database, analysed without building,
/// through the wrapper's own pipeline (`retest_lang_c::wrap::analyse_command`):
/// the same keys, flags and units a build with the wrapper would record.
pub fn load_compile_commands(db: &Path, root: &Path) -> Result<Vec<Loaded>, Error> {
    let cmds = read_compile_commands(db).or_fail()?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let regions = retest_lang_c::region::RegionsInMemory::default();
    let analysed: Vec<Vec<retest_lang_c::wrap::AnalysedSource>> = cmds
        .par_iter()
        .map(|c| {
            let argv = c.argv();
            let Some((compiler, args)) = argv.split_first() else { return Vec::new() };
            let dir = Path::new(&c.directory);
            let entry = dir.join(&c.file);
            retest_lang_c::wrap::analyse_command(args, compiler, &root, dir, false, &regions)
                .into_iter()
                // a database entry is about one file; keep that one
                .filter(|a| dir.join(&a.source) == entry || Path::new(&a.source) == Path::new(&c.file))
                .collect()
        })
        .collect();
    Ok(analysed
        .into_iter()
        .flatten()
        .map(|a| {
            let (unit, src_hash, broken) = match a.unit {
                Ok(s) => (s.tu.unit, s.src_hash, None),
                Err(e) => (Unit::default(), [0; 16], Some(e.to_string())),
            };
            Loaded {
                key: a.key,
                flags: a.flags,
                unit: Rc::new(unit),
                unit_id: None,
                src_hash,
                broken,
                build: None,
                recording: OnceCell::new(),
                bodies: None,
            }
        })
        .collect())
}

/// The paths the baseline's tests took through the procedures that have
/// dangerous edges (`retest build --paths`).
struct RecordedPaths {
    /// Per old unit index: its path layout and what each test recorded in it.
    units: HashMap<usize, (PathLayout, retest_store::UnitRecording, HashMap<u32, retest_store::Recorded>)>,
}

impl RecordedPaths {
    fn load(
        store: &Store,
        baseline: SnapshotId,
        old_units: &[Loaded],
        dangerous: &[retest_select::Dangerous],
        warnings: &mut Vec<String>,
    ) -> Result<RecordedPaths, Error> {
        let mut units = HashMap::new();
        for d in dangerous {
            let ui = d.procedure.unit;
            if units.contains_key(&ui) {
                continue;
            }
            let u = &old_units[ui];
            let rec: HashMap<u32, retest_store::Recorded> = match u.unit_id {
                Some(id) => {
                    store.unit_recorded(baseline, id).or_fail()?.into_iter().map(|(t, r)| (t.0 as u32, r)).collect()
                }
                None => HashMap::new(),
            };
            units.insert(ui, (PathLayout::new(&u.unit), u.recording(store)?.clone(), rec));
        }
        if !units.is_empty() && units.values().all(|(_, r, _)| r.path_cells.is_none()) {
            warnings.push(
                "no paths were recorded for the baseline (build it with `retest build --paths`): path selection decides on edge coverage"
                    .to_string(),
            );
        }
        Ok(RecordedPaths { units })
    }

    /// Test `t`'s paths through old procedure `o`.
    fn of(&self, o: retest_select::ProcRef, t: u32) -> PathData {
        let Some((layout, built, rec)) = self.units.get(&o.unit) else {
            return PathData::Unavailable("no paths recorded".into());
        };
        if !built.records_paths(o.proc) {
            return PathData::Unavailable("the baseline build records no paths here".into());
        }
        let Some(r) = rec.get(&t) else {
            return PathData::Unavailable("no path was recorded although the test ran the function".into());
        };
        if r.frames.contains(o.proc as u32) {
            return PathData::Unavailable("a path was cut off (exit, longjmp, a signal or exec)".into());
        }
        let ids: Vec<u64> = match &layout.procs[o.proc] {
            ProcPaths::Cells { base, numbering } => r
                .paths
                .range(*base..(*base as u64 + numbering.path_count()).min(u32::MAX as u64) as u32)
                .map(|c| u64::from(c - base))
                .collect(),
            ProcPaths::Ids { .. } => r.ids.get(&(o.proc as u32)).cloned().unwrap_or_default(),
            ProcPaths::Single | ProcPaths::Off(_) => return PathData::Unavailable("no paths recorded".into()),
        };
        if ids.is_empty() {
            return PathData::Unavailable("no path was recorded although the test ran the function".into());
        }
        PathData::Recorded(ids)
    }
}

/// One line for a reason. `function` and `file` select a test for running
/// any code of a changed function or translation unit: their reason names
/// what the test ran, then the change that makes it count as changed (a
/// change the test may never have reached).
pub fn why_text(algorithm: Algorithm, old_units: &[Loaded], w: &Why) -> String {
    let unit = &old_units[w.procedure.unit].unit;
    let p = &unit.procedures[w.procedure.proc];
    let at = p.span.map(|s| (unit.file_path(&s).to_string(), s.line));
    match (algorithm, at) {
        (Algorithm::Function, Some((file, line))) => {
            format!("ran `{}` ({file}:{line}), which changed: {w}", p.name)
        }
        (Algorithm::Function, None) => format!("ran `{}`, which changed: {w}", p.name),
        (Algorithm::File, Some((file, _))) => format!("ran code of {file} (`{}`), which changed: {w}", p.name),
        (Algorithm::File, None) => format!("ran `{}`, whose translation unit changed: {w}", p.name),
        _ => w.to_string(),
    }
}

/// `TestsOnEdge` of a baseline matrix as a selection reads it: per unit, only
/// the blocks of the stored index that hold an edge asked for
/// ([`Store::edge_index_block`]), each read once — at 10⁵ tests a unit's
/// whole index is tens of megabytes, of which a change needs a few blocks.
struct OnEdge<'u> {
    baseline: SnapshotId,
    units: &'u [Loaded],
    /// Per old unit index: the edges read so far (whole blocks) and their tests.
    read: HashMap<usize, (roaring::RoaringBitmap, EdgeIndex)>,
    /// The first read that failed: the selection is not made.
    error: Option<Error>,
}

impl<'u> OnEdge<'u> {
    fn new(baseline: SnapshotId, units: &'u [Loaded]) -> OnEdge<'u> {
        OnEdge { baseline, units, read: HashMap::new(), error: None }
    }

    /// The tests that traversed condition-level edge `edge` of old unit `ui`
    /// (none once a read failed: [`OnEdge::check`] then fails).
    fn tests(&mut self, store: &mut Store, ui: usize, edge: u32) -> roaring::RoaringBitmap {
        if self.error.is_some() {
            return Default::default();
        }
        let (known, idx) = self.read.entry(ui).or_default();
        if !known.contains(edge) {
            let id = self.units[ui].unit_id.expect("baseline units are stored");
            match store.edge_index_block(self.baseline, id, edge).or_fail() {
                Ok((range, part)) => {
                    known.insert_range(range);
                    idx.edges.extend(part.edges);
                }
                Err(e) => {
                    self.error = Some(e);
                    return Default::default();
                }
            }
        }
        idx.tests_on_edge(edge).cloned().unwrap_or_default()
    }

    /// Fails with the first read that failed.
    fn check(&mut self) -> Result<(), Error> {
        self.error.take().map_or(Ok(()), Err)
    }
}

/// Runs the selection for the store's baseline against the new version, on
/// one consistent view of the store ([`Store::read_view`]): workers that
/// record shards meanwhile are neither blocked nor half seen.
pub fn compute(store: &mut Store, root: &Path, opts: &SelectOptions) -> Result<Selection, Error> {
    // the view builds a missing index and forgets it: store them first (a
    // store that cannot be written is read as it is)
    if let Some(b) = opts.baseline.or_else(|| store.baseline().ok().flatten()) {
        let _ = store.store_missing_indexes(b);
        // units stored before their facts were: decoded once, here
        if !opts.whole_program && opts.project.is_none() {
            let newest = store.newest_snapshot().ok().flatten().map_or(b, |s| s.id);
            let _ = store.store_missing_facts(&[b, newest]);
        }
    }
    store.read_view(|s| compute_in(s, root, opts)).or_fail()?
}

/// The suite of a selection: listed, or being listed on a thread of its own.
enum Discovery {
    Listed(Result<crate::run::Discovered, Error>),
    Listing(std::thread::JoinHandle<Result<crate::run::Discovered, Error>>),
}

fn compute_in(store: &mut Store, root: &Path, opts: &SelectOptions) -> Result<Selection, Error> {
    let baseline = match opts.baseline {
        Some(b) => b,
        None => store.baseline().or_fail()?.ok_or_else(|| {
            Error::new("no baseline: no test coverage has been recorded").hint("run `retest run` first")
        })?,
    };
    let started = Instant::now();
    let mut warnings = Vec::new();
    // a listing that takes a while (a universe of 10^5 lines, `ctest`
    // listing anew) runs meanwhile: nothing below needs the tests before the
    // matrix is read
    let discovery = {
        let listing = crate::deps::listing_cache(&opts.source, root, store)?;
        let source = opts.source.resolve(store);
        match crate::run::discover_quick(&source, root, listing.as_ref()) {
            Some(listed) => Discovery::Listed(listed),
            None => {
                let root = root.to_path_buf();
                Discovery::Listing(std::thread::spawn(move || {
                    crate::run::discover_resolved(&source, &root, listing.as_ref())
                }))
            }
        }
    };
    // the pairs a change left the same need no walk and no decoding, unless
    // every walk is wanted: RECOVER's entity map, Ball's and path-based
    // algorithms and class-level selection read them
    let lazy = !opts.every_walk
        && opts.class.is_none()
        && matches!(opts.algorithm, Algorithm::Dejavu | Algorithm::Function | Algorithm::File);
    let mut pruned = None;
    let mut matrix_read = None;
    // changes the tester sets aside (`[select]` of retest.toml), read once
    let scope = if opts.scoped { crate::deps::select_settings(&opts.source, root, store)? } else { Default::default() };
    let (new_units, new_snapshot) = match &opts.project {
        Some(db) => (load_compile_commands(db, root)?, None),
        None => {
            // with nothing built since the baseline, the code is the baseline's
            // and only definitions and files can have changed — if the sources
            // are still what the newest build analysed
            let newest = store.newest_snapshot().or_fail()?.map_or(baseline, |s| s.id);
            if let Some(stale) = crate::deps::stale_source(store, root, newest)? {
                let crate::deps::Stale { path, unit } = stale;
                let with = if path == unit { String::new() } else { format!(" with `{unit}`") };
                return Err(Error::new(format!(
                    "{path} changed since the newest build with the wrapper (snapshot {}) analysed it{with}",
                    newest.0
                ))
                .hint(format!(
                    "rebuild with the wrapper (`retest build -- make`) first: a selection from code the build did not analyse is not safe; \
                     if the build then compiles nothing, the build system missed the change (`{path}` older than the objects made from it): \
                     touch `{unit}` (or build from clean) and build again"
                )));
            }
            // a build that compiled nothing leaves a snapshot holding the
            // baseline's units as they were: the same code
            let same = |a: &[retest_store::SnapshotUnit], b: &[retest_store::SnapshotUnit]| {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| (&x.key, x.unit, x.build, &x.flags) == (&y.key, y.unit, y.build, &y.flags))
            };
            let newest = if newest != baseline
                && same(&store.snapshot_units(newest).or_fail()?, &store.snapshot_units(baseline).or_fail()?)
            {
                baseline
            } else {
                newest
            };
            // class-level selection and constructors set aside read the whole class hierarchy
            let hierarchy = opts.class.is_some()
                || opts.skip_constructors_and_operators
                || scope.skip_constructor_and_operator_changes;
            let changed = if opts.whole_program || hierarchy {
                None
            } else {
                let (o, n) = (store.snapshot_units(baseline).or_fail()?, store.snapshot_units(newest).or_fail()?);
                if lazy {
                    // the changed units decode on a thread of their own while
                    // this one reads the baseline's matrix (10^5 rows at a
                    // fleet's scale) in the read view
                    store.decode_units_ahead(&changed_pairs(&o, &n)).or_fail()?;
                    matrix_read = Some(store.matrix_for_selection(baseline).or_fail()?);
                }
                changed_units(store, o, n, newest, lazy)?
            };
            match changed {
                Some(c) => {
                    pruned = Some((c.old_units, c.elsewhere, c.unattributed, c.left_out));
                    (c.new_units, Some(newest))
                }
                None => (load_snapshot(store, newest, lazy)?, Some(newest)),
            }
        }
    };
    let (old_units, elsewhere, unattributed, left_out) = match pruned {
        Some((old_units, elsewhere, unattributed, left_out)) => (old_units, Some(elsewhere), unattributed, left_out),
        None => {
            let unattributed = new_units
                .iter()
                .filter_map(|u| u.unit.unattributed_error.as_ref().map(|p| (unattributed_at(u), p.message.clone())))
                .collect();
            (load_snapshot(store, baseline, lazy)?, None, unattributed, Vec::new())
        }
    };
    for u in &new_units {
        if let Some(b) = &u.broken {
            warnings.push(format!("{}: cannot be analysed ({b}); every function of it counts as changed", u.key));
        }
    }
    let (old, new) = programs(&old_units, &new_units, elsewhere.as_ref());
    // a class's frame reaches its methods pairwise (retest_select::frames)
    let mode = if opts.naive || opts.class.is_some() { Mode::Naive } else { Mode::Inter };
    // nothing built since the baseline: the code is the baseline's own, and
    // only definitions and files can have changed
    let mut outcome = if new_snapshot == Some(baseline) {
        Outcome::default()
    } else if lazy {
        retest_select::select_changes(&old, &new, mode)
    } else {
        select(&old, &new, mode)
    };
    // a stored body that does not decode: the store is damaged
    let damaged = |old: &Program<'_>, new: &Program<'_>| -> Result<(), Error> {
        match old.body_error().or_else(|| new.body_error()) {
            Some(e) => Err(Error::new(format!("the store is damaged: {e}"))
                .hint("rebuild with the wrapper; if it persists, move .retest away and record a new baseline")),
            None => Ok(()),
        }
    };
    damaged(&old, &new)?;
    // a declaration changed: a unit left out that names what it affects
    // could have dangerous edges, or carry the change further through its
    // own declarations (`affected`'s closure), or declare the name too
    if elsewhere.is_some() && outcome.affected_globals.names.keys().any(|n| left_out.iter().any(|f| f.may_name(n))) {
        drop((old, new));
        return compute_in(store, root, &SelectOptions { whole_program: true, ..opts.clone() });
    }
    if let Some(class) = &opts.class {
        let hierarchy = retest_select::hierarchy::Hierarchy::new(&old);
        let Some(procedures) = retest_select::frames::class_procedures(&hierarchy, &old, class) else {
            let known = hierarchy.class_names();
            return Err(Error::usage(format!("no class `{class}` in the baseline's code")).hint(if known.is_empty() {
                "--class selects for a C++ class; the baseline has none".to_string()
            } else {
                format!("classes: {}", known.join(", "))
            }));
        };
        let outside = retest_select::frames::restrict_to(&mut outcome, &procedures);
        if outside > 0 {
            warnings.push(format!(
                "class-level selection of `{class}` (003 §4): {outside} changed edge(s) outside `{class}` and its bases are not considered"
            ));
        }
    }
    // changes the tester set aside (003 §5.5, §6.4), each said
    let skip_ctor_op = opts.skip_constructors_and_operators || scope.skip_constructor_and_operator_changes;
    if skip_ctor_op || !scope.not_under_test.is_empty() {
        use retest_select::scope::{Aside, is_constructor_or_operator, set_aside};
        let hierarchy = retest_select::hierarchy::Hierarchy::new(&old);
        let aside = |name: &str, key: &str| {
            if scope.not_under_test(name) || scope.not_under_test(key) {
                Some(Aside::NotUnderTest)
            } else if skip_ctor_op && is_constructor_or_operator(&hierarchy, name) {
                Some(Aside::ConstructorOrOperator)
            } else {
                None
            }
        };
        for (d, why) in set_aside(&mut outcome, &old, &aside) {
            let why = match why {
                Aside::NotUnderTest => "driver, setup or oracle code (`not_under_test` in retest.toml)",
                Aside::ConstructorOrOperator => "a constructor or operator (changes there are set aside)",
            };
            warnings.push(format!(
                "set aside, selects no test: {} — in {}, {why}",
                d.reason,
                old.procedure(d.procedure).name
            ));
        }
    }
    let dangerous = match opts.algorithm {
        Algorithm::Dejavu | Algorithm::Partial | Algorithm::Full | Algorithm::Valid | Algorithm::Path => {
            outcome.dangerous.clone()
        }
        Algorithm::Function => coarsen(&old, &new, &outcome, Granularity::Function),
        Algorithm::File => coarsen(&old, &new, &outcome, Granularity::File),
    };
    // coarsening reads every declaration, the system headers' included
    damaged(&old, &new)?;

    // TestsOnEdge of the baseline matrix, read block by block as the edges are asked for
    let mut on_edge = OnEdge::new(baseline, &old_units);
    let by_test = tests_for(&old, &dangerous, &mut |ui, e| on_edge.tests(store, ui, e));
    on_edge.check()?;
    // Ball's algorithms re-decide DejaVu's tests (they select subsets of them)
    let refine_started = Instant::now();
    let refinement = match opts.algorithm {
        Algorithm::Path => {
            let paths = RecordedPaths::load(store, baseline, &old_units, &dangerous, &mut warnings)?;
            Some(refine_with_paths(
                &old,
                &new,
                &outcome,
                &by_test,
                &mut |ui, e| on_edge.tests(store, ui, e),
                &mut |o, t| paths.of(o, t),
            ))
        }
        a => a.ball().map(|alg| refine(&old, &new, &outcome, &by_test, alg, &mut |ui, e| on_edge.tests(store, ui, e))),
    };
    on_edge.check()?;
    let refine_elapsed = refinement.as_ref().map(|_| refine_started.elapsed());

    // the suite: discovered tests if a source is available, else the matrix's
    // and the tests of the baseline's suite that have no record
    let (matrix, recorded_deps, missing) = match matrix_read {
        Some(read) => read,
        None => store.matrix_for_selection(baseline).or_fail()?,
    };
    let missing = missing.unwrap_or_default();
    let discovered = match discovery {
        Discovery::Listed(listed) => listed,
        Discovery::Listing(t) => t.join().unwrap_or_else(|_| Err(Error::new("listing the tests failed unexpectedly"))),
    };
    let mut listing = None;
    let mut specs: Option<Vec<TestSpec>> = match discovered {
        Ok((t, listed)) => {
            listing = listed.map(|l| l.to_string());
            Some(t)
        }
        Err(f) => {
            warnings.push(format!(
                "the tests cannot be listed ({}): their definitions are not compared, and new or removed tests not seen",
                f.what
            ));
            None
        }
    };
    // the names move to the suite: the selection compares the rest of each spec
    let suite: Vec<String> = match &mut specs {
        Some(t) => t.iter_mut().map(|t| std::mem::take(&mut t.name)).collect(),
        None => matrix.iter().map(|m| m.name.clone()).chain(missing.iter().map(|t| t.name.clone())).collect(),
    };
    let mut commands: BTreeMap<String, String> = BTreeMap::new();
    let keys: Vec<&str> = match &specs {
        Some(t) => t.iter().map(|t| t.key.as_str()).collect(),
        None => matrix.iter().map(|m| m.key.as_str()).chain(missing.iter().map(|t| t.key.as_str())).collect(),
    };
    // an incomplete baseline: tests of its suite no run has recorded (a
    // shard not run, not merged, or stopped) — their coverage is unknown
    let unrecorded: std::collections::HashSet<&str> = missing.iter().map(|t| t.key.as_str()).collect();
    let incomplete: Vec<String> =
        suite.iter().zip(&keys).filter(|(_, k)| unrecorded.contains(*k)).map(|(n, _)| n.clone()).collect();
    if !incomplete.is_empty() {
        let first: Vec<&str> = incomplete.iter().take(5).map(String::as_str).collect();
        let more = if incomplete.len() > 5 { format!(", and {} more", incomplete.len() - 5) } else { String::new() };
        warnings.push(format!(
            "the baseline (snapshot {}) is incomplete: {} of the suite's tests have no record yet ({}{more}) — a shard has not run, was stopped, or was not merged; they are selected",
            baseline.0,
            incomplete.len(),
            first.join(", ")
        ));
    }
    let rows = matrix_rows(&keys, &matrix.iter().map(|m| m.key.as_str()).collect::<Vec<_>>());
    // the matrix's tests the suite still has (the others were removed)
    let mut listed = vec![false; matrix.len()];
    let settings = crate::deps::settings(&opts.source, root, store)?;
    if !settings.track {
        warnings.push(
            "file tracking is off (`track = false` in retest.toml): only declared inputs are compared, a change to any other file a test reads selects nothing"
                .to_string(),
        );
    }
    let file_changes =
        crate::deps::FileChanges::check(store, root, baseline, recorded_deps.iter().flatten(), &settings)?;
    let mut other_kinds: HashMap<String, &'static str> = HashMap::new();
    let mut file_deps: Vec<Option<u64>> = vec![None; suite.len()];
    let mut selected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut reasons: BTreeMap<String, Vec<Why>> = BTreeMap::new();
    let mut eliminated: BTreeMap<String, Vec<Elimination>> = BTreeMap::new();
    // a unit with a syntax error outside its functions that changed: code may be hidden
    let old_hash: HashMap<&str, [u8; 16]> = old_units.iter().map(|u| (u.key.as_str(), u.src_hash)).collect();
    let hidden: Vec<String> = new_units
        .iter()
        .filter(|u| u.unit.unattributed_error.is_some() && old_hash.get(u.key.as_str()) != Some(&u.src_hash))
        .map(|u| {
            let p = u.unit.unattributed_error.as_ref().unwrap();
            let at = p.span.map(|s| format!("{}:{}", u.unit.file_path(&s), s.line)).unwrap_or_else(|| u.key.clone());
            format!("{at}: {} (code there is not analysed, so every test is selected)", p.message)
        })
        .collect();
    // a broken unit is worth a warning whether or not it changed
    for (at, message) in &unattributed {
        warnings.push(format!(
            "{at}: {message} — code there lies in no function's CFG; any change to this unit selects every test"
        ));
    }
    // tests the audit found to run differently on the same code: their
    // record is one path of several, so any change that can change some
    // test's behaviour selects them
    let unsteady = crate::steady::flagged(store)?;

    let may_change_behaviour = !dangerous.is_empty() || !file_changes.is_empty() || !hidden.is_empty();
    let mut dangerous_text: HashMap<usize, String> = HashMap::new();
    // per test with a record, its row of the matrix and what changed about
    // it besides its code (its definition, the files it read): the part of
    // the work that grows with the suite, on every core from thousands of tests
    type Beyond = Vec<(String, &'static str)>;
    // the working directory as definitions hold it, per directory; `pinned`
    // ties the directory's borrow to the definitions', so that one closure
    // serves both the loop below and rayon's `map_init`
    type Cwd<'a> = Option<(&'a std::ffi::OsStr, String)>;
    fn pinned<'a, F: Fn(&mut Cwd<'a>, usize) -> Option<(usize, Beyond)>>(f: F) -> F {
        f
    }
    let beyond_one = pinned(|cwd, i| {
        let j = rows[i]?;
        let deps = recorded_deps[j].as_ref();
        let mut beyond = Vec::new();
        if let Some(spec) = specs.as_ref().map(|s| &s[i]) {
            if cwd.as_ref().is_none_or(|(dir, _)| *dir != spec.cwd.as_os_str()) {
                *cwd = Some((spec.cwd.as_os_str(), spec.cwd_text(root)));
            }
            let text = &cwd.as_ref().expect("set above").1;
            for r in crate::deps::definition_reasons_in(spec, root, text, deps) {
                let kind = if r.starts_with("definition changed") { "definition" } else { "dependencies" };
                beyond.push((r, kind));
            }
        }
        if let Some(d) = deps {
            beyond.extend(file_changes.reasons(&d.states).into_iter().map(|r| (r, "file")));
        }
        Some((j, beyond))
    });
    let beyond_code: Vec<Option<(usize, Beyond)>> = if suite.len() >= crate::PARALLEL_FROM {
        (0..suite.len()).into_par_iter().map_init(|| None, |cwd, i| beyond_one(cwd, i)).collect()
    } else {
        let mut cwd = None;
        (0..suite.len()).map(|i| beyond_one(&mut cwd, i)).collect()
    };
    for (i, name) in suite.iter().enumerate() {
        let mut why: Vec<String> = Vec::new();
        let mut gone: Option<&Vec<Elimination>> = None;
        let mut beyond: Vec<(String, &'static str)> = Vec::new();
        match beyond_code[i].as_ref().map(|(j, b)| {
            listed[*j] = true;
            (&matrix[*j], recorded_deps[*j].as_ref(), b)
        }) {
            None if unrecorded.contains(keys[i]) => beyond.push((
                format!(
                    "coverage unknown: the baseline (snapshot {}) is incomplete, and no run has recorded this test on it yet (its shard has not run, was stopped, or was not merged)",
                    baseline.0
                ),
                "incomplete-baseline",
            )),
            None => beyond.push(("new test: nothing is recorded for it in the baseline".to_string(), "new-test")),
            Some((m, deps, b)) => {
                file_deps[i] = deps.map(|d| d.states.len());
                beyond.extend(b.iter().cloned());
                if let CoverageState::Unknown(r) = &m.state {
                    why.push(format!("coverage unknown: {r}"));
                }
                if may_change_behaviour && let Some(w) = unsteady.get(keys[i]) {
                    beyond.push((
                        format!("its path varies between runs of the same code, so its record cannot rule the change out: {w}"),
                        "unsteady",
                    ));
                }
                let id = m.test.0 as u32;
                if let Some(ds) = by_test.get(&id) {
                    let whys: Vec<Why> = match refinement.as_ref().and_then(|r| r.verdicts.get(&id)) {
                        // one line per distinct reason: coarse algorithms give every edge
                        // of a function, or of every function of a unit, the same one
                        // (formatting and printing each would dominate)
                        None => {
                            let mut w: Vec<Why> = Vec::new();
                            for &i in ds {
                                let d = &dangerous[i];
                                if !w.iter().rev().any(|l| l.reason == d.reason) {
                                    let reason = Why {
                                        procedure: d.procedure,
                                        edge: d.edge,
                                        via: None,
                                        reason: d.reason.clone(),
                                    };
                                    // many tests share a dangerous edge: its text is formatted once
                                    why.push(
                                        dangerous_text
                                            .entry(i)
                                            .or_insert_with(|| why_text(opts.algorithm, &old_units, &reason))
                                            .clone(),
                                    );
                                    w.push(reason);
                                }
                            }
                            w
                        }
                        Some(Verdict::Selected(w)) => {
                            why.extend(w.iter().map(Why::to_string));
                            w.clone()
                        }
                        Some(Verdict::Eliminated(e)) => {
                            gone = Some(e);
                            Vec::new()
                        }
                    };
                    if !whys.is_empty() {
                        reasons.insert(name.clone(), whys);
                    }
                }
            }
        }
        for (r, kind) in beyond {
            other_kinds.insert(r.clone(), kind);
            why.push(r);
        }
        why.extend(hidden.iter().cloned());
        if !why.is_empty() {
            why.dedup();
            if let Some(s) = &specs {
                commands.insert(name.clone(), s[i].cmd.clone());
            }
            selected.insert(name.clone(), why);
        } else if let Some(e) = gone {
            eliminated.insert(name.clone(), e.clone());
        }
    }
    let removed: Vec<String> = match &specs {
        Some(_) => matrix.iter().zip(&listed).filter(|(_, l)| !**l).map(|(m, _)| m.name.clone()).collect(),
        None => Vec::new(),
    };
    let elapsed = started.elapsed();

    drop(old);
    drop(new);
    Ok(Selection {
        _held: Held { _specs: specs, _matrix: matrix, _deps: recorded_deps },
        algorithm: opts.algorithm,
        baseline,
        new_snapshot,
        suite,
        commands,
        selected,
        other_kinds,
        removed,
        incomplete,
        file_deps,
        files_changed: file_changes.len(),
        reasons,
        eliminated,
        pairs_analysed: refinement.map(|r| r.pairs_analysed),
        refine_elapsed,
        outcome,
        dangerous,
        elapsed,
        warnings,
        units: new_units.len() + left_out.len(),
        listing,
        old_units,
        new_units,
        elsewhere,
    })
}

/// `^(a|b)$` with regex metacharacters escaped; matches nothing when empty.
pub fn ctest_regex<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let esc: Vec<String> = names
        .map(|n| n.chars().flat_map(|c| if "\\^$.|?*+()[]{}".contains(c) { vec!['\\', c] } else { vec![c] }).collect())
        .collect();
    if esc.is_empty() { "^$".to_string() } else { format!("^({})$", esc.join("|")) }
}

impl Selection {
    /// The selected GoogleTest cases as their binaries take them: per binary
    /// (in name order), the `--gtest_filter` value that runs exactly its
    /// selected cases. A test is a case when its command runs a program with
    /// `--gtest_filter=CASE` (`[[gtest]]`, CTest's `gtest_discover_tests`).
    /// Fails with the names of the selected tests that are not, or whose
    /// commands are not known: leaving them out would drop them silently.
    pub fn gtest_filters(&self) -> Result<Vec<(String, String)>, Vec<String>> {
        let mut by_binary: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut other = Vec::new();
        for name in self.selected.keys() {
            let case = self.commands.get(name).and_then(|cmd| {
                let argv = retest_lang_c::driver::split_command(cmd);
                let filter = argv.iter().skip(1).find_map(|a| a.strip_prefix("--gtest_filter="))?;
                // one case, not a pattern: `:` separates patterns, `*` and `?` match
                (!filter.is_empty() && !filter.contains([':', '*', '?']) && !filter.starts_with('-'))
                    .then(|| (argv[0].clone(), filter.to_string()))
            });
            match case {
                Some((binary, case)) => by_binary.entry(binary).or_default().push(case),
                None => other.push(name.clone()),
            }
        }
        if !other.is_empty() {
            return Err(other);
        }
        Ok(by_binary.into_iter().map(|(b, cases)| (b, cases.join(":"))).collect())
    }
}

/// `retest.selection/1`, the selection as `retest select --format json` prints it.
#[derive(Serialize)]
pub struct JsonSelection<'a> {
    schema: &'static str,
    algorithm: String,
    baseline_snapshot: i64,
    new_snapshot: Option<i64>,
    tests_total: usize,
    tests_selected: usize,
    analysis_seconds: f64,
    selected: Vec<JsonTest<'a>>,
    /// Tests DejaVu selects that this algorithm eliminates, with why.
    eliminated: Vec<JsonEliminated<'a>>,
    /// The units of the new version, and how many of them the selection
    /// decoded and compared: those the change touched, or all of them.
    units: usize,
    units_compared: usize,
    dangerous_edges: usize,
    /// The dangerous edges as the matrix numbers them: per baseline unit key, the
    /// condition-level edges (unit-wide ids) that map onto a dangerous edge. A test
    /// with known coverage is selected for them exactly when it covers one of them.
    dangerous_condition_edges: BTreeMap<String, Vec<u32>>,
    multiply_visited_nodes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs_analysed: Option<usize>,
    /// Tests of the baseline that are no longer in the suite.
    removed: &'a [String],
    /// Tests of the baseline's suite it has no record of (an incomplete
    /// baseline); they are selected, with kind `incomplete-baseline`.
    baseline_missing: &'a [String],
    /// Recorded file states (content, absence, listing) that no longer hold.
    files_changed: usize,
    warnings: &'a [String],
}

#[derive(Serialize)]
struct JsonTest<'a> {
    name: &'a str,
    reasons: Vec<JsonReason>,
}

#[derive(Serialize)]
struct JsonEliminated<'a> {
    name: &'a str,
    why: Vec<String>,
}

#[derive(Serialize)]
struct JsonReason {
    text: String,
    kind: String,
    old: Option<JsonAt>,
    new: Option<JsonAt>,
    /// The transition partial-reachability holds responsible when it is not the change itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<JsonBranch>,
}

#[derive(Serialize)]
struct JsonAt {
    procedure: String,
    file: String,
    line: u32,
    text: String,
}

#[derive(Serialize)]
struct JsonBranch {
    #[serde(flatten)]
    at: JsonAt,
    label: String,
}

fn json_at(a: &Option<retest_select::At>) -> Option<JsonAt> {
    a.as_ref().map(|a| JsonAt {
        procedure: a.procedure.clone(),
        file: a.file.clone(),
        line: a.line,
        text: a.text.clone(),
    })
}

fn kind_name(k: &retest_select::ReasonKind) -> &'static str {
    use retest_select::ReasonKind::*;
    match k {
        Modified => "modified",
        Affected { .. } => "declaration",
        CallTargets { .. } => "call-targets",
        Dispatch { .. } => "dispatch",
        IndirectTargets { .. } => "indirect-targets",
        Signature => "signature",
        Flags { .. } => "flags",
        Unanalysable(_) => "unanalysable",
        Removed => "removed",
        CaseAdded(_) => "case-added",
        CaseRemoved(_) => "case-removed",
        Structure => "structure",
    }
}

impl Selection {
    /// The selection as `retest.selection/1` (docs/json.md).
    pub fn to_json(&self) -> JsonSelection<'_> {
        let sel = self;
        let selected = sel
            .selected
            .iter()
            .map(|(name, why)| {
                let structured = sel.reasons.get(name);
                let mut reasons: Vec<JsonReason> = structured
                    .map(|rs| {
                        rs.iter()
                            .map(|r| JsonReason {
                                text: why_text(sel.algorithm, &sel.old_units, r),
                                kind: kind_name(&r.reason.kind).to_string(),
                                old: json_at(&r.reason.old),
                                new: json_at(&r.reason.new),
                                via: r.via.as_ref().map(|b| JsonBranch {
                                    at: json_at(&Some(b.at.clone())).expect("present"),
                                    label: b.label.clone(),
                                }),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                // reasons that are not dangerous edges (coverage unknown, hidden
                // code, definitions, files)
                for t in why {
                    if !reasons.iter().any(|r| &r.text == t) {
                        reasons.push(JsonReason {
                            text: t.clone(),
                            kind: sel.other_kinds.get(t).copied().unwrap_or("coverage").to_string(),
                            old: None,
                            new: None,
                            via: None,
                        });
                    }
                }
                JsonTest { name, reasons }
            })
            .collect();
        let eliminated = sel
            .eliminated
            .iter()
            .map(|(name, e)| JsonEliminated { name, why: e.iter().map(|x| x.to_string()).collect() })
            .collect();
        JsonSelection {
            schema: "retest.selection/1",
            algorithm: sel.algorithm.name().to_string(),
            baseline_snapshot: sel.baseline.0,
            new_snapshot: sel.new_snapshot.map(|s| s.0),
            tests_total: sel.suite.len(),
            tests_selected: sel.selected.len(),
            analysis_seconds: sel.elapsed.as_secs_f64(),
            selected,
            eliminated,
            units: sel.units,
            units_compared: sel.new_units.len(),
            dangerous_edges: sel.dangerous.len(),
            dangerous_condition_edges: {
                let mut m: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
                let mut bases: HashMap<usize, Vec<u32>> = HashMap::new();
                for d in &sel.dangerous {
                    let u = &sel.old_units[d.procedure.unit];
                    let base = bases.entry(d.procedure.unit).or_insert_with(|| u.edge_bases())[d.procedure.proc];
                    let proc = u.procedure(d.procedure.proc);
                    m.entry(u.key.clone()).or_default().extend(proc.map.preimage(d.edge).map(|e| base + e.0));
                }
                m.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect()
            },
            multiply_visited_nodes: sel.outcome.multiply_visited.values().map(|s| s.len()).sum(),
            pairs_analysed: sel.pairs_analysed,
            removed: &sel.removed,
            baseline_missing: &sel.incomplete,
            files_changed: sel.files_changed,
            warnings: &sel.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Each listed test's matrix row is the row of its key, whatever
        /// the suite's order against the matrix's: tests kept in order,
        /// moved, added and removed (`matrix_rows` against a map).
        #[test]
        fn a_listed_test_finds_the_row_of_its_key(
            n in 0usize..60,
            mut order in proptest::collection::vec(0usize..80, 0..80),
            sorted in any::<bool>(),
        ) {
            if sorted {
                order.sort_unstable();
            }
            let matrix: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
            let mut seen = std::collections::HashSet::new();
            let keys: Vec<String> = order.iter().filter(|&&i| seen.insert(i)).map(|i| format!("t{i}")).collect();
            let (m, k): (Vec<&str>, Vec<&str>) =
                (matrix.iter().map(String::as_str).collect(), keys.iter().map(String::as_str).collect());
            let rows = super::matrix_rows(&k, &m);
            prop_assert_eq!(rows.len(), k.len());
            for (key, row) in k.iter().zip(&rows) {
                prop_assert_eq!(*row, m.iter().position(|x| x == key));
            }
        }
    }

    /// A suite in the matrix's order is found row by row.
    #[test]
    fn a_suite_in_the_matrix_order_is_found_in_order() {
        let m = ["a", "b", "c", "d"];
        assert_eq!(super::matrix_rows(&["a", "b", "x", "c", "d"], &m), [Some(0), Some(1), None, Some(2), Some(3)]);
        assert_eq!(super::matrix_rows(&["d", "a", "b"], &m), [Some(3), Some(0), Some(1)]);
    }
}
