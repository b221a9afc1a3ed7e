//! How the engine tells its caller what happens while it works.
//!
//! The engine prints nothing. Warnings, notes and progress go to a
//! [`Reporter`]; the CLI renders them on stderr (bars only on a terminal), a
//! test collects them, and [`Quiet`] drops them. [`Reporter::detail`] is for
//! what only a verbose reader wants.

/// One long step (a bar on a terminal): advanced as items finish.
pub trait Progress {
    fn inc(&self, n: u64);
    fn finish(&self);
}

/// Receives what the engine has to say while it works.
pub trait Reporter: Sync {
    /// Something the user should know that does not stop the work
    /// (printed as `retest: warning: …`).
    fn warn(&self, text: &str);
    /// What the engine is doing or did (printed as `retest: …`).
    fn note(&self, text: &str);
    /// What only a reader who asked for detail wants (`--verbose`): a line
    /// per finished test, say. Dropped unless the reporter shows it.
    fn detail(&self, text: &str) {
        let _ = text;
    }
    /// A step of `len` items called `label` begins.
    fn progress(&self, len: u64, label: &str) -> Box<dyn Progress + '_>;
}

/// A reporter that drops everything.
#[derive(Default, Clone, Copy)]
pub struct Quiet;

struct NoProgress;

impl Progress for NoProgress {
    fn inc(&self, _: u64) {}
    fn finish(&self) {}
}

impl Reporter for Quiet {
    fn warn(&self, _: &str) {}
    fn note(&self, _: &str) {}
    fn progress(&self, _: u64, _: &str) -> Box<dyn Progress + '_> {
        Box::new(NoProgress)
    }
}

/// A reporter that keeps what it is told, for tests and for callers that
/// show it later.
#[derive(Default)]
pub struct Collect {
    pub warnings: std::sync::Mutex<Vec<String>>,
    pub notes: std::sync::Mutex<Vec<String>>,
    pub details: std::sync::Mutex<Vec<String>>,
}

impl Reporter for Collect {
    fn warn(&self, text: &str) {
        if let Ok(mut w) = self.warnings.lock() {
            w.push(text.to_string());
        }
    }
    fn note(&self, text: &str) {
        if let Ok(mut n) = self.notes.lock() {
            n.push(text.to_string());
        }
    }
    fn detail(&self, text: &str) {
        if let Ok(mut d) = self.details.lock() {
            d.push(text.to_string());
        }
    }
    fn progress(&self, _: u64, _: &str) -> Box<dyn Progress + '_> {
        Box::new(NoProgress)
    }
}
