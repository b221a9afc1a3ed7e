//! Test discovery: turn a project's description of its tests into a list of
//! [`TestSpec`]s that [`crate::exec::run_tests`] can run.
//!
//! Three sources are understood:
//! - [`from_toml`]: a `retest.toml` file with `[[test]]` tables (the native
//!   format; strict — unknown keys and duplicate names are errors), and
//!   `[[gtest]]` and `[[catch2]]` tables: test binaries whose cases are
//!   tests of their own, listed by the binary and run one per process;
//! - [`from_universe`]: a Siemens-style *universe* file, one shell command per
//!   non-empty line;
//! - [`from_ctest`]: the tests a CMake build directory registers with
//!   `add_test`, as listed by `ctest --show-only=json-v1`.
//!
//! Every source yields tests in the order the source lists them, with unique
//! names and absolute working directories. Discovery never runs a test (only
//! `ctest` itself, to list them) and never panics on user input: every
//! problem is a [`DiscoverError`] that names the file (and the line, when
//! known) and says what to do.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// One test: a shell command and the context it runs in.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TestSpec {
    /// Name of the test, unique within the list a discovery function returns.
    pub name: String,
    /// What identifies the test across versions of its source, unique within
    /// the list: its name for `retest.toml` and CTest; for a universe file
    /// its command (with `#N` appended for the N-th repetition of a line), so
    /// that a line inserted above it does not make it another test.
    pub key: String,
    /// Shell command line; the runner executes it with `/bin/sh -c cmd`.
    pub cmd: String,
    /// Absolute working directory of the command.
    pub cwd: PathBuf,
    /// Variables added to (or overriding) the runner's inherited environment,
    /// in the order they are applied.
    pub env: Vec<(String, String)>,
    /// Time limit of the test; `None` means the runner's default applies.
    pub timeout: Option<Duration>,
    /// The test passes when its command fails and fails when the command
    /// exits with 0 (CTest's `WILL_FAIL`). Always `false` for `retest.toml`
    /// and universe files.
    pub expect_failure: bool,
    /// Files and directories the test declares it reads (absolute), beyond
    /// what the file tracker observes (`inputs` of a `[[test]]`).
    pub inputs: Vec<PathBuf>,
    /// The CTest properties not mapped onto a field above, by name (values
    /// as JSON): part of the test's definition, since CTest acts on them.
    pub properties: Vec<(String, String)>,
}

/// What defines a test besides the code it runs: recorded with its coverage,
/// so that a changed definition selects it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, Deserialize)]
pub struct Definition {
    pub cmd: String,
    /// Relative to the project root when under it, else absolute.
    pub cwd: String,
    pub env: Vec<(String, String)>,
    /// Seconds; `None` for the runner's default.
    pub timeout: Option<f64>,
    pub expect_failure: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<(String, String)>,
}

/// [`Definition`] borrowed from a [`TestSpec`], serialised the same way.
#[derive(serde::Serialize)]
struct DefinitionRef<'a> {
    cmd: &'a str,
    cwd: std::borrow::Cow<'a, str>,
    env: &'a [(String, String)],
    timeout: Option<f64>,
    expect_failure: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    properties: &'a [(String, String)],
}

impl TestSpec {
    /// `self.definition(root).to_json()` without copying the spec first: a
    /// selection compares every test's with the one recorded.
    pub fn definition_json(&self, root: &Path) -> String {
        self.definition_json_in(&self.cwd_text(root))
    }

    /// [`TestSpec::definition_json`] with the working directory as
    /// [`TestSpec::cwd_text`] gives it (the same for most tests of a suite).
    pub fn definition_json_in(&self, cwd: &str) -> String {
        let d = DefinitionRef {
            cmd: &self.cmd,
            cwd: cwd.into(),
            env: &self.env,
            timeout: self.timeout.map(|t| t.as_secs_f64()),
            expect_failure: self.expect_failure,
            properties: &self.properties,
        };
        serde_json::to_string(&d).unwrap_or_default()
    }

    /// The working directory as a definition holds it: relative to the
    /// project root `root` when under it, else absolute.
    pub fn cwd_text(&self, root: &Path) -> String {
        match self.cwd.strip_prefix(root) {
            Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
            Ok(r) => r.to_string_lossy().into_owned(),
            Err(_) => self.cwd.to_string_lossy().into_owned(),
        }
    }

    /// The test's definition; `root` is the project root (absolute).
    pub fn definition(&self, root: &Path) -> Definition {
        Definition {
            cmd: self.cmd.clone(),
            cwd: self.cwd_text(root),
            env: self.env.clone(),
            timeout: self.timeout.map(|t| t.as_secs_f64()),
            expect_failure: self.expect_failure,
            properties: self.properties.clone(),
        }
    }
}

impl Definition {
    /// The definition as stored (JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(s: &str) -> Option<Definition> {
        serde_json::from_str(s).ok()
    }

    /// What differs from `old` to `self`, one phrase each: `` cmd `a` → `b` ``.
    pub fn changes_since(&self, old: &Definition) -> Vec<String> {
        let mut out = Vec::new();
        if old.cmd != self.cmd {
            out.push(format!("cmd `{}` → `{}`", old.cmd, self.cmd));
        }
        if old.cwd != self.cwd {
            out.push(format!("cwd `{}` → `{}`", old.cwd, self.cwd));
        }
        pairs_changes("env", &old.env, &self.env, &mut out);
        if old.timeout != self.timeout {
            let t = |t: Option<f64>| t.map_or("none".to_string(), |s| format!("{s}s"));
            out.push(format!("timeout {} → {}", t(old.timeout), t(self.timeout)));
        }
        if old.expect_failure != self.expect_failure {
            out.push(format!("expected to fail: {} → {}", old.expect_failure, self.expect_failure));
        }
        pairs_changes("property", &old.properties, &self.properties, &mut out);
        out
    }
}

