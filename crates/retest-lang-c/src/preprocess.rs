//! Running the user's compiler as the preprocessor, and mapping its output back to
//! original files and lines.
//!
//! We run `cc -E` with the translation unit's own flags and keep the line markers
//! (`# 12 "foo.h" 1 3`). Each marker becomes a line-map entry and is replaced by
//! blanks (its newline kept), so the text handed to the parser has the same line
//! numbering as the compiler's output and every node maps back to its original
//! file and line — including code that comes from macro expansions (the line of
//! the invocation) and from `#include`d headers. Other directives left in the
//! output (`#pragma`, `#ident`) are blanked the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

pub use retest_graph::SourceFile;

/// One run of consecutive output lines that come from consecutive lines of one file.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
struct Run {
    /// First output line (0-based) of the run.
    out_line: u32,
    file: u32,
    /// Original line (1-based) of that first output line.
    line: u32,
}

/// Maps 0-based lines of the preprocessed text to (file index, 1-based original line).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct LineMap {
    runs: Vec<Run>,
}

impl LineMap {
    /// The original (file, line) of output line `out_line`, if any marker precedes it.
    pub fn lookup(&self, out_line: u32) -> Option<(u32, u32)> {
        let i = self.runs.partition_point(|r| r.out_line <= out_line);
        let r = self.runs.get(i.checked_sub(1)?)?;
        Some((r.file, r.line + (out_line - r.out_line)))
    }
}

/// The output of the preprocessor, ready to parse.
#[derive(Clone, Debug)]
pub struct Preprocessed {
    /// The compiler's output, unchanged (markers included): what gets instrumented.
    pub raw: String,
    /// `raw` with every directive line blanked: what gets parsed. Same length and
    /// byte offsets as `raw`.
    pub text: String,
    pub files: Vec<SourceFile>,
    pub map: LineMap,
    /// GNU attributes blanked in `text` because the grammar has no place for them
    /// (after a variable's declarator: `int x __attribute__((unused)) = 1;`):
    /// byte offset and normalised text, so declarations can still show them.
    pub hidden_attributes: Vec<(usize, String)>,
}

impl Preprocessed {
    /// The span, in original files and lines, of the parsed text between two
    /// points (its end line only when it ends in the same file, at or after
    /// its start).
    pub fn span_at(&self, start: tree_sitter::Point, end: tree_sitter::Point) -> Option<retest_graph::Span> {
        let (file, line) = self.map.lookup(start.row as u32)?;
        let end_line = match self.map.lookup(end.row as u32) {
            Some((f, l)) if f == file && l >= line => l,
            _ => line,
        };
        Some(retest_graph::Span { file, line, col: start.column as u32 + 1, end_line })
    }

    /// The source file a row of the parsed text comes from.
    pub fn file_at(&self, row: usize) -> Option<&SourceFile> {
        let (f, _) = self.map.lookup(row as u32)?;
        self.files.get(f as usize)
    }

    /// Builds the line map from preprocessor output that contains line markers.
    pub fn from_output(raw: String) -> Preprocessed {
        let mut text = String::with_capacity(raw.len());
        let mut files: Vec<SourceFile> = Vec::new();
        let mut runs: Vec<Run> = Vec::new();
        // a line inside a block comment is comment text even when it starts with
        // `#` (`/* skip until #else,` then `   #if/#endif */`, kept by `-C`)
        let mut in_comment = false;
        for (i, line) in raw.split_inclusive('\n').enumerate() {
            let trimmed = line.trim_start();
            let directive = !in_comment && trimmed.starts_with('#');
            in_comment = if directive { false } else { ends_in_comment(line, in_comment) };
            if directive {
                if let Some((num, path, flags)) = parse_marker(trimmed) {
                    // A file is a system header if the marker that introduces it
                    // says so. Later markers for the same file may carry flag 3
                    // too — GCC marks lines produced by a macro from a system
                    // header that way (`# 134 "main.c" 3 4` after `setjmp(env)`) —
                    // which does not make the file itself a system header.
                    let file = match files.iter().position(|f| f.path == path) {
                        Some(f) => f,
                        None => {
                            let system = flags.contains(&3) || path.starts_with('<');
                            files.push(SourceFile { path, system });
                            files.len() - 1
                        }
                    };
                    runs.push(Run { out_line: i as u32 + 1, file: file as u32, line: num });
                } else if let Some(r) = runs.last().copied() {
                    // A directive that is itself a source line (#pragma): the following
                    // line continues the run; nothing to record.
                    let _ = r;
                }
                // blank the directive, keep the newline and byte length
                for c in line.chars() {
                    if c == '\n' || c == '\r' {
                        text.push(c);
                    } else {
                        for _ in 0..c.len_utf8() {
                            text.push(' ');
                        }
                    }
                }
            } else {
                text.push_str(line);
            }
        }
        let hidden_attributes = blank_declarator_attributes(&mut text);
        rewrite_typeof_expressions(&mut text);
        respell_gnu_extensions(&mut text);
        Preprocessed { raw, text, files, map: LineMap { runs }, hidden_attributes }
    }

