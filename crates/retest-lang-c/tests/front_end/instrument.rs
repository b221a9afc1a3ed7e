//! Instrumentation end to end: instrument a unit, compile it with the real
//! compiler and the runtime, run it, read the traces, and check the edges the
//! probes report.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use fixedbitset::FixedBitSet;
use retest_graph::coverage::edge_coverage;
use retest_graph::{NodeKind, Procedure};
use retest_lang_c::instrument::{UnitCells, build_hash, full_plan, instrument, source_hash};
use retest_lang_c::{TuAnalysis, analyze, run_preprocessor};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// An instrumented program: the unit under test (instrumented), a driver, the runtime.
struct Program {
    dir: tempfile::TempDir,
    exe: PathBuf,
    tu: TuAnalysis,
    hash: retest_abi::BuildHash,
}

fn build(dir_of_source: &Path, source: &str, flags: &[&str], driver: &str, cflags: &[&str]) -> Program {
    build_paired(dir_of_source, source, flags, driver, cflags, false)
}

/// [`build`], with the unit's probes paired (`TuAnalysis::pair_probes`) if `pair`.
fn build_paired(
    dir_of_source: &Path,
    source: &str,
    flags: &[&str],
    driver: &str,
    cflags: &[&str],
    pair: bool,
) -> Program {
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let pre = run_preprocessor(&cc(), &flags, Path::new(source), dir_of_source).unwrap();
    let mut tu = analyze(&pre, &|f| !f.system);
    if pair {
        tu.pair_probes();
    }
    let plan = full_plan(&tu.unit);
    let hash = build_hash(&source_hash(&pre.raw), &plan);
    let ins = instrument(&pre.raw, &tu, &plan, &hash);
    let dir = tempfile::tempdir().unwrap();
    let i = dir.path().join("unit.i");
    std::fs::write(&i, &ins.text).unwrap();
    retest_lang_c::write_runtime(dir.path()).unwrap();
    std::fs::write(dir.path().join("driver.c"), driver).unwrap();
    sh(Command::new(cc()).current_dir(dir.path()).args(["-c", "-O2", "-fPIC", "retest_rt.c", "-o", "rt.o"]));
    sh(Command::new(cc()).current_dir(dir.path()).args(cflags).args([
        "-x",
        "cpp-output",
        "-c",
        "unit.i",
        "-o",
        "unit.o",
    ]));
    sh(Command::new(cc()).current_dir(dir.path()).args(["-c", "driver.c", "-o", "driver.o"]));
    let exe = dir.path().join("prog");
    sh(Command::new(cc()).current_dir(dir.path()).args(["unit.o", "driver.o", "rt.o", "-o"]).arg(&exe));
    Program { dir, exe, tu, hash }
}

impl Program {
    /// Runs the program and returns the covered condition-level edges per procedure.
    fn run(&self, args: &[&str], stdin: &str) -> Vec<FixedBitSet> {
        let traces = tempfile::tempdir_in(self.dir.path()).unwrap();
        let input = self.dir.path().join("stdin.txt");
        std::fs::write(&input, stdin).unwrap();
        let st = Command::new(&self.exe)
            .args(args)
            .env("RETEST_TRACE_DIR", traces.path())
            .stdin(std::fs::File::open(&input).unwrap())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        let _ = st;
        let dir = retest_run::trace::read_dir(traces.path()).unwrap();
        assert!(dir.errors.is_empty() && dir.live.is_empty(), "clean trace dir: {dir:?}");
        let cov = dir.coverage().unwrap();
        let hits: BTreeSet<u32> = cov
            .cells(&self.hash, retest_run::trace::SECT_EDGES)
            .map(|c| c.hit.iter().copied().collect())
            .unwrap_or_default();
        let plan = full_plan(&self.tu.unit);
        let cells = UnitCells::new(&self.tu.unit, &plan);
        self.tu
            .unit
            .procedures
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let base = cells.base[i];
                edge_coverage(&p.cond, &plan[i], &cells.layouts[i], &|c| hits.contains(&(base + c)))
            })
            .collect()
    }

    fn procedure(&self, name: &str) -> (usize, &Procedure) {
        self.tu.unit.procedures.iter().enumerate().find(|(_, p)| p.name == name).unwrap()
    }
}

