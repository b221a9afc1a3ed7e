//! A build session: the compiler wrapper (`retest cc` / `retest c++`) and
//! `retest build -- CMD`.
//!
//! The wrapper is meant to stand in for the compiler: `CC="retest cc" make`. It
//! analyses and instruments each project C and C++ source, records the unit in the open
//! snapshot of the store, and compiles the instrumented text with the real
//! compiler (`$RETEST_CC`, else `cc`; `$RETEST_CXX`, else `c++`) and the original
//! flags. Everything else passes through unchanged.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, ExitStatus};

use retest_cover::plan::{RecordOptions, not_recorded, recording};
use retest_lang_c::instrument::full_plan;
use retest_lang_c::wrap::{Plan, Prepared, WrapOptions, runtime_object};
use retest_run::trace::UNRECORDED_DIR;

use crate::Context;
use crate::error::{Error, OrFail};
use crate::store::{self, MetaKey};

/// The wrapper's own options, before the compiler's arguments:
/// `retest cc [--mcdc] [--paths] [--counts] COMPILER-ARGS...`. `$RETEST_RECORD`
/// (`mcdc,paths,counts`, as `retest build --mcdc --paths --counts` sets it) adds to them.
fn wrapper_options(args: &mut Vec<String>) -> Result<RecordOptions, Error> {
    let mut o = match std::env::var("RETEST_RECORD") {
        Ok(v) => RecordOptions::from_env(&v).map_err(|e| {
            Error::new(format!("$RETEST_RECORD: {e}")).hint("use mcdc, paths, counts or several, comma-separated")
        })?,
        Err(_) => RecordOptions::default(),
    };
    let n = args.iter().take_while(|a| matches!(a.as_str(), "--mcdc" | "--paths" | "--counts")).count();
    for a in args.drain(..n) {
        match a.as_str() {
            "--mcdc" => o.mcdc = true,
            "--counts" => o.counts = true,
            _ => o.paths = true,
        }
    }
    Ok(o)
}

/// The wrapper on the raw arguments after `cc` / `c++`: analyses and
/// instruments the project's sources, compiles, and records the units in the
/// store. Returns the compiler's exit status.
pub fn wrap(cx: &Context, cplusplus: bool, args: Vec<String>) -> Result<ExitStatus, Error> {
    wrap_in(cx, None, &std::env::current_dir().or_fail()?, cplusplus, args)
}

