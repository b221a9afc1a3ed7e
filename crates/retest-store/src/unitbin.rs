//! The compact binary layout of a stored [`Unit`] (blob encodings 2 to 7:
//! 3 adds the unit's language facts, `entry_points` and `returns_twice`; 4
//! adds C++'s classes and each node's member calls, `dispatch`; 5 lets
//! bodies decode on demand; 6 keeps the system headers' declarations apart;
//! 7 the project's too).
//!
//! Fields in declaration order; every struct is destructured exhaustively on
//! both sides, so a field added to a unit type does not compile until it has a
//! place here (and then needs a new blob tag, keeping this decoder for the
//! blobs already stored). Integers are LEB128 varints, except digests (`u64`
//! little-endian); strings and sequences are a varint length, then the items;
//! `Option`s a byte 0/1, then the value; enums a byte (case labels and goto
//! targets follow as strings, a probe's edge-cell mask as a varint).

use retest_graph::cfg::{
    Cfg, CfgBuilder, Contraction, DeclKind, Declaration, Dispatch, Edge, EdgeId, EdgeLabel, Node, NodeId, NodeKind,
    Receiver, Span,
};
use retest_graph::coverage::Probe;
use retest_graph::summary::{Bodies, Summary};
use retest_graph::unit::{Problem, Procedure, SourceFile};
use retest_graph::{Class, Method, MethodKind, Unit};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The language facts units of blob encodings 1 and 2 did not carry: what
/// the front end that wrote them (C and C++ alike) assumed then.
pub fn legacy_facts(u: &mut Unit) {
    u.entry_points = vec!["main".to_string()];
    u.returns_twice = ["setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "__builtin_setjmp", "vfork"]
        .map(String::from)
        .to_vec();
}

/// What an encoding holds beyond encoding 2's.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Version {
    /// Encoding 2: no language facts (they are [`legacy_facts`]).
    NoFacts = 2,
    /// Encoding 3: the facts.
    Facts = 3,
    /// Encoding 4: the facts, classes and member calls.
    Classes = 4,
    /// Encoding 5: encoding 4 with each procedure's name, linkage, span,
    /// digest and [`Summary`] ahead of its body, and the body's length, so
    /// that bodies decode on demand ([`decode_shell`], [`StoredBodies`]).
    Lazy = 5,
    /// Encoding 5 with the system headers' declarations (the sealed ones)
    /// in a section of their own, LZ4-compressed after the bodies, and their
    /// digest in the shell: a shell is read without them
    /// ([`Bodies::sealed_digest`], [`Bodies::all_decls`]).
    Sealed = 6,
    /// Encoding 6 with the project's declarations in a section of their
    /// own too, LZ4-compressed between the bodies and the system headers'
    /// section, and their digest in the shell: a selection whose versions
    /// declare the same reads neither section ([`Bodies::own_digest`],
    /// [`Bodies::own_decls`]).
    Apart = 7,
}

/// Encoding 7: the shell, LZ4-compressed, its length ahead of it, then
/// every procedure's body, each LZ4-compressed on its own (the shell holds
/// their lengths), so that a body is decompressed only when it is decoded,
/// then the project's declarations and the system headers', each
/// LZ4-compressed (the shell holds where the ones go among the others, the
/// digest of each and the sections' lengths).
pub fn encode(u: &Unit) -> Vec<u8> {
    encode_as(u, Version::Apart)
}

/// LZ4 with the uncompressed size ahead, refusing a size no LZ4 block of
/// these bytes can decompress to (a damaged size would otherwise allocate it).
fn unlz4(b: &[u8]) -> Result<Vec<u8>, String> {
    let size = b.get(..4).ok_or("truncated compressed block")?;
    let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
    if size > 255 * b.len() + 64 {
        return Err("compressed block larger than it can be".to_string());
    }
    lz4_flex::decompress_size_prepended(b).map_err(|e| e.to_string())
}

