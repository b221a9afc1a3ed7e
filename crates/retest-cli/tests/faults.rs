//! Fault tests: coverage survives crashes, forks and execs of the tests; what
//! cannot be recorded is marked *coverage unknown* with a reason; a `retest run`
//! killed at any point leaves a consistent store holding every finished test.

mod common;

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
    ] {
        toml.push_str(&format!("[[test]]\nname = \"{name}\"\ncmd = '{cmd}'\n\n"));
    }
    for i in 0..slow {
        toml.push_str(&format!("[[test]]\nname = \"slow{i:02}\"\ncmd = './faulty slow'\n\n"));
    }
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    d
}

fn sql(dir: &Path, q: &str) -> String {
    let o = Command::new("sqlite3").arg(dir.join(".retest/store.db")).arg(q).output().unwrap();
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

#[test]
fn a_killed_run_leaves_a_consistent_store_with_every_finished_test() {
    let d = project(30);
    for (i, delay_ms) in [150u64, 420, 700, 990, 1300].into_iter().enumerate() {
        let mut child = Command::new(retest_bin())
            .args(["run", "-j2", "--filter", "slow*"])
            .current_dir(d.path())
            .env("CI", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
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
