//! The engine's workflow on a real C program, in process: build through the
//! wrapper's code path, run, select, audit, and RECOVER. No `retest` binary
//! is spawned (the C compiler and the tests' shell are).

use std::collections::BTreeMap;
use std::path::Path;

use retest_engine::run::{Probes, RunSettings, TestSource, run_tests_now, tests_to_run};
use retest_engine::select::{Algorithm, SelectOptions, compute};
use retest_engine::{Collect, Context};
use retest_store::{SnapshotId, Store};

const V1: &str = r#"#include <stdio.h>
#include <string.h>

static int twice(int x) { return 2 * x; }

static int shout(const char *s) {
    int n = 0;
    for (; s[n]; n++)
        putchar(s[n] - 32);
    putchar('\n');
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "twice") == 0)
        printf("%d\n", twice(21));
    else if (strcmp(argv[1], "shout") == 0)
        shout("abc");
    else
        puts("plain");
    return 0;
}
"#;

struct Project {
    dir: tempfile::TempDir,
    store_dir: std::path::PathBuf,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let store_dir = Store::dir_for(dir.path());
        Store::init(&store_dir).unwrap();
        std::fs::write(dir.path().join("universe.txt"), "./prog twice\n./prog shout\n./prog other\n").unwrap();
        Project { dir, store_dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> Store {
        Store::open(&self.store_dir).unwrap()
    }

    /// Compiles and links `prog.c` as `retest cc` would, in process.
    fn build(&self, cx: &Context, source: &str) {
        std::fs::write(self.root().join("prog.c"), source).unwrap();
        let args = ["-O0", "-o", "prog", "prog.c"].map(String::from).to_vec();
        let status =
            retest_engine::build::wrap_in(cx, Some(&self.store_dir), self.root(), false, args).expect("the wrapper");
        assert!(status.success(), "the compile failed: {status}");
    }

    fn settings(&self) -> RunSettings {
        RunSettings {
            source: TestSource { universe: Some(self.root().join("universe.txt")), ..Default::default() },
            jobs: Some(1),
            ..Default::default()
        }
    }

    /// DejaVu on the project's suite.
    fn options(&self) -> SelectOptions {
        SelectOptions { algorithm: Algorithm::Dejavu, source: self.settings().source, ..Default::default() }
    }

    fn select(&self, store: &mut Store) -> retest_engine::select::Selection {
        compute(store, self.root(), &self.options()).expect("the selection")
    }

    fn audit(&self, cx: &Context, store: &mut Store) -> retest_engine::audit::AuditReport {
        retest_engine::audit::audit(cx, store, self.root(), &self.options(), Some(1), None).expect("the audit")
    }
}

/// Every test's recorded coverage in `snapshot`, by name.
fn matrix(store: &Store, snapshot: SnapshotId) -> BTreeMap<String, Vec<(i64, Vec<u32>)>> {
    store
        .matrix_tests(snapshot)
        .unwrap()
        .into_iter()
        .map(|m| {
            let cov = store.test_coverage(snapshot, m.test).unwrap();
            (m.name, cov.into_iter().map(|(u, b)| (u.0, b.iter().collect())).collect())
        })
        .collect()
}

fn selected(sel: &retest_engine::select::Selection) -> Vec<&str> {
    sel.selected.keys().map(String::as_str).collect()
}

/// A change to the function only one test runs selects that test, with the
/// change as its reason; the audit sees that its output changed and nothing
/// else did; RECOVER runs it alone and leaves every test's coverage as a full
/// rerun records it.
#[test]
fn select_audit_and_recover_on_a_real_program() {
    let reporter = Collect::default();
    // built in process; no build command is run, so the wrapper is never spawned
    let cx = Context::new(&reporter, "/nonexistent/retest");
    let p = Project::new();
    p.build(&cx, V1);
    let mut store = p.store();
    let settings = p.settings();
    let tests = tests_to_run(&mut store, p.root(), &settings).unwrap();
    assert_eq!(tests.len(), 3);
    let base = run_tests_now(&cx, &mut store, p.root(), &settings, &tests).unwrap();
    assert!(base.ok() && base.made_baseline, "{base:?}");
    assert_eq!(base.summary.passed, 3);

    // nothing changed: nothing is selected
    let none = p.select(&mut store);
    assert!(none.selected.is_empty(), "{:?}", none.selected);

    // a new branch in shout(): t2's coverage has edges the baseline's has not
    p.build(&cx, &V1.replace("putchar(s[n] - 32);", "if (s[n] != 'b') putchar(s[n] - 32);"));
    let sel = p.select(&mut store);
    assert_eq!(selected(&sel), ["t2"], "{:?}", sel.selected);
    assert!(sel.selected["t2"].iter().any(|r| r.contains("prog.c:9")), "{:?}", sel.selected["t2"]);

    let audit = p.audit(&cx, &mut store);
    assert_eq!(audit.changed.keys().collect::<Vec<_>>(), ["t2"], "{audit:?}");
    assert!(audit.missed.is_empty(), "{audit:?}");

    let full = RunSettings { probes: Probes::Full, ..settings.clone() };
    let recovered = retest_engine::recover::run_selected(&cx, &mut store, p.root(), &full).unwrap();
    assert!(recovered.ok(), "{recovered:?}");
    assert_eq!((recovered.ran, recovered.stats.as_ref().map(|s| s.selected)), (1, Some(1)));
    let new = store.baseline().unwrap().expect("a baseline");
    assert_eq!(Some(new), sel.new_snapshot, "the new version is the baseline");
    let after_recover = matrix(&store, new);

    // a full rerun on the same build records exactly what RECOVER computed
    let again = run_tests_now(&cx, &mut store, p.root(), &settings, &tests).unwrap();
    assert!(again.ok() && again.made_baseline);
    assert_eq!(matrix(&store, new), after_recover);
    assert_eq!(after_recover.len(), 3);
    assert!(after_recover.values().all(|c| !c.is_empty()));
    assert!(reporter.warnings.lock().unwrap().is_empty(), "{:?}", reporter.warnings);
}

/// A test whose behaviour changed but that the selection left out is what
/// the audit reports as missed: here the baseline is recorded, then the
/// program changes while the selection is made against a store that was told
/// nothing changed (the new build is the baseline's), so the miss must show.
#[test]
fn the_audit_reports_a_test_that_changed_behaviour_and_was_not_selected() {
    let reporter = Collect::default();
    let cx = Context::new(&reporter, "/nonexistent/retest");
    let p = Project::new();
    p.build(&cx, V1);
    let mut store = p.store();
    let settings = p.settings();
    let tests = tests_to_run(&mut store, p.root(), &settings).unwrap();
    assert!(run_tests_now(&cx, &mut store, p.root(), &settings, &tests).unwrap().ok());
    // the program changes behind the store's back: compiled without the wrapper
    let changed = V1.replace("puts(\"plain\");", "puts(\"PLAIN\");");
    std::fs::write(p.root().join("prog.c"), &changed).unwrap();
    let st = std::process::Command::new("cc")
        .args(["-O0", "-o", "prog", "prog.c"])
        .current_dir(p.root())
        .status()
        .expect("cc");
    assert!(st.success());
    // the sources no longer match what the build analysed: selection refuses
    let err = match compute(&mut store, p.root(), &p.options()) {
        Err(e) => e,
        Ok(s) => panic!("a stale analysis must not select: {:?}", s.selected),
    };
    assert!(err.what.contains("since the newest build"), "{}", err.what);
    // put the source back as analysed: the audit now runs the changed binary
    std::fs::write(p.root().join("prog.c"), V1).unwrap();
    let audit = p.audit(&cx, &mut store);
    assert_eq!(audit.missed, ["t3"], "{audit:?}");
}

/// `retest select -p compile_commands.json` and the wrapper make the same
/// unit for the same command — key, identity flags and CFGs — for C and C++
/// sources, optimised or not (one pipeline: `wrap::analyse_command`).
#[test]
fn the_wrapper_and_a_compilation_database_make_the_same_units() {
    let reporter = Collect::default();
    let cx = Context::new(&reporter, "/nonexistent/retest");
    let p = Project::new();
    let root = p.root();
    std::fs::write(root.join("lib.c"), "int f(int x) { if (x > 1 && x < 9) return x; return -x; }\n").unwrap();
    std::fs::write(
        root.join("obj.cpp"),
        "struct S { int v; S(int x) : v(x) {} int get() const { return v > 0 ? v : -v; } };\nint g(int x) { S s(x); return s.get(); }\n",
    )
    .unwrap();
    let commands: [(&str, bool, &[&str]); 3] = [
        ("cc", false, &["-O0", "-c", "lib.c", "-o", "lib.o"]),
        ("cc", false, &["-O2", "-DLEVEL=2", "-c", "lib.c", "-o", "lib2.o"]),
        ("c++", true, &["-O2", "-c", "obj.cpp"]),
    ];
    let mut db = Vec::new();
    for (compiler, cplusplus, args) in commands {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let status = retest_engine::build::wrap_in(&cx, Some(&p.store_dir), root, cplusplus, args.clone()).unwrap();
        assert!(status.success(), "{compiler} {args:?}");
        let file = args.iter().find(|a| a.ends_with(".c") || a.ends_with(".cpp")).unwrap().clone();
        let mut arguments = vec![compiler.to_string()];
        arguments.extend(args);
        db.push(serde_json::json!({ "directory": root, "file": file, "arguments": arguments }));
    }
    std::fs::write(root.join("compile_commands.json"), serde_json::to_string(&db).unwrap()).unwrap();

    let store = p.store();
    let snapshot = store.newest_snapshot().unwrap().unwrap().id;
    let mut built: Vec<(String, String, retest_graph::Unit)> = store
        .snapshot_units(snapshot)
        .unwrap()
        .into_iter()
        .map(|u| (u.key.clone(), u.flags.clone(), (*store.unit(u.unit).unwrap()).clone()))
        .collect();
    let mut analysed: Vec<(String, String, retest_graph::Unit)> =
        retest_engine::select::load_compile_commands(&root.join("compile_commands.json"), root)
            .unwrap()
            .into_iter()
            .map(|l| {
                assert!(l.broken.is_none(), "{}: {:?}", l.key, l.broken);
                (l.key, l.flags, (*l.unit).clone())
            })
            .collect();
    built.sort_by(|a, b| a.0.cmp(&b.0));
    analysed.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(built.len(), 3);
    assert!(
        built.iter().any(|(_, _, u)| u.procedures.iter().any(|p| p.name.contains("S::get"))),
        "C++ analysed as C++"
    );
    for (b, a) in built.iter().zip(&analysed) {
        assert_eq!((&b.0, &b.1), (&a.0, &a.1));
        assert!(b.2 == a.2, "{}: the units differ", b.0);
    }
    assert_eq!(built.len(), analysed.len());
}