    /// The hidden attributes inside a byte range, space-separated (empty if none).
    pub fn attributes_within(&self, range: std::ops::Range<usize>) -> String {
        let from = self.hidden_attributes.partition_point(|(at, _)| *at < range.start);
        self.hidden_attributes[from..]
            .iter()
            .take_while(|(at, _)| *at < range.end)
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Original (file, line) of byte `offset` of the text.
    pub fn location(&self, out_line: u32) -> Option<(u32, u32)> {
        self.map.lookup(out_line)
    }
}

/// Blanks every `__attribute__((…))` that follows a declarator — after an
/// identifier or `]`, before `=`, `,`, `;` or `:` — or that comes between a
/// comma and the next declarator of the same declaration (`int a,
/// __attribute__((deprecated)) b = 1;`), where tree-sitter-c's grammar cannot
/// parse it (it would turn the declaration, and what follows, into an ERROR). Attributes after a function declarator (after `)`), in declaration
/// specifiers and on statements parse and stay. Returns each blanked attribute's
/// offset and token text.
fn blank_declarator_attributes(text: &mut String) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let ident = is_ident_byte;
    let skip = |i: usize| skip_comment_or_literal(b, i);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut prev: u8 = b';';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if let Some(end) = skip(i) {
            if b[i] != b'/' {
                prev = b'"';
            }
            i = end;
            continue;
        }
        if !ident(c) {
            prev = c;
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && ident(b[i]) {
            i += 1;
        }
        let word = &b[start..i];
        if (word == b"__attribute__" || word == b"__attribute")
            && (ident(prev) || prev == b']' || prev == b',' || prev == b'*')
        {
            // the balanced parentheses that follow
            let mut j = i;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b.get(j) == Some(&b'(') {
                let closed = closing_paren(b, j).map(|k| k + 1);
                // what follows this attribute and any others right after it
                let after = closed.map(|end| past_attributes(b, end));
                // after a declarator; or, after a comma, before the next declarator of
                // the same declaration (`int a, __attribute__((unused)) b = 1;`); or
                // after a pointer's `*`, before the name (`void * __attribute__((x)) f(void)`)
                let here = if prev == b',' {
                    closed.filter(|_| after.is_some_and(|a| starts_declarator(b, a)))
                } else if prev == b'*' {
                    closed.filter(|_| after.is_some_and(|a| ident_end(b, skip_blank(b, a)) > skip_blank(b, a)))
                } else {
                    closed.filter(|_| {
                        after.is_some_and(|a| matches!(b.get(skip_blank(b, a)), Some(b'=' | b',' | b';' | b':')))
                    })
                };
                if let Some(end) = here {
                    spans.push((start, end));
                    i = end;
                    continue; // `prev` stays the declarator's last character
                }
            }
        }
        prev = *word.last().unwrap_or(&b'_');
    }
    let mut hidden = Vec::with_capacity(spans.len());
    if spans.is_empty() {
        return hidden;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    for (s, e) in spans {
        let words = String::from_utf8_lossy(&bytes[s..e]).split_whitespace().collect::<Vec<_>>().join(" ");
        hidden.push((s, words));
        for c in &mut bytes[s..e] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    }
    // whole characters were replaced by ASCII spaces: still UTF-8
    *text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    hidden
}

/// Whether a block comment is open at the end of `line`, given whether one was
/// open at its start. Literals and `//` comments hide comment delimiters.
fn ends_in_comment(line: &str, mut open: bool) -> bool {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if open {
            match b[i..].windows(2).position(|w| w == b"*/") {
                Some(p) => {
                    open = false;
                    i += p + 2;
                }
                None => return true,
            }
            continue;
        }
        match (b[i], b.get(i + 1)) {
            (b'/', Some(b'*')) => {
                open = true;
                i += 2;
            }
            (b'/', Some(b'/')) => return false,
            (b'"' | b'\'', _) => i = skip_comment_or_literal(b, i).unwrap_or(b.len()),
            _ => i += 1,
        }
    }
    open
}

