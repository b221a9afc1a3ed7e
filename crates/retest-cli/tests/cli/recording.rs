//! `retest build --mcdc --paths`: what instrumented programs record beyond
//! edges, read back from the store and checked against what the C code does.
//!
//! * MC/DC: random short-circuit decisions over up to 9 conditions, compiled by
//!   the real compiler, evaluated on random inputs: every recorded evaluation
//!   (conditions evaluated, their values, the outcome) is exactly the one the C
//!   semantics give, and nothing else is recorded.
//! * Paths: loops and early returns; the recorded acyclic paths decode into
//!   walks that explain exactly the test's edge coverage, and functions left by
//!   `exit` are flagged as having a path cut off.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use common::{retest, stderr};
use retest_cover::mcdc::{CondVector, McdcLayout};
use retest_graph::recording::{PathLayout, ProcPaths};
use retest_store::{CoverageState, Recorded, Store};

/// A boolean expression over conditions `v[0]`, `v[1]`, … (each used once, in
/// order, so leaf `i` is condition `i` of the decision).
#[derive(Clone, Debug)]
enum E {
    C(usize),
    Not(Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
}

impl E {
    fn c(&self) -> String {
        match self {
            E::C(i) => format!("v[{i}]"),
            E::Not(e) => format!("!({})", e.c()),
            E::And(a, b) => format!("({} && {})", a.c(), b.c()),
            E::Or(a, b) => format!("({} || {})", a.c(), b.c()),
        }
    }

