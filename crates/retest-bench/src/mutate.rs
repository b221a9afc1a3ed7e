//! Deterministic first-order mutants of one C file.
//!
//! A small C lexer (comments, string and character literals and directive lines
//! are recognised, nothing is parsed) finds the mutation sites; each mutant is one
//! textual replacement. The operators are the classic ones of the mutation
//! literature (relational, arithmetic and logical connector replacement,
//! integer constant ±1, condition negation, deletion of an expression
//! statement, return-value change). Nothing here checks that a mutant
//! compiles: the study compiles each one and drops those that do not.

use serde::{Deserialize, Serialize};

/// A mutation operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Relational operator replacement: `<` `<=` `>` `>=` `==` `!=`.
    Ror,
    /// Arithmetic operator replacement: binary `+` `-` `*` `/` `%`.
    Aor,
    /// Logical connector replacement: `&&` ↔ `||`.
    Lcr,
    /// Integer constant ±1 (also in `#define` lines).
    Icr,
    /// Condition negation: `if (c)` / `while (c)` → `(!(c))`.
    Cnr,
    /// Statement deletion of an expression statement (replaced by `;`).
    Sdl,
    /// Return-value change: `return e;` → `return !(e);` or `return (e) + 1;`.
    Rvc,
}

impl Op {
    pub const ALL: [Op; 7] = [Op::Ror, Op::Aor, Op::Lcr, Op::Icr, Op::Cnr, Op::Sdl, Op::Rvc];

    pub fn name(self) -> &'static str {
        match self {
            Op::Ror => "ROR",
            Op::Aor => "AOR",
            Op::Lcr => "LCR",
            Op::Icr => "ICR",
            Op::Cnr => "CNR",
            Op::Sdl => "SDL",
            Op::Rvc => "RVC",
        }
    }
}

/// One first-order mutant: the bytes `start..end` of the original replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// Position in the generation order (stable for a given source text).
    pub id: usize,
    pub op: Op,
    pub start: usize,
    pub end: usize,
    pub replacement: String,
    /// 1-based line of `start`.
    pub line: usize,
}

impl Mutant {
    /// The mutated source.
    pub fn apply(&self, src: &str) -> String {
        let mut s = String::with_capacity(src.len() + self.replacement.len());
        s.push_str(&src[..self.start]);
        s.push_str(&self.replacement);
        s.push_str(&src[self.end..]);
        s
    }

    /// A unified-diff-like rendering of the changed lines.
    pub fn diff(&self, src: &str, file: &str) -> String {
        let line_start = src[..self.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[self.end..].find('\n').map_or(src.len(), |i| self.end + i);
        let old = &src[line_start..line_end];
        let new = format!("{}{}{}", &src[line_start..self.start], self.replacement, &src[self.end..line_end]);
        let n_old = old.lines().count().max(1);
        let n_new = new.lines().count().max(1);
        let mut d = format!("--- {file}\n+++ {file} (mutant {} {})\n", self.id, self.op.name());
        d.push_str(&format!("@@ -{},{} +{},{} @@\n", self.line, n_old, self.line, n_new));
        for l in old.lines() {
            d.push_str(&format!("-{l}\n"));
        }
        for l in new.lines() {
            d.push_str(&format!("+{l}\n"));
        }
        d
    }

    /// A one-line description: `ROR lexer.c:120 `<` → `<=``.
    pub fn describe(&self, src: &str) -> String {
        let old: String = src[self.start..self.end].split_whitespace().collect::<Vec<_>>().join(" ");
        let new: String = self.replacement.split_whitespace().collect::<Vec<_>>().join(" ");
        let clip = |s: String| {
            if s.chars().count() > 60 { format!("{}…", s.chars().take(57).collect::<String>()) } else { s }
        };
        format!("{} line {}: `{}` → `{}`", self.op.name(), self.line, clip(old), clip(new))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

#[derive(Clone, Copy, Debug)]
struct Tok {
    kind: Kind,
    start: usize,
    end: usize,
    /// Inside a preprocessor directive line.
    directive: bool,
    /// The directive is `#define`.
    define: bool,
}

const PUNCT3: [&str; 3] = ["<<=", ">>=", "..."];
const PUNCT2: [&str; 19] =
    ["->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|="];

/// Tokens of `src`; comments and whitespace dropped.
fn lex(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut at_line_start = true;
    let mut directive = false;
    let mut define = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            // a directive continues over a backslash-newline
            let cont = i > 0 && b[i - 1] == b'\\';
            if !cont {
                directive = false;
                define = false;
            }
            at_line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            // a comment counts as whitespace, but keep the line structure
            if src[i..end].contains('\n') && !directive {
                at_line_start = false;
            }
            i = end;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = src[i..].find('\n').map_or(b.len(), |p| i + p);
            continue;
        }
        if c == b'#' && at_line_start {
            directive = true;
            let rest = src[i + 1..].trim_start_matches([' ', '\t']);
            define = rest.starts_with("define");
            at_line_start = false;
            toks.push(Tok { kind: Kind::Punct, start: i, end: i + 1, directive, define });
            i += 1;
            continue;
        }
        at_line_start = false;
        let start = i;
        let kind;
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            kind = Kind::Literal;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let hex = c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign = (d == b'+' || d == b'-')
                    && ((!hex && matches!(b[i - 1], b'e' | b'E')) || (hex && matches!(b[i - 1], b'p' | b'P')));
                if !(d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign) {
                    break;
                }
                i += 1;
            }
            kind = Kind::Number;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            kind = Kind::Ident;
        } else {
            let rest = &src[i..];
            let n = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                // one (possibly multi-byte) character
                rest.chars().next().map_or(1, char::len_utf8)
            };
            i += n;
            kind = Kind::Punct;
        }
        toks.push(Tok { kind, start, end: i, directive, define });
    }
    toks
}

