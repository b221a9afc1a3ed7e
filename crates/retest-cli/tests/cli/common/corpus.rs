//! A corpus of C functions with decisions of one to six conditions, and a test
//! suite for it, for cross-checks against other tools.
//!
//! Each decision is the only one of its function (`dK`), written on one line with
//! the conditions `a`, `b`, … (the function's parameters, in that order), placed
//! in one context (`if`, `if … else`, a value, `while`, `for`). Each test runs
//! one function once: `./corpus K a b c d e f`, so every test evaluates its
//! decision exactly once. Decisions `d4`, `d13` and `d22` are never true.
//! `loop3` evaluates `p || q` three times per run (the
//! case edge coverage cannot tell apart), `unused` is never called, and `main`
//! has a loop over its arguments.

#![allow(dead_code)]

use std::fmt::Write as _;

/// Where a decision stands (the decision on one line, what it guards on the
/// following lines).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ctx {
    /// `if (E) return 1;`
    If,
    /// `if (E) r = 1; else r = 2;`
    IfElse,
    /// `r = E;`
    Value,
    /// `while (E) { r = 1; break; }`
    While,
    /// `for (; E;) { r = 1; break; }`
    For,
}

/// The decisions of the corpus: conditions are `a`, `b`, … left to right.
pub const DECISIONS: &[(&str, Ctx)] = &[
    ("a", Ctx::If),
    ("!a", Ctx::IfElse),
    ("a", Ctx::While),
    ("a && b", Ctx::If),
    ("a || b", Ctx::Value),
    ("!a && b", Ctx::IfElse),
    ("a || !b", Ctx::For),
    ("a && b", Ctx::While),
    ("(a && b) || c", Ctx::If),
    ("a && (b || c)", Ctx::Value),
    ("!(a || b) || c", Ctx::If),
    ("a || b || c", Ctx::IfElse),
    ("(a || !b) && c", Ctx::While),
    ("a && (b || c)", Ctx::For),
    ("(a && b) || (c && d)", Ctx::If),
    ("(a || b) && (c || d)", Ctx::Value),
    ("a && b && c && d", Ctx::IfElse),
    ("!(a && b) || (c && !d)", Ctx::If),
    ("(a || b) && !(c && d)", Ctx::While),
    ("(a && b) || (c && d) || e", Ctx::If),
    ("a && (b || (c && (d || e)))", Ctx::IfElse),
    ("!(a || (b && c)) && (d || e)", Ctx::For),
    ("(a || b) && (c || d) && (e || f)", Ctx::If),
    ("(a && b) || (c && d) || (e && f)", Ctx::Value),
    ("a && b && c && d && e && f", Ctx::If),
    ("(a || !b) && (c || (d && !(e || f)))", Ctx::IfElse),
];

/// A boolean expression over leaves numbered left to right. A leaf's value is
/// the value of the leaf *as written*, negation included (`!b` is one leaf whose
/// value is that of `!b`), as llvm-cov reports condition values.
#[derive(Clone, Debug)]
pub enum E {
    Leaf { index: usize, negated: bool },
    Not(Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
}

impl E {
    pub fn parse(s: &str) -> E {
        let toks: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = Parser { toks, at: 0, leaves: 0 };
        let e = p.or();
        assert_eq!(p.at, p.toks.len(), "trailing input in {s}");
        e
    }

    pub fn leaves(&self) -> usize {
        match self {
            E::Leaf { .. } => 1,
            E::Not(x) => x.leaves(),
            E::And(a, b) | E::Or(a, b) => a.leaves() + b.leaves(),
        }
    }

    /// Which leaves are written `!x`.
    pub fn negated_leaves(&self, out: &mut Vec<bool>) {
        match self {
            E::Leaf { negated, .. } => out.push(*negated),
            E::Not(x) => x.negated_leaves(out),
            E::And(a, b) | E::Or(a, b) => {
                a.negated_leaves(out);
                b.negated_leaves(out);
            }
        }
    }

    /// Whether `!` applies to a nested `&&` / `||` somewhere (which LLVM 19's
    /// MC/DC does not instrument: "unsupported MC/DC boolean expression").
    pub fn negates_a_subexpression(&self) -> bool {
        match self {
            E::Leaf { .. } => false,
            E::Not(_) => true,
            E::And(a, b) | E::Or(a, b) => a.negates_a_subexpression() || b.negates_a_subexpression(),
        }
    }

    /// The value, given every leaf's value (as written).
    pub fn eval(&self, leaf: &[bool]) -> bool {
        match self {
            E::Leaf { index, .. } => leaf[*index],
            E::Not(x) => !x.eval(leaf),
            E::And(a, b) => a.eval(leaf) && b.eval(leaf),
            E::Or(a, b) => a.eval(leaf) || b.eval(leaf),
        }
    }