    /// Short-circuit evaluation, recording each evaluated condition's value.
    fn eval(&self, v: &[bool], seen: &mut Vec<(usize, bool)>) -> bool {
        match self {
            E::C(i) => {
                seen.push((*i, v[*i]));
                v[*i]
            }
            E::Not(e) => !e.eval(v, seen),
            E::And(a, b) => a.eval(v, seen) && b.eval(v, seen),
            E::Or(a, b) => a.eval(v, seen) || b.eval(v, seen),
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random expression with leaves `next..next + n`.
fn random_expr(rng: &mut Rng, n: usize, next: &mut usize) -> E {
    let e = if n == 1 {
        *next += 1;
        E::C(*next - 1)
    } else {
        let k = 1 + rng.below(n as u64 - 1) as usize;
        let a = random_expr(rng, k, next);
        let b = random_expr(rng, n - k, next);
        if rng.below(2) == 0 { E::And(Box::new(a), Box::new(b)) } else { E::Or(Box::new(a), Box::new(b)) }
    };
    if rng.below(4) == 0 { E::Not(Box::new(e)) } else { e }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn store_of(dir: &Path) -> Store {
    Store::open(&Store::dir_for(dir)).unwrap()
}

/// The baseline's recordings of every test, by test name and procedure name.
fn recorded_by_test(store: &Store) -> (retest_graph::Unit, BTreeMap<String, Recorded>) {
    let base = store.baseline().unwrap().expect("a baseline");
    let su = store.snapshot_units(base).unwrap();
    assert_eq!(su.len(), 1);
    let unit = (*store.unit(su[0].unit).unwrap()).clone();
    let names: BTreeMap<_, _> = store.tests().unwrap().into_iter().map(|t| (t.id, t.name)).collect();
    for m in store.matrix_tests(base).unwrap() {
        assert_eq!(m.state, CoverageState::Known, "{}", m.name);
    }
    let rec = store.unit_recorded(base, su[0].unit).unwrap().into_iter().map(|(t, r)| (names[&t].clone(), r)).collect();
    (unit, rec)
}

#[test]
fn mcdc_records_every_evaluation_exactly() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut exprs = Vec::new();
    let mut c = String::from("#include <stdlib.h>\n\n");
    for k in 0..24 {
        let n = 1 + (k % 9);
        let mut next = 0;
        let e = random_expr(&mut rng, n, &mut next);
        // the decision is an `if`; half of them also in a loop, evaluated several times
        if k % 2 == 0 {
            c.push_str(&format!("int e{k}(const int *v) {{\n    if ({}) return 1;\n    return 0;\n}}\n\n", e.c()));
        } else {
            c.push_str(&format!(
                "int e{k}(const int *v) {{\n    int r = 0;\n    for (int i = 0; i < 2; i++) {{\n        if ({})\n            r++;\n    }}\n    return r;\n}}\n\n",
                e.c()
            ));
        }
        exprs.push((n, e));
    }
    c.push_str("int main(int argc, char **argv) {\n    int v[16] = {0};\n    int k = atoi(argv[1]);\n");
    c.push_str("    for (int i = 2; i < argc && i < 18; i++) v[i - 2] = atoi(argv[i]);\n    switch (k) {\n");
    for k in 0..exprs.len() {
        c.push_str(&format!("    case {k}: return e{k}(v);\n"));
    }
    c.push_str("    }\n    return 99;\n}\n");
    write(dir, "dec.c", &c);
    write(dir, "Makefile", "dec: dec.c\n\t$(CC) -O1 -o dec dec.c\n");
    // tests: per expression, 6 random inputs (each a separate process)
    let mut universe = String::new();
    let mut expected: BTreeMap<String, (usize, HashSet<CondVector>)> = BTreeMap::new();
    for (k, (n, e)) in exprs.iter().enumerate() {
        for _ in 0..6 {
            let v: Vec<bool> = (0..*n).map(|_| rng.below(2) == 1).collect();
            let args: Vec<String> = v.iter().map(|b| (*b as u8).to_string()).collect();
            universe.push_str(&format!("./dec {k} {}\n", args.join(" ")));
            let name = format!("t{}", universe.lines().count());
            let mut seen = Vec::new();
            let outcome = e.eval(&v, &mut seen);
            let mut cv = CondVector::new(*n, outcome);
            for (i, x) in seen {
                cv.set(i, x);
            }
            expected.insert(name, (k, HashSet::from([cv])));
        }
    }
    write(dir, "universe.txt", &universe);
    retest(dir, &["init"], 0);
    let b = retest(dir, &["build", "--mcdc", "--", "make", "-s"], 0);
    assert!(!stderr(&b).contains("recorded by edges only"), "{}", stderr(&b));
    // exit codes are the expressions' values: tests fail on purpose, coverage is known
    retest(dir, &["run", "--universe", "universe.txt", "-j2"], 1);

    let store = store_of(dir);
    let (unit, rec) = recorded_by_test(&store);
    let layout = McdcLayout::new(&unit);
    assert_eq!(rec.len(), expected.len(), "every test recorded evaluations");
    for (name, (k, want)) in &expected {
        let r = &rec[name];
        let pi = unit.procedures.iter().position(|p| p.name == format!("e{k}")).unwrap();
        let cond = &unit.procedures[pi].cond;
        let decisions = &layout.procs[pi].cfdg.decisions;
        // the decision over v[…] (a loop adds `i < 2`)
        let on_v: Vec<usize> = (0..decisions.len())
            .filter(|&j| decisions[j].conditions.iter().all(|&c| cond.node(c).text.contains("v [")))
            .collect();
        assert_eq!(on_v.len(), 1, "e{k}: one decision over v");
        let j = on_v[0];
        assert_eq!(decisions[j].conditions.len(), exprs[*k].0, "e{k}: every condition");
        assert!(layout.procs[pi].slots[j].sink.is_some(), "e{k}: recorded");
        let got: HashSet<CondVector> =
            layout.evaluations(pi, j, &r.mcdc, &[]).into_iter().map(|pv| pv.vector.normalized()).collect();
        let want: HashSet<CondVector> = want.iter().map(CondVector::normalized).collect();
        assert_eq!(got, want, "{name}: e{k}({})", exprs[*k].1.c());
        // no other expression function evaluated anything
        for (pj, p) in unit.procedures.iter().enumerate() {
            if pj != pi && p.name.starts_with('e') {
                for j in 0..layout.procs[pj].slots.len() {
                    assert!(layout.evaluations(pj, j, &r.mcdc, &[]).is_empty(), "{name}: {}", p.name);
                }
            }
        }
    }
}

#[test]
fn paths_decode_into_the_covered_edges_and_cut_off_paths_are_flagged() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(
        dir,
        "p.c",
        r#"#include <stdio.h>
#include <stdlib.h>

static int classify(int x) {
    if (x < 0)
        return -1;
    if (x == 0)
        return 0;
    return 1;
}

static int sum(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 == 0)
            continue;
        s += classify(i - 2);
    }
    return s;
}

static void die(int code) {
    if (code > 0) {
        printf("dying\n");
        exit(code);
    }
}

static int walk(int n) {
    int steps = 0;
    while (n != 1) {
        n = n % 2 ? 3 * n + 1 : n / 2;
        steps++;
        die(steps > 5 ? 7 : 0);
    }
    return steps;
}

int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    if (argv[1][0] == 's')
        printf("%d\n", sum(n));
    else
        printf("%d\n", walk(n));
    return 0;
}
"#,
    );
    write(dir, "Makefile", "p: p.c\n\t$(CC) -O0 -o p p.c\n");
    write(dir, "universe.txt", "./p s 0\n./p s 1\n./p s 7\n./p w 1\n./p w 4\n./p w 7\n");
    retest(dir, &["init"], 0);
    let b = retest(dir, &["build", "--paths", "--", "make", "-s"], 0);
    assert!(!stderr(&b).contains("recorded by edges only"), "{}", stderr(&b));
    // `./p w 7` dies through exit(7): a failing test, with known coverage
    retest(dir, &["run", "--universe", "universe.txt", "-j2"], 1);

