//! What a test depends on beyond the code: its definition and the files its
//! processes read. Recorded with every test a run executes
//! ([`Tracking::record`]), compared by `select` ([`FileChanges`],
//! [`definition_reason`]), and checked before a selection that the sources
//! on disk are still what the newest build analysed ([`stale_source`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use retest_run::deps;
use retest_run::discover::{Definition, DepSettings, TestSpec};
use retest_run::files::{self, Change, FileState, Filter, Kind, Paths, Stamp, StateCache};
use retest_run::listing::ListingCache;
use retest_store::{DepState, SnapshotId, SourceState, Store, TestDeps};
use roaring::RoaringBitmap;

use crate::error::{Error, OrFail};
use crate::run::TestSource;

/// The `retest.toml` whose `[dependencies]` table applies: the one the tests
/// come from, else the project root's.
pub fn settings(source: &TestSource, root: &Path, store: &Store) -> Result<DepSettings, Error> {
    match toml_file(source, root, store) {
        Some(f) => retest_run::discover::dependency_settings(&f).or_fail(),
        None => Ok(DepSettings::default()),
    }
}

/// The C compiler that builds the file tracker: `$RETEST_CC`, else `cc`.
fn tracker_compiler() -> String {
    std::env::var("RETEST_CC").ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "cc".into())
}

/// Where the CTest listing of `source` is kept, with the file tracker that
/// observes ctest making it; `None` when the tests do not come from CTest.
/// Without the tracker (`track = false`, or it cannot be built) the listing
/// is made anew every time.
pub fn listing_cache(source: &TestSource, root: &Path, store: &Store) -> Result<Option<ListingCache>, Error> {
    let source = source.resolve(store);
    if source.ctest.is_none() {
        return Ok(None);
    }
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let tracker = if settings(&source, root, store)?.track {
        deps::build_preload(&tracker_compiler(), &store_dir.join("lib")).ok()
    } else {
        None
    };
    Ok(Some(ListingCache { file: store_dir.join("ctest-listing"), tracker }))
}

/// The `[select]` table of the same `retest.toml`.
pub fn select_settings(
    source: &TestSource,
    root: &Path,
    store: &Store,
) -> Result<retest_run::discover::SelectSettings, Error> {
    match toml_file(source, root, store) {
        Some(f) => retest_run::discover::select_settings(&f).or_fail(),
        None => Ok(Default::default()),
    }
}

/// The `retest.toml` whose settings apply, if there is one.
fn toml_file(source: &TestSource, root: &Path, store: &Store) -> Option<PathBuf> {
    let source = source.resolve(store);
    let file = match &source.tests {
        Some(t) => Some(t.clone()),
        None if source.universe.is_none() && source.ctest.is_none() => {
            let here = PathBuf::from("retest.toml");
            Some(if here.is_file() { here } else { root.join("retest.toml") })
        }
        None => Some(root.join("retest.toml")),
    };
    file.filter(|f| f.is_file())
}

/// The paths `retest` keeps for itself, under the store.
fn own_prefixes(store: &Store) -> Vec<PathBuf> {
    let dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let canonical = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
    vec![dir, canonical]
}

/// The filter of dependencies: the system, the store, `extra` prefixes, the
/// wrapper's outputs for `snapshot`, the user's `ignore` globs.
fn filter(
    store: &Store,
    root: &Path,
    snapshot: SnapshotId,
    extra: &[PathBuf],
    settings: &DepSettings,
) -> Result<Filter, Error> {
    let paths = Paths::new(root);
    let outputs: Vec<PathBuf> = store.snapshot_outputs(snapshot).or_fail()?.iter().map(|p| paths.on_disk(p)).collect();
    let mut prefixes = own_prefixes(store);
    prefixes.extend(extra.iter().cloned());
    Filter::new(paths, prefixes, outputs, &settings.ignore)
        .map_err(|e| Error::new(format!("[dependencies] ignore: {e}")).hint("fix the glob in retest.toml"))
}

/// The file tracker of a run.
enum Tracker {
    /// Its shared object, loaded into every process of every test.
    On(PathBuf),
    /// `track = false`: only declared inputs count.
    Off,
    /// It could not be built: every test's dependencies are unknown.
    Broken(String),
}

/// Recording during a run.
pub struct Tracking {
    tracker: Tracker,
    filter: Filter,
    settings: DepSettings,
    root: PathBuf,
    cache: StateCache,
    ids: HashMap<FileState, u32>,
}

impl Tracking {
    /// Builds the tracker (once per compiler, into `<store>/lib`) for a run of
    /// `snapshot`'s build whose trace directories live under `trace_root`.
    pub fn start(
        cx: &crate::Context,
        store: &Store,
        root: &Path,
        snapshot: SnapshotId,
        trace_root: &Path,
    ) -> Result<Tracking, Error> {
        let settings = settings(&TestSource::default(), root, store)?;
        let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
        let tracker = if !settings.track {
            Tracker::Off
        } else {
            match deps::build_preload(&tracker_compiler(), &store_dir.join("lib")) {
                Ok(lib) => Tracker::On(lib),
                Err(e) => {
                    cx.reporter.warn(&format!(
                        "{e}; the files the tests read are not recorded and every test will be selected"
                    ));
                    Tracker::Broken(e.to_string())
                }
            }
        };
        let filter = filter(store, root, snapshot, &[trace_root.to_path_buf()], &settings)?;
        Ok(Tracking {
            tracker,
            filter,
            settings,
            root: root.to_path_buf(),
            cache: StateCache::default(),
            ids: HashMap::new(),
        })
    }

