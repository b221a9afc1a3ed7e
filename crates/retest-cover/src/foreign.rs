//! CFGs written by compilers, annotated with their decisions: the cfg2cfdg tool
//! of 001 §VII, without its manual edits.
//!
//! Input is a DOT file ([`retest_graph::dot::parse`]) in one of these dialects:
//!
//! * **GCC** — `gcc -fdump-tree-cfg-graph`: one file for the unit, a cluster per
//!   function (`label="f ()"`), nodes `fn_K_basic_block_N` with record labels of
//!   GIMPLE text, `ENTRY` (block 0) and `EXIT` (block 1). A conditional block ends
//!   in `if (…) goto <bb X>; else goto <bb Y>;`: the edge to `X` is `T`, to `Y`
//!   `F` (GCC also colours them `forestgreen`/`darkorange`, except back edges,
//!   which are dotted blue — so the text is read first, colours second). A
//!   `switch (k) <default: <L3>, case 1: <L0>, …>` gets one edge per case label,
//!   matched to the blocks that start with `<Lk>:`. Invisible edges are ignored;
//!   GCC's loop clusters are not kept in the output (a decision may span them).
//! * **LLVM** — `opt -passes=dot-cfg` (or `dot-cfg-only`): one file per function
//!   (`digraph "CFG for 'f' function"`), record nodes `{N:|instructions|{<s0>T|<s1>F}}`
//!   and edges from ports: `T`/`F` for `br`, `def` and case values for `switch`.
//!   The first node is the entry block; a synthetic entry and exit are added.
//!   Clang evaluates loop conditions into an `i1` value merged by `phi` and
//!   branches on the `phi` in a separate block (001 §VII-A); the blocks feeding
//!   such a `phi` with a computed (non-constant) value are *interstitial* and are
//!   passed to [`Cfdg::build_with`], so those decisions come out whole. Without
//!   instruction text (`dot-cfg-only`) this is impossible, and a warning says so.
//! * **retest** — our own CFGs ([`retest_graph::dot::write_cfg`]).
//! * anything else — a generic digraph: edges labelled `T`/`true` and
//!   `F`/`false` (attribute `label` or the source port's text) are branches;
//!   nodes without predecessors are entered from a synthetic entry, nodes without
//!   successors lead to a synthetic exit.
//!
//! Output: the annotated DOT (the original nodes and edges with their attributes,
//! plus a cluster `Decision N` around each decision — [`write_dot`]) and a
//! serialisable list of decisions ([`Annotated::report`], schema
//! `retest.cfdg/1`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use retest_graph::dot::{self, DotGraph, DotOptions};
use retest_graph::{Cfg, CfgBuilder, CfgError, EdgeLabel, Node, NodeId, NodeKind};
use serde::Serialize;

use crate::cfdg::Cfdg;
use crate::mcdc;

/// The schema name of [`CfdgReport`].
pub const SCHEMA: &str = "retest.cfdg/1";

/// Which program wrote the DOT file.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `gcc -fdump-tree-cfg-graph`.
    Gcc,
    /// `opt -passes=dot-cfg` / `dot-cfg-only`.
    Llvm,
    /// `retest cfg --format dot`.
    Retest,
    /// Any other digraph.
    Generic,
}