/// Changes between two lists of (name, value), by name.
fn pairs_changes(what: &str, old: &[(String, String)], new: &[(String, String)], out: &mut Vec<String>) {
    let o: BTreeMap<&str, &str> = old.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let n: BTreeMap<&str, &str> = new.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let before = out.len();
    for (k, v) in &n {
        match o.get(k) {
            None => out.push(format!("{what} {k}=`{v}` added")),
            Some(w) if w != v => out.push(format!("{what} {k} `{w}` → `{v}`")),
            _ => {}
        }
    }
    for (k, w) in &o {
        if !n.contains_key(k) {
            out.push(format!("{what} {k}=`{w}` removed"));
        }
    }
    if out.len() == before && old != new {
        out.push(format!("{what}s reordered"));
    }
}

/// The `[dependencies]` table of a `retest.toml`: what `retest` records of
/// the files tests read (see [`dependency_settings`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepSettings {
    /// Whether the files the tests' processes read are observed (`track =
    /// false` leaves only the declared inputs: a change to any other file is
    /// not seen).
    pub track: bool,
    /// Globs of paths that are never dependencies.
    pub ignore: Vec<String>,
    /// Inputs of every test (absolute).
    pub inputs: Vec<PathBuf>,
    /// Inputs declared per test: (name pattern with `*` and `?`, inputs).
    pub tests: Vec<(String, Vec<PathBuf>)>,
}

impl Default for DepSettings {
    fn default() -> Self {
        DepSettings { track: true, ignore: Vec::new(), inputs: Vec::new(), tests: Vec::new() }
    }
}

impl DepSettings {
    /// The inputs declared for the test `name` by `[dependencies.tests]`.
    pub fn declared_for(&self, name: &str) -> Vec<PathBuf> {
        self.tests
            .iter()
            .filter(|(pat, _)| wildcard(pat.as_bytes(), name.as_bytes()))
            .flat_map(|(_, i)| i.iter().cloned())
            .collect()
    }
}

/// `*`/`?` wildcard match.
fn wildcard(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => wildcard(&p[1..], s) || (!s.is_empty() && wildcard(p, &s[1..])),
        (Some(b'?'), Some(_)) => wildcard(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => wildcard(&p[1..], &s[1..]),
        _ => false,
    }
}

/// Why a list of tests could not be discovered.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The file could not be read.
    #[error("cannot read {}: {source} — check that the file exists and is readable", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The file is not valid TOML, or a value has the wrong type or is
    /// missing.
    #[error("{}:{line}:{column}: {message} — fix the file (the keys of `[[test]]`, `[[gtest]]` and `[[catch2]]` are listed in the README under `retest run`)", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// What the TOML reader reported.
        message: String,
    },
    /// A key that `retest.toml` does not know, e.g. a misspelling.
    #[error("{}:{line}: unknown key `{key}` (expected {expected}) — remove it or correct its spelling", path.display())]
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// 1-based line of the key.
        line: usize,
        /// The key as written.
        key: String,
        /// The keys allowed at that place, e.g. "one of `name`, `cmd`".
        expected: String,
    },
    /// Two tests have the same name.
    #[error("{}:{line}: duplicate test name `{name}` (first defined on line {first_line}) — give every test a unique name", path.display())]
    DuplicateName {
        /// The file.
        path: PathBuf,
        /// 1-based line of the second definition.
        line: usize,
        /// 1-based line of the first definition.
        first_line: usize,
        /// The name.
        name: String,
    },
    /// A `timeout` that is not a positive, finite number of seconds.
    #[error("{}:{line}: timeout must be a positive number of seconds, found {found} — write e.g. `timeout = 30` or `timeout = 2.5`", path.display())]
    BadTimeout {
        /// The file.
        path: PathBuf,
        /// 1-based line of the value.
        line: usize,
        /// The value as TOML, e.g. `"10s"` or `-1`.
        found: String,
    },
    /// Any other problem with a value in a file.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// `build_dir` is not a CMake build directory with tests.
    #[error("{} has no CTestTestfile.cmake — pass the CMake build directory (the one `cmake -B` created) of a project that calls enable_testing() and add_test()", build_dir.display())]
    NotCtestDir {
        /// The directory given.
        build_dir: PathBuf,
    },
    /// No scratch directory could be made for what a listing records.
    #[error(
        "cannot make a scratch directory: {source} — check that the temporary directory ($TMPDIR or /tmp) is writable"
    )]
    Scratch {
        /// The operating system's reason.
        source: io::Error,
    },
    /// `ctest` could not be started.
    #[error("cannot run `ctest` in {}: {source} — install CMake 3.14 or newer and make sure `ctest` is on PATH", build_dir.display())]
    CtestSpawn {
        /// The build directory.
        build_dir: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// `ctest` ran but reported a failure.
    #[error("`ctest --show-only=json-v1` failed in {} ({status}): {stderr} — check that the build directory is configured (re-run cmake) and CMake is 3.14 or newer", build_dir.display())]
    CtestFailed {
        /// The build directory.
        build_dir: PathBuf,
        /// How ctest exited.
        status: String,
        /// What ctest wrote to stderr (trimmed).
        stderr: String,
    },
    /// The output of `ctest` is not what format `json-v1` describes.
    #[error("cannot understand the test list `ctest --show-only=json-v1` printed in {}: {message} — use CMake 3.14 or newer", build_dir.display())]
    CtestJson {
        /// The build directory.
        build_dir: PathBuf,
        /// What was unexpected.
        message: String,
    },
    /// One CTest test cannot be represented as a [`TestSpec`].
    #[error("CTest test `{test}` in {}: {message}", build_dir.display())]
    CtestTest {
        /// The build directory.
        build_dir: PathBuf,
        /// The test's name.
        test: String,
        /// What is wrong and what to do.
        message: String,
    },
}

