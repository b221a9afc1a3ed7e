//! C++ translation units: every function body the unit defines — free
//! functions, methods in and out of class, constructors (with their member
//! initialisers), destructors, operators, conversion functions, templates,
//! lambdas — each a procedure with both CFG levels, named by its qualified name
//! and its parameter types as written (`ns::A::get(int) const`), so overloads
//! and namespaces keep procedures apart across versions.
//!
//! The statements are built by the same builder as C's ([`crate::build`]), which
//! knows C++'s statements too: range-`for`, `try`/`catch`/`throw`, condition
//! clauses, implicit destructor calls, member initialisers. A lambda's body is a
//! procedure of its own, `enclosing::lambda#k` (the k-th lambda of the enclosing
//! body, in source order), and counts as address-taken: calls through closures
//! are indirect calls.
//!
//! `constexpr` functions and lambdas may run while compiling, where no probe
//! may store: their probes are guarded by `__builtin_is_constant_evaluated()`
//! (C++14 and later), and a change to a `constexpr` function also counts as a
//! change of its declaration (so every statement that names it counts as
//! changed), a change to a lambda as a change of the statement that defines
//! it. `consteval` functions, and `constexpr` ones in C++11, get no probes
//! (see [`crate::build::Evaluation`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::flat::Node as Ts;
use retest_graph::{Class, DeclKind, Declaration, Method, MethodKind, Problem, Procedure, Span, Unit};

use crate::build::{ClassInfo, Definition, Evaluation, TuFacts, build_function, lambda_bodies};
use crate::decls;
use crate::preprocess::{Preprocessed, SourceFile};
use crate::syntax::{self, normalized, src_text};
use crate::tu::TuAnalysis;

/// Parses preprocessed C++ with tree-sitter-cpp.
pub fn parse(text: &str) -> crate::flat::Tree {
    parse_ranges(text, &[])
}

/// Parses only the bytes of `ranges` with tree-sitter-cpp ([`syntax::parse_in`]).
fn parse_ranges(text: &str, ranges: &[tree_sitter::Range]) -> crate::flat::Tree {
    syntax::parse_in(crate::flat::Grammar::Cpp, text, ranges)
}

/// The unit parsed whole; from the first top-level node on that starts in the
/// lines of a file not the project's (a system header) and holds the
/// project's code, the rest of the unit is parsed again in two parts, the
/// project's lines and the others', each leaving the other's out.
///
/// tree-sitter-cpp misreads some of the standard library's constructs
/// (`extern template`, attributes after a namespace's name), and its recovery
/// can carry a header's node on over the project's code that follows the
/// `#include`: after `#include <iostream>`, the next function of the unit was
/// once not found at all (in leveldb, 80 functions in 13 of its 39 units). Parsed
/// apart, a header's text cannot take in a line of the project's.
/// Everything after the first such node is parsed apart, not the node alone:
/// where the whole parse went wrong, its later top-level boundaries cannot
/// be trusted either. A node that starts in the project's lines is left as
/// the whole parse read it: the walk finds the project's definitions inside
/// it, and parsing the project's lines without the headers' can misread
/// them otherwise (a namespace a misread class left open then closes in
/// another header of the project's). Lines before any line marker count as
/// the project's.
fn parse_unit(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool) -> Vec<crate::flat::Tree> {
    let src = pre.text.as_bytes();
    let whole = parse(&pre.text);
    if !whole.root_node().has_error() {
        return vec![whole];
    }
    let lines = crate::tu::Lines::new(src);
    let starts = &lines.0;
    let row_end = |row: usize| starts.get(row + 1).copied().unwrap_or(src.len());
    // whether each file is the project's, asked once per file
    let own_file: Vec<bool> = pre.files.iter().map(is_own).collect();
    let own_row: Vec<bool> = (0..starts.len())
        .map(|row| pre.map.lookup(row as u32).is_none_or(|(f, _)| own_file.get(f as usize).copied().unwrap_or(true)))
        .collect();
    // rows of the project's with text, counted up to each row
    let mut own_code = vec![0usize; starts.len() + 1];
    for row in 0..starts.len() {
        let blank = src[starts[row]..row_end(row)].iter().all(u8::is_ascii_whitespace);
        own_code[row + 1] = own_code[row] + usize::from(own_row[row] && !blank);
    }
    let cut: Option<usize> = {
        let root = whole.root_node();
        let mut c = root.walk();
        root.children(&mut c)
            .find(|n| {
                let first = n.start_position().row;
                let last = lines.point(n.end_byte().saturating_sub(1).max(n.start_byte())).row;
                !own_row[first] && own_code[last + 1] > own_code[first]
            })
            .map(|n| n.start_byte())
    };
    let Some(cut) = cut else { return vec![whole] };
    // the rows from the cut on, in runs of one part each: [others, the project's]
    let mut parts: [Vec<tree_sitter::Range>; 2] = [Vec::new(), Vec::new()];
    let mut row = lines.point(cut).row;
    while row < starts.len() {
        let from = row;
        while row < starts.len() && own_row[row] == own_row[from] {
            row += 1;
        }
        let (a, b) = (starts[from].max(cut), row_end(row - 1));
        if b > a {
            parts[usize::from(own_row[from])].push(lines.range(a, b));
        }
    }
    let mut trees = vec![whole];
    trees.extend(parts.iter().filter(|p| !p.is_empty()).map(|ranges| parse_ranges(&pre.text, ranges)));
    trees
}

/// The top-level nodes of `trees` ([`parse_unit`]), in source order: those
/// of the whole parse before the later trees begin, and the later trees'.
fn top_level<'t>(trees: &'t [crate::flat::Tree]) -> Vec<Ts<'t>> {
    let children = |t: &'t crate::flat::Tree| {
        let root = t.root_node();
        let mut c = root.walk();
        root.children(&mut c).collect::<Vec<_>>()
    };
    let cut = trees[1..].iter().filter_map(|t| t.included_ranges().first().map(|r| r.start_byte)).min();
    let mut top: Vec<Ts<'t>> =
        children(&trees[0]).into_iter().filter(|n| cut.is_none_or(|cut| n.start_byte() < cut)).collect();
    for t in &trees[1..] {
        top.extend(children(t));
    }
    top.sort_by_key(|n| n.start_byte());
    top
}

/// The tokens of `n` joined as C++ writes names: a space only between two
/// words (`unsigned int`, `operator bool`), none around punctuation.
pub fn compact(n: Ts<'_>, src: &[u8], skip: &dyn Fn(Ts<'_>) -> bool) -> String {
    let mut toks: Vec<String> = Vec::new();
    leaves(n, src, skip, &mut toks);
    join_compact(&toks)
}

fn leaves(n: Ts<'_>, src: &[u8], skip: &dyn Fn(Ts<'_>) -> bool, out: &mut Vec<String>) {
    if skip(n) || n.kind() == "comment" || n.is_missing() {
        return;
    }
    if n.child_count() == 0
        || matches!(n.kind(), "string_literal" | "char_literal" | "raw_string_literal" | "number_literal")
    {
        let t = src_text(n, src).trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        return;
    }
    let mut c = n.walk();
    for k in n.children(&mut c) {
        leaves(k, src, skip, out);
    }
}

fn join_compact(toks: &[String]) -> String {
    let word = |t: &str| t.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
    let starts_word = |t: &str| t.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::new();
    for (i, t) in toks.iter().enumerate() {
        if i > 0 && (word(&toks[i - 1]) && starts_word(t) || toks[i - 1] == ",") {
            out.push(' ');
        }
        out.push_str(t);
    }
    out
}

