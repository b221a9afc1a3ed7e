//! Finding and opening the store.

use std::path::{Path, PathBuf};

use retest_store::Store;

use crate::error::Error;

/// The PostgreSQL store named by `--store URL`, else by `$RETEST_STORE_URL`
/// (when `--store` names no directory), if one is.
pub fn store_url(explicit: Option<&Path>) -> Option<String> {
    match explicit {
        Some(e) => e.to_str().filter(|u| is_database_url(u)).map(str::to_string),
        None => std::env::var("RETEST_STORE_URL").ok().filter(|u| is_database_url(u)),
    }
}

/// Where the store is: `--store DIR`, else `$RETEST_STORE`, else `.retest` in the
/// current directory or its nearest parent. For a PostgreSQL store
/// ([`store_url`]), the local directory of its files (traces, journals):
/// `$RETEST_STORE`, else `.retest` in the current directory.
pub fn store_dir(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    let url = store_url(explicit);
    if let Some(d) = explicit.filter(|_| url.is_none()) {
        return Ok(resolve(d));
    }
    if let Some(d) = std::env::var_os("RETEST_STORE") {
        return Ok(resolve(Path::new(&d)));
    }
    let cwd = std::env::current_dir().map_err(|e| Error::new(format!("cannot read the current directory: {e}")))?;
    if url.is_some() {
        return Ok(Store::dir_for(&cwd));
    }
    Store::find(&cwd).map_err(|_| {
        Error::new(format!("no retest store in {} or any parent directory", cwd.display()))
            .hint("run `retest init` in the project root first")
    })
}

/// Whether `--store` (or `RETEST_STORE_URL`) names a database server rather than a directory.
fn is_database_url(s: &str) -> bool {
    retest_store::is_database_url(s)
}

/// A connection URL without its password, for messages.
pub fn redact(url: &str) -> String {
    retest_store::redact(url)
}

/// `DIR` may name the project root or its `.retest` directory.
fn resolve(d: &Path) -> PathBuf {
    if d.join(retest_store::DB_FILE).is_file() || d.file_name().is_some_and(|n| n == retest_store::STORE_DIR) {
        d.to_path_buf()
    } else {
        d.join(retest_store::STORE_DIR)
    }
}

/// Opens the store; the project root is the directory that holds `.retest`.
pub fn open(explicit: Option<&Path>) -> Result<(Store, PathBuf), Error> {
    let dir = store_dir(explicit)?;
    if let Some(url) = store_url(explicit) {
        return open_url(&url, &dir);
    }
    let store = Store::open(&dir).map_err(|e| match e {
        retest_store::StoreError::NotFound { .. } => Error::new(format!("no retest store at {}", dir.display()))
            .hint("run `retest init` in the project root first"),
        e @ retest_store::StoreError::Corrupt { .. } => Error::new(e).hint(damaged_hint(&dir)),
        other => Error::new(other),
    })?;
    let root = dir.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    Ok((store, root))
}

/// Opens the PostgreSQL store `url`, with `dir` as its local directory;
/// the project root is `dir`'s parent.
fn open_url(url: &str, dir: &Path) -> Result<(Store, PathBuf), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
    let store = Store::open_url(url, dir, false).map_err(|e| match e {
        e @ retest_store::StoreError::NotInitialised { .. } => {
            Error::new(e).hint("run `retest init --store URL` once, from one machine, before the workers start")
        }
        e @ retest_store::StoreError::Postgres { .. } => {
            Error::new(e).hint("check the URL, that the server is running, and that the user may connect")
        }
        other => Error::new(other),
    })?;
    let root = dir.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    Ok((store, root))
}

/// What to do about a damaged store in `dir`.
pub fn damaged_hint(dir: &Path) -> String {
    format!(
        "move {} aside (keep it for a bug report), run `retest init`, then `retest build` and `retest run` to record a new baseline",
        dir.display()
    )
}

