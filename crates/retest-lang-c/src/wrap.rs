//! The compiler wrapper's work, apart from storing results: deciding what to
//! instrument in a compiler command line, preprocessing and analysing each
//! project source, writing the instrumented text, and running the real compiler
//! on it with the original flags — plus the runtime object for link steps.
//!
//! Pass-through rules: `-E`, `-M`/`-MM` without `-MD`, assembler and other
//! non-C inputs, and C sources outside the project root are compiled exactly as
//! given. A link step (no `-c`/`-S`/`-E`, not `-r`) gets the runtime object.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use retest_graph::Unit;
use retest_graph::coverage::Probe;
use retest_graph::recording::UnitRecording;

use crate::driver::{CompilerArgs, LinkSlot, Mode, parse_args};
use crate::instrument::{Instrumented, build_hash_with, instrument_with, source_hash};
use crate::preprocess::{PreprocessError, Preprocessed, SourceFile, run_preprocessor};
use crate::region::{NoRegions, Regions};
use crate::tu::{TuAnalysis, analyze_with};

/// Errors of the wrapper.
#[derive(Debug, thiserror::Error)]
pub enum WrapError {
    #[error("cannot run {compiler}: {source}")]
    Spawn {
        compiler: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("compiling the coverage runtime with {compiler} failed: {message}")]
    Runtime { compiler: String, message: String },
}

/// A project source of the command, analysed and instrumented.
pub struct PreparedUnit {
    /// The source as written on the command line.
    pub source: String,
    /// Source path relative to the project root.
    pub rel_source: String,
    /// Identity of the unit across snapshots: `rel_source@output`.
    pub key: String,
    /// The object (or, for one-step builds, program) the source is compiled into.
    pub output: Option<String>,
    pub pre: Preprocessed,
    /// The unit's CFGs.
    pub unit: Unit,
    /// The unit is C++ (its instrumented text is compiled as preprocessed C++).
    pub cpp: bool,
    /// The unit and its instrumentation were taken from a [`Reuse`], not
    /// made anew.
    pub reused: bool,
    pub src_hash: [u8; 16],
    pub plan: Vec<Vec<Probe>>,
    pub build_hash: retest_abi::BuildHash,
    /// The instrumented text, with the recording beyond edges as placed
    /// ([`Instrumented::recording`]).
    pub instrumented: Instrumented,
    /// Identity compile flags as JSON.
    pub flags: String,
}

/// What to do with one compiler invocation.
pub struct Prepared {
    pub args: CompilerArgs,
    pub original: Vec<String>,
    pub units: Vec<PreparedUnit>,
    /// The command only passes through (nothing to instrument and no link).
    pub passthrough: bool,
    /// The command links a program or shared library: add the runtime.
    pub links: bool,
}

/// What to instrument in a unit: the probes of each procedure, and what to
/// record beyond edges (MC/DC evaluations, paths).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub probes: Vec<Vec<Probe>>,
    pub recording: UnitRecording,
}

/// The plan of a unit, given its key, content hash and CFGs.
pub type PlanFn<'a> = &'a dyn Fn(&str, &[u8; 16], &Unit) -> Plan;

/// Options of the wrapper.
pub struct WrapOptions<'a> {
    /// The real compiler (`cc`, `gcc`, `clang-19`, …).
    pub compiler: String,
    /// The project root (the directory holding `.retest`).
    pub root: PathBuf,
    /// The directory the compiler runs in.
    pub cwd: PathBuf,
    /// C++ mode (`retest c++`): the real compiler is a C++ driver. Each source is
    /// analysed as C or C++ by its name or `-x`, whichever driver runs.
    pub cplusplus: bool,
    /// The probe plan for a unit, given its key and content hash (full
    /// instrumentation unless told otherwise).
    pub plan_for: PlanFn<'a>,
    /// Earlier analyses to reuse, if any.
    pub reuse: Option<&'a dyn Reuse>,
}

fn rel_to(root: &Path, p: &Path) -> Option<String> {
    let canon = std::fs::canonicalize(p).ok()?;
    let rel = canon.strip_prefix(root).ok()?;
    Some(rel.to_string_lossy().into_owned())
}

/// Whether a source is one a build system writes to check the compiler while
/// configuring (CMake's `CMakeFiles/…/CMakeCXXCompilerId.cpp`, its
/// `TryCompile-*` scratch projects and `check_c_source_compiles`; autoconf's
/// `conftest.c` and `conftest.cpp`; Meson's `meson-private/tmp…/testfile.c`):
/// not the project's code, and gone after the check.
fn is_build_system_probe(rel_source: &str) -> bool {
    let mut parts = rel_source.split('/');
    let file = parts.next_back().unwrap_or("");
    file == "conftest.c" || file == "conftest.cpp" || parts.any(|c| c == "CMakeFiles" || c == "meson-private")
}

/// Default object name of `-c src` without `-o`.
fn default_object(src: &str) -> String {
    let base = Path::new(src).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{base}.o")
}