/// Statement-level edges of `p` covered, as (source text, label, target text).
fn stmt_edges(p: &Procedure, cond: &FixedBitSet) -> BTreeSet<(String, String, String)> {
    let cov = p.stmt_coverage(cond);
    p.stmt
        .edges()
        .filter(|(id, _)| cov.contains(id.index()))
        .map(|(_, e)| {
            let name = |n| {
                let node = p.stmt.node(n);
                match node.kind {
                    NodeKind::Entry => "entry".to_string(),
                    NodeKind::Exit => "exit".to_string(),
                    NodeKind::Declaration => "decl".to_string(),
                    _ => node.text.clone(),
                }
            };
            (name(e.src), e.label.to_string(), name(e.dst))
        })
        .collect()
}

fn edges(v: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    v.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect()
}

const AVG_DRIVER: &str = r#"
#include <stdio.h>
double avg(FILE *fileptr);
double calcavg(int *numarray, int count) {
    int i; double s = 0;
    for (i = 0; i < count; i++) s += numarray[i];
    return count ? s / count : 0;
}
int main(void) { printf("%g\n", avg(stdin)); return 0; }
"#;

/// The test history of `avg` for its three tests (002, Fig. 2).
#[test]
fn avg_test_history_matches_the_paper() {
    let p = build(&corpus(), "avg.c", &[], AVG_DRIVER, &["-w"]);
    let (i, avg) = p.procedure("avg");
    let s1 = "count = 0 ;";
    let s2 = "fscanf ( fileptr , \"%d\" , & n ) ;";
    let p3 = "! feof ( fileptr )";
    let p4 = "n < 0";
    let s5 = "return -1 ;";
    let s6 = "numarray [ count ] = n ;";
    let s7 = "count ++ ;";
    let s8 = "fscanf ( fileptr , \"%d\" , & n ) ;";
    let s9 = "average = calcavg ( numarray , count ) ;";
    let s10 = "return average ;";
    let prefix = [("entry", "ε", "decl"), ("decl", "ε", s1), (s1, "ε", s2), (s2, "ε", p3)];

    let t1 = stmt_edges(avg, &p.run(&[], "")[i]);
    let mut want: Vec<_> = prefix.to_vec();
    want.extend([(p3, "F", s9), (s9, "ε", s10), (s10, "ε", "exit")]);
    assert_eq!(t1, edges(&want), "t1: empty file");

    let t2 = stmt_edges(avg, &p.run(&[], "-1\n")[i]);
    let mut want: Vec<_> = prefix.to_vec();
    want.extend([(p3, "T", p4), (p4, "T", s5), (s5, "ε", "exit")]);
    assert_eq!(t2, edges(&want), "t2: a negative number");

    let t3 = stmt_edges(avg, &p.run(&[], "1 2 3\n")[i]);
    let mut want: Vec<_> = prefix.to_vec();
    want.extend([
        (p3, "T", p4),
        (p4, "F", s6),
        (s6, "ε", s7),
        (s7, "ε", s8),
        (s8, "ε", p3),
        (p3, "F", s9),
        (s9, "ε", s10),
        (s10, "ε", "exit"),
    ]);
    assert_eq!(t3, edges(&want), "t3: three numbers");
}

const CONSTRUCTS_DRIVER: &str = r#"
#include <stdlib.h>
int loops(int); int choose(int); int jumps(int *, int); int exprs(int, int, int);
int dispatch(int); int asm_jump(int); int noreturns(int);
int main(int argc, char **argv) {
    int v = atoi(argv[2]), arr[3] = { 1, 2, -1 };
    switch (argv[1][0]) {
    case 'l': return loops(v) & 0x7f;
    case 'c': return choose(v) & 0x7f;
    case 'j': return jumps(arr, v) & 0x7f;
    case 'e': return exprs(v, v > 1, v > 2) & 0x7f;
    case 'd': return dispatch(v) & 0x7f;
    case 'a': return asm_jump(v) & 0x7f;
    case 'n': return noreturns(v) & 0x7f;
    }
    return 0;
}
"#;

fn constructs() -> Program {
    build(&corpus(), "constructs.c", &[], CONSTRUCTS_DRIVER, &["-w"])
}

fn label_edges(p: &Procedure, cond: &FixedBitSet, src_text: &str) -> BTreeSet<String> {
    let cov = p.stmt_coverage(cond);
    p.stmt
        .edges()
        .filter(|(id, e)| cov.contains(id.index()) && p.stmt.node(e.src).text == src_text)
        .map(|(_, e)| e.label.to_string())
        .collect()
}

