//! Source-level instrumentation of a preprocessed translation unit.
//!
//! The instrumented text is the compiler's own preprocessed output (line markers
//! kept, so diagnostics and debug info point at the original sources) with
//! *insertions only* — nothing of the original text is removed or reordered — plus
//! a header that declares the probe cells and registers the unit with the runtime
//! (ABI 2, `runtime/retest_rt.h`, `docs/trace-format.md`).
//!
//! Probes are volatile byte stores into a static per-unit array
//! (`__retest_e[4 * k] = 1`), no calls on the hot path; a concurrent store can
//! never clear another cell. Volatile, so each store lands where its probe
//! stands and a fault finds every cell set that the run set before it
//! (`CELL`). Each edge cell owns a 4-byte word, of which the probe sets the
//! first byte: on the lexer benchmark built by Clang, where hot cells shared an
//! 8-byte word when they were one byte each, the loop took about 30 % more CPU
//! time than with a word per cell (`bench/RESULTS.md`). Byte stores keep the
//! instructions as short as before, so the compiler's block layout does not
//! change. A store of a register holding 1 (loaded from a constant the
//! compiler cannot fold) instead of the immediate was tried: with volatile
//! cells it cost more than it saved (`bench/RESULTS.md`, "Volatile cells").
//! The array is aligned to a cache line and padded to whole lines, so no
//! program data shares a line with it: in the lexer benchmark, the array
//! aligned to 4 bytes right after the program's input buffer made the build
//! run 5.8 times as long as plain. The arrays of MC/DC and path cells and the
//! frames counters get lines of their own alike. The runtime reads each word
//! as one cell and writes traces with byte cells.
//! A counted build (`retest cc --counts`, [`UnitRecording::counts`]) has the
//! same plan and cells, but each cell is a 64-bit counter ([`COUNTER`]) and
//! its probe an increment (`++__retest_e[k]`), in a section of kind
//! `SECT_EDGE_COUNTS` that the unit declares under descriptor version 3;
//! the runtime writes both hit cells and counts. The default build is
//! unchanged: byte stores, descriptor version 2, the same build hash.
//! Per node of the condition-level CFG, as its [`Probe`] says:
//! * entry: `{ P; { original body } }` — the original body becomes an inner block,
//!   so the probe never precedes the body's declarations (C89);
//! * a statement: `P; stmt` — or `{ P; stmt }` where it is the body of an `if`,
//!   a loop or a label;
//! * a `for` header expression: `(P, expr)`;
//! * a condition: `((c) ? (P_T, 1) : (P_F, 0))`; a paired in-edge
//!   ([`Probe::Paired`]) sets its flag instead of its cell (`__retest_qE = 1`,
//!   `E` the edge), and the condition it leads to first tests the flag:
//!   `(__retest_qE ? (__retest_qE = 0, PAIR_T) : P_T)` — the flags are
//!   `unsigned char` locals declared at the function's entry;
//! * a `switch`: the controlling value is saved, a second `switch` on it records
//!   which case label (or `default`) was taken — so fall-through between cases is
//!   never mistaken for a taken label — and the original `switch` then runs on the
//!   saved value (GNU `__typeof__` and a statement expression under
//!   `__extension__`; GCC and Clang accept both in every C mode).
//!
//! Nodes whose probe is [`Probe::Derived`], [`Probe::Ahead`], [`Probe::Entered`]
//! or [`Probe::Off`] get nothing.

use std::collections::BTreeMap;

use retest_graph::coverage::{CellLayout, Probe, active_pairs};
use retest_graph::recording::{Action, Component, SECT_FRAMES, SECT_MCDC, SECT_PATHS, Sink, UnitRecording};
use retest_graph::{Cfg, EdgeId, EdgeLabel, NodeId, Procedure, Unit};

use crate::build::{Site, SpotHow};
use crate::tu::TuAnalysis;

use retest_abi::{ABI, ABI_UNCOUNTED, BuildHash, SECT_EDGE_COUNTS, SECT_EDGE_WORDS};

/// Bytes per edge cell in instrumented code: a probe sets the first byte of
/// its cell's word (a word cell is hit when it is not zero).
const EDGE_CELL_BYTES: u32 = 4;
/// Alignment and size granule of every probe array: a cache line.
const ARRAY_ALIGN: u32 = 64;
/// The element type of the cell arrays. Volatile, so the compiler emits each
/// probe's store where the probe stands: it may not move the stores of a loop
/// out of it (GCC 12 at `-O2` did, behind flags in registers, for a loop that
/// touched only a static `int` array, and a fault in the loop then left none
/// of its cells set), merge them, or drop one. At a fault or a fatal signal,
/// every probe that ran before it has set its cell.
const CELL: &str = "volatile unsigned char";

