//! End-to-end tests of the C coverage runtime (`retest-lang-c/runtime`).
//!
//! The runtime and the hand-instrumented programs in `tests/rt-programs/`
//! are compiled once per test run with `$CC` (default `cc`). Each test runs
//! a scenario with `RETEST_TRACE_DIR` pointing at a fresh directory and reads
//! the traces back with `retest_run::trace`, asserting the exact hit sets.
//!
//! Units of the test programs (hash = 16 times the byte):
//! - `0xA1` main_tu.c: 64 edge cells (edge k = scenario step k), 4 MC/DC cells
//! - `0xB2` util_tu.c: 300 edge cells, 8 path cells; its early constructor
//!   hits edge 0 and records path id 42 of function 1 before it registers
//! - `0xC3` prog2.c (the exec target): 16 edge cells
//! - `0xD4` plugin.c (the dlopen'ed library): 10 edge cells, held as 4-byte
//!   words in the library (as `retest cc` emits them) and as byte cells in
//!   traces, path id 77 of function 2

use crate::cc;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use retest_run::trace::{self, SECT_EDGES, SECT_MCDC, SECT_PATHS, Section, Trace, TraceDir, TraceFlags, TuHash};

const A: u8 = 0xA1;
const B: u8 = 0xB2;
const C: u8 = 0xC3;
const D: u8 = 0xD4;

fn runtime_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/runtime")
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rt-programs")
}

/// Runs a compiler command; panics with its output if it fails.
fn compile(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}\nfailed: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `program` can be executed at all.
fn have(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// The compiled test programs.
struct Programs {
    dir: PathBuf,
    /// main_tu + util_tu + runtime; runtime symbols not exported.
    prog: PathBuf,
    /// Same, linked with `--export-dynamic-symbol=__retest_*`.
    prog_export: PathBuf,
    /// Same as `prog` with the runtime built with `RETEST_RT_NO_DLSYM`.
    prog_nodlsym: PathBuf,
    /// Same as `prog` with the runtime built with `RETEST_RT_UNRECORDED` = `unrecorded`.
    prog_unrecorded: PathBuf,
    /// Same as `prog` with the runtime linked first, so that its constructor
    /// (101) runs before util_tu's early one and takes the command line from
    /// `argv`; in `prog` the early constructor sets the runtime up first.
    prog_rt_first: PathBuf,
    /// LD_PRELOAD shim that reports every open of /proc/self/cmdline.
    count_open: PathBuf,
    unrecorded: PathBuf,
    prog2: PathBuf,
    plugin: PathBuf,
    /// No instrumented code; loads `plugin` and prints signal dispositions.
    host: PathBuf,
}

fn programs() -> &'static Programs {
    static PROGRAMS: OnceLock<Programs> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("retest-runtime-tests");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cc = cc();
        let rt = runtime_dir().join("retest_rt.c");
        let src = programs_dir();
        let o = |name: &str| dir.join(name).to_str().unwrap().to_string();
        let s = |name: &str| src.join(name).to_str().unwrap().to_string();
        let rt = rt.to_str().unwrap();
        let warn = ["-O2", "-Wall", "-Wextra", "-Werror"];

        compile(&cc, &[&warn[..], &["-c", rt, "-o", &o("rt.o")]].concat());
        compile(&cc, &[&warn[..], &["-fPIC", "-c", rt, "-o", &o("rt_pic.o")]].concat());
        compile(&cc, &[&warn[..], &["-DRETEST_RT_NO_DLSYM", "-c", rt, "-o", &o("rt_nodlsym.o")]].concat());
        let unrecorded = format!("-DRETEST_RT_UNRECORDED=\"{}\"", o("unrecorded"));
        compile(&cc, &[&warn[..], &[&unrecorded, "-c", rt, "-o", &o("rt_unrecorded.o")]].concat());
        for tu in ["main_tu", "util_tu"] {
            compile(&cc, &["-O1", "-Wall", "-c", &s(&format!("{tu}.c")), "-o", &o(&format!("{tu}.o"))]);
        }
        let link = |rt_obj: &str, out: &str, extra: &[&str]| {
            let mut args = vec![o("main_tu.o"), o("util_tu.o"), o(rt_obj), "-o".into(), o(out)];
            args.extend(["-pthread".to_string(), "-ldl".to_string()]);
            args.extend(extra.iter().map(|s| s.to_string()));
            compile(&cc, &args.iter().map(String::as_str).collect::<Vec<_>>());
        };
        link("rt.o", "prog", &[]);
        link("rt.o", "prog_export", &["-Wl,--export-dynamic-symbol=__retest_*"]);
        link("rt_nodlsym.o", "prog_nodlsym", &[]);
        link("rt_unrecorded.o", "prog_unrecorded", &[]);
        compile(
            &cc,
            &["-O1", &o("rt.o"), &o("main_tu.o"), &o("util_tu.o"), "-o", &o("prog_rt_first"), "-pthread", "-ldl"],
        );
        compile(&cc, &["-O1", "-Wall", "-shared", "-fPIC", &s("count_open.c"), "-o", &o("count_open.so"), "-ldl"]);
        compile(&cc, &["-O1", &s("prog2.c"), &o("rt.o"), "-o", &o("prog2")]);
        compile(&cc, &["-O1", "-shared", "-fPIC", &s("plugin.c"), &o("rt_pic.o"), "-o", &o("plugin.so")]);
        compile(&cc, &["-O1", "-Wall", &s("host.c"), "-o", &o("host"), "-pthread", "-ldl"]);
        Programs {
            prog: dir.join("prog"),
            prog_export: dir.join("prog_export"),
            prog_nodlsym: dir.join("prog_nodlsym"),
            prog_unrecorded: dir.join("prog_unrecorded"),
            prog_rt_first: dir.join("prog_rt_first"),
            count_open: dir.join("count_open.so"),
            unrecorded: dir.join("unrecorded"),
            prog2: dir.join("prog2"),
            plugin: dir.join("plugin.so"),
            host: dir.join("host"),
            dir,
        }
    })
}

