//! Discovery from `retest.toml`, universe files and CTest build directories.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use retest_run::discover::{DiscoverError, TestSpec, from_ctest, from_toml, from_universe, shell_quote};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

fn spec(name: &str, cmd: &str, cwd: &Path) -> TestSpec {
    TestSpec { name: name.into(), key: name.into(), cmd: cmd.into(), cwd: cwd.to_path_buf(), ..Default::default() }
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

// ---------------------------------------------------------------------------
// retest.toml

#[test]
fn toml_full_example() {
    let dir = tempfile::tempdir().unwrap();
    let root = &dir.path().canonicalize().unwrap();
    let path = write(
        root,
        "retest.toml",
        r#"
[defaults]
timeout = 60
env = { LC_ALL = "C", MODE = "default" }

[[test]]
name = "plain"
cmd = "./prog < in/1.txt"

[[test]]
name = "custom"
cmd = "make check"
cwd = "./build/../sub/"
env = { MODE = "strict", EXTRA = "x y" }
timeout = 2.5

[[test]]
name = "absolute"
cmd = "true"
cwd = "/tmp"
timeout = 3
"#,
    );
    let specs = from_toml(&path).unwrap();
    let defaults = env(&[("LC_ALL", "C"), ("MODE", "default")]);
    assert_eq!(
        specs,
        vec![
            TestSpec {
                env: defaults.clone(),
                timeout: Some(Duration::from_secs(60)),
                ..spec("plain", "./prog < in/1.txt", root)
            },
            TestSpec {
                env: env(&[("EXTRA", "x y"), ("LC_ALL", "C"), ("MODE", "strict")]),
                timeout: Some(Duration::from_millis(2500)),
                ..spec("custom", "make check", &root.join("build/../sub"))
            },
            TestSpec {
                env: defaults,
                timeout: Some(Duration::from_secs(3)),
                ..spec("absolute", "true", Path::new("/tmp"))
            },
        ]
    );
}

#[test]
fn toml_relative_path_is_made_absolute() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("proj")).unwrap();
    write(&dir.path().join("proj"), "retest.toml", "[[test]]\nname = \"a\"\ncmd = \"true\"\ncwd = \"tests\"\n");
    // Relative to the current directory of the test process.
    let cwd = std::env::current_dir().unwrap();
    let rel: PathBuf = pathdiff(&dir.path().join("proj/retest.toml"), &cwd);
    let specs = from_toml(&rel).unwrap();
    assert_eq!(specs[0].cwd, dir.path().canonicalize().unwrap().join("proj/tests"));
    assert!(specs[0].cwd.is_absolute());
}

/// `target` relative to `base` (both absolute), through `..` components.
fn pathdiff(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[test]
fn toml_without_tests_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "retest.toml", "# nothing yet\n");
    assert_eq!(from_toml(&path).unwrap(), vec![]);
}

#[test]
fn toml_unknown_key_in_test_names_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "retest.toml",
        "[[test]]\nname = \"a\"\ncmd = \"true\"\n\n[[test]]\nname = \"b\"\ncmd = \"true\"\ntimout = 5\n",
    );
    match from_toml(&path).unwrap_err() {
        DiscoverError::UnknownKey { path: p, line, key, expected } => {
            assert_eq!(p, path);
            assert_eq!(line, 8);
            assert_eq!(key, "timout");
            assert_eq!(expected, "one of `name`, `cmd`, `cwd`, `env`, `timeout`, `inputs`");
        }
        e => panic!("unexpected error {e:?}"),
    }
    let msg = from_toml(&path).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}:8: unknown key `timout` (expected one of `name`, `cmd`, `cwd`, `env`, `timeout`, `inputs`) — remove it or correct its spelling",
            path.display()
        )
    );
}

