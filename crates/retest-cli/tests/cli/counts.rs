//! Execution counts (`retest build --counts`): real C programs built by the
//! real compiler through the wrapper, run as tests, and their per-line
//! execution counts checked against gcov's on the same program (`gcc
//! --coverage`, `gcov --json-format`) — for every line both report.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;

/// A loop run `argv[1]` times, a function called from it with a branch in
/// it, a `while` loop and a short-circuit decision on one line.
const LOOP: &str = r#"#include <stdio.h>
#include <stdlib.h>

static int step(int x)
{
    if (x % 3 == 0)
        return x / 3;
    return x + 1;
}

static int digits(long v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    long s = 0;
    for (int i = 0; i < n; i++) {
        s += step(i);
        if (i > 2 && s % 2 == 0)
            s++;
    }
    printf("%ld %d\n", s, digits(s));
    return 0;
}
"#;

/// line → execution count, from gcov's JSON output for the `.gcda` files in `dir`.
fn gcov_counts(dir: &Path) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "gcda") {
            continue;
        }
        let o = Command::new("gcov").args(["--json-format", "--stdout"]).arg(&p).current_dir(dir).output().unwrap();
        assert!(o.status.success(), "gcov failed: {}", String::from_utf8_lossy(&o.stderr));
        for doc in String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(doc).unwrap();
            for f in v["files"].as_array().unwrap() {
                if f["file"].as_str().unwrap().starts_with('/') {
                    continue; // system headers
                }
                for l in f["lines"].as_array().unwrap() {
                    *out.entry(l["line_number"].as_u64().unwrap() as u32).or_default() += l["count"].as_u64().unwrap();
                }
            }
        }
    }
    out
}

/// gcov's counts of `program` run once per argument list of `runs`.
fn gcov_of(program: &str, runs: &[&str]) -> BTreeMap<u32, u64> {
    let g = tempfile::tempdir().unwrap();
    std::fs::write(g.path().join("p.c"), program).unwrap();
    let st = Command::new("gcc").args(["-O0", "--coverage", "-o", "p", "p.c"]).current_dir(g.path()).status().unwrap();
    assert!(st.success());
    for r in runs {
        let st =
            Command::new("sh").args(["-c", &format!("./p {r} > /dev/null")]).current_dir(g.path()).status().unwrap();
        assert!(st.success());
    }
    gcov_counts(g.path())
}

/// A project of `program` with one test per argument list of `runs`
/// (`t0`, `t1`, …), built by the wrapper with `build_args` and run.
fn project(program: &str, runs: &[&str], build_args: &[&str]) -> tempfile::TempDir {
    project_at(program, runs, build_args, "-O0")
}

/// [`project`] compiled at optimisation level `opt`.
fn project_at(program: &str, runs: &[&str], build_args: &[&str], opt: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("p.c"), program).unwrap();
    std::fs::write(d.path().join("Makefile"), format!("p: p.c\n\t$(CC) {opt} -o p p.c\n")).unwrap();
    let toml: String =
        runs.iter().enumerate().map(|(i, r)| format!("[[test]]\nname = \"t{i}\"\ncmd = \"./p {r}\"\n\n")).collect();
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    let mut args = vec!["build"];
    args.extend_from_slice(build_args);
    args.extend_from_slice(&["--", "make", "-s"]);
    retest(d.path(), &args, 0);
    retest(d.path(), &["run"], 0);
    d
}

/// (line → tests, line → executions) of the JSON report of `tests` (all: none given).
fn ours(dir: &Path, tests: Option<&str>) -> (BTreeMap<u32, u64>, Option<BTreeMap<u32, u64>>) {
    let mut args = vec!["coverage", "--format", "json"];
    if let Some(t) = tests {
        args.extend_from_slice(&["--tests", t]);
    }
    let v = json(&retest(dir, &args, 0));
    let f = &v["files"][0];
    let pairs = |x: &serde_json::Value| -> BTreeMap<u32, u64> {
        x.as_array().unwrap().iter().map(|l| (l[0].as_u64().unwrap() as u32, l[1].as_u64().unwrap())).collect()
    };
    (pairs(&f["lines"]), f.get("executions").map(pairs))
}

