//! `retest-store`: persistence in one SQLite file, `.retest/store.db`, or in
//! a PostgreSQL database (`Store::open_url`; the SQL layer is `db`).
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
//!   bitmap of the tests that traversed it) that `TestsOnEdge` reads, stored
//!   per unit in blocks of [`EDGE_BLOCK`] edges so that a selection reads the
//!   blocks of its dangerous edges, not whole units; with each
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
mod db;
mod facts;
mod schema;
#[doc(hidden)]
pub mod throwaway;
mod unitbin;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use roaring::RoaringBitmap;
use rusqlite::Connection;

use db::{Conn, DbResult, Row, p};
pub use db::{DbError, sqlite_on_mimalloc};
pub use facts::UnitFacts;
pub use unitbin::StoredBodies;

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
    #[error("store {}: {source}", url.display())]
    Postgres {
        url: PathBuf,
        #[source]
        source: DbError,
    },
    #[error(
        "lost the connection to the store {} ({source}); what was recorded before stays recorded: rerun the command once the server is reachable",
        url.display()
    )]
    ConnectionLost {
        url: PathBuf,
        #[source]
        source: DbError,
    },
    #[error("the database {} holds no retest store; run `retest init --store URL` to create one", url.display())]
    NotInitialised { url: PathBuf },
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

/// Edges per block of a stored edge index: a selection reads the blocks
/// that hold its dangerous edges, not a unit's whole index. A block of 256
/// condition-level edges is a few procedures of typical C.
pub const EDGE_BLOCK: u32 = 256;

/// `TestsOnEdge` for one unit (or some blocks of it): edge number → tests that traversed it.
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
    conn: Conn,
    /// The database file; for a PostgreSQL store, a path in its local
    /// `.retest` directory (scratch files: traces, journals), not a file.
    path: PathBuf,
    /// How messages name the store: its file, or its URL without the password.
    name: PathBuf,
    /// A PostgreSQL store's URL, password included: never shown.
    url: Option<String>,
    units: RefCell<HashMap<UnitId, Rc<Unit>>>,
    /// Units read for selection with their bodies decoded on demand ([`Store::units_lazy`]).
    shells: RefCell<HashMap<UnitId, Shell>>,
    /// The bodies of [`Store::units_lazy`]'s units decoded so far, shared.
    bodies: Arc<unitbin::DecodedBodies>,
    /// Units being decoded on a thread of their own ([`Store::decode_units_ahead`]).
    ahead: RefCell<Option<Ahead>>,
    /// Inside a read view, the edge-index block size of each (snapshot,
    /// unit) read so far: the view cannot see it change.
    marks: RefCell<HashMap<(SnapshotId, UnitId), Option<u32>>>,
}

/// A unit in the store's encoding (binary, LZ4-compressed), for caches
/// outside the store.
pub fn encode_unit(u: &Unit) -> Vec<u8> {
    blob::encode_unit(u)
}

/// A unit from [`encode_unit`]'s bytes.
pub fn decode_unit(b: &[u8]) -> std::result::Result<Unit, String> {
    blob::decode_unit(b)
}

fn now() -> String {
    // seconds since the epoch, UTC; formatted by readers
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", d.as_secs())
}

/// Whether a store location names a database server rather than a directory.
pub fn is_database_url(s: &str) -> bool {
    ["postgresql://", "postgres://"].iter().any(|p| s.starts_with(p))
}