// ---------------------------------------------------------------------------
// retest.toml

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    defaults: Option<TomlDefaults>,
    #[serde(default)]
    dependencies: Option<TomlDependencies>,
    #[serde(default)]
    select: Option<TomlSelect>,
    #[serde(default)]
    test: Vec<Spanned<TomlTest>>,
    #[serde(default)]
    gtest: Vec<Spanned<TomlSuite>>,
    #[serde(default)]
    catch2: Vec<Spanned<TomlSuite>>,
}

/// The `[select]` table (see [`select_settings`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlSelect {
    #[serde(default)]
    not_under_test: Vec<String>,
    #[serde(default)]
    skip_constructor_and_operator_changes: Option<bool>,
}

/// A test binary whose cases are tests of their own (`[[gtest]]`,
/// `[[catch2]]`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlSuite {
    binary: Spanned<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    timeout: Option<Spanned<toml::Value>>,
    #[serde(default)]
    filter: Option<String>,
    #[serde(default)]
    inputs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlDependencies {
    #[serde(default)]
    track: Option<bool>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default)]
    tests: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlDefaults {
    #[serde(default)]
    timeout: Option<Spanned<toml::Value>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlTest {
    name: Spanned<String>,
    cmd: Spanned<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    timeout: Option<Spanned<toml::Value>>,
    #[serde(default)]
    inputs: Vec<String>,
}

/// Reads a `retest.toml` file.
///
/// Format:
/// ```toml
/// [defaults]            # optional
/// timeout = 60          # seconds (integer or float), for tests without one
/// env = { LC_ALL = "C" }
///
/// [[test]]
/// name = "parse-empty"  # required, unique
/// cmd = "./parser < inputs/empty.txt"   # required, run with /bin/sh -c
/// cwd = "build"         # optional, relative to the toml file's directory
/// env = { MODE = "strict" }             # optional, added to the defaults
/// timeout = 2.5         # optional, overrides the default
/// inputs = ["data/big.bin", "tools/"]   # optional: files and directories it reads
///                                       # (relative to the toml file's directory)
///
/// [[gtest]]             # a GoogleTest binary: one test per case
/// binary = "build/unit_tests"           # required, relative to the toml file's directory
/// filter = "Parser.*"   # optional, a --gtest_filter for the listing
/// # cwd, env, timeout, inputs: as for [[test]], for each of its cases
///
/// [[catch2]]            # a Catch2 binary: one test per test case
/// binary = "build/catch_tests"
/// filter = "[parser]"   # optional, a Catch2 test spec for the listing
/// # cwd, env, timeout, inputs: as for [[test]]
/// ```
///
/// `[dependencies]` is read by [`dependency_settings`].
///
/// Contract:
/// - Tests are returned in file order: the `[[test]]` tables, then every
///   case of each `[[gtest]]` table, then every case of each `[[catch2]]`
///   table. `cwd` defaults to the directory of the
///   file (made absolute, symbolic links resolved); a relative `cwd` is
///   joined to that directory lexically (`.` components are dropped, `..`
///   kept; the directory need not exist yet).
/// - `env` of a test is `[defaults].env` overridden by the test's own `env`,
///   sorted by variable name.
/// - A timeout must be a positive, finite number of seconds.
/// - Unknown keys (anywhere), duplicate or empty names, an empty `cmd` and
///   values of the wrong type are errors that name the line.
/// - The cases of a `[[gtest]]` or `[[catch2]]` binary are listed by running
///   it (see [`Framework`]); each is a test named `binary/case` (the
///   binary's file name) that runs the binary alone on that case, in the
///   table's `cwd`, `env` and `timeout`. A binary that does not exist or
///   whose listing fails is an error naming the table's line.
/// - A file without test tables yields an empty list.
pub fn from_toml(path: &Path) -> Result<Vec<TestSpec>, DiscoverError> {
    let text = read_text(path)?;
    let path = absolute(path)?;
    let dir = parent_dir(&path);
    let file: TomlFile = toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))?;
    let toml = TomlSource { path: &path, text: &text, dir: &dir };

    let defaults = match file.defaults {
        Some(d) => {
            let timeout = match &d.timeout {
                Some(v) => Some(timeout_value(&path, &text, v)?),
                None => None,
            };
            Context { cwd: dir.clone(), env: d.env, timeout, inputs: Vec::new() }
        }
        None => Context { cwd: dir.clone(), ..Context::default() },
    };

    let mut names = Names::default();
    let mut specs = Vec::with_capacity(file.test.len());
    for test in file.test {
        let test = test.into_inner();
        let name_line = line_of(&text, test.name.span().start);
        let name = test.name.into_inner();
        if name.trim().is_empty() {
            return Err(DiscoverError::Invalid {
                path,
                line: name_line,
                message: "test name is empty — give the test a unique, non-empty name".into(),
            });
        }
        names.claim(&path, &name, name_line)?;

        let cmd_line = line_of(&text, test.cmd.span().start);
        let cmd = test.cmd.into_inner();
        if cmd.trim().is_empty() {
            return Err(DiscoverError::Invalid {
                path,
                line: cmd_line,
                message: format!("`cmd` of test `{name}` is empty — give the shell command to run"),
            });
        }
        let cx = toml.context(&defaults, test.cwd.as_deref(), test.env, test.timeout.as_ref(), &test.inputs)?;
        specs.push(cx.spec(name, cmd));
    }
    for (framework, tables) in [(Framework::Gtest, file.gtest), (Framework::Catch2, file.catch2)] {
        for t in tables {
            let t = t.into_inner();
            let line = line_of(&text, t.binary.span().start);
            let binary = normalize(&dir.join(t.binary.get_ref()));
            let cx = toml.context(&defaults, t.cwd.as_deref(), t.env, t.timeout.as_ref(), &t.inputs)?;
            let cases = framework
                .cases(&binary, &cx, t.filter.as_deref())
                .map_err(|message| DiscoverError::Invalid { path: path.clone(), line, message })?;
            let short = binary.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            // relative to the working directory where it can be, so that the
            // definition does not change when the project moves
            let program = match binary.strip_prefix(&cx.cwd) {
                Ok(rel) => format!("./{}", rel.to_string_lossy()),
                Err(_) => binary.to_string_lossy().into_owned(),
            };
            for case in cases {
                let name = format!("{short}/{case}");
                names.claim(&path, &name, line)?;
                let cmd = format!("{} {}", shell_quote(&program), framework.run_args(&case));
                specs.push(cx.spec(name, cmd));
            }
        }
    }
    Ok(specs)
}

