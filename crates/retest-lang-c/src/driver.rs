//! Understanding compiler command lines (`cc -O2 -c a.c -o a.o`, one-step
//! `cc -o prog a.c b.c`, `compile_commands.json` entries): which inputs are C
//! sources, what the command produces, and which flags matter for preprocessing
//! and code generation.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What a compiler invocation does.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Mode {
    /// `-c`: compile (and assemble) each source to an object.
    Compile,
    /// `-S`: compile to assembly.
    Assemble,
    /// `-E`: preprocess only.
    Preprocess,
    /// `-M`/`-MM` without `-MD`: dependency output only.
    Depend,
    /// No stop flag: compile the sources (if any) and link.
    Link,
}

/// A parsed compiler command line.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct CompilerArgs {
    pub mode: Mode,
    /// C sources (by extension, or after `-x c`).
    pub sources: Vec<String>,
    /// Other inputs (objects, archives, assembler files, C++ sources, ...).
    pub other_inputs: Vec<String>,
    /// `-o` argument.
    pub output: Option<String>,
    /// Flags to repeat when preprocessing a source: everything except outputs,
    /// dependency-file options, stop flags and inputs.
    pub flags: Vec<String>,
    /// `-shared` was given.
    pub shared: bool,
    /// The language forced with `-x` for the sources, if any.
    pub language: Option<String>,
    /// Dependency-output options (`-MD`, `-MMD`, `-MF f`, `-MT t`, `-MQ t`, `-MP`, `-MG`),
    /// as given; they are honoured while preprocessing.
    pub dep_flags: Vec<String>,
    /// `-r` (relocatable partial link): no runtime is added.
    pub relocatable: bool,
    /// The command line in its order without outputs and dependency-file options,
    /// for a link step: linkers resolve libraries against the inputs before them,
    /// so `-lm` must stay after the objects that need it.
    #[serde(default)]
    pub link_order: Vec<LinkSlot>,
}

/// One argument of [`CompilerArgs::link_order`].
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum LinkSlot {
    /// An argument passed on as it is (flags, libraries, non-C inputs).
    Arg(String),
    /// The C source `sources[index]`, with the `-x` language in force there.
    Source { index: usize, language: Option<String> },
}

/// Flags that take a separate argument (`-o x`, `-I dir`, ...).
const WITH_ARG: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-isysroot",
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-L",
    "-l",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-T",
    "-u",
    "-z",
    "--param",
    "-aux-info",
    "-arch",
    "-target",
    "--sysroot",
];

/// Dependency-file flags dropped when re-running the preprocessor.
const DEP_FLAGS: &[&str] = &["-MD", "-MMD", "-MP", "-MG", "-M", "-MM"];

fn is_c_source(path: &str) -> bool {
    path.ends_with(".c") || path.ends_with(".i")
}

/// Whether a file name is a C++ source, as GCC decides by its suffix.
pub fn is_cpp_source(path: &str) -> bool {
    const SUFFIXES: &[&str] = &[".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C", ".ii"];
    SUFFIXES.iter().any(|s| path.ends_with(s))
}

fn is_input_like(a: &str) -> bool {
    !a.starts_with('-') || a == "-"
}

