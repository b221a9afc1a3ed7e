//! CFG construction throughput, in preprocessed lines per second.
//!
//! Inputs: the construct corpus (preprocessed with system headers, like real
//! translation units) and a generated unit of many functions with loops, switches
//! and short-circuit decisions, and units of many small top-level items (a
//! declaration each, and a function every fourth), whose time per line must not
//! grow with the unit's size (`many-items-4000` against `many-items-16000`). Parsing and both CFG levels are included; running
//! the preprocessor is not (that is the compiler's time).

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retest_lang_c::{Preprocessed, analyze, run_preprocessor};

fn generated(functions: usize) -> String {
    let mut s = String::from("#include <stdio.h>\n#include <string.h>\n");
    for i in 0..functions {
        s.push_str(&format!(
            "int f{i}(int a, int b, const char *p) {{\n\
             \tint s = 0, k;\n\
             \tfor (k = 0; k < a; k++) {{\n\
             \t\tif ((k & 1) && (b > k || p[k % 3] == 'x'))\n\t\t\tcontinue;\n\
             \t\tswitch (k % 4) {{\n\t\tcase 0: s += k; break;\n\t\tcase 1: s -= b;\n\t\tcase 2: s ^= 7; break;\n\t\tdefault: s++;\n\t\t}}\n\
             \t}}\n\
             \twhile (s > 100 && !(s & 3)) s /= 2;\n\
             \tdo {{ s--; }} while (s > {i} % 17);\n\
             \tif (strlen(p) > 3) printf(\"%d\\n\", s);\n\
             \treturn s > 0 ? s : -s;\n}}\n"
        ));
    }
    s
}

fn many_items(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("extern int v{i};\n"));
        if i % 4 == 0 {
            s.push_str(&format!("int f{i}(int a) {{ if (a > {i}) return a - 1; return a + v{i}; }}\n"));
        }
    }
    s
}

fn preprocess(dir: &Path, file: &str) -> Preprocessed {
    run_preprocessor("cc", &[], Path::new(file), dir).expect("cc -E")
}

fn bench(c: &mut Criterion) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("gen.c"), generated(400)).unwrap();
    // the generated file of issue 30 (`bench/fe-speed/gen-functions.py 2000`)
    std::fs::write(tmp.path().join("gen2000.c"), generated(2000)).unwrap();
    std::fs::write(tmp.path().join("items4k.c"), many_items(4000)).unwrap();
    std::fs::write(tmp.path().join("items16k.c"), many_items(16000)).unwrap();
    let inputs = [
        ("constructs.c", preprocess(&corpus, "constructs.c")),
        ("generated-400fn", preprocess(tmp.path(), "gen.c")),
        ("generated-2000fn", preprocess(tmp.path(), "gen2000.c")),
        ("many-items-4000", preprocess(tmp.path(), "items4k.c")),
        ("many-items-16000", preprocess(tmp.path(), "items16k.c")),
    ];
    let mut g = c.benchmark_group("cfg_build");
    for (name, pre) in &inputs {
        let lines = pre.text.lines().count() as u64;
        g.throughput(Throughput::Elements(lines));
        g.bench_function(*name, |b| b.iter(|| analyze(pre, &|f| !f.system)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
