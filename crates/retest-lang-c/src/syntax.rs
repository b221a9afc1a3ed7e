//! Helpers over the tree-sitter-c syntax tree: normalised token text, referenced
//! names, calls.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::flat::Node as Ts;

/// The kind of `n`, as tree-sitter names it (read from the grammar's table
/// of kind names by [`crate::flat`]).
pub fn kind_of<'t>(n: impl std::borrow::Borrow<Ts<'t>>) -> &'static str {
    n.borrow().kind()
}

/// Node kinds whose whole source text is one token.
fn is_atomic(kind: &str) -> bool {
    matches!(kind, "string_literal" | "char_literal" | "system_lib_string" | "raw_string_literal" | "number_literal")
}

/// The source text of a node.
pub fn src_text<'a>(n: Ts<'_>, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[n.byte_range()]).unwrap_or("")
}

/// Normalised token text of `n`: tokens separated by one space; comments and
/// layout dropped; literals kept exactly. `placeholder(n)` may replace a whole
/// subtree by a fixed token (used for statement expressions that become their
/// own CFG nodes).
pub fn normalized_with(n: Ts<'_>, src: &[u8], placeholder: &dyn Fn(Ts<'_>) -> Option<Cow<'static, str>>) -> String {
    let mut out = String::new();
    push_tokens(n, src, placeholder, &mut out);
    out
}

/// Normalised token text of `n`.
pub fn normalized(n: Ts<'_>, src: &[u8]) -> String {
    normalized_with(n, src, &|_| None)
}

fn push_tok(out: &mut String, t: &str) {
    if t.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(t);
}

/// Visits `root` and the nodes under it in preorder, with one cursor for the
/// whole subtree (a cursor per node, what `children` takes, costs an
/// allocation each); `visit` gets each node and its depth below `root`, and
/// says whether to visit the node's children.
pub fn preorder<'t>(root: Ts<'t>, mut visit: impl FnMut(Ts<'t>, usize) -> bool) {
    let mut c = root.walk();
    let mut depth = 0usize;
    loop {
        if visit(c.node(), depth) && c.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if depth == 0 {
                return;
            }
            if c.goto_next_sibling() {
                break;
            }
            c.goto_parent();
            depth -= 1;
        }
    }
}

/// Visits `root` and the nodes under it in preorder, like [`preorder`], with
/// the ancestors of each node within the subtree (outermost first) instead
/// of its depth: asking tree-sitter for a node's parent searches down from
/// the root.
fn preorder_with_path<'t>(root: Ts<'t>, mut visit: impl FnMut(Ts<'t>, &[Ts<'t>]) -> bool) {
    let mut c = root.walk();
    let mut path: Vec<Ts<'t>> = Vec::new();
    loop {
        let n = c.node();
        if visit(n, &path) && c.goto_first_child() {
            path.push(n);
            continue;
        }
        loop {
            if path.is_empty() {
                return;
            }
            if c.goto_next_sibling() {
                break;
            }
            c.goto_parent();
            path.pop();
        }
    }
}

/// The identifiers under `root` used other than as the callee of a call
/// (`f (…)`, `(f) (…)`) or as the name a declarator declares: where a
/// function's name is among them, its address is taken. Only the first child
/// in a field is that field's, as `child_by_field_name` answers; the walk
/// goes into named nodes only.
pub fn value_uses(root: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    preorder_with_path(root, |n, path| {
        if kind_of(n) == "identifier" && (path.is_empty() || n.is_named()) {
            if !is_callee_or_declarator(n, path) {
                out.insert(src_text(n, src).to_string());
            }
            return false;
        }
        path.is_empty() || n.is_named()
    });
}

/// Whether identifier `id`, below `path`, is a call's callee or the name a
/// declarator declares. Above `root` is a top-level node's parent, the
/// translation unit: neither.
fn is_callee_or_declarator(id: Ts<'_>, path: &[Ts<'_>]) -> bool {
    let Some((&p, above)) = path.split_last() else { return false };
    let is_field = |of: Ts<'_>, f: &str, x: Ts<'_>| of.child_by_field_name(f).map(|c| c.id()) == Some(x.id());
    match kind_of(p) {
        "call_expression" => is_field(p, "function", id),
        "function_declarator"
        | "pointer_declarator"
        | "array_declarator"
        | "init_declarator"
        | "attributed_declarator"
        | "declaration"
        | "parameter_declaration"
        | "field_declaration"
        | "type_definition" => is_field(p, "declarator", id),
        "parenthesized_declarator" => true,
        // `(f)(x)` is still a direct call
        "parenthesized_expression" => {
            above.last().is_some_and(|&g| kind_of(g) == "call_expression" && is_field(g, "function", p))
        }
        _ => false,
    }
}