/// The function declarator of a definition's declarator (through pointers,
/// references and parentheses), or the `operator_cast` of a conversion function.
fn function_declarator(mut d: Ts<'_>) -> Option<Ts<'_>> {
    loop {
        match d.kind() {
            "function_declarator" | "operator_cast" => return Some(d),
            "pointer_declarator" | "reference_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child((d.named_child_count() as u32).saturating_sub(1)))?;
            }
            "qualified_identifier" => {
                // `A::operator bool`
                d = d.child_by_field_name("name")?;
                if d.kind() != "operator_cast" && d.kind() != "qualified_identifier" {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// `name(parameter types) qualifiers` of a function declarator, the name as
/// written (possibly qualified).
fn signature_key(fd: Ts<'_>, src: &[u8]) -> Option<(String, String)> {
    let (name, params, quals): (String, Option<Ts<'_>>, Vec<Ts<'_>>) = if fd.kind() == "operator_cast" {
        let afd = fd.child_by_field_name("declarator");
        let ty = fd.child_by_field_name("type").map(|t| compact(t, src, &|_| false)).unwrap_or_default();
        (
            format!("operator {ty}"),
            afd.and_then(|a| a.child_by_field_name("parameters")),
            afd.map(qualifiers).unwrap_or_default(),
        )
    } else {
        let n = fd.child_by_field_name("declarator")?;
        (compact(n, src, &|_| false), fd.child_by_field_name("parameters"), qualifiers(fd))
    };
    let mut key = String::from("(");
    if let Some(p) = params {
        let mut c = p.walk();
        let parts: Vec<String> =
            p.named_children(&mut c).filter(|k| k.kind() != "comment").map(|k| param_type(k, src)).collect();
        key.push_str(&parts.join(", "));
    }
    key.push(')');
    for q in quals {
        key.push(' ');
        key.push_str(&compact(q, src, &|_| false));
    }
    Some((name, key))
}

fn qualifiers(fd: Ts<'_>) -> Vec<Ts<'_>> {
    let mut c = fd.walk();
    fd.children(&mut c).filter(|k| matches!(k.kind(), "type_qualifier" | "ref_qualifier")).collect()
}

/// A parameter's type as written: its tokens without the name and the default.
fn param_type(p: Ts<'_>, src: &[u8]) -> String {
    let default = p.child_by_field_name("default_value").map(|d| d.id());
    let name = p.child_by_field_name("declarator").and_then(|d| innermost_name(d)).map(|n| n.id());
    compact(p, src, &|n| Some(n.id()) == default || Some(n.id()) == name)
}

/// The identifier a declarator declares.
fn innermost_name(mut d: Ts<'_>) -> Option<Ts<'_>> {
    loop {
        match d.kind() {
            "identifier" | "field_identifier" => return Some(d),
            _ => {
                if let Some(inner) = d.child_by_field_name("declarator") {
                    d = inner;
                    continue;
                }
                let mut c = d.walk();
                // a reference declarator's name is an unnamed child
                let next = d.named_children(&mut c).find(|k| {
                    matches!(k.kind(), "identifier" | "field_identifier") || k.kind().ends_with("declarator")
                });
                d = next?;
            }
        }
    }
}

/// What the walk of a unit collects.
#[derive(Default)]
struct Found<'t> {
    defs: Vec<Definition<'t>>,
    classes: BTreeMap<String, ClassInfo>,
    /// Per definition: whether it is local to the unit (anonymous namespace, `static`).
    local: Vec<bool>,
    /// Class bodies (with their enclosing scope), for declaration items.
    class_nodes: Vec<(Ts<'t>, String)>,
    /// Definitions without a body (`= default`, `= delete`), with their
    /// qualified names: declarations, not procedures.
    bodiless: Vec<(Ts<'t>, String)>,
    /// Declarations at namespace scope, in source order: those that
    /// initialise a variable by running code make the unit's start-up code.
    namespace_declarations: Vec<Ts<'t>>,
    /// Syntax errors among a namespace's or a class's members: text the parser
    /// could not read as a declaration or a definition, where a definition
    /// may be hidden.
    stray: Vec<Ts<'t>>,
}

fn walk<'t>(n: Ts<'t>, scope: &mut Vec<String>, anon: bool, src: &[u8], out: &mut Found<'t>) {
    match n.kind() {
        "translation_unit" | "declaration_list" | "field_declaration_list" => {
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                walk(k, scope, anon, src, out);
            }
        }
        "namespace_definition" => {
            let name = n.child_by_field_name("name").map(|x| compact(x, src, &|_| false));
            let anonymous = name.is_none();
            let parts: Vec<String> = match &name {
                Some(nm) => nm.split("::").map(String::from).collect(),
                None => vec!["(anonymous namespace)".to_string()],
            };
            let depth = scope.len();
            scope.extend(parts);
            if let Some(body) = n.child_by_field_name("body") {
                walk(body, scope, anon || anonymous, src, out);
            }
            scope.truncate(depth);
        }
        "linkage_specification" => {
            if let Some(body) = n.child_by_field_name("body") {
                walk(body, scope, anon, src, out);
            }
        }
        "template_declaration" => {
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                if k.kind() != "template_parameter_list" {
                    walk(k, scope, anon, src, out);
                }
            }
        }
        "function_definition" => definition(n, scope, anon, src, out),
        "ERROR" => out.stray.push(n),
        "class_specifier" | "struct_specifier" | "union_specifier" => {
            let Some(body) = n.child_by_field_name("body") else { return };
            let name = n
                .child_by_field_name("name")
                .map(|x| compact(x, src, &|_| false))
                .unwrap_or_else(|| "(anonymous)".to_string());
            let last = name.rsplit("::").next().unwrap_or(&name).to_string();
            let mut info = ClassInfo::default();
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                if k.kind() == "base_class_clause" {
                    let mut cc = k.walk();
                    for b in k.named_children(&mut cc) {
                        if matches!(b.kind(), "type_identifier" | "qualified_identifier" | "template_type") {
                            info.bases.push(syntax::last_name(b, src));
                        }
                    }
                }
            }
            let mut c = body.walk();
            for m in body.named_children(&mut c) {
                if m.kind() != "field_declaration" {
                    continue;
                }
                let is_static = {
                    let mut cc = m.walk();
                    m.children(&mut cc).any(|k| k.kind() == "storage_class_specifier" && src_text(k, src) == "static")
                };
                let declared = m.child_by_field_name("type").map(|t| crate::build::Declared::of_type(t, src));
                let mut cc = m.walk();
                for d in m.children_by_field_name("declarator", &mut cc) {
                    if function_declarator(d).is_none()
                        && let Some(x) = innermost_name(d)
                    {
                        let field = src_text(x, src).to_string();
                        if let Some(t) = &declared {
                            info.field_types.insert(field.clone(), t.clone());
                        }
                        if !is_static {
                            info.fields.push(field);
                        }
                    }
                }
            }
            out.classes.entry(last.clone()).or_insert(info);
            out.class_nodes.push((n, scope.join("::")));
            let depth = scope.len();
            scope.extend(name.split("::").map(String::from));
            walk(body, scope, anon, src, out);
            scope.truncate(depth);
        }
        "declaration" | "field_declaration" | "type_definition" | "friend_declaration" | "alias_declaration" => {
            if n.kind() == "declaration"
                && n.parent().is_some_and(|p| matches!(p.kind(), "translation_unit" | "declaration_list"))
            {
                out.namespace_declarations.push(n);
            }
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                if matches!(
                    k.kind(),
                    "class_specifier" | "struct_specifier" | "union_specifier" | "function_definition" | "declaration"
                ) {
                    walk(k, scope, anon, src, out);
                }
            }
        }
        _ => {}
    }
}

/// The members of namespace scope `n` is or holds: `n` itself, or what a
/// namespace, a linkage specification (`extern "C" { … }`) or a template
/// holds, each with the outermost template it is of.
fn namespace_members<'t>(n: Ts<'t>, template: Option<Ts<'t>>, out: &mut Vec<(Ts<'t>, Option<Ts<'t>>)>) {
    match n.kind() {
        "namespace_definition" | "linkage_specification" => {
            let Some(body) = n.child_by_field_name("body") else { return };
            if body.kind() != "declaration_list" {
                // `extern "C" int f(int);`
                return namespace_members(body, template, out);
            }
            let mut c = body.walk();
            for k in body.named_children(&mut c) {
                namespace_members(k, template, out);
            }
        }
        "template_declaration" => {
            let mut c = n.walk();
            for k in n.named_children(&mut c).filter(|k| k.kind() != "template_parameter_list") {
                namespace_members(k, template.or(Some(n)), out);
            }
        }
        _ => out.push((n, template)),
    }
}

/// Whether `n` is a `using namespace` directive: it declares
/// [`retest_graph::cfg::EVERY_NAME`].
pub(crate) fn is_using_directive(n: Ts<'_>) -> bool {
    let mut c = n.walk();
    n.kind() == "using_declaration" && n.children(&mut c).any(|k| k.kind() == "namespace")
}

/// The names that some declaration of the unit (at namespace scope, or a
/// class's member) declares without `noreturn`: functions that may return,
/// and variables and members one may call through. C++ overloads functions
/// and puts them in namespaces and classes, and a call is known by its name
/// alone: a name some of whose declarations return is not `noreturn`.
fn declared_without_noreturn(
    members: &[(Ts<'_>, Option<Ts<'_>>)],
    class_nodes: &[(Ts<'_>, String)],
    src: &[u8],
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |n: Ts<'_>| {
        if !matches!(n.kind(), "declaration" | "function_definition" | "field_declaration")
            || syntax::contains_token(n, src, decls::NORETURN_WORDS)
        {
            return;
        }
        let mut c = n.walk();
        for d in n.children_by_field_name("declarator", &mut c) {
            if let Some(name) = syntax::declarator_name(d, src) {
                out.insert(name);
            }
        }
    };
    for (n, _) in members {
        add(*n);
    }
    for (class, _) in class_nodes {
        let Some(body) = class.child_by_field_name("body") else { continue };
        let mut c = body.walk();
        for m in body.named_children(&mut c) {
            if m.kind() == "template_declaration" {
                let mut cc = m.walk();
                m.named_children(&mut cc).for_each(&mut add);
            } else {
                add(m);
            }
        }
    }
    out
}

/// Whether `text` (an `ERROR` node's, normalised) is explicit instantiations
/// alone, which tree-sitter-cpp cannot read (`extern template
/// FlagRegisterer::FlagRegisterer(const char*, bool*);`, `template class
/// V<int>;`): they declare no name and hold no code, so nothing is hidden
/// where the parser failed. Each must be `[extern] template` and a name with
/// its template arguments or parameter types and nothing else: no braces,
/// no `=`, no operator, and it ends as a class or a function does.
fn are_explicit_instantiations(text: &str) -> bool {
    let names_only = |p: &str| {
        p.chars().all(|c| c.is_alphanumeric() || " _:<>,*&()[]\".~".contains(c))
            && (p.ends_with(')') || p.ends_with('>') || ["const", "noexcept"].iter().any(|q| p.ends_with(q)))
    };
    // the parser's recovery may end the node on the next one's `extern`
    let text = text.strip_suffix("extern").unwrap_or(text);
    text.split(';').map(str::trim).filter(|p| !p.is_empty()).all(|p| {
        let p = p.strip_prefix("extern ").unwrap_or(p);
        p.strip_prefix("template ").is_some_and(|rest| !rest.starts_with('<') && names_only(rest))
    })
}

/// The declaration items of one member of namespace scope, as C's
/// [`decls::top_level_items`] gives them, and C++'s own: type aliases
/// (`using T = …;`), namespace aliases and concepts (types), and `using`
/// declarations and directives (what they bring into scope, by name, so
/// that a changed one affects every statement that names it). Function
/// definitions and classes are declared where they are analysed.
fn namespace_member_items(
    n: Ts<'_>,
    src: &[u8],
    span: Option<Span>,
    system: bool,
    attrs: &dyn Fn(std::ops::Range<usize>) -> String,
    out: &mut Vec<Declaration>,
) {
    let item = |kind: DeclKind, names: Vec<String>| {
        let u = syntax::mentions(n, src, &|_| false);
        Declaration {
            kind,
            mentions: u.refs.into_iter().filter(|r| !names.contains(r)).collect(),
            text: decls::sealed(normalized(n, src), system),
            names,
            span,
        }
    };
    match n.kind() {
        "declaration" | "type_definition" | "enum_specifier" => {
            decls::top_level_items(n, src, span, system, attrs, out)
        }
        "alias_declaration" | "namespace_alias_definition" | "concept_definition" => {
            if let Some(name) = n.child_by_field_name("name") {
                out.push(item(DeclKind::Type, vec![src_text(name, src).to_string()]));
            }
        }
        "using_declaration" => {
            // `using std::swap;` brings `swap`; `using namespace std;` may
            // bring any name (a new overload, one that hides another), and
            // the namespace's members are not known well enough to say which
            // (tree-sitter-cpp misreads much of libstdc++: the `std` it reads
            // lacks `vector` and `cout`): it declares every name
            let mut c = n.walk();
            let Some(last) = n.named_children(&mut c).last() else { return };
            let mut names = vec![syntax::last_name(last, src)];
            if is_using_directive(n) {
                names.push(retest_graph::cfg::EVERY_NAME.to_string());
            }
            out.push(item(DeclKind::Other, names));
        }
        _ => {}
    }
}

/// A function definition found at `scope`.
fn definition<'t>(n: Ts<'t>, scope: &[String], anon: bool, src: &[u8], out: &mut Found<'t>) {
    let Some(decl) = n.child_by_field_name("declarator") else { return };
    let Some(fd) = function_declarator(decl) else { return };
    let Some((name, key)) = signature_key(fd, src) else { return };
    let mut full: Vec<String> = scope.to_vec();
    full.extend(name.split("::").filter(|s| !s.is_empty()).map(String::from));
    let qualified = full.join("::");
    // the class a method belongs to: the scope component before the name
    let class = (full.len() >= 2).then(|| full[full.len() - 2].clone());
    let head_words: Vec<&str> = {
        let mut c = n.walk();
        n.children(&mut c)
            .filter(|k| Some(k.id()) != n.child_by_field_name("body").map(|b| b.id()))
            .map(|k| src_text(k, src))
            .collect()
    };
    let is_static = head_words.contains(&"static") && class.as_ref().is_none_or(|c| !out.classes.contains_key(c));
    let evaluation = evaluation_of(&head_words);
    if n.child_by_field_name("body").is_none() {
        // `= default` / `= delete`: what it declares is in its text
        out.bodiless.push((n, qualified));
        return;
    }
    let mut def = Definition::of_node(n, format!("{qualified}{key}"));
    def.class = class;
    def.evaluation = evaluation;
    if let Some(body) = def.body.filter(|b| b.kind() == "try_statement") {
        // a function-try-block: the entry is recorded inside the `try` block
        def.braces = body.child_by_field_name("body").map(|b| (b.start_byte(), b.end_byte() - 1));
    }
    let body = def.body;
    let enclosing = qualified.clone();
    out.defs.push(def);
    out.local.push(anon || is_static);
    if let Some(body) = body {
        lambdas(body, &enclosing, src, out);
        local_classes(body, &enclosing, src, out);
    }
}

/// The lambdas directly in `body` (and, recursively, theirs), as definitions.
fn lambdas<'t>(body: Ts<'t>, enclosing: &str, src: &[u8], out: &mut Found<'t>) {
    for (k, lbody) in lambda_bodies(body).into_iter().enumerate() {
        let Some(l) = lbody.parent() else { continue };
        let name = format!("{enclosing}::lambda#{}", k + 1);
        let head: Vec<Ts<'t>> = {
            let mut c = l.walk();
            l.children(&mut c).filter(|x| x.id() != lbody.id()).collect()
        };
        let declarator = head.iter().copied().find(|x| x.kind() == "abstract_function_declarator");
        let mut def = Definition::of_node(l, name.clone());
        // `[]() consteval {…}` runs only while compiling
        def.evaluation = match evaluation_of(&head.iter().map(|x| src_text(*x, src)).collect::<Vec<_>>()) {
            Evaluation::Consteval => Evaluation::Consteval,
            _ => Evaluation::Lambda,
        };
        def.head = head;
        def.declarator = declarator;
        def.body = Some(lbody);
        def.braces = Some((lbody.start_byte(), lbody.end_byte() - 1));
        out.defs.push(def);
        out.local.push(true);
        lambdas(lbody, &name, src, out);
    }
}

