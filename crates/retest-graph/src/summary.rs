//! What selection needs to know about a procedure to prove it unchanged
//! without its CFGs: [`Summary`], stored beside each procedure's body so that
//! a stored unit's bodies can be decoded on demand ([`Bodies`]).
//!
//! DejaVu walks a pair of corresponding procedures node by node. When the two
//! statement-level CFGs and local declarations are the same (spans aside),
//! the walk pairs every node with its own copy, and a node pair can differ
//! only through the program around it: a declaration change that affects a
//! name the node refers to, a call whose targets changed, a call through a
//! pointer when the address-taken procedures changed, a member call whose
//! class hierarchy changed, other compile flags. A summary holds exactly the
//! facts those checks read — a digest of what the walk compares, the names
//! the procedure refers to, the procedures it calls — so that selection can
//! decide the walk's outcome without the walk (`retest-select`'s
//! `dejavu::select_changes`).

use crate::cfg::{Declaration, Node};
use crate::unit::Procedure;

/// FNV-1a, 64 bits: a hash of a name that is the same in every process and
/// every version of retest (it is stored).
pub fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The facts of one procedure that decide whether DejaVu's walk could find a
/// difference in it, when its text did not change.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Summary {
    /// Condition-level edges (the procedure's share of the unit-wide edge numbers).
    pub cond_edges: u32,
    /// XXH3-128 of what the walk compares: the statement-level CFG's nodes
    /// (kind, text, names referred to and called, calls through pointers,
    /// member calls, declarations) and edges (label, target), and the local
    /// declarations, without source positions.
    pub walk_digest: u128,
    /// [`name_hash`] of every name a node or a local declaration refers to,
    /// sorted, without duplicates.
    pub names: Vec<u64>,
    /// The procedures called directly by name, sorted, without duplicates.
    pub calls: Vec<String>,
    /// Some node calls through a pointer.
    pub indirect_call: bool,
    /// Some node makes a member call (C++).
    pub dispatch: bool,
    /// The statement-level exit is reachable from the entry.
    pub exit_reachable: bool,
}

impl Summary {
    pub fn of(p: &Procedure) -> Summary {
        let g = &p.stmt;
        let mut bytes: Vec<u8> = Vec::with_capacity(64 * g.node_count());
        let mut names: Vec<u64> = Vec::new();
        let mut calls: Vec<String> = Vec::new();
        let (mut indirect_call, mut dispatch) = (false, false);
        let put = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u64).to_le_bytes());
            b.extend(s.as_bytes());
        };
        let put_decl = |b: &mut Vec<u8>, names: &mut Vec<u64>, d: &Declaration| {
            let Declaration { kind, names: declared, text, mentions, span: _ } = d;
            b.push(kind.code());
            b.extend((declared.len() as u64).to_le_bytes());
            for n in declared {
                put(b, n);
            }
            put(b, text);
            b.extend((mentions.len() as u64).to_le_bytes());
            for m in mentions {
                put(b, m);
                names.push(name_hash(m));
            }
        };
        bytes.extend(u64::from(g.entry().0).to_le_bytes());
        bytes.extend(u64::from(g.exit().0).to_le_bytes());
        bytes.extend((g.node_count() as u64).to_le_bytes());
        for (id, n) in g.nodes() {
            let Node { kind, text, span: _, refs, calls: called, indirect_call: ind, dispatch: disp, decls } = n;
            bytes.push(kind.code());
            put(&mut bytes, text);
            bytes.extend((refs.len() as u64).to_le_bytes());
            for r in refs {
                put(&mut bytes, r);
                names.push(name_hash(r));
            }
            bytes.extend((called.len() as u64).to_le_bytes());
            for c in called {
                put(&mut bytes, c);
                calls.push(c.clone());
            }
            bytes.push(*ind as u8);
            indirect_call |= *ind;
            // member calls are compared through the class hierarchy: their
            // presence alone makes a summary unusable for proving a pair
            // unchanged, their text is in the node's
            bytes.extend((disp.len() as u64).to_le_bytes());
            dispatch |= !disp.is_empty();
            bytes.extend((decls.len() as u64).to_le_bytes());
            for d in decls {
                put_decl(&mut bytes, &mut names, d);
            }
            bytes.extend((g.out_edges(id).len() as u64).to_le_bytes());
            for e in g.out_edges(id) {
                let e = g.edge(e);
                bytes.extend(u64::from(e.dst.0).to_le_bytes());
                let (code, text) = e.label.code();
                bytes.push(code);
                if let Some(t) = text {
                    put(&mut bytes, t);
                }
            }
        }
        bytes.extend((p.locals.len() as u64).to_le_bytes());
        for d in &p.locals {
            put_decl(&mut bytes, &mut names, d);
        }
        names.sort_unstable();
        names.dedup();
        calls.sort_unstable();
        calls.dedup();
        Summary {
            cond_edges: u32::try_from(p.cond.edge_count()).expect("fewer than 2^32 edges"),
            walk_digest: xxhash_rust::xxh3::xxh3_128(&bytes),
            names,
            calls,
            indirect_call,
            dispatch,
            exit_reachable: crate::reach::forward(g, [g.entry()], |_| true).contains(g.exit().index()),
        }
    }

    /// Whether the procedure refers to a name of hash `h`.
    pub fn may_name(&self, h: u64) -> bool {
        self.names.binary_search(&h).is_ok()
    }
}