/// The `-x` language of a unit's instrumented (preprocessed) text.
fn preprocessed_language(u: &PreparedUnit) -> String {
    if u.cpp { "c++-cpp-output" } else { "cpp-output" }.to_string()
}

/// Compiler warnings are off for instrumented units. Compiled from preprocessed
/// text, the compiler can no longer tell what came from a macro expansion and
/// warns about code it would accept in the original (`-Waddress` on a macro's
/// `(p) != NULL`, `-Wtautological-compare` on `SAME(x, x)`) — under `-Werror`
/// that would fail a build that passes without the wrapper. Errors are still
/// reported, at the original file and line.
const NO_WARNINGS: &str = "-w";

/// A project source of a compile command, preprocessed and analysed: what
/// the wrapper instruments and `retest select -p` compares. Both come from
/// [`analyse_command`], so both see the same unit for the same command.
pub struct AnalysedSource {
    /// The source as written on the command line.
    pub source: String,
    /// Source path relative to the project root.
    pub rel_source: String,
    /// Identity of the unit across snapshots: `rel_source@output`.
    pub key: String,
    /// The object (or, for one-step builds, program) the source is compiled into.
    pub output: Option<String>,
    /// Identity compile flags as JSON.
    pub flags: String,
    /// The analysis, or why the source could not be preprocessed.
    pub unit: Result<SourceAnalysis, PreprocessError>,
}

/// The preprocessed text and analysis of a source.
pub struct SourceAnalysis {
    pub pre: Preprocessed,
    pub tu: TuAnalysis,
    pub src_hash: [u8; 16],
}

/// The one pipeline from a compile command to units: for each project source
/// of `args` (the compiler's arguments, without the compiler), run in `cwd`
/// with `compiler`: the preprocessor (writing the dependency files the command
/// asks for when `write_dependencies`), the C or C++ front end (by the
/// source's name or `-x`), probe pairing under `-O`, paths made relative to
/// `root`, and the unit's key and identity flags. Sources outside `root` and
/// those a build system writes to check the compiler are left out. Header
/// regions are taken from `regions` where kept there.
pub fn analyse_command(
    args: &[String],
    compiler: &str,
    root: &Path,
    cwd: &Path,
    write_dependencies: bool,
    regions: &dyn Regions,
) -> Vec<AnalysedSource> {
    let parsed = parse_args(args);
    if matches!(parsed.mode, Mode::Preprocess | Mode::Depend) {
        return Vec::new();
    }
    analyse_sources(&parsed, compiler, root, cwd, write_dependencies, regions)
}

fn analyse_sources(
    parsed: &CompilerArgs,
    compiler: &str,
    root: &Path,
    cwd: &Path,
    write_dependencies: bool,
    regions: &dyn Regions,
) -> Vec<AnalysedSource> {
    let analyser = Analyser::new(parsed, root, cwd);
    preprocess_sources(parsed, compiler, &analyser, write_dependencies)
        .into_iter()
        .map(|s| {
            let PreprocessedSource { source, rel_source, key, output, flags, pre } = s;
            let unit = pre.map(|(pre, cpp)| {
                let tu = analyser.analyse(&pre, cpp, regions);
                let src_hash = source_hash(&pre.raw);
                SourceAnalysis { pre, tu, src_hash }
            });
            AnalysedSource { source, rel_source, key, output, flags, unit }
        })
        .collect()
}

/// What the analysis of a unit depends on beyond its preprocessed text: the
/// project root, the directory the compiler runs in (paths are made relative
/// to both), the compile flags (language dialect, optimisation, which pairs
/// probes) — and which of the text's files are the project's own.
struct Analyser {
    root: PathBuf,
    cwd: PathBuf,
    flags: Vec<String>,
    optimizes: bool,
}

impl Analyser {
    fn new(parsed: &CompilerArgs, root: &Path, cwd: &Path) -> Analyser {
        Analyser {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
            cwd: cwd.to_path_buf(),
            flags: parsed.flags.clone(),
            optimizes: parsed.optimizes(),
        }
    }

    /// Whether a file of the preprocessed text is the project's own.
    fn own(&self, f: &SourceFile) -> bool {
        if f.system || f.path.starts_with('<') {
            return false;
        }
        let p = self.cwd.join(&f.path);
        std::fs::canonicalize(&p).map(|c| c.starts_with(&self.root)).unwrap_or(false)
    }

    /// The C or C++ front end on `pre`, probes paired under optimisation,
    /// paths made relative to the root.
    fn analyse(&self, pre: &Preprocessed, cpp: bool, regions: &dyn Regions) -> TuAnalysis {
        let own = |f: &SourceFile| self.own(f);
        let mut tu = if cpp {
            crate::cpp::analyze(pre, &own, crate::cpp::Dialect::of_flags(&self.flags))
        } else {
            analyze_with(pre, &own, regions)
        };
        if self.optimizes {
            tu.pair_probes();
        }
        normalize_paths(&mut tu.unit, &self.cwd, &self.root);
        tu
    }