/// Errors reading a foreign CFG.
#[derive(Debug, thiserror::Error)]
pub enum ForeignError {
    /// The file is not valid DOT.
    #[error("not a DOT file: {0}")]
    Syntax(#[from] dot::DotError),
    /// A retest CFG that does not read back.
    #[error(transparent)]
    Retest(#[from] dot::ReadCfgError),
    /// An undirected graph: not a CFG.
    #[error("the graph is undirected; a CFG is a digraph")]
    Undirected,
    /// No function could be converted (the reasons are the warnings).
    #[error("no function could be read from the graph{}", if .0.is_empty() { String::new() } else { format!(": {}", .0.join("; ")) })]
    NoFunction(Vec<String>),
}

/// One function of the file, as a CFG with its decisions.
#[derive(Clone, Debug)]
pub struct ForeignFunction {
    /// The function's name.
    pub name: String,
    /// The CFG (conditional branches are predicates with `T`/`F` edges).
    pub cfg: Cfg,
    /// For each CFG node, the DOT node it came from (`None` for a synthetic entry or exit).
    pub dot_ids: Vec<Option<String>>,
    /// For each CFG node, the block's name (`<bb 3>`, `%11`, `n5`, `ENTRY`, …).
    pub blocks: Vec<String>,
    /// The DOT subgraph holding the function (GCC's function cluster).
    pub container: Option<usize>,
    /// Its decisions.
    pub cfdg: Cfdg,
    /// Vertices recognised as interstitial.
    pub interstitial: Vec<NodeId>,
}

/// A DOT file with its functions' decisions.
#[derive(Clone, Debug)]
pub struct Annotated {
    /// The dialect recognised.
    pub dialect: Dialect,
    /// The parsed file.
    pub graph: DotGraph,
    /// The functions, in file order.
    pub functions: Vec<ForeignFunction>,
    /// What could not be read or recognised.
    pub warnings: Vec<String>,
}

/// Reads a DOT file, converts each function to a CFG and infers its decisions.
pub fn read(src: &str) -> Result<Annotated, ForeignError> {
    let graph = dot::parse(src)?;
    if !graph.directed {
        return Err(ForeignError::Undirected);
    }
    let mut warnings = Vec::new();
    let dialect = dialect(&graph);
    let blocks = match dialect {
        Dialect::Retest => {
            let cfg = dot::read_cfg(src)?;
            let cfdg = Cfdg::build(&cfg);
            let n = cfg.node_count();
            let f = ForeignFunction {
                name: cfg.name().to_string(),
                dot_ids: (0..n).map(|i| Some(format!("n{i}"))).collect(),
                blocks: (0..n).map(|i| format!("n{i}")).collect(),
                container: None,
                cfdg,
                cfg,
                interstitial: Vec::new(),
            };
            return Ok(Annotated { dialect, graph, functions: vec![f], warnings });
        }
        Dialect::Gcc => gcc_functions(&graph, &mut warnings),
        Dialect::Llvm | Dialect::Generic => vec![record_function(&graph, dialect, &mut warnings)],
    };
    let mut functions = Vec::new();
    for b in blocks {
        if b.blocks.is_empty() {
            warnings.push(format!("function {}: no blocks", b.name));
            continue;
        }
        match b.into_function() {
            Ok(f) => functions.push(f),
            Err((name, e)) => warnings.push(format!("function {name}: {e}")),
        }
    }
    if functions.is_empty() {
        return Err(ForeignError::NoFunction(warnings));
    }
    Ok(Annotated { dialect, graph, functions, warnings })
}

fn dialect(g: &DotGraph) -> Dialect {
    if g.attrs.get("format").map(String::as_str) == Some(dot::FORMAT) {
        return Dialect::Retest;
    }
    if g.nodes.iter().any(|n| gcc_id(&n.id).is_some()) {
        return Dialect::Gcc;
    }
    let label = g.attrs.get("label").unwrap_or(&g.name);
    if label.starts_with("CFG for '") || g.name.starts_with("CFG for '") {
        return Dialect::Llvm;
    }
    Dialect::Generic
}

/// `fn_K_basic_block_N` → (K, N).
fn gcc_id(id: &str) -> Option<(u32, u32)> {
    let rest = id.strip_prefix("fn_")?;
    let (k, n) = rest.split_once("_basic_block_")?;
    Some((k.parse().ok()?, n.parse().ok()?))
}

/// One field of a record label.
#[derive(Clone, Debug, Default, PartialEq)]
struct Field {
    depth: usize,
    port: Option<String>,
    text: String,
}

/// Splits a record label (as the DOT lexer leaves it) into fields, undoing the
/// record escapes (`\l`, `\n`, `\r` are line ends; `\X` is `X`).
fn record_fields(label: &str) -> Vec<Field> {
    let mut out = Vec::new();
    let mut cur = Field::default();
    let mut depth = 0usize;
    let mut it = label.chars().peekable();
    let flush = |cur: &mut Field, depth: usize, out: &mut Vec<Field>| {
        if !cur.text.trim().is_empty() || cur.port.is_some() {
            cur.depth = depth;
            out.push(std::mem::take(cur));
        } else {
            *cur = Field::default();
        }
    };
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some('l' | 'n' | 'r') => cur.text.push('\n'),
                Some(x) => cur.text.push(x),
                None => {}
            },
            '{' => {
                flush(&mut cur, depth, &mut out);
                depth += 1;
            }
            '}' => {
                flush(&mut cur, depth, &mut out);
                depth = depth.saturating_sub(1);
            }
            '|' => flush(&mut cur, depth, &mut out),
            '<' => {
                let mut p = String::new();
                for x in it.by_ref() {
                    if x == '>' {
                        break;
                    }
                    p.push(x);
                }
                cur.port = Some(p);
            }
            _ => cur.text.push(c),
        }
    }
    flush(&mut cur, depth, &mut out);
    out
}

