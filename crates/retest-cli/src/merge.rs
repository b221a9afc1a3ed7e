//! `retest merge`: combines the stores CI workers recorded their shards into
//! (`retest_engine::merge`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::fail::Fail;
use crate::progress;

#[derive(Args)]
pub struct MergeArgs {
    /// The shards' store files (each worker's `.retest/store.db`, copied out
    /// after its `retest run --partition K/N`).
    #[arg(required = true, value_name = "STORE.db")]
    pub shards: Vec<PathBuf>,
    /// The store to merge into: a file (created from a copy of the first
    /// shard when it does not exist) or a PostgreSQL URL (given the shards'
    /// build when it does not hold it); default: the project's store.
    #[arg(long, value_name = "FILE|URL")]
    pub into: Option<PathBuf>,
}

pub fn run(store_opt: Option<&Path>, a: MergeArgs) -> Result<(), Fail> {
    let url = match &a.into {
        Some(f) => f.to_str().filter(|f| retest_store::is_database_url(f)).map(str::to_string),
        None => retest_engine::store::store_url(store_opt),
    };
    let r = match url {
        // a PostgreSQL store: opened as every command opens one
        Some(url) => {
            let (store, _) = retest_engine::store::open(Some(Path::new(&url)))?;
            retest_engine::merge::merge_into(store, &a.shards)?
        }
        None => {
            let into = match a.into {
                Some(f) => f,
                None => retest_engine::store::store_dir(store_opt)?.join(retest_store::DB_FILE),
            };
            retest_engine::merge::merge(&into, &a.shards)?
        }
    };
    let tests: usize = r.shards.iter().map(|(_, n)| n).sum();
    if !r.overlapping.is_empty() {
        eprintln!(
            "warning: {} tests were recorded by more than one shard (the last one named is kept): {}",
            r.overlapping.len(),
            shown(&r.overlapping)
        );
    }
    let state = if r.missing.is_empty() {
        format!("complete: every one of the {} tests of the suite has a record", r.suite)
    } else {
        format!(
            "incomplete: {} of the {} tests of the suite have no record yet ({}); `retest select` selects them until a shard records them",
            r.missing.len(),
            r.suite,
            shown(&r.missing)
        )
    };
    let baseline = if r.made_baseline {
        format!("snapshot {} (build {}) is the baseline, {state}", r.snapshot.0, r.build)
    } else {
        format!(
            "snapshot {} (build {}) is not the baseline: the store's baseline is a newer build; {state}",
            r.snapshot.0, r.build
        )
    };
    println!(
        "merged {} shard(s) ({tests} test records) into {}{}: {baseline}",
        r.shards.len(),
        r.into.display(),
        if r.created { " (new)" } else { "" }
    );
    if progress::chatty() {
        for (p, n) in &r.shards {
            println!("  {}: {n} tests", p.display());
        }
    }
    Ok(())
}

/// The first few names, and how many more.
fn shown(names: &[String]) -> String {
    let first: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    if names.len() > 5 { format!("{}, and {} more", first.join(", "), names.len() - 5) } else { first.join(", ") }
}
