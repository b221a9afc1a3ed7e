//! Tests whose path varies between runs of the same code. Selection assumes a
//! test not selected runs the path it ran before; `retest audit` checks that
//! in the code that did not change, runs a test that broke it once more, and
//! flags it, so that later changes select it.

use crate::common;

use std::path::Path;

use common::{retest, stdout};

/// `toggle` reads and flips `state.txt` (not tracked: `track = false`), so
/// its runs alternate between two paths of `util.c` with the same output.
const PROG: &str = r#"#include <stdio.h>
int flip(const char *path);
int scale(int x);
int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] == 't') {
        printf("%d\n", flip("state.txt"));
        return 0;
    }
    printf("%d\n", scale(argc));
    return 0;
}
"#;

const UTIL: &str = r#"#include <stdio.h>
static int path_a(void) { return 1; }
static int path_b(void) { return 1; }
int flip(const char *path) {
    int v = 0;
    FILE *f = fopen(path, "r");
    if (f) { if (fscanf(f, "%d", &v) != 1) v = 0; fclose(f); }
    f = fopen(path, "w");
    if (f) { fprintf(f, "%d\n", !v); fclose(f); }
    return v ? path_a() : path_b();
}
"#;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn other(body: &str) -> String {
    format!("int scale(int x) {{\n    {body}\n}}\n")
}

/// The selection's tests with the kinds of their reasons.
fn selection(dir: &Path) -> Vec<(String, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_str(&stdout(&retest(dir, &["select", "--format", "json"], 0))).unwrap();
    v["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let kinds = t["reasons"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap().to_string());
            (t["name"].as_str().unwrap().to_string(), kinds.collect())
        })
        .collect()
}

/// The project with its baseline recorded; with `handler`, the program
/// installs a signal handler of its own, so that its tests' records also claim
/// what code stopped part-way may have run.
fn project(handler: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let prog = if handler {
        PROG.replace(
            "int main(int argc, char **argv) {\n",
            "#include <signal.h>\nstatic void on_usr1(int s) { (void)s; }\nint main(int argc, char **argv) {\n    signal(SIGUSR1, on_usr1);\n",
        )
    } else {
        PROG.to_string()
    };
    write(p, "prog.c", &prog);
    write(p, "util.c", UTIL);
    write(p, "other.c", &other("return x * 2;"));
    write(p, "Makefile", "prog: prog.c util.c other.c\n\t$(CC) -O0 -o prog prog.c util.c other.c\n");
    write(
        p,
        "retest.toml",
        "[dependencies]\ntrack = false\n\n[[test]]\nname = \"toggle\"\ncmd = \"./prog t\"\n\n[[test]]\nname = \"steady\"\ncmd = \"./prog\"\n",
    );
    retest(p, &["init"], 0);
    retest(p, &["build", "--", "make", "-s"], 0);
    retest(p, &["run", "-j1"], 0);
    d
}

/// A test whose runs may stop part-way (the program handles signals) is
/// flagged too when two runs of the same build differ.
#[test]
fn a_test_of_a_program_with_a_signal_handler_is_found_unsteady_by_two_runs() {
    let d = project(true);
    let p = d.path();
    write(p, "other.c", &other("return x * 3;"));
    retest(p, &["build", "--", "make", "-s"], 0);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&retest(p, &["audit", "--format", "json", "-j1"], 0))).unwrap();
    let why = v["unsteady"]["toggle"].as_str().unwrap_or_else(|| panic!("toggle is not reported: {v}"));
    assert!(why.contains("differed again"), "{why}");
}

#[test]
fn an_unsteady_test_found_by_the_audit_is_selected_on_every_change() {
    let d = project(false);
    let p = d.path();

    // a change `toggle` does not reach: not selected, yet on util.c, which
    // did not change, it runs the other path than recorded, and again the
    // first one on the second run
    write(p, "other.c", &other("return x * 3;"));
    retest(p, &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(p), [("steady".to_string(), vec!["modified".to_string()])]);
    let out = retest(p, &["audit", "--format", "json", "-j1"], 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["missed"], serde_json::json!([]), "{v}");
    let why = v["unsteady"]["toggle"].as_str().unwrap_or_else(|| panic!("toggle is not reported: {v}"));
    assert!(why.contains("in util.c") && why.contains("differed again"), "{why}");
    assert_eq!(v["unsteady"].as_object().unwrap().len(), 1, "{v}");

    // from now on a change that can change some test's behaviour selects it
    let sel = selection(p);
    assert_eq!(sel.len(), 2, "{sel:?}");
    assert_eq!(sel[1], ("toggle".to_string(), vec!["unsteady".to_string()]), "{sel:?}");
    retest(p, &["run", "--selected", "-j1"], 0);
    // a change that can change no test's behaviour (a comment) does not
    write(p, "other.c", &format!("/* scales */\n{}", other("return x * 3;")));
    retest(p, &["build", "--", "make", "-s"], 0);
    assert_eq!(selection(p), []);
    write(p, "other.c", &other("return x * 4;"));
    retest(p, &["build", "--", "make", "-s"], 0);
    let names: Vec<String> = selection(p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["steady", "toggle"]);
}