/// A digest of declarations without their places: their kinds, names,
/// texts and mentions, in order. Two units whose digests of their system
/// headers' declarations (sealed ones, [`crate::Declaration::is_sealed`])
/// are equal declare the same through system headers; so with the
/// project's declarations.
pub fn decls_digest<'a>(decls: impl IntoIterator<Item = &'a crate::Declaration>) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let str = |h: &mut xxhash_rust::xxh3::Xxh3, s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    for d in decls {
        h.update(&[d.kind.code()]);
        h.update(&(d.names.len() as u64).to_le_bytes());
        for n in &d.names {
            str(&mut h, n);
        }
        str(&mut h, &d.text);
        h.update(&(d.mentions.len() as u64).to_le_bytes());
        for m in &d.mentions {
            str(&mut h, m);
        }
    }
    h.digest128()
}

/// The procedures of a unit whose bodies are decoded on first use: a stored
/// unit read for selection, where most procedures of a changed unit are
/// proved unchanged from their summaries and never decoded.
///
/// The unit that goes with it (a *shell*) holds every procedure's name,
/// linkage, span, digest and `unanalysable`, with stand-in CFGs of an entry
/// and an exit: code that reads procedure bodies of such a unit reads them
/// through this.
pub trait Bodies {
    /// Procedure `proc` in full. A body that cannot be decoded is returned as
    /// a procedure of one statement whose entry matches no other (so
    /// selection counts it changed), and [`Bodies::error`] says why.
    fn body(&self, proc: usize) -> &Procedure;
    fn summary(&self, proc: usize) -> &Summary;
    /// The first body that could not be decoded, if any.
    fn error(&self) -> Option<String>;

    /// When the shell's `decls` leave out the system headers' declarations
    /// (those whose text is sealed, [`crate::Declaration::is_sealed`]): a
    /// digest of them without their places, equal for two units that declare
    /// the same. `None` when the shell's `decls` are all the unit's.
    fn sealed_digest(&self) -> Option<u128> {
        None
    }

    /// All the unit's declarations in order, the system headers' included
    /// (decoded on first use), when the shell's `decls` leave those out.
    fn all_decls(&self) -> Option<&[crate::Declaration]> {
        None
    }

    /// When the shell's `decls` leave out the project's declarations too
    /// (they are then empty): a digest of the project's declarations without
    /// their places ([`decls_digest`]), equal for two units that declare the
    /// same. `None` when the shell's `decls` hold them.
    fn own_digest(&self) -> Option<u128> {
        None
    }

    /// The project's declarations in order (decoded on first use), when the
    /// shell's `decls` leave them out.
    fn own_decls(&self) -> Option<&[crate::Declaration]> {
        None
    }

    /// Unit-wide number of the first condition-level edge of each of the
    /// unit's `procedures` procedures (as [`crate::Unit::edge_bases`]), from
    /// the summaries.
    fn edge_bases(&self, procedures: usize) -> Vec<u32> {
        (0..procedures)
            .scan(0u32, |next, i| {
                let base = *next;
                *next += self.summary(i).cond_edges;
                Some(base)
            })
            .collect()
    }
}

