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

mod common;

use std::collections::BTreeSet;
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

    // CTest's TIMEOUT is part of every case's definition
    retest(dir, &["run"], 0);
    write_newer(&dir.join("CMakeLists.txt"), cmake.replace("TIMEOUT 30", "TIMEOUT 20"));
    retest(dir, &["build", "--", "cmake", "--build", "build"], 0);
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