    /// The key of the analysis of `pre` by the front end `analyser` names:
    /// equal keys, equal units and instrumentation sites.
    fn key(&self, analyser: &str, pre: &Preprocessed, src_hash: &[u8; 16], cpp: bool) -> AnalysisKey {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut field = |b: &[u8]| {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(b"retest-analysis-v1");
        field(analyser.as_bytes());
        field(src_hash);
        field(&[u8::from(cpp), u8::from(self.optimizes)]);
        field(self.root.as_os_str().as_encoded_bytes());
        field(self.cwd.as_os_str().as_encoded_bytes());
        for f in &self.flags {
            field(f.as_bytes());
        }
        let own: Vec<u8> = pre.files.iter().map(|f| u8::from(self.own(f))).collect();
        field(&own);
        h.digest128().to_le_bytes()
    }
}

/// A project source of a compile command, preprocessed (not yet analysed);
/// the fields as in [`AnalysedSource`].
struct PreprocessedSource {
    source: String,
    rel_source: String,
    key: String,
    output: Option<String>,
    flags: String,
    /// The preprocessed text and whether it is C++, or why it could not be made.
    pre: Result<(Preprocessed, bool), PreprocessError>,
}

/// Runs the preprocessor on each project source of `parsed` (writing the
/// dependency files the command asks for when `write_dependencies`). Sources
/// outside the root and those a build system writes to check the compiler
/// are left out.
fn preprocess_sources(
    parsed: &CompilerArgs,
    compiler: &str,
    analyser: &Analyser,
    write_dependencies: bool,
) -> Vec<PreprocessedSource> {
    let (root, cwd) = (&analyser.root, analyser.cwd.as_path());
    let identity = serde_json::to_string(&parsed.identity_flags()).unwrap_or_default();
    let pp = parsed.preprocess_flags();
    let mut out = Vec::new();
    for (index, src) in parsed.sources.iter().enumerate() {
        let cpp = parsed.source_is_cpp(index);
        let Some(rel_source) = rel_to(root, &cwd.join(src)) else {
            continue; // outside the project: compiled as given
        };
        if is_build_system_probe(&rel_source) {
            continue; // CMake's checks of the compiler: compiled as given
        }
        let output = match parsed.mode {
            Mode::Compile if parsed.sources.len() == 1 => {
                Some(parsed.output.clone().unwrap_or_else(|| default_object(src)))
            }
            Mode::Compile => Some(default_object(src)),
            Mode::Assemble => None,
            _ => Some(parsed.output.clone().unwrap_or_else(|| "a.out".to_string())),
        };
        let mut flags = pp.clone();
        if write_dependencies && parsed.writes_dependencies() && parsed.mode == Mode::Compile {
            flags.extend(parsed.dep_flags.iter().cloned());
            let has = |f: &str| parsed.dep_flags.iter().any(|d| d.starts_with(f));
            if let Some(o) = &output {
                if !has("-MF") {
                    let d = Path::new(o).with_extension("d");
                    flags.push("-MF".into());
                    flags.push(d.to_string_lossy().into_owned());
                }
                if !has("-MT") && !has("-MQ") {
                    flags.push("-MT".into());
                    flags.push(o.clone());
                }
            }
        }
        let key = unit_key(root, cwd, &rel_source, output.as_deref());
        let pre = run_preprocessor(compiler, &flags, Path::new(src), cwd).map(|pre| (pre, cpp));
        out.push(PreprocessedSource { source: src.clone(), rel_source, key, output, flags: identity.clone(), pre });
    }
    out
}

/// What identifies the analysis of a preprocessed text ([`Reuse`]).
pub type AnalysisKey = [u8; 16];

/// The instrumentation of an analysed unit under one build hash, as a
/// [`Reuse`] keeps it: with the unit it was made from, everything a build
/// needs without analysing the text again.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct KeptInstrumentation {
    pub insertions: crate::instrument::Insertions,
    pub cells: u32,
    pub recording: UnitRecording,
    pub dropped: Vec<crate::instrument::Dropped>,
    /// The unit is C++.
    pub cpp: bool,
}

/// Earlier analyses and instrumentations, content-addressed: when a build
/// meets a preprocessed text it has analysed before, under the same flags, in
/// the same directories, by the same front end, it takes the unit and the
/// instrumentation kept then instead of analysing and instrumenting the text
/// again — as ccache takes an object. Anything a `Reuse` cannot vouch for it
/// does not return: the build then analyses the text.
pub trait Reuse {
    /// The name of the front end that analyses (its version and build): part
    /// of every key.
    fn analyser(&self) -> &str;
    /// The unit analysed under `key`, if kept.
    fn unit(&self, key: &AnalysisKey) -> Option<Unit>;
    /// The instrumentation kept for that unit under build hash `build`.
    fn instrumentation(&self, key: &AnalysisKey, build: &retest_abi::BuildHash) -> Option<KeptInstrumentation>;
    /// Keeps a fresh analysis and its instrumentation.
    fn keep(&self, key: &AnalysisKey, unit: &Unit, build: &retest_abi::BuildHash, kept: &KeptInstrumentation);
    /// Where the header regions of units are kept
    /// ([`crate::region`]): a text never met before is analysed without
    /// the headers other units included before it.
    fn regions(&self) -> &dyn Regions;
}

