//! The one-line errors the CLI prints, and its exit codes.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | tests failed (`retest run`) |
//! | 2 | usage error (bad arguments, unknown test) |
//! | 3 | `retest audit` found a test whose behaviour changed but was not selected |
//! | 4 | `retest coverage --fail-under`: a measure is under its threshold |
//! | 5 | retest itself failed (damaged store, failed build, I/O) |
//! | 130 | interrupted by Ctrl-C |
//!
//! The compiler wrapper (`retest cc`) exits with the compiler's code.

use std::process::ExitCode;

pub use retest_engine::{Error as Fail, ErrorKind, OrFail};

/// Tests failed.
pub const TESTS_FAILED: u8 = 1;
/// The audit found a miss.
pub const AUDIT_MISS: u8 = 3;

/// The exit code of an error.
pub fn code(e: &Fail) -> u8 {
    match e.kind {
        ErrorKind::Usage => 2,
        ErrorKind::CoverageGate => 4,
        ErrorKind::Failure => 5,
        ErrorKind::Interrupted => retest_engine::interrupt::EXIT_CODE,
    }
}

/// Prints `error: what — hint` on stderr, with `prefix` (`retest cc: `) first.
pub fn print(e: &Fail, prefix: &str) {
    match &e.hint {
        Some(h) => eprintln!("{prefix}error: {} — {}", e.what, h),
        None => eprintln!("{prefix}error: {}", e.what),
    }
}

/// Prints the error and gives its exit code.
pub fn exit(e: &Fail) -> ExitCode {
    print(e, "");
    ExitCode::from(code(e))
}
