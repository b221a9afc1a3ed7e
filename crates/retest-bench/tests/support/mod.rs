//! What the bench's tests share.

use std::path::PathBuf;
use std::process::Command;

/// The `retest` binary of this workspace, (re)built for the profile the test runs
/// in — a no-op after `cargo test --workspace`, which has built it already.
pub fn retest_bin() -> PathBuf {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_retest-bench"));
    let dir = bench.parent().expect("the binary has a directory");
    let release = dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let mut c = Command::new(cargo);
    c.args(["build", "--quiet", "-p", "retest-cli", "--bin", "retest"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    if release {
        c.arg("--release");
    }
    let st = c.status().expect("running cargo build for the retest binary");
    assert!(st.success(), "cargo build -p retest-cli failed");
    let bin = dir.join("retest");
    assert!(bin.exists(), "no retest binary at {}", bin.display());
    bin
}
