//! The `retest` command line. Only argument parsing, progress display and output
//! formats live here; the work is done by the library crates.

mod cfg;
mod fail;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::fail::Fail;

/// Safe regression test selection and coverage (up to MC/DC) for C programs.
#[derive(Parser)]
#[command(name = "retest", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build and print control-flow graphs of C functions.
    Cfg(cfg::CfgArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), Fail> = match cli.command {
        Command::Cfg(a) => cfg::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            f.print();
            ExitCode::from(f.code)
        }
    }
}