/// Classes defined inside a function body: their methods are procedures too.
fn local_classes<'t>(body: Ts<'t>, enclosing: &str, src: &[u8], out: &mut Found<'t>) {
    let mut stack = vec![body];
    while let Some(x) = stack.pop() {
        if matches!(x.kind(), "class_specifier" | "struct_specifier" | "union_specifier")
            && x.child_by_field_name("body").is_some()
        {
            let mut scope = vec![enclosing.to_string()];
            walk(x, &mut scope, true, src, out);
            continue;
        }
        if x.kind() == "lambda_expression" {
            continue; // handled with the lambda
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
}

/// The name of an ordinary member function declared or defined by `m` (a
/// member of a class body): not virtual, `override` or `final`, not a
/// constructor, destructor, operator or conversion, not a template. Such a
/// member is not part of the class's layout: only code that names it can
/// reach it.
fn ordinary_member(m: Ts<'_>, class: &str, src: &[u8]) -> Option<String> {
    if !matches!(m.kind(), "function_definition" | "field_declaration" | "declaration") {
        return None;
    }
    let mut c = m.walk();
    if m.children(&mut c).any(|k| k.kind() == "virtual" || (k.kind() == "virtual_specifier")) {
        return None;
    }
    let mut c = m.walk();
    let declarators: Vec<Ts<'_>> = m.children_by_field_name("declarator", &mut c).collect();
    let [d] = declarators[..] else { return None };
    let f = function_declarator(d)?;
    if f.kind() != "function_declarator" {
        return None;
    }
    let mut c = f.walk();
    if f.children(&mut c).any(|k| k.kind() == "virtual_specifier") {
        return None;
    }
    let name = f.child_by_field_name("declarator")?;
    if !matches!(name.kind(), "field_identifier" | "identifier") {
        return None;
    }
    let name = src_text(name, src).to_string();
    (name != class).then_some(name)
}

/// Whether `x` is a type that a data member or a template argument names only
/// behind a pointer or a reference: the type of a data member all of whose
/// declarators are pointers or references (`Edge* in_, *out_;`, `Node& n;`),
/// or of a template argument that is one (`std::vector<Edge*>`). A class that
/// holds such a member does not depend on the pointed-to class's layout:
/// storing, copying or comparing the pointer does not look inside it, and
/// code that looks inside (`e->weight_`, `e->weight()`) names the member it
/// reads, which the pointed-to class declares; code that uses the pointed-to
/// object whole (`*p.e_ = *q.e_`) names the pointer member, which is declared
/// on its own with the pointed-to type as a mention
/// (`a_class_that_only_points_to_another_does_not_mention_it`).
/// A by-value member, a smart pointer (`std::unique_ptr<Edge>` destroys an
/// `Edge`), a default initialiser or an array bound still mentions it.
fn pointed_to_type(x: Ts<'_>) -> bool {
    let Some(p) = x.parent() else { return false };
    if p.child_by_field_name("type").is_none_or(|t| t.id() != x.id()) {
        return false;
    }
    let indirect = |d: Ts<'_>| {
        matches!(
            d.kind(),
            "pointer_declarator"
                | "reference_declarator"
                | "abstract_pointer_declarator"
                | "abstract_reference_declarator"
        )
    };
    match p.kind() {
        "field_declaration" => {
            let mut c = p.walk();
            let mut ds = p.children_by_field_name("declarator", &mut c).peekable();
            ds.peek().is_some() && ds.all(indirect)
        }
        "type_descriptor" => p.child_by_field_name("declarator").is_some_and(indirect),
        _ => false,
    }
}

