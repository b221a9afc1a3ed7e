//! Execution of real processes: statuses, timeouts, process groups, output
//! capture, environment, parallelism and the stop flag.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use retest_run::discover::TestSpec;
use retest_run::exec::{ExecError, RunOptions, Status, TAIL_BYTES, TestOutcome, run_tests};
use xxhash_rust::xxh3::xxh3_128;

fn spec(name: &str, cmd: &str, cwd: &Path) -> TestSpec {
    TestSpec { name: name.into(), key: name.into(), cmd: cmd.into(), cwd: cwd.to_path_buf(), ..Default::default() }
}

/// Everything the callbacks saw.
struct Run {
    starts: Vec<usize>,
    /// Outcomes by index; a second outcome for an index fails the test.
    outcomes: BTreeMap<usize, TestOutcome>,
    elapsed: Duration,
}

fn run(tests: &[TestSpec], opts: &RunOptions) -> Run {
    let starts = Mutex::new(Vec::new());
    let outcomes = Mutex::new(BTreeMap::new());
    let t0 = Instant::now();
    run_tests(tests, opts, &|i| starts.lock().unwrap().push(i), &|o: TestOutcome| {
        let i = o.index;
        assert!(outcomes.lock().unwrap().insert(i, o).is_none(), "on_done twice for {i}");
    })
    .unwrap();
    Run { starts: starts.into_inner().unwrap(), outcomes: outcomes.into_inner().unwrap(), elapsed: t0.elapsed() }
}

fn opts(dir: &Path) -> RunOptions {
    RunOptions::new(dir.join("traces"))
}

fn hash(bytes: &[u8]) -> [u8; 16] {
    xxh3_128(bytes).to_be_bytes()
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet), waiting up
/// to two seconds for it to go.
fn process_gone(pid: u32) -> bool {
    let t0 = Instant::now();
    loop {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                // State follows the parenthesised command name.
                let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
                if state == Some(Some('Z')) || state == Some(Some('X')) {
                    return true;
                }
            }
        }
        if t0.elapsed() > Duration::from_secs(2) {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn read_pid(path: &Path) -> u32 {
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[test]
fn exit_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests = vec![
        spec("true", "true", d),
        spec("exit3", "exit 3", d),
        spec("false", "false", d),
        spec("exit255", "exit 255", d),
        TestSpec { expect_failure: true, ..spec("will-fail-but-passes", "exit 0", d) },
        TestSpec { expect_failure: true, ..spec("will-fail-and-fails", "exit 5", d) },
        spec("segv", "kill -SEGV $$", d),
        spec("abort-child", "sh -c 'kill -ABRT $$'", d),
    ];
    let r = run(&tests, &opts(d));
    let statuses: Vec<Status> = r.outcomes.values().map(|o| o.status.clone()).collect();
    assert_eq!(
        statuses,
        vec![
            Status::Passed,
            Status::Failed { code: 3 },
            Status::Failed { code: 1 },
            Status::Failed { code: 255 },
            Status::Failed { code: 0 },
            Status::Passed,
            Status::Signaled { signal: libc::SIGSEGV },
            // The shell reports a child killed by signal N as 128 + N.
            Status::Failed { code: 128 + libc::SIGABRT },
        ]
    );
    assert!(r.outcomes.values().all(|o| !o.lingering));
}

#[test]
fn spawn_failure_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let missing = d.join("no-such-dir");
    let tests = vec![spec("missing", "true", &missing), spec("ok", "true", d)];
    let r = run(&tests, &opts(d));
    match &r.outcomes[&0].status {
        Status::SpawnFailed { message } => assert_eq!(
            message,
            &format!("working directory {} does not exist or is not a directory", missing.display())
        ),
        s => panic!("unexpected status {s:?}"),
    }
    assert_eq!(r.outcomes[&1].status, Status::Passed);
    assert_eq!(r.starts, vec![0, 1]);
}

