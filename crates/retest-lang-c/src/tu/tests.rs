use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::preprocess::run_preprocessor;
use crate::region::{RegionKey, RegionsInMemory};

/// The answer before [`syntax::value_uses`]: each identifier asks tree-sitter
/// for its parent (a search down from the root).
fn value_uses_by_parent_lookups(root: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    fn is_callee_or_declarator(id: Ts<'_>) -> bool {
        let Some(p) = id.parent() else { return false };
        let is_field = |f: &str| p.child_by_field_name(f).map(|x| x.id()) == Some(id.id());
        match kind_of(p) {
            "call_expression" => is_field("function"),
            "function_declarator"
            | "pointer_declarator"
            | "array_declarator"
            | "parenthesized_declarator"
            | "init_declarator"
            | "attributed_declarator" => is_field("declarator") || kind_of(p) == "parenthesized_declarator",
            "declaration" | "parameter_declaration" | "field_declaration" | "type_definition" => is_field("declarator"),
            "parenthesized_expression" => p.parent().is_some_and(|g| {
                kind_of(g) == "call_expression" && g.child_by_field_name("function").map(|x| x.id()) == Some(p.id())
            }),
            _ => false,
        }
    }
    syntax::preorder(root, |n, depth| {
        if kind_of(n) == "identifier" && (depth == 0 || n.is_named()) {
            if !is_callee_or_declarator(n) {
                out.insert(src_text(n, src).to_string());
            }
            return false;
        }
        depth == 0 || n.is_named()
    });
}

const TRICKY: &str = "\
int f(void), g(void), *h(void);
int (*fp)(void) = f;
struct s { int (*cb)(void); int n; } v = { g, 1 };
typedef int (*T)(void);
int z0, zz;
int k(int (*p)(void), int q) { return (f)() + ((g))() + p() + q; }
int m(void) { int (*a[2])(void) = { f, &g }; k(h, sizeof f); return a[0](); }
";

fn corpus() -> Vec<(String, Preprocessed)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "the corpus: {names:?}");
    names
        .into_iter()
        .map(|n| {
            let pre = run_preprocessor("cc", &[], Path::new(&n), &dir).unwrap_or_else(|e| panic!("cc -E {n}: {e}"));
            (n, pre)
        })
        .collect()
}

#[test]
fn value_uses_are_what_parent_lookups_say() {
    let mut inputs = corpus();
    inputs.push(("tricky".into(), Preprocessed::from_output(TRICKY.to_string())));
    let mut compared = 0;
    for (name, pre) in &inputs {
        let tree = parse(&pre.text);
        let root = tree.root_node();
        let mut c = root.walk();
        for top in root.children(&mut c) {
            let (mut walk, mut lookups) = (BTreeSet::new(), BTreeSet::new());
            syntax::value_uses(top, pre.text.as_bytes(), &mut walk);
            value_uses_by_parent_lookups(top, pre.text.as_bytes(), &mut lookups);
            assert_eq!(walk, lookups, "{name}, the node at byte {}", top.start_byte());
            compared += walk.len();
        }
    }
    assert!(compared > 1000, "identifiers compared: {compared}");
    // the cases the walk tells apart by field and by ancestor
    let pre = Preprocessed::from_output(TRICKY.to_string());
    let tree = parse(&pre.text);
    let mut uses = BTreeSet::new();
    syntax::value_uses(tree.root_node(), pre.text.as_bytes(), &mut uses);
    for used in ["f", "g", "h", "q", "a"] {
        assert!(uses.contains(used), "`{used}` is used as a value: {uses:?}");
    }
    for declared in ["fp", "v", "cb", "k", "m", "T", "p"] {
        assert!(!uses.contains(declared), "`{declared}` is only declared or called: {uses:?}");
    }
    // only the first declarator of a declaration counts as its declarator,
    // as `child_by_field_name` answers
    assert!(!uses.contains("z0") && uses.contains("zz"), "{uses:?}");
}

/// All of an analysis, to compare (a `FixedBitSet` shows its address).
fn shown(tu: &TuAnalysis) -> String {
    let completes: Vec<Vec<usize>> = tu.completes.iter().map(|c| c.ones().collect()).collect();
    format!("{:?}\n{:?}\n{completes:?}\n{} {:?} {:?}", tu.unit, tu.sites, tu.cpp, tu.guarded, tu.syntax_error)
}

/// Regions kept in memory, counting what is asked and found, with every
/// name a kept region declares.
#[derive(Default)]
struct Counting {
    kept: RegionsInMemory,
    asked: AtomicUsize,
    found: AtomicUsize,
    keeps: AtomicUsize,
    declared: std::sync::Mutex<BTreeSet<String>>,
}

