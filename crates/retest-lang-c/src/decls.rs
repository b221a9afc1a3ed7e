//! Declarations outside function bodies: globals, types, tags, enumerators,
//! prototypes. Selection compares them between versions to find *affected* names
//! (002 §3.1.4, 003 §5.4).

use std::collections::BTreeSet;

use crate::flat::Node as Ts;
use retest_graph::{DeclKind, Declaration, Span};

use crate::syntax::{self, declarator_name, kind_of, normalized, src_text};

/// Names declared by a declaration-like node (declarators, typedef names,
/// struct/union/enum tags with a body, enumerators).
pub fn declared_names(s: Ts<'_>, src: &[u8], out: &mut Vec<String>) {
    let mut c = s.walk();
    for d in s.children_by_field_name("declarator", &mut c) {
        if let Some(n) = declarator_name(d, src)
            && !out.contains(&n)
        {
            out.push(n);
        }
    }
    if let Some(t) = s.child_by_field_name("type") {
        tag_names(t, src, out);
    }
    if matches!(kind_of(s), "struct_specifier" | "union_specifier" | "enum_specifier") {
        tag_names(s, src, out);
    }
}

fn tag_names(t: Ts<'_>, src: &[u8], out: &mut Vec<String>) {
    if !matches!(kind_of(t), "struct_specifier" | "union_specifier" | "enum_specifier") {
        return;
    }
    if t.child_by_field_name("body").is_none() {
        return; // a use of the tag, not its definition
    }
    if let Some(n) = t.child_by_field_name("name") {
        let n = src_text(n, src).to_string();
        if !out.contains(&n) {
            out.push(n);
        }
    }
    if kind_of(t) == "enum_specifier"
        && let Some(body) = t.child_by_field_name("body")
    {
        let mut c = body.walk();
        for e in body.named_children(&mut c) {
            if kind_of(e) == "enumerator"
                && let Some(n) = e.child_by_field_name("name")
            {
                out.push(src_text(n, src).to_string());
            }
        }
    }
}

/// Whether a declarator declares a function (a prototype): the declarator
/// nearest the name, parentheses and attributes aside, is a function
/// declarator — `f(void)` and `*f(void)` (returning a pointer), not
/// `(*fp)(void)`, a pointer to a function, which is a variable.
pub fn declares_function(mut d: Ts<'_>) -> bool {
    let mut nearest = "";
    loop {
        match kind_of(d) {
            "identifier" => return nearest == "function_declarator",
            k @ ("function_declarator" | "pointer_declarator" | "array_declarator") => {
                nearest = k;
                let Some(inner) = d.child_by_field_name("declarator") else { return false };
                d = inner;
            }
            "init_declarator" => {
                let Some(inner) = d.child_by_field_name("declarator") else { return false };
                d = inner;
            }
            "parenthesized_declarator" | "attributed_declarator" => {
                let mut c = d.walk();
                let inner = d
                    .named_children(&mut c)
                    .find(|x| kind_of(x) == "identifier" || kind_of(x).ends_with("_declarator"));
                let Some(inner) = inner else { return false };
                d = inner;
            }
            _ => return false,
        }
    }
}