impl Prepared {
    /// Parses the command line and prepares every project source in it: the
    /// preprocessor runs (honouring dependency-file options), the unit is analysed
    /// and instrumented under `plan_for`. A source that fails to preprocess makes
    /// the whole command pass through, so the real compiler reports the error.
    pub fn new(args: &[String], opts: &WrapOptions<'_>) -> Prepared {
        let parsed = parse_args(args);
        let links = parsed.mode == Mode::Link
            && !parsed.relocatable
            && (!parsed.sources.is_empty() || !parsed.other_inputs.is_empty());
        let mut out =
            Prepared { args: parsed.clone(), original: args.to_vec(), units: Vec::new(), passthrough: true, links };
        if matches!(parsed.mode, Mode::Preprocess | Mode::Depend) {
            out.passthrough = !links;
            return out;
        }
        let analyser = Analyser::new(&parsed, &opts.root, &opts.cwd);
        let regions: &dyn Regions = match opts.reuse {
            Some(r) => r.regions(),
            None => &NoRegions,
        };
        for s in preprocess_sources(&parsed, &opts.compiler, &analyser, true) {
            let Ok((pre, cpp)) = s.pre else {
                // a source that does not preprocess: the real compiler says why
                out.units.clear();
                out.passthrough = !links;
                return out;
            };
            let src_hash = source_hash(&pre.raw);
            let key = opts.reuse.map(|r| (r, analyser.key(r.analyser(), &pre, &src_hash, cpp)));
            // what an earlier build made of the same text, if it was kept
            let kept = key.as_ref().and_then(|(r, k)| {
                let unit = r.unit(k)?;
                let Plan { probes, recording } = (opts.plan_for)(&s.key, &src_hash, &unit);
                let bh = build_hash_with(&src_hash, &probes, &recording);
                let kept = r.instrumentation(k, &bh).filter(|i| i.cpp == cpp)?;
                let text = kept.insertions.apply(&pre.raw)?;
                let KeptInstrumentation { insertions, cells, recording, dropped, .. } = kept;
                Some((unit, probes, bh, Instrumented { text, insertions, cells, recording, dropped }))
            });
            let reused = kept.is_some();
            let (unit, plan, build_hash, instrumented) = match kept {
                Some(k) => k,
                None => {
                    let tu = analyser.analyse(&pre, cpp, regions);
                    let Plan { probes: plan, recording } = (opts.plan_for)(&s.key, &src_hash, &tu.unit);
                    let bh = build_hash_with(&src_hash, &plan, &recording);
                    let instrumented = instrument_with(&pre.raw, &tu, &plan, &recording, &bh);
                    if let Some((r, k)) = &key {
                        let kept = KeptInstrumentation {
                            insertions: instrumented.insertions.clone(),
                            cells: instrumented.cells,
                            recording: instrumented.recording.clone(),
                            dropped: instrumented.dropped.clone(),
                            cpp,
                        };
                        r.keep(k, &tu.unit, &bh, &kept);
                    }
                    (tu.unit, plan, bh, instrumented)
                }
            };
            out.units.push(PreparedUnit {
                source: s.source,
                key: s.key,
                rel_source: s.rel_source,
                output: s.output,
                pre,
                unit,
                cpp,
                reused,
                src_hash,
                plan,
                build_hash,
                instrumented,
                flags: s.flags,
            });
        }
        out.passthrough = out.units.is_empty() && !links;
        out
    }

