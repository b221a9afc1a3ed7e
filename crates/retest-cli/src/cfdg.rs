//! `retest cfdg`: CFG dumps of GCC and LLVM (DOT) annotated with their
//! decisions — the cfg2cfdg tool of 001 §VII ([`retest_cover::foreign`]).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use retest_cover::foreign;

use crate::fail::{Fail, OrFail};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The input graph with a cluster `Decision N` around each decision.
    Dot,
    /// The decisions (`retest.cfdg/1`).
    Json,
}

#[derive(Args)]
pub struct CfdgArgs {
    /// DOT files: `gcc -fdump-tree-cfg-graph` (one per unit), `opt -passes=dot-cfg`
    /// (one per function), `retest cfg --format dot`, or any digraph with T/F edges.
    #[arg(required = true, value_name = "FILE.dot")]
    files: Vec<PathBuf>,
    /// What to print for a single input file.
    #[arg(long, value_enum, default_value_t = Format::Dot)]
    format: Format,
    /// Write to this file instead of stdout (a single input file).
    #[arg(short, long, value_name = "FILE", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Write both `NAME.cfdg.dot` and `NAME.cfdg.json` for every input into this directory.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

fn annotate(path: &Path) -> Result<foreign::Annotated, Fail> {
    let bytes = std::fs::read(path).map_err(|e| Fail::new(format!("{}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let a = foreign::read(&text).map_err(|e| {
        Fail::new(format!("{}: {e}", path.display()))
            .hint("give a CFG in DOT (gcc -fdump-tree-cfg-graph, opt -passes=dot-cfg, retest cfg --format dot)")
    })?;
    for w in &a.warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(a)
}

fn write(a: &foreign::Annotated, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Dot => foreign::write_dot(a, w),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, &a.report()).map_err(io::Error::other)?;
            writeln!(w)
        }
    }
}

pub fn run(a: CfdgArgs) -> Result<(), Fail> {
    if let Some(dir) = &a.out_dir {
        std::fs::create_dir_all(dir).map_err(|e| Fail::new(format!("cannot create {}: {e}", dir.display())))?;
        for f in &a.files {
            let ann = annotate(f)?;
            let stem = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "graph".into());
            let stem = stem.strip_suffix(".dot").unwrap_or(&stem).to_string();
            for (format, ext) in [(Format::Dot, "cfdg.dot"), (Format::Json, "cfdg.json")] {
                let p = dir.join(format!("{stem}.{ext}"));
                let mut out = io::BufWriter::new(
                    std::fs::File::create(&p).map_err(|e| Fail::new(format!("cannot write {}: {e}", p.display())))?,
                );
                write(&ann, format, &mut out).and_then(|_| out.flush()).or_fail()?;
            }
        }
        return Ok(());
    }
    let [file] = a.files.as_slice() else {
        return Err(Fail::usage("several input files need --out-dir DIR").hint("or annotate one file at a time"));
    };
    let ann = annotate(file)?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| Fail::new(format!("cannot write {}: {e}", p.display())))?,
        )),
        None => Box::new(io::BufWriter::new(io::stdout().lock())),
    };
    write(&ann, a.format, &mut out).and_then(|_| out.flush()).or_fail()
}
