//! The compiler wrapper on code real projects write: a build that passes
//! without the wrapper passes with it.

use crate::common;

use std::process::Command;

use common::*;

/// Macros that make GCC warn once expanded (`-Waddress`, `-Wtautological-compare`)
/// — it stays quiet on the original source because it knows they came from a
/// macro; the instrumented unit is preprocessed text, where it no longer can.
const MACROS: &str = r#"#include <stddef.h>
#define IS_SET(p) ((p) != NULL)
#define SAME(a, b) ((a) == (b))
int arr[4];
int main(void)
{
    int x = 3;
    if (IS_SET(arr))
        x++;
    if (SAME(x, x))
        x++;
    return x == 5 ? 0 : 1;
}
"#;

#[test]
fn werror_builds_that_pass_without_the_wrapper_pass_with_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("m.c"), MACROS).unwrap();
    let plain = Command::new("cc").args(["-Wall", "-Werror", "-o", "plain", "m.c"]).current_dir(d.path()).status();
    assert!(plain.unwrap().success(), "the plain build passes");
    retest(d.path(), &["init"], 0);
    // compile and link in separate steps, and in one step
    retest(d.path(), &["cc", "-Wall", "-Werror", "-c", "-o", "m.o", "m.c"], 0);
    retest(d.path(), &["cc", "-Wall", "-Werror", "-o", "two", "m.o"], 0);
    retest(d.path(), &["cc", "-Wall", "-Werror", "-o", "one", "m.c"], 0);
    for exe in ["two", "one"] {
        let st = Command::new(d.path().join(exe)).current_dir(d.path()).status().unwrap();
        assert!(st.success(), "{exe} runs as the plain build does");
    }
    // errors are still errors, reported at the original line
    std::fs::write(d.path().join("bad.c"), "int main(void)\n{\n    return undeclared;\n}\n").unwrap();
    let out = retest(d.path(), &["cc", "-c", "bad.c"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.c:3"), "{err}");
}

/// A compile error in the user's code reads as the compiler gives it for the
/// original text — same line and column, though the instrumented text has
/// probes inserted into the line — and blames nobody else, whether the
/// command compiles only or compiles and links.
#[test]
fn compile_errors_point_where_the_compiler_points_without_the_wrapper() {
    let d = tempfile::tempdir().unwrap();
    let bad = "int twice(int v) { if (v > 1) { return v * 2; } return v + ; }\nint main(void) { return twice(1); }\n";
    std::fs::write(d.path().join("bad.c"), bad).unwrap();
    let plain = Command::new("cc").args(["-c", "bad.c"]).current_dir(d.path()).output().unwrap();
    assert!(!plain.status.success());
    let plain_err = String::from_utf8_lossy(&plain.stderr).into_owned();
    let at = plain_err.lines().find(|l| l.contains("error:")).expect("the compiler reports an error").to_string();
    assert!(at.starts_with("bad.c:1:"), "{plain_err}");
    retest(d.path(), &["init"], 0);
    for args in [&["cc", "-c", "bad.c"][..], &["cc", "-o", "bad", "bad.c"][..]] {
        let out = retest(d.path(), args, 1);
        let err = stderr(&out);
        assert!(err.contains(&at), "{args:?}: expected `{at}` in\n{err}");
        assert!(!err.contains("retest"), "{args:?}: {err}");
    }
    // a compiler that rejects only the instrumented text: the failure is
    // retest's, and it says so
    std::fs::write(d.path().join("good.c"), "int main(void) { return 0; }\n").unwrap();
    let fussy = d.path().join("fussy-cc");
    std::fs::write(
        &fussy,
        "#!/bin/sh\ncase \"$*\" in *cpp-output*) echo 'fussy-cc: rejected' >&2; exit 1;; esac\nexec cc \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fussy, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new(retest_bin())
        .args(["cc", "-c", "good.c"])
        .current_dir(d.path())
        .env("RETEST_CC", &fussy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fussy-cc: rejected"), "{err}");
    assert!(err.contains("good.c compiles as written but not instrumented: a defect of retest"), "{err}");
}

/// A library that needs libm, and a program that needs the library: the link
/// resolves only if `-lm` comes after the archive and the archive after the
/// program, as written.
const NEEDS_LIBM: &str = "#include <math.h>\ndouble root_plus_cos(double x) { return sqrt(x) + cos(x); }\n";
const USES_LIB: &str = r#"#include <stdio.h>
double root_plus_cos(double);
int main(int argc, char **argv)
{
    (void)argv;
    printf("%.3f\n", root_plus_cos(argc + 3.0));
    return 0;
}
"#;

#[test]
fn link_keeps_libraries_and_linker_options_in_command_line_order() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("lib.c"), NEEDS_LIBM).unwrap();
    std::fs::write(p.join("main.c"), USES_LIB).unwrap();
    let sh = |cmd: &str| Command::new("sh").args(["-c", cmd]).current_dir(p).status().unwrap().success();
    assert!(sh("cc -c lib.c -o lib.o && ar rc libl.a lib.o"), "the archive builds");
    let links = [
        "-Wl,--as-needed -o one main.c libl.a -lm",
        "-o two -Wl,--as-needed main.o -L. -ll -l m",
        "-o three main.o -Xlinker --as-needed -Wl,--start-group libl.a -Wl,--end-group -lm",
    ];
    for l in links {
        assert!(sh(&format!("cc -c main.c -o main.o && cc {l}")), "the plain link `cc {l}` passes");
    }
    retest(p, &["init"], 0);
    retest(p, &["cc", "-c", "main.c", "-o", "main.o"], 0);
    for l in links {
        let args: Vec<&str> = std::iter::once("cc").chain(l.split(' ')).collect();
        retest(p, &args, 0);
        let exe = args[args.iter().position(|a| *a == "-o").unwrap() + 1];
        let out = Command::new(p.join(exe)).current_dir(p).output().unwrap();
        assert!(out.status.success(), "{exe} runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1.346\n", "{exe}");
    }
}

/// A link step keeps the order of its command line: a static library after the
/// objects that need it resolves their symbols; before them it would not.
#[test]
fn link_steps_keep_libraries_after_the_objects_that_need_them() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("lib.c"), "int twice(int x) { return x > 0 ? 2 * x : 0; }\n").unwrap();
    std::fs::write(
        d.path().join("main.c"),
        "#include <math.h>\nint twice(int);\nint main(int c, char **v)\n{\n    (void)v;\n    \
         return twice(c) == 2 && sqrt((double)c) == 1.0 ? 0 : 1;\n}\n",
    )
    .unwrap();
    let sh = |cmd: &str| {
        let o = Command::new("sh").args(["-c", cmd]).current_dir(d.path()).output().unwrap();
        assert!(o.status.success(), "`{cmd}`: {}", String::from_utf8_lossy(&o.stderr));
    };
    sh("cc -c -o lib.o lib.c && ar rc libtwice.a lib.o");
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["cc", "-O2", "-c", "-o", "main.o", "main.c"], 0);
    // two steps and one step, with -Wl,--as-needed so that the shared libm also depends on the order
    let two = ["cc", "-O2", "-Wl,--as-needed", "-o", "two", "main.o", "-L.", "-ltwice", "-lm"];
    let one = ["cc", "-O2", "-Wl,--as-needed", "-o", "one", "main.c", "-L.", "-ltwice", "-lm"];
    for args in [&two[..], &one[..]] {
        let o = retest(d.path(), args, 0);
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    }
    for exe in ["two", "one"] {
        let st = Command::new(d.path().join(exe)).current_dir(d.path()).status().unwrap();
        assert!(st.success(), "{exe} runs");
    }
}