/// Waits for `child`, killing it after 60 s so a broken scenario fails
/// instead of hanging the test run.
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("test program did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A finished scenario.
struct Run {
    dir: tempfile::TempDir,
    pid: u64,
    status: ExitStatus,
    stdout: String,
}

fn command(prog: &Path, args: &[&str], dir: &Path) -> Command {
    let mut cmd = Command::new(prog);
    cmd.args(args).env("RETEST_TRACE_DIR", dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    cmd
}

fn run_with(prog: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(prog, args, dir.path());
    setup(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let pid = u64::from(child.id());
    let status = wait(&mut child);
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    Run { dir, pid, status, stdout }
}

fn run(prog: &Path, args: &[&str]) -> Run {
    run_with(prog, args, |_| {})
}

/// Reads the trace directory of a run that must have completed cleanly: no
/// leftover marker, no temporary file, no unreadable or incomplete trace.
/// Traces come sorted by file name.
fn clean_traces(dir: &Path) -> Vec<Trace> {
    let td: TraceDir = trace::read_dir(dir).unwrap();
    assert!(td.errors.is_empty(), "unreadable traces: {:?}", td.errors);
    assert!(td.live.is_empty(), "leftover live markers: {:?}", td.live);
    assert!(td.is_complete());
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(name.ends_with(".rtt") && !name.starts_with('.'), "unexpected file {name}");
    }
    td.traces.into_iter().map(|t| t.trace).collect()
}

/// Cell sections of a trace: (first hash byte, kind) -> hit indices. Every
/// unit hash must be 16 equal bytes.
fn cells(t: &Trace) -> BTreeMap<(u8, u32), Vec<u32>> {
    let mut out = BTreeMap::new();
    for u in &t.units {
        assert!(u.hash.0.iter().all(|&b| b == u.hash.0[0]), "hash {:?}", u.hash);
        for s in &u.sections {
            if let Section::Cells { kind, hit, .. } = s {
                assert!(out.insert((u.hash.0[0], *kind), hit.clone()).is_none());
            }
        }
    }
    out
}

/// Path-id sets of a trace: (first hash byte, func) -> ids.
fn ids(t: &Trace) -> BTreeMap<(u8, u32), Vec<u64>> {
    let mut out = BTreeMap::new();
    for u in &t.units {
        for s in &u.sections {
            if let Section::IdSet { kind, func, ids } = s {
                assert_eq!(*kind, SECT_PATHS);
                assert!(out.insert((u.hash.0[0], *func), ids.clone()).is_none());
            }
        }
    }
    out
}

/// Expected cells of `prog`: edges of A and B as given, plus the A MC/DC
/// cells and the B path cells.
fn prog_cells(a: &[u32], mcdc: &[u32], b: &[u32], paths: &[u32]) -> BTreeMap<(u8, u32), Vec<u32>> {
    BTreeMap::from([
        ((A, SECT_EDGES), a.to_vec()),
        ((A, SECT_MCDC), mcdc.to_vec()),
        ((B, SECT_EDGES), b.to_vec()),
        ((B, SECT_PATHS), paths.to_vec()),
    ])
}

/// The path id every run of `prog` records from B's early constructor.
fn early_ids() -> BTreeMap<(u8, u32), Vec<u64>> {
    BTreeMap::from([((B, 1), vec![42])])
}

/// The single trace of a run, checked for pid and flags.
fn single(r: &Run, flags: TraceFlags) -> Trace {
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 1, "{traces:#?}");
    let t = traces.into_iter().next().unwrap();
    assert_eq!(t.pid, r.pid);
    assert_eq!(t.flags, flags);
    t
}

#[test]
fn normal_return_from_main() {
    let r = run(&programs().prog, &["return"]);
    assert_eq!(r.status.code(), Some(0));
    let t = single(&r, TraceFlags::EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 1], &[2], &[0, 1], &[]));
    assert_eq!(ids(&t), early_ids());
}