/// The element type of the edge cells of a counted build (`--counts`): a
/// 64-bit counter per cell. 64 bits, not 32 saturating: a saturating
/// increment needs a compare (and a branch or a conditional move) on every
/// probe, while a 64-bit counter cannot wrap back to zero — which would read
/// as "not hit" — in any run (2^64 increments at 10^9 a second take 584
/// years); on x86-64 the increment is a load, an add and a store. Volatile
/// for the reason [`CELL`] is. Increments of two threads may lose one of
/// them (as gcov's default counters do), but never leave a counter that ran
/// at zero, so edge coverage stays exact.
const COUNTER: &str = "volatile unsigned long long";

/// The probe that records edge cell `c`: one byte store, which cannot clear
/// another cell; in a counted build (`counting`), one increment of its
/// counter.
fn edge_store(c: u32, counting: bool) -> String {
    if counting { format!("++__retest_e[{c}]") } else { format!("__retest_e[{}] = 1", c * EDGE_CELL_BYTES) }
}

/// `store` (an assignment to a probe cell) as it runs in a function that may
/// run while compiling, where nothing may store into a cell: only outside
/// constant evaluation. In code that runs, `__builtin_is_constant_evaluated()`
/// is the constant `false`, so the compiler emits the store alone.
fn guard(store: String) -> String {
    format!("(void)(__builtin_is_constant_evaluated() || ({store}, 0))")
}

/// An instrumented translation unit.
#[derive(Clone, Debug)]
pub struct Instrumented {
    /// The text to compile (as preprocessed C, `-x cpp-output`).
    pub text: String,
    /// What `text` adds to the preprocessed text it was made from.
    pub insertions: Insertions,
    /// Number of edge cells.
    pub cells: u32,
    /// The recording actually instrumented: the requested one without the
    /// components that could not be placed.
    pub recording: UnitRecording,
    /// Why components were left out: (procedure, what, why).
    pub dropped: Vec<Dropped>,
}

/// What instrumentation adds to a preprocessed text: a header, then texts
/// inserted at byte offsets of the text (ascending; nothing is removed or
/// reordered). Applied to the text it was made from, it gives the
/// instrumented text again: what a build that meets the same preprocessed
/// text reuses instead of analysing and instrumenting it anew.
#[derive(Clone, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Insertions {
    pub header: String,
    /// (byte offset into the preprocessed text, text inserted there).
    pub at: Vec<(usize, String)>,
}

impl Insertions {
    /// The instrumented text of `raw`; `None` when an offset is out of order,
    /// past the end of `raw` or inside a character (not the text these
    /// insertions were made from).
    pub fn apply(&self, raw: &str) -> Option<String> {
        let extra: usize = self.at.iter().map(|(_, t)| t.len()).sum();
        let mut out = String::with_capacity(self.header.len() + raw.len() + extra);
        out.push_str(&self.header);
        let mut pos = 0;
        for (at, text) in &self.at {
            out.push_str(raw.get(pos..*at)?);
            out.push_str(text);
            pos = *at;
        }
        out.push_str(raw.get(pos..)?);
        Some(out)
    }
}

/// A recording component the instrumenter could not place.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Dropped {
    /// Index of the procedure.
    pub procedure: usize,
    /// `None`: its path profiling; `Some(j)`: the MC/DC recording of its decision `j`.
    pub decision: Option<u32>,
    pub why: String,
}

/// The probe cells of a unit under a plan: per procedure, its layout and its
/// first cell in the unit's array.
#[derive(Clone, Debug)]
pub struct UnitCells {
    pub layouts: Vec<CellLayout>,
    pub base: Vec<u32>,
    pub total: u32,
}

impl UnitCells {
    pub fn new(unit: &Unit, plan: &[Vec<Probe>]) -> UnitCells {
        let mut layouts = Vec::new();
        let mut base = Vec::new();
        let mut total = 0u32;
        for (p, probes) in unit.procedures.iter().zip(plan) {
            let l = CellLayout::new(&p.cond, probes);
            base.push(total);
            total += l.cells;
            layouts.push(l);
        }
        UnitCells { layouts, base, total }
    }
}

/// The full-instrumentation plan of a unit: every procedure's own probes.
pub fn full_plan(unit: &Unit) -> Vec<Vec<Probe>> {
    unit.procedures.iter().map(|p| p.probes.clone()).collect()
}

struct Edit {
    at: usize,
    /// The range this edit opens or closes, for ordering edits at the same offset.
    range: (usize, usize),
    open: bool,
    text: String,
}

/// Instruments `raw` (the compiler's preprocessed output that `tu` was built from)
/// under `plan`, identifying the unit to the runtime by `hash`: edge probes only.
pub fn instrument(raw: &str, tu: &TuAnalysis, plan: &[Vec<Probe>], hash: &BuildHash) -> Instrumented {
    instrument_with(raw, tu, plan, &UnitRecording::default(), hash)
}

