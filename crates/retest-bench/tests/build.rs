//! `retest-bench build` on a two-file project: every variant builds for real
//! (plain, `gcc --coverage`, `retest build` first and with texts analysed
//! before, `--mcdc --paths`), each timed, with a one-file rebuild; the
//! project itself is left as it was.

use std::process::Command;

mod support;
use support::retest_bin;

#[test]
fn every_build_variant_builds_and_is_timed() {
    let work = tempfile::tempdir().unwrap();
    let p = work.path().join("tiny");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("a.c"), "int twice(int x) { return x > 0 ? 2 * x : -x; }\n").unwrap();
    std::fs::write(
        p.join("main.c"),
        "int twice(int);\nint main(int c, char **v) { (void)v; return twice(c) == 2 ? 0 : 1; }\n",
    )
    .unwrap();
    std::fs::write(
        p.join("Makefile"),
        "CC ?= cc\nprog: a.o main.o\n\t$(CC) -o $@ a.o main.o\n%.o: %.c\n\t$(CC) -O2 -c $< -o $@\nclean:\n\trm -f *.o prog\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retest-bench"))
        .arg("--retest")
        .arg(retest_bin())
        .arg("--work")
        .arg(work.path().join("w"))
        .args(["build", "--project"])
        .arg(&p)
        .args(["--touch", "a.c", "--runs", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join("w/build/tiny.json")).unwrap()).unwrap();
    let names: Vec<&str> = r.as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "plain",
            "gcc --coverage",
            "retest build (first build)",
            "retest build (RETEST_REUSE=0)",
            "retest build (texts analysed before)",
            "retest build --mcdc --paths (first build)"
        ]
    );
    for v in r.as_array().unwrap() {
        for key in ["cpu", "rebuild_cpu"] {
            let xs = v[key].as_array().unwrap();
            assert_eq!(xs.len(), 1, "{v}");
            assert!(xs[0].as_f64().unwrap() > 0.0, "{key} of {v}");
        }
    }
    // the retest variants built through the wrapper: each of their 8
    // rebuilds (4 variants, 2 rounds) instrumented a text of its own
    let builds = Command::new("sqlite3")
        .arg(work.path().join("w/build/tiny/.retest/store.db"))
        .arg("select count(*) from builds")
        .output()
        .unwrap();
    let n: u32 = String::from_utf8_lossy(&builds.stdout).trim().parse().unwrap();
    assert!(n >= 8, "{n} instrumented units");
    // the first builds' empty caches are gone, the one put aside is back
    let store = work.path().join("w/build/tiny/.retest");
    assert!(store.join("cache").is_dir() && !store.join("cache.aside").exists());
    // the project is as it was
    let mut left: Vec<String> =
        std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["Makefile", "a.c", "main.c"]);
}