/// The final trace is written over the live marker, which holds the command
/// line: a trace shorter than a long command line must not keep its tail.
#[test]
fn a_trace_shorter_than_the_command_line_in_the_marker_is_cut_to_size() {
    let long = "x".repeat(4000);
    let r = run(&programs().prog, &["return", &long]);
    assert_eq!(r.status.code(), Some(0));
    let t = single(&r, TraceFlags::EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 1], &[2], &[0, 1], &[]));
    let f = std::fs::read_dir(r.dir.path()).unwrap().next().unwrap().unwrap().path();
    assert!(std::fs::metadata(&f).unwrap().len() < 1024, "{} bytes: the command line's tail is left", f.display());
}

#[test]
fn exit_keeps_its_status() {
    let r = run(&programs().prog, &["exit"]);
    assert_eq!(r.status.code(), Some(3));
    let t = single(&r, TraceFlags::EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 2], &[], &[0], &[]));
    assert_eq!(ids(&t), early_ids());
}

#[test]
fn abort_is_traced_and_still_aborts() {
    let r = run(&programs().prog, &["abort"]);
    assert_eq!(r.status.signal(), Some(libc::SIGABRT));
    let t = single(&r, TraceFlags::SIGNAL | TraceFlags((libc::SIGABRT as u32) << 8));
    assert_eq!(t.flags.signal(), Some(libc::SIGABRT as u8));
    assert_eq!(cells(&t), prog_cells(&[0, 3], &[], &[0], &[]));
    assert_eq!(ids(&t), early_ids());
}

#[test]
fn segfault_is_traced_and_still_kills() {
    let r = run(&programs().prog, &["segv"]);
    assert_eq!(r.status.signal(), Some(libc::SIGSEGV));
    let t = single(&r, TraceFlags::SIGNAL | TraceFlags((libc::SIGSEGV as u32) << 8));
    assert_eq!(cells(&t), prog_cells(&[0, 4], &[], &[0], &[]));
}

#[test]
fn underscore_exit_is_traced() {
    let r = run(&programs().prog, &["_exit"]);
    assert_eq!(r.status.code(), Some(4));
    let t = single(&r, TraceFlags::UNDERSCORE_EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 5], &[], &[0], &[]));

    let r = run(&programs().prog, &["_Exit"]);
    assert_eq!(r.status.code(), Some(5));
    let t = single(&r, TraceFlags::UNDERSCORE_EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 6], &[], &[0], &[]));
}

