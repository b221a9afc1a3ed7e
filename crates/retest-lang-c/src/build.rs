//! CFG construction for one C function definition.
//!
//! The builder produces the **condition-level** CFG (one predicate node per
//! condition of a short-circuit decision, `?:` arms and the two outcomes of a
//! logical value as their own nodes — the shape compilers produce and the CFDG
//! paper (001 §V) works on) and, by contracting it, the **statement-level** CFG
//! (one node per statement, one predicate per decision — the CFG of DejaVu,
//! 002 §2.1). Every condition-level node belongs to exactly one statement-level
//! node ("group"); the [`Contraction`] maps one onto the other.
//!
//! Shape of the statement-level CFG, following the seeds:
//! * a unique entry node (text: the signature) followed by the declaration node that
//!   holds the function's non-executable declarations (002 §2.1), and a unique exit;
//! * statement nodes for expression statements, executable declarations and
//!   `return` (which flows to the exit);
//! * predicate nodes for `if`/`while`/`do`/`for` decisions with `T`/`F` edges; a
//!   condition that is an integer literal (`while (1)`, `do … while (0)`) is folded
//!   like a compiler folds it;
//! * one switch node per `switch` with an edge per case label and a `default` edge
//!   (to the `default:` label or, without one, past the switch) — 002 §3.1.4;
//! * jumps (`break`, `continue`, `goto`, labels) are edges, not nodes;
//! * a call to a `noreturn` function ends its statement's path at the exit;
//! * computed `goto` and `asm goto` get one out-edge per possible target.
//!
//! Statement expressions (`({ … })`) evaluated unconditionally are built as
//! statements before the statement that contains them; in a conditionally
//! evaluated position they stay part of the containing node's text.

use std::collections::{BTreeMap, BTreeSet};

use crate::flat::Node as Ts;
use retest_graph::cfg::{Dispatch, Receiver};
use retest_graph::coverage::Probe;
use retest_graph::{
    Cfg, CfgBuilder, Contraction, DeclKind, Declaration, EdgeLabel, Node, NodeId, NodeKind, Problem, Span,
};
use serde::{Deserialize, Serialize};

use crate::syntax::{self, contains_token, kind_of, normalized, normalized_with, src_text, strip_parens};

/// Where and how instrumentation observes a condition-level node. Byte offsets are
/// into the preprocessed text.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Site {
    /// Not probed (coverage derived from in-edges).
    None,
    /// Function entry: the body's braces are at `open` and `close`. The probe goes
    /// after `{`, and the original body becomes an inner block (so the probe never
    /// precedes the body's declarations, which C89 requires to come first).
    Entry { open: usize, close: usize },
    /// A statement `[start, end)`: insert the probe before it; when the statement
    /// is not a direct element of a block (the body of an `if`, a loop, a label),
    /// `wrap` puts both in braces. A direct element is never wrapped, so the last
    /// statement of a statement expression keeps giving the expression its value.
    Stmt { start: usize, end: usize, wrap: bool },
    /// An expression evaluated for its side effects in a `for` header `[start, end)`:
    /// prefix it with the probe as a comma operand.
    Expr { start: usize, end: usize },
    /// A condition `[start, end)`: rewrite it to record its `T`/`F` outcome.
    Cond { start: usize, end: usize },
    /// A `switch` statement `[stmt_start, stmt_end)` whose controlling expression
    /// is `[cond_start, cond_end)`.
    Switch { stmt_start: usize, stmt_end: usize, cond_start: usize, cond_end: usize },
    /// A block `[open, close]` (its braces): probe right after the `{` (a `try`
    /// block, a `catch` handler).
    BlockStart { open: usize, close: usize },
    /// A two-way decision whose condition cannot be rewritten (a C++ declaration
    /// condition, `if constexpr`, a range-`for`'s implicit test): the `T` edge's
    /// cell is set at `t`, the `F` edge's at `f`.
    Arms { t: Spot, f: Spot },
    /// The entry of a unit's start-up code (C++ dynamic initialisation, see
    /// [`startup_procedure`]): the probe goes into a function of its own,
    /// appended to the unit and run when the program or library is loaded.
    Startup,
}

/// Where an arm of a [`Site::Arms`] decision records itself, around the
/// statement `[start, end)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Spot {
    pub start: usize,
    pub end: usize,
    pub how: SpotHow,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum SpotHow {
    /// Before the statement, both in braces (`{ probe; stmt }`).
    Before,
    /// The statement is an `if`'s consequence and the `if` has no `else`: brace
    /// it and add `else { probe; }` after it.
    Else,
    /// After the statement, both in braces (`{ stmt probe; }`): where a loop
    /// ends (also after a `break`, which over-approximates).
    After,
}

/// The CFGs of one function, as the builder returns them.
#[derive(Clone, Debug)]
pub struct FunctionCfgs {
    pub cond: Cfg,
    pub stmt: Cfg,
    pub map: Contraction,
    /// Per condition-level node: how it is probed, one probe per node (the unit
    /// drops the redundant ones once it knows which calls return).
    pub probes: Vec<Probe>,
    /// Per condition-level node: once started, it leaves by an out-edge unless a
    /// function it calls by name does not return (no indirect call, no `asm`,
    /// nothing opaque, no syntax error); `calls` of the node lists those functions.
    pub completes_unless_calls: Vec<bool>,
    /// Per condition-level node: where instrumentation goes (C-specific; not stored).
    pub sites: Vec<Site>,
    /// The function's local declarations (also on the declaration node).
    pub locals: Vec<Declaration>,
    /// Why the function cannot be analysed exactly, if so (selection treats it as
    /// changed whenever its text changed).
    pub unanalysable: Option<String>,
    /// Non-fatal problems (constructs handled conservatively).
    pub problems: Vec<Problem>,
    /// Its probes store only outside constant evaluation (see [`Evaluation`]).
    pub guarded: bool,
}

/// Facts about the translation unit a function lives in.
pub struct TuFacts<'a> {
    pub src: &'a [u8],
    /// Maps a 0-based line of the preprocessed text to (file, original line).
    pub locate: &'a dyn Fn(u32) -> Option<(u32, u32)>,
    /// Functions known never to return.
    pub noreturn: &'a BTreeSet<String>,
    /// Names declared by the unit's file-scope `typedef`s.
    pub typedefs: &'a BTreeSet<String>,
    /// The attributes the parse text hides within a byte range (see
    /// [`crate::Preprocessed::attributes_within`]).
    pub hidden_attributes: &'a dyn Fn(std::ops::Range<usize>) -> String,
    /// The unit is C++.
    pub cpp: bool,
    /// C++14 or later: a `constexpr` function may hold statements, so its
    /// probes can be guarded (see [`Evaluation`]).
    pub constexpr_statements: bool,
    /// C++: the classes the unit defines, by name (last component), with their
    /// bases and data members in declaration order.
    pub classes: &'a BTreeMap<String, ClassInfo>,
}

/// What the CFG builder needs of a C++ class: the order in which a constructor
/// initialises its bases and members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassInfo {
    pub bases: Vec<String>,
    pub fields: Vec<String>,
    /// The data members whose type names a class (the receiver type of a
    /// call `field->m()` in a method), by name.
    pub field_types: BTreeMap<String, Declared>,
}

/// The class a C++ variable's declared type names, for the static type of a
/// call's receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Declared {
    /// `C x`, `C *x`, `C &x` (the class's last name).
    Class(String),
    /// `std::unique_ptr<C> x` and the other smart pointers: `x->m()` calls
    /// `C`'s member, `x.m()` the pointer's own.
    Smart(String),
    /// Declared twice in one function with different types, or with a type
    /// that names no class (`auto`, a template parameter is still a name).
    Unknown,
}

impl Declared {
    /// What the type `ty` of a declaration names.
    pub fn of_type(ty: Ts<'_>, src: &[u8]) -> Declared {
        match kind_of(ty) {
            "type_identifier" | "qualified_identifier" => Declared::Class(syntax::last_name(ty, src)),
            "template_type" => {
                let name = syntax::last_name(ty, src);
                let first = ty.child_by_field_name("arguments").and_then(|a| {
                    let mut c = a.walk();
                    a.named_children(&mut c).find(|k| kind_of(k) == "type_descriptor")
                });
                match first.and_then(|d| d.child_by_field_name("type")) {
                    Some(t)
                        if matches!(name.as_str(), "unique_ptr" | "shared_ptr" | "weak_ptr" | "observer_ptr")
                            && matches!(kind_of(t), "type_identifier" | "qualified_identifier") =>
                    {
                        Declared::Smart(syntax::last_name(t, src))
                    }
                    _ => Declared::Class(name),
                }
            }
            _ => Declared::Unknown,
        }
    }

    /// Joins two declarations of one name.
    fn join(self, other: Declared) -> Declared {
        if self == other { self } else { Declared::Unknown }
    }
}

/// A local object a scope destroys when it ends (C++).
#[derive(Clone, Debug)]
struct Dtor {
    var: String,
    class: String,
    span: Option<Span>,
}

#[derive(Clone)]
struct Pend {
    node: usize,
    label: EdgeLabel,
    coarse: Option<EdgeLabel>,
}

fn eps(node: usize) -> Pend {
    Pend { node, label: EdgeLabel::Eps, coarse: Some(EdgeLabel::Eps) }
}

/// A pending edge that stays inside its statement-level node (no coarse label).
fn internal(node: usize) -> Pend {
    Pend { node, label: EdgeLabel::Eps, coarse: None }
}

struct BNode {
    node: Node,
    group: Option<usize>,
    nop: bool,
    /// For loop-head nops: the text to use if the nop sits on a cycle of nops
    /// (an empty infinite loop) and must become a real node.
    fallback: Option<(String, Option<Span>)>,
    site: Site,
    probe: Probe,
    /// Once started, may end without reaching its successor whatever it calls
    /// (inline `asm`, a computed `goto`, text kept opaque or with a syntax error,
    /// which could hide a call).
    stops: bool,
}

struct BEdge {
    src: usize,
    dst: usize,
    label: EdgeLabel,
    coarse: Option<EdgeLabel>,
}

struct SwitchCtx {
    cases: Vec<(String, usize)>,
    default: Option<usize>,
}

struct Builder<'a, 't> {
    tu: &'a TuFacts<'a>,
    src: &'a [u8],
    nodes: Vec<BNode>,
    edges: Vec<BEdge>,
    groups: Vec<Node>,
    labels: BTreeMap<String, usize>,
    defined_labels: BTreeSet<String>,
    breaks: Vec<Vec<Pend>>,
    conts: Vec<Vec<Pend>>,
    switches: Vec<SwitchCtx>,
    addr_labels: Vec<String>,
    /// The body (id and bytes) when it has no syntax error: no expression in
    /// it is misparsed ([`Builder::misparsed_around`]).
    clean_body: Option<(usize, usize, usize)>,
    locals: BTreeSet<String>,
    local_decls: Vec<Declaration>,
    /// Statement expressions already built as statements (tree-sitter node ids).
    hoisted: BTreeSet<usize>,
    exit: usize,
    problems: Vec<Problem>,
    unanalysable: Option<String>,
    /// Computed-goto nodes whose targets are added once all labels are known.
    pending_computed: Vec<usize>,
    /// Byte ranges of the syntax that node texts and declarations were taken
    /// from: a syntax error outside all of them is not seen by the graph.
    shown: std::cell::RefCell<Vec<(usize, usize)>>,
    /// Byte ranges of the statement expressions built as statements of their
    /// own: the text of the node that contains one shows `{…}` in its place.
    hoisted_ranges: Vec<(usize, usize)>,
    /// C++: per open scope, the local objects it destroys, in construction order.
    scopes: Vec<Vec<Dtor>>,
    /// Scope depth at each enclosing `break` / `continue` target.
    break_depths: Vec<usize>,
    cont_depths: Vec<usize>,
    /// C++: the handler dispatch nodes of the enclosing `try` blocks.
    tries: Vec<usize>,
    /// The function may run while compiling and its probes are guarded: no
    /// probe may declare a variable without an initialiser or open a
    /// statement expression (a `switch` then records no case apart).
    guarded: bool,
    /// C++: the class the function is a member of (its last name).
    class: Option<String>,
    /// C++: what the function's parameters, local variables and its class's
    /// data members are declared as, for the receivers of member calls.
    types: BTreeMap<String, Declared>,
    _t: std::marker::PhantomData<&'t ()>,
}

const NORETURN_BUILTIN: &[&str] = &[
    "exit",
    "_exit",
    "_Exit",
    "abort",
    "quick_exit",
    "longjmp",
    "siglongjmp",
    "_longjmp",
    "__longjmp_chk",
    "__builtin_unreachable",
    "__builtin_trap",
    "__builtin_abort",
    "__builtin_exit",
    "__builtin_longjmp",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
    "__stack_chk_fail",
    "err",
    "errx",
    "verr",
    "verrx",
    "pthread_exit",
    "thrd_exit",
    "__cxa_throw",
    "__cxa_rethrow",
];

/// Where a C or C++ program starts ([`retest_graph::Unit::entry_points`]).
pub const ENTRY_POINTS: &[&str] = &["main"];