#[test]
fn uncreatable_trace_root_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    fs::write(&file, "").unwrap();
    let opts = RunOptions::new(file.join("traces"));
    let err = run_tests(&[spec("a", "true", dir.path())], &opts, &|_| {}, &|_| {}).unwrap_err();
    assert!(matches!(&err, ExecError::TraceRoot { path, .. } if *path == file.join("traces")));
}

#[test]
fn timeout_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests = vec![TestSpec {
        timeout: Some(Duration::from_millis(300)),
        ..spec("slow", "sleep 30 & echo $! > grandchild.pid; wait", d)
    }];
    let r = run(&tests, &opts(d));
    let o = &r.outcomes[&0];
    assert_eq!(o.status, Status::TimedOut);
    assert!(o.duration >= Duration::from_millis(300), "{:?}", o.duration);
    assert!(r.elapsed < Duration::from_secs(2), "{:?}", r.elapsed);
    assert!(process_gone(read_pid(&d.join("grandchild.pid"))));
}

#[test]
fn default_timeout_applies_and_sigterm_is_followed_by_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The shell and its child ignore SIGTERM; only SIGKILL ends them.
    let tests = vec![spec("stubborn", "trap '' TERM; sleep 30 & echo $! > grandchild.pid; wait", d)];
    let mut o = opts(d);
    o.default_timeout = Some(Duration::from_millis(200));
    let r = run(&tests, &o);
    let out = &r.outcomes[&0];
    assert_eq!(out.status, Status::TimedOut);
    assert!(r.elapsed >= Duration::from_millis(2200) && r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
    assert!(process_gone(read_pid(&d.join("grandchild.pid"))));
}

#[test]
fn processes_of_a_timed_out_test_get_the_sigterm_grace_after_the_shell_died() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests = vec![
        // The shell dies at once; its child cleans up for 0.5 s on SIGTERM.
        TestSpec {
            timeout: Some(Duration::from_millis(300)),
            ..spec(
                "cleans-up",
                r#"sh -c 'trap "sleep 0.5; echo cleaned > cleaned.txt; exit 0" TERM; while :; do sleep 0.05; done'"#,
                d,
            )
        },
        // The shell dies at once; its child ignores SIGTERM.
        TestSpec {
            timeout: Some(Duration::from_millis(300)),
            ..spec("ignores", "(trap '' TERM; sleep 30) & echo $! > stubborn.pid; wait", d)
        },
    ];
    let mut o = opts(d);
    o.jobs = 2;
    let r = run(&tests, &o);

    let cleans = &r.outcomes[&0];
    assert_eq!(cleans.status, Status::TimedOut);
    assert!(!cleans.lingering);
    assert_eq!(fs::read_to_string(d.join("cleaned.txt")).unwrap(), "cleaned\n");

    let ignores = &r.outcomes[&1];
    assert_eq!(ignores.status, Status::TimedOut);
    assert!(ignores.lingering);
    assert!(ignores.duration < Duration::from_secs(1), "{:?}", ignores.duration);
    assert!(process_gone(read_pid(&d.join("stubborn.pid"))));
    assert!(r.elapsed >= Duration::from_millis(2300) && r.elapsed < Duration::from_secs(4), "{:?}", r.elapsed);
}

#[test]
fn lingering_background_process_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests = vec![spec("bg", "sleep 30 & echo $! > bg.pid", d), spec("fg", "sleep 0.1", d)];
    let r = run(&tests, &opts(d));
    let bg = &r.outcomes[&0];
    assert_eq!(bg.status, Status::Passed);
    assert!(bg.lingering);
    assert!(bg.duration < Duration::from_secs(2), "{:?}", bg.duration);
    assert!(process_gone(read_pid(&d.join("bg.pid"))));
    assert_eq!(r.outcomes[&1].status, Status::Passed);
    assert!(!r.outcomes[&1].lingering);
    assert!(r.elapsed < Duration::from_secs(2), "{:?}", r.elapsed);
}

