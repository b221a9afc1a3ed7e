//! Graphviz DOT: a general parser, and the writer/reader for [`Cfg`]s.
//!
//! The parser accepts the DOT language as Graphviz documents it (graph, digraph,
//! strict, subgraphs, node/edge/graph attribute statements, edge chains, ports,
//! quoted strings with `+` concatenation, HTML strings, comments and `#` lines), so
//! that CFG dumps written by GCC (`-fdump-tree-cfg-graph`) and LLVM
//! (`opt -passes=dot-cfg`) can be read as well as our own output. The result keeps
//! node and edge attributes as strings and records which subgraphs each node was
//! declared in.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use crate::cfg::{Cfg, CfgBuilder, Declaration, EdgeLabel, Node, NodeId, NodeKind, Span};

/// Attributes as written in the file (later assignments win).
pub type Attrs = BTreeMap<String, String>;

/// A parsed DOT graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DotGraph {
    pub name: String,
    pub directed: bool,
    pub attrs: Attrs,
    /// Nodes in order of first appearance, with merged attributes.
    pub nodes: Vec<DotNode>,
    pub edges: Vec<DotEdge>,
    pub subgraphs: Vec<DotSubgraph>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DotNode {
    pub id: String,
    pub attrs: Attrs,
    /// Indexes into [`DotGraph::subgraphs`] of the subgraphs that mention the node,
    /// innermost last.
    pub subgraphs: Vec<usize>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DotEdge {
    pub from: String,
    pub to: String,
    pub from_port: Option<String>,
    pub to_port: Option<String>,
    pub attrs: Attrs,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DotSubgraph {
    pub name: String,
    pub attrs: Attrs,
    pub parent: Option<usize>,
}

impl DotGraph {
    pub fn node(&self, id: &str) -> Option<&DotNode> {
        self.nodes.iter().find(|n| n.id == id)
    }
}

/// A DOT syntax error with its 1-based line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {message}")]
pub struct DotError {
    pub line: u32,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Eq,
    Semi,
    Comma,
    Colon,
    Arrow,
    Dash2,
}

fn lex(src: &str) -> Result<Vec<(Tok, u32)>, DotError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut line = 1u32;
    let mut out = Vec::new();
    let mut at_line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            at_line_start = true;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if at_line_start && c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        at_line_start = false;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        let simple = match c {
            b'{' => Some(Tok::LBrace),
            b'}' => Some(Tok::RBrace),
            b'[' => Some(Tok::LBracket),
            b']' => Some(Tok::RBracket),
            b'=' => Some(Tok::Eq),
            b';' => Some(Tok::Semi),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(t) = simple {
            out.push((t, line));
            i += 1;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'>') {
            out.push((Tok::Arrow, line));
            i += 2;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            out.push((Tok::Dash2, line));
            i += 2;
            continue;
        }
        if c == b'"' {
            let start_line = line;
            let mut s = Vec::new();
            i += 1;
            loop {
                if i >= b.len() {
                    return Err(DotError { line: start_line, message: "unterminated string".into() });
                }
                match b[i] {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\\' if b.get(i + 1) == Some(&b'"') => {
                        s.push(b'"');
                        i += 2;
                    }
                    b'\\' if b.get(i + 1) == Some(&b'\\') => {
                        // keep `\\` for the label-level unescape; never read its second
                        // backslash as the start of `\"`
                        s.extend_from_slice(b"\\\\");
                        i += 2;
                    }
                    b'\\' if b.get(i + 1) == Some(&b'\n') => {
                        line += 1;
                        i += 2;
                    }
                    b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => {
                        line += 1;
                        i += 3;
                    }
                    x => {
                        if x == b'\n' {
                            line += 1;
                        }
                        s.push(x);
                        i += 1;
                    }
                }
            }
            let mut text = String::from_utf8_lossy(&s).into_owned();
            // "a" + "b" concatenation
            loop {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if j < b.len() && b[j] == b'+' {
                    let mut k = j + 1;
                    while k < b.len() && b[k].is_ascii_whitespace() {
                        k += 1;
                    }
                    if k < b.len() && b[k] == b'"' {
                        // lex the next string recursively
                        let rest = lex(&src[k..])?;
                        if let Some((Tok::Id(more), _)) = rest.first() {
                            // find the end of that string in the source
                            let mut m = k + 1;
                            while m < b.len() {
                                if b[m] == b'\\' {
                                    m += 2;
                                    continue;
                                }
                                if b[m] == b'"' {
                                    break;
                                }
                                m += 1;
                            }
                            line += src[i..m].matches('\n').count() as u32;
                            text.push_str(more);
                            i = m + 1;
                            continue;
                        }
                    }
                }
                break;
            }
            out.push((Tok::Id(text), start_line));
            continue;
        }
        if c == b'<' {
            // HTML string: balanced angle brackets
            let mut depth = 0;
            let start = i;
            while i < b.len() {
                match b[i] {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b'\n' => line += 1,
                    _ => {}
                }
                i += 1;
            }
            out.push((Tok::Id(src[start + 1..i - 1].to_string()), line));
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-' || c >= 0x80 {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'_'
                    || b[i] == b'.'
                    || b[i] >= 0x80
                    || (b[i] == b'-' && i == start))
            {
                i += 1;
            }
            out.push((Tok::Id(src[start..i].to_string()), line));
            continue;
        }
        return Err(DotError { line, message: format!("unexpected character {:?}", c as char) });
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, u32)>,
    pos: usize,
    g: DotGraph,
    node_index: BTreeMap<String, usize>,
}

