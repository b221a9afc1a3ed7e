//! The terminal's side of the engine's [`Reporter`]: warnings and notes on
//! stderr, progress bars on a terminal, silence for bars in CI and pipes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use retest_engine::{Context, Progress, Reporter};

/// Whether progress should be shown: stderr is a terminal and we are not in CI.
pub fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// A bar of `len` steps with a message, or a hidden one when not interactive.
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    if !interactive() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(msg.to_string());
    pb
}

/// Reports on stderr as `PREFIX: warning: …` and `PREFIX: …`.
pub struct Terminal {
    pub prefix: &'static str,
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Reporter for Terminal {
    fn warn(&self, text: &str) {
        eprintln!("{}: warning: {text}", self.prefix);
    }
    fn note(&self, text: &str) {
        eprintln!("{}: {text}", self.prefix);
    }
    fn progress(&self, len: u64, label: &str) -> Box<dyn Progress + '_> {
        Box::new(Bar(bar(len, label)))
    }
}

/// The reporter of the commands: `retest: …`.
pub static RETEST: Terminal = Terminal { prefix: "retest" };

/// The engine's context for a command of this process: it reports on the
/// terminal, and builds run this executable as their compiler wrapper.
pub fn context(reporter: &'static Terminal) -> Result<Context<'static>, crate::fail::Fail> {
    use crate::fail::OrFail;
    Ok(Context::new(reporter, std::env::current_exe().or_fail()?))
}
