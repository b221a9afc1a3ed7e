//! Embeds the bundled example project (examples/cruise) for `retest demo`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("examples/cruise is readable").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name != ".gitignore" {
            continue;
        }
        if p.is_dir() {
            collect(root, &p, out);
        } else if !(name.ends_with(".o") || name.ends_with(".gcda") || name.ends_with(".gcno") || name == "cruise") {
            out.push(p.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../../examples/cruise").canonicalize().expect("examples/cruise exists");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let mut src =
        String::from("/// The bundled example: (relative path, contents).\npub const EXAMPLE: &[(&str, &[u8])] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
        writeln!(src, "    ({:?}, include_bytes!({:?})),", f.to_string_lossy(), root.join(f).to_string_lossy())
            .unwrap();
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("example.rs");
    std::fs::write(out, src).unwrap();
}
