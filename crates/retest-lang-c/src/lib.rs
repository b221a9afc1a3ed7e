//! `retest-lang-c`: the C front end.
//!
//! Runs the user's compiler as the preprocessor ([`preprocess`]), parses the result
//! with tree-sitter-c, and builds for every function defined in the project's own
//! files a statement-level and a condition-level CFG ([`build`], [`tu`]), plus the
//! declarations outside functions ([`decls`]) that selection compares to find
//! affected names. [`driver`] understands compiler command lines, [`project`]
//! turns compile commands into analysis jobs.
//!
//! Architecture invariant: the front end never fails on a file. It returns the CFGs
//! it could build plus problems (file:line, what); a function it could not build
//! exactly is marked *unanalysable* and selection treats it as changed.

pub mod build;
pub mod decls;
pub mod driver;
pub mod preprocess;
pub mod project;
pub mod syntax;
pub mod tu;

pub use build::{FunctionCfgs, Site};
pub use preprocess::{Preprocessed, SourceFile, run_preprocessor};
pub use project::TuJob;
pub use retest_graph::{Problem, Procedure, Unit};
pub use tu::{TuAnalysis, analyze};
