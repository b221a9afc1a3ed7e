//! `retest-store`: persistence in one SQLite file, `.retest/store.db`.
//!
//! What is stored:
//! * **units** — analysed translation units ([`retest_graph::Unit`], binary-encoded), keyed by the
//!   content hash of their preprocessed text (`src_hash`), stored once however many
//!   snapshots contain them;
//! * **builds** — an instrumented variant of a unit, keyed by the hash the running
//!   program reports in its traces, with its probe plan and cell count;
//! * **snapshots** — versions of the program: the map from translation-unit key
//!   (source path, and output when one source is compiled twice) to unit, build
//!   and compile flags. A snapshot is *open* while the compiler wrapper adds units
//!   to it and *sealed* once tests have run on it;
//! * **tests** (by key: what identifies a test across versions of its source;
//!   with the name it is shown by), **runs** and per-run **results** (outcome
//!   and output hashes);
//! * the **coverage matrix** of a snapshot: per test, its state (`ok`, or
//!   `unknown` with a reason) and per unit a roaring bitmap of the covered
//!   condition-level edges; and the inverted **edge index** (per edge, a roaring
//!   bitmap of the tests that traversed it) that `TestsOnEdge` reads; with each
//!   test's row, its *definition* and the *file states* it depended on (ids
//!   into an interned table of (path, kind, hash) states), or why they are
//!   unknown. The index is
//!   derived: recording coverage deletes it for the units it touches; finishing a
//!   run, or writing a whole matrix, rebuilds it in the same transaction; reading
//!   a missing one builds it.
//!
//! Every write is one transaction; a killed process leaves every completed write
//! and nothing half-written. The schema carries a version; a store written by a
//! newer retest is refused rather than misread.

mod blob;
mod schema;
mod unitbin;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use roaring::RoaringBitmap;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use retest_graph::Unit;
pub use retest_graph::coverage::Probe;
pub use retest_graph::recording::{Recorded, UnitRecording};

/// A 128-bit content hash.
pub type Hash = [u8; 16];
pub use retest_abi::BuildHash;

/// Name of the store directory and of the database file in it.
pub const STORE_DIR: &str = ".retest";
pub const DB_FILE: &str = "store.db";

macro_rules! id_type {
    ($name:ident) => {
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub i64);
    };
}
id_type!(UnitId);
id_type!(BuildId);
id_type!(SnapshotId);
id_type!(TestId);
id_type!(RunId);

/// Errors from the store. Each says which store and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no retest store in {} or any parent directory", start.display())]
    NotFound { start: PathBuf },
    #[error("{} already holds a retest store", path.display())]
    Exists { path: PathBuf },
    #[error(
        "the store {} was written by a newer retest (schema version {found}; this retest reads up to {known}); upgrade retest",
        path.display()
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error(
        "the store {} was written by an older retest (schema version {found}; this retest reads {known}); open it once with this retest to upgrade it",
        path.display()
    )]
    TooOld { path: PathBuf, found: i64, known: i64 },
    #[error("the store {} is damaged: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("store {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} {id} does not exist in the store")]
    Missing { what: &'static str, id: i64 },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A database SQLite does not recognise, or finds malformed, is a damaged
/// store, not a failure of SQLite.
fn damaged(e: StoreError) -> StoreError {
    match e {
        StoreError::Sqlite { path, source }
            if matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
            ) =>
        {
            StoreError::Corrupt { path, detail: source.to_string() }
        }
        other => other,
    }
}

/// State of a snapshot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SnapshotState {
    /// Being built: the compiler wrapper adds units to it.
    Open,
    /// Tests have run on it; a new build opens a new snapshot.
    Sealed,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Snapshot {
    pub id: SnapshotId,
    pub created: String,
    pub state: SnapshotState,
    pub parent: Option<SnapshotId>,
}

/// One translation unit of a snapshot.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SnapshotUnit {
    /// Identity across snapshots: source path relative to the project root, plus
    /// `@output` when the same source is compiled more than once.
    pub key: String,
    pub source: String,
    pub unit: UnitId,
    pub src_hash: Hash,
    pub build: Option<BuildId>,
    /// Identity compile flags (JSON array); a change makes all the unit's functions changed.
    pub flags: String,
}

/// An instrumented variant of a unit.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BuildInfo {
    pub id: BuildId,
    pub hash: BuildHash,
    pub unit: UnitId,
    pub cells: u32,
    /// Probe plan: per procedure, per condition-level node.
    pub plan: Vec<Vec<Probe>>,
    /// What the build records beyond edges (empty: nothing).
    pub recording: UnitRecording,
}

/// A stored test.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TestInfo {
    pub id: TestId,
    /// What identifies the test across versions of its source.
    pub key: String,
    /// The name it was last shown by.
    pub name: String,
    pub cmd: String,
}

/// A test as registered by a run: its key, the name it is shown by, its command.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TestName {
    pub key: String,
    pub name: String,
    pub cmd: String,
}

/// One state of a file a test depended on: its path, the kind of
/// dependency, its hash, and an opaque stamp (`retest_run::files` gives them
/// meaning). States are stored once and referred to by id.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DepState {
    pub path: String,
    pub kind: u8,
    pub hash: Hash,
    pub stamp: Option<Vec<u8>>,
}

/// A project file a unit was analysed from, as the wrapper saw it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SourceState {
    /// Relative to the project root.
    pub path: String,
    pub hash: Hash,
    /// Opaque (`retest_run::files::Stamp`).
    pub stamp: Option<Vec<u8>>,
}

/// What a test depends on beyond the code, as recorded with its matrix row.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct TestDeps {
    /// The test's definition (JSON).
    pub definition: String,
    /// The [`DepState`] ids it depended on.
    pub states: RoaringBitmap,
    /// Why its dependencies are not known, if they are not.
    pub unknown: Option<String>,
}

/// Whether a test's coverage in a matrix can be used for selection.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CoverageState {
    Known,
    /// Always selected, with this reason.
    Unknown(String),
}

/// The outcome of one test in one run (what `retest audit` compares).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Outcome {
    /// `pass`, `fail`, `signal`, `timeout`, `error`, `stopped`.
    pub status: String,
    /// Exit code or signal number.
    pub code: Option<i32>,
    pub stdout_hash: Option<Hash>,
    pub stderr_hash: Option<Hash>,
    pub duration: Duration,
}

/// Everything recorded for one test of a run, written in one transaction.
#[derive(Clone, Debug)]
pub struct TestRecord {
    pub test: TestId,
    pub outcome: Outcome,
    pub coverage: Result<Vec<(UnitId, RoaringBitmap)>, String>,
    /// What the test recorded beyond edges, per unit (ignored when the coverage is unknown).
    pub recorded: Vec<(UnitId, Recorded)>,
    /// Its definition and file dependencies (`None`: not recorded).
    pub deps: Option<TestDeps>,
    /// A process of the test may have been stopped part-way through a statement
    /// (a crash, a fatal signal, threads, a signal handler of the program's own):
    /// its coverage also claims what the stopped code may have run, which
    /// depends on where the probes are (ignored when the coverage is unknown).
    pub stopped: bool,
}

/// A run as stored.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RunInfo {
    pub id: RunId,
    pub snapshot: SnapshotId,
    /// `full`, `shard`, `selected`, … (`retest_engine::run::RunKind`).
    pub kind: String,
    /// Seconds since the epoch, as text.
    pub started: String,
    pub finished: Option<String>,
}

/// One test's result, copied from another store's run ([`Store::import_run`]).
#[derive(Clone, Debug)]
pub struct ImportedResult {
    pub test: TestId,
    pub outcome: Outcome,
    pub coverage: CoverageState,
    pub stopped: Option<bool>,
}

/// A test's row in a coverage matrix.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MatrixTest {
    pub test: TestId,
    /// What identifies the test across versions of its source.
    pub key: String,
    /// The name it was last shown by.
    pub name: String,
    pub run: RunId,
    pub state: CoverageState,
    /// Whether the run that produced the coverage was stopped part-way
    /// ([`TestRecord::stopped`]); `None` when that is not known (recorded by a
    /// retest before schema version 4).
    pub stopped: Option<bool>,
}

