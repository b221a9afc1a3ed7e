//! A translation unit as the rest of retest sees it, whatever the language: its
//! procedures (each with a statement-level and a condition-level CFG), its
//! declarations outside procedures, and the facts selection needs about calls.
//!
//! Coverage of a unit is a set of *condition-level* edges, numbered unit-wide:
//! procedure `i`'s edge `e` has number `edge_base(i) + e`. Statement-level edge
//! coverage follows through each procedure's [`Contraction`].

use fixedbitset::FixedBitSet;
use serde::{Deserialize, Serialize};

use crate::cfg::{Cfg, Contraction, Declaration, EdgeId, Span};
use crate::coverage::Probe;

/// A file the unit's text came from.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SourceFile {
    /// As the compiler named it (relative paths are relative to the compile directory).
    pub path: String,
    /// A system header or a pseudo-file such as `<built-in>`.
    pub system: bool,
}

/// A problem found while analysing: where, and what.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Problem {
    pub span: Option<Span>,
    pub message: String,
}

/// One procedure (function) of a unit.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Procedure {
    pub name: String,
    /// Internal linkage: identified by (unit, name) rather than by name alone.
    pub is_static: bool,
    pub span: Option<Span>,
    /// Condition-level CFG: one predicate per condition; what is probed and
    /// what coverage is recorded on.
    pub cond: Cfg,
    /// Statement-level CFG: one predicate per decision; what DejaVu compares.
    pub stmt: Cfg,
    /// `cond` → `stmt`.
    pub map: Contraction,
    /// How each `cond` node is observed at run time under full instrumentation.
    pub probes: Vec<Probe>,
    /// Local declarations (also on the declaration node).
    pub locals: Vec<Declaration>,
    /// Set when the procedure could not be analysed exactly; selection then treats
    /// it as changed whenever it differs at all.
    pub unanalysable: Option<String>,
    /// Digest of the procedure's whole normalised text (signature and body): equal
    /// digests mean lexically identical definitions.
    #[serde(default)]
    pub digest: u64,
}

/// A C++ class (or struct) as the class hierarchy needs it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Class {
    /// Qualified name (`ns::Outer::C`).
    pub name: String,
    /// Direct bases, by last name as written (`Base` for `public ns::Base<T>`).
    pub bases: Vec<String>,
    /// Member functions declared or defined in the class body.
    pub methods: Vec<Method>,
    pub span: Option<Span>,
}

impl Class {
    /// The last component of the name: how calls and bases name the class.
    pub fn last_name(&self) -> &str {
        self.name.rsplit("::").next().unwrap_or(&self.name)
    }
}

/// What kind of member function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    Ordinary,
    Constructor,
    Destructor,
    /// `operator…` and conversion functions.
    Operator,
}

/// A member function of a [`Class`].
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Method {
    /// As a call names it (`go`, `operator()`, `~C`).
    pub name: String,
    /// The procedure name a definition of it gets: qualified name, parameter
    /// types as written, qualifiers (`ns::C::go(int) const`).
    pub key: String,
    pub kind: MethodKind,
    /// Declared `virtual`, `override` or `final` (a member that overrides a
    /// virtual one is virtual too: the hierarchy works that out).
    pub is_virtual: bool,
    /// Public: part of the class's interface (a frame calls it, 003 §4.1).
    pub public: bool,
    /// Fewest arguments a call may pass (parameters without default).
    pub min_args: u32,
    /// Most arguments, `None` for a variadic or parameter pack.
    pub max_args: Option<u32>,
}

impl Method {
    /// Whether a call with `n` arguments can call it.
    pub fn accepts(&self, n: u32) -> bool {
        n >= self.min_args && self.max_args.is_none_or(|m| n <= m)
    }
}

/// A method key without its parameters and qualifiers: `ns::C::go(int) const`
/// → `ns::C::go`, `C::operator()(int)` → `C::operator()`.
pub fn qualified_name(key: &str) -> &str {
    let from = key.find("operator()").map_or(0, |i| i + "operator()".len());
    match key[from..].find('(') {
        Some(i) => &key[..from + i],
        None => key,
    }
}

/// A translation unit.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Unit {
    pub files: Vec<SourceFile>,
    /// Procedures defined in the project's own files, in source order.
    pub procedures: Vec<Procedure>,
    /// Declarations outside procedure bodies (system-header ones with digested text).
    pub decls: Vec<Declaration>,
    /// Procedures whose address is taken in the unit: possible targets of calls
    /// through pointers.
    pub address_taken: Vec<String>,
    /// Procedures declared never to return.
    pub noreturn: Vec<String>,
    /// The names of the procedures where a program starts (C's `main`): the
    /// interprocedural walk begins at them (002 §4). A fact of the language,
    /// given by the front end.
    #[serde(default)]
    pub entry_points: Vec<String>,
    /// Functions after whose call control may come back a second time
    /// (`setjmp`, `vfork`): a caller's locals, such as a path register, are
    /// then indeterminate. A fact of the language and its library, given by
    /// the front end.
    #[serde(default)]
    pub returns_twice: Vec<String>,
    pub problems: Vec<Problem>,
    /// C++: the classes defined in the unit's project files (not system
    /// headers), for the class hierarchy of polymorphic calls (003 §5.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<Class>,
    /// A syntax error in the project's own code outside any procedure we could
    /// identify: code may be hidden from the analysis.
    pub unattributed_error: Option<Problem>,
}

impl Unit {
    pub fn file_path(&self, span: &Span) -> &str {
        self.files.get(span.file as usize).map(|f| f.path.as_str()).unwrap_or("?")
    }

    /// Unit-wide number of procedure `i`'s first condition-level edge.
    pub fn edge_bases(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.procedures.len() + 1);
        let mut next = 0u32;
        for p in &self.procedures {
            out.push(next);
            next += p.cond.edge_count() as u32;
        }
        out.push(next);
        out
    }

    /// Number of condition-level edges in the unit.
    pub fn edge_count(&self) -> u32 {
        self.procedures.iter().map(|p| p.cond.edge_count() as u32).sum()
    }

    pub fn procedure(&self, name: &str) -> Option<&Procedure> {
        self.procedures.iter().find(|p| p.name == name)
    }
}

impl Procedure {
    /// Statement-level edges covered, given the covered condition-level edges.
    pub fn stmt_coverage(&self, cond_edges: &FixedBitSet) -> FixedBitSet {
        let mut out = FixedBitSet::with_capacity(self.stmt.edge_count());
        for (i, m) in self.map.edge.iter().enumerate() {
            if let Some(s) = m
                && cond_edges.contains(i)
            {
                out.insert(s.index());
            }
        }
        out
    }

    /// Condition-level edges that map onto statement-level edge `e`.
    pub fn cond_edges_of(&self, e: EdgeId) -> Vec<EdgeId> {
        self.map.preimage(e).collect()
    }
}

#[cfg(test)]
mod qualified_name_tests {
    use super::qualified_name;

    #[test]
    fn keys_lose_their_parameters_and_qualifiers() {
        assert_eq!(qualified_name("ns::C::go(int) const"), "ns::C::go");
        assert_eq!(qualified_name("C::operator()(int, long)"), "C::operator()");
        assert_eq!(qualified_name("main(int, char**)"), "main");
        assert_eq!(qualified_name("<static initialisation>"), "<static initialisation>");
    }
}