/// Paired probes (what `retest cc` places when the compiler optimises) claim
/// exactly the edges unpaired ones claim, run for run, on every construct of
/// the corpus, compiled at `-O2` (the flag in a register, the test threaded
/// away) and at `-O0` (the flag in memory).
#[test]
fn paired_probes_record_what_unpaired_probes_record() {
    use retest_graph::coverage::Probe;
    let plain = build(&corpus(), "constructs.c", &[], CONSTRUCTS_DRIVER, &["-w", "-O2"]);
    let pairs = |p: &Program| {
        p.tu.unit.procedures.iter().flat_map(|f| &f.probes).filter(|p| matches!(p, Probe::Paired { .. })).count()
    };
    assert_eq!(pairs(&plain), 0);
    let runs: [&[&str]; 14] = [
        &["l", "2"],
        &["l", "5"],
        &["c", "0"],
        &["c", "4"],
        &["c", "7"],
        &["c", "120"],
        &["j", "3"],
        &["j", "1"],
        &["e", "0"],
        &["e", "1"],
        &["e", "3"],
        &["d", "0"],
        &["a", "5"],
        &["n", "7"],
    ];
    for opt in ["-O2", "-O0"] {
        let paired = build_paired(&corpus(), "constructs.c", &[], CONSTRUCTS_DRIVER, &["-w", opt], true);
        assert!(pairs(&paired) >= 1, "{opt}: the corpus has a condition to pair");
        for args in runs {
            assert_eq!(plain.run(args, ""), paired.run(args, ""), "{opt}: {args:?}");
        }
    }
    // the shapes that pair: an `else if` after `a && b`, `(a && b) || c`, a
    // condition reached by two `||` outcomes — in a loop and not, and with a
    // call inside the paired condition
    const UNIT: &str = "static int peek(const char *s, int i) { return s[i] ? (unsigned char)s[i] : -1; }
int scan(const char *s)
{
    int i = 0, n = 0;
    while (peek(s, i) != -1) {
        if (s[i] == '/' && s[i + 1] == '*')
            n += 10;
        else if (peek(s, i) == '*' && s[i + 1] == '/')
            n += 100;
        if ((s[i] == 'a' && s[i + 1] == 'b') || s[i] == 'c')
            n += 1000;
        i++;
    }
    return n;
}
int pick(int a, int b, int c)
{
    if ((a > 0 || b > 0) && c > 0)
        return 1;
    if (a == b && b == c)
        return 2;
    else if (a < 0)
        return 3;
    return 4;
}
";
    const DRIVER: &str = "#include <stdlib.h>
int scan(const char *s); int pick(int a, int b, int c);
int main(int argc, char **argv)
{
    if (argc == 2) return scan(argv[1]) % 97;
    return pick(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]));
}
";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("unit.c"), UNIT).unwrap();
    let plain = build(src.path(), "unit.c", &[], DRIVER, &["-O2"]);
    let runs: [&[&str]; 9] = [
        &["/* x */"],
        &["ab c a*/ /"],
        &[""],
        &["1", "1", "1"],
        &["-1", "-1", "-1"],
        &["-1", "2", "0"],
        &["0", "0", "5"],
        &["-2", "3", "3"],
        &["4", "-4", "-4"],
    ];
    for opt in ["-O2", "-O0"] {
        let paired = build_paired(src.path(), "unit.c", &[], DRIVER, &[opt], true);
        assert!(pairs(&paired) >= 3, "{opt}: conditions to pair: {}", pairs(&paired));
        for args in runs {
            let (a, b) = (plain.run(args, ""), paired.run(args, ""));
            assert!(a.iter().any(|c| c.count_ones(..) > 0), "{args:?} covers something");
            assert_eq!(a, b, "{opt}: {args:?}");
        }
    }
}

#[test]
fn a_case_reached_by_fall_through_is_not_a_taken_label() {
    let p = constructs();
    let (i, choose) = p.procedure("choose");
    // c = 0: case 0 is taken, then falls through into case 1/2's code
    let cov = p.run(&["c", "0"], "");
    assert_eq!(label_edges(choose, &cov[i], "c"), BTreeSet::from(["case 0".to_string()]));
    assert_eq!(label_edges(choose, &cov[i], "c & 3"), BTreeSet::from(["case 0".to_string()]));
    // c = 4: the case range
    let cov = p.run(&["c", "4"], "");
    assert_eq!(label_edges(choose, &cov[i], "c"), BTreeSet::from(["case 3 ... 5".to_string()]));
    // c = 'x'
    let cov = p.run(&["c", "120"], "");
    assert_eq!(label_edges(choose, &cov[i], "c"), BTreeSet::from(["case 'x'".to_string()]));
    // c = 7: explicit default, and the implicit default of the second switch
    let cov = p.run(&["c", "7"], "");
    assert_eq!(label_edges(choose, &cov[i], "c"), BTreeSet::from(["default".to_string()]));
    assert_eq!(label_edges(choose, &cov[i], "c & 3"), BTreeSet::from(["default".to_string()]));
}