/// `retest build` compiles with `$RETEST_CC` when it is set (it took `$CC`,
/// else `cc`, and dropped the user's choice).
#[test]
fn retest_build_keeps_the_real_compiler_the_user_chose() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("m.c"), "int main(void) { return 0; }\n").unwrap();
    std::fs::write(d.path().join("Makefile"), "m: m.c\n\t$(CC) -o m m.c\n").unwrap();
    let logging = d.path().join("logging-cc");
    std::fs::write(&logging, "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/used\"\nexec cc \"$@\"\n").unwrap();
    std::fs::set_permissions(&logging, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    retest(d.path(), &["init"], 0);
    let out = Command::new(retest_bin())
        .args(["build", "--", "make", "-s"])
        .current_dir(d.path())
        .env("RETEST_CC", &logging)
        .env_remove("CC")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let used = std::fs::read_to_string(d.path().join("used")).unwrap_or_default();
    assert!(used.contains("m.c") || used.contains(".i"), "the chosen compiler did not run: {used:?}");
}

/// A build that compiles nothing says why it may be: a build that never went
/// through the wrapper is told to use $CC; one whose objects were up to date
/// after a build through the wrapper is told just that.
#[test]
fn a_build_that_compiles_nothing_says_which_of_the_two_reasons_it_is() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("m.c"), "int main(void) { return 0; }\n").unwrap();
    // a Makefile that names its compiler itself
    std::fs::write(d.path().join("Makefile"), "m: m.c\n\tcc -o m m.c\n").unwrap();
    retest(d.path(), &["init"], 0);
    let first = stderr(&retest(d.path(), &["build", "--", "make", "-s"], 0));
    assert!(first.contains("the build does not use $CC and $CXX"), "{first}");
    std::fs::write(d.path().join("Makefile"), "m: m.c\n\t$(CC) -o m m.c\n").unwrap();
    std::fs::remove_file(d.path().join("m")).unwrap();
    let through = stderr(&retest(d.path(), &["build", "--", "make", "-s"], 0));
    assert!(through.contains("1 translation unit(s) instrumented"), "{through}");
    let again = stderr(&retest(d.path(), &["build", "--", "make", "-s"], 0));
    assert!(again.contains("nothing to compile: the build found every object up to date"), "{again}");
    assert!(!again.contains("$CC"), "{again}");
}