/// Functions of C and its libraries after whose call control may come back a
/// second time ([`retest_graph::Unit::returns_twice`]).
pub const RETURNS_TWICE: &[&str] =
    &["setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "__builtin_setjmp", "vfork"];

/// Whether `name` never returns (built-in list or declared `noreturn` in the TU).
pub fn is_noreturn(name: &str, declared: &BTreeSet<String>) -> bool {
    NORETURN_BUILTIN.contains(&name) || declared.contains(name)
}

fn is_logical(e: Ts<'_>, src: &[u8]) -> Option<&'static str> {
    if kind_of(e) != "binary_expression" {
        return None;
    }
    let op = e.child_by_field_name("operator")?;
    match src_text(op, src) {
        "&&" => Some("&&"),
        "||" => Some("||"),
        _ => None,
    }
}

fn is_stmt_expr(e: Ts<'_>) -> Option<Ts<'_>> {
    if kind_of(e) == "parenthesized_expression" && e.named_child_count() == 1 {
        let c = e.named_child(0)?;
        if kind_of(c) == "compound_statement" {
            return Some(c);
        }
    }
    None
}

/// Subtrees whose expressions are not evaluated (or not in a way we can model).
fn is_unevaluated(kind: &str) -> bool {
    matches!(
        kind,
        "sizeof_expression"
            | "alignof_expression"
            | "offsetof_expression"
            | "generic_expression"
            | "gnu_asm_expression"
            | "type_descriptor"
            | "ERROR"
            | "initializer_pair"
            // C++: evaluated while compiling, or never (a `?:` in a template
            // argument is a constant expression: a probe there would not compile)
            | "template_argument_list"
            | "decltype"
            | "requires_expression"
            | "requires_clause"
    )
}

/// Integer value of a literal if it is one (`0`, `0x10u`, `1L`, …).
fn int_literal(e: Ts<'_>, src: &[u8]) -> Option<bool> {
    let e = strip_parens(e);
    if kind_of(e) != "number_literal" {
        return None;
    }
    let t = src_text(e, src).trim_end_matches(['u', 'U', 'l', 'L']);
    let digits = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if !h.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        h
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        b
    } else {
        if !t.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t
    };
    Some(digits.chars().any(|c| c != '0'))
}

impl<'a, 't> Builder<'a, 't> {
    fn span(&self, n: Ts<'_>) -> Option<Span> {
        self.span_of_range(n.range())
    }

    /// The span of a byte range of the preprocessed text.
    fn span_of_range(&self, r: tree_sitter::Range) -> Option<Span> {
        let (file, line) = (self.tu.locate)(r.start_point.row as u32)?;
        let end_line = match (self.tu.locate)(r.end_point.row as u32) {
            Some((f, l)) if f == file && l >= line => l,
            _ => line,
        };
        Some(Span { file, line, col: r.start_point.column as u32 + 1, end_line })
    }

    fn problem_at(&mut self, span: Option<Span>, msg: impl Into<String>) {
        self.problems.push(Problem { span, message: msg.into() });
    }

    fn problem(&mut self, n: Option<Ts<'_>>, msg: impl Into<String>) {
        let span = n.and_then(|n| self.span(n));
        self.problems.push(Problem { span, message: msg.into() });
    }

    fn give_up(&mut self, n: Ts<'_>, msg: impl Into<String>) {
        let msg = msg.into();
        if self.unanalysable.is_none() {
            let at = self.span(n).map(|s| format!(" (line {})", s.line)).unwrap_or_default();
            self.unanalysable = Some(format!("{msg}{at}"));
        }
        self.problem(Some(n), msg);
    }

    fn uses_of(&self, n: Ts<'_>) -> syntax::Uses {
        let hoisted = &self.hoisted;
        let names = syntax::Names { locals: &self.locals, typedefs: self.tu.typedefs, cpp: self.tu.cpp };
        syntax::uses_in(n, self.src, &names, &|x| hoisted.contains(&x.id()))
    }

    /// The normalised text of `n`, a statement expression built as nodes of
    /// their own shown as `{…}`. A lambda's body shows as `{…}` and a digest
    /// of its text: a C++17 lambda may run while compiling, where its result
    /// is folded into the statement that calls it with no probe to tell, and
    /// every such call comes after the statement that defines the lambda, so
    /// a change to the body is a change of that statement too.
    fn text_of(&self, n: Ts<'_>) -> String {
        let hoisted = &self.hoisted;
        normalized_with(n, self.src, &|x| {
            if !hoisted.contains(&x.id()) {
                None
            } else if x.parent().is_some_and(|p| kind_of(p) == "lambda_expression") {
                let digest = xxhash_rust::xxh3::xxh3_64(normalized(x, self.src).as_bytes()) as u32;
                Some(format!("{{… {digest:08x}}}").into())
            } else {
                Some("{…}".into())
            }
        })
    }

    /// Notes that the graph shows the syntax of `n` (as a node's text or a declaration).
    fn shows(&self, n: Ts<'_>) {
        self.shown.borrow_mut().push((n.start_byte(), n.end_byte()));
    }

    /// The first syntax error or missing token in `body` that no node's text and
    /// no declaration shows (an `ERROR` between `while` and its condition, say):
    /// the graph would not change when that text does.
    fn unseen_error<'b>(&self, body: Ts<'b>) -> Option<Ts<'b>> {
        let mut shown = self.shown.borrow().clone();
        shown.sort_unstable();
        let (a, z) = (|n: Ts<'_>| n.start_byte(), |n: Ts<'_>| n.end_byte());
        // shown by a node whose text has it: not replaced there by `{…}`
        let seen = |n: Ts<'_>| {
            let i = shown.partition_point(|&(s, _)| s <= a(n));
            shown[..i].iter().any(|&(s, e)| {
                z(n) <= e
                    && !self
                        .hoisted_ranges
                        .iter()
                        .any(|&(hs, he)| s <= hs && he <= e && (hs, he) != (s, e) && hs <= a(n) && z(n) <= he)
            })
        };
        // a lambda's body is a procedure of its own, which answers for its errors
        let lambda_body = |n: Ts<'_>| {
            n.id() != body.id()
                && n.parent().is_some_and(|p| {
                    kind_of(p) == "lambda_expression" && p.child_by_field_name("body").is_some_and(|b| b.id() == n.id())
                })
        };
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            if lambda_body(n) {
                continue;
            }
            if (n.is_error() || n.is_missing()) && !seen(n) {
                return Some(n);
            }
            if n.has_error() || n.is_missing() {
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
        }
        None
    }

    fn make_node(&self, kind: NodeKind, n: Ts<'_>, text: String) -> Node {
        self.shows(n);
        let u = self.uses_of(n);
        let mut node = Node::new(kind, text);
        node.span = self.span(n);
        node.refs = u.refs.into_iter().collect();
        node.calls = u.calls;
        node.indirect_call = u.indirect_call;
        node.dispatch = u.member_calls.into_iter().filter_map(|c| self.dispatch(c)).collect();
        node
    }

    /// A member call as selection sees it: its receiver's static type where
    /// the function's declarations tell it. A plain call `m()` in a method
    /// may call a member of the method's class (outside one, it calls a free
    /// function, which selection resolves by name).
    fn dispatch(&self, c: syntax::MemberCall) -> Option<Dispatch> {
        use syntax::Written;
        let receiver = match c.receiver {
            Written::This => self.class.clone().map_or(Receiver::Unknown, Receiver::Object),
            Written::Plain => Receiver::Object(self.class.clone()?),
            Written::Qualified(q) => Receiver::Qualified(q),
            Written::Variable { name, arrow } => match self.types.get(&name) {
                Some(Declared::Class(t)) => Receiver::Object(t.clone()),
                Some(Declared::Smart(t)) if arrow => Receiver::Object(t.clone()),
                _ => Receiver::Unknown,
            },
            Written::Other => Receiver::Unknown,
        };
        Some(Dispatch { name: c.name, receiver, args: c.args })
    }

    fn add(&mut self, node: Node, group: Option<usize>, site: Site, probe: Probe) -> usize {
        self.nodes.push(BNode { node, group, nop: false, fallback: None, site, probe, stops: false });
        self.nodes.len() - 1
    }

    /// Whether the parser may have misplaced the bounds of `e`: an error inside
    /// it or beside it (a sibling ERROR, as tree-sitter-cpp leaves after
    /// `new T*[n]`). Rewriting such an expression in place could change what
    /// the compiler reads, so it is not probed there. An error elsewhere in the
    /// parent (the body of the `for` whose condition `e` is) does not move
    /// `e`'s bounds.
    fn misparsed_around(&self, e: Ts<'_>) -> bool {
        // inside a body without errors, neither `e` nor its siblings are one
        if let Some((id, start, end)) = self.clean_body
            && e.id() != id
            && start <= e.start_byte()
            && e.end_byte() <= end
        {
            return false;
        }
        syntax::has_syntax_error(e, self.src)
            || e.parent().is_some_and(|p| {
                let mut c = p.walk();
                p.children(&mut c).any(|s| s.is_error() && syntax::has_syntax_error(s, self.src))
            })
    }

    /// Marks node `n` as possibly stopping part-way if its text has a syntax error
    /// (a call inside the error would be invisible).
    fn mark_errors(&mut self, n: usize, ts: Ts<'_>) {
        if syntax::has_syntax_error(ts, self.src) || syntax::has_missing(ts, self.src) {
            self.nodes[n].stops = true;
        }
    }

    fn nop(&mut self) -> usize {
        self.nodes.push(BNode {
            node: Node::new(NodeKind::Statement, ""),
            group: None,
            nop: true,
            fallback: None,
            site: Site::None,
            probe: Probe::Derived,
            stops: false,
        });
        self.nodes.len() - 1
    }

    fn loop_head(&mut self, s: Ts<'_>, header_text: String) -> usize {
        let n = self.nop();
        let sp = self.span(s);
        self.nodes[n].fallback = Some((header_text, sp));
        n
    }

    fn group(&mut self, kind: NodeKind, n: Ts<'_>, text: String) -> usize {
        let node = self.make_node(kind, n, text);
        self.group_of(node)
    }

    /// A statement-level node that is `node` (the condition-level node of the
    /// same syntax): one walk of the syntax for both levels.
    fn group_of(&mut self, node: Node) -> usize {
        self.groups.push(node);
        self.groups.len() - 1
    }

    /// [`Builder::make_node`] whose kind is read off the names it uses: a
    /// statement, or a call if it calls something (`indirect`: through a
    /// pointer too).
    fn make_node_called(&self, n: Ts<'_>, text: String, indirect: bool) -> Node {
        let mut node = self.make_node(NodeKind::Statement, n, text);
        if !node.calls.is_empty() || (indirect && node.indirect_call) {
            node.kind = NodeKind::Call;
        }
        node
    }

    fn link(&mut self, inc: Vec<Pend>, to: usize) {
        for p in inc {
            self.edges.push(BEdge { src: p.node, dst: to, label: p.label, coarse: p.coarse });
        }
    }

    fn label_nop(&mut self, name: &str) -> usize {
        if let Some(&n) = self.labels.get(name) {
            return n;
        }
        let n = self.nop();
        self.labels.insert(name.to_string(), n);
        n
    }

    fn noreturn_call(&self, e: Ts<'_>) -> bool {
        let mut e = strip_parens(e);
        loop {
            match kind_of(e) {
                "cast_expression" => match e.child_by_field_name("value") {
                    Some(v) => e = strip_parens(v),
                    None => return false,
                },
                "comma_expression" => match e.child_by_field_name("right") {
                    Some(v) => e = strip_parens(v),
                    None => return false,
                },
                "call_expression" => {
                    let Some(f) = e.child_by_field_name("function") else {
                        return false;
                    };
                    let f = strip_parens(f);
                    return kind_of(f) == "identifier" && is_noreturn(src_text(f, self.src), self.tu.noreturn);
                }
                _ => return false,
            }
        }
    }

    // ----- statements -----------------------------------------------------------

    fn stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        match kind_of(s) {
            "compound_statement" => {
                let kids: Vec<Ts<'_>> = {
                    let mut c = s.walk();
                    s.named_children(&mut c).collect()
                };
                self.scopes.push(Vec::new());
                let out = self.stmt_list(&kids, inc);
                self.close_scope(out, s)
            }
            "expression_statement" => self.expr_stmt(s, inc),
            "declaration" => self.local_decl(s, inc),
            "type_definition" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
                self.local_type(s);
                inc
            }
            "if_statement" => self.if_stmt(s, inc),
            "while_statement" => self.while_stmt(s, inc),
            "do_statement" => self.do_stmt(s, inc),
            "for_statement" => self.for_stmt(s, inc),
            "switch_statement" => self.switch_stmt(s, inc),
            "case_statement" => self.case_stmt(s, inc),
            "break_statement" => {
                let depth = self.break_depths.last().copied().unwrap_or(0);
                let inc = self.destroy_down_to(depth, inc, s);
                match self.breaks.last_mut() {
                    Some(b) => b.extend(inc),
                    None => self.give_up(s, "`break` outside a loop or switch"),
                }
                Vec::new()
            }
            "continue_statement" => {
                let depth = self.cont_depths.last().copied().unwrap_or(0);
                let inc = self.destroy_down_to(depth, inc, s);
                match self.conts.last_mut() {
                    Some(b) => b.extend(inc),
                    None => self.give_up(s, "`continue` outside a loop"),
                }
                Vec::new()
            }
            "goto_statement" => {
                let Some(l) = s.child_by_field_name("label") else {
                    self.give_up(s, "`goto` without a label");
                    return Vec::new();
                };
                let name = src_text(l, self.src).to_string();
                let n = self.label_nop(&name);
                self.link(inc, n);
                Vec::new()
            }
            "labeled_statement" => {
                let Some(l) = s.child_by_field_name("label") else {
                    return inc;
                };
                let name = src_text(l, self.src).to_string();
                let n = self.label_nop(&name);
                if !self.defined_labels.insert(name.clone()) {
                    self.give_up(s, format!("label `{name}` defined twice"));
                }
                self.link(inc, n);
                let inner: Vec<Ts<'_>> = {
                    let mut c = s.walk();
                    s.named_children(&mut c).filter(|k| k.id() != l.id()).collect()
                };
                self.stmt_list(&inner, vec![eps(n)])
            }
            "return_statement" => self.return_stmt(s, inc),
            "attributed_statement" => {
                let inner: Vec<Ts<'_>> = {
                    let mut c = s.walk();
                    s.named_children(&mut c).filter(|k| kind_of(k) != "attribute_declaration").collect()
                };
                self.stmt_list(&inner, inc)
            }
            "comment" | "static_assert_declaration" => inc,
            "for_range_loop" => self.range_for(s, inc),
            "try_statement" => self.try_stmt(s, inc),
            "throw_statement" => self.throw_stmt(s, inc),
            "co_return_statement" | "co_yield_statement" => {
                self.give_up(s, "a coroutine (co_return, co_yield, co_await) is not analysed");
                inc
            }
            "alias_declaration"
            | "using_declaration"
            | "namespace_alias_definition"
            | "class_specifier"
            | "template_declaration"
            | "concept_definition" => {
                self.local_type(s);
                inc
            }
            "ERROR" => self.error_stmt(s, inc),
            "function_definition" => {
                self.give_up(s, "nested function definition");
                inc
            }
            k if k.starts_with("preproc_") => {
                self.give_up(s, format!("preprocessor construct `{k}` inside a function"));
                inc
            }
            k => {
                self.give_up(s, format!("unsupported statement `{k}`"));
                inc
            }
        }
    }

    fn stmt_list(&mut self, kids: &[Ts<'_>], mut inc: Vec<Pend>) -> Vec<Pend> {
        let mut kids = kids.to_vec();
        let mut i = 0;
        while i < kids.len() {
            let k = kids[i];
            // computed goto: ERROR('goto') followed by `*expr;`
            if kind_of(k) == "ERROR"
                && normalized(k, self.src) == "goto"
                && let Some(next) = kids.get(i + 1)
                && kind_of(next) == "expression_statement"
                && next.named_child(0).map(kind_of) == Some("pointer_expression")
            {
                inc = self.computed_goto(k, *next, inc);
                i += 2;
                continue;
            }
            if kind_of(k) == "ERROR"
                && kids.get(i + 1).is_some_and(|n| kind_of(n) == "case_statement")
                && let Some(c) = self.bare_switch_condition(k)
            {
                let (out, consumed, rest) = self.bare_switch(k, c, &kids[i + 1..], inc);
                if consumed > 0 {
                    // what the parser put in the last label after the body
                    // follows the switch (it may hold the next bare switch,
                    // whose labels are the siblings after)
                    kids.splice(i..i + 1 + consumed, rest);
                    inc = out;
                    continue;
                }
                inc = out;
                i += 1;
                continue;
            }
            inc = self.stmt(k, inc);
            i += 1;
        }
        inc
    }

    fn error_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        // `__attribute__((fallthrough));` parses as ERROR(attribute_specifier) + `;`
        let only_attrs = {
            let mut c = s.walk();
            s.named_children(&mut c).all(|k| kind_of(k) == "attribute_specifier")
        };
        if only_attrs && s.named_child_count() > 0 {
            self.shows(s);
            return inc;
        }
        const CONTROL: &[&str] = &[
            "if", "else", "while", "for", "do", "switch", "case", "default", "goto", "return", "break", "continue",
            "{", "}",
        ];
        if contains_token(s, self.src, CONTROL) {
            self.give_up(s, format!("cannot parse `{}`", truncate(&normalized(s, self.src), 60)));
            return inc;
        }
        self.problem(
            Some(s),
            format!("unparsed statement kept as opaque text: `{}`", truncate(&normalized(s, self.src), 60)),
        );
        let text = normalized(s, self.src);
        let node = self.make_node(NodeKind::Statement, s, text);
        let g = self.group_of(node.clone());
        let n = self.add(node, Some(g), Site::None, Probe::Derived);
        self.nodes[n].stops = true;
        self.link(inc, n);
        vec![eps(n)]
    }

    fn computed_goto(&mut self, kw: Ts<'_>, st: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        self.shows(kw);
        let text = format!("goto {}", normalized(st, self.src));
        let node = self.make_node(NodeKind::Statement, st, text);
        let g = self.group_of(node.clone());
        let mut node = node;
        node.span = self.span(kw);
        self.groups[g].span = node.span;
        let n = self.add(
            node,
            Some(g),
            Site::Stmt { start: kw.start_byte(), end: st.end_byte(), wrap: needs_wrap(st) },
            Probe::Node,
        );
        self.nodes[n].stops = true;
        self.link(inc, n);
        // targets are filled in at the end, when all address-taken labels are known
        self.nodes[n].node.text.push(' ');
        self.pending_computed.push(n);
        Vec::new()
    }

    fn expr_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let Some(e) = s.named_child(0) else {
            return inc; // empty statement
        };
        if kind_of(e) == "gnu_asm_expression" {
            return self.asm_stmt(s, e, inc);
        }
        let inc = self.hoist_blocks(e, inc);
        let text = self.text_of(s);
        let node = self.make_node_called(s, text, true);
        let g = self.group_of(node.clone());
        let inc = self.hoist(e, inc, g);
        let n = self.add(
            node,
            Some(g),
            Site::Stmt { start: s.start_byte(), end: s.end_byte(), wrap: needs_wrap(s) },
            Probe::Node,
        );
        self.mark_errors(n, s);
        self.link(inc, n);
        if self.noreturn_call(e) {
            self.edges.push(BEdge { src: n, dst: self.exit, label: EdgeLabel::Eps, coarse: Some(EdgeLabel::Eps) });
            return Vec::new();
        }
        vec![eps(n)]
    }

    fn asm_stmt(&mut self, s: Ts<'_>, e: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let text = normalized(s, self.src);
        let node = self.make_node(NodeKind::Statement, s, text);
        let g = self.group_of(node.clone());
        let targets: Vec<String> = match e.child_by_field_name("goto_labels") {
            Some(gl) => {
                let mut c = gl.walk();
                gl.named_children(&mut c).map(|l| src_text(l, self.src).to_string()).collect()
            }
            None => Vec::new(),
        };
        let n = self.add(
            node,
            Some(g),
            Site::Stmt { start: s.start_byte(), end: s.end_byte(), wrap: needs_wrap(s) },
            Probe::Node,
        );
        self.nodes[n].stops = true;
        self.link(inc, n);
        for t in targets {
            let l = self.label_nop(&t);
            self.edges.push(BEdge {
                src: n,
                dst: l,
                label: EdgeLabel::Goto(t.clone()),
                coarse: Some(EdgeLabel::Goto(t)),
            });
        }
        vec![eps(n)]
    }

    fn return_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let e = s.named_child(0);
        let inc = match e {
            Some(e) => self.hoist_blocks(e, inc),
            None => inc,
        };
        let text = self.text_of(s);
        let node = self.make_node_called(s, text, false);
        let g = self.group_of(node.clone());
        let inc = match e {
            Some(e) => self.hoist(e, inc, g),
            None => inc,
        };
        let n = self.add(
            node,
            Some(g),
            Site::Stmt { start: s.start_byte(), end: s.end_byte(), wrap: needs_wrap(s) },
            Probe::Node,
        );
        self.mark_errors(n, s);
        self.link(inc, n);
        let out = self.destroy_down_to(0, vec![eps(n)], s);
        let exit = self.exit;
        self.link(out, exit);
        Vec::new()
    }

    /// Records a local type definition as a declaration item.
    fn local_type(&mut self, s: Ts<'_>) {
        self.shows(s);
        let mut names = Vec::new();
        crate::decls::declared_names(s, self.src, &mut names);
        // `using namespace X;` in a block may change what any name after it
        // means: it declares every name
        if crate::cpp::is_using_directive(s) {
            names.push(retest_graph::cfg::EVERY_NAME.to_string());
        }
        let text = normalized(s, self.src);
        let u = syntax::uses(s, self.src, &BTreeSet::new(), &|_| false);
        let mentions = u.refs.into_iter().filter(|r| !names.contains(r)).collect();
        self.local_decls.push(Declaration { kind: DeclKind::Type, names, text, mentions, span: self.span(s) });
    }

    fn local_decl(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        self.shows(s);
        let mut names = Vec::new();
        crate::decls::declared_names(s, self.src, &mut names);
        for n in &names {
            self.locals.insert(n.clone());
        }
        let text = normalized(s, self.src);
        let u = syntax::uses(s, self.src, &BTreeSet::new(), &|_| false);
        let mentions: Vec<String> = u.refs.iter().filter(|r| !names.contains(r)).cloned().collect();
        let storage: Vec<String> = {
            let mut c = s.walk();
            s.children(&mut c)
                .filter(|k| kind_of(k) == "storage_class_specifier")
                .map(|k| src_text(k, self.src).to_string())
                .collect()
        };
        let is_static = storage.iter().any(|s| s == "static" || s == "extern" || s == "typedef");
        // The declaration item is what the names are declared as. An automatic
        // variable's initializer is executable code, compared at its own node, so it
        // is left out; a static one's is part of the declaration.
        let decl_text = if is_static { text.clone() } else { text_without_initializers(s, self.src) };
        self.local_decls.push(Declaration {
            kind: DeclKind::Variable,
            names: names.clone(),
            text: decl_text,
            mentions,
            span: self.span(s),
        });
        if is_static {
            return inc;
        }
        let inits: Vec<Ts<'_>> = {
            let mut c = s.walk();
            s.children_by_field_name("declarator", &mut c)
                .filter(|d| kind_of(d) == "init_declarator")
                .filter_map(|d| d.child_by_field_name("value"))
                .collect()
        };
        let vla = syntax::contains_kind(s, &["array_declarator"]) && {
            let mut c = s.walk();
            s.children_by_field_name("declarator", &mut c).any(has_variable_size)
        };
        let objects = if self.tu.cpp { class_objects(s, self.src) } else { Vec::new() };
        if inits.is_empty() && !vla && objects.is_empty() {
            return inc;
        }
        let mut inc = inc;
        for v in &inits {
            inc = self.hoist_blocks(*v, inc);
        }
        let text = self.text_of(s);
        let node = self.make_node_called(s, text, false);
        let g = self.group_of(node.clone());
        for v in &inits {
            inc = self.hoist(*v, inc, g);
        }
        // declarations are never probed: a probe may not precede a declaration in C89,
        // and the declaration's out-edge is traversed whenever its in-edge is.
        let mut node = node;
        if !objects.is_empty() {
            // constructing an object calls its constructor
            node.kind = NodeKind::Call;
            for (_, class) in objects.iter().filter(|(_, c)| c != "auto") {
                if !node.calls.contains(class) {
                    node.calls.push(class.clone());
                }
            }
            self.groups[g].kind = NodeKind::Call;
            self.groups[g].calls = node.calls.clone();
        }
        let n = self.add(node, Some(g), Site::None, Probe::Derived);
        self.mark_errors(n, s);
        self.link(inc, n);
        let span = self.span(s);
        if let Some(scope) = self.scopes.last_mut() {
            scope.extend(objects.into_iter().map(|(var, class)| Dtor { var, class, span }));
        }
        if inits.iter().any(|v| self.noreturn_call(*v)) {
            self.edges.push(BEdge { src: n, dst: self.exit, label: EdgeLabel::Eps, coarse: Some(EdgeLabel::Eps) });
            return Vec::new();
        }
        vec![eps(n)]
    }

    fn cond_inner<'x>(&self, s: Ts<'x>) -> Option<Ts<'x>> {
        let mut c = s.child_by_field_name("condition")?;
        if kind_of(c) == "condition_clause" {
            c = c.child_by_field_name("value")?;
        }
        if kind_of(c) == "parenthesized_expression" {
            let mut cur = c.walk();
            let inner: Vec<Ts<'x>> = c.named_children(&mut cur).filter(|k| kind_of(k) != "comment").collect();
            if inner.len() == 1 {
                return Some(inner[0]);
            }
        }
        Some(c)
    }

    /// A decision: builds the predicate group for condition `c`, returns (true, false)
    /// exits with statement-level labels `T` and `F`.
    fn decision(&mut self, c: Ts<'_>, inc: Vec<Pend>) -> (Vec<Pend>, Vec<Pend>) {
        let inc = self.hoist_blocks(c, inc);
        let text = self.text_of(strip_parens(c));
        let g = self.group(NodeKind::Predicate, c, text);
        let (t, f) = self.branch(c, inc, g);
        // Only the decision's own edges take its outcome as their statement-level
        // label. A condition that folds (`if (0)`, `while (1)`) passes its incoming
        // edges through: they keep the label they came with (the `T` of an
        // enclosing `if`), or the statement level would give one node two `F` edges.
        let own = |v: Vec<Pend>, l: EdgeLabel| -> Vec<Pend> {
            v.into_iter()
                .map(|mut p| {
                    if self.nodes[p.node].group == Some(g) {
                        p.coarse = Some(l.clone());
                    }
                    p
                })
                .collect()
        };
        (own(t, EdgeLabel::True), own(f, EdgeLabel::False))
    }

    fn if_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let inc = self.clause_init(s, inc);
        let Some(c) = self.cond_inner(s) else {
            self.give_up(s, "`if` without a condition");
            return inc;
        };
        let constexpr = {
            let mut cur = s.walk();
            s.children(&mut cur).any(|k| kind_of(k) == "constexpr" || src_text(k, self.src) == "constexpr")
        };
        let (t, f) = if constexpr || kind_of(c) == "declaration" {
            let cons = s.child_by_field_name("consequence");
            let alt = s.child_by_field_name("alternative").and_then(|a| a.named_child(0));
            let t = cons.map(|b| Spot { start: b.start_byte(), end: b.end_byte(), how: SpotHow::Before });
            let f = match (alt, cons) {
                (Some(a), _) => Some(Spot { start: a.start_byte(), end: a.end_byte(), how: SpotHow::Before }),
                (None, Some(b)) => Some(Spot { start: b.start_byte(), end: b.end_byte(), how: SpotHow::Else }),
                _ => None,
            };
            self.arms_decision(c, s, t, f, inc)
        } else {
            self.decision(c, inc)
        };
        let mut out = match s.child_by_field_name("consequence") {
            Some(b) => self.stmt(b, t),
            None => t,
        };
        match s.child_by_field_name("alternative") {
            Some(alt) => {
                let inner: Vec<Ts<'_>> = {
                    let mut cur = alt.walk();
                    alt.named_children(&mut cur).collect()
                };
                out.extend(self.stmt_list(&inner, f));
            }
            None => out.extend(f),
        }
        out
    }

    fn header_text(&self, s: Ts<'_>) -> String {
        // the loop statement's text up to its body, for an empty infinite loop's node
        let body = s.child_by_field_name("body");
        let mut out = String::new();
        let mut c = s.walk();
        for k in s.children(&mut c) {
            if Some(k.id()) == body.map(|b| b.id()) {
                break;
            }
            let t = normalized(k, self.src);
            if !t.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&t);
            }
        }
        out
    }

    fn while_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let head = self.loop_head(s, self.header_text(s));
        self.link(inc, head);
        let Some(c) = self.cond_inner(s) else {
            self.give_up(s, "`while` without a condition");
            return Vec::new();
        };
        let (t, f) = if kind_of(c) == "declaration" {
            let body = s.child_by_field_name("body");
            let t = body.map(|b| Spot { start: b.start_byte(), end: b.end_byte(), how: SpotHow::Before });
            let f = Some(Spot { start: s.start_byte(), end: s.end_byte(), how: SpotHow::After });
            self.arms_decision(c, s, t, f, vec![eps(head)])
        } else {
            self.decision(c, vec![eps(head)])
        };
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        self.conts.push(Vec::new());
        self.cont_depths.push(self.scopes.len());
        let body_out = match s.child_by_field_name("body") {
            Some(b) => self.stmt(b, t),
            None => t,
        };
        self.link(body_out, head);
        let conts = self.pop_conts();
        self.link(conts, head);
        let mut out = f;
        out.extend(self.pop_breaks());
        out
    }

    fn do_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let top = self.loop_head(s, "do".to_string());
        self.link(inc, top);
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        self.conts.push(Vec::new());
        self.cont_depths.push(self.scopes.len());
        let body_out = match s.child_by_field_name("body") {
            Some(b) => self.stmt(b, vec![eps(top)]),
            None => vec![eps(top)],
        };
        let cond_head = self.nop();
        self.link(body_out, cond_head);
        let conts = self.pop_conts();
        self.link(conts, cond_head);
        let Some(c) = self.cond_inner(s) else {
            self.give_up(s, "`do` without a condition");
            return Vec::new();
        };
        let (t, f) = self.decision(c, vec![eps(cond_head)]);
        self.link(t, top);
        let mut out = f;
        out.extend(self.pop_breaks());
        out
    }

    fn for_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let mut inc = inc;
        if let Some(init) = s.child_by_field_name("initializer") {
            if kind_of(init) == "declaration" {
                inc = self.local_decl(init, inc);
            } else {
                inc = self.side_effect_expr(init, inc);
            }
        }
        let head = self.loop_head(s, self.header_text(s));
        self.link(inc, head);
        let (t, f) = match s.child_by_field_name("condition") {
            Some(c) => self.decision(c, vec![eps(head)]),
            None => (vec![eps(head)], Vec::new()),
        };
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        self.conts.push(Vec::new());
        self.cont_depths.push(self.scopes.len());
        let mut body_out = match s.child_by_field_name("body") {
            Some(b) => self.stmt(b, t),
            None => t,
        };
        body_out.extend(self.pop_conts());
        let after_update = match s.child_by_field_name("update") {
            Some(u) => self.side_effect_expr(u, body_out),
            None => body_out,
        };
        self.link(after_update, head);
        let mut out = f;
        out.extend(self.pop_breaks());
        out
    }

    /// An expression evaluated for its effects outside a statement (`for` init/update).
    fn side_effect_expr(&mut self, e: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let inc = self.hoist_blocks(e, inc);
        let text = self.text_of(e);
        let node = self.make_node_called(e, text, false);
        let g = self.group_of(node.clone());
        let inc = self.hoist(e, inc, g);
        let (site, probe) = if self.misparsed_around(e) {
            self.problem(Some(e), "expression the parser cannot delimit is not probed; its coverage is derived");
            (Site::None, Probe::Derived)
        } else {
            (Site::Expr { start: e.start_byte(), end: e.end_byte() }, Probe::Node)
        };
        let n = self.add(node, Some(g), site, probe);
        self.mark_errors(n, e);
        self.link(inc, n);
        vec![eps(n)]
    }

    fn switch_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let inc = self.clause_init(s, inc);
        let Some(c) = self.cond_inner(s) else {
            self.give_up(s, "`switch` without a condition");
            return inc;
        };
        let sw = self.switch_head(s.start_byte(), s.end_byte(), c, inc);
        self.switches.push(SwitchCtx { cases: Vec::new(), default: None });
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        let body_out = match s.child_by_field_name("body") {
            Some(b) => self.stmt(b, Vec::new()),
            None => Vec::new(),
        };
        self.switch_end(sw, body_out)
    }

    /// The node of a `switch` over `[start, end)` on condition `c` (for a C++
    /// declaration condition `switch (int p = f())`, the value it is
    /// initialised with is what the probe records).
    fn switch_head(&mut self, start: usize, end: usize, c: Ts<'_>, inc: Vec<Pend>) -> usize {
        let inc = self.hoist_blocks(c, inc);
        let text = self.text_of(c);
        let node = self.make_node(NodeKind::Switch, c, text);
        let g = self.group_of(node.clone());
        let inc = self.hoist(c, inc, g);
        let value = if kind_of(c) == "declaration" { c.child_by_field_name("value") } else { Some(c) };
        let (site, probe) = match value {
            Some(_) if self.guarded => {
                self.problem(
                    Some(c),
                    "a `switch` in a function that may run while compiling: its cases are not recorded apart (each counts as taken when the `switch` ran)",
                );
                (Site::None, Probe::Derived)
            }
            Some(v) if kind_of(v) != "initializer_list" && !self.misparsed_around(v) => (
                Site::Switch { stmt_start: start, stmt_end: end, cond_start: v.start_byte(), cond_end: v.end_byte() },
                Probe::PerEdge,
            ),
            _ => {
                self.give_up(c, "a `switch` whose value cannot be recorded");
                (Site::None, Probe::Derived)
            }
        };
        let sw = self.add(node, Some(g), site, probe);
        self.link(inc, sw);
        sw
    }

    /// Closes the innermost `switch` (its context and breaks are on the
    /// stacks): its case edges, and its exits.
    fn switch_end(&mut self, sw: usize, body_out: Vec<Pend>) -> Vec<Pend> {
        let ctx = self.switches.pop().unwrap();
        let mut seen = BTreeSet::new();
        for (label, target) in ctx.cases {
            let mut l = label.clone();
            let mut k = 2;
            while !seen.insert(l.clone()) {
                l = format!("{label} #{k}");
                k += 1;
            }
            self.edges.push(BEdge {
                src: sw,
                dst: target,
                label: EdgeLabel::Case(l.clone()),
                coarse: Some(EdgeLabel::Case(l)),
            });
        }
        let mut out = body_out;
        out.extend(self.pop_breaks());
        match ctx.default {
            Some(d) => {
                self.edges.push(BEdge { src: sw, dst: d, label: EdgeLabel::Default, coarse: Some(EdgeLabel::Default) })
            }
            None => out.push(Pend { node: sw, label: EdgeLabel::Default, coarse: Some(EdgeLabel::Default) }),
        }
        out
    }

    /// The condition of `head`, an ERROR node that holds only `switch (…)`:
    /// the grammar wants a block after it, C and C++ take any statement.
    fn bare_switch_condition<'x>(&self, head: Ts<'x>) -> Option<Ts<'x>> {
        let mut c = head.walk();
        let kids: Vec<Ts<'x>> = head.children(&mut c).filter(|k| kind_of(k) != "comment").collect();
        match kids[..] {
            [kw, cond] if kind_of(kw) == "switch" && kind_of(cond) == "condition_clause" => {
                let v = cond.child_by_field_name("value")?;
                Some(if kind_of(v) == "parenthesized_expression" { strip_parens(v) } else { v })
            }
            _ => None,
        }
    }

    /// `switch (c) case 0: default: statement` (GoogleTest's assertions):
    /// `cases` are the labelled statements that follow the head as the parser
    /// reads them. The switch's body is the first statement after its labels;
    /// what the parser put after that in the same label is returned, to be built
    /// after the switch, with the number of `cases` consumed.
    fn bare_switch<'x>(
        &mut self,
        head: Ts<'x>,
        c: Ts<'x>,
        cases: &[Ts<'x>],
        inc: Vec<Pend>,
    ) -> (Vec<Pend>, usize, Vec<Ts<'x>>) {
        let mut labels = Vec::new();
        let mut body = None;
        for cs in cases.iter().take_while(|k| kind_of(**k) == "case_statement") {
            let (is_default, parts, stmts) = self.case_parts(*cs);
            labels.push((is_default, parts));
            if let Some((first, rest)) = stmts.split_first() {
                body = Some((*first, rest.to_vec()));
                break;
            }
        }
        let consumed = labels.len();
        let Some((body, rest)) = body else {
            self.give_up(head, "`switch` without a statement after its labels");
            return (inc, 0, Vec::new());
        };
        self.shows(head);
        let sw = self.switch_head(head.start_byte(), body.end_byte(), c, inc);
        self.switches.push(SwitchCtx { cases: Vec::new(), default: None });
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        let n = self.nop();
        for (is_default, parts) in labels {
            self.register_label(head, is_default, &parts, n);
        }
        let body_out = self.stmt(body, vec![eps(n)]);
        (self.switch_end(sw, body_out), consumed, rest)
    }

    fn case_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let n = self.nop();
        self.link(inc, n);
        let (is_default, label_parts, body) = self.case_parts(s);
        self.register_label(s, is_default, &label_parts, n);
        self.stmt_list(&body, vec![eps(n)])
    }

    /// A labelled statement as the parser reads it: whether it is `default`,
    /// the label's parts (a GNU case range is the value, then ERROR("..." expr)),
    /// and the statements after the label.
    fn case_parts<'x>(&self, s: Ts<'x>) -> (bool, Vec<Ts<'x>>, Vec<Ts<'x>>) {
        let value = s.child_by_field_name("value");
        let is_default = {
            let mut c = s.walk();
            let first = s.children(&mut c).next();
            first.map(kind_of) == Some("default")
        };
        let mut label_parts: Vec<Ts<'x>> = Vec::new();
        let mut body: Vec<Ts<'x>> = Vec::new();
        let mut c = s.walk();
        let mut after_value = false;
        for k in s.named_children(&mut c) {
            if Some(k.id()) == value.map(|v| v.id()) {
                label_parts.push(k);
                after_value = true;
                continue;
            }
            if after_value && kind_of(k) == "ERROR" && normalized(k, self.src).starts_with("...") {
                label_parts.push(k);
                continue;
            }
            after_value = false;
            body.push(k);
        }
        (is_default, label_parts, body)
    }

    /// Makes `n` the target of a label of the innermost `switch`.
    fn register_label(&mut self, s: Ts<'_>, is_default: bool, label_parts: &[Ts<'_>], n: usize) {
        match self.switches.last_mut() {
            None => self.give_up(s, "`case` outside a switch"),
            Some(ctx) => {
                if is_default {
                    ctx.default = Some(n);
                } else {
                    let text = syntax::normalized_siblings(label_parts, self.src);
                    ctx.cases.push((text, n));
                }
                // the label's text is the switch edge's label
                for p in label_parts {
                    self.shows(*p);
                }
            }
        }
    }

    // ----- C++ -------------------------------------------------------------------

    fn pop_breaks(&mut self) -> Vec<Pend> {
        self.break_depths.pop();
        self.breaks.pop().unwrap_or_default()
    }

    fn pop_conts(&mut self) -> Vec<Pend> {
        self.cont_depths.pop();
        self.conts.pop().unwrap_or_default()
    }

    /// A C++17 condition clause's init-statement (`if (auto x = f(); x > 0)`),
    /// built before the decision.
    fn clause_init(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let Some(c) = s.child_by_field_name("condition").filter(|c| kind_of(c) == "condition_clause") else {
            return inc;
        };
        match c.child_by_field_name("initializer") {
            Some(init) if kind_of(init) == "init_statement" => {
                let kids: Vec<Ts<'_>> = {
                    let mut cur = init.walk();
                    init.named_children(&mut cur).collect()
                };
                // `if (int y = f(); …)`: the declaration without its `;` token
                let mut inc = inc;
                for k in kids {
                    inc = match kind_of(k) {
                        "declaration" => self.local_decl(k, inc),
                        "expression_statement" => self.expr_stmt(k, inc),
                        _ if kind_of(k).ends_with("expression") => self.side_effect_expr(k, inc),
                        _ => self.stmt(k, inc),
                    };
                }
                inc
            }
            Some(init) => self.stmt(init, inc),
            None => inc,
        }
    }

    /// A decision whose condition stays as written: a declaration condition
    /// (`if (T x = e)`), `if constexpr`, or a loop's implicit test. Its `T` and
    /// `F` edges are recorded where the arms begin ([`Site::Arms`]); an arm
    /// without a place is not recorded (its edge is derived, over-approximated).
    fn arms_decision(
        &mut self,
        c: Ts<'_>,
        s: Ts<'_>,
        t: Option<Spot>,
        f: Option<Spot>,
        inc: Vec<Pend>,
    ) -> (Vec<Pend>, Vec<Pend>) {
        let text = self.text_of(c);
        let node = self.make_node(NodeKind::Predicate, c, text);
        let g = self.group_of(node.clone());
        let mut node = node;
        node.span = self.span(s).or(node.span);
        let (site, probe) = match (t, f) {
            (Some(t), Some(f)) => (Site::Arms { t, f }, Probe::PerEdge),
            _ => (Site::None, Probe::Derived),
        };
        let n = self.add(node, Some(g), site, probe);
        self.mark_errors(n, c);
        self.link(inc, n);
        (
            vec![Pend { node: n, label: EdgeLabel::True, coarse: Some(EdgeLabel::True) }],
            vec![Pend { node: n, label: EdgeLabel::False, coarse: Some(EdgeLabel::False) }],
        )
    }

    /// Ends the innermost scope: the objects it constructed are destroyed, last
    /// first, on the way out of it.
    fn close_scope(&mut self, inc: Vec<Pend>, at: Ts<'_>) -> Vec<Pend> {
        let depth = self.scopes.len().saturating_sub(1);
        let out = self.destroy_down_to(depth, inc, at);
        self.scopes.pop();
        out
    }

    /// The implicit destructor calls on a way out of every scope deeper than
    /// `depth` (innermost first, each scope's objects last constructed first):
    /// a chain of nodes after `inc`. Nothing in C, or when nothing is destroyed.
    fn destroy_down_to(&mut self, depth: usize, inc: Vec<Pend>, at: Ts<'_>) -> Vec<Pend> {
        if inc.is_empty() {
            return inc;
        }
        let dtors: Vec<Dtor> = self.scopes.iter().skip(depth).rev().flat_map(|sc| sc.iter().rev().cloned()).collect();
        let mut inc = inc;
        for d in dtors {
            let text = format!("{} . ~ {} ( )", d.var, d.class);
            let mut node = Node::new(NodeKind::Call, text);
            node.span = d.span.or_else(|| self.span(at));
            node.calls = if d.class == "auto" { Vec::new() } else { vec![format!("~{}", d.class)] };
            if d.class != "auto" {
                // a local object's destructor: its class is its dynamic type
                node.dispatch = vec![Dispatch {
                    name: format!("~{}", d.class),
                    receiver: Receiver::Qualified(d.class.clone()),
                    args: 0,
                }];
            }
            node.refs = vec![d.var.clone()];
            self.groups.push(node.clone());
            let g = self.groups.len() - 1;
            let n = self.add(node, Some(g), Site::None, Probe::Derived);
            self.link(inc, n);
            inc = vec![eps(n)];
        }
        inc
    }

    /// `for (decl : range) body`: one decision, the implicit test of the range
    /// (its text the loop's head); `T` recorded where the body begins, `F` after
    /// the loop.
    fn range_for(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let inc = self.clause_init(s, inc);
        let body = s.child_by_field_name("body");
        let head_text = self.header_text(s);
        let head = self.loop_head(s, head_text.clone());
        self.link(inc, head);
        let range = s.child_by_field_name("right").unwrap_or(s);
        let mut node = self.make_node(NodeKind::Predicate, range, head_text);
        node.span = self.span(s);
        let g = self.group_of(node.clone());
        let t = body.map(|b| Spot { start: b.start_byte(), end: b.end_byte(), how: SpotHow::Before });
        let f = Spot { start: s.start_byte(), end: s.end_byte(), how: SpotHow::After };
        let (site, probe) = match t {
            Some(t) => (Site::Arms { t, f }, Probe::PerEdge),
            None => (Site::None, Probe::Derived),
        };
        let p = self.add(node, Some(g), site, probe);
        self.link(vec![eps(head)], p);
        // the loop variable is declared anew in each round
        if let Some(d) = s.child_by_field_name("declarator")
            && let Some(name) = syntax::declarator_name(d, self.src)
        {
            self.locals.insert(name);
        }
        self.breaks.push(Vec::new());
        self.break_depths.push(self.scopes.len());
        self.conts.push(Vec::new());
        self.cont_depths.push(self.scopes.len());
        let t = vec![Pend { node: p, label: EdgeLabel::True, coarse: Some(EdgeLabel::True) }];
        let body_out = match body {
            Some(b) => self.stmt(b, t),
            None => t,
        };
        self.link(body_out, head);
        let conts = self.pop_conts();
        self.link(conts, head);
        let mut out = vec![Pend { node: p, label: EdgeLabel::False, coarse: Some(EdgeLabel::False) }];
        out.extend(self.pop_breaks());
        out
    }

    /// `try { … } catch (…) { … }`: a `try` node recorded where the block begins,
    /// with an edge into the block and one (`throw`) into a dispatch node; the
    /// dispatch has an edge into each handler (labelled with its parameter) and,
    /// unless one catches everything, on (`propagate`) to the enclosing `try`'s
    /// dispatch or the exit. Which statement of the block threw is not recorded:
    /// every run that entered the block counts as possibly throwing, and each
    /// handler records itself where it begins.
    fn try_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let Some(body) = s.child_by_field_name("body") else {
            self.give_up(s, "`try` without a block");
            return inc;
        };
        let mut tnode = Node::new(NodeKind::Statement, "try");
        tnode.span = self.span(s);
        self.groups.push(tnode.clone());
        let tg = self.groups.len() - 1;
        let t = self.add(
            tnode,
            Some(tg),
            Site::BlockStart { open: body.start_byte(), close: body.end_byte() - 1 },
            Probe::Node,
        );
        self.link(inc, t);
        let mut dnode = Node::new(NodeKind::Statement, "catch");
        dnode.span = self.span(s);
        self.groups.push(dnode.clone());
        let dg = self.groups.len() - 1;
        let d = self.add(dnode, Some(dg), Site::None, Probe::Derived);
        let throw = EdgeLabel::Throw("throw".to_string());
        self.edges.push(BEdge { src: t, dst: d, label: throw.clone(), coarse: Some(throw) });
        self.tries.push(d);
        let mut out = self.stmt(body, vec![eps(t)]);
        self.tries.pop();
        let mut catches_all = false;
        let handlers: Vec<Ts<'_>> = {
            let mut c = s.walk();
            s.named_children(&mut c).filter(|k| kind_of(k) == "catch_clause").collect()
        };
        let mut seen = BTreeSet::new();
        for h in handlers {
            let param = h.child_by_field_name("parameters");
            let ptext = param.map(|p| normalized(p, self.src)).unwrap_or_default();
            catches_all |= ptext == "( ... )";
            let Some(hbody) = h.child_by_field_name("body") else {
                self.give_up(h, "`catch` without a block");
                continue;
            };
            let text = format!("catch {ptext}");
            self.shows(h);
            let mut hn = Node::new(NodeKind::Statement, text.clone());
            hn.span = self.span(h);
            if let Some(p) = param {
                let u = self.uses_of(p);
                hn.refs = u.refs.into_iter().collect();
                collect_params(p, self.src, &mut self.locals);
            }
            self.groups.push(hn.clone());
            let hg = self.groups.len() - 1;
            let hnode = self.add(
                hn,
                Some(hg),
                Site::BlockStart { open: hbody.start_byte(), close: hbody.end_byte() - 1 },
                Probe::Node,
            );
            let mut label = ptext.clone();
            let mut k = 2;
            while !seen.insert(label.clone()) {
                label = format!("{ptext} #{k}");
                k += 1;
            }
            let l = EdgeLabel::Throw(label);
            self.edges.push(BEdge { src: d, dst: hnode, label: l.clone(), coarse: Some(l) });
            out.extend(self.stmt(hbody, vec![eps(hnode)]));
        }
        if !catches_all {
            let on = self.tries.last().copied().unwrap_or(self.exit);
            let l = EdgeLabel::Throw("propagate".to_string());
            self.edges.push(BEdge { src: d, dst: on, label: l.clone(), coarse: Some(l) });
        }
        out
    }

    /// `throw e;` / `throw;`: to the enclosing `try`'s dispatch, or out of the
    /// function.
    fn throw_stmt(&mut self, s: Ts<'_>, inc: Vec<Pend>) -> Vec<Pend> {
        let text = self.text_of(s);
        let node = self.make_node(NodeKind::Call, s, text);
        let g = self.group_of(node.clone());
        let mut node = node;
        if !node.calls.iter().any(|c| c == "__cxa_throw") {
            node.calls.push("__cxa_throw".to_string());
        }
        let n = self.add(
            node,
            Some(g),
            Site::Stmt { start: s.start_byte(), end: s.end_byte(), wrap: needs_wrap(s) },
            Probe::Node,
        );
        self.nodes[n].stops = true;
        self.link(inc, n);
        let to = self.tries.last().copied().unwrap_or(self.exit);
        let l = EdgeLabel::Throw("throw".to_string());
        self.edges.push(BEdge { src: n, dst: to, label: l.clone(), coarse: Some(l) });
        Vec::new()
    }

    /// A constructor's member-initialiser list, one node per initialiser, in the
    /// order the language runs them: bases in the order the class names them,
    /// then members in declaration order (as written when the class is not in
    /// the unit). An initialiser with an argument records itself there (`m((probe, x))`).
    fn initializers(&mut self, list: Ts<'_>, class: Option<&ClassInfo>, inc: Vec<Pend>) -> Vec<Pend> {
        let mut inits: Vec<(usize, Ts<'_>, Option<String>)> = {
            let mut c = list.walk();
            list.named_children(&mut c)
                .filter(|k| kind_of(k) == "field_initializer")
                .enumerate()
                .map(|(i, k)| {
                    let name = k.named_child(0).map(|n| syntax::last_name(n, self.src)).unwrap_or_default();
                    let rank = class.and_then(|cl| {
                        cl.bases
                            .iter()
                            .position(|b| *b == name)
                            .or_else(|| cl.fields.iter().position(|f| *f == name).map(|p| p + cl.bases.len()))
                    });
                    let base = class.is_some_and(|cl| cl.bases.contains(&name));
                    (rank.unwrap_or(usize::MAX / 2 + i), k, base.then_some(name))
                })
                .collect()
        };
        inits.sort_by_key(|(r, _, _)| *r);
        let mut inc = inc;
        for (_, k, base) in inits {
            inc = self.hoist_blocks(k, inc);
            let text = self.text_of(k);
            let node = self.make_node(NodeKind::Call, k, text);
            let g = self.group_of(node.clone());
            let mut node = node;
            // a base's initialiser runs the base's constructor
            if let Some(b) = base
                && !node.calls.contains(&b)
            {
                node.calls.insert(0, b);
            }
            // Only a parenthesised argument that is not a literal is wrapped
            // (`m((probe, x))`): a comma expression is no null pointer constant
            // (`p_(NULL)`, `p_(0)`), no constant for a braced initialiser's
            // narrowing rules, and no string literal for an array. A literal
            // cannot throw; such an initialiser's coverage is derived.
            let first_arg = {
                let mut c = k.walk();
                k.named_children(&mut c)
                    .find(|x| kind_of(x) == "argument_list")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| !is_literal(*a, self.src))
                    // `m(args...)`: a pack expansion is no operand of a comma
                    .filter(|a| kind_of(a) != "parameter_pack_expansion")
            };
            let (site, probe) = match first_arg {
                Some(a) if kind_of(a) != "comment" && self.misparsed_around(a) => {
                    self.problem(
                        Some(k),
                        "member initialiser the parser cannot delimit is not probed; its coverage is derived",
                    );
                    (Site::None, Probe::Derived)
                }
                Some(a) if kind_of(a) != "comment" => {
                    (Site::Expr { start: a.start_byte(), end: a.end_byte() }, Probe::Node)
                }
                _ => (Site::None, Probe::Derived),
            };
            let n = self.add(node, Some(g), site, probe);
            self.mark_errors(n, k);
            self.link(inc, n);
            inc = vec![eps(n)];
        }
        inc
    }

    // ----- expressions ----------------------------------------------------------

    /// Builds, as statements, the statement expressions of `e` that are evaluated
    /// whenever `e` is (not under `&&`/`||` right operands, `?:` arms, or
    /// unevaluated operands).
    fn hoist_blocks(&mut self, e: Ts<'_>, mut inc: Vec<Pend>) -> Vec<Pend> {
        if let Some(block) = is_stmt_expr(e) {
            if !self.hoisted.contains(&block.id()) {
                self.hoisted.insert(block.id());
                self.hoisted.insert(e.id());
                self.hoisted_ranges.push((e.start_byte(), e.end_byte()));
                return self.stmt(block, inc);
            }
            return inc;
        }
        if is_unevaluated(kind_of(e)) {
            return inc;
        }
        if is_logical(e, self.src).is_some() {
            if let Some(l) = e.child_by_field_name("left") {
                return self.hoist_blocks(l, inc);
            }
            return inc;
        }
        if kind_of(e) == "conditional_expression" {
            if let Some(c) = e.child_by_field_name("condition") {
                return self.hoist_blocks(c, inc);
            }
            return inc;
        }
        let kids: Vec<Ts<'_>> = {
            let mut c = e.walk();
            e.named_children(&mut c).collect()
        };
        for k in kids {
            inc = self.hoist_blocks(k, inc);
        }
        inc
    }

    /// Creates nodes (in group `g`) for the control flow inside expression `e`
    /// evaluated for its value: short-circuit operators and `?:`.
    fn hoist(&mut self, e: Ts<'_>, inc: Vec<Pend>, g: usize) -> Vec<Pend> {
        if is_logical(e, self.src).is_some() {
            let (t, f) = self.branch(e, inc, g);
            let nt = self.synth(g, e, "(true)");
            let nf = self.synth(g, e, "(false)");
            self.link(t, nt);
            self.link(f, nf);
            return vec![internal(nt), internal(nf)];
        }
        if kind_of(e) == "conditional_expression" {
            let Some(c) = e.child_by_field_name("condition") else {
                return inc;
            };
            let (t, f) = self.branch(c, inc, g);
            let mut out = Vec::new();
            match e.child_by_field_name("consequence") {
                Some(x) => out.extend(self.arm(x, t, g)),
                None => {
                    // GNU `c ?: y`: the value is the condition's
                    let n = self.synth(g, c, &self.text_of(c));
                    self.link(t, n);
                    out.push(internal(n));
                }
            }
            if let Some(y) = e.child_by_field_name("alternative") {
                out.extend(self.arm(y, f, g));
            }
            return out;
        }
        if let Some(block) = is_stmt_expr(e) {
            if !self.hoisted.contains(&block.id()) && jumps_out_of(block, self.src) {
                self.give_up(e, "jump inside a conditionally evaluated statement expression");
            }
            return inc;
        }
        if is_unevaluated(kind_of(e)) {
            return inc;
        }
        let kids: Vec<Ts<'_>> = {
            let mut c = e.walk();
            e.named_children(&mut c).collect()
        };
        let mut inc = inc;
        for k in kids {
            inc = self.hoist(k, inc, g);
        }
        inc
    }

    fn synth(&mut self, g: usize, at: Ts<'_>, text: &str) -> usize {
        let mut node = Node::new(NodeKind::Statement, text);
        node.span = self.span(at);
        self.add(node, Some(g), Site::None, Probe::Derived)
    }

    /// One arm of `?:`: its own control flow, then a value node.
    fn arm(&mut self, x: Ts<'_>, inc: Vec<Pend>, g: usize) -> Vec<Pend> {
        let inc = self.hoist(x, inc, g);
        let text = self.text_of(x);
        let node = self.make_node_called(x, text, false);
        let n = self.add(node, Some(g), Site::None, Probe::Derived);
        self.mark_errors(n, x);
        self.link(inc, n);
        if self.noreturn_call(x) {
            // the statement-level node folds this path into its ε edge
            self.edges.push(BEdge { src: n, dst: self.exit, label: EdgeLabel::Eps, coarse: None });
            return Vec::new();
        }
        vec![internal(n)]
    }

    /// Condition-level decision structure of `e` in a branching context: returns the
    /// pending true and false exits. Integer literals fold.
    fn branch(&mut self, e: Ts<'_>, inc: Vec<Pend>, g: usize) -> (Vec<Pend>, Vec<Pend>) {
        let e = strip_parens(e);
        if inc.is_empty() {
            // unreachable: still build the nodes so the code is represented
        }
        match is_logical(e, self.src) {
            Some("&&") => {
                let (l, r) = (e.child_by_field_name("left"), e.child_by_field_name("right"));
                if let (Some(l), Some(r)) = (l, r) {
                    let (at, af) = self.branch(l, inc, g);
                    let (bt, mut bf) = self.branch(r, at, g);
                    bf.splice(0..0, af);
                    return (bt, bf);
                }
            }
            Some(_) => {
                let (l, r) = (e.child_by_field_name("left"), e.child_by_field_name("right"));
                if let (Some(l), Some(r)) = (l, r) {
                    let (mut at, af) = self.branch(l, inc, g);
                    let (bt, bf) = self.branch(r, af, g);
                    at.extend(bt);
                    return (at, bf);
                }
            }
            None => {}
        }
        match kind_of(e) {
            "unary_expression" => {
                let op = e.child_by_field_name("operator").map(|o| src_text(o, self.src));
                if op == Some("!")
                    && let Some(a) = e.child_by_field_name("argument")
                {
                    let (t, f) = self.branch(a, inc, g);
                    return (f, t);
                }
            }
            "comma_expression" => {
                // `(side effects, 0L)`: the value is a constant, but the left
                // operand is code; the whole expression stays a predicate
                // instead of folding away with it
                if let (Some(l), Some(r)) = (e.child_by_field_name("left"), e.child_by_field_name("right"))
                    && int_literal(r, self.src).is_none()
                {
                    let inc = self.hoist(l, inc, g);
                    return self.branch(r, inc, g);
                }
            }
            "conditional_expression" => {
                if let Some(c) = e.child_by_field_name("condition") {
                    let (ct, cf) = self.branch(c, inc, g);
                    let (mut t, mut f) = match e.child_by_field_name("consequence") {
                        Some(x) => self.branch(x, ct, g),
                        None => (ct, Vec::new()),
                    };
                    if let Some(y) = e.child_by_field_name("alternative") {
                        let (yt, yf) = self.branch(y, cf, g);
                        t.extend(yt);
                        f.extend(yf);
                    }
                    return (t, f);
                }
            }
            "call_expression" => {
                // __builtin_expect(c, v) (likely/unlikely) branches on c
                let f = e.child_by_field_name("function").map(|f| src_text(f, self.src));
                if matches!(f, Some("__builtin_expect") | Some("__builtin_expect_with_probability"))
                    && let Some(args) = e.child_by_field_name("arguments")
                    && let Some(first) = args.named_child(0)
                {
                    return self.branch(first, inc, g);
                }
            }
            _ => {}
        }
        if let Some(v) = int_literal(e, self.src) {
            return if v { (inc, Vec::new()) } else { (Vec::new(), inc) };
        }
        // a leaf condition
        let inc = self.hoist(e, inc, g);
        let text = self.text_of(e);
        let node = self.make_node(NodeKind::Predicate, e, text);
        let has_error = self.misparsed_around(e);
        let site = if has_error { Site::None } else { Site::Cond { start: e.start_byte(), end: e.end_byte() } };
        let probe = if has_error { Probe::Derived } else { Probe::PerEdge };
        if has_error {
            self.problem(Some(e), "condition with a syntax error is not probed");
        }
        let n = self.add(node, Some(g), site, probe);
        self.mark_errors(n, e);
        self.link(inc, n);
        (
            vec![Pend { node: n, label: EdgeLabel::True, coarse: None }],
            vec![Pend { node: n, label: EdgeLabel::False, coarse: None }],
        )
    }
}