#[test]
fn toml_unknown_top_level_and_defaults_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.toml", "\n\ntests = []\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::UnknownKey { line, key, .. } => {
            assert_eq!((line, key.as_str()), (3, "tests"));
        }
        e => panic!("unexpected error {e:?}"),
    }
    let path = write(dir.path(), "b.toml", "[defaults]\ntimeout = 1\njobs = 4\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::UnknownKey { line, key, .. } => {
            assert_eq!((line, key.as_str()), (3, "jobs"));
        }
        e => panic!("unexpected error {e:?}"),
    }
}

#[test]
fn toml_duplicate_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "retest.toml",
        "[[test]]\nname = \"same\"\ncmd = \"true\"\n[[test]]\nname = \"other\"\ncmd = \"true\"\n[[test]]\ncmd = \"false\"\nname = \"same\"\n",
    );
    let err = from_toml(&path).unwrap_err();
    match &err {
        DiscoverError::DuplicateName { line, first_line, name, .. } => {
            assert_eq!((*line, *first_line, name.as_str()), (9, 2, "same"))
        }
        e => panic!("unexpected error {e:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!(
            "{}:9: duplicate test name `same` (first defined on line 2) — give every test a unique name",
            path.display()
        )
    );
}

#[test]
fn toml_bad_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    for (value, found) in [("\"10s\"", "\"10s\""), ("-1", "-1"), ("0", "0"), ("nan", "nan"), ("true", "true")] {
        let path =
            write(dir.path(), "retest.toml", &format!("[[test]]\nname = \"a\"\ncmd = \"true\"\ntimeout = {value}\n"));
        match from_toml(&path).unwrap_err() {
            DiscoverError::BadTimeout { line, found: f, .. } => {
                assert_eq!((line, f.as_str()), (4, found), "timeout = {value}");
            }
            e => panic!("unexpected error {e:?} for timeout = {value}"),
        }
    }
    let path = write(dir.path(), "d.toml", "[defaults]\ntimeout = \"x\"\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::BadTimeout { line, .. } => assert_eq!(line, 2),
        e => panic!("unexpected error {e:?}"),
    }
}

#[test]
fn toml_wrong_types_and_missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "retest.toml", "[[test]]\nname = \"a\"\ncmd = \"true\"\nenv = { A = 1 }\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::Toml { line, column, message, .. } => {
            assert_eq!((line, column), (4, 13));
            assert_eq!(message, "invalid type: integer `1`, expected a string");
        }
        e => panic!("unexpected error {e:?}"),
    }
    let path = write(dir.path(), "b.toml", "\n[[test]]\nname = \"a\"\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::Toml { line, message, .. } => {
            assert_eq!((line, message.as_str()), (2, "missing field `cmd`"));
        }
        e => panic!("unexpected error {e:?}"),
    }
    let path = write(dir.path(), "c.toml", "[[test]\nname = \"a\"\n");
    assert!(matches!(from_toml(&path).unwrap_err(), DiscoverError::Toml { line: 1, .. }));
    let path = write(dir.path(), "d.toml", "[[test]]\nname = \" \"\ncmd = \"true\"\n");
    match from_toml(&path).unwrap_err() {
        DiscoverError::Invalid { line, message, .. } => {
            assert_eq!(line, 2);
            assert!(message.starts_with("test name is empty"), "{message}");
        }
        e => panic!("unexpected error {e:?}"),
    }
    let path = write(dir.path(), "e.toml", "[[test]]\nname = \"a\"\ncmd = \"\"\n");
    assert!(matches!(from_toml(&path).unwrap_err(), DiscoverError::Invalid { line: 3, .. }));
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.toml");
    let err = from_toml(&path).unwrap_err();
    assert!(matches!(&err, DiscoverError::Read { path: p, .. } if *p == path));
    assert!(err.to_string().starts_with(&format!("cannot read {}: ", path.display())), "{err}");
    let err = from_universe(&dir.path().join("universe")).unwrap_err();
    assert!(matches!(err, DiscoverError::Read { .. }));
}

// ---------------------------------------------------------------------------
// Universe files