    /// Short-circuit evaluation from the variables' values: each leaf's value
    /// (as written) if evaluated, and the outcome.
    pub fn run(&self, vars: &[bool]) -> (Vec<Option<bool>>, bool) {
        let mut seen = vec![None; self.leaves()];
        let out = self.walk(vars, &mut seen);
        (seen, out)
    }

    fn walk(&self, vars: &[bool], seen: &mut [Option<bool>]) -> bool {
        match self {
            E::Leaf { index, negated } => {
                let v = vars[*index] != *negated;
                seen[*index] = Some(v);
                v
            }
            E::Not(x) => !x.walk(vars, seen),
            E::And(a, b) => a.walk(vars, seen) && b.walk(vars, seen),
            E::Or(a, b) => a.walk(vars, seen) || b.walk(vars, seen),
        }
    }
}

struct Parser {
    toks: Vec<char>,
    at: usize,
    leaves: usize,
}

impl Parser {
    fn peek2(&self) -> Option<(char, char)> {
        Some((*self.toks.get(self.at)?, *self.toks.get(self.at + 1)?))
    }

    fn or(&mut self) -> E {
        let mut e = self.and();
        while self.peek2() == Some(('|', '|')) {
            self.at += 2;
            e = E::Or(Box::new(e), Box::new(self.and()));
        }
        e
    }

    fn and(&mut self) -> E {
        let mut e = self.unary();
        while self.peek2() == Some(('&', '&')) {
            self.at += 2;
            e = E::And(Box::new(e), Box::new(self.unary()));
        }
        e
    }

    fn unary(&mut self) -> E {
        match self.toks[self.at] {
            '!' => {
                self.at += 1;
                match self.unary() {
                    E::Leaf { index, negated } => E::Leaf { index, negated: !negated },
                    other => E::Not(Box::new(other)),
                }
            }
            '(' => {
                self.at += 1;
                let e = self.or();
                assert_eq!(self.toks[self.at], ')');
                self.at += 1;
                e
            }
            c => {
                assert_eq!(c as u32 - 'a' as u32, self.leaves as u32, "conditions are a, b, … in order");
                self.at += 1;
                self.leaves += 1;
                E::Leaf { index: self.leaves - 1, negated: false }
            }
        }
    }
}

/// One function of the corpus.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    /// Index in the dispatch table (`./corpus K …`), if called.
    pub index: Option<usize>,
    /// Line of the decision.
    pub line: u32,
    pub expr: E,
    pub ctx: Ctx,
}

impl Function {
    pub fn conditions(&self) -> usize {
        self.expr.leaves()
    }
}

/// One test: its name, the function it runs, its arguments and its command
/// (relative to the corpus directory).
#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    pub function: usize,
    pub args: Vec<i32>,
    pub cmd: String,
}

impl Test {
    fn new(name: String, function: usize, index: usize, args: Vec<i32>) -> Test {
        let mut cmd = format!("./corpus {index}");
        for a in &args {
            cmd.push_str(&format!(" {a}"));
        }
        Test { name, function, args, cmd }
    }

    /// The arguments as the values of the conditions `a`, `b`, ….
    pub fn vars(&self) -> Vec<bool> {
        self.args.iter().map(|&a| a != 0).collect()
    }
}

