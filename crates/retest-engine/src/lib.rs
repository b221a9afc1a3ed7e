//! retest's application layer.
//!
//! The lower crates each do one thing: the front end (`retest-lang-c`) turns a
//! translation unit into a [`retest_graph::Unit`], `retest-select` decides which
//! tests a change reaches, `retest-cover` measures, `retest-run` runs tests and
//! reads their traces, `retest-store` keeps it all. This crate puts them
//! together into what a user asks for:
//!
//! - a **build session** ([`build`]): the compiler wrapper and `retest build`;
//! - a **run** ([`run`]): discover, execute, record each test's coverage;
//! - a **selection** with reasons ([`select`]);
//! - **RECOVER** ([`recover`]): run the selected tests and bring every test's
//!   coverage up to date;
//! - an **audit** ([`audit`]) and **coverage reports** ([`coverage`]; conditions
//!   as written in the source, [`source_text`]).
//!
//! It prints nothing: what a user should see while it works goes through a
//! [`Reporter`], and what it found comes back as values. Failures are
//! [`Error`]s, each with what to do.

pub mod audit;

/// Below this many items, a loop whose items each cost microseconds runs on
/// the calling thread: starting the thread pool (its threads, each with a
/// heap of fresh pages) costs a short command more than the loop saves. A
/// jansson `select` with nothing changed (541 recorded files, 210 tests)
/// starts no thread of the pool: 5 huge pages touched instead of 6, 0.97
/// times the time.
pub(crate) const PARALLEL_FROM: usize = 2048;
pub mod build;
pub mod coverage;
pub mod deps;
pub mod error;
pub mod interrupt;
pub mod merge;
pub mod previous;
pub mod record;
pub mod recover;
pub mod report;
pub mod rerun;
pub mod reuse;
pub mod run;
pub mod select;
pub mod source_text;
pub mod steady;
pub mod store;
pub mod writing;

pub use error::{Error, ErrorKind, OrFail, Result};
pub use report::{Collect, Progress, Quiet, Reporter};

/// What every command of the engine needs from its caller.
pub struct Context<'a> {
    /// Where warnings, notes and progress go.
    pub reporter: &'a dyn Reporter,
    /// The `retest` executable: builds run it as their compiler wrapper
    /// (`CC="retest cc"`).
    pub wrapper: std::path::PathBuf,
}

impl<'a> Context<'a> {
    /// A context whose builds run `wrapper` as the compiler wrapper.
    pub fn new(reporter: &'a dyn Reporter, wrapper: impl Into<std::path::PathBuf>) -> Context<'a> {
        Context { reporter, wrapper: wrapper.into() }
    }
}
