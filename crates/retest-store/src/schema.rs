//! The schema, its version, and migrations.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::db::{Conn, DbError, DbResult, p};
use crate::{StoreError, blob};

/// The schema version this retest writes and reads.
pub const VERSION: i64 = 9;

pub(crate) const V1: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE units(
    id INTEGER PRIMARY KEY,
    src_hash BLOB NOT NULL UNIQUE,
    edges INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE builds(
    id INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,
    unit INTEGER NOT NULL REFERENCES units(id),
    cells INTEGER NOT NULL,
    plan BLOB NOT NULL
);
CREATE TABLE snapshots(
    id INTEGER PRIMARY KEY,
    created TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('open', 'sealed')),
    parent INTEGER REFERENCES snapshots(id)
);
CREATE TABLE snapshot_units(
    snapshot INTEGER NOT NULL REFERENCES snapshots(id),
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    unit INTEGER NOT NULL REFERENCES units(id),
    build INTEGER REFERENCES builds(id),
    flags TEXT NOT NULL,
    PRIMARY KEY (snapshot, key)
) WITHOUT ROWID;
CREATE TABLE tests(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, cmd TEXT NOT NULL);
CREATE TABLE runs(
    id INTEGER PRIMARY KEY,
    snapshot INTEGER NOT NULL REFERENCES snapshots(id),
    kind TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT
);
CREATE TABLE results(
    run INTEGER NOT NULL REFERENCES runs(id),
    test INTEGER NOT NULL REFERENCES tests(id),
    status TEXT NOT NULL,
    code INTEGER,
    stdout_hash BLOB,
    stderr_hash BLOB,
    duration_ms INTEGER NOT NULL,
    coverage TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (run, test)
) WITHOUT ROWID;
CREATE TABLE matrix_tests(
    snapshot INTEGER NOT NULL REFERENCES snapshots(id),
    test INTEGER NOT NULL REFERENCES tests(id),
    run INTEGER NOT NULL REFERENCES runs(id),
    state TEXT NOT NULL CHECK (state IN ('ok', 'unknown')),
    reason TEXT,
    PRIMARY KEY (snapshot, test)
) WITHOUT ROWID;
CREATE TABLE coverage(
    snapshot INTEGER NOT NULL,
    test INTEGER NOT NULL,
    unit INTEGER NOT NULL,
    edges BLOB NOT NULL,
    PRIMARY KEY (snapshot, test, unit)
) WITHOUT ROWID;
CREATE INDEX coverage_by_unit ON coverage(snapshot, unit, test);
CREATE TABLE edge_index(
    snapshot INTEGER NOT NULL,
    unit INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (snapshot, unit)
) WITHOUT ROWID;
";

/// Version 2: what builds record beyond edges (`retest cc --mcdc`, `--paths`)
/// and, per test and unit, what they recorded.
pub(crate) const V2: &str = "
ALTER TABLE builds ADD COLUMN recording BLOB;
CREATE TABLE recordings(
    snapshot INTEGER NOT NULL,
    test INTEGER NOT NULL,
    unit INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (snapshot, test, unit)
) WITHOUT ROWID;
CREATE INDEX recordings_by_unit ON recordings(snapshot, unit, test);
";