/// Parses a compiler command line (without the compiler itself).
pub fn parse_args(args: &[String]) -> CompilerArgs {
    let mut mode = Mode::Link;
    let mut sources = Vec::new();
    let mut other_inputs = Vec::new();
    let mut output = None;
    let mut flags = Vec::new();
    let mut shared = false;
    let mut language: Option<String> = None;
    let mut depend_only = false;
    let mut has_md = false;
    let mut dep_flags = Vec::new();
    let mut relocatable = false;
    let mut link_order = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-c" => mode = stronger(mode, Mode::Compile),
            "-S" => mode = stronger(mode, Mode::Assemble),
            "-E" => mode = stronger(mode, Mode::Preprocess),
            "-M" | "-MM" => depend_only = true,
            "-MD" | "-MMD" => {
                has_md = true;
                dep_flags.push(a.clone());
            }
            "-MP" | "-MG" => dep_flags.push(a.clone()),
            "-r" => {
                relocatable = true;
                flags.push(a.clone());
                link_order.push(LinkSlot::Arg(a.clone()));
            }
            "-shared" => {
                shared = true;
                flags.push(a.clone());
                link_order.push(LinkSlot::Arg(a.clone()));
            }
            "-o" => {
                output = args.get(i + 1).cloned();
                i += 1;
            }
            "-MF" | "-MT" | "-MQ" => {
                dep_flags.push(a.clone());
                if let Some(v) = args.get(i + 1) {
                    dep_flags.push(v.clone());
                }
                i += 1;
            }
            "-x" => {
                language = args.get(i + 1).cloned();
                if let Some(l) = &language {
                    flags.push("-x".into());
                    flags.push(l.clone());
                    link_order.extend([LinkSlot::Arg("-x".into()), LinkSlot::Arg(l.clone())]);
                }
                i += 1;
            }
            _ if DEP_FLAGS.contains(&a.as_str()) => {}
            _ if a.starts_with("-o") && a.len() > 2 => output = Some(a[2..].to_string()),
            _ if a.starts_with("-MF") || a.starts_with("-MT") || a.starts_with("-MQ") => dep_flags.push(a.clone()),
            _ if a.starts_with("-Wp,-MD") || a.starts_with("-Wp,-MMD") => {}
            _ if WITH_ARG.contains(&a.as_str()) => {
                flags.push(a.clone());
                link_order.push(LinkSlot::Arg(a.clone()));
                if let Some(v) = args.get(i + 1) {
                    flags.push(v.clone());
                    link_order.push(LinkSlot::Arg(v.clone()));
                }
                i += 1;
            }
            _ if is_input_like(a) => {
                let forced = matches!(
                    language.as_deref(),
                    Some("c") | Some("cpp-output") | Some("c++") | Some("c++-cpp-output")
                );
                if forced || (language.is_none() && (is_c_source(a) || is_cpp_source(a))) {
                    link_order.push(LinkSlot::Source { index: sources.len(), language: language.clone() });
                    sources.push(a.clone());
                } else {
                    other_inputs.push(a.clone());
                    link_order.push(LinkSlot::Arg(a.clone()));
                }
            }
            _ => {
                flags.push(a.clone());
                link_order.push(LinkSlot::Arg(a.clone()));
            }
        }
        i += 1;
    }
    if depend_only && !has_md && mode == Mode::Link {
        mode = Mode::Depend;
    }
    CompilerArgs { mode, sources, other_inputs, output, flags, shared, language, dep_flags, relocatable, link_order }
}

fn stronger(a: Mode, b: Mode) -> Mode {
    // -E beats -S beats -c (as the driver does)
    let rank = |m: Mode| match m {
        Mode::Preprocess => 3,
        Mode::Assemble => 2,
        Mode::Compile => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

impl CompilerArgs {
    /// Whether a link makes a program for certain: not `-shared`, not `-r`,
    /// and no linker option that could make a shared object
    /// (`-Wl,-shared`, `-Xlinker -Bshareable`, ...).
    pub fn links_program(&self) -> bool {
        self.mode == Mode::Link
            && !self.shared
            && !self.relocatable
            && !self.flags.iter().any(|f| {
                let f = f.to_ascii_lowercase();
                f.contains("shared") || f.contains("shareable") || f == "-r" || f.contains(",-r")
            })
    }

    /// Flags for `cc -E`: the preprocessing and code generation flags, without
    /// linker-only ones.
    pub fn preprocess_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.flags.len() {
            let f = &self.flags[i];
            let linker_only = f == "-shared"
                || f == "-static"
                || f == "-pie"
                || f == "-rdynamic"
                || f.starts_with("-Wl,")
                || f.starts_with("-l")
                || f.starts_with("-L");
            let takes_arg = matches!(f.as_str(), "-L" | "-l" | "-Xlinker" | "-T" | "-u" | "-z");
            if !linker_only && !takes_arg {
                out.push(f.clone());
            }
            if WITH_ARG.contains(&f.as_str()) {
                if !takes_arg && let Some(v) = self.flags.get(i + 1) {
                    out.push(v.clone());
                }
                i += 1;
            }
            i += 1;
        }
        out
    }

    /// The flags that identify how a TU is compiled, for detecting flag changes:
    /// the preprocessing flags without include directories (their effect is already
    /// visible in the preprocessed text, and they often differ only by build dir).
    pub fn identity_flags(&self) -> Vec<String> {
        let pf = self.preprocess_flags();
        let mut out = Vec::new();
        let mut i = 0;
        while i < pf.len() {
            let f = &pf[i];
            if matches!(f.as_str(), "-I" | "-isystem" | "-iquote" | "-idirafter") {
                i += 2;
                continue;
            }
            if f.starts_with("-I") || f.starts_with("-iquote") {
                i += 1;
                continue;
            }
            out.push(f.clone());
            i += 1;
        }
        out
    }
}

/// Flags that only affect preprocessing, with a separate argument.
const PP_WITH_ARG: &[&str] = &[
    "-D",
    "-U",
    "-I",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-isysroot",
];

impl CompilerArgs {
    /// Whether source `index` is C++: `-x c++` in force there, or a C++ name.
    pub fn source_is_cpp(&self, index: usize) -> bool {
        let lang = self.link_order.iter().find_map(|s| match s {
            LinkSlot::Source { index: i, language } if *i == index => Some(language.clone()),
            _ => None,
        });
        match lang.flatten() {
            Some(l) => l.starts_with("c++"),
            None => self.sources.get(index).is_some_and(|s| is_cpp_source(s)),
        }
    }

    /// Flags for compiling already-preprocessed text (`-x cpp-output`): the
    /// preprocessing flags without the preprocessor-only ones and without `-x`.
    pub fn compile_flags(&self) -> Vec<String> {
        let pf = self.preprocess_flags();
        let mut out = Vec::new();
        let mut i = 0;
        while i < pf.len() {
            let f = &pf[i];
            if PP_WITH_ARG.contains(&f.as_str()) || f == "-x" {
                i += 2;
                continue;
            }
            let joined_pp = ["-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter"]
                .iter()
                .any(|p| f.starts_with(p) && f.len() > p.len());
            if joined_pp
                || f == "-nostdinc"
                || f == "-undef"
                || f.starts_with("-Wp,")
                || f == "-C"
                || f == "-CC"
                || f == "-P"
            {
                i += 1;
                continue;
            }
            out.push(f.clone());
            i += 1;
        }
        out
    }

    /// Whether the compiler optimises: the last `-O` flag is `-O`, `-O1`–`-O3`,
    /// `-Os`, `-Oz` or `-Ofast` (none, `-O0` and `-Og` do not count).
    pub fn optimizes(&self) -> bool {
        let last = self.flags.iter().rev().find(|f| f.starts_with("-O"));
        last.is_some_and(|f| matches!(f.as_str(), "-O" | "-O1" | "-O2" | "-O3" | "-Os" | "-Oz" | "-Ofast"))
    }

    /// Flags that select the target or ABI, which the runtime object must share:
    /// `-m…`, `--target`/`-target`, `--sysroot`, `-static`.
    pub fn target_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.flags.len() {
            let f = &self.flags[i];
            if f == "-target" || f == "--sysroot" || f == "-isysroot" {
                out.push(f.clone());
                if let Some(v) = self.flags.get(i + 1) {
                    out.push(v.clone());
                }
                i += 2;
                continue;
            }
            if (f.starts_with("-m") && !f.starts_with("-mllvm"))
                || f.starts_with("--target=")
                || f.starts_with("--sysroot=")
                || f == "-static"
            {
                out.push(f.clone());
            }
            i += 1;
        }
        out
    }

    /// Whether any dependency file is produced (`-MD`/`-MMD`).
    pub fn writes_dependencies(&self) -> bool {
        self.dep_flags.iter().any(|f| f == "-MD" || f == "-MMD")
    }
}