/// Instruments `raw` under `plan` plus the recording components of `recording`
/// (MC/DC evaluations, paths) that can be placed (the private `place` decides).
pub fn instrument_with(
    raw: &str,
    tu: &TuAnalysis,
    plan: &[Vec<Probe>],
    recording: &UnitRecording,
    hash: &BuildHash,
) -> Instrumented {
    let cells = UnitCells::new(&tu.unit, plan);
    let (extras, placed, dropped) = place_all(tu, recording);
    let mut edits: Vec<Edit> = Vec::new();
    let mut switch_no = 0usize;
    for (pi, p) in tu.unit.procedures.iter().enumerate() {
        let layout = &cells.layouts[pi];
        let base = cells.base[pi];
        let extra = &extras[pi];
        let guarded = tu.guarded.get(pi).copied().unwrap_or(false);
        let counting = recording.counts;
        let edge_store = |c: u32| if guarded { guard(edge_store(c, counting)) } else { edge_store(c, counting) };
        // paired in-edges: noted in a flag of their own, which the target's
        // outcome tests and clears (`retest_graph::coverage::pair_probes`)
        let pairs = active_pairs(&p.cond, &plan[pi], layout);
        let flag = |e: EdgeId| format!("__retest_q{}", e.index());
        let pair_decls: Vec<String> =
            pairs.iter().map(|pair| format!("unsigned char {} = 0;", flag(pair.edge))).collect();
        let decls = join_decls(extra.decls.as_deref(), &pair_decls);
        for n in p.cond.node_ids() {
            let probe = plan[pi][n.index()];
            let probed = probe.is_probed();
            let cell = |label: &EdgeLabel| -> Option<u32> {
                if !probed {
                    return None;
                }
                let e = p.cond.out_edge_labelled(n, label)?;
                layout.cell_of_edge(&p.cond, &plan[pi], e).map(|c| base + c)
            };
            // the code that records a condition's outcome: its own cell, or the
            // note of a paired out-edge; a paired target first takes the note of
            // the in-edge that led to it
            let outcome = |label: &EdgeLabel, k: u32| -> Option<String> {
                let e = p.cond.out_edge_labelled(n, label)?;
                let own = cell(label).map(|c| match pairs.iter().find(|pair| pair.edge == e) {
                    Some(_) => format!("{} = 1", flag(e)),
                    None => edge_store(c),
                });
                let mut code = own;
                for pair in pairs.iter().rev().filter(|pair| pair.target == n) {
                    let q = flag(pair.edge);
                    let rest = code.map_or_else(|| "0".to_string(), |c| format!("({c})"));
                    code = Some(format!("({q} ? ({q} = 0, {}) : {rest})", edge_store(base + pair.cells + k)));
                }
                code
            };
            let arm_extra = |label: &EdgeLabel| -> Option<&str> {
                let e = p.cond.out_edge_labelled(n, label)?;
                extra.arm.get(&e).map(String::as_str)
            };
            let node_probe = probed.then(|| edge_store(base + layout.cell_of_node(n)));
            let before = extra.before.get(&n).map(String::as_str);
            match tu.sites[pi][n.index()] {
                Site::None => {}
                Site::Startup => {
                    let Some(code) = node_probe.as_deref() else { continue };
                    // run by the loader with the unit's other start-up code
                    let end = raw.len();
                    edits.push(Edit {
                        at: end,
                        range: (end, end),
                        open: true,
                        text: format!(
                            "\n__attribute__((constructor)) static void __retest_startup(void) {{ {code}; }}\n"
                        ),
                    });
                }
                Site::Entry { open, close } => {
                    // declarations first (C89), then statements
                    let stmts = join_code(&[node_probe.as_deref(), before]);
                    let code = match (&decls, stmts.is_empty()) {
                        (None, true) => continue,
                        (None, false) => format!("{stmts};"),
                        (Some(d), true) => d.clone(),
                        (Some(d), false) => format!("{d} {stmts};"),
                    };
                    if close == open + 1 {
                        // an empty body: one insertion between its braces (an opener
                        // and a closer at one offset would sort closer first)
                        edits.push(Edit {
                            at: close,
                            range: (open, close + 1),
                            open: true,
                            text: format!(" {code} {{ }} "),
                        });
                        continue;
                    }
                    edits.push(Edit {
                        at: open + 1,
                        range: (open, close + 1),
                        open: true,
                        text: format!(" {code} {{"),
                    });
                    edits.push(Edit { at: close, range: (open, close + 1), open: false, text: "} ".to_string() });
                }
                Site::Stmt { start, end, wrap } => {
                    let code = join_code(&[node_probe.as_deref(), before]);
                    if code.is_empty() {
                        continue;
                    }
                    let (open, close) = if wrap { ("{ ", " }") } else { ("", "") };
                    edits.push(Edit { at: start, range: (start, end), open: true, text: format!("{open}{code}; ") });
                    if wrap {
                        edits.push(Edit { at: end, range: (start, end), open: false, text: close.to_string() });
                    }
                }
                Site::Expr { start, end } => {
                    let code = join_code(&[node_probe.as_deref(), before]);
                    if code.is_empty() {
                        continue;
                    }
                    edits.push(Edit { at: start, range: (start, end), open: true, text: format!("({code}, ") });
                    edits.push(Edit { at: end, range: (start, end), open: false, text: ")".to_string() });
                }
                Site::Cond { start, end } => {
                    let t = outcome(&EdgeLabel::True, 0);
                    let f = outcome(&EdgeLabel::False, 1);
                    let (xt, xf) = (arm_extra(&EdgeLabel::True), arm_extra(&EdgeLabel::False));
                    if t.is_none() && f.is_none() && xt.is_none() && xf.is_none() {
                        continue;
                    }
                    let arm = |probe: Option<String>, x: Option<&str>, v: u8| {
                        let code = join_code(&[x, probe.as_deref()]);
                        if code.is_empty() { v.to_string() } else { format!("({code}, {v})") }
                    };
                    edits.push(Edit { at: start, range: (start, end), open: true, text: "((".to_string() });
                    edits.push(Edit {
                        at: end,
                        range: (start, end),
                        open: false,
                        text: format!(") ? {} : {})", arm(t, xt, 1), arm(f, xf, 0)),
                    });
                }
                Site::BlockStart { open, close } => {
                    let code = join_code(&[node_probe.as_deref(), before]);
                    if code.is_empty() {
                        continue;
                    }
                    edits.push(Edit { at: open + 1, range: (open, close + 1), open: true, text: format!(" {code}; ") });
                }
                Site::Arms { t, f } => {
                    for (spot, label, k) in [(t, EdgeLabel::True, 0), (f, EdgeLabel::False, 1)] {
                        let code = join_code(&[arm_extra(&label), outcome(&label, k).as_deref()]);
                        if code.is_empty() {
                            continue;
                        }
                        // one byte wider than the statement: these braces hold any
                        // the statement's own probe adds
                        let range = (spot.start, spot.end + 1);
                        let (open_text, close_text) = match spot.how {
                            SpotHow::Before => (format!("{{ {code}; "), " }".to_string()),
                            SpotHow::Else => ("{ ".to_string(), format!(" }} else {{ {code}; }}")),
                            SpotHow::After => ("{ ".to_string(), format!(" {code}; }}")),
                        };
                        edits.push(Edit { at: spot.start, range, open: true, text: open_text });
                        edits.push(Edit { at: spot.end, range, open: false, text: close_text });
                    }
                }
                Site::Switch { stmt_start, stmt_end, cond_start, cond_end } => {
                    let dispatch = switch_dispatch(&p.cond, n, |l| cell(l).map(edge_store), |l| arm_extra(l));
                    if dispatch.is_empty() {
                        continue;
                    }
                    switch_no += 1;
                    let var = format!("__retest_s{switch_no}");
                    let orig = &raw[cond_start..cond_end];
                    // The type of the value the switch dispatches on, without
                    // `const`: `+ 0` promotes it in C; in C++ a scoped enum has
                    // no `+`, and the type is deduced by a declared (never
                    // defined) function template instead.
                    let decl = if tu.cpp {
                        format!("{{ __typeof__(__retest_val({orig})) {var}; ")
                    } else {
                        format!("{{ __typeof__(({orig}) + 0) {var}; ")
                    };
                    edits.push(Edit { at: stmt_start, range: (stmt_start, stmt_end), open: true, text: decl });
                    edits.push(Edit {
                        at: stmt_end,
                        range: (stmt_start, stmt_end),
                        open: false,
                        text: " }".to_string(),
                    });
                    edits.push(Edit {
                        at: cond_start,
                        range: (cond_start, cond_end),
                        open: true,
                        text: format!("({var} = ("),
                    });
                    edits.push(Edit {
                        at: cond_end,
                        range: (cond_start, cond_end),
                        open: false,
                        // in parentheses: the condition may be the initialiser of
                        // a declaration (`switch (int p = …)`)
                        text: format!("), __extension__ ({{ switch ({var}) {{ {dispatch} }} }}), {var})"),
                    });
                }
            }
        }
    }
    // Order: by offset; at one offset, closers before openers; openers of wider
    // ranges first, closers of narrower ranges first — so nested insertions nest.
    edits.sort_by(|a, b| {
        a.at.cmp(&b.at).then_with(|| a.open.cmp(&b.open)).then_with(|| {
            if a.open {
                b.range.1.cmp(&a.range.1).then(a.range.0.cmp(&b.range.0))
            } else {
                b.range.0.cmp(&a.range.0).then(a.range.1.cmp(&b.range.1))
            }
        })
    });
    let mut insertions =
        Insertions { header: header(hash, cells.total, &placed, tu.unit.procedures.len(), tu.cpp), at: Vec::new() };
    for e in edits {
        match insertions.at.last_mut() {
            Some((at, text)) if *at == e.at => text.push_str(&e.text),
            _ => insertions.at.push((e.at, e.text)),
        }
    }
    let text = insertions.apply(raw).expect("edits lie at ascending offsets of the text they were made from");
    Instrumented { text, insertions, cells: cells.total, recording: placed, dropped }
}