/// `u` in an encoding of `version`, dropping what it cannot hold (older
/// encodings are written only to test that they still read).
pub fn encode_as(u: &Unit, version: Version) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(1 << 14), version);
    let mut bodies: Vec<u8> = Vec::new();
    let Unit {
        files,
        procedures,
        decls,
        address_taken,
        noreturn,
        entry_points,
        returns_twice,
        problems,
        classes,
        unattributed_error,
    } = u;
    w.seq(files, |w, f| {
        let SourceFile { path, system } = f;
        w.str(path);
        w.bool(*system);
    });
    w.seq(procedures, |w, p| {
        let Procedure { name, is_static, span, cond, stmt, map, probes, locals, unanalysable, digest } = p;
        w.str(name);
        w.bool(*is_static);
        w.opt(span, W::span);
        if w.1 >= Version::Lazy {
            w.0.extend(digest.to_le_bytes());
            w.opt(unanalysable, |w, s| w.str(s));
            w.summary(&Summary::of(p));
            let mut body = W(Vec::with_capacity(1 << 10), w.1);
            body.body(cond, stmt, map, probes, locals);
            let packed = lz4_flex::compress_prepend_size(&body.0);
            w.len(packed.len());
            bodies.extend(packed);
            return;
        }
        w.body(cond, stmt, map, probes, locals);
        w.opt(unanalysable, |w, s| w.str(s));
        w.0.extend(digest.to_le_bytes());
    });
    let mut sealed_section = Vec::new();
    let mut own_section = Vec::new();
    if version >= Version::Sealed {
        // runs of the project's and the system headers' declarations, in
        // turn, the project's first
        let mut runs: Vec<u32> = vec![0];
        for d in decls {
            if d.is_sealed() != runs.len().is_multiple_of(2) {
                runs.push(0);
            }
            *runs.last_mut().expect("one run at least") += 1;
        }
        w.seq(&runs, |w, n| w.u32(*n));
        let own: Vec<&Declaration> = decls.iter().filter(|d| !d.is_sealed()).collect();
        if version >= Version::Apart {
            w.0.extend(retest_graph::summary::decls_digest(own.iter().copied()).to_le_bytes());
            own_section = encode_decls_section(&own, version);
            w.len(own_section.len());
        } else {
            w.seq(&own, |w, d| w.decl(d));
        }
        let sealed: Vec<&Declaration> = decls.iter().filter(|d| d.is_sealed()).collect();
        w.0.extend(retest_graph::summary::decls_digest(sealed.iter().copied()).to_le_bytes());
        sealed_section = encode_decls_section(&sealed, version);
        w.len(sealed_section.len());
    } else {
        w.seq(decls, W::decl);
    }
    w.seq(address_taken, |w, s| w.str(s));
    w.seq(noreturn, |w, s| w.str(s));
    w.seq(problems, W::problem);
    w.opt(unattributed_error, W::problem);
    if version >= Version::Facts {
        w.seq(entry_points, |w, s| w.str(s));
        w.seq(returns_twice, |w, s| w.str(s));
    }
    if version < Version::Classes {
        return w.0;
    }
    w.seq(classes, |w, c| {
        let Class { name, bases, methods, span } = c;
        w.str(name);
        w.seq(bases, |w, s| w.str(s));
        w.seq(methods, |w, m| {
            let Method { name, key, kind, is_virtual, public, min_args, max_args } = m;
            w.str(name);
            w.str(key);
            w.byte(match kind {
                MethodKind::Ordinary => 0,
                MethodKind::Constructor => 1,
                MethodKind::Destructor => 2,
                MethodKind::Operator => 3,
            });
            w.bool(*is_virtual);
            w.bool(*public);
            w.u32(*min_args);
            w.opt(max_args, |w, m| w.u32(*m));
        });
        w.opt(span, W::span);
    });
    if version < Version::Lazy {
        return w.0;
    }
    let shell = lz4_flex::compress_prepend_size(&w.0);
    let mut out =
        W(Vec::with_capacity(shell.len() + bodies.len() + own_section.len() + sealed_section.len() + 5), version);
    out.len(shell.len());
    out.0.extend(shell);
    out.0.extend(bodies);
    out.0.extend(own_section);
    out.0.extend(sealed_section);
    out.0
}

/// Decodes encoding `version` (2: the facts are [`legacy_facts`]).
///
/// Encoding 5 is the whole encoding ([`encode`]); the older ones are the
/// bytes after their blob's LZ4.
pub fn decode(b: &[u8], version: Version) -> Result<Unit, String> {
    if version < Version::Lazy {
        return decode_with(b, version, None).map(|(u, _)| u);
    }
    let (shell, bodies) = split(b)?;
    let (u, _) = decode_with(&shell, version, Some((bodies, false)))?;
    Ok(u)
}

/// Encoding 5's or 6's shell, decompressed, and its bodies (and in 6, the
/// system headers' declarations after them).
fn split(b: &[u8]) -> Result<(Vec<u8>, &[u8]), String> {
    let mut r = R { b, pos: 0, version: Version::Lazy };
    let n = r.len()?;
    let shell = unlz4(r.take(n)?)?;
    Ok((shell, &b[r.pos..]))
}

/// [`decode_shell_of`] of a borrowed encoding.
#[cfg(test)]
pub fn decode_shell(b: &[u8], version: Version) -> Result<(Unit, StoredBodies), String> {
    decode_shell_of(b.to_vec(), 0, version)
}