/// Version 3: units in the binary encoding (blob tag 2) instead of JSON (tag 1).
/// The schema is unchanged; each unit blob is re-encoded. A blob that does not
/// decode is left as it is (reading it reports the damage, as before).
fn v3(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let old: Vec<(i64, Vec<u8>)> = {
        let mut st = tx.prepare("SELECT id, data FROM units")?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    let mut up = tx.prepare("UPDATE units SET data = ?1 WHERE id = ?2")?;
    for (id, data) in old {
        if blob::unit_is_current(&data) {
            continue;
        }
        if let Ok(unit) = blob::decode_unit(&data) {
            up.execute(params![blob::encode_unit(&unit), id])?;
        }
    }
    Ok(())
}

/// Version 4: per test result, whether its coverage claims what code stopped
/// part-way may have run (a trace flagged `SIGNAL`, `THREADS` or `HANDLER`);
/// NULL for results recorded before (not known).
pub(crate) const V4: &str = "ALTER TABLE results ADD COLUMN stopped INTEGER;";

/// Version 5: what a test depends on beyond the code. A test's `name` is its
/// identity (its key: a universe test's command), `label` the name it is
/// shown by when that differs; each matrix row keeps the test's definition
/// (JSON), the file states it depended on (a roaring bitmap of `dep_states`
/// ids) or why they are unknown; per unit the project files the wrapper
/// analysed for it, and per snapshot the files the wrapper wrote. Rows
/// recorded before read as "not recorded".
pub(crate) const V5: &str = "
ALTER TABLE tests ADD COLUMN label TEXT;
ALTER TABLE matrix_tests ADD COLUMN definition TEXT;
ALTER TABLE matrix_tests ADD COLUMN deps BLOB;
ALTER TABLE matrix_tests ADD COLUMN deps_unknown TEXT;
CREATE TABLE dep_states(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    kind INTEGER NOT NULL,
    hash BLOB NOT NULL,
    stamp BLOB,
    UNIQUE (path, kind, hash)
);
CREATE TABLE unit_sources(
    unit INTEGER NOT NULL REFERENCES units(id),
    path TEXT NOT NULL,
    hash BLOB NOT NULL,
    stamp BLOB,
    PRIMARY KEY (unit, path)
) WITHOUT ROWID;
CREATE TABLE snapshot_outputs(
    snapshot INTEGER NOT NULL REFERENCES snapshots(id),
    path TEXT NOT NULL,
    PRIMARY KEY (snapshot, path)
) WITHOUT ROWID;
";

/// Version 6: sharded runs. Per snapshot, the *suite* its matrix is to
/// cover (a roaring bitmap of test ids, written by every full or sharded
/// run): the matrix is complete when every test of it has a row; and the
/// *origin*, the baseline a sharded `run --selected` carried coverage over
/// from, so that every shard selects against the same version. NULL for
/// snapshots recorded before (their completeness is not known).
fn v6(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    // a store taken back to an older version by hand may have them already
    if !has_column(tx, "snapshots", "suite")? {
        tx.execute_batch("ALTER TABLE snapshots ADD COLUMN suite BLOB;")?;
    }
    if !has_column(tx, "snapshots", "origin")? {
        tx.execute_batch("ALTER TABLE snapshots ADD COLUMN origin INTEGER REFERENCES snapshots(id);")?;
    }
    Ok(())
}

/// Version 7: the edge index in blocks. `TestsOnEdge` of a unit is stored
/// as rows of `edge_blocks`, one per block of [`crate::EDGE_BLOCK`]
/// consecutive edges that any test traversed, so that a selection reads
/// only the blocks holding its dangerous edges; `edge_index` keeps one row
/// per unit whose index is stored (its `data`: the block size), the mark
/// that the blocks are complete. The whole-unit indexes of older stores are
/// dropped: the index is derived, and the next write (or read) builds it.
/// (A store taken back to an older version by hand may have the table.)
pub(crate) const V7: &str = "
DELETE FROM edge_index;
CREATE TABLE IF NOT EXISTS edge_blocks(
    snapshot INTEGER NOT NULL,
    unit INTEGER NOT NULL,
    block INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (snapshot, unit, block)
) WITHOUT ROWID;
DELETE FROM edge_blocks;
";

/// Version 8: per unit, its [`crate::UnitFacts`] (`units.facts`): what a
/// selection needs of a unit it leaves undecoded because the change did not
/// touch it (NULL for units stored before; `Store::store_missing_facts`
/// fills them in). And a test's recording (`recordings.data`) may hold
/// execution counts (`retest build --counts`), in a second encoding of the
/// blob (`blob::encode_recorded`) that older versions cannot read;
/// recordings without counts keep the first encoding.
fn v8(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    if !has_column(tx, "units", "facts")? {
        tx.execute_batch("ALTER TABLE units ADD COLUMN facts BLOB;")?;
    }
    Ok(())
}

/// Version 9: units may be stored in blob encoding 5, each procedure's
/// summary and body length ahead of its body (bodies decode on demand),
/// which older versions cannot read; units stored before keep their
/// encoding. And a unit's facts move to their own table, `unit_facts`:
/// SQLite stores a row's columns in order, so reading `units.facts` walked
/// the overflow pages of the unit's `data` before it (a few megabytes a
/// unit) — reading the facts of 100 units took longer than decoding the
/// changed ones.
pub(crate) const V9: &str = "
CREATE TABLE IF NOT EXISTS unit_facts(
    unit INTEGER PRIMARY KEY,
    data BLOB NOT NULL
);
INSERT INTO unit_facts(unit, data) SELECT id, facts FROM units WHERE facts IS NOT NULL
    ON CONFLICT(unit) DO NOTHING;
ALTER TABLE units DROP COLUMN facts;
";

fn has_column(tx: &Transaction<'_>, table: &str, column: &str) -> rusqlite::Result<bool> {
    let mut st = tx.prepare(&format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"))?;
    st.exists([column])
}

/// To version 5. Two lines of development each called their step version 4:
/// a store at version 4 has either the results' `stopped` column ([`V4`]) or
/// the tables of [`V5`] (`tests.label` tells which), and gains what it lacks.
fn v5(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    if !has_column(tx, "results", "stopped")? {
        tx.execute_batch(V4)?;
    }
    if !has_column(tx, "tests", "label")? {
        tx.execute_batch(V5)?;
    }
    Ok(())
}

/// One step of the schema's history.
enum Step {
    Sql(&'static str),
    Code(fn(&Transaction<'_>) -> rusqlite::Result<()>),
}

/// The steps from version `i + 1` to `i + 2`.
const STEPS: &[Step] = &[
    Step::Sql(V2),
    Step::Code(v3),
    Step::Sql(V4),
    Step::Code(v5),
    Step::Code(v6),
    Step::Sql(V7),
    Step::Code(v8),
    Step::Sql(V9),
];

/// Creates the schema in an empty database: version 1, then every step.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(V1)?;
    tx.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')", [])?;
    tx.commit()?;
    upgrade(conn)
}

fn version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get::<_, String>(0))
        .optional()
        .map(|v| v.and_then(|v| v.parse().ok()))
}

/// Brings a store to [`VERSION`], one IMMEDIATE transaction per step; each step
/// re-reads the version inside its transaction, so two processes opening an old
/// store at once apply every step exactly once.
fn upgrade(conn: &Connection) -> rusqlite::Result<()> {
    loop {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let found = version(&tx)?.unwrap_or(VERSION);
        if found >= VERSION {
            return tx.commit();
        }
        match &STEPS[(found - 1).max(0) as usize] {
            Step::Sql(sql) => tx.execute_batch(sql)?,
            Step::Code(f) => f(&tx)?,
        }
        tx.execute("UPDATE meta SET value = ?1 WHERE key = 'schema_version'", [(found + 1).to_string()])?;
        tx.commit()?;
    }
}

/// The schema version a store was written with.
pub fn found_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let sql = |source| StoreError::Sqlite { path: path.to_path_buf(), source };
    let found: Option<String> =
        conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).map_err(sql).ok();
    found.and_then(|v| v.parse().ok()).ok_or_else(|| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: "no schema version (not a retest store?)".to_string(),
    })
}