    /// The files the compiler run writes — the object of each instrumented
    /// source, the `-o` output, the program a link writes — as given (relative
    /// to the directory the compiler runs in). Dependency files are not among
    /// them. Killed while writing one, the compiler leaves it half written and
    /// newer than its inputs, which a build tool takes as up to date.
    pub fn outputs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if !self.passthrough {
            for u in &self.units {
                match (&u.output, self.args.mode) {
                    (Some(o), _) => out.push(o.clone()),
                    (None, Mode::Assemble) => {
                        out.push(Path::new(&u.source).with_extension("s").to_string_lossy().into_owned())
                    }
                    (None, _) => {}
                }
            }
        }
        match (&self.args.output, self.args.mode) {
            (Some(o), _) => out.push(o.clone()),
            (None, Mode::Link) if self.links => out.push("a.out".into()),
            _ => {}
        }
        out.retain(|o| o != "-"); // standard output
        out.sort();
        out.dedup();
        out
    }

    /// Runs the real compiler: each prepared unit from its instrumented text, the
    /// other inputs as given, plus `runtime` (an object) when linking.
    pub fn compile(&self, opts: &WrapOptions<'_>, tmp: &Path, runtime: Option<&Path>) -> Result<Compiled, WrapError> {
        if self.passthrough {
            return run_compiler(&opts.compiler, &self.original, &opts.cwd).map(Compiled::as_given);
        }
        let mut written: Vec<PathBuf> = Vec::new();
        let result = (|| {
            let cflags = self.args.compile_flags();
            let instrumented_sources: Vec<&str> = self.units.iter().map(|u| u.source.as_str()).collect();
            let mut objects: Vec<(String, PathBuf)> = Vec::new(); // (source, .i)
            for u in &self.units {
                let name =
                    format!("{}-{:016x}.i", std::process::id(), xxhash_rust::xxh3::xxh3_64(u.build_hash.as_bytes()));
                let i = tmp.join(name);
                std::fs::write(&i, &u.instrumented.text).map_err(|source| WrapError::Io { path: i.clone(), source })?;
                written.push(i.clone());
                objects.push((u.source.clone(), i));
            }
            match self.args.mode {
                Mode::Compile | Mode::Assemble => {
                    // one compiler run per instrumented source, named as the original would be
                    for (u, (_, i)) in self.units.iter().zip(&objects) {
                        let mut a = cflags.clone();
                        a.push(NO_WARNINGS.into());
                        a.push(if self.args.mode == Mode::Compile { "-c".into() } else { "-S".into() });
                        a.extend(["-x".to_string(), preprocessed_language(u), i.to_string_lossy().into_owned()]);
                        if let Some(o) = &u.output {
                            a.push("-o".into());
                            a.push(o.clone());
                        } else if self.args.mode == Mode::Assemble {
                            a.push("-o".into());
                            a.push(Path::new(&u.source).with_extension("s").to_string_lossy().into_owned());
                        }
                        let (st, diagnostics) = run_compiler_captured(&opts.compiler, &a, &opts.cwd)?;
                        if !st.success() {
                            return self.explain_failure(opts, st, &diagnostics, true);
                        }
                        std::io::stderr().write_all(&diagnostics).ok();
                    }
                    // sources we did not instrument, as given
                    let rest: Vec<&String> =
                        self.args.sources.iter().filter(|s| !instrumented_sources.contains(&s.as_str())).collect();
                    if !rest.is_empty() || !self.args.other_inputs.is_empty() {
                        let mut a = self.args.flags.clone();
                        a.extend(self.args.dep_flags.iter().cloned());
                        a.push(if self.args.mode == Mode::Compile { "-c".into() } else { "-S".into() });
                        a.extend(rest.into_iter().cloned());
                        a.extend(self.args.other_inputs.iter().cloned());
                        if self.args.sources.len() + self.args.other_inputs.len() == 1
                            && let Some(o) = &self.args.output
                        {
                            a.push("-o".into());
                            a.push(o.clone());
                        }
                        return run_compiler(&opts.compiler, &a, &opts.cwd).map(Compiled::as_given);
                    }
                    Ok(Compiled::as_given(st_success()))
                }
                _ => {
                    // link (possibly compiling sources in the same step)
                    // in the original order: libraries resolve against the inputs before them
                    let mut a: Vec<String> = Vec::new();
                    if !objects.is_empty() {
                        a.push(NO_WARNINGS.into());
                    }
                    for slot in &self.args.link_order {
                        match slot {
                            LinkSlot::Arg(x) => a.push(x.clone()),
                            LinkSlot::Source { index, language } => {
                                let s = &self.args.sources[*index];
                                match objects.iter().zip(&self.units).find(|((src, _), _)| src == s) {
                                    Some(((_, i), u)) => a.extend([
                                        "-x".to_string(),
                                        preprocessed_language(u),
                                        i.to_string_lossy().into_owned(),
                                        "-x".into(),
                                        language.clone().unwrap_or_else(|| "none".into()),
                                    ]),
                                    None => a.push(s.clone()),
                                }
                            }
                        }
                    }
                    if self.links
                        && let Some(rt) = runtime
                    {
                        a.push(rt.to_string_lossy().into_owned());
                        if !self.args.shared && !self.args.flags.iter().any(|f| f == "-static") {
                            a.push("-Wl,--export-dynamic-symbol=__retest_*".into());
                        }
                    }
                    if let Some(o) = &self.args.output {
                        a.push("-o".into());
                        a.push(o.clone());
                    }
                    if objects.is_empty() {
                        return run_compiler(&opts.compiler, &a, &opts.cwd).map(Compiled::as_given);
                    }
                    let (st, diagnostics) = run_compiler_captured(&opts.compiler, &a, &opts.cwd)?;
                    if !st.success() {
                        // a link error is as likely as a compile error here
                        return self.explain_failure(opts, st, &diagnostics, false);
                    }
                    std::io::stderr().write_all(&diagnostics).ok();
                    Ok(Compiled::as_given(st))
                }
            }
        })();
        if std::env::var_os("RETEST_KEEP_TEMPS").is_none() {
            for w in written {
                let _ = std::fs::remove_file(w);
            }
        }
        result
    }
}