/// One test's row of a coverage matrix, as [`Store::write_matrix`] takes it.
#[derive(Clone, Debug)]
pub struct MatrixRow {
    pub test: TestId,
    /// The run that produced (or last confirmed) the coverage.
    pub run: RunId,
    pub state: CoverageState,
    pub coverage: Vec<(UnitId, RoaringBitmap)>,
    /// What the test recorded beyond edges, per unit.
    pub recorded: Vec<(UnitId, Recorded)>,
    /// Its definition and file dependencies (`None`: not recorded).
    pub deps: Option<TestDeps>,
}

/// `TestsOnEdge` for one unit: edge number → tests that traversed it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeIndex {
    pub edges: HashMap<u32, RoaringBitmap>,
}

impl EdgeIndex {
    pub fn tests_on_edge(&self, edge: u32) -> Option<&RoaringBitmap> {
        self.edges.get(&edge)
    }
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    units: RefCell<HashMap<UnitId, Rc<Unit>>>,
}

fn now() -> String {
    // seconds since the epoch, UTC; formatted by readers
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", d.as_secs())
}

impl Store {
    /// The `.retest` directory for a project root.
    pub fn dir_for(root: &Path) -> PathBuf {
        root.join(STORE_DIR)
    }

    /// Finds the nearest `.retest/store.db` from `start` upwards.
    pub fn find(start: &Path) -> Result<PathBuf> {
        let mut cur = Some(start);
        while let Some(d) = cur {
            let cand = d.join(STORE_DIR).join(DB_FILE);
            if cand.is_file() {
                return Ok(d.join(STORE_DIR));
            }
            cur = d.parent();
        }
        Err(StoreError::NotFound { start: start.to_path_buf() })
    }