    let store = store_of(dir);
    let base = store.baseline().unwrap().unwrap();
    let (unit, rec) = recorded_by_test(&store);
    let layout = PathLayout::new(&unit);
    let unit_id = store.snapshot_units(base).unwrap()[0].unit;
    let names: BTreeMap<_, _> = store.tests().unwrap().into_iter().map(|t| (t.name, t.id)).collect();
    let bases = unit.edge_bases();
    let proc_index = |n: &str| unit.procedures.iter().position(|p| p.name == n).unwrap();
    for (name, r) in &rec {
        let cov = store.test_coverage(base, names[name]).unwrap();
        let edges = cov.iter().find(|(u, _)| *u == unit_id).map(|(_, b)| b.clone()).unwrap_or_default();
        for (i, p) in unit.procedures.iter().enumerate() {
            let (cell0, numbering) = match &layout.procs[i] {
                ProcPaths::Cells { base, numbering } => (base, numbering),
                ProcPaths::Single => continue,
                _ => panic!("{}: paths are recorded in cells here", p.name),
            };
            // statement-level edges the test covered in this procedure
            let mut covered = BTreeSet::new();
            for (fine, coarse) in p.map.edge.iter().enumerate() {
                if let Some(c) = coarse
                    && edges.contains(bases[i] + fine as u32)
                {
                    covered.insert(*c);
                }
            }
            let mut walked = BTreeSet::new();
            for cell in r.paths.range(*cell0..*cell0 + numbering.path_count() as u32) {
                let path = numbering.decode(&p.stmt, u64::from(cell - cell0)).expect("a recorded id decodes");
                walked.extend(path.edges);
            }
            if r.frames.contains(i as u32) {
                // a path cut off by exit(): what was recorded is part of what ran
                assert!(walked.is_subset(&covered), "{name}: {}", p.name);
            } else {
                assert_eq!(walked, covered, "{name}: {}: the recorded paths explain the covered edges", p.name);
            }
        }
    }
    // `./p w 7` is t6: walk, die and main were left by exit(); `./p w 4` returns normally
    let cut: BTreeSet<usize> = rec["t6"].frames.iter().map(|f| f as usize).collect();
    assert_eq!(cut, BTreeSet::from([proc_index("die"), proc_index("walk"), proc_index("main")]));
    assert!(rec["t5"].frames.is_empty());
    // `./p s 7` loops: several distinct paths in sum, including ones through `continue`
    let si = proc_index("sum");
    let ProcPaths::Cells { base: s0, numbering } = &layout.procs[si] else { unreachable!() };
    let sum_paths = rec["t3"].paths.range(*s0..*s0 + numbering.path_count() as u32).count();
    assert!(sum_paths >= 4, "sum(7) took {sum_paths} distinct acyclic paths");
}