fn push_tokens(root: Ts<'_>, src: &[u8], placeholder: &dyn Fn(Ts<'_>) -> Option<Cow<'static, str>>, out: &mut String) {
    // the builder asks for the text of most statements and conditions
    preorder(root, |n, _| {
        if let Some(p) = placeholder(n) {
            push_tok(out, &p);
            return false;
        }
        let kind = kind_of(n);
        if kind == "comment" || n.is_missing() {
            return false;
        }
        if let Some(e) = typeof_expression_of(n, kind, src) {
            push_tok(out, "typeof");
            push_tok(out, "(");
            push_tokens(e, src, placeholder, out);
            push_tok(out, ")");
            return false;
        }
        if is_atomic(kind) || n.child_count() == 0 {
            // a token
            push_tok(out, src_text(n, src).trim());
            return false;
        }
        true
    });
}

/// Token text of a byte range that may cover several sibling nodes (e.g. a
/// case label with a GNU range `1 ... 5`).
pub fn normalized_siblings(nodes: &[Ts<'_>], src: &[u8]) -> String {
    let mut out = String::new();
    for n in nodes {
        push_tokens(*n, src, &|_| None, &mut out);
    }
    out
}

/// Names referenced by a subtree, and the calls it makes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// Identifiers and type names (not member names, not labels), sorted.
    pub refs: BTreeSet<String>,
    /// Directly called names, in source order, no duplicates.
    pub calls: Vec<String>,
    /// Calls through something other than a plain name (or a name that is a local
    /// variable or parameter).
    pub indirect_call: bool,
    /// Labels whose address is taken with GNU `&&label`.
    pub label_addrs: Vec<String>,
    /// The subtree contains a syntax error.
    pub has_error: bool,
    /// C++: the calls of named functions, with how their receivers are
    /// written, in source order (the builder works out their static types).
    pub member_calls: Vec<MemberCall>,
}

/// A C++ call of a named function as written: `p->m(a)`, `C::m()`, `m()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberCall {
    pub name: String,
    pub receiver: Written,
    pub args: u32,
}

/// How a call's receiver is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// `this->m()`.
    This,
    /// `x.m()` or `x->m()` (`arrow`) on a variable `x`.
    Variable { name: String, arrow: bool },
    /// `C::m()`: the innermost qualifier's last name.
    Qualified(String),
    /// `m()`: a free function, or a member of the enclosing class.
    Plain,
    /// Any other expression: the static type is not known here.
    Other,
}

/// Collects [`Uses`] from `n`; `locals` are the names of the procedure's local
/// variables and parameters (a call through one of them is indirect). Subtrees for
/// which `skip` is true are not visited.
pub fn uses(n: Ts<'_>, src: &[u8], locals: &BTreeSet<String>, skip: &dyn Fn(Ts<'_>) -> bool) -> Uses {
    uses_in(n, src, &Names { locals, typedefs: &BTreeSet::new(), cpp: false }, skip)
}

/// The names a procedure's code is read with.
pub struct Names<'a> {
    /// The procedure's local variables and parameters (a call through one of
    /// them is indirect).
    pub locals: &'a BTreeSet<String>,
    /// Type names declared by file-scope `typedef`s of the unit. The parser,
    /// which cannot know them, reads the cast `(T)(x)` as a call of `T`; such a
    /// "call" of a name that is a typedef and no local is a cast and calls
    /// nothing.
    pub typedefs: &'a BTreeSet<String>,
    /// C++: `obj.m()`, `p->m()`, `ns::f()` and `f<T>()` are calls of the named
    /// method or function (by its last name), `new` and `delete` call the
    /// allocation functions and constructors or destructors. In C a call through
    /// a member is a call through a function pointer.
    pub cpp: bool,
}