/// Declarations of the entry: those of the recording components, then `more`.
fn join_decls(first: Option<&str>, more: &[String]) -> Option<String> {
    let all: Vec<&str> = first.into_iter().chain(more.iter().map(String::as_str)).collect();
    (!all.is_empty()).then(|| all.join(" "))
}

/// `a, b, c` of the non-empty parts.
fn join_code(parts: &[Option<&str>]) -> String {
    parts.iter().flatten().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(", ")
}

/// The body of the recording `switch`: one arm per case label of switch node `n`
/// that has a probe cell or extra code.
fn switch_dispatch<'a>(
    cfg: &Cfg,
    n: NodeId,
    probe: impl Fn(&EdgeLabel) -> Option<String>,
    extra: impl Fn(&EdgeLabel) -> Option<&'a str>,
) -> String {
    let mut s = String::new();
    for l in cfg.out_labels(n) {
        let probe = probe(l);
        let code = join_code(&[extra(l), probe.as_deref()]);
        if code.is_empty() {
            continue;
        }
        match l {
            // a duplicate label (marked `#k`) would not compile twice; it never occurs in valid C
            EdgeLabel::Case(text) if !text.contains(" #") => s.push_str(&format!("case {text}: {code}; break; ")),
            EdgeLabel::Default => s.push_str(&format!("default: {code}; ")),
            _ => {}
        }
    }
    s
}