/// The frames-in-flight counters stay exact when the process has threads
/// (they then change by atomic read-modify-writes; by plain arithmetic only
/// while it is single-threaded), and catch a call left by a signal handler's
/// `siglongjmp` or by another thread's `exit`.
#[test]
fn calls_in_flight_are_counted_exactly_with_threads_and_signals() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(
        dir,
        "t.c",
        r#"#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int inside, total;
static sigjmp_buf back;

/* not inlined: every call changes the counter in memory */
__attribute__((noinline)) static int work(int i) {
    if (i % 3 == 0)
        return 1;
    return 2;
}

static void *race(void *arg) {
    int i, s = 0;
    (void) arg;
    for (i = 0; i < 10000000; i++)
        s += work(i);
    total += s;
    return 0;
}

static int spin(int k) {
    inside = 1;
    while (k > 0)
        if (k > 1)
            k = 2;
    return k;
}

static void *stuck(void *arg) {
    (void) arg;
    return (void *) (long) spin(1);
}

static long peek(const long *p) {
    if (p)
        return *p;
    return -1;
}

static void on_segv(int sig) {
    (void) sig;
    siglongjmp(back, 1);
}

int main(int argc, char **argv) {
    pthread_t t[2];
    (void) argc;
    if (strcmp(argv[1], "race") == 0) {
        pthread_create(&t[0], 0, race, 0);
        pthread_create(&t[1], 0, race, 0);
        pthread_join(t[0], 0);
        pthread_join(t[1], 0);
        printf("%d\n", total);
    } else if (strcmp(argv[1], "exit") == 0) {
        pthread_create(&t[0], 0, stuck, 0);
        while (!inside)
            usleep(1000);
        printf("leaving\n");
        exit(0);
    } else {
        signal(SIGSEGV, on_segv);
        if (sigsetjmp(back, 1) == 0)
            printf("%ld\n", peek((const long *) (long) atoi(argv[2])));
        printf("caught\n");
    }
    return 0;
}
"#,
    );
    write(dir, "Makefile", "t: t.c\n\t$(CC) -O2 -pthread -o t t.c\n");
    write(dir, "universe.txt", "./t race\n./t exit\n./t segv 8\n");
    retest(dir, &["init"], 0);
    let b = retest(dir, &["build", "--paths", "--", "make", "-s"], 0);
    assert!(!stderr(&b).contains("recorded by edges only: work"), "{}", stderr(&b));
    retest(dir, &["run", "--universe", "universe.txt", "-j1"], 0);

    let store = store_of(dir);
    let (unit, rec) = recorded_by_test(&store);
    let layout = PathLayout::new(&unit);
    let proc_index = |n: &str| unit.procedures.iter().position(|p| p.name == n).unwrap();
    for f in ["work", "spin", "peek"] {
        assert!(matches!(layout.procs[proc_index(f)], ProcPaths::Cells { .. }), "{f}: paths recorded in cells");
    }
    let cut = |t: &str| -> BTreeSet<&str> {
        rec[t].frames.iter().map(|f| unit.procedures[f as usize].name.as_str()).collect()
    };
    // two threads made 20,000,000 calls of `work` at once: every one counted in and out
    assert!(cut("t1").is_empty(), "race: {:?}", cut("t1"));
    // `exit` on the main thread while the other spins in `spin` (`stuck` has
    // one path and `main` calls `sigsetjmp`: neither records paths)
    for f in ["stuck", "main"] {
        assert!(!matches!(layout.procs[proc_index(f)], ProcPaths::Cells { .. }), "{f}: no paths recorded");
    }
    assert_eq!(cut("t2"), BTreeSet::from(["spin"]));
    // the fault in `peek` is caught and left by `siglongjmp`: `peek` stays in flight
    assert_eq!(cut("t3"), BTreeSet::from(["peek"]));
}