/// A literal (or GCC's `__null`, what `NULL` becomes in C++), possibly in parentheses.
fn is_literal(e: Ts<'_>, src: &[u8]) -> bool {
    let e = syntax::strip_parens(e);
    matches!(
        kind_of(e),
        "number_literal"
            | "string_literal"
            | "concatenated_string"
            | "raw_string_literal"
            | "char_literal"
            | "user_defined_literal"
            | "true"
            | "false"
            | "null"
            | "nullptr"
    ) || syntax::src_text(e, src) == "__null"
}

/// The bodies of the lambdas in `n` that are not inside another lambda's body.
pub fn lambda_bodies(n: Ts<'_>) -> Vec<Ts<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if kind_of(x) == "lambda_expression" {
            if let Some(b) = x.child_by_field_name("body") {
                out.push(b);
            }
            continue;
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    out.sort_by_key(|b| b.start_byte());
    out
}

/// C++: the objects a local declaration constructs, which its scope destroys:
/// `(variable, class)` for each declarator that is a name or an array (not a
/// pointer or reference) whose type is not a built-in one (`auto` counts: it
/// may be a class). Not `static` or `extern` ones.
fn class_objects(s: Ts<'_>, src: &[u8]) -> Vec<(String, String)> {
    let storage = {
        let mut c = s.walk();
        s.children(&mut c).any(|k| {
            kind_of(k) == "storage_class_specifier" && matches!(src_text(k, src), "static" | "extern" | "thread_local")
        })
    };
    let Some(ty) = s.child_by_field_name("type") else { return Vec::new() };
    if storage || matches!(kind_of(ty), "primitive_type" | "sized_type_specifier" | "enum_specifier") {
        return Vec::new();
    }
    let class = syntax::last_name(ty, src);
    let mut out = Vec::new();
    let mut c = s.walk();
    for d in s.children_by_field_name("declarator", &mut c) {
        let mut d = d;
        if kind_of(d) == "init_declarator"
            && let Some(inner) = d.child_by_field_name("declarator")
        {
            d = inner;
        }
        while kind_of(d) == "array_declarator" {
            match d.child_by_field_name("declarator") {
                Some(inner) => d = inner,
                None => break,
            }
        }
        match kind_of(d) {
            "identifier" => out.push((src_text(d, src).to_string(), class.clone())),
            "structured_binding_declarator" => out.push((normalized(d, src), class.clone())),
            _ => {}
        }
    }
    out
}