/// A unit of encoding 5 to 7 (`blob[from..]`) without its procedures'
/// bodies: the unit, whose procedures hold their names, linkage, spans,
/// digests and `unanalysable` but stand-in CFGs
/// ([`retest_graph::summary::stand_in`]), and the bodies, decoded on demand.
/// The bodies keep `blob` rather than a copy of their bytes (a unit of 10^3
/// procedures is a megabyte).
pub fn decode_shell_of(blob: Vec<u8>, from: usize, version: Version) -> Result<(Unit, StoredBodies), String> {
    let b = blob.get(from..).ok_or("an empty unit")?;
    let (shell, region) = split(b)?;
    let at = from + (b.len() - region.len());
    let (unit, bodies) = decode_with(&shell, version, Some((region, true)))?;
    let (summaries, ranges, sealed) = bodies.expect("a shell is decoded with its bodies' places");
    let heads: Vec<Head> = unit
        .procedures
        .iter()
        .map(|p| Head {
            name: p.name.clone(),
            is_static: p.is_static,
            span: p.span,
            digest: p.digest,
            unanalysable: p.unanalysable.clone(),
        })
        .collect();
    let cells = (0..heads.len()).map(|_| std::cell::OnceCell::new()).collect();
    Ok((
        unit,
        StoredBodies {
            raw: blob,
            at,
            ranges,
            summaries,
            heads,
            cells,
            sealed,
            shared: None,
            error: Default::default(),
        },
    ))
}

/// Where each body is in the bodies' bytes, and each procedure's summary;
/// in encoding 6, what a shell needs to read the system headers'
/// declarations later.
type Places = (Vec<Summary>, Vec<std::ops::Range<usize>>, Option<SealedDecls>);

/// The system headers' declarations of a shell of encoding 6 or 7, decoded
/// on first use.
struct SealedDecls {
    digest: u128,
    /// Runs of the project's and the system headers' declarations in turn.
    runs: Vec<u32>,
    own: OwnDecls,
    /// Where the section is in the bodies' bytes.
    range: std::ops::Range<usize>,
    all: std::cell::OnceCell<Vec<Declaration>>,
}

/// The project's declarations of a shell.
enum OwnDecls {
    /// Encoding 6: encoded in the shell (whose `decls` decoded them).
    InShell(Vec<u8>),
    /// Encoding 7: a section of their own, decoded on first use.
    Apart { digest: u128, range: std::ops::Range<usize>, decls: std::cell::OnceCell<Vec<Declaration>> },
}

/// Declarations as a section of their own (encodings 6 and 7),
/// LZ4-compressed: what [`decls_section`] reads.
fn encode_decls_section(decls: &[&Declaration], version: Version) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(1 << 12), version);
    w.seq(decls, |w, d| w.decl(d));
    lz4_flex::compress_prepend_size(&w.0)
}

/// The declarations of section `b` (compressed) of encoding 6 or 7.
fn decls_section(b: &[u8]) -> Result<Vec<Declaration>, String> {
    let bytes = unlz4(b)?;
    let mut r = R { b: &bytes, pos: 0, version: Version::Sealed };
    let decls = r.seq(R::decl)?;
    if r.pos != bytes.len() {
        return Err("trailing bytes after the declarations".to_string());
    }
    Ok(decls)
}

/// The declarations in order: `own` and `sealed` taken in turn by `runs`.
fn merge_decls(runs: &[u32], own: Vec<Declaration>, sealed: Vec<Declaration>) -> Result<Vec<Declaration>, String> {
    let total: u64 = runs.iter().map(|&n| u64::from(n)).sum();
    if total != (own.len() + sealed.len()) as u64 {
        return Err("the declarations' runs do not add up".to_string());
    }
    let mut out = Vec::with_capacity(own.len() + sealed.len());
    let (mut own, mut sealed) = (own.into_iter(), sealed.into_iter());
    for (i, &n) in runs.iter().enumerate() {
        let from = if i % 2 == 0 { &mut own } else { &mut sealed };
        for _ in 0..n {
            out.push(from.next().ok_or("the declarations' runs do not add up")?);
        }
    }
    Ok(out)
}