/// [`wrap`] for the store `store_dir` (none: found as `retest` finds it) with
/// the compile run in `cwd`.
pub fn wrap_in(
    cx: &Context,
    store_dir: Option<&Path>,
    cwd: &Path,
    cplusplus: bool,
    mut args: Vec<String>,
) -> Result<ExitStatus, Error> {
    let record = wrapper_options(&mut args)?;
    let compiler = retest_lang_c::wrap::real_compiler(cplusplus);
    let cwd = cwd.to_path_buf();
    // a command without inputs (`--version`, `-dumpmachine`, as build systems
    // probe the compiler) has nothing to instrument: it needs no store
    let parsed = retest_lang_c::driver::parse_args(&args);
    if parsed.sources.is_empty() && parsed.other_inputs.is_empty() {
        return retest_lang_c::wrap::run_compiler(&compiler, &args, &cwd)
            .or_fail_hint("set $RETEST_CC (or $RETEST_CXX) to the real compiler");
    }
    let (mut store, root) = store::open(store_dir)?;
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    // a selective plan recorded by `retest run --selected`, for exactly this content
    let selective = load_plans(&store);
    let plan_for = |key: &str, hash: &[u8; 16], unit: &retest_graph::Unit| Plan {
        probes: match selective.get(key) {
            Some((h, plan)) if h == hash && plan.len() == unit.procedures.len() => plan.clone(),
            _ => full_plan(unit),
        },
        recording: recording(unit, record),
    };
    // what earlier builds made of the same preprocessed texts
    let cache = crate::reuse::AnalysisCache::new(&store_dir);
    let opts = WrapOptions {
        compiler: compiler.clone(),
        root: root.clone(),
        cwd: cwd.clone(),
        cplusplus,
        plan_for: &plan_for,
        reuse: cache.as_ref().map(|c| c as &dyn retest_lang_c::wrap::Reuse),
    };
    let prepared = Prepared::new(&args, &opts);
    let runtime = if prepared.links {
        Some(
            runtime_object(
                &compiler,
                &prepared.args.target_flags(),
                &store_dir.join("rt"),
                Some(&std::fs::canonicalize(&store_dir).unwrap_or_else(|_| store_dir.clone()).join(UNRECORDED_DIR)),
                prepared.args.links_program(),
            )
            .or_fail_hint("the coverage runtime must compile with the same compiler; check $RETEST_CC")?,
        )
    } else {
        None
    };
    let tmp = store_dir.join("tmp");
    std::fs::create_dir_all(&tmp).or_fail()?;
    // until the compiler has finished and the units are recorded, what it writes
    // is journalled: killed in between, the next build removes it (crate::writing)
    let outputs: Vec<std::path::PathBuf> = prepared.outputs().iter().map(|o| cwd.join(o)).collect();
    // under `retest run --selected`, what the previous build had there is kept
    // until the rebuild has finished (crate::previous)
    if let Some(keep) = std::env::var_os(crate::previous::ENV).filter(|v| !v.is_empty()) {
        for o in &outputs {
            crate::previous::keep(Path::new(&keep), o)
                .or_fail_hint("cannot keep the previous build's file aside (see RETEST_KEEP_PREVIOUS)")?;
        }
    }
    let journal = crate::writing::Journal::begin(&store_dir, &outputs).or_fail()?;
    let compiled = prepared.compile(&opts, &tmp, runtime.as_deref()).or_fail()?;
    let status = compiled.status;
    if !status.success() {
        // a compiler that fails removes what it wrote; one killed by a signal cannot
        if let Some(j) = journal
            && status.code().is_some()
        {
            j.finish();
        }
        // a source that does not compile as written was reported by the
        // compiler itself; only a failure of the instrumented text is ours
        if let Some(sources) = compiled.instrumentation_failed {
            cx.reporter.warn(&format!(
                "{} compiles as written but not instrumented: a defect of retest; rerun with RETEST_KEEP_TEMPS=1 to keep the instrumented text in {} and report it",
                sources.join(", "),
                tmp.display()
            ));
        }
        return Ok(status);
    }
    if !prepared.units.is_empty() || prepared.links {
        let newest = store.newest_snapshot().or_fail()?.map(|s| s.id);
        let snapshot = match std::env::var(SNAPSHOT_ENV).ok().and_then(|s| s.parse().ok()) {
            Some(id) => retest_store::SnapshotId(id),
            // a link alone adds no unit: it does not open a new snapshot
            None => match newest {
                Some(n) if prepared.units.is_empty() => n,
                _ => store.open_snapshot().or_fail()?,
            },
        };
        // what the wrapper wrote is compared through its code's CFGs: no
        // test's file dependency (it changes with every build)
        let written: Vec<String> = outputs
            .iter()
            .filter_map(|o| {
                let dir = std::fs::canonicalize(o.parent()?).ok()?;
                Some(retest_run::files::Paths::new(&root).stored(&dir.join(o.file_name()?)))
            })
            .collect();
        store.record_outputs(snapshot, &written).or_fail()?;
        for u in &prepared.units {
            let unit = store.put_unit(&u.src_hash, &u.unit).or_fail()?;
            let build = store
                .put_build_with(&u.build_hash, unit, u.instrumented.cells, &u.plan, &u.instrumented.recording)
                .or_fail()?;
            let mut off: Vec<(usize, Option<u32>, String)> = not_recorded(&u.unit, record);
            off.extend(u.instrumented.dropped.iter().map(|d| (d.procedure, d.decision, d.why.clone())));
            if !off.is_empty() {
                let what: Vec<String> = off
                    .iter()
                    .map(|(p, decision, why)| {
                        let f = called(&u.unit.procedures[*p].name);
                        match decision {
                            Some(j) => format!("{f} decision {j}: {why}"),
                            None => format!("{f} paths: {why}"),
                        }
                    })
                    .collect();
                cx.reporter.note(&format!(
                    "{}: recorded by edges only (reports and selection use edge coverage there): {}",
                    u.rel_source,
                    what.join("; ")
                ));
            }
            store.record_unit(snapshot, &u.key, &u.rel_source, unit, Some(build), &u.flags).or_fail()?;
            // the project files it was analysed from, to tell a later
            // selection that they changed since
            store.record_unit_sources(unit, &crate::deps::source_states(&root, &u.unit.files)).or_fail()?;
            for p in &u.unit.procedures {
                if let Some(why) = &p.unanalysable {
                    let at = p.span.map(|s| format!("{}:{}", u.unit.file_path(&s), s.line)).unwrap_or_default();
                    cx.reporter.warn(&format!(
                        "{at}: {} cannot be analysed exactly ({why}); it counts as changed whenever it changes",
                        called(&p.name)
                    ));
                }
            }
            if let Some(p) = &u.unit.unattributed_error {
                let at = p.span.map(|s| format!("{}:{}", u.unit.file_path(&s), s.line)).unwrap_or_default();
                cx.reporter.warn(&format!("{at}: {}", p.message));
            }
        }
        if let Some(log) = std::env::var_os(BUILD_LOG_ENV)
            && let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log)
        {
            for u in &prepared.units {
                let _ = writeln!(f, "{}{}", u.key, if u.reused { REUSED_MARK } else { "" });
            }
        }
    }
    if let Some(j) = journal {
        j.finish();
    }
    Ok(status)
}

