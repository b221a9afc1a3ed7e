//! Arguments several commands share, and their engine values.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
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

/// `--algorithm`: the names of [`Algorithm::name`], each with its [`Algorithm::about`].
fn algorithm_parser() -> impl clap::builder::TypedValueParser<Value = Algorithm> {
    let values = Algorithm::ALL.map(|a| PossibleValue::new(a.name()).help(a.about()));
    // the names were checked against the same list
    PossibleValuesParser::new(values).map(|name| Algorithm::from_name(&name).unwrap_or_default())
}

#[derive(Args, Clone)]
pub struct SelectionArgs {
    /// Analyse the sources named by this compilation database as the new version,
    /// without building (default: the newest snapshot built with the wrapper).
    #[arg(short = 'p', long = "project", value_name = "compile_commands.json")]
    pub project: Option<PathBuf>,
    #[arg(long, value_parser = algorithm_parser(), default_value = "dejavu")]
    pub algorithm: Algorithm,
    /// Compare every pair of same-named procedures instead of walking from `main`.
    #[arg(long)]
    pub naive: bool,
    /// Select no test for changes in constructors and operators, to test them on their own
    /// (003 §6.4); what is set aside is listed. Also `skip_constructor_and_operator_changes`
    /// in retest.toml's `[select]`, beside `not_under_test` (driver, setup and oracle code)
    #[arg(long)]
    pub skip_constructor_and_operator_changes: bool,
    /// Class-level selection (003 §4): the tests to rerun for changes in this C++ class and
    /// its bases only (its methods and the ones it inherits); changes elsewhere are counted,
    /// not considered
    #[arg(long, value_name = "CLASS")]
    pub class: Option<String>,
    #[command(flatten)]
    pub source: TestSourceArgs,
}

impl SelectionArgs {
    pub fn options(&self) -> SelectOptions {
        SelectOptions {
            project: self.project.clone(),
            algorithm: self.algorithm,
            naive: self.naive,
            source: self.source.source(),
            skip_constructors_and_operators: self.skip_constructor_and_operator_changes,
            scoped: true,
            class: self.class.clone(),
            baseline: None,
            // compare every unit and walk every procedure, also those the
            // change left the same (for checking)
            whole_program: std::env::var_os("RETEST_WHOLE_PROGRAM").is_some_and(|v| v != "0"),
            every_walk: std::env::var_os("RETEST_WHOLE_PROGRAM").is_some_and(|v| v != "0"),
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