    /// Creates a new store in `dir` (a `.retest` directory).
    pub fn init(dir: &Path) -> Result<Store> {
        let db = dir.join(DB_FILE);
        if db.exists() {
            return Err(StoreError::Exists { path: db });
        }
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_path_buf(), source })?;
        let s = Store::connect(&db)?;
        schema::create(&s.conn).map_err(|e| s.sql(e))?;
        Ok(s)
    }

    /// Opens the store in `dir`, migrating an older schema.
    pub fn open(dir: &Path) -> Result<Store> {
        let db = dir.join(DB_FILE);
        if !db.is_file() {
            return Err(StoreError::NotFound { start: dir.to_path_buf() });
        }
        let s = Store::connect(&db).map_err(damaged)?;
        schema::migrate(&s.conn, &db).map_err(damaged)?;
        Ok(s)
    }

    /// Opens a store's database file to read it only (a shard to merge):
    /// never migrated, never written. A file of another schema version is
    /// refused ([`StoreError::TooNew`], [`StoreError::TooOld`]).
    pub fn open_file_read_only(db: &Path) -> Result<Store> {
        if !db.is_file() {
            return Err(StoreError::Io {
                path: db.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(db, flags)
            .map_err(|source| StoreError::Sqlite { path: db.to_path_buf(), source })?;
        let s = Store { conn, path: db.to_path_buf(), units: RefCell::new(HashMap::new()) };
        s.conn.busy_timeout(Duration::from_secs(120)).map_err(|e| s.sql(e))?;
        let found = schema::found_version(&s.conn, db).map_err(damaged)?;
        if found > schema::VERSION {
            return Err(StoreError::TooNew { path: db.to_path_buf(), found, known: schema::VERSION });
        }
        if found < schema::VERSION {
            return Err(StoreError::TooOld { path: db.to_path_buf(), found, known: schema::VERSION });
        }
        Ok(s)
    }

    /// Opens (migrating an older schema) or creates the store in the
    /// database file `db`, wherever it is (`retest merge --into FILE`).
    pub fn open_file(db: &Path) -> Result<Store> {
        let s = Store::connect(db).map_err(damaged)?;
        let empty: bool = s
            .conn
            .query_row("SELECT count(*) = 0 FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| damaged(s.sql(e)))?;
        if empty {
            schema::create(&s.conn).map_err(|e| s.sql(e))?;
        } else {
            schema::migrate(&s.conn, db).map_err(damaged)?;
        }
        Ok(s)
    }

    /// Writes a consistent copy of the whole store into the new file `to`
    /// (SQLite's `VACUUM INTO`: one read transaction, compacted).
    pub fn copy_to(&self, to: &Path) -> Result<()> {
        let target = to.to_str().ok_or_else(|| StoreError::Io {
            path: to.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path is not UTF-8"),
        })?;
        self.conn.execute("VACUUM INTO ?1", [target]).map(|_| ()).map_err(|e| self.sql(e))
    }

    fn connect(db: &Path) -> Result<Store> {
        let conn = Connection::open(db).map_err(|source| StoreError::Sqlite { path: db.to_path_buf(), source })?;
        let s = Store { conn, path: db.to_path_buf(), units: RefCell::new(HashMap::new()) };
        s.conn
            .busy_timeout(Duration::from_secs(120))
            .and_then(|_| s.conn.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|_| s.conn.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|_| s.conn.pragma_update(None, "foreign_keys", "ON"))
            .map_err(|e| s.sql(e))?;
        Ok(s)
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    fn corrupt(&self, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt { path: self.path.clone(), detail: detail.into() }
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in an IMMEDIATE transaction (writers serialise; readers are not blocked).
    fn write<T>(&mut self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>) -> Result<T> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|source| StoreError::Sqlite { path: path.clone(), source })?;
        let v = f(&tx).map_err(|source| StoreError::Sqlite { path: path.clone(), source })?;
        tx.commit().map_err(|source| StoreError::Sqlite { path, source })?;
        Ok(v)
    }

    /// Runs `f` on one consistent view of the store: every read in it sees
    /// the store as it was at its first read, whatever other processes
    /// commit meanwhile (they are not blocked), so a selection never reads
    /// the matrix of one moment and the edge index of another — never half
    /// of a shard that is being recorded. An edge index missing from the
    /// view is built from the view's coverage and not stored. `f` must not
    /// write.
    pub fn read_view<T>(&mut self, f: impl FnOnce(&mut Store) -> T) -> Result<T> {
        self.conn.execute_batch("BEGIN DEFERRED").map_err(|e| self.sql(e))?;
        let v = f(self);
        self.conn.execute_batch("COMMIT").map_err(|e| self.sql(e))?;
        Ok(v)
    }

    // ----- meta ---------------------------------------------------------------

    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map(|_| ())
        })
    }

    // ----- units and builds ---------------------------------------------------

    /// Stores an analysed unit (once per content hash) and returns its id.
    pub fn put_unit(&mut self, src_hash: &Hash, unit: &Unit) -> Result<UnitId> {
        if let Some(id) = self.unit_by_hash(src_hash)? {
            return Ok(id);
        }
        let data = blob::encode_unit(unit);
        let edges = unit.edge_count();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO units(src_hash, edges, data) VALUES (?1, ?2, ?3) ON CONFLICT(src_hash) DO NOTHING",
                params![&src_hash[..], edges, data],
            )?;
            tx.query_row("SELECT id FROM units WHERE src_hash = ?1", [&src_hash[..]], |r| r.get(0)).map(UnitId)
        })
    }

    pub fn unit_by_hash(&self, src_hash: &Hash) -> Result<Option<UnitId>> {
        self.conn
            .query_row("SELECT id FROM units WHERE src_hash = ?1", [&src_hash[..]], |r| r.get(0))
            .optional()
            .map(|o| o.map(UnitId))
            .map_err(|e| self.sql(e))
    }

    /// Loads a unit (cached for the life of the store handle).
    pub fn unit(&self, id: UnitId) -> Result<Rc<Unit>> {
        if let Some(u) = self.units.borrow().get(&id) {
            return Ok(u.clone());
        }
        let data: Vec<u8> = self
            .conn
            .query_row("SELECT data FROM units WHERE id = ?1", [id.0], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "unit", id: id.0 })?;
        let unit = blob::decode_unit(&data).map_err(|e| self.corrupt(format!("unit {}: {e}", id.0)))?;
        let rc = Rc::new(unit);
        self.units.borrow_mut().insert(id, rc.clone());
        Ok(rc)
    }

    /// Stores an instrumented build of `unit` (once per build hash).
    pub fn put_build(&mut self, hash: &BuildHash, unit: UnitId, cells: u32, plan: &[Vec<Probe>]) -> Result<BuildId> {
        self.put_build_with(hash, unit, cells, plan, &UnitRecording::default())
    }

    /// Stores an instrumented build of `unit` that also records `recording`.
    pub fn put_build_with(
        &mut self,
        hash: &BuildHash,
        unit: UnitId,
        cells: u32,
        plan: &[Vec<Probe>],
        recording: &UnitRecording,
    ) -> Result<BuildId> {
        let data = blob::encode_plan(plan);
        let rec = (!recording.is_empty()).then(|| blob::encode_recording(recording));
        self.write(|tx| {
            tx.execute(
                "INSERT INTO builds(hash, unit, cells, plan, recording) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(hash) DO NOTHING",
                params![&hash.as_bytes()[..], unit.0, cells, data, rec],
            )?;
            tx.query_row("SELECT id FROM builds WHERE hash = ?1", [&hash.as_bytes()[..]], |r| r.get(0)).map(BuildId)
        })
    }

    /// A build by id.
    pub fn build(&self, id: BuildId) -> Result<BuildInfo> {
        let hash: Vec<u8> = self
            .conn
            .query_row("SELECT hash FROM builds WHERE id = ?1", [id.0], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "build", id: id.0 })?;
        let hash = BuildHash(hash.try_into().map_err(|_| self.corrupt(format!("build {}: bad hash", id.0)))?);
        self.build_by_hash(&hash)?.ok_or(StoreError::Missing { what: "build", id: id.0 })
    }

    /// What a build records beyond edges (without reading its probe plan).
    pub fn build_recording(&self, id: BuildId) -> Result<UnitRecording> {
        let rec: Option<Vec<u8>> = self
            .conn
            .query_row("SELECT recording FROM builds WHERE id = ?1", [id.0], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "build", id: id.0 })?;
        match rec {
            Some(b) => blob::decode_recording(&b).map_err(|e| self.corrupt(format!("build {}: {e}", id.0))),
            None => Ok(UnitRecording::default()),
        }
    }

    /// The build a trace reports by its hash, if this store knows it.
    pub fn build_by_hash(&self, hash: &BuildHash) -> Result<Option<BuildInfo>> {
        type Row = (i64, i64, u32, Vec<u8>, Option<Vec<u8>>);
        let row: Option<Row> = self
            .conn
            .query_row(
                "SELECT id, unit, cells, plan, recording FROM builds WHERE hash = ?1",
                [&hash.as_bytes()[..]],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        match row {
            None => Ok(None),
            Some((id, unit, cells, plan, rec)) => Ok(Some(BuildInfo {
                id: BuildId(id),
                hash: *hash,
                unit: UnitId(unit),
                cells,
                plan: blob::decode_plan(&plan).map_err(|e| self.corrupt(format!("build {id}: {e}")))?,
                recording: match rec {
                    Some(b) => blob::decode_recording(&b).map_err(|e| self.corrupt(format!("build {id}: {e}")))?,
                    None => UnitRecording::default(),
                },
            })),
        }
    }

    // ----- snapshots ----------------------------------------------------------

    /// The open snapshot the compiler wrapper records into: the newest snapshot if
    /// it is open, otherwise a new open snapshot that starts as a copy of the newest
    /// one's units (a build only recompiles what changed).
    pub fn open_snapshot(&mut self) -> Result<SnapshotId> {
        let t = now();
        self.write(|tx| {
            let newest: Option<(i64, String)> = tx
                .query_row("SELECT id, state FROM snapshots ORDER BY id DESC LIMIT 1", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            match newest {
                Some((id, state)) if state == "open" => Ok(SnapshotId(id)),
                other => {
                    let parent = other.map(|(id, _)| id);
                    tx.execute(
                        "INSERT INTO snapshots(created, state, parent) VALUES (?1, 'open', ?2)",
                        params![t, parent],
                    )?;
                    let id = tx.last_insert_rowid();
                    if let Some(p) = parent {
                        tx.execute(
                            "INSERT INTO snapshot_units(snapshot, key, source, unit, build, flags)
                             SELECT ?1, key, source, unit, build, flags FROM snapshot_units WHERE snapshot = ?2",
                            params![id, p],
                        )?;
                        tx.execute(
                            "INSERT INTO snapshot_outputs(snapshot, path) SELECT ?1, path FROM snapshot_outputs WHERE snapshot = ?2",
                            params![id, p],
                        )?;
                    }
                    Ok(SnapshotId(id))
                }
            }
        })
    }

    /// Records (or replaces) one translation unit of an open snapshot.
    pub fn record_unit(
        &mut self,
        snapshot: SnapshotId,
        key: &str,
        source: &str,
        unit: UnitId,
        build: Option<BuildId>,
        flags: &str,
    ) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO snapshot_units(snapshot, key, source, unit, build, flags) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(snapshot, key) DO UPDATE SET source = excluded.source, unit = excluded.unit,
                   build = excluded.build, flags = excluded.flags",
                params![snapshot.0, key, source, unit.0, build.map(|b| b.0), flags],
            )
            .map(|_| ())
        })
    }

    /// Records the project files (relative to the root) the wrapper analysed
    /// for `unit`, with their content hashes and opaque stamps, replacing
    /// what was recorded for it before: what the newest build of the unit saw.
    pub fn record_unit_sources(&mut self, unit: UnitId, files: &[SourceState]) -> Result<()> {
        self.write(|tx| {
            tx.execute("DELETE FROM unit_sources WHERE unit = ?1", [unit.0])?;
            let mut ins =
                tx.prepare("INSERT OR REPLACE INTO unit_sources(unit, path, hash, stamp) VALUES (?1, ?2, ?3, ?4)")?;
            for f in files {
                ins.execute(params![unit.0, f.path, &f.hash[..], f.stamp])?;
            }
            Ok(())
        })
    }

    /// The project files the units of a snapshot were analysed from, with
    /// the key of the unit, by key and path.
    pub fn snapshot_sources(&self, snapshot: SnapshotId) -> Result<Vec<(String, SourceState)>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT su.key, s.path, s.hash, s.stamp FROM snapshot_units su JOIN unit_sources s ON s.unit = su.unit
                 WHERE su.snapshot = ?1 ORDER BY su.key, s.path",
            )
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([snapshot.0], |r| {
                let h: Vec<u8> = r.get(2)?;
                Ok((
                    r.get(0)?,
                    SourceState { path: r.get(1)?, hash: h.try_into().unwrap_or([0; 16]), stamp: r.get(3)? },
                ))
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    /// Records files the wrapper wrote for a snapshot (objects, programs,
    /// shared libraries): their code is compared through its CFGs, so they
    /// are no test's file dependency.
    pub fn record_outputs(&mut self, snapshot: SnapshotId, paths: &[String]) -> Result<()> {
        self.write(|tx| {
            let mut ins = tx.prepare("INSERT OR IGNORE INTO snapshot_outputs(snapshot, path) VALUES (?1, ?2)")?;
            for p in paths {
                ins.execute(params![snapshot.0, p])?;
            }
            Ok(())
        })
    }

    /// The files the wrapper wrote for a snapshot (and the snapshots it was opened from).
    pub fn snapshot_outputs(&self, snapshot: SnapshotId) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT path FROM snapshot_outputs WHERE snapshot = ?1 ORDER BY path")
            .map_err(|e| self.sql(e))?;
        let rows = st.query_map([snapshot.0], |r| r.get(0)).map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    /// Removes a unit key from an open snapshot (its source left the build).
    pub fn forget_unit(&mut self, snapshot: SnapshotId, key: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute("DELETE FROM snapshot_units WHERE snapshot = ?1 AND key = ?2", params![snapshot.0, key])
                .map(|_| ())
        })
    }

    pub fn snapshot(&self, id: SnapshotId) -> Result<Snapshot> {
        self.conn
            .query_row("SELECT id, created, state, parent FROM snapshots WHERE id = ?1", [id.0], row_snapshot)
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "snapshot", id: id.0 })
    }

    pub fn snapshots(&self) -> Result<Vec<Snapshot>> {
        let mut st = self
            .conn
            .prepare("SELECT id, created, state, parent FROM snapshots ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = st.query_map([], row_snapshot).map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    pub fn newest_snapshot(&self) -> Result<Option<Snapshot>> {
        self.conn
            .query_row("SELECT id, created, state, parent FROM snapshots ORDER BY id DESC LIMIT 1", [], row_snapshot)
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Units of a snapshot, ordered by key.
    pub fn snapshot_units(&self, id: SnapshotId) -> Result<Vec<SnapshotUnit>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT su.key, su.source, su.unit, u.src_hash, su.build, su.flags
                 FROM snapshot_units su JOIN units u ON u.id = su.unit WHERE su.snapshot = ?1 ORDER BY su.key",
            )
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([id.0], |r| {
                let h: Vec<u8> = r.get(3)?;
                Ok(SnapshotUnit {
                    key: r.get(0)?,
                    source: r.get(1)?,
                    unit: UnitId(r.get(2)?),
                    src_hash: h.try_into().unwrap_or([0; 16]),
                    build: r.get::<_, Option<i64>>(4)?.map(BuildId),
                    flags: r.get(5)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    /// Builds of a snapshot's units, by build hash (to recognise a program's traces).
    pub fn snapshot_build_hashes(&self, id: SnapshotId) -> Result<HashMap<BuildHash, (String, UnitId)>> {
        let mut st = self
            .conn
            .prepare("SELECT b.hash, su.key, su.unit FROM snapshot_units su JOIN builds b ON b.id = su.build WHERE su.snapshot = ?1")
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([id.0], |r| {
                let h: Vec<u8> = r.get(0)?;
                Ok((BuildHash(h.try_into().unwrap_or([0u8; 16])), (r.get::<_, String>(1)?, UnitId(r.get(2)?))))
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<HashMap<_, _>>>().map_err(|e| self.sql(e))
    }

    /// Seals a snapshot: later builds open a new one.
    pub fn seal(&mut self, id: SnapshotId) -> Result<()> {
        self.write(|tx| tx.execute("UPDATE snapshots SET state = 'sealed' WHERE id = ?1", [id.0]).map(|_| ()))
    }

    /// The snapshot whose coverage matrix selection compares against.
    pub fn baseline(&self) -> Result<Option<SnapshotId>> {
        Ok(self.meta("baseline")?.and_then(|v| v.parse().ok()).map(SnapshotId))
    }

    pub fn set_baseline(&mut self, id: SnapshotId) -> Result<()> {
        self.set_meta("baseline", &id.0.to_string())
    }

    // ----- tests, runs, results, coverage -------------------------------------

    /// Registers tests whose key is their name (the command is updated) and
    /// returns their ids in order.
    pub fn upsert_tests(&mut self, tests: &[(String, String)]) -> Result<Vec<TestId>> {
        let named: Vec<TestName> =
            tests.iter().map(|(n, c)| TestName { key: n.clone(), name: n.clone(), cmd: c.clone() }).collect();
        self.upsert_tests_named(&named)
    }

    /// Registers tests by key (name and command are updated) and returns
    /// their ids in order.
    pub fn upsert_tests_named(&mut self, tests: &[TestName]) -> Result<Vec<TestId>> {
        self.write(|tx| {
            let mut ids = Vec::with_capacity(tests.len());
            let mut ins = tx.prepare(
                "INSERT INTO tests(name, cmd, label) VALUES (?1, ?2, ?3)
                 ON CONFLICT(name) DO UPDATE SET cmd = excluded.cmd, label = excluded.label",
            )?;
            let mut get = tx.prepare("SELECT id FROM tests WHERE name = ?1")?;
            for t in tests {
                let label = (t.name != t.key).then_some(t.name.as_str());
                ins.execute(params![t.key, t.cmd, label])?;
                ids.push(TestId(get.query_row([&t.key], |r| r.get(0))?));
            }
            Ok(ids)
        })
    }

    pub fn tests(&self) -> Result<Vec<TestInfo>> {
        let mut st = self
            .conn
            .prepare("SELECT id, name, COALESCE(label, name), cmd FROM tests ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([], |r| Ok(TestInfo { id: TestId(r.get(0)?), key: r.get(1)?, name: r.get(2)?, cmd: r.get(3)? }))
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    // ----- file dependencies ----------------------------------------------------

    /// The ids of these states, storing the ones not stored yet (a known
    /// state gets the newer stamp).
    pub fn dep_state_ids(&mut self, states: &[DepState]) -> Result<Vec<u32>> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| {
            let mut ins = tx.prepare_cached(
                "INSERT INTO dep_states(path, kind, hash, stamp) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(path, kind, hash) DO UPDATE SET stamp = excluded.stamp",
            )?;
            let mut get = tx.prepare_cached("SELECT id FROM dep_states WHERE path = ?1 AND kind = ?2 AND hash = ?3")?;
            let mut ids = Vec::with_capacity(states.len());
            for d in states {
                ins.execute(params![d.path, d.kind, &d.hash[..], d.stamp])?;
                let id: i64 = get.query_row(params![d.path, d.kind, &d.hash[..]], |r| r.get(0))?;
                ids.push(u32::try_from(id).map_err(|_| bad_blob(format!("dependency state id {id} out of range")))?);
            }
            Ok(ids)
        })
    }

    /// The stored states with these ids.
    pub fn dep_states(&self, ids: &RoaringBitmap) -> Result<HashMap<u32, DepState>> {
        let mut out = HashMap::with_capacity(ids.len() as usize);
        if ids.is_empty() {
            return Ok(out);
        }
        let mut st = self
            .conn
            .prepare_cached("SELECT id, path, kind, hash, stamp FROM dep_states WHERE id >= ?1 AND id <= ?2")
            .map_err(|e| self.sql(e))?;
        let (lo, hi) = (ids.min().unwrap_or(0), ids.max().unwrap_or(0));
        let mut rows = st.query(params![lo, hi]).map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let id: u32 = r.get(0).map_err(|e| self.sql(e))?;
            if !ids.contains(id) {
                continue;
            }
            let hash: Vec<u8> = r.get(3).map_err(|e| self.sql(e))?;
            out.insert(
                id,
                DepState {
                    path: r.get(1).map_err(|e| self.sql(e))?,
                    kind: r.get(2).map_err(|e| self.sql(e))?,
                    hash: hash.try_into().map_err(|_| self.corrupt(format!("dependency state {id}: bad hash")))?,
                    stamp: r.get(4).map_err(|e| self.sql(e))?,
                },
            );
        }
        Ok(out)
    }

    /// Per test of a matrix, its recorded definition and file dependencies
    /// (tests whose row has none recorded are absent).
    pub fn matrix_deps(&self, snapshot: SnapshotId) -> Result<HashMap<TestId, TestDeps>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT test, definition, deps, deps_unknown FROM matrix_tests WHERE snapshot = ?1 AND definition IS NOT NULL",
            )
            .map_err(|e| self.sql(e))?;
        type Row = (i64, String, Option<Vec<u8>>, Option<String>);
        let rows: Vec<Row> = st
            .query_map([snapshot.0], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(|e| self.sql(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter()
            .map(|(t, definition, deps, unknown)| {
                let states = match deps {
                    Some(b) => {
                        blob::decode_bitmap(&b).map_err(|e| self.corrupt(format!("dependencies of test {t}: {e}")))?
                    }
                    None => RoaringBitmap::new(),
                };
                Ok((TestId(t), TestDeps { definition, states, unknown }))
            })
            .collect()
    }

    /// Starts a run on a snapshot. `kind`: `full`, `selected`, `audit-old`, `audit-new`, ...
    pub fn begin_run(&mut self, snapshot: SnapshotId, kind: &str) -> Result<RunId> {
        let t = now();
        self.write(|tx| {
            tx.execute("INSERT INTO runs(snapshot, kind, started) VALUES (?1, ?2, ?3)", params![snapshot.0, kind, t])?;
            Ok(RunId(tx.last_insert_rowid()))
        })
    }

    /// A run by id.
    pub fn run_info(&self, run: RunId) -> Result<RunInfo> {
        self.conn
            .query_row("SELECT id, snapshot, kind, started, finished FROM runs WHERE id = ?1", [run.0], |r| {
                Ok(RunInfo {
                    id: RunId(r.get(0)?),
                    snapshot: SnapshotId(r.get(1)?),
                    kind: r.get(2)?,
                    started: r.get(3)?,
                    finished: r.get(4)?,
                })
            })
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "run", id: run.0 })
    }

    /// Copies a run of another store into this one, on `snapshot`: its kind
    /// and times, and the results of some of its tests (by this store's test
    /// ids). Returns the new run's id.
    pub fn import_run(&mut self, snapshot: SnapshotId, run: &RunInfo, results: &[ImportedResult]) -> Result<RunId> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO runs(snapshot, kind, started, finished) VALUES (?1, ?2, ?3, ?4)",
                params![snapshot.0, run.kind, run.started, run.finished],
            )?;
            let id = tx.last_insert_rowid();
            let mut ins = tx.prepare_cached(
                "INSERT INTO results(run, test, status, code, stdout_hash, stderr_hash, duration_ms, coverage, note, stopped)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for r in results {
                let o = &r.outcome;
                let (state, note) = match &r.coverage {
                    CoverageState::Known => ("ok", None),
                    CoverageState::Unknown(why) => ("unknown", Some(why.as_str())),
                };
                ins.execute(params![
                    id,
                    r.test.0,
                    o.status,
                    o.code,
                    o.stdout_hash.map(|h| h.to_vec()),
                    o.stderr_hash.map(|h| h.to_vec()),
                    o.duration.as_millis() as i64,
                    state,
                    note,
                    r.stopped
                ])?;
            }
            Ok(RunId(id))
        })
    }

    /// The newest finished run of `kind` on a snapshot.
    pub fn latest_run(&self, snapshot: SnapshotId, kind: &str) -> Result<Option<RunId>> {
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE snapshot = ?1 AND kind = ?2 AND finished IS NOT NULL ORDER BY id DESC LIMIT 1",
                params![snapshot.0, kind],
                |r| r.get(0),
            )
            .optional()
            .map(|id: Option<i64>| id.map(RunId))
            .map_err(|e| self.sql(e))
    }

    /// Marks a run finished. When its results went into `matrix`'s coverage, the
    /// same transaction also builds the `TestsOnEdge` index of every unit of that
    /// matrix whose index is missing (recording coverage removed it), so that
    /// selection reads it instead of building it. A run killed before this
    /// leaves those indexes missing; reading one then builds it.
    pub fn finish_run(&mut self, run: RunId, matrix: Option<SnapshotId>) -> Result<()> {
        let t = now();
        self.write(|tx| {
            tx.execute("UPDATE runs SET finished = ?1 WHERE id = ?2", params![t, run.0])?;
            if let Some(m) = matrix {
                index_missing(tx, m)?;
            }
            Ok(())
        })
    }

    /// Records one test's result and, when `into_matrix` is given, its coverage in
    /// that snapshot's matrix (replacing what the matrix held for the test) — in
    /// one transaction.
    pub fn record_result(&mut self, run: RunId, into_matrix: Option<SnapshotId>, rec: &TestRecord) -> Result<()> {
        let o = &rec.outcome;
        let (state, reason) = match &rec.coverage {
            Ok(_) => ("ok", None),
            Err(r) => ("unknown", Some(r.clone())),
        };
        let blobs: Vec<(i64, Vec<u8>)> = match &rec.coverage {
            Ok(units) => units.iter().map(|(u, bm)| (u.0, blob::encode_bitmap(bm))).collect(),
            Err(_) => Vec::new(),
        };
        let (definition, deps, deps_unknown) = encode_deps(rec.deps.as_ref());
        let recorded: Vec<(i64, Vec<u8>)> = match &rec.coverage {
            Ok(_) => rec
                .recorded
                .iter()
                .filter(|(_, r)| !r.is_empty())
                .map(|(u, r)| (u.0, blob::encode_recorded(r)))
                .collect(),
            Err(_) => Vec::new(),
        };
        // Cached statements: this runs once per test, and preparing them anew
        // cost about a fifth of `retest run`'s own time on short tests.
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO results(run, test, status, code, stdout_hash, stderr_hash, duration_ms, coverage, note, stopped)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT(run, test) DO UPDATE SET status = excluded.status, code = excluded.code,
                   stdout_hash = excluded.stdout_hash, stderr_hash = excluded.stderr_hash,
                   duration_ms = excluded.duration_ms, coverage = excluded.coverage, note = excluded.note,
                   stopped = excluded.stopped",
            )?
            .execute(params![
                run.0,
                rec.test.0,
                o.status,
                o.code,
                o.stdout_hash.map(|h| h.to_vec()),
                o.stderr_hash.map(|h| h.to_vec()),
                o.duration.as_millis() as i64,
                state,
                reason,
                rec.coverage.is_ok().then_some(rec.stopped)
            ])?;
            if let Some(m) = into_matrix {
                // the units whose index changes: those the test covered before and now
                let mut touched: Vec<i64> = {
                    let mut st = tx.prepare_cached("SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2")?;
                    st.query_map(params![m.0, rec.test.0], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?
                };
                touched.extend(blobs.iter().map(|(u, _)| *u));
                tx.prepare_cached("DELETE FROM coverage WHERE snapshot = ?1 AND test = ?2")?
                    .execute(params![m.0, rec.test.0])?;
                tx.prepare_cached("DELETE FROM recordings WHERE snapshot = ?1 AND test = ?2")?
                    .execute(params![m.0, rec.test.0])?;
                let mut ins = tx.prepare_cached("INSERT INTO coverage(snapshot, test, unit, edges) VALUES (?1, ?2, ?3, ?4)")?;
                for (u, b) in &blobs {
                    ins.execute(params![m.0, rec.test.0, u, b])?;
                }
                let mut ins =
                    tx.prepare_cached("INSERT INTO recordings(snapshot, test, unit, data) VALUES (?1, ?2, ?3, ?4)")?;
                for (u, b) in &recorded {
                    ins.execute(params![m.0, rec.test.0, u, b])?;
                }
                tx.prepare_cached(
                    "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT(snapshot, test) DO UPDATE SET run = excluded.run, state = excluded.state, reason = excluded.reason,
                       definition = excluded.definition, deps = excluded.deps, deps_unknown = excluded.deps_unknown",
                )?
                .execute(params![m.0, rec.test.0, run.0, state, reason, definition, deps, deps_unknown])?;
                let mut del = tx.prepare_cached("DELETE FROM edge_index WHERE snapshot = ?1 AND unit = ?2")?;
                touched.sort();
                touched.dedup();
                for u in touched {
                    del.execute(params![m.0, u])?;
                }
            }
            Ok(())
        })
    }

    /// Outcomes of a run, by test id.
    pub fn run_results(&self, run: RunId) -> Result<HashMap<TestId, Outcome>> {
        let mut st = self
            .conn
            .prepare("SELECT test, status, code, stdout_hash, stderr_hash, duration_ms FROM results WHERE run = ?1")
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([run.0], |r| {
                let h = |v: Option<Vec<u8>>| v.and_then(|v| v.try_into().ok());
                Ok((
                    TestId(r.get(0)?),
                    Outcome {
                        status: r.get(1)?,
                        code: r.get(2)?,
                        stdout_hash: h(r.get(3)?),
                        stderr_hash: h(r.get(4)?),
                        duration: Duration::from_millis(r.get::<_, i64>(5)? as u64),
                    },
                ))
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<HashMap<_, _>>>().map_err(|e| self.sql(e))
    }

    /// The tests of a snapshot's coverage matrix and their state.
    pub fn matrix_tests(&self, snapshot: SnapshotId) -> Result<Vec<MatrixTest>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT m.test, t.name, COALESCE(t.label, t.name), m.run, m.state, m.reason, r.stopped
                 FROM matrix_tests m JOIN tests t ON t.id = m.test
                 LEFT JOIN results r ON r.run = m.run AND r.test = m.test
                 WHERE m.snapshot = ?1 ORDER BY m.test",
            )
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([snapshot.0], |r| {
                let state: String = r.get(4)?;
                let reason: Option<String> = r.get(5)?;
                Ok(MatrixTest {
                    test: TestId(r.get(0)?),
                    key: r.get(1)?,
                    name: r.get(2)?,
                    run: RunId(r.get(3)?),
                    state: if state == "ok" {
                        CoverageState::Known
                    } else {
                        CoverageState::Unknown(reason.unwrap_or_else(|| "coverage unknown".to_string()))
                    },
                    stopped: r.get::<_, Option<bool>>(6)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.sql(e))
    }

    /// The tests whose newest known coverage, in any matrix, covers something:
    /// the tests that ran instrumented code the last time their coverage was
    /// recorded (rows of unknown coverage are passed over).
    pub fn tests_that_ran_code(&self) -> Result<std::collections::HashSet<TestId>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT newest.test FROM
                   (SELECT test, MAX(snapshot) AS snapshot FROM matrix_tests WHERE state = 'ok' GROUP BY test) newest
                 WHERE EXISTS (SELECT 1 FROM coverage c WHERE c.snapshot = newest.snapshot AND c.test = newest.test)",
            )
            .map_err(|e| self.sql(e))?;
        let rows = st.query_map([], |r| Ok(TestId(r.get(0)?))).map_err(|e| self.sql(e))?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.sql(e))
    }

    /// One test's coverage in a matrix: per unit, the covered edges.
    pub fn test_coverage(&self, snapshot: SnapshotId, test: TestId) -> Result<Vec<(UnitId, RoaringBitmap)>> {
        let mut st = self
            .conn
            .prepare("SELECT unit, edges FROM coverage WHERE snapshot = ?1 AND test = ?2 ORDER BY unit")
            .map_err(|e| self.sql(e))?;
        let rows: Vec<(i64, Vec<u8>)> = st
            .query_map(params![snapshot.0, test.0], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter()
            .map(|(u, b)| {
                blob::decode_bitmap(&b)
                    .map(|bm| (UnitId(u), bm))
                    .map_err(|e| self.corrupt(format!("coverage of test {} in unit {u}: {e}", test.0)))
            })
            .collect()
    }

    /// Per-test coverage of one unit in a matrix.
    pub fn unit_coverage(&self, snapshot: SnapshotId, unit: UnitId) -> Result<Vec<(TestId, RoaringBitmap)>> {
        let mut st = self
            .conn
            .prepare("SELECT test, edges FROM coverage WHERE snapshot = ?1 AND unit = ?2 ORDER BY test")
            .map_err(|e| self.sql(e))?;
        let rows: Vec<(i64, Vec<u8>)> = st
            .query_map(params![snapshot.0, unit.0], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter()
            .map(|(t, b)| {
                blob::decode_bitmap(&b)
                    .map(|bm| (TestId(t), bm))
                    .map_err(|e| self.corrupt(format!("coverage of test {t} in unit {}: {e}", unit.0)))
            })
            .collect()
    }

    /// What each test recorded beyond edges in one unit of a matrix (tests that
    /// recorded nothing there are absent).
    pub fn unit_recorded(&self, snapshot: SnapshotId, unit: UnitId) -> Result<Vec<(TestId, Recorded)>> {
        self.recorded_rows(
            "SELECT test, data FROM recordings WHERE snapshot = ?1 AND unit = ?2 ORDER BY test",
            snapshot,
            unit.0,
        )
        .map(|v| v.into_iter().map(|(t, r)| (TestId(t), r)).collect())
    }

    /// What one test recorded beyond edges in a matrix, per unit.
    pub fn test_recorded(&self, snapshot: SnapshotId, test: TestId) -> Result<Vec<(UnitId, Recorded)>> {
        self.recorded_rows(
            "SELECT unit, data FROM recordings WHERE snapshot = ?1 AND test = ?2 ORDER BY unit",
            snapshot,
            test.0,
        )
        .map(|v| v.into_iter().map(|(u, r)| (UnitId(u), r)).collect())
    }

    fn recorded_rows(&self, sql: &str, snapshot: SnapshotId, key: i64) -> Result<Vec<(i64, Recorded)>> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.sql(e))?;
        let rows: Vec<(i64, Vec<u8>)> = st
            .query_map(params![snapshot.0, key], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql(e))?;
        rows.into_iter()
            .map(|(k, b)| {
                blob::decode_recorded(&b)
                    .map(|r| (k, r))
                    .map_err(|e| self.corrupt(format!("recording {k} of snapshot {}: {e}", snapshot.0)))
            })
            .collect()
    }

    /// `TestsOnEdge` for one unit of a matrix: read from the stored index, or built
    /// from the per-test coverage (and stored) when missing. The coverage is read
    /// and the index written in one transaction, so a test recorded meanwhile
    /// cannot be left out of a stored index.
    pub fn edge_index(&mut self, snapshot: SnapshotId, unit: UnitId) -> Result<EdgeIndex> {
        let stored = read_index(&self.conn, snapshot, unit).map_err(|e| self.sql(e))?;
        let data = match stored {
            Some(data) => data,
            // inside a read view: built from the view's coverage, not stored
            None if !self.conn.is_autocommit() => {
                transpose(&self.conn, snapshot, unit).map_err(|e| self.sql(e))?.finish()
            }
            None => self.write(|tx| match read_index(tx, snapshot, unit)? {
                Some(data) => Ok(data),
                None => build_index(tx, snapshot, unit),
            })?,
        };
        blob::decode_index(&data).map_err(|e| self.corrupt(format!("edge index of unit {}: {e}", unit.0)))
    }

    /// Builds and stores the edge index of every unit of a matrix that has
    /// none (a run killed before it finished leaves them missing), so that
    /// reads — in a read view too — find them stored.
    pub fn store_missing_indexes(&mut self, snapshot: SnapshotId) -> Result<()> {
        self.write(|tx| index_missing(tx, snapshot))
    }

    /// Removes from a matrix every test not in `keep` (tests that left the
    /// suite), with their coverage; the edge index of the units they covered
    /// is rebuilt in the same transaction.
    pub fn retain_matrix_tests(&mut self, snapshot: SnapshotId, keep: &[TestId]) -> Result<()> {
        let keep: std::collections::HashSet<i64> = keep.iter().map(|t| t.0).collect();
        let gone: Vec<i64> =
            self.matrix_tests(snapshot)?.into_iter().map(|m| m.test.0).filter(|t| !keep.contains(t)).collect();
        if gone.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            for t in &gone {
                tx.execute(
                    "DELETE FROM edge_index WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    params![snapshot.0, t],
                )?;
                tx.execute("DELETE FROM coverage WHERE snapshot = ?1 AND test = ?2", params![snapshot.0, t])?;
                tx.execute("DELETE FROM recordings WHERE snapshot = ?1 AND test = ?2", params![snapshot.0, t])?;
                tx.execute("DELETE FROM matrix_tests WHERE snapshot = ?1 AND test = ?2", params![snapshot.0, t])?;
            }
            index_missing(tx, snapshot)
        })
    }

    /// Copies a matrix wholesale (used when a build changes nothing observable).
    pub fn copy_matrix(&mut self, from: SnapshotId, to: SnapshotId) -> Result<()> {
        self.write(|tx| {
            tx.execute("DELETE FROM coverage WHERE snapshot = ?1", [to.0])?;
            tx.execute("DELETE FROM recordings WHERE snapshot = ?1", [to.0])?;
            tx.execute("DELETE FROM matrix_tests WHERE snapshot = ?1", [to.0])?;
            tx.execute("DELETE FROM edge_index WHERE snapshot = ?1", [to.0])?;
            tx.execute(
                "INSERT INTO coverage(snapshot, test, unit, edges) SELECT ?1, test, unit, edges FROM coverage WHERE snapshot = ?2",
                params![to.0, from.0],
            )?;
            tx.execute(
                "INSERT INTO recordings(snapshot, test, unit, data) SELECT ?1, test, unit, data FROM recordings WHERE snapshot = ?2",
                params![to.0, from.0],
            )?;
            tx.execute(
                "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
                 SELECT ?1, test, run, state, reason, definition, deps, deps_unknown FROM matrix_tests WHERE snapshot = ?2",
                params![to.0, from.0],
            )?;
            tx.execute(
                "INSERT INTO edge_index(snapshot, unit, data) SELECT ?1, unit, data FROM edge_index WHERE snapshot = ?2",
                params![to.0, from.0],
            )?;
            index_missing(tx, to)
        })
    }

    /// Writes a complete matrix for a snapshot in one transaction.
    pub fn write_matrix(&mut self, snapshot: SnapshotId, tests: &[MatrixRow]) -> Result<()> {
        self.write_matrix_and(snapshot, tests, false)
    }

    /// RECOVER's last step, atomically: writes the snapshot's complete matrix,
    /// seals the snapshot and makes it the baseline. Interrupted, it leaves the
    /// previous baseline as it was.
    pub fn advance_baseline(&mut self, snapshot: SnapshotId, tests: &[MatrixRow]) -> Result<()> {
        self.write_matrix_and(snapshot, tests, true)
    }

    fn write_matrix_and(&mut self, snapshot: SnapshotId, tests: &[MatrixRow], advance: bool) -> Result<()> {
        let rows = encode_rows(tests);
        let suite = blob::encode_bitmap(&suite_bitmap(&tests.iter().map(|r| r.test).collect::<Vec<_>>())?);
        self.write(|tx| {
            tx.execute("DELETE FROM coverage WHERE snapshot = ?1", [snapshot.0])?;
            tx.execute("DELETE FROM recordings WHERE snapshot = ?1", [snapshot.0])?;
            tx.execute("DELETE FROM matrix_tests WHERE snapshot = ?1", [snapshot.0])?;
            tx.execute("DELETE FROM edge_index WHERE snapshot = ?1", [snapshot.0])?;
            insert_rows(tx, snapshot, &rows)?;
            index_missing(tx, snapshot)?;
            if advance {
                // the whole matrix: its tests are the suite
                tx.execute("UPDATE snapshots SET suite = ?1 WHERE id = ?2", params![suite, snapshot.0])?;
                make_baseline_in(tx, snapshot)?;
            }
            Ok(())
        })
    }

    /// A sharded `run --selected`'s last step, and `retest merge`'s, atomically:
    /// replaces the rows of `tests` (this shard's; the other tests' rows stay
    /// as they are), records the suite the matrix is to cover and, when
    /// given, the baseline the coverage was carried over from (`origin`, so
    /// later shards select against it too), seals the snapshot and makes it
    /// the baseline.
    pub fn advance_baseline_shard(
        &mut self,
        snapshot: SnapshotId,
        tests: &[MatrixRow],
        suite: &[TestId],
        origin: Option<SnapshotId>,
    ) -> Result<()> {
        let rows = encode_rows(tests);
        let suite = blob::encode_bitmap(&suite_bitmap(suite)?);
        self.write(|tx| {
            replace_rows(tx, snapshot, &rows)?;
            tx.execute(
                "UPDATE snapshots SET suite = ?1, origin = COALESCE(?2, origin) WHERE id = ?3",
                params![suite, origin.map(|o| o.0), snapshot.0],
            )?;
            make_baseline_in(tx, snapshot)
        })
    }

    /// Replaces the rows of `tests` in a matrix (the other tests' rows stay
    /// as they are), in one transaction, with the edge index of the units
    /// they cover.
    pub fn write_rows(&mut self, snapshot: SnapshotId, tests: &[MatrixRow]) -> Result<()> {
        let rows = encode_rows(tests);
        self.write(|tx| replace_rows(tx, snapshot, &rows))
    }

    /// The end of a full or sharded run, atomically: the tests not in
    /// `suite` (they left it) leave the snapshot's matrix, the suite is
    /// recorded as what the matrix is to cover, and the snapshot is sealed
    /// and made the baseline.
    pub fn make_baseline(&mut self, snapshot: SnapshotId, suite: &[TestId]) -> Result<()> {
        let bits = suite_bitmap(suite)?;
        let encoded = blob::encode_bitmap(&bits);
        self.write(|tx| {
            let gone: Vec<i64> = {
                let mut st = tx.prepare("SELECT test FROM matrix_tests WHERE snapshot = ?1")?;
                st.query_map([snapshot.0], |r| r.get::<_, i64>(0))?
                    .filter(|t| t.as_ref().map_or(true, |t| u32::try_from(*t).map_or(true, |t| !bits.contains(t))))
                    .collect::<rusqlite::Result<_>>()?
            };
            for t in &gone {
                tx.execute(
                    "DELETE FROM edge_index WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    params![snapshot.0, t],
                )?;
                delete_row(tx, snapshot, *t)?;
            }
            index_missing(tx, snapshot)?;
            tx.execute("UPDATE snapshots SET suite = ?1 WHERE id = ?2", params![encoded, snapshot.0])?;
            make_baseline_in(tx, snapshot)
        })
    }

    /// The suite a snapshot's matrix is to cover, as the last full or sharded
    /// run on it recorded it (`None`: no such run recorded one).
    pub fn suite(&self, snapshot: SnapshotId) -> Result<Option<RoaringBitmap>> {
        let data: Option<Vec<u8>> = self
            .conn
            .query_row("SELECT suite FROM snapshots WHERE id = ?1", [snapshot.0], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "snapshot", id: snapshot.0 })?;
        data.map(|d| {
            blob::decode_bitmap(&d).map_err(|e| self.corrupt(format!("suite of snapshot {}: {e}", snapshot.0)))
        })
        .transpose()
    }

    /// The tests of a snapshot's suite that have no row in its matrix, by
    /// key: while one is missing the matrix is incomplete (a shard has not
    /// recorded yet, or was stopped). `None` when no suite is recorded.
    pub fn missing_tests(&self, snapshot: SnapshotId) -> Result<Option<Vec<TestInfo>>> {
        let Some(suite) = self.suite(snapshot)? else { return Ok(None) };
        let have: std::collections::HashSet<i64> = self.matrix_tests(snapshot)?.into_iter().map(|m| m.test.0).collect();
        let mut missing: Vec<TestInfo> = self
            .tests()?
            .into_iter()
            .filter(|t| u32::try_from(t.id.0).is_ok_and(|i| suite.contains(i)) && !have.contains(&t.id.0))
            .collect();
        missing.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Some(missing))
    }

    /// The baseline a sharded `run --selected` carried this snapshot's
    /// coverage over from, if one did.
    pub fn origin(&self, snapshot: SnapshotId) -> Result<Option<SnapshotId>> {
        self.conn
            .query_row("SELECT origin FROM snapshots WHERE id = ?1", [snapshot.0], |r| r.get::<_, Option<i64>>(0))
            .optional()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::Missing { what: "snapshot", id: snapshot.0 })
            .map(|o| o.map(SnapshotId))
    }

    /// Size of the database file in bytes (for reports).
    pub fn file_size(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
}

