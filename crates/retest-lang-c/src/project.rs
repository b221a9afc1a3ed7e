//! Analysing translation units named by compile commands.

use std::path::{Path, PathBuf};

use crate::driver::{CompileCommand, Mode, parse_args};
use crate::preprocess::{PreprocessError, SourceFile, run_preprocessor};
use crate::region::{NoRegions, Regions};
use crate::tu::{TuAnalysis, analyze_with};

/// One translation unit to analyse: how to preprocess it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuJob {
    pub compiler: String,
    /// Flags for `-E` (outputs, dependency options and inputs removed).
    pub flags: Vec<String>,
    /// The flags that identify how the unit is compiled (see `CompilerArgs::identity_flags`).
    pub identity_flags: Vec<String>,
    /// The source, as given (relative to `directory` if relative).
    pub file: PathBuf,
    pub directory: PathBuf,
}

impl TuJob {
    /// A job for `file` compiled with `compiler` and `flags` from `directory`.
    pub fn new(
        compiler: impl Into<String>,
        flags: &[String],
        file: impl Into<PathBuf>,
        directory: impl Into<PathBuf>,
    ) -> TuJob {
        let mut args = flags.to_vec();
        let file = file.into();
        args.push(file.to_string_lossy().into_owned());
        let parsed = parse_args(&args);
        TuJob {
            compiler: compiler.into(),
            flags: parsed.preprocess_flags(),
            identity_flags: parsed.identity_flags(),
            file,
            directory: directory.into(),
        }
    }

    /// The jobs of a compilation-database entry: one per C source it compiles;
    /// none for entries that do not compile C.
    pub fn from_compile_command(cc: &CompileCommand) -> Vec<TuJob> {
        let argv = unwrapped(cc.argv());
        let Some((compiler, rest)) = argv.split_first() else {
            return Vec::new();
        };
        let parsed = parse_args(rest);
        if matches!(parsed.mode, Mode::Preprocess | Mode::Depend) {
            return Vec::new();
        }
        let flags = parsed.preprocess_flags();
        let identity = parsed.identity_flags();
        let entry_file = Path::new(&cc.file);
        parsed
            .sources
            .iter()
            .filter(|s| {
                // a database entry is about one file; keep that one
                let p = Path::new(s.as_str());
                p == entry_file || Path::new(&cc.directory).join(p) == Path::new(&cc.directory).join(entry_file)
            })
            .map(|s| TuJob {
                compiler: compiler.clone(),
                flags: flags.clone(),
                identity_flags: identity.clone(),
                file: PathBuf::from(s),
                directory: PathBuf::from(&cc.directory),
            })
            .collect()
    }

    /// Absolute (or directory-relative) path of the source.
    pub fn source_path(&self) -> PathBuf {
        self.directory.join(&self.file)
    }

    /// Preprocesses and analyses the unit. Functions count as the project's own
    /// when `is_own` says so for their file.
    pub fn analyze(&self, is_own: &dyn Fn(&SourceFile) -> bool) -> Result<TuAnalysis, PreprocessError> {
        self.analyze_with(is_own, &NoRegions)
    }

    /// [`TuJob::analyze`], taking the header regions of a C unit that
    /// `regions` keeps from there, and keeping the others there.
    pub fn analyze_with(
        &self,
        is_own: &dyn Fn(&SourceFile) -> bool,
        regions: &dyn Regions,
    ) -> Result<TuAnalysis, PreprocessError> {
        let pre = run_preprocessor(&self.compiler, &self.flags, &self.file, &self.directory)?;
        Ok(if self.is_cpp() {
            crate::cpp::analyze(&pre, is_own, crate::cpp::Dialect::of_flags(&self.flags))
        } else {
            analyze_with(&pre, is_own, regions)
        })
    }

    /// Whether the compiler accepts the source with the unit's flags
    /// (`-fsyntax-only`): `None` if it does, else its first error.
    pub fn check_syntax(&self) -> Result<Option<crate::preprocess::CompilerError>, PreprocessError> {
        crate::preprocess::check_syntax(&self.compiler, &self.flags, &self.file, &self.directory)
    }

    /// Whether the unit is C++: `-x c++` among the flags, or a C++ source name.
    pub fn is_cpp(&self) -> bool {
        match self.flags.iter().position(|f| f == "-x") {
            Some(i) => self.flags.get(i + 1).is_some_and(|l| l.starts_with("c++")),
            None => crate::driver::is_cpp_source(&self.file.to_string_lossy()),
        }
    }
}

/// A command run through the wrapper (`retest cc …`, `retest c++ …`, as
/// a database written under `retest build` records it) as the real compiler
/// runs it: `$RETEST_CC` (else `cc`) or `$RETEST_CXX` (else `c++`), as the
/// wrapper does.
fn unwrapped(argv: Vec<String>) -> Vec<String> {
    let is_wrapper =
        argv.first().and_then(|c| Path::new(c).file_name()).is_some_and(|n| n.to_string_lossy().starts_with("retest"));
    match argv.get(1).map(String::as_str) {
        Some(which @ ("cc" | "c++")) if is_wrapper => {
            let real = crate::wrap::real_compiler(which == "c++");
            std::iter::once(real).chain(argv.into_iter().skip(2)).collect()
        }
        _ => argv,
    }
}

