//! Ball's algorithms (000 §4) through the real binary: the paper's Figures 1, 4
//! and 5 as small C programs built with the wrapper, with tests whose recorded
//! coverage makes the algorithms differ, the selections the paper states, the
//! audit confirming them, and the nesting valid ⊆ full ⊆ partial ⊆ dejavu on the
//! bundled example.
//!
//! In the figures a vertex is a basic block; here it is a statement of `f` (or
//! `g`), named in the comments as in the paper. The programs print what the
//! blocks W, Y, Z, V do, so a test whose path is in D(G, G') changes its output.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::*;

/// Calls `f(a, c)` for each pair of arguments.
const MAIN_F: &str = "#include <stdlib.h>
void f(int a, int c);
int main(int argc, char **argv)
{
    int i;
    for (i = 1; i + 1 < argc; i += 2)
        f(atoi(argv[i]), atoi(argv[i + 1]));
    return 0;
}
";

/// The blocks' side effects, the same in every version.
const BLOCKS: &str = "#include <stdio.h>
void w(void) { puts(\"W\"); }
void y(void) { puts(\"Y\"); }
void z(void) { puts(\"Z\"); }
";

/// G of Figures 1 and 4: A t C; A f C; C t W; C f X; W ε X.
const FIG1_OLD: &str = "void f(int a, int c)
{
    if (a) {         /* A, line 7 */
    }
    if (c)           /* C, line 9 */
        w();         /* W */
}
";

/// G' of Figure 1: the true arm of A gets its own copy C1 of C whose successors
/// differ (Y, Z); the false arm keeps C2 = C with W.
const FIG1_NEW: &str = "void f(int a, int c)
{
    if (a) {         /* A */
        if (c)       /* C1, line 8 */
            y();     /* Y */
        else
            z();     /* Z */
    } else {
        if (c)       /* C2, line 13 */
            w();     /* W */
    }
}
";

/// G' of Figure 4: as Figure 1, but C1's false edge goes to the exit as C's does.
const FIG4_NEW: &str = "void f(int a, int c)
{
    if (a) {         /* A */
        if (c)       /* C1, line 8 */
            y();     /* Y */
    } else {
        if (c)       /* C2, line 11 */
            w();     /* W */
    }
}
";

/// Calls `g()` once per argument N, with `more()` true N times, then false.
const MAIN_G: &str = "#include <stdlib.h>
void g(void);
static int k, n;
int more(void) { return k++ < n; }
int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        k = 0;
        n = atoi(argv[i]);
        g();
    }
    return 0;
}
";

const BLOCKS_G: &str = "#include <stdio.h>
int more(void);
void u(void) { puts(\"U\"); }
void v(void) { puts(\"V\"); }
void z(void) { puts(\"Z\"); }
";

/// G of Figure 5: U ε A; A t A; A f V.
const FIG5_OLD: &str = "void g(void)
{
    u();                 /* U */
    while (more())       /* A, line 9 */
        ;
    v();                 /* V */
}
";

/// G' of Figure 5: U ε A1; A1 t A2; A1 f Z; Z ε V; A2 t A2; A2 f V — a first
/// `more()` that is false now runs Z.
const FIG5_NEW: &str = "void g(void)
{
    u();                 /* U */
    if (more()) {        /* A1 */
        while (more())   /* A2 */
            ;
    } else {
        z();             /* Z */
    }
    v();                 /* V */
}
";

const ALGORITHMS: [&str; 6] = ["dejavu", "partial", "full", "valid", "function", "file"];

/// A project: main.c, fig.c (`blocks` then `fig`), a Makefile and the tests
/// (name, arguments of `./prog`); built with the wrapper and run: the baseline.
fn project(main: &str, blocks: &str, fig: &str, tests: &[(&str, &str)]) -> tempfile::TempDir {
    project_with(main, blocks, fig, tests, &[])
}

/// [`project`], built with `retest build OPTIONS -- make`.
fn project_with(main: &str, blocks: &str, fig: &str, tests: &[(&str, &str)], options: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("main.c"), main).unwrap();
    std::fs::write(d.path().join("fig.c"), format!("{blocks}{fig}")).unwrap();
    std::fs::write(
        d.path().join("Makefile"),
        "prog: main.o fig.o\n\t$(CC) -o prog main.o fig.o\n%.o: %.c\n\t$(CC) -O0 -c -o $@ $<\n",
    )
    .unwrap();
    let toml: String =
        tests.iter().map(|(n, args)| format!("[[test]]\nname = \"{n}\"\ncmd = \"./prog {args}\"\n\n")).collect();
    std::fs::write(d.path().join("retest.toml"), toml).unwrap();
    retest(d.path(), &["init"], 0);
    let mut build = vec!["build"];
    build.extend_from_slice(options);
    build.extend_from_slice(&["--", "make", "-s"]);
    retest(d.path(), &build, 0);
    retest(d.path(), &["run"], 0);
    d
}

/// The new version of fig.c, rebuilt with the wrapper.
fn change(dir: &Path, blocks: &str, fig: &str) {
    change_with(dir, blocks, fig, &[]);
}

/// [`change`], built with `retest build OPTIONS -- make`.
fn change_with(dir: &Path, blocks: &str, fig: &str, options: &[&str]) {
    write_newer(&dir.join("fig.c"), format!("{blocks}{fig}"));
    let mut build = vec!["build"];
    build.extend_from_slice(options);
    build.extend_from_slice(&["--", "make", "-s"]);
    retest(dir, &build, 0);
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn names(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
}

/// `retest compare-algorithms --format json`: the report and, per algorithm, the
/// tests it selects.
fn compare(dir: &Path, extra: &[&str]) -> (serde_json::Value, BTreeMap<String, BTreeSet<String>>) {
    let mut args = vec!["compare-algorithms", "--format", "json"];
    args.extend_from_slice(extra);
    let c = json(&retest(dir, &args, 0));
    assert_eq!(c["schema"], "retest.compare/1");
    let rows = c["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["algorithm"].as_str().unwrap().to_string(), names(&r["selected_tests"])))
        .collect();
    (c, rows)
}

/// The tests whose behaviour the change altered, by `retest audit` (which also
/// fails with exit 3 if the default algorithm missed one).
fn audit(dir: &Path) -> BTreeSet<String> {
    let a = json(&retest(dir, &["audit", "--format", "json"], 0));
    a["changed"].as_object().unwrap().keys().cloned().collect()
}

/// Every format of `retest select` for every algorithm agrees with `rows`.
fn formats_agree(dir: &Path, rows: &BTreeMap<String, BTreeSet<String>>, total: usize) {
    for alg in ALGORITHMS {
        let want = &rows[alg];
        let v = json(&retest(dir, &["select", "--algorithm", alg, "--format", "json"], 0));
        assert_eq!(v["schema"], "retest.selection/1");
        assert_eq!(v["algorithm"], alg);
        let sel: BTreeSet<String> =
            v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
        assert_eq!(&sel, want, "{alg}: json");
        let n: BTreeSet<String> = stdout(&retest(dir, &["select", "--algorithm", alg, "--format", "names"], 0))
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(&n, want, "{alg}: names");
        let re = stdout(&retest(dir, &["select", "--algorithm", alg, "--format", "ctest"], 0));
        let expected = if want.is_empty() {
            "^$".to_string()
        } else {
            format!("^({})$", want.iter().cloned().collect::<Vec<_>>().join("|"))
        };
        assert_eq!(re.trim(), expected, "{alg}: ctest");
        let h = stdout(&retest(dir, &["select", "--algorithm", alg], 0));
        assert!(h.starts_with(&format!("{} of {total} tests selected", want.len())), "{alg}: {h}");
        for t in want {
            assert!(h.contains(&format!("  {t} ")), "{alg}: {t} listed with a reason: {h}");
        }
    }
}

// ---------------------------------------------------------------- Figure 1

const FIG1_TESTS: [(&str, &str); 5] =
    [("a0c0", "0 0"), ("a0c1", "0 1"), ("a1c0", "1 0"), ("a1c1", "1 1"), ("twice", "0 1 1 0")];

/// 000 §4.1–4.2: D = {(C, t), (C, f)} — every path through `f` covers one, so
/// DejaVu (RH) selects every test — while D_reject = {(A, t)}: partial-reachability
/// eliminates p = [A, f, C, t, W, ε, X] (test a0c1) and a0c0, which are in
/// I(G, G'). C is a multiply-visited vertex (paired with C1 and C2).
#[test]
fn figure1_partial_reachability_eliminates_what_dejavu_selects() {
    let d = project(MAIN_F, BLOCKS, FIG1_OLD, &FIG1_TESTS);
    change(d.path(), BLOCKS, FIG1_NEW);
    let changed = audit(d.path());
    // a1c0 now prints Z, a1c1 prints Y instead of W; twice's second call is a1c0
    assert_eq!(changed, set(&["a1c0", "a1c1", "twice"]));
    let (c, rows) = compare(d.path(), &[]);
    let all = set(&["a0c0", "a0c1", "a1c0", "a1c1", "twice"]);
    assert_eq!(rows["dejavu"], all, "RH: every path covers (C,t) or (C,f)");
    for alg in ["partial", "full", "valid"] {
        assert_eq!(rows[alg], changed, "{alg}: exactly the tests whose paths are in D(G, G')");
    }
    assert_eq!(rows["function"], all);
    assert_eq!(rows["file"], all);
    assert_eq!(names(&c["changed"]), changed);
    assert!(c["algorithms"].as_array().unwrap().iter().all(|r| r["missed"].as_array().unwrap().is_empty()), "{c}");
    assert_eq!(c["multiply_visited_nodes"], 1, "{c}");
    let mv = &c["multiply_visited"][0];
    assert_eq!((mv["file"].as_str(), mv["line"].as_u64(), mv["text"].as_str()), (Some("fig.c"), Some(9), Some("c")));

    // why partial-reachability drops a0c1: it never took (A, t)
    let e = stdout(&retest(d.path(), &["explain", "a0c1", "--algorithm", "partial"], 0));
    assert!(e.contains("a0c1 is not selected by partial, though DejaVu selects it"), "{e}");
    assert!(e.contains("partial-reachability, in `f`") && e.contains("through fig.c:7 `a` → T"), "{e}");
    assert!(e.contains("its dangerous edges (fig.c:9 `c` → T)"), "{e}");
    // and full-reachability: along its edges C is only ever paired with C2
    let e = stdout(&retest(d.path(), &["explain", "a0c1", "--algorithm", "full"], 0));
    assert!(
        e.contains(
            "the dangerous edge fig.c:9 `c` → T leads to the change only where the new version is at fig.c:8 `c`"
        ) && e.contains("old fig.c:9 corresponds only to new fig.c:13 `c`"),
        "{e}"
    );
    let e = stdout(&retest(d.path(), &["explain", "a0c1"], 0));
    assert!(e.contains("a0c1 is selected") && e.contains("fig.c:10 changed: `w ( ) ;` → `y ( ) ;` (fig.c:9)"), "{e}");

    // partial-reachability names the transition leaving V''_accept and the change behind it
    let v = json(&retest(d.path(), &["select", "--algorithm", "partial", "--format", "json"], 0));
    let t = v["selected"].as_array().unwrap().iter().find(|t| t["name"] == "a1c1").unwrap();
    let r = &t["reasons"][0];
    assert_eq!((r["via"]["line"].as_u64(), r["via"]["label"].as_str()), (Some(7), Some("T")), "{r}");
    assert_eq!(
        (r["old"]["line"].as_u64(), r["new"]["line"].as_u64(), r["kind"].as_str()),
        (Some(10), Some(9), Some("modified"))
    );
    assert!(r["text"].as_str().unwrap().starts_with("after fig.c:7 `a` → T every path reaches a change: "), "{r}");
    let gone: BTreeSet<String> =
        v["eliminated"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(gone, set(&["a0c0", "a0c1"]));
    assert_eq!(v["pairs_analysed"], 1, "only f has dangerous edges");
    let h = stdout(&retest(d.path(), &["select", "--algorithm", "partial"], 0));
    assert!(h.contains("2 tests DejaVu selects are eliminated by partial"), "{h}");
    formats_agree(d.path(), &rows, 5);
}

// ---------------------------------------------------------------- Figure 4

/// 000 §4.3: D = D_reject = {(C, t)}: RH and partial-reachability both select
/// p = [A, f, C, t, W, ε, X] (a0c1), full-reachability eliminates it — reject is
/// not reachable from (A, A) along (A, f), (C, t), (W, ε).
#[test]
fn figure4_full_reachability_eliminates_what_partial_selects() {
    let d = project(MAIN_F, BLOCKS, FIG1_OLD, &FIG1_TESTS);
    change(d.path(), BLOCKS, FIG4_NEW);
    let changed = audit(d.path());
    assert_eq!(changed, set(&["a1c1"]), "only a path through (A, t) and (C, t) is in D(G, G')");
    let (_, rows) = compare(d.path(), &[]);
    assert_eq!(rows["dejavu"], set(&["a0c1", "a1c1", "twice"]), "RH: the tests covering (C, t)");
    assert_eq!(rows["partial"], rows["dejavu"], "partial-reachability is not edge-optimal");
    // twice is the union of a1c0 and a0c1: it covers (A, t) and (C, t), and edge
    // coverage cannot tell it from a single execution of [A, t, C, t, Y, ε, X]
    assert_eq!(rows["full"], set(&["a1c1", "twice"]));
    assert_eq!(rows["valid"], rows["full"]);
    let e = stdout(&retest(d.path(), &["explain", "a0c1", "--algorithm", "full"], 0));
    assert!(e.contains("a0c1 is not selected by full, though DejaVu selects it"), "{e}");
    assert!(
        e.contains("full-reachability, in `f`: the dangerous edge fig.c:9 `c` → T leads to the change only where the new version is at fig.c:8 `c`; along the edges this test covered, old fig.c:9 corresponds only to new fig.c:11 `c`"),
        "{e}"
    );
    let e = stdout(&retest(d.path(), &["explain", "a0c1", "--algorithm", "partial"], 0));
    assert!(e.contains("a0c1 is selected"), "{e}");
    // a test no algorithm selects is explained as before
    let e = stdout(&retest(d.path(), &["explain", "a0c0", "--algorithm", "full"], 0));
    assert!(e.contains("a0c0 is not selected: its recorded coverage"), "{e}");
    formats_agree(d.path(), &rows, 5);
}

// ------------------------------------------- Figure 5: a union of invocations

/// 000 §4.4: for p = [U, ε, A, t, A, f, V] (test `once`), every path with the
/// same edges is in I(G, G'), and valid-reachability — with ⊑'s reachability
/// clause, (A, t) ⊑ (A, f) — eliminates it. But a test's coverage of `g` is the
/// union of all its calls: `twice` calls `g` along [U, ε, A, f, V] (in D: Z runs
/// now) and then along p, and covers exactly p's edges. Its output changes, so
/// every algorithm must select it — and with it `once` and `many`, which no
/// edge-coverage algorithm can tell apart from it. Valid-reachability therefore
/// orders edges by dominance only, and selects what full-reachability selects.
#[test]
fn figure5_a_test_calling_the_changed_function_twice_is_selected_by_every_algorithm() {
    let tests = [("zero", "0"), ("once", "1"), ("many", "3"), ("twice", "0 1")];
    let d = project(MAIN_G, BLOCKS_G, FIG5_OLD, &tests);
    // the recorded coverage of fig.c: twice covers exactly what once and many cover
    let m = json(&retest(d.path(), &["coverage", "--format", "matrix"], 0));
    let cov: BTreeMap<String, serde_json::Value> = m["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["units"]["fig.c@fig.o"].clone()))
        .collect();
    assert_eq!(cov["twice"], cov["once"]);
    assert_eq!(cov["many"], cov["once"]);
    assert_ne!(cov["zero"], cov["once"], "zero never takes (A, t)");
    change(d.path(), BLOCKS_G, FIG5_NEW);
    let changed = audit(d.path());
    assert_eq!(changed, set(&["twice", "zero"]), "the first more() is false: Z runs");
    let (c, rows) = compare(d.path(), &[]);
    let all = set(&["zero", "once", "many", "twice"]);
    for alg in ALGORITHMS {
        assert_eq!(rows[alg], all, "{alg}");
    }
    assert!(c["algorithms"].as_array().unwrap().iter().all(|r| r["missed"].as_array().unwrap().is_empty()), "{c}");
    assert_eq!(c["multiply_visited_nodes"], 1, "A is paired with A1 and A2: {c}");
    // the reason: (A, f) from (A, A1) now leads to Z instead of V — the route
    // [U, ε, A, f, reject] that valid-reachability cannot rule out for a union
    let v = json(&retest(d.path(), &["select", "--algorithm", "valid", "--format", "json"], 0));
    let t = v["selected"].as_array().unwrap().iter().find(|t| t["name"] == "twice").unwrap();
    let texts: Vec<&str> = t["reasons"].as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts, vec!["fig.c:11 changed: `v ( ) ;` → `z ( ) ;` (fig.c:13)"], "{t}");
    formats_agree(d.path(), &rows, 4);
}

// -------------------------------------------------------- the bundled example

/// On every bundled change of examples/cruise (built with `--paths`), in both
/// walks: path ⊆ valid ⊆ full ⊆ partial ⊆ dejavu ⊆ function ⊆ file, and none
/// misses a test the audit saw change. (`workflow.rs` checks that none of them
/// misses a test the audit sees change.)
#[test]
fn bundled_changes_nest() {
    for change_name in ["brake-check", "throttle-gain", "gear-table"] {
        let d = example_copy();
        retest(d.path(), &["init"], 0);
        retest(d.path(), &["build", "--paths", "--", "make", "-s", "-j2"], 0);
        retest(d.path(), &["run", "-j2"], 0);
        apply_change_with(d.path(), change_name, &["--paths"]);
        // the audit's changed tests: no algorithm may miss one (path included)
        retest(d.path(), &["audit", "-j2"], 0);
        for walk in [&[][..], &["--naive"][..]] {
            let (c, rows) = compare(d.path(), walk);
            assert!(
                c["algorithms"].as_array().unwrap().iter().all(|r| r["missed"].as_array().unwrap().is_empty()),
                "{change_name}: {c}"
            );
            let chain = ["path", "valid", "full", "partial", "dejavu", "function", "file"];
            for w in chain.windows(2) {
                assert!(rows[w[0]].is_subset(&rows[w[1]]), "{change_name} {walk:?}: {} ⊆ {}: {c}", w[0], w[1]);
            }
            assert!(!rows["valid"].is_empty(), "{change_name}: the change is reached by some test");
            // without multiply-visited nodes RH is optimal (000 §4.1): nothing to refine
            if c["multiply_visited_nodes"] == 0 {
                for alg in ["partial", "full", "valid"] {
                    assert_eq!(rows[alg], rows["dejavu"], "{change_name} {walk:?} {alg}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------- Figure 6

/// G' of Figure 6: U ε A1; A1 t A2; A1 f V; A2 t A3; A2 f V; A3 t A3; A3 f Z;
/// Z ε V — one iteration of the old loop is fine, two or more now run Z.
const FIG6_NEW: &str = "void g(void)
{
    u();                     /* U */
    if (more()) {            /* A1 */
        if (more()) {        /* A2 */
            while (more())   /* A3 */
                ;
            z();             /* Z */
        }
    }
    v();                     /* V */
}
";

/// Figure 6 nested once more: two iterations are fine, three or more run Z.
const FIG6_NESTED: &str = "void g(void)
{
    u();                         /* U */
    if (more()) {                /* A1 */
        if (more()) {            /* A2 */
            if (more()) {        /* A3 */
                while (more())   /* A4 */
                    ;
                z();             /* Z */
            }
        }
    }
    v();                         /* V */
}
";

/// 000 §5: p = [U, A t, A f, V] (one iteration, in I(G, G')) and q = [U, A t,
/// A t, A f, V] (two, in D(G, G')) cover the same edges, so every edge
/// algorithm must select both; the recorded Ball–Larus paths tell them apart
/// (p = p2 p4, q = p2 p3 p4) and `--algorithm path` selects q alone.
#[test]
fn figure6_path_coverage_decides_what_edge_coverage_cannot() {
    let tests = [("once", "1"), ("twice", "2"), ("never", "0")];
    let d = project_with(MAIN_G, BLOCKS_G, FIG5_OLD, &tests, &["--paths"]);
    change_with(d.path(), BLOCKS_G, FIG6_NEW, &["--paths"]);
    assert_eq!(audit(d.path()), set(&["twice"]));
    let (c, rows) = compare(d.path(), &[]);
    // every test covers (A, f), a transition to reject from (A, A3): RH selects all;
    // D_reject = {(A, t)} from (A, A2), which `never` did not take
    assert_eq!(rows["dejavu"], set(&["never", "once", "twice"]));
    for alg in ["partial", "full", "valid"] {
        assert_eq!(rows[alg], set(&["once", "twice"]), "{alg}: E_p = E_q");
    }
    assert_eq!(rows["path"], set(&["twice"]), "{c}");
    assert!(c["algorithms"].as_array().unwrap().iter().all(|r| r["missed"].as_array().unwrap().is_empty()), "{c}");
    let e = stdout(&retest(d.path(), &["explain", "once", "--algorithm", "path"], 0));
    assert!(e.contains("path coverage, in `g`: none of the 2 acyclic path(s)"), "{e}");

    // without recorded paths, path selection decides on edges (and says so)
    let plain = project(MAIN_G, BLOCKS_G, FIG5_OLD, &tests);
    change(plain.path(), BLOCKS_G, FIG6_NEW);
    let v = json(&retest(plain.path(), &["select", "--algorithm", "path", "--format", "json"], 0));
    let sel: BTreeSet<String> =
        v["selected"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(sel, set(&["once", "twice"]));
    assert!(v["warnings"].to_string().contains("no paths were recorded"), "{v}");
}

/// 000 §5, last example: nesting one more `if` makes q (two iterations) a path
/// of I(G, G') and r (three) one of D(G, G'), with the same recorded paths
/// {p2, p3, p4}: bounded paths cannot tell them apart, so q is selected — and p
/// (one iteration) is still eliminated.
#[test]
fn figure6_nested_defeats_bounded_paths() {
    let tests = [("once", "1"), ("twice", "2"), ("thrice", "3")];
    let d = project_with(MAIN_G, BLOCKS_G, FIG5_OLD, &tests, &["--paths"]);
    change_with(d.path(), BLOCKS_G, FIG6_NESTED, &["--paths"]);
    assert_eq!(audit(d.path()), set(&["thrice"]));
    let (_, rows) = compare(d.path(), &[]);
    assert_eq!(rows["path"], set(&["twice", "thrice"]));
    assert_eq!(rows["valid"], set(&["once", "twice", "thrice"]));
}