/// Whether `n` is the name a parameter declaration binds (`path` in
/// `int stat(const char *path)`, `args` in `Args... args`): a new name, never a
/// reference to another declaration, so a declaration's mentions leave it out.
/// Its type, default argument and array bounds are references as usual.
pub fn is_parameter_name(n: Ts<'_>) -> bool {
    if kind_of(n) != "identifier" {
        return false;
    }
    let mut cur = n;
    while let Some(p) = cur.parent() {
        if let Some(answer) = parameter_name_step(p, cur) {
            return answer;
        }
        cur = p;
    }
    false
}

/// [`uses`] with the unit's typedef names known.
pub fn uses_in(n: Ts<'_>, src: &[u8], names: &Names<'_>, skip: &dyn Fn(Ts<'_>) -> bool) -> Uses {
    let mut u = Uses::default();
    collect(n, src, names, skip, false, &mut u);
    u
}

/// The names a declaration mentions: [`uses`] of `n` without the names that
/// parameter declarations bind ([`is_parameter_name`]) and without the
/// subtrees `skip` names.
pub fn mentions(n: Ts<'_>, src: &[u8], skip: &dyn Fn(Ts<'_>) -> bool) -> Uses {
    let mut u = Uses::default();
    collect(n, src, &Names { locals: &BTreeSet::new(), typedefs: &BTreeSet::new(), cpp: false }, skip, true, &mut u);
    u
}

/// One step up from `cur` to its parent `p` in [`is_parameter_name`]: the
/// answer once `p` decides it, `None` while `cur` is a declarator that `p`
/// only wraps.
fn parameter_name_step(p: Ts<'_>, cur: Ts<'_>) -> Option<bool> {
    let is_declarator = || p.child_by_field_name("declarator").is_some_and(|d| d.id() == cur.id());
    match kind_of(p) {
        "parameter_declaration" | "optional_parameter_declaration" | "variadic_parameter_declaration" => {
            Some(is_declarator())
        }
        // declarators whose inner declarator is an unnamed child
        "parenthesized_declarator" | "reference_declarator" | "variadic_declarator" | "attributed_declarator" => None,
        "pointer_declarator" | "array_declarator" | "function_declarator" if is_declarator() => None,
        _ => Some(false),
    }
}

/// [`is_parameter_name`] of `n`, whose ancestors are `path` (outermost first)
/// and then those of `path[0]`: the walk up the tree reads the ancestors the
/// traversal already holds instead of asking tree-sitter for each parent, which
/// searches down from the root.
fn is_parameter_name_below(n: Ts<'_>, path: &[Ts<'_>]) -> bool {
    if kind_of(n) != "identifier" {
        return false;
    }
    let mut cur = n;
    let mut held = path.iter().rev().copied();
    let mut above = path.first().copied().unwrap_or(n);
    loop {
        let p = match held.next() {
            Some(p) => p,
            None => match above.parent() {
                Some(p) => {
                    above = p;
                    p
                }
                None => return false,
            },
        };
        if let Some(answer) = parameter_name_step(p, cur) {
            return answer;
        }
        cur = p;
    }
}