#[test]
fn universe_names_count_non_empty_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "universe",
        "-P -f ../inputs/t1\n\n   \n# a comment is a command\n\t\nprog < in2 > out2\r\nlast without newline",
    );
    let specs = from_universe(&path).unwrap();
    let root = &dir.path().canonicalize().unwrap();
    let universe = |name: &str, cmd: &str| TestSpec { key: cmd.into(), ..spec(name, cmd, root) };
    assert_eq!(
        specs,
        vec![
            universe("t1", "-P -f ../inputs/t1"),
            universe("t2", "# a comment is a command"),
            universe("t3", "prog < in2 > out2"),
            universe("t4", "last without newline"),
        ]
    );
}

/// A universe test is its command: inserting a line renames the tests below
/// it (`tN` counts lines) but leaves their keys alone; a repeated line is a
/// test of its own.
#[test]
fn universe_keys_are_commands_and_survive_insertions() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "universe", "a 1\nb 2\na 1\n");
    let before = from_universe(&path).unwrap();
    let keys: Vec<&str> = before.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(keys, ["a 1", "b 2", "a 1#2"]);
    write(dir.path(), "universe", "new 0\na 1\nb 2\na 1\n");
    let after = from_universe(&path).unwrap();
    let pairs: Vec<(&str, &str)> = after.iter().map(|t| (t.name.as_str(), t.key.as_str())).collect();
    assert_eq!(pairs, [("t1", "new 0"), ("t2", "a 1"), ("t3", "b 2"), ("t4", "a 1#2")]);
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(before[1].definition(&root), after[2].definition(&root));
}

/// `inputs` of a test and the `[dependencies]` table: paths relative to the
/// file, name patterns for declared inputs; unknown keys are errors.
#[test]
fn toml_inputs_and_dependency_settings() {
    let dir = tempfile::tempdir().unwrap();
    let root = &dir.path().canonicalize().unwrap();
    let path = write(
        root,
        "retest.toml",
        r#"
[dependencies]
ignore = ["/tmp", "*.log"]
inputs = ["common.cfg"]
[dependencies.tests]
"static-*" = ["tools/checker", "data/"]

[[test]]
name = "static-one"
cmd = "./tools/checker"
inputs = ["./more/../extra.bin"]
"#,
    );
    let specs = from_toml(&path).unwrap();
    assert_eq!(specs[0].inputs, vec![root.join("more/../extra.bin")]);
    let d = retest_run::discover::dependency_settings(&path).unwrap();
    assert_eq!(d.ignore, ["/tmp", "*.log"]);
    assert_eq!(d.inputs, vec![root.join("common.cfg")]);
    assert_eq!(d.declared_for("static-one"), vec![root.join("tools/checker"), root.join("data")]);
    assert!(d.declared_for("dynamic").is_empty());
    let bad = write(root, "bad.toml", "[dependencies]\nignored = []\n");
    assert!(matches!(from_toml(&bad).unwrap_err(), DiscoverError::UnknownKey { line: 2, .. }));
    let none = write(root, "none.toml", "[[test]]\nname = \"a\"\ncmd = \"true\"\n");
    assert_eq!(retest_run::discover::dependency_settings(&none).unwrap(), Default::default());
}

/// What a definition change says, field by field.
#[test]
fn definition_changes_name_old_and_new() {
    let root = Path::new("/w");
    let old = TestSpec {
        env: env(&[("A", "1"), ("B", "2")]),
        timeout: Some(Duration::from_secs(10)),
        ..spec("x", "./prog -w", &root.join("tests"))
    };
    let new = TestSpec {
        env: env(&[("A", "3"), ("C", "4")]),
        timeout: None,
        expect_failure: true,
        ..spec("x", "./prog -s", Path::new("/elsewhere"))
    };
    let (o, n) = (old.definition(root), new.definition(root));
    assert_eq!(o.cwd, "tests");
    assert_eq!(
        n.changes_since(&o),
        [
            "cmd `./prog -w` → `./prog -s`",
            "cwd `tests` → `/elsewhere`",
            "env A `1` → `3`",
            "env C=`4` added",
            "env B=`2` removed",
            "timeout 10s → none",
            "expected to fail: false → true",
        ]
    );
    assert!(o.changes_since(&o).is_empty());
    assert_eq!(retest_run::discover::Definition::from_json(&o.to_json()), Some(o));
}

