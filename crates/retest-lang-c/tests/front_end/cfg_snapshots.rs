//! Snapshot tests of the CFGs the front end builds, at both levels, for the
//! seeds' examples and a corpus covering every statement form. Each expected CFG
//! was checked by hand against the paper's figure (or the C semantics) once.

use std::path::Path;

use retest_graph::text::to_text;
use retest_lang_c::{analyze, run_preprocessor};

fn render(file: &str, flags: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let cpp = retest_lang_c::driver::is_cpp_source(file);
    let compiler = if cpp { "c++" } else { "cc" };
    let pre = run_preprocessor(compiler, &flags, Path::new(file), &dir).expect("preprocess");
    let own = |f: &retest_lang_c::SourceFile| !f.system;
    let tu = if cpp {
        retest_lang_c::cpp::analyze(&pre, &own, retest_lang_c::cpp::Dialect::of_flags(&flags)).unit
    } else {
        analyze(&pre, &own).unit
    };
    let mut out = String::new();
    let name = |i: u32| tu.files[i as usize].path.clone();
    for f in &tu.procedures {
        out.push_str(&format!(
            "## {}{}\n",
            f.name,
            match &f.unanalysable {
                Some(r) => format!(" (unanalysable: {r})"),
                None => String::new(),
            }
        ));
        out.push_str("### statement level\n");
        out.push_str(&to_text(&f.stmt, Some(&name)));
        out.push_str("### condition level\n");
        out.push_str(&to_text(&f.cond, Some(&name)));
    }
    if !tu.problems.is_empty() {
        out.push_str("## problems\n");
        for p in &tu.problems {
            let at = p.span.map(|s| format!("{}:{}", tu.file_path(&s), s.line)).unwrap_or_default();
            out.push_str(&format!("{at}: {}\n", p.message));
        }
    }
    out
}

macro_rules! snap {
    ($name:ident, $file:expr $(, $flag:expr)*) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(render($file, &[$($flag),*]));
        }
    };
}

snap!(avg, "avg.c");
snap!(avg2, "avg2.c");
snap!(twovisits, "twovisits.c");
snap!(pathological, "pathological.c");
snap!(cfdg_listings, "cfdg_listings.c");
snap!(grade_v0, "grade.c", "-DGRADE_V=0");
snap!(grade_v1, "grade.c", "-DGRADE_V=1");
snap!(grade_v2, "grade.c", "-DGRADE_V=2");
snap!(elevator, "elevator.c");
snap!(elevator_v1, "elevator.c", "-DELEVATOR_V=1");
snap!(constructs, "constructs.c");
snap!(old_style, "old_style.c");
snap!(gnu_types, "gnu_types.c", "-std=gnu11");
snap!(elevator_cc, "elevator.cc");
snap!(elevator_cc_v1, "elevator.cc", "-DELEVATOR_V=1");
snap!(constructs_cc, "constructs.cc", "-std=c++17");
snap!(constexpr_cc, "constexpr.cc", "-std=c++20");
snap!(constexpr_cc11, "constexpr.cc", "-std=c++11", "-DCXX11");
