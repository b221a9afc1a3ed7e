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

/// Types where tree-sitter-c expects expressions and the reverse (gnu_types.c):
/// nothing is left unparsed but the type arguments of builtins, which are
/// recognised as such; `typeof` of an expression is a type, not a call.
#[test]
fn typeof_atomics_and_type_arguments_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let flags = vec!["-std=gnu11".to_string()];
    let pre = run_preprocessor("cc", &flags, Path::new("gnu_types.c"), &dir).unwrap();
    let unit = analyze(&pre, &|f| !f.system).unit;
    assert!(unit.problems.is_empty(), "no syntax problems: {:?}", unit.problems);
    // every syntax error inside the functions is a builtin's type argument
    let tree = retest_lang_c::tu::parse(&pre.text);
    let src = pre.text.as_bytes();
    let mut stack = vec![tree.root_node()];
    let mut type_args = 0;
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            assert!(retest_lang_c::syntax::is_type_argument(n, src), "error at {:?}", n.start_position());
            type_args += 1;
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    assert!(type_args >= 3, "va_arg(ap, char *), (ap, char **), (ap, unsigned int) have ERRORs: {type_args}");
    // the second declarator after its attribute is a declaration of its own name
    assert!(unit.decls.iter().any(|d| d.names.iter().any(|n| n == "second_pair")));
    let all_nodes = || unit.procedures.iter().flat_map(|p| p.cond.nodes().map(|(_, n)| n));
    assert!(all_nodes().all(|n| !n.calls.iter().any(|c| c.contains("typeof"))), "typeof is no call");
    let twice = unit.procedures.iter().find(|p| p.name == "twice").unwrap();
    let texts: Vec<&str> = twice.stmt.nodes().map(|(_, n)| n.text.as_str()).collect();
    assert!(texts.contains(&"typeof ( copy + 1 ) sum = copy + copy ;"), "{texts:?}");
    assert!(texts.contains(&"typeof ( ( ( void ) 0 , * p ) ) tmp = sum ;"), "{texts:?}");
    // `typeof(*p) copy` declares copy, not p
    let decl = twice.stmt.nodes().find(|(_, n)| n.kind == NodeKind::Declaration).unwrap().1;
    assert!(decl.text.contains("copy"), "{}", decl.text);
    assert!(!decl.text.contains("( * p ) ;"), "{}", decl.text);
}