/// Decodes a unit's bytes (of encoding 5: its shell, with its bodies' bytes
/// and whether to leave them undecoded).
fn decode_with(b: &[u8], version: Version, bodies: Option<(&[u8], bool)>) -> Result<(Unit, Option<Places>), String> {
    let (region, shell) = bodies.unwrap_or((&[], false));
    let mut next = 0usize;
    let mut r = R { b, pos: 0, version };
    let files = r.seq(|r| Ok(SourceFile { path: r.str()?, system: r.bool()? }))?;
    let mut places: Places = (Vec::new(), Vec::new(), None);
    let procedures = r.seq(|r| {
        let (name, is_static, span) = (r.str()?, r.bool()?, r.opt(R::span)?);
        if r.version < Version::Lazy {
            let (cond, stmt, map, probes, locals) = r.body()?;
            let unanalysable = r.opt(R::str)?;
            let digest = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
            return Ok(Procedure { name, is_static, span, cond, stmt, map, probes, locals, unanalysable, digest });
        }
        let digest = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
        let unanalysable = r.opt(R::str)?;
        let summary = r.summary()?;
        let n = r.u32()? as usize;
        let start = next;
        let bytes =
            region.get(start..start.checked_add(n).ok_or("body beyond the unit")?).ok_or("body beyond the unit")?;
        next = start + n;
        if shell {
            places.0.push(summary);
            places.1.push(start..start + n);
            let stand_in = retest_graph::summary::stand_in(&name);
            let map = Contraction { node: vec![NodeId(0), NodeId(1)], edge: Vec::new() };
            return Ok(Procedure {
                name,
                is_static,
                span,
                cond: stand_in.clone(),
                stmt: stand_in,
                map,
                probes: Vec::new(),
                locals: Vec::new(),
                unanalysable,
                digest,
            });
        }
        let bytes = unlz4(bytes)?;
        let mut br = R { b: &bytes, pos: 0, version: r.version };
        let (cond, stmt, map, probes, locals) = br.body()?;
        if br.pos != bytes.len() {
            return Err(format!("trailing bytes after the body of `{name}`"));
        }
        Ok(Procedure { name, is_static, span, cond, stmt, map, probes, locals, unanalysable, digest })
    })?;
    let (mut sealed_len, mut own_len) = (0usize, 0usize);
    let decls = if version >= Version::Sealed {
        let runs = r.seq(R::u32)?;
        // encoding 7: the project's declarations' digest and section length;
        // 6: the declarations themselves, and their bytes
        enum Own<'b> {
            InShell(Vec<Declaration>, &'b [u8]),
            Apart(u128),
        }
        let own = if version >= Version::Apart {
            let digest = u128::from_le_bytes(r.take(16)?.try_into().expect("16 bytes"));
            own_len = r.u32()? as usize;
            Own::Apart(digest)
        } else {
            let start = r.pos;
            let own = r.seq(R::decl)?;
            Own::InShell(own, &b[start..r.pos])
        };
        let digest = u128::from_le_bytes(r.take(16)?.try_into().expect("16 bytes"));
        sealed_len = r.u32()? as usize;
        let at = region.len().checked_sub(sealed_len).ok_or("declarations beyond the unit")?;
        let range = at..region.len();
        let own_range = at.checked_sub(own_len).ok_or("declarations beyond the unit")?..at;
        if shell {
            // the shell's `decls`: the project's in encoding 6, none in 7
            let (own, decls) = match own {
                Own::InShell(own, bytes) => (OwnDecls::InShell(bytes.to_vec()), own),
                Own::Apart(digest) => {
                    (OwnDecls::Apart { digest, range: own_range, decls: Default::default() }, Vec::new())
                }
            };
            places.2 = Some(SealedDecls { digest, runs, own, range, all: Default::default() });
            decls
        } else {
            let own = match own {
                Own::InShell(own, _) => own,
                Own::Apart(_) => decls_section(&region[own_range])?,
            };
            merge_decls(&runs, own, decls_section(&region[range])?)?
        }
    } else {
        r.seq(R::decl)?
    };
    let mut u = Unit {
        files,
        procedures,
        decls,
        address_taken: r.seq(R::str)?,
        noreturn: r.seq(R::str)?,
        problems: r.seq(R::problem)?,
        unattributed_error: r.opt(R::problem)?,
        entry_points: Vec::new(),
        returns_twice: Vec::new(),
        classes: Vec::new(),
    };
    if version >= Version::Facts {
        u.entry_points = r.seq(R::str)?;
        u.returns_twice = r.seq(R::str)?;
    } else {
        legacy_facts(&mut u);
    }
    if version >= Version::Classes {
        u.classes = r.seq(|r| {
            Ok(Class {
                name: r.str()?,
                bases: r.seq(R::str)?,
                methods: r.seq(|r| {
                    Ok(Method {
                        name: r.str()?,
                        key: r.str()?,
                        kind: match r.byte()? {
                            0 => MethodKind::Ordinary,
                            1 => MethodKind::Constructor,
                            2 => MethodKind::Destructor,
                            3 => MethodKind::Operator,
                            t => return Err(format!("unknown method kind {t}")),
                        },
                        is_virtual: r.bool()?,
                        public: r.bool()?,
                        min_args: r.u32()?,
                        max_args: r.opt(R::u32)?,
                    })
                })?,
                span: r.opt(R::span)?,
            })
        })?;
    }
    if r.pos != b.len() || next.checked_add(own_len).and_then(|n| n.checked_add(sealed_len)) != Some(region.len()) {
        return Err("trailing bytes after unit".to_string());
    }
    Ok((u, shell.then_some(places)))
}