/// What the engine keeps in the store's meta table, one key each. The
/// store's own keys (its schema version) are the store's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaKey {
    /// The build command `retest build` ran, as JSON ([`BuildCommand`]), to
    /// rebuild for `retest run --selected`.
    BuildCommand,
    /// Where the last `retest run` took its tests from ([`crate::run::TestSource`]).
    TestSource,
    /// The selective instrumentation plans `retest run --selected` wants the
    /// wrapper to use, as JSON; `[]` when none.
    InstrumentPlan,
    /// The pid of the `retest` process running a build; empty once it succeeded.
    BuildRunning,
    /// Seconds of wall time per translation unit the last build through the
    /// wrapper took (its whole command, links included, over the units it
    /// compiled): what `retest run --selected` expects a rebuild to cost.
    BuildSecondsPerUnit,
    /// The tests `retest audit` found to run differently on the same code, as
    /// JSON: test key → why ([`crate::steady`]).
    UnsteadyTests,
    /// The keys of the units whose objects may be selectively instrumented,
    /// as a JSON list: every unit a plan of [`MetaKey::InstrumentPlan`] was
    /// saved for since `retest build` last made them full again. Absent in
    /// stores from before it was kept: then every unit is checked.
    SelectiveObjects,
}

impl MetaKey {
    /// The key as stored (stable: stores written by older versions use it).
    pub fn name(self) -> &'static str {
        match self {
            MetaKey::BuildCommand => "build_command",
            MetaKey::TestSource => "test_source",
            MetaKey::InstrumentPlan => "instrument_plan",
            MetaKey::BuildRunning => "build_running",
            MetaKey::BuildSecondsPerUnit => "build_seconds_per_unit",
            MetaKey::UnsteadyTests => "unsteady_tests",
            MetaKey::SelectiveObjects => "selective_objects",
        }
    }
}

/// The build command `retest build` recorded.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BuildCommand {
    pub argv: Vec<String>,
    #[serde(default)]
    pub cwd: PathBuf,
    /// What the build records beyond edges.
    #[serde(default)]
    pub record: retest_cover::plan::RecordOptions,
}

/// Records the build command (see [`MetaKey::BuildCommand`]).
pub fn set_build_command(store: &mut Store, cmd: &BuildCommand) -> Result<(), Error> {
    let v = serde_json::to_string(cmd).map_err(|e| Error::new(format!("cannot record the build command: {e}")))?;
    store.set_meta(MetaKey::BuildCommand.name(), &v).map_err(Error::new)
}

/// The build command `retest build` recorded, if any (a record that cannot be
/// read counts as none).
pub fn build_command(store: &Store) -> Result<Option<BuildCommand>, Error> {
    let v = store.meta(MetaKey::BuildCommand.name()).map_err(Error::new)?;
    Ok(v.and_then(|v| serde_json::from_str(&v).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--store` names a PostgreSQL store by URL; a directory that merely
    /// starts like one is a directory.
    #[test]
    fn a_database_url_names_a_postgresql_store() {
        let url = "postgresql://ci:s3cret@db.example:5432/retest";
        assert_eq!(store_url(Some(Path::new(url))).as_deref(), Some(url));
        assert_eq!(redact(url), "postgresql://ci@db.example:5432/retest");
        assert_eq!(store_url(Some(Path::new("postgres-data"))), None);
        assert!(store_dir(Some(Path::new("postgres-data"))).is_ok_and(|d| d.ends_with(".retest")));
    }

    /// The build command reads back as written, and a record of an older
    /// version without `record` reads with edges only.
    #[test]
    fn the_build_command_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::init(dir.path()).unwrap();
        assert!(build_command(&store).unwrap().is_none());
        let cmd = BuildCommand {
            argv: vec!["make".into(), "-j2".into()],
            cwd: dir.path().to_path_buf(),
            record: retest_cover::plan::RecordOptions { mcdc: true, ..Default::default() },
        };
        set_build_command(&mut store, &cmd).unwrap();
        let back = build_command(&store).unwrap().unwrap();
        assert_eq!((back.argv, back.cwd, back.record.mcdc, back.record.paths), (cmd.argv, cmd.cwd, true, false));
        store.set_meta(MetaKey::BuildCommand.name(), r#"{"argv":["make"],"cwd":"/x"}"#).unwrap();
        let old = build_command(&store).unwrap().unwrap();
        assert!(!old.record.mcdc && !old.record.paths);
    }
}