/// A connection URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let cut = url.split_once("://").and_then(|(scheme, rest)| {
        let (auth, host) = rest.rsplit_once('@')?;
        let user = auth.split_once(':').map_or(auth, |(u, _)| u);
        Some(format!("{scheme}://{user}@{host}"))
    });
    let url = cut.unwrap_or_else(|| url.to_string());
    // a password given as a query parameter
    match url.split_once('?') {
        Some((base, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|kv| if kv.starts_with("password=") { "password=…".to_string() } else { kv.to_string() })
                .collect();
            format!("{base}?{}", q.join("&"))
        }
        None => url,
    }
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
        schema::create(s.sqlite()).map_err(|e| s.sql(e.into()))?;
        Ok(s)
    }

    /// Opens the store in `dir`, migrating an older schema.
    pub fn open(dir: &Path) -> Result<Store> {
        let db = dir.join(DB_FILE);
        if !db.is_file() {
            return Err(StoreError::NotFound { start: dir.to_path_buf() });
        }
        let s = Store::connect(&db).map_err(damaged)?;
        schema::migrate(s.sqlite(), &db).map_err(damaged)?;
        Ok(s)
    }

    /// Connects to the PostgreSQL database `url`. `local` is the project's
    /// `.retest` directory, for the files a store keeps beside its database
    /// (traces, journals). With `create`, makes the schema in a database
    /// that has none ([`StoreError::Exists`] if it has one); without, opens
    /// the store there, migrating an older schema, and refuses a database
    /// without one ([`StoreError::NotInitialised`]).
    pub fn open_url(url: &str, local: &Path, create: bool) -> Result<Store> {
        let name = PathBuf::from(redact(url));
        let client = postgres::Client::connect(url, postgres::NoTls)
            .map_err(|e| StoreError::Postgres { url: name.clone(), source: e.into() })?;
        let s = Store {
            conn: Conn::postgres(client),
            path: local.join(DB_FILE),
            name: name.clone(),
            url: Some(url.to_string()),
            units: RefCell::new(HashMap::new()),
            shells: RefCell::new(HashMap::new()),
            bodies: Default::default(),
            ahead: RefCell::new(None),
            marks: RefCell::new(HashMap::new()),
        };
        if create {
            std::fs::create_dir_all(local).map_err(|source| StoreError::Io { path: local.to_path_buf(), source })?;
            if !schema::pg_create(&s.conn).map_err(|e| s.sql(e))? {
                return Err(StoreError::Exists { path: name });
            }
        } else {
            schema::pg_migrate(&s.conn, &name).map_err(|e| match e {
                schema::Found::Error(e) => s.sql(e),
                schema::Found::Store(e) => e,
            })?;
        }
        Ok(s)
    }

    /// A PostgreSQL store's connection URL, for the processes a command
    /// starts (the compiler wrapper). It may hold a password: never show it
    /// (show [`Store::name`]).
    pub fn connection_url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Whether the store is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        self.conn.is_postgres()
    }

    /// How messages name the store: its database file, or its URL without the password.
    pub fn name(&self) -> &Path {
        &self.name
    }

    fn sqlite(&self) -> &Connection {
        self.conn.sqlite().expect("SQLite-only operation on a PostgreSQL store")
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
        let conn = open_read_only(db).map_err(|source| StoreError::Sqlite { path: db.to_path_buf(), source })?;
        let s = Store {
            conn: Conn::Sqlite(conn),
            path: db.to_path_buf(),
            name: db.to_path_buf(),
            url: None,
            units: RefCell::new(HashMap::new()),
            shells: RefCell::new(HashMap::new()),
            bodies: Default::default(),
            ahead: RefCell::new(None),
            marks: RefCell::new(HashMap::new()),
        };
        let found = schema::found_version(s.sqlite(), db).map_err(damaged)?;
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
            .sqlite()
            .query_row("SELECT count(*) = 0 FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| damaged(s.sql(e.into())))?;
        if empty {
            schema::create(s.sqlite()).map_err(|e| s.sql(e.into()))?;
        } else {
            schema::migrate(s.sqlite(), db).map_err(damaged)?;
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
        self.sqlite().execute("VACUUM INTO ?1", [target]).map(|_| ()).map_err(|e| self.sql(e.into()))
    }

    fn connect(db: &Path) -> Result<Store> {
        let conn = Connection::open(db).map_err(|source| StoreError::Sqlite { path: db.to_path_buf(), source })?;
        let s = Store {
            conn: Conn::Sqlite(conn),
            path: db.to_path_buf(),
            name: db.to_path_buf(),
            url: None,
            units: RefCell::new(HashMap::new()),
            shells: RefCell::new(HashMap::new()),
            bodies: Default::default(),
            ahead: RefCell::new(None),
            marks: RefCell::new(HashMap::new()),
        };
        let c = s.sqlite();
        c.busy_timeout(Duration::from_secs(120))
            .and_then(|_| c.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|_| c.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|_| c.pragma_update(None, "foreign_keys", "ON"))
            // with the log kept (below), its frames are dropped whenever it
            // restarts, and when the last connection closes
            .and_then(|_| c.pragma_update(None, "journal_size_limit", 0))
            .map_err(|e| s.sql(e.into()))?;
        // The write-ahead log and its index stay beside the database between
        // commands: making and deleting both files was a tenth of a `select`
        // with nothing to compare. The last connection to close checkpoints
        // the log and truncates it to nothing, so the database file alone is
        // the whole store, as before: a copy of it misses nothing, and a log
        // left beside a database copied over it has nothing to replay
        // (`a_database_copied_over_a_closed_store_is_what_opens`).
        let mut persist: std::ffi::c_int = 1;
        // SAFETY: the connection is open; the argument of this file control
        // is an int, read and written during the call only.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_file_control(
                c.handle(),
                c"main".as_ptr(),
                rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
                (&raw mut persist).cast(),
            )
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            return Err(s.sql(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rc), None).into()));
        }
        Ok(s)
    }

    fn sql(&self, source: DbError) -> StoreError {
        match source {
            DbError::Sqlite(source) => StoreError::Sqlite { path: self.name.clone(), source },
            DbError::Value(detail) => self.corrupt(detail),
            e if e.is_connection_lost() => StoreError::ConnectionLost { url: self.name.clone(), source: e },
            e => StoreError::Postgres { url: self.name.clone(), source: e },
        }
    }

    fn corrupt(&self, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt { path: self.name.clone(), detail: detail.into() }
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in a write transaction (writers serialise; readers are not blocked).
    fn write<T>(&mut self, f: impl FnOnce(&Conn) -> DbResult<T>) -> Result<T> {
        self.conn.begin_write().map_err(|e| self.sql(e))?;
        match f(&self.conn).and_then(|v| self.conn.commit().map(|_| v)) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.conn.rollback();
                Err(self.sql(e))
            }
        }
    }

    /// Runs `f` on one consistent view of the store: every read in it sees
    /// the store as it was at its first read, whatever other processes
    /// commit meanwhile (they are not blocked), so a selection never reads
    /// the matrix of one moment and the edge index of another — never half
    /// of a shard that is being recorded. An edge index missing from the
    /// view is built from the view's coverage and not stored. `f` must not
    /// write.
    pub fn read_view<T>(&mut self, f: impl FnOnce(&mut Store) -> T) -> Result<T> {
        self.conn.begin_read().map_err(|e| self.sql(e))?;
        self.marks.borrow_mut().clear();
        let v = f(self);
        self.marks.borrow_mut().clear();
        self.conn.commit().map_err(|e| self.sql(e))?;
        Ok(v)
    }

    /// One optional row.
    fn one<T>(
        &self,
        sql: &'static str,
        params: &[db::Val],
        f: impl FnOnce(&mut Row) -> DbResult<T>,
    ) -> Result<Option<T>> {
        self.conn.row(sql, params, f).map_err(|e| self.sql(e))
    }

    /// Every row.
    fn all<T>(&self, sql: &'static str, params: &[db::Val], f: impl FnMut(&mut Row) -> DbResult<T>) -> Result<Vec<T>> {
        self.conn.rows(sql, params, f).map_err(|e| self.sql(e))
    }

    // ----- meta ---------------------------------------------------------------

    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.one("SELECT value FROM meta WHERE key = ?1", p![key], |r| r.get(0))
    }

    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.write(|tx| {
            tx.exec(
                "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                p![key, value],
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
        let facts = UnitFacts::of(unit).encode();
        let edges = unit.edge_count() as i64;
        self.write(|tx| {
            tx.exec(
                "INSERT INTO units(src_hash, edges, data) VALUES (?1, ?2, ?3) ON CONFLICT(src_hash) DO NOTHING",
                p![&src_hash[..], edges, data],
            )?;
            let id: i64 = tx
                .row("SELECT id FROM units WHERE src_hash = ?1", p![&src_hash[..]], |r| r.get(0))?
                .ok_or_else(|| DbError::Value("a unit just stored is missing".into()))?;
            tx.exec("INSERT INTO unit_facts(unit, data) VALUES (?1, ?2) ON CONFLICT(unit) DO NOTHING", p![id, facts])?;
            Ok(UnitId(id))
        })
    }

    pub fn unit_by_hash(&self, src_hash: &Hash) -> Result<Option<UnitId>> {
        Ok(self.one("SELECT id FROM units WHERE src_hash = ?1", p![&src_hash[..]], |r| r.get(0))?.map(UnitId))
    }

    /// Loads a unit (cached for the life of the store handle).
    pub fn unit(&self, id: UnitId) -> Result<Rc<Unit>> {
        if let Some(u) = self.units.borrow().get(&id) {
            return Ok(u.clone());
        }
        self.decode_units(&[id])?;
        Ok(self.units.borrow()[&id].clone())
    }

    /// Loads several units, the ones not yet loaded decoded in parallel
    /// (decoding is most of what loading a unit costs).
    pub fn units(&self, ids: &[UnitId]) -> Result<Vec<Rc<Unit>>> {
        let mut todo: Vec<UnitId> = ids.iter().copied().filter(|id| !self.units.borrow().contains_key(id)).collect();
        todo.sort_unstable_by_key(|id| id.0);
        todo.dedup();
        self.decode_units(&todo)?;
        ids.iter().map(|id| self.unit(*id)).collect()
    }

    /// Loads units for selection: a unit stored in blob encoding 5 as a
    /// shell, whose procedures hold their names, linkage, spans and digests
    /// but not their bodies, with the bodies, decoded on demand
    /// ([`retest_graph::summary::Bodies`]); a unit of an older encoding, or
    /// one this handle has decoded whole already, whole (no bodies). Several
    /// in parallel.
    #[allow(clippy::type_complexity)]
    pub fn units_lazy(&self, ids: &[UnitId]) -> Result<Vec<(Rc<Unit>, Option<Rc<StoredBodies>>)>> {
        self.units_decoded_ahead()?;
        let todo = self.not_read_lazily(ids);
        let blobs = self.unit_blobs(&todo)?;
        self.keep_lazy(decode_blobs(blobs, blob::decode_unit_lazy_of))?;
        Ok(ids
            .iter()
            .map(|id| match self.units.borrow().get(id) {
                Some(u) => (u.clone(), None),
                None => {
                    let (u, b) = &self.shells.borrow()[id];
                    (u.clone(), Some(b.clone()))
                }
            })
            .collect())
    }

    /// Starts reading and decoding units for [`Store::units_lazy`] on a
    /// thread of their own, through a connection of its own: the caller
    /// reads something else meanwhile, and the next [`Store::units_lazy`]
    /// takes them. A unit's blob never changes once stored (units are
    /// stored by the hash of what they were analysed from, and only added),
    /// so any connection reads what this handle's [`Store::read_view`]
    /// would. Few units are read and decoded at once: a thread and a
    /// connection would cost about what they save. If the thread cannot
    /// connect, the blobs are read on this handle when the units are taken
    /// (`units_decoded_ahead_are_the_units_read`).
    pub fn decode_units_ahead(&self, ids: &[UnitId]) -> Result<()> {
        self.decode_units_ahead_from(ids, UNITS_AHEAD)
    }

    /// [`Store::decode_units_ahead`] on a thread from units of `edges` edges.
    fn decode_units_ahead_from(&self, ids: &[UnitId], edges: i64) -> Result<()> {
        self.units_decoded_ahead()?;
        let todo = self.not_read_lazily(ids);
        let mut sum = 0;
        for &id in &todo {
            sum += self.one("SELECT edges FROM units WHERE id = ?1", p![id.0], |r| r.get::<i64>(0))?.unwrap_or(0);
        }
        if todo.is_empty() || sum < edges {
            let blobs = self.unit_blobs(&todo)?;
            return self.keep_lazy(decode_blobs(blobs, blob::decode_unit_lazy_of));
        }
        let reader = match &self.url {
            Some(url) => Reader::Postgres(url.clone()),
            None => Reader::Sqlite(self.path.clone()),
        };
        let ids = todo.clone();
        let decoding = std::thread::spawn(move || {
            let conn = reader.connect()?;
            let blobs: Option<Vec<(UnitId, Vec<u8>)>> =
                ids.iter().map(|&id| Some((id, unit_blob_on(&conn, id).ok()??))).collect();
            // one after the other: the caller's thread, reading meanwhile,
            // keeps a core (on 2 cores, decoding on both slowed the matrix's
            // read more than it sped the decoding)
            Some(blobs?.into_iter().map(|(id, b)| (id, blob::decode_unit_lazy_of(b))).collect())
        });
        *self.ahead.borrow_mut() = Some(Ahead { ids: todo, decoding });
        Ok(())
    }

    /// Keeps the units [`Store::decode_units_ahead`] decoded, waiting for
    /// them; read on this handle if the thread could not read them.
    fn units_decoded_ahead(&self) -> Result<()> {
        let Some(Ahead { ids, decoding }) = self.ahead.borrow_mut().take() else { return Ok(()) };
        let decoded = match decoding.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
            Some(decoded) => decoded,
            None => decode_blobs(self.unit_blobs(&ids)?, blob::decode_unit_lazy_of),
        };
        self.keep_lazy(decoded)
    }

    /// Of `ids`, the units neither read whole nor as shells yet, in order, once each.
    fn not_read_lazily(&self, ids: &[UnitId]) -> Vec<UnitId> {
        let known = |id: &UnitId| self.units.borrow().contains_key(id) || self.shells.borrow().contains_key(id);
        let mut todo: Vec<UnitId> = ids.iter().copied().filter(|id| !known(id)).collect();
        todo.sort_unstable_by_key(|id| id.0);
        todo.dedup();
        todo
    }

    /// Keeps units decoded for [`Store::units_lazy`]: shells with their
    /// bodies, units of an older encoding whole.
    fn keep_lazy(&self, decoded: Decoded<LazyUnit>) -> Result<()> {
        for (id, u) in self.decoded(decoded)? {
            match u {
                (shell, Some(mut bodies)) => {
                    bodies.share(self.bodies.clone());
                    self.shells.borrow_mut().insert(id, (Rc::new(shell), Rc::new(bodies)));
                }
                (unit, None) => {
                    self.units.borrow_mut().insert(id, Rc::new(unit));
                }
            }
        }
        Ok(())
    }

    fn unit_blob(&self, id: UnitId) -> Result<Vec<u8>> {
        unit_blob_on(&self.conn, id).map_err(|e| self.sql(e))?.ok_or(StoreError::Missing { what: "unit", id: id.0 })
    }

    /// Reads and decodes units into the handle's cache; several in parallel.
    fn decode_units(&self, ids: &[UnitId]) -> Result<()> {
        let blobs = self.unit_blobs(ids)?;
        for (id, unit) in self.decoded(decode_blobs(blobs, |b| blob::decode_unit(&b)))? {
            self.units.borrow_mut().insert(id, Rc::new(unit));
        }
        Ok(())
    }

    fn unit_blobs(&self, ids: &[UnitId]) -> Result<Vec<(UnitId, Vec<u8>)>> {
        ids.iter().map(|&id| Ok((id, self.unit_blob(id)?))).collect()
    }

    /// Units decoded ([`decode_blobs`]); a blob that did not decode is a damaged store.
    fn decoded<T>(&self, decoded: Decoded<T>) -> Result<Vec<(UnitId, T)>> {
        decoded
            .into_iter()
            .map(|(id, u)| u.map(|u| (id, u)).map_err(|e| self.corrupt(format!("unit {}: {e}", id.0))))
            .collect()
    }

    /// The facts of a unit that reach beyond it (from the unit itself when
    /// they are not stored: a unit stored before schema version 8).
    pub fn unit_facts(&self, id: UnitId) -> Result<UnitFacts> {
        let facts: Option<Vec<u8>> =
            self.one("SELECT data FROM unit_facts WHERE unit = ?1", p![id.0], |r| r.take(0))?;
        match facts {
            Some(b) => UnitFacts::decode(&b).map_err(|e| self.corrupt(format!("facts of unit {}: {e}", id.0))),
            None => Ok(UnitFacts::of(&*self.unit(id)?)),
        }
    }

    /// The facts of the units of a snapshot, read together (decoded in
    /// parallel); a unit whose facts are not stored is left out (ask
    /// [`Store::unit_facts`], which reads them from the unit).
    pub fn snapshot_facts(&self, snapshot: SnapshotId) -> Result<HashMap<UnitId, UnitFacts>> {
        let rows: Vec<(i64, Vec<u8>)> = self.all(
            "SELECT su.unit, f.data FROM snapshot_units su JOIN unit_facts f ON f.unit = su.unit
             WHERE su.snapshot = ?1",
            p![snapshot.0],
            |r| Ok((r.take(0)?, r.take(1)?)),
        )?;
        let parallel = rows.len() >= FACTS_IN_PARALLEL;
        par_map(rows, parallel, |(id, b)| UnitFacts::decode(&b).map(|f| (UnitId(id), f)).map_err(|e| (id, e)))
            .into_iter()
            .collect::<std::result::Result<HashMap<_, _>, _>>()
            .map_err(|(id, e)| self.corrupt(format!("facts of unit {id}: {e}")))
    }

    /// Stores the facts of the units of `snapshots` that have none (units
    /// stored before schema version 8), so that later selections read them
    /// without decoding the units.
    pub fn store_missing_facts(&mut self, snapshots: &[SnapshotId]) -> Result<()> {
        let mut missing = Vec::new();
        for s in snapshots {
            missing.extend(self.all(
                "SELECT su.unit FROM snapshot_units su LEFT JOIN unit_facts f ON f.unit = su.unit
                 WHERE su.snapshot = ?1 AND f.unit IS NULL",
                p![s.0],
                |r| r.get::<i64>(0),
            )?);
        }
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        let facts: Vec<(i64, Vec<u8>)> = missing
            .into_iter()
            .map(|id| Ok((id, UnitFacts::of(&*self.unit(UnitId(id))?).encode())))
            .collect::<Result<_>>()?;
        self.write(|tx| {
            for (id, f) in &facts {
                tx.exec(
                    "INSERT INTO unit_facts(unit, data) VALUES (?1, ?2) ON CONFLICT(unit) DO NOTHING",
                    p![*id, f.clone()],
                )?;
            }
            Ok(())
        })
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
            tx.exec(
                "INSERT INTO builds(hash, unit, cells, plan, recording) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(hash) DO NOTHING",
                p![&hash.as_bytes()[..], unit.0, cells, data, rec],
            )?;
            tx.row("SELECT id FROM builds WHERE hash = ?1", p![&hash.as_bytes()[..]], |r| r.get(0))?
                .map(BuildId)
                .ok_or_else(|| DbError::Value("a build just stored is missing".into()))
        })
    }

    /// A build by id.
    pub fn build(&self, id: BuildId) -> Result<BuildInfo> {
        let hash: Vec<u8> = self
            .one("SELECT hash FROM builds WHERE id = ?1", p![id.0], |r| r.get(0))?
            .ok_or(StoreError::Missing { what: "build", id: id.0 })?;
        let hash = BuildHash(hash.try_into().map_err(|_| self.corrupt(format!("build {}: bad hash", id.0)))?);
        self.build_by_hash(&hash)?.ok_or(StoreError::Missing { what: "build", id: id.0 })
    }

    /// What a build records beyond edges (without reading its probe plan).
    pub fn build_recording(&self, id: BuildId) -> Result<UnitRecording> {
        let rec: Option<Vec<u8>> = self
            .one("SELECT recording FROM builds WHERE id = ?1", p![id.0], |r| r.get(0))?
            .ok_or(StoreError::Missing { what: "build", id: id.0 })?;
        match rec {
            Some(b) => blob::decode_recording(&b).map_err(|e| self.corrupt(format!("build {}: {e}", id.0))),
            None => Ok(UnitRecording::default()),
        }
    }

    /// The build a trace reports by its hash, if this store knows it.
    pub fn build_by_hash(&self, hash: &BuildHash) -> Result<Option<BuildInfo>> {
        type BuildRow = (i64, i64, u32, Vec<u8>, Option<Vec<u8>>);
        let row: Option<BuildRow> = self.one(
            "SELECT id, unit, cells, plan, recording FROM builds WHERE hash = ?1",
            p![&hash.as_bytes()[..]],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
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
            let newest: Option<(i64, String)> =
                tx.row("SELECT id, state FROM snapshots ORDER BY id DESC LIMIT 1", p![], |r| Ok((r.get(0)?, r.get(1)?)))?;
            match newest {
                Some((id, state)) if state == "open" => Ok(SnapshotId(id)),
                other => {
                    let parent = other.map(|(id, _)| id);
                    let id: i64 = tx
                        .row(
                            "INSERT INTO snapshots(created, state, parent) VALUES (?1, 'open', ?2) RETURNING id",
                            p![t.as_str(), parent],
                            |r| r.get(0),
                        )?
                        .ok_or_else(|| DbError::Value("no id for a new snapshot".into()))?;
                    if let Some(pa) = parent {
                        tx.exec(
                            "INSERT INTO snapshot_units(snapshot, key, source, unit, build, flags)
                             SELECT CAST(?1 AS BIGINT), key, source, unit, build, flags FROM snapshot_units WHERE snapshot = ?2",
                            p![id, pa],
                        )?;
                        tx.exec(
                            "INSERT INTO snapshot_outputs(snapshot, path) SELECT CAST(?1 AS BIGINT), path FROM snapshot_outputs WHERE snapshot = ?2",
                            p![id, pa],
                        )?;
                    }
                    Ok(SnapshotId(id))
                }
            }
        })
    }

    /// A new sealed snapshot holding exactly `units` (their `unit`, `build`,
    /// `key`, `source` and `flags`; `src_hash` is the unit's) and the
    /// wrapper's `outputs`, in one transaction: a build recorded in another
    /// store, brought in whole (`retest merge --into` a store without it).
    pub fn import_snapshot(&mut self, units: &[SnapshotUnit], outputs: &[String]) -> Result<SnapshotId> {
        let t = now();
        self.write(|tx| {
            let parent: Option<i64> = tx.row("SELECT MAX(id) FROM snapshots", p![], |r| r.get(0))?.flatten();
            let id: i64 = tx
                .row(
                    "INSERT INTO snapshots(created, state, parent) VALUES (?1, 'sealed', ?2) RETURNING id",
                    p![t.as_str(), parent],
                    |r| r.get(0),
                )?
                .ok_or_else(|| DbError::Value("no id for a new snapshot".into()))?;
            for u in units {
                tx.exec(
                    "INSERT INTO snapshot_units(snapshot, key, source, unit, build, flags) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    p![id, &u.key, &u.source, u.unit.0, u.build.map(|b| b.0), &u.flags],
                )?;
            }
            for pa in outputs {
                tx.exec(
                    "INSERT INTO snapshot_outputs(snapshot, path) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                    p![id, pa],
                )?;
            }
            Ok(SnapshotId(id))
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
            tx.exec(
                "INSERT INTO snapshot_units(snapshot, key, source, unit, build, flags) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(snapshot, key) DO UPDATE SET source = excluded.source, unit = excluded.unit,
                   build = excluded.build, flags = excluded.flags",
                p![snapshot.0, key, source, unit.0, build.map(|b| b.0), flags],
            )
            .map(|_| ())
        })
    }

    /// Records the project files (relative to the root) the wrapper analysed
    /// for `unit`, with their content hashes and opaque stamps, replacing
    /// what was recorded for it before: what the newest build of the unit saw.
    pub fn record_unit_sources(&mut self, unit: UnitId, files: &[SourceState]) -> Result<()> {
        self.write(|tx| {
            tx.exec("DELETE FROM unit_sources WHERE unit = ?1", p![unit.0])?;
            for f in files {
                tx.exec(
                    "INSERT INTO unit_sources(unit, path, hash, stamp) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(unit, path) DO UPDATE SET hash = excluded.hash, stamp = excluded.stamp",
                    p![unit.0, &f.path, &f.hash[..], &f.stamp],
                )?;
            }
            Ok(())
        })
    }

    /// The project files the units of a snapshot were analysed from, with
    /// the key of the unit, by key and path.
    pub fn snapshot_sources(&self, snapshot: SnapshotId) -> Result<Vec<(String, SourceState)>> {
        self.all(
            "SELECT su.key, s.path, s.hash, s.stamp FROM snapshot_units su JOIN unit_sources s ON s.unit = su.unit
             WHERE su.snapshot = ?1 ORDER BY su.key, s.path",
            p![snapshot.0],
            |r| {
                let h: Vec<u8> = r.get(2)?;
                Ok((
                    r.get(0)?,
                    SourceState { path: r.get(1)?, hash: h.try_into().unwrap_or([0; 16]), stamp: r.get(3)? },
                ))
            },
        )
    }

    /// Records files the wrapper wrote for a snapshot (objects, programs,
    /// shared libraries): their code is compared through its CFGs, so they
    /// are no test's file dependency.
    pub fn record_outputs(&mut self, snapshot: SnapshotId, paths: &[String]) -> Result<()> {
        self.write(|tx| {
            for pa in paths {
                tx.exec(
                    "INSERT INTO snapshot_outputs(snapshot, path) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                    p![snapshot.0, pa],
                )?;
            }
            Ok(())
        })
    }

    /// The files the wrapper wrote for a snapshot (and the snapshots it was opened from).
    pub fn snapshot_outputs(&self, snapshot: SnapshotId) -> Result<Vec<String>> {
        self.all("SELECT path FROM snapshot_outputs WHERE snapshot = ?1 ORDER BY path", p![snapshot.0], |r| r.get(0))
    }

    /// Removes a unit key from an open snapshot (its source left the build).
    pub fn forget_unit(&mut self, snapshot: SnapshotId, key: &str) -> Result<()> {
        self.write(|tx| {
            tx.exec("DELETE FROM snapshot_units WHERE snapshot = ?1 AND key = ?2", p![snapshot.0, key]).map(|_| ())
        })
    }

    pub fn snapshot(&self, id: SnapshotId) -> Result<Snapshot> {
        self.one("SELECT id, created, state, parent FROM snapshots WHERE id = ?1", p![id.0], |r| row_snapshot(r))?
            .ok_or(StoreError::Missing { what: "snapshot", id: id.0 })
    }

    pub fn snapshots(&self) -> Result<Vec<Snapshot>> {
        self.all("SELECT id, created, state, parent FROM snapshots ORDER BY id", p![], |r| row_snapshot(r))
    }

    pub fn newest_snapshot(&self) -> Result<Option<Snapshot>> {
        self.one("SELECT id, created, state, parent FROM snapshots ORDER BY id DESC LIMIT 1", p![], |r| row_snapshot(r))
    }

    /// Units of a snapshot, ordered by key.
    pub fn snapshot_units(&self, id: SnapshotId) -> Result<Vec<SnapshotUnit>> {
        self.all(
            "SELECT su.key, su.source, su.unit, u.src_hash, su.build, su.flags
             FROM snapshot_units su JOIN units u ON u.id = su.unit WHERE su.snapshot = ?1 ORDER BY su.key",
            p![id.0],
            |r| {
                let h: Vec<u8> = r.get(3)?;
                Ok(SnapshotUnit {
                    key: r.get(0)?,
                    source: r.get(1)?,
                    unit: UnitId(r.get(2)?),
                    src_hash: h.try_into().unwrap_or([0; 16]),
                    build: r.get::<Option<i64>>(4)?.map(BuildId),
                    flags: r.get(5)?,
                })
            },
        )
    }

    /// Builds of a snapshot's units, by build hash (to recognise a program's traces).
    pub fn snapshot_build_hashes(&self, id: SnapshotId) -> Result<HashMap<BuildHash, (String, UnitId)>> {
        let rows = self.all(
            "SELECT b.hash, su.key, su.unit FROM snapshot_units su JOIN builds b ON b.id = su.build WHERE su.snapshot = ?1",
            p![id.0],
            |r| {
                let h: Vec<u8> = r.get(0)?;
                Ok((BuildHash(h.try_into().unwrap_or([0u8; 16])), (r.get::<String>(1)?, UnitId(r.get(2)?))))
            },
        )?;
        Ok(rows.into_iter().collect())
    }

    /// Seals a snapshot: later builds open a new one.
    pub fn seal(&mut self, id: SnapshotId) -> Result<()> {
        self.write(|tx| tx.exec("UPDATE snapshots SET state = 'sealed' WHERE id = ?1", p![id.0]).map(|_| ()))
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
            for t in tests {
                let label = (t.name != t.key).then_some(t.name.as_str());
                let id = tx.row(
                    "INSERT INTO tests(name, cmd, label) VALUES (?1, ?2, ?3)
                     ON CONFLICT(name) DO UPDATE SET cmd = excluded.cmd, label = excluded.label RETURNING id",
                    p![&t.key, &t.cmd, label],
                    |r| r.get(0),
                )?;
                ids.push(TestId(id.ok_or_else(|| DbError::Value(format!("no id for test {}", t.key)))?));
            }
            Ok(ids)
        })
    }

    pub fn tests(&self) -> Result<Vec<TestInfo>> {
        self.all("SELECT id, name, COALESCE(label, name), cmd FROM tests ORDER BY id", p![], |r| {
            Ok(TestInfo { id: TestId(r.get(0)?), key: r.get(1)?, name: r.get(2)?, cmd: r.get(3)? })
        })
    }

    // ----- file dependencies ----------------------------------------------------

    /// The ids of these states, storing the ones not stored yet (a known
    /// state gets the newer stamp).
    pub fn dep_state_ids(&mut self, states: &[DepState]) -> Result<Vec<u32>> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|tx| {
            let mut ids = Vec::with_capacity(states.len());
            for d in states {
                let id: i64 = tx
                    .row(
                        "INSERT INTO dep_states(path, kind, hash, stamp) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT(path, kind, hash) DO UPDATE SET stamp = excluded.stamp RETURNING id",
                        p![&d.path, d.kind, &d.hash[..], &d.stamp],
                        |r| r.get(0),
                    )?
                    .ok_or_else(|| DbError::Value(format!("no id for dependency state {}", d.path)))?;
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
        let (lo, hi) = (ids.min().unwrap_or(0), ids.max().unwrap_or(0));
        self.conn
            .each("SELECT id, path, kind, hash, stamp FROM dep_states WHERE id >= ?1 AND id <= ?2", p![lo, hi], |r| {
                let id: u32 = r.get(0)?;
                if !ids.contains(id) {
                    return Ok(());
                }
                let hash: Vec<u8> = r.get(3)?;
                let hash = hash.try_into().map_err(|_| DbError::Value(format!("dependency state {id}: bad hash")))?;
                out.insert(id, DepState { path: r.get(1)?, kind: r.get(2)?, hash, stamp: r.get(4)? });
                Ok(())
            })
            .map_err(|e| self.sql(e))?;
        Ok(out)
    }

    /// Per test of a matrix, its recorded definition and file dependencies
    /// (tests whose row has none recorded are absent).
    pub fn matrix_deps(&self, snapshot: SnapshotId) -> Result<HashMap<TestId, TestDeps>> {
        let rows: Vec<DepsRow> = self.all(
            "SELECT test, definition, deps, deps_unknown FROM matrix_tests WHERE snapshot = ?1 AND definition IS NOT NULL",
            p![snapshot.0],
            |r| Ok((r.take(0)?, r.take(1)?, r.take(2)?, r.take(3)?)),
        )?;
        self.decode_deps(rows)
    }

    fn decode_deps(&self, rows: Vec<DepsRow>) -> Result<HashMap<TestId, TestDeps>> {
        // 10^5 bitmaps at a fleet's scale: decoded in parallel
        let parallel = rows.len() >= DEPS_IN_PARALLEL;
        par_map(rows, parallel, |(t, definition, deps, unknown)| {
            let states = match deps {
                Some(b) => blob::decode_bitmap(&b).map_err(|e| (t, e))?,
                None => RoaringBitmap::new(),
            };
            Ok((TestId(t), TestDeps { definition, states, unknown }))
        })
        .into_iter()
        .collect::<std::result::Result<Vec<_>, (i64, String)>>()
        .map(|v| {
            let mut m = HashMap::with_capacity(v.len());
            m.extend(v);
            m
        })
        .map_err(|(t, e)| self.corrupt(format!("dependencies of test {t}: {e}")))
    }

    /// Starts a run on a snapshot. `kind`: `full`, `selected`, `audit-old`, `audit-new`, ...
    pub fn begin_run(&mut self, snapshot: SnapshotId, kind: &str) -> Result<RunId> {
        let t = now();
        self.write(|tx| {
            tx.row(
                "INSERT INTO runs(snapshot, kind, started) VALUES (?1, ?2, ?3) RETURNING id",
                p![snapshot.0, kind, t.as_str()],
                |r| r.get(0),
            )?
            .map(RunId)
            .ok_or_else(|| DbError::Value("no id for a new run".into()))
        })
    }

    /// A run by id.
    pub fn run_info(&self, run: RunId) -> Result<RunInfo> {
        self.one("SELECT id, snapshot, kind, started, finished FROM runs WHERE id = ?1", p![run.0], |r| {
            Ok(RunInfo {
                id: RunId(r.get(0)?),
                snapshot: SnapshotId(r.get(1)?),
                kind: r.get(2)?,
                started: r.get(3)?,
                finished: r.get(4)?,
            })
        })?
        .ok_or(StoreError::Missing { what: "run", id: run.0 })
    }

    /// Copies a run of another store into this one, on `snapshot`: its kind
    /// and times, and the results of some of its tests (by this store's test
    /// ids). Returns the new run's id.
    pub fn import_run(&mut self, snapshot: SnapshotId, run: &RunInfo, results: &[ImportedResult]) -> Result<RunId> {
        self.write(|tx| {
            let id: i64 = tx
                .row(
                    "INSERT INTO runs(snapshot, kind, started, finished) VALUES (?1, ?2, ?3, ?4) RETURNING id",
                    p![snapshot.0, &run.kind, &run.started, &run.finished],
                    |r| r.get(0),
                )?
                .ok_or_else(|| DbError::Value("no id for an imported run".into()))?;
            for r in results {
                let o = &r.outcome;
                let (state, note) = match &r.coverage {
                    CoverageState::Known => ("ok", None),
                    CoverageState::Unknown(why) => ("unknown", Some(why.as_str())),
                };
                tx.exec(
                    "INSERT INTO results(run, test, status, code, stdout_hash, stderr_hash, duration_ms, coverage, note, stopped)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    p![
                        id,
                        r.test.0,
                        &o.status,
                        o.code,
                        o.stdout_hash.map(|h| h.to_vec()),
                        o.stderr_hash.map(|h| h.to_vec()),
                        o.duration.as_millis() as i64,
                        state,
                        note,
                        r.stopped
                    ],
                )?;
            }
            Ok(RunId(id))
        })
    }

    /// The newest finished run of `kind` on a snapshot.
    pub fn latest_run(&self, snapshot: SnapshotId, kind: &str) -> Result<Option<RunId>> {
        Ok(self
            .one(
                "SELECT id FROM runs WHERE snapshot = ?1 AND kind = ?2 AND finished IS NOT NULL ORDER BY id DESC LIMIT 1",
                p![snapshot.0, kind],
                |r| r.get(0),
            )?
            .map(RunId))
    }

    /// Marks a run finished. When its results went into `matrix`'s coverage, the
    /// same transaction also builds the `TestsOnEdge` index of every unit of that
    /// matrix whose index is missing (recording coverage removed it), so that
    /// selection reads it instead of building it. A run killed before this
    /// leaves those indexes missing; reading one then builds it.
    pub fn finish_run(&mut self, run: RunId, matrix: Option<SnapshotId>) -> Result<()> {
        let t = now();
        self.write(|tx| {
            tx.exec("UPDATE runs SET finished = ?1 WHERE id = ?2", p![t.as_str(), run.0])?;
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
        // Statements are prepared once per connection (cached): this runs
        // once per test, and preparing them anew cost about a fifth of
        // `retest run`'s own time on short tests.
        self.write(|tx| {
            tx.exec(
                "INSERT INTO results(run, test, status, code, stdout_hash, stderr_hash, duration_ms, coverage, note, stopped)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT(run, test) DO UPDATE SET status = excluded.status, code = excluded.code,
                   stdout_hash = excluded.stdout_hash, stderr_hash = excluded.stderr_hash,
                   duration_ms = excluded.duration_ms, coverage = excluded.coverage, note = excluded.note,
                   stopped = excluded.stopped",
                p![
                    run.0,
                    rec.test.0,
                    &o.status,
                    o.code,
                    o.stdout_hash.map(|h| h.to_vec()),
                    o.stderr_hash.map(|h| h.to_vec()),
                    o.duration.as_millis() as i64,
                    state,
                    &reason,
                    rec.coverage.is_ok().then_some(rec.stopped)
                ],
            )?;
            if let Some(m) = into_matrix {
                // the units whose index changes: those the test covered before and now
                let mut touched: Vec<i64> = tx.rows(
                    "SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2",
                    p![m.0, rec.test.0],
                    |r| r.get(0),
                )?;
                touched.extend(blobs.iter().map(|(u, _)| *u));
                tx.exec("DELETE FROM coverage WHERE snapshot = ?1 AND test = ?2", p![m.0, rec.test.0])?;
                tx.exec("DELETE FROM recordings WHERE snapshot = ?1 AND test = ?2", p![m.0, rec.test.0])?;
                for (u, b) in &blobs {
                    tx.exec(
                        "INSERT INTO coverage(snapshot, test, unit, edges) VALUES (?1, ?2, ?3, ?4)",
                        p![m.0, rec.test.0, u, b],
                    )?;
                }
                for (u, b) in &recorded {
                    tx.exec(
                        "INSERT INTO recordings(snapshot, test, unit, data) VALUES (?1, ?2, ?3, ?4)",
                        p![m.0, rec.test.0, u, b],
                    )?;
                }
                tx.exec(
                    "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT(snapshot, test) DO UPDATE SET run = excluded.run, state = excluded.state, reason = excluded.reason,
                       definition = excluded.definition, deps = excluded.deps, deps_unknown = excluded.deps_unknown",
                    p![m.0, rec.test.0, run.0, state, &reason, &definition, &deps, &deps_unknown],
                )?;
                touched.sort();
                touched.dedup();
                for u in touched {
                    drop_index(tx, m, u)?;
                }
            }
            Ok(())
        })
    }

    /// Outcomes of a run, by test id.
    pub fn run_results(&self, run: RunId) -> Result<HashMap<TestId, Outcome>> {
        let rows = self.all(
            "SELECT test, status, code, stdout_hash, stderr_hash, duration_ms FROM results WHERE run = ?1",
            p![run.0],
            |r| {
                let h = |v: Option<Vec<u8>>| v.and_then(|v| v.try_into().ok());
                Ok((
                    TestId(r.get(0)?),
                    Outcome {
                        status: r.get(1)?,
                        code: r.get(2)?,
                        stdout_hash: h(r.get(3)?),
                        stderr_hash: h(r.get(4)?),
                        duration: Duration::from_millis(r.get::<i64>(5)? as u64),
                    },
                ))
            },
        )?;
        Ok(rows.into_iter().collect())
    }

    /// The tests of a snapshot's coverage matrix and their state.
    pub fn matrix_tests(&self, snapshot: SnapshotId) -> Result<Vec<MatrixTest>> {
        let mut matrix = Vec::new();
        self.conn
            .each_borrowed(
                "SELECT m.test, t.name, COALESCE(t.label, t.name), m.run, m.state, m.reason, r.stopped
                 FROM matrix_tests m JOIN tests t ON t.id = m.test
                 LEFT JOIN results r ON r.run = m.run AND r.test = m.test
                 WHERE m.snapshot = ?1 ORDER BY m.test",
                p![snapshot.0],
                |r| {
                    matrix.push(matrix_test(&r)?);
                    Ok(())
                },
            )
            .map_err(|e| self.sql(e))?;
        Ok(matrix)
    }

    /// [`Store::matrix_tests`] and [`Store::matrix_deps`] (test by test, as
    /// the matrix: the dependencies of `matrix[i]` are `deps[i]`) in one read of the
    /// matrix, and the suite's tests it lacks ([`Store::missing_tests`]): what
    /// a selection reads per test (10^5 rows at a fleet's scale). Whether a
    /// run was stopped part-way is not read (`stopped` is `None`): a
    /// selection does not ask, and it would cost a look-up per test.
    #[allow(clippy::type_complexity)]
    pub fn matrix_for_selection(
        &self,
        snapshot: SnapshotId,
    ) -> Result<(Vec<MatrixTest>, Vec<Option<TestDeps>>, Option<Vec<TestInfo>>)> {
        // room for every test there is, reserved before the read: grown row
        // by row, the vectors were copied and their fresh pages zeroed
        // again at each doubling (a third of a selection's page faults at
        // 10^5 tests); pages reserved and not written cost nothing
        let tests: Option<i64> = self.one("SELECT MAX(id) FROM tests", p![], |r| r.get(0))?.flatten();
        let room = tests.map_or(0, |n| n.clamp(0, 1 << 24) as usize);
        let mut matrix: Vec<MatrixTest> = Vec::with_capacity(room);
        let mut deps: Vec<Option<TestDeps>> = Vec::with_capacity(room);
        // values borrowed from the row, copied only where kept; each test's
        // file states decoded from the row's own bytes
        self.conn
            .each_borrowed(
                "SELECT m.test, t.name, COALESCE(t.label, t.name), m.run, m.state, m.reason, CAST(NULL AS BIGINT),
                        m.definition, m.deps, m.deps_unknown
                 FROM matrix_tests m JOIN tests t ON t.id = m.test
                 WHERE m.snapshot = ?1 ORDER BY m.test",
                p![snapshot.0],
                |r| {
                    let m = matrix_test(&r)?;
                    let test = m.test;
                    matrix.push(m);
                    deps.push(match r.text(7)? {
                        Some(definition) => {
                            let states = match r.blob(8)? {
                                Some(b) => blob::decode_bitmap(b)
                                    .map_err(|e| DbError::Value(format!("dependencies of test {}: {e}", test.0)))?,
                                None => RoaringBitmap::new(),
                            };
                            let unknown = r.text(9)?.map(str::to_owned);
                            Some(TestDeps { definition: definition.to_owned(), states, unknown })
                        }
                        None => None,
                    });
                    Ok(())
                },
            )
            .map_err(|e| self.sql(e))?;
        let missing = match self.suite(snapshot)? {
            None => None,
            Some(mut unrecorded) => {
                for m in &matrix {
                    if let Ok(t) = u32::try_from(m.test.0) {
                        unrecorded.remove(t);
                    }
                }
                Some(self.tests_among(&unrecorded)?)
            }
        };
        Ok((matrix, deps, missing))
    }

    /// The tests whose newest known coverage, in any matrix, covers something:
    /// the tests that ran instrumented code the last time their coverage was
    /// recorded (rows of unknown coverage are passed over).
    pub fn tests_that_ran_code(&self) -> Result<std::collections::HashSet<TestId>> {
        let rows = self.all(
            "SELECT newest.test FROM
               (SELECT test, MAX(snapshot) AS snapshot FROM matrix_tests WHERE state = 'ok' GROUP BY test) newest
             WHERE EXISTS (SELECT 1 FROM coverage c WHERE c.snapshot = newest.snapshot AND c.test = newest.test)",
            p![],
            |r| Ok(TestId(r.get(0)?)),
        )?;
        Ok(rows.into_iter().collect())
    }

    /// One test's coverage in a matrix: per unit, the covered edges.
    pub fn test_coverage(&self, snapshot: SnapshotId, test: TestId) -> Result<Vec<(UnitId, RoaringBitmap)>> {
        let rows: Vec<(i64, Vec<u8>)> = self.all(
            "SELECT unit, edges FROM coverage WHERE snapshot = ?1 AND test = ?2 ORDER BY unit",
            p![snapshot.0, test.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
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
        let rows: Vec<(i64, Vec<u8>)> = self.all(
            "SELECT test, edges FROM coverage WHERE snapshot = ?1 AND unit = ?2 ORDER BY test",
            p![snapshot.0, unit.0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
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

    fn recorded_rows(&self, sql: &'static str, snapshot: SnapshotId, key: i64) -> Result<Vec<(i64, Recorded)>> {
        let rows: Vec<(i64, Vec<u8>)> = self.all(sql, p![snapshot.0, key], |r| Ok((r.get(0)?, r.get(1)?)))?;
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
        self.index_part(snapshot, unit, None).map(|(_, idx)| idx)
    }

    /// `TestsOnEdge` for the block of one unit's index that holds `edge`:
    /// the edges the returned index is complete for (every edge in the range
    /// that any test traversed is in it), and the index. Only that block is
    /// read when the unit's index is stored; a missing one is built as
    /// [`Store::edge_index`] builds it, and the range is every edge.
    pub fn edge_index_block(
        &mut self,
        snapshot: SnapshotId,
        unit: UnitId,
        edge: u32,
    ) -> Result<(std::ops::Range<u32>, EdgeIndex)> {
        self.index_part(snapshot, unit, Some(edge))
    }

    fn index_part(
        &mut self,
        snapshot: SnapshotId,
        unit: UnitId,
        edge: Option<u32>,
    ) -> Result<(std::ops::Range<u32>, EdgeIndex)> {
        let read = |conn: &Conn, block: u32| -> DbResult<(std::ops::Range<u32>, EdgeIndex)> {
            match edge {
                Some(e) => {
                    let b = e / block;
                    let start = b * block;
                    Ok((start..start.saturating_add(block), read_blocks(conn, snapshot, unit, Some(b))?))
                }
                None => Ok((0..u32::MAX, read_blocks(conn, snapshot, unit, None)?)),
            }
        };
        let whole = |idx: EdgeIndex| (0..u32::MAX, idx);
        let view = self.conn.in_transaction();
        let known = if view { self.marks.borrow().get(&(snapshot, unit)).copied() } else { None };
        let mark = match known {
            Some(m) => m,
            None => index_mark(&self.conn, snapshot, unit).map_err(|e| self.sql(e))?,
        };
        if view {
            self.marks.borrow_mut().insert((snapshot, unit), mark);
        }
        let part = match mark {
            Some(block) => read(&self.conn, block).map_err(|e| self.sql(e))?,
            // inside a read view: built from the view's coverage, not stored
            None if view => whole(transpose(&self.conn, snapshot, unit).map_err(|e| self.sql(e))?.finish()),
            None => self.write(|tx| match index_mark(tx, snapshot, unit)? {
                Some(block) => read(tx, block),
                None => build_index(tx, snapshot, unit).map(whole),
            })?,
        };
        Ok(part)
    }

    /// Builds and stores the edge index of every unit of a matrix that has
    /// none (a run killed before it finished leaves them missing), so that
    /// reads — in a read view too — find them stored.
    pub fn store_missing_indexes(&mut self, snapshot: SnapshotId) -> Result<()> {
        // looked for without a write lock first: every selection asks, and
        // the answer is almost always none
        if self.conn.rows(UNITS_WITHOUT_INDEX, p![snapshot.0], |r| r.get::<i64>(0)).map_err(|e| self.sql(e))?.is_empty()
        {
            return Ok(());
        }
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
                tx.exec(
                    "DELETE FROM edge_blocks WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    p![snapshot.0, t],
                )?;
                tx.exec(
                    "DELETE FROM edge_index WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    p![snapshot.0, t],
                )?;
                delete_row(tx, snapshot, *t)?;
            }
            index_missing(tx, snapshot)
        })
    }

    /// Copies a matrix wholesale (used when a build changes nothing observable).
    pub fn copy_matrix(&mut self, from: SnapshotId, to: SnapshotId) -> Result<()> {
        self.write(|tx| {
            clear_matrix(tx, to)?;
            tx.exec(
                "INSERT INTO coverage(snapshot, test, unit, edges) SELECT CAST(?1 AS BIGINT), test, unit, edges FROM coverage WHERE snapshot = ?2",
                p![to.0, from.0],
            )?;
            tx.exec(
                "INSERT INTO recordings(snapshot, test, unit, data) SELECT CAST(?1 AS BIGINT), test, unit, data FROM recordings WHERE snapshot = ?2",
                p![to.0, from.0],
            )?;
            tx.exec(
                "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
                 SELECT CAST(?1 AS BIGINT), test, run, state, reason, definition, deps, deps_unknown FROM matrix_tests WHERE snapshot = ?2",
                p![to.0, from.0],
            )?;
            tx.exec(
                "INSERT INTO edge_index(snapshot, unit, data) SELECT CAST(?1 AS BIGINT), unit, data FROM edge_index WHERE snapshot = ?2",
                p![to.0, from.0],
            )?;
            tx.exec(
                "INSERT INTO edge_blocks(snapshot, unit, block, data) SELECT CAST(?1 AS BIGINT), unit, block, data FROM edge_blocks WHERE snapshot = ?2",
                p![to.0, from.0],
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
            clear_matrix(tx, snapshot)?;
            insert_rows(tx, snapshot, &rows)?;
            index_missing(tx, snapshot)?;
            if advance {
                // the whole matrix: its tests are the suite
                tx.exec("UPDATE snapshots SET suite = ?1 WHERE id = ?2", p![&suite, snapshot.0])?;
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
            tx.exec(
                "UPDATE snapshots SET suite = ?1, origin = COALESCE(?2, origin) WHERE id = ?3",
                p![suite, origin.map(|o| o.0), snapshot.0],
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
            let gone: Vec<i64> = tx
                .rows("SELECT test FROM matrix_tests WHERE snapshot = ?1", p![snapshot.0], |r| r.get::<i64>(0))?
                .into_iter()
                .filter(|t| u32::try_from(*t).map_or(true, |t| !bits.contains(t)))
                .collect();
            for t in &gone {
                tx.exec(
                    "DELETE FROM edge_blocks WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    p![snapshot.0, t],
                )?;
                tx.exec(
                    "DELETE FROM edge_index WHERE snapshot = ?1 AND unit IN (SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2)",
                    p![snapshot.0, t],
                )?;
                delete_row(tx, snapshot, *t)?;
            }
            index_missing(tx, snapshot)?;
            tx.exec("UPDATE snapshots SET suite = ?1 WHERE id = ?2", p![encoded, snapshot.0])?;
            make_baseline_in(tx, snapshot)
        })
    }

    /// The suite a snapshot's matrix is to cover, as the last full or sharded
    /// run on it recorded it (`None`: no such run recorded one).
    pub fn suite(&self, snapshot: SnapshotId) -> Result<Option<RoaringBitmap>> {
        let data: Option<Vec<u8>> = self
            .one("SELECT suite FROM snapshots WHERE id = ?1", p![snapshot.0], |r| r.get(0))?
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
        let Some(mut unrecorded) = self.suite(snapshot)? else { return Ok(None) };
        // the matrix's test ids only: the tests are read when one is missing
        for t in self.all("SELECT test FROM matrix_tests WHERE snapshot = ?1", p![snapshot.0], |r| r.get::<i64>(0))? {
            if let Ok(t) = u32::try_from(t) {
                unrecorded.remove(t);
            }
        }
        self.tests_among(&unrecorded).map(Some)
    }

    /// The tests of ids `ids`, by key.
    fn tests_among(&self, ids: &RoaringBitmap) -> Result<Vec<TestInfo>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut missing: Vec<TestInfo> =
            self.tests()?.into_iter().filter(|t| u32::try_from(t.id.0).is_ok_and(|i| ids.contains(i))).collect();
        missing.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(missing)
    }

    /// The baseline a sharded `run --selected` carried this snapshot's
    /// coverage over from, if one did.
    pub fn origin(&self, snapshot: SnapshotId) -> Result<Option<SnapshotId>> {
        self.one("SELECT origin FROM snapshots WHERE id = ?1", p![snapshot.0], |r| r.get::<Option<i64>>(0))?
            .ok_or(StoreError::Missing { what: "snapshot", id: snapshot.0 })
            .map(|o| o.map(SnapshotId))
    }

    /// Size of the database file in bytes (for reports).
    pub fn file_size(&self) -> u64 {
        if self.conn.is_postgres() {
            let size = self.one("SELECT pg_database_size(current_database())", p![], |r| r.get::<i64>(0));
            return size.ok().flatten().unwrap_or(0) as u64;
        }
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

fn insert_rows(tx: &Conn, snapshot: SnapshotId, rows: &[EncodedRow]) -> DbResult<()> {
    for (t, r, state, reason, cov, rec, (definition, deps, unknown)) in rows {
        tx.exec(
            "INSERT INTO matrix_tests(snapshot, test, run, state, reason, definition, deps, deps_unknown)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            p![snapshot.0, t, r, *state, reason, definition, deps, unknown],
        )?;
        for (u, b) in cov {
            tx.exec(
                "INSERT INTO coverage(snapshot, test, unit, edges) VALUES (?1, ?2, ?3, ?4)",
                p![snapshot.0, t, u, b],
            )?;
        }
        for (u, b) in rec {
            tx.exec(
                "INSERT INTO recordings(snapshot, test, unit, data) VALUES (?1, ?2, ?3, ?4)",
                p![snapshot.0, t, u, b],
            )?;
        }
    }
    Ok(())
}

/// Replaces the rows of these tests in a matrix and rebuilds the edge index
/// of every unit they covered before or cover now, inside the caller's
/// transaction.
fn replace_rows(tx: &Conn, snapshot: SnapshotId, rows: &[EncodedRow]) -> DbResult<()> {
    let mut touched: Vec<i64> = Vec::new();
    for r in rows {
        touched.extend(tx.rows(
            "SELECT unit FROM coverage WHERE snapshot = ?1 AND test = ?2",
            p![snapshot.0, r.0],
            |r| r.get::<i64>(0),
        )?);
        touched.extend(r.4.iter().map(|(u, _)| *u));
    }
    for r in rows {
        delete_row(tx, snapshot, r.0)?;
    }
    insert_rows(tx, snapshot, rows)?;
    touched.sort();
    touched.dedup();
    for u in touched {
        drop_index(tx, snapshot, u)?;
    }
    index_missing(tx, snapshot)
}

/// Removes one test's row from a matrix (its coverage and recordings too);
/// the caller deletes the edge index of the units it covered.
fn delete_row(tx: &Conn, snapshot: SnapshotId, test: i64) -> DbResult<()> {
    tx.exec("DELETE FROM coverage WHERE snapshot = ?1 AND test = ?2", p![snapshot.0, test])?;
    tx.exec("DELETE FROM recordings WHERE snapshot = ?1 AND test = ?2", p![snapshot.0, test])?;
    tx.exec("DELETE FROM matrix_tests WHERE snapshot = ?1 AND test = ?2", p![snapshot.0, test])?;
    Ok(())
}

/// Empties a snapshot's matrix and its edge index, inside the caller's transaction.
fn clear_matrix(tx: &Conn, snapshot: SnapshotId) -> DbResult<()> {
    tx.exec("DELETE FROM coverage WHERE snapshot = ?1", p![snapshot.0])?;
    tx.exec("DELETE FROM recordings WHERE snapshot = ?1", p![snapshot.0])?;
    tx.exec("DELETE FROM matrix_tests WHERE snapshot = ?1", p![snapshot.0])?;
    tx.exec("DELETE FROM edge_index WHERE snapshot = ?1", p![snapshot.0])?;
    tx.exec("DELETE FROM edge_blocks WHERE snapshot = ?1", p![snapshot.0])?;
    Ok(())
}

/// Seals a snapshot and makes it the baseline, inside the caller's transaction.
fn make_baseline_in(tx: &Conn, snapshot: SnapshotId) -> DbResult<()> {
    tx.exec("UPDATE snapshots SET state = 'sealed' WHERE id = ?1", p![snapshot.0])?;
    tx.exec(
        "INSERT INTO meta(key, value) VALUES ('baseline', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        p![snapshot.0.to_string()],
    )?;
    Ok(())
}

/// Test ids as a bitmap (they are row ids: positive and, in any store a
/// suite fits in, below 2³²).
fn suite_bitmap(suite: &[TestId]) -> Result<RoaringBitmap> {
    suite.iter().map(|t| u32::try_from(t.0).map_err(|_| StoreError::Missing { what: "test", id: t.0 })).collect()
}

/// The block size of a unit's stored index; `None` when it is not stored.
fn index_mark(conn: &Conn, snapshot: SnapshotId, unit: UnitId) -> DbResult<Option<u32>> {
    let data: Option<Vec<u8>> =
        conn.row("SELECT data FROM edge_index WHERE snapshot = ?1 AND unit = ?2", p![snapshot.0, unit.0], |r| {
            r.get(0)
        })?;
    data.map(|d| blob::decode_index_mark(&d).map_err(|e| bad_blob(format!("edge index of unit {}: {e}", unit.0))))
        .transpose()
}

/// One block of a unit's stored index, or all of them.
fn read_blocks(conn: &Conn, snapshot: SnapshotId, unit: UnitId, block: Option<u32>) -> DbResult<EdgeIndex> {
    let mut idx = EdgeIndex::default();
    let mut add = |r: Row| -> DbResult<()> {
        let part =
            blob::decode_index(r.blob(0)?).map_err(|e| bad_blob(format!("edge index of unit {}: {e}", unit.0)))?;
        idx.edges.extend(part.edges);
        Ok(())
    };
    match block {
        Some(b) => conn.each(
            "SELECT data FROM edge_blocks WHERE snapshot = ?1 AND unit = ?2 AND block = ?3",
            p![snapshot.0, unit.0, b],
            &mut add,
        )?,
        None => conn.each(
            "SELECT data FROM edge_blocks WHERE snapshot = ?1 AND unit = ?2",
            p![snapshot.0, unit.0],
            &mut add,
        )?,
    }
    Ok(idx)
}

/// Removes a unit's stored index (its mark and its blocks), inside the caller's transaction.
fn drop_index(tx: &Conn, snapshot: SnapshotId, unit: i64) -> DbResult<()> {
    tx.exec("DELETE FROM edge_index WHERE snapshot = ?1 AND unit = ?2", p![snapshot.0, unit])?;
    tx.exec("DELETE FROM edge_blocks WHERE snapshot = ?1 AND unit = ?2", p![snapshot.0, unit])?;
    Ok(())
}

fn bad_blob(what: String) -> DbError {
    DbError::Value(what)
}

/// Transposes per-test coverage rows of one unit into its `TestsOnEdge` index:
/// per edge, the tests that traversed it.
#[derive(Default)]
struct Transpose {
    per_edge: Vec<Vec<u32>>,
}

impl Transpose {
    fn add(&mut self, test: i64, unit: i64, edges: &[u8]) -> DbResult<()> {
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

    /// The index.
    fn finish(self) -> EdgeIndex {
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
        idx
    }
}

/// Stores one unit's index in blocks of [`EDGE_BLOCK`] edges, with the mark
/// that it is stored, replacing what was stored for it, inside the
/// caller's transaction.
fn store_index(tx: &Conn, snapshot: SnapshotId, unit: i64, idx: &EdgeIndex) -> DbResult<()> {
    drop_index(tx, snapshot, unit)?;
    let mut edges: Vec<(u32, &RoaringBitmap)> = idx.edges.iter().map(|(e, b)| (*e, b)).collect();
    edges.sort_by_key(|(e, _)| *e);
    for block in edges.chunk_by(|a, b| a.0 / EDGE_BLOCK == b.0 / EDGE_BLOCK) {
        tx.exec(
            "INSERT INTO edge_blocks(snapshot, unit, block, data) VALUES (?1, ?2, ?3, ?4)",
            p![snapshot.0, unit, block[0].0 / EDGE_BLOCK, blob::encode_edges(block)],
        )?;
    }
    tx.exec(
        "INSERT INTO edge_index(snapshot, unit, data) VALUES (?1, ?2, ?3)",
        p![snapshot.0, unit, blob::encode_index_mark(EDGE_BLOCK)],
    )?;
    Ok(())
}

/// One unit's coverage rows, transposed.
fn transpose(conn: &Conn, snapshot: SnapshotId, unit: UnitId) -> DbResult<Transpose> {
    let mut t = Transpose::default();
    conn.each("SELECT test, edges FROM coverage WHERE snapshot = ?1 AND unit = ?2", p![snapshot.0, unit.0], |r| {
        t.add(r.get(0)?, unit.0, r.blob(1)?)
    })?;
    Ok(t)
}

/// Builds and stores one unit's index inside the caller's transaction.
fn build_index(tx: &Conn, snapshot: SnapshotId, unit: UnitId) -> DbResult<EdgeIndex> {
    let idx = transpose(tx, snapshot, unit)?.finish();
    store_index(tx, snapshot, unit.0, &idx)?;
    Ok(idx)
}

/// Builds, inside the caller's transaction, the index of every unit of a matrix
/// (its snapshot's units and any unit it has coverage of) that has none, from
/// one pass over the matrix's coverage.
/// The units of a snapshot, or of its coverage, whose edge index is not
/// stored. The coverage's units are found by skipping through its index by
/// unit, one look-up per unit, rather than by reading every row (10^5 tests
/// × their units at a fleet's scale).
const UNITS_WITHOUT_INDEX: &str = "
    WITH RECURSIVE covered(unit) AS (
        SELECT (SELECT min(unit) FROM coverage WHERE snapshot = ?1)
        UNION ALL
        SELECT (SELECT min(unit) FROM coverage WHERE snapshot = ?1 AND unit > covered.unit)
        FROM covered WHERE covered.unit IS NOT NULL
    )
    SELECT unit FROM snapshot_units WHERE snapshot = ?1
    UNION SELECT unit FROM covered WHERE unit IS NOT NULL
    EXCEPT SELECT unit FROM edge_index WHERE snapshot = ?1";

fn index_missing(tx: &Conn, snapshot: SnapshotId) -> DbResult<()> {
    let mut missing: HashMap<i64, Transpose> =
        tx.rows(UNITS_WITHOUT_INDEX, p![snapshot.0], |r| Ok((r.get(0)?, Transpose::default())))?.into_iter().collect();
    if missing.is_empty() {
        return Ok(());
    }
    tx.each("SELECT test, unit, edges FROM coverage WHERE snapshot = ?1", p![snapshot.0], |r| {
        let unit: i64 = r.get(1)?;
        if let Some(t) = missing.get_mut(&unit) {
            t.add(r.get(0)?, unit, r.blob(2)?)?;
        }
        Ok(())
    })?;
    let mut units: Vec<(i64, Transpose)> = missing.into_iter().collect();
    units.sort_by_key(|(u, _)| *u);
    for (u, t) in units {
        store_index(tx, snapshot, u, &t.finish())?;
    }
    Ok(())
}

/// `items` mapped by `f`, on every core when `parallel`, else on the
/// calling thread: starting the thread pool (its threads, each with a heap
/// of fresh pages) costs a short command more than a small loop saves.
fn par_map<T: Send, R: Send>(items: Vec<T>, parallel: bool, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    if parallel { items.into_par_iter().map(f).collect() } else { items.into_iter().map(f).collect() }
}

/// Units' blobs decoded with `decode`, several in parallel (decoding is
/// most of what reading a unit costs).
fn decode_blobs<T: Send>(
    blobs: Vec<(UnitId, Vec<u8>)>,
    decode: fn(Vec<u8>) -> std::result::Result<T, String>,
) -> Decoded<T> {
    let bytes: usize = blobs.iter().map(|(_, b)| b.len()).sum();
    par_map(blobs, bytes >= UNITS_IN_PARALLEL, |(id, data)| (id, decode(data)))
}

/// A unit as [`Store::units_lazy`] decodes it: a shell with its bodies, or
/// (an older encoding) whole.
type LazyUnit = (Unit, Option<StoredBodies>);

/// Units decoded, or why each did not decode.
type Decoded<T> = Vec<(UnitId, std::result::Result<T, String>)>;

/// A store waits for the units it decodes ahead before it closes: the
/// thread's connection closes first, and the store's, the last, empties the
/// write-ahead log (`a_store_dropped_while_units_decode_ahead_closes_last`).
impl Drop for Store {
    fn drop(&mut self) {
        if let Some(ahead) = self.ahead.get_mut().take() {
            let _ = ahead.decoding.join();
        }
    }
}

/// Units being read and decoded on a thread of their own
/// ([`Store::decode_units_ahead`]); `None` from the thread if it could not
/// read them.
struct Ahead {
    ids: Vec<UnitId>,
    decoding: std::thread::JoinHandle<Option<Decoded<LazyUnit>>>,
}

/// A SQLite database file opened to read only, waiting for writers as the
/// store's connections do.
fn open_read_only(db: &Path) -> rusqlite::Result<Connection> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(db, flags)?;
    c.busy_timeout(Duration::from_secs(120))?;
    Ok(c)
}

/// A unit's blob, read through `conn`.
fn unit_blob_on(conn: &Conn, id: UnitId) -> DbResult<Option<Vec<u8>>> {
    conn.row("SELECT data FROM units WHERE id = ?1", p![id.0], |r| r.take(0))
}

/// Where a thread of its own connects to read units ([`Store::decode_units_ahead`]).
enum Reader {
    /// The database file, opened to read only.
    Sqlite(PathBuf),
    /// The PostgreSQL store's URL.
    Postgres(String),
}

impl Reader {
    fn connect(&self) -> Option<Conn> {
        match self {
            Reader::Sqlite(db) => open_read_only(db).ok().map(Conn::Sqlite),
            Reader::Postgres(url) => postgres::Client::connect(url, postgres::NoTls).ok().map(Conn::postgres),
        }
    }
}

/// Units are decoded on every core from this many stored bytes. A jansson
/// `select` decoding 54 units (2.3 MB) took 0.98–0.99 times as long on one
/// thread, touching 10 huge pages instead of 15.
const UNITS_IN_PARALLEL: usize = 8 << 20;
/// Units are read and decoded ahead on a thread of their own from this many
/// condition-level edges (about a megabyte stored, a few milliseconds of
/// decoding; a jansson header change compares units of 10^4 edges).
const UNITS_AHEAD: i64 = 100_000;
/// Units' facts are decoded on every core from this many units (a few
/// microseconds each).
const FACTS_IN_PARALLEL: usize = 1024;
/// Tests' dependency bitmaps are decoded on every core from this many tests.
const DEPS_IN_PARALLEL: usize = 2048;

/// A unit read for selection: its shell and its bodies ([`Store::units_lazy`]).
type Shell = (Rc<Unit>, Rc<StoredBodies>);

/// A matrix row's test, definition, dependencies (a bitmap) and why they are unknown.
type DepsRow = (i64, String, Option<Vec<u8>>, Option<String>);

/// A row of `matrix_tests` joined with its test and result (columns 0–6).
fn matrix_test(r: &db::Borrowed<'_, '_>) -> DbResult<MatrixTest> {
    let missing = |what: &str| DbError::Value(format!("a matrix row without its {what}"));
    Ok(MatrixTest {
        test: TestId(r.int(0)?.ok_or_else(|| missing("test"))?),
        key: r.text(1)?.ok_or_else(|| missing("key"))?.to_owned(),
        name: r.text(2)?.ok_or_else(|| missing("name"))?.to_owned(),
        run: RunId(r.int(3)?.ok_or_else(|| missing("run"))?),
        state: match r.text(4)?.ok_or_else(|| missing("state"))? {
            "ok" => CoverageState::Known,
            _ => CoverageState::Unknown(r.text(5)?.unwrap_or("coverage unknown").to_owned()),
        },
        stopped: r.int(6)?.map(|s| s != 0),
    })
}

fn row_snapshot(r: &Row) -> DbResult<Snapshot> {
    let state: String = r.get(2)?;
    Ok(Snapshot {
        id: SnapshotId(r.get(0)?),
        created: r.get(1)?,
        state: if state == "open" { SnapshotState::Open } else { SnapshotState::Sealed },
        parent: r.get::<Option<i64>>(3)?.map(SnapshotId),
    })
}

#[cfg(test)]
mod tests;
