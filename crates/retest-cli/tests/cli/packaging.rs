//! The Debian package (`cargo deb -p retest-cli --profile dist`, from
//! `[package.metadata.deb]` in crates/retest-cli/Cargo.toml) ships the manual
//! pages and shell completions kept in crates/retest-cli/packaging/. They must
//! be what the binary prints: after a change of the command line,
//! `RETEST_BLESS=1 cargo test -p retest-cli --test cli packaging::` writes them
//! anew (review the diff).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;

use common::*;

fn packaging() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging")
}

fn bless() -> bool {
    std::env::var_os("RETEST_BLESS").is_some()
}

/// Every file of `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn packaged_manual_pages_and_completions_are_what_retest_prints() {
    let d = tempfile::tempdir().unwrap();
    let printed_man = d.path().join("man");
    retest(d.path(), &["man", "--dir", printed_man.to_str().unwrap()], 0);
    let printed = files(&printed_man);
    assert!(printed.contains_key("retest.1") && printed.contains_key("retest-run.1"), "{:?}", printed.keys());
    let kept_man = packaging().join("man");
    if bless() {
        let _ = std::fs::remove_dir_all(&kept_man);
        std::fs::create_dir_all(&kept_man).unwrap();
        for (name, text) in &printed {
            std::fs::write(kept_man.join(name), text).unwrap();
        }
    }
    let kept = files(&kept_man);
    assert_eq!(
        kept.keys().collect::<Vec<_>>(),
        printed.keys().collect::<Vec<_>>(),
        "the packaged manual pages are not one per command (RETEST_BLESS=1 writes them)"
    );
    for (name, text) in &printed {
        assert!(kept[name] == *text, "packaging/man/{name} is not what `retest man` prints (RETEST_BLESS=1 writes it)");
    }

    for (shell, file) in [("bash", "retest.bash"), ("zsh", "_retest"), ("fish", "retest.fish")] {
        let script = retest(d.path(), &["completions", shell], 0).stdout;
        let kept = packaging().join("completions").join(file);
        if bless() {
            std::fs::write(&kept, &script).unwrap();
        }
        let text = std::fs::read(&kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
        assert!(
            text == script,
            "packaging/completions/{file} is not what `retest completions {shell}` prints (RETEST_BLESS=1 writes it)"
        );
    }
}

/// `[package.metadata.deb]` reads as cargo-deb reads it: the package is
/// `retest`, its assets are the binary and files that exist, every file kept
/// in packaging/ is shipped, and the manual pages go where `man` looks.
#[test]
fn debian_package_metadata_names_the_binary_and_files_that_exist() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap().parse().unwrap();
    let deb = &manifest["package"]["metadata"]["deb"];
    assert_eq!(deb["name"].as_str(), Some("retest"));
    for key in ["maintainer", "section", "extended-description", "depends"] {
        assert!(deb.get(key).and_then(|v| v.as_str()).is_some_and(|v| !v.is_empty()), "no {key}: {deb}");
    }
    assert!(deb["depends"].as_str().unwrap().contains("$auto"), "{deb}");
    let mut shipped: Vec<PathBuf> = Vec::new();
    let mut dests: Vec<String> = Vec::new();
    for a in deb["assets"].as_array().unwrap() {
        let a: Vec<&str> = a.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let [source, dest, mode] = a[..] else { panic!("an asset is [source, dest, mode]: {a:?}") };
        assert!(u32::from_str_radix(mode, 8).is_ok(), "{a:?}");
        dests.push(dest.to_string());
        if let Some(built) = source.strip_prefix("target/release/") {
            assert_eq!(built, "retest", "the one binary cargo builds: {a:?}");
            assert_eq!((dest, mode), ("usr/bin/", "755"), "{a:?}");
            continue;
        }
        let path = crate_dir.join(source);
        let matched: Vec<PathBuf> = match source.rsplit_once("/*") {
            Some((dir, suffix)) => std::fs::read_dir(crate_dir.join(dir))
                .unwrap_or_else(|e| panic!("{source}: {e}"))
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect(),
            None => vec![path.clone()].into_iter().filter(|p| p.is_file()).collect(),
        };
        assert!(!matched.is_empty(), "asset {source} matches no file");
        shipped.extend(matched.into_iter().map(|p| p.canonicalize().unwrap()));
    }
    for sub in ["man", "completions"] {
        for name in files(&packaging().join(sub)).keys() {
            let p = packaging().join(sub).join(name).canonicalize().unwrap();
            assert!(shipped.contains(&p), "packaging/{sub}/{name} is not among the package's assets");
        }
    }
    assert!(dests.iter().any(|d| d == "usr/share/man/man1/"), "{dests:?}");
}