pub struct Corpus {
    pub source: String,
    pub functions: Vec<Function>,
    pub tests: Vec<Test>,
    /// Line of `loop3`'s decision `p || q`, and of its `for` guard.
    pub loop_line: u32,
    pub loop_guard_line: u32,
    pub main_loop_line: u32,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Percent of all assignments of `n` conditions that become tests.
fn sample_percent(n: usize) -> u64 {
    match n {
        0..=2 => 100,
        3 => 75,
        4 => 45,
        5 => 30,
        _ => 15,
    }
}

const PARAMS: &str = "int a, int b, int c, int d, int e, int f";

pub fn corpus() -> Corpus {
    let mut src = String::new();
    let mut line = 1u32;
    let mut push = |src: &mut String, text: &str| {
        src.push_str(text);
        src.push('\n');
        line += 1;
        line - 1
    };
    push(&mut src, "#include <stdio.h>");
    push(&mut src, "#include <stdlib.h>");
    push(&mut src, "");
    let mut functions = Vec::new();
    for (k, (expr, ctx)) in DECISIONS.iter().enumerate() {
        let name = format!("d{k}");
        push(&mut src, &format!("int {name}({PARAMS}) {{"));
        push(&mut src, "  int r = 0;");
        let body: Vec<String> = match ctx {
            Ctx::If => vec![format!("  if ({expr})"), "    return 1;".into()],
            Ctx::IfElse => vec![format!("  if ({expr})"), "    r = 1;".into(), "  else".into(), "    r = 2;".into()],
            Ctx::Value => vec![format!("  r = {expr};")],
            Ctx::While => vec![format!("  while ({expr}) {{"), "    r = 1;".into(), "    break;".into(), "  }".into()],
            Ctx::For => vec![format!("  for (; {expr};) {{"), "    r = 1;".into(), "    break;".into(), "  }".into()],
        };
        let at = push(&mut src, &body[0]);
        for l in &body[1..] {
            push(&mut src, l);
        }
        push(&mut src, "  return r + (a + b + c + d + e + f) * 0;");
        push(&mut src, "}");
        push(&mut src, "");
        functions.push(Function { name, index: Some(k), line: at, expr: E::parse(expr), ctx: *ctx });
    }
    push(&mut src, &format!("int loop3({PARAMS}) {{"));
    push(&mut src, "  int k = 0;");
    let loop_guard_line = push(&mut src, "  for (int i = 0; i < 3; i++) {");
    push(&mut src, "    int p = i == a, q = i == b;");
    let loop_line = push(&mut src, "    if (p || q) k++;");
    push(&mut src, "  }");
    push(&mut src, "  return k + (c + d + e + f) * 0;");
    push(&mut src, "}");
    push(&mut src, "");
    let n = functions.len();
    push(&mut src, &format!("int unused({PARAMS}) {{"));
    let unused_line = push(&mut src, "  if (a && b) return 1;");
    push(&mut src, "  return (c + d + e + f) * 0;");
    push(&mut src, "}");
    push(&mut src, "");
    push(&mut src, &format!("typedef int (*fn)({PARAMS});"));
    let names: Vec<String> = functions.iter().map(|f: &Function| f.name.clone()).chain(["loop3".to_string()]).collect();
    push(&mut src, &format!("static const fn fns[] = {{{}}};", names.join(", ")));
    push(&mut src, "int main(int argc, char **argv) {");
    push(&mut src, "  int v[6] = {0, 0, 0, 0, 0, 0};");
    let main_loop_line = push(&mut src, "  for (int i = 2; i < argc; i++) v[(i - 2) % 6] = atoi(argv[i]);");
    push(&mut src, "  printf(\"%d\\n\", fns[atoi(argv[1])](v[0], v[1], v[2], v[3], v[4], v[5]));");
    push(&mut src, "  return 0;");
    push(&mut src, "}");
    // tests: a sample of each decision's assignments
    let mut tests = Vec::new();
    for (k, f) in functions.iter().enumerate() {
        let n = f.conditions();
        let all = 1u64 << n;
        let mut chosen: Vec<u64> =
            (0..all).filter(|&m| splitmix(k as u64 * 4096 + m) % 100 < sample_percent(n)).collect();
        if chosen.len() < 2 {
            chosen = vec![0, all - 1];
        }
        // some decisions are never true: what they guard is never executed
        if k % 9 == 4 {
            chosen.retain(|&m| {
                let vars: Vec<bool> = (0..n).map(|i| m & (1 << i) != 0).collect();
                !f.expr.run(&vars).1
            });
        }
        for m in chosen {
            let args: Vec<i32> = (0..n).map(|i| i32::from(m & (1 << i) != 0)).collect();
            let bits: String = args.iter().map(|a| a.to_string()).collect();
            tests.push(Test::new(format!("{}-{bits}", f.name), k, k, args));
        }
    }
    functions.push(Function {
        name: "loop3".into(),
        index: Some(n),
        line: loop_line,
        expr: E::parse("a || b"),
        ctx: Ctx::If,
    });
    for (a, b) in [(0, 1), (5, 5), (2, 2), (0, 0), (1, 7)] {
        tests.push(Test::new(format!("loop3-{a}{b}"), n, n, vec![a, b]));
    }
    functions.push(Function {
        name: "unused".into(),
        index: None,
        line: unused_line,
        expr: E::parse("a && b"),
        ctx: Ctx::If,
    });
    Corpus { source: src, functions, tests, loop_line, loop_guard_line, main_loop_line }
}

impl Corpus {
    /// `retest.toml` for the tests.
    pub fn retest_toml(&self) -> String {
        let mut s = String::new();
        for t in &self.tests {
            let _ = writeln!(s, "[[test]]\nname = \"{}\"\ncmd = \"{}\"\n", t.name, t.cmd);
        }
        s
    }

    /// Writes `corpus.c`, a Makefile and `retest.toml` into `dir`.
    pub fn write(&self, dir: &std::path::Path) {
        std::fs::write(dir.join("corpus.c"), &self.source).unwrap();
        std::fs::write(dir.join("Makefile"), "corpus: corpus.c\n\t$(CC) -O0 -g -o corpus corpus.c\n").unwrap();
        std::fs::write(dir.join("retest.toml"), self.retest_toml()).unwrap();
    }

    /// The paths `p || q` takes in `loop3(a, b)`, as (p, q) leaf values per evaluation.
    pub fn loop_paths(a: i32, b: i32) -> Vec<(Option<bool>, Option<bool>)> {
        let mut out = Vec::new();
        for i in 0..3 {
            let p = i == a;
            let path = if p { (Some(true), None) } else { (Some(false), Some(i == b)) };
            if !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }
}

/// Whether a program is on the PATH.
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}