/// Set by `retest build` for the wrappers it runs: the snapshot they record
/// into (all compiles of one build make one snapshot).
pub const SNAPSHOT_ENV: &str = "RETEST_SNAPSHOT";
/// Set by `retest build` for the wrappers it runs: a file each wrapper appends
/// the keys of the units it compiled to, one per line (to count them), each
/// followed by [`REUSED_MARK`] when its analysis came from the cache.
pub const BUILD_LOG_ENV: &str = "RETEST_BUILD_LOG";
/// Ends a line of the build log whose unit's analysis was reused.
const REUSED_MARK: &str = "\treused";

type Plans = std::collections::HashMap<String, ([u8; 16], Vec<Vec<retest_graph::coverage::Probe>>)>;

/// The selective plans recorded in the store: unit key → (content hash, plan).
pub fn load_plans(store: &retest_store::Store) -> Plans {
    store
        .meta(MetaKey::InstrumentPlan.name())
        .ok()
        .flatten()
        .and_then(|s| serde_json::from_str::<Vec<(String, String, Vec<Vec<retest_graph::coverage::Probe>>)>>(&s).ok())
        .map(|v| v.into_iter().filter_map(|(k, h, p)| Some((k, (retest_abi::parse_hex(&h)?, p)))).collect())
        .unwrap_or_default()
}

/// `retest build -- CMD`: runs the build with `CC`/`CXX` set to the wrapper, all
/// compiles recording into one snapshot, and remembers the command (to rebuild
/// later for `retest run --selected`).
pub fn build(
    cx: &Context,
    store: &mut retest_store::Store,
    root: &Path,
    command: &[String],
    options: RecordOptions,
) -> Result<ExitStatus, Error> {
    restore_full_instrumentation(store, root)?;
    let cwd = std::env::current_dir().or_fail()?;
    store::set_build_command(
        store,
        &store::BuildCommand { argv: command.to_vec(), cwd: cwd.clone(), record: options },
    )?;
    run_build(cx, store, command, &cwd, options)
}