/// The declaration of a probe array of `len` elements of `size` bytes on
/// cache lines of its own: aligned to a line and padded to whole lines, so no
/// program data shares a line with a cell. Hot program data next to the edge
/// cells has cost the lexer benchmark several times its run time, and a line
/// shared with another thread's data would bounce between cores on every
/// probe.
fn own_lines(ty: &str, name: &str, len: u32, size: u32) -> String {
    let n = (len.max(1) * size).next_multiple_of(ARRAY_ALIGN) / size;
    format!("static {ty} {name}[{n}] __attribute__((aligned({ARRAY_ALIGN})));\n")
}

/// The descriptor version a unit declares: [`ABI`] when its edge cells are
/// counters (the version that added them), else the version before.
fn descriptor_version(rec: &UnitRecording) -> u32 {
    if rec.counts { ABI } else { ABI_UNCOUNTED }
}

fn header(hash: &BuildHash, cells: u32, rec: &UnitRecording, procedures: usize, cpp: bool) -> String {
    // the runtime is C: in a C++ unit its functions and objects have C linkage
    let (c_open, c_close) = if cpp { ("extern \"C\" {\n", "}\n") } else { ("", "") };
    let bytes: Vec<String> = hash.as_bytes().iter().map(|b| format!("0x{b:02x}")).collect();
    let hex = hash.hex();
    let abi = descriptor_version(rec);
    let (mut arrays, mut sects) = if rec.counts {
        (
            own_lines(COUNTER, "__retest_e", cells, 8),
            vec![format!("{{ {SECT_EDGE_COUNTS}, {cells}, (volatile unsigned char *) __retest_e }}")],
        )
    } else {
        (
            own_lines(CELL, "__retest_e", cells * EDGE_CELL_BYTES, 1),
            vec![format!("{{ {SECT_EDGE_WORDS}, {cells}, __retest_e }}")],
        )
    };
    if let Some(m) = rec.mcdc_cells {
        arrays.push_str(&own_lines(CELL, "__retest_m", m, 1));
        sects.push(format!("{{ {SECT_MCDC}, {m}, __retest_m }}"));
    }
    let mut frames = String::new();
    if let Some(pc) = rec.path_cells {
        let nf = procedures as u32;
        arrays.push_str(&own_lines(CELL, "__retest_pa", pc, 1));
        arrays.push_str(&own_lines("unsigned int", "__retest_fin", nf, 4));
        sects.push(format!("{{ {SECT_PATHS}, {pc}, __retest_pa }}"));
        sects.push(format!("{{ {SECT_FRAMES}, {nf}, (volatile unsigned char *) __retest_fin }}"));
        // the frame of a path-profiled call: its path register; the call enters
        // the in-flight count after the frame is made, and at return (cleanup)
        // the last path is recorded and the call leaves the count. While the
        // process is single-threaded (`*__retest_st`, glibc's
        // `__libc_single_threaded`) the count changes by plain arithmetic, else
        // by atomic read-modify-writes: acquire on entry, release on return,
        // so a count the runtime reads as zero (before the cells) comes with
        // the path recorded. The signal fences keep the compiler from moving
        // probes across the count's changes (or dropping a change), so a
        // signal never finds a path under way outside it. Memory orders 2, 3
        // and 5 are __ATOMIC_ACQUIRE, __ATOMIC_RELEASE and __ATOMIC_SEQ_CST:
        // the text is already preprocessed, so the macros are not available.
        frames = format!("{c_open}extern const char *const __retest_st;\n{c_close}")
            + "\
             struct __retest_fr { __retest_u64 r; unsigned int fn; unsigned int base; int ids; };\n\
             static __inline__ void __retest_fenter(unsigned int *c) { if (*__retest_st) ++*c; else __atomic_fetch_add(c, 1u, 2); __atomic_signal_fence(5); }\n\
             static __inline__ void __retest_fexit(struct __retest_fr *f) { unsigned int *c = &__retest_fin[f->fn]; if (f->ids) __retest_path_hit(&__retest_tu, f->fn, f->r); else __retest_pa[f->base + f->r] = 1; __atomic_signal_fence(5); if (*__retest_st) --*c; else __atomic_fetch_sub(c, 1u, 3); }\n";
    }
    // C++: the type a `switch` dispatches on (see `Site::Switch`)
    let val = if cpp { "template <class __T> __T __retest_val(const __T &);\n" } else { "" };
    format!(
        "/* retest instrumentation, ABI {abi}, unit {hex} */\n\
         __extension__ typedef unsigned long long __retest_u64;\n\
         struct __retest_sect1 {{ unsigned int kind; unsigned int len; volatile unsigned char *data; }};\n\
         struct __retest_tu1 {{ unsigned int abi; unsigned int nsect; unsigned char hash[16]; struct __retest_sect1 *sect; struct __retest_tu1 *next; unsigned char *shadow; unsigned int state; }};\n\
         {c_open}extern void __retest_register(struct __retest_tu1 *);\n\
         extern void __retest_unregister(struct __retest_tu1 *);\n\
         extern void __retest_path_hit(struct __retest_tu1 *, unsigned int, __retest_u64);\n{c_close}{val}\
         {arrays}\
         static struct __retest_sect1 __retest_s[{ns}] = {{ {sects} }};\n\
         static struct __retest_tu1 __retest_tu = {{ {abi}, {ns}, {{ {bytes} }}, __retest_s, 0, 0, 0 }};\n\
         __attribute__((constructor)) static void __retest_ctor(void) {{ __retest_register(&__retest_tu); }}\n\
         __attribute__((destructor)) static void __retest_dtor(void) {{ __retest_unregister(&__retest_tu); }}\n\
         {frames}",
        ns = sects.len(),
        sects = sects.join(", "),
        bytes = bytes.join(", ")
    )
}

