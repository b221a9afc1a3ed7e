//! The C runtime and the documentation agree with `retest-abi`, where every
//! number of the runtime ABI is defined: descriptor versions and section kinds
//! (`retest_rt.h`), trace version, flags, encodings, magic and file names
//! (`retest_rt.c`), and the tables of `docs/trace-format.md`.

use std::collections::BTreeMap;
use std::path::Path;

use retest_abi::trace::{self, Encoding};
use retest_abi::{ABI, ABI_OLDEST, SectionKind};

fn read(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `#define NAME VALUE` of `text` whose value is a number (decimal or
/// hexadecimal, with an optional `u` suffix).
fn defines(text: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else { continue };
        let v = value.trim_end_matches('u');
        let n = match v.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        };
        if let Some(n) = n {
            out.insert(name.to_string(), n);
        }
    }
    out
}

/// The enumerators `NAME = VALUE` of the first `enum {` … `}` holding `marker`.
fn enumerators(text: &str, marker: &str) -> BTreeMap<String, u32> {
    let at = text.find(marker).expect("the enum is there");
    let open = text[..at].rfind("enum {").expect("an enum opens before it");
    let close = open + text[open..].find('}').expect("the enum closes");
    text[open + "enum {".len()..close]
        .split(',')
        .filter_map(|e| {
            let (name, value) = e.split_once('=')?;
            Some((name.trim().to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The bytes of `static const unsigned char NAME[8] = { 'R', … };`.
fn char_array(text: &str, name: &str) -> Vec<u8> {
    let at = text.find(&format!("{name}[8] = {{")).unwrap_or_else(|| panic!("{name} is defined"));
    let body = &text[at..at + text[at..].find('}').unwrap()];
    body[body.find('{').unwrap() + 1..]
        .split(',')
        .map(|c| {
            let c = c.trim();
            match c.strip_prefix('\'').and_then(|c| c.strip_suffix('\'')) {
                Some(ch) => ch.as_bytes()[0],
                None => c.parse().unwrap_or_else(|_| panic!("{name}: {c}")),
            }
        })
        .collect()
}

#[test]
fn abi_c_sources_agree() {
    let h = read("runtime/retest_rt.h");
    let hd = defines(&h);
    assert_eq!(hd.get("RETEST_ABI"), Some(&ABI), "RETEST_ABI");
    assert_eq!(hd.get("RETEST_ABI_OLDEST"), Some(&ABI_OLDEST), "RETEST_ABI_OLDEST");
    let kinds = enumerators(&h, "RETEST_SECT_EDGES =");
    let expected: BTreeMap<String, u32> = SectionKind::ALL.iter().map(|k| (k.c_name().to_string(), k.code())).collect();
    assert_eq!(kinds, expected, "the section kinds of retest_rt.h");

    let c = read("runtime/retest_rt.c");
    let cd = defines(&c);
    assert_eq!(cd.get("RT_FORMAT_VERSION"), Some(&trace::VERSION), "RT_FORMAT_VERSION");
    for f in trace::FLAGS {
        assert_eq!(cd.get(f.c_name), Some(&f.bit), "{}", f.c_name);
    }
    let flags_in_c = cd.keys().filter(|k| k.starts_with("RT_FLAG_") && *k != "RT_FLAG_SIGNO_SHIFT").count();
    assert_eq!(flags_in_c, trace::FLAGS.len(), "retest_rt.c has a flag retest-abi does not");
    assert_eq!(cd.get("RT_FLAG_SIGNO_SHIFT"), Some(&trace::SIGNAL_SHIFT));
    for e in Encoding::ALL {
        assert_eq!(cd.get(e.c_name()), Some(&e.code()), "{}", e.c_name());
    }
    assert_eq!(char_array(&c, "magic"), trace::MAGIC);
    assert_eq!(char_array(&c, "endmagic"), trace::END_MAGIC);
    for ext in [trace::TRACE_EXTENSION, trace::LIVE_EXTENSION] {
        assert!(c.contains(&format!("rt_str_put(&s, \".{ext}\")")), "retest_rt.c names files `.{ext}`");
    }
}

#[test]
fn abi_doc_tables_agree() {
    let doc = read("../../docs/trace-format.md");
    let tables = retest_abi::markdown_tables();
    assert!(
        doc.contains(&tables),
        "docs/trace-format.md must hold the tables of retest_abi::markdown_tables() verbatim:\n{tables}"
    );
}
