//! The units `retest-select`'s tests compare (`crates/retest-select/fixtures`)
//! are what this front end makes of their sources. `retest-select` is tested
//! on these fixtures, without a compiler; this test keeps them current: a
//! change of the front end that changes a fixture's unit fails here, and
//! `RETEST_BLESS=1 cargo test -p retest-lang-c --test front_end select_fixtures::`
//! writes the new units (review the diff: the selection tests then run on
//! them).
//!
//! A fixture is JSON: `about`, the source — `corpus` (a file of
//! `retest-select/tests/corpus`, else of this crate's `tests/corpus`) or
//! `source` (C text, analysed as `u.c`) —, `flags` for the preprocessor, and
//! `unit`.

use std::path::{Path, PathBuf};

use retest_graph::Unit;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-select/fixtures")
}

fn corpus(file: &str) -> PathBuf {
    let select = Path::new(env!("CARGO_MANIFEST_DIR")).join("../retest-select/tests/corpus").join(file);
    if select.exists() { select } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(file) }
}

fn analyse(fixture: &serde_json::Value) -> Unit {
    let flags: Vec<String> =
        fixture["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
    let (dir, file, _scratch) = match (fixture["corpus"].as_str(), fixture["source"].as_str()) {
        (Some(c), None) => {
            let p = corpus(c);
            (p.parent().unwrap().to_path_buf(), PathBuf::from(p.file_name().unwrap()), None)
        }
        (None, Some(src)) => {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("u.c"), src).unwrap();
            (d.path().to_path_buf(), PathBuf::from("u.c"), Some(d))
        }
        _ => panic!("a fixture has either `corpus` or `source`"),
    };
    let pre = retest_lang_c::run_preprocessor("cc", &flags, &file, &dir).unwrap();
    retest_lang_c::analyze(&pre, &|f| !f.system).unit
}

#[test]
fn the_selection_fixtures_are_what_the_front_end_makes_of_their_sources() {
    let bless = std::env::var_os("RETEST_BLESS").is_some();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let mut fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let unit = analyse(&fixture);
        let stored: Option<Unit> = serde_json::from_value(fixture["unit"].clone()).ok();
        if stored.as_ref() != Some(&unit) {
            assert!(
                bless,
                "{}: the front end makes another unit of its source now; if that is intended, rerun with RETEST_BLESS=1 and review the diff",
                path.display()
            );
            fixture["unit"] = serde_json::to_value(&unit).unwrap();
            std::fs::write(&path, serde_json::to_string(&fixture).unwrap() + "\n").unwrap();
        }
        names.push(path);
    }
    assert!(names.len() >= 20, "the fixtures are missing: {}", fixtures_dir().display());
}