/// Checks the version and brings an older schema up to date.
pub fn migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let sql = |source| StoreError::Sqlite { path: path.to_path_buf(), source };
    let found = found_version(conn, path)?;
    if found > VERSION {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known: VERSION });
    }
    if found < VERSION {
        upgrade(conn).map_err(sql)?;
    }
    Ok(())
}

// ----- PostgreSQL -----------------------------------------------------------

/// PostgreSQL's schema at the version it starts from.
const PG_SCHEMA: &str = include_str!("postgres/schema.sql");
/// The version [`PG_SCHEMA`] is at: a PostgreSQL store starts there.
pub(crate) const PG_FIRST: i64 = 6;
/// PostgreSQL's steps from version `PG_FIRST + i` to `PG_FIRST + i + 1`:
/// the same steps as SQLite's past [`PG_FIRST`], spelled for PostgreSQL.
const PG_STEPS: &[&str] = &[PG_V7, PG_V8, PG_V9];

/// [`V7`] for PostgreSQL.
const PG_V7: &str = "
DELETE FROM edge_index;
CREATE TABLE IF NOT EXISTS edge_blocks(
    snapshot BIGINT NOT NULL,
    unit BIGINT NOT NULL,
    block BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (snapshot, unit, block)
);
DELETE FROM edge_blocks;
";
/// [`v8`] for PostgreSQL.
const PG_V8: &str = "ALTER TABLE units ADD COLUMN IF NOT EXISTS facts BYTEA;";
/// [`V9`] for PostgreSQL.
const PG_V9: &str = "
CREATE TABLE IF NOT EXISTS unit_facts(
    unit BIGINT PRIMARY KEY,
    data BYTEA NOT NULL
);
INSERT INTO unit_facts(unit, data) SELECT id, facts FROM units WHERE facts IS NOT NULL
    ON CONFLICT(unit) DO NOTHING;