#[test]
fn short_circuit_conditions_record_each_evaluated_outcome() {
    let p = constructs();
    let (i, exprs) = p.procedure("exprs");
    // exprs(0, 0, 0): `a && b || !c` evaluates a (F) then c (F): b never evaluated
    let cov = p.run(&["e", "0"], "");
    let taken: BTreeSet<(String, String)> = exprs
        .cond
        .edges()
        .filter(|(id, e)| cov[i].contains(id.index()) && exprs.cond.node(e.src).span.map(|s| s.line) == Some(92))
        .map(|(_, e)| (exprs.cond.node(e.src).text.clone(), e.label.to_string()))
        .collect();
    // (true) is reached from c = F (the `!c` is true), (false) is not
    assert!(taken.contains(&("a".into(), "F".into())) && taken.contains(&("c".into(), "F".into())));
    assert!(!taken.iter().any(|(n, _)| n == "b"), "b is not evaluated: {taken:?}");
    assert!(taken.contains(&("(true)".into(), "ε".into())));
    assert!(!taken.contains(&("(false)".into(), "ε".into())));
}

#[test]
fn loops_and_gotos() {
    let p = constructs();
    let (i, loops) = p.procedure("loops");
    let cov = p.run(&["l", "2"], "");
    // for (i = 0; i < n; i++) with n = 2: both outcomes of i < n; i == 3 never true
    assert_eq!(label_edges(loops, &cov[i], "i < n"), BTreeSet::from(["T".to_string(), "F".to_string()]));
    assert_eq!(label_edges(loops, &cov[i], "i == 3"), BTreeSet::from(["F".to_string()]));
    let (j, jumps) = p.procedure("jumps");
    // jumps({1, 2, -1}, 3): i = 0, 1 pass, p[2] < 0 → goto fail_
    let cov = p.run(&["j", "3"], "");
    assert_eq!(label_edges(jumps, &cov[j], "p [ i ] < 0"), BTreeSet::from(["T".to_string(), "F".to_string()]));
    assert_eq!(label_edges(jumps, &cov[j], "i >= n"), BTreeSet::from(["F".to_string()]));
    assert!(label_edges(jumps, &cov[j], "return -1 ;").contains("ε"));
}

#[test]
fn computed_goto_and_asm_goto_over_approximate() {
    let p = constructs();
    let (i, d) = p.procedure("dispatch");
    let cov = p.run(&["d", "0"], "");
    // one of the two targets ran, but the probe cannot tell which: both count
    assert_eq!(
        label_edges(d, &cov[i], "goto * targets [ op & 1 ] ;"),
        BTreeSet::from(["goto l_add".to_string(), "goto l_sub".to_string()])
    );
    let (j, a) = p.procedure("asm_jump");
    let cov = p.run(&["a", "5"], "");
    assert_eq!(
        label_edges(a, &cov[j], "asm goto ( \"\" : : : : taken ) ;"),
        BTreeSet::from(["ε".to_string(), "goto taken".to_string()])
    );
}

#[test]
fn noreturn_paths_end_at_the_exit() {
    let p = constructs();
    let (i, n) = p.procedure("noreturns");
    let cov = p.run(&["n", "0"], ""); // fail(__LINE__) → exit(3)
    assert_eq!(label_edges(n, &cov[i], "v == 0"), BTreeSet::from(["T".to_string()]));
    assert_eq!(label_edges(n, &cov[i], "fail ( 132 ) ;"), BTreeSet::from(["ε".to_string()]));
    assert!(label_edges(n, &cov[i], "v > 1000").is_empty(), "nothing after the call that exits");
}