/// Lines both report, and where they disagree.
fn compare(ours: &BTreeMap<u32, u64>, gcov: &BTreeMap<u32, u64>) -> (usize, Vec<String>) {
    let mut both = 0;
    let mut differ = Vec::new();
    for (l, n) in ours {
        if let Some(g) = gcov.get(l) {
            both += 1;
            if g != n {
                differ.push(format!("line {l}: retest {n}, gcov {g}"));
            }
        }
    }
    (both, differ)
}

#[test]
fn line_counts_equal_gcov_and_sum_over_tests() {
    let runs = ["10", "7"];
    let d = project(LOOP, &runs, &["--counts"]);
    // each test alone
    for (i, r) in runs.iter().enumerate() {
        let (_, counts) = ours(d.path(), Some(&format!("t{i}")));
        let counts = counts.expect("a counted build reports executions");
        let gcov = gcov_of(LOOP, &[r]);
        let (both, differ) = compare(&counts, &gcov);
        assert!(differ.is_empty(), "t{i} (./p {r}):\n{}", differ.join("\n"));
        assert!(both >= 15, "compared only {both} lines");
        // the loop body ran n times, the `for` line n + 1 times
        let n: u64 = r.parse().unwrap();
        assert_eq!(counts[&26], n, "the loop body");
        assert_eq!(counts[&25], n + 1, "the for line");
    }
    // both tests: the sum, as gcov's counts of both runs
    let (tests, counts) = ours(d.path(), None);
    let counts = counts.unwrap();
    let (_, differ) = compare(&counts, &gcov_of(LOOP, &runs));
    assert!(differ.is_empty(), "both tests:\n{}", differ.join("\n"));
    assert_eq!(counts[&26], 17);
    assert_eq!(tests[&26], 2, "the Tests column still counts tests");
    // LCOV's DA and Cobertura's hits give the execution counts
    let lcov = stdout(&retest(d.path(), &["coverage", "--format", "lcov"], 0));
    assert!(lcov.lines().any(|l| l == "DA:26,17"), "{lcov}");
    assert!(lcov.lines().any(|l| l == "DA:25,19"), "{lcov}");
    let xml = stdout(&retest(d.path(), &["coverage", "--format", "cobertura"], 0));
    assert!(xml.contains(r#"<line number="26" hits="17""#), "{xml}");
    // the HTML report shows them next to the number of tests, with a legend
    let html = d.path().join("html");
    retest(d.path(), &["coverage", "--format", "html", "--output", html.to_str().unwrap()], 0);
    let page = std::fs::read_dir(&html)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .find(|t| t.contains("id=\"L26\""))
        .expect("a page for p.c");
    assert!(page.contains("<dt>Runs</dt>"), "legend");
    assert!(page.contains("<td class=\"hits\">2</td><td class=\"hits\">17</td>"), "line 26: 2 tests, 17 runs");
}

/// An `else if` chain of `&&` decisions in a loop, as the lexer's comment
/// loop has it: optimised, the wrapper pairs its probe cells.
const CHAIN: &str = r#"#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int x = 0, y = 0, z = 0;
    for (int i = 0; i < n; i++) {
        if (i % 2 == 0 && i % 3 == 0)
            x++;
        else if (i % 5 == 0 && i % 7 != 0)
            y++;
        z += i;
    }
    printf("%d %d %d\n", x, y, z);
    return 0;
}
"#;

/// Optimised, the wrapper pairs probe cells (`retest_graph::coverage::pair_probes`):
/// a pair cell counts for both of its edges, and the counts are still gcov's
/// (gcov at `-O0`, where its lines are the source's).
#[test]
fn line_counts_of_an_optimised_build_with_paired_cells_equal_gcov() {
    for (program, runs) in [(CHAIN, &["100", "37"][..]), (LOOP, &["10", "7"][..])] {
        let d = project_at(program, runs, &["--counts"], "-O2");
        let (_, counts) = ours(d.path(), None);
        let (both, differ) = compare(&counts.unwrap(), &gcov_of(program, runs));
        assert!(differ.is_empty(), "-O2:\n{}", differ.join("\n"));
        assert!(both >= 10, "compared only {both} lines");
        if program == CHAIN {
            assert!(instrumented(d.path(), true).contains("unsigned char __retest_q"), "the chain's cells are paired");
        }
    }
}

#[test]
fn without_counts_reports_give_numbers_of_tests() {
    let d = project(LOOP, &["10", "7"], &[]);
    let (tests, counts) = ours(d.path(), None);
    assert_eq!(counts, None, "no executions without a counted build");
    assert_eq!(tests[&26], 2);
    let lcov = stdout(&retest(d.path(), &["coverage", "--format", "lcov"], 0));
    assert!(lcov.lines().any(|l| l == "DA:26,2"), "{lcov}");
}

/// A process forked by a test counts only what it ran itself: the counts of
/// the parent and the child add up to what ran, and do not count the
/// parent's work before the fork twice. Not checked: the line of the `fork`
/// call and the lines before it back to the last probe, which count the
/// child's return from `fork` too (`retest_graph::coverage::edge_counts`
/// derives them backwards from what follows; README, "Execution counts").
/// gcov is no oracle here: its child ends in `_exit` without writing its
/// counts.
const FORKS: &str = r#"#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long work(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    (void)argc;
    long s = work(atoi(argv[1]));
    pid_t pid = fork();
    if (pid == 0) {
        s += work(atoi(argv[2]));
        _exit(s == 0);
    }
    int status;
    waitpid(pid, &status, 0);
    s += work(atoi(argv[3]));
    return s == 0;
}
"#;

