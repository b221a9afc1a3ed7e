//! Every node maps back to its original file and line: code from macro
//! expansions maps to the line of the invocation, code from included project
//! files to its line in that file.

use std::path::Path;

use retest_lang_c::{analyze, run_preprocessor};

fn locations(function: &str) -> Vec<(String, String, u32)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/spans");
    let pre = run_preprocessor("cc", &[], Path::new("spans.c"), &dir).unwrap();
    let tu = analyze(&pre, &|f| !f.system).unit;
    let f = tu.procedures.iter().find(|f| f.name == function).unwrap();
    f.stmt.nodes().filter_map(|(_, n)| n.span.map(|s| (n.text.clone(), tu.file_path(&s).to_string(), s.line))).collect()
}

fn line_of(locs: &[(String, String, u32)], text: &str) -> (String, u32) {
    let hit: Vec<_> = locs.iter().filter(|(t, _, _)| t == text).collect();
    assert_eq!(hit.len(), 1, "exactly one node with text {text:?} in {locs:#?}");
    (hit[0].1.clone(), hit[0].2)
}

#[test]
fn statements_map_to_their_original_lines() {
    let l = locations("spans");
    assert_eq!(line_of(&l, "int total = ( ( a ) * ( a ) ) ;"), ("spans.c".into(), 5));
    // a condition spread over two lines starts on the first
    assert_eq!(line_of(&l, "a < b"), ("spans.c".into(), 6));
    // a multi-line macro's statements map to the invocation
    assert_eq!(line_of(&l, "int t_ = ( a ) ;"), ("spans.c".into(), 8));
    assert_eq!(line_of(&l, "( b ) = t_ ;"), ("spans.c".into(), 8));
    // a statement spread over three lines
    assert_eq!(line_of(&l, "total = total + clamp ( b ) ;"), ("spans.c".into(), 9));
    // statements from an included fragment map into that file
    assert_eq!(line_of(&l, "total += 1 ;"), ("body.inc".into(), 1));
    assert_eq!(line_of(&l, "total += 2 ;"), ("body.inc".into(), 2));
    // after the include, lines are back in spans.c
    assert_eq!(line_of(&l, "total > 10"), ("spans.c".into(), 13));
    assert_eq!(line_of(&l, "total -- ;"), ("spans.c".into(), 14));
    // an invocation whose arguments span lines maps to its first line
    assert_eq!(line_of(&l, "return ( ( total ) * ( total ) ) ;"), ("spans.c".into(), 15));
}

#[test]
fn header_functions_map_into_the_header() {
    let l = locations("clamp");
    assert_eq!(line_of(&l, "v > 10"), ("defs.h".into(), 11));
    assert_eq!(line_of(&l, "return 10 ;"), ("defs.h".into(), 12));
    assert_eq!(line_of(&l, "return v ;"), ("defs.h".into(), 13));
}