/// Collects the uses of the subtree of `root` in preorder with one cursor
/// (see [`push_tokens`]); named children only. `params`: leave out the names
/// parameter declarations bind.
fn collect(root: Ts<'_>, src: &[u8], names: &Names<'_>, skip: &dyn Fn(Ts<'_>) -> bool, params: bool, u: &mut Uses) {
    preorder_with_path(root, |n, path| {
        (path.is_empty() || n.is_named())
            && !(params && is_parameter_name_below(n, path))
            && visit(n, src, names, skip, params, u)
    });
}

/// One node of [`collect`]: records what it uses; whether its children are
/// to be visited.
fn visit(n: Ts<'_>, src: &[u8], names: &Names<'_>, skip: &dyn Fn(Ts<'_>) -> bool, params: bool, u: &mut Uses) -> bool {
    let locals = names.locals;
    if skip(n) {
        return false;
    }
    let kind = kind_of(n);
    match kind {
        "identifier" | "type_identifier" => {
            u.refs.insert(src_text(n, src).to_string());
            return false;
        }
        "ERROR" => u.has_error |= !is_type_argument(n, src),
        "macro_type_specifier" | "type_descriptor" => {
            if let Some(e) = typeof_expression_of(n, kind, src) {
                collect(e, src, names, skip, params, u);
                return false;
            }
        }
        "new_expression" | "delete_expression" if names.cpp => {
            let name = if kind == "new_expression" { "operator new" } else { "operator delete" };
            if !u.calls.iter().any(|c| c == name) {
                u.calls.push(name.to_string());
            }
            // `new T(…)` runs T's constructor
            if let Some(t) = n.child_by_field_name("type")
                && matches!(kind_of(t), "type_identifier" | "qualified_identifier" | "template_type")
            {
                let ctor = last_name(t, src);
                if !ctor.is_empty() {
                    // `new T(a, b)`, `new T{a, b}`, `new T`
                    let args = n.child_by_field_name("arguments").map_or(0, |a| {
                        let mut c = a.walk();
                        a.named_children(&mut c).filter(|k| kind_of(k) != "comment").count() as u32
                    });
                    u.member_calls.push(MemberCall {
                        name: ctor.clone(),
                        receiver: Written::Qualified(ctor.clone()),
                        args,
                    });
                }
                if !ctor.is_empty() && !u.calls.contains(&ctor) {
                    u.calls.push(ctor);
                }
            }
        }
        "lambda_expression" if names.cpp => {
            // its body is a procedure of its own; creating the closure calls nothing
            if let Some(c) = n.child_by_field_name("captures") {
                collect(c, src, names, skip, params, u);
            }
            return false;
        }
        "call_expression" => {
            if let Some(f) = n.child_by_field_name("function") {
                let f = strip_parens(f);
                let member = if names.cpp { cpp_callee_name(f, src) } else { None };
                if names.cpp {
                    let args = n.child_by_field_name("arguments").map_or(0, |a| {
                        let mut c = a.walk();
                        a.named_children(&mut c).filter(|k| kind_of(k) != "comment").count() as u32
                    });
                    if let Some((name, receiver)) = written_receiver(f, src, locals) {
                        u.member_calls.push(MemberCall { name, receiver, args });
                    }
                }
                if let Some(name) = member {
                    // the call names a function: a changed declaration of that name (a
                    // new overload, a changed default argument) affects it. A member
                    // called on an object is declared under its class's name, and
                    // selection asks for the declarations of the call's targets in
                    // the class hierarchy instead
                    if kind_of(f) != "field_expression" {
                        u.refs.insert(name.clone());
                    }
                    if kind_of(f) == "qualified_identifier" {
                        u.refs.insert(compact_name(f, src));
                    }
                    if !u.calls.contains(&name) {
                        u.calls.push(name);
                    }
                } else if kind_of(f) == "identifier" {
                    let name = src_text(f, src).to_string();
                    if locals.contains(&name) {
                        u.indirect_call = true;
                    } else if names.typedefs.contains(&name) {
                        // `(T)(x)`: a cast
                    } else if !u.calls.contains(&name) {
                        u.calls.push(name);
                    }
                } else {
                    u.indirect_call = true;
                }
            }
        }
        "pointer_expression" => {
            if let Some(l) = label_address(n, src) {
                if !u.label_addrs.contains(&l) {
                    u.label_addrs.push(l);
                }
                return false;
            }
        }
        _ => {}
    }
    if n.is_missing() {
        u.has_error = true;
    }
    true
}

/// A qualified name as declarations spell it: `a :: B :: m` → `a::B::m`
/// (template arguments dropped).
fn compact_name(f: Ts<'_>, src: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut q = f;
    loop {
        if let Some(scope) = q.child_by_field_name("scope") {
            parts.push(last_name(scope, src));
        }
        match q.child_by_field_name("name") {
            Some(n) if kind_of(n) == "qualified_identifier" => q = n,
            Some(n) => {
                parts.push(last_name(n, src));
                break;
            }
            None => break,
        }
    }
    parts.join("::")
}

/// The name a C++ call names and how its receiver is written; `None` for a
/// call through a local variable (a function pointer or closure) or an
/// expression.
fn written_receiver(f: Ts<'_>, src: &[u8], locals: &BTreeSet<String>) -> Option<(String, Written)> {
    match kind_of(f) {
        "field_expression" => {
            let name = last_name(f.child_by_field_name("field")?, src);
            let arg = strip_parens(f.child_by_field_name("argument")?);
            let arrow = f.child_by_field_name("operator").is_some_and(|o| src_text(o, src) == "->");
            let receiver = match kind_of(arg) {
                "this" => Written::This,
                "identifier" => Written::Variable { name: src_text(arg, src).to_string(), arrow },
                _ => Written::Other,
            };
            Some((name, receiver))
        }
        "qualified_identifier" => {
            // the innermost qualifier: `a::B::m` → `B`
            let mut q = f;
            while let Some(inner) = q.child_by_field_name("name").filter(|x| kind_of(x) == "qualified_identifier") {
                q = inner;
            }
            let scope = q.child_by_field_name("scope").map(|s| last_name(s, src)).unwrap_or_default();
            let name = last_name(f, src);
            Some((name, if scope.is_empty() { Written::Plain } else { Written::Qualified(scope) }))
        }
        "identifier" if !locals.contains(src_text(f, src)) => Some((src_text(f, src).to_string(), Written::Plain)),
        "template_function" => Some((last_name(f, src), Written::Plain)),
        _ => None,
    }
}

/// The name a C++ call reaches when its callee is named (not a plain local
/// identifier): the method of `obj.m`/`p->m`, the last name of `ns::f`, the
/// template of `f<T>`.
fn cpp_callee_name(f: Ts<'_>, src: &[u8]) -> Option<String> {
    match kind_of(f) {
        "field_expression" => f.child_by_field_name("field").map(|x| last_name(x, src)),
        "qualified_identifier" | "template_function" | "template_method" | "destructor_name" | "operator_name" => {
            Some(last_name(f, src))
        }
        _ => None,
    }
}

/// The last component of a (qualified, templated) C++ name, without template
/// arguments: `ns::A::f<int>` → `f`, `~A` → `~A`, `operator()` → `operator()`.
pub fn last_name(n: Ts<'_>, src: &[u8]) -> String {
    match kind_of(n) {
        "qualified_identifier" => match n.child_by_field_name("name") {
            Some(x) => last_name(x, src),
            None => src_text(n, src).to_string(),
        },
        "template_function" | "template_method" | "template_type" => match n.child_by_field_name("name") {
            Some(x) => last_name(x, src),
            None => src_text(n, src).to_string(),
        },
        _ => normalized(n, src).replace(' ', ""),
    }
}

/// Parses `text` in `language`: only the bytes of `ranges` (ascending,
/// disjoint; offsets, rows and columns stay the text's), or, with none, all
/// of it.
pub(crate) fn parse_in(grammar: crate::flat::Grammar, text: &str, ranges: &[tree_sitter::Range]) -> crate::flat::Tree {
    let mut p = tree_sitter::Parser::new();
    p.set_language(grammar.language()).expect("the grammar's ABI is compatible");
    p.set_included_ranges(ranges).expect("ascending, disjoint ranges within the text are valid");
    let tree = p.parse(text, None).expect("parsing without a timeout or cancellation always yields a tree");
    crate::flat::Tree::new(&tree, grammar)
}

/// The spellings of `typeof` in the parsed text, the short `_T` of
/// [`crate::preprocess`]'s rewrite included.
fn is_typeof_keyword(s: &str) -> bool {
    matches!(s, "typeof" | "__typeof__" | "__typeof" | "_T")
}

/// The expression of `typeof (EXPRESSION)` as the preprocessor step rewrites it
/// for the parser (`typeof(_*[EXPRESSION])`, see `preprocess`). Where a
/// declaration's type is expected it parses as a `macro_type_specifier` whose
/// type is the placeholder `_` with an abstract `*[…]` declarator; where a type
/// name is (`sizeof`, casts) as a `type_descriptor` of a function type whose one
/// parameter is that placeholder.
pub fn typeof_expression<'a>(n: Ts<'a>, src: &[u8]) -> Option<Ts<'a>> {
    typeof_expression_of(n, kind_of(n), src)
}