/// Whether a data member's declaration names a type only behind a pointer or
/// reference somewhere ([`pointed_to_type`]).
fn holds_pointed_to_type(m: Ts<'_>) -> bool {
    let mut stack = vec![m];
    while let Some(x) = stack.pop() {
        if pointed_to_type(x) {
            return true;
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    false
}

/// A class definition as declaration items. The class's layout — its text with
/// every member function's body shown as `{…}` and its ordinary member
/// functions (see [`ordinary_member`]) left out — is declared under the class's
/// name and the names of its data members, so that a changed base, data
/// member, virtual function, constructor, destructor or operator affects every
/// statement that names the class or one of its members. Each ordinary member
/// function is declared on its own under its name, with the class's name and
/// its signature as its text: adding one (the seed's `which_floor`, 003 §3.2)
/// affects only code that names it.
fn class_declaration(n: Ts<'_>, scope: &str, src: &[u8], span: Option<Span>, system: bool) -> Vec<Declaration> {
    let Some(name) = n.child_by_field_name("name").map(|x| compact(x, src, &|_| false)) else { return Vec::new() };
    let last = name.rsplit("::").next().unwrap_or(&name).to_string();
    let qualified = if scope.is_empty() { name.clone() } else { format!("{scope}::{name}") };
    let bodies: BTreeSet<usize> = {
        let mut ids = BTreeSet::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if x.kind() == "function_definition"
                && let Some(b) = x.child_by_field_name("body")
            {
                ids.insert(b.id());
                continue;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        ids
    };
    let mut ordinary: BTreeMap<usize, String> = BTreeMap::new();
    let mut data_members = Vec::new();
    // data members whose type names a class behind a pointer or reference
    let mut pointer_members: Vec<(Vec<String>, Ts<'_>)> = Vec::new();
    if let Some(body) = n.child_by_field_name("body") {
        let mut c = body.walk();
        for m in body.named_children(&mut c) {
            if let Some(f) = ordinary_member(m, &last, src) {
                ordinary.insert(m.id(), f);
            } else if m.kind() == "field_declaration" {
                let mut cc = m.walk();
                let mut names = Vec::new();
                for d in m.children_by_field_name("declarator", &mut cc) {
                    if function_declarator(d).is_none()
                        && let Some(x) = innermost_name(d)
                    {
                        names.push(src_text(x, src).to_string());
                    }
                }
                if !names.is_empty() && holds_pointed_to_type(m) {
                    pointer_members.push((names.clone(), m));
                }
                data_members.extend(names);
            }
        }
    }
    let skip = |x: Ts<'_>| bodies.contains(&x.id()) || ordinary.contains_key(&x.id());
    let text = syntax::normalized_with(n, src, &|x| {
        if ordinary.contains_key(&x.id()) {
            Some("".into())
        } else {
            bodies.contains(&x.id()).then_some("{…}".into())
        }
    });
    // the layout's mentions: a type named only behind a pointer or reference
    // (`Edge* e;`, `std::set<Edge*> delayed_;`) is no part of the layout
    let u = syntax::mentions(n, src, &|x| skip(x) || pointed_to_type(x));
    let mut names = vec![last.clone()];
    if qualified != last {
        names.push(qualified.clone());
    }
    names.extend(data_members.iter().filter(|m| **m != last).cloned());
    names.sort();
    names.dedup();
    let mut out = vec![Declaration {
        kind: DeclKind::Tag,
        mentions: u.refs.into_iter().filter(|r| !names.contains(r)).collect(),
        names,
        text: decls::sealed(text, system),
        span,
    }];
    // such a member is declared on its own too, with every name its type
    // mentions: code that reaches the pointed-to object through it (`*p.e_ =
    // *q.e_`, `sizeof *p.e_`) names the member, not the pointed-to class
    for (names, m) in pointer_members {
        let u = syntax::mentions(m, src, &skip);
        out.push(Declaration {
            kind: DeclKind::Variable,
            mentions: u.refs.into_iter().filter(|r| !names.contains(r)).collect(),
            text: decls::sealed(format!("{qualified} :: {}", syntax::normalized_with(m, src, &|_| None)), system),
            names,
            span,
        });
    }
    if let Some(body) = n.child_by_field_name("body") {
        // the class's head (its name and bases): a new base can make a member
        // override, or hide, what it did not before
        let head = {
            let mut c = n.walk();
            let parts: Vec<Ts<'_>> = n.children(&mut c).filter(|k| k.id() != body.id()).collect();
            syntax::normalized_siblings(&parts, src)
        };
        let mut c = body.walk();
        for m in body.named_children(&mut c) {
            let Some(f) = ordinary.get(&m.id()).cloned().or_else(|| virtual_member(m, src)) else { continue };
            let sig = syntax::normalized_with(m, src, &|x| bodies.contains(&x.id()).then_some("{…}".into()));
            let u = syntax::mentions(m, src, &|x| bodies.contains(&x.id()));
            out.push(Declaration {
                kind: DeclKind::Function,
                mentions: u.refs.into_iter().filter(|r| *r != f).collect(),
                names: vec![format!("{qualified}::{f}")],
                text: decls::sealed(format!("{head} :: {sig}"), system),
                span,
            });
        }
    }
    out
}

/// A class definition as the class hierarchy sees it: its qualified name,
/// its bases and its member functions (003 §5.2).
fn class_of(n: Ts<'_>, scope: &str, src: &[u8], span: Option<Span>) -> Option<Class> {
    let name = n.child_by_field_name("name").map(|x| compact(x, src, &|_| false))?;
    let qualified = if scope.is_empty() { name.clone() } else { format!("{scope}::{name}") };
    let last = qualified.rsplit("::").next().unwrap_or(&qualified).to_string();
    let mut bases = Vec::new();
    let mut c = n.walk();
    for k in n.named_children(&mut c) {
        if k.kind() == "base_class_clause" {
            let mut cc = k.walk();
            for b in k.named_children(&mut cc) {
                if matches!(b.kind(), "type_identifier" | "qualified_identifier" | "template_type") {
                    bases.push(syntax::last_name(b, src));
                }
            }
        }
    }
    let body = n.child_by_field_name("body")?;
    let mut public = n.kind() != "class_specifier";
    let mut methods = Vec::new();
    let mut c = body.walk();
    for m in body.named_children(&mut c) {
        if m.kind() == "access_specifier" {
            public = src_text(m, src).trim_end_matches(':').trim() == "public";
            continue;
        }
        // a member template declares its member as any other
        let m = if m.kind() == "template_declaration" {
            let mut cc = m.walk();
            let inner = m.named_children(&mut cc).find(|k| k.kind() != "template_parameter_list");
            match inner {
                Some(i) => i,
                None => continue,
            }
        } else {
            m
        };
        if !matches!(m.kind(), "function_definition" | "field_declaration" | "declaration") {
            continue;
        }
        let mut cc = m.walk();
        let virtual_kw = m.children(&mut cc).any(|k| k.kind() == "virtual");
        let mut cc = m.walk();
        for d in m.children_by_field_name("declarator", &mut cc) {
            let Some(fd) = function_declarator(d) else { continue };
            let Some((mname, key)) = signature_key(fd, src) else { continue };
            let mname = mname.rsplit("::").next().unwrap_or(&mname).to_string();
            let mut k = fd.walk();
            let specifier = fd.children(&mut k).any(|x| x.kind() == "virtual_specifier");
            let kind = if mname == last {
                MethodKind::Constructor
            } else if mname.starts_with('~') {
                MethodKind::Destructor
            } else if mname.starts_with("operator") {
                MethodKind::Operator
            } else {
                MethodKind::Ordinary
            };
            let (min_args, max_args) = arity(fd, src);
            methods.push(Method {
                key: format!("{qualified}::{mname}{key}"),
                name: mname,
                kind,
                is_virtual: virtual_kw || specifier,
                public,
                min_args,
                max_args,
            });
        }
    }
    Some(Class { name: qualified, bases, methods, span })
}

/// The fewest and most arguments a call of the function declared by `fd`
/// passes (`None`: no most, a variadic function or a parameter pack).
fn arity(fd: Ts<'_>, src: &[u8]) -> (u32, Option<u32>) {
    let params = if fd.kind() == "operator_cast" {
        fd.child_by_field_name("declarator").and_then(|a| a.child_by_field_name("parameters"))
    } else {
        fd.child_by_field_name("parameters")
    };
    let Some(p) = params else { return (0, Some(0)) };
    let (mut min, mut max, mut variadic) = (0u32, 0u32, false);
    let mut c = p.walk();
    for k in p.children(&mut c) {
        match k.kind() {
            "parameter_declaration" => {
                // `(void)` declares no parameter
                if k.child_by_field_name("declarator").is_none() && src_text(k, src).trim() == "void" {
                    continue;
                }
                min += 1;
                max += 1;
            }
            "optional_parameter_declaration" => max += 1,
            "variadic_parameter_declaration" | "..." => variadic = true,
            _ => {}
        }
    }
    (min, (!variadic).then_some(max))
}

/// The name of a virtual member function declared or defined by `m` (a member
/// of a class body: `virtual`, `override` or `final`), not a destructor or
/// operator. It is declared under its name as well as in the class's layout:
/// a call `p->m(…)` names `m` (see `syntax::uses`), and may reach every
/// override of `m` in the classes derived from the static type of `p`
/// (003 §5.2). A new, removed or changed override, anywhere in the program,
/// changes what that name declares, so every call that names it counts as
/// affected: the conservative target set of a polymorphic call, every method
/// of that name.
fn virtual_member(m: Ts<'_>, src: &[u8]) -> Option<String> {
    if !matches!(m.kind(), "function_definition" | "field_declaration" | "declaration") {
        return None;
    }
    let mut c = m.walk();
    let declarators: Vec<Ts<'_>> = m.children_by_field_name("declarator", &mut c).collect();
    let [d] = declarators[..] else { return None };
    let f = function_declarator(d)?;
    let mut c = m.walk();
    let virtual_kw = m.children(&mut c).any(|k| k.kind() == "virtual");
    let mut c = f.walk();
    let specifier = f.children(&mut c).any(|k| k.kind() == "virtual_specifier");
    if !virtual_kw && !specifier {
        return None;
    }
    let name = f.child_by_field_name("declarator")?;
    matches!(name.kind(), "field_identifier" | "identifier").then(|| src_text(name, src).to_string())
}

/// Whether a declaration at namespace scope initialises a variable by running
/// code when the unit is loaded (C++ dynamic initialisation): an initialiser
/// that calls, constructs with `new` or holds a lambda; a variable of one of
/// the unit's classes, or of a template type, constructed (with or without
/// arguments). Not a declaration of a function or an `extern` one, not a
/// `constexpr` or `constinit` variable (initialised while compiling), and not
/// a variable of a `std::` type initialised without a call (a string or
/// table constant: its value is all it makes, and a change to it affects the
/// code that names it).
fn runs_code_to_initialise(d: Ts<'_>, src: &[u8], classes: &BTreeMap<String, ClassInfo>) -> bool {
    let mut c = d.walk();
    let head: Vec<Ts<'_>> = d.children(&mut c).collect();
    if head.iter().any(|k| matches!(src_text(*k, src), "constexpr" | "constinit" | "typedef" | "using")) {
        return false;
    }
    let is_extern = head.iter().any(|k| k.kind() == "storage_class_specifier" && src_text(*k, src) == "extern");
    let Some(ty) = d.child_by_field_name("type") else { return false };
    let std_type = src_text(ty, src).trim_start_matches("::").starts_with("std::");
    let class_type = !std_type
        && match ty.kind() {
            "template_type" => true,
            "type_identifier" | "qualified_identifier" | "class_specifier" | "struct_specifier" => {
                classes.contains_key(&syntax::last_name(ty, src))
            }
            _ => false,
        };
    let mut c = d.walk();
    let declarators: Vec<Ts<'_>> = d.children_by_field_name("declarator", &mut c).collect();
    declarators.iter().any(|decl| {
        if function_declarator(*decl).is_some() && decl.kind() != "init_declarator" {
            return false; // a function's declaration
        }
        let runs = |x: Ts<'_>| syntax::contains_kind(x, &["call_expression", "new_expression", "lambda_expression"]);
        match decl.kind() {
            "init_declarator" => {
                let value = decl.child_by_field_name("value");
                value.is_some_and(runs) || (class_type && !pointer(decl.child_by_field_name("declarator")))
            }
            // `T x;`: a class's default constructor, unless only declared here
            _ => class_type && !is_extern && !pointer(Some(*decl)),
        }
    })
}

/// Whether a declarator declares a pointer or reference (no constructor runs).
fn pointer(d: Option<Ts<'_>>) -> bool {
    d.is_some_and(|d| matches!(d.kind(), "pointer_declarator" | "reference_declarator"))
}

/// When a function whose head has these words may run.
fn evaluation_of(head_words: &[&str]) -> Evaluation {
    if head_words.contains(&"consteval") {
        Evaluation::Consteval
    } else if head_words.contains(&"constexpr") {
        Evaluation::Constexpr
    } else {
        Evaluation::RunTime
    }
}

/// What the C++ dialect a unit is compiled in lets its instrumentation write.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Dialect {
    /// C++14 or later: a `constexpr` function may hold statements besides
    /// its `return`, so it can hold guarded probes.
    pub constexpr_statements: bool,
}

impl Dialect {
    /// The default of GCC since 11 and Clang since 16 (`gnu++17`).
    pub const DEFAULT: Dialect = Dialect { constexpr_statements: true };

    /// The dialect a compiler command line selects: its last `-std=`, or the
    /// compiler's default.
    pub fn of_flags(flags: &[String]) -> Dialect {
        let std = flags.iter().rev().find_map(|f| f.strip_prefix("-std=").or_else(|| f.strip_prefix("--std=")));
        match std {
            Some(s) => {
                let version = s.trim_start_matches("gnu++").trim_start_matches("c++");
                let before_14 = s.contains("++") && matches!(version, "98" | "03" | "0x" | "11");
                Dialect { constexpr_statements: !before_14 }
            }
            None => Dialect::DEFAULT,
        }
    }
}

/// Analyses a preprocessed C++ translation unit compiled in `dialect`.
pub fn analyze(pre: &Preprocessed, is_own: &dyn Fn(&SourceFile) -> bool, dialect: Dialect) -> TuAnalysis {
    let trees = parse_unit(pre, is_own);
    let src = pre.text.as_bytes();
    let locate = |row: u32| pre.map.lookup(row);
    let span_at = |start: tree_sitter::Point, end: tree_sitter::Point| pre.span_at(start, end);
    let file_at = |row: usize| pre.file_at(row);
    let top = top_level(&trees);
    let mut found = Found::default();
    for n in top.iter().filter(|n| n.is_named()) {
        walk(*n, &mut Vec::new(), false, src, &mut found);
    }

    let mut noreturn = BTreeSet::new();
    let mut returning = BTreeSet::new();
    let mut typedefs = BTreeSet::new();
    // the members of every namespace (the global one, named and anonymous
    // ones, `extern "C"` blocks), each with the template it is of
    let mut members = Vec::new();
    for n in &top {
        namespace_members(*n, None, &mut members);
    }
    for (n, _) in &members {
        decls::noreturn_names(*n, src, &mut noreturn);
        decls::returning_names(*n, src, &mut returning);
        decls::typedef_names(*n, src, &mut typedefs);
    }
    // a call ends at the exit only if nothing of its name may return:
    // overloads, functions of other namespaces and members share names
    let callable = declared_without_noreturn(&members, &found.class_nodes, src);
    noreturn.retain(|n| !callable.contains(n));
    let hidden = |r: std::ops::Range<usize>| pre.attributes_within(r);
    let own = |n: Ts<'_>| file_at(n.start_position().row).is_some_and(is_own);
    let facts = TuFacts {
        src,
        locate: &locate,
        noreturn: &noreturn,
        typedefs: &typedefs,
        hidden_attributes: &hidden,
        cpp: true,
        constexpr_statements: dialect.constexpr_statements,
        classes: &found.classes,
    };
    let syntax_error = top
        .iter()
        .find_map(|n| syntax::first_error(*n, src, &own))
        .and_then(|n| span_at(n.start_position(), n.end_position()));
    let mut decls_out: Vec<Declaration> = Vec::new();
    let mut functions = Vec::new();
    let mut sites = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let mut completes = Vec::new();
    let mut guarded = Vec::new();
    let mut address_taken = BTreeSet::new();
    let mut seen_names: BTreeMap<String, usize> = BTreeMap::new();
    for (d, local) in found.defs.iter().zip(&found.local) {
        let span = span_at(d.range.start_point, d.range.end_point);
        let file = file_at(d.range.start_point.row);
        let system = file.is_none_or(|f| f.system);
        let own = file.is_some_and(is_own);
        decls_out.push(function_declaration(d, src, span, system, !own, &found.classes));
        if !own {
            continue;
        }
        // an inline method defined twice in one unit cannot be; a name that repeats
        // (two lambdas of a template instantiated… no: one definition each) keeps apart
        let mut name = d.name.clone();
        let count = seen_names.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            name = format!("{name}#{count}");
        }
        if name.contains("::lambda#") {
            address_taken.insert(name.clone());
        }
        let cfgs = build_function(d, &facts);
        problems.extend(cfgs.problems.iter().cloned());
        sites.push(cfgs.sites);
        guarded.push(cfgs.guarded);
        completes.push(cfgs.completes_unless_calls);
        functions.push(Procedure {
            name,
            is_static: *local,
            span,
            cond: cfgs.cond,
            stmt: cfgs.stmt,
            map: cfgs.map,
            probes: cfgs.probes,
            locals: cfgs.locals,
            unanalysable: cfgs.unanalysable,
            digest: xxhash_rust::xxh3::xxh3_64(
                format!("{} {}", d.signature(src), d.body.map(|b| normalized(b, src)).unwrap_or_default()).as_bytes(),
            ),
        });
    }
    // the unit's start-up code: a procedure of its own (build::startup_procedure)
    if pre.files.first().is_some_and(is_own) {
        let names = syntax::Names { locals: &BTreeSet::new(), typedefs: &typedefs, cpp: true };
        let inits: Vec<crate::build::Initialiser> = found
            .namespace_declarations
            .iter()
            .filter(|d| file_at(d.start_position().row).is_some_and(is_own))
            .filter(|d| runs_code_to_initialise(**d, src, &found.classes))
            .map(|d| {
                let u = syntax::uses_in(*d, src, &names, &|_| false);
                crate::build::Initialiser {
                    text: normalized(*d, src),
                    span: span_at(d.start_position(), d.end_position()),
                    refs: u.refs.into_iter().collect(),
                    calls: u.calls,
                }
            })
            .collect();
        let digest =
            xxhash_rust::xxh3::xxh3_64(inits.iter().map(|i| i.text.as_str()).collect::<Vec<_>>().join("\n").as_bytes());
        let cfgs = crate::build::startup_procedure(inits);
        sites.push(cfgs.sites);
        guarded.push(false);
        completes.push(cfgs.completes_unless_calls);
        functions.push(Procedure {
            name: crate::build::STARTUP.to_string(),
            is_static: true,
            span: None,
            cond: cfgs.cond,
            stmt: cfgs.stmt,
            map: cfgs.map,
            probes: cfgs.probes,
            locals: cfgs.locals,
            unanalysable: None,
            digest,
        });
    }
    // what the parser could not read among the project's declarations: any
    // change to the unit selects every test (as a C unit's code outside every
    // function does)
    let mut unattributed_error = None;
    for n in found.stray.iter().filter(|n| own(**n) && !are_explicit_instantiations(&normalized(**n, src))) {
        let p = Problem {
            span: span_at(n.start_position(), n.end_position()),
            message: format!(
                "syntax error outside any function: `{}`",
                crate::tu::first_chars(&normalized(*n, src), 60)
            ),
        };
        problems.push(p.clone());
        unattributed_error.get_or_insert(p);
    }
    let mut classes = Vec::new();
    for (n, scope) in &found.class_nodes {
        let system = file_at(n.start_position().row).is_none_or(|f| f.system);
        if !system && let Some(c) = class_of(*n, scope, src, span_at(n.start_position(), n.end_position())) {
            classes.push(c);
        }
        decls_out.extend(class_declaration(*n, scope, src, span_at(n.start_position(), n.end_position()), system));
    }
    for (n, qualified) in &found.bodiless {
        let system = file_at(n.start_position().row).is_none_or(|f| f.system);
        let text = normalized(*n, src);
        let u = syntax::mentions(*n, src, &|_| false);
        let last = qualified.rsplit("::").next().unwrap_or(qualified).to_string();
        let mut names = vec![last.clone()];
        if *qualified != last {
            names.push(qualified.clone());
        }
        decls_out.push(Declaration {
            kind: DeclKind::Function,
            mentions: u.refs.into_iter().filter(|r| !names.contains(r)).collect(),
            names,
            text: decls::sealed(text, system),
            span: span_at(n.start_position(), n.end_position()),
        });
    }
    for (n, template) in &members {
        let system = file_at(n.start_position().row).is_none_or(|f| f.system);
        let at = decls_out.len();
        namespace_member_items(*n, src, span_at(n.start_position(), n.end_position()), system, &hidden, &mut decls_out);
        if let Some(t) = template {
            // a template's head is part of what each item declares
            for d in &mut decls_out[at..] {
                d.text = decls::sealed(normalized(*t, src), system);
            }
        }
    }
    decls_out.sort_by_key(|d| d.span.map(|s| (s.file, s.line, s.col)));
    let declared_returning: BTreeSet<&str> =
        returning.iter().filter(|n| !noreturn.contains(*n)).map(String::as_str).collect();
    let completes = crate::tu::derive_unit_probes(&mut functions, &completes, &declared_returning);
    TuAnalysis {
        unit: Unit {
            files: pre.files.clone(),
            procedures: functions,
            decls: decls_out,
            address_taken: address_taken.into_iter().collect(),
            noreturn: noreturn.into_iter().collect(),
            problems,
            classes,
            unattributed_error,
            // the loader enters the start-up code
            entry_points: crate::build::ENTRY_POINTS
                .iter()
                .copied()
                .chain([crate::build::STARTUP])
                .map(String::from)
                .collect(),
            returns_twice: crate::build::RETURNS_TWICE.iter().map(|s| s.to_string()).collect(),
        },
        sites,
        completes,
        cpp: true,
        guarded,
        syntax_error,
    }
}

/// A definition's declaration item: its signature, or — for a function that may
/// run while compiling, or one the project does not own (`body`: it gets no
/// CFG, as an inline function of a header reached through `-isystem`) — its
/// whole text, so that a change to its body is a change of what every use of
/// its name means.
fn function_declaration(
    d: &Definition<'_>,
    src: &[u8],
    span: Option<Span>,
    system: bool,
    body: bool,
    classes: &BTreeMap<String, ClassInfo>,
) -> Declaration {
    let qualified = retest_graph::unit::qualified_name(&d.name);
    let last = qualified.rsplit("::").next().unwrap_or("").to_string();
    let mut text = d.signature(src);
    let mut mentions = BTreeSet::new();
    for h in &d.head {
        mentions.extend(syntax::mentions(*h, src, &|_| false).refs);
    }
    if (body || d.evaluation.body_is_declaration())
        && let Some(b) = d.body
    {
        text.push(' ');
        text.push_str(&normalized(b, src));
        mentions.extend(syntax::uses(b, src, &BTreeSet::new(), &|_| false).refs);
    }
    mentions.remove(&last);
    // a member function is declared under its class's name: a call reaches
    // it through the class hierarchy, which selection asks for its targets'
    // declarations (`retest_select::equiv`), not every function of its name
    let member = d.class.as_ref().is_some_and(|c| classes.contains_key(c));
    Declaration {
        kind: DeclKind::Function,
        names: vec![if member { qualified.to_string() } else { last }],
        text: decls::sealed(text, system),
        mentions: mentions.into_iter().collect(),
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::Dialect;
    use crate::preprocess::Preprocessed;

    /// The procedures of preprocessed C++ `text`, by name, and the unit's
    /// error outside every function; every file but `sys.h` the project's.
    fn analysed(text: &str) -> (Vec<String>, Option<retest_graph::Problem>) {
        let pre = Preprocessed::from_output(text.to_string());
        let unit = super::analyze(&pre, &|f| f.path != "sys.h", Dialect::DEFAULT).unit;
        (unit.procedures.iter().map(|p| p.name.clone()).collect(), unit.unattributed_error)
    }

    const AFTER: &str = "# 2 \"u.cpp\" 2\nnamespace q { int f(int x) { if (x) return 1; return 2; } }\n\
                         int g(int y) { return y ? 3 : 4; }\n";

    /// A header whose text the parser cannot close (as it cannot some of
    /// libstdc++'s: after `<iostream>` the unit's next function was once not
    /// found at all) does not take in the project's code that follows it.
    #[test]
    fn a_header_the_parser_misreads_does_not_take_in_the_code_after_it() {
        let header = "# 1 \"u.cpp\"\n# 1 \"sys.h\" 1 3\n\
                      template<class T> struct A { void f() { T::template g<int>(); } ;\n";
        let text = format!("{header}{AFTER}");
        // the input still exercises it: parsed whole, the header's node holds the rest
        let whole = super::parse(&Preprocessed::from_output(text.clone()).text);
        let root = whole.root_node();
        assert_eq!(root.child_count(), 1, "{root:?}");
        assert_eq!(root.child(0).unwrap().start_position().row, 2);
        let (names, stray) = analysed(&text);
        assert_eq!(names, ["q::f(int)", "g(int)", "<static initialisation>"]);
        assert_eq!(stray, None);
    }

    /// The project's code may hold a header (`extern "C" { #include <h.h> }`):
    /// read as the whole parse reads it, the header's declarations and the
    /// project's functions around them all found.
    #[test]
    fn the_projects_code_around_a_header_is_read_whole() {
        let text = format!(
            "# 1 \"u.cpp\"\nextern \"C\" {{\nint before(int a) {{ return a ? 1 : 2; }}\n\
             # 1 \"sys.h\" 1 3\nint puts(const char *);\n# 3 \"u.cpp\" 2\n}}\n{AFTER}"
        );
        let pre = Preprocessed::from_output(text.clone());
        let unit = super::analyze(&pre, &|f| f.path != "sys.h", Dialect::DEFAULT).unit;
        let names: Vec<&str> = unit.procedures.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["before(int)", "q::f(int)", "g(int)", "<static initialisation>"]);
        assert!(unit.decls.iter().any(|d| d.names.iter().any(|n| n == "puts")), "{:?}", unit.decls);
        assert_eq!(unit.unattributed_error, None);
    }

    /// Declarations in namespaces, `extern "C"` blocks and templates are the
    /// unit's declarations, as those of the global namespace are: variables,
    /// typedefs and aliases, enumerators, prototypes, variable templates (with
    /// their head), namespace aliases and `using` declarations.
    #[test]
    fn declarations_in_every_namespace_scope_are_declarations() {
        let text = "# 1 \"u.cpp\"\n\
                    namespace n { const int LIMIT = 10; typedef int T; using U = long; enum E { A, B = 2 };\n\
                    namespace inner { int v; } template <class X> constexpr X pi = X(3); int f() { return LIMIT; } }\n\
                    extern \"C\" { int cap = 3; int api(int); }\nextern \"C\" int one(void);\n\
                    namespace fs = n::inner;\nusing n::f;\nconst int TOP = 1;\n";
        let pre = Preprocessed::from_output(text.to_string());
        let unit = super::analyze(&pre, &|_| true, Dialect::DEFAULT).unit;
        let got: Vec<(retest_graph::DeclKind, String, &str)> =
            unit.decls.iter().map(|d| (d.kind, d.names.join(" "), d.text.as_str())).collect();
        use retest_graph::DeclKind::*;
        assert_eq!(
            got,
            [
                (Variable, "LIMIT".to_string(), "const int LIMIT = 10 ;"),
                (Type, "T".to_string(), "typedef int T ;"),
                (Type, "U".to_string(), "using U = long ;"),
                (Enumerator, "E A B".to_string(), "enum E { A , B = 2 }"),
                (Variable, "v".to_string(), "int v ;"),
                (Variable, "pi".to_string(), "template < class X > constexpr X pi = X ( 3 ) ;"),
                (Function, "f".to_string(), "int f ( )"),
                (Variable, "cap".to_string(), "int cap = 3 ;"),
                (Function, "api".to_string(), "int api ( int ) ;"),
                (Function, "one".to_string(), "int one ( void ) ;"),
                (Type, "fs".to_string(), "namespace fs = n :: inner ;"),
                (Other, "f".to_string(), "using n :: f ;"),
                (Variable, "TOP".to_string(), "const int TOP = 1 ;"),
            ]
        );
    }

    /// A function of a header that is not the project's gets no CFG, so its
    /// declaration holds its body: a change to the body changes it.
    #[test]
    fn a_function_the_project_does_not_own_is_declared_with_its_body() {
        let decl = |body: &str| {
            let text = format!(
                "# 1 \"u.cpp\"\n# 1 \"sys.h\" 1 3\ninline int twice(int v) {{ {body} }}\n# 2 \"u.cpp\" 2\n\
                 int f() {{ return twice(2); }}\n"
            );
            let pre = Preprocessed::from_output(text);
            let unit = super::analyze(&pre, &|f| f.path != "sys.h", Dialect::DEFAULT).unit;
            let d = unit.decls.iter().find(|d| d.names == ["twice"]).expect("twice is declared").clone();
            assert!(d.text.starts_with('#'), "a system header's declaration is sealed: {}", d.text);
            d.text
        };
        assert_ne!(decl("return 2 * v;"), decl("return 3 * v;"));
        assert_eq!(decl("return 2 * v;"), decl("return  2*v;"));
    }

    /// A call ends at the exit only when every declaration of its name is
    /// `noreturn`: a namespace's `[[noreturn]]` function is one, a name also
    /// declared by a function that returns or by a member is not (nor is a
    /// member function: a member's `noreturn` is not used).
    #[test]
    fn a_name_is_noreturn_only_if_nothing_of_that_name_returns() {
        let text = "# 1 \"u.cpp\"\n\
                    namespace a { [[noreturn]] void die(); [[noreturn]] void fail(const char *); }\n\
                    namespace b { int fail(int); }\n\
                    struct S { [[noreturn]] void stop(); void halt(); };\n\
                    namespace c { [[noreturn]] void halt(); }\n";
        let pre = Preprocessed::from_output(text.to_string());
        let unit = super::analyze(&pre, &|_| true, Dialect::DEFAULT).unit;
        assert_eq!(unit.noreturn, ["die"]);
    }

    /// Explicit instantiations the parser cannot read hide nothing: no error
    /// of the unit's; anything else in the same unread text still is one.
    #[test]
    fn unread_explicit_instantiations_are_no_error_outside_a_function() {
        let prelude = "# 1 \"u.cpp\"\nstruct FR { template <class T> FR(T *a) {} };\n";
        let text = format!(
            "{prelude}extern template FR::FR(int *);\nextern template FR::FR(long *);\n\
             extern template FR::FR(double *);\nint after(int x) {{ return x + 1; }}\n"
        );
        let (names, stray) = analysed(&text);
        assert_eq!(names, ["FR::FR(T*)", "after(int)", "<static initialisation>"]);
        assert_eq!(stray, None);
        for yes in [
            "extern template FR :: FR ( int * ) ;",
            "extern template __attribute__ ( ( visibility ( \"default\" ) ) ) FR :: FR ( const char * , bool * ) ;",
            "template class V < int > ; extern template int f < long > ( long ) const",
            "extern template FR :: FR ( int * ) ; extern",
        ] {
            assert!(super::are_explicit_instantiations(yes), "{yes}");
        }
        for no in [
            "extern template FR :: FR ( int * ) int hidden",
            "extern template int x = 3",
            "template < class T > void f ( )",
            "extern template FR :: FR ( int * ) @@",
            "template void f ( ) { }",
            "extern template FR :: FR ( int * ) ; int hidden",
            "extern template FR :: FR ( int * ) ; int extern",
        ] {
            assert!(!super::are_explicit_instantiations(no), "{no}");
        }
    }

    /// What the parser cannot read among a namespace's members may hide a
    /// definition: it is the unit's error outside every function (any change
    /// to the unit selects every test), with its place.
    #[test]
    fn code_the_parser_cannot_read_outside_a_function_is_the_units_error() {
        let text = format!("# 1 \"u.cpp\"\nnamespace n {{\nint h() {{ return 1; }}\n@@ ^^\n}}\n{AFTER}");
        let (names, stray) = analysed(&text);
        assert_eq!(names, ["n::h()", "q::f(int)", "g(int)", "<static initialisation>"]);
        let p = stray.expect("an error outside every function");
        assert_eq!(p.span.map(|s| s.line), Some(3));
        assert!(p.message.starts_with("syntax error outside any function"), "{}", p.message);
    }

    /// Every identifier of `src` that `is_parameter_name` takes for a parameter's name.
    fn parameter_names(src: &str) -> Vec<String> {
        fn walk(n: crate::flat::Node<'_>, src: &[u8], out: &mut Vec<String>) {
            if crate::syntax::is_parameter_name(n) {
                out.push(crate::syntax::src_text(n, src).to_string());
            }
            let mut c = n.walk();
            for k in n.children(&mut c) {
                walk(k, src, out);
            }
        }
        let tree = super::parse(src);
        let mut out = Vec::new();
        walk(tree.root_node(), src.as_bytes(), &mut out);
        out
    }

    /// C++ parameters by reference, rvalue reference, pack, with a default
    /// argument, and a function pointer's own parameter: each name, and nothing
    /// else (not the function, the types, the default argument's `limit`).
    #[test]
    fn parameter_names_in_every_cpp_form() {
        let got = parameter_names(
            "template <typename... Args> void f(const std::string& path, Node&& moved, Args&&... args, int k = limit, int (*cb)(int value));\n\
             struct S { void go(int floor = 3) const; };\n",
        );
        assert_eq!(got, ["path", "moved", "args", "k", "cb", "value", "floor"]);
    }

    /// The layout declaration's mentions of each class of `src`, by class name.
    fn layout_mentions(src: &str) -> std::collections::BTreeMap<String, Vec<String>> {
        fn walk(n: crate::flat::Node<'_>, src: &[u8], out: &mut std::collections::BTreeMap<String, Vec<String>>) {
            if matches!(n.kind(), "class_specifier" | "struct_specifier") && n.child_by_field_name("body").is_some() {
                for d in super::class_declaration(n, "", src, None, false) {
                    let key =
                        if d.kind == retest_graph::DeclKind::Tag { d.names[0].clone() } else { d.names.join(" ") };
                    out.insert(key, d.mentions.to_vec());
                }
            }
            let mut c = n.walk();
            for k in n.children(&mut c) {
                walk(k, src, out);
            }
        }
        let tree = super::parse(src);
        let mut out = std::collections::BTreeMap::new();
        walk(tree.root_node(), src.as_bytes(), &mut out);
        out
    }

    /// Members and template arguments that hold an `Edge` only through a
    /// pointer or a reference leave `Edge` out of the holder's layout, and are
    /// declared on their own with `Edge` as a mention; a member or argument by
    /// value, a smart pointer and a `sizeof` keep it in the layout.
    #[test]
    fn a_class_that_only_points_to_another_does_not_mention_it() {
        let m = layout_mentions(
            "struct Pool { Pool(int n); std::set<Edge*, Cmp> delayed_; Edge *first_, *last_; const Edge& ref_; std::vector<std::pair<Edge*, int>> v_; };\n\
             struct Holder { Edge by_value_; };\n\
             struct Mixed { Edge *p_, e_; };\n\
             struct Owner { std::unique_ptr<Edge> owned_; };\n\
             struct Sized { char buf_[sizeof(Edge)]; Edge* p_; };\n\
             struct Listed { std::vector<Edge> all_; };\n",
        );
        let has = |c: &str| m.get(c).unwrap_or_else(|| panic!("{c}: {m:?}")).iter().any(|x| x == "Edge");
        assert!(!has("Pool"), "{:?}", m["Pool"]);
        // each pointer member is declared on its own, mentioning what it points to
        for member in ["delayed_", "first_ last_", "ref_", "v_"] {
            assert!(has(member), "{member}: {m:?}");
        }
        assert!(m["Pool"].iter().any(|x| x == "Cmp"), "{:?}", m["Pool"]);
        for c in ["Holder", "Mixed", "Owner", "Sized", "Listed"] {
            assert!(has(c), "{c}: {:?}", m[c]);
        }
    }

    fn dialect(flags: &str) -> bool {
        Dialect::of_flags(&flags.split_whitespace().map(String::from).collect::<Vec<_>>()).constexpr_statements
    }

    #[test]
    fn the_last_std_flag_decides_whether_constexpr_functions_hold_probes() {
        assert!(dialect("-O2"), "the compilers' default is gnu++17");
        for old in ["-std=c++98", "-std=c++03", "-std=gnu++0x", "-std=c++11", "--std=gnu++11", "-std=c++17 -std=c++11"]
        {
            assert!(!dialect(old), "{old}");
        }
        for new in ["-std=c++14", "-std=gnu++1y", "-std=c++17", "-std=c++2a", "-std=gnu++23", "-std=c++11 -std=c++20"] {
            assert!(dialect(new), "{new}");
        }
    }
}