/// `retest` in `dir` with `RETEST_REUSE` set to `reuse`, expecting exit `code`.
fn retest_reusing(dir: &std::path::Path, reuse: &str, args: &[&str], code: i32) -> std::process::Output {
    let out = Command::new(retest_bin()).args(args).current_dir(dir).env("RETEST_REUSE", reuse).output().unwrap();
    assert_eq!(out.status.code(), Some(code), "retest {args:?}:\n{}", stderr(&out));
    out
}

/// A build that meets a preprocessed text it analysed before takes the unit
/// and its probes from `.retest/cache` instead of analysing the text again;
/// what it records is what a build that analyses every text records (and
/// takes no header region from there, `region`):
/// the coverage of a full run after `make clean` and a rebuild, and the
/// selection after a change (invariant **reused_analyses_record_what_fresh_ones_do**).
#[test]
fn a_rebuild_of_unchanged_texts_reuses_their_analyses_and_records_the_same() {
    let build = ["build", "--", "make", "-s", "-j2"];
    let mut results = Vec::new();
    for reuse in ["1", "0"] {
        let d = example_copy();
        let dir = d.path();
        retest_reusing(dir, reuse, &["init"], 0);
        let first = stderr(&retest_reusing(dir, reuse, &build, 0));
        assert!(!first.contains("analysed before"), "{first}");
        retest_reusing(dir, reuse, &["run", "-j2"], 0);
        assert!(Command::new("make").args(["-s", "clean"]).current_dir(dir).status().unwrap().success());
        let again = stderr(&retest_reusing(dir, reuse, &build, 0));
        match reuse {
            "1" => {
                assert!(
                    again.contains("6 translation unit(s) instrumented into snapshot 2 (6 of them analysed before"),
                    "{again}"
                );
                // the units' system headers were kept too, so the first
                // build's later units were analysed without them
                let regions = std::fs::read_dir(dir.join(".retest/cache"))
                    .unwrap()
                    .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "sys"))
                    .count();
                assert!(regions > 0, "no header region kept");
            }
            _ => {
                assert!(!again.contains("analysed before"), "{again}");
                assert!(!dir.join(".retest/cache").exists(), "RETEST_REUSE=0 keeps nothing");
            }
        }
        retest_reusing(dir, reuse, &["run", "-j2"], 0);
        let matrix = stdout(&retest_reusing(dir, reuse, &["coverage", "--format", "matrix"], 0));
        copy_change(dir, "gear-table");
        retest_reusing(dir, reuse, &build, 0);
        let mut selection = json(&retest_reusing(dir, reuse, &["select", "--format", "json"], 0));
        selection.as_object_mut().unwrap().remove("analysis_seconds");
        assert!(!selection["selected"].as_array().unwrap().is_empty(), "{selection}");
        results.push((matrix, selection));
    }
    assert_eq!(results[0].0, results[1].0, "the same coverage");
    assert_eq!(results[0].1, results[1].1, "the same selection");
}
