//! The store's one interface to SQL: a connection to SQLite or to
//! PostgreSQL, parameters and rows as [`Val`]ues. Every query of the store
//! is written once, in the dialect both accept (`ON CONFLICT`, `RETURNING`,
//! `CAST`); the only translation is SQLite's `?N` to PostgreSQL's `$N`.
//!
//! Write transactions serialise on both: SQLite's `BEGIN IMMEDIATE` takes
//! the database's write lock; on PostgreSQL every write transaction first
//! takes one transaction-level advisory lock ([`WRITE_LOCK`]), so writers
//! run one after another exactly as on SQLite and the same logic holds.
//! Readers are never blocked: a read view is SQLite's deferred transaction
//! or PostgreSQL's `REPEATABLE READ` (one snapshot for all its reads).

use std::cell::RefCell;
use std::collections::HashMap;

use rusqlite::types::{ToSqlOutput, ValueRef};

/// The advisory lock every PostgreSQL write transaction holds.
pub(crate) const WRITE_LOCK: i64 = 0x7265_7465_7374; // "retest"

/// A parameter or a column value.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) enum Val {
    #[default]
    Null,
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
}

/// SQLite allocates through mimalloc, as the rest of a program using it
/// may: its page cache and statements then come from the heap's pages
/// already mapped, not from pages `malloc` maps and the kernel faults in one
/// by one. Call it before any store is opened; `false` when SQLite is
/// already in use (it then keeps its allocator).
pub fn sqlite_on_mimalloc() -> bool {
    use libmimalloc_sys as mi;
    use std::ffi::{c_int, c_void};
    // SQLite never asks for 0 or fewer bytes (it returns NULL itself)
    unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
        // SAFETY: mimalloc's malloc, for any size
        unsafe { mi::mi_malloc(n.max(0) as usize) }
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: `p` came from `malloc` or `realloc` here (SQLite's contract)
        unsafe { mi::mi_free(p) }
    }
    unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        // SAFETY: as `free`
        unsafe { mi::mi_realloc(p, n.max(0) as usize) }
    }
    unsafe extern "C" fn size(p: *mut c_void) -> c_int {
        // SAFETY: as `free`; SQLite's allocations are below 2^31 bytes
        unsafe { mi::mi_usable_size(p).min(c_int::MAX as usize) as c_int }
    }
    unsafe extern "C" fn roundup(n: c_int) -> c_int {
        // SAFETY: a pure function of the size
        unsafe { mi::mi_good_size(n.max(0) as usize).min(c_int::MAX as usize) as c_int }
    }
    unsafe extern "C" fn init(_: *mut c_void) -> c_int {
        rusqlite::ffi::SQLITE_OK
    }
    unsafe extern "C" fn shutdown(_: *mut c_void) {}
    let methods = rusqlite::ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: SQLite copies the methods before it returns, and refuses
    // (SQLITE_MISUSE) once it is initialised.
    unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MALLOC, &methods) == rusqlite::ffi::SQLITE_OK }
}

/// An error of the database or of a value read from it.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    #[error("{0}")]
    Value(String),
}

impl DbError {
    /// The connection to the server is gone (the server stopped, the network failed).
    pub fn is_connection_lost(&self) -> bool {
        match self {
            DbError::Postgres(e) => {
                e.is_closed()
                    || std::error::Error::source(e).is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
                    || e.code().is_some_and(|c| {
                        let c = c.code();
                        c.starts_with("08") || c == "57P01" || c == "57P02" || c == "57P03"
                    })
            }
            _ => false,
        }
    }
}

/// A PostgreSQL error with what the server or the connection said (the
/// client's own text is only its kind, "db error").
fn pg_message(e: &postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(db), _) => format!("{}: {}", db.severity(), db.message()),
        (None, Some(source)) => format!("{e}: {source}"),
        (None, None) => e.to_string(),
    }
}

pub(crate) type DbResult<T> = std::result::Result<T, DbError>;

macro_rules! val_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Val {
            fn from(v: $t) -> Val { Val::Int(v as i64) }
        }
    )*};
}
val_from_int!(i64, i32, u32, u8, usize);

impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Int(v as i64)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(v.clone())
    }
}
impl From<&[u8]> for Val {
    fn from(v: &[u8]) -> Val {
        Val::Blob(v.to_vec())
    }
}
impl From<Vec<u8>> for Val {
    fn from(v: Vec<u8>) -> Val {
        Val::Blob(v)
    }
}
impl From<&Vec<u8>> for Val {
    fn from(v: &Vec<u8>) -> Val {
        Val::Blob(v.clone())
    }
}
impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        v.map_or(Val::Null, Into::into)
    }
}
impl<T: Clone + Into<Val>> From<&Option<T>> for Val {
    fn from(v: &Option<T>) -> Val {
        v.clone().map_or(Val::Null, Into::into)
    }
}
impl From<&i64> for Val {
    fn from(v: &i64) -> Val {
        Val::Int(*v)
    }
}

/// Parameters: `p![a, b, c]`.
macro_rules! p {
    ($($e:expr),* $(,)?) => { &[$($crate::db::Val::from($e)),*][..] };
}
pub(crate) use p;

/// A value read from a column.
pub(crate) trait FromVal: Sized {
    fn from_val(v: Val) -> DbResult<Self>;
}

fn wrong(v: &Val, want: &str) -> DbError {
    DbError::Value(format!("expected {want}, found {v:?}"))
}

impl FromVal for i64 {
    fn from_val(v: Val) -> DbResult<i64> {
        match v {
            Val::Int(i) => Ok(i),
            v => Err(wrong(&v, "an integer")),
        }
    }
}
impl FromVal for u32 {
    fn from_val(v: Val) -> DbResult<u32> {
        let i = i64::from_val(v)?;
        u32::try_from(i).map_err(|_| DbError::Value(format!("{i} out of range")))
    }
}
impl FromVal for i32 {
    fn from_val(v: Val) -> DbResult<i32> {
        let i = i64::from_val(v)?;
        i32::try_from(i).map_err(|_| DbError::Value(format!("{i} out of range")))
    }
}
impl FromVal for u8 {
    fn from_val(v: Val) -> DbResult<u8> {
        let i = i64::from_val(v)?;
        u8::try_from(i).map_err(|_| DbError::Value(format!("{i} out of range")))
    }
}
impl FromVal for bool {
    fn from_val(v: Val) -> DbResult<bool> {
        Ok(i64::from_val(v)? != 0)
    }
}
impl FromVal for String {
    fn from_val(v: Val) -> DbResult<String> {
        match v {
            Val::Text(s) => Ok(s),
            v => Err(wrong(&v, "text")),
        }
    }
}
impl FromVal for Vec<u8> {
    fn from_val(v: Val) -> DbResult<Vec<u8>> {
        match v {
            Val::Blob(b) => Ok(b),
            v => Err(wrong(&v, "a blob")),
        }
    }
}
impl<T: FromVal> FromVal for Option<T> {
    fn from_val(v: Val) -> DbResult<Option<T>> {
        match v {
            Val::Null => Ok(None),
            v => T::from_val(v).map(Some),
        }
    }
}

/// One row of a result.
pub(crate) struct Row(Vec<Val>);

impl Row {
    pub(crate) fn get<T: FromVal>(&self, i: usize) -> DbResult<T> {
        T::from_val(self.0.get(i).cloned().unwrap_or(Val::Null))
    }

    /// Column `i`, moved out of the row rather than copied (for the rows
    /// of 10^5 tests a selection reads). Take each column once: a column
    /// taken again reads as NULL.
    pub(crate) fn take<T: FromVal>(&mut self, i: usize) -> DbResult<T> {
        T::from_val(self.0.get_mut(i).map(std::mem::take).unwrap_or(Val::Null))
    }

