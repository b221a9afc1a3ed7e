//! GNU attributes where tree-sitter-c's grammar has no place for them (after a
//! variable's declarator) must not hide the functions that follow, and must
//! still be part of the declarations they belong to.

use std::path::Path;

use retest_graph::NodeKind;
use retest_lang_c::{analyze, run_preprocessor};

#[test]
fn declarator_attributes_hide_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let pre = run_preprocessor("cc", &[], Path::new("attributes.c"), &dir).unwrap();
    let unit = analyze(&pre, &|f| !f.system).unit;
    assert!(unit.problems.is_empty(), "no syntax problems: {:?}", unit.problems);
    assert!(unit.unattributed_error.is_none());
    let names: Vec<&str> = unit.procedures.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["first", "second"]);
    assert!(unit.procedures.iter().all(|p| p.unanalysable.is_none()));
    // the attribute is part of the declaration's text
    let s2 = unit.decls.iter().find(|d| d.names == ["s2"]).expect("s2 is a declaration");
    assert!(s2.text.ends_with("__attribute__((unused))"), "{}", s2.text);
    // `fatal` is still known never to return: its call ends at the exit
    let first = &unit.procedures[0];
    let call = first.stmt.nodes().find(|(_, n)| n.text.starts_with("fatal")).map(|(id, _)| id).unwrap();
    let succ: Vec<_> = first.stmt.succs(call).collect();
    assert_eq!(succ.len(), 1);
    assert_eq!(first.stmt.node(succ[0]).kind, NodeKind::Exit);
}