/// The `retest.toml` being read: where relative paths start and what line
/// an error names.
struct TomlSource<'a> {
    path: &'a Path,
    text: &'a str,
    dir: &'a Path,
}

/// Where and how the tests of one table run: what the keys every table
/// has (`cwd`, `env`, `timeout`, `inputs`) make of `[defaults]`.
#[derive(Clone, Debug, Default)]
struct Context {
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    timeout: Option<Duration>,
    inputs: Vec<PathBuf>,
}

impl TomlSource<'_> {
    /// The context of a table: its own keys over `defaults`.
    fn context(
        &self,
        defaults: &Context,
        cwd: Option<&str>,
        env: BTreeMap<String, String>,
        timeout: Option<&Spanned<toml::Value>>,
        inputs: &[String],
    ) -> Result<Context, DiscoverError> {
        let mut all_env = defaults.env.clone();
        all_env.extend(env);
        Ok(Context {
            cwd: cwd.map_or_else(|| defaults.cwd.clone(), |c| normalize(&self.dir.join(c))),
            env: all_env,
            timeout: match timeout {
                Some(v) => Some(timeout_value(self.path, self.text, v)?),
                None => defaults.timeout,
            },
            inputs: inputs.iter().map(|i| normalize(&self.dir.join(i))).collect(),
        })
    }
}

impl Context {
    /// The test `name` that runs `cmd` here.
    fn spec(&self, name: String, cmd: String) -> TestSpec {
        TestSpec {
            key: name.clone(),
            name,
            cmd,
            cwd: self.cwd.clone(),
            env: self.env.clone().into_iter().collect(),
            timeout: self.timeout,
            expect_failure: false,
            inputs: self.inputs.clone(),
            properties: Vec::new(),
        }
    }
}

/// The names given so far, with the line of each: a second test of the
/// same name is an error.
#[derive(Default)]
struct Names(HashMap<String, usize>);

impl Names {
    fn claim(&mut self, path: &Path, name: &str, line: usize) -> Result<(), DiscoverError> {
        if let Some(&first_line) = self.0.get(name) {
            return Err(DiscoverError::DuplicateName {
                path: path.to_path_buf(),
                line,
                first_line,
                name: name.to_string(),
            });
        }
        self.0.insert(name.to_string(), line);
        Ok(())
    }
}

/// A test framework whose binaries list their cases and run one alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    /// GoogleTest: cases from `--gtest_list_tests` (`Suite.Name`,
    /// parameterised ones as `Prefix/Suite.Name/0`), disabled ones left
    /// out; a case runs with `--gtest_filter=Suite.Name`.
    Gtest,
    /// Catch2: test cases from `--list-tests --reporter xml` (v3) or
    /// `--list-test-names-only` (v2), hidden ones left out (as the listing
    /// does); a case runs with a test spec that names it alone
    /// ([`catch2_spec`]) and `--warn NoTests`, so that a spec that matches
    /// nothing fails instead of passing with nothing run.
    Catch2,
}