/// A declaration's text as stored: itself, or for a system header's
/// declaration only its digest (`#` and 16 hex digits), which still changes
/// when the text does.
pub fn sealed(text: String, system: bool) -> String {
    if system { format!("#{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes())) } else { text }
}

/// The declaration items of one top-level node (not function bodies). For a
/// function definition only its signature is an item. `system` items keep a digest
/// of their text instead of the text itself. `attrs(range)` gives the attributes
/// the parser could not see within a byte range (appended to the text, so a
/// change of them is a change of the declaration).
pub fn top_level_items(
    n: Ts<'_>,
    src: &[u8],
    span: Option<Span>,
    system: bool,
    attrs: &dyn Fn(std::ops::Range<usize>) -> String,
    out: &mut Vec<Declaration>,
) {
    let text_of = |x: Ts<'_>| -> String {
        let mut t = normalized(x, src);
        let hidden = attrs(x.byte_range());
        if !hidden.is_empty() {
            t.push(' ');
            t.push_str(&hidden);
        }
        sealed(t, system)
    };
    let mentions_of = |x: Ts<'_>, names: &[String]| -> Vec<String> {
        let u = syntax::mentions(x, src, &|_| false);
        u.refs.into_iter().filter(|r| !names.contains(r)).collect()
    };
    match kind_of(n) {
        "function_definition" => {
            let body = n.child_by_field_name("body");
            let name = n.child_by_field_name("declarator").and_then(|d| declarator_name(d, src));
            let Some(name) = name else { return };
            let mut sig = String::new();
            let mut c = n.walk();
            for k in n.children(&mut c) {
                if Some(k.id()) == body.map(|b| b.id()) {
                    continue;
                }
                let t = normalized(k, src);
                if !t.is_empty() {
                    if !sig.is_empty() {
                        sig.push(' ');
                    }
                    sig.push_str(&t);
                }
            }
            let names = vec![name];
            let mentions = {
                let mut m = Vec::new();
                let mut c = n.walk();
                for k in n.children(&mut c) {
                    if Some(k.id()) != body.map(|b| b.id()) {
                        m.extend(mentions_of(k, &names));
                    }
                }
                m.sort();
                m.dedup();
                m
            };
            out.push(Declaration { kind: DeclKind::Function, names, text: sealed(sig, system), mentions, span });
        }
        "declaration" | "type_definition" => {
            // nested tag definitions get their own item
            if let Some(t) = n.child_by_field_name("type")
                && matches!(kind_of(t), "struct_specifier" | "union_specifier" | "enum_specifier")
                && t.child_by_field_name("body").is_some()
            {
                let mut names = Vec::new();
                tag_names(t, src, &mut names);
                if !names.is_empty() {
                    out.push(Declaration {
                        kind: if kind_of(t) == "enum_specifier" { DeclKind::Enumerator } else { DeclKind::Tag },
                        mentions: mentions_of(t, &names),
                        names,
                        text: text_of(t),
                        span,
                    });
                }
            }
            let mut names = Vec::new();
            let mut c = n.walk();
            let mut is_fn = false;
            for d in n.children_by_field_name("declarator", &mut c) {
                if let Some(nm) = declarator_name(d, src) {
                    names.push(nm);
                }
                is_fn |= declares_function(d);
            }
            if names.is_empty() {
                return;
            }
            let kind = if kind_of(n) == "type_definition" {
                DeclKind::Type
            } else if is_fn {
                DeclKind::Function
            } else {
                DeclKind::Variable
            };
            out.push(Declaration { kind, mentions: mentions_of(n, &names), names, text: text_of(n), span });
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" => {
            let mut names = Vec::new();
            tag_names(n, src, &mut names);
            if !names.is_empty() {
                out.push(Declaration {
                    kind: if kind_of(n) == "enum_specifier" { DeclKind::Enumerator } else { DeclKind::Tag },
                    mentions: mentions_of(n, &names),
                    names,
                    text: text_of(n),
                    span,
                });
            }
        }
        _ => {}
    }
}

/// The type names a file-scope `typedef` declares.
pub fn typedef_names(n: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    if kind_of(n) != "type_definition" {
        return;
    }
    let mut c = n.walk();
    for d in n.children_by_field_name("declarator", &mut c) {
        if let Some(nm) = declarator_name(d, src) {
            out.insert(nm);
        }
    }
}

/// Names of functions a top-level declaration declares `const` or `pure` with a
/// GNU attribute (`__attribute__((__const__))`, glibc's `__attribute_pure__`:
/// `__ctype_b_loc`, `__errno_location`, `strlen`, `memcmp`, ...). GCC may
/// delete a call to such a function whose value is unused, so such a call
/// returns in every program the compiler keeps the meaning of: it cannot
/// `exit`, `longjmp` or loop forever. An attribute in a declarator applies to
/// that declarator's function; one at the declaration's level to all of them.
pub fn returning_names(n: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    if !matches!(kind_of(n), "declaration" | "function_definition") {
        return;
    }
    // each marking token has `const` or `pure` in its text, which lies within
    // the declaration's: most declarations have neither, and need no walk
    let text = &src[n.byte_range()];
    if !text.windows(5).any(|w| w == b"const") && !text.windows(4).any(|w| w == b"pure") {
        return;
    }
    // whether an attribute in `n` names `const` or `pure` (within an
    // attribute's parentheses `const` can only name the attribute)
    fn marked(n: Ts<'_>, src: &[u8]) -> bool {
        if kind_of(n) == "attribute_specifier" {
            return syntax::contains_token(n, src, &["__const__", "const", "__pure__", "pure"]);
        }
        let mut c = n.walk();
        n.children(&mut c).any(|ch| marked(ch, src))
    }
    let mut c = n.walk();
    let top_level = n.children(&mut c).any(|ch| kind_of(ch) == "attribute_specifier" && marked(ch, src));
    let mut c = n.walk();
    for d in n.children_by_field_name("declarator", &mut c) {
        // a function, not a pointer to one (`int (*fp)(int)`): GCC ignores
        // `pure` there, and the pointer may be set to any function
        if !declares_function(d) {
            continue;
        }
        if (top_level || marked(d, src))
            && let Some(nm) = declarator_name(d, src)
        {
            out.insert(nm);
        }
    }
}

/// The words that mark a function `noreturn` (C11, C23 and C++ attributes,
/// GNU's).
pub const NORETURN_WORDS: &[&str] = &["noreturn", "__noreturn__", "_Noreturn"];