#[test]
fn fork_child_writes_its_own_trace() {
    let r = run(&programs().prog, &["fork"]);
    assert_eq!(r.status.code(), Some(0));
    let child: u64 = r.stdout.trim().parse().unwrap();
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 2, "{traces:#?}");
    let parent_t = traces.iter().find(|t| t.pid == r.pid).expect("parent trace");
    let child_t = traces.iter().find(|t| t.pid == child).expect("child trace");
    assert_eq!(parent_t.flags, TraceFlags::EXIT);
    assert_eq!(child_t.flags, TraceFlags::EXIT);
    // Both inherit what ran before fork (edge 7); each has only its own after.
    assert_eq!(cells(parent_t), prog_cells(&[0, 7, 9], &[], &[0, 9], &[]));
    assert_eq!(cells(child_t), prog_cells(&[0, 7, 8], &[], &[0, 8], &[]));
    assert_eq!(ids(child_t), early_ids());

    let cov = trace::merge(&traces).unwrap();
    assert_eq!(cov.cells(&TuHash([A; 16]), SECT_EDGES).unwrap().hit, vec![0, 7, 8, 9]);
    assert_eq!(cov.cells(&TuHash([B; 16]), SECT_EDGES).unwrap().hit, vec![0, 8, 9]);
}

fn check_exec(prog: &Path, variant: &str) {
    let p = programs();
    let path = format!("{}:{}", p.dir.display(), std::env::var("PATH").unwrap_or_default());
    let r = run_with(prog, &["exec", variant, p.prog2.to_str().unwrap(), "prog2"], |cmd| {
        cmd.env("PATH", &path);
    });
    assert_eq!(r.status.code(), Some(0), "exec{variant}");
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 2, "exec{variant}: {traces:#?}");
    assert!(traces.iter().all(|t| t.pid == r.pid), "exec{variant}: same pid");
    let first = traces
        .iter()
        .find(|t| t.flags == TraceFlags::BEFORE_EXEC)
        .unwrap_or_else(|| panic!("exec{variant}: no before-exec trace in {traces:#?}"));
    let second = traces
        .iter()
        .find(|t| t.flags == TraceFlags::EXIT)
        .unwrap_or_else(|| panic!("exec{variant}: no exit trace in {traces:#?}"));
    assert_eq!(cells(first), prog_cells(&[0, 10], &[], &[0, 10], &[]), "exec{variant}");
    assert_eq!(ids(first), early_ids(), "exec{variant}");
    // The variants that pass an environment set RT_ENV_TEST (cell 2).
    let c: &[u32] = if variant.contains('e') { &[0, 1, 2] } else { &[0, 1] };
    assert_eq!(cells(second), BTreeMap::from([((C, SECT_EDGES), c.to_vec())]), "exec{variant}");
}

/// execv, execve, ..., and fexecve ("f"); "ve0" is execve with an environment
/// that lacks RETEST_TRACE_DIR (the runtime must add it, or the child's
/// coverage would be lost silently).
const EXEC_VARIANTS: [&str; 9] = ["v", "ve", "ve0", "vp", "vpe", "l", "lp", "le", "f"];

#[test]
fn exec_writes_the_first_image_trace() {
    for variant in EXEC_VARIANTS {
        check_exec(&programs().prog, variant);
    }
}

#[test]
fn exec_without_dlsym_uses_the_system_call() {
    for variant in EXEC_VARIANTS {
        check_exec(&programs().prog_nodlsym, variant);
    }
}

#[test]
fn failed_exec_keeps_the_image_traced() {
    for prog in [&programs().prog, &programs().prog_nodlsym] {
        let r = run(prog, &["execfail"]);
        assert_eq!(r.status.code(), Some(0));
        let traces = clean_traces(r.dir.path());
        // One trace before each exec attempt, a superset at exit.
        let flags: Vec<_> = traces.iter().map(|t| t.flags).collect();
        assert_eq!(flags, [TraceFlags::BEFORE_EXEC, TraceFlags::BEFORE_EXEC, TraceFlags::EXIT]);
        assert_eq!(cells(&traces[0]), prog_cells(&[0, 12], &[], &[0], &[]));
        assert_eq!(cells(&traces[1]), prog_cells(&[0, 12, 13], &[], &[0], &[]));
        assert_eq!(cells(&traces[2]), prog_cells(&[0, 12, 13, 14], &[], &[0], &[]));
    }
}

/// Starts the `sleep` scenario and waits until it is ready.
fn start_sleeper() -> (tempfile::TempDir, Child) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(&programs().prog, &["sleep"], dir.path()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    (dir, child)
}