impl Framework {
    /// The cases of `binary`, listed in `cx` (with `filter`, in the
    /// framework's syntax, if given). The listing runs with a trace
    /// directory of its own, so an instrumented binary records nothing
    /// anywhere that matters.
    fn cases(self, binary: &Path, cx: &Context, filter: Option<&str>) -> Result<Vec<String>, String> {
        if !binary.is_file() {
            return Err(format!(
                "test binary {} does not exist — build it first (`retest build -- …`), or correct `binary`",
                binary.display()
            ));
        }
        match self {
            Framework::Gtest => {
                let mut args = vec!["--gtest_list_tests".to_string()];
                args.extend(filter.map(|f| format!("--gtest_filter={f}")));
                let out = list(binary, cx, &args)?;
                if !out.status.success() {
                    return Err(listing_failed(binary, &args, &out, "is it a GoogleTest binary?"));
                }
                Ok(parse_gtest_list(&String::from_utf8_lossy(&out.stdout)))
            }
            Framework::Catch2 => {
                let spec = filter.map(str::to_string);
                let args: Vec<String> =
                    ["--list-tests", "--reporter", "xml"].into_iter().map(String::from).chain(spec.clone()).collect();
                let out = list(binary, cx, &args)?;
                let text = String::from_utf8_lossy(&out.stdout);
                if let Some(names) = parse_catch2_xml(&text) {
                    if !out.status.success() {
                        return Err(listing_failed(binary, &args, &out, "is it a Catch2 binary?"));
                    }
                    return Ok(names);
                }
                // Catch2 v2 lists for people whatever the reporter; its exit
                // status is the number of cases it lists (modulo 256)
                let args: Vec<String> = std::iter::once("--list-test-names-only".to_string()).chain(spec).collect();
                let out = list(binary, cx, &args)?;
                let names = parse_catch2_names(&String::from_utf8_lossy(&out.stdout));
                if out.status.code() != Some((names.len() % 256) as i32) {
                    return Err(listing_failed(binary, &args, &out, "is it a Catch2 binary (v2 or v3)?"));
                }
                Ok(names)
            }
        }
    }

    /// The arguments (shell-quoted) that run `case` alone.
    fn run_args(self, case: &str) -> String {
        match self {
            Framework::Gtest => format!("--gtest_filter={}", shell_quote(case)),
            Framework::Catch2 => format!("{} --warn NoTests", shell_quote(&catch2_spec(case))),
        }
    }
}

/// Runs `binary ARGS` in `cx` to list its cases.
fn list(binary: &Path, cx: &Context, args: &[String]) -> Result<std::process::Output, String> {
    let traces = tempfile::tempdir().map_err(|e| format!("cannot make a scratch directory: {e}"))?;
    Command::new(binary)
        .args(args)
        .current_dir(&cx.cwd)
        .envs(&cx.env)
        .env("RETEST_TRACE_DIR", traces.path())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))
}

fn listing_failed(binary: &Path, args: &[String], out: &std::process::Output, question: &str) -> String {
    let said = if out.stderr.iter().all(u8::is_ascii_whitespace) { &out.stdout } else { &out.stderr };
    let said = String::from_utf8_lossy(said);
    let said = if said.trim().is_empty() { "no output" } else { said.trim() };
    format!("`{} {}` failed ({}): {said} — {question}", binary.display(), args.join(" "), out.status)
}

/// Parses `--gtest_list_tests` output: a suite line (`Suite.`, maybe with a
/// `# TypeParam = …` comment), then its cases indented (maybe with
/// `# GetParam() = …`).
pub fn parse_gtest_list(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut suite: Option<String> = None;
    for line in text.lines() {
        let body = line.split('#').next().unwrap_or("").trim_end();
        if body.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            let s = body.trim();
            suite = s.strip_suffix('.').map(str::to_string);
            continue;
        }
        let Some(s) = &suite else { continue };
        let case = body.trim();
        let disabled = |n: &str| n.starts_with("DISABLED_") || n.contains("/DISABLED_");
        if disabled(s) || disabled(case) {
            continue;
        }
        out.push(format!("{s}.{case}"));
    }
    out
}

/// The test case names of a Catch2 v3 `--list-tests --reporter xml`
/// listing (the `Name` of every `TestCase` in `MatchingTests`), or `None`
/// when `text` is no such listing.
pub fn parse_catch2_xml(text: &str) -> Option<Vec<String>> {
    let start = text.find("<MatchingTests")?;
    let rest = &text[start..];
    let end = rest.find("</MatchingTests>").unwrap_or(rest.len());
    let mut names = Vec::new();
    let mut body = &rest[..end];
    while let Some(i) = body.find("<Name>") {
        body = &body[i + "<Name>".len()..];
        let j = body.find("</Name>")?;
        names.push(xml_unescape(&body[..j]));
        body = &body[j..];
    }
    Some(names)
}

/// Decodes the character references Catch2's XML writer produces.
fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(semi) = rest.find(';') else { break };
        let decoded = match &rest[1..semi] {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e => e
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16))
                .or_else(|| e.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names of a Catch2 v2 `--list-test-names-only` listing: one per line,
/// a name that starts with `#` in double quotes.
pub fn parse_catch2_names(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.strip_prefix("\"#").and_then(|r| r.strip_suffix('"')) {
            Some(r) => format!("#{r}"),
            None => l.to_string(),
        })
        .collect()
}