    /// The shared object to load into the tests' processes.
    pub fn preload(&self) -> Option<PathBuf> {
        match &self.tracker {
            Tracker::On(lib) => Some(lib.clone()),
            _ => None,
        }
    }

    /// What `test` depended on, from its trace directory (read before it is
    /// removed): its definition, the states of the files its processes read,
    /// or why they are unknown — unless it declares its inputs.
    pub fn record(&mut self, store: &mut Store, test: &TestSpec, trace_dir: &Path) -> Result<TestDeps, Error> {
        let mut declared: Vec<PathBuf> = test.inputs.clone();
        declared.extend(self.settings.declared_for(&test.name));
        let (observed, mut unknown) = match &self.tracker {
            Tracker::Off => (deps::Observed::default(), None),
            Tracker::Broken(e) => (deps::Observed::default(), Some(e.clone())),
            Tracker::On(_) => match deps::read_dir(trace_dir) {
                Ok(o) => {
                    let why = o.unknown_because_for(&test.cmd);
                    (o, why)
                }
                Err(e) => (deps::Observed::default(), Some(format!("the file tracker's logs cannot be read: {e}"))),
            },
        };
        if !declared.is_empty() {
            unknown = None;
        }
        let mut inputs = declared;
        inputs.extend(self.settings.inputs.iter().cloned());
        let states = files::states(&observed.dependencies(), &inputs, &self.filter, &mut self.cache);
        let fresh: Vec<&FileState> = states.iter().filter(|s| !self.ids.contains_key(*s)).collect();
        if !fresh.is_empty() {
            let stored: Vec<DepState> = fresh.iter().map(|s| to_store(s)).collect();
            let ids = store.dep_state_ids(&stored).or_fail()?;
            for (s, id) in fresh.into_iter().zip(ids) {
                self.ids.insert(s.clone(), id);
            }
        }
        let ids: RoaringBitmap = states.iter().map(|s| self.ids[s]).collect();
        Ok(TestDeps { definition: test.definition(&self.root).to_json(), states: ids, unknown })
    }
}

fn to_store(s: &FileState) -> DepState {
    DepState { path: s.path.clone(), kind: s.kind.code(), hash: s.hash, stamp: s.stamp.map(|t| t.to_bytes().to_vec()) }
}

fn from_store(d: &DepState) -> Option<FileState> {
    Some(FileState {
        path: d.path.clone(),
        kind: Kind::from_code(d.kind)?,
        hash: d.hash,
        stamp: d.stamp.as_deref().and_then(Stamp::from_bytes),
    })
}

/// The file states of a matrix that no longer hold, with what changed.
pub struct FileChanges {
    /// State id → reason (`file changed: inputs/d1.txt`).
    changed: HashMap<u32, String>,
    changed_ids: RoaringBitmap,
}

impl FileChanges {
    /// Checks every state the tests of `matrix` (their `deps`) depend on
    /// against the disk, leaving out what the user now ignores and the
    /// wrapper's outputs for `snapshot`.
    pub fn check<'d>(
        store: &Store,
        root: &Path,
        snapshot: SnapshotId,
        deps: impl Iterator<Item = &'d TestDeps>,
        settings: &DepSettings,
    ) -> Result<FileChanges, Error> {
        let filter = filter(store, root, snapshot, &[], settings)?;
        // the states every test depended on
        let all: RoaringBitmap = roaring::MultiOps::union(deps.map(|d| &d.states));
        let states = store.dep_states(&all).or_fail()?;
        let check = |(id, d): (&u32, &DepState)| {
            let Some(s) = from_store(d) else {
                return Some((*id, format!("a recorded dependency of an unknown kind ({}): {}", d.kind, d.path)));
            };
            filter.check(&s).map(|c: Change| (*id, c.describe(&s.path)))
        };
        // a lookup costs a microsecond or two: the thread pool pays off for thousands
        let changed: HashMap<u32, String> = if states.len() >= crate::PARALLEL_FROM {
            states.par_iter().filter_map(check).collect()
        } else {
            states.iter().filter_map(check).collect()
        };
        let changed_ids = changed.keys().copied().collect();
        Ok(FileChanges { changed, changed_ids })
    }

    /// Why a test with these recorded states must run again: one reason per
    /// changed file, sorted.
    pub fn reasons(&self, states: &RoaringBitmap) -> Vec<String> {
        if self.changed_ids.is_empty() {
            return Vec::new();
        }
        let hit = states & &self.changed_ids;
        let mut out: Vec<String> = hit.iter().map(|id| self.changed[&id].clone()).collect();
        out.sort();
        out
    }

    /// How many recorded states no longer hold.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        self.changed.len()
    }
}