/// A procedure's name, linkage, span, digest and `unanalysable`.
struct Head {
    name: String,
    is_static: bool,
    span: Option<Span>,
    digest: u64,
    unanalysable: Option<String>,
}

/// The bodies of a unit of encoding 5, decoded on first use.
pub struct StoredBodies {
    /// The unit's blob; its bodies' bytes from `at` on (`ranges` and the
    /// declaration sections' places are within them).
    raw: Vec<u8>,
    at: usize,
    ranges: Vec<std::ops::Range<usize>>,
    summaries: Vec<Summary>,
    heads: Vec<Head>,
    cells: Vec<std::cell::OnceCell<Arc<Procedure>>>,
    sealed: Option<SealedDecls>,
    /// Bodies decoded already, shared with the other units read alongside
    /// ([`StoredBodies::share`]).
    shared: Option<Arc<DecodedBodies>>,
    error: std::cell::RefCell<Option<String>>,
}

/// Bodies decoded so far, by their stored bytes, shared by the units one
/// store handle reads for a selection. A body stored byte for byte alike
/// in several places is decoded once: a header's inline function in every
/// unit that includes it, and a procedure a change left as it was, in the
/// old and the new version of its unit. Decoding is a function of the
/// bytes and the procedure's head, so a body shared is the body each would
/// decode (`identical_bodies_are_decoded_once`).
#[derive(Default)]
pub struct DecodedBodies(Mutex<HashMap<Box<[u8]>, Arc<Procedure>>>);

impl DecodedBodies {
    /// How many distinct bodies were decoded.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl StoredBodies {
    /// The bodies' bytes.
    fn region(&self) -> &[u8] {
        &self.raw[self.at..]
    }

    /// Lets this unit's bodies be decoded once with those of the other
    /// units sharing `with`.
    pub fn share(&mut self, with: Arc<DecodedBodies>) {
        self.shared = Some(with);
    }

    /// Body `i`, from the bodies shared when one stored alike was decoded
    /// already for a procedure of the same head.
    fn shared_body(&self, i: usize) -> Result<Arc<Procedure>, String> {
        let Some(shared) = &self.shared else { return self.decode_body(i).map(Arc::new) };
        let bytes = &self.region()[self.ranges[i].clone()];
        let h = &self.heads[i];
        let same_head = |p: &Procedure| {
            let Head { name, is_static, span, digest, unanalysable } = h;
            p.name == *name
                && p.is_static == *is_static
                && p.span == *span
                && p.digest == *digest
                && p.unanalysable == *unanalysable
        };
        let hit = shared.0.lock().unwrap_or_else(|e| e.into_inner()).get(bytes).filter(|p| same_head(p)).cloned();
        if let Some(p) = hit {
            return Ok(p);
        }
        let p = Arc::new(self.decode_body(i)?);
        shared.0.lock().unwrap_or_else(|e| e.into_inner()).entry(bytes.into()).or_insert_with(|| p.clone());
        Ok(p)
    }

    /// The unit's declarations in order, from the project's and the system
    /// headers'; an error says which part is damaged.
    fn decode_decls(&self, s: &SealedDecls) -> Result<Vec<Declaration>, String> {
        let own = self.decode_own(s)?;
        let sealed = self.region().get(s.range.clone()).ok_or("declarations beyond the unit".to_string());
        let sealed = sealed.and_then(decls_section).map_err(|e| format!("the system headers' declarations: {e}"))?;
        merge_decls(&s.runs, own, sealed)
    }

    /// The project's declarations in order; an error says they are damaged.
    fn decode_own(&self, s: &SealedDecls) -> Result<Vec<Declaration>, String> {
        match &s.own {
            OwnDecls::InShell(b) => {
                let mut r = R { b, pos: 0, version: Version::Sealed };
                r.seq(R::decl)
            }
            OwnDecls::Apart { decls, range, .. } => match decls.get() {
                Some(decls) => Ok(decls.clone()),
                None => {
                    let section = self.region().get(range.clone()).ok_or("declarations beyond the unit".to_string());
                    section.and_then(decls_section)
                }
            },
        }
        .map_err(|e| format!("the project's declarations: {e}"))
    }

