//! The one-line errors the CLI prints: what went wrong, where, and what to do.

use std::fmt::Display;

/// A failure reported to the user as a single line on stderr.
#[derive(Debug)]
pub struct Fail {
    pub what: String,
    pub hint: Option<String>,
    /// Process exit code: 1 for failures, 2 for usage errors.
    pub code: u8,
}

impl Fail {
    pub fn new(what: impl Display) -> Fail {
        Fail { what: what.to_string(), hint: None, code: 1 }
    }

    pub fn usage(what: impl Display) -> Fail {
        Fail { what: what.to_string(), hint: None, code: 2 }
    }

    pub fn hint(mut self, hint: impl Display) -> Fail {
        self.hint = Some(hint.to_string());
        self
    }

    pub fn print(&self) {
        match &self.hint {
            Some(h) => eprintln!("error: {} — {}", self.what, h),
            None => eprintln!("error: {}", self.what),
        }
    }
}

/// Turns any error into a [`Fail`] (its display text, one line).
pub trait OrFail<T> {
    fn or_fail(self) -> Result<T, Fail>;
    fn or_fail_hint(self, hint: &str) -> Result<T, Fail>;
}

impl<T, E: Display> OrFail<T> for Result<T, E> {
    fn or_fail(self) -> Result<T, Fail> {
        self.map_err(|e| Fail::new(one_line(&e.to_string())))
    }
    fn or_fail_hint(self, hint: &str) -> Result<T, Fail> {
        self.map_err(|e| Fail::new(one_line(&e.to_string())).hint(hint))
    }
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}