/// [`typeof_expression`] of a node whose kind is known.
fn typeof_expression_of<'a>(n: Ts<'a>, kind: &str, src: &[u8]) -> Option<Ts<'a>> {
    let keyword = |k: Ts<'_>| is_typeof_keyword(src_text(k, src));
    match kind {
        "macro_type_specifier" if keyword(n.child_by_field_name("name")?) => {
            placeholder_size(n.child_by_field_name("type")?, src)
        }
        "type_descriptor" => {
            let name = n.child_by_field_name("type")?;
            let f = n.child_by_field_name("declarator")?;
            if kind_of(name) != "type_identifier"
                || !keyword(name)
                || kind_of(f) != "abstract_function_declarator"
                || f.child_by_field_name("declarator").is_some()
            {
                return None;
            }
            let params = f.child_by_field_name("parameters")?;
            if params.named_child_count() != 1 {
                return None;
            }
            placeholder_size(params.named_child(0)?, src)
        }
        _ => None,
    }
}

/// `_ *[SIZE]` (a type descriptor or a parameter declaration): SIZE.
fn placeholder_size<'a>(n: Ts<'a>, src: &[u8]) -> Option<Ts<'a>> {
    let placeholder = n.child_by_field_name("type")?;
    let pointer = n.child_by_field_name("declarator")?;
    let array = pointer.child_by_field_name("declarator")?;
    if kind_of(placeholder) != "type_identifier"
        || src_text(placeholder, src) != "_"
        || kind_of(pointer) != "abstract_pointer_declarator"
        || kind_of(array) != "abstract_array_declarator"
        || array.child_by_field_name("declarator").is_some()
    {
        return None;
    }
    array.child_by_field_name("size")
}

