//! The control-flow graph of one procedure.
//!
//! The model follows the seeds: a CFG has a unique entry and a unique exit node,
//! every other node is a statement, a predicate, a multiway switch, a call site or
//! the procedure's declaration node (002 §2.1, 003 §2.1), and the out-edges of a
//! node are *uniquely labelled* (`ε`, `T`/`F`, a case label or `default`, or a
//! jump target), so an edge can be named by the pair (source, label) — Ball's
//! "control transition" (000 §2).
//!
//! Ids are stable: node ids are assigned in construction order by the front end
//! (source order), edge ids are the position of the edge after sorting by
//! (source, label). Two builds of the same source give the same ids, which is what
//! lets stored coverage (indexed by edge id) be read back against a stored CFG.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Index of a node within its [`Cfg`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

/// Index of an edge within its [`Cfg`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EdgeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl EdgeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a node stands for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// The unique entry node; its text is the procedure's signature.
    Entry,
    /// The unique exit node (return to the caller, or leaving the procedure for good).
    Exit,
    /// A simple statement with one `ε` out-edge (or jump edges, see [`EdgeLabel::Goto`]).
    Statement,
    /// A two-way decision with `T` and `F` out-edges. At the statement level one
    /// predicate stands for a whole decision; at the condition level one for each condition.
    Predicate,
    /// A multiway branch with one out-edge per case label and one `default` edge.
    Switch,
    /// A simple statement that contains procedure calls (see [`Node::calls`]).
    Call,
    /// The declaration node: the procedure's non-executable declarations, placed
    /// right after the entry node (002 §2.1). See [`Node::decls`].
    Declaration,
}

impl NodeKind {
    /// The byte that stands for the kind in what is stored: the unit
    /// encoding and the walk digest ([`crate::summary::Summary`]). Never changes.
    pub fn code(self) -> u8 {
        match self {
            NodeKind::Entry => 0,
            NodeKind::Exit => 1,
            NodeKind::Statement => 2,
            NodeKind::Predicate => 3,
            NodeKind::Switch => 4,
            NodeKind::Call => 5,
            NodeKind::Declaration => 6,
        }
    }

    /// The kind of a [`NodeKind::code`].
    pub fn from_code(code: u8) -> Option<NodeKind> {
        Some(match code {
            0 => NodeKind::Entry,
            1 => NodeKind::Exit,
            2 => NodeKind::Statement,
            3 => NodeKind::Predicate,
            4 => NodeKind::Switch,
            5 => NodeKind::Call,
            6 => NodeKind::Declaration,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exit => "exit",
            NodeKind::Statement => "statement",
            NodeKind::Predicate => "predicate",
            NodeKind::Switch => "switch",
            NodeKind::Call => "call",
            NodeKind::Declaration => "declaration",
        }
    }

    pub fn parse(s: &str) -> Option<NodeKind> {
        Some(match s {
            "entry" => NodeKind::Entry,
            "exit" => NodeKind::Exit,
            "statement" => NodeKind::Statement,
            "predicate" => NodeKind::Predicate,
            "switch" => NodeKind::Switch,
            "call" => NodeKind::Call,
            "declaration" => NodeKind::Declaration,
            _ => return None,
        })
    }
}

/// The label of an out-edge. Out-edges of one node carry pairwise distinct labels.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum EdgeLabel {
    /// The single unlabelled out-edge of a simple node (`ε` in the seeds).
    Eps,
    True,
    False,
    /// A case label of a multiway node, as normalised source text (`1`, `'a'`, `1 ... 5`).
    Case(String),
    /// The `default` edge of a multiway node (explicit, or implicit when no case matches).
    Default,
    /// A jump to a named target (computed `goto`, `asm goto`).
    Goto(String),
    /// Exceptional control flow: from a `try` into its handlers' dispatch
    /// (`throw`), from the dispatch into a handler (its parameter, as normalised
    /// source text) or onwards (`propagate`), from a `throw` to where it goes.
    Throw(String),
}