/// The position after the attributes (`__attribute__((…))`, any number) that
/// start at or after `i`, or `i`.
fn past_attributes(b: &[u8], mut i: usize) -> usize {
    loop {
        let s = skip_blank(b, i);
        let e = ident_end(b, s);
        if !matches!(&b[s..e], b"__attribute__" | b"__attribute") {
            return i;
        }
        let open = skip_blank(b, e);
        match (b.get(open), closing_paren(b, open)) {
            (Some(b'('), Some(close)) => i = close + 1,
            _ => return i,
        }
    }
}

/// Rewrites, in the text that is parsed, GNU spellings tree-sitter-c does not
/// know into ones it does, byte for byte and line for line:
/// - `__signed__` → `signed` (the kernel's and glibc's `typedef __signed__ char`);
/// - `asm __inline volatile (…)` → `asm inline volatile (…)` (the kernel's `asm_inline`),
///   `asm __volatile (…)` → `asm volatile (…)` (musl);
/// - the type arguments of `__builtin_types_compatible_p(T1, T2)` (a constant that
///   `container_of` compares `typeof`s with) become one integer literal that
///   spells a digest of them: the call parses as an expression, and a change of
///   the types still changes the node's text.
fn respell_gnu_extensions(text: &mut String) {
    let mut edits: Vec<(usize, Vec<u8>)> = Vec::new();
    {
        let b = text.as_bytes();
        let mut i = 0;
        let mut after_asm = false;
        while i < b.len() {
            if let Some(end) = skip_comment_or_literal(b, i) {
                i = end;
                after_asm = false;
                continue;
            }
            if !is_ident_byte(b[i]) || b[i].is_ascii_digit() {
                if !b[i].is_ascii_whitespace() {
                    after_asm = false;
                }
                i += 1;
                continue;
            }
            let start = i;
            i = ident_end(b, i).max(i + 1);
            match &b[start..i] {
                b"__signed__" => edits.push((start, b"signed    ".to_vec())),
                b"asm" | b"__asm__" | b"__asm" => {
                    after_asm = true;
                    continue;
                }
                b"__inline" if after_asm => edits.push((start, b"inline  ".to_vec())),
                b"__inline__" if after_asm => edits.push((start, b"inline    ".to_vec())),
                b"__volatile" if after_asm => edits.push((start, b"volatile  ".to_vec())),
                b"volatile" | b"__volatile__" | b"inline" | b"goto" if after_asm => continue,
                b"__builtin_types_compatible_p" => {
                    let open = skip_blank(b, i);
                    if b.get(open) == Some(&b'(')
                        && let Some(close) = closing_paren(b, open)
                        && let Some(new) = digest_literal(&b[open + 1..close])
                    {
                        edits.push((open + 1, new));
                        i = close + 1;
                    }
                }
                _ => {}
            }
            after_asm = false;
        }
    }
    if edits.is_empty() {
        return;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    for (at, new) in edits {
        bytes[at..at + new.len()].copy_from_slice(&new);
    }
    *text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
}

/// A same-length replacement of `arg` that is one hexadecimal literal spelling
/// a digest of its tokens (newlines kept where they were), or `None` when there
/// is no run of at least 6 bytes on one line to hold it.
fn digest_literal(arg: &[u8]) -> Option<Vec<u8>> {
    let words = String::from_utf8_lossy(arg).split_whitespace().collect::<Vec<_>>().join(" ");
    let hex = format!("0x{:016x}", xxhash_rust::xxh3::xxh3_64(words.as_bytes()));
    let mut out: Vec<u8> = arg.iter().map(|&c| if c == b'\n' || c == b'\r' { c } else { b' ' }).collect();
    // the longest run without a line break
    let (mut best, mut run_start) = ((0usize, 0usize), 0usize);
    for k in 0..=out.len() {
        if k == out.len() || out[k] == b'\n' || out[k] == b'\r' {
            if k - run_start > best.1 - best.0 {
                best = (run_start, k);
            }
            run_start = k + 1;
        }
    }
    let room = best.1 - best.0;
    if room < 6 {
        return None;
    }
    let lit = &hex.as_bytes()[..room.min(hex.len())];
    out[best.0..best.0 + lit.len()].copy_from_slice(lit);
    Some(out)
}

/// The end of the comment or literal starting at `i`, if one starts there.
fn skip_comment_or_literal(b: &[u8], i: usize) -> Option<usize> {
    match (b[i], b.get(i + 1)) {
        (b'/', Some(b'*')) => Some(b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2)),
        (b'/', Some(b'/')) => Some(b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p)),
        (q @ (b'"' | b'\''), _) => {
            let mut j = i + 1;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        }
        _ => None,
    }
}

