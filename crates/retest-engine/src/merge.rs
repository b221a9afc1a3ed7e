//! `retest merge`: combines the stores CI workers recorded their shards into
//! (`retest run --partition K/N`, each into its own copy of the build's
//! store) into one store — a file, or a PostgreSQL database — whose
//! baseline holds every shard's tests.
//!
//! Shards are combined only when they ran on one build. A build is
//! identified by its *content*, not by store-local ids: the snapshot a shard
//! recorded into (its baseline) is the set of (unit key, content hash of the
//! unit's preprocessed text, hash of its instrumented build, identity flags)
//! — [`BuildIdentity`]. Two workers that copied one build's store have the
//! same one; so do two that built the same sources with the same compiler
//! and flags. Anything else is refused, naming the units that differ.
//!
//! Each shard's matrix rows are copied into the target's snapshot of the
//! same build — tests matched by key, units by content hash, file states by
//! (path, kind, hash), the results of the runs that recorded them with
//! them — replacing the rows the target held for those tests, each shard's
//! rows in one transaction (after the tests, file states and runs they
//! refer to: an interruption leaves at most unreferenced runs); the
//! snapshot then becomes the baseline, with the
//! union of the shards' suites as what it is to cover. Every input is
//! checked before anything is written, and inputs are opened read-only.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use retest_store::{
    ImportedResult, MatrixRow, RunId, SnapshotId, SnapshotUnit, SourceState, Store, StoreError, TestDeps, TestId,
    TestName, UnitId,
};
use roaring::RoaringBitmap;

use crate::error::{Error, OrFail};

/// What identifies a build across stores: per unit key, the unit's content
/// hash, its instrumented build's hash (hex, empty when not instrumented)
/// and its identity flags.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BuildIdentity {
    pub units: BTreeMap<String, (String, String, String)>,
}

impl BuildIdentity {
    pub fn of(store: &Store, snapshot: SnapshotId) -> Result<BuildIdentity, Error> {
        let builds: HashMap<String, String> = store
            .snapshot_build_hashes(snapshot)
            .or_fail()?
            .into_iter()
            .map(|(h, (key, _))| (key, retest_abi::hex(h.as_bytes())))
            .collect();
        let units = store
            .snapshot_units(snapshot)
            .or_fail()?
            .into_iter()
            .map(|u| {
                let build = builds.get(&u.key).cloned().unwrap_or_default();
                (u.key, (retest_abi::hex(&u.src_hash), build, u.flags))
            })
            .collect();
        Ok(BuildIdentity { units })
    }

    /// A short name of the build (for messages): the first 12 hex digits of
    /// XXH3-128 over its units.
    pub fn short(&self) -> String {
        let mut text = String::new();
        for (k, (h, b, f)) in &self.units {
            text.push_str(&format!("{k}\t{h}\t{b}\t{f}\n"));
        }
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()))[..12].to_string()
    }

    /// The unit keys whose content, build or flags differ, or that only one has.
    pub fn differences(&self, other: &BuildIdentity) -> Vec<String> {
        let keys: BTreeSet<&String> = self.units.keys().chain(other.units.keys()).collect();
        keys.into_iter().filter(|k| self.units.get(*k) != other.units.get(*k)).cloned().collect()
    }
}

/// What `retest merge` did.
#[derive(Debug)]
pub struct MergeReport {
    /// The store merged into.
    pub into: PathBuf,
    /// Whether it was created (from a copy of the first shard).
    pub created: bool,
    /// The snapshot of the build the shards ran on, in the target.
    pub snapshot: SnapshotId,
    /// The build's short name ([`BuildIdentity::short`]).
    pub build: String,
    /// Per input: its path and how many tests it recorded.
    pub shards: Vec<(PathBuf, usize)>,
    /// Tests more than one input recorded (the last input's record is kept).
    pub overlapping: Vec<String>,
    /// Tests of the suite that still have no record, by key.
    pub missing: Vec<String>,
    /// Tests of the suite.
    pub suite: usize,
    /// Whether the snapshot became the baseline (not when the target's
    /// baseline is a newer build).
    pub made_baseline: bool,
}

/// One input, checked: its store, the snapshot it recorded into, its build.
struct Shard {
    path: PathBuf,
    store: Store,
    snapshot: SnapshotId,
    identity: BuildIdentity,
}