/// The instrumented example compiles without a single new warning under the
/// strictest flags it compiles under without instrumentation.
#[test]
fn instrumented_example_compiles_warning_free() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cruise");
    let dir = tempfile::tempdir().unwrap();
    let mut paired = 0;
    for f in ["main.c", "parse.c", "commands.c", "controller.c", "throttle.c", "report.c"] {
        // unpaired at -O0, paired at -O2 (as `retest cc` places them)
        for (opt, pair) in [("-O0", false), ("-O2", true)] {
            let flags = vec!["-std=c99".to_string(), "-pedantic".to_string(), opt.to_string()];
            let pre = run_preprocessor(&cc(), &flags, Path::new(f), &ex).unwrap();
            let mut tu = analyze(&pre, &|f| !f.system);
            if pair {
                tu.pair_probes();
            }
            let plan = full_plan(&tu.unit);
            paired +=
                plan.iter().flatten().filter(|p| matches!(p, retest_graph::coverage::Probe::Paired { .. })).count();
            let hash = build_hash(&source_hash(&pre.raw), &plan);
            let ins = instrument(&pre.raw, &tu, &plan, &hash);
            let i = dir.path().join(f.replace(".c", ".i"));
            std::fs::write(&i, &ins.text).unwrap();
            sh(Command::new(cc())
                .current_dir(dir.path())
                .args([
                    "-std=c99",
                    "-pedantic",
                    "-Wall",
                    "-Wextra",
                    "-Wshadow",
                    "-Werror",
                    // the example marks its fall-throughs with comments, which
                    // preprocessing drops (and `retest cc` compiles with `-w`)
                    "-Wno-implicit-fallthrough",
                    opt,
                    "-x",
                    "cpp-output",
                    "-c",
                ])
                .arg(&i)
                .arg("-o")
                .arg(dir.path().join(f.replace(".c", ".o"))));
        }
    }
    assert!(paired > 0, "the example has conditions to pair");
}

/// C89 code with declarations at the start of blocks stays C89.
#[test]
fn c89_declarations_stay_first_in_their_block() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c89.c"),
        "int f(int n)\n{\n    int i, s = 0;\n    for (i = 0; i < n; i++) {\n        int k = i * 2;\n        if (k > 3 && n)\n            s += k;\n    }\n    switch (n) { case 1: s++; break; default: break; }\n    return s;\n}\n",
    )
    .unwrap();
    let flags = vec!["-std=c89".to_string()];
    let pre = run_preprocessor(&cc(), &flags, Path::new("c89.c"), dir.path()).unwrap();
    let tu = analyze(&pre, &|f| !f.system);
    let plan = full_plan(&tu.unit);
    let hash = build_hash(&source_hash(&pre.raw), &plan);
    let ins = instrument(&pre.raw, &tu, &plan, &hash);
    std::fs::write(dir.path().join("c89.i"), &ins.text).unwrap();
    sh(Command::new(cc())
        .current_dir(dir.path())
        .args(["-std=c89", "-pedantic-errors", "-Wall", "-Wextra", "-Werror", "-Wdeclaration-after-statement"])
        .args(["-x", "cpp-output", "-c", "c89.i", "-o", "c89.o"]));
}

/// C11 atomics, `va_arg` in conditions and `typeof` of expressions (as GCC's
/// headers expand them) instrument into code that compiles and reports the
/// edges the run took: a misparsed `__typeof__ ((void)0, *p) tmp;` once got a
/// probe between its type and its declarator.
#[test]
fn atomics_va_arg_and_typeof_instrument_and_run() {
    let driver = r#"
#include <stddef.h>
long bump(long by);
int count_until_zero(int n, ...);
size_t where(int which);
int twice(int *p);
int main(void) {
    int v = 3;
    bump(1);
    return count_until_zero(3, 5u, 0u, (char *)0) + (int)where(1) + twice(&v) > 0 ? 0 : 1;
}
"#;
    let p = build(&corpus(), "gnu_types.c", &["-std=gnu11"], driver, &["-std=gnu11"]);
    assert!(p.tu.unit.problems.is_empty(), "{:?}", p.tu.unit.problems);
    let cov = p.run(&[], "");
    let (i, f) = p.procedure("count_until_zero");
    // the loop ran once (5u), then stopped at 0u; the char * was NULL
    assert_eq!(
        label_edges(f, &cov[i], "k < n && __builtin_va_arg ( ap , unsigned int ) != 0"),
        BTreeSet::from(["T".to_string(), "F".to_string()])
    );
    assert_eq!(
        label_edges(f, &cov[i], "__builtin_va_arg ( ap , char * ) == ( ( void * ) 0 )"),
        BTreeSet::from(["T".to_string()])
    );
    let (i, b) = p.procedure("bump");
    assert_eq!(label_edges(b, &cov[i], "seen > 100"), BTreeSet::from(["F".to_string()]));
}

