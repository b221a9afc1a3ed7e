//! Progress bars on a terminal; silence in CI and pipes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

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