    /// A blob column without copying it.
    pub(crate) fn blob(&self, i: usize) -> DbResult<&[u8]> {
        match self.0.get(i) {
            Some(Val::Blob(b)) => Ok(b),
            v => Err(wrong(v.unwrap_or(&Val::Null), "a blob")),
        }
    }
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Val::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Val::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Val::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Val::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl postgres::types::ToSql for Val {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use postgres::types::Type;
        match self {
            Val::Null => Ok(postgres::types::IsNull::Yes),
            Val::Int(i) => match *ty {
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Val::Text(s) => s.to_sql(ty, out),
            Val::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn pg_row(r: &postgres::Row) -> DbResult<Row> {
    use postgres::types::Type;
    let mut out = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        let v = match *c.type_() {
            Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Val::Int),
            Type::INT4 => r.try_get::<_, Option<i32>>(i)?.map(|v| Val::Int(v.into())),
            Type::INT2 => r.try_get::<_, Option<i16>>(i)?.map(|v| Val::Int(v.into())),
            Type::BOOL => r.try_get::<_, Option<bool>>(i)?.map(|v| Val::Int(v.into())),
            Type::BYTEA => r.try_get::<_, Option<Vec<u8>>>(i)?.map(Val::Blob),
            _ => r.try_get::<_, Option<String>>(i)?.map(Val::Text),
        };
        out.push(v.unwrap_or(Val::Null));
    }
    Ok(Row(out))
}

/// A row read in place, its values borrowed from the back end's buffers:
/// for reads of 10^5 rows, where copying every value into a [`Row`] first
/// costs as much as the query.
pub(crate) enum Borrowed<'r, 's> {
    Sqlite(&'r rusqlite::Row<'s>),
    Pg(&'r postgres::Row),
}

impl Borrowed<'_, '_> {
    pub(crate) fn int(&self, i: usize) -> DbResult<Option<i64>> {
        match self {
            Borrowed::Sqlite(r) => match r.get_ref(i)? {
                ValueRef::Null => Ok(None),
                ValueRef::Integer(v) => Ok(Some(v)),
                v => Err(DbError::Value(format!("expected an integer, found {v:?}"))),
            },
            Borrowed::Pg(r) => {
                use postgres::types::Type;
                Ok(match *r.columns()[i].type_() {
                    Type::INT4 => r.try_get::<_, Option<i32>>(i)?.map(i64::from),
                    Type::INT2 => r.try_get::<_, Option<i16>>(i)?.map(i64::from),
                    _ => r.try_get::<_, Option<i64>>(i)?,
                })
            }
        }
    }

    pub(crate) fn text(&self, i: usize) -> DbResult<Option<&str>> {
        match self {
            Borrowed::Sqlite(r) => match r.get_ref(i)? {
                ValueRef::Null => Ok(None),
                ValueRef::Text(t) => {
                    std::str::from_utf8(t).map(Some).map_err(|e| DbError::Value(format!("text that is not UTF-8: {e}")))
                }
                v => Err(DbError::Value(format!("expected text, found {v:?}"))),
            },
            Borrowed::Pg(r) => Ok(r.try_get::<_, Option<&str>>(i)?),
        }
    }

    pub(crate) fn blob(&self, i: usize) -> DbResult<Option<&[u8]>> {
        match self {
            Borrowed::Sqlite(r) => match r.get_ref(i)? {
                ValueRef::Null => Ok(None),
                ValueRef::Blob(b) => Ok(Some(b)),
                v => Err(DbError::Value(format!("expected a blob, found {v:?}"))),
            },
            Borrowed::Pg(r) => Ok(r.try_get::<_, Option<&[u8]>>(i)?),
        }
    }
}

fn sqlite_row(r: &rusqlite::Row<'_>, n: usize) -> DbResult<Row> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match r.get_ref(i)? {
            ValueRef::Null => Val::Null,
            ValueRef::Integer(i) => Val::Int(i),
            ValueRef::Real(f) => Val::Int(f as i64),
            ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Val::Blob(b.to_vec()),
        });
    }
    Ok(Row(out))
}

/// `?N` → `$N` (the store's SQL has no `?` in literals).
fn to_pg(sql: &str) -> String {
    sql.replace('?', "$")
}

/// A PostgreSQL connection with its prepared statements.
pub(crate) struct Pg {
    client: postgres::Client,
    statements: HashMap<&'static str, postgres::Statement>,
    in_tx: bool,
}

/// A connection to either back end.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Pg(Box<RefCell<Pg>>),
}