    fn decode_body(&self, i: usize) -> Result<Procedure, String> {
        let bytes = unlz4(&self.region()[self.ranges[i].clone()])?;
        let mut r = R { b: &bytes, pos: 0, version: Version::Lazy };
        let (cond, stmt, map, probes, locals) = r.body()?;
        if r.pos != bytes.len() {
            return Err("trailing bytes after the body".to_string());
        }
        let Head { name, is_static, span, digest, unanalysable } = &self.heads[i];
        Ok(Procedure {
            name: name.clone(),
            is_static: *is_static,
            span: *span,
            cond,
            stmt,
            map,
            probes,
            locals,
            unanalysable: unanalysable.clone(),
            digest: *digest,
        })
    }
}

impl Bodies for StoredBodies {
    fn body(&self, proc: usize) -> &Procedure {
        self.cells[proc].get_or_init(|| {
            self.shared_body(proc).unwrap_or_else(|e| {
                let h = &self.heads[proc];
                self.error.borrow_mut().get_or_insert_with(|| format!("the body of `{}`: {e}", h.name));
                let mut g2 = CfgBuilder::new(&h.name);
                let entry = g2.add_node(Node::new(NodeKind::Entry, "\u{0}body not decodable"));
                let exit = g2.add_node(Node::new(NodeKind::Exit, ""));
                g2.add_edge(entry, exit, EdgeLabel::Eps);
                g2.set_entry(entry);
                g2.set_exit(exit);
                let stmt = g2.build().expect("two nodes, one edge");
                Arc::new(Procedure {
                    name: h.name.clone(),
                    is_static: h.is_static,
                    span: h.span,
                    cond: stmt.clone(),
                    stmt,
                    map: Contraction { node: vec![NodeId(0), NodeId(1)], edge: vec![Some(EdgeId(0))] },
                    probes: vec![Probe::Off, Probe::Off],
                    locals: Vec::new(),
                    unanalysable: Some(format!("its stored body cannot be decoded ({e})")),
                    digest: !h.digest,
                })
            })
        })
    }

    fn summary(&self, proc: usize) -> &Summary {
        &self.summaries[proc]
    }

    fn error(&self) -> Option<String> {
        self.error.borrow().clone()
    }

    fn sealed_digest(&self) -> Option<u128> {
        self.sealed.as_ref().map(|s| s.digest)
    }

    fn all_decls(&self) -> Option<&[Declaration]> {
        let s = self.sealed.as_ref()?;
        Some(s.all.get_or_init(|| {
            self.decode_decls(s).unwrap_or_else(|e| {
                // the selection stops on the error; the project's declarations
                // alone would leave out what the system headers declare
                self.error.borrow_mut().get_or_insert(e);
                self.decode_own(s).unwrap_or_default()
            })
        }))
    }

    fn own_digest(&self) -> Option<u128> {
        match self.sealed.as_ref()?.own {
            OwnDecls::Apart { digest, .. } => Some(digest),
            OwnDecls::InShell(_) => None,
        }
    }

    fn own_decls(&self) -> Option<&[Declaration]> {
        let s = self.sealed.as_ref()?;
        let OwnDecls::Apart { decls, .. } = &s.own else { return None };
        Some(decls.get_or_init(|| {
            self.decode_own(s).unwrap_or_else(|e| {
                // the selection stops on the error
                self.error.borrow_mut().get_or_insert(e);
                Vec::new()
            })
        }))
    }
}

struct W(Vec<u8>, Version);

impl W {
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    fn bool(&mut self, b: bool) {
        self.0.push(b as u8);
    }