/// Builtins whose arguments include a type, which tree-sitter-c's grammar
/// parses as an expression (with an ERROR where the type does not fit one).
const TYPE_ARGUMENT_BUILTINS: &[&str] =
    &["__builtin_va_arg", "__builtin_offsetof", "__builtin_types_compatible_p", "__builtin_convertvector"];

/// Whether `err` (an ERROR node, or a token the parser made up) is part of a
/// type argument of a builtin such as `__builtin_va_arg(ap, char **)`: the code
/// is valid C, the call and its place in the statement are parsed right.
///
/// A `typeof` inside the type argument (`__builtin_offsetof (__typeof__ (*p),
/// m)`, which the front end reads as `typeof(_*[*p])`, [`typeof_expression`])
/// is looked through: it is part of the same type.
pub fn is_type_argument(err: Ts<'_>, src: &[u8]) -> bool {
    let mut at = err;
    loop {
        let mut args = at.parent();
        while let Some(a) = args.filter(|a| kind_of(a) != "argument_list") {
            if kind_of(a).ends_with("statement") || kind_of(a) == "declaration" {
                return false;
            }
            args = a.parent();
        }
        let Some(call) = args.and_then(|a| a.parent()).filter(|c| kind_of(c) == "call_expression") else {
            return false;
        };
        let Some(f) = call.child_by_field_name("function").filter(|f| kind_of(f) == "identifier") else {
            return false;
        };
        match src_text(f, src) {
            name if TYPE_ARGUMENT_BUILTINS.contains(&name) => return true,
            name if is_typeof_keyword(name) => at = call,
            _ => return false,
        }
    }
}

/// Whether the subtree has a syntax error other than a builtin's type argument
/// ([`is_type_argument`]).
pub fn has_syntax_error(n: Ts<'_>, src: &[u8]) -> bool {
    if n.is_error() {
        return !is_type_argument(n, src);
    }
    if !n.has_error() {
        return false;
    }
    let mut c = n.walk();
    n.children(&mut c).any(|ch| has_syntax_error(ch, src))
}

