//! A condition folds to a constant only when it is nothing but a constant: a
//! comma expression whose value is a literal keeps its left operand's code
//! in a predicate (csmith: `if (((*p = 0x9877L) > y) , 0L)` had its store in
//! no node, and an edit of it selected no test).

use std::path::Path;

use retest_lang_c::{analyze, run_preprocessor};

fn node_texts(src: &str) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("u.c"), src).unwrap();
    let pre = run_preprocessor("cc", &[], Path::new("u.c"), d.path()).unwrap();
    let tu = analyze(&pre, &|f| !f.system).unit;
    let p = &tu.procedures[0];
    p.stmt.nodes().map(|(_, n)| n.text.clone()).chain(p.cond.nodes().map(|(_, n)| n.text.clone())).collect()
}

#[test]
fn a_constant_after_a_comma_keeps_the_code_before_it() {
    let t = node_texts("int g;\nvoid f(int y) { if (((g = 5) > y) , 0L) y--; else y++; }\n");
    assert!(t.iter().any(|x| x.contains("g = 5")), "{t:?}");
    let t = node_texts("int g;\nvoid f(void) { while (g++, 1) if (g > 3) break; }\n");
    assert!(t.iter().any(|x| x.contains("g ++")), "{t:?}");
    // a bare constant still folds
    let t = node_texts("void f(int y) { if (0) y--; else y++; }\n");
    assert!(!t.iter().any(|x| x == "0"), "{t:?}");
}