    fn u32(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("fewer than 2^32 items"));
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend(s.as_bytes());
    }

    fn seq<T>(&mut self, items: &[T], mut f: impl FnMut(&mut W, &T)) {
        self.len(items.len());
        for i in items {
            f(self, i);
        }
    }

    fn opt<T>(&mut self, v: &Option<T>, f: impl FnOnce(&mut W, &T)) {
        match v {
            None => self.byte(0),
            Some(v) => {
                self.byte(1);
                f(self, v);
            }
        }
    }

    /// A procedure's body: its CFGs, their contraction, probes and locals.
    fn body(&mut self, cond: &Cfg, stmt: &Cfg, map: &Contraction, probes: &[Probe], locals: &[Declaration]) {
        self.cfg(cond);
        self.cfg(stmt);
        let Contraction { node, edge } = map;
        self.seq(node, |w, n| w.u32(n.0));
        self.seq(edge, |w, e| w.u32(e.map_or(0, |e| e.0 + 1)));
        self.seq(probes, |w, p| match *p {
            Probe::Derived => w.byte(0),
            Probe::Off => w.byte(1),
            Probe::Node => w.byte(2),
            Probe::PerEdge => w.byte(3),
            Probe::Ahead => w.byte(4),
            Probe::Edges(cells) => {
                w.byte(5);
                w.u32(cells);
            }
            Probe::Paired { mask, via } => {
                w.byte(6);
                w.u32(mask);
                w.u32(via);
            }
            Probe::Entered => w.byte(7),
        });
        self.seq(locals, W::decl);
    }

    fn summary(&mut self, s: &Summary) {
        let Summary { cond_edges, walk_digest, names, calls, indirect_call, dispatch, exit_reachable } = s;
        self.u32(*cond_edges);
        self.0.extend(walk_digest.to_le_bytes());
        self.len(names.len());
        for h in names {
            self.0.extend(h.to_le_bytes());
        }
        self.seq(calls, |w, c| w.str(c));
        self.byte(*indirect_call as u8 | (*dispatch as u8) << 1 | (*exit_reachable as u8) << 2);
    }

    fn span(&mut self, s: &Span) {
        let Span { file, line, col, end_line } = *s;
        for v in [file, line, col, end_line] {
            self.u32(v);
        }
    }

    fn decl(&mut self, d: &Declaration) {
        let Declaration { kind, names, text, mentions, span } = d;
        self.byte(kind.code());
        self.seq(names, |w, s| w.str(s));
        self.str(text);
        self.seq(mentions, |w, s| w.str(s));
        self.opt(span, W::span);
    }

    fn problem(&mut self, p: &Problem) {
        let Problem { span, message } = p;
        self.opt(span, W::span);
        self.str(message);
    }

    fn cfg(&mut self, g: &Cfg) {
        self.str(g.name());
        self.u32(g.entry().0);
        self.u32(g.exit().0);
        self.len(g.node_count());
        for (_, n) in g.nodes() {
            let Node { kind, text, span, refs, calls, indirect_call, dispatch, decls } = n;
            self.byte(kind.code());
            self.str(text);
            self.opt(span, W::span);
            self.seq(refs, |w, s| w.str(s));
            self.seq(calls, |w, s| w.str(s));
            self.bool(*indirect_call);
            self.seq(decls, W::decl);
            if self.1 < Version::Classes {
                continue;
            }
            self.seq(dispatch, |w, d| {
                let Dispatch { name, receiver, args } = d;
                w.str(name);
                match receiver {
                    Receiver::Object(c) => {
                        w.byte(0);
                        w.str(c);
                    }
                    Receiver::Qualified(c) => {
                        w.byte(1);
                        w.str(c);
                    }
                    Receiver::Unknown => w.byte(2),
                }
                w.u32(*args);
            });
        }
        self.len(g.edge_count());
        for (_, e) in g.edges() {
            let Edge { src, dst, label } = e;
            self.u32(src.0);
            self.u32(dst.0);
            let (code, text) = label.code();
            self.byte(code);
            if let Some(t) = text {
                self.str(t);
            }
        }
    }
}

