//! `retest-cover`: coverage reports from recorded edge coverage.
//!
//! * [`lines`] — line, branch and function coverage per source file.
//! * [`lcov`] — LCOV tracefiles.
//! * [`recover`] — keeping the coverage matrix exact across versions (RECOVER).
//!
//! Architecture invariant: no I/O beyond the `std::io::Write` a writer is handed;
//! nothing about C.

pub mod lcov;
pub mod lines;
pub mod recover;