#[test]
fn universe_rejects_invalid_utf8_with_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("universe");
    fs::write(&path, b"ok\n\nbad \xff byte\n").unwrap();
    match from_universe(&path).unwrap_err() {
        DiscoverError::Invalid { line, .. } => assert_eq!(line, 3),
        e => panic!("unexpected error {e:?}"),
    }
}

// ---------------------------------------------------------------------------
// CTest

#[test]
fn shell_quote_words() {
    assert_eq!(shell_quote("/usr/bin/prog"), "/usr/bin/prog");
    assert_eq!(shell_quote("--opt=a,b:c@d%e+f"), "--opt=a,b:c@d%e+f");
    assert_eq!(shell_quote(""), "''");
    assert_eq!(shell_quote("a b"), "'a b'");
    assert_eq!(shell_quote("it's"), "'it'\\''s'");
    assert_eq!(shell_quote("$HOME;*"), "'$HOME;*'");
}

fn have_cmake() -> bool {
    let ok = Command::new("cmake").arg("--version").output().is_ok()
        && Command::new("ctest").arg("--version").output().is_ok();
    assert!(ok, "cmake/ctest not found on PATH: install CMake (`.ci/run` installs it)");
    ok
}

/// Configures the CMake project in `src` into `build`.
fn configure(src: &Path, build: &Path) {
    let st = Command::new("cmake").arg("-S").arg(src).arg("-B").arg(build).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

#[test]
fn ctest_mapping() {
    if !have_cmake() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let src = root.join("src");
    let build = root.join("build");
    fs::create_dir_all(src.join("sub")).unwrap();
    fs::write(
        src.join("CMakeLists.txt"),
        r#"cmake_minimum_required(VERSION 3.14)
project(t NONE)
enable_testing()
add_test(NAME args COMMAND /bin/sh -c "printf '<%s>' \"$@\"" sh plain "a b" "it's" "$HOME" "")
add_test(NAME props COMMAND /bin/sh -c "exit 1")
set_tests_properties(props PROPERTIES WILL_FAIL TRUE TIMEOUT 7.5
    ENVIRONMENT "A=1;B=x y=z" WORKING_DIRECTORY /tmp
    FIXTURES_REQUIRED db PASS_REGULAR_EXPRESSION "ok" LABELS fast)
add_test(NAME off COMMAND /bin/sh -c "exit 0")
set_tests_properties(off PROPERTIES DISABLED TRUE)
add_test(NAME zero_timeout COMMAND /bin/sh -c true)
set_tests_properties(zero_timeout PROPERTIES TIMEOUT 0)
add_subdirectory(sub)
"#,
    )
    .unwrap();
    fs::write(src.join("sub/CMakeLists.txt"), "add_test(NAME in_sub COMMAND /bin/sh -c true)\n").unwrap();
    configure(&src, &build);

    let specs = from_ctest(&build).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["args", "props", "zero_timeout", "in_sub"]);

    // ctest may resolve /bin/sh to /usr/bin/sh on merged-/usr systems.
    let args = &specs[0];
    let (prog, rest) = args.cmd.split_once(' ').unwrap();
    assert!(prog == "/bin/sh" || prog == "/usr/bin/sh", "{prog}");
    assert_eq!(rest, r#"-c 'printf '\''<%s>'\'' "$@"' sh plain 'a b' 'it'\''s' '$HOME' ''"#);
    assert_eq!(args.cwd, build);
    assert_eq!(args.env, vec![]);
    assert_eq!(args.timeout, None);
    assert!(!args.expect_failure);
    // The quoted command line reproduces the argument vector exactly.
    let out = Command::new("/bin/sh").arg("-c").arg(&args.cmd).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "<plain><a b><it's><$HOME><>");

    let props = &specs[1];
    assert_eq!(props.cwd, Path::new("/tmp"));
    assert_eq!(props.env, env(&[("A", "1"), ("B", "x y=z")]));
    assert_eq!(props.timeout, Some(Duration::from_millis(7500)));
    assert!(props.expect_failure);
    // what retest does not act on is still part of the definition
    let names: Vec<&str> = props.properties.iter().map(|(k, _)| k.as_str()).collect();
    for p in ["FIXTURES_REQUIRED", "LABELS", "PASS_REGULAR_EXPRESSION"] {
        assert!(names.contains(&p), "{p}: {names:?}");
    }
    assert!(!names.contains(&"TIMEOUT") && !names.contains(&"ENVIRONMENT"));
    assert_eq!(props.key, "props");

    assert_eq!(specs[2].timeout, None);
    assert_eq!(specs[3].cwd, build.join("sub"));
}