#[test]
fn sigterm_is_traced_and_still_terminates() {
    let (dir, mut child) = start_sleeper();
    let pid = child.id();
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    let status = wait(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    let traces = clean_traces(dir.path());
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].pid, u64::from(pid));
    assert_eq!(traces[0].flags.signal(), Some(libc::SIGTERM as u8));
    assert_eq!(cells(&traces[0]), prog_cells(&[0, 15], &[], &[0], &[]));
}

/// The live marker holds the command line, each argument ended by a NUL as
/// in /proc/self/cmdline. Under glibc the runtime takes it from the arguments
/// its constructor receives; where the image's code runs before that
/// constructor (util_tu's early one, in `prog`), from /proc.
#[test]
fn the_marker_holds_the_command_line_from_argv_or_from_proc() {
    let args = ["sleep", "two words", "", "x"];
    for (prog, proc_opens) in [(&programs().prog_rt_first, 0), (&programs().prog, 1)] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = command(prog, &args, dir.path())
            .env("LD_PRELOAD", &programs().count_open)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n");
        let marker = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        let expected: Vec<u8> =
            [prog.to_str().unwrap()].iter().chain(&args).flat_map(|a| a.bytes().chain([0u8])).collect();
        assert_eq!(std::fs::read(&marker).unwrap(), expected, "{}", prog.display());
        child.kill().unwrap();
        wait(&mut child);
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(err.matches("cmdline-open\n").count(), proc_opens, "{}: {err}", prog.display());
    }
}

#[test]
fn sigkill_leaves_only_the_live_marker() {
    let (dir, mut child) = start_sleeper();
    let pid = child.id();
    child.kill().unwrap();
    let status = wait(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let td = trace::read_dir(dir.path()).unwrap();
    assert!(td.traces.is_empty() && td.errors.is_empty());
    assert_eq!(td.live.len(), 1);
    assert_eq!(td.live[0].pid, Some(u64::from(pid)));
    assert_eq!(td.live[0].command[1..], ["sleep".to_string()]);
    assert!(td.live[0].command[0].ends_with("prog"));
    assert!(!td.is_complete());
}

#[test]
fn four_threads_hit_disjoint_cells() {
    let r = run(&programs().prog, &["threads"]);
    assert_eq!(r.status.code(), Some(0));
    // the threads were joined before exit: nothing ran part-way, not flagged
    // `THREADS` (retest-cli's faults test has a thread running at exit)
    let t = single(&r, TraceFlags::EXIT);
    let b: Vec<u32> = (0..=256).collect();
    assert_eq!(cells(&t), prog_cells(&[0, 16], &[], &b, &[0, 1, 2, 3]));
    let mut func2: Vec<u64> = (0..4u64).flat_map(|t| (0..3000).map(move |i| t * 1_000_000 + i)).collect();
    func2.sort_unstable();
    assert_eq!(ids(&t), BTreeMap::from([((B, 1), vec![42]), ((B, 2), func2), ((B, 3), (0..1000).collect())]));
}

#[test]
fn dlclosed_library_with_one_runtime() {
    // The executable exports the runtime entry points, so the library's TU
    // registers with the executable's copy: one trace, the library's cells
    // taken from the shadow after dlclose.
    let p = programs();
    let r = run(&p.prog_export, &["dlopen", p.plugin.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0));
    let t = single(&r, TraceFlags::EXIT);
    let mut expected = prog_cells(&[0, 17, 18], &[], &[0], &[]);
    expected.insert((D, SECT_EDGES), vec![0, 5]);
    assert_eq!(cells(&t), expected);
    let mut expected_ids = early_ids();
    expected_ids.insert((D, 2), vec![77]);
    assert_eq!(ids(&t), expected_ids);
}

#[test]
fn dlclosed_library_with_its_own_runtime() {
    // Not exported: the library binds to its own copy of the runtime, which
    // writes the library's trace when it is unloaded.
    let p = programs();
    let r = run(&p.prog, &["dlopen", p.plugin.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0));
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 2, "{traces:#?}");
    assert!(traces.iter().all(|t| t.pid == r.pid && t.flags == TraceFlags::EXIT));
    let lib = traces.iter().find(|t| t.units.len() == 1).expect("library trace");
    let exe = traces.iter().find(|t| t.units.len() == 2).expect("executable trace");
    assert_eq!(cells(lib), BTreeMap::from([((D, SECT_EDGES), vec![0, 5])]));
    assert_eq!(ids(lib), BTreeMap::from([((D, 2), vec![77])]));
    assert_eq!(cells(exe), prog_cells(&[0, 17, 18], &[], &[0], &[]));
    assert_eq!(ids(exe), early_ids());
}