impl EdgeLabel {
    /// The byte that stands for the label's kind in what is stored (the
    /// unit encoding, the walk digest), and its text for the kinds that have
    /// one. Never changes.
    pub fn code(&self) -> (u8, Option<&str>) {
        match self {
            EdgeLabel::Eps => (0, None),
            EdgeLabel::True => (1, None),
            EdgeLabel::False => (2, None),
            EdgeLabel::Case(c) => (3, Some(c)),
            EdgeLabel::Default => (4, None),
            EdgeLabel::Goto(t) => (5, Some(t)),
            EdgeLabel::Throw(t) => (6, Some(t)),
        }
    }

    /// Parses the [`Display`](fmt::Display) form back.
    pub fn parse(s: &str) -> Option<EdgeLabel> {
        Some(match s {
            "ε" | "eps" | "" => EdgeLabel::Eps,
            "T" => EdgeLabel::True,
            "F" => EdgeLabel::False,
            "default" => EdgeLabel::Default,
            _ => {
                if let Some(c) = s.strip_prefix("case ") {
                    EdgeLabel::Case(c.to_string())
                } else if let Some(g) = s.strip_prefix("goto ") {
                    EdgeLabel::Goto(g.to_string())
                } else if let Some(t) = s.strip_prefix("throw ") {
                    EdgeLabel::Throw(t.to_string())
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for EdgeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeLabel::Eps => f.write_str("ε"),
            EdgeLabel::True => f.write_str("T"),
            EdgeLabel::False => f.write_str("F"),
            EdgeLabel::Case(c) => write!(f, "case {c}"),
            EdgeLabel::Default => f.write_str("default"),
            EdgeLabel::Goto(g) => write!(f, "goto {g}"),
            EdgeLabel::Throw(t) => write!(f, "throw {t}"),
        }
    }
}

/// A source location: `file` indexes the file table of the translation unit the
/// procedure belongs to (the graph itself knows no paths).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Span {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
}

/// A named program entity declared outside executable code: a variable, a type,
/// a function prototype, an enumerator. Declaration changes are detected by
/// comparing these (002 §3.1.4 "Handling variable and type declarations",
/// 003 §5.4): the names whose declaration text changed, and every name whose
/// declaration mentions an affected name, are *affected*; statements that refer
/// to an affected name count as modified.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Declaration {
    pub kind: DeclKind,
    /// The names this declaration introduces (several for `int a, b;`).
    pub names: Vec<String>,
    /// Normalised token text of the declaration.
    pub text: String,
    /// Names the declaration refers to (types, constants in array bounds, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

/// The name a declaration gives for every name: what a C++ `using namespace`
/// directive declares, since it may change what any unqualified name means
/// and the namespace's members are not known. When such a declaration
/// changes, every statement that refers to any name is affected.
pub const EVERY_NAME: &str = "*";

impl Declaration {
    /// Whether the text is a system header's digest (the front end keeps
    /// only `#` and 16 hex digits of a system header's declaration): such a
    /// declaration cannot refer to the project's entities, and no project
    /// declaration's text has this form.
    pub fn is_sealed(&self) -> bool {
        is_sealed_text(&self.text)
    }
}

/// Whether a declaration's text is a system header's digest; see
/// [`Declaration::is_sealed`].
pub fn is_sealed_text(t: &str) -> bool {
    t.len() == 17 && t.starts_with('#') && t[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeclKind {
    Variable,
    Function,
    Type,
    Tag,
    Enumerator,
    Other,
}

impl DeclKind {
    /// The byte that stands for the kind in what is stored (the unit
    /// encoding, the walk digest). Never changes.
    pub fn code(self) -> u8 {
        match self {
            DeclKind::Variable => 0,
            DeclKind::Function => 1,
            DeclKind::Type => 2,
            DeclKind::Tag => 3,
            DeclKind::Enumerator => 4,
            DeclKind::Other => 5,
        }
    }

    /// The kind of a [`DeclKind::code`].
    pub fn from_code(code: u8) -> Option<DeclKind> {
        Some(match code {
            0 => DeclKind::Variable,
            1 => DeclKind::Function,
            2 => DeclKind::Type,
            3 => DeclKind::Tag,
            4 => DeclKind::Enumerator,
            5 => DeclKind::Other,
            _ => return None,
        })
    }
}

/// A C++ call of a member function `name` with `args` arguments, as the
/// front end sees it at the call site.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Dispatch {
    pub name: String,
    pub receiver: Receiver,
    pub args: u32,
}

/// What a call's receiver is known to be.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Receiver {
    /// An object, pointer or reference of this static class type (its last
    /// name): `p->m()` with `C *p`, `this->m()` or `m()` in a method of `C`.
    /// A virtual `m` may reach every override in the classes derived from it.
    Object(String),
    /// A call qualified by a class or namespace (`C::m()`): no dynamic dispatch.
    Qualified(String),
    /// The static type is not known here (an expression, `auto`, a template
    /// parameter): every method of that name and arity may be reached.
    Unknown,
}

/// One node of a [`Cfg`].
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Node {
    pub kind: NodeKind,
    /// Normalised token text: tokens separated by one space, comments and layout
    /// dropped, literals kept exactly. Two nodes are lexically equivalent iff their
    /// kinds and texts are equal.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// Identifiers the node refers to (variables, functions, types, enumerators;
    /// not member names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    /// Procedures called directly by name, in evaluation order, without duplicates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
    /// The node calls through a pointer (target unknown statically).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub indirect_call: bool,
    /// C++: the member calls the node makes, with what the receiver's static
    /// type is known to be, from which selection computes each call's target
    /// set in the class hierarchy (003 §5.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dispatch: Vec<Dispatch>,
    /// For the [`NodeKind::Declaration`] node: the procedure's local declarations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decls: Vec<Declaration>,
}

impl Node {
    pub fn new(kind: NodeKind, text: impl Into<String>) -> Node {
        Node {
            kind,
            text: text.into(),
            span: None,
            refs: Vec::new(),
            calls: Vec::new(),
            indirect_call: false,
            dispatch: Vec::new(),
            decls: Vec::new(),
        }
    }

    pub fn with_span(mut self, span: Span) -> Node {
        self.span = Some(span);
        self
    }

    /// Whether the node contains procedure calls (direct or indirect).
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty() || self.indirect_call
    }
}

/// A labelled edge.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Edge {
    pub src: NodeId,
    pub dst: NodeId,
    pub label: EdgeLabel,
}