/// Makes the next build instrument fully what `retest run --selected` left
/// selectively instrumented (interrupted, or with `--keep-selective`): drops its
/// pending plans and removes the objects of the newest snapshot's units whose
/// build is not fully instrumented, so the build recompiles them. Only the
/// units named in [`MetaKey::SelectiveObjects`] can be (a selective plan is
/// saved only after its unit is named there), so only they are read; a store
/// that never kept the list has every unit checked once.
pub fn restore_full_instrumentation(store: &mut retest_store::Store, root: &Path) -> Result<(), Error> {
    let plan = MetaKey::InstrumentPlan.name();
    if store.meta(plan).or_fail()?.is_some_and(|v| v != "[]") {
        store.set_meta(plan, "[]").or_fail()?;
    }
    let marked = selective_objects(store)?;
    if marked.as_ref().is_some_and(|m| m.is_empty()) {
        return Ok(());
    }
    if let Some(newest) = store.newest_snapshot().or_fail()? {
        for u in store.snapshot_units(newest.id).or_fail()? {
            if marked.as_ref().is_some_and(|m| !m.contains(&u.key)) {
                continue;
            }
            let Some(b) = u.build else { continue };
            let plan = store.build(b).or_fail()?.plan;
            if plan != full_plan(&*store.unit(u.unit).or_fail()?) {
                crate::recover::remove_output(root, &u.key);
            }
        }
    }
    store.set_meta(MetaKey::SelectiveObjects.name(), "[]").or_fail()
}

/// The units whose objects may be selectively instrumented
/// ([`MetaKey::SelectiveObjects`]); `None` when the store never kept the list.
pub fn selective_objects(store: &retest_store::Store) -> Result<Option<BTreeSet<String>>, Error> {
    let Some(text) = store.meta(MetaKey::SelectiveObjects.name()).or_fail()? else { return Ok(None) };
    // a list that cannot be read names no unit for sure: check them all
    Ok(serde_json::from_str(&text).ok())
}

/// Adds `keys` to the units whose objects may be selectively instrumented:
/// before a plan for them is saved. A store without the list stays without
/// it (every unit is checked).
pub fn mark_selective_objects<'k>(
    store: &mut retest_store::Store,
    keys: impl IntoIterator<Item = &'k str>,
) -> Result<(), Error> {
    let Some(mut marked) = selective_objects(store)? else { return Ok(()) };
    marked.extend(keys.into_iter().map(str::to_string));
    store.set_meta(MetaKey::SelectiveObjects.name(), &serde_json::to_string(&marked).or_fail()?).or_fail()
}

/// Whether the outputs on disk may not be what the last build would have made:
/// a build run by `retest` did not finish (interrupted, or it failed), or a
/// wrapper was killed while its compiler wrote (see [`crate::writing`]).
pub fn last_build_interrupted(store: &retest_store::Store) -> Result<bool, Error> {
    let running = store.meta(MetaKey::BuildRunning.name()).or_fail()?.and_then(|v| v.parse::<u32>().ok());
    if running.is_some_and(|pid| !retest_run::exec::process_alive(pid) || pid == std::process::id()) {
        return Ok(true);
    }
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(!crate::writing::abandoned(&store_dir).is_empty())
}

/// Runs `command` in `cwd` through the wrapper into the store's open snapshot,
/// recording what `options` ask beyond edges. (`retest build` also records the
/// command, for `retest run --selected`.)
pub fn run_build(
    cx: &Context,
    store: &mut retest_store::Store,
    command: &[String],
    cwd: &Path,
    options: RecordOptions,
) -> Result<ExitStatus, Error> {
    run_build_keeping(cx, store, command, cwd, options, None)
}

