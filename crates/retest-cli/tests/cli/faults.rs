//! Fault tests: coverage survives crashes, forks and execs of the tests; what
//! cannot be recorded is marked *coverage unknown* with a reason; a `retest run`
//! killed at any point leaves a consistent store holding every finished test.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

const FAULTY: &str = r#"#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int work(int n)
{
    int s = 0, i;
    for (i = 0; i < n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "ok";
    work(3);
    if (strcmp(m, "ok") == 0)
        return 0;
    if (strcmp(m, "segv") == 0) {
        volatile int *p = 0;
        *p = 1;
    }
    if (strcmp(m, "abort") == 0)
        abort();
    if (strcmp(m, "uexit") == 0)
        _exit(0);
    if (strcmp(m, "fork") == 0) {
        pid_t p = fork();
        if (p == 0) {
            work(5);
            return 0;
        }
        waitpid(p, 0, 0);
        return 0;
    }
    if (strcmp(m, "exec") == 0)
        execl(argv[0], argv[0], "ok", (char *)0);
    if (strcmp(m, "kill9") == 0)
        raise(SIGKILL);
    if (strcmp(m, "slow") == 0) {
        usleep(150000);
        return 0;
    }
    return 1;
}
"#;

fn project(slow: usize) -> tempfile::TempDir {
    project_with(slow, &[], &[])
}

/// The fault project, built with `retest build FLAGS -- make`, with the usual
/// tests, `slow` slow ones and `extra` (name, command) more.
fn project_with(slow: usize, flags: &[&str], extra: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("faulty.c"), FAULTY).unwrap();
    std::fs::write(d.path().join("Makefile"), "faulty: faulty.c\n\t$(CC) -O0 -g -o faulty faulty.c\n").unwrap();
    let mut toml = String::new();
    for (name, cmd) in [
        ("ok", "./faulty ok"),
        ("segv", "./faulty segv"),
        ("abort", "./faulty abort"),
        ("uexit", "./faulty uexit"),
        ("fork", "./faulty fork"),
        ("exec", "./faulty exec"),
        ("kill9", "./faulty kill9"),
        ("corrupt", "./faulty ok && for f in \"$RETEST_TRACE_DIR\"/*.rtt; do printf garbage >> \"$f\"; done"),
    ]
    .into_iter()
    .chain(extra.iter().copied())
    {
        toml.push_str(&format!("[[test]]\nname = \"{name}\"\ncmd = '{cmd}'\n\n"));
    }
    // a slow test leaves a marker when its process has ended
    std::fs::create_dir(d.path().join("done")).unwrap();
    for i in 0..slow {
        toml.push_str(&format!(
            "[[test]]\nname = \"slow{i:02}\"\ncmd = './faulty slow && echo \"$RETEST_TRACE_DIR\" > done/slow{i:02}'\n\n"
        ));
    }
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    let mut args = vec!["build"];
    args.extend(flags);
    args.extend(["--", "make", "-s"]);
    retest(d.path(), &args, 0);
    d
}

