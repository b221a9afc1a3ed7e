//! Source-level instrumentation of a preprocessed translation unit.
//!
//! The instrumented text is the compiler's own preprocessed output (line markers
//! kept, so diagnostics and debug info point at the original sources) with
//! *insertions only* — nothing of the original text is removed or reordered — plus
//! a header that declares the probe cells and registers the unit with the runtime
//! (ABI 1, `runtime/retest_rt.h`, `docs/trace-format.md`).
//!
//! Probes are plain byte stores into a static per-unit array (`__retest_e[k] = 1`),
//! no calls on the hot path; a concurrent store can never clear another cell.
//! Per node of the condition-level CFG, as its [`Probe`] says:
//! * entry: `{ P; { original body } }` — the original body becomes an inner block,
//!   so the probe never precedes the body's declarations (C89);
//! * a statement: `P; stmt` — or `{ P; stmt }` where it is the body of an `if`,
//!   a loop or a label;
//! * a `for` header expression: `(P, expr)`;
//! * a condition: `((c) ? (P_T, 1) : (P_F, 0))`;
//! * a `switch`: the controlling value is saved, a second `switch` on it records
//!   which case label (or `default`) was taken — so fall-through between cases is
//!   never mistaken for a taken label — and the original `switch` then runs on the
//!   saved value (GNU `__typeof__` and a statement expression under
//!   `__extension__`; GCC and Clang accept both in every C mode).
//!
//! Nodes whose probe is [`Probe::Derived`] or [`Probe::Off`] get nothing.

use retest_graph::coverage::{CellLayout, Probe};
use retest_graph::{Cfg, EdgeLabel, NodeId, Unit};

use crate::build::Site;
use crate::tu::TuAnalysis;

/// The ABI version the generated header speaks.
pub const ABI: u32 = 1;
/// Section kind of edge cells.
pub const SECT_EDGES: u32 = 1;