/// Errors from building or checking a CFG.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CfgError {
    #[error("node {node} has two out-edges labelled {label}")]
    DuplicateLabel { node: u32, label: String },
    #[error("edge {src}->{dst} refers to a node that does not exist (the graph has {nodes} nodes)")]
    DanglingEdge { src: u32, dst: u32, nodes: usize },
    #[error("the {which} node is missing or out of range")]
    MissingTerminal { which: &'static str },
    #[error("the exit node has out-edges")]
    ExitHasSuccessors,
    #[error("the entry node has in-edges")]
    EntryHasPredecessors,
    #[error(
        "contraction maps edges {first} and {second} (both out of group {group} with label {label}) to different targets"
    )]
    AmbiguousContraction { group: u32, label: String, first: u32, second: u32 },
}

/// The CFG of one procedure. Immutable once built; use [`CfgBuilder`] to make one.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(try_from = "CfgData", into = "CfgData")]
pub struct Cfg {
    name: String,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    entry: NodeId,
    exit: NodeId,
    /// `out_start[n]..out_start[n + 1]` are the ids of `n`'s out-edges.
    out_start: Vec<u32>,
    /// In-edges of every node, by edge id.
    ins: Vec<Vec<EdgeId>>,
}

/// The serialised form of a [`Cfg`]: derived indexes are rebuilt on load.
#[derive(Clone, Serialize, Deserialize)]
struct CfgData {
    name: String,
    entry: NodeId,
    exit: NodeId,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl From<Cfg> for CfgData {
    fn from(c: Cfg) -> CfgData {
        CfgData { name: c.name, entry: c.entry, exit: c.exit, nodes: c.nodes, edges: c.edges }
    }
}

impl TryFrom<CfgData> for Cfg {
    type Error = CfgError;
    fn try_from(d: CfgData) -> Result<Cfg, CfgError> {
        let mut b = CfgBuilder::new(d.name);
        for n in d.nodes {
            b.add_node(n);
        }
        b.set_entry(d.entry);
        b.set_exit(d.exit);
        for e in d.edges {
            b.add_edge(e.src, e.dst, e.label);
        }
        b.build()
    }
}

impl Cfg {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn entry(&self) -> NodeId {
        self.entry
    }
    pub fn exit(&self) -> NodeId {
        self.exit
    }
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }
    pub fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.index()]
    }
    pub fn edge(&self, e: EdgeId) -> &Edge {
        &self.edges[e.index()]
    }
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i as u32), n))
    }
    pub fn edges(&self) -> impl ExactSizeIterator<Item = (EdgeId, &Edge)> {
        self.edges.iter().enumerate().map(|(i, e)| (EdgeId(i as u32), e))
    }
    pub fn node_ids(&self) -> impl ExactSizeIterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Out-edges of `n`, ordered by label.
    pub fn out_edges(&self, n: NodeId) -> impl ExactSizeIterator<Item = EdgeId> + Clone {
        let lo = self.out_start[n.index()];
        let hi = self.out_start[n.index() + 1];
        (lo..hi).map(EdgeId)
    }

    /// In-edges of `n`, ordered by edge id.
    pub fn in_edges(&self, n: NodeId) -> &[EdgeId] {
        &self.ins[n.index()]
    }

    /// Successor nodes of `n` (one per out-edge, in label order; may repeat a node).
    pub fn succs(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.out_edges(n).map(move |e| self.edges[e.index()].dst)
    }

    pub fn preds(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.ins[n.index()].iter().map(move |e| self.edges[e.index()].src)
    }

    /// The out-edge of `n` labelled `label` — Ball's `succ(v, l)` as an edge.
    pub fn out_edge_labelled(&self, n: NodeId, label: &EdgeLabel) -> Option<EdgeId> {
        let lo = self.out_start[n.index()] as usize;
        let hi = self.out_start[n.index() + 1] as usize;
        self.edges[lo..hi].binary_search_by(|e| e.label.cmp(label)).ok().map(|i| EdgeId((lo + i) as u32))
    }

    /// The `label`-successor of `n`.
    pub fn succ_labelled(&self, n: NodeId, label: &EdgeLabel) -> Option<NodeId> {
        self.out_edge_labelled(n, label).map(|e| self.edges[e.index()].dst)
    }

    /// Labels of `n`'s out-edges, in order.
    pub fn out_labels(&self, n: NodeId) -> impl Iterator<Item = &EdgeLabel> + '_ {
        self.out_edges(n).map(move |e| &self.edges[e.index()].label)
    }

    /// A copy with every node replaced by `f(id, node)`; edges unchanged.
    pub fn map_nodes(&self, f: impl Fn(NodeId, &Node) -> Node) -> Cfg {
        let mut c = self.clone();
        c.nodes = self.nodes().map(|(id, n)| f(id, n)).collect();
        c
    }

    /// Contracts groups of nodes into single nodes.
    ///
    /// `group[n]` names the coarse node that fine node `n` belongs to; `coarse_nodes`
    /// gives the coarse nodes (indexed by group), `coarse_label[e]` the label that
    /// fine edge `e` carries in the coarse graph. A fine edge with no coarse label
    /// has no counterpart in the coarse graph: flow inside a group, or a path the
    /// coarse view folds into a node (such as a `noreturn` call in one arm of `?:`).
    /// A labelled edge from a group to itself is a genuine coarse self-loop
    /// (`while (c) ;`). Every fine edge with the same (source group, coarse label)
    /// must reach the same group. Returns the coarse CFG and the fine→coarse mapping.
    pub fn contract(
        &self,
        name: impl Into<String>,
        group: &[NodeId],
        coarse_nodes: Vec<Node>,
        coarse_label: &[Option<EdgeLabel>],
    ) -> Result<(Cfg, Contraction), CfgError> {
        assert_eq!(group.len(), self.nodes.len(), "one group per fine node");
        assert_eq!(coarse_label.len(), self.edges.len(), "one coarse label per fine edge");
        let mut b = CfgBuilder::new(name);
        for n in coarse_nodes {
            b.add_node(n);
        }
        b.set_entry(group[self.entry.index()]);
        b.set_exit(group[self.exit.index()]);
        // (coarse src, label) -> (coarse dst, first fine edge)
        let mut seen: std::collections::BTreeMap<(NodeId, EdgeLabel), (NodeId, EdgeId)> = Default::default();
        for (id, e) in self.edges() {
            let (gs, gd) = (group[e.src.index()], group[e.dst.index()]);
            let Some(label) = coarse_label[id.index()].clone() else {
                continue;
            };
            match seen.get(&(gs, label.clone())) {
                Some(&(dst, first)) if dst != gd => {
                    return Err(CfgError::AmbiguousContraction {
                        group: gs.0,
                        label: label.to_string(),
                        first: first.0,
                        second: id.0,
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert((gs, label.clone()), (gd, id));
                    b.add_edge(gs, gd, label);
                }
            }
        }
        let coarse = b.build()?;
        let edge = self
            .edges()
            .map(|(id, e)| {
                let gs = group[e.src.index()];
                coarse_label[id.index()].as_ref().and_then(|l| coarse.out_edge_labelled(gs, l))
            })
            .collect();
        Ok((coarse, Contraction { node: group.to_vec(), edge }))
    }
}

/// The fine→coarse mapping produced by [`Cfg::contract`]: the condition-level CFG
/// of a procedure maps onto its statement-level CFG this way.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Contraction {
    /// Coarse node of each fine node.
    pub node: Vec<NodeId>,
    /// Coarse edge of each fine edge; `None` for edges inside a group.
    pub edge: Vec<Option<EdgeId>>,
}