#[test]
fn forked_processes_count_what_each_ran() {
    let d = project(FORKS, &["5 7 11"], &["--counts"]);
    let (_, counts) = ours(d.path(), None);
    let counts = counts.unwrap();
    // the loop body: 5 before the fork, 7 in the child, 11 in the parent after it
    assert_eq!(counts[&9], 5 + 7 + 11);
    assert_eq!(counts[&7], 3, "work() entered three times");
    assert_eq!(counts[&18], 2, "after the fork: in both processes");
    assert_eq!(counts[&19], 1, "the child's branch once");
    assert_eq!(counts[&23], 1, "the parent's wait once");
}

/// The kept instrumented text of the one unit of `dir` (`RETEST_KEEP_TEMPS`).
fn instrumented(dir: &Path, counts: bool) -> String {
    let mut cmd = Command::new(retest_bin());
    cmd.arg("build");
    if counts {
        cmd.arg("--counts");
    }
    let st = cmd
        .args(["--", "make", "-s", "-B"])
        .current_dir(dir)
        .env("CI", "1")
        .env("RETEST_KEEP_TEMPS", "1")
        .env_remove("RETEST_STORE")
        .status()
        .unwrap();
    assert!(st.success());
    let tmp = dir.join(".retest/tmp");
    let mut texts: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "i"))
        .map(|e| (e.metadata().unwrap().modified().unwrap(), std::fs::read_to_string(e.path()).unwrap()))
        .collect();
    texts.sort();
    let text = texts.pop().expect("a kept instrumented text").1;
    for e in std::fs::read_dir(&tmp).unwrap().flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    text
}

/// `(ABI, build hash)` of an instrumented text's header line.
fn header(text: &str) -> (String, String) {
    let first = text.lines().next().unwrap();
    let rest = first.strip_prefix("/* retest instrumentation, ABI ").unwrap();
    let (abi, rest) = rest.split_once(", unit ").unwrap();
    (abi.to_string(), rest.trim_end_matches(" */").to_string())
}