/// A function read from DOT before it becomes a [`Cfg`].
struct Blocks {
    name: String,
    container: Option<usize>,
    /// (DOT id, block name, text, kind if fixed: entry / exit)
    blocks: Vec<(String, String, String, Option<NodeKind>)>,
    /// (src, dst, label) by block index
    edges: Vec<(usize, usize, EdgeLabel)>,
    /// the entry block, if the dialect names one (else: a synthetic entry)
    entry: Option<usize>,
    /// the exit block, if the dialect names one (else: a synthetic exit)
    exit: Option<usize>,
    /// blocks the synthetic entry leads to
    roots: Vec<usize>,
    interstitial: Vec<usize>,
}

impl Blocks {
    fn into_function(self) -> Result<ForeignFunction, (String, CfgError)> {
        let mut b = CfgBuilder::new(self.name.clone());
        let mut dot_ids = Vec::new();
        let mut names = Vec::new();
        let syn_entry = self.entry.is_none().then(|| {
            dot_ids.push(None);
            names.push("entry".to_string());
            b.add_node(Node::new(NodeKind::Entry, ""))
        });
        let mut out_labels: BTreeMap<usize, Vec<&EdgeLabel>> = BTreeMap::new();
        for (s, _, l) in &self.edges {
            out_labels.entry(*s).or_default().push(l);
        }
        let mut ids = Vec::with_capacity(self.blocks.len());
        for (i, (id, name, text, fixed)) in self.blocks.iter().enumerate() {
            let labels = out_labels.get(&i).map(Vec::as_slice).unwrap_or(&[]);
            let kind = fixed.unwrap_or_else(|| {
                if labels.contains(&&EdgeLabel::True) && labels.contains(&&EdgeLabel::False) && labels.len() == 2 {
                    NodeKind::Predicate
                } else if labels.iter().any(|l| matches!(l, EdgeLabel::Case(_) | EdgeLabel::Default)) {
                    NodeKind::Switch
                } else {
                    NodeKind::Statement
                }
            });
            let mut node = Node::new(kind, text.split_whitespace().collect::<Vec<_>>().join(" "));
            if kind == NodeKind::Exit {
                node.text.clear();
            }
            ids.push(b.add_node(node));
            dot_ids.push(Some(id.clone()));
            names.push(name.clone());
        }
        let syn_exit = self.exit.is_none().then(|| {
            dot_ids.push(None);
            names.push("exit".to_string());
            b.add_node(Node::new(NodeKind::Exit, ""))
        });
        // one of the two always exists
        let entry = syn_entry.or(self.entry.map(|e| ids[e])).unwrap_or(NodeId(0));
        let exit = syn_exit.or(self.exit.map(|x| ids[x])).unwrap_or(NodeId(0));
        b.set_entry(entry);
        b.set_exit(exit);
        let mut used: BTreeSet<(usize, EdgeLabel)> = BTreeSet::new();
        let mut add = |b: &mut CfgBuilder, s: NodeId, d: NodeId, l: EdgeLabel, dname: &str| {
            let mut l = l;
            if used.contains(&(s.index(), l.clone())) {
                l = EdgeLabel::Goto(dname.to_string());
            }
            if used.insert((s.index(), l.clone())) {
                b.add_edge(s, d, l);
            }
        };
        if let Some(e) = syn_entry {
            let single = self.roots.len() == 1;
            for &r in &self.roots {
                let l = if single { EdgeLabel::Eps } else { EdgeLabel::Goto(names[ids[r].index()].clone()) };
                add(&mut b, e, ids[r], l, &names[ids[r].index()]);
            }
        }
        for (s, d, l) in &self.edges {
            add(&mut b, ids[*s], ids[*d], l.clone(), &names[ids[*d].index()]);
        }
        if let Some(x) = syn_exit {
            for (i, &id) in ids.iter().enumerate() {
                if !out_labels.contains_key(&i) {
                    add(&mut b, id, x, EdgeLabel::Eps, "exit");
                }
            }
        }
        let cfg = b.build().map_err(|e| (self.name.clone(), e))?;
        let interstitial: Vec<NodeId> = self.interstitial.iter().map(|&i| ids[i]).collect();
        let cfdg = Cfdg::build_with(&cfg, &interstitial);
        let interstitial = cfdg.decisions.iter().flat_map(|d| d.interstitial.iter().copied()).collect();
        Ok(ForeignFunction {
            name: self.name,
            cfg,
            dot_ids,
            blocks: names,
            container: self.container,
            cfdg,
            interstitial,
        })
    }
}