/// Extra code per site of one procedure, from its placed recording components.
#[derive(Default)]
struct Extra {
    /// Declarations (and the in-flight count) at the start of the body.
    decls: Option<String>,
    /// Code on a condition's `T`/`F` arm or a `switch`'s case arm, by edge.
    arm: BTreeMap<EdgeId, String>,
    /// Code before a statement or expression, and after the declarations at entry.
    before: BTreeMap<NodeId, String>,
}

/// Where a component's actions for one edge run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Spot {
    Arm(EdgeId),
    Before(NodeId),
}

/// Places every component of `recording` (see [`place`]); returns the extra
/// code per procedure, the recording as placed, and what was dropped.
fn place_all(tu: &TuAnalysis, recording: &UnitRecording) -> (Vec<Extra>, UnitRecording, Vec<Dropped>) {
    let procs = &tu.unit.procedures;
    let mut extras: Vec<Extra> = procs.iter().map(|_| Extra::default()).collect();
    let mut placed = UnitRecording { procs: Vec::new(), ..recording.clone() };
    let mut dropped = Vec::new();
    if recording.is_empty() {
        return (extras, placed, dropped);
    }
    placed.procs = procs.iter().map(|_| Default::default()).collect();
    for (pi, (p, want)) in procs.iter().zip(&recording.procs).enumerate() {
        let sites = &tu.sites[pi];
        if matches!(sites[p.cond.entry().index()], Site::Startup) {
            continue; // start-up code: a chain without decisions, recorded by its edges
        }
        let nested = nested_sites(sites);
        let extra = &mut extras[pi];
        let mut decls: Vec<String> = Vec::new();
        let mut code_at: BTreeMap<Spot, Vec<String>> = BTreeMap::new();
        let entry_site = matches!(sites[p.cond.entry().index()], Site::Entry { .. });
        // may run while compiling: registers start initialised (a constant
        // evaluation reads no indeterminate value) and every store is guarded
        let guarded = tu.guarded.get(pi).copied().unwrap_or(false);
        let code = |a: &Action, reg: &str| match (a, guarded) {
            (Action::Record { .. }, true) => guard(action_code(a, reg)),
            _ => action_code(a, reg),
        };
        let mut registers = 0u32;
        for (j, c) in &want.decisions {
            let reg = format!("__retest_r[{registers}]");
            match place(p, sites, &nested, c).and_then(|spots| entry_site.then_some(spots).ok_or_else(no_entry)) {
                Ok(spots) => {
                    for (spot, acts) in spots {
                        code_at.entry(spot).or_default().extend(acts.iter().map(|a| code(a, &reg)));
                    }
                    registers += 1;
                    placed.procs[pi].decisions.push((*j, c.clone()));
                }
                Err(why) => dropped.push(Dropped { procedure: pi, decision: Some(*j), why }),
            }
        }
        if registers > 0 {
            let init = if guarded { " = {}" } else { "" };
            decls.push(format!("__retest_u64 __retest_r[{registers}]{init};"));
        }
        if want.path.is_some() && guarded {
            dropped.push(Dropped {
                procedure: pi,
                decision: None,
                why: "it may run while compiling, where no path can be recorded".to_string(),
            });
        } else if let Some(pc) = &want.path {
            match place(p, sites, &nested, &pc.component).and_then(|s| entry_site.then_some(s).ok_or_else(no_entry)) {
                Ok(spots) => {
                    for (spot, acts) in spots {
                        code_at.entry(spot).or_default().extend(acts.iter().map(|a| action_code(a, "__retest_f.r")));
                    }
                    let (base, ids) = match pc.at_return {
                        Sink::Cell { base, .. } => (base, 0),
                        Sink::Id { .. } => (0, 1),
                    };
                    let fn_no = pc.counter;
                    decls.push(format!(
                        "struct __retest_fr __retest_f __attribute__((cleanup(__retest_fexit))) = {{ 0, {fn_no}u, {base}u, {ids} }}; \
                         __retest_fenter(&__retest_fin[{fn_no}]);"
                    ));
                    placed.procs[pi].path = Some(pc.clone());
                }
                Err(why) => dropped.push(Dropped { procedure: pi, decision: None, why }),
            }
        }
        if !decls.is_empty() {
            extra.decls = Some(decls.join(" "));
        }
        for (spot, codes) in code_at {
            let code = codes.join(", ");
            match spot {
                Spot::Arm(e) => {
                    extra.arm.insert(e, code);
                }
                Spot::Before(n) => {
                    extra.before.insert(n, code);
                }
            }
        }
    }
    (extras, placed, dropped)
}