/// Reads a `compile_commands.json`.
pub fn read_compile_commands(path: &Path) -> Result<Vec<CompileCommand>, CompileCommandsError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| CompileCommandsError::Read { path: path.to_path_buf(), source })?;
    serde_json::from_str(&text).map_err(|e| CompileCommandsError::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        message: e.to_string(),
    })
}

#[derive(Debug, thiserror::Error)]
pub enum CompileCommandsError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: not a valid compilation database: {message}", path.display())]
    Parse { path: PathBuf, line: usize, message: String },
}

/// The root of a project analysed through its compilation database `db`: the
/// deepest directory holding both the database and every source file it
/// compiles. An out-of-source build (`cmake -B build`) writes the database into
/// the build directory, beside the sources rather than above them; the root is
/// then their common parent. `None` if the database's directory does not exist.
pub fn project_root(db: &Path, cmds: &[CompileCommand]) -> Option<PathBuf> {
    let db_dir = db.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut root = std::fs::canonicalize(db_dir).ok()?;
    for cc in cmds {
        let src = Path::new(&cc.directory).join(&cc.file);
        let src = std::fs::canonicalize(&src).unwrap_or(src);
        if !src.is_absolute() {
            continue;
        }
        while !src.starts_with(&root) {
            match root.parent() {
                Some(p) => root = p.to_path_buf(),
                None => break,
            }
        }
    }
    Some(root)
}

/// The default notion of "own" files: not system headers nor pseudo-files, and
/// (when `root` is given) under `root` once resolved against the compile directory.
pub fn own_files(root: Option<PathBuf>, directory: PathBuf) -> impl Fn(&SourceFile) -> bool {
    move |f: &SourceFile| {
        if f.system || f.path.starts_with('<') {
            return false;
        }
        match &root {
            None => true,
            Some(root) => {
                let p = directory.join(&f.path);
                let p = std::fs::canonicalize(&p).unwrap_or(p);
                p.starts_with(root)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: &Path, file: &str) -> CompileCommand {
        CompileCommand {
            directory: dir.to_string_lossy().into_owned(),
            file: file.to_string(),
            arguments: Some(vec!["cc".into(), "-c".into(), file.to_string()]),
            command: None,
            output: None,
        }
    }

    #[test]
    fn a_database_written_through_the_wrapper_runs_the_real_compiler() {
        let v = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let real = |var: &str, default: &str| {
            std::env::var(var).ok().filter(|v| !v.trim().is_empty()).unwrap_or(default.into())
        };
        assert_eq!(unwrapped(v("/opt/bin/retest c++ -I../include -c a.cc"))[1..], v("-I../include -c a.cc")[..]);
        assert_eq!(unwrapped(v("/opt/bin/retest c++ -c a.cc"))[0], real("RETEST_CXX", "c++"));
        assert_eq!(unwrapped(v("retest-0d8a381 cc -c a.c"))[0], real("RETEST_CC", "cc"));
        assert_eq!(unwrapped(v("gcc -c a.c")), v("gcc -c a.c"));
        assert_eq!(unwrapped(v("retest cfg -c a.c")), v("retest cfg -c a.c"));
    }

    #[test]
    fn out_of_source_builds_root_at_the_common_parent() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        for d in ["lib/src", "lib/build", "lib/test"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        std::fs::write(top.join("lib/src/a.c"), "int a;\n").unwrap();
        std::fs::write(top.join("lib/test/t.c"), "int t;\n").unwrap();
        let build = top.join("lib/build");
        let db = build.join("compile_commands.json");
        // sources named absolutely (CMake) and relative to the build directory
        let cmds = [entry(&build, &top.join("lib/src/a.c").to_string_lossy()), entry(&build, "../test/t.c")];
        let root = project_root(&db, &cmds).unwrap();
        assert_eq!(root, top.join("lib"));
        let own = own_files(Some(root), build.clone());
        assert!(own(&SourceFile { path: "../src/a.c".into(), system: false }));
        assert!(!own(&SourceFile { path: "/usr/include/stdio.h".into(), system: false }));
    }

    #[test]
    fn in_tree_builds_root_at_the_database() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(top.join("src")).unwrap();
        std::fs::write(top.join("src/a.c"), "int a;\n").unwrap();
        let cmds = [entry(&top, "src/a.c")];
        assert_eq!(project_root(&top.join("compile_commands.json"), &cmds).unwrap(), top);
        // a database in a directory that does not exist names no root
        assert_eq!(project_root(&top.join("nowhere/compile_commands.json"), &cmds), None);
    }
}
