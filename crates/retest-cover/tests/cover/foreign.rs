//! GCC and LLVM CFG dumps annotated with their decisions (001 §VII). The inputs
//! under `tests/data/` were written by gcc 12 (`-fdump-tree-cfg-graph`) and
//! clang/opt 19 (`-O0 -Xclang -disable-O0-optnone`, `opt -passes=dot-cfg` and
//! `dot-cfg-only`) from `tests/data/decisions.c`, and by `retest cfg --level
//! condition --format dot`.

use proptest::prelude::*;
use retest_cover::foreign::{self, Dialect};

fn data(p: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn annotated_dot(a: &foreign::Annotated) -> String {
    let mut out = Vec::new();
    foreign::write_dot(a, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Decisions as `[conditions] interstitial [...]` lines, by block name.
fn summary(a: &foreign::Annotated) -> Vec<String> {
    let mut out = Vec::new();
    for f in &a.functions {
        for (i, d) in f.cfdg.decisions.iter().enumerate() {
            let names = |v: &[retest_graph::NodeId]| {
                v.iter().map(|n| f.blocks[n.index()].clone()).collect::<Vec<_>>().join(" ")
            };
            let mut s = format!("{} D{i}: {}", f.name, names(&d.conditions));
            if !d.interstitial.is_empty() {
                s.push_str(&format!(" / {}", names(&d.interstitial)));
            }
            s.push_str(&format!(" -> T {} F {}", names(&d.targets(true)), names(&d.targets(false))));
            out.push(s);
        }
    }
    out
}

#[test]
fn gcc_functions_and_decisions() {
    let a = foreign::read(&data("gcc/decisions.gcc.dot")).unwrap();
    assert_eq!(a.dialect, Dialect::Gcc);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let names: Vec<&str> = a.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["branches", "nested"]);
    let s = summary(&a);
    // (a && b) || c
    assert_eq!(s[0], "branches D0: <bb 2> <bb 3> <bb 4> -> T <bb 5> F <bb 6>");
    // do { x--; } while (x > 0 && (a || d)): `x--` shares the first condition's
    // block, so the loop's back edge re-enters the decision at its entry
    assert_eq!(s[3], "branches D3: <bb 15> <bb 16> <bb 17> -> T <bb 15> F <bb 18>");
    assert!(a.functions.iter().all(|f| f.cfdg.decisions.iter().all(|d| d.well_formed)));
    insta::assert_snapshot!("gcc_decisions", s.join("\n"));
    insta::assert_snapshot!("gcc_annotated_dot", annotated_dot(&a));
}

#[test]
fn llvm_loop_decisions_are_whole_with_interstitial_blocks() {
    let a = foreign::read(&data("llvm/branches.dot")).unwrap();
    assert_eq!(a.dialect, Dialect::Llvm);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let s = summary(&a);
    // while (a > 0 && !b): %39 computes !b, %43 branches on the phi
    assert!(s.contains(&"branches D2: %36 %43 / %39 -> T %45 F %48".to_string()), "{s:#?}");
    // do … while (x > 0 && (a || d)): two interstitial blocks (value of a || d, and its phi)
    assert!(s.contains(&"branches D3: %52 %55 %63 / %58 %61 -> T %49 F %65".to_string()), "{s:#?}");
    // for (…; i < c || b; …)
    assert!(s.contains(&"branches D4: %66 %73 / %70 -> T %75 F %87".to_string()), "{s:#?}");
    insta::assert_snapshot!("llvm_decisions", s.join("\n"));
    insta::assert_snapshot!("llvm_annotated_dot", annotated_dot(&a));
    insta::assert_json_snapshot!("llvm_report", a.report());
}

#[test]
fn llvm_without_instructions_splits_loop_decisions_and_says_why() {
    let a = foreign::read(&data("llvm/branches.cfg-only.dot")).unwrap();
    assert_eq!(a.warnings.len(), 1);
    assert!(a.warnings[0].contains("no instruction text"), "{}", a.warnings[0]);
    let s = summary(&a);
    // the paper's algorithm alone: guard and phi branch apart (001 §VII-A)
    assert!(s.contains(&"branches D2: %36 -> T %39 F %43".to_string()), "{s:#?}");
    assert!(s.contains(&"branches D3: %43 -> T %45 F %48".to_string()), "{s:#?}");
}

#[test]
fn retest_dialect_round_trips_with_clusters() {
    let a = foreign::read(&data("branches.cond.dot")).unwrap();
    assert_eq!(a.dialect, Dialect::Retest);
    let dot = annotated_dot(&a);
    assert!(dot.contains("label=\"Decision 0\""));
    let back = retest_graph::dot::read_cfg(&dot).unwrap();
    assert_eq!(back, a.functions[0].cfg);
    let s = summary(&a);
    assert_eq!(s[0], "branches D0: n4 n5 n6 -> T n7 F n8");
    assert_eq!(s.len(), 9);
}

#[test]
fn annotated_dot_parses_and_keeps_every_node_and_edge() {
    for p in ["gcc/decisions.gcc.dot", "llvm/branches.dot", "llvm/nested.dot"] {
        let a = foreign::read(&data(p)).unwrap();
        let out = annotated_dot(&a);
        let g = retest_graph::dot::parse(&out).unwrap();
        assert_eq!(g.nodes.len(), a.graph.nodes.len(), "{p}");
        assert_eq!(g.edges.len(), a.graph.edges.len(), "{p}");
        for (x, y) in g.nodes.iter().zip(&a.graph.nodes) {
            let y2 = a.graph.node(&x.id).unwrap();
            assert_eq!(x.attrs, y2.attrs, "{p}: {}", y.id);
        }
        let decisions: usize = a.functions.iter().map(|f| f.cfdg.decisions.len()).sum();
        let clusters = g.subgraphs.iter().filter(|s| s.name.starts_with("cluster_decision_")).count();
        assert_eq!(clusters, decisions, "{p}");
        // annotating the annotated file gives the same decisions
        let again = foreign::read(&out).unwrap();
        assert_eq!(summary(&again), summary(&a), "{p}");
    }
}

#[test]
fn generic_digraph_with_true_false_labels() {
    let src = r#"digraph g {
        start -> a;
        a -> b [label="true"];
        a -> out [label="false"];
        b -> yes [label=T];
        b -> out [label=F];
        yes -> out;
    }"#;
    let a = foreign::read(src).unwrap();
    assert_eq!(a.dialect, Dialect::Generic);
    assert_eq!(summary(&a), ["g D0: a b -> T yes F out"]);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert!(matches!(foreign::read("digraph {"), Err(foreign::ForeignError::Syntax(_))));
    assert!(matches!(foreign::read("graph g { a -- b }"), Err(foreign::ForeignError::Undirected)));
    assert!(matches!(foreign::read("digraph g { }"), Err(foreign::ForeignError::NoFunction(_))));
    let e = foreign::read("digraph g { graph [format=\"retest-cfg/1\"]; n0 [kind=entry]; }").unwrap_err();
    assert!(matches!(e, foreign::ForeignError::Retest(_)), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any prefix or byte-level corruption of a real dump reads or fails cleanly.
    #[test]
    fn corrupted_dumps_never_panic(cut in 0usize..17000, flip in 0usize..17000, byte in any::<u8>(), which in 0usize..3) {
        let src = data(["gcc/decisions.gcc.dot", "llvm/branches.dot", "branches.cond.dot"][which]);
        let mut bytes = src.into_bytes();
        if flip < bytes.len() {
            bytes[flip] = byte;
        }
        bytes.truncate(cut.min(bytes.len()));
        let s = String::from_utf8_lossy(&bytes);
        if let Ok(a) = foreign::read(&s) {
            let mut out = Vec::new();
            foreign::write_dot(&a, &mut out).unwrap();
            let _ = serde_json::to_string(&a.report()).unwrap();
        }
    }
}