impl Regions for Counting {
    fn region(&self, key: &RegionKey) -> Option<Region> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        let r = self.kept.region(key);
        if r.is_some() {
            self.found.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
    fn keep_region(&self, key: &RegionKey, region: &Region) {
        self.keeps.fetch_add(1, Ordering::Relaxed);
        self.declared.lock().unwrap().extend(region.decls.iter().flat_map(|d| d.2.names.iter().cloned()));
        self.kept.keep_region(key, region);
    }
}

/// Units that include the same headers in different orders and between
/// their own declarations: system headers; a system header (`-isystem`)
/// whose declarations change the units' graphs and probes (a `noreturn`
/// function, a `const` one, a type name, and an inline function that takes
/// a function's address); a header of the project's with declarations only;
/// one that defines a function (a graph and probes in every unit that
/// includes it); and one with a syntax error (a problem in every unit).
fn header_orders() -> Vec<(String, Preprocessed)> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sys")).unwrap();
    std::fs::write(
        dir.path().join("sys/fatal.h"),
        "#include <stddef.h>\n\
         __attribute__((noreturn)) void fatal_error(const char *why);\n\
         __attribute__((const)) int twice(int);\n\
         typedef int word_t;\n\
         static inline void (*fatal_handler(void))(const char *) { return fatal_error; }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("own.h"), "typedef unsigned long own_size;\nextern int own_flag;\n").unwrap();
    std::fs::write(
        dir.path().join("inl.h"),
        "static inline int own_twice(int x) { if (x > 9) return x; return 2 * x; }\nextern int inl_flag;\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.h"), "extern int bad_decl = ;\nextern int after_bad;\n").unwrap();
    let units = [
        (
            "a.c",
            "#include <stdio.h>\n#include <fatal.h>\n#include \"own.h\"\n#include \"inl.h\"\n#include <string.h>\nint a(const char *s) { if (!s) fatal_error(\"a\"); return (int) strlen(s); }\n",
        ),
        (
            "b.c",
            "#include <stdio.h>\n#include <fatal.h>\n#include \"own.h\"\n#include \"inl.h\"\n#include \"bad.h\"\n#include <string.h>\nstatic int b(int x) { return x > 0 ? twice(x) : -x; }\nint (*pick)(int) = b;\nvoid (*on_fatal)(const char *) = fatal_error;\n",
        ),
        (
            "c.c",
            "#include <string.h>\nint c0;\n#include <stdio.h>\n#include <fatal.h>\nvoid c(void) { puts(\"c\"); fatal_error(\"c\"); }\n",
        ),
        (
            "d.c",
            "#include <stdlib.h>\n#include \"own.h\"\n#include \"bad.h\"\n#include <fatal.h>\nint d(int n) { while (n > 0) { if (n == 3) fatal_error(\"d\"); n = twice(n) - n - 1; } return atoi(\"1\"); }\nint e(int x) { return (word_t)(x) + 1; }\n",
        ),
    ];
    let flags = ["-O2".to_string(), "-isystem".to_string(), "sys".to_string()];
    units
        .iter()
        .map(|(name, text)| {
            std::fs::write(dir.path().join(name), text).unwrap();
            (name.to_string(), run_preprocessor("cc", &flags, Path::new(name), dir.path()).unwrap())
        })
        .collect()
}

#[test]
fn a_unit_analysed_with_kept_header_regions_is_the_unit_analysed_whole() {
    let mut inputs = corpus();
    inputs.extend(header_orders());
    let regions = Counting::default();
    let own = |f: &SourceFile| !f.system;
    // twice over: the second time every region of every unit is kept
    for round in 0..2 {
        let found_before = regions.found.load(Ordering::Relaxed);
        let asked_before = regions.asked.load(Ordering::Relaxed);
        let keeps_before = regions.keeps.load(Ordering::Relaxed);
        for (name, pre) in &inputs {
            let whole = analyze(pre, &own);
            let with = analyze_with(pre, &own, &regions);
            assert_eq!(shown(&with), shown(&whole), "{name}, round {round}");
        }
        let found = regions.found.load(Ordering::Relaxed) - found_before;
        let asked = regions.asked.load(Ordering::Relaxed) - asked_before;
        let keeps = regions.keeps.load(Ordering::Relaxed) - keeps_before;
        match round {
            // units after the first find the headers the first ones included
            0 => assert!(found > 0 && found < asked && keeps > 0, "found {found} of {asked}"),
            // every region that can be kept was, the first time; those with
            // a function or an error of the project's never are
            _ => assert!(keeps == 0 && found < asked, "found {found} of {asked}, {keeps} kept anew"),
        }
    }
    let declared = regions.declared.lock().unwrap();
    assert!(declared.contains("own_flag") && declared.contains("fatal_error"), "{declared:?}");
    for never in ["own_twice", "inl_flag", "bad_decl", "after_bad"] {
        assert!(!declared.contains(never), "`{never}` was kept");
    }
}

#[test]
fn a_unit_left_without_code_to_parse_is_still_whole() {
    // a unit of system headers only: every run kept, nothing left to parse
    let pre = Preprocessed::from_output(
        "# 1 \"u.c\"\n# 1 \"/usr/include/x.h\" 1 3 4\nextern int x; __attribute__((noreturn)) void die(void);\n"
            .to_string(),
    );
    let regions = RegionsInMemory::default();
    let own = |f: &SourceFile| !f.system;
    let whole = analyze(&pre, &own);
    assert_eq!(whole.unit.decls.len(), 2);
    assert_eq!(shown(&analyze_with(&pre, &own, &regions)), shown(&whole));
    assert_eq!(shown(&analyze_with(&pre, &own, &regions)), shown(&whole), "from the kept region");
}