const KEYWORDS: [&str; 44] = [
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "bool",
    "size_t", "FILE", "ssize_t", "uint8_t", "uint32_t", "uint64_t", "int64_t", "int32_t",
];

/// The value of an integer literal and its suffix, if `text` is one.
fn int_literal(text: &str) -> Option<(u64, u32, &str)> {
    let body_end = text.trim_end_matches(['u', 'U', 'l', 'L']).len();
    let (body, suffix) = text.split_at(body_end);
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| (v, 16, suffix));
    }
    if body.len() > 1 && body.starts_with('0') {
        return u64::from_str_radix(&body[1..], 8).ok().map(|v| (v, 8, suffix));
    }
    body.parse::<u64>().ok().map(|v| (v, 10, suffix))
}

fn format_int(v: u64, radix: u32, suffix: &str) -> String {
    match radix {
        16 => format!("0x{v:X}{suffix}"),
        8 => format!("0{v:o}{suffix}"),
        _ => format!("{v}{suffix}"),
    }
}

/// Every first-order mutant of `src`, in source order.
pub fn generate(src: &str) -> Vec<Mutant> {
    let toks = lex(src);
    let text = |t: &Tok| &src[t.start..t.end];
    let is_kw = |t: &Tok| t.kind == Kind::Ident && KEYWORDS.contains(&text(t));
    let line_of = |pos: usize| src[..pos].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut out: Vec<Mutant> = Vec::new();
    let mut push = |op: Op, start: usize, end: usize, replacement: String| {
        out.push(Mutant { id: 0, op, start, end, replacement, line: line_of(start) });
    };

    // typedef names (the last identifier of each `typedef …;`) count as type keywords
    let mut typedefs: Vec<&str> = Vec::new();
    let mut in_typedef = false;
    let mut last_ident = None;
    let mut depth = 0i32;
    for t in toks.iter().filter(|t| !t.directive) {
        match text(t) {
            "typedef" => in_typedef = true,
            "{" => depth += 1,
            "}" => depth -= 1,
            ";" if in_typedef && depth == 0 => {
                if let Some(n) = last_ident {
                    typedefs.push(n);
                }
                in_typedef = false;
            }
            _ if in_typedef && t.kind == Kind::Ident => last_ident = Some(text(t)),
            _ => {}
        }
    }
    let is_type = |t: &Tok| is_kw(t) || (t.kind == Kind::Ident && typedefs.contains(&text(t)));

    // matching parentheses (code tokens only)
    let code: Vec<Tok> = toks.iter().copied().filter(|t| !t.directive).collect();
    let mut close_of = vec![usize::MAX; code.len()];
    let mut stack = Vec::new();
    for (i, t) in code.iter().enumerate() {
        match text(t) {
            "(" => stack.push(i),
            ")" => {
                if let Some(o) = stack.pop() {
                    close_of[o] = i;
                }
            }
            _ => {}
        }
    }

    // #define constants
    for t in toks.iter().filter(|t| t.directive && t.define && t.kind == Kind::Number) {
        icr(text(t), t, &mut push);
    }

    // function bodies whose `{` follows old-style parameter declarations
    let knr_bodies: Vec<usize> = functions(src).into_iter().map(|f| f.body.start).collect();
    // brace kinds: true = a block of code (function body or nested in one)
    let mut braces: Vec<bool> = Vec::new();
    let mut parens = 0i32;
    for i in 0..code.len() {
        let t = &code[i];
        let s = text(t);
        let prev = i.checked_sub(1).map(|p| &code[p]);
        let in_code = braces.last().copied().unwrap_or(false);
        match s {
            "{" => {
                let body = in_code || prev.is_some_and(|p| text(p) == ")") || knr_bodies.contains(&t.start);
                braces.push(body);
            }
            "}" => {
                braces.pop();
            }
            "(" => parens += 1,
            ")" => parens -= 1,
            _ => {}
        }
        let operand_before = prev.is_some_and(|p| {
            (matches!(p.kind, Kind::Number | Kind::Literal) || (p.kind == Kind::Ident && !is_type(p)))
                || matches!(text(p), ")" | "]")
        });
        match s {
            "<" | "<=" | ">" | ">=" | "==" | "!=" => {
                for r in ["<", "<=", ">", ">=", "==", "!="] {
                    if r != s {
                        push(Op::Ror, t.start, t.end, r.into());
                    }
                }
            }
            "+" | "-" | "*" | "/" | "%" if operand_before => {
                for r in ["+", "-", "*", "/", "%"] {
                    if r != s {
                        push(Op::Aor, t.start, t.end, r.into());
                    }
                }
            }
            "&&" => push(Op::Lcr, t.start, t.end, "||".into()),
            "||" => push(Op::Lcr, t.start, t.end, "&&".into()),
            _ => {}
        }
        if t.kind == Kind::Number {
            icr(s, t, &mut push);
        }
        if !in_code {
            continue;
        }
        // condition negation
        if matches!(s, "if" | "while") && code.get(i + 1).is_some_and(|n| text(n) == "(") {
            let c = close_of[i + 1];
            if c != usize::MAX && c > i + 2 {
                let (a, z) = (code[i + 2].start, code[c - 1].end);
                push(Op::Cnr, a, z, format!("!({})", &src[a..z]));
            }
        }
        // return-value change
        if s == "return"
            && let Some(semi) = statement_end(&code, src, i + 1)
            && semi > i + 1
        {
            let (a, z) = (code[i + 1].start, code[semi - 1].end);
            let e = &src[a..z];
            push(Op::Rvc, a, z, format!("!({e})"));
            push(Op::Rvc, a, z, format!("({e}) + 1"));
        }
        // statement deletion
        if parens == 0
            && t.kind == Kind::Ident
            && !is_type(t)
            && prev.is_some_and(|p| matches!(text(p), ";" | "{" | "}"))
            && !matches!(code.get(i + 1).map(&text), Some(":"))
            && !code.get(i + 1).is_some_and(|n| n.kind == Kind::Ident)
            && !(code.get(i + 1).is_some_and(|n| text(n) == "*")
                && code.get(i + 2).is_some_and(|n| n.kind == Kind::Ident)
                && code.get(i + 3).is_some_and(|n| matches!(text(n), "=" | ";" | "," | "[")))
            && let Some(semi) = statement_end(&code, src, i)
        {
            push(Op::Sdl, t.start, code[semi].end, ";".into());
        }
    }
    for (k, m) in out.iter_mut().enumerate() {
        m.id = k;
    }
    out
}