/// A test's definition, dependency bitmap and unknown reason as columns.
type EncodedDeps = (Option<String>, Option<Vec<u8>>, Option<String>);

fn encode_deps(deps: Option<&TestDeps>) -> EncodedDeps {
    match deps {
        None => (None, None, None),
        Some(d) => (Some(d.definition.clone()), Some(blob::encode_bitmap(&d.states)), d.unknown.clone()),
    }
}

/// A matrix row as columns: test, run, state, reason, coverage blobs per
/// unit, recording blobs per unit, dependencies.
type EncodedRow = (i64, i64, &'static str, Option<String>, Vec<(i64, Vec<u8>)>, Vec<(i64, Vec<u8>)>, EncodedDeps);

fn encode_rows(tests: &[MatrixRow]) -> Vec<EncodedRow> {
    tests
        .iter()
        .map(|row| {
            let (state, reason) = match &row.state {
                CoverageState::Known => ("ok", None),
                CoverageState::Unknown(why) => ("unknown", Some(why.clone())),
            };
            let cov = row.coverage.iter().map(|(u, b)| (u.0, blob::encode_bitmap(b))).collect();
            let rec = row
                .recorded
                .iter()
                .filter(|(_, r)| !r.is_empty())
                .map(|(u, r)| (u.0, blob::encode_recorded(r)))
                .collect();
            (row.test.0, row.run.0, state, reason, cov, rec, encode_deps(row.deps.as_ref()))
        })
        .collect()
}

fn insert_rows(tx: &Connection, snapshot: SnapshotId, rows: &[EncodedRow]) -> rusqlite::Result<()> {
    let mut mt = tx.prepare_cached(
        "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut cv = tx.prepare_cached("INSERT INTO coverage(snapshot, test, unit, edges) VALUES (?1, ?2, ?3, ?4)")?;
    let mut rc = tx.prepare_cached("INSERT INTO recordings(snapshot, test, unit, data) VALUES (?1, ?2, ?3, ?4)")?;
    for (t, r, state, reason, cov, rec, (definition, deps, unknown)) in rows {
        mt.execute(params![snapshot.0, t, r, state, reason, definition, deps, unknown])?;
        for (u, b) in cov {
            cv.execute(params![snapshot.0, t, u, b])?;
        }
        for (u, b) in rec {
            rc.execute(params![snapshot.0, t, u, b])?;
        }
    }
    Ok(())
}

/// Replaces the rows of these tests in a matrix and rebuilds the edge index
/// of every unit they covered before or cover now, inside the caller's
/// transaction.
fn replace_rows(tx: &Connection, snapshot: SnapshotId, rows: &[EncodedRow]) -> rusqlite::Result<()> {
    let mut touched: Vec<i64> = Vec::new();
    {
        let mut st = tx.prepare_cached("SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2")?;
        for r in rows {
            let before = st.query_map(params![snapshot.0, r.0], |r| r.get::<_, i64>(0))?;
            touched.extend(before.collect::<rusqlite::Result<Vec<i64>>>()?);
            touched.extend(r.4.iter().map(|(u, _)| *u));
        }
    }
    for r in rows {
        delete_row(tx, snapshot, r.0)?;
    }
    insert_rows(tx, snapshot, rows)?;
    touched.sort();
    touched.dedup();
    let mut del = tx.prepare_cached("DELETE FROM edge_index WHERE snapshot = ?1 AND unit = ?2")?;
    for u in touched {
        del.execute(params![snapshot.0, u])?;
    }
    index_missing(tx, snapshot)
}

/// Removes one test's row from a matrix (its coverage and recordings too);
/// the caller deletes the edge index of the units it covered.
fn delete_row(tx: &Connection, snapshot: SnapshotId, test: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM coverage WHERE snapshot = ?1 AND test = ?2")?.execute(params![snapshot.0, test])?;
    tx.prepare_cached("DELETE FROM recordings WHERE snapshot = ?1 AND test = ?2")?
        .execute(params![snapshot.0, test])?;
    tx.prepare_cached("DELETE FROM matrix_tests WHERE snapshot = ?1 AND test = ?2")?
        .execute(params![snapshot.0, test])?;
    Ok(())
}

/// Seals a snapshot and makes it the baseline, inside the caller's transaction.
fn make_baseline_in(tx: &Connection, snapshot: SnapshotId) -> rusqlite::Result<()> {
    tx.execute("UPDATE snapshots SET state = 'sealed' WHERE id = ?1", [snapshot.0])?;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('baseline', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [snapshot.0.to_string()],
    )?;
    Ok(())
}

/// Test ids as a bitmap (they are row ids: positive and, in any store a
/// suite fits in, below 2³²).
fn suite_bitmap(suite: &[TestId]) -> Result<RoaringBitmap> {
    suite.iter().map(|t| u32::try_from(t.0).map_err(|_| StoreError::Missing { what: "test", id: t.0 })).collect()
}

fn read_index(conn: &Connection, snapshot: SnapshotId, unit: UnitId) -> rusqlite::Result<Option<Vec<u8>>> {
    conn.query_row("SELECT data FROM edge_index WHERE snapshot = ?1 AND unit = ?2", params![snapshot.0, unit.0], |r| {
        r.get(0)
    })
    .optional()
}

fn bad_blob(what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, what.into())
}

/// Transposes per-test coverage rows of one unit into its `TestsOnEdge` index:
/// per edge, the tests that traversed it.
#[derive(Default)]
struct Transpose {
    per_edge: Vec<Vec<u32>>,
}

impl Transpose {
    fn add(&mut self, test: i64, unit: i64, edges: &[u8]) -> rusqlite::Result<()> {
        let bm =
            blob::decode_bitmap(edges).map_err(|e| bad_blob(format!("coverage of test {test} in unit {unit}: {e}")))?;
        let t = u32::try_from(test).map_err(|_| bad_blob(format!("test id {test} out of range")))?;
        // covered edges come in runs (straight-line code, whole procedures)
        let mut runs = bm.iter();
        while let Some(r) = runs.next_range() {
            let (a, b) = (*r.start() as usize, *r.end() as usize);
            if b >= self.per_edge.len() {
                self.per_edge.resize(b + 1, Vec::new());
            }
            for tests in &mut self.per_edge[a..=b] {
                tests.push(t);
            }
        }
        Ok(())
    }

    /// The encoded index.
    fn finish(self) -> Vec<u8> {
        let mut idx = EdgeIndex::default();
        let mut bits: Vec<u8> = Vec::new();
        for (e, tests) in self.per_edge.into_iter().enumerate() {
            let Some(&max) = tests.iter().max() else { continue };
            let bytes = max as usize / 8 + 1;
            let bm = if bytes <= 64 * tests.len() {
                // dense (test ids are small): set the bits, build the bitmap from them
                bits.clear();
                bits.resize(bytes, 0);
                for t in &tests {
                    bits[*t as usize / 8] |= 1 << (t % 8);
                }
                RoaringBitmap::from_lsb0_bytes(0, &bits)
            } else {
                tests.into_iter().collect()
            };
            idx.edges.insert(e as u32, bm);
        }
        blob::encode_index(&idx)
    }
}

fn store_index(tx: &Connection, snapshot: SnapshotId, unit: i64, data: &[u8]) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO edge_index(snapshot, unit, data) VALUES (?1, ?2, ?3)
         ON CONFLICT(snapshot, unit) DO UPDATE SET data = excluded.data",
    )?
    .execute(params![snapshot.0, unit, data])
    .map(|_| ())
}