/// What the parameters and variables declared in `n` (outside lambdas and
/// local classes, which are functions of their own) are declared as.
pub fn declared_types(n: Ts<'_>, src: &[u8], out: &mut BTreeMap<String, Declared>) {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        match kind_of(x) {
            "lambda_expression" | "class_specifier" | "struct_specifier" | "union_specifier" if x.id() != n.id() => {
                continue;
            }
            "parameter_declaration"
            | "optional_parameter_declaration"
            | "declaration"
            | "field_declaration"
            | "for_range_loop"
            | "condition_clause" => {
                if let Some(ty) = x.child_by_field_name("type") {
                    let declared = Declared::of_type(ty, src);
                    let mut c = x.walk();
                    for d in x.children_by_field_name("declarator", &mut c) {
                        if let Some(name) = syntax::declarator_name(d, src) {
                            let joined = match out.remove(&name) {
                                Some(prev) => prev.join(declared.clone()),
                                None => declared.clone(),
                            };
                            out.insert(name, joined);
                        }
                    }
                }
            }
            _ => {}
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
}

/// Whether a probe before statement `s` must be braced together with it: unless
/// `s` is a direct element of a block or of a case's statement list, inserting
/// `P;` before it would change what the enclosing `if`, loop or label governs.
fn needs_wrap(s: Ts<'_>) -> bool {
    !matches!(s.parent().map(kind_of), Some("compound_statement") | Some("case_statement"))
}