/// Probes are dropped only where other cells imply them: a condition that calls a
/// `static` function of the unit that always returns shows its own start, so the
/// entry needs no probe; the statement after a call that may not return (a
/// `static` function that calls `exit`, a function of another unit) keeps its
/// own, and coverage stays exact when those calls do end the process.
#[test]
fn derived_probes_stay_exact_across_calls_that_exit() {
    const UNIT: &str = "#include <stdlib.h>
void ext(int);
static int twice(int x) { return x + x; }
static void die(int c) { if (c) exit(c); }
int f(int a)
{
    int r = 0;
    if (twice(a) > 2)
        r = 1;
    die(a == 5);
    r += 2;
    ext(a);
    r += 3;
    return r;
}
";
    const DRIVER: &str = "#include <stdlib.h>
int f(int a);
void ext(int a) { if (a == 2) exit(0); }
int main(int argc, char **argv) { return argc > 1 ? f(atoi(argv[1])) * 0 : 1; }
";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("unit.c"), UNIT).unwrap();
    let p = build(src.path(), "unit.c", &[], DRIVER, &["-O2"]);
    let (i, f) = p.procedure("f");
    use retest_graph::coverage::Probe;
    let probe_of = |text: &str| {
        let n = f.cond.node_ids().find(|&n| f.cond.node(n).text == text).unwrap_or_else(|| panic!("no node `{text}`"));
        f.probes[n.index()]
    };
    assert_eq!(f.probes[f.cond.entry().index()], Probe::Ahead, "the entry is implied by the first condition");
    assert_eq!(probe_of("r += 2 ;"), Probe::Node, "die() may exit");
    assert_eq!(probe_of("r += 3 ;"), Probe::Node, "ext() may exit");
    let head = [("entry", "ε", "decl"), ("decl", "ε", "int r = 0 ;"), ("int r = 0 ;", "ε", "twice ( a ) > 2")];
    let all = |taken: &[(&'static str, &'static str, &'static str)]| {
        let mut v: Vec<_> = head.to_vec();
        v.extend_from_slice(taken);
        edges(&v)
    };
    // a = 0: the condition is false, every call returns
    assert_eq!(
        stmt_edges(f, &p.run(&["0"], "")[i]),
        all(&[
            ("twice ( a ) > 2", "F", "die ( a == 5 ) ;"),
            ("die ( a == 5 ) ;", "ε", "r += 2 ;"),
            ("r += 2 ;", "ε", "ext ( a ) ;"),
            ("ext ( a ) ;", "ε", "r += 3 ;"),
            ("r += 3 ;", "ε", "return r ;"),
            ("return r ;", "ε", "exit"),
        ])
    );
    // a = 2: true, then ext() exits: nothing after it ran
    assert_eq!(
        stmt_edges(f, &p.run(&["2"], "")[i]),
        all(&[
            ("twice ( a ) > 2", "T", "r = 1 ;"),
            ("r = 1 ;", "ε", "die ( a == 5 ) ;"),
            ("die ( a == 5 ) ;", "ε", "r += 2 ;"),
            ("r += 2 ;", "ε", "ext ( a ) ;"),
            ("ext ( a ) ;", "ε", "r += 3 ;"),
        ]),
        "the call's own edge counts (it started), the statement after it did not run"
    );
    // a = 5: die() exits
    assert_eq!(
        stmt_edges(f, &p.run(&["5"], "")[i]),
        all(&[
            ("twice ( a ) > 2", "T", "r = 1 ;"),
            ("r = 1 ;", "ε", "die ( a == 5 ) ;"),
            ("die ( a == 5 ) ;", "ε", "r += 2 ;"),
        ])
    );
}

/// The parser reads the cast `(T)(x)` of a typedef name `T` as a call of `T`.
/// Such a cast calls nothing: its statement is no call, and the statement after
/// it needs no probe of its own. A parameter that shadows the typedef name is
/// still called through (indirectly), and what follows it keeps its probe.
#[test]
fn casts_to_typedef_names_are_no_calls() {
    const UNIT: &str = "typedef long long I;
typedef unsigned long long U;
long long f(long long x, int k)
{
    long long r = 0;
    if (k > 0)
        r = ((I)(((U)(x)) + ((U)(k))));
    r += 1;
    return r;
}
int g(int (*U)(int), int a)
{
    int r = (U)(a);
    r += 1;
    return r;
}
";
    const DRIVER: &str = "#include <stdlib.h>
long long f(long long x, int k);
int g(int (*U)(int), int a);
static int twice(int v) { if (v == 7) exit(0); return v + v; }
int main(int argc, char **argv) { return argc > 2 ? (int) f(atoi(argv[1]), atoi(argv[2])) * 0 + g(twice, atoi(argv[1])) * 0 : 1; }
";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("unit.c"), UNIT).unwrap();
    let p = build(src.path(), "unit.c", &[], DRIVER, &["-O2"]);
    use retest_graph::coverage::Probe;
    let (i, f) = p.procedure("f");
    let node = |proc_: &Procedure, text: &str| {
        proc_.cond.node_ids().find(|&n| proc_.cond.node(n).text == text).unwrap_or_else(|| panic!("no node `{text}`"))
    };
    let cast = node(f, "r = ( ( I ) ( ( ( U ) ( x ) ) + ( ( U ) ( k ) ) ) ) ;");
    assert_eq!(f.cond.node(cast).kind, retest_graph::NodeKind::Statement, "a cast is no call");
    assert!(f.cond.node(cast).calls.is_empty(), "{:?}", f.cond.node(cast).calls);
    assert_eq!(f.probes[node(f, "r += 1 ;").index()], Probe::Derived, "known from the branch and the cast");
    // and the derived coverage is what ran
    let (_, g) = p.procedure("g");
    let call = node(g, "int r = ( U ) ( a ) ;");
    assert!(g.cond.node(call).calls.is_empty() && g.cond.node(call).indirect_call, "a call through the parameter");
    assert_eq!(g.probes[node(g, "r += 1 ;").index()], Probe::Node, "the call through `U` may not return");
    let taken = stmt_edges(f, &p.run(&["3", "1"], "")[i]);
    assert!(taken.contains(&(
        "k > 0".into(),
        "T".into(),
        "r = ( ( I ) ( ( ( U ) ( x ) ) + ( ( U ) ( k ) ) ) ) ;".into()
    )));
    assert!(taken.contains(&(
        "r = ( ( I ) ( ( ( U ) ( x ) ) + ( ( U ) ( k ) ) ) ) ;".into(),
        "ε".into(),
        "r += 1 ;".into()
    )));
    assert!(!taken.iter().any(|(_, l, _)| l == "F"), "{taken:?}");
    let taken = stmt_edges(f, &p.run(&["3", "0"], "")[i]);
    assert!(taken.contains(&("k > 0".into(), "F".into(), "r += 1 ;".into())));
    assert!(!taken.iter().any(|(_, l, _)| l == "T"), "{taken:?}");
    // g: twice(7) exits inside the indirect call; the statement after it did not
    // run (the call's own edge counts: it started), and with 3 it did
    let (j, g) = p.procedure("g");
    let taken = stmt_edges(g, &p.run(&["7", "1"], "")[j]);
    assert!(!taken.iter().any(|(s, _, _)| s == "r += 1 ;"), "{taken:?}");
    let taken = stmt_edges(g, &p.run(&["3", "1"], "")[j]);
    assert!(taken.contains(&("r += 1 ;".into(), "ε".into(), "return r ;".into())), "{taken:?}");
}

/// A call of a function the unit declares `const` or `pure` returns (the
/// compiler may delete it when its value is unused), so the statement after it
/// needs no probe of its own; an undeclared external function, or a function
/// pointer (GCC ignores `pure` on one), may not return and keeps it. The derived coverage is
/// what ran, also when the undeclared one exits.
#[test]
fn calls_of_functions_declared_const_or_pure_return() {
    const UNIT: &str = "#include <string.h>
int sq(int) __attribute__((const));
__attribute__((__pure__)) int peek(const int *);
int ext(int);
extern int (*hook)(int) __attribute__((pure));
int f(const char *s, int k)
{
    int r = sq(k);
    r += (int) strlen(s);
    r += peek(&k);
    r += 1;
    return r;
}
int g(int k)
{
    int r = ext(k);
    r += 1;
    return r;
}
int h(int k)
{
    int r = hook(k);
    r += 1;
    return r;
}
";
    const DRIVER: &str = "#include <stdlib.h>
int f(const char *s, int k);
int g(int k);
int sq(int v) { return v * v; }
int peek(const int *p) { return *p; }
int ext(int v) { if (v == 7) exit(0); return v; }
int (*hook)(int) = ext;
int main(int argc, char **argv) { return argc > 1 ? (f(argv[1], 2) + g(atoi(argv[1]))) * 0 : 1; }
";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("unit.c"), UNIT).unwrap();
    let p = build(src.path(), "unit.c", &[], DRIVER, &["-O2"]);
    use retest_graph::coverage::Probe;
    let node = |proc_: &Procedure, text: &str| {
        proc_.cond.node_ids().find(|&n| proc_.cond.node(n).text == text).unwrap_or_else(|| panic!("no node `{text}`"))
    };
    let (i, f) = p.procedure("f");
    // `sq`, `strlen` (glibc declares it pure) and `peek` return: one probe for
    // the straight line, none on the statements after the calls
    let probed: Vec<&str> =
        f.cond.node_ids().filter(|n| f.probes[n.index()].is_probed()).map(|n| f.cond.node(n).text.as_str()).collect();
    assert_eq!(probed.len(), 1, "{probed:?}");
    for after in ["r += ( int ) strlen ( s ) ;", "r += peek ( & k ) ;", "r += 1 ;"] {
        assert!(!f.probes[node(f, after).index()].is_probed(), "{after}: {:?}", f.probes[node(f, after).index()]);
    }
    let (j, g) = p.procedure("g");
    assert_eq!(g.probes[node(g, "r += 1 ;").index()], Probe::Node, "`ext` may not return");
    let (_, h) = p.procedure("h");
    assert_eq!(h.probes[node(h, "r += 1 ;").index()], Probe::Node, "a pointer declared `pure` may point anywhere");
    // the derived coverage is what ran
    let taken = stmt_edges(f, &p.run(&["3"], "")[i]);
    assert!(taken.contains(&("r += peek ( & k ) ;".into(), "ε".into(), "r += 1 ;".into())), "{taken:?}");
    assert!(taken.contains(&("r += 1 ;".into(), "ε".into(), "return r ;".into())), "{taken:?}");
    let taken = stmt_edges(g, &p.run(&["7"], "")[j]);
    assert!(!taken.iter().any(|(s, _, _)| s == "r += 1 ;"), "{taken:?}");
    let taken = stmt_edges(g, &p.run(&["3"], "")[j]);
    assert!(taken.contains(&("r += 1 ;".into(), "ε".into(), "return r ;".into())), "{taken:?}");
}

/// A function whose body is empty (`{}`, no character between the braces)
/// still gets its entry probe, compiles, and records that it ran; one that
/// never ran records nothing.
#[test]
fn empty_bodies_are_probed_at_entry() {
    const UNIT: &str = "void g(void) {}\nvoid h(void){ }\nint k(int x) {}\n";
    const DRIVER: &str = "void g(void); void h(void);\nint main(int argc, char **argv) { (void)argv; if (argc > 1) g(); h(); return 0; }\n";
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("unit.c"), UNIT).unwrap();
    let p = build(src.path(), "unit.c", &[], DRIVER, &["-w"]);
    let ran = |args: &[&str], name: &str| {
        let (i, f) = p.procedure(name);
        !stmt_edges(f, &p.run(args, "")[i]).is_empty()
    };
    assert!(ran(&["x"], "g") && ran(&["x"], "h"));
    assert!(!ran(&[], "g") && ran(&[], "h"));
    assert!(!ran(&["x"], "k"));
}