#[derive(Clone, Default)]
struct Scope {
    node_defaults: Attrs,
    edge_defaults: Attrs,
    subgraph: Option<usize>,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn line(&self) -> u32 {
        self.toks.get(self.pos).or(self.toks.last()).map(|t| t.1).unwrap_or(1)
    }
    fn err<T>(&self, m: impl Into<String>) -> Result<T, DotError> {
        Err(DotError { line: self.line(), message: m.into() })
    }
    fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn id(&mut self) -> Result<String, DotError> {
        match self.bump() {
            Some(Tok::Id(s)) => Ok(s),
            other => {
                self.pos -= 1;
                self.err(format!("expected an identifier, found {other:?}"))
            }
        }
    }
    fn is_kw(t: Option<&Tok>, kw: &str) -> bool {
        matches!(t, Some(Tok::Id(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn attr_list(&mut self) -> Result<Attrs, DotError> {
        let mut a = Attrs::new();
        while self.eat(&Tok::LBracket) {
            while !self.eat(&Tok::RBracket) {
                let k = self.id()?;
                let v = if self.eat(&Tok::Eq) { self.id()? } else { "true".to_string() };
                a.insert(k, v);
                let _ = self.eat(&Tok::Comma) || self.eat(&Tok::Semi);
                if self.peek().is_none() {
                    return self.err("unterminated attribute list");
                }
            }
        }
        Ok(a)
    }

    fn touch_node(&mut self, id: &str, scope: &Scope, attrs: Option<&Attrs>) {
        let idx = match self.node_index.get(id) {
            Some(&i) => i,
            None => {
                let mut n = DotNode { id: id.to_string(), attrs: scope.node_defaults.clone(), subgraphs: Vec::new() };
                n.attrs.retain(|_, _| true);
                self.g.nodes.push(n);
                self.node_index.insert(id.to_string(), self.g.nodes.len() - 1);
                self.g.nodes.len() - 1
            }
        };
        let node = &mut self.g.nodes[idx];
        if let Some(a) = attrs {
            for (k, v) in a {
                node.attrs.insert(k.clone(), v.clone());
            }
        }
        // record every enclosing subgraph, outermost first
        let mut chain = Vec::new();
        let mut s = scope.subgraph;
        while let Some(i) = s {
            chain.push(i);
            s = self.g.subgraphs[i].parent;
        }
        for i in chain.into_iter().rev() {
            if !node.subgraphs.contains(&i) {
                node.subgraphs.push(i);
            }
        }
    }

    /// node_id [':' port [':' compass]]
    fn node_ref(&mut self) -> Result<(String, Option<String>), DotError> {
        let id = self.id()?;
        let mut port = None;
        if self.eat(&Tok::Colon) {
            let mut p = self.id()?;
            if self.eat(&Tok::Colon) {
                p.push(':');
                p.push_str(&self.id()?);
            }
            port = Some(p);
        }
        Ok((id, port))
    }

    /// Parses a statement list until `}`; returns the ids of nodes mentioned.
    fn stmt_list(&mut self, scope: &mut Scope) -> Result<Vec<String>, DotError> {
        let mut mentioned = Vec::new();
        loop {
            match self.peek() {
                None => return self.err("missing '}'"),
                Some(Tok::RBrace) => {
                    self.pos += 1;
                    return Ok(mentioned);
                }
                Some(Tok::Semi) => {
                    self.pos += 1;
                }
                _ => {
                    let ids = self.stmt(scope)?;
                    mentioned.extend(ids);
                }
            }
        }
    }

    fn subgraph(&mut self, scope: &Scope) -> Result<Vec<String>, DotError> {
        let mut name = String::new();
        if Self::is_kw(self.peek(), "subgraph") {
            self.pos += 1;
            if let Some(Tok::Id(_)) = self.peek() {
                name = self.id()?;
            }
        }
        if !self.eat(&Tok::LBrace) {
            return self.err("expected '{' after subgraph");
        }
        self.g.subgraphs.push(DotSubgraph { name, attrs: Attrs::new(), parent: scope.subgraph });
        let idx = self.g.subgraphs.len() - 1;
        let mut inner = scope.clone();
        inner.subgraph = Some(idx);
        self.stmt_list(&mut inner)
    }

    fn endpoint(&mut self, scope: &Scope) -> Result<Vec<(String, Option<String>)>, DotError> {
        if Self::is_kw(self.peek(), "subgraph") || self.peek() == Some(&Tok::LBrace) {
            Ok(self.subgraph(scope)?.into_iter().map(|i| (i, None)).collect())
        } else {
            Ok(vec![self.node_ref()?])
        }
    }

    fn stmt(&mut self, scope: &mut Scope) -> Result<Vec<String>, DotError> {
        let t = self.peek().cloned();
        if let Some(Tok::Id(kw)) = &t {
            let lower = kw.to_ascii_lowercase();
            if lower == "graph" || lower == "node" || lower == "edge" {
                // attribute statement, unless it is used as a node id with `=`? (not valid DOT)
                self.pos += 1;
                let a = self.attr_list()?;
                match lower.as_str() {
                    "node" => scope.node_defaults.extend(a),
                    "edge" => scope.edge_defaults.extend(a),
                    _ => match scope.subgraph {
                        Some(i) => self.g.subgraphs[i].attrs.extend(a),
                        None => self.g.attrs.extend(a),
                    },
                }
                return Ok(Vec::new());
            }
        }
        // ID '=' ID  (graph attribute)
        if let (Some(Tok::Id(_)), Some((Tok::Eq, _))) = (&t, self.toks.get(self.pos + 1)) {
            let k = self.id()?;
            self.pos += 1;
            let v = self.id()?;
            match scope.subgraph {
                Some(i) => {
                    self.g.subgraphs[i].attrs.insert(k, v);
                }
                None => {
                    self.g.attrs.insert(k, v);
                }
            }
            return Ok(Vec::new());
        }
        let mut ends = vec![self.endpoint(scope)?];
        while matches!(self.peek(), Some(Tok::Arrow) | Some(Tok::Dash2)) {
            self.pos += 1;
            ends.push(self.endpoint(scope)?);
        }
        let attrs = self.attr_list()?;
        let mut mentioned = Vec::new();
        if ends.len() == 1 {
            for (id, _) in &ends[0] {
                // a node statement (or a bare subgraph)
                self.touch_node(id, scope, Some(&attrs));
                mentioned.push(id.clone());
            }
        } else {
            let mut eattrs = scope.edge_defaults.clone();
            eattrs.extend(attrs);
            for w in ends.windows(2) {
                for (a, ap) in &w[0] {
                    for (b, bp) in &w[1] {
                        self.touch_node(a, scope, None);
                        self.touch_node(b, scope, None);
                        self.g.edges.push(DotEdge {
                            from: a.clone(),
                            to: b.clone(),
                            from_port: ap.clone(),
                            to_port: bp.clone(),
                            attrs: eattrs.clone(),
                        });
                    }
                }
            }
            for e in ends {
                mentioned.extend(e.into_iter().map(|(i, _)| i));
            }
        }
        Ok(mentioned)
    }
}

/// Parses a DOT file. If the file contains several graphs, the first one is returned.
pub fn parse(src: &str) -> Result<DotGraph, DotError> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0, g: DotGraph::default(), node_index: BTreeMap::new() };
    if Parser::is_kw(p.peek(), "strict") {
        p.pos += 1;
    }
    if Parser::is_kw(p.peek(), "digraph") {
        p.g.directed = true;
    } else if !Parser::is_kw(p.peek(), "graph") {
        return p.err("expected 'digraph' or 'graph'");
    }
    p.pos += 1;
    if let Some(Tok::Id(_)) = p.peek() {
        p.g.name = p.id()?;
    }
    if !p.eat(&Tok::LBrace) {
        return p.err("expected '{'");
    }
    let mut scope = Scope::default();
    p.stmt_list(&mut scope)?;
    Ok(p.g)
}

/// Escapes a string for a DOT double-quoted ID.
pub fn quote(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            _ => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Undoes [`quote`]'s escaping of backslashes and newlines (the lexer already
/// removed the `\"` escapes).
fn unescape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('\\') => o.push('\\'),
                Some('n') => o.push('\n'),
                Some(x) => {
                    o.push('\\');
                    o.push(x);
                }
                None => o.push('\\'),
            }
        } else {
            o.push(c);
        }
    }
    o
}

