//! The seeds' examples, with the selections the papers state. Test histories are
//! given the way the papers give them: as traversal traces over the
//! statement-level CFG of the old version.

use std::collections::BTreeSet;
use std::path::Path;

use retest_graph::{EdgeId, NodeId, NodeKind, Procedure, Unit};

use super::*;
use proptest::prelude::*;

/// The unit of fixture `name` (`crates/retest-select/fixtures/NAME.json`):
/// what the C front end makes of the fixture's source, kept current by
/// `retest-lang-c`'s test `the_selection_fixtures_are_what_the_front_end_makes_of_their_sources`.
/// The selection is tested on these, without a compiler.
pub(crate) fn fixture(name: &str) -> Unit {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(v["unit"].clone()).unwrap_or_else(|e| {
        panic!(
            "{}: no unit ({e}); RETEST_BLESS=1 cargo test -p retest-lang-c --test front_end select_fixtures:: writes it",
            path.display()
        )
    })
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
    let po = program(old, None);
    let pn = program(new, None);
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
        let (sel, _) = run(&fixture("avg"), &fixture("avg2"), "avg", &avg_tests(), mode);
        assert_eq!(sel, set(&[2, 3]), "{mode:?}");
    }
}

#[test]
fn avg_each_change_alone() {
    let old = fixture("avg");
    let (s7, _) = run(&old, &fixture("avg_s7"), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(s7, set(&[3]), "deleting S7 alone selects t3");
    let (s5a, out) = run(&old, &fixture("avg_s5a"), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(s5a, set(&[2]), "adding S5a alone selects t2");
    assert_eq!(out.dangerous.len(), 1);
    let r = out.dangerous[0].reason.to_string();
    assert!(r.contains("return -1 ;") && r.contains("printf ( \"bad input\\n\" ) ;"), "{r}");
}

#[test]
fn avg_predicate_change_selects_t2_and_t3() {
    let (sel, _) = run(&fixture("avg"), &fixture("avg_p4"), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(sel, set(&[2, 3]));
}

#[test]
fn avg_new_error_handling_selects_every_test() {
    let (sel, _) = run(&fixture("avg"), &fixture("avg_guard"), "avg", &avg_tests(), Mode::Inter);
    assert_eq!(sel, set(&[1, 2, 3]));
}

#[test]
fn twovisits_is_not_missed() {
    let u = fixture("twovisits");
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
    let u = fixture("pathological");
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
    let (sel, out) = run(&fixture("grade-v0"), &fixture("grade-v1"), "calcGrade", &[t1, t2, t3, t4], Mode::Inter);
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
    let (sel, out) = run(&fixture("elevator"), &fixture("elevator-v1"), "go", &[t1, t2, t3, t4], Mode::Inter);
    assert_eq!(sel, set(&[3, 4]));
    assert_eq!(out.dangerous.len(), 1, "only the edge into line 40 is dangerous: {:?}", out.dangerous);
}

#[test]
fn declaration_changes_select_only_statements_that_use_the_name() {
    // `static int limit = 10;` becomes 20; f reads it on one route only
    let old = fixture("decl-limit10");
    let new = fixture("decl-limit20");
    // t1: x > 0 (never reads limit), t2: x <= 0
    let t1: &[&str] = &["entry", "decl", "5|T", "6", "exit"];
    let t2: &[&str] = &["entry", "decl", "5|F", "7", "exit"];
    let (sel, out) = run(&old, &new, "f", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[2]), "only the test that reaches a use of `limit`");
    assert!(matches!(&out.dangerous[0].reason.kind, ReasonKind::Affected { name, .. } if name == "limit"));
}

#[test]
fn the_walk_goes_on_past_a_statement_that_calls_a_selectsall_procedure_on_some_routes_only() {
    // `a` changes at its first statement, so it is *selectsall*; main's `if`
    // calls it only when `argc > 2`, and the line after it changes too
    // (fixtures selectsall-*: `if (x > 5)` becomes `if (x > 6)` in a, and
    // `return r + 1;` becomes `return r + 2;` in main, line 12)
    let v = [fixture("selectsall-some-v0"), fixture("selectsall-some-v1")];
    // t1 finds `argc > 2` false and never calls a; t2 calls it
    let t1: &[&str] = &["entry", "decl", "9", "10|F", "12", "exit"];
    let t2: &[&str] = &["entry", "decl", "9", "10|T", "11", "12", "exit"];
    let (sel, out) = run(&v[0], &v[1], "main", &[t1, t2], Mode::Inter);
    assert_eq!(sel, set(&[1, 2]), "the change after the `if` selects t1 too");
    assert!(out.dangerous.iter().any(|d| d.reason.new.as_ref().is_some_and(|n| n.line == 12)));

    // a statement that calls a on every route: the walk stops there, as 002 §3.2 has it
    let v = [fixture("selectsall-every-v0"), fixture("selectsall-every-v1")];
    let (_, out) = run(&v[0], &v[1], "main", &[t1, t2], Mode::Inter);
    let main = out.walks.iter().find(|w| w.old.is_some_and(|o| v[0].procedures[o.proc].name == "main")).unwrap();
    let p = &v[0].procedures.iter().find(|p| p.name == "main").unwrap();
    assert!(main.visited.iter().any(|(n, _)| *n == node(p, "10")));
    assert!(!main.visited.iter().any(|(n, _)| *n == node(p, "12")), "nothing past the call is walked");
}

/// A unit's bodies on demand, as a stored unit of encoding 6 gives them
/// (`retest-store`'s `StoredBodies`): the shell holds each procedure's head
/// with a stand-in CFG, and the project's declarations; bodies and all
/// declarations come from here, and are counted. As encoding 7 gives them
/// ([`on_demand_apart`]), the project's declarations come from here too.
struct OnDemand {
    procedures: Vec<Procedure>,
    summaries: Vec<retest_graph::summary::Summary>,
    decoded: std::cell::RefCell<BTreeSet<usize>>,
    decls: Vec<retest_graph::Declaration>,
    sealed_digest: u128,
    decls_read: std::cell::Cell<bool>,
    /// Encoding 7: the project's declarations and their digest.
    own: Option<(Vec<retest_graph::Declaration>, u128)>,
    own_read: std::cell::Cell<bool>,
}

impl retest_graph::summary::Bodies for OnDemand {
    fn body(&self, proc: usize) -> &Procedure {
        self.decoded.borrow_mut().insert(proc);
        &self.procedures[proc]
    }
    fn summary(&self, proc: usize) -> &retest_graph::summary::Summary {
        &self.summaries[proc]
    }
    fn error(&self) -> Option<String> {
        None
    }
    fn sealed_digest(&self) -> Option<u128> {
        Some(self.sealed_digest)
    }
    fn all_decls(&self) -> Option<&[retest_graph::Declaration]> {
        self.decls_read.set(true);
        Some(&self.decls)
    }
    fn own_digest(&self) -> Option<u128> {
        self.own.as_ref().map(|(_, d)| *d)
    }
    fn own_decls(&self) -> Option<&[retest_graph::Declaration]> {
        let (own, _) = self.own.as_ref()?;
        self.own_read.set(true);
        Some(own)
    }
}

/// The program of one unit, `x.c`, with its bodies on demand when given.
fn program<'a>(unit: &'a Unit, bodies: Option<&'a dyn retest_graph::summary::Bodies>) -> Program<'a> {
    Program::new(vec![UnitRef { key: "x.c", unit, flags: "", broken: None, bodies }])
}

fn on_demand(u: &Unit) -> (Unit, OnDemand) {
    let stand_in = || retest_graph::summary::stand_in("stand-in");
    let mut shell = u.clone();
    for p in &mut shell.procedures {
        (p.cond, p.stmt, p.locals, p.probes) = (stand_in(), stand_in(), Vec::new(), Vec::new());
    }
    shell.decls.retain(|d| !d.is_sealed());
    let bodies = OnDemand {
        procedures: u.procedures.clone(),
        summaries: u.procedures.iter().map(retest_graph::summary::Summary::of).collect(),
        decoded: Default::default(),
        decls: u.decls.clone(),
        sealed_digest: retest_graph::summary::decls_digest(u.decls.iter().filter(|d| d.is_sealed())),
        decls_read: Default::default(),
        own: None,
        own_read: Default::default(),
    };
    (shell, bodies)
}

/// [`on_demand`] as encoding 7 gives it: the shell holds no declarations.
fn on_demand_apart(u: &Unit) -> (Unit, OnDemand) {
    let (mut shell, mut bodies) = on_demand(u);
    let own = std::mem::take(&mut shell.decls);
    let digest = retest_graph::summary::decls_digest(&own);
    bodies.own = Some((own, digest));
    (shell, bodies)
}

/// What a selection reports of its dangerous edges, comparably.
fn dangerous(out: &Outcome) -> Vec<(ProcRef, EdgeId, String)> {
    out.dangerous.iter().map(|d| (d.procedure, d.edge, d.reason.to_string())).collect()
}

/// Invariant **summaries_prove_what_the_walk_finds**: DejaVu with pairs
/// proved unchanged from their summaries (`select_changes`, bodies decoded
/// on demand) finds the dangerous edges the full walk finds, on every pair
/// of the seeds' versions in both modes, and on each version against
/// itself, where it decodes fewer bodies than there are procedures. With
/// shells of encoding 6 the system headers' declarations are read only when
/// their digests differ; with shells of encoding 7 the project's are read
/// only when either digests differ.
#[test]
fn summaries_prove_what_the_walk_finds() {
    let pairs = [
        ("avg", "avg2"),
        ("avg", "avg_guard"),
        ("avg", "avg_p4"),
        ("avg", "avg_s5a"),
        ("avg", "avg_s7"),
        ("coarse-a", "coarse-a-changed"),
        ("coarse-a", "coarse-a-global1"),
        ("coarse-a", "coarse-a-global2"),
        ("coarse-a", "coarse-a-layout"),
        ("coarse-a", "coarse-b"),
        ("decl-limit10", "decl-limit20"),
        ("elevator", "elevator-v1"),
        ("grade-v0", "grade-v1"),
        ("refine-old", "refine-new"),
        ("refine-old", "refine-signature"),
        ("selectsall-every-v0", "selectsall-every-v1"),
        ("selectsall-some-v0", "selectsall-some-v1"),
        ("twovisits", "twovisits"),
        ("pathological", "pathological"),
    ];
    let mut proved = 0;
    let (mut shells_only, mut no_decls, mut own_alone) = (0, 0, 0);
    // the pairs again, with a system header's declaration changed in the
    // new version: all declarations are read
    let system_changed = |mut u: Unit| {
        let d = u.decls.iter_mut().find(|d| d.is_sealed()).expect("the fixtures include a system header");
        d.text = format!("#{:016x}", 0x5eed_u64);
        u
    };
    let pairs = pairs
        .iter()
        .map(|&(a, b)| (a, b, fixture(a), fixture(b)))
        .chain(pairs[..4].iter().map(|&(a, b)| (a, b, fixture(a), system_changed(fixture(b)))));
    let pairs = pairs.flat_map(|(a, b, old, new)| [false, true].map(|apart| (a, b, old.clone(), new.clone(), apart)));
    for (a, b, old, new, apart) in pairs {
        let shell = if apart { on_demand_apart } else { on_demand };
        let (old_shell, old_bodies) = shell(&old);
        let (new_shell, new_bodies) = shell(&new);
        for mode in [Mode::Inter, Mode::Naive] {
            let full = {
                let po = program(&old, None);
                let pn = program(&new, None);
                select(&po, &pn, mode)
            };
            let po = program(&old_shell, Some(&old_bodies));
            let pn = program(&new_shell, Some(&new_bodies));
            let lazy = select_changes(&po, &pn, mode);
            assert_eq!(dangerous(&lazy), dangerous(&full), "{a} → {b}, {mode:?}");
            assert_eq!(
                lazy.affected_globals
                    .names
                    .iter()
                    .map(|(n, w)| (n, &w.detail, &w.old_at, &w.new_at))
                    .collect::<Vec<_>>(),
                full.affected_globals
                    .names
                    .iter()
                    .map(|(n, w)| (n, &w.detail, &w.old_at, &w.new_at))
                    .collect::<Vec<_>>(),
                "{a} → {b}, {mode:?}"
            );
            let same_system = old_bodies.sealed_digest == new_bodies.sealed_digest;
            assert_eq!(
                old_bodies.decls_read.get() || new_bodies.decls_read.get(),
                !same_system,
                "{a} → {b}: the system headers' declarations are read when they differ, only then"
            );
            shells_only += usize::from(same_system);
            if apart {
                let same_own = old_bodies.own.as_ref().map(|o| o.1) == new_bodies.own.as_ref().map(|o| o.1);
                assert_eq!(
                    old_bodies.own_read.get() || new_bodies.own_read.get(),
                    same_system && !same_own,
                    "{a} → {b}: the project's declarations are read alone when only they differ"
                );
                no_decls += usize::from(same_system && same_own);
                own_alone += usize::from(same_system && !same_own);
            }
            assert_eq!(
                lazy.walks.len() + lazy.unwalked,
                full.walks.len(),
                "{a} → {b}, {mode:?}: every pair is walked or proved"
            );
            proved += lazy.unwalked;
        }
    }
    assert!(proved > 0, "some pair is proved unchanged without a walk");
    assert!(shells_only > 0, "some pair is compared without the system headers' declarations");
    assert!(no_decls > 0, "some pair is compared without any declarations");
    assert!(own_alone > 0, "some pair is compared with the project's declarations alone");
    // a version against itself: nothing is dangerous, and the procedures
    // that call nothing not yet walked are never decoded
    for name in ["avg", "coarse-a", "elevator", "grade-v0", "refine-old"] {
        let u = fixture(name);
        let (s1, b1) = on_demand(&u);
        let (s2, b2) = on_demand(&u);
        let po = program(&s1, Some(&b1));
        let pn = program(&s2, Some(&b2));
        let out = select_changes(&po, &pn, Mode::Naive);
        assert!(out.dangerous.is_empty(), "{name}");
        assert!(
            b1.decoded.borrow().len() < u.procedures.len(),
            "{name}: {} of {} bodies decoded",
            b1.decoded.borrow().len(),
            u.procedures.len()
        );
    }
}

/// A procedure whose text is the same but whose surroundings changed is
/// walked, not proved: compile flags, a declaration it refers to.
#[test]
fn a_pair_is_proved_unchanged_only_when_nothing_around_it_changed() {
    let u = fixture("decl-limit10");
    let v = fixture("decl-limit20");
    let (s1, b1) = on_demand(&u);
    let (s2, b2) = on_demand(&v);
    // the declaration of `limit` changed: `f` refers to it
    let po = program(&s1, Some(&b1));
    let pn = program(&s2, Some(&b2));
    let out = select_changes(&po, &pn, Mode::Naive);
    assert!(!out.dangerous.is_empty());
    assert!(matches!(&out.dangerous[0].reason.kind, ReasonKind::Affected { name, .. } if name == "limit"));
    // other flags: every procedure changed, though every text is the same
    let (s3, b3) = on_demand(&u);
    let pn = Program::new(vec![UnitRef { key: "x.c", unit: &s3, flags: "-O2", broken: None, bodies: Some(&b3) }]);
    let out = select_changes(&po, &pn, Mode::Naive);
    assert_eq!(out.unwalked, 0);
    assert!(out.dangerous.iter().any(|d| matches!(d.reason.kind, ReasonKind::Flags { .. })));
}

/// A procedure of one line per statement (text, procedures it calls), its
/// condition level its statement level.
fn straight(signature: &str, name: &str, statements: &[(&str, &[&str])], digest: u64) -> Procedure {
    let mut b = retest_graph::CfgBuilder::new(name);
    let entry = b.add_node(retest_graph::Node::new(NodeKind::Entry, signature));
    let mut prev = entry;
    for (text, calls) in statements {
        let mut n = retest_graph::Node::new(NodeKind::Statement, *text);
        n.calls = calls.iter().map(|c| c.to_string()).collect();
        let id = b.add_node(n);
        b.add_edge(prev, id, retest_graph::EdgeLabel::Eps);
        prev = id;
    }
    let exit = b.add_node(retest_graph::Node::new(NodeKind::Exit, ""));
    b.add_edge(prev, exit, retest_graph::EdgeLabel::Eps);
    b.set_entry(entry);
    b.set_exit(exit);
    procedure_of(name, b.build().unwrap(), digest)
}

/// A procedure whose condition level is its statement level `g`.
fn procedure_of(name: &str, g: retest_graph::Cfg, digest: u64) -> Procedure {
    Procedure {
        name: name.into(),
        is_static: false,
        span: None,
        map: retest_graph::Contraction {
            node: (0..g.node_count() as u32).map(NodeId).collect(),
            edge: (0..g.edge_count() as u32).map(|e| Some(EdgeId(e))).collect(),
        },
        cond: g.clone(),
        stmt: g,
        probes: Vec::new(),
        locals: Vec::new(),
        unanalysable: None,
        digest,
    }
}

/// A procedure the same in both versions that calls a *selectsall*
/// procedure on every route is *selectsall* too, so a caller's walk stops
/// at its call (002 §3.2): it is walked, not proved unchanged, or the
/// caller's walk would go on and find the change after the call.
#[test]
fn a_pair_that_calls_a_selectsall_procedure_is_walked_not_proved() {
    let unit = |a_signature: &str, a_digest: u64, last: &str, c_digest: u64| Unit {
        procedures: vec![
            straight(a_signature, "a", &[("x = 1 ;", &[])], a_digest),
            straight("void b ( )", "b", &[("a ( ) ;", &["a"])], 2),
            straight("void c ( )", "c", &[("b ( ) ;", &["b"]), (last, &[])], c_digest),
        ],
        ..Default::default()
    };
    let old = unit("void a ( )", 1, "y = 1 ;", 3);
    let new = unit("int a ( )", 11, "y = 2 ;", 33);
    let (s1, b1) = on_demand(&old);
    let (s2, b2) = on_demand(&new);
    let po = program(&s1, Some(&b1));
    let pn = program(&s2, Some(&b2));
    let lazy = select_changes(&po, &pn, Mode::Inter);
    let full = {
        let po = program(&old, None);
        let pn = program(&new, None);
        select(&po, &pn, Mode::Inter)
    };
    assert_eq!(dangerous(&lazy), dangerous(&full));
    // `a` changed at its entry; `c` stops at its call of `b`: `y = 2` is past it
    assert!(full.dangerous.iter().all(|d| d.procedure.proc == 0), "{:?}", dangerous(&full));
    assert_eq!(lazy.unwalked, 0, "`b` calls `a`, which is selectsall: walked");
}

/// Where a statement of a [`shaped`] procedure goes: to the next statement, to
/// one of two statements by a decision, or to one. A target equal to the
/// number of statements is the exit.
#[derive(Clone, Debug, Hash)]
enum Succ {
    Next,
    Branch(usize, usize),
    Jump(usize),
}

/// A statement of a [`shaped`] procedure: its text, the names it calls, where it goes.
type Shaped = (String, Vec<String>, Succ);

/// A procedure of any shape: loops, branches, an exit the entry may not
/// reach. Its digest is a hash of everything it is made of, as a text's
/// digest changes with the text.
fn shaped(name: &str, signature: &str, statements: &[Shaped]) -> Procedure {
    use std::hash::{Hash, Hasher};
    let mut b = retest_graph::CfgBuilder::new(name);
    let entry = b.add_node(retest_graph::Node::new(NodeKind::Entry, signature));
    let ids: Vec<NodeId> = statements
        .iter()
        .map(|(text, calls, succ)| {
            let kind = match (succ, calls.is_empty()) {
                (Succ::Branch(..), _) => NodeKind::Predicate,
                (_, false) => NodeKind::Call,
                (_, true) => NodeKind::Statement,
            };
            let mut n = retest_graph::Node::new(kind, text.as_str());
            n.calls = calls.clone();
            b.add_node(n)
        })
        .collect();
    let exit = b.add_node(retest_graph::Node::new(NodeKind::Exit, ""));
    let target = |i: usize| ids.get(i).copied().unwrap_or(exit);
    b.add_edge(entry, target(0), retest_graph::EdgeLabel::Eps);
    for (i, (_, _, succ)) in statements.iter().enumerate() {
        match *succ {
            Succ::Next => b.add_edge(ids[i], target(i + 1), retest_graph::EdgeLabel::Eps),
            Succ::Jump(t) => b.add_edge(ids[i], target(t), retest_graph::EdgeLabel::Eps),
            Succ::Branch(t, f) => {
                b.add_edge(ids[i], target(t), retest_graph::EdgeLabel::True);
                b.add_edge(ids[i], target(f), retest_graph::EdgeLabel::False);
            }
        }
    }
    b.set_entry(entry);
    b.set_exit(exit);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (name, signature, statements).hash(&mut h);
    procedure_of(name, b.build().unwrap(), h.finish())
}

/// A program of up to six procedures `p0` (the entry) … `p5` that call
/// one another (cycles and self-calls included) and `ext`, defined nowhere.
fn random_program() -> impl Strategy<Value = Vec<Vec<Shaped>>> {
    (2usize..=6).prop_flat_map(|procs| {
        let statement = move |len: usize| {
            (
                prop::sample::select(vec!["x = 1 ;", "y = x ;", "a > 0", "return ;"]),
                prop::collection::vec(
                    prop::sample::select(
                        (0..procs).map(|p| format!("p{p}")).chain(["ext".to_string()]).collect::<Vec<_>>(),
                    ),
                    0..=2,
                ),
                prop_oneof![
                    3 => Just(Succ::Next),
                    1 => (0..=len).prop_map(Succ::Jump),
                    2 => (0..=len, 0..=len).prop_map(|(t, f)| Succ::Branch(t, f)),
                ],
            )
                .prop_map(|(text, mut calls, succ)| {
                    calls.sort();
                    calls.dedup();
                    (text.to_string(), calls, succ)
                })
        };
        prop::collection::vec((0usize..=4).prop_flat_map(move |len| prop::collection::vec(statement(len), len)), procs)
    })
}

/// Edits to a program: per edit a procedure, a statement, and what changes
/// (its text, what it calls, where it goes, or the signature).
fn edit(p: &mut [Vec<Shaped>], signatures: &mut [String], (proc, at, what): (usize, usize, u8)) {
    let proc = proc % p.len();
    if p[proc].is_empty() || what % 4 == 3 {
        signatures[proc] = format!("int p{proc} ( )");
        return;
    }
    let len = p[proc].len();
    let s = &mut p[proc][at % len];
    match what % 4 {
        0 => s.0 = "x = 2 ;".to_string(),
        1 => s.1 = if s.1.is_empty() { vec![format!("p{}", (proc + 1) % signatures.len())] } else { Vec::new() },
        _ => s.2 = Succ::Jump(len),
    }
}

fn unit_of(p: &[Vec<Shaped>], signatures: &[String]) -> Unit {
    Unit {
        procedures: p.iter().enumerate().map(|(i, s)| shaped(&format!("p{i}"), &signatures[i], s)).collect(),
        entry_points: vec!["p0".to_string()],
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Invariant **summaries_prove_what_the_walk_finds**, on programs of any
    /// call graph: proving callees before callers, and procedures that call
    /// each other together, gives the dangerous edges of the full walk. A
    /// program against itself, when no procedure's exit is unreachable
    /// (none is *selectsall*), is decided without decoding any body.
    #[test]
    fn proofs_over_any_call_graph_find_what_the_walk_finds(
        old in random_program(),
        edits in prop::collection::vec((0usize..6, 0usize..5, 0u8..4), 0..=3),
    ) {
        let signatures: Vec<String> = (0..old.len()).map(|i| format!("void p{i} ( )")).collect();
        let (mut new, mut new_signatures) = (old.clone(), signatures.clone());
        for e in &edits {
            edit(&mut new, &mut new_signatures, *e);
        }
        let (old_unit, new_unit) = (unit_of(&old, &signatures), unit_of(&new, &new_signatures));
        for (a, b) in [(&old_unit, &new_unit), (&old_unit, &old_unit)] {
            let (s1, b1) = on_demand(a);
            let (s2, b2) = on_demand(b);
            for mode in [Mode::Inter, Mode::Naive] {
                let full = select(&program(a, None), &program(b, None), mode);
                let lazy = select_changes(&program(&s1, Some(&b1)), &program(&s2, Some(&b2)), mode);
                prop_assert_eq!(dangerous(&lazy), dangerous(&full), "{:?}", mode);
                prop_assert_eq!(&lazy.multiply_visited, &full.multiply_visited);
                prop_assert_eq!(lazy.walks.len() + lazy.unwalked, full.walks.len(), "every pair is walked or proved");
            }
        }
        // the program against itself
        let (s1, b1) = on_demand(&old_unit);
        let (s2, b2) = on_demand(&old_unit);
        let out = select_changes(&program(&s1, Some(&b1)), &program(&s2, Some(&b2)), Mode::Inter);
        prop_assert!(out.dangerous.is_empty());
        let all_exit = b1.summaries.iter().all(|s| s.exit_reachable);
        if all_exit {
            prop_assert!(b1.decoded.borrow().is_empty(), "decoded {:?}", b1.decoded.borrow());
        }
    }
}

/// Procedures that call each other are proved together, and only when
/// every one of them is *visited*. `p2` and `p3` call each other, and `p2`
/// never returns. `p1` calls `p3`, then `p2`: the walk meets `p3` first,
/// walks `p2` within it, and finds both *selectsall*, so `p0`'s walk stops
/// at its call of `p3` and the change after it is not dangerous. A proof of
/// `p1` meets `p2` first (its calls are sorted by name); keeping `p3`
/// proved *visited* on the assumption that `p2`, its caller in the proof,
/// returns, would let `p0`'s walk go on past the call of `p3` and find the
/// change.
#[test]
fn a_cycle_is_proved_only_when_all_of_it_returns() {
    let s = |text: &str, calls: &[&str], succ: Succ| {
        (text.to_string(), calls.iter().map(|c| c.to_string()).collect(), succ)
    };
    let shapes = |after: &str| {
        vec![
            vec![
                s("a > 0", &[], Succ::Branch(1, 2)),
                s("p1 ( ) ;", &["p1"], Succ::Jump(4)),
                s("p3 ( ) ;", &["p3"], Succ::Next),
                s(after, &[], Succ::Next),
            ],
            vec![s("p3 ( ) ;", &["p3"], Succ::Next), s("p2 ( ) ;", &["p2"], Succ::Next)],
            vec![s("p3 ( ) ;", &["p3"], Succ::Next), s("for ( ; ; ) ;", &[], Succ::Jump(1))],
            vec![s("p2 ( ) ;", &["p2"], Succ::Next)],
        ]
    };
    let signatures: Vec<String> = (0..4).map(|i| format!("void p{i} ( )")).collect();
    let (old, new) = (unit_of(&shapes("x = 1 ;"), &signatures), unit_of(&shapes("x = 2 ;"), &signatures));
    let full = select(&program(&old, None), &program(&new, None), Mode::Inter);
    assert!(full.dangerous.is_empty(), "{:?}", dangerous(&full));
    let (s1, b1) = on_demand(&old);
    let (s2, b2) = on_demand(&new);
    let lazy = select_changes(&program(&s1, Some(&b1)), &program(&s2, Some(&b2)), Mode::Inter);
    assert_eq!(dangerous(&lazy), dangerous(&full));
}