#[test]
fn ctest_not_a_build_dir() {
    let dir = tempfile::tempdir().unwrap();
    let err = from_ctest(dir.path()).unwrap_err();
    assert!(
        matches!(&err, DiscoverError::NotCtestDir { build_dir }
            if *build_dir == dir.path().canonicalize().unwrap()),
        "{err:?}"
    );
    assert!(err.to_string().contains("CTestTestfile.cmake"), "{err}");
    let missing = dir.path().join("missing");
    assert!(matches!(
        from_ctest(&missing).unwrap_err(),
        DiscoverError::NotCtestDir { build_dir } if build_dir == missing
    ));
}

#[test]
fn gtest_listings_give_one_case_per_test() {
    let listing = "Running main() from gtest_main.cc\nBuildLogTest.\n  WriteRead\n  DISABLED_Slow\n\
                   Inst/ParamTest.  # TypeParam = int\n  Works/0  # GetParam() = 1\n  Works/1  # GetParam() = 2\n\
                   DISABLED_Old.\n  Anything\n";
    assert_eq!(
        retest_run::discover::parse_gtest_list(listing),
        ["BuildLogTest.WriteRead", "Inst/ParamTest.Works/0", "Inst/ParamTest.Works/1"]
    );
}

/// A `[[gtest]]` table lists a real GoogleTest binary's cases (Debian
/// libgtest-dev; `.ci/run` installs it) and each runs alone.
#[test]
fn gtest_binaries_give_a_test_per_case() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("t.cc"),
        "#include <gtest/gtest.h>\n\
         TEST(Maths, Adds) { EXPECT_EQ(2, 1 + 1); }\n\
         TEST(Maths, Fails) { EXPECT_EQ(3, 1 + 1); }\n\
         TEST(Maths, DISABLED_Never) { FAIL(); }\n\
         class P : public ::testing::TestWithParam<int> {};\n\
         TEST_P(P, Positive) { EXPECT_GT(GetParam(), 0); }\n\
         INSTANTIATE_TEST_SUITE_P(Small, P, ::testing::Values(1, 2));\n",
    )
    .unwrap();
    let st = Command::new("g++")
        .args(["-o", "unit_tests", "t.cc", "-lgtest", "-lgtest_main", "-pthread"])
        .current_dir(d.path())
        .status()
        .unwrap();
    assert!(st.success(), "g++ with GoogleTest failed: install g++ and libgtest-dev (`.ci/run` installs them)");
    std::fs::write(d.path().join("retest.toml"), "[[gtest]]\nbinary = \"unit_tests\"\ntimeout = 30\n").unwrap();
    let specs = retest_run::discover::from_toml(&d.path().join("retest.toml")).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "unit_tests/Maths.Adds",
            "unit_tests/Maths.Fails",
            "unit_tests/Small/P.Positive/0",
            "unit_tests/Small/P.Positive/1"
        ]
    );
    // each command runs exactly its case
    for s in &specs {
        let out = Command::new("sh").args(["-c", &s.cmd]).current_dir(&s.cwd).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("1 test from"), "{}: {text}", s.cmd);
        assert_eq!(out.status.success(), !s.name.ends_with("Fails"), "{}", s.name);
    }
    // a binary not built yet is an error that says so
    std::fs::write(d.path().join("retest.toml"), "[[gtest]]\nbinary = \"missing\"\n").unwrap();
    let e = retest_run::discover::from_toml(&d.path().join("retest.toml")).unwrap_err().to_string();
    assert!(e.contains("retest.toml:2") && e.contains("build it first"), "{e}");
}