/// The text of a record label's fields, one line per line.
fn record_text(fields: &[Field]) -> String {
    fields
        .iter()
        .filter(|f| f.port.is_none())
        .flat_map(|f| f.text.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `goto <bb N>` occurrences in `s`, in order.
fn gotos(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("goto <bb ") {
        rest = &rest[i + "goto <bb ".len()..];
        let num: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = num.parse() {
            out.push(n);
        }
    }
    out
}

/// `if (…) goto <bb X>; else goto <bb Y>;` → (X, Y).
fn gcc_condition(text: &str) -> Option<(u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let i = lines.iter().rposition(|l| l.starts_with("if ("))?;
    let tail: Vec<&str> = lines[i..].to_vec();
    let tail = tail.join("\n");
    let e = tail.find("else")?;
    let t = *gotos(&tail[..e]).first()?;
    let f = *gotos(&tail[e..]).first()?;
    Some((t, f))
}

/// `switch (k) <default: <L3> [INV], case 1: <L0> [INV], …>` → (label, case label).
fn gcc_switch(text: &str) -> Option<Vec<(EdgeLabel, String)>> {
    let line = text.lines().find(|l| l.starts_with("switch ("))?;
    let open = line.find(") <")? + 2;
    let body = line.get(open + 1..line.len().checked_sub(1)?)?;
    let mut out = Vec::new();
    for entry in body.split(", ") {
        let (what, target) = entry.split_once(": <")?;
        let label = target.split('>').next()?.to_string();
        let what = what.trim();
        let l = if what == "default" {
            EdgeLabel::Default
        } else {
            EdgeLabel::Case(what.strip_prefix("case ")?.to_string())
        };
        out.push((l, label));
    }
    Some(out)
}

fn gcc_functions(g: &DotGraph, warnings: &mut Vec<String>) -> Vec<Blocks> {
    // nodes by function
    let mut fns: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
    let mut order: Vec<u32> = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        match gcc_id(&n.id) {
            Some((k, bb)) => {
                if !fns.contains_key(&k) {
                    order.push(k);
                }
                fns.entry(k).or_default().push((bb, i));
            }
            None => warnings.push(format!("node {} is not a GCC basic block; ignored", n.id)),
        }
    }
    let mut out = Vec::new();
    for k in order {
        let mut nodes = fns.remove(&k).unwrap_or_default();
        nodes.sort();
        let container = nodes.first().and_then(|&(_, i)| g.nodes[i].subgraphs.first().copied());
        let name = container
            .map(|c| {
                let s = &g.subgraphs[c];
                match s.attrs.get("label") {
                    Some(l) => l.trim().trim_end_matches("()").trim().to_string(),
                    None => s.name.trim_start_matches("cluster_").to_string(),
                }
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("fn_{k}"));
        let mut index: BTreeMap<u32, usize> = BTreeMap::new();
        let mut blocks = Vec::new();
        let mut texts = Vec::new();
        let (mut entry, mut exit) = (None, None);
        for &(bb, i) in &nodes {
            let n = &g.nodes[i];
            let label = n.attrs.get("label").map(String::as_str).unwrap_or("");
            let (name, text, fixed) = match (bb, label) {
                (0, _) | (_, "ENTRY") => {
                    entry = Some(blocks.len());
                    ("ENTRY".to_string(), String::new(), Some(NodeKind::Entry))
                }
                (1, _) | (_, "EXIT") => {
                    exit = Some(blocks.len());
                    ("EXIT".to_string(), String::new(), Some(NodeKind::Exit))
                }
                _ => {
                    let t = record_text(&record_fields(label));
                    let body: Vec<&str> = t.lines().filter(|l| *l != format!("<bb {bb}>:")).collect();
                    (format!("<bb {bb}>"), body.join("\n"), None)
                }
            };
            index.insert(bb, blocks.len());
            texts.push(text.clone());
            blocks.push((n.id.clone(), name, text, fixed));
        }
        // labels `<L3>:` → block
        let mut label_block: BTreeMap<String, usize> = BTreeMap::new();
        for (i, t) in texts.iter().enumerate() {
            for l in t.lines() {
                if let Some(x) = l.strip_prefix('<').and_then(|x| x.strip_suffix(">:")) {
                    label_block.insert(x.to_string(), i);
                }
            }
        }
        let mut edges = Vec::new();
        let mut raw: BTreeMap<usize, Vec<(usize, &dot::Attrs)>> = BTreeMap::new();
        for e in &g.edges {
            let (Some((ka, a)), Some((kb, b))) = (gcc_id(&e.from), gcc_id(&e.to)) else { continue };
            if ka != k || kb != k || e.attrs.get("style").is_some_and(|s| s.contains("invis")) {
                continue;
            }
            let (Some(&s), Some(&d)) = (index.get(&a), index.get(&b)) else { continue };
            raw.entry(s).or_default().push((d, &e.attrs));
        }
        let bb_of: BTreeMap<usize, u32> = index.iter().map(|(bb, i)| (*i, *bb)).collect();
        for (s, outs) in raw {
            let text = &texts[s];
            let cond = gcc_condition(text);
            let switch = gcc_switch(text);
            for &(d, attrs) in &outs {
                let dbb = bb_of.get(&d).copied().unwrap_or(0);
                let goto = EdgeLabel::Goto(format!("bb {dbb}"));
                let colour = attrs.get("color").map(String::as_str);
                if outs.len() == 1 {
                    edges.push((s, d, EdgeLabel::Eps));
                } else if let Some((t, f)) = cond.filter(|_| outs.len() == 2) {
                    let l = if dbb == t && t != f {
                        EdgeLabel::True
                    } else if dbb == f && t != f {
                        EdgeLabel::False
                    } else {
                        match colour {
                            Some("forestgreen") => EdgeLabel::True,
                            Some("darkorange") => EdgeLabel::False,
                            _ => goto,
                        }
                    };
                    edges.push((s, d, l));
                } else if let Some(cases) = &switch {
                    let mine: Vec<EdgeLabel> =
                        cases.iter().filter(|(_, l)| label_block.get(l) == Some(&d)).map(|(c, _)| c.clone()).collect();
                    if mine.is_empty() {
                        edges.push((s, d, goto));
                    }
                    for c in mine {
                        edges.push((s, d, c));
                    }
                } else {
                    match colour {
                        Some("forestgreen") if outs.len() == 2 => edges.push((s, d, EdgeLabel::True)),
                        Some("darkorange") if outs.len() == 2 => edges.push((s, d, EdgeLabel::False)),
                        _ => edges.push((s, d, goto)),
                    }
                }
            }
        }
        // a T edge whose partner is a back edge (no colour, unparsed text): complete the pair
        complete_pairs(&mut edges);
        let roots = if entry.is_none() { roots_of(blocks.len(), &edges) } else { Vec::new() };
        if entry.is_none() {
            warnings.push(format!("function {name}: no ENTRY block; entering at blocks without predecessors"));
        }
        out.push(Blocks { name, container, blocks, edges, entry, exit, roots, interstitial: Vec::new() });
    }
    out
}

/// A block with exactly two out-edges, one `T` (`F`) and one jump: the jump is `F` (`T`).
fn complete_pairs(edges: &mut [(usize, usize, EdgeLabel)]) {
    let mut by_src: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, e) in edges.iter().enumerate() {
        by_src.entry(e.0).or_default().push(i);
    }
    for (_, v) in by_src {
        if v.len() != 2 {
            continue;
        }
        let (a, b) = (v[0], v[1]);
        let fix = |x: &EdgeLabel, y: &EdgeLabel| match (x, y) {
            (EdgeLabel::True, EdgeLabel::Goto(_)) => Some(EdgeLabel::False),
            (EdgeLabel::False, EdgeLabel::Goto(_)) => Some(EdgeLabel::True),
            _ => None,
        };
        if let Some(l) = fix(&edges[a].2, &edges[b].2) {
            edges[b].2 = l;
        } else if let Some(l) = fix(&edges[b].2, &edges[a].2) {
            edges[a].2 = l;
        }
    }
}

fn roots_of(n: usize, edges: &[(usize, usize, EdgeLabel)]) -> Vec<usize> {
    let has_pred: BTreeSet<usize> = edges.iter().map(|e| e.1).collect();
    let roots: Vec<usize> = (0..n).filter(|i| !has_pred.contains(i)).collect();
    if roots.is_empty() && n > 0 { vec![0] } else { roots }
}

/// An LLVM block's name from its header field: `3:` or `%3` → `%3`, `entry:` → `%entry`.
fn llvm_block_name(header: &str) -> String {
    let h = header.trim().trim_end_matches(':');
    if h.starts_with('%') { h.to_string() } else { format!("%{h}") }
}

/// `%x = phi i1 [ v, %p ], …` → (x, [(v, p)]).
fn phi_i1(line: &str) -> Option<(String, Vec<(String, String)>)> {
    let (lhs, rhs) = line.split_once(" = phi i1 ")?;
    let mut incoming = Vec::new();
    for part in rhs.split('[').skip(1) {
        let inner = part.split(']').next()?;
        let (v, p) = inner.split_once(',')?;
        incoming.push((v.trim().to_string(), p.trim().to_string()));
    }
    Some((lhs.trim().to_string(), incoming))
}

/// `br i1 %c, label %a, label %b` → `%c`.
fn br_i1(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("br i1 ")?;
    Some(rest.split(',').next()?.trim().to_string())
}

fn record_function(g: &DotGraph, dialect: Dialect, warnings: &mut Vec<String>) -> Blocks {
    let title = g.attrs.get("label").unwrap_or(&g.name);
    let name = title
        .strip_prefix("CFG for '")
        .and_then(|r| r.strip_suffix("' function"))
        .map(str::to_string)
        .unwrap_or_else(|| if g.name.is_empty() { "graph".to_string() } else { g.name.clone() });
    let mut blocks = Vec::new();
    let mut ports: Vec<BTreeMap<String, String>> = Vec::new();
    let mut instrs: Vec<Vec<String>> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut any_instructions = false;
    for n in &g.nodes {
        let label = n.attrs.get("label").map(String::as_str).unwrap_or(&n.id);
        let fields = record_fields(label);
        let top: Vec<&Field> = fields.iter().filter(|f| f.port.is_none()).collect();
        let (bname, body) = match (dialect, top.split_first()) {
            (Dialect::Llvm, Some((h, rest))) => {
                let lines: Vec<String> = rest
                    .iter()
                    .flat_map(|f| f.text.lines())
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect();
                (llvm_block_name(h.text.lines().next().unwrap_or("")), lines)
            }
            _ => (n.id.clone(), top.iter().flat_map(|f| f.text.lines()).map(|l| l.trim().to_string()).collect()),
        };
        any_instructions |= dialect == Dialect::Llvm && !body.is_empty();
        ports.push(fields.iter().filter_map(|f| Some((f.port.clone()?, f.text.trim().to_string()))).collect());
        index.insert(n.id.as_str(), blocks.len());
        blocks.push((n.id.clone(), bname, body.join("\n"), None));
        instrs.push(body);
    }
    let mut edges = Vec::new();
    for e in &g.edges {
        let (Some(&s), Some(&d)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) else { continue };
        if e.attrs.get("style").is_some_and(|s| s.contains("invis")) {
            continue;
        }
        let port_text = e.from_port.as_deref().and_then(|p| ports[s].get(p.split(':').next().unwrap_or(p))).cloned();
        let text = port_text.or_else(|| e.attrs.get("label").cloned()).unwrap_or_default();
        let l = match text.as_str() {
            "T" | "true" | "True" => EdgeLabel::True,
            "F" | "false" | "False" => EdgeLabel::False,
            "def" | "default" if dialect == Dialect::Llvm => EdgeLabel::Default,
            "" => EdgeLabel::Eps,
            t if dialect == Dialect::Llvm => EdgeLabel::Case(t.to_string()),
            _ => EdgeLabel::Eps,
        };
        edges.push((s, d, l));
    }
    // a block's edges must be distinctly labelled: several ε edges become jumps
    let mut count: BTreeMap<usize, usize> = BTreeMap::new();
    for e in &edges {
        *count.entry(e.0).or_default() += 1;
    }
    for e in edges.iter_mut() {
        if e.2 == EdgeLabel::Eps && count[&e.0] > 1 {
            e.2 = EdgeLabel::Goto(blocks[e.1].1.clone());
        }
    }
    let roots = match dialect {
        Dialect::Llvm if !blocks.is_empty() => vec![0],
        _ => roots_of(blocks.len(), &edges),
    };
    let mut interstitial = Vec::new();
    if dialect == Dialect::Llvm {
        if any_instructions {
            interstitial = llvm_interstitial(&blocks, &instrs, &edges);
        } else if !blocks.is_empty() {
            warnings.push(format!(
                "function {name}: the blocks have no instruction text (dot-cfg-only?), so the blocks \
                 between the conditions of a loop decision cannot be recognised; use -passes=dot-cfg"
            ));
        }
    }
    Blocks { name, container: None, blocks, edges, entry: None, exit: None, roots, interstitial }
}

/// Blocks between the conditions of a decision that Clang evaluates into an
/// `i1` value: the predecessors of a block that branches on a `phi i1` which
/// supply a computed (non-constant) value and have that block as their only
/// successor; and, recursively, the same for every `phi i1` of a block found so
/// (a value computed through further merges, such as `!(c && d)`: `phi`, `xor`,
/// then the merge the branch reads).
fn llvm_interstitial(
    blocks: &[(String, String, String, Option<NodeKind>)],
    instrs: &[Vec<String>],
    edges: &[(usize, usize, EdgeLabel)],
) -> Vec<usize> {
    let by_name: BTreeMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.1.as_str(), i)).collect();
    let succs = |i: usize| -> Vec<usize> { edges.iter().filter(|e| e.0 == i).map(|e| e.1).collect() };
    let phi_in = |i: usize, value: &str| -> Option<Vec<(String, String)>> {
        instrs[i].iter().filter_map(|l| phi_i1(l)).find(|(x, _)| x == value).map(|(_, inc)| inc)
    };
    let all_phis = |i: usize| -> Vec<(String, String)> {
        instrs[i].iter().filter_map(|l| phi_i1(l)).flat_map(|(_, inc)| inc).collect()
    };
    let mut out = BTreeSet::new();
    for (w, body) in instrs.iter().enumerate() {
        let Some(c) = body.last().and_then(|l| br_i1(l)) else { continue };
        let Some(incoming) = phi_in(w, &c) else { continue };
        let mut work: Vec<(usize, Vec<(String, String)>)> = vec![(w, incoming)];
        let mut seen = BTreeSet::new();
        while let Some((at, inc)) = work.pop() {
            if !seen.insert(at) {
                continue;
            }
            for (value, pred) in inc {
                if value == "true" || value == "false" {
                    continue;
                }
                let Some(&p) = by_name.get(pred.as_str()) else { continue };
                if succs(p) != [at] {
                    continue;
                }
                out.insert(p);
                work.push((p, all_phis(p)));
            }
        }
    }
    out.into_iter().collect()
}