/// A Catch2 test spec (v2 and v3) that matches the test case `name`.
///
/// The name is quoted, so spaces, `[`, `]` and a leading `~` are plain
/// characters; `\`, `,` and `"` are escaped with `\`. A name that starts
/// with `exclude:` would negate the pattern even quoted, so its first
/// letter is upper-cased: Catch2 matches names regardless of case.
///
/// What a spec cannot say: Catch2 compares names ignoring case and
/// surrounding blanks, and reads a `*` at either end of a name as a
/// wildcard, so the case `Foo` also runs a case `foo`, and a case `*x`
/// every case ending in `x`. The test then runs more than its case (its
/// coverage is the union of theirs, never less than its own).
pub fn catch2_spec(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    out.push('"');
    let mut rest = name;
    if name.starts_with("exclude:") {
        out.push('E');
        rest = &name[1..];
    }
    for c in rest.chars() {
        if matches!(c, '\\' | ',' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Reads the `[dependencies]` table of a `retest.toml` (all of it empty
/// when the file has none):
///
/// ```toml
/// [dependencies]
/// ignore = ["/tmp", "*.log", "/usr/lib/**"]   # paths that never count
/// inputs = ["config/defaults.ini"]             # inputs of every test
/// [dependencies.tests]
/// "static-*" = ["tools/static-checker", "data/"]  # inputs of the tests these names match
/// ```
///
/// `track = false` in `[dependencies]` turns the file tracker off: only
/// declared inputs are compared.
///
/// Input paths are relative to the file's directory. A glob without `/`
/// matches a name at any depth, one starting with `/` absolute paths, others
/// paths relative to the project root (see `retest_run::files::Filter`).
pub fn dependency_settings(path: &Path) -> Result<DepSettings, DiscoverError> {
    let text = read_text(path)?;
    let path = absolute(path)?;
    let dir = parent_dir(&path);
    let file: TomlFile = toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))?;
    let Some(d) = file.dependencies else { return Ok(DepSettings::default()) };
    let resolve = |v: &[String]| v.iter().map(|i| normalize(&dir.join(i))).collect::<Vec<_>>();
    Ok(DepSettings {
        track: d.track.unwrap_or(true),
        ignore: d.ignore,
        inputs: resolve(&d.inputs),
        tests: d.tests.iter().map(|(k, v)| (k.clone(), resolve(v))).collect(),
    })
}

/// The `[select]` table of a `retest.toml`: changes selection sets aside on
/// the tester's word (003 §5.5 and §6.4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectSettings {
    /// Patterns (`*`, `?`) of the procedures that are driver, setup or oracle
    /// code, not code under test: a change in one selects no test. A pattern
    /// matches a procedure's name (`FooTest::SetUp()`) or its key, the name
    /// after its unit's (`src/foo_test.cc@obj/foo_test.o::<static initialisation>`).
    pub not_under_test: Vec<String>,
    /// Changes in constructors and operators select no test.
    pub skip_constructor_and_operator_changes: bool,
}

impl SelectSettings {
    /// Whether procedure `name` is named by `not_under_test`.
    pub fn not_under_test(&self, name: &str) -> bool {
        self.not_under_test.iter().any(|p| wildcard(p.as_bytes(), name.as_bytes()))
    }
}

/// Reads the `[select]` table of a `retest.toml` (empty when it has none):
///
/// ```toml
/// [select]
/// not_under_test = ["*Test::SetUp()", "check_*"]   # driver, setup, oracle code
/// skip_constructor_and_operator_changes = true      # test those on their own
/// ```
pub fn select_settings(path: &Path) -> Result<SelectSettings, DiscoverError> {
    let text = read_text(path)?;
    let path = absolute(path)?;
    let file: TomlFile = toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))?;
    let Some(s) = file.select else { return Ok(SelectSettings::default()) };
    Ok(SelectSettings {
        not_under_test: s.not_under_test,
        skip_constructor_and_operator_changes: s.skip_constructor_and_operator_changes.unwrap_or(false),
    })
}

