//! The seeds' examples, with the selections the papers state. Test histories are
//! given the way the papers give them: as traversal traces over the
//! statement-level CFG of the old version.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use retest_graph::{EdgeId, NodeId, NodeKind, Procedure, Unit};

use super::*;

fn corpus(file: &str) -> PathBuf {
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(file);
    if own.exists() {
        own
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-lang-c/tests/corpus").join(file)
    }
}

fn unit(file: &str, flags: &[&str]) -> Unit {
    let path = corpus(file);
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let pre =
        retest_lang_c::run_preprocessor("cc", &flags, Path::new(path.file_name().unwrap()), path.parent().unwrap())
            .unwrap();
    retest_lang_c::analyze(&pre, &|f| !f.system).unit
}

/// A unit whose procedure `from` is renamed `to` (to compare `twovisits` with
/// `twovisits2` as two versions of one procedure).
fn only(mut u: Unit, from: &str, to: &str) -> Unit {
    u.procedures.retain(|p| p.name == from);
    let p = &mut u.procedures[0];
    p.name = to.to_string();
    let rename = |_: NodeId, n: &retest_graph::Node| {
        let mut n = n.clone();
        if n.kind == NodeKind::Entry {
            n.text = n.text.replace(from, to);
        }
        n
    };
    p.stmt = p.stmt.map_nodes(rename);
    p.cond = p.cond.map_nodes(rename);
    u
}

/// A statement-level node by line (`"16"`), or `entry` / `decl` / `exit`.
fn node(p: &Procedure, name: &str) -> NodeId {
    let want = |k: NodeKind| p.stmt.nodes().find(|(_, n)| n.kind == k).map(|(id, _)| id).unwrap();
    match name {
        "entry" => want(NodeKind::Entry),
        "decl" => want(NodeKind::Declaration),
        "exit" => want(NodeKind::Exit),
        line => {
            let line: u32 = line.parse().unwrap();
            let hits: Vec<NodeId> = p
                .stmt
                .nodes()
                .filter(|(_, n)| {
                    !matches!(n.kind, NodeKind::Entry | NodeKind::Declaration | NodeKind::Exit)
                        && n.span.map(|s| s.line) == Some(line)
                })
                .map(|(id, _)| id)
                .collect();
            assert_eq!(hits.len(), 1, "one node on line {line} of {}", p.name);
            hits[0]
        }
    }
}

/// Statement-level edges of a traversal trace: `["entry", "decl", "15", "18|T", ...]`;
/// `|L` picks the out-edge labelled L, otherwise the edge to the next node.
fn trace(p: &Procedure, path: &[&str]) -> BTreeSet<EdgeId> {
    let mut out = BTreeSet::new();
    for w in path.windows(2) {
        let (a, label) = match w[0].split_once('|') {
            Some((a, l)) => (a, Some(l)),
            None => (w[0], None),
        };
        let (na, nb) = (node(p, a), node(p, w[1].split('|').next().unwrap()));
        let e = p
            .stmt
            .out_edges(na)
            .find(|e| {
                let e2 = p.stmt.edge(*e);
                e2.dst == nb && label.is_none_or(|l| e2.label.to_string() == l)
            })
            .unwrap_or_else(|| panic!("no edge {} -> {} in {}", w[0], w[1], p.name));
        out.insert(e);
    }
    out
}

/// Selection between two one-unit programs, with histories given as traces of
/// procedure `proc` (test ids 1..).
fn run(old: &Unit, new: &Unit, proc: &str, tests: &[&[&str]], mode: Mode) -> (BTreeSet<u32>, Outcome) {
    let po = Program::new(vec![UnitRef { key: "x.c", unit: old, flags: "", broken: None }]);
    let pn = Program::new(vec![UnitRef { key: "x.c", unit: new, flags: "", broken: None }]);
    let pi = old.procedures.iter().position(|p| p.name == proc).unwrap();
    let p = &old.procedures[pi];
    let base = old.edge_bases()[pi];
    // TestsOnEdge over condition-level edges: a test traversed a fine edge when it
    // traversed the statement-level edge it maps onto
    let traces: Vec<BTreeSet<EdgeId>> = tests.iter().map(|t| trace(p, t)).collect();
    let out = select(&po, &pn, mode);
    let mut history = |unit: usize, e: u32| -> RoaringBitmap {
        assert_eq!(unit, 0);
        let mut bm = RoaringBitmap::new();
        if e < base || e >= base + p.cond.edge_count() as u32 {
            return bm;
        }
        if let Some(stmt) = p.map.edge[(e - base) as usize] {
            for (i, t) in traces.iter().enumerate() {
                if t.contains(&stmt) {
                    bm.insert(i as u32 + 1);
                }
            }
        }
        bm
    };
    let sel = tests_for(&po, &out.dangerous, &mut history);
    (sel.keys().copied().collect(), out)
}

fn set(v: &[u32]) -> BTreeSet<u32> {
    v.iter().copied().collect()
}

