//! The PostgreSQL schema (`src/postgres/schema.sql` and the later steps of
//! `schema::PG_STEPS`) is the SQLite store's logical schema: a new store
//! made in a throwaway PostgreSQL server (`initdb` and
//! `pg_ctl` in a temporary directory, listening on a unix socket only,
//! stopped when the test ends), its tables, columns, types, nullability,
//! primary keys, indexes and schema version are those of a new SQLite store.
//! PostgreSQL's binaries come from Debian's `postgresql` package (`.ci/run`
//! installs it); nothing depends on a server outside the test.

use std::collections::BTreeMap;

use retest_store::throwaway::Throwaway;

/// Per table, per column: (type, not null, part of the primary key).
type Columns = BTreeMap<String, BTreeMap<String, (String, bool, bool)>>;

fn sqlite_schema(conn: &rusqlite::Connection) -> (Columns, Vec<(String, String)>) {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut cols = Columns::new();
    for t in &tables {
        let mut st =
            conn.prepare(&format!("SELECT name, type, \"notnull\", pk FROM pragma_table_info('{t}')")).unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, i64>(3)?))
            })
            .unwrap();
        for row in rows {
            let (name, ty, notnull, pk) = row.unwrap();
            let ty = match ty.as_str() {
                "INTEGER" => "bigint",
                "TEXT" => "text",
                "BLOB" => "bytea",
                other => panic!("{t}.{name}: type {other} has no PostgreSQL spelling here"),
            };
            // a primary key's columns are never NULL in either
            cols.entry(t.clone()).or_default().insert(name, (ty.to_string(), notnull || pk > 0, pk > 0));
        }
    }
    let mut indexes: Vec<(String, String)> = conn
        .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    indexes.sort();
    (cols, indexes)
}

fn postgres_schema(pg: &Throwaway) -> (Columns, Vec<(String, String)>) {
    let mut cols = Columns::new();
    let pk: Vec<(String, String)> = pg
        .psql(&[
            "-c",
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
             JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name
             WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = 'public'",
        ])
        .lines()
        .map(|l| {
            let (t, c) = l.split_once('|').unwrap();
            (t.to_string(), c.to_string())
        })
        .collect();
    for l in pg
        .psql(&[
            "-c",
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'",
        ])
        .lines()
    {
        let f: Vec<&str> = l.split('|').collect();
        let is_pk = pk.contains(&(f[0].to_string(), f[1].to_string()));
        cols.entry(f[0].to_string()).or_default().insert(f[1].to_string(), (f[2].to_string(), f[3] == "NO", is_pk));
    }
    let mut indexes: Vec<(String, String)> = pg
        .psql(&[
            "-c",
            "SELECT indexname, tablename FROM pg_indexes WHERE schemaname = 'public'
             AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'",
        ])
        .lines()
        .map(|l| {
            let (i, t) = l.split_once('|').unwrap();
            (i.to_string(), t.to_string())
        })
        .collect();
    indexes.sort();
    (cols, indexes)
}

#[test]
fn the_postgresql_schema_is_the_sqlite_stores_schema() {
    let d = tempfile::tempdir().unwrap();
    let dir = retest_store::Store::dir_for(d.path());
    let store = retest_store::Store::init(&dir).unwrap();
    let version = store.meta("schema_version").unwrap().unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(dir.join(retest_store::DB_FILE)).unwrap();
    let (sqlite_cols, sqlite_indexes) = sqlite_schema(&conn);

    // a new PostgreSQL store: `schema.sql`, then every later step
    let pg = Throwaway::start();
    let local = tempfile::tempdir().unwrap();
    retest_store::Store::open_url(&pg.url("postgres"), &retest_store::Store::dir_for(local.path()), true).unwrap();
    let (pg_cols, pg_indexes) = postgres_schema(&pg);
    assert_eq!(pg_cols.keys().collect::<Vec<_>>(), sqlite_cols.keys().collect::<Vec<_>>(), "the same tables");
    for (t, cols) in &sqlite_cols {
        assert_eq!(&pg_cols[t], cols, "table {t}: columns (type, not null, primary key)");
    }
    assert_eq!(pg_indexes, sqlite_indexes, "the same secondary indexes");
    assert_eq!(pg.psql(&["-c", "SELECT value FROM meta WHERE key = 'schema_version'"]).trim(), version);
}
