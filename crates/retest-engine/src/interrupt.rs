//! Ctrl-C: one handler for the whole process, installed on first use.
//!
//! Once installed, SIGINT no longer ends `retest`: it sets the flag, and the
//! code that asked for it stops at its next check (a run stops its tests, a
//! rebuild puts the previous build back) and reports it. The handler can be
//! installed only once per process, so every part asks for the same flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag Ctrl-C sets, with the handler installed.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let set = flag.clone();
        let _ = ctrlc::set_handler(move || set.store(true, Ordering::SeqCst));
        flag
    })
    .clone()
}

/// Whether Ctrl-C came. The handler runs on a thread of its own, so a child
/// that the same Ctrl-C stopped may be seen to end before the flag is set:
/// after a child that failed (`settle`), the handler is given a moment.
pub fn came(flag: &AtomicBool, settle: bool) -> bool {
    if settle && !flag.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    flag.load(Ordering::SeqCst)
}

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
pub const EXIT_CODE: u8 = 130;
