//! C++ through the whole workflow, on the Elevator, AlarmElevator and Alarm
//! classes of Rothermel, Harrold & Dedhia (003, Figs. 1, 2, 6, 10, 13): built
//! with the real C++ compiler through `retest build`, tests t1..t4 of Fig. 4
//! (and two that drive an AlarmElevator through the polymorphic call of
//! Fig. 13), then `go'` of Fig. 6. Selection is the paper's: the tests that
//! reach line 40 (t3, t4 and the AlarmElevator test that does), and the audit
//! finds no miss.
//!
//! Then C++ test suites whose cases are tests of their own: GoogleTest
//! through CMake's `gtest_discover_tests` and CTest, and Catch2 through
//! `[[catch2]]`; a change selects the cases that ran it, not their binary.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::*;

fn have(tool: &str) -> bool {
    std::process::Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn source() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/tests/corpus/elevator.cc");
    std::fs::read_to_string(p).unwrap()
}

/// (name, start floor, requested floor, alarm elevator)
const TESTS: &[(&str, i32, i32, bool)] = &[
    ("t1", 1, -1, false),
    ("t2", 1, 5, false),
    ("t3", 5, 2, false),
    ("t4", 2, 2, false),
    ("alarm_up", 1, 5, true),
    ("alarm_same", 3, 3, true),
];

fn write(dir: &Path, program: &str) {
    std::fs::write(dir.join("elevator.cc"), program).unwrap();
    std::fs::write(dir.join("Makefile"), "elevator: elevator.cc\n\t$(CXX) -O0 -o elevator elevator.cc\n").unwrap();
    let mut toml = String::new();
    for (name, start, floor, alarm) in TESTS {
        let extra = if *alarm { " alarm" } else { "" };
        toml.push_str(&format!("[[test]]\nname = \"{name}\"\ncmd = \"./elevator {start} {floor}{extra}\"\n\n"));
    }
    std::fs::write(dir.join("retest.toml"), toml).unwrap();
}

fn rebuild(dir: &Path, program: &str) {
    write_newer(&dir.join("elevator.cc"), program);
    retest(dir, &["build", "--", "make", "-s"], 0);
}

fn selected(dir: &Path, algorithm: &str) -> BTreeSet<String> {
    let v = json(&retest(dir, &["select", "--algorithm", algorithm, "--format", "json"], 0));
    v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn go_prime_selects_the_tests_that_reach_line_40() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let v0 = source();
    write(d.path(), &v0);
    retest(d.path(), &["init"], 0);
    let b = retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert!(!stderr(&b).contains("warning"), "{}", stderr(&b));
    let r = retest(d.path(), &["run"], 0);
    assert!(stdout(&r).contains("6 passed"), "{}", stdout(&r));

    // every method is in the store under its qualified name, and ran as Fig. 4 says
    let cov = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
    let functions = cov["files"][0]["functions"].as_array().unwrap();
    let names: BTreeSet<String> = functions.iter().map(|f| f["name"].as_str().unwrap().to_string()).collect();
    for m in [
        "Elevator::go(int)",
        "AlarmElevator::go(int)",
        "AlarmElevator::check_alarm(Alarm*)",
        "Alarm::Alarm()",
        "main(int, char**)",
    ] {
        assert!(names.contains(m), "{m} missing from {names:?}");
    }

    let v1 = v0.replace("#define ELEVATOR_V 0", "#define ELEVATOR_V 1");
    assert_ne!(v0, v1);
    rebuild(d.path(), &v1);
    let expect = set(&["t3", "t4", "alarm_same"]);
    for alg in ["dejavu", "partial", "full", "valid"] {
        assert_eq!(selected(d.path(), alg), expect, "{alg}");
    }
    // a function-level selection takes every test that ran go
    assert_eq!(selected(d.path(), "function"), set(&["t1", "t2", "t3", "t4", "alarm_up", "alarm_same"]));
    let a = json(&retest(d.path(), &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    assert!(a["changed"].as_object().unwrap().contains_key("t4"), "{a}");
}

/// A change to a class used only by AlarmElevator (Alarm's constructor)
/// selects only the tests that built an AlarmElevator.
#[test]
fn a_change_to_alarm_selects_the_alarm_tests() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let v0 = source();
    write(d.path(), &v0);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run"], 0);
    let changed = v0.replacen("{ alarm_on = 0; }", "{ alarm_on = 2; }", 1);
    assert_ne!(v0, changed);
    rebuild(d.path(), &changed);
    let expect = set(&["alarm_up", "alarm_same"]);
    for alg in ["dejavu", "function"] {
        assert_eq!(selected(d.path(), alg), expect, "{alg}");
    }

    // a new data member changes Alarm's layout, and so AlarmElevator's (it
    // holds an `Alarm *`): the statements that name either are affected
    retest(d.path(), &["run"], 0);
    let grown = changed.replacen("    int alarm_type;\n", "    int alarm_type;\n    int volume;\n", 1);
    assert_ne!(grown, changed);
    rebuild(d.path(), &grown);
    assert_eq!(selected(d.path(), "dejavu"), expect);
    let why = stdout(&retest(d.path(), &["select"], 0));
    assert!(why.contains("Alarm"), "{why}");

    // a new virtual function changes Elevator's layout: every test built one
    retest(d.path(), &["run"], 0);
    let virt = grown.replacen(
        "    virtual ~Elevator() {}\n",
        "    virtual ~Elevator() {}\n    virtual int capacity() { return 8; }\n",
        1,
    );
    assert_ne!(virt, grown);
    rebuild(d.path(), &virt);
    assert_eq!(selected(d.path(), "dejavu").len(), TESTS.len());
}

/// The C++ constructs corpus, built through `retest build` at -O0 and -O2,
/// prints what the plain build prints, and no function of it is unanalysable.
#[test]
fn constructs_behave_as_in_a_plain_build() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/tests/corpus/constructs.cc");
    for opt in ["-O0", "-O2"] {
        let d = tempfile::tempdir().unwrap();
        std::fs::copy(&src, d.path().join("constructs.cc")).unwrap();
        std::fs::write(
            d.path().join("Makefile"),
            format!("constructs: constructs.cc\n\t$(CXX) -std=c++17 {opt} -o constructs constructs.cc\n"),
        )
        .unwrap();
        std::fs::write(d.path().join("retest.toml"), "[[test]]\nname = \"all\"\ncmd = \"./constructs\"\n").unwrap();
        let plain = std::process::Command::new("c++")
            .args(["-std=c++17", opt, "-o", "plain", "constructs.cc"])
            .current_dir(d.path())
            .status()
            .unwrap();
        assert!(plain.success());
        retest(d.path(), &["init"], 0);
        let b = retest(d.path(), &["build", "--", "make", "-s"], 0);
        assert!(!stderr(&b).contains("cannot be analysed"), "{}", stderr(&b));
        let run = |exe: &str| std::process::Command::new(d.path().join(exe)).current_dir(d.path()).output().unwrap();
        let (p, i) = (run("plain"), run("constructs"));
        assert_eq!(String::from_utf8_lossy(&i.stdout), String::from_utf8_lossy(&p.stdout), "{opt}");
        assert_eq!(i.status.code(), p.status.code());
        retest(d.path(), &["run"], 0);
        let cov = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
        let functions = cov["files"][0]["functions"].as_array().unwrap();
        let ran = |name: &str| {
            functions.iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("{name} missing"))["tests"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(ran("checks(int)"), 1);
        assert_eq!(ran("hue(Colour, int)"), 1);
        assert_eq!(ran("Table::Table(int)"), 1);
    }
}

/// Functions that may run while compiling (`build::Evaluation`): built at
/// -O0 and -O2 in C++20, a `constexpr` function, constructor and method are
/// probed (guarded, so the unit still folds them in `static_assert`) and
/// their runs recorded; a `consteval` function is listed as not recorded. A
/// change to a `constexpr` body, or to a lambda that only ran while
/// compiling, selects the tests that reached its uses; in C++11 a
/// `constexpr` function is not probed, and a change to it still selects.
#[test]
fn constexpr_functions_are_probed_and_compile_time_changes_select() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/tests/corpus/constexpr.cc"),
    )
    .unwrap();
    for (std, opt) in [("-std=c++20", "-O0"), ("-std=c++20", "-O2"), ("-std=c++11 -DCXX11", "-O2")] {
        let d = tempfile::tempdir().unwrap();
        let at = format!("{std} {opt}");
        std::fs::write(d.path().join("constexpr.cc"), &src).unwrap();
        std::fs::write(
            d.path().join("Makefile"),
            format!("constexpr: constexpr.cc\n\t$(CXX) {std} {opt} -o constexpr constexpr.cc\n"),
        )
        .unwrap();
        std::fs::write(
            d.path().join("retest.toml"),
            "[[test]]\nname = \"three\"\ncmd = \"./constexpr 3\"\n\n[[test]]\nname = \"zero\"\ncmd = \"./constexpr 0\"\n",
        )
        .unwrap();
        retest(d.path(), &["init"], 0);
        retest(d.path(), &["build", "--", "make", "-s"], 0);
        let out = |arg: &str| {
            let o = std::process::Command::new(d.path().join("constexpr")).arg(arg).output().unwrap();
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        assert_eq!(out("3"), "6 24 13 21\n", "{at}");
        assert_eq!(out("0"), "-1 21 10 21\n", "{at}");
        retest(d.path(), &["run"], 0);
        let cov = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
        let functions = cov["files"][0]["functions"].as_array().unwrap();
        let f = |name: &str| {
            let f = functions.iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("{name} missing ({at})"));
            (f["tests"].as_u64().unwrap(), f["recorded"].as_bool().unwrap())
        };
        let cxx11 = std.contains("c++11");
        assert_eq!(f("triangle(int)"), if cxx11 { (0, false) } else { (2, true) }, "{at}");
        assert_eq!(f("Point::Point(int, int)"), if cxx11 { (0, false) } else { (2, true) }, "{at}");
        assert_eq!(f("Point::sum() const"), if cxx11 { (0, false) } else { (2, true) }, "{at}");
        assert_eq!(f("twice(int)"), if cxx11 { (2, true) } else { (0, false) }, "{at}");
        if !cxx11 {
            // ran only while compiling
            assert_eq!(f("main::lambda#1"), (0, true), "{at}");
            // the loop's odd arm, taken only by `three`, at run time
            let lines = cov["files"][0]["lines"].as_array().unwrap();
            let tests_on = |l: u64| lines.iter().find(|x| x[0] == l).map(|x| x[1].as_u64().unwrap());
            assert_eq!(tests_on(16), Some(1), "{at}: {lines:?}");
        }

        // a change to a `constexpr` body the tests ran (or, in C++11, could not see)
        let edited = if cxx11 {
            src.replacen("n * (n + 1) / 2", "(n + 1) * n / 2", 1)
        } else {
            src.replacen("s += i * 1;", "s += i + 0;", 1)
        };
        assert_ne!(edited, src);
        rebuild_as(d.path(), &edited);
        assert_eq!(selected(d.path(), "dejavu"), set(&["three", "zero"]), "{at}");
        if !cxx11 {
            // a change to the lambda that ran only while compiling
            retest(d.path(), &["run"], 0);
            let lambda = edited.replacen("return x * 3;", "return x * 3 + 0;", 1);
            assert_ne!(lambda, edited);
            rebuild_as(d.path(), &lambda);
            assert_eq!(selected(d.path(), "dejavu"), set(&["three", "zero"]), "{at}");
            let a = json(&retest(d.path(), &["audit", "--format", "json"], 0));
            assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{at}: {a}");
        }
    }
}

