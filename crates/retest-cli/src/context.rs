//! Finding and opening the store.

use std::path::{Path, PathBuf};

use retest_store::Store;

use crate::fail::Fail;

/// Where the store is: `--store DIR`, else `$RETEST_STORE`, else `.retest` in the
/// current directory or its nearest parent.
pub fn store_dir(explicit: Option<&Path>) -> Result<PathBuf, Fail> {
    if let Some(d) = explicit {
        return Ok(resolve(d));
    }
    if let Some(d) = std::env::var_os("RETEST_STORE") {
        return Ok(resolve(Path::new(&d)));
    }
    let cwd = std::env::current_dir().map_err(|e| Fail::new(format!("cannot read the current directory: {e}")))?;
    Store::find(&cwd).map_err(|_| {
        Fail::new(format!("no retest store in {} or any parent directory", cwd.display()))
            .hint("run `retest init` in the project root first")
    })
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
pub fn open(explicit: Option<&Path>) -> Result<(Store, PathBuf), Fail> {
    let dir = store_dir(explicit)?;
    let store = Store::open(&dir).map_err(|e| match e {
        retest_store::StoreError::NotFound { .. } => Fail::new(format!("no retest store at {}", dir.display()))
            .hint("run `retest init` in the project root first"),
        other => Fail::new(other),
    })?;
    let root = dir.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    Ok((store, root))
}