/// The runtime takes only signals whose disposition is the default: an ignored
/// one (inherited across `exec`) and the program's own handlers stay as they
/// were, whether it is installed from one thread or by a library loaded while
/// another thread runs; unloading the library puts the default back.
#[test]
fn handlers_go_only_where_the_default_was_and_leave_with_the_library() {
    let p = programs();
    for threads in [&[][..], &["thread"][..]] {
        let mut args = vec![p.plugin.to_str().unwrap()];
        args.extend_from_slice(threads);
        let r = run_with(Path::new("/bin/sh"), &[], |c| {
            c.args(["-c", "trap '' PIPE INT; exec \"$0\" \"$@\"", p.host.to_str().unwrap()]).args(&args);
        });
        assert_eq!(r.status.code(), Some(0), "{threads:?}: {}", r.stdout);
        assert_eq!(
            r.stdout, "PIPE=ign INT=ign USR1=own TERM=rt SEGV=rt\nafter dlclose: TERM=dfl SEGV=dfl\n",
            "{threads:?}"
        );
        let traces = clean_traces(r.dir.path());
        assert_eq!(traces.len(), 1, "{threads:?}: {traces:#?}");
        assert_eq!(cells(&traces[0]), BTreeMap::from([((D, SECT_EDGES), vec![0, 5])]));
    }
}

#[test]
fn path_ids_are_a_sorted_set() {
    let r = run(&programs().prog, &["paths"]);
    assert_eq!(r.status.code(), Some(0));
    let t = single(&r, TraceFlags::EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 19], &[], &[0], &[]));
    let mut expected = early_ids();
    expected.insert((A, 0), vec![7]);
    expected.insert((A, 3), vec![0, 12345, u64::MAX]);
    assert_eq!(ids(&t), expected);
}

#[test]
fn inert_without_trace_dir() {
    for value in [None, Some("")] {
        let cwd = tempfile::tempdir().unwrap();
        let r = run_with(&programs().prog, &["fork"], |cmd| {
            cmd.current_dir(cwd.path());
            match value {
                None => cmd.env_remove("RETEST_TRACE_DIR"),
                Some(v) => cmd.env("RETEST_TRACE_DIR", v),
            };
        });
        assert_eq!(r.status.code(), Some(0));
        assert_eq!(std::fs::read_dir(r.dir.path()).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
    }
}

/// Built with `RETEST_RT_UNRECORDED`, an image without `RETEST_TRACE_DIR`
/// reports itself — process group, pid, command line — while that directory
/// exists, and nothing else changes: it stays inert, and its forked child
/// (same image, same group) adds no second report.
#[test]
fn an_image_without_trace_dir_reports_itself_while_the_directory_exists() {
    let p = programs();
    let unset = |cmd: &mut Command| {
        cmd.env_remove("RETEST_TRACE_DIR").process_group(0);
    };
    // no directory: no report, no file anywhere
    let r = run_with(&p.prog_unrecorded, &["fork"], unset);
    assert_eq!(r.status.code(), Some(0));
    assert!(!p.unrecorded.exists());
    assert_eq!(std::fs::read_dir(r.dir.path()).unwrap().count(), 0);

    std::fs::create_dir(&p.unrecorded).unwrap();
    let r = run_with(&p.prog_unrecorded, &["fork"], unset);
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(r.dir.path()).unwrap().count(), 0, "no trace, no marker");
    let reports = trace::read_unrecorded(&p.unrecorded);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let pid = r.pid as u32;
    assert_eq!((reports[0].group, reports[0].pid), (pid, pid));
    assert_eq!(reports[0].command, vec![p.prog_unrecorded.display().to_string(), "fork".to_string()]);
    let name = reports[0].path.file_name().unwrap().to_str().unwrap().to_string();
    let nonce = name.rsplit('-').next().unwrap();
    assert!(nonce.len() == 16 && nonce.chars().all(|c| c.is_ascii_hexdigit()), "{name}");

    // with the variable the image records as usual and reports nothing, but
    // logs itself (process group, stem of its marker and trace) in .images
    let r = run_with(&p.prog_unrecorded, &["return"], |cmd| {
        cmd.process_group(0);
    });
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(clean_traces(r.dir.path()).len(), 1);
    assert_eq!(trace::read_unrecorded(&p.unrecorded).len(), 1);
    let trace_name = std::fs::read_dir(r.dir.path()).unwrap().next().unwrap().unwrap().file_name();
    let stem = trace_name.to_str().unwrap().rsplit_once('-').unwrap().0.to_string();
    let log = std::fs::read_to_string(p.unrecorded.join(trace::IMAGES_LOG)).unwrap();
    assert_eq!(log, format!("{} {stem}\n", r.pid), "the inert images logged nothing");
    std::fs::remove_dir_all(&p.unrecorded).unwrap();
}