/// A declaration's tokens with the `= value` of each init-declarator left out.
fn text_without_initializers(s: Ts<'_>, src: &[u8]) -> String {
    let mut out = String::new();
    let mut c = s.walk();
    for k in s.children(&mut c) {
        let t = if kind_of(k) == "init_declarator" {
            k.child_by_field_name("declarator").map(|d| normalized(d, src)).unwrap_or_default()
        } else {
            normalized(k, src)
        };
        if !t.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&t);
        }
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// Whether a declarator declares an array whose size is not a literal constant.
fn has_variable_size(d: Ts<'_>) -> bool {
    if kind_of(d) == "array_declarator"
        && let Some(sz) = d.child_by_field_name("size")
    {
        let mut stack = vec![sz];
        while let Some(x) = stack.pop() {
            if kind_of(x) == "identifier" {
                return true;
            }
            if kind_of(x) == "sizeof_expression" {
                continue;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
    }
    let mut c = d.walk();
    let kids: Vec<Ts<'_>> = d.named_children(&mut c).collect();
    kids.into_iter().any(|k| {
        matches!(kind_of(k), "array_declarator" | "pointer_declarator" | "init_declarator" | "parenthesized_declarator")
            && has_variable_size(k)
    })
}

// `pending_computed` lives outside the main struct literal for readability.
impl<'a, 't> Builder<'a, 't> {
    #[allow(clippy::new_ret_no_self)]
    fn new(tu: &'a TuFacts<'a>) -> Builder<'a, 't> {
        Builder {
            tu,
            src: tu.src,
            nodes: Vec::new(),
            edges: Vec::new(),
            groups: Vec::new(),
            labels: BTreeMap::new(),
            defined_labels: BTreeSet::new(),
            breaks: Vec::new(),
            conts: Vec::new(),
            switches: Vec::new(),
            addr_labels: Vec::new(),
            clean_body: None,
            locals: BTreeSet::new(),
            local_decls: Vec::new(),
            hoisted: BTreeSet::new(),
            exit: 0,
            problems: Vec::new(),
            unanalysable: None,
            pending_computed: Vec::new(),
            shown: std::cell::RefCell::new(Vec::new()),
            hoisted_ranges: Vec::new(),
            scopes: Vec::new(),
            break_depths: Vec::new(),
            cont_depths: Vec::new(),
            tries: Vec::new(),
            guarded: false,
            class: None,
            types: BTreeMap::new(),
            _t: std::marker::PhantomData,
        }
    }
}

/// Builds both CFGs of the function definition `def`.
/// A function definition as the front end found it: one `function_definition`
/// node, or the pieces tree-sitter-c makes of a definition its grammar cannot
/// read whole — an old-style definition with an implicit `int` (`add(a, b)
/// int a, b; { … }`), or one whose K&R head it misreads — put back together
/// from the unit's top-level structure ([`crate::toplevel`]).
#[derive(Clone, Debug)]
pub struct Definition<'t> {
    pub name: String,
    /// Everything before the body: specifiers, declarator, old-style parameter
    /// declarations.
    pub head: Vec<Ts<'t>>,
    /// The declarator, when the parser read the definition whole.
    pub declarator: Option<Ts<'t>>,
    /// The body, when it parsed as a compound statement.
    pub body: Option<Ts<'t>>,
    /// Byte offsets of the body's `{` and `}`, known also when the body did
    /// not parse.
    pub braces: Option<(usize, usize)>,
    /// Parameter names the head's nodes do not show as such (an old-style
    /// identifier list the parser read as something else).
    pub params: Vec<String>,
    /// From the definition's first token to its last.
    pub range: tree_sitter::Range,
    /// Why the body could not be read (it is then built as an opaque function,
    /// probed at its entry).
    pub unreadable: Option<String>,
    /// C++: the class a method belongs to (its last name), for the order of a
    /// constructor's member initialisers.
    pub class: Option<String>,
    /// C++: when the function may run: only while the program runs, while
    /// compiling as well, or only while compiling.
    pub evaluation: Evaluation,
}

/// When a C++ function may run, which decides how it is probed: a probe
/// cannot store while the compiler evaluates a constant expression.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Evaluation {
    /// Only while the program runs: probed as usual.
    #[default]
    RunTime,
    /// Declared `constexpr`: it may also run while compiling, where its result
    /// is folded into its callers with no probe to tell. Every probe is
    /// guarded by `__builtin_is_constant_evaluated()` (C++14 and later; in
    /// C++11 its body is a single `return` with no room for one, and it is
    /// not probed), and a change to its body also counts as a change of its
    /// declaration, so the statements that name it count as changed.
    Constexpr,
    /// Declared `consteval`: it runs only while compiling; no probes, and a
    /// change to it is a change of its declaration.
    Consteval,
    /// A lambda's body: since C++17 a lambda is `constexpr` whenever it can
    /// be, so its probes are guarded as a `constexpr` function's (C++14 and
    /// later). A change to it is also a change of the statement that
    /// defines it (its text keeps a digest of the body), which runs before
    /// any call of it, while compiling included.
    Lambda,
}