/// Why a test must run again because of what was recorded about it besides
/// its code and files, if it must: its definition changed (old and new
/// shown), or its dependencies were not recorded or are unknown.
pub fn definition_reasons(test: &TestSpec, root: &Path, recorded: Option<&TestDeps>) -> Vec<String> {
    definition_reasons_in(test, root, &test.cwd_text(root), recorded)
}

/// [`definition_reasons`] with the test's working directory as
/// [`TestSpec::cwd_text`] gives it, which a caller checking many tests of
/// one directory works out once.
pub fn definition_reasons_in(test: &TestSpec, root: &Path, cwd: &str, recorded: Option<&TestDeps>) -> Vec<String> {
    let Some(d) = recorded else {
        return vec![
            "its definition and the files it reads were not recorded in the baseline (recorded by an older retest)"
                .to_string(),
        ];
    };
    let mut out = Vec::new();
    // the stored text is what `to_json` wrote: the same text, the same
    // definition (a selection compares every test's)
    let same = test.definition_json_in(cwd) == d.definition;
    match (!same).then(|| Definition::from_json(&d.definition)) {
        None => {}
        Some(None) => out.push("its recorded definition cannot be read".to_string()),
        Some(Some(old)) => {
            let changes = test.definition(root).changes_since(&old);
            if !changes.is_empty() {
                out.push(format!("definition changed: {}", changes.join("; ")));
            }
        }
    }
    if let Some(why) = &d.unknown {
        out.push(format!(
            "dependencies unknown: {why} — declare the test's inputs (`inputs` in retest.toml) to select it only when they change"
        ));
    }
    out
}

/// A project source that differs on disk from what a unit was analysed from
/// (ordered by path, then unit).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stale {
    /// The file, relative to the root.
    pub path: String,
    /// The source of the unit analysed with the file's earlier content.
    pub unit: String,
}

/// The first project source (relative to the root) that differs on disk
/// from what the units of `snapshot` were analysed from, with a unit that
/// was; sources no longer there are passed over.
pub fn stale_source(store: &Store, root: &Path, snapshot: SnapshotId) -> Result<Option<Stale>, Error> {
    let paths = Paths::new(root);
    // a unit whose source is gone (as `files::check` tells a removed file)
    // is carried into each new snapshot as it was and is never rebuilt
    // (below): the headers it was analysed with are not its sources any more,
    // and a change to them is no stale build
    let gone: std::collections::HashSet<String> = store
        .snapshot_units(snapshot)
        .or_fail()?
        .into_iter()
        .filter(|u| std::fs::metadata(paths.on_disk(&u.source)).is_err())
        .map(|u| u.key)
        .collect();
    let mut seen: std::collections::HashSet<(String, [u8; 16])> = Default::default();
    let sources: Vec<(String, FileState)> = store
        .snapshot_sources(snapshot)
        .or_fail()?
        .into_iter()
        .filter(|(key, _)| !gone.contains(key))
        .filter(|(_, s)| seen.insert((s.path.clone(), s.hash)))
        .map(|(key, s)| {
            let state = FileState {
                kind: Kind::Content,
                hash: s.hash,
                stamp: s.stamp.as_deref().and_then(Stamp::from_bytes),
                path: s.path,
            };
            (key, state)
        })
        .collect();
    // a source that is gone is not checked: build systems compile
    // throw-away sources under the root (CMake's compiler checks) and delete
    // them at once, and a unit whose source is gone is not rebuilt from it
    let stale_one = |(key, s): &(String, FileState)| match files::check(&paths, s) {
        None | Some(Change::Removed) => None,
        // a unit's key is its source and its output (`src@obj`)
        Some(_) => Some(Stale { path: s.path.clone(), unit: key.split('@').next().unwrap_or(key).to_string() }),
    };
    let mut stale: Vec<Stale> = if sources.len() >= crate::PARALLEL_FROM {
        sources.par_iter().filter_map(stale_one).collect()
    } else {
        sources.iter().filter_map(stale_one).collect()
    };
    stale.sort();
    Ok(stale.into_iter().next())
}

/// The states of the files a project source was analysed from, for the
/// store. Files outside the root and system headers are not the project's.
pub fn source_states(root: &Path, files: &[retest_graph::unit::SourceFile]) -> Vec<SourceState> {
    let paths = Paths::new(root);
    let mut cache = StateCache::default();
    let mut out: Vec<SourceState> = files
        .iter()
        .filter(|f| !f.system && !f.path.starts_with('<') && !f.path.starts_with('/'))
        .map(|f| cache.state(&paths, &root.join(&f.path), Kind::Content))
        .filter(|s| s.kind == Kind::Content)
        .map(|s| SourceState { path: s.path, hash: s.hash, stamp: s.stamp.map(|t| t.to_bytes().to_vec()) })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}