#[test]
fn process_outside_the_group_holding_the_pipes_counts_as_lingering() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `setsid` puts the sleeper in a new session: the runner cannot kill
    // it, and it keeps stdout open, so the runner gives up after the grace.
    let tests = vec![spec("escaped", "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' & sleep 0.2; echo done", d)];
    let r = run(&tests, &opts(d));
    let o = &r.outcomes[&0];
    assert_eq!(o.status, Status::Passed);
    assert!(o.lingering);
    assert_eq!(o.output_tail, "done\n");
    assert!(r.elapsed < Duration::from_secs(4), "{:?}", r.elapsed);
    let pid = read_pid(&d.join("escaped.pid"));
    // Clean up the escaped process ourselves.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

#[test]
fn stdin_is_dev_null_but_redirection_works() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("input.txt"), "line 1\nline 2\n").unwrap();
    let tests = vec![spec("cat", "cat", d), spec("cat-file", "cat < input.txt", d)];
    let r = run(&tests, &opts(d));
    let cat = &r.outcomes[&0];
    assert_eq!(cat.status, Status::Passed);
    assert_eq!(cat.stdout_hash, hash(b""));
    assert_eq!(cat.output_tail, "");
    assert!(cat.duration < Duration::from_secs(1), "{:?}", cat.duration);
    let file = &r.outcomes[&1];
    assert_eq!(file.status, Status::Passed);
    assert_eq!(file.stdout_hash, hash(b"line 1\nline 2\n"));
    assert_eq!(file.stderr_hash, hash(b""));
    assert_eq!(file.output_tail, "line 1\nline 2\n");
}

#[test]
fn output_hashes_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 11 MB of varied bytes, written by the test and by a file.
    let big: Vec<u8> = (0..11_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    fs::write(d.join("big"), &big).unwrap();
    let mut big2 = big.clone();
    *big2.last_mut().unwrap() ^= 1;
    fs::write(d.join("big2"), &big2).unwrap();
    let tests = vec![
        spec("a", "echo hello; echo oops >&2", d),
        spec("b", "echo hello; echo oops >&2", d),
        spec("c", "echo hello!; echo oops >&2", d),
        spec("big", "cat big; cat big >&2", d),
        spec("big-again", "cat big", d),
        spec("big-differs-at-end", "cat big2", d),
        spec("seq", "seq 1 100000", d),
    ];
    let r = run(&tests, &opts(d));
    let o = &r.outcomes;
    assert_eq!(o[&0].stdout_hash, hash(b"hello\n"));
    assert_eq!(o[&0].stderr_hash, hash(b"oops\n"));
    assert_eq!(o[&0].stdout_hash, o[&1].stdout_hash);
    assert_eq!(o[&0].stderr_hash, o[&1].stderr_hash);
    assert_ne!(o[&0].stdout_hash, o[&2].stdout_hash);
    assert_eq!(o[&0].stderr_hash, o[&2].stderr_hash);

    assert_eq!(o[&3].status, Status::Passed);
    assert_eq!(o[&3].stdout_hash, hash(&big));
    assert_eq!(o[&3].stderr_hash, hash(&big));
    assert_eq!(o[&4].stdout_hash, hash(&big));
    assert_eq!(o[&4].stderr_hash, hash(b""));
    assert_eq!(o[&5].stdout_hash, hash(&big2));
    assert_ne!(o[&5].stdout_hash, o[&4].stdout_hash);
    // The tail is the end of stderr, without a character cut in half.
    let last = &big[big.len() - TAIL_BYTES..];
    let cut = last.iter().take(3).take_while(|&&b| b & 0xC0 == 0x80).count();
    assert_eq!(o[&3].output_tail, String::from_utf8_lossy(&last[cut..]));

    let seq = &o[&6];
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(seq.stdout_hash, hash(expected.as_bytes()));
    assert_eq!(seq.output_tail, expected[expected.len() - TAIL_BYTES..]);
}