/// [`run_build`], with the files the compiler replaces kept in `keep`
/// (see [`crate::previous`]).
pub fn run_build_keeping(
    cx: &Context,
    store: &mut retest_store::Store,
    command: &[String],
    cwd: &Path,
    options: RecordOptions,
    keep: Option<&Path>,
) -> Result<ExitStatus, Error> {
    let exe = &cx.wrapper;
    let store_dir = store.path().parent().map(Path::to_path_buf).unwrap_or_default();
    let snapshot = store.open_snapshot().or_fail()?;
    let log = store_dir.join("tmp").join(format!("build-{}.log", std::process::id()));
    std::fs::create_dir_all(store_dir.join("tmp")).or_fail()?;
    let _ = std::fs::remove_file(&log);
    let inherited = |var: &str, default: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.contains("retest") && !v.trim().is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    crate::previous::discard_abandoned(&store_dir);
    let removed = crate::writing::remove_abandoned(&store_dir);
    if !removed.is_empty() {
        let root = store_dir.parent().and_then(|r| std::fs::canonicalize(r).ok()).unwrap_or_default();
        let names: Vec<String> =
            removed.iter().map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string()).collect();
        cx.reporter.note(&format!(
            "removed {} file(s) an interrupted build may have left half written, so the build makes them again: {}",
            names.len(),
            names.join(", ")
        ));
    }
    // cleared once the command succeeds (see `last_build_interrupted`)
    store.set_meta(MetaKey::BuildRunning.name(), &std::process::id().to_string()).or_fail()?;
    let q = shell_quote(exe);
    let mut cmd = Command::new(&command[0]);
    match keep {
        Some(dir) => cmd.env(crate::previous::ENV, dir),
        None => cmd.env_remove(crate::previous::ENV),
    };
    let started = std::time::Instant::now();
    let status = cmd
        .args(&command[1..])
        .current_dir(cwd)
        .env("CC", format!("{q} cc"))
        .env("CXX", format!("{q} c++"))
        // the real compilers: $RETEST_CC/$RETEST_CXX when set, else $CC/$CXX
        .env(
            "RETEST_CC",
            std::env::var("RETEST_CC").ok().filter(|v| !v.trim().is_empty()).unwrap_or_else(|| inherited("CC", "cc")),
        )
        .env(
            "RETEST_CXX",
            std::env::var("RETEST_CXX")
                .ok()
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| inherited("CXX", "c++")),
        )
        .env("RETEST_STORE", &store_dir)
        .envs(store.connection_url().map(|u| ("RETEST_STORE_URL", u.to_string())))
        .env(SNAPSHOT_ENV, snapshot.0.to_string())
        .env(BUILD_LOG_ENV, &log)
        .env("RETEST_RECORD", options.to_env())
        .status()
        .map_err(|e| Error::new(format!("cannot run `{}`: {e}", command[0])))?;
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let compiled = logged.lines().count();
    let reused = logged.lines().filter(|l| l.ends_with(REUSED_MARK)).count();
    let _ = std::fs::remove_file(&log);
    crate::reuse::prune(&store_dir, crate::reuse::MAX_BYTES);
    if status.success() {
        store.set_meta(MetaKey::BuildRunning.name(), "").or_fail()?;
        if compiled > 0 {
            let per_unit = started.elapsed().as_secs_f64() / compiled as f64;
            store.set_meta(MetaKey::BuildSecondsPerUnit.name(), &format!("{per_unit:.6}")).or_fail()?;
        }
        if compiled == 0 {
            // a snapshot that holds units has them from an earlier build
            // through the wrapper: the build tool found its outputs up to date
            if store.snapshot_units(snapshot).or_fail()?.is_empty() {
                cx.reporter.note(
                    "no C or C++ source was compiled through the wrapper — the build does not use $CC and $CXX, or found everything up to date (try `make CC=\"$CC\" CXX=\"$CXX\"`, or a clean build)",
                );
            } else {
                cx.reporter.note(&format!(
                    "nothing to compile: the build found every object up to date (snapshot {} holds the units of the last build through the wrapper)",
                    snapshot.0
                ));
            }
        } else {
            let from_cache = match reused {
                0 => String::new(),
                n => {
                    format!(" ({n} of them analysed before: unit and probes taken from .retest/{})", crate::reuse::DIR)
                }
            };
            cx.reporter
                .note(&format!("{compiled} translation unit(s) instrumented into snapshot {}{from_cache}", snapshot.0));
        }
    }
    Ok(status)
}

fn shell_quote(p: &Path) -> String {
    let s = p.to_string_lossy();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A procedure's name as messages show it: `f()` for C, as it is for C++,
/// whose names carry their parameter types (`A::f(int) const`, `f::lambda#1`).
fn called(name: &str) -> String {
    if name.ends_with(')') || name.ends_with("const") || name.contains("::lambda#") {
        name.to_string()
    } else {
        format!("{name}()")
    }
}