fn no_entry() -> String {
    "the function body has no place for the recording registers".to_string()
}

/// C code of an action on register `reg`.
fn action_code(a: &Action, reg: &str) -> String {
    match *a {
        Action::Set(v) => format!("{reg} = {v}ULL"),
        Action::Add(v) => format!("{reg} += {v}ULL"),
        Action::Record { sink: Sink::Cell { sect, base }, add } => {
            let arr = if sect == SECT_MCDC { "__retest_m" } else { "__retest_pa" };
            format!("{arr}[{}ULL + {reg}] = 1", u64::from(base) + add)
        }
        Action::Record { sink: Sink::Id { key }, add } => {
            format!("__retest_path_hit(&__retest_tu, {key}u, {reg} + {add}ULL)")
        }
    }
}

/// For each node: whether its statement or expression site contains another
/// node's site (parts of it — a statement expression, `&&`, `?:` — run as nodes
/// of their own, after a probe placed before it).
fn nested_sites(sites: &[Site]) -> Vec<bool> {
    let range = |s: &Site| match *s {
        Site::Stmt { start, end, .. } | Site::Expr { start, end } | Site::Cond { start, end } => Some((start, end)),
        Site::Switch { stmt_start, stmt_end, .. } => Some((stmt_start, stmt_end)),
        Site::Entry { .. } | Site::None | Site::BlockStart { .. } | Site::Arms { .. } | Site::Startup => None,
    };
    let mut starts: Vec<(usize, usize)> =
        sites.iter().enumerate().filter_map(|(i, s)| range(s).map(|(a, _)| (a, i))).collect();
    starts.sort();
    sites
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Site::Stmt { start, end, .. } | Site::Expr { start, end } => {
                let lo = starts.partition_point(|&(a, _)| a < *start);
                starts[lo..].iter().take_while(|&&(a, _)| a < *end).any(|&(_, j)| j != i)
            }
            _ => false,
        })
        .collect()
}