/// Test binaries that CTest lists by running them (`gtest_discover_tests`
/// with `DISCOVERY_MODE PRE_TEST`, `catch_discover_tests`) run while
/// `ctest --show-only` reads the build directory: they get a trace
/// directory of their own, removed afterwards, and never the one retest's
/// caller may have.
#[test]
fn ctest_listing_records_into_a_scratch_directory() {
    if !have_cmake() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (src, build) = (root.join("src"), root.join("build"));
    fs::create_dir_all(&src).unwrap();
    write(
        &src,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.14)\nproject(t NONE)\nenable_testing()\n\
         set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_SOURCE_DIR}/listing.cmake)\n",
    );
    // what a PRE_TEST discovery script does: run something, add the tests
    write(
        &src,
        "listing.cmake",
        "file(WRITE \"${CMAKE_CURRENT_LIST_DIR}/seen.txt\" \"$ENV{RETEST_TRACE_DIR}\")\nadd_test(listed /bin/true)\n",
    );
    configure(&src, &build);
    let specs = from_ctest(&build).unwrap();
    assert_eq!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["listed"]);
    let seen = fs::read_to_string(src.join("seen.txt")).unwrap();
    assert!(!seen.is_empty(), "the listing ran without a trace directory of its own");
    assert!(!Path::new(&seen).exists(), "the listing's trace directory {seen} was left behind");
}

