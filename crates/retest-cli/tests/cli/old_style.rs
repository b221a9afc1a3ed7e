//! Old-style C through the whole workflow: K&R definitions with implicit
//! `int`, pointer returns and `static` without a type are built, probed and
//! compared like any other function. An edit in one of them selects the tests
//! that ran it, by every algorithm, and the audit finds no miss.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;

const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>

typedef struct node { int v; struct node *next; } List;

add(a, b) int a, b; { if (a > b) return a - b; return a + b; }

static skip(n) int n;
{
    while (n > 3)
        n--;
    return n;
}

List *push(l, v) List *l; int v;
{
    List *e = malloc(sizeof *e);
    e->v = v;
    e->next = l;
    return e;
}

main(argc, argv)
int argc;
char **argv;
{
    int x = atoi(argv[1]);
    List *l = 0;
    if (x > 10)
        l = push(l, skip(x));
    printf("%d %d\n", add(x, 2), l ? l->v : -1);
    return 0;
}
"#;

fn write(dir: &Path, program: &str) {
    std::fs::write(dir.join("kr.c"), program).unwrap();
    std::fs::write(dir.join("Makefile"), "kr: kr.c\n\t$(CC) -w -O0 -o kr kr.c\n").unwrap();
    std::fs::write(dir.join("universe.txt"), "./kr 1\n./kr 5\n./kr 12\n./kr 40\n").unwrap();
}

fn rebuild(dir: &Path, program: &str) {
    write_newer(&dir.join("kr.c"), program);
    retest(dir, &["build", "--", "make", "-s"], 0);
}

fn selected(dir: &Path, algorithm: &str) -> BTreeSet<String> {
    let v = json(&retest(dir, &["select", "--algorithm", algorithm, "--format", "json"], 0));
    v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn an_edit_in_an_old_style_function_selects_the_tests_that_ran_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), PROGRAM);
    retest(d.path(), &["init"], 0);
    let b = retest(d.path(), &["build", "--", "make", "-s"], 0);
    assert!(!stderr(&b).contains("warning"), "{}", stderr(&b));
    retest(d.path(), &["run", "--universe", "universe.txt"], 0);
    // every function of the unit is in the store, none unanalysable
    let cov = json(&retest(d.path(), &["coverage", "--format", "json"], 0));
    let names: BTreeSet<String> = cov["files"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["add", "main", "push", "skip"].iter().map(|s| s.to_string()).collect());

    // `skip` runs only for x > 10 (t3, t4); the edit changes t4's output
    rebuild(d.path(), &PROGRAM.replace("while (n > 3)", "while (n > 4)"));
    let expect: BTreeSet<String> = ["t3", "t4"].iter().map(|s| s.to_string()).collect();
    for alg in ["dejavu", "partial", "full", "valid", "function"] {
        assert_eq!(selected(d.path(), alg), expect, "{alg}");
    }
    assert_eq!(selected(d.path(), "file").len(), 4);
    let a = json(&retest(d.path(), &["audit", "--format", "json"], 0));
    assert_eq!(a["missed"].as_array().unwrap().len(), 0, "{a}");
    assert!(a["changed"].as_object().unwrap().contains_key("t4"), "{a}");

    // an edit of `main` (implicit int, K&R) selects every test that ran it
    rebuild(d.path(), &PROGRAM.replace("l ? l->v : -1", "l ? l->v : -2"));
    assert_eq!(selected(d.path(), "dejavu").len(), 4);
    assert_eq!(selected(d.path(), "function").len(), 4);
}

/// Code the front end cannot place in any function (here a block at file scope,
/// analysed from a compilation database without building) marks its unit:
/// `cfg` and `select` each warn with file:line, and every test is selected.
#[test]
fn code_outside_every_function_is_reported_and_selects_every_test() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), PROGRAM);
    retest(d.path(), &["init"], 0);
    retest(d.path(), &["build", "--", "make", "-s"], 0);
    retest(d.path(), &["run", "--universe", "universe.txt"], 0);
    let broken = PROGRAM.replace("main(argc, argv)", "{ stray(); }\nmain(argc, argv)");
    std::fs::write(d.path().join("kr.c"), &broken).unwrap();
    let line = broken.lines().position(|l| l.starts_with("{ stray")).unwrap() + 1;
    let cfg = retest(d.path(), &["cfg", "kr.c"], 0);
    assert!(stderr(&cfg).contains(&format!("kr.c:{line}: code outside any function's CFG")), "{}", stderr(&cfg));
    let db = format!(
        r#"[{{"directory": "{}", "file": "kr.c", "arguments": ["cc", "-w", "-O0", "-o", "kr", "kr.c"]}}]"#,
        d.path().display()
    );
    std::fs::write(d.path().join("compile_commands.json"), db).unwrap();
    let out = retest(d.path(), &["select", "-p", "compile_commands.json", "--format", "json"], 0);
    let v = json(&out);
    assert_eq!(v["tests_selected"], 4, "{v}");
    let warned =
        v["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains(&format!("kr.c:{line}")));
    assert!(warned, "{v}");
}