impl Contraction {
    /// Fine edges that map onto coarse edge `e`.
    pub fn preimage(&self, e: EdgeId) -> impl Iterator<Item = EdgeId> + '_ {
        self.edge.iter().enumerate().filter(move |(_, c)| **c == Some(e)).map(|(i, _)| EdgeId(i as u32))
    }
}

/// Incremental construction of a [`Cfg`].
#[derive(Clone, Debug)]
pub struct CfgBuilder {
    name: String,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    entry: Option<NodeId>,
    exit: Option<NodeId>,
}

impl CfgBuilder {
    pub fn new(name: impl Into<String>) -> CfgBuilder {
        CfgBuilder { name: name.into(), nodes: Vec::new(), edges: Vec::new(), entry: None, exit: None }
    }

    pub fn add_node(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// Room for `n` more nodes (a reader that knows how many are coming).
    pub fn reserve_nodes(&mut self, n: usize) {
        self.nodes.reserve_exact(n);
    }

    /// Room for `n` more edges.
    pub fn reserve_edges(&mut self, n: usize) {
        self.edges.reserve_exact(n);
    }

    pub fn node_mut(&mut self, n: NodeId) -> &mut Node {
        &mut self.nodes[n.index()]
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn set_entry(&mut self, n: NodeId) {
        self.entry = Some(n);
    }

    pub fn set_exit(&mut self, n: NodeId) {
        self.exit = Some(n);
    }

    pub fn add_edge(&mut self, src: NodeId, dst: NodeId, label: EdgeLabel) {
        self.edges.push(Edge { src, dst, label });
    }

    /// Checks the invariants and freezes the graph: edges sorted by (source, label),
    /// out-edge labels unique per node, entry without predecessors, exit without successors.
    pub fn build(self) -> Result<Cfg, CfgError> {
        let n = self.nodes.len();
        let entry = self.entry.filter(|e| e.index() < n);
        let exit = self.exit.filter(|e| e.index() < n);
        let entry = entry.ok_or(CfgError::MissingTerminal { which: "entry" })?;
        let exit = exit.ok_or(CfgError::MissingTerminal { which: "exit" })?;
        let mut edges = self.edges;
        for e in &edges {
            if e.src.index() >= n || e.dst.index() >= n {
                return Err(CfgError::DanglingEdge { src: e.src.0, dst: e.dst.0, nodes: n });
            }
        }
        edges.sort_by(|a, b| (a.src, &a.label).cmp(&(b.src, &b.label)));
        for w in edges.windows(2) {
            if w[0].src == w[1].src && w[0].label == w[1].label {
                return Err(CfgError::DuplicateLabel { node: w[0].src.0, label: w[0].label.to_string() });
            }
        }
        let mut out_start = vec![0u32; n + 1];
        for e in &edges {
            out_start[e.src.index() + 1] += 1;
        }
        for i in 0..n {
            out_start[i + 1] += out_start[i];
        }
        let mut ins = vec![Vec::new(); n];
        for (i, e) in edges.iter().enumerate() {
            ins[e.dst.index()].push(EdgeId(i as u32));
        }
        if out_start[exit.index() + 1] != out_start[exit.index()] {
            return Err(CfgError::ExitHasSuccessors);
        }
        if !ins[entry.index()].is_empty() {
            return Err(CfgError::EntryHasPredecessors);
        }
        Ok(Cfg { name: self.name, nodes: self.nodes, edges, entry, exit, out_start, ins })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> Cfg {
        let mut b = CfgBuilder::new("d");
        let en = b.add_node(Node::new(NodeKind::Entry, "f"));
        let p = b.add_node(Node::new(NodeKind::Predicate, "x"));
        let a = b.add_node(Node::new(NodeKind::Statement, "a"));
        let c = b.add_node(Node::new(NodeKind::Statement, "c"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(a, ex, EdgeLabel::Eps);
        b.add_edge(p, c, EdgeLabel::False);
        b.add_edge(p, a, EdgeLabel::True);
        b.add_edge(en, p, EdgeLabel::Eps);
        b.add_edge(c, ex, EdgeLabel::Eps);
        b.build().unwrap()
    }

    #[test]
    fn edges_are_sorted_by_source_then_label() {
        let g = diamond();
        let labels: Vec<_> = g.edges().map(|(_, e)| (e.src.0, e.label.to_string())).collect();
        assert_eq!(
            labels,
            vec![
                (0, "ε".to_string()),
                (1, "T".to_string()),
                (1, "F".to_string()),
                (2, "ε".to_string()),
                (3, "ε".to_string())
            ]
        );
        assert_eq!(g.succ_labelled(NodeId(1), &EdgeLabel::False), Some(NodeId(3)));
        assert_eq!(g.succ_labelled(NodeId(1), &EdgeLabel::Eps), None);
        assert_eq!(g.in_edges(NodeId(4)).len(), 2);
    }

    #[test]
    fn duplicate_labels_are_rejected() {
        let mut b = CfgBuilder::new("x");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, ex, EdgeLabel::Eps);
        b.add_edge(en, ex, EdgeLabel::Eps);
        assert!(matches!(b.build(), Err(CfgError::DuplicateLabel { .. })));
    }

    #[test]
    fn parallel_edges_with_distinct_labels_are_allowed() {
        // `if (c) ;` — both outcomes reach the same node.
        let mut b = CfgBuilder::new("x");
        let en = b.add_node(Node::new(NodeKind::Entry, ""));
        let p = b.add_node(Node::new(NodeKind::Predicate, "c"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, p, EdgeLabel::Eps);
        b.add_edge(p, ex, EdgeLabel::True);
        b.add_edge(p, ex, EdgeLabel::False);
        let g = b.build().unwrap();
        assert_eq!(g.succs(p).collect::<Vec<_>>(), vec![ex, ex]);
    }

    #[test]
    fn serde_round_trip_rebuilds_indexes() {
        let g = diamond();
        let json = serde_json_like(&g);
        let back: Cfg = serde_json_like_back(&json);
        assert_eq!(g, back);
        assert_eq!(back.in_edges(NodeId(4)).len(), 2);
    }

    // Minimal self-contained serde check without a format crate: round-trip through
    // the private data form.
    fn serde_json_like(g: &Cfg) -> CfgData {
        CfgData::from(g.clone())
    }
    fn serde_json_like_back(d: &CfgData) -> Cfg {
        Cfg::try_from(d.clone()).unwrap()
    }

    #[test]
    fn contraction_merges_short_circuit_conditions() {
        // entry -> a ; a T-> b ; a F-> else ; b T-> then ; b F-> else ; then,else -> exit
        let mut b = CfgBuilder::new("f");
        let en = b.add_node(Node::new(NodeKind::Entry, "f"));
        let a = b.add_node(Node::new(NodeKind::Predicate, "a"));
        let bb = b.add_node(Node::new(NodeKind::Predicate, "b"));
        let th = b.add_node(Node::new(NodeKind::Statement, "x = 1 ;"));
        let el = b.add_node(Node::new(NodeKind::Statement, "x = 0 ;"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, a, EdgeLabel::Eps);
        b.add_edge(a, bb, EdgeLabel::True);
        b.add_edge(a, el, EdgeLabel::False);
        b.add_edge(bb, th, EdgeLabel::True);
        b.add_edge(bb, el, EdgeLabel::False);
        b.add_edge(th, ex, EdgeLabel::Eps);
        b.add_edge(el, ex, EdgeLabel::Eps);
        let fine = b.build().unwrap();
        let group = vec![NodeId(0), NodeId(1), NodeId(1), NodeId(2), NodeId(3), NodeId(4)];
        let coarse_nodes = vec![
            Node::new(NodeKind::Entry, "f"),
            Node::new(NodeKind::Predicate, "a && b"),
            Node::new(NodeKind::Statement, "x = 1 ;"),
            Node::new(NodeKind::Statement, "x = 0 ;"),
            Node::new(NodeKind::Exit, ""),
        ];
        let labels: Vec<Option<EdgeLabel>> = fine
            .edges()
            .map(|(_, e)| match (e.src.0, e.dst.0) {
                (1, 2) => None, // a T-> b: inside the decision
                (_, 3) => Some(EdgeLabel::True),
                (1, 4) | (2, 4) => Some(EdgeLabel::False),
                _ => Some(EdgeLabel::Eps),
            })
            .collect();
        let (coarse, map) = fine.contract("f", &group, coarse_nodes, &labels).unwrap();
        assert_eq!(coarse.edge_count(), 5);
        let f_edge = coarse.out_edge_labelled(NodeId(1), &EdgeLabel::False).unwrap();
        let pre: Vec<_> = map.preimage(f_edge).collect();
        assert_eq!(pre.len(), 2, "both F exits of the decision map to its F edge");
        let internal = fine.out_edge_labelled(a, &EdgeLabel::True).unwrap();
        assert_eq!(map.edge[internal.index()], None);
    }
}