/// What cannot be recorded is said at build time, and recorded by edges only:
/// paths of a function calling `setjmp` (its locals are indeterminate after a
/// `longjmp`), and a decision of a function with a computed `goto`.
#[test]
fn what_cannot_be_recorded_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(
        dir,
        "j.c",
        r#"#include <setjmp.h>
#include <stdlib.h>
static jmp_buf env;
static void fail(int x) { if (x > 2) longjmp(env, 1); }
static int guarded(int x) {
    if (setjmp(env) != 0)
        return -1;
    fail(x);
    return x;
}
static int dispatch(int k) {
    static void *labels[] = { &&zero, &&one };
    goto *labels[k & 1];
zero:
    return k > 4 && k < 9;
one:
    return 7;
}
int main(int argc, char **argv) {
    int x = atoi(argv[1]);
    return guarded(x) + dispatch(x) < 0;
}
"#,
    );
    write(dir, "Makefile", "j: j.c\n\t$(CC) -O0 -o j j.c\n");
    write(dir, "universe.txt", "./j 1\n./j 3\n./j 6\n");
    retest(dir, &["init"], 0);
    let b = stderr(&retest(dir, &["build", "--mcdc", "--paths", "--", "make", "-s"], 0));
    // glibc's setjmp is a macro for _setjmp
    assert!(
        b.contains("guarded() paths: it calls `_setjmp`") || b.contains("guarded() paths: it calls `setjmp`"),
        "{b}"
    );
    assert!(b.contains("dispatch() paths:"), "{b}");
    assert!(!b.contains("dispatch() decision"), "the decision in dispatch() is recorded: {b}");
    retest(dir, &["run", "--universe", "universe.txt"], 0);
    let store = store_of(dir);
    let (unit, rec) = recorded_by_test(&store);
    let layout = McdcLayout::new(&unit);
    let di = unit.procedures.iter().position(|p| p.name == "dispatch").unwrap();
    // ./j 6 evaluates `k > 4 && k < 9` once: both conditions true
    let got: Vec<String> = layout.procs[di]
        .slots
        .iter()
        .enumerate()
        .flat_map(|(j, _)| layout.evaluations(di, j, &rec["t3"].mcdc, &[]))
        .map(|pv| pv.vector.to_string())
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
}

/// A program that writes past the end of its zero-initialised data writes into
/// the runtime's guard before it reaches the runtime's state: the test's
/// coverage is unknown, with the reason, the same on every run, and a run that
/// stays in bounds is recorded as usual.
#[test]
fn a_write_past_the_programs_data_makes_coverage_unknown_not_wrong() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    write(
        dir,
        "o.c",
        r#"#include <stdlib.h>
static int table[4];
int main(int argc, char **argv) {
    int n = atoi(argv[1]), i;
    int *p = table;
    for (i = 0; i < n; i++)
        p[i] = 0x5a5a5a5a;
    return table[0] != (n > 0 ? 0x5a5a5a5a : 0);
}
"#,
    );
    write(dir, "Makefile", "o: o.c\n\t$(CC) -O0 -o o o.c\n");
    write(dir, "universe.txt", "./o 4\n./o 2048\n");
    retest(dir, &["init"], 0);
    retest(dir, &["build", "--", "make", "-s"], 0);
    let states = |dir: &Path| -> Vec<(String, String)> {
        retest(dir, &["run", "--universe", "universe.txt"], 0);
        let m = common::stdout(&retest(dir, &["coverage", "--format", "matrix"], 0));
        let v: serde_json::Value = serde_json::from_str(&m).unwrap();
        v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["state"].as_str().unwrap().to_string(), t["reason"].as_str().unwrap_or("").to_string()))
            .collect()
    };
    let first = states(dir);
    assert_eq!(first[0].0, "ok", "{first:?}");
    assert_eq!(first[1].0, "unknown", "{first:?}");
    assert!(first[1].1.contains("wrote past the end of its own data"), "{first:?}");
    for _ in 0..3 {
        assert_eq!(states(dir), first);
    }
}
