//! `retest build -- CMD` and the compiler wrapper (`retest cc`, `retest c++`):
//! a build session of the engine (`retest_engine::build`).

use std::path::Path;
use std::process::{ExitCode, ExitStatus};

use clap::Args;
use retest_cover::plan::RecordOptions;

use crate::fail::Fail;
use crate::progress::{self, Terminal};

#[derive(Args)]
pub struct BuildArgs {
    /// Also record every decision evaluation's condition vector (for MC/DC
    /// per evaluation: unique-cause and masking).
    #[arg(long)]
    mcdc: bool,
    /// Also record Ball–Larus acyclic paths (for `retest select --algorithm path`).
    #[arg(long)]
    paths: bool,
    /// Count executions: each probe adds one to a 64-bit counter instead of
    /// storing a byte, so reports show how many times each line
    /// ran (costs more than the default probes; see README, "Execution counts").
    #[arg(long)]
    counts: bool,
    /// The build command, e.g. `make -j4`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

static BUILD: Terminal = Terminal { prefix: "retest build" };
static CC: Terminal = Terminal { prefix: "retest cc" };
static CXX: Terminal = Terminal { prefix: "retest c++" };

/// `retest build -- CMD`: the build's exit code.
pub fn build(store_opt: Option<&Path>, a: BuildArgs) -> Result<ExitCode, Fail> {
    let (mut store, root) = retest_engine::store::open(store_opt)?;
    let cx = progress::context(&BUILD)?;
    let options = RecordOptions { mcdc: a.mcdc, paths: a.paths, counts: a.counts };
    let status = retest_engine::build::build(&cx, &mut store, &root, &a.command, options)?;
    Ok(exit_code(status))
}

/// The wrapper on the raw arguments after `cc` / `c++`: the compiler's exit
/// code, or 1 (as a compiler's error) when retest itself fails.
pub fn wrapper(cplusplus: bool, args: Vec<String>) -> ExitCode {
    let reporter = if cplusplus { &CXX } else { &CC };
    if matches!(args.as_slice(), [a] if a == "--help" || a == "-h") {
        let (name, var, default) = if cplusplus { ("c++", "RETEST_CXX", "c++") } else { ("cc", "RETEST_CC", "cc") };
        println!(
            "retest {name}: the compiler wrapper. Use it as the compiler (`{}=\"retest {name}\" make`, or `retest build -- make`):\n\
             every argument goes to the real compiler (${var}, else {default}); each of the project's sources is analysed and\n\
             instrumented first, and recorded in the store (.retest/ of this directory or a parent).\n\
             Its own options, before the compiler's: --mcdc (record MC/DC evaluations), --paths (record acyclic paths),\n\
             --counts (count executions).\n\
             A command with no input (`--version`, `-dumpmachine`) goes to the real compiler, with or without a store.",
            if cplusplus { "CXX" } else { "CC" }
        );
        return ExitCode::SUCCESS;
    }
    let result = progress::context(reporter).and_then(|cx| retest_engine::build::wrap(&cx, cplusplus, args));
    match result {
        Ok(status) => exit_code(status),
        Err(f) => {
            crate::fail::print(&f, &format!("{}: ", reporter.prefix));
            ExitCode::from(1)
        }
    }
}

/// A child's exit status as our exit code (128 + N for signal N, as shells say).
fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(s)) => ExitCode::from((128 + s).clamp(0, 255) as u8),
        _ => ExitCode::from(1),
    }
}