/// The first syntax error or token the parser inserted to recover from one,
/// in text order, among the nodes `keep` accepts (a builtin's type argument,
/// [`is_type_argument`], is none).
pub fn first_error<'t>(root: Ts<'t>, src: &[u8], keep: &dyn Fn(Ts<'_>) -> bool) -> Option<Ts<'t>> {
    if (root.is_error() || root.is_missing()) && !is_type_argument(root, src) && keep(root) {
        return Some(root);
    }
    if !root.has_error() {
        return None;
    }
    let mut c = root.walk();
    let children: Vec<Ts<'t>> = root.children(&mut c).collect();
    children.into_iter().find_map(|ch| first_error(ch, src, keep))
}

/// Whether the subtree has a token the parser inserted to recover from an error
/// (other than in a builtin's type argument, [`is_type_argument`]).
pub fn has_missing(n: Ts<'_>, src: &[u8]) -> bool {
    if n.is_missing() {
        return !is_type_argument(n, src);
    }
    if !n.has_error() {
        return false;
    }
    let mut c = n.walk();
    n.children(&mut c).any(|ch| has_missing(ch, src))
}

/// Strips redundant parentheses.
pub fn strip_parens(mut n: Ts<'_>) -> Ts<'_> {
    while kind_of(n) == "parenthesized_expression" && n.named_child_count() == 1 {
        match n.named_child(0) {
            Some(c) if kind_of(c) != "compound_statement" => n = c,
            _ => break,
        }
    }
    n
}

/// Recognises GNU `&&label` (tree-sitter-c parses it as `& (& label)` with the two
/// ampersands adjacent) and returns the label.
pub fn label_address(n: Ts<'_>, src: &[u8]) -> Option<String> {
    if kind_of(n) != "pointer_expression" {
        return None;
    }
    let op = n.child_by_field_name("operator")?;
    let arg = n.child_by_field_name("argument")?;
    if src_text(op, src) != "&" || kind_of(arg) != "pointer_expression" {
        return None;
    }
    let op2 = arg.child_by_field_name("operator")?;
    let id = arg.child_by_field_name("argument")?;
    if src_text(op2, src) != "&" || op2.start_byte() != op.end_byte() || kind_of(id) != "identifier" {
        return None;
    }
    Some(src_text(id, src).to_string())
}

/// The name a declarator declares (`*a[3]` → `a`, `(*f)(int)` → `f`).
pub fn declarator_name<'a>(mut d: Ts<'a>, src: &[u8]) -> Option<String> {
    loop {
        match kind_of(d) {
            "identifier" | "field_identifier" | "type_identifier" => {
                return Some(src_text(d, src).to_string());
            }
            _ => {
                if let Some(inner) = d.child_by_field_name("declarator") {
                    d = inner;
                    continue;
                }
                // parenthesized_declarator has no field
                let mut c = d.walk();
                let next = d.named_children(&mut c).find(|ch| {
                    matches!(
                        kind_of(ch),
                        "identifier"
                            | "type_identifier"
                            | "pointer_declarator"
                            | "function_declarator"
                            | "array_declarator"
                            | "parenthesized_declarator"
                            | "attributed_declarator"
                            | "init_declarator"
                    )
                });
                d = next?;
            }
        }
    }
}

/// The labels whose address GNU `&&label` takes in the subtree, in source
/// order, without duplicates: the `label_addrs` of [`uses`], without collecting
/// everything else.
pub fn label_addresses(root: Ts<'_>, src: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    // the two ampersands are adjacent ([`label_address`])
    if !src[root.byte_range()].windows(2).any(|w| w == b"&&") {
        return out;
    }
    let mut c = root.walk();
    let mut depth = 0usize;
    loop {
        let n = c.node();
        let mut descend = depth == 0 || n.is_named();
        if descend && let Some(l) = label_address(n, src) {
            if !out.contains(&l) {
                out.push(l);
            }
            descend = false;
        }
        if descend && c.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if depth == 0 {
                return out;
            }
            if c.goto_next_sibling() {
                break;
            }
            c.goto_parent();
            depth -= 1;
        }
    }
}

/// Whether the subtree contains any of the given token texts (keywords).
pub fn contains_token(n: Ts<'_>, src: &[u8], toks: &[&str]) -> bool {
    // a token's text lies within the subtree's: where none of them occurs in
    // its bytes, no token is one of them
    let text = &src[n.byte_range()];
    if !toks.iter().any(|t| t.is_empty() || text.windows(t.len()).any(|w| w == t.as_bytes())) {
        return false;
    }
    contains_token_walk(n, src, toks)
}

fn contains_token_walk(n: Ts<'_>, src: &[u8], toks: &[&str]) -> bool {
    if n.child_count() == 0 {
        return toks.contains(&src_text(n, src));
    }
    let mut c = n.walk();
    n.children(&mut c).any(|ch| contains_token_walk(ch, src, toks))
}

/// Whether the subtree contains a node of one of the given kinds.
pub fn contains_kind(n: Ts<'_>, kinds: &[&str]) -> bool {
    if kinds.contains(&kind_of(n)) {
        return true;
    }
    let mut c = n.walk();
    n.children(&mut c).any(|ch| contains_kind(ch, kinds))
}