/// The JSON form of an annotated file.
#[derive(Clone, Debug, Serialize)]
pub struct CfdgReport {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The dialect recognised.
    pub dialect: Dialect,
    /// Per function.
    pub functions: Vec<FunctionReport>,
    /// What could not be read or recognised.
    pub warnings: Vec<String>,
}

/// One function's decisions.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionReport {
    /// The function's name.
    pub name: String,
    /// Blocks in the function (with synthetic entry and exit).
    pub blocks: usize,
    /// Its decisions, numbered as in the DOT clusters.
    pub decisions: Vec<DecisionReport>,
}

/// A block named in a report.
#[derive(Clone, Debug, Serialize)]
pub struct BlockRef {
    /// The block's name (`<bb 3>`, `%11`).
    pub block: String,
    /// The DOT node id (absent for synthetic nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// One decision.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionReport {
    /// `Decision N`.
    pub id: usize,
    /// Its entry block.
    pub entry: BlockRef,
    /// Condition blocks in evaluation order.
    pub conditions: Vec<BlockRef>,
    /// Interstitial blocks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interstitial: Vec<BlockRef>,
    /// Successors reached when the decision is true (see [`crate::cfdg::Decision`]
    /// for how outcomes are named without source information).
    pub true_successors: Vec<BlockRef>,
    /// Successors reached when it is false.
    pub false_successors: Vec<BlockRef>,
    /// See [`crate::cfdg::Decision::well_formed`].
    pub well_formed: bool,
    /// The decision as an expression over its condition blocks, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
}

