//! Units the C front end builds from real code read back from the store exactly
//! as they were stored (the store's binary unit encoding), for the front end's
//! corpus, the study subjects and the example.

use std::path::{Path, PathBuf};

use retest_lang_c::{analyze, run_preprocessor};
use retest_store::Store;

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut v = Vec::new();
    for dir in [
        "crates/retest-lang-c/tests/corpus",
        "bench/subjects/lexer",
        "bench/subjects/sched",
        "bench/subjects/textsub",
        "examples/cruise",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "c") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

#[test]
fn stored_units_read_back_unchanged() {
    let d = tempfile::tempdir().unwrap();
    let dir = Store::dir_for(d.path());
    let mut store = Store::init(&dir).unwrap();
    let mut stored = Vec::new();
    for (i, src) in sources().iter().enumerate() {
        let pre = run_preprocessor("cc", &[], Path::new(src.file_name().unwrap()), src.parent().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let unit = analyze(&pre, &|f| !f.system).unit;
        assert!(!unit.procedures.is_empty(), "{}", src.display());
        let id = store.put_unit(&[i as u8; 16], &unit).unwrap();
        stored.push((src.clone(), id, unit));
    }
    assert!(stored.len() >= 15, "only {} sources", stored.len());
    drop(store);
    // a fresh handle: nothing cached
    let store = Store::open(&dir).unwrap();
    for (src, id, unit) in &stored {
        assert!(*store.unit(*id).unwrap() == *unit, "{} does not read back as stored", src.display());
    }
}