impl Prepared {
    /// After the compiler failed on instrumented text with `diagnostics`:
    /// when an original source does not compile either, the user sees the
    /// compiler's own diagnostics of it, at the columns of the original text
    /// (the instrumented text has probes inserted into its lines), and the
    /// failure is theirs. Otherwise the instrumented run's diagnostics are
    /// shown, and with `compile_only` (no link in the command) the failure is
    /// the instrumentation's.
    fn explain_failure(
        &self,
        opts: &WrapOptions<'_>,
        status: ExitStatus,
        diagnostics: &[u8],
        compile_only: bool,
    ) -> Result<Compiled, WrapError> {
        for u in &self.units {
            let mut a = self.args.flags.clone();
            a.extend(["-fsyntax-only".to_string(), u.source.clone()]);
            let (st, own) = run_compiler_captured(&opts.compiler, &a, &opts.cwd)?;
            if !st.success() {
                std::io::stderr().write_all(&own).ok();
                return Ok(Compiled { status, instrumentation_failed: None });
            }
        }
        std::io::stderr().write_all(diagnostics).ok();
        let culprit = compile_only.then(|| self.units.iter().map(|u| u.source.clone()).collect());
        Ok(Compiled { status, instrumentation_failed: culprit })
    }
}

/// What a wrapped compiler command did.
#[derive(Debug)]
pub struct Compiled {
    /// The compiler's exit status: the wrapper's.
    pub status: ExitStatus,
    /// The sources whose instrumented text failed to compile although they
    /// compile as written: a defect of the instrumentation, not the user's.
    pub instrumentation_failed: Option<Vec<String>>,
}

impl Compiled {
    fn as_given(status: ExitStatus) -> Compiled {
        Compiled { status, instrumentation_failed: None }
    }
}

/// The identity of a translation unit across snapshots: its source relative to the
/// project root, `@`, and its output (relative to the root when under it) — one
/// source compiled into two objects is two units.
pub fn unit_key(root: &Path, cwd: &Path, rel_source: &str, output: Option<&str>) -> String {
    let out_rel = output
        .map(|o| {
            let p = cwd.join(o);
            match p.parent().and_then(|d| std::fs::canonicalize(d).ok()) {
                Some(d) => {
                    let full = d.join(p.file_name().unwrap_or_default());
                    full.strip_prefix(root)
                        .map(|r| r.to_string_lossy().into_owned())
                        .unwrap_or_else(|_| full.to_string_lossy().into_owned())
                }
                None => o.to_string(),
            }
        })
        .unwrap_or_else(|| "-".to_string());
    format!("{rel_source}@{out_rel}")
}

/// Rewrites a unit's file paths so they do not depend on the directory the
/// compiler ran in: relative to the project root for files under it, absolute
/// (canonical) otherwise; pseudo-files like `<built-in>` stay as they are.
pub fn normalize_paths(unit: &mut Unit, cwd: &Path, root: &Path) {
    for f in &mut unit.files {
        if f.path.starts_with('<') {
            continue;
        }
        let p = cwd.join(&f.path);
        if let Ok(c) = std::fs::canonicalize(&p) {
            f.path = match c.strip_prefix(root) {
                Ok(rel) => rel.to_string_lossy().into_owned(),
                Err(_) => c.to_string_lossy().into_owned(),
            };
        }
    }
}

fn st_success() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(0)
}

/// [`run_compiler`] with its standard error captured.
fn run_compiler_captured(compiler: &str, args: &[String], cwd: &Path) -> Result<(ExitStatus, Vec<u8>), WrapError> {
    let out = Command::new(compiler)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .output()
        .map_err(|source| WrapError::Spawn { compiler: compiler.to_string(), source })?;
    Ok((out.status, out.stderr))
}

/// The real compiler the wrapper runs: `$RETEST_CXX` (else `c++`) for C++,
/// `$RETEST_CC` (else `cc`) for C.
pub fn real_compiler(cplusplus: bool) -> String {
    let (var, default) = if cplusplus { ("RETEST_CXX", "c++") } else { ("RETEST_CC", "cc") };
    std::env::var(var).ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| default.to_string())
}

/// Runs the real compiler with `args` in `cwd`, its output going to ours.
pub fn run_compiler(compiler: &str, args: &[String], cwd: &Path) -> Result<ExitStatus, WrapError> {
    Command::new(compiler)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::inherit())
        .status()
        .map_err(|source| WrapError::Spawn { compiler: compiler.to_string(), source })
}