struct R<'a> {
    b: &'a [u8],
    pos: usize,
    version: Version,
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let s = self.b.get(self.pos..self.pos.checked_add(n).ok_or("truncated unit")?).ok_or("truncated unit")?;
        self.pos += n;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.b.get(self.pos).ok_or("truncated unit")?;
        self.pos += 1;
        Ok(b)
    }

    fn bool(&mut self) -> Result<bool, String> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("bad boolean {b}")),
        }
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            let part = u32::from(b & 0x7f);
            if shift == 28 && part > 0x0f {
                return Err("varint overflows 32 bits".to_string());
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint overflows 32 bits".to_string())
    }

    /// A length, checked against the bytes left (every item takes at least one byte).
    fn len(&mut self) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n > self.b.len() - self.pos {
            return Err("length beyond the end of the unit".to_string());
        }
        Ok(n)
    }

    fn str(&mut self) -> Result<String, String> {
        let n = self.len()?;
        let s = self.take(n)?;
        std::str::from_utf8(s).map(str::to_owned).map_err(|e| e.to_string())
    }

    fn seq<T>(&mut self, mut f: impl FnMut(&mut R<'a>) -> Result<T, String>) -> Result<Vec<T>, String> {
        let n = self.len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(v)
    }

    fn opt<T>(&mut self, f: impl FnOnce(&mut R<'a>) -> Result<T, String>) -> Result<Option<T>, String> {
        match self.byte()? {
            0 => Ok(None),
            1 => f(self).map(Some),
            b => Err(format!("bad option tag {b}")),
        }
    }

    /// A procedure's body (see [`W::body`]).
    #[allow(clippy::type_complexity)]
    fn body(&mut self) -> Result<(Cfg, Cfg, Contraction, Vec<Probe>, Vec<Declaration>), String> {
        Ok((
            self.cfg()?,
            self.cfg()?,
            Contraction {
                node: self.seq(|r| r.u32().map(NodeId))?,
                edge: self.seq(|r| r.u32().map(|e| e.checked_sub(1).map(EdgeId)))?,
            },
            self.seq(|r| {
                Ok(match r.byte()? {
                    0 => Probe::Derived,
                    1 => Probe::Off,
                    2 => Probe::Node,
                    3 => Probe::PerEdge,
                    4 => Probe::Ahead,
                    5 => Probe::Edges(r.u32()?),
                    6 => Probe::Paired { mask: r.u32()?, via: r.u32()? },
                    7 => Probe::Entered,
                    t => return Err(format!("unknown probe {t}")),
                })
            })?,
            self.seq(R::decl)?,
        ))
    }

    fn summary(&mut self) -> Result<Summary, String> {
        let cond_edges = self.u32()?;
        let walk_digest = u128::from_le_bytes(self.take(16)?.try_into().expect("16 bytes"));
        let n = self.len()?;
        let names = self
            .take(n.checked_mul(8).ok_or("too many names")?)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let calls = self.seq(R::str)?;
        let flags = self.byte()?;
        Ok(Summary {
            cond_edges,
            walk_digest,
            names,
            calls,
            indirect_call: flags & 1 != 0,
            dispatch: flags & 2 != 0,
            exit_reachable: flags & 4 != 0,
        })
    }

    fn span(&mut self) -> Result<Span, String> {
        Ok(Span { file: self.u32()?, line: self.u32()?, col: self.u32()?, end_line: self.u32()? })
    }

    fn decl(&mut self) -> Result<Declaration, String> {
        Ok(Declaration {
            kind: {
                let t = self.byte()?;
                DeclKind::from_code(t).ok_or_else(|| format!("unknown declaration kind {t}"))?
            },
            names: self.seq(R::str)?,
            text: self.str()?,
            mentions: self.seq(R::str)?,
            span: self.opt(R::span)?,
        })
    }

    fn problem(&mut self) -> Result<Problem, String> {
        Ok(Problem { span: self.opt(R::span)?, message: self.str()? })
    }

    fn cfg(&mut self) -> Result<Cfg, String> {
        let mut b = CfgBuilder::new(self.str()?);
        let entry = NodeId(self.u32()?);
        let exit = NodeId(self.u32()?);
        let nodes = self.len()?;
        // growing the vector node by node cost a tenth of a large selection's
        // time (`len` bounds the count by the bytes left)
        b.reserve_nodes(nodes);
        for _ in 0..nodes {
            b.add_node(Node {
                kind: {
                    let t = self.byte()?;
                    NodeKind::from_code(t).ok_or_else(|| format!("unknown node kind {t}"))?
                },
                text: self.str()?,
                span: self.opt(R::span)?,
                refs: self.seq(R::str)?,
                calls: self.seq(R::str)?,
                indirect_call: self.bool()?,
                decls: self.seq(R::decl)?,
                dispatch: if self.version >= Version::Classes {
                    self.seq(|r| {
                        Ok(Dispatch {
                            name: r.str()?,
                            receiver: match r.byte()? {
                                0 => Receiver::Object(r.str()?),
                                1 => Receiver::Qualified(r.str()?),
                                2 => Receiver::Unknown,
                                t => return Err(format!("unknown receiver {t}")),
                            },
                            args: r.u32()?,
                        })
                    })?
                } else {
                    Vec::new()
                },
            });
        }
        b.set_entry(entry);
        b.set_exit(exit);
        let edges = self.len()?;
        b.reserve_edges(edges);
        for _ in 0..edges {
            let src = NodeId(self.u32()?);
            let dst = NodeId(self.u32()?);
            let label = match self.byte()? {
                0 => EdgeLabel::Eps,
                1 => EdgeLabel::True,
                2 => EdgeLabel::False,
                3 => EdgeLabel::Case(self.str()?),
                4 => EdgeLabel::Default,
                5 => EdgeLabel::Goto(self.str()?),
                6 => EdgeLabel::Throw(self.str()?),
                t => return Err(format!("unknown edge label {t}")),
            };
            b.add_edge(src, dst, label);
        }
        b.build().map_err(|e| e.to_string())
    }
}