#[test]
fn relative_trace_dir_is_resolved_at_start() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("traces")).unwrap();
    let r = run_with(&programs().prog, &["return"], |cmd| {
        cmd.current_dir(cwd.path()).env("RETEST_TRACE_DIR", "traces");
    });
    assert_eq!(r.status.code(), Some(0));
    let traces = clean_traces(&cwd.path().join("traces"));
    assert_eq!(traces.len(), 1);
    assert_eq!(cells(&traces[0]), prog_cells(&[0, 1], &[2], &[0, 1], &[]));
}

#[test]
fn missing_trace_dir_is_reported_not_fatal() {
    let out = Command::new(&programs().prog)
        .arg("exit")
        .env("RETEST_TRACE_DIR", "/nonexistent/retest-traces")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "retest runtime: cannot create a live marker; coverage is not recorded. \
         Directory: /nonexistent/retest-traces\n"
    );
}

#[test]
fn vfork_child_exec_leaves_the_parent_alone() {
    let p = programs();
    let r = run(&p.prog, &["vfork", p.prog2.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0));
    let child: u64 = r.stdout.trim().parse().unwrap();
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 2, "{traces:#?}");
    let parent_t = traces.iter().find(|t| t.pid == r.pid).expect("parent trace");
    let child_t = traces.iter().find(|t| t.pid == child).expect("exec'ed child trace");
    assert_eq!(parent_t.flags, TraceFlags::EXIT);
    assert_eq!(cells(parent_t), prog_cells(&[0, 20, 21], &[], &[0], &[]));
    assert_eq!(child_t.flags, TraceFlags::EXIT);
    assert_eq!(cells(child_t), BTreeMap::from([((C, SECT_EDGES), vec![0, 1])]));
}

/// A raw `clone()` child on a stack of one page -- GoogleTest's threadsafe
/// death tests give theirs two and exec the test binary from it -- execs
/// through the runtime as through libc: no trace of its own (it does not own
/// the image), the exec'ed program's trace, the parent's untouched; and
/// likewise in an image that records nothing. The exec path once looked up
/// the next `execve` with dlsym there, on that stack, and the child died of
/// the overflow (fmt's `assert_test.fail`).
#[test]
fn a_clone_child_on_a_one_page_stack_execs() {
    let p = programs();
    let args = ["clone", "1", p.prog2.to_str().unwrap()];
    let r = run(&p.prog, &args);
    assert_eq!(r.status.code(), Some(0), "the clone child's exec failed");
    let child: u64 = r.stdout.trim().parse().unwrap();
    let traces = clean_traces(r.dir.path());
    assert_eq!(traces.len(), 2, "{traces:#?}");
    let parent_t = traces.iter().find(|t| t.pid == r.pid).expect("parent trace");
    let child_t = traces.iter().find(|t| t.pid == child).expect("exec'ed child trace");
    assert_eq!(parent_t.flags, TraceFlags::EXIT);
    assert_eq!(cells(parent_t), prog_cells(&[0, 23, 24], &[], &[0], &[]));
    assert_eq!(child_t.flags, TraceFlags::EXIT);
    assert_eq!(cells(child_t), BTreeMap::from([((C, SECT_EDGES), vec![0, 1])]));

    let r = run_with(&p.prog, &args, |cmd| {
        cmd.env_remove("RETEST_TRACE_DIR");
    });
    assert_eq!(r.status.code(), Some(0), "the clone child's exec failed in an inert image");
}