fn open_shard(path: &Path) -> Result<Shard, Error> {
    let store = Store::open_file_read_only(path).map_err(|e| match e {
        StoreError::Io { .. } => {
            Error::usage(format!("{}: no such file", path.display())).hint("give the store files the shards wrote")
        }
        e @ (StoreError::TooNew { .. } | StoreError::TooOld { .. }) => {
            Error::new(e).hint("merge stores written by the retest that merges them")
        }
        e => Error::new(format!("{} is not a readable retest store: {e}", path.display()))
            .hint("give the `.retest/store.db` files the shards wrote"),
    })?;
    let snapshot = store.baseline().or_fail()?.ok_or_else(|| {
        Error::new(format!("{} holds no recorded run (it has no baseline)", path.display()))
            .hint("merge the stores after `retest run --partition K/N` recorded into them")
    })?;
    let identity = BuildIdentity::of(&store, snapshot)?;
    Ok(Shard { path: path.to_path_buf(), store, snapshot, identity })
}

/// Why two builds are not one, in one line.
fn different_builds(a: &Path, a_id: &BuildIdentity, b: &Path, b_id: &BuildIdentity) -> Error {
    let diff = a_id.differences(b_id);
    let shown: Vec<&str> = diff.iter().take(3).map(String::as_str).collect();
    let more = if diff.len() > 3 { format!(" and {} more", diff.len() - 3) } else { String::new() };
    Error::new(format!(
        "{} was recorded on build {}, {} on build {}: {} of their units differ ({}{more})",
        a.display(),
        a_id.short(),
        b.display(),
        b_id.short(),
        diff.len(),
        shown.join(", ")
    ))
    .hint("merge only shards that ran on one build: build once and give every worker a copy of that store")
}

/// The inputs, each named once and none of them `target` (a file merged
/// into), opened and checked to be of one build: nothing is written before.
fn open_shards(inputs: &[PathBuf], target: Option<&Path>) -> Result<Vec<Shard>, Error> {
    if inputs.is_empty() {
        return Err(Error::usage("nothing to merge").hint("name the shards' store files: `retest merge A.db B.db …`"));
    }
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let target_path = target.map(canon);
    let mut seen = BTreeSet::new();
    for p in inputs {
        if Some(canon(p)) == target_path {
            return Err(Error::usage(format!("{} is the store merged into", p.display()))
                .hint("name the shards' stores, and the store to merge into with --into"));
        }
        if !seen.insert(canon(p)) {
            return Err(Error::usage(format!("{} is named twice", p.display())).hint("name each shard's store once"));
        }
    }
    let shards: Vec<Shard> = inputs.iter().map(|p| open_shard(p)).collect::<Result<_, _>>()?;
    for s in &shards[1..] {
        if s.identity != shards[0].identity {
            return Err(different_builds(&shards[0].path, &shards[0].identity, &s.path, &s.identity));
        }
    }
    Ok(shards)
}

/// Merges the shard stores `inputs` into the store file `into` (created
/// from a copy of the first input when it does not exist).
pub fn merge(into: &Path, inputs: &[PathBuf]) -> Result<MergeReport, Error> {
    // every input checked before anything is written
    let shards = open_shards(inputs, Some(into))?;
    let created = !into.exists();
    let (target, from) = if created {
        // the first shard, copied whole, is the target: its rows are merged already
        shards[0].store.copy_to(into).or_fail_hint("give --into a path in a directory you can write to")?;
        (Store::open_file(into).or_fail()?, 1)
    } else {
        let t = Store::open_file(into).map_err(|e| match e {
            e @ StoreError::Corrupt { .. } => {
                Error::new(e).hint("give --into a retest store, or a path that does not exist yet")
            }
            e => Error::new(e),
        })?;
        (t, 0)
    };
    merge_shards(target, into.to_path_buf(), created, from, &shards, false)
}

/// Merges the shard stores `inputs` into an open store — a PostgreSQL
/// database (`retest merge … --into postgresql://…`): the fan-in step of
/// workers that each recorded into a file. A store that does not hold the
/// shards' build gets it from the first shard (its units, builds and the
/// files they were analysed from: [`Store::import_snapshot`]), as a file
/// merged into is made from a copy of it.
pub fn merge_into(target: Store, inputs: &[PathBuf]) -> Result<MergeReport, Error> {
    let shards = open_shards(inputs, None)?;
    let name = target.name().to_path_buf();
    merge_shards(target, name, false, 0, &shards, true)
}