ALTER TABLE units DROP COLUMN IF EXISTS facts;
";
const _: () = assert!(PG_FIRST + PG_STEPS.len() as i64 == VERSION, "a schema step is missing for PostgreSQL");

/// Creates the schema in a PostgreSQL database that has none, and brings it
/// to [`VERSION`]; `false` if the database already holds a store.
pub(crate) fn pg_create(conn: &Conn) -> DbResult<bool> {
    conn.begin_write()?;
    let made = (|| {
        let exists = conn.row("SELECT to_regclass('meta') IS NOT NULL", p![], |r| r.get::<bool>(0))?;
        if exists == Some(true) {
            return Ok(false);
        }
        conn.batch(PG_SCHEMA)?;
        Ok(true)
    })();
    match made {
        Ok(made) => {
            conn.commit()?;
            if made {
                pg_upgrade(conn)?;
            }
            Ok(made)
        }
        Err(e) => {
            conn.rollback();
            Err(e)
        }
    }
}

/// Why a PostgreSQL store cannot be opened.
pub(crate) enum Found {
    Error(DbError),
    Store(StoreError),
}

impl From<DbError> for Found {
    fn from(e: DbError) -> Found {
        Found::Error(e)
    }
}

/// Checks a PostgreSQL store's version and brings an older schema up to date.
pub(crate) fn pg_migrate(conn: &Conn, url: &Path) -> Result<(), Found> {
    let exists = conn.row("SELECT to_regclass('meta') IS NOT NULL", p![], |r| r.get::<bool>(0))?;
    if exists != Some(true) {
        return Err(Found::Store(StoreError::NotInitialised { url: url.to_path_buf() }));
    }
    let found = conn
        .row("SELECT value FROM meta WHERE key = 'schema_version'", p![], |r| r.get::<String>(0))?
        .and_then(|v| v.parse::<i64>().ok())
        .ok_or_else(|| {
            Found::Store(StoreError::Corrupt {
                path: url.to_path_buf(),
                detail: "no schema version (not a retest store?)".to_string(),
            })
        })?;
    if found > VERSION {
        return Err(Found::Store(StoreError::TooNew { path: url.to_path_buf(), found, known: VERSION }));
    }
    if found < PG_FIRST {
        return Err(Found::Store(StoreError::Corrupt {
            path: url.to_path_buf(),
            detail: format!("schema version {found}, below PostgreSQL's first ({PG_FIRST})"),
        }));
    }
    if found < VERSION {
        pg_upgrade(conn)?;
    }
    Ok(())
}

/// Brings a PostgreSQL store to [`VERSION`], one write transaction per
/// step; each re-reads the version under the write lock, so two processes
/// opening an old store at once apply every step exactly once.
fn pg_upgrade(conn: &Conn) -> DbResult<()> {
    loop {
        conn.begin_write()?;
        let step = (|| {
            let found = conn
                .row("SELECT value FROM meta WHERE key = 'schema_version'", p![], |r| r.get::<String>(0))?
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(VERSION);
            if found >= VERSION {
                return Ok(false);
            }
            conn.batch(PG_STEPS[(found - PG_FIRST) as usize])?;
            conn.exec("UPDATE meta SET value = ?1 WHERE key = 'schema_version'", p![(found + 1).to_string()])?;
            Ok(true)
        })();
        match step {
            Ok(more) => {
                conn.commit()?;
                if !more {
                    return Ok(());
                }
            }
            Err(e) => {
                conn.rollback();
                return Err(e);
            }
        }
    }
}
