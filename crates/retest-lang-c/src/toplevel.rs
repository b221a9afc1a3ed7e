//! The top-level structure of a preprocessed unit, found without the parser:
//! where each declaration and each function definition begins and ends.
//!
//! tree-sitter recovers from a syntax error by guessing, and a wrong guess can
//! swallow the rest of a file (a label right before a `case` label, in a
//! 4,000-line file, made every later function part of one `ERROR` node). The
//! scanner here reads the token stream of the blanked preprocessed text and
//! matches braces, which needs no grammar: at file scope, C code can only live
//! in function bodies, and a function body is a `{` at depth 0 that follows a
//! declarator's `)` — or, in an old-style definition, the `;` of its parameter
//! declarations (`add(a, b) int a, b; { … }`). The analysis uses these items to
//! re-parse a damaged region one definition at a time (so an error costs one
//! function), to put back together old-style definitions the grammar cannot
//! read, and to check that no function body is left outside every CFG.

/// One token of the blanked preprocessed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub end: usize,
    pub kind: TokenKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

/// What a top-level item is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A declaration (ends with `;` at depth 0): variables, prototypes, types,
    /// `_Static_assert`, file-scope `asm`.
    Declaration,
    /// A function definition. `name` is the declared name as the tokens show it
    /// (`None` if no name could be told); `params` the identifier list of an
    /// old-style definition, else the identifiers of the parameter list.
    Function { name: Option<String>, body_open: usize, body_close: usize, old_style: bool, params: Vec<String> },
    /// A block at depth 0 that belongs to no function definition, or braces that
    /// do not balance: code the analysis cannot attribute.
    Stray { why: &'static str },
}

/// A top-level item: bytes `[start, end)` from its first to its last token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub start: usize,
    pub end: usize,
    pub kind: ItemKind,
}