#[test]
fn environment_and_trace_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().canonicalize().unwrap();
    let mut o = opts(d);
    o.extra_env = vec![("EXTRA".into(), "e".into()), ("BOTH".into(), "extra".into())];
    // A stale directory with the name of test 0's trace directory.
    fs::create_dir_all(o.trace_root.join("0-first")).unwrap();
    fs::write(o.trace_root.join("0-first/stale.rtt"), "old").unwrap();
    let cmd = r#"printf '%s|%s|%s|%s|' "$OWN" "$EXTRA" "$BOTH" "$RETEST_TRACE_DIR"; test -d "$RETEST_TRACE_DIR" && ls -A "$RETEST_TRACE_DIR" | wc -l | tr -d ' '"#;
    let tests = vec![
        TestSpec { env: vec![("OWN".into(), "mine".into()), ("BOTH".into(), "own".into())], ..spec("first", cmd, d) },
        spec("second test/with:odd*chars", cmd, d),
    ];
    let r = run(&tests, &o);
    let root = d.join("traces");
    let dir0 = root.join("0-first");
    let dir1 = root.join("1-second_test_with_odd_chars");
    assert_eq!(r.outcomes[&0].trace_dir, dir0);
    assert_eq!(r.outcomes[&1].trace_dir, dir1);
    assert_eq!(r.outcomes[&0].output_tail, format!("mine|e|extra|{}|0\n", dir0.display()));
    assert_eq!(r.outcomes[&1].output_tail, format!("|e|extra|{}|0\n", dir1.display()));
    assert!(dir0.is_absolute() && dir0.is_dir() && dir1.is_dir());
}

#[test]
fn relative_trace_root_is_made_absolute() {
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().canonicalize().unwrap();
    // `d/traces` relative to the current directory, through `..`.
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let mut rel = PathBuf::new();
    for _ in cwd.components().skip(1) {
        rel.push("..");
    }
    rel.push(d.strip_prefix("/").unwrap());
    rel.push("traces");
    let r = run(&[spec("t", "printf %s \"$RETEST_TRACE_DIR\"", d)], &RunOptions::new(&rel));
    let expected = d.join("traces/0-t");
    assert_eq!(r.outcomes[&0].trace_dir, expected);
    assert_eq!(r.outcomes[&0].output_tail, expected.display().to_string());
}

#[test]
fn jobs_run_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests: Vec<TestSpec> = (0..4).map(|i| spec(&format!("s{i}"), "sleep 0.5", d)).collect();
    let mut o = opts(d);
    o.jobs = 4;
    let r = run(&tests, &o);
    assert!(r.elapsed < Duration::from_millis(1500), "{:?}", r.elapsed);
    assert!(r.outcomes.values().all(|o| o.status == Status::Passed));
    assert!(r.outcomes.values().all(|o| o.duration >= Duration::from_millis(500)));

    o.jobs = 1;
    let r = run(&tests[..2], &o);
    assert!(r.elapsed >= Duration::from_millis(1000), "{:?}", r.elapsed);
}

#[test]
fn callbacks_once_per_test_in_start_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests: Vec<TestSpec> = (0..60).map(|i| spec(&format!("t{i}"), &format!("echo {i}"), d)).collect();
    let mut o = opts(d);
    o.jobs = 4;
    let r = run(&tests, &o);
    assert_eq!(r.starts, (0..60).collect::<Vec<_>>());
    assert_eq!(r.outcomes.len(), 60);
    for (i, out) in &r.outcomes {
        assert_eq!(out.index, *i);
        assert_eq!(out.output_tail, format!("{i}\n"));
        assert_eq!(out.status, Status::Passed);
    }
}

