//! Finding and opening the store.

use std::path::{Path, PathBuf};

use retest_store::Store;

use crate::error::Error;

/// Where the store is: `--store DIR`, else `$RETEST_STORE`, else `.retest` in the
/// current directory or its nearest parent.
pub fn store_dir(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    let url = std::env::var_os("RETEST_STORE_URL").map(PathBuf::from);
    if let Some(u) = explicit.or(url.as_deref()).and_then(Path::to_str).filter(|u| is_database_url(u)) {
        return Err(Error::usage(format!(
            "{}: this retest has no PostgreSQL store yet; its stores are SQLite files",
            redact(u)
        ))
        .hint("give each worker its own store (a copy of the build's) and combine them with `retest merge`"));
    }
    if let Some(d) = explicit {
        return Ok(resolve(d));
    }
    if let Some(d) = std::env::var_os("RETEST_STORE") {
        return Ok(resolve(Path::new(&d)));
    }
    let cwd = std::env::current_dir().map_err(|e| Error::new(format!("cannot read the current directory: {e}")))?;
    Store::find(&cwd).map_err(|_| {
        Error::new(format!("no retest store in {} or any parent directory", cwd.display()))
            .hint("run `retest init` in the project root first")
    })
}

/// Whether `--store` (or `RETEST_STORE_URL`) names a database server rather than a directory.
fn is_database_url(s: &str) -> bool {
    ["postgresql://", "postgres://"].iter().any(|p| s.starts_with(p))
}

/// A connection URL without its password, for messages.
fn redact(url: &str) -> String {
    match url.split_once("://").and_then(|(scheme, rest)| {
        let (auth, host) = rest.split_once('@')?;
        let user = auth.split_once(':').map_or(auth, |(u, _)| u);
        Some(format!("{scheme}://{user}@{host}"))
    }) {
        Some(r) => r,
        None => url.to_string(),
    }
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

    /// A PostgreSQL URL is refused with what to do instead, its password not repeated.
    #[test]
    fn a_database_url_is_refused_without_its_password() {
        let e = store_dir(Some(Path::new("postgresql://ci:s3cret@db.example:5432/retest"))).unwrap_err();
        assert!(e.what.starts_with("postgresql://ci@db.example:5432/retest: this retest has no PostgreSQL store yet"));
        assert!(!e.what.contains("s3cret"));
        assert!(e.hint.as_deref().unwrap_or("").contains("retest merge"));
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
            record: retest_cover::plan::RecordOptions { mcdc: true, paths: false },
        };
        set_build_command(&mut store, &cmd).unwrap();
        let back = build_command(&store).unwrap().unwrap();
        assert_eq!((back.argv, back.cwd, back.record.mcdc, back.record.paths), (cmd.argv, cmd.cwd, true, false));
        store.set_meta(MetaKey::BuildCommand.name(), r#"{"argv":["make"],"cwd":"/x"}"#).unwrap();
        let old = build_command(&store).unwrap().unwrap();
        assert!(!old.record.mcdc && !old.record.paths);
    }
}