/// A `constexpr` function the parser cannot read whole (here, a nested
/// function definition, as tree-sitter's error recovery made of fmt's
/// `basic_format_args::get` in 40 of its 51 units) gets no probe: where its
/// body ends is uncertain, and an entry probe placed by it once put the
/// rest of the class inside the function. A function that runs only at run
/// time keeps its entry probe.
#[test]
fn a_constexpr_function_the_parser_cannot_read_whole_is_not_probed() {
    let d = tempfile::tempdir().unwrap();
    let src = "constexpr int f(int x) { if (x) { return 1; } int g() { return 2; } return 0; }\n\
               int h(int x) { if (x) { return 1; } int k() { return 2; } return 0; }\n";
    std::fs::write(d.path().join("u.cc"), src).unwrap();
    let pre = run_preprocessor("c++", &["-std=c++17".to_string()], Path::new("u.cc"), d.path()).expect("preprocess");
    let tu = retest_lang_c::cpp::analyze(&pre, &|f| !f.system, retest_lang_c::cpp::Dialect::DEFAULT);
    let at = |name: &str| tu.unit.procedures.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("{name}"));
    let (f, h) = (at("f(int)"), at("h(int)"));
    assert!(tu.unit.procedures[f].unanalysable.is_some() && tu.unit.procedures[h].unanalysable.is_some());
    assert!(tu.sites[f].iter().all(|s| matches!(s, retest_lang_c::build::Site::None)), "{:?}", tu.sites[f]);
    assert!(tu.unit.procedures[f].probes.iter().all(|p| !p.is_probed()));
    assert!(tu.unit.procedures[h].probes.iter().any(|p| p.is_probed()));
}
