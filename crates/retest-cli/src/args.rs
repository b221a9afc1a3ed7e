//! Arguments several commands share, and their engine values.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use retest_engine::run::TestSource;
use retest_engine::select::{Algorithm, SelectOptions};

/// Where the tests come from.
#[derive(Args, Clone, Default)]
pub struct TestSourceArgs {
    /// A universe file: one shell command per line, run from the file's directory;
    /// test N is named tN.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["ctest", "tests"])]
    pub universe: Option<PathBuf>,
    /// A CMake build directory: tests from `ctest --show-only=json-v1`.
    #[arg(long, value_name = "BUILD_DIR", conflicts_with = "tests")]
    pub ctest: Option<PathBuf>,
    /// A retest.toml (default: retest.toml in the current directory, else in the project root).
    #[arg(long, value_name = "FILE")]
    pub tests: Option<PathBuf>,
}

impl TestSourceArgs {
    pub fn source(&self) -> TestSource {
        TestSource { universe: self.universe.clone(), ctest: self.ctest.clone(), tests: self.tests.clone() }
    }
}

/// A selection algorithm, as `--algorithm` spells it.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
pub enum AlgorithmArg {
    /// Rothermel & Harrold's DejaVu (default): tests through a dangerous edge.
    Dejavu,
    /// Ball's partial-reachability: tests through a transition leaving V''_accept.
    Partial,
    /// Ball's full-reachability: tests whose covered edges reach `reject` from the entry in G''.
    Full,
    /// Ball's valid-reachability (⊑ by dominance only: coverage is a union of executions).
    Valid,
    /// Ball's path-based selection on the acyclic paths `retest build --paths`
    /// recorded, refined by valid-reachability; edge coverage where no paths were recorded.
    Path,
    /// Tests that executed any changed function (testmon / RustyRTS granularity).
    Function,
    /// Tests that executed anything in a changed translation unit (Ekstazi granularity).
    File,
}

impl AlgorithmArg {
    pub fn algorithm(self) -> Algorithm {
        match self {
            AlgorithmArg::Dejavu => Algorithm::Dejavu,
            AlgorithmArg::Partial => Algorithm::Partial,
            AlgorithmArg::Full => Algorithm::Full,
            AlgorithmArg::Valid => Algorithm::Valid,
            AlgorithmArg::Path => Algorithm::Path,
            AlgorithmArg::Function => Algorithm::Function,
            AlgorithmArg::File => Algorithm::File,
        }
    }
}

#[derive(Args, Clone)]
pub struct SelectionArgs {
    /// Analyse the sources named by this compilation database as the new version,
    /// without building (default: the newest snapshot built with the wrapper).
    #[arg(short = 'p', long = "project", value_name = "compile_commands.json")]
    pub project: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = AlgorithmArg::Dejavu)]
    pub algorithm: AlgorithmArg,
    /// Compare every pair of same-named procedures instead of walking from `main`.
    #[arg(long)]
    pub naive: bool,
    #[command(flatten)]
    pub source: TestSourceArgs,
}

impl SelectionArgs {
    pub fn options(&self) -> SelectOptions {
        SelectOptions {
            project: self.project.clone(),
            algorithm: self.algorithm.algorithm(),
            naive: self.naive,
            source: self.source.source(),
        }
    }
}

/// Output formats of `select`, `audit` and `run`: `text` for people (also
/// accepted as `human`), `json` for machines.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
pub enum TextOrJson {
    #[value(alias = "human")]
    Text,
    Json,
}
