//! The engine's error: what went wrong, and what to do about it.
//!
//! Every failure the engine reports is one of these: a sentence saying what
//! happened and where (`what`), and, when there is one, the remedy (`hint`).
//! The CLI prints it as one line and exits with the code of its [`ErrorKind`].

use std::fmt::Display;

/// What kind of failure, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// retest could not do its job (a damaged store, a failed build, I/O).
    Failure,
    /// The request itself is wrong (bad arguments, an unknown test).
    Usage,
    /// A measure of coverage is under its `--fail-under` threshold.
    CoverageGate,
    /// Ctrl-C stopped the work; what was kept is said in the message.
    Interrupted,
}

/// A failure of the engine, reported to the user as a single line.
#[derive(Debug, thiserror::Error)]
#[error("{what}")]
pub struct Error {
    pub what: String,
    pub hint: Option<String>,
    pub kind: ErrorKind,
}

impl Error {
    pub fn new(what: impl Display) -> Error {
        Error { what: what.to_string(), hint: None, kind: ErrorKind::Failure }
    }

    pub fn usage(what: impl Display) -> Error {
        Error { what: what.to_string(), hint: None, kind: ErrorKind::Usage }
    }

    pub fn interrupted(what: impl Display) -> Error {
        Error { what: what.to_string(), hint: None, kind: ErrorKind::Interrupted }
    }

    pub fn hint(mut self, hint: impl Display) -> Error {
        self.hint = Some(hint.to_string());
        self
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns any error into an [`Error`] (its display text, on one line).
pub trait OrFail<T> {
    fn or_fail(self) -> Result<T>;
    fn or_fail_hint(self, hint: &str) -> Result<T>;
}

impl<T, E: Display> OrFail<T> for std::result::Result<T, E> {
    fn or_fail(self) -> Result<T> {
        self.map_err(|e| Error::new(one_line(&e.to_string())))
    }
    fn or_fail_hint(self, hint: &str) -> Result<T> {
        self.map_err(|e| Error::new(one_line(&e.to_string())).hint(hint))
    }
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_error_becomes_one_line() {
        let e: Result<()> = Err("first\n  second\n\n").or_fail_hint("do this");
        let e = e.unwrap_err();
        assert_eq!(
            (e.what.as_str(), e.hint.as_deref(), e.kind),
            ("first; second", Some("do this"), ErrorKind::Failure)
        );
    }
}