impl Item {
    pub fn is_function(&self) -> bool {
        matches!(self.kind, ItemKind::Function { .. })
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_byte(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

const PUNCT3: &[&[u8]] = &[b"...", b"<<=", b">>=", b"->*"];
const PUNCT2: &[&[u8]] = &[
    b"->", b"++", b"--", b"<<", b">>", b"<=", b">=", b"==", b"!=", b"&&", b"||", b"+=", b"-=", b"*=", b"/=", b"%=",
    b"&=", b"|=", b"^=", b"::", b"##", b".*",
];

/// The tokens of `b`; comments and white space are skipped, a literal is one
/// token (its prefix, as in `L"x"`, is an identifier token before it).
pub fn tokens(b: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let kind = match (c, b.get(i + 1).copied()) {
            (b'/', Some(b'*')) => {
                i = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2);
                continue;
            }
            (b'/', Some(b'/')) => {
                i = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
                continue;
            }
            (b'"' | b'\'', _) => {
                let mut j = i + 1;
                while j < b.len() && b[j] != c && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = (j + 1).min(b.len());
                TokenKind::Literal
            }
            (c, _) if is_ident_start(c) => {
                while i < b.len() && is_ident_byte(b[i]) {
                    i += 1;
                }
                TokenKind::Ident
            }
            (c, n) if c.is_ascii_digit() || (c == b'.' && n.is_some_and(|n| n.is_ascii_digit())) => {
                i += 1;
                while i < b.len() {
                    let d = b[i];
                    let exponent_sign = (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                    if is_ident_byte(d) || d == b'.' || d == b'\'' || exponent_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                TokenKind::Number
            }
            _ => {
                let rest = &b[i..];
                i += if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                    3
                } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                    2
                } else {
                    1
                };
                TokenKind::Punct
            }
        };
        out.push(Token { start, end: i, kind });
    }
    out
}

/// Words that may stand between a declarator's `)` and what follows it without
/// making the declaration an old-style definition's head.
fn is_attribute_word(w: &[u8]) -> bool {
    matches!(
        w,
        b"__attribute__"
            | b"__attribute"
            | b"__asm__"
            | b"__asm"
            | b"asm"
            | b"__declspec"
            | b"_Alignas"
            | b"alignas"
            | b"__THROW"
            | b"noexcept"
            | b"throw"
            | b"const"
            | b"volatile"
            | b"override"
            | b"final"
    )
}

/// Whether the tokens from `at` on, right after a declarator's `)`, begin the
/// parameter declarations of an old-style definition: a word that is not an
/// attribute or operator word (`int f(a) int a;`, `f(p) Bytef *p;`). Type
/// qualifiers there begin the first declaration (`f(p) const char *p;`) when
/// a type word follows them, or, after `_Atomic`, a `(` (`f(n) _Atomic(int)
/// n;`); followed by a body or an attribute word they are read as a member
/// function's qualifiers (`int S::a() const {`).
fn begins_parameter_declarations(toks: &[Token], b: &[u8], at: usize) -> bool {
    let text = |t: &Token| &b[t.start..t.end];
    let is_qualifier = |w: &[u8]| matches!(w, b"const" | b"volatile" | b"_Atomic" | b"restrict" | b"__restrict");
    let mut j = at;
    while toks.get(j).is_some_and(|n| is_qualifier(text(n))) {
        j += 1;
    }
    let Some(n) = toks.get(j) else { return false };
    let w = text(n);
    if j > at && w == b"(" {
        return text(&toks[j - 1]) == b"_Atomic";
    }
    n.kind == TokenKind::Ident && !is_attribute_word(w) && !is_operator_word(w) && w != b"requires"
}

fn is_c_keyword(w: &[u8]) -> bool {
    matches!(
        w,
        b"void"
            | b"char"
            | b"short"
            | b"int"
            | b"long"
            | b"float"
            | b"double"
            | b"signed"
            | b"unsigned"
            | b"_Bool"
            | b"bool"
            | b"_Complex"
            | b"struct"
            | b"union"
            | b"enum"
            | b"const"
            | b"volatile"
            | b"restrict"
            | b"__restrict"
            | b"__restrict__"
            | b"register"
            | b"static"
            | b"_Atomic"
    ) || is_operator_word(w)
}

/// Words that open a type body with `{`.
fn is_tag_word(w: &[u8]) -> bool {
    matches!(w, b"struct" | b"union" | b"enum" | b"class")
}

/// Words followed by parentheses that are not a declarator's.
fn is_operator_word(w: &[u8]) -> bool {
    matches!(
        w,
        b"__attribute__"
            | b"__attribute"
            | b"__asm__"
            | b"__asm"
            | b"asm"
            | b"__declspec"
            | b"_Alignas"
            | b"alignas"
            | b"typeof"
            | b"__typeof__"
            | b"__typeof"
            | b"sizeof"
            | b"_Alignof"
            | b"__alignof__"
            | b"_Atomic"
            | b"__extension__"
            | b"_Static_assert"
            | b"static_assert"
            | b"decltype"
    )
}

/// Splits a unit into its top-level items. Every byte of code lies in exactly
/// one item; only white space and comments lie between them.
pub fn items(b: &[u8]) -> Vec<Item> {
    let toks = tokens(b);
    let text = |t: &Token| &b[t.start..t.end];
    let is = |t: &Token, s: &[u8]| text(t) == s;
    // matching bracket of every opening one, and depth bookkeeping
    let mut close_of: Vec<Option<usize>> = vec![None; toks.len()];
    {
        let mut stack: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            if t.kind != TokenKind::Punct {
                continue;
            }
            match text(t) {
                b"(" | b"[" | b"{" => stack.push(i),
                b")" | b"]" | b"}" => {
                    // pop to the matching opener; a mismatch leaves openers
                    // unmatched. A `)` or `]` never closes what was opened
                    // before an open `{` (no C construct does, `({ … })`
                    // included), so a stray one inside a body cannot end the
                    // body, or the unit, early
                    let want: &[u8] = match text(t) {
                        b")" => b"(",
                        b"]" => b"[",
                        _ => b"{",
                    };
                    let floor = if want == b"{" {
                        0
                    } else {
                        stack.iter().rposition(|&o| text(&toks[o]) == b"{").map_or(0, |p| p + 1)
                    };
                    if let Some(pos) = stack[floor..].iter().rposition(|&o| text(&toks[o]) == want) {
                        close_of[stack[floor + pos]] = Some(i);
                        stack.truncate(floor + pos);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let first = i;
        // an old-style head: `)` followed, at depth 0, by a word that starts a
        // parameter declaration rather than ends the declaration
        let mut old_style = false;
        let mut saw_eq = false;
        // in an old-style head: the first `;` (where the item ends if what
        // follows is not parameter declarations after all) and the count of `;`
        let mut first_semi: Option<usize> = None;
        let mut semis = 0usize;
        let mut end_kind: Option<ItemKind> = None;
        let mut end = toks[i].end;
        while i < toks.len() {
            let t = toks[i];
            end = t.end;
            if t.kind == TokenKind::Punct {
                match text(&t) {
                    b";" => {
                        if old_style {
                            first_semi.get_or_insert(i);
                            semis += 1;
                            // each parameter is declared once, so an old-style head has
                            // no more declarations than parameters
                            let params = head_name(&toks, b, first, i, true).1.len();
                            if semis > params.max(1) || saw_eq {
                                let s = first_semi.expect("set above");
                                i = s + 1;
                                end = toks[s].end;
                                end_kind = Some(ItemKind::Declaration);
                                break;
                            }
                        } else {
                            i += 1;
                            end_kind = Some(ItemKind::Declaration);
                            break;
                        }
                    }
                    b"=" => saw_eq = true,
                    b"(" | b"[" => {
                        let Some(c) = close_of[i] else {
                            end_kind = Some(ItemKind::Stray { why: "unbalanced brackets" });
                            end = b.len();
                            i = toks.len();
                            break;
                        };
                        if text(&t) == b"("
                            && !saw_eq
                            && begins_parameter_declarations(&toks, b, c + 1)
                            && i > first
                            && toks[i - 1].kind == TokenKind::Ident
                            && !is_operator_word(text(&toks[i - 1]))
                        {
                            old_style = true;
                        }
                        i = c + 1;
                        end = toks[c].end;
                        continue;
                    }
                    b"{" => {
                        let Some(c) = close_of[i] else {
                            end_kind = Some(ItemKind::Stray { why: "a `{` that is never closed" });
                            end = b.len();
                            i = toks.len();
                            break;
                        };
                        match body_of(&toks, b, first, i, old_style, saw_eq) {
                            Body::Function => {
                                let (name, params) = head_name(&toks, b, first, i, old_style);
                                end_kind = Some(ItemKind::Function {
                                    name,
                                    body_open: t.start,
                                    body_close: toks[c].start,
                                    old_style,
                                    params,
                                });
                                end = toks[c].end;
                                i = c + 1;
                                break;
                            }
                            Body::Type => {
                                i = c + 1;
                                end = toks[c].end;
                                continue;
                            }
                            Body::Stray => {
                                end_kind = Some(ItemKind::Stray { why: "a block outside any function" });
                                end = toks[c].end;
                                i = c + 1;
                                break;
                            }
                        }
                    }
                    b")" | b"]" | b"}" => {
                        end_kind = Some(ItemKind::Stray { why: "unbalanced brackets" });
                        i += 1;
                        break;
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        if end_kind.is_none()
            && let Some(s) = first_semi
        {
            // an old-style head that no body follows: a declaration after all
            i = s + 1;
            end = toks[s].end;
        }
        let kind = end_kind.unwrap_or(ItemKind::Declaration);
        if i == first + 1 && kind == ItemKind::Declaration && is(&toks[first], b";") {
            continue; // a stray `;`
        }
        out.push(Item { start: toks[first].start, end, kind });
    }
    out
}

enum Body {
    Function,
    Type,
    Stray,
}

/// What the `{` at token `open` (depth 0) opens, given the item's tokens from `first`.
fn body_of(toks: &[Token], b: &[u8], first: usize, open: usize, old_style: bool, saw_eq: bool) -> Body {
    let text = |k: usize| &b[toks[k].start..toks[k].end];
    if saw_eq {
        return Body::Type; // an initializer
    }
    if open == first {
        return Body::Stray;
    }
    // step back over attribute groups: `__attribute__ ((…))`, `__asm__ ("x")`
    let mut k = open - 1;
    loop {
        if text(k) == b")"
            && let Some(o) = (first..k).rev().find(|&o| text(o) == b"(" && matching_close(toks, b, o) == Some(k))
            && o > first
            && toks[o - 1].kind == TokenKind::Ident
            && is_attribute_word(text(o - 1))
            // C++'s `override` and `final` take no parentheses: `final(` is a
            // C function named `final`
            && !matches!(text(o - 1), b"override" | b"final")
            && o - 1 > first
        {
            k = o - 2;
            continue;
        }
        if toks[k].kind == TokenKind::Ident
            && matches!(text(k), b"const" | b"volatile" | b"noexcept" | b"override" | b"final")
            && k > first
        {
            k -= 1;
            continue;
        }
        break;
    }
    match text(k) {
        b")" => {
            // `struct __attribute__((packed)) {` opens a type
            if (first..k).any(|j| is_tag_word(text(j))) && tag_before_group(toks, b, first, k) {
                Body::Type
            } else {
                Body::Function
            }
        }
        b";" if old_style => Body::Function,
        _ => {
            if toks[k].kind == TokenKind::Ident && (is_tag_word(text(k)) || (k > first && is_tag_word(text(k - 1)))) {
                Body::Type
            } else if (first..open).any(|j| is_tag_word(text(j))) {
                // `struct S final : Base {`, `enum E : int {`
                Body::Type
            } else {
                Body::Stray
            }
        }
    }
}

fn matching_close(toks: &[Token], b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match &b[t.start..t.end] {
            b"(" => depth += 1,
            b")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the parenthesised group ending at `close` belongs to a tag's
/// attributes (`struct __attribute__((packed)) {`), not to a declarator.
fn tag_before_group(toks: &[Token], b: &[u8], first: usize, close: usize) -> bool {
    let text = |k: usize| &b[toks[k].start..toks[k].end];
    let Some(open) = (first..close).rev().find(|&o| text(o) == b"(" && matching_close(toks, b, o) == Some(close))
    else {
        return false;
    };
    open > first && is_attribute_word(text(open - 1)) && {
        // the words before the attribute: `struct`, or `struct NAME`
        let before = open - 1;
        before > first && (is_tag_word(text(before - 1)) || (before > first + 1 && is_tag_word(text(before - 2))))
    }
}

/// The name a definition's head declares, and an old-style head's identifier list.
fn head_name(toks: &[Token], b: &[u8], first: usize, open: usize, old_style: bool) -> (Option<String>, Vec<String>) {
    let text = |k: usize| &b[toks[k].start..toks[k].end];
    // the first identifier followed by a parameter list: `(` that is not a
    // grouping of a declarator (`int (*f(int))(void)` declares `f`) nor an
    // operator word's
    // operator words' parentheses (`__attribute__((visibility("default")))`,
    // `__declspec(dllexport)`) are skipped whole: `visibility` is no name
    let mut n = None;
    let mut k = first;
    while k < open {
        if toks[k].kind == TokenKind::Ident && is_operator_word(text(k)) && k + 1 < open && text(k + 1) == b"(" {
            k = matching_close(toks, b, k + 1).map_or(open, |c| c + 1);
            continue;
        }
        // `double (name)(…)`: a parenthesised name (a macro of the same name exists)
        if toks[k].kind == TokenKind::Ident
            && k > first
            && k + 2 < open
            && text(k - 1) == b"("
            && text(k + 1) == b")"
            && text(k + 2) == b"("
            && !is_c_keyword(text(k))
        {
            n = Some(k);
            break;
        }
        if toks[k].kind == TokenKind::Ident
            && !is_c_keyword(text(k))
            && k + 2 < open
            && text(k + 1) == b"("
            && !matches!(text(k + 2), b"*" | b"(" | b"^" | b"&")
        {
            n = Some(k);
            break;
        }
        k += 1;
    }
    let Some(n) = n else {
        return (None, Vec::new());
    };
    let name = String::from_utf8_lossy(text(n)).into_owned();
    // an old-style head's identifier list; otherwise every identifier of the
    // parameter list but keywords (type names too: over-approximating locals
    // only makes more calls count as indirect)
    let mut params = Vec::new();
    if let Some(close) = matching_close(toks, b, n + 1) {
        for t in &toks[n + 2..close] {
            let w = &b[t.start..t.end];
            if t.kind == TokenKind::Ident && (old_style || !is_c_keyword(w)) {
                params.push(String::from_utf8_lossy(w).into_owned());
            }
        }
    }
    (Some(name), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(String, String)> {
        items(src.as_bytes())
            .into_iter()
            .map(|it| {
                let k = match &it.kind {
                    ItemKind::Declaration => "decl".to_string(),
                    ItemKind::Function { name, old_style, params, .. } => format!(
                        "fn {}{}{}",
                        name.as_deref().unwrap_or("?"),
                        if *old_style { " k&r" } else { "" },
                        if params.is_empty() { String::new() } else { format!(" ({})", params.join(",")) }
                    ),
                    ItemKind::Stray { why } => format!("stray: {why}"),
                };
                (k, src[it.start..it.end].to_string())
            })
            .collect()
    }

    #[test]
    fn old_style_definitions_are_functions_with_their_identifier_lists() {
        let src = "typedef struct node { int v; struct node *next; } List, *NodePtr;\n\
                   static int table[10];\n\
                   add(a, b) int a, b; { if (a > b) return a - b; return a + b; }\n\
                   static skip(n) int n; { while (n > 0) n--; return n; }\n\
                   List *append_ele(a_list, a_ele) List *a_list; List *a_ele; { return a_list; }\n\
                   NodePtr get(x) int x; { return 0; }\n\
                   main(argc, argv) int argc; char **argv; { return 0; }\n\
                   int first_const(p, n) const char *p; int n; { return p[n]; }\n\
                   int first_volatile(n) volatile int n; { return n; }\n\
                   int first_atomic(n) _Atomic int n; { return n; }\n\
                   int atomic_paren(n) _Atomic(int) n; { return n; }\n\
                   int (*getfn(int x))(void) { return 0; }\n\
                   int f(void) __attribute__((cold));\n";
        let k: Vec<String> = kinds(src).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            k,
            [
                "decl",
                "decl",
                "fn add k&r (a,b)",
                "fn skip k&r (n)",
                "fn append_ele k&r (a_list,a_ele)",
                "fn get k&r (x)",
                "fn main k&r (argc,argv)",
                "fn first_const k&r (p,n)",
                "fn first_volatile k&r (n)",
                "fn first_atomic k&r (n)",
                "fn atomic_paren k&r (n)",
                "fn getfn (x)",
                "decl"
            ]
        );
    }

    #[test]
    fn a_stray_parenthesis_in_a_statement_expression_stays_in_its_function() {
        // glibc's assert is `({ if (e) ; else __assert_fail (…); })`: an
        // inserted `) (` there once closed the `(` before the `{`
        let src = "int f(int g) { ((void) sizeof ((g) ? 1 : 0), __extension__ ({ if ) ( do (g) ; else abort (); })); return g; }\n\
                   int h(void) { return 0; }\n";
        let k: Vec<String> = kinds(src).into_iter().map(|(k, _)| k).collect();
        assert_eq!(k, ["fn f (g)", "fn h"]);
    }

    #[test]
    fn qualifiers_before_a_body_are_not_old_style_declarations() {
        let src = "int S::a() const { return 0; }\n\
                   int S::c() const noexcept { return 0; }\n\
                   struct T { int f() const override { return 0; } };\n";
        let k: Vec<String> = kinds(src).into_iter().map(|(k, _)| k).collect();
        assert_eq!(k, ["fn a", "fn c", "decl"]);
    }

    #[test]
    fn type_bodies_and_initializers_are_not_functions() {
        let src = "struct __attribute__((packed)) { int a; } s;\n\
                   struct S __attribute__((aligned(8))) { int a; };\n\
                   enum { A, B } e = A;\n\
                   int x[] = { 1, 2 };\n\
                   struct P p = (struct P){ 1 };\n\
                   struct S *f(void) { return 0; }\n\
                   void g(void) __attribute__((noinline)) { }\n\
                   __attribute__((visibility(\"default\"))) int h(int x) { return x; }\n\
                   __declspec(dllexport) const char *__attribute__((cold)) k(void) { return 0; }\n\
                   double (paren)(double z) { return z; }\n\
                   static int final(int a) { return a; }\n\
                   ;\n\
                   { stray(); }\n";
        let k: Vec<String> = kinds(src).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            k,
            [
                "decl",
                "decl",
                "decl",
                "decl",
                "decl",
                "fn f",
                "fn g",
                "fn h (x)",
                "fn k",
                "fn paren",
                "fn final (a)",
                "stray: a block outside any function"
            ]
        );
    }

    #[test]
    fn strings_comments_and_character_literals_hide_their_braces() {
        let src = "char *s = \"{\"; /* { */ // {\nint f(void) { return '}' + '\\'' ; }\n";
        let k = kinds(src);
        assert_eq!(k.len(), 2);
        assert_eq!(k[1].0, "fn f");
        assert!(k[1].1.ends_with('}'));
    }

    #[test]
    fn unbalanced_braces_are_stray_to_the_end() {
        let k: Vec<String> = kinds("int a;\nvoid f(void) { if (x) {\n").into_iter().map(|(k, _)| k).collect();
        assert_eq!(k, ["decl", "stray: a `{` that is never closed"]);
    }
}