/// The format marker our writer puts on every graph it emits.
pub const FORMAT: &str = "retest-cfg/1";

fn shape(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Entry | NodeKind::Exit => "oval",
        NodeKind::Statement | NodeKind::Call => "ellipse",
        NodeKind::Predicate => "box",
        NodeKind::Switch => "hexagon",
        NodeKind::Declaration => "note",
    }
}

/// Options for [`write_cfg`].
#[derive(Default)]
pub struct DotOptions<'a> {
    /// Names the file of a [`Span`] in labels (the graph only stores file indexes).
    pub file_name: Option<&'a dyn Fn(u32) -> String>,
    /// Extra per-node attributes, e.g. colouring by coverage.
    pub node_attrs: Option<&'a dyn Fn(NodeId) -> Vec<(String, String)>>,
    /// Clusters to draw: (label, member nodes).
    pub clusters: Vec<(String, Vec<NodeId>)>,
}

/// Writes `cfg` as DOT. Every semantic field is written as an attribute, so
/// [`read_cfg`] gives back an equal graph; `label` is only for display.
pub fn write_cfg(cfg: &Cfg, opts: &DotOptions<'_>, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "digraph {} {{", quote(cfg.name()))?;
    writeln!(w, "  graph [format={}, entry=n{}, exit=n{}];", quote(FORMAT), cfg.entry().0, cfg.exit().0)?;
    writeln!(w, "  node [fontname=\"monospace\"];")?;
    let in_cluster: std::collections::BTreeSet<NodeId> =
        opts.clusters.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    for (i, (label, members)) in opts.clusters.iter().enumerate() {
        writeln!(w, "  subgraph cluster_{i} {{")?;
        writeln!(w, "    label={}; style=dashed;", quote(label))?;
        for &n in members {
            write!(w, "  ")?;
            write_node(cfg, n, opts, w)?;
        }
        writeln!(w, "  }}")?;
    }
    for n in cfg.node_ids() {
        if !in_cluster.contains(&n) {
            write_node(cfg, n, opts, w)?;
        }
    }
    for (_, e) in cfg.edges() {
        let l = e.label.to_string();
        writeln!(w, "  n{} -> n{} [label={}];", e.src.0, e.dst.0, quote(&l))?;
    }
    writeln!(w, "}}")
}