impl Evaluation {
    /// Whether a change to the body is also a change of the declaration.
    pub fn body_is_declaration(self) -> bool {
        matches!(self, Evaluation::Constexpr | Evaluation::Consteval)
    }
}

impl<'t> Definition<'t> {
    /// A definition the parser read whole.
    pub fn of_node(def: Ts<'t>, name: String) -> Definition<'t> {
        let body = def.child_by_field_name("body");
        let head = {
            let mut c = def.walk();
            def.children(&mut c).filter(|k| Some(k.id()) != body.map(|b| b.id())).collect()
        };
        Definition {
            name,
            head,
            declarator: def.child_by_field_name("declarator"),
            body,
            braces: body.map(|b| (b.start_byte(), b.end_byte() - 1)),
            params: Vec::new(),
            range: def.range(),
            unreadable: None,
            class: None,
            evaluation: Evaluation::RunTime,
        }
    }

    /// The normalised text of the head: the entry node's text.
    pub fn signature(&self, src: &[u8]) -> String {
        let mut out = String::new();
        // a constructor's member initialisers are nodes of their own
        for k in self.head.iter().filter(|k| kind_of(**k) != "field_initializer_list") {
            let t = normalized(*k, src);
            if !t.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&t);
            }
        }
        out
    }
}

/// Builds both CFG levels of one function definition.
pub fn build_function(def: &Definition<'_>, tu: &TuFacts<'_>) -> FunctionCfgs {
    let name = def.name.as_str();
    let mut b = Builder::new(tu);
    let evaluation = def.evaluation;
    let probed = match evaluation {
        Evaluation::RunTime => true,
        Evaluation::Consteval => false,
        Evaluation::Constexpr => tu.constexpr_statements,
        // a C++11 lambda cannot run while compiling
        Evaluation::Lambda => true,
    };
    b.guarded = tu.constexpr_statements && matches!(evaluation, Evaluation::Constexpr | Evaluation::Lambda);
    let b_guarded = b.guarded && evaluation == Evaluation::Constexpr;
    let src = tu.src;
    // parameters are locals (calls through them are indirect)
    if let Some(d) = def.declarator {
        collect_params(d, src, &mut b.locals);
    }
    if tu.cpp {
        b.class = def.class.clone();
        if let Some(info) = def.class.as_ref().and_then(|c| tu.classes.get(c)) {
            b.types = info.field_types.clone();
        }
        // parameters and locals hide members; two declarations of a name in
        // different scopes with different types make it unknown
        let mut local_types: BTreeMap<String, Declared> = BTreeMap::new();
        for n in def.declarator.into_iter().chain(def.body) {
            declared_types(n, src, &mut local_types);
        }
        b.types.extend(local_types);
    }
    b.locals.extend(def.params.iter().cloned());
    let body = def.body;
    let sig = {
        let mut sig = def.signature(src);
        let hidden = (tu.hidden_attributes)(def.range.start_byte..def.braces.map_or(def.range.end_byte, |b| b.0));
        if !hidden.is_empty() {
            sig.push(' ');
            sig.push_str(&hidden);
        }
        sig
    };
    let span = b.span_of_range(def.range);
    if let Some(why) = &def.unreadable {
        b.problem_at(span, format!("{name}: {why}"));
        let mut f = opaque_function(name, sig, span, def.braces, why.clone());
        f.problems = b.problems;
        return f;
    }
    if let Some(body) = body
        && tu.cpp
    {
        if syntax::contains_kind(body, &["co_await_expression", "co_return_statement", "co_yield_statement"]) {
            let why = "a coroutine (co_return, co_yield, co_await) is not analysed";
            b.problem_at(span, format!("{name}: {why}"));
            let mut f = opaque_function(name, sig, span, def.braces, why.to_string());
            f.problems = b.problems;
            return f;
        }
        // lambdas are procedures of their own: here their bodies read `{…}`
        for l in lambda_bodies(body) {
            b.hoisted.insert(l.id());
            b.hoisted_ranges.push((l.start_byte(), l.end_byte()));
        }
    }
    // address-taken labels (GNU &&label) anywhere in the body
    if let Some(body) = body {
        b.addr_labels = syntax::label_addresses(body, src);
        if !body.has_error() {
            b.clean_body = Some((body.id(), body.start_byte(), body.end_byte()));
        }
    }
    let mut entry = Node::new(NodeKind::Entry, sig.clone());
    entry.span = span;
    b.groups.push(entry.clone());
    let entry_group = b.groups.len() - 1;
    let en = b.add(
        entry,
        Some(entry_group),
        match def.braces {
            Some((open, close)) => Site::Entry { open, close },
            None => Site::None,
        },
        Probe::Node,
    );
    let mut decl_node = Node::new(NodeKind::Declaration, "");
    decl_node.span = span;
    b.groups.push(decl_node.clone());
    let decl_group = b.groups.len() - 1;
    let dn = b.add(decl_node, Some(decl_group), Site::None, Probe::Derived);
    let mut exit = Node::new(NodeKind::Exit, "");
    exit.span = body.and_then(|body| {
        let end = body.end_position();
        (tu.locate)(end.row as u32).map(|(file, line)| Span { file, line, col: end.column as u32, end_line: line })
    });
    b.groups.push(exit.clone());
    let exit_group = b.groups.len() - 1;
    let ex = b.add(exit, Some(exit_group), Site::None, Probe::Derived);
    b.exit = ex;
    b.edges.push(BEdge { src: en, dst: dn, label: EdgeLabel::Eps, coarse: Some(EdgeLabel::Eps) });
    // a constructor's member initialisers run before its body
    let mut start = vec![eps(dn)];
    if let Some(list) = def.head.iter().find(|h| kind_of(**h) == "field_initializer_list") {
        let class = def.class.as_ref().and_then(|c| tu.classes.get(c));
        if def.class.is_some() && class.is_none() {
            b.problem_at(
                span,
                format!("{name}: the class is not defined in this unit; its initialisers keep their written order"),
            );
        }
        start = b.initializers(*list, class, start);
    }
    let out = match body {
        Some(body) if kind_of(body) == "try_statement" => b.try_stmt(body, start),
        Some(body) => b.stmt(body, start),
        None => {
            let why = "function without a body";
            b.problem_at(span, format!("{name}: {why}"));
            let mut f = opaque_function(name, sig, span, def.braces, why.to_string());
            f.problems = b.problems;
            return f;
        }
    };
    b.link(out, ex);
    if let Some(body) = body
        && let Some(e) = b.unseen_error(body)
    {
        let what = if e.is_missing() {
            format!("missing `{}`", kind_of(e))
        } else {
            format!("`{}`", truncate(&normalized(e, src), 60))
        };
        b.give_up(e, format!("syntax error the graph would not show: {what}"));
    }
    let braces = def.braces;
    match b.finish(name, decl_group) {
        // a function that may run while compiling and that the parser could
        // not read whole: where its body ends is uncertain, and a probe placed
        // by it could land in the wrong function; it stays unprobed, as it
        // would in C++11 (a change to it is a change of its declaration)
        Ok(mut f) if !probed || (b_guarded && f.unanalysable.is_some()) => {
            for (site, probe) in f.sites.iter_mut().zip(f.probes.iter_mut()) {
                *site = Site::None;
                *probe = Probe::Derived;
            }
            let why = if evaluation == Evaluation::Consteval {
                "consteval, not probed (it runs only while compiling)"
            } else if probed {
                "constexpr and not read whole by the parser, not probed (where its body ends is uncertain)"
            } else {
                "constexpr in C++11, not probed (C++11 allows no statement in it besides a `return`)"
            };
            f.problems.push(Problem {
                span,
                message: format!("{name}: {why}; a change to it counts as a change of its declaration"),
            });
            f
        }
        Ok(f) => f,
        Err((reason, problems)) => {
            let mut f = opaque_function(name, sig, span, braces, reason);
            f.problems = problems;
            f
        }
    }
}