#[test]
fn a_counted_build_has_its_own_build_hash_and_the_default_probes_stay() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("p.c"), LOOP).unwrap();
    std::fs::write(d.path().join("Makefile"), "p: p.c\n\t$(CC) -O0 -o p p.c\n").unwrap();
    retest(d.path(), &["init"], 0);
    let plain = instrumented(d.path(), false);
    let counted = instrumented(d.path(), true);
    let again = instrumented(d.path(), false);
    let (abi_plain, hash_plain) = header(&plain);
    let (abi_counted, hash_counted) = header(&counted);
    assert_ne!(hash_plain, hash_counted, "a counted build is another build");
    assert_eq!(header(&again), (abi_plain.clone(), hash_plain), "the default build is the same build again");
    assert_eq!((abi_plain.as_str(), abi_counted.as_str()), ("2", "3"));
    // default probes store a byte; counted ones increment a 64-bit counter
    assert!(plain.contains("__retest_e[0] = 1") && !plain.contains("++__retest_e["));
    assert!(counted.contains("++__retest_e[") && !counted.contains("] = 1;"));
    assert!(counted.contains("volatile unsigned long long __retest_e["));
}

/// Two loops, one per test; `LOOPS_V1` changes only the second.
const LOOPS_V0: &str = r#"#include <stdio.h>
#include <stdlib.h>

static long first(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += i % 3 ? i : 1;
    return s;
}

static long second(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += 2;
    return s;
}

int main(int argc, char **argv)
{
    (void)argc;
    int n = atoi(argv[2]);
    long s = argv[1][0] == 'a' ? first(n) : second(n);
    printf("%ld\n", s);
    return 0;
}
"#;

fn loops_v1() -> String {
    LOOPS_V0.replace("        s += 2;\n", "        s += 3;\n")
}

/// RECOVER carries a test it does not rerun with its execution counts,
/// mapped as its coverage is: after `run --selected`, each test's counts are
/// those of a full run of the new version.
#[test]
fn recover_carries_the_counts_of_tests_it_does_not_rerun() {
    let runs = ["a 10", "b 6"];
    let d = project(LOOPS_V0, &runs, &["--counts"]);
    std::fs::write(d.path().join("p.c"), loops_v1()).unwrap();
    retest(d.path(), &["build", "--counts", "--", "make", "-s"], 0);
    let out = stdout(&retest(d.path(), &["run", "--selected"], 0));
    assert!(out.contains("ran 1 of 2 tests"), "{out}");
    let fresh = project(&loops_v1(), &runs, &["--counts"]);
    for t in ["t0", "t1"] {
        let (tests, counts) = ours(d.path(), Some(t));
        let (fresh_tests, fresh_counts) = ours(fresh.path(), Some(t));
        assert_eq!(tests, fresh_tests, "{t}: lines");
        assert_eq!(counts, fresh_counts, "{t}: execution counts");
    }
    // the carried test's loop ran ten times
    assert_eq!(ours(d.path(), Some("t0")).1.unwrap()[&8], 10);
}

/// Coverage recorded without counters has no counts to carry: when the new
/// build counts, RECOVER reruns the tests it would have carried, and every
/// test's counts are those of a full run.
#[test]
fn recover_reruns_what_was_not_counted_before() {
    let runs = ["a 10", "b 6"];
    let d = project(LOOPS_V0, &runs, &[]);
    std::fs::write(d.path().join("p.c"), loops_v1()).unwrap();
    retest(d.path(), &["build", "--counts", "--", "make", "-s"], 0);
    let out = stdout(&retest(d.path(), &["run", "--selected"], 0));
    assert!(out.contains("ran 2 of 2 tests"), "{out}");
    let fresh = project(&loops_v1(), &runs, &["--counts"]);
    for t in ["t0", "t1"] {
        assert_eq!(ours(d.path(), Some(t)).1, ours(fresh.path(), Some(t)).1, "{t}: execution counts");
    }
}