/// The runtime object for `compiler` and `target_flags`, compiled on first use
/// into `cache_dir` (atomically, so parallel link steps share it). With
/// `unrecorded`, an image that runs instrumented code without `RETEST_TRACE_DIR`
/// says so in that directory while it exists (`RETEST_RT_UNRECORDED`, see
/// docs/trace-format.md). With `program` (the link makes a program for
/// certain, [`crate::driver::CompilerArgs::links_program`]) the runtime leaves
/// its signal handlers in place at exit (`RETEST_RT_PROGRAM`): a program's code
/// is never unmapped, unlike a shared object's at `dlclose`.
pub fn runtime_object(
    compiler: &str,
    target_flags: &[String],
    cache_dir: &Path,
    unrecorded: Option<&Path>,
    program: bool,
) -> Result<PathBuf, WrapError> {
    let static_link = target_flags.iter().any(|f| f == "-static");
    let unrecorded =
        unrecorded.map(|d| format!("-DRETEST_RT_UNRECORDED={}", c_string_literal(d.as_os_str().as_encoded_bytes())));
    let program = program.then(|| "-DRETEST_RT_PROGRAM".to_string());
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(compiler.as_bytes());
    for f in target_flags.iter().chain(&unrecorded).chain(&program) {
        h.update(f.as_bytes());
        h.update(b"\0");
    }
    h.update(crate::RUNTIME_SOURCE.as_bytes());
    h.update(crate::RUNTIME_HEADER.as_bytes());
    let obj = cache_dir.join(format!("retest_rt-{:016x}.o", h.digest()));
    if obj.is_file() {
        return Ok(obj);
    }
    std::fs::create_dir_all(cache_dir).map_err(|source| WrapError::Io { path: cache_dir.to_path_buf(), source })?;
    let work = tempfile_dir(cache_dir)?;
    let src = crate::write_runtime(&work).map_err(|source| WrapError::Io { path: work.clone(), source })?;
    let tmp_obj = work.join("retest_rt.o");
    let mut a: Vec<String> = target_flags.iter().filter(|f| *f != "-static").cloned().collect();
    a.extend(["-x", "c", "-O2", "-fPIC", "-w", "-c"].iter().map(|s| s.to_string()));
    if static_link {
        a.push("-DRETEST_RT_NO_INTERPOSE".into());
    }
    a.extend(unrecorded);
    a.extend(program);
    a.push(src.to_string_lossy().into_owned());
    a.push("-o".into());
    a.push(tmp_obj.to_string_lossy().into_owned());
    let out = Command::new(compiler)
        .args(&a)
        .current_dir(&work)
        .output()
        .map_err(|source| WrapError::Spawn { compiler: compiler.to_string(), source })?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&work);
        return Err(WrapError::Runtime {
            compiler: compiler.to_string(),
            message: String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("").to_string(),
        });
    }
    std::fs::rename(&tmp_obj, &obj).map_err(|source| WrapError::Io { path: obj.clone(), source })?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(obj)
}