impl Conn {
    pub(crate) fn postgres(client: postgres::Client) -> Conn {
        Conn::Pg(Box::new(RefCell::new(Pg { client, statements: HashMap::new(), in_tx: false })))
    }

    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Conn::Pg(..))
    }

    fn pg_statement(pg: &mut Pg, sql: &'static str) -> DbResult<postgres::Statement> {
        if let Some(s) = pg.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = pg.client.prepare(&to_pg(sql))?;
        pg.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// Runs a statement; the number of rows it changed.
    pub(crate) fn exec(&self, sql: &'static str, params: &[Val]) -> DbResult<u64> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached(sql)?.execute(rusqlite::params_from_iter(params))? as u64),
            Conn::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                let st = Conn::pg_statement(&mut pg, sql)?;
                let ps: Vec<&(dyn postgres::types::ToSql + Sync)> = params.iter().map(|v| v as _).collect();
                Ok(pg.client.execute(&st, &ps)?)
            }
        }
    }

    /// Calls `f` on each row of a query, in order.
    pub(crate) fn each(
        &self,
        sql: &'static str,
        params: &[Val],
        mut f: impl FnMut(Row) -> DbResult<()>,
    ) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                let mut rows = st.query(rusqlite::params_from_iter(params))?;
                while let Some(r) = rows.next()? {
                    f(sqlite_row(r, n)?)?;
                }
                Ok(())
            }
            Conn::Pg(pg) => {
                let rows = {
                    let mut pg = pg.borrow_mut();
                    let st = Conn::pg_statement(&mut pg, sql)?;
                    let ps: Vec<&(dyn postgres::types::ToSql + Sync)> = params.iter().map(|v| v as _).collect();
                    pg.client.query(&st, &ps)?
                };
                for r in &rows {
                    f(pg_row(r)?)?;
                }
                Ok(())
            }
        }
    }

    /// Every row of a query, read in place ([`Borrowed`]).
    pub(crate) fn each_borrowed(
        &self,
        sql: &'static str,
        params: &[Val],
        mut f: impl FnMut(Borrowed<'_, '_>) -> DbResult<()>,
    ) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let mut rows = st.query(rusqlite::params_from_iter(params))?;
                while let Some(r) = rows.next()? {
                    f(Borrowed::Sqlite(r))?;
                }
                Ok(())
            }
            Conn::Pg(pg) => {
                // streamed, not gathered first: 10^5 rows at once cost
                // their own memory; `f` must not use the connection
                use postgres::fallible_iterator::FallibleIterator;
                let mut pg = pg.borrow_mut();
                let st = Conn::pg_statement(&mut pg, sql)?;
                let ps: Vec<&(dyn postgres::types::ToSql + Sync)> = params.iter().map(|v| v as _).collect();
                let mut rows = pg.client.query_raw(&st, ps)?;
                while let Some(r) = rows.next()? {
                    f(Borrowed::Pg(&r))?;
                }
                Ok(())
            }
        }
    }

    /// Every row of a query, each mapped by `f`.
    pub(crate) fn rows<T>(
        &self,
        sql: &'static str,
        params: &[Val],
        mut f: impl FnMut(&mut Row) -> DbResult<T>,
    ) -> DbResult<Vec<T>> {
        let mut out = Vec::new();
        self.each(sql, params, |mut r| {
            out.push(f(&mut r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, if any, mapped by `f`.
    pub(crate) fn row<T>(
        &self,
        sql: &'static str,
        params: &[Val],
        f: impl FnOnce(&mut Row) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        let mut first = None;
        self.each(sql, params, |r| {
            if first.is_none() {
                first = Some(r);
            }
            Ok(())
        })?;
        first.map(|mut r| f(&mut r)).transpose()
    }

    /// Runs several statements without parameters.
    pub(crate) fn batch(&self, sql: &str) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Pg(pg) => Ok(pg.borrow_mut().client.batch_execute(sql)?),
        }
    }

    /// Starts a write transaction: writers serialise (module doc).
    pub(crate) fn begin_write(&self) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch("BEGIN IMMEDIATE")?),
            Conn::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                pg.client.batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"))?;
                pg.in_tx = true;
                Ok(())
            }
        }
    }

    /// Starts a read view: one snapshot of the database for all its reads.
    pub(crate) fn begin_read(&self) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch("BEGIN DEFERRED")?),
            Conn::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                pg.client.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")?;
                pg.in_tx = true;
                Ok(())
            }
        }
    }

    pub(crate) fn commit(&self) -> DbResult<()> {
        self.end("COMMIT")
    }

    /// Ends a failed transaction; a rollback that fails too is moot (the
    /// transaction is gone with the connection).
    pub(crate) fn rollback(&self) {
        let _ = self.end("ROLLBACK");
    }

    fn end(&self, how: &str) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(how)?),
            Conn::Pg(pg) => {
                let mut pg = pg.borrow_mut();
                pg.in_tx = false;
                Ok(pg.client.batch_execute(how)?)
            }
        }
    }

    /// Whether a transaction is open.
    pub(crate) fn in_transaction(&self) -> bool {
        match self {
            Conn::Sqlite(c) => !c.is_autocommit(),
            Conn::Pg(pg) => pg.borrow().in_tx,
        }
    }

    /// The SQLite connection (SQLite-only operations: file copies, pragmas).
    pub(crate) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Conn::Sqlite(c) => Some(c),
            Conn::Pg(..) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars() {
        assert_eq!(to_pg("SELECT a FROM t WHERE b = ?1 AND c = ?12"), "SELECT a FROM t WHERE b = $1 AND c = $12");
    }
}