/// A snapshot of `target` holding the build `shard` recorded on: its units,
/// their instrumented builds and the project files they were analysed
/// from, and the files the wrapper wrote.
fn import_build(target: &mut Store, shard: &Shard) -> Result<SnapshotId, Error> {
    let src = &shard.store;
    let sources = src.snapshot_sources(shard.snapshot).or_fail()?;
    let mut units = Vec::new();
    for su in src.snapshot_units(shard.snapshot).or_fail()? {
        let unit = src.unit(su.unit).or_fail()?;
        let id = target.put_unit(&su.src_hash, &unit).or_fail()?;
        let build = match su.build {
            Some(b) => {
                let info = src.build(b).or_fail()?;
                Some(target.put_build_with(&info.hash, id, info.cells, &info.plan, &info.recording).or_fail()?)
            }
            None => None,
        };
        let files: Vec<SourceState> = sources.iter().filter(|(k, _)| *k == su.key).map(|(_, s)| s.clone()).collect();
        if !files.is_empty() {
            target.record_unit_sources(id, &files).or_fail()?;
        }
        units.push(SnapshotUnit { unit: id, build, ..su });
    }
    let outputs = src.snapshot_outputs(shard.snapshot).or_fail()?;
    target.import_snapshot(&units, &outputs).or_fail()
}

fn merge_shards(
    mut target: Store,
    into: PathBuf,
    created: bool,
    from: usize,
    shards: &[Shard],
    import: bool,
) -> Result<MergeReport, Error> {
    // the target's snapshot of the same build, the newest one if several
    let mut snapshot = None;
    for s in target.snapshots().or_fail()?.into_iter().rev() {
        if BuildIdentity::of(&target, s.id)? == shards[0].identity {
            snapshot = Some(s.id);
            break;
        }
    }
    let snapshot = match snapshot {
        Some(s) => s,
        None if import => import_build(&mut target, &shards[0])?,
        None => {
            let newest = target.newest_snapshot().or_fail()?;
            let what = match newest {
                Some(n) => {
                    let id = BuildIdentity::of(&target, n.id)?;
                    return Err(different_builds(&shards[0].path, &shards[0].identity, &into, &id));
                }
                None => "holds no build",
            };
            return Err(Error::new(format!("{} {what}", into.display()))
                .hint("merge into the store of the build the shards ran on, or into a new file"));
        }
    };
    // a newer build's baseline stays where it is
    let made_baseline = target.baseline().or_fail()?.is_none_or(|b| b <= snapshot);

    let mut suite_keys: BTreeSet<String> = BTreeSet::new();
    if let Some(bits) = target.suite(snapshot).or_fail()? {
        suite_keys
            .extend(target.tests().or_fail()?.into_iter().filter(|t| bits.contains(t.id.0 as u32)).map(|t| t.key));
    }
    let mut counts = Vec::new();
    let mut recorded_by: HashMap<String, usize> = HashMap::new();
    for (i, shard) in shards.iter().enumerate() {
        let n = shard.store.matrix_tests(shard.snapshot).or_fail()?.len();
        counts.push((shard.path.clone(), n));
        for m in shard.store.matrix_tests(shard.snapshot).or_fail()? {
            *recorded_by.entry(m.key).or_default() += 1;
        }
        if let Some(bits) = shard.store.suite(shard.snapshot).or_fail()? {
            suite_keys.extend(
                shard.store.tests().or_fail()?.into_iter().filter(|t| bits.contains(t.id.0 as u32)).map(|t| t.key),
            );
        }
        if i >= from {
            copy_rows(&mut target, snapshot, shard)?;
        }
    }
    // where the shards found their tests, when the target does not know
    // (a build's store: no run has remembered one)
    let source = crate::store::MetaKey::TestSource.name();
    if target.meta(source).or_fail()?.is_none()
        && let Some(v) = shards.iter().find_map(|s| s.store.meta(source).ok().flatten())
    {
        target.set_meta(source, &v).or_fail()?;
    }
    // the suite: the union of what every shard (and the target) was to cover
    let all = target.tests().or_fail()?;
    let by_key: HashMap<&str, TestId> = all.iter().map(|t| (t.key.as_str(), t.id)).collect();
    let suite: Vec<TestId> = suite_keys.iter().filter_map(|k| by_key.get(k.as_str()).copied()).collect();
    if made_baseline {
        target.advance_baseline_shard(snapshot, &[], &suite, None).or_fail()?;
    }
    let missing = match target.missing_tests(snapshot).or_fail()? {
        Some(m) => m.into_iter().map(|t| t.key).collect(),
        None => Vec::new(),
    };
    let mut overlapping: Vec<String> = recorded_by.into_iter().filter(|(_, n)| *n > 1).map(|(k, _)| k).collect();
    overlapping.sort();
    Ok(MergeReport {
        into,
        created,
        snapshot,
        build: shards[0].identity.short(),
        shards: counts,
        overlapping,
        missing,
        suite: suite.len(),
        made_baseline,
    })
}