/// One unit's coverage rows, transposed.
fn transpose(conn: &Connection, snapshot: SnapshotId, unit: UnitId) -> rusqlite::Result<Transpose> {
    let mut t = Transpose::default();
    let mut st = conn.prepare_cached("SELECT test, edges FROM coverage WHERE snapshot = ?1 AND unit = ?2")?;
    let mut rows = st.query(params![snapshot.0, unit.0])?;
    while let Some(r) = rows.next()? {
        t.add(r.get(0)?, unit.0, r.get_ref(1)?.as_blob()?)?;
    }
    Ok(t)
}

/// Builds and stores one unit's index inside the caller's transaction.
fn build_index(tx: &Connection, snapshot: SnapshotId, unit: UnitId) -> rusqlite::Result<Vec<u8>> {
    let data = transpose(tx, snapshot, unit)?.finish();
    store_index(tx, snapshot, unit.0, &data)?;
    Ok(data)
}

/// Builds, inside the caller's transaction, the index of every unit of a matrix
/// (its snapshot's units and any unit it has coverage of) that has none, from
/// one pass over the matrix's coverage.
fn index_missing(tx: &Connection, snapshot: SnapshotId) -> rusqlite::Result<()> {
    let mut missing: HashMap<i64, Transpose> = {
        let mut st = tx.prepare(
            "SELECT unit FROM snapshot_units WHERE snapshot = ?1
             UNION SELECT DISTINCT unit FROM coverage WHERE snapshot = ?1
             EXCEPT SELECT unit FROM edge_index WHERE snapshot = ?1",
        )?;
        st.query_map([snapshot.0], |r| r.get(0))?
            .map(|u| u.map(|u| (u, Transpose::default())))
            .collect::<rusqlite::Result<_>>()?
    };
    if missing.is_empty() {
        return Ok(());
    }
    let mut st = tx.prepare("SELECT test, unit, edges FROM coverage WHERE snapshot = ?1")?;
    let mut rows = st.query([snapshot.0])?;
    while let Some(r) = rows.next()? {
        let unit: i64 = r.get(1)?;
        if let Some(t) = missing.get_mut(&unit) {
            t.add(r.get(0)?, unit, r.get_ref(2)?.as_blob()?)?;
        }
    }
    let mut units: Vec<(i64, Transpose)> = missing.into_iter().collect();
    units.sort_by_key(|(u, _)| *u);
    for (u, t) in units {
        store_index(tx, snapshot, u, &t.finish())?;
    }
    Ok(())
}

fn row_snapshot(r: &rusqlite::Row<'_>) -> rusqlite::Result<Snapshot> {
    let state: String = r.get(2)?;
    Ok(Snapshot {
        id: SnapshotId(r.get(0)?),
        created: r.get(1)?,
        state: if state == "open" { SnapshotState::Open } else { SnapshotState::Sealed },
        parent: r.get::<_, Option<i64>>(3)?.map(SnapshotId),
    })
}

#[cfg(test)]
mod tests;