/// Names of functions a top-level declaration declares `noreturn`.
pub fn noreturn_names(n: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    if !matches!(kind_of(n), "declaration" | "function_definition") {
        return;
    }
    let marked = syntax::contains_token(n, src, NORETURN_WORDS);
    if !marked {
        return;
    }
    let mut c = n.walk();
    for d in n.children_by_field_name("declarator", &mut c) {
        if declares_function(d)
            && let Some(nm) = declarator_name(d, src)
        {
            out.insert(nm);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Every file-scope declaration item of `src`.
    fn items(src: &str) -> Vec<Declaration> {
        let tree = crate::tu::parse(src);
        let root = tree.root_node();
        let mut out = Vec::new();
        let mut c = root.walk();
        for n in root.named_children(&mut c) {
            top_level_items(n, src.as_bytes(), None, false, &|_| String::new(), &mut out);
        }
        out
    }

    /// The kind of every file-scope declaration of `src`, by its first name.
    fn kinds(src: &str) -> Vec<(String, DeclKind)> {
        items(src).into_iter().map(|d| (d.names[0].clone(), d.kind)).collect()
    }

    /// The names `returning_names` and `noreturn_names` collect from `src`.
    fn marked(src: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let tree = crate::tu::parse(src);
        let root = tree.root_node();
        let (mut returning, mut noreturn) = (BTreeSet::new(), BTreeSet::new());
        let mut c = root.walk();
        for n in root.named_children(&mut c) {
            returning_names(n, src.as_bytes(), &mut returning);
            noreturn_names(n, src.as_bytes(), &mut noreturn);
        }
        (returning, noreturn)
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// The mentions of every file-scope declaration of `src`, by its first name.
    fn mentions(src: &str) -> BTreeMap<String, BTreeSet<String>> {
        items(src).into_iter().map(|d| (d.names[0].clone(), d.mentions.into_iter().collect())).collect()
    }

    /// A parameter's name is a new binding, not a reference: a declaration does
    /// not mention it (an affected global of the same spelling would reach the
    /// function through it). Its type, default argument and array bound are
    /// references; so is a name only used in a bound.
    #[test]
    fn parameter_names_are_not_mentions() {
        let m = mentions(
            "struct node { int v; };\n\
             enum { LIMIT = 4 };\n\
             int path_len(const char *path, struct node *item);\n\
             int apply(int (*cb)(int value), int n, int a[LIMIT]);\n\
             int count(int n, int a[n]) { return n; }\n",
        );
        assert_eq!(m["path_len"], set(&["node"]));
        assert_eq!(m["apply"], set(&["LIMIT"]));
        // `n` in `a[n]` refers to the parameter, and is kept: a reference is never dropped
        assert_eq!(m["count"], set(&["n"]));
    }

    /// `const`/`pure` functions return, one returning a pointer to a
    /// function too; the attribute on a pointer to a function, or `const` as
    /// a type qualifier, says nothing about a call.
    #[test]
    fn const_and_pure_mark_functions_not_pointers_or_qualifiers() {
        let (returning, _) = marked(
            "__attribute__((pure)) int f(const char *);\n\
             int g(int) __attribute__((__const__));\n\
             __attribute__((pure)) int (*h(void))(int);\n\
             __attribute__((pure)) int *p(int);\n\
             __attribute__((pure)) int (*fp)(int);\n\
             const int q(void);\n\
             int r(void) __attribute__((noinline));\n\
             static __attribute__((const)) int s(int x) { return x; }\n",
        );
        assert_eq!(returning, set(&["f", "g", "h", "p", "s"]));
    }

    /// `noreturn` in any spelling marks the functions of the declaration,
    /// never a pointer to a function.
    #[test]
    fn noreturn_marks_functions_in_every_spelling() {
        let (_, noreturn) = marked(
            "_Noreturn void die(const char *);\n\
             void stop(int) __attribute__((__noreturn__));\n\
             __attribute__((noreturn)) void (*handler)(int);\n\
             void go(void);\n",
        );
        assert_eq!(noreturn, set(&["die", "stop"]));
    }

    /// The declarator nearest the name decides: a function returning a
    /// pointer is a function, a pointer to a function is a variable.
    #[test]
    fn pointers_to_functions_are_variables() {
        let got = kinds(
            "int f(void);\n\
             int *g(int);\n\
             int (h)(int);\n\
             int (*k(int))(char);\n\
             int (*fp)(int *);\n\
             static int (*volatile vp)(int *) = 0;\n\
             extern void (*table[4])(void);\n\
             int x;\n",
        );
        let want = [
            ("f", DeclKind::Function),
            ("g", DeclKind::Function),
            ("h", DeclKind::Function),
            ("k", DeclKind::Function),
            ("fp", DeclKind::Variable),
            ("vp", DeclKind::Variable),
            ("table", DeclKind::Variable),
            ("x", DeclKind::Variable),
        ];
        assert_eq!(got, want.map(|(n, k)| (n.to_string(), k)).to_vec());
    }
}