/// Where each action of component `c` runs, so that along every execution the
/// actions run in the order of the edges they belong to:
///
/// * on the `T`/`F` arm of a condition, or the case arm of a `switch`;
/// * at the function's entry;
/// * before a statement or `for`-header expression with a single out-edge,
///   when no other node runs inside it;
/// * otherwise (a node without a site — a declaration with an initialiser, the
///   value of `a && b` — or one with nodes inside it) the out-edge's actions
///   move onto every in-edge of the node, after the in-edge's own: whoever enters
///   the node leaves it by that edge.
///
/// Fails for an edge that cannot be reached this way (a computed `goto`, `asm
/// goto`, an unparsed statement with several successors, a loop of such nodes).
fn place(p: &Procedure, sites: &[Site], nested: &[bool], c: &Component) -> Result<Vec<(Spot, Vec<Action>)>, String> {
    let cfg = &p.cond;
    let mut pending: Vec<Vec<Action>> = vec![Vec::new(); cfg.edge_count()];
    for (e, acts) in &c.on_edge {
        pending[e.index()].extend_from_slice(acts);
    }
    let movable = |v: NodeId| -> bool {
        v != cfg.entry()
            && cfg.out_edges(v).len() == 1
            && match sites[v.index()] {
                Site::None => true,
                Site::Stmt { .. } | Site::Expr { .. } => nested[v.index()],
                _ => false,
            }
    };
    // move actions backwards over movable nodes until none holds any; a round
    // moves every pending list one node back, so more rounds than nodes means a
    // cycle of movable nodes
    let mut rounds = 0usize;
    loop {
        let mut moved = false;
        for v in cfg.node_ids() {
            if !movable(v) {
                continue;
            }
            let out = cfg.out_edges(v).next().unwrap();
            if pending[out.index()].is_empty() {
                continue;
            }
            let acts = std::mem::take(&mut pending[out.index()]);
            for &d in cfg.in_edges(v) {
                pending[d.index()].extend_from_slice(&acts);
            }
            moved = true;
        }
        if !moved {
            break;
        }
        rounds += 1;
        if rounds > cfg.node_count() {
            return Err("recording actions cycle through statements that cannot be probed".to_string());
        }
    }
    let mut out = Vec::new();
    for (i, acts) in pending.into_iter().enumerate() {
        if acts.is_empty() {
            continue;
        }
        let e = EdgeId(i as u32);
        let v = cfg.edge(e).src;
        let spot = match sites[v.index()] {
            Site::Cond { .. } | Site::Switch { .. } => {
                if let EdgeLabel::Case(text) = &cfg.edge(e).label
                    && text.contains(" #")
                {
                    return Err(format!("duplicate case label `{text}`"));
                }
                Spot::Arm(e)
            }
            Site::Entry { .. } => Spot::Before(v),
            Site::Stmt { .. } | Site::Expr { .. } if cfg.out_edges(v).len() == 1 && !nested[v.index()] => {
                Spot::Before(v)
            }
            _ => {
                let node = cfg.node(v);
                let at = node.span.map(|s| format!(" at line {}", s.line)).unwrap_or_default();
                return Err(format!(
                    "`{}`{at} has {} successors and no place to record which one is taken",
                    truncate_text(&node.text, 40),
                    cfg.out_edges(v).len()
                ));
            }
        };
        out.push((spot, acts));
    }
    Ok(out)
}

fn truncate_text(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// The hash a build of `raw` under `plan` is identified by (what traces report).
pub fn build_hash(src_hash: &[u8; 16], plan: &[Vec<Probe>]) -> BuildHash {
    build_hash_with(src_hash, plan, &UnitRecording::default())
}

/// [`build_hash`] of a build that also records `recording` (as requested: the
/// placement is a function of the same inputs).
pub fn build_hash_with(src_hash: &[u8; 16], plan: &[Vec<Probe>], recording: &UnitRecording) -> BuildHash {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    if !recording.is_empty() {
        h.update(b"recording-v1");
        h.update(&serde_json::to_vec(recording).unwrap_or_default());
    }
    h.update(b"retest-build-v1");
    h.update(src_hash);
    h.update(&descriptor_version(recording).to_le_bytes());
    for procedure in plan {
        h.update(&(procedure.len() as u32).to_le_bytes());
        for p in procedure {
            match p {
                Probe::Derived => h.update(&[0u8]),
                Probe::Off => h.update(&[1u8]),
                Probe::Node => h.update(&[2u8]),
                Probe::PerEdge => h.update(&[3u8]),
                Probe::Ahead => h.update(&[4u8]),
                Probe::Edges(m) => {
                    h.update(&[5u8]);
                    h.update(&m.to_le_bytes());
                }
                Probe::Paired { mask, via } => {
                    h.update(&[6u8]);
                    h.update(&mask.to_le_bytes());
                    h.update(&via.to_le_bytes());
                }
                Probe::Entered => h.update(&[7u8]),
            }
        }
    }
    BuildHash(h.digest128().to_le_bytes())
}

/// The content hash of preprocessed text.
pub fn source_hash(raw: &str) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(raw.as_bytes()).to_le_bytes()
}