fn rebuild_as(dir: &Path, program: &str) {
    write_newer(&dir.join("constexpr.cc"), program);
    retest(dir, &["build", "--", "make", "-s"], 0);
}

/// GoogleTest granularity: a `[[gtest]]` binary built through `retest build`
/// gives a test per case; a change to a function selects exactly the cases
/// that ran it, and `--format gtest-filter` prints the command line that runs
/// them (nothing when nothing is selected), `--format ctest` their names'
/// regular expression. A selected test that is not a case is refused by
/// `gtest-filter`, never left out.
#[test]
fn googletest_cases_are_selected_one_by_one_and_printed_as_a_filter() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let lib = "int twice(int v) { return 2 * v; }\nint square(int v) { return v * v; }\n";
    let tests = "#include <gtest/gtest.h>\nint twice(int);\nint square(int);\n\
                 TEST(Math, Twice) { EXPECT_EQ(twice(2), 4); }\n\
                 TEST(Math, Square) { EXPECT_EQ(square(3), 9); }\n\
                 TEST(Math, Both) { EXPECT_EQ(square(twice(1)), 4); }\n\
                 class Param : public ::testing::TestWithParam<int> {};\n\
                 TEST_P(Param, Squares) { EXPECT_GE(square(GetParam()), 0); }\n\
                 INSTANTIATE_TEST_SUITE_P(Small, Param, ::testing::Values(1, 2));\n";
    std::fs::write(d.path().join("lib.cc"), lib).unwrap();
    std::fs::write(d.path().join("t.cc"), tests).unwrap();
    std::fs::write(
        d.path().join("Makefile"),
        "unit_tests: lib.cc t.cc\n\t$(CXX) -O1 -o unit_tests lib.cc t.cc -lgtest -lgtest_main -pthread\n",
    )
    .unwrap();
    std::fs::write(d.path().join("retest.toml"), "[[gtest]]\nbinary = \"unit_tests\"\n").unwrap();
    retest(d.path(), &["init"], 0);
    let b = retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert!(
        d.path().join("unit_tests").exists(),
        "building with GoogleTest failed: install libgtest-dev (`.ci/run` installs it)\n{}",
        stderr(&b)
    );
    let r = retest(d.path(), &["run"], 0);
    assert!(stdout(&r).contains("5 passed"), "{}", stdout(&r));
    let filter = |dir: &Path| stdout(&retest(dir, &["select", "--format", "gtest-filter"], 0));
    assert_eq!(filter(d.path()), "", "nothing changed, nothing to run");

    let lib = lib.replace("return 2 * v;", "return v + v;");
    write_newer(&d.path().join("lib.cc"), &lib);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selected(d.path(), "dejavu"), set(&["unit_tests/Math.Twice", "unit_tests/Math.Both"]));
    assert_eq!(filter(d.path()), "./unit_tests --gtest_filter=Math.Both:Math.Twice\n");
    let regex = stdout(&retest(d.path(), &["select", "--format", "ctest"], 0));
    assert_eq!(regex.trim(), "^(unit_tests/Math\\.Both|unit_tests/Math\\.Twice)$");

    // the filter runs exactly the selected cases
    let run =
        std::process::Command::new("sh").args(["-c", filter(d.path()).trim()]).current_dir(d.path()).output().unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("2 tests from 1 test suite ran"), "{out}");

    // parameterised cases are cases too
    retest(d.path(), &["run"], 0);
    let lib = lib.replace("return v * v;", "return v * v + 0;");
    write_newer(&d.path().join("lib.cc"), &lib);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(
        filter(d.path()),
        "./unit_tests --gtest_filter=Math.Both:Math.Square:Small/Param.Squares/0:Small/Param.Squares/1\n"
    );

    // a suite with a test that is not a case: refused, with the test named
    retest(d.path(), &["run"], 0);
    let toml = "[[gtest]]\nbinary = \"unit_tests\"\n\n[[test]]\nname = \"smoke\"\ncmd = \"./unit_tests\"\n";
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    write_newer(&d.path().join("lib.cc"), lib.replace("return v + v;", "return v + v + 0;"));
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    let refused = retest(d.path(), &["select", "--format", "gtest-filter"], 2);
    assert!(stderr(&refused).contains("not GoogleTest cases"), "{}", stderr(&refused));
}

