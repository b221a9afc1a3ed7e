//! Error containment: a syntax error or a construct the builder does not know,
//! inserted into one function of a real source file, costs that function and
//! nothing else. Every other function keeps exactly its CFGs, no code of the
//! unit is left outside a CFG, and the damaged function itself shows the change
//! (it is unanalysable, or its CFG differs) — never an unchanged graph that
//! would hide an edit from selection.

use std::path::{Path, PathBuf};

use retest_graph::text::to_text;
use retest_lang_c::{Preprocessed, TuAnalysis, analyze, run_preprocessor, toplevel};

/// The project's own C programs: the benchmark subjects and the example.
fn subjects() -> Vec<(PathBuf, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in ["bench/subjects/lexer", "bench/subjects/sched", "bench/subjects/textsub", "examples/cruise"] {
        let d = root.join(dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .expect("subject directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (f, vec![format!("-I{}", d.display())])));
    }
    out
}

/// What the test compares of one procedure.
fn shape(tu: &TuAnalysis) -> Vec<(String, String, Option<String>)> {
    tu.unit
        .procedures
        .iter()
        .map(|p| {
            (p.name.clone(), format!("{}{}", to_text(&p.stmt, None), to_text(&p.cond, None)), p.unanalysable.clone())
        })
        .collect()
}

/// Brace-balanced fragments that tree-sitter-c cannot parse, or that the builder
/// does not know, inside a function body.
const FRAGMENTS: &[&str] = &[
    "+* ;",
    ") (",
    "@",
    "$$ = 1;",
    "`x`",
    "case 3:",
    "default:",
    "__typeof__(3) q;",
    "goto *p;",
    "1 ... 5",
    "int int x;",
    "else",
    "= , ?",
    ": :",
    "\\",
    "sizeof",
    "struct { int a; } s;",
    "({ 0; })",
    "asm goto (\"\" :::: l);",
    "return",
    "break;",
    "continue;",
    "do",
    "while",
    "if",
    "switch (x)",
    "{ + }",
    "[ ]",
    "'c' 'd'",
    "\"s\" ->",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Guards the invariant "an error costs one function". CI runs 25 injections
/// per file; `RETEST_CONTAINMENT_CASES=150 cargo test --release -p
/// retest-lang-c --test containment` is the larger run (bench/RESULTS.md), and
/// `RETEST_CONTAINMENT_SEED` picks another sequence.
#[test]
fn an_error_injected_into_one_function_costs_only_that_function() {
    let seed: u64 = std::env::var("RETEST_CONTAINMENT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let per_file: usize = std::env::var("RETEST_CONTAINMENT_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(25);
    let mut rng = Rng(seed);
    let mut injected = 0;
    let mut unanalysable = 0;
    for (file, flags) in subjects() {
        let dir = file.parent().expect("file in a directory").to_path_buf();
        let pre = run_preprocessor("cc", &flags, &file, &dir).expect("the subject preprocesses");
        let own = |f: &retest_lang_c::SourceFile| !f.system;
        let before = analyze(&pre, &own);
        assert!(before.unit.unattributed_error.is_none(), "{}", file.display());
        let old = shape(&before);
        // the bodies of the unit's own functions, as the scanner sees them
        let bodies: Vec<(String, usize, usize)> = toplevel::items(pre.text.as_bytes())
            .into_iter()
            .filter_map(|it| match it.kind {
                toplevel::ItemKind::Function { name: Some(n), body_open, body_close, .. }
                    if old.iter().any(|(m, _, u)| *m == n && u.is_none()) =>
                {
                    Some((n, body_open, body_close))
                }
                _ => None,
            })
            .collect();
        assert!(!bodies.is_empty(), "{}", file.display());
        for case in 0..per_file {
            let (name, open, close) = bodies[rng.below(bodies.len())].clone();
            // a token boundary inside the body
            let toks = toplevel::tokens(&pre.text.as_bytes()[open + 1..close]);
            let at = if toks.is_empty() { open + 1 } else { open + 1 + toks[rng.below(toks.len())].start };
            let mut garbage = String::new();
            for _ in 0..1 + rng.below(3) {
                garbage.push(' ');
                garbage.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
            }
            garbage.push(' ');
            let mut raw = pre.raw.clone();
            raw.insert_str(at, &garbage);
            let pre2 = Preprocessed::from_output(raw);
            let after = analyze(&pre2, &own);
            // valid C after all (a `continue;` after a `break;`): its graph may rightly be the same
            let parses = {
                let tree = retest_lang_c::tu::parse(&pre2.text);
                let root = tree.root_node();
                let mut c = root.walk();
                let def = root.children(&mut c).find(|n| n.start_byte() <= at && at < n.end_byte());
                def.is_some_and(|d| d.kind() == "function_definition" && !d.has_error())
            };
            let new = shape(&after);
            let ctx = || format!("{} case {case} (seed {seed}): `{garbage}` in {name} at byte {at}", file.display());
            assert!(after.unit.unattributed_error.is_none(), "{}: {:?}", ctx(), after.unit.unattributed_error);
            assert_eq!(
                new.iter().map(|p| &p.0).collect::<Vec<_>>(),
                old.iter().map(|p| &p.0).collect::<Vec<_>>(),
                "{}",
                ctx()
            );
            for (o, n) in old.iter().zip(&new) {
                if o.0 == name {
                    assert!(parses || n != o, "{}: the damaged function shows no change", ctx());
                    unanalysable += usize::from(n.2.is_some());
                } else {
                    assert_eq!(n, o, "{}: another function changed", ctx());
                }
            }
            injected += 1;
        }
    }
    assert_eq!(injected, per_file * subjects().len());
    eprintln!("{injected} injected errors, {unanalysable} made their function unanalysable");
}

/// An error in a loop's body is the body's: the loop's own condition and
/// update keep their probes (git's `for (p = b; p <= e; ++p, c0 = c1)` around a
/// `__builtin_offsetof (__typeof__ (*entry), entry)` lost both, with two
/// warnings at every such loop).
#[test]
fn an_error_in_a_loop_body_leaves_the_loop_header_probed() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("loop.c"),
        "struct e { int entry; };\n\
         void *g(void *, unsigned long);\n\
         int f(struct e *entry, int n) {\n\
             int p, c0 = 0, c1 = 0;\n\
             for (p = 0; p <= n; ++p, c0 = c1)\n\
                 c1 = g(entry, __builtin_offsetof(__typeof__(*entry), entry)) != 0;\n\
             return c0;\n\
         }\n",
    )
    .expect("write");
    let pre = run_preprocessor("cc", &[], Path::new("loop.c"), dir.path()).expect("preprocess");
    let tu = analyze(&pre, &|f| !f.system);
    let at: Vec<(u32, &str)> =
        tu.unit.problems.iter().map(|p| (p.span.map_or(0, |s| s.line), p.message.as_str())).collect();
    assert!(at.iter().all(|(line, _)| *line != 5), "the loop header is blamed for its body's error: {at:?}");
    let f = &tu.unit.procedures[0];
    assert_eq!(f.unanalysable, None);
    // the condition and the update are instrumented where they are
    let probed: Vec<&str> = f
        .cond
        .nodes()
        .filter(|(id, _)| !matches!(tu.sites[0][id.index()], retest_lang_c::Site::None))
        .map(|(_, n)| n.text.as_str())
        .collect();
    for text in ["p <= n", "++ p , c0 = c1"] {
        assert!(probed.contains(&text), "`{text}` is not probed: {probed:?}");
    }
}

/// `offsetof (__typeof__ (*p), m)` is a builtin's type argument wherever it
/// stands: git's `hashmap_for_each_entry` puts it in a `for` loop's
/// initialisation and update, which then went unprobed with a warning each.
#[test]
fn a_typeof_inside_a_builtin_type_argument_is_no_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("iter.c"),
        "struct e { int key; struct e *next; };\n\
         void *first(unsigned long);\n\
         void *next(void *, unsigned long);\n\
         int count(void) {\n\
             int n = 0;\n\
             struct e *v;\n\
             for (v = 0, v = first(__builtin_offsetof(__typeof__(*v), next)); v;\n\
                  v = next(v, __builtin_offsetof(__typeof__(*v), next)))\n\
                 n++;\n\
             return n;\n\
         }\n",
    )
    .expect("write");
    let pre = run_preprocessor("cc", &[], Path::new("iter.c"), dir.path()).expect("preprocess");
    let tu = analyze(&pre, &|f| !f.system);
    assert!(tu.unit.problems.is_empty(), "{:?}", tu.unit.problems);
    let f = &tu.unit.procedures[0];
    let header: Vec<(&str, bool)> = f
        .cond
        .nodes()
        .filter(|(_, n)| n.text.contains("__builtin_offsetof"))
        .map(|(id, n)| (n.text.as_str(), !matches!(tu.sites[0][id.index()], retest_lang_c::Site::None)))
        .collect();
    assert_eq!(header.len(), 2, "{header:?}");
    assert!(header.iter().all(|(_, probed)| *probed), "not probed: {header:?}");
}
