//! The terminal's side of the engine's [`Reporter`]: warnings and notes on
//! stderr, progress bars on a terminal, silence for bars in CI and pipes; and
//! how much to say (`--quiet`, `--verbose`).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use retest_engine::{Context, Progress, Reporter};

/// How much the commands say, from the global `--quiet` / `--verbose`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Verbosity {
    /// Errors, warnings and the result lines machines read; no notes, no bars.
    Quiet = 0,
    /// As well: notes, summaries, progress bars on a terminal.
    Normal = 1,
    /// As well: a line per finished test and the engine's details.
    Verbose = 2,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

/// Sets the process's verbosity (once, from the command line).
pub fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        2 => Verbosity::Verbose,
        _ => Verbosity::Normal,
    }
}

/// Whether more than the result lines are wanted (not `--quiet`).
pub fn chatty() -> bool {
    verbosity() > Verbosity::Quiet
}

/// Whether progress should be shown: stderr is a terminal, we are not in CI
/// and not `--quiet`.
pub fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() && chatty()
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

/// Reports on stderr as `PREFIX: warning: …` and `PREFIX: …`. Warnings are
/// shown even with `--quiet`: they say why a result may not be what it seems
/// (coverage not recorded, a half-written build), which a safety tool does
/// not hide. Notes need the default verbosity, details `--verbose`.
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
        if chatty() {
            eprintln!("{}: {text}", self.prefix);
        }
    }
    fn detail(&self, text: &str) {
        if verbosity() == Verbosity::Verbose {
            eprintln!("{}: {text}", self.prefix);
        }
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
