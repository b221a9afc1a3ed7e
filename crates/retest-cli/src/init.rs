//! `retest init`: creates the store and a starter `retest.toml`.

use std::path::{Path, PathBuf};

use clap::Args;
use retest_store::Store;

use crate::fail::{Fail, OrFail};

#[derive(Args)]
pub struct InitArgs {
    /// Project root (default: the current directory).
    dir: Option<PathBuf>,
}

const STARTER: &str = r#"# Tests for retest: one [[test]] table per test.
#   name     unique name
#   cmd      shell command, run in cwd with `sh -c` (one program named by a path,
#            with plain words, runs without the shell); exit status 0 means pass
#   cwd      optional, relative to this file
#   env      optional table of environment variables
#   timeout  optional, seconds
# A GoogleTest binary gives one test per case (`binary/Suite.Name`, run with
# --gtest_filter), listed with --gtest_list_tests each time tests are discovered:
#   [[gtest]]
#   binary = "build/unit_tests"   # relative to this file; also cwd, env, timeout, filter
# A Catch2 binary likewise (`binary/Case name`, run alone by its name):
#   [[catch2]]
#   binary = "build/catch_tests"
# Instead of this file you can pass `--universe FILE` (one command per line) or
# `--ctest BUILD_DIR` to `retest run`.
#
# [[test]]
# name = "smoke"
# cmd = "./prog < tests/smoke.in"
"#;

pub fn run(store_opt: Option<&Path>, a: InitArgs) -> Result<(), Fail> {
    let root = a.dir.unwrap_or_else(|| PathBuf::from("."));
    let dir = Store::dir_for(&root);
    let url = retest_engine::store::store_url(store_opt);
    let made = match &url {
        // the schema in the database; the local directory keeps the store's files
        Some(url) => Store::open_url(url, &dir, true).map(|s| s.name().display().to_string()),
        None => Store::init(&dir).map(|s| s.path().display().to_string()),
    };
    let made = match made {
        Ok(made) => made,
        Err(retest_store::StoreError::Exists { path }) if url.is_some() => {
            return Err(Fail::usage(format!("{} already holds a retest store", path.display()))
                .hint("the workers share it: run `retest init --store URL` once, before they start"));
        }
        Err(retest_store::StoreError::Exists { path }) => {
            return Err(match Store::open(&dir) {
                Ok(_) => Fail::usage(format!("{} already holds a retest store", path.display()))
                    .hint("a project has one store; use the existing one"),
                Err(e) => Fail::new(e).hint(retest_engine::store::damaged_hint(&dir)),
            });
        }
        Err(e) => return Err(Fail::new(e)),
    };
    // the store is the machine's own record: never committed
    std::fs::write(dir.join(".gitignore"), "# written by `retest init`: the store is not source\n*\n").or_fail()?;
    let toml = root.join("retest.toml");
    let made_toml = if toml.exists() {
        false
    } else {
        std::fs::write(&toml, STARTER).or_fail()?;
        true
    };
    if !crate::progress::chatty() {
        return Ok(());
    }
    println!("created {made}");
    if made_toml {
        println!("created {} (add your tests there)", toml.display());
    }
    println!("next: build with the wrapper (`retest build -- make` or `CC=\"retest cc\" make`), then `retest run`");
    Ok(())
}
