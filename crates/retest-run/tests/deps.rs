//! The file tracker on real processes: a shell, a script, `cat`, `diff`,
//! `env -i`, and a statically linked program it cannot see.

use std::path::{Path, PathBuf};
use std::process::Command;

use retest_run::deps::{self, Observed};

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

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
        .env("RETEST_TRACE_DIR", &trace)
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
