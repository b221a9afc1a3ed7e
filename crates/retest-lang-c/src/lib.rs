//! `retest-lang-c`: the C front end.
//!
//! Runs the user's compiler as the preprocessor ([`preprocess`]), parses the result
//! with tree-sitter-c, and builds for every function defined in the project's own
//! files a statement-level and a condition-level CFG ([`build`], [`tu`]), plus the
//! declarations outside functions ([`decls`]) that selection compares to find
//! affected names. [`driver`] understands compiler command lines, [`project`]
//! turns compile commands into analysis jobs, [`instrument`] inserts the probes,
//! [`wrap`] does the compiler wrapper's work.
//!
//! The coverage runtime that instrumented programs link is `runtime/retest_rt.c`
//! ([`RUNTIME_SOURCE`]).
//!
//! Architecture invariant: the front end never fails on a file. It returns the CFGs
//! it could build plus problems (file:line, what); a function it could not build
//! exactly is marked *unanalysable* and selection treats it as changed.

pub mod build;
pub mod cpp;
pub mod decls;
pub mod driver;
pub mod flat;
pub mod instrument;
pub mod preprocess;
pub mod project;
pub mod region;
pub mod syntax;
pub mod toplevel;
pub mod tu;
pub mod wrap;

pub use build::{FunctionCfgs, Site};

/// Source of the C coverage runtime (ABI 2), compiled on demand with the user's compiler.
pub const RUNTIME_SOURCE: &str = include_str!("../runtime/retest_rt.c");
/// The runtime's header (`#include "retest_rt.h"` in [`RUNTIME_SOURCE`]).
pub const RUNTIME_HEADER: &str = include_str!("../runtime/retest_rt.h");

/// Writes `retest_rt.c` and `retest_rt.h` into `dir`; returns the path of the `.c`.
pub fn write_runtime(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    std::fs::write(dir.join("retest_rt.h"), RUNTIME_HEADER)?;
    let c = dir.join("retest_rt.c");
    std::fs::write(&c, RUNTIME_SOURCE)?;
    Ok(c)
}
pub use preprocess::{Preprocessed, SourceFile, run_preprocessor};
pub use project::TuJob;
pub use retest_graph::{Problem, Procedure, Unit};
pub use tu::{TuAnalysis, analyze, analyze_with};