fn write_node(cfg: &Cfg, n: NodeId, opts: &DotOptions<'_>, w: &mut dyn Write) -> io::Result<()> {
    let node = cfg.node(n);
    let mut display = String::new();
    if let Some(sp) = node.span {
        match opts.file_name {
            Some(f) => {
                let _ = write!(display, "{}:{}: ", f(sp.file), sp.line);
            }
            None => {
                let _ = write!(display, "{}: ", sp.line);
            }
        }
    }
    match node.kind {
        NodeKind::Entry => display.push_str("entry "),
        NodeKind::Exit => display.push_str("exit"),
        NodeKind::Declaration => display.push_str("decl "),
        _ => {}
    }
    display.push_str(&node.text);
    let mut attrs: Vec<(String, String)> = vec![
        ("label".into(), display),
        ("shape".into(), shape(node.kind).into()),
        ("kind".into(), node.kind.as_str().into()),
        ("text".into(), node.text.clone()),
    ];
    if let Some(sp) = node.span {
        attrs.push(("span".into(), format!("{}:{}:{}:{}", sp.file, sp.line, sp.col, sp.end_line)));
    }
    if !node.refs.is_empty() {
        attrs.push(("refs".into(), node.refs.join(" ")));
    }
    if !node.calls.is_empty() {
        attrs.push(("calls".into(), node.calls.join(" ")));
    }
    if node.indirect_call {
        attrs.push(("indirect_call".into(), "true".into()));
    }
    for (i, d) in node.decls.iter().enumerate() {
        attrs.push((format!("decl{i}"), encode_decl(d)));
    }
    if let Some(f) = opts.node_attrs {
        attrs.extend(f(n));
    }
    let body: Vec<String> = attrs.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect();
    writeln!(w, "  n{} [{}];", n.0, body.join(", "))
}