/// The first position at or after `i` that is not white space nor a comment.
fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if let (b'/', Some(b'*' | b'/')) = (b[i], b.get(i + 1)) {
            i = skip_comment_or_literal(b, i).unwrap_or(b.len());
        } else {
            break;
        }
    }
    i
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The end of the identifier starting at `i` (`i` itself if none starts there).
fn ident_end(b: &[u8], i: usize) -> usize {
    if i < b.len() && !b[i].is_ascii_digit() {
        b[i..].iter().position(|&c| !is_ident_byte(c)).map_or(b.len(), |p| i + p)
    } else {
        i
    }
}

/// Whether a declarator name follows `i`: an identifier, then `=`, `,`, `;`, `[` or `:`.
fn starts_declarator(b: &[u8], i: usize) -> bool {
    let s = skip_blank(b, i);
    let e = ident_end(b, s);
    e > s && matches!(b.get(skip_blank(b, e)), Some(b'=' | b',' | b';' | b'[' | b':'))
}

/// The position of the parenthesis closing the one at `open`.
fn closing_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = open;
    while k < b.len() {
        if let Some(end) = skip_comment_or_literal(b, k) {
            k = end;
            continue;
        }
        match b[k] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// Words that start a type name: `typeof(unsigned long)` is a type, not an expression.
const TYPE_WORDS: &[&str] = &[
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "_Bool",
    "_Complex",
    "struct",
    "union",
    "enum",
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "_Atomic",
    "typeof",
    "__typeof__",
    "__typeof",
    "__int128",
    "__int128_t",
    "__uint128_t",
    "_Float128",
    "__float128",
    "__extension__",
    "__attribute__",
    "__const",
    "__volatile__",
    "__signed__",
];

/// Rewrites `typeof (EXPRESSION)` (also `__typeof__`, `__typeof`) so that
/// tree-sitter-c parses it as a type: its grammar only knows `name(TYPE)`, so
/// an expression there — GCC's `<stdatomic.h>` writes
/// `__typeof__ ((void)0, *__atomic_load_ptr) __atomic_load_tmp;` — turns the
/// declaration into a call and a stray statement. The expression is kept,
/// verbatim, as the size of an array in a type built on a placeholder `_`:
/// `typeof(_*[EXPRESSION])` (parenthesised if it has a top-level comma; the
/// `*` keeps `sizeof(typeof(…))` from reading as a call), the keyword
/// shortened when the original has no room for the extra characters.
/// [`crate::syntax::typeof_expression`] recognises the form and shows it as
/// `typeof ( EXPRESSION )`. Same length, same lines; type arguments, arguments
/// with a brace (statement expressions) and arguments spread over lines are
/// left alone.
fn rewrite_typeof_expressions(text: &mut String) {
    let mut edits: Vec<(usize, Vec<u8>)> = Vec::new();
    {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if let Some(end) = skip_comment_or_literal(b, i) {
                i = end;
                continue;
            }
            if !is_ident_byte(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            i = ident_end(b, i).max(i + 1);
            let word = &b[start..i];
            if !matches!(word, b"typeof" | b"__typeof__" | b"__typeof") {
                continue;
            }
            let open = skip_blank(b, i);
            if b.get(open) != Some(&b'(') {
                continue;
            }
            let Some(close) = closing_paren(b, open) else { continue };
            let arg = &b[open + 1..close];
            if let Some(new) = typeof_replacement(word, &b[start..=close], arg) {
                edits.push((start, new));
                i = close + 1;
            }
        }
    }
    if edits.is_empty() {
        return;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    for (at, new) in edits {
        bytes[at..at + new.len()].copy_from_slice(&new);
    }
    // only ASCII replaced ASCII (the argument is copied whole)
    *text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
}

/// The replacement text (same length) of `whole` = `KEYWORD ( arg )`, or `None`
/// if it is left alone.
fn typeof_replacement(keyword: &[u8], whole: &[u8], arg: &[u8]) -> Option<Vec<u8>> {
    let first = skip_blank(arg, 0);
    if first == arg.len() || arg.contains(&b'{') || !whole.is_ascii() {
        return None;
    }
    // newlines only inside the argument, which moves as a block
    let prefix_len = whole.len() - arg.len() - 1;
    if whole[..prefix_len].contains(&b'\n') {
        return None;
    }
    // a type: starts with a type word, or is `name` with only `*` after it
    let w_end = ident_end(arg, first);
    if w_end > first {
        let w = std::str::from_utf8(&arg[first..w_end]).unwrap_or("");
        if TYPE_WORDS.contains(&w) || arg[w_end..].iter().all(|c| c.is_ascii_whitespace() || *c == b'*') {
            return None;
        }
    }
    let comma = {
        let (mut depth, mut k, mut found) = (0i32, 0, false);
        while k < arg.len() {
            if let Some(end) = skip_comment_or_literal(arg, k) {
                k = end;
                continue;
            }
            match arg[k] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b',' if depth == 0 => found = true,
                _ => {}
            }
            k += 1;
        }
        found
    };
    let (open, close): (&[u8], &[u8]) = if comma { (b"(_*[(", b")])") } else { (b"(_*[", b"])") };
    let room = whole.len() - arg.len() - open.len() - close.len();
    let kw: &[u8] = [keyword, b"typeof", b"_T"].into_iter().find(|k| k.len() <= room)?;
    let mut out = vec![b' '; room - kw.len()];
    out.extend_from_slice(kw);
    out.extend_from_slice(open);
    out.extend_from_slice(arg);
    out.extend_from_slice(close);
    debug_assert_eq!(out.len(), whole.len());
    Some(out)
}

fn parse_marker(line: &str) -> Option<(u32, String, Vec<u32>)> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map(str::trim_start).unwrap_or(rest);
    let digits_end = rest.find(|c: char| !c.is_ascii_digit())?;
    if digits_end == 0 {
        return None;
    }
    let num: u32 = rest[..digits_end].parse().ok()?;
    let rest = rest[digits_end..].trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut path = String::new();
    let mut chars = rest.char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, e)) => path.push(e),
                None => return None,
            },
            '"' => {
                end = Some(i);
                break;
            }
            _ => path.push(c),
        }
    }
    let end = end?;
    let flags = rest[end + 1..].split_whitespace().filter_map(|f| f.parse().ok()).collect();
    Some((num, path, flags))
}