/// The CFG a shell holds for a procedure whose body is not decoded: an
/// entry whose text is no procedure's signature (compared by mistake with a
/// decoded procedure, it counts as changed) and an exit. Bodies are read
/// through [`Bodies`]; nothing compares two stand-ins.
pub fn stand_in(name: &str) -> crate::cfg::Cfg {
    let mut b = crate::cfg::CfgBuilder::new(name);
    let entry = b.add_node(Node::new(crate::cfg::NodeKind::Entry, "\u{0}body not decoded"));
    let exit = b.add_node(Node::new(crate::cfg::NodeKind::Exit, ""));
    b.set_entry(entry);
    b.set_exit(exit);
    b.build().expect("two nodes, no edges")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{CfgBuilder, EdgeLabel, NodeKind, Span};
    use crate::unit::Procedure;

    fn procedure(texts: &[&str], line: u32, local: &str) -> Procedure {
        let mut b = CfgBuilder::new("f");
        let entry = b.add_node(Node::new(NodeKind::Entry, "int f ( int x )"));
        let mut prev = entry;
        for (i, t) in texts.iter().enumerate() {
            let mut n = Node::new(NodeKind::Statement, *t);
            n.span = Some(Span { file: 0, line: line + i as u32, col: 1, end_line: line + i as u32 });
            n.refs = vec!["x".into(), "g".into()];
            n.calls = vec!["h".into()];
            let id = b.add_node(n);
            b.add_edge(prev, id, EdgeLabel::Eps);
            prev = id;
        }
        let exit = b.add_node(Node::new(NodeKind::Exit, ""));
        b.add_edge(prev, exit, EdgeLabel::Eps);
        b.set_entry(entry);
        b.set_exit(exit);
        let stmt = b.build().unwrap();
        Procedure {
            name: "f".into(),
            is_static: false,
            span: Some(Span { file: 0, line, col: 1, end_line: line + 5 }),
            cond: stmt.clone(),
            map: crate::cfg::Contraction {
                node: (0..stmt.node_count() as u32).map(crate::cfg::NodeId).collect(),
                edge: (0..stmt.edge_count() as u32).map(|e| Some(crate::cfg::EdgeId(e))).collect(),
            },
            stmt,
            probes: Vec::new(),
            locals: vec![Declaration {
                kind: crate::cfg::DeclKind::Variable,
                names: vec!["y".into()],
                text: local.into(),
                mentions: vec!["T".into()],
                span: Some(Span { file: 0, line, col: 3, end_line: line }),
            }],
            unanalysable: None,
            digest: 0,
        }
    }

    #[test]
    fn the_walk_digest_ignores_positions_and_sees_every_compared_text() {
        let a = Summary::of(&procedure(&["g ( x ) ;", "h ( ) ;"], 10, "T y ;"));
        let moved = Summary::of(&procedure(&["g ( x ) ;", "h ( ) ;"], 40, "T y ;"));
        assert_eq!(a, moved, "a procedure moved down the file is the same walk");
        let edited = Summary::of(&procedure(&["g ( x + 1 ) ;", "h ( ) ;"], 10, "T y ;"));
        assert_ne!(a.walk_digest, edited.walk_digest);
        let local = Summary::of(&procedure(&["g ( x ) ;", "h ( ) ;"], 10, "T y = 1 ;"));
        assert_ne!(a.walk_digest, local.walk_digest);
        let longer = Summary::of(&procedure(&["g ( x ) ;", "h ( ) ;", "h ( ) ;"], 10, "T y ;"));
        assert_ne!(a.walk_digest, longer.walk_digest);
        assert_eq!(a.calls, vec!["h".to_string()]);
        assert!(a.may_name(name_hash("g")) && a.may_name(name_hash("x")) && a.may_name(name_hash("T")));
        assert!(!a.may_name(name_hash("y")), "a declared name is not a reference");
        assert!(a.exit_reachable && !a.indirect_call && !a.dispatch);
        assert_eq!(a.cond_edges, 3);
    }
}