/// Converts a `timeout` value to a duration, or explains why it is unusable.
fn timeout_value(path: &Path, text: &str, value: &Spanned<toml::Value>) -> Result<Duration, DiscoverError> {
    let secs = match value.get_ref() {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    match secs {
        Some(s) if s > 0.0 => Duration::try_from_secs_f64(s).ok(),
        _ => None,
    }
    .ok_or_else(|| DiscoverError::BadTimeout {
        path: path.to_path_buf(),
        line: line_of(text, value.span().start),
        found: value.get_ref().to_string(),
    })
}

/// Maps an error of the TOML reader to a [`DiscoverError`] with a line.
fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> DiscoverError {
    let offset = e.span().map_or(0, |s| s.start);
    let line = line_of(text, offset);
    let message = e.message().trim().to_string();
    // serde phrases unknown fields as "unknown field `k`, expected ...".
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((key, expected)) = rest.split_once('`')
    {
        let expected = expected.trim_start_matches(',').trim();
        let expected = expected.strip_prefix("expected ").unwrap_or(expected);
        return DiscoverError::UnknownKey {
            path: path.to_path_buf(),
            line,
            key: key.to_string(),
            expected: expected.to_string(),
        };
    }
    let line_start = text[..offset.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let column = text.get(line_start..offset).map_or(1, |s| s.chars().count() + 1);
    DiscoverError::Toml { path: path.to_path_buf(), line, column, message }
}

/// 1-based line number of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

// ---------------------------------------------------------------------------
// Universe files

/// Reads a Siemens-style universe file: one shell command per line.
///
/// Contract:
/// - Every line that contains something other than whitespace is one test;
///   blank lines are skipped. `#` has no special meaning: a line starting
///   with `#` is a command too (the shell treats it as a comment, so the
///   test does nothing and passes).
/// - Test N is named `tN`, where N counts the non-empty lines from 1 (so
///   names stay stable when blank lines are added or removed, but not when
///   commands are inserted). Its [`TestSpec::key`] is its command, with
///   `#K` appended for the K-th (K ≥ 2) line with the same command: a test
///   keeps its identity, and its history, when lines are inserted above it.
/// - The command is the line as written, without its line terminator (`\n`,
///   or `\r\n`); it runs in the file's directory (made absolute, symbolic
///   links resolved), with no
///   extra environment, no timeout of its own and `expect_failure = false`.
/// - A line that is not valid UTF-8 is an error naming the line.
pub fn from_universe(path: &Path) -> Result<Vec<TestSpec>, DiscoverError> {
    let bytes = fs::read(path).map_err(|source| DiscoverError::Read { path: path.to_path_buf(), source })?;
    let path = absolute(path)?;
    let dir = parent_dir(&path);
    // one allocation per field of a test, none for the bookkeeping: a
    // universe of 10^5 tests is read by every selection
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut specs = Vec::with_capacity(lines);
    let mut seen: HashMap<&[u8], u32> = HashMap::with_capacity(lines);
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = std::str::from_utf8(raw).map_err(|_| DiscoverError::Invalid {
            path: path.clone(),
            line: i + 1,
            message: "line is not valid UTF-8 — save the universe file as UTF-8 (or ASCII)".into(),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let n = seen.entry(raw).or_insert(0);
        *n += 1;
        let key = if *n == 1 { line.to_string() } else { format!("{line}#{n}") };
        specs.push(TestSpec {
            name: format!("t{}", specs.len() + 1),
            key,
            cmd: line.to_string(),
            cwd: dir.clone(),
            ..Default::default()
        });
    }
    Ok(specs)
}

// ---------------------------------------------------------------------------
// CTest

#[derive(Deserialize)]
struct CtestInfo {
    kind: String,
    version: CtestVersion,
    #[serde(default)]
    tests: Vec<CtestTest>,
}

#[derive(Deserialize)]
struct CtestVersion {
    major: u64,
}

#[derive(Deserialize)]
struct CtestTest {
    name: String,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    properties: Vec<CtestProperty>,
}

#[derive(Deserialize)]
struct CtestProperty {
    name: String,
    value: serde_json::Value,
}

/// Lists the tests of a CMake build directory with
/// `ctest --show-only=json-v1` (run in `build_dir`, CMake 3.14 or newer).
///
/// Mapping of each test:
/// - `name` → [`TestSpec::name`];
/// - `command` (program and arguments) → [`TestSpec::cmd`], every word
///   shell-quoted (single quotes where needed), so `/bin/sh -c` runs exactly
///   that argument vector;
/// - `WORKING_DIRECTORY` → [`TestSpec::cwd`] (CTest always lists it; absent
///   or relative values are resolved against `build_dir`);
/// - `ENVIRONMENT` (list of `K=V`) → [`TestSpec::env`], in order;
/// - `TIMEOUT` (seconds) → [`TestSpec::timeout`]; `0` or less means none, as
///   in CTest;
/// - `WILL_FAIL` → [`TestSpec::expect_failure`];
/// - tests with `DISABLED` set to true are left out.
///
/// All other properties are kept in [`TestSpec::properties`] (they are part
/// of the test's definition) but not acted on, notably: `PASS_REGULAR_EXPRESSION`,
/// `FAIL_REGULAR_EXPRESSION`, `SKIP_REGULAR_EXPRESSION`, `SKIP_RETURN_CODE`
/// (only the exit status decides), `ENVIRONMENT_MODIFICATION`, fixtures
/// (`FIXTURES_SETUP`/`_REQUIRED`/`_CLEANUP`: no setup test is added or
/// ordered), `DEPENDS`, `RESOURCE_LOCK`, `RUN_SERIAL`, `PROCESSORS`,
/// `RESOURCE_GROUPS`, `COST` and `LABELS`. CTest's global default timeout
/// (`CTEST_TEST_TIMEOUT`, `DART_TESTING_TIMEOUT`) is not applied either.
///
/// A test without a command (CTest lists such tests in multi-configuration
/// builds when no configuration is chosen) and an `ENVIRONMENT` entry without
/// `=` are errors.
pub fn from_ctest(build_dir: &Path) -> Result<Vec<TestSpec>, DiscoverError> {
    let build_dir = ctest_dir(build_dir)?;
    let output = run_ctest(Path::new("ctest"), &build_dir, &[])?;
    parse_ctest_json(&build_dir, &output)
}

/// `build_dir` made absolute, if CTest can list tests there.
pub(crate) fn ctest_dir(build_dir: &Path) -> Result<PathBuf, DiscoverError> {
    let build_dir =
        fs::canonicalize(build_dir).map_err(|_| DiscoverError::NotCtestDir { build_dir: build_dir.to_path_buf() })?;
    if !build_dir.join("CTestTestfile.cmake").is_file() {
        return Err(DiscoverError::NotCtestDir { build_dir });
    }
    Ok(build_dir)
}

/// What `ctest --show-only=json-v1` prints in `build_dir` (absolute), run as
/// `ctest` with `env` added to the environment.
pub(crate) fn run_ctest(
    ctest: &Path,
    build_dir: &Path,
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<Vec<u8>, DiscoverError> {
    // `gtest_discover_tests(… DISCOVERY_MODE PRE_TEST)` and
    // `catch_discover_tests` run the (instrumented) test binaries while ctest
    // lists the tests: they record into a directory of their own
    let traces = tempfile::tempdir().map_err(|source| DiscoverError::Scratch { source })?;
    let output = Command::new(ctest)
        .arg("--show-only=json-v1")
        .current_dir(build_dir)
        .env("RETEST_TRACE_DIR", traces.path())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| DiscoverError::CtestSpawn { build_dir: build_dir.to_path_buf(), source })?;
    if !output.status.success() {
        return Err(DiscoverError::CtestFailed {
            build_dir: build_dir.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(output.stdout)
}

/// Maps the JSON that `ctest --show-only=json-v1` printed; see [`from_ctest`].
pub(crate) fn parse_ctest_json(build_dir: &Path, json: &[u8]) -> Result<Vec<TestSpec>, DiscoverError> {
    let json_err = |message: String| DiscoverError::CtestJson { build_dir: build_dir.to_path_buf(), message };
    let info: CtestInfo = serde_json::from_slice(json).map_err(|e| json_err(e.to_string()))?;
    if info.kind != "ctestInfo" || info.version.major != 1 {
        return Err(json_err(format!(
            "expected kind \"ctestInfo\" version 1, found kind {:?} version {}",
            info.kind, info.version.major
        )));
    }

    let mut specs = Vec::with_capacity(info.tests.len());
    for test in info.tests {
        let disabled = test.properties.iter().any(|p| p.name == "DISABLED" && truthy(&p.value));
        if disabled {
            continue;
        }
        let test_err = |message: String| DiscoverError::CtestTest {
            build_dir: build_dir.to_path_buf(),
            test: test.name.clone(),
            message,
        };
        let mut cwd = build_dir.to_path_buf();
        let mut env = Vec::new();
        let mut timeout = None;
        let mut expect_failure = false;
        let mut properties = Vec::new();
        for prop in &test.properties {
            let v = &prop.value;
            match prop.name.as_str() {
                "WILL_FAIL" => expect_failure = truthy(v),
                "WORKING_DIRECTORY" => {
                    let dir = v.as_str().ok_or_else(|| test_err(format!("WORKING_DIRECTORY is not a string: {v}")))?;
                    cwd = normalize(&build_dir.join(dir));
                }
                "TIMEOUT" => {
                    let secs = v
                        .as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                        .ok_or_else(|| test_err(format!("TIMEOUT is not a number: {v}")))?;
                    timeout = if secs > 0.0 { Duration::try_from_secs_f64(secs).ok() } else { None };
                }
                "ENVIRONMENT" => {
                    let entries: Vec<&str> = match v {
                        serde_json::Value::Array(a) => a.iter().filter_map(|e| e.as_str()).collect(),
                        serde_json::Value::String(s) => s.split(';').collect(),
                        _ => Vec::new(),
                    };
                    for entry in entries {
                        let (k, val) = entry.split_once('=').ok_or_else(|| {
                            test_err(format!(
                                "ENVIRONMENT entry `{entry}` has no `=` — write it as NAME=VALUE in set_tests_properties"
                            ))
                        })?;
                        env.push((k.to_string(), val.to_string()));
                    }
                }
                "DISABLED" => {}
                other => properties.push((other.to_string(), v.to_string())),
            }
        }
        let command = match &test.command {
            Some(c) if !c.is_empty() => c,
            _ => {
                return Err(test_err(
                    "ctest lists no command for it (in a multi-configuration build, no configuration was chosen) — use a single-configuration build directory (e.g. -DCMAKE_BUILD_TYPE=Debug with Ninja or Makefiles)".into(),
                ));
            }
        };
        let cmd = command.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
        properties.sort();
        specs.push(TestSpec {
            key: test.name.clone(),
            name: test.name,
            cmd,
            cwd,
            env,
            timeout,
            expect_failure,
            inputs: Vec::new(),
            properties,
        });
    }
    Ok(specs)
}

/// CMake's idea of a true value, for the JSON forms ctest prints.
fn truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => {
            let s = s.to_ascii_uppercase();
            !(s.is_empty()
                || s == "0"
                || s == "OFF"
                || s == "NO"
                || s == "FALSE"
                || s == "N"
                || s == "IGNORE"
                || s == "NOTFOUND"
                || s.ends_with("-NOTFOUND"))
        }
        _ => false,
    }
}

/// Quotes `word` for a POSIX shell so that it stays one word, unchanged.
///
/// Words made only of characters that no shell treats specially are left as
/// they are; everything else is put in single quotes, with `'` written as
/// `'\''`.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if plain {
        return word.to_string();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

// ---------------------------------------------------------------------------
// Paths

fn read_text(path: &Path) -> Result<String, DiscoverError> {
    let bytes = fs::read(path).map_err(|source| DiscoverError::Read { path: path.to_path_buf(), source })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        DiscoverError::Invalid {
            path: path.to_path_buf(),
            line,
            message: "the file is not valid UTF-8 — save it as UTF-8".into(),
        }
    })
}

/// `path` (which must exist) made absolute, with symbolic links and `..`
/// resolved.
fn absolute(path: &Path) -> Result<PathBuf, DiscoverError> {
    fs::canonicalize(path).map_err(|source| DiscoverError::Read { path: path.to_path_buf(), source })
}

/// Directory that holds the (absolute) file `path`.
fn parent_dir(path: &Path) -> PathBuf {
    path.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

/// Drops `.` components and trailing separators; keeps `..` (resolving it
/// lexically would be wrong behind a symbolic link).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        if c != Component::CurDir {
            out.push(c.as_os_str());
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `definition_json` is `definition(..).to_json()`, with and without
    /// the fields that are left out when empty.
    #[test]
    fn the_borrowed_definition_serialises_as_the_definition() {
        let root = Path::new("/p");
        let mut t = TestSpec {
            name: "t".into(),
            key: "k".into(),
            cmd: "./run \"a b\"".into(),
            cwd: PathBuf::from("/p/sub"),
            ..Default::default()
        };
        assert_eq!(t.definition_json(root), t.definition(root).to_json());
        t.cwd = PathBuf::from("/elsewhere");
        t.env = vec![("A".into(), "1".into())];
        t.timeout = Some(Duration::from_millis(1500));
        t.expect_failure = true;
        t.properties = vec![("LABELS".into(), "[\"x\"]".into())];
        assert_eq!(t.definition_json(root), t.definition(root).to_json());
        t.cwd = PathBuf::from("/p");
        assert_eq!(t.definition_json(root), t.definition(root).to_json());
        assert!(t.definition_json(root).contains("\"cwd\":\".\""));
    }
}