/// Errors running the preprocessor.
#[derive(Debug, thiserror::Error)]
pub enum PreprocessError {
    #[error("cannot run the compiler {compiler:?}: {source}")]
    Spawn {
        compiler: String,
        #[source]
        source: std::io::Error,
    },
    #[error("preprocessing {file} failed: {message}")]
    Failed { file: PathBuf, message: String },
}

/// Runs `compiler <flags> -E <file>` in `cwd` and returns its output with the
/// line map. Comments are not kept: with `-C` the compiler puts a comment
/// inside a macro argument into the argument's stringification (`#x`) without
/// escaping its quotes, so `assert`'s and GoogleTest's messages would differ
/// from a plain build's, or not compile (`ASSERT_NO_FATAL_FAILURE(f("a\n"
/// // say "b"\n ...))`). Warnings are off for instrumented units anyway.
pub fn run_preprocessor(
    compiler: &str,
    flags: &[String],
    file: &Path,
    cwd: &Path,
) -> Result<Preprocessed, PreprocessError> {
    let out = Command::new(compiler)
        .args(flags)
        .arg("-E")
        .arg(file)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| PreprocessError::Spawn { compiler: compiler.to_string(), source })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let message = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("the compiler exited with an error and no message")
            .trim()
            .to_string();
        return Err(PreprocessError::Failed { file: file.to_path_buf(), message });
    }
    Ok(Preprocessed::from_output(String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The first error a compiler reports for a source it rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerError {
    /// Where, as the compiler prints it (`file:line:column`), when it says.
    pub at: Option<String>,
    /// What, without the `error:` prefix.
    pub message: String,
}

impl CompilerError {
    /// The first error of GCC's or Clang's diagnostics (`file:line:col: error:
    /// …`, or `fatal error:`), else their first line.
    pub fn of_diagnostics(stderr: &str) -> CompilerError {
        for line in stderr.lines() {
            for tag in [": error: ", ": fatal error: "] {
                if let Some(i) = line.find(tag) {
                    return CompilerError {
                        at: Some(line[..i].to_string()),
                        message: line[i + tag.len()..].trim().to_string(),
                    };
                }
            }
        }
        let first = stderr.lines().map(str::trim).find(|l| !l.is_empty());
        CompilerError { at: None, message: first.unwrap_or("the compiler exited with an error and no message").into() }
    }
}

/// Runs `compiler <flags> -fsyntax-only <file>` in `cwd`: `None` when the
/// compiler accepts the source, else its first error.
pub fn check_syntax(
    compiler: &str,
    flags: &[String],
    file: &Path,
    cwd: &Path,
) -> Result<Option<CompilerError>, PreprocessError> {
    let out = Command::new(compiler)
        .args(flags)
        .arg("-fsyntax-only")
        .arg(file)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| PreprocessError::Spawn { compiler: compiler.to_string(), source })?;
    Ok((!out.status.success()).then(|| CompilerError::of_diagnostics(&String::from_utf8_lossy(&out.stderr))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_of_gcc_and_clang_diagnostics() {
        let gcc = "bad.c: In function 'f':\nbad.c:3:15: error: expected ')' before '{' token\n    3 |     if (x > 0 {\nbad.c:9:1: error: expected declaration\n";
        assert_eq!(
            CompilerError::of_diagnostics(gcc),
            CompilerError { at: Some("bad.c:3:15".into()), message: "expected ')' before '{' token".into() }
        );
        let clang = "bad.c:1:10: fatal error: 'nope.h' file not found\n";
        assert_eq!(
            CompilerError::of_diagnostics(clang),
            CompilerError { at: Some("bad.c:1:10".into()), message: "'nope.h' file not found".into() }
        );
        let other = "\ncc1: some message\n";
        assert_eq!(
            CompilerError::of_diagnostics(other),
            CompilerError { at: None, message: "cc1: some message".into() }
        );
    }

    #[test]
    fn attributes_after_variable_declarators_are_blanked_and_kept_aside() {
        let src = "static const int s1 __attribute__((unused)) = 1;\n\
                   int a[2] __attribute__ ((aligned (8))), b;\n\
                   void die(void) __attribute__((noreturn));\n\
                   const char *q = \"x __attribute__((y)) =\";\n\
                   unsigned __attribute__((mode(DI))) w;\n";
        let p = Preprocessed::from_output(src.to_string());
        assert_eq!(p.text.len(), src.len(), "offsets are kept");
        assert_eq!(
            p.hidden_attributes.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
            ["__attribute__((unused))", "__attribute__ ((aligned (8)))"]
        );
        assert!(p.text.starts_with("static const int s1                         = 1;"));
        // after a function declarator, in a string, in the specifiers: untouched
        assert!(p.text.contains("void die(void) __attribute__((noreturn));"));
        assert!(p.text.contains("\"x __attribute__((y)) =\""));
        assert!(p.text.contains("unsigned __attribute__((mode(DI))) w;"));
        let first_line = 0..src.find('\n').unwrap();
        assert_eq!(p.attributes_within(first_line), "__attribute__((unused))");
    }

    #[test]
    fn typeof_of_an_expression_becomes_a_type_and_types_stay() {
        let src = "__typeof__ ((void)0, *p) a;\ntypeof(*p) b;\n__typeof__(x + 1) c;\ntypeof(int *) d;\n\
                   typeof(T *) e;\n__typeof__(x) f;\ntypeof\n(*p) g;\ntypeof(({ 1; })) h;\n";
        let p = Preprocessed::from_output(src.to_string());
        assert_eq!(p.text.len(), src.len());
        let lines: Vec<&str> = p.text.lines().collect();
        assert_eq!(lines[0], "   _T(_*[((void)0, *p)]) a;");
        assert_eq!(lines[1], "_T(_*[*p]) b;");
        assert_eq!(lines[2], "typeof(_*[x + 1]) c;");
        // types, arguments after a line break and statement expressions are left alone
        assert_eq!(&lines[3..], &src.lines().collect::<Vec<_>>()[3..]);
    }

    #[test]
    fn an_attribute_between_declarators_is_blanked() {
        let src = "static const S a = {1}, __attribute__((deprecated)) b = {2};\nvoid f(int x, __attribute__((unused)) int y);\n";
        let p = Preprocessed::from_output(src.to_string());
        assert_eq!(
            p.hidden_attributes.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
            ["__attribute__((deprecated))"]
        );
        assert!(p.text.contains("{1},                             b = {2};"));
        assert!(p.text.contains("void f(int x, __attribute__((unused)) int y);"), "parameters keep theirs");
    }

    #[test]
    fn gnu_spellings_become_ones_the_grammar_knows_in_place() {
        let raw = "# 1 \"a.c\"\ntypedef __signed__ char s8;\nvoid f(void) { asm __inline volatile(\"nop\"); }\n\
                   int t = __builtin_types_compatible_p(typeof(*p), typeof(void));\n";
        let pre = Preprocessed::from_output(raw.to_string());
        assert_eq!(pre.text.len(), raw.len());
        assert!(pre.text.contains("typedef signed     char s8;"), "{}", pre.text);
        assert!(pre.text.contains("asm inline   volatile(\"nop\")"), "{}", pre.text);
        let other = Preprocessed::from_output(raw.replace("typeof(void)", "typeof(char)"));
        let lit = |t: &str| {
            t.split("__builtin_types_compatible_p(").nth(1).unwrap().split(')').next().unwrap().trim().to_string()
        };
        assert!(lit(&pre.text).starts_with("0x"), "{}", pre.text);
        assert_ne!(lit(&pre.text), lit(&other.text), "a change of the types changes the literal");
        let tu = crate::analyze(&pre, &|_| true);
        assert!(tu.unit.problems.is_empty(), "{:?}", tu.unit.problems);
    }

    #[test]
    fn attributes_after_a_pointer_star_or_another_attribute_are_blanked() {
        let raw = "# 1 \"a.c\"\nstatic inline void * __attribute__((__warn_unused_result__)) ERR_PTR(long e) { return (void *) e; }\n\
                   struct kp { int d; };\nstruct kp k __attribute__((used)) __attribute__((aligned(8))) = { 1 };\nint g(void) { return 0; }\n";
        let pre = Preprocessed::from_output(raw.to_string());
        let tu = crate::analyze(&pre, &|_| true);
        let names: Vec<&str> = tu.unit.procedures.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["ERR_PTR", "g"]);
        assert!(tu.unit.problems.is_empty(), "{:?}", tu.unit.problems);
        // the attributes stay in the declarations' text
        assert!(tu.unit.decls.iter().any(|d| d.names == ["k"] && d.text.contains("aligned")), "{:?}", tu.unit.decls);
    }

    #[test]
    fn a_comment_line_that_starts_with_a_hash_is_not_a_directive() {
        let raw =
            "# 1 \"a.c\"\n/* skip until #else, or\n   #if/#endif */\nint f(void) { return 1; }\n# 9 \"a.c\"\nint g;\n";
        let pre = Preprocessed::from_output(raw.to_string());
        let lines: Vec<&str> = pre.text.lines().collect();
        assert_eq!(lines[2], "   #if/#endif */", "comment text is kept");
        assert!(lines[4].trim().is_empty(), "the marker is blanked");
        assert_eq!(pre.location(5), Some((0, 9)));
    }

    #[test]
    fn markers_map_lines_back() {
        let raw = "# 1 \"a.c\"\n# 1 \"<built-in>\"\n# 1 \"a.c\"\n# 1 \"inc.h\" 1\nint g;\n\n# 3 \"a.c\" 2\nint main(void)\n{ return g; }\n";
        let p = Preprocessed::from_output(raw.to_string());
        assert_eq!(p.text.len(), raw.len());
        assert!(p.text.starts_with("         \n"));
        // line 4 (0-based) "int g;" comes from inc.h:1
        let (f, l) = p.location(4).unwrap();
        assert_eq!((p.files[f as usize].path.as_str(), l), ("inc.h", 1));
        let (f, l) = p.location(7).unwrap();
        assert_eq!((p.files[f as usize].path.as_str(), l), ("a.c", 3));
        let (f, l) = p.location(8).unwrap();
        assert_eq!((p.files[f as usize].path.as_str(), l), ("a.c", 4));
        assert!(p.files.iter().any(|f| f.path == "<built-in>" && f.system));
    }

    #[test]
    fn system_macro_expansion_does_not_make_the_main_file_a_system_header() {
        let raw = "# 1 \"m.c\"\n# 1 \"/usr/include/setjmp.h\" 1 3 4\nint setjmp();\n# 2 \"m.c\" 2\nint f(void) {\n# 3 \"m.c\" 3 4\n setjmp(0)\n# 3 \"m.c\"\n ; }\n";
        let p = Preprocessed::from_output(raw.to_string());
        let main = p.files.iter().find(|f| f.path == "m.c").unwrap();
        assert!(!main.system);
        assert!(p.files.iter().find(|f| f.path.ends_with("setjmp.h")).unwrap().system);
    }

    #[test]
    fn system_flag_and_escaped_paths() {
        let (n, path, flags) = parse_marker("# 27 \"/usr/include/stdio.h\" 1 3 4").unwrap();
        assert_eq!((n, path.as_str(), flags), (27, "/usr/include/stdio.h", vec![1, 3, 4]));
        let (_, path, _) = parse_marker("# 1 \"dir\\\\with \\\"q\\\".c\"").unwrap();
        assert_eq!(path, "dir\\with \"q\".c");
        assert!(parse_marker("#pragma once").is_none());
    }

    #[test]
    fn real_compiler_output_maps_macro_and_header_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("h.h"),
            "#define TWICE(x) \\\n  ((x) * 2)\nstatic int h(int v) {\n  return v;\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("m.c"),
            "#include \"h.h\"\n\nint f(int a) {\n  int b = TWICE(\n     a);\n  return h(b);\n}\n",
        )
        .unwrap();
        let p = run_preprocessor("cc", &[], Path::new("m.c"), dir.path()).unwrap();
        let find = |needle: &str| {
            let idx = p.text.lines().position(|l| l.contains(needle)).unwrap();
            let (f, l) = p.location(idx as u32).unwrap();
            (p.files[f as usize].path.clone(), l)
        };
        assert_eq!(find("return v"), ("h.h".to_string(), 4));
        assert_eq!(find("int b ="), ("m.c".to_string(), 4));
        assert_eq!(find("return h(b)"), ("m.c".to_string(), 6));
    }
}