/// `s` as a C string literal: quoted, ASCII, with `\\`, `"`, `?` (no trigraph
/// can form, whatever the compiler does with `-D` values) and every byte
/// outside printable ASCII escaped (octal), so any path survives.
fn c_string_literal(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in s {
        match b {
            b'\\' | b'"' => {
                out.push('\\');
                out.push(b as char);
            }
            b'?' => out.push_str("\\077"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

fn tempfile_dir(parent: &Path) -> Result<PathBuf, WrapError> {
    let d = parent.join(format!(
        ".rt-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0)
    ));
    std::fs::create_dir_all(&d).map_err(|source| WrapError::Io { path: d.clone(), source })?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::full_plan;

    /// A [`Reuse`] in memory, counting what it was asked and what it kept.
    #[derive(Default)]
    struct MemoryReuse {
        analyser: String,
        units: std::cell::RefCell<std::collections::HashMap<AnalysisKey, Unit>>,
        kept: std::cell::RefCell<std::collections::HashMap<(AnalysisKey, [u8; 16]), KeptInstrumentation>>,
        regions: crate::region::RegionsInMemory,
    }

    impl Reuse for MemoryReuse {
        fn analyser(&self) -> &str {
            &self.analyser
        }
        fn unit(&self, key: &AnalysisKey) -> Option<Unit> {
            self.units.borrow().get(key).cloned()
        }
        fn instrumentation(&self, key: &AnalysisKey, build: &retest_abi::BuildHash) -> Option<KeptInstrumentation> {
            self.kept.borrow().get(&(*key, *build.as_bytes())).cloned()
        }
        fn keep(&self, key: &AnalysisKey, unit: &Unit, build: &retest_abi::BuildHash, kept: &KeptInstrumentation) {
            self.units.borrow_mut().insert(*key, unit.clone());
            self.kept.borrow_mut().insert((*key, *build.as_bytes()), kept.clone());
        }
        fn regions(&self) -> &dyn Regions {
            &self.regions
        }
    }

    /// Prepares `args` in `root` with `reuse`; the plan is full instrumentation.
    fn prepare(root: &Path, args: &[&str], reuse: &MemoryReuse) -> Prepared {
        let plan_for = |_: &str, _: &[u8; 16], u: &Unit| Plan { probes: full_plan(u), recording: Default::default() };
        let opts = WrapOptions {
            compiler: if args.iter().any(|a| a.ends_with(".cc")) { "c++" } else { "cc" }.to_string(),
            root: root.to_path_buf(),
            cwd: root.to_path_buf(),
            cplusplus: false,
            plan_for: &plan_for,
            reuse: Some(reuse),
        };
        Prepared::new(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), &opts)
    }

    #[test]
    fn a_text_analysed_before_is_compiled_from_what_was_kept_and_the_same_as_analysed_anew() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let dir = tempfile::tempdir().unwrap();
        for f in ["elevator.c", "constructs.cc", "constructs.h"] {
            std::fs::copy(corpus.join(f), dir.path().join(f)).unwrap();
        }
        for args in [&["-O2", "-c", "elevator.c", "-o", "elevator.o"][..], &["-O0", "-c", "constructs.cc"][..]] {
            let reuse = MemoryReuse { analyser: "front end 1".into(), ..Default::default() };
            let fresh = prepare(dir.path(), args, &reuse);
            let again = prepare(dir.path(), args, &reuse);
            let (fresh, again) = (&fresh.units[0], &again.units[0]);
            assert!(!fresh.reused && again.reused, "{args:?}");
            assert_eq!(again.unit, fresh.unit);
            assert_eq!(again.instrumented.text, fresh.instrumented.text);
            assert_eq!((again.build_hash, &again.plan, again.cpp), (fresh.build_hash, &fresh.plan, fresh.cpp));
            assert_eq!(again.instrumented.cells, fresh.instrumented.cells);

            // another front end, or other flags, analyse anew
            let other = MemoryReuse { analyser: "front end 2".into(), ..Default::default() };
            other.units.borrow_mut().extend(reuse.units.borrow().clone());
            other.kept.borrow_mut().extend(reuse.kept.borrow().clone());
            assert!(!prepare(dir.path(), args, &other).units[0].reused, "{args:?}: another front end");
            // a macro the text never uses leaves it as it was: the flags tell
            let mut flags: Vec<&str> = args.to_vec();
            flags.insert(0, "-DEXTRA_FLAG");
            let other_flags = prepare(dir.path(), &flags, &reuse);
            assert_eq!(other_flags.units[0].src_hash, fresh.src_hash);
            assert!(!other_flags.units[0].reused, "{flags:?}");
        }
    }

    #[test]
    fn cmake_compiler_checks_are_not_project_code() {
        assert!(is_build_system_probe("build/CMakeFiles/3.25.1/CompilerIdCXX/CMakeCXXCompilerId.cpp"));
        assert!(is_build_system_probe("build/CMakeFiles/CMakeScratch/TryCompile-EgxiFZ/src.cxx"));
        assert!(!is_build_system_probe("build/lexer.cc"));
        assert!(!is_build_system_probe("src/CMakeFilesystem.cc"));
        assert!(!is_build_system_probe("CMakeFiles"));
    }

    #[test]
    fn autoconf_and_meson_checks_are_not_project_code() {
        assert!(is_build_system_probe("conftest.c"));
        assert!(is_build_system_probe("build/conftest.cpp"));
        assert!(is_build_system_probe("build/meson-private/tmpk1b2c3/testfile.c"));
        assert!(!is_build_system_probe("src/conftest.h"));
        assert!(!is_build_system_probe("src/myconftest.c"));
        assert!(!is_build_system_probe("meson-private.c"));
    }

    /// Any path reaches the runtime intact through `-D`: quotes, backslashes,
    /// trigraph look-alikes, newlines and non-ASCII bytes (compiled as C89,
    /// where trigraphs are on, and printed back byte for byte).
    #[test]
    fn paths_become_c_string_literals_that_compile_to_the_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let path: &[u8] = b"/tmp/a \"b\" c\\d ??/ e??=\n\t\xc3\xa9\x7f0/unrecorded";
        std::fs::write(d.path().join("p.c"), "#include <stdio.h>\nint main(void) { fputs(LIT, stdout); return 0; }\n")
            .unwrap();
        let def = format!("-DLIT={}", c_string_literal(path));
        assert!(def.is_ascii());
        let st = Command::new("cc")
            .args(["-std=c89", "-pedantic", "-Werror", &def, "p.c", "-o", "p"])
            .current_dir(d.path())
            .status()
            .unwrap();
        assert!(st.success());
        let out = Command::new(d.path().join("p")).output().unwrap();
        assert_eq!(out.stdout, path);
    }

    #[test]
    fn outputs_are_the_objects_and_programs_the_command_writes() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(root.join("a.c"), "int main(void) { return 0; }\n").unwrap();
        let plan_for = |_: &str, _: &[u8; 16], u: &Unit| Plan { probes: full_plan(u), recording: Default::default() };
        let opts = WrapOptions {
            compiler: "cc".into(),
            root: root.clone(),
            cwd: root.clone(),
            cplusplus: false,
            plan_for: &plan_for,
            reuse: None,
        };
        let outputs = |cmd: &str| {
            let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
            Prepared::new(&args, &opts).outputs()
        };
        assert_eq!(outputs("-c a.c"), ["a.o"]);
        assert_eq!(outputs("-c a.c -o obj/a.o"), ["obj/a.o"]);
        assert_eq!(outputs("-S a.c"), ["a.s"]);
        assert_eq!(outputs("a.c -o prog"), ["prog"]);
        assert_eq!(outputs("a.c"), ["a.out"]);
        assert_eq!(outputs("a.o b.o -o prog -lm"), ["prog"]);
        assert_eq!(outputs("-E a.c -o a.i"), ["a.i"]);
        assert!(outputs("-E a.c").is_empty());
        assert!(outputs("-c a.c -o -").is_empty());
    }
}