impl ForeignFunction {
    fn block(&self, n: NodeId) -> BlockRef {
        BlockRef { block: self.blocks[n.index()].clone(), node: self.dot_ids[n.index()].clone() }
    }

    /// This function's decisions in report form.
    pub fn report(&self) -> FunctionReport {
        let decisions = self
            .cfdg
            .decisions
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let names: Vec<String> = d.conditions.iter().map(|c| self.blocks[c.index()].clone()).collect();
                DecisionReport {
                    id: i,
                    entry: self.block(d.entry),
                    conditions: d.conditions.iter().map(|&c| self.block(c)).collect(),
                    interstitial: d.interstitial.iter().map(|&c| self.block(c)).collect(),
                    true_successors: d.targets(true).into_iter().map(|c| self.block(c)).collect(),
                    false_successors: d.targets(false).into_iter().map(|c| self.block(c)).collect(),
                    well_formed: d.well_formed,
                    expression: mcdc::decision_structure(&self.cfg, d).ok().map(|e| e.render(&names)),
                }
            })
            .collect();
        FunctionReport { name: self.name.clone(), blocks: self.cfg.node_count(), decisions }
    }
}

impl Annotated {
    /// The decisions of every function (serialise with `serde_json`).
    pub fn report(&self) -> CfdgReport {
        CfdgReport {
            schema: SCHEMA,
            dialect: self.dialect,
            functions: self.functions.iter().map(ForeignFunction::report).collect(),
            warnings: self.warnings.clone(),
        }
    }
}