// A declaration in one attribute: fields separated by U+241E (record separator
// symbol), lists by spaces.
const SEP: char = '\u{241E}';

fn encode_decl(d: &Declaration) -> String {
    let kind = serde_plain_kind(d.kind);
    let span = d.span.map(|s| format!("{}:{}:{}:{}", s.file, s.line, s.col, s.end_line)).unwrap_or_default();
    format!("{kind}{SEP}{}{SEP}{}{SEP}{}{SEP}{span}", d.names.join(" "), d.text, d.mentions.join(" "))
}

fn serde_plain_kind(k: crate::cfg::DeclKind) -> &'static str {
    use crate::cfg::DeclKind::*;
    match k {
        Variable => "variable",
        Function => "function",
        Type => "type",
        Tag => "tag",
        Enumerator => "enumerator",
        Other => "other",
    }
}

fn decode_decl(s: &str) -> Option<Declaration> {
    use crate::cfg::DeclKind::*;
    let f: Vec<&str> = s.split(SEP).collect();
    if f.len() != 5 {
        return None;
    }
    let kind = match f[0] {
        "variable" => Variable,
        "function" => Function,
        "type" => Type,
        "tag" => Tag,
        "enumerator" => Enumerator,
        "other" => Other,
        _ => return None,
    };
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    Some(Declaration {
        kind,
        names: words(f[1]),
        text: f[2].to_string(),
        mentions: words(f[3]),
        span: if f[4].is_empty() { None } else { parse_span(f[4]) },
    })
}

fn parse_span(s: &str) -> Option<Span> {
    let p: Vec<u32> = s.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    (p.len() == 4).then(|| Span { file: p[0], line: p[1], col: p[2], end_line: p[3] })
}