#[test]
fn stop_flag_ends_a_long_run_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tests: Vec<TestSpec> = (0..20).map(|i| spec(&format!("long{i}"), "sleep 30; echo never", d)).collect();
    let mut o = opts(d);
    o.jobs = 2;
    let stop = o.stop.clone();
    let setter = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::SeqCst);
    });
    let r = run(&tests, &o);
    setter.join().unwrap();
    assert!(r.elapsed < Duration::from_secs(2), "{:?}", r.elapsed);
    assert_eq!(r.starts, vec![0, 1]);
    assert_eq!(r.outcomes.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
    assert!(r.outcomes.values().all(|o| o.status == Status::Stopped));
    assert!(r.outcomes.values().all(|o| o.output_tail.is_empty()));
}

#[test]
fn stop_before_start_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = opts(d);
    o.stop.store(true, Ordering::SeqCst);
    let r = run(&[spec("a", "true", d)], &o);
    assert!(r.starts.is_empty() && r.outcomes.is_empty());
}

// ---------------------------------------------------------------------------
// With the coverage runtime: what the runner does to a test's processes shows
// up in its trace directory as the trace format promises.

/// `main_tu.c` + `util_tu.c` + the runtime, linked once per test run; `None`
/// (with a message) when there is no C compiler.
fn instrumented_prog() -> Option<&'static Path> {
    static PROG: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PROG.get_or_init(|| {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        assert!(
            std::process::Command::new(&cc).arg("--version").output().is_ok(),
            "no C compiler `{cc}`: install gcc or set CC (`.ci/run` installs it)"
        );
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let src = manifest.join("tests/rt-programs");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("retest-exec-tests");
        fs::create_dir_all(&out).unwrap();
        // Built under a private name and renamed, so that concurrent runs of
        // this test binary never execute a half-written file.
        let prog = out.join("prog");
        let tmp = out.join(format!("prog.{}.tmp", std::process::id()));
        let status = std::process::Command::new(&cc)
            .args(["-O1", "-pthread"])
            .arg(src.join("main_tu.c"))
            .arg(src.join("util_tu.c"))
            .arg(manifest.join("../retest-lang-c/runtime/retest_rt.c"))
            .arg("-ldl")
            .arg("-o")
            .arg(&tmp)
            .status()
            .unwrap();
        assert!(status.success(), "compiling the instrumented test program failed");
        fs::rename(&tmp, &prog).unwrap();
        Some(prog)
    })
    .as_deref()
}

#[test]
fn traces_of_finished_timed_out_and_lingering_tests() {
    use retest_run::trace::{self, TraceFlags};

    let Some(prog) = instrumented_prog() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = discover_quote(prog);
    let tests = vec![
        spec("returns", &format!("{p} return"), d),
        TestSpec { timeout: Some(Duration::from_millis(500)), ..spec("hangs", &format!("{p} sleep"), d) },
        spec("leaves-a-process", &format!("{p} sleep & sleep 0.3"), d),
    ];
    let r = run(&tests, &opts(d));

    let ok = &r.outcomes[&0];
    assert_eq!(ok.status, Status::Passed);
    let td = trace::read_dir(&ok.trace_dir).unwrap();
    assert!(td.is_complete() && td.traces.len() == 1, "{td:?}");
    assert!(td.traces[0].trace.flags.contains(TraceFlags::EXIT));

    // SIGTERM on timeout: the runtime writes its trace before dying.
    let hung = &r.outcomes[&1];
    assert_eq!(hung.status, Status::TimedOut);
    assert_eq!(hung.output_tail, "ready\n");
    let td = trace::read_dir(&hung.trace_dir).unwrap();
    assert!(td.is_complete() && td.traces.len() == 1, "{td:?}");
    assert_eq!(td.traces[0].trace.flags.signal(), Some(libc::SIGTERM as u8));

    // SIGKILL of a lingering process: its marker stays, coverage unknown.
    let lingering = &r.outcomes[&2];
    assert_eq!(lingering.status, Status::Passed);
    assert!(lingering.lingering);
    let td = trace::read_dir(&lingering.trace_dir).unwrap();
    assert!(!td.is_complete());
    assert_eq!(td.live.len(), 1, "{td:?}");
}