/// A function definition of a source: its name, its body (`{` to `}`
/// inclusive, byte offsets) and the names it calls, in order of first call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub body: std::ops::Range<usize>,
    pub calls: Vec<String>,
}

/// The function definitions of `src`, in source order: prototype-style
/// (`int f(int a) {…}`) and old-style ones (`f(a, b) int a, b; {…}`,
/// `List *f(a) List *a; {…}`). Directive lines are skipped; nothing is
/// expanded, so a definition made by a macro is not found.
pub fn functions(src: &str) -> Vec<Function> {
    let code: Vec<Tok> = lex(src).into_iter().filter(|t| !t.directive).collect();
    let text = |i: usize| &src[code[i].start..code[i].end];
    let keyword = |i: usize| code[i].kind == Kind::Ident && (KEYWORDS.contains(&text(i)) || text(i).starts_with("__"));
    // matching brackets
    let mut close = vec![usize::MAX; code.len()];
    let (mut parens, mut braces) = (Vec::new(), Vec::new());
    for i in 0..code.len() {
        match text(i) {
            "(" => parens.push(i),
            ")" => {
                if let Some(o) = parens.pop() {
                    close[o] = i;
                }
            }
            "{" => braces.push(i),
            "}" => {
                if let Some(o) = braces.pop() {
                    close[o] = i;
                }
            }
            _ => {}
        }
    }
    let skip = |i: usize| if close[i] == usize::MAX { code.len() } else { close[i] + 1 };
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        match text(i) {
            // a brace at file scope that no declarator's `)` leads to: a struct,
            // union or enum body, or an initialiser
            "{" => i = skip(i),
            "(" if i > 0 && code[i - 1].kind == Kind::Ident && !keyword(i - 1) && close[i] != usize::MAX => {
                let c = close[i];
                // an identifier list `(a, b)` (or one identifier): an old-style declarator
                let list: Vec<usize> = (i + 1..c).collect();
                let idents_only = !list.is_empty()
                    && list.iter().enumerate().all(|(k, &j)| {
                        if k % 2 == 0 { code[j].kind == Kind::Ident && !keyword(j) } else { text(j) == "," }
                    })
                    && list.len() % 2 == 1;
                let mut j = c + 1;
                // attributes between the declarator and the body
                while j < code.len() && text(j).starts_with("__attribute") {
                    j = if j + 1 < code.len() && text(j + 1) == "(" { skip(j + 1) } else { j + 1 };
                }
                let body = match code.get(j).map(|_| text(j)) {
                    Some("{") => Some(j),
                    Some(";" | "," | "=" | "[" | ")" | "(") | None => None,
                    // old-style parameter declarations up to the body
                    Some(_) if idents_only => {
                        let mut k = j;
                        while k < code.len() && text(k) != "{" && text(k) != "}" {
                            k = if text(k) == "(" { skip(k) } else { k + 1 };
                        }
                        (k < code.len() && text(k) == "{" && text(k - 1) == ";").then_some(k)
                    }
                    Some(_) => None,
                };
                match body {
                    Some(b) if close[b] != usize::MAX => {
                        let end = close[b];
                        let mut calls: Vec<String> = Vec::new();
                        for k in b + 1..end {
                            if text(k) == "("
                                && code[k - 1].kind == Kind::Ident
                                && !keyword(k - 1)
                                && !calls.iter().any(|c| c == text(k - 1))
                            {
                                calls.push(text(k - 1).to_string());
                            }
                        }
                        out.push(Function { name: text(i - 1).to_string(), body: code[b].start..code[end].end, calls });
                        i = end + 1;
                    }
                    _ => i = c + 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the statement at byte `pos` comes right after a statement that calls
/// one of `callees` (within one block: the token before `pos`'s statement is the
/// `;` that ends the call).
pub fn follows_call(src: &str, pos: usize, callees: &[&str]) -> bool {
    let code: Vec<Tok> = lex(src).into_iter().filter(|t| !t.directive).collect();
    let text = |i: usize| &src[code[i].start..code[i].end];
    let Some(at) = code.iter().position(|t| t.end > pos) else { return false };
    // the start of the statement holding `pos`, then the statement before it
    let bound = |from: usize| (0..from).rev().find(|&k| matches!(text(k), ";" | "{" | "}"));
    let Some(b1) = bound(at) else { return false };
    if text(b1) != ";" {
        return false;
    }
    let b2 = bound(b1).unwrap_or(0);
    (b2 + 1..b1).any(|k| text(k) == "(" && k > 0 && callees.contains(&text(k - 1)))
}

/// The index of the `;` ending the simple statement that starts at `from`, or
/// `None` when a brace comes first (not a simple statement).
fn statement_end(code: &[Tok], src: &str, from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, t) in code.iter().enumerate().skip(from) {
        match &src[t.start..t.end] {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "{" | "}" => return None,
            ";" if depth == 0 => return Some(j),
            _ => {}
        }
    }
    None
}

fn icr(s: &str, t: &Tok, push: &mut impl FnMut(Op, usize, usize, String)) {
    if let Some((v, radix, suffix)) = int_literal(s) {
        // no +1 for the largest literal (csmith writes 18446744073709551615UL)
        if let Some(up) = v.checked_add(1) {
            push(Op::Icr, t.start, t.end, format_int(up, radix, suffix));
        }
        if v > 0 {
            push(Op::Icr, t.start, t.end, format_int(v - 1, radix, suffix));
        }
    }
}

/// SplitMix64: a tiny deterministic generator for the shuffles.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// The mutants in study order: each operator's mutants shuffled with `seed`,
/// then taken round-robin over the operators so every prefix mixes them.
pub fn study_order(mutants: Vec<Mutant>, seed: u64) -> Vec<Mutant> {
    let mut rng = SplitMix(seed);
    let mut groups: Vec<Vec<Mutant>> =
        Op::ALL.iter().map(|op| mutants.iter().filter(|m| m.op == *op).cloned().collect()).collect();
    for g in &mut groups {
        rng.shuffle(g);
        g.reverse(); // pop from the back = take from the front
    }
    let mut out = Vec::new();
    while groups.iter().any(|g| !g.is_empty()) {
        for g in &mut groups {
            if let Some(m) = g.pop() {
                out.push(m);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#define N 10\nstatic int f(int a, int b)\n{\n    int x = a + b;\n    /* a < b */\n    if (a < b && b > 0)\n        x++;\n    g(x);\n    return x * 2;\n}\n";

    #[test]
    fn finds_each_operator() {
        let ms = generate(SRC);
        for op in Op::ALL {
            assert!(ms.iter().any(|m| m.op == op), "{op:?} missing: {ms:#?}");
        }
        // the comment is not mutated
        assert!(!ms.iter().any(|m| m.line == 5));
        // the #define constant is
        assert!(ms.iter().any(|m| m.op == Op::Icr && m.line == 1 && m.replacement == "11"));
        // `g(x);` is deleted, the declaration is not
        let sdl: Vec<_> = ms.iter().filter(|m| m.op == Op::Sdl).map(|m| &SRC[m.start..m.end]).collect();
        assert_eq!(sdl, ["g(x);"]);
        let cnr = ms.iter().find(|m| m.op == Op::Cnr).unwrap();
        assert_eq!(cnr.replacement, "!(a < b && b > 0)");
        // `int x` is a declaration: `*`/`+` only as binary operators
        assert!(ms.iter().filter(|m| m.op == Op::Aor).all(|m| matches!(&SRC[m.start..m.end], "+" | "*")));
    }

    #[test]
    fn finds_prototype_and_old_style_definitions() {
        let src = "#include <stdio.h>\nstruct s { int a; };\nint proto(int);\nstatic int tbl[] = { 1, 2 };\n\
                   add(a, b) int a, b; { return a + b; }\n\
                   static skip(n) int n; { n++; while (n--) getchar(); }\n\
                   List *f(a) List *a; { return g(a); }\n\
                   main(argc, argv) int argc; char **argv; { return add(1, 2) + skip(argc); }\n\
                   static int g(struct s *p) { if (p) return proto(p->a); return 0; }\n";
        let fs = functions(src);
        let names: Vec<&str> = fs.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["add", "skip", "f", "main", "g"]);
        assert_eq!(&src[fs[0].body.clone()], "{ return a + b; }");
        assert_eq!(fs[3].calls, ["add", "skip"]);
        assert_eq!(fs[4].calls, ["proto"]);
        // old-style bodies are code: statement deletion and condition negation apply
        let ms = generate(src);
        assert!(ms.iter().any(|m| m.op == Op::Sdl && &src[m.start..m.end] == "n++;"));
        assert!(ms.iter().any(|m| m.op == Op::Cnr && m.replacement == "!(n--)"));
        // the call is followed by the statement after it
        let x = src.find("return 0").unwrap();
        assert!(follows_call(src, x, &["proto"]));
        assert!(!follows_call(src, x, &["add"]));
        let src2 = "int f(int a) { int b = g(a); b++; return b; }";
        assert!(follows_call(src2, src2.find("b++").unwrap(), &["g"]));
        assert!(!follows_call(src2, src2.find("return").unwrap(), &["g"]));
    }

    #[test]
    fn the_largest_literal_only_goes_down() {
        let src = "unsigned long f(void) { return 18446744073709551615UL; }";
        let icr: Vec<String> = generate(src).into_iter().filter(|m| m.op == Op::Icr).map(|m| m.replacement).collect();
        assert_eq!(icr, ["18446744073709551614UL"]);
    }

    #[test]
    fn order_is_deterministic_and_mixed() {
        let a = study_order(generate(SRC), 7);
        let b = study_order(generate(SRC), 7);
        assert_eq!(a, b);
        let first: Vec<Op> = a.iter().take(7).map(|m| m.op).collect();
        let mut sorted = first.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 7);
    }
}