/// Errors reading a CFG back from DOT.
#[derive(Debug, thiserror::Error)]
pub enum ReadCfgError {
    #[error(transparent)]
    Syntax(#[from] DotError),
    #[error("not a retest CFG (graph attribute format={FORMAT:?} missing)")]
    NotOurs,
    #[error("node {0}: {1}")]
    BadNode(String, String),
    #[error("edge {0} -> {1}: {2}")]
    BadEdge(String, String, String),
    #[error(transparent)]
    Cfg(#[from] crate::cfg::CfgError),
}

/// Reads a CFG written by [`write_cfg`].
pub fn read_cfg(src: &str) -> Result<Cfg, ReadCfgError> {
    let g = parse(src)?;
    if g.attrs.get("format").map(String::as_str) != Some(FORMAT) {
        return Err(ReadCfgError::NotOurs);
    }
    let idx = |id: &str| -> Option<u32> { id.strip_prefix('n')?.parse().ok() };
    let mut nodes: Vec<(u32, Node)> = Vec::new();
    for n in &g.nodes {
        let i = idx(&n.id).ok_or_else(|| ReadCfgError::BadNode(n.id.clone(), "id is not n<number>".into()))?;
        let kind = n
            .attrs
            .get("kind")
            .and_then(|k| NodeKind::parse(k))
            .ok_or_else(|| ReadCfgError::BadNode(n.id.clone(), "missing or unknown kind".into()))?;
        let mut node = Node::new(kind, unescape(n.attrs.get("text").map(String::as_str).unwrap_or("")));
        if let Some(s) = n.attrs.get("span") {
            node.span =
                Some(parse_span(s).ok_or_else(|| ReadCfgError::BadNode(n.id.clone(), format!("bad span {s:?}")))?);
        }
        let words =
            |k: &str| n.attrs.get(k).map(|s| s.split_whitespace().map(String::from).collect()).unwrap_or_default();
        node.refs = words("refs");
        node.calls = words("calls");
        node.indirect_call = n.attrs.get("indirect_call").map(String::as_str) == Some("true");
        let mut i_decl = 0;
        while let Some(d) = n.attrs.get(&format!("decl{i_decl}")) {
            node.decls.push(
                decode_decl(&unescape(d))
                    .ok_or_else(|| ReadCfgError::BadNode(n.id.clone(), format!("bad decl{i_decl}")))?,
            );
            i_decl += 1;
        }
        nodes.push((i, node));
    }
    nodes.sort_by_key(|(i, _)| *i);
    for (k, (i, _)) in nodes.iter().enumerate() {
        if *i as usize != k {
            return Err(ReadCfgError::BadNode(format!("n{i}"), "node ids are not 0..N".into()));
        }
    }
    let mut b = CfgBuilder::new(g.name.clone());
    for (_, n) in nodes {
        b.add_node(n);
    }
    let term = |k: &str| g.attrs.get(k).and_then(|s| idx(s)).map(NodeId);
    if let Some(e) = term("entry") {
        b.set_entry(e);
    }
    if let Some(x) = term("exit") {
        b.set_exit(x);
    }
    for e in &g.edges {
        let (Some(s), Some(d)) = (idx(&e.from), idx(&e.to)) else {
            return Err(ReadCfgError::BadEdge(e.from.clone(), e.to.clone(), "bad endpoint".into()));
        };
        let l = e.attrs.get("label").map(|l| unescape(l)).unwrap_or_default();
        let label = EdgeLabel::parse(&l)
            .ok_or_else(|| ReadCfgError::BadEdge(e.from.clone(), e.to.clone(), format!("bad label {l:?}")))?;
        b.add_edge(NodeId(s), NodeId(d), label);
    }
    Ok(b.build()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{DeclKind, Declaration};

    fn sample() -> Cfg {
        let mut b = CfgBuilder::new("f");
        let mut en = Node::new(NodeKind::Entry, "int f ( int x )");
        en.span = Some(Span { file: 0, line: 1, col: 0, end_line: 9 });
        let en = b.add_node(en);
        let mut d = Node::new(NodeKind::Declaration, "int y ;");
        d.decls.push(Declaration {
            kind: DeclKind::Variable,
            names: vec!["y".into()],
            text: "int y ;".into(),
            mentions: vec![],
            span: None,
        });
        let d = b.add_node(d);
        let mut sw = Node::new(NodeKind::Switch, "x");
        sw.refs = vec!["x".into()];
        let sw = b.add_node(sw);
        let mut c = Node::new(NodeKind::Call, "puts ( \"a \\\"q\\\" b\" ) ;");
        c.calls = vec!["puts".into()];
        let c = b.add_node(c);
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, d, EdgeLabel::Eps);
        b.add_edge(d, sw, EdgeLabel::Eps);
        b.add_edge(sw, c, EdgeLabel::Case("'a'".into()));
        b.add_edge(sw, c, EdgeLabel::Case("1 ... 5".into()));
        b.add_edge(sw, ex, EdgeLabel::Default);
        b.add_edge(c, ex, EdgeLabel::Eps);
        b.build().unwrap()
    }

    #[test]
    fn cfg_round_trips_through_dot() {
        let g = sample();
        let mut out = Vec::new();
        write_cfg(&g, &DotOptions::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = read_cfg(&text).unwrap();
        assert_eq!(g, back);
    }

    #[test]
    fn parses_gcc_style_clusters_and_ports() {
        let src = r#"digraph "a.c.015t.cfg" {
overlap=false;
subgraph "cluster_main" {
	style="dashed";
	color="black";
	label="main ()";
	fn_0_basic_block_0 [shape=Mdiamond,style=filled,fillcolor=white,label="ENTRY"];
	fn_0_basic_block_2 [shape=record,style=filled,fillcolor=lightgrey,label="{\<bb\ 2\>:\l|if (a_1 != 0)\l}"];
	fn_0_basic_block_0:s -> fn_0_basic_block_2:n [style="solid,bold",color=black,weight=100,constraint=true];
}
}"#;
        let g = parse(src).unwrap();
        assert!(g.directed);
        assert_eq!(g.subgraphs.len(), 1);
        assert_eq!(g.subgraphs[0].attrs.get("label").unwrap(), "main ()");
        assert_eq!(g.nodes.len(), 2);
        assert_eq!(g.nodes[1].subgraphs, vec![0]);
        assert_eq!(g.edges[0].from_port.as_deref(), Some("s"));
        assert_eq!(g.attrs.get("overlap").unwrap(), "false");
    }

    #[test]
    fn parses_llvm_style_records_and_chains() {
        let src = "digraph \"CFG for 'f' function\" {\n\tlabel=\"CFG for 'f' function\";\n\n\tNode0x1 [shape=record,color=\"#b70d28ff\", style=filled, fillcolor=\"#b70d2870\" ,label=\"{%2:\\l  %3 = icmp\\l|{<s0>T|<s1>F}}\"];\n\tNode0x1:s0 -> Node0x2 [tooltip=\"%2 -> %5\\nProbability 50.00%\" ];\n\ta -> b -> c;\n}\n";
        let g = parse(src).unwrap();
        assert_eq!(g.name, "CFG for 'f' function");
        assert_eq!(g.edges.len(), 3);
        assert_eq!(g.edges[0].from_port.as_deref(), Some("s0"));
        assert_eq!(g.edges[2].from, "b");
    }

    #[test]
    fn backslash_before_closing_quote_round_trips() {
        let mut b = CfgBuilder::new("g");
        let en = b.add_node(Node::new(NodeKind::Entry, "void g ( void )"));
        let s = b.add_node(Node::new(NodeKind::Call, "puts ( \"a\\\\\" ) ;"));
        let ex = b.add_node(Node::new(NodeKind::Exit, ""));
        b.set_entry(en);
        b.set_exit(ex);
        b.add_edge(en, s, EdgeLabel::Eps);
        b.add_edge(s, ex, EdgeLabel::Eps);
        let g = b.build().unwrap();
        let mut out = Vec::new();
        write_cfg(&g, &DotOptions::default(), &mut out).unwrap();
        assert_eq!(read_cfg(std::str::from_utf8(&out).unwrap()).unwrap(), g);
    }

    #[test]
    fn reports_the_line_of_a_syntax_error() {
        let e = parse("digraph g {\n a -> ;\n}").unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn string_concatenation_and_comments() {
        let g = parse("/* c */ digraph g { // x\n# y\n a [label=\"x\" + \"y\"]; }").unwrap();
        assert_eq!(g.nodes[0].attrs.get("label").unwrap(), "xy");
    }
}