/// A CTest listing is kept with the state of everything ctest consulted and
/// reused while all of it holds: a rebuilt test program leaves it valid, a
/// new test, a new CTest configuration file or a program made
/// non-executable does not. A listing made by a script that runs anything
/// is never kept, and is listed by ctest every time. `from_ctest_kept` reads
/// the kept listing exactly when it is reused, without running ctest.
#[test]
fn a_ctest_listing_is_kept_until_what_it_was_made_from_changes() {
    use retest_run::listing::{Listed, ListingCache, from_ctest_cached, from_ctest_kept};
    if !have_cmake() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (src, build) = (root.join("src"), root.join("build"));
    fs::create_dir_all(src.join("sub")).unwrap();
    let lists = "cmake_minimum_required(VERSION 3.14)\nproject(t NONE)\nenable_testing()\n\
                 add_test(NAME a COMMAND ${CMAKE_BINARY_DIR}/prog a)\nadd_subdirectory(sub)\n";
    write(&src, "CMakeLists.txt", lists);
    write(&src.join("sub"), "CMakeLists.txt", "add_test(NAME b COMMAND ${CMAKE_BINARY_DIR}/prog b)\n");
    configure(&src, &build);
    let prog = write(&build, "prog", "#!/bin/sh\nexit 0\n");
    let executable = |mode: u32| {
        fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    };
    executable(0o755);
    let lib = retest_run::deps::build_preload(&crate::cc(), &root.join("lib")).expect("the tracker builds");
    let cache = ListingCache { file: root.join("kept"), tracker: Some(lib) };
    // what ctest consults must be older than the listing's start
    std::thread::sleep(Duration::from_millis(100));
    let list = || {
        let kept = from_ctest_kept(&build, &cache).map(Result::unwrap);
        let (specs, listed) = from_ctest_cached(&build, &cache).unwrap();
        assert_eq!(specs, from_ctest(&build).unwrap(), "the listing is ctest's ({listed:?})");
        // without running ctest, the kept listing is read exactly when it is reused
        assert_eq!(kept.is_some(), listed == Listed::Reused, "{listed:?}");
        if let Some(kept) = kept {
            assert_eq!(kept, (specs.clone(), Listed::Reused));
        }
        (specs.iter().map(|s| s.name.clone()).collect::<Vec<_>>(), listed)
    };
    // the first listing in a build directory makes `Testing/Temporary`,
    // which it found absent: that listing is not kept
    let (names, listed) = list();
    assert_eq!(names, ["a", "b"]);
    assert!(matches!(&listed, Listed::NotKept(why) if why.contains("Testing/Temporary")), "{listed:?}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(list().1, Listed::Kept);
    assert_eq!(list().1, Listed::Reused);

    // a rebuilt test program: the same list
    fs::write(&prog, "#!/bin/sh\n# rebuilt\nexit 0\n").unwrap();
    assert_eq!(list().1, Listed::Reused);
    // but whether it can run is what ctest asked
    executable(0o644);
    // listed again; kept at once when the change is already older than the
    // file clock's lag when ctest starts (a slow machine), else by the next
    // listing
    let relisted = list().1;
    assert_ne!(relisted, Listed::Reused);
    if relisted != Listed::Kept {
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(list().1, Listed::Kept);
    }
    assert_eq!(list().1, Listed::Reused);
    executable(0o755);
    assert_ne!(list().1, Listed::Reused);

    // a new test in a subdirectory's list
    write(
        &src.join("sub"),
        "CMakeLists.txt",
        "add_test(NAME b COMMAND ${CMAKE_BINARY_DIR}/prog b)\nadd_test(NAME c COMMAND true)\n",
    );
    configure(&src, &build);
    let (names, listed) = list();
    assert_eq!(names, ["a", "b", "c"]);
    assert_ne!(listed, Listed::Reused);
    std::thread::sleep(Duration::from_millis(100));
    list();
    assert_eq!(list().1, Listed::Reused);

    // a CTest configuration file where ctest found none
    write(&build, "CTestCustom.cmake", "set(CTEST_CUSTOM_TESTS_IGNORE c)\n");
    assert_ne!(list().1, Listed::Reused);

    // a script that runs a program: listed by ctest every time
    write(&src, "listing.cmake", "execute_process(COMMAND true)\nadd_test(listed /bin/true)\n");
    write(
        &src,
        "CMakeLists.txt",
        &format!(
            "{lists}set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${{CMAKE_CURRENT_SOURCE_DIR}}/listing.cmake)\n"
        ),
    );
    configure(&src, &build);
    for _ in 0..2 {
        let (names, listed) = list();
        assert!(names.contains(&"listed".to_string()), "{names:?}");
        let Listed::NotKept(why) = listed else { panic!("kept a listing made by execute_process: {listed:?}") };
        assert!(why.contains("ran a program"), "{why}");
    }
    // remembered, so that ctest lists without the tracker
    let kept = fs::read_to_string(root.join("kept")).unwrap();
    assert!(kept.lines().nth(2).unwrap().starts_with("unkeepable "), "{kept}");
    // until it no longer does
    write(&src, "listing.cmake", "add_test(listed /bin/true)\n");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(list().1, Listed::Kept);
    assert_eq!(list().1, Listed::Reused);
}

// ---------------------------------------------------------------------------
// Catch2

#[test]
fn catch2_listings_give_one_name_per_case() {
    // Catch2 v3's XML listing (as its XmlWriter writes it)
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MatchingTests>\n  <TestCase>\n    \
               <Name>a &lt; b &amp;&amp; c</Name>\n    <ClassName/>\n    <Tags>[x]</Tags>\n    <SourceInfo>\n      \
               <File>t.cc</File>\n      <Line>3</Line>\n    </SourceInfo>\n  </TestCase>\n  <TestCase>\n    \
               <Name>Scenario: vectors grow</Name>\n    <ClassName/>\n    <Tags/>\n  </TestCase>\n</MatchingTests>\n";
    assert_eq!(retest_run::discover::parse_catch2_xml(xml).unwrap(), ["a < b && c", "Scenario: vectors grow"]);
    // a v2 binary ignores the reporter when listing
    assert_eq!(retest_run::discover::parse_catch2_xml("All available test cases:\n  x\n1 test case\n"), None);
    // v2's names-only listing quotes names that start with `#`
    assert_eq!(
        retest_run::discover::parse_catch2_names("a, b\n\"#3 tags\"\n   leading\n\n"),
        ["a, b", "#3 tags", "   leading"]
    );
}

#[test]
fn catch2_specs_quote_and_escape() {
    use retest_run::discover::catch2_spec;
    assert_eq!(catch2_spec("plain"), r#""plain""#);
    assert_eq!(catch2_spec(r#"a, "b" [c] \d"#), r#""a\, \"b\" [c] \\d""#);
    assert_eq!(catch2_spec("~not"), r#""~not""#);
    assert_eq!(catch2_spec("exclude: me"), r#""Exclude: me""#);
}

/// Test cases whose names Catch2's test specs read specially, in a real
/// Catch2 binary (Debian's catch2 is v2; `.ci/run` installs it): a
/// `[[catch2]]` table lists them (hidden ones left out) and each command
/// runs exactly its case.
#[test]
fn catch2_binaries_give_a_test_per_case() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "t.cc",
        "#include <catch2/catch.hpp>\n\
         TEST_CASE(\"adds\", \"[maths]\") { REQUIRE(1 + 1 == 2); }\n\
         TEST_CASE(\"fails\") { REQUIRE(1 + 1 == 3); }\n\
         TEST_CASE(\"a, b and [c]\", \"[maths][odd]\") { REQUIRE(true); }\n\
         TEST_CASE(\"quote \\\" and back\\\\slash\") { REQUIRE(true); }\n\
         TEST_CASE(\"~tilde, exclude: and *star\") { REQUIRE(true); }\n\
         TEST_CASE(\"exclude: me\") { REQUIRE(true); }\n\
         TEST_CASE(\"#hash\") { REQUIRE(true); }\n\
         TEST_CASE(\"hidden\", \"[.]\") { FAIL(); }\n\
         SCENARIO(\"vectors grow\") { GIVEN(\"one\") { REQUIRE(true); } }\n",
    );
    let st = Command::new("g++")
        .args(["-o", "catch_tests", "t.cc", "-lCatch2WithMain"])
        .current_dir(d.path())
        .status()
        .unwrap();
    assert!(st.success(), "g++ with Catch2 failed: install g++ and catch2 (`.ci/run` installs them)");
    let toml = write(d.path(), "retest.toml", "[[catch2]]\nbinary = \"catch_tests\"\ntimeout = 30\n");
    let specs = from_toml(&toml).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "catch_tests/adds",
            "catch_tests/fails",
            "catch_tests/a, b and [c]",
            "catch_tests/quote \" and back\\slash",
            "catch_tests/~tilde, exclude: and *star",
            "catch_tests/exclude: me",
            "catch_tests/#hash",
            "catch_tests/Scenario: vectors grow",
        ]
    );
    assert!(specs.iter().all(|s| s.timeout == Some(Duration::from_secs(30))));
    for s in &specs {
        let out = Command::new("sh").args(["-c", &s.cmd]).current_dir(&s.cwd).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // Catch2's summary: "All tests passed (1 assertion in 1 test case)",
        // or "test cases: 1 | 1 failed"
        assert!(text.contains(" in 1 test case)") || text.contains("test cases: 1 |"), "{}: {text}", s.cmd);
        assert_eq!(out.status.success(), !s.name.ends_with("fails"), "{}: {text}", s.cmd);
    }
    // a filter (a test spec) narrows the listing
    write(d.path(), "retest.toml", "[[catch2]]\nbinary = \"catch_tests\"\nfilter = \"[maths]\"\n");
    let names: Vec<String> = from_toml(&toml).unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["catch_tests/adds", "catch_tests/a, b and [c]"]);
    // a program that is not a Catch2 binary is an error naming the table
    write(d.path(), "retest.toml", "\n[[catch2]]\nbinary = \"/bin/false\"\n");
    let e = from_toml(&toml).unwrap_err().to_string();
    assert!(e.contains("retest.toml:3") && e.contains("Catch2 binary"), "{e}");
}