/// GoogleTest death tests through `retest run`, in both styles: `threadsafe`
/// (the parent clone()s a child onto an 8 KiB stack of its own, which execs
/// the test binary again to run the statement; fmt's suite sets it) and
/// `fast` (a forked child runs the statement). Each passes, as in a plain
/// build, and the code that ran only in the dying process counts as the
/// test's: a change to it selects both death tests and not the third test.
/// The threadsafe child once died of a stack overflow in the exec
/// interposers (the coverage runtime's, then the file tracker's) before its
/// exec, and the death test failed with the child's output empty.
#[test]
fn death_tests_of_both_styles_pass_and_keep_the_dying_process_coverage() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let lib = "#include <cstdio>\n#include <cstdlib>\n\
               void die(const char *why) { std::fprintf(stderr, \"fatal: %s\", why); std::abort(); }\n\
               int twice(int v) { return 2 * v; }\n";
    let tests = "#include <gtest/gtest.h>\nvoid die(const char *);\nint twice(int);\n\
                 TEST(Death, Threadsafe) {\n    GTEST_FLAG_SET(death_test_style, \"threadsafe\");\n\
                     EXPECT_DEATH(die(\"don't panic!\"), \"don't panic!\");\n}\n\
                 TEST(Death, Fast) {\n    GTEST_FLAG_SET(death_test_style, \"fast\");\n\
                     EXPECT_DEATH(die(\"don't panic!\"), \"don't panic!\");\n}\n\
                 TEST(Life, Twice) { EXPECT_EQ(twice(2), 4); }\n";
    std::fs::write(d.path().join("lib.cc"), lib).unwrap();
    std::fs::write(d.path().join("t.cc"), tests).unwrap();
    std::fs::write(
        d.path().join("Makefile"),
        "unit_tests: lib.cc t.cc\n\t$(CXX) -O0 -o unit_tests lib.cc t.cc -lgtest -lgtest_main -pthread\n",
    )
    .unwrap();
    std::fs::write(d.path().join("retest.toml"), "[[gtest]]\nbinary = \"unit_tests\"\n").unwrap();
    retest(d.path(), &["init"], 0);
    let b = retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert!(
        d.path().join("unit_tests").exists(),
        "building with GoogleTest failed: install libgtest-dev (`.ci/run` installs it)\n{}",
        stderr(&b)
    );
    let r = retest(d.path(), &["run"], 0);
    assert!(stdout(&r).contains("3 passed"), "{}\n{}", stdout(&r), stderr(&r));

    write_newer(&d.path().join("lib.cc"), lib.replace("\"fatal: %s\"", "\"fatal error: %s\""));
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selected(d.path(), "dejavu"), set(&["unit_tests/Death.Threadsafe", "unit_tests/Death.Fast"]));
}

