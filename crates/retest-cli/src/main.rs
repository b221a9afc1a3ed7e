//! The `retest` command line. Only argument parsing, progress display and output
//! formats live here; the work is done by `retest-engine` and the crates below
//! it. A command's module imports no other command's module: what several
//! share is in `args`, `fail` and `progress`.

mod args;
mod audit;
mod build;
mod cfdg;
mod cfg;
mod compare;
mod coverage;
mod demo;
mod fail;
mod init;
mod junit;
mod merge;
mod progress;
mod run;
mod select;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::fail::Fail;

// Selection decodes many small strings and vectors on several threads: with
// glibc's allocator a third of a `select` on a header change went to
// allocating and to growing the threads' heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Safe regression test selection and coverage (up to MC/DC) for C and C++ programs.
#[derive(Parser)]
#[command(name = "retest", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// The store (a project root or its `.retest` directory); default: `.retest`
    /// in the current directory or its nearest parent.
    #[arg(long, global = true, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Print only errors, warnings and the result lines machines read (no
    /// notes, summaries or progress bars).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: a line per finished test, and what the engine decides.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The whole workflow on the bundled example, in a scratch directory.
    Demo(demo::DemoArgs),
    /// Create the store (.retest/) and a starter retest.toml.
    Init(init::InitArgs),
    /// Run a build command with the compiler wrapper: `retest build -- make -j4`.
    Build(build::BuildArgs),
    /// Build and print control-flow graphs of C and C++ functions.
    Cfg(cfg::CfgArgs),
    /// Annotate CFG dumps of GCC or LLVM (DOT) with their decisions.
    Cfdg(cfdg::CfdgArgs),
    /// Coverage reports (text, JSON, LCOV, Cobertura, HTML) up to MC/DC from the recorded coverage.
    Coverage(coverage::CoverageArgs),
    /// Run the tests and record their outcomes and coverage (the baseline).
    Run(run::RunArgs),
    /// Combine the stores CI workers recorded their shards into (`run --partition`) into one.
    Merge(merge::MergeArgs),
    /// The tests to rerun for the change since the baseline, with reasons.
    Select(select::SelectArgs),
    /// Why one test is or is not selected.
    Explain(select::ExplainArgs),
    /// Run the whole suite on the current build and check that every test whose
    /// behaviour changed since the baseline was selected (exit code 3 on a miss).
    Audit(audit::AuditArgs),
    /// Every selection algorithm on the change since the baseline: tests selected,
    /// analysis time, and misses if `retest audit` ran on the new build.
    CompareAlgorithms(compare::CompareArgs),
    /// Print a shell completion script: `retest completions bash > /etc/bash_completion.d/retest`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout, or write one page per command into a directory.
    Man {
        /// Write `retest.1` and `retest-COMMAND.1` for every command into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// The compiler wrapper for C: use as `CC="retest cc"` (all arguments pass to the compiler).
    #[command(name = "cc", disable_help_flag = true)]
    Cc {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The compiler wrapper for C++: use as `CXX="retest c++"` (all arguments pass to the compiler).
    #[command(name = "c++", disable_help_flag = true)]
    Cxx {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    // tree-sitter's parser and trees allocate through the same allocator
    // (with glibc's, allocating was a tenth of a parse). Nothing has been
    // parsed yet, so nothing tree-sitter holds was allocated otherwise.
    // SAFETY: the functions are mimalloc's C allocator, with C's signatures.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
    // SQLite too (nothing has opened a store yet)
    retest_store::sqlite_on_mimalloc();
    // The wrapper takes the compiler's arguments verbatim: dispatch before clap.
    let argv: Vec<String> = std::env::args().collect();
    if let Some(cmd) = argv.get(1)
        && (cmd == "cc" || cmd == "c++")
    {
        return build::wrapper(cmd == "c++", argv[2..].to_vec());
    }
    let cli = Cli::parse();
    progress::set_verbosity(if cli.quiet {
        progress::Verbosity::Quiet
    } else if cli.verbose {
        progress::Verbosity::Verbose
    } else {
        progress::Verbosity::Normal
    });
    let store = cli.store.as_deref();
    let result: Result<ExitCode, Fail> = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Init(a) => init::run(store, a).map(|_| ExitCode::SUCCESS),
        Command::Build(a) => build::build(store, a),
        Command::Cfg(a) => cfg::run(a).map(|_| ExitCode::SUCCESS),
        Command::Cfdg(a) => cfdg::run(a).map(|_| ExitCode::SUCCESS),
        Command::Coverage(a) => coverage::run(store, a),
        Command::Run(a) => run::run(store, a),
        Command::Merge(a) => merge::run(store, a).map(|_| ExitCode::SUCCESS),
        Command::Select(a) => select::run(store, a).map(|_| ExitCode::SUCCESS),
        Command::Explain(a) => select::explain(store, a).map(|_| ExitCode::SUCCESS),
        Command::Audit(a) => audit::run(store, a),
        Command::CompareAlgorithms(a) => compare::run(store, a).map(|_| ExitCode::SUCCESS),
        Command::Completions { shell } => completions(shell).map(|_| ExitCode::SUCCESS),
        Command::Man { dir } => man(dir.as_deref()).map(|_| ExitCode::SUCCESS),
        Command::Cc { args } => Ok(build::wrapper(false, args)),
        Command::Cxx { args } => Ok(build::wrapper(true, args)),
    };
    match result {
        Ok(code) => code,
        // the reader of our output went away (`retest select | head`): nothing to report
        Err(f) if f.what.starts_with("Broken pipe") => ExitCode::SUCCESS,
        Err(f) => fail::exit(&f),
    }
}

/// `retest completions SHELL`: the script on stdout.
fn completions(shell: clap_complete::Shell) -> Result<(), Fail> {
    use clap::CommandFactory;
    use fail::OrFail;
    use std::io::Write;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "retest", &mut out);
    std::io::stdout().lock().write_all(&out).or_fail()
}

/// `retest man`: the top page on stdout; `--dir DIR`: a page per command.
fn man(dir: Option<&std::path::Path>) -> Result<(), Fail> {
    use clap::CommandFactory;
    use fail::OrFail;
    use std::io::Write;
    let cmd = Cli::command();
    match dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out).or_fail()?;
            std::io::stdout().lock().write_all(&out).or_fail()
        }
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| {
                Fail::new(format!("cannot create {}: {e}", d.display())).hint("give a directory you can write to")
            })?;
            clap_mangen::generate_to(cmd, d).map_err(|e| {
                Fail::new(format!("cannot write the manual pages into {}: {e}", d.display()))
                    .hint("give a directory you can write to")
            })?;
            if progress::chatty() {
                println!("manual pages written to {} (`man -l {}/retest.1`)", d.display(), d.display());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap's own checks of the command line (unique names and groups,
    /// conflicts that name real arguments), which otherwise fail only when the
    /// faulty subcommand is first used.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