#[test]
fn unit_with_unknown_abi_marks_the_trace_incomplete() {
    let r = run(&programs().prog, &["badabi"]);
    assert_eq!(r.status.code(), Some(0));
    let td = trace::read_dir(r.dir.path()).unwrap();
    assert!(td.live.is_empty() && td.errors.is_empty());
    assert_eq!(td.traces.len(), 1);
    let t = &td.traces[0].trace;
    assert_eq!(t.flags, TraceFlags::EXIT | TraceFlags::INCOMPLETE);
    assert_eq!(cells(t), prog_cells(&[0, 22], &[], &[0], &[]));
    assert!(!td.is_complete());
    assert!(td.coverage().unwrap().is_incomplete());
}

/// The runtime and the header compile warning-free in every mode the
/// instrumenter and the compiler wrapper may use.
#[test]
fn runtime_compiles_cleanly() {
    let p = programs();
    let rt = runtime_dir().join("retest_rt.c");
    let rt = rt.to_str().unwrap();
    let out = p.dir.join("check.o");
    let out = out.to_str().unwrap();
    let header_c = p.dir.join("header.c");
    std::fs::write(
        &header_c,
        format!(
            "#include \"{}\"\nint header_ok(void) {{ return RETEST_ABI + RETEST_SECT_PATHS; }}\n",
            runtime_dir().join("retest_rt.h").display()
        ),
    )
    .unwrap();
    let header_c = header_c.to_str().unwrap();
    let strict = ["-Wall", "-Wextra", "-Werror"];

    let cc = cc();
    for extra in [
        &["-std=c89", "-pedantic"][..],
        &["-std=c89", "-pedantic", "-O2", "-fPIC"],
        &["-std=c99", "-pedantic", "-O2", "-DRETEST_RT_NO_DLSYM"],
        &["-std=c89", "-pedantic", "-DRETEST_RT_NO_INTERPOSE"],
        &["-std=c89", "-pedantic", "-DRETEST_RT_UNRECORDED=\"/tmp/unrecorded\""],
        &["-std=c89", "-pedantic", "-O2", "-DRETEST_RT_PROGRAM"],
    ] {
        compile(&cc, &[&strict[..], extra, &["-c", rt, "-o", out]].concat());
    }
    compile(&cc, &[&strict[..], &["-std=c89", "-pedantic", "-c", header_c, "-o", out]].concat());

    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    assert!(have(&cxx), "no C++ compiler `{cxx}`: install g++ or set CXX (`.ci/run` installs it)");
    for std in ["-std=c++98", "-std=c++11", "-std=c++17"] {
        compile(&cxx, &[&strict[..], &["-x", "c++", std, "-pedantic", "-fPIC", "-c", rt, "-o", out]].concat());
        let unrecorded = ["-DRETEST_RT_UNRECORDED=\"/tmp/unrecorded\""];
        compile(&cxx, &[&strict[..], &["-x", "c++", std, "-pedantic", "-c", rt, "-o", out], &unrecorded].concat());
        compile(&cxx, &[&strict[..], &["-x", "c++", std, "-pedantic", "-c", header_c, "-o", out]].concat());
    }
    // Compiled as C++, the entry points must keep their C names: link
    // the program against it and run it.
    let rt_cxx = p.dir.join("rt_cxx.o");
    let prog_cxx = p.dir.join("prog_cxx");
    compile(&cxx, &["-x", "c++", "-O2", "-c", rt, "-o", rt_cxx.to_str().unwrap()]);
    compile(
        &cxx,
        &[
            p.dir.join("main_tu.o").to_str().unwrap(),
            p.dir.join("util_tu.o").to_str().unwrap(),
            rt_cxx.to_str().unwrap(),
            "-o",
            prog_cxx.to_str().unwrap(),
            "-pthread",
            "-ldl",
        ],
    );
    let r = run(&prog_cxx, &["_exit"]);
    assert_eq!(r.status.code(), Some(4));
    let t = single(&r, TraceFlags::UNDERSCORE_EXIT);
    assert_eq!(cells(&t), prog_cells(&[0, 5], &[], &[0], &[]));

    assert!(have("clang-19"), "clang-19 is not installed (Debian: clang-19; `.ci/run` installs it)");
    for extra in
        [&["-std=c89", "-pedantic"][..], &["-std=c89", "-pedantic", "-O2", "-fPIC"], &["-x", "c++", "-std=c++11"]]
    {
        compile("clang-19", &[&strict[..], extra, &["-c", rt, "-o", out]].concat());
    }
}