// avg (002 Fig. 1/2): t1 empty file, t2 a negative number, t3 "1 2 3".
const AVG_T1: &[&str] = &["entry", "decl", "15", "16", "17|F", "26", "27", "exit"];
const AVG_T2: &[&str] = &["entry", "decl", "15", "16", "17|T", "18|T", "19", "exit"];
const AVG_T3: &[&str] = &[
    "entry", "decl", "15", "16", "17|T", "18|F", "21", "22", "24", "17|T", "18|F", "21", "22", "24", "17|F", "26",
    "27", "exit",
];

fn avg_tests() -> [&'static [&'static str]; 3] {
    [AVG_T1, AVG_T2, AVG_T3]
}

#[test]
fn avg_to_avg2_selects_t2_and_t3() {
    for mode in [Mode::Inter, Mode::Naive] {
        let (sel, _) = run(&unit("avg.c", &[]), &unit("avg2.c", &[]), "avg", &avg_tests(), mode);
        assert_eq!(sel, set(&[2, 3]), "{mode:?}");
    }
}

#[test]
fn avg_each_change_alone() {
    let old = unit("avg.c", &[]);
    let (s7, _) = run(&old, &unit("avg_s7.c", &[]), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(s7, set(&[3]), "deleting S7 alone selects t3");
    let (s5a, out) = run(&old, &unit("avg_s5a.c", &[]), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(s5a, set(&[2]), "adding S5a alone selects t2");
    assert_eq!(out.dangerous.len(), 1);
    let r = out.dangerous[0].reason.to_string();
    assert!(r.contains("return -1 ;") && r.contains("printf ( \"bad input\\n\" ) ;"), "{r}");
}

#[test]
fn avg_predicate_change_selects_t2_and_t3() {
    let (sel, _) = run(&unit("avg.c", &[]), &unit("avg_p4.c", &[]), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(sel, set(&[2, 3]));
}

#[test]
fn avg_new_error_handling_selects_every_test() {
    let (sel, _) = run(&unit("avg.c", &[]), &unit("avg_guard.c", &[]), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(sel, set(&[1, 2, 3]));
}

#[test]
fn twovisits_is_not_missed() {
    let u = unit("twovisits.c", &[]);
    let old = only(u.clone(), "twovisits", "f");
    let new = only(u, "twovisits2", "f");
    // t1: x = 0 (prints 1 in the old version, 2 in the new); t2: x = 1
    let t1: &[&str] = &["entry", "decl", "8|T", "9", "10", "11", "exit"];
    let t2: &[&str] = &["entry", "decl", "8|F", "10", "11", "exit"];
    let (sel, out) = run(&old, &new, "f", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[1]));
    assert!(out.multiply_visited.is_empty(), "S3 is visited with S3' and compared with S5', but not marked twice");
}

#[test]
fn pathological_selects_both_tests() {
    let u = unit("pathological.c", &[]);
    let old = only(u.clone(), "pathological", "f");
    let new = only(u, "pathological2", "f");
    // t1: x = 0 → 1; t2: x = -2 → 1 (old), 3 (new)
    let t1: &[&str] = &["entry", "decl", "8|F", "12", "13", "exit"];
    let t2: &[&str] = &["entry", "decl", "8|T", "9|F", "8|F", "12", "13", "exit"];
    let (sel, out) = run(&old, &new, "f", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[1, 2]), "t1 is selected although it is not modification-traversing (002 Fig. 6)");
    assert_eq!(out.multiply_visited.values().map(|s| s.len()).sum::<usize>(), 1, "P1 is visited with P1' and P3'");
}

#[test]
fn grade_v0_to_v1_selects_t3_and_t4() {
    // 004 Table 1: t1 (71, 81), t2 (71, 71), t3 (34, 60), t4 (52, 50)
    let t1: &[&str] = &["entry", "decl", "11", "12|T", "13|T", "14", "41", "42", "exit"];
    let t2: &[&str] = &["entry", "decl", "11", "12|T", "13|F", "16", "41", "42", "exit"];
    let t3: &[&str] = &["entry", "decl", "11", "12|F", "19|T", "20", "41", "42", "exit"];
    let t4: &[&str] = &["entry", "decl", "11", "12|F", "19|F", "22", "41", "42", "exit"];
    let (sel, out) = run(
        &unit("grade.c", &["-DGRADE_V=0"]),
        &unit("grade.c", &["-DGRADE_V=1"]),
        "calcGrade",
        &[t1, t2, t3, t4],
        Mode::Inter,
    );
    assert_eq!(sel, set(&[3, 4]));
    // MOD-DejaVu: the change set is s6 of v1 alone (c1 dominates c2)
    let walk = out.walks.iter().find(|w| w.old.is_some()).unwrap();
    assert_eq!(walk.changed.len(), 1);
}

#[test]
fn elevator_go_change_selects_t3_and_t4() {
    // 003 Fig. 4: t1 invalid floor, t2 up, t3 down, t4 same floor
    let t1: &[&str] = &["entry", "decl", "33", "34", "35|T", "36", "37", "exit"];
    let t2: &[&str] = &["entry", "decl", "33", "34", "35|F", "39|T", "40", "41", "60|T", "61|T", "63", "61|F", "exit"];
    let t3: &[&str] =
        &["entry", "decl", "33", "34", "35|F", "39|F", "44|T", "45", "46", "60|F", "66|T", "68", "66|F", "exit"];
    let t4: &[&str] = &["entry", "decl", "33", "34", "35|F", "39|F", "44|F", "49", "exit"];
    let (sel, out) =
        run(&unit("elevator.c", &[]), &unit("elevator.c", &["-DELEVATOR_V=1"]), "go", &[t1, t2, t3, t4], Mode::Inter);
    assert_eq!(sel, set(&[3, 4]));
    assert_eq!(out.dangerous.len(), 1, "only the edge into line 40 is dangerous: {:?}", out.dangerous);
}

#[test]
fn declaration_changes_select_only_statements_that_use_the_name() {
    let dir = std::env::temp_dir().join(format!("retest-select-decl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v = |body: &str, name: &str| {
        std::fs::write(dir.join(name), body).unwrap();
        let pre = retest_lang_c::run_preprocessor("cc", &[], Path::new(name), &dir).unwrap();
        retest_lang_c::analyze(&pre, &|f| !f.system).unit
    };
    let src = |limit: &str| {
        format!(
            "static int limit = {limit};\nstatic int other = 1;\nint f(int x)\n{{\n    if (x > 0)\n        return other;\n    return limit;\n}}\n"
        )
    };
    let old = v(&src("10"), "a.c");
    let new = v(&src("20"), "b.c");
    // t1: x > 0 (never reads limit), t2: x <= 0
    let t1: &[&str] = &["entry", "decl", "5|T", "6", "exit"];
    let t2: &[&str] = &["entry", "decl", "5|F", "7", "exit"];
    let (sel, out) = run(&old, &new, "f", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[2]), "only the test that reaches a use of `limit`");
    assert!(matches!(&out.dangerous[0].reason.kind, ReasonKind::Affected { name, .. } if name == "limit"));
    std::fs::remove_dir_all(&dir).ok();
}

/// One-unit programs from source text (written to a scratch directory).
fn units_of(tag: &str, sources: &[&str]) -> Vec<Unit> {
    let dir = std::env::temp_dir().join(format!("retest-select-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = sources
        .iter()
        .enumerate()
        .map(|(i, src)| {
            let name = format!("v{i}.c");
            std::fs::write(dir.join(&name), src).unwrap();
            let pre = retest_lang_c::run_preprocessor("cc", &[], Path::new(&name), &dir).unwrap();
            retest_lang_c::analyze(&pre, &|f| !f.system).unit
        })
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    out
}

#[test]
fn the_walk_goes_on_past_a_statement_that_calls_a_selectsall_procedure_on_some_routes_only() {
    // `a` changes at its first statement, so it is *selectsall*; main's `if`
    // calls it only when `argc > 2`, and the line after it changes too
    let src = |bound: u32, add: u32, call: &str| {
        format!(
            "int a(int x)\n{{\n    if (x > {bound})\n        return 1;\n    return 0;\n}}\nint main(int argc, char **argv)\n{{\n    int r = 0;\n    {call}\n        r = 1;\n    return r + {add};\n}}\n"
        )
    };
    let some_routes = "if (argc > 2 && a(argc))";
    let v = units_of("selectsall", &[&src(5, 1, some_routes), &src(6, 2, some_routes)]);
    // t1 finds `argc > 2` false and never calls a; t2 calls it
    let t1: &[&str] = &["entry", "decl", "9", "10|F", "12", "exit"];
    let t2: &[&str] = &["entry", "decl", "9", "10|T", "11", "12", "exit"];
    let (sel, out) = run(&v[0], &v[1], "main", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[1, 2]), "the change after the `if` selects t1 too");
    assert!(out.dangerous.iter().any(|d| d.reason.new.as_ref().is_some_and(|n| n.line == 12)));

    // a statement that calls a on every route: the walk stops there, as 002 §3.2 has it
    let every_route = "if (a(argc) > 0)";
    let v = units_of("selectsall-every", &[&src(5, 1, every_route), &src(6, 2, every_route)]);
    let (_, out) = run(&v[0], &v[1], "main", &[t1, t2], Mode::Inter);
    let main = out.walks.iter().find(|w| w.old.is_some_and(|o| v[0].procedures[o.proc].name == "main")).unwrap();
    let p = &v[0].procedures.iter().find(|p| p.name == "main").unwrap();
    assert!(main.visited.iter().any(|(n, _)| *n == node(p, "10")));
    assert!(!main.visited.iter().any(|(n, _)| *n == node(p, "12")), "nothing past the call is walked");
}