/// The CFG of a function we could not build: entry → exit, marked
/// unanalysable. The entry is probed (after the body's `{`, when the braces
/// are known), so the tests that entered the function are known, and a change
/// to it selects them.
pub fn opaque_function(
    name: &str,
    signature: String,
    span: Option<Span>,
    braces: Option<(usize, usize)>,
    reason: String,
) -> FunctionCfgs {
    let mut b = CfgBuilder::new(name);
    let mut en = Node::new(NodeKind::Entry, signature);
    en.span = span;
    let en = b.add_node(en);
    let mut exit = Node::new(NodeKind::Exit, "");
    exit.span = span.map(|s| Span { line: s.end_line, col: 1, ..s });
    let ex = b.add_node(exit);
    b.set_entry(en);
    b.set_exit(ex);
    b.add_edge(en, ex, EdgeLabel::Eps);
    let cond = b.build().expect("two-node CFG is valid");
    let stmt = cond.clone();
    let map = Contraction { node: vec![NodeId(0), NodeId(1)], edge: vec![Some(retest_graph::EdgeId(0))] };
    FunctionCfgs {
        cond,
        stmt,
        map,
        probes: vec![Probe::Node, Probe::Derived],
        // the body may stop anywhere: nothing is derived from it
        completes_unless_calls: vec![false, false],
        sites: vec![braces.map_or(Site::None, |(open, close)| Site::Entry { open, close }), Site::None],
        locals: Vec::new(),
        unanalysable: Some(reason),
        problems: Vec::new(),
        guarded: false,
    }
}