/// Runs that leave C++ code part-way keep their coverage, as C's do: an
/// exception unwinding through instrumented frames, `std::exit`, work done in
/// a `std::thread` and a `std::async` task give, per test, the executed lines
/// gcov gives (`g++ --coverage -O0`) on every line both count as executable;
/// an uncaught exception (`std::terminate`, SIGABRT), where gcov writes
/// nothing, keeps the lines that ran up to the `throw` and none after it.
#[test]
fn exceptions_exit_and_threads_keep_their_coverage() {
    assert!(have("c++") && have("gcov"), "g++ and gcov are needed (apt-get install g++)");
    let src_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/tests/corpus/faults.cc");
    let src = std::fs::read_to_string(&src_path).unwrap();
    let line_of = |needle: &str| -> u64 {
        src.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` not in faults.cc")) as u64 + 1
    };
    let modes = ["unwind", "terminate", "exit", "thread", "async"];
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("faults.cc"), &src).unwrap();
    std::fs::write(d.path().join("Makefile"), "faults: faults.cc\n\t$(CXX) -O2 -pthread -o faults faults.cc\n")
        .unwrap();
    let toml: String = modes.iter().map(|m| format!("[[test]]\nname = \"{m}\"\ncmd = \"./faults {m}\"\n\n")).collect();
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    let run = retest(d.path(), &["run"], 1);
    assert!(stdout(&run).contains("3 passed, 2 failed"), "{}", stdout(&run));

    // gcov's lines per mode, from a --coverage build of the same source
    let g = tempfile::tempdir().unwrap();
    std::fs::write(g.path().join("faults.cc"), &src).unwrap();
    let st = std::process::Command::new("c++")
        .args(["--coverage", "-O0", "-pthread", "-o", "faults", "faults.cc"])
        .current_dir(g.path())
        .status()
        .unwrap();
    assert!(st.success());
    let gcov_lines = |mode: &str| -> BTreeSet<(u64, bool)> {
        let _ = std::fs::remove_file(g.path().join("faults.gcda"));
        let _ = std::process::Command::new(g.path().join("faults")).arg(mode).current_dir(g.path()).output();
        let out = std::process::Command::new("gcov")
            .args(["--json-format", "--stdout", "faults.gcda"])
            .current_dir(g.path())
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut lines = BTreeSet::new();
        for f in v["files"].as_array().unwrap() {
            if f["file"].as_str().unwrap().ends_with("faults.cc") {
                for l in f["lines"].as_array().unwrap() {
                    lines.insert((l["line_number"].as_u64().unwrap(), l["count"].as_u64().unwrap() > 0));
                }
            }
        }
        lines
    };
    for mode in modes {
        let cov = json(&retest(d.path(), &["coverage", "--format", "json", "--tests", mode], 0));
        assert!(cov["unknown_coverage"].as_array().is_none_or(|u| u.is_empty()), "{mode}: {cov}");
        let ours: BTreeMap<u64, bool> = cov["files"][0]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap() > 0))
            .collect();
        if mode == "terminate" {
            // gcov writes nothing when the process aborts
            assert_eq!(ours.get(&line_of("throw std::runtime_error")), Some(&true), "{mode}: {ours:?}");
            assert_eq!(ours.get(&line_of("depth2 after")), Some(&false), "{mode}: {ours:?}");
            assert_eq!(ours.get(&line_of("depth1 after")), Some(&false), "{mode}: {ours:?}");
            continue;
        }
        let theirs: BTreeMap<u64, bool> = gcov_lines(mode).into_iter().collect();
        let both: Vec<u64> = ours.keys().filter(|l| theirs.contains_key(l)).copied().collect();
        assert!(both.len() >= 10, "{mode}: too few lines in common: {ours:?} {theirs:?}");
        let differ: Vec<u64> = both.iter().filter(|l| ours[l] != theirs[l]).copied().collect();
        assert!(differ.is_empty(), "{mode}: lines {differ:?} differ from gcov\nretest {ours:?}\ngcov {theirs:?}");
    }
    // a change only the thread ran selects the thread's test and the async one
    // (both run `worker`), nothing else
    let edited = src.replacen("s += i;", "s += i * 1;", 1);
    assert_ne!(edited, src);
    write_newer(&d.path().join("faults.cc"), &edited);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert_eq!(selected(d.path(), "dejavu"), set(&["thread", "async"]));
}

const PLUGIN_H: &str = "struct Base { virtual int m(); virtual ~Base(); };\n\
extern Base *registry[4];\nextern int count;\n\
struct Registrar { Registrar(Base *b); };\n";
const CORE_CC: &str = "#include <cstdio>\n#include \"plugin.h\"\n\
Base *registry[4];\nint count;\n\
int Base::m() { return 1; }\nBase::~Base() {}\n\
Registrar::Registrar(Base *b) { registry[count++] = b; }\n\
int main() {\n    if (count > 0)\n        std::printf(\"%d\\n\", registry[0]->m());\n    else\n        std::printf(\"none\\n\");\n    return 0;\n}\n";
const PLUGIN_CC: &str = "#include \"plugin.h\"\n\
struct Derived : Base {\n    int k;\n    Derived(int v) : k(v) {}\n    int m() override { return k; }\n};\n\
static Registrar r(new Derived(5));\n";

/// C++ code that runs without any statement naming it: a unit's start-up
/// code (a static registration) and dynamic dispatch (003 §5.2). Two
/// programs share a core; only `with_plugin` links the plugin, which
/// registers an object at start-up. A changed initialiser selects the tests
/// whose processes loaded the plugin; a removed override, and an added one,
/// select the tests through the polymorphic call `registry[0]->m()`; the test
/// of the program without the plugin, which neither loads the plugin nor
/// reaches the call, is selected by none. `retest audit` finds no miss.
#[test]
fn startup_code_and_overrides_select_the_tests_they_change() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("plugin.h"), PLUGIN_H).unwrap();
    std::fs::write(dir.join("core.cc"), CORE_CC).unwrap();
    std::fs::write(dir.join("plugin.cc"), PLUGIN_CC).unwrap();
    make_project(
        dir,
        "all: with_plugin bare\n\
         %.o: %.cc plugin.h\n\t$(CXX) -O2 -c -o $@ $<\n\
         with_plugin: core.o plugin.o\n\t$(CXX) -o $@ core.o plugin.o\n\
         bare: core.o\n\t$(CXX) -o $@ core.o\n",
        &[("plugin", "./with_plugin"), ("bare", "./bare")],
    );
    let out = |exe: &str| {
        let o = std::process::Command::new(dir.join(exe)).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!((out("with_plugin"), out("bare")), ("5\n".to_string(), "none\n".to_string()));
    retest(dir, &["run"], 0);
    let step = |src: &str, expect_out: &str, expect: &[&str]| {
        write_newer(&dir.join("plugin.cc"), src);
        retest(dir, &["build", "--", "make", "-s"], 0);
        assert_eq!(out("with_plugin"), expect_out, "{src}");
        assert_eq!(selected(dir, "dejavu"), set(expect), "{src}");
        let a = json(&retest(dir, &["audit", "--format", "json"], 0));
        assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
        retest(dir, &["run"], 0);
    };
    // the registration's argument
    let v1 = PLUGIN_CC.replace("new Derived(5)", "new Derived(6)");
    step(&v1, "6\n", &["plugin"]);
    // the override goes: the call reaches Base::m
    let v2 = v1.replace("    int m() override { return k; }\n", "");
    step(&v2, "1\n", &["plugin"]);
    // and comes back
    step(&v1, "6\n", &["plugin"]);
}

/// The library both suites below test: `mul` calls `add`, `neg` neither.
const CALC_H: &str = "int add(int a, int b);\nint mul(int a, int b);\nint neg(int a);\n";
const CALC: &str = "#include \"calc.h\"\n\
int add(int a, int b) { return a + b; }\n\
int mul(int a, int b) {\n\
    int r = 0;\n\
    for (int i = 0; i < b; i++) r = add(r, a);\n\
    return r;\n\
}\n\
int neg(int a) { return -a; }\n";

/// `mul` changed: every call to it reaches the new statement.
fn calc_changed() -> String {
    let v = CALC.replace("int r = 0;\n", "int r = 0;\nif (b < 0) return -mul(a, -b);\n");
    assert_ne!(v, CALC);
    v
}

fn write_calc(dir: &Path) {
    std::fs::write(dir.join("calc.h"), CALC_H).unwrap();
    std::fs::write(dir.join("calc.cc"), CALC).unwrap();
}

/// A CMake project with `find_package(GTest)` and `gtest_discover_tests`,
/// built with `CXX="retest c++"` by `retest build`: `retest run --ctest`
/// runs one test per GoogleTest case (a `TEST_P` instance included,
/// disabled cases left out), alone, in the `WORKING_DIRECTORY` and with the
/// `ENVIRONMENT` the project gives; a change to `mul` selects the cases that
/// call it, by the names CTest knows them by (`ctest -R` with `--format ctest`
/// runs exactly those), and a changed `TIMEOUT` selects every case.
#[test]
fn ctest_gtest_cases_are_selected_one_by_one() {
    assert!(have("c++") && have("cmake"), "c++ and cmake are needed (`.ci/run` installs g++, cmake and libgtest-dev)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write_calc(dir);
    let cmake = "cmake_minimum_required(VERSION 3.14)\nproject(calc CXX)\nenable_testing()\n\
        find_package(GTest REQUIRED)\ninclude(GoogleTest)\nadd_library(calc calc.cc)\n\
        add_executable(calc_tests calc_test.cc)\ntarget_link_libraries(calc_tests calc GTest::gtest GTest::gtest_main)\n\
        gtest_discover_tests(calc_tests WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}\n\
          PROPERTIES ENVIRONMENT \"CALC_MODE=test\" TIMEOUT 30)\n";
    std::fs::write(dir.join("CMakeLists.txt"), cmake).unwrap();
    std::fs::write(
        dir.join("calc_test.cc"),
        "#include <gtest/gtest.h>\n#include <cstdio>\n#include <cstdlib>\n#include \"calc.h\"\n\
         TEST(Add, Small) { EXPECT_EQ(add(2, 3), 5); }\n\
         TEST(Mul, Small) { EXPECT_EQ(mul(2, 3), 6); }\n\
         TEST(Neg, Mode) { const char *m = std::getenv(\"CALC_MODE\"); ASSERT_TRUE(m); EXPECT_STREQ(m, \"test\"); EXPECT_EQ(neg(2), -2); }\n\
         TEST(Neg, Cwd) { std::FILE *f = std::fopen(\"calc.h\", \"r\"); ASSERT_TRUE(f); std::fclose(f); }\n\
         TEST(Add, DISABLED_Off) { EXPECT_EQ(add(1, 1), 3); }\n\
         class Square : public ::testing::TestWithParam<int> {};\n\
         TEST_P(Square, Mul) { int n = GetParam(); EXPECT_EQ(mul(n, n), n * n); }\n\
         INSTANTIATE_TEST_SUITE_P(Inst, Square, ::testing::Values(0, 4));\n",
    )
    .unwrap();
    retest(dir, &["init"], 0);
    let b = retest(dir, &["build", "--", "sh", "-c", "cmake -S . -B build >/dev/null && cmake --build build"], 0);
    assert!(stderr(&b).contains("2 translation unit(s) instrumented"), "{}", stderr(&b));
    let r = retest(dir, &["run", "--ctest", "build"], 0);
    // Neg.Mode and Neg.Cwd pass only with the project's ENVIRONMENT and WORKING_DIRECTORY
    assert!(stdout(&r).contains("6 passed, 0 failed"), "{}", stdout(&r));
    let names: BTreeSet<String> = test_names(dir).into_iter().collect();
    // CMake names a TEST_P instance after its parameter's value
    let all = ["Add.Small", "Mul.Small", "Neg.Mode", "Neg.Cwd", "Inst/Square.Mul/0", "Inst/Square.Mul/4"];
    assert_eq!(names, set(&all));

    write_newer(&dir.join("calc.cc"), calc_changed());
    retest(dir, &["build", "--", "cmake", "--build", "build"], 0);
    let mul = set(&["Mul.Small", "Inst/Square.Mul/0", "Inst/Square.Mul/4"]);
    assert_eq!(selected(dir, "dejavu"), mul);
    let re = stdout(&retest(dir, &["select", "--format", "ctest"], 0));
    let ctest =
        std::process::Command::new("ctest").args(["-R", re.trim()]).current_dir(dir.join("build")).output().unwrap();
    let out = String::from_utf8_lossy(&ctest.stdout);
    assert!(ctest.status.success() && out.contains("out of 3"), "{re}: {out}");
    for t in &mul {
        assert!(out.contains(&format!(" {t} ")), "{t} not run by ctest -R {re}: {out}");
    }
    // CTest's list, as gtest_discover_tests writes it after a build, is kept
    let v = retest(dir, &["select", "-v", "--format", "names"], 0);
    assert!(stderr(&v).contains("CTest's list kept from before"), "{}", stderr(&v));

    // CTest's TIMEOUT is part of every case's definition
    retest(dir, &["run"], 0);
    write_newer(&dir.join("CMakeLists.txt"), cmake.replace("TIMEOUT 30", "TIMEOUT 20"));
    retest(dir, &["build", "--", "cmake", "--build", "build"], 0);
    // the CTest files changed: the list is made again
    let v = retest(dir, &["select", "-v", "--format", "names"], 0);
    assert!(stderr(&v).contains("CTest's list made by ctest"), "{}", stderr(&v));
    assert_eq!(selected(dir, "dejavu"), set(&all));
    let why = stdout(&retest(dir, &["select"], 0));
    assert!(why.contains("definition changed: timeout 30s → 20s"), "{why}");
}

/// A Catch2 suite (Debian's catch2, v2) built through `retest build` with
/// make: `[[catch2]]` makes each test case a test, named after the case,
/// whatever characters Catch2's test specs read specially (`,`, `[…]`,
/// `exclude:`), hidden cases left out; a change to `mul` selects the cases
/// that call it.
#[test]
fn catch2_cases_are_selected_one_by_one() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (`.ci/run` installs g++ and catch2)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write_calc(dir);
    std::fs::write(
        dir.join("Makefile"),
        "catch_tests: calc.o tests.o\n\t$(CXX) -o $@ calc.o tests.o -lCatch2WithMain\n\
         %.o: %.cc calc.h\n\t$(CXX) -O0 -c $< -o $@\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tests.cc"),
        "#include <catch2/catch.hpp>\n#include \"calc.h\"\n\
         TEST_CASE(\"add, small\", \"[add]\") { REQUIRE(add(2, 3) == 5); }\n\
         TEST_CASE(\"mul [by] add\") { REQUIRE(mul(2, 3) == 6); }\n\
         TEST_CASE(\"exclude: negation\") { REQUIRE(neg(2) == -2); }\n\
         TEST_CASE(\"~ hidden one\", \"[.]\") { REQUIRE(mul(1, 1) == 1); }\n\
         SCENARIO(\"mul of zero\") { GIVEN(\"zero\") { REQUIRE(mul(5, 0) == 0); } }\n",
    )
    .unwrap();
    std::fs::write(dir.join("retest.toml"), "[[catch2]]\nbinary = \"catch_tests\"\ntimeout = 30\n").unwrap();
    retest(dir, &["init"], 0);
    let b = retest(dir, &["build", "--", "make", "-s"], 0);
    assert!(stderr(&b).contains("2 translation unit(s) instrumented"), "{}", stderr(&b));
    let r = retest(dir, &["run"], 0);
    assert!(stdout(&r).contains("4 passed, 0 failed"), "{}", stdout(&r));
    let names: BTreeSet<String> = test_names(dir).into_iter().collect();
    let all = [
        "catch_tests/add, small",
        "catch_tests/mul [by] add",
        "catch_tests/exclude: negation",
        "catch_tests/Scenario: mul of zero",
    ];
    assert_eq!(names, set(&all));

    write_newer(&dir.join("calc.cc"), calc_changed());
    retest(dir, &["build", "--", "make", "-s"], 0);
    assert_eq!(selected(dir, "dejavu"), set(&["catch_tests/mul [by] add", "catch_tests/Scenario: mul of zero"]));
}

/// A header's `static inline` function compiled into two units (a copy in
/// each) and run from both by
/// one test counts that test once, per line, branch and function (it counted
/// once per unit: 2 tests for 1).
#[test]
fn header_code_in_several_units_counts_each_test_once() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("h.h"),
        "static inline int twice(int v) {\n    if (v > 0)\n        return 2 * v;\n    return 0;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.cc"), "#include \"h.h\"\nint from_a(int v) { return twice(v); }\n").unwrap();
    std::fs::write(
        dir.join("b.cc"),
        "#include <cstdio>\n#include \"h.h\"\nint from_a(int);\nint main() { std::printf(\"%d\\n\", from_a(1) + twice(2)); return 0; }\n",
    )
    .unwrap();
    make_project(dir, "p: a.cc b.cc h.h\n\t$(CXX) -O0 -o p a.cc b.cc\n", &[("one", "./p")]);
    retest(dir, &["run"], 0);
    let cov = json(&retest(dir, &["coverage", "--format", "json"], 0));
    let h = cov["files"].as_array().unwrap().iter().find(|f| f["path"] == "h.h").expect("h.h in the report");
    let lines = h["lines"].as_array().unwrap();
    assert!(lines.iter().all(|l| l[1].as_u64().unwrap() <= 1), "{h}");
    assert_eq!(lines.iter().find(|l| l[0] == 3).map(|l| l[1].clone()), Some(1.into()), "{h}");
    for b in h["branch_outcomes"].as_array().unwrap() {
        assert!(b[3].as_u64().unwrap() <= 1, "{h}");
    }
    for f in h["functions"].as_array().unwrap() {
        assert_eq!(f["tests"], 1, "{h}");
    }
}

/// A `?:` in a template argument is a constant expression: no probe goes
/// there (one did, and the unit no longer compiled: fmt's bundled gtest.h).
#[test]
fn a_condition_in_a_template_argument_is_not_probed() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("ta.cc"),
        "#include <cstdio>\n#include <tuple>\n#include <type_traits>\n\
         template <class P> int pick(int a, long b) {\n\
             return std::get<(std::is_convertible<P, long>::value ? 1 : 0)>(std::make_tuple(a, (int)b));\n}\n\
         int main(int argc, char **) { std::printf(\"%d\\n\", pick<int>(argc, 7)); return 0; }\n",
    )
    .unwrap();
    // and a member initialiser that expands a pack (fmt's os.h) keeps no probe
    // in its arguments: `P((probe, xs...))` is no C++
    std::fs::write(
        dir.join("pk.cc"),
        "#include <cstdio>\nstruct P {\n    int a = 0, flag = 0;\n    P() {}\n    explicit P(int x) : a(x) {}\n\
             template <typename... T> P(T... xs, int f) : P(xs...) { flag = f; }\n};\n\
         int main(int argc, char **) { P q(argc); std::printf(\"%d %d\\n\", q.a, q.flag); return 0; }\n",
    )
    .unwrap();
    make_project(
        dir,
        "all: ta pk\nta: ta.cc\n\t$(CXX) -O0 -o ta ta.cc\npk: pk.cc\n\t$(CXX) -O0 -o pk pk.cc\n",
        &[("t", "./ta")],
    );
    let out = std::process::Command::new(dir.join("ta")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n");
    let out = std::process::Command::new(dir.join("pk")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1 0\n");
}

/// The reasons of the selected tests, per test, from `select --format json`.
fn reason_kinds(dir: &Path, extra: &[&str]) -> (BTreeSet<String>, BTreeSet<String>, serde_json::Value) {
    let mut args = vec!["select", "--format", "json"];
    args.extend(extra);
    let v = json(&retest(dir, &args, 0));
    let mut names = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    for t in v["selected"].as_array().unwrap() {
        names.insert(t["name"].as_str().unwrap().to_string());
        for r in t["reasons"].as_array().into_iter().flatten() {
            kinds.insert(r["kind"].as_str().unwrap_or_default().to_string());
        }
    }
    (names, kinds, v)
}

/// 003 §5.2, Fig. 13: a new override that no test instantiates changes the
/// target set of the polymorphic call `eptr->go(…)` (static type
/// `Elevator *`) though no statement of the program changed: every test
/// through the call is selected, for that reason. A new override of a
/// method the call cannot reach (`Alarm`'s, an unrelated class) selects
/// nothing. Then 003 §6.4 and §5.5: a changed constructor selects every
/// test, and none with `--skip-constructor-and-operator-changes`, which lists
/// what it set aside; a change in `main`, named driver code by
/// `not_under_test`, likewise. `retest audit` finds no miss where nothing
/// was set aside.
#[test]
fn polymorphic_call_targets_and_set_aside_changes_select_as_the_paper_says() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let v0 = source();
    write(dir, &v0);
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    retest(dir, &["run"], 0);
    let all = set(&["t1", "t2", "t3", "t4", "alarm_up", "alarm_same"]);
    let at = |v: &str| {
        rebuild(dir, v);
    };
    // an override in a class no test builds
    let express = "class Express : public Elevator {\npublic:\n    Express() : Elevator(20) {}\n    void go(int floor) override { Elevator::go(floor + 1); }\n};\n\nint main(";
    let v1 = v0.replacen("int main(", express, 1);
    at(&v1);
    let (names, kinds, v) = reason_kinds(dir, &[]);
    assert_eq!(names, all, "{v}");
    assert!(kinds.contains("dispatch"), "{v}");
    assert!(v.to_string().contains("+Express::go(int)"), "{v}");
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    // a class outside the call's hierarchy with a method of the same name
    let other = "class Crane {\npublic:\n    virtual ~Crane() {}\n    virtual void go(int floor) { (void)floor; }\n};\n\nint main(";
    at(&v0.replacen("int main(", other, 1));
    let (names, _, v) = reason_kinds(dir, &[]);
    assert!(!names.contains("t1") && !names.contains("t2"), "unrelated override selected: {v}");

    // a changed default argument of a method the call reaches
    let v4 = v0.replace("virtual void go(int floor) {", "virtual void go(int floor = 3) {");
    assert_ne!(v4, v0);
    at(&v4);
    assert_eq!(reason_kinds(dir, &[]).0, all);
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");

    // 003 §6.4: constructor changes set aside
    let v2 = v0.replace("        current_floor = 1;\n", "        current_floor = 1 + 0;\n");
    assert_ne!(v2, v0);
    at(&v2);
    assert_eq!(reason_kinds(dir, &[]).0, all);
    let skipped = retest(dir, &["select", "--skip-constructor-and-operator-changes"], 0);
    assert!(
        stderr(&skipped).contains("set aside") && stderr(&skipped).contains("Elevator::Elevator(int)"),
        "{}",
        stderr(&skipped)
    );
    assert!(reason_kinds(dir, &["--skip-constructor-and-operator-changes"]).0.is_empty());

    // 003 §5.5: the driver (`main`) named as not under test
    let v3 = v0.replace("int floor = argc > 2 ? atoi(argv[2]) : 5;", "int floor = argc > 2 ? atoi(argv[2]) : 6;");
    assert_ne!(v3, v0);
    at(&v3);
    assert_eq!(reason_kinds(dir, &[]).0, all);
    let toml = std::fs::read_to_string(dir.join("retest.toml")).unwrap();
    std::fs::write(dir.join("retest.toml"), format!("[select]\nnot_under_test = [\"main(*\"]\n\n{toml}")).unwrap();
    let s = retest(dir, &["select", "--format", "json"], 0);
    assert!(json(&s)["selected"].as_array().unwrap().is_empty(), "{}", stdout(&s));
    assert!(stderr(&s).contains("not_under_test"), "{}", stderr(&s));
    // a pattern may name the procedure's unit too (its key: `FILE@OBJECT::NAME`),
    // as for the GoogleTest registrations of test files only
    for (pattern, selects) in [("other.cc@*::main(*", true), ("elevator.cc@*::main(*", false)] {
        std::fs::write(dir.join("retest.toml"), format!("[select]\nnot_under_test = [\"{pattern}\"]\n\n{toml}"))
            .unwrap();
        let s = retest(dir, &["select", "--format", "json"], 0);
        let n = json(&s)["selected"].as_array().unwrap().len();
        assert_eq!(n == all.len(), selects, "{pattern}: {}", stdout(&s));
        assert_eq!(n == 0, !selects, "{pattern}: {}", stdout(&s));
    }
}

/// A generated class: its base (an earlier class) and its methods `(name,
/// parameters, virtual)`.
type GenClass = (Option<usize>, Vec<(usize, u32, bool)>);

/// A generated class hierarchy.
#[derive(Clone, Debug)]
struct Hier {
    classes: Vec<GenClass>,
    /// Call sites: (dynamic class, static class — a base of it or itself,
    /// method, arguments, how: 0 pointer, 1 reference, 2 object).
    sites: Vec<(usize, usize, usize, u32, u8)>,
}

fn hier_strategy() -> impl proptest::strategy::Strategy<Value = Hier> {
    use proptest::prelude::*;
    (2usize..6)
        .prop_flat_map(|n| {
            let classes = (0..n)
                .map(|i| {
                    let base = if i == 0 { Just(None).boxed() } else { proptest::option::of(0..i).boxed() };
                    let methods = proptest::collection::vec((0usize..2, 1u32..3, proptest::bool::weighted(0.7)), 1..4);
                    (base, methods)
                })
                .collect::<Vec<_>>();
            (classes, proptest::collection::vec((0..n, any::<u16>(), 0usize..2, 1u32..3, 0u8..3), 4..12))
        })
        .prop_map(|(classes, raw)| {
            // one declaration per (name, parameters) in a class
            let classes: Vec<GenClass> = classes
                .into_iter()
                .map(|(b, mut ms)| {
                    ms.sort();
                    ms.dedup_by_key(|m| (m.0, m.1));
                    (b, ms)
                })
                .collect();
            let ancestors = |mut c: usize| {
                let mut v = vec![c];
                while let Some(b) = classes[c].0 {
                    v.push(b);
                    c = b;
                }
                v
            };
            let sites = raw
                .into_iter()
                .map(|(dynamic, pick, m, args, how)| {
                    let up = ancestors(dynamic);
                    let stat = up[pick as usize % up.len()];
                    (dynamic, if how == 2 { dynamic } else { stat }, m, args, how)
                })
                .collect();
            Hier { classes, sites }
        })
}

/// The C++ program of a hierarchy: every method prints its key; `main` runs
/// each call site that name lookup can resolve, after printing its number.
fn hier_program(h: &Hier) -> (String, Vec<Option<usize>>) {
    let params = |n: u32| vec!["int"; n as usize].join(", ");
    let mut src = String::from("#include <cstdio>\n\n");
    for (i, (base, methods)) in h.classes.iter().enumerate() {
        let head = match base {
            Some(b) => format!("struct C{i} : public C{b}"),
            None => format!("struct C{i}"),
        };
        src.push_str(&format!("{head} {{\n    virtual ~C{i}() {{}}\n"));
        for (m, n, v) in methods {
            let args: Vec<String> = (0..*n).map(|k| format!("int a{k}")).collect();
            let used: Vec<String> = (0..*n).map(|k| format!("(void)a{k};")).collect();
            src.push_str(&format!(
                "    {}void m{m}({}) {{ {} std::puts(\"C{i}::m{m}({})\"); }}\n",
                if *v { "virtual " } else { "" },
                args.join(", "),
                used.join(" "),
                params(*n)
            ));
        }
        src.push_str("};\n\n");
    }
    // which sites compile: lookup from the static class finds m with that arity
    let finds = |mut c: usize, m: usize, n: u32| loop {
        let ms = &h.classes[c].1;
        if ms.iter().any(|x| x.0 == m) {
            return ms.iter().any(|x| x.0 == m && x.1 == n);
        }
        match h.classes[c].0 {
            Some(b) => c = b,
            None => return false,
        }
    };
    src.push_str("int main() {\n");
    let mut numbered = Vec::new();
    for (k, (dynamic, stat, m, n, how)) in h.sites.iter().enumerate() {
        if !finds(*stat, *m, *n) {
            numbered.push(None);
            continue;
        }
        numbered.push(Some(k));
        let args: Vec<String> = (0..*n).map(|a| a.to_string()).collect();
        src.push_str(&format!("    std::puts(\"site {k}\");\n"));
        match how {
            0 => src.push_str(&format!(
                "    {{ C{stat} *p{k} = new C{dynamic}(); p{k}->m{m}({}); delete p{k}; }}\n",
                args.join(", ")
            )),
            1 => src.push_str(&format!(
                "    {{ C{dynamic} o{k}; C{stat} &r{k} = o{k}; r{k}.m{m}({}); }}\n",
                args.join(", ")
            )),
            _ => src.push_str(&format!("    {{ C{dynamic} o{k}; o{k}.m{m}({}); }}\n", args.join(", "))),
        }
    }
    src.push_str("    return 0;\n}\n");
    (src, numbered)
}

/// 003 §5.2's requirement on the target sets, checked against the compiler:
/// on random single-inheritance hierarchies (virtual and non-virtual
/// methods, overloads by arity, hiding) and calls through pointers,
/// references and objects of a random static type, the method each call
/// actually runs — printed by the compiled program — is in the target set
/// selection computes for that call from the front end's unit.
#[test]
fn dispatch_targets_contain_every_method_the_compiled_program_reaches() {
    use proptest::test_runner::{Config, TestRunner};
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let dir = tempfile::tempdir().unwrap();
    let mut runner = TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
    runner
        .run(&hier_strategy(), |h| {
            let (src, numbered) = hier_program(&h);
            let file = dir.path().join("h.cc");
            std::fs::write(&file, &src).unwrap();
            let exe = dir.path().join("h");
            let cc = std::process::Command::new("c++").arg("-o").arg(&exe).arg(&file).output().unwrap();
            assert!(cc.status.success(), "{src}\n{}", String::from_utf8_lossy(&cc.stderr));
            let out = String::from_utf8(std::process::Command::new(&exe).output().unwrap().stdout).unwrap();
            // what ran at each site: the first method line after its number
            let mut ran: BTreeMap<usize, String> = BTreeMap::new();
            let mut site = None;
            for l in out.lines() {
                if let Some(k) = l.strip_prefix("site ") {
                    site = Some(k.parse::<usize>().unwrap());
                } else if let Some(k) = site.take() {
                    ran.insert(k, l.to_string());
                }
            }
            let pre = retest_lang_c::run_preprocessor("c++", &[], Path::new("h.cc"), dir.path()).unwrap();
            let unit = retest_lang_c::cpp::analyze(&pre, &|f| !f.system, retest_lang_c::cpp::Dialect::DEFAULT).unit;
            let classes = retest_select::hierarchy::Hierarchy::of(&unit.classes);
            let main = unit.procedures.iter().find(|p| p.name == "main()").expect("main");
            let calls: Vec<&retest_graph::cfg::Dispatch> = main
                .stmt
                .nodes()
                .flat_map(|(_, n)| n.dispatch.iter())
                .filter(|d| d.name.starts_with('m') && !d.name.starts_with("main"))
                .collect();
            let sites: Vec<usize> = numbered.iter().flatten().copied().collect();
            proptest::prop_assert_eq!(calls.len(), sites.len(), "{}", src);
            for (d, k) in calls.iter().zip(&sites) {
                let targets = classes.targets(d);
                let actual = &ran[k];
                proptest::prop_assert!(
                    targets.keys.contains(actual),
                    "site {k}: `{actual}` ran, targets {:?} ({d:?})\n{src}",
                    targets.keys
                );
            }
            Ok(())
        })
        .unwrap();
}

/// A class-test driver for the seed's classes (003 §4.2): each test builds
/// an object and calls a sequence of public methods, as a frame does.
const CLASS_TESTS: &str = r#"#define main elevator_main
#include "elevator.cc"
#undef main
#include <cstring>
int main(int argc, char **argv) {
    const char *t = argc > 1 ? argv[1] : "";
    if (!strcmp(t, "t1")) { Elevator e(10); e.go(-1); }
    if (!strcmp(t, "t2")) { Elevator e(10); e.go(5); e.go(5); }
    if (!strcmp(t, "t3")) { Elevator e(10); e.go(5); e.go(2); }
    if (!strcmp(t, "t4")) { Elevator e(10); e.go(2); e.go(2); }
    if (!strcmp(t, "a1")) { AlarmElevator a(10); a.go(3); a.go(3); }
    if (!strcmp(t, "a2")) { AlarmElevator a(10); a.check_weight(2000); }
    return 0;
}
"#;

/// 003 §4.2 with class tests: `go'` (Fig. 6) selects the class tests of
/// `Elevator` that reach line 40 — t2, t3 and t4 (each calls `go` a second
/// time from a floor it reached) — and not t1; `which_floor`, new, pairs
/// with nothing. The class `AlarmElevator`, derived from it and built
/// against the modified base, is retested: its test that runs the inherited
/// `go` past line 40. A change in `Alarm`, outside both classes, selects no
/// class test of either (intraclass testing, §5.1) and is counted, while
/// the program-level selection takes the test that reaches it.
#[test]
fn class_level_selection_retests_the_class_and_its_derived_classes() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let v0 = source();
    std::fs::write(dir.join("elevator.cc"), &v0).unwrap();
    std::fs::write(dir.join("class_tests.cc"), CLASS_TESTS).unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "class_tests: class_tests.cc elevator.cc\n\t$(CXX) -O0 -o $@ class_tests.cc\n",
    )
    .unwrap();
    let mut toml = String::new();
    for t in ["t1", "t2", "t3", "t4", "a1", "a2"] {
        toml.push_str(&format!("[[test]]\nname = \"{t}\"\ncmd = \"./class_tests {t}\"\n\n"));
    }
    std::fs::write(dir.join("retest.toml"), toml).unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    retest(dir, &["run"], 0);
    let class = |c: &str| {
        let v = json(&retest(dir, &["select", "--class", c, "--format", "json"], 0));
        v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    };
    let v1 = v0.replace("#define ELEVATOR_V 0", "#define ELEVATOR_V 1");
    write_newer(&dir.join("elevator.cc"), &v1);
    retest(dir, &["build", "--", "make", "-s"], 0);
    let elevator: BTreeSet<String> = class("Elevator");
    assert!(set(&["t2", "t3", "t4"]).is_subset(&elevator) && !elevator.contains("t1"), "{elevator:?}");
    let derived: BTreeSet<String> = class("AlarmElevator");
    assert!(derived.contains("a1") && !derived.contains("a2"), "{derived:?}");
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    retest(dir, &["run"], 0);

    // Alarm changes: no class test of Elevator or AlarmElevator, but the program's
    write_newer(&dir.join("elevator.cc"), v1.replace("{ alarm_on = 1; }", "{ alarm_on = 2; }"));
    retest(dir, &["build", "--", "make", "-s"], 0);
    assert!(class("Elevator").is_empty());
    assert!(class("AlarmElevator").is_empty());
    let s = retest(dir, &["select", "--class", "AlarmElevator"], 0);
    assert!(stderr(&s).contains("not considered"), "{}", stderr(&s));
    assert_eq!(selected(dir, "dejavu"), set(&["a2"]));
    let bad = retest(dir, &["select", "--class", "Escalator"], 2);
    assert!(
        stderr(&bad).contains("no class `Escalator`") && stderr(&bad).contains("AlarmElevator"),
        "{}",
        stderr(&bad)
    );
}

const GRAPH_H: &str = "#include <string>\n#include <vector>\n\
struct Node {\n  Node(const std::string& p) : path_(p) {}\n  const std::string& path() const { return path_; }\n\
  std::string path_;\n  bool dirty_ = false;\n  int id_ = -1;\n  std::vector<Node*> out_;\n};\n\
static const unsigned long value = sizeof(Node);\n";

const GRAPH_CC: &str = "#include <cstdio>\n#include <cstring>\n#include <string>\n#include \"graph.h\"\n\
static int nodes(const char* p) {\n  Node n(p);\n  n.id_ = 3;\n  return n.id_ + (int)n.path().size();\n}\n\
static int words(const char* p) {\n  std::string s(p);\n  s += \"-x\";\n  return (int)s.size();\n}\n\
int main(int argc, char** argv) {\n  if (argc < 3) return 2;\n\
  int r = std::strcmp(argv[1], \"node\") == 0 ? nodes(argv[2]) : words(argv[2]);\n\
  std::printf(\"%d\\n\", r);\n  return 0;\n}\n";

/// A change of a class's layout (ninja's `Node`: a member moved, an enum given
/// an underlying type) selects the tests that use the class, not every test that
/// uses a `std::string`: the library's declarations are affected only by their
/// own change, never through a project name of the same spelling (here
/// `value`, which libstdc++'s declarations mention as `integral_constant`'s
/// member; in ninja a member or parameter `path`, `result`, `it`).
#[test]
fn a_class_layout_change_selects_its_users_not_every_user_of_the_library() {
    assert!(have("g++"), "g++ is needed (installed by .ci/run)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("graph.h"), GRAPH_H).unwrap();
    std::fs::write(dir.join("graph.cc"), GRAPH_CC).unwrap();
    make_project(
        dir,
        "graph: graph.cc graph.h\n\t$(CXX) -O0 -o graph graph.cc\n",
        &[("node", "./graph node abc"), ("words", "./graph words abc")],
    );
    retest(dir, &["run"], 0);
    let moved =
        GRAPH_H.replace("  bool dirty_ = false;\n  int id_ = -1;\n", "  int id_ = -1;\n  bool dirty_ = false;\n");
    assert_ne!(moved, GRAPH_H);
    write_newer(&dir.join("graph.h"), &moved);
    retest(dir, &["build", "--", "make", "-s"], 0);
    assert_eq!(selected(dir, "dejavu"), set(&["node"]));
    let v = json(&retest(dir, &["select", "--format", "json"], 0));
    let reasons = v["selected"][0]["reasons"].to_string();
    assert!(reasons.contains("Node"), "{reasons}");
    assert!(!reasons.contains("`string`"), "{reasons}");
}

const SCOPES_CC: &str = "#include <iostream>\n\
namespace n {\n\
int magnitude(int v) { return v > 0 ? v : -v; }\n\
const int LIMIT = 10;\n\
using Count = short;\n\
enum Level { LOW = 1, HIGH = 5 };\n\
int below(int v) { return v < LIMIT ? 1 : 0; }\n\
int wraps(int v) { Count c = static_cast<Count>(v); return c < 0 ? 1 : 0; }\n\
int level(int v) { return v >= HIGH ? 2 : 1; }\n\
}\n\
extern \"C\" {\n\
int cap = 3;\n\
int capped(int v) { return v > cap ? cap : v; }\n\
}\n\
int main(int argc, char **argv) {\n\
    std::string t = argc > 1 ? argv[1] : \"\";\n\
    int r = t == \"magnitude\" ? n::magnitude(-4) : t == \"below\" ? n::below(5) : t == \"wraps\" ? n::wraps(40000)\n\
          : t == \"level\" ? n::level(5) : capped(7);\n\
    std::cout << r << '\\n';\n\
    return 0;\n\
}\n";

/// A change to a declaration in a namespace or an `extern \"C\"` block — a
/// constant, a type alias, an enumerator, a variable — selects the tests
/// whose code uses it (such declarations were once not declarations at all,
/// and their changes selected nothing), and so does a change to the function
/// right after `#include <iostream>` (which the front end once did not find:
/// the parser's misreading of the header took it in). `retest audit` finds
/// no miss at any step.
#[test]
fn declarations_in_namespaces_select_the_tests_that_use_them() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("scopes.cc"), SCOPES_CC).unwrap();
    std::fs::write(dir.join("Makefile"), "scopes: scopes.cc\n\t$(CXX) -O0 -o scopes scopes.cc\n").unwrap();
    let mut toml = String::new();
    for t in ["magnitude", "below", "wraps", "level", "capped"] {
        toml.push_str(&format!("[[test]]\nname = \"{t}\"\ncmd = \"./scopes {t}\"\n\n"));
    }
    std::fs::write(dir.join("retest.toml"), toml).unwrap();
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    retest(dir, &["run"], 0);
    let out = |t: &str| {
        let o = std::process::Command::new(dir.join("scopes")).arg(t).output().unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(["magnitude", "below", "wraps", "level", "capped"].map(out), ["4", "1", "1", "2", "3"]);
    let mut src = SCOPES_CC.to_string();
    for (from, to, test, now) in [
        ("LIMIT = 10", "LIMIT = 4", "below", "0"),
        ("using Count = short", "using Count = int", "wraps", "0"),
        ("HIGH = 5", "HIGH = 6", "level", "1"),
        ("int cap = 3", "int cap = 8", "capped", "7"),
        ("v > 0 ? v : -v", "v >= 0 ? v : 0 - v", "magnitude", "4"),
    ] {
        src = src.replacen(from, to, 1);
        write_newer(&dir.join("scopes.cc"), &src);
        retest(dir, &["build", "--", "make", "-s"], 0);
        assert_eq!(out(test), now, "{from} -> {to}");
        assert_eq!(selected(dir, "dejavu"), set(&[test]), "{from} -> {to}");
        let a = json(&retest(dir, &["audit", "--format", "json"], 0));
        assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{from} -> {to}: {a}");
        retest(dir, &["run"], 0);
    }
}

/// Two namespaces with an overload of `pick` each; the program calls `pick(1)`
/// under `using namespace wide;`. Adding `using namespace exact;` (at
/// namespace scope, then inside the function instead) changes which `pick` the
/// call means, and the test's output, while the call's text stays: the test
/// is selected, with the directive as the reason, and `audit` finds no miss.
/// (A directive's change once affected only statements that named the
/// namespace, and selected nothing here.) A changed directive may change what
/// any name means: every statement that names anything is affected, in every
/// unit (not here: the other program's `main` names nothing).
#[test]
fn a_using_directive_selects_the_tests_whose_calls_it_may_change() {
    assert!(have("c++"), "the C++ compiler `c++` is needed (apt-get install g++)");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let lib = "namespace wide { inline int pick(long) { return 1; } }\n\
               namespace exact { inline int pick(int) { return 2; } }\n";
    std::fs::write(dir.join("lib.h"), lib).unwrap();
    let main = |directive: &str, local: &str| {
        format!(
            "#include <cstdio>\n#include <cstring>\n#include \"lib.h\"\nusing namespace wide;\n{directive}\n\
             int main(int argc, char **argv) {{\n  {local}\n  if (argc > 1 && std::strcmp(argv[1], \"pick\") == 0)\n\
             std::printf(\"%d\\n\", pick(1));\n  else\n    std::printf(\"0\\n\");\n  return 0;\n}}\n"
        )
    };
    std::fs::write(dir.join("prog.cc"), main("", "")).unwrap();
    std::fs::write(dir.join("other.cc"), "#include \"lib.h\"\nint main() { return 0; }\n").unwrap();
    make_project(
        dir,
        "all: prog other\nprog: prog.cc lib.h\n\t$(CXX) -O0 -o prog prog.cc\n\
         other: other.cc lib.h\n\t$(CXX) -O0 -o other other.cc\n",
        &[("pick", "./prog pick"), ("other", "./other")],
    );
    retest(dir, &["run"], 0);
    let out = || {
        let o = std::process::Command::new(dir.join("prog")).arg("pick").output().unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(out(), "1");
    for (directive, local, now) in
        [("using namespace exact;", "", "2"), ("", "", "1"), ("", "using namespace exact;", "2"), ("", "", "1")]
    {
        write_newer(&dir.join("prog.cc"), main(directive, local));
        retest(dir, &["build", "--", "make", "-s"], 0);
        assert_eq!(out(), now, "{directive:?} {local:?}");
        let v = json(&retest(dir, &["select", "--format", "json"], 0));
        let names: Vec<&str> = v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["pick"], "{directive:?} {local:?}: {v}");
        assert!(v.to_string().contains("using namespace exact"), "{directive:?} {local:?}: {v}");
        let a = json(&retest(dir, &["audit", "--format", "json"], 0));
        assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{directive:?} {local:?}: {a}");
        retest(dir, &["run"], 0);
    }
}