/// One entry of a `compile_commands.json` file.
#[derive(Clone, Debug, Deserialize)]
pub struct CompileCommand {
    pub directory: String,
    pub file: String,
    #[serde(default)]
    pub arguments: Option<Vec<String>>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub output: Option<String>,
}

impl CompileCommand {
    /// The argument vector (compiler first), splitting `command` the way a POSIX
    /// shell would for the simple quoting compilation databases use.
    pub fn argv(&self) -> Vec<String> {
        if let Some(a) = &self.arguments {
            return a.clone();
        }
        split_command(self.command.as_deref().unwrap_or(""))
    }

    /// Absolute path of the source file.
    pub fn source_path(&self) -> std::path::PathBuf {
        Path::new(&self.directory).join(&self.file)
    }
}

/// Splits a shell-like command line: whitespace separates words; single quotes,
/// double quotes and backslashes quote.
pub fn split_command(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            '\'' => {
                has = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                has = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(&n) = chars.peek()
                                && matches!(n, '"' | '\\' | '$' | '`')
                            {
                                cur.push(n);
                                chars.next();
                                continue;
                            }
                            cur.push('\\');
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                has = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            _ => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        split_command(s)
    }

    #[test]
    fn link_order_keeps_libraries_after_the_inputs() {
        let a = parse_args(&v(
            "-O2 -MD -MF d.d -o prog main.c -x c other.src -x none util.o -L. -lfoo -lm -Wl,--as-needed",
        ));
        let want = vec![
            LinkSlot::Arg("-O2".into()),
            LinkSlot::Source { index: 0, language: None },
            LinkSlot::Arg("-x".into()),
            LinkSlot::Arg("c".into()),
            LinkSlot::Source { index: 1, language: Some("c".into()) },
            LinkSlot::Arg("-x".into()),
            LinkSlot::Arg("none".into()),
            LinkSlot::Arg("util.o".into()),
            LinkSlot::Arg("-L.".into()),
            LinkSlot::Arg("-lfoo".into()),
            LinkSlot::Arg("-lm".into()),
            LinkSlot::Arg("-Wl,--as-needed".into()),
        ];
        assert_eq!(a.link_order, want);
        assert_eq!(a.sources, vec!["main.c", "other.src"]);
    }

    #[test]
    fn compile_step() {
        let a = parse_args(&v("-O2 -g -Iinc -DX=1 -MMD -MF a.d -c src/a.c -o a.o"));
        assert_eq!(a.mode, Mode::Compile);
        assert_eq!(a.sources, vec!["src/a.c"]);
        assert_eq!(a.output.as_deref(), Some("a.o"));
        assert_eq!(a.flags, v("-O2 -g -Iinc -DX=1"));
        assert_eq!(a.identity_flags(), v("-O2 -g -DX=1"));
    }

    #[test]
    fn the_last_optimisation_flag_decides() {
        let opt = |s: &str| parse_args(&v(s)).optimizes();
        assert!(opt("-O2 -c a.c") && opt("-O -c a.c") && opt("-Os -c a.c") && opt("-O0 -O3 -c a.c"));
        assert!(!opt("-c a.c") && !opt("-O0 -c a.c") && !opt("-Og -c a.c") && !opt("-O2 -O0 -c a.c"));
        assert!(!opt("-Wl,-O1 -o p a.c"), "a linker flag is not the compiler's");
    }

    #[test]
    fn one_step_build_and_link() {
        let a = parse_args(&v("-O2 -o prog a.c b.c util.o -lm -Wl,--as-needed"));
        assert_eq!(a.mode, Mode::Link);
        assert_eq!(a.sources, vec!["a.c", "b.c"]);
        assert_eq!(a.other_inputs, vec!["util.o"]);
        assert_eq!(a.preprocess_flags(), v("-O2"));
    }

    #[test]
    fn dependency_only_and_preprocess() {
        assert_eq!(parse_args(&v("-MM a.c")).mode, Mode::Depend);
        assert_eq!(parse_args(&v("-E a.c")).mode, Mode::Preprocess);
        assert_eq!(parse_args(&v("-c -MMD a.c")).mode, Mode::Compile);
        let asm = parse_args(&v("-c start.S"));
        assert!(asm.sources.is_empty());
        assert_eq!(asm.other_inputs, vec!["start.S"]);
    }

    #[test]
    fn forced_language() {
        let a = parse_args(&v("-x c -c weird.inc"));
        assert_eq!(a.sources, vec!["weird.inc"]);
        let b = parse_args(&v("-x c++ -c a.c"));
        assert_eq!(b.sources, vec!["a.c"]);
        assert!(b.source_is_cpp(0) && !a.source_is_cpp(0));
        let c = parse_args(&v("-c a.cc b.c"));
        assert!(c.source_is_cpp(0) && !c.source_is_cpp(1));
        let o = parse_args(&v("-x objective-c -c a.m"));
        assert!(o.sources.is_empty());
    }

    #[test]
    fn flags_for_compiling_preprocessed_text() {
        let a = parse_args(&v("-O2 -Iinc -I inc2 -DX=1 -D Y -include cfg.h -std=c99 -Wall -MMD -MF a.d -c a.c -o a.o"));
        assert_eq!(a.compile_flags(), v("-O2 -std=c99 -Wall"));
        assert_eq!(a.dep_flags, v("-MMD -MF a.d"));
        assert!(a.writes_dependencies());
        let l = parse_args(&v("-m32 -static --sysroot=/x -march=native -O2 -o p a.o"));
        assert_eq!(l.target_flags(), v("-m32 -static --sysroot=/x -march=native"));
        assert!(!parse_args(&v("-r -o all.o a.o b.o")).dep_flags.iter().any(|_| true));
        assert!(parse_args(&v("-r -o all.o a.o b.o")).relocatable);
    }

    #[test]
    fn only_links_that_surely_make_a_program_count_as_programs() {
        for cmd in ["-o prog a.c b.o -lm", "-O2 -static -o prog a.o", "-pie -Wl,--as-needed -o prog a.o"] {
            assert!(parse_args(&v(cmd)).links_program(), "{cmd}");
        }
        for cmd in [
            "-shared -fPIC -o lib.so a.o",
            "-Wl,-shared -o lib.so a.o",
            "-Wl,--shared -o lib.so a.o",
            "-Xlinker -Bshareable -o lib.so a.o",
            "-r -o all.o a.o b.o",
            "-Wl,-r -o all.o a.o",
            "-c a.c",
        ] {
            assert!(!parse_args(&v(cmd)).links_program(), "{cmd}");
        }
    }

    #[test]
    fn shell_splitting() {
        assert_eq!(
            split_command(r#"cc -DMSG="\"hi there\"" -I'a b' x\ y.c"#),
            vec!["cc", "-DMSG=\"hi there\"", "-Ia b", "x y.c"]
        );
    }
}