fn discover_quote(path: &Path) -> String {
    retest_run::discover::shell_quote(path.to_str().unwrap())
}

/// A command that is one program with plain words runs without the shell,
/// and nothing a test can see tells: its `$0` and arguments, `PWD` (also
/// through a symbolic link), and when the program is missing, not
/// executable or not a program, the shell's own message and status. The
/// oracle is `/bin/sh -c` itself.
#[test]
fn one_program_runs_as_the_shell_would_run_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("real");
    fs::create_dir(&d).unwrap();
    std::os::unix::fs::symlink(&d, dir.path().join("link")).unwrap();
    let script = |name: &str, text: &str, mode: u32| {
        fs::write(d.join(name), text).unwrap();
        fs::set_permissions(d.join(name), fs::Permissions::from_mode(mode)).unwrap();
    };
    script("show.sh", "#!/bin/sh\nprintf '%s|' \"$0\" \"$@\"\nprintf 'PWD=%s\\n' \"$PWD\"\n", 0o755);
    script("noshebang", "echo \"no #! line: $0\"\n", 0o755);
    script("noexec", "#!/bin/sh\necho never\n", 0o644);
    let cases = [
        ("./show.sh a 'b c' \"d'e\" f\\ g", d.clone()),
        ("./show.sh", dir.path().join("link")),
        ("../real/show.sh x", d.clone()),
        ("./missing", d.clone()),
        ("./noexec", d.clone()),
        ("./noshebang 1", d.clone()),
        ("./show.sh $HOME", d.clone()),
    ];
    let tests: Vec<TestSpec> =
        cases.iter().enumerate().map(|(i, (cmd, cwd))| spec(&format!("t{i}"), cmd, cwd)).collect();
    let r = run(&tests, &opts(dir.path()));
    for (i, (cmd, cwd)) in cases.iter().enumerate() {
        let sh = std::process::Command::new("/bin/sh").arg("-c").arg(cmd).current_dir(cwd).output().unwrap();
        let o = &r.outcomes[&i];
        let expected = match sh.status.code() {
            Some(0) => Status::Passed,
            Some(code) => Status::Failed { code },
            None => panic!("{cmd}: {:?}", sh.status),
        };
        assert_eq!(o.status, expected, "{cmd}");
        assert_eq!(o.stdout_hash, hash(&sh.stdout), "{cmd}: {}", String::from_utf8_lossy(&sh.stdout));
        assert_eq!(o.stderr_hash, hash(&sh.stderr), "{cmd}: {}", String::from_utf8_lossy(&sh.stderr));
    }
    assert_eq!(r.outcomes[&3].status, Status::Failed { code: 127 });
    assert_eq!(r.outcomes[&4].status, Status::Failed { code: 126 });
    assert_eq!(r.outcomes[&5].status, Status::Passed);
}

/// With the file tracker loaded, a plain command's first process is the
/// program itself: no shell is started, so none is among what the test
/// read. A command with a redirection still runs in the shell.
#[test]
fn a_plain_command_starts_no_shell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("in.txt"), "x\n").unwrap();
    let lib = retest_run::deps::build_preload(&crate::cc(), &d.join("lib")).expect("the tracker builds");
    let mut o = opts(d);
    o.preload = Some(lib);
    let tests = vec![spec("plain", "/bin/cat in.txt", d), spec("shell", "/bin/cat < in.txt", d)];
    let r = run(&tests, &o);
    let shells = |i: usize| {
        let seen = retest_run::deps::read_dir(&r.outcomes[&i].trace_dir).unwrap();
        assert!(seen.root_seen, "{i}");
        let sh = fs::canonicalize("/bin/sh").unwrap();
        seen.read.iter().any(|p| fs::canonicalize(p).is_ok_and(|p| p == sh))
    };
    assert_eq!(r.outcomes[&0].status, Status::Passed);
    assert!(!shells(0), "a plain command runs without the shell");
    assert!(shells(1), "a redirection is the shell's");
}