fn sql(dir: &Path, q: &str) -> String {
    // a run may hold the write lock while this reads: wait for it, as retest does
    let o = Command::new("sqlite3")
        .args(["-cmd", ".timeout 10000"])
        .arg(dir.join(".retest/store.db"))
        .arg(q)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// (state, reason) of a test in the newest matrix.
fn state(dir: &Path, test: &str) -> (String, String) {
    let r = sql(
        dir,
        &format!(
            "SELECT m.state || '|' || coalesce(m.reason, '') FROM matrix_tests m JOIN tests t ON t.id = m.test \
             WHERE t.name = '{test}' ORDER BY m.snapshot DESC LIMIT 1"
        ),
    );
    let (a, b) = r.split_once('|').unwrap_or((&r, ""));
    (a.to_string(), b.to_string())
}

/// Branch outcomes taken on `line` of faulty.c, by all tests in `tests`.
fn branches(dir: &Path, tests: &str, line: u32) -> Vec<(String, u64)> {
    let v = json(&retest(dir, &["coverage", "--format", "json", "--tests", tests], 0));
    let f = v["files"].as_array().unwrap().iter().find(|f| f["path"] == "faulty.c").unwrap().clone();
    f["branch_outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b[0].as_u64() == Some(line as u64))
        .map(|b| (b[2].as_str().unwrap().to_string(), b[3].as_u64().unwrap()))
        .collect()
}

#[test]
fn crashing_forking_and_execing_tests_keep_their_coverage() {
    let d = project(0);
    check_faults(&d);
}

/// The same with MC/DC evaluations and Ball–Larus paths recorded too: the
/// runtime flushes those on the same occasions.
#[test]
fn crashing_forking_and_execing_tests_keep_their_coverage_with_mcdc_and_paths() {
    let d = project_with(0, &["--mcdc", "--paths"], &[]);
    check_faults(&d);
    for t in ["ok", "segv", "abort", "uexit", "fork", "exec"] {
        let n = sql(
            d.path(),
            &format!(
                "SELECT count(*) FROM recordings r JOIN tests t ON t.id = r.test WHERE t.name = '{t}' \
                 AND r.snapshot = (SELECT max(snapshot) FROM matrix_tests)"
            ),
        );
        assert_eq!(n, "1", "{t}: its evaluations and paths are stored");
    }
}

fn check_faults(d: &tempfile::TempDir) {
    // segv, abort and kill9 fail (exit code 1 from retest run)
    let o = retest(d.path(), &["run", "-j2"], 1);
    let err = stderr(&o);
    for t in ["ok", "segv", "abort", "uexit", "fork", "exec"] {
        assert_eq!(state(d.path(), t).0, "ok", "{t} keeps its coverage\n{err}");
    }
    // the forked child's branch (p == 0 true) comes from the child's own trace
    assert!(branches(d.path(), "fork", 31).contains(&("T".to_string(), 1)), "{:?}", branches(d.path(), "fork", 31));
    // the exec'd image ran main again with "ok": that branch is covered by `exec`
    assert!(branches(d.path(), "exec", 19).contains(&("T".to_string(), 1)));
    // the crash happened after work(3): its loop ran
    assert!(branches(d.path(), "segv", 10).iter().any(|(l, n)| l == "T" && *n == 1));
    // SIGKILL gives no chance to write: coverage unknown, with the reason
    let (s, why) = state(d.path(), "kill9");
    assert_eq!(s, "unknown");
    assert!(why.contains("ended without writing its coverage"), "{why}");
    assert!(err.contains("coverage unknown for kill9"), "{err}");
    // a corrupt trace is reported, not trusted
    let (s, why) = state(d.path(), "corrupt");
    assert_eq!(s, "unknown");
    assert!(why.contains("trace file is unusable"), "{why}");
}

/// Trace files damaged after the test wrote them — garbage appended, cut in
/// half, one byte changed, replaced by text — each make the test *coverage unknown*,
/// with a warning that names the test, the file and what is wrong with it.
#[test]
fn damaged_trace_files_give_a_clear_warning() {
    let each = |action: &str| format!("./faulty ok && for f in \"$RETEST_TRACE_DIR\"/*.rtt; do {action}; done");
    let appended = each("printf garbage >> \"$f\"");
    let halved = each("n=$(wc -c < \"$f\"); truncate -s $((n / 2)) \"$f\"");
    let flipped = each("printf \"\\125\\252\" | dd of=\"$f\" bs=1 seek=20 conv=notrunc 2>/dev/null");
    let foreign = each("echo not a trace > \"$f\"");
    let d = project_with(
        0,
        &[],
        &[("appended", &appended), ("halved", &halved), ("flipped", &flipped), ("foreign", &foreign)],
    );
    let o = retest(d.path(), &["run", "-j2", "--filter", "ok"], 0);
    assert!(stderr(&o).is_empty(), "an intact trace gives no warning: {}", stderr(&o));
    for (t, what) in [
        ("appended", "trace has no valid trailer"),
        ("halved", "trace truncated at byte"),
        ("flipped", "trace checksum mismatch"),
        ("foreign", "not a retest trace file"),
    ] {
        // each alone: the run's exit status is that of the test (it passed)
        let o = retest(d.path(), &["run", "-j2", "--filter", t], 0);
        let err = stderr(&o);
        let warning =
            err.lines().find(|l| l.starts_with(&format!("coverage unknown for {t}: "))).unwrap_or_else(|| {
                panic!("{t}: no warning on stderr:\n{err}");
            });
        assert!(warning.contains(what), "{t}: {warning}");
        assert!(warning.contains("it will always be selected"), "{t}: {warning}");
        assert!(warning.contains("a trace file is unusable: /") && warning.contains(".rtt"), "{t}: {warning}");
        assert!(stdout(&o).contains("1 with unknown coverage"), "{t}: {}", stdout(&o));
        let (s, why) = state(d.path(), t);
        assert_eq!(s, "unknown", "{t}");
        assert!(why.contains(what), "{t}: {why}");
    }
}

/// A process of a test that lost `RETEST_TRACE_DIR` (`env -i`, `env -u`, a
/// harness that builds the environment from scratch) runs the program but
/// records nothing. Without the runtime's report the test would look like one
/// that ran no instrumented code, and no change could select it; with it the
/// coverage is unknown and the warning says which process and why. The same
/// for a test that deletes the traces its processes wrote.
#[test]
fn a_test_whose_process_lost_the_trace_variable_has_unknown_coverage() {
    let d = project_with(
        0,
        &[],
        &[
            ("lost-cleared", "env -i ./faulty ok"),
            ("lost-unset", "env -u RETEST_TRACE_DIR ./faulty fork"),
            ("lost-kept", "./faulty ok"),
            ("lost-unwritable", "RETEST_TRACE_DIR=/nonexistent/traces ./faulty ok"),
            ("lost-deleted", "./faulty fork && rm -f \"$RETEST_TRACE_DIR\"/*.rtt"),
            (
                "lost-one-deleted",
                "./faulty ok && ./faulty ok && rm -f \"$(ls \"$RETEST_TRACE_DIR\"/*.rtt | head -n 1)\"",
            ),
            // last: a report from outside every group is charged to the tests
            // running at the time (or starting within 50 ms after it)
            ("lost-setsid", "setsid env -i ./faulty ok"),
        ],
    );
    // one at a time, so only the test that ran is charged with the report from
    // outside its group
    let o = retest(d.path(), &["run", "-j1", "--filter", "lost-*"], 0);
    let err = stderr(&o);
    for (t, cmd) in [("lost-cleared", "./faulty ok"), ("lost-unset", "./faulty fork")] {
        let (s, why) = state(d.path(), t);
        assert_eq!(s, "unknown", "{t}: {err}");
        assert!(
            why.contains("ran instrumented code without a usable RETEST_TRACE_DIR") && why.contains(cmd),
            "{t}: {why}"
        );
        assert!(err.contains(&format!("coverage unknown for {t}: a process of the test (pid ")), "{err}");
    }
    let (s, why) = state(d.path(), "lost-kept");
    assert_eq!(s, "ok", "lost-kept: {why}\n{err}");
    // the process left the test's group (setsid): charged to the test that ran
    let (s, why) = state(d.path(), "lost-setsid");
    assert_eq!(s, "unknown", "{err}");
    assert!(why.contains("a process outside the test's process group") && why.contains("./faulty ok"), "{why}");
    // a directory the process cannot write: the runtime says so on stderr and reports
    let (s, why) = state(d.path(), "lost-unwritable");
    assert_eq!(s, "unknown", "{err}");
    assert!(why.contains("a process of the test (pid ") && why.contains("./faulty ok"), "{why}");
    // traces the test itself deleted, all or one of two
    for t in ["lost-deleted", "lost-one-deleted"] {
        let (s, why) = state(d.path(), t);
        assert_eq!(s, "unknown", "{t}: {err}");
        assert!(why.contains("is missing from its trace directory"), "{t}: {why}");
    }
    assert!(stdout(&o).contains("6 with unknown coverage"), "{}", stdout(&o));
    assert!(!err.contains("outside every test's process group"), "{err}");
    // the report directory lives only as long as the run: the program run by
    // hand afterwards leaves nothing behind
    let reports = d.path().join(".retest").join("unrecorded");
    assert!(!reports.exists());
    let st = Command::new(d.path().join("faulty")).env_remove("RETEST_TRACE_DIR").status().unwrap();
    assert!(st.success());
    assert!(!reports.exists());
}

/// Trace directories live in RAM (`/dev/shm`) when it is a tmpfs, else under
/// the store, or where `RETEST_TRACE_ROOT` says; private to the run, and gone
/// when it ends. A test whose processes cannot write there (a trace root that
/// vanished under it) has unknown coverage, never empty.
#[test]
fn trace_directories_live_in_ram_or_where_the_user_says_and_go_with_the_run() {
    let d = project_with(
        0,
        &[],
        &[
            ("where", "./faulty ok && printf %s \"$RETEST_TRACE_DIR\" > where.txt"),
            ("vanished", "rm -rf \"$RETEST_TRACE_DIR\" && ./faulty ok"),
        ],
    );
    retest(d.path(), &["run", "--filter", "where"], 0);
    assert_eq!(state(d.path(), "where").0, "ok");
    let dir = std::fs::read_to_string(d.path().join("where.txt")).unwrap();
    let shm_is_tmpfs = std::fs::read_to_string("/proc/self/mounts")
        .map(|m| m.lines().any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.split(' ').nth(2) == Some("tmpfs")))
        .unwrap_or(false);
    let store = std::fs::canonicalize(d.path().join(".retest")).unwrap();
    if shm_is_tmpfs {
        assert!(dir.starts_with("/dev/shm/retest-run-"), "{dir}");
    } else {
        assert!(dir.starts_with(&store.join("tmp").join("retest-run-").display().to_string()), "{dir}");
    }
    let root = Path::new(&dir).parent().unwrap();
    assert!(!root.exists(), "{dir}: removed after the run");
    // a place of the user's choosing
    let mine = tempfile::tempdir().unwrap();
    let mine_path = std::fs::canonicalize(mine.path()).unwrap();
    let o = Command::new(retest_bin())
        .args(["run", "--filter", "where"])
        .current_dir(d.path())
        .env("CI", "1")
        .env("RETEST_TRACE_ROOT", mine.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_to_string(d.path().join("where.txt")).unwrap();
    assert!(dir.starts_with(&mine_path.join("retest-run-").display().to_string()), "{dir}");
    assert_eq!(std::fs::read_dir(mine.path()).unwrap().count(), 0, "nothing left behind");
    // one the user cannot have: one clear line, nothing run
    let o = Command::new(retest_bin())
        .args(["run", "--filter", "where"])
        .current_dir(d.path())
        .env("CI", "1")
        .env("RETEST_TRACE_ROOT", "/proc/version/traces")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot create a trace directory in /proc/version/traces") && err.contains("RETEST_TRACE_ROOT"),
        "{err}"
    );
    // the test's trace directory vanished before its process started
    retest(d.path(), &["run", "--filter", "vanished"], 0);
    let (s, why) = state(d.path(), "vanished");
    assert_eq!(s, "unknown");
    assert!(why.contains("without a usable RETEST_TRACE_DIR"), "{why}");
}

/// `retest run` of the slow tests, quiet, in the background.
fn spawn_slow_run(dir: &Path) -> std::process::Child {
    Command::new(retest_bin())
        .args(["run", "-j2", "--filter", "slow*"])
        .current_dir(dir)
        .env("CI", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Kills `retest run` (SIGKILL, or SIGINT as Ctrl-C sends it) at random points,
/// over and over on one store: after each kill the store opens cleanly, nothing
/// is half-written, and every test whose process had ended well before the kill
/// (its marker is 3 s older than the kill) is recorded with its coverage.
#[test]
fn a_run_killed_at_random_points_keeps_every_finished_test() {
    let d = project(80);
    let mut rng = common::Rng::from_env();
    let seed = rng.0;
    let mut checked_finished = 0;
    for i in 0..8 {
        for e in std::fs::read_dir(d.path().join("done")).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        let sigint = i % 4 == 3;
        // the last kill comes late enough that some tests are sure to have ended
        let delay = Duration::from_millis(if i == 7 { 4500 + rng.below(1500) } else { 100 + rng.below(6000) });
        let started = std::time::SystemTime::now();
        let mut child = spawn_slow_run(d.path());
        std::thread::sleep(delay);
        let killed_at = std::time::SystemTime::now();
        let st = Command::new("kill")
            .args([if sigint { "-INT" } else { "-KILL" }, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        let ctx = format!("seed {seed}, kill {i} ({}) after {delay:?}", if sigint { "SIGINT" } else { "SIGKILL" });
        if sigint {
            // Ctrl-C: the run stops, says so and fails (unless it had finished)
            assert!(status.code().is_some(), "{ctx}: retest must handle SIGINT, got {status}");
        }
        // the store opens cleanly (retest itself reads it) and is consistent
        assert_eq!(sql(d.path(), "PRAGMA integrity_check"), "ok", "{ctx}");
        retest(d.path(), &["run", "--list"], 0);
        let run = sql(d.path(), "SELECT max(id) FROM runs");
        let count = |q: &str| -> u64 { sql(d.path(), q).parse().unwrap() };
        let results = count(&format!("SELECT count(*) FROM results WHERE run = {run}"));
        let in_matrix = count(&format!("SELECT count(*) FROM matrix_tests WHERE run = {run}"));
        assert_eq!(results, in_matrix, "{ctx}: every recorded result is in the matrix, nothing half-written");
        let missing = count(&format!(
            "SELECT count(*) FROM matrix_tests m WHERE m.run = {run} AND m.state = 'ok' AND NOT EXISTS \
             (SELECT 1 FROM coverage c WHERE c.snapshot = m.snapshot AND c.test = m.test)"
        ));
        assert_eq!(missing, 0, "{ctx}: known coverage without coverage rows");
        // tests whose process ended a second before the kill are recorded, with coverage
        let recorded: Vec<String> = sql(
            d.path(),
            &format!(
                "SELECT t.name FROM matrix_tests m JOIN tests t ON t.id = m.test \
                 WHERE m.run = {run} AND m.state = 'ok'"
            ),
        )
        .lines()
        .map(str::to_string)
        .collect();
        for e in std::fs::read_dir(d.path().join("done")).unwrap() {
            let e = e.unwrap();
            let ended = e.metadata().unwrap().modified().unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            // (a test of an earlier killed run may still have been running: the
            // marker names the run's trace directory, `…/retest-run-<ns>-<pid of retest>-…/…`)
            let marker = std::fs::read_to_string(e.path()).unwrap_or_default();
            let this_run = ended.duration_since(started).is_ok()
                && marker.contains("/retest-run-")
                && marker.contains(&format!("-{}-", child.id()));
            // (3 s: the machine running the tests may be loaded)
            if this_run && killed_at.duration_since(ended).is_ok_and(|age| age >= Duration::from_secs(3)) {
                checked_finished += 1;
                assert!(recorded.contains(&name), "{ctx}: {name} ended 3 s before the kill but is not recorded");
            }
        }
        let finished = sql(d.path(), &format!("SELECT coalesce(finished, '') FROM runs WHERE id = {run}"));
        if !sigint && in_matrix < 80 {
            assert!(finished.is_empty(), "{ctx}: a killed run is not marked finished");
        }
    }
    assert!(checked_finished > 0, "seed {seed}: no kill came late enough to check finished tests");
    // and the store keeps working: a full run completes
    retest(d.path(), &["run", "-j2", "--filter", "slow*"], 0);
}

#[test]
fn a_killed_run_leaves_a_consistent_store_with_every_finished_test() {
    let d = project(30);
    for (i, delay_ms) in [150u64, 420, 700, 990, 1300].into_iter().enumerate() {
        let mut child = spawn_slow_run(d.path());
        std::thread::sleep(Duration::from_millis(delay_ms));
        unsafe_kill(child.id());
        let _ = child.wait();
        assert_eq!(sql(d.path(), "PRAGMA integrity_check"), "ok", "kill {i} after {delay_ms} ms");
        let run = sql(d.path(), "SELECT max(id) FROM runs");
        let results: u64 = sql(d.path(), &format!("SELECT count(*) FROM results WHERE run = {run}")).parse().unwrap();
        let in_matrix: u64 =
            sql(d.path(), &format!("SELECT count(*) FROM matrix_tests WHERE run = {run}")).parse().unwrap();
        assert_eq!(results, in_matrix, "every recorded result is in the matrix, nothing half-written");
        // every test recorded with known coverage has its coverage rows
        let missing: u64 = sql(
            d.path(),
            &format!(
                "SELECT count(*) FROM matrix_tests m WHERE m.run = {run} AND m.state = 'ok' AND NOT EXISTS \
                 (SELECT 1 FROM coverage c WHERE c.snapshot = m.snapshot AND c.test = m.test)"
            ),
        )
        .parse()
        .unwrap();
        assert_eq!(missing, 0);
        assert!(
            sql(d.path(), &format!("SELECT finished FROM runs WHERE id = {run}")).is_empty(),
            "killed runs are unfinished"
        );
    }
    // and the store keeps working: a full run completes and sets the baseline
    retest(d.path(), &["run", "-j2", "--filter", "slow*"], 0);
    let done: u64 = sql(d.path(), "SELECT count(*) FROM matrix_tests WHERE state = 'ok'").parse().unwrap();
    assert!(done >= 30);
}

fn unsafe_kill(pid: u32) {
    // SIGKILL: no cleanup at all
    let st = Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(st.success());
}

/// A project of one C file, `NAME.c`, built into `NAME` (`-O0 -g CFLAGS`)
/// through the wrapper, with the tests (name, command) in retest.toml.
fn one_file_project(name: &str, src: &str, cflags: &str, tests: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    std::fs::write(dir.join("Makefile"), format!("{name}: {name}.c\n\t$(CC) -O0 -g {cflags} -o {name} {name}.c\n"))
        .unwrap();
    let toml: String = tests.iter().map(|(t, cmd)| format!("[[test]]\nname = \"{t}\"\ncmd = '{cmd}'\n\n")).collect();
    std::fs::write(dir.join("retest.toml"), toml).unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    d
}

/// Writes `text` into `file` (newer than the build, so `make` rebuilds),
/// rebuilds with `retest build` and returns the names `retest select` selects,
/// sorted.
fn selected_after_edit(dir: &Path, file: &str, text: &str) -> Vec<String> {
    write_newer(&dir.join(file), text);
    retest(dir, &["build", "--", "make", "-s"], 0);
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let mut names: Vec<String> =
        v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    names.sort();
    names
}

/// (line, hit count) of `file` for one test.
fn covered_lines(dir: &Path, test: &str, file: &str) -> Vec<(u64, u64)> {
    let v = json(&retest(dir, &["coverage", "--format", "json", "--tests", test], 0));
    let f = v["files"].as_array().unwrap().iter().find(|f| f["path"] == file).unwrap().clone();
    f["lines"].as_array().unwrap().iter().map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap())).collect()
}

/// Code stopped part-way through a statement — a fault inside a condition, or
/// a thread still running when `exit` ends the process — never showed the
/// start that the edges before it are derived from. The test still covers
/// them, and a change there selects it.
const STOPPED: &str = r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int in_slow;

static long slow(long n)
{
    long s = 0, i;
    in_slow = 1;
    for (i = 0; i < n; i++)
        s += i;
    return s;
}

static void *grind(void *arg)
{
    long y = 1;
    if (slow(20000000000L) > y)
        y = 2;
    return arg;
}

static int second(int *p)
{
    int z = 3;
    if (*p > z)
        z = 4;
    return z;
}

/* no cell of first or second is set before the fault in second */
static int first(int *p)
{
    int y = 1;
    if (second(p) > 0)
        y = 2;
    return y;
}

/* named by code that does not run, and its address never taken */
static int quiet(void)
{
    int q = 5;
    if (q > 3)
        q = 1;
    return q;
}

static int (*volatile call_first)(int *) = first;

int main(int argc, char **argv)
{
    pthread_t t;
    (void)argv;
    if (argc == 2) {
        /* the worker is inside grind's condition when exit ends it */
        pthread_create(&t, 0, grind, 0);
        while (!in_slow)
            usleep(1000);
        exit(0);
    }
    if (argc > 9) {
        printf("%d %d\n", quiet(), first(&argc));
        return 1;
    }
    /* first is entered only through the pointer */
    return call_first(argc > 2 ? &argc : NULL);
}
"#;

#[test]
fn code_stopped_part_way_keeps_the_edges_that_led_to_it() {
    let d = one_file_project(
        "stopped",
        STOPPED,
        "-pthread",
        &[("fault", "./stopped"), ("thread", "./stopped t"), ("fine", "./stopped a b")],
    );
    let dir = d.path();
    retest(dir, &["run", "-j2"], 1); // `fault` crashes
    let lines = |test: &str| covered_lines(dir, test, "stopped.c");
    let line_of = |text: &str| STOPPED.lines().position(|l| l.contains(text)).unwrap() as u64 + 1;
    for (test, ran) in [("fault", "int y = 1;"), ("fault", "int z = 3;"), ("thread", "long y = 1;")] {
        assert_eq!(state(dir, test).0, "ok", "{test} keeps its coverage");
        let (hit, line) = (lines(test), line_of(ran));
        assert!(hit.contains(&(line, 1)), "{test}: line {line} ran before the stop: {hit:?}");
    }
    // the call through a pointer enters procedures whose address is taken, not
    // every procedure: quiet may not have been running
    let (hit, line) = (lines("fault"), line_of("int q = 5;"));
    assert!(hit.contains(&(line, 0)), "fault: line {line} never ran: {hit:?}");
    // change both conditions: the tests that stopped inside them are selected
    let src = STOPPED.replace("if (*p > z)", "if (p && *p > z)").replace("> y)", ">= y)");
    let selected = selected_after_edit(dir, "stopped.c", &src);
    for t in ["fault", "thread"] {
        assert!(selected.iter().any(|s| s == t), "{t} is selected: {selected:?}");
    }
}

/// A harness that survives a crashing test in the same process: its SIGSEGV
/// handler jumps back (cmocka does this), and the process ends normally. The
/// runtime notes the program's handler (here installed through `signal`,
/// which strict C99 turns into `__sysv_signal`), and the test keeps the edges
/// that led to the fault.
const HARNESS: &str = r#"#include <setjmp.h>
#include <signal.h>

static sigjmp_buf env;

static void on_segv(int s)
{
    (void)s;
    siglongjmp(env, 1);
}

static int risky(int *p)
{
    int y = 1;
    if (*p > 0)
        y = 2;
    return y;
}

int main(int argc, char **argv)
{
    (void)argv;
    signal(SIGSEGV, on_segv);
    if (sigsetjmp(env, 1) == 0)
        return risky(argc > 5 ? &argc : 0) > 5;
    signal(SIGSEGV, SIG_DFL); /* the harness restores the default */
    return 1;
}
"#;

#[test]
fn a_harness_that_survives_a_crash_keeps_the_edges_that_led_to_it() {
    let d = one_file_project("harness", HARNESS, "-std=c99 -D_POSIX_C_SOURCE=200809L", &[("caught", "./harness")]);
    let dir = d.path();
    retest(dir, &["run"], 1); // the harness reports the crash as a failure
    assert_eq!(state(dir, "caught").0, "ok");
    let hit = covered_lines(dir, "caught", "harness.c");
    let line = HARNESS.lines().position(|l| l.contains("int y = 1;")).unwrap() as u64 + 1;
    assert!(hit.contains(&(line, 1)), "line {line} ran before the fault: {hit:?}");
    let selected = selected_after_edit(dir, "harness.c", &HARNESS.replace("if (*p > 0)", "if (p && *p > 0)"));
    assert_eq!(selected, ["caught"]);
}

/// Built with `-O2`, `retest cc` pairs `s[0] == 'a'`'s `F` edge with the
/// outcome of the condition it leads to: the edge is noted in a flag, and the
/// outcome records both. A fault inside that condition comes before its
/// outcome, so the note is lost with the process; the test still covers the
/// edge that led into the fault, and a change to the condition selects it.
const PAIRED: &str = r#"#include <stdlib.h>

int *volatile gp;

static int classify(const char *s, const int *p)
{
    int r = 0;
    if (s[0] == 'a' && s[1] == 'b')
        r = 1;
    else if (*p > 0)
        r = 2;
    return r;
}

int main(int argc, char **argv)
{
    int v = 1;
    gp = argc > 2 ? &v : NULL;
    return classify(argv[1], gp) == 2 ? 0 : 1;
}
"#;

#[test]
fn a_fault_inside_a_paired_condition_keeps_the_edge_that_led_to_it() {
    let d = one_file_project("paired", PAIRED, "-O2", &[("fault", "./paired x"), ("fine", "./paired x y")]);
    let dir = d.path();
    retest(dir, &["run"], 1); // `fault` crashes
    let line_of = |text: &str| PAIRED.lines().position(|l| l.contains(text)).unwrap() as u64 + 1;
    for test in ["fault", "fine"] {
        assert_eq!(state(dir, test).0, "ok", "{test} keeps its coverage");
        let hit = covered_lines(dir, test, "paired.c");
        assert!(hit.contains(&(line_of("if (s[0] == 'a'"), 1)), "{test}: {hit:?}");
    }
    // the `F` outcome of `s[0] == 'a'`, noted when the fault came
    let lcov = String::from_utf8(retest(dir, &["coverage", "--format", "lcov", "--tests", "fault"], 0).stdout).unwrap();
    let f_of_a = format!("BRDA:{},0,1,1", line_of("if (s[0] == 'a'"));
    assert!(lcov.lines().any(|l| l == f_of_a), "fault: {f_of_a} in\n{lcov}");
    let hit = covered_lines(dir, "fault", "paired.c");
    assert!(hit.contains(&(line_of("return r;"), 0)), "fault: nothing after the fault ran: {hit:?}");
    let selected = selected_after_edit(dir, "paired.c", &PAIRED.replace("(*p > 0)", "(p && *p > 0)"));
    assert_eq!(selected, ["fault", "fine"]);
}

/// Built with `-O2`, a loop that touches only memory the compiler can tell
/// apart from the probe cells (here a static `int` array): GCC 12 moved the
/// loop's cell stores out of the loop, behind flags in registers, so a fault
/// in the loop's 41st round left none of its cells set and the test covered
/// nothing of the loop. Probe stores are volatile: each lands where the probe
/// stands, so every edge taken before the fault is in the trace.
const LOOP_FAULT: &str = r#"#include <stdio.h>

static int d[64];
static int hits;

int main(int argc, char **argv)
{
    int i, acc = 0;
    (void)argv;
    for (i = 0; i < 64; i++)
        d[i] = i == 40 ? 0 : i + 1;
    for (i = 0; i < 64; i++) {
        if (d[i] > 20)
            acc += 1000 / d[i];
        else
            hits++;
        acc += 7 / (d[i] + (argc > 2));
    }
    printf("%d %d\n", acc, hits);
    return 0;
}
"#;

#[test]
fn a_fault_inside_an_optimised_loop_keeps_the_edges_the_loop_took() {
    let d = one_file_project("loop", LOOP_FAULT, "-O2", &[("fault", "./loop"), ("fine", "./loop a b")]);
    let dir = d.path();
    retest(dir, &["run"], 1); // `fault` divides by zero in round 41
    let line_of = |text: &str| LOOP_FAULT.lines().position(|l| l.contains(text)).unwrap() as u64 + 1;
    for test in ["fault", "fine"] {
        assert_eq!(state(dir, test).0, "ok", "{test} keeps its coverage");
        let hit = covered_lines(dir, test, "loop.c");
        for ran in ["acc += 1000 / d[i];", "hits++;", "acc += 7 /"] {
            assert!(hit.contains(&(line_of(ran), 1)), "{test}: `{ran}` ran: {hit:?}");
        }
    }
    let hit = covered_lines(dir, "fault", "loop.c");
    assert!(hit.contains(&(line_of("printf("), 0)), "fault: nothing after the loop ran: {hit:?}");
    let selected = selected_after_edit(dir, "loop.c", &LOOP_FAULT.replace("hits++;", "hits += 2;"));
    assert_eq!(selected, ["fault", "fine"]);
}

/// A test harness outside the instrumented code (here `harness.c`, compiled
/// without the wrapper) calls `parse`, which faults in its first condition
/// before it sets a cell. The only call of `parse` in the instrumented code
/// (in `check`) did not run. Code outside the units may call any procedure
/// with external linkage, so `parse` may have been running: the test covers
/// its first condition, and a change there selects it.
#[test]
fn a_procedure_an_uninstrumented_harness_called_keeps_what_ran_before_it_stopped() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let lib = "int parse(int *p)\n{\n    if (*p > 0)\n        return 1;\n    return 0;\n}\n\nint check(int c)\n{\n    if (c > 100)\n        return parse(&c);\n    return 0;\n}\n";
    std::fs::write(dir.join("lib.c"), lib).unwrap();
    std::fs::write(
        dir.join("harness.c"),
        "int check(int c);\nint parse(int *p);\n\nint main(int argc, char **argv)\n{\n    (void)argv;\n    check(argc);\n    return parse(argc > 5 ? &argc : 0);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "prog: lib.c harness.c\n\t$(CC) -O0 -g -c lib.c -o lib.o\n\tcc -O0 -g -c harness.c -o harness.o\n\t$(CC) -o prog lib.o harness.o\n",
    )
    .unwrap();
    std::fs::write(dir.join("retest.toml"), "[[test]]\nname = \"harness\"\ncmd = './prog'\n").unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    retest(dir, &["run"], 1); // parse(NULL) faults
    assert_eq!(state(dir, "harness").0, "ok", "the test keeps its coverage");
    let selected = selected_after_edit(dir, "lib.c", &lib.replace("if (*p > 0)", "if (*p >= 0)"));
    assert_eq!(selected, ["harness"]);
}

/// Ctrl-C during `retest run`: the test it stopped did not fail, it did not
/// finish — reported as STOPPED, not as FAIL or as a test "always selected" —
/// and retest exits 130 as shells report an interrupted command.
#[test]
fn an_interrupted_run_reports_the_stopped_test_as_stopped() {
    let d =
        one_file_project("p", "int main(void) { return 0; }\n", "", &[("quick", "./p"), ("slow", "./p && sleep 60")]);
    let child = Command::new(retest_bin())
        .args(["run", "-j2"])
        .current_dir(d.path())
        .env("CI", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // wait until `quick` is recorded, then Ctrl-C
    let t = std::time::Instant::now();
    while sql(d.path(), "SELECT count(*) FROM results") != "1" {
        assert!(t.elapsed() < Duration::from_secs(60), "quick never finished");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{so}{se}");
    assert!(se.contains("STOPPED slow: interrupted before it finished"), "{se}");
    assert!(!se.contains("FAIL slow") && !se.contains("coverage unknown for slow"), "{se}");
    assert!(so.contains("1 passed, 0 failed, 1 stopped (interrupted)"), "{so}");
}
