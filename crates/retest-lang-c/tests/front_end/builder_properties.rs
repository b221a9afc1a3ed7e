//! Property tests of the CFG builder on generated C: whatever the nesting of
//! `if`/`else`, loops, empty branches and constant conditions, every function
//! gets both CFG levels (no "internal error"), and the statement level is the
//! contraction of the condition level.

use proptest::prelude::*;
use retest_lang_c::{Preprocessed, analyze};

#[derive(Clone, Debug)]
enum Cond {
    Lit(bool),
    Var(u8),
    Call(u8),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

#[derive(Clone, Debug)]
enum Stmt {
    Empty,
    Call(u8),
    Block(Vec<Stmt>),
    If(Cond, Box<Stmt>, Option<Box<Stmt>>),
    While(Cond, Box<Stmt>),
    DoWhile(Box<Stmt>, Cond),
    Break,
    Return,
}

fn cond() -> impl Strategy<Value = Cond> {
    let leaf =
        prop_oneof![any::<bool>().prop_map(Cond::Lit), (0u8..3).prop_map(Cond::Var), (0u8..3).prop_map(Cond::Call)];
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|c| Cond::Not(Box::new(c))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Cond::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Cond::Or(Box::new(a), Box::new(b))),
        ]
    })
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let leaf = prop_oneof![
        3 => Just(Stmt::Empty),
        3 => (0u8..3).prop_map(Stmt::Call),
        1 => Just(Stmt::Break),
        1 => Just(Stmt::Return),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Stmt::Block),
            (cond(), inner.clone(), prop::option::of(inner.clone())).prop_map(|(c, t, e)| Stmt::If(
                c,
                Box::new(t),
                e.map(Box::new)
            )),
            (cond(), inner.clone()).prop_map(|(c, b)| Stmt::While(c, Box::new(b))),
            (inner, cond()).prop_map(|(b, c)| Stmt::DoWhile(Box::new(b), c)),
        ]
    })
}

fn c_cond(c: &Cond) -> String {
    match c {
        Cond::Lit(b) => (if *b { "1" } else { "0" }).to_string(),
        Cond::Var(v) => format!("v{v}"),
        Cond::Call(f) => format!("g{f}(v0)"),
        Cond::Not(a) => format!("!({})", c_cond(a)),
        Cond::And(a, b) => format!("({} && {})", c_cond(a), c_cond(b)),
        Cond::Or(a, b) => format!("({} || {})", c_cond(a), c_cond(b)),
    }
}

fn c_stmt(s: &Stmt, out: &mut String) {
    match s {
        Stmt::Empty => out.push(';'),
        Stmt::Call(f) => out.push_str(&format!("g{f}(v1);")),
        Stmt::Block(v) => {
            out.push('{');
            for s in v {
                c_stmt(s, out);
                out.push('\n');
            }
            out.push('}');
        }
        Stmt::If(c, t, e) => {
            out.push_str(&format!("if ({}) ", c_cond(c)));
            c_stmt(t, out);
            if let Some(e) = e {
                out.push_str(" else ");
                c_stmt(e, out);
            }
        }
        Stmt::While(c, b) => {
            out.push_str(&format!("while ({}) ", c_cond(c)));
            c_stmt(b, out);
        }
        Stmt::DoWhile(b, c) => {
            out.push_str("do ");
            c_stmt(b, out);
            out.push_str(&format!(" while ({});", c_cond(c)));
        }
        // a `break` outside a loop is not C: the generator wraps the body in a loop
        Stmt::Break => out.push_str("break;"),
        Stmt::Return => out.push_str("return;"),
    }
}

fn program(body: &Stmt) -> String {
    let mut s =
        String::from("# 1 \"gen.c\"\nint g0(int), g1(int), g2(int);\nvoid f(int v0, int v1, int v2) {\nfor (;;) {\n");
    c_stmt(body, &mut s);
    s.push_str("\nbreak;\n}\n}\n");
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Guards: `nested_ifs_with_empty_branches_and_constant_conditions_always_build`.
    #[test]
    fn nested_ifs_with_empty_branches_and_constant_conditions_always_build(body in stmt()) {
        let text = program(&body);
        let tu = analyze(&Preprocessed::from_output(text.clone()), &|_| true);
        prop_assert_eq!(tu.unit.procedures.len(), 1, "{}", text);
        let f = &tu.unit.procedures[0];
        prop_assert!(f.unanalysable.is_none(), "{}\n{:?}", text, f.unanalysable);
        prop_assert!(tu.unit.problems.is_empty(), "{}\n{:?}", text, tu.unit.problems);
        // the contraction is total: every condition-level node maps onto a statement-level one
        prop_assert_eq!(f.map.node.len(), f.cond.node_count());
    }
}

/// The two functions of the issue that the builder could not contract: a
/// folded `if (0)` with an empty then-branch inside an `if`, and glibc's
/// `if (…) assert(0);`.
#[test]
fn a_folded_condition_inside_a_branch_keeps_the_branch_label() {
    let text = "# 1 \"c.c\"\nint g(int);\nvoid __assert_fail(const char *, const char *, unsigned, const char *) __attribute__((__noreturn__));\n\
                void f(int v){ if (g(v)) { if (0) ; else g(v); } }\n\
                void h(int x){ if (x) ((0) ? (void) (0) : __assert_fail (\"0\", \"c.c\", 4, __extension__ __PRETTY_FUNCTION__)); }\n";
    let tu = analyze(&Preprocessed::from_output(text.to_string()), &|_| true);
    assert_eq!(tu.unit.procedures.len(), 2);
    for f in &tu.unit.procedures {
        assert_eq!(f.unanalysable, None, "{}", f.name);
        // `if (g(v))` keeps one T and one F edge at the statement level
        let pred = f.stmt.node_ids().find(|&n| f.stmt.node(n).kind == retest_graph::NodeKind::Predicate).unwrap();
        let labels: Vec<String> = f.stmt.out_edges(pred).map(|e| f.stmt.edge(e).label.to_string()).collect();
        assert_eq!(labels.len(), 2, "{}: {labels:?}", f.name);
        assert_ne!(labels[0], labels[1], "{}: {labels:?}", f.name);
    }
}