/// The name of a C++ unit's start-up procedure.
pub const STARTUP: &str = "<static initialisation>";

/// One dynamically initialised variable of a unit's start-up code.
pub struct Initialiser {
    /// Its normalised declaration.
    pub text: String,
    pub span: Option<Span>,
    pub refs: Vec<String>,
    pub calls: Vec<String>,
}

/// A C++ unit's start-up code as a procedure of its own: the variables of
/// namespace scope whose initialisation runs code (a constructor, a call, a
/// `new`), one node each in declaration order, as the unit runs them when the
/// program (or library) is loaded, before `main`. Its entry is probed from a
/// function the loader runs, so every test whose processes loaded the unit
/// traversed it; a changed, added or removed initialiser is a changed node, and
/// selects them — a registration (`static Registrar r(new Plugin(5));`) has
/// effects that no statement naming the variable shows. Every C++ unit has
/// one, empty or not, so the first initialiser added is a change too. It has
/// no span: it is not a function of the source, and reports leave it out.
pub fn startup_procedure(inits: Vec<Initialiser>) -> FunctionCfgs {
    let mut b = CfgBuilder::new(STARTUP);
    let en = b.add_node(Node::new(NodeKind::Entry, STARTUP));
    let mut sites = vec![Site::Startup];
    let mut probes = vec![Probe::Node];
    let mut last = en;
    for i in inits {
        let mut n = Node::new(NodeKind::Call, i.text);
        n.span = i.span;
        n.refs = i.refs;
        n.calls = i.calls;
        let id = b.add_node(n);
        b.add_edge(last, id, EdgeLabel::Eps);
        sites.push(Site::None);
        probes.push(Probe::Derived);
        last = id;
    }
    let ex = b.add_node(Node::new(NodeKind::Exit, ""));
    b.add_edge(last, ex, EdgeLabel::Eps);
    sites.push(Site::None);
    probes.push(Probe::Derived);
    b.set_entry(en);
    b.set_exit(ex);
    let cond = b.build().expect("a chain from entry to exit is a valid CFG");
    let n = cond.node_count();
    let map = Contraction {
        node: (0..n as u32).map(NodeId).collect(),
        edge: (0..cond.edge_count() as u32).map(|e| Some(retest_graph::EdgeId(e))).collect(),
    };
    FunctionCfgs {
        stmt: cond.clone(),
        cond,
        map,
        probes,
        // a constructor may throw or exit: nothing is derived beyond the entry's own cell
        completes_unless_calls: vec![false; n],
        sites,
        locals: Vec::new(),
        unanalysable: None,
        problems: Vec::new(),
        guarded: false,
    }
}

/// Whether a `goto`, `break` or `continue` inside `block` can leave it: a
/// `break` or `continue` whose loop or `switch` lies inside the block stays
/// inside (the kernel's `this_cpu_read()` is a statement expression holding a
/// whole `switch`), as does a `goto` to a label defined inside it.
fn jumps_out_of(block: Ts<'_>, src: &[u8]) -> bool {
    let mut labels = BTreeSet::new();
    let mut stack = vec![block];
    while let Some(n) = stack.pop() {
        if kind_of(n) == "labeled_statement"
            && let Some(l) = n.child_by_field_name("label")
        {
            labels.insert(src_text(l, src).to_string());
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    // (node, loops around it inside the block, switches or loops around it inside the block)
    let mut stack = vec![(block, 0u32, 0u32)];
    while let Some((n, loops, breakable)) = stack.pop() {
        match kind_of(n) {
            "break_statement" if breakable == 0 => return true,
            "continue_statement" if loops == 0 => return true,
            "goto_statement" => {
                let inside = n.child_by_field_name("label").is_some_and(|l| labels.contains(src_text(l, src)));
                if !inside {
                    return true;
                }
            }
            // a computed goto (`goto *p`) may go anywhere
            "ERROR" if normalized(n, src) == "goto" => return true,
            _ => {}
        }
        let (l, b) = match kind_of(n) {
            "while_statement" | "do_statement" | "for_statement" | "for_range_loop" => (loops + 1, breakable + 1),
            "switch_statement" => (loops, breakable + 1),
            _ => (loops, breakable),
        };
        let mut c = n.walk();
        stack.extend(n.children(&mut c).map(|k| (k, l, b)));
    }
    false
}

fn collect_params(d: Ts<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    if kind_of(d) == "parameter_list" {
        let mut c = d.walk();
        for p in d.named_children(&mut c) {
            if let Some(pd) = p.child_by_field_name("declarator") {
                if let Some(n) = syntax::declarator_name(pd, src) {
                    out.insert(n);
                }
            } else if kind_of(p) == "identifier" {
                // K&R parameter list
                out.insert(src_text(p, src).to_string());
            }
        }
        return;
    }
    let mut c = d.walk();
    let kids: Vec<Ts<'_>> = d.named_children(&mut c).collect();
    for k in kids {
        collect_params(k, src, out);
    }
}

impl<'a, 't> Builder<'a, 't> {
    fn finish(mut self, name: &str, decl_group: usize) -> Result<FunctionCfgs, (String, Vec<Problem>)> {
        // computed gotos may reach every address-taken label (or every label)
        let targets: Vec<String> = if self.addr_labels.is_empty() {
            self.defined_labels.iter().cloned().collect()
        } else {
            self.addr_labels.clone()
        };
        for n in std::mem::take(&mut self.pending_computed) {
            self.nodes[n].node.text = self.nodes[n].node.text.trim_end().to_string();
            if targets.is_empty() {
                self.unanalysable.get_or_insert_with(|| "computed goto without any label".to_string());
            }
            for t in &targets {
                let l = self.label_nop(t);
                self.edges.push(BEdge {
                    src: n,
                    dst: l,
                    label: EdgeLabel::Goto(t.clone()),
                    coarse: Some(EdgeLabel::Goto(t.clone())),
                });
            }
        }
        let undefined: Vec<String> =
            self.labels.keys().filter(|l| !self.defined_labels.contains(*l)).cloned().collect();
        for l in undefined {
            self.unanalysable.get_or_insert_with(|| format!("jump to undefined label `{l}`"));
            let n = self.labels[&l];
            let ex = self.exit;
            self.edges.push(BEdge { src: n, dst: ex, label: EdgeLabel::Eps, coarse: Some(EdgeLabel::Eps) });
        }
        // the declaration node carries the local declarations at both levels
        let decl_text = self.local_decls.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join(" ");
        for n in self.nodes.iter_mut() {
            if n.group == Some(decl_group) {
                n.node.decls = self.local_decls.clone();
                n.node.text = decl_text.clone();
            }
        }
        // ---- eliminate nops: each nop has exactly one out-edge (ε) ----
        let mut nop_succ: Vec<Option<usize>> = vec![None; self.nodes.len()];
        for e in &self.edges {
            if self.nodes[e.src].nop {
                nop_succ[e.src] = Some(e.dst);
            }
        }
        // a nop with no successor leads nowhere: the code after it is unreachable in
        // the CFG sense (e.g. a label at the very end that falls to the exit is linked
        // already); point it at the exit to keep the graph total.
        for (i, n) in self.nodes.iter().enumerate() {
            if n.nop && nop_succ[i].is_none() {
                nop_succ[i] = Some(self.exit);
            }
        }
        // resolve chains; a cycle made only of nops is an empty infinite loop: the
        // first loop head on it becomes a real node
        let mut resolved: Vec<Option<usize>> = vec![None; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if !self.nodes[start].nop || resolved[start].is_some() {
                continue;
            }
            let mut path = vec![start];
            let mut cur = nop_succ[start].unwrap();
            let target = loop {
                if !self.nodes[cur].nop {
                    break cur;
                }
                if let Some(r) = resolved[cur] {
                    break r;
                }
                if let Some(pos) = path.iter().position(|&p| p == cur) {
                    // cycle path[pos..]: materialise a loop head
                    let cyc: Vec<usize> = path[pos..].to_vec();
                    let pick = cyc.iter().copied().find(|&p| self.nodes[p].fallback.is_some()).unwrap_or(cyc[0]);
                    let (text, span) =
                        self.nodes[pick].fallback.clone().unwrap_or_else(|| ("for ( ; ; )".to_string(), None));
                    let mut node = Node::new(NodeKind::Statement, text);
                    node.span = span;
                    self.groups.push(node.clone());
                    let g = self.groups.len() - 1;
                    let bn = &mut self.nodes[pick];
                    bn.nop = false;
                    bn.node = node;
                    bn.group = Some(g);
                    break pick;
                }
                path.push(cur);
                cur = nop_succ[cur].unwrap();
            };
            for p in path {
                if self.nodes[p].nop {
                    resolved[p] = Some(target);
                }
            }
        }
        // renumber real nodes in creation order
        let mut new_id = vec![u32::MAX; self.nodes.len()];
        let mut cb = CfgBuilder::new(name);
        let mut probes = Vec::new();
        let mut completes = Vec::new();
        let mut sites = Vec::new();
        let mut node_group: Vec<usize> = Vec::new();
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if n.nop {
                continue;
            }
            probes.push(n.probe);
            completes.push(
                !n.stops
                    && !self.tu.cpp
                    && matches!(
                        n.node.kind,
                        NodeKind::Entry
                            | NodeKind::Statement
                            | NodeKind::Declaration
                            | NodeKind::Predicate
                            | NodeKind::Call
                    )
                    && !n.node.indirect_call,
            );
            sites.push(n.site);
            node_group.push(n.group.expect("real nodes belong to a group"));
            // moved, not copied: only the builder's flags of a node are read from here on
            let node = std::mem::replace(&mut n.node, Node::new(NodeKind::Statement, ""));
            new_id[i] = cb.add_node(node).0;
        }
        let fin = |i: usize| -> usize { if self.nodes[i].nop { resolved[i].unwrap() } else { i } };
        cb.set_entry(NodeId(new_id[0]));
        cb.set_exit(NodeId(new_id[self.exit]));
        let mut fine_edges: Vec<(u32, u32, EdgeLabel, Option<EdgeLabel>)> = Vec::new();
        let mut seen_out: BTreeSet<(u32, EdgeLabel)> = BTreeSet::new();
        for e in &self.edges {
            if self.nodes[e.src].nop {
                continue;
            }
            let s = new_id[e.src];
            let d = new_id[fin(e.dst)];
            if !seen_out.insert((s, e.label.clone())) {
                // the same out-edge reached twice (cannot happen for well-formed input)
                self.unanalysable.get_or_insert_with(|| "internal: duplicate out-edge".to_string());
                continue;
            }
            cb.add_edge(NodeId(s), NodeId(d), e.label.clone());
            fine_edges.push((s, d, e.label.clone(), e.coarse.clone()));
        }
        let cond = match cb.build() {
            Ok(c) => c,
            Err(err) => return Err((format!("internal error building the CFG: {err}"), self.problems)),
        };
        // an unlabelled edge between two groups would vanish from the statement
        // level; only the folded `noreturn` arm of `?:` (which ends at the exit) may
        for (s, d, _, coarse) in &fine_edges {
            if coarse.is_none() && node_group[*s as usize] != node_group[*d as usize] && *d != new_id[self.exit] {
                return Err((
                    "internal error: flow between statements without a statement-level edge".to_string(),
                    self.problems,
                ));
            }
        }
        // coarse label per fine edge id
        let mut coarse_label: Vec<Option<EdgeLabel>> = vec![None; cond.edge_count()];
        for (s, _, label, coarse) in &fine_edges {
            let id = cond.out_edge_labelled(NodeId(*s), label).unwrap();
            coarse_label[id.index()] = coarse.clone();
        }
        // groups with members, in creation order
        let mut gmap: BTreeMap<usize, u32> = BTreeMap::new();
        for &g in &node_group {
            gmap.entry(g).or_insert(0);
        }
        let mut coarse_nodes = Vec::new();
        for (k, (g, slot)) in gmap.iter_mut().enumerate() {
            *slot = k as u32;
            let mut node = std::mem::replace(&mut self.groups[*g], Node::new(NodeKind::Statement, ""));
            if *g == decl_group {
                node.decls = self.local_decls.clone();
                node.text = self.local_decls.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join(" ");
            }
            coarse_nodes.push(node);
        }
        let group: Vec<NodeId> = node_group.iter().map(|g| NodeId(gmap[g])).collect();
        let (stmt, map) = match cond.contract(name, &group, coarse_nodes, &coarse_label) {
            Ok(x) => x,
            Err(err) => return Err((format!("internal error contracting the CFG: {err}"), self.problems)),
        };
        Ok(FunctionCfgs {
            cond,
            stmt,
            map,
            probes,
            completes_unless_calls: completes,
            sites,
            locals: self.local_decls,
            unanalysable: self.unanalysable,
            problems: self.problems,
            guarded: self.guarded,
        })
    }
}