/// An instrumented translation unit.
#[derive(Clone, Debug)]
pub struct Instrumented {
    /// The text to compile (as preprocessed C, `-x cpp-output`).
    pub text: String,
    /// Number of edge cells.
    pub cells: u32,
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
/// under `plan`, identifying the unit to the runtime by `hash`.
pub fn instrument(raw: &str, tu: &TuAnalysis, plan: &[Vec<Probe>], hash: &[u8; 16]) -> Instrumented {
    let cells = UnitCells::new(&tu.unit, plan);
    let mut edits: Vec<Edit> = Vec::new();
    let mut switch_no = 0usize;
    for (pi, p) in tu.unit.procedures.iter().enumerate() {
        let layout = &cells.layouts[pi];
        let base = cells.base[pi];
        for n in p.cond.node_ids() {
            let probe = plan[pi][n.index()];
            if matches!(probe, Probe::Derived | Probe::Off) {
                continue;
            }
            let cell = |label: &EdgeLabel| -> Option<u32> {
                let e = p.cond.out_edge_labelled(n, label)?;
                layout.cell_of_edge(&p.cond, &plan[pi], e).map(|c| base + c)
            };
            let node_cell = base + layout.cell_of_node(n);
            match tu.sites[pi][n.index()] {
                Site::None => {}
                Site::Entry { open, close } => {
                    edits.push(Edit {
                        at: open + 1,
                        range: (open, close + 1),
                        open: true,
                        text: format!(" __retest_e[{node_cell}] = 1; {{"),
                    });
                    edits.push(Edit { at: close, range: (open, close + 1), open: false, text: "} ".to_string() });
                }
                Site::Stmt { start, end, wrap } => {
                    let (open, close) = if wrap { ("{ ", " }") } else { ("", "") };
                    edits.push(Edit {
                        at: start,
                        range: (start, end),
                        open: true,
                        text: format!("{open}__retest_e[{node_cell}] = 1; "),
                    });
                    if wrap {
                        edits.push(Edit { at: end, range: (start, end), open: false, text: close.to_string() });
                    }
                }
                Site::Expr { start, end } => {
                    edits.push(Edit {
                        at: start,
                        range: (start, end),
                        open: true,
                        text: format!("(__retest_e[{node_cell}] = 1, "),
                    });
                    edits.push(Edit { at: end, range: (start, end), open: false, text: ")".to_string() });
                }
                Site::Cond { start, end } => {
                    let t = cell(&EdgeLabel::True);
                    let f = cell(&EdgeLabel::False);
                    let arm = |c: Option<u32>, v: u8| match c {
                        Some(c) => format!("(__retest_e[{c}] = 1, {v})"),
                        None => v.to_string(),
                    };
                    edits.push(Edit { at: start, range: (start, end), open: true, text: "((".to_string() });
                    edits.push(Edit {
                        at: end,
                        range: (start, end),
                        open: false,
                        text: format!(") ? {} : {})", arm(t, 1), arm(f, 0)),
                    });
                }
                Site::Switch { stmt_start, stmt_end, cond_start, cond_end } => {
                    switch_no += 1;
                    let var = format!("__retest_s{switch_no}");
                    let orig = &raw[cond_start..cond_end];
                    let dispatch = switch_dispatch(&p.cond, n, |l| cell(l));
                    edits.push(Edit {
                        at: stmt_start,
                        range: (stmt_start, stmt_end),
                        open: true,
                        text: format!("{{ __typeof__(({orig}) + 0) {var}; "),
                    });
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
                        text: format!("{var} = ("),
                    });
                    edits.push(Edit {
                        at: cond_end,
                        range: (cond_start, cond_end),
                        open: false,
                        text: format!("), __extension__ ({{ switch ({var}) {{ {dispatch} }} }}), {var}"),
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
    let mut out = String::with_capacity(raw.len() + edits.len() * 24 + 1024);
    out.push_str(&header(hash, cells.total));
    let mut pos = 0;
    for e in &edits {
        out.push_str(&raw[pos..e.at]);
        out.push_str(&e.text);
        pos = e.at;
    }
    out.push_str(&raw[pos..]);
    Instrumented { text: out, cells: cells.total }
}

/// The body of the recording `switch`: one arm per case label of switch node `n`.
fn switch_dispatch(cfg: &Cfg, n: NodeId, cell: impl Fn(&EdgeLabel) -> Option<u32>) -> String {
    let mut s = String::new();
    for l in cfg.out_labels(n) {
        let Some(c) = cell(l) else { continue };
        match l {
            // a duplicate label (marked `#k`) would not compile twice; it never occurs in valid C
            EdgeLabel::Case(text) if !text.contains(" #") => {
                s.push_str(&format!("case {text}: __retest_e[{c}] = 1; break; "));
            }
            EdgeLabel::Default => s.push_str(&format!("default: __retest_e[{c}] = 1; ")),
            _ => {}
        }
    }
    s
}

fn header(hash: &[u8; 16], cells: u32) -> String {
    let bytes: Vec<String> = hash.iter().map(|b| format!("0x{b:02x}")).collect();
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    let n = cells.max(1);
    format!(
        "/* retest instrumentation, ABI {ABI}, unit {hex} */\n\
         struct __retest_sect1 {{ unsigned int kind; unsigned int len; unsigned char *data; }};\n\
         struct __retest_tu1 {{ unsigned int abi; unsigned int nsect; unsigned char hash[16]; struct __retest_sect1 *sect; struct __retest_tu1 *next; unsigned char *shadow; unsigned int state; }};\n\
         extern void __retest_register(struct __retest_tu1 *);\n\
         extern void __retest_unregister(struct __retest_tu1 *);\n\
         static unsigned char __retest_e[{n}];\n\
         static struct __retest_sect1 __retest_s[1] = {{ {{ {SECT_EDGES}, {cells}, __retest_e }} }};\n\
         static struct __retest_tu1 __retest_tu = {{ {ABI}, 1, {{ {} }}, __retest_s, 0, 0, 0 }};\n\
         __attribute__((constructor)) static void __retest_ctor(void) {{ __retest_register(&__retest_tu); }}\n\
         __attribute__((destructor)) static void __retest_dtor(void) {{ __retest_unregister(&__retest_tu); }}\n",
        bytes.join(", ")
    )
}

/// The hash a build of `raw` under `plan` is identified by (what traces report).
pub fn build_hash(src_hash: &[u8; 16], plan: &[Vec<Probe>]) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(b"retest-build-v1");
    h.update(src_hash);
    h.update(&ABI.to_le_bytes());
    for procedure in plan {
        h.update(&(procedure.len() as u32).to_le_bytes());
        for p in procedure {
            h.update(&[match p {
                Probe::Derived => 0u8,
                Probe::Off => 1,
                Probe::Node => 2,
                Probe::PerEdge => 3,
            }]);
        }
    }
    h.digest128().to_le_bytes()
}

/// The content hash of preprocessed text.
pub fn source_hash(raw: &str) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(raw.as_bytes()).to_le_bytes()
}
