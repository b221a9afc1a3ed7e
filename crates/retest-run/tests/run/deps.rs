//! The file tracker on real processes: a shell, a script, `cat`, `diff`,
//! `env -i`, and a statically linked program it cannot see.

use crate::cc;
use std::path::{Path, PathBuf};
use std::process::Command;

use retest_run::deps::{self, Observed};

/// Runs `sh -c script` in `work` as `retest run` does a test, with the tracker.
fn observe(work: &Path, script: &str) -> Observed {
    let lib = deps::build_preload(&cc(), &work.join("lib")).expect("the tracker builds (install a C compiler)");
    let trace = work.join("trace");
    let _ = std::fs::remove_dir_all(&trace);
    std::fs::create_dir_all(&trace).unwrap();
    let st = Command::new("/bin/sh")
        .args(["-c", script])
        .current_dir(work.join("w"))
        .env("LD_PRELOAD", &lib)
        .env(deps::DIR_ENV, &trace)
        .env(deps::EXEC_ENV, deps::ROOT_NONCE)
        .status()
        .unwrap();
    assert!(st.success(), "{script}");
    deps::read_dir(&trace).unwrap()
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w");
    std::fs::create_dir_all(w.join("inputs")).unwrap();
    std::fs::write(w.join("inputs/d1.txt"), "one\n").unwrap();
    std::fs::write(w.join("inputs/d3.txt"), "three\n").unwrap();
    std::fs::write(w.join("expected.txt"), "one\n").unwrap();
    std::fs::write(w.join("drive.sh"), "#!/bin/sh\ncat \"$1\"\n").unwrap();
    let mut p = std::fs::metadata(w.join("drive.sh")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
    std::fs::set_permissions(w.join("drive.sh"), p).unwrap();
    let w = w.canonicalize().unwrap();
    (d, w)
}

#[test]
fn files_read_by_any_process_of_a_test_are_recorded() {
    let (d, w) = setup();
    let o = observe(
        d.path(),
        "cat inputs/d1.txt > out.txt && cat < inputs/d3.txt && ./drive.sh inputs/d1.txt && \
         diff out.txt expected.txt && env -i /bin/cat inputs/d1.txt && test ! -e inputs/d9.txt",
    );
    assert!(o.root_seen);
    assert!(o.unknown_because().is_none(), "{:?}", o.unknown_because());
    let d = o.dependencies();
    for f in ["inputs/d1.txt", "inputs/d3.txt", "expected.txt", "drive.sh"] {
        assert!(d.content.contains(&w.join(f)), "{f} is a dependency: {:?}", d.content);
    }
    // the test's own output is not an input, though diff read it
    assert!(!d.content.contains(&w.join("out.txt")));
    assert!(o.written.contains(&w.join("out.txt")));
    // a path probed and not found
    assert!(d.absent.contains(&w.join("inputs/d9.txt")), "{:?}", d.absent);
    // the programs that ran: cat reached through `env -i` too
    assert!(d.content.iter().any(|p| p.ends_with("cat")));
}

#[test]
fn a_statically_linked_program_makes_the_dependencies_unknown() {
    let (d, w) = setup();
    std::fs::write(
        w.join("s.c"),
        "#include <stdio.h>\nint main(void){ FILE *f = fopen(\"inputs/d1.txt\", \"r\"); return f == 0; }\n",
    )
    .unwrap();
    let st = Command::new(cc()).args(["-static", "-o", "s", "s.c"]).current_dir(&w).status().unwrap();
    assert!(st.success(), "a static link needs libc.a (Debian: libc6-dev)");
    let o = observe(d.path(), "./s");
    let why = o.unknown_because().expect("unknown");
    assert!(why.contains("/s ran and could not be observed"), "{why}");
}

/// A raw `clone()` child on a stack of one page -- GoogleTest's threadsafe
/// death tests give theirs two and exec the test binary from it -- execs a
/// program named by a relative path, and the tracker follows: the exec is
/// logged with its absolute path and matched by the new image's start, and
/// what that image reads is a dependency. The tracker's exec path once took
/// 24 KiB of stack there, and the child died before its exec.
#[test]
fn a_clone_child_on_a_one_page_stack_execs_and_is_followed() {
    let (d, w) = setup();
    std::fs::write(
        w.join("c.c"),
        "#define _GNU_SOURCE 1\n#include <sched.h>\n#include <signal.h>\n#include <sys/mman.h>\n\
         #include <sys/wait.h>\n#include <unistd.h>\n\
         static char *args[] = { \"./drive.sh\", \"inputs/d1.txt\", 0 };\n\
         static int child(void *a) { (void)a; execv(args[0], args); return 127; }\n\
         int main(void) {\n    long page = sysconf(_SC_PAGESIZE);\n\
             char *stack = mmap(0, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n\
             int status;\n    pid_t pid;\n\
             if (stack == MAP_FAILED || mprotect(stack, page, PROT_NONE) != 0) return 1;\n\
             pid = clone(child, stack + 2 * page - 64, SIGCHLD, 0);\n\
             if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;\n\
             return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;\n}\n",
    )
    .unwrap();
    let st = Command::new(cc()).args(["-O1", "-o", "c", "c.c"]).current_dir(&w).status().unwrap();
    assert!(st.success());
    let o = observe(d.path(), "./c > /dev/null");
    assert!(o.unknown_because().is_none(), "{:?}", o.unknown_because());
    let d = o.dependencies();
    for f in ["c", "drive.sh", "inputs/d1.txt"] {
        assert!(d.content.contains(&w.join(f)), "{f} is a dependency: {:?}", d.content);
    }
}

/// A command searched on `PATH` and not found in a directory before the one
/// it ran from: a program put there later would run instead, so the path is
/// an absent dependency — also when the search is `execvp`'s (here `env`'s),
/// which tries each candidate with an exec and looks at nothing first.
#[test]
fn a_program_missing_from_an_earlier_path_directory_is_an_absent_dependency() {
    let (d, w) = setup();
    std::fs::create_dir_all(w.join("bin")).unwrap();
    let o = observe(d.path(), "PATH=\"$PWD/bin:$PATH\"; /usr/bin/env cat inputs/d1.txt > /dev/null");
    let deps = o.dependencies();
    assert!(deps.absent.contains(&w.join("bin/cat")), "{:?}", deps.absent);
}

/// The tracker follows `env -i` with a variable of its own: the coverage
/// runtime's `RETEST_TRACE_DIR` stays removed (its loss is still reported).
#[test]
fn env_i_loses_the_trace_directory_but_not_the_tracker() {
    let (d, w) = setup();
    let o = observe(d.path(), "env -i /usr/bin/env > env.txt; env -i /bin/cat inputs/d3.txt > /dev/null");
    let env = std::fs::read_to_string(w.join("env.txt")).unwrap();
    assert!(!env.contains("RETEST_TRACE_DIR="), "{env}");
    assert!(env.contains(&format!("{}=", deps::DIR_ENV)), "{env}");
    assert!(o.dependencies().content.contains(&w.join("inputs/d3.txt")));
}

/// `retest run`'s runner loads the tracker first and keeps what the test's
/// own environment preloads after it.
#[test]
fn the_runner_preloads_the_tracker_before_what_the_test_preloads() {
    use retest_run::discover::TestSpec;
    use retest_run::exec::{RunOptions, run_tests};
    let (d, w) = setup();
    let lib = deps::build_preload(&cc(), &d.path().join("lib")).unwrap();
    let spec = |name: &str, env: Vec<(String, String)>| TestSpec {
        name: name.into(),
        key: name.into(),
        cmd: format!("printf %s \"$LD_PRELOAD\" > {name}.txt; cat inputs/d1.txt > /dev/null"),
        cwd: w.clone(),
        env,
        ..Default::default()
    };
    let tests = vec![spec("plain", vec![]), spec("own", vec![("LD_PRELOAD".into(), lib.display().to_string())])];
    let mut opts = RunOptions::new(d.path().join("traces"));
    opts.preload = Some(lib.clone());
    let seen = std::sync::Mutex::new(Vec::new());
    run_tests(&tests, &opts, &|_| {}, &|o| {
        seen.lock().unwrap().push((o.index, deps::read_dir(&o.trace_dir).unwrap()));
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(w.join("plain.txt")).unwrap(), lib.display().to_string());
    assert_eq!(std::fs::read_to_string(w.join("own.txt")).unwrap(), format!("{0}:{0}", lib.display()));
    for (i, o) in seen.into_inner().unwrap() {
        assert!(o.root_seen, "{i}");
        assert!(o.dependencies().content.contains(&w.join("inputs/d1.txt")), "{i}");
    }
}