/// Copies one shard's matrix rows (and what they refer to) into `snapshot`
/// of `target`, in one transaction for the rows.
fn copy_rows(target: &mut Store, snapshot: SnapshotId, shard: &Shard) -> Result<(), Error> {
    let src = &shard.store;
    let matrix = src.matrix_tests(shard.snapshot).or_fail()?;
    // tests, by key: every test the shard knows, in its order (its suite's
    // tests not recorded included), so the target numbers them alike
    let known = src.tests().or_fail()?;
    let names: Vec<TestName> =
        known.iter().map(|t| TestName { key: t.key.clone(), name: t.name.clone(), cmd: t.cmd.clone() }).collect();
    let ids = target.upsert_tests_named(&names).or_fail()?;
    let test_map: HashMap<TestId, TestId> = known.iter().map(|t| t.id).zip(ids).collect();
    // units, by content hash (the same build: the target has every one)
    let target_units: HashMap<[u8; 16], UnitId> =
        target.snapshot_units(snapshot).or_fail()?.into_iter().map(|u| (u.src_hash, u.unit)).collect();
    let unit_map: HashMap<UnitId, UnitId> = src
        .snapshot_units(shard.snapshot)
        .or_fail()?
        .into_iter()
        .filter_map(|u| target_units.get(&u.src_hash).map(|t| (u.unit, *t)))
        .collect();
    let unit = |u: UnitId| -> Result<UnitId, Error> {
        unit_map.get(&u).copied().ok_or_else(|| {
            Error::new(format!("{}: coverage of unit {} that its build does not hold", shard.path.display(), u.0))
                .hint("the shard's store is damaged; record that shard again")
        })
    };
    // file states, by (path, kind, hash)
    let mut deps = src.matrix_deps(shard.snapshot).or_fail()?;
    let wanted: RoaringBitmap = deps.values().fold(RoaringBitmap::new(), |acc, d| acc | &d.states);
    let states = src.dep_states(&wanted).or_fail()?;
    let order: Vec<u32> = states.keys().copied().collect();
    let list: Vec<retest_store::DepState> = order.iter().map(|i| states[i].clone()).collect();
    let new_ids = target.dep_state_ids(&list).or_fail()?;
    let state_map: HashMap<u32, u32> = order.into_iter().zip(new_ids).collect();
    // the runs that recorded the rows, with their results
    let mut runs: BTreeMap<RunId, Vec<&retest_store::MatrixTest>> = BTreeMap::new();
    for m in &matrix {
        runs.entry(m.run).or_default().push(m);
    }
    let mut run_map: HashMap<RunId, RunId> = HashMap::new();
    for (run, rows) in &runs {
        let info = src.run_info(*run).or_fail()?;
        let outcomes = src.run_results(*run).or_fail()?;
        let results: Vec<ImportedResult> = rows
            .iter()
            .filter_map(|m| {
                let o = outcomes.get(&m.test)?;
                Some(ImportedResult {
                    test: *test_map.get(&m.test)?,
                    outcome: o.clone(),
                    coverage: m.state.clone(),
                    stopped: m.stopped,
                })
            })
            .collect();
        run_map.insert(*run, target.import_run(snapshot, &info, &results).or_fail()?);
    }
    let mut out = Vec::with_capacity(matrix.len());
    for m in &matrix {
        let Some(&test) = test_map.get(&m.test) else { continue };
        let coverage = src
            .test_coverage(shard.snapshot, m.test)
            .or_fail()?
            .into_iter()
            .map(|(u, b)| Ok((unit(u)?, b)))
            .collect::<Result<Vec<_>, Error>>()?;
        let recorded = src
            .test_recorded(shard.snapshot, m.test)
            .or_fail()?
            .into_iter()
            .map(|(u, r)| Ok((unit(u)?, r)))
            .collect::<Result<Vec<_>, Error>>()?;
        let deps = deps
            .remove(&m.test)
            .map(|d| TestDeps { states: d.states.iter().filter_map(|s| state_map.get(&s).copied()).collect(), ..d });
        out.push(MatrixRow { test, run: run_map[&m.run], state: m.state.clone(), coverage, recorded, deps });
    }
    target.write_rows(snapshot, &out).or_fail()
}