/// Quotes a DOT attribute value as the lexer left it (escapes other than `\"`
/// kept), so that it reads back the same.
fn requote(raw: &str) -> String {
    let mut o = String::with_capacity(raw.len() + 2);
    o.push('"');
    let mut backslashes = 0usize;
    for c in raw.chars() {
        if c == '"' {
            // an odd run of backslashes before it would escape our escape
            if backslashes % 2 == 1 {
                o.push('\\');
            }
            o.push_str("\\\"");
            backslashes = 0;
            continue;
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        o.push(c);
    }
    if backslashes % 2 == 1 {
        o.push('\\');
    }
    o.push('"');
    o
}

fn attrs(a: &dot::Attrs) -> String {
    a.iter().map(|(k, v)| format!("{}={}", requote(k), requote(v))).collect::<Vec<_>>().join(", ")
}

/// Writes the annotated DOT: the original graph with a cluster `Decision N`
/// (numbered per function) around each decision's vertices.
pub fn write_dot(a: &Annotated, w: &mut dyn Write) -> io::Result<()> {
    if a.dialect == Dialect::Retest {
        let f = &a.functions[0];
        let opts = DotOptions { clusters: f.cfdg.clusters(), ..DotOptions::default() };
        return dot::write_cfg(&f.cfg, &opts, w);
    }
    let g = &a.graph;
    writeln!(w, "digraph {} {{", requote(&g.name))?;
    for (k, v) in &g.attrs {
        writeln!(w, "  {}={};", requote(k), requote(v))?;
    }
    // DOT node index → (function, decision)
    let pos: BTreeMap<&str, usize> = g.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let mut placed = vec![false; g.nodes.len()];
    let node_line = |i: usize, indent: &str| -> String {
        let n = &g.nodes[i];
        if n.attrs.is_empty() {
            format!("{indent}{};", requote(&n.id))
        } else {
            format!("{indent}{} [{}];", requote(&n.id), attrs(&n.attrs))
        }
    };
    for (fi, f) in a.functions.iter().enumerate() {
        let indent = if f.container.is_some() { "    " } else { "  " };
        if let Some(c) = f.container {
            let s = &g.subgraphs[c];
            writeln!(w, "  subgraph {} {{", requote(&s.name))?;
            for (k, v) in &s.attrs {
                writeln!(w, "    {}={};", requote(k), requote(v))?;
            }
        }
        for (di, d) in f.cfdg.decisions.iter().enumerate() {
            writeln!(w, "{indent}subgraph {} {{", requote(&format!("cluster_decision_{fi}_{di}")))?;
            writeln!(
                w,
                "{indent}  label={}; style=\"rounded,dashed\"; color=\"red\"; fontcolor=\"red\";",
                requote(&format!("Decision {di}"))
            )?;
            for v in d.vertices() {
                if let Some(&i) = f.dot_ids[v.index()].as_deref().and_then(|id| pos.get(id))
                    && !placed[i]
                {
                    placed[i] = true;
                    writeln!(w, "{}", node_line(i, &format!("{indent}  ")))?;
                }
            }
            writeln!(w, "{indent}}}")?;
        }
        for id in f.dot_ids.iter().flatten() {
            if let Some(&i) = pos.get(id.as_str())
                && !placed[i]
            {
                placed[i] = true;
                writeln!(w, "{}", node_line(i, indent))?;
            }
        }
        if f.container.is_some() {
            writeln!(w, "  }}")?;
        }
    }
    for (i, done) in placed.iter().enumerate() {
        if !done {
            writeln!(w, "{}", node_line(i, "  "))?;
        }
    }
    for e in &g.edges {
        let end = |id: &str, port: &Option<String>| match port {
            Some(p) => format!("{}:{}", requote(id), p.split(':').map(requote).collect::<Vec<_>>().join(":")),
            None => requote(id),
        };
        let a = if e.attrs.is_empty() { String::new() } else { format!(" [{}]", attrs(&e.attrs)) };
        writeln!(w, "  {} -> {}{};", end(&e.from, &e.from_port), end(&e.to, &e.to_port), a)?;
    }
    writeln!(w, "}}")
}
